"""Dataset cards: ``data/datasets/<name>.yaml``, read and checked, and listed one row per
language (``polybias datasets``).

A card holds a dataset's ``name``, ``title``, ``languages``, ``licence``, ``provenance``
(one text, or one per language), its sizes and what else its module lists in its
``CARD_FIELDS`` (:mod:`polybias.data.crowspairs`, :mod:`polybias.data.gest`,
:mod:`polybias.data.stereoset`); each module checks what is particular to its datasets.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pandas as pd

from polybias import paths


def read_card(name: str, fields: tuple[str, ...], error: type[Exception]) -> dict:
    """The card ``data/datasets/<name>.yaml`` as a dict with every one of ``fields``.

    A missing file, malformed YAML, a card that is not a mapping or one that lacks a field
    raises ``error`` naming the file (and the fields).
    """
    path = paths.data_dir() / "datasets" / f"{name}.yaml"
    card = paths.read_yaml(path, error, "dataset card")
    if not isinstance(card, dict):
        raise error(f"{path.name}: a dataset card must be a mapping")
    missing = [f for f in fields if f not in card]
    if missing:
        raise error(f"{path.name}: missing field(s) {', '.join(missing)}")
    return card


def card_rows(card: dict, columns: Callable[[str], dict[str, Any]]) -> pd.DataFrame:
    """One row per language of ``card``: ``dataset`` (its name), ``language``, the columns
    ``columns(language)`` gives (sizes and kinds, in their order), ``licence``,
    ``provenance`` (the language's, when the card gives one per language) and ``title``.

    >>> card = {"name": "toy", "title": "A toy", "languages": ["en", "fr"], "licence": "MIT",
    ...         "provenance": {"en": "native", "fr": "translated"}, "pairs": {"en": 3, "fr": 2}}
    >>> card_rows(card, lambda lang: {"pairs": card["pairs"][lang]})[["language", "pairs", "provenance"]]
      language  pairs  provenance
    0       en      3      native
    1       fr      2  translated
    """
    provenance = card["provenance"]
    return pd.DataFrame([{"dataset": card["name"], "language": language, **columns(language),
                          "licence": card["licence"],
                          "provenance": provenance[language] if isinstance(provenance, dict) else provenance,
                          "title": card["title"]}
                         for language in card["languages"]])
