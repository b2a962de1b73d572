"""Statistics shared by the metrics: effect sizes and permutation tests.

The permutation test here is the one of WEAT (Caliskan et al. 2017, Science
356:183): given per-item scores of two groups X and Y, the statistic of a split
(S, complement) is ``sum(S) - sum(complement)``; the p-value is the share of the
equal-size re-splits of X ∪ Y whose statistic reaches the observed one. Ties count
as exceedances. All splits are enumerated when their number is at most
``exact_limit``; otherwise ``n_permutations`` random splits are drawn with a seed
and p = (hits + 1) / (n + 1) (Phipson & Smyth 2010), which is never 0.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from math import comb
from typing import Literal

import numpy as np

Alternative = Literal["greater", "less", "two-sided"]
_ALTERNATIVES = ("greater", "less", "two-sided")


def standardized_mean_difference(x: np.ndarray, y: np.ndarray, ddof: int = 1) -> float:
    """(mean x − mean y) / std(x ∪ y): the WEAT effect size (Caliskan et al. 2017, eq. 3).

    ``ddof=1`` (sample std) is the Caliskan default; ``ddof=0`` follows WEFE/XWEAT.

    >>> round(standardized_mean_difference(np.array([1., 2.]), np.array([0., 1.])), 4)
    1.2247
    """
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if x.size == 0 or y.size == 0:
        raise ValueError("effect size needs two non-empty groups")
    pooled = np.concatenate([x, y])
    if pooled.size - ddof <= 0:
        raise ValueError(f"std with ddof={ddof} needs more than {ddof} values")
    sd = pooled.std(ddof=ddof)
    if sd == 0:
        raise ValueError("effect size undefined: all scores are equal (zero standard deviation)")
    return float((x.mean() - y.mean()) / sd)


@dataclass(frozen=True)
class PermutationResult:
    """Outcome of a split permutation test."""

    statistic: float
    pvalue: float
    method: Literal["exact", "monte-carlo"]
    n_permutations: int
    alternative: str


def _exceeds(subset_sums: np.ndarray, total: float, k: int, n: int, observed_sum: float,
             alternative: str, tol: float) -> np.ndarray:
    # statistic of a split = 2*sum(S) - total; compare on the subset sums
    if alternative == "greater":
        return subset_sums >= observed_sum - tol
    if alternative == "less":
        return subset_sums <= observed_sum + tol
    centre = total * k / n  # E[sum(S)] under random splits
    return np.abs(subset_sums - centre) >= abs(observed_sum - centre) - tol


def split_permutation_test(
    x: np.ndarray,
    y: np.ndarray,
    alternative: Alternative = "greater",
    n_permutations: int = 100_000,
    exact_limit: int = 1_000_000,
    seed: int = 0,
    chunk: int = 20_000,
) -> PermutationResult:
    """Permutation test of ``sum(x) - sum(y)`` over re-splits of x ∪ y into |x| and |y|.

    Parameters
    ----------
    x, y : per-item scores of the two groups (sizes may differ).
    alternative : "greater" (one-sided, the WEAT default), "less" or "two-sided"
        (distance from the null mean of the statistic).
    n_permutations : random splits drawn when enumeration is too large.
    exact_limit : enumerate all C(|x|+|y|, |x|) splits when their number is at most this.
    seed : seed of the Monte Carlo draw.

    >>> r = split_permutation_test(np.array([3., 2.]), np.array([1., 0.]))
    >>> r.method, r.pvalue   # 1 of the 6 splits reaches 3+2
    ('exact', 0.16666666666666666)
    """
    if alternative not in _ALTERNATIVES:
        raise ValueError(f"alternative must be one of {_ALTERNATIVES}, got {alternative!r}")
    x, y = np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64)
    if x.size == 0 or y.size == 0:
        raise ValueError("permutation test needs two non-empty groups")
    pooled = np.concatenate([x, y])
    n, k = pooled.size, x.size
    total, observed_sum = pooled.sum(), x.sum()
    statistic = float(observed_sum - y.sum())
    tol = 1e-9 * max(1.0, float(np.abs(pooled).sum()))
    n_splits = comb(n, k)
    if n_splits <= exact_limit:
        hits = 0
        combos = itertools.combinations(range(n), k)
        dtype = np.dtype((np.int64, k))
        while True:
            block = np.fromiter(itertools.islice(combos, chunk), dtype=dtype)
            if block.size == 0:
                break
            sums = pooled[block].sum(axis=1)
            hits += int(_exceeds(sums, total, k, n, observed_sum, alternative, tol).sum())
        return PermutationResult(statistic, hits / n_splits, "exact", n_splits, alternative)
    if n_permutations < 1:
        raise ValueError("n_permutations must be at least 1")
    rng = np.random.default_rng(seed)
    hits, done = 0, 0
    while done < n_permutations:
        m = min(chunk, n_permutations - done)
        subset = np.argpartition(rng.random((m, n)), k - 1, axis=1)[:, :k]
        sums = pooled[subset].sum(axis=1)
        hits += int(_exceeds(sums, total, k, n, observed_sum, alternative, tol).sum())
        done += m
    return PermutationResult(
        statistic, (hits + 1) / (n_permutations + 1), "monte-carlo", n_permutations, alternative
    )
