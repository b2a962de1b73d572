"""The PDF as a reader meets it (``make pdf``, then ``make site-test``).

Reads ``build/paper.pdf`` (the main text) and ``build/paper-supplement.pdf`` page by page
(pypdf, in the docs environment): the first page of each carries the title block (title,
the project as author, version, commit and date), the main text's the abstract; every
table and figure of each staged document is numbered and captioned in its PDF (Table 1..N
and Figure 1..M in the main text, S1.. in the supplement, each once, in order); the main
text (its index to the supplement and references included) is at most
:data:`MAIN_PAGES` pages, and its text is at least :data:`MIN_PT` points; so is the text
inside every figure, the supplement's too: the smallest font a figure was drawn with (recorded in its PNG) times
the scale it prints at (``docs/site/pdf.py``: its own size, scaled down to the text block). The counts go to
``build/screenshots/pdf.md``. Skipped unless the PDF is built.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PDF = ROOT / "build" / "paper.pdf"
STAGED = ROOT / "build" / "site-src" / "paper" / "manuscript.md"
#: each document: its PDF, its staged Markdown, and the prefix of its numbers
DOCUMENTS = {"main": (PDF, STAGED, ""),
             "supplement": (ROOT / "build" / "paper-supplement.pdf", STAGED.with_name("supplement.md"), "S")}
SHOTS = ROOT / "build" / "screenshots"
#: the most pages the main text (with its index and references) may take: a sitting's reading
MAIN_PAGES = 25
#: the smallest text in the main text, in points (tables are set at 8 pt)
MIN_PT = 7.0
#: how to provide Typst, which the PDF tests render with
TYPST = ("needs typst, which the site's environment holds: make pdf (docs/requirements-site.txt), "
         "or .venv/bin/pip install typst")

pypdf = pytest.importorskip("pypdf", reason="needs pypdf, which the site's environment holds: make pdf "
                            "(docs/requirements-site.txt), or .venv/bin/pip install pypdf==7.1.1")
pytestmark = pytest.mark.skipif(not (PDF.is_file() and STAGED.is_file()),
                                reason="build/paper.pdf not built (make pdf)")


@pytest.fixture(scope="module")
def pages() -> list[str]:
    return [page.extract_text() or "" for page in pypdf.PdfReader(str(PDF)).pages]


@pytest.fixture(scope="module", params=list(DOCUMENTS))
def document(request) -> tuple[str, Path, Path, str, list[str]]:
    """One document: name, PDF, staged Markdown, number prefix, and its pages' text."""
    pdf, staged, prefix = DOCUMENTS[request.param]
    if not pdf.is_file():
        pytest.skip(f"{pdf.name} not built (make pdf)")
    return request.param, pdf, staged, prefix, [p.extract_text() or "" for p in pypdf.PdfReader(str(pdf)).pages]


def _flat(text: str) -> str:
    return " ".join(text.replace("\u00ad\n", "").replace("-\n", "-").split())


def main_pages(pages: list[str]) -> int:
    """The number of pages before the first appendix."""
    return next((i for i, text in enumerate(pages) if re.search(r"^Appendix A\.", text, re.M)),
                len(pages))


def test_the_first_page_has_a_title_block_and_an_abstract(pages):
    first = _flat(pages[0])
    title = re.search(r"^# (.+)$", STAGED.read_text(encoding="utf-8"), re.M)[1]
    assert _flat(title)[:40] in first.replace("­", ""), first[:200]
    assert "The polybias project" in first and re.search(r"version \S+", first)
    assert re.search(r"commit [0-9a-f]{7,}, \d{4}-\d{2}-\d{2}", first), "no commit and date"
    assert re.search(r"Abstract\. \w+", first)


def test_every_table_and_figure_is_numbered_and_captioned(document):
    name, _, staged_path, prefix, pages = document
    text = "\n".join(pages)
    staged = staged_path.read_text(encoding="utf-8")
    p = re.escape(prefix)
    # a long table's caption is in the text (with a pointer) and again in the long tables
    tables = {int(n) for n in re.findall(rf"^\*\*Table {p}(\d+)\.\*\*", staged, re.M)}
    figure_captions = re.findall(rf"^\*\*Figure {p}(\d+)\.\*\*", staged, re.M)
    n_tables, n_figures = len(tables), len(figure_captions)
    n_pipe_tables = len(re.findall(r"^\|(?:---\|)+$", staged, re.M))
    images = len(re.findall(r"^\[!\[", staged, re.M))
    assert n_tables and n_figures and tables == set(range(1, n_tables + 1))
    assert n_pipe_tables == n_tables, f"{name}: a table has no caption"
    assert images == n_figures, f"{name}: a figure has no caption"
    captions = [int(n) for n in re.findall(rf"(?m)^Table {p}(\d+)\. ", text)]
    figures = [int(n) for n in re.findall(rf"(?m)^Figure {p}(\d+)\. ", text)]
    assert sorted(set(captions)) == list(range(1, n_tables + 1)), f"{name}: tables missing in the PDF"
    assert sorted(set(figures)) == list(range(1, n_figures + 1)), f"{name}: figures missing in the PDF"
    if name == "main":  # the main text: a few tables and figures, each one the prose reads
        assert n_tables <= 12 and n_figures <= 10, (n_tables, n_figures)


def test_the_main_text_is_short_and_its_text_readable(pages):
    main = len(pages)
    assert "Index to the supplement" in "\n".join(pages), "no index to the supplement"
    sizes = []
    reader = pypdf.PdfReader(str(PDF))

    def visit(text, cm, tm, font, size):
        if text.strip():
            sizes.append(abs(size * tm[0] * cm[0]) if tm[0] and cm[0] else size)

    for page in reader.pages:
        page.extract_text(visitor_text=visit)
    smallest = min(sizes)
    SHOTS.mkdir(parents=True, exist_ok=True)
    (SHOTS / "pdf.md").write_text(f"main text pages (index and references included): {main}\n"
                                  f"smallest main-text font: {smallest:.1f} pt\n", encoding="utf-8")
    assert main <= MAIN_PAGES, f"the main text takes {main} pages"
    assert smallest >= MIN_PT - 0.05, f"main-text text at {smallest:.1f} pt"
    assert "References" in "\n".join(pages)


#: A year in a citation, and a citation that doubles its parentheses: "(seed 000: Sadhu
#: et al. (2024))"
YEAR = r"(?:19|20)\d\d[a-z]?"
DOUBLED = re.compile(rf"\([^()]*\({YEAR}\)\)")


def test_citations_are_author_year_in_parentheses_and_never_double_them(document):
    """One citation style with the site (``tests/site/test_site.py``): "(Sadhu et al.,
    2024)", "Sadhu et al. (2024)", a citation inside parentheses as "(seed 000: Sadhu et
    al., 2024)", never "(seed 000: Sadhu et al. (2024))" nor a bracketed year."""
    name, _, _, _, pages = document
    text = _flat("\n".join(pages[:main_pages(pages)]))
    if name == "main":
        assert "(seed 000: Sadhu et al., 2024)" in text
    else:
        assert "Kurita et al.’s (2019)" in text
    assert re.search(rf"\((?:[A-Z][\w&.,’ -]+, {YEAR}(?:; )?)+\)", text), "no parenthetical citation"
    assert not DOUBLED.findall(text), DOUBLED.findall(text)[:5]
    assert not re.findall(rf"\[{YEAR}\]", text), "a year in brackets"


#: the largest share of a page's text block that may stay empty: a third, what a table
#: kept whole (``docs/site/pdf.py``, ``KEEP_WHOLE_CM``) may leave when it does not fit
MAX_EMPTY = 0.35
CM = 72 / 2.54


def empty_share(page) -> float:
    """The largest vertical stretch of ``page``'s text block (A4 less 2 cm margins) with
    neither text nor an image in it, as a share of the block's height."""
    spans = []

    def text(t, cm, tm, font, size):
        if t.strip():
            y = tm[4] * cm[1] + tm[5] * cm[3] + cm[5]
            size = abs(size * tm[3] * cm[3]) if tm[3] and cm[3] else size
            spans.append((y - 0.3 * size, y + size))

    def image(op, args, cm, tm):
        if op == b"Do":  # an image drawn into the unit square under the current matrix
            spans.append(tuple(sorted((cm[5], cm[5] + cm[3]))))

    page.extract_text(visitor_text=text, visitor_operand_before=image)
    top, bottom = float(page.mediabox.height) - 2 * CM, 2 * CM
    largest, reach = 0.0, bottom
    for low, high in sorted(s for s in spans if s[1] > bottom and s[0] < top):
        largest, reach = max(largest, low - reach), max(reach, high)
    return max(largest, top - reach) / (top - bottom)


def test_no_page_is_left_part_empty(document):
    """A table or figure that does not fit where it falls leaves no more than a third of a
    page empty: figures float, a tall table breaks across pages. The page that ends the
    text before the appendices (they start on a new page) and the last page may end early."""
    name, pdf, _, _, pages = document
    reader = pypdf.PdfReader(str(pdf))
    main = main_pages(pages)
    shares = {n: empty_share(page) for n, page in enumerate(reader.pages, start=1)}
    empty = {n: round(x, 2) for n, x in shares.items() if x > MAX_EMPTY and n not in (main, len(pages))}
    SHOTS.mkdir(parents=True, exist_ok=True)
    (SHOTS / f"pdf_empty_{name}.md").write_text(
        f"pages: {len(pages)}\npages more than a quarter empty (page: share of the text block): "
        + ", ".join(f"{n}: {x:.2f}" for n, x in shares.items() if x > 0.25) + "\n", encoding="utf-8")
    assert not empty, f"{name}: pages more than {MAX_EMPTY:.0%} empty: {empty}"


def _pdf_module():
    spec = importlib.util.spec_from_file_location("site_pdf", ROOT / "docs" / "site" / "pdf.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def figure_fonts() -> list[tuple[str, float | None, float]]:
    """Every figure of the staged manuscript, the appendices' too (Appendix C's figures of
    ``paper/export``): its path, the smallest font it was drawn with (None: not recorded)
    and the size that font prints at in the PDF, in points."""
    pdf = _pdf_module()
    out = []
    staged = "".join(s.read_text(encoding="utf-8") for _, s, _ in DOCUMENTS.values() if s.is_file())
    for path in dict.fromkeys(re.findall(r"(?m)^\[!\[[^\]]*\]\(([^)]+)\)\]", staged)):
        info = pdf.png_info(STAGED.parent / path)
        assert info is not None, f"{path}: not a PNG"
        scale = pdf.placement(info)[1]
        out.append((path, info["font"], info["font"] * scale if info["font"] else 0.0))
    return out


def test_the_text_inside_the_figures_prints_at_7_pt_or_more():
    fonts = figure_fonts()
    assert any(re.match(r"(.*/)?export/", path) for path, _, _ in fonts), "no Appendix C figure"
    measured = [(path, printed) for path, drawn, printed in fonts if drawn]
    unmeasured = [path for path, drawn, _ in fonts if not drawn]
    SHOTS.mkdir(parents=True, exist_ok=True)
    (SHOTS / "pdf_figures.md").write_text(
        "smallest font of each figure as printed in the PDF (pt)\n\n"
        + "".join(f"- {p}: {f'{f:.1f}' if d else 'not recorded'}\n" for p, d, f in fonts),
        encoding="utf-8")
    small = [f"{path} ({printed:.1f} pt)" for path, printed in measured if printed < MIN_PT - 0.05]
    assert not small, f"figure text under {MIN_PT} pt in print: {', '.join(small)}"
    # every figure records its fonts (plots.png_bytes): the notebooks' and those of
    # paper/export (polybias export, or polybias export --redraw from its tables)
    assert not unmeasured, f"no font recorded (drawn before plots.png_bytes recorded it): {unmeasured}"


def test_screenshots_of_the_first_two_pages(tmp_path):
    """The PDF's first two pages as images (``build/screenshots/pdf_page1.png``, ``..2``),
    rendered by Typst from the same source as the PDF."""
    typst = pytest.importorskip("typst", reason=TYPST)
    source = STAGED.with_suffix(".typ")
    if not source.is_file():
        pytest.skip("build/site-src/paper/manuscript.typ not written (make pdf)")
    fonts = [d for d in ("/usr/share/fonts/truetype/noto", "/usr/share/fonts/opentype/noto")
             if Path(d).is_dir()]
    typst.compile(str(source), output=str(tmp_path / "page{0p}.png"), format="png", ppi=100,
                  root=str(STAGED.parents[1]), font_paths=fonts)
    rendered = sorted(tmp_path.glob("page*.png"))
    assert len(rendered) == len(pypdf.PdfReader(str(PDF)).pages)
    SHOTS.mkdir(parents=True, exist_ok=True)
    for k, png in enumerate(rendered[:2], start=1):
        (SHOTS / f"pdf_page{k}.png").write_bytes(png.read_bytes())
        assert png.stat().st_size > 20_000


#: Text a run left in place of content, which must not reach the printed paper: a run scoring
#: a model in place of the published one, a comparison with one language, a real-model row
#: that was not run, a caption ending in two full stops
PLACEHOLDERS = ("instead)", "nothing to compare", "not run: polybias sweep", "(not run:")


def test_no_placeholder_is_printed(document):
    name, _, _, _, pages = document
    text = _flat("\n".join(pages))
    found = {p: text.count(p) for p in PLACEHOLDERS if p in text}
    doubled = re.findall(r"\w\.\.(?!\.)\s", text)
    assert not found and not doubled, (name, found, doubled[:5])


#: The right margin (2 cm) at the resolution the overflow check renders pages at
OVERFLOW_PPI = 50


def test_nothing_runs_off_the_page(document, tmp_path):
    """Every page rendered as an image (Typst, from the source of the PDF): no ink in the
    right margin (2 cm, less a hair for anti-aliasing), where a table or word wider than
    the text block would print."""
    typst = pytest.importorskip("typst", reason=TYPST)
    image = pytest.importorskip("PIL.Image", reason="needs pillow, which the site's environment holds: make pdf "
                                "(docs/requirements-site.txt), or .venv/bin/pip install pillow")
    name, pdf, staged, _, pages = document
    source = staged.with_suffix(".typ")
    if not source.is_file():
        pytest.skip(f"{source.name} not written (make pdf)")
    fonts = [d for d in ("/usr/share/fonts/truetype/noto", "/usr/share/fonts/opentype/noto")
             if Path(d).is_dir()]
    typst.compile(str(source), output=str(tmp_path / "p{0p}.png"), format="png", ppi=OVERFLOW_PPI,
                  root=str(staged.parents[1]), font_paths=fonts)
    rendered = sorted(tmp_path.glob("p*.png"))
    assert len(rendered) == len(pages)
    margin = int(round((2.0 - 0.15) / 2.54 * OVERFLOW_PPI))
    over = []
    for k, png in enumerate(rendered, start=1):
        with image.open(png) as picture:
            gray = picture.convert("L")
            width, height = gray.size
            strip = gray.crop((width - margin, 0, width, height))
            if strip.getextrema()[0] < 160:  # something darker than a light grey
                over.append(k)
    assert not over, f"{name}: ink in the right margin on pages {over}"
