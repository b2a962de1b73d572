"""Dose-response and calibration helpers (polybias.studies.validity)."""

import numpy as np
import pandas as pd
import pytest
from polybias.studies import validity, validity_designs, validity_statistics
from polybias.studies.validity_statistics import ValidityError

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


def test_calibration_verdict_needs_enough_seeds_and_flags_excess():
    ok = frame([0.0] * 20, [0.5] * 20, pvalues=[0.01] + [0.5] * 19)
    assert validity.validity_summary(ok).loc[0, "calibrated"] == "yes"
    bad = frame([0.0] * 20, [0.5] * 20, pvalues=[0.01] * 8 + [0.5] * 12)
    assert validity.validity_summary(bad).loc[0, "calibrated"] == "no"
    few = frame([0.0] * 3, [0.5] * 3, pvalues=[0.01] * 3)
    assert validity.validity_summary(few).loc[0, "calibrated"] == "too few seeds"


def test_unsigned_metrics_use_distance_from_one_half_as_the_dose():
    f = pd.DataFrame({"measure": "m", "metric": "cb", "p": [0.1, 0.3, 0.5, 0.7, 0.9], "seed": 0,
                      "value": [4.0, 2.0, 1.0, 2.0, 4.0], "null": np.nan, "pvalue": np.nan})
    row = validity.validity_summary(f).iloc[0]
    assert row["dose"] == "|p-0.5|" and row["monotone"] and row["sign_ok"]
    assert row["rho"] == pytest.approx(1.0) and row["calibrated"] == "no test"
    assert row["at_null"] == pytest.approx(1.0)


# ------------------------------------------------------------------ statistics over models


def sweep_frame(values: dict[float, list[float]], pvalues: dict[float, list[float]] | None = None,
                metric: str = "x", null: float = 0.0, size: int = 10):
    rows = []
    for p, vals in values.items():
        for seed, v in enumerate(vals):
            rows.append({"language": "en", "measure": "m", "metric": metric, "p": p, "seed": seed,
                         "size_axis": "pairs", "size": size, "default": True, "value": v,
                         "null": null, "pvalue": (pvalues or {}).get(p, [0.5] * len(vals))[seed]})
    return pd.DataFrame(rows)


def test_dose_table_and_summary_on_a_hand_made_sweep():
    f = sweep_frame({0.3: [-1.0, -1.2, -0.8], 0.5: [0.1, -0.1, 0.0], 0.7: [0.2, -0.1, 0.5],
                     0.9: [2.0, 2.2, 1.8]})
    doses = validity.dose_table(f)
    assert doses["n"].tolist() == [3, 3, 3, 3] and doses["mean"].tolist() == pytest.approx(
        [-1.0, 0.0, 0.2, 2.0])
    s = validity.dose_summary(f).iloc[0]
    assert s["monotone"] and s["sign_ok"] and s["min_n"] == 3 and s["n_models"] == 12
    # 0.7's interval (mean 0.2, sd 0.3) holds 0, so only 0.9 (and its absent mirror) resolves;
    # 0.3's interval lies below 0 but its mirror 0.7 does not resolve
    assert s["resolves"] == pytest.approx(0.9)
    assert s["rho"] > 0.8 and s["rho_p"] < 0.01


def test_unsigned_metrics_resolve_against_the_balanced_models():
    f = sweep_frame({0.1: [3.0, 3.1, 2.9], 0.5: [1.0, 1.1, 0.9], 0.9: [3.0, 3.2, 2.8]},
                    metric="cb", null=float("nan"))
    f["pvalue"] = np.nan
    s = validity.dose_summary(f).iloc[0]
    assert s["dose"] == "abs(p - 0.5)" and s["sign_ok"] and s["resolves"] == pytest.approx(0.9)
    assert validity.calibration_table(f).empty  # no test, no false-positive rate


def test_calibration_table_counts_false_positives_at_one_half():
    pv = [0.01, 0.2, 0.04, 0.6] + [0.5] * 16
    f = sweep_frame({0.5: [0.0] * 20}, pvalues={0.5: pv})
    row = validity.calibration_table(f).iloc[0]
    assert row["false_positives"] == 2 and row["n"] == 20 and row["fpr"] == 0.1
    assert (row["fpr_low"], row["fpr_high"]) == pytest.approx(validity_statistics.binomial_interval(2, 20))
    assert row["verdict"] == "undecided"


def test_power_and_minimum_detectable_bias_of_a_hand_made_sweep():
    f = sweep_frame({0.5: [0.0] * 4, 0.7: [1.0, 1.0, -1.0, 1.0], 0.9: [1.0] * 4},
                    pvalues={0.5: [0.5, 0.01, 0.5, 0.5], 0.7: [0.01, 0.01, 0.01, 0.2],
                             0.9: [0.01] * 4})
    power = validity.power_table(f).set_index("p")["power"]
    # at 0.7 one model rejects on the wrong side and one does not reject: 2 of 4
    assert power.to_dict() == {0.5: 0.0, 0.7: 0.5, 0.9: 1.0}  # value 0 at 0.5 is not above the null
    row = validity.mdb_table(f).iloc[0]
    assert row["mdb"] == 0.9 and row["power_at_max"] == 1.0 and row["rule"] == "own test"
    assert validity.mdb_table(f, target=0.5).iloc[0]["mdb"] == 0.7


def test_untested_metrics_are_detected_against_the_balanced_models_quantile():
    f = sweep_frame({0.5: [1.0, 2.0, 3.0, 4.0, 5.0], 0.9: [4.5, 6.0, 7.0, 8.0, 9.0]}, metric="cb",
                    null=float("nan"))
    f["pvalue"] = np.nan
    d = validity.detections(f)
    # the 95 % quantile of 1..5 (linear) is 4.8: 4.5 is not above it
    assert d[d.p == 0.9]["detected"].tolist() == [False, True, True, True, True]
    assert validity.mdb_table(f).iloc[0]["mdb"] == 0.9


def test_findings_state_the_tables_and_name_what_has_too_few_models():
    f = sweep_frame({0.1: [-2.0, -2.2, -1.8], 0.5: [0.1, -0.1, 0.0], 0.9: [2.0, 2.2, 1.8]})
    thin = sweep_frame({0.5: [1.0], 0.9: [2.0]}).assign(measure="thin")
    frame = pd.concat([f, thin], ignore_index=True)
    summary = validity.dose_summary(frame)
    assert summary.set_index("measure")["assessed"].to_dict() == {"m": True, "thin": False}
    text = validity.findings(summary, validity.calibration_table(frame), validity.mdb_table(frame))
    assert "Increasing with the planted strength (Spearman ρ > 0, p < 0.05 over all models): m/x." in text
    assert "not monotone" not in text
    assert "Resolved from p = 0.9 (and its mirror): m/x." in text
    assert "Too few models or strengths to assess" in text and "thin/x" in text
    assert "m/x 0/3 = 0.00" in text  # false positives among the balanced models
    assert "for a minimum detectable bias: m/x, thin/x." in text  # 3 and 1 models < 5


def test_dose_response_figure_is_a_grid_with_intervals(tmp_path, monkeypatch):
    from polybias.results import plots

    monkeypatch.setenv("POLYBIAS_OUTPUT_ROOT", str(tmp_path))
    f = pd.concat([sweep_frame({0.1: [-1.0, -1.2], 0.5: [0.0, 0.1], 0.9: [1.0, 1.1]}).assign(measure=f"m{i}")
                   for i in range(11)], ignore_index=True)
    (tmp_path / "figures").mkdir()
    (tmp_path / "figures" / "grid_3.png").write_bytes(b"a stale part of a longer run")
    figs = plots.dose_response(validity.dose_table(f), "t", points=f, file="grid.png")
    assert len(figs) == 2  # 11 panels: 9 on the first figure, 2 on the second
    fig = figs[0]
    visible = [ax for ax in fig.axes if ax.get_visible()]
    assert len(visible) == 9 and len(fig.axes) == 9  # 3 rows of 3, not one row of 9
    width, height = fig.get_size_inches()
    assert width <= plots.PRINT_WIDTH_IN and height <= plots.PRINT_HEIGHT_IN  # prints at full size
    assert all(ax.containers for ax in visible)  # error bars drawn
    assert sum(ax.get_visible() for ax in figs[1].axes) == 2
    assert "(part 2 of 2)" in figs[1]._suptitle.get_text()
    assert (tmp_path / "figures" / "grid.png").is_file() and (tmp_path / "figures" / "grid_2.png").is_file()
    assert not (tmp_path / "figures" / "grid_3.png").exists()
    power = plots.power_curves(validity.power_table(f), "t", file="power.png")
    assert [sum(ax.get_visible() for ax in p.axes) for p in power] == [9, 2]
    assert all(plots.text_problems(p) == [] for p in figs + power)


def test_every_validity_metric_names_its_registered_measure():
    """The designs and metric labels of the committed sweep results (data/validity) map to
    registry keys (:data:`polybias.measures.METRIC_MEASURES`)."""
    from polybias import paths
    from polybias.measures import MEASURES, METRIC_MEASURES, registered_measure

    assert set(validity_designs.DESIGNS) <= set(METRIC_MEASURES)
    assert {k for m in METRIC_MEASURES.values() for k in m.values()} <= set(MEASURES)
    for name in ("measurements.csv", "encoder.csv", "layers.csv"):
        frame = pd.read_csv(paths.data_dir() / "validity" / name, usecols=["measure", "metric"])
        for design, metric in frame.drop_duplicates().itertuples(index=False):
            assert registered_measure(design, metric) in MEASURES, (name, design, metric)


def _intervals(**columns):
    base = {"language": "cs", "measure": "m", "metric": "g_s", "null": 1.0, "level": 0.95}
    return pd.DataFrame({**base, **columns})


def test_interval_verdicts_count_resolved_models_and_false_positives():
    f = _intervals(p=[0.9, 0.9, 0.9, 0.1, 0.5, 0.5, 0.5, 0.5],
                   value=[1.3, 1.2, 0.9, 0.8, 1.0, 1.1, 0.9, 1.0],
                   low=[1.1, 1.01, 0.8, 0.7, 0.9, 1.02, 0.8, 0.95],
                   high=[1.5, 1.3, 1.0, 0.95, 1.1, 1.2, 0.99, 1.05])
    out = validity.interval_verdicts(f, pooled=False).set_index("p")
    # above 1 at p = 0.9 (the third lies below: not resolved), below 1 at p = 0.1
    assert out.loc[0.9, "resolved"] == 2 and out.loc[0.9, "planted"] == 3
    assert out.loc[0.1, "resolved"] == 1
    # balanced: one above and one below 1 are both false positives
    assert out.loc[0.9, "false_positives"] == 2 and out.loc[0.9, "balanced"] == 4
    # 2 of 4: the Clopper-Pearson interval [0.068, 0.932] lies above 0.05
    assert out.loc[0.9, "fpr"] == 0.5 and out.loc[0.9, "verdict"] == "too liberal"
    expected = validity_statistics.calibration_verdict(2, 4)
    assert out.loc[0.9, "fpr_high"] == pytest.approx(expected["fpr_high"])
    # between models: the 95 % quantile of the balanced values is 1.085; 1.3 and 1.2 lie above
    assert out.loc[0.9, "beyond_balanced"] == 2
    # the 5 % quantile is 0.915; 0.8 lies below it
    assert out.loc[0.1, "beyond_balanced"] == 1
    assert out.loc[0.9, "balanced_sd"] == pytest.approx(np.std([1.0, 1.1, 0.9, 1.0], ddof=1))


def test_interval_verdicts_pool_languages_and_refuse_another_level():
    f = pd.concat([_intervals(p=[0.9, 0.5], value=[1.2, 1.0], low=[1.1, 0.9], high=[1.3, 1.1]),
                   _intervals(p=[0.9, 0.5], value=[1.2, 1.0], low=[1.1, 0.9], high=[1.3, 1.1])
                   .assign(language="el")])
    out = validity.interval_verdicts(f)
    assert out["language"].tolist() == ["cs", "el", "all"]
    assert out.set_index("language").loc["all", "planted"] == 2
    with pytest.raises(ValidityError, match=r"level \[0.9\] is not 1 - alpha"):
        validity.interval_verdicts(f.assign(level=0.9))
    with pytest.raises(ValidityError, match="need the columns"):
        validity.interval_verdicts(f.drop(columns="low"))
