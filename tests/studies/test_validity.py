"""Dose-response and calibration helpers (polybias.studies.validity)."""

import numpy as np
import pandas as pd
import pytest
from polybias.studies import validity
from polybias.studies.validity import ValidityError

pytestmark = pytest.mark.usefixtures("torch_one_thread")


def frame(values, ps, pvalues=None, null=0.0):
    n = len(values)
    return pd.DataFrame({"measure": "m", "metric": "x", "p": ps, "seed": range(n),
                         "value": values, "null": null,
                         "pvalue": pvalues if pvalues is not None else [0.5] * n})


def test_summary_detects_a_non_monotone_and_wrongly_signed_measure():
    good = validity.validity_summary(frame([-2.0, -1.0, 0.0, 1.0, 2.0], [0.1, 0.3, 0.5, 0.7, 0.9]))
    assert good.loc[0, "monotone"] and good.loc[0, "sign_ok"] and good.loc[0, "rho"] == pytest.approx(1.0)
    bumpy = validity.validity_summary(frame([-2.0, 1.0, 0.0, 1.0, 2.0], [0.1, 0.3, 0.5, 0.7, 0.9]))
    assert not bumpy.loc[0, "monotone"] and not bumpy.loc[0, "sign_ok"]
    flipped = validity.validity_summary(frame([60.0, 50.0, 40.0], [0.1, 0.5, 0.9], null=50.0))
    assert flipped.loc[0, "rho"] == pytest.approx(-1.0) and not flipped.loc[0, "sign_ok"]


def test_summary_false_positive_rate_and_offset_at_the_null():
    f = frame([0.2, -0.4, 0.8, 0.2], [0.5] * 4, pvalues=[0.01, 0.2, 0.049, 0.05])
    row = validity.validity_summary(f, alpha=0.05).iloc[0]
    assert row["fpr"] == pytest.approx(0.5) and row["n_null"] == 4  # 0.05 itself is not < alpha
    assert row["at_null"] == pytest.approx(0.2)
    assert row["at_null_sd"] == pytest.approx(np.std([0.2, -0.4, 0.8, 0.2], ddof=1))


def test_summary_rejects_a_frame_without_its_columns():
    with pytest.raises(ValidityError, match="pvalue"):
        validity.validity_summary(frame([1.0], [0.5]).drop(columns="pvalue"))


def test_planted_weat_follows_the_planted_direction_and_is_deterministic():
    kw = dict(n_sentences=1500, n_permutations=2000)
    stereo = validity.planted_weat(0.9, seed=0, **kw)
    anti = validity.planted_weat(0.1, seed=0, **kw)
    assert stereo["value"] > 0.8 and stereo["pvalue"] < 0.05
    assert anti["value"] < -0.8
    assert validity.planted_weat(0.9, seed=0, **kw) == stereo


def test_planted_lm_scores_show_the_planted_direction(tmp_path, monkeypatch):
    monkeypatch.setenv("POLYBIAS_CACHE", str(tmp_path))
    rows = validity.planted_lm_scores("causal", 0.95, seed=0, n_sentences=2000, n_pairs=60)
    assert [r["metric"] for r in rows] == ["stereotype-score", "jsd-B"]
    assert all(r["value"] > 70 and r["null"] == 50.0 for r in rows)


def test_dose_response_rows_and_bad_arguments():
    out = validity.dose_response(["weat"], [0.2, 0.8], [0, 1], weat_n_sentences=800,
                                 weat_n_permutations=200)
    assert len(out) == 4 and set(out["p"]) == {0.2, 0.8}
    with pytest.raises(ValidityError, match="unknown"):
        validity.dose_response(["seat"], [0.5], [0])
    with pytest.raises(ValidityError, match="weat_ or lm_"):
        validity.dose_response(["weat"], [0.5], [0], n_sentences=10)
    with pytest.raises(ValidityError, match="p must be"):
        validity.planted_weat(1.5)
    with pytest.raises(ValidityError, match="kind"):
        validity.planted_lm_scores("seq2seq", 0.5)


def test_calibration_verdict_needs_enough_seeds_and_flags_excess():
    ok = frame([0.0] * 20, [0.5] * 20, pvalues=[0.01] + [0.5] * 19)
    assert validity.validity_summary(ok).loc[0, "calibrated"] == "yes"
    bad = frame([0.0] * 20, [0.5] * 20, pvalues=[0.01] * 8 + [0.5] * 12)
    assert validity.validity_summary(bad).loc[0, "calibrated"] == "no"
    few = frame([0.0] * 3, [0.5] * 3, pvalues=[0.01] * 3)
    assert validity.validity_summary(few).loc[0, "calibrated"] == "too few seeds"


def test_template_scores_on_the_planted_mlm_and_its_control():
    # same training inputs as tests/metrics/test_logprob.py: the cached models are shared
    stereo = {r["metric"]: r for r in validity.planted_template_scores(0.9, seed=0, n_permutations=2000)}
    control = {r["metric"]: r for r in validity.planted_template_scores(0.5, seed=0, n_permutations=2000)}
    assert stereo["kurita-effect-size"]["value"] > 1.0 and stereo["kurita-effect-size"]["pvalue"] < 0.05
    assert abs(control["kurita-effect-size"]["value"]) < stereo["kurita-effect-size"]["value"]
    assert stereo["cb"]["value"] > control["cb"]["value"] > 0
    assert np.isnan(stereo["cb"]["pvalue"]) and np.isnan(stereo["cb"]["null"])


def test_unsigned_metrics_use_distance_from_one_half_as_the_dose():
    f = pd.DataFrame({"measure": "m", "metric": "cb", "p": [0.1, 0.3, 0.5, 0.7, 0.9], "seed": 0,
                      "value": [4.0, 2.0, 1.0, 2.0, 4.0], "null": np.nan, "pvalue": np.nan})
    row = validity.validity_summary(f).iloc[0]
    assert row["dose"] == "|p-0.5|" and row["monotone"] and row["sign_ok"]
    assert row["rho"] == pytest.approx(1.0) and row["calibrated"] == "no test"
    assert row["at_null"] == pytest.approx(1.0)


def test_embedding_scores_of_the_planted_mlm_follow_the_planted_direction():
    stereo = {r["metric"]: r for r in validity.planted_embedding_scores(0.9, seed=0, n_permutations=2000)}
    control = {r["metric"]: r for r in validity.planted_embedding_scores(0.5, seed=0, n_permutations=2000)}
    for metric in ("seat-effect-size", "ceat-ces"):
        assert stereo[metric]["value"] > 0.5 and stereo[metric]["pvalue"] < 0.05, metric
        assert abs(control[metric]["value"]) < stereo[metric]["value"], metric
    assert validity.planted_embedding_scores(0.9, seed=0, n_permutations=2000) == list(stereo.values())
