"""A run of the sweep runner that scores one planted model and writes one JSON record.

The validity sweep (:mod:`polybias.runner.validity_sweep`), its diagnosis
(:mod:`polybias.runner.validity_diagnosis`) and the EuroGEST validity job
(:mod:`polybias.runner.validity_eurogest`) are sweep kinds of the one runner
(:data:`polybias.runner.sweep.KINDS`): plan order, ``--only``, ``--shard``, ``--limit``,
resume, locks, local or Dask and batch workers and the summary of outcomes are the runner's.
Their runs are :class:`RecordRun` s: a model run is *done* when its record exists with the
cell's hash (everything the record depends on) and holds what the cell must produce
(:meth:`RecordRun.complete`); it is executed under the runner's lock-done-skip protocol
(:func:`polybias.runner.execution.under_lock`, a file lock on ``<record>.lock``), and its
record is written atomically. A kind says only what is particular to it: where a job's record
lies (:meth:`RecordRun.relative`), how it is scored (:meth:`RecordRun.score`) and what the
record holds beside its rows (:meth:`RecordRun.header`).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import torch

from polybias.files import write_text_atomic
from polybias.runner.execution import under_lock
from polybias.runner.locks import RunLock


def record_text(record: dict[str, Any]) -> str:
    """A record as written: sorted keys, one space of indent, NaN kept, a final newline.

    >>> record_text({"rows": [{"b": 1, "a": float("nan")}], "job_hash": "x"})
    '{\\n "job_hash": "x",\\n "rows": [\\n  {\\n   "a": NaN,\\n   "b": 1\\n  }\\n ]\\n}\\n'
    """
    return json.dumps(record, sort_keys=True, indent=1, ensure_ascii=False, allow_nan=True) + "\n"


def read_record(path: Path) -> dict[str, Any] | None:
    """The record at ``path``, or None when it is missing or not JSON (a half-written
    record never exists: records are written atomically)."""
    if not path.is_file():
        return None
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError:
        return None


@dataclass(frozen=True, eq=False)
class RecordRun:
    """One job as a run of the sweep runner: score one planted model, write its record.

    ``key`` names the run (the record's path under ``records`` without ``.json``), ``job``
    the model (language, p, seed, ...), ``config`` the sweep's settings, ``records`` the
    records folder and ``digest`` the job's hash. Subclasses define :meth:`relative`,
    :meth:`score` and, where needed, :meth:`header` and :meth:`complete`.
    """

    key: str
    job: dict[str, Any]
    config: dict[str, Any]
    records: str
    digest: str
    resources: dict[str, float] = field(default_factory=dict)
    sources: tuple[str, ...] = ()
    #: a planted model reads no source study's file in part only (see ``Run.optional_sources``)
    optional_sources: tuple[str, ...] = ()
    lacking: dict[str, str] = field(default_factory=dict)

    # ---------------------------------------------------------------- what a kind defines

    def relative(self) -> str:
        """The record's path under the records folder."""
        raise NotImplementedError

    def score(self) -> list[dict[str, Any]]:
        """Train (or load) the job's model and score it: the record's rows."""
        raise NotImplementedError

    def header(self) -> dict[str, Any]:
        """What the record holds beside ``job``, ``job_hash`` and ``rows``."""
        return {}

    def complete(self, record: dict[str, Any]) -> bool:
        """Whether a record with this cell's hash holds all the cell must produce."""
        return True

    # ---------------------------------------------------------------- what the runner asks

    @property
    def path(self) -> Path:
        """The record's path."""
        return Path(self.records) / self.relative()

    def hash_in(self, root: str | Path | None = None) -> str:
        """The job hash: everything the record depends on (the root plays no part)."""
        return self.digest

    def done_record(self) -> dict[str, Any] | None:
        """The record when it is there with this job's hash and :meth:`complete`, else None."""
        record = read_record(self.path)
        if record is None or record.get("job_hash") != self.digest or not self.complete(record):
            return None
        return record

    def is_done(self, root: str | Path | None = None) -> bool:
        """Whether the record is there with this job's hash and all it must hold."""
        return self.done_record() is not None

    def marker(self, root: str | Path | None = None) -> Path:
        """The file whose writing says the cell is done: its record."""
        return Path(root or ".", self.path)

    def check(self, root: str | Path | None = None) -> None:
        """Nothing to check before it starts: a cell's values were checked when it was read."""

    def failed_notebook(self, root: str | Path | None = None) -> None:
        """None: a cell executes no notebook (its error is in the outcome)."""
        return None

    def _lock(self) -> RunLock:
        return RunLock(self.path.parent, name=self.path.name + ".lock")

    def state(self, root: str | Path | None = None) -> str:
        """``done``, ``running`` (its lock held elsewhere) or ``todo``, as ``--list`` shows."""
        if self.is_done():
            return "done"
        return "running" if self.path.parent.is_dir() and self._lock().held_elsewhere() else "todo"

    def execute(self, root: str | Path | None = None, force: bool = False) -> dict[str, Any]:
        """Score the job's model and write its record (atomically) under the record's lock,
        as :func:`polybias.runner.sweep.execute` runs a notebook: skipped when the lock is
        held elsewhere or (unless ``force``) the record is done."""
        path = self.path

        def work() -> dict[str, Any]:
            torch.set_num_threads(1)
            start, cpu = time.perf_counter(), time.process_time()
            rows = self.score()
            write_text_atomic(path, record_text({"job": self.job, "job_hash": self.digest,
                                                 **self.header(), "rows": rows}))
            return {"key": self.key, "status": "ok", "seconds": time.perf_counter() - start,
                    "cpu_seconds": time.process_time() - cpu}

        return under_lock(self.key, self._lock(), self.is_done, work, force)
