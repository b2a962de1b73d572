"""File locks of runs: one process at a time executes a run.

A run in progress holds an exclusive, non-blocking ``fcntl.flock`` on a lock file beside
its outputs: :data:`LOCK_FILE` in a notebook run's folder, ``<record>.lock`` beside a job
record of the validity sweep. The operating system releases it when the holder ends or is
killed, so a lock left by a dead sweep never blocks the next one, and two sweeps (or a
sweep and ``polybias run``) never compute the same run at the same time.

In this package *lock* means this file lock only; hub revisions pinned to commits are
*pins* (:mod:`polybias.runner.pins`).
"""

from __future__ import annotations

import fcntl
import os
import socket
from pathlib import Path
from typing import Any

LOCK_FILE = ".lock"
"""Name of the lock file in a run's folder (never listed among the run's outputs)."""


class RunLock:
    """Exclusive, non-blocking lock of a run's folder (``fcntl.flock`` on its :data:`LOCK_FILE`).

    The lock belongs to the open file of the process that took it: it is released by
    :meth:`release`, when that process exits, or when it is killed, so that a lock left
    by a dead sweep never blocks the next one. The file keeps the holder's host and pid
    for the message of the process that finds it locked.

    Parameters
    ----------
    folder : Path
        The run's folder (created when missing).
    name : str
        The lock file's name in ``folder`` (default :data:`LOCK_FILE`).
    """

    def __init__(self, folder: Path, name: str = LOCK_FILE):
        self.path = Path(folder) / name
        self._fh: Any = None

    def acquire(self) -> bool:
        """Take the lock; False (and nothing changed) when another process holds it."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fh = open(self.path, "a+", encoding="utf-8")  # noqa: SIM115 -- held until release()
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            fh.close()
            return False
        fh.seek(0)
        fh.truncate()
        fh.write(f"{socket.gethostname()} pid {os.getpid()}\n")
        fh.flush()
        self._fh = fh
        return True

    def held_elsewhere(self) -> bool:
        """Whether another process holds the lock now (creates no file: no lock file, no lock)."""
        if self._fh is not None or not self.path.is_file():
            return False
        with open(self.path, encoding="utf-8") as fh:
            try:
                fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return True
            fcntl.flock(fh.fileno(), fcntl.LOCK_UN)
        return False

    def holder(self) -> str:
        """Who holds the lock, as its holder wrote it (``host pid N``), or ``""``."""
        try:
            return self.path.read_text(encoding="utf-8").strip()
        except OSError:
            return ""

    def release(self) -> None:
        """Release the lock (closing the file releases the ``flock``)."""
        if self._fh is not None:
            self._fh.close()
            self._fh = None

    def __enter__(self) -> RunLock:
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()
