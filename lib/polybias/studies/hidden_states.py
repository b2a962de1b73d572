"""Hidden states of identity words, layer by layer (notebook 08; seed 004, App. A).

The analyses themselves are :mod:`polybias.engines.hidden_states`; this module runs them
as the paper's section does and turns them into its tables, figure and run record:

* :func:`layer_tables` — per-layer activation statistics and the one-way ANOVA across
  layers of the summed and of the L2-norm activation;
* :func:`two_d_views` — the 2-D projections of one layer's states and the share of their
  variance between the groups of an entry feature (η²);
* :func:`halves_sentence` — the decision of seed 004's first- against last-layers test
  in words (what the notebook checks, stable across CPUs);
* :func:`plot_views` — the projections side by side, coloured by group;
* :func:`write_hidden_record` — the run record of one analysis.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from polybias import paths
from polybias.engines import hidden_states
from polybias.metrics.measure import MeasureResult
from polybias.results.plots import finish_figure, pyplot
from polybias.results.records import Record, measure_results_record, model_fields, write_record
from polybias.stats import ALPHA

#: The ``layer_view`` that projects every layer's states at once (flattened per occurrence).
ALL_LAYERS = 99


def layer_tables(states: np.ndarray) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per-layer statistics and the ANOVA across layers of ``states`` (n, layers, hidden).

    Returns
    -------
    (statistics, anova)
        :func:`polybias.engines.hidden_states.layer_statistics`, and one row per
        per-occurrence statistic (``sum``, ``norm``) with the F statistic and p-value of
        :func:`polybias.engines.hidden_states.layer_anova` (columns statistic, F, p).

    >>> s = np.zeros((4, 3, 2)); s[:, 1] = 1.0; s[:, 2] = 2.0; s[::2] += 0.1
    >>> stats, anova = layer_tables(s)
    >>> anova.statistic.tolist(), bool((anova.F > 100).all())
    (['sum', 'norm'], True)
    """
    rows = []
    for statistic in hidden_states.STATISTICS:
        f, p = hidden_states.layer_anova(states, statistic)
        rows.append({"statistic": statistic, "F": f, "p": p})
    return hidden_states.layer_statistics(states), pd.DataFrame(rows)


#: The 2-D views drawn unless asked otherwise: the stable projections. t-SNE is chaotic (a
#: last-bit difference of the states, another CPU's kernels, moves its layout), so a run that
#: draws it cannot give the same figure and η² on every machine: it is drawn on request.
STABLE_VIEWS = ("pca", "svd")


def two_d_views(states: np.ndarray, items: pd.DataFrame, group_feature: str, layer_view: int = -1,
                seed: int = 0, methods: tuple[str, ...] | list[str] = hidden_states.METHODS,
                ) -> tuple[dict[str, np.ndarray], list[str], pd.DataFrame]:
    """2-D projections of one layer's states and how well they separate the groups.

    The states of layer ``layer_view`` (negative: from the last; :data:`ALL_LAYERS`: every
    layer's states flattened per occurrence) are projected by each method of
    ``methods`` (of :data:`polybias.engines.hidden_states.METHODS`; seeded by ``seed``), and each view's
    between-group share of variance η² (:func:`polybias.engines.hidden_states.group_separation`)
    is computed for the groups in column ``feature:<group_feature>`` of ``items``
    (:func:`polybias.engines.hidden_states.identity_states`).

    Returns
    -------
    (points, groups, separation)
        method → (n, 2) points; the group of each occurrence; and one row per method
        (columns method, eta2).
    """
    column = f"feature:{group_feature}"
    if column not in items.columns:
        known = sorted(c.removeprefix("feature:") for c in items.columns if c.startswith("feature:"))
        raise hidden_states.HiddenStateError(
            f"the identity entries have no feature {group_feature!r}; known: {', '.join(known) or 'none'}")
    n_layers = states.shape[1]
    if layer_view != ALL_LAYERS and not -n_layers <= layer_view < n_layers:
        raise hidden_states.HiddenStateError(
            f"layer_view must be a layer in [{-n_layers}, {n_layers - 1}] or {ALL_LAYERS} (all), "
            f"got {layer_view}")
    view = states.reshape(len(states), -1) if layer_view == ALL_LAYERS else states[:, layer_view]
    groups = items[column].tolist()
    unknown = [m for m in methods if m not in hidden_states.METHODS]
    if unknown or not methods:
        raise hidden_states.HiddenStateError(
            f"2-D views must be some of {', '.join(hidden_states.METHODS)}, got {list(methods)}")
    points = {m: hidden_states.project(view, m, seed=seed) for m in methods}
    separation = pd.DataFrame([{"method": m, "eta2": hidden_states.group_separation(p, groups)}
                               for m, p in points.items()])
    return points, groups, separation


def halves_sentence(halves: dict[str, Any], alpha: float = ALPHA) -> str:
    """The decision of :func:`polybias.engines.hidden_states.half_sums_test` in one
    sentence: which half of the layers sums higher, for what share of the occurrences,
    and whether the paired t-test and the Wilcoxon test are significant at ``alpha``.

    >>> halves_sentence({"n": 5, "h": 3, "mean_first": 2.0, "mean_last": 1.0,
    ...                  "share_first_larger": 0.8, "p_t": 0.01, "p_wilcoxon": 0.2})
    '5 occurrences, layers 1-3 against the last 3: the first half sums higher for 80% of them; paired t-test significant at 0.05, Wilcoxon not significant'
    """
    def verdict(p: float) -> str:
        return "significant" if p < alpha else "not significant"

    return (f"{halves['n']} occurrences, layers 1-{halves['h']} against the last {halves['h']}: "
            f"the first half sums {'higher' if halves['mean_first'] > halves['mean_last'] else 'lower'} "
            f"for {halves['share_first_larger']:.0%} of them; paired t-test "
            f"{verdict(halves['p_t'])} at {alpha:g}, Wilcoxon {verdict(halves['p_wilcoxon'])}")


def plot_views(points: dict[str, np.ndarray], groups: list[str], title: str, file: str | None = None):
    """The 2-D views of :func:`two_d_views` side by side, one colour and marker per group
    (legend below the panels), without ticks; saved as ``figures/<file>`` when given."""
    plt = pyplot()
    import seaborn as sns  # lazy: heavy; figures only

    fig, axes = plt.subplots(1, len(points), figsize=(6.6, 3.0), squeeze=False, layout="constrained")
    axes = axes[0]
    order = list(dict.fromkeys(groups))
    for ax, (m, p) in zip(axes, points.items(), strict=True):
        sns.scatterplot(x=p[:, 0], y=p[:, 1], hue=groups, hue_order=order, style=groups,
                        style_order=order, ax=ax, s=10, legend=ax is axes[-1])
        ax.set_title(m, fontsize=9)
        ax.set_xticks([])
        ax.set_yticks([])
    legend = axes[-1].get_legend()
    if legend is not None:  # below the panels, not over the points
        handles, labels = axes[-1].get_legend_handles_labels()
        legend.remove()
        fig.legend(handles, labels, loc="outside lower center", ncols=min(len(labels), 6),
                   frameon=False, fontsize=8, handletextpad=0.2, columnspacing=1.0)
    fig.suptitle(title, fontsize=10)
    return finish_figure(fig, file)


def hidden_record(model: str, language: str, test: str, parameters: dict[str, Any], anova: pd.DataFrame,
                  separation: pd.DataFrame, kmeans: pd.DataFrame, halves: dict[str, Any],
                  **fields: Any) -> Record:
    """The run record (metric ``hidden-states``) of one analysis of an encoder's hidden
    states: the separation η² of each 2-D view (the statistic ``separation``, subset the
    view's method; the first method is the record's value, the others its groups), and as
    details the ANOVA's F and p per statistic (``anova``), the adjusted Rand index per layer
    (``kmeans``) and the half-sums test (``half-sums``). One
    :func:`~polybias.results.records.measure_results_record`.

    >>> sep = pd.DataFrame({"method": ["pca", "tsne"], "eta2": [0.4, 0.6]})
    >>> anova = pd.DataFrame({"statistic": ["sum"], "F": [3.0], "p": [0.01]})
    >>> kmeans = pd.DataFrame({"layer": [0], "ari": [0.2]})
    >>> rec = hidden_record("m", "en", "T", {}, anova, sep, kmeans, {"h": 1.0}, packages={})
    >>> rec.values["measure"], rec.values["subset"], rec.values["groups"][0]["value"]
    ('separation', 'pca', 0.6)
    >>> [d["part"] for d in rec.values["details"]]
    ['anova', 'kmeans', 'half-sums']
    """
    entries = [(str(row["method"]), MeasureResult("separation", float(row["eta2"]), None, None, "none", None), {})
               for row in separation.to_dict("records")]
    details = ([{"part": "anova", **row} for row in anova[["statistic", "F", "p"]].to_dict("records")]
               + [{"part": "kmeans", **row} for row in kmeans[["layer", "ari"]].to_dict("records")]
               + [{"part": "half-sums", **halves}])
    return measure_results_record(entries, model=model, language=language, test=test, metric="hidden-states",
                                  parameters=parameters, details=details, **fields)


def write_hidden_record(encoder, model: str, language: str, test: str, parameters: dict[str, Any],
                        anova: pd.DataFrame, separation: pd.DataFrame, kmeans: pd.DataFrame,
                        halves: dict[str, Any], output_dir: str | Path) -> Path:
    """Write the run record of one analysis of ``encoder`` (:func:`hidden_record`) under
    ``output_dir`` (relative to the output root). Returns the record's path."""
    record = hidden_record(model, language, test, parameters, anova, separation, kmeans, halves,
                           **model_fields(encoder))
    return write_record(record, paths.output_path(output_dir))
