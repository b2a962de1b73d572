"""The framework of the notebooks' parameter declarations, and what they share.

A notebook declares its parameters as a :class:`Notebook`: one :class:`Parameter` per
parameter of its cell tagged ``parameters`` (the help, the allowed values or the numeric
range) and a check of the parameters that relate to one another. Each study module
declares its notebook's as ``NOTEBOOK_PARAMETERS`` (e.g.
:data:`polybias.studies.crows_pairs.NOTEBOOK_PARAMETERS`), built from the helpers here
(:func:`choice`, :func:`integer`, :func:`probability`, :func:`free`), the parameters
several notebooks share (:data:`REVISION`, :data:`DEVICE`, :func:`model_engine`, ...) and
the checks several share (:func:`check_model_language`, :func:`crows_method_refusal`,
:func:`published_only`, ...). :mod:`polybias.studies.parameters` gathers them into
``NOTEBOOKS``, checks a notebook's parameters and generates the help comments.

This module imports no other ``polybias.studies`` module: every study module imports it.
"""

from __future__ import annotations

import importlib
import inspect
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from polybias.metrics import ceat, crows
from polybias.models import check_language, resolve_model
from polybias.planted import synthetic


class ParameterError(ValueError):
    """A notebook parameter with a value the notebook cannot run with."""


def spoken(values: Sequence[Any], conjunction: str = "or") -> str:
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

        >>> integer("x", default="polybias.stats.N_BOOTSTRAP").default_value()
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
        values = spoken(self.allowed(), "and" if self.each else "or") if self.values is not None \
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

def choice(help: str, values, empty: bool = False) -> Parameter:
    """A parameter that takes one of ``values`` (a sequence, or a function returning one)."""
    return Parameter(help, values=values, empty=empty)


def integer(help: str, low: float | None = 0, high: float | None = None,
            default: str | None = None) -> Parameter:
    """An integer parameter in ``[low, high]`` (``None``: unbounded; by default ``>= 0``)."""
    return Parameter(help, low=low, high=high, integer=True, default=default)


def probability(help: str, default: str | None = None) -> Parameter:
    """A number in ``[0, 1]``."""
    return Parameter(help, low=0, high=1, default=default)


def free(help: str) -> Parameter:
    """A parameter with help only: no allowed values or range to check."""
    return Parameter(help)


def planted_languages() -> tuple[str, ...]:
    """The languages of the planted corpora (:data:`polybias.planted.synthetic.LANGUAGES`)."""
    return synthetic.LANGUAGES


#: The formats of a static embedding file a notebook names by path.
STATIC_FILE_FORMATS = ("word2vec-text", "word2vec-binary", "glove-text")
#: The end of the help of a ``model`` parameter that also takes a directory or a hub id.
HUB = "a model directory or a hub id"
#: The help of a ``model`` parameter that takes a registered language model.
SCORED_MODEL = "registered language model (configs/models.yaml or POLYBIAS_MODELS_FILE), " + HUB

# the parameters several notebooks share, those of the model engine first (model_engine)
REVISION = free("hub branch, tag or 40-hex commit; empty: the registered revision, else main")
DEVICE = free("auto (CUDA when present; the CPU for embedded and planted models), cpu, cuda or "
              "cuda:N")
DTYPE = free("auto (bfloat16 on CUDA for decoder families trained in it, else float32), float32, "
             "bfloat16 or float16 (CUDA only)")
BATCH_TOKENS = integer("padded tokens per forward pass; 0: auto (8192 on the CPU, from free GPU "
                       "memory on CUDA)")
LANGUAGE_OVERRIDE = free("run a registered model on a language its entry does not list "
                         "(recorded in the run)")
DDOF_WEAT = choice("std degrees of freedom of the effect size (1 Caliskan, 0 WEFE): {values}",
                   (1, 0))
ALTERNATIVE = choice("permutation test: {values}", ceat.ALTERNATIVES)
PLANTED_STRENGTH = Parameter("planted-static: strength of the planted association (0: none; "
                             "{range})", low=0)
#: The help of a ``table_file`` parameter, ``{}`` filled in with an example table's name.
TABLE_FILE = "where to write the tables, e.g. paper/tables/{}.md"
OUTPUT_DIR = free("run records, relative to the project root")


def model_engine() -> dict[str, Parameter]:
    """The parameters of a notebook that loads a model: revision, device, dtype, batch_tokens."""
    return {"revision": REVISION, "device": DEVICE, "dtype": DTYPE, "batch_tokens": BATCH_TOKENS}


# ------------------------------------------------------------------ checks of several parameters

def check_model_language(model: str, language: str, language_override: bool,
                         registry: dict[str, dict[str, Any]] | None = None) -> None:
    """Raise unless ``model`` may run on ``language`` (:func:`polybias.models.check_language`)."""
    check_language(model, language, language_override, registry)


def model_kind(model: str, registry: dict[str, dict[str, Any]]) -> str | None:
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


def published_only(model, revision, device, dtype, batch_tokens):
    """Raise when ``model`` is ``published`` and a parameter of the model engine is set."""
    if model == "published" and (revision or device != "auto" or dtype != "auto" or batch_tokens):
        raise ParameterError("revision, device, dtype and batch_tokens apply to a model that is "
                             "scored, not to model=published")
