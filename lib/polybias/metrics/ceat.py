"""Contextualized Embedding Association Test (Guo & Caliskan 2021, AIES; seed 000 App. D).

A word has many contextual vectors, one per occurrence. CEAT draws N *samples*; sample
i takes one occurrence vector of every word of X, Y, A and B and runs a WEAT effect
size on them. The N effect sizes are pooled with a random-effects model (Hedges 1983;
DerSimonian & Laird 1986):

    s_i(w)  = mean_{a∈A} cos(w_i, a_i) − mean_{b∈B} cos(w_i, b_i)
    d_i     = (mean_{x∈X} s_i(x) − mean_{y∈Y} s_i(y)) / std_{w∈X∪Y} s_i(w)   (ddof=1)
    V_i     = var_{w∈X∪Y} s_i(w)                        (in-sample variance, ddof=1)
    W_i     = 1 / V_i
    Q       = Σ W_i d_i² − (Σ W_i d_i)² / Σ W_i
    c       = Σ W_i − Σ W_i² / Σ W_i
    τ²      = (Q − (N − 1)) / c   if Q ≥ N − 1, else 0   (between-sample variance)
    v_i     = 1 / (V_i + τ²)
    CES     = Σ v_i d_i / Σ v_i
    SE(CES) = sqrt(1 / Σ v_i)
    p       = 2 · (1 − Φ(|CES / SE|))                   (two-tailed, seed 000 App. D.1)

The one-tailed p = 1 − Φ(CES / SE) of the Guo & Caliskan code is ``alternative="greater"``.

The normal p-value treats the target words as fixed: SE(CES) holds only the variation
between sampled contexts (within and between samples), and every sample reuses the same
words. On a model whose words carry word-level associations that are noise (e.g. a model
trained on a balanced corpus), CES estimates that fixed noise ever more precisely as N
grows, and the test rejects too often. ``pvalue="word-permutation"``
(:func:`ceat_permutation`) instead refers CES to its distribution over re-splits of
X ∪ Y into |X| and |Y| words (each word keeps its N occurrence vectors; the whole
random-effects pooling is redone for every split), the exchangeability null of WEAT
(Caliskan et al. 2017) carried to CEAT: exact under that null for any N.

Everything is vectorised over the N samples: :func:`sample_effect_sizes` takes arrays
of shape ``(n_words, N, dim)`` and returns the N effect sizes and variances at once;
:func:`random_effects` pools any (d, V) arrays; :func:`ceat` runs both;
:func:`ceat_from_occurrences` runs a word-list test from per-word occurrence vectors
(:func:`occurrence_sets` gives the registered measure ``ceat`` its inputs from them).
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from math import comb
from typing import Any, Literal

import numpy as np
import pandas as pd
from scipy.stats import norm

from polybias.metrics.measure import (
    Interval,
    MeasureResult,
    call_options,
    measure_adapter,
    measure_result,
    permutation_method,
)
from polybias.stats import CONFIDENCE_LEVEL, N_PERMUTATIONS_SHORT

CeatAlternative = Literal["two-sided", "greater", "less"]
ALTERNATIVES = ("two-sided", "greater", "less")
PVALUES = ("normal", "word-permutation")


class CeatError(ValueError):
    """Bad input to CEAT: empty or mismatched sets, too few samples, non-finite values."""


@dataclass(frozen=True)
class RandomEffects:
    """Random-effects pooling of per-sample effect sizes (DerSimonian–Laird)."""

    ces: float
    se: float
    z: float
    pvalue: float
    alternative: str
    tau2: float
    q: float
    c: float
    n_samples: int

    def as_dict(self) -> dict:
        return dict(self.__dict__)


@dataclass(frozen=True)
class CeatResult(RandomEffects):
    """CEAT outcome: the pooled result plus the per-sample effect sizes and variances."""

    effect_sizes: np.ndarray = field(default=None, repr=False)
    variances: np.ndarray = field(default=None, repr=False)
    sizes: dict = field(default_factory=dict)
    dropped: dict = field(default_factory=dict)
    pvalue_method: str = "normal"
    n_permutations: int = 0

    def as_dict(self) -> dict:
        out = {k: v for k, v in self.__dict__.items() if k not in ("effect_sizes", "variances")}
        out["effect_size_mean"] = float(np.mean(self.effect_sizes))
        out["effect_size_sd"] = float(np.std(self.effect_sizes, ddof=1)) if self.n_samples > 1 else 0.0
        return out


def _check_alternative(alternative: str) -> None:
    if alternative not in ALTERNATIVES:
        raise CeatError(f"alternative must be one of {ALTERNATIVES}, got {alternative!r}")


def dersimonian_laird(d: np.ndarray, V: np.ndarray) -> tuple[float, float, float]:
    """Between-sample variance τ² of DerSimonian & Laird (1986), with Q and c.

    Parameters
    ----------
    d : (N,) per-sample effect sizes.
    V : (N,) per-sample (in-sample) variances, all > 0.

    Returns
    -------
    (tau2, Q, c) with W = 1/V, Q = Σ W d² − (Σ W d)²/Σ W, c = Σ W − Σ W²/Σ W and
    τ² = (Q − (N−1))/c when Q ≥ N − 1, else 0 (seed 000 App. D.1).

    Examples
    --------
    Two samples with V = 1: W = (1, 1), Q = (1 + 9) − 16/2 = 2 ≥ 1, c = 2 − 2/2 = 1,
    τ² = (2 − 1)/1 = 1.

    >>> dersimonian_laird(np.array([1., 3.]), np.array([1., 1.]))
    (1.0, 2.0, 1.0)
    """
    d, V = _check_dv(d, V)
    W = 1.0 / V
    sw = W.sum()
    q = float((W * d * d).sum() - (W * d).sum() ** 2 / sw)
    c = float(sw - (W * W).sum() / sw)
    df = d.size - 1
    tau2 = (q - df) / c if (q >= df and c > 0) else 0.0
    return float(max(tau2, 0.0)), q, c


def _check_dv(d, V) -> tuple[np.ndarray, np.ndarray]:
    d, V = np.asarray(d, dtype=np.float64).ravel(), np.asarray(V, dtype=np.float64).ravel()
    if d.size == 0:
        raise CeatError("random effects need at least one sample (got none)")
    if d.shape != V.shape:
        raise CeatError(f"effect sizes and variances differ in length: {d.size} vs {V.size}")
    if not (np.isfinite(d).all() and np.isfinite(V).all()):
        bad = np.flatnonzero(~(np.isfinite(d) & np.isfinite(V)))
        raise CeatError(f"non-finite effect size or variance in samples {bad[:10].tolist()}")
    if (V <= 0).any():
        bad = np.flatnonzero(V <= 0)
        raise CeatError(f"in-sample variances must be positive; samples {bad[:10].tolist()} are not")
    return d, V


def pvalue_normal(z: float, alternative: CeatAlternative = "two-sided") -> float:
    """p-value of a standard-normal statistic.

    >>> round(pvalue_normal(1.959963985), 6), round(pvalue_normal(1.644853627, "greater"), 6)
    (0.05, 0.05)
    """
    _check_alternative(alternative)
    if alternative == "two-sided":
        return float(2.0 * norm.sf(abs(z)))
    if alternative == "greater":
        return float(norm.sf(z))
    return float(norm.cdf(z))


def random_effects(
    d: np.ndarray, V: np.ndarray, alternative: CeatAlternative = "two-sided",
) -> RandomEffects:
    """Combined effect size of per-sample effect sizes under a random-effects model.

    Parameters
    ----------
    d : (N,) per-sample effect sizes.
    V : (N,) in-sample variances (> 0).
    alternative : "two-sided" (default, seed 000), "greater" (one-tailed, Guo & Caliskan
        code) or "less".

    Returns
    -------
    RandomEffects with CES = Σ v d / Σ v, v = 1/(V + τ²), SE = sqrt(1/Σ v), z = CES/SE.

    Examples
    --------
    d = (1, 3), V = (1, 1): τ² = 1 (see :func:`dersimonian_laird`), v = (1/2, 1/2),
    CES = 2, SE = 1, z = 2, two-tailed p = 2·(1 − Φ(2)).

    >>> r = random_effects(np.array([1., 3.]), np.array([1., 1.]))
    >>> r.ces, r.se, r.tau2, round(r.pvalue, 5)
    (2.0, 1.0, 1.0, 0.0455)
    """
    _check_alternative(alternative)
    d, V = _check_dv(d, V)
    tau2, q, c = dersimonian_laird(d, V)
    v = 1.0 / (V + tau2)
    ces = float((v * d).sum() / v.sum())
    se = float(np.sqrt(1.0 / v.sum()))
    z = ces / se
    return RandomEffects(ces=ces, se=se, z=float(z), pvalue=pvalue_normal(z, alternative),
                         alternative=alternative, tau2=tau2, q=q, c=c, n_samples=int(d.size))


class _WordVectors:
    """A set's vectors: one (n_words, N, dim) array or a list of per-word (N, dim) arrays
    (e.g. memory-mapped cache files), read one chunk of samples at a time."""

    def __init__(self, M, label: str):
        self.label = label
        if isinstance(M, (list, tuple)):
            shapes = {np.shape(m) for m in M}
            if not M or len(shapes) != 1 or len(next(iter(shapes))) != 2:
                raise CeatError(f"set {label} must be a non-empty list of (n_samples, dim) arrays "
                                f"of one shape, got shapes {sorted(shapes)}")
            self.words, self.shape = list(M), (len(M), *next(iter(shapes)))
        else:
            self.words, self.shape = M, np.shape(M)
        if len(self.shape) != 3 or self.shape[0] == 0 or self.shape[1] == 0:
            raise CeatError(f"set {label} must be a non-empty array (n_words, n_samples, dim), "
                            f"got shape {self.shape}")

    def chunk(self, sl: slice) -> np.ndarray:
        if isinstance(self.words, list):
            return np.stack([np.asarray(m[sl]) for m in self.words])
        return np.asarray(self.words[:, sl])


def _norms(M: np.ndarray, label: str, lo: int) -> np.ndarray:
    """|v| of every vector of a (n_words, n, dim) chunk, in float64; rejects bad vectors."""
    sq = np.einsum("wnd,wnd->wn", M, M, dtype=np.float64)
    if not np.isfinite(sq).all():
        raise CeatError(f"set {label} has non-finite vector components")
    if (sq == 0).any():
        w, i = np.argwhere(sq == 0)[0]
        raise CeatError(f"set {label} has a zero vector (word {w}, sample {lo + i}): cosine undefined")
    return np.sqrt(sq)


def sample_effect_sizes(
    X: np.ndarray, Y: np.ndarray, A: np.ndarray, B: np.ndarray, ddof: int = 1,
    chunk: int = 1024,
) -> tuple[np.ndarray, np.ndarray]:
    """Per-sample WEAT effect sizes d_i and in-sample variances V_i, vectorised over samples.

    Parameters
    ----------
    X, Y, A, B : arrays of shape (n_words, N, dim): ``X[w, i]`` is the vector of the
        occurrence of word w used in sample i; or lists of per-word (N, dim) arrays (e.g.
        memory-mapped cache files; only one chunk of samples is read at a time). All four
        share N and dim. float32 input is accumulated in float64.
    ddof : degrees of freedom of the std in d_i and of V_i (1 = Guo & Caliskan).
    chunk : samples processed at a time (bounds the working memory).

    Returns
    -------
    (d, V): arrays of shape (N,).

    Notes
    -----
    mean_a cos(w, a) equals w/|w| · mean_a a/|a|, so each sample costs one dot product per
    target word with the difference of the attribute means.

    Examples
    --------
    One sample; targets x = (1, 0), (1, .5) and y = (0, 1), attributes a = (1, 0), b = (0, 1):
    s = (1, 1/√5, −1), d = (0.7236 + 1)/std(s) = 1.6689, V = var(s) = 16/15.

    >>> X = np.array([[[1., 0.]], [[1., .5]]]); Y = np.array([[[0., 1.]]])
    >>> d, V = sample_effect_sizes(X, Y, np.array([[[1., 0.]]]), np.array([[[0., 1.]]]))
    >>> d.round(4).tolist(), V.round(4).tolist()
    ([1.6689], [1.0667])
    """
    if ddof not in (0, 1):
        raise CeatError(f"ddof must be 0 or 1, got {ddof!r}")
    s, nx = sample_associations(X, Y, A, B, chunk=chunk)
    if s.shape[0] - ddof <= 0:
        raise CeatError(f"std with ddof={ddof} needs more than {ddof} target words")
    return _effect_sizes(s, nx, ddof)


def _effect_sizes(s: np.ndarray, nx: int, ddof: int) -> tuple[np.ndarray, np.ndarray]:
    var = s.var(axis=0, ddof=ddof)
    with np.errstate(divide="ignore", invalid="ignore"):
        d = (s[:nx].mean(axis=0) - s[nx:].mean(axis=0)) / np.sqrt(var)
    zero = np.flatnonzero(var == 0)
    if zero.size:
        raise CeatError(f"samples {zero[:10].tolist()} have zero variance of s over X ∪ Y "
                        "(all target words associate equally): effect size undefined")
    return d, var


def sample_associations(
    X: np.ndarray, Y: np.ndarray, A: np.ndarray, B: np.ndarray, chunk: int = 1024,
) -> tuple[np.ndarray, int]:
    """Per-sample associations ``s_i(w) = mean_a cos(w_i, a_i) − mean_b cos(w_i, b_i)``.

    Parameters
    ----------
    X, Y, A, B : as in :func:`sample_effect_sizes`.
    chunk : samples processed at a time.

    Returns
    -------
    (s, nx): ``s`` of shape (|X| + |Y|, N), the rows of X first, and ``nx = |X|``.
    """
    sets = {k: _WordVectors(M, k) for k, M in (("X", X), ("Y", Y), ("A", A), ("B", B))}
    shapes = {k: s.shape for k, s in sets.items()}
    n = {s[1] for s in shapes.values()}
    dims = {s[2] for s in shapes.values()}
    if len(n) != 1:
        raise CeatError(f"sets differ in the number of samples: {({k: s[1] for k, s in shapes.items()})}")
    if len(dims) != 1:
        raise CeatError(f"sets differ in vector dimension: {({k: s[2] for k, s in shapes.items()})}")
    nx, ny = shapes["X"][0], shapes["Y"][0]
    N = n.pop()
    out = np.empty((nx + ny, N))
    for lo in range(0, N, chunk):
        sl = slice(lo, min(N, lo + chunk))
        means = {}
        for k in ("A", "B"):  # mean of the unit attribute vectors, per sample
            M = sets[k].chunk(sl)
            means[k] = np.einsum("wn,wnd->nd", 1.0 / _norms(M, k, lo), M, dtype=np.float64) / len(M)
        diff = means["A"] - means["B"]
        for k, rows in (("X", slice(0, nx)), ("Y", slice(nx, nx + ny))):
            M = sets[k].chunk(sl)
            out[rows, sl] = np.einsum("wnd,nd->wn", M, diff, dtype=np.float64) / _norms(M, k, lo)
    return out, nx


def _pooled_ces(d: np.ndarray, V: np.ndarray) -> np.ndarray:
    """CES of :func:`random_effects` for many rows of effect sizes at once: ``d`` (m, N), ``V`` (N,)."""
    W = 1.0 / V
    sw = W.sum()
    q = (W * d * d).sum(axis=1) - (d @ W) ** 2 / sw
    c = sw - (W * W).sum() / sw
    df = d.shape[1] - 1
    tau2 = np.where((q >= df) & (c > 0), (q - df) / c if c > 0 else 0.0, 0.0)
    v = 1.0 / (V[None, :] + np.maximum(tau2, 0.0)[:, None])
    return (v * d).sum(axis=1) / v.sum(axis=1)


def ceat_permutation(
    X: np.ndarray, Y: np.ndarray, A: np.ndarray, B: np.ndarray,
    alternative: CeatAlternative = "two-sided", ddof: int = 1, n_permutations: int = N_PERMUTATIONS_SHORT,
    exact_limit: int = 100_000, seed: int = 0,
) -> CeatResult:
    """CEAT with a word-permutation p-value: CES referred to its values over re-splits of X ∪ Y.

    Each target word keeps its N occurrence vectors (so the dependence between samples
    that share a word is kept); a split relabels |X| of the |X| + |Y| words as X. For every
    split the per-sample effect sizes d_i and the whole DerSimonian–Laird pooling are
    redone (V_i, the variance over X ∪ Y, does not change with the split). The p-value is

        p = #{splits: T(split) ≥ T(observed)} / #splits                         (exact)
        p = (1 + #{draws: T(draw) ≥ T(observed)}) / (1 + n_permutations)         (Monte Carlo)

    with T = |CES| (two-sided), CES ("greater") or −CES ("less"); ties count as
    exceedances. All C(|X|+|Y|, |X|) splits are enumerated when there are at most
    ``exact_limit`` of them. This is the WEAT permutation null (Caliskan et al. 2017,
    Science 356:183) applied to CES: under exchangeable target words it is exact for any
    N, whereas the normal p of :func:`random_effects` conditions on the words and is
    liberal when they carry word-level noise (see the module docstring).

    Parameters
    ----------
    X, Y, A, B : (n_words, N, dim) arrays (see :func:`sample_effect_sizes`).
    alternative : "two-sided" (default), "greater" or "less".
    ddof : std degrees of freedom of the per-sample effect size.
    n_permutations : Monte Carlo draws when the splits are too many to enumerate.
    exact_limit : the most splits enumerated.
    seed : seed of the Monte Carlo draws.

    Returns
    -------
    CeatResult whose ``ces``, ``se``, ``tau2`` are those of :func:`ceat`, ``pvalue`` the
    permutation p, ``pvalue_method`` ``"word-permutation-exact"`` or
    ``"word-permutation-monte-carlo"`` and ``n_permutations`` the splits used.

    Examples
    --------
    Two words per set, one sample: 6 splits, the observed one and its mirror reach |CES|.

    >>> X = np.array([[[1., 0.]], [[1., .2]]]); Y = np.array([[[0., 1.]], [[.2, 1.]]])
    >>> r = ceat_permutation(X, Y, np.array([[[1., 0.]]]), np.array([[[0., 1.]]]))
    >>> round(r.pvalue, 4), r.n_permutations
    (0.3333, 6)
    """
    _check_alternative(alternative)
    if ddof not in (0, 1):
        raise CeatError(f"ddof must be 0 or 1, got {ddof!r}")
    s, nx = sample_associations(X, Y, A, B)
    n, N = s.shape
    if n - ddof <= 0:
        raise CeatError(f"std with ddof={ddof} needs more than {ddof} target words")
    d, V = _effect_sizes(s, nx, ddof)
    re = random_effects(d, V, alternative)
    sd, total = np.sqrt(V), s.sum(axis=0)
    ny = n - nx

    def stat(ces):
        return {"two-sided": np.abs, "greater": lambda x: x, "less": lambda x: -x}[alternative](ces)

    observed = float(stat(np.array([re.ces]))[0])
    tol = 1e-9 * max(1.0, abs(observed))
    chunk = max(1, 2_000_000 // max(1, nx * N))

    def hits_of(idx: np.ndarray) -> int:
        sum_x = s[idx].sum(axis=1)  # (m, N)
        dd = (sum_x / nx - (total - sum_x) / ny) / sd
        return int((stat(_pooled_ces(dd, V)) >= observed - tol).sum())

    n_splits = comb(n, nx)
    if n_splits <= exact_limit:
        hits, combos = 0, itertools.combinations(range(n), nx)
        dtype = np.dtype((np.int64, nx))
        while True:
            block = np.fromiter(itertools.islice(combos, chunk), dtype=dtype)
            if block.size == 0:
                break
            hits += hits_of(block.reshape(-1, nx))
        pvalue, used = hits / n_splits, n_splits
    else:
        if n_permutations < 1:
            raise CeatError("n_permutations must be at least 1")
        rng = np.random.default_rng(seed)
        hits = done = 0
        while done < n_permutations:
            m = min(chunk, n_permutations - done)
            hits += hits_of(np.argpartition(rng.random((m, n)), nx - 1, axis=1)[:, :nx])
            done += m
        pvalue, used = (hits + 1) / (n_permutations + 1), n_permutations
    sizes = {k: len(M) for k, M in (("X", X), ("Y", Y), ("A", A), ("B", B))}
    fields = {**re.__dict__, "pvalue": float(pvalue)}
    method = "word-permutation-exact" if n_splits <= exact_limit else "word-permutation-monte-carlo"
    return CeatResult(**fields, effect_sizes=d, variances=V, sizes=sizes,
                      pvalue_method=method, n_permutations=int(used))


def ceat(
    X: np.ndarray, Y: np.ndarray, A: np.ndarray, B: np.ndarray,
    alternative: CeatAlternative = "two-sided", ddof: int = 1,
    pvalue: Literal["normal", "word-permutation"] = "normal", n_permutations: int = N_PERMUTATIONS_SHORT,
    seed: int = 0,
) -> CeatResult:
    """CEAT on occurrence vectors: per-sample effect sizes pooled by random effects.

    Parameters
    ----------
    X, Y, A, B : (n_words, N, dim) arrays (see :func:`sample_effect_sizes`).
    alternative : p-value direction (two-sided default).
    ddof : std degrees of freedom of the per-sample effect size.
    pvalue : "normal" (default; p from CES/SE, seed 000 App. D.1) or "word-permutation"
        (:func:`ceat_permutation`, calibrated when the words carry word-level noise).
    n_permutations, seed : Monte Carlo draws and their seed for "word-permutation".

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> X, Y, A, B = (rng.normal(size=(4, 50, 8)) for _ in range(4))
    >>> r = ceat(X + 1.0 * A.mean(0), Y + 1.0 * B.mean(0), A, B)
    >>> r.ces > 1, r.pvalue < 1e-6, r.n_samples
    (True, True, 50)
    """
    _check_alternative(alternative)
    if pvalue not in PVALUES:
        raise CeatError(f"pvalue must be one of {PVALUES}, got {pvalue!r}")
    if pvalue == "word-permutation":
        return ceat_permutation(X, Y, A, B, alternative, ddof, n_permutations=n_permutations, seed=seed)
    d, V = sample_effect_sizes(X, Y, A, B, ddof=ddof)
    re = random_effects(d, V, alternative)
    sizes = {k: len(M) for k, M in (("X", X), ("Y", Y), ("A", A), ("B", B))}
    return CeatResult(**re.__dict__, effect_sizes=d, variances=V, sizes=sizes)


def stack_occurrences(vectors: dict[str, np.ndarray], words: list[str] | tuple[str, ...],
                      role: str = "") -> np.ndarray:
    """Stack per-word occurrence vectors ``{word: (N, dim)}`` into ``(n_words, N, dim)``."""
    return np.stack(_word_list(vectors, words, role))


def _word_list(vectors: dict[str, np.ndarray], words, role: str = "") -> list[np.ndarray]:
    missing = [w for w in words if w not in vectors]
    if missing:
        raise CeatError(f"no occurrence vectors for {', '.join(missing)}" + (f" [{role}]" if role else ""))
    shapes = {w: np.shape(vectors[w]) for w in words}
    bad = [f"{w} {s}" for w, s in shapes.items() if len(s) != 2]
    if bad:
        raise CeatError(f"occurrence vectors must be (N, dim) per word: {', '.join(bad)}")
    if len({s for s in shapes.values()}) != 1:
        raise CeatError("words have different numbers of samples or dimensions: "
                        + ", ".join(f"{w} {s}" for w, s in shapes.items()))
    return [vectors[w] for w in words]


def occurrence_sets(
    vectors: dict[str, np.ndarray], test, on_missing: Literal["raise", "drop"] = "raise",
) -> tuple[dict[str, list[np.ndarray]], dict[str, list[str]]]:
    """The X, Y, A, B inputs of :func:`ceat` for a word-list test
    (:class:`polybias.data.wordlists.AssociationTest`): per set, the ``(N, dim)`` occurrence
    vectors of its words found in ``vectors``, and per set the words left out.

    ``on_missing`` : "raise" (default) names every word without vectors (e.g. absent from the
    corpus); "drop" leaves them out and returns them.
    """
    if on_missing not in ("raise", "drop"):
        raise CeatError(f"on_missing must be 'raise' or 'drop', got {on_missing!r}")
    arrays, dropped, missing_all = {}, {}, []
    for role, ws in test.sets().items():
        kept = [w for w in ws.words if w in vectors]
        missing = [w for w in ws.words if w not in vectors]
        if missing:
            dropped[role] = missing
            missing_all += [f"{w} [{role}: {ws.name}]" for w in missing]
        if not kept:
            raise CeatError(f"{test.name}: no word of set {role} ({ws.name}) has occurrence vectors")
        arrays[role] = kept
    if missing_all and on_missing == "raise":
        raise CeatError(f"{test.name}: {len(missing_all)} word(s) have no occurrence vectors "
                        f"(absent from the corpus?): {', '.join(missing_all)}. "
                        "Pass on_missing='drop' to drop them.")
    return {role: _word_list(vectors, words, role) for role, words in arrays.items()}, dropped


def ceat_from_occurrences(
    vectors: dict[str, np.ndarray],
    test,
    alternative: CeatAlternative = "two-sided",
    ddof: int = 1,
    on_missing: Literal["raise", "drop"] = "raise",
) -> CeatResult:
    """Run a word-list test (:class:`polybias.data.wordlists.AssociationTest`) on occurrence vectors.

    Parameters
    ----------
    vectors : ``{word: (N, dim) array}``; row i is the vector of the occurrence of the
        word used in sample i (see :func:`polybias.data.text.sample_occurrences`).
    test : the test whose X, Y, A, B word sets are looked up in ``vectors``
        (:func:`occurrence_sets`).
    on_missing : "raise" (default) names every word without vectors (e.g. absent from the
        corpus); "drop" leaves them out and lists them in ``result.dropped``.
    """
    per_word, dropped = occurrence_sets(vectors, test, on_missing)
    result = ceat(per_word["X"], per_word["Y"], per_word["A"], per_word["B"], alternative, ddof)
    return CeatResult(**{**result.__dict__, "dropped": dropped})


# ------------------------------------------------------------------ the registered measures
# The adapters and results of the measures of data/measures.yaml that use this module
# (polybias.metrics.measure explains the two roles).

@measure_adapter
def ceat_adapter(X, Y, A, B, **options):
    """Measure ``ceat``: :func:`ceat` on four sets of occurrence vectors."""
    opts = call_options(ceat, options)
    return ceat(X, Y, A, B, **opts), opts


def _ceat_p_method(method: str) -> str:
    if method == "normal":
        return "normal"
    return permutation_method("exact" if method.endswith("-exact") else "monte-carlo")


@measure_result
def ceat_result(name: str, r, opts: dict[str, Any], level: float = CONFIDENCE_LEVEL) -> MeasureResult:
    """The CES with its normal interval and p-value; details: every sample's effect size;
    ``extra``: its standard error ``se``, ``z`` = CES / SE, and the random-effects pooling's
    between-sample variance ``tau2``, ``q`` and ``c`` (:func:`random_effects`)."""
    z = float(norm.ppf(0.5 + level / 2))
    details = pd.DataFrame({"sample": np.arange(r.n_samples), "effect_size": r.effect_sizes,
                            "variance": r.variances})
    return MeasureResult(name, float(r.ces), Interval(r.ces - z * r.se, r.ces + z * r.se, level, "normal"),
                         float(r.pvalue), _ceat_p_method(r.pvalue_method), int(r.n_samples), opts,
                         details, {k: float(getattr(r, k)) for k in ("se", "z", "tau2", "q", "c")})
