"""External validity: per-occupation bias scores against the census share of women.

A gender-bias score of an occupation word is externally valid to the extent that it
tracks how many women actually work in the occupation. Caliskan, Bryson & Narayanan
(2017, Science 356:183, Fig. 1) correlate WEFAT scores of 50 occupations (GloVe Common
Crawl) with the 2015 US Bureau of Labor Statistics percentage of women (Pearson
ρ = 0.90, p < 10⁻¹⁸); Garg, Schiebinger, Jurafsky & Zou (2018, PNAS 115:E3635, Fig. 1)
regress the relative norm distance of occupations in Google News word2vec on the 2015
census "women occupation relative percentage" 100 (2p − 1) (r² = 0.499, p < 10⁻¹⁰).

This module scores occupations with

* :func:`static_occupation_bias`: WEFAT and the relative norm distance
  (:mod:`polybias.metrics.wefat`) on a static embedding;
* :func:`encoder_occupation_bias`: WEFAT on sentence vectors of a contextual encoder, each
  word in a bleached template (May et al. 2019's SEAT recipe);
* :func:`logprob_occupation_bias`: Kurita et al.'s (2019) increased log-probability of
  the words for women over those for men with the occupation in the attribute slot,
  "[MASK] is a/an <occupation> .", on a masked LM (:mod:`polybias.metrics.logprob`);

joins the scores with the census (:func:`join_census`, which lists every occupation it
cannot use and why) and correlates them (:func:`correlation_with_interval`,
:func:`external_validity_table`). Nothing is dropped silently: missing words are
returned beside the scores.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import norm, pearsonr, spearmanr

from polybias import models, paths
from polybias.data import census, sources, wordlists
from polybias.data.census import women_share_outcome
from polybias.data.templating import parse_templates
from polybias.engines.embeddings import sentence_vectors
from polybias.engines.static import lookup
from polybias.engines.template_scores import kurita_scores
from polybias.measures import compute
from polybias.metrics.logprob import attribute_bias
from polybias.metrics.measure import Interval, MeasureResult, finite_or_none
from polybias.results.plots import finish_figure, pyplot, wrap
from polybias.results.records import Record, measure_results_record, write_record
from polybias.stats import CONFIDENCE_LEVEL
from polybias.studies.notebook_parameters import (
    OUTPUT_DIR,
    Notebook,
    Parameter,
    ParameterError,
    choice,
    free,
    integer,
)

METHODS = ("pearson", "spearman")
#: Measures :func:`static_occupation_bias` computes (column names of its frame).
STATIC_MEASURES = ("wefat", "relative_norm_distance")
#: SEAT-style bleached template for the encoder measure; ``{phrase}`` is the word, with its
#: indefinite article for occupations.
ENCODER_TEMPLATE = "This is {phrase}."
#: Kurita et al.'s (2019) template with the occupation in the attribute slot.
LOGPROB_TEMPLATE = "{target} is {article} {occupation} ."


class ExternalValidityError(ValueError):
    """Bad input to an external-validity computation; the message names it."""


# ---------------------------------------------------------------- correlation with an interval

@dataclass(frozen=True)
class Correlation:
    """A correlation coefficient with its confidence interval and p-value."""

    method: str
    estimate: float
    low: float
    high: float
    pvalue: float
    n: int
    confidence: float
    interval: str


def correlation_with_interval(x, y, method: str = "pearson", confidence: float = CONFIDENCE_LEVEL) -> Correlation:
    """Pearson or Spearman correlation of ``x`` and ``y`` with a Fisher-z interval.

    The interval is tanh(atanh(r) ± z_{(1+c)/2} · se):

    * Pearson: se = 1 / √(n − 3) (Fisher 1921);
    * Spearman: se = √((1 + r²/2) / (n − 3)), the variance correction of Bonett & Wright
      (2000, Psychometrika 65:23) for Spearman's ρ (no bootstrap: the interval is exact
      arithmetic, identical on every run).

    The p-value is scipy's two-sided test of zero correlation (t distribution). A
    coefficient of exactly ±1 gets the degenerate interval [r, r].

    Parameters
    ----------
    x, y : 1-d arrays of the same length n ≥ 4, finite, neither constant.
    method : ``pearson`` or ``spearman``.
    confidence : level of the interval, in (0, 1).

    >>> c = correlation_with_interval([1, 2, 3, 4, 5], [2, 1, 4, 3, 5])
    >>> round(c.estimate, 2), round(c.low, 2), round(c.high, 2), c.n
    (0.8, -0.28, 0.99, 5)
    """
    if method not in METHODS:
        raise ExternalValidityError(f"method must be one of {METHODS}, got {method!r}")
    if not 0 < confidence < 1:
        raise ExternalValidityError(f"confidence must be in (0, 1), got {confidence!r}")
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    if x.ndim != 1 or x.shape != y.shape:
        raise ExternalValidityError(f"x and y must be 1-d of the same length, got {x.shape} and {y.shape}")
    n = len(x)
    if n < 4:
        raise ExternalValidityError(f"a Fisher-z interval needs n >= 4 pairs, got {n}")
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise ExternalValidityError("x and y must be finite")
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        raise ExternalValidityError("a constant variable has no correlation")
    test = pearsonr(x, y) if method == "pearson" else spearmanr(x, y)
    r, p = float(test[0]), float(test[1])
    if abs(r) >= 1.0:
        low = high = float(np.sign(r))
    else:
        se = 1.0 / np.sqrt(n - 3) if method == "pearson" else np.sqrt((1.0 + r * r / 2.0) / (n - 3))
        z = norm.ppf(0.5 + confidence / 2.0)
        low, high = (float(np.tanh(np.arctanh(r) + s * z * se)) for s in (-1.0, 1.0))
    interval = "Fisher z" if method == "pearson" else "Fisher z, Bonett-Wright se"
    return Correlation(method, r, low, high, p, n, confidence, interval)


# ---------------------------------------------------------------- scores per occupation

def _lookup(emb, words: list[str], role: str) -> tuple[np.ndarray, list[str], list[str]]:
    M, kept, missing = lookup(emb, list(words), on_missing="drop")
    if not kept:
        raise ExternalValidityError(f"no {role} word is in {emb.name} (missing: {missing})")
    return M, kept, missing


def _per_word(measure: str, W: np.ndarray, A: np.ndarray, B: np.ndarray, **options) -> np.ndarray:
    """The per-word scores of the registered per-word ``measure`` (``wefat``,
    ``relative-norm-distance``; :func:`polybias.measures.compute`), one per row of ``W``."""
    return compute(measure, W=W, A=A, B=B, **options).details["association"].to_numpy()


def static_occupation_bias(emb, occupations: list[str], women: list[str], men: list[str],
                           ddof: int = 1) -> tuple[pd.DataFrame, dict[str, list[str]]]:
    """WEFAT and relative norm distance of each occupation on a static embedding (the
    registered per-word measures ``wefat`` and ``relative-norm-distance``).

    Parameters
    ----------
    emb : :class:`polybias.engines.static.StaticEmbeddings`.
    occupations, women, men : words; those missing from the vocabulary are left out and
        returned.
    ddof : of the WEFAT std.

    Returns
    -------
    (scores, missing) : ``scores`` has columns occupation, wefat, relative_norm_distance
    (positive: closer to the words for women), in the order of ``occupations``;
    ``missing`` maps ``occupations``, ``women``, ``men`` to the words not in ``emb``.
    """
    W, kept, miss_w = _lookup(emb, occupations, "occupation")
    A, _, miss_a = _lookup(emb, women, "women's")
    B, _, miss_b = _lookup(emb, men, "men's")
    scores = pd.DataFrame({"occupation": kept,
                           "wefat": _per_word("wefat", W, A, B, ddof=ddof),
                           "relative_norm_distance": _per_word("relative-norm-distance", W, A, B)})
    return scores, {"occupations": miss_w, "women": miss_a, "men": miss_b}


def indefinite_article(word: str) -> str:
    """"an" before a written vowel, else "a" (a spelling rule; no English word of
    :mod:`polybias.data.census`'s occupation list breaks it).

    >>> indefinite_article("engineer"), indefinite_article("nurse")
    ('an', 'a')
    """
    if not word:
        raise ExternalValidityError("empty word")
    return "an" if word[0].lower() in "aeiou" else "a"


def encoder_occupation_bias(encoder, occupations: list[str], women: list[str], men: list[str],
                            template: str = ENCODER_TEMPLATE, pooling: str = "model",
                            ddof: int = 1) -> pd.DataFrame:
    """WEFAT of each occupation on a contextual encoder's sentence vectors.

    Every word is put in ``template`` (``{phrase}``: the occupation with its indefinite
    article, "This is an engineer."; a word for a gender alone, "This is she.") and
    encoded with :func:`polybias.engines.embeddings.sentence_vectors`; WEFAT (the registered
    ``wefat``, :func:`polybias.metrics.wefat.wefat_association`) is computed on those vectors as on word vectors,
    as SEAT does for WEAT (May et al. 2019).

    Returns a frame with columns occupation, encoder_wefat (positive: closer to women).
    """
    if "{phrase}" not in template:
        raise ExternalValidityError(f"template {template!r} has no {{phrase}} slot")
    for role, words in (("occupations", occupations), ("women", women), ("men", men)):
        if not words:
            raise ExternalValidityError(f"no {role} words")
    texts_w = [template.format(phrase=f"{indefinite_article(o)} {o}") for o in occupations]
    vectors = [sentence_vectors(encoder, texts, pooling=pooling) for texts in
               (texts_w, [template.format(phrase=w) for w in women],
                [template.format(phrase=w) for w in men])]
    return pd.DataFrame({"occupation": list(occupations),
                         "encoder_wefat": _per_word("wefat", *vectors, ddof=ddof)})


def occupation_template_book(occupations: list[str], women: list[str], men: list[str],
                             text: str = LOGPROB_TEMPLATE):
    """A :class:`polybias.data.templating.TemplateBook` with one template ``occupation``:
    targets are the words for women (``features: {group: women}``) and men (``men``), the
    attribute is the occupation, and ``{article}`` agrees with it (a/an).

    >>> book = occupation_template_book(["nurse", "engineer"], ["she"], ["he"])
    >>> from polybias.data import templating
    >>> [f.text for f in templating.expand(book, "occupation", fixed={"target": "she", "occupation": "engineer"})]
    ['she is an engineer .']
    """
    overlap = sorted(set(women) & set(men))
    if overlap:
        raise ExternalValidityError(f"words in both gender groups: {overlap}")
    lists = {
        "targets": {"source": "polybias.studies.external_validity", "entries": [
            {"id": w, "features": {"group": g}, "word": w}
            for g, ws in (("women", women), ("men", men)) for w in ws]},
        "occupations": {"source": "polybias.data.census", "entries": [
            {"id": o, "features": {"article": indefinite_article(o)}, "word": o} for o in occupations]},
        "articles": {"source": "polybias.studies.external_validity", "entries": [
            {"id": "indefinite", "forms": {"a": "a", "an": "an"}}]},
    }
    template = {"name": "occupation", "set": "occupation", "text": text,
                "slots": {"target": {"list": "targets", "role": "target"},
                          "occupation": {"list": "occupations", "role": "attribute"},
                          "article": {"list": "articles", "role": "context",
                                      "form": "{occupation.article}"}}}
    return parse_templates({"language": "en", "lists": lists, "templates": [template]},
                           file="occupation_templates")


def logprob_occupation_bias(lm, occupations: list[str], women: list[str], men: list[str],
                            text: str = LOGPROB_TEMPLATE, mode: str = "word",
                            batch_tokens: int | None = None) -> pd.DataFrame:
    """Kurita et al.'s log-probability bias of each occupation, women minus men.

    For the template "{target} is a/an {occupation} ." (Kurita, Vyas, Pareek, Black &
    Tsvetkov 2019, with the occupation as the attribute), the corrected score of a target
    word x is log P(x | occupation shown) − log P(x | occupation masked), read at the
    target's mask (:func:`polybias.engines.template_scores.kurita_scores`), and

        b(o) = mean_{x ∈ women} corrected(x, o) − mean_{y ∈ men} corrected(y, o)

    (:func:`polybias.metrics.logprob.attribute_bias`); positive: the occupation raises
    the probability of the words for women more than of those for men.

    Returns a frame with columns occupation, logprob_bias, in the order of ``occupations``.
    """
    book = occupation_template_book(occupations, women, men, text)
    scores = kurita_scores(lm, book, "occupation", mode=mode, batch_tokens=batch_tokens)
    bias = attribute_bias(scores, list(women), list(men))
    return pd.DataFrame({"occupation": list(occupations),
                         "logprob_bias": bias.reindex(list(occupations)).to_numpy(float)})


# ---------------------------------------------------------------- census join and correlation

def join_census(scores: pd.DataFrame, shares: pd.DataFrame, outcome: str = "share"
                ) -> tuple[pd.DataFrame, list[str]]:
    """Scores of the occupations the census covers, with the outcome to correlate.

    Parameters
    ----------
    scores : frame with an ``occupation`` column and score columns.
    shares : one census year of :func:`polybias.data.census.occupation_shares` (columns
        occupation, women).
    outcome : see :func:`polybias.data.census.women_share_outcome`.

    Returns
    -------
    (joined, no_census) : ``joined`` adds ``women`` (the share) and ``outcome`` to the
    scored occupations that have a census share (and, for the logit, a share strictly
    between 0 and 1); ``no_census`` lists, in order, the scored occupations left out.
    """
    if "occupation" not in scores.columns:
        raise ExternalValidityError("scores need an 'occupation' column")
    years = shares["year"].unique() if "year" in shares.columns else []
    if len(years) > 1:
        raise ExternalValidityError(f"shares hold several census years {sorted(years)}; pass one")
    if shares["occupation"].duplicated().any():
        raise ExternalValidityError("shares repeat an occupation")
    share = shares.set_index("occupation")["women"]
    joined = scores.assign(women=scores["occupation"].map(share))
    usable = joined["women"].notna()
    if outcome == "logit":
        usable &= (joined["women"] > 0) & (joined["women"] < 1)
    no_census = joined.loc[~usable, "occupation"].tolist()
    joined = joined[usable].reset_index(drop=True)
    joined["outcome"] = women_share_outcome(joined["women"].to_numpy(), outcome)
    return joined, no_census


def external_validity_table(scores: pd.DataFrame, shares: pd.DataFrame, measures: list[str],
                            years: list[int], outcomes: tuple[str, ...] = ("share",),
                            confidence: float = CONFIDENCE_LEVEL) -> pd.DataFrame:
    """Pearson and Spearman correlation of each measure with each census outcome and year.

    Parameters
    ----------
    scores : frame with ``occupation`` and one column per measure (NaN: not scored).
    shares : :func:`polybias.data.census.occupation_shares` for all years (or those in ``years``).
    measures, years, outcomes : what to correlate.

    Returns
    -------
    One row per measure, year and outcome: n (occupations correlated), pearson,
    pearson_low, pearson_high, spearman, spearman_low, spearman_high, pearson_p,
    spearman_p and no_census (the scored occupations without a usable share that year,
    comma-separated).
    """
    missing = [m for m in measures if m not in scores.columns]
    if missing:
        raise ExternalValidityError(f"no score column(s) {missing}; have {list(scores.columns)}")
    rows = []
    for measure in measures:
        scored = scores.loc[scores[measure].notna(), ["occupation", measure]]
        for year in years:
            one_year = shares[shares["year"] == year]
            if one_year.empty:
                raise ExternalValidityError(f"no census shares for year {year}")
            for outcome in outcomes:
                joined, no_census = join_census(scored, one_year, outcome)
                pr = correlation_with_interval(joined[measure], joined["outcome"], "pearson", confidence)
                sr = correlation_with_interval(joined[measure], joined["outcome"], "spearman", confidence)
                rows.append({"measure": measure, "year": int(year), "outcome": outcome, "n": pr.n,
                             "pearson": pr.estimate, "pearson_low": pr.low, "pearson_high": pr.high,
                             "spearman": sr.estimate, "spearman_low": sr.low, "spearman_high": sr.high,
                             "pearson_p": pr.pvalue, "spearman_p": sr.pvalue,
                             "no_census": ", ".join(no_census)})
    return pd.DataFrame(rows)


def published_comparison(table: pd.DataFrame, published: pd.DataFrame, model: str,
                         measure_of: dict[str, str] | None = None) -> pd.DataFrame:
    """Published correlations beside ours for the same measure, outcome and census year.

    Parameters
    ----------
    table : :func:`external_validity_table` output (our correlations).
    published : rows of ``paper/reported/external_validity_published.csv`` (columns study,
        model, measure, outcome, census_year, n_occupations, metric: ``pearson`` or
        ``r_squared``, value).
    model : the model our ``table`` was computed on (named beside the published one).
    measure_of : published measure → our measure to set beside it (default: the same
        name; e.g. ``{"wefat": "wefat_caliskan_terms"}`` for the row computed with the
        study's own gender words).

    Returns
    -------
    One row per published value: study, published_model, measure (ours), outcome,
    census_year, published_n, published (the statistic as printed, e.g. "r² = 0.499"),
    published_r (r; √r² for a published r², whose figures have a positive slope), our_model,
    our_n, ours (our value of the same statistic), our_pearson, our_low, our_high (NaN
    where we did not compute that measure, outcome and year). A Pearson r with Garg et
    al.'s 100 (2p − 1) equals that with the share p, so that outcome is matched to ``share``.
    """
    measure_of = measure_of or {}
    rows = []
    for rec in published.to_dict("records"):
        value = float(rec["value"])
        if rec["metric"] == "pearson":
            r, printed = value, f"r = {value:.2f}"
        elif rec["metric"] == "r_squared":
            r, printed = float(np.sqrt(value)), f"r² = {value:.3f}"
        else:
            raise ExternalValidityError(f"published metric must be pearson or r_squared, got {rec['metric']!r}")
        measure = measure_of.get(rec["measure"], rec["measure"])
        outcome = "share" if rec["outcome"] == "relative_percentage" else rec["outcome"]
        ours = table[(table["measure"] == measure) & (table["outcome"] == outcome)
                     & (table["year"] == int(rec["census_year"]))]
        got = ours.iloc[0] if len(ours) else None
        n_pub = rec.get("n_occupations")
        ours_printed = "—"
        if got is not None:
            ours_printed = (f"r = {got['pearson']:.2f}" if rec["metric"] == "pearson"
                            else f"r² = {got['pearson'] ** 2:.3f}")
        rows.append({"study": rec["study"], "published_model": rec["model"], "measure": measure,
                     "outcome": rec["outcome"], "census_year": int(rec["census_year"]),
                     "published_n": "—" if pd.isna(n_pub) else str(int(n_pub)),
                     "published": printed, "published_r": r, "our_model": model,
                     "our_n": str(int(got["n"])) if got is not None else "—", "ours": ours_printed,
                     "our_pearson": got["pearson"] if got is not None else np.nan,
                     "our_low": got["pearson_low"] if got is not None else np.nan,
                     "our_high": got["pearson_high"] if got is not None else np.nan})
    return pd.DataFrame(rows)


def plot_census_scatter(joined: dict[str, pd.DataFrame], year: int, title: str, file: str | None = None,
                        labels: dict[str, str] | None = None):
    """One panel per measure (three to a row): score against the census share of women,
    with the least-squares line and Pearson r in the panel title; saved as ``figures/<file>``.

    ``joined`` maps a measure name to a :func:`join_census` frame (columns ``women`` and
    the measure); ``labels`` maps a measure to its panel title (default: its name).
    """
    labels = labels or {}
    plt = pyplot()
    if not joined:
        raise ExternalValidityError("nothing to plot")
    ncols = min(3, len(joined))
    nrows = -(-len(joined) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(2.2 * ncols, 2.3 * nrows + 0.4), squeeze=False)
    for ax in axes.flat[len(joined):]:
        ax.set_visible(False)
    for ax, (measure, frame) in zip(axes.flat, joined.items(), strict=False):
        x, y = frame["women"].to_numpy(float), frame[measure].to_numpy(float)
        slope, intercept = np.polyfit(x, y, 1)
        grid = np.linspace(0.0, 1.0, 2)
        ax.scatter(x, y, s=12, color="#3b6ea8")
        ax.plot(grid, intercept + slope * grid, color="#c0392b", lw=1.2)
        ax.axhline(0, color="grey", lw=0.6, ls="--")
        r = correlation_with_interval(x, y).estimate
        ax.set_title(f"{wrap(labels.get(measure, measure), 30)}\nPearson r = {r:.2f}, n = {len(x)}",
                     fontsize=7.5)
        ax.set_xlabel(f"share of women, census {year}", fontsize=7.5)
        ax.set_xlim(0, 1)
        ax.tick_params(labelsize=7)
    for row in axes:
        row[0].set_ylabel("score (+: closer to women)", fontsize=7.5)
    fig.suptitle(title, fontsize=9)
    return finish_figure(fig, file)


@dataclass
class OccupationScores:
    """Every measure's score per occupation, with who computed it and what was missing.

    ``scores``: ``occupation`` and one column per measure (NaN: not scored); ``model_of``:
    measure → the model that computed it, in the order the columns were added;
    ``missing``: word role → the words the static model lacks."""

    scores: pd.DataFrame
    model_of: dict[str, str]
    missing: dict[str, list[str]]

    @property
    def measures(self) -> list[str]:
        return list(self.model_of)


def occupation_scores(model: str, occupations: list[str], women: list[str], men: list[str], *,
                      caliskan_terms: bool = True, encoder: str = "", mlm: str = "",
                      mlm_women: list[str] = ("she",), mlm_men: list[str] = ("he",),
                      ddof: int = 1, device: str = "auto", dtype: str = "auto") -> OccupationScores:
    """Score ``occupations`` with every measure asked for, each on its own model.

    * :data:`STATIC_MEASURES` on the static model ``model`` with the gender words
      ``women`` / ``men`` (:func:`static_occupation_bias`);
    * with ``caliskan_terms``, WEFAT on the same model with Caliskan et al.'s 8 + 8 gender
      terms (``female_terms`` / ``male_terms`` of ``data/wordlists/en/weat.yaml``), column
      ``wefat_caliskan_terms``;
    * with ``encoder`` (a registered encoder), WEFAT on its sentence vectors
      (:func:`encoder_occupation_bias`), column ``encoder_wefat``;
    * with ``mlm`` (a registered masked LM), Kurita's log-probability bias with the
      targets ``mlm_women`` / ``mlm_men`` (:func:`logprob_occupation_bias`), column
      ``logprob_bias``.

    The encoder and the masked LM are loaded with ``device`` and ``dtype``
    (:func:`polybias.models.load`).
    """
    emb = models.load(model, "static")
    static, missing = static_occupation_bias(emb, occupations, women, men, ddof=ddof)
    scores = pd.DataFrame({"occupation": occupations}).merge(static, on="occupation", how="left")
    model_of = dict.fromkeys(STATIC_MEASURES, model)
    if caliskan_terms:
        sets = wordlists.load_wordlist_file(paths.data_dir() / "wordlists" / "en" / "weat.yaml")[0]
        by_terms, missing_terms = static_occupation_bias(
            emb, occupations, list(sets["female_terms"].words), list(sets["male_terms"].words), ddof=ddof)
        missing.update({"female_terms": missing_terms["women"], "male_terms": missing_terms["men"]})
        scores = scores.merge(by_terms[["occupation", "wefat"]].rename(columns={"wefat": "wefat_caliskan_terms"}),
                              on="occupation", how="left")
        model_of["wefat_caliskan_terms"] = model
    if encoder:
        scores = scores.merge(encoder_occupation_bias(models.load(encoder, "encoder", device=device,
                                                                  dtype=dtype), occupations,
                                                      women, men, ddof=ddof),
                              on="occupation", how="left")
        model_of["encoder_wefat"] = encoder
    if mlm:
        scores = scores.merge(logprob_occupation_bias(models.load(mlm, "lm", device=device, dtype=dtype),
                                                      occupations,
                                                      list(mlm_women), list(mlm_men)),
                              on="occupation", how="left")
        model_of["logprob_bias"] = mlm
    return OccupationScores(scores, model_of, missing)


def coverage_table(model: str, missing: dict[str, list[str]]) -> pd.DataFrame:
    """One row per word role of :attr:`OccupationScores.missing`: the model, the role and
    the words it lacks (comma-separated, ``none`` when it has them all).

    >>> coverage_table("m", {"women": [], "occupations": ["ab", "cd"]}).missing.tolist()
    ['none', 'ab, cd']
    """
    return pd.DataFrame([{"model": model, "words": role, "missing": ", ".join(words) or "none"}
                         for role, words in missing.items()])


def correlation_tables(result: OccupationScores, shares: pd.DataFrame, years: list[int],
                       outcomes: tuple[str, ...] = ("share",), confidence: float = CONFIDENCE_LEVEL
                       ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """:func:`external_validity_table` of every measure of ``result`` with the model that
    computed it (column ``model``), and the occupations each measure and year left out
    for want of a census share (columns measure, year and ``scored occupations without a
    census share``)."""
    table = external_validity_table(result.scores, shares, result.measures, years, tuple(outcomes),
                                    confidence)
    table.insert(1, "model", table["measure"].map(result.model_of))
    left_out = (table[["measure", "year", "no_census"]].drop_duplicates(["measure", "year"])
                .rename(columns={"no_census": "scored occupations without a census share"}))
    return table, left_out


def joined_by_measure(result: OccupationScores, shares: pd.DataFrame, year: int) -> dict[str, pd.DataFrame]:
    """Measure → its scored occupations joined with the census shares of ``year``
    (:func:`join_census`), as :func:`plot_census_scatter` takes them."""
    one_year = shares[shares["year"] == year]
    return {m: join_census(result.scores.loc[result.scores[m].notna(), ["occupation", m]], one_year)[0]
            for m in result.measures}


def external_record(measure: str, model: str, correlations: pd.DataFrame, scores: pd.DataFrame,
                    missing: dict[str, list[str]], parameters: dict[str, Any], **fields: Any) -> Record:
    """The run record (metric ``external_validity``, test ``measure``) of one measure's
    occupation scores on ``model`` against the census: for each outcome and year of
    ``correlations`` (rows of :func:`census_correlations`), Pearson's r and Spearman's ρ
    (the statistics ``census-pearson`` and ``census-spearman``, subset ``<outcome>, census
    <year>``) with their Fisher-z interval at ``parameters["confidence"]`` (default
    :data:`~polybias.stats.CONFIDENCE_LEVEL`), two-sided p and n; the first is the record's
    value, the others its groups. The details are the scores (``part: score``) and the
    words the model lacks (``part: missing``, one row per word set). One
    :func:`~polybias.results.records.measure_results_record`.

    >>> rows = pd.DataFrame([{"measure": "wefat", "year": 2015, "outcome": "share", "n": 5,
    ...     "pearson": 0.5, "pearson_low": 0.1, "pearson_high": 0.8, "pearson_p": 0.04,
    ...     "spearman": 0.4, "spearman_low": 0.0, "spearman_high": 0.7, "spearman_p": 0.1,
    ...     "no_census": ""}])
    >>> rec = external_record("wefat", "w2v", rows, pd.DataFrame({"occupation": ["a"], "wefat": [0.2]}),
    ...                       {"women": ["x"]}, {}, packages={})
    >>> rec.values["measure"], rec.values["subset"], rec.values["interval"]["level"]
    ('census-pearson', 'share, census 2015', 0.95)
    >>> [(g["measure"], g["p_value"]) for g in rec.values["groups"]]
    [('census-spearman', 0.1)]
    """
    level = parameters.get("confidence") or CONFIDENCE_LEVEL
    entries = []
    for row in correlations.to_dict("records"):
        for method in ("pearson", "spearman"):
            low, high, p = (finite_or_none(row[f"{method}_{k}"]) for k in ("low", "high", "p"))
            interval = None if low is None or high is None else Interval(low, high, level, "fisher-z")
            value = finite_or_none(row[method])
            result = MeasureResult(f"census-{method}", math.nan if value is None else value, interval, p,
                                   f"{method}-test" if p is not None else "none", int(row["n"]),
                                   extra={"no_census": row["no_census"]})
            entries.append((f"{row['outcome']}, census {row['year']}", result, {}))
    details = ([{"part": "score", "occupation": r["occupation"], "score": r[measure]}
                for r in scores[["occupation", measure]].dropna().to_dict("records")]
               + [{"part": "missing", "set": k, "words": list(v)} for k, v in missing.items()])
    return measure_results_record(entries, model=model, language="en", test=measure, metric="external_validity",
                                  parameters=parameters, details=details, **fields)


def write_external_records(result: OccupationScores, table: pd.DataFrame, model: str,
                           parameters: dict, output_dir: str) -> list:
    """One run record (:func:`external_record`) per measure under ``output_dir`` (relative
    to the output root), with the sha256 of the census files; the words the static ``model``
    lacks go with its measures' records. Returns the records' paths."""
    data_sha = {name: sources.get_source(name).sha256 for name in
                (census.OCCUPATIONS, census.SHARES, census.FEMALE_WORDS, census.MALE_WORDS)}
    written = []
    for measure, by in result.model_of.items():
        record = external_record(measure, by, table[table["measure"] == measure], result.scores,
                                 result.missing if by == model else {}, parameters, data_sha256=data_sha)
        written.append(write_record(record, paths.output_path(output_dir)))
    return written


# ------------------------------------------------------------------ the notebook's parameters

def _check_13_external_validity(*, mlm_women, mlm_men):
    if len(mlm_women) != len(mlm_men) or not mlm_women:
        raise ParameterError(f"mlm_women and mlm_men must be non-empty and of equal length, got "
                             f"{mlm_women}, {mlm_men}")


#: The parameters of notebook 13_external_validity: their help, allowed values and checks.
NOTEBOOK_PARAMETERS: Notebook = Notebook({
    "model": free("registered static model (configs/models.yaml)"),
    "encoder": free("registered encoder for the sentence-vector WEFAT; empty: none"),
    "caliskan_terms": free("also WEFAT with Caliskan et al.'s 8 + 8 gender terms (en/weat.yaml "
                           "female_terms, male_terms)"),
    "mlm": free("registered masked LM for Kurita's log-probability bias; empty: none (no "
                "embedded MLM knows occupations; planted-mlm: a negative control)"),
    "mlm_women": free("Kurita targets for women (Kurita et al. 2019: he / she)"),
    "mlm_men": free("Kurita targets for men, in the same order"),
    "census_year": integer("census year to correlate with; 0: the latest year in the file"),
    "model_year": integer("census year matching the model's text (Google News word2vec, "
                          "released 2013); 0: none"),
    "outcomes": Parameter("among {values}: share of women p, logit(p) (Garg et al.'s \"logit "
                          "proportion\")", values=census.OUTCOMES, each=True),
    "ddof": choice("std degrees of freedom of WEFAT (1: sample std): {values}", (1, 0)),
    "confidence": Parameter("level of the Fisher-z intervals ({range})", low=0, high=1,
                            open_range=True, default="polybias.stats.CONFIDENCE_LEVEL"),
    "reported": free("paper/reported/NAME.csv with the published correlations; empty: none"),
    "output_dir": OUTPUT_DIR,
    "table_file": free("where to write the tables (e.g. paper/tables/external_w2v-gnews.md)"),
    "figure_file": free("scatter figure under figures/; empty: none"),
}, _check_13_external_validity)
