"""The one result type of every registered measure, and the marks that make a function a
measure's adapter or result.

A measure (registered in ``data/measures.yaml``, run by :func:`polybias.measures.compute`)
is a pure metric function and two small functions kept beside it in its metric module:

* an **adapter**, marked :func:`measure_adapter`, takes the measure's inputs (positional,
  in the order of the registry's ``inputs``) and options (keywords), calls the metric
  function and returns ``(raw, options)``: what the function gave and the options it ran
  with, defaults filled in (:func:`call_options`);
* a **result**, marked :func:`measure_result`, takes ``(name, raw, options)`` and returns a
  :class:`MeasureResult`.

The registry names both by their dotted path; :func:`polybias.measures.load_registry`
refuses a path that is not marked as the role it is named for. The marks are plain
attributes: there is no global table to fill.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

#: How a p-value was obtained.
P_METHODS = ("permutation-exact", "permutation-monte-carlo", "normal", "binomial-exact", "none",
             "pearson-test", "spearman-test")
#: The roles a function can play for a measure (:func:`measure_adapter`, :func:`measure_result`).
ROLES = ("adapter", "result")
_ROLE = "__measure_role__"


@dataclass(frozen=True)
class Interval:
    """A confidence interval: ``low`` and ``high`` at coverage ``level``, and how it was
    obtained (``bootstrap-percentile``, ``normal``)."""

    low: float
    high: float
    level: float
    method: str


@dataclass(frozen=True)
class MeasureResult:
    """The outcome of one measure on one input, the same names for every measure.

    Attributes
    ----------
    measure : registered name (:data:`polybias.measures.MEASURES`).
    value : the headline number (an effect size, a CES, a score in percent, a variance).
    interval : confidence interval of ``value``, or None where the measure has none.
    p_value : p-value of the measure's null hypothesis (``Measure.null_hypothesis``),
        or None; ``p_method`` says how it was obtained (:data:`P_METHODS`).
    n : number of units the uncertainty is computed over (target items, scored words, samples, pairs,
        template × attribute rows, groups).
    options : the options the function ran with, defaults filled in.
    details : per-item frame (per word, sample, pair, attribute or row).
    extra : the measure's other named numbers or labels, beside ``value`` (e.g. the two
        rates whose ratio is GEST's g_s): a mapping of name to a number, a string or
        None, written to the run record with the rest (:meth:`record_values`).
    groups : the measure's table of its value overall and per subgroup of the items, as its
        function gives it (e.g. CrowS-Pairs' share of stereotyped pairs per bias type, the
        ``all`` row first), for a study that reports the breakdown; empty where the measure
        has none. Like ``details``, it stays out of :meth:`record_values`.
    """

    measure: str
    value: float
    interval: Interval | None
    p_value: float | None
    p_method: str
    n: int
    options: dict[str, Any] = field(default_factory=dict)
    details: pd.DataFrame = field(default_factory=pd.DataFrame, repr=False, compare=False)
    extra: Mapping[str, float | int | str | None] = field(default_factory=dict)
    groups: pd.DataFrame = field(default_factory=pd.DataFrame, repr=False, compare=False)

    def summary(self) -> dict[str, Any]:
        """The result as one flat row (no details): measure, value, ci_low, ci_high,
        ci_level, p_value, p_method, n.

        >>> MeasureResult("cb", 0.5, None, None, "none", 3).summary()["ci_low"] is None
        True
        """
        iv = self.interval
        return {"measure": self.measure, "value": self.value,
                "ci_low": iv.low if iv else None, "ci_high": iv.high if iv else None,
                "ci_level": iv.level if iv else None, "p_value": self.p_value,
                "p_method": self.p_method, "n": self.n}

    def record_values(self) -> dict[str, Any]:
        """The ``values`` of a run record of this result (the shape every registered
        measure's record has unless its study writes its own): value, interval (low, high,
        level, method, or None), p_value, p_method, n and extra; the options go to the
        record's ``parameters``, the per-item details stay out.

        >>> MeasureResult("toy", 0.5, Interval(0.1, 0.9, 0.95, "normal"), 0.01, "normal", 3,
        ...               extra={"rate": 0.2}).record_values()["interval"]
        {'low': 0.1, 'high': 0.9, 'level': 0.95, 'method': 'normal'}
        """
        iv = self.interval
        return {"value": self.value,
                "interval": None if iv is None else {"low": iv.low, "high": iv.high,
                                                     "level": iv.level, "method": iv.method},
                "p_value": self.p_value, "p_method": self.p_method, "n": self.n,
                "extra": dict(self.extra)}


def measure_adapter(func: Callable) -> Callable:
    """Mark ``func`` as a measure's adapter: ``func(*inputs, **options) -> (raw, options)``.

    >>> @measure_adapter
    ... def toy_adapter(x):
    ...     return float(x), {}
    >>> role(toy_adapter)
    'adapter'
    """
    setattr(func, _ROLE, "adapter")
    return func


def measure_result(func: Callable) -> Callable:
    """Mark ``func`` as a measure's result: ``func(name, raw, options) -> MeasureResult``."""
    setattr(func, _ROLE, "result")
    return func


def role(obj: Any) -> str | None:
    """The role ``obj`` is marked for (``"adapter"``, ``"result"``), or None."""
    return getattr(obj, _ROLE, None)


def call_options(funcs: Callable | tuple[Callable, ...], given: dict[str, Any],
                 skip: tuple[str, ...] = ()) -> dict[str, Any]:
    """Keyword options of ``funcs`` (one function, or a function and those its ``**kwargs``
    go to) with their defaults, updated by ``given``; an unknown option raises TypeError.

    >>> def f(x, seed=0, n=10): ...
    >>> call_options(f, {"n": 5})
    {'seed': 0, 'n': 5}
    """
    out: dict[str, Any] = {}
    for func in funcs if isinstance(funcs, tuple) else (funcs,):
        for name, par in inspect.signature(func).parameters.items():
            if name in skip or par.kind in (par.VAR_KEYWORD, par.VAR_POSITIONAL):
                continue
            if par.default is not inspect.Parameter.empty:
                out.setdefault(name, par.default)
    unknown = sorted(set(given) - set(out))
    if unknown:
        raise TypeError(f"unknown option(s) {', '.join(unknown)}; options: {', '.join(out) or 'none'}")
    out.update(given)
    return out


def finite_or_none(value: Any) -> float | None:
    """``value`` as a float, None when it is missing or NaN (a record's or a table's empty cell).

    >>> finite_or_none(None), finite_or_none(float("nan")), finite_or_none(2)
    (None, None, 2.0)
    """
    if value is None:
        return None
    value = float(value)
    return None if value != value else value


def permutation_method(method: str) -> str:
    """The :data:`P_METHODS` name of a permutation test's ``exact`` or ``monte-carlo``."""
    return "permutation-exact" if method == "exact" else "permutation-monte-carlo"
