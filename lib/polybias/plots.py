"""Figures shared by the notebooks (seaborn; written under ``figures/``)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from . import paths


def reproduced_vs_reported(frame: pd.DataFrame, x: str, title: str, file: str | None = None):
    """Grouped bars of the ``reproduced`` and ``reported`` columns of ``frame`` per ``x``.

    Saved as ``figures/<file>`` when ``file`` is given; returns the matplotlib figure.
    """
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt
    import seaborn as sns

    long = frame.melt(id_vars=[x], value_vars=["reproduced", "reported"],
                      var_name="source", value_name="value").dropna()
    fig, ax = plt.subplots(figsize=(max(5, 0.6 * frame[x].nunique() + 2), 3.2))
    sns.barplot(data=long, x=x, y="value", hue="source", ax=ax, palette=["#3b6ea8", "#c8c8c8"])
    ax.axhline(0, color="black", lw=0.6)
    ax.set_title(title)
    ax.set_xlabel("")
    ax.legend(frameon=False)
    fig.tight_layout()
    if file:
        out = paths.figures_dir() / file
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(str(out) + ".tmp.png")
        fig.savefig(tmp, dpi=120, metadata={"Software": None})
        tmp.replace(out)
    return fig
