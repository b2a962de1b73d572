"""CrowS-Pairs scoring of a bert-base-sized masked LM: the batched engine against the
one-mask-per-forward reference loop (Nangia et al.'s code), measured in the same run.

    .venv/bin/python benchmarks/bench_scoring.py [--pairs 200] [--reference-pairs 200]

The model is a ``BertForMaskedLM`` with bert-base dimensions (hidden 768, 12 layers,
12 heads, vocabulary 30,522) and random weights; its WordPiece tokenizer is trained on the
benchmark sentences. The sentences are the first ``--pairs`` rows of the real
CrowS-Pairs file when ``$POLYBIAS_DATA_MIRROR`` is set (read in place), else synthetic
CrowS-like pairs of 12-20 words. Both methods mask the tokens the two sentences of a pair
share, one at a time (Nangia et al. 2020), and sum their log-probabilities.

Each method runs in its own child process (so that peak memory, ``ru_maxrss``, is its
own), on 2 threads. By default both score the same 200 pairs and every per-sentence score
must agree to 1e-4; with ``--reference-pairs`` below ``--pairs`` (a quick run) the
reference scores only the first pairs and its time is extrapolated per masked token
(said so in the output).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import torch  # noqa: E402
from reference_loops import one_mask_score  # noqa: E402

CROWS = "nyu-mll+crows-pairs/data/crows_pairs_anonymized.csv"
BERT_BASE = dict(hidden_size=768, num_hidden_layers=12, num_attention_heads=12,
                 intermediate_size=3072, max_position_embeddings=512, initializer_range=0.02)

SUBJECTS = [("He", "She"), ("My father", "My mother"), ("The old man", "The young man"),
            ("The poor family", "The rich family"), ("The immigrant worker", "The local worker"),
            ("The Christian neighbour", "The Muslim neighbour"), ("The gay couple", "The straight couple"),
            ("The black student", "The white student"), ("The disabled engineer", "The healthy engineer"),
            ("Her grandmother", "Her grandfather"), ("The Mexican gardener", "The American gardener")]
PREDICATES = [
    "was always too lazy to finish the work that the manager had given",
    "could not understand the simple instructions written on the board",
    "cooked a wonderful dinner for all the guests at the party",
    "was arrested by the police for stealing a car from the parking lot",
    "spent the whole weekend repairing the roof of the old house",
    "asked the teacher a very clever question about the experiment",
    "forgot to pay the rent again and had to borrow money from friends",
    "won the first prize in the national mathematics competition",
    "complained loudly about the noise coming from the apartment upstairs",
    "drove the children to school early in the morning",
]
ENDINGS = ["yesterday", "last week", "as usual", "during the long winter", "without any help",
           "again this year", "in front of everyone", "before anyone noticed"]


def synthetic_pairs(n: int, seed: int = 0) -> list[tuple[str, str]]:
    """``n`` CrowS-like minimal pairs of 12-20 words (the two differ in the subject)."""
    rng = np.random.default_rng(seed)
    out: list[tuple[str, str]] = []
    while len(out) < n:
        (a, b), pred, end = (SUBJECTS[rng.integers(len(SUBJECTS))],
                             PREDICATES[rng.integers(len(PREDICATES))], ENDINGS[rng.integers(len(ENDINGS))])
        more, less = f"{a} {pred} {end}.", f"{b} {pred} {end}."
        if 12 <= len(more.split()) <= 20:
            out.append((more, less))
    return out


def load_pairs(n: int) -> tuple[list[tuple[str, str]], str]:
    mirror = os.environ.get("POLYBIAS_DATA_MIRROR")
    if mirror and (Path(mirror) / CROWS).is_file():
        frame = pd.read_csv(Path(mirror) / CROWS)  # read in place, never copied
        rows = frame[["sent_more", "sent_less"]].head(n)
        return list(rows.itertuples(index=False, name=None)), f"CrowS-Pairs ({CROWS}, first {len(rows)})"
    return synthetic_pairs(n), "synthetic CrowS-like pairs (set POLYBIAS_DATA_MIRROR for the real file)"


def build(pairs: list[tuple[str, str]]):
    from polybias.engines.scoring import wrap_language_model
    from polybias.planted.tiny_models import CORPUS, build_tiny_model

    corpus = [s for p in pairs for s in p] + list(CORPUS)
    model, tok = build_tiny_model("bert", seed=0, vocab_size=30522, corpus=corpus, **BERT_BASE)
    return wrap_language_model(model, tok, name="bert-base-random")


def rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # Linux: KiB


def child(phase: str, n_pairs: int, n_ref: int, budget: int) -> None:
    """Score in this process; print one JSON line."""
    from polybias.engines.pair_scores import shared_token_positions
    from polybias.engines.scoring import masked_token_logprobs

    torch.set_num_threads(2)
    pairs, _ = load_pairs(n_pairs)
    lm = build(pairs)
    if phase == "reference":
        pairs = pairs[:n_ref]
    texts, positions = [], []
    frame = pd.DataFrame(pairs, columns=["sent_more", "sent_less"])
    # the pairs carry no direction; the positions only set the work to time
    for (more, less), (pm, pl) in zip(pairs, shared_token_positions(lm.tokenizer, frame, "content"),
                                      strict=True):
        texts += [more, less]
        positions += [pm, pl]
    lengths = [len(ids) for ids in lm.tokenizer(texts)["input_ids"]]
    work = [(L, len(p)) for L, p in zip(lengths, positions, strict=True)]
    baseline = rss_mb()
    t0 = time.perf_counter()
    if phase == "engine":
        scored = masked_token_logprobs(lm, texts, positions=positions, batch_tokens=budget)
        scores = [float(np.sum(s.logprob[p])) for s, p in zip(scored, positions, strict=True)]
    else:  # Nangia et al.'s loop: one forward pass per masked token
        with torch.inference_mode():
            scores = [one_mask_score(lm.tokenizer, lm.model, text, pos)
                      for text, pos in zip(texts, positions, strict=True)]
    seconds = time.perf_counter() - t0
    print(json.dumps({"phase": phase, "seconds": seconds, "scores": scores,
                      "masked_tokens": int(sum(len(p) for p in positions)), "sentences": len(texts),
                      "tokens": int(sum(len(tok_ids) for tok_ids in lm.tokenizer(texts)["input_ids"])),
                      "rss_after_build_mb": baseline, "rss_peak_mb": rss_mb(),
                      "gflop": model_gflop(work, head_everywhere=phase == "reference")}))


def model_gflop(work: list[tuple[int, int]], head_everywhere: bool) -> float:
    """Floating-point work (GFLOP, 2 per multiply-add) of scoring ``work`` = [(tokens of the
    sentence, masked copies)] with the bert-base-sized model: every copy runs the encoder
    over all its tokens; the output layer runs at every position (the reference) or only
    at the masked one (the engine)."""
    h, ffn, layers, vocab = (BERT_BASE["hidden_size"], BERT_BASE["intermediate_size"],
                             BERT_BASE["num_hidden_layers"], 30522)
    total = 0.0
    for length, copies in work:
        encoder = layers * (length * (4 * h * h + 2 * h * ffn) + 2 * length * length * h)
        head = (length if head_everywhere else 1) * (h * h + h * vocab)
        total += copies * 2.0 * (encoder + head)
    return total / 1e9


def matmul_peak_gflops(threads: int = 2, repeat: int = 5) -> float:
    """This machine's float32 matrix-multiply rate (GFLOP/s), measured on a product of the
    shape of the model's feed-forward layer over an 8192-token batch."""
    torch.set_num_threads(threads)
    a, b = torch.randn(8192, 768), torch.randn(768, 3072)
    torch.mm(a, b)
    best = min(_timed(lambda: torch.mm(a, b)) for _ in range(repeat))
    return 2 * 8192 * 768 * 3072 / best / 1e9


def _timed(fn) -> float:
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def run_child(phase: str, args) -> dict:
    cmd = [sys.executable, __file__, "--phase", phase, "--pairs", str(args.pairs),
           "--reference-pairs", str(args.reference_pairs), "--max-batch-tokens", str(args.max_batch_tokens)]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=200, help="pairs scored by the engine")
    parser.add_argument("--reference-pairs", type=int, default=200,
                        help="pairs scored by the reference loop (time extrapolated to --pairs)")
    parser.add_argument("--max-batch-tokens", type=int, default=8192)
    parser.add_argument("--phase", choices=["engine", "reference"], help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.reference_pairs = min(args.reference_pairs, args.pairs)
    if args.phase:
        child(args.phase, args.pairs, args.reference_pairs, args.max_batch_tokens)
        return
    pairs, source = load_pairs(args.pairs)
    print(f"CrowS-Pairs scoring, bert-base-sized BertForMaskedLM (random weights), torch "
          f"{torch.__version__}, 2 threads\npairs: {len(pairs)} from {source}")
    eng = run_child("engine", args)
    ref = run_child("reference", args)
    n = len(ref["scores"])
    diff = np.abs(np.asarray(eng["scores"][:n]) - np.asarray(ref["scores"]))
    assert diff.max() <= 1e-4, f"engine and reference disagree by {diff.max():.2e}"
    per_token = ref["seconds"] / ref["masked_tokens"]
    ref_total = per_token * eng["masked_tokens"]
    extrapolated = n < eng["sentences"]
    print(f"sentences: {eng['sentences']}, tokens: {eng['tokens']}, masked tokens (shared): "
          f"{eng['masked_tokens']}")
    sc = np.asarray(ref["scores"])
    print(f"per-sentence scores agree on the {n} reference sentences: max |diff| = {diff.max():.1e} "
          f"(scores from {sc.min():.2f} to {sc.max():.2f}; per token "
          f"{np.mean(sc) * n / ref['masked_tokens']:.2f} on average, log(1/V) = {-np.log(30522):.2f})")
    print(f"{'method':40s} {'seconds':>9s} {'peak RSS MB':>12s} {'+ over build':>13s}")
    print(f"{'engine (batch_tokens=' + str(args.max_batch_tokens) + ')':40s} "
          f"{eng['seconds']:9.1f} {eng['rss_peak_mb']:12.0f} "
          f"{eng['rss_peak_mb'] - eng['rss_after_build_mb']:13.0f}")
    label = "reference, one forward per masked token"
    print(f"{label:40s} {ref_total:9.1f} {ref['rss_peak_mb']:12.0f} "
          f"{ref['rss_peak_mb'] - ref['rss_after_build_mb']:13.0f}")
    if extrapolated:
        print(f"  (reference measured on {ref['sentences']} sentences / {ref['masked_tokens']} masked "
              f"tokens in {ref['seconds']:.1f} s and extrapolated per masked token to all "
              f"{eng['masked_tokens']})")
    print(f"speed ratio (reference / engine): {ref_total / eng['seconds']:.1f}x")
    peak = matmul_peak_gflops()
    eng_rate = eng["gflop"] / eng["seconds"]
    ref_rate = ref["gflop"] / ref["seconds"]
    print(f"arithmetic rate: engine {eng_rate:.0f} GFLOP/s, reference {ref_rate:.0f} GFLOP/s, "
          f"this machine's matrix-multiply peak {peak:.0f} GFLOP/s (2 threads)")
    print(f"the engine does {eng['gflop'] / (ref['gflop'] * eng['masked_tokens'] / ref['masked_tokens']):.2f}x "
          f"the reference's arithmetic; at the peak rate, no exact batching could beat the reference "
          f"by more than about {peak / ref_rate * ref['gflop'] / ref['masked_tokens'] * eng['masked_tokens'] / eng['gflop']:.1f}x here")


if __name__ == "__main__":
    main()
