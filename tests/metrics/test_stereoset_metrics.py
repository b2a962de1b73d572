"""StereoSet aggregation: item decisions, LMS/SS/ICAT micro and per target, intervals, tests."""

import numpy as np
import pandas as pd
import pytest
from polybias.metrics import stereoset as ms


def _items(n_items=4, targets=("t1", "t1", "t2", "t2"), bias=("gender", "gender", "race", "race")):
    rows = []
    for i in range(n_items):
        for label in ms.GOLD_LABELS:
            rows.append({"item_id": f"i{i}", "task": "intrasentence", "bias_type": bias[i],
                         "target_en": targets[i], "target": targets[i].upper(),
                         "candidate_id": f"i{i}-{label}", "gold_label": label})
    return pd.DataFrame(rows)


def _scores(table):
    """table: item -> (stereotype, anti, unrelated) scores."""
    return pd.DataFrame([{"candidate_id": f"{item}-{label}", "score": s}
                         for item, triple in table.items()
                         for label, s in zip(ms.GOLD_LABELS, triple, strict=True)])


SCORES = {"i0": (0.5, 0.2, 0.1),   # pro, both related
          "i1": (0.3, 0.3, 0.4),   # tie (anti), none related
          "i2": (0.1, 0.6, 0.2),   # anti, anti related
          "i3": (0.9, 0.1, 0.05)}  # pro, both related


def test_decisions_count_what_stereoset_counts():
    dec = ms.item_decisions(_items(), _scores(SCORES))
    assert dec["pro"].tolist() == [True, False, False, True]
    assert dec["ties"].tolist() == [False, True, False, False]
    assert dec["related"].tolist() == [2, 0, 1, 2]
    assert dec["target"].tolist() == ["t1", "t1", "t2", "t2"]
    assert ms.item_decisions(_items(), _scores(SCORES), target="target")["target"].iloc[0] == "T1"


def test_micro_and_per_target_scores_by_hand():
    dec = ms.item_decisions(_items(), _scores(SCORES))
    row = ms.stereoset_scores(dec, by=None, n_bootstrap=0).iloc[0]
    # micro: pro 2/4, related 5/8
    assert row.ss_micro == 50.0 and row.lms_micro == 62.5 and row.icat_micro == 62.5
    # t1: ss 50, lms 50; t2: ss 50, lms 75
    assert row.ss_target == 50.0 and row.lms_target == 62.5 and row.ss_target_std == 0.0
    assert row.icat_target_mean == pytest.approx((50 + 75) / 2)
    assert row.ties == 1 and row.n == 4 and row.n_targets == 2
    # headline follows the aggregate
    assert row.lms == row.lms_target
    micro = ms.stereoset_scores(dec, aggregate="micro", by=None, n_bootstrap=0).iloc[0]
    assert micro.lms == micro.lms_micro


def test_per_target_differs_from_micro_when_targets_are_unbalanced():
    items = _items(targets=("t1", "t1", "t1", "t2"))
    dec = ms.item_decisions(items, _scores({"i0": (1, 0, 0), "i1": (1, 0, 0), "i2": (1, 0, 0),
                                            "i3": (0, 1, 0.5)}))
    row = ms.stereoset_scores(dec, by=None, n_bootstrap=0).iloc[0]
    assert row.ss_micro == 75.0
    assert row.ss_target == 50.0 and row.ss_target_std == 50.0
    assert row.icat_target == ms.icat(row.lms_target, 50.0)


def test_groups_by_bias_type():
    dec = ms.item_decisions(_items(), _scores(SCORES))
    table = ms.stereoset_scores(dec, n_bootstrap=0)
    assert table["group"].tolist() == ["all", "gender", "race"]
    assert table.set_index("group").loc["race", "ss_micro"] == 50.0
    assert table.set_index("group").loc["gender", "lms_micro"] == 50.0


def test_bootstrap_is_seeded_and_brackets_the_estimate():
    rng = np.random.default_rng(3)
    n = 300
    dec = pd.DataFrame({"item_id": np.arange(n).astype(str), "target": rng.choice(list("abcdef"), n),
                        "pro": rng.random(n) < 0.6, "ties": False, "related": rng.integers(0, 3, n),
                        "bias_type": "gender"})
    for aggregate in ms.AGGREGATES:
        a = ms.stereoset_scores(dec, aggregate=aggregate, by=None, n_bootstrap=200, seed=7)
        b = ms.stereoset_scores(dec, aggregate=aggregate, by=None, n_bootstrap=200, seed=7)
        c = ms.stereoset_scores(dec, aggregate=aggregate, by=None, n_bootstrap=200, seed=8)
        pd.testing.assert_frame_equal(a, b)
        assert a.ss_low.iloc[0] != c.ss_low.iloc[0]
        row = a.iloc[0]
        for key in ("lms", "ss", "icat"):
            assert row[f"{key}_low"] < row[key] < row[f"{key}_high"]


def test_binomial_test_of_ss_against_fifty():
    from scipy.stats import binomtest

    n = 40
    dec = pd.DataFrame({"item_id": np.arange(n).astype(str), "target": "t", "pro": np.arange(n) < 30,
                        "ties": False, "related": 2, "bias_type": "gender"})
    row = ms.stereoset_scores(dec, by=None, n_bootstrap=0).iloc[0]
    assert row.binom_p == pytest.approx(binomtest(30, 40, 0.5).pvalue)
    assert row.binom_p < 0.01


def test_missing_candidate_label_is_an_error():
    items = _items()
    items.loc[(items.item_id == "i2") & (items.gold_label == "unrelated"), "gold_label"] = "stereotype"
    with pytest.raises(ms.StereoSetMetricError, match=r"item 'i2' has the candidate labels "
                                                      r"\['stereotype', 'stereotype', 'anti-stereotype'\]"):
        ms.item_decisions(items, _scores(SCORES))
    items = _items()
    with pytest.raises(ms.StereoSetMetricError, match="item 'i1'.*unrelated"):
        ms.item_decisions(items.drop(index=items.index[5]), _scores(SCORES))


def test_predictions_missing_ids_are_an_error():
    scores = _scores(SCORES)
    with pytest.raises(ms.StereoSetMetricError, match=r"2 candidate\(s\) have no score, e.g. 'i3-"):
        ms.item_decisions(_items(), scores.iloc[:-2])
    with pytest.raises(ms.StereoSetMetricError, match="scored twice"):
        ms.item_decisions(_items(), pd.concat([scores, scores.iloc[:1]]))
    with pytest.raises(ms.StereoSetMetricError, match="lack the column"):
        ms.item_decisions(_items(), scores.rename(columns={"score": "p"}))


def test_bad_options():
    dec = ms.item_decisions(_items(), _scores(SCORES))
    with pytest.raises(ms.StereoSetMetricError, match="unknown aggregate"):
        ms.stereoset_scores(dec, aggregate="macro")
    with pytest.raises(ms.StereoSetMetricError, match="no items"):
        ms.stereoset_scores(dec.iloc[:0])


def test_workbook_row_names():
    dec = ms.item_decisions(_items(), _scores(SCORES))
    row = ms.workbook_row(ms.stereoset_scores(dec, by=None, n_bootstrap=0).iloc[0])
    assert list(row) == list(ms.WORKBOOK_COLUMNS)
    assert row["Count"] == 4 and row["SS Score"] == 50.0
