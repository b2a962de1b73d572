"""Run notebooks over a grid of parameters with papermill (``polybias sweep CONFIG``).

A sweep YAML lists entries; each expands to one run per point of its grid::

    kernel: polybias                 # explicit Jupyter kernel for every run
    runs:
      - notebook: notebooks/01_weat.py      # jupytext py:percent source
        section: weat                       # results/<section>/<run key>/
        grid:                               # cartesian product
          model: [w2v-gnews]
          language: [en]
        parameters:                         # the same for every point
          n_permutations: 100000
        executed: paper/executed/01_weat_{model}.ipynb   # optional copy for nbval
        table_file: paper/tables/weat_{model}.md         # optional, passed to the notebook

Each run gets ``output_dir`` (its folder under ``results/``) as a parameter, writes
the executed notebook there and, only when it succeeded, a ``run.json`` marker with
its parameter hash (atomically). A run whose marker exists with the same hash is
skipped (an edit of the notebook's source counts as a change), so an interrupted
sweep resumes where it stopped. A failed run leaves
``failed.ipynb`` (showing the error) and no marker. Independent runs execute in
parallel processes.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import sys
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import paths
from .records import canonical_json, params_hash, sha256_file, write_text_atomic


class SweepError(ValueError):
    """A sweep configuration is malformed."""


@dataclass(frozen=True)
class Run:
    """One notebook execution of a sweep."""

    notebook: str
    section: str
    key: str
    parameters: dict[str, Any]
    executed: str | None
    kernel: str

    @property
    def folder(self) -> Path:
        return paths.results_dir() / self.section / self.key

    @property
    def params_hash(self) -> str:
        """Hash of the parameters and of the notebook's source: editing either reruns the run."""
        source = sha256_file(paths.project_root() / self.notebook)
        return params_hash({"notebook": self.notebook, "source": source, **self.parameters})


def _slug(value: Any) -> str:
    text = value if isinstance(value, str) else canonical_json(value)
    return "".join(c if c.isalnum() or c in "-." else "_" for c in text)[:60]


def load_sweep(config: str | Path) -> list[Run]:
    """Expand a sweep YAML into its runs (validated; nothing is executed)."""
    config = Path(config)
    raw = paths.read_yaml(config, SweepError, "sweep config")
    if not isinstance(raw, dict) or not isinstance(raw.get("runs"), list) or not raw["runs"]:
        raise SweepError(f"{config}: expected a mapping with a non-empty list 'runs:'")
    kernel = str(raw.get("kernel", "polybias"))
    runs: list[Run] = []
    for i, entry in enumerate(raw["runs"]):
        where = f"{config}: runs[{i}]"
        if not isinstance(entry, dict) or "notebook" not in entry:
            raise SweepError(f"{where} needs a 'notebook'")
        nb = str(entry["notebook"])
        if not (paths.project_root() / nb).is_file():
            raise SweepError(f"{where}: notebook {nb} not found")
        grid = entry.get("grid") or {}
        fixed = entry.get("parameters") or {}
        if not isinstance(grid, dict) or not all(isinstance(v, list) and v for v in grid.values()):
            raise SweepError(f"{where}: 'grid' must map parameter names to non-empty lists")
        if not isinstance(fixed, dict):
            raise SweepError(f"{where}: 'parameters' must be a mapping")
        clash = sorted(set(grid) & set(fixed))
        if clash:
            raise SweepError(f"{where}: {', '.join(clash)} both in grid and parameters")
        section = str(entry.get("section", Path(nb).stem))
        names = list(grid)
        for values in itertools.product(*(grid[n] for n in names)):
            point = dict(zip(names, values, strict=True))
            params = {**fixed, **point}
            if "table_file" in entry:
                params["table_file"] = _fill(entry["table_file"], point, where)
            key = "__".join([Path(nb).stem] + [f"{n}-{_slug(point[n])}" for n in names])
            executed = _fill(entry["executed"], point, where) if entry.get("executed") else None
            runs.append(Run(nb, section, key, params, executed, kernel))
    keys = [r.key for r in runs]
    dups = sorted({k for k in keys if keys.count(k) > 1})
    if dups:
        raise SweepError(f"{config}: runs collide on the same folder: {', '.join(dups)}")
    return runs


def _fill(template: str, point: dict[str, Any], where: str) -> str:
    try:
        return str(template).format(**point)
    except KeyError as exc:
        raise SweepError(f"{where}: template {template!r} uses {exc} which is not in the grid") from exc


def is_done(run: Run) -> bool:
    """True when the run finished before with the same parameters."""
    marker = run.folder / "run.json"
    if not marker.is_file():
        return False
    try:
        done = json.loads(marker.read_text(encoding="utf-8"))
    except json.JSONDecodeError:
        return False
    return done.get("params_hash") == run.params_hash and done.get("status") == "ok"


def _clean(nb: Any, source: str) -> Any:
    """Drop timings and this checkout's absolute path from an executed notebook.

    The executed copy is committed for nbval; it must diff cleanly between reruns and
    must not name the machine it ran on.
    """
    root = str(paths.project_root())
    meta = nb.metadata.get("papermill", {})
    for key in ("start_time", "end_time", "duration", "environment_variables"):
        meta.pop(key, None)
    meta["input_path"] = source
    meta["output_path"] = None
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"cell-{i:03d}"  # jupytext gives random ids: keep reruns diff-free
        for out in cell.get("outputs", []):
            if out.get("output_type") == "stream":
                out["text"] = out["text"].replace(root + "/", "").replace(root, ".")
        cell.metadata.pop("execution", None)
        pm = cell.metadata.get("papermill", {})
        for key in ("start_time", "end_time", "duration"):
            pm.pop(key, None)
    return nb


def execute(run: Run) -> dict[str, Any]:
    """Execute one run now (used by :func:`run_sweep`, also callable directly)."""
    import jupytext
    import nbformat
    import papermill as pm

    root = paths.project_root()
    run.folder.mkdir(parents=True, exist_ok=True)
    (run.folder / "run.json").unlink(missing_ok=True)
    params = {**run.parameters, "output_dir": os.path.relpath(run.folder, root)}
    src = jupytext.read(root / run.notebook)
    src.metadata["kernelspec"] = {"name": run.kernel, "display_name": run.kernel, "language": "python"}
    partial = run.folder / ".executing.ipynb"
    failed = run.folder / "failed.ipynb"
    failed.unlink(missing_ok=True)
    try:
        nb = pm.execute_notebook(
            src, str(partial), parameters=params, kernel_name=run.kernel, cwd=str(root),
            progress_bar=False, log_output=False, request_save_on_cell_execute=False,
        )
    except Exception as exc:  # papermill raises PapermillExecutionError with the cell's error
        if partial.exists():
            partial.replace(failed)
        return {"key": run.key, "status": "failed", "error": str(exc).strip()[-2000:],
                "notebook": os.path.relpath(failed, root)}
    text = nbformat.writes(_clean(nb, run.notebook))
    partial.unlink(missing_ok=True)
    write_text_atomic(run.folder / "executed.ipynb", text)
    if run.executed:
        write_text_atomic(root / run.executed, text)
    marker = {"key": run.key, "notebook": run.notebook, "parameters": params,
              "params_hash": run.params_hash, "status": "ok", "executed": run.executed}
    write_text_atomic(run.folder / "run.json", json.dumps(marker, indent=2, sort_keys=True) + "\n")
    return {"key": run.key, "status": "ok"}


def run_sweep(config: str | Path, jobs: int | None = None, force: bool = False,
              only: str | None = None) -> list[dict[str, Any]]:
    """Execute every run of ``config`` not yet done; return one status dict per run."""
    from tqdm.auto import tqdm

    runs = [r for r in load_sweep(config) if only is None or only in r.key]
    todo = [r for r in runs if force or not is_done(r)]
    outcomes = [{"key": r.key, "status": "skipped"} for r in runs if r not in todo]
    jobs = max(1, min(jobs or os.cpu_count() or 1, len(todo) or 1))
    bar = tqdm(total=len(todo), desc="sweep", unit="run", disable=not todo)
    if jobs == 1:
        for r in todo:
            outcomes.append(execute(r))
            bar.update()
    else:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            futures = {pool.submit(execute, r): r for r in todo}
            for fut in as_completed(futures):
                try:
                    outcomes.append(fut.result())
                except Exception as exc:  # a worker died
                    outcomes.append({"key": futures[fut].key, "status": "failed", "error": str(exc)})
                bar.update()
    bar.close()
    return outcomes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="polybias sweep", description=__doc__.split("\n")[0])
    parser.add_argument("config", help="sweep YAML (e.g. configs/sweeps/default.yaml)")
    parser.add_argument("-j", "--jobs", type=int, default=None, help="parallel runs (default: cores)")
    parser.add_argument("--force", action="store_true", help="rerun runs that are already done")
    parser.add_argument("--only", default=None, help="run only keys containing this text")
    parser.add_argument("--list", action="store_true", help="list the runs and exit")
    args = parser.parse_args(argv)
    if args.list:
        for r in load_sweep(args.config):
            print(f"{'done' if is_done(r) else 'todo'}  {r.key}")
        return 0
    outcomes = run_sweep(args.config, args.jobs, args.force, args.only)
    counts = {s: sum(o["status"] == s for o in outcomes) for s in ("ok", "skipped", "failed")}
    print(f"sweep: {counts['ok']} ran, {counts['skipped']} skipped, {counts['failed']} failed")
    for o in outcomes:
        if o["status"] == "failed":
            print(f"  FAILED {o['key']}: see {o.get('notebook', '?')}\n    {o['error'][-400:]}")
    return 1 if counts["failed"] else 0


if __name__ == "__main__":
    sys.exit(main())
