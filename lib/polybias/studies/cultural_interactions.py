"""Cultural interactions (notebook 07): seed 004's identity lists read from their files,
and the two-identity template over the planted vocabulary."""

from __future__ import annotations

from typing import Any

import pandas as pd

from polybias.data import sources, templating
from polybias.metrics import catbias
from polybias.metrics.measure import MeasureResult, finite_or_none
from polybias.results import report
from polybias.results.records import Record, measure_results_record
from polybias.stats import N_PERMUTATIONS_SHORT
from polybias.studies import capstone2023, categorical_bias
from polybias.studies.notebook_parameters import (
    HUB,
    OUTPUT_DIR,
    TABLE_FILE,
    Notebook,
    ParameterError,
    free,
    integer,
    model_engine,
)

SEED004_LISTS = {"Countries": "seed004-countries", "Languages": "seed004-languages", "Food": "seed004-dishes",
                 "Music": "seed004-genres", "Religion": "seed004-religions"}




#: What notebook 07's reproduction part reads: seed 004's identity lists, its adjectives and
#: ``CG_score_2.csv`` (a sweep's ``optional_sources:`` of its runs)
REPRODUCTION_SOURCES = (*SEED004_LISTS.values(), "seed004-adjectives", "seed004-cg-score-2")


def reproduction_unavailable() -> str | None:
    """Why :func:`identity_lists_table`, :func:`adjective_sample` and
    :func:`authors_interaction_test` cannot run here (a file of :data:`REPRODUCTION_SOURCES` is
    in no mirror or cache and cannot be downloaded), as one note naming the sources and how
    to provide them (:func:`polybias.data.sources.unavailable_note`), or None when they can.
    The notebook then shows the note in place of the reproduction and scores its model."""
    return sources.unavailable_note(REPRODUCTION_SOURCES, "the reproduction of seed 004's lists, samples "
                                    "and interaction test")


def identity_lists_table(seed: int = 0, reported: str = "capstone2023_sampling") -> pd.DataFrame:
    """Seed 004's identity lists (:data:`SEED004_LISTS`, read by :func:`read_identity_list`)
    beside its Table 1 (``paper/reported/<reported>.csv``): per characteristic the raw,
    empty and unique entries, Table 1's counts before and after sampling, and our draw
    of the after-sampling size (:func:`polybias.metrics.catbias.stratified_sample`, one
    stratum, ``seed``) with its first three entries."""

    table1 = report.load_reported(reported)
    rows = []
    for name, source in SEED004_LISTS.items():
        entries, n_raw, n_empty = capstone2023.read_identity_list(sources.fetch(source))
        mine = table1[table1.characteristic == name]
        pre = mine[mine.metric == "pre_sampling"].value.iloc[0]
        post = int(mine[mine.metric == "after_sampling"].value.iloc[0])
        sample = catbias.stratified_sample(entries, ["all"] * len(entries), post, seed=seed)
        rows.append({"characteristic": name, "raw": n_raw, "empty": n_empty, "unique": len(entries),
                     "table1_pre": pre, "table1_after": post, "sampled": len(sample),
                     "first_sampled": ", ".join(sample[:3])})
    return pd.DataFrame(rows)


def adjective_sample(n_adjectives: int, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Seed 004's adjectives (``seed004-adjectives``) split by VADER sentiment
    (:func:`polybias.metrics.catbias.sentiment_strata`) and ``n_adjectives`` of them drawn,
    stratified, with ``seed``.

    Returns
    -------
    (summary, picked)
        One row of counts (adjectives, with_sentiment, dropped_no_sentiment, negative,
        positive, sampled), and the drawn adjectives with their stratum and compound score.
    """

    adjectives = capstone2023.read_identity_list(sources.fetch("seed004-adjectives"))[0]
    sentiment = catbias.sentiment_weights(adjectives)
    strata = catbias.sentiment_strata({w: sentiment.compound[w] for w in sentiment.weights})
    words = list(strata)
    picked = catbias.stratified_sample(words, [strata[w] for w in words], n_adjectives, seed=seed)
    summary = pd.DataFrame([{"adjectives": len(adjectives), "with_sentiment": len(words),
                             "dropped_no_sentiment": len(sentiment.dropped),
                             "negative": sum(s == "negative" for s in strata.values()),
                             "positive": sum(s == "positive" for s in strata.values()),
                             "sampled": len(picked)}])
    picked_frame = pd.DataFrame({"adjective": picked, "stratum": [strata[w] for w in picked],
                                 "compound": [sentiment.compound[w] for w in picked]})
    return summary, picked_frame


def authors_interaction_test(n_permutations: int = N_PERMUTATIONS_SHORT, seed: int = 0) -> pd.DataFrame:
    """The authors' two-way interactions (``seed004-cg-score-2``) tested against their
    double-mask base rates, the adjectives split by sentiment
    (:func:`polybias.studies.capstone2023.row_significance`)."""

    cg2 = sources.fetch("seed004-cg-score-2")
    strata = capstone2023.adjective_strata(pd.read_csv(cg2).Adjective.unique().tolist())
    return capstone2023.row_significance(cg2, strata, n_permutations=n_permutations, seed=seed)


def sentiment_attribute_weights(book, template: str, attribute_slot: str, attributes: list[str] | None = None,
                                neutral_attributes: list[str] | None = None) -> dict[str, float]:
    """Attribute entry id → its weight |VADER compound| (:func:`polybias.metrics.catbias.sentiment_weights`,
    words without sentiment dropped), for ``attributes`` or else every entry of the
    attribute slot's list but the ``neutral_attributes``; an entry is scored by its
    default form."""

    words = book.lists[book.template(template).slots[attribute_slot].list]
    pool = attributes or [e for e in words.ids if e not in (neutral_attributes or [])]
    forms = [words.entry(a).forms[templating.DEFAULT_FORM][0] for a in pool]
    surface = dict(zip(forms, pool, strict=True))
    weights = catbias.sentiment_weights(forms).weights
    return {surface[w]: v for w, v in weights.items()}


def interaction_scores(lm, book, template: str, identity_slots: list[str], attribute_slot: str,
                       attributes: list[str] | None = None, neutral_attributes: list[str] | None = None,
                       weighted: bool = False, cell_feature: str = "", n_permutations: int = N_PERMUTATIONS_SHORT,
                       seed: int = 0) -> pd.DataFrame:
    """Interaction CB of ``lm`` for each identity slot alone and, with more than one, for
    all of them together, against the double-mask base rate and (with
    ``neutral_attributes``) the neutral one (:func:`polybias.studies.categorical_bias.interaction_cb`),
    each with its permutation test against the base rate over the cells of
    ``cell_feature`` (:func:`polybias.studies.capstone2023.interaction_significance`). With
    ``weighted``, attributes are weighted by :func:`sentiment_attribute_weights`.

    Returns one row per (characteristics, base): weighted, n_groups, n_attributes, score,
    T, T_null_mean, p, significant (p < 0.05)."""

    weights = None
    attrs = attributes or None
    if weighted:
        weights = sentiment_attribute_weights(book, template, attribute_slot, attributes, neutral_attributes)
        attrs = list(weights)
    combos = [[s] for s in identity_slots] + ([list(identity_slots)] if len(identity_slots) > 1 else [])
    bases = ["double-mask"] + (["neutral"] if neutral_attributes else [])
    cells = capstone2023.attribute_cells(book, template, attribute_slot, cell_feature)
    rows = []
    for slots in combos:
        for base in bases:
            r = categorical_bias.interaction_cb(lm, book, template, slots, attribute_slot, attributes=attrs, base=base,
                                       neutral_attributes=neutral_attributes or None, weights=weights)
            test = capstone2023.interaction_significance(r, cells, n_permutations=n_permutations, seed=seed)
            rows.append({"characteristics": " × ".join(slots), "base": base, "weighted": weighted,
                         "n_groups": int(r.rows.n_groups.iloc[0]), "n_attributes": len(r.rows),
                         "score": r.score, "T": test.statistic, "T_null_mean": test.null_mean,
                         "p": test.pvalue, "significant": test.pvalue < 0.05})
    return pd.DataFrame(rows)


#: The columns of :func:`interaction_scores` a record holds as the measure's own numbers;
#: the others go to each result's ``extra``.
_SCORE_COLUMNS = ("characteristics", "base", "score", "p", "n_attributes")


def interaction_record(scores: pd.DataFrame, *, model: str, language: str, test: str,
                       parameters: dict[str, Any], **fields: Any) -> Record:
    """The run record (metric ``interaction-cb``) of notebook 07's rows of
    :func:`interaction_scores`: each row's score as the registered ``interaction-cb``
    (``sentiment-cb`` when ``weighted``), subset ``<characteristics>; <base>``, with its
    permutation p against the base rate and n its attributes; the first row is the
    record's value, the others its groups. One
    :func:`~polybias.results.records.measure_results_record`.

    >>> rows = pd.DataFrame([{"characteristics": "pro", "base": "double-mask", "weighted": False,
    ...                       "n_groups": 2, "n_attributes": 4, "score": 0.1, "T": 1.0,
    ...                       "T_null_mean": 0.5, "p": 0.02, "significant": True}])
    >>> rec = interaction_record(rows, model="m", language="en", test="T", parameters={}, packages={})
    >>> rec.values["subset"], rec.values["p_value"], rec.values["extra"]["n_groups"]
    ('pro; double-mask', 0.02, 2)
    """
    entries = []
    for row in scores.to_dict("records"):
        p = finite_or_none(row["p"])
        measure = "sentiment-cb" if row["weighted"] else "interaction-cb"
        result = MeasureResult(measure, float(row["score"]), None, p,
                               "permutation-monte-carlo" if p is not None else "none",
                               int(row["n_attributes"]),
                               extra={k: v for k, v in row.items() if k not in _SCORE_COLUMNS})
        entries.append((f"{row['characteristics']}; {row['base']}", result, {}))
    return measure_results_record(entries, model=model, language=language, test=test,
                                  metric="interaction-cb", parameters=parameters, **fields)


# ------------------------------------------------------------------ the notebook's parameters

def _check_07_cultural_interactions(*, identity_slots):
    if not identity_slots:
        raise ParameterError("identity_slots must name at least one slot")


#: The parameters of notebook 07_cultural_interactions: their help, allowed values and checks.
NOTEBOOK_PARAMETERS: Notebook = Notebook({
    "model": free("registered masked LM (configs/models.yaml or POLYBIAS_MODELS_FILE), "
                  + HUB),
    **model_engine(),
    "templates": free("template file in data/templates, or planted_interactions_en"),
    "template": free("the template to score"),
    "identity_slots": free("slots whose combinations form the groups (at least one)"),
    "attribute_slot": free("the attribute slot"),
    "attributes": free("attribute entry ids; empty: the whole list (minus neutral ones)"),
    "neutral_attributes": free("attribute entries used as neutral base rates; empty: double "
                               "mask only"),
    "weighted": free("weight attributes by |VADER compound| (needs words with sentiment)"),
    "n_adjectives": integer("seed-004 adjectives sampled, stratified by sentiment "
                            "(reproduction; {range})", low=1),
    "seed": integer("seed of the samples ({range})"),
    "cell_feature": free("attribute feature whose values split the attributes into cells for "
                         "the significance test (e.g. sentiment); empty: one cell"),
    "n_permutations": integer("draws of the significance test of each interaction against "
                              "its base rate ({range})", low=1, default="polybias.stats.N_PERMUTATIONS_SHORT"),
    "reproduce": free("seed-004 identity lists and sample sizes from shipped data"),
    "output_dir": OUTPUT_DIR,
    "table_file": free(TABLE_FILE.format("interactions_planted-mlm")),
}, _check_07_cultural_interactions)
