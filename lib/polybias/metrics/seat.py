"""Sentence Encoder Association Test (May, Wang, Bordia, Bowman & Rudinger 2019, NAACL).

SEAT is WEAT (:mod:`polybias.metrics.weat`) on sentence vectors: each target or
attribute word is put into semantically bleached templates ("This is X.", "X is
here."), every sentence is encoded, and with s(w, A, B) = mean_{a∈A} cos(w, a) −
mean_{b∈B} cos(w, b) over the sentence vectors,

    d = (mean_{x∈X} s(x, A, B) − mean_{y∈Y} s(y, A, B)) / std_{w∈X∪Y} s(w, A, B)

with ddof=1 (docs/conventions.md) and the one-sided permutation p-value of Σ_X s − Σ_Y s
(:func:`polybias.stats.split_permutation_test`).

Tests come from two places:

* May et al.'s own test files (the ``sent-bias`` repository, registered in
  ``data/sources.yaml`` as ``sent-bias-<file>``): :func:`polybias.studies.seat.load_seat_test` reads the
  sentence version of a test (``sent-weat6.jsonl`` for ``weat6``, or the sentence-level
  double-bind files);
* a word-list test (:class:`polybias.data.wordlists.AssociationTest`) and the project's
  templates ``data/templates/seat_<lang>.yaml`` (English from May et al., Hindi from
  seed 003 App. D, Bangla translated as in seed 000 App. A.2):
  :func:`templated_test`.

Sentence vectors come from :func:`polybias.engines.embeddings.sentence_vectors` (the model's own
pooling by default; ``pooling="first-piece"`` reproduces the sent-bias code's first
wordpiece vector for comparison only, docs/conventions.md, pitfalls). Duplicate sentences are encoded once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

ROLES = ("X", "Y", "A", "B")
_FILE_ROLES = {"targ1": "X", "targ2": "Y", "attr1": "A", "attr2": "B"}

#: English SEAT tests of May et al. (2019) in their order (C1–C10 with the "b" variants
#: using group terms instead of names, Angry Black Woman, Heilman double binds).
SEAT_TESTS: tuple[str, ...] = (
    "weat1", "weat2", "weat3", "weat3b", "weat4", "weat5", "weat5b", "weat6", "weat6b",
    "weat7", "weat7b", "weat8", "weat8b", "weat9", "weat10",
    "angry_black_woman_stereotype", "angry_black_woman_stereotype_b",
    "heilman_double_bind_competent_1", "heilman_double_bind_competent_1+3-",
    "heilman_double_bind_competent_1-", "heilman_double_bind_competent_one_sentence",
    "heilman_double_bind_competent_one_word",
    "heilman_double_bind_likable_1", "heilman_double_bind_likable_1+3-",
    "heilman_double_bind_likable_1-", "heilman_double_bind_likable_one_sentence",
    "heilman_double_bind_likable_one_word",
)

_SLOT = re.compile(r"\{(X|aX)\}")


class SeatError(ValueError):
    """A malformed SEAT test file or template file, or an unknown test or template group."""


@dataclass(frozen=True)
class SeatTest:
    """Target (X, Y) and attribute (A, B) sentences of one SEAT."""

    name: str
    sentences: dict[str, tuple[str, ...]]
    categories: dict[str, str] = field(default_factory=dict)
    language: str = "en"
    source: str = ""

    def __post_init__(self) -> None:
        for role in ROLES:
            if not self.sentences.get(role):
                raise SeatError(f"SEAT {self.name!r}: set {role} has no sentences")


# ---------------------------------------------------------------- May et al.'s files


# ---------------------------------------------------------------- templates

@dataclass(frozen=True)
class SeatTemplates:
    """Bleached templates of one language, by group (part of speech)."""

    language: str
    groups: dict[str, tuple[str, ...]]
    citation: str = ""
    file: str = ""
    an_exceptions: frozenset[str] = frozenset()
    a_exceptions: frozenset[str] = frozenset()

    def article(self, word: str) -> str:
        """English indefinite article of ``word`` (first letter, with the listed exceptions)."""
        w = word.lower()
        first = w.split()[0] if w.split() else w
        if first in self.an_exceptions:
            return "an"
        if first in self.a_exceptions:
            return "a"
        return "an" if w[:1] in "aeiou" else "a"


def fill_templates(words, group: str, templates: SeatTemplates) -> list[str]:
    """Every word in every template of ``group`` (word-major order, as sent-bias).

    >>> t = SeatTemplates("en", {"noun": ("This is {aX}.", "The {X} is here.")})
    >>> fill_templates(["aster", "rose"], "noun", t)
    ['This is an aster.', 'The aster is here.', 'This is a rose.', 'The rose is here.']
    """
    if group not in templates.groups:
        raise SeatError(f"no template group {group!r} for {templates.language!r}; groups: "
                        f"{', '.join(templates.groups)}")
    words = list(words)
    if not words:
        raise SeatError(f"no words to put into the {group!r} templates")
    out = []
    for w in words:
        if not isinstance(w, str) or not w.strip():
            raise SeatError(f"empty or non-string word {w!r} for the {group!r} templates")
        for t in templates.groups[group]:
            text = t.replace("{aX}", f"{templates.article(w)} {w}").replace("{X}", w)
            if t.startswith("{") and templates.language == "en":
                text = text[0].upper() + text[1:]
            out.append(text)
    return out


def templated_test(test, templates: SeatTemplates,
                   groups: str | dict[str, str] = "noun") -> SeatTest:
    """A SEAT from a word-level test and the templates of its language
    (:func:`polybias.studies.seat.load_templates`).

    ``test`` is a :class:`polybias.data.wordlists.AssociationTest` or a word-level
    :class:`SeatTest` (:func:`polybias.studies.seat.load_word_test`); ``groups`` names the template group of
    every set (one name for all, or a mapping role → group).
    """
    if templates.language != test.language:
        raise SeatError(f"test {test.name!r} is in {test.language!r} but the templates are in "
                        f"{templates.language!r}")
    by_role = {r: groups for r in ROLES} if isinstance(groups, str) else dict(groups)
    missing = [r for r in ROLES if r not in by_role]
    if missing:
        raise SeatError(f"templated_test: no template group for set(s) {', '.join(missing)}")
    if isinstance(test, SeatTest):
        words, categories, origin = test.sentences, dict(test.categories), test.source
    else:
        sets = test.sets()
        words = {r: sets[r].words for r in ROLES}
        categories = {r: sets[r].name for r in ROLES}
        origin = Path(test.file).name if test.file else "word lists"
    sentences = {r: tuple(fill_templates(words[r], by_role[r], templates)) for r in ROLES}
    return SeatTest(test.name, sentences, categories, test.language,
                    source=f"{origin} + {Path(templates.file).name if templates.file else 'templates'}")
