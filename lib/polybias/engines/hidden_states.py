"""Per-layer analysis of the hidden states of identity words (seed 004, App. A).

Seed 004 looks for implicit associations in BERT's hidden states: it sums the hidden
states of the identity token (a country in "A person from {country} is {adjective}") per
layer, compares the layers with a one-way ANOVA (F ≈ 8·10⁴: earlier layers have larger
sums), and projects the flattened states to two dimensions with PCA, TruncatedSVD and
t-SNE to see whether groups separate. This module does the same on any encoder of
:mod:`polybias.engines.embeddings` (offline: ``minilm-l6``), with the identity occurrence found
through the tokenizer's offsets (its pieces mean-pooled, so multi-piece identities are
whole) and every stochastic projection seeded:

* :func:`identity_states` — (n, L + 1, d) hidden states of the identity occurrences, one
  slice per layer (0 = embedding output);
* :func:`layer_statistics` — per layer, the mean / std over occurrences of the sum and
  of the L2 norm of the state;
* :func:`layer_anova` — one-way ANOVA of a per-occurrence statistic across layers
  (``scipy.stats.f_oneway``);
* :func:`project` — 2-D views (``pca``, ``svd``, ``tsne``) with a fixed seed;
* :func:`group_separation` — the share of between-group variance of a 2-D view
  (0: groups indistinguishable, 1: fully separated), a number to report beside the picture.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ..data import templating
from ..data.templating import TemplateBook
from . import embeddings

STATISTICS = ("sum", "norm")
METHODS = ("pca", "svd", "tsne")


class HiddenStateError(ValueError):
    """Bad input to a hidden-state analysis; the message names what is wrong."""


def identity_states(encoder: embeddings.Encoder, book: TemplateBook, template: str, slot: str,
                    fixed: dict[str, str] | None = None, layers: list[int] | None = None,
                    batch_tokens: int | None = None) -> tuple[np.ndarray, pd.DataFrame]:
    """Hidden states of the word in ``slot`` for every sentence of ``template``.

    Returns
    -------
    (states, items) : states is (n, len(layers), hidden) float32 (default: every layer,
    0 = embeddings); items has one row per sentence: text, the entry id of every slot
    (columns named after the slots) and the feature values of the ``slot`` entry
    (columns ``feature:<name>``).
    """
    t = book.template(template)
    if slot not in t.slots:
        raise HiddenStateError(f"template {template!r} has no slot {slot!r}")
    filled = templating.expand(book, t, fixed=fixed)
    if not filled:
        raise HiddenStateError(f"template {template!r} gives no sentences")
    n_layers = int(encoder.model.config.num_hidden_layers)
    layers = list(range(n_layers + 1)) if layers is None else list(layers)
    bad = [k for k in layers if not -n_layers - 1 <= k <= n_layers]
    if bad or not layers:
        raise HiddenStateError(f"layers must be in [0, {n_layers}] (or negative from the end), got {layers}")
    texts = [f.text for f in filled]
    spans = [f.spans[slot] for f in filled]
    states = embeddings.word_vectors_by_layer(encoder, texts, spans, layers, batch_tokens=batch_tokens)
    entries = book.lists[t.slots[slot].list]
    rows = []
    for f in filled:
        row = {"text": f.text, **f.choice}
        row.update({f"feature:{k}": v for k, v in entries.entry(f.choice[slot]).features.items()})
        rows.append(row)
    return states, pd.DataFrame(rows)


def _per_item(states: np.ndarray, statistic: str) -> np.ndarray:
    if statistic not in STATISTICS:
        raise HiddenStateError(f"statistic must be one of {STATISTICS}, got {statistic!r}")
    s = np.asarray(states, dtype=np.float64)
    if s.ndim != 3 or s.shape[0] < 2 or s.shape[1] < 2:
        raise HiddenStateError(f"expected (n >= 2, layers >= 2, hidden) states, got shape {s.shape}")
    return s.sum(axis=2) if statistic == "sum" else np.linalg.norm(s, axis=2)


def layer_statistics(states: np.ndarray, layers: list[int] | None = None) -> pd.DataFrame:
    """Per layer: mean and std over occurrences of the sum and of the L2 norm of the state.

    >>> s = np.array([[[1.0, 1.0], [3.0, 0.0]], [[2.0, 0.0], [0.0, 4.0]]])
    >>> layer_statistics(s)[["layer", "sum_mean", "norm_mean"]].round(3).values.tolist()
    [[0.0, 2.0, 1.707], [1.0, 3.5, 3.5]]
    """
    sums, norms = _per_item(states, "sum"), _per_item(states, "norm")
    layers = list(range(sums.shape[1])) if layers is None else list(layers)
    if len(layers) != sums.shape[1]:
        raise HiddenStateError(f"{len(layers)} layer labels for {sums.shape[1]} layers")
    return pd.DataFrame({"layer": layers, "sum_mean": sums.mean(0), "sum_std": sums.std(0, ddof=1),
                         "norm_mean": norms.mean(0), "norm_std": norms.std(0, ddof=1)})


def layer_anova(states: np.ndarray, statistic: str = "sum") -> tuple[float, float]:
    """One-way ANOVA across layers of a per-occurrence statistic (each layer a group):
    (F, p) from ``scipy.stats.f_oneway`` (seed 004 App. A, Figures 15–16)."""
    from scipy.stats import f_oneway

    values = _per_item(states, statistic)
    if np.allclose(values.std(axis=0), 0) and np.allclose(values.mean(axis=0), values.mean()):
        raise HiddenStateError("the statistic is constant across occurrences and layers")
    res = f_oneway(*[values[:, k] for k in range(values.shape[1])])
    return float(res.statistic), float(res.pvalue)


def project(states: np.ndarray, method: str = "pca", seed: int = 0, perplexity: float | None = None) -> np.ndarray:
    """2-D view of flattened hidden states: ``pca``, ``svd`` (TruncatedSVD, randomized) or
    ``tsne`` (random initialisation, so the seed matters, as in seed 004's 100-seed sweep);
    the stochastic ones use ``random_state=seed``. (n, L, d) states are flattened
    over layers (seed 004 flattens all hidden states); (n, d) are used as they are."""
    if method not in METHODS:
        raise HiddenStateError(f"method must be one of {METHODS}, got {method!r}")
    x = np.asarray(states, dtype=np.float64)
    x = x.reshape(len(x), -1)
    if len(x) < 3:
        raise HiddenStateError(f"a 2-D view needs at least 3 occurrences, got {len(x)}")
    if method == "pca":
        from sklearn.decomposition import PCA

        return PCA(n_components=2, random_state=seed).fit_transform(x)
    if method == "svd":
        from sklearn.decomposition import TruncatedSVD

        return TruncatedSVD(n_components=2, random_state=seed).fit_transform(x)
    from sklearn.manifold import TSNE

    perplexity = perplexity if perplexity is not None else min(30.0, (len(x) - 1) / 3)
    return TSNE(n_components=2, random_state=seed, perplexity=perplexity, init="random").fit_transform(x)


def group_separation(points: np.ndarray, groups: list[str]) -> float:
    """Between-group share of the total sum of squares of ``points`` (η², 0 to 1).

    >>> group_separation(np.array([[0.0, 0], [0, 1], [10, 0], [10, 1]]), ["a", "a", "b", "b"])
    0.9900990099009901
    """
    p = np.asarray(points, dtype=np.float64)
    g = np.asarray(groups)
    if len(p) != len(g):
        raise HiddenStateError(f"{len(p)} points but {len(g)} group labels")
    if len(set(groups)) < 2:
        raise HiddenStateError("group separation needs at least two groups")
    total = ((p - p.mean(0)) ** 2).sum()
    if total == 0:
        return 0.0
    between = sum((g == k).sum() * ((p[g == k].mean(0) - p.mean(0)) ** 2).sum() for k in set(groups))
    return float(between / total)
