"""Lock files: a sweep's hub ids pinned to commits (``polybias lock CONFIG``).

``polybias lock CONFIG`` reads the sweep, collects the hub id of every run's model (a
registered ``hub`` model, with its registry ``revision``, or a hub id given as ``model``;
a run's own ``revision`` parameter wins) and resolves each to a 40-hex commit: online from
the hub, offline (``HF_HUB_OFFLINE=1``) from the cache's ``refs/``. It writes the lock file
(YAML, hub id → commit), by default beside the config as ``<config stem>.lock.yaml``::

    # polybias lock configs/sweeps/paper.yaml
    bert-base-uncased: 86b5e0934494bd15c9632b12f734a8a67f723594
    FacebookAI/xlm-roberta-large: c23d21b0620b635a76227c604d44e43a9f0ee389

A sweep uses the lock file beside its config when there is one (``polybias sweep CONFIG``),
or the one named by ``--lock LOCK`` (``--no-lock``: none). Each run of a hub model then
gets the locked commit as its ``revision`` parameter (so a locked run is a different run
from an unlocked one, and its records carry that commit). A hub id of the sweep that the
lock file lacks, or a run whose own 40-hex ``revision`` differs from the locked commit, is
an error before anything runs: lock again after editing the sweep or the registry. Only
runs of notebooks with a ``revision`` parameter (02-08, 12) are locked.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import yaml

SUFFIX = ".lock.yaml"
_HEX40 = re.compile(r"^[0-9a-f]{40}$")


class LockError(ValueError):
    """A lock file that cannot be written, read or applied; the message is one line."""


def default_path(config: str | Path) -> Path:
    """``<config stem>.lock.yaml`` beside ``config``."""
    config = Path(config)
    return config.with_name(config.stem + SUFFIX)


def _hub_of(model: Any, registry: dict[str, dict[str, Any]]) -> tuple[str, str | None] | None:
    """(hub id, registered revision) of a run's ``model``; None when it is not a hub model."""
    from .models import ModelError, resolve_model

    if not isinstance(model, str) or not model:
        return None
    try:
        _name, entry = resolve_model(model, registry)
    except ModelError:
        return None
    if not entry.get("hub"):
        return None
    return str(entry["hub"]), entry.get("revision")


def run_hub_ids(runs, registry: dict[str, dict[str, Any]] | None = None
                ) -> dict[str, list[tuple[str, str | None]]]:
    """Run key → [(hub id, revision asked for)] of its hub models (``model``), for the
    runs whose notebook takes a ``revision`` parameter (the others cannot be pinned)."""
    from . import paths
    from .models import load_registry
    from .sweep import notebook_parameters

    registry = registry if registry is not None else load_registry()
    root = paths.project_root()
    out = {}
    for run in runs:
        if "revision" not in notebook_parameters(root / run.notebook):
            continue
        hub = _hub_of(run.parameters.get("model"), registry)
        if hub is None:
            continue
        revision = run.parameters.get("revision") or hub[1]
        out[run.key] = [(hub[0], revision or None)]
    return out


def hub_ids(config: str | Path) -> dict[str, str | None]:
    """Hub id → revision asked for (None: ``main``) of every hub model of a sweep.

    A hub id asked for at two different revisions is a :class:`LockError` (a lock file maps
    each hub id to one commit)."""
    from .sweep import load_sweep

    wanted: dict[str, str | None] = {}
    for pairs in run_hub_ids(load_sweep(config, lock=None)).values():
        for repo_id, revision in pairs:
            if repo_id in wanted and wanted[repo_id] != revision:
                raise LockError(f"{config}: hub id {repo_id} is asked for at revisions "
                                f"{wanted[repo_id] or 'main'} and {revision or 'main'}; a lock file "
                                "holds one commit per hub id")
            wanted[repo_id] = revision
    return wanted


def make_lock(config: str | Path) -> dict[str, str]:
    """Hub id → commit for every hub model of ``config`` (resolved as the module says).

    A hub id that cannot be resolved is a :class:`LockError` naming it."""
    from .models.loading import LoadError, resolve_commit

    lock = {}
    for repo_id, revision in sorted(hub_ids(config).items(), key=lambda kv: kv[0].lower()):
        try:
            lock[repo_id] = resolve_commit(repo_id, revision)
        except LoadError as exc:
            raise LockError(f"cannot lock {repo_id}: {exc}") from None
    return lock


def write_lock(lock: dict[str, str], path: str | Path, config: str | Path) -> Path:
    """Write ``lock`` as YAML (atomically) with a header naming the config."""
    from .records import write_text_atomic

    path = Path(path)
    body = yaml.safe_dump(dict(lock), sort_keys=False, allow_unicode=True) if lock else "{}\n"
    write_text_atomic(path, f"# polybias lock {Path(config).as_posix()}: hub id -> commit\n"
                            + body)
    return path


def read_lock(path: str | Path) -> dict[str, str]:
    """A lock file's hub id → commit mapping, checked (40-hex commits)."""
    path = Path(path)
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise LockError(f"lock file {path}: cannot read it ({str(exc).splitlines()[0]})") from None
    raw = {} if raw is None else raw
    if not isinstance(raw, dict):
        raise LockError(f"lock file {path}: expected a mapping hub id -> 40-hex commit")
    bad = [str(k) for k, v in raw.items() if not (isinstance(v, str) and _HEX40.match(v))]
    if bad:
        raise LockError(f"lock file {path}: not a 40-hex commit for {', '.join(bad)}")
    return {str(k): v for k, v in raw.items()}


def apply_lock(runs, lock: dict[str, str], path: str | Path, config: str | Path) -> list:
    """``runs`` with each hub model's locked commit as its ``revision`` parameter."""
    import dataclasses

    by_key = run_hub_ids(runs)
    out = []
    for run in runs:
        pairs = by_key.get(run.key)
        if not pairs:
            out.append(run)
            continue
        repo_id, revision = pairs[0]
        if repo_id not in lock:
            raise LockError(f"{config}: hub id {repo_id} (run {run.key}) is not in the lock file "
                            f"{path}; lock again: polybias lock {config}")
        commit = lock[repo_id]
        if revision and _HEX40.match(revision) and revision != commit:
            raise LockError(f"{config}: run {run.key} pins {repo_id} at {revision} but the lock "
                            f"file {path} has {commit}")
        out.append(dataclasses.replace(run, parameters={**run.parameters, "revision": commit}))
    return out


def main(argv: list[str] | None = None) -> int:
    """``polybias lock CONFIG [--output LOCK]``."""
    import argparse

    parser = argparse.ArgumentParser(prog="polybias lock",
                                     description="Pin a sweep's hub ids to commits in a lock file.")
    parser.add_argument("config", help="sweep YAML (e.g. configs/sweeps/paper.yaml)")
    parser.add_argument("-o", "--output", default=None,
                        help=f"lock file (default: <config stem>{SUFFIX} beside the config)")
    args = parser.parse_args(argv)
    from .sweep import SweepError

    try:
        lock = make_lock(args.config)
    except (LockError, SweepError) as exc:
        print(f"polybias lock: {exc}", file=sys.stderr)
        return 2
    path = write_lock(lock, args.output or default_path(args.config), args.config)
    print(f"{path}: {len(lock)} hub id(s) locked")
    return 0
