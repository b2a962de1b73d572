"""Categorical Bias (CB) family: Ahn & Oh's CB score, seed 002's PLL version, distribution
difference, normalised word probability, top-k groups; reproductions of seeds 002 and 004.

**CB score** (Ahn & Oh 2021, EMNLP, "Mitigating Language-Dependent Ethnic Bias in BERT",
eq. 2): for templates T, attributes A and groups N,

    CB = 1/(|T||A|) Σ_t Σ_a Var_{n∈N} log( P(n | t, a) / P(n | t, prior) )

where P(n | t, a) is the probability of group n at the target mask with the attribute
written out and the **prior** P(n | t, prior) the same with the attribute masked too
("double mask"). ``Var`` is the population variance (``ddof=0``, docs/conventions.md) unless
``ddof=1`` is asked for. The ratio is exactly the corrected score of
:mod:`polybias.metrics.logprob`, whose target-mask reading this module reuses.

**PLL CB** (BehnamGhader & Milios 2022, seed 002 §3.3): log P is the sentence
pseudo-log-likelihood (:func:`polybias.engines.scoring.pseudo_log_likelihood`) of the template
filled with group n and attribute a — grammatical in every language thanks to
:mod:`polybias.data.templating` — with no prior. The templates of one *template set* and the
synonyms of a word are variants: their sentence probabilities are **averaged in
probability space** (log-mean-exp), giving one P per (set, attribute, group). The CB of a
set is the mean over its attributes; the aggregate over sets is the mean over all
(set, attribute) rows, i.e. the set scores **weighted by their numbers of attributes**
(priors) — how seed 002 computed its "Aggregated" rows.

**Distribution difference** (seed 002 App. A.3, after Liang et al. 2021): with
``P_n`` the model's distribution over the vocabulary at the attribute mask when the
target slot holds group n, ``D[i, j] = KL(P_i ‖ P_j) = Σ_v P_i(v) (log P_i(v) − log P_j(v))``
in nats (row group ‖ column group); the largest entry is reported. ``scale="mean"``
divides by the vocabulary size, as ``torch.nn.functional.kl_div(log P_j, P_i,
reduction="mean")`` in the seed-002 code did (its numbers are ~1e-5 for that reason).

**Normalised word probability** (seed 002 App. A.4): ``p_norm(n) ∝ P(n | t, a) /
P(n | t, prior)``, normalised to sum to one over the groups of a (template, attribute);
**top-k groups** ranks them (seed 002 Table 4).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from polybias.metrics import logprob
from polybias.metrics.measure import MeasureResult, call_options, measure_adapter, measure_result

if TYPE_CHECKING:
    from polybias.data.templating import TemplateBook


class CatBiasError(ValueError):
    """Bad input to a Categorical Bias computation; the message names what is wrong."""


# ---------------------------------------------------------------- the scores themselves

def categorical_bias(log_p: np.ndarray, log_prior: np.ndarray | None = None, ddof: int = 0) -> float:
    """Mean over leading axes of the variance over the last axis (groups) of log P − log prior.

    Parameters
    ----------
    log_p : (..., N) natural-log probabilities, groups on the last axis (e.g. (T, A, N)).
    log_prior : broadcastable to ``log_p``, or None for no normalisation (seed 002).
    ddof : 0 for the population variance (default), 1 for the sample variance.

    >>> categorical_bias(np.log([[0.5, 0.5], [0.9, 0.1]]))   # (0 + (log 9 / 2)^2) / 2
    0.6034...
    >>> categorical_bias(np.log([[0.2, 0.1]]), np.log([[0.4, 0.2]]))   # ratios equal: no bias
    0.0
    """
    x = np.asarray(log_p, dtype=np.float64)
    if log_prior is not None:
        x = x - np.asarray(log_prior, dtype=np.float64)
    if x.ndim == 0 or x.shape[-1] < 2:
        raise CatBiasError("the CB score needs at least two groups on the last axis")
    if x.shape[-1] - ddof <= 0:
        raise CatBiasError(f"variance with ddof={ddof} needs more than {ddof} groups")
    if not np.all(np.isfinite(x)):
        raise CatBiasError("log-probabilities must be finite (a zero probability or a NaN)")
    return float(x.var(axis=-1, ddof=ddof).mean())


def weighted_cb(rows: pd.DataFrame, weights: dict[str, float], value: str = "cb") -> float:
    """Σ_a w_a CB_a / Σ_a w_a over the rows of :func:`cb_rows` (one per attribute), with
    attribute weights such as :func:`sentiment_weights` (seed 004 §4.4).

    >>> weighted_cb(pd.DataFrame({"attribute": ["a", "b"], "cb": [1.0, 4.0]}), {"a": 3, "b": 1})
    1.75
    """
    missing = sorted(set(rows["attribute"]) - set(weights))
    if missing:
        raise CatBiasError(f"no weight for attribute(s) {missing}")
    w = rows["attribute"].map(weights).to_numpy(float)
    if not np.all(np.isfinite(w)) or (w < 0).any():
        raise CatBiasError("attribute weights must be finite and non-negative")
    if w.sum() <= 0:
        raise CatBiasError("the attribute weights sum to zero")
    return float(np.sum(w * rows[value].to_numpy(float)) / w.sum())


def logmeanexp(values: np.ndarray) -> float:
    """log(mean(exp(values))), stably: variants averaged in probability space.

    >>> round(logmeanexp(np.log([0.2, 0.4])) - float(np.log(0.3)), 12)
    0.0
    """
    v = np.asarray(values, dtype=np.float64)
    if v.size == 0:
        raise CatBiasError("no values to average")
    m = v.max()
    return float(m + np.log(np.mean(np.exp(v - m))))


def cb_rows(scores: pd.DataFrame, value: str, keys: tuple[str, ...] = ("template", "attribute"),
            group: str = "target", variants: tuple[str, ...] = ("variant",), ddof: int = 0) -> pd.DataFrame:
    """Per ``keys`` row: Var over groups of ``value`` (after averaging ``variants`` in
    probability space). Every row must hold the same groups.

    Returns ``keys`` + ``cb`` (the variance) + ``n_groups``.

    >>> df = pd.DataFrame({"template": "t", "attribute": ["a", "a", "b", "b"],
    ...                    "target": ["x", "y", "x", "y"], "variant": 0,
    ...                    "lp": np.log([0.9, 0.1, 0.5, 0.5])})
    >>> cb_rows(df, "lp").cb.round(4).tolist()
    [1.2069, 0.0]
    """
    keys, variants = list(keys), [v for v in variants if v in scores.columns]
    for c in (*keys, group, value):
        if c not in scores.columns:
            raise CatBiasError(f"scores have no column {c!r}")
    if scores.empty:
        raise CatBiasError("no scores")
    per = scores.groupby([*keys, group], sort=False)[value].agg(logmeanexp).rename(value).reset_index()
    groups = sorted(per[group].unique())
    if len(groups) < 2:
        raise CatBiasError(f"the CB score needs at least two groups, got {groups}")
    wide = per.pivot_table(index=keys, columns=group, values=value, sort=False)
    incomplete = wide[wide.isna().any(axis=1)]
    if len(incomplete):
        raise CatBiasError(f"rows without a score for every group: {incomplete.index.tolist()[:5]}")
    if len(groups) - ddof <= 0:
        raise CatBiasError(f"variance with ddof={ddof} needs more than {ddof} groups")
    out = wide.var(axis=1, ddof=ddof).rename("cb").reset_index()
    out["n_groups"] = len(groups)
    return out


def aggregate(rows: pd.DataFrame, by: str | None = None, value: str = "cb",
              weights: str | None = None) -> pd.DataFrame | float:
    """Mean of per-row CB values, overall (``by=None``) or per ``by``; with ``weights``
    a weighted mean (e.g. per-set scores weighted by their numbers of priors).

    >>> aggregate(pd.DataFrame({"cb": [1.0, 4.0], "n": [3, 1]}), weights="n")
    1.75
    """
    if rows.empty:
        raise CatBiasError("nothing to aggregate")

    def mean(frame: pd.DataFrame) -> float:
        if weights is None:
            return float(frame[value].mean())
        w = frame[weights].to_numpy(float)
        if (w < 0).any() or w.sum() <= 0:
            raise CatBiasError(f"weights {weights!r} must be non-negative with a positive sum")
        return float(np.average(frame[value].to_numpy(float), weights=w))

    if by is None:
        return mean(rows)
    return pd.DataFrame([{by: k, value: mean(g)} for k, g in rows.groupby(by, sort=False)])


def normalized_word_probability(scores: pd.DataFrame, value: str = "corrected",
                                keys: tuple[str, ...] = ("template", "attribute"),
                                group: str = "target") -> pd.DataFrame:
    """p_norm of every group per ``keys``: exp(value) normalised to sum to one over groups
    (``value`` = log P(n | a) − log P(n | prior), variants averaged in probability space).

    >>> df = pd.DataFrame({"template": "t", "attribute": "a", "target": ["x", "y"],
    ...                    "corrected": np.log([3.0, 1.0])})
    >>> normalized_word_probability(df).p_norm.tolist()
    [0.75, 0.25]
    """
    per = scores.groupby([*keys, group], sort=False)[value].agg(logmeanexp).reset_index()
    m = per.groupby(list(keys), sort=False)[value].transform("max")
    e = np.exp(per[value] - m)
    per["p_norm"] = e / e.groupby([per[k] for k in keys]).transform("sum")
    return per


def top_k_groups(p_norm: pd.DataFrame, k: int = 5, keys: tuple[str, ...] = ("template", "attribute"),
                 group: str = "target") -> pd.DataFrame:
    """The ``k`` groups with the largest ``p_norm`` per ``keys``, with their rank (seed 002
    Table 4). Ties keep the input order."""
    if k < 1:
        raise CatBiasError(f"k must be at least 1, got {k}")
    order = {kv: i for i, kv in enumerate(dict.fromkeys(map(tuple, p_norm[list(keys)].to_numpy())))}
    ranked = p_norm.assign(_key=[order[tuple(r)] for r in p_norm[list(keys)].to_numpy()])
    ranked = ranked.sort_values(["_key", "p_norm"], ascending=[True, False], kind="stable")
    ranked = ranked.groupby(list(keys), sort=False).head(k).copy()
    ranked["rank"] = ranked.groupby(list(keys), sort=False).cumcount() + 1
    return ranked[[*keys, "rank", group, "p_norm"]].reset_index(drop=True)


# ---------------------------------------------------------------- distribution difference

SCALES = ("sum", "mean")


#: How tables print a KL difference: three significant digits. A KL near zero (a
#: balanced model) is a difference of float32 log-probabilities whose last bits depend on
#: the CPU's kernels (about 1e-7 nats); a fourth digit of 3.645e-05 is not reproducible.
KL_FORMAT = ".2e"


def kl_matrix(log_dists: np.ndarray, labels: list[str], scale: str = "sum") -> pd.DataFrame:
    """Pairwise KL(P_row ‖ P_col) in nats between distributions given as log-probabilities.

    ``scale="mean"`` divides by the vocabulary size (seed-002 code: ``F.kl_div`` with
    ``reduction="mean"``).

    >>> m = kl_matrix(np.log([[0.5, 0.5], [0.9, 0.1]]), ["x", "y"])
    >>> [round(float(v), 4) for v in (m.loc["x", "y"], m.loc["y", "x"], m.loc["x", "x"])]
    [0.5108, 0.3681, 0.0]
    """
    if scale not in SCALES:
        raise CatBiasError(f"scale must be one of {SCALES}, got {scale!r}")
    lp = np.asarray(log_dists, dtype=np.float64)
    if lp.ndim != 2 or lp.shape[0] != len(labels):
        raise CatBiasError(f"expected ({len(labels)}, V) log-probabilities, got shape {lp.shape}")
    if len(set(labels)) != len(labels):
        raise CatBiasError("group labels repeat")
    p = np.exp(lp)
    # KL(i || j) = sum_v p_i (lp_i - lp_j) = H(p_i, lp_i) - p_i . lp_j
    self_term = np.sum(p * lp, axis=1)
    d = self_term[:, None] - p @ lp.T
    np.fill_diagonal(d, 0.0)
    d = np.maximum(d, 0.0)
    if scale == "mean":
        d = d / lp.shape[1]
    return pd.DataFrame(d, index=list(labels), columns=list(labels))


KL_LABELS = ("p-q", "seed002")


def max_kl(matrix: pd.DataFrame, labels: str = "p-q") -> tuple[str, str, float]:
    """The ordered pair (row, column) with the largest KL(row ‖ column) and its value.

    ``labels="seed002"`` (compat) names the pair as the seed-002 notebook does: its KL cell
    (``main.ipynb``, ParishadBehnam/Social-Biases-in-BERT-Variants-Across-Multiple-Languages
    at 7d89b25) stores ``F.kl_div(dist_1, dist_2, log_target=True)`` — which is
    KL(P₂ ‖ P₁) — under the key ``w_1-w_2``, so the same value comes back as
    (column, row, value): the first name is the distribution KL is taken *against*.
    """
    if labels not in KL_LABELS:
        raise CatBiasError(f"labels must be one of {KL_LABELS}, got {labels!r}")
    values = matrix.to_numpy()
    i, j = np.unravel_index(np.argmax(values), values.shape)
    row, col = str(matrix.index[i]), str(matrix.columns[j])
    return (col, row, float(values[i, j])) if labels == "seed002" else (row, col, float(values[i, j]))


# ---------------------------------------------------------------- CB results (scored by polybias.studies.categorical_bias)

@dataclass(frozen=True)
class CBResult:
    """A CB score with its per-row values (``rows``: keys, cb, n_groups) and the scores."""

    score: float
    rows: pd.DataFrame
    scores: pd.DataFrame
    ddof: int


MULTIPIECE = (None, "ahn-oh")


TEMPLATE_NORMS = (None, "per-template")


def pll_cb(scores: pd.DataFrame, ddof: int = 0, template_norm: str | None = None) -> CBResult:
    """Seed 002's CB from :func:`pll_scores`: templates of a set and synonyms averaged in
    probability space per (set, attribute, group); Var over groups per (set, attribute);
    the score is the mean over all (set, attribute) rows (sets weighted by their numbers
    of attributes). Per-set scores: ``aggregate(result.rows, by="set")``.

    ``template_norm="per-template"`` (compat) reproduces the seed-002 code on template sets
    of several templates: per template and attribute, the groups' sentence probabilities
    (synonyms averaged) are normalised to sum to one, and these normalised probabilities
    are averaged over the set's templates before the log and the variance
    (ParishadBehnam/Social-Biases-in-BERT-Variants-Across-Multiple-Languages at 7d89b25,
    ``utils.py`` ``score_lists_sent_prob`` lines 296–297, ``probs_in_order /
    np.sum(probs_in_order)``, and ``average_across_templates_from_dict`` lines 317–334;
    the variance in ``main.ipynb``'s categorical-bias cell). With one template per set
    the normalisation cancels in the variance of the logs and both give the same score.
    """
    if template_norm not in TEMPLATE_NORMS:
        raise CatBiasError(f"template_norm must be one of {TEMPLATE_NORMS}, got {template_norm!r}")
    if template_norm == "per-template":
        keys = ["set", "template", "attribute"]
        per = scores.groupby([*keys, "target"], sort=False)["pll"].agg(logmeanexp).reset_index()
        top = per.groupby(keys, sort=False)["pll"].transform("max")
        norm = np.log(np.exp(per["pll"] - top).groupby([per[k] for k in keys]).transform("sum")) + top
        per["pll"] = per["pll"] - norm
        rows = cb_rows(per, "pll", keys=("set", "attribute"), variants=("template",), ddof=ddof)
        return CBResult(float(rows["cb"].mean()), rows, scores, ddof)
    rows = cb_rows(scores, "pll", keys=("set", "attribute"), variants=("template", "variant"), ddof=ddof)
    return CBResult(float(rows["cb"].mean()), rows, scores, ddof)


# ---------------------------------------------------------------- reproductions from shipped data


def seed002_aggregate(per_set: pd.DataFrame, counts: pd.DataFrame, value: str = "cb",
                      sets: list[int] | None = None) -> pd.DataFrame:
    """Aggregate per-template-set CB values as seed 002 did: the mean over all (set, prior)
    rows, i.e. the set values weighted by their prior counts, per (category, language).

    ``per_set`` has columns category, template_set, language and ``value``; ``counts``
    comes from :func:`polybias.studies.categorical_bias.seed002_prior_counts`; ``sets`` keeps only those set indices.
    """
    keys = ["category", "template_set", "language"]
    merged = per_set.merge(counts[[*keys, "n_priors"]], on=keys, how="left", validate="one_to_one")
    if merged["n_priors"].isna().any():
        bad = merged.loc[merged["n_priors"].isna(), keys].to_dict("records")
        raise CatBiasError(f"no prior count for {bad}")
    if sets is not None:
        merged = merged[merged["template_set"].isin(sets)]
    out = []
    for (cat, lang), g in merged.groupby(["category", "language"], sort=False):
        out.append({"category": cat, "language": lang,
                    value: float(np.average(g[value], weights=g["n_priors"])),
                    "n_sets": len(g), "n_priors": int(g["n_priors"].sum())})
    return pd.DataFrame(out)


def seed002_reproduction(per_set: pd.DataFrame, counts: pd.DataFrame, reported: pd.DataFrame) -> pd.DataFrame:
    """Seed 002's aggregated CB recomputed from its per-set values, beside its tables.

    ``per_set``: the per-template-set CB values (category, template_set, language, cb);
    ``counts``: :func:`polybias.studies.categorical_bias.seed002_prior_counts`; ``reported``: rows of
    ``paper/reported/behnamghader2022_cb.csv``. Columns: category, language,
    reproduced (all sets, prior-count weighted), notebook (the code's printed aggregate),
    table2, table1a, coarse_only (sets 0–1 only, the coarse-grained ethnicity sets).
    """
    agg = seed002_aggregate(per_set, counts)[["category", "language", "cb"]].rename(columns={"cb": "reproduced"})
    coarse = seed002_aggregate(per_set, counts, sets=[0, 1])[["category", "language", "cb"]]
    out = agg.merge(coarse.rename(columns={"cb": "coarse_only"}), on=["category", "language"])
    aggregated = reported[reported["template_set"].astype(str) == "aggregated"]
    for label, table in (("notebook", "main.ipynb"), ("table2", "Table 2"), ("table1a", "Table 1(a)")):
        rows = aggregated[aggregated["table"].str.startswith(table)]
        out = out.merge(rows[["category", "language", "value"]].rename(columns={"value": label}),
                        on=["category", "language"], how="left")
    return out[["category", "language", "reproduced", "notebook", "table2", "table1a", "coarse_only"]]


def group_shares(p_norm: pd.DataFrame, book: TemplateBook, target_list: str, attribute_list: str,
                 feature: str = "group", group: str = "target") -> pd.DataFrame:
    """Mean normalised probability taken by each target group next to each attribute group
    (groups from an entry feature, e.g. ``group: male``): per (template, attribute) the
    p_norm of a target group's members is summed, then averaged over templates and the
    attributes of an attribute group. Columns: attribute_group, target_group, share."""
    def feature_of(list_name: str) -> dict[str, str]:
        try:
            groups = logprob.group_members(book, list_name, feature)
        except logprob.LogProbError as exc:
            raise CatBiasError(str(exc)) from exc
        return {m: g for g, members in groups.items() for m in members}

    tg, ag = feature_of(target_list), feature_of(attribute_list)
    frame = p_norm.assign(target_group=p_norm[group].map(tg), attribute_group=p_norm["attribute"].map(ag))
    if frame[["target_group", "attribute_group"]].isna().any().any():
        raise CatBiasError("scores name entries that are not in the given lists")
    summed = frame.groupby(["template", "attribute", "attribute_group", "target_group"], sort=False).p_norm.sum()
    return (summed.groupby(["attribute_group", "target_group"], sort=False).mean()
            .rename("share").reset_index())


# ---------------------------------------------------------------- cultural interaction bias (seed 004 §4)

UNKNOWN_POLICIES = ("drop", "raise")


@dataclass(frozen=True)
class SentimentWeights:
    """Attribute weights from a sentiment lexicon and the words left out."""

    weights: dict[str, float]
    compound: dict[str, float]
    dropped: tuple[str, ...]


def sentiment_weights(words: list[str], on_unknown: str = "drop") -> SentimentWeights:
    """Weight each attribute word by the strength of its sentiment, |VADER compound|.

    VADER (Hutto & Gilbert 2014; package ``vaderSentiment``) scores a single word by its
    lexicon valence v ∈ [−4, 4], normalised to compound = v / sqrt(v² + 15). Seed 004
    (§4.1, §4.4) weights attributes by this score and leaves out adjectives without
    sentiment. Words the lexicon does not know (compound 0) are dropped
    (``on_unknown="drop"``, listed in ``dropped``) or an error naming them
    (``on_unknown="raise"``). Empty or non-text words are always an error.

    >>> w = sentiment_weights(["euphoric", "boring", "table"])
    >>> round(w.weights["euphoric"], 4), round(w.weights["boring"], 4), w.dropped
    (0.6369, 0.3182, ('table',))
    """
    if on_unknown not in UNKNOWN_POLICIES:
        raise CatBiasError(f"on_unknown must be one of {UNKNOWN_POLICIES}, got {on_unknown!r}")
    bad = [w for w in words if not isinstance(w, str) or not w.strip()]
    if bad:
        raise CatBiasError(f"empty or non-text attribute word(s): {bad}")
    try:
        from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer  # lazy: sentiment only
    except ImportError as exc:  # pragma: no cover - depends on the environment
        raise CatBiasError("sentiment weights need the 'vaderSentiment' package") from exc
    analyzer = SentimentIntensityAnalyzer()
    compound = {w: float(analyzer.polarity_scores(w)["compound"]) for w in words}
    unknown = tuple(w for w in words if compound[w] == 0.0)
    if unknown and on_unknown == "raise":
        raise CatBiasError(f"the sentiment lexicon does not know (or finds neutral): {list(unknown)}")
    weights = {w: abs(c) for w, c in compound.items() if c != 0.0}
    if not weights:
        raise CatBiasError("no attribute word has a sentiment score")
    return SentimentWeights(weights, compound, unknown)


def stratified_sample(items: list[str], strata: list[str], n: int, seed: int = 0,
                      min_per_stratum: int = 0) -> list[str]:
    """Draw ``n`` of ``items`` without replacement, allocated to strata in proportion to
    their sizes (largest remainders; at least ``min_per_stratum`` from every stratum that
    has that many), uniformly within a stratum, with ``numpy.random.default_rng(seed)``.

    Seed 004 (§4.3, Table 1) samples adjectives and identities stratified by sentiment
    to make 2- to 5-way interactions affordable. The result keeps the input order.

    >>> picked = stratified_sample(list("abcdef"), ["neg"] * 4 + ["pos"] * 2, 3, seed=1)
    >>> sum(p in "abcd" for p in picked), sum(p in "ef" for p in picked)   # quotas 2 and 1
    (2, 1)
    """
    if len(items) != len(strata):
        raise CatBiasError(f"{len(items)} items but {len(strata)} stratum labels")
    if len(set(items)) != len(items):
        raise CatBiasError("items repeat")
    if not isinstance(n, int | np.integer) or isinstance(n, bool) or not 0 < n <= len(items):
        raise CatBiasError(f"n must be between 1 and {len(items)}, got {n!r}")
    groups: dict[str, list[int]] = {}
    for i, s in enumerate(strata):
        groups.setdefault(s, []).append(i)
    names = list(groups)
    sizes = np.array([len(groups[s]) for s in names])
    floor_min = np.minimum(sizes, min_per_stratum)
    if floor_min.sum() > n:
        raise CatBiasError(f"n={n} cannot give {min_per_stratum} per stratum to {len(names)} strata")
    quota = n * sizes / sizes.sum()
    alloc = np.maximum(np.floor(quota).astype(int), floor_min)
    while alloc.sum() > n:  # the minimums pushed us over: take from the largest surplus
        surplus = np.where(alloc > floor_min, alloc - quota, -np.inf)
        alloc[int(np.argmax(surplus))] -= 1
    order = np.argsort(-(quota - alloc), kind="stable")
    for k in order:
        if alloc.sum() == n:
            break
        if alloc[k] < sizes[k]:
            alloc[k] += 1
    rng = np.random.default_rng(seed)
    chosen: list[int] = []
    for s, k in zip(names, alloc, strict=True):
        chosen += rng.choice(groups[s], size=int(k), replace=False).tolist()
    return [items[i] for i in sorted(chosen)]


def sentiment_strata(compound: dict[str, float], edges: tuple[float, ...] = (-0.05, 0.05)) -> dict[str, str]:
    """Label words by sentiment: ``negative`` below the first edge, ``positive`` above the
    last, ``neutral`` between (VADER's conventional ±0.05 thresholds by default)."""
    lo, hi = edges[0], edges[-1]
    return {w: "negative" if c < lo else "positive" if c > hi else "neutral" for w, c in compound.items()}


BASES = ("double-mask", "neutral")


# ------------------------------------------------------------------ the registered measures
# The adapters and results of the measures of data/measures.yaml that use this module
# (polybias.metrics.measure explains the two roles).

@measure_result
def cb_result(name: str, raw, opts: dict[str, Any]) -> MeasureResult:
    """A CB score (a variance, no test); details: the per-row variances."""
    value, rows = raw
    return MeasureResult(name, float(value), None, None, "none", len(rows), opts, rows)


@measure_adapter
def cb_adapter(scores, value: str = "corrected", group: str = "target", ddof: int = 0):
    """Measure ``cb``: the mean of :func:`cb_rows`."""
    rows = cb_rows(scores, value, group=group, ddof=ddof)
    return (float(rows["cb"].mean()), rows), {"value": value, "group": group, "ddof": ddof}


@measure_adapter
def pll_cb_adapter(scores, **options):
    """Measure ``pll-cb``: :func:`pll_cb`."""
    opts = call_options(pll_cb, options)
    r = pll_cb(scores, **opts)
    return (r.score, r.rows), opts


@measure_adapter
def weighted_cb_adapter(scores, weights, value: str = "corrected", group: str = "target", ddof: int = 0):
    """Measure ``sentiment-cb``: :func:`weighted_cb` of :func:`cb_rows`."""
    rows = cb_rows(scores, value, group=group, ddof=ddof)
    return ((weighted_cb(rows, weights), rows.assign(weight=rows["attribute"].map(weights))),
            {"value": value, "group": group, "ddof": ddof})


@measure_adapter
def interaction_adapter(scores, identity_columns, value: str = "corrected", ddof: int = 0,
                        weights: dict[str, float] | None = None):
    """Measure ``interaction-cb``: :func:`cb_rows` over the combined identity columns."""
    columns = list(identity_columns)
    if not columns:
        raise CatBiasError("identity_columns must name at least one column")
    missing = [c for c in columns if c not in scores.columns]
    if missing:
        raise CatBiasError(f"scores have no identity column(s) {missing}")
    combined = scores.assign(group=scores[columns].astype(str).agg("|".join, axis=1))
    rows = cb_rows(combined, value, group="group", ddof=ddof)
    score = float(rows["cb"].mean()) if weights is None else weighted_cb(rows, weights)
    return (score, rows), {"identity_columns": columns, "value": value, "ddof": ddof,
                           "weighted": weights is not None}


@measure_adapter
def kl_adapter(log_dists, labels, scale: str = "sum"):
    """Measure ``kl-difference``: :func:`kl_matrix` and its :func:`max_kl`."""
    matrix = kl_matrix(log_dists, list(labels), scale)
    return (matrix, max_kl(matrix)), {"scale": scale}


@measure_result
def kl_result(name: str, raw, opts: dict[str, Any]) -> MeasureResult:
    """The largest divergence; details: the whole matrix, long; ``extra``: the ordered pair
    it is taken between, KL(``from`` ‖ ``to``) (:func:`max_kl`)."""
    matrix, (row, col, value) = raw
    long = matrix.rename_axis("p").reset_index().melt(id_vars="p", var_name="q", value_name="kl")
    return MeasureResult(name, float(value), None, None, "none", matrix.shape[0], opts, long,
                         {"from": row, "to": col})
