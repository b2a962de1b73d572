"""Cross-model tables and comparison figures of the tidy table (:mod:`polybias.results.table`).

:func:`export` writes cross-model tables (CSV and Markdown, one per metric: a row per test
and subset, a column per model and language) and a comparison figure per metric (its value
across models and languages, with intervals where the measure has them);
:func:`redraw_figures` draws the figures again from the tables alone.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from polybias.data.languages import NAMES, language
from polybias.files import write_text_atomic
from polybias.results.plots import forest, natural_key, png_bytes, pyplot
from polybias.results.report import markdown_table
from polybias.results.table import (
    COLUMNS,
    ResultsError,
    cross_model_table,
    metric_axis,
    null_value,
)


def _language_names(code: str) -> str:
    """``en`` → English; a comparison's ``en+fr+nl`` → ``English, French, Dutch``."""
    return ", ".join(dict.fromkeys(language(c).name for c in str(code).split("+")))


def _codes_named(text: str) -> str:
    """Language codes in parentheses named in words: ``bertje (nl)`` → ``bertje (Dutch)``."""
    return re.sub(r"\(([a-z]{2})\)", lambda m: f"({language(m[1]).name})" if m[1] in NAMES
                  else m[0], text)


def _comparison_rows(frame: pd.DataFrame, metric: str) -> pd.DataFrame:
    """The rows of a comparison figure of ``metric``, with their group, label and hue, in
    the order they are drawn (see :func:`comparison_figures`)."""
    part = frame[frame["metric"] == metric].copy()
    if part.empty:
        raise ResultsError(f"no results for metric {metric!r}")
    subset = part["subset"].fillna("").astype(str).map(_codes_named)
    test = part["test"].astype(str)
    part["hue"] = [_language_names(c) for c in part["language"]]
    model = np.where(part["model"].astype(str).str.contains("+", regex=False), "",
                     part["model"].astype(str) + " (" + part["hue"] + ")")
    by_test = part.groupby([test, subset]).size().mean() <= 1.5 and test.nunique() < len(part)
    if by_test:
        part["group"] = test
        part["label"] = [" — ".join(x for x in (s, m) if x) for s, m in zip(subset, model, strict=True)]
    else:
        part["group"] = test + np.where(subset != "", " · " + subset, "")
        part["label"] = [m or s for s, m in zip(subset, model, strict=True)]
    sizes = part.groupby("group")["group"].transform("size")
    alone = (sizes == 1) & (part["label"] != "") & (part["label"].map(part["label"].value_counts()) > 1)
    # a group of one row whose model heads other such groups: the model would repeat under
    # every heading; head those rows by model and language instead, each named by its test
    part.loc[alone, ["group", "label"]] = part.loc[alone, ["label", "group"]].to_numpy()
    for g, rows in part.groupby("group").groups.items():  # a suffix every row repeats
        tails = {str(lab).rpartition(" — ")[2] for lab in part.loc[rows, "label"]}
        if len(rows) > 1 and len(tails) == 1 and all(" — " in str(x) for x in part.loc[rows, "label"]):
            tail = tails.pop()
            part.loc[rows, "group"] = f"{g} — {tail}"
            part.loc[rows, "label"] = [str(x).rpartition(" — ")[0] for x in part.loc[rows, "label"]]
    groups = list(dict.fromkeys(part["group"]))
    if groups == sorted(groups):  # sorted as text (WEAT1, WEAT10, WEAT2): sort as numbers
        groups = sorted(groups, key=natural_key)
    languages = list(dict.fromkeys(part["hue"]))
    models = list(dict.fromkeys(part["model"]))
    part["order"] = [(groups.index(g), languages.index(h), natural_key(lab), models.index(m))
                     for g, h, lab, m in zip(part["group"], part["hue"], part["label"],
                                             part["model"], strict=True)]
    return part.sort_values("order", kind="stable").reset_index(drop=True)


def comparison_figures(frame: pd.DataFrame, metric: str, title: str | None = None,
                       max_rows: int = 24) -> list:
    """A metric across models and languages as forest plots (:func:`polybias.results.plots.forest`):
    rows grouped by dataset (test and subset), one row per model, named with its language
    in words, ordered by language within a group; colour and marker tell the language; the
    interval as a bar where the measure has one, the null value dashed; the value axis says
    the measure, its unit and the direction of bias (:func:`metric_axis`). Where nearly
    every (test, subset) has one row, rows are grouped by test and named by subset and
    model; where every group has one row, the rows are headed by their model and language
    and named by test (no label repeated on every row). Tests sort naturally (WEAT2 before
    WEAT10). A row of a comparison between models (model ``a+b``) is named by its subset.
    Past ``max_rows`` rows (24: a figure that prints at full size on a page) the rows go on
    further figures, each titled with its part and
    rows: nothing is left out. Returns the figures."""
    part = _comparison_rows(frame, metric)
    heading, axis = metric_axis(metric)
    heading = title or heading
    pages = [part.iloc[i:i + max_rows] for i in range(0, len(part), max_rows)]
    ci = part["ci_low"].notna().any()
    note = ("dashed line: no bias; bars: 95 % interval" if ci else "dashed line: no bias")
    figures = []
    for k, page in enumerate(pages, start=1):
        name = heading
        if len(pages) > 1:
            name += (f"\n(part {k} of {len(pages)}: rows {page.index[0] + 1}–{page.index[-1] + 1} "
                     f"of {len(part)})")
        figures.append(forest(page.reset_index(drop=True), xlabel=axis, title=name,
                              null=null_value(metric), note=note, legend_title="language"))
    return figures


def comparison_figure(frame: pd.DataFrame, metric: str, title: str | None = None,
                      max_rows: int = 24):
    """The first (often the only) figure of :func:`comparison_figures`."""
    figures = comparison_figures(frame, metric, title, max_rows)
    for extra in figures[1:]:
        pyplot().close(extra)
    return figures[0]


def export_figure_names(stem: str, n: int) -> list[str]:
    """File names of the ``n`` figures of one exported metric: ``<stem>.png``, then
    ``<stem>_2.png``, ...

    >>> export_figure_names("ceat", 3)
    ['ceat.png', 'ceat_2.png', 'ceat_3.png']
    """
    return [f"{stem}.png"] + [f"{stem}_{k}.png" for k in range(2, n + 1)]


EXPORT_SUFFIXES = (".csv", ".md", ".png")
#: resolution of the exported figures: 6.6 in wide (the PDF's text width), they are 792 px,
#: the README's width
EXPORT_DPI = 120


def _write_figures(frame: pd.DataFrame, metric: str, first: Path) -> list[Path]:
    """Write the figures of ``metric`` (:func:`comparison_figures`) as ``first`` and its
    further parts (:func:`export_figure_names`), each atomically, with its smallest font
    recorded (:func:`polybias.results.plots.png_bytes`); returns the paths."""
    import matplotlib.pyplot as plt  # lazy: heavy; figures only

    pages = comparison_figures(frame, metric)
    written = []
    for fig, name in zip(pages, export_figure_names(first.stem, len(pages)), strict=True):
        path = first.with_name(name)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.tmp.png")
        try:
            tmp.write_bytes(png_bytes(fig, dpi=EXPORT_DPI))  # its smallest font recorded
            tmp.replace(path)
        finally:
            tmp.unlink(missing_ok=True)
            plt.close(fig)
        written.append(path)
    return written


#: A cell of a cross-model table (:func:`_cell`): value, interval, p-value
_CELL = re.compile(r"^(?P<value>[^\s\[(]+)(?: \[(?P<low>[^,\s]+), (?P<high>[^\]\s]+)\])?"
                   r"(?: \(p=(?P<p>[^)\s]+)\))?$")


def metric_of_stem(stem: str) -> str:
    """The metric whose tables :func:`export` writes as ``<stem>.csv`` (it writes a
    metric's colons as underscores).

    >>> metric_of_stem("kurita"), metric_of_stem("validity_crows-mlm_jsd-B")
    ('kurita', 'validity:crows-mlm:jsd-B')
    """
    return ":".join(stem.split("_", 2)) if stem.startswith("validity_") else stem


def read_cross_model_table(path: str | Path, metric: str | None = None) -> pd.DataFrame:
    """The rows of a cross-model table :func:`export` wrote (``<stem>.csv``, of
    :func:`cross_model_table`) back as a tidy table (:data:`COLUMNS`), one row per
    filled cell: ``model`` and ``language`` from the column ``model (language)``, the
    value, interval and p-value as the cell prints them (rounded to the table's digits);
    a cell '—' (no value) gives a row without a value. ``metric`` defaults to the one the
    file name tells (:func:`metric_of_stem`). A cell that is not a value is an error
    naming the file, the row and the column.

    >>> import tempfile
    >>> rows = pd.DataFrame({"metric": "weat", "study": "weat", "test": ["T1", "T1"],
    ...                      "subset": "", "model": ["m1", "m2"], "language": "en",
    ...                      "value": [1.0, 0.5], "ci_low": [0.5, np.nan], "ci_high": [1.5, np.nan],
    ...                      "p": [0.01, 0.2]})
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     _ = cross_model_table(rows, "weat").to_csv(Path(tmp) / "weat.csv", index=False)
    ...     back = read_cross_model_table(Path(tmp) / "weat.csv")
    >>> back[["model", "language", "test", "metric", "value", "ci_low", "p"]].to_dict("records")
    [{'model': 'm1', 'language': 'en', 'test': 'T1', 'metric': 'weat', 'value': 1.0, 'ci_low': 0.5, 'p': 0.01}, {'model': 'm2', 'language': 'en', 'test': 'T1', 'metric': 'weat', 'value': 0.5, 'ci_low': nan, 'p': 0.2}]
    """
    path = Path(path)
    metric = metric or metric_of_stem(path.stem)
    try:
        table = pd.read_csv(path, dtype=str, keep_default_na=False)
    except (OSError, pd.errors.ParserError) as exc:
        raise ResultsError(f"{path}: not a readable cross-model table: {exc}") from exc
    keys = ["study", "test", "subset"]
    if list(table.columns[:3]) != keys:
        raise ResultsError(f"{path}: not a cross-model table (its first columns are "
                           f"{list(table.columns[:3])}, not {keys})")
    rows = []
    for column in table.columns[3:]:
        named = re.fullmatch(r"(.+) \(([^()]+)\)", column)
        if not named:
            raise ResultsError(f"{path}: column {column!r} is not 'model (language)'")
        for i, cell in enumerate(table[column]):
            if not cell:
                continue
            found = _CELL.match(cell) if cell != "—" else None
            if cell != "—" and not found:
                raise ResultsError(f"{path}: row {i + 1}, column {column!r}: {cell!r} is not "
                                   "'value [low, high] (p=…)'")
            values = {k: float(found[k]) if found and found[k] else np.nan
                      for k in ("value", "low", "high", "p")}
            rows.append({"model": named[1], "language": named[2], "metric": metric,
                         **{k: table.at[i, k] for k in keys}, "value": values["value"],
                         "ci_low": values["low"], "ci_high": values["high"], "p": values["p"]})
    frame = pd.DataFrame(rows, columns=list(COLUMNS))
    frame["n"] = frame["n"].astype("Int64")
    return frame


def redraw_figures(out: str | Path) -> list[Path]:
    """Redraw the comparison figures of every cross-model table in ``out`` (its
    ``<stem>.csv``, :func:`read_cross_model_table`) from the table itself, where the run
    records it was exported from are not at hand; the figures then draw the values as
    the tables print them (rounded to two digits, finer than the figures show). Parts
    of a figure no longer drawn are removed. Returns the figures written."""
    out = Path(out)
    tables = sorted(p for p in out.glob("*.csv") if p.name != "results.csv")
    if not tables:
        raise ResultsError(f"no cross-model tables (*.csv) in {out}")
    written = []
    for table in tables:
        metric = metric_of_stem(table.stem)
        figures = _write_figures(read_cross_model_table(table, metric), metric,
                                 out / f"{table.stem}.png")
        for stale in out.glob(f"{table.stem}_*.png"):  # parts of an earlier drawing
            part = re.fullmatch(rf"{re.escape(table.stem)}_(\d+)\.png", stale.name)
            if part and int(part[1]) > len(figures):
                stale.unlink()
        written += figures
    return written


def export(frame: pd.DataFrame, out: str | Path, metrics: list[str] | None = None,
           figures: bool = True, digits: int = 2, tidy: bool = True, prune: bool = False) -> list[Path]:
    """Write ``<out>/results.csv`` (the tidy table; not with ``tidy=False``: it names
    record files and their times), and per metric ``<out>/<metric>.csv`` and
    ``<out>/<metric>.md`` (:func:`cross_model_table`) and ``<out>/<metric>.png``
    (:func:`comparison_figure`). ``prune`` then removes the tables and figures in
    ``out`` of metrics that are no longer exported. Returns the paths written."""
    out = Path(out)
    metrics = list(metrics) if metrics else sorted(frame["metric"].unique())
    if not metrics:
        raise ResultsError("no records to export")
    unknown = [m for m in metrics if m not in set(frame["metric"])]
    if unknown:
        raise ResultsError(f"no results for metric(s) {', '.join(unknown)}")
    tables = {metric.replace(":", "_"): cross_model_table(frame, metric, digits) for metric in metrics}
    written = [write_text_atomic(out / "results.csv", frame.to_csv(index=False))] if tidy else []
    for (stem, table), metric in zip(tables.items(), metrics, strict=True):
        written.append(write_text_atomic(out / f"{stem}.csv", table.to_csv(index=False)))
        written.append(write_text_atomic(out / f"{stem}.md", markdown_table(table) + "\n"))
        if figures:
            written += _write_figures(frame, metric, out / f"{stem}.png")
    if prune:
        keep = {p.name for p in written} | {"results.csv"}
        for stale in sorted(out.iterdir()):
            if stale.is_file() and stale.suffix in EXPORT_SUFFIXES and stale.name not in keep:
                stale.unlink()
    return written
