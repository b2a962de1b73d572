"""The scoring engine on the two embedded real causal LMs (SmolLM2-135M-Instruct Q4_1 and
Gemma-3-270m Q4_K_M), against the bare forward passes of the same batches and against the
authors' per-sentence loops, on the sentences of the real-model sweep.

    .venv/bin/python benchmarks/bench_real_models.py [--quick] [--models smollm2,gemma]

For each model, on the CPU, float32, the threads torch is given:

* **CrowS-Pairs** (the first pairs of the CrowS-Pairs file): the engine
  (:func:`polybias.engines.scoring.causal_pair_token_logprobs`: each pair's shared prefix
  computed once) in tokens per second of the sequences scored, against **bare forwards**:
  the very batches the engine ran (recorded during its run), replayed through the model
  alone with the output layer at as many positions (target ≥ 0.9 of their rate).
* **EuroGEST** (Czech gendered pairs and Czech neutral sentences in their scaffolds): the
  engine (:func:`polybias.engines.eurogest_scores.gendered_pair_scores`, the part from the
  divergence, as the measure reads it) against the authors' loop (``evaluate_sentence`` of
  JacquelineRowe/EuroGEST ``main.py``: one sequence at a time, each form through the whole
  model, log-softmax over the vocabulary at every position), timed on a part of the pairs
  and extrapolated per pair. The differing parts' sums must agree (1e-3).
* **GEST** (GEST's sentences in the authors' first causal template): the engine
  (:func:`polybias.engines.gest_scores`' next-token scores) against the authors' loop (one
  prompt per forward pass, the logits at every position, the last read).

Then, per 1,000 pairs, the minutes a user should expect for CrowS-Pairs and EuroGEST, and
the real-model sweep's CPU time, measured: the ``cpu_seconds`` of the records kept under
``paper/records/``.

**The float32 floor.** The multiply-adds the engine's batches ask of the linear layers
(every unpadded token through the body's linear layers, every scored position through the
output layer; attention's own products, norms and everything else left out) divided by the
CPU-seconds of the engine's CrowS-Pairs and EuroGEST runs give the engine's rate in GFLOP/s,
set against torch's float32 matrix products alone on the same shapes, timed here
(:func:`sgemm_rate`). Each model's kept CPU-hours times the ratio of the two is what its runs
would cost if every CPU-second went to float32 matrix products at that rate. It is an upper
estimate of the floor, since the kept time also holds each run's loading, tokenizing and
bootstrap, which are not matrix products. The same products in bfloat16 are timed beside them
(not used for reported numbers: ``docs/conventions.md``, precision).
Sentences come from ``$POLYBIAS_DATA_MIRROR`` (or the network); without them the module
prints one line saying so and returns no rows.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from functools import partial
from pathlib import Path

import numpy as np
import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from bench_engine import bare_forwards, record_batches  # noqa: E402

MODELS = {"smollm2": "smollm2-135m-instruct-q4_1", "gemma": "gemma-3-270m-q4_k_m"}


def _n_tokens(scored) -> int:
    return int(sum(len(s.input_ids) + 1 for s in scored))


def matmul_parameters(model) -> tuple[int, int, list[tuple[int, int]]]:
    """(weights of the body's linear layers, weights of the output layer, the body's weight
    shapes as (out, in)): one multiply-add per weight per token."""
    from transformers.pytorch_utils import Conv1D  # GPT-2's linear layers, weights (in, out)

    head = model.get_output_embeddings()
    body = [(m.weight.shape[1], m.weight.shape[0]) if isinstance(m, Conv1D) else tuple(m.weight.shape)
            for m in model.modules() if isinstance(m, torch.nn.Linear | Conv1D) and m is not head]
    return sum(o * i for o, i in body), head.weight.numel(), body


def unpadded_tokens(ids: torch.Tensor, mask: torch.Tensor) -> int:
    """The tokens of a recorded batch that are not padding: a 2-D mask's ones (its last
    ``ids.shape[1]`` columns: a continuation's mask also covers its cached prefix); in a 4-D
    tree mask (:func:`polybias.engines.scoring._tree_inputs`) padding sees only itself, a
    text's token also the row's first token, which is never padding.

    >>> ids = torch.zeros(2, 3)
    >>> unpadded_tokens(ids, torch.tensor([[1, 1, 1, 1], [1, 1, 0, 0]]))
    4
    >>> tree = torch.tensor([[[1, 0, 0], [1, 1, 0], [0, 0, 1]]], dtype=torch.bool)[:, None]
    >>> unpadded_tokens(ids[:1], tree)
    2
    """
    if mask.dim() == 4:
        seen = mask[:, 0].sum(-1)
        return int((seen > 1).sum()) + mask.shape[0]
    return int(mask[:, -ids.shape[1]:].sum())


def batch_flops(batches, body: int, head: int) -> tuple[float, float]:
    """Floating-point operations (2 per multiply-add) the recorded batches ask of the linear
    layers, (body, output layer): each unpadded token through the body, each output-layer
    row through the head.

    >>> ids, mask = torch.zeros(2, 3), torch.tensor([[1, 1, 1, 1], [1, 1, 0, 0]])
    >>> batch_flops([(ids, mask, 2)], body=10, head=100)
    (80.0, 400.0)
    """
    tokens = sum(unpadded_tokens(ids, mask) for ids, mask, _ in batches)
    rows = sum(int(k) for _, _, k in batches)
    return 2.0 * tokens * body, 2.0 * rows * head


def sgemm_rate(shapes: list[tuple[int, int]], rows: int, dtype=torch.float32, reps: int = 2) -> float:
    """GFLOP per CPU-second of ``torch.nn.functional.linear`` alone: ``rows`` rows through each
    weight shape (out, in) in turn, in ``dtype``."""
    weights = [torch.randn(shape).to(dtype) for shape in dict.fromkeys(shapes)]
    inputs = {w.shape[1]: torch.randn(rows, w.shape[1]).to(dtype) for w in weights}
    with torch.inference_mode():
        for w in weights:
            torch.nn.functional.linear(inputs[w.shape[1]], w)  # warm-up
        t0 = time.process_time()
        for _ in range(reps):
            for w in weights:
                torch.nn.functional.linear(inputs[w.shape[1]], w)
        used = time.process_time() - t0
    return 2.0 * rows * reps * sum(w.numel() for w in weights) / used / 1e9


def float32_floor(lm, jobs: list) -> dict:
    """The engine's GFLOP per CPU-second on ``jobs`` (callables running the engine) against
    matrix products alone on the model's shapes (module docstring): ``engine`` and
    ``float32`` in GFLOP/s (the latter for the same mix of body and output-layer work),
    ``ratio`` the first over the second, ``bfloat16_speedup`` how much faster the same
    products run in bfloat16."""
    body, head, shapes = matmul_parameters(lm.model)
    head_shape = [tuple(lm.model.get_output_embeddings().weight.shape)]
    body_flops = head_flops = used = 0.0
    for job in jobs:
        t0 = time.process_time()
        _, batches = record_batches(lm, job)
        used += time.process_time() - t0
        b, h = batch_flops(batches, body, head)
        body_flops, head_flops = body_flops + b, head_flops + h
    seconds = {dtype: body_flops / sgemm_rate(shapes, 2048, dtype) / 1e9
               + head_flops / sgemm_rate(head_shape, 256, dtype) / 1e9
               for dtype in (torch.float32, torch.bfloat16)}
    engine = (body_flops + head_flops) / used / 1e9
    bare = (body_flops + head_flops) / seconds[torch.float32] / 1e9
    return {"engine": engine, "float32": bare, "ratio": engine / bare, "engine_s": used,
            "float32_s": seconds[torch.float32],
            "head_share": head_flops / (body_flops + head_flops),
            "bfloat16_speedup": seconds[torch.float32] / seconds[torch.bfloat16]}


def crows_rates(lm, pairs) -> dict:
    """Engine vs bare forwards on CrowS-Pairs pairs, in tokens per second (best of 2)."""
    from polybias.engines import scoring

    more, less = [p[0] for p in pairs], [p[1] for p in pairs]
    scoring.causal_pair_token_logprobs(lm, more[:2], less[:2])  # warm-up
    best_engine, best_bare, tokens = np.inf, np.inf, 0
    for _ in range(2):
        t0 = time.perf_counter()
        (a, b), batches = record_batches(
            lm, lambda: scoring.causal_pair_token_logprobs(lm, more, less, check=False))
        best_engine = min(best_engine, time.perf_counter() - t0)
        tokens = _n_tokens(a) + _n_tokens(b)
        best_bare = min(best_bare, bare_forwards(lm, batches, "cpu"))
    t0 = time.perf_counter()
    scoring.causal_token_logprobs(lm, more + less)
    plain = time.perf_counter() - t0
    return {"tokens": tokens, "engine_s": best_engine, "bare_s": best_bare, "plain_s": plain,
            "pairs": len(pairs)}


def authors_eurogest_loop(lm, pairs) -> tuple[float, list[float]]:
    """The authors' ``evaluate_sentence``: each form alone through the model, log-softmax over
    the vocabulary at every position, the tokens from the divergence summed (here with BOS,
    as the engine's ``causal_bos="prepend"``). Returns seconds and the masculine part sums."""
    from polybias.engines.eurogest_scores import divergence

    tok, model = lm.tokenizer, lm.model
    sums = []
    t0 = time.perf_counter()
    with torch.inference_mode():
        for masc, fem in zip(pairs.masculine, pairs.feminine, strict=True):
            ids = [tok(x)["input_ids"] for x in (masc, fem)]
            rows = [i if i[0] == tok.bos_token_id else [tok.bos_token_id, *i] for i in ids]
            lps = []
            for row in rows:
                logits = model(torch.tensor([row])).logits[0]
                lp = torch.log_softmax(logits.float(), -1)
                lps.append(lp[torch.arange(len(row) - 1), torch.tensor(row[1:])].numpy())
            shift = len(rows[0]) - len(ids[0])
            start = divergence(ids[0], ids[1])
            sums.append(float(lps[0][start + shift - 1:].sum()) if shift else float(lps[0][max(start - 1, 0):].sum()))
    return time.perf_counter() - t0, sums


def eurogest_rates(lm, pairs, loop_pairs: int) -> dict:
    from polybias.engines.eurogest_scores import gendered_pair_scores

    gendered_pair_scores(lm, pairs.head(2), whole=False)  # warm-up
    t0 = time.perf_counter()
    scored = gendered_pair_scores(lm, pairs, whole=False)
    engine = time.perf_counter() - t0
    head = pairs.head(loop_pairs)
    loop_s, sums = authors_eurogest_loop(lm, head)
    gap = float(np.max(np.abs(np.asarray(sums) - scored.logprob_masc.head(loop_pairs).to_numpy())))
    if gap > 1e-3:
        raise AssertionError(f"{lm.name}: engine and authors' loop differ by {gap:.2g} nats")
    return {"pairs": len(pairs), "engine_s": engine, "loop_s": loop_s * len(pairs) / len(head),
            "loop_pairs": len(head)}


def gest_rates(lm, sentences: list[str], loop_items: int) -> dict:
    """Engine vs the authors' loop on GEST's first causal template (``"<s>", he`` vs ``she``)."""
    from polybias.data import gest
    from polybias.engines import gest_scores

    prompt, male, female = gest.CAUSAL_TEMPLATES[0]
    tok = lm.tokenizer
    ids = [gest_scores.answer_token_id(tok, male), gest_scores.answer_token_id(tok, female)]
    gest_scores.causal_gest_scores(lm, sentences[:2], template=0)  # warm-up
    t0 = time.perf_counter()
    got = gest_scores.causal_gest_scores(lm, sentences, template=0)
    engine = time.perf_counter() - t0
    t0 = time.perf_counter()
    with torch.inference_mode():
        for k, sentence in enumerate(sentences[:loop_items]):
            logits = lm.model(torch.tensor([tok(gest.fill(prompt, sentence))["input_ids"]])).logits[0]
            lp = torch.log_softmax(logits.float(), -1)[-1, ids].double().numpy()
            if abs((lp[0] - lp[1]) / np.log(10) - got[k]) > 1e-3:
                raise AssertionError(f"{lm.name}: GEST engine and loop differ on {sentence!r}")
    loop = (time.perf_counter() - t0) * len(sentences) / loop_items
    return {"items": len(sentences), "engine_s": engine, "loop_s": loop}


def main(quick: bool = False, argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--models", default="smollm2,gemma")
    args = parser.parse_args(argv if argv is not None else [])
    quick = quick or args.quick
    from polybias import models
    from polybias.data import crowspairs, gest
    from polybias.data import eurogest as eg
    from polybias.data.sources import SourceUnreachable

    try:
        crows = crowspairs.load_crows_pairs("crows-pairs", "en", on_invalid="keep")
        gendered, neutral = eg.gendered_pairs("cs"), eg.scaffolded_pairs("cs")
        gest_sentences = gest.load_gest().sentence.tolist()
    except (SourceUnreachable, OSError) as exc:
        print(f"bench_real_models: skipped: the sentences cannot be had ({str(exc).splitlines()[0]})")
        return []
    n_pairs, n_eg, n_loop, n_gest = (8, 8, 2, 16) if quick else (96, 120, 12, 300)
    pairs = list(zip(crows.sent_more, crows.sent_less, strict=True))[:n_pairs]
    eg_pairs = {"gendered": gendered.head(n_eg).reset_index(drop=True),
                "neutral": neutral.head(n_eg).reset_index(drop=True)}
    rows, rates, floors = [], {}, {}
    print(f"threads: {torch.get_num_threads()}")
    for short in args.models.split(","):
        name = MODELS[short]
        try:
            lm = models.load(name, "lm", batch_tokens=2048)
        except models.ModelError as exc:  # e.g. a machine without the model's packages
            print(f"bench_real_models: {name} skipped: {exc}")
            continue
        c = crows_rates(lm, pairs)
        ratio = (c["tokens"] / c["engine_s"]) / (c["tokens"] / c["bare_s"])
        print(f"{name}: CrowS-Pairs {c['pairs']} pairs, {c['tokens']} tokens: engine "
              f"{c['tokens'] / c['engine_s']:.0f} tok/s, bare forwards {c['tokens'] / c['bare_s']:.0f} tok/s "
              f"(engine/bare {ratio:.2f}; target >= 0.9); texts apart {c['tokens'] / c['plain_s']:.0f} tok/s")
        rows.append({"benchmark": f"{short}: CrowS-Pairs engine (tokens/s vs bare forwards)",
                     "reference": "bare forwards of the same batches", "reference_s": c["bare_s"],
                     "polybias_s": c["engine_s"]})
        rows.append({"benchmark": f"{short}: CrowS-Pairs, shared prefix once",
                     "reference": "each sentence apart (same engine)", "reference_s": c["plain_s"],
                     "polybias_s": c["engine_s"]})
        rates[short] = {"crows_pair_s": c["engine_s"] / c["pairs"]}
        for subset, frame in eg_pairs.items():
            e = eurogest_rates(lm, frame, n_loop)
            print(f"{name}: EuroGEST cs {subset}, {e['pairs']} pairs: engine {e['pairs'] / e['engine_s']:.1f} "
                  f"pairs/s, authors' loop {e['pairs'] / e['loop_s']:.1f} pairs/s (timed on {e['loop_pairs']})")
            rows.append({"benchmark": f"{short}: EuroGEST {subset} pairs", "reference":
                         "authors' evaluate_sentence loop", "reference_s": e["loop_s"],
                         "polybias_s": e["engine_s"]})
            rates[short][f"eurogest_{subset}_pair_s"] = e["engine_s"] / e["pairs"]
        g = gest_rates(lm, gest_sentences[:n_gest], 4 if quick else 40)
        print(f"{name}: GEST {g['items']} prompts: engine {g['items'] / g['engine_s']:.1f}/s, "
              f"authors' loop {g['items'] / g['loop_s']:.1f}/s")
        rows.append({"benchmark": f"{short}: GEST causal template", "reference":
                     "authors' one prompt per forward", "reference_s": g["loop_s"],
                     "polybias_s": g["engine_s"]})
        from polybias.engines import scoring
        from polybias.engines.eurogest_scores import gendered_pair_scores

        more, less = [p[0] for p in pairs], [p[1] for p in pairs]
        f = float32_floor(lm, [partial(scoring.causal_pair_token_logprobs, lm, more, less, check=False),
                               partial(gendered_pair_scores, lm, eg_pairs["gendered"], whole=False)])
        floors[name] = f["ratio"]
        print(f"{name}: linear layers in the engine {f['engine']:.0f} GFLOP per CPU-second, float32 "
              f"products alone on the same shapes {f['float32']:.0f} (engine/products {f['ratio']:.2f}; "
              f"output layer {f['head_share']:.0%} of the FLOPs); the same products in bfloat16 "
              f"{f['bfloat16_speedup']:.1f}x faster (not used: docs/conventions.md)")
        rows.append({"benchmark": f"{short}: engine, CrowS-Pairs + EuroGEST (CPU-s)",
                     "reference": "its float32 linear-layer products alone",
                     "reference_s": f["float32_s"], "polybias_s": f["engine_s"]})
        r = rates[short]
        print(f"{name}: per 1,000 pairs: CrowS-Pairs {r['crows_pair_s'] * 1000 / 60:.1f} min, "
              f"EuroGEST gendered {r['eurogest_gendered_pair_s'] * 1000 / 60:.1f} min, "
              f"neutral {r['eurogest_neutral_pair_s'] * 1000 / 60:.1f} min "
              f"({torch.get_num_threads()} thread(s))")
        del lm
    from polybias.runner.execution import kept_summary

    kept = kept_summary(ROOT)
    print(f"real-model sweep: {kept['runs']} runs kept under paper/records, "
          f"{kept['cpu_seconds'] / 3600:.2f} CPU-hours measured ("
          + "; ".join(f"{m}: {v['runs']} runs, {v['cpu_seconds'] / 3600:.2f} h"
                      for m, v in sorted(kept["by_model"].items())) + ")")
    if floors and all(m in floors for m in kept["by_model"]):
        floor = sum(v["cpu_seconds"] * floors[m] for m, v in kept["by_model"].items()) / 3600
        print(f"real-model sweep: float32 floor {floor:.2f} CPU-hours (each model's kept CPU time x "
              "its engine/products ratio: every CPU-second a float32 matrix product at the rate "
              "timed here; an upper estimate, since the runs' loading, tokenizing and bootstrap "
              "count as engine time); target 4")
    return rows


if __name__ == "__main__":
    torch.set_num_threads(int(os.environ.get("OMP_NUM_THREADS", "0")) or torch.get_num_threads())
    for row in main(argv=sys.argv[1:]):
        print(row)
