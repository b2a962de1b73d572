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
``p_value`` and ``p_method``, ``n``, ``options`` and the per-item ``details`` frame);
:mod:`polybias.metrics.measure` defines the result type and the two marks. This module
joins every entry with its code into a :class:`Measure`.

:func:`compute` runs a measure by its registry key::

    compute("weat", X=X, Y=Y, A=A, B=B, seed=0)

The registry drives ``polybias measures``, the metric cards under ``docs/measures/``
(:mod:`polybias.results.cards`) and the contract tests run over every measure
(``tests/test_measure_contracts.py``). Model-facing steps (encoding sentences, scoring
pairs or templates) stay in the engines and metric functions named in each
``Measure.scorers``; what is registered here is the step from their outputs to a number.
Adding a measure takes one metric module and one registry entry (docs/architecture.md).
"""

from __future__ import annotations

import functools
import importlib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np  # noqa: F401  (the doctest of compute)
import pandas as pd

from polybias import paths
from polybias.metrics.measure import P_METHODS, Interval, MeasureResult, role

__all__ = ["INPUT_KINDS", "MEASURES", "POLARITIES", "P_METHODS", "Compat", "Interval", "Measure", "MeasureError",
           "MeasureResult", "Published", "compute", "get", "load_registry", "measures_table",
           "scorer_function"]

#: The kinds of input a registered function takes (the contract tests build each kind).
INPUT_KINDS = ("vectors", "word-vectors", "occurrences", "attribute-scores", "pair-scores",
               "pair-attributions", "group-scores", "distributions", "item-scores",
               "gendered-pair-scores")
#: How swapping a measure's two groups changes its value (:class:`Measure`).
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
    and B), ``unsigned`` (the value does not depend on the order of the groups) or ``ratio``
    (a ratio of the two groups: swapping them maps ``value`` to ``null_value² / value``, a
    reflection of its logarithm).
    ``axis`` titles the value axis of a figure: the measure's name, unit and the direction
    of bias.
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
                                scorers=scorers, compat=compat, published=published, **entry)
        except TypeError as exc:
            raise MeasureError(f"{where}: {exc}") from exc
    return out


MEASURES: dict[str, Measure] = load_registry()


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


def measures_table() -> pd.DataFrame:
    """One row per registered measure: name, title, input kind, uncertainty, reference."""
    return pd.DataFrame([{"measure": m.name, "title": m.title, "inputs": m.input_kind,
                          "p_value": "yes" if m.uncertainty != "none" else "no",
                          "function": m.function_name} for m in MEASURES.values()])
