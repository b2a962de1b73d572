"""Worker jobs of a batch system (SLURM, PBS, ...) for ``polybias sweep --cluster FILE``.

dask-jobqueue submits one batch job per Dask worker but leaves the rest to its caller:
a job that dies (cancelled, past its walltime, node lost) is not replaced, a submission
the scheduler rejects is only logged from a background task, and nothing says when no
worker ever arrives. :class:`JobPool` keeps a sweep's jobs alive and turns each of those
into something the sweep can act on:

- a worker job lost after its worker had connected is replaced by a new submission, at
  most ``max-resubmits`` times in one sweep; the runs it held are retried elsewhere by
  Dask (a run whose workers die ``distributed.scheduler.allowed-failures`` + 1 times
  fails with the reason);
- a worker job that ends before its worker connects (cancelled while queued, a job
  script that fails; SLURM, whose ``squeue`` gives the job's state) is replaced the same
  way, and the error that ends the sweep names those jobs and their states;
- a rejected submission (``sbatch: error: ...``) raises :class:`ClusterError` quoting the
  scheduler's message and naming the key of the cluster file to fix;
- no worker connected for ``start-timeout`` seconds while runs wait raises
  :class:`ClusterError` with the jobs' states as the batch system reports them.

Messages name the jobs by the batch system's job name (``name`` in the file) and id, as
``squeue`` shows them. Each job runs in a scratch folder of its own in the node's
temporary folder (:data:`JOB_SCRATCH`): the runs' kernels and the Dask worker's
scratch space (unless ``local-directory`` names another place) are there, and the job
script removes it when the job ends, cancelled (SIGTERM) included.

The cluster file holds the cluster class's arguments under ``jobqueue: {<system>: ...}``
(as in dask-jobqueue's own configuration) and, optionally, the pool's settings::

    jobqueue:
      slurm:
        name: polybias-worker       # the job name the batch system shows (squeue)
        cores: 1
        memory: 8GB
        ...
    sweep:
      start-timeout: 3600           # seconds without any worker before the sweep gives up
      max-resubmits: 8              # lost worker jobs replaced, at most, in one sweep

``name`` is the batch job's name (dask-jobqueue's configuration-file meaning, not the
constructor's), and the Dask dashboard is off unless ``scheduler-options`` asks for it
(``dashboard_address: ":8787"``).
"""

from __future__ import annotations

import logging
import re
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from polybias import paths

log = logging.getLogger(__name__)

CLASSES = {"slurm": "SLURMCluster", "pbs": "PBSCluster", "sge": "SGECluster",
           "lsf": "LSFCluster", "htcondor": "HTCondorCluster", "oar": "OARCluster",
           "moab": "MoabCluster"}
"""Batch systems (the key under ``jobqueue:``) -> dask-jobqueue cluster class."""
TOP_KEYS = ("jobqueue", "sweep")
"""Keys of a cluster file's top level."""
SETTINGS = {"start-timeout": 3600.0, "max-resubmits": None}
"""The ``sweep:`` settings and their defaults (``max-resubmits``: twice the jobs)."""
NO_DASHBOARD = "127.0.0.1:0"
"""Where the scheduler's HTTP server (health checks; no dashboard) listens unless the
file asks for a dashboard: a free port of this host only."""
LOST_GRACE = 5.0
"""Seconds a job's workers may be away before the job counts as lost (a nanny restarts
a worker process that died in far less)."""
QUEUE_LOOK = 5.0
"""Seconds between looks at the batch states of jobs whose worker has not connected."""
ENDED = frozenset({"BOOT_FAIL", "CANCELLED", "COMPLETED", "DEADLINE", "FAILED", "NODE_FAIL",
                   "OUT_OF_MEMORY", "PREEMPTED", "REVOKED", "SPECIAL_EXIT", "TIMEOUT"})
"""SLURM states of a job that has ended (``squeue -t all`` lists them for ``MinJobAge``)."""
NEVER_STARTS = {
    "PartitionConfig": ("cores (or memory)", "ask for no more than a node of the partition has"),
    "PartitionNodeLimit": ("cores (or memory)", "ask for no more nodes or CPUs than the partition allows"),
    "PartitionTimeLimit": ("walltime", "ask for no more time than the partition allows"),
    "BadConstraints": ("job-extra-directives", "drop the --constraint no node satisfies"),
    "ReqNodeNotAvail, UnavailableNodes": ("job-extra-directives", "name nodes that are up"),
    "InvalidAccount": ("account", "name an account you may charge (sacctmgr show assoc user=$USER)"),
    "InvalidQOS": ("job-extra-directives", "name a QOS you may use"),
    "QOSMaxCpuPerJobLimit": ("cores", "ask for no more CPUs than your QOS allows"),
    "QOSMaxMemoryPerJob": ("memory", "ask for no more memory than your QOS allows"),
    "QOSMaxWallDurationPerJobLimit": ("walltime", "ask for no more time than your QOS allows"),
}
"""SLURM's reasons for a pending job that will never start as submitted (its request
exceeds what the partition, its nodes or the QOS allow): the ``jobqueue.slurm`` key to fix
and how. A job pending for one of these ends the sweep at once, not at the start timeout."""
WAITING = frozenset({"Priority", "Resources", "BeginTime", "Dependency", "JobHeldUser",
                     "JobHeldAdmin", "ReqNodeNotAvail", "Reservation", "None"})
"""SLURM's reasons for a pending job that a busier or later queue explains."""
GONE = "GONE"
"""The state of a job that neither ``squeue`` nor ``sacct`` lists any more (purged after
``MinJobAge``, no accounting): it has ended."""
JOB_SCRATCH = (
    'polybias_job_tmp=$(mktemp -d "${TMPDIR:-/tmp}/polybias-job-XXXXXX")',
    'trap \'rm -rf "$polybias_job_tmp"\' EXIT',
    "trap 'exit 143' TERM",
    'export TMPDIR="$polybias_job_tmp"',
)
"""Job-script lines put before the file's ``job-script-prologue``: a scratch folder of
the job's own becomes its ``TMPDIR`` (the kernels' sockets, Dask's scratch space) and is
removed when the script exits. SIGTERM (``scancel``, the walltime) reaches every process
of the job; the ``TERM`` trap makes the shell exit through its ``EXIT`` trap once the
worker has stopped, rather than die with the folder left behind."""

#: key of ``jobqueue.<system>`` to fix, by a pattern of the scheduler's rejection message
_HINTS = (
    (r"partition", "queue", "name a partition that sinfo lists"),
    (r"gres|generic resource", "job-extra-directives",
     "on a site without GPUs, drop --gres from it and --resources GPU=1 from worker-extra-args"),
    (r"account|association", "account", "name an account you may charge (sacctmgr show assoc user=$USER)"),
    (r"memory|--mem\b|mem-per", "memory", "ask for no more memory than a node has"),
    (r"time limit|walltime", "walltime", "ask for no more time than the partition allows"),
    (r"cpu|processor|core", "job-cpu", "ask for no more CPUs than a node has"),
    (r"node configuration|node count|nodes? not available", "job-extra-directives",
     "ask only for resources the partition's nodes have (sinfo -o '%P %c %m %G')"),
)


class ClusterConfigError(ValueError):
    """A cluster file is malformed."""


class ClusterError(RuntimeError):
    """The batch system cannot give the sweep workers: a submission was rejected, no
    worker arrived in time, or every job was lost past the resubmission limit."""


def read_config(path: str | Path) -> tuple[str, dict[str, Any], dict[str, Any]]:
    """Read a cluster file.

    Parameters
    ----------
    path : str or Path
        YAML with one mapping ``jobqueue: {<system>: {...}}`` and an optional ``sweep:``
        mapping of :data:`SETTINGS`.

    Returns
    -------
    system : str
        The batch system (a key of :data:`CLASSES`).
    options : dict
        The cluster class's keyword arguments (dashes turned into underscores, ``name``
        into ``job_name``, the dashboard off unless ``scheduler-options`` gives a
        ``dashboard_address``, :data:`JOB_SCRATCH` first in ``job_script_prologue``).
    settings : dict
        :data:`SETTINGS` updated from the file.

    Raises
    ------
    ClusterConfigError
        On an unknown top-level key, a ``jobqueue`` section that is not one mapping of a
        known system, or an unknown or invalid ``sweep`` setting.
    """
    raw = paths.read_yaml(path, ClusterConfigError, "cluster config")
    if isinstance(raw, dict):
        unknown = [str(k) for k in raw if k not in TOP_KEYS]
        if unknown:
            raise ClusterConfigError(f"{path}: unknown key(s) {', '.join(map(repr, unknown))}; "
                                     f"valid keys: {', '.join(TOP_KEYS)}")
    sections = raw.get("jobqueue") if isinstance(raw, dict) else None
    if not isinstance(sections, dict) or len(sections) != 1 or next(iter(sections)) not in CLASSES \
            or not isinstance(next(iter(sections.values())), dict):
        raise ClusterConfigError(f"{path}: expected one mapping 'jobqueue: {{<system>: {{...}}}}' with "
                                 f"<system> one of {', '.join(CLASSES)}")
    system, given = next(iter(sections.items()))
    options = {str(k).replace("-", "_"): v for k, v in given.items()}
    if "name" in options:  # the job's name, as in dask-jobqueue's configuration file
        options["job_name"] = options.pop("name")
    if system != "htcondor":  # a shell script (HTCondor's jobs are not)
        options["job_script_prologue"] = [*JOB_SCRATCH, *(options.get("job_script_prologue") or [])]
    scheduler = dict(options.get("scheduler_options") or {})
    if "dashboard_address" not in scheduler:  # no dashboard, and no fixed port (8787), unless asked
        scheduler.update(dashboard=False, dashboard_address=NO_DASHBOARD)
    options["scheduler_options"] = scheduler
    settings = dict(SETTINGS)
    sweep = raw.get("sweep") or {}
    if not isinstance(sweep, dict):
        raise ClusterConfigError(f"{path}: 'sweep' must be a mapping of {', '.join(SETTINGS)}")
    for key, value in sweep.items():
        if key not in SETTINGS:
            raise ClusterConfigError(f"{path}: sweep: unknown key {key!r}; valid keys: "
                                     f"{', '.join(SETTINGS)}")
        if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
            raise ClusterConfigError(f"{path}: sweep.{key} must be a number >= 0; got {value!r}")
        settings[key] = value
    return system, options, settings


def _import_dask_jobqueue():
    """dask_jobqueue, imported without the SIGINT handler its runner module installs.

    Importing it replaces the SIGINT handler by one that calls ``sys.exit()``, so Ctrl-C
    would end a sweep with status 0 and no summary; the handler in force before is put
    back, and a Ctrl-C that met that handler during the import is a KeyboardInterrupt.
    """
    main = threading.current_thread() is threading.main_thread()
    before = signal.getsignal(signal.SIGINT) if main else None
    try:
        import dask_jobqueue  # lazy: an optional dependency (the 'slurm' extra)
    except SystemExit:  # Ctrl-C met that handler before it was replaced
        raise KeyboardInterrupt from None
    except ImportError as exc:
        raise ClusterConfigError("--cluster needs dask-jobqueue: pip install dask-jobqueue") from exc
    finally:
        if main and before is not None:
            signal.signal(signal.SIGINT, before)
    return dask_jobqueue


def _supervised_job_class(base: type, rejected: list[str]) -> type:
    """``base`` (a dask-jobqueue Job class) whose rejected submissions land in ``rejected``.

    dask-jobqueue submits from a background task of the cluster, where an exception is
    only logged ("Task exception was never retrieved") and the job is left half-started
    (then ``cluster.close()`` fails on it). Here the submission command's message is kept
    for :meth:`JobPool.check`, which raises it, and the job is marked started with no job
    id (closing it cancels nothing).
    """
    from distributed.core import Status  # lazy: Dask only for sweeps on workers

    class Supervised(base):
        async def start(self):
            try:
                await super().start()
            except Exception as exc:  # the submission command failed: keep its message
                rejected.append(_rejection(exc))
                self.job_id = None
                self.status = Status.running

        async def close(self):
            try:
                await super().close()
            finally:
                self.status = Status.closed

    Supervised.__name__ = Supervised.__qualname__ = base.__name__
    return Supervised


def _rejection(exc: BaseException) -> str:
    """The scheduler's own words from a failed submission (``sbatch: error: ...``)."""
    if isinstance(exc, OSError):  # no submission command here (not a login node?)
        return f"cannot run the submission command ({exc})"
    text = str(exc)
    stderr = text.split("stderr:", 1)[1] if "stderr:" in text else text
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    errors = [ln for ln in lines if "error" in ln.lower()]
    return "; ".join(errors or lines) or type(exc).__name__


def hint(system: str, message: str) -> str:
    """The key of ``jobqueue.<system>`` a scheduler's rejection message points at, and what to do.

    >>> hint("slurm", "sbatch: error: Invalid generic resource (gres) specification")
    'jobqueue.slurm.job-extra-directives (on a site without GPUs, drop --gres from it and --resources GPU=1 from worker-extra-args)'
    >>> hint("slurm", "sbatch: error: invalid partition specified: gpu")
    'jobqueue.slurm.queue (name a partition that sinfo lists)'
    """
    for pattern, key, advice in _HINTS:
        if re.search(pattern, message, re.IGNORECASE):
            return f"jobqueue.{system}.{key} ({advice})"
    return f"the jobqueue.{system} section"


def job_states(system: str, job_ids: Iterable[str]) -> dict[str, str]:
    """Job id -> the batch system's state and reason (SLURM's ``squeue``), for messages.

    Empty for other systems, when the command is missing, or when it fails.
    """
    return _queue_states(system, job_ids) or {}


def _queue_states(system: str, job_ids: Iterable[str]) -> dict[str, str] | None:
    """:func:`job_states`, or None when the batch system could not be asked.

    ``squeue`` first (state and reason); a job it no longer lists (it exits 1 when it lists
    none of them) is looked up in ``sacct``, and one neither lists is :data:`GONE`: purged
    from the queue after it ended, so it is counted as ended rather than waited for."""
    ids = [str(j) for j in job_ids if j]
    if system != "slurm" or not ids or shutil.which("squeue") is None:
        return None
    try:
        done = subprocess.run(["squeue", "-h", "-t", "all", "-j", ",".join(ids), "-o", "%i %T %r"],
                              capture_output=True, text=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    states = {}
    if done.returncode == 0:
        for line in done.stdout.splitlines():
            parts = line.split(None, 2)
            if len(parts) >= 2:
                states[parts[0]] = parts[1] + (f" ({parts[2]})" if len(parts) > 2 and parts[2] != "None" else "")
    elif "invalid job id" not in (done.stderr + done.stdout).lower():
        return None  # squeue failed for another reason (no controller): the queue cannot be asked
    missing = [j for j in ids if j not in states]
    if missing:
        states.update(_accounting_states(missing))
    return states


def _accounting_states(job_ids: list[str]) -> dict[str, str]:
    """The states ``sacct`` gives the jobs ``squeue`` no longer lists; :data:`GONE` for one
    it does not list either (or when there is no accounting)."""
    states = {}
    if shutil.which("sacct") is not None:
        try:
            done = subprocess.run(["sacct", "-n", "-P", "-X", "-j", ",".join(job_ids), "-o", "JobID,State"],
                                  capture_output=True, text=True, timeout=30, check=False)
        except (OSError, subprocess.SubprocessError):
            done = None
        if done is not None and done.returncode == 0:
            for line in done.stdout.splitlines():
                job, _, state = line.partition("|")
                if job.strip() in job_ids and state.strip():
                    states[job.strip()] = state.split()[0]  # "CANCELLED by 0" -> CANCELLED
    return {j: states.get(j, f"{GONE} (listed by neither squeue nor sacct)") for j in job_ids}


def never_starts(state: str) -> tuple[str, str] | None:
    """The ``jobqueue.slurm`` key to fix, and how, when a job's state says it will never
    start as submitted (:data:`NEVER_STARTS`); None otherwise.

    >>> never_starts("PENDING (PartitionConfig)")
    ('cores (or memory)', 'ask for no more than a node of the partition has')
    >>> never_starts("PENDING (Priority)") is None, never_starts("RUNNING") is None
    (True, True)
    """
    match = re.fullmatch(r"PENDING \((.+)\)", state)
    return NEVER_STARTS.get(match[1]) if match else None


def make_cluster(path: str | Path):
    """The dask-jobqueue cluster a cluster file describes, with no job submitted yet.

    Returns
    -------
    cluster : dask_jobqueue.JobQueueCluster
        Its jobs' submissions are supervised (see :class:`JobPool`); ``cluster.rejected``
        lists the messages of rejected submissions.
    system : str
    settings : dict
        As :func:`read_config` returns them.
    """
    system, options, settings = read_config(path)
    dask_jobqueue = _import_dask_jobqueue()
    cls = getattr(dask_jobqueue, CLASSES[system])
    rejected: list[str] = []
    try:
        cluster = cls(job_cls=_supervised_job_class(cls.job_cls, rejected), **options)
    except (TypeError, ValueError) as exc:  # dask-jobqueue's words for an unknown option
        raise ClusterConfigError(f"{path}: jobqueue.{system}: {exc}") from exc
    cluster.rejected = rejected
    return cluster, system, settings


class JobPool:
    """Keep ``jobs`` worker jobs of a dask-jobqueue cluster for a sweep.

    Parameters
    ----------
    path : str or Path
        The cluster file (see the module docstring).
    jobs : int
        Worker jobs to keep.

    Attributes
    ----------
    cluster : dask_jobqueue.JobQueueCluster
    resubmitted : int
        Lost jobs replaced so far.
    lost : list of str
        One line per job lost (its name, batch job id and state).
    ended_early : list of str
        Those of ``lost`` that ended before their worker connected.
    """

    def __init__(self, path: str | Path, jobs: int):
        self.path = Path(path)
        self.jobs = jobs
        self.cluster, self.system, settings = make_cluster(path)
        try:  # Ctrl-C now must not leave the scheduler (and its jobs) behind
            dummy = self.cluster._dummy_job
            self.job_name = str(dummy.job_name)  # the batch job's name, as squeue shows it
            self.log_directory = getattr(dummy, "log_directory", None)
            self.start_timeout = float(settings["start-timeout"])
            limit = settings["max-resubmits"]
            self.max_resubmits = int(2 * jobs if limit is None else limit)
            self.resubmitted = 0
            self.lost: list[str] = []
            self.ended_early: list[str] = []
            self._seen: set[str] = set()
            self._names_used: set[str] = set()
            self._away: dict[str, float] = {}
            self._idle_since = self._looked = time.monotonic()
            self.cluster.scale(jobs=jobs)
        except BaseException:
            self.close()
            raise

    def _job(self, job: str, state: str | None = None) -> str:
        """``<job name> job <id>: <state>``: a worker job as the batch system shows it."""
        jid = getattr(self.cluster.workers.get(job), "job_id", None)
        if state is None:
            state = job_states(self.system, [jid]).get(str(jid), "not in the queue") if jid else None
        where = f"{self.job_name} job {jid}" if jid else f"{self.job_name} job (not submitted yet)"
        return f"{where}: {state}" if state else where

    def _logs(self) -> str:
        """Where the jobs' logs are, for messages."""
        return (f"the jobs' logs in {self.log_directory}" if self.log_directory
                else "the jobs' logs (set jobqueue log-directory to keep them)")

    def _names(self, job: str) -> set[str]:
        """The Dask worker names of one job (its processes, when it runs several)."""
        spec = self.cluster.worker_spec.get(job, {})
        return {f"{job}{suffix}" for suffix in spec["group"]} if "group" in spec else {job}

    def check(self, client) -> None:
        """Raise on a rejected submission or a wait past the start timeout; replace lost jobs.

        Call it every few seconds while runs wait.

        Raises
        ------
        ClusterError
            A submission was rejected (the scheduler's message and the key to fix); no
            worker was connected for ``start-timeout`` seconds; or every job was lost
            and ``max-resubmits`` replacements were used up.
        """
        if self.cluster.rejected:
            message = self.cluster.rejected[0]
            raise ClusterError(f"the batch system rejected a worker job: {message} -- fix "
                               f"{hint(self.system, message)} in {self.path}")
        now = time.monotonic()
        connected = {str(w.get("name")) for w in client.scheduler_info()["workers"].values()}
        if connected:
            self._idle_since = now
        self._names_used.update(self.cluster.worker_spec)
        for job in list(self.cluster.worker_spec):
            names = self._names(job)
            if names & connected:
                self._seen.add(job)
                self._away.pop(job, None)
            elif job in self._seen and now - self._away.setdefault(job, now) >= LOST_GRACE:
                self._replace(job)
        if now - self._looked >= QUEUE_LOOK:
            self._looked = now
            self._replace_ended(connected)
        if connected:
            return
        if self.resubmitted >= self.max_resubmits and self.lost and not self.cluster.worker_spec:
            last = self.lost[-self.jobs:]
            if all(line in self.ended_early for line in last):
                raise ClusterError(
                    f"every worker job ended before its worker connected ({'; '.join(last)}) and "
                    f"the {self.max_resubmits} replacements allowed are used up -- read why in "
                    f"{self._logs()}; the job script is in the first lines of each")
            raise ClusterError(
                f"every worker job was lost ({'; '.join(last)}) and the "
                f"{self.max_resubmits} replacements allowed are used up -- raise "
                f"sweep.max-resubmits in {self.path}, or look for why the jobs end in "
                f"{self._logs()}")
        if now - self._idle_since > self.start_timeout:
            ids = {job: getattr(w, "job_id", None) for job, w in self.cluster.workers.items()}
            states = job_states(self.system, ids.values())
            jobs = ", ".join(self._job(job, states.get(str(jid), "not in the queue") if jid else None)
                             for job, jid in ids.items()) or "none submitted"
            queued = [s for s in states.values() if s.startswith("PENDING")]
            if queued:  # the cause is the queue: its jobs still wait, whatever ended before
                reasons = sorted({s[len("PENDING"):].strip(" ()") or "no reason given" for s in queued})
                ended = (f"; {len(self.ended_early)} earlier job(s) ended before their worker "
                         f"connected ({'; '.join(self.ended_early[-self.jobs:])})" if self.ended_early else "")
                raise ClusterError(
                    f"no Dask worker connected within {self.start_timeout:g} s ({jobs}){ended} -- "
                    f"the queue is busy: {len(queued)} job(s) still wait ({', '.join(reasons)}); raise "
                    f"sweep.start-timeout in {self.path}, or ask for fewer resources per job")
            if self.ended_early:
                raise ClusterError(
                    f"no Dask worker connected within {self.start_timeout:g} s ({jobs}); "
                    f"{len(self.ended_early)} worker job(s) ended before their worker connected "
                    f"({'; '.join(self.ended_early[-self.jobs:])}) -- read why in {self._logs()}")
            raise ClusterError(
                f"no Dask worker connected within {self.start_timeout:g} s ({jobs}) -- raise "
                f"sweep.start-timeout in {self.path} if the queue is slow, or read "
                f"{self._logs()} if they end before their worker connects")

    def _replace_ended(self, connected: set[str]) -> None:
        """Replace the jobs that ended (by the batch system's word) before their worker
        connected: cancelled while queued, or a job script that failed."""
        waiting = {job: getattr(self.cluster.workers.get(job), "job_id", None)
                   for job in self.cluster.worker_spec
                   if job not in self._seen and not self._names(job) & connected}
        waiting = {job: jid for job, jid in waiting.items() if jid}
        states = _queue_states(self.system, waiting.values()) if waiting else None
        for job, jid in (waiting.items() if states else ()):
            state = states.get(str(jid), "")
            fix = never_starts(state)
            if fix is not None:  # no wait helps: say so now, naming what to change
                key, how = fix
                raise ClusterError(f"worker job {self._job(job, state)} can never start as submitted "
                                   f"-- {how}: fix jobqueue.{self.system}.{key} in {self.path}")
            if state.split(" ", 1)[0] in ENDED or state.startswith(GONE):
                self._replace(job, state, early=True)

    def _replace(self, job: str, state: str | None = None, early: bool = False) -> None:
        what = self._job(job, state)  # no state given: squeue's now
        how = "ended before its worker connected" if early else "lost"
        self.lost.append(what)
        if early:
            self.ended_early.append(what)
        self._seen.discard(job)
        self._away.pop(job, None)
        del self.cluster.worker_spec[job]  # forget it: the cluster cancels it ...
        if self.resubmitted < self.max_resubmits:
            self.resubmitted += 1
            # ... and submits its replacement under a name never used: the cluster would
            # reuse the lost one's, and then close the new job when the old one's removal
            # timer (distributed.deploy.lost-worker-timeout) fires
            self.cluster.worker_spec[self._new_name()] = self.cluster.new_spec
            log.warning("worker job %s (%s); submitting a replacement (%d of %d)",
                        how, what, self.resubmitted, self.max_resubmits)
        else:
            log.warning("worker job %s (%s); the %d replacements allowed are used up",
                        how, what, self.max_resubmits)
        self.cluster.scale(jobs=len(self.cluster.worker_spec))

    def _new_name(self) -> str:
        """A job name the cluster has not used (its names are ``<cluster>-<i>``)."""
        i = len(self.cluster.worker_spec) + len(self.lost)
        while (name := self.cluster._new_worker_name(i)) in self._names_used | set(self.cluster.worker_spec):
            i += 1
        self._names_used.add(name)
        return name

    def close(self) -> None:
        """Cancel the jobs and stop the scheduler; an error is reported, never raised."""
        try:
            self.cluster.close()
        except Exception as exc:  # closing must not hide why the sweep ended
            log.error("closing the cluster of %s failed: %s: %s", self.path, type(exc).__name__, exc)
