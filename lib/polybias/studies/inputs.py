"""What the template-based notebooks (04, 06, 07) run on: a template book given by name,
and a language model given by name or planted on the fly.

One call each replaces the dispatch the notebooks would otherwise write out:
:func:`template_book` reads ``planted_<lang>`` and ``planted_interactions_<lang>``
(:mod:`polybias.planted.probes`), ``seed000_bn`` (seed 000's S1–S5 trait sentences,
:func:`polybias.data.seed000.kurita_templates`), ``seed002_<category>_<language>``
(:func:`polybias.data.seed002.book_from_name`), ``seed004_countries`` (seed 004's 245
countries, :func:`polybias.studies.seed004.country_templates`) or a template file in ``data/templates``;
:func:`language_model` loads ``model`` through :func:`polybias.models.load`: for
``model="planted"``, the planted masked LM of strength ``planted_p``; for
``model="planted-analytic"``, the analytic masked LM built from the template book
(:mod:`polybias.planted.analytic`).
"""

from __future__ import annotations

from .. import models
from ..data import seed000, seed002, templating
from ..data.templating import TemplateBook
from ..planted import probes

PLANTED = "planted"  # the model name that asks for a planted MLM of a chosen strength
ANALYTIC = "planted-analytic"  # the analytic MLM built from the template book (planted.analytic.NAME)
#: Model names whose association strength is the notebook's ``planted_p``.
PLANTED_MODELS = (PLANTED, ANALYTIC)


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
    if name == "seed004_countries":
        from . import seed004

        return seed004.country_templates()
    if name.startswith(seed002.BOOK_PREFIX):
        return seed002.book_from_name(name)
    return templating.load_templates(name)


def language_model(model: str, *, planted_p: float | None = None, language: str = "en",
                   seed: int = 0, revision: str = "", device: str = "auto", dtype="auto",
                   batch_tokens: int = 0, book: TemplateBook | None = None,
                   target_list: str = "targets", attribute_list: str = "attributes",
                   group_feature: str = "group", x: str = "male", y: str = "female",
                   a: str = "career", b: str = "family"):
    """The language model a notebook scores with, named ``model`` in its records.

    ``model="planted"``: the planted masked LM of :func:`polybias.planted.synthetic.cached_planted_model`
    trained on the ``language`` corpus with association strength ``planted_p`` and training
    seed ``seed`` (trained once, then cached; the defaults of the registered
    ``planted-mlm``), named ``planted-p<planted_p>``. Anything else: a registered name, a
    model directory or a hub id, loaded as a masked or causal LM by
    :func:`polybias.models.load` with ``revision``, ``device``, ``dtype`` and
    ``batch_tokens``.

    ``model="planted-analytic"``: the analytic masked LM of ``book``
    (:func:`polybias.planted.analytic.cached_analytic_mlm`: built once into the cache, no
    training, the same on every CPU) with association strength ``planted_p``, target groups
    ``x``/``y`` of ``target_list`` and attribute groups ``a`` (planted towards ``x``) and
    ``b`` of ``attribute_list``, read from the entries' ``group_feature``; loaded from its
    directory by :func:`polybias.models.load`, on the CPU and in float64 unless
    ``device``/``dtype`` say otherwise, and named ``planted-analytic-p<planted_p>``.
    """
    if model == ANALYTIC:
        return analytic_language_model(book, planted_p, seed=seed, revision=revision, device=device,
                                       dtype=dtype, batch_tokens=batch_tokens, target_list=target_list,
                                       attribute_list=attribute_list, group_feature=group_feature,
                                       x=x, y=y, a=a, b=b)
    if model == PLANTED:
        if planted_p is None:
            raise models.ModelError("model 'planted' needs planted_p, the association strength")
        return models.load(f"planted-p{planted_p}", "mlm", device=device, dtype=dtype,
                           revision=revision, batch_tokens=batch_tokens,
                           trained={"kind": "mlm", "p": planted_p, "seed": seed,
                                    "language": language})
    return models.load(model, "lm", revision=revision, device=device, dtype=dtype,
                       batch_tokens=batch_tokens)


def analytic_language_model(book: TemplateBook | None, planted_p: float | None, *, seed: int = 0,
                            revision: str = "", device: str = "auto", dtype="auto",
                            batch_tokens: int = 0, target_list: str = "targets",
                            attribute_list: str = "attributes", group_feature: str = "group",
                            x: str = "male", y: str = "female", a: str = "career",
                            b: str = "family"):
    """The analytic masked LM of ``book`` at strength ``planted_p`` (see
    :func:`language_model`), loaded through :func:`polybias.models.load` from its cached
    directory; its recorded revision is ``analytic:<cache key>``."""
    from ..planted import analytic

    if book is None:
        raise models.ModelError(f"model {ANALYTIC!r} is built from a template book: pass book=")
    if planted_p is None:
        raise models.ModelError(f"model {ANALYTIC!r} needs planted_p, the association strength")
    if revision:
        raise models.ModelError(f"model {ANALYTIC!r} is built from the template book: it has no "
                                f"revision to choose (got {revision!r})")
    folder, key = analytic.cached_analytic_mlm(
        book, planted_p, target_list=target_list, attribute_list=attribute_list,
        feature=group_feature, x=x, y=y, a=a, b=b, seed=seed)
    name = f"{ANALYTIC}-p{planted_p}"
    registry = {name: {"kind": "mlm", "path": str(folder), "revision": f"analytic:{key}"}}
    return models.load(name, "mlm", registry=registry,
                       device="cpu" if device in ("", "auto") else device,
                       dtype="float64" if dtype in ("", "auto", None) else dtype,
                       batch_tokens=batch_tokens)


def encoder(model: str, *, language: str = "en", wordlist_file: str = "",
            planted_strength: float = 0.5, seed: int = 0, revision: str = "",
            device: str = "auto", dtype="auto", batch_tokens: int = 0):
    """The sentence encoder a SEAT notebook runs on: for ``model`` named
    :data:`polybias.planted.static.NAME`, the known-answer bag-of-words encoder over the
    planted static table of the language's word lists
    (:func:`planted_bag_of_words`); anything else through
    :func:`polybias.models.load` as an encoder."""
    from ..planted import static as planted_static

    if model == planted_static.NAME:
        return planted_bag_of_words(language, wordlist_file, strength=planted_strength, seed=seed)
    return models.load(model, "encoder", revision=revision, device=device, dtype=dtype,
                       batch_tokens=batch_tokens)


def static_table(model: str, *, language: str = "en", wordlist_file: str = "",
                 planted_strength: float = 0.5, seed: int = 0, model_path: str = "",
                 model_format: str = ""):
    """The static table a WEAT notebook runs on in place of the registered ``model``:
    the embedding file ``model_path`` (read in ``model_format``, named ``model``, its
    words brought to NFC as the word lists are), else for ``model`` named
    :data:`polybias.planted.static.NAME` the known-answer table planted from the
    language's word lists (:func:`polybias.planted.static.for_wordlists`), else None (the
    registered model is loaded by name)."""
    from ..engines.static import normalize_vocabulary
    from ..planted import static as planted_static

    if model_path:
        return normalize_vocabulary(models.load(model_path, "static", format=model_format, name=model))
    if model == planted_static.NAME:
        return planted_static.for_wordlists(language, wordlist_file, strength=planted_strength, seed=seed)
    return None


def planted_bag_of_words(language: str, wordlist_file: str = "", strength: float = 0.5,
                         dim: int = 64, seed: int = 0, name: str | None = None):
    """A :class:`polybias.planted.static.BagOfWords` encoder over
    :func:`polybias.planted.static.planted_embedding` of the language's word lists, its table extended with every word of the language's SEAT templates
    (``data/templates/seat_<language>.yaml``) as an unplanted random unit vector: a
    sentence's vector is the mean of its list word (planted) and its template words
    (noise), so SEAT on it must find the planted effects, diluted by the templates."""
    import numpy as np

    from ..data.wordlists import load_tests
    from ..engines.static import StaticEmbeddings
    from ..planted import static as ps
    from .seat import load_templates as load_seat_templates

    name = name or ps.NAME
    tests = load_tests(language, wordlist_file)
    table = ps.planted_embedding(tests, strength=strength, dim=max(dim, len(tests)), seed=seed, name=name)
    templates = load_seat_templates(language)
    extra = [w for texts in templates.groups.values() for t in texts
             for w in ps.words_of(t.replace("{X}", " ").replace("{aX}", " ")) if w not in table.index]
    extra = list(dict.fromkeys(extra))
    if extra:
        table = StaticEmbeddings(name, table.words + extra,
                                 np.vstack([table.vectors, np.stack([ps._unit(w, seed, table.dim) for w in extra])]),
                                 revision=table.revision)
    return ps.BagOfWords(table, name=name, revision=f"{table.revision},bag-of-words")
