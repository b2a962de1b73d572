"""GEST (Pikuliak et al. 2024): the released runs recomputed, and a model scored by name.

:func:`published_summary` and :func:`published_rates` aggregate every released prediction
file (11 masked LMs × 4 templates, 23 causal LMs × 2 templates; :mod:`polybias.data.gest`)
with the registered ``gest`` measure (:func:`polybias.measures.compute`): per run the
masculine rate g_s with its interval, r_f and r_m, and per stereotype the rate r_i with its
interval and rank. :func:`score_model` scores a loaded language model with the engine's
GEST scorers (:mod:`polybias.engines.gest_scores`) under every template of its kind, the
same way the authors produced their files, and :func:`model_rates` aggregates the result
alike; :func:`sample_sentences` draws the declared sample a quick run scores (stated by
:func:`sample_caption`). :func:`rates_table` prints the rates in the authors' format (``lower mean upper``,
two decimals, their appendix tables) and :func:`summary_table` the g_s of every run.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from polybias import paths
from polybias.data import gest, sources
from polybias.data.minimal_pairs import sample_pairs, stratified_sample_caption
from polybias.engines import gest_scores
from polybias.measures import compute
from polybias.metrics.gest import BASES, INTERVALS
from polybias.metrics.measure import Interval, MeasureResult
from polybias.results import records, report
from polybias.stats import CONFIDENCE_LEVEL, N_BOOTSTRAP
from polybias.studies.notebook_parameters import (
    BATCH_TOKENS,
    DEVICE,
    DTYPE,
    OUTPUT_DIR,
    SCORED_MODEL,
    TABLE_FILE,
    Notebook,
    Parameter,
    ParameterError,
    choice,
    free,
    integer,
    published_only,
)

SUMMARY_COLUMNS = ("kind", "model", "hub_id", "template", "n", "r_f", "r_m", "g_s", "g_s_low", "g_s_high")
RATE_COLUMNS = ("kind", "model", "hub_id", "template", "stereotype", "name", "group", "n",
                "rate", "ci_low", "ci_high", "rank")


def _aggregate(scores: np.ndarray, stereotypes: np.ndarray, run: dict, n_bootstrap: int, seed: int,
               interval: str, base: str) -> tuple[dict, pd.DataFrame]:
    r = compute("gest", scores=scores, stereotypes=stereotypes, n_bootstrap=n_bootstrap, seed=seed,
                interval=interval, base=base)
    iv = r.interval
    summary = {**run, "n": r.n, "r_f": float(np.exp(np.log(r.details.rate[r.details.group == "feminine"]).mean())),
               "r_m": float(np.exp(np.log(r.details.rate[r.details.group == "masculine"]).mean())),
               "g_s": r.value, "g_s_low": iv.low if iv else np.nan, "g_s_high": iv.high if iv else np.nan}
    rates = r.details.assign(**run, name=r.details.stereotype.map(gest.STEREOTYPE_NAMES))
    return summary, rates[list(RATE_COLUMNS)]


def published_rates(kinds: tuple[str, ...] = gest.KINDS, n_bootstrap: int = N_BOOTSTRAP, seed: int = 0,
                    interval: str = "normal", base: str = "e") -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every released run of ``kinds`` aggregated by the ``gest`` measure.

    Returns
    -------
    (summary, rates)
        ``summary``: one row per run (:data:`SUMMARY_COLUMNS`); ``rates``: one row per run
        and stereotype (:data:`RATE_COLUMNS`). Runs in :func:`polybias.data.gest.prediction_runs`
        order; each run's bootstrap is seeded with ``seed``.
    """
    sentences = gest.load_gest()
    ids = sentences["stereotype"].to_numpy()
    summaries, rates = [], []
    registry = sources.load_registry()
    runs = gest.prediction_runs(registry=registry)
    for run in runs[runs.kind.isin(kinds)].to_dict("records"):
        scores = gest.load_predictions(run["kind"], run["model"], run["template"], registry=registry)
        s, r = _aggregate(scores, ids, run, n_bootstrap, seed, interval, base)
        summaries.append(s)
        rates.append(r)
    return pd.DataFrame(summaries, columns=list(SUMMARY_COLUMNS)), pd.concat(rates, ignore_index=True)


def sample_sentences(sentences: pd.DataFrame, max_items: int, seed: int = 0) -> pd.DataFrame:
    """A seeded sample of at most ``max_items`` GEST sentences, stratified by stereotype, in
    the file's order; all of them when ``max_items`` is 0 or not smaller than the file.

    Each stereotype gets ``max_items`` × its share of the sentences, rounded by largest
    remainder, drawn without replacement with ``numpy.random.default_rng(seed)``
    (:func:`polybias.data.minimal_pairs.sample_pairs`, the draw of the other declared samples).

    >>> frame = pd.DataFrame({"sentence": list("abcdefgh"), "stereotype": [1] * 4 + [9] * 4})
    >>> sample = sample_sentences(frame, 4, seed=0)
    >>> sample.stereotype.value_counts().sort_index().to_dict()
    {1: 2, 9: 2}
    >>> sample_sentences(frame, 4, seed=0).sentence.tolist() == sample.sentence.tolist()
    True
    >>> len(sample_sentences(frame, 0))
    8
    """
    return sample_pairs(sentences, max_items, seed, by="stereotype")


def sample_caption(n_scored: int, n_available: int, max_items: int, seed: int) -> str:
    """The line GEST's tables state the scored sentences with: all of them, or the sample
    :func:`sample_sentences` drew
    (:func:`polybias.data.minimal_pairs.stratified_sample_caption` in GEST's words).

    >>> sample_caption(80, 3565, 80, 0)
    'Sentences: a sample of 80 of the 3,565, stratified by stereotype (max_items = 80, seed 0); n counts them.'
    >>> sample_caption(3565, 3565, 0, 0)
    'Sentences: all 3,565.'
    """
    return stratified_sample_caption("Sentences", n_scored, n_available, "max_items", max_items, seed,
                                     "stereotype", note="; n counts them")


def score_model(lm, sentences: list[str], batch_tokens: int | None = None,
                progress: bool = False) -> dict[int, np.ndarray]:
    """GEST scores of a loaded masked or causal LM under every template of its kind
    (:data:`polybias.data.gest.MASKED_TEMPLATES` or :data:`~polybias.data.gest.CAUSAL_TEMPLATES`):
    ``{template: scores}``."""
    if lm.kind == "mlm":
        return {k: gest_scores.masked_gest_scores(lm, sentences, k, batch_tokens=batch_tokens,
                                                  progress=progress)
                for k in range(len(gest.MASKED_TEMPLATES))}
    return {k: gest_scores.causal_gest_scores(lm, sentences, k, batch_tokens=batch_tokens, progress=progress)
            for k in range(len(gest.CAUSAL_TEMPLATES))}


def model_rates(scores: dict[int, np.ndarray], stereotypes, model: str, kind: str, n_bootstrap: int = N_BOOTSTRAP,
                seed: int = 0, interval: str = "normal", base: str = "e") -> tuple[pd.DataFrame, pd.DataFrame]:
    """:func:`published_rates` for the scores of :func:`score_model` (``kind``: masked or causal)."""
    summaries, rates = [], []
    for template, values in scores.items():
        run = {"kind": kind, "model": model, "hub_id": gest.HUB_IDS.get(model, model), "template": template}
        s, r = _aggregate(values, np.asarray(stereotypes), run, n_bootstrap, seed, interval, base)
        summaries.append(s)
        rates.append(r)
    return pd.DataFrame(summaries, columns=list(SUMMARY_COLUMNS)), pd.concat(rates, ignore_index=True)


def summary_table(summary: pd.DataFrame) -> str:
    """g_s per run with its interval, r_f and r_m, three decimals (Markdown)."""
    shown = summary.assign(template=summary.template + 1)[
        ["kind", "model", "template", "n", "r_f", "r_m", "g_s", "g_s_low", "g_s_high"]]
    return report.markdown_table(shown, digits=3)


def overview_table(summary: pd.DataFrame) -> str:
    """Per kind of model: runs, how many have a g_s interval wholly above 1 (the masculine
    stereotypes read as more masculine), wholly below 1, and the median, lowest and highest
    g_s (Markdown)."""
    rows = []
    for kind in gest.KINDS:
        part = summary[summary.kind == kind]
        if part.empty:
            continue
        rows.append({"kind": kind, "runs": len(part), "models": part.model.nunique(),
                     "above_1": int((part.g_s_low > 1).sum()), "below_1": int((part.g_s_high < 1).sum()),
                     "median_g_s": float(part.g_s.median()), "min_g_s": float(part.g_s.min()),
                     "max_g_s": float(part.g_s.max())})
    return report.markdown_table(pd.DataFrame(rows), digits=3)


def _authors_cell(rate: float, low: float, high: float) -> str:
    """The authors' ``format_ci``: ``lower mean upper`` to two decimals."""
    return f"{low:.2f} {rate:.2f} {high:.2f}"


def rates_table(rates: pd.DataFrame, kind: str) -> str:
    """The per-stereotype rates of every run of ``kind`` as the authors print them: one row
    per (model, template) (templates numbered from 1), one column per stereotype, each cell
    ``lower r_i upper`` to two decimals (Markdown)."""
    part = rates[rates.kind == kind]
    if part.empty:
        return f"(no {kind} runs)"
    header = ["model", "t", *[f"{i} {gest.STEREOTYPE_NAMES[i]}" for i in sorted(part.stereotype.unique())]]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for (model, template), run in part.groupby(["model", "template"], sort=False):
        cells = [_authors_cell(r.rate, r.ci_low, r.ci_high) for r in run.sort_values("stereotype").itertuples()]
        lines.append("| " + " | ".join([model, str(template + 1), *cells]) + " |")
    return "\n".join(lines) + "\n"


def rank_table(rates: pd.DataFrame) -> str:
    """Per stereotype, its rank (1 = most feminine rate) over the runs of each kind: median,
    lowest and highest (the authors' box plot of feminine ranks, as numbers)."""
    rows = []
    for (stereotype, kind), part in rates.groupby(["stereotype", "kind"]):
        rows.append({"stereotype": f"{stereotype} {gest.STEREOTYPE_NAMES[stereotype]}", "kind": kind,
                     "runs": len(part), "median_rank": float(part["rank"].median()),
                     "min_rank": int(part["rank"].min()), "max_rank": int(part["rank"].max())})
    frame = pd.DataFrame(rows).pivot(index="stereotype", columns="kind")
    frame.columns = [f"{kind} {what}" for what, kind in frame.columns]
    order = sorted(frame.index, key=lambda s: int(s.split()[0]))
    frame = frame.loc[order].reset_index()
    keep = ["stereotype"] + [c for k in gest.KINDS for c in frame.columns if c.startswith(k + " ")
                             and not c.endswith(" runs")]
    return report.markdown_table(frame[keep], digits=1)


def write_records(summary: pd.DataFrame, rates: pd.DataFrame, parameters: dict, output_dir: str | Path,
                  model_revision: str | None = None) -> list[Path]:
    """One ``gest`` run record per (kind, model, template) run (:func:`gest_record`); the
    model under its hub id, the test ``<kind>-template<k>`` (k from 1)."""
    out = []
    for run in summary.to_dict("records"):
        part = rates[(rates.kind == run["kind"]) & (rates.model == run["model"])
                     & (rates.template == run["template"])]
        record = gest_record(
            run, part[list(DETAIL_COLUMNS)].replace({np.nan: None}).to_dict("records"),
            model=run["hub_id"], test=f"{run['kind']}-template{run['template'] + 1}",
            parameters={**parameters, "kind": run["kind"], "template": int(run["template"]) + 1},
            model_revision=model_revision)
        out.append(records.write_record(record, paths.output_path(output_dir)))
    return out


#: The columns of a GEST record's ``details``: the rate of every stereotype.
DETAIL_COLUMNS = ("stereotype", "name", "group", "n", "rate", "ci_low", "ci_high", "rank")


def gest_record(run: dict, details: list[dict], *, model: str, test: str, parameters: dict,
                **fields) -> records.Record:
    """The run record of one GEST run (``run``: its ``n``, ``r_f``, ``r_m``, ``g_s``,
    ``g_s_low``, ``g_s_high``): g_s (the measure ``gest``) with its bootstrap interval
    (the ``interval`` of ``parameters``: normal or percentile, 95 %), under the subset
    ``test``, r_f and r_m as its ``extra``, and the rate of every stereotype as its
    ``details`` (:data:`DETAIL_COLUMNS`); one :func:`polybias.results.records.measure_record`."""
    low = run.get("g_s_low")
    method = "bootstrap-normal" if parameters.get("interval", "normal") == "normal" else "bootstrap-percentile"
    interval = None if low is None or np.isnan(low) else Interval(float(low), float(run["g_s_high"]),
                                                                  CONFIDENCE_LEVEL, method)
    result = MeasureResult("gest", float(run["g_s"]), interval, None, "none", int(run["n"]),
                           extra={"r_f": float(run["r_f"]), "r_m": float(run["r_m"])})
    return records.measure_record(result, model=model, language="en", test=test, parameters=parameters,
                                  subset=test, details=details, **fields)


# ------------------------------------------------------------------ the notebook's parameters

def _check_15_gest(*, model, revision, device, dtype, batch_tokens, limit, max_items):
    published_only(model, revision, device, dtype, batch_tokens)
    for name, value in (("limit", limit), ("max_items", max_items)):
        if model == "published" and value:
            raise ParameterError(f"{name} applies to a model that is scored, not to model=published")
    if limit and max_items:
        raise ParameterError("give limit (the first sentences) or max_items (a stratified sample), "
                             "not both")


#: The parameters of notebook 15_gest: their help, allowed values and checks.
NOTEBOOK_PARAMETERS: Notebook = Notebook({
    "model": free("published: the authors' released scores; else a " + SCORED_MODEL),
    "revision": free("hub branch, tag or 40-hex commit; empty: the registered revision, else "
                     "main (model not published)"),
    "device": DEVICE,
    "dtype": DTYPE,
    "batch_tokens": BATCH_TOKENS,
    "kinds": Parameter("released runs to aggregate, among {values} (model published)",
                       values=gest.KINDS, each=True),
    "limit": integer("score only the first `limit` sentences; 0: all (model not published)"),
    "max_items": integer("score a sample of at most this many sentences, stratified by stereotype "
                         "and drawn with `seed` ({range}; 0: all; model not published)"),
    "interval": choice("{values} (normal: the authors' bootstrap_ci)", INTERVALS),
    "base": choice("{values} (e: the authors' np.exp of the mean base-10 score)", BASES),
    "n_bootstrap": integer("bootstrap resamples within each stereotype for the intervals "
                           "({range}; 0: none)", default="polybias.stats.N_BOOTSTRAP"),
    "seed": integer("seed of the sentence sample and the bootstrap ({range})"),
    "output_dir": OUTPUT_DIR,
    "table_file": free(TABLE_FILE.format("gest_published")),
}, _check_15_gest)
