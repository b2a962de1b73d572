"""Assemble the manuscript from its section files, generated tables and figures.

``paper/sections/*.md`` hold the prose, one file per notebook section, read in name
order. No number is typed by hand: a section pulls its numbers in with directives on a
line of their own::

    <!-- table: weat_w2v-gnews.md -->            the file paper/tables/weat_w2v-gnews.md
    <!-- figure: weat_w2v-gnews.png | Caption --> figures/weat_w2v-gnews.png as an image
    <!-- reported: caliskan2017_weat -->          paper/reported/caliskan2017_weat.csv as a table
    <!-- reported: malik2022_table3 | model=glove-hi-300 -->   ... filtered on columns
    <!-- records: kurita -->                      the cross-model table of a measure built
                                                  from the run records (paper/export/kurita.csv)
    <!-- records: ceat | test=C6 -->              ... filtered on columns (then no figure)

A table or figure of a section ``NN_*.md`` is followed by a one-line *Source* note
linking the executed notebook that wrote it (``paper/executed/NN_*.ipynb``, the run whose
label the file name holds) and the metric cards of the measures it reports
(:data:`CARDS`, by the file name's first word), where they can be told.

``records`` tables are the ones ``polybias export`` writes from the records of the sweep
(``make reproduce`` runs it into ``paper/export/``, :func:`polybias.results.table.export`): one
row per study, test and subset, one column per model and language, followed by the
measure's comparison figure when the table is not filtered. A sweep over other models
therefore changes these tables without any section being edited.

:func:`build_manuscript` writes ``paper/manuscript.md`` (atomically) with every
directive replaced; a directive naming a missing file is an error naming the section and
the file, and nothing is written. ``python -m polybias.results.manuscript`` (``make paper``) runs it.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import pandas as pd

from polybias import paths
from polybias.results.records import write_text_atomic
from polybias.results.report import load_reported, markdown_table

DIRECTIVE = re.compile(r"^<!--\s*(table|figure|reported|records):\s*(.*?)\s*-->\s*$")


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


def source_note(file: str, section: str) -> str:
    """The *Source* line under a table or figure ``file`` of ``section`` (``NN_*.md``), or ''.

    >>> source_note("weat_w2v-gnews.md", "01_weat.md")
    '*Source:* notebook [01_weat_w2v-gnews](executed/01_weat_w2v-gnews.ipynb); card [weat](../docs/measures/weat.md)\\n'
    >>> source_note("weat_w2v-gnews.md", "appendix.md")  # not a numbered section
    ''
    """
    number = section.split("_", 1)[0]
    if not number.isdigit():
        return ""
    stem = _tokens(Path(file).stem)
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
    cards = [c for c in CARDS.get(stem[0].split("-")[0] if stem else "", ())
             if (paths.project_root() / "docs" / "measures" / f"{c}.md").is_file()]
    if cards:
        parts.append("card " + ", ".join(f"[{c}](../docs/measures/{c}.md)" for c in cards))
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


def _reported_table(spec: str, where: str) -> str:
    name, kwargs = _filters(spec, where, "reported")
    if not (paths.paper_dir() / "reported" / f"{name}.csv").is_file():
        raise ManuscriptError(f"{where}: no reported table paper/reported/{name}.csv")
    frame = load_reported(name, **kwargs)
    if frame.empty:
        raise ManuscriptError(f"{where}: reported table {name} has no rows for {kwargs}")
    keep = [c for c in frame.columns if c not in ("study",) and frame[c].notna().any()]
    return markdown_table(frame[keep].fillna(""), digits=4)


def _records_table(spec: str, where: str, export_prefix: str) -> str:
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
    text = markdown_table(frame.reset_index(drop=True)) + "\n"
    figure = paths.paper_dir() / "export" / f"{stem}.png"
    if not kwargs and figure.is_file():
        text += f"\n![{name} across models and languages, from the run records]({export_prefix}{stem}.png)\n"
    return text


def render_section(text: str, where: str = "section", figures_prefix: str = "../figures/",
                   export_prefix: str = "export/") -> str:
    """Replace the directives of one section's text (see the module docstring).

    >>> render_section("Plain prose.\\n")
    'Plain prose.\\n'
    >>> render_section("<!-- table: no-such-table.md -->\\n", where="s.md")
    Traceback (most recent call last):
    ...
    polybias.results.manuscript.ManuscriptError: s.md: table paper/tables/no-such-table.md does not exist (run make reproduce)
    """
    out = []
    for line in text.splitlines(keepends=True):
        match = DIRECTIVE.match(line.strip())
        if not match:
            out.append(line)
            continue
        kind, spec = match.groups()
        if kind == "table":
            file = paths.paper_dir() / "tables" / spec
            if not file.is_file():
                raise ManuscriptError(f"{where}: table paper/tables/{spec} does not exist "
                                      "(run make reproduce)")
            out.append(file.read_text(encoding="utf-8").rstrip("\n") + "\n")
            if note := source_note(spec, Path(where).name):
                out.append("\n" + note)
        elif kind == "figure":
            name, _, caption = (part.strip() for part in spec.partition("|"))
            if not (paths.figures_dir() / name).is_file():
                raise ManuscriptError(f"{where}: figure figures/{name} does not exist "
                                      "(run make reproduce)")
            out.append(f"![{caption or name}]({figures_prefix}{name})\n")
            if note := source_note(name, Path(where).name):
                out.append("\n" + note)
        elif kind == "records":
            out.append(_records_table(spec, where, export_prefix))
        else:
            out.append(_reported_table(spec, where) + "\n")
    return "".join(out)


def build_manuscript(sections: str | Path | None = None, output: str | Path | None = None) -> Path:
    """Concatenate ``sections/*.md`` (name order) with directives rendered; write ``output``.

    Defaults: ``paper/sections`` and ``paper/manuscript.md``. Returns the output path.
    """
    sections = Path(sections) if sections else paths.paper_dir() / "sections"
    output = Path(output) if output else paths.paper_dir() / "manuscript.md"
    files = sorted(sections.glob("*.md"))
    if not files:
        raise ManuscriptError(f"no section files (*.md) in {sections}")
    parts = [render_section(f.read_text(encoding="utf-8"), where=f"sections/{f.name}")
             for f in files]
    head = ("<!-- Generated by `make paper` from paper/sections, paper/tables, "
            "paper/export, paper/reported and figures/. Do not edit. -->\n\n")
    return write_text_atomic(output, head + "\n\n".join(p.strip("\n") for p in parts) + "\n")


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    try:
        path = build_manuscript(*args[:2])
    except ManuscriptError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    root = paths.project_root()
    print(f"wrote {path.relative_to(root) if path.is_relative_to(root) else path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
