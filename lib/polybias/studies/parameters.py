"""Every notebook's parameters, declared once: their help, allowed values and ranges.

:data:`NOTEBOOKS` maps each notebook to a :class:`Notebook`: one :class:`Parameter` per
parameter of its cell tagged ``parameters`` (the help, the allowed values or the numeric
range) and the checks that relate several parameters. Allowed values the library knows
(datasets, methods, languages, poolings, ...) are read from the library, never re-typed.

Two things read the declaration:

* :func:`check_parameters`, which a notebook calls with its name and its parameters right
  after the parameters cell, so a bad value stops the run before anything is loaded or
  written, with a one-line error naming the notebook, the parameter and what it may be;
* the help comments of the parameters cells, which are generated from it:
  ``python -m polybias.studies.parameters`` reports every comment that differs from its
  declaration (exit status 1) and ``--write`` rewrites them, so the help cannot drift.
"""

from __future__ import annotations

import argparse
import ast
import importlib
import inspect
import io
import math
import re
import sys
import tokenize
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from polybias import paths
from polybias.data import census, eurogest, gest, stereoset, text
from polybias.data.crowspairs import DATASETS, CrowsPairsError, languages_to_compare
from polybias.engines import eurogest_scores, template_scores
from polybias.engines import hidden_states as hidden_states_engine
from polybias.engines.embeddings import SENTENCE_POOLINGS, WORD_POOLINGS
from polybias.metrics import catbias, ceat, crows, seat
from polybias.metrics.gest import BASES, INTERVALS
from polybias.metrics.stereoset import AGGREGATES, INTERSENTENCE
from polybias.metrics.weat import check_weat_options
from polybias.models import (
    ANALYTIC,
    PLANTED,
    PLANTED_STATIC,
    check_language,
    load_registry,
    resolve_model,
)
from polybias.planted import synthetic
from polybias.studies import debiasing, validity_designs
from polybias.studies.template_books import template_book


class ParameterError(ValueError):
    """A notebook parameter with a value the notebook cannot run with."""


def _spoken(values: Sequence[Any], conjunction: str = "or") -> str:
    """``("a", "b", "c")`` -> ``"a, b or c"``."""
    words = [str(v) for v in values]
    return words[0] if len(words) == 1 else f"{', '.join(words[:-1])} {conjunction} {words[-1]}"


@dataclass(frozen=True)
class Parameter:
    """One notebook parameter: its help and the values it may take.

    Parameters
    ----------
    help : str
        The help comment of the parameters cell; ``{values}`` is replaced by the allowed
        values (``"a, b or c"``) and ``{range}`` by the numeric range (``">= 0"``).
    values : sequence or callable, optional
        The allowed values, or a function returning them (read from the library).
    empty : bool
        Whether the empty value (``""``, ``[]``) is allowed too.
    each : bool
        A list parameter whose every item must be one of ``values`` or in the range.
    low, high : float, optional
        The numeric range; ``None``: unbounded on that side.
    integer : bool
        Whether the value must be an integer (``bool`` is not one).
    open_range : bool
        Whether ``low`` and ``high`` themselves are excluded.
    default : str, optional
        The dotted name of the library constant the parameter's default is (e.g.
        ``"polybias.stats.N_BOOTSTRAP"``): the parameters cell writes its value, checked and
        rewritten as the help is (:func:`help_differences`), so a default is stated once.
    """

    help: str
    values: Sequence[Any] | Callable[[], Sequence[Any]] | None = None
    empty: bool = False
    each: bool = False
    low: float | None = None
    high: float | None = None
    integer: bool = False
    open_range: bool = False
    default: str | None = None

    def default_value(self) -> Any:
        """The value of the library constant :attr:`default` names.

        >>> _integer("x", default="polybias.stats.N_BOOTSTRAP").default_value()
        1000
        """
        module, _, name = (self.default or "").rpartition(".")
        try:
            return getattr(importlib.import_module(module), name)
        except (ImportError, AttributeError, ValueError) as exc:
            raise ParameterError(f"the declared default {self.default!r} names no library constant") from exc

    @property
    def ruled(self) -> bool:
        """Whether the parameter has allowed values or a range to check."""
        return self.values is not None or self.low is not None or self.high is not None \
            or self.integer

    def allowed(self) -> tuple[Any, ...]:
        """The allowed values (empty tuple when the parameter has none)."""
        values = self.values() if callable(self.values) else self.values
        return tuple(values or ())

    def range_text(self, words: bool = False) -> str:
        """The range: ``">= 1"``, ``"in [0, 1]"``, ``"in (0, 1)"``; with ``words``
        ``"at least 1"`` (a help comment holds no ``=``: papermill would skip its line)."""
        if self.low is not None and self.high is not None:
            left, right = ("(", ")") if self.open_range else ("[", "]")
            return f"in {left}{self.low:g}, {self.high:g}{right}"
        if self.low is not None:
            if words:
                return f"{'more than' if self.open_range else 'at least'} {self.low:g}"
            return f"{'>' if self.open_range else '>='} {self.low:g}"
        if self.high is not None:
            if words:
                return f"{'less than' if self.open_range else 'at most'} {self.high:g}"
            return f"{'<' if self.open_range else '<='} {self.high:g}"
        return ""

    def render(self) -> str:
        """The help comment, with the allowed values and the range filled in."""
        values = _spoken(self.allowed(), "and" if self.each else "or") if self.values is not None \
            else ""
        return self.help.format(values=values,
                                range=self.range_text(words=True))

    def check(self, name: str, value: Any) -> None:
        """Raise :class:`ParameterError` unless ``value`` is allowed for parameter ``name``."""
        if not self.ruled:
            return
        if self.empty and (value is None or (isinstance(value, str | list | tuple) and not value)):
            return
        if self.each:
            items = [value] if isinstance(value, str) else value
            if not isinstance(items, list | tuple):
                raise ParameterError(f"{name} must be a list, got {value!r}")
            if not items and not self.empty:
                raise ParameterError(f"{name} must not be empty")
            for item in items:
                self._check_one(name, item, among=True)
        else:
            self._check_one(name, value, among=False)

    def _check_one(self, name: str, value: Any, among: bool) -> None:
        if self.values is not None:
            allowed = self.allowed()
            if value not in allowed or isinstance(value, bool) != any(isinstance(a, bool)
                                                                      for a in allowed):
                what = "among" if among else "one of"
                raise ParameterError(f"{name} must be {what} {allowed}"
                                     f"{' or empty' if self.empty else ''}, got {value!r}")
            return
        kind = "an integer" if self.integer else "a number"
        bounds = self.range_text()
        wanted = f"{name} must be {kind}{' ' + bounds if bounds else ''}"
        if isinstance(value, bool) or not isinstance(value, int if self.integer else int | float):
            raise ParameterError(f"{wanted}, got {value!r}")
        if not self.integer and not math.isfinite(value):
            raise ParameterError(f"{wanted}, got {value!r}")
        below = self.low is not None and (value <= self.low if self.open_range else value < self.low)
        above = self.high is not None and (value >= self.high if self.open_range else value > self.high)
        if below or above:
            raise ParameterError(f"{wanted}, got {value!r}")


@dataclass(frozen=True)
class Notebook:
    """A notebook's parameters, in the order of its parameters cell, and the checks that
    relate several of them (``check``; its keyword arguments are the parameters it reads)."""

    parameters: dict[str, Parameter]
    check: Callable[..., None] | None = None
    checked: tuple[str, ...] = field(init=False)

    def __post_init__(self) -> None:
        together = tuple(inspect.signature(self.check).parameters) if self.check else ()
        unknown = [n for n in together if n not in self.parameters]
        if unknown:
            raise ParameterError(f"the check reads undeclared parameter(s) {unknown}")
        ruled = tuple(n for n, p in self.parameters.items() if p.ruled)
        object.__setattr__(self, "checked", tuple(dict.fromkeys(ruled + together)))


# ------------------------------------------------------------------ shared declarations

def _choice(help: str, values, empty: bool = False) -> Parameter:
    return Parameter(help, values=values, empty=empty)


def _integer(help: str, low: float | None = 0, high: float | None = None,
             default: str | None = None) -> Parameter:
    return Parameter(help, low=low, high=high, integer=True, default=default)


def _probability(help: str, default: str | None = None) -> Parameter:
    return Parameter(help, low=0, high=1, default=default)


def _free(help: str) -> Parameter:
    return Parameter(help)


def _planted_languages() -> tuple[str, ...]:
    return synthetic.LANGUAGES


def _crows_datasets() -> tuple[str, ...]:
    return ("planted", *DATASETS)


def _aligned_datasets() -> tuple[str, ...]:
    return tuple(d for d, languages in DATASETS.items() if len(languages) > 1)


#: The formats of a static embedding file a notebook names by path.
STATIC_FILE_FORMATS = ("word2vec-text", "word2vec-binary", "glove-text")
_HUB = "a model directory or a hub id"
REVISION = _free("hub branch, tag or 40-hex commit; empty: the registered revision, else main")
DEVICE = _free("auto (CUDA when present; the CPU for embedded and planted models), cpu, cuda or "
               "cuda:N")
DTYPE = _free("auto (bfloat16 on CUDA for decoder families trained in it, else float32), float32, "
              "bfloat16 or float16 (CUDA only)")
BATCH_TOKENS = _integer("padded tokens per forward pass; 0: auto (8192 on the CPU, from free GPU "
                        "memory on CUDA)")
LANGUAGE_OVERRIDE = _free("run a registered model on a language its entry does not list "
                          "(recorded in the run)")
DDOF_WEAT = _choice("std degrees of freedom of the effect size (1 Caliskan, 0 WEFE): {values}",
                    (1, 0))
ALTERNATIVE = _choice("permutation test: {values}", ceat.ALTERNATIVES)
PLANTED_STRENGTH = Parameter("planted-static: strength of the planted association (0: none; "
                             "{range})", low=0)
TABLE_FILE = "where to write the tables, e.g. paper/tables/{}.md"
OUTPUT_DIR = _free("run records, relative to the project root")


def _model_engine() -> dict[str, Parameter]:
    return {"revision": REVISION, "device": DEVICE, "dtype": DTYPE, "batch_tokens": BATCH_TOKENS}


# ------------------------------------------------------------------ checks of several parameters

def _language(model: str, language: str, language_override: bool,
              registry: dict[str, dict[str, Any]] | None = None) -> None:
    check_language(model, language, language_override, registry)


def _model_kind(model: str, registry: dict[str, dict[str, Any]]) -> str | None:
    """The registered kind of ``model`` (None for a directory or hub id: read at load)."""
    return resolve_model(model, registry)[1].get("kind")


def crows_method_refusal(method: str, kind: str | None) -> str | None:
    """Why CrowS-Pairs ``method`` cannot score a model of ``kind``, or None when it can.

    ``kind`` is a registered model's kind (None: unknown before loading, so any method
    is let through to the scorer). The rules are those of
    :func:`polybias.engines.pair_scores.pair_scores`.

    >>> crows_method_refusal("aul", "causal")
    "method 'aul' applies to masked LMs, not to a causal model"
    >>> crows_method_refusal("bias-bench", "causal")
    """
    if kind is None:
        return None
    if kind not in ("mlm", "causal"):
        return f"CrowS-Pairs scores language models (mlm or causal), not a {kind} model"
    if not method:
        return None
    if method in crows.UNMASKED and kind != "mlm":
        return f"method {method!r} applies to masked LMs, not to a {kind} model"
    if method != "bias-bench" and (method in crows.CAUSAL_METHODS) != (kind == "causal"):
        return f"method {method!r} does not apply to a {kind} model"
    return None


def _pair_languages(dataset: str) -> tuple[str, ...]:
    return synthetic.LANGUAGES if dataset == "planted" else DATASETS[dataset]


def _check_01_weat(*, model, model_path, language, language_override, on_missing, ddof,
                   alternative, n_permutations, exact_limit, seed):
    check_weat_options(on_missing=on_missing, ddof=ddof, alternative=alternative,
                       n_permutations=n_permutations, exact_limit=exact_limit, seed=seed)
    if not model_path and model != PLANTED_STATIC:
        _language(model, language, language_override)


def _check_02_seat(*, language, tests):
    tests = [tests] if isinstance(tests, str) else list(tests)
    unknown = [t for t in tests if t not in seat.SEAT_TESTS] if language == "en" else []
    if unknown:
        raise ParameterError(f"unknown SEAT tests {unknown}; known: {', '.join(seat.SEAT_TESTS)}")


def _check_03_ceat(*, model, language, language_override, lengths, sample_sets, seed, corpus,
                   planted_p):
    if model != PLANTED_STATIC:
        _language(model, language, language_override)
    for length in lengths:
        text.parse_length(length)
    for mode in sample_sets:
        text.sample_seed(seed, mode)
    if not corpus and not planted_p:
        raise ParameterError("give a corpus or at least one planted strength in planted_p")


def _check_04_logprob_context(*, model, templates, x, y, a, b):
    if len({x, y}) != 2 or len({a, b}) != 2:
        raise ParameterError("the two target groups and the two attribute groups must differ")
    if model == PLANTED and templates == "seed000_bn":
        raise ParameterError(f"model {PLANTED!r} (a 64-token window, trained on the planted "
                             f"sentences) cannot read the study's passages of {templates!r}; use "
                             f"model={ANALYTIC!r} (built from the book) or a hub model")


def _check_05_crows_pairs(*, model, dataset, language, language_override, method):
    if language not in _pair_languages(dataset):
        raise ParameterError(f"dataset {dataset} has no language {language!r}; it has "
                             f"{', '.join(_pair_languages(dataset))}")
    registry = load_registry()
    _language(model, language, language_override, registry)
    refusal = crows_method_refusal(method, _model_kind(model, registry))
    if refusal:
        raise ParameterError(f"{refusal} ({model})")


def _check_07_cultural_interactions(*, identity_slots):
    if not identity_slots:
        raise ParameterError("identity_slots must name at least one slot")


def _check_08_hidden_states(*, templates, template, slot):
    if slot not in template_book(templates).template(template).slots:
        raise ParameterError(f"template {template!r} has no slot {slot!r}")


def _check_09_debiasing(*, language, tables):
    spec = debiasing.load_spec(language)
    unknown = [t for t in tables if t not in spec.tables]
    if unknown:
        raise ParameterError(f"tables not in {language}/debias.yaml: {unknown}; defined: "
                             f"{list(spec.tables)}")


def _check_10_validity(*, alpha, too_high):
    if not alpha < too_high:
        raise ParameterError(f"need alpha < too_high, got alpha={alpha!r}, too_high={too_high!r}")


def _published_only(model, revision, device, dtype, batch_tokens):
    if model == "published" and (revision or device != "auto" or dtype != "auto" or batch_tokens):
        raise ParameterError("revision, device, dtype and batch_tokens apply to a model that is "
                             "scored, not to model=published")


def _check_12_crows_languages(*, model, dataset, languages, language_override, method, revision,
                              device, dtype, batch_tokens):
    _published_only(model, revision, device, dtype, batch_tokens)
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
        _language(model, language, language_override, registry)
    refusal = crows_method_refusal(method, _model_kind(model, registry))
    if refusal:
        raise ParameterError(f"{refusal} ({model})")


def _check_13_external_validity(*, mlm_women, mlm_men):
    if len(mlm_women) != len(mlm_men) or not mlm_women:
        raise ParameterError(f"mlm_women and mlm_men must be non-empty and of equal length, got "
                             f"{mlm_women}, {mlm_men}")


def _check_14_stereoset(*, model, language, languages, language_override, published_model,
                        revision, device, dtype, batch_tokens):
    _published_only(model, revision, device, dtype, batch_tokens)
    if model == "published":
        if not published_model:
            raise ParameterError("published_model must name a published run (without its language)")
        return
    registry = load_registry()
    for lang in languages or [language]:  # before the model loads
        _language(model, lang, language_override, registry)


def _check_15_gest(*, model, revision, device, dtype, batch_tokens, limit, max_items):
    _published_only(model, revision, device, dtype, batch_tokens)
    for name, value in (("limit", limit), ("max_items", max_items)):
        if model == "published" and value:
            raise ParameterError(f"{name} applies to a model that is scored, not to model=published")
    if limit and max_items:
        raise ParameterError("give limit (the first sentences) or max_items (a stratified sample), "
                             "not both")


def _check_16_eurogest(*, model, languages, language_override):
    registry = load_registry()
    for lang in languages or eurogest.NEUTRAL_LANGUAGES:  # before the model loads
        _language(model, lang, language_override, registry)


# ------------------------------------------------------------------ the declarations

_SCORED_MODEL = "registered language model (configs/models.yaml or POLYBIAS_MODELS_FILE), " + _HUB

#: Notebook name -> its parameters and their checks.
NOTEBOOKS: dict[str, Notebook] = {
    "01_weat": Notebook({
        "model": _free("registered static model (configs/models.yaml), the name of model_path, "
                       "or planted-static (built from the word lists)"),
        "planted_strength": PLANTED_STRENGTH,
        "model_path": _free("static embedding file used instead of a registered model; "
                            "empty: none"),
        "model_format": _choice("format of model_path: {values}; empty: by suffix",
                                STATIC_FILE_FORMATS, empty=True),
        "language": _free("word-list folder under data/wordlists/"),
        "language_override": LANGUAGE_OVERRIDE,
        "tests": _free("test names; empty: every test of wordlist_file"),
        "wordlist_file": _free("word lists; empty: the language's default (bn: seed000, the "
                               "study's own C1-C9; else weat.yaml); weat.yaml: the project's lists"),
        "variants_file": _free("extra list variants to compare; empty: none"),
        "ddof": DDOF_WEAT,
        "alternative": ALTERNATIVE,
        "n_permutations": _integer("Monte Carlo draws when exact enumeration is too large "
                                   "({range})", low=1, default="polybias.stats.N_PERMUTATIONS"),
        "exact_limit": _integer("enumerate all splits when there are at most this many ({range})", default="polybias.stats.EXACT_LIMIT"),
        "seed": _integer("seed of the Monte Carlo draws ({range})"),
        "on_missing": _choice("words missing from the model's vocabulary: {values}",
                              ("raise", "drop")),
        "reported": _free("paper/reported/NAME.csv; empty: none"),
        "output_dir": _free("run records (relative to the project root)"),
        "table_file": _free("where to write the table (e.g. paper/tables/weat_w2v-gnews.md)"),
    }, _check_01_weat),
    "02_seat": Notebook({
        "model": _free("registered encoder or MLM (configs/models.yaml or POLYBIAS_MODELS_FILE), "
                       "a model directory or a hub id; planted-static: a bag-of-words encoder "
                       "over a planted table built from the word lists (hi, bn)"),
        "planted_strength": PLANTED_STRENGTH,
        **_model_engine(),
        "language": _free("en: May et al.'s SEAT files; hi, bn: the language's word lists in "
                          "data/templates/seat_<lang>.yaml"),
        "wordlist_file": _free("hi/bn word lists (data/wordlists/<lang>/); empty: the language's "
                               "default"),
        "tests": _free("SEAT test names (polybias.metrics.seat.SEAT_TESTS); empty: all of them"),
        "pooling": _choice("sentence vector: {values}; model: the model's own, mean: non-special "
                           "tokens, first-piece: sent-bias compat", SENTENCE_POOLINGS),
        "special_tokens": _free("encode with [CLS]/[SEP]; False with first-piece: sent-bias's "
                                "encoder (compat)"),
        "layer": _integer("hidden layer (-1 last, 0 embeddings)", low=None),
        "ddof": _choice("std degrees of freedom of the effect size (1 Caliskan/May, 0 WEFE): "
                        "{values}", (1, 0)),
        "alternative": ALTERNATIVE,
        "n_permutations": _integer("Monte Carlo re-splits when exact enumeration is too large "
                                   "({range})", low=1, default="polybias.stats.N_PERMUTATIONS_SHORT"),
        "exact_limit": _integer("enumerate all re-splits when there are at most this many "
                                "({range})", default="polybias.stats.EXACT_LIMIT"),
        "seed": _integer("seed of the Monte Carlo draws ({range})"),
        "cache": _free("read/store sentence vectors in the embedding cache"),
        "reported": _free("paper/reported/NAME.csv (one model, keyed by test) to print beside the "
                          "effect sizes, e.g. sadhu2024_bangla_seat (BanglaBERT); empty: none"),
        "output_dir": _free("run records (relative to the project root)"),
        "table_file": _free("where to write the table (e.g. paper/tables/seat_minilm-l6.md)"),
    }, _check_02_seat),
    "03_ceat": Notebook({
        "model": _free("registered encoder or MLM (configs/models.yaml or POLYBIAS_MODELS_FILE), "
                       "a model directory or a hub id; planted-static: an analytic contextual "
                       "encoder over a table planted from the word lists (bn, hi)"),
        **_model_engine(),
        "language": _free("language of the corpus and word lists"),
        "language_override": LANGUAGE_OVERRIDE,
        "corpus": _free("text file or folder to extract sentences from; empty: generated planted "
                        "corpora"),
        "wordlist_file": _free("word lists (used with corpus); empty: the language's default (bn: "
                               "seed000, the study's own C1-C9; else weat.yaml); weat.yaml: the "
                               "project's lists"),
        "tests": _free("tests of wordlist_file to run (used with corpus); empty: all"),
        "planted_p": Parameter("planted association strengths, one generated corpus each (each "
                               "{range})", low=0, high=1, each=True, empty=True),
        "n_sentences": _integer("sentences per generated corpus ({range})", low=1),
        "n_words": _integer("words per set of the planted test (male, female, career, family; "
                            "{range})", low=1),
        "lengths": _free("segment lengths in words; \">75\": the whole sentence"),
        "n_samples": _integer("N: occurrences drawn per word and CEAT samples (seed 000 uses 1000 "
                              "and 5000; {range}: random effects need several samples)", low=2),
        "sample_sets": _free("fixed: same occurrences at every length; random: redrawn"),
        "strict_lengths": _free("draw only sentences with at least L words (more than K for "
                                "\">K\")"),
        "max_per_word": _integer("occurrences kept per word while streaming the corpus (reservoir; "
                                 "{range})", low=1),
        "alternative": _choice("p-value of CES: {values} (two-sided: seed 000; greater: Guo & "
                               "Caliskan code)", ceat.ALTERNATIVES),
        "alpha": Parameter("significance level marked in the tables (seed 000; {range})", low=0,
                           high=1, open_range=True),
        "layer": _integer("hidden layer (-1 last)", low=None),
        "pooling": _choice("word vector over its pieces: {values}", WORD_POOLINGS),
        "seed": _integer("seed of corpora and sample sets ({range})"),
        "cache": _free("read/store vectors in the embedding cache"),
        "output_dir": _free("run records (relative to the project root)"),
        "table_file": _free("where to write the tables (e.g. paper/tables/ceat_minilm-l6.md)"),
    }, _check_03_ceat),
    "04_logprob_context": Notebook({
        "model": _free("registered masked LM, a model directory or a hub id; planted: the trained "
                       "planted Bangla MLM (polybias.planted.synthetic); planted-analytic: the "
                       "analytic MLM built from the template book (polybias.planted.analytic)"),
        "revision": REVISION,
        "device": DEVICE,
        "dtype": _free("auto (bfloat16 on CUDA for decoder families trained in it, float64 for the "
                       "planted models, else float32), float32, bfloat16 or float16 (CUDA only)"),
        "batch_tokens": BATCH_TOKENS,
        "planted_p": _probability("planted association strength when model is planted or "
                                  "planted-analytic (0.5: none; {range})"),
        "templates": _free("template file in data/templates (e.g. logprob_bn), planted_<lang>, or "
                           "seed000_bn (the study's own S1-S5 trait sentences)"),
        "target_list": _free("word list of the target slot"),
        "attribute_list": _free("word list of the attribute slot"),
        "group_feature": _free("entry feature naming a word's group"),
        "x": _free("first target group"),
        "y": _free("second target group"),
        "a": _free("first attribute group"),
        "b": _free("second attribute group"),
        "mode": _choice("target scoring: {values} (word: whole word; first_piece: Kurita / "
                        "seed-000 compat)", template_scores.MODES),
        "prior_at": _choice("first_piece: read the prior at the {values} (target: default; "
                            "attribute: seed 000's code)", template_scores.PRIOR_AT),
        "index_quirk": _choice("first_piece: {values} reads one token before the mask as Kurita "
                               "et al.'s code; empty: none",
                               tuple(q for q in template_scores.INDEX_QUIRKS if q), empty=True),
        "n_permutations": _integer("Monte Carlo draws of the permutation test when not exact "
                                   "({range})", low=1, default="polybias.stats.N_PERMUTATIONS_SHORT"),
        "seed": _integer("seed of the permutation test (and of the planted model's training, or "
                         "the analytic model's codes; {range})"),
        "output_dir": OUTPUT_DIR,
        "table_file": _free(TABLE_FILE.format("logprob_context_planted")),
    }, _check_04_logprob_context),
    "05_crows_pairs": Notebook({
        "model": _free(_SCORED_MODEL),
        **_model_engine(),
        "dataset": _choice("planted minimal pairs or a registered CrowS-Pairs dataset: {values}",
                           _crows_datasets),
        "language": _free(f"language of the dataset (planted: {_spoken(synthetic.LANGUAGES)}; a "
                          f"dataset: its own, polybias.data.crowspairs.DATASETS)"),
        "language_override": LANGUAGE_OVERRIDE,
        "subset": _free("bias types to keep; empty: all"),
        "method": _choice("{values}; empty: by the model's kind", crows.METHODS, empty=True),
        "n_pairs": _integer("number of planted pairs (dataset planted only; {range})", low=1),
        "max_pairs": _integer("a dataset: score a sample of at most this many pairs, stratified "
                              "by bias type and drawn with `seed` ({range}; 0: all)"),
        "n_bootstrap": _integer("bootstrap resamples for the confidence intervals ({range}; 0: "
                                "none)", default="polybias.stats.N_BOOTSTRAP"),
        "seed": _integer("seed of the pair draw and the bootstrap ({range})"),
        "compat_fourth_root": _free("seed-001 code's extra square root in the JSD"),
        "causal_bos": _choice("causal LMs: {values} (prepend: BOS before every sentence; "
                              "first-token: bias-bench compat)", crows.CAUSAL_BOS),
        "on_unmodified": _choice("bias-bench: a pair with no modified token: {values} (skip: "
                                 "bias-bench compat)", crows.ON_UNMODIFIED),
        "alignment": _choice("nangia/bias-bench on masked LMs: {values} (metric.py: the "
                             "reference's shared tokens; content: special tokens removed, "
                             "sent_more first)", crows.ALIGNMENTS),
        "output_dir": OUTPUT_DIR,
        "reproduce": _free("recompute seed 001's GPT-2 Table 3 row from its shipped per-pair "
                           "scores"),
        "table_file": _free(TABLE_FILE.format("crows_planted-mlm")),
    }, _check_05_crows_pairs),
    "06_categorical_bias": Notebook({
        "model": _free("registered masked LM (configs/models.yaml or POLYBIAS_MODELS_FILE), "
                       + _HUB),
        **_model_engine(),
        "templates": _free("template file in data/templates (e.g. catbias_el), or planted_<lang>"),
        "template_names": _free("templates to score; empty: all templates of the file"),
        "target_list": _free("word list of the target slot (for group shares)"),
        "attribute_list": _free("word list of the attribute slot (for group shares)"),
        "group_feature": _free("entry feature that names a word's group (group shares)"),
        "mode": _choice("target scoring: {values} (word: whole word; first_piece: Ahn & Oh / "
                        "Kurita compat)", template_scores.MODES),
        "ddof": _choice("variance over groups: {values} (0: population, the default; 1: sample, "
                        "Ahn & Oh)", (0, 1)),
        "multipiece": _choice("{values}: multi-piece words scored as Ahn & Oh's code (k masks, "
                              "every piece at every mask); empty: by mode",
                              tuple(m for m in catbias.MULTIPIECE if m), empty=True),
        "template_norm": _choice("PLL CB: {values} normalises groups within each template as seed "
                                 "002's code; empty: pooled",
                                 tuple(n for n in catbias.TEMPLATE_NORMS if n), empty=True),
        "kl_scale": _choice("KL: {values} (sum: nats; mean: divided by the vocabulary size, "
                            "seed-002 code)", catbias.SCALES),
        "top_k": _integer("groups listed per template and attribute ({range})", low=1),
        "reproduce": _free("recompute seed-002 and seed-004 published values from shipped data"),
        "seed002_all": _free("also score every category x language of seed 002's templates on the "
                             "model (Tables 1-4; minutes on the CPU)"),
        "output_dir": OUTPUT_DIR,
        "table_file": _free(TABLE_FILE.format("catbias_planted-mlm")),
    }),
    "07_cultural_interactions": Notebook({
        "model": _free("registered masked LM (configs/models.yaml or POLYBIAS_MODELS_FILE), "
                       + _HUB),
        **_model_engine(),
        "templates": _free("template file in data/templates, or planted_interactions_en"),
        "template": _free("the template to score"),
        "identity_slots": _free("slots whose combinations form the groups (at least one)"),
        "attribute_slot": _free("the attribute slot"),
        "attributes": _free("attribute entry ids; empty: the whole list (minus neutral ones)"),
        "neutral_attributes": _free("attribute entries used as neutral base rates; empty: double "
                                    "mask only"),
        "weighted": _free("weight attributes by |VADER compound| (needs words with sentiment)"),
        "n_adjectives": _integer("seed-004 adjectives sampled, stratified by sentiment "
                                 "(reproduction; {range})", low=1),
        "seed": _integer("seed of the samples ({range})"),
        "cell_feature": _free("attribute feature whose values split the attributes into cells for "
                              "the significance test (e.g. sentiment); empty: one cell"),
        "n_permutations": _integer("draws of the significance test of each interaction against "
                                   "its base rate ({range})", low=1, default="polybias.stats.N_PERMUTATIONS_SHORT"),
        "reproduce": _free("seed-004 identity lists and sample sizes from shipped data"),
        "output_dir": OUTPUT_DIR,
        "table_file": _free(TABLE_FILE.format("interactions_planted-mlm")),
    }, _check_07_cultural_interactions),
    "08_hidden_states": Notebook({
        "model": _free("registered encoder or MLM (configs/models.yaml or POLYBIAS_MODELS_FILE), "
                       + _HUB),
        **_model_engine(),
        "templates": _free("template file in data/templates, or seed004_countries (all the "
                           "authors' countries)"),
        "template": _free("template whose identity slot is analysed"),
        "slot": _free("the identity slot"),
        "group_feature": _free("entry feature the groups of the 2-D views come from"),
        "layer_view": _integer("layer whose states are projected (-1: last; all layers flattened "
                               "if 99)", low=None),
        "views": Parameter("2-D views drawn, with their η²: {values} (tsne: chaotic, its layout "
                           "and η² change with the CPU's kernels, so not drawn by default)",
                           values=hidden_states_engine.METHODS, each=True),
        "seed": _integer("seed of the TruncatedSVD and t-SNE projections ({range})"),
        "output_dir": OUTPUT_DIR,
        "table_file": _free(TABLE_FILE.format("hidden_minilm-l6")),
    }, _check_08_hidden_states),
    "09_debiasing": Notebook({
        "model": _free("registered static model (configs/models.yaml) or a file path"),
        "language": _free("word-list folder of the model's language (data/wordlists/)"),
        "tables": _free("experiment tables of debias.yaml to run; empty: all of them"),
        "scope": _choice("{values} (all: debias every word; targets: only the tests' target "
                         "words, seed-003 code)", ("all", "targets")),
        "compare_scope": _free("also run the other scope and show the difference"),
        "ddof": _choice("std degrees of freedom of the WEAT effect size (1 Caliskan, 0 seed-003 "
                        "code): {values}", (1, 0)),
        "n_permutations": _integer("Monte Carlo draws of the WEAT p-value ({range})", low=1, default="polybias.stats.N_PERMUTATIONS_SHORT"),
        "seed": _integer("seed of the p-values, the INLP split and classifiers ({range})"),
        "extra_model": _free("Hindi/Bangla static model: registered name or file path; empty: "
                             "none"),
        "extra_language": _choice("language of extra_model: {values}", ("hi", "bn")),
        "extra_format": _choice("file format of extra_model: {values}; empty: by suffix",
                                STATIC_FILE_FORMATS, empty=True),
        "extra_limit": _integer("read only the first N words of extra_model; 0: all"),
        "reference_lists": _free("also hard-debias with the debiaswe lists (needs the data mirror "
                                 "or network)"),
        "output_dir": OUTPUT_DIR,
        "table_file": _free(TABLE_FILE.format("debias_w2v-gnews")),
    }, _check_09_debiasing),
    "10_validity": Notebook({
        "language": _choice("planted-corpus language: {values}", _planted_languages),
        "summary_dir": _free("committed summary of the validity sweep (make validity)"),
        "alpha": Parameter("significance level of the metrics' own tests ({range})", low=0, high=1,
                           open_range=True, default="polybias.stats.ALPHA"),
        "too_high": Parameter("a false-positive rate the calibration verdict must be able to rule "
                              "out ({range}; above alpha)", low=0, high=1, open_range=True, default="polybias.studies.validity_statistics.TOO_HIGH"),
        "power_target": Parameter("power that defines the minimum detectable bias ({range})",
                                  low=0, high=1, open_range=True, default="polybias.studies.validity_statistics.TARGET_POWER"),
        "table_file": _free(TABLE_FILE.format("validity_en")),
        "figure_prefix": _free("figures/<prefix>_dose_response_<language>.png and _mdb_; empty: "
                               "none"),
        "output_dir": _free("run record, relative to the project root"),
    }, _check_10_validity),
    "11_agreement": Notebook({
        "language": _choice("planted-corpus language: {values}", _planted_languages),
        "ps": Parameter("planted strengths (one model per strength and seed; each {range})",
                        low=0, high=1, each=True),
        "seeds": _integer("seeds per strength (0 .. seeds-1; {range})", low=1),
        "measures": Parameter("measures compared, among {values}",
                              values=lambda: validity_designs.DESIGNS, each=True),
        "lm_n_sentences": _integer("corpus size of the masked LMs ({range})", low=1),
        "lm_n_pairs": _integer("minimal pairs per model ({range})", low=1),
        "weat_n_sentences": _integer("corpus size of word2vec ({range})", low=1),
        "reported": _free("published per-category values of several methods; empty: none"),
        "table_file": _free(TABLE_FILE.format("agreement_en")),
        "figure_file": _free("figure under figures/; empty: none"),
        "output_dir": OUTPUT_DIR,
    }),
    "12_crows_languages": Notebook({
        "model": _free("published: the Dutch authors' per-pair scores; else a " + _SCORED_MODEL),
        "revision": _free("hub branch, tag or 40-hex commit; empty: the registered revision, else "
                          "main (model not published)"),
        "device": DEVICE,
        "dtype": DTYPE,
        "batch_tokens": BATCH_TOKENS,
        "dataset": _choice("dataset with aligned languages: {values}", _aligned_datasets),
        "languages": _free("languages of the dataset to compare (two or more); empty: all of them"),
        "language_override": LANGUAGE_OVERRIDE,
        "subset": _free("bias types to keep; empty: all"),
        "method": _choice("{values}; empty: by the model's kind", crows.METHODS, empty=True),
        "max_pairs": _integer("a scored model: score the same sample of at most this many pairs "
                              "in every language, stratified by bias type and drawn with `seed` "
                              "({range}; 0: all)"),
        "published_groups": _free("published models compared over the shared pairs (model "
                                  "published only)"),
        "n_bootstrap": _integer("bootstrap resamples for the confidence intervals ({range}; 0: "
                                "none)", default="polybias.stats.N_BOOTSTRAP"),
        "seed": _integer("seed of the pair sample and the bootstrap ({range})"),
        "output_dir": OUTPUT_DIR,
        "table_file": _free(TABLE_FILE.format("crows-languages_published")),
    }, _check_12_crows_languages),
    "13_external_validity": Notebook({
        "model": _free("registered static model (configs/models.yaml)"),
        "encoder": _free("registered encoder for the sentence-vector WEFAT; empty: none"),
        "caliskan_terms": _free("also WEFAT with Caliskan et al.'s 8 + 8 gender terms (en/weat.yaml "
                                "female_terms, male_terms)"),
        "mlm": _free("registered masked LM for Kurita's log-probability bias; empty: none (no "
                     "embedded MLM knows occupations; planted-mlm: a negative control)"),
        "mlm_women": _free("Kurita targets for women (Kurita et al. 2019: he / she)"),
        "mlm_men": _free("Kurita targets for men, in the same order"),
        "census_year": _integer("census year to correlate with; 0: the latest year in the file"),
        "model_year": _integer("census year matching the model's text (Google News word2vec, "
                               "released 2013); 0: none"),
        "outcomes": Parameter("among {values}: share of women p, logit(p) (Garg et al.'s \"logit "
                              "proportion\")", values=census.OUTCOMES, each=True),
        "ddof": _choice("std degrees of freedom of WEFAT (1: sample std): {values}", (1, 0)),
        "confidence": Parameter("level of the Fisher-z intervals ({range})", low=0, high=1,
                                open_range=True, default="polybias.stats.CONFIDENCE_LEVEL"),
        "reported": _free("paper/reported/NAME.csv with the published correlations; empty: none"),
        "output_dir": OUTPUT_DIR,
        "table_file": _free("where to write the tables (e.g. paper/tables/external_w2v-gnews.md)"),
        "figure_file": _free("scatter figure under figures/; empty: none"),
    }, _check_13_external_validity),
    "14_stereoset": Notebook({
        "model": _free("published: Öztürk et al.'s prediction files; else a registered language "
                       "model (configs/models.yaml), " + _HUB),
        "revision": _free("hub branch, tag or 40-hex commit; empty: the registered revision, else "
                          "main (model not published)"),
        "device": DEVICE,
        "dtype": DTYPE,
        "batch_tokens": BATCH_TOKENS,
        "language": _choice("language a scored model runs on: {values} (model not published)",
                            stereoset.LANGUAGES),
        "languages": Parameter("languages to compare over shared item ids, among {values}; empty: "
                               "every language of the published model's runs (published) or only "
                               "`language`", values=stereoset.LANGUAGES, each=True,
                               empty=True),
        "language_override": LANGUAGE_OVERRIDE,
        "published_model": _free("published run, without its language, compared across "
                                 "languages"),
        "tasks": Parameter("StereoSet tasks to score, among {values} (a masked LM scores "
                           "intersentence items only with a next-sentence head)",
                           values=stereoset.TASKS, each=True),
        "intersentence": _choice("causal LMs: {values}; empty: conditional",
                                 tuple(i for i in INTERSENTENCE if i != "nsp"),
                                 empty=True),
        "aggregate": _choice("{values} (per-target: Nadeem et al.; micro: pooled over items)",
                             AGGREGATES),
        "limit": _integer("score only the first `limit` items of each task; 0: all"),
        "max_items": _integer("score a sample of at most this many items of each task, "
                              "stratified by bias type and drawn with `seed` ({range}; 0: all)"),
        "n_bootstrap": _integer("bootstrap resamples over items for the intervals ({range}; 0: "
                                "none)", default="polybias.stats.N_BOOTSTRAP"),
        "seed": _integer("seed of the item sample and the bootstrap ({range})"),
        "output_dir": OUTPUT_DIR,
        "table_file": _free(TABLE_FILE.format("stereoset_published")),
    }, _check_14_stereoset),
    "15_gest": Notebook({
        "model": _free("published: the authors' released scores; else a " + _SCORED_MODEL),
        "revision": _free("hub branch, tag or 40-hex commit; empty: the registered revision, else "
                          "main (model not published)"),
        "device": DEVICE,
        "dtype": DTYPE,
        "batch_tokens": BATCH_TOKENS,
        "kinds": Parameter("released runs to aggregate, among {values} (model published)",
                           values=gest.KINDS, each=True),
        "limit": _integer("score only the first `limit` sentences; 0: all (model not published)"),
        "max_items": _integer("score a sample of at most this many sentences, stratified by stereotype "
                              "and drawn with `seed` ({range}; 0: all; model not published)"),
        "interval": _choice("{values} (normal: the authors' bootstrap_ci)", INTERVALS),
        "base": _choice("{values} (e: the authors' np.exp of the mean base-10 score)", BASES),
        "n_bootstrap": _integer("bootstrap resamples within each stereotype for the intervals "
                                "({range}; 0: none)", default="polybias.stats.N_BOOTSTRAP"),
        "seed": _integer("seed of the sentence sample and the bootstrap ({range})"),
        "output_dir": OUTPUT_DIR,
        "table_file": _free(TABLE_FILE.format("gest_published")),
    }, _check_15_gest),
    "16_eurogest": Notebook({
        "model": _free(_SCORED_MODEL),
        **_model_engine(),
        "languages": Parameter("EuroGEST languages to score, among {values}; empty: all 29, by "
                               "family", values=eurogest.NEUTRAL_LANGUAGES, each=True, empty=True),
        "language_override": LANGUAGE_OVERRIDE,
        "subsets": Parameter("sentences to score, among {values} (neutral: in the scaffolds)",
                             values=("gendered", "neutral"), each=True),
        "per_stereotype": _integer("keep the first `per_stereotype` sentences of each stereotype and "
                                   "subset ({range}; 0: all)"),
        "too_long": _choice("a sentence longer than the model accepts: {values} (counted)",
                            ("raise", "skip")),
        "causal_bos": _choice("causal LMs: {values} (prepend: every token given BOS; none: the "
                              "authors' code on a tokenizer without BOS)", eurogest_scores.CAUSAL_BOS),
        "normalise": _free("mean token log-probability (the authors' default); False: summed"),
        "differing_only": _free("score only the part where the two forms differ (the authors' "
                                "default); False: whole sentences"),
        "min_sentences": _integer("a stereotype with fewer sentences gets no rate (the authors' 10; "
                                  "{range})", low=1),
        "n_bootstrap": _integer("bootstrap resamples within each stereotype for the intervals "
                                "({range}; 0: none)", default="polybias.stats.N_BOOTSTRAP"),
        "seed": _integer("seed of the bootstrap ({range})"),
        "output_dir": OUTPUT_DIR,
        "table_file": _free(TABLE_FILE.format("eurogest_planted-causal")),
    }, _check_16_eurogest),
    "17_real_models": Notebook({
        "n_bootstrap": _integer("bootstrap resamples for the intervals of g_s, SS and the stereotype "
                                "score and of the rank correlations ({range}; 0: none)", default="polybias.stats.N_BOOTSTRAP"),
        "seed": _integer("seed of every bootstrap ({range})"),
        "method": _choice("rank correlation: {values}", ("spearman", "kendall")),
        "min_models": _integer("fewest shared checkpoints for a rank correlation ({range})", low=2),
        "sweep_file": _free("sweep whose full-set runs of the embedded real models give their rows "
                            "(their run records, or the records kept under paper/records); empty: "
                            "none"),
        "output_dir": OUTPUT_DIR,
        "table_file": _free(TABLE_FILE.format("real-models")),
        "csv_file": _free("where to write the table as CSV, e.g. paper/tables/real-models.csv"),
        "findings_file": _free("where to write the findings' tables (EuroGEST per language, the "
                               "minimal-pair scores, the two models' differences), e.g. "
                               "paper/tables/real-model-findings.md; their summary goes beside it "
                               "(-summary.md)"),
    }),
    "18_profile": Notebook({
        "profiled": _free("the profiled model: a registered name, a model directory or a hub id, as "
                          "its runs name it (not `model`: this notebook scores nothing)"),
        "sweep_files": Parameter("sweeps whose done runs of the model give its numbers (their run "
                                 "records, or the records kept under paper/records), e.g. "
                                 "configs/sweeps/default.yaml and the sweep polybias profile wrote"),
        "n_bootstrap": _integer("bootstrap resamples for the released checkpoints' intervals "
                                "({range}; 0: none)", default="polybias.stats.N_BOOTSTRAP"),
        "seed": _integer("seed of those bootstraps ({range})"),
        "output_dir": OUTPUT_DIR,
        "table_file": _free(TABLE_FILE.format("profile_smollm2-135m-instruct-q4_1")),
    }),
}


def check_parameters(notebook: str, **parameters: Any) -> None:
    """Check the parameters of ``notebook`` against its declaration in :data:`NOTEBOOKS`.

    Parameters
    ----------
    notebook : str
        The notebook's name, e.g. ``"05_crows_pairs"``.
    \\*\\*parameters
        The notebook's parameters by name: at least every one that has allowed values, a
        range, or a check relating it to others (:attr:`Notebook.checked`).

    Raises
    ------
    ParameterError
        One line naming the notebook, the parameter and what it may be: a value not
        allowed or out of range, a parameter missing or not declared, an unknown notebook.
    polybias.models.ModelError
        A registered model run on a language its entry does not list (the check of the
        lower layer keeps its error); other lower-layer checks raise ``ValueError``.

    Examples
    --------
    >>> check_parameters("11_agreement", language="en", ps=[0.5], seeds=3, measures=["weat"],
    ...                  lm_n_sentences=10, lm_n_pairs=10, weat_n_sentences=10)
    >>> check_parameters("11_agreement", language="en", ps=[0.5], seeds=0, measures=["weat"],
    ...                  lm_n_sentences=10, lm_n_pairs=10, weat_n_sentences=10)
    Traceback (most recent call last):
    ...
    polybias.studies.parameters.ParameterError: 11_agreement: seeds must be an integer >= 1, got 0
    >>> check_parameters("11_agreement", seeds=3)
    Traceback (most recent call last):
    ...
    polybias.studies.parameters.ParameterError: 11_agreement: missing parameter(s) language, lm_n_pairs, lm_n_sentences, measures, ps, weat_n_sentences
    """
    if notebook not in NOTEBOOKS:
        raise ParameterError(f"no parameter checks for notebook {notebook!r}; known: "
                             f"{', '.join(sorted(NOTEBOOKS))}")
    declared = NOTEBOOKS[notebook]
    missing = sorted(set(declared.checked) - set(parameters))
    extra = sorted(set(parameters) - set(declared.parameters))
    if missing or extra:
        parts = ([f"missing parameter(s) {', '.join(missing)}"] if missing else []) + \
            ([f"undeclared parameter(s) {', '.join(extra)}"] if extra else [])
        raise ParameterError(f"{notebook}: {'; '.join(parts)}")
    try:
        for name, value in parameters.items():
            declared.parameters[name].check(name, value)
        if declared.check is not None:
            together = inspect.signature(declared.check).parameters
            declared.check(**{name: parameters[name] for name in together})
    except ParameterError as exc:
        raise ParameterError(f"{notebook}: {exc}") from None


# ------------------------------------------------------------------ the help comments

def _cell_lines(lines: list[str]) -> range:
    """The line numbers of the first cell tagged ``parameters`` (its code lines)."""
    start = next((i for i, line in enumerate(lines)
                  if line.startswith("# %%") and re.search(r"tags=\[[^]]*\"parameters\"", line)),
                 None)
    if start is None:
        raise ParameterError("no cell tagged 'parameters'")
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("# %%")), len(lines))
    return range(start + 1, end)


def _split(line: str) -> tuple[str, str, str] | None:
    """``name: type = default  # help`` -> (name, the code before the comment, the help)."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(line).readline))
    except (tokenize.TokenError, SyntaxError):
        return None
    if not tokens or tokens[0].type != tokenize.NAME or tokens[0].start[1] != 0:
        return None
    comment = next((t for t in tokens if t.type == tokenize.COMMENT), None)
    if comment is None:
        return tokens[0].string, line.rstrip("\n"), ""
    return tokens[0].string, line[:comment.start[1]].rstrip(), comment.string[1:].strip()


def help_differences(path: str | Path, write: bool = False) -> list[str]:
    """Where a notebook's parameters cell differs from its declaration in :data:`NOTEBOOKS`.

    Parameters
    ----------
    path : str or Path
        A notebook's jupytext source (``notebooks/05_crows_pairs.py``).
    write : bool
        Rewrite the help comments that differ from their declaration.

    Returns
    -------
    list of str
        One line per difference: a help comment that is not the declared help, or a default
        that is not the library constant its declaration names (both rewritten when
        ``write``), a parameter of the cell that is not declared, or one declared that the
        cell lacks (neither of these two is fixed by ``write``).
    """
    path = Path(path)
    declared = NOTEBOOKS.get(path.stem)
    if declared is None:
        return [f"{path.name}: notebook not declared in polybias.studies.parameters.NOTEBOOKS"]
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    found: list[str] = []
    problems: list[str] = []
    for i in _cell_lines(lines):
        parts = _split(lines[i])
        if parts is None:
            continue
        name, code, comment = parts
        found.append(name)
        if name not in declared.parameters:
            problems.append(f"{path.name}: parameter {name!r} is not declared")
            continue
        parameter = declared.parameters[name]
        if parameter.default is not None:
            target, _, literal = code.partition("=")
            value = parameter.default_value()
            try:
                given = ast.literal_eval(literal.strip())
            except (ValueError, SyntaxError):
                given = None
            if given != value or type(given) is not type(value):
                problems.append(f"{path.name}: the default of {name!r} is {literal.strip()}, not "
                                f"{parameter.default} ({value!r})")
                code = f"{target.rstrip()} = {value!r}"
                lines[i] = f"{code}  # {comment}\n" if comment else f"{code}\n"
        wanted = parameter.render()
        if comment != wanted:
            problems.append(f"{path.name}: help of {name!r} differs from its declaration")
            lines[i] = f"{code}  # {wanted}\n"
    problems += [f"{path.name}: declared parameter {name!r} is not in the parameters cell"
                 for name in declared.parameters if name not in found]
    if write and problems:
        path.write_text("".join(lines), encoding="utf-8")
    return problems


def defaults(notebook: str) -> dict[str, Any]:
    """The default values of a notebook's parameters, read from its parameters cell.

    Parameters
    ----------
    notebook : str
        The notebook's name, e.g. ``"05_crows_pairs"``.

    Returns
    -------
    dict
        Parameter name -> its default (a Python literal), in the order of the cell.

    Raises
    ------
    ParameterError
        If the notebook has no parameters cell or a default is not a literal.
    """
    path = paths.project_root() / "notebooks" / f"{notebook}.py"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    values: dict[str, Any] = {}
    for statement in ast.parse("".join(lines[i] for i in _cell_lines(lines))).body:
        if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
            try:
                values[statement.target.id] = ast.literal_eval(statement.value)
            except ValueError:
                raise ParameterError(f"{path.name}: the default of {statement.target.id!r} is "
                                     "not a literal") from None
    return values


def notebook_sources() -> list[Path]:
    """The jupytext sources of the numbered notebooks, in order."""
    return sorted((paths.project_root() / "notebooks").glob("[0-9][0-9]_*.py"))


def main(argv: Sequence[str] | None = None) -> int:
    """Check (default) or rewrite (``--write``) the help comments of the parameters cells.

    Returns the exit status: 0 when every cell matches its declaration, else 1 after
    printing the differences (those that ``--write`` fixed are printed too).
    """
    parser = argparse.ArgumentParser(prog="python -m polybias.studies.parameters",
                                     description=main.__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="*", type=Path,
                        help="jupytext sources; default: every numbered notebook")
    parser.add_argument("--write", action="store_true", help="rewrite the help comments")
    args = parser.parse_args(argv)
    problems = [p for source in args.notebooks or notebook_sources()
                for p in help_differences(source, write=args.write)]
    for problem in problems:
        print(problem)
    return 1 if problems and not args.write else 0


if __name__ == "__main__":
    sys.exit(main())
