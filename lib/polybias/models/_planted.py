"""Planted models by name, for :func:`polybias.models.load`.

Three names are not registry entries but models built on the fly from the notebook's own
parameters (:class:`Planted`):

* ``planted`` — the planted masked LM of :func:`polybias.planted.synthetic.cached_planted_model`
  trained on the ``language`` corpus with association strength ``p`` and training seed
  ``seed`` (trained once, then cached), named ``planted-p<p>``;
* ``planted-analytic`` — the analytic masked LM of a template book
  (:func:`polybias.planted.analytic.cached_analytic_mlm`: built once into the cache, no
  training), named ``planted-analytic-p<p>``, its recorded revision ``analytic:<key>``;
* ``planted-static`` — the known-answer static table planted from the language's word
  lists (:func:`polybias.planted.static.for_wordlists`); as an encoder, the mean of a
  sentence's word vectors (:class:`polybias.planted.static.BagOfWords`, SEAT) or, given
  ``corpora``, the analytic contextual encoder (:func:`polybias.planted.static.contextual_bag`,
  CEAT).

The registered planted models (``planted-mlm``, ``planted-causal``, … with a ``trained``
entry) load through the same :func:`polybias.models.load` as every other entry.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from polybias.data.templating import TemplateBook
from polybias.data.wordlists import load_tests
from polybias.engines.static import StaticEmbeddings
from polybias.planted import analytic, static

TRAINED = "planted"  # the planted MLM trained at a chosen strength
ANALYTIC = analytic.NAME  # "planted-analytic": the analytic MLM built from a template book
STATIC = static.NAME  # "planted-static": the table planted from the word lists
#: Model names built from :class:`Planted` rather than read from the registry.
NAMES = (TRAINED, ANALYTIC, STATIC)
#: Model names whose association strength is :attr:`Planted.p`.
STRENGTH_P = (TRAINED, ANALYTIC)


class PlantedOptionsError(ValueError):
    """A planted model asked for without what it is built from."""


@dataclass(frozen=True)
class Planted:
    """What a planted model is built from (the notebooks' own parameters).

    Parameters
    ----------
    p : association strength of ``planted`` and ``planted-analytic`` (0.5: none).
    strength : planted strength of ``planted-static`` (0: none).
    language : corpus (``planted``) or word-list (``planted-static``) language.
    seed : training seed (``planted``), codes (``planted-analytic``) or unit vectors
        (``planted-static``).
    wordlist_file : the word lists of ``planted-static`` (empty: the language's default).
    book : the template book ``planted-analytic`` is built from.
    target_list, attribute_list, group_feature, x, y, a, b : the analytic model's target
        groups ``x``/``y`` of ``target_list`` and attribute groups ``a`` (planted towards
        ``x``) and ``b`` of ``attribute_list``, read from the entries' ``group_feature``.
    texts : sentences the ``planted-static`` sentence encoder will embed; their words not in
        the lists get unplanted random unit vectors (SEAT: the language's templates).
    contextual : ``planted-static`` as CEAT's encoder of words in context, built over
        ``corpora`` (:func:`polybias.planted.static.list_corpora`); False: the sentence
        encoder (SEAT).
    corpora : the generated corpora of the contextual encoder.
    """

    p: float | None = None
    strength: float = 0.5
    language: str = "en"
    seed: int = 0
    wordlist_file: str = ""
    book: TemplateBook | None = None
    target_list: str = "targets"
    attribute_list: str = "attributes"
    group_feature: str = "group"
    x: str = "male"
    y: str = "female"
    a: str = "career"
    b: str = "family"
    texts: tuple[str, ...] = ()
    contextual: bool = False
    corpora: dict[str, Any] | None = field(default=None, hash=False)


def trained_entry(planted: Planted) -> tuple[str, dict[str, Any]]:
    """Name and ``trained`` registry entry of the planted MLM of ``planted.p``.

    >>> trained_entry(Planted(p=0.9, language="bn"))
    ('planted-p0.9', {'kind': 'mlm', 'trained': {'kind': 'mlm', 'p': 0.9, 'seed': 0, 'language': 'bn'}})
    """
    if planted.p is None:
        raise PlantedOptionsError(f"model {TRAINED!r} needs Planted(p=...), the association "
                                  "strength (the notebooks' planted_p)")
    spec = {"kind": "mlm", "p": planted.p, "seed": planted.seed, "language": planted.language}
    return f"{TRAINED}-p{planted.p}", {"kind": "mlm", "trained": spec}


def analytic_entry(planted: Planted, revision: str | None) -> tuple[str, dict[str, Any]]:
    """Name and registry entry (a local ``path``) of the analytic MLM of ``planted.book``,
    built into the cache on first use."""
    if planted.book is None:
        raise PlantedOptionsError(f"model {ANALYTIC!r} is built from a template book: pass "
                         "Planted(book=...)")
    if planted.p is None:
        raise PlantedOptionsError(f"model {ANALYTIC!r} needs Planted(p=...), the association "
                                  "strength (the notebooks' planted_p)")
    if revision:
        raise PlantedOptionsError(f"model {ANALYTIC!r} is built from the template book: it has no "
                         f"revision to choose (got {revision!r})")
    folder, key = analytic.cached_analytic_mlm(
        planted.book, planted.p, target_list=planted.target_list,
        attribute_list=planted.attribute_list, feature=planted.group_feature, x=planted.x,
        y=planted.y, a=planted.a, b=planted.b, seed=planted.seed)
    return f"{ANALYTIC}-p{planted.p}", {"kind": "mlm", "path": str(folder),
                                         "revision": f"analytic:{key}"}


def static_table(planted: Planted, name: str = STATIC) -> StaticEmbeddings:
    """The table planted from ``planted.language``'s word lists."""
    return static.for_wordlists(planted.language, planted.wordlist_file,
                                        strength=planted.strength, seed=planted.seed, name=name)


def encoder(planted: Planted, name: str = STATIC):
    """``planted-static`` as an encoder: CEAT's contextual encoder over ``planted.corpora``
    (``planted.contextual``), else the bag-of-words sentence encoder (:func:`bag_of_words`)."""
    if planted.contextual:
        if planted.corpora is None:
            raise PlantedOptionsError(f"model {STATIC!r} as a contextual encoder is built over the "
                             "generated corpora of the word lists; it cannot read a corpus file")
        return static.contextual_bag(planted.language, planted.corpora,
                                             planted.wordlist_file, seed=planted.seed)
    return bag_of_words(planted.language, planted.wordlist_file, strength=planted.strength,
                        seed=planted.seed, texts=planted.texts, name=name)


def bag_of_words(language: str, wordlist_file: str = "", strength: float = 0.5, dim: int = 64,
                 seed: int = 0, name: str | None = None, texts=()) -> static.BagOfWords:
    """A :class:`polybias.planted.static.BagOfWords` encoder over
    :func:`polybias.planted.static.planted_embedding` of the language's word lists, its table
    extended with every word of ``texts`` (SEAT: the language's templates) as an unplanted
    random unit vector: a sentence's vector is the mean of its list word (planted) and its
    template words (noise), so SEAT on it must find the planted effects, diluted by the
    templates."""
    name = name or STATIC
    tests = load_tests(language, wordlist_file)
    table = static.planted_embedding(tests, strength=strength, dim=max(dim, len(tests)),
                                             seed=seed, name=name)
    extra = [w for t in texts
             for w in static.words_of(t.replace("{X}", " ").replace("{aX}", " "))
             if w not in table.index]
    extra = list(dict.fromkeys(extra))
    if extra:
        table = StaticEmbeddings(name, table.words + extra,
                                 np.vstack([table.vectors, np.stack(
                                     [static._unit(w, seed, table.dim) for w in extra])]),
                                 revision=table.revision)
    return static.BagOfWords(table, name=name, revision=f"{table.revision},bag-of-words")
