"""The EuroGEST measure on planted causal LMs in three of EuroGEST's languages: a sweep kind
of the one runner (``kind: validity-eurogest``).

Each model of the grid (:data:`GRID`) is a causal LM trained on one language's own EuroGEST
training sentences with a planted association of strength ``p``
(:mod:`polybias.planted.eurogest`; 0.5: none), scored with the EuroGEST measure on the
held-out pairs (:func:`polybias.studies.validity_designs.planted_eurogest_scores`). Models
are trained once and cached under their training spec (the pinned ones read from
``data/planted``).

``polybias sweep configs/sweeps/validity-eurogest.yaml`` runs one :class:`ModelRun` per model
(plan order, ``--only``, ``--shard``, ``--limit``, resume, locks, local or cluster workers:
the runner's), each writing its record ``<records_dir>/<language>/eurogest-p<p>-s<seed>.json``;
then :func:`finish` writes ``eurogest.csv`` into the config's ``summary_dir`` (``data/validity``,
committed), one row per model in plan order, which notebook 16 renders with
:func:`polybias.studies.validity.interval_verdicts`: a committed file, so its checked
outputs do not depend on the CPU the models were trained on.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from polybias import paths
from polybias.files import params_hash, write_text_atomic
from polybias.planted import eurogest as planted_eurogest
from polybias.runner.record_run import RecordRun
from polybias.runner.sweep import SweepError, earlier_spelling
from polybias.stats import N_BOOTSTRAP
from polybias.studies.validity_designs import EUROGEST_DESIGN, planted_eurogest_scores

GRID = {"languages": ["cs", "el", "lv"], "ps": [0.5, 0.9], "models_per_strength": 5,
        "null_models": 10, "n_bootstrap": N_BOOTSTRAP}
"""``models_per_strength`` models (seeds 0, 1, ...) at every ``p`` of ``ps`` and, at
p = 0.5, as many more as make ``null_models`` balanced models per language; ``n_bootstrap``
resamples for each model's interval. Zero false positives decide "calibrated" from 23
balanced models on (:func:`polybias.studies.validity_statistics.calibration_sample_size`): 10 per
language leave a language's own verdict undecided unless it finds too many, and the 30 of
the three languages pooled decide it. A sweep config's ``grid`` states only what differs."""

EUROGEST_FILE = "eurogest.csv"
FAMILY = EUROGEST_DESIGN
SCORING_VERSION = "validity-eurogest-1"
"""Bump when a change here changes the scored rows: it is part of every job hash."""

COLUMNS = ["language", "family", "measure", "metric", "p", "seed", "value", "null", "low", "high",
           "level", "n", "rated", "feminine_rate", "masculine_rate",
           *[f"rate_{s}" for s in range(1, 17)], "model"]
"""The columns of ``eurogest.csv``, in order."""

_KEYS = {"kind", "records_dir", "summary_dir"}
_OPTIONAL_KEYS = {"grid"}


class ValidityEuroGestError(ValueError):
    """A malformed EuroGEST validity config, or records missing for its summary."""


def load_config(path: str | Path) -> dict[str, Any]:
    """Read and check a EuroGEST validity sweep YAML (``configs/sweeps/validity-eurogest.yaml``):
    ``kind: validity-eurogest``, ``records_dir``, ``summary_dir`` and optionally ``grid``
    (keys of :data:`GRID` whose values differ from it). Returns the config with the full grid."""
    path = Path(path)
    raw = paths.read_yaml(path, error=ValidityEuroGestError, what="EuroGEST validity sweep")
    if not isinstance(raw, dict) or set(raw) - _KEYS - _OPTIONAL_KEYS or _KEYS - set(raw):
        got = sorted(raw) if isinstance(raw, dict) else raw
        raise ValidityEuroGestError(f"{path}: needs the keys {sorted(_KEYS)} (optional: "
                                    f"{sorted(_OPTIONAL_KEYS)}), got {got}")
    if raw["kind"] != "validity-eurogest":
        raise ValidityEuroGestError(f"{path}: kind must be 'validity-eurogest', got {raw['kind']!r}")
    grid = raw.get("grid") or {}
    unknown = sorted(set(grid) - set(GRID))
    if unknown:
        raise ValidityEuroGestError(f"{path}: grid has unknown keys {unknown}; known: {sorted(GRID)}")
    full = {**GRID, **grid}
    bad = sorted(set(full["languages"]) - set(planted_eurogest.LANGUAGES))
    if bad or 0.5 not in full["ps"]:
        raise ValidityEuroGestError(f"{path}: grid languages must be among {planted_eurogest.LANGUAGES} "
                                    f"(got {bad}) and ps must include 0.5")
    return {**raw, "grid": full}


def plan(grid: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """The models of ``grid`` (default :data:`GRID`), language by language: seed by seed
    over the strengths, then the extra balanced models.

    >>> [(j["language"], j["p"], j["seed"]) for j in plan({"languages": ["el"], "ps": [0.5, 0.9],
    ...     "models_per_strength": 1, "null_models": 2, "n_bootstrap": 10})]
    [('el', 0.5, 0), ('el', 0.9, 0), ('el', 0.5, 1)]
    """
    grid = {**GRID, **(grid or {})}
    per, null = int(grid["models_per_strength"]), int(grid["null_models"])
    jobs = []
    for lang in grid["languages"]:
        order = [(float(p), s) for s in range(per) for p in grid["ps"]]
        order += [(0.5, s) for s in range(per, null)]
        jobs += [{"language": lang, "p": p, "seed": s} for p, s in order]
    return jobs


def eurogest_rows(job: dict[str, Any], n_bootstrap: int = N_BOOTSTRAP) -> dict[str, Any]:
    """One model's row: :func:`polybias.studies.validity_designs.planted_eurogest_scores` with
    the job's ``language``, ``p`` and ``seed``, and ``family``."""
    row = planted_eurogest_scores(job["p"], job["seed"], job["language"], n_bootstrap=n_bootstrap)
    return {"language": job["language"], "family": FAMILY, **row}


def job_hash(job: dict[str, Any], grid: dict[str, Any]) -> str:
    """Hash of everything a job's record depends on: the model's training spec, the
    resamples and :data:`SCORING_VERSION`."""
    spec = planted_eurogest.planted_eurogest_spec(job["language"], job["p"], job["seed"])
    return params_hash({"job": job, "training": spec, "n_bootstrap": grid["n_bootstrap"],
                        "version": SCORING_VERSION})


def record_name(job: dict[str, Any]) -> str:
    """A model's record name without ``.json``: ``<language>/eurogest-p<p>-s<seed>``.

    >>> record_name({"language": "el", "p": 0.9, "seed": 3})
    'el/eurogest-p0.9-s3'
    """
    return f"{job['language']}/eurogest-p{job['p']:g}-s{job['seed']}"


@dataclass(frozen=True, eq=False)
class ModelRun(RecordRun):
    """One planted EuroGEST model as a run of the sweep runner (``kind: validity-eurogest``,
    :class:`polybias.runner.record_run.RecordRun`): train (or load) it, score it, write
    its record ``<language>/eurogest-p<p>-s<seed>.json``."""

    def relative(self) -> str:
        return record_name(self.job) + ".json"

    def score(self) -> list[dict[str, Any]]:
        return [eurogest_rows(self.job, self.config["grid"]["n_bootstrap"])]

    def header(self) -> dict[str, Any]:
        return {"scoring_version": SCORING_VERSION}


def model_runs(config: dict[str, Any], records: Path | None = None) -> list[ModelRun]:
    """The runs of a EuroGEST validity sweep, in :func:`plan` order. ``records``: the
    records folder (default: the config's ``records_dir`` under the output root)."""
    records = Path(records) if records else paths.output_path(config["records_dir"])
    return [ModelRun(record_name(job), job, config, str(records), job_hash(job, config["grid"]))
            for job in plan(config["grid"])]


def sweep_runs(config: str | Path, options: dict[str, Any]) -> list[ModelRun]:
    """The runs of the sweep YAML ``config`` for the sweep runner (:data:`polybias.runner.sweep.KINDS`).
    A malformed config is a :class:`polybias.runner.sweep.SweepError`."""
    try:
        return model_runs(load_config(config))
    except ValidityEuroGestError as exc:
        raise SweepError(str(exc)) from None


def collect(config: dict[str, Any], records: Path | None = None) -> pd.DataFrame:
    """Every planned model's row, in plan order (columns :data:`COLUMNS`); a record missing,
    stale or not complete raises :class:`ValidityEuroGestError` naming how many and the first."""
    rows, missing = [], []
    for run in model_runs(config, records):
        record = run.done_record()
        if record is None:
            missing.append(run.relative())
            continue
        rows.extend(record["rows"])
    if missing:
        raise ValidityEuroGestError(f"{len(missing)} of {len(missing) + len(rows)} EuroGEST validity "
                                    f"records are missing or stale (first: {missing[0]}): the summary "
                                    "is written once every planned model is scored")
    return pd.DataFrame(rows)[COLUMNS]


def finish(config: str | Path, options: dict[str, Any]) -> str:
    """After the runs: write ``eurogest.csv`` from every record into the config's
    ``summary_dir`` (:func:`write_frame`); returns the line that says so. Raises
    :class:`ValidityEuroGestError` (a ``ValueError``) when records are missing."""
    cfg = load_config(config)
    frame = collect(cfg)
    out = write_frame(frame, paths.project_root() / cfg["summary_dir"] / EUROGEST_FILE)
    return f"EuroGEST validity summary of {len(frame)} models: {out}"


def write_frame(frame: pd.DataFrame, path: Path) -> Path:
    """Write ``frame`` as CSV, every float rounded to 6 significant digits, atomically."""
    out = frame.copy()
    for col in out.columns:
        if pd.api.types.is_float_dtype(out[col]):
            out[col] = out[col].map(lambda v: float(f"{v:.6g}") if v == v else v)
    return write_text_atomic(path, out.to_csv(index=False, lineterminator="\n"))


def read_frame(summary_dir: str | Path = "data/validity") -> pd.DataFrame:
    """Read ``eurogest.csv`` from the committed summary folder (relative to the project
    root unless absolute)."""
    folder = Path(summary_dir)
    if not folder.is_absolute():
        folder = paths.project_root() / folder
    return pd.read_csv(folder / EUROGEST_FILE)


def main(argv: list[str] | None = None) -> int:
    """``python -m polybias.runner.validity_eurogest CONFIG [options]``: the earlier spelling
    of ``polybias sweep CONFIG --jobs 1`` (:func:`polybias.runner.sweep.earlier_spelling`)."""
    return earlier_spelling(argv, "polybias.runner.validity_eurogest", "validity-eurogest", "the EuroGEST validity job")


if __name__ == "__main__":
    sys.exit(main())
