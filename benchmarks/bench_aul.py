"""CrowS-Pairs cost of AUL and AULA (one forward pass per sentence) against Nangia's
pseudo-log-likelihood (one forward pass per shared token), both on polybias's batched
engine, in the same run.

    .venv/bin/python benchmarks/bench_aul.py [--pairs 30] [--quick]

The model is a ``BertForMaskedLM`` with bert-base dimensions and random weights (as in
``bench_scoring.py``); the sentences are synthetic CrowS-like pairs of 12-20 words. The
three measures score the same pairs on 2 threads; the rows compare each of AUL and AULA
with the PLL score ("reference" here is the PLL, not a naive implementation).
"""

from __future__ import annotations

import argparse
import os
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402

BERT_BASE = dict(hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                 intermediate_size=3072, max_position_embeddings=512, initializer_range=0.02)
SUBJECTS = [("He", "She"), ("My father", "My mother"), ("The poor family", "The rich family"),
            ("The immigrant worker", "The local worker"), ("The gay couple", "The straight couple"),
            ("The Christian neighbour", "The Muslim neighbour"), ("Her grandmother", "Her grandfather")]
PREDICATES = ["was always too lazy to finish the work that the manager had given",
              "could not understand the simple instructions written on the board",
              "cooked a wonderful dinner for all the guests at the party",
              "spent the whole weekend repairing the roof of the old house",
              "forgot to pay the rent again and had to borrow money from friends"]
ENDINGS = ["yesterday", "last week", "as usual", "without any help", "before anyone noticed"]


def synthetic_pairs(n: int, seed: int = 0):
    import pandas as pd

    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(n):
        (a, b), pred, end = (SUBJECTS[rng.integers(len(SUBJECTS))], PREDICATES[rng.integers(len(PREDICATES))],
                             ENDINGS[rng.integers(len(ENDINGS))])
        rows.append((f"{a} {pred} {end}.", f"{b} {pred} {end}.", "other", "stereo"))
    return pd.DataFrame(rows, columns=["sent_more", "sent_less", "bias_type", "direction"])


def main(quick: bool = False, argv: list[str] | None = None) -> list[dict]:
    from polybias.engines.pair_scores import pair_scores
    from polybias.engines.scoring import wrap_language_model
    from polybias.planted.tiny_models import CORPUS, build_tiny_model

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=30)
    parser.add_argument("--quick", action="store_true", help="smoke run: 4 pairs, a 2-layer model")
    args = parser.parse_args(argv if argv is not None else [])
    quick = quick or args.quick
    n = 4 if quick else args.pairs
    torch.set_num_threads(2)
    pairs = synthetic_pairs(n)
    corpus = list(pairs.sent_more) + list(pairs.sent_less) + list(CORPUS)
    dims = dict(BERT_BASE, num_hidden_layers=2) if quick else BERT_BASE
    model, tok = build_tiny_model("bert", seed=0, vocab_size=30522, corpus=corpus, **dims)
    lm = wrap_language_model(model, tok, name="bert-base-random")
    times = {}
    for method in ("nangia", "aul", "aula"):
        t0 = time.perf_counter()
        scored = pair_scores(lm, pairs, method=method)
        times[method] = time.perf_counter() - t0
        assert np.isfinite(scored[["score_more", "score_less"]].to_numpy()).all()
    print(f"CrowS-Pairs, {n} synthetic pairs, bert-base-sized MLM ({dims['num_hidden_layers']} layers), 2 threads")
    print(f"{'method':34s} {'seconds':>9s}")
    for method, label in (("nangia", "PLL (Nangia, one mask per token)"), ("aul", "AUL (one pass per sentence)"),
                          ("aula", "AULA (one pass, eager attention)")):
        print(f"{label:34s} {times[method]:9.3f}")
    print(f"ratio PLL / AUL: {times['nangia'] / times['aul']:.1f}x; PLL / AULA: {times['nangia'] / times['aula']:.1f}x")
    return [{"benchmark": f"CrowS {method.upper()} on {n} pairs (bert-base-sized)",
             "reference": "Nangia PLL, batched engine", "reference_s": times["nangia"],
             "polybias_s": times[method]} for method in ("aul", "aula")]


if __name__ == "__main__":
    import sys

    main(argv=sys.argv[1:])
