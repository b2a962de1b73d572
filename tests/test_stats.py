import itertools
from math import comb

import numpy as np
import pandas as pd
import pytest
from polybias.stats import (
    GroupPermutationError,
    group_permutation_test,
    split_permutation_test,
    standardized_mean_difference,
)


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


# ---------------------------------------------------------------- group permutation test

def _group_frame(d: np.ndarray, cells: list[str] | None = None) -> pd.DataFrame:
    """(replicates, groups) corrected scores as rows attribute, group, corrected[, cell]."""
    rows = []
    for r, n in itertools.product(range(d.shape[0]), range(d.shape[1])):
        rows.append({"attribute": f"a{r}", "group": f"g{n}", "corrected": float(d[r, n]),
                     **({"cell": cells[r]} if cells else {})})
    return pd.DataFrame(rows)


def test_exact_test_by_hand():
    # two groups, replicates (1, -1), (1, -1), (-1, 1): mean (1/3, -1/3), T = 1/9;
    # of 8 label permutations, 6 give means ±1/3 (T = 1/9) and 2 give ±1 (T = 1): p = 1
    r = group_permutation_test(_group_frame(np.array([[1.0, -1], [1, -1], [-1, 1]])))
    assert r.exact and r.n_permutations == 8
    assert r.statistic == pytest.approx(1 / 9) and r.pvalue == pytest.approx(1.0)
    assert r.null_mean == pytest.approx((6 / 9 + 2) / 8)
    # all three agree: T = 1, only the 2 permutations that keep all or flip all reach it
    r = group_permutation_test(_group_frame(np.array([[1.0, -1], [1, -1], [1, -1]])))
    assert r.statistic == pytest.approx(1.0) and r.pvalue == pytest.approx(2 / 8)


def test_cells_average_their_own_variances():
    # cell c1 agrees (T_c1 = 1), cell c2 cancels (T_c2 = 0): T = 1/2
    d = np.array([[1.0, -1], [1, -1], [1, -1], [-1, 1]])
    r = group_permutation_test(_group_frame(d, ["c1", "c1", "c2", "c2"]), cell="cell")
    assert r.n_cells == 2 and r.statistic == pytest.approx(0.5)
    # per cell, T_c is 1 for 2 of 4 permutations and 0 otherwise: P(T >= 1/2) = 1 - (1/2)^2
    assert r.exact and r.pvalue == pytest.approx(0.75)


def test_planted_bias_is_found_and_the_null_keeps_its_level():
    rng = np.random.default_rng(0)
    n_attr, n_groups = 12, 4
    sign = np.repeat([1.0, -1.0], n_attr // 2)[:, None]          # career vs family attributes
    effect = np.array([1.0, 1.0, -1.0, -1.0])[None, :]           # male vs female terms
    cells = ["career"] * 6 + ["family"] * 6
    shift = rng.normal(0, 3, (n_attr, 1))                         # a shift common to all groups
    planted = shift + 0.8 * sign * effect + rng.normal(0, 0.5, (n_attr, n_groups))
    r = group_permutation_test(_group_frame(planted, cells), cell="cell", n_permutations=2000, seed=1)
    assert not r.exact and r.pvalue < 0.01
    # without the cells the two halves cancel: the planted effect is invisible
    assert group_permutation_test(_group_frame(planted), n_permutations=2000, seed=1).pvalue > 0.05
    # under the null (no group effect) the test rejects at about its level
    pvalues = [group_permutation_test(
        _group_frame(rng.normal(0, 3, (n_attr, 1)) + rng.normal(0, 0.5, (n_attr, n_groups)), cells),
        cell="cell", n_permutations=199, seed=k).pvalue for k in range(100)]
    assert 0.0 <= np.mean(np.array(pvalues) <= 0.05) <= 0.12


def test_bad_input_is_named():
    with pytest.raises(GroupPermutationError, match="at least two replicates"):
        group_permutation_test(_group_frame(np.array([[1.0, -1]])))
    frame = _group_frame(np.array([[1.0, -1], [1, -1]])).iloc[:-1]
    with pytest.raises(GroupPermutationError, match="without a score for every group"):
        group_permutation_test(frame)
    with pytest.raises(GroupPermutationError, match="no column 'cell'"):
        group_permutation_test(_group_frame(np.array([[1.0, -1], [1, -1]])), cell="cell")
    with pytest.raises(GroupPermutationError, match="more than one score"):
        group_permutation_test(pd.concat([frame, frame]))
