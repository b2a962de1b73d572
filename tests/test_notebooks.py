"""nbval must catch a report notebook whose checked table no longer matches."""

import json
import shutil
import subprocess
import sys

import pytest
from polybias import paths

EXECUTED = sorted((paths.paper_dir() / "executed").glob("*.ipynb"))


@pytest.mark.skipif(not EXECUTED, reason="no executed notebooks (run make reproduce)")
def test_executed_notebooks_have_checked_cells_and_no_machine_paths():
    for nb_path in EXECUTED:
        text = nb_path.read_text()
        nb = json.loads(text)
        checked = [c for c in nb["cells"] if "nbval-check-output" in c["metadata"].get("tags", [])]
        assert checked and all(c["outputs"] for c in checked), nb_path.name
        assert str(paths.project_root()) not in text


@pytest.mark.skipif(not EXECUTED, reason="no executed notebooks (run make reproduce)")
def test_nbval_fails_on_a_changed_table(tmp_path):
    nb = json.loads(EXECUTED[0].read_text())
    cell = next(c for c in nb["cells"] if "nbval-check-output" in c["metadata"].get("tags", []))
    out = cell["outputs"][0]
    text = "".join(out["text"])
    out["text"] = text.replace("| WEAT1 | 1.54 |", "| WEAT1 | 9.99 |")
    assert out["text"] != text
    tampered = tmp_path / "tampered.ipynb"
    tampered.write_text(json.dumps(nb))
    shutil.copy(paths.project_root() / "tests" / "nbval_sanitize.cfg", tmp_path)
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "--nbval-lax", "-p", "no:cacheprovider",
         "--nbval-sanitize-with", str(tmp_path / "nbval_sanitize.cfg"), str(tampered)],
        capture_output=True, text=True, cwd=tmp_path,
    )
    assert run.returncode == 1, run.stdout[-2000:]
    assert "9.99" in run.stdout
