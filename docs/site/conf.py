"""Sphinx configuration of the polybias site (``make site``).

The source tree is staged by ``docs/site/stage.py`` into ``build/site-src`` (repository
layout kept, so relative links and images resolve); this file is passed with ``-c``.
Everything is offline: no intersphinx, no CDN assets, no web fonts.
"""

from __future__ import annotations

import dataclasses
import re
import sys
from pathlib import Path

from sphinxcontrib.bibtex.plugin import register_plugin
from sphinxcontrib.bibtex.style.referencing import BracketStyle, PersonStyle
from sphinxcontrib.bibtex.style.referencing.author_year import AuthorYearReferenceStyle

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "lib"))

project = "polybias"
author = "polybias contributors"
copyright = "polybias contributors"

extensions = [
    "myst_nb",
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinxcontrib.bibtex",
]

exclude_patterns = ["_build", "**.ipynb_checkpoints"]
root_doc = "index"

# Notebooks are rendered with the outputs stored in paper/executed; never re-executed.
nb_execution_mode = "off"
# Tables are shown as ``text/markdown`` outputs (``polybias.results.report.show_table``);
# myst-nb parses those with CommonMark by default, which has no pipe tables: parse them
# as MyST (tables included) so that each renders as an HTML table.
nb_render_markdown_format = "myst"
myst_enable_extensions = ["colon_fence"]
myst_heading_anchors = 3

bibtex_bibfiles = ["../../paper/references.bib"]  # relative to this folder
bibtex_default_style = "plain"


# Citations author-year in parentheses, as the PDF prints them (Typst's APA style):
# {cite:p} "(Sadhu et al., 2024)", several keys "(A, 2020; B, 2021)"; {cite:t} "Sadhu et
# al. (2024)"; two authors joined by "&"; {cite:author} and {cite:year} without brackets
# (the manuscript uses them for a citation inside parentheses:
# polybias.results.manuscript.citations).
def _round() -> BracketStyle:
    return BracketStyle(left="(", right=")", sep="; ")


def _apa_names() -> PersonStyle:
    return PersonStyle(sep2=" & ", last_sep=", & ", other=" et al.")


@dataclasses.dataclass
class RoundAuthorYearStyle(AuthorYearReferenceStyle):
    bracket_parenthetical: BracketStyle = dataclasses.field(default_factory=_round)
    bracket_textual: BracketStyle = dataclasses.field(default_factory=_round)
    bracket_author: BracketStyle = dataclasses.field(default_factory=_round)
    bracket_year: BracketStyle = dataclasses.field(default_factory=_round)
    person: PersonStyle = dataclasses.field(default_factory=_apa_names)


register_plugin("sphinxcontrib.bibtex.style.referencing", "author_year_round",
                RoundAuthorYearStyle, force=True)
bibtex_reference_style = "author_year_round"

# API reference: the library's docstrings (sections rendered by the hook below). The
# scientific stack is mocked so that the docs environment stays small; annotations are
# postponed in the library, so mocking does not change the signatures shown.
autosummary_generate = True
autodoc_default_options = {"members": True, "show-inheritance": True}
autodoc_typehints = "signature"
autodoc_mock_imports = [
    "numpy", "pandas", "scipy", "torch", "transformers", "matplotlib", "sklearn",
    "safetensors", "tokenizers", "gensim", "seaborn", "statsmodels", "tqdm", "huggingface_hub", "regex",
]

html_theme = "pydata_sphinx_theme"
html_title = "polybias"
html_theme_options = {
    "navigation_with_keys": False,
    "header_links_before_dropdown": 5,
    "show_toc_level": 2,
    "footer_start": ["copyright"],
    "footer_end": [],
    "secondary_sidebar_items": ["page-toc"],
}
# The manuscript and the notebooks are single pages with no pages under them: no left
# sidebar (it would be empty and take 320 px of the text's width); their own contents sit
# in the right-hand "On this page" column.
html_sidebars = {"paper/**": [], "references": []}
html_context = {"default_mode": "light"}  # an explicit mode: no "invalid theme mode" error
html_static_path = ["_static"]  # beside this file
html_css_files = ["polybias.css"]  # wide tables scroll in their column; code wraps
html_favicon = "favicon.svg"  # else browsers ask for /favicon.ico, which is not there
html_show_sourcelink = False
html_copy_source = False



# The library's docstrings are plain text with numpydoc sections; ``|x|`` (absolute
# values, norms) would read as reStructuredText substitutions. Escape bars outside inline
# literals and outside table rows before the docstring is parsed.
_LITERAL = re.compile(r"(``.+?``)")


def _escape_bars(app, what, name, obj, options, lines):
    for i, line in enumerate(lines):
        if "|" not in line or line.lstrip().startswith(("|", "+", ">>>", "...")):
            continue
        parts = _LITERAL.split(line)
        lines[i] = "".join(p if p.startswith("``") else p.replace("|", r"\|") for p in parts)


# Sections are written ``Parameters`` over a dashed line, then ``name : description``
# items (a description, not numpydoc's type, after the colon), so napoleon would misread
# them. Render a section title as a rubric and each item as a definition-list entry.
_RULE = re.compile(r"^\s*-{3,}\s*$")
_ITEM = re.compile(r"^([\w*][\w*., ]*?) : (.+)$")
_SECTIONS = {"Parameters", "Returns", "Yields", "Raises", "Other Parameters", "Attributes",
             "Notes", "Examples", "See Also", "Warns", "References"}


def _sections(app, what, name, obj, options, lines):
    out, section = [], None
    for i, line in enumerate(lines):
        if _RULE.match(line) and i and lines[i - 1].strip() in _SECTIONS:
            section = lines[i - 1].strip()
            out[-1] = f".. rubric:: {section}"
            out.append("")
            continue
        item = _ITEM.match(line) if section not in (None, "Notes", "Examples") else None
        if item:
            out.extend([f"``{item.group(1)}``", f"    {item.group(2)}"])
            continue
        out.append(line)
    lines[:] = out


def setup(app):
    app.connect("autodoc-process-docstring", _escape_bars)
    app.connect("autodoc-process-docstring", _sections)
