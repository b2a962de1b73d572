"""The EuroGEST measure on planted causal LMs (polybias.runner.validity_eurogest): the plan,
the rows of a small grid on the pinned models, and the committed summary."""

import json

import numpy as np
import pandas as pd
import pytest
from polybias.runner import validity_eurogest
from polybias.studies import validity

pytestmark = pytest.mark.usefixtures("torch_one_thread")


def test_the_plan_has_every_strength_and_the_extra_balanced_models():
    jobs = validity_eurogest.plan()
    grid = validity_eurogest.GRID
    per_language = len(grid["ps"]) * grid["models_per_strength"] + grid["null_models"] \
        - grid["models_per_strength"]
    assert len(jobs) == len(grid["languages"]) * per_language
    for lang in grid["languages"]:
        mine = [(j["p"], j["seed"]) for j in jobs if j["language"] == lang]
        assert len(set(mine)) == len(mine)
        assert sum(p == 0.5 for p, _ in mine) == grid["null_models"]
        assert sum(p == 0.9 for p, _ in mine) == grid["models_per_strength"]


def test_a_small_grid_runs_through_the_one_runner(monkeypatch, tmp_path, capsys):
    """``polybias sweep`` on a ``kind: validity-eurogest`` YAML: two pinned Greek models
    scored with 200 resamples, one record each; a shard leaves the summary unwritten (exit
    1, naming what is missing), the whole sweep writes it in plan order, a rerun skips both
    and the summary reads back with 6 significant digits (about 5 s)."""
    import yaml
    from polybias.runner import sweep

    monkeypatch.setenv("POLYBIAS_PLANTED", "pinned")
    config = {"kind": "validity-eurogest", "records_dir": str(tmp_path / "records"),
              "summary_dir": str(tmp_path / "summary"),
              "grid": {"languages": ["el"], "models_per_strength": 1, "null_models": 1, "n_bootstrap": 200}}
    path = tmp_path / "eurogest.yaml"
    path.write_text(yaml.safe_dump(config))
    assert [u.key for u in sweep.load_sweep(path)] == ["el/eurogest-p0.5-s0", "el/eurogest-p0.9-s0"]
    assert sweep.main([str(path), "--jobs", "1", "--no-progress", "--shard", "1/2"]) == 1
    out, err = capsys.readouterr()
    assert "sweep: 1 ran" in out and "1 of 2 EuroGEST validity records are missing or stale" in err
    assert not (tmp_path / "summary").exists()
    assert sweep.main([str(path), "--jobs", "1", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "sweep: 1 ran, 1 skipped (1 already done), 0 failed" in out
    assert "EuroGEST validity summary of 2 models" in out
    frame = validity_eurogest.read_frame(tmp_path / "summary")
    assert frame.columns.tolist() == validity_eurogest.COLUMNS
    assert frame[["language", "p", "seed"]].values.tolist() == [["el", 0.5, 0], ["el", 0.9, 0]]
    assert (frame["family"] == "eurogest-causal").all() and frame["model"].is_unique
    record = json.loads((tmp_path / "records" / "el" / "eurogest-p0.9-s0.json").read_text())
    assert np.isclose(frame["value"].iloc[1], record["rows"][0]["value"], rtol=1e-5)
    assert sweep.main([str(path), "--jobs", "1", "--no-progress"]) == 0
    assert "sweep: 0 ran, 2 skipped (2 already done)" in capsys.readouterr().out
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump({**config, "grid": {"seeds": 3}}))
    assert sweep.main([str(bad), "--list"]) == 2
    assert "grid has unknown keys ['seeds']" in capsys.readouterr().err


def test_the_committed_summary_has_every_planned_model_and_its_verdicts():
    committed = validity_eurogest.read_frame("data/validity")
    planned = pd.DataFrame(validity_eurogest.plan())
    assert committed[["language", "p", "seed"]].values.tolist() == planned.values.tolist()
    assert (committed["level"] == 0.95).all() and (committed["null"] == 1.0).all()
    verdicts = validity.interval_verdicts(committed)
    assert verdicts["language"].tolist() == ["cs", "el", "lv", "all"]
    per = validity_eurogest.GRID["models_per_strength"]
    assert verdicts["planted"].tolist() == [per, per, per, 3 * per]
    assert verdicts["balanced"].tolist() == [10, 10, 10, 30]
