"""The tidy table's rows: one number of a run record as a row of
:data:`polybias.results.table.COLUMNS`, shared by the one record shape's reader
(:mod:`polybias.results.table`) and the readers of the shapes studies wrote before it
(:mod:`polybias.results.legacy`)."""

from __future__ import annotations

import math
from typing import Any


def record_number(value: Any) -> float:
    """A record number as float (records write non-finite floats as null / "inf")."""
    if value is None:
        return math.nan
    if isinstance(value, str):
        return {"inf": math.inf, "-inf": -math.inf}.get(value, math.nan)
    return float(value)


def table_row(metric: str, value: Any, *, subset: str = "", p: Any = None, p_method: str = "none",
              n: Any = None, ci: tuple[Any, Any] | None = None, level: float | None = None,
              **over: Any) -> dict[str, Any]:
    """One row of the tidy table: ``metric``, ``value`` and ``subset``, the interval ``ci``
    at ``level`` (left empty when its low end is missing), ``p`` with its ``p_method``
    (``none`` when there is no p) and ``n``; ``over`` sets other columns (``language``,
    ``model``, ``test``).

    >>> row = table_row("weat", 1.5, p=0.01, p_method="permutation-exact", n=16)
    >>> row["value"], row["p_method"], row["ci_level"] != row["ci_level"]
    (1.5, 'permutation-exact', True)
    """
    has_p = p is not None and not (isinstance(p, float) and math.isnan(p))
    low, high = (ci if ci is not None else (None, None))
    has_ci = low is not None and not math.isnan(record_number(low))
    return {"metric": metric, "value": record_number(value), "subset": subset,
            "ci_low": record_number(low) if has_ci else math.nan,
            "ci_high": record_number(high) if has_ci else math.nan,
            "ci_level": level if has_ci else math.nan,
            "p": record_number(p) if has_p else math.nan, "p_method": p_method if has_p else "none",
            "n": int(n) if n is not None else None, **over}


def permutation_label(values: dict[str, Any]) -> str:
    """The p-method of a legacy WEAT-like record's ``values`` (``exact`` or not)."""
    return "permutation-exact" if values.get("p_method") == "exact" else "permutation-monte-carlo"


def declared_subset(rec: dict[str, Any], subset: str) -> str:
    """``subset`` with what sets a record apart from the default run of its measure on the
    same test: the ``lm-eval`` scoring method, a declared sample (``max_pairs``,
    ``max_items``), so that a sample and a full run, or the two causal scorings, give
    different cells.

    >>> declared_subset({"parameters": {"method": "lm-eval", "max_pairs": 8, "seed": 0}}, "all")
    'all; lm-eval; sample of 8 (seed 0)'
    >>> declared_subset({"parameters": {"method": "causal"}}, "all")
    'all'
    """
    params = rec.get("parameters", {})
    parts = [subset] if subset else []
    if params.get("method") == "lm-eval":
        parts.append("lm-eval")
    sample = params.get("max_pairs") or params.get("max_items")
    if sample:
        parts.append(f"sample of {sample} (seed {params.get('seed', 0)})")
    if params.get("per_stereotype"):
        parts.append(f"first {params['per_stereotype']} per stereotype")
    return "; ".join(parts)
