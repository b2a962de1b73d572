"""The EuroGEST measure on planted causal LMs (polybias.runner.validity_eurogest): the plan,
the rows of a small grid on the pinned models, and the committed summary."""

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


def test_a_small_grid_on_the_pinned_models(monkeypatch, tmp_path):
    """Two pinned Greek models scored with 200 resamples: one row each, written and read
    back with 6 significant digits (about 3 s)."""
    monkeypatch.setenv("POLYBIAS_PLANTED", "pinned")
    grid = {"languages": ["el"], "ps": [0.5, 0.9], "models_per_strength": 1, "null_models": 1,
            "n_bootstrap": 200}
    frame = validity_eurogest.eurogest_frame(grid, log=lambda *a, **k: None)
    assert frame[["language", "p", "seed"]].values.tolist() == [["el", 0.5, 0], ["el", 0.9, 0]]
    assert (frame["family"] == "eurogest-causal").all() and frame["model"].is_unique
    path = validity_eurogest.write_frame(frame, tmp_path / "eurogest.csv")
    back = validity_eurogest.read_frame(tmp_path)
    assert back.columns.tolist() == frame.columns.tolist()
    assert np.allclose(back["value"], frame["value"], rtol=1e-5) and path.is_file()


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
