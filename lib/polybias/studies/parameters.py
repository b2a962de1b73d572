"""The checks of every notebook's parameters, one call per notebook.

A notebook calls :func:`check_parameters` with its name and its parameters right after
the parameters cell, so a bad value stops the run before anything is loaded or written,
with a one-line error naming the notebook and the parameter. The checks live here, not in
the notebooks, so tests reach them.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from typing import Any


class ParameterError(ValueError):
    """A notebook parameter with a value the notebook cannot run with."""


def _one_of(name: str, value: Any, allowed, empty_ok: bool = False) -> None:
    if empty_ok and not value:
        return
    if value not in allowed:
        raise ParameterError(f"{name} must be one of {tuple(allowed)}"
                             f"{' or empty' if empty_ok else ''}, got {value!r}")


def _positive_int(name: str, value: Any, minimum: int = 1) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        what = "a positive integer" if minimum == 1 else "a non-negative integer" \
            if minimum == 0 else f"an integer of at least {minimum}"
        raise ParameterError(f"{name} must be {what}, got {value!r}")


def _probability(name: str, value: Any) -> None:
    if not isinstance(value, int | float) or not 0.0 <= value <= 1.0:
        raise ParameterError(f"{name} must be a probability, got {value!r}")


def _language(model: str, language: str, language_override: bool) -> None:
    from ..models import check_language

    check_language(model, language, language_override)


def _planted_static_name() -> str:
    from ..planted.static import NAME

    return NAME


def _01_weat(*, model, model_path, model_format, language, language_override, on_missing,
             ddof, alternative, n_permutations, exact_limit, seed):
    from ..metrics.weat import check_weat_options

    check_weat_options(on_missing=on_missing, ddof=ddof, alternative=alternative,
                       n_permutations=n_permutations, exact_limit=exact_limit, seed=seed)
    _one_of("model_format", model_format, ("word2vec-text", "word2vec-binary", "glove-text"),
            empty_ok=True)
    if not model_path and model != _planted_static_name():
        _language(model, language, language_override)


def _02_seat(*, language, tests, pooling, ddof, alternative, n_permutations, exact_limit, seed):
    from ..engines.embeddings import SENTENCE_POOLINGS
    from ..metrics.seat import SEAT_TESTS
    from ..metrics.weat import check_weat_options

    check_weat_options(ddof=ddof, alternative=alternative, n_permutations=n_permutations,
                       exact_limit=exact_limit, seed=seed)
    _one_of("pooling", pooling, SENTENCE_POOLINGS)
    tests = [tests] if isinstance(tests, str) else list(tests)
    unknown = [t for t in tests if t not in SEAT_TESTS] if language == "en" else []
    if unknown:
        raise ParameterError(f"unknown SEAT tests {unknown}; known: {', '.join(SEAT_TESTS)}")


def _03_ceat(*, model, language, language_override, alternative, pooling, lengths, sample_sets,
             seed, n_samples, corpus, planted_p):
    from ..data import text
    from ..engines.embeddings import WORD_POOLINGS
    from ..metrics.ceat import ALTERNATIVES

    if model != _planted_static_name():
        _language(model, language, language_override)
    _one_of("alternative", alternative, ALTERNATIVES)
    _one_of("pooling", pooling, WORD_POOLINGS)
    for length in lengths:
        text.parse_length(length)
    for mode in sample_sets:
        text.sample_seed(seed, mode)
    if not isinstance(n_samples, int) or n_samples < 2:
        raise ParameterError("n_samples must be at least 2 (random effects need several samples)")
    if not corpus and not planted_p:
        raise ParameterError("give a corpus or at least one planted strength in planted_p")


def _04_logprob_context(*, model, templates, mode, planted_p, x, y, a, b):
    from ..metrics.logprob import MODES
    from .inputs import ANALYTIC, PLANTED

    _one_of("mode", mode, MODES)
    _probability("planted_p", planted_p)
    if len({x, y}) != 2 or len({a, b}) != 2:
        raise ParameterError("the two target groups and the two attribute groups must differ")
    if model == PLANTED and templates == "seed000_bn":
        raise ParameterError(f"model {PLANTED!r} (a 64-token window, trained on the planted "
                             f"sentences) cannot read the study's passages of {templates!r}; use "
                             f"model={ANALYTIC!r} (built from the book) or a hub model")


def _05_crows_pairs(*, model, language, language_override, method):
    from ..metrics.crows import METHODS

    _language(model, language, language_override)
    _one_of("method", method, METHODS, empty_ok=True)


def _06_categorical_bias(*, mode, ddof, kl_scale, top_k):
    from ..metrics.catbias import SCALES
    from ..metrics.logprob import MODES

    _one_of("mode", mode, MODES)
    _one_of("ddof", ddof, (0, 1))
    _one_of("kl_scale", kl_scale, SCALES)
    _positive_int("top_k", top_k)


def _07_cultural_interactions(*, identity_slots, n_adjectives):
    if not identity_slots:
        raise ParameterError("identity_slots must name at least one slot")
    _positive_int("n_adjectives", n_adjectives)


def _08_hidden_states(*, templates, template, slot):
    from .inputs import template_book

    if slot not in template_book(templates).template(template).slots:
        raise ParameterError(f"template {template!r} has no slot {slot!r}")


def _09_debiasing(*, language, tables, scope, ddof, extra_language, n_permutations):
    from .debiasing import load_spec

    _one_of("scope", scope, ("all", "targets"))
    _one_of("ddof", ddof, (0, 1))
    _one_of("extra_language", extra_language, ("hi", "bn"))
    _positive_int("n_permutations", n_permutations)
    spec = load_spec(language)
    unknown = [t for t in tables if t not in spec.tables]
    if unknown:
        raise ParameterError(f"tables not in {language}/debias.yaml: {unknown}; defined: "
                             f"{list(spec.tables)}")


def _10_validity(*, alpha, too_high, power_target):
    for name, value in (("alpha", alpha), ("too_high", too_high), ("power_target", power_target)):
        if not isinstance(value, int | float) or not 0 < value < 1:
            raise ParameterError(f"{name} must be in (0, 1), got {value!r}")
    if not alpha < too_high:
        raise ParameterError(f"need alpha < too_high, got alpha={alpha!r}, too_high={too_high!r}")


def _11_agreement(*, seeds):
    _positive_int("seeds", seeds)


def _12_crows_languages(*, model, dataset, method, revision="", device="auto", dtype="auto",
                        batch_tokens=0):
    from ..metrics.crows import METHODS

    if model == "published" and dataset != "crows-pairs-dutch":
        raise ParameterError(f"published per-pair scores exist for crows-pairs-dutch only; set "
                             f"model to score {dataset}")
    if model == "published" and (revision or device != "auto" or dtype != "auto" or batch_tokens):
        raise ParameterError("revision, device, dtype and batch_tokens apply to a model that is "
                             "scored, not to model=published")
    _one_of("method", method, METHODS, empty_ok=True)


def _13_external_validity(*, outcomes, mlm_women, mlm_men):
    from ..data.census import OUTCOMES

    for name in outcomes:
        if name not in OUTCOMES:
            raise ParameterError(f"outcomes must be among {OUTCOMES}, got {name!r}")
    if len(mlm_women) != len(mlm_men) or not mlm_women:
        raise ParameterError(f"mlm_women and mlm_men must be non-empty and of equal length, got "
                             f"{mlm_women}, {mlm_men}")


def _14_stereoset(*, model, language, languages, language_override, published_model, tasks,
                  intersentence, aggregate, limit, n_bootstrap, revision="", device="auto", dtype="auto",
                  batch_tokens=0):
    from ..data.stereoset import LANGUAGES, TASKS
    from ..metrics.stereoset import AGGREGATES, INTERSENTENCE

    _one_of("language", language, LANGUAGES)
    for lang in languages:
        _one_of("languages", lang, LANGUAGES)
    tasks = [tasks] if isinstance(tasks, str) else list(tasks)
    if not tasks or any(t not in TASKS for t in tasks):
        raise ParameterError(f"tasks must be a non-empty list of {TASKS}, got {tasks!r}")
    _one_of("intersentence", intersentence, [i for i in INTERSENTENCE if i != "nsp"], empty_ok=True)
    _one_of("aggregate", aggregate, AGGREGATES)
    _positive_int("limit", limit, minimum=0)
    _positive_int("n_bootstrap", n_bootstrap, minimum=0)
    if model == "published":
        if revision or device != "auto" or dtype != "auto" or batch_tokens:
            raise ParameterError("revision, device, dtype and batch_tokens apply to a model that is "
                                 "scored, not to model=published")
        if not published_model:
            raise ParameterError("published_model must name a published run (without its language)")
    else:  # before the model loads
        for lang in languages or [language]:
            _language(model, lang, language_override)


#: Notebook name → its check; the keyword arguments are the parameters it checks.
CHECKS: dict[str, Callable[..., None]] = {
    "01_weat": _01_weat,
    "02_seat": _02_seat,
    "03_ceat": _03_ceat,
    "04_logprob_context": _04_logprob_context,
    "05_crows_pairs": _05_crows_pairs,
    "06_categorical_bias": _06_categorical_bias,
    "07_cultural_interactions": _07_cultural_interactions,
    "08_hidden_states": _08_hidden_states,
    "09_debiasing": _09_debiasing,
    "10_validity": _10_validity,
    "11_agreement": _11_agreement,
    "12_crows_languages": _12_crows_languages,
    "13_external_validity": _13_external_validity,
    "14_stereoset": _14_stereoset,
}


def check_parameters(notebook: str, **parameters: Any) -> None:
    """Check the parameters of ``notebook`` (``"05_crows_pairs"``); raise a one-line
    :class:`ParameterError` naming the notebook and what is wrong. Checks that belong to
    a lower layer raise that layer's error (an unregistered language for a model:
    :class:`polybias.models.ModelError`; WEAT options: ``ValueError``).

    >>> check_parameters("11_agreement", seeds=3)
    >>> check_parameters("11_agreement", seeds=0)
    Traceback (most recent call last):
    ...
    polybias.studies.parameters.ParameterError: 11_agreement: seeds must be a positive integer, got 0
    >>> check_parameters("06_categorical_bias", mode="word", ddof=0, kl_scale="sum")
    Traceback (most recent call last):
    ...
    polybias.studies.parameters.ParameterError: 06_categorical_bias: missing parameter(s) top_k
    """
    if notebook not in CHECKS:
        raise ParameterError(f"no parameter checks for notebook {notebook!r}; known: "
                             f"{', '.join(sorted(CHECKS))}")
    check = CHECKS[notebook]
    expected = set(inspect.signature(check).parameters)
    missing = sorted(expected - set(parameters))
    extra = sorted(set(parameters) - expected)
    if missing or extra:
        parts = ([f"missing parameter(s) {', '.join(missing)}"] if missing else []) + \
            ([f"unchecked parameter(s) {', '.join(extra)}"] if extra else [])
        raise ParameterError(f"{notebook}: {'; '.join(parts)}")
    try:
        check(**parameters)
    except ParameterError as exc:
        raise ParameterError(f"{notebook}: {exc}") from None
