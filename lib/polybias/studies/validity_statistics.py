"""The statistics of the validity study: binomial intervals, the calibration verdict and
the sample size it needs, intervals of a mean, a monotonicity test and the minimum
detectable bias. Plain numbers and series in and out; the tables over planted models that
use them are :mod:`polybias.studies.validity`, the numbers they read are produced by
:mod:`polybias.studies.validity_designs`."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import beta, norm, spearmanr, t

from polybias.stats import ALPHA, CONFIDENCE_LEVEL


class ValidityError(ValueError):
    """Bad arguments to a validity run or statistic."""


TOO_HIGH = 0.15
"""A false-positive rate a measure must be shown to stay below to be called calibrated
(:func:`calibration_verdict`)."""


TARGET_POWER = 0.8
"""The detection rate that sets a measure's minimum detectable bias (:func:`minimum_detectable`)."""


INTERVAL_METHODS = ("clopper-pearson", "wilson")


def binomial_interval(k: int, n: int, level: float = CONFIDENCE_LEVEL,
                      method: str = "clopper-pearson") -> tuple[float, float]:
    """Two-sided interval for a binomial proportion ``k / n``.

    ``clopper-pearson`` (exact; Clopper & Pearson 1934): the ``(1 - level)/2`` and
    ``(1 + level)/2`` quantiles of Beta(k, n − k + 1) and Beta(k + 1, n − k), with 0
    (k = 0) and 1 (k = n) at the ends. ``wilson`` (Wilson 1927): the score interval
    ``(k + z²/2 ± z √(k(n − k)/n + z²/4)) / (n + z²)`` with z the normal quantile.

    >>> lo, hi = binomial_interval(0, 20)
    >>> lo, round(hi, 4), round(1 - 0.025 ** (1 / 20), 4)
    (0.0, 0.1684, 0.1684)
    >>> [round(x, 4) for x in binomial_interval(0, 20, method="wilson")]
    [0.0, 0.1611]
    """
    for name, value in (("k", k), ("n", n)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise ValidityError(f"{name} must be an integer, got {value!r}")
    if n < 1 or not 0 <= k <= n:
        raise ValidityError(f"need 0 <= k <= n and n >= 1, got k={k}, n={n}")
    if not 0 < level < 1:
        raise ValidityError(f"level must be in (0, 1), got {level!r}")
    tail = (1 - level) / 2
    if method == "clopper-pearson":
        lo = 0.0 if k == 0 else float(beta.ppf(tail, k, n - k + 1))
        hi = 1.0 if k == n else float(beta.ppf(1 - tail, k + 1, n - k))
        return lo, hi
    if method == "wilson":
        z = float(norm.ppf(1 - tail))
        centre = k + z * z / 2
        half = z * np.sqrt(k * (n - k) / n + z * z / 4)
        return max(0.0, float((centre - half) / (n + z * z))), min(1.0, float((centre + half) / (n + z * z)))
    raise ValidityError(f"method must be one of {INTERVAL_METHODS}, got {method!r}")


def calibration_verdict(k: int, n: int, alpha: float = ALPHA, too_high: float = TOO_HIGH,
                        level: float = CONFIDENCE_LEVEL, method: str = "clopper-pearson") -> dict[str, Any]:
    """False-positive rate ``k / n`` of a test at level ``alpha``, its binomial interval
    (:func:`binomial_interval`) and a verdict only where the interval can tell ``alpha``
    from ``too_high``:

    * ``"calibrated"`` — the interval holds ``alpha`` and lies below ``too_high``;
    * ``"too liberal"`` — the interval lies above ``alpha``;
    * ``"conservative"`` — the interval lies below ``alpha``;
    * ``"undecided"`` — the interval holds both ``alpha`` and ``too_high`` (too few models).

    >>> calibration_verdict(1, 20)["verdict"], calibration_verdict(1, 60)["verdict"]
    ('undecided', 'calibrated')
    >>> calibration_verdict(8, 20)["verdict"], calibration_verdict(0, 100)["verdict"]
    ('too liberal', 'conservative')
    """
    if not 0 < alpha < too_high < 1:
        raise ValidityError(f"need 0 < alpha < too_high < 1, got {alpha!r}, {too_high!r}")
    lo, hi = binomial_interval(k, n, level, method)
    if lo > alpha:
        verdict = "too liberal"
    elif hi < alpha:
        verdict = "conservative"
    elif hi < too_high:
        verdict = "calibrated"
    else:
        verdict = "undecided"
    return {"k": int(k), "n": int(n), "fpr": k / n, "fpr_low": lo, "fpr_high": hi,
            "verdict": verdict}


def mean_interval(values, level: float = CONFIDENCE_LEVEL) -> tuple[float, float, float]:
    """Mean of ``values`` and its Student-t interval ``mean ± t(n−1) · sd / √n`` (sd with
    ddof = 1); the interval is NaN with fewer than two values.

    >>> [round(x, 4) for x in mean_interval([1.0, 2.0, 3.0])]
    [2.0, -0.4841, 4.4841]
    """
    x = np.asarray(values, dtype=float)
    x = x[~np.isnan(x)]
    if x.size == 0:
        raise ValidityError("mean_interval needs at least one value")
    mean = float(x.mean())
    if x.size < 2:
        return mean, float("nan"), float("nan")
    half = float(t.ppf((1 + level) / 2, x.size - 1) * x.std(ddof=1) / np.sqrt(x.size))
    return mean, mean - half, mean + half


def monotonicity_test(dose, values) -> dict[str, float]:
    """Spearman's ρ between the planted dose and the values of all models, with its
    two-sided p-value (scipy's t approximation, exact permutation for n ≤ 9 without ties
    is not used: ties in the dose are the rule here).

    >>> r = monotonicity_test([0.1, 0.1, 0.5, 0.5, 0.9, 0.9], [1, 2, 3, 4, 5, 6])
    >>> round(r["rho"], 4), r["pvalue"] < 0.05, r["n"]
    (0.9562, True, 6)
    """
    d, v = np.asarray(dose, dtype=float), np.asarray(values, dtype=float)
    keep = ~(np.isnan(d) | np.isnan(v))
    d, v = d[keep], v[keep]
    if d.size < 3 or np.unique(d).size < 2 or np.unique(v).size < 2:
        return {"rho": float("nan"), "pvalue": float("nan"), "n": int(d.size)}
    res = spearmanr(d, v)
    return {"rho": float(res.statistic), "pvalue": float(res.pvalue), "n": int(d.size)}


def minimum_detectable(power: pd.Series, target: float = TARGET_POWER) -> float:
    """Smallest planted strength from which the detection rate stays at or above
    ``target``: ``power`` is indexed by strength (p > 0.5, or |p − 0.5|), and the result
    is the smallest index value v with power ≥ target at v and at every larger strength;
    NaN when even the largest strength falls short.

    >>> minimum_detectable(pd.Series([0.2, 0.8, 0.6, 1.0], index=[0.6, 0.7, 0.8, 0.9]))
    0.9
    >>> minimum_detectable(pd.Series([0.2, 0.8, 0.8, 1.0], index=[0.6, 0.7, 0.8, 0.9]))
    0.7
    """
    s = power.sort_index()
    ok = (s >= target).to_numpy()
    if not ok.size or not ok[-1]:
        return float("nan")
    first = ok.size - 1
    while first > 0 and ok[first - 1]:
        first -= 1
    return float(s.index[first])


def calibration_sample_size(k: int, too_high: float = TOO_HIGH, level: float = CONFIDENCE_LEVEL,
                            method: str = "clopper-pearson") -> int:
    """The fewest balanced models at which ``k`` false positives still give the verdict
    "calibrated" of :func:`calibration_verdict`: the smallest n whose upper interval
    bound for ``k / n`` lies below ``too_high`` (the bound falls as n grows).

    The Clopper–Pearson bound at 0 of n is 1 − ((1 − level)/2)^(1/n), so with level 0.95
    and ``too_high`` 0.15, 0 false positives need n ≥ ln 0.025 / ln 0.85, i.e. 23:

    >>> [calibration_sample_size(k) for k in range(4)]
    [23, 35, 46, 56]
    """
    if k < 0:
        raise ValidityError(f"k must be >= 0, got {k}")
    n = max(k, 1)
    while binomial_interval(k, n, level, method)[1] >= too_high:
        n += 1
    return n
