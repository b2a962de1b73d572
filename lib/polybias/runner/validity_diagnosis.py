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

Both are a sweep kind of the one runner (``kind: validity-diagnosis``):
``polybias sweep configs/sweeps/validity-diagnosis.yaml`` runs one :class:`ModelRun` per encoder
and per probed model (plan order, ``--only encoder`` or ``--only layers``, ``--shard``,
resume, locks, local or cluster workers: the runner's), each writing its record under the
config's ``records_dir``; then :func:`finish` writes ``encoder.csv`` and ``layers.csv`` beside
the validity sweep's summary (columns of :data:`polybias.runner.validity_sweep.COLUMNS`,
``layers.csv`` with ``layer`` and ``training``), each part once all its records are there.
The sizes, permutations and CEAT corpus come from the validity sweep's config, which the
diagnosis config names (``validity``).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from polybias import paths
from polybias.engines import embeddings
from polybias.files import params_hash, write_text_atomic
from polybias.planted.static import BagOfWords, ContextualBag, corpus_association_embedding
from polybias.planted.synthetic import planted_corpus, planted_groups
from polybias.runner import validity_sweep
from polybias.runner.record_run import RecordRun
from polybias.runner.sweep import SweepError, earlier_spelling
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


SCORING_VERSION = "validity-diagnosis-1"
"""Bump when a change here changes the scored rows: it is part of every job hash."""

PARTS = {"encoder": ENCODER_FILE, "layers": LAYERS_FILE}
"""The diagnosis' two parts and the summary file each writes."""

_KEYS = {"kind", "validity", "records_dir", "summary_dir"}


class ValidityDiagnosisError(ValueError):
    """A malformed diagnosis config, or records missing for its summary."""


def load_config(path: str | Path) -> dict[str, Any]:
    """Read and check a diagnosis sweep YAML (``configs/sweeps/validity-diagnosis.yaml``):
    ``kind: validity-diagnosis``, ``validity`` (the validity sweep config whose sizes,
    permutations and CEAT corpus size it uses; relative to the project root),
    ``records_dir`` and ``summary_dir``. Returns it with that config read as ``scoring``."""
    path = Path(path)
    raw = paths.read_yaml(path, error=ValidityDiagnosisError, what="validity diagnosis sweep")
    if not isinstance(raw, dict) or set(raw) != _KEYS:
        got = sorted(raw) if isinstance(raw, dict) else raw
        raise ValidityDiagnosisError(f"{path}: needs exactly the keys {sorted(_KEYS)}, got {got}")
    if raw["kind"] != "validity-diagnosis":
        raise ValidityDiagnosisError(f"{path}: kind must be 'validity-diagnosis', got {raw['kind']!r}")
    scoring = validity_sweep.load_config(paths.project_root() / raw["validity"])
    return {**raw, "scoring": scoring}


def plan(grid: dict[str, Any] | None = None, grids: list[dict] | None = None,
         languages=("en", "bn", "hi")) -> list[dict[str, Any]]:
    """The diagnosis' jobs in the order their rows are written: the known-answer encoders
    language by language (every p of the grid seed by seed, then the balanced ones), then
    the probed planted MLMs grid by grid (:data:`ENCODER`, :data:`LAYERS`).

    >>> jobs = plan({"ps": [0.1], "models_per_strength": 1, "null_models": 1}, [], ["en"])
    >>> [(j["part"], j["p"], j["seed"]) for j in jobs]
    [('encoder', 0.1, 0), ('encoder', 0.5, 0)]
    """
    grid = {**ENCODER, **(grid or {})}
    jobs = []
    for lang in languages:
        pairs = [(p, s) for p in grid["ps"] for s in range(grid["models_per_strength"])]
        pairs += [(0.5, s) for s in range(grid["null_models"])]
        jobs += [{"part": "encoder", "language": lang, "p": float(p), "seed": s} for p, s in pairs]
    for i, layers in enumerate(LAYERS if grids is None else grids):
        jobs += [{"part": "layers", "grid": i, "language": layers["language"], "p": float(p), "seed": s}
                 for p, s in layers["models"]]
    return jobs


def record_name(job: dict[str, Any]) -> str:
    """A job's record name without ``.json``.

    >>> record_name({"part": "layers", "grid": 1, "language": "en", "p": 0.9, "seed": 4})
    'layers/1/en-p0.9-s4'
    """
    where = job["language"] if job["part"] == "encoder" else f"{job['grid']}/{job['language']}"
    return f"{job['part']}/{where}-p{job['p']:g}-s{job['seed']}"


def _scoring(config: dict[str, Any]) -> dict[str, Any]:
    keys = ("n_permutations", "sizes", "defaults", "mlm")
    return {k: config["scoring"][k] for k in keys}


def job_hash(job: dict[str, Any], config: dict[str, Any]) -> str:
    """Hash of everything a job's record depends on: the job, its grid, the validity
    sweep's scoring settings and :data:`SCORING_VERSION`."""
    grid = ENCODER if job["part"] == "encoder" else LAYERS[job["grid"]]
    return params_hash({"job": job, "grid": grid, "scoring": _scoring(config), "version": SCORING_VERSION})


def score(job: dict[str, Any], config: dict[str, Any]) -> list[dict[str, Any]]:
    """A job's rows: :func:`encoder_rows` of one encoder, or :func:`layer_rows` of one
    probed model with its grid's ``training``."""
    scoring = config["scoring"]
    if job["part"] == "encoder":
        return encoder_rows(job["language"], job["p"], job["seed"], scoring, ENCODER["dim"],
                            ENCODER["gain"], ENCODER["context_weight"])
    grid = LAYERS[job["grid"]]
    return [{**r, "training": grid["training"]} for r in layer_rows(
        job["p"], scoring, job["language"], job["seed"], grid["n_sentences"], **grid["options"])]


@dataclass(frozen=True, eq=False)
class ModelRun(RecordRun):
    """One encoder or one probed model as a run of the sweep runner (``kind:
    validity-diagnosis``, :class:`polybias.runner.record_run.RecordRun`)."""

    def relative(self) -> str:
        return record_name(self.job) + ".json"

    def score(self) -> list[dict[str, Any]]:
        return score(self.job, self.config)

    def header(self) -> dict[str, Any]:
        return {"scoring_version": SCORING_VERSION}


def model_runs(config: dict[str, Any], records: Path | None = None) -> list[ModelRun]:
    """The runs of a diagnosis sweep in :func:`plan` order (records: default the config's
    ``records_dir`` under the output root)."""
    records = Path(records) if records else paths.output_path(config["records_dir"])
    return [ModelRun(record_name(job), job, config, str(records), job_hash(job, config)) for job in plan()]


def sweep_runs(config: str | Path, options: dict[str, Any]) -> list[ModelRun]:
    """The runs of the sweep YAML ``config`` for the sweep runner (:data:`polybias.runner.sweep.KINDS`)."""
    try:
        return model_runs(load_config(config))
    except (ValidityDiagnosisError, validity_sweep.ValiditySweepError) as exc:
        raise SweepError(str(exc)) from None


def collect(config: dict[str, Any], part: str, records: Path | None = None) -> pd.DataFrame | None:
    """The rows of one part (``encoder`` or ``layers``) in plan order, or None when one of
    its records is missing or stale, or it plans no job."""
    rows = []
    mine = [run for run in model_runs(config, records) if run.job["part"] == part]
    for run in mine:
        record = run.done_record()
        if record is None:
            return None
        rows.extend(record["rows"])
    if not mine:
        return None
    columns = validity_sweep.COLUMNS + (["layer", "training"] if part == "layers" else [])
    return pd.DataFrame(rows)[columns]


def finish(config: str | Path, options: dict[str, Any]) -> str:
    """After the runs: write each part whose records are all there (``encoder.csv``,
    ``layers.csv``, :func:`write_frame`) into the config's ``summary_dir``; returns the
    lines that say so. Raises :class:`ValidityDiagnosisError` (a ``ValueError``) when no
    part is complete."""
    cfg = load_config(config)
    folder = paths.project_root() / cfg["summary_dir"]
    lines, missing = [], []
    for part, name in PARTS.items():
        frame = collect(cfg, part)
        if frame is None:
            missing.append(part)
            continue
        lines.append(f"diagnosis {part}: {len(frame)} rows: {write_frame(frame, folder / name)}")
    if not lines:
        raise ValidityDiagnosisError(f"diagnosis: records missing or stale in every part ({', '.join(missing)})")
    lines += [f"diagnosis {part}: records missing, {PARTS[part]} not written" for part in missing]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """``python -m polybias.runner.validity_diagnosis CONFIG [options]``: the earlier spelling
    of ``polybias sweep CONFIG --jobs 1`` (:func:`polybias.runner.sweep.earlier_spelling`)."""
    return earlier_spelling(argv, "polybias.runner.validity_diagnosis", "validity-diagnosis", "the diagnosis")


if __name__ == "__main__":
    sys.exit(main())
