"""The EuroGEST measure on planted causal LMs in three of EuroGEST's languages.

Each model of :data:`GRID` is a causal LM trained on one language's own EuroGEST training
sentences with a planted association of strength ``p``
(:mod:`polybias.planted.eurogest`; 0.5: none), scored with the EuroGEST measure on the
held-out pairs (:func:`polybias.studies.validity_designs.planted_eurogest_scores`). Models are
trained once and cached under their training spec (the pinned ones read from
``data/planted``), so a rerun only scores them again.

``python -m polybias.runner.validity_eurogest configs/sweeps/validity.yaml`` writes
``eurogest.csv`` beside the validity sweep's summary (``data/validity``), one row per model,
which notebook 16 renders with :func:`polybias.studies.validity.interval_verdicts`: as the
summary of the validity sweep, a committed file, so its checked outputs do not depend on
the CPU the models were trained on.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

import pandas as pd
import torch

from polybias import paths
from polybias.files import write_text_atomic
from polybias.runner import validity_sweep
from polybias.stats import N_BOOTSTRAP
from polybias.studies.validity_designs import planted_eurogest_scores

GRID = {"languages": ["cs", "el", "lv"], "ps": [0.5, 0.9], "models_per_strength": 5,
        "null_models": 10, "n_bootstrap": N_BOOTSTRAP}
"""``models_per_strength`` models (seeds 0, 1, ...) at every ``p`` of ``ps`` and, at
p = 0.5, as many more as make ``null_models`` balanced models per language; ``n_bootstrap``
resamples for each model's interval. Zero false positives decide "calibrated" from 23
balanced models on (:func:`polybias.studies.validity.calibration_sample_size`): 10 per
language leave a language's own verdict undecided unless it finds too many, and the 30 of
the three languages pooled decide it."""

EUROGEST_FILE = "eurogest.csv"
FAMILY = "eurogest-causal"


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
    """One model's row: :func:`polybias.studies.validity_designs.planted_eurogest_scores` with the
    job's ``language``, ``p`` and ``seed``, and ``family``."""
    row = planted_eurogest_scores(job["p"], job["seed"], job["language"], n_bootstrap=n_bootstrap)
    return {"language": job["language"], "family": FAMILY, **row}


def eurogest_frame(grid: dict[str, Any] | None = None, log=print) -> pd.DataFrame:
    """:func:`eurogest_rows` over every model of ``grid`` (:func:`plan`)."""
    grid = {**GRID, **(grid or {})}
    torch.set_num_threads(1)
    rows = []
    jobs = plan(grid)
    for i, job in enumerate(jobs):
        start = time.perf_counter()
        rows.append(eurogest_rows(job, grid["n_bootstrap"]))
        log(f"[{i + 1}/{len(jobs)}] {job['language']} p={job['p']:g} seed={job['seed']}: "
            f"g_s {rows[-1]['value']:.3f} [{rows[-1]['low']:.3f}, {rows[-1]['high']:.3f}] "
            f"{time.perf_counter() - start:.0f}s", flush=True)
    return pd.DataFrame(rows)


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
    """``python -m polybias.runner.validity_eurogest CONFIG``: write ``eurogest.csv`` into
    the config's ``summary_dir``."""
    parser = argparse.ArgumentParser(prog="python -m polybias.runner.validity_eurogest",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("config")
    args = parser.parse_args(argv)
    config = validity_sweep.load_config(args.config)
    print(write_frame(eurogest_frame(), paths.project_root() / config["summary_dir"] / EUROGEST_FILE))
    return 0


if __name__ == "__main__":
    sys.exit(main())
