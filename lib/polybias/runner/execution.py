"""Executing one notebook run: papermill in a fresh kernel, the executed notebook cleaned,
and the ``run.json`` marker that says the run is done.

What a notebook run is (its parameters, key and hash) is :class:`polybias.runner.runs.Run`,
whose ``execute`` takes the run's lock and calls :func:`execute_locked`; the sweep
(:mod:`polybias.runner.sweep`) and a single run (:mod:`polybias.runner.single_run`) use them.
A run's folder is ``results/<section>/<key>/``: the marker ``run.json`` (the parameter hash
and the sha256 of every file the run left), ``executed.ipynb``, while it runs
``.executing.ipynb``, after an error ``failed.ipynb``, and the lock file.
"""

from __future__ import annotations

import functools
import json
import os
import re
import resource
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

import pandas as pd

from polybias import paths
from polybias.files import sha256_file, temp_dir, write_text_atomic
from polybias.runner.locks import LOCK_FILE, RunLock

MARKER = "run.json"
EXECUTED = "executed.ipynb"
FAILED = "failed.ipynb"
PARTIAL = ".executing.ipynb"
#: The file a run notes the parts its notebook skipped in (:func:`polybias.paths.note_skipped_part`).
SKIPPED_PARTS = "skipped-parts.jsonl"
DONE = "already done"
"""``reason`` of a run skipped because it finished before."""


def output_digests(folder: Path) -> dict[str, str]:
    """sha256 of every file under ``folder`` but the marker and the lock, by path relative to it."""
    return {p.relative_to(folder).as_posix(): sha256_file(p)
            for p in sorted(folder.rglob("*"))
            if p.is_file() and p.relative_to(folder).as_posix() not in (MARKER, LOCK_FILE)}


def under_lock(key: str, lock: RunLock, done, work, force: bool = False) -> dict[str, Any]:
    """The runner's one lock-done-skip protocol, for every kind of run (a notebook run of a
    sweep, a model run of a validity sweep, ``polybias run``): take ``lock``, or return
    ``skipped`` (running elsewhere) when another process holds it; under it, return ``skipped`` (:data:`DONE`)
    when ``done()`` says the run finished, unless ``force`` (it may just have finished
    elsewhere; Dask may re-execute a task whose worker died after the run had finished);
    else return what ``work()`` returns.

    >>> import tempfile
    >>> lock = RunLock(Path(tempfile.mkdtemp()))
    >>> under_lock("k", lock, done=lambda: True, work=lambda: {"status": "ok"})
    {'key': 'k', 'status': 'skipped', 'reason': 'already done'}
    >>> under_lock("k", lock, done=lambda: True, work=lambda: {"status": "ok"}, force=True)
    {'status': 'ok'}
    """
    if not lock.acquire():
        return {"key": key, "status": "skipped",
                "reason": f"running elsewhere (locked by {lock.holder() or 'another process'})"}
    with lock:
        if not force and done():
            return {"key": key, "status": "skipped", "reason": DONE}
        return work()


def is_done(run: Any, root: Path, folder: Path) -> bool:
    """True when the run of ``folder`` finished before with the same parameters (its marker
    holds ``run.hash_in(root)``) and its files, and the copy beside the paper, are intact."""
    marker = folder / MARKER
    if not marker.is_file():
        return False
    try:
        done = json.loads(marker.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError):
        return False
    if not isinstance(done, dict) or done.get("status") != "ok" \
            or done.get("params_hash") != run.hash_in(root):
        return False
    for name, digest in (done.get("outputs") or {}).items():
        path = folder / name
        if not path.is_file() or sha256_file(path) != digest:
            return False
    if run.executed and done.get("executed_sha256"):  # the copy beside the paper, written last
        copy = root / run.executed
        if not copy.is_file() or sha256_file(copy) != done["executed_sha256"]:
            return False
    return True


#: Where ``keep_records`` runs keep their records to be committed (``<section>/<key>/``).
KEPT_ROOT = "paper/records"


def kept_done(run: Any, root: Path) -> bool:
    """True when ``run``'s kept records (:func:`keep_records`) were computed with its
    parameters (:meth:`~polybias.runner.runs.Run.kept_hash`) and are intact."""
    folder = run.kept_folder(root)
    try:
        kept = json.loads((folder / MARKER).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    if not isinstance(kept, dict) or kept.get("status") != "kept" \
            or kept.get("parameters_hash") != run.kept_hash() or not kept.get("files"):
        return False
    return all((folder / name).is_file() and sha256_file(folder / name) == digest
               for name, digest in kept["files"].items())


def keep_records(run: Any, root: Path, folder: Path, seconds: float,
                 cpu_seconds: float | None = None) -> Path:
    """Copy the run records of a finished ``run`` (every ``*.json`` of its ``folder`` but
    the marker) into its kept folder, replacing what was there, with a ``run.json`` naming
    the parameters, their hash, the sha256 of every file and the run's wall and CPU
    seconds. Written in a temporary folder and renamed into place. Returns the folder."""
    target = run.kept_folder(root)
    records = sorted(p for p in folder.rglob("*.json")
                     if p.name != MARKER and not p.name.startswith("."))
    if not records:
        raise RuntimeError(f"run {run.key} wrote no record to keep in {folder}")
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_dir(target.parent, f".{target.name}-")
    try:
        files = {}
        for path in records:
            rel = path.relative_to(folder).as_posix()
            (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, tmp / rel)
            files[rel] = sha256_file(tmp / rel)
        marker = {"key": run.key, "notebook": run.notebook, "parameters": run.parameters,
                  "parameters_hash": run.kept_hash(), "status": "kept",
                  "seconds": round(float(seconds), 1), "files": files,
                  "cpu_seconds": None if cpu_seconds is None else round(float(cpu_seconds), 1)}
        write_text_atomic(tmp / MARKER, json.dumps(marker, indent=2, sort_keys=True) + "\n")
        if target.exists():
            shutil.rmtree(target)
        tmp.replace(target)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return target


def kept_summary(root: Path) -> dict[str, Any]:
    """The records kept under ``paper/records/`` at ``root``: ``runs`` (how many), ``cpu_seconds``
    and ``wall_seconds`` summed over them (what the README states as the real-model runs'
    CPU time), and ``by_model`` (runs and CPU seconds per model parameter)."""
    runs = [json.loads(p.read_text(encoding="utf-8"))
            for p in sorted((Path(root) / KEPT_ROOT).glob(f"*/*/{MARKER}"))]
    by_model: dict[str, dict[str, float]] = {}
    for r in runs:
        model = str(r.get("parameters", {}).get("model", ""))
        entry = by_model.setdefault(model, {"runs": 0, "cpu_seconds": 0.0})
        entry["runs"] += 1
        entry["cpu_seconds"] += float(r.get("cpu_seconds") or 0.0)
    return {"runs": len(runs), "cpu_seconds": sum(float(r.get("cpu_seconds") or 0.0) for r in runs),
            "wall_seconds": sum(float(r.get("seconds") or 0.0) for r in runs), "by_model": by_model}


def kept_summary_line(summary: dict[str, Any]) -> str:
    """The README's line on the kept real-model runs (:func:`kept_summary`).

    >>> kept_summary_line({"runs": 3, "cpu_seconds": 5400.0, "by_model": {
    ...     "a": {"runs": 1, "cpu_seconds": 1800.0}, "b": {"runs": 2, "cpu_seconds": 3600.0}}})
    '**3 runs kept, 1.50 CPU-hours** (a: 1 run, 0.50 h; b: 2 runs, 1.00 h), the summed `cpu_seconds` of their `run.json`.'
    """
    parts = "; ".join(f"{m}: {v['runs']} run{'s' if v['runs'] != 1 else ''}, "
                      f"{v['cpu_seconds'] / 3600:.2f} h" for m, v in sorted(summary["by_model"].items()))
    return (f"**{summary['runs']} runs kept, {summary['cpu_seconds'] / 3600:.2f} CPU-hours** "
            f"({parts}), the summed `cpu_seconds` of their `run.json`.")


def _children_cpu() -> float:
    """User + system CPU seconds of this process's finished children (the notebook kernels)."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def in_part(folder: Path) -> bool:
    """Whether the run of ``folder`` last ran in part (its ``run.json`` says ``partial``)."""
    try:
        return json.loads((folder / MARKER).read_text(encoding="utf-8")).get("status") == "partial"
    except (OSError, ValueError, AttributeError):
        return False


def _join_streams(outputs: list[Any]) -> list[Any]:
    """Consecutive ``stream`` outputs of the same name joined into one.

    >>> _join_streams([{"output_type": "stream", "name": "stdout", "text": "a"},
    ...                {"output_type": "stream", "name": "stdout", "text": "\\n"},
    ...                {"output_type": "stream", "name": "stderr", "text": "w"}])
    [{'output_type': 'stream', 'name': 'stdout', 'text': 'a\\n'}, {'output_type': 'stream', 'name': 'stderr', 'text': 'w'}]
    """
    joined: list[Any] = []
    for out in outputs:
        last = joined[-1] if joined else None
        if (out.get("output_type") == "stream" and last is not None
                and last.get("output_type") == "stream" and last.get("name") == out.get("name")):
            last["text"] = "".join(last["text"]) + "".join(out["text"])
            continue
        joined.append(out)
    return joined


def clean_notebook(nb: Any, source: str, root: Path) -> Any:
    """Drop timings and this checkout's absolute path from an executed notebook, and join
    consecutive pieces of one stream (how the kernel splits a cell's printing into
    messages depends on timing).

    The executed copy is committed for nbval; it must diff cleanly between reruns and
    must not name the machine it ran on.
    """
    # the checkout's path, not a longer one it prefixes (``/x/repo_models`` stays)
    root_re = re.compile(re.escape(str(root)) + r"(/|(?![\w-]|\.\w))")
    meta = nb.metadata.get("papermill", {})
    for key in ("start_time", "end_time", "duration", "environment_variables"):
        meta.pop(key, None)
    meta["input_path"] = source
    meta["output_path"] = None
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"cell-{i:03d}"  # jupytext gives random ids: keep reruns diff-free
        if "outputs" in cell:
            cell["outputs"] = _join_streams(cell["outputs"])
        for out in cell.get("outputs", []):
            if out.get("output_type") == "stream":
                out["text"] = root_re.sub(lambda m: "" if m.group(1) == "/" else ".", out["text"])
            for mime in ("text/plain", "text/markdown"):  # tables shown by report.show_table
                if mime in out.get("data", {}):
                    out["data"][mime] = root_re.sub(lambda m: "" if m.group(1) == "/" else ".",
                                                    "".join(out["data"][mime]))
        cell.metadata.pop("execution", None)
        pm = cell.metadata.get("papermill", {})
        for key in ("start_time", "end_time", "duration"):
            pm.pop(key, None)
    return nb


@functools.cache
def _kernel_manager_class():
    """A Jupyter kernel manager that talks to its kernel over Unix sockets in a fresh folder,
    and starts it on matplotlib's Agg backend.

    With the default TCP transport, kernels started at the same moment by parallel
    workers can pick the same free port and die ("Address already in use").
    """
    # lazy: jupyter_client comes with papermill, needed (and slow to import) only to run
    from jupyter_client.manager import AsyncKernelManager  # lazy: notebook runs only
    from traitlets import CaselessStrEnum, default  # lazy: notebook runs only

    class IPCKernelManager(AsyncKernelManager):
        transport = CaselessStrEnum(["tcp", "ipc"], default_value="ipc", config=True)

        @default("ip")
        def _unique_ip(self) -> str:
            if self.transport != "ipc":
                return super()._ip_default()
            return os.path.join(tempfile.mkdtemp(prefix="polybias-kernel-"), "ipc")

        async def _async_pre_start_kernel(self, **kw: Any) -> Any:
            # executed notebooks hold tables, not pictures: figures go to files only,
            # whatever backend the caller's environment names (make lab shows them inline)
            kw["env"] = {**(kw.get("env") or os.environ), "MPLBACKEND": "Agg"}
            return await super()._async_pre_start_kernel(**kw)

        async def _async_interrupt_kernel(self) -> None:
            # jupyter_client interrupts the kernel before every shutdown; papermill shuts
            # down an idle kernel, which then logs "KeyboardInterrupt caught in kernel" at
            # error level on every successful run. A busy kernel that ignores the shutdown
            # request is still killed after shutdown_wait_time.
            if self.shutting_down:
                return
            await super()._async_interrupt_kernel()

        async def _async_cleanup_resources(self, restart: bool = False) -> None:
            await super()._async_cleanup_resources(restart)
            if not restart and self.transport == "ipc":
                shutil.rmtree(os.path.dirname(self.ip), ignore_errors=True)

    return IPCKernelManager


def _empty(folder: Path) -> None:
    """Remove what an earlier (killed, failed or outdated) attempt left in a run's folder.

    The lock file stays: it is held by the caller, and a new file at its path would be
    a different lock.
    """
    folder.mkdir(parents=True, exist_ok=True)
    for child in folder.iterdir():
        if child.name == LOCK_FILE:
            continue
        if child.is_dir() and not child.is_symlink():
            shutil.rmtree(child)
        else:
            child.unlink()


def first_line(exc: BaseException) -> str:
    """``Type: first line of the message`` of an exception (papermill's included)."""
    ename = getattr(exc, "ename", None)  # PapermillExecutionError: the cell's exception
    evalue = getattr(exc, "evalue", None)
    if ename:
        kind, message = str(ename), str(evalue or "")
    else:
        kind, message = type(exc).__name__, str(exc)
    lines = [ln.strip() for ln in message.strip().splitlines() if ln.strip()]
    return f"{kind}: {lines[0]}" if lines else kind


def execute_locked(run: Any, root: Path, folder: Path,
                   output_dir: str | None = None) -> dict[str, Any]:
    """Execute one run in ``folder``, whose :class:`RunLock` the caller holds.

    The folder is emptied first (so nothing of an earlier attempt looks done), the notebook
    runs with papermill (parameters: the run's, plus ``output_dir``), and on success the
    cleaned ``executed.ipynb`` and the ``run.json`` marker (parameter hash and the sha256 of
    every file left) are written atomically, marker before the notebook is put in place;
    on an error the partial notebook becomes ``failed.ipynb``. A run with
    :attr:`~polybias.runner.runs.Run.lacking` optional sources runs in part (see
    :mod:`polybias.runner.sweep`): marker ``status: partial``, no copy beside the paper, its table in ``folder``.

    Parameters
    ----------
    run : polybias.runner.runs.Run
        What to execute.
    root : Path
        The project root (the notebook is read and executed from there).
    folder : Path
        The run's folder; the caller holds its lock.
    output_dir : str, optional
        The ``output_dir`` parameter; default: ``folder`` relative to ``root``.

    Returns
    -------
    dict
        ``key``, ``status`` (``ok`` or ``failed``) and ``seconds`` (ok; with ``partial``, the
        lacking sources and their reasons, when it ran in part) or ``error`` and ``notebook``
        (failed), as :meth:`polybias.runner.runs.Run.execute` returns them.
    """
    # lazy: jupytext, nbformat and papermill take seconds to import, and only runs need them
    import jupytext  # lazy: notebook runs only
    import nbformat  # lazy: notebook runs only
    import papermill as pm  # lazy: notebook runs only

    digest = run.hash_in(root)  # of the source about to run, not of a later edit
    _empty(folder)  # the marker goes first: from here on the run is not done
    params = {**run.parameters, "output_dir": output_dir or os.path.relpath(folder, root)}
    if run.lacking and params.get("table_file"):  # in part: the paper's table stays as it is
        params["table_file"] = os.path.join(params["output_dir"], Path(params["table_file"]).name)
    src = jupytext.read(root / run.notebook)
    src.metadata["kernelspec"] = {"name": run.kernel, "display_name": run.kernel, "language": "python"}
    partial, failed = folder / PARTIAL, folder / FAILED
    t0 = time.perf_counter()
    cpu0 = _children_cpu()
    # a run without a copy beside the paper (full sets, profiles, polybias run) keeps its
    # figures in its own folder: nothing tracked is rewritten by it
    figures_before = os.environ.get(paths.FIGURES_ENV)
    if not run.executed:
        os.environ[paths.FIGURES_ENV] = str(folder / "figures")
    # the parts the notebook skips (a source that cannot be had) are noted here: the run is
    # then partial, not ok (paths.note_skipped_part, called by sources.unavailable_note)
    skipped_file = folder / SKIPPED_PARTS
    os.environ[paths.SKIPPED_PARTS_ENV] = str(skipped_file)
    try:
        nb = pm.execute_notebook(
            src, str(partial), parameters=params, kernel_name=run.kernel, cwd=str(root),
            progress_bar=False, log_output=False, request_save_on_cell_execute=False,
            kernel_manager_class=_kernel_manager_class(),
        )
    except Exception as exc:  # papermill raises PapermillExecutionError with the cell's error
        if partial.exists():
            partial.replace(failed)
        return {"key": run.key, "status": "failed", "error": first_line(exc),
                "notebook": os.path.relpath(failed, root) if failed.exists() else None}
    finally:
        os.environ.pop(paths.SKIPPED_PARTS_ENV, None)
        if figures_before is None:
            os.environ.pop(paths.FIGURES_ENV, None)
        else:
            os.environ[paths.FIGURES_ENV] = figures_before
    skipped = paths.skipped_parts(skipped_file)
    lacking = {**run.lacking, **skipped}
    text = nbformat.writes(clean_notebook(nb, run.notebook, root))
    # the executed notebook stays under the partial name until the marker is written, so a
    # kill at any point leaves no executed notebook without its marker (the marker lists it,
    # and is_done checks it and the committed copy are there and intact)
    write_text_atomic(partial, text)
    outputs = output_digests(folder)
    outputs[EXECUTED] = outputs.pop(PARTIAL)
    copy = run.executed if not lacking else None  # in part: the checked copy stays as it is
    marker = {"key": run.key, "notebook": run.notebook, "parameters": params,
              "params_hash": digest, "status": "partial" if lacking else "ok",
              "executed": copy, "executed_sha256": outputs[EXECUTED] if copy else None,
              "outputs": outputs}
    if run.lacking:
        marker["lacking"] = dict(run.lacking)
    if skipped:
        marker["skipped_parts"] = skipped
    write_text_atomic(folder / MARKER, json.dumps(marker, indent=2, sort_keys=True) + "\n")
    partial.replace(folder / EXECUTED)
    if copy:
        write_text_atomic(root / copy, text)
    outcome = {"key": run.key, "status": "ok", "seconds": time.perf_counter() - t0}
    if getattr(run, "keep_records", False) and not lacking:
        keep_records(run, root, folder, outcome["seconds"], _children_cpu() - cpu0)
    if run.lacking:
        outcome["partial"] = dict(run.lacking)
    if skipped:
        outcome["skipped_parts"] = skipped
    return outcome


#: The subsets that carry a run's overall number, per measure (the others: every row).
OVERALL_SUBSETS = ("all", "g_s", "intrasentence; all", "intersentence; all")


def headline(folder: Path, limit: int = 12) -> str:
    """The run's headline numbers, read from the records it wrote: measure, model, dataset
    (the record's test), language, value with its interval, and n; the overall number of
    each measure where a record holds parts (bias types, stereotypes), at most ``limit``
    lines (the rest counted). ``polybias results FOLDER`` prints them all."""
    try:  # a sweep of another project's notebooks need not have a measure registry: no headline
        from polybias.results.table import ResultsError, read_results  # lazy: loads the registry
    except (ImportError, KeyError, ValueError, OSError) as exc:  # MeasureError is a KeyError
        return f"headline: the records cannot be read here ({first_line(exc)})"
    try:
        tidy = read_results(runs=[folder])
    except ResultsError:
        tidy = None
    if tidy is None or tidy.empty:
        return "headline: the run wrote no record"
    overall = tidy[tidy.subset.isin(OVERALL_SUBSETS) | tidy.subset.isna() | (tidy.subset == "")]
    by_metric = tidy.groupby("metric").size()
    rows = overall if not overall.empty else tidy
    rows = pd.concat([rows, tidy[~tidy.metric.isin(rows.metric)]])  # measures without an overall row
    lines = []
    for r in rows.head(limit).itertuples():
        interval = "" if pd.isna(r.ci_low) else f" [{r.ci_low:.3g}, {r.ci_high:.3g}]"
        subset = f" {r.subset}" if isinstance(r.subset, str) and r.subset.strip() and \
            r.subset not in OVERALL_SUBSETS else ""
        n = "" if pd.isna(r.n) else f", n={int(r.n)}"
        p_value = "" if pd.isna(r.p) else f", p={r.p:.2g}"
        lines.append(f"  {r.metric}{subset}: {r.model} on {r.test} ({r.language}) "
                     f"{r.value:.4g}{interval}{n}{p_value}")
    more = len(rows) - min(len(rows), limit)
    head = f"headline ({len(tidy)} numbers in {len(by_metric)} measure(s); polybias results {folder} for all):"
    return "\n".join([head, *lines] + ([f"  ... and {more} more"] if more else []))
