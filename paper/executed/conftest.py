"""nbval on the executed notebooks (``make test``).

A notebook whose run in ``configs/sweeps/default.yaml`` declares data ``sources:`` or
``optional_sources:`` that cannot be had here (no mirror copy, no cached copy, no network;
the checked copy of a run holds its reproduction part too) is skipped, every cell,
with the one-line reason :func:`polybias.data.sources.availability` gives (which names the source
and how to provide it), as the sweep skips that run. Everything else is checked.
"""

from __future__ import annotations

import functools
from pathlib import Path

import pytest


@functools.cache
def _sources_of_executed() -> dict[Path, tuple[str, ...]]:
    from polybias import paths
    from polybias.runner.sweep import load_sweep

    runs = load_sweep(paths.configs_dir() / "sweeps" / "default.yaml")
    return {(paths.project_root() / run.executed).resolve(): (*run.sources, *run.optional_sources)
            for run in runs if run.executed}


@functools.cache
def _availability(name: str) -> tuple[bool, str]:
    from polybias.data import sources

    return sources.availability(name)


def missing_source(notebook: Path) -> str | None:
    """The reason ``notebook`` cannot be re-executed here, or None when it can."""
    for name in _sources_of_executed().get(Path(notebook).resolve(), ()):
        ok, reason = _availability(name)
        if not ok:
            return reason
    return None


def pytest_collection_modifyitems(config, items):
    for item in items:
        reason = missing_source(Path(str(item.fspath)))
        if reason:
            item.add_marker(pytest.mark.skip(reason=reason))
