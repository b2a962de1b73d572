"""One contract, run over every kind of run the sweep runner knows (notebook runs and
validity cells), as scikit-learn's estimator checks are run over every estimator: each
answers :data:`polybias.runner.sweep.RUN_INTERFACE` and behaves the same way through a
first execution, a resume and a forced rerun."""

import copy
from pathlib import Path

import pytest
import yaml
from polybias.runner import sweep
from polybias.runner.execution import DONE
from test_validity_sweep import TINY

NOTEBOOK = '''# %% tags=["parameters"]
x: int = 1  # a number
output_dir: str = "results/x"  # where to write

# %%
import pathlib
(pathlib.Path(output_dir) / "value.txt").write_text(str(x * 2))
'''


def notebook_run(root):
    (root / "nb" / "double.py").write_text(NOTEBOOK)
    path = root / "sweep.yaml"
    path.write_text("kernel: polybias\nruns:\n  - notebook: nb/double.py\n    section: demo\n"
                    "    grid:\n      x: [3]\n")
    return path


def validity_cell(root):
    cfg = copy.deepcopy(TINY)
    cfg["blocks"] = [dict(TINY["blocks"][0], ps=[0.5, 0.9], models_per_strength=1, null_models=1)]
    cfg.update(kind="validity", records_dir=str(root / "records"), summary_dir=str(root / "summary"))
    path = root / "validity.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def diagnosis_cell(root):
    """The first known-answer encoder of the diagnosis, scored with the sizes of ``TINY``."""
    scoring = copy.deepcopy(TINY)
    scoring.update(kind="validity", records_dir="r", summary_dir="s")
    (root / "validity.yaml").write_text(yaml.safe_dump(scoring))
    path = root / "diagnosis.yaml"
    path.write_text(yaml.safe_dump({"kind": "validity-diagnosis", "validity": str(root / "validity.yaml"),
                                    "records_dir": str(root / "records"), "summary_dir": str(root / "summary")}))
    return path


def eurogest_cell(root):
    """A pinned balanced Greek EuroGEST model with 50 resamples (the project's data folder
    linked into the bare root: the model's sentences and the pinned store are read there)."""
    (root / "data").symlink_to(Path(__file__).resolve().parents[2] / "data")
    path = root / "eurogest.yaml"
    path.write_text(yaml.safe_dump({"kind": "validity-eurogest", "records_dir": str(root / "records"),
                                    "summary_dir": str(root / "summary"),
                                    "grid": {"languages": ["el"], "ps": [0.5], "models_per_strength": 1,
                                             "null_models": 1, "n_bootstrap": 50}}))
    return path


MAKERS = {"notebooks": notebook_run, "validity": validity_cell, "validity-diagnosis": diagnosis_cell,
          "validity-eurogest": eurogest_cell}


def test_every_kind_has_a_maker_here():
    assert set(sweep.KINDS) == set(MAKERS), "add the new kind's maker to MAKERS"


@pytest.mark.usefixtures("torch_one_thread")
@pytest.mark.parametrize("make", list(MAKERS.values()), ids=list(MAKERS))
def test_a_run_of_every_kind_keeps_the_runners_contract(make, empty_project, monkeypatch):
    monkeypatch.setenv("POLYBIAS_CACHE", str(empty_project / "cache"))
    monkeypatch.setenv("POLYBIAS_PLANTED", "pinned" if make is eurogest_cell else "auto")
    root = empty_project
    run = sweep.load_sweep(make(root))[0]
    missing = [name for name in sweep.RUN_INTERFACE if not hasattr(run, name)]
    assert not missing, f"{type(run).__name__} lacks {missing}"
    # before: nothing done, nothing to read, values accepted
    assert not run.is_done(root) and run.state(root) == "todo"
    assert not run.marker(root).exists() and run.failed_notebook(root) is None
    assert run.check(root) is None
    assert isinstance(run.hash_in(root), str) and run.hash_in(root) == run.hash_in(root)
    # first execution writes the marker; the run is done
    outcome = run.execute(root)
    assert outcome["key"] == run.key and outcome["status"] == "ok", outcome
    assert run.is_done(root) and run.state(root) == "done" and run.marker(root).is_file()
    first = run.marker(root).read_bytes()
    # resume: skipped as done, the marker untouched
    stamp = run.marker(root).stat().st_mtime_ns
    assert run.execute(root) == {"key": run.key, "status": "skipped", "reason": DONE}
    assert run.marker(root).stat().st_mtime_ns == stamp
    # forced: executed again, the same bytes (deterministic), still done
    assert run.execute(root, force=True)["status"] == "ok"
    assert run.marker(root).read_bytes() == first and run.is_done(root)
    # the runner's own functions go through the same methods
    assert sweep.is_done(run, root)
    assert sweep.execute(run, root) == {"key": run.key, "status": "skipped", "reason": DONE}
