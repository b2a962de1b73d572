"""EuroGEST across languages (notebook 16): masculine rates by stereotype and g_s of one LM
on the EuroGEST sentences of each language (Rowe et al. 2025).

:func:`score_language` scores one language's sentences with a loaded LM (causal or masked;
e.g. ``models.load("planted-causal", "lm")`` or any hub causal LM loaded the same way);
:func:`eurogest_language` turns the scores into the registered measure ``eurogest``;
:func:`run_eurogest` does both for several languages, writes one run record per language
and returns the tidy tables the notebook shows; :func:`rates_heatmap` draws the masculine
rate per language (rows, ordered by family) and stereotype (columns).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd

from polybias import measures, models, paths
from polybias.data import sources
from polybias.data.eurogest import (
    FAMILIES,
    LANGUAGES,
    NEUTRAL_LANGUAGES,
    STEREOTYPES,
    eurogest_pairs,
)
from polybias.engines.eurogest_scores import CAUSAL_BOS, gendered_pair_scores
from polybias.metrics.eurogest import EuroGestMetricError
from polybias.metrics.measure import Interval, MeasureResult, finite_or_none
from polybias.models import load_registry
from polybias.results.plots import finish_figure, pyplot
from polybias.results.records import (
    Record,
    measure_group,
    measure_record,
    model_fields,
    write_record,
)
from polybias.stats import N_BOOTSTRAP
from polybias.studies.notebook_parameters import (
    LANGUAGE_OVERRIDE,
    OUTPUT_DIR,
    SCORED_MODEL,
    TABLE_FILE,
    Notebook,
    Parameter,
    check_model_language,
    choice,
    free,
    integer,
    model_engine,
)

#: The registered files a run reads (their sha256 go into its record).
SOURCES = ("eurogest-gendered", "eurogest-neutral", "eurogest-scaffolds", "eurogest-punctuation",
           "eurogest-language-configs")


TOO_LONG = ("raise", "skip")
IDENTICAL_FORMS = ("keep", "exclude")
"""How a pair whose two forms are the same string is treated (:func:`score_language`)."""


def _fits(lm, pairs: pd.DataFrame) -> np.ndarray:
    """Whether both forms of each pair fit the model (a BOS the engine prepends counted)."""
    extra = 1 if lm.kind == "causal" else 0
    masc = lm.tokenizer(pairs["masculine"].tolist())["input_ids"]
    fem = lm.tokenizer(pairs["feminine"].tolist())["input_ids"]
    lengths = [max(len(a), len(b)) + extra for a, b in zip(masc, fem, strict=True)]
    return np.asarray(lengths, dtype=int) <= lm.max_length


def score_language(lm, language: str, subsets: tuple[str, ...] = ("gendered", "neutral"),
                   per_stereotype: int | None = None, causal_bos: str = "prepend",
                   duplicates: str = "keep", compat_identical_scaffolds: bool = False,
                   too_long: str = "raise", identical_forms: str = "keep", **engine) -> pd.DataFrame:
    """Score the EuroGEST sentences of ``language`` with a loaded LM.

    Parameters
    ----------
    lm : :class:`polybias.engines.scoring.LanguageModel` (``polybias.models.load(name, "lm")``).
    language : one of :data:`polybias.data.eurogest.NEUTRAL_LANGUAGES`.
    subsets, per_stereotype, duplicates, compat_identical_scaffolds : which sentences
        (:func:`polybias.data.eurogest.eurogest_pairs`).
    too_long : a pair with a form longer than the model accepts is an error (``"raise"``,
        default) or left out before ``per_stereotype`` is applied (``"skip"``: for small
        smoke-test models; the sentences of each stereotype are read in order until
        ``per_stereotype`` fit, and ``attrs["n_too_long"]`` counts those left out on the way).
    identical_forms : a pair whose masculine and feminine forms are the same string can only
        tie (r = 0.5): ``"keep"`` (default; the authors' code scores and counts it) or
        ``"exclude"`` (left out before ``per_stereotype`` is applied). Either way
        ``attrs["n_identical"]`` counts them (none in the pinned files of any language).
    causal_bos, engine : :func:`polybias.engines.eurogest_scores.gendered_pair_scores`.

    Returns
    -------
    The pairs with their scores: the input of the measure ``eurogest``.
    """
    if too_long not in TOO_LONG:
        raise EuroGestMetricError(f"too_long must be one of {TOO_LONG}, got {too_long!r}")
    if identical_forms not in IDENTICAL_FORMS:
        raise EuroGestMetricError(f"identical_forms must be one of {IDENTICAL_FORMS}, got "
                                  f"{identical_forms!r}")
    pairs = eurogest_pairs(language, subsets=tuple(subsets), duplicates=duplicates,
                           compat_identical_scaffolds=compat_identical_scaffolds)
    identical = (pairs["masculine"] == pairs["feminine"]).to_numpy()
    n_identical = int(identical.sum())
    if identical_forms == "exclude":
        pairs = pairs[~identical]
    if per_stereotype is not None and per_stereotype < 1:
        raise EuroGestMetricError(f"per_stereotype must be at least 1, got {per_stereotype}")
    groups = [pairs["condition"] == "G", "stereotype"]
    n_too_long = 0
    if too_long == "skip":
        keep = np.zeros(len(pairs), dtype=bool)
        for rows in pairs.groupby(groups, sort=False).indices.values():
            step = len(rows) if per_stereotype is None else 4 * per_stereotype
            found = 0
            for start in range(0, len(rows), step):  # read in order until the subset is full
                part = rows[start:start + step]
                fits = _fits(lm, pairs.iloc[part])
                keep[part] = fits
                n_too_long += int((~fits).sum())
                found += int(fits.sum())
                if per_stereotype is not None and found >= per_stereotype:
                    break
        pairs = pairs[keep]
    if per_stereotype is not None:
        pairs = pairs.groupby([pairs["condition"] == "G", "stereotype"], sort=False).head(per_stereotype)
    scored = gendered_pair_scores(lm, pairs.reset_index(drop=True), causal_bos=causal_bos, **engine)
    scored.attrs.update(n_too_long=n_too_long, language=language, n_identical=n_identical,
                        identical_forms=identical_forms)
    return scored


def eurogest_language(scored: pd.DataFrame, **options) -> MeasureResult:
    """The measure ``eurogest`` on one language's scores (``options``: normalise,
    differing_only, min_sentences, n_bootstrap, seed, level)."""
    return measures.compute("eurogest", scored=scored, **options)


def run_eurogest(model: str, languages: list[str] | None = None,
                 subsets: tuple[str, ...] = ("gendered", "neutral"), per_stereotype: int | None = None,
                 causal_bos: str = "prepend", normalise: bool = True, differing_only: bool = True,
                 min_sentences: int = 10, n_bootstrap: int = N_BOOTSTRAP, seed: int = 0,
                 too_long: str = "raise", output_dir: str | None = None, lm=None,
                 device: str = "auto", dtype: str = "auto", identical_forms: str = "keep",
                 **engine) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One LM on the EuroGEST sentences of several languages.

    ``model`` is what :func:`polybias.models.load` takes, loaded with ``device`` and ``dtype``;
    ``lm`` the model already loaded (``device`` and ``dtype`` then do nothing).
    ``languages`` default to all 29, in family order. One ``eurogest`` run record per
    language goes into ``output_dir`` when given.

    Returns
    -------
    (rates, summary): ``rates`` one row per language and stereotype (``language``,
    ``family``, ``stereotype``, ``label``, ``stereotype_gender``, ``n``, ``masculine_rate``,
    ``ci_low``, ``ci_high``); ``summary`` one row per language (``language``, ``family``,
    ``n``, ``g_s``, ``ci_low``, ``ci_high``, ``complete``, ``feminine_rate``,
    ``masculine_rate``).
    """
    languages = list(languages or NEUTRAL_LANGUAGES)
    unknown = [lang for lang in languages if lang not in NEUTRAL_LANGUAGES]
    if unknown:
        raise EuroGestMetricError(f"EuroGEST has no language {', '.join(unknown)}; it has "
                                  f"{', '.join(NEUTRAL_LANGUAGES)}")
    lm = lm if lm is not None else models.load(model, "lm", device=device, dtype=dtype)
    options = {"normalise": normalise, "differing_only": differing_only,
               "min_sentences": min_sentences, "n_bootstrap": n_bootstrap, "seed": seed}
    registry = sources.load_registry()
    rates, summary = [], []
    for language in languages:
        # the whole sentences are scored only when the measure reads them (differing_only=False)
        scored = score_language(lm, language, subsets, per_stereotype, causal_bos, too_long=too_long,
                                identical_forms=identical_forms, whole=not differing_only, **engine)
        result = eurogest_language(scored, **options)
        per = result.details.assign(language=language, family=FAMILIES[language],
                                    label=[STEREOTYPES[s] for s in result.details.stereotype])
        rates.append(per)
        means = per.groupby("stereotype_gender")["masculine_rate"].mean()
        iv = result.interval
        summary.append({"language": language, "family": FAMILIES[language], "n": result.n,
                        "n_too_long": scored.attrs["n_too_long"],
                        "n_identical": scored.attrs["n_identical"],
                        "g_s": result.value, "ci_low": iv.low if iv else np.nan,
                        "ci_high": iv.high if iv else np.nan,
                        "complete": bool(per["masculine_rate"].notna().sum() == 16),
                        "feminine_rate": means.get("feminine", np.nan),
                        "masculine_rate": means.get("masculine", np.nan)})
        if output_dir is not None:
            counts = {"n_too_long": scored.attrs["n_too_long"], "n_identical": scored.attrs["n_identical"],
                      "complete": summary[-1]["complete"]}
            record = eurogest_record(
                result, per.drop(columns=["language", "family"]).to_dict("records"), counts,
                model=model, language=language,
                parameters={"subsets": list(subsets), "per_stereotype": per_stereotype,
                            "causal_bos": causal_bos, "too_long": too_long,
                            "identical_forms": identical_forms, **options},
                data_sha256={s: registry[s].sha256 for s in SOURCES}, **model_fields(lm))
            write_record(record, paths.output_path(output_dir))
    columns = ["language", "family", "stereotype", "label", "stereotype_gender", "n",
               "masculine_rate", "ci_low", "ci_high"]
    return pd.concat(rates, ignore_index=True)[columns], pd.DataFrame(summary)


#: The measure of each stereotype's masculine rate in a EuroGEST record's groups.
STEREOTYPE_MEASURE = "eurogest-masculine-rate"


def eurogest_record(result: MeasureResult, per_stereotype: list[dict], counts: dict, *,
                    model: str, language: str, parameters: dict, **fields) -> Record:
    """The run record of one language: g_s (``result``, the measure ``eurogest``) under the
    subset ``g_s``, with the counts of sentences left out (``counts``: ``n_too_long``,
    ``n_identical``, ``complete``) as its ``extra``, and one group per stereotype
    (:func:`stereotype_groups`); one :func:`~polybias.results.records.measure_record`."""
    level = result.interval.level if result.interval is not None else None
    result = dataclasses.replace(result, extra={**result.extra, **counts})
    return measure_record(result, model=model, language=language, test="eurogest", parameters=parameters,
                          subset="g_s", groups=stereotype_groups(per_stereotype, level), **fields)


def stereotype_groups(per_stereotype: list[dict], level: float | None) -> list[dict]:
    """Each stereotype's masculine rate (``masculine_rate`` with its bootstrap interval at
    ``level``, and ``n``; its id, label and gender as ``extra``) as a group of a
    :func:`eurogest_record`, subset ``<id> <label>``.

    >>> stereotype_groups([{"stereotype": 1, "label": "Emotional", "stereotype_gender": "feminine",
    ...                     "n": 4, "masculine_rate": 0.5, "ci_low": 0.25, "ci_high": 0.75}], 0.95)[0]["subset"]
    '1 Emotional'
    """
    groups = []
    for row in per_stereotype:
        rate, low = finite_or_none(row.get("masculine_rate")), finite_or_none(row.get("ci_low"))
        interval = None if low is None or level is None else Interval(
            low, float(row["ci_high"]), level, "bootstrap-percentile")
        extra = {k: v for k, v in row.items() if k not in ("masculine_rate", "ci_low", "ci_high", "n")}
        result = MeasureResult(STEREOTYPE_MEASURE, math.nan if rate is None else rate, interval, None,
                               "none", int(row.get("n") or 0), extra=extra)
        groups.append(measure_group(f"{row['stereotype']} {row.get('label', '')}".strip(), result))
    return groups


def subset_caption(per_stereotype: int | None, too_long: str = "raise") -> str:
    """The line EuroGEST's tables state the scored sentences with: all of them, or the declared
    subset of :func:`score_language` (the first ``per_stereotype`` of each stereotype and
    subset, in the file's order; with ``too_long`` skip, the first that fit the model).

    >>> subset_caption(2)
    "Sentences: the first 2 of each stereotype and subset, in the files' order (per_stereotype = 2); n counts them."
    >>> subset_caption(None, "skip")
    'Sentences: all that fit the model (too_long = skip); n counts them.'
    """
    fit = " that fit the model" if too_long == "skip" else ""
    if not per_stereotype:
        return f"Sentences: all{fit}{' (too_long = skip)' if fit else ''}; n counts them."
    return (f"Sentences: the first {per_stereotype} of each stereotype and subset{fit}, in the files' "
            f"order (per_stereotype = {per_stereotype}{', too_long = skip' if fit else ''}); n counts them.")


def rates_heatmap(rates: pd.DataFrame, title: str, file: str | None = None):
    """Masculine rate per language (rows, in the order given, grouped by family) and
    stereotype (columns 1–16, the feminine ones first), 0.5 white; NaN (fewer sentences
    than the minimum) left blank. Drawn for a page width of about 7 inches."""
    plt = pyplot()
    import seaborn as sns  # lazy: heavy; figures only

    order = list(dict.fromkeys(rates["language"]))
    table = rates.pivot(index="language", columns="stereotype", values="masculine_rate")
    table = table.reindex(index=order, columns=sorted(STEREOTYPES))
    table.index = [f"{LANGUAGES[c]} ({FAMILIES[c]})" for c in table.index]
    table.columns = [f"{s} {STEREOTYPES[s]}" for s in table.columns]
    spread = float(np.nanmax(np.abs(table.to_numpy() - 0.5))) if table.notna().any().any() else 0.0
    spread = max(spread, 0.01)
    fig, ax = plt.subplots(figsize=(6.6, max(4.2, 0.22 * len(table) + 2.2)))
    sns.heatmap(table, vmin=0.5 - spread, vmax=0.5 + spread, cmap="vlag", annot=len(table) <= 12,
                fmt=".2f", annot_kws={"fontsize": 7}, linewidths=0.3,
                cbar_kws={"label": "masculine rate (0.5 = none)"}, ax=ax)
    ax.axvline(7, color="black", linewidth=1.2)
    ax.set_xlabel("GEST stereotype (1-7 feminine | 8-16 masculine)", fontsize=8)
    ax.set_ylabel("")
    ax.tick_params(axis="x", labelsize=7, rotation=90)
    ax.tick_params(axis="y", labelsize=7)
    ax.set_title(title, fontsize=9)
    return finish_figure(fig, file)


# ------------------------------------------------------------------ the notebook's parameters

def _check_16_eurogest(*, model, languages, language_override):
    registry = load_registry()
    for lang in languages or NEUTRAL_LANGUAGES:  # before the model loads
        check_model_language(model, lang, language_override, registry)


#: The parameters of notebook 16_eurogest: their help, allowed values and checks.
NOTEBOOK_PARAMETERS: Notebook = Notebook({
    "model": free(SCORED_MODEL),
    **model_engine(),
    "languages": Parameter("EuroGEST languages to score, among {values}; empty: all 29, by "
                           "family", values=NEUTRAL_LANGUAGES, each=True, empty=True),
    "language_override": LANGUAGE_OVERRIDE,
    "subsets": Parameter("sentences to score, among {values} (neutral: in the scaffolds)",
                         values=("gendered", "neutral"), each=True),
    "per_stereotype": integer("keep the first `per_stereotype` sentences of each stereotype and "
                              "subset ({range}; 0: all)"),
    "too_long": choice("a sentence longer than the model accepts: {values} (counted)",
                       ("raise", "skip")),
    "causal_bos": choice("causal LMs: {values} (prepend: every token given BOS; none: the "
                         "authors' code on a tokenizer without BOS)", CAUSAL_BOS),
    "normalise": free("mean token log-probability (the authors' default); False: summed"),
    "differing_only": free("score only the part where the two forms differ (the authors' "
                           "default); False: whole sentences"),
    "min_sentences": integer("a stereotype with fewer sentences gets no rate (the authors' 10; "
                             "{range})", low=1),
    "n_bootstrap": integer("bootstrap resamples within each stereotype for the intervals "
                           "({range}; 0: none)", default="polybias.stats.N_BOOTSTRAP"),
    "seed": integer("seed of the bootstrap ({range})"),
    "output_dir": OUTPUT_DIR,
    "table_file": free(TABLE_FILE.format("eurogest_planted-causal")),
}, _check_16_eurogest)
