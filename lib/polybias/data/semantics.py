"""Semantic categories of words, for characterising bias-contributing tokens (seed 001 §3.4).

Seed 001 tagged tokens with PyMUSAS (USAS semantic fields). PyMUSAS installs from the
package registry, but its English tagger model does not, so this module uses a lexicon
that installs with its package and works offline: Empath's 194 hand-validated categories
(Fast, Chen & Bernstein 2016, CHI), read from the installed ``empath`` package's
``data/categories.tsv``. Categories differ from USAS fields (e.g. ``crime``, ``sexual``,
``family``, ``help``), so category-level numbers are comparable in spirit, not value.
"""

from __future__ import annotations

from functools import cache
from importlib import resources

import numpy as np
import pandas as pd


@cache
def empath_lexicon() -> dict[str, frozenset[str]]:
    """Empath categories: category name → set of (lower-case) words."""
    try:
        text = resources.files("empath").joinpath("data/categories.tsv").read_text(encoding="utf-8")
    except ModuleNotFoundError as exc:  # pragma: no cover - a dependency of the project
        raise RuntimeError("the 'empath' package is not installed (pip install empath; make env "
                           "installs it, a dependency of polybias)") from exc
    lexicon = {}
    for line in text.splitlines():
        name, *words = line.rstrip("\n").split("\t")
        if name:
            lexicon[name] = frozenset(w.lower() for w in words if w)
    return lexicon


def _normalise(word: str) -> str:
    return "".join(ch for ch in word.lower() if ch.isalnum() or ch in "-'").strip("-'")


def word_categories(word: str, lexicon: dict[str, frozenset[str]] | None = None) -> list[str]:
    """Categories of a word (punctuation stripped, lower-cased; a plural -s falls back to the singular).

    >>> word_categories("Nurses,", {"help": frozenset({"nurse"}), "office": frozenset({"desk"})})
    ['help']
    """
    lexicon = lexicon if lexicon is not None else empath_lexicon()
    w = _normalise(word)
    hits = [c for c, words in lexicon.items() if w in words]
    if not hits and w.endswith("s") and len(w) > 3:
        hits = [c for c, words in lexicon.items() if w[:-1] in words]
    return sorted(hits)


def category_shares(
    words: pd.DataFrame,
    lexicon: dict[str, frozenset[str]] | None = None,
    min_count: int = 1,
    atol: float = 0.0,
) -> pd.DataFrame:
    """Per category: how many of its tokens raise, leave unchanged or lower bias (seed 001 Table 6).

    Parameters
    ----------
    words : frame with a ``word`` column and a ``b`` column (bias attribution of the word;
        b < 0 raises bias, b > 0 lowers it).
    min_count : drop categories with fewer tokens (seed 001 dropped fields under ~1 % of tokens).
    atol : |b| ≤ atol counts as "no change" (0: only exact zeros, as in seed 001).

    Returns one row per category with ``n`` and the percentages ``raise``, ``none``,
    ``lower``, sorted by ``raise`` (descending) then name.
    """
    if not {"word", "b"} <= set(words.columns):
        raise ValueError("words needs the columns 'word' and 'b'")
    lexicon = lexicon if lexicon is not None else empath_lexicon()
    rows = []
    for word, b in zip(words["word"], words["b"], strict=True):
        for cat in word_categories(word, lexicon):
            rows.append((cat, float(b)))
    if not rows:
        return pd.DataFrame(columns=["category", "n", "raise", "none", "lower"])
    tagged = pd.DataFrame(rows, columns=["category", "b"])
    tagged["dir"] = np.select([tagged.b < -atol, tagged.b > atol], ["raise", "lower"], "none")
    table = pd.crosstab(tagged.category, tagged.dir)
    for col in ("raise", "none", "lower"):
        if col not in table:
            table[col] = 0
    n = table[["raise", "none", "lower"]].sum(axis=1)
    out = (table[["raise", "none", "lower"]].div(n, axis=0) * 100).assign(n=n)
    out = out[out.n >= min_count].reset_index()
    return out[["category", "n", "raise", "none", "lower"]].sort_values(
        ["raise", "category"], ascending=[False, True], ignore_index=True)
