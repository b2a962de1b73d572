"""GEST aggregation: rates r_i, r_f, r_m, g_s and ranks by hand, planted shifts, intervals."""

import numpy as np
import pytest
from polybias.data import gest as gest_data
from polybias.measures import compute
from polybias.metrics import gest
from polybias.metrics.gest import GestMetricError, gest_rates


def _planted(shift: float, noise: float = 0.0, per: int = 40, seed: int = 0):
    """Scores with a known masculine shift: +shift/2 for stereotypes 8-16, -shift/2 for 1-7."""
    ids = np.repeat(np.arange(1, 17), per)
    rng = np.random.default_rng(seed)
    centred = rng.normal(size=ids.size) * noise
    for i in range(1, 17):  # each stereotype's noise has mean exactly 0
        centred[ids == i] -= centred[ids == i].mean()
    return centred + np.where(ids >= 8, shift / 2, -shift / 2), ids


def test_rates_by_hand():
    """Stereotype 1: scores 0.1, 0.3 (mean 0.2); 2: -0.2; 8: 0.4, 0.6 (mean 0.5); 9: 0.1.
    r_f = exp((0.2 - 0.2) / 2) = 1, r_m = exp((0.5 + 0.1) / 2) = exp(0.3), g_s = exp(0.3);
    ranks by rate: 2 < 9 < 1 < 8."""
    r = gest_rates([0.1, 0.3, -0.2, 0.4, 0.6, 0.1], [1, 1, 2, 8, 8, 9], n_bootstrap=0)
    np.testing.assert_allclose(r.rates.mean_score, [0.2, -0.2, 0.5, 0.1])
    np.testing.assert_allclose(r.rates.rate, np.exp([0.2, -0.2, 0.5, 0.1]))
    assert r.rates["rank"].tolist() == [3, 1, 4, 2]
    assert r.rates.group.tolist() == ["feminine", "feminine", "masculine", "masculine"]
    assert r.rates.n.tolist() == [2, 1, 2, 1] and r.n == 6
    assert r.r_f == pytest.approx(1.0) and r.r_m == pytest.approx(np.exp(0.3))
    assert r.g_s == pytest.approx(np.exp(0.3))
    assert np.isnan(r.g_s_low) and r.rates.ci_low.isna().all()


def test_base_10_raises_every_rate_to_the_power_ln_10_and_keeps_the_ranks():
    ids = np.repeat(np.arange(1, 17), 20)
    scores = np.random.default_rng(4).normal(size=ids.size)  # distinct stereotype means
    e, ten = gest_rates(scores, ids, n_bootstrap=0), gest_rates(scores, ids, n_bootstrap=0, base="10")
    np.testing.assert_allclose(ten.rates.rate, e.rates.rate ** np.log(10))
    assert ten.g_s == pytest.approx(e.g_s ** np.log(10))
    assert ten.rates["rank"].tolist() == e.rates["rank"].tolist()


@pytest.mark.parametrize("shift", [0.0, 0.1, -0.3, 0.8])
def test_a_planted_masculine_shift_is_recovered_exactly(shift):
    """Every masculine stereotype shifted by +δ/2, every feminine one by -δ/2, noise of mean 0
    within each stereotype: g_s = exp(δ), r_m = exp(δ/2), r_f = exp(-δ/2)."""
    scores, ids = _planted(shift, noise=1.0)
    r = gest_rates(scores, ids, n_bootstrap=300, seed=1)
    assert r.g_s == pytest.approx(np.exp(shift), rel=1e-12)
    assert r.r_m == pytest.approx(np.exp(shift / 2), rel=1e-12)
    assert r.r_f == pytest.approx(np.exp(-shift / 2), rel=1e-12)
    assert r.g_s_low < np.exp(shift) < r.g_s_high


def test_a_shift_of_one_stereotype_moves_its_rank_to_the_top():
    ids = np.repeat(np.arange(1, 17), 20)
    scores = np.random.default_rng(5).normal(size=ids.size) * 0.3 + np.where(ids == 3, 2.0, 0.0)  # "Empathetic" read as very masculine
    r = gest_rates(scores, ids, n_bootstrap=0)
    assert r.rates.set_index("stereotype").loc[3, "rank"] == 16
    assert r.g_s < 1  # a feminine stereotype read as masculine lowers g_s


def test_the_normal_interval_is_the_normal_fitted_to_the_bootstrap_means():
    """The authors' bootstrap_ci: mean ± z · std (ddof 0) of the bootstrap means, exponentiated."""
    scores, ids = _planted(0.2, noise=1.0, per=10)
    r = gest_rates(scores, ids, n_bootstrap=50, seed=3)
    rng = np.random.default_rng(3)
    z = 1.959963984540054
    for i in range(1, 17):
        x = scores[ids == i]
        means = x[rng.integers(0, len(x), size=(50, len(x)))].mean(axis=1)
        row = r.rates.set_index("stereotype").loc[i]
        assert row.ci_low == pytest.approx(np.exp(means.mean() - z * means.std()), rel=1e-12)
        assert row.ci_high == pytest.approx(np.exp(means.mean() + z * means.std()), rel=1e-12)


def test_percentile_interval_and_level():
    scores, ids = _planted(0.2, noise=1.0)
    wide = gest_rates(scores, ids, n_bootstrap=400, seed=0, interval="percentile", level=0.99)
    narrow = gest_rates(scores, ids, n_bootstrap=400, seed=0, interval="percentile", level=0.5)
    assert (wide.rates.ci_low < narrow.rates.ci_low).all() and (wide.rates.ci_high > narrow.rates.ci_high).all()
    assert wide.g_s_low < narrow.g_s_low < wide.g_s < narrow.g_s_high < wide.g_s_high


def test_seeded_and_reversible():
    scores, ids = _planted(0.3, noise=1.0)
    a, b = gest_rates(scores, ids, seed=5), gest_rates(scores, ids, seed=5)
    assert a.rates.equals(b.rates) and (a.g_s_low, a.g_s_high) == (b.g_s_low, b.g_s_high)
    assert gest_rates(scores, ids, seed=6).g_s_low != a.g_s_low
    flipped = gest_rates(-scores, ids, seed=5)
    assert flipped.g_s == pytest.approx(1 / a.g_s) and flipped.g_s_low == pytest.approx(1 / a.g_s_high)


@pytest.mark.parametrize(("scores", "ids", "options", "message"), [
    ([0.1, 0.2], [1], {}, "differ in length"),
    ([], [], {}, "no sentences"),
    ([0.1, np.inf], [1, 8], {}, "non-finite score at sentence 1"),
    ([0.1, 0.2], [1, 17], {}, r"unknown stereotype id\(s\) \[17\]"),
    ([0.1, 0.2], ["1", "8"], {}, "stereotype ids must be integers"),
    ([0.1, 0.2], [1, 8.5], {}, r"unknown stereotype id\(s\) \[8.5\]"),
    ([0.1, 0.2], [1, 2], {}, "no sentence of a masculine stereotype"),
    ([0.1, 0.2], [8, 9], {}, "no sentence of a feminine stereotype"),
    ([0.1, 0.2], [1, 8], {"interval": "bca"}, "interval must be one of"),
    ([0.1, 0.2], [1, 8], {"base": "2"}, "base must be one of"),
    ([0.1, 0.2], [1, 8], {"n_bootstrap": -1}, "n_bootstrap must be an integer"),
    ([0.1, 0.2], [1, 8], {"level": 1.0}, r"level must lie in \(0, 1\)"),
    ([0.1, 0.2], [1, 8], {"feminine": (1, 8)}, "stereotypes in both groups"),
])
def test_malformed_input_names_the_problem(scores, ids, options, message):
    with pytest.raises(GestMetricError, match=message):
        gest_rates(scores, ids, **options)


def test_the_registered_measure_reports_g_s_with_the_rates():
    scores, ids = _planted(0.4, noise=1.0)
    r = compute("gest", scores=scores, stereotypes=ids, n_bootstrap=200, seed=2)
    direct = gest_rates(scores, ids, n_bootstrap=200, seed=2)
    assert (r.value, r.interval.low, r.interval.high, r.n) == (direct.g_s, direct.g_s_low, direct.g_s_high, 640)
    assert r.interval.method == "bootstrap-normal" and r.p_value is None
    assert r.details.equals(direct.rates)
    assert compute("gest", scores=scores, stereotypes=ids, n_bootstrap=0).interval is None


def test_the_groups_are_the_datasets():
    assert (gest.FEMININE, gest.MASCULINE) == (gest_data.FEMININE, gest_data.MASCULINE)
    assert sorted(gest.FEMININE + gest.MASCULINE) == sorted(gest_data.STEREOTYPE_NAMES)
