"""nbval must catch a report notebook whose checked table no longer matches."""

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from polybias import paths

EXECUTED = sorted((paths.paper_dir() / "executed").glob("*.ipynb"),
                  key=lambda p: (not p.name.startswith("01_weat_w2v-gnews"), p.name))


@pytest.mark.skipif(not EXECUTED, reason="no executed notebooks (run make reproduce)")
def test_executed_notebooks_have_checked_cells_and_no_machine_paths():
    for nb_path in EXECUTED:
        text = nb_path.read_text()
        nb = json.loads(text)
        checked = [c for c in nb["cells"] if "nbval-check-output" in c["metadata"].get("tags", [])]
        assert checked and all(c["outputs"] for c in checked), nb_path.name
        assert str(paths.project_root()) not in text


def _runs_offline() -> Path | None:
    """An executed notebook of the default sweep whose run declares no data source (so it
    re-executes with no network and no mirror): the first WEAT one."""
    from polybias.runner.sweep import load_sweep

    root = paths.project_root()
    free = sorted(root / run.executed for run in load_sweep(root / "configs/sweeps/default.yaml")
                  if run.executed and not run.sources and not run.optional_sources
                  and (root / run.executed).is_file())
    return next((p for p in free if p.name.startswith("01_weat")), None)


@pytest.mark.skipif(not EXECUTED, reason="no executed notebooks (run make reproduce)")
def test_nbval_fails_on_a_changed_table(tmp_path):
    executed = _runs_offline()
    assert executed is not None, "no executed WEAT notebook of a run without data sources"
    nb = json.loads(executed.read_text())
    cell = next(c for c in nb["cells"] if "nbval-check-output" in c["metadata"].get("tags", []))
    out = cell["outputs"][0]
    # a table shown by report.show_table (display data) or printed (a stream)
    field, key = (out["data"], "text/plain") if "data" in out else (out, "text")
    text = "".join(field[key])
    field[key] = re.sub(r"^(\| \w+ \| )-?\d+\.\d+( \|)", r"\g<1>9.99\2", text, count=1, flags=re.M)
    assert field[key] != text
    tampered = tmp_path / "tampered.ipynb"
    tampered.write_text(json.dumps(nb))
    shutil.copy(paths.project_root() / "tests" / "nbval_sanitize.cfg", tmp_path)
    env = {k: v for k, v in os.environ.items() if k != "POLYBIAS_DATA_MIRROR"}
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "--nbval-lax", "-p", "no:cacheprovider",
         "--nbval-sanitize-with", str(tmp_path / "nbval_sanitize.cfg"), str(tampered)],
        capture_output=True, text=True, cwd=tmp_path, env={**env, "POLYBIAS_OFFLINE": "1"},
    )
    assert run.returncode == 1, run.stdout[-2000:]
    assert "9.99" in run.stdout


NOTEBOOKS = sorted((paths.project_root() / "notebooks").glob("[0-9][0-9]_*.py"))


@pytest.mark.parametrize("source", NOTEBOOKS, ids=lambda p: p.name)
def test_every_parameter_is_documented_for_papermill_help(source, tmp_path, caplog):
    """`papermill --help-notebook` must parse every line of the parameters cell: each
    parameter has a type annotation, a default and a help text (its trailing comment)."""
    import logging
    import re

    import jupytext
    import nbformat
    import papermill

    nb = jupytext.read(source)
    cells = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    assert len(cells) == 1, f"{source.name}: exactly one cell tagged parameters"
    names = [m.group(1) for m in re.finditer(r"^([A-Za-z_]\w*)\s*:", cells[0].source, re.M)]
    nbformat.write(nb, tmp_path / "nb.ipynb")
    with caplog.at_level(logging.WARNING):
        found = papermill.inspect_notebook(str(tmp_path / "nb.ipynb"))
    assert "Unable to parse" not in caplog.text, caplog.text
    assert list(found) == names
    assert all(p["help"] and p["inferred_type_name"] != "None" for p in found.values()), found


#: The model parameters of every notebook that loads its ``model`` as a language model or
#: encoder, with their type and default (docs: README, "One notebook on one model").
MODEL_PARAMETERS = {"revision": ("str", '""'), "device": ("str", '"auto"'),
                    "dtype": ("str", '"auto"'), "batch_tokens": ("int", "0")}


def test_every_notebook_that_loads_a_model_takes_the_model_parameters():
    import re

    from polybias.runner.runs import notebook_parameters

    load = r"\bmodels\.load\((model\b(?!,\s*\"static\").*?)\)\n"
    loading = [p for p in NOTEBOOKS if re.search(load, p.read_text(), re.S)]
    assert {p.stem[:2] for p in loading} >= {"02", "03", "04", "05", "06", "07", "08", "12"}
    for path in loading:
        declared = notebook_parameters(path)
        source = path.read_text()
        for name, (kind, default) in MODEL_PARAMETERS.items():
            assert declared.get(name) == kind, (path.name, name, declared.get(name))
            assert re.search(rf"^{name}: {kind} = {re.escape(default)}  #", source, re.M), (path.name, name)
        calls = re.findall(load, source, re.S)
        assert calls, path.name
        for call in calls:  # every load passes them on
            for name in MODEL_PARAMETERS:
                assert f"{name}={name}" in call, (path.name, name, call)
