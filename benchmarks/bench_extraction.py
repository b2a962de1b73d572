"""Contextual extraction on the embedded ``minilm-l6``: the engine against a naive loop
that encodes one sentence at a time, measured in the same run on the same inputs.

    .venv/bin/python benchmarks/bench_extraction.py [--sentences 500] [--threads 1] [--repeat 3] [--quick]

Three workloads:

* **word vectors, distinct sentences**: sentences of 6-40 words from the project's
  varied-length planted corpus (:func:`polybias.planted.synthetic.varied_length_corpus`), the
  target being the first male or female term of each; the vector is the mean of the
  last layer over the target's pieces. The naive loop tokenizes one sentence, runs the
  model on it, finds the pieces by offsets and averages them.
* **word vectors, a CEAT draw**: the same corpus, but each of its target words is
  sampled ``--sentences`` / 8 times from the sentences that hold it, with replacement
  (CEAT's N samples per stimulus, Guo & Caliskan 2021; seed 000 §3.2), so sentences
  repeat as they do in CEAT; the naive loop encodes every draw.
* **sentence vectors**: short bleached sentences made from the project's English SEAT
  templates and the WEAT word lists, the model's own (mean) pooling.

The engine sorts by length, packs batches under a token budget and runs identical inputs
once (:mod:`polybias.engines.embeddings`). Every vector must agree with the naive one to 1e-5;
the ratio of the best of ``--repeat`` alternating timings (naive / engine) is printed.
Both run on ``--threads`` torch threads (1 by default: on a small, shared machine two
threads mostly measure how the naive loop's many small operations wait for each other,
which flatters the engine).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np  # noqa: E402
import torch  # noqa: E402
from polybias import models
from polybias.studies import seat as seat_study


def word_workload(n: int) -> tuple[list[str], list[tuple[int, int]]]:
    from polybias.planted import synthetic

    targets = synthetic.planted_groups("en")["targets"]
    terms = sorted({w for group in targets.values() for w in group}, key=len, reverse=True)
    pattern = re.compile(r"\b(" + "|".join(map(re.escape, terms)) + r")\b")
    texts, spans = [], []
    for sentence in synthetic.varied_length_corpus(2 * n, seed=0, min_words=6, max_words=40):
        m = pattern.search(sentence)
        if m:
            texts.append(sentence)
            spans.append(m.span())
        if len(texts) == n:
            break
    return texts, spans


def ceat_workload(n: int, words_per_target: int = 8, corpus_size: int = 400, seed: int = 0):
    """``n`` draws: ``n // words_per_target`` occurrences of each of the first
    ``words_per_target`` target terms found, sampled with replacement."""
    from polybias.planted import synthetic

    targets = synthetic.planted_groups("en")["targets"]
    terms = sorted({w for group in targets.values() for w in group})
    corpus = synthetic.varied_length_corpus(corpus_size, seed=1, min_words=6, max_words=40)
    found = {}
    for term in terms:
        pattern = re.compile(r"\b" + re.escape(term) + r"\b")
        hits = [(text, m.span()) for text in corpus for m in pattern.finditer(text)]
        if hits:
            found[term] = hits
    chosen = sorted(found, key=lambda t: (-len(found[t]), t))[:words_per_target]
    rng = np.random.default_rng(seed)
    texts, spans = [], []
    for term in chosen:
        for i in rng.integers(len(found[term]), size=n // len(chosen)):
            texts.append(found[term][i][0])
            spans.append(found[term][i][1])
    return texts, spans, len(set(texts))


def sentence_workload(n: int) -> list[str]:
    from polybias.data.wordlists import load_tests
    from polybias.metrics import seat

    templates = seat_study.load_templates("en")
    words = list(dict.fromkeys(w for t in load_tests("en").values()
                               for ws in t.sets().values() for w in ws.words))
    out = [s for w in words for s in seat.fill_templates([w], "mass_noun", templates)]
    return out[:n]


def naive_words(enc, texts, spans) -> np.ndarray:
    out = []
    with torch.inference_mode():
        for text, (s, e) in zip(texts, spans, strict=True):
            batch = enc.tokenizer(text, return_offsets_mapping=True, return_special_tokens_mask=True,
                                  return_tensors="pt")
            offsets = batch.pop("offset_mapping")[0].numpy()
            special = batch.pop("special_tokens_mask")[0].numpy().astype(bool)
            hidden = enc.model(**batch).last_hidden_state[0]
            pieces = [i for i, (a, b) in enumerate(offsets) if not special[i] and max(a, s) < min(b, e)]
            out.append(hidden[pieces].mean(0).numpy())
    return np.vstack(out)


def naive_sentences(enc, texts) -> np.ndarray:
    out = []
    with torch.inference_mode():
        for text in texts:
            hidden = enc.model(**enc.tokenizer(text, return_tensors="pt")).last_hidden_state[0]
            out.append(hidden.mean(0).numpy())  # mean over all tokens (sentence-transformers)
    return np.vstack(out)


def timed(fn):
    t0 = time.perf_counter()
    value = fn()
    return value, time.perf_counter() - t0


def compare(label, short_label, reference, engine, naive, rows, repeat):
    """Best of ``repeat`` alternating timings of each method (the machine may be shared)."""
    t_engine = t_naive = float("inf")
    for _ in range(repeat):
        fast, t = timed(engine)
        t_engine = min(t_engine, t)
        slow, t = timed(naive)
        t_naive = min(t_naive, t)
    diff = float(np.abs(fast - slow).max())
    print(f"{label}: engine {t_engine:.2f} s, naive loop {t_naive:.2f} s, max |difference| {diff:.1e}")
    print(f"{label} ratio naive/engine: {t_naive / t_engine:.1f}x")
    if diff > 1e-5:
        sys.exit(f"{label}: engine and naive vectors differ by {diff:.2e} (> 1e-5)")
    rows.append({"benchmark": f"minilm-l6 {short_label}", "reference": reference,
                 "reference_s": t_naive, "polybias_s": t_engine})


def main(quick: bool | None = None, sentences: int | None = None, threads: int | None = None) -> list[dict]:
    from polybias.engines import embeddings

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sentences", type=int, default=500, help="inputs per workload")
    parser.add_argument("--repeat", type=int, default=3, help="timings per method (the best is kept)")
    parser.add_argument("--threads", type=int, default=1, help="torch threads of both methods")
    parser.add_argument("--quick", action="store_true", help="smoke run on 40 inputs")
    args, _ = parser.parse_known_args()
    quick = args.quick if quick is None else quick
    n = 40 if quick else (sentences or args.sentences)
    repeat = 1 if quick else args.repeat
    torch.set_num_threads(threads or args.threads)
    enc = models.load("minilm-l6", "encoder")
    texts, spans = word_workload(n)
    draw_texts, draw_spans, distinct = ceat_workload(n)
    short = sentence_workload(n)
    embeddings.word_vectors(enc, texts[:8], spans[:8])  # warm up both paths
    naive_words(enc, texts[:8], spans[:8])
    print(f"{torch.get_num_threads()} torch thread(s)")

    rows: list[dict] = []
    words = [len(t.split()) for t in texts]
    compare(f"word vectors, {len(texts)} distinct sentences of {min(words)}-{max(words)} words",
            f"word vectors, {len(texts)} distinct sentences", "one sentence per forward pass", lambda: embeddings.word_vectors(enc, texts, spans),
            lambda: naive_words(enc, texts, spans), rows, repeat)
    compare(f"word vectors, CEAT draw of {len(draw_texts)} occurrences ({distinct} distinct sentences)",
            f"word vectors, CEAT draw of {len(draw_texts)}", "one occurrence per forward pass", lambda: embeddings.word_vectors(enc, draw_texts, draw_spans),
            lambda: naive_words(enc, draw_texts, draw_spans), rows, repeat)
    compare(f"sentence vectors, {len(short)} SEAT sentences", f"sentence vectors, {len(short)} SEAT sentences",
            "one sentence per forward pass",
            lambda: embeddings.sentence_vectors(enc, short), lambda: naive_sentences(enc, short), rows, repeat)
    return rows


if __name__ == "__main__":
    main()
