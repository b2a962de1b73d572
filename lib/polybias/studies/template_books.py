"""The template books the template-based notebooks (04, 06, 07, 08) run on, by name.

Models are named and resolved by :func:`polybias.models.load` (planted ones included).
:func:`template_book` reads ``planted_<lang>`` and ``planted_interactions_<lang>``
(:mod:`polybias.planted.probes`), ``seed000_bn`` (seed 000's S1–S5 trait sentences,
:func:`polybias.data.sadhu2024.kurita_templates`), ``seed002_<category>_<language>``
(:func:`polybias.data.behnamghader2022.book_from_name`), ``seed004_countries`` (seed 004's 245
countries, :func:`polybias.studies.capstone2023.country_templates`) or a template file in
``data/templates``.
"""

from __future__ import annotations

from polybias.data import behnamghader2022, sadhu2024, templating
from polybias.data.templating import TemplateBook
from polybias.planted import probes
from polybias.studies import capstone2023


def template_book(name: str) -> TemplateBook:
    """The template book called ``name`` (see the module docstring for the names).

    >>> template_book("planted_en").language, template_book("planted_interactions_en").file
    ('en', 'planted_interactions_en')
    """
    if name.startswith("planted_interactions_"):
        return probes.planted_interaction_templates(name.rsplit("_", 1)[1])
    if name.startswith("planted_"):
        return probes.planted_templates(name.split("_", 1)[1])
    if name == "seed000_bn":
        return sadhu2024.kurita_templates()
    if name == "seed004_countries":
        return capstone2023.country_templates()
    if name.startswith(behnamghader2022.BOOK_PREFIX):
        return behnamghader2022.book_from_name(name)
    return templating.load_templates(name)
