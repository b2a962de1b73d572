"""polybias against the peers researchers run, in one run, on the same model, pairs and
vectors: mlm-bias 0.1.7 (CSPS, SSS, AUL + AULA), minicons 0.3.39 (PLL) and WEFE 1.0.1
(WEAT with a permutation p-value), at one and two threads.

    .venv/bin/python benchmarks/bench_peers.py [--pairs 20] [--quick]

Each peer runs in its own environment (``make peers`` builds ``.venv-peers/<peer>``; the
folder is ``POLYBIAS_PEERS_ENV`` when set) through the driver its peer test uses
(``tests/peers/drivers``), which times only the peer's own call, not its imports or model
loading; polybias's side is timed in this process the same way. A peer whose environment
is absent is reported and left out.

The masked LM is a ``BertForMaskedLM`` with random weights, 6 layers of width 512 and a
30,522-token WordPiece vocabulary trained on the pairs (a mid-sized BERT; bert-base is
12 × 768), saved as a checkpoint both sides load; the pairs are the synthetic CrowS-like
pairs of ``bench_aul.py``. mlm-bias's ``BiasMLM`` never loads a checkpoint's weights (see
docs/peers.md): the driver loads them, which does not change its speed. Its AUL call also
returns AULA (one forward pass with attention weights), so the row compares it with
polybias's AUL and AULA calls together. WEFE: WEAT 1 on the embedded GoogleNews word2vec
subset, both sides with the same number of Monte Carlo permutations, and polybias's
default (exact enumeration when at most 10⁶ splits, else 10⁵ permutations).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
ROOT = Path(__file__).resolve().parents[1]
DRIVERS = ROOT / "tests" / "peers" / "drivers"
MID_BERT = dict(hidden_size=512, num_hidden_layers=6, num_attention_heads=8, intermediate_size=2048,
                max_position_embeddings=512, initializer_range=0.02)
SMALL_BERT = dict(hidden_size=128, num_hidden_layers=2, num_attention_heads=2, intermediate_size=256,
                  max_position_embeddings=512, initializer_range=0.02)


def peer_python(peer: str) -> Path | None:
    env = Path(os.environ.get("POLYBIAS_PEERS_ENV", ROOT / ".venv-peers")) / peer
    return env / "bin" / "python" if (env / ".installed").exists() else None


def run_peer(peer: str, driver: str, request: dict, threads: int) -> dict | None:
    """The driver's JSON answer, or None (with a message) when the peer is absent."""
    python = peer_python(peer)
    if python is None:
        print(f"{peer}: environment absent, left out (run `make peers` to build it)")
        return None
    env = {**os.environ, "PYTHONHASHSEED": "0", "OMP_NUM_THREADS": str(threads),
           "MKL_NUM_THREADS": str(threads), "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1"}
    env.pop("PYTHONPATH", None)
    done = subprocess.run([str(python), str(DRIVERS / f"{driver}.py")],
                          input=json.dumps({**request, "threads": threads}),
                          capture_output=True, text=True, env=env, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{driver} failed:\n{done.stderr[-3000:]}")
    return json.loads([line for line in done.stdout.splitlines() if line.startswith("{")][-1])


def timed(fn, repeat: int = 1) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - t0)
    return best


def export_word2vec(emb, words: list[str], path: Path) -> None:
    from polybias.engines.static import lookup

    matrix, kept, _ = lookup(emb, sorted(set(words)))
    lines = [f"{len(kept)} {matrix.shape[1]}"]
    lines += [w + " " + " ".join(f"{x:.9g}" for x in row) for w, row in zip(kept, matrix, strict=True)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def main(quick: bool = False, argv: list[str] | None = None) -> list[dict]:
    import torch
    from bench_aul import synthetic_pairs
    from polybias import models
    from polybias.data import wordlists
    from polybias.engines import scoring
    from polybias.engines.pair_scores import pair_scores
    from polybias.engines.static import lookup
    from polybias.metrics.weat import weat
    from polybias.planted.tiny_models import CORPUS, build_tiny_model

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=20)
    parser.add_argument("--permutations", type=int, default=100, help="WEAT Monte Carlo permutations")
    parser.add_argument("--quick", action="store_true", help="smoke run: 3 pairs, a 2-layer model")
    args = parser.parse_args(argv if argv is not None else [])
    quick = quick or args.quick
    n = 3 if quick else args.pairs
    n_perm = 20 if quick else args.permutations
    pairs = synthetic_pairs(n)
    texts = list(pairs.sent_more) + list(pairs.sent_less)
    dims = SMALL_BERT if quick else MID_BERT
    model, tok = build_tiny_model("bert", seed=0, vocab_size=30522, corpus=texts + list(CORPUS), **dims)
    rows: list[dict] = []
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "bert"
        model.save_pretrained(folder, safe_serialization=True)
        tok.save_pretrained(folder)
        lm = models.load(str(folder), "mlm", device="cpu")
        emb = models.load("w2v-gnews", "static")
        sets = wordlists.get_test("en", "WEAT1").sets()
        words = {r: lookup(emb, list(sets[r].words), "drop")[1] for r in "XYAB"}
        vectors = Path(tmp) / "weat1.txt"
        export_word2vec(emb, [w for ws in words.values() for w in ws], vectors)
        X, Y, A, B = (lookup(emb, words[r])[0] for r in "XYAB")
        pair_list = [[b, m, s] for b, m, s in zip(pairs.bias_type, pairs.sent_more, pairs.sent_less, strict=True)]
        for threads in (1, 2):
            torch.set_num_threads(threads)
            pair_scores(lm, pairs.head(1), method="aul")  # warm-up
            ours = {m: timed(lambda m=m: pair_scores(lm, pairs, method=m))
                    for m in ("nangia", "sss", "aul", "aula")}
            ours["pll"] = timed(lambda: scoring.pseudo_log_likelihood(lm, texts))
            theirs = run_peer("mlm-bias", "mlm_bias_driver",
                              {"model": str(folder), "pairs": pair_list,
                               "time_measures": [["csps"], ["sss"], ["aul"]]}, threads)
            label = f"{n} pairs, {dims['num_hidden_layers']}-layer BERT, {threads} thread{'s' * (threads > 1)}"
            if theirs:
                t = theirs["timings"]
                rows += [{"benchmark": f"CrowS CSPS (Nangia PLL), {label}", "reference": "mlm-bias 0.1.7",
                          "reference_s": t["csps"], "polybias_s": ours["nangia"]},
                         {"benchmark": f"CrowS SSS, {label}", "reference": "mlm-bias 0.1.7",
                          "reference_s": t["sss"], "polybias_s": ours["sss"]},
                         {"benchmark": f"CrowS AUL + AULA, {label}", "reference": "mlm-bias 0.1.7",
                          "reference_s": t["aul"], "polybias_s": ours["aul"] + ours["aula"]}]
            theirs = run_peer("minicons", "minicons_driver",
                              {"model": str(folder), "texts": texts, "metrics": ["original"]}, threads)
            if theirs:
                rows.append({"benchmark": f"PLL of {len(texts)} sentences, {label.split(', ', 1)[1]}",
                             "reference": "minicons 0.3.39 sequence_score",
                             "reference_s": theirs["seconds"]["original"], "polybias_s": ours["pll"]})
            theirs = run_peer("wefe", "wefe_driver", {"vectors": str(vectors), "weat": [
                {"name": "WEAT1", "targets": [words["X"], words["Y"]], "attributes": [words["A"], words["B"]],
                 "p_iterations": n_perm, "runs": 1}]}, threads)
            if theirs:
                t_mc = timed(lambda: weat(X, Y, A, B, exact_limit=0, n_permutations=n_perm), repeat=3)
                t_default = timed(lambda: weat(X, Y, A, B), repeat=1)
                rows += [{"benchmark": f"WEAT 1 + p ({n_perm} MC permutations), {threads} thread"
                                       f"{'s' * (threads > 1)}", "reference": "WEFE 1.0.1 run_query",
                          "reference_s": theirs["weat"][0]["seconds"][0], "polybias_s": t_mc},
                         {"benchmark": f"WEAT 1 + p (polybias default: 1e5 MC), {threads} thread"
                                       f"{'s' * (threads > 1)}",
                          "reference": f"WEFE 1.0.1, {n_perm} permutations",
                          "reference_s": theirs["weat"][0]["seconds"][0], "polybias_s": t_default}]
    print(f"\npolybias vs peers (seconds; ratio = peer / polybias), {n} synthetic CrowS-like pairs:")
    print(f"{'benchmark':62s} {'peer':32s} {'peer s':>8s} {'ours s':>8s} {'ratio':>7s}")
    for r in rows:
        print(f"{r['benchmark']:62s} {r['reference']:32s} {r['reference_s']:8.3f} {r['polybias_s']:8.3f} "
              f"{r['reference_s'] / r['polybias_s']:6.1f}x")
    return rows


if __name__ == "__main__":
    main(argv=sys.argv[1:])
