"""Per-word association with two groups: WEFAT and the relative norm distance.

Both score each word w (an occupation) on one axis from group B (men) to group A
(women); positive means closer to A. They are what Caliskan et al. (2017) and Garg et al.
(2018) correlate with the share of women in each occupation (:mod:`polybias.studies.external_validity`).

**WEFAT** (Word Embedding Factual Association Test; Caliskan, Bryson & Narayanan 2017,
Science 356:183, "WEFAT" in the main text and supplement)::

    s(w, A, B) = ( mean_{a∈A} cos(w, a) − mean_{b∈B} cos(w, b) ) / std_{x∈A∪B} cos(w, x)

the WEAT association of one word, normalised by the spread of its similarities to all
attribute words (std with ``ddof`` = 1 by default, the sample std of the WEAT effect
size; ``ddof=0`` the population std). The normaliser makes WEFAT saturate when the words
of each group are nearly alike: the spread over A ∪ B is then the gap between the groups
and s(w) tends to ±const, so it keeps the ranking of the words but not a linear relation
(``tests/metrics/test_wefat.py``).

**Relative norm distance** (Garg, Schiebinger, Jurafsky & Zou 2018, PNAS 115:E3635,
Methods)::

    d(w) = ‖ŵ − v̄_B‖₂ − ‖ŵ − v̄_A‖₂,     v̄_G = mean_{g∈G} ĝ

on unit vectors (x̂ = x / ‖x‖; the group means are not renormalised), the per-word term of
their sum Σ_w d(w). Their code (nikhgarg/EmbeddingDynamicStereotypes at b4382df,
``changes_over_time.py`` ``calc_distance_over_time_averagevectorsfirst`` and
``plot_creation.py`` ``get_biases_individual``) computes exactly this, with men as the
first group, on vectors normalised to unit length beforehand (README, step 1).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from polybias.metrics.measure import MeasureResult, call_options, measure_adapter, measure_result
from polybias.metrics.weat import _unit_rows


def _check_dims(*arrays: np.ndarray) -> None:
    dims = {a.shape[1] for a in arrays}
    if len(dims) != 1:
        raise ValueError(f"dimension mismatch: {', '.join(str(a.shape[1]) for a in arrays)}")


def wefat_association(W: np.ndarray, A: np.ndarray, B: np.ndarray, ddof: int = 1) -> np.ndarray:
    """WEFAT s(w, A, B) = (mean_a cos(w, a) − mean_b cos(w, b)) / std_{x∈A∪B} cos(w, x)
    for every row w of ``W`` (Caliskan, Bryson & Narayanan 2017; see the module docstring).

    Parameters
    ----------
    W : (n, d) word vectors (occupations).
    A, B : (n_a, d), (n_b, d) attribute vectors (words for women, words for men);
        n_a + n_b − ddof must be positive.
    ddof : degrees of freedom of the std over A ∪ B (1: sample std).

    Returns
    -------
    (n,) array; positive: w is closer to A than to B.

    Hand-computable: w = (1, 0), A = {(1, 0)}, B = {(0, 1)}: the similarities are 1 and 0,
    mean difference 1, sample std of {1, 0} is 1/√2, so s = √2.

    >>> wefat_association(np.array([[1., 0.]]), np.array([[1., 0.]]), np.array([[0., 1.]])).round(4).tolist()
    [1.4142]
    """
    if ddof not in (0, 1):
        raise ValueError(f"ddof must be 0 or 1, got {ddof!r}")
    Wn, An, Bn = _unit_rows(W, "W"), _unit_rows(A, "A"), _unit_rows(B, "B")
    _check_dims(Wn, An, Bn)
    if len(An) + len(Bn) - ddof < 1:
        raise ValueError(f"A ∪ B has {len(An) + len(Bn)} words: too few for a std with ddof={ddof}")
    sim_a, sim_b = Wn @ An.T, Wn @ Bn.T
    spread = np.concatenate([sim_a, sim_b], axis=1).std(axis=1, ddof=ddof)
    zero = np.flatnonzero(spread == 0)
    if zero.size:
        raise ValueError(f"rows {zero.tolist()} of W are equally similar to every attribute word "
                         "(std 0): WEFAT is undefined")
    return (sim_a.mean(axis=1) - sim_b.mean(axis=1)) / spread


def relative_norm_distance(W: np.ndarray, A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """Garg et al.'s (2018) d(w) = ‖ŵ − v̄_B‖ − ‖ŵ − v̄_A‖ for every row w of ``W``, on
    unit vectors; Σ_w d(w) is their relative norm distance.

    Parameters
    ----------
    W : (n, d) word vectors (occupations).
    A, B : (n_a, d), (n_b, d) vectors of the two groups (women, men); every vector is
        scaled to unit length first, and v̄_G is the plain mean of group G's unit vectors.

    Returns
    -------
    (n,) array; positive: w is closer to the mean of A than to the mean of B. Their sum
    over the words is Garg et al.'s relative norm distance.

    Hand-computable: ŵ = (1, 0), v̄_A = (1, 0), v̄_B = (0, 1): ‖ŵ − v̄_B‖ = √2 and
    ‖ŵ − v̄_A‖ = 0, so d = √2; with A = {(1, 0), (0, 1)} instead, v̄_A = (½, ½) and
    d = √2 − √(½).

    >>> W = np.array([[3., 0.]]); B = np.array([[0., 2.]])
    >>> relative_norm_distance(W, np.array([[1., 0.]]), B).round(4).tolist()
    [1.4142]
    >>> relative_norm_distance(W, np.array([[1., 0.], [0., 1.]]), B).round(4).tolist()
    [0.7071]
    """
    Wn, An, Bn = _unit_rows(W, "W"), _unit_rows(A, "A"), _unit_rows(B, "B")
    _check_dims(Wn, An, Bn)
    return np.linalg.norm(Wn - Bn.mean(axis=0), axis=1) - np.linalg.norm(Wn - An.mean(axis=0), axis=1)


# ------------------------------------------------------------------ the registered measures
# The adapters and results of the measures of data/measures.yaml that use this module
# (polybias.metrics.measure explains the two roles).

@measure_adapter
def wefat_adapter(W, A, B, **options):
    """Measure ``wefat``: :func:`wefat_association` of every row of W."""
    opts = call_options(wefat_association, options)
    return wefat_association(W, A, B, **opts), opts


@measure_adapter
def relative_norm_distance_adapter(W, A, B):
    """Measure ``relative-norm-distance``: :func:`relative_norm_distance` of every row of W."""
    return relative_norm_distance(W, A, B), {}


def _per_word(name: str, scores: np.ndarray, value: float, opts: dict[str, Any]) -> MeasureResult:
    """A per-word measure: ``details`` holds the score of every row of W, in W's order."""
    details = pd.DataFrame({"item": np.arange(len(scores)), "association": scores})
    return MeasureResult(name, value, None, None, "none", len(scores), opts, details)


@measure_result
def word_mean_result(name: str, scores, opts: dict[str, Any]) -> MeasureResult:
    """The mean of the per-word scores."""
    return _per_word(name, scores, float(np.mean(scores)), opts)


@measure_result
def word_sum_result(name: str, scores, opts: dict[str, Any]) -> MeasureResult:
    """The sum of the per-word scores."""
    return _per_word(name, scores, float(np.sum(scores)), opts)
