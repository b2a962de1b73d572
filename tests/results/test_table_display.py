"""Tables shown with :func:`polybias.results.report.show_table` render as tables in JupyterLab and
are still checked by nbval: the display output carries ``text/markdown`` and the exact
table text as ``text/plain``, and nbval compares both."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pandas as pd
import pytest
from nbclient import NotebookClient
from polybias import paths
from polybias.results import report

TABLE = report.markdown_table(pd.DataFrame({"test": ["WEAT1", "WEAT2"], "effect_size": [1.54, 1.63]}))


def test_show_table_prints_the_text_outside_a_kernel(capsys):
    report.show_table(TABLE)
    assert capsys.readouterr().out == TABLE + "\n"


@pytest.fixture(scope="module")
def executed(tmp_path_factory) -> Path:
    """A two-cell notebook whose checked cell shows TABLE, executed in the project's kernel."""
    folder = tmp_path_factory.mktemp("shown")
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell("import pandas as pd\nfrom polybias.results import report"),
        nbformat.v4.new_code_cell(
            "report.show_table(report.markdown_table(pd.DataFrame("
            "{'test': ['WEAT1', 'WEAT2'], 'effect_size': [1.54, 1.63]})))",
            metadata={"tags": ["nbval-check-output"]}),
    ]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    with pytest.MonkeyPatch.context() as mp:  # the kernel imports this checkout's polybias
        mp.setenv("PYTHONPATH", _pythonpath())
        NotebookClient(nb, kernel_name="python3", timeout=120,
                       resources={"metadata": {"path": str(folder)}}).execute()
    path = folder / "shown.ipynb"
    nbformat.write(nb, path)
    shutil.copy(paths.project_root() / "tests" / "nbval_sanitize.cfg", folder)
    return path


def _pythonpath() -> str:
    return os.pathsep.join(filter(None, [str(paths.project_root() / "lib"),
                                         os.environ.get("PYTHONPATH")]))


def _nbval(notebook: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": _pythonpath()}
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "--nbval-lax", "-p", "no:cacheprovider",
         "--nbval-sanitize-with", str(notebook.with_name("nbval_sanitize.cfg")), str(notebook)],
        capture_output=True, text=True, cwd=notebook.parent, env=env)


def test_the_output_is_a_markdown_table_with_the_exact_text(executed):
    cell = nbformat.read(executed, as_version=4).cells[1]
    [out] = cell["outputs"]
    assert out["output_type"] == "display_data"
    assert out["data"]["text/markdown"] == TABLE
    assert out["data"]["text/plain"] == TABLE


def test_nbval_passes_on_the_unchanged_notebook(executed):
    run = _nbval(executed)
    assert run.returncode == 0, run.stdout[-2000:]


@pytest.mark.parametrize("mime", ["text/plain", "text/markdown"])
def test_nbval_fails_when_a_number_of_the_shown_table_changes(executed, mime, tmp_path):
    nb = nbformat.read(executed, as_version=4)
    data = nb.cells[1].outputs[0]["data"]
    changed = data[mime].replace("| WEAT1 | 1.54 |", "| WEAT1 | 9.99 |")
    assert changed != data[mime]
    data[mime] = changed
    tampered = tmp_path / "tampered.ipynb"
    nbformat.write(nb, tampered)
    shutil.copy(executed.with_name("nbval_sanitize.cfg"), tmp_path)
    run = _nbval(tampered)
    assert run.returncode == 1, run.stdout[-2000:]
    assert "9.99" in run.stdout
