"""Metric validity on planted bias: dose-response and calibration (the project's own study).

None of the source studies checks whether its metric recovers a bias of known size. Here a
corpus with a planted male–career / female–family association of strength ``p``
(:func:`polybias.planted.synthetic.planted_corpus`; ``p = 0.5`` plants none, ``p < 0.5`` the
reverse) trains a model, and each metric is computed on it with the project's defaults by
the validity designs of :mod:`polybias.studies.validity_designs` (the one producer of those
numbers: word2vec with WEAT; a tiny masked or causal LM with CrowS-style minimal pairs, the
stereotype score and the JSD stereotype score B; the masked LM with templates, Kurita's
log-probability bias and the CB scores; the masked LM as an encoder, SEAT and CEAT; one row
per measurement, labelled by its design, ``measure``, and its ``metric``;
:data:`polybias.measures.METRIC_MEASURES` names the registered measure behind every metric
label). This module holds what is computed from those rows:
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

import math
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import binomtest, spearmanr

from polybias.measures import UNSIGNED_LABELS, VALIDITY_STATISTIC, get, registered_measure
from polybias.metrics.measure import Interval, MeasureResult, finite_or_none
from polybias.results.records import Record, measure_results_record
from polybias.stats import ALPHA, CONFIDENCE_LEVEL
from polybias.studies.notebook_parameters import (
    TABLE_FILE,
    Notebook,
    Parameter,
    ParameterError,
    choice,
    free,
    planted_languages,
)
from polybias.studies.validity_statistics import (
    TARGET_POWER,
    TOO_HIGH,
    ValidityError,
    calibration_verdict,
    mean_interval,
    minimum_detectable,
    monotonicity_test,
)


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


def validity_record(doses: pd.DataFrame, tables: dict[str, pd.DataFrame], *, language: str,
                    parameters: dict[str, Any], level: float = CONFIDENCE_LEVEL, **fields: Any) -> Record:
    """The run record (metric ``validity``, model ``planted``, test ``dose-calibration-mdb``)
    of notebook 10 on one language: each row of :func:`dose_table` as the validity
    statistic ``validity:<design>:<metric>`` (:data:`polybias.measures.VALIDITY_STATISTIC`),
    subset ``p=<strength>``, value the mean over the planted models with its Student-t
    interval at ``level`` and n the models; the first row is the record's value, the others
    its groups. The notebook's other tables (calibration, minimum detectable bias, …) are
    kept as details, each row under ``table`` its name. One
    :func:`~polybias.results.records.measure_results_record`.

    >>> doses = pd.DataFrame([{"language": "en", "measure": "weat", "metric": "effect-size", "p": 0.9,
    ...                        "n": 10, "mean": 1.2, "low": 1.0, "high": 1.4}])
    >>> rec = validity_record(doses, {"mdb": pd.DataFrame([{"metric": "x", "mdb": 0.7}])},
    ...                       language="en", parameters={}, packages={})
    >>> rec.values["measure"], rec.values["subset"], rec.values["interval"]["method"]
    ('validity:weat:effect-size', 'p=0.9', 'student-t')
    >>> rec.values["details"]
    [{'table': 'mdb', 'metric': 'x', 'mdb': 0.7}]
    """
    entries = []
    for row in doses.to_dict("records"):
        low, high = finite_or_none(row["low"]), finite_or_none(row["high"])
        interval = None if low is None or high is None else Interval(low, high, level, "student-t")
        mean = finite_or_none(row["mean"])
        result = MeasureResult(f"{VALIDITY_STATISTIC}{row['measure']}:{row['metric']}",
                               math.nan if mean is None else mean, interval, None, "none", int(row["n"]))
        entries.append((f"p={row['p']}", result, {}))
    details = [{"table": name, **row} for name, table in tables.items() for row in table.to_dict("records")]
    return measure_results_record(entries, model="planted", language=language, test="dose-calibration-mdb",
                                  metric="validity", parameters=parameters, details=details, **fields)


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


# ------------------------------------------------------------------ the notebook's parameters

def _check_10_validity(*, alpha, too_high):
    if not alpha < too_high:
        raise ParameterError(f"need alpha < too_high, got alpha={alpha!r}, too_high={too_high!r}")


#: The parameters of notebook 10_validity: their help, allowed values and checks.
NOTEBOOK_PARAMETERS: Notebook = Notebook({
    "language": choice("planted-corpus language: {values}", planted_languages),
    "summary_dir": free("committed summary of the validity sweep (make validity)"),
    "alpha": Parameter("significance level of the metrics' own tests ({range})", low=0, high=1,
                       open_range=True, default="polybias.stats.ALPHA"),
    "too_high": Parameter("a false-positive rate the calibration verdict must be able to rule "
                          "out ({range}; above alpha)", low=0, high=1, open_range=True,
                          default="polybias.studies.validity_statistics.TOO_HIGH"),
    "power_target": Parameter("power that defines the minimum detectable bias ({range})",
                              low=0, high=1, open_range=True,
                              default="polybias.studies.validity_statistics.TARGET_POWER"),
    "table_file": free(TABLE_FILE.format("validity_en")),
    "figure_prefix": free("figures/<prefix>_dose_response_<language>.png and _mdb_; empty: "
                          "none"),
    "output_dir": free("run record, relative to the project root"),
}, _check_10_validity)
