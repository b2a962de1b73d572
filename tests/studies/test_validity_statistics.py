"""The statistics of the validity study (polybias.studies.validity_statistics), on
hand-computable inputs."""

import numpy as np
import pandas as pd
import pytest
from polybias.studies import validity_statistics as statistics
from polybias.studies.validity_statistics import ValidityError


def test_clopper_pearson_interval_on_hand_computable_counts():
    # k = 0: the upper end solves (1 - u)^n = 0.025; k = n mirrors it
    lo, hi = statistics.binomial_interval(0, 10)
    assert lo == 0.0 and hi == pytest.approx(1 - 0.025 ** (1 / 10))
    lo, hi = statistics.binomial_interval(10, 10)
    assert hi == 1.0 and lo == pytest.approx(0.025 ** (1 / 10))
    # k = 1, n = 2: the lower end solves 1 - (1 - l)^2 = 0.025, the upper l^2 = 0.975 mirrored
    lo, hi = statistics.binomial_interval(1, 2)
    assert lo == pytest.approx(1 - np.sqrt(0.975)) and hi == pytest.approx(np.sqrt(0.975))


def test_wilson_interval_matches_its_formula():
    z = 1.959963984540054
    k, n = 3, 10
    centre, half = k + z * z / 2, z * np.sqrt(k * (n - k) / n + z * z / 4)
    lo, hi = statistics.binomial_interval(k, n, method="wilson")
    assert lo == pytest.approx((centre - half) / (n + z * z))
    assert hi == pytest.approx((centre + half) / (n + z * z))


def test_binomial_interval_rejects_bad_counts():
    for k, n in ((3, 2), (-1, 5), (1, 0)):
        with pytest.raises(ValidityError, match="k <= n"):
            statistics.binomial_interval(k, n)
    with pytest.raises(ValidityError, match="method"):
        statistics.binomial_interval(1, 5, method="jeffreys")
    with pytest.raises(ValidityError, match="integer"):
        statistics.binomial_interval(1.5, 5)


def test_calibration_verdict_needs_an_interval_that_separates_alpha_from_too_high():
    # 0 of 20: the upper end 1 - 0.025^(1/20) = 0.168 still holds 0.15 -> no verdict
    assert statistics.calibration_verdict(0, 20)["verdict"] == "undecided"
    # 0 of 30: upper end 0.116 < 0.15 and the interval holds 0.05 -> calibrated
    v = statistics.calibration_verdict(0, 30)
    assert v["verdict"] == "calibrated" and v["fpr_high"] == pytest.approx(1 - 0.025 ** (1 / 30))
    # 6 of 20: the lower end lies above 0.05 -> too liberal
    assert statistics.calibration_verdict(6, 20)["verdict"] == "too liberal"
    assert statistics.calibration_verdict(0, 80)["verdict"] == "conservative"  # upper 0.045 < 0.05
    with pytest.raises(ValidityError, match="too_high"):
        statistics.calibration_verdict(1, 20, alpha=0.2, too_high=0.1)


def test_mean_interval_is_the_student_t_interval():
    from scipy.stats import t

    mean, lo, hi = statistics.mean_interval([2.0, 4.0])  # sd sqrt(2), n 2, t(1) = 12.706
    half = t.ppf(0.975, 1) * np.sqrt(2) / np.sqrt(2)
    assert mean == 3.0 and lo == pytest.approx(3 - half) and hi == pytest.approx(3 + half)
    assert np.isnan(statistics.mean_interval([5.0])[1])


def test_monotonicity_test_on_perfect_and_reversed_orderings():
    up = statistics.monotonicity_test([0.1, 0.3, 0.5, 0.7, 0.9], [1, 2, 3, 4, 5])
    assert up["rho"] == pytest.approx(1.0) and up["pvalue"] < 0.01 and up["n"] == 5
    down = statistics.monotonicity_test([0.1, 0.3, 0.5, 0.7, 0.9], [5, 4, 3, 2, 1])
    assert down["rho"] == pytest.approx(-1.0)
    flat = statistics.monotonicity_test([0.1, 0.5, 0.9], [1, 1, 1])
    assert np.isnan(flat["rho"])
    # ties in the dose: ranks 1.5, 1.5, 3.5, 3.5 against 1..4 -> rho = 4 / sqrt(4 * 5) = 0.894
    tied = statistics.monotonicity_test([0.1, 0.1, 0.9, 0.9], [1, 2, 3, 4])
    assert tied["rho"] == pytest.approx(4 / np.sqrt(20))


def test_minimum_detectable_needs_the_power_to_stay_above_the_target():
    s = pd.Series([0.0, 0.8, 1.0, 1.0], index=[0.6, 0.7, 0.8, 0.9])
    assert statistics.minimum_detectable(s) == 0.7
    assert statistics.minimum_detectable(s, target=0.9) == 0.8
    assert statistics.minimum_detectable(pd.Series([0.9, 0.5], index=[0.6, 0.9])) != \
        statistics.minimum_detectable(pd.Series([0.9, 0.9], index=[0.6, 0.9]))
    assert np.isnan(statistics.minimum_detectable(pd.Series([0.9, 0.5], index=[0.6, 0.9])))
