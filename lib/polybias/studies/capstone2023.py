"""The cultural-interaction study's own data and tests (Capstone_BERT, seed 004).

Significance of an interaction against its double-mask base rate
-----------------------------------------------------------------
Seed 004 (§4.3) tests its CB scores "with the null hypothesis that the model is unbiased",
an unbiased model being one whose groups keep their base rates: for every attribute a,
the base-corrected log-probability

    d[a, n] = log P(n | a) − log P(n | double mask)

is the same for every group n (up to a shift common to all groups). The published
scores come without that test. :func:`polybias.stats.group_permutation_test` makes it a permutation
test, with replicates (attributes of one sentiment stratum, templates, items) giving the
noise the CB score alone cannot separate from bias:

* **statistic**: T = (1/|C|) Σ_c Var_n( (1/|R_c|) Σ_{r∈R_c} d[c, r, n] ), the CB score
  of the replicate-averaged corrected scores (population variance over groups, mean over
  cells c; a cell is e.g. a sentiment stratum of the attributes, its replicates r the
  attributes in it);
* **null** H0: within every (cell, replicate) the group labels are exchangeable, i.e.
  which group received which corrected score is arbitrary: no group is consistently
  raised or lowered relative to its base rate across the replicates of a cell;
* **p-value**: the share of the label permutations (each replicate's labels permuted
  independently) whose T is at least the observed one, counting the identity —
  exact when the (N!)^R permutations can be enumerated, else
  p = (1 + #{T_b ≥ T}) / (1 + B) over B random draws (Phipson & Smyth 2010).

With a single replicate per cell T cannot move under H0 and the test is refused. A
group effect that changes sign between cells (male ↔ career, female ↔ family) is
detected when the cells separate the attributes by that sign, which is why seed 004's
adjectives are split by sentiment (:func:`adjective_strata`).
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pandas as pd

from polybias.data import sources
from polybias.data.templating import DEFAULT_FORM, load_templates, parse_templates
from polybias.metrics import catbias
from polybias.metrics.catbias import CatBiasError
from polybias.stats import (
    N_PERMUTATIONS_SHORT,
    GroupPermutationError,
    GroupPermutationResult,
    group_permutation_test,
)
from polybias.studies import categorical_bias

CITATION = ("Seed 004: Cultural Biases in BERT: A primer on mitigating biases (Capstone project, "
            "BeyondInfinities/Capstone_BERT).")
N_COUNTRIES = 245


class Seed004Error(ValueError):
    """Bad input to a seed-004 computation; the message names what is wrong."""


def read_identity_list(path: str | Path) -> tuple[list[str], int, int]:
    """A seed-004 identity list: JSON object (its keys), Python list literal, or
    comma-separated text. Entries are stripped; empty entries are dropped and counted, and
    repeats are kept once (first occurrence).

    Returns (entries, n_raw, n_empty): the unique non-empty entries in file order, the
    number of raw entries, and how many of them were empty.
    """
    path = Path(path)
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".json":
        raw = list(json.loads(text))
    elif text.lstrip().startswith("["):
        try:
            raw = list(ast.literal_eval(text))
        except (ValueError, SyntaxError) as exc:
            raise CatBiasError(f"{path.name}: malformed list literal ({exc})") from exc
    else:
        body = text.strip()
        raw = body.replace("\n", ",").split(",") if "," in body else body.splitlines()
    if not all(isinstance(x, str) for x in raw):
        raise CatBiasError(f"{path.name}: entries must be strings")
    stripped = [x.strip() for x in raw]
    n_empty = sum(1 for x in stripped if not x)
    return list(dict.fromkeys(x for x in stripped if x)), len(raw), n_empty


def adjective_strata(adjectives: list[str]) -> dict[str, str]:
    """Sentiment stratum of each adjective: ``negative`` / ``neutral`` / ``positive`` by its
    VADER compound score (:func:`polybias.metrics.catbias.sentiment_strata`), ``neutral``
    for words the lexicon does not know (compound 0), as seed 004 §4.3 stratifies."""
    weights = catbias.sentiment_weights(list(adjectives)) if adjectives else None
    compound = {w: (weights.compound.get(w, 0.0) if weights else 0.0) for w in adjectives}
    return catbias.sentiment_strata(compound)


def row_significance(path: str | Path, strata: dict[str, str] | None = None, n_permutations: int = N_PERMUTATIONS_SHORT,
                     seed: int = 0) -> pd.DataFrame:
    """Significance of every two-characteristic interaction of seed 004's ``CG_score_2.csv``.

    d = ``Probs − Probs_base`` (log P of the identity pair with the adjective, minus its
    double-mask log base rate), groups = identity pairs (``Values``), replicates = the
    adjectives, cells = ``strata`` (adjective → stratum; one cell when None). Rows the file
    repeats verbatim (the same pair with an empty dish, four times over: the dishes list
    holds empty entries) are counted once; identity pairs with an empty member are kept as
    the published score keeps them. Returns per characteristics pair: statistic,
    null_mean, pvalue, n_groups, n_adjectives, n_cells, repeated_rows
    (:func:`polybias.stats.group_permutation_test`, each pair with the same ``seed``).
    """
    df = categorical_bias.read_seed004_rows(path, Seed004Error)
    n_before = df.groupby("Characteristics", sort=False).size()
    df = df.drop_duplicates(["Characteristics", "Adjective", "Values", "Probs", "Probs_base"])
    repeated = n_before - df.groupby("Characteristics", sort=False).size()
    df["d"] = df["Probs"] - df["Probs_base"]
    if strata is not None:
        missing = sorted(set(df["Adjective"]) - set(strata))
        if missing:
            raise Seed004Error(f"{path.name}: no stratum for adjective(s) {missing}")
        df["stratum"] = df["Adjective"].map(strata)
    rows = []
    for chars, g in df.groupby("Characteristics", sort=False):
        try:
            label = ",".join(ast.literal_eval(chars))
        except (ValueError, SyntaxError) as exc:
            raise Seed004Error(f"{path.name}: malformed Characteristics {chars!r}") from exc
        try:
            r = group_permutation_test(g, "d", group="Values", replicate="Adjective",
                                       cell="stratum" if strata is not None else None,
                                       n_permutations=n_permutations, seed=seed)
        except (Seed004Error, GroupPermutationError) as exc:
            raise Seed004Error(f"{path.name}, {label}: {exc}") from None
        rows.append({"characteristics": label, "statistic": r.statistic, "null_mean": r.null_mean,
                     "pvalue": r.pvalue, "n_groups": r.n_groups, "n_adjectives": g["Adjective"].nunique(),
                     "n_cells": r.n_cells, "repeated_rows": int(repeated[chars])})
    return pd.DataFrame(rows)


def interaction_significance(result: catbias.CBResult, cells: dict[str, str] | None = None,
                             n_permutations: int = N_PERMUTATIONS_SHORT, seed: int = 0) -> GroupPermutationResult:
    """:func:`polybias.stats.group_permutation_test` of an :func:`polybias.studies.categorical_bias.interaction_cb`
    result: its per-(attribute, group) corrected scores, attributes as replicates, split
    into cells by ``cells`` (attribute id → cell, e.g. its sentiment or planted group)."""
    fill = result.scores
    if cells is not None:
        missing = sorted(set(fill["attribute"]) - set(cells))
        if missing:
            raise Seed004Error(f"no cell for attribute(s) {missing}")
        fill = fill.assign(cell=fill["attribute"].map(cells))
    return group_permutation_test(fill, "corrected", group="group", replicate="attribute",
                                  cell="cell" if cells is not None else None,
                                  n_permutations=n_permutations, seed=seed)


def attribute_cells(book, template: str, attribute_slot: str, feature: str) -> dict[str, str] | None:
    """Attribute entry id → its value of ``feature`` (the cells of :func:`interaction_significance`);
    None when ``feature`` is empty. An entry without the feature is an error naming it."""
    if not feature:
        return None
    entries = book.lists[book.template(template).slots[attribute_slot].list]
    lacking = [a for a in entries.ids if feature not in entries.entry(a).features]
    if lacking:
        raise Seed004Error(f"template {template!r}: attribute entries without feature {feature!r}: {lacking[:5]}")
    return {a: str(entries.entry(a).features[feature]) for a in entries.ids}


# ---------------------------------------------------------------- the countries of the hidden-state analysis

def countries() -> list[str]:
    """All 245 countries of the authors' ``Data/countries.json`` (its keys, in file order)."""
    entries, n_raw, n_empty = read_identity_list(sources.fetch("seed004-countries"))
    if len(entries) != N_COUNTRIES or n_empty:
        raise Seed004Error(f"countries.json (seed004-countries): {len(entries)} countries and {n_empty} "
                           f"empty, expected {N_COUNTRIES} and none")
    return entries


def country_templates(adjective: str = "honest", regions: dict[str, str] | None = None):
    """Template book "A person from {country} is {adjective}." over all the authors' countries.

    Seed 004 App. A takes the hidden states of the country in this template. ``regions``
    (country name → region; default: the regions of the project's ``identities_en``
    countries, matched by name without a leading "the") gives each country a feature
    ``region``; countries without one get ``unknown``. The adjective slot holds only
    ``adjective`` (the hidden state of the country does not depend on it in an encoder
    that reads left to right only up to the country, and the paper fixes one).
    """

    if regions is None:
        own = load_templates("identities_en").lists["countries"]
        regions = {}
        for e in own.entries:
            name = e.forms[DEFAULT_FORM][0]
            regions[name.removeprefix("the ").lower()] = e.features["region"]
    names = countries()
    lists = {
        "countries": {"source": "seed 004 Data/countries.json (keys)", "entries": [
            {"id": c, "word": c, "features": {"region": regions.get(c.lower(), "unknown")}} for c in names]},
        "adjectives": {"source": "fixed adjective", "entries": [adjective]}}
    return parse_templates({"language": "en", "citation": CITATION, "lists": lists, "templates": [
        {"name": "person_from_is", "set": "country_adjective", "text": "A person from {country} is {adjective}.",
         "slots": {"country": {"list": "countries", "role": "target"},
                   "adjective": {"list": "adjectives", "role": "attribute"}}}]}, file="seed004_countries")
