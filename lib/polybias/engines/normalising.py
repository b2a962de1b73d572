"""A model's text normaliser, applied and described: the text the tokenizer sees, with its
character offsets mapped back to the text as given (:func:`normalise`), and what a run
record or an encoder's cache key says about the normaliser (:func:`normaliser_fields`).

The normalisers themselves (e.g. BanglaBERT's) are :mod:`polybias.models.normalisers`; a
registry entry names one and :func:`polybias.models.load` attaches it to the model.
Used by :mod:`polybias.engines.scoring`, :mod:`polybias.engines.embeddings` and
:mod:`polybias.engines.pair_scores`.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from typing import Any

import numpy as np


def normalise(normaliser: Callable[[str], str] | None, text: str,
              error: type[Exception] = ValueError):
    """``(normalised text, remap)``: ``remap(offsets)`` takes an ``(n, 2)`` array of
    character spans in the normalised text to spans of ``text`` (so spans computed on the
    text as given stay valid). Characters the normaliser keeps map one to one; a span
    inside a stretch it rewrote maps to the whole stretch of ``text`` it came from.

    >>> t, remap = normalise(lambda s: s.replace("colour", "color"), "a colour red")
    >>> t, remap(np.array([[2, 7], [8, 11]])).tolist()
    ('a color red', [[2, 8], [9, 12]])
    """
    if normaliser is None:
        return text, lambda offsets: offsets
    new = normaliser(text)
    if not isinstance(new, str):
        raise error(f"text normaliser returned {type(new).__name__}, not a string")
    if new == text:
        return text, lambda offsets: offsets
    start = np.zeros(len(new) + 1, dtype=np.int64)
    end = np.zeros(len(new) + 1, dtype=np.int64)
    start[len(new)] = len(text)
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(None, text, new, autojunk=False).get_opcodes():
        if op == "equal":
            start[j1:j2] = np.arange(i1, i2)
            end[j1 + 1:j2 + 1] = np.arange(i1 + 1, i2 + 1)
        elif j2 > j1:  # replace or insert
            start[j1:j2] = i1
            end[j1 + 1:j2 + 1] = i2

    def remap(offsets):
        offsets = np.asarray(offsets, dtype=np.int64)
        out = np.stack([start[offsets[..., 0]], end[offsets[..., 1]]], axis=-1)
        out[(offsets[..., 0] == 0) & (offsets[..., 1] == 0)] = 0  # special tokens stay (0, 0)
        return out

    return new, remap


def normaliser_fields(normaliser: Any) -> dict[str, Any] | None:
    """What a run record (and an encoder's cache key) says about a text normaliser (None
    when there is none): its ``to_record()`` when it has one, else the function's name and
    qualified name.

    >>> normaliser_fields(None) is None
    True
    >>> import unicodedata
    >>> normaliser_fields(unicodedata.normalize)["implementation"]
    'unicodedata.normalize'
    """
    if normaliser is None:
        return None
    if callable(getattr(normaliser, "to_record", None)):
        return normaliser.to_record()
    return {"name": getattr(normaliser, "__name__", type(normaliser).__name__),
            "implementation": f"{getattr(normaliser, '__module__', '?')}."
                              f"{getattr(normaliser, '__qualname__', type(normaliser).__name__)}",
            "version": None}
