"""A planted static embedding built analytically from word lists: a known-answer model.

No offline static model of Bangla or Hindi holds the studies' words, so the WEAT
notebook runs there on an embedding built at run time from the lists themselves, with a
known association planted in it. For word w with the tests t = 1 … T it belongs to,

    v(w) = u(w) + α Σ_t s_t(w) e_t,

where u(w) is a unit vector drawn from ``numpy.random.default_rng`` seeded by
(``seed``, the first 8 bytes of sha256(w)) — so a word's vector does not depend on which
other words exist — e_t is the t-th coordinate axis, and s_t(w) = +1 for the targets X
and attributes A of test t, −1 for Y and B (0 when w is not in test t). Each test thus
carries its own planted direction: X lies towards A and Y towards B with strength α,
and WEAT must find a positive effect for every test; at α = 0 the embedding is random
and the effects are noise. No training is involved, so the table is identical on every
CPU. The vocabulary is the lists' words, built in memory and never written out.

:func:`bag_of_words` turns it into a sentence encoder for SEAT (the mean of a sentence's
word vectors; the templates' own words get unplanted random vectors).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

from .models import StaticEmbeddings
from .wordlists import AssociationTest, load_tests

NAME = "planted-static"
ROLE_SIGNS = {"X": 1.0, "Y": -1.0, "A": 1.0, "B": -1.0}


class PlantedStaticError(ValueError):
    """Bad input to the planted static embedding."""


def _unit(word: str, seed: int, dim: int) -> np.ndarray:
    key = int.from_bytes(hashlib.sha256(word.encode("utf-8")).digest()[:8], "little")
    v = np.random.default_rng([seed, key]).standard_normal(dim)
    return v / np.linalg.norm(v)


def planted_embedding(tests: dict[str, AssociationTest], strength: float = 0.5, dim: int = 64,
                      seed: int = 0, name: str = NAME) -> StaticEmbeddings:
    """The planted embedding of every word of ``tests`` (see the module docstring).

    A word in conflicting roles of one test (X and Y, or A and B) is an error naming it.

    >>> from polybias.wordlists import AssociationTest, WordSet
    >>> ws = lambda n, *w: WordSet(n, w, "project", "doctest")
    >>> t = AssociationTest(name="t", language="xx", X=ws("x", "a1", "a2"), Y=ws("y", "b1", "b2"),
    ...                     A=ws("p", "c1", "c2"), B=ws("q", "d1", "d2"))
    >>> emb = planted_embedding({"t": t}, strength=1.0, dim=8)
    >>> len(emb), emb.dim, round(float(emb.vectors[emb.index["a1"]][0] - emb.vectors[emb.index["b1"]][0]
    ...                                - _unit("a1", 0, 8)[0] + _unit("b1", 0, 8)[0]), 12)
    (8, 8, 2.0)
    """
    if not tests:
        raise PlantedStaticError("no tests to build a planted embedding from")
    if dim < len(tests):
        raise PlantedStaticError(f"dim={dim} is smaller than the {len(tests)} planted directions")
    if not np.isfinite(strength) or strength < 0:
        raise PlantedStaticError(f"strength must be a finite number >= 0, got {strength!r}")
    signs: dict[str, dict[int, float]] = {}
    for t, test in enumerate(tests.values()):
        for role, s in ROLE_SIGNS.items():
            for w in getattr(test, role).words:
                old = signs.setdefault(w, {}).get(t)
                if old is not None and old != s:
                    raise PlantedStaticError(f"test {test.name!r}: word {w!r} is in both "
                                             f"{'X and Y' if role in 'XY' else 'A and B'}")
                signs[w][t] = s
    words = list(signs)
    vectors = np.stack([_unit(w, seed, dim) for w in words])
    for i, w in enumerate(words):
        for t, s in signs[w].items():
            vectors[i, t] += strength * s
    return StaticEmbeddings(name, words, vectors, revision=f"planted:strength={strength},dim={dim},seed={seed}")


def for_wordlists(language: str, wordlist_file: str = "", strength: float = 0.5, dim: int = 64,
                  seed: int = 0, name: str = NAME) -> StaticEmbeddings:
    """:func:`planted_embedding` of every test of a language's word lists
    (:func:`polybias.wordlists.load_tests`; empty ``wordlist_file``: the language's default,
    e.g. seed 000's C1–C9 in Bangla, read from the registered files)."""
    tests = load_tests(language, wordlist_file)
    return planted_embedding(tests, strength=strength, dim=max(dim, len(tests)), seed=seed, name=name)


# ---------------------------------------------------------------- a bag-of-words sentence encoder over it

_PUNCTUATION = "।॥?!,.;:\"'()[]{}“”‘’-–—"


def words_of(sentence: str) -> list[str]:
    """Whitespace tokens of ``sentence`` with punctuation stripped from both ends (empty ones dropped).

    >>> words_of("এটা কমলা। ওখানে, 'X' আছে?")
    ['এটা', 'কমলা', 'ওখানে', 'X', 'আছে']
    """
    return [w for w in (t.strip(_PUNCTUATION) for t in sentence.split()) if w]


@dataclass(frozen=True)
class BagOfWords:
    """A sentence encoder: the mean of the static vectors of a sentence's words.

    Words the table lacks are skipped; a sentence with none of its words in the table is
    an error naming it. ``name`` and ``revision`` name it in run records.
    """

    table: StaticEmbeddings
    name: str = NAME
    revision: str | None = None

    def encode(self, sentences: list[str]) -> np.ndarray:
        out = np.zeros((len(sentences), self.table.dim))
        for i, s in enumerate(sentences):
            idx = [self.table.index[w] for w in words_of(s) if w in self.table.index]
            if not idx:
                raise PlantedStaticError(f"{self.name}: no word of the sentence {s!r} is in the table")
            out[i] = self.table.vectors[idx].mean(axis=0)
        return out


def bag_of_words(language: str, wordlist_file: str = "", strength: float = 0.5, dim: int = 64,
                 seed: int = 0, name: str = NAME) -> BagOfWords:
    """A :class:`BagOfWords` encoder over :func:`planted_embedding` of the language's word
    lists, its table extended with every word of the language's SEAT templates
    (``data/templates/seat_<language>.yaml``) as an unplanted random unit vector: a
    sentence's vector is the mean of its list word (planted) and its template words
    (noise), so SEAT on it must find the planted effects, diluted by the templates."""
    from .metrics.seat import load_templates as load_seat_templates

    tests = load_tests(language, wordlist_file)
    table = planted_embedding(tests, strength=strength, dim=max(dim, len(tests)), seed=seed, name=name)
    templates = load_seat_templates(language)
    extra = [w for texts in templates.groups.values() for t in texts
             for w in words_of(t.replace("{X}", " ").replace("{aX}", " ")) if w not in table.index]
    extra = list(dict.fromkeys(extra))
    if extra:
        table = StaticEmbeddings(name, table.words + extra,
                                 np.vstack([table.vectors, np.stack([_unit(w, seed, table.dim) for w in extra])]),
                                 revision=table.revision)
    return BagOfWords(table, name=name, revision=f"{table.revision},bag-of-words")
