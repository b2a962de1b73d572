"""Categorical Bias (CB) family: Ahn & Oh's CB score, seed 002's PLL version, distribution
difference, normalised word probability, top-k groups; reproductions of seeds 002 and 004.

**CB score** (Ahn & Oh 2021, EMNLP, "Mitigating Language-Dependent Ethnic Bias in BERT",
eq. 2): for templates T, attributes A and groups N,

    CB = 1/(|T||A|) Σ_t Σ_a Var_{n∈N} log( P(n | t, a) / P(n | t, prior) )

where P(n | t, a) is the probability of group n at the target mask with the attribute
written out and the **prior** P(n | t, prior) the same with the attribute masked too
("double mask"). ``Var`` is the population variance (``ddof=0``, DESIGN.md §5) unless
``ddof=1`` is asked for. The ratio is exactly the corrected score of
:mod:`polybias.metrics.logprob`, whose target-mask reading this module reuses.

**PLL CB** (BehnamGhader & Milios 2022, seed 002 §3.3): log P is the sentence
pseudo-log-likelihood (:func:`polybias.scoring.pseudo_log_likelihood`) of the template
filled with group n and attribute a — grammatical in every language thanks to
:mod:`polybias.templating` — with no prior. The templates of one *template set* and the
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

import ast
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from .. import scoring
from ..templating import TemplateBook, expand
from . import logprob


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


def max_kl(matrix: pd.DataFrame) -> tuple[str, str, float]:
    """The ordered pair (row, column) with the largest KL(row ‖ column) and its value."""
    values = matrix.to_numpy()
    i, j = np.unravel_index(np.argmax(values), values.shape)
    return str(matrix.index[i]), str(matrix.columns[j]), float(values[i, j])


# ---------------------------------------------------------------- scores from a model

@dataclass(frozen=True)
class CBResult:
    """A CB score with its per-row values (``rows``: keys, cb, n_groups) and the scores."""

    score: float
    rows: pd.DataFrame
    scores: pd.DataFrame
    ddof: int


def ahn_oh_cb(lm: scoring.LanguageModel, book: TemplateBook, templates: list[str] | str,
              targets: list[str] | None = None, attributes: list[str] | None = None,
              mode: str = "word", ddof: int = 0) -> CBResult:
    """Ahn & Oh's CB score: Var over groups of log P(n | a)/P(n | prior), both read at the
    target mask (:func:`polybias.metrics.logprob.kurita_scores`), mean over (template,
    attribute). ``targets``/``attributes`` restrict the lists (entry ids)."""
    scores = logprob.kurita_scores(lm, book, templates, targets, attributes, mode=mode)
    rows = cb_rows(scores, "corrected", ddof=ddof)
    return CBResult(float(rows["cb"].mean()), rows, scores, ddof)


def pll_scores(lm: scoring.LanguageModel, book: TemplateBook, templates: list[str] | str,
               targets: list[str] | None = None, attributes: list[str] | None = None,
               max_batch_tokens: int = 8192) -> pd.DataFrame:
    """Sentence PLL of every filled template (all entries and synonym variants).

    Returns columns set, template, target, attribute, variant, text, pll.
    """
    templates = [templates] if isinstance(templates, str) else list(templates)
    frames = []
    for name in templates:
        t = book.template(name)
        tgt, att = t.the("target"), t.the("attribute")
        fixed = {}
        items = []
        pools = {s: (c if c is not None else book.lists[t.slots[s].list].ids)
                 for s, c in ((tgt, targets), (att, attributes))}
        for s, pool in pools.items():
            unknown = [c for c in pool if c not in book.lists[t.slots[s].list].ids]
            if unknown or not pool:
                raise CatBiasError(f"template {name!r}: list {t.slots[s].list!r} lacks {unknown}"
                                   if unknown else f"template {name!r}: no {s!r} entries")
        for a in pools[att]:
            for x in pools[tgt]:
                fixed = {tgt: x, att: a}
                items.extend(expand(book, t, fixed=fixed))
        pll = scoring.pseudo_log_likelihood(lm, [f.text for f in items], max_batch_tokens=max_batch_tokens)
        frames.append(pd.DataFrame({
            "set": t.set, "template": name, "target": [f.choice[tgt] for f in items],
            "attribute": [f.choice[att] for f in items], "variant": [f.variant for f in items],
            "text": [f.text for f in items], "pll": pll}))
    return pd.concat(frames, ignore_index=True)


def pll_cb(scores: pd.DataFrame, ddof: int = 0) -> CBResult:
    """Seed 002's CB from :func:`pll_scores`: templates of a set and synonyms averaged in
    probability space per (set, attribute, group); Var over groups per (set, attribute);
    the score is the mean over all (set, attribute) rows (sets weighted by their numbers
    of attributes). Per-set scores: ``aggregate(result.rows, by="set")``."""
    rows = cb_rows(scores, "pll", keys=("set", "attribute"), variants=("template", "variant"), ddof=ddof)
    return CBResult(float(rows["cb"].mean()), rows, scores, ddof)


def distribution_difference(lm: scoring.LanguageModel, book: TemplateBook, template: str,
                            targets: list[str] | None = None, scale: str = "sum") -> pd.DataFrame:
    """KL matrix between the vocabulary distributions at the attribute mask, one per target
    group (the template filled with the group, its attribute masked; synonyms and context
    entries averaged in probability space)."""
    t = book.template(template)
    tgt, att = t.the("target"), t.the("attribute")
    ids = targets if targets is not None else book.lists[t.slots[tgt].list].ids
    if len(ids) < 2:
        raise CatBiasError(f"template {template!r}: the distribution difference needs two groups")
    mask = lm.tokenizer.mask_token
    first_attr = book.lists[t.slots[att].list].ids[0]
    dists = []
    for x in ids:
        # the attribute is masked, so its entry does not matter beyond agreement of
        # context slots; take the first entry and keep distinct texts only
        items = expand(book, t, mask=[att], mask_token=mask, fixed={tgt: x, att: first_attr})
        texts = list(dict.fromkeys(f.text for f in items))
        starts = [next(f.spans[att][0] for f in items if f.text == s) for s in texts]
        lp = logprob.mask_log_distributions(lm, texts, starts)
        m = lp.max(axis=0)
        dists.append(m + np.log(np.mean(np.exp(lp - m), axis=0)))
    return kl_matrix(np.vstack(dists), list(ids), scale)


# ---------------------------------------------------------------- reproductions from shipped data

_SEED002_LANGS = ("english", "greek", "persian")
_SEED002_TYPES = {"gender": "gender", "religion": "religion", "ethnicity/race": "ethnicity"}


def seed002_prior_counts(path: str | Path) -> pd.DataFrame:
    """Number of priors (attribute words) of every template set of seed 002's
    ``data/prior_sentence_templates.json``, per language.

    Returns columns category (gender, religion, ethnicity), template_set (index within the
    category), language, n_priors, n_templates, n_groups.
    """
    path = Path(path)
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        lists, cats = raw["word_lists"], raw["categories"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise CatBiasError(f"{path.name}: not a seed-002 template file ({exc})") from exc

    def size(ref: str, where: str) -> int:
        name, _, key = ref.partition("|")
        try:
            return len(lists[name][key])
        except KeyError as exc:
            raise CatBiasError(f"{path.name}: {where} refers to missing word list {ref!r}") from exc

    rows = []
    for cat in cats:
        category = _SEED002_TYPES.get(cat.get("type"), cat.get("type"))
        for i, tset in enumerate(cat["templates"]):
            for lang in _SEED002_LANGS:
                where = f"{category} set {i} ({lang})"
                rows.append({"category": category, "template_set": i, "language": lang,
                             "n_priors": size(tset["prior_variations"][lang], where),
                             "n_templates": len(tset["base_templates"]),
                             "n_groups": size(tset["words"][lang], where)})
    return pd.DataFrame(rows)


def seed002_aggregate(per_set: pd.DataFrame, counts: pd.DataFrame, value: str = "cb",
                      sets: list[int] | None = None) -> pd.DataFrame:
    """Aggregate per-template-set CB values as seed 002 did: the mean over all (set, prior)
    rows, i.e. the set values weighted by their prior counts, per (category, language).

    ``per_set`` has columns category, template_set, language and ``value``; ``counts``
    comes from :func:`seed002_prior_counts`; ``sets`` keeps only those set indices.
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


SEED004_METHODS = ("seed004", "ahn-oh")


def seed004_interaction_scores(path: str | Path, method: str = "seed004", ddof: int = 0) -> pd.DataFrame:
    """Two-characteristic interaction CB from seed 004's ``CG_score_2.csv``.

    The file has one row per (adjective, pair of characteristics, pair of identity values)
    with ``Probs`` = log P(identities | adjective) and ``Probs_base`` = the double-mask log
    base rate.

    * ``method="seed004"`` — what the published ``CG_score_2.json`` holds: the population
      variance, over all rows of a characteristic pair (adjectives pooled), of the
      **ratio** ``Probs / Probs_base`` of the two log-probabilities.
    * ``method="ahn-oh"`` — the CB definition (Ahn & Oh eq. 2, seed 004's own formula):
      per adjective, the variance over identity pairs of ``Probs − Probs_base`` (the log of
      the probability ratio), averaged over adjectives.

    Returns columns characteristics ("Countries,Languages" …), score, n_rows,
    n_adjectives, n_identities, probs_var_within_adjective (mean over adjectives of the
    variance of ``Probs`` over identities: 0 means every identity got the same probability).
    """
    if method not in SEED004_METHODS:
        raise CatBiasError(f"method must be one of {SEED004_METHODS}, got {method!r}")
    path = Path(path)
    try:
        df = pd.read_csv(path)
    except (OSError, ValueError) as exc:
        raise CatBiasError(f"{path.name}: cannot read ({exc})") from exc
    need = {"Adjective", "Characteristics", "Values", "Probs", "Probs_base"}
    if not need <= set(df.columns):
        raise CatBiasError(f"{path.name}: missing column(s) {sorted(need - set(df.columns))}")
    if df[["Probs", "Probs_base"]].isna().any().any():
        raise CatBiasError(f"{path.name}: empty probabilities")

    def label(cell: str) -> str:
        try:
            return ",".join(ast.literal_eval(cell))
        except (ValueError, SyntaxError) as exc:
            raise CatBiasError(f"{path.name}: malformed Characteristics {cell!r}") from exc

    df["characteristics"] = df["Characteristics"].map(label)
    out = []
    for chars, g in df.groupby("characteristics", sort=False):
        if method == "seed004":
            score = float((g["Probs"] / g["Probs_base"]).var(ddof=ddof))
        else:
            score = float((g["Probs"] - g["Probs_base"]).groupby(g["Adjective"]).var(ddof=ddof).mean())
        out.append({"characteristics": chars, "score": score, "n_rows": len(g),
                    "n_adjectives": g["Adjective"].nunique(), "n_identities": g["Values"].nunique(),
                    "probs_var_within_adjective": float(
                        g["Probs"].groupby(g["Adjective"]).var(ddof=ddof).mean())})
    return pd.DataFrame(out)


def seed002_reproduction(per_set: pd.DataFrame, counts: pd.DataFrame, reported: pd.DataFrame) -> pd.DataFrame:
    """Seed 002's aggregated CB recomputed from its per-set values, beside its tables.

    ``per_set``: the per-template-set CB values (category, template_set, language, cb);
    ``counts``: :func:`seed002_prior_counts`; ``reported``: rows of
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
        out = {}
        for e in book.lists[list_name].entries:
            if feature not in e.features:
                raise CatBiasError(f"entry {e.id!r} of list {list_name!r} has no feature {feature!r}")
            out[e.id] = e.features[feature]
        return out

    tg, ag = feature_of(target_list), feature_of(attribute_list)
    frame = p_norm.assign(target_group=p_norm[group].map(tg), attribute_group=p_norm["attribute"].map(ag))
    if frame[["target_group", "attribute_group"]].isna().any().any():
        raise CatBiasError("scores name entries that are not in the given lists")
    summed = frame.groupby(["template", "attribute", "attribute_group", "target_group"], sort=False).p_norm.sum()
    return (summed.groupby(["attribute_group", "target_group"], sort=False).mean()
            .rename("share").reset_index())


def plot_group_shares(shares: pd.DataFrame, title: str, file: str | None = None):
    """Heat map of :func:`group_shares` (attribute groups × target groups), saved as
    ``figures/<file>`` when ``file`` is given; returns the matplotlib figure."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt
    import seaborn as sns

    from ..plots import _save

    wide = shares.pivot(index="attribute_group", columns="target_group", values="share")
    fig, ax = plt.subplots(figsize=(1.4 * wide.shape[1] + 2.5, 0.6 * wide.shape[0] + 1.6))
    sns.heatmap(wide, annot=True, fmt=".2f", vmin=0, vmax=1, cmap="Blues", cbar=False, ax=ax)
    ax.set_xlabel("target group")
    ax.set_ylabel("attribute group")
    ax.set_title(title)
    fig.tight_layout()
    if file:
        _save(fig, file)
    return fig
