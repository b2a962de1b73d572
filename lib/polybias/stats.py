"""Statistics shared by the metrics: effect sizes, permutation tests and the Jensen–Shannon
distance to a one-hot distribution.

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
import math
from dataclasses import dataclass
from math import comb
from typing import Literal

import numpy as np
import pandas as pd

Alternative = Literal["greater", "less", "two-sided"]
_ALTERNATIVES = ("greater", "less", "two-sided")

#: Monte Carlo draws of a permutation test whose splits are too many to enumerate (the
#: WEAT default, Caliskan et al. 2017; used by WEAT, SEAT and Kurita's effect size).
N_PERMUTATIONS = 100_000

#: Monte Carlo draws of the permutation tests that are costly per draw (CEAT re-pools every
#: split), run once per cell (Kurita's effect size per sentence structure, the validity
#: study over its grid of strengths and seeds) or over group labels
#: (:func:`group_permutation_test`, the categorical bias studies): p resolves to 1e-4.
N_PERMUTATIONS_SHORT = 10_000

#: Most equal-size splits a permutation test enumerates exactly (WEAT, SEAT); beyond it,
#: ``n_permutations`` splits are drawn with a seed.
EXACT_LIMIT = 1_000_000

#: Bootstrap resamples of a confidence interval (CrowS-Pairs, StereoSet, GEST, EuroGEST
#: and the studies that report them).
N_BOOTSTRAP = 1000

#: Coverage of the confidence intervals the metrics and studies report.
CONFIDENCE_LEVEL = 0.95

#: Significance level of the tests the studies' tables and sentences call significant.
ALPHA = 0.05


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


def split_permutation_kind(n_x: int, n_y: int, exact_limit: int = EXACT_LIMIT) -> str:
    """How :func:`split_permutation_test` tests groups of ``n_x`` and ``n_y`` items:
    ``exact`` (every one of the C(n_x + n_y, n_x) splits) when there are at most
    ``exact_limit`` splits, else ``monte-carlo``.

    >>> split_permutation_kind(2, 2), split_permutation_kind(40, 40)
    ('exact', 'monte-carlo')
    """
    return "exact" if comb(n_x + n_y, n_x) <= exact_limit else "monte-carlo"


def split_permutation_test(
    x: np.ndarray,
    y: np.ndarray,
    alternative: Alternative = "greater",
    n_permutations: int = N_PERMUTATIONS,
    exact_limit: int = EXACT_LIMIT,
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
    if split_permutation_kind(k, n - k, exact_limit) == "exact":
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


class GroupPermutationError(ValueError):
    """Bad input to :func:`group_permutation_test`; the message names what is wrong."""


_GROUP_TOLERANCE = 1e-12


@dataclass(frozen=True)
class GroupPermutationResult:
    """Result of :func:`group_permutation_test`."""

    statistic: float
    pvalue: float
    null_mean: float
    n_permutations: int
    exact: bool
    n_groups: int
    n_replicates: int
    n_cells: int


def _group_blocks(scores: pd.DataFrame, value: str, group: str, replicate: str,
            cell: str | None) -> tuple[list[np.ndarray], list[str]]:
    for c in (value, group, replicate, *([cell] if cell else [])):
        if c not in scores.columns:
            raise GroupPermutationError(f"scores have no column {c!r}")
    if scores.empty:
        raise GroupPermutationError("no scores")
    if not np.all(np.isfinite(scores[value].to_numpy(float))):
        raise GroupPermutationError(f"column {value!r} holds a value that is not finite")
    key = [cell, replicate] if cell else [replicate]
    if scores.duplicated([*key, group]).any():
        dup = scores[scores.duplicated([*key, group], keep=False)][[*key, group]].head(3)
        raise GroupPermutationError(f"more than one score per ({', '.join(key)}, {group}): {dup.values.tolist()}")
    groups = sorted(scores[group].unique(), key=str)
    if len(groups) < 2:
        raise GroupPermutationError(f"the test needs at least two groups, got {groups}")
    wide = scores.pivot_table(index=key, columns=group, values=value, sort=False)
    missing = wide[wide.isna().any(axis=1)]
    if len(missing):
        raise GroupPermutationError(f"{replicate} rows without a score for every {group}: {missing.index.tolist()[:3]}")
    blocks = []
    cells = wide.index.get_level_values(0).unique() if cell else [None]
    for c in cells:
        block = (wide.xs(c, level=0) if cell else wide)[groups].to_numpy(float)
        if len(block) < 2:
            raise GroupPermutationError(f"cell {c!r} has {len(block)} {replicate}: the test needs at least two "
                               "replicates per cell (with one, no permutation changes the statistic)")
        blocks.append(block)
    return blocks, groups


def _group_statistic(blocks: list[np.ndarray]) -> float:
    return float(np.mean([b.mean(axis=0).var() for b in blocks]))


def group_permutation_test(scores: pd.DataFrame, value: str = "corrected", group: str = "group",
                           replicate: str = "attribute", cell: str | None = None,
                           n_permutations: int = N_PERMUTATIONS_SHORT, seed: int = 0,
                           exact_limit: int = 10000) -> GroupPermutationResult:
    """Permutation test of base-corrected scores against "no group differs from its base rate".

    With d[c, r, n] the corrected score (log P − log base) of group n in replicate r of
    cell c (e.g. attributes of one sentiment stratum, templates, items):

    * **statistic**: T = (1/|C|) Σ_c Var_n( (1/|R_c|) Σ_{r∈R_c} d[c, r, n] ), the CB score
      of the replicate-averaged corrected scores (population variance over groups, mean
      over cells);
    * **null** H0: within every (cell, replicate) the group labels are exchangeable: no
      group is consistently raised or lowered relative to its base rate across the
      replicates of a cell;
    * **p-value**: the share of the label permutations (each replicate's labels permuted
      independently) whose T is at least the observed one, counting the identity —
      exact when the (N!)^R permutations can be enumerated, else
      p = (1 + #{T_b ≥ T}) / (1 + B) over B random draws (Phipson & Smyth 2010).

    With a single replicate per cell T cannot move under H0 and the test is refused. Used
    on seed 004's interactions by :mod:`polybias.studies.capstone2023`.

    Parameters
    ----------
    scores : one row per (cell, replicate, group) with the corrected score in ``value``
        (log P − log base); every replicate must score every group.
    cell : column splitting the replicates into cells (e.g. sentiment stratum), or None.
    n_permutations, seed : Monte Carlo draws (``numpy.random.default_rng(seed)``) when the
        permutations number more than ``exact_limit``; else all are enumerated.

    Two groups, two replicates agreeing on the direction: T = Var([1, −1]) = 1; of the
    four label permutations two keep the direction (T = 1), two cancel it (T = 0):

    >>> df = pd.DataFrame({"attribute": ["a", "a", "b", "b"], "group": ["x", "y", "x", "y"],
    ...                    "corrected": [1.0, -1.0, 1.0, -1.0]})
    >>> r = group_permutation_test(df)
    >>> r.statistic, r.pvalue, r.exact, r.n_permutations
    (1.0, 0.5, True, 4)
    """
    blocks, groups = _group_blocks(scores, value, group, replicate, cell)
    n = len(groups)
    observed = _group_statistic(blocks)
    n_rows = sum(len(b) for b in blocks)
    total = math.factorial(n) ** n_rows if n_rows * math.log(math.factorial(n)) < 64 else None
    if total is not None and total <= exact_limit:
        perms = [np.array(p) for p in itertools.permutations(range(n))]
        null = []
        for choice in itertools.product(range(len(perms)), repeat=n_rows):
            it = iter(choice)
            null.append(_group_statistic([np.stack([row[perms[next(it)]] for row in b]) for b in blocks]))
        null = np.array(null)
        p = float(np.mean(null >= observed - _GROUP_TOLERANCE))
        return GroupPermutationResult(observed, p, float(null.mean()), int(total), True, n, n_rows, len(blocks))
    if n_permutations < 1:
        raise GroupPermutationError(f"n_permutations must be positive, got {n_permutations}")
    rng = np.random.default_rng(seed)
    null = np.zeros(n_permutations)
    chunk = max(1, int(2_000_000 // max(1, n_rows * n)))
    for start in range(0, n_permutations, chunk):
        size = min(chunk, n_permutations - start)
        acc = np.zeros(size)
        for b in blocks:
            idx = rng.random((size, *b.shape)).argsort(axis=2)
            permuted = np.take_along_axis(np.broadcast_to(b, (size, *b.shape)), idx, axis=2)
            acc += permuted.mean(axis=1).var(axis=1)
        null[start:start + size] = acc / len(blocks)
    p = float((1 + np.sum(null >= observed - _GROUP_TOLERANCE)) / (1 + n_permutations))
    return GroupPermutationResult(observed, p, float(null.mean()), n_permutations, False, n, n_rows, len(blocks))


def jsd_to_onehot(logprob_gold: np.ndarray | float, compat_fourth_root: bool = False) -> np.ndarray:
    """Jensen–Shannon distance (base 2) between a distribution and the one-hot gold.

    With q the probability the distribution gives the gold token and M = (P + G)/2,

        JS(P ‖ G) = 1 + q/2 · log2 q − (1 + q)/2 · log2(1 + q)

    (the other tokens' mass enters only through 1 − q), and the distance is √JS
    (Endres & Schindelin 2003; scipy's ``jensenshannon``). ``compat_fourth_root`` takes
    one more square root, as the seed-001 code does.

    >>> jsd_to_onehot(np.log([1.0, 1e-12])).round(6).tolist()
    [0.0, 1.0]
    """
    q = np.exp(np.asarray(logprob_gold, dtype=np.float64))
    with np.errstate(divide="ignore", invalid="ignore"):
        qlogq = np.where(q > 0, q * np.log2(np.where(q > 0, q, 1)), 0.0)
    js = np.clip(1 + 0.5 * qlogq - 0.5 * (1 + q) * np.log2(1 + q), 0.0, 1.0)
    dist = np.sqrt(js)
    return np.sqrt(dist) if compat_fourth_root else dist
