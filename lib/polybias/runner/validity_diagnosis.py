"""Why SEAT and CEAT do not follow the planted strength on the planted masked LM.

Two checks, each written to the committed validity summary (``data/validity``) that
notebook 10 renders, so their checked outputs do not depend on the CPU:

* **A known-answer encoder** (:func:`encoder_rows`): the association of a planted corpus
  of strength p placed analytically in the representations
  (:func:`polybias.planted.static.corpus_association_embedding`: a target word's vector
  leans towards the career or family direction by its corpus co-occurrence ratio). SEAT
  reads it through :class:`polybias.planted.static.BagOfWords` on the sweep's bleached
  sentences, CEAT through :class:`polybias.planted.static.ContextualBag` on occurrences
  in a fresh corpus. If SEAT and CEAT resolve p here, they work when the association is
  in the vectors they read. Its balanced (p = 0.5) encoders, each with its own random
  word vectors, are also the known null on which CEAT's two p-values are compared.
* **A per-layer probe of the planted masked LM** (:func:`layer_rows`): SEAT and CEAT on
  the hidden states of every layer (0 = the input embeddings) of the pinned planted MLMs
  (the same models at every p, so the result is CPU-independent), beside Kurita's
  log-probability effect, which reads the model's output distribution where the
  association was planted.

``python -m polybias.runner.validity_diagnosis configs/sweeps/validity.yaml`` writes
``encoder.csv`` and ``layers.csv`` beside the sweep's summary (columns of
:data:`polybias.runner.validity_sweep.COLUMNS`, ``layers.csv`` with ``layer``).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import pandas as pd

from polybias import paths
from polybias.engines import embeddings
from polybias.files import write_text_atomic
from polybias.planted.static import BagOfWords, ContextualBag, corpus_association_embedding
from polybias.planted.synthetic import planted_corpus, planted_groups
from polybias.runner import validity_sweep
from polybias.studies.validity_designs import N_SENTENCES, planted_lm, planted_template_scores

ENCODER = {"ps": [0.1, 0.3, 0.4, 0.45, 0.55, 0.6, 0.7, 0.9], "models_per_strength": 5,
           "null_models": 60, "dim": 64, "gain": 0.5, "context_weight": 0.5}
"""Grid of the known-answer encoder: ``models_per_strength`` encoders (seeds) at every p,
``null_models`` at p = 0.5; vector size, gain γ and CEAT's context weight β."""

LAYERS = [
    {"training": "10 epochs, batch 16", "language": "en", "n_sentences": 3000, "options": {},
     "models": [(0.1, 0), (0.3, 0), (0.5, 0), (0.7, 0), (0.9, 0),
                (0.1, 1), (0.9, 1), (0.1, 2), (0.9, 2), (0.1, 3), (0.9, 3)]},
    {"training": "30 epochs, batch 64", "language": "en", "n_sentences": 3000,
     "options": {"epochs": 30, "batch_size": 64},
     "models": [(0.1, 0), (0.1, 1), (0.9, 0), (0.9, 4)]},
]
"""The pinned planted MLMs probed per layer: (p, seed) pairs of two trainings. The first
(:data:`polybias.studies.validity_designs.LM_TRAINING`) learns the association at p = 0.1 and 0.9
only, so it has several seeds there. The second is the sweep's training
(``configs/sweeps/validity.yaml``), on models whose last-layer SEAT the sweep found on the
planted side (p = 0.1 seed 0, p = 0.9 seed 0) and on the other side (p = 0.1 seed 1,
p = 0.9 seed 4) while their Kurita score was on the planted side."""

ENCODER_FILE = "encoder.csv"
LAYERS_FILE = "layers.csv"


def encoder_rows(language: str, p: float, seed: int, config: dict[str, Any],
                 dim: int = 64, gain: float = 1.0, context_weight: float = 0.5) -> list[dict[str, Any]]:
    """SEAT and CEAT rows (:func:`polybias.runner.validity_sweep.embedding_rows`) of the
    known-answer encoder learnt from ``planted_corpus(config["mlm"]["n_sentences"], p, seed)``
    (family ``encoder``, measure ``embedding-encoder``)."""
    corpus = planted_corpus(config["mlm"]["n_sentences"], p, seed=seed, language=language)
    table = corpus_association_embedding(corpus, planted_groups(language), seed=seed, dim=dim, gain=gain)
    job = {"language": language, "family": "encoder", "p": float(p), "seed": int(seed)}
    return validity_sweep.embedding_rows(job, config, BagOfWords(table).encode,
                             ContextualBag(table, context_weight=context_weight),
                             measure="embedding-encoder")


def encoder_frame(config: dict[str, Any], languages=("en", "bn", "hi"), grid: dict | None = None,
                  log=print) -> pd.DataFrame:
    """:func:`encoder_rows` over ``grid`` (default :data:`ENCODER`) in every language."""
    grid = {**ENCODER, **(grid or {})}
    rows = []
    for lang in languages:
        jobs = [(p, s) for p in grid["ps"] for s in range(grid["models_per_strength"])]
        jobs += [(0.5, s) for s in range(grid["null_models"])]
        start = time.perf_counter()
        for p, seed in jobs:
            rows += encoder_rows(lang, p, seed, config, grid["dim"], grid["gain"], grid["context_weight"])
        log(f"encoder {lang}: {len(jobs)} models, {time.perf_counter() - start:.0f}s", flush=True)
    return pd.DataFrame(rows)


def layer_rows(p: float, config: dict[str, Any], language: str = "en", seed: int = 0,
               n_sentences: int = N_SENTENCES, **training: Any) -> list[dict[str, Any]]:
    """SEAT and CEAT at every layer of one planted MLM (``planted_lm("mlm", p, seed)``
    with :data:`polybias.studies.validity_designs.LM_TRAINING` updated by ``training``, pinned for
    the :data:`LAYERS` grids), and its Kurita effect size (the output distribution), with a ``layer``
    column (0 = input embeddings, L = the last layer; Kurita: ``layer`` = -1)."""
    lm = planted_lm("mlm", p, seed, language, n_sentences, **training)
    encoder = embeddings.wrap_encoder(lm.model, lm.tokenizer, name=lm.name,
                                      revision=lm.revision, pooling="mean")
    job = {"language": language, "family": "mlm", "p": float(p), "seed": int(seed)}
    rows = []
    for layer in range(int(lm.model.config.num_hidden_layers) + 1):
        found = validity_sweep.embedding_rows(job, config, lambda texts, layer=layer: embeddings.sentence_vectors(
            encoder, texts, pooling="mean", layer=layer), encoder, layer=layer)
        rows += [{**r, "layer": layer} for r in found]
    for r in planted_template_scores(p, seed, language, n_sentences,
                                     n_permutations=config["n_permutations"], **training):
        if r["metric"] == "kurita-effect-size":
            rows.append({**validity_sweep.measurement_row(job, "template-mlm", r["metric"], "kurita_templates", 3,
                                   config["defaults"], r["value"], r["null"], r["pvalue"]), "layer": -1})
    return rows


def layer_frame(config: dict[str, Any], grids: list[dict] | None = None) -> pd.DataFrame:
    """:func:`layer_rows` over ``grids`` (default :data:`LAYERS`), with a ``training`` column."""
    rows = []
    for grid in grids or LAYERS:
        for p, seed in grid["models"]:
            rows += [{**r, "training": grid["training"]} for r in layer_rows(
                p, config, grid["language"], seed, grid["n_sentences"], **grid["options"])]
    return pd.DataFrame(rows)


def write_frame(frame: pd.DataFrame, path: Path) -> Path:
    """Write ``frame`` as CSV, values and p-values rounded to 6 significant digits."""
    out = frame.copy()
    for col in ("value", "pvalue"):
        out[col] = out[col].map(lambda v: float(f"{v:.6g}") if v == v else v)
    return write_text_atomic(path, out.to_csv(index=False, lineterminator="\n"))


def read_frame(summary_dir: str | Path, name: str) -> pd.DataFrame:
    """Read ``encoder.csv`` or ``layers.csv`` from the committed summary folder (relative
    to the project root unless absolute)."""
    folder = Path(summary_dir)
    if not folder.is_absolute():
        folder = paths.project_root() / folder
    return pd.read_csv(folder / name)


def main(argv: list[str] | None = None) -> int:
    """``python -m polybias.runner.validity_diagnosis CONFIG [--only encoder|layers]``."""
    parser = argparse.ArgumentParser(prog="python -m polybias.runner.validity_diagnosis",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("config")
    parser.add_argument("--only", choices=["encoder", "layers"], default=None)
    args = parser.parse_args(argv)
    config = validity_sweep.load_config(args.config)
    folder = paths.project_root() / config["summary_dir"]
    if args.only in (None, "encoder"):
        print(write_frame(encoder_frame(config), folder / ENCODER_FILE))
    if args.only in (None, "layers"):
        print(write_frame(layer_frame(config), folder / LAYERS_FILE))
    return 0


if __name__ == "__main__":
    sys.exit(main())
