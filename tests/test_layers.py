"""The import contracts of lib/polybias (``[tool.importlinter]`` in pyproject.toml): they
hold on the library, and deliberate violations break every one of them. About 5 s."""

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import polybias
import pytest
from polybias import paths

LINT = Path(sys.executable).with_name("lint-imports")
CONTRACTS = [c["name"] for c in tomllib.loads(
    (paths.project_root() / "pyproject.toml").read_text())["tool"]["importlinter"]["contracts"]]


def _lint(lib: Path, cwd: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(lib)}
    return subprocess.run([str(LINT), "--config", str(paths.project_root() / "pyproject.toml"),
                           "--no-cache", "--no-logo"], capture_output=True, text=True, cwd=cwd,
                          env=env)


@pytest.fixture(scope="module")
def copy(tmp_path_factory):
    """A copy of the library, to break."""
    lib = tmp_path_factory.mktemp("layers") / "lib"
    shutil.copytree(Path(polybias.__file__).parent, lib / "polybias",
                    ignore=shutil.ignore_patterns("__pycache__"))
    return lib


@pytest.mark.skipif(not LINT.exists(), reason="import-linter not installed: make env installs it "
                    "(the dev extra), or pip install import-linter")
def test_the_library_keeps_its_layers(copy):
    run = _lint(copy, copy.parent)
    assert run.returncode == 0, run.stdout[-3000:]
    assert f"Contracts: {len(CONTRACTS)} kept, 0 broken" in run.stdout


VIOLATIONS = [  # module, the line added, what lint-imports must report
    ("metrics/weat.py", "from polybias import models  # loading a model",
     "polybias.metrics.weat -> polybias.models"),
    ("metrics/ceat.py", "import matplotlib  # plotting", "polybias.metrics.ceat -> matplotlib"),
    # indirect: templating reads files (paths), so a metric may not import it
    ("metrics/agreement.py", "from polybias.data import templating  # files, one step away",
     "polybias.metrics.agreement -> polybias.data.templating"),
    ("metrics/wefat.py", "import torch  # running a model", "polybias.metrics.wefat -> torch"),
    ("metrics/stereoset.py", "from polybias.engines import common  # an engine in a metric",
     "polybias.metrics.stereoset -> polybias.engines.common"),
    # CrowS-Pairs scoring is an engine now: the metric may not call it back
    ("metrics/crows.py", "from polybias.engines import pair_scores  # running the model",
     "polybias.metrics.crows -> polybias.engines.pair_scores"),
    ("data/text.py", "from polybias.studies import ceat  # an upward import",
     "polybias.data.text -> polybias.studies.ceat"),
    ("engines/scoring.py", "from polybias.engines import embeddings  # engine to engine",
     "polybias.engines.scoring -> polybias.engines.embeddings"),
    ("engines/hidden_states.py", "from polybias.models import loading  # an engine loading",
     "polybias.engines.hidden_states -> polybias.models.loading"),
]


@pytest.mark.skipif(not LINT.exists(), reason="import-linter not installed: make env installs it "
                    "(the dev extra), or pip install import-linter")
def test_deliberate_violations_fail(copy):
    originals = {m: (copy / "polybias" / m).read_text() for m, _, _ in VIOLATIONS}
    try:
        for module, line, _ in VIOLATIONS:
            (copy / "polybias" / module).write_text(originals[module] + "\n" + line + "\n")
        run = _lint(copy, copy.parent)
    finally:
        for module, text in originals.items():
            (copy / "polybias" / module).write_text(text)
    assert run.returncode == 1, run.stdout[-3000:]
    assert f"Contracts: 0 kept, {len(CONTRACTS)} broken" in run.stdout, run.stdout[-3000:]
    for name in CONTRACTS:
        assert f"{name} BROKEN" in run.stdout, (name, run.stdout[-3000:])
    for _, _, broken in VIOLATIONS:
        assert broken in run.stdout, (broken, run.stdout[-3000:])
