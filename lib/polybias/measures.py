"""The registry of measures: one name per measure, and :func:`compute` to run it.

Every measure of the library — WEAT, SEAT, CEAT, Kurita's log-probability bias score,
the CrowS-Pairs stereotype score (masked, causal, AUL, AULA), the JSD stereotype score B,
Ahn & Oh's CB score, its PLL, sentiment-weighted and interaction variants, the KL
distribution difference, the association gap used to judge debiasing, and the per-word
scores WEFAT and the relative norm distance — is
computed by a pure function of :mod:`polybias.metrics` (arrays and frames in, numbers
out). The registry ``data/measures.yaml`` declares each one (its inputs, null
hypothesis, uncertainty method, reference, the options that reproduce the reference
code, the published values the tests reproduce) and names its code by dotted path: the
``function``, and beside it in the same metric module an ``adapter`` (calls the function
on the measure's inputs) and a ``result`` (turns what it returns into a
:class:`MeasureResult`, the one shape shared by all measures: ``value``, ``interval``,
``p_value`` and ``p_method``, ``n``, ``options``, the per-item ``details`` frame, the
measure's other named numbers in ``extra`` and its table per subgroup in ``groups``);
:mod:`polybias.metrics.measure` defines the result type and the two marks. This module
joins every entry with its code into a :class:`Measure`.

:func:`compute` runs a measure by its registry key::

    compute("weat", X=X, Y=Y, A=A, B=B, seed=0)

The registry drives ``polybias measures``, the metric cards under ``docs/measures/``
(:mod:`polybias.results.cards`) and the contract tests run over every measure
(``tests/test_measure_contracts.py``). Model-facing steps (encoding sentences, scoring
pairs or templates) stay in the engines and metric functions named in each
``Measure.scorers``; what is registered here is the step from their outputs to a number.
Registering a measure takes one metric module and one registry entry; the entry also lists
the other labels run records give the measure (:data:`RECORD_MEASURES`,
:data:`METRIC_MEASURES`). What reporting it from a study takes is listed in
docs/architecture.md, "Adding a measure".
"""

from __future__ import annotations

import functools
import importlib
import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np  # noqa: F401  (the doctest of compute)
import pandas as pd

from polybias import paths
from polybias.metrics.crows import aggregate_pairs
from polybias.metrics.measure import P_METHODS, Interval, MeasureResult, role

__all__ = ["INPUT_KINDS", "MEASURES", "POLARITIES", "P_METHODS", "Compat", "Interval", "Measure", "MeasureError",
           "MeasureResult", "Published", "UNSIGNED_LABELS", "compute", "compute_offered", "get", "load_registry",
           "measures_table", "option_defaults", "reads", "scorer_function", "scorer_names", "unsigned_labels"]

#: The kinds of input a registered function takes (the contract tests build each kind).
INPUT_KINDS = ("vectors", "word-vectors", "occurrences", "attribute-scores", "pair-scores",
               "pair-attributions", "group-scores", "distributions", "item-scores", "stereotype-scores",
               "gendered-pair-scores")
#: How a value answers a swap of the two groups (:attr:`Measure.polarity`).
POLARITIES = ("signed", "unsigned", "ratio")
#: A scorer as the registry writes it: a dotted name, optionally with the call's options.
_SCORER = re.compile(r"^polybias(?:\.[A-Za-z_]\w*)+(?:\(.*\))?$")


class MeasureError(KeyError):
    """An unknown measure name, or a measure asked for an input it does not take."""

    def __str__(self) -> str:  # KeyError quotes its message; this one is a sentence
        return str(self.args[0]) if self.args else ""


@dataclass(frozen=True)
class Compat:
    """An option that reproduces a reference implementation instead of the paper's
    definition (``docs/reference_compat.md``)."""

    option: str
    value: Any
    where: str
    reproduces: str
    proof: str = ""


@dataclass(frozen=True)
class Published:
    """Published values a test reproduces: rows of ``paper/reported/<table>.csv``
    (``filters`` column → value) checked by the test ``test``."""

    table: str
    test: str
    what: str
    filters: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Measure:
    """A registered measure.

    ``function`` is the pure metric function (:mod:`polybias.metrics`); ``adapter`` (marked
    :func:`polybias.metrics.measure.measure_adapter`) calls it on the measure's inputs and
    returns ``(raw, options)``; ``convert`` (the ``result`` function, marked
    :func:`polybias.metrics.measure.measure_result`, with the measure's name bound) turns
    the raw output into a :class:`MeasureResult`. ``scorers`` are the dotted names of the
    model-facing functions that produce the inputs (a name may carry the options of the
    call in parentheses). ``inputs`` names the keyword inputs of
    :func:`compute`, ``input_kind`` their kind (:data:`INPUT_KINDS`). ``polarity`` is
    ``signed`` (swapping the two target groups reflects ``value`` about ``null_value``; a
    per-word measure, kind ``word-vectors``, has no target groups and its two groups are A
    and B), ``ratio`` (a ratio of two groups' rates with ``null_value`` 1: swapping the
    groups inverts it, value → null_value² / value) or ``unsigned`` (the value does not
    depend on the order of the groups).
    ``axis`` titles the value axis of a figure: the measure's name, unit and the direction
    of bias. ``record_labels`` are the other labels stored run records give the measure (a
    record's ``metric``, a value key, a test type; :data:`RECORD_MEASURES`) and
    ``validity_labels`` the metric labels of the validity designs that report it, by design
    (:data:`METRIC_MEASURES`); ``validity_units`` gives, for some of those labels, the unit
    and direction of bias on the planted models that the validity figures' value axis names
    (:data:`VALIDITY_UNITS`).
    """

    name: str
    title: str
    summary: str
    formula: str
    inputs: dict[str, str]
    input_kind: str
    function: Callable
    adapter: Callable
    convert: Callable
    null_hypothesis: str
    uncertainty: str
    reference: str
    scorers: tuple[str, ...]
    error: type[Exception]
    value_is: str = ""
    n_is: str = ""
    polarity: str = "signed"
    null_value: float = 0.0
    axis: str = ""
    compat: tuple[Compat, ...] = ()
    published: tuple[Published, ...] = ()
    notes: str = ""
    record_labels: tuple[str, ...] = ()
    validity_labels: dict[str, tuple[str, ...]] = field(default_factory=dict)
    validity_units: dict[str, str] = field(default_factory=dict)

    @property
    def function_name(self) -> str:
        return _dotted(self.function)

    @property
    def adapter_name(self) -> str:
        return _dotted(self.adapter)

    @property
    def result_name(self) -> str:
        return _dotted(self.convert.func)


def _dotted(func: Callable) -> str:
    return f"{func.__module__}.{func.__qualname__}"


def _required(name: str, inputs: dict[str, Any], keys: tuple[str, ...]) -> list[Any]:
    missing = [k for k in keys if k not in inputs]
    if missing:
        raise MeasureError(f"measure {name!r} needs the input(s) {', '.join(missing)}")
    return [inputs[k] for k in keys]


# ------------------------------------------------------------------ the registry

def _resolve(name: str, what: str, where: str) -> Any:
    """The object a dotted name (``polybias.metrics.weat.weat``) names."""
    module, _, attr = str(name).rpartition(".")
    try:
        return getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError, ValueError) as exc:
        raise MeasureError(f"{where}: {what} {name!r} cannot be imported ({exc})") from exc


def _code(entry: dict[str, Any], key: str, where: str) -> Callable:
    """The adapter or result function ``entry[key]`` names, marked for that role."""
    name = entry.pop(key, None)
    if not isinstance(name, str) or "." not in name:
        raise MeasureError(f"{where}: {key} must be the dotted name of a function marked "
                           f"@measure_{key}, got {name!r}")
    func = _resolve(name, key, where)
    if role(func) != key:
        raise MeasureError(f"{where}: {key} {name!r} is not marked @measure_{key} "
                           f"(polybias.metrics.measure)")
    return func


def _scorers(entry: dict[str, Any], where: str) -> tuple[str, ...]:
    """The ``scorers`` of an entry: a non-empty list of dotted names (each may carry the
    options of the call in parentheses); that each resolves is checked by
    ``tests/test_measures.py`` (importing them here would load the model engines)."""
    names = entry.pop("scorers", None)
    if isinstance(names, str):
        names = [names]
    if not names or not all(isinstance(n, str) and _SCORER.match(n) for n in names):
        raise MeasureError(f"{where}: scorers must be a list of dotted names (polybias.…), got {names!r}")
    return tuple(names)


def _labels(value: Any, what: str, where: str) -> tuple[str, ...]:
    """A list of non-empty label strings as a tuple."""
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise MeasureError(f"{where}: {what} must be a list of labels, got {value!r}")
    return tuple(value)


def _label_fields(entry: dict[str, Any], where: str) -> dict[str, Any]:
    """The ``record_labels`` (a list), ``validity_labels`` (design → list) and
    ``validity_units`` (one of those labels → its unit) of an entry."""
    by_design = entry.pop("validity_labels", None) or {}
    if not isinstance(by_design, dict):
        raise MeasureError(f"{where}: validity_labels must map validity designs to lists of "
                           f"metric labels, got {by_design!r}")
    validity = {str(d): _labels(v, f"validity_labels[{d!r}]", where) for d, v in by_design.items()}
    units = entry.pop("validity_units", None) or {}
    labels = {label for v in validity.values() for label in v}
    if not isinstance(units, dict) or not all(isinstance(u, str) and u for u in units.values()):
        raise MeasureError(f"{where}: validity_units must map validity labels to units, got {units!r}")
    if unknown := sorted(set(units) - labels):
        raise MeasureError(f"{where}: validity_units names {', '.join(map(repr, unknown))}, not among "
                           f"its validity_labels")
    return {"record_labels": _labels(entry.pop("record_labels", None) or [], "record_labels", where),
            "validity_labels": validity, "validity_units": {str(k): v for k, v in units.items()}}


def record_label_map(registry: dict[str, Measure]) -> dict[str, str]:
    """Label → registry key, from the ``record_labels`` of every measure of ``registry``.
    A label given to two measures, or a label that is another measure's key, raises
    :class:`MeasureError` naming them.

    >>> record_label_map(MEASURES)["crows-jsd"]
    'jsd-b'
    """
    out: dict[str, str] = {}
    for m in registry.values():
        for label in m.record_labels:
            if label in registry or label in out:
                raise MeasureError(f"record label {label!r} of measure {m.name!r} is already "
                                   f"{'a measure' if label in registry else f'a label of {out[label]!r}'}")
            out[label] = m.name
    return out


def validity_label_map(registry: dict[str, Measure]) -> dict[str, dict[str, str]]:
    """Validity design → its metric label → registry key, from the ``validity_labels`` of
    every measure of ``registry``. A label of one design given to two measures raises
    :class:`MeasureError` naming them.

    >>> validity_label_map(MEASURES)["template-mlm"]["kurita-effect-size"]
    'kurita'
    """
    out: dict[str, dict[str, str]] = {}
    for m in registry.values():
        for design, labels in m.validity_labels.items():
            for label in labels:
                known = out.setdefault(design, {})
                if label in known:
                    raise MeasureError(f"validity label {label!r} of design {design!r} is given to "
                                       f"both {known[label]!r} and {m.name!r}")
                known[label] = m.name
    return out


def validity_unit_map(registry: dict[str, Measure]) -> dict[str, str]:
    """Validity metric label → the unit and direction of bias its figures' value axis names,
    from the ``validity_units`` of every measure of ``registry``. A label given two different
    units raises :class:`MeasureError` naming them.

    >>> validity_unit_map(MEASURES)["jsd-B"]
    '% of pairs (50 = no preference; > 50 toward the planted stereotype)'
    """
    out: dict[str, str] = {}
    for m in registry.values():
        for label, unit in m.validity_units.items():
            if out.setdefault(label, unit) != unit:
                raise MeasureError(f"validity label {label!r} of measure {m.name!r} is given two units: "
                                   f"{out[label]!r} and {unit!r}")
    return out


def unsigned_labels(registry: dict[str, Measure]) -> tuple[str, ...]:
    """The validity metric labels of the measures of ``registry`` whose ``polarity`` is
    ``unsigned`` (a variance over groups has no direction: the validity sweep's dose of such a
    label is ``|p - 0.5|``, not ``p``), in registry order.

    >>> unsigned_labels(MEASURES)[:2]
    ('cb', 'pll-cb')
    """
    out = {label: None for m in registry.values() if m.polarity == "unsigned"
           for labels in m.validity_labels.values() for label in labels}
    return tuple(out)


def option_defaults(measure: str | Measure) -> dict[str, Any]:
    """The options :func:`compute` accepts for ``measure``, with their defaults: the
    adapter's keyword parameters and, when the adapter takes ``**options``, its function's
    (and, for the share scores of the CrowS-Pairs family whose function passes its own
    ``**options`` on, :func:`polybias.metrics.crows.aggregate_pairs`'s).

    >>> option_defaults("cb")
    {'value': 'corrected', 'group': 'target', 'ddof': 0}
    >>> "n_bootstrap" in option_defaults("crows"), "n_permutations" in option_defaults("weat")
    (True, True)
    """
    m = measure if isinstance(measure, Measure) else get(measure)

    def takes_more(func: Callable) -> bool:
        return any(p.kind is p.VAR_KEYWORD for p in inspect.signature(func).parameters.values())

    funcs = [m.adapter]
    if takes_more(m.adapter):
        funcs.append(m.function)
        if takes_more(m.function):  # the crows scores pass their remaining options on
            funcs.append(aggregate_pairs)
    skip = {*m.inputs, "stereotyped", "bias_type", "ties", "chunk"}
    out: dict[str, Any] = {}
    for func in funcs:
        for name, par in inspect.signature(func).parameters.items():
            if name in skip or par.kind in (par.VAR_KEYWORD, par.VAR_POSITIONAL):
                continue
            if par.default is not inspect.Parameter.empty:
                out.setdefault(name, par.default)
    return out


def reads(measure: str, supplied) -> str | None:
    """Which of the ``supplied`` scorers (dotted names, as a ``scorers`` entry writes them,
    options in parentheses or none) ``measure`` reads: the first of its ``scorers`` that is
    supplied as written, or whose dotted name is supplied where one of the two names no
    options (a design that supplies ``pair_scores`` scored the pairs the model's way). None
    when it reads none of them.

    >>> reads("aula", ["polybias.engines.pair_scores.pair_scores(method='nangia')"]) is None
    True
    >>> reads("crows", ["polybias.engines.pair_scores.pair_scores(method='causal')"])
    "polybias.engines.pair_scores.pair_scores(method='causal')"
    >>> reads("crows", ["polybias.engines.pair_scores.pair_scores"])
    'polybias.engines.pair_scores.pair_scores'
    """
    given = list(supplied)
    for scorer in get(measure).scorers:
        if scorer in given:
            return scorer
        bare = scorer.split("(", 1)[0]
        for name in given:
            if name.split("(", 1)[0] == bare and (scorer == bare or name == bare):
                return name
    return None


def scorer_names(measure: str) -> tuple[str, ...]:
    """The dotted names of the functions whose outputs ``measure`` reads (its ``scorers``
    without their call options), in the registry's order.

    >>> scorer_names("jsd-b")
    ('polybias.engines.pair_scores.jsd_attributions',)
    """
    return tuple(dict.fromkeys(s.split("(", 1)[0] for s in get(measure).scorers))


def scorer_function(scorer: str) -> Callable:
    """The function a ``scorers`` entry names (its call options in parentheses dropped).

    >>> scorer_function("polybias.engines.pair_scores.pair_scores(method='aula')").__name__
    'pair_scores'
    """
    return _resolve(scorer.split("(", 1)[0], "scorer", "scorers")


def load_registry(path: str | Path | None = None) -> dict[str, Measure]:
    """The measures of ``data/measures.yaml`` (or ``path``) joined with their code: the
    ``function``, ``adapter``, ``result`` and ``error`` it names by dotted path (imported;
    the adapter and result must be marked for their role, :mod:`polybias.metrics.measure`)
    and its ``scorers``. A name that resolves to nothing, a function not marked for the
    role it is named for, or an unknown field raises :class:`MeasureError` naming the
    measure and the field."""
    path = Path(path) if path else paths.data_dir() / "measures.yaml"
    raw = paths.read_yaml(path, MeasureError, "measure registry")
    if not isinstance(raw, dict) or not raw:
        raise MeasureError(f"{path}: expected a mapping of measure names to entries")
    out = {}
    for name, entry in raw.items():
        where = f"{path}: measure {name!r}"
        entry = dict(entry or {})
        adapter, result = _code(entry, "adapter", where), _code(entry, "result", where)
        scorers = _scorers(entry, where)
        labels = _label_fields(entry, where)
        function = _resolve(entry.pop("function", ""), "function", where)
        error = _resolve(entry.pop("error", ""), "error", where)
        if not callable(function) or not (isinstance(error, type) and issubclass(error, Exception)):
            raise MeasureError(f"{where}: function must name a function and error an exception type")
        if entry.get("input_kind") not in INPUT_KINDS:
            raise MeasureError(f"{where}: input_kind must be one of {INPUT_KINDS}")
        if entry.get("polarity", "signed") not in POLARITIES:
            raise MeasureError(f"{where}: polarity must be one of {', '.join(POLARITIES)}")
        try:
            compat = tuple(Compat(**c) for c in entry.pop("compat", []) or [])
            published = tuple(Published(**p) for p in entry.pop("published", []) or [])
            out[name] = Measure(name=name, function=function, adapter=adapter,
                                convert=functools.partial(result, name), error=error,
                                scorers=scorers, compat=compat, published=published,
                                **labels, **entry)
        except TypeError as exc:
            raise MeasureError(f"{where}: {exc}") from exc
    try:  # a label claimed twice is refused here
        record_label_map(out), validity_label_map(out), validity_unit_map(out)
    except MeasureError as exc:
        raise MeasureError(f"{path}: {exc}") from exc
    return out


MEASURES: dict[str, Measure] = load_registry()

#: The registered measure (its key) behind each label that stored run records use for it
#: where the label is not the key itself: a record's ``metric``, a value key of a ``catbias``
#: or ``debias`` record, a ``debias`` cell's ``test_type``; from the entries'
#: ``record_labels``. Records keep their labels (the same inputs give byte-identical
#: records); code that reads them maps the labels here (:func:`record_measure`) and selects
#: measures by registry key only. A record label that is a registry key already (``weat``,
#: ``seat``, ``ceat``, ``crows``, ``stereoset``, ``interaction-cb``) maps to itself; one that
#: holds several measures (``catbias``, ``debias``) names them by its value keys.
RECORD_MEASURES: dict[str, str] = record_label_map(MEASURES)

#: Per validity design (:data:`polybias.studies.validity_designs.DESIGNS`, the sweep's
#: ``interactions-mlm``, :mod:`polybias.runner.validity_sweep`, and the known-answer
#: encoder's ``embedding-encoder``, :mod:`polybias.runner.validity_diagnosis`, and the
#: EuroGEST measure's ``eurogest-causal``, :mod:`polybias.runner.validity_eurogest`): its metric
#: labels, as stored in the measurements and run records, → the key of the registered
#: measure each reports; from the entries' ``validity_labels`` (``ceat-ces-perm`` is the
#: CES with the word-permutation p-value, ``pronoun-cb`` the interaction CB of the pronoun
#: alone).
METRIC_MEASURES: dict[str, dict[str, str]] = validity_label_map(MEASURES)

#: Validity metric label → the unit and direction of bias on the planted models that its
#: figures' value axis names, from the entries' ``validity_units``
#: (:func:`polybias.results.table.metric_axis`).
VALIDITY_UNITS: dict[str, str] = validity_unit_map(MEASURES)

#: The validity metric labels of the measures without a direction (``polarity: unsigned``:
#: the variances of the CB family), whose dose in the validity summaries is ``|p - 0.5|``
#: (:data:`polybias.studies.validity.UNSIGNED_METRICS`); from the entries' ``polarity`` and
#: ``validity_labels``.
UNSIGNED_LABELS: tuple[str, ...] = unsigned_labels(MEASURES)


#: What a run record may report beside the registered measures: statistics of models or of
#: measures that are no bias measure of their own, each with what it is. A measure record
#: (:func:`polybias.results.records.measure_record`) may carry one as its measure; the
#: results table names it as it is (:func:`is_reported`).
STATISTICS: dict[str, str] = {
    "separation": "η² of the identity groups in a 2-D view of an encoder's hidden states "
                  "(notebook 08, polybias.studies.hidden_states.two_d_views)",
    "census-pearson": "Pearson's r over occupations of a measure's scores with the census "
                      "share of women (notebook 13, polybias.studies.external_validity)",
    "census-spearman": "Spearman's ρ over occupations of a measure's scores with the census "
                       "share of women (notebook 13, polybias.studies.external_validity)",
}
#: The prefix of the validity statistics: ``validity:<design>:<metric>`` is a validity
#: metric label's mean over the planted models of one strength (notebook 10,
#: :func:`polybias.studies.validity.dose_table`).
VALIDITY_STATISTIC = "validity:"


def is_reported(label: str) -> bool:
    """Whether a run record may report ``label``: a registered measure (its key or one of
    its ``record_labels``) or a statistic (:data:`STATISTICS`, or a validity statistic
    ``validity:<design>:<metric>`` of a design's metric label, :data:`METRIC_MEASURES`).

    >>> is_reported("weat"), is_reported("crows-jsd"), is_reported("separation")
    (True, True, True)
    >>> is_reported("validity:crows-causal:jsd-B"), is_reported("validity:toy:x"), is_reported("toy")
    (True, False, False)
    """
    if record_measure(label) in MEASURES or label in STATISTICS:
        return True
    design, _, metric = label.removeprefix(VALIDITY_STATISTIC).partition(":")
    return label.startswith(VALIDITY_STATISTIC) and metric in METRIC_MEASURES.get(design, {})


def record_measure(label: str) -> str:
    """The registry key of a label stored in run records (:data:`RECORD_MEASURES`; a label
    that is a key already is returned as it is).

    >>> record_measure("logprob-context"), record_measure("ahn_oh_cb"), record_measure("weat")
    ('kurita', 'cb', 'weat')
    """
    return RECORD_MEASURES.get(label, label)


def registered_measure(design: str, metric: str) -> str | None:
    """The registry key behind a validity measurement's ``measure`` (its design) and
    ``metric`` labels, or None.

    >>> registered_measure("crows-causal", "jsd-B"), registered_measure("weat", "gap")
    ('jsd-b', None)
    """
    return METRIC_MEASURES.get(design, {}).get(metric)


def validity_unit(label: str) -> str | None:
    """The unit and direction of bias of a validity metric label (:data:`VALIDITY_UNITS`),
    or None.

    >>> validity_unit("cb"), validity_unit("gap")
    ('variance over groups (0 = no bias; larger = more bias)', None)
    """
    return VALIDITY_UNITS.get(label)


def get(name: str) -> Measure:
    """The registered measure ``name``; an unknown name raises :class:`MeasureError`.

    >>> get("weat").input_kind
    'vectors'
    """
    if name not in MEASURES:
        raise MeasureError(f"unknown measure {name!r}; registered: {', '.join(MEASURES)}")
    return MEASURES[name]


def compute(measure: str, **inputs: Any) -> MeasureResult:
    """Run the registered ``measure`` on its inputs and options; return a :class:`MeasureResult`.

    ``inputs`` holds the measure's inputs (:attr:`Measure.inputs`) and its options (those of
    its function, e.g. ``seed``, ``ddof``, ``n_bootstrap``). Malformed inputs raise the
    measure's error type (:attr:`Measure.error`).

    >>> X = np.array([[1., .1], [1., .2]]); Y = np.array([[.1, 1.], [.2, 1.]])
    >>> r = compute("weat", X=X, Y=Y, A=np.array([[1., 0.]]), B=np.array([[0., 1.]]))
    >>> round(r.value, 3), r.p_value, r.p_method, r.n
    (1.728, 0.16666666666666666, 'permutation-exact', 4)
    """
    m = get(measure)
    names = tuple(m.inputs)
    values = _required(measure, inputs, names)
    options = {k: v for k, v in inputs.items() if k not in names}
    raw, opts = m.adapter(*values, **options)
    return m.convert(raw, opts)


def compute_offered(measure: str, inputs: dict[str, Any], offered: dict[str, Any],
                    **options: Any) -> MeasureResult:
    """:func:`compute` of ``measure`` on the inputs it names taken from ``inputs`` (which may
    hold more), with those of the ``offered`` options it takes (:func:`option_defaults`) and
    ``options``: how a study or a validity design runs every measure that reads what it
    scored (:func:`reads`) without knowing each one's options.

    >>> X = np.array([[1., .1], [1., .2]]); Y = np.array([[.1, 1.], [.2, 1.]])
    >>> vectors = {"X": X, "Y": Y, "A": np.array([[1., 0.]]), "B": np.array([[0., 1.]]), "W": X}
    >>> compute_offered("weat-gap", vectors, {"seed": 0}).value == compute("weat-gap", **{
    ...     k: vectors[k] for k in "XYAB"}).value
    True
    """
    accepted = option_defaults(measure)
    return compute(measure, **{k: inputs[k] for k in get(measure).inputs},
                   **{k: v for k, v in offered.items() if k in accepted}, **options)


def measures_table() -> pd.DataFrame:
    """One row per registered measure: name, title, input kind, uncertainty, reference."""
    return pd.DataFrame([{"measure": m.name, "title": m.title, "inputs": m.input_kind,
                          "p_value": "yes" if m.uncertainty != "none" else "no",
                          "function": m.function_name} for m in MEASURES.values()])
