"""Log-probability bias and the amount of context (notebook 04): the decisions its
checked cell prints and the prior-vs-corrected figure. The notebook's template books
come from :mod:`polybias.studies.template_books`, its planted Bangla MLMs from
:func:`polybias.models.load`; the per-structure study
itself is :func:`polybias.metrics.logprob.context_study`."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from polybias.data import templating
from polybias.engines import template_scores
from polybias.metrics.measure import MeasureResult, finite_or_none, permutation_method
from polybias.models import ANALYTIC, PLANTED
from polybias.results.plots import MARKERS, colours, finish_figure, pyplot
from polybias.results.records import Record, measure_results_record
from polybias.stats import ALPHA, split_permutation_kind
from polybias.studies.notebook_parameters import (
    BATCH_TOKENS,
    DEVICE,
    OUTPUT_DIR,
    REVISION,
    TABLE_FILE,
    Notebook,
    ParameterError,
    choice,
    free,
    integer,
    probability,
)

#: Below this absolute size a corrected difference (in nats) counts as zero: far above the
#: rounding noise of a float64 forward pass (about 1e-14), far below any planted effect.
ZERO_TOLERANCE = 1e-9


def decisions(summary: pd.DataFrame, per_attribute: pd.DataFrame, a: str, b: str,
              alpha: float = ALPHA, tol: float = ZERO_TOLERANCE) -> pd.DataFrame:
    """Per structure, the decisions of :func:`polybias.metrics.logprob.context_study` that
    do not depend on the last bits of the CPU's arithmetic: for each attribute group, how
    many attributes were scored and how many have a corrected X − Y difference above
    ``tol`` (``… > 0``) or below −``tol`` (``… < 0``); and whether the one-sided permutation
    test separates ``a`` from ``b`` at ``alpha`` (``separated``: yes/no).

    >>> per = pd.DataFrame({"structure": ["S1"] * 4, "attribute": ["c1", "c2", "h1", "h2"],
    ...                     "attribute_group": ["career", "career", "family", "family"],
    ...                     "corrected": [0.5, 1e-15, -0.2, -0.3]})
    >>> summary = pd.DataFrame({"structure": ["S1"], "pvalue": [0.04]})
    >>> decisions(summary, per, "career", "family").to_dict("records")[0]
    {'structure': 'S1', 'n_career': 2, 'career > 0': 1, 'career < 0': 0, 'n_family': 2, 'family > 0': 0, 'family < 0': 2, 'separated': 'yes'}
    """
    rows = []
    for structure, g in per_attribute.groupby("structure", sort=False):
        row: dict[str, object] = {"structure": structure}
        for group in (a, b):
            values = g.loc[g["attribute_group"] == group, "corrected"]
            row[f"n_{group}"] = int(len(values))
            row[f"{group} > 0"] = int((values > tol).sum())
            row[f"{group} < 0"] = int((values < -tol).sum())
        pvalue = float(summary.loc[summary["structure"] == structure, "pvalue"].iloc[0])
        row["separated"] = "yes" if pvalue < alpha else "no"
        rows.append(row)
    return pd.DataFrame(rows)


def plot_context_study(per_attribute: pd.DataFrame, title: str, file: str | None = None,
                       ylabel: str = "X − Y (log-probability)"):
    """Prior vs corrected X − Y differences per structure (seed 000 Fig. 2 / 11 style):
    per structure and attribute group a box (quartiles, whiskers to 1.5 IQR) with one point
    per attribute on it, groups told apart by colour and marker; saved as ``figures/<file>``.
    Boxes and unjittered points stay within their category however many attributes there
    are (a swarm spills into the next one) and are the same on every run."""
    plt = pyplot()
    import seaborn as sns  # lazy: heavy; figures only

    long = per_attribute.melt(id_vars=["structure", "attribute", "attribute_group"],
                              value_vars=["prior", "corrected"], var_name="score", value_name="difference")
    fig, axes = plt.subplots(1, 2, figsize=(6.6, 3.4), sharey=True, layout="constrained")
    for ax, score in zip(axes, ("prior", "corrected"), strict=True):
        part = long[long.score == score]
        groups = list(dict.fromkeys(part["attribute_group"]))
        structures = list(dict.fromkeys(part["structure"]))
        sns.boxplot(data=part, x="structure", y="difference", hue="attribute_group",
                    order=structures, hue_order=groups, dodge=True, showfliers=False, width=0.7,
                    boxprops={"alpha": 0.45}, legend=False, ax=ax)
        for i, (g, c) in enumerate(zip(groups, colours(len(groups)), strict=True)):
            sub = part[part["attribute_group"] == g]
            x = sub["structure"].map({st: j for j, st in enumerate(structures)}).to_numpy(float)
            ax.plot(x - 0.35 + 0.7 * (i + 0.5) / len(groups), sub["difference"], ls="",
                    marker=MARKERS[i % len(MARKERS)], ms=3.5, color=c, alpha=0.75)
        ax.axhline(0, color="grey", lw=0.8, ls="--")
        ax.set_title(f"{score} score", fontsize=9)
        ax.set_xlabel("sentence structure", fontsize=8.5)
        ax.set_ylabel(ylabel, fontsize=8.5)
        ax.tick_params(labelsize=8)
        if ax.get_legend() is not None:
            ax.get_legend().remove()
    groups = list(dict.fromkeys(long["attribute_group"]))
    handles = [plt.Line2D([], [], marker=MARKERS[i % len(MARKERS)], ls="", color=c, label=f"{g} attributes")
               for i, (g, c) in enumerate(zip(groups, colours(len(groups)), strict=True))]
    if handles:  # below the panels, not over the points
        fig.legend(handles=handles, loc="outside lower center", ncols=len(handles), frameon=False,
                   fontsize=8)
    fig.suptitle(title, fontsize=10)
    return finish_figure(fig, file)


def structure_examples(book) -> list[tuple[str, str]]:
    """One sentence per structure (template set) of ``book``: its first template filled
    with the first entry of its target and of its attribute list, as (set, text)."""
    first_of_set = {}
    for t in book.templates.values():
        first_of_set.setdefault(t.set, t)
    return [(t.set, templating.expand(book, t, fixed={s: book.lists[t.slots[s].list].ids[0]
                                                      for s in (t.the("target"), t.the("attribute"))})[0].text)
            for t in first_of_set.values()]


def attribute_group_means(per_attribute: pd.DataFrame) -> pd.DataFrame:
    """Mean fill, prior and corrected differences per structure and attribute group of
    :func:`polybias.metrics.logprob.context_study`'s per-attribute frame, in their order
    of appearance.

    >>> f = pd.DataFrame({"structure": "S1", "attribute_group": ["a", "a", "b"],
    ...                   "fill": [1.0, 3.0, 0.0], "prior": 0.0, "corrected": [1.0, 3.0, -1.0]})
    >>> attribute_group_means(f).corrected.tolist()
    [2.0, -1.0]
    """
    means = per_attribute.groupby(["structure", "attribute_group"], sort=False)[["fill", "prior", "corrected"]].mean()
    return means.reset_index()


def context_record(summary: pd.DataFrame, per_attribute: pd.DataFrame, a: str, b: str, *, model: str,
                   language: str, test: str, parameters: dict[str, Any], **fields: Any) -> Record:
    """The run record (metric ``logprob-context``, a label of the registered ``kurita``)
    of notebook 04's study (:func:`polybias.metrics.logprob.context_study`): each
    structure's effect size between the attribute groups ``a`` and ``b`` with its
    permutation p (exact or Monte Carlo, as :func:`polybias.stats.split_permutation_kind`
    decides for its n), subset ``structure <S>``, n the attributes of ``a`` and ``b`` the
    structure scored; the first structure is the record's value, the others its groups.
    A summary row's other columns (the group means, the prior spread) go to its ``extra``.

    >>> summary = pd.DataFrame([{"structure": "S1", "effect_size": 1.5, "pvalue": 0.2}])
    >>> per = pd.DataFrame({"structure": ["S1"] * 3, "attribute_group": ["c", "c", "f"]})
    >>> rec = context_record(summary, per, "c", "f", model="m", language="bn", test="T",
    ...                      parameters={}, packages={})
    >>> rec.values["subset"], rec.values["n"], rec.values["p_method"]
    ('structure S1', 3, 'permutation-exact')
    """
    entries = []
    for row in summary.to_dict("records"):
        groups = per_attribute.loc[per_attribute["structure"] == row["structure"], "attribute_group"]
        n_a, n_b = int((groups == a).sum()), int((groups == b).sum())
        p = finite_or_none(row["pvalue"])
        value = finite_or_none(row["effect_size"])
        result = MeasureResult("kurita", math.nan if value is None else value, None, p,
                               permutation_method(split_permutation_kind(n_a, n_b)) if p is not None
                               else "none", n_a + n_b,
                               extra={k: v for k, v in row.items()
                                      if k not in ("structure", "effect_size", "pvalue")})
        entries.append((f"structure {row['structure']}", result, {}))
    return measure_results_record(entries, model=model, language=language, test=test,
                                  metric="logprob-context", parameters=parameters, **fields)


# ------------------------------------------------------------------ the notebook's parameters

def _check_04_logprob_context(*, model, templates, x, y, a, b):
    if len({x, y}) != 2 or len({a, b}) != 2:
        raise ParameterError("the two target groups and the two attribute groups must differ")
    if model == PLANTED and templates == "seed000_bn":
        raise ParameterError(f"model {PLANTED!r} (a 64-token window, trained on the planted "
                             f"sentences) cannot read the study's passages of {templates!r}; use "
                             f"model={ANALYTIC!r} (built from the book) or a hub model")


#: The parameters of notebook 04_logprob_context: their help, allowed values and checks.
NOTEBOOK_PARAMETERS: Notebook = Notebook({
    "model": free("registered masked LM, a model directory or a hub id; planted: the trained "
                  "planted Bangla MLM (polybias.planted.synthetic); planted-analytic: the "
                  "analytic MLM built from the template book (polybias.planted.analytic)"),
    "revision": REVISION,
    "device": DEVICE,
    "dtype": free("auto (bfloat16 on CUDA for decoder families trained in it, float64 for the "
                  "planted models, else float32), float32, bfloat16 or float16 (CUDA only)"),
    "batch_tokens": BATCH_TOKENS,
    "planted_p": probability("planted association strength when model is planted or "
                             "planted-analytic (0.5: none; {range})"),
    "templates": free("template file in data/templates (e.g. logprob_bn), planted_<lang>, or "
                      "seed000_bn (the study's own S1-S5 trait sentences)"),
    "target_list": free("word list of the target slot"),
    "attribute_list": free("word list of the attribute slot"),
    "group_feature": free("entry feature naming a word's group"),
    "x": free("first target group"),
    "y": free("second target group"),
    "a": free("first attribute group"),
    "b": free("second attribute group"),
    "mode": choice("target scoring: {values} (word: whole word; first_piece: Kurita / "
                   "seed-000 compat)", template_scores.MODES),
    "prior_at": choice("first_piece: read the prior at the {values} (target: default; "
                       "attribute: seed 000's code)", template_scores.PRIOR_AT),
    "index_quirk": choice("first_piece: {values} reads one token before the mask as Kurita "
                          "et al.'s code; empty: none",
                          tuple(q for q in template_scores.INDEX_QUIRKS if q), empty=True),
    "n_permutations": integer("Monte Carlo draws of the permutation test when not exact "
                              "({range})", low=1, default="polybias.stats.N_PERMUTATIONS_SHORT"),
    "seed": integer("seed of the permutation test (and of the planted model's training, or "
                    "the analytic model's codes; {range})"),
    "output_dir": OUTPUT_DIR,
    "table_file": free(TABLE_FILE.format("logprob_context_planted")),
}, _check_04_logprob_context)
