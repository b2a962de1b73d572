import itertools
from math import comb

import numpy as np
import pytest
from polybias.stats import split_permutation_test, standardized_mean_difference


def test_effect_size_by_hand():
    # x = [1, 2], y = [0, 1]: mean difference 1; pooled [1, 2, 0, 1] has var 2/3 (ddof=1), 1/2 (ddof=0)
    x, y = np.array([1.0, 2.0]), np.array([0.0, 1.0])
    assert standardized_mean_difference(x, y) == pytest.approx(1 / np.sqrt(2 / 3))
    assert standardized_mean_difference(x, y, ddof=0) == pytest.approx(1 / np.sqrt(1 / 2))


def test_effect_size_errors():
    with pytest.raises(ValueError, match="non-empty"):
        standardized_mean_difference(np.array([]), np.array([1.0]))
    with pytest.raises(ValueError, match="zero standard deviation"):
        standardized_mean_difference(np.array([1.0, 1.0]), np.array([1.0]))


def test_exact_pvalue_by_hand():
    # splits of {3,2,1,0} into two pairs: sums of the first pair 5,4,3,3,2,1 -> only {3,2} reaches 5
    r = split_permutation_test(np.array([3.0, 2.0]), np.array([1.0, 0.0]))
    assert (r.method, r.n_permutations, r.statistic) == ("exact", 6, 4.0)
    assert r.pvalue == pytest.approx(1 / 6)
    assert split_permutation_test(np.array([0.0, 1.0]), np.array([2.0, 3.0]), "less").pvalue == pytest.approx(1 / 6)
    # two-sided: |sum - 3| >= 2 holds for {3,2} and {1,0}
    assert split_permutation_test(np.array([3.0, 2.0]), np.array([1.0, 0.0]), "two-sided").pvalue == pytest.approx(2 / 6)


def test_ties_count_as_exceedances():
    # all scores equal: every split ties with the observed one -> p = 1
    r = split_permutation_test(np.ones(4), np.ones(4))
    assert r.pvalue == 1.0
    # float sums of equal sets differ in the last bits with order: they must still tie.
    # Counted on integers: subsets of size 3 of [1,2,3,3,2,1] with sum >= 6.
    ints = [1, 2, 3, 3, 2, 1]
    hits = sum(sum(c) >= 6 for c in itertools.combinations(ints, 3))
    r = split_permutation_test(np.array([0.1, 0.2, 0.3]), np.array([0.3, 0.2, 0.1]))
    assert r.pvalue == pytest.approx(hits / comb(6, 3))


def test_unequal_sizes_exact_count():
    x, y = np.array([5.0, 4.0, 3.0]), np.array([0.0, 1.0, 2.0, 0.5, 0.2])
    r = split_permutation_test(x, y)
    assert r.n_permutations == comb(8, 3)
    assert r.pvalue == pytest.approx(1 / comb(8, 3))


def test_exact_and_monte_carlo_agree(rng):
    x, y = rng.normal(0.3, 1, 9), rng.normal(0, 1, 9)  # C(18, 9) = 48620 splits
    exact = split_permutation_test(x, y)
    mc = split_permutation_test(x, y, exact_limit=0, n_permutations=40_000, seed=1)
    assert exact.method == "exact" and mc.method == "monte-carlo"
    se = np.sqrt(exact.pvalue * (1 - exact.pvalue) / 40_000)
    assert abs(mc.pvalue - exact.pvalue) < 4 * se + 1 / 40_000


def test_monte_carlo_is_seeded_and_never_zero(rng):
    x, y = rng.normal(5, 1, 30), rng.normal(0, 1, 30)
    a = split_permutation_test(x, y, n_permutations=2000, seed=7)
    b = split_permutation_test(x, y, n_permutations=2000, seed=7)
    assert a == b and a.method == "monte-carlo"
    assert a.pvalue == pytest.approx(1 / 2001)


@pytest.mark.parametrize("method", ["exact", "monte-carlo"])
def test_null_calibration(method):
    rng = np.random.default_rng(2024)
    pvalues = []
    for i in range(300):
        x, y = rng.normal(size=8), rng.normal(size=8)
        kwargs = {} if method == "exact" else {"exact_limit": 0, "n_permutations": 500, "seed": i}
        pvalues.append(split_permutation_test(x, y, **kwargs).pvalue)
    share = np.mean(np.array(pvalues) < 0.05)
    assert 0.02 <= share <= 0.09, share  # binomial(300, 0.05): 99.9% band ~ [0.017, 0.093]


def test_bad_alternative():
    with pytest.raises(ValueError, match="alternative"):
        split_permutation_test(np.ones(2), np.zeros(2), alternative="bigger")
