"""WEFAT and the relative norm distance: hand-computable cases and a planted gradient."""

from __future__ import annotations

import numpy as np
import pytest
from polybias.metrics.wefat import relative_norm_distance, wefat_association
from scipy import stats

A = np.array([[1.0, 0.0, 0.0], [0.0, 1.0, 0.0]])   # "women"
B = np.array([[0.0, 0.0, 1.0]])                     # "men"


def test_wefat_by_hand():
    # w = (1, 0, 0): cosines 1, 0 with A and 0 with B; mean difference 1/2;
    # sample std of {1, 0, 0} is sqrt(1/3), population std sqrt(2/9)
    w = np.array([[2.0, 0.0, 0.0]])
    assert wefat_association(w, A, B)[0] == pytest.approx(0.5 / np.sqrt(1 / 3))
    assert wefat_association(w, A, B, ddof=0)[0] == pytest.approx(0.5 / np.sqrt(2 / 9))
    # swapping the groups flips the sign
    assert wefat_association(w, B, A)[0] == pytest.approx(-0.5 / np.sqrt(1 / 3))


def test_relative_norm_distance_by_hand():
    # mean of A = (1/2, 1/2, 0), mean of B = (0, 0, 1); w = (0, 0, 1):
    # ||w - mean B|| = 0, ||w - mean A|| = sqrt(1/4 + 1/4 + 1) = sqrt(3/2)
    w = np.array([[0.0, 0.0, 5.0], [3.0, 0.0, 0.0]])
    got = relative_norm_distance(w, A, B)
    assert got[0] == pytest.approx(-np.sqrt(1.5))
    # w = (1, 0, 0): ||w - mean B|| = sqrt(2), ||w - mean A|| = sqrt(1/4 + 1/4) = sqrt(1/2)
    assert got[1] == pytest.approx(np.sqrt(2) - np.sqrt(0.5))


def test_unit_length_first():
    """Both measures see directions only: scaling any vector changes nothing."""
    rng = np.random.default_rng(0)
    W, Aw, Bm = rng.normal(size=(5, 4)), rng.normal(size=(3, 4)), rng.normal(size=(3, 4))
    scale = rng.uniform(0.1, 10, size=(5, 1))
    for f in (wefat_association, relative_norm_distance):
        np.testing.assert_allclose(f(W * scale, Aw * 7, Bm / 3), f(W, Aw, Bm), rtol=1e-12, atol=1e-12)


def _planted(attribute_noise: float):
    """Occupation vectors pointing a share p of the way from a 'men' to a 'women' axis (plus
    noise in other dimensions), and 10 + 10 gender words scattered around the two axes."""
    rng = np.random.default_rng(1)
    dim, n = 50, 40
    women_axis, men_axis = np.eye(dim)[0], np.eye(dim)[1]
    share = np.linspace(0.02, 0.98, n)
    noise = rng.normal(scale=0.05, size=(n, dim))
    noise[:, :2] = 0
    W = share[:, None] * women_axis + (1 - share[:, None]) * men_axis + noise
    gw = women_axis + rng.normal(scale=attribute_noise, size=(10, dim))
    gm = men_axis + rng.normal(scale=attribute_noise, size=(10, dim))
    return W, gw, gm, share


@pytest.mark.parametrize("f", [wefat_association, relative_norm_distance])
def test_planted_share_is_recovered(f):
    W, gw, gm, share = _planted(attribute_noise=0.3)
    scores = f(W, gw, gm)
    assert stats.pearsonr(scores, share)[0] > 0.97
    assert stats.spearmanr(scores, share)[0] > 0.98


def test_wefat_saturates_when_the_gender_words_agree():
    """WEFAT divides by the spread of the similarities over A ∪ B: when the words of each
    group are nearly identical, that spread is the gap between the groups, and s(w) tends
    to ±const. The ranking survives (Spearman), the linear fit does not; the relative norm
    distance has no such normaliser."""
    W, gw, gm, share = _planted(attribute_noise=0.05)
    wefat = wefat_association(W, gw, gm)
    assert stats.spearmanr(wefat, share)[0] > 0.99
    assert stats.pearsonr(wefat, share)[0] < 0.95
    assert stats.pearsonr(relative_norm_distance(W, gw, gm), share)[0] > 0.99


def test_bad_inputs_are_named():
    w = np.array([[1.0, 0.0, 0.0]])
    with pytest.raises(ValueError, match="zero vectors"):
        wefat_association(np.zeros((1, 3)), A, B)
    with pytest.raises(ValueError, match="dimension mismatch"):
        relative_norm_distance(w, A[:, :2], B)
    with pytest.raises(ValueError, match="ddof must be 0 or 1"):
        wefat_association(w, A, B, ddof=2)
    with pytest.raises(ValueError, match="equally similar to every attribute word"):
        wefat_association(np.array([[0.0, 0.0, 0.0, 1.0]]), np.eye(4)[:2], np.eye(4)[2:3])
    with pytest.raises(ValueError, match="set A is empty"):
        relative_norm_distance(w, np.zeros((0, 3)), B)
