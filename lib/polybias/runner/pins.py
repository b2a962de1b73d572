"""Revision pins: a sweep's hub ids pinned to commits (``polybias pin CONFIG``).

``polybias pin CONFIG`` reads the sweep, collects the hub id of every run's model (a
registered ``hub`` model, with its registry ``revision``, or a hub id given as ``model``;
a run's own ``revision`` parameter wins) and resolves each to a 40-hex commit: online from
the hub, offline (``HF_HUB_OFFLINE=1``) from the cache's ``refs/``. It writes the pin file
(YAML, hub id → commit), by default beside the config as ``<config stem>.pins.yaml``::

    # polybias pin configs/sweeps/paper.yaml
    bert-base-uncased: 86b5e0934494bd15c9632b12f734a8a67f723594
    FacebookAI/xlm-roberta-large: c23d21b0620b635a76227c604d44e43a9f0ee389

A sweep uses the pin file beside its config when there is one (``polybias sweep CONFIG``),
or the one named by ``--pins FILE`` (``--no-pins``: none). Each run of a hub model then
gets the pinned commit as its ``revision`` parameter (so a pinned run is a different run
from an unpinned one, and its records carry that commit). A hub id of the sweep that the
pin file lacks, or a run whose own 40-hex ``revision`` differs from the pinned commit, is
an error before anything runs: pin again after editing the sweep or the registry. Only
runs of notebooks with a ``revision`` parameter (02-08, 12) are pinned.

Earlier names, still accepted: the command ``polybias lock`` (the same as ``polybias
pin``), the sweep's options ``--lock``/``--no-lock`` (``--pins``/``--no-pins``) and a pin
file beside the config named ``<config stem>.lock.yaml`` (read when there is no
``.pins.yaml``). Pins are not locks: in this package "lock" means only the file lock that
keeps two processes off one run's folder (:mod:`polybias.runner.locks`).
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import sys
from pathlib import Path
from typing import Any

import yaml

from polybias import paths
from polybias.files import write_text_atomic
from polybias.models import ModelError, load_registry, resolve_model
from polybias.models.errors import LoadError
from polybias.models.hub import resolve_commit
from polybias.runner.runs import Run, SweepError, notebook_parameters, read_sweep

SUFFIX = ".pins.yaml"
"""Suffix of a sweep's default pin file (``<config stem>.pins.yaml``)."""
OLD_SUFFIX = ".lock.yaml"
"""The default pin file's earlier suffix, read when there is no ``<config stem>.pins.yaml``."""
_HEX40 = re.compile(r"^[0-9a-f]{40}$")


class PinError(ValueError):
    """A pin file that cannot be written, read or applied; the message is one line."""


def default_path(config: str | Path) -> Path:
    """``<config stem>.pins.yaml`` beside ``config``: where ``polybias pin`` writes the
    sweep's pin file."""
    config = Path(config)
    return config.with_name(config.stem + SUFFIX)


def found_path(config: str | Path) -> Path | None:
    """The pin file a sweep uses when none is named: :func:`default_path` when it exists,
    else ``<config stem>.lock.yaml`` (the earlier name) when that exists, else None."""
    config = Path(config)
    for path in (default_path(config), config.with_name(config.stem + OLD_SUFFIX)):
        if path.is_file():
            return path
    return None


def _hub_of(model: Any, registry: dict[str, dict[str, Any]]) -> tuple[str, str | None] | None:
    """(hub id, registered revision) of a run's ``model``; None when it is not a hub model."""
    if not isinstance(model, str) or not model:
        return None
    try:
        _name, entry = resolve_model(model, registry)
    except ModelError:
        return None
    if not entry.get("hub"):
        return None
    return str(entry["hub"]), entry.get("revision")


def run_hub_ids(runs: list[Run], registry: dict[str, dict[str, Any]] | None = None
                ) -> dict[str, list[tuple[str, str | None]]]:
    """Run key → [(hub id, revision asked for)] of its hub models (``model``), for the
    runs whose notebook takes a ``revision`` parameter (the others cannot be pinned)."""
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

    A hub id asked for at two different revisions is a :class:`PinError` (a pin file maps
    each hub id to one commit)."""
    wanted: dict[str, str | None] = {}
    for pairs in run_hub_ids(read_sweep(config)).values():
        for repo_id, revision in pairs:
            if repo_id in wanted and wanted[repo_id] != revision:
                raise PinError(f"{config}: hub id {repo_id} is asked for at revisions "
                               f"{wanted[repo_id] or 'main'} and {revision or 'main'}; a pin file "
                               "holds one commit per hub id")
            wanted[repo_id] = revision
    return wanted


def make_pins(config: str | Path) -> dict[str, str]:
    """Hub id → commit for every hub model of ``config`` (resolved as the module says).

    A hub id that cannot be resolved is a :class:`PinError` naming it."""
    pins = {}
    for repo_id, revision in sorted(hub_ids(config).items(), key=lambda kv: kv[0].lower()):
        try:
            pins[repo_id] = resolve_commit(repo_id, revision)
        except LoadError as exc:
            raise PinError(f"cannot pin {repo_id}: {exc}") from None
    return pins


def write_pins(pins: dict[str, str], path: str | Path, config: str | Path) -> Path:
    """Write ``pins`` as YAML (atomically) with a header naming the config."""
    path = Path(path)
    body = yaml.safe_dump(dict(pins), sort_keys=False, allow_unicode=True) if pins else "{}\n"
    write_text_atomic(path, f"# polybias pin {Path(config).as_posix()}: hub id -> commit\n"
                            + body)
    return path


def read_pins(path: str | Path) -> dict[str, str]:
    """A pin file's hub id → commit mapping, checked (40-hex commits)."""
    path = Path(path)
    try:
        raw = paths.parse_yaml(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError) as exc:
        raise PinError(f"pin file {path}: cannot read it ({str(exc).splitlines()[0]})") from None
    raw = {} if raw is None else raw
    if not isinstance(raw, dict):
        raise PinError(f"pin file {path}: expected a mapping hub id -> 40-hex commit")
    bad = [str(k) for k, v in raw.items() if not (isinstance(v, str) and _HEX40.match(v))]
    if bad:
        raise PinError(f"pin file {path}: not a 40-hex commit for {', '.join(bad)}")
    return {str(k): v for k, v in raw.items()}


def apply_pins(runs: list[Run], pins: dict[str, str], path: str | Path,
               config: str | Path) -> list[Run]:
    """``runs`` with each hub model's pinned commit as its ``revision`` parameter."""
    by_key = run_hub_ids(runs)
    out = []
    for run in runs:
        pairs = by_key.get(run.key)
        if not pairs:
            out.append(run)
            continue
        repo_id, revision = pairs[0]
        if repo_id not in pins:
            raise PinError(f"{config}: hub id {repo_id} (run {run.key}) is not in the pin file "
                           f"{path}; pin again: polybias pin {config}")
        commit = pins[repo_id]
        if revision and _HEX40.match(revision) and revision != commit:
            raise PinError(f"{config}: run {run.key} pins {repo_id} at {revision} but the pin "
                           f"file {path} has {commit}")
        out.append(dataclasses.replace(run, parameters={**run.parameters, "revision": commit}))
    return out


def main(argv: list[str] | None = None, prog: str = "polybias pin") -> int:
    """``polybias pin CONFIG [--output FILE]``: pin a sweep's hub ids to commits.

    ``prog`` is the name the command was called by (``polybias lock`` is its earlier name,
    still accepted); messages carry it."""
    parser = argparse.ArgumentParser(
        prog=prog, description="Pin a sweep's hub ids to commits in a pin file. "
                               "(polybias lock is an earlier name of polybias pin, still accepted.)")
    parser.add_argument("config", help="sweep YAML (e.g. configs/sweeps/paper.yaml)")
    parser.add_argument("-o", "--output", default=None,
                        help=f"pin file (default: <config stem>{SUFFIX} beside the config)")
    args = parser.parse_args(argv)
    try:
        pins = make_pins(args.config)
    except (PinError, SweepError) as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return 2
    path = write_pins(pins, args.output or default_path(args.config), args.config)
    print(f"{path}: {len(pins)} hub id(s) pinned")
    return 0
