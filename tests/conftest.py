"""Shared fixtures. Tests run offline: the embedded w2v-gnews comes from the verified
WEFE wheel (PyPI), GitHub-hosted sources from the mirror named by POLYBIAS_DATA_MIRROR."""

from __future__ import annotations

import os

import numpy as np
import pytest
from polybias import models


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
