"""Do bias metrics agree with each other? Rank correlation and sign agreement.

Two views:

* on models of known bias (:func:`polybias.studies.validity_designs.dose_response` output: one row per
  measure, metric, planted strength ``p`` and seed), :func:`metric_agreement` gives the
  rank correlation of every pair of metrics across the models, and
  :func:`sign_agreement` the share of models on which every signed metric falls on the
  same side of its null;
* on published numbers (e.g. seed 000 Table 4: WEAT, SEAT, CEAT and log-probability
  bias per category), :func:`reported_signs` lines the methods up per category and says
  whether their signs agree, counting only significant values when asked.
"""

from __future__ import annotations

import numpy as np
import pandas as pd


class AgreementError(ValueError):
    """Input without the columns or rows an agreement table needs."""


def _wide(frame: pd.DataFrame, value: str = "value") -> pd.DataFrame:
    needed = {"measure", "metric", "p", "seed", value}
    missing = sorted(needed - set(frame.columns))
    if missing:
        raise AgreementError(f"measurements lack columns {missing}")
    label = frame["measure"] + ":" + frame["metric"]
    wide = frame.assign(label=label).pivot_table(index=["p", "seed"], columns="label",
                                                 values=value, sort=False)
    if wide.shape[1] < 2:
        raise AgreementError(f"need at least two metrics, got {list(wide.columns)}")
    return wide


def metric_agreement(frame: pd.DataFrame, method: str = "spearman") -> pd.DataFrame:
    """Correlation (Spearman by default) of every pair of metrics across the models.

    A model is one (``p``, ``seed``); columns are ``measure:metric``. Unsigned metrics
    (variances such as CB) correlate with ``|p - 0.5|`` rather than ``p``, so a low or
    negative correlation with a signed metric is expected for them.

    >>> f = pd.DataFrame({"measure": ["a", "a", "a", "b", "b", "b"], "metric": "x",
    ...                   "p": [0.1, 0.5, 0.9] * 2, "seed": 0,
    ...                   "value": [1.0, 2.0, 3.0, 30.0, 20.0, 10.0]})
    >>> float(metric_agreement(f).loc["a:x", "b:x"])
    -1.0
    """
    if method not in ("spearman", "pearson", "kendall"):
        raise AgreementError(f"method must be spearman, pearson or kendall, got {method!r}")
    return _wide(frame).corr(method=method)


def sign_agreement(frame: pd.DataFrame) -> pd.DataFrame:
    """Per model (p, seed): the sign of every signed metric relative to its null, and
    whether all of them agree (``agree``). Metrics whose ``null`` is NaN are left out.

    >>> f = pd.DataFrame({"measure": ["a", "b"], "metric": "x", "p": 0.9, "seed": 0,
    ...                   "value": [0.4, 45.0], "null": [0.0, 50.0]})
    >>> sign_agreement(f)[["a:x", "b:x", "agree"]].values.tolist()
    [[1, -1, False]]
    """
    if "null" not in frame.columns:
        raise AgreementError("measurements lack the column 'null'")
    signed = frame[frame["null"].notna()]
    signs = signed.assign(sign=np.sign(signed["value"] - signed["null"]).astype(int))
    wide = _wide(signs, "sign").astype(int)
    wide["agree"] = wide.nunique(axis=1) == 1
    return wide.reset_index()


def reported_signs(reported: pd.DataFrame, by: str = "category", method: tuple[str, ...] = ("method", "model"),
                   value: str = "value", significant: str | None = "significant") -> pd.DataFrame:
    """Published values lined up per ``by`` (e.g. a WEAT category), one column per method.

    Columns: one per method (``method`` columns joined with a space; the value), ``n_pos``
    and ``n_neg`` (how many values are positive / negative, among the significant ones when
    ``significant`` names a boolean column) and ``agree`` (no significant value disagrees
    in sign with another).

    >>> r = pd.DataFrame({"category": ["C1", "C1", "C2", "C2"], "method": ["W", "S", "W", "S"],
    ...                   "model": "", "value": [1.0, 0.5, 0.3, -0.2],
    ...                   "significant": [True, True, True, True]})
    >>> reported_signs(r)[["category", "n_pos", "n_neg", "agree"]].values.tolist()
    [['C1', 2, 0, True], ['C2', 1, 1, False]]
    """
    missing = sorted({by, value, *method, *([significant] if significant else [])} - set(reported.columns))
    if missing:
        raise AgreementError(f"reported values lack columns {missing}")
    if reported.empty:
        raise AgreementError("no reported values")
    frame = reported.copy()
    frame["label"] = frame[list(method)].fillna("").astype(str).agg(" ".join, axis=1).str.strip()
    wide = frame.pivot_table(index=by, columns="label", values=value, sort=False)
    counted = frame
    if significant:
        flags = frame[significant]
        if flags.dtype != bool:
            flags = flags.astype(str).str.lower().map({"true": True, "false": False})
            if flags.isna().any():
                raise AgreementError(f"column {significant!r} must hold true/false")
        counted = frame[flags.astype(bool)]
    pos = counted[counted[value] > 0].groupby(by).size()
    neg = counted[counted[value] < 0].groupby(by).size()
    out = wide.reset_index()
    out["n_pos"] = out[by].map(pos).fillna(0).astype(int)
    out["n_neg"] = out[by].map(neg).fillna(0).astype(int)
    out["agree"] = (out["n_pos"] == 0) | (out["n_neg"] == 0)
    out.columns.name = None
    return out
