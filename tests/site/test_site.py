"""Browser test of the built site (``make site``, then ``make site-test``).

Serves ``build/site`` on 127.0.0.1 and visits every page with headless Chromium: no
console errors, every ``<img>`` loaded (``naturalWidth > 0``), every internal link
answered with HTTP 200, no request leaving the machine. What a reader sees: every
notebook page shows as many HTML tables and images as its stored notebook has Markdown
tables and ``image/png`` outputs (the counts go to ``build/screenshots/site_counts.md``);
no table of the manuscript's main text is wider than its column; no figure is scaled
below a readable width. Screenshots of the front page, the manuscript's first page, a
manuscript section with a table and a figure, an appendix table and three notebook pages
go to ``build/screenshots``. Skipped unless the site is built and Playwright and Chromium
(``CHROMIUM``, default ``/usr/bin/chromium``) are present.
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import re
import threading
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import urldefrag, urlparse

import pytest

ROOT = Path(__file__).resolve().parents[2]
SITE = ROOT / "build" / "site"
SHOTS = ROOT / "build" / "screenshots"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")

playwright = pytest.importorskip("playwright.sync_api", reason="needs Playwright, which the site's "
                                 "environment holds: make site-test runs these tests there "
                                 "(docs/requirements-site.txt)")
pytestmark = [
    pytest.mark.skipif(not (SITE / "index.html").is_file(), reason="build/site not built (make site)"),
    pytest.mark.skipif(not Path(CHROMIUM).is_file(), reason=f"no chromium at {CHROMIUM}: apt-get install "
                       "chromium, or set CHROMIUM to a Chromium binary"),
]
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def base_url():
    handler = functools.partial(_Quiet, directory=str(SITE))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    with playwright.sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("chromium-profile")), executable_path=CHROMIUM,
            headless=True, args=FLAGS, viewport={"width": 1280, "height": 900})
        yield context
        context.close()


def pages() -> list[str]:
    return sorted(str(p.relative_to(SITE)) for p in SITE.rglob("*.html")
                  if not p.relative_to(SITE).parts[0].startswith("_"))


def _status(url: str) -> int:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status
    except urllib.error.HTTPError as err:
        return err.code


def visit(browser, url: str):
    """Load a page; return (page, console errors, requests to other hosts)."""
    page = browser.new_page()
    errors, outside = [], []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("response", lambda r: errors.append(f"HTTP {r.status} for {r.url}") if r.status >= 400 else None)
    page.on("request", lambda r: outside.append(r.url)
            if urlparse(r.url).hostname not in (None, "127.0.0.1") and r.url.startswith("http") else None)
    page.goto(url, wait_until="load")
    return page, errors, outside


def test_the_site_has_the_expected_pages():
    names = pages()
    assert "index.html" in names and "paper/manuscript.html" in names and "references.html" in names
    assert "paper/supplement.html" in names
    assert sum(n.startswith("paper/executed/") for n in names) == len(list((ROOT / "paper" / "executed").glob("*.ipynb")))
    assert sum(n.startswith("docs/measures/") for n in names) == len(list((ROOT / "docs" / "measures").glob("*.md")))
    assert any(n.startswith("api/polybias.") for n in names)


def test_every_page_loads_cleanly(browser, base_url):
    problems, checked = [], {}
    for name in pages():
        page, errors, outside = visit(browser, base_url + name)
        broken = page.eval_on_selector_all(
            "img", "imgs => imgs.filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.src)")
        links = page.eval_on_selector_all("a[href]", "as => as.map(a => a.href)")
        page.close()
        problems += [f"{name}: console error: {e}" for e in errors]
        problems += [f"{name}: request leaves the machine: {u}" for u in outside]
        problems += [f"{name}: image not loaded: {src}" for src in broken]
        for link in links:
            target = urldefrag(link).url
            if not target.startswith(base_url):
                continue
            if target not in checked:
                checked[target] = _status(target)
            if checked[target] != 200:
                problems.append(f"{name}: link {link} -> HTTP {checked[target]}")
    assert not problems, "\n".join(problems[:50])
    assert checked, "no internal links found"


def test_screenshots(browser, base_url):
    SHOTS.mkdir(parents=True, exist_ok=True)
    page, _, _ = visit(browser, base_url + "index.html")
    page.screenshot(path=str(SHOTS / "front.png"))
    page.close()
    # a manuscript section with both a table and a figure
    page, _, _ = visit(browser, base_url + "paper/manuscript.html")
    target = page.locator("section section").filter(has=page.locator("table")).filter(
        has=page.locator("img")).first
    assert target.count() == 1, "no manuscript section with a table and a figure"
    target.scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / "manuscript_section.png"))
    page.close()
    page, _, _ = visit(browser, base_url + "paper/executed/01_weat_w2v-gnews.html")
    assert page.locator("div.cell_output").count() > 0, "notebook rendered without its outputs"
    page.locator("div.cell_output").first.scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / "notebook.png"))
    page.close()
    assert all((SHOTS / f).stat().st_size > 10_000 for f in ("front.png", "manuscript_section.png", "notebook.png"))


# ------------------------------------------------------------------ what a reader sees

#: The narrowest a figure may be shown, in CSS pixels, unless its file is narrower
READABLE_PX = 600


def stored_outputs(notebook: Path) -> tuple[int, int]:
    """(tables, images) a stored notebook shows: the pipe tables of its ``text/markdown``
    outputs and its ``image/png`` outputs."""
    nb = json.loads(notebook.read_text(encoding="utf-8"))
    tables = images = 0
    for cell in nb["cells"]:
        for out in cell.get("outputs", []):
            data = out.get("data", {})
            if "image/png" in data:
                images += 1
            if "text/markdown" in data:
                text = "".join(data["text/markdown"])
                tables += len(re.findall(r"^\|.*\|\s*\n\|(?:\s*:?-+:?\s*\|)+\s*$", text, flags=re.M))
    return tables, images


def test_notebook_pages_show_every_table_and_figure_of_their_notebook(browser, base_url):
    rows, problems = [], []
    for notebook in sorted((ROOT / "paper" / "executed").glob("*.ipynb")):
        want_tables, want_images = stored_outputs(notebook)
        page, _, _ = visit(browser, f"{base_url}paper/executed/{notebook.stem}.html")
        tables = page.locator("div.cell_output table").count()
        images = page.locator("div.cell_output img").count()
        raw = page.locator("div.cell_output pre", has_text="|---|").count()
        page.close()
        rows.append(f"| {notebook.stem} | {tables} / {want_tables} | {images} / {want_images} | {raw} |")
        if (tables, images) != (want_tables, want_images):
            problems.append(f"{notebook.stem}: {tables} tables (stored {want_tables}), "
                            f"{images} images (stored {want_images})")
        if raw:
            problems.append(f"{notebook.stem}: {raw} table(s) shown as raw text")
    SHOTS.mkdir(parents=True, exist_ok=True)
    (SHOTS / "site_counts.md").write_text(
        "| notebook page | tables shown / stored | images shown / stored | raw-text tables |\n"
        "|---|---|---|---|\n" + "\n".join(rows) + "\n", encoding="utf-8")
    assert not problems, "\n".join(problems)
    assert sum(stored_outputs(nb)[1] for nb in (ROOT / "paper" / "executed").glob("*.ipynb")) > 0


def test_main_text_tables_fit_their_column_and_figures_are_readable(browser, base_url):
    page, _, _ = visit(browser, base_url + "paper/manuscript.html")
    found = page.evaluate("""() => {
        const article = document.querySelector('article.bd-article');
        const width = article.getBoundingClientRect().width;
        const appendix = [...article.querySelectorAll('h2')].find(h => /^Appendix/.test(h.textContent));
        const main = t => !appendix || (appendix.compareDocumentPosition(t) & Node.DOCUMENT_POSITION_PRECEDING);
        const wide = [...article.querySelectorAll('table')].filter(main)
            .filter(t => t.getBoundingClientRect().width > width + 1)
            .map(t => t.querySelector('tr').textContent.trim().slice(0, 60));
        const small = [...article.querySelectorAll('img')]
            .filter(i => i.getBoundingClientRect().width < Math.min(i.naturalWidth, READABLE) - 1)
            .map(i => i.src.split('/').pop() + ' ' + Math.round(i.getBoundingClientRect().width)
                      + ' of ' + i.naturalWidth + ' px');
        const unlinked = [...article.querySelectorAll('img')].filter(i => !i.closest('a[href]'))
            .map(i => i.src.split('/').pop());
        const sidebar = document.querySelector('.bd-sidebar-primary');
        const sidebarWidth = sidebar && getComputedStyle(sidebar).display !== 'none'
            ? sidebar.getBoundingClientRect().width : 0;
        return {width, wide, small, unlinked, sidebarWidth,
                tables: [...article.querySelectorAll('table')].filter(main).length};
    }""".replace("READABLE", str(READABLE_PX)))
    page.close()
    assert found["tables"] > 0, "no table in the manuscript's main text"
    assert not found["wide"], f"main-text tables wider than the {found['width']:.0f} px column: {found['wide']}"
    assert not found["small"], f"figures scaled below {READABLE_PX} px: {found['small']}"
    assert not found["unlinked"], f"figures not linked to their full-size file: {found['unlinked']}"
    assert found["sidebarWidth"] == 0, "an empty left sidebar takes the manuscript's width"


def test_citations_are_author_year_in_parentheses_as_in_the_pdf(browser, base_url):
    """The manuscript's citations as the PDF prints them (``tests/site/test_pdf.py``):
    "(Sadhu et al., 2024)" or "Sadhu et al. (2024)", a citation inside parentheses as
    "(seed 000: Sadhu et al., 2024)"; no bracketed citation, no doubled parentheses."""
    cited, text = [], ""
    for document in ("manuscript", "supplement"):
        page, _, _ = visit(browser, base_url + f"paper/{document}.html")
        cited += page.eval_on_selector_all("span.bibtex-citation", "s => s.map(c => c.textContent)")
        text += " " + " ".join(page.locator("article.bd-article").inner_text().split())
        page.close()
    year = r"(?:19|20)\d\d[a-z]?"
    forms = [rf"\((?:.+, {year}; )*.+, {year}\)", rf".+ \({year}\)", r"[^()\[\]]*\D", year]
    odd = [c for c in cited if not any(re.fullmatch(f, " ".join(c.split())) for f in forms)]
    assert cited and not odd, f"citations not author-year in parentheses: {odd[:5]}"
    assert "(seed 000: Sadhu et al., 2024)" in text and "Kurita et al.’s (2019)" in text
    doubled = re.findall(rf"\([^()]*\({year}\)\)", text)
    assert not doubled, f"citations doubling their parentheses: {doubled[:5]}"


def test_screenshots_of_what_a_reader_sees(browser, base_url):
    SHOTS.mkdir(parents=True, exist_ok=True)
    page, _, _ = visit(browser, base_url + "paper/manuscript.html")
    page.screenshot(path=str(SHOTS / "manuscript_first_page.png"))
    page.close()
    # the supplement's appendix of long tables (the page's outer section holds every h2 too)
    page, _, _ = visit(browser, base_url + "paper/supplement.html")
    appendix = (page.locator("h2", has_text="Long tables").locator("xpath=ancestor::section[1]")
                .locator("table").first)
    appendix.scroll_into_view_if_needed()
    page.screenshot(path=str(SHOTS / "manuscript_appendix_table.png"))
    page.close()
    for name in ("01_weat_w2v-gnews", "10_validity_en", "05_crows_pairs_planted-mlm"):
        page, _, _ = visit(browser, f"{base_url}paper/executed/{name}.html")
        target = page.locator("div.cell_output img").first
        target.scroll_into_view_if_needed()
        page.screenshot(path=str(SHOTS / f"notebook_{name}.png"))
        assert page.locator("div.cell_output table").count() > 0, name
        page.close()


#: Text a run left in place of content: a run scoring a model in place of the published
#: one, a comparison with one language, a real-model row that was not run, a part skipped
PLACEHOLDERS = ("instead)", "nothing to compare", "not run: polybias sweep", "(not run:")


def test_no_page_of_the_paper_overflows_its_column_or_shows_a_placeholder(browser, base_url):
    """Every page of the paper (main text, supplement, every executed notebook) at 1280 px:
    no table and no code wider than the column it sits in (a wide table scrolls inside it;
    code, the parameters cell's too, wraps), and no placeholder in the text or the outputs."""
    problems = []
    names = [n for n in pages() if n.startswith("paper/")]
    assert "paper/supplement.html" in names and any(n.startswith("paper/executed/") for n in names)
    for name in names:
        page, _, _ = visit(browser, base_url + name)
        found = page.evaluate("""() => {
            const article = document.querySelector('article.bd-article');
            const right = article.getBoundingClientRect().right;
            const wide = [...article.querySelectorAll('table, pre')]
                .filter(e => e.getBoundingClientRect().right > right + 1
                             || (e.tagName === 'PRE' && e.scrollWidth > e.clientWidth + 1))
                .map(e => e.tagName + ': ' + e.textContent.trim().slice(0, 50));
            const outputs = [...article.querySelectorAll('div.cell_output')].map(o => o.innerText).join('\\n');
            const prose = [...article.querySelectorAll('p, td, th, li')].map(o => o.innerText).join('\\n');
            return {wide, text: document.location.pathname.includes('/executed/') ? outputs : prose};
        }""")
        page.close()
        problems += [f"{name}: wider than its column: {w}" for w in found["wide"]]
        problems += [f"{name}: placeholder {p!r}" for p in PLACEHOLDERS if p in found["text"]]
    assert not problems, "\n".join(problems[:40])
