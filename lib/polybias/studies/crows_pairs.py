"""CrowS-Pairs (notebook 05): the pairs of a registered dataset or the planted minimal
pairs, scored by a model with one run record (:func:`run_crows`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from polybias import models, paths
from polybias.data import published_pair_scores, semantics, sources
from polybias.data.crowspairs import DATASETS, load_crows_pairs
from polybias.data.minimal_pairs import sample_caption, sample_pairs
from polybias.engines.pair_scores import alignment_changes, jsd_attributions, pair_scores
from polybias.engines.scoring import LanguageModel
from polybias.measures import MEASURES, MeasureResult, compute, compute_offered, reads
from polybias.metrics.crows import (
    ALIGNMENTS,
    CAUSAL_BOS,
    METHODS,
    ON_UNMODIFIED,
    CrowsError,
    attribution_words,
    gamboa_table3,
    share_groups,
)
from polybias.models import load_registry
from polybias.planted import synthetic
from polybias.planted.synthetic import minimal_pairs
from polybias.results.records import (
    Record,
    measure_group,
    measure_record,
    model_fields,
    write_record,
)
from polybias.results.report import load_reported, side_by_side
from polybias.stats import N_BOOTSTRAP
from polybias.studies.notebook_parameters import (
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
    model_engine,
    model_kind,
    spoken,
)


def load_pairs(dataset: str, language: str = "en", bias_types: list[str] | None = None,
               n: int = 200, seed: int = 0) -> pd.DataFrame:
    """Pairs to evaluate: a registered CrowS-Pairs dataset, or ``"planted"`` minimal pairs.

    ``"planted"`` pairs come from :func:`polybias.planted.synthetic.minimal_pairs` (``n`` pairs,
    ``seed``) and match the vocabulary of the models trained on planted corpora.
    """
    if dataset == "planted":
        pairs = minimal_pairs(n=n, language=language, seed=seed)
        if bias_types:
            unknown = sorted(set(bias_types) - set(pairs.bias_type))
            if unknown:
                raise CrowsError(f"planted pairs have no bias type {', '.join(unknown)}")
        return pairs

    # drop only broken pairs (empty or identical sentences); keep the benchmark's non-minimal ones
    return load_crows_pairs(dataset, language, bias_types=bias_types or None, on_invalid="drop",
                            max_diff=None)


@dataclass
class CrowsEvaluation:
    """Everything one CrowS evaluation of a model on a pair set computed (plain frames), as
    :func:`run_crows` returns it."""

    scored: pd.DataFrame
    stereotype: pd.DataFrame
    attributed: pd.DataFrame
    jsd: pd.DataFrame
    caption: str = ""  # which pairs were scored (all, or the sample; sample_caption)
    #: every other registered measure of these scored or attributed pairs (:func:`other_measures`)
    others: dict[str, MeasureResult] = field(default_factory=dict)


def share_record(result: MeasureResult, metric: str | None = None, **fields: Any) -> Record:
    """The run record of a share of pairs (``crows``, ``aul``, ``aula``, ``jsd-b``; the
    result of :func:`polybias.measures.compute`): one
    :func:`~polybias.results.records.measure_record`, the overall share under its subset
    (``all``) and one group per bias type (:func:`polybias.metrics.crows.share_groups`).
    ``metric`` keeps a record's name where it is one of the measure's ``record_labels``
    (``crows-jsd``); ``fields`` go to :func:`~polybias.results.records.measure_record`."""
    groups = [measure_group(subset, r) for subset, r in share_groups(result.measure, result.groups,
                                                                     result.options)]
    return measure_record(result, subset=str(result.groups.iloc[0]["bias_type"]), groups=groups,
                          metric=metric, **fields)


def other_measures(method: str, scored: pd.DataFrame, attributed: pd.DataFrame,
                   options: dict[str, Any]) -> dict[str, MeasureResult]:
    """Every registered measure, beside the share of the scoring ``method``
    (:func:`share_measure`) and ``jsd-b``, that reads pairs scored by ``method`` or their JSD
    attributions (:func:`polybias.measures.reads` on its ``scorers``), computed through
    :func:`polybias.measures.compute` with those of ``options`` it takes. A measure added to
    the registry on these inputs is reported by the study with no edit here.

    >>> other_measures("nangia", None, None, {})
    {}
    """
    supplied = {f"polybias.engines.pair_scores.pair_scores(method='{method}')": {"scored": scored},
                "polybias.engines.pair_scores.jsd_attributions": {"attributed": attributed}}
    out = {}
    for name in MEASURES:
        source = reads(name, supplied)
        if source is None or name in (share_measure(method), "jsd-b"):
            continue
        out[name] = compute_offered(name, supplied[source], options)
    return out


def share_measure(method: str) -> str:
    """The registered measure of the share of stereotyped pairs scored by ``method``
    (:data:`polybias.metrics.crows.METHODS`): ``aul`` and ``aula`` for theirs, ``crows``
    (Nangia et al.'s stereotype score) for every other.

    >>> share_measure("aula"), share_measure("bias-bench")
    ('aula', 'crows')
    """
    if method not in METHODS:
        raise CrowsError(f"unknown method {method!r}; use one of {METHODS}")
    return method if method in ("aul", "aula") else "crows"


def run_crows(
    model,
    dataset: str = "planted",
    language: str = "en",
    bias_types: list[str] | None = None,
    method: str | None = None,
    n_pairs: int = 200,
    n_bootstrap: int = N_BOOTSTRAP,
    seed: int = 0,
    compat_fourth_root: bool = False,
    output_dir: str | None = None,
    causal_bos: str = "prepend",
    on_unmodified: str = "raise",
    alignment: str = "metric.py",
    device: str = "auto",
    dtype: str = "auto",
    max_pairs: int = 0,
    **engine,
) -> CrowsEvaluation:
    """Stereotype score and JSD attribution of an LM on a pair set: the registered share
    of stereotyped pairs of the scoring ``method`` (:func:`share_measure`) and ``jsd-b``,
    each overall and per bias type (:func:`polybias.measures.compute`, the result's ``groups``).

    ``model`` is a loaded :class:`polybias.engines.scoring.LanguageModel` or what
    :func:`polybias.models.load` takes (a registered name, a model directory, a hub id),
    loaded then with ``device`` and ``dtype``. ``causal_bos``, ``on_unmodified`` and ``alignment`` go to :func:`pair_scores` (bias-bench
    compat: ``method="bias-bench", causal_bos="first-token", on_unmodified="skip"``;
    ``alignment="metric.py"``, the default, shares the tokens Nangia et al.'s ``metric.py``
    shares, ``"content"`` the ones of the alignment without special tokens).
    ``max_pairs`` (a registered dataset; 0: all): score a sample of at most that many
    pairs, stratified by bias type and drawn with ``seed``
    (:func:`polybias.data.minimal_pairs.sample_pairs`). Writes two run records (``crows``
    and ``crows-jsd``) into ``output_dir`` when given, and one
    :func:`polybias.results.records.measure_record` per other registered measure of the same
    pairs (:func:`other_measures`).
    """
    if method is not None and method not in METHODS:
        raise CrowsError(f"unknown method {method!r}; use one of {METHODS}")
    pairs = load_pairs(dataset, language, bias_types, n_pairs, seed)
    available = len(pairs)
    if max_pairs and dataset != "planted":
        pairs = sample_pairs(pairs, max_pairs, seed)
    lm = model if isinstance(model, LanguageModel) else models.load(model, "lm", device=device, dtype=dtype)
    model = lm.name
    caption = scored_caption(model, dataset, language, len(pairs), available, max_pairs, seed)
    scored = pair_scores(lm, pairs, method, causal_bos=causal_bos, on_unmodified=on_unmodified,
                         alignment=alignment, **engine)
    used = method or ("causal" if lm.kind == "causal" else "nangia")
    share = compute(share_measure(used), scored=scored, n_bootstrap=n_bootstrap, seed=seed)
    attributed = jsd_attributions(lm, pairs, compat_fourth_root, **engine)
    jsd_share = compute("jsd-b", attributed=attributed, n_bootstrap=n_bootstrap, seed=seed)
    stereo, jsd = share.groups, jsd_share.groups
    others = other_measures(used, scored, attributed, {"n_bootstrap": n_bootstrap, "seed": seed})
    if output_dir is not None:
        params = {"dataset": dataset, "bias_types": bias_types or [], "n_pairs": n_pairs,
                  "n_bootstrap": n_bootstrap, "seed": seed}
        if max_pairs and dataset != "planted":
            params["max_pairs"] = max_pairs
        scoring_options = {"method": used, "causal_bos": causal_bos, "on_unmodified": on_unmodified,
                           "alignment": alignment}
        for metric, result, extra in ((None, share, scoring_options),
                                      ("crows-jsd", jsd_share, {"compat_fourth_root": compat_fourth_root})):
            write_record(share_record(result, metric, model=model, language=language, test=dataset,
                                      parameters={**params, **extra}, **model_fields(lm)),
                         paths.output_path(output_dir))
        for result in others.values():
            write_record(measure_record(result, model=model, language=language, test=dataset,
                                        parameters={**params, **scoring_options}, **model_fields(lm)),
                         paths.output_path(output_dir))
    return CrowsEvaluation(scored, stereo, attributed, jsd, caption, others)


def alignment_change_counts(model: str = "minilm-l6",
                            datasets: dict[str, tuple[str, ...]] | None = None,
                            device: str = "auto", dtype: str = "auto") -> pd.DataFrame:
    """How many pairs of each registered dataset share other tokens under ``metric.py``'s
    alignment than under the ``"content"`` alignment (special tokens removed, ``sent_more``
    first), with ``model``'s tokenizer.

    Parameters
    ----------
    model : a registered model whose tokenizer (and text normaliser) is used; default the
        embedded ``minilm-l6`` (uncased WordPiece, as bert-base-uncased).
    datasets : dataset -> languages; default every registered dataset
        (:data:`polybias.data.crowspairs.DATASETS`). Pairs as :func:`load_pairs` reads them
        (broken pairs dropped).
    device, dtype : what the model is loaded with (:func:`polybias.models.load`).

    Returns
    -------
    DataFrame with one row per (dataset, language): ``pairs``, ``changed`` (pairs whose
    shared positions differ, :func:`polybias.engines.pair_scores.alignment_changes`) and
    ``pair_ids`` (theirs, comma-separated).
    """
    encoder = models.load(model, "encoder", device=device, dtype=dtype)
    rows = []
    for dataset, languages in (DATASETS if datasets is None else datasets).items():
        for language in languages:
            pairs = load_pairs(dataset, language)
            changes = alignment_changes(encoder.tokenizer, pairs, normaliser=encoder.normaliser)
            ids = changes.loc[changes.changed, "pair_id"].astype(str).tolist()
            rows.append({"dataset": dataset, "language": language, "pairs": len(pairs),
                         "changed": len(ids), "pair_ids": ", ".join(ids)})
    return pd.DataFrame(rows, columns=["dataset", "language", "pairs", "changed", "pair_ids"])


#: The registered file of seed 001's per-pair GPT-2 scores (:func:`gamboa_gpt2_reproduction`)
GAMBOA_GPT2_SCORES = "gamboa-gpt2-scores"
#: What notebook 05's reproduction part reads (a sweep's ``optional_sources:`` of its runs)
REPRODUCTION_SOURCES = (GAMBOA_GPT2_SCORES,)


def scored_caption(model: str, dataset: str, language: str, n_scored: int, n_available: int,
                   max_pairs: int, seed: int) -> str:
    """The line above a table of scored pairs: the model, the pairs (planted, or the
    registered dataset and language) and how many were scored.

    >>> scored_caption("smollm2", "planted", "en", 20, 20, 0, 0)
    '**smollm2 on planted minimal pairs** (en; generated for the planted-bias models, not a published dataset): 20 pairs.'
    >>> scored_caption("gpt2", "crows-pairs-gamboa", "en", 30, 231, 30, 0)
    '**gpt2 on crows-pairs-gamboa** (en). Pairs: a sample of 30 of the 231 pairs, stratified by bias type (max_pairs = 30, seed 0).'
    """
    if dataset == "planted":
        return (f"**{model} on planted minimal pairs** ({language}; generated for the planted-bias "
                f"models, not a published dataset): {n_scored} pairs.")
    return f"**{model} on {dataset}** ({language}). {sample_caption(n_scored, n_available, max_pairs, seed)}"


def gamboa_gpt2_unavailable() -> str | None:
    """Why :func:`gamboa_gpt2_reproduction` cannot run here (its registered file is in no
    mirror or cache and cannot be downloaded), as one note for the reader naming the source
    and how to provide it (:func:`polybias.data.sources.unavailable_note`), or None when it
    can. A notebook run offline then shows the note instead of failing."""
    return sources.unavailable_note(REPRODUCTION_SOURCES, "the reproduction of seed 001's GPT-2 row")


def gamboa_gpt2_reproduction() -> pd.DataFrame:
    """Seed 001's GPT-2 row of Table 3 re-aggregated from its published per-pair S_JSD
    (:func:`polybias.data.published_pair_scores.load_gamboa_gpt2_scores`, eq. 6:
    :func:`polybias.metrics.crows.gamboa_table3`) beside the paper's values, twice: eq. 6
    as written, and with |S_JSD| ≤ 1e-5 counted as a tie (column ``aggregation``)."""
    scores = published_pair_scores.load_gamboa_gpt2_scores()
    paper = load_reported("gamboa2024_table3", model="gpt2").rename(columns={"value": "score"})
    rows = []
    for label, atol in (("eq. 6 as written", 0.0), ("|S_JSD| <= 1e-5 is a tie", 1e-5)):
        table = gamboa_table3(scores, atol=atol)[["bias_type", "n", "stereotyped", "ties", "score"]]
        rows.append(side_by_side(table, paper[["bias_type", "score"]], on="bias_type",
                                 value="score").assign(aggregation=label))
    return pd.concat(rows, ignore_index=True)


def score_summary(evaluation: CrowsEvaluation) -> pd.DataFrame:
    """Per bias type of a :func:`run_crows` evaluation: n, the stereotype score with its
    interval, binomial p and ties, and the JSD stereotype score (``jsd_B``)."""
    return evaluation.stereotype[["bias_type", "n", "score", "ci_low", "ci_high", "binom_p", "ties"]].merge(
        evaluation.jsd[["bias_type", "score"]].rename(columns={"score": "jsd_B"}), on="bias_type")


def bias_categories(evaluation: CrowsEvaluation, top: int = 10, min_share: float = 0.01) -> pd.DataFrame:
    """The ``top`` Empath categories of the words that carry the bias in ``evaluation``
    (:func:`polybias.metrics.crows.attribution_words`,
    :func:`polybias.data.semantics.category_shares`), a category counted when it holds at
    least ``min_share`` of the words (and at least one)."""
    words = attribution_words(evaluation.attributed)
    return semantics.category_shares(words, min_count=max(1, round(min_share * len(words)))).head(top)


# ------------------------------------------------------------------ the notebook's parameters

def _crows_datasets() -> tuple[str, ...]:
    return ("planted", *DATASETS)


def _pair_languages(dataset: str) -> tuple[str, ...]:
    return synthetic.LANGUAGES if dataset == "planted" else DATASETS[dataset]


def _check_05_crows_pairs(*, model, dataset, language, language_override, method):
    if language not in _pair_languages(dataset):
        raise ParameterError(f"dataset {dataset} has no language {language!r}; it has "
                             f"{', '.join(_pair_languages(dataset))}")
    registry = load_registry()
    check_model_language(model, language, language_override, registry)
    refusal = crows_method_refusal(method, model_kind(model, registry))
    if refusal:
        raise ParameterError(f"{refusal} ({model})")


#: The parameters of notebook 05_crows_pairs: their help, allowed values and checks.
NOTEBOOK_PARAMETERS: Notebook = Notebook({
    "model": free(SCORED_MODEL),
    **model_engine(),
    "dataset": choice("planted minimal pairs or a registered CrowS-Pairs dataset: {values}",
                      _crows_datasets),
    "language": free(f"language of the dataset (planted: {spoken(synthetic.LANGUAGES)}; a "
                     f"dataset: its own, polybias.data.crowspairs.DATASETS)"),
    "language_override": LANGUAGE_OVERRIDE,
    "subset": free("bias types to keep; empty: all"),
    "method": choice("{values}; empty: by the model's kind", METHODS, empty=True),
    "n_pairs": integer("number of planted pairs (dataset planted only; {range})", low=1),
    "max_pairs": integer("a dataset: score a sample of at most this many pairs, stratified "
                         "by bias type and drawn with `seed` ({range}; 0: all)"),
    "n_bootstrap": integer("bootstrap resamples for the confidence intervals ({range}; 0: "
                           "none)", default="polybias.stats.N_BOOTSTRAP"),
    "seed": integer("seed of the pair draw and the bootstrap ({range})"),
    "compat_fourth_root": free("seed-001 code's extra square root in the JSD"),
    "causal_bos": choice("causal LMs: {values} (prepend: BOS before every sentence; "
                         "first-token: bias-bench compat)", CAUSAL_BOS),
    "on_unmodified": choice("bias-bench: a pair with no modified token: {values} (skip: "
                            "bias-bench compat)", ON_UNMODIFIED),
    "alignment": choice("nangia/bias-bench on masked LMs: {values} (metric.py: the "
                        "reference's shared tokens; content: special tokens removed, "
                        "sent_more first)", ALIGNMENTS),
    "output_dir": OUTPUT_DIR,
    "reproduce": free("recompute seed 001's GPT-2 Table 3 row from its shipped per-pair "
                      "scores"),
    "table_file": free(TABLE_FILE.format("crows_planted-mlm")),
}, _check_05_crows_pairs)
