"""Log-probability bias and the amount of context (notebook 04): the prior-vs-corrected
figure. The notebook's template books and planted Bangla MLM come from
:mod:`polybias.studies.inputs`; the per-structure study itself is
:func:`polybias.metrics.logprob.context_study`."""

from __future__ import annotations

import pandas as pd


def plot_context_study(per_attribute: pd.DataFrame, title: str, file: str | None = None,
                       ylabel: str = "X − Y (log-probability)"):
    """Prior vs corrected X − Y differences per structure (seed 000 Fig. 2 / 11 style):
    one point per attribute, coloured by attribute group; saved as ``figures/<file>``."""
    from ..plots import finish_figure, pyplot

    plt = pyplot()
    import seaborn as sns

    long = per_attribute.melt(id_vars=["structure", "attribute", "attribute_group"],
                              value_vars=["prior", "corrected"], var_name="score", value_name="difference")
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.4), sharey=True)
    for ax, score in zip(axes, ("prior", "corrected"), strict=True):
        # a swarm, not a randomly jittered strip: the figure is identical on every run
        sns.swarmplot(data=long[long.score == score], x="structure", y="difference", hue="attribute_group",
                      dodge=True, size=4, ax=ax)
        ax.axhline(0, color="grey", lw=0.8, ls="--")
        ax.set_title(f"{score} score")
        ax.set_xlabel("sentence structure")
        ax.set_ylabel(ylabel)
        if ax is axes[1] and ax.get_legend() is not None:
            ax.get_legend().set_title("")
        elif ax.get_legend() is not None:
            ax.get_legend().remove()
    fig.suptitle(title)
    return finish_figure(fig, file)


