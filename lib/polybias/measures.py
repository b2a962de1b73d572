"""One result type for every bias measure, and the registry of measures.

Every measure of the library — WEAT, SEAT, CEAT, Kurita's log-probability bias score,
the CrowS-Pairs stereotype score (masked, causal, AUL, AULA), the JSD stereotype score B,
Ahn & Oh's CB score, its PLL, sentiment-weighted and interaction variants, the KL
distribution difference and the association gap used to judge debiasing — is
computed by a pure function of :mod:`polybias.metrics` (arrays and frames in, numbers
out). This module declares each one as a :class:`Measure` (its inputs, null
hypothesis, uncertainty method, reference, the options that reproduce the reference
code) and turns what its function returns into a :class:`MeasureResult`, the one shape
shared by all of them: ``value``, ``interval``, ``p_value`` and ``p_method``, ``n``,
``options`` and the per-item ``details`` frame.

:func:`compute` runs a measure by name::

    compute("weat", X=X, Y=Y, A=A, B=B, seed=0)

The registry drives ``polybias measures``, the metric cards under ``docs/measures/``
(:mod:`polybias.cards`) and the contract tests run over every measure
(``tests/test_measure_contracts.py``). Model-facing steps (encoding sentences, scoring
pairs or templates) stay in the engines and metric modules named in each
``Measure.scorer``; what is registered here is the step from their outputs to a number.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pandas as pd

from .metrics import catbias, ceat, crows, logprob, weat

#: How a p-value was obtained.
P_METHODS = ("permutation-exact", "permutation-monte-carlo", "normal", "binomial-exact", "none")
#: The kinds of input a registered function takes (the contract tests build each kind).
INPUT_KINDS = ("vectors", "occurrences", "attribute-scores", "pair-scores", "pair-attributions",
               "group-scores", "distributions")


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
    n : number of units the uncertainty is computed over (target items, samples, pairs,
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
    ``signed`` (swapping the two target groups reflects ``value`` about ``null_value``)
    or ``unsigned`` (the value does not depend on the order of the groups).
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
    compat: tuple[Compat, ...] = ()
    published: tuple[Published, ...] = ()
    notes: str = ""

    @property
    def function_name(self) -> str:
        return f"{self.function.__module__}.{self.function.__qualname__}"


# ------------------------------------------------------------------ helpers

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

def _weat_adapter(X, Y, A, B, **options):
    opts = _options(weat.weat, options)
    raw = weat.weat(X, Y, A, B, **opts)
    s = {role: weat.weat_association(M, A, B, (role, "A", "B")) for role, M in (("X", X), ("Y", Y))}
    return (raw, s), opts


def _weat_result(name: str, raw, opts: dict[str, Any]) -> MeasureResult:
    r, s = raw
    details = pd.DataFrame({"set": ["X"] * len(s["X"]) + ["Y"] * len(s["Y"]),
                            "item": list(range(len(s["X"]))) + list(range(len(s["Y"]))),
                            "association": np.concatenate([s["X"], s["Y"]])})
    return MeasureResult(name, float(r.effect_size), None, float(r.pvalue),
                         _permutation_method(r.p_method), r.sizes["X"] + r.sizes["Y"], opts, details)


def _gap_adapter(X, Y, A, B):
    s = {role: weat.weat_association(M, A, B, (role, "A", "B")) for role, M in (("X", X), ("Y", Y))}
    return (weat.association_gap(X, Y, A, B), s), {}


def _gap_result(name: str, raw, opts: dict[str, Any]) -> MeasureResult:
    gap, s = raw
    details = pd.DataFrame({"set": ["X"] * len(s["X"]) + ["Y"] * len(s["Y"]),
                            "item": list(range(len(s["X"]))) + list(range(len(s["Y"]))),
                            "association": np.concatenate([s["X"], s["Y"]])})
    return MeasureResult(name, float(gap), None, None, "none", len(details), opts, details)


def _ceat_adapter(X, Y, A, B, **options):
    opts = _options(ceat.ceat, options)
    return ceat.ceat(X, Y, A, B, **opts), opts


def _ceat_result(name: str, r, opts: dict[str, Any], level: float = 0.95) -> MeasureResult:
    from scipy.stats import norm

    z = float(norm.ppf(0.5 + level / 2))
    details = pd.DataFrame({"sample": np.arange(r.n_samples), "effect_size": r.effect_sizes,
                            "variance": r.variances})
    return MeasureResult(name, float(r.ces), Interval(r.ces - z * r.se, r.ces + z * r.se, level, "normal"),
                         float(r.pvalue), "normal", int(r.n_samples), opts, details)


# ------------------------------------------------------------------ log-probability scores

def _kurita_adapter(scores, x, y, a, b, value: str = "corrected", **options):
    opts = _options(logprob.kurita_effect, options)
    bias = logprob.attribute_bias(scores, x, y, value=value)
    return (logprob.kurita_effect(bias, a, b, **opts), bias, list(a), list(b)), {"value": value, **opts}


def _kurita_result(name: str, raw, opts: dict[str, Any]) -> MeasureResult:
    r, bias, a, b = raw
    details = pd.DataFrame({"attribute": a + b, "set": ["A"] * len(a) + ["B"] * len(b),
                            "bias": bias.loc[a + b].to_numpy(float)})
    return MeasureResult(name, float(r.effect_size), None, float(r.pvalue),
                         _permutation_method(r.method), r.n_a + r.n_b, opts, details)


# ------------------------------------------------------------------ pair scores

def _share_result(name: str, table: pd.DataFrame, per_pair: pd.DataFrame, opts: dict[str, Any],
                  level: float) -> MeasureResult:
    row = table.iloc[0]
    interval = None if np.isnan(row["ci_low"]) else Interval(float(row["ci_low"]), float(row["ci_high"]),
                                                             level, "bootstrap-percentile")
    p = None if np.isnan(row["binom_p"]) else float(row["binom_p"])
    return MeasureResult(name, float(row["score"]), interval, p, "binomial-exact" if p is not None else "none",
                         int(row["n"]), opts, per_pair)


def _stereotype_adapter(scored, **options):
    opts = _options((crows.stereotype_score, crows.aggregate_pairs), options,
                    skip=("stereotyped", "bias_type", "ties"))
    return (crows.stereotype_score(scored, **opts), scored), opts


def _stereotype_result(name: str, raw, opts: dict[str, Any]) -> MeasureResult:
    table, scored = raw
    more, less = scored["score_more"].to_numpy(float), scored["score_less"].to_numpy(float)
    if opts.get("decimals") is not None:
        more, less = np.round(more, opts["decimals"]), np.round(less, opts["decimals"])
    per_pair = pd.DataFrame({"bias_type": scored["bias_type"].to_numpy(), "score_more": more,
                             "score_less": less, "stereotyped": more > less, "tie": more == less},
                            index=scored.index)
    return _share_result(name, table, per_pair, opts, opts["confidence"])


def _jsd_adapter(attributed, **options):
    opts = _options((crows.jsd_stereotype_score, crows.aggregate_pairs), options,
                    skip=("stereotyped", "bias_type", "ties"))
    return (crows.jsd_stereotype_score(attributed, **opts), attributed), opts


def _jsd_result(name: str, raw, opts: dict[str, Any]) -> MeasureResult:
    table, attributed = raw
    sjsd = attributed["sjsd"].to_numpy(float)
    tie = np.abs(sjsd) <= opts["atol"]
    per_pair = pd.DataFrame({"bias_type": attributed["bias_type"].to_numpy(), "sjsd": sjsd,
                             "biased": (sjsd < 0) & ~tie, "tie": tie}, index=attributed.index)
    return _share_result(name, table, per_pair, opts, opts["confidence"])


# ------------------------------------------------------------------ categorical bias

def _cb_result(name: str, raw, opts: dict[str, Any]) -> MeasureResult:
    value, rows = raw
    return MeasureResult(name, float(value), None, None, "none", len(rows), opts, rows)


def _cb_adapter(scores, value: str = "corrected", group: str = "target", ddof: int = 0):
    rows = catbias.cb_rows(scores, value, group=group, ddof=ddof)
    return (float(rows["cb"].mean()), rows), {"value": value, "group": group, "ddof": ddof}


def _pll_cb_adapter(scores, **options):
    opts = _options(catbias.pll_cb, options)
    r = catbias.pll_cb(scores, **opts)
    return (r.score, r.rows), opts


def _weighted_cb_adapter(scores, weights, value: str = "corrected", group: str = "target", ddof: int = 0):
    rows = catbias.cb_rows(scores, value, group=group, ddof=ddof)
    return ((catbias.weighted_cb(rows, weights), rows.assign(weight=rows["attribute"].map(weights))),
            {"value": value, "group": group, "ddof": ddof})


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


def _kl_adapter(log_dists, labels, scale: str = "sum"):
    matrix = catbias.kl_matrix(log_dists, list(labels), scale)
    return (matrix, catbias.max_kl(matrix)), {"scale": scale}


def _kl_result(name: str, raw, opts: dict[str, Any]) -> MeasureResult:
    matrix, (_row, _col, value) = raw
    long = matrix.rename_axis("p").reset_index().melt(id_vars="p", var_name="q", value_name="kl")
    return MeasureResult(name, float(value), None, None, "none", matrix.shape[0], opts, long)


# ------------------------------------------------------------------ the registry

_CROWS_NULL = ("the model prefers the more and the less stereotyping sentence of a pair equally "
               "often (score 50)")
_CROWS_UNCERTAINTY = ("two-sided exact binomial test of the stereotyped share of the untied pairs "
                      "against 1/2; seeded percentile bootstrap interval over pairs")
_CROWS_INPUTS = {"scored": "pairs with score_more, score_less (a sentence score each) and bias_type"}
_CB_INPUTS = {"scores": "one row per sentence: template, attribute, target (the group), variant "
                        "and the log-probability column named by `value` (default corrected)"}
_WEAT_COMPAT = (Compat("ddof", 0, "polybias.metrics.weat.weat",
                       "the population std of WEFE and XWEAT (and seed 003) in the effect size"),)

MEASURES: dict[str, Measure] = {m.name: m for m in (
    Measure(
        name="weat", title="Word Embedding Association Test",
        summary="Differential association of two target word sets with two attribute sets in a "
                "static embedding.",
        formula="s(w, A, B) = mean_a cos(w, a) − mean_b cos(w, b); "
                "d = (mean_X s − mean_Y s) / std_{X∪Y} s (ddof = 1)",
        inputs={"X": "(n_x, d) target vectors", "Y": "(n_y, d) target vectors",
                "A": "(n_a, d) attribute vectors", "B": "(n_b, d) attribute vectors"},
        input_kind="vectors", function=weat.weat, adapter=_weat_adapter,
        convert=lambda r, o: _weat_result("weat", r, o),
        null_hypothesis="the target words are exchangeable between X and Y (no differential "
                        "association)",
        uncertainty="one-sided split permutation test of Σ_X s − Σ_Y s: exact enumeration up to "
                    "exact_limit splits, else seeded Monte Carlo with p = (hits + 1)/(n + 1)",
        reference="Caliskan, Bryson & Narayanan (2017), Semantics derived automatically from "
                  "language corpora contain human-like biases, Science 356:183",
        scorer="polybias.models.lookup (word vectors of a static embedding)",
        value_is="the effect size d",
        n_is="|X| + |Y| target words; details: s(w, A, B) per target word",
        error=ValueError, compat=_WEAT_COMPAT,
        published=(Published("caliskan2017_weat", "tests/metrics/test_weat.py::"
                             "test_caliskan_word2vec_effect_sizes",
                             "effect sizes of the word2vec WEATs to 0.01", {"model": "w2v-gnews"}),),
    ),
    Measure(
        name="seat", title="Sentence Encoder Association Test",
        summary="WEAT on sentence vectors: every word put into semantically bleached templates "
                "and encoded.",
        formula="WEAT on sentence vectors: d = (mean_X s − mean_Y s) / std_{X∪Y} s (ddof = 1)",
        inputs={"X": "(n_x, d) target sentence vectors", "Y": "(n_y, d) target sentence vectors",
                "A": "(n_a, d) attribute sentence vectors", "B": "(n_b, d) attribute sentence vectors"},
        input_kind="vectors", function=weat.weat, adapter=_weat_adapter,
        convert=lambda r, o: _weat_result("seat", r, o),
        null_hypothesis="the target sentences are exchangeable between X and Y",
        uncertainty="one-sided split permutation test, as WEAT",
        reference="May, Wang, Bordia, Bowman & Rudinger (2019), On measuring social biases in "
                  "sentence encoders, NAACL",
        scorer="polybias.metrics.seat.seat_vectors (polybias.embeddings.sentence_vectors)",
        value_is="the effect size d",
        n_is="|X| + |Y| target sentences; details: s(w, A, B) per target sentence",
        error=ValueError,
        compat=(Compat("pooling, special_tokens", "'first-piece', False", "polybias.metrics.seat.seat",
                       "the sent-bias BERT encoder: first word piece of a sentence encoded without "
                       "[CLS]/[SEP]",
                       "tests/reference/test_ref_sent_bias.py::"
                       "test_special_tokens_false_equals_the_executed_reference"),
                *_WEAT_COMPAT),
    ),
    Measure(
        name="weat-gap", title="Association gap (debiasing)",
        summary="The unnormalised WEAT difference in cosine units, used beside the effect size "
                "to judge a debiasing method.",
        formula="gap = mean_X s(x, A, B) − mean_Y s(y, A, B)",
        inputs={"X": "(n_x, d) target vectors", "Y": "(n_y, d) target vectors",
                "A": "(n_a, d) attribute vectors", "B": "(n_b, d) attribute vectors"},
        input_kind="vectors", function=weat.association_gap, adapter=_gap_adapter,
        convert=lambda r, o: _gap_result("weat-gap", r, o),
        null_hypothesis="none tested (a descriptive difference; 0 means no association gap)",
        uncertainty="none",
        reference="Malik et al. (2022), Socially aware bias measurements for Hindi language "
                  "representations, NAACL (seed 003); the effect size divides this gap by the "
                  "spread of s",
        scorer="polybias.debias.evaluate (before and after a debiasing method)",
        value_is="the gap in cosine units",
        n_is="|X| + |Y| target items; details: s(w, A, B) per target item",
        error=ValueError,
        notes="After a debiasing that shrinks every association, a tiny residual gap can still "
              "give a large effect size of either sign; the gap shows how much association is "
              "left in cosine units.",
    ),
    Measure(
        name="ceat", title="Contextualized Embedding Association Test",
        summary="Per-sample WEAT effect sizes of contextual occurrence vectors pooled by a "
                "random-effects model.",
        formula="d_i, V_i per sample; τ² by DerSimonian–Laird; v_i = 1/(V_i + τ²); "
                "CES = Σ v_i d_i / Σ v_i; SE = sqrt(1/Σ v_i)",
        inputs={"X": "(n_x, N, d) occurrence vectors", "Y": "(n_y, N, d) occurrence vectors",
                "A": "(n_a, N, d) occurrence vectors", "B": "(n_b, N, d) occurrence vectors"},
        input_kind="occurrences", function=ceat.ceat, adapter=_ceat_adapter,
        convert=lambda r, o: _ceat_result("ceat", r, o),
        null_hypothesis="the combined effect size is 0",
        uncertainty="z = CES/SE against the standard normal (two-sided by default); normal "
                    "95 % interval CES ± 1.96 SE",
        reference="Guo & Caliskan (2021), Detecting emergent intersectional biases: contextualized "
                  "word embeddings contain a distribution of human-like biases, AIES; "
                  "DerSimonian & Laird (1986)",
        scorer="polybias.metrics.ceat.occurrence_vectors (polybias.embeddings.word_vectors)",
        value_is="the combined effect size CES",
        n_is="N samples; details: d_i and V_i per sample",
        error=ceat.CeatError,
        compat=(Compat("alternative", "'greater'", "polybias.metrics.ceat.ceat",
                       "the one-tailed p = 1 − Φ(CES/SE) of the Guo & Caliskan code"),),
        published=(Published("sadhu2024_table5", "tests/test_reported.py::"
                             "test_sadhu_table4_ceat_column_is_table5_generator_segment9_fixed",
                             "seed 000's CES tables, transcribed and checked for consistency "
                             "between its tables (the Bangla models are not run by the tests)",
                             {"model": "banglabert-large-generator"}),),
    ),
    Measure(
        name="kurita", title="Log-probability bias score (Kurita et al.)",
        summary="Target-group difference of prior-corrected target log-probabilities, compared "
                "between two attribute sets.",
        formula="corrected = log P(target | sentence) − log P(target | attribute masked); "
                "s(a) = mean_X corrected − mean_Y corrected; "
                "d = (mean_A s − mean_B s) / std_{A∪B} s (ddof = 1)",
        inputs={"scores": "one row per sentence: target, attribute and `value` (default corrected)",
                "x": "target entries of group X", "y": "target entries of group Y",
                "a": "attributes of set A", "b": "attributes of set B"},
        input_kind="attribute-scores", function=logprob.kurita_effect, adapter=_kurita_adapter,
        convert=lambda r, o: _kurita_result("kurita", r, o),
        null_hypothesis="the attributes are exchangeable between A and B",
        uncertainty="one-sided split permutation test of the attribute bias scores",
        reference="Kurita, Vyas, Pareek, Black & Tsvetkov (2019), Measuring bias in contextualized "
                  "word representations, GeBNLP; Sadhu et al. (2024) for Bangla (seed 000)",
        scorer="polybias.metrics.logprob.kurita_scores",
        value_is="the effect size between attribute sets A and B",
        n_is="|A| + |B| attributes; details: the bias score s(a) per attribute",
        error=logprob.LogProbError,
        compat=(Compat("mode, index_quirk", "'first_piece', 'kurita2019'",
                       "polybias.metrics.logprob.kurita_scores",
                       "Kurita et al.'s code: fill and prior read one token off the mask",
                       "tests/reference/test_ref_kurita.py::"
                       "test_index_quirk_kurita2019_equals_the_executed_reference"),
                Compat("mode, prior_at", "'first_piece', 'attribute'",
                       "polybias.metrics.logprob.kurita_scores",
                       "the Bangla reimplementation (seed 000): prior read at the trait's mask",
                       "tests/reference/test_ref_bangla.py::"
                       "test_prior_at_attribute_equals_the_executed_reference")),
    ),
    Measure(
        name="crows", title="CrowS-Pairs stereotype score",
        summary="Share of minimal pairs whose more stereotyping sentence the model scores higher.",
        formula="score = 100 · #(score_more > score_less) / #pairs (ties not stereotyped)",
        inputs=_CROWS_INPUTS, input_kind="pair-scores", function=crows.stereotype_score,
        adapter=_stereotype_adapter, convert=lambda r, o: _stereotype_result("crows", r, o),
        null_hypothesis=_CROWS_NULL, uncertainty=_CROWS_UNCERTAINTY, null_value=50.0,
        reference="Nangia, Vania, Bhalerao & Bowman (2020), CrowS-Pairs, EMNLP; masked LMs sum "
                  "the log-probabilities of the shared tokens masked one at a time; causal LMs "
                  "the sentence log-likelihood given BOS (Felkner et al. 2023)",
        scorer="polybias.metrics.crows.pair_scores (method 'nangia', 'causal' or 'bias-bench')",
        value_is="the stereotype score in percent (over all pairs)",
        n_is="pairs; details: both sentence scores and the decision per pair",
        error=crows.CrowsError,
        compat=(Compat("decimals", 3, "polybias.metrics.crows.stereotype_score",
                       "the Nangia et al. script's rounding of sentence scores to 3 decimals",
                       "tests/reference/test_ref_nangia.py::test_nangia_equals_the_executed_reference"),
                Compat("method, on_unmodified", "'bias-bench', 'skip'",
                       "polybias.metrics.crows.pair_scores",
                       "bias-bench's masked variant (modified tokens, mean; pairs without a "
                       "modified token skipped)",
                       "tests/reference/test_ref_bias_bench.py::"
                       "test_masked_variant_with_skip_equals_the_executed_reference"),
                Compat("method, causal_bos", "'bias-bench', 'first-token'",
                       "polybias.metrics.crows.pair_scores",
                       "bias-bench's causal variant (the sentence fed without BOS)",
                       "tests/reference/test_ref_bias_bench.py::"
                       "test_causal_first_token_equals_the_executed_reference")),
    ),
    Measure(
        name="aul", title="All-unmasked likelihood (AUL) stereotype score",
        summary="CrowS-Pairs stereotype score with each sentence scored by its mean token "
                "log-probability with nothing masked.",
        formula="AUL(S) = (1/n) Σ_i log P(w_i | S); score = 100 · #(AUL_more > AUL_less) / #pairs",
        inputs=_CROWS_INPUTS, input_kind="pair-scores", function=crows.stereotype_score,
        adapter=_stereotype_adapter, convert=lambda r, o: _stereotype_result("aul", r, o),
        null_hypothesis=_CROWS_NULL, uncertainty=_CROWS_UNCERTAINTY, null_value=50.0,
        reference="Kaneko & Bollegala (2022), Unmasking the mask — evaluating social biases in "
                  "masked language models, AAAI",
        scorer="polybias.metrics.crows.pair_scores(method='aul') "
               "(polybias.metrics.crows.all_unmasked_scores)",
        value_is="the stereotype score in percent",
        n_is="pairs; details: both sentences' AUL and the decision per pair",
        error=crows.CrowsError,
        notes="The scores follow the authors' code (one forward pass per sentence); batching "
              "changes them only at rounding level.",
    ),
    Measure(
        name="aula", title="Attention-weighted AUL (AULA) stereotype score",
        summary="AUL with every token's log-probability weighted by the mean attention it "
                "receives.",
        formula="AULA(S) = (1/n) Σ_i a_i log P(w_i | S), a_i the attention to token i averaged "
                "over layers, heads and queries",
        inputs=_CROWS_INPUTS, input_kind="pair-scores", function=crows.stereotype_score,
        adapter=_stereotype_adapter, convert=lambda r, o: _stereotype_result("aula", r, o),
        null_hypothesis=_CROWS_NULL, uncertainty=_CROWS_UNCERTAINTY, null_value=50.0,
        reference="Kaneko & Bollegala (2022), Unmasking the mask — evaluating social biases in "
                  "masked language models, AAAI",
        scorer="polybias.metrics.crows.pair_scores(method='aula')",
        value_is="the stereotype score in percent",
        n_is="pairs; details: both sentences' AULA and the decision per pair",
        error=crows.CrowsError,
        notes="The attention weights are not renormalised, as in the authors' code.",
    ),
    Measure(
        name="jsd-b", title="JSD stereotype score B and bias attribution",
        summary="Share of pairs whose shared tokens the model predicts better in the more "
                "stereotyping sentence, by the Jensen–Shannon distance to the gold token.",
        formula="b(u) = JSD(P_u,more ‖ G_u) − JSD(P_u,less ‖ G_u); S_JSD = mean_u b(u); "
                "B = 100 · #(S_JSD < 0) / #pairs",
        inputs={"attributed": "pairs with sjsd (mean b(u) over the shared tokens) and bias_type"},
        input_kind="pair-attributions", function=crows.jsd_stereotype_score, adapter=_jsd_adapter,
        convert=lambda r, o: _jsd_result("jsd-b", r, o),
        null_hypothesis="S_JSD is as often positive as negative (B = 50)",
        uncertainty=_CROWS_UNCERTAINTY, null_value=50.0,
        reference="Gamboa & Lee (2024), A novel interpretability metric for explaining bias in "
                  "language models: applications on multilingual models from Southeast Asia "
                  "(seed 001), eqs. 1–8",
        scorer="polybias.metrics.crows.jsd_attributions",
        value_is="B in percent",
        n_is="pairs; details: S_JSD and the decision per pair",
        error=crows.CrowsError,
        compat=(Compat("compat_fourth_root", True, "polybias.metrics.crows.jsd_attributions",
                       "the seed-001 code's fourth root of the JS divergence",
                       "tests/reference/test_ref_gamboa.py::"
                       "test_compat_fourth_root_equals_the_executed_reference"),),
        published=(Published("gamboa2024_table3", "tests/metrics/test_crows.py::"
                             "test_gamboa_gpt2_table3_reproduction",
                             "Table 3 B per bias type from the published per-pair scores",
                             {"model": "gpt2"}),),
    ),
    Measure(
        name="cb", title="Categorical Bias score (Ahn & Oh)",
        summary="Variance over groups of the prior-normalised log-probability of each group, "
                "averaged over templates and attributes.",
        formula="CB = 1/(|T||A|) Σ_t Σ_a Var_n log(P(n | t, a) / P(n | t, prior)) (ddof = 0)",
        inputs=_CB_INPUTS, input_kind="group-scores", function=catbias.cb_rows, adapter=_cb_adapter,
        convert=lambda r, o: _cb_result("cb", r, o), polarity="unsigned",
        null_hypothesis="none tested (CB ≥ 0; 0 means every group is equally likely next to "
                        "every attribute)",
        uncertainty="none",
        reference="Ahn & Oh (2021), Mitigating language-dependent ethnic bias in BERT, EMNLP, eq. 2",
        scorer="polybias.metrics.logprob.kurita_scores (corrected scores) or "
               "polybias.metrics.logprob.ahn_oh_scores",
        value_is="the CB score (≥ 0)",
        n_is="(template, attribute) rows; details: the variance per row",
        error=catbias.CatBiasError,
        compat=(Compat("multipiece, ddof", "'ahn-oh', 1", "polybias.metrics.catbias.ahn_oh_cb",
                       "Ahn & Oh's code: k masks for a k-piece word, every piece scored at every "
                       "mask, sample variance",
                       "tests/reference/test_ref_ahn_oh.py::"
                       "test_multipiece_ahn_oh_equals_the_executed_reference"),),
    ),
    Measure(
        name="pll-cb", title="PLL Categorical Bias score (seed 002)",
        summary="CB with sentence pseudo-log-likelihoods of grammatical filled templates and no "
                "prior.",
        formula="per (set, attribute, group): log-mean-exp of the PLL over templates and synonyms; "
                "CB = mean over (set, attribute) of Var over groups (ddof = 0)",
        inputs={"scores": "one row per sentence: set, template, attribute, target, variant, pll"},
        input_kind="group-scores", function=catbias.pll_cb, adapter=_pll_cb_adapter,
        convert=lambda r, o: _cb_result("pll-cb", r, o), polarity="unsigned",
        null_hypothesis="none tested (CB ≥ 0)", uncertainty="none",
        reference="BehnamGhader & Milios (2022), An analysis of social biases present in BERT "
                  "variants across multiple languages (seed 002), §3.3",
        scorer="polybias.metrics.catbias.pll_scores (polybias.scoring.pseudo_log_likelihood)",
        value_is="the CB score (≥ 0)",
        n_is="(set, attribute) rows; details: the variance per row",
        error=catbias.CatBiasError,
        compat=(Compat("template_norm", "'per-template'", "polybias.metrics.catbias.pll_cb",
                       "the seed-002 code's per-template normalisation of the group probabilities",
                       "tests/reference/test_ref_seed002.py::"
                       "test_per_template_norm_equals_the_executed_reference"),),
        published=(Published("behnamghader2022_cb", "tests/test_seed002.py::"
                             "test_counts_through_the_loader_equal_the_files_and_reproduce_0_6271",
                             "the aggregated CB as the prior-count weighted mean of the per-set "
                             "values"),),
    ),
    Measure(
        name="sentiment-cb", title="Sentiment-weighted Categorical Bias score (seed 004)",
        summary="CB with every attribute weighted by the strength of its sentiment.",
        formula="CB_w = Σ_a w_a Var_a / Σ_a w_a, w_a = |VADER compound(a)|",
        inputs={**_CB_INPUTS, "weights": "attribute → weight (polybias.metrics.catbias."
                                         "sentiment_weights)"},
        input_kind="group-scores", function=catbias.weighted_cb, adapter=_weighted_cb_adapter,
        convert=lambda r, o: _cb_result("sentiment-cb", r, o), polarity="unsigned",
        null_hypothesis="none tested (CB ≥ 0)", uncertainty="none",
        reference="Cultural interaction bias capstone (2023, seed 004), §4.1 and §4.4; "
                  "Hutto & Gilbert (2014) for VADER",
        scorer="polybias.metrics.catbias.interaction_cb(weights=...)",
        value_is="the weighted CB score (≥ 0)",
        n_is="(template, attribute) rows; details: the variance and weight per row",
        error=catbias.CatBiasError,
        published=(Published("capstone2023_interaction", "tests/metrics/test_catbias.py::"
                             "test_seed004_modified_scores_are_sentiment_weighted",
                             "the published modified (sentiment-weighted) two-way scores",
                             {"metric": "modified_cb_score"}),),
    ),
    Measure(
        name="interaction-cb", title="Interaction Categorical Bias score (seed 004)",
        summary="CB over groups that combine identities of several characteristics "
                "(e.g. country × language).",
        formula="group = one identity per characteristic; log P(group | a) = Σ_slots "
                "log P(identity | sentence); CB over the combined groups",
        inputs={**_CB_INPUTS, "identity_columns": "columns whose values combine into a group"},
        input_kind="group-scores", function=catbias.cb_rows, adapter=_interaction_adapter,
        convert=lambda r, o: _cb_result("interaction-cb", r, o), polarity="unsigned",
        null_hypothesis="none tested (CB ≥ 0)", uncertainty="none",
        reference="Cultural interaction bias capstone (2023, seed 004), §4",
        scorer="polybias.metrics.catbias.interaction_cb",
        value_is="the CB score over combined groups (≥ 0)",
        n_is="(template, attribute) rows; details: the variance per row",
        error=catbias.CatBiasError,
        compat=(Compat("method", "'seed004'", "polybias.metrics.catbias.seed004_interaction_scores",
                       "the published CG_score files: the variance of the ratio Probs / Probs_base "
                       "over all rows, adjectives pooled"),),
        published=(Published("capstone2023_interaction", "tests/metrics/test_catbias.py::"
                             "test_seed004_two_characteristic_scores",
                             "the published two-way scores from the per-row file",
                             {"metric": "cb_score"}),),
    ),
    Measure(
        name="kl-difference", title="Distribution difference (maximum KL)",
        summary="Largest KL divergence between the vocabulary distributions predicted at the "
                "attribute mask for two target groups.",
        formula="D[i, j] = KL(P_i ‖ P_j) = Σ_v P_i(v)(log P_i(v) − log P_j(v)); value = max D",
        inputs={"log_dists": "(groups, V) log-probabilities at the attribute mask",
                "labels": "group names"},
        input_kind="distributions", function=catbias.kl_matrix, adapter=_kl_adapter,
        convert=lambda r, o: _kl_result("kl-difference", r, o), polarity="unsigned",
        null_hypothesis="none tested (KL ≥ 0)", uncertainty="none",
        reference="BehnamGhader & Milios (2022, seed 002) App. A.3, after Liang et al. (2021)",
        scorer="polybias.metrics.catbias.distribution_difference",
        value_is="the largest KL(P_i ‖ P_j) in nats",
        n_is="groups; details: the KL of every ordered pair",
        error=catbias.CatBiasError,
        compat=(Compat("scale", "'mean'", "polybias.metrics.catbias.kl_matrix",
                       "the seed-002 code's F.kl_div(reduction='mean'): divided by the vocabulary "
                       "size"),
                Compat("labels", "'seed002'", "polybias.metrics.catbias.max_kl",
                       "the seed-002 notebook's naming of the pair (KL(P₂‖P₁) stored under w_1-w_2)",
                       "tests/reference/test_ref_seed002.py::"
                       "test_kl_labels_follow_the_seed002_notebook")),
        published=(Published("behnamghader2022_table3", "tests/test_reported.py::"
                             "test_behnamghader_table3_template_sets_match_table2",
                             "seed 002's KL table, transcribed and checked against its Table 2 "
                             "(the BERT variants are not run by the tests)"),),
    ),
)}


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
