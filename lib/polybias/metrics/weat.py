"""Word Embedding Association Test (Caliskan, Bryson & Narayanan 2017, Science 356:183).

For target sets X, Y and attribute sets A, B of word vectors:

    s(w, A, B) = mean_{a∈A} cos(w, a) − mean_{b∈B} cos(w, b)
    S(X, Y, A, B) = Σ_{x∈X} s(x, A, B) − Σ_{y∈Y} s(y, A, B)
    d = (mean_{x∈X} s(x) − mean_{y∈Y} s(y)) / std_{w∈X∪Y} s(w)      (ddof=1 default)

and a permutation p-value of S over equal-size re-splits of X ∪ Y
(:func:`polybias.stats.split_permutation_test`). |X| and |Y| may differ.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from polybias.metrics.measure import (
    MeasureResult,
    call_options,
    measure_adapter,
    measure_result,
    permutation_method,
)
from polybias.stats import (
    _ALTERNATIVES,
    EXACT_LIMIT,
    N_PERMUTATIONS,
    Alternative,
    split_permutation_test,
    standardized_mean_difference,
)


def _unit_rows(M: np.ndarray, label: str, words: list[str] | None = None) -> np.ndarray:
    M = np.asarray(M, dtype=np.float64)
    if M.ndim != 2 or M.shape[0] == 0:
        raise ValueError(f"set {label} is empty (need a non-empty 2-d array of vectors)")
    if not np.isfinite(M).all():
        raise ValueError(f"set {label} has non-finite vector components")
    norms = np.linalg.norm(M, axis=1)
    zero = np.flatnonzero(norms == 0)
    if zero.size:
        names = [words[i] for i in zero] if words else [f"row {i}" for i in zero]
        raise ValueError(f"set {label} has zero vectors (cosine undefined): {', '.join(names)}")
    return M / norms[:, None]


def weat_association(
    W: np.ndarray, A: np.ndarray, B: np.ndarray,
    labels: tuple[str, str, str] = ("W", "A", "B"),
) -> np.ndarray:
    """s(w, A, B) for every row w of ``W``.

    >>> W = np.array([[1., 0.], [0., 1.]]); A = np.array([[1., 0.]]); B = np.array([[0., 1.]])
    >>> weat_association(W, A, B).tolist()
    [1.0, -1.0]
    """
    Wn, An, Bn = (_unit_rows(M, lab) for M, lab in zip((W, A, B), labels, strict=True))
    if not (Wn.shape[1] == An.shape[1] == Bn.shape[1]):
        raise ValueError(f"dimension mismatch: {Wn.shape[1]}, {An.shape[1]}, {Bn.shape[1]}")
    return Wn @ An.mean(axis=0) - Wn @ Bn.mean(axis=0)


def association_gap(X: np.ndarray, Y: np.ndarray, A: np.ndarray, B: np.ndarray) -> float:
    """mean_X s(x, A, B) − mean_Y s(y, A, B): the WEAT difference in cosine units, without
    the division by the spread of s that makes the effect size (used to judge debiasing,
    docs/measures/weat-gap.md).

    >>> A = np.array([[1., 0.]]); B = np.array([[0., 1.]])
    >>> association_gap(np.array([[1., 0.]]), np.array([[0., 1.]]), A, B)
    2.0
    """
    sx = weat_association(X, A, B, ("X", "A", "B"))
    sy = weat_association(Y, A, B, ("Y", "A", "B"))
    return float(sx.mean() - sy.mean())


@dataclass(frozen=True)
class WeatResult:
    """Effect size, statistic and p-value of one WEAT."""

    effect_size: float
    statistic: float
    pvalue: float
    p_method: str
    n_permutations: int
    alternative: str
    ddof: int
    sizes: dict[str, int]
    dropped: dict[str, list[str]] = field(default_factory=dict)
    #: the registered measure's result it was read from (:meth:`from_measure`), which a study
    #: writes as its record (:func:`polybias.results.records.measure_record`)
    measure: MeasureResult | None = field(default=None, compare=False, repr=False)

    @classmethod
    def from_measure(cls, result: MeasureResult, dropped: dict[str, list[str]] | None = None) -> WeatResult:
        """The WEAT of a ``weat`` or ``seat`` result of :func:`polybias.measures.compute`
        (its ``extra`` holds the statistic, the permutations and the set sizes), with the
        words ``dropped`` from each set.

        >>> from polybias.measures import compute
        >>> X = np.array([[1., .1], [1., .2]]); Y = np.array([[.1, 1.], [.2, 1.]])
        >>> A, B = np.array([[1., 0.]]), np.array([[0., 1.]])
        >>> WeatResult.from_measure(compute("weat", X=X, Y=Y, A=A, B=B)) == weat(X, Y, A, B)
        True
        """
        x = result.extra
        return cls(effect_size=result.value, statistic=x["statistic"], pvalue=result.p_value,
                   p_method=result.p_method.removeprefix("permutation-"),
                   n_permutations=x["n_permutations"], alternative=result.options["alternative"],
                   ddof=result.options["ddof"], sizes={k: x[f"size_{k}"] for k in "XYAB"},
                   dropped=dropped or {}, measure=result)

    def as_dict(self) -> dict:
        return {
            "effect_size": self.effect_size, "statistic": self.statistic, "pvalue": self.pvalue,
            "p_method": self.p_method, "n_permutations": self.n_permutations,
            "alternative": self.alternative, "ddof": self.ddof, "sizes": self.sizes,
            "dropped": self.dropped,
        }


def weat(
    X: np.ndarray, Y: np.ndarray, A: np.ndarray, B: np.ndarray,
    ddof: int = 1,
    alternative: Alternative = "greater",
    n_permutations: int = N_PERMUTATIONS,
    exact_limit: int = EXACT_LIMIT,
    seed: int = 0,
) -> WeatResult:
    """WEAT on vectors: effect size, test statistic and permutation p-value.

    Parameters
    ----------
    X, Y : (n_x, d), (n_y, d) target vectors (n_x ≠ n_y allowed).
    A, B : (n_a, d), (n_b, d) attribute vectors.
    ddof : std degrees of freedom in the effect size (1 = Caliskan, 0 = WEFE/XWEAT).
    alternative, n_permutations, exact_limit, seed : see
        :func:`polybias.stats.split_permutation_test`.

    >>> X = np.array([[1., .1], [1., .2]]); Y = np.array([[.1, 1.], [.2, 1.]])
    >>> r = weat(X, Y, A=np.array([[1., 0.]]), B=np.array([[0., 1.]]))
    >>> round(r.effect_size, 3), r.pvalue, r.p_method
    (1.728, 0.16666666666666666, 'exact')
    """
    for name, M in (("X", X), ("Y", Y), ("A", A), ("B", B)):
        if np.asarray(M).ndim != 2 or len(M) == 0:
            raise ValueError(f"set {name} is empty (need a non-empty 2-d array of vectors)")
    An, Bn = _unit_rows(A, "A"), _unit_rows(B, "B")
    sx = weat_association(X, An, Bn, ("X", "A", "B"))
    sy = weat_association(Y, An, Bn, ("Y", "A", "B"))
    perm = split_permutation_test(sx, sy, alternative, n_permutations, exact_limit, seed)
    return WeatResult(
        effect_size=standardized_mean_difference(sx, sy, ddof=ddof),
        statistic=perm.statistic,
        pvalue=perm.pvalue,
        p_method=perm.method,
        n_permutations=perm.n_permutations,
        alternative=alternative,
        ddof=ddof,
        sizes={"X": len(sx), "Y": len(sy), "A": len(A), "B": len(B)},
    )


def check_weat_options(on_missing: str = "raise", ddof: int = 1, alternative: str = "greater",
                       n_permutations: int = N_PERMUTATIONS, exact_limit: int = EXACT_LIMIT,
                       seed: int = 0) -> None:
    """Reject bad WEAT options before any work is done (used by notebooks and sweeps).

    >>> check_weat_options(alternative="bigger")
    Traceback (most recent call last):
    ...
    ValueError: alternative must be one of ('greater', 'less', 'two-sided'), got 'bigger'
    """
    if on_missing not in ("raise", "drop"):
        raise ValueError(f"on_missing must be 'raise' or 'drop', got {on_missing!r}")
    if ddof not in (0, 1):
        raise ValueError(f"ddof must be 0 or 1, got {ddof!r}")
    if alternative not in _ALTERNATIVES:
        raise ValueError(f"alternative must be one of {_ALTERNATIVES}, got {alternative!r}")
    for name, value in (("n_permutations", n_permutations), ("exact_limit", exact_limit)):
        if not isinstance(value, int) or value < (1 if name == "n_permutations" else 0):
            raise ValueError(f"{name} must be a non-negative integer (n_permutations >= 1), got {value!r}")
    if not isinstance(seed, int):
        raise ValueError(f"seed must be an integer, got {seed!r}")


# ------------------------------------------------------------------ the registered measures
# The adapters and results of the measures of data/measures.yaml that use this module
# (polybias.metrics.measure explains the two roles).

def _associations(X, Y, A, B) -> pd.DataFrame:
    """s(w, A, B) of every target item: the per-item details of the association tests."""
    s = {role: weat_association(M, A, B, (role, "A", "B")) for role, M in (("X", X), ("Y", Y))}
    return pd.DataFrame({"set": ["X"] * len(s["X"]) + ["Y"] * len(s["Y"]),
                         "item": list(range(len(s["X"]))) + list(range(len(s["Y"]))),
                         "association": np.concatenate([s["X"], s["Y"]])})


@measure_adapter
def weat_adapter(X, Y, A, B, **options):
    """Measures ``weat`` and ``seat``: :func:`weat` on four sets of vectors; the details are
    s(w, A, B) of every target item."""
    opts = call_options(weat, options)
    return (weat(X, Y, A, B, **opts), _associations(X, Y, A, B)), opts


@measure_result
def weat_result(name: str, raw, opts: dict[str, Any]) -> MeasureResult:
    """The effect size d with its permutation p-value; n = |X| + |Y|; ``extra``: the test
    statistic, the permutations drawn and the size of every set (:meth:`WeatResult.from_measure`)."""
    r, details = raw
    extra = {"statistic": float(r.statistic), "n_permutations": r.n_permutations,
             **{f"size_{k}": n for k, n in r.sizes.items()}}
    return MeasureResult(name, float(r.effect_size), None, float(r.pvalue),
                         permutation_method(r.p_method), r.sizes["X"] + r.sizes["Y"], opts, details,
                         extra)


@measure_adapter
def gap_adapter(X, Y, A, B):
    """Measure ``weat-gap``: :func:`association_gap` and s(w, A, B) of every target item."""
    return (association_gap(X, Y, A, B), _associations(X, Y, A, B)), {}


@measure_result
def gap_result(name: str, raw, opts: dict[str, Any]) -> MeasureResult:
    """The gap in cosine units, without a test."""
    gap, details = raw
    return MeasureResult(name, float(gap), None, None, "none", len(details), opts, details)
