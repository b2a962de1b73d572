"""The cultural-interaction study's own data and tests (Capstone_BERT, seed 004).

Significance of an interaction against its double-mask base rate
-----------------------------------------------------------------
Seed 004 (§4.3) tests its CB scores "with the null hypothesis that the model is unbiased",
an unbiased model being one whose groups keep their base rates: for every attribute a,
the base-corrected log-probability

    d[a, n] = log P(n | a) − log P(n | double mask)

is the same for every group n (up to a shift common to all groups). The published
scores come without that test. :func:`group_permutation_test` makes it a permutation
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
import itertools
import json
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from polybias.data import sources
from polybias.data.templating import DEFAULT_FORM, load_templates, parse_templates
from polybias.metrics import catbias
from polybias.metrics.catbias import CatBiasError
from polybias.studies import categorical_bias

CITATION = ("Seed 004: Cultural Biases in BERT: A primer on mitigating biases (Capstone project, "
            "BeyondInfinities/Capstone_BERT).")
N_COUNTRIES = 245
TOLERANCE = 1e-12


class Seed004Error(ValueError):
    """Bad input to a seed-004 computation; the message names what is wrong."""


@dataclass(frozen=True)
class PermutationTest:
    """Result of :func:`group_permutation_test`."""

    statistic: float
    pvalue: float
    null_mean: float
    n_permutations: int
    exact: bool
    n_groups: int
    n_replicates: int
    n_cells: int


def _blocks(scores: pd.DataFrame, value: str, group: str, replicate: str,
            cell: str | None) -> tuple[list[np.ndarray], list[str]]:
    for c in (value, group, replicate, *([cell] if cell else [])):
        if c not in scores.columns:
            raise Seed004Error(f"scores have no column {c!r}")
    if scores.empty:
        raise Seed004Error("no scores")
    if not np.all(np.isfinite(scores[value].to_numpy(float))):
        raise Seed004Error(f"column {value!r} holds a value that is not finite")
    key = [cell, replicate] if cell else [replicate]
    if scores.duplicated([*key, group]).any():
        dup = scores[scores.duplicated([*key, group], keep=False)][[*key, group]].head(3)
        raise Seed004Error(f"more than one score per ({', '.join(key)}, {group}): {dup.values.tolist()}")
    groups = sorted(scores[group].unique(), key=str)
    if len(groups) < 2:
        raise Seed004Error(f"the test needs at least two groups, got {groups}")
    wide = scores.pivot_table(index=key, columns=group, values=value, sort=False)
    missing = wide[wide.isna().any(axis=1)]
    if len(missing):
        raise Seed004Error(f"{replicate} rows without a score for every {group}: {missing.index.tolist()[:3]}")
    blocks = []
    cells = wide.index.get_level_values(0).unique() if cell else [None]
    for c in cells:
        block = (wide.xs(c, level=0) if cell else wide)[groups].to_numpy(float)
        if len(block) < 2:
            raise Seed004Error(f"cell {c!r} has {len(block)} {replicate}: the test needs at least two "
                               "replicates per cell (with one, no permutation changes the statistic)")
        blocks.append(block)
    return blocks, groups


def _statistic(blocks: list[np.ndarray]) -> float:
    return float(np.mean([b.mean(axis=0).var() for b in blocks]))


def group_permutation_test(scores: pd.DataFrame, value: str = "corrected", group: str = "group",
                           replicate: str = "attribute", cell: str | None = None,
                           n_permutations: int = 10000, seed: int = 0,
                           exact_limit: int = 10000) -> PermutationTest:
    """Permutation test of base-corrected scores against "no group differs from its base rate".

    See the module docstring for the statistic T, the null and the p-value.

    Parameters
    ----------
    scores : one row per (cell, replicate, group) with the corrected score in ``value``
        (log P − log base); every replicate must score every group.
    cell : column splitting the replicates into cells (e.g. sentiment stratum), or None.
    n_permutations, seed : Monte Carlo draws (``numpy.random.default_rng(seed)``) when the
        permutations number more than ``exact_limit``; else all are enumerated.

    Two groups, two replicates agreeing on the direction: T = Var([1, −1]) = 1; of the
    four label permutations two keep the direction (T = 1), two cancel it (T = 0):

    >>> df = pd.DataFrame({"attribute": ["a", "a", "b", "b"], "group": ["x", "y", "x", "y"],
    ...                    "corrected": [1.0, -1.0, 1.0, -1.0]})
    >>> r = group_permutation_test(df)
    >>> r.statistic, r.pvalue, r.exact, r.n_permutations
    (1.0, 0.5, True, 4)
    """
    blocks, groups = _blocks(scores, value, group, replicate, cell)
    n = len(groups)
    observed = _statistic(blocks)
    n_rows = sum(len(b) for b in blocks)
    total = math.factorial(n) ** n_rows if n_rows * math.log(math.factorial(n)) < 64 else None
    if total is not None and total <= exact_limit:
        perms = [np.array(p) for p in itertools.permutations(range(n))]
        null = []
        for choice in itertools.product(range(len(perms)), repeat=n_rows):
            it = iter(choice)
            null.append(_statistic([np.stack([row[perms[next(it)]] for row in b]) for b in blocks]))
        null = np.array(null)
        p = float(np.mean(null >= observed - TOLERANCE))
        return PermutationTest(observed, p, float(null.mean()), int(total), True, n, n_rows, len(blocks))
    if n_permutations < 1:
        raise Seed004Error(f"n_permutations must be positive, got {n_permutations}")
    rng = np.random.default_rng(seed)
    null = np.zeros(n_permutations)
    chunk = max(1, int(2_000_000 // max(1, n_rows * n)))
    for start in range(0, n_permutations, chunk):
        size = min(chunk, n_permutations - start)
        acc = np.zeros(size)
        for b in blocks:
            idx = rng.random((size, *b.shape)).argsort(axis=2)
            permuted = np.take_along_axis(np.broadcast_to(b, (size, *b.shape)), idx, axis=2)
            acc += permuted.mean(axis=1).var(axis=1)
        null[start:start + size] = acc / len(blocks)
    p = float((1 + np.sum(null >= observed - TOLERANCE)) / (1 + n_permutations))
    return PermutationTest(observed, p, float(null.mean()), n_permutations, False, n, n_rows, len(blocks))


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


def row_significance(path: str | Path, strata: dict[str, str] | None = None, n_permutations: int = 10000,
                     seed: int = 0) -> pd.DataFrame:
    """Significance of every two-characteristic interaction of seed 004's ``CG_score_2.csv``.

    d = ``Probs − Probs_base`` (log P of the identity pair with the adjective, minus its
    double-mask log base rate), groups = identity pairs (``Values``), replicates = the
    adjectives, cells = ``strata`` (adjective → stratum; one cell when None). Rows the file
    repeats verbatim (the same pair with an empty dish, four times over: the dishes list
    holds empty entries) are counted once; identity pairs with an empty member are kept as
    the published score keeps them. Returns per characteristics pair: statistic,
    null_mean, pvalue, n_groups, n_adjectives, n_cells, repeated_rows
    (:func:`group_permutation_test`, each pair with the same ``seed``).
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
        except Seed004Error as exc:
            raise Seed004Error(f"{path.name}, {label}: {exc}") from None
        rows.append({"characteristics": label, "statistic": r.statistic, "null_mean": r.null_mean,
                     "pvalue": r.pvalue, "n_groups": r.n_groups, "n_adjectives": g["Adjective"].nunique(),
                     "n_cells": r.n_cells, "repeated_rows": int(repeated[chars])})
    return pd.DataFrame(rows)


def interaction_significance(result: catbias.CBResult, cells: dict[str, str] | None = None,
                             n_permutations: int = 10000, seed: int = 0) -> PermutationTest:
    """:func:`group_permutation_test` of an :func:`polybias.studies.categorical_bias.interaction_cb`
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
