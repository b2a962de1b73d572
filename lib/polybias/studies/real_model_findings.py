"""What the embedded real models show across languages, read against the validity verdicts.

The two real causal LMs this project scores itself, SmolLM2-135M-Instruct (English) and
Gemma-3-270m (over 140 languages), run on the full data of every likelihood measure
(``configs/sweeps/default.yaml``; their records kept under ``paper/records/``). This
module turns the tidy rows of those records (:func:`polybias.results.table.read_results`)
into the tables of the findings section:

* :func:`eurogest_by_language` — EuroGEST's g_s per model and language with its interval,
  whether all 16 stereotypes have a rate, and the measure's validity verdict there;
* :func:`eurogest_rates` — the masculine rate per language and stereotype (the heat map);
* :func:`pair_scores` — the stereotype score of every minimal-pair dataset and language
  (CrowS-Pairs and its translations, Kaneko et al., IndiBias) per model, with its verdict;
* :func:`model_differences` — where the two models differ beyond their intervals (the 95 %
  intervals do not overlap: a conservative reading, not a test of the difference);
* :func:`validity_verdicts` — the verdict of each measure in each language from the
  planted-model validity study (``data/validity``): CrowS-Pairs' stereotype score of causal
  LMs (calibrated in English, Bangla and Hindi), EuroGEST's g_s (Czech and Latvian
  undecided, Greek too liberal); every other measure and language is ``not tested``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from polybias import paths
from polybias.data.eurogest import FAMILIES, NEUTRAL_LANGUAGES, STEREOTYPES
from polybias.data.languages import NAMES
from polybias.studies import validity

NOT_TESTED = "not tested"
#: The stereotypes Rowe et al. (2025) find strongest in all 24 models they score, across all
#: languages: women beautiful, empathetic and neat; men leaders, strong/tough, professional.
EUROGEST_STRONGEST = {"feminine": (7, 3, 4), "masculine": (13, 16, 8, 10)}
#: The measure of the tidy rows -> the validity study's (measure, metric) of causal LMs.
VALIDITY_MEASURES = {"crows": ("crows-causal", "stereotype-score"),
                     "eurogest": ("eurogest-causal", "g_s")}


class FindingsError(ValueError):
    """Tidy rows that lack what a findings table needs."""


def validity_verdicts(eurogest_runs: pd.DataFrame,
                      measurements: pd.DataFrame | None = None) -> pd.DataFrame:
    """The validity verdict of the real-model measures per language: ``measure`` (``crows``,
    ``eurogest``), ``language``, ``verdict`` (calibrated, too liberal, undecided, ...) and
    ``basis`` (what decided it: false positives of balanced planted models over their
    number). From ``data/validity/measurements.csv`` (CrowS-Pairs on planted causal LMs,
    :func:`polybias.studies.validity.calibration_table`; or ``measurements`` when given) and
    ``eurogest_runs``, the planted EuroGEST models
    (:func:`polybias.runner.validity_eurogest.read_frame`, read by the caller;
    :func:`polybias.studies.validity.interval_verdicts`)."""
    if measurements is None:
        measurements = pd.read_csv(paths.project_root() / "data" / "validity" / "measurements.csv")
    rows = []
    measure, metric = VALIDITY_MEASURES["crows"]
    calib = validity.calibration_table(measurements)
    for r in calib[(calib.measure == measure) & (calib.metric == metric)].itertuples():
        rows.append({"measure": "crows", "language": r.language, "verdict": r.verdict,
                     "basis": f"{r.false_positives}/{r.n} false positives"})
    for r in validity.interval_verdicts(eurogest_runs).itertuples():
        if r.language != "all":
            rows.append({"measure": "eurogest", "language": r.language, "verdict": r.verdict,
                         "basis": f"{r.false_positives}/{r.balanced} false positives"})
    return pd.DataFrame(rows, columns=["measure", "language", "verdict", "basis"])


def verdict_of(verdicts: pd.DataFrame, measure: str, language: str) -> str:
    """The verdict of ``measure`` in ``language`` (:func:`validity_verdicts`), or ``not tested``."""
    hit = verdicts[(verdicts.measure == measure) & (verdicts.language == language)]
    return NOT_TESTED if hit.empty else str(hit.verdict.iloc[0])


def eurogest_by_language(tidy: pd.DataFrame, verdicts: pd.DataFrame) -> pd.DataFrame:
    """g_s per model and language (EuroGEST's family order), with its interval, ``n``
    sentences, ``complete`` (all 16 stereotypes rated: the authors report g_s only then),
    ``reading`` (above 1, below 1 or holds 1) and the measure's ``verdict`` there."""
    gs = tidy[tidy.metric == "eurogest"]
    if gs.empty:
        return pd.DataFrame(columns=["model", "language", "family", "n", "g_s", "ci_low",
                                     "ci_high", "complete", "reading", "verdict"])
    rates = tidy[tidy.metric == "eurogest-masculine-rate"]
    rated = rates[rates.value.notna()].groupby(["model", "language"]).size()
    order = {lang: i for i, lang in enumerate(NEUTRAL_LANGUAGES)}
    rows = []
    for r in gs.itertuples():
        rows.append({"model": r.model, "language": r.language, "family": FAMILIES[r.language],
                     "n": int(r.n), "g_s": float(r.value), "ci_low": float(r.ci_low),
                     "ci_high": float(r.ci_high),
                     "complete": bool(rated.get((r.model, r.language), 0) == len(STEREOTYPES)),
                     "reading": _reading(r.ci_low, r.ci_high, 1.0),
                     "verdict": verdict_of(verdicts, "eurogest", r.language)})
    out = pd.DataFrame(rows)
    out["_order"] = out.language.map(order)
    return out.sort_values(["model", "_order"]).drop(columns="_order").reset_index(drop=True)


def _reading(low: float, high: float, null: float) -> str:
    """Where an interval lies against the value of no bias.

    >>> _reading(1.01, 1.2, 1.0), _reading(0.8, 0.95, 1.0), _reading(0.9, 1.1, 1.0)
    ('above', 'below', 'holds')
    """
    if np.isnan(low) or np.isnan(high):
        return "no interval"
    return "above" if low > null else "below" if high < null else "holds"


def eurogest_rates(tidy: pd.DataFrame, model: str) -> pd.DataFrame:
    """The masculine rate of ``model`` per language and stereotype, in the shape
    :func:`polybias.studies.eurogest.rates_heatmap` draws (``language``, ``family``,
    ``stereotype``, ``label``, ``stereotype_gender``, ``n``, ``masculine_rate``,
    ``ci_low``, ``ci_high``), languages in EuroGEST's family order."""
    rates = tidy[(tidy.metric == "eurogest-masculine-rate") & (tidy.model == model)]
    if rates.empty:
        raise FindingsError(f"no EuroGEST masculine rates of {model} in the records")
    stereotype = rates.subset.str.split(" ").str[0].astype(int)
    out = pd.DataFrame({"language": rates.language, "family": rates.language.map(FAMILIES),
                        "stereotype": stereotype, "label": stereotype.map(STEREOTYPES),
                        "stereotype_gender": np.where(stereotype <= 7, "feminine", "masculine"),
                        "n": rates.n.astype("Int64"), "masculine_rate": rates.value,
                        "ci_low": rates.ci_low, "ci_high": rates.ci_high})
    order = {lang: i for i, lang in enumerate(NEUTRAL_LANGUAGES)}
    out = out.assign(_o=out.language.map(order)).sort_values(["_o", "stereotype"])
    return out.drop(columns="_o").reset_index(drop=True)


def stereotype_ranking(tidy: pd.DataFrame, model: str) -> pd.DataFrame:
    """The 16 stereotypes of ``model`` ranked by their mean masculine rate over the languages
    that rate them (``languages``; a language leaves out a stereotype with too few
    sentences), from most feminine to most masculine, with ``strongest_in_paper``: whether
    Rowe et al. (2025) name it among the strongest stereotypes of all their models
    (:data:`EUROGEST_STRONGEST`)."""
    rates = eurogest_rates(tidy, model)
    rated = rates[rates.masculine_rate.notna()]
    out = rated.groupby(["stereotype", "label", "stereotype_gender"], as_index=False).agg(
        mean_rate=("masculine_rate", "mean"), languages=("language", "nunique"))
    strongest = {s for group in EUROGEST_STRONGEST.values() for s in group}
    out["strongest_in_paper"] = out.stereotype.isin(strongest)
    out = out.sort_values("mean_rate").reset_index(drop=True)
    out.insert(0, "rank", np.arange(1, len(out) + 1))
    return out


def strongest_agreement(ranking: pd.DataFrame) -> pd.DataFrame:
    """Whether the stereotypes Rowe et al. find strongest sit at the ends of a model's
    ranking (:func:`stereotype_ranking`): per gender, their ranks, the sum of ranks and the
    exact probability that as many stereotypes drawn at random from the 16 rank as far
    toward that gender's end (sum at most the observed for the feminine ones, at least for
    the masculine), enumerating every subset.

    >>> r = pd.DataFrame({"stereotype": range(1, 17), "rank": range(1, 17)})
    >>> r.loc[r.stereotype.isin([7, 3, 4]), "rank"] = [1, 2, 3]
    >>> row = strongest_agreement(r).iloc[0]
    >>> row.gender, int(row.rank_sum), round(float(row.p), 5)  # 1 of the 560 subsets of 3
    ('feminine', 6, 0.00179)
    """
    from itertools import combinations

    ranks = ranking.set_index("stereotype")["rank"]
    rows = []
    for gender, chosen in EUROGEST_STRONGEST.items():
        observed = int(sum(ranks[s] for s in chosen))
        sums = [sum(c) for c in combinations(range(1, len(ranks) + 1), len(chosen))]
        hits = sum(x <= observed for x in sums) if gender == "feminine" else sum(x >= observed for x in sums)
        rows.append({"gender": gender, "stereotypes": ", ".join(STEREOTYPES[s] for s in chosen),
                     "ranks": ", ".join(str(int(ranks[s])) for s in chosen), "rank_sum": observed,
                     "p": hits / len(sums)})
    return pd.DataFrame(rows)


def pair_scores(tidy: pd.DataFrame, verdicts: pd.DataFrame) -> pd.DataFrame:
    """The stereotype score over all pairs of every minimal-pair run, per model, dataset
    (the record's test) and language, with its interval, ``reading`` against 50 and the
    CrowS-Pairs verdict of causal LMs in that language."""
    crows = tidy[(tidy.metric == "crows") & (tidy.subset == "all")]
    rows = [{"model": r.model, "dataset": r.test, "language": r.language,
             "language_name": NAMES.get(r.language, r.language), "n": int(r.n),
             "score": float(r.value), "ci_low": float(r.ci_low), "ci_high": float(r.ci_high),
             "reading": _reading(r.ci_low, r.ci_high, 50.0),
             "verdict": verdict_of(verdicts, "crows", r.language)} for r in crows.itertuples()]
    columns = ["model", "dataset", "language", "language_name", "n", "score", "ci_low", "ci_high",
               "reading", "verdict"]
    return pd.DataFrame(rows, columns=columns).sort_values(["dataset", "language", "model"]) \
        .reset_index(drop=True)


def other_scores(tidy: pd.DataFrame) -> pd.DataFrame:
    """GEST's g_s per causal template (no bias: 1) and StereoSet's intrasentence SS over all
    items (no bias: 50) per model and language, with interval, n and ``reading``; neither
    measure has a planted-model verdict (``not tested``)."""
    gest = tidy[tidy.metric == "gest"]
    ss = tidy[(tidy.metric == "stereoset") & (tidy.subset == "intrasentence; all")]
    rows = [{"model": r.model, "measure": "gest g_s", "test": str(r.test).replace("causal-template",
                                                                                   "causal template "),
             "language": r.language, "n": int(r.n), "value": float(r.value), "ci_low": float(r.ci_low),
             "ci_high": float(r.ci_high), "reading": _reading(r.ci_low, r.ci_high, 1.0),
             "verdict": NOT_TESTED} for r in gest.itertuples()]
    rows += [{"model": r.model, "measure": "stereoset SS", "test": "intrasentence", "language": r.language,
              "n": int(r.n), "value": float(r.value), "ci_low": float(r.ci_low),
              "ci_high": float(r.ci_high), "reading": _reading(r.ci_low, r.ci_high, 50.0),
              "verdict": NOT_TESTED} for r in ss.itertuples()]
    columns = ["model", "measure", "test", "language", "n", "value", "ci_low", "ci_high", "reading",
               "verdict"]
    return pd.DataFrame(rows, columns=columns).sort_values(["measure", "test", "language", "model"]) \
        .reset_index(drop=True)


def model_differences(frame: pd.DataFrame, keys: list[str], value: str) -> pd.DataFrame:
    """The cells (``keys``) both models were measured in, one row each: the two values,
    and ``differ`` True where their 95 % intervals do not overlap.

    >>> f = pd.DataFrame({"model": ["a", "b", "a", "b"], "language": ["x", "x", "y", "y"],
    ...                   "v": [1.0, 2.0, 1.0, 1.1], "ci_low": [0.9, 1.8, 0.8, 0.9],
    ...                   "ci_high": [1.1, 2.2, 1.2, 1.3]})
    >>> model_differences(f, ["language"], "v")[["language", "differ"]].values.tolist()
    [['x', True], ['y', False]]
    """
    models = sorted(frame.model.unique())
    if len(models) != 2:
        return pd.DataFrame(columns=[*keys, "model_a", "value_a", "model_b", "value_b", "differ"])
    a, b = (frame[frame.model == m].set_index(keys) for m in models)
    both = a.index.intersection(b.index)
    rows = []
    for key in both:
        ra, rb = a.loc[key], b.loc[key]
        differ = bool(ra.ci_low > rb.ci_high or rb.ci_low > ra.ci_high)
        rows.append({**dict(zip(keys, key if isinstance(key, tuple) else (key,), strict=True)),
                     "model_a": models[0], "value_a": float(ra[value]), "model_b": models[1],
                     "value_b": float(rb[value]), "differ": differ})
    return pd.DataFrame(rows)


def findings_tables(runs: dict[str, pd.DataFrame | None],
                    verdicts: pd.DataFrame) -> dict[str, pd.DataFrame]:
    """The findings' tables from the tidy rows of the done runs (``runs``: run key -> tidy
    rows or None, :func:`polybias.runner.sweep.run_records`): ``eurogest``
    (:func:`eurogest_by_language`), ``pairs`` (:func:`pair_scores`), ``other`` (GEST and
    StereoSet, :func:`other_scores`), ``stereotypes`` and ``strongest`` (EuroGEST's stereotypes
    ranked per model and the agreement with Rowe et al.'s strongest,
    :func:`stereotype_ranking`, :func:`strongest_agreement`), ``differences`` (the
    cells of both models, :func:`model_differences`, with their ``measure``) and ``tidy``
    (every row read; empty when no run is done); ``verdicts`` from :func:`validity_verdicts`."""
    frames = [frame for frame in runs.values() if frame is not None]
    tidy = pd.concat(frames, ignore_index=True) if frames else pd.DataFrame(
        columns=["model", "language", "test", "subset", "metric", "value", "ci_low", "ci_high", "n"])
    eurogest = eurogest_by_language(tidy, verdicts)
    pairs = pair_scores(tidy, verdicts)
    other = other_scores(tidy)
    parts = []
    if len(eurogest):
        parts.append(model_differences(eurogest, ["language"], "g_s").assign(measure="eurogest g_s"))
    if len(pairs):
        parts.append(model_differences(pairs, ["dataset", "language"], "score")
                     .assign(measure="stereotype score"))
    for measure, part in other.groupby("measure", sort=True):
        parts.append(model_differences(part, ["test", "language"], "value").assign(measure=measure))
    differences = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(
        columns=["measure", "model_a", "value_a", "model_b", "value_b", "differ"])
    rated = sorted(set(tidy.loc[tidy.metric == "eurogest-masculine-rate", "model"]))
    rankings = [stereotype_ranking(tidy, m).assign(model=m) for m in rated]
    strongest = [strongest_agreement(r).assign(model=m) for m, r in zip(rated, rankings, strict=True)]
    return {"eurogest": eurogest, "pairs": pairs, "other": other, "differences": differences,
            "stereotypes": pd.concat(rankings, ignore_index=True) if rankings else pd.DataFrame(),
            "strongest": pd.concat(strongest, ignore_index=True) if strongest else pd.DataFrame(),
            "tidy": tidy}


def summary_counts(tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """One row per model and measure: in how many languages (and datasets or templates) it
    was measured, how many intervals lie above, below or hold the value of no bias, and in
    how many of those cells the measure is ``calibrated`` there (the rest: too liberal,
    undecided or not tested). The main text's table of the findings (:func:`findings_tables`).

    >>> t = {"eurogest": pd.DataFrame({"model": ["a", "a"], "language": ["cs", "el"],
    ...      "reading": ["holds", "above"], "verdict": ["undecided", "too liberal"]}),
    ...      "pairs": pd.DataFrame(columns=["model", "language", "reading", "verdict"]),
    ...      "other": pd.DataFrame(columns=["model", "measure", "language", "reading", "verdict"])}
    >>> summary_counts(t)[["model", "measure", "cells", "above", "holds", "calibrated"]].values.tolist()
    [['a', 'eurogest g_s', 2, 1, 1, 0]]
    """
    parts = [tables["eurogest"].assign(measure="eurogest g_s"),
             tables["pairs"].assign(measure="crows-pairs stereotype score"), tables["other"]]
    frame = pd.concat([p[["model", "measure", "language", "reading", "verdict"]] for p in parts
                       if len(p)], ignore_index=True) if any(len(p) for p in parts) else None
    columns = ["model", "measure", "cells", "languages", "above", "below", "holds", "calibrated"]
    if frame is None:
        return pd.DataFrame(columns=columns)
    rows = []
    for (model, measure), part in frame.groupby(["model", "measure"], sort=True):
        rows.append({"model": model, "measure": measure, "cells": len(part),
                     "languages": part.language.nunique(),
                     "above": int((part.reading == "above").sum()),
                     "below": int((part.reading == "below").sum()),
                     "holds": int((part.reading == "holds").sum()),
                     "calibrated": int((part.verdict == "calibrated").sum())})
    return pd.DataFrame(rows, columns=columns)


def languages_measured(tidy: pd.DataFrame) -> dict[str, list[str]]:
    """The languages each model was measured in by any of the findings' measures, and
    ``all`` (their union), each sorted.

    >>> languages_measured(pd.DataFrame({"model": ["a", "a", "b"], "language": ["en", "cs", "en"],
    ...                                  "metric": ["crows", "eurogest", "gest"]}))
    {'a': ['cs', 'en'], 'b': ['en'], 'all': ['cs', 'en']}
    """
    kept = tidy[tidy.metric.isin(["crows", "eurogest", "gest", "stereoset"])]
    out = {str(m): sorted(set(part.language)) for m, part in kept.groupby("model", sort=True)}
    out["all"] = sorted(set(kept.language))
    return out
