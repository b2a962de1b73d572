"""CrowS-style pairs across languages (notebook 12): one model over several datasets or
languages with the bootstrap comparison and its record, and the published Dutch per-pair
scores re-aggregated."""

from __future__ import annotations

import dataclasses
import math

import pandas as pd

from polybias import models, paths
from polybias.data import sources
from polybias.data.crowspairs import DATASETS, CrowsPairsError, languages_to_compare
from polybias.data.minimal_pairs import sample_caption, sample_pairs
from polybias.data.published_pair_scores import DUTCH_SCORE_MODELS, load_dutch_crows_scores
from polybias.engines.pair_scores import pair_scores
from polybias.measures import compute
from polybias.metrics.crows import (
    METHODS,
    CrowsError,
    LanguageComparison,
    compare_languages,
    share_row_result,
)
from polybias.metrics.measure import Interval, MeasureResult, finite_or_none
from polybias.models import check_language, load_registry
from polybias.results.records import (
    Record,
    measure_results_record,
    model_fields,
    write_record,
)
from polybias.stats import CONFIDENCE_LEVEL, N_BOOTSTRAP
from polybias.studies import crows_pairs
from polybias.studies.notebook_parameters import (
    BATCH_TOKENS,
    DEVICE,
    DTYPE,
    LANGUAGE_OVERRIDE,
    OUTPUT_DIR,
    SCORED_MODEL,
    TABLE_FILE,
    Notebook,
    ParameterError,
    check_model_language,
    choice,
    crows_method_refusal,
    free,
    integer,
    model_kind,
    published_only,
)


def _comparison_record(comparison: LanguageComparison, model: str, languages: list[str],
                       test: str, parameters: dict, output_dir: str, model_revision: str | None = None,
                       data_sha256: dict | None = None, normaliser: dict | None = None,
                       engine: dict | None = None) -> None:
    rows = [frame.astype(object).where(frame.notna(), None).to_dict("records")
            for frame in (comparison.per_language, comparison.paired)]
    write_record(comparison_record(*rows, model=model, language="+".join(languages), test=test,
                                   parameters=parameters, model_revision=model_revision,
                                   data_sha256=data_sha256 or {}, normaliser=normaliser, engine=engine),
                 paths.output_path(output_dir))


#: The measure of a paired difference of stereotype scores in a comparison's record.
DIFFERENCE_MEASURE = "crows-difference"


def comparison_record(per_language: list[dict], paired: list[dict], *, model: str, language: str,
                      test: str, parameters: dict, metric: str = "crows-languages",
                      measure: str = "crows", difference: str = DIFFERENCE_MEASURE,
                      subset_of=None, **fields) -> Record:
    """The run record of a comparison of languages (``metric``, a label of ``measure``):
    the score of each language (or each model and group: the rows of
    :attr:`~polybias.metrics.crows.LanguageComparison.per_language`), the first as the
    record's value and the others as its groups, each under the language and model it is
    of and the subset ``subset_of(row)`` (default its group, else ``all``); then each paired
    difference (``difference``, subset ``[<group>: ]<a> − <b>``, McNemar's p) with its
    counts as ``extra``. A row's columns the result does not hold go to its ``extra``. One
    :func:`~polybias.results.records.measure_record`; StereoSet's comparison
    (:func:`polybias.studies.stereoset.languages_record`) is one too."""
    opts = {"confidence": CONFIDENCE_LEVEL}
    shared = {"score", "ci_low", "ci_high", "binom_p", "n", "language", "model", "group"}
    entries = []
    for row in per_language:
        over = {k: row[k] for k in ("language", "model") if k in row}
        result = share_row_result(measure, row, opts)
        result = dataclasses.replace(result, extra={**{k: v for k, v in row.items() if k not in shared},
                                                    **result.extra})
        subset = subset_of(row) if subset_of else (str(row["group"]) if "group" in row else "all")
        entries.append((subset, result, over))
    for row in paired:
        a, b = row.get("label_a", row.get("language_a")), row.get("label_b", row.get("language_b"))
        low, p = finite_or_none(row.get("ci_low")), finite_or_none(row.get("mcnemar_p"))
        interval = None if low is None else Interval(low, float(row["ci_high"]), CONFIDENCE_LEVEL,
                                                     "bootstrap-percentile")
        extra = {k: v for k, v in row.items() if k not in ("diff", "ci_low", "ci_high", "mcnemar_p", "n")}
        diff = finite_or_none(row.get("diff"))
        result = MeasureResult(difference, math.nan if diff is None else diff, interval, p,
                               "binomial-exact" if p is not None else "none", int(row.get("n") or 0),
                               extra=extra)
        group = f"{row['group']}: " if "group" in row else ""
        entries.append((f"{group}{a} − {b}", result, {}))
    return measure_results_record(entries, model=model, language=language, test=test,
                                  parameters=parameters, metric=metric, **fields)


def compared_languages(model: str, dataset: str, languages: list[str] | None = None,
                       language_override: bool = False) -> list[str]:
    """The languages of ``dataset`` to compare (``languages``, default all of the dataset's),
    checked before any model loads: each must be one of the dataset's, at least two, and
    each registered for ``model`` (:func:`polybias.models.check_language`;
    ``language_override`` lifts that). Raises :class:`CrowsError` or
    :class:`polybias.models.ModelError` with a one-line message.

    >>> compared_languages("some/dir", "crows-pairs-dutch", ["nl", "en"])
    ['nl', 'en']
    """
    try:
        languages = languages_to_compare(dataset, languages)
    except CrowsPairsError as err:
        raise CrowsError(str(err)) from None
    for language in languages:
        check_language(model, language, language_override)
    return languages


def run_crows_languages(
    model: str,
    dataset: str,
    languages: list[str] | None = None,
    bias_types: list[str] | None = None,
    method: str | None = None,
    n_bootstrap: int = N_BOOTSTRAP,
    seed: int = 0,
    output_dir: str | None = None,
    language_override: bool = False,
    lm=None,
    device: str = "auto",
    dtype: str = "auto",
    max_pairs: int = 0,
    **engine,
) -> tuple[dict[str, pd.DataFrame], LanguageComparison]:
    """Score one LM on every language of an aligned dataset and compare them.

    ``model`` is what :func:`polybias.models.load` takes (a registered name, a model
    directory, a hub id); ``lm`` the model already loaded from it (e.g. with a revision,
    device, dtype and batch budget), else it is loaded here after the checks, with ``device``
    and ``dtype``.

    ``languages``: at least two of the dataset's languages (default: all of them); each is
    checked against the model's registered languages (:func:`polybias.models.check_language`,
    ``language_override`` lifts that). The pairs of each language are scored with
    :func:`pair_scores` (``method``; ``engine`` options go to it) and compared with
    :func:`compare_languages` over the shared pair ids. Writes one ``crows-languages`` run
    record into ``output_dir`` when given. Returns ``({language: scored}, comparison)``;
    ``comparison.per_language`` has a ``model`` column.

    ``max_pairs`` (0: all): score in every language the same sample of at most that many
    pairs, drawn with ``seed`` among the pair ids all the languages have, stratified by
    the bias type of the first language (:func:`polybias.data.minimal_pairs.sample_pairs`).
    """
    if method is not None and method not in METHODS:
        raise CrowsError(f"unknown method {method!r}; use one of {METHODS}")
    languages = compared_languages(model, dataset, languages, language_override)
    lm = lm if lm is not None else models.load(model, "lm", device=device, dtype=dtype)
    pairs = {lang: crows_pairs.load_pairs(dataset, lang, bias_types) for lang in languages}
    common = set.intersection(*(set(p["pair_id"]) for p in pairs.values()))
    if max_pairs:
        first = sample_pairs(pairs[languages[0]], max_pairs, seed, ids=sorted(common))
        pairs = {lang: p[p["pair_id"].isin(set(first["pair_id"]))] for lang, p in pairs.items()}
    scored = {lang: pair_scores(lm, pairs[lang], method, **engine) for lang in languages}
    scored_ids = set.intersection(*(set(p["pair_id"]) for p in scored.values()))
    comparison_caption = sample_caption(len(scored_ids), len(common), max_pairs, seed, aligned=True)
    comparison = compare_languages(scored, n_bootstrap=n_bootstrap, seed=seed)
    comparison.per_language.insert(1, "model", model)
    comparison.per_language.attrs["caption"] = comparison_caption
    if output_dir is not None:
        used = method or ("causal" if lm.kind == "causal" else "nangia")
        _comparison_record(comparison, model, languages, dataset,
                           {"dataset": dataset, "languages": languages, "bias_types": bias_types or [],
                            "method": used, "n_bootstrap": n_bootstrap, "seed": seed,
                            "language_override": language_override,
                            **({"max_pairs": max_pairs} if max_pairs else {})},
                           output_dir, **model_fields(lm))
    return scored, comparison


def published_dutch_comparison(groups: dict[str, list[str]], n_bootstrap: int = N_BOOTSTRAP, seed: int = 0,
                               output_dir: str | None = None) -> LanguageComparison:
    """:func:`compare_languages` on the Dutch CrowS-Pairs authors' published per-pair scores.

    ``groups``: name -> models of :data:`polybias.data.published_pair_scores.DUTCH_SCORE_MODELS` to compare
    over the shared pair ids (e.g. ``["bert", "camembert", "bertje"]``: one monolingual
    model per language; ``["mbert", "bertje"]``: two models on the Dutch pairs). Each model
    is labelled ``"<model> (<language>)"``. Returns one :class:`LanguageComparison` over all
    groups: ``per_language`` with columns ``group``, ``label``, ``model``, ``language`` and
    those of :func:`compare_languages`; ``paired`` with ``group`` and ``label_a``/``label_b``.
    Writes one ``crows-languages`` record per group into ``output_dir`` when given (the
    sha256 of the score files it read).
    """
    registry = sources.load_registry()
    per, paired = [], []
    for group, names in groups.items():
        unknown = [m for m in names if m not in DUTCH_SCORE_MODELS]
        if unknown:
            raise CrowsError(f"group {group!r}: no published scores for {', '.join(unknown)}; "
                             f"known: {', '.join(DUTCH_SCORE_MODELS)}")
        if len(set(names)) < 2:
            raise CrowsError(f"group {group!r} needs two or more distinct models")
        labels = {f"{m} ({DUTCH_SCORE_MODELS[m]})": m for m in names}
        comparison = compare_languages({label: load_dutch_crows_scores(m) for label, m in labels.items()},
                                       n_bootstrap=n_bootstrap, seed=seed)
        p = comparison.per_language.rename(columns={"language": "label"})
        p.insert(0, "group", group)
        p.insert(2, "model", [labels[x] for x in p.label])
        p.insert(3, "language", [DUTCH_SCORE_MODELS[labels[x]] for x in p.label])
        q = comparison.paired.rename(columns={"language_a": "label_a", "language_b": "label_b"})
        q.insert(0, "group", group)
        per.append(p)
        paired.append(q)
        if output_dir is not None:
            used = [f"crows-pairs-dutch-scores-{m}" for m in names]
            _comparison_record(LanguageComparison(p, q), "+".join(names),
                               [DUTCH_SCORE_MODELS[m] for m in names], "crows-pairs-dutch-published",
                               {"group": group, "models": list(names), "n_bootstrap": n_bootstrap,
                                "seed": seed}, output_dir,
                               data_sha256={s: registry[s].sha256 for s in used})
    return LanguageComparison(pd.concat(per, ignore_index=True), pd.concat(paired, ignore_index=True))


def dutch_crows_aggregates(n_bootstrap: int = 0, seed: int = 0) -> pd.DataFrame:
    """Stereotype score of every model of :data:`DUTCH_SCORE_MODELS`, recomputed per pair
    (the registered ``crows``, overall and per bias type: the result's ``groups``).

    One row per (model, bias type incl. ``all``) with the columns of
    :func:`polybias.metrics.crows.aggregate_pairs`, plus ``model``, ``language`` and
    ``file_score``: 100 × the mean of the file's own per-pair decisions (its ``score``
    column), which the recomputed ``score`` must equal.
    """
    tables = []
    for model, language in DUTCH_SCORE_MODELS.items():
        scores = load_dutch_crows_scores(model)
        table = compute("crows", scored=scores, n_bootstrap=n_bootstrap, seed=seed).groups
        own = [100.0 * scores["stereotyped"].mean()] + [
            100.0 * scores.loc[scores.bias_type == b, "stereotyped"].mean()
            for b in table.bias_type.iloc[1:]]
        tables.append(table.assign(model=model, language=language, file_score=own))
    out = pd.concat(tables, ignore_index=True)
    return out[["model", "language"] + [c for c in out.columns if c not in ("model", "language")]]


# ------------------------------------------------------------------ the notebook's parameters

def _aligned_datasets() -> tuple[str, ...]:
    return tuple(d for d, languages in DATASETS.items() if len(languages) > 1)


def _check_12_crows_languages(*, model, dataset, languages, language_override, method, revision,
                              device, dtype, batch_tokens):
    published_only(model, revision, device, dtype, batch_tokens)
    if model == "published":
        if dataset != "crows-pairs-dutch":
            raise ParameterError(f"published per-pair scores exist for crows-pairs-dutch only; "
                                 f"set model to score {dataset}")
        return
    try:
        compared = languages_to_compare(dataset, languages)
    except CrowsPairsError as err:
        raise ParameterError(str(err)) from None
    registry = load_registry()
    for language in compared:
        check_model_language(model, language, language_override, registry)
    refusal = crows_method_refusal(method, model_kind(model, registry))
    if refusal:
        raise ParameterError(f"{refusal} ({model})")


#: The parameters of notebook 12_crows_languages: their help, allowed values and checks.
NOTEBOOK_PARAMETERS: Notebook = Notebook({
    "model": free("published: the Dutch authors' per-pair scores; else a " + SCORED_MODEL),
    "revision": free("hub branch, tag or 40-hex commit; empty: the registered revision, else "
                     "main (model not published)"),
    "device": DEVICE,
    "dtype": DTYPE,
    "batch_tokens": BATCH_TOKENS,
    "dataset": choice("dataset with aligned languages: {values}", _aligned_datasets),
    "languages": free("languages of the dataset to compare (two or more); empty: all of them"),
    "language_override": LANGUAGE_OVERRIDE,
    "subset": free("bias types to keep; empty: all"),
    "method": choice("{values}; empty: by the model's kind", METHODS, empty=True),
    "max_pairs": integer("a scored model: score the same sample of at most this many pairs "
                         "in every language, stratified by bias type and drawn with `seed` "
                         "({range}; 0: all)"),
    "published_groups": free("published models compared over the shared pairs (model "
                             "published only)"),
    "n_bootstrap": integer("bootstrap resamples for the confidence intervals ({range}; 0: "
                           "none)", default="polybias.stats.N_BOOTSTRAP"),
    "seed": integer("seed of the pair sample and the bootstrap ({range})"),
    "output_dir": OUTPUT_DIR,
    "table_file": free(TABLE_FILE.format("crows-languages_published")),
}, _check_12_crows_languages)
