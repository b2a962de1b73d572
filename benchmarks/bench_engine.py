"""The scoring engine against the ways others score, and against the bare forward passes,
on one device, in one table.

    .venv/bin/python benchmarks/bench_engine.py [--device cuda] [--pairs N] [--quick]

For a masked LM (``BertForMaskedLM``, Nangia et al.'s shared tokens of CrowS-Pairs masked
one at a time) and a causal LM (``GPT2LMHeadModel``, the full sentence given BOS), at
bert-base and bert-large sizes (hidden 768/12 layers/12 heads and 1024/24/16; the causal
model the same sizes, GPT-2's vocabulary), random weights, in float32 and bfloat16:

* **engine** — :func:`polybias.engines.scoring.masked_token_logprobs` /
  :func:`~polybias.engines.scoring.causal_token_logprobs` with the model's automatic
  token budget;
* **one mask per forward** — Nangia et al.'s ``metric.py`` loop: one masked copy per
  forward pass, log-softmax over the full vocabulary (causal: one sentence per forward);
  timed on the first ``--loop-pairs`` pairs and extrapolated per masked copy (per
  sentence for the causal LM);
* **one batch per sentence** — minicons's way: all masked copies of a sentence in one
  forward pass, the output layer at every position (masked LM only); timed on the first
  ``--sentence-pairs`` pairs and extrapolated per pair;
* **bare forwards** — the very batches the engine ran (recorded during its run), replayed
  through the model alone with the output layer at the same number of positions: what the
  engine would take if its own work cost nothing.

The engine and the bare forwards are timed ``--repeat`` times, alternating, and the best
of each is kept.

Each is given in pairs per second and as the fraction of the device's measured matrix
multiply peak in that dtype (:func:`devices.matmul_peak`) that the useful arithmetic
represents (every masked copy through the encoder, the output layer at the scored
positions; 2 FLOP per multiply-add). The sentences are the real CrowS-Pairs file when
``$POLYBIAS_DATA_MIRROR`` holds it (else synthetic CrowS-like pairs), the tokenizer an
uncased WordPiece (masked) or byte-level BPE (causal) trained on them. With ``--quick``
the models are reduced (hidden 64/128) and a few pairs are scored: a smoke run of the
same table. Scores of the engine and of the loop must agree (1e-4 in float32).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import torch  # noqa: E402
from bench_scoring import load_pairs  # noqa: E402
from devices import DTYPES, describe, matmul_peak, resolve_device, synchronize  # noqa: E402
from reference_loops import one_mask_score  # noqa: E402

SIZES = {"bert-base": dict(hidden=768, layers=12, heads=12, ffn=3072),
         "bert-large": dict(hidden=1024, layers=24, heads=16, ffn=4096)}
QUICK_SIZES = {"bert-base": dict(hidden=64, layers=2, heads=2, ffn=256),
               "bert-large": dict(hidden=128, layers=4, heads=4, ffn=512)}
VOCAB = {"masked": 30522, "causal": 50257}
#: what the sizes are called per kind (the causal LMs of the same sizes: GPT-2 small, medium)
NAMES = {("masked", "bert-base"): "bert-base", ("masked", "bert-large"): "bert-large",
         ("causal", "bert-base"): "gpt2-small", ("causal", "bert-large"): "gpt2-medium"}
QUICK_VOCAB = 2000
#: (pairs, loop pairs, sentence pairs) by default on each device kind, and in a quick run
COUNTS = {"cuda": (1508, 40, 200), "cpu": (6, 1, 2), "quick": (6, 1, 2)}


def build(kind: str, size: str, quick: bool, corpus: list[str], device: str, dtype):
    """A random-weight masked or causal LM of ``size`` in ``dtype`` on ``device``, wrapped."""
    from polybias.engines.scoring import wrap_language_model
    from polybias.planted.tiny_models import CORPUS, build_tiny_model

    d = (QUICK_SIZES if quick else SIZES)[size]
    vocab = QUICK_VOCAB if quick else VOCAB[kind]
    if kind == "masked":
        family, cfg = "bert", dict(hidden_size=d["hidden"], num_hidden_layers=d["layers"],
                                   num_attention_heads=d["heads"], intermediate_size=d["ffn"],
                                   max_position_embeddings=512, initializer_range=0.02)
    else:
        family, cfg = "gpt2", dict(n_embd=d["hidden"], n_layer=d["layers"], n_head=d["heads"],
                                   n_inner=d["ffn"], n_positions=512, initializer_range=0.02)
    model, tok = build_tiny_model(family, seed=0, vocab_size=vocab, corpus=corpus + list(CORPUS), **cfg)
    tok.model_max_length = 512
    model.to(device=device, dtype=dtype)
    return wrap_language_model(model, tok, name=f"{size}-{kind}-random", device=device)


def gflop(kind: str, dims: dict, vocab: int, work: list[tuple[int, int]]) -> float:
    """Useful arithmetic (GFLOP) of scoring ``work`` = [(tokens of the row, scored positions)]:
    every row through the layers, the output layer at the scored positions only (the
    masked LM's head transform included)."""
    h, ffn, layers = dims["hidden"], dims["ffn"], dims["layers"]
    total = 0.0
    for length, scored in work:
        total += layers * (length * (4 * h * h + 2 * h * ffn) + 2 * length * length * h)
        total += scored * ((h * h if kind == "masked" else 0) + h * vocab)
    return 2 * total / 1e9


def record_batches(lm, run):
    """Run ``run()`` and return the batches the engine fed the model: (input ids,
    attention mask, rows of the output layer)."""
    seen: list[list] = []
    head = lm.model.get_output_embeddings()

    def before(module, args, kwargs):
        seen.append([kwargs["input_ids"], kwargs["attention_mask"], None])

    def after(module, args, out):
        if seen and seen[-1][2] is None:
            seen[-1][2] = args[0].reshape(-1, args[0].shape[-1]).shape[0]

    hooks = [lm.model.register_forward_pre_hook(before, with_kwargs=True),
             head.register_forward_hook(after)]
    try:
        out = run()
    finally:
        for hook in hooks:
            hook.remove()
    return out, seen


def bare_forwards(lm, batches, device: str) -> float:
    """Seconds to run the recorded batches through the model alone (the output layer at
    as many positions as the engine asked for)."""
    from polybias.engines.scoring import head_only_at

    kwargs = {"use_cache": False} if lm.kind == "causal" else {}
    synchronize(device)
    t0 = time.perf_counter()
    with torch.inference_mode():
        for ids, attention, k in batches:
            rows = torch.arange(k, device=ids.device) % ids.shape[0]
            cols = torch.zeros(k, dtype=torch.long, device=ids.device)
            with head_only_at(lm.model, tuple(ids.shape), rows, cols):
                lm.model(input_ids=ids, attention_mask=attention, **kwargs)
    synchronize(device)
    return time.perf_counter() - t0


def one_mask_loop(lm, texts, positions, device: str) -> tuple[float, list[float]]:
    """Nangia et al.'s loop: one forward per masked copy (masked LM), one per sentence
    (causal LM, BOS prepended), full-vocabulary log-softmax; per-sentence sums."""
    tok, model = lm.tokenizer, lm.model
    scores = []
    synchronize(device)
    t0 = time.perf_counter()
    with torch.inference_mode():
        for text, pos in zip(texts, positions, strict=True):
            if lm.kind == "mlm":
                total = one_mask_score(tok, model, text, pos, device)
            else:
                ids = torch.tensor([tok(text)["input_ids"]], device=device)
                bos = tok.bos_token_id if tok.bos_token_id is not None else tok.eos_token_id
                x = torch.cat([torch.tensor([[bos]], device=device), ids], dim=1)
                lp = torch.log_softmax(model(input_ids=x, use_cache=False).logits[0, :-1].float(), -1)
                total = lp.gather(1, ids[0, :, None]).sum().item()
            scores.append(total)
    return time.perf_counter() - t0, scores


def one_batch_per_sentence(lm, texts, positions, device: str) -> float:
    """minicons's way: every masked copy of a sentence in one forward pass, the output
    layer and log-softmax at every position."""
    tok, model = lm.tokenizer, lm.model
    synchronize(device)
    t0 = time.perf_counter()
    with torch.inference_mode():
        for text, pos in zip(texts, positions, strict=True):
            ids = torch.tensor(tok(text)["input_ids"], device=device)
            at = torch.tensor(pos, device=device)
            copies = ids.repeat(len(pos), 1)
            copies[torch.arange(len(pos), device=device), at] = tok.mask_token_id
            lp = torch.log_softmax(model(input_ids=copies).logits.float(), -1)
            lp[torch.arange(len(pos), device=device), at].gather(1, ids[at][:, None]).sum().item()
    return time.perf_counter() - t0


def measure(kind: str, size: str, dtype_name: str, pairs, quick: bool, device: str,
            n_loop: int, n_sentence: int, peak: float, repeat: int = 3) -> dict:
    from polybias.engines.pair_scores import shared_token_positions
    from polybias.engines.scoring import causal_token_logprobs, masked_token_logprobs

    more, less = [m for m, _ in pairs], [s for _, s in pairs]
    texts = more + less
    lm = build(kind, size, quick, texts, device, DTYPES[dtype_name])
    if kind == "masked":
        aligned = shared_token_positions(lm.tokenizer, pd.DataFrame(pairs, columns=["sent_more", "sent_less"]),
                                         "content")
        positions = [a for a, _ in aligned] + [b for _, b in aligned]
    else:
        positions = [[i for i, s in enumerate(lm.tokenizer(t, return_special_tokens_mask=True)
                                              ["special_tokens_mask"]) if not s] for t in texts]

    def engine(subset=None):
        sub = slice(None) if subset is None else subset
        if kind == "masked":
            scored = masked_token_logprobs(lm, texts[sub], positions=positions[sub])
        else:
            scored = causal_token_logprobs(lm, texts[sub])
        return [float(np.nansum(s.logprob)) for s in scored]

    engine(slice(0, 4))  # warm-up: kernels, allocator
    scores, batches = record_batches(lm, engine)
    t_engine = t_bare = float("inf")
    for _ in range(repeat):  # the best of `repeat` alternating runs of each
        synchronize(device)
        t0 = time.perf_counter()
        engine()
        synchronize(device)
        t_engine = min(t_engine, time.perf_counter() - t0)
        t_bare = min(t_bare, bare_forwards(lm, batches, device))
    n = len(pairs)
    # the loops score sentence pairs from the start: sent_more and sent_less of each
    loop_idx = [i for k in range(min(n_loop, n)) for i in (k, n + k)]
    t_loop, loop_scores = one_mask_loop(lm, [texts[i] for i in loop_idx], [positions[i] for i in loop_idx], device)
    agree = float(np.max(np.abs(np.array(loop_scores) - np.array([scores[i] for i in loop_idx]))))
    copies = sum(len(p) for p in positions)
    loop_copies = sum(len(positions[i]) for i in loop_idx)
    unit_all, unit_loop = (copies, loop_copies) if kind == "masked" else (len(texts), len(loop_idx))
    t_loop_all = t_loop / unit_loop * unit_all
    t_sentence_all = None
    if kind == "masked":
        sent_idx = [i for k in range(min(n_sentence, n)) for i in (k, n + k)]
        t_sentence = one_batch_per_sentence(lm, [texts[i] for i in sent_idx], [positions[i] for i in sent_idx], device)
        t_sentence_all = t_sentence / len(sent_idx) * len(texts)
    lengths = [len(ids) for ids in lm.tokenizer(texts)["input_ids"]]
    if kind == "masked":
        work = [(length, 1) for length, p in zip(lengths, positions, strict=True) for _ in p]
    else:
        work = [(length + 1, len(p)) for length, p in zip(lengths, positions, strict=True)]
    dims = (QUICK_SIZES if quick else SIZES)[size]
    vocab = lm.model.get_output_embeddings().weight.shape[0]
    useful = gflop(kind, dims, vocab, work) * 1e9
    return {"kind": kind, "size": size, "dtype": dtype_name, "pairs": n, "copies": copies,
            "batch_tokens": lm.batch_tokens, "engine": t_engine, "bare": t_bare, "loop": t_loop_all,
            "sentence": t_sentence_all, "useful_flop": useful, "peak": peak, "agree": agree,
            "loop_pairs": len(loop_idx) // 2}


def table(results: list[dict]) -> str:
    lines = [f"{'model':22s} {'dtype':5s} {'method':24s} {'pairs/s':>9s} {'engine x':>9s} {'% peak':>7s}"]
    for r in results:
        label = f"{NAMES[r['kind'], r['size']]} {r['kind']}"
        loop = "one mask per forward" if r["kind"] == "masked" else "one sentence per forward"
        for method, key in (("engine", "engine"), ("bare forwards", "bare"),
                            (loop, "loop"), ("one batch per sentence", "sentence")):
            t = r[key]
            if t is None:
                continue
            speed = "-" if key == "engine" else (f"{r['engine'] / t:.2f}" if key == "bare"
                                                 else f"{t / r['engine']:.1f}")
            lines.append(f"{label:22s} {r['dtype']:5s} {method:24s} {r['pairs'] / t:9.1f} "
                         f"{speed:>9s} {100 * r['useful_flop'] / t / r['peak']:6.1f}%")
    return "\n".join(lines)


def main(quick: bool = False, device: str = "cpu", argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default=None, help="cpu (default) or cuda[:N]")
    parser.add_argument("--pairs", type=int, help="CrowS-Pairs rows scored by the engine")
    parser.add_argument("--loop-pairs", type=int, help="pairs timed with the one-mask loop")
    parser.add_argument("--sentence-pairs", type=int, help="pairs timed one batch per sentence")
    parser.add_argument("--sizes", default="bert-base,bert-large")
    parser.add_argument("--dtypes", default="fp32,bf16")
    parser.add_argument("--kinds", default="masked,causal")
    parser.add_argument("--repeat", type=int, default=3, help="timings of the engine and bare forwards")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    quick = quick or args.quick
    device = resolve_device(args.device or device)
    if device == "cpu":
        torch.set_num_threads(2)
    counts = COUNTS["quick" if quick else device.split(":")[0]]
    n_pairs = args.pairs or counts[0]
    n_loop, n_sentence = args.loop_pairs or counts[1], args.sentence_pairs or counts[2]
    pairs, source = load_pairs(n_pairs)
    print(f"engine vs other ways of scoring, {describe(device)}, torch {torch.__version__}; "
          f"{len(pairs)} pairs from {source}" + ("; quick: reduced model sizes" if quick else ""))
    peaks = {d: matmul_peak(device, DTYPES[d], repeat=10) for d in args.dtypes.split(",")}
    print("matrix-multiply peak: " + ", ".join(f"{d} {p / 1e12:.2f} TFLOP/s" for d, p in peaks.items()))
    results = []
    for kind in args.kinds.split(","):
        for size in args.sizes.split(","):
            for dtype in args.dtypes.split(","):
                r = measure(kind, size, dtype, pairs, quick, device, n_loop, n_sentence, peaks[dtype],
                            args.repeat)
                results.append(r)
                print(f"  {NAMES[kind, size]} {kind} {dtype}: batch_tokens {r['batch_tokens']}, {r['copies']:,} "
                      f"{'masked copies' if kind == 'masked' else 'scored tokens'}; engine and loop "
                      f"agree to {r['agree']:.1e} on {r['loop_pairs']} pair(s)", flush=True)
                if dtype == "fp32" and device == "cpu":
                    assert r["agree"] <= 1e-4, f"engine and loop disagree by {r['agree']:.1e}"
    print(table(results))
    print("engine x: for the bare forwards, engine time / bare time (1.00: the engine costs "
          "nothing beyond the model); for the others, their time / engine time. % peak: useful "
          "arithmetic / time / the dtype's matrix-multiply peak. One-mask and one-batch-per-"
          "sentence times are extrapolated from their first pairs.")
    rows = []
    for r in results:
        name = f"{NAMES[r['kind'], r['size']]} {r['dtype']} ({device})"
        rows.append({"benchmark": f"{name}: engine", "reference": "bare forwards, same batches",
                     "reference_s": r["bare"], "polybias_s": r["engine"]})
        rows.append({"benchmark": f"{name}: engine", "reference": "one forward per masked copy"
                     if r["kind"] == "masked" else "one forward per sentence",
                     "reference_s": r["loop"], "polybias_s": r["engine"]})
        if r["sentence"] is not None:
            rows.append({"benchmark": f"{name}: engine", "reference": "one batch per sentence",
                         "reference_s": r["sentence"], "polybias_s": r["engine"]})
    return rows


if __name__ == "__main__":
    main()
