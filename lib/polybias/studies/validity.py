"""Metric validity on planted bias: dose-response and calibration (the project's own study).

None of the source studies checks whether its metric recovers a bias of known size. Here a
corpus with a planted male–career / female–family association of strength ``p``
(:func:`polybias.planted.synthetic.planted_corpus`; ``p = 0.5`` plants none, ``p < 0.5`` the
reverse) trains a model, and each metric is computed on it with the project's defaults:

* :func:`planted_weat` — word2vec on the corpus; WEAT with X = male, Y = female,
  A = career, B = family terms; effect size (null 0) and one-sided permutation p.
* :func:`planted_lm_scores` — a tiny masked or causal LM on the corpus; CrowS-style
  minimal pairs; the stereotype score (Nangia et al. 2020; null 50) and the JSD
  stereotype score B (Gamboa & Lee 2024; null 50), each with its two-sided binomial p.
* :func:`planted_template_scores` — the same tiny MLM probed with templates: Kurita et
  al.'s log-probability bias effect size (null 0, permutation p over attributes) and Ahn
  & Oh's Categorical Bias score (a variance: no sign and no test; it should grow with
  ``|p - 0.5|``).
* :func:`planted_embedding_scores` — the same tiny MLM as an encoder: SEAT (May et al.
  2019) on bleached sentences and CEAT (Guo & Caliskan 2021) on occurrences of the words
  in fresh sentences drawn from the same planted distribution; effect sizes (null 0) with
  their p-values.

:func:`dose_response` runs these designs (:data:`DESIGNS`) over a grid of ``p`` and seeds
(one row per measurement, labelled by its design, ``measure``, and its ``metric``;
:data:`polybias.measures.METRIC_MEASURES` names the registered measure behind
every metric label);
:func:`validity_summary` says, per measure, whether it is monotone in ``p``, whether its
sign follows the planted direction, how far it sits from its null at ``p = 0.5``, and how
often it calls a balanced model biased (false-positive rate at level ``alpha``).

A seed changes the corpus draw and the model's initialisation and training order, so the
spread over seeds at ``p = 0.5`` is what a researcher would see between two equally
unbiased models. A metric's own test (permutation over words, binomial over pairs) treats
the model as fixed: when training noise alone makes the test fire more often than
``alpha``, the test is miscalibrated as a test of the *training data*, and the summary
says by how much.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import beta, binomtest, norm, spearmanr, t
from tqdm.auto import tqdm

from polybias import models, paths
from polybias.data import text
from polybias.engines import embeddings, template_scores
from polybias.engines.eurogest_scores import gendered_pair_scores
from polybias.engines.pair_scores import jsd_attributions, pair_scores
from polybias.engines.scoring import wrap_language_model
from polybias.engines.static import lookup
from polybias.measures import UNSIGNED_LABELS, compute, get, registered_measure
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
from polybias.stats import ALPHA, CONFIDENCE_LEVEL, N_BOOTSTRAP, N_PERMUTATIONS_SHORT

DESIGNS = ("weat", "crows-mlm", "crows-causal", "template-mlm", "embedding-mlm")
"""The validity designs :func:`dose_response` knows (a planted model and the probes run
on it). ``crows-*`` give two rows each: the stereotype score (``metric="stereotype-score"``)
and the JSD score (``metric="jsd-B"``); ``template-mlm`` gives ``kurita-effect-size`` and
``cb``; ``embedding-mlm`` gives ``seat-effect-size`` and ``ceat-ces``."""

def axis_titles(table: pd.DataFrame) -> dict[tuple[str, str], str]:
    """The value axis' title of every (measure, metric) of ``table`` (a dose or
    measurement table) that has a registered measure: the registry's ``axis`` (name, unit,
    direction of bias), for :func:`polybias.results.plots.dose_response`.

    >>> axis_titles(pd.DataFrame({"measure": ["weat"], "metric": ["effect-size"]}))[("weat", "effect-size")][:26]
    'WEAT effect size d, in poo'
    """
    pairs = dict.fromkeys(zip(table["measure"], table["metric"], strict=True))
    return {(m, k): get(key).axis for m, k in pairs
            if (key := registered_measure(m, k)) is not None and get(key).axis}

DESIGN_NAMES = {"weat": "word2vec", "crows-mlm": "masked LM, pairs", "crows-causal": "causal LM, pairs",
                "template-mlm": "masked LM, templates", "embedding-mlm": "masked LM as encoder",
                "embedding-encoder": "known-answer encoder", "interactions-mlm": "masked LM, interactions",
                "eurogest-causal": "causal LM, EuroGEST"}
"""The planted models and data of each validity design, in words (a figure's panel titles)."""
LABEL_NOTES = {"ceat-ces": " (normal p)", "ceat-ces-perm": " (permutation p)",
               "pronoun-cb": " (pronoun control)"}
"""What tells apart two labels of one registered measure in a design."""
SHORT_NAMES = {"weat": "WEAT d", "seat": "SEAT d", "ceat": "CEAT CES", "kurita": "log-prob. bias",
               "cb": "CB score", "pll-cb": "PLL CB", "interaction-cb": "interaction CB",
               "jsd-b": "JSD score B", "crows": "stereotype score"}
"""A panel title's name of a registered measure (its registered ``axis`` names it in full on
the value axis)."""


def panel_titles(table: pd.DataFrame) -> dict[tuple[str, str], str]:
    """The display title of every (measure, metric) of ``table`` that has a registered
    measure: its short name (:data:`SHORT_NAMES`, else the name its registered ``axis``
    starts with; and what tells apart two labels of one measure), over the design's models
    in words (:data:`DESIGN_NAMES`).

    >>> panel_titles(pd.DataFrame({"measure": ["crows-causal"], "metric": ["jsd-B"]}))
    {('crows-causal', 'jsd-B'): 'JSD score B\\ncausal LM, pairs'}
    """
    pairs = dict.fromkeys(zip(table["measure"], table["metric"], strict=True))
    out = {}
    for m, k in pairs:
        key = registered_measure(m, k)
        if key is None or not get(key).axis:
            continue
        name = SHORT_NAMES.get(key, get(key).axis.split(",")[0])
        out[(m, k)] = f"{name}{LABEL_NOTES.get(k, '')}\n{DESIGN_NAMES.get(m, m)}"
    return out


UNSIGNED_METRICS = UNSIGNED_LABELS
"""Metrics without a direction (variances): their dose is ``|p - 0.5|``, not ``p``; the
validity labels of the registered measures whose ``polarity`` is ``unsigned``
(:data:`polybias.measures.UNSIGNED_LABELS`)."""

FRESH_SEED_OFFSET = 10_000
"""Added to a run's seed to draw the fresh planted corpus that CEAT reads
(:func:`planted_embedding_association`): sentences the model was not trained on, from the
same distribution, and a different draw for every seed."""

LM_TRAINING = {"mlm": {"epochs": 10, "batch_size": 16}, "causal": {"epochs": 5, "batch_size": 16}}
"""Training options of the planted LMs used here: small enough to train in seconds."""

N_SENTENCES = 3000
"""Sentences of the planted corpus each planted LM of a design is trained on."""

TOO_HIGH = 0.15
"""A false-positive rate a measure must be shown to stay below to be called calibrated
(:func:`calibration_verdict`)."""

TARGET_POWER = 0.8
"""The detection rate that sets a measure's minimum detectable bias (:func:`minimum_detectable`)."""


class ValidityError(ValueError):
    """Bad arguments to a validity run."""


def _check_p(p: float) -> float:
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0.0 <= p <= 1.0:
        raise ValidityError(f"p must be a number in [0, 1], got {p!r}")
    return float(p)


def planted_weat(
    p: float,
    seed: int = 0,
    language: str = "en",
    n_sentences: int = N_WORD2VEC_SENTENCES,
    n_permutations: int = N_PERMUTATIONS_SHORT,
    **word2vec: Any,
) -> dict[str, Any]:
    """WEAT on word2vec trained on a planted corpus of strength ``p``.

    X, Y are the male and female target terms, A, B the career and family attributes of
    :func:`polybias.planted.synthetic.planted_groups`; the effect size is Caliskan et al.'s
    (ddof = 1) and the p-value one-sided (``greater``), exact when the number of splits
    allows it.

    Returns
    -------
    dict with ``measure`` ("weat"), ``metric`` ("effect-size"), ``p``, ``seed``,
    ``value`` (effect size), ``null`` (0.0) and ``pvalue``.

    Examples
    --------
    >>> row = planted_weat(0.9, seed=0, n_sentences=1500, n_permutations=1000)
    >>> row["value"] > 0.5, row == planted_weat(0.9, seed=0, n_sentences=1500, n_permutations=1000)
    (True, True)
    """
    p = _check_p(p)
    emb = planted_word2vec(p, seed=seed, language=language, n_sentences=n_sentences, **word2vec)
    groups = planted_groups(language)
    sets = [groups["targets"]["male"], groups["targets"]["female"],
            groups["attributes"]["career"], groups["attributes"]["family"]]
    X, Y, A, B = (lookup(emb, words, on_missing="raise")[0] for words in sets)
    result = compute("weat", X=X, Y=Y, A=A, B=B, n_permutations=n_permutations, seed=seed)
    return {"measure": "weat", "metric": "effect-size", "p": p, "seed": seed,
            "value": result.value, "null": 0.0, "pvalue": result.p_value}


def planted_lm(kind: str, p: float, seed: int = 0, language: str = "en",
               n_sentences: int = N_SENTENCES, **training: Any):
    """The tiny LM of :func:`planted_lm_scores` as a :class:`polybias.engines.scoring.LanguageModel`,
    loaded by the one loader (:func:`polybias.models.load` with ``trained=``: trained once
    per input set, then read from the cache or the pinned store), named
    ``planted-<kind>-p<p>-s<seed>``. The measures of one model share it: within a process,
    a model is read from disk once (:func:`_loaded_lm`)."""
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


def planted_template_scores(
    p: float,
    seed: int = 0,
    language: str = "en",
    n_sentences: int = N_SENTENCES,
    n_permutations: int = N_PERMUTATIONS_SHORT,
    **training: Any,
) -> list[dict[str, Any]]:
    """Kurita effect size and Ahn & Oh's CB of the tiny planted MLM, from one set of scores.

    Templates: :func:`polybias.planted.probes.planted_templates` (English: three
    sentences over the corpus vocabulary). Kurita: corrected log-probabilities (fill minus
    prior, both at the target mask, whole-word scoring), attribute bias male − female,
    effect size career vs family with a one-sided split permutation p (null 0). CB:
    population variance over the target words of the corrected log-probability, mean
    over (template, attribute) (null: none, the score is ≥ 0; ``pvalue`` NaN).

    Returns two dicts (``metric`` "kurita-effect-size" and "cb"), ``measure``
    "template-mlm".
    """
    lm = planted_lm("mlm", p, seed, language, n_sentences, **training)
    book = probes.planted_templates(language)
    scores = template_scores.kurita_scores(lm, book, list(book.templates))
    targets = logprob.group_members(book, "targets")
    attributes = logprob.group_members(book, "attributes")
    effect = compute("kurita", scores=scores, x=targets["male"], y=targets["female"],
                     a=attributes["career"], b=attributes["family"], n_permutations=n_permutations,
                     seed=seed)
    cb = compute("cb", scores=scores, ddof=0)
    base = {"measure": "template-mlm", "p": float(p), "seed": seed}
    return [{**base, "metric": "kurita-effect-size", "value": effect.value,
             "null": 0.0, "pvalue": effect.p_value},
            {**base, "metric": "cb", "value": cb.value, "null": float("nan"), "pvalue": float("nan")}]


BLEACHED = {"en": "the {w} .", "bn": "{w} ।", "hi": "{w} ।"}
"""The bleached sentence SEAT embeds each planted word in, per corpus language."""


def word_subset(words: list[str], k: int | None, rng: np.random.Generator) -> list[str]:
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


def planted_embedding_association(encoder, sentence_vectors, p: float, seed: int, language: str,
                                  n_sentences: int, seat_words: list[int | None],
                                  ceat_samples: list[int], n_permutations: int, layer: int = -1,
                                  ceat_permutation: bool = True) -> list[dict[str, Any]]:
    """SEAT and CEAT of an encoder on the planted groups, at every size asked for.

    SEAT: each group word in its language's bleached sentence (:data:`BLEACHED`), embedded
    by ``sentence_vectors(texts) -> (n, dim)`` one group at a time; for each ``k`` of
    ``seat_words``, ``k`` words per set (:func:`word_subset` with the seed ``(seed, k, 2)``;
    None: every word); WEAT statistics with a one-sided permutation p. CEAT: a fresh planted
    corpus of strength ``p`` (``planted_corpus(n_sentences, p, seed + FRESH_SEED_OFFSET)``:
    sentences the model has not seen); for each ``k`` of ``ceat_samples``, ``k`` occurrences per word
    (seeded), occurrence vectors of ``encoder`` at ``layer``
    (:func:`polybias.engines.embeddings.occurrence_vectors`), random-effects CES with its normal
    two-tailed p (``ceat-ces``) and, when ``ceat_permutation``, the same CES with the
    word-permutation p (``ceat-ces-perm``). X = male, Y = female, A = career, B = family
    terms of :func:`polybias.planted.synthetic.planted_groups`.

    Returns
    -------
    list of dict
        ``metric``, ``size_key`` (``"seat_words"`` or ``"ceat_samples"``), ``size`` (None:
        every word), ``value`` and ``pvalue``: the SEAT rows size by size, then per CEAT
        size ``ceat-ces`` (and ``ceat-ces-perm``).
    """
    groups = planted_groups(language)
    sets = {"X": groups["targets"]["male"], "Y": groups["targets"]["female"],
            "A": groups["attributes"]["career"], "B": groups["attributes"]["family"]}
    rows = []
    vec = {r: dict(zip(ws, sentence_vectors([BLEACHED[language].format(w=w) for w in ws]),
                       strict=True))
           for r, ws in sets.items()}
    for k in seat_words:
        rng = np.random.default_rng([seed, k, 2]) if k is not None else None
        chosen = {r: np.stack([vec[r][w] for w in word_subset(ws, k, rng)]) for r, ws in sets.items()}
        res = compute("seat", **chosen, n_permutations=n_permutations, seed=seed)
        rows.append({"metric": "seat-effect-size", "size_key": "seat_words", "size": k,
                     "value": res.value, "pvalue": res.p_value})
    fresh = planted_corpus(n_sentences, p, seed=seed + FRESH_SEED_OFFSET, language=language)
    words = [w for ws in sets.values() for w in ws]
    found = text.find_occurrences(fresh, words, language=language)
    for k in ceat_samples:
        samples = text.sample_occurrences(found, k, seed=seed)
        vectors = embeddings.occurrence_vectors(encoder, samples, layer=layer)
        stacked = {r: ceat.stack_occurrences(vectors, ws, r) for r, ws in sets.items()}
        res = compute("ceat", **stacked)
        rows.append({"metric": "ceat-ces", "size_key": "ceat_samples", "size": k,
                     "value": res.value, "pvalue": res.p_value})
        if ceat_permutation:
            perm = ceat.ceat_permutation(stacked["X"], stacked["Y"], stacked["A"],
                                                stacked["B"], n_permutations=n_permutations,
                                                seed=seed)
            rows.append({"metric": "ceat-ces-perm", "size_key": "ceat_samples", "size": k,
                         "value": float(perm.ces), "pvalue": float(perm.pvalue)})
    return rows


def planted_embedding_scores(
    p: float,
    seed: int = 0,
    language: str = "en",
    n_sentences: int = N_SENTENCES,
    n_samples: int = 20,
    n_permutations: int = N_PERMUTATIONS_SHORT,
    **training: Any,
) -> list[dict[str, Any]]:
    """SEAT and CEAT of the tiny planted MLM used as an encoder (its last layer).

    :func:`planted_embedding_association` at one size: SEAT on every target and attribute
    word in its bleached sentence (English: ``"the {word} ."``), sentence vector = mean
    over the word's tokens (``pooling="mean"``); CEAT on ``n_samples`` occurrences per
    word of a fresh corpus from the same distribution, word vectors pooled over the
    word's pieces, random-effects CES with a two-tailed p. The validity sweep
    (:mod:`polybias.runner.validity_sweep`) scores the same function at several sizes.

    Returns two dicts (``metric`` "seat-effect-size" and "ceat-ces"), ``measure``
    "embedding-mlm".
    """
    lm = planted_lm("mlm", p, seed, language, n_sentences, **training)
    encoder = embeddings.wrap_encoder(lm.model, lm.tokenizer, name=lm.name,
                                      revision=lm.revision, pooling="mean")
    found = planted_embedding_association(
        encoder, lambda texts: embeddings.sentence_vectors(encoder, texts, pooling="mean"),
        p, seed, language, n_sentences, seat_words=[None], ceat_samples=[n_samples],
        n_permutations=n_permutations, ceat_permutation=False)
    base = {"measure": "embedding-mlm", "p": float(p), "seed": seed, "null": 0.0}
    return [{**base, "metric": r["metric"], "value": r["value"], "pvalue": r["pvalue"]}
            for r in found]


def planted_lm_scores(
    kind: str,
    p: float,
    seed: int = 0,
    language: str = "en",
    n_sentences: int = N_SENTENCES,
    n_pairs: int = 100,
    **training: Any,
) -> list[dict[str, Any]]:
    """Stereotype score and JSD score B of a tiny LM trained on a planted corpus.

    The model is :func:`polybias.planted.synthetic.cached_planted_model` (``kind`` "mlm" or
    "causal", trained once per input set and cached) with :data:`LM_TRAINING` unless
    ``training`` overrides it; the pairs are ``minimal_pairs(n_pairs, language, seed)``
    whose ``sent_more`` follows the association planted by ``p > 0.5``. Scores are
    percentages (null 50) with the two-sided exact binomial p of the untied pairs.

    Returns
    -------
    list of two dicts (``metric`` "stereotype-score" and "jsd-B"), keys as in
    :func:`planted_weat`, ``measure`` = ``"crows-" + kind``.
    """
    lm = planted_lm(kind, p, seed, language, n_sentences, **training)
    pairs = minimal_pairs(n_pairs, language=language, seed=seed)
    stereo = compute("crows", scored=pair_scores(lm, pairs), n_bootstrap=0)
    jsd = compute("jsd-b", attributed=jsd_attributions(lm, pairs), n_bootstrap=0)
    return [{"measure": f"crows-{kind}", "metric": metric, "p": p, "seed": seed,
             "value": r.value, "null": 50.0,
             "pvalue": float("nan") if r.p_value is None else r.p_value}
            for metric, r in (("stereotype-score", stereo), ("jsd-B", jsd))]


EUROGEST_DESIGN = "eurogest-causal"
"""The validity design of the EuroGEST measure: a causal LM planted on a language's own
EuroGEST sentences (:mod:`polybias.planted.eurogest`), the measure on its held-out pairs."""


def planted_eurogest_scores(
    p: float,
    seed: int = 0,
    language: str = "cs",
    n_bootstrap: int = N_BOOTSTRAP,
    level: float = CONFIDENCE_LEVEL,
    **training: Any,
) -> dict[str, Any]:
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
    result = compute("eurogest", scored=gendered_pair_scores(lm, held), n_bootstrap=n_bootstrap,
                     seed=seed, level=level)
    rates = result.details.set_index("stereotype")
    means = rates.groupby("stereotype_gender")["masculine_rate"].mean()
    iv = result.interval
    return {"measure": EUROGEST_DESIGN, "metric": "g_s", "p": p, "seed": seed,
            "value": result.value, "null": 1.0, "low": iv.low if iv else np.nan,
            "high": iv.high if iv else np.nan, "level": level, "n": result.n,
            "rated": int(rates["masculine_rate"].notna().sum()),
            "feminine_rate": float(means.get("feminine", np.nan)),
            "masculine_rate": float(means.get("masculine", np.nan)),
            **{f"rate_{s}": float(rates["masculine_rate"].get(s, np.nan)) for s in range(1, 17)},
            "model": key}


def dose_response(
    designs: list[str] | tuple[str, ...],
    ps: list[float],
    seeds: list[int],
    language: str = "en",
    progress: bool = False,
    **options: Any,
) -> pd.DataFrame:
    """Every design (:data:`DESIGNS`) at every ``p`` and seed: one row per (measure, metric,
    p, seed), ``measure`` the design.

    ``options`` go to :func:`planted_weat` (keys ``weat_*`` with the prefix removed) and
    :func:`planted_lm_scores` (keys ``lm_*``), e.g. ``weat_n_sentences=4000``,
    ``lm_n_pairs=100``.
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
    for measure, p, seed in jobs:
        if measure == "weat":
            rows.append(planted_weat(p, seed, language, **weat_opts))
        elif measure == "embedding-mlm":
            rows.extend(planted_embedding_scores(p, seed, language, **probe_opts))
        elif measure == "template-mlm":
            rows.extend(planted_template_scores(p, seed, language, **probe_opts))
        else:
            rows.extend(planted_lm_scores(measure.split("-", 1)[1], p, seed, language, **lm_opts))
    return pd.DataFrame(rows)


def validity_summary(frame: pd.DataFrame, alpha: float = ALPHA, min_null: int = 10) -> pd.DataFrame:
    """Per (measure, metric): is it a valid dose-response, and is its test calibrated?

    Columns:

    * ``dose`` — ``p``, or ``|p - 0.5|`` for the :data:`UNSIGNED_METRICS`;
    * ``rho`` — Spearman correlation between the dose and the value over all rows;
    * ``monotone`` — the mean value per dose never decreases as the dose grows;
    * ``sign_ok`` — mean above the null at every ``p > 0.5`` and below it at every
      ``p < 0.5`` (unsigned metrics: above the mean at ``p = 0.5`` at every other ``p``);
    * ``at_null`` — mean value at ``p = 0.5`` minus the null, and ``at_null_sd`` its
      standard deviation over seeds (NaN with one seed);
    * ``fpr`` — share of seeds at ``p = 0.5`` whose p-value is below ``alpha``
      (``n_null`` seeds); a calibrated test gives about ``alpha``;
    * ``calibrated`` — ``"yes"`` when an exact two-sided binomial test of the
      false-positive count against ``alpha`` gives p ≥ 0.05, ``"no"`` otherwise, and
      ``"too few seeds"`` when ``n_null < min_null`` (a verdict needs enough balanced models).

    >>> f = pd.DataFrame({"measure": "m", "metric": "x", "p": [0.1, 0.5, 0.5, 0.9],
    ...                   "seed": [0, 0, 1, 0], "value": [-1.0, 0.1, -0.1, 2.0],
    ...                   "null": 0.0, "pvalue": [0.01, 0.2, 0.04, 0.001]})
    >>> validity_summary(f)[["monotone", "sign_ok", "at_null", "fpr", "n_null"]].values.tolist()
    [[True, True, 0.0, 0.5, 2]]
    """
    needed = {"measure", "metric", "p", "seed", "value", "null", "pvalue"}
    missing = sorted(needed - set(frame.columns))
    if missing:
        raise ValidityError(f"dose-response frame lacks columns {missing}")
    rows = []
    for (measure, metric), g in frame.groupby(["measure", "metric"], sort=False):
        unsigned = metric in UNSIGNED_METRICS
        dose = (g["p"] - 0.5).abs().round(12) if unsigned else g["p"]
        means = g["value"].groupby(dose).mean().sort_index()
        rho = spearmanr(dose, g["value"]).statistic if dose.nunique() > 1 else np.nan
        at_half = g[np.isclose(g["p"], 0.5)]
        if unsigned:
            null = float(at_half["value"].mean()) if len(at_half) else np.nan
            above, below = means[means.index > 0], means.iloc[:0]
        else:
            null = float(g["null"].iloc[0])
            p_means = g.groupby("p")["value"].mean()
            above, below = p_means[p_means.index > 0.5], p_means[p_means.index < 0.5]
        hits = int((at_half["pvalue"] < alpha).sum())
        if at_half.empty:
            calibrated = "no p = 0.5 runs"
        elif at_half["pvalue"].isna().all():
            calibrated = "no test"
        elif len(at_half) < min_null:
            calibrated = "too few seeds"
        else:
            calibrated = "yes" if binomtest(hits, len(at_half), alpha).pvalue >= 0.05 else "no"
        rows.append({
            "measure": measure, "metric": metric, "dose": "|p-0.5|" if unsigned else "p",
            "rho": float(rho),
            "monotone": bool(np.all(np.diff(means.to_numpy()) >= 0)),
            "sign_ok": bool((above > null).all() and (below < null).all()),
            "at_null": (float(at_half["value"].mean() - (0.0 if unsigned else null))
                        if len(at_half) else np.nan),
            "at_null_sd": float(at_half["value"].std(ddof=1)) if len(at_half) > 1 else np.nan,
            "fpr": (float((at_half["pvalue"] < alpha).mean())
                    if len(at_half) and not at_half["pvalue"].isna().all() else np.nan),
            "n_null": int(len(at_half)), "calibrated": calibrated,
        })
    return pd.DataFrame(rows)


# ------------------------------------------------------------------ statistics over models

INTERVAL_METHODS = ("clopper-pearson", "wilson")


def binomial_interval(k: int, n: int, level: float = CONFIDENCE_LEVEL,
                      method: str = "clopper-pearson") -> tuple[float, float]:
    """Two-sided interval for a binomial proportion ``k / n``.

    ``clopper-pearson`` (exact; Clopper & Pearson 1934): the ``(1 - level)/2`` and
    ``(1 + level)/2`` quantiles of Beta(k, n − k + 1) and Beta(k + 1, n − k), with 0
    (k = 0) and 1 (k = n) at the ends. ``wilson`` (Wilson 1927): the score interval
    ``(k + z²/2 ± z √(k(n − k)/n + z²/4)) / (n + z²)`` with z the normal quantile.

    >>> lo, hi = binomial_interval(0, 20)
    >>> lo, round(hi, 4), round(1 - 0.025 ** (1 / 20), 4)
    (0.0, 0.1684, 0.1684)
    >>> [round(x, 4) for x in binomial_interval(0, 20, method="wilson")]
    [0.0, 0.1611]
    """
    for name, value in (("k", k), ("n", n)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise ValidityError(f"{name} must be an integer, got {value!r}")
    if n < 1 or not 0 <= k <= n:
        raise ValidityError(f"need 0 <= k <= n and n >= 1, got k={k}, n={n}")
    if not 0 < level < 1:
        raise ValidityError(f"level must be in (0, 1), got {level!r}")
    tail = (1 - level) / 2
    if method == "clopper-pearson":
        lo = 0.0 if k == 0 else float(beta.ppf(tail, k, n - k + 1))
        hi = 1.0 if k == n else float(beta.ppf(1 - tail, k + 1, n - k))
        return lo, hi
    if method == "wilson":
        z = float(norm.ppf(1 - tail))
        centre = k + z * z / 2
        half = z * np.sqrt(k * (n - k) / n + z * z / 4)
        return max(0.0, float((centre - half) / (n + z * z))), min(1.0, float((centre + half) / (n + z * z)))
    raise ValidityError(f"method must be one of {INTERVAL_METHODS}, got {method!r}")


def calibration_verdict(k: int, n: int, alpha: float = ALPHA, too_high: float = TOO_HIGH,
                        level: float = CONFIDENCE_LEVEL, method: str = "clopper-pearson") -> dict[str, Any]:
    """False-positive rate ``k / n`` of a test at level ``alpha``, its binomial interval
    (:func:`binomial_interval`) and a verdict only where the interval can tell ``alpha``
    from ``too_high``:

    * ``"calibrated"`` — the interval holds ``alpha`` and lies below ``too_high``;
    * ``"too liberal"`` — the interval lies above ``alpha``;
    * ``"conservative"`` — the interval lies below ``alpha``;
    * ``"undecided"`` — the interval holds both ``alpha`` and ``too_high`` (too few models).

    >>> calibration_verdict(1, 20)["verdict"], calibration_verdict(1, 60)["verdict"]
    ('undecided', 'calibrated')
    >>> calibration_verdict(8, 20)["verdict"], calibration_verdict(0, 100)["verdict"]
    ('too liberal', 'conservative')
    """
    if not 0 < alpha < too_high < 1:
        raise ValidityError(f"need 0 < alpha < too_high < 1, got {alpha!r}, {too_high!r}")
    lo, hi = binomial_interval(k, n, level, method)
    if lo > alpha:
        verdict = "too liberal"
    elif hi < alpha:
        verdict = "conservative"
    elif hi < too_high:
        verdict = "calibrated"
    else:
        verdict = "undecided"
    return {"k": int(k), "n": int(n), "fpr": k / n, "fpr_low": lo, "fpr_high": hi,
            "verdict": verdict}


def mean_interval(values, level: float = CONFIDENCE_LEVEL) -> tuple[float, float, float]:
    """Mean of ``values`` and its Student-t interval ``mean ± t(n−1) · sd / √n`` (sd with
    ddof = 1); the interval is NaN with fewer than two values.

    >>> [round(x, 4) for x in mean_interval([1.0, 2.0, 3.0])]
    [2.0, -0.4841, 4.4841]
    """
    x = np.asarray(values, dtype=float)
    x = x[~np.isnan(x)]
    if x.size == 0:
        raise ValidityError("mean_interval needs at least one value")
    mean = float(x.mean())
    if x.size < 2:
        return mean, float("nan"), float("nan")
    half = float(t.ppf((1 + level) / 2, x.size - 1) * x.std(ddof=1) / np.sqrt(x.size))
    return mean, mean - half, mean + half


def monotonicity_test(dose, values) -> dict[str, float]:
    """Spearman's ρ between the planted dose and the values of all models, with its
    two-sided p-value (scipy's t approximation, exact permutation for n ≤ 9 without ties
    is not used: ties in the dose are the rule here).

    >>> r = monotonicity_test([0.1, 0.1, 0.5, 0.5, 0.9, 0.9], [1, 2, 3, 4, 5, 6])
    >>> round(r["rho"], 4), r["pvalue"] < 0.05, r["n"]
    (0.9562, True, 6)
    """
    d, v = np.asarray(dose, dtype=float), np.asarray(values, dtype=float)
    keep = ~(np.isnan(d) | np.isnan(v))
    d, v = d[keep], v[keep]
    if d.size < 3 or np.unique(d).size < 2 or np.unique(v).size < 2:
        return {"rho": float("nan"), "pvalue": float("nan"), "n": int(d.size)}
    res = spearmanr(d, v)
    return {"rho": float(res.statistic), "pvalue": float(res.pvalue), "n": int(d.size)}


def minimum_detectable(power: pd.Series, target: float = TARGET_POWER) -> float:
    """Smallest planted strength from which the detection rate stays at or above
    ``target``: ``power`` is indexed by strength (p > 0.5, or |p − 0.5|), and the result
    is the smallest index value v with power ≥ target at v and at every larger strength;
    NaN when even the largest strength falls short.

    >>> minimum_detectable(pd.Series([0.2, 0.8, 0.6, 1.0], index=[0.6, 0.7, 0.8, 0.9]))
    0.9
    >>> minimum_detectable(pd.Series([0.2, 0.8, 0.8, 1.0], index=[0.6, 0.7, 0.8, 0.9]))
    0.7
    """
    s = power.sort_index()
    ok = (s >= target).to_numpy()
    if not ok.size or not ok[-1]:
        return float("nan")
    first = ok.size - 1
    while first > 0 and ok[first - 1]:
        first -= 1
    return float(s.index[first])


# ------------------------------------------------------------------ tables of the validity sweep

_KEYS = ["language", "measure", "metric"]


def _dose(metric: str, p):
    return (np.abs(np.asarray(p, dtype=float) - 0.5).round(12) if metric in UNSIGNED_METRICS
            else np.asarray(p, dtype=float))


def _defaults(frame: pd.DataFrame) -> pd.DataFrame:
    needed = {*_KEYS, "p", "seed", "value", "null", "pvalue", "default"}
    missing = sorted(needed - set(frame.columns))
    if missing:
        raise ValidityError(f"measurements lack columns {missing}")
    return frame[frame["default"].astype(bool)]


def dose_table(frame: pd.DataFrame, level: float = CONFIDENCE_LEVEL) -> pd.DataFrame:
    """Per (language, measure, metric, p), at the default sizes: the number of models
    ``n``, the ``mean`` value and its interval ``low``–``high`` (:func:`mean_interval`).

    ``frame``: the sweep's measurements (:func:`polybias.runner.validity_sweep.collect_measurements`).
    """
    rows = []
    for (lang, measure, metric, p), g in _defaults(frame).groupby([*_KEYS, "p"], sort=False):
        mean, lo, hi = mean_interval(g["value"], level)
        rows.append({"language": lang, "measure": measure, "metric": metric, "p": float(p),
                     "n": int(g["value"].notna().sum()), "mean": mean, "low": lo, "high": hi})
    return pd.DataFrame(rows).sort_values([*_KEYS, "p"], kind="stable").reset_index(drop=True)


def dose_summary(frame: pd.DataFrame, level: float = CONFIDENCE_LEVEL) -> pd.DataFrame:
    """Per (language, measure, metric), at the default sizes:

    * ``dose`` — ``p``, or ``abs(p - 0.5)`` for the :data:`UNSIGNED_METRICS` (and any
      metric without a null);
    * ``n_models`` (all strengths), ``strengths``, ``min_n`` (fewest models at one
      strength); ``assessed`` — at least 3 strengths with at least 2 models each (else
      ``monotone`` and ``sign_ok`` are NaN: too few models to say);
    * ``rho``, ``rho_p`` — Spearman's ρ of value against dose over all models and its
      p-value (:func:`monotonicity_test`);
    * ``monotone`` — the mean per dose never decreases as the dose grows;
    * ``sign_ok`` — mean above the null at every ``p > 0.5`` and below it at every
      ``p < 0.5`` (no null: above the mean at ``p = 0.5`` at every other strength);
    * ``resolves`` — the smallest ``|p - 0.5|`` from which every strength is *resolved*,
      given as ``0.5 + |p - 0.5|`` (``0.7`` means 0.7 and its mirror 0.3): the interval of
      the mean (:func:`dose_table`) lies on the planted side of the null (no null: above
      the interval at ``p = 0.5``); ``NaN`` when not even the strongest is resolved.

    >>> f = pd.DataFrame({"language": "en", "measure": "m", "metric": "x", "default": True,
    ...     "p": [0.1] * 3 + [0.3] * 3 + [0.5] * 3 + [0.7] * 3 + [0.9] * 3, "seed": 0,
    ...     "value": [-3, -3.2, -2.8, 0.1, 0.4, -0.2, 0, 0.1, -0.1, 1, 1.2, 0.8, 3, 3.1, 2.9],
    ...     "null": 0.0, "pvalue": 0.5})
    >>> r = dose_summary(f).iloc[0]   # p = 0.3 lies above the null: not monotone, wrong sign
    >>> bool(r["monotone"]), bool(r["sign_ok"]), float(r["resolves"]), int(r["min_n"])
    (False, False, 0.9, 3)
    """
    table = dose_table(frame, level)
    rows = []
    for (lang, measure, metric), g in _defaults(frame).groupby(_KEYS, sort=False):
        t = table[(table.language == lang) & (table.measure == measure) & (table.metric == metric)]
        null = float(g["null"].iloc[0])
        unsigned = metric in UNSIGNED_METRICS or null != null
        dose = _dose("cb" if unsigned else metric, g["p"])
        mono = monotonicity_test(dose, g["value"])
        t_dose = _dose("cb" if unsigned else metric, t["p"])
        means = pd.Series(t["mean"].to_numpy(), index=t_dose).groupby(level=0).mean().sort_index()
        at_half = t[np.isclose(t["p"], 0.5)]
        if unsigned:
            ref_mean = float(at_half["mean"].iloc[0]) if len(at_half) else np.nan
            ref_high = float(at_half["high"].iloc[0]) if len(at_half) else np.nan
            others = t[~np.isclose(t["p"], 0.5)]
            sign_ok = bool((others["mean"] > ref_mean).all()) if len(others) else False
            resolved = pd.Series((others["low"] > ref_high).to_numpy(), index=_dose("cb", others["p"]))
        else:
            high, low = t[t["p"] > 0.5], t[t["p"] < 0.5]
            sign_ok = bool((high["mean"] > null).all() and (low["mean"] < null).all())
            resolved = pd.concat([
                pd.Series((high["low"] > null).to_numpy(), index=high["p"].to_numpy() - 0.5),
                pd.Series((low["high"] < null).to_numpy(), index=0.5 - low["p"].to_numpy())])
            resolved.index = np.round(resolved.index.to_numpy(dtype=float), 12)
        per_dose = resolved.groupby(level=0).all().astype(float)
        smallest = minimum_detectable(per_dose, 1.0) if len(per_dose) else np.nan
        enough = len(t) >= 3 and int(t["n"].min()) >= 2
        rows.append({"language": lang, "measure": measure, "metric": metric,
                     "dose": "abs(p - 0.5)" if unsigned else "p", "n_models": int(len(g)),
                     "strengths": int(len(t)), "min_n": int(t["n"].min()),
                     "rho": mono["rho"], "rho_p": mono["pvalue"],
                     "monotone": bool(np.all(np.diff(means.to_numpy()) >= 0)) if enough else np.nan,
                     "sign_ok": sign_ok if enough else np.nan,
                     "resolves": 0.5 + smallest if smallest == smallest else np.nan,
                     "assessed": enough})
    return pd.DataFrame(rows)


def calibration_table(frame: pd.DataFrame, alpha: float = ALPHA, too_high: float = TOO_HIGH,
                      level: float = CONFIDENCE_LEVEL) -> pd.DataFrame:
    """False-positive rate of each measure's own test over the balanced (``p = 0.5``)
    models at the default sizes, with its Clopper–Pearson interval and the verdict of
    :func:`calibration_verdict`; plus the mean offset from the null (``at_null``) and its
    spread over models (``at_null_sd``). Metrics without a test are left out."""
    rows = []
    half = _defaults(frame)
    half = half[np.isclose(half["p"], 0.5) & half["pvalue"].notna()]
    for (lang, measure, metric), g in half.groupby(_KEYS, sort=False):
        k = int((g["pvalue"] < alpha).sum())
        verdict = calibration_verdict(k, len(g), alpha, too_high, level)
        rows.append({"language": lang, "measure": measure, "metric": metric,
                     "at_null": float(g["value"].mean() - g["null"].iloc[0]),
                     "at_null_sd": float(g["value"].std(ddof=1)) if len(g) > 1 else np.nan,
                     "n": verdict["n"], "false_positives": k, "fpr": verdict["fpr"],
                     "fpr_low": verdict["fpr_low"], "fpr_high": verdict["fpr_high"],
                     "verdict": verdict["verdict"]})
    return pd.DataFrame(rows)


def calibration_sample_size(k: int, too_high: float = TOO_HIGH, level: float = CONFIDENCE_LEVEL,
                            method: str = "clopper-pearson") -> int:
    """The fewest balanced models at which ``k`` false positives still give the verdict
    "calibrated" of :func:`calibration_verdict`: the smallest n whose upper interval
    bound for ``k / n`` lies below ``too_high`` (the bound falls as n grows).

    The Clopper–Pearson bound at 0 of n is 1 − ((1 − level)/2)^(1/n), so with level 0.95
    and ``too_high`` 0.15, 0 false positives need n ≥ ln 0.025 / ln 0.85, i.e. 23:

    >>> [calibration_sample_size(k) for k in range(4)]
    [23, 35, 46, 56]
    """
    if k < 0:
        raise ValidityError(f"k must be >= 0, got {k}")
    n = max(k, 1)
    while binomial_interval(k, n, level, method)[1] >= too_high:
        n += 1
    return n


def calibration_by_size(frame: pd.DataFrame, metrics: list[str] | None = None, alpha: float = ALPHA,
                        too_high: float = TOO_HIGH, level: float = CONFIDENCE_LEVEL) -> pd.DataFrame:
    """:func:`calibration_table` at every size, not only the default: the false-positive
    rate of each test over the balanced (``p = 0.5``) models per (language, measure,
    metric, size), its Clopper–Pearson interval and verdict; ``metrics`` keeps those."""
    half = frame[np.isclose(frame["p"], 0.5) & frame["pvalue"].notna()]
    if metrics is not None:
        half = half[half["metric"].isin(metrics)]
    rows = []
    for (lang, measure, metric, size), g in half.groupby([*_KEYS, "size"], sort=True):
        k = int((g["pvalue"] < alpha).sum())
        v = calibration_verdict(k, len(g), alpha, too_high, level)
        rows.append({"language": lang, "measure": measure, "metric": metric,
                     "size_axis": g["size_axis"].iloc[0], "size": int(size), "n": v["n"],
                     "false_positives": k, "fpr": v["fpr"], "fpr_low": v["fpr_low"],
                     "fpr_high": v["fpr_high"], "verdict": v["verdict"]})
    return pd.DataFrame(rows)


def sign_and_magnitude(frame: pd.DataFrame, keys: list[str] | None = None, alpha: float = ALPHA) -> pd.DataFrame:
    """Does a signed measure follow the planted *direction*, or only its *strength*?

    Per group of ``keys`` (default: language, measure, metric) at the default sizes, over
    models with a null:

    * ``rho`` — Spearman's ρ of the value against p (direction and strength);
    * ``rho_abs`` — ρ of ``|value − null|`` against ``|p − 0.5|`` (strength only), and
      ``rho_abs_p`` its p-value;
    * ``right_sign`` — share of the models with ``p ≠ 0.5`` on the planted side of the
      null (0.5 when the sign is a coin flip);
    * ``detected`` — models with ``p ≠ 0.5`` whose own test detects the planted direction
      (:func:`detections`), and ``detected_wrong`` those it finds significant on the
      other side.

    A measure with a large ``rho_abs`` and ``right_sign`` near 0.5 sees an association of
    the planted size whose direction the model does not fix.

    >>> f = pd.DataFrame({"language": "en", "measure": "m", "metric": "x", "default": True,
    ...     "p": [0.1, 0.1, 0.5, 0.5, 0.9, 0.9], "seed": [0, 1, 0, 1, 0, 1], "null": 0.0,
    ...     "value": [2.0, -2.0, 0.1, -0.1, -2.0, 2.0], "pvalue": [0.01, 0.01, 0.6, 0.6, 0.01, 0.01]})
    >>> r = sign_and_magnitude(f).iloc[0]
    >>> float(r["rho"]), round(float(r["rho_abs"]), 3), float(r["right_sign"]), r["detected"]
    (0.0, 1.0, 0.5, '2/4')
    """
    keys = list(keys or _KEYS)
    d = detections(_defaults(frame).dropna(subset=["null"]), alpha=alpha)
    rows = []
    for key, g in d.groupby(keys, sort=True):
        key = key if isinstance(key, tuple) else (key,)
        signed = monotonicity_test(g["p"], g["value"])
        magnitude = monotonicity_test(np.abs(g["p"] - 0.5), np.abs(g["value"] - g["null"]))
        off = g[~np.isclose(g["p"], 0.5)]
        planted_side = np.sign(off["value"] - off["null"]) == np.sign(off["p"] - 0.5)
        significant = off["pvalue"] < alpha
        rows.append({**dict(zip(keys, key, strict=True)), "n": int(len(g)),
                     "rho": signed["rho"], "rho_abs": magnitude["rho"], "rho_abs_p": magnitude["pvalue"],
                     "right_sign": float(planted_side.mean()) if len(off) else np.nan,
                     "detected": f"{int(off['detected'].sum())}/{len(off)}",
                     "detected_wrong": f"{int((significant & ~planted_side).sum())}/{len(off)}"})
    return pd.DataFrame(rows)


def same_models(frame: pd.DataFrame, metric: str) -> pd.DataFrame:
    """The rows of the models (language, family, p, seed) that have a row of ``metric``:
    e.g. the models scored with both of two p-values, for a comparison on the same models.

    >>> f = pd.DataFrame({"language": "en", "family": "mlm", "p": 0.5, "seed": [0, 0, 1],
    ...                   "metric": ["a", "b", "a"]})
    >>> same_models(f, "b")["seed"].tolist()
    [0, 0]
    """
    model = ["language", "family", "p", "seed"]
    have = frame.loc[frame["metric"] == metric, model].drop_duplicates()
    return frame.merge(have, on=model, how="inner")


def layer_table(layers: pd.DataFrame, alpha: float = ALPHA) -> pd.DataFrame:
    """:func:`sign_and_magnitude` per (training, metric, layer) of a per-layer probe
    (``layer`` −1, the output distribution, shown as ``output``), and
    ``agrees_with_output``: the share of the models with ``p ≠ 0.5`` whose value has the
    sign of the same model's Kurita effect size (the direction the model's predictions
    carry, whether or not it is the planted one)."""
    layers = layers if "training" in layers else layers.assign(training="")
    keys = ["training", "metric", "layer"]
    out = sign_and_magnitude(layers, keys, alpha=alpha)
    d = _defaults(layers)
    d = d[~np.isclose(d["p"], 0.5)]
    model = ["training", "p", "seed"]
    kurita = d[d["metric"] == "kurita-effect-size"].set_index(model)["value"].rename("output")
    joined = d.join(kurita, on=model)
    agree = (np.sign(joined["value"]) == np.sign(joined["output"])).groupby(
        [joined[k] for k in keys]).mean().rename("agrees_with_output")
    out = out.join(agree, on=keys)
    out["layer"] = [("output" if layer < 0 else str(int(layer))) for layer in out["layer"]]
    return out


def detections(frame: pd.DataFrame, alpha: float = ALPHA, null_quantile: float = 0.95) -> pd.DataFrame:
    """``frame`` with a boolean ``detected`` column and the ``rule`` that set it.

    With a test (``pvalue`` present): ``pvalue < alpha`` and the value on the planted side
    of the null (above it for ``p >= 0.5``, below it for ``p < 0.5``). Without one (the CB
    family, a variance): the value exceeds the ``null_quantile`` quantile of the same
    measure's values over the balanced (``p = 0.5``) models of the same size, a
    between-model test.

    >>> f = pd.DataFrame({"language": "en", "measure": "m", "metric": "x", "size": 1,
    ...                   "p": [0.9, 0.9, 0.1], "value": [1.0, -1.0, -1.0], "null": 0.0,
    ...                   "pvalue": [0.01, 0.01, 0.01]})
    >>> detections(f)["detected"].tolist()
    [True, False, True]
    """
    out = frame.copy()
    has_test = out["pvalue"].notna()
    side = np.where(out["p"] >= 0.5, out["value"] > out["null"], out["value"] < out["null"])
    detected = has_test & (out["pvalue"] < alpha) & side
    rule = np.where(has_test, "own test", f"above the p = 0.5 models' {null_quantile:.0%} quantile")
    untested = out[~has_test]
    if len(untested):
        keys = [*_KEYS, "size"]
        half = untested[np.isclose(untested["p"], 0.5)]
        cut = half.groupby(keys)["value"].quantile(null_quantile).rename("cut")
        joined = untested.join(cut, on=keys)
        detected = detected.copy()
        detected[~has_test] = (joined["value"] > joined["cut"]).to_numpy()
    out["detected"] = detected.astype(bool)
    out["rule"] = rule
    return out


def power_table(frame: pd.DataFrame, alpha: float = ALPHA) -> pd.DataFrame:
    """Detection rate (:func:`detections`) per (language, measure, metric, size, p ≥ 0.5):
    the share of models whose measure detects the planted bias at that size."""
    d = detections(frame, alpha)
    d = d[d["p"] >= 0.5]
    keys = [*_KEYS, "size_axis", "size", "p"]
    out = d.groupby(keys, sort=False).agg(n=("detected", "size"), power=("detected", "mean"),
                                          rule=("rule", "first")).reset_index()
    return out.sort_values(keys, kind="stable").reset_index(drop=True)


def mdb_table(frame: pd.DataFrame, alpha: float = ALPHA, target: float = TARGET_POWER) -> pd.DataFrame:
    """Minimum detectable bias per (language, measure, metric, size): the smallest planted
    ``p > 0.5`` from which at least ``target`` of the models detect the bias
    (:func:`minimum_detectable` on :func:`power_table`), with the detection rate at the
    largest strength and at ``p = 0.5`` (the false-positive side of the same rule);
    ``default`` marks the size the dose-response tables use."""
    power = power_table(frame, alpha)
    defaults = set(map(tuple, _defaults(frame)[[*_KEYS, "size"]].drop_duplicates().to_numpy().tolist()))
    rows = []
    for (lang, measure, metric, axis, size), g in power.groupby(
            [*_KEYS, "size_axis", "size"], sort=False):
        above = g[g["p"] > 0.5].set_index("p")["power"]
        half = g[np.isclose(g["p"], 0.5)]["power"]
        rows.append({"language": lang, "measure": measure, "metric": metric, "size_axis": axis,
                     "size": int(size), "default": (lang, measure, metric, size) in defaults,
                     "min_n": int(g["n"].min()),
                     "rate_at_0.5": float(half.iloc[0]) if len(half) else np.nan,
                     "power_at_max": float(above.iloc[-1]) if len(above) else np.nan,
                     "mdb": minimum_detectable(above, target), "rule": g["rule"].iloc[0]})
    return pd.DataFrame(rows)


def findings(summary: pd.DataFrame, calibration: pd.DataFrame, mdb: pd.DataFrame,
             alpha: float = ALPHA, target: float = TARGET_POWER, min_models: int = 5) -> str:
    """The validity results of one language in sentences, every number taken from the
    three tables (:func:`dose_summary`, :func:`calibration_table`, :func:`mdb_table`), so
    that the paper's prose states what the tables hold. A minimum detectable bias is
    stated only where every strength has ``min_models`` models.

    >>> s = pd.DataFrame({"measure": ["a", "b"], "metric": ["x", "y"], "rho": [0.9, 0.1],
    ...                   "rho_p": [1e-9, 0.4], "sign_ok": [True, False], "resolves": [0.7, np.nan],
    ...                   "min_n": [5, 5]})
    >>> c = pd.DataFrame({"measure": ["a"], "metric": ["x"], "n": [20], "false_positives": [1],
    ...                   "fpr": [0.05], "fpr_low": [0.001], "fpr_high": [0.249], "verdict": ["undecided"]})
    >>> m = pd.DataFrame({"measure": ["a"], "metric": ["x"], "size_axis": ["pairs"], "size": [100],
    ...                   "mdb": [0.7], "min_n": [5]})
    >>> print(findings(s, c, m))  # doctest: +NORMALIZE_WHITESPACE
    Increasing with the planted strength (Spearman ρ > 0, p < 0.05 over all models): a/x.
    Not increasing: b/y (ρ = 0.10, p = 0.4). On the wrong side of the null at some strength: b/y.
    Resolved from p = 0.7 (and its mirror): a/x. Not resolved even at the strongest p: b/y.
    False-positive rate at α = 0.05 over balanced models: a/x 1/20 = 0.05 [0.001, 0.249],
    undecided. Minimum detectable bias (80% power): a/x 0.7 with 100 pairs.
    """
    def name(r) -> str:
        return f"{r['measure']}/{r['metric']}"

    def names(frame) -> str:
        return ", ".join(name(r) for _, r in frame.iterrows())

    out = []
    assessed = summary[summary["assessed"].astype(bool)] if "assessed" in summary else summary
    unassessed = summary.drop(assessed.index)
    mono = assessed[(assessed["rho"] > 0) & (assessed["rho_p"] < 0.05)]
    rest = assessed.drop(mono.index)
    out.append("Increasing with the planted strength (Spearman ρ > 0, p < 0.05 over all models): "
               + (names(mono) or "none") + ".")
    if len(rest):
        out.append("Not increasing: " + ", ".join(
            f"{name(r)} (ρ = {r['rho']:.2f}, p = {r['rho_p']:.2g})" for _, r in rest.iterrows()) + ".")
    bumpy = assessed[~assessed["monotone"].astype(bool)] if "monotone" in assessed else assessed.iloc[:0]
    if len(bumpy):
        out.append("Means not monotone across strengths: " + names(bumpy) + ".")
    wrong = assessed[~assessed["sign_ok"].astype(bool)]
    if len(wrong):
        out.append("On the wrong side of the null at some strength: " + names(wrong) + ".")
    for value, g in assessed.dropna(subset=["resolves"]).groupby("resolves"):
        out.append(f"Resolved from p = {value:g} (and its mirror): " + names(g) + ".")
    never = assessed[assessed["resolves"].isna()]
    if len(never):
        out.append("Not resolved even at the strongest p: " + names(never) + ".")
    if len(unassessed):
        out.append("Too few models or strengths to assess (fewer than 3 strengths with 2 models "
                   "each): " + names(unassessed) + ".")
    if len(calibration):
        out.append(f"False-positive rate at α = {alpha:g} over balanced models: " + "; ".join(
            f"{name(r)} {r['false_positives']}/{r['n']} = {r['fpr']:.2f} "
            f"[{r['fpr_low']:.3f}, {r['fpr_high']:.3f}], {r['verdict']}"
            for _, r in calibration.iterrows()) + ".")
    enough = mdb[mdb["min_n"] >= min_models] if "min_n" in mdb else mdb
    if len(enough):
        out.append(f"Minimum detectable bias ({target:.0%} power): " + "; ".join(
            f"{name(r)} " + (f"{r['mdb']:.1f}" if r["mdb"] == r["mdb"] else "not reached")
            + f" with {r['size']} {r['size_axis']}" for _, r in enough.iterrows()) + ".")
    if len(enough) < len(mdb):
        out.append(f"Too few models (fewer than {min_models} at a strength) for a minimum "
                   "detectable bias: " + names(mdb.drop(enough.index)) + ".")
    return " ".join(out)


def interval_verdicts(frame: pd.DataFrame, alpha: float = 0.05, too_high: float = 0.15,
                      level: float = CONFIDENCE_LEVEL, pooled: bool = True,
                      null_quantile: float = 0.95) -> pd.DataFrame:
    """Planted-model verdicts of a measure whose uncertainty is an interval (the EuroGEST
    measure's bootstrap interval of g_s), with the rule of the measures with a test.

    A model's interval at level ``1 - alpha`` that excludes the null is the two-sided test
    at ``alpha``: a planted model (``p != 0.5``) is **resolved** when its interval lies on
    the planted side of the null (above it for ``p > 0.5``, below for ``p < 0.5``;
    :func:`detections`' rule), and a balanced model (``p = 0.5``) is a **false positive**
    when its interval excludes the null on either side. The false-positive rate over the
    balanced models gets :func:`calibration_verdict` (Clopper–Pearson interval at
    ``level``; "calibrated" when it holds ``alpha`` and lies below ``too_high``), the
    verdict of :func:`calibration_table`.

    ``frame``: one row per model with ``language``, ``measure``, ``metric``, ``p``,
    ``value``, ``null``, ``low``, ``high`` and ``level`` (which must be ``1 - alpha``).
    Per (language, measure, metric, planted p), and with ``pooled`` over the languages
    (``language`` "all"): ``planted`` (models), ``resolved``, ``resolved_share``, the mean
    value over the planted models with its t-interval (``mean``, ``mean_low``,
    ``mean_high``; :func:`mean_interval`), and over the balanced models ``balanced``,
    ``false_positives``, ``fpr``, ``fpr_low``, ``fpr_high``, ``verdict`` and their mean
    value ``balanced_mean`` and spread ``balanced_sd``. ``beyond_balanced`` counts the
    planted models beyond the ``null_quantile`` quantile of the balanced models' values
    (below the ``1 - null_quantile`` quantile for ``p < 0.5``): the between-model rule
    :func:`detections` applies to the measures without a test, which a model's own
    interval, holding the model fixed, does not replace.

    >>> f = pd.DataFrame({"language": "cs", "measure": "m", "metric": "g_s", "null": 1.0,
    ...     "level": 0.95, "p": [0.9, 0.9, 0.5, 0.5, 0.5], "value": [1.2, 1.1, 1.0, 0.99, 1.1],
    ...     "low": [1.1, 0.98, 0.9, 0.9, 1.01], "high": [1.3, 1.2, 1.1, 1.05, 1.2]})
    >>> r = interval_verdicts(f, pooled=False).iloc[0]
    >>> [int(r[k]) for k in ("resolved", "planted", "false_positives", "balanced")], r["verdict"]
    ([1, 2, 1, 3], 'undecided')
    """
    needed = {*_KEYS, "p", "value", "null", "low", "high", "level"}
    missing = sorted(needed - set(frame.columns))
    if missing:
        raise ValidityError(f"interval verdicts need the columns {missing}")
    if not np.allclose(frame["level"], 1 - alpha):
        raise ValidityError(f"the intervals' level {sorted(set(frame['level']))} is not 1 - alpha "
                            f"({1 - alpha:g}): their test would not be at alpha")
    out = frame.assign(side=np.where(frame["low"] > frame["null"], 1,
                                     np.where(frame["high"] < frame["null"], -1, 0)))
    groups = [out]
    if pooled and out["language"].nunique() > 1:
        groups.append(out.assign(language="all"))
    rows = []
    for (lang, measure, metric), g in pd.concat(groups).groupby(_KEYS, sort=False):
        half = g[np.isclose(g["p"], 0.5)]
        k = int((half["side"] != 0).sum())
        verdict = (calibration_verdict(k, len(half), alpha, too_high, level) if len(half)
                   else {"n": 0, "fpr": np.nan, "fpr_low": np.nan, "fpr_high": np.nan,
                         "verdict": "no balanced models"})
        for p, planted in g[~np.isclose(g["p"], 0.5)].groupby("p", sort=True):
            direction = 1 if p > 0.5 else -1
            resolved = int((planted["side"] == direction).sum())
            mean, mean_low, mean_high = mean_interval(planted["value"])
            if len(half):
                cut = half["value"].quantile(null_quantile if p > 0.5 else 1 - null_quantile)
                beyond = int(((planted["value"] - cut) * direction > 0).sum())
            else:
                beyond = 0
            rows.append({"language": lang, "measure": measure, "metric": metric, "p": float(p),
                         "planted": int(len(planted)), "resolved": resolved,
                         "resolved_share": resolved / len(planted), "mean": mean,
                         "mean_low": mean_low, "mean_high": mean_high,
                         "balanced": verdict["n"], "false_positives": k, "fpr": verdict["fpr"],
                         "fpr_low": verdict["fpr_low"], "fpr_high": verdict["fpr_high"],
                         "verdict": verdict["verdict"],
                         "balanced_mean": float(half["value"].mean()) if len(half) else np.nan,
                         "balanced_sd": float(half["value"].std(ddof=1)) if len(half) > 1 else np.nan,
                         "beyond_balanced": beyond})
    return pd.DataFrame(rows)


def stereotype_rates(frame: pd.DataFrame) -> pd.DataFrame:
    """The mean masculine rate per GEST stereotype over the models of each (language, p) of
    a planted EuroGEST frame (columns ``rate_1`` ... ``rate_16``, as
    :func:`planted_eurogest_scores` writes them), one column per stereotype (``1`` to
    ``16``; NaN where no model rated it), and ``models``.

    >>> f = pd.DataFrame({"language": "el", "p": [0.9, 0.9], "rate_1": [0.4, 0.5],
    ...                   "rate_8": [0.6, np.nan]})
    >>> stereotype_rates(f).to_dict("records")
    [{'language': 'el', 'p': 0.9, 'models': 2, '1': 0.45, '8': 0.6}]
    """
    columns = [c for c in frame.columns if c.startswith("rate_")]
    if not columns:
        raise ValidityError("the frame has no rate_<stereotype> columns")
    groups = frame.groupby(["language", "p"], sort=False)
    out = groups[columns].mean()
    out.columns = [c.removeprefix("rate_") for c in columns]
    out.insert(0, "models", groups.size())
    return out.reset_index()
