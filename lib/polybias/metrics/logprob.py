"""Kurita et al. log-probability bias score, read at the target mask.

Kurita, Vyas, Pareek, Black & Tsvetkov (2019), "Measuring Bias in Contextualized Word
Representations" (GeBNLP), as used for Bangla by seed 000 (§3.3, §5.2): for a template
with a target slot (a group word) and an attribute slot (a trait),

* **fill score**  ``log p_tgt = log P(target | sentence with the target masked)``,
* **prior score** ``log p_prior = log P(target | sentence with target and attribute masked)``,
* **corrected score** (log-probability bias score) ``log p_tgt − log p_prior``,

where both probabilities are read **at the target's mask** (docs/conventions.md, pitfalls: Kurita's
reference code reads the prior at another index and the Bangla scripts read it at the
trait slot; ``prior_at="attribute"`` reproduces that mistake on purpose, for comparison).

The scores come from a model through :mod:`polybias.engines.template_scores`
(:func:`polybias.engines.template_scores.kurita_scores`: ``mode="word"``, the whole target
word by the chain rule, or ``mode="first_piece"``, Kurita / seed-000 compatible); this
module takes those scores.

The bias of an attribute ``a`` between target groups X and Y is
``s(a) = mean_{x∈X} corrected(x, a) − mean_{y∈Y} corrected(y, a)`` (targets averaged
over templates and synonym variants first); the effect size between attribute sets A and
B is ``(mean_A s − mean_B s) / std_{A∪B} s`` (ddof=1) with the one-sided split
permutation p of :func:`polybias.stats.split_permutation_test`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from polybias import stats
from polybias.metrics.measure import (
    MeasureResult,
    call_options,
    measure_adapter,
    measure_result,
    permutation_method,
)

if TYPE_CHECKING:
    from polybias.data.templating import TemplateBook


class LogProbError(ValueError):
    """Bad input to a log-probability metric; the message names what is wrong."""


def attribute_bias(scores: pd.DataFrame, x: list[str], y: list[str], value: str = "corrected") -> pd.Series:
    """s(a) = mean over X targets − mean over Y targets of ``value``, per attribute.

    Each target's score is first averaged over templates and variants, so every target of a
    group weighs the same (aggregation over gender nouns, seed 000 App. A.4).

    >>> df = pd.DataFrame({"target": ["he", "she", "he", "she"], "attribute": ["a", "a", "b", "b"],
    ...                    "corrected": [1.0, 0.0, -1.0, 0.5]})
    >>> attribute_bias(df, ["he"], ["she"]).to_dict()
    {'a': 1.0, 'b': -1.5}
    """
    x, y = list(x), list(y)
    if not x or not y:
        raise LogProbError("both target groups need at least one target")
    overlap = sorted(set(x) & set(y))
    if overlap:
        raise LogProbError(f"targets in both groups: {overlap}")
    per = scores.groupby(["attribute", "target"], sort=False)[value].mean().unstack("target")
    missing = [t for t in x + y if t not in per.columns]
    if missing:
        raise LogProbError(f"no scores for target(s) {missing}")
    return (per[x].mean(axis=1) - per[y].mean(axis=1)).rename("bias")


@dataclass(frozen=True)
class KuritaEffect:
    """Effect size of attribute bias between attribute sets A and B, with its test."""

    effect_size: float
    pvalue: float
    mean_a: float
    mean_b: float
    n_a: int
    n_b: int
    method: str


def kurita_effect(bias: pd.Series, a: list[str], b: list[str], n_permutations: int = stats.N_PERMUTATIONS,
                  seed: int = 0, alternative: stats.Alternative = "greater") -> KuritaEffect:
    """(mean_A s − mean_B s) / std_{A∪B} s (ddof=1) and its split permutation p-value.

    When every s is the same up to rounding (the values span no more than the permutation
    test's tolerance, 1e-9 × max(1, Σ|s|)), the effect size is 0/0: it is NaN, not the
    ratio of two rounding errors (the p-value is then 1).

    >>> s = pd.Series({"c1": 1.0, "c2": 2.0, "f1": -1.0, "f2": 0.0})
    >>> r = kurita_effect(s, ["c1", "c2"], ["f1", "f2"])
    >>> round(r.effect_size, 4), r.pvalue   # 2 / sqrt(5/3); 1 of the 6 splits reaches {c1, c2}
    (1.5492, 0.16666666666666666)
    >>> r = kurita_effect(pd.Series({"c1": 3e-15, "c2": -1e-15, "f1": 0.0, "f2": 2e-15}), ["c1", "c2"], ["f1", "f2"])
    >>> r.effect_size, r.pvalue
    (nan, 1.0)
    """
    missing = [w for w in list(a) + list(b) if w not in bias.index]
    if missing:
        raise LogProbError(f"no bias score for attribute(s) {missing}")
    sa, sb = bias.loc[list(a)].to_numpy(float), bias.loc[list(b)].to_numpy(float)
    pooled = np.concatenate([sa, sb])
    if np.ptp(pooled) <= 1e-9 * max(1.0, float(np.abs(pooled).sum())):
        d = float("nan")
    else:
        d = stats.standardized_mean_difference(sa, sb, ddof=1)
    test = stats.split_permutation_test(sa, sb, alternative=alternative,
                                        n_permutations=n_permutations, seed=seed)
    return KuritaEffect(d, test.pvalue, float(sa.mean()), float(sb.mean()), len(sa), len(sb), test.method)


# ---------------------------------------------------------------- planted-bias probes


def group_members(book: TemplateBook, list_name: str, feature: str = "group") -> dict[str, list[str]]:
    """Entry ids of a list by the value of one of their features."""
    out: dict[str, list[str]] = {}
    for e in book.lists[list_name].entries:
        if feature not in e.features:
            raise LogProbError(f"entry {e.id!r} of list {list_name!r} has no feature {feature!r}")
        out.setdefault(e.features[feature], []).append(e.id)
    return out


def context_study(scores: pd.DataFrame, book: TemplateBook, target_list: str, attribute_list: str,
                  x: str, y: str, a: str, b: str, feature: str = "group",
                  n_permutations: int = stats.N_PERMUTATIONS_SHORT, seed: int = 0) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Kurita scores per sentence structure (template set), as in seed 000 §5.2.

    For every set of ``book``: per attribute, the X − Y target-group difference of the
    fill, prior and corrected scores (:func:`attribute_bias`), and the effect size of the
    corrected difference between attribute groups ``a`` and ``b``
    (:func:`kurita_effect`). Groups come from the entries' ``feature``.

    Returns
    -------
    (summary, per_attribute) : ``summary`` has one row per set (structure, effect_size,
    pvalue, corrected_a, corrected_b, prior_spread: the standard deviation over target
    pairs of the prior differences); ``per_attribute`` has structure, attribute,
    attribute_group, fill, prior, corrected. A structure without a sentence for some
    attributes (seed 000 leaves two S5 cells blank) is tested on the attributes it has.
    """
    tg = group_members(book, target_list, feature)
    ag = group_members(book, attribute_list, feature)
    for name, groups, keys in ((target_list, tg, (x, y)), (attribute_list, ag, (a, b))):
        missing = [k for k in keys if k not in groups]
        if missing:
            raise LogProbError(f"list {name!r} has no {feature} {missing}; it has {sorted(groups)}")
    set_of = {t.name: t.set for t in book.templates.values()}
    scores = scores.assign(structure=scores["template"].map(set_of))
    rows, per = [], []
    for structure, g in scores.groupby("structure", sort=False):
        parts = {v: attribute_bias(g, tg[x], tg[y], value=v) for v in ("fill", "prior", "corrected")}
        frame = pd.DataFrame(parts).rename_axis("attribute").reset_index()
        frame.insert(0, "structure", structure)
        frame["attribute_group"] = frame["attribute"].map({w: k for k, ws in ag.items() for w in ws})
        per.append(frame)
        scored = set(parts["corrected"].index)  # a structure may lack some attributes' sentences
        eff = kurita_effect(parts["corrected"], [w for w in ag[a] if w in scored],
                            [w for w in ag[b] if w in scored], n_permutations=n_permutations, seed=seed)
        pairs = g.groupby("target")["prior"].mean()
        prior_pairs = [pairs[m] - pairs[f] for m, f in zip(tg[x], tg[y], strict=False)]
        rows.append({"structure": structure, "effect_size": eff.effect_size, "pvalue": eff.pvalue,
                     "corrected_" + a: eff.mean_a, "corrected_" + b: eff.mean_b,
                     "prior_spread": float(np.std(prior_pairs, ddof=1)) if len(prior_pairs) > 1 else np.nan})
    return pd.DataFrame(rows), pd.concat(per, ignore_index=True)


# ------------------------------------------------------------------ the registered measures
# The adapters and results of the measures of data/measures.yaml that use this module
# (polybias.metrics.measure explains the two roles).

@measure_adapter
def kurita_adapter(scores, x, y, a, b, value: str = "corrected", **options):
    """Measure ``kurita``: :func:`attribute_bias` of the template scores, then
    :func:`kurita_effect` over the attribute sets a and b."""
    opts = call_options(kurita_effect, options)
    bias = attribute_bias(scores, x, y, value=value)
    return (kurita_effect(bias, a, b, **opts), bias, list(a), list(b)), {"value": value, **opts}


@measure_result
def kurita_result(name: str, raw, opts: dict[str, Any]) -> MeasureResult:
    """The effect size with its permutation p-value; details: every attribute's bias."""
    r, bias, a, b = raw
    details = pd.DataFrame({"attribute": a + b, "set": ["A"] * len(a) + ["B"] * len(b),
                            "bias": bias.loc[a + b].to_numpy(float)})
    return MeasureResult(name, float(r.effect_size), None, float(r.pvalue),
                         permutation_method(r.method), r.n_a + r.n_b, opts, details)
