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
  (0: groups indistinguishable, 1: fully separated), a number to report beside the picture;
* :func:`kmeans_agreement` — KMeans clusters of the states of each layer (seed 004 ran
  KMeans among its reductions) against a known grouping, by the adjusted Rand index;
* :func:`half_sums_test` — seed 004's first- versus last-layers comparison: the summed
  activation of the first half of the layers against the last half, paired over the
  occurrences.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy.stats import f_oneway, ttest_rel, wilcoxon

from polybias.data import templating
from polybias.data.templating import TemplateBook
from polybias.engines import embeddings

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
        from sklearn.decomposition import PCA  # lazy: scikit-learn is heavy

        return PCA(n_components=2, random_state=seed).fit_transform(x)
    if method == "svd":
        from sklearn.decomposition import TruncatedSVD  # lazy: scikit-learn is heavy

        return TruncatedSVD(n_components=2, random_state=seed).fit_transform(x)
    from sklearn.manifold import TSNE  # lazy: scikit-learn is heavy

    perplexity = perplexity if perplexity is not None else min(30.0, (len(x) - 1) / 3)
    return TSNE(n_components=2, random_state=seed, perplexity=perplexity, init="random").fit_transform(x)


def group_separation(points: np.ndarray, groups: list[str]) -> float:
    """Between-group share of the total sum of squares of ``points`` (η², 0 to 1).

    Points whose group is None or ``"unknown"`` are left out.

    >>> group_separation(np.array([[0.0, 0], [0, 1], [10, 0], [10, 1]]), ["a", "a", "b", "b"])
    0.9900990099009901
    """
    p = np.asarray(points, dtype=np.float64)
    if len(p) != len(groups):
        raise HiddenStateError(f"{len(p)} points but {len(groups)} group labels")
    keep = np.array([x is not None and x != "unknown" for x in groups], dtype=bool)
    p, groups = p[keep], [x for x, k in zip(groups, keep, strict=True) if k]
    g = np.asarray(groups)
    if len(set(groups)) < 2:
        raise HiddenStateError("group separation needs at least two groups")
    total = ((p - p.mean(0)) ** 2).sum()
    if total == 0:
        return 0.0
    between = sum((g == k).sum() * ((p[g == k].mean(0) - p.mean(0)) ** 2).sum() for k in set(groups))
    return float(between / total)


def kmeans_agreement(states: np.ndarray, groups: list[str], layers: list[int] | None = None,
                     n_clusters: int | None = None, seed: int = 0, n_init: int = 10) -> pd.DataFrame:
    """KMeans clusters of each layer's states against a known grouping (adjusted Rand index).

    For each layer k, the (n, d) states are clustered by ``sklearn.cluster.KMeans``
    (``n_clusters`` = number of distinct groups by default, ``random_state=seed``,
    ``n_init`` restarts) and the clusters compared with ``groups`` by the adjusted Rand
    index (Hubert & Arabie 1985; ``sklearn.metrics.adjusted_rand_score``):

        ARI = (RI − E[RI]) / (max RI − E[RI]),

    1 when the clusters are the groups, about 0 for clusters unrelated to them.
    Occurrences whose group is None or "unknown" are left out. Returns layer, ari,
    n_clusters, n (occurrences used).

    >>> s = np.array([[[0.0, 0], [0, 0]], [[0.1, 0], [5, 5]], [[0, 0.1], [0, 0.2]], [[0.1, 0.1], [5, 5.1]]])
    >>> kmeans_agreement(s, ["a", "b", "a", "b"]).ari.round(3).tolist()
    [-0.5, 1.0]
    """
    from sklearn.cluster import KMeans  # lazy: scikit-learn is heavy
    from sklearn.metrics import adjusted_rand_score  # lazy: scikit-learn is heavy

    x = np.asarray(states, dtype=np.float64)
    if x.ndim != 3:
        raise HiddenStateError(f"expected (n, layers, hidden) states, got shape {x.shape}")
    if len(groups) != len(x):
        raise HiddenStateError(f"{len(x)} occurrences but {len(groups)} group labels")
    keep = np.array([g is not None and g != "unknown" for g in groups])
    labels = [g for g, k in zip(groups, keep, strict=True) if k]
    k = n_clusters or len(set(labels))
    if len(set(labels)) < 2 or k < 2:
        raise HiddenStateError("cluster agreement needs at least two known groups and two clusters")
    if keep.sum() <= k:
        raise HiddenStateError(f"{int(keep.sum())} occurrences with a known group for {k} clusters")
    layers = list(range(x.shape[1])) if layers is None else list(layers)
    rows = []
    for layer in layers:
        km = KMeans(n_clusters=k, random_state=seed, n_init=n_init).fit(x[keep, layer])
        rows.append({"layer": layer, "ari": float(adjusted_rand_score(labels, km.labels_)),
                     "n_clusters": k, "n": int(keep.sum())})
    return pd.DataFrame(rows)


def half_sums_test(states: np.ndarray) -> dict[str, float]:
    """Seed 004's comparison of the first and the last layers (App. A, Figure 14).

    Of L + 1 hidden states (0 = embedding output), the transformer layers 1 … L are split
    into the first h = ⌊L/2⌋ and the last h; for each occurrence i,
    F_i = Σ_{k=1..h} Σ_j s[i, k, j] and S_i = Σ_{k=L−h+1..L} Σ_j s[i, k, j]. The null
    "no difference between the two sums" is tested by the paired t-test on F_i − S_i
    (``scipy.stats.ttest_rel``, two-sided) and the Wilcoxon signed-rank test.

    Returns n, h, mean_first, mean_last, share_first_larger (of occurrences with
    F_i > S_i), t, p_t, p_wilcoxon.

    >>> s = np.zeros((3, 5, 2)); s[:, 1:3] = 1.0; s[:, 3:] = [[[0.5, 0]], [[0.2, 0]], [[0.1, 0]]]
    >>> r = half_sums_test(s); r["h"], r["mean_first"], round(r["mean_last"], 4), r["share_first_larger"]
    (2, 4.0, 0.5333, 1.0)
    """
    sums = _per_item(states, "sum")
    n_layers = sums.shape[1] - 1
    h = n_layers // 2
    if h < 1:
        raise HiddenStateError(f"the comparison needs at least two transformer layers, got {n_layers}")
    first, last = sums[:, 1:1 + h].sum(axis=1), sums[:, n_layers - h + 1:].sum(axis=1)
    diff = first - last
    if np.allclose(diff, diff[0]):  # no spread: the t statistic is infinite (or undefined at 0)
        t = float(np.sign(diff[0]) * np.inf) if diff[0] != 0 else float("nan")
        p_t = 0.0 if diff[0] != 0 else 1.0
    else:
        res = ttest_rel(first, last)
        t, p_t = float(res.statistic), float(res.pvalue)
    p_w = float(wilcoxon(first, last).pvalue) if np.any(diff != 0) else 1.0
    return {"n": int(len(sums)), "h": h, "mean_first": float(first.mean()), "mean_last": float(last.mean()),
            "share_first_larger": float(np.mean(first > last)), "t": t, "p_t": p_t, "p_wilcoxon": p_w}
