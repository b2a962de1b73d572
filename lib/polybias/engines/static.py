"""Static word embeddings as a table: :class:`StaticEmbeddings` (plain words + a matrix),
looked up by :func:`lookup`. Files are read by the one model loader
(:func:`polybias.models.load`); planted word2vec models (:mod:`polybias.planted`) and the
debiasing methods (:mod:`polybias.metrics.debias`) build tables of their own.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field
from typing import Literal

import numpy as np


class VectorsError(ValueError):
    """A table whose words and vectors do not match."""


class MissingWordsError(KeyError):
    """Words of a list are not in the model's vocabulary."""

    def __init__(self, missing: list[str], model: str = "", where: str = ""):
        self.missing = list(missing)
        label = f" ({where})" if where else ""
        super().__init__(
            f"{len(missing)} word(s){label} not in the vocabulary of {model or 'the model'}: "
            f"{', '.join(missing)}. Pass on_missing='drop' to drop them (the record lists them)."
        )

    def __str__(self) -> str:  # KeyError quotes its message otherwise
        return self.args[0]


@dataclass
class StaticEmbeddings:
    """A static embedding table: ``vectors[i]`` is the vector of ``words[i]``."""

    name: str
    words: list[str]
    vectors: np.ndarray
    revision: str | None = None
    index: dict[str, int] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        if self.vectors.ndim != 2 or self.vectors.shape[0] != len(self.words):
            raise VectorsError(
                f"{self.name}: {len(self.words)} words but vectors of shape {self.vectors.shape}"
            )
        self.index = {}
        for i, w in enumerate(self.words):
            self.index.setdefault(w, i)  # first occurrence wins, as in word2vec/gensim

    def __contains__(self, word: str) -> bool:
        return word in self.index

    def __len__(self) -> int:
        return len(self.words)

    @property
    def dim(self) -> int:
        return int(self.vectors.shape[1])


def lookup(
    emb: StaticEmbeddings,
    words: list[str],
    on_missing: Literal["raise", "drop"] = "raise",
    where: str = "",
) -> tuple[np.ndarray, list[str], list[str]]:
    """Vectors of ``words`` as a matrix, with the kept and the dropped words.

    >>> emb = StaticEmbeddings("toy", ["a", "b"], np.eye(2, dtype=np.float32))
    >>> m, kept, dropped = lookup(emb, ["b", "zz"], on_missing="drop")
    >>> m.tolist(), kept, dropped
    ([[0.0, 1.0]], ['b'], ['zz'])
    """
    if on_missing not in ("raise", "drop"):
        raise ValueError(f"on_missing must be 'raise' or 'drop', got {on_missing!r}")
    missing = [w for w in words if w not in emb.index]
    if missing and on_missing == "raise":
        raise MissingWordsError(missing, emb.name, where)
    kept = [w for w in words if w in emb.index]
    rows = np.fromiter((emb.index[w] for w in kept), dtype=np.int64, count=len(kept))
    return emb.vectors[rows], kept, missing


def normalize_vocabulary(emb, form: str = "NFC"):
    """A static embedding table whose words are in the normal form of the word lists (NFC).

    Embedding files trained on unnormalised text may spell a word with precomposed
    characters that the lists write decomposed (Bangla য়, Devanagari ड़ …); lookups then
    miss. Vectors are shared, not copied; when two spellings collide, the first (most
    frequent, in word2vec order) wins, as in :class:`StaticEmbeddings`.

    >>> from polybias.engines.static import StaticEmbeddings
    >>> import numpy as np
    >>> emb = StaticEmbeddings("toy", ["\\u095c"], np.ones((1, 2), dtype=np.float32))
    >>> "\\u0921\\u093c" in normalize_vocabulary(emb)
    True
    """
    words = [unicodedata.normalize(form, w) for w in emb.words]
    return StaticEmbeddings(emb.name, words, emb.vectors, revision=emb.revision)
