"""CEAT with N = 5000 samples from cached occurrence vectors: the vectorised
:func:`polybias.metrics.ceat.ceat_from_occurrences` against a per-sample Python loop
written after the algorithm of Guo & Caliskan's CEAT code (per sample: cosine of every
target with every attribute vector, WEAT effect size and variance; then the
DerSimonian–Laird pooling), measured in the same run on the same vectors.

    .venv/bin/python benchmarks/bench_ceat.py [--samples 5000] [--words 16] [--dim 768] [--quick]

The vectors (``--words`` per set for X, Y, A, B, ``--samples`` occurrences each,
``--dim`` dimensions, float32, random with a planted association) are written once to
``.npy`` files, as an extraction run with a cache leaves them, and read back memory-mapped
by both methods; reading is part of the measured time. Both results must agree to 1e-9.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np
from polybias.data.wordlists import AssociationTest, WordSet
from polybias.metrics.ceat import ceat_from_occurrences
from scipy.stats import norm


def make_cache(folder: Path, words: int, samples: int, dim: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    a_dir, b_dir = rng.normal(size=dim), rng.normal(size=dim)
    sets = {}
    for role, centre in (("X", 0.02 * a_dir), ("Y", 0.02 * b_dir), ("A", a_dir), ("B", b_dir)):
        names = [f"{role.lower()}{i}" for i in range(words)]
        sets[role] = WordSet(role, tuple(names), "language-specific", "benchmark")
        for name in names:
            vec = (centre + rng.normal(size=(samples, dim))).astype(np.float32)
            np.save(folder / f"{name}.npy", vec, allow_pickle=False)
    return AssociationTest("bench", language="en", **sets)


def load(folder: Path, test: AssociationTest) -> dict[str, np.ndarray]:
    return {w: np.load(folder / f"{w}.npy", mmap_mode="r", allow_pickle=False)
            for s in test.sets().values() for w in s.words}


def reference_ceat(X, Y, A, B):
    """One sample at a time, one cosine at a time (the shape of the published code).

    X, Y, A, B: per-word occurrence vectors, each a sequence of (N, dim) arrays (a
    (n_words, N, dim) array works too). Returns the per-sample effect sizes and variances,
    the CES and its z = CES / SE.
    """
    def cos(u, v):
        return float(np.dot(u, v) / (np.linalg.norm(u) * np.linalg.norm(v)))

    def assoc(v, a_vecs, b_vecs):
        return np.mean([cos(v, a) for a in a_vecs]) - np.mean([cos(v, b) for b in b_vecs])

    es, var = [], []
    for i in range(len(X[0])):
        a_vecs = [a[i] for a in A]
        b_vecs = [b[i] for b in B]
        sx = [assoc(x[i], a_vecs, b_vecs) for x in X]
        sy = [assoc(y[i], a_vecs, b_vecs) for y in Y]
        sd = np.std(sx + sy, ddof=1)
        es.append((np.mean(sx) - np.mean(sy)) / sd)
        var.append(sd ** 2)
    e, v = np.array(es), np.array(var)
    w = 1 / v
    q = np.sum(w * e ** 2) - np.sum(w * e) ** 2 / np.sum(w)
    df = len(e) - 1
    tau2 = (q - df) / (np.sum(w) - np.sum(w ** 2) / np.sum(w)) if q >= df else 0.0
    ws = 1 / (v + tau2)
    ces = np.sum(ws * e) / np.sum(ws)
    return e, v, ces, ces / np.sqrt(1 / np.sum(ws))


def reference_loop(vectors: dict[str, np.ndarray], test: AssociationTest):
    """:func:`reference_ceat` on the word sets of ``test``: (CES, two-tailed p)."""
    X, Y, A, B = ([vectors[w] for w in s.words] for s in (test.X, test.Y, test.A, test.B))
    _, _, ces, z = reference_ceat(X, Y, A, B)
    return ces, 2 * norm.sf(abs(z))


def main(quick: bool = False, argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--samples", type=int, default=5000, help="N, CEAT samples")
    parser.add_argument("--words", type=int, default=16, help="words per set (X, Y, A, B)")
    parser.add_argument("--dim", type=int, default=768, help="vector dimension")
    parser.add_argument("--quick", action="store_true", help="smoke run: N = 500, 8 words, 384-d")
    args = parser.parse_args(argv if argv is not None else [])
    if quick or args.quick:
        args.samples, args.words, args.dim = 500, 8, 384
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        test = make_cache(folder, args.words, args.samples, args.dim)
        mb = 4 * args.words * 4 * args.samples * args.dim / 1e6
        print(f"CEAT, N = {args.samples}, {args.words} words per set, {args.dim}-d float32 "
              f"vectors ({mb:.0f} MB, memory-mapped .npy cache)")
        t0 = time.perf_counter()
        fast = ceat_from_occurrences(load(folder, test), test)
        t_fast = time.perf_counter() - t0
        t0 = time.perf_counter()
        ref_ces, ref_p = reference_loop(load(folder, test), test)
        t_ref = time.perf_counter() - t0
    assert abs(fast.ces - ref_ces) <= 1e-9 * max(1.0, abs(ref_ces)), (fast.ces, ref_ces)
    assert abs(fast.pvalue - ref_p) <= 1e-9 + 1e-6 * ref_p, (fast.pvalue, ref_p)
    print(f"CES = {fast.ces:.6f} (SE {fast.se:.4f}, tau2 {fast.tau2:.2e}, p {fast.pvalue:.1e}); "
          f"per-sample loop agrees (|diff| = {abs(fast.ces - ref_ces):.1e})")
    print(f"{'method':36s} {'seconds':>9s}")
    print(f"{'polybias (vectorised over samples)':36s} {t_fast:9.3f}")
    print(f"{'per-sample Python loop':36s} {t_ref:9.3f}")
    print(f"ratio per-sample loop / polybias: {t_ref / t_fast:.1f}x")
    return [{"benchmark": f"CEAT N={args.samples} from cached vectors ({4 * args.words} words, {args.dim}-d)",
             "reference": "per-sample Python loop (Guo & Caliskan code shape)",
             "reference_s": t_ref, "polybias_s": t_fast}]


if __name__ == "__main__":
    import sys

    main(argv=sys.argv[1:])
