"""One result type for every bias measure, and the registry of measures.

Every measure of the library — WEAT, SEAT, CEAT, Kurita's log-probability bias score,
the CrowS-Pairs stereotype score (masked, causal, AUL, AULA), the JSD stereotype score B,
Ahn & Oh's CB score, its PLL, sentiment-weighted and interaction variants, the KL
distribution difference, the association gap used to judge debiasing, and the per-word
scores WEFAT and the relative norm distance — is
computed by a pure function of :mod:`polybias.metrics` (arrays and frames in, numbers
out). The registry ``data/measures.yaml`` declares each one (its inputs, null
hypothesis, uncertainty method, reference, the options that reproduce the reference
code, the published values the tests reproduce); this module joins every entry with its
code into a :class:`Measure` and turns what the function returns into a
:class:`MeasureResult`, the one shape shared by all of them: ``value``, ``interval``,
``p_value`` and ``p_method``, ``n``, ``options`` and the per-item ``details`` frame.

:func:`compute` runs a measure by name::

    compute("weat", X=X, Y=Y, A=A, B=B, seed=0)

The registry drives ``polybias measures``, the metric cards under ``docs/measures/``
(:mod:`polybias.results.cards`) and the contract tests run over every measure
(``tests/test_measure_contracts.py``). Model-facing steps (encoding sentences, scoring
pairs or templates) stay in the engines and metric modules named in each
``Measure.scorer``; what is registered here is the step from their outputs to a number.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from polybias.metrics import catbias, ceat, crows, logprob, stereoset, weat, wefat

#: How a p-value was obtained.
P_METHODS = ("permutation-exact", "permutation-monte-carlo", "normal", "binomial-exact", "none")
#: The kinds of input a registered function takes (the contract tests build each kind).
INPUT_KINDS = ("vectors", "word-vectors", "occurrences", "attribute-scores", "pair-scores",
               "pair-attributions", "group-scores", "distributions", "item-scores")


class MeasureError(KeyError):
    """An unknown measure name, or a measure asked for an input it does not take."""

    def __str__(self) -> str:  # KeyError quotes its message; this one is a sentence
        return str(self.args[0]) if self.args else ""


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
    measure : registered name (:data:`MEASURES`).
    value : the headline number (an effect size, a CES, a score in percent, a variance).
    interval : confidence interval of ``value``, or None where the measure has none.
    p_value : p-value of the measure's null hypothesis (:attr:`Measure.null_hypothesis`),
        or None; ``p_method`` says how it was obtained (:data:`P_METHODS`).
    n : number of units the uncertainty is computed over (target items, scored words, samples, pairs,
        template × attribute rows, groups).
    options : the options the function ran with, defaults filled in.
    details : per-item frame (per word, sample, pair, attribute or row).
    """

    measure: str
    value: float
    interval: Interval | None
    p_value: float | None
    p_method: str
    n: int
    options: dict[str, Any] = field(default_factory=dict)
    details: pd.DataFrame = field(default_factory=pd.DataFrame, repr=False, compare=False)

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

    ``function`` is the pure metric function (:mod:`polybias.metrics`); ``adapter`` calls
    it on the measure's inputs and returns ``(raw, options)``; ``convert`` turns the raw
    output into a :class:`MeasureResult`. ``inputs`` names the keyword inputs of
    :func:`compute`, ``input_kind`` their kind (:data:`INPUT_KINDS`). ``polarity`` is
    ``signed`` (swapping the two target groups reflects ``value`` about ``null_value``; a
    per-word measure, kind ``word-vectors``, has no target groups and its two groups are A
    and B) or ``unsigned`` (the value does not depend on the order of the groups).
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
    scorer: str
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
        return f"{self.function.__module__}.{self.function.__qualname__}"


# ------------------------------------------------------------------ helpers

#: The code of the measures, by the keys ``data/measures.yaml`` names in ``adapter`` (calls
#: the pure function on a measure's inputs and returns ``(raw, options)``) and ``result``
#: (turns ``raw`` into a :class:`MeasureResult`); filled by :func:`_registers`.
ADAPTERS: dict[str, Callable] = {}
RESULTS: dict[str, Callable] = {}


def _registers(table: dict[str, Callable], key: str) -> Callable:
    def register(func: Callable) -> Callable:
        table[key] = func
        return func
    return register


def _options(funcs: Callable | tuple[Callable, ...], given: dict[str, Any],
             skip: tuple[str, ...] = ()) -> dict[str, Any]:
    """Keyword options of ``funcs`` (one function, or a function and those its ``**kwargs``
    go to) with their defaults, updated by ``given``; an unknown option raises TypeError."""
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


def _permutation_method(method: str) -> str:
    return "permutation-exact" if method == "exact" else "permutation-monte-carlo"


def _required(name: str, inputs: dict[str, Any], keys: tuple[str, ...]) -> list[Any]:
    missing = [k for k in keys if k not in inputs]
    if missing:
        raise MeasureError(f"measure {name!r} needs the input(s) {', '.join(missing)}")
    return [inputs[k] for k in keys]


# ------------------------------------------------------------------ association tests

def _associations(X, Y, A, B) -> pd.DataFrame:
    """s(w, A, B) of every target item: the per-item details of the association tests."""
    s = {role: weat.weat_association(M, A, B, (role, "A", "B")) for role, M in (("X", X), ("Y", Y))}
    return pd.DataFrame({"set": ["X"] * len(s["X"]) + ["Y"] * len(s["Y"]),
                         "item": list(range(len(s["X"]))) + list(range(len(s["Y"]))),
                         "association": np.concatenate([s["X"], s["Y"]])})


@_registers(ADAPTERS, "weat")
def _weat_adapter(X, Y, A, B, **options):
    opts = _options(weat.weat, options)
    return (weat.weat(X, Y, A, B, **opts), _associations(X, Y, A, B)), opts


@_registers(RESULTS, "weat")
def _weat_result(name: str, raw, opts: dict[str, Any]) -> MeasureResult:
    r, details = raw
    return MeasureResult(name, float(r.effect_size), None, float(r.pvalue),
                         _permutation_method(r.p_method), r.sizes["X"] + r.sizes["Y"], opts, details)


@_registers(ADAPTERS, "gap")
def _gap_adapter(X, Y, A, B):
    return (weat.association_gap(X, Y, A, B), _associations(X, Y, A, B)), {}


@_registers(RESULTS, "gap")
def _gap_result(name: str, raw, opts: dict[str, Any]) -> MeasureResult:
    gap, details = raw
    return MeasureResult(name, float(gap), None, None, "none", len(details), opts, details)


@_registers(ADAPTERS, "ceat")
def _ceat_adapter(X, Y, A, B, **options):
    opts = _options(ceat.ceat, options)
    return ceat.ceat(X, Y, A, B, **opts), opts


@_registers(RESULTS, "ceat")
def _ceat_result(name: str, r, opts: dict[str, Any], level: float = 0.95) -> MeasureResult:
    from scipy.stats import norm

    z = float(norm.ppf(0.5 + level / 2))
    details = pd.DataFrame({"sample": np.arange(r.n_samples), "effect_size": r.effect_sizes,
                            "variance": r.variances})
    return MeasureResult(name, float(r.ces), Interval(r.ces - z * r.se, r.ces + z * r.se, level, "normal"),
                         float(r.pvalue), _ceat_p_method(r.pvalue_method), int(r.n_samples), opts,
                         details)


def _ceat_p_method(method: str) -> str:
    if method == "normal":
        return "normal"
    return _permutation_method("exact" if method.endswith("-exact") else "monte-carlo")


# ------------------------------------------------------------------ per-word scores

@_registers(ADAPTERS, "wefat")
def _wefat_adapter(W, A, B, **options):
    opts = _options(wefat.wefat_association, options)
    return wefat.wefat_association(W, A, B, **opts), opts


@_registers(ADAPTERS, "relative-norm-distance")
def _relative_norm_distance_adapter(W, A, B):
    return wefat.relative_norm_distance(W, A, B), {}


def _per_word(name: str, scores: np.ndarray, value: float, opts: dict[str, Any]) -> MeasureResult:
    """A per-word measure: ``details`` holds the score of every row of W, in W's order."""
    details = pd.DataFrame({"item": np.arange(len(scores)), "association": scores})
    return MeasureResult(name, value, None, None, "none", len(scores), opts, details)


@_registers(RESULTS, "word-mean")
def _word_mean_result(name: str, scores, opts: dict[str, Any]) -> MeasureResult:
    return _per_word(name, scores, float(np.mean(scores)), opts)


@_registers(RESULTS, "word-sum")
def _word_sum_result(name: str, scores, opts: dict[str, Any]) -> MeasureResult:
    return _per_word(name, scores, float(np.sum(scores)), opts)


# ------------------------------------------------------------------ log-probability scores

@_registers(ADAPTERS, "kurita")
def _kurita_adapter(scores, x, y, a, b, value: str = "corrected", **options):
    opts = _options(logprob.kurita_effect, options)
    bias = logprob.attribute_bias(scores, x, y, value=value)
    return (logprob.kurita_effect(bias, a, b, **opts), bias, list(a), list(b)), {"value": value, **opts}


@_registers(RESULTS, "kurita")
def _kurita_result(name: str, raw, opts: dict[str, Any]) -> MeasureResult:
    r, bias, a, b = raw
    details = pd.DataFrame({"attribute": a + b, "set": ["A"] * len(a) + ["B"] * len(b),
                            "bias": bias.loc[a + b].to_numpy(float)})
    return MeasureResult(name, float(r.effect_size), None, float(r.pvalue),
                         _permutation_method(r.method), r.n_a + r.n_b, opts, details)


# ------------------------------------------------------------------ pair scores

@_registers(RESULTS, "share")
def _share_result(name: str, raw, opts: dict[str, Any]) -> MeasureResult:
    table, per_pair = raw
    row = table.iloc[0]
    interval = None if np.isnan(row["ci_low"]) else Interval(float(row["ci_low"]), float(row["ci_high"]),
                                                             opts["confidence"], "bootstrap-percentile")
    p = None if np.isnan(row["binom_p"]) else float(row["binom_p"])
    return MeasureResult(name, float(row["score"]), interval, p, "binomial-exact" if p is not None else "none",
                         int(row["n"]), opts, per_pair)


def _share_options(score: Callable, options: dict[str, Any]) -> dict[str, Any]:
    return _options((score, crows.aggregate_pairs), options, skip=("stereotyped", "bias_type", "ties"))


@_registers(ADAPTERS, "stereotype")
def _stereotype_adapter(scored, **options):
    opts = _share_options(crows.stereotype_score, options)
    table = crows.stereotype_score(scored, **opts)
    more, less = scored["score_more"].to_numpy(float), scored["score_less"].to_numpy(float)
    if opts["decimals"] is not None:
        more, less = np.round(more, opts["decimals"]), np.round(less, opts["decimals"])
    return (table, pd.DataFrame({"bias_type": scored["bias_type"].to_numpy(), "score_more": more,
                                 "score_less": less, "stereotyped": more > less, "tie": more == less},
                                index=scored.index)), opts


@_registers(ADAPTERS, "jsd")
def _jsd_adapter(attributed, **options):
    opts = _share_options(crows.jsd_stereotype_score, options)
    table = crows.jsd_stereotype_score(attributed, **opts)
    sjsd = attributed["sjsd"].to_numpy(float)
    tie = np.abs(sjsd) <= opts["atol"]
    return (table, pd.DataFrame({"bias_type": attributed["bias_type"].to_numpy(), "sjsd": sjsd,
                                 "biased": (sjsd < 0) & ~tie, "tie": tie}, index=attributed.index)), opts


@_registers(ADAPTERS, "stereoset")
def _stereoset_adapter(scored, **options):
    opts = _options(stereoset.stereoset_scores, options, skip=("by",))
    decisions = stereoset.decisions_from_scores(scored)
    table = stereoset.stereoset_scores(decisions, by=None, **opts)
    return (table, decisions), opts


@_registers(RESULTS, "stereoset")
def _stereoset_result(name: str, raw, opts: dict[str, Any]) -> MeasureResult:
    table, decisions = raw
    row = table.iloc[0]
    interval = None if np.isnan(row["ss_low"]) else Interval(float(row["ss_low"]), float(row["ss_high"]),
                                                             opts["confidence"], "bootstrap-percentile")
    return MeasureResult(name, float(row["ss"]), interval, float(row["binom_p"]), "binomial-exact",
                         int(row["n"]), opts, decisions)


# ------------------------------------------------------------------ categorical bias

@_registers(RESULTS, "cb")
def _cb_result(name: str, raw, opts: dict[str, Any]) -> MeasureResult:
    value, rows = raw
    return MeasureResult(name, float(value), None, None, "none", len(rows), opts, rows)


@_registers(ADAPTERS, "cb")
def _cb_adapter(scores, value: str = "corrected", group: str = "target", ddof: int = 0):
    rows = catbias.cb_rows(scores, value, group=group, ddof=ddof)
    return (float(rows["cb"].mean()), rows), {"value": value, "group": group, "ddof": ddof}


@_registers(ADAPTERS, "pll-cb")
def _pll_cb_adapter(scores, **options):
    opts = _options(catbias.pll_cb, options)
    r = catbias.pll_cb(scores, **opts)
    return (r.score, r.rows), opts


@_registers(ADAPTERS, "weighted-cb")
def _weighted_cb_adapter(scores, weights, value: str = "corrected", group: str = "target", ddof: int = 0):
    rows = catbias.cb_rows(scores, value, group=group, ddof=ddof)
    return ((catbias.weighted_cb(rows, weights), rows.assign(weight=rows["attribute"].map(weights))),
            {"value": value, "group": group, "ddof": ddof})


@_registers(ADAPTERS, "interaction")
def _interaction_adapter(scores, identity_columns, value: str = "corrected", ddof: int = 0,
                         weights: dict[str, float] | None = None):
    columns = list(identity_columns)
    if not columns:
        raise catbias.CatBiasError("identity_columns must name at least one column")
    missing = [c for c in columns if c not in scores.columns]
    if missing:
        raise catbias.CatBiasError(f"scores have no identity column(s) {missing}")
    combined = scores.assign(group=scores[columns].astype(str).agg("|".join, axis=1))
    rows = catbias.cb_rows(combined, value, group="group", ddof=ddof)
    score = float(rows["cb"].mean()) if weights is None else catbias.weighted_cb(rows, weights)
    return (score, rows), {"identity_columns": columns, "value": value, "ddof": ddof,
                           "weighted": weights is not None}


@_registers(ADAPTERS, "kl")
def _kl_adapter(log_dists, labels, scale: str = "sum"):
    matrix = catbias.kl_matrix(log_dists, list(labels), scale)
    return (matrix, catbias.max_kl(matrix)), {"scale": scale}


@_registers(RESULTS, "kl")
def _kl_result(name: str, raw, opts: dict[str, Any]) -> MeasureResult:
    matrix, (_row, _col, value) = raw
    long = matrix.rename_axis("p").reset_index().melt(id_vars="p", var_name="q", value_name="kl")
    return MeasureResult(name, float(value), None, None, "none", matrix.shape[0], opts, long)


# ------------------------------------------------------------------ the registry

def _resolve(name: str, what: str, where: str) -> Any:
    """The object a dotted name (``polybias.metrics.weat.weat``) names."""
    import importlib

    module, _, attr = str(name).rpartition(".")
    try:
        return getattr(importlib.import_module(module), attr)
    except (ImportError, AttributeError, ValueError) as exc:
        raise MeasureError(f"{where}: {what} {name!r} cannot be imported ({exc})") from exc


def load_registry(path: str | Path | None = None) -> dict[str, Measure]:
    """The measures of ``data/measures.yaml`` (or ``path``) joined with their code: the
    ``function`` and ``error`` it names (imported), and the ``adapter`` and ``result``
    code registered under the keys it gives (:data:`ADAPTERS`, :data:`RESULTS`). A name
    that resolves to nothing, or an unknown field, raises :class:`MeasureError` naming the
    measure and the field."""
    from polybias import paths

    path = Path(path) if path else paths.data_dir() / "measures.yaml"
    raw = paths.read_yaml(path, MeasureError, "measure registry")
    if not isinstance(raw, dict) or not raw:
        raise MeasureError(f"{path}: expected a mapping of measure names to entries")
    out = {}
    for name, entry in raw.items():
        where = f"{path}: measure {name!r}"
        entry = dict(entry or {})
        code = {}
        for key, table in (("adapter", ADAPTERS), ("result", RESULTS)):
            if entry.get(key) not in table:
                raise MeasureError(f"{where}: {key} must be one of {', '.join(table)}, got {entry.get(key)!r}")
            code[key] = table[entry.pop(key)]
        function = _resolve(entry.pop("function", ""), "function", where)
        error = _resolve(entry.pop("error", ""), "error", where)
        if not callable(function) or not (isinstance(error, type) and issubclass(error, Exception)):
            raise MeasureError(f"{where}: function must name a function and error an exception type")
        if entry.get("input_kind") not in INPUT_KINDS:
            raise MeasureError(f"{where}: input_kind must be one of {INPUT_KINDS}")
        if entry.get("polarity", "signed") not in ("signed", "unsigned"):
            raise MeasureError(f"{where}: polarity must be 'signed' or 'unsigned'")
        try:
            compat = tuple(Compat(**c) for c in entry.pop("compat", []) or [])
            published = tuple(Published(**p) for p in entry.pop("published", []) or [])
            out[name] = Measure(name=name, function=function, adapter=code["adapter"],
                                convert=functools.partial(code["result"], name), error=error,
                                compat=compat, published=published, **entry)
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
