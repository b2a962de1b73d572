"""What the template-based notebooks (04, 06, 07) run on: a template book given by name,
and a language model given by name or planted on the fly.

One call each replaces the dispatch the notebooks would otherwise write out:
:func:`template_book` reads ``planted_<lang>`` and ``planted_interactions_<lang>``
(:mod:`polybias.planted.probes`), ``seed000_bn`` (seed 000's S1–S5 trait sentences,
:func:`polybias.data.seed000.kurita_templates`), ``seed002_<category>_<language>``
(:func:`polybias.data.seed002.book_from_name`) or a template file in ``data/templates``;
:func:`language_model` loads ``model`` through :func:`polybias.models.load`, or, for
``model="planted"``, the planted masked LM of strength ``planted_p``.
"""

from __future__ import annotations

from .. import models
from ..data import seed000, seed002, templating
from ..data.templating import TemplateBook
from ..planted import probes

PLANTED = "planted"  # the model name that asks for a planted MLM of a chosen strength


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
        return seed000.kurita_templates()
    if name.startswith(seed002.BOOK_PREFIX):
        return seed002.book_from_name(name)
    return templating.load_templates(name)


def language_model(model: str, *, planted_p: float | None = None, language: str = "en",
                   seed: int = 0, revision: str = "", device: str = "auto", dtype="auto",
                   batch_tokens: int = 0):
    """The language model a notebook scores with, named ``model`` in its records.

    ``model="planted"``: the planted masked LM of :func:`polybias.planted.synthetic.cached_planted_model`
    trained on the ``language`` corpus with association strength ``planted_p`` and training
    seed ``seed`` (trained once, then cached; the defaults of the registered
    ``planted-mlm``), named ``planted-p<planted_p>``. Anything else: a registered name, a
    model directory or a hub id, loaded as a masked or causal LM by
    :func:`polybias.models.load` with ``revision``, ``device``, ``dtype`` and
    ``batch_tokens``.
    """
    if model == PLANTED:
        if planted_p is None:
            raise models.ModelError("model 'planted' needs planted_p, the association strength")
        return models.load(f"planted-p{planted_p}", "mlm", device=device, dtype=dtype,
                           revision=revision, batch_tokens=batch_tokens,
                           trained={"kind": "mlm", "p": planted_p, "seed": seed,
                                    "language": language})
    return models.load(model, "lm", revision=revision, device=device, dtype=dtype,
                       batch_tokens=batch_tokens)
