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
    out.append(_escape(text[pos:], text[pos - 1:pos] if pos else " "))
    return "".join(out)


def _cells(row: str) -> list[str]:
    return [c.strip() for c in row.strip().strip("|").split("|")]


def _png_size(path: Path) -> tuple[int, int] | None:
    """Width and height of a PNG file from its header, or None."""
    try:
        head = path.read_bytes()[:24]
    except OSError:
        return None
    if head[:8] != b"\x89PNG\r\n\x1a\n":
        return None
    return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")


def _image(path: str, base: Path | None) -> str:
    """A figure's image at the text width, or at a height that fits the page when it is
    tall (a figure taller than 1.3 times its width)."""
    size = _png_size(base / path) if base is not None else None
    if size and size[1] > 1.3 * size[0]:
        return f"#figure(image({_string(path)}, height: 21cm), numbering: none)\n"
    return f"#figure(image({_string(path)}, width: 100%), numbering: none)\n"


def to_typst(markdown: str, base: Path | None = None) -> str:
    """Convert the manuscript's Markdown to Typst markup.

    The first ``#`` heading is the title, centred; the paragraph under it (the project and
    version) the byline; a paragraph opening with ``**Abstract.**`` is set as the abstract;
    a ``**Table N.**`` caption stays with the table under it; a table of more than eight
    columns is set at 7 pt, others at 8 pt; the first ``Appendix`` heading starts a new
    page, after the references (else :func:`build` prints them at the end). ``base``: the folder the image paths are relative to.

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
        elif re.match(r"^\*\*(Table|Figure) \d+\.\*\*", text):
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
            out.append(f"#align(center)[#text(size: 17pt, weight: \"bold\")[{_inline(heading[2])}]]\n")
        elif heading:
            flush()
            if heading[2].startswith("Appendix") and not state["appendix"]:
                state["appendix"] = True
                out.append(BIBLIOGRAPHY + "#pagebreak()\n")
            out.append(f"{'=' * len(heading[1])} {_inline(heading[2])}\n")
        elif image:
            flush()
            out.append(_image(image[2], base))
        elif line.lstrip().startswith("|"):
            flush()
            rows = []
            while i < len(lines) and lines[i].lstrip().startswith("|"):
                rows.append(lines[i])
                i += 1
            header, body = _cells(rows[0]), [_cells(r) for r in rows[2:]]
            cells = [f"[{_inline(c)}]" for r in body for c in (r + [""] * len(header))[:len(header)]]
            head = ", ".join(f"[{_inline(c)}]" for c in header)
            table = f"#table(columns: {len(header)}, table.header({head}), {', '.join(cells)})"
            out.append((f"#text(size: 7pt)[{table}]" if len(header) > 8 else table) + "\n")
            continue
        else:
            para.append(line.strip())
        i += 1
    flush()
    return "\n".join(out)


#: The references, author-year as on the site (APA); printed before the appendices
BIBLIOGRAPHY = '#bibliography("references-print.bib", title: "References", style: "apa")\n'


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


def build(src: Path, out: Path) -> Path:
    """Compile ``src/paper/manuscript.md`` of a staged tree (``stage.py``) into ``out``."""
    import typst

    md = src / "paper" / "manuscript.md"
    fonts = ", ".join(f'"{f}"' for f in FONTS)
    typ = src / "paper" / "manuscript.typ"
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
                   "#show raw: set text(size: 1.25em)  // Typst sets raw at 0.8em: the text's size\n\n"
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
