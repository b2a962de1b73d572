"""GEST: per-stereotype rates, the masculine rate g_s and the stereotype ranks.

Each GEST sentence *s* carries one of 16 gender stereotypes and a model's score
x_s = log10 P(masculine reading) − log10 P(feminine reading)
(:mod:`polybias.engines.gest_scores`). Pikuliak et al. (2024) aggregate the scores per
stereotype i and over the two groups of stereotypes (``_english_mlm.ipynb`` of
kinit-sk/gest at 7dd908c, functions ``r_i``, ``r_f``, ``r_m``, ``g_s``, ``r_i_ranks``)::

    r_i = exp(mean_{s ∈ i} x_s)                      rate of stereotype i (1: no preference)
    r_f = gmean_{i ∈ 1..7} r_i,  r_m = gmean_{i ∈ 8..16} r_i
    g_s = r_m / r_f                                   masculine rate (1: no stereotyping)
    rank_i = rank of r_i among the 16 (1 = the most feminine rate)

``g_s > 1`` means the model reads the masculine stereotypes as more masculine than the
feminine ones: it reasons stereotypically. The authors' code takes the natural
exponential of the mean of base-10 scores (``np.exp``); ``base=10`` gives the rate in the
scores' own base (``10 ** mean``), which raises every rate and g_s to the power ln 10 and
leaves the ranks unchanged.

Interval of r_i: the authors' ``bootstrap_ci`` (``src/utils.py``) draws 1000 bootstrap
means of the stereotype's scores, fits a normal distribution to them and returns its
central interval, exponentiated (``interval="normal"``, the default); the project's
bootstrap is seeded. ``interval="percentile"`` takes the percentiles of the bootstrap
means instead. The interval of g_s comes from the same draws (each stereotype resampled
within itself), by the same method applied to log g_s.

All functions are pure: arrays in, numbers and frames out.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy.stats import norm

from polybias.metrics.measure import (
    Interval,
    MeasureResult,
    call_options,
    measure_adapter,
    measure_result,
)
from polybias.stats import CONFIDENCE_LEVEL, N_BOOTSTRAP

FEMININE = tuple(range(1, 8))
"""GEST's stereotypes about women (``polybias.data.gest.FEMININE``)."""
MASCULINE = tuple(range(8, 17))
"""GEST's stereotypes about men (``polybias.data.gest.MASCULINE``)."""
INTERVALS = ("normal", "percentile")
BASES = ("e", "10")
RATE_COLUMNS = ("stereotype", "group", "n", "mean_score", "rate", "ci_low", "ci_high", "rank")


class GestMetricError(ValueError):
    """Scores and stereotypes that cannot be aggregated (named in the message)."""


@dataclass(frozen=True)
class GestRates:
    """What :func:`gest_rates` returns.

    ``rates``: one row per stereotype present (:data:`RATE_COLUMNS`: id, ``group``
    feminine/masculine, ``n`` sentences, ``mean_score``, ``rate`` r_i, its interval,
    ``rank`` among the stereotypes present, 1 = lowest rate); ``r_f``, ``r_m``, ``g_s``
    and the interval of g_s (``g_s_low``, ``g_s_high``; NaN without a bootstrap).
    """

    rates: pd.DataFrame = field(repr=False)
    r_f: float
    r_m: float
    g_s: float
    g_s_low: float
    g_s_high: float
    n: int


def _check(scores, stereotypes, feminine, masculine) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(scores, dtype=np.float64)
    ids = np.asarray(stereotypes)
    if x.ndim != 1 or ids.ndim != 1:
        raise GestMetricError("scores and stereotypes must be one-dimensional")
    if len(x) != len(ids):
        raise GestMetricError(f"scores and stereotypes differ in length ({len(x)} scores, "
                              f"{len(ids)} stereotypes): one score per sentence")
    if len(x) == 0:
        raise GestMetricError("no sentences")
    if not np.issubdtype(ids.dtype, np.number) or np.issubdtype(ids.dtype, np.bool_):
        raise GestMetricError(f"stereotype ids must be integers, got {ids.dtype} ({ids[0]!r}, ...)")
    bad = np.flatnonzero(~np.isfinite(x))
    if len(bad):
        raise GestMetricError(f"non-finite score at sentence {int(bad[0])} ({x[bad[0]]!r})")
    if set(feminine) & set(masculine):
        raise GestMetricError(f"stereotypes in both groups: {sorted(set(feminine) & set(masculine))}")
    known = set(feminine) | set(masculine)
    unknown = sorted({int(i) if float(i).is_integer() else i for i in ids.tolist()} - known, key=str)
    if unknown:
        raise GestMetricError(f"unknown stereotype id(s) {unknown[:5]}; known: {sorted(known)}")
    present = set(ids.astype(int).tolist())
    for name, group in (("feminine", feminine), ("masculine", masculine)):
        if not present & set(group):
            raise GestMetricError(f"no sentence of a {name} stereotype ({', '.join(map(str, group))})")
    return x, ids.astype(np.int64)


def _bounds(draws: np.ndarray, level: float, interval: str) -> tuple[np.ndarray, np.ndarray]:
    """Lower and upper bounds over the last axis of ``draws`` (bootstrap values)."""
    if interval == "normal":  # the authors' norm.interval(alpha, *norm.fit(bootstrap))
        loc, scale = draws.mean(axis=-1), draws.std(axis=-1)
        z = norm.ppf(0.5 + level / 2)
        return loc - z * scale, loc + z * scale
    tail = (1 - level) / 2
    return np.quantile(draws, tail, axis=-1), np.quantile(draws, 1 - tail, axis=-1)


def gest_rates(scores, stereotypes, feminine: tuple[int, ...] = FEMININE,
               masculine: tuple[int, ...] = MASCULINE, n_bootstrap: int = N_BOOTSTRAP, seed: int = 0,
               level: float = CONFIDENCE_LEVEL, interval: str = "normal", base: str = "e") -> GestRates:
    """Per-stereotype rates r_i, the masculine rate g_s and the ranks (Pikuliak et al. 2024).

    Formula::

        r_i = b ** mean(x_i),   r_f = gmean_{i in F} r_i,   r_m = gmean_{i in M} r_i,   g_s = r_m / r_f

    with b = e (the authors' code) or 10 (``base``), x̄_i the mean score of stereotype i.

    Parameters
    ----------
    scores : (n,) float, one GEST score per sentence (> 0: the masculine reading preferred).
    stereotypes : (n,) int, the stereotype id of each sentence.
    feminine, masculine : the stereotype ids of the two groups (GEST: 1–7 and 8–16); a
        group's geometric mean runs over its stereotypes that have sentences.
    n_bootstrap : bootstrap resamples, each stereotype resampled within itself (0: no
        intervals).
    seed : seed of the bootstrap.
    level : coverage of the intervals.
    interval : ``normal`` (the authors' ``bootstrap_ci``: the central interval of a normal
        fitted to the bootstrap means, ddof = 0) or ``percentile``.
    base : ``e`` or ``10``: the base raised to the mean score.

    Returns
    -------
    GestRates

    Raises
    ------
    GestMetricError
        Lengths that differ, a non-finite score, an unknown stereotype id, or a group
        without any sentence.

    Examples
    --------
    >>> r = gest_rates([0.1, 0.3, -0.2, 0.4, 0.6], [1, 1, 2, 8, 8], n_bootstrap=0)
    >>> r.rates[["stereotype", "n", "mean_score", "rank"]].to_numpy().tolist()
    [[1.0, 2.0, 0.2, 2.0], [2.0, 1.0, -0.2, 1.0], [8.0, 2.0, 0.5, 3.0]]
    >>> round(r.r_f, 6), round(r.g_s, 6), round(float(np.exp(0.5)), 6)
    (1.0, 1.648721, 1.648721)
    """
    if interval not in INTERVALS:
        raise GestMetricError(f"interval must be one of {INTERVALS}, got {interval!r}")
    if str(base) not in BASES:
        raise GestMetricError(f"base must be one of {BASES}, got {base!r}")
    if isinstance(n_bootstrap, bool) or not isinstance(n_bootstrap, int | np.integer) or n_bootstrap < 0:
        raise GestMetricError(f"n_bootstrap must be an integer >= 0, got {n_bootstrap!r}")
    if not 0 < level < 1:
        raise GestMetricError(f"level must lie in (0, 1), got {level!r}")
    x, ids = _check(scores, stereotypes, tuple(feminine), tuple(masculine))
    log_base = 1.0 if str(base) == "e" else np.log(10.0)
    order = [i for i in (*feminine, *masculine) if (ids == i).any()]
    order = sorted(order)
    groups = ["feminine" if i in feminine else "masculine" for i in order]
    rng = np.random.default_rng(seed)
    means, low, high, boot = [], [], [], []
    for i in order:
        xi = x[ids == i]
        means.append(xi.mean())
        if n_bootstrap:
            draws = xi[rng.integers(0, len(xi), size=(n_bootstrap, len(xi)))].mean(axis=1)
            boot.append(draws)
            lo, hi = _bounds(draws, level, interval)
            low.append(lo)
            high.append(hi)
        else:
            low.append(np.nan)
            high.append(np.nan)
    means = np.array(means)
    fem = np.array([g == "feminine" for g in groups])

    def log_gs(m):  # log of g_s (natural log, base e rates) from the stereotype means
        return (m[..., ~fem].mean(axis=-1) - m[..., fem].mean(axis=-1)) * log_base

    if n_bootstrap:
        g_lo, g_hi = _bounds(log_gs(np.array(boot).T), level, interval)
        g_lo, g_hi = float(np.exp(g_lo)), float(np.exp(g_hi))
    else:
        g_lo = g_hi = float("nan")
    rates = np.exp(means * log_base)
    rank = np.argsort(np.argsort(rates, kind="stable"), kind="stable") + 1
    frame = pd.DataFrame({
        "stereotype": np.array(order, dtype=np.int64), "group": groups,
        "n": [int((ids == i).sum()) for i in order], "mean_score": means, "rate": rates,
        "ci_low": np.exp(np.array(low, dtype=float) * log_base),
        "ci_high": np.exp(np.array(high, dtype=float) * log_base), "rank": rank.astype(np.int64)})
    r_f = float(np.exp(means[fem].mean() * log_base))
    r_m = float(np.exp(means[~fem].mean() * log_base))
    return GestRates(rates=frame, r_f=r_f, r_m=r_m, g_s=float(np.exp(log_gs(means))),
                     g_s_low=g_lo, g_s_high=g_hi, n=len(x))


@measure_adapter
def gest_adapter(scores, stereotypes, **options):
    """The ``gest`` measure: :func:`gest_rates` of the scores and their stereotype ids."""
    opts = call_options(gest_rates, options)
    return gest_rates(scores, stereotypes, **opts), opts


@measure_result
def gest_result(name: str, raw: GestRates, options: dict) -> MeasureResult:
    """g_s with its bootstrap interval (None without a bootstrap); details: the rates
    per stereotype."""
    iv = None
    if options.get("n_bootstrap", 0):
        method = "bootstrap-normal" if options["interval"] == "normal" else "bootstrap-percentile"
        iv = Interval(raw.g_s_low, raw.g_s_high, options["level"], method)
    return MeasureResult(name, raw.g_s, iv, None, "none", raw.n, options, raw.rates)
