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

:func:`polybias.models.load` (``planted-static`` as an encoder) turns it into a sentence encoder for SEAT (the mean of a sentence's
word vectors; the templates' own words get unplanted random vectors).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, replace

import numpy as np

from polybias.data.wordlists import AssociationTest, load_tests
from polybias.engines.static import StaticEmbeddings
from polybias.planted import synthetic

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

    >>> from polybias.data.wordlists import AssociationTest, WordSet
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
    (:func:`polybias.data.wordlists.load_tests`; empty ``wordlist_file``: the language's default,
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


# ---------------------------------------------------------------- an analytic contextual encoder for CEAT

@dataclass(frozen=True)
class ContextualBag:
    """An analytic "contextual" encoder: an occurrence of word w in a text is

        c(w, text) = v(w) + β · mean_{w' ∈ context} v(w'),

    the planted static vector of w plus ``context_weight`` β times the mean static vector
    of the other words of the text found in the table (the text is the segment CEAT cuts
    around the occurrence, so the context, and with it the vector, changes with the
    segment length). The occurrence's word is the whitespace token that holds its span;
    a token not in the table is looked up by its longest prefix in the table (a suffixed
    form, যুদ্ধের → যুদ্ধ). No training: the same vectors on every CPU.
    """

    table: StaticEmbeddings
    context_weight: float = 0.5
    name: str = NAME
    revision: str | None = None

    def _lookup(self, token: str) -> int | None:
        for end in range(len(token), 0, -1):
            i = self.table.index.get(token[:end])
            if i is not None:
                return i
        return None

    def word_vectors(self, texts: list[str], spans: list[tuple[int, int]]) -> np.ndarray:
        out = np.zeros((len(texts), self.table.dim))
        for n, (text, (start, end)) in enumerate(zip(texts, spans, strict=True)):
            tokens, pos, own = [], 0, None
            for raw in text.split():
                at = text.index(raw, pos)
                pos = at + len(raw)
                token = raw.strip(_PUNCTUATION)
                if not token:
                    continue
                if own is None and at <= start < pos:
                    own = token
                else:
                    tokens.append(token)
            i = self._lookup(own) if own is not None else None
            if i is None:
                raise PlantedStaticError(f"{self.name}: the word at {start}:{end} of {text!r} is not in the table")
            ctx = [j for j in (self.table.index.get(t) for t in tokens) if j is not None]
            out[n] = self.table.vectors[i] + (self.context_weight * self.table.vectors[ctx].mean(axis=0)
                                              if ctx else 0.0)
        return out


def list_corpora(language: str, wordlist_file: str = "", p_values: tuple[float, ...] = (0.9,),
                 n_sentences: int = 1000, seed: int = 0, min_words: int = 8,
                 max_words: int = 100) -> dict[str, tuple[list, list[str]]]:
    """Generated varied-length corpora over every test of a language's word lists.

    One corpus per association p (:func:`polybias.planted.synthetic.varied_length_corpus` with one
    category per test: a sentence pairs X with A, Y with B, with probability p, inside
    the language's neutral filler clauses). Returns ``{"p=0.9": (tests, sentences)}``, the
    tests renamed ``"C1 p=0.9"`` … so that the corpora's rows stay apart.
    """
    tests = list(load_tests(language, wordlist_file).values())
    categories = {t.name: {"X": list(t.X.words), "Y": list(t.Y.words), "A": list(t.A.words),
                           "B": list(t.B.words)} for t in tests}
    return {f"p={p}": ([replace(t, name=f"{t.name} p={p}") for t in tests], synthetic.varied_length_corpus(
        n_sentences, {k: {**v, "p": p} for k, v in categories.items()}, seed=seed, language=language,
        min_words=min_words, max_words=max_words)) for p in p_values}


def contextual_bag(language: str, corpora: dict[str, tuple[list, list[str]]], wordlist_file: str = "",
                   strength: float = 0.5, context_weight: float = 0.5, dim: int = 64, seed: int = 0,
                   name: str = NAME) -> ContextualBag:
    """A :class:`ContextualBag` over :func:`planted_embedding` of the language's word lists,
    its table extended with every other word of ``corpora`` (:func:`list_corpora`) as an
    unplanted random unit vector."""
    tests = load_tests(language, wordlist_file)
    table = planted_embedding(tests, strength=strength, dim=max(dim, len(tests)), seed=seed, name=name)
    extra = list(dict.fromkeys(w for _, sentences in corpora.values() for s in sentences
                               for w in words_of(s) if w not in table.index))
    if extra:
        table = StaticEmbeddings(name, table.words + extra,
                                 np.vstack([table.vectors, np.stack([_unit(w, seed, table.dim) for w in extra])]),
                                 revision=table.revision)
    return ContextualBag(table, context_weight, name=name,
                         revision=f"{table.revision},context={context_weight}")


# ---------------------------------------------------------------- a known-answer encoder learnt from a planted corpus

def corpus_association_embedding(corpus: list[str], groups: dict[str, dict[str, list[str]]],
                                 seed: int = 0, dim: int = 64, gain: float = 1.0,
                                 name: str = "planted-encoder") -> StaticEmbeddings:
    """Static vectors of a planted corpus's target and attribute words with the corpus's
    association placed in them: a known-answer encoder for SEAT and CEAT.

    For a target word t (``groups["targets"]``: ``male``, ``female``) and an attribute
    word a (``groups["attributes"]``: ``career``, ``family``),

        v(t) = u(t) + γ · (n(t, career) − n(t, family)) / (n(t, career) + n(t, family)) · e
        v(a) = u(a) + γ · (+1 for career, −1 for family) · e

    where n(t, G) counts the sentences of ``corpus`` holding t and a word of group G, u(w)
    is a random unit vector seeded by (``seed``, the word) (the word-level noise that
    distinguishes two models trained on the same distribution), e the first coordinate
    axis and γ the ``gain``. On a corpus of :func:`polybias.planted.synthetic.planted_corpus`
    with strength p, the count ratio of a male word is 2p − 1 up to sampling noise and of
    a female word 1 − 2p, so WEAT/SEAT on these vectors has an expected effect of the
    sign of p − 0.5 growing with |p − 0.5|, and none at p = 0.5. No training: the same
    vectors on every CPU.

    >>> groups = {"targets": {"male": ["he"], "female": ["she"]},
    ...           "attributes": {"career": ["boss"], "family": ["home"]}}
    >>> emb = corpus_association_embedding(["he boss", "he boss", "he home", "she home"], groups, dim=4)
    >>> round(float(emb.vectors[emb.index["he"]][0] - _unit("he", 0, 4)[0]), 6)  # (2 - 1) / 3
    0.333333
    """
    if not np.isfinite(gain) or gain < 0:
        raise PlantedStaticError(f"gain must be a finite number >= 0, got {gain!r}")
    career, family = set(groups["attributes"]["career"]), set(groups["attributes"]["family"])
    targets = [w for g in ("male", "female") for w in groups["targets"][g]]
    counts = {t: [0, 0] for t in targets}
    for sentence in corpus:
        ws = set(words_of(sentence))
        c, f = bool(ws & career), bool(ws & family)
        for t in ws.intersection(counts):
            counts[t][0] += c
            counts[t][1] += f
    words, vectors = [], []
    for t in targets:
        c, f = counts[t]
        v = _unit(t, seed, dim).copy()
        v[0] += gain * ((c - f) / (c + f) if c + f else 0.0)
        words.append(t)
        vectors.append(v)
    for group, sign in (("career", 1.0), ("family", -1.0)):
        for a in groups["attributes"][group]:
            v = _unit(a, seed, dim).copy()
            v[0] += gain * sign
            words.append(a)
            vectors.append(v)
    return StaticEmbeddings(name, words, np.stack(vectors),
                            revision=f"corpus-association:gain={gain},dim={dim},seed={seed}")
