"""The hidden-state study's tables, views, decision sentence, figure and run record."""

from __future__ import annotations

import json
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest
from polybias.engines import hidden_states
from polybias.engines.hidden_states import HiddenStateError
from polybias.studies import hidden_states as study


def _states(n_per_group: int = 6, n_layers: int = 4, dim: int = 5, seed: int = 0):
    """Occurrences of two groups; the last layer separates them (+3 and -3 on every
    dimension), the earlier layers are noise around a level that falls with the layer."""
    rng = np.random.default_rng(seed)
    groups = ["a"] * n_per_group + ["b"] * n_per_group
    states = rng.normal(0.0, 1.0, (len(groups), n_layers + 1, dim))
    states += np.linspace(10.0, 0.0, n_layers + 1)[None, :, None]
    states[:, -1] += np.where(np.array(groups) == "a", 3.0, -3.0)[:, None]
    items = pd.DataFrame({"text": [f"s{i}" for i in range(len(groups))], "feature:region": groups})
    return states, items


def test_layer_tables_are_the_engine_statistics_and_anova_of_both_statistics():
    states, _ = _states()
    stats, anova = study.layer_tables(states)
    pd.testing.assert_frame_equal(stats, hidden_states.layer_statistics(states))
    assert anova.statistic.tolist() == ["sum", "norm"]
    for row in anova.itertuples():
        assert (row.F, row.p) == hidden_states.layer_anova(states, row.statistic)
    assert anova.set_index("statistic").at["sum", "p"] < 1e-6  # the levels fall with the layer


def test_views_separate_the_groups_of_the_separating_layer_only():
    states, items = _states()
    points, groups, separation = study.two_d_views(states, items, "region", layer_view=-1, seed=0)
    assert list(points) == list(hidden_states.METHODS) and groups == items["feature:region"].tolist()
    assert all(p.shape == (len(items), 2) for p in points.values())
    eta = separation.set_index("method").eta2
    assert eta["pca"] > 0.9 and eta["svd"] > 0.9
    _, _, first = study.two_d_views(states, items, "region", layer_view=0, seed=0)
    assert first.set_index("method").eta2["pca"] < 0.5
    # seeded: the same views again; every layer at once is one flattened view
    again, _, _ = study.two_d_views(states, items, "region", layer_view=-1, seed=0)
    assert all(np.array_equal(points[m], again[m]) for m in points)
    flat, _, _ = study.two_d_views(states, items, "region", layer_view=study.ALL_LAYERS)
    assert flat["pca"].shape == (len(items), 2)


@pytest.mark.parametrize("feature, layer, message", [
    ("gender", -1, "no feature 'gender'; known: region"),
    ("region", 5, r"layer_view must be a layer in \[-5, 4\] or 99"),
    ("region", -6, "got -6"),
])
def test_views_name_a_bad_feature_or_layer(feature, layer, message):
    states, items = _states()
    with pytest.raises(HiddenStateError, match=message):
        study.two_d_views(states, items, feature, layer_view=layer)


def test_halves_sentence_states_the_direction_and_each_decision():
    halves = {"n": 10, "h": 3, "mean_first": 1.0, "mean_last": 2.0, "share_first_larger": 0.25,
              "p_t": 0.049, "p_wilcoxon": 0.05}
    assert study.halves_sentence(halves) == (
        "10 occurrences, layers 1-3 against the last 3: the first half sums lower for 25% of "
        "them; paired t-test significant at 0.05, Wilcoxon not significant")
    assert "t-test not significant at 0.01" in study.halves_sentence(halves, alpha=0.01)


def test_figure_and_record_are_written_under_the_output_root(tmp_path, monkeypatch):
    monkeypatch.setenv("POLYBIAS_OUTPUT_ROOT", str(tmp_path))
    states, items = _states()
    points, groups, separation = study.two_d_views(states, items, "region")
    fig = study.plot_views(points, groups, "views", file="hidden_test.png")
    assert len(fig.axes) == len(points) and (tmp_path / "figures" / "hidden_test.png").is_file()
    _, anova = study.layer_tables(states)
    kmeans = hidden_states.kmeans_agreement(states, groups)
    halves = hidden_states.half_sums_test(states)

    path = study.write_hidden_record(SimpleNamespace(revision="abc"), "toy", "en", "book:t:country", {"seed": 0}, anova,
                                     separation, kmeans, halves, "records")
    assert path.parent == tmp_path / "records"
    record = json.loads(path.read_text())
    assert (record["metric"], record["model_revision"]) == ("hidden-states", "abc")
    values = record["values"]
    parts = {}
    for row in values["details"]:
        parts.setdefault(row.pop("part"), []).append(row)
    assert [r for r in parts["anova"] if r["statistic"] == "sum"][0] == \
        {"statistic": "sum", **anova.set_index("statistic").loc["sum", ["F", "p"]].to_dict()}
    assert {g["subset"]: g["value"] for g in values["groups"]} | {values["subset"]: values["value"]} == \
        separation.set_index("method").eta2.to_dict()
    assert {r["layer"]: r["ari"] for r in parts["kmeans"]} == kmeans.set_index("layer").ari.to_dict()
    assert parts["half-sums"] == [halves]
