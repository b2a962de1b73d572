"""Reported values of the source studies and side-by-side tables (``paper/reported``, ``paper/tables``)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from IPython import get_ipython
from IPython.display import display

from polybias import paths
from polybias.files import write_text_atomic


def load_reported(name: str, **filters: str) -> pd.DataFrame:
    """Read ``paper/reported/<name>.csv`` and keep the rows matching ``filters`` (column=value).

    >>> load_reported("caliskan2017_weat", model="w2v-gnews").effect_size.tolist()[:3]
    [1.54, 1.63, 0.58]
    """
    path = paths.paper_dir() / "reported" / f"{name}.csv"
    if not path.is_file():
        raise FileNotFoundError(f"no reported values {path.name} in paper/reported/")
    frame = pd.read_csv(path)
    for column, value in filters.items():
        if column not in frame.columns:
            raise KeyError(f"{path.name} has no column {column!r}")
        frame = frame[frame[column] == value]
    return frame.reset_index(drop=True)


def side_by_side(reproduced: pd.DataFrame, reported: pd.DataFrame, on: str, value: str) -> pd.DataFrame:
    """Join reproduced and reported ``value`` on ``on``; add their difference.

    Rows of ``reproduced`` without a reported value keep NaN there.
    """
    rep = reported[[on, value]].rename(columns={value: "reported"})
    out = reproduced.rename(columns={value: "reproduced"}).merge(rep, on=on, how="left")
    out["difference"] = out["reproduced"] - out["reported"]
    return out


def markdown_table(frame: pd.DataFrame, digits: int = 2, formats: dict[str, str] | None = None) -> str:
    """Fixed-precision Markdown table.

    Floats are rounded to ``digits`` (``formats`` maps a column to a format spec
    instead, e.g. ``{"pvalue": ".1e"}``); NaN shows as '—' and negative zero as zero.

    >>> print(markdown_table(pd.DataFrame({"test": ["a"], "d": [-0.001], "p": [1e-5]}),
    ...                      formats={"p": ".1e"}))
    | test | d | p |
    |---|---|---|
    | a | 0.00 | 1.0e-05 |
    """
    formats = formats or {}

    def fmt(v: object, column: str) -> str:
        if isinstance(v, float | np.floating):
            if np.isnan(v):
                return "—"
            text = format(v, formats.get(column, f".{digits}f"))
            return text[1:] if text.startswith("-") and float(text) == 0 else text
        return str(v)

    head = "| " + " | ".join(map(str, frame.columns)) + " |"
    rule = "|" + "---|" * len(frame.columns)
    rows = ["| " + " | ".join(fmt(v, c) for v, c in zip(row, frame.columns, strict=True)) + " |"
            for row in frame.itertuples(index=False)]
    return "\n".join([head, rule, *rows])


def show_table(text: str) -> None:
    """Show a Markdown table (:func:`markdown_table`) as a table.

    In a Jupyter kernel the output carries two representations: ``text/markdown``,
    which JupyterLab (and the documentation site) renders as a table, and
    ``text/plain``, the exact text, which nbval compares in cells tagged
    ``nbval-check-output`` (it compares every representation of a display output).
    Outside a kernel the text is printed.

    >>> show_table("| a |\\n|---|\\n| 1 |")
    | a |
    |---|
    | 1 |

    An empty text (a table that does not apply to the run) shows nothing.
    """
    if not text.strip():
        return
    if get_ipython() is None:
        print(text)
        return
    display({"text/markdown": text, "text/plain": text}, raw=True)


def write_table(text: str, relpath: str | Path) -> Path:
    """Write a table's text at :func:`polybias.paths.output_path` of ``relpath`` (under the
    project root unless ``POLYBIAS_OUTPUT_ROOT`` is set), atomically; return the path."""
    return write_text_atomic(paths.output_path(relpath), text.rstrip("\n") + "\n")
