"""The manuscript as a PDF (``make pdf`` -> ``build/paper.pdf``), through Typst.

The manuscript staged for the site (``docs/site/stage.py``: rebuilt from the committed
sections, with the figures and ``paper/references.bib`` beside it) is converted to
Typst by :func:`to_typst`, a converter for the Markdown the manuscript uses (headings,
the sections carry their own numbers; paragraphs with inline code, emphasis and links; pipe tables; images; MyST
citations ``{cite:p}`key```, ``{cite:t}`key```, ``{cite:author}`key``` and
``{cite:year}`key```, resolved by Typst's ``#bibliography`` reading
``paper/references.bib``, author-year in parentheses as on the site). The ``typst`` Python package compiles it with the
Noto fonts for Bangla, Devanagari, Greek, Persian and CJK text.

Usage, in the docs environment (``typst``): ``python docs/site/pdf.py [STAGED] [OUT.pdf]``
(defaults ``build/site-src``, ``build/paper.pdf``).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FONT_DIRS = ["/usr/share/fonts/truetype/noto", "/usr/share/fonts/opentype/noto"]
FONTS = ["Noto Serif", "Noto Sans Bengali", "Noto Sans Devanagari", "Noto Sans Arabic",
         "Noto Serif CJK SC", "Noto Sans CJK SC", "DejaVu Sans"]
INLINE = re.compile(r"(?P<cite>\{cite:(?P<form>p|t|author|year)\}`(?P<keys>[^`]+)`)"
                    r"|(?P<code>`[^`]+`)"
                    r"|(?P<link>\[(?P<ltext>[^\]]+)\]\((?P<url>[^)]+)\))"
                    r"|(?P<bold>\*\*(?P<btext>.+?)\*\*)"
                    r"|(?P<em>(?<![\w*])\*(?P<etext>[^*\s][^*]*?)\*(?![\w*]))")
SPECIAL = re.compile(r"([\\#$*_@<>\[\]`~=/+-])")


#: Typst's citation form of each MyST citation role: ``p`` "(Sadhu et al., 2024)", ``t``
#: "Sadhu et al. (2024)", ``author`` "Sadhu et al.", ``year`` "2024"
CITE_FORMS = {"p": "", "t": ', form: "prose"', "author": ', form: "author"', "year": ', form: "year"'}


def _escape(text: str, before: str = " ") -> str:
    """Escape Typst's markup characters; an apostrophe after a letter, a closing bracket or
    a citation (``before``: the character in front of ``text``) is printed as one (’), not
    left to Typst's smart quotes, which open a quote after ``]`` or ``)``."""
    text = re.sub(r"(?<=[^\s(\[{])'", "’", (before[-1:] or " ") + text)[1:]
    return SPECIAL.sub(r"\\\1", text)


def _string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _inline(text: str) -> str:
    out, pos = [], 0
    for m in INLINE.finditer(text):
        out.append(_escape(text[pos:m.start()], text[pos - 1:pos] if pos else " "))
        pos = m.end()
        if m["cite"]:
            keys = [k.strip() for k in m["keys"].split(",")]
            form = CITE_FORMS[m["form"]]
            out.append("".join(f"#cite(label({_string(k)}){form})" for k in keys))
        elif m["code"]:
            out.append(f"#raw({_string(m['code'][1:-1])})")
        elif m["link"]:  # links lead to the site's pages; in print, the text
            out.append(_inline(m["ltext"]))
        elif m["bold"]:
            out.append(f"#strong[{_inline(m['btext'])}]")
        else:
            out.append(f"#emph[{_inline(m['etext'])}]")
    out.append(_escape(text[pos:], text[pos - 1:pos] if pos else " "))
    return "".join(out)


def _cells(row: str) -> list[str]:
    return [c.strip() for c in row.strip().strip("|").split("|")]


#: the widest and tallest a figure prints, in cm: the text block of the A4 page with 2 cm
#: margins, less room for a caption under a tall figure (``polybias.results.plots``
#: draws its figures for this size: ``PRINT_WIDTH_IN``, ``PRINT_HEIGHT_IN``)
FIGURE_WIDTH_CM, FIGURE_HEIGHT_CM = 17.0, 22.0
#: the resolution a PNG without a pHYs chunk is taken to have (the project's figures: 120)
DEFAULT_DPI = 120.0


def png_info(path: Path) -> dict | None:
    """A PNG's ``width`` and ``height`` in pixels, its ``dpi`` (pHYs; else
    :data:`DEFAULT_DPI`) and the smallest font its figure used, in points, where the
    project's ``png_bytes`` recorded it (tEXt ``Smallest font``; else None); None if the
    file is not a PNG."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        return None
    info = {"width": int.from_bytes(data[16:20], "big"), "height": int.from_bytes(data[20:24], "big"),
            "dpi": DEFAULT_DPI, "font": None}
    pos = 8
    while pos + 8 <= len(data):
        length, kind = int.from_bytes(data[pos:pos + 4], "big"), data[pos + 4:pos + 8]
        body = data[pos + 8:pos + 8 + length]
        if kind == b"pHYs" and body[8:9] == b"\x01":  # pixels per metre
            info["dpi"] = int.from_bytes(body[:4], "big") * 0.0254
        elif kind == b"tEXt" and body.startswith(b"Smallest font\x00") and body[14:]:
            info["font"] = float(body[14:].decode("latin-1"))
        elif kind == b"IDAT":
            break
        pos += 12 + length
    return info


def placement(info: dict) -> tuple[float, float]:
    """The width a figure prints at (cm) and its scale: its own size (pixels over dpi),
    scaled down to fit :data:`FIGURE_WIDTH_CM` × :data:`FIGURE_HEIGHT_CM`, never up (a
    figure is drawn for its size, its text too).

    >>> placement({"width": 792, "height": 480, "dpi": 120.0})  # 6.6 in wide: its size
    (16.764, 1.0)
    >>> placement({"width": 1584, "height": 480, "dpi": 120.0})  # twice that: half size
    (17.0, 0.507)
    """
    width = info["width"] / info["dpi"] * 2.54
    height = info["height"] / info["dpi"] * 2.54
    scale = min(1.0, FIGURE_WIDTH_CM / width, FIGURE_HEIGHT_CM / height)
    return round(width * scale, 3), round(scale, 4)


#: the tallest a table with its notes may be to be kept whole on one page (cm; a third of
#: the A4 text block): a taller one breaks across pages, its header repeated, so that a
#: table that does not fit where it falls leaves at most this much of a page empty
KEEP_WHOLE_CM = 8.5
#: Typst's function that keeps a table with its notes whole when it is short
#: (:data:`KEEP_WHOLE_CM`, measured at the text width :data:`FIGURE_WIDTH_CM`)
KEEP_WHOLE = (f"#let keep-whole(body) = context block(\n"
              f"  breakable: measure(body, width: {FIGURE_WIDTH_CM}cm).height > {KEEP_WHOLE_CM}cm, body)\n")


def _notes(lines: list[str], i: int, pattern: str) -> tuple[int, list[str]]:
    """The paragraphs from line ``i`` on that open with ``pattern`` (a figure's caption and
    source line, a table's note and source line); returns the line after them and the
    paragraphs (each joined into one line). A second ``**Figure`` caption ends them."""
    notes = []
    while True:
        j = i
        while j < len(lines) and not lines[j].strip():
            j += 1
        if j >= len(lines) or not re.match(pattern, lines[j].strip()):
            return i, notes
        if notes and lines[j].strip().startswith("**Figure"):
            return i, notes  # the next figure's caption
        para = []
        while j < len(lines) and lines[j].strip():
            para.append(lines[j].strip())
            j += 1
        notes.append(" ".join(para))
        i = j


def _image(path: str, base: Path | None, notes: list[str] = ()) -> str:
    """A figure: its image at its own size, or scaled down to fit the page
    (:func:`placement`), with ``notes`` (its caption and source line, Typst markup) under
    it, set as one float at the top or bottom of a page, so that a figure does not leave
    the rest of a page empty."""
    info = png_info(base / path) if base is not None else None
    width = f"{placement(info)[0]}cm" if info is not None else "100%"
    body = "".join(f"\n#par[{n}]" for n in notes)
    return (f"#figure(placement: auto, numbering: none)[#image({_string(path)}, width: {width})\n"
            f"#set align(left)\n#set text(size: 9pt){body}]\n")


def _breakable(cell: str) -> str:
    """A table cell's text with a zero-width space after each ``/`` and ``_`` between word
    characters (outside code spans and roles), so that a path or an identifier wraps inside
    its column instead of running off the page.

    >>> _breakable("record crows/05_crows_pairs") == "record crows/\u200b05_\u200bcrows_\u200bpairs"
    True
    >>> _breakable("`a_b` and {cite:t}`x_y`")
    '`a_b` and {cite:t}`x_y`'
    """
    parts = re.split(r"((?:\{[\w:-]+\})?`[^`]*`)", cell)
    return "".join(p if k % 2 else re.sub(r"(?<=\w)([/_])(?=\w)", "\\1\u200b", p)
                   for k, p in enumerate(parts))


#: The mark of a paragraph that is a list item (``- text`` in the Markdown)
ITEM = "\x00item "


def to_typst(markdown: str, base: Path | None = None) -> str:
    """Convert the manuscript's Markdown to Typst markup.

    The first ``#`` heading is the title, centred; the paragraph under it (the project and
    version) the byline; a paragraph opening with ``**Abstract.**`` is set as the abstract;
    a ``**Table N.**`` caption stays with the table under it; a table with its notes is
    kept whole on a page when it is at most :data:`KEEP_WHOLE_CM` tall, else it breaks
    across pages with its header repeated (figures float: no page is left part empty); a
    table of more than eight columns is set at 7 pt, others at 8 pt; a line opening with
    ``- `` is a list item (its paragraph continues on the lines under it); the first ``Appendix`` heading starts a new
    page, after the references (else :func:`build` prints them at the end). ``base``: the folder the image paths are relative to.

    >>> print(to_typst("## A *b*\\n\\nSee {cite:p}`x2020` ({cite:author}`y`, {cite:year}`y`).\\n\\n| a | b |\\n|---|---|\\n| 1 | `2` |\\n"))
    == A #emph[b]
    <BLANKLINE>
    See #cite(label("x2020")) (#cite(label("y"), form: "author"), #cite(label("y"), form: "year")).
    <BLANKLINE>
    #table(columns: 2, table.header([a], [b]), [1], [#raw("2")])
    <BLANKLINE>
    """
    markdown = re.sub(r"<!--.*?-->", "", markdown, flags=re.S)
    out, para, lines, i = [], [], markdown.splitlines(), 0
    state = {"title": False, "byline": False, "appendix": False}

    def flush():
        if not para:
            return
        text = " ".join(para)
        para.clear()
        if state["title"] and not state["byline"]:
            state["byline"] = True
            out.append(f"#align(center)[#text(size: 11pt)[{_inline(text)}]]\n#v(0.6em)\n")
        elif text.startswith("**Abstract.**"):
            body = _inline(text[len("**Abstract.**"):].strip())
            out.append("#block(inset: (x: 1.2cm, y: 0.4em))[#set text(size: 9.5pt)\n"
                       f"#strong[Abstract.] {body}]\n")
        elif text.startswith(ITEM):  # a list item
            out.append(f"- {_inline(text[len(ITEM):].strip())}\n")
        elif re.match(r"^\*\*(Table|Figure) S?\d+\.\*\*", text):
            out.append(f"#block(sticky: true)[#set text(size: 9pt)\n{_inline(text)}]\n")
        else:
            out.append(_inline(text) + "\n")

    while i < len(lines):
        line = lines[i].rstrip()
        heading = re.match(r"^(#{1,6})\s+(.*)$", line)
        image = (re.match(r"^\[!\[(.*)\]\(([^)]+)\)\]\(([^)]+)\)$", line.strip())
                 or re.match(r"^!\[(.*)\]\(([^)]+)\)$", line.strip()))
        if not line.strip():
            flush()
        elif heading and len(heading[1]) == 1 and not state["title"]:
            flush()
            state["title"] = True
            out.append(f"#align(center)[#par(justify: false)[#text(size: 17pt, weight: \"bold\", hyphenate: false)[{_inline(heading[2])}]]]\n")
        elif heading:
            flush()
            if heading[2].startswith("Appendix") and not state["appendix"]:
                state["appendix"] = True
                out.append(BIBLIOGRAPHY + "#pagebreak()\n")
            out.append(f"{'=' * len(heading[1])} {_inline(heading[2])}\n")
        elif image:
            flush()
            i, notes = _notes(lines, i + 1, r"^\*\*Figure S?\d+\.\*\*|^\*Source:\*")
            out.append(_image(image[2], base, [_inline(n) for n in notes]))
            continue
        elif line.lstrip().startswith("|"):
            flush()
            rows = []
            while i < len(lines) and lines[i].lstrip().startswith("|"):
                rows.append(lines[i])
                i += 1
            header, body = _cells(rows[0]), [_cells(r) for r in rows[2:]]
            cells = [f"[{_inline(_breakable(c))}]" for r in body for c in (r + [""] * len(header))[:len(header)]]
            head = ", ".join(f"[{_inline(_breakable(c))}]" for c in header)
            table = f"#table(columns: {len(header)}, table.header({head}), {', '.join(cells)})"
            table = f"#text(size: 7pt)[{table}]" if len(header) > 8 else table
            i, notes = _notes(lines, i, r"^\*(Note|Source|Data):\*")
            if notes:  # a short table stays on one page with its notes
                body = "".join(f"\n#par[{_inline(n)}]" for n in notes)
                out.append(f"#keep-whole[{table}\n#set text(size: 9pt){body}]\n")
            else:
                out.append(table + "\n")
            continue
        elif re.match(r"^[-*] ", line):  # a list item: a paragraph of its own
            flush()
            para.append(ITEM + line[2:].strip())
        else:
            para.append(line.strip())
        i += 1
    flush()
    return "\n".join(out)


#: The references, author-year as on the site (APA); printed before the appendices
BIBLIOGRAPHY = ('#place.flush()  // the figures of the text before the references\n'
                '#bibliography("references-print.bib", title: "References", style: "apa")\n')


def print_bibliography(bib: str) -> str:
    """``paper/references.bib`` for print: comments dropped and every run of white space
    inside an entry made one space (the aligned fields' padding and line breaks would
    otherwise print as double spaces).

    >>> print_bibliography("% note\\n@misc{k,\\n  title   = {A  b},\\n}\\n")
    '@misc{k, title = {A b}, }\\n'
    """
    bib = "\n".join(line for line in bib.splitlines() if not line.lstrip().startswith("%"))
    entries = [" ".join(e.split()) for e in re.split(r"\n(?=@)", "\n" + bib) if e.strip()]
    return "\n".join(entries) + "\n"


def build(src: Path, out: Path, document: str = "manuscript") -> Path:
    """Compile ``src/paper/<document>.md`` of a staged tree (``stage.py``; the main text
    ``manuscript`` or the ``supplement``) into ``out``."""
    import typst

    md = src / "paper" / f"{document}.md"
    fonts = ", ".join(f'"{f}"' for f in FONTS)
    typ = src / "paper" / f"{document}.typ"
    (src / "paper" / "references-print.bib").write_text(
        print_bibliography((src / "paper" / "references.bib").read_text(encoding="utf-8")),
        encoding="utf-8")
    typ.write_text(f"#set text(font: ({fonts}), size: 10pt)\n"
                   "#set page(paper: \"a4\", margin: 2cm, numbering: \"1\")\n"
                   "#set par(justify: true)\n"
                   "#set heading(numbering: none)  // the sections carry their notebook numbers\n"
                   "#set table(inset: 3pt, stroke: 0.4pt)\n"
                   "#show table: set text(size: 8pt)\n"
                   "#show table: set par(justify: false)\n"
                   "#show raw: set text(size: 1.25em)  // Typst sets raw at 0.8em: the text's size\n"
                   "#show bibliography: set text(size: 9pt)\n"
                   + KEEP_WHOLE + "\n"
                   + (body if "#bibliography(" in (body := to_typst(md.read_text(encoding="utf-8"),
                                                                   base=md.parent))
                      else body + "\n" + BIBLIOGRAPHY),
                   encoding="utf-8")
    out.parent.mkdir(parents=True, exist_ok=True)
    typst.compile(str(typ), output=str(out), root=str(src),
                  font_paths=[d for d in FONT_DIRS if Path(d).is_dir()])
    return out


if __name__ == "__main__":
    staged = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "build" / "site-src"
    target = Path(sys.argv[2]) if len(sys.argv) > 2 else ROOT / "build" / "paper.pdf"
    print(f"wrote {build(staged, target)}")
    supplement = target.with_name(f"{target.stem}-supplement{target.suffix}")
    print(f"wrote {build(staged, supplement, 'supplement')}")
