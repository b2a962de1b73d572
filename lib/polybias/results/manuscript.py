"""Assemble the paper from its section files, generated tables and figures: a findings-first
main text and its supplement.

``paper/main/*.md`` hold the main text (the abstract, the research questions, one section
per question; :func:`build_paper` writes ``paper/manuscript.md``) and ``paper/sections/*.md``
the supplement, one file per notebook section (``paper/supplement.md``, its tables and
figures numbered S1, S2, ...); each is read in name order. The main text cites the
supplement's labels (``@tab:weat`` reads "Table S2") and ends with an index of what each of
its sections cites there; a table of the main text must fit the page (no long tables
there). A section pulls its numbers in with directives on a line of their own::

    <!-- table: weat_w2v-gnews.md -->            the file paper/tables/weat_w2v-gnews.md
    <!-- table: validity_en.md#5 -->             its fifth table only
    <!-- table: validity_en.md#5[measure, fpr] -->   ... reduced to these columns
    <!-- table: x.md#2[a, b](year=2015) -->      ... and to the rows with year 2015
    <!-- figure: weat_w2v-gnews.png | Caption --> figures/weat_w2v-gnews.png as an image
                                                  (and its parts weat_w2v-gnews_2.png, ...)
    <!-- reported: caliskan2017_weat -->          paper/reported/caliskan2017_weat.csv as a table
    <!-- reported: malik2022_table3 | model=glove-hi-300 -->   ... filtered on columns
    <!-- records: kurita -->                      the cross-model table of a measure built
                                                  from the run records (paper/export/kurita.csv)
    <!-- records: ceat | test=C6 -->              ... filtered on columns (then no figure)
    <!-- reported: malik2022_table4 || Caption -->  a caption for a reported or records table

Every table and figure is numbered and captioned (**Table N.**, **Figure N.**; a
directive's text after ``|`` is its caption). The prose refers to them by label, never by
a typed number: a directive ending in ``{#tab:name}`` (a table, reported or records
directive) or ``{#fig:name}`` (a figure) defines the label, and ``@tab:name`` /
``@fig:name`` in the text of any section becomes "Table 3" / "Figure 2" when the
manuscript is assembled (a records directive's label ``tab:name`` also labels its figures
``fig:name``, "Figures 4–5" when there are several). A reference to a label no directive
defines, or a label defined twice, is an error naming the section; :func:`unreferenced`
lists the tables and figures of the main text that no reference names::

    <!-- table: weat_w2v-gnews.md | WEAT 1–10 {#tab:weat} -->
    @tab:weat gives the effect sizes; @fig:weat draws them.

A table fits the page of the main text when it has at most :data:`MAX_ROWS` rows, :data:`MAX_COLUMNS` columns and
:data:`MAX_WIDTH` characters a row; a longer or wider one is printed in the appendix of
*Long tables* (the letter after the sections' own appendices; ``@app:long`` names it),
its caption left in the text with a pointer. A column with one value in every row (a
note, the model) is printed once under its table as a *Note*, not in every row. The
manuscript opens with a title block: the title (the first section's ``#`` heading), the
project as author, the version and, when given, the commit and its date.

A table or figure of a section ``NN_*.md`` is followed by a one-line *Source* note
linking the run that wrote it (the executed notebook ``paper/executed/NN_*.ipynb``, or the
kept run under ``paper/records/``) with what that run declares the table holds (its model,
dataset, languages, sample, ...: :func:`run_declaration`, from the run's own parameters, so
it cannot drift from the table) and the metric cards of the measures it reports
(:data:`CARDS`, by the file name's first word), where they can be told.

``records`` tables are the ones ``polybias export`` writes from the records of the sweep
(``make reproduce`` runs it into ``paper/export/``, :func:`polybias.results.export.export`): one
row per study, test and subset, one column per model and language, followed by the
measure's comparison figure when the table is not filtered. A sweep over other models
therefore changes these tables without any section being edited.

:func:`build_paper` writes ``paper/manuscript.md`` and ``paper/supplement.md`` (atomically)
with every directive replaced; a directive naming a missing file is an error naming the
section and the file, and nothing is written. ``python -m polybias.results.manuscript``
(``make paper``) runs it.

Citations are MyST roles, author-year in parentheses on the site and in the PDF alike:
``{cite:p}`key``` reads "(Sadhu et al., 2024)", ``{cite:t}`key``` "Sadhu et al. (2024)".
Where a citation stands inside parentheses of the text, or is possessive, the manuscript
spells it with the author and year roles instead (:func:`citations`), so that no
parentheses double: "(seed 000: Sadhu et al., 2024)", "Kurita et al.'s (2019) score".
"""

from __future__ import annotations

import ast
import functools
import json
import re
import sys
from importlib import metadata
from pathlib import Path
from typing import Any

import pandas as pd

from polybias import paths
from polybias.files import write_text_atomic
from polybias.results.report import load_reported, markdown_table
from polybias.results.table import metric_axis
from polybias.studies.parameters import NOTEBOOKS, defaults

DIRECTIVE = re.compile(r"^<!--\s*(table|figure|reported|records):\s*(.*?)\s*-->\s*$")
#: A directive's label, at the end of its text: ``{#tab:name}`` or ``{#fig:name}``
LABEL = re.compile(r"\s*\{#([a-z]+:[\w-]+)\}\s*$")
#: A reference to a label in the prose: ``@tab:name``, ``@fig:name``
REFERENCE = re.compile(r"(?<![\w@])@((?:tab|fig|app):[\w-]*\w)")
#: What :func:`citations` reads in a paragraph: a parenthetical or textual citation role
#: (possessive: followed by 's), an inline code span or other role (skipped), a link's
#: target (skipped), or a parenthesis
_CITE_TOKENS = re.compile(r"\{cite:(?P<form>[pt])\}`(?P<keys>[^`]+)`(?P<pos>'s(?!\w))?"
                          r"|(?P<skip>(?:\{[\w:-]+\})?`[^`]*`|\]\([^)\s]*\))"
                          r"|(?P<paren>[()])")

#: The most rows, columns and characters a row (cells plus 3 each) a table may have to be
#: printed in the main text (8 pt on an A4 page); a larger one goes to the long tables.
MAX_ROWS, MAX_COLUMNS, MAX_WIDTH = 20, 10, 120
#: The heading of the appendix the long tables go to (its anchor: the heading's slug)
LONG_TABLES = "Long tables"
#: The author of the manuscript: the project itself
AUTHOR = "The polybias project"


# The metric cards (docs/measures/<name>.md) behind a table or figure, by the first word
# of its file name (the notebook's output prefix).
CARDS = {
    "weat": ("weat",), "seat": ("seat",), "ceat": ("ceat",), "logprob": ("kurita",),
    "crows": ("crows", "jsd-b"), "catbias": ("cb",), "interactions": ("interaction-cb",),
    "debias": ("weat-gap",), "external": ("wefat", "relative-norm-distance"), "gest": ("gest",),
}


def _tokens(text: str) -> list[str]:
    return [t for t in re.split(r"[_.]", text) if t]


def _run_match(label: list[str], stem: list[str]) -> int:
    """How many leading tokens of a run label occur, in order and adjacent, in a file stem."""
    best = 0
    for start in range(len(stem)):
        n = 0
        while n < len(label) and start + n < len(stem) and stem[start + n] == label[n]:
            n += 1
        best = max(best, n)
    return best


#: The parameters of the run that wrote a table that say what the table holds, in this
#: order, as its *Source* note states them (:func:`run_declaration`)
DECLARED = ("model", "profiled", "encoder", "dataset", "language", "languages", "method", "templates",
            "planted_p", "max_pairs", "max_items", "per_stereotype", "limit", "n_bootstrap",
            "n_permutations", "seed")


#: The declared sample sizes, 0 when the run reads everything
_SAMPLES = ("max_pairs", "max_items", "per_stereotype", "limit")


def _injected(notebook: dict) -> dict[str, Any]:
    """The parameters papermill injected into an executed notebook (its cell tagged
    ``injected-parameters``: one ``name = literal`` a line)."""
    for cell in notebook.get("cells", []):
        if "injected-parameters" in cell.get("metadata", {}).get("tags", []):
            tree = ast.parse("".join(cell["source"]))
            return {node.targets[0].id: ast.literal_eval(node.value) for node in tree.body
                    if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)}
    return {}


def table_runs(paper: Path | None = None) -> dict[str, dict[str, Any]]:
    """Which run wrote each table of ``paper/tables/`` (file name → ``notebook``, its
    ``parameters`` as stated, and ``executed``, the executed copy under ``paper/executed/``,
    or ``kept``, the kept run's folder under ``paper/records/``): read from the executed
    notebooks' injected parameters and the kept runs' ``run.json``, whose ``table_file``
    names the table. What the paper says a table holds is generated from this."""
    paper = Path(paper) if paper else paths.paper_dir()
    stamps = tuple(f.stat().st_mtime_ns for f in (paper / "executed", paper / "records") if f.is_dir())
    return _table_runs(paper.resolve(), stamps)


@functools.cache
def _table_runs(paper: Path, stamps: tuple[int, ...]) -> dict[str, dict[str, Any]]:
    runs: dict[str, dict[str, Any]] = {}
    for nb in sorted((paper / "executed").glob("*.ipynb")):
        stated = _injected(json.loads(nb.read_text(encoding="utf-8")))
        if stated.get("table_file"):
            notebook = next((n.stem for n in (paths.project_root() / "notebooks").glob("*.py")
                             if nb.stem == n.stem or nb.stem.startswith(n.stem + "_")), None)
            runs[Path(stated["table_file"]).name] = {"notebook": notebook, "parameters": stated,
                                                     "executed": nb.name}
    for marker in sorted((paper / "records").glob("*/*/run.json")):
        done = json.loads(marker.read_text(encoding="utf-8"))
        stated = done.get("parameters") or {}
        if stated.get("table_file"):
            runs[Path(stated["table_file"]).name] = {
                "notebook": Path(done.get("notebook", "")).stem or None, "parameters": stated,
                "kept": marker.parent.relative_to(paper).as_posix()}
    return runs


def run_declaration(run: dict[str, Any]) -> str:
    """What a table holds, as the run that wrote it declares it: the :data:`DECLARED`
    parameters of its notebook's declaration (:func:`polybias.studies.parameters.defaults`)
    as the run set them, stated or by default; an empty value (every language) and a sample
    size of 0 (no sample) are left out.

    >>> run_declaration({"notebook": "15_gest", "parameters": {"model": "smollm2-135m-instruct-q4_1",
    ...                                                        "max_items": 80}})
    'model = smollm2-135m-instruct-q4_1, max_items = 80, n_bootstrap = 1000, seed = 0'
    """
    values = dict(run["parameters"])
    if run.get("notebook") in NOTEBOOKS:
        values = {**defaults(run["notebook"]), **values}
    shown = []
    for name in DECLARED:
        value = values.get(name)
        if value is None or value == "" or value == [] or (name in _SAMPLES and value == 0):
            continue
        text = ", ".join(map(str, value)) if isinstance(value, list) else str(value)
        shown.append(f"{name} = {text}")
    return ", ".join(shown)


def source_note(file: str, section: str) -> str:
    """The *Source* line under a table or figure ``file`` of ``section`` (``NN_*.md``), or ''.

    A table written by a run (:func:`table_runs`) names that run and what it declares the
    table holds (:func:`run_declaration`: model, dataset, languages, sample, ...), generated
    from the run's parameters so that it cannot drift from the table; a figure names the
    executed notebook whose run label its file name holds.

    >>> source_note("weat_w2v-gnews.md", "01_weat.md")  # doctest: +NORMALIZE_WHITESPACE
    '*Source:* notebook [01_weat_w2v-gnews](executed/01_weat_w2v-gnews.ipynb) with model = w2v-gnews,
     language = en, n_permutations = 100000, seed = 0; card [weat](../docs/measures/weat.md)\\n'
    >>> source_note("weat_w2v-gnews.png", "appendix.md")  # a figure outside a numbered section
    ''
    """
    number = section.split("_", 1)[0]
    stem = _tokens(Path(file).stem)
    cards = [c for c in CARDS.get(stem[0].split("-")[0] if stem else "", ())
             if (paths.project_root() / "docs" / "measures" / f"{c}.md").is_file()]
    card = "card " + ", ".join(f"[{c}](../docs/measures/{c}.md)" for c in cards) if cards else ""
    run = table_runs().get(file)
    if run is None and not number.isdigit():
        return ""
    if run is not None:  # the run that wrote the table, exactly, and what it declares
        where = (f"notebook [{Path(run['executed']).stem}](executed/{run['executed']})" if run.get("executed")
                 else f"kept run `{Path(run['kept']).name}` (its records in `paper/{run['kept']}`)")
        declared = run_declaration(run)
        parts = [where + (f" with {declared}" if declared else ""), card]
        return f"*Source:* {'; '.join(p for p in parts if p)}\n"
    names = [nb.stem for nb in (paths.project_root() / "notebooks").glob(f"{number}_*.py")]
    candidates = {}
    for nb in sorted((paths.paper_dir() / "executed").glob(f"{number}_*.ipynb")):
        name = next((n for n in names if nb.stem.startswith(n + "_")), None)
        if name is not None:  # the run label: what the sweep appended to the notebook's name
            label = _tokens(nb.stem[len(name) + 1:])
            n = _run_match(label, stem)
            candidates[nb.name] = (n, n == len(label))  # a whole label beats a partial one
    if len(candidates) == 1:  # one run of the notebook: it wrote everything of its section
        candidates = {name: (1, True) for name in candidates}
    best = max(candidates.values(), default=(0, False))
    winners = [name for name, score in candidates.items() if score == best]
    parts = []
    if best[0] and len(winners) == 1:
        parts.append(f"notebook [{Path(winners[0]).stem}](executed/{winners[0]})")
    if card:
        parts.append(card)
    return f"*Source:* {'; '.join(parts)}\n" if parts else ""


class ManuscriptError(ValueError):
    """A section refers to something that does not exist, or is malformed."""


def _filters(spec: str, where: str, kind: str) -> tuple[str, dict[str, str]]:
    name, _, filters = (part.strip() for part in spec.partition("|"))
    kwargs = {}
    for item in filter(None, (f.strip() for f in filters.split(","))):
        key, eq, value = item.partition("=")
        if not eq:
            raise ManuscriptError(f"{where}: {kind} filter {item!r} is not key=value")
        kwargs[key.strip()] = value.strip()
    return name, kwargs


def _reported_table(spec: str, where: str) -> tuple[str, str]:
    """The reported table of a directive, as Markdown, and its default caption."""
    name, kwargs = _filters(spec, where, "reported")
    if not (paths.paper_dir() / "reported" / f"{name}.csv").is_file():
        raise ManuscriptError(f"{where}: no reported table paper/reported/{name}.csv")
    frame = load_reported(name, **kwargs)
    if frame.empty:
        raise ManuscriptError(f"{where}: reported table {name} has no rows for {kwargs}")
    keep = [c for c in frame.columns if c not in ("study",) and frame[c].notna().any()]
    where_from = ", ".join(f"{k} = {v}" for k, v in kwargs.items())
    caption = f"Published values, `paper/reported/{name}.csv`" + (f" ({where_from})" if where_from else "")
    return markdown_table(frame[keep].fillna(""), digits=4), caption


def _records_table(spec: str, where: str, export_prefix: str) -> tuple[str, str, list[str]]:
    """The records table of a directive, its default caption and its figures (the export's
    pages of the measure's figure; none when the table is filtered)."""
    name, kwargs = _filters(spec, where, "records")
    stem = name.replace(":", "_")
    file = paths.paper_dir() / "export" / f"{stem}.csv"
    if not file.is_file():
        raise ManuscriptError(f"{where}: no records table paper/export/{stem}.csv (run make reproduce)")
    frame = pd.read_csv(file, dtype=str, keep_default_na=False)
    for key, value in kwargs.items():
        if key not in frame.columns:
            raise ManuscriptError(f"{where}: records table {stem} has no column {key!r} "
                                  f"(columns: {', '.join(frame.columns)})")
        frame = frame[frame[key] == value]
    if frame.empty:
        raise ManuscriptError(f"{where}: records table {stem} has no rows for {kwargs}")
    text = markdown_table(frame.reset_index(drop=True))
    caption = f"{metric_axis(name)[0]}, from the run records"
    figures = []
    for k in range(1, 100):
        name = f"{stem}.png" if k == 1 else f"{stem}_{k}.png"
        if kwargs or not (paths.paper_dir() / "export" / name).is_file():
            break
        figures.append(f"{export_prefix}{name}")
    return text, caption, figures


def _blocks(text: str) -> list[tuple[str, str]]:
    """Split Markdown into ("table", pipe rows) and ("text", the rest) blocks, in order.

    >>> [k for k, _ in _blocks("Intro:\\n\\n| a |\\n|---|\\n| 1 |\\n\\nafter\\n")]
    ['text', 'table', 'text']
    """
    out: list[tuple[str, list[str]]] = []
    for line in text.strip("\n").splitlines():
        kind = "table" if line.lstrip().startswith("|") else "text"
        if out and out[-1][0] == kind:
            out[-1][1].append(line)
        else:
            out.append((kind, [line]))
    return [(k, "\n".join(lines).strip("\n")) for k, lines in out if "".join(lines).strip()]


#: A table directive's file: ``file.md``, one of its tables ``file.md#N`` (from 1), reduced
#: to some of its columns ``file.md#N[a, b]`` and to the rows with given values
#: ``file.md#N[a, b](c=x, d=y)`` (the filter's columns need not be kept)
TABLE_PICK = re.compile(r"^(?P<file>[^#\[\]]+?)(?:#(?P<block>\d+)(?:\[(?P<columns>[^\]]+)\])?"
                        r"(?:\((?P<rows>[^)]+)\))?)?$")


def _columns(text: str, names: list[str], where: str) -> str:
    """The pipe table ``text`` reduced to the columns ``names``, in that order.

    >>> print(_columns("| a | b | c |\\n|---|---|---|\\n| 1 | 2 | 3 |", ["c", "a"], "s"))
    | c | a |
    |---|---|
    | 3 | 1 |
    """
    header, rows = _table_rows(text)
    missing = [n for n in names if n not in header]
    if missing:
        raise ManuscriptError(f"{where} has no column {', '.join(map(repr, missing))} "
                              f"(columns: {', '.join(header)})")
    keep = [header.index(n) for n in names]
    return _pipe(names, [[r[i] for i in keep] for r in rows])


def _rows(text: str, spec: str, where: str) -> str:
    """The rows of the pipe table ``text`` whose cells equal the ``column=value`` pairs of
    ``spec`` (comma-separated); none left is an error.

    >>> print(_rows("| a | b |\\n|---|---|\\n| 1 | x |\\n| 2 | y |", "b=y", "s"))
    | a | b |
    |---|---|
    | 2 | y |
    """
    header, rows = _table_rows(text)
    for item in (i.strip() for i in spec.split(",")):
        column, eq, value = (part.strip() for part in item.partition("="))
        if not eq or column not in header:
            raise ManuscriptError(f"{where}: row filter {item!r} is not column=value of a column "
                                  f"(columns: {', '.join(header)})")
        rows = [r for r in rows if r[header.index(column)] == value]
    if not rows:
        raise ManuscriptError(f"{where}: no row has {spec}")
    return _pipe(header, rows)


def _cells(row: str) -> list[str]:
    return [c.strip() for c in re.split(r"(?<!\\)\|", row.strip())[1:-1]]


def _table_rows(text: str) -> tuple[list[str], list[list[str]]]:
    lines = text.splitlines()
    header = _cells(lines[0])
    return header, [(_cells(r) + [""] * len(header))[:len(header)] for r in lines[2:]]


def _pipe(header: list[str], rows: list[list[str]]) -> str:
    return "\n".join(["| " + " | ".join(header) + " |", "|" + "---|" * len(header),
                      *("| " + " | ".join(r) + " |" for r in rows)])


def fit_table(text: str) -> tuple[str, str, bool]:
    """One pipe table made fit to read: a column with the same value in every row (of at
    least three rows; not an empty or '—' one) leaves the table for a note printed once.
    Returns the table, the note ('' if none) and whether it fits the main text
    (:data:`MAX_ROWS`, :data:`MAX_COLUMNS`, :data:`MAX_WIDTH`).

    >>> table, note, fits = fit_table("| m | d |\\n|---|---|\\n| w2v | 1 |\\n| w2v | 2 |\\n| w2v | 3 |")
    >>> print(table); print(note); print(fits)
    | d |
    |---|
    | 1 |
    | 2 |
    | 3 |
    m: w2v
    True
    """
    header, rows = _table_rows(text)
    constant = [i for i in range(len(header))
                if rows and len({r[i] for r in rows}) == 1
                and (len(rows) >= 3 or rows[0][i] in ("", "—")) and len(header) > 1]
    if len(constant) == len(header):
        constant = constant[1:]
    note = "; ".join(f"{header[i]}: {rows[0][i] if rows[0][i] not in ('', '—') else 'none'}"
                     for i in constant)
    keep = [i for i in range(len(header)) if i not in constant]
    header, rows = [header[i] for i in keep], [[r[i] for i in keep] for r in rows]
    width = sum(max([len(h), *(len(r[i]) for r in rows)]) + 3 for i, h in enumerate(header))
    fits = len(rows) <= MAX_ROWS and len(header) <= MAX_COLUMNS and width <= MAX_WIDTH
    return _pipe(header, rows), note, fits


def _plain(text: str) -> str:
    """A short paragraph as a caption: no bold, no trailing colon."""
    text = re.sub(r"^#+\s*", "", text.strip(), flags=re.M)
    return re.sub(r"\*\*(.+?)\*\*", r"\1", " ".join(text.split())).rstrip(":").strip()


class Numbering:
    """Numbers of tables and figures across a manuscript, and the long tables that go to
    the appendix of long tables (``move_long``; else they stay where they are)."""

    def __init__(self, move_long: bool = False, long_tables: str = f"Appendix A. {LONG_TABLES}",
                 prefix: str = "", external: Numbering | None = None, strict: bool = False):
        #: printed before every number ("S": the supplement's Table S1, Figure S1)
        self.prefix = prefix
        #: another document's numbering whose labels this text may cite (the main text: the
        #: supplement's), and the labels of it cited, per section
        self.external = external
        self.cited: dict[str, list[str]] = {}
        #: the main text: a table that does not fit the page is an error, not a long table
        self.strict = strict
        #: the *Source* note of each table or figure file, as its section wrote it
        self.notes: dict[str, str] = {}
        #: the caption of each label's table or figure
        self.captions: dict[str, str] = {}
        self.tables = 0
        self.long_tables = long_tables  # the heading of the appendix of long tables
        self.figures = 0
        self.move_long = move_long
        self.appendix: list[str] = []
        self._seen = False  # a table of the directive being rendered has been numbered
        #: label -> ("Table" or "Figure", its numbers, the section that defines it)
        self.labels: dict[str, tuple[str, list[int | str], str]] = {}
        #: the numbered items of the main text: (kind, number, label or None)
        self.main: list[tuple[str, int, str | None]] = []
        #: the labels the prose refers to
        self.referenced: set[str] = set()

    def define(self, label: str | None, kind: str, numbers: list[int], where: str,
               main: bool) -> None:
        """Record ``numbers`` (of ``kind``, "Table" or "Figure") under ``label``; an
        item of the main text (``main``) is remembered for :meth:`unreferenced`."""
        if main:
            self.main += [(kind, n, label) for n in numbers]
        if label is None:
            return
        prefix = "tab" if kind == "Table" else "fig"
        if not label.startswith(prefix + ":"):
            raise ManuscriptError(f"{where}: label {label!r} of a {kind.lower()} must start "
                                  f"with {prefix!r}:")
        if label in self.labels or (self.external is not None and label in self.external.labels):
            first = (self.labels.get(label) or self.external.labels[label])[2]
            raise ManuscriptError(f"{where}: label {label!r} is defined twice (first in {first})")
        self.labels[label] = (kind, [f"{self.prefix}{n}" for n in numbers], where)

    def resolve(self, text: str, where: str) -> str:
        """Replace every ``@tab:name`` / ``@fig:name`` of ``text`` by "Table N" / "Figure N"
        ("Figures N–M" for a label of several figures); an unknown label is an error.

        >>> n = Numbering()
        >>> n.define("tab:a", "Table", [3], "s.md", main=True)
        >>> n.resolve("As @tab:a shows.", "s.md")
        'As Table 3 shows.'
        >>> n.resolve("See @fig:b.", "t.md")
        Traceback (most recent call last):
        ...
        polybias.results.manuscript.ManuscriptError: t.md: @fig:b refers to no table or figure (labels are set with {#fig:b} at the end of a directive)
        """
        def number(match: re.Match) -> str:
            label = match[1]
            if label in self.labels:
                self.referenced.add(label)
                kind, numbers, _ = self.labels[label]
            elif self.external is not None and label in self.external.labels:
                kind, numbers, _ = self.external.labels[label]
                cited = self.cited.setdefault(where, [])
                if label not in cited:
                    cited.append(label)
            else:
                raise ManuscriptError(f"{where}: @{label} refers to no table or figure (labels "
                                      f"are set with {{#{label}}} at the end of a directive)")
            if len(numbers) == 1:
                return f"{kind} {numbers[0]}"
            return f"{kind}s {numbers[0]}–{numbers[-1]}"

        return REFERENCE.sub(number, text)

    def unreferenced(self) -> list[str]:
        """The tables and figures of the main text no reference names ("Table 4", ...),
        after :meth:`resolve` has seen the whole text."""
        return [f"{kind} {self.prefix}{n}" for kind, n, label in self.main if label not in self.referenced]

    def table(self, text: str, caption: str, source: str, appendix: bool = False) -> str:
        """Markdown of the tables of one directive's ``text``, numbered and captioned,
        each with its note and the ``source`` line; the short paragraphs between them
        caption the tables that follow them. In a manuscript (``move_long``) the main text
        keeps the first table when it fits (else a pointer to it), and the tables after it,
        the details, go to the appendix of long tables, named once in the text."""
        out, pending, moved = [], [], []
        pointer = f"[{self.long_tables.split('.')[0]}](#{_slug(self.long_tables)})"
        for kind, block in _blocks(text):
            if kind == "text":
                if len(block) <= 250:
                    pending.append(_plain(block))
                else:
                    out.append(block + "\n")
                continue
            self.tables += 1
            first, self._seen = not self._seen, True
            title = caption if first else f"{caption} (continued)"
            title = f"{title}: {'; '.join(pending)}" if pending else title
            pending = []
            table, note, fits = fit_table(block)
            if self.strict and not fits and not appendix:
                rows, columns = len(table.splitlines()) - 2, len(_cells(table.splitlines()[0]))
                raise ManuscriptError(
                    f"table {self.tables} ({caption}) has {rows} rows × {columns} columns: more than "
                    f"the main text prints ({MAX_ROWS} rows, {MAX_COLUMNS} columns, {MAX_WIDTH} "
                    "characters); choose one of its tables (file.md#N) or cite it in the supplement")
            head = f"**Table {self.prefix}{self.tables}.** {title}"
            body = (f"\n{table}\n" + (f"\n*Note:* {note}\n" if note else "")
                    + (f"\n{source}" if source else ""))
            if appendix or not self.move_long or (first and fits):
                out.append(f"{head}\n{body}")
            elif first:  # the summary table, too long for the page
                rows, columns = len(table.splitlines()) - 2, len(_cells(table.splitlines()[0]))
                out.append(f"{head}. *{rows} rows × {columns} columns: printed in {pointer}.*\n")
                self.appendix.append(f"{head}\n{body}")
            else:  # a detail table after the first
                moved.append(self.tables)
                self.appendix.append(f"{head}\n{body}")
        self._seen = False
        if moved:
            first_moved, last_moved = f"{self.prefix}{moved[0]}", f"{self.prefix}{moved[-1]}"
            span = (f"Table {first_moved} — more of {caption} — is" if len(moved) == 1
                    else f"Tables {first_moved}–{last_moved} — more of {caption} — are")
            out.append(f"*{span} printed in {pointer}.*\n")
        out += [p + "\n" for p in pending]
        return "\n".join(out)

    def figure(self, path: str, caption: str, source: str = "") -> str:
        """A numbered figure that links to its full-size file, its caption under it."""
        self.figures += 1
        return (f"[![{caption}]({path})]({path})\n\n**Figure {self.prefix}{self.figures}.** {caption}\n"
                + (f"\n{source}" if source else ""))


def _author_year(keys: str, possessive: bool, inside: bool) -> str:
    """One citation's keys spelt with the author and year roles (see :func:`citations`)."""
    out = []
    for key in (k.strip() for k in keys.split(",")):
        author, year = f"{{cite:author}}`{key}`", f"{{cite:year}}`{key}`"
        if possessive:
            out.append(f"{author}'s [{year}]" if inside else f"{author}'s ({year})")
        else:
            out.append(f"{author}, {year}")
    return "; ".join(out)


def citations(text: str) -> str:
    """The citations of ``text`` that would print with doubled parentheses, spelt with
    the author and year roles (``{cite:author}``, ``{cite:year}``), which both the site
    and the PDF print without brackets.

    A citation inside parentheses of the text (counted within a paragraph; a table row or
    a heading is a paragraph of its own; code spans and link targets do not count) prints
    as "author, year" (several keys joined by "; "); a possessive textual citation
    (``{cite:t}`key`'s``) as "author's (year)", or "author's [year]" inside parentheses
    (APA's brackets within parentheses). Every other citation is left as written: the
    renderers print ``{cite:p}`` as "(author, year)" and ``{cite:t}`` as "author (year)".

    >>> citations("WEAT (seed 000: {cite:t}`sadhu2024`) and CEAT {cite:p}`guo2021`.")
    'WEAT (seed 000: {cite:author}`sadhu2024`, {cite:year}`sadhu2024`) and CEAT {cite:p}`guo2021`.'
    >>> citations("{cite:t}`kurita2019`'s score (see `f(x` and {cite:p}`a,b`)")
    "{cite:author}`kurita2019`'s ({cite:year}`kurita2019`) score (see `f(x` and {cite:author}`a`, {cite:year}`a`; {cite:author}`b`, {cite:year}`b`)"
    """
    def rewrite(line: str, depth: int) -> tuple[str, int]:
        out, pos = [], 0
        for m in _CITE_TOKENS.finditer(line):
            out.append(line[pos:m.start()])
            pos = m.end()
            if m["paren"]:
                depth = depth + 1 if m["paren"] == "(" else max(depth - 1, 0)
                out.append(m[0])
            elif m["skip"] or not (depth or m["pos"]):
                out.append(m[0])
            else:
                out.append(_author_year(m["keys"], bool(m["pos"]), inside=depth > 0))
        return "".join(out) + line[pos:], depth

    lines, depth = [], 0
    for line in text.split("\n"):
        if not line.strip():
            depth = 0  # a paragraph ends
        if line.lstrip().startswith(("|", "#")):  # a table row or a heading: on its own
            lines.append(rewrite(line, 0)[0])
        else:
            line, depth = rewrite(line, depth)
            lines.append(line)
    return "\n".join(lines)


def _slug(heading: str) -> str:
    """The anchor MyST gives a heading (``myst_heading_anchors``).

    >>> _slug("Appendix B. Long tables")
    'appendix-b-long-tables'
    """
    return re.sub(r"[\s]+", "-", re.sub(r"[^\w\s-]", "", heading.lower()).strip())


def render_section(text: str, where: str = "section", figures_prefix: str = "../figures/",
                   export_prefix: str = "export/", numbering: Numbering | None = None) -> str:
    """Replace the directives of one section's text (see the module docstring); tables
    and figures are numbered by ``numbering`` (shared by the sections of a manuscript).

    >>> render_section("Plain prose.\\n")
    'Plain prose.\\n'
    >>> render_section("<!-- table: no-such-table.md -->\\n", where="s.md")
    Traceback (most recent call last):
    ...
    polybias.results.manuscript.ManuscriptError: s.md: table paper/tables/no-such-table.md does not exist (run make reproduce)
    """
    numbering = numbering or Numbering()
    appendix = Path(where).name[:1] == "9"  # the appendix sections keep their tables
    out = []
    for line in text.splitlines(keepends=True):
        match = DIRECTIVE.match(line.strip())
        if not match:
            out.append(line)
            continue
        kind, spec = match.groups()
        label = LABEL.search(spec)
        if label:
            spec, label = spec[:label.start()], label[1]
        tables, figures_before = numbering.tables, numbering.figures
        if kind == "table":
            name, _, caption = (part.strip() for part in spec.partition("|"))
            picked = TABLE_PICK.match(name)
            if picked is None:
                raise ManuscriptError(f"{where}: table {name!r} is not file.md, file.md#N or "
                                      "file.md#N[column, ...]")
            name, block, columns = picked["file"], picked["block"], picked["columns"]
            file = paths.paper_dir() / "tables" / name
            if not file.is_file():
                raise ManuscriptError(f"{where}: table paper/tables/{name} does not exist "
                                      "(run make reproduce)")
            content = file.read_text(encoding="utf-8")
            if block:  # one table of the file: file.md#N, the N-th (from 1)
                found = [b for k, b in _blocks(content) if k == "table"]
                if not 1 <= int(block) <= len(found):
                    raise ManuscriptError(f"{where}: table {name}#{block}: paper/tables/{name} "
                                          f"holds tables 1 to {len(found)}")
                content = found[int(block) - 1]
            if picked["rows"]:  # reduced to the rows the finding reads
                content = _rows(content, picked["rows"], f"{where}: table {name}#{block}")
            if columns:  # ... and to its columns
                content = _columns(content, [c.strip() for c in columns.split(",")],
                                   f"{where}: table {name}#{block}")
            note = _note(numbering, name, where)
            try:
                out.append(numbering.table(content, caption or f"`{Path(name).stem}`", note, appendix))
            except ManuscriptError as exc:  # too long for the main text
                raise ManuscriptError(f"{where}: {exc}") from None
        elif kind == "figure":
            name, _, caption = (part.strip() for part in spec.partition("|"))
            if not (paths.figures_dir() / name).is_file():
                raise ManuscriptError(f"{where}: figure figures/{name} does not exist "
                                      "(run make reproduce)")
            parts = figure_parts(name)
            for k, part in enumerate(parts, start=1):
                of = f" (part {k} of {len(parts)})" if len(parts) > 1 else ""
                out.append(("\n" if k > 1 else "") + numbering.figure(
                    f"{figures_prefix}{part}", f"{caption or name}{of}",
                    _note(numbering, part, where)))
        elif kind == "records":
            spec, _, caption = (part.strip() for part in spec.partition("||"))
            table, default, figures = _records_table(spec, where, export_prefix)
            caption = caption or default
            stem = spec.split("|")[0].strip().replace(":", "_")
            data = f"*Data:* [{stem}.csv]({export_prefix}{stem}.csv)\n"
            out.append(numbering.table(table, caption, data, appendix))
            for k, figure in enumerate(figures, start=1):
                part = f" (part {k} of {len(figures)})" if len(figures) > 1 else ""
                out.append("\n" + numbering.figure(figure, f"{default}{part}"))
        else:
            spec, _, caption = (part.strip() for part in spec.partition("||"))
            table, default = _reported_table(spec, where)
            caption = caption or default
            out.append(numbering.table(table, caption, "", appendix))
        if label:  # what the label's item holds, for the index to the supplement
            numbering.captions[label] = _plain(caption) or kind  # every branch sets caption
        new_tables = list(range(tables + 1, numbering.tables + 1))
        new_figures = list(range(figures_before + 1, numbering.figures + 1))
        if kind == "figure":
            numbering.define(label, "Figure", new_figures, where, main=not appendix)
        else:
            numbering.define(label, "Table", new_tables[:1], where, main=not appendix)
            if new_figures:  # a records table's figures: the label's name as fig:
                numbering.define(label and "fig:" + label.split(":", 1)[1], "Figure",
                                 new_figures, where, main=not appendix)
    return "".join(out)


def _note(numbering: Numbering, file: str, where: str) -> str:
    """The *Source* note of a table or figure ``file`` in section ``where``
    (:func:`source_note`); in a text without notebook sections (the main text), the note the
    supplement's section gave the same file. Remembered in ``numbering.notes``."""
    note = source_note(file, Path(where).name)
    if not note and numbering.external is not None:
        note = numbering.external.notes.get(file, "")
    numbering.notes.setdefault(file, note)
    return note


def figure_parts(name: str, folder: Path | None = None) -> list[str]:
    """A figure's file and the further parts of it the notebook drew (``<stem>_2.png``,
    ``<stem>_3.png``, ... in ``folder``, default ``figures/``), in order.

    >>> figure_parts("no-such-figure.png")
    ['no-such-figure.png']
    """
    folder = folder or paths.figures_dir()
    stem, suffix = Path(name).stem, Path(name).suffix
    parts = [name]
    while (folder / f"{stem}_{len(parts) + 1}{suffix}").is_file():
        parts.append(f"{stem}_{len(parts) + 1}{suffix}")
    return parts


def title_block(title: str, stamp: str = "") -> str:
    """The lines under the title: the project as author, the version and ``stamp`` (e.g.
    the commit and its date)."""
    try:
        version = metadata.version("polybias")
    except metadata.PackageNotFoundError:
        version = "unreleased"
    parts = [f"*{AUTHOR}*", f"version {version}"] + ([stamp] if stamp else [])
    return f"# {title}\n\n{' · '.join(parts)}\n"


def assemble(sections: str | Path | None = None, stamp: str = "", prefix: str = "",
             external: Numbering | None = None, strict: bool = False) -> tuple[str, Numbering]:
    """A document's text from ``sections/*.md`` (name order; default ``paper/sections``):
    directives rendered, tables and figures numbered (``prefix`` before each number: "S" in
    the supplement), references resolved (to the labels of ``external`` too: the main text
    cites the supplement's), the long tables in their appendix at the end (``strict``, the
    main text: a table too long for the page is an error instead), citations that would
    double their parentheses respelt (:func:`citations`), and a title block from the first
    ``#`` heading (``stamp``: a commit and date to print in it); and its :class:`Numbering`.
    A text citing ``external`` ends with an index of what each of its sections cites there."""
    sections = Path(sections) if sections else paths.paper_dir() / "sections"
    files = sorted(sections.glob("*.md"))
    if not files:
        raise ManuscriptError(f"no section files (*.md) in {sections}")
    texts = [f.read_text(encoding="utf-8") for f in files]
    letters = re.findall(r"(?m)^## Appendix ([A-Z])\.", "\n".join(texts))
    letter = chr(ord(max(letters)) + 1) if letters else "A"
    numbering = Numbering(move_long=True, long_tables=f"Appendix {prefix}{letter}. {LONG_TABLES}",
                          prefix=prefix, external=external, strict=strict)
    numbering.labels["app:long"] = ("Appendix", [f"{prefix}{letter}"], "the manuscript")
    where = [f"{sections.name}/{f.name}" for f in files]
    parts = [render_section(text, where=w, numbering=numbering)
             for text, w in zip(texts, where, strict=True)]
    parts = [citations(numbering.resolve(part, w)) for part, w in zip(parts, where, strict=True)]
    if numbering.appendix:
        parts.append(numbering.resolve(
            f"## {numbering.long_tables}\n\nThe tables of the sections above that are longer "
            f"than {MAX_ROWS} rows or wider than the page ({MAX_COLUMNS} columns, "
            f"{MAX_WIDTH} characters), in the order of the text.\n\n"
            + "\n".join(numbering.appendix), numbering.long_tables))
    if numbering.cited:
        parts.append(supplement_index(numbering, texts, where))
    text = "\n\n".join(p.strip("\n") for p in parts) + "\n"
    title = re.search(r"^# (.+)$", text, flags=re.M)
    if title:
        text = text[:title.start()] + title_block(title[1], stamp).rstrip("\n") + text[title.end():]
    return text, numbering


def supplement_index(numbering: Numbering, texts: list[str], where: list[str]) -> str:
    """The index from the main text to the supplement: per section of the main text (its
    ``##`` heading), the supplement's tables and figures it cites, with their captions' first
    words and the supplement's section that holds them."""
    lines = ["## Index to the supplement", "",
             "Each claim of a section above rests on the supplement's tables and figures it "
             "cites; here they are, section by section, with where they stand in the supplement."]
    for text, w in zip(texts, where, strict=True):
        cited = numbering.cited.get(w)
        if not cited:
            continue
        heading = re.search(r"(?m)^## (.+)$", text)
        lines += ["", f"**{heading[1] if heading else w}**", ""]
        for label in cited:
            kind, numbers, defined = numbering.external.labels[label]
            span = numbers[0] if len(numbers) == 1 else f"{numbers[0]}–{numbers[-1]}"
            kind = kind if len(numbers) == 1 else f"{kind}s"
            caption = numbering.external.captions.get(label, "")
            caption = caption if len(caption) <= 100 else caption[:caption.rfind(" ", 0, 100)] + " …"
            lines.append(f"- {kind} {span} ({_section_title(defined)}): {caption}")
    return "\n".join(lines) + "\n"


def _section_title(where: str) -> str:
    """The ``##`` heading of the supplement's section file ``where`` (``sections/NN_x.md``)."""
    path = paths.paper_dir() / where
    try:
        match = re.search(r"(?m)^## (.+)$", path.read_text(encoding="utf-8"))
    except OSError:
        match = None
    if match is None:
        return where
    return match[1].split(". ")[0] if match[1].startswith("Appendix") else f"section {match[1].split('. ')[0]}"


def unreferenced(sections: str | Path | None = None) -> list[str]:
    """The tables and figures of the main text (the sections not numbered ``9*``) that no
    ``@tab:``/``@fig:`` reference of the manuscript names, e.g. ``["Table 4"]``."""
    return assemble(sections)[1].unreferenced()


#: The heading-free note written at the head of a generated document.
GENERATED = ("<!-- Generated by `make paper` from paper/main, paper/sections, paper/tables, "
             "paper/export, paper/reported and figures/. Do not edit. -->\n\n")


def build_manuscript(sections: str | Path | None = None, output: str | Path | None = None,
                     stamp: str = "") -> Path:
    """Write one document assembled from ``sections`` (:func:`assemble`) to ``output``
    (default: the supplement from ``paper/sections`` to ``paper/supplement.md``, numbered
    S1, S2, ... when ``sections`` is not given). Returns the output path."""
    if sections is None:
        output = Path(output) if output else paths.paper_dir() / "supplement.md"
        text, _ = assemble(paths.paper_dir() / "sections", stamp, prefix="S")
    else:
        output = Path(output) if output else paths.paper_dir() / "manuscript.md"
        text, _ = assemble(sections, stamp)
    return write_text_atomic(output, GENERATED + text)


def build_paper(folder: str | Path | None = None, stamp: str = "") -> tuple[Path, Path]:
    """Write the paper: the findings-first main text from ``paper/main`` (tables and figures
    1, 2, ...; each table short enough for the page) to ``manuscript.md`` and the supplement
    from ``paper/sections`` (S1, S2, ...; every per-study, per-language and per-model table)
    to ``supplement.md``, both in ``folder`` (default ``paper/``). The main text cites the
    supplement's tables and figures by label and ends with an index to them. Nothing is
    written when either fails. Returns both paths."""
    folder = Path(folder) if folder else paths.paper_dir()
    supplement, numbering = assemble(paths.paper_dir() / "sections", stamp, prefix="S")
    main_text, main_numbering = assemble(paths.paper_dir() / "main", stamp, external=numbering,
                                         strict=True)
    missing = main_numbering.unreferenced() + numbering.unreferenced()
    if missing:
        raise ManuscriptError(f"the text never refers to {', '.join(missing)}")
    return (write_text_atomic(folder / "manuscript.md", GENERATED + main_text),
            write_text_atomic(folder / "supplement.md", GENERATED + supplement))


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    try:
        written = build_paper(*args[:1])
    except ManuscriptError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    root = paths.project_root()
    for path in written:
        print(f"wrote {path.relative_to(root) if path.is_relative_to(root) else path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
