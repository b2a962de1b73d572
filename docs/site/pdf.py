"""The manuscript as a PDF (``make pdf`` -> ``build/paper.pdf``), through Typst.

The manuscript staged for the site (``docs/site/stage.py``: rebuilt from the committed
sections, with the figures and ``paper/references.bib`` beside it) is converted to
Typst by :func:`to_typst`, a converter for the Markdown the manuscript uses (headings,
the sections carry their own numbers; paragraphs with inline code, emphasis and links; pipe tables; images; MyST
citations ``{cite:p}`key``` and ``{cite:t}`key```, resolved by Typst's ``#bibliography``
reading ``paper/references.bib``). The ``typst`` Python package compiles it with the
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
INLINE = re.compile(r"(?P<cite>\{cite:(?P<form>[pt])\}`(?P<keys>[^`]+)`)"
                    r"|(?P<code>`[^`]+`)"
                    r"|(?P<link>\[(?P<ltext>[^\]]+)\]\((?P<url>[^)]+)\))"
                    r"|(?P<bold>\*\*(?P<btext>.+?)\*\*)"
                    r"|(?P<em>(?<![\w*])\*(?P<etext>[^*\s][^*]*?)\*(?![\w*]))")
SPECIAL = re.compile(r"([\\#$*_@<>\[\]`~=/+-])")


def _escape(text: str) -> str:
    return SPECIAL.sub(r"\\\1", text)


def _string(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _inline(text: str) -> str:
    out, pos = [], 0
    for m in INLINE.finditer(text):
        out.append(_escape(text[pos:m.start()]))
        pos = m.end()
        if m["cite"]:
            keys = [k.strip() for k in m["keys"].split(",")]
            form = ', form: "prose"' if m["form"] == "t" else ""
            out.append("".join(f"#cite(label({_string(k)}){form})" for k in keys))
        elif m["code"]:
            out.append(f"#raw({_string(m['code'][1:-1])})")
        elif m["link"]:  # links lead to the site's pages; in print, the text
            out.append(_inline(m["ltext"]))
        elif m["bold"]:
            out.append(f"#strong[{_inline(m['btext'])}]")
        else:
            out.append(f"#emph[{_inline(m['etext'])}]")
    out.append(_escape(text[pos:]))
    return "".join(out)


def _cells(row: str) -> list[str]:
    return [c.strip() for c in row.strip().strip("|").split("|")]


def to_typst(markdown: str) -> str:
    """Convert the manuscript's Markdown to Typst markup.

    >>> print(to_typst("## A *b*\\n\\nSee {cite:p}`x2020`.\\n\\n| a | b |\\n|---|---|\\n| 1 | `2` |\\n"))
    == A #emph[b]
    <BLANKLINE>
    See #cite(label("x2020")).
    <BLANKLINE>
    #table(columns: 2, table.header([a], [b]), [1], [#raw("2")])
    <BLANKLINE>
    """
    markdown = re.sub(r"<!--.*?-->", "", markdown, flags=re.S)
    out, para, lines, i = [], [], markdown.splitlines(), 0

    def flush():
        if para:
            out.append(_inline(" ".join(para)) + "\n")
            para.clear()

    while i < len(lines):
        line = lines[i].rstrip()
        heading = re.match(r"^(#{1,6})\s+(.*)$", line)
        image = re.match(r"^!\[(.*)\]\(([^)]+)\)$", line.strip())
        if not line.strip():
            flush()
        elif heading:
            flush()
            out.append(f"{'=' * len(heading[1])} {_inline(heading[2])}\n")
        elif image:
            flush()
            out.append(f"#figure(image({_string(image[2])}, width: 100%), "
                       f"caption: [{_inline(image[1])}])\n")
        elif line.lstrip().startswith("|"):
            flush()
            rows = []
            while i < len(lines) and lines[i].lstrip().startswith("|"):
                rows.append(lines[i])
                i += 1
            header, body = _cells(rows[0]), [_cells(r) for r in rows[2:]]
            cells = [f"[{_inline(c)}]" for r in body for c in (r + [""] * len(header))[:len(header)]]
            head = ", ".join(f"[{_inline(c)}]" for c in header)
            out.append(f"#table(columns: {len(header)}, table.header({head}), {', '.join(cells)})\n")
            continue
        else:
            para.append(line.strip())
        i += 1
    flush()
    return "\n".join(out)


def build(src: Path, out: Path) -> Path:
    """Compile ``src/paper/manuscript.md`` of a staged tree (``stage.py``) into ``out``."""
    import typst

    md = src / "paper" / "manuscript.md"
    fonts = ", ".join(f'"{f}"' for f in FONTS)
    typ = src / "paper" / "manuscript.typ"
    typ.write_text(f"#set text(font: ({fonts}), size: 10pt)\n"
                   "#set page(paper: \"a4\", margin: 2cm, numbering: \"1\")\n"
                   "#set heading(numbering: none)  // the sections carry their notebook numbers\n"
                   "#set table(inset: 3pt, stroke: 0.4pt)\n"
                   "#show table: set text(size: 6.5pt)\n"
                   "#show raw: set text(size: 0.9em)\n\n"
                   + to_typst(md.read_text(encoding="utf-8"))
                   + "\n#bibliography(\"references.bib\", title: \"References\")\n",
                   encoding="utf-8")
    out.parent.mkdir(parents=True, exist_ok=True)
    typst.compile(str(typ), output=str(out), root=str(src),
                  font_paths=[d for d in FONT_DIRS if Path(d).is_dir()])
    return out


if __name__ == "__main__":
    staged = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "build" / "site-src"
    target = Path(sys.argv[2]) if len(sys.argv) > 2 else ROOT / "build" / "paper.pdf"
    print(f"wrote {build(staged, target)}")
