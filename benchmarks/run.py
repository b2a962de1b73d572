"""Performance benchmarks: each prints a ratio against a naive or reference approach
measured in the same run (``make bench``). Absolute times depend on the machine;
ratios are what the README quotes."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from polybias import models, wordlists
from polybias.metrics.weat import weat_association
from polybias.stats import split_permutation_test

ROOT = Path(__file__).resolve().parents[1]


def naive_permutation_p(x: np.ndarray, y: np.ndarray, n: int, seed: int) -> float:
    """One Python iteration per permutation: shuffle, split, sum (the textbook loop)."""
    rng = np.random.default_rng(seed)
    pooled = np.concatenate([x, y])
    observed = x.sum() - y.sum()
    hits = 0
    for _ in range(n):
        perm = rng.permutation(pooled)
        if perm[: len(x)].sum() - perm[len(x):].sum() >= observed - 1e-12:
            hits += 1
    return (hits + 1) / (n + 1)


def bench_permutation(n: int = 100_000) -> list[dict]:
    emb = models.load_static("w2v-gnews")
    rows = []
    for name in ("WEAT1", "WEAT3"):
        t = wordlists.get_test("en", name)
        vec = {r: models.lookup(emb, list(s.words), "drop")[0] for r, s in t.sets().items()}
        sx = weat_association(vec["X"], vec["A"], vec["B"])
        sy = weat_association(vec["Y"], vec["A"], vec["B"])
        t0 = time.perf_counter(); naive_permutation_p(sx, sy, n, 0); t_naive = time.perf_counter() - t0
        t0 = time.perf_counter(); split_permutation_test(sx, sy, n_permutations=n, exact_limit=0)
        t_ours = time.perf_counter() - t0
        rows.append({"benchmark": f"WEAT p-value, {n:,} permutations ({name})",
                     "reference": "Python loop per permutation",
                     "reference_s": t_naive, "polybias_s": t_ours})
    return rows


def bench_wefe(python: str, iterations: int) -> list[dict]:
    out = subprocess.run([python, str(ROOT / "benchmarks" / "weat_vs_wefe.py"), str(iterations)],
                         check=True, capture_output=True, text=True, cwd=ROOT)
    rows = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    print("\nWEFE 1.0.1 vs polybias, same vectors and word sets "
          f"({iterations:,} Monte Carlo permutations each):")
    print(f"{'test':7s} {'d WEFE':>8s} {'d ours':>8s} {'p WEFE':>8s} {'p ours':>8s} {'ratio':>7s}")
    for r in rows:
        print(f"{r['test']:7s} {r['wefe_effect_size']:8.4f} {r['polybias_effect_size_ddof0']:8.4f} "
              f"{r['wefe_p']:8.4f} {r['polybias_mc_p']:8.4f} {r['wefe_seconds'] / r['polybias_mc_seconds']:7.0f}x")
    total_ref = sum(r["wefe_seconds"] for r in rows)
    total = sum(r["polybias_mc_seconds"] for r in rows)
    total_default = sum(r["polybias_default_seconds"] for r in rows)
    print("effect sizes (ddof=0) agree to "
          f"{max(r['effect_size_abs_diff'] for r in rows):.1e}; p-values differ by definition "
          "(WEFE samples with replacement, unseeded).")
    return [{"benchmark": f"WEAT 1-10 with p-value ({iterations:,} MC permutations)",
             "reference": "WEFE 1.0.1 WEAT.run_query", "reference_s": total_ref, "polybias_s": total},
            {"benchmark": "WEAT 1-10 with p-value (exact where <= 1e6 splits)",
             "reference": "WEFE 1.0.1 WEAT.run_query", "reference_s": total_ref,
             "polybias_s": total_default}]


def bench_scoring() -> list[dict]:
    """CrowS-Pairs PLL scoring: the batched engine against one masked copy per forward."""
    out = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "bench_scoring.py")],
                         check=True, capture_output=True, text=True, cwd=ROOT)
    print("\n" + out.stdout.strip())
    ratio = next(float(line.rsplit(" ", 1)[1].rstrip("x")) for line in out.stdout.splitlines()
                 if line.startswith("speed ratio"))
    return [{"benchmark": "CrowS PLL scoring, bert-base-sized MLM", "reference":
             "one masked copy per forward", "reference_s": ratio, "polybias_s": 1.0}]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--reference-python", help="python of an environment with wefe installed")
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument("--skip-scoring", action="store_true", help="skip the LM scoring benchmark")
    args = parser.parse_args()
    rows = bench_permutation()
    if not args.skip_scoring:
        rows += bench_scoring()
    if args.reference_python:
        rows += bench_wefe(args.reference_python, args.iterations)
    print(f"\n{'benchmark':55s} {'reference':32s} {'ratio (reference / polybias)':>28s}")
    for r in rows:
        print(f"{r['benchmark']:55s} {r['reference']:32s} {r['reference_s'] / r['polybias_s']:27.1f}x")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
