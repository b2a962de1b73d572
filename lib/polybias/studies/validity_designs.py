"""The validity designs: the one producer of every number measured on a planted model.

A *design* is a planted model family and the items it is probed with: ``weat`` (word2vec,
the planted target and attribute words), ``crows-mlm`` and ``crows-causal`` (a tiny masked
or causal LM, planted minimal pairs), ``template-mlm`` (the masked LM, planted templates),
``embedding-mlm`` (the masked LM as an encoder: bleached sentences and fresh occurrences),
``embedding-encoder`` (the known-answer encoder of :mod:`polybias.planted.static`, scored as
``embedding-mlm``), ``interactions-mlm`` (the masked LM, the two-slot interaction template)
and ``eurogest-causal`` (a causal LM planted on a language's own EuroGEST sentences).

Which numbers a design reports is the registry's to say: every measure whose entry in
``data/measures.yaml`` lists ``validity_labels`` for a design is computed on it through
:func:`polybias.measures.compute` (:func:`registered_rows`), on the output of the first of
the measure's ``scorers`` that the design runs (:func:`polybias.measures.reads`),
with the options the design offers that the measure takes
(:func:`polybias.measures.option_defaults`). A measure added with a validity label for a design
is therefore measured by the validity sweep and the notebooks without an edit here; a label
that a design cannot produce (its measure reads a scorer the design does not run) is an
error (:func:`check_produced`), never a missing row. Two labels of one measure for one design
are two variants of it (:data:`VARIANTS`: CEAT with its word-permutation p-value; the
interaction CB of the pronoun alone).

The validity sweep (:mod:`polybias.runner.validity_sweep`: many models, several sizes), its
diagnosis (:mod:`polybias.runner.validity_diagnosis`), the EuroGEST validity job and the
notebooks (:func:`dose_response`, notebook 11) all call the functions here.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from polybias import measures, models, paths
from polybias.data import text
from polybias.engines import embeddings, template_scores
from polybias.engines.eurogest_scores import gendered_pair_scores
from polybias.engines.pair_scores import jsd_attributions, pair_scores
from polybias.engines.scoring import wrap_language_model
from polybias.engines.static import lookup
from polybias.measures import compute
from polybias.metrics import ceat, logprob
from polybias.planted import eurogest as planted_eurogest
from polybias.planted import probes
from polybias.planted.synthetic import (
    N_WORD2VEC_SENTENCES,
    minimal_pairs,
    planted_corpus,
    planted_groups,
    planted_word2vec,
)
from polybias.stats import CONFIDENCE_LEVEL, N_BOOTSTRAP, N_PERMUTATIONS_SHORT
from polybias.studies import categorical_bias
from polybias.studies.validity_statistics import ValidityError

DESIGNS = ("weat", "crows-mlm", "crows-causal", "template-mlm", "embedding-mlm")
"""The validity designs :func:`dose_response` knows (a planted model and the probes run
on it); the sweep also runs ``interactions-mlm``, its diagnosis ``embedding-encoder``."""

EUROGEST_DESIGN = "eurogest-causal"
"""The validity design of the EuroGEST measure: a causal LM planted on a language's own
EuroGEST sentences (:mod:`polybias.planted.eurogest`), the measure on its held-out pairs."""

VARIANTS: dict[str, dict[str, dict[str, Any]]] = {
    "embedding-mlm": {"ceat-ces-perm": {"pvalue": "word-permutation"}},
    "embedding-encoder": {"ceat-ces-perm": {"pvalue": "word-permutation"}},
}
"""Per design, the labels that report a measure under other options than its first label:
``ceat-ces-perm`` is CEAT's CES with the word-permutation p-value
(:func:`polybias.metrics.ceat.ceat_permutation`). (``pronoun-cb``, the interaction CB of the
pronoun slot alone, is scored on other groups: :func:`interaction_rows`.)"""

FRESH_SEED_OFFSET = 10_000
"""Added to a run's seed to draw the fresh planted corpus that CEAT reads
(:func:`embedding_rows`): sentences the model was not trained on, from the same
distribution, and a different draw for every seed."""

LM_TRAINING = {"mlm": {"epochs": 10, "batch_size": 16}, "causal": {"epochs": 5, "batch_size": 16}}
"""Training options of the planted LMs used here: small enough to train in seconds."""

N_SENTENCES = 3000
"""Sentences of the planted corpus each planted LM of a design is trained on."""

BLEACHED = {"en": "the {w} .", "bn": "{w} ।", "hi": "{w} ।"}
"""The bleached sentence SEAT embeds each planted word in, per corpus language."""

NAN = float("nan")


# ------------------------------------------------------------------ the registry's measures


def declared(design: str) -> list[tuple[str, str]]:
    """``(measure, label)`` of every validity label the registry declares for ``design``,
    in the registry's order.

    >>> declared("crows-causal")
    [('crows', 'stereotype-score'), ('jsd-b', 'jsd-B')]
    """
    return [(m.name, label) for m in measures.MEASURES.values()
            for label in m.validity_labels.get(design, ())]


def registered_rows(design: str, supplied: dict[str, Callable[[], dict[str, Any]]],
                    options: dict[str, Any]) -> list[dict[str, Any]]:
    """Every measure the registry declares for ``design`` that reads one of the scorers in
    ``supplied``, computed through :func:`polybias.measures.compute`.

    ``supplied`` maps a scorer's dotted name to a function returning the measure inputs it
    gives (by input name; called once, when a measure first reads it); ``options`` are the
    options the design offers (a measure gets those it takes, and its label's
    :data:`VARIANTS`). A measure whose scorers are all missing from ``supplied`` is left to
    another call (:func:`check_produced` says if none produced it).

    Returns one dict per label: ``metric`` (the label), ``value``, ``null`` (the measure's
    ``null_value`` when it has a test, else NaN) and ``pvalue`` (NaN without one).
    """
    made: dict[str, dict[str, Any]] = {}
    rows = []
    for name, label in declared(design):
        source = measures.reads(name, supplied)
        if source is None:
            continue
        if source not in made:
            made[source] = supplied[source]()
        m = measures.get(name)
        missing = [k for k in m.inputs if k not in made[source]]
        if missing:
            raise ValidityError(f"design {design!r}: measure {name!r} (label {label!r}) needs the "
                                f"inputs {missing}, which the design's {source} does not give "
                                f"(it gives {sorted(made[source])})")
        r = measures.compute_offered(name, made[source], options, **VARIANTS.get(design, {}).get(label, {}))
        tested = m.uncertainty != "none"
        rows.append({"metric": label, "value": float(r.value), "null": m.null_value if tested else NAN,
                     "pvalue": NAN if r.p_value is None else float(r.p_value)})
    return rows


def check_produced(design: str, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``rows``, after checking that every label the registry declares for ``design``
    (:func:`declared`) is among their ``metric``; a label none produced raises
    :class:`polybias.studies.validity_statistics.ValidityError` naming it and its measure's scorers.

    >>> check_produced("crows-causal", [{"metric": "stereotype-score"}])
    Traceback (most recent call last):
    ...
    polybias.studies.validity_statistics.ValidityError: design 'crows-causal' produced no 'jsd-B' (measure 'jsd-b', which reads polybias.engines.pair_scores.jsd_attributions): the design runs none of these scorers
    """
    produced = {r["metric"] for r in rows}
    for name, label in declared(design):
        if label not in produced:
            raise ValidityError(f"design {design!r} produced no {label!r} (measure {name!r}, which "
                                f"reads {', '.join(measures.scorer_names(name))}): the design runs "
                                "none of these scorers")
    return rows


# ------------------------------------------------------------------ the designs


def word_subset(words: list[str], k: int | None, rng: np.random.Generator | None) -> list[str]:
    """``k`` of ``words`` drawn without replacement by ``rng``, in their order; all of them
    (and nothing drawn) when ``k`` is None or at least their number.

    >>> word_subset(["a", "b", "c"], 5, np.random.default_rng(0))
    ['a', 'b', 'c']
    >>> len(word_subset(["a", "b", "c"], 2, np.random.default_rng(0)))
    2
    """
    if k is None or k >= len(words):
        return list(words)
    return [words[i] for i in sorted(rng.choice(len(words), size=k, replace=False))]


def _roles(language: str) -> dict[str, list[str]]:
    groups = planted_groups(language)
    return {"X": groups["targets"]["male"], "Y": groups["targets"]["female"],
            "A": groups["attributes"]["career"], "B": groups["attributes"]["family"]}


def weat_rows(embedding, language: str, seed: int, sizes: list[int | None],
              n_permutations: int) -> list[dict[str, Any]]:
    """The ``weat`` design on a planted word2vec: for each ``k`` of ``sizes``, ``k`` words per
    set (:func:`word_subset` seeded ``(seed, k, 1)``; None: every word) of X = male,
    Y = female, A = career, B = family, looked up in ``embedding``; every measure declared
    for the design (WEAT: effect size, one-sided permutation p). Rows carry ``size_key``
    ``weat_words`` and ``size``."""
    roles = _roles(language)
    rows = []
    for k in sizes:
        rng = np.random.default_rng([seed, k, 1]) if k is not None else None

        def vectors(k=k, rng=rng):
            return {r: lookup(embedding, word_subset(ws, k, rng), on_missing="raise")[0]
                    for r, ws in roles.items()}

        rows += [{**r, "size_key": "weat_words", "size": k} for r in registered_rows(
            "weat", {"polybias.engines.static.lookup": vectors},
            {"n_permutations": n_permutations, "seed": seed})]
    return check_produced("weat", rows)


def pair_rows(lm, design: str, language: str, seed: int, sizes: list[int]) -> list[dict[str, Any]]:
    """The ``crows-mlm`` / ``crows-causal`` design: ``minimal_pairs(max(sizes), language,
    seed)`` scored once by ``lm`` (:func:`polybias.engines.pair_scores.pair_scores` and
    :func:`polybias.engines.pair_scores.jsd_attributions`), then for each ``k`` of ``sizes``
    every declared measure on the first ``k`` pairs (no bootstrap). Rows carry ``size_key``
    ``crows_pairs`` and ``size``."""
    pairs = minimal_pairs(max(sizes), language=language, seed=seed)
    scored = functools.lru_cache(maxsize=None)(lambda: pair_scores(lm, pairs))
    attributed = functools.lru_cache(maxsize=None)(lambda: jsd_attributions(lm, pairs))
    rows = []
    for k in sizes:
        supplied = {"polybias.engines.pair_scores.pair_scores": lambda k=k: {"scored": scored().iloc[:k]},
                    "polybias.engines.pair_scores.jsd_attributions":
                        lambda k=k: {"attributed": attributed().iloc[:k]}}
        rows += [{**r, "size_key": "crows_pairs", "size": k}
                 for r in registered_rows(design, supplied, {"n_bootstrap": 0})]
    return check_produced(design, rows)


def template_rows(lm, language: str, seed: int, sizes: list[int], n_permutations: int
                  ) -> list[dict[str, Any]]:
    """The ``template-mlm`` design: the planted templates
    (:func:`polybias.planted.probes.planted_templates`) scored once by Kurita's corrected
    log-probabilities (:func:`polybias.engines.template_scores.kurita_scores`); for each ``k``
    of ``sizes``, the first ``k`` templates: Kurita's effect size (male − female, career vs
    family, one-sided permutation p), Ahn & Oh's CB (population variance over the targets)
    and the PLL-based CB (:func:`polybias.studies.categorical_bias.pll_scores` of those
    templates), with any other measure declared for the design. Rows carry ``size_key``
    ``kurita_templates`` and ``size``."""
    book = probes.planted_templates(language)
    names = list(book.templates)
    scores = template_scores.kurita_scores(lm, book, names)
    targets = logprob.group_members(book, "targets")
    attributes = logprob.group_members(book, "attributes")
    rows = []
    for k in sizes:
        used = names[:k]
        supplied = {
            "polybias.engines.template_scores.kurita_scores": lambda used=used: {
                "scores": scores[scores["template"].isin(used)], "x": targets["male"],
                "y": targets["female"], "a": attributes["career"], "b": attributes["family"]},
            "polybias.studies.categorical_bias.pll_scores": lambda used=used: {
                "scores": categorical_bias.pll_scores(lm, book, used)}}
        rows += [{**r, "size_key": "kurita_templates", "size": k} for r in registered_rows(
            "template-mlm", supplied, {"n_permutations": n_permutations, "seed": seed})]
    return check_produced("template-mlm", rows)


def embedding_rows(encoder, sentence_vectors, p: float, seed: int, language: str,
                   n_sentences: int, seat_words: list[int | None], ceat_samples: list[int],
                   n_permutations: int, layer: int = -1, design: str = "embedding-mlm"
                   ) -> list[dict[str, Any]]:
    """The ``embedding-mlm`` (or ``embedding-encoder``) design: SEAT and CEAT of an encoder
    on the planted groups, at every size asked for.

    SEAT: each group word in its language's bleached sentence (:data:`BLEACHED`), embedded
    by ``sentence_vectors(texts) -> (n, dim)`` one group at a time; for each ``k`` of
    ``seat_words``, ``k`` words per set (:func:`word_subset` seeded ``(seed, k, 2)``; None:
    every word); WEAT statistics with a one-sided permutation p. CEAT: a fresh planted
    corpus of strength ``p`` (``planted_corpus(n_sentences, p, seed + FRESH_SEED_OFFSET)``:
    sentences the model has not seen); for each ``k`` of ``ceat_samples``, ``k`` occurrences
    per word (seeded), occurrence vectors of ``encoder`` at ``layer``
    (:func:`polybias.engines.embeddings.occurrence_vectors`), random-effects CES with its
    normal two-tailed p (``ceat-ces``) and the word-permutation p (``ceat-ces-perm``,
    :data:`VARIANTS`). X = male, Y = female, A = career, B = family terms.

    Returns the SEAT rows size by size, then per CEAT size its rows; ``size_key``
    (``seat_words`` or ``ceat_samples``) and ``size`` (None: every word).
    """
    sets = _roles(language)
    offered = {"n_permutations": n_permutations, "seed": seed}
    vec = {r: dict(zip(ws, sentence_vectors([BLEACHED[language].format(w=w) for w in ws]), strict=True))
           for r, ws in sets.items()}
    rows = []
    for k in seat_words:
        rng = np.random.default_rng([seed, k, 2]) if k is not None else None
        chosen = {r: np.stack([vec[r][w] for w in word_subset(ws, k, rng)]) for r, ws in sets.items()}
        rows += [{**r, "size_key": "seat_words", "size": k} for r in registered_rows(
            design, {"polybias.engines.embeddings.sentence_vectors": lambda chosen=chosen: chosen}, offered)]
    fresh = planted_corpus(n_sentences, p, seed=seed + FRESH_SEED_OFFSET, language=language)
    found = text.find_occurrences(fresh, [w for ws in sets.values() for w in ws], language=language)
    for k in ceat_samples:
        def stacked(k=k):
            vectors = embeddings.occurrence_vectors(encoder, text.sample_occurrences(found, k, seed=seed),
                                                    layer=layer)
            return {r: ceat.stack_occurrences(vectors, ws, r) for r, ws in sets.items()}

        rows += [{**r, "size_key": "ceat_samples", "size": k} for r in registered_rows(
            design, {"polybias.engines.embeddings.occurrence_vectors": stacked}, offered)]
    return check_produced(design, rows)


INTERACTION_SLOTS = {"interaction-cb": ["pro", "target"], "pronoun-cb": ["pro"]}
"""The identity slots of each label of the ``interactions-mlm`` design: the target × pronoun
interaction, and the pronoun alone (a control with nothing planted)."""


def interaction_rows(lm, language: str) -> list[dict[str, Any]]:
    """The ``interactions-mlm`` design: the interaction CB of the planted interaction
    template (:func:`polybias.planted.probes.planted_interaction_templates`, template
    ``said``) over the identity slots of each label (:data:`INTERACTION_SLOTS`), through
    :func:`polybias.studies.categorical_bias.interaction_cb` (the registered
    ``interaction-cb``). Rows carry ``size_key`` ``kurita_templates`` and ``size`` 1."""
    book = probes.planted_interaction_templates(language)
    rows = []
    for label in [label for _, label in declared("interactions-mlm")]:
        if label not in INTERACTION_SLOTS:
            raise ValidityError(f"design 'interactions-mlm' has no identity slots for the label {label!r}; "
                                f"it knows {sorted(INTERACTION_SLOTS)}")
        r = categorical_bias.interaction_cb(lm, book, "said", INTERACTION_SLOTS[label], "attribute")
        rows.append({"metric": label, "value": r.score, "null": NAN, "pvalue": NAN,
                     "size_key": "kurita_templates", "size": 1})
    return check_produced("interactions-mlm", rows)


def _check_p(p: float) -> float:
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0.0 <= p <= 1.0:
        raise ValidityError(f"p must be a number in [0, 1], got {p!r}")
    return float(p)


def planted_lm(kind: str, p: float, seed: int = 0, language: str = "en",
               n_sentences: int = N_SENTENCES, **training: Any):
    """The tiny planted LM of a design as a :class:`polybias.engines.scoring.LanguageModel`,
    loaded by the one loader (:func:`polybias.models.load` with ``trained=``: trained once
    per input set, then read from the cache or the pinned store), named
    ``planted-<kind>-p<p>-s<seed>``, with :data:`LM_TRAINING` updated by ``training``. The
    measures of one model share it: within a process, a model is read from disk once."""
    if kind not in LM_TRAINING:
        raise ValidityError(f"kind must be one of {tuple(LM_TRAINING)}, got {kind!r}")
    options = {**LM_TRAINING[kind], **training}
    return _loaded_lm(kind, _check_p(p), seed, language, n_sentences,
                      tuple(sorted(options.items())), str(paths.cache_dir()))


@functools.lru_cache(maxsize=16)
def _loaded_lm(kind: str, p: float, seed: int, language: str, n_sentences: int,
               options: tuple, cache: str):
    """Load (training first if needed) one planted LM; ``cache`` keys the memo on the
    cache folder in use. The models are only read (eval mode), so sharing them is safe."""
    return models.load(f"planted-{kind}-p{p:g}-s{seed}", kind,
                       trained={"kind": kind, "p": p, "seed": seed, "language": language,
                                "n_sentences": n_sentences, **dict(options)})


def masked_encoder(lm):
    """The planted masked LM ``lm`` as an encoder (mean over a word's pieces) and its
    sentence vectors at the last layer: the two readers of :func:`embedding_rows`."""
    encoder = embeddings.wrap_encoder(lm.model, lm.tokenizer, name=lm.name, revision=lm.revision,
                                      pooling="mean")
    return encoder, lambda texts: embeddings.sentence_vectors(encoder, texts, pooling="mean")


# ------------------------------------------------------------------ one model, one size


def _tag(design: str, p: float, seed: int, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"measure": design, "metric": r["metric"], "p": float(p), "seed": seed,
             "value": r["value"], "null": r["null"], "pvalue": r["pvalue"]} for r in rows]


def planted_weat(p: float, seed: int = 0, language: str = "en",
                 n_sentences: int = N_WORD2VEC_SENTENCES, n_permutations: int = N_PERMUTATIONS_SHORT,
                 **word2vec: Any) -> list[dict[str, Any]]:
    """The ``weat`` design on word2vec trained on a planted corpus of strength ``p``, every
    target and attribute word (:func:`weat_rows`).

    Returns one dict per declared label (WEAT: ``metric`` "effect-size") with ``measure``
    ("weat"), ``p``, ``seed``, ``value``, ``null`` and ``pvalue``.

    >>> rows = planted_weat(0.9, seed=0, n_sentences=1500, n_permutations=1000)
    >>> rows[0]["metric"], rows[0]["value"] > 0.5
    ('effect-size', True)
    >>> rows == planted_weat(0.9, seed=0, n_sentences=1500, n_permutations=1000)
    True
    """
    p = _check_p(p)
    emb = planted_word2vec(p, seed=seed, language=language, n_sentences=n_sentences, **word2vec)
    return _tag("weat", p, seed, weat_rows(emb, language, seed, [None], n_permutations))


def planted_template_scores(p: float, seed: int = 0, language: str = "en",
                            n_sentences: int = N_SENTENCES, n_permutations: int = N_PERMUTATIONS_SHORT,
                            **training: Any) -> list[dict[str, Any]]:
    """The ``template-mlm`` design on the tiny planted MLM, every planted template
    (:func:`template_rows`): Kurita's effect size (null 0, permutation p over attributes),
    Ahn & Oh's CB and its PLL variant (variances: no sign and no test; they should grow with
    ``|p - 0.5|``). ``measure`` "template-mlm"."""
    lm = planted_lm("mlm", p, seed, language, n_sentences, **training)
    n = len(probes.planted_templates(language).templates)
    return _tag("template-mlm", p, seed, template_rows(lm, language, seed, [n], n_permutations))


def planted_embedding_scores(p: float, seed: int = 0, language: str = "en",
                             n_sentences: int = N_SENTENCES, n_samples: int = 20,
                             n_permutations: int = N_PERMUTATIONS_SHORT, **training: Any
                             ) -> list[dict[str, Any]]:
    """The ``embedding-mlm`` design on the tiny planted MLM used as an encoder (its last
    layer, mean over a word's pieces; :func:`embedding_rows` at one size): SEAT on every
    word in its bleached sentence, CEAT on ``n_samples`` occurrences per word of a fresh
    corpus, with its normal and its word-permutation p. ``measure`` "embedding-mlm"."""
    lm = planted_lm("mlm", p, seed, language, n_sentences, **training)
    encoder, sentence_vectors = masked_encoder(lm)
    return _tag("embedding-mlm", p, seed, embedding_rows(
        encoder, sentence_vectors, p, seed, language, n_sentences, seat_words=[None],
        ceat_samples=[n_samples], n_permutations=n_permutations))


def planted_lm_scores(kind: str, p: float, seed: int = 0, language: str = "en",
                      n_sentences: int = N_SENTENCES, n_pairs: int = 100, **training: Any
                      ) -> list[dict[str, Any]]:
    """The ``crows-<kind>`` design on a tiny LM trained on a planted corpus
    (:func:`pair_rows` on ``minimal_pairs(n_pairs, language, seed)``, whose ``sent_more``
    follows the association planted by ``p > 0.5``): the stereotype score and the JSD
    stereotype score B, percentages (null 50) with the two-sided exact binomial p of the
    untied pairs. ``measure`` = ``"crows-" + kind``."""
    lm = planted_lm(kind, p, seed, language, n_sentences, **training)
    return _tag(f"crows-{kind}", p, seed, pair_rows(lm, f"crows-{kind}", language, seed, [n_pairs]))


def planted_eurogest_scores(p: float, seed: int = 0, language: str = "cs",
                            n_bootstrap: int = N_BOOTSTRAP, level: float = CONFIDENCE_LEVEL,
                            **training: Any) -> dict[str, Any]:
    """The EuroGEST measure (``eurogest``: the masculine rate per stereotype and g_s, with
    the authors' defaults) of a causal LM planted on ``language``'s own EuroGEST sentences
    (:func:`polybias.planted.eurogest.planted_eurogest_lm`), computed on the held-out pairs
    (:func:`polybias.planted.eurogest.split_pairs`), which the model never saw.

    ``p > 0.5`` plants a masculine association of the masculine stereotypes (g_s > 1); the
    measure resolves it when its bootstrap interval at ``level`` lies above 1. The interval
    resamples the held-out sentences within each stereotype (seed ``seed``), so, as the
    other measures' own tests, it holds the model fixed.

    Returns
    -------
    dict with ``measure`` (:data:`EUROGEST_DESIGN`), ``metric`` ("g_s"), ``p``, ``seed``,
    ``value`` (g_s), ``null`` (1.0), ``low``, ``high`` and ``level`` (the interval), ``n``
    (held-out pairs), ``rated`` (stereotypes with a rate), ``feminine_rate`` and
    ``masculine_rate`` (the mean rate of the feminine and of the masculine stereotypes),
    ``rate_1`` ... ``rate_16`` (the rate per stereotype) and ``model`` (the model's key).
    """
    p = _check_p(p)
    model, tokenizer, key = planted_eurogest.planted_eurogest_lm(language, p, seed, **training)
    lm = wrap_language_model(model, tokenizer, name=f"planted-eurogest-{language}-p{p:g}-s{seed}",
                             kind="causal", revision=f"planted:{key}")
    _, held = planted_eurogest.split_pairs(language)
    (label,) = [label for _, label in declared(EUROGEST_DESIGN)]
    result = compute("eurogest", scored=gendered_pair_scores(lm, held), n_bootstrap=n_bootstrap,
                     seed=seed, level=level)
    rates = result.details.set_index("stereotype")
    means = rates.groupby("stereotype_gender")["masculine_rate"].mean()
    iv = result.interval
    return {"measure": EUROGEST_DESIGN, "metric": label, "p": p, "seed": seed,
            "value": result.value, "null": 1.0, "low": iv.low if iv else np.nan,
            "high": iv.high if iv else np.nan, "level": level, "n": result.n,
            "rated": int(rates["masculine_rate"].notna().sum()),
            "feminine_rate": float(means.get("feminine", np.nan)),
            "masculine_rate": float(means.get("masculine", np.nan)),
            **{f"rate_{s}": float(rates["masculine_rate"].get(s, np.nan)) for s in range(1, 17)},
            "model": key}


def dose_response(designs: list[str] | tuple[str, ...], ps: list[float], seeds: list[int],
                  language: str = "en", progress: bool = False, **options: Any) -> pd.DataFrame:
    """Every design (:data:`DESIGNS`) at every ``p`` and seed: one row per (measure, metric,
    p, seed), ``measure`` the design, every label the registry declares for it.

    ``options`` go to :func:`planted_weat` (keys ``weat_*`` with the prefix removed) and
    the planted LMs' designs (keys ``lm_*``; ``lm_n_pairs`` to the pairs only), e.g.
    ``weat_n_sentences=4000``, ``lm_n_pairs=100``.
    """
    unknown = sorted(set(designs) - set(DESIGNS))
    if unknown or not designs:
        raise ValidityError(f"unknown or no designs {unknown}; known: {DESIGNS}")
    if not ps or not seeds:
        raise ValidityError("ps and seeds must be non-empty")
    weat_opts = {k[5:]: v for k, v in options.items() if k.startswith("weat_")}
    lm_opts = {k[3:]: v for k, v in options.items() if k.startswith("lm_")}
    probe_opts = {k: v for k, v in lm_opts.items() if k != "n_pairs"}  # template/embedding probes
    other = sorted(k for k in options if not k.startswith(("weat_", "lm_")))
    if other:
        raise ValidityError(f"options must start with weat_ or lm_: {other}")
    jobs = [(m, p, s) for m in designs for p in ps for s in seeds]
    if progress:
        jobs = tqdm(jobs, desc="dose-response", unit="model")
    rows: list[dict[str, Any]] = []
    for design, p, seed in jobs:
        if design == "weat":
            rows.extend(planted_weat(p, seed, language, **weat_opts))
        elif design == "embedding-mlm":
            rows.extend(planted_embedding_scores(p, seed, language, **probe_opts))
        elif design == "template-mlm":
            rows.extend(planted_template_scores(p, seed, language, **probe_opts))
        else:
            rows.extend(planted_lm_scores(design.split("-", 1)[1], p, seed, language, **lm_opts))
    return pd.DataFrame(rows)
