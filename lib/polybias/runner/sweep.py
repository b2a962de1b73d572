"""Run a sweep, resumable, on Dask: notebooks over a grid of parameters with papermill, or the
runs of another kind, e.g. the validity sweep (``polybias sweep CONFIG``).

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
        resources: {GPU: 1}                 # optional Dask worker resources held by each run
        sources: [crows-pairs]              # optional data sources (data/sources.yaml) it needs
        optional_sources: [gamboa-gpt2-scores]  # optional: sources only a part of it reads
        keep_records: true                  # optional: keep its records under paper/records/
                                            # to be committed (runs of CPU-hours); a checkout
                                            # holding them counts the run done

The configuration is strict: a key other than those above (at the top level:
``kernel`` and ``runs``), or a parameter (in ``grid`` or ``parameters``) that the
notebook's cell tagged ``parameters`` does not declare, is a :class:`SweepError` before
anything runs. A parameter the notebook annotates ``list`` given a single value (``tests:
weat1``) is passed as a one-item list (``["weat1"]``), never as a string whose letters a
loop would visit one by one.

A pin file (:mod:`polybias.runner.pins`, written by ``polybias pin CONFIG``) pins hub ids
to commits: ``<config stem>.pins.yaml`` beside the config is used when present (``--pins
FILE`` names another, ``--no-pins`` none), and each run of a hub model gets its pinned
commit as the ``revision`` parameter. The runs themselves are read by
:func:`polybias.runner.runs.read_sweep`.

Each run gets ``output_dir`` (its folder under ``results/``) as a parameter. A run
starts by emptying its folder, executes the notebook there and, only when it
succeeded, writes a ``run.json`` marker (atomically) holding its parameter hash and the
sha256 of every file the run left in its folder, then puts ``executed.ipynb`` (and the
sweep's ``executed:`` copy) in place: the marker counts only when they are there.
A run counts as done only when that marker exists with the same hash and every file
it lists is intact (an edit of the notebook's source counts as a change); so a run
killed halfway, at any point, leaves nothing that looks finished, and running the
sweep again redoes only what is missing. A failed run leaves ``failed.ipynb``
(showing the error) and no marker.

A run whose ``optional_sources:`` (the source studies' files that only its reproduction
part reads; the notebook checks them itself, e.g. with
:func:`polybias.data.sources.unavailable_note`, and shows one line naming each and how to
provide it in place of that part) cannot all be had runs **in part**: it executes, its
``run.json`` says ``status: partial`` with the sources it lacked, and it writes neither the
sweep's ``executed:`` copy nor its ``table_file`` beside the paper (the table goes to the
run's folder), so the checked outputs stay those of the whole run. A run in part does not
count as done (``--list`` shows it as ``part``): the next sweep runs it again, in whole once
its sources can be had. The summary counts it among those that ran and lists it with what
it lacked.

Runs are skipped (reported as ``skipped``, with the reason, not as failed) when:

- they are done already (see above);
- a data source they declare under ``sources:`` cannot be had now (no mirror copy, no
  verified cache and no download; see :func:`polybias.data.sources.availability`): nothing of
  theirs is written, and the summary gives the one-line reason;
- another process is executing them ("running elsewhere"): a run in progress holds an
  exclusive file lock on ``.lock`` in its folder (:mod:`polybias.runner.locks`), which the
  operating system releases when the holder ends or is killed; so two sweeps of the same
  configuration never compute the same run at the same time.

Where the runs execute:

- ``--jobs 1``: one after the other in this process (declared resources are ignored).
- default: a Dask ``LocalCluster`` of ``--jobs`` single-threaded worker processes
  (default: the number of cores), plus one worker per local GPU (``--gpus``, default:
  the GPUs torch sees when a run asks for ``GPU``), each seeing only its GPU
  (``CUDA_VISIBLE_DEVICES``) and offering the resource ``GPU: 1``, so that a run that
  declares ``resources: {GPU: 1}`` holds a whole GPU.
- ``--scheduler ADDRESS`` (or a scheduler JSON file): an existing Dask cluster whose
  workers see the project at the same path and have the sweep's Jupyter kernel; a run
  that declares resources no connected worker offers fails at once, with the reason.
- ``--cluster FILE``: ``--jobs`` batch jobs (SLURM, PBS, ...) of one Dask worker each,
  configured by a YAML file with a ``jobqueue:`` section (see ``configs/dask/slurm.yaml``)
  and kept by :class:`polybias.runner.cluster.JobPool`: a job lost (cancelled, past its
  walltime, node lost), before or after its worker connected, is replaced, up to
  ``sweep.max-resubmits``;
  a submission the batch system rejects, or no worker for ``sweep.start-timeout``
  seconds, stops the sweep (exit status 1) with the scheduler's message and the key of
  the file to fix.

Dask reschedules the run of a worker that died; a run that kills its workers three
times is reported as failed. A rescheduled run that its lost worker had finished is not
computed again, and counts as ran (its marker is newer than the sweep's start). A progress bar counts runs done, failed and skipped with
an ETA; failures are listed at the end with the notebook that shows the error (the
exception's type and the first line of its message), and skipped runs that are not done
with their reason. Ctrl-C stops the sweep with exit status 130 and the same summary,
counting the unfinished runs as ``todo`` (nothing of them looks done; a run done before
and forced again counts as ran only when this sweep wrote its marker again); the
workers, local or batch jobs, are stopped first. That holds from the first seconds, while
the modules load and the sweep file is read.

``--shard i/n`` runs every n-th of the selected runs from the i-th (so that separate
processes, or machines sharing the project folder, split a sweep; the run locks keep them
apart even when they overlap), and ``--limit N`` stops after N runs not yet done (the others
are reported ``todo``). ``--only`` takes comma-separated pieces of run keys (a whole key
selects that run alone).

Sweeps of other kinds: a sweep YAML with a top-level ``kind:`` other than ``notebooks``
(the default) names what a run is; :data:`KINDS` maps the kind to the module that reads such
a YAML into its runs (``sweep_runs(config, options)``) and, once they are done, writes what
is made of them (``finish(config, options)``). Their runs go through the same plan, shards,
locks, resume, Dask or batch workers and summary as the notebook runs. The runner asks the
same of a run of any kind, and nothing else (a notebook run is
:class:`polybias.runner.runs.Run`): ``key``, ``resources``, ``sources``,
``optional_sources``, ``lacking``, and ``hash_in(root)``, ``marker(root)`` (the file whose
writing says it is done), ``is_done(root)``, ``state(root)`` (as ``--list`` shows it),
``check(root)`` (refuse its values before anything starts), ``execute(root, force)`` (under
its lock; an outcome as :func:`execute` returns it) and ``failed_notebook(root)`` (what a
failed attempt left to read, or None). ``kind:
validity`` is the planted-model validity study (:mod:`polybias.runner.validity_sweep`:
``configs/sweeps/validity.yaml``), whose runs each train and score one planted model and
write its record, and whose ``finish`` writes the committed summary; its options
(``--order``, ``--first``, ``--carry-committed``, ``--allow-missing``,
``--summary-only``) are in this command's "validity sweep" group.
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import logging
import os
import signal
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tqdm.auto import tqdm

from polybias import models, paths
from polybias.data import sources
from polybias.runner import execution
from polybias.runner.cluster import ClusterConfigError, ClusterError, JobPool, make_cluster
from polybias.runner.execution import DONE, first_line
from polybias.runner.pins import PinError, apply_pins, found_path, read_pins
from polybias.runner.runs import Run, SweepError, read_sweep

if TYPE_CHECKING:
    import pandas as pd

log = logging.getLogger(__name__)

POLL = 1.0
"""Seconds between checks of a sweep's batch jobs while its runs wait."""
GATHER = 30.0
"""Seconds to wait for a finished run's outcome; one that does not come went with its
worker (a batch job lost as the run ended), and the sweep waits for it to run again while
it keeps checking its jobs."""
FINISHED_UNREPORTED = ("finished after the sweep started, by a worker lost before it "
                       "reported (or by another process)")
"""``note`` of a run counted as ran that a retried task found done: its marker is newer than
the sweep's start."""
RUN_INTERFACE = ("key", "resources", "sources", "optional_sources", "lacking", "hash_in",
                 "marker", "is_done", "state", "check", "execute", "failed_notebook")
"""What the runner asks of a run of any kind (see the module docstring), and nothing else."""
KINDS = {"notebooks": None, "validity": "polybias.runner.validity_sweep",
         "validity-diagnosis": "polybias.runner.validity_diagnosis",
         "validity-eurogest": "polybias.runner.validity_eurogest"}
"""A sweep YAML's ``kind:`` -> the module that reads its runs (None: notebook runs,
:func:`polybias.runner.runs.read_sweep`); see the module docstring."""
KIND_OPTIONS = ("order", "first", "carry_committed", "allow_missing", "summary_only")
"""Options of the command line that only a sweep of another kind takes (validity)."""


def sweep_kind(config: str | Path) -> str:
    """The ``kind:`` of a sweep YAML (``notebooks`` when it names none).

    Raises
    ------
    SweepError
        On malformed YAML or a kind not in :data:`KINDS`, naming the valid kinds.
    """
    raw = paths.read_yaml(Path(config), SweepError, "sweep config")
    kind = raw.get("kind", "notebooks") if isinstance(raw, dict) else "notebooks"
    if kind not in KINDS:
        raise SweepError(f"{config}: unknown kind {kind!r}; valid kinds: {', '.join(KINDS)}")
    return kind


def kind_module(kind: str) -> Any:
    """The module of a sweep kind (:data:`KINDS`), imported by its dotted name: the kinds
    import the runner, not the other way round."""
    return importlib.import_module(KINDS[kind])


def load_sweep(config: str | Path, pins: str | Path | bool | None = True,
               options: dict[str, Any] | None = None) -> list[Run]:
    """Expand a sweep YAML into its runs, validated and pinned; nothing is executed.

    Parameters
    ----------
    config : str or Path
        The sweep YAML (see the module docstring).
    pins : True, a path, or None/False
        The pin file (:mod:`polybias.runner.pins`) whose commits become the ``revision`` of
        the runs of hub models: True (default) uses the one beside the config when there is
        one (:func:`polybias.runner.pins.found_path`); a path uses that file (which must exist); None or False
        uses none.

    Returns
    -------
    list of Run
        One run per grid point of every entry, in file order
        (:func:`polybias.runner.runs.read_sweep`), with their pinned revisions.

    Raises
    ------
    SweepError
        On malformed YAML, an unknown key (top level or run entry), a missing notebook,
        a parameter the notebook does not declare, an unknown data source, malformed
        resources, two runs that would share a folder, or a pin file that is missing,
        malformed or lacks a hub id of the sweep. The message names the entry
        (``runs[i]``) and what is valid.

    A sweep of another ``kind:`` (:data:`KINDS`) is read by its module, with ``options``
    (:data:`KIND_OPTIONS`), into its runs; pins do not apply to it. ``options["kind"]``, when
    given, is the kind whatever the file says (an earlier command of one kind says it so).
    """
    config = Path(config)
    kind = (options or {}).get("kind") or sweep_kind(config)
    if KINDS[kind] is not None:
        return kind_module(kind).sweep_runs(config, options or {})
    runs = read_sweep(config)
    if pins is None or pins is False:
        return runs
    path = found_path(config) if pins is True else Path(pins)
    if path is None:
        return runs
    try:
        return apply_pins(runs, read_pins(path), path, config)
    except PinError as exc:
        raise SweepError(str(exc)) from None



def is_done(run: Any, root: str | Path | None = None) -> bool:
    """True when the run (of any kind) finished before with the same parameters and its files
    are intact (:meth:`polybias.runner.runs.Run.is_done` for a notebook run)."""
    return run.is_done(Path(root) if root else paths.project_root())


def execute(run: Any, root: str | Path | None = None, force: bool = False) -> dict[str, Any]:
    """Execute one run (of any kind) now, under its lock, and return its outcome (``key``,
    ``status``, ...): :meth:`polybias.runner.runs.Run.execute` for a notebook run.

    Used by :func:`run_sweep` on the workers; also callable directly. ``root`` is the
    project root (the workers of a cluster must see it at the same path). A run already
    done is skipped unless ``force``; one another process is executing, with the reason
    ``running elsewhere``.
    """
    return run.execute(Path(root) if root else paths.project_root(), force)


def _notebook_runs(config: str | Path) -> list[Run]:
    """The runs of a notebook sweep; a sweep of another kind, which has no run folders,
    is a :class:`SweepError` saying where its records are read."""
    kind = sweep_kind(config)
    if KINDS[kind] is not None:
        raw = paths.read_yaml(Path(config), SweepError, "sweep config")
        records = raw.get("records_dir") if isinstance(raw, dict) else None
        folder = (paths.output_path(records) if isinstance(records, str) and records
                  else "FOLDER (its records_dir)")
        raise SweepError(f"{config}: a sweep of kind {kind!r} has no run folders; its records "
                         f"are read with polybias results {folder}")
    return load_sweep(config)


def run_folders(config: str | Path, root: str | Path | None = None) -> tuple[list[Path], list[str]]:
    """The record folders of a sweep's runs that are done (:func:`is_done`), and the keys
    of those that are not, in the sweep's order; what ``polybias export --sweep`` reads."""
    root = Path(root) if root else paths.project_root()
    done, not_done = [], []
    for run in _notebook_runs(config):
        folder = run.records_folder(root)
        if folder is not None:
            done.append(folder)
        else:
            not_done.append(run.key)
    return done, not_done


def run_records(config: str | Path, select: Callable[[dict[str, Any]], bool],
                root: str | Path | None = None) -> dict[str, pd.DataFrame | None]:
    """The run records of the runs of a sweep that ``select`` picks, read into the tidy table
    of :func:`polybias.results.table.read_results`, by run key; None for a run that is not
    done (:func:`is_done`: never run, failed, or run with other parameters or another
    version of its notebook, and, for a ``keep_records`` run, no kept records of its
    parameters), so that a reader can say which runs are missing. A run done here is read
    from its run folder, else from its kept records (:meth:`Run.records_folder`).

    Parameters
    ----------
    config : the sweep YAML.
    select : called with each run's parameters; True keeps the run.
    root : the project root (default :func:`polybias.paths.project_root`).
    """
    # the results table loads the project's measure registry on import, which a sweep of
    # another project's notebooks need not have: lazy
    from polybias.results.table import read_results

    root = Path(root) if root else paths.project_root()
    out = {}
    for run in _notebook_runs(config):
        if select(run.parameters):
            folder = run.records_folder(root)
            out[run.key] = read_results(runs=[folder]) if folder is not None else None
    return out


# ----------------------------------------------------------------------------- clusters
def local_gpus() -> int:
    """Number of GPUs torch sees here (0 without torch or CUDA)."""
    try:  # lazy: torch is optional here and slow to import; only GPU sweeps ask
        import torch  # lazy: heavy; model code only
    except ImportError:
        return 0
    return torch.cuda.device_count() if torch.cuda.is_available() else 0


def local_cluster(jobs: int, gpus: int = 0):
    """A Dask ``LocalCluster``: ``jobs`` single-threaded worker processes, plus one per GPU.

    The GPU workers offer the resource ``GPU: 1`` and see only their device
    (``CUDA_VISIBLE_DEVICES``). Workers have no memory limit: a run's memory is held
    by its notebook kernel, a child process of the worker.
    """
    from distributed import LocalCluster, Nanny  # lazy: Dask only for sweeps on workers

    cluster = LocalCluster(n_workers=jobs, threads_per_worker=1, processes=True,
                           dashboard_address=None, memory_limit=0, silence_logs=logging.ERROR)
    if gpus:
        template = cluster.new_spec["options"]
        for g in range(gpus):
            env = {**template.get("env", {}), "CUDA_VISIBLE_DEVICES": str(g)}
            cluster.worker_spec[f"gpu-{g}"] = {"cls": Nanny, "options": {
                **template, "resources": {"GPU": 1}, "env": env}}
        cluster.scale(len(cluster.worker_spec))
    return cluster


def jobqueue_cluster(config: str | Path, jobs: int):
    """A dask-jobqueue cluster from a YAML file with one ``jobqueue: {slurm: {...}}`` section.

    The section's keys are the cluster class's arguments (``job-cpu`` or ``job_cpu``),
    as in dask-jobqueue's own configuration file (``name`` is the batch job's name); see
    ``configs/dask/slurm.yaml`` and :mod:`polybias.runner.cluster`. ``jobs`` batch jobs are
    submitted (none when 0), unsupervised: :func:`run_sweep` keeps its jobs with a
    :class:`polybias.runner.cluster.JobPool`.
    """
    try:
        cluster, _, _ = make_cluster(config)
    except ClusterConfigError as exc:
        raise SweepError(str(exc)) from None
    if jobs:
        cluster.scale(jobs=jobs)
    return cluster


class _DaskControlFlow(logging.Filter):
    """Drops asyncio's "Task exception was never retrieved" for ``distributed.client.AllExit``,
    the exception Dask's gather raises to stop waiting early: when the futures' workers are
    all lost, a task Dask did not await can carry it, and asyncio prints its traceback
    although nothing went wrong beyond what the sweep reports (every worker job lost)."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        return not (exc is not None and type(exc).__name__ == "AllExit"
                    and type(exc).__module__ == "distributed.client")


_DASK_CONTROL_FLOW = _DaskControlFlow()


def _connect(jobs: int, scheduler: str | None, cluster_config: str | Path | None, gpus: int):
    """Return (client, what to close: a cluster, a JobPool or None) for the requested place
    of execution."""
    from distributed import Client  # lazy: Dask only for sweeps on workers

    logging.getLogger("asyncio").addFilter(_DASK_CONTROL_FLOW)  # once: a filter is added once

    if scheduler:
        if Path(scheduler).is_file():  # a scheduler file (dask scheduler --scheduler-file)
            return Client(scheduler_file=scheduler), None
        return Client(scheduler), None
    if cluster_config:
        try:
            pool = JobPool(cluster_config, jobs)
        except ClusterConfigError as exc:
            raise SweepError(str(exc)) from None
        try:
            return Client(pool.cluster), pool
        except BaseException:
            pool.close()
            raise
    cluster = local_cluster(jobs, gpus)
    client = Client(cluster)
    client.wait_for_workers(jobs + gpus, timeout=120)
    return client, cluster


def _unplaceable(runs: list[Run], client) -> list[Run]:
    """Runs asking for resources that no connected worker offers."""
    offered: list[dict[str, float]] = [w.get("resources") or {}
                                       for w in client.scheduler_info()["workers"].values()]
    return [r for r in runs if r.resources and not any(
        all(w.get(k, 0) >= v for k, v in r.resources.items()) for w in offered)]


# ----------------------------------------------------------------------------- the sweep
def select(runs: list[Any], only: str | None = None,
           shard: tuple[int, int] = (0, 1)) -> list[Any]:
    """The runs a sweep executes: those whose key contains one of the comma-separated
    pieces of ``only`` (all when None; a piece that is a whole run key selects that run
    alone, not the runs whose keys extend it), then every n-th of them from the i-th for
    ``shard = (i, n)``.

    >>> from types import SimpleNamespace as R
    >>> runs = [R(key=k) for k in ("en/mlm-p0.5-s0", "en/mlm-p0.9-s0", "bn/mlm-p0.5-s0")]
    >>> [r.key for r in select(runs, "en/mlm,bn/", (1, 2))]
    ['en/mlm-p0.9-s0']
    >>> runs = [R(key=k) for k in ("crows__data-cp", "crows__data-cp-gamboa", "crows__data-cp__n-80")]
    >>> [r.key for r in select(runs, "crows__data-cp")], len(select(runs, "crows__data"))
    (['crows__data-cp'], 3)
    """
    index, count = shard
    if not 0 <= index < count:
        raise SweepError(f"shard must be i/n with 0 <= i < n, got {index}/{count}")
    pieces = [p for p in (only or "").split(",") if p]
    keys = {r.key for r in runs}
    whole = {p for p in pieces if p in keys}
    parts = [p for p in pieces if p not in keys]
    return [r for r in runs if not pieces or r.key in whole
            or any(p in r.key for p in parts)][index::count]


def run_sweep(config: str | Path, jobs: int | None = None, force: bool = False,
              only: str | None = None, scheduler: str | None = None,
              cluster_config: str | Path | None = None, gpus: int | None = None,
              client=None, progress: bool = True,
              pins: str | Path | bool | None = True, shard: tuple[int, int] = (0, 1),
              limit: int | None = None, options: dict[str, Any] | None = None,
              given: list[Any] | None = None) -> list[dict[str, Any]]:
    """Execute every run of ``config`` not yet done; return one outcome dict per run.

    The parameter values of the runs to execute are checked against their notebooks'
    declarations first (:func:`polybias.runner.runs.check_values`): one refused value is a
    :class:`~polybias.runner.runs.SweepError` naming every refused run, and nothing starts.

    ``client``: an existing ``distributed.Client`` to use (then ``jobs``, ``scheduler``,
    ``cluster_config`` and ``gpus`` are ignored). Otherwise see the module docstring.
    ``pins``: the pin file, as :func:`load_sweep` takes it. ``only``, ``shard``: which
    runs (:func:`select`); ``limit``: at most that many runs not yet done execute, the others
    are ``todo``. ``options``: a sweep kind's own options (:func:`load_sweep`); ``given``:
    the runs themselves, already read (then ``config`` and ``pins`` are not read).

    Raises
    ------
    SweepStopped
        On Ctrl-C (``KeyboardInterrupt``) or when the batch system cannot give workers
        (:class:`polybias.runner.cluster.ClusterError`): its ``outcomes`` are those so far plus
        one ``todo`` outcome per run that did not finish (nothing of it looks done), its
        ``cause`` the exception. The workers (and batch jobs) are gone by then.
    """
    root = paths.project_root()
    runs: list[Any] = []
    outcomes: list[dict[str, Any]] = []
    try:  # Ctrl-C while the sweep is read: a summary of what is left, as later
        runs = select(load_sweep(config, pins, options) if given is None else given, only, shard)
        done = [not force and is_done(r, root) for r in runs]
        outcomes = [{"key": r.key, "status": "skipped", "reason": DONE}
                    for r, d in zip(runs, done, strict=True) if d]
        todo, without_data = _with_data([r for r, d in zip(runs, done, strict=True) if not d])
        outcomes += without_data
        if limit is not None:
            outcomes += [{"key": r.key, "status": "todo", "reason": f"past --limit {limit}"}
                         for r in todo[limit:]]
            todo = todo[:limit]
        refused = []
        for r in todo:  # the values, against the notebooks' declarations, before a kernel starts
            try:
                r.check(root)
            except SweepError as exc:
                refused.append(f"{r.key}: {exc}")
        # a run done before (--force) counts as ran only when this sweep wrote its marker again
        markers = {r.key: _stamp(r.marker(root)) for r in todo}
    except KeyboardInterrupt as exc:
        known = {o["key"] for o in outcomes}
        raise SweepStopped(outcomes + [{"key": r.key, "status": "todo", "reason": "interrupted"}
                                       for r in runs if r.key not in known], exc) from exc
    if refused:
        raise SweepError(f"{config}: no run started, {len(refused)} refused: {'; '.join(refused)}")
    jobs = max(1, jobs or os.cpu_count() or 1)
    distributed = client is not None or scheduler or cluster_config or jobs > 1
    bar = tqdm(total=len(runs), initial=len(outcomes), desc="sweep", unit="run",
               disable=not progress or not todo, dynamic_ncols=True)
    counts = {"ok": 0, "failed": 0, "skipped": sum(o["status"] == "skipped" for o in outcomes)}
    by_key = {r.key: r for r in todo}

    def record(outcome: dict[str, Any]) -> None:
        if (outcome["status"] == "skipped" and outcome.get("reason") == DONE
                and outcome["key"] in markers):
            # done, but not when the sweep started: most often a worker of this sweep finished
            # it and was lost before it could say so, and Dask ran the task again
            r = by_key[outcome["key"]]
            stamp = _stamp(r.marker(root))
            if stamp is not None and stamp != markers[r.key]:
                outcome = {"key": r.key, "status": "ok", "note": FINISHED_UNREPORTED}
                if getattr(r, "lacking", None):
                    outcome["partial"] = dict(r.lacking)
        outcomes.append(outcome)
        counts[outcome["status"]] += 1
        bar.set_postfix(counts, refresh=False)
        bar.update()

    try:
        _prepare_models(todo)
        if todo and not distributed:
            for r in todo:  # execute checks is_done again under the run's lock
                record(execute(r, root, force=force))
        elif todo:
            own = client is None
            closing = None
            try:
                if own:
                    need_gpu = any("GPU" in r.resources for r in todo)
                    n_gpus = gpus if gpus is not None else (local_gpus() if need_gpu and not (
                        scheduler or cluster_config) else 0)
                    client, closing = _connect(min(jobs, len(todo)), scheduler, cluster_config, n_gpus)
                pool = closing if isinstance(closing, JobPool) else None
                _submit_and_collect(client, todo, root, force, record,
                                    check_resources=not cluster_config, pool=pool)
            finally:
                if own:
                    _close(client, closing)
    except (KeyboardInterrupt, ClusterError) as exc:
        # the workers are gone by now; a run they finished while stopping counts as ran
        finished = {o["key"] for o in outcomes}
        reason = "interrupted" if isinstance(exc, KeyboardInterrupt) else "no workers"
        outcomes += [{"key": r.key, "status": "ok", "note": "finished while the sweep stopped"}
                     if _stamp(r.marker(root)) != markers[r.key] and is_done(r, root)
                     else {"key": r.key, "status": "todo", "reason": reason}
                     for r in todo if r.key not in finished]
        raise SweepStopped(outcomes, exc) from exc
    finally:
        bar.close()
    return outcomes


def _stamp(path: Path) -> tuple[int, int, int] | None:
    """Identity of a file as written (inode, size, mtime), None when there is none: a marker
    written again (atomically: a new file) has another."""
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_ino, st.st_size, st.st_mtime_ns


class SweepStopped(Exception):
    """A sweep that ended before its runs did (Ctrl-C, or no workers to be had).

    Parameters
    ----------
    outcomes : list of dict
        As :func:`run_sweep` returns them, with ``status: todo`` for the runs left to do.
    cause : BaseException
        ``KeyboardInterrupt`` or :class:`polybias.runner.cluster.ClusterError`.
    """

    def __init__(self, outcomes: list[dict[str, Any]], cause: BaseException):
        super().__init__(str(cause) or type(cause).__name__)
        self.outcomes = outcomes
        self.cause = cause

    @property
    def interrupted(self) -> bool:
        """Whether Ctrl-C (SIGINT) stopped the sweep."""
        return isinstance(self.cause, KeyboardInterrupt)


def _close(client, closing) -> None:
    """Close the client, then the cluster or job pool the sweep started (cancelling its
    batch jobs). A second Ctrl-C does not stop the cancelling."""
    main = threading.current_thread() is threading.main_thread()
    before = signal.signal(signal.SIGINT, signal.SIG_IGN) if main else None
    try:
        if client is not None:
            client.close()
        if closing is not None:
            closing.close()
    finally:
        if main:
            signal.signal(signal.SIGINT, before)


def _with_data(runs: list[Run]) -> tuple[list[Run], list[dict[str, Any]]]:
    """Split runs into those whose declared data sources can be had now and the others.

    Each source is checked once (:func:`polybias.data.sources.availability`: mirror, the
    environment's embedded files, verified cache, else a short download attempt); each
    that cannot be had is logged once, in one short line (its reason, how to provide it
    first, is in the summary's final list).
    Returns the runs to execute, those lacking only ``optional_sources`` with them as
    :attr:`~polybias.runner.runs.Run.lacking` (they run in part), and one ``skipped``
    outcome for each of the others, whose ``reason`` names the sources it lacks and whose
    ``sources`` maps each to its reason.
    """
    names = sorted({s for r in runs for s in (*r.sources, *r.optional_sources)})
    if not names:
        return runs, []
    registry = sources.load_registry()
    verdict = {name: sources.availability(name, registry) for name in names}
    ready, skipped = [], []
    for r in runs:
        missing = {s: verdict[s][1] for s in r.sources if not verdict[s][0]}
        lacking = {s: verdict[s][1] for s in r.optional_sources if not verdict[s][0]}
        if missing:
            skipped.append({"key": r.key, "status": "skipped", "reason": _lacking(missing),
                            "sources": missing})
        else:
            ready.append(dataclasses.replace(r, lacking=lacking) if lacking else r)
    missing_names = [name for name, (ok, _) in verdict.items() if not ok]
    if missing_names:  # one line now; each source and how to provide it: the summary's list
        n_part = sum(bool(r.lacking) for r in ready)
        log.warning("sweep: %d data source%s cannot be had here: %d run%s skipped, %d in part "
                    "(each source, and how to provide it, at the end)", len(missing_names),
                    "s" * (len(missing_names) != 1), len(skipped), "s" * (len(skipped) != 1), n_part)
    return ready, skipped


def _prepare_models(todo: list[Any]) -> None:
    """Prepare here, once, the embedded models the runs to execute name
    (:func:`polybias.models.prepare`: an embedded quantized LM is dequantized into the cache
    on first use). Otherwise the first run of each would prepare it inside its notebook,
    whose executed copy then prints the preparation, and concurrent runs would prepare it
    side by side. A model that cannot be prepared here is left to its runs (an error there names
    what is wrong)."""
    named = ((getattr(r, "parameters", None) or {}).get("model") for r in todo)
    for name in sorted({m for m in named if isinstance(m, str) and m}):
        try:
            models.prepare(name)
        except models.ModelError as exc:
            log.warning("sweep: model %r not prepared here (%s); its runs load it themselves",
                        name, first_line(exc))


def _lacking(names) -> str:
    """``data source 'a' cannot be had`` / ``data sources 'a', 'b' cannot be had``."""
    quoted = ", ".join(repr(n) for n in names)
    return f"data source{'s' * (len(names) > 1)} {quoted} cannot be had"


def _submit_and_collect(client, todo: list[Run], root: Path, force: bool, record,
                        check_resources: bool, pool: JobPool | None = None) -> None:
    """Submit the runs to Dask and record each outcome as it comes; with a job ``pool``,
    check its jobs every :data:`POLL` seconds while runs wait."""
    # lazy: Dask only for sweeps on workers
    from distributed import wait  # lazy: Dask only for sweeps
    from distributed.client import FIRST_COMPLETED  # lazy: Dask only for sweeps

    stuck = _unplaceable(todo, client) if check_resources else []
    stuck_keys = {r.key for r in stuck}
    for r in stuck:
        record({"key": r.key, "status": "failed", "notebook": None,
                "error": f"needs resources {r.resources} that no worker of the cluster offers "
                         "(locally: --gpus N declares N GPUs; --jobs 1 runs everything in this "
                         "process, whatever the runs declare)"})
    futures = {}
    for r in todo:
        if r.key in stuck_keys:
            continue
        fut = client.submit(execute, r, str(root), force, key=f"sweep-{r.key}-{r.hash_in(root)}",
                            resources=r.resources or None, pure=False)
        futures[fut] = r
    pending = set(futures)
    try:
        with _SignalsBetweenCalls() as signals:
            while pending:
                signals.stop_if_received()
                if pool is not None:
                    pool.check(client)
                try:
                    finished = wait(pending, timeout=POLL, return_when=FIRST_COMPLETED).done
                except TimeoutError:
                    continue
                for fut in sorted(finished, key=lambda f: futures[f].key):
                    outcome = _outcome(fut, futures[fut], root)
                    if outcome is not None:
                        pending.discard(fut)
                        record(outcome)
    except BaseException:
        client.cancel(list(pending))
        raise


class _SignalsBetweenCalls:
    """Ctrl-C and the stop signals (:data:`STOP_SIGNALS`) noted while the sweep waits on
    Dask, and raised as ``KeyboardInterrupt`` between its calls (:meth:`stop_if_received`).

    A ``KeyboardInterrupt`` raised inside a blocking Dask call (``distributed.utils.sync``)
    can make Dask's own cancel callback fail with a ``NameError`` traceback on its event
    loop; noted here, the signal stops the sweep at most :data:`POLL` seconds later, the
    same way, with nothing printed but the summary. A second Ctrl-C raises at once. Only in
    the main thread (where signals are delivered); a signal the caller ignores stays ignored.
    """

    def __init__(self) -> None:
        self.received: int | None = None
        self.previous: dict[int, Any] = {}

    def __enter__(self) -> _SignalsBetweenCalls:
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, *STOP_SIGNALS):
                if signal.getsignal(sig) is not signal.SIG_IGN:
                    self.previous[sig] = signal.signal(sig, self._note)
        return self

    def __exit__(self, *exc: object) -> None:
        for sig, previous in self.previous.items():
            signal.signal(sig, previous)

    def _note(self, signum, frame) -> None:
        if self.received is not None and signum == signal.SIGINT:
            raise KeyboardInterrupt  # pressed again: at once
        if self.received is None:
            self.received = signum

    def stop_if_received(self) -> None:
        """Raise ``KeyboardInterrupt`` (with :class:`_Stopping` told which stop signal, if
        not Ctrl-C) when a signal was noted."""
        if self.received is None:
            return
        if self.received != signal.SIGINT and _Stopping.received is None:
            _Stopping.received = self.received
        raise KeyboardInterrupt(signal.Signals(self.received).name)


def _outcome(fut, run: Run, root: Path) -> dict[str, Any] | None:
    """The outcome of a finished future: the run's, or a failure with the reason; None when
    its result is not had within :data:`GATHER` seconds (it went with its worker's job, and
    Dask computes the run again: the caller waits for it as for any other)."""
    from distributed import KilledWorker  # lazy: Dask only for sweeps on workers

    try:
        return fut.result(timeout=GATHER)
    except TimeoutError as exc:
        if fut.status != "error":  # not the run's own error: its result is being computed again
            return None
        error = first_line(exc)
    except KilledWorker as exc:  # its workers died while running it, allowed-failures + 1 times
        error = (f"KilledWorker: its worker died each time it ran ({first_line(exc)}); it kills "
                 "its worker, or the workers' jobs end too soon (walltime, memory, node)")
    except Exception as exc:  # the run could not be started or its result not be had
        error = first_line(exc)
    partial = run.failed_notebook(root)
    return {"key": run.key, "status": "failed", "error": error,
            "notebook": os.path.relpath(partial, root) if partial else None}


def summary(outcomes: list[dict[str, Any]]) -> str:
    """Counts, one line per run skipped for a reason other than being done, one paragraph
    per failed run naming the notebook that shows the error, and the final list of the data
    sources that could not be had, each with its reason (how to provide it first).

    Parameters
    ----------
    outcomes : list of dict
        As returned by :func:`run_sweep` (or carried by :class:`SweepStopped`, whose
        ``todo`` outcomes are counted with their reason).

    Returns
    -------
    str
        The summary; a skipped run's ``reason`` and a failed run's ``error`` are shown
        by their first line (the exception's type and the first line of its message),
        never cut.

    Examples
    --------
    >>> print(summary([{"key": "a", "status": "ok"}, {"key": "b", "status": "failed",
    ...                 "error": "ValueError: boom", "notebook": "results/s/b/failed.ipynb"}]))
      FAILED b: see results/s/b/failed.ipynb
        ValueError: boom
    sweep: 1 ran, 0 skipped, 1 failed
    >>> print(summary([{"key": "a", "status": "skipped", "reason": DONE},
    ...                {"key": "c", "status": "skipped", "reason": "running elsewhere"}]))
      SKIPPED c: running elsewhere
    sweep: 0 ran, 2 skipped (1 already done, 1 not run), 0 failed
    >>> print(summary([{"key": "a", "status": "ok"}, {"key": "b", "status": "todo",
    ...                 "reason": "interrupted"}]))
    sweep: 1 ran, 0 skipped, 0 failed, 1 todo (interrupted)
    >>> print(summary([{"key": "d", "status": "skipped", "reason": "data source 'x' cannot be had",
    ...                 "sources": {"x": "data source 'x' cannot be had: put x.csv in data/"}}]))
      SKIPPED d: data source 'x' cannot be had
    data sources that cannot be had here (1), so their runs were skipped:
      data source 'x' cannot be had: put x.csv in data/
    sweep: 0 ran, 1 skipped (1 not run), 0 failed
    >>> print(summary([{"key": "e", "status": "ok", "partial": {"x": "data source 'x' cannot be "
    ...                 "had: put x.csv in data/"}}]))
      IN PART e: data source 'x' cannot be had; the part that reads it was skipped
    data sources that cannot be had here (1), so their runs ran in part:
      data source 'x' cannot be had: put x.csv in data/
    sweep: 1 ran (1 in part), 0 skipped, 0 failed
    """
    counts = {s: sum(o["status"] == s for o in outcomes) for s in ("ok", "skipped", "failed")}
    skipped = f"{counts['skipped']} skipped"
    n_done = sum(o["status"] == "skipped" and o.get("reason", DONE) == DONE for o in outcomes)
    if counts["skipped"]:
        parts = [f"{n_done} already done"] if n_done else []
        if counts["skipped"] > n_done:
            parts.append(f"{counts['skipped'] - n_done} not run")
        skipped += f" ({', '.join(parts)})"
    in_part = [o for o in outcomes if o["status"] == "ok" and (o.get("partial") or o.get("skipped_parts"))]
    ran = f"{counts['ok']} ran" + (f" ({len(in_part)} in part)" if in_part else "")
    head = f"sweep: {ran}, {skipped}, {counts['failed']} failed"
    n_todo = sum(o["status"] == "todo" for o in outcomes)
    if n_todo:
        head += f", {n_todo} todo ({_line(next(o for o in outcomes if o['status'] == 'todo')['reason'])})"
    lines = []
    for o in outcomes:
        if o["status"] == "skipped" and o.get("reason", DONE) != DONE:
            lines.append(f"  SKIPPED {o['key']}: {_line(o['reason'])}")
    for o in in_part:
        if o.get("partial"):
            lines.append(f"  IN PART {o['key']}: {_lacking(o['partial'])}; the part that reads "
                         f"{'them' if len(o['partial']) > 1 else 'it'} was skipped")
        for part, why in sorted(o.get("skipped_parts", {}).items()):
            if not o.get("partial"):  # a part the notebook skipped for a source the sweep did not declare
                lines.append(f"  IN PART {o['key']}: {part} was skipped: {_line(why)}")
    for o in outcomes:
        if o["status"] == "failed":
            where = o.get("notebook") or "no notebook (the run did not start or its worker died)"
            lines.append(f"  FAILED {o['key']}: see {where}\n    {_line(o['error'])}")
    lacking = {name: why for o in outcomes
               for name, why in sorted({**o.get("sources", {}), **o.get("partial", {})}.items())}
    if lacking:
        fate = " or".join(([" were skipped"] if any(o.get("sources") for o in outcomes) else [])
                          + ([" ran in part"] if in_part else []))
        lines.append(f"data sources that cannot be had here ({len(lacking)}), so their runs"
                     f"{fate}:")
        lines += [f"  {_line(why)}" for _, why in sorted(lacking.items())]
    return "\n".join([*lines, head])  # the counts last, where the eye lands


def _line(text: str) -> str:
    """The first non-empty line of ``text`` (never cut: it may end with the remedy)."""
    return next((ln.strip() for ln in str(text).splitlines() if ln.strip()), "")


def parser(prog: str = "polybias sweep", note: str | None = None) -> argparse.ArgumentParser:
    """The command line of a sweep, of every kind (:func:`main`); ``note`` goes below the
    options (an earlier spelling of the command says there what it now is)."""
    parser = argparse.ArgumentParser(prog=prog, description=__doc__.split("\n")[0], epilog=note)
    parser.add_argument("config", help="sweep YAML (e.g. configs/sweeps/default.yaml, "
                                       "configs/sweeps/validity.yaml)")
    parser.add_argument("-j", "--jobs", type=int, default=None,
                        help="parallel runs: local workers, or jobqueue workers with --cluster "
                             "(default: cores; 1 runs in this process)")
    parser.add_argument("--scheduler", default=None,
                        help="address (tcp://host:8786) or scheduler file of an existing Dask cluster")
    parser.add_argument("--cluster", default=None, metavar="FILE",
                        help="dask-jobqueue cluster YAML (e.g. configs/dask/slurm.yaml)")
    parser.add_argument("--gpus", type=int, default=None,
                        help="local GPU workers (default: the GPUs torch sees, when a run asks for one)")
    parser.add_argument("--force", action="store_true", help="rerun runs that are already done")
    parser.add_argument("--only", default=None,
                        help="run only keys containing this text (comma-separated: any of them; "
                             "a whole key: that run alone; validity: blocks language/family, "
                             "e.g. en/mlm,bn/mlm)")
    parser.add_argument("--shard", default="0/1", metavar="I/N",
                        help="run every N-th of the selected runs from the I-th (0-based)")
    parser.add_argument("--limit", type=int, default=None, metavar="N",
                        help="stop after N runs not yet done (the others are left todo)")
    parser.add_argument("--list", action="store_true", help="list the runs and exit")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")
    parser.add_argument("--pins", "--lock", default=None, metavar="FILE", dest="pins",
                        help="pin file of hub commits (default: <config stem>.pins.yaml beside "
                             "the config when there is one; see polybias pin); --lock is its "
                             "earlier name")
    parser.add_argument("--no-pins", "--no-lock", action="store_true", dest="no_pins",
                        help="ignore any pin file (--no-lock: its earlier name)")
    validity = parser.add_argument_group("validity sweep (kind: validity)")
    validity.add_argument("--order", default="plan", choices=["plan", "balanced-first"],
                          help="balanced-first: the extra balanced models of every block first")
    validity.add_argument("--first", default="",
                          help="with --order balanced-first: comma-separated blocks to complete first")
    validity.add_argument("--carry-committed", action="store_true",
                          help="do not rerun the models the committed summary holds; carry their "
                               "rows into the new summary as committed")
    validity.add_argument("--allow-missing", action="store_true",
                          help="write the summary from the records there are")
    validity.add_argument("--summary-only", action="store_true",
                          help="only collect the records into the summary")
    return parser


def _finish(kind: str, config: str, options: dict[str, Any]) -> int:
    """Run a sweep kind's ``finish`` and print what it says; 1 when it refuses (a
    ``ValueError``, e.g. records missing), naming why."""
    try:
        print(kind_module(kind).finish(config, options))
    except SweepError:
        raise
    except ValueError as exc:
        print(f"polybias sweep: {exc}", file=sys.stderr)
        return 1
    return 0


#: Signals that stop a sweep as Ctrl-C does (a batch system's walltime or ``scancel`` sends
#: SIGTERM, a closed terminal SIGHUP): the summary, the workers closed, exit 128 + signal.
STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


class _Stopping:
    """Which stop signal, if any, interrupted the sweep (:data:`STOP_SIGNALS`)."""

    received: int | None = None

    @classmethod
    def handler(cls, signum, frame):
        if cls.received is None:
            cls.received = signum
            raise KeyboardInterrupt(signal.Signals(signum).name)


def _interrupted_by() -> tuple[int, str]:
    """The exit status and words of an interruption: 130 and Ctrl-C, or 128 + the signal."""
    if _Stopping.received is None:
        return 130, "interrupted (Ctrl-C)"
    return 128 + int(_Stopping.received), f"terminated ({signal.Signals(_Stopping.received).name})"


def earlier_spelling(argv: list[str] | None, module: str, kind: str, what: str) -> int:
    """``python -m MODULE CONFIG [options]``, the earlier spelling of a sweep kind's command:
    :func:`main` on ``argv`` (default: the command line) with ``--jobs 1`` unless it names
    ``--jobs``, the help saying what to use instead (``what``: the sweep, for the note)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if not any(a in ("-j", "--jobs") or a.startswith("--jobs=") for a in argv):
        argv += ["--jobs", "1"]
    return main(argv, prog=f"python -m {module}",
                note=f"This is the earlier spelling of `polybias sweep CONFIG --jobs 1`: {what} is a "
                     f"sweep of the one runner (kind: {kind}). Use polybias sweep.", kind=kind)


def main(argv: list[str] | None = None, prog: str = "polybias sweep",
         note: str | None = None, kind: str | None = None) -> int:
    """``polybias sweep``: :func:`_main` with SIGTERM and SIGHUP handled as Ctrl-C (exit
    status 143 or 129, the same summary, the workers closed)."""
    installed = {}
    if threading.current_thread() is threading.main_thread():
        _Stopping.received = None
        for sig in STOP_SIGNALS:
            installed[sig] = signal.signal(sig, _Stopping.handler)
    try:
        return _main(argv, prog, note, kind)
    finally:
        for sig, previous in installed.items():
            signal.signal(sig, previous)


def _main(argv: list[str] | None = None, prog: str = "polybias sweep",
          note: str | None = None, kind: str | None = None) -> int:
    """``polybias sweep CONFIG [options]``: run a sweep of any kind, print its summary.
    Exit status: 0, 1 (a run failed, no workers, or a kind's ``finish`` refused), 2 (a
    malformed sweep or command line), 130 (Ctrl-C). ``prog`` and ``note``: how the command
    is spelt and what its help says below the options; ``kind``: the sweep's kind whatever
    the file says (:data:`KINDS`)."""
    cli = parser(prog, note)
    args = cli.parse_args(argv)
    index, _, count = args.shard.partition("/")
    try:
        shard = (int(index), int(count or 1))
    except ValueError:
        cli.error(f"--shard must be I/N, e.g. 0/4; got {args.shard!r}")
    if args.limit is not None and args.limit < 0:
        cli.error("--limit must be at least 0")
    options = {"order": args.order, "first": [b for b in args.first.split(",") if b],
               "carry_committed": args.carry_committed, "allow_missing": args.allow_missing,
               "summary_only": args.summary_only, "kind": kind}
    if args.scheduler and args.cluster:
        cli.error("--scheduler and --cluster exclude each other")
    if args.jobs is not None and args.jobs < 1:
        cli.error("--jobs must be at least 1")
    if args.pins and args.no_pins:
        cli.error("--pins and --no-pins exclude each other")
    pins = None if args.no_pins else (args.pins or True)
    try:
        kind = kind or sweep_kind(args.config)
        given = [f"--{k.replace('_', '-')}" for k in KIND_OPTIONS
                 if options[k] != cli.get_default(k) and options[k] != []]
        if KINDS[kind] is None and given:
            cli.error(f"{', '.join(given)}: options of a validity sweep, not of a notebook sweep")
        if args.summary_only:
            return _finish(kind, args.config, options)
        if args.list:
            root = paths.project_root()
            for r in load_sweep(args.config, pins, options):
                state = r.state(root)
                extra = f"  [{', '.join(f'{k}={v:g}' for k, v in r.resources.items())}]" if r.resources else ""
                print(f"{state:6s} {r.key}{extra}")
            return 0
        outcomes = run_sweep(args.config, args.jobs, args.force, args.only, scheduler=args.scheduler,
                             cluster_config=args.cluster, gpus=args.gpus,
                             progress=not args.no_progress, pins=pins, shard=shard,
                             limit=args.limit, options=options)
        failed = any(o["status"] == "failed" for o in outcomes)
        if KINDS[kind] is not None and not failed:
            print(summary(outcomes))
            return _finish(kind, args.config, options)
    except SweepError as exc:
        print(f"polybias sweep: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # before the sweep was read, or a second Ctrl-C while stopping
        status, words = _interrupted_by()
        print(f"sweep: {words} before its runs were counted; --list shows them")
        print(f"polybias sweep: {words}", file=sys.stderr)
        return status
    except SweepStopped as stop:
        print(summary(stop.outcomes))
        if stop.interrupted:
            status, words = _interrupted_by()
            print(f"polybias sweep: {words}; the runs left todo run on the next call",
                  file=sys.stderr)
            return status
        print(f"polybias sweep: {_line(str(stop.cause))}", file=sys.stderr)
        return 1
    shown = headlines(args.config, outcomes)
    if shown:
        print(shown)
    print(summary(outcomes))
    return 1 if any(o["status"] == "failed" for o in outcomes) else 0


def headlines(config: str | Path, outcomes: list[dict[str, Any]], root: str | Path | None = None,
              per_run: int = 3, limit: int = 10) -> str:
    """The headline numbers of the runs this sweep ran (:func:`polybias.runner.execution.headline`,
    at most ``per_run`` lines each, for at most ``limit`` runs; the others counted), printed
    before the summary. Empty when no run ran or none wrote a record."""
    ran = [o["key"] for o in outcomes if o["status"] == "ok" and "note" not in o]
    if not ran:
        return ""
    root = Path(root) if root else paths.project_root()
    runs = {r.key: r for r in _notebook_runs(config)}
    lines = []
    for key in ran[:limit]:
        if key in runs:
            text = execution.headline(runs[key].folder(root), limit=per_run).splitlines()
            if len(text) > 1:  # a run that wrote no record has no headline
                lines += [f"{key}:", *text[1:]]
    if len(ran) > limit:
        lines.append(f"... and {len(ran) - limit} more run(s): polybias results or polybias export "
                     "--sweep reads them all")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
