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

:func:`dose_response` runs them over a grid of ``p`` and seeds (one row per measurement);
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

MEASURES = ("weat", "crows-mlm", "crows-causal", "template-mlm", "embedding-mlm")
"""Measure families :func:`dose_response` knows. ``crows-*`` give two rows each: the
stereotype score (``metric="stereotype-score"``) and the JSD score (``metric="jsd-B"``);
``template-mlm`` gives ``kurita-effect-size`` and ``cb``; ``embedding-mlm`` gives
``seat-effect-size`` and ``ceat-ces``."""

UNSIGNED_METRICS = ("cb",)
"""Metrics without a direction (variances): their dose is ``|p - 0.5|``, not ``p``."""

LM_TRAINING = {"mlm": {"epochs": 10, "batch_size": 16}, "causal": {"epochs": 5, "batch_size": 16}}
"""Training options of the planted LMs used here: small enough to train in seconds."""


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
    n_sentences: int = 4000,
    n_permutations: int = 10_000,
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
    from ..engines.static import lookup
    from ..metrics.weat import weat
    from ..planted.synthetic import planted_groups, planted_word2vec

    p = _check_p(p)
    emb = planted_word2vec(p, seed=seed, language=language, n_sentences=n_sentences, **word2vec)
    groups = planted_groups(language)
    sets = [groups["targets"]["male"], groups["targets"]["female"],
            groups["attributes"]["career"], groups["attributes"]["family"]]
    vectors = [lookup(emb, words, on_missing="raise")[0] for words in sets]
    result = weat(*vectors, n_permutations=n_permutations, seed=seed)
    return {"measure": "weat", "metric": "effect-size", "p": p, "seed": seed,
            "value": float(result.effect_size), "null": 0.0, "pvalue": float(result.pvalue)}


def planted_lm(kind: str, p: float, seed: int = 0, language: str = "en",
               n_sentences: int = 3000, **training: Any):
    """The tiny LM of :func:`planted_lm_scores` as a :class:`polybias.engines.scoring.LanguageModel`
    (trained once per input set, then loaded from the cache). The measures of one model
    share it: within a process, a model is read from disk once (:func:`_loaded_lm`)."""
    from .. import paths

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
    from ..engines.scoring import wrap_language_model
    from ..planted.synthetic import cached_planted_model, planted_model_spec

    model, tokenizer = cached_planted_model(kind, p, seed=seed, language=language,
                                            n_sentences=n_sentences, **dict(options))
    spec = planted_model_spec(kind, p, seed, language, n_sentences, **dict(options))
    return wrap_language_model(model, tokenizer, name=f"planted-{kind}-p{p:g}-s{seed}",
                               kind=kind, revision=f"planted:{spec}")


def planted_template_scores(
    p: float,
    seed: int = 0,
    language: str = "en",
    n_sentences: int = 3000,
    n_permutations: int = 10_000,
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
    from ..metrics import catbias, logprob
    from ..planted import probes

    lm = planted_lm("mlm", p, seed, language, n_sentences, **training)
    book = probes.planted_templates(language)
    scores = logprob.kurita_scores(lm, book, list(book.templates))
    targets = logprob.group_members(book, "targets")
    attributes = logprob.group_members(book, "attributes")
    bias = logprob.attribute_bias(scores, targets["male"], targets["female"])
    effect = logprob.kurita_effect(bias, attributes["career"], attributes["family"],
                                   n_permutations=n_permutations, seed=seed)
    cb = float(catbias.cb_rows(scores, "corrected", ddof=0)["cb"].mean())
    base = {"measure": "template-mlm", "p": float(p), "seed": seed}
    return [{**base, "metric": "kurita-effect-size", "value": float(effect.effect_size),
             "null": 0.0, "pvalue": float(effect.pvalue)},
            {**base, "metric": "cb", "value": cb, "null": float("nan"), "pvalue": float("nan")}]


def planted_embedding_scores(
    p: float,
    seed: int = 0,
    language: str = "en",
    n_sentences: int = 3000,
    n_samples: int = 20,
    n_permutations: int = 10_000,
    **training: Any,
) -> list[dict[str, Any]]:
    """SEAT and CEAT of the tiny planted MLM used as an encoder (its last layer).

    SEAT: each target and attribute word in the bleached sentence ``"the {word} ."``
    (words of the corpus vocabulary only), sentence vector = mean over the word's tokens
    (``pooling="mean"``); WEAT statistics with a one-sided permutation p. CEAT: a fresh
    corpus from the same distribution (``planted_corpus(n_sentences, p, seed + 10_000)``,
    sentences the model has not seen), ``n_samples`` occurrences per word (seeded), word
    vectors pooled over the word's pieces, random-effects CES with a two-tailed p.
    X = male, Y = female, A = career, B = family terms in both.

    Returns two dicts (``metric`` "seat-effect-size" and "ceat-ces"), ``measure``
    "embedding-mlm".
    """
    from ..data import text
    from ..engines import embeddings
    from ..metrics import ceat as ceat_metric
    from ..metrics.weat import weat
    from ..planted.synthetic import planted_corpus, planted_groups

    lm = planted_lm("mlm", p, seed, language, n_sentences, **training)
    encoder = embeddings.wrap_encoder(lm.model, lm.tokenizer, name=lm.name,
                                      revision=lm.revision, pooling="mean")
    groups = planted_groups(language)
    sets = {"X": groups["targets"]["male"], "Y": groups["targets"]["female"],
            "A": groups["attributes"]["career"], "B": groups["attributes"]["family"]}
    seat_vec = {r: embeddings.sentence_vectors(encoder, [f"the {w} ." for w in ws], pooling="mean")
                for r, ws in sets.items()}
    seat_res = weat(seat_vec["X"], seat_vec["Y"], seat_vec["A"], seat_vec["B"],
                    n_permutations=n_permutations, seed=seed)
    fresh = planted_corpus(n_sentences, p, seed=seed + 10_000, language=language)
    words = [w for ws in sets.values() for w in ws]
    found = text.find_occurrences(fresh, words, language=language)
    samples = text.sample_occurrences(found, n_samples, seed=seed)
    vectors = ceat_metric.occurrence_vectors(encoder, samples)
    stacked = {r: ceat_metric.stack_occurrences(vectors, ws, r) for r, ws in sets.items()}
    ceat_res = ceat_metric.ceat(stacked["X"], stacked["Y"], stacked["A"], stacked["B"])
    base = {"measure": "embedding-mlm", "p": float(p), "seed": seed, "null": 0.0}
    return [{**base, "metric": "seat-effect-size", "value": float(seat_res.effect_size),
             "pvalue": float(seat_res.pvalue)},
            {**base, "metric": "ceat-ces", "value": float(ceat_res.ces),
             "pvalue": float(ceat_res.pvalue)}]


def planted_lm_scores(
    kind: str,
    p: float,
    seed: int = 0,
    language: str = "en",
    n_sentences: int = 3000,
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
    from ..metrics import crows
    from ..planted.synthetic import minimal_pairs

    lm = planted_lm(kind, p, seed, language, n_sentences, **training)
    pairs = minimal_pairs(n_pairs, language=language, seed=seed)
    stereo = crows.stereotype_score(crows.pair_scores(lm, pairs), n_bootstrap=0)
    jsd = crows.jsd_stereotype_score(crows.jsd_attributions(lm, pairs), n_bootstrap=0)
    rows = []
    for metric, table in (("stereotype-score", stereo), ("jsd-B", jsd)):
        overall = table[table["bias_type"] == "all"].iloc[0]
        rows.append({"measure": f"crows-{kind}", "metric": metric, "p": p, "seed": seed,
                     "value": float(overall["score"]), "null": 50.0,
                     "pvalue": float(overall["binom_p"])})
    return rows


def dose_response(
    measures: list[str] | tuple[str, ...],
    ps: list[float],
    seeds: list[int],
    language: str = "en",
    progress: bool = False,
    **options: Any,
) -> pd.DataFrame:
    """Every measure at every ``p`` and seed: one row per (measure, metric, p, seed).

    ``options`` go to :func:`planted_weat` (keys ``weat_*`` with the prefix removed) and
    :func:`planted_lm_scores` (keys ``lm_*``), e.g. ``weat_n_sentences=4000``,
    ``lm_n_pairs=100``.
    """
    unknown = sorted(set(measures) - set(MEASURES))
    if unknown or not measures:
        raise ValidityError(f"unknown or no measures {unknown}; known: {MEASURES}")
    if not ps or not seeds:
        raise ValidityError("ps and seeds must be non-empty")
    weat_opts = {k[5:]: v for k, v in options.items() if k.startswith("weat_")}
    lm_opts = {k[3:]: v for k, v in options.items() if k.startswith("lm_")}
    probe_opts = {k: v for k, v in lm_opts.items() if k != "n_pairs"}  # template/embedding probes
    other = sorted(k for k in options if not k.startswith(("weat_", "lm_")))
    if other:
        raise ValidityError(f"options must start with weat_ or lm_: {other}")
    jobs = [(m, p, s) for m in measures for p in ps for s in seeds]
    if progress:
        from tqdm.auto import tqdm

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


def validity_summary(frame: pd.DataFrame, alpha: float = 0.05, min_null: int = 10) -> pd.DataFrame:
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
    from scipy.stats import binomtest, spearmanr

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
