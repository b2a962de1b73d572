"""Figures shared by the notebooks (seaborn; written under ``figures/``).

Every figure is drawn for the size it is shown at (a notebook cell, the README at about
800 px): tick labels are wrapped, never cut; colours come from seaborn's colour-blind
palette (:data:`PALETTE`), with a marker per colour where colour tells groups apart; a
legend sits outside the data. :func:`text_problems` checks a drawn figure for text that
leaves the canvas, overlaps a neighbouring label, is cut with an ellipsis or is too small.
"""

from __future__ import annotations

import base64
import io
import re
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
from IPython import get_ipython
from IPython.display import display

from polybias import paths

#: seaborn's colour-blind-safe palette (Okabe–Ito-like), the colours of every figure here
PALETTE = "colorblind"
#: markers cycled with the palette, so that groups differ in shape as well as colour
MARKERS = ("o", "s", "D", "^", "v", "P", "X", "*", "<", ">")
#: the smallest font a figure may use, in points, at the size it is printed (at most
#: :data:`PRINT_WIDTH_IN` × :data:`PRINT_HEIGHT_IN`): legible in the PDF and at README width
MIN_FONT_PT = 7.0
#: the widest and tallest a figure is printed, in inches: the text block of the PDF's A4
#: page with 2 cm margins (17 cm), and its height less room for the caption (22 cm); a
#: larger figure is scaled down to fit, and its text with it
PRINT_WIDTH_IN, PRINT_HEIGHT_IN = 17 / 2.54, 22 / 2.54
#: the most panels one figure of a grid holds (3 × 3); more go on further figures
MAX_PANELS = 9
#: the PNG text key under which :func:`png_bytes` records a figure's smallest font (points)
FONT_KEY = "Smallest font"


def print_scale(width_in: float, height_in: float) -> float:
    """The factor a figure of ``width_in`` × ``height_in`` inches is scaled by in print:
    1 when it fits :data:`PRINT_WIDTH_IN` × :data:`PRINT_HEIGHT_IN`, else less.

    >>> print_scale(6.0, 4.0), round(print_scale(13.4, 4.0), 3)
    (1.0, 0.5)
    """
    return min(1.0, PRINT_WIDTH_IN / width_in, PRINT_HEIGHT_IN / height_in)


def colours(n: int) -> list:
    """``n`` colours of :data:`PALETTE` (cycled past its ten)."""
    import seaborn as sns  # lazy: heavy; figures only

    base = sns.color_palette(PALETTE)
    return [base[i % len(base)] for i in range(n)]


def natural_key(text: object) -> tuple:
    """Sort key that orders the numbers inside a text as numbers: WEAT2 before WEAT10.

    >>> sorted(["WEAT10", "WEAT2", "WEAT1", "C10", "C9"], key=natural_key)
    ['C9', 'C10', 'WEAT1', 'WEAT2', 'WEAT10']
    """
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part.lower())
                 for part in re.split(r"(\d+)", str(text)) if part)


def wrap(text: str, width: int) -> str:
    """``text`` wrapped at ``width`` characters into lines (never cut or ellipsised).

    >>> wrap("crows-pairs-dutch-published · other monolingual models", 30)
    'crows-pairs-dutch-published ·\\nother monolingual models'
    """
    return "\n".join(textwrap.wrap(str(text), width, break_long_words=False,
                                   break_on_hyphens=False)) or str(text)


def pyplot():
    """``matplotlib.pyplot`` on the Agg backend (files only, no window), as every figure
    here draws it, with :data:`PALETTE` as the colour cycle (seaborn's default colours
    then follow it too); call it before importing seaborn, which imports pyplot itself.

    A Jupyter kernel on the inline backend keeps it. Either way a figure finished by
    :func:`finish_figure` is shown below its cell as an ``image/png`` output
    (:func:`show_figure`), so the executed notebooks the sweep writes under
    ``MPLBACKEND=Agg`` carry their figures too."""
    import matplotlib  # lazy: heavy; figures only

    if "inline" not in str(matplotlib.rcParams["backend"]):
        matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt  # lazy: heavy; figures only
    import seaborn as sns  # lazy: heavy; figures only

    sns.set_palette(PALETTE)
    return plt


def finish_figure(fig, file: str | None = None):
    """Lay ``fig`` out tightly (unless it has its own layout engine, e.g. constrained),
    save it as ``figures/<file>`` (:func:`save_figure`) when ``file`` is given, show it
    below the cell in a Jupyter kernel (:func:`show_figure`), and return it.

    The one call that ends every figure of the project: a notebook that draws a figure of
    its own ends it with ``plots.finish_figure(fig, "name.png")``, so that the figure is
    written under ``figures/`` and stored in the executed notebook as an ``image/png``
    output, which the site shows on the notebook's page.
    """
    fit_titles(fig)
    if fig.get_layout_engine() is None:
        fig.tight_layout()
    png = png_bytes(fig)
    if file:
        save_figure(fig, file, png=png)
    show_figure(fig, png=png)
    return fig


def png_bytes(fig, dpi: float = 120) -> bytes:
    """``fig`` as PNG bytes, as :func:`save_figure` writes it (``dpi``, no software tag:
    the same figure gives the same bytes), with its smallest font in points
    (:func:`smallest_font`) recorded under :data:`FONT_KEY`, so that what prints it (the
    PDF) can tell the size its text prints at."""
    buffer = io.BytesIO()
    smallest = smallest_font(fig)
    fig.savefig(buffer, format="png", dpi=dpi,
                metadata={"Software": None, FONT_KEY: f"{smallest:g}" if smallest else ""})
    return buffer.getvalue()


def png_font(data: bytes) -> float | None:
    """The smallest font a PNG written by :func:`png_bytes` records (points), or None.

    >>> png_font(b"not a png") is None
    True
    """
    key = FONT_KEY.encode("latin-1") + b"\x00"
    at = data.find(b"tEXt" + key)
    if at < 0:
        return None
    length = int.from_bytes(data[at - 4:at], "big")
    value = data[at + 4 + len(key):at + 4 + length].decode("latin-1")
    return float(value) if value else None


def smallest_font(fig) -> float:
    """The smallest font size (points, as drawn) of the visible text of ``fig``; 0 without
    text."""
    fig.canvas.draw()
    sizes = [t.get_fontsize() for t in _texts(fig)[0] if t.get_visible() and t.get_text().strip()]
    return float(min(sizes)) if sizes else 0.0


def show_figure(fig, png: bytes | None = None) -> bool:
    """In a Jupyter kernel, show ``fig`` below the cell as an ``image/png`` display output
    (its PNG, :func:`png_bytes`, or ``png``) and close it, so that the inline backend does
    not show it a second time; outside a kernel, do nothing. Returns whether it was shown.

    The output carries ``image/png`` only: nbval (``--nbval-lax``) leaves images out of
    its comparison, so a checked cell that draws a figure still compares only its text,
    and a figure that differs by a pixel across CPUs fails no check.
    """
    if get_ipython() is None:
        return False
    data = base64.b64encode(png if png is not None else png_bytes(fig)).decode("ascii")
    display({"image/png": data}, raw=True)
    pyplot().close(fig)
    return True


def fit_titles(fig, share: float = 0.94) -> None:
    """Wrap the figure's title and each panel's title that is wider than ``share`` of the
    canvas (or of its panel, for a panel title) onto more lines, so that none is cut."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    titles = [(fig._suptitle, fig.bbox.width)] if fig._suptitle is not None else []
    titles += [(ax.title, max(ax.get_window_extent(renderer).width * 1.15, 1.0))
               for ax in fig.axes if ax.get_visible()]
    for text, room in titles:
        content = text.get_text()
        width = text.get_window_extent(renderer).width
        if content and width > share * room:
            chars = max(12, int(len(content) * share * room / width))
            text.set_text("\n".join(wrap(line, chars) for line in content.split("\n")))


def reproduced_vs_reported(frame: pd.DataFrame, x: str, title: str, file: str | None = None,
                           ylabel: str = "value"):
    """Grouped bars of the ``reproduced`` and ``reported`` columns of ``frame`` per ``x``;
    ``ylabel`` names the value (a measure's ``axis``: unit and direction of bias).

    Saved as ``figures/<file>`` when ``file`` is given; returns the matplotlib figure.
    """
    plt = pyplot()
    import seaborn as sns  # lazy: heavy; figures only

    long = frame.melt(id_vars=[x], value_vars=["reproduced", "reported"],
                      var_name="source", value_name="value").dropna()
    fig, ax = plt.subplots(figsize=(min(6.6, max(5.0, 0.45 * frame[x].nunique() + 2.6)), 3.4))
    sns.barplot(data=long, x=x, y="value", hue="source", ax=ax, palette=["#3b6ea8", "#c8c8c8"])
    ax.axhline(0, color="black", lw=0.6)
    ax.set_title(title)
    ax.set_xlabel("")
    ax.set_ylabel(wrap(ylabel, 45), fontsize=8.5)
    ax.tick_params(axis="x", labelsize=8)
    ax.legend(frameon=False, loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8)
    return finish_figure(fig, file)


def scores_with_ci(table: pd.DataFrame, title: str, file: str | None = None, chance: float = 50.0,
                   ylabel: str = "score (%)"):
    """Bar chart of ``score`` per ``bias_type`` with ``ci_low``/``ci_high`` whiskers;
    ``ylabel`` names the score (a measure's ``axis``: unit and direction of bias)."""
    plt = pyplot()

    fig, ax = plt.subplots(figsize=(max(4.5, 0.8 * len(table) + 2), 3.4))
    _score_bars(ax, table, table["bias_type"], chance)
    ax.set_ylabel(wrap(ylabel, 40), fontsize=8.5)
    ax.set_title(title)
    return finish_figure(fig, file)


def _score_bars(ax, table: pd.DataFrame, labels, chance: float, **ticks) -> None:
    """Bars of ``table["score"]`` with ``ci_low``/``ci_high`` whiskers where all are known,
    a dashed line at ``chance``, ``labels`` as ticks (``ticks`` styles them), y from 0 to 100."""
    pos = np.arange(len(table))
    ax.bar(pos, table["score"], color="#b8c8dc", edgecolor="#3b6ea8", lw=0.8)
    if {"ci_low", "ci_high"} <= set(table.columns) and table["ci_low"].notna().all():
        err = np.vstack([table["score"] - table["ci_low"], table["ci_high"] - table["score"]])
        # a point and whiskers over a light bar: an interval that reaches 100 stays visible
        ax.errorbar(pos, table["score"], yerr=err, fmt="o", ms=3.5, color="black",
                    ecolor="black", capsize=3, lw=1.0, zorder=3)
    ax.axhline(chance, color="grey", ls="--", lw=0.8)
    ax.set_xticks(pos, labels, **ticks)
    ax.set_ylim(0, 108)  # room above 100 for a whisker's cap
    ax.set_yticks([0, 25, 50, 75, 100])
    ax.spines[["top", "right"]].set_visible(False)


def scores_by_group(table: pd.DataFrame, title: str, file: str | None = None, x: str = "label",
                    group: str = "group", chance: float = 50.0, ylabel: str = "score (%)"):
    """One panel per ``group``: ``score`` per ``x`` (e.g. language) with ``ci_low``/``ci_high``
    whiskers; the dashed line is ``chance``, ``ylabel`` names the score. ``table`` is e.g. the ``per_language`` frame of
    :func:`polybias.metrics.crows.compare_languages` with a group column."""
    plt = pyplot()

    groups = list(pd.unique(table[group])) if group in table else [None]
    widths = [max(2, len(table) if g is None else int((table[group] == g).sum())) for g in groups]
    fig, axes = plt.subplots(1, len(groups), figsize=(min(6.6, 1.0 * sum(widths) + 1.5), 3.6), sharey=True,
                             gridspec_kw={"width_ratios": widths}, squeeze=False)
    for ax, g in zip(axes[0], groups, strict=True):
        part = table if g is None else table[table[group] == g]
        _score_bars(ax, part, part[x], chance, rotation=35, ha="right", fontsize=8)
        if g is not None:
            ax.set_title(str(g), fontsize=9)
    axes[0][0].set_ylabel(wrap(ylabel, 40), fontsize=8.5)
    fig.suptitle(title)
    return finish_figure(fig, file)


def save_figure(fig, file: str, png: bytes | None = None) -> Path:
    """Save ``fig`` as ``figures/<file>`` under :func:`polybias.paths.output_root` (PNG, 120
    dpi, no software tag, so reruns give identical files; ``png``: those bytes already
    rendered, :func:`png_bytes`), through a temporary file and a rename; return the path. Characters other than letters, digits, ``.``, ``_``, ``+`` and
    ``-`` become ``-``, so a model given as a directory or hub id names one file in
    ``figures/`` (``seat_org/name.png`` is ``seat_org-name.png``)."""
    file = re.sub(r"[^\w.+-]+", "-", str(file)).strip("-")
    out = paths.figure_path(file)  # figures/, or the run folder of a run that keeps its outputs
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(str(out) + ".tmp.png")
    tmp.write_bytes(png if png is not None else png_bytes(fig))
    tmp.replace(out)
    return out


def _grid(n_panels: int, ncols: int, width: float = 2.2, height: float = 2.1):
    """A figure of ``n_panels`` panels in rows of ``ncols``, ``width`` × ``height`` inches
    each (3 × 2.2 in: the PDF's text width)."""
    plt = pyplot()

    ncols = max(1, min(ncols, n_panels))
    nrows = -(-n_panels // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(width * ncols, height * nrows + 0.5),
                             squeeze=False)
    for ax in axes.flat[n_panels:]:
        ax.set_visible(False)
    return fig, axes


def _strength_grids(panels: list, draw, ylabel, title: str, file: str | None, ncols: int,
                    titles: dict[tuple[str, str], str] | None = None) -> list:
    """The figures of a grid over planted strength: ``panels`` ((measure, metric), frame) in
    figures of at most :data:`MAX_PANELS`, each panel drawn by ``draw(ax, measure, metric,
    frame)`` and finished by :func:`_finish_strength_grid`; the k-th figure is saved as
    ``<stem>_k.png`` (the first as ``file``), and parts of an earlier, longer run removed."""
    pages = [panels[i:i + MAX_PANELS] for i in range(0, len(panels), MAX_PANELS)] or [[]]
    figures = []
    for k, page in enumerate(pages, start=1):
        fig, axes = _grid(len(page), ncols)
        for ax, ((measure, metric), g) in zip(axes.flat, page, strict=False):
            draw(ax, measure, metric, g)
        name = title + (f" (part {k} of {len(pages)})" if len(pages) > 1 else "")
        figures.append(_finish_strength_grid(fig, axes, [key for key, _ in page], ylabel, name,
                                             part_name(file, k) if file else None, titles))
    if file:
        drop_parts(file, len(pages))
    return figures


def drop_parts(file: str, n: int) -> None:
    """Remove the parts past the ``n``-th of a figure split in parts (:func:`part_name`)
    that an earlier, longer run left under ``figures/``."""
    k = n + 1
    while (stale := paths.output_path(Path("figures") / part_name(file, k))).is_file():
        stale.unlink()
        k += 1


def part_name(file: str, k: int) -> str:
    """The file of the ``k``-th figure of a figure split in parts: ``file`` itself, then
    ``<stem>_2.png``, ...

    >>> part_name("validity_mdb_en.png", 1), part_name("validity_mdb_en.png", 2)
    ('validity_mdb_en.png', 'validity_mdb_en_2.png')
    """
    path = Path(file)
    return file if k == 1 else str(path.with_name(f"{path.stem}_{k}{path.suffix}"))


def _finish_strength_grid(fig, axes, panels: list[tuple[str, str]], ylabel, title: str,
                          file: str | None, titles: dict[tuple[str, str], str] | None = None):
    """Title each panel (``panels``, in the order of ``axes.flat``) by ``titles`` (the
    measure's display name), else ``measure`` over ``metric``; put every panel on the whole
    planted-strength range, label its x axis and its y axis (``ylabel``: a text, or a
    function of measure and metric), and finish the figure (:func:`finish_figure`)."""
    for ax, (measure, metric) in zip(axes.flat, panels, strict=False):
        ax.set_title((titles or {}).get((measure, metric), f"{measure}\n{metric}"), fontsize=8)
        ax.tick_params(labelsize=7)
        ax.set_xlim(0.0, 1.0)  # every panel on the whole range, even with models at one p only
        ax.set_xticks([0.1, 0.3, 0.5, 0.7, 0.9])
        label = ylabel(measure, metric) if callable(ylabel) else ylabel
        ax.set_ylabel(wrap(label, 30), fontsize=7)
    for ax in axes.flat:
        if ax.get_visible():
            ax.set_xlabel("planted p (0.5 = none)", fontsize=7)  # fits a panel beside a long y title
    fig.suptitle(title, fontsize=9)
    return finish_figure(fig, file)


def dose_response(table: pd.DataFrame, title: str, file: str | None = None,
                  points: pd.DataFrame | None = None, ncols: int = 3,
                  axis: dict[tuple[str, str], str] | None = None,
                  titles: dict[tuple[str, str], str] | None = None) -> list:
    """Grids of panels, one per (measure, metric): mean value against planted strength
    ``p`` with its interval as error bars, the null as a dashed line. ``axis`` maps a
    (measure, metric) to its value axis' title (a measure's ``axis``: name, unit and the
    direction of bias); a panel without one says "value of <metric>".

    ``table``: :func:`polybias.studies.validity.dose_table` (columns measure, metric, p, mean, low,
    high); ``points`` (optional): the single models (measure, metric, p, value, null), drawn
    as faint dots. ``titles`` names each panel (a measure's display name:
    :func:`polybias.studies.validity.panel_titles`), else ``measure`` over ``metric``.
    At most :data:`MAX_PANELS` panels a figure, drawn to print at full size
    (:data:`PRINT_WIDTH_IN`); the panels past them go on further figures (``file``'s parts
    ``<stem>_2.png``, ...), each titled with its part. Returns the figures.
    """
    panels = list(table.groupby(["measure", "metric"], sort=False))
    axis = axis or {}

    def draw(ax, measure, metric, g):
        g = g.sort_values("p")
        if points is not None:
            pts = points[(points["measure"] == measure) & (points["metric"] == metric)]
            ax.scatter(pts["p"], pts["value"], s=5, color="#9bb5d6", alpha=0.6, lw=0)
            null = float(pts["null"].iloc[0]) if len(pts) else float("nan")
        else:
            null = float("nan")
        err = np.vstack([g["mean"] - g["low"], g["high"] - g["mean"]])
        ax.errorbar(g["p"], g["mean"], yerr=np.nan_to_num(err), color="#3b6ea8", marker="o",
                    ms=3, capsize=2, lw=1.1)
        if null == null:  # NaN: the metric has no null value (a variance)
            ax.axhline(null, color="grey", ls="--", lw=0.8)
        ax.axvline(0.5, color="grey", ls=":", lw=0.8)

    def ylabel(measure, metric):
        return axis.get((measure, metric), f"value of {metric}")

    return _strength_grids(panels, draw, ylabel, title, file, ncols, titles)


def power_curves(power: pd.DataFrame, title: str, file: str | None = None, target: float = 0.8,
                 ncols: int = 3, titles: dict[tuple[str, str], str] | None = None) -> list:
    """Detection rate against planted strength, one panel per (measure, metric), one line
    per size; the horizontal line is the ``target`` power, so the minimum detectable bias
    of a size is where its line first stays above it. Split into figures of at most
    :data:`MAX_PANELS` panels as :func:`dose_response`. Returns the figures.

    ``power``: :func:`polybias.studies.validity.power_table` (measure, metric, size_axis, size, p,
    power).
    """
    panels = list(power.groupby(["measure", "metric"], sort=False))

    def draw(ax, measure, metric, g):
        sizes = sorted(g["size"].unique())
        for i, size in enumerate(sizes):  # dodged sideways so that equal lines stay visible
            h = g[g["size"] == size].sort_values("p")
            dodge = (i - (len(sizes) - 1) / 2) * 0.006
            ax.plot(h["p"] + dodge, h["power"], marker=MARKERS[i % len(MARKERS)], ms=3, lw=1.0,
                    alpha=0.85, label=str(size))  # a marker per size: not told by colour alone
        ax.axhline(target, color="grey", ls="--", lw=0.8)
        ax.set_ylim(-0.03, 1.03)
        ax.legend(title=str(g["size_axis"].iloc[0]), fontsize=7, title_fontsize=7, loc="best",
                  handlelength=1.2, borderpad=0.3, labelspacing=0.2)

    return _strength_grids(panels, draw, "detection rate: share of models found biased",
                           title, file, ncols, titles)


def correlation_heatmap(matrix: pd.DataFrame, title: str, file: str | None = None):
    """Annotated heat map of a square correlation matrix (values in [-1, 1])."""
    plt = pyplot()
    import seaborn as sns  # lazy: heavy; figures only

    n = len(matrix)
    cell = min(1.1, 4.0 / max(n, 1))  # the whole map within the printed width
    fig, ax = plt.subplots(figsize=(cell * n + 2.6, 0.85 * cell * n + 1.6))
    sns.heatmap(matrix, vmin=-1, vmax=1, cmap="vlag", annot=True, fmt=".2f", square=True,
                cbar_kws={"shrink": 0.7}, annot_kws={"fontsize": 8}, ax=ax)
    ax.tick_params(labelsize=8)
    ax.set_xlabel("")
    ax.set_ylabel("")
    ax.set_title(title, fontsize=10)
    return finish_figure(fig, file)


def forest(rows: pd.DataFrame, xlabel: str, title: str, null: float | None = None,
           note: str = "", legend_title: str = "", width: float = 6.6, file: str | None = None):
    """A forest plot: one row per line of ``rows``, grouped under bold group headings.

    ``rows`` has the columns ``group`` (heading, e.g. dataset and subset), ``label`` (the
    row's name, e.g. model and language in words), ``hue`` (what colour and marker tell
    apart, e.g. the language), ``value`` and optionally ``ci_low``/``ci_high`` (drawn as a
    bar where known). Groups keep the order of their first row. ``null`` is drawn dashed
    (the value of no bias); a row without a value says so. ``xlabel`` is the value axis'
    title (measure, unit and the direction of bias), ``note`` a line under it. ``width``
    in inches; 6.6 (the PDF's text width) at the 120 dpi of the export is the README's width.
    Returns the figure.
    """
    plt = pyplot()

    rows = rows.reset_index(drop=True)
    groups = list(dict.fromkeys(rows["group"]))
    hues = list(dict.fromkeys(rows["hue"]))
    palette = dict(zip(hues, colours(len(hues)), strict=True))
    marker = {h: MARKERS[i % len(MARKERS)] for i, h in enumerate(hues)}
    y, ticks, heads, where = 0.0, [], [], {}
    for g in groups:
        head = wrap(g, int(width * 10))
        band = 0.75 * (head.count("\n") + 1)
        heads.append((y - 0.5, y - 0.5 + band, head))
        y += band
        for i in rows.index[rows["group"] == g]:
            label = wrap(rows.at[i, "label"], 40)
            step = max(1.0, 0.75 * (label.count("\n") + 1) + 0.2)  # room for a wrapped label
            where[i] = y + (step - 1) / 2
            ticks.append((where[i], label))
            y += step
        y += 0.2
    xlabel = "\n".join(wrap(line, int(width * 10)) for line in xlabel.split("\n"))
    height = 1.5 + 0.2 * y + 0.12 * (xlabel.count("\n") + bool(note))
    fig, ax = plt.subplots(figsize=(width, height), layout="constrained")
    has_ci = {"ci_low", "ci_high"} <= set(rows.columns)
    for h in hues:
        sub = rows[rows["hue"] == h]
        pos = np.array([where[i] for i in sub.index])
        vals = sub["value"].to_numpy(float)
        err = None
        if has_ci and sub["ci_low"].notna().any():
            err = np.vstack([(sub["value"] - sub["ci_low"]).fillna(0).to_numpy(float),
                             (sub["ci_high"] - sub["value"]).fillna(0).to_numpy(float)])
        ax.errorbar(vals, pos, xerr=err, fmt=marker[h], ms=5, capsize=2.5, lw=1.2,
                    color=palette[h], label=str(h))
    if null is not None:
        ax.axvline(null, color="0.3", lw=1.0, ls="--", zorder=1)
    for i in rows.index[rows["value"].isna()]:
        ax.annotate("no value", (0.01, where[i]), xycoords=("axes fraction", "data"),
                    va="center", fontsize=7.5, color="0.35", style="italic")
    for top, bottom, head in heads:  # headings inside the plot, on a band with no data
        ax.axhspan(top, bottom, color="0.93", lw=0, zorder=0)
        ax.annotate(head, (0.006, (top + bottom) / 2), xycoords=("axes fraction", "data"),
                    va="center", ha="left", fontsize=8, fontweight="bold")
    ax.set_yticks([t for t, _ in ticks], [lab for _, lab in ticks], fontsize=8)
    ax.set_ylim(y - 0.3, -0.5)
    ax.margins(x=0.04)
    ax.tick_params(axis="x", labelsize=8)
    ax.grid(axis="x", color="0.9", lw=0.6)
    ax.set_axisbelow(True)
    ax.set_xlabel(xlabel + (f"\n{note}" if note else ""), fontsize=8.5)
    fig.suptitle(title, fontsize=10)
    if len(hues) > 1:
        fig.legend(loc="outside lower center", ncols=min(len(hues), 6), frameon=False, fontsize=8,
                   handletextpad=0.3, columnspacing=1.2, title=legend_title or None,
                   title_fontsize=8)
    return finish_figure(fig, file)


def _texts(fig):
    """The text artists of a drawn ``fig`` (titles, axis labels, tick labels of the ticks in
    view, legends, annotations), and its tick labels grouped by axis."""
    from matplotlib.text import Text  # lazy: heavy; figures only

    texts: list[Text] = list(fig.texts) + [t for leg in fig.legends for t in leg.get_texts()]
    tick_groups: list[list[Text]] = []
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        texts += [ax.title, ax._left_title, ax._right_title, ax.xaxis.label, ax.yaxis.label]
        texts += [c for c in ax.get_children() if isinstance(c, Text)]
        legend = ax.get_legend()
        if legend is not None:
            texts += [*legend.get_texts(), legend.get_title()]
        for axis in (ax.xaxis, ax.yaxis):
            low, high = sorted(axis.get_view_interval())
            span = (high - low) * 1e-9
            labels = []
            for tick in axis.get_major_ticks() + axis.get_minor_ticks():
                if low - span <= tick.get_loc() <= high + span:
                    labels += [lab for lab, on in ((tick.label1, tick.label1.get_visible()),
                                                    (tick.label2, tick.label2.get_visible())) if on]
            texts += labels
            tick_groups.append([t for t in labels if t.get_text().strip()])
    return texts, tick_groups


def text_problems(fig, min_font: float = MIN_FONT_PT, printed: bool = True) -> list[str]:
    """What keeps a reader from reading ``fig`` at its size: every drawn text artist
    (titles, axis labels, tick labels of the ticks in view, legends, annotations) must lie
    inside the canvas, not end in an ellipsis (a cut label), be at least ``min_font``
    points at the size the figure is printed (``printed``: scaled by :func:`print_scale`,
    so a figure wider than the PDF's text block needs larger fonts), and the tick labels of
    one axis must not overlap or touch (2 px apart at least). Returns one line per problem
    (empty: none). Draws the figure first."""
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    box = fig.bbox
    scale = print_scale(*fig.get_size_inches()) if printed else 1.0
    texts, tick_groups = _texts(fig)
    problems = []
    for t in texts:
        text = t.get_text()
        if not t.get_visible() or not text.strip():
            continue
        ext = t.get_window_extent(renderer)
        if ext.x0 < box.x0 - 1 or ext.y0 < box.y0 - 1 or ext.x1 > box.x1 + 1 or ext.y1 > box.y1 + 1:
            problems.append(f"outside the canvas: {text!r}")
        if text.rstrip().endswith(("…", "...")):
            problems.append(f"cut with an ellipsis: {text!r}")
        if t.get_fontsize() * scale < min_font - 1e-9:
            at = f" (printed at {t.get_fontsize() * scale:.1f} pt)" if scale < 1 else ""
            problems.append(f"font {t.get_fontsize():g} pt{at} < {min_font:g} pt: {text!r}")
    for labels in tick_groups:
        boxes = [(t, t.get_window_extent(renderer)) for t in labels]
        for k, (a, ea) in enumerate(boxes):
            for b, eb in boxes[k + 1:]:
                w = min(ea.x1, eb.x1) - max(ea.x0, eb.x0)
                h = min(ea.y1, eb.y1) - max(ea.y0, eb.y0)
                if w > -2 and h > -2:  # overlapping or closer than 2 px: they read as one
                    problems.append(f"tick labels overlap: {a.get_text()!r} and {b.get_text()!r}")
    return problems
