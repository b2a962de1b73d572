"""Real models: every real checkpoint the project holds numbers for, in one table, and
whether the measures rank the checkpoints they share alike.

:func:`real_model_table` gathers, under each checkpoint's hub id, the released GEST runs
(g_s per model and template, :func:`polybias.studies.gest.published_rates`), the
intrasentence SS of Öztürk et al.'s StereoSet runs (recomputed from their prediction
files, :mod:`polybias.data.stereoset`), the stereotype score of Strazda & Spanakis's
Dutch/English/French CrowS-Pairs runs (:func:`polybias.studies.crows_languages.dutch_crows_aggregates`)
and SmolLM2's full-set tables. The short names each source uses map to hub ids in one
declared place (:data:`STEREOSET_HUB_IDS`, :data:`DUTCH_CROWS_HUB_IDS`; GEST's registry
carries its own). :func:`rank_agreement` correlates two measures' rankings of the
checkpoints they share (Spearman or Kendall), with a seeded bootstrap interval over
checkpoints and an exact permutation p-value. :func:`gest_template_values` keys GEST's g_s
by template, to ask the same of its templates.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from polybias import paths
from polybias.data import sources, stereoset
from polybias.metrics.stereoset import item_decisions, stereoset_scores
from polybias.results import report
from polybias.stats import CONFIDENCE_LEVEL, N_BOOTSTRAP
from polybias.studies import crows_languages
from polybias.studies.gest import published_rates
from polybias.studies.stereoset import RUN_ALIASES, UNREPRODUCED

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

SMOLLM2_TABLES = (
    ("paper/tables/crows_smollm2-135m-instruct-q4_1_crows-pairs_full.md",
     "crows-pairs stereotype score", "crows-pairs (causal, all 1,508 pairs)"),
    ("paper/tables/crows_smollm2-135m-instruct-q4_1_crows-pairs-gamboa_full.md",
     "crows-pairs-gamboa stereotype score", "crows-pairs-gamboa (causal, all 231 pairs)"),
    ("paper/tables/stereoset_smollm2-135m-instruct-q4_1_full.md",
     "stereoset SS", "intrasentence, per-target SS (causal scoring)"),
    ("paper/tables/crows-languages_smollm2-135m-instruct-q4_1_kaneko2022_causal_full.md",
     "crows-pairs stereotype score", "kaneko2022 (causal, all 262 pairs)"),
)
"""SmolLM2's full-set tables (the sweep's ``*_full`` runs: hours of CPU, so read from the
tables the sweep wrote), with the measure and a note on the run."""

SMOLLM2_GEST_TABLE = "paper/tables/gest_smollm2-135m-instruct-q4_1_full.md"
"""SmolLM2 on GEST's two causal templates, all 3,565 sentences (notebook 15's table: the
second table is g_s per template, templates numbered from 1)."""


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
        "run": [f"{k} template {t}" for k, t in zip(summary.kind, summary.template, strict=True)],
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
        s = stereoset_scores(dec, aggregate="micro", by=None, n_bootstrap=n_bootstrap,
                             seed=seed).iloc[0]
        note = "; ".join(v for (sheet, r), v in UNREPRODUCED.items()
                         if sheet == "intrasentence" and r == run)
        rows.append({"hub_id": stereoset_hub_id(run), "source": "stereoset-published",
                     "name": run, "run": "intrasentence", "measure": "stereoset SS",
                     "language": language, "value": float(s.ss), "ci_low": float(s.ss_low),
                     "ci_high": float(s.ss_high), "n": int(s.n), "note": note})
    return pd.DataFrame(rows, columns=list(COLUMNS))


def dutch_crows_rows(n_bootstrap: int = N_BOOTSTRAP, seed: int = 0) -> pd.DataFrame:
    """Stereotype score (all pairs) of every published Dutch CrowS-Pairs run."""
    agg = crows_languages.dutch_crows_aggregates(n_bootstrap=n_bootstrap, seed=seed)
    agg = agg[agg.bias_type == "all"]
    return pd.DataFrame({
        "hub_id": [dutch_crows_hub_id(m) for m in agg.model], "source": "crows-pairs-dutch-published",
        "name": agg.model, "run": "all pairs", "measure": "crows-pairs stereotype score",
        "language": agg.language, "value": agg.score, "ci_low": agg.ci_low, "ci_high": agg.ci_high,
        "n": agg.n, "note": ""})[list(COLUMNS)]


def read_markdown_rows(text: str, index: int = 0) -> pd.DataFrame:
    """The ``index``-th pipe table of a markdown text (0: the first), as strings.

    >>> read_markdown_rows("x\\n\\n| a | b |\\n|---|---|\\n| 1 | 2 |\\n").to_dict("records")
    [{'a': '1', 'b': '2'}]
    """
    lines = [ln.strip() for ln in text.splitlines()]
    blocks = [list(g) for is_table, g in itertools.groupby(lines, lambda ln: ln.startswith("|")) if is_table]
    if len(blocks) <= index:
        raise RealModelError(f"the text has {len(blocks)} table(s), not {index + 1}")
    cells = [[c.strip() for c in ln.strip("|").split("|")] for ln in blocks[index]]
    return pd.DataFrame(cells[2:], columns=cells[0])


def smollm2_rows(root: str | Path | None = None) -> pd.DataFrame:
    """SmolLM2's full-set numbers, read from the tables of the sweep's ``*_full`` runs
    (:data:`SMOLLM2_TABLES`: the ``all`` row, or one row per language; :data:`SMOLLM2_GEST_TABLE`:
    g_s per causal template)."""
    root = Path(root) if root is not None else paths.project_root()
    rows = []
    for rel, measure, note in SMOLLM2_TABLES:
        file = root / rel
        if not file.exists():
            raise RealModelError(f"{rel}: SmolLM2's full-set table is missing (run the sweep's *_full entry)")
        t = read_markdown_rows(file.read_text(encoding="utf-8"))
        if "bias_type" in t.columns:
            t = t[t.bias_type == "all"].assign(language="en")
        if t.empty:
            raise RealModelError(f"{rel}: no 'all' row")
        value, low, high = ("ss", "ss_low", "ss_high") if "ss" in t.columns else ("score", "ci_low", "ci_high")
        for r in t.to_dict("records"):
            rows.append({"hub_id": SMOLLM2_HUB_ID, "source": "smollm2 (this project)", "name": SMOLLM2,
                         "run": note, "measure": measure, "language": r["language"],
                         "value": float(r[value]), "ci_low": float(r[low]), "ci_high": float(r[high]),
                         "n": int(r["n"]), "note": f"Q4_1 quantization; {Path(rel).name}"})
    file = root / SMOLLM2_GEST_TABLE
    if not file.exists():
        raise RealModelError(f"{SMOLLM2_GEST_TABLE}: SmolLM2's GEST table is missing (run the sweep's "
                             "15_gest entry for it)")
    for r in read_markdown_rows(file.read_text(encoding="utf-8"), index=1).to_dict("records"):
        rows.append({"hub_id": SMOLLM2_HUB_ID, "source": "smollm2 (this project)", "name": SMOLLM2,
                     "run": f"{r['kind']} template {int(r['template']) - 1}", "measure": "gest g_s",
                     "language": "en", "value": float(r["g_s"]), "ci_low": float(r["g_s_low"]),
                     "ci_high": float(r["g_s_high"]), "n": int(r["n"]),
                     "note": f"Q4_1 quantization; {Path(SMOLLM2_GEST_TABLE).name}"})
    return pd.DataFrame(rows, columns=list(COLUMNS))


def real_model_table(n_bootstrap: int = N_BOOTSTRAP, seed: int = 0, extra: pd.DataFrame | None = None) -> pd.DataFrame:
    """Every real checkpoint of GEST, StereoSet, Dutch CrowS-Pairs and SmolLM2, one row per run.

    Parameters
    ----------
    n_bootstrap, seed : the seeded bootstraps of GEST's g_s, StereoSet's SS and CrowS-Pairs'
        stereotype score (0: no intervals).
    extra : more rows with :data:`COLUMNS` (e.g. SmolLM2 on the GEST templates).

    Returns
    -------
    pandas.DataFrame
        :data:`COLUMNS`, sorted by hub id, measure, language and run. ``value``: g_s
        (ratio, 1 = no preference), SS and stereotype score (percent, 50 = none).
    """
    parts = [gest_rows(n_bootstrap, seed), stereoset_rows(n_bootstrap, seed),
             dutch_crows_rows(n_bootstrap, seed), smollm2_rows()]
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
    """GEST's g_s keyed by kind and template (``"gest g_s (masked template 0)"``), one value
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


def real_model_markdown(table: pd.DataFrame) -> str:
    """The real-model table as markdown (three significant decimals)."""
    return report.markdown_table(table, digits=3)


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
