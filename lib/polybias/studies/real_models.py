"""Real models: every real checkpoint the project holds numbers for, in one table, and
whether the measures rank the checkpoints they share alike.

:func:`real_model_table` gathers, under each checkpoint's hub id, the released GEST runs
(g_s per model and template, :func:`polybias.studies.gest.published_rates`), the
intrasentence SS of Öztürk et al.'s StereoSet runs (recomputed from their prediction
files, :mod:`polybias.data.stereoset`), the stereotype score of Strazda & Spanakis's
Dutch/English/French CrowS-Pairs runs (:func:`polybias.studies.crows_languages.dutch_crows_aggregates`)
and the embedded real models' numbers (SmolLM2, Gemma-3-270m), read from the run records of the sweep's full-set runs
(:func:`embedded_rows`; a run that is not done gives a row that says so and names the
command that runs it). The short names each source uses map to hub ids in one
declared place (:data:`STEREOSET_HUB_IDS`, :data:`DUTCH_CROWS_HUB_IDS`; GEST's registry
carries its own). :func:`rank_agreement` correlates two measures' rankings of the
checkpoints they share (Spearman or Kendall), with a seeded bootstrap interval over
checkpoints and an exact permutation p-value. :func:`gest_template_values` keys GEST's g_s
by template, to ask the same of its templates. :func:`write_record` writes the table as one
``real-models`` run record, through which its rows reach ``polybias results`` and
``polybias export`` under their hub ids.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from polybias import paths
from polybias.data import sources, stereoset
from polybias.metrics.measure import Interval, MeasureResult, finite_or_none
from polybias.metrics.stereoset import item_decisions
from polybias.results import records, report
from polybias.stats import CONFIDENCE_LEVEL, N_BOOTSTRAP
from polybias.studies import crows_languages
from polybias.studies.gest import published_rates
from polybias.studies.notebook_parameters import (
    OUTPUT_DIR,
    TABLE_FILE,
    Notebook,
    choice,
    free,
    integer,
)
from polybias.studies.stereoset import RUN_ALIASES, UNREPRODUCED, scores_table

COLUMNS = ("hub_id", "source", "name", "run", "measure", "language", "value", "ci_low", "ci_high", "n", "note")

STEREOSET_HUB_IDS = {
    "bert-base-cased": "bert-base-cased",
    "bert-base-multilingual-cased": "bert-base-multilingual-cased",
    "dbmdz_bert-base-german-cased": "dbmdz/bert-base-german-cased",
    "dbmdz_bert-base-turkish-cased": "dbmdz/bert-base-turkish-cased",
    "dbmdz_german-gpt2": "dbmdz/german-gpt2",
    "dccuchile_bert-base-spanish-wwm-cased": "dccuchile/bert-base-spanish-wwm-cased",
    "flaubert_flaubert_base_cased": "flaubert/flaubert_base_cased",
    "gpt2": "gpt2",
    "PlanTL-GOB-ES_gpt2-base-bne": "PlanTL-GOB-ES/gpt2-base-bne",
    "asi_gpt-fr-cased-small": "asi/gpt-fr-cased-small",
    "redrussianarmy_gpt2-turkish-cased": "redrussianarmy/gpt2-turkish-cased",
    "t5-base": "t5-base",
    "GermanT5_t5-efficient-gc4-german-base-nl36": "GermanT5/t5-efficient-gc4-german-base-nl36",
    "flax-community_spanish-t5-small": "flax-community/spanish-t5-small",
    "plguillou_t5-base-fr-sum-cnndm": "plguillou/t5-base-fr-sum-cnndm",
    "THUMT_mGPT": "THUMT/mGPT",
    "google_mt5-base": "google/mt5-base",
    "miguelvictor_multilingual-gpt2-large": "miguelvictor/multilingual-gpt2-large",
}
"""Öztürk et al.'s run-name prefix (``<org>_<model>`` with ``/`` written ``_``) -> hub id."""

DUTCH_CROWS_HUB_IDS = {
    "bert": "bert-base-uncased", "roberta": "roberta-large", "bertje": "GroNLP/bert-base-dutch-cased",
    "robbert": "pdelobelle/robbert-v2-dutch-base", "mbert": "bert-base-multilingual-cased",
    "flaubert": "flaubert/flaubert_base_uncased", "camembert": "camembert-base",
}
"""Strazda & Spanakis's ``--lm_model`` names -> the checkpoints their ``code/mlm_metric.py``
loads (jerryspan/Dutch-CrowS-Pairs, commit a32bb03; ``bert`` and ``roberta`` as in Nangia
et al.'s original script: bert-base-uncased and roberta-large)."""

SMOLLM2 = "smollm2-135m-instruct-q4_1"
SMOLLM2_HUB_ID = "HuggingFaceTB/SmolLM2-135M-Instruct"
SMOLLM2_SOURCE = "smollm2 (this project)"
GEMMA = "gemma-3-270m-q4_k_m"
GEMMA_HUB_ID = "google/gemma-3-270m"
GEMMA_SOURCE = "gemma-3-270m (this project)"

EMBEDDED = {SMOLLM2: {"hub_id": SMOLLM2_HUB_ID, "source": SMOLLM2_SOURCE, "quantization": "Q4_1"},
            GEMMA: {"hub_id": GEMMA_HUB_ID, "source": GEMMA_SOURCE, "quantization": "Q4_K_M"}}
"""The embedded real models this project scores itself (registered name -> the hub id it was
quantized from, the ``source`` of its rows, its quantization)."""

MEASURES = {"gest": "gest g_s", "stereoset": "stereoset SS", "crows": "crows-pairs stereotype score",
            "eurogest": "eurogest g_s"}
"""Registered measure (the ``metric`` of the tidy results table, :mod:`polybias.results.table`)
-> the label this table gives it."""

OVERALL = {"crows": "all", "stereoset": "all", "eurogest": "g_s"}
"""Per measure, the part of a tidy row's ``subset`` that marks a run's overall number (all
pairs, every group, g_s); a measure not listed keeps every row (GEST: one per template)."""

NOTEBOOK_MEASURES = {"05_crows_pairs": "crows", "12_crows_languages": "crows", "14_stereoset": "stereoset",
                     "15_gest": "gest", "16_eurogest": "eurogest"}
"""The measure of each notebook's runs of an embedded real model, for the row of a run that is not done."""

SAMPLE_PARAMETERS = ("max_pairs", "max_items", "per_stereotype", "limit")
"""Parameters that make a run score a declared subset: a run that sets one is not a full set."""


class RealModelError(ValueError):
    """An unknown short name, or a table that lacks the expected rows."""


def stereoset_hub_id(run: str) -> str:
    """The hub id of one of Öztürk et al.'s run names (longest declared prefix).

    >>> stereoset_hub_id("THUMT_mGPT_GPT2LM_GPT2LM_d_en")
    'THUMT/mGPT'
    >>> stereoset_hub_id("gpt2_GPT2LM_ModelNSP_en")
    'gpt2'
    """
    found = [p for p in STEREOSET_HUB_IDS if run.startswith(p + "_")]
    if not found:
        raise RealModelError(f"StereoSet run {run!r}: no declared hub id for its model "
                             f"(add its prefix to STEREOSET_HUB_IDS)")
    return STEREOSET_HUB_IDS[max(found, key=len)]


def dutch_crows_hub_id(name: str) -> str:
    """The hub id of one of Strazda & Spanakis's model names.

    >>> dutch_crows_hub_id("bertje")
    'GroNLP/bert-base-dutch-cased'
    """
    if name not in DUTCH_CROWS_HUB_IDS:
        raise RealModelError(f"Dutch CrowS-Pairs model {name!r}: no declared hub id; "
                             f"known: {', '.join(DUTCH_CROWS_HUB_IDS)}")
    return DUTCH_CROWS_HUB_IDS[name]


def gest_rows(n_bootstrap: int = N_BOOTSTRAP, seed: int = 0) -> pd.DataFrame:
    """g_s of every released GEST run (one row per model and template; English)."""
    summary, _ = published_rates(n_bootstrap=n_bootstrap, seed=seed)
    return pd.DataFrame({
        "hub_id": summary.hub_id, "source": "gest", "name": summary.model,
        # templates counted from 1, as in the authors' paper (their files count from 0)
        "run": [f"{k} template {t + 1}" for k, t in zip(summary.kind, summary.template, strict=True)],
        "measure": "gest g_s", "language": "en", "value": summary.g_s, "ci_low": summary.g_s_low,
        "ci_high": summary.g_s_high, "n": summary.n, "note": ""})[list(COLUMNS)]


def stereoset_rows(n_bootstrap: int = N_BOOTSTRAP, seed: int = 0) -> pd.DataFrame:
    """Intrasentence SS (micro, as Öztürk et al.'s workbook) of every intrasentence run,
    recomputed from the prediction files, with a seeded bootstrap interval over items."""
    book = stereoset.load_published_results()
    runs = set(stereoset.prediction_runs())
    registry = sources.load_registry()
    items: dict[str, pd.DataFrame] = {}
    rows = []
    for run in book[book.sheet == "intrasentence"].run:
        file = RUN_ALIASES.get(run, run)
        if file not in runs:
            raise RealModelError(f"StereoSet workbook row {run!r} has no prediction file")
        language = stereoset.run_language(file)
        if language not in items:
            frame = stereoset.load_stereoset(language)
            items[language] = frame[frame.task == "intrasentence"]
        preds = stereoset.load_predictions(file, registry=registry)
        dec = item_decisions(items[language], preds[preds.task == "intrasentence"])
        s = scores_table(dec, aggregate="micro", n_bootstrap=n_bootstrap, seed=seed).iloc[0]
        note = "; ".join(v for (sheet, r), v in UNREPRODUCED.items()
                         if sheet == "intrasentence" and r == run)
        rows.append({"hub_id": stereoset_hub_id(run), "source": "stereoset-published",
                     "name": run, "run": "intrasentence", "measure": "stereoset SS",
                     "language": language, "value": float(s.ss), "ci_low": float(s.ss_low),
                     "ci_high": float(s.ss_high), "n": int(s.n), "note": note})
    return merge_repeated_runs(pd.DataFrame(rows, columns=list(COLUMNS)))


def merge_repeated_runs(rows: pd.DataFrame) -> pd.DataFrame:
    """One row for the runs of a checkpoint that give the same number in the same language
    (Öztürk et al.'s runs that differ only in their intersentence head score the
    intrasentence items with the same LM head): the first run's row, its ``note`` naming the
    others, so that a checkpoint is not counted twice.

    >>> r = pd.DataFrame({"hub_id": ["g", "g", "g"], "language": ["en"] * 3, "value": [55.0, 55.0, 51.0],
    ...                   "ci_low": [53.0, 53.0, 49.0], "ci_high": [57.0, 57.0, 53.0], "n": [9, 9, 9],
    ...                   "name": ["g_A_en", "g_B_en", "g_C_en"], "note": ["", "", ""]})
    >>> merge_repeated_runs(r)[["name", "note"]].values.tolist()
    [['g_A_en', 'the same intrasentence scores as g_B_en (another intersentence head)'], ['g_C_en', '']]
    """
    key = ["hub_id", "language", "value", "ci_low", "ci_high", "n"]
    keep, notes = [], {}
    for _, group in rows.groupby(key, sort=False, dropna=False):
        first = group.index[0]
        keep.append(first)
        if len(group) > 1:
            others = ", ".join(group.name.iloc[1:])
            extra = f"the same intrasentence scores as {others} (another intersentence head)"
            notes[first] = "; ".join(x for x in (rows.loc[first, "note"], extra) if x)
    out = rows.loc[sorted(keep)].copy()
    for index, note in notes.items():
        out.loc[index, "note"] = note
    return out.reset_index(drop=True)


def dutch_crows_rows(n_bootstrap: int = N_BOOTSTRAP, seed: int = 0) -> pd.DataFrame:
    """Stereotype score (all pairs) of every published Dutch CrowS-Pairs run."""
    agg = crows_languages.dutch_crows_aggregates(n_bootstrap=n_bootstrap, seed=seed)
    agg = agg[agg.bias_type == "all"]
    return pd.DataFrame({
        "hub_id": [dutch_crows_hub_id(m) for m in agg.model], "source": "crows-pairs-dutch-published",
        "name": agg.model, "run": "all pairs", "measure": "crows-pairs stereotype score",
        "language": agg.language, "value": agg.score, "ci_low": agg.ci_low, "ci_high": agg.ci_high,
        "n": agg.n, "note": ""})[list(COLUMNS)]


def embedded_full_run(parameters: dict) -> bool:
    """Whether a sweep run is a full-set run of an embedded real model (:data:`EMBEDDED`):
    its model is one of them and no :data:`SAMPLE_PARAMETERS` is set (what
    :func:`polybias.runner.sweep.run_records` selects by).

    >>> embedded_full_run({"model": SMOLLM2, "dataset": "crows-pairs"}), embedded_full_run({"model": GEMMA})
    (True, True)
    >>> embedded_full_run({"model": SMOLLM2, "max_pairs": 30}), embedded_full_run({"model": "published"})
    (False, False)
    """
    return parameters.get("model") in EMBEDDED and not any(parameters.get(k) for k in SAMPLE_PARAMETERS)


def run_model(key: str) -> str:
    """The embedded model a run key names (``...__model-<name>__...``).

    >>> run_model("15_gest__model-gemma-3-270m-q4_k_m")
    'gemma-3-270m-q4_k_m'
    """
    for part in key.split("__")[1:]:
        if part.startswith("model-") and part[len("model-"):] in EMBEDDED:
            return part[len("model-"):]
    raise RealModelError(f"run {key}: its key names no embedded real model ({', '.join(EMBEDDED)})")


def _gest_run(test: str) -> str:
    """A GEST record's test (``causal-template1``) as the released rows' run (``causal
    template 1``; templates counted from 1, as in the authors' paper), so that the templates
    line up in :func:`gest_template_values`."""
    kind, _, number = test.partition("-template")
    if not number.isdigit():
        raise RealModelError(f"GEST record test {test!r}: expected '<kind>-template<k>'")
    return f"{kind} template {int(number)}"


def not_run_command(key: str, sweep_file: str) -> str:
    """The command that runs one run of a sweep.

    >>> not_run_command("15_gest__model-x", "configs/sweeps/default.yaml")
    'polybias sweep configs/sweeps/default.yaml --only 15_gest__model-x'
    """
    return f"polybias sweep {sweep_file} --only {key}"


def embedded_rows(runs: dict[str, pd.DataFrame | None], sweep_file: str) -> pd.DataFrame:
    """The embedded real models' rows (:data:`EMBEDDED`), read from the run records of the
    sweep's full-set runs (their run folders, or the records kept under ``paper/records/``).

    Parameters
    ----------
    runs : run key -> the tidy rows of its records (:func:`polybias.runner.sweep.run_records`
        with :func:`embedded_full_run`), or None for a run that is not done.
    sweep_file : the sweep, named in the command of a run that is not done.

    Returns
    -------
    pandas.DataFrame
        :data:`COLUMNS`: one row per overall number of a done run (:data:`MEASURES`,
        :data:`OVERALL`; ``run``: the record's test and subset), and for a run that is not
        done one row without a value whose ``note`` says ``not run:`` and the command that
        runs it. A done run whose records hold no such number raises :class:`RealModelError`.
    """
    rows = []
    for key, tidy in runs.items():
        model = run_model(key)
        facts = EMBEDDED[model]
        base = {"hub_id": facts["hub_id"], "source": facts["source"], "name": model}
        if tidy is None:
            notebook = key.split("__")[0]
            if notebook not in NOTEBOOK_MEASURES:
                raise RealModelError(f"run {key}: no measure declared for notebook {notebook} "
                                     "(add it to NOTEBOOK_MEASURES)")
            rows.append({**base, "run": key, "measure": MEASURES[NOTEBOOK_MEASURES[notebook]],
                         "language": "", "value": np.nan, "ci_low": np.nan, "ci_high": np.nan, "n": pd.NA,
                         "note": f"not run: {not_run_command(key, sweep_file)}"})
            continue
        part = tidy[tidy.metric.isin(MEASURES)]
        overall = [m not in OVERALL or OVERALL[m] in str(sub).split("; ")
                   for m, sub in zip(part.metric, part.subset, strict=True)]
        part = part[overall]
        if part.empty:
            raise RealModelError(f"run {key}: its records hold no overall {' or '.join(MEASURES)} number")
        for r in part.itertuples():
            run = _gest_run(r.test) if r.metric == "gest" else "; ".join(
                x for x in (r.test, *str(r.subset).split("; ")) if x and x != OVERALL.get(r.metric))
            rows.append({**base, "run": run, "measure": MEASURES[r.metric], "language": r.language,
                         "value": float(r.value), "ci_low": float(r.ci_low), "ci_high": float(r.ci_high),
                         "n": int(r.n),
                         "note": f"{facts['quantization']} quantization; record {r.study}/{r.record}"})
    out = pd.DataFrame(rows, columns=list(COLUMNS))
    out["n"] = out["n"].astype("Int64")
    return out


def real_model_table(n_bootstrap: int = N_BOOTSTRAP, seed: int = 0, extra: pd.DataFrame | None = None) -> pd.DataFrame:
    """Every released real checkpoint of GEST, StereoSet and Dutch CrowS-Pairs, and the rows
    given in ``extra`` (the embedded real models'), one row per run.

    Parameters
    ----------
    n_bootstrap, seed : the seeded bootstraps of GEST's g_s, StereoSet's SS and CrowS-Pairs'
        stereotype score (0: no intervals).
    extra : more rows with :data:`COLUMNS` (the embedded real models', :func:`embedded_rows`).

    Returns
    -------
    pandas.DataFrame
        :data:`COLUMNS`, sorted by hub id, measure, language and run. ``value``: g_s
        (ratio, 1 = no preference), SS and stereotype score (percent, 50 = none).
    """
    parts = [gest_rows(n_bootstrap, seed), stereoset_rows(n_bootstrap, seed),
             dutch_crows_rows(n_bootstrap, seed)]
    if extra is not None:
        missing = set(COLUMNS) - set(extra.columns)
        if missing:
            raise RealModelError(f"extra rows lack {', '.join(sorted(missing))}")
        parts.append(extra[list(COLUMNS)])
    out = pd.concat(parts, ignore_index=True)
    return out.sort_values(["hub_id", "measure", "language", "source", "run"], kind="stable").reset_index(drop=True)


def model_values(table: pd.DataFrame) -> pd.DataFrame:
    """One value per (measure, language, hub id): the mean over its runs (GEST templates,
    StereoSet scoring heads, SmolLM2's datasets). Columns ``key`` (``"<measure> (<language>)"``),
    ``hub_id``, ``value``, ``runs``."""
    g = table.groupby(["measure", "language", "hub_id"], sort=True)
    out = g.value.agg(["mean", "size"]).reset_index()
    out.insert(0, "key", out.measure + " (" + out.language + ")")
    return out.rename(columns={"mean": "value", "size": "runs"})[["key", "hub_id", "value", "runs"]]


def gest_template_values(table: pd.DataFrame) -> pd.DataFrame:
    """GEST's g_s keyed by kind and template (``"gest g_s (masked template 1)"``), one value
    per hub id: input to :func:`rank_agreement` to ask whether the templates rank alike."""
    g = table[table.measure == "gest g_s"]
    return pd.DataFrame({"key": "gest g_s (" + g.run + ")", "hub_id": g.hub_id,
                         "value": g.value}).reset_index(drop=True)


def _corr(x: np.ndarray, y: np.ndarray, method: str) -> float:
    if np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan")
    f = stats.spearmanr if method == "spearman" else stats.kendalltau
    return float(f(x, y)[0])


def rank_agreement(values: pd.DataFrame, method: str = "spearman", n_bootstrap: int = 2000, seed: int = 0,
                   min_models: int = 3, confidence: float = CONFIDENCE_LEVEL) -> pd.DataFrame:
    """Rank correlation between every two measures on the checkpoints they share.

    For keys A, B with shared checkpoints 1..n and values a_i, b_i: Spearman's ρ (Pearson
    correlation of the ranks) or Kendall's τ_b. Interval: seeded percentile bootstrap over
    checkpoints (resamples whose values are all tied on one side are dropped; their count is
    reported). p: exact two-sided permutation p-value over all n! orderings of b (n ≤ 8), else
    scipy's. With n < ``min_models`` (default 3) nothing is computed (``note`` says so); with
    n = 3 Spearman's ρ takes four values and the exact p is at least 1/3, so no ranking of three
    checkpoints can show agreement beyond chance.

    Parameters
    ----------
    values : columns ``key``, ``hub_id``, ``value`` (:func:`model_values`).
    method : ``"spearman"`` or ``"kendall"``.

    Returns
    -------
    pandas.DataFrame
        One row per pair of keys sharing at least one checkpoint: ``key_a``, ``key_b``, ``n``,
        ``models``, ``rho``, ``ci_low``, ``ci_high``, ``p``, ``dropped``, ``note``.

    >>> v = pd.DataFrame({"key": ["a"] * 4 + ["b"] * 4, "hub_id": list("wxyz") * 2,
    ...                   "value": [1, 2, 3, 4, 8, 6, 4, 2]})
    >>> float(rank_agreement(v, n_bootstrap=0).rho.iloc[0])
    -1.0
    """
    if method not in ("spearman", "kendall"):
        raise RealModelError(f"method {method!r}: spearman or kendall")
    dup = values.duplicated(["key", "hub_id"])
    if dup.any():
        raise RealModelError(f"two values for {values[dup].iloc[0][['key', 'hub_id']].tolist()}")
    wide = values.pivot(index="hub_id", columns="key", values="value")
    rng = np.random.default_rng(seed)
    rows = []
    for a, b in itertools.combinations(sorted(wide.columns), 2):
        pair = wide[[a, b]].dropna()
        n = len(pair)
        if n == 0:
            continue
        row = {"key_a": a, "key_b": b, "n": n, "models": ", ".join(pair.index), "rho": np.nan,
               "ci_low": np.nan, "ci_high": np.nan, "p": np.nan, "dropped": 0, "note": ""}
        if n < min_models:
            row["note"] = f"too few shared checkpoints (n = {n} < {min_models}): nothing to say"
            rows.append(row)
            continue
        x, y = pair[a].to_numpy(float), pair[b].to_numpy(float)
        rho = _corr(x, y, method)
        row["rho"] = rho
        if n <= 8:
            perms = [_corr(x, y[list(p)], method) for p in itertools.permutations(range(n))]
            row["p"] = float(np.mean(np.abs(perms) >= abs(rho) - 1e-12))
        else:
            row["p"] = float((stats.spearmanr if method == "spearman" else stats.kendalltau)(x, y)[1])
        if n_bootstrap:
            boots = []
            for _ in range(n_bootstrap):
                i = rng.integers(0, n, n)
                boots.append(_corr(x[i], y[i], method))
            boots = np.asarray(boots)
            ok = boots[~np.isnan(boots)]
            row["dropped"] = int(len(boots) - len(ok))
            alpha = (1 - confidence) / 2
            row["ci_low"], row["ci_high"] = (float(np.quantile(ok, alpha)), float(np.quantile(ok, 1 - alpha))) \
                if len(ok) else (np.nan, np.nan)
        if n == 3:
            row["note"] = "n = 3: the exact p cannot be below 1/3; nothing beyond chance can show"
        elif n < 10:
            row["note"] = f"n = {n}: the interval is wide; read the sign at most"
        rows.append(row)
    return pd.DataFrame(rows, columns=["key_a", "key_b", "n", "models", "rho", "ci_low", "ci_high", "p",
                                       "dropped", "note"])


#: The columns of the real-model table's markdown (the CSV keeps every column of :data:`COLUMNS`)
MARKDOWN_COLUMNS = ("hub_id", "run", "measure", "language", "value", "ci_low", "ci_high", "n")


def real_model_markdown(table: pd.DataFrame) -> str:
    """The real-model table as markdown (three decimals; :data:`MARKDOWN_COLUMNS`), its rows
    with a value only: the runs not done in this checkout are counted in one line above it,
    with the command that runs them, never printed as rows."""
    done = table[table.value.notna()]
    pending = table[table.value.isna()]
    # what a reader compares: the checkpoint, the run, the number; the source's own name and
    # each row's note (quantization, the record it was read from) stay in the CSV
    shown = done.assign(n=done.n.astype("Int64"))[[c for c in MARKDOWN_COLUMNS if c in done.columns]]
    text = report.markdown_table(shown, digits=3)
    if len(pending):
        models = sorted(set(pending.name))
        text = (f"{len(pending)} full-set run(s) of {', '.join(models)} are not done in this "
                "checkout (polybias sweep configs/sweeps/default.yaml --only "
                f"{','.join(models)} runs them; their records are then kept under paper/records).\n\n"
                + text)
    return text


def done_rows(table: pd.DataFrame) -> pd.DataFrame:
    """The rows of the real-model table that have a value (what the CSV holds)."""
    return table[table.value.notna()].reset_index(drop=True)


def agreement_markdown(agreement: pd.DataFrame, min_shown: int = 2) -> str:
    """The rank agreement as markdown: a line counting the pairs sharing fewer than
    ``min_shown`` checkpoints, then the table of the others."""
    shown = agreement[agreement.n >= min_shown]
    rest = len(agreement) - len(shown)
    text = report.markdown_table(shown, digits=2) if len(shown) else \
        f"(no two measures share {min_shown} or more checkpoints)\n"
    if rest:
        text = (f"Pairs of measures sharing at least {min_shown} checkpoints; {rest} more pair(s) "
                f"share fewer: no ranking to compare.\n\n") + text
    return text


def record_rows(table: pd.DataFrame) -> list[dict]:
    """The rows of the table that have a value, as a ``real-models`` record holds them: the
    table's columns, the registered measure each reports (``metric``, :data:`MEASURES`) and
    the cell it takes in the cross-model tables (``cell``: its run, with the source's name of
    the model where one checkpoint has several runs of that name, e.g. StereoSet's scoring
    heads)."""
    keys = {label: key for key, label in MEASURES.items()}
    unknown = sorted(set(table.measure) - set(keys))
    if unknown:
        raise RealModelError(f"measure(s) {', '.join(unknown)} have no registered key in MEASURES")
    shown = table[table.value.notna()]
    same = shown.duplicated(["source", "hub_id", "language", "measure", "run"], keep=False)
    cells = [f"{r.run}; {r.name}" if twice else r.run for r, twice in zip(shown.itertuples(), same, strict=True)]
    out = shown.assign(metric=shown.measure.map(keys), cell=cells, n=shown.n.astype(object))
    out = out.replace({np.nan: None})
    return [{k: (None if v is pd.NA else v) for k, v in r.items()} for r in out.to_dict("records")]


def real_models_record(table: pd.DataFrame, parameters: dict) -> records.Record:
    """The one ``real-models`` run record (model ``real checkpoints``, language ``multi``,
    test ``table``) of the rows of :func:`record_rows`: each row's value as its registered
    measure (``metric``) under its checkpoint's hub id (``model``), its language and its
    source (``test``), subset its cell, with its 95 % bootstrap interval and n; the first row
    is the record's value, the others its groups. The row's other columns (name, run, note)
    go to its ``extra``. One :func:`~polybias.results.records.measure_results_record`."""
    entries = []
    for row in record_rows(table):
        low, high = finite_or_none(row["ci_low"]), finite_or_none(row["ci_high"])
        interval = None if low is None or high is None else Interval(low, high, CONFIDENCE_LEVEL, "bootstrap")
        result = MeasureResult(row["metric"], float(row["value"]), interval, None, "none",
                               None if row["n"] is None else int(row["n"]),
                               extra={k: row[k] for k in ("name", "run", "measure", "note")})
        entries.append((row["cell"], result,
                        {"model": row["hub_id"], "language": row["language"], "test": row["source"]}))
    return records.measure_results_record(entries, model="real checkpoints", language="multi", test="table",
                                          metric="real-models", parameters=parameters)


def write_record(table: pd.DataFrame, parameters: dict, output_dir: str | Path) -> Path:
    """Write :func:`real_models_record` under ``output_dir`` (relative to the output root):
    what ``polybias results`` and ``polybias export`` read
    (:func:`polybias.results.table.record_rows`), each row under its checkpoint's hub id.
    Returns its path."""
    record = real_models_record(table, parameters)
    return records.write_record(record, paths.output_path(output_dir))


# ------------------------------------------------------------------ the notebook's parameters

#: The parameters of notebook 17_real_models: their help and allowed values.
NOTEBOOK_PARAMETERS: Notebook = Notebook({
    "n_bootstrap": integer("bootstrap resamples for the intervals of g_s, SS and the stereotype "
                           "score and of the rank correlations ({range}; 0: none)",
                           default="polybias.stats.N_BOOTSTRAP"),
    "seed": integer("seed of every bootstrap ({range})"),
    "method": choice("rank correlation: {values}", ("spearman", "kendall")),
    "min_models": integer("fewest shared checkpoints for a rank correlation ({range})", low=2),
    "sweep_file": free("sweep whose full-set runs of the embedded real models give their rows "
                       "(their run records, or the records kept under paper/records); empty: "
                       "none"),
    "output_dir": OUTPUT_DIR,
    "table_file": free(TABLE_FILE.format("real-models")),
    "csv_file": free("where to write the table as CSV, e.g. paper/tables/real-models.csv"),
    "findings_file": free("where to write the findings' tables (EuroGEST per language, the "
                          "minimal-pair scores, the two models' differences), e.g. "
                          "paper/tables/real-model-findings.md; their summary goes beside it "
                          "(-summary.md)"),
})
