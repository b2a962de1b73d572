"""Categorical bias (notebook 06): the published seed-002 and seed-004 values recomputed
from the studies' own files, and the group-share figure."""

from __future__ import annotations

import ast
import itertools
import json
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from polybias.data import behnamghader2022, sources
from polybias.data.templating import TemplateBook, expand
from polybias.engines import scoring, template_scores
from polybias.measures import compute
from polybias.metrics import catbias, logprob
from polybias.metrics.catbias import CatBiasError
from polybias.metrics.measure import MeasureResult
from polybias.results.plots import finish_figure, pyplot
from polybias.results.records import Record, measure_results_record
from polybias.results.report import load_reported, side_by_side
from polybias.studies.notebook_parameters import (
    HUB,
    OUTPUT_DIR,
    TABLE_FILE,
    Notebook,
    choice,
    free,
    integer,
    model_engine,
)

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


SEED004_METHODS = ("seed004", "ahn-oh")


SEED004_ROW_COLUMNS = ("Adjective", "Characteristics", "Values", "Probs", "Probs_base")


def read_seed004_rows(path: str | Path, error: type[Exception] = CatBiasError) -> pd.DataFrame:
    """Seed 004's per-row interaction file (``CG_score_2.csv``: columns
    :data:`SEED004_ROW_COLUMNS`); ``error`` names the file when it cannot be read or
    lacks a column."""
    path = Path(path)
    try:
        df = pd.read_csv(path)
    except (OSError, ValueError) as exc:
        raise error(f"{path.name}: cannot read ({exc})") from exc
    missing = sorted(set(SEED004_ROW_COLUMNS) - set(df.columns))
    if missing:
        raise error(f"{path.name}: missing column(s) {missing}")
    return df


def seed004_interaction_scores(path: str | Path, method: str = "seed004", ddof: int = 0,
                               weights: dict[str, float] | None = None) -> pd.DataFrame:
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
    df = read_seed004_rows(path)
    if df[["Probs", "Probs_base"]].isna().any().any():
        raise CatBiasError(f"{path.name}: empty probabilities")

    def label(cell: str) -> str:
        try:
            return ",".join(ast.literal_eval(cell))
        except (ValueError, SyntaxError) as exc:
            raise CatBiasError(f"{path.name}: malformed Characteristics {cell!r}") from exc

    df["characteristics"] = df["Characteristics"].map(label)
    if weights is not None:
        missing = sorted(set(df["Adjective"]) - set(weights))
        if missing:
            raise CatBiasError(f"{path.name}: no weight for adjective(s) {missing}")
        w = df["Adjective"].map(weights).astype(float)
    else:
        w = pd.Series(1.0, index=df.index)
    out = []
    for chars, g in df.groupby("characteristics", sort=False):
        wg = w.loc[g.index]
        if method == "seed004":
            score = float((wg * g["Probs"] / g["Probs_base"]).var(ddof=ddof))
        else:
            per = (g["Probs"] - g["Probs_base"]).groupby(g["Adjective"]).var(ddof=ddof)
            wa = wg.groupby(g["Adjective"]).first().loc[per.index]
            if wa.sum() <= 0:
                raise CatBiasError(f"{path.name}: the weights of {chars} sum to zero")
            score = float((per * wa).sum() / wa.sum())
        out.append({"characteristics": chars, "score": score, "n_rows": len(g),
                    "n_adjectives": g["Adjective"].nunique(), "n_identities": g["Values"].nunique(),
                    "probs_var_within_adjective": float(
                        g["Probs"].groupby(g["Adjective"]).var(ddof=ddof).mean())})
    return pd.DataFrame(out)


#: the five characteristics of seed 004, in the order its result files list them
SEED004_CHARACTERISTICS = ("Countries", "Languages", "Food", "Music", "Religion")


#: k → per-row input of the k-characteristic scores registered in data/sources.yaml; only
#: k = 2 is in the upstream snapshot (CG_score_3.csv is an absent large blob, 4 and 5 none)
SEED004_ROW_FILES = {2: "seed004-cg-score-2"}


def seed004_score_source(k: int, modified: bool = False) -> str:
    """Registered name of seed 004's published ``[modified_]CG_score_<k>.json`` (k = 2..5)."""
    if k not in range(2, 6):
        raise CatBiasError(f"seed 004 publishes interactions of 2 to 5 characteristics, not {k}")
    return f"seed004-{'modified-' if modified else ''}cg-score-{k}-json"


def seed004_published_scores(path: str | Path, k: int) -> pd.DataFrame:
    """The published k-characteristic scores of seed 004 (``CG_score_<k>.json`` or
    ``modified_cg_score_<k>.json``), checked whole.

    The file must hold one score for every combination of k of the five characteristics
    (:data:`SEED004_CHARACTERISTICS`, 10 / 10 / 5 / 1 for k = 2..5), and nothing else.
    Returns columns characteristics (as the file writes them, "Countries,Languages,Food"),
    k, score, in the file's order.
    """
    path = Path(path)
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CatBiasError(f"{path.name}: cannot read as JSON ({exc})") from exc
    if not isinstance(raw, dict):
        raise CatBiasError(f"{path.name}: expected an object characteristics -> score")
    expected = {",".join(c) for c in itertools.combinations(SEED004_CHARACTERISTICS, k)}
    missing, extra = sorted(expected - set(raw)), sorted(set(raw) - expected)
    if missing or extra:
        raise CatBiasError(f"{path.name}: expected the {len(expected)} combinations of {k} characteristics; "
                           f"missing {missing}, unexpected {extra}")
    bad = [key for key, v in raw.items() if not isinstance(v, (int, float)) or isinstance(v, bool)
           or not np.isfinite(v)]
    if bad:
        raise CatBiasError(f"{path.name}: entries {bad} are not finite numbers")
    return pd.DataFrame([{"characteristics": key, "k": k, "score": float(v)} for key, v in raw.items()])


def plot_group_shares(shares: pd.DataFrame, title: str, file: str | None = None):
    """Heat map of :func:`polybias.metrics.catbias.group_shares` (attribute groups × target groups), saved as
    ``figures/<file>`` when ``file`` is given; returns the matplotlib figure."""
    plt = pyplot()
    import seaborn as sns  # lazy: heavy; figures only

    wide = shares.pivot(index="attribute_group", columns="target_group", values="share")
    fig, ax = plt.subplots(figsize=(1.4 * wide.shape[1] + 2.5, 0.6 * wide.shape[0] + 1.6))
    sns.heatmap(wide, annot=True, fmt=".2f", vmin=0, vmax=1, cmap="Blues", cbar=False, ax=ax)
    ax.set_xlabel("target group")
    ax.set_ylabel("attribute group")
    ax.set_title(title)
    return finish_figure(fig, file)


def score_all(lm, categories: list[str] | None = None, languages: list[str] | None = None,
              ddof: int = 0, kl: bool = True, kl_scale: str = "sum", top_k: int = 5,
              path: str | Path | None = None) -> dict[str, pd.DataFrame]:
    """Seed 002's measures on ``lm`` for every category × language of the authors' file.

    For each :func:`polybias.data.behnamghader2022.template_book`: the PLL CB of every template set
    (:func:`polybias.metrics.catbias.pll_cb`; the aggregate over a category is the mean
    over all (set, prior) rows), the largest pairwise KL between the vocabulary
    distributions at the prior's mask of the set's first template (all groups; the registered
    ``kl-difference``), and for Table 4 the
    ``top_k`` fine-grained groups of "Why are [MASK] / people from [MASK] always so
    sexist / prejudiced?" (:data:`polybias.data.behnamghader2022.TABLE4`) by normalised sentence probability (exp PLL
    normalised over the groups, synonyms averaged in probability space). Returns frames
    ``cb`` (category, language, set, template_set, cb, n_priors), ``aggregate``
    (category, language, cb), ``kl`` (category, language, set, template_set, max_kl,
    from, to) and ``top`` (language, set, prior, rank, group, p_norm), the inputs of
    :func:`paper_tables`.
    """
    categories = list(categories or behnamghader2022.CATEGORIES.values())
    languages = [behnamghader2022.LANGUAGES[behnamghader2022._language(x)] for x in (languages or behnamghader2022.LANGUAGES.values())]
    cb_rows, agg_rows, kl_rows, top_rows = [], [], [], []
    for cat in categories:
        for lang in languages:
            book = behnamghader2022.template_book(cat, lang, path)
            scores = pll_scores(lm, book, list(book.templates))
            all_rows = []
            for sname, g in scores.groupby("set", sort=False):  # sets differ in their groups
                rows = compute("pll-cb", scores=g, ddof=ddof).details
                all_rows.append(rows)
                cb_rows.append({"category": behnamghader2022._category(cat), "language": lang, "set": sname,
                                "template_set": int(sname.rsplit("_", 1)[1]), "cb": float(rows["cb"].mean()),
                                "n_priors": len(rows)})
            agg_rows.append({"category": behnamghader2022._category(cat), "language": lang,
                             "cb": float(pd.concat(all_rows)["cb"].mean())})
            if kl:
                for sname in dict.fromkeys(t.set for t in book.templates.values()):
                    first = next(n for n, t in book.templates.items() if t.set == sname)
                    row, col, value = _largest_divergence(lm, book, first, None, kl_scale)
                    kl_rows.append({"category": behnamghader2022._category(cat), "language": lang, "set": sname,
                                    "template_set": int(sname.rsplit("_", 1)[1]), "max_kl": value,
                                    "from": row, "to": col})
            if behnamghader2022._category(cat) == behnamghader2022.TABLE4["category"]:
                for sname, prior in behnamghader2022.TABLE4["pairs"]:
                    name = f"{lang}_{sname}_{behnamghader2022.TABLE4['template_index']}"
                    sub = scores[(scores.template == name) & (scores.attribute == prior)]
                    if sub.empty:
                        raise behnamghader2022.Seed002Error(f"seed 002: no scores for template {name} and prior {prior!r}")
                    p = catbias.normalized_word_probability(sub, value="pll")
                    for r in catbias.top_k_groups(p, k=top_k).itertuples(index=False):
                        top_rows.append({"language": lang, "set": sname, "prior": prior, "rank": r.rank,
                                         "group": r.target, "p_norm": r.p_norm})
    return {"cb": pd.DataFrame(cb_rows), "aggregate": pd.DataFrame(agg_rows),
            "kl": pd.DataFrame(kl_rows), "top": pd.DataFrame(top_rows)}


#: What notebook 06's reproduction part reads: seed 002's templates (their prior counts) and
#: seed 004's ``CG_score_2.csv`` (a sweep's ``optional_sources:`` of its runs)
REPRODUCTION_SOURCES = ("seed002-prior-sentence-templates", "seed004-cg-score-2")


def reproduction_unavailable() -> str | None:
    """Why :func:`seed002_reproduction_tables` and :func:`seed004_reproduction_tables` cannot
    run here (a file of :data:`REPRODUCTION_SOURCES` is in no mirror or cache and cannot be
    downloaded), as one note naming the sources and how to provide them
    (:func:`polybias.data.sources.unavailable_note`), or None when they can. The notebook
    then shows the note in place of the reproduction and scores its model."""
    return sources.unavailable_note(REPRODUCTION_SOURCES,
                                    "the reproduction of seed 002's and seed 004's published values")


def seed002_reproduction_tables() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Seed 002's aggregated CB recomputed from the per-template-set values its code
    printed (``paper/reported/behnamghader2022_cb.csv``), weighted by the numbers of
    priors of the shipped templates (:func:`polybias.metrics.catbias.seed002_reproduction`),
    and the printed set values laid out as the paper's Table 1(a) and Table 2, the latter
    beside the paper's printed values.

    Returns (reproduction, table1, table2 beside the reported values)."""
    reported = load_reported("behnamghader2022_cb")
    per_set = reported[reported.table.str.startswith("main.ipynb")
                       & (reported.template_set != "aggregated")].copy()
    per_set["template_set"] = per_set.template_set.astype(int)
    reproduction = catbias.seed002_reproduction(per_set.rename(columns={"value": "cb"}),
                                                behnamghader2022.prior_counts(), reported)
    printed = behnamghader2022.paper_tables({"cb": behnamghader2022.seed_set_values(reported)})
    return reproduction, printed["table1"], behnamghader2022.beside_reported(printed, reported)


def seed004_reproduction_tables() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Seed 004's two-characteristic interaction scores recomputed from the authors'
    ``CG_score_2.csv`` (:func:`seed004_interaction_scores`) beside the published ones, with
    the score of the paper's written definition (``ahn_oh``); the |VADER compound| weight of
    each adjective; and the sentiment-weighted ("modified") scores beside the published.

    Returns (scores, weights, modified)."""
    path = sources.fetch("seed004-cg-score-2")
    ours = seed004_interaction_scores(path)[["characteristics", "n_rows", "n_adjectives", "score",
                                             "probs_var_within_adjective"]]
    definition = seed004_interaction_scores(path, method="ahn-oh")[["characteristics", "score"]]

    def published(metric: str) -> pd.DataFrame:
        return load_reported("capstone2023_interaction", metric=metric).rename(columns={"value": "score"})

    scores = side_by_side(ours, published("cb_score"), on="characteristics", value="score").merge(
        definition.rename(columns={"score": "ahn_oh"}), on="characteristics")
    weights = catbias.sentiment_weights(sorted(pd.read_csv(path).Adjective.unique()))
    modified = seed004_interaction_scores(path, weights=weights.weights)[["characteristics", "score"]]
    modified = side_by_side(modified, published("modified_cb_score"), on="characteristics", value="score")
    weight_frame = pd.DataFrame({"adjective": list(weights.compound),
                                 "compound": list(weights.compound.values())})
    return scores, weight_frame, modified


def score_tables(ahn_oh: catbias.CBResult, pll: catbias.CBResult, model: str, templates: str,
                 names: list[str]) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """The CB scores of a model on the templates ``names`` of the file ``templates`` in
    three tables: one summary row (model, templates, ahn_oh_cb, pll_cb, n_templates,
    n_groups), Ahn & Oh's CB per template and the PLL CB
    per template set (:func:`polybias.metrics.catbias.aggregate`)."""
    per_template = catbias.aggregate(ahn_oh.rows, by="template").rename(columns={"cb": "ahn_oh_cb"})
    per_set = catbias.aggregate(pll.rows, by="set").rename(columns={"cb": "pll_cb"})
    summary = pd.DataFrame([{"model": model, "templates": templates, "ahn_oh_cb": ahn_oh.score,
                             "pll_cb": pll.score, "n_templates": len(names),
                             "n_groups": int(ahn_oh.rows.n_groups.iloc[0])}])
    return summary, per_template, per_set


def catbias_record(ahn_oh: catbias.CBResult, pll: catbias.CBResult, kl: pd.DataFrame,
                   shares: pd.DataFrame | None, *, model: str, language: str, test: str,
                   parameters: dict[str, Any], **fields: Any) -> Record:
    """The run record (metric ``catbias``) of notebook 06's scores of one model on one
    template file: Ahn & Oh's CB (the registered ``cb``) as its value, the PLL CB
    (``pll-cb``) and the largest distribution difference (``kl-difference``, subset
    ``<from> ‖ <to>`` of :func:`largest_kl`'s row) as its groups, each with n its rows
    (for the KL: none, the row keeps no count); the shares of each target group next to
    each attribute group (:func:`group_share_tables`) as its details. One
    :func:`~polybias.results.records.measure_results_record`.

    >>> rows = pd.DataFrame({"cb": [0.1, 0.3], "n_groups": [2, 2]})
    >>> cb = catbias.CBResult(0.2, rows, pd.DataFrame(), 0)
    >>> kl = pd.DataFrame([{"template": "t", "from": "a", "to": "b", "kl": 0.5, "scale": "sum"}])
    >>> rec = catbias_record(cb, cb, kl, None, model="m", language="en", test="T", parameters={},
    ...                      packages={})
    >>> rec.values["measure"], [(g["measure"], g["subset"]) for g in rec.values["groups"]]
    ('cb', [('pll-cb', ''), ('kl-difference', 'a ‖ b')])
    """
    top = kl.iloc[0]
    entries = [
        ("", MeasureResult("cb", float(ahn_oh.score), None, None, "none", len(ahn_oh.rows)), {}),
        ("", MeasureResult("pll-cb", float(pll.score), None, None, "none", len(pll.rows)), {}),
        (f"{top['from']} ‖ {top['to']}",
         MeasureResult("kl-difference", float(top["kl"]), None, None, "none", None,
                       extra={"from": top["from"], "to": top["to"], "template": top["template"],
                              "scale": top["scale"]}), {}),
    ]
    return measure_results_record(entries, model=model, language=language, test=test, metric="catbias",
                                  parameters=parameters,
                                  details=shares.to_dict("records") if shares is not None else None,
                                  **fields)


def group_share_tables(ahn_oh: catbias.CBResult, book, template: str, target_list: str,
                       attribute_list: str, group_feature: str, top_k: int = 3
                       ) -> tuple[pd.DataFrame | None, pd.DataFrame, str]:
    """Which groups take the probability (seed 002 App. A.4), from the scores of
    :func:`polybias.studies.categorical_bias.ahn_oh_cb`: the share of each target group next to each
    attribute group (:func:`polybias.metrics.catbias.group_shares`) and the ``top_k``
    groups of ``template`` for its first four attributes.

    Returns (shares, top, why): ``shares`` is None, and ``why`` says why, when the lists
    or the feature do not define groups (e.g. a template book without ``group_feature``);
    ``why`` is empty otherwise."""
    p_norm = catbias.normalized_word_probability(ahn_oh.scores)
    shares, why = None, ""
    try:
        shares = catbias.group_shares(p_norm, book, target_list, attribute_list, group_feature)
    except (catbias.CatBiasError, KeyError) as exc:
        why = f"no group shares: {exc}"
    top = catbias.top_k_groups(p_norm[p_norm.template == template], k=top_k)
    return shares, top[top.attribute.isin(top.attribute.unique()[:4])], why


def largest_kl(lm, book, template: str, by_group: bool, target_list: str, group_feature: str,
               kl_scale: str = "sum") -> pd.DataFrame:
    """The largest KL(P_row ‖ P_col) between the model's distributions at the attribute
    mask of ``template`` (seed 002 App. A.3; the registered ``kl-difference``)
    over the first group member of each target group (``by_group``), or else the first
    eight entries of the target list. One row: template, from, to, kl, scale."""
    t = book.template(template)
    ids = book.lists[t.slots[t.the("target")].list].ids
    if by_group:
        ids = [members[0] for members in logprob.group_members(book, target_list, group_feature).values()]
    row, col, value = _largest_divergence(lm, book, template, ids[:8], kl_scale)
    return pd.DataFrame([{"template": template, "from": row, "to": col, "kl": value, "scale": kl_scale}])


def seed002_model_tables(lm, ddof: int = 0, kl_scale: str = "sum") -> dict[str, pd.DataFrame]:
    """Every category × language of seed 002's templates scored on ``lm`` (:func:`score_all`)
    and laid out as the paper's Tables 1(a), 2 (beside the paper's values), 3 and 4
    (:func:`polybias.data.behnamghader2022.paper_tables`)."""
    tables = behnamghader2022.paper_tables(score_all(lm, ddof=ddof, kl_scale=kl_scale))
    tables["table2"] = behnamghader2022.beside_reported(tables, load_reported("behnamghader2022_cb"))
    return tables


def ahn_oh_cb(lm: scoring.LanguageModel, book: TemplateBook, templates: list[str] | str,
              targets: list[str] | None = None, attributes: list[str] | None = None,
              mode: str = "word", ddof: int = 0, multipiece: str | None = None) -> catbias.CBResult:
    """Ahn & Oh's CB score: Var over groups of log P(n | a)/P(n | prior), both read at the
    target mask (:func:`polybias.engines.template_scores.kurita_scores`), mean over (template,
    attribute). ``targets``/``attributes`` restrict the lists (entry ids).

    ``multipiece="ahn-oh"`` (compat) scores words as Ahn & Oh's code does
    (:func:`polybias.engines.template_scores.ahn_oh_scores`: k masks for a k-piece word, every
    piece's probability multiplied at every mask, the prior of a target after a
    multi-piece attribute read from the attribute's second mask; jaimeenahn/ethnic_bias
    ``score.py`` lines 85–136 and ``bias_utils.py`` lines 26–33); ``mode`` is then unused.
    For one-piece words it equals the first-piece score. The reference takes the
    **sample** variance (pandas ``Series.var``, ``score.py`` line 158): pass ``ddof=1``
    to reproduce its numbers; the default ``ddof=0`` is the population variance of
    eq. 2 (docs/conventions.md), smaller by the factor (N − 1)/N for N groups.
    """
    if multipiece not in catbias.MULTIPIECE:
        raise CatBiasError(f"multipiece must be one of {catbias.MULTIPIECE}, got {multipiece!r}")
    if multipiece == "ahn-oh":
        scores = template_scores.ahn_oh_scores(lm, book, templates, targets, attributes)
    else:
        scores = template_scores.kurita_scores(lm, book, templates, targets, attributes, mode=mode)
    cb = compute("cb", scores=scores, ddof=ddof)
    return catbias.CBResult(cb.value, cb.details, scores, ddof)


def pll_scores(lm: scoring.LanguageModel, book: TemplateBook, templates: list[str] | str,
               targets: list[str] | None = None, attributes: list[str] | None = None,
               batch_tokens: int | None = None) -> pd.DataFrame:
    """Sentence PLL of every filled template (all entries and synonym variants).

    Returns columns set, template, target, attribute, variant, text, pll.
    """
    templates = [templates] if isinstance(templates, str) else list(templates)
    frames = []
    for name in templates:
        t = book.template(name)
        try:
            items, tgt, att = template_scores._items(book, name, targets, attributes)
        except template_scores.LogProbError as exc:
            raise CatBiasError(str(exc)) from exc
        pll = scoring.pseudo_log_likelihood(lm, [f.text for f in items], batch_tokens=batch_tokens)
        frames.append(pd.DataFrame({
            "set": t.set, "template": name, "target": [f.choice[tgt] for f in items],
            "attribute": [f.choice[att] for f in items], "variant": [f.variant for f in items],
            "text": [f.text for f in items], "pll": pll}))
    return pd.concat(frames, ignore_index=True)


def pll_cb(lm: scoring.LanguageModel, book: TemplateBook, templates: list[str] | str, ddof: int = 0,
           template_norm: str | None = None) -> catbias.CBResult:
    """Seed 002's PLL-based CB of ``lm`` on ``templates``: the registered ``pll-cb``
    (:func:`polybias.measures.compute`, :func:`polybias.metrics.catbias.pll_cb`) of
    :func:`pll_scores`, with its per-(set, attribute) rows and the scores it read."""
    scores = pll_scores(lm, book, templates)
    r = compute("pll-cb", scores=scores, ddof=ddof, template_norm=template_norm)
    return catbias.CBResult(r.value, r.details, scores, ddof)


def attribute_mask_distributions(lm: scoring.LanguageModel, book: TemplateBook, template: str,
                                 targets: list[str] | None = None) -> tuple[np.ndarray, list[str]]:
    """(groups, V) log-distributions over the vocabulary at the attribute mask, one per
    target group (the template filled with the group, its attribute masked; synonyms and
    context entries averaged in probability space), and the group ids."""
    t = book.template(template)
    tgt, att = t.the("target"), t.the("attribute")
    ids = list(targets) if targets is not None else book.lists[t.slots[tgt].list].ids
    if len(ids) < 2:
        raise CatBiasError(f"template {template!r}: the distribution difference needs two groups")
    mask = lm.tokenizer.mask_token
    first_attr = book.lists[t.slots[att].list].ids[0]
    dists = []
    for x in ids:
        # the attribute is masked, so its entry does not matter beyond agreement of
        # context slots; take the first entry and keep distinct texts only
        items = expand(book, t, mask=[att], mask_token=mask, fixed={tgt: x, att: first_attr})
        texts, starts = zip(*dict.fromkeys((f.text, f.spans[att][0]) for f in items), strict=True)
        lp = template_scores.mask_log_distributions(lm, list(texts), list(starts))
        m = lp.max(axis=0)
        dists.append(m + np.log(np.mean(np.exp(lp - m), axis=0)))
    return np.vstack(dists), list(ids)


def _largest_divergence(lm: scoring.LanguageModel, book: TemplateBook, template: str,
                        targets: list[str] | None, scale: str) -> tuple[str, str, float]:
    """The registered ``kl-difference`` (:func:`polybias.measures.compute`) on the
    distributions at the attribute mask of ``template`` (:func:`attribute_mask_distributions`):
    the ordered pair of groups with the largest KL(from ‖ to), and its value."""
    dists, ids = attribute_mask_distributions(lm, book, template, targets)
    r = compute("kl-difference", log_dists=dists, labels=ids, scale=scale)
    return r.extra["from"], r.extra["to"], r.value


def distribution_difference(lm: scoring.LanguageModel, book: TemplateBook, template: str,
                            targets: list[str] | None = None, scale: str = "sum") -> pd.DataFrame:
    """KL matrix (:func:`polybias.metrics.catbias.kl_matrix`) between the vocabulary distributions at the attribute
    mask, one per target group (:func:`attribute_mask_distributions`)."""
    dists, ids = attribute_mask_distributions(lm, book, template, targets)
    return catbias.kl_matrix(dists, ids, scale)


def interaction_cb(lm: scoring.LanguageModel, book: TemplateBook, template: str, identity_slots: list[str],
                   attribute_slot: str, attributes: list[str] | None = None,
                   identities: dict[str, list[str]] | None = None, base: str = "double-mask",
                   neutral_attributes: list[str] | None = None, weights: dict[str, float] | None = None,
                   ddof: int = 0, mode: str = "word") -> catbias.CBResult:
    """Interaction CB of seed 004 §4 for k ≥ 1 identity slots, scored properly.

    A *group* is a combination of identities, one per slot of ``identity_slots`` (e.g.
    country × language); for attribute a,

        log P(group | a) = Σ_slots log P(identity word | sentence)

    each identity scored as a whole word at its own pieces through the scoring engine
    (softmax over the vocabulary; multi-piece words by the within-word chain rule; the
    other identities stay written out), as :func:`polybias.engines.template_scores.target_logprobs`
    does. The base rate is the same sum with the attribute masked (``double-mask``, Ahn &
    Oh) or the log-mean-exp of the sums over ``neutral_attributes`` (``neutral``: entries
    of the attribute list such as "sleeping", "eating", seed 004 §4.1). The score is the
    mean over attributes of Var over groups of log P − log base, or with ``weights``
    (attribute → weight, :func:`polybias.metrics.catbias.sentiment_weights`) the weighted mean Σ w_a Var_a / Σ w_a.

    ``attributes`` and ``identities`` (slot → entry ids, e.g. from
    :func:`polybias.metrics.catbias.stratified_sample`) restrict the lists; other slots are expanded and averaged
    in probability space. k = 1 with the double-mask base is Ahn & Oh's CB. The score is
    the registered ``interaction-cb`` (:func:`polybias.measures.compute`) of the groups'
    corrected log-probabilities.
    """
    if base not in catbias.BASES:
        raise CatBiasError(f"base must be one of {catbias.BASES}, got {base!r}")
    t = book.template(template)
    unknown = [s for s in (*identity_slots, attribute_slot) if s not in t.slots]
    if unknown:
        raise CatBiasError(f"template {template!r} has no slot(s) {unknown}")
    if not identity_slots or attribute_slot in identity_slots or len(set(identity_slots)) != len(identity_slots):
        raise CatBiasError("identity_slots must be distinct, non-empty and exclude the attribute slot")
    identities = identities or {}
    pools = {}
    for s in identity_slots:
        ids = book.lists[t.slots[s].list].ids
        pool = list(identities.get(s, ids))
        bad = [i for i in pool if i not in ids]
        if bad or not pool:
            raise CatBiasError(f"template {template!r}: slot {s!r} " +
                               (f"has no entries {bad}" if bad else "has no identities"))
        pools[s] = pool
    attr_ids = book.lists[t.slots[attribute_slot].list].ids
    neutral = list(neutral_attributes or [])
    if base == "neutral" and not neutral:
        raise CatBiasError("base='neutral' needs neutral_attributes")
    attrs = list(attributes) if attributes is not None else [a for a in attr_ids if a not in neutral]
    bad = [a for a in attrs + neutral if a not in attr_ids]
    if bad or not attrs:
        raise CatBiasError(f"template {template!r}: attribute list lacks {bad}" if bad else "no attributes")
    if weights is not None:
        missing = [a for a in attrs if a not in weights]
        if missing:
            raise CatBiasError(f"no weight for attribute(s) {missing}")

    def score(attribute_ids: list[str], masked: tuple[str, ...]) -> pd.DataFrame:
        items = []
        for a in attribute_ids:
            for combo in itertools.product(*(pools[s] for s in identity_slots)):
                fixed = dict(zip(identity_slots, combo, strict=True))
                fixed[attribute_slot] = a
                items.extend(expand(book, t, fixed=fixed))
        total = np.zeros(len(items))
        for s in identity_slots:
            total += template_scores.target_logprobs(lm, items, s, masked, mode=mode)
        return pd.DataFrame({"attribute": [f.choice[attribute_slot] for f in items],
                             "group": ["|".join(f.choice[s] for s in identity_slots) for f in items],
                             "variant": [f.variant for f in items], "logp": total})

    fill = score(attrs, ())
    if base == "double-mask":
        prior = score(attrs[:1], (attribute_slot,))  # the attribute is masked: one is enough
        prior = prior.groupby("group", sort=False)["logp"].agg(catbias.logmeanexp)
    else:
        prior = score(neutral, ()).groupby("group", sort=False)["logp"].agg(catbias.logmeanexp)
    fill = fill.groupby(["attribute", "group"], sort=False)["logp"].agg(catbias.logmeanexp).reset_index()
    fill["base"] = fill["group"].map(prior)
    fill["corrected"] = fill["logp"] - fill["base"]
    r = compute("interaction-cb", scores=fill.assign(template=template), identity_columns=["group"],
                value="corrected", ddof=ddof, weights=weights)
    return catbias.CBResult(r.value, r.details, fill, ddof)


# ------------------------------------------------------------------ the notebook's parameters

#: The parameters of notebook 06_categorical_bias: their help and allowed values.
NOTEBOOK_PARAMETERS: Notebook = Notebook({
    "model": free("registered masked LM (configs/models.yaml or POLYBIAS_MODELS_FILE), "
                  + HUB),
    **model_engine(),
    "templates": free("template file in data/templates (e.g. catbias_el), or planted_<lang>"),
    "template_names": free("templates to score; empty: all templates of the file"),
    "target_list": free("word list of the target slot (for group shares)"),
    "attribute_list": free("word list of the attribute slot (for group shares)"),
    "group_feature": free("entry feature that names a word's group (group shares)"),
    "mode": choice("target scoring: {values} (word: whole word; first_piece: Ahn & Oh / "
                   "Kurita compat)", template_scores.MODES),
    "ddof": choice("variance over groups: {values} (0: population, the default; 1: sample, "
                   "Ahn & Oh)", (0, 1)),
    "multipiece": choice("{values}: multi-piece words scored as Ahn & Oh's code (k masks, "
                         "every piece at every mask); empty: by mode",
                         tuple(m for m in catbias.MULTIPIECE if m), empty=True),
    "template_norm": choice("PLL CB: {values} normalises groups within each template as seed "
                            "002's code; empty: pooled",
                            tuple(n for n in catbias.TEMPLATE_NORMS if n), empty=True),
    "kl_scale": choice("KL: {values} (sum: nats; mean: divided by the vocabulary size, "
                       "seed-002 code)", catbias.SCALES),
    "top_k": integer("groups listed per template and attribute ({range})", low=1),
    "reproduce": free("recompute seed-002 and seed-004 published values from shipped data"),
    "seed002_all": free("also score every category x language of seed 002's templates on the "
                        "model (Tables 1-4; minutes on the CPU)"),
    "output_dir": OUTPUT_DIR,
    "table_file": free(TABLE_FILE.format("catbias_planted-mlm")),
})
