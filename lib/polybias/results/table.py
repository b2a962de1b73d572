"""Run records as the ground truth of every table: read them back into one tidy table.

Every notebook writes one JSON record per (model, language, test) run
(:mod:`polybias.results.records`) under ``results/<study>/<run>/``. :func:`read_results` reads
all records below a folder into one tidy table, one row per number, with the columns of
:data:`COLUMNS`:

model, revision, language, study, test, subset, metric, value, ci_low, ci_high, ci_level,
p, p_method, n, options_hash, run_time, record

``metric`` is the key of the registered measure (:mod:`polybias.measures`) where the
number is one (``weat``, ``seat``, ``ceat``, ``kurita``, ``crows``, ``aul``, ``aula``,
``jsd-b``, ``cb``, ``pll-cb``, ``sentiment-cb``, ``interaction-cb``, ``kl-difference``,
``weat-gap``, ``stereoset``, ``gest``, ``eurogest``; the labels stored in records are mapped to it by
:func:`polybias.measures.record_measure`), else a name of the study's own
(``crows-difference``, ``separation``, ``validity:…``). ``subset`` says which part of a run a row is (a bias type, a segment
length and sample set, a sentence structure, a debiasing method). ``run_time`` is the
time the record file was last written (records carry no timestamp, so that the same
inputs give byte-identical records).

:func:`cross_model_table` puts one metric across models (a row per test and subset, a
column per model and language) and :func:`metric_axis` names its figure's axis.
The export itself (tables and figures per metric) is :mod:`polybias.results.export`, and
``polybias results`` and ``polybias export`` are :mod:`polybias.results.commands`.
"""

from __future__ import annotations

import datetime
import json
import math
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from polybias import paths
from polybias.measures import MEASURES, record_measure, registered_measure, validity_unit
from polybias.stats import CONFIDENCE_LEVEL

COLUMNS = ("model", "revision", "language", "study", "test", "subset", "metric", "value",
           "ci_low", "ci_high", "ci_level", "p", "p_method", "n", "options_hash", "run_time",
           "record")
_SKIP_FILES = {"run.json"}


class ResultsError(ValueError):
    """A record that cannot be read or tabulated; the message names the file."""


def _num(value: Any) -> float:
    """A record number as float (records write non-finite floats as null / "inf")."""
    if value is None:
        return math.nan
    if isinstance(value, str):
        return {"inf": math.inf, "-inf": -math.inf}.get(value, math.nan)
    return float(value)


def _row(metric: str, value: Any, *, subset: str = "", p: Any = None, p_method: str = "none",
         n: Any = None, ci: tuple[Any, Any] | None = None, level: float | None = None,
         **over: Any) -> dict[str, Any]:
    has_p = p is not None and not (isinstance(p, float) and math.isnan(p))
    low, high = (ci if ci is not None else (None, None))
    has_ci = low is not None and not math.isnan(_num(low))
    return {"metric": metric, "value": _num(value), "subset": subset,
            "ci_low": _num(low) if has_ci else math.nan, "ci_high": _num(high) if has_ci else math.nan,
            "ci_level": level if has_ci else math.nan,
            "p": _num(p) if has_p else math.nan, "p_method": p_method if has_p else "none",
            "n": int(n) if n is not None else None, **over}


def _permutation(values: dict[str, Any]) -> str:
    return "permutation-exact" if values.get("p_method") == "exact" else "permutation-monte-carlo"


# ------------------------------------------------------------------ one reader per record metric

def _weat_like(rec: dict[str, Any]) -> Iterator[dict[str, Any]]:
    v = rec["values"]
    sizes = v.get("sizes", {})
    yield _row(record_measure(rec["metric"]), v["effect_size"], p=v.get("pvalue"), p_method=_permutation(v),
               n=sizes.get("X", 0) + sizes.get("Y", 0))


def _crows_measure(rec: dict[str, Any]) -> str:
    """``crows``, ``aul`` or ``aula`` by the scoring method of a ``crows`` record; ``jsd-b``
    for a ``crows-jsd`` record."""
    if rec["metric"] != "crows":
        return record_measure(rec["metric"])
    method = rec.get("parameters", {}).get("method")
    return method if method in ("aul", "aula") else "crows"


def _share_rows(metric: str, rows: list[dict[str, Any]], level: float = CONFIDENCE_LEVEL,
                subset_of: Callable[[dict[str, Any]], str] = lambda r: str(r.get("bias_type", "")),
                **over: Any) -> Iterator[dict[str, Any]]:
    for r in rows:
        yield _row(metric, r["score"], subset=subset_of(r), p=r.get("binom_p"),
                   p_method="binomial-exact", n=r.get("n"), ci=(r.get("ci_low"), r.get("ci_high")),
                   level=level, **over)


def _declared(rec: dict[str, Any], subset: str) -> str:
    """``subset`` with what sets a record apart from the default run of its measure on the
    same test: the ``lm-eval`` scoring method, a declared sample (``max_pairs``,
    ``max_items``), so that a sample and a full run, or the two causal scorings, give
    different cells.

    >>> _declared({"parameters": {"method": "lm-eval", "max_pairs": 8, "seed": 0}}, "all")
    'all; lm-eval; sample of 8 (seed 0)'
    >>> _declared({"parameters": {"method": "causal"}}, "all")
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


def _crows(rec: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield from _share_rows(_crows_measure(rec), rec["values"]["by_bias_type"],
                           subset_of=lambda r: _declared(rec, str(r.get("bias_type", ""))))


def _crows_languages(rec: dict[str, Any]) -> Iterator[dict[str, Any]]:
    v = rec["values"]
    for r in v["per_language"]:
        over = {"language": r.get("language", rec["language"])}
        if "model" in r:
            over["model"] = r["model"]
        subset = _declared(rec, f"{r['group']}" if "group" in r else "all")
        yield from _share_rows(record_measure(rec["metric"]), [r], subset_of=lambda _r, s=subset: s, **over)
    for r in v["paired"]:
        a, b = r.get("label_a", r.get("language_a")), r.get("label_b", r.get("language_b"))
        group = f"{r['group']}: " if "group" in r else ""
        yield _row("crows-difference", r["diff"], subset=_declared(rec, f"{group}{a} − {b}"),
                   p=r.get("mcnemar_p"),
                   p_method="binomial-exact", n=r.get("n"), ci=(r.get("ci_low"), r.get("ci_high")),
                   level=CONFIDENCE_LEVEL)


def _ceat(rec: dict[str, Any]) -> Iterator[dict[str, Any]]:
    z = 1.959963984540054  # the normal 95 % interval of the CES (docs/measures/ceat.md)
    for r in rec["values"]["rows"]:
        ces, se = _num(r["ces"]), _num(r["se"])
        yield _row("ceat", ces, subset=f"{r.get('sample_set', '')}, length {r.get('length', '')}",
                   p=r.get("pvalue"), p_method="normal", n=r.get("n_samples"),
                   ci=(ces - z * se, ces + z * se), level=CONFIDENCE_LEVEL)


def _catbias(rec: dict[str, Any]) -> Iterator[dict[str, Any]]:
    v = rec["values"]
    for key in ("ahn_oh_cb", "pll_cb", "max_kl"):
        if v.get(key) is not None:
            subset = " ‖ ".join(v["max_kl_pair"]) if key == "max_kl" and v.get("max_kl_pair") else ""
            yield _row(record_measure(key), v[key], subset=subset)


def _interaction(rec: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for r in rec["values"]["scores"]:
        metric = "sentiment-cb" if r.get("weighted") else "interaction-cb"
        yield _row(metric, r["score"], subset=f"{r.get('characteristics', '')}; {r.get('base', '')}",
                   n=r.get("n_attributes"))


def _logprob_context(rec: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for r in rec["values"]["summary"]:
        yield _row(record_measure(rec["metric"]), r["effect_size"], subset=f"structure {r['structure']}",
                   p=r.get("pvalue"), p_method="permutation-monte-carlo")


def _debias(rec: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for r in rec["values"]["cells"]:
        over = {"test": r["test"]}
        subset = f"{r.get('method', '')}; {r.get('kind', '')}"
        yield _row(record_measure(str(r.get("test_type", "WEAT"))), r["effect_size"], subset=subset,
                   p=r.get("pvalue"), p_method="permutation-monte-carlo", **over)
        if r.get("gap") is not None:
            yield _row(record_measure("gap"), r["gap"], subset=f"{subset}; {r.get('test_type', 'WEAT')}",
                       **over)


def _hidden(rec: dict[str, Any]) -> Iterator[dict[str, Any]]:
    v = rec["values"]
    for method, value in v.get("separation", {}).items():
        yield _row("separation", value, subset=method)


def _validity(rec: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for r in rec["values"].get("measurements", []):
        yield _row(f"validity:{r['measure']}:{r['metric']}", r["value"],
                   subset=f"p={r['p']}, seed={r['seed']}", p=r.get("pvalue"))
    for r in rec["values"].get("dose", []):  # notebook 10: mean over models per strength
        yield _row(f"validity:{r['measure']}:{r['metric']}", r["mean"], subset=f"p={r['p']}",
                   n=r["n"], ci=(r["low"], r["high"]), level=CONFIDENCE_LEVEL)


def _validity_model(rec: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The rows of one planted model of the validity sweep (:func:`as_record`): one per
    measure, metric and size, as the sweep scored them."""
    for r in rec["values"]["rows"]:
        yield _row(f"validity:{r['measure']}:{r['metric']}", r["value"],
                   subset=f"{r['size']} {r['size_axis']}", p=r.get("pvalue"))


def _external_validity(rec: dict[str, Any]) -> Iterator[dict[str, Any]]:
    level = rec.get("parameters", {}).get("confidence", 0.95)
    for r in rec["values"]["correlations"]:
        for method in ("pearson", "spearman"):
            yield _row(f"census-{method}", r[method], subset=f"{r['outcome']}, census {r['year']}",
                       p=r.get(f"{method}_p"), p_method=f"{method}-test", n=r.get("n"),
                       ci=(r.get(f"{method}_low"), r.get(f"{method}_high")), level=level)


def _stereoset(rec: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """SS (the registered measure ``stereoset``), LMS and ICAT per task and group, with
    their bootstrap intervals; SS carries its binomial test against 50."""
    level = rec.get("parameters", {}).get("confidence", 0.95)
    for r in rec["values"]["scores"]:
        subset = _declared(rec, f"{r.get('task', '')}; {r.get('group', 'all')}")
        yield _row("stereoset", r["ss"], subset=subset, p=r.get("binom_p"), p_method="binomial-exact",
                   n=r.get("n"), ci=(r.get("ss_low"), r.get("ss_high")), level=level)
        for key, metric in (("lms", "stereoset-lms"), ("icat", "stereoset-icat")):
            yield _row(metric, r[key], subset=subset, n=r.get("n"),
                       ci=(r.get(f"{key}_low"), r.get(f"{key}_high")), level=level)


def _stereoset_languages(rec: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Per-language SS decisions and the paired differences over shared item ids."""
    v = rec["values"]
    for r in v["per_language"]:
        yield _row(record_measure(rec["metric"]), r["score"], language=r.get("language", rec["language"]),
                   subset="shared items", p=r.get("binom_p"), p_method="binomial-exact",
                   n=r.get("n"), ci=(r.get("ci_low"), r.get("ci_high")), level=CONFIDENCE_LEVEL)
    for r in v["paired"]:
        yield _row("stereoset-difference", r["diff"], subset=f"{r['language_a']} − {r['language_b']}",
                   p=r.get("mcnemar_p"), p_method="binomial-exact", n=r.get("n"),
                   ci=(r.get("ci_low"), r.get("ci_high")), level=CONFIDENCE_LEVEL)


def _gest(rec: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The masculine rate g_s (the registered measure ``gest``) of one GEST run, with its
    bootstrap interval; a declared sample of sentences (``max_items``) says so in the subset."""
    v = rec["values"]
    level = rec.get("parameters", {}).get("level", 0.95)
    yield _row("gest", v["g_s"], subset=_declared(rec, rec.get("test", "")), n=v.get("n"),
               ci=(v.get("g_s_low"), v.get("g_s_high")), level=level)


def _eurogest(rec: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """g_s (the registered measure ``eurogest``) with its bootstrap interval, and the
    masculine rate of each stereotype (``eurogest-masculine-rate``, subset ``<id> <label>``);
    a declared subset of the sentences (``per_stereotype``) says so in the subset."""
    v = rec["values"]
    level = v.get("level") or 0.95
    first = rec.get("parameters", {}).get("per_stereotype")
    subset = f"; first {first} per stereotype" if first else ""
    yield _row("eurogest", v["g_s"], subset=f"g_s{subset}", n=v.get("n"),
               ci=(v.get("ci_low"), v.get("ci_high")), level=level)
    for r in v["per_stereotype"]:
        yield _row("eurogest-masculine-rate", r["masculine_rate"],
                   subset=f"{r['stereotype']} {r.get('label', '')}".strip() + subset, n=r.get("n"),
                   ci=(r.get("ci_low"), r.get("ci_high")), level=level)


def _real_models(rec: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Each real checkpoint's number of the real-model table (notebook 17,
    :func:`polybias.studies.real_models.write_record`) under its hub id: the registered
    measure it reports, test the source (released runs, or this project's), subset its cell."""
    for r in rec["values"]["rows"]:
        yield _row(r["metric"], r["value"], subset=r["cell"], n=r.get("n"),
                   ci=(r.get("ci_low"), r.get("ci_high")), level=0.95, model=r["hub_id"],
                   language=r["language"], test=r["source"])


LEGACY_READERS: dict[str, Callable[[dict[str, Any]], Iterator[dict[str, Any]]]] = {
    "weat": _weat_like, "seat": _weat_like, "crows": _crows, "crows-jsd": _crows, "eurogest": _eurogest,
    "gest": _gest, "stereoset": _stereoset, "crows-languages": _crows_languages,
    "stereoset-languages": _stereoset_languages, "ceat": _ceat,
    "catbias": _catbias, "interaction-cb": _interaction, "logprob-context": _logprob_context,
    "debias": _debias,
}
"""Readers of record shapes no study writes any more (the WEAT, SEAT, CEAT, CrowS-Pairs (one
language or several), EuroGEST, GEST and StereoSet studies (one language or several), the
categorical bias, cultural interactions, log-probability context and debiasing studies
write :func:`polybias.results.records.measure_record` s): kept so that records written
before are still read, and only read (``tests/results/test_table.py`` checks that no study
or notebook writes them; :mod:`polybias.runner.migrations` rewrites the kept ones)."""

READERS: dict[str, Callable[[dict[str, Any]], Iterator[dict[str, Any]]]] = {
    "hidden-states": _hidden, "validity": _validity, "validity-model": _validity_model,
    "external_validity": _external_validity,
    "real-models": _real_models,
}
"""Record metric → reader of its ``values`` into rows, for the records whose study writes
values of its own shape (see :func:`record_reader`)."""

NOT_TABULATED: dict[str, str] = {
    "agreement": "the correlations between measures and their sign table "
                 "(polybias.studies.agreement.write_agreement_records), no measure's value; "
                 "notebook 11 shows them",
}
"""Record metrics deliberately left out of the table (they hold no measure's value), each
with what it holds instead: :func:`record_rows` gives them no rows."""


def _measure_result(rec: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The rows of a registered measure's result as
    :func:`polybias.results.records.measure_record` writes it (``values`` from
    :meth:`polybias.metrics.measure.MeasureResult.record_values`): the overall value under
    its ``subset``, then one row per entry of its ``groups`` (their own measure, subset and
    the fields they set apart, e.g. ``language``); each subset says what sets the record
    apart from its measure's default run (:func:`_declared`)."""
    v = rec["values"]
    yield _measure_row(v.get("measure") or record_measure(rec["metric"]), v, _declared(rec, v.get("subset", "")),
                       **{k: v[k] for k in GROUP_FIELDS if k in v})
    for g in v.get("groups", []):
        over = {k: g[k] for k in GROUP_FIELDS if k in g}
        yield _measure_row(record_measure(g["measure"]), g, _declared(rec, g["subset"]), **over)


def _measure_row(metric: str, v: dict[str, Any], subset: str, **over: Any) -> dict[str, Any]:
    iv = v["interval"]
    return _row(metric, v["value"], subset=subset, p=v["p_value"], p_method=v["p_method"], n=v["n"],
                ci=(iv["low"], iv["high"]) if iv else None, level=iv["level"] if iv else None, **over)


#: The keys of the ``values`` of a :func:`polybias.results.records.measure_record`, and
#: those it has when the result is reported per subset or keeps rows it does not report.
MEASURE_RECORD_VALUES = frozenset({"value", "interval", "p_value", "p_method", "n", "extra"})
#: The fields a group of a measure record (or its overall value) may set apart from its record.
GROUP_FIELDS = ("language", "model", "test")
#: The optional keys of a measure record's ``values``: its subset, groups, kept details, the
#: measure of its value when the record's metric is no label of it, and the fields it sets apart.
MEASURE_RECORD_SUBSETS = frozenset({"subset", "groups", "details", "measure", *GROUP_FIELDS})


def is_measure_record(record: dict[str, Any]) -> bool:
    """Whether ``record`` has the one record shape, :func:`polybias.results.records.measure_record`'s
    (a registered measure's ``metric``, ``values`` as
    :meth:`polybias.metrics.measure.MeasureResult.record_values` gives them), read by the
    registry alone; other shapes are read by their metric's entry of :data:`READERS`.

    >>> is_measure_record({"metric": "weat", "values": {"value": 1.0, "interval": None, "p_value": 0.1,
    ...                    "p_method": "permutation-exact", "n": 16, "extra": {}}})
    True
    >>> is_measure_record({"metric": "weat", "values": {"effect_size": 1.0}})
    False
    """
    values = record.get("values")
    return (isinstance(values, dict)
            and MEASURE_RECORD_VALUES <= set(values) <= MEASURE_RECORD_VALUES | MEASURE_RECORD_SUBSETS
            and (values.get("measure") or record_measure(str(record.get("metric")))) in MEASURES)


def record_reader(metric: str) -> Callable[[dict[str, Any]], Iterator[dict[str, Any]]] | None:
    """The reader of the records whose ``metric`` is ``metric``: its entry of
    :data:`READERS`; else, for a registered measure (a registry key or one of its
    ``record_labels``), the reader of :func:`polybias.results.records.measure_record`'s
    shape; None for a metric of :data:`NOT_TABULATED`. Any other metric raises
    :class:`ResultsError` naming it and what to add.

    >>> record_reader("weat").__name__, record_reader("gest").__name__, record_reader("agreement")
    ('_weat_like', '_gest', None)
    >>> record_reader("toy")
    Traceback (most recent call last):
    ...
    polybias.results.table.ResultsError: no reader for record metric 'toy': ...
    """
    if metric in READERS:
        return READERS[metric]
    if metric in LEGACY_READERS:
        return LEGACY_READERS[metric]
    if metric in NOT_TABULATED:
        return None
    if record_measure(metric) in MEASURES:
        return _measure_result
    raise ResultsError(
        f"no reader for record metric {metric!r}: it is no registered measure (data/measures.yaml, "
        f"its key or record_labels) whose records polybias.results.records.measure_record writes; add "
        f"a reader to polybias.results.table.READERS (it has {', '.join(sorted(READERS))}), or, for a "
        f"record that holds no measure's value, declare it in polybias.results.table.NOT_TABULATED")


def as_record(record: Any) -> Any:
    """A record as the run record it is read as: itself, but for the record of one planted
    model of the validity sweep (:mod:`polybias.runner.validity_sweep`: ``job``,
    ``job_hash``, ``training``, ``scoring_version`` and ``rows``), which keeps the shape it
    has always had (its sha256 is in the committed summary, ``data/validity``): that one is
    the run record of metric ``validity-model`` (model ``planted``, the job's language, test
    the record's name, ``values`` its rows), read by :data:`READERS` like any other.

    >>> job = {"language": "en", "family": "mlm", "p": 0.9, "seed": 0}
    >>> rec = as_record({"job": job, "job_hash": "ab", "rows": []})
    >>> rec["metric"], rec["model"], rec["test"], rec["params_hash"]
    ('validity-model', 'planted', 'mlm-p0.9-s0', 'ab')
    >>> as_record({"metric": "weat"})
    {'metric': 'weat'}
    """
    if (not isinstance(record, dict) or "metric" in record
            or not {"job", "job_hash", "rows"} <= set(record) or not isinstance(record["job"], dict)):
        return record
    job = record["job"]
    try:
        test = f"{job['family']}-p{float(job['p']):g}-s{job['seed']}"
        return {"metric": "validity-model", "model": "planted", "language": job["language"],
                "test": test, "params_hash": record["job_hash"], "values": {"rows": record["rows"]}}
    except (KeyError, TypeError, ValueError):
        return record


def record_rows(record: dict[str, Any], study: str = "", source: str = "",
                run_time: str = "") -> list[dict[str, Any]]:
    """The tidy rows of one record (columns :data:`COLUMNS`); ``source`` names the record
    file in errors and in the ``record`` column.

    A record metric without a reader (:func:`record_reader`) raises :class:`ResultsError`
    naming it; one of :data:`NOT_TABULATED` (it holds no measure's value, e.g.
    ``agreement``) gives no rows.

    >>> rec = {"metric": "weat", "model": "m", "language": "en", "test": "T", "params_hash": "ab",
    ...        "values": {"effect_size": 1.2, "pvalue": 0.01, "p_method": "exact",
    ...                   "sizes": {"X": 8, "Y": 8, "A": 8, "B": 8}}}
    >>> row = record_rows(rec, "weat")[0]
    >>> row["metric"], row["value"], row["p"], row["p_method"], row["n"]
    ('weat', 1.2, 0.01, 'permutation-exact', 16)
    """
    where = f"{source}: " if source else ""
    record = as_record(record)
    if not isinstance(record, dict):
        raise ResultsError(f"{where}not a run record (not a JSON object)")
    for key in ("metric", "model", "language", "test", "values"):
        if key not in record:
            raise ResultsError(f"{where}not a run record (no {key!r} field)")
    try:
        reader = (_measure_result if is_measure_record(record) else record_reader(record["metric"]))
    except ResultsError as exc:
        raise ResultsError(f"{where}{exc}") from None
    if reader is None:
        return []
    base = {"model": record["model"], "revision": record.get("model_revision"),
            "language": record["language"], "study": study, "test": record["test"],
            "options_hash": record.get("params_hash", ""), "run_time": run_time,
            "record": source or record.get("run_id", "")}
    try:
        rows = [{**base, **r} for r in reader(record)]
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise ResultsError(f"{where}malformed {record['metric']!r} record: {type(exc).__name__}: {exc}") from exc
    return [{c: row.get(c) for c in COLUMNS} for row in rows]


def find_records(folder: str | Path) -> list[Path]:
    """Every run record below ``folder`` (``*.json`` except the sweep's ``run.json``
    markers), sorted."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ResultsError(f"no results folder {folder}")
    return sorted(p for p in folder.rglob("*.json") if p.name not in _SKIP_FILES
                  and not p.name.startswith("."))


def read_results(folder: str | Path | None = None, runs: list[Path] | None = None) -> pd.DataFrame:
    """One tidy table of every record below ``folder`` (default: ``results/`` under the
    output root, :func:`polybias.paths.output_path`), or, given ``runs``, of the records
    in those run folders only (``results/<study>/<run>``, e.g. the runs of one sweep).

    ``study`` is the first folder below ``folder`` on the record's path (the sweep writes
    ``results/<study>/<run>/<record>.json``), or the parent of a run folder. A file that
    is not a readable record raises :class:`ResultsError` naming it. The validity sweep's
    records of its planted models are read like the others (:func:`as_record`).
    """
    if runs is not None:
        found = [(path, Path(run).parent.name, Path(run).parent)
                 for run in runs for path in find_records(run)]
    else:
        folder = Path(folder) if folder is not None else paths.output_path("results")
        found = []
        for path in find_records(folder):
            rel = path.relative_to(folder)
            found.append((path, rel.parts[0] if len(rel.parts) > 1 else "", folder))
    rows = []
    for path, study, base in found:
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError) as exc:
            raise ResultsError(f"{path}: not a readable JSON record: {exc}") from exc
        stamp = datetime.datetime.fromtimestamp(path.stat().st_mtime, tz=datetime.UTC)
        rows += record_rows(record, study, path.relative_to(base).as_posix(),
                            stamp.strftime("%Y-%m-%dT%H:%M:%SZ"))
    frame = pd.DataFrame(rows, columns=list(COLUMNS))
    frame["n"] = frame["n"].astype("Int64")
    return frame


# ------------------------------------------------------------------ cross-model tables and figures

def _cell(value: float, low: float, high: float, p: float, digits: int) -> str:
    if value is None or np.isnan(value):
        return "—"
    text = _fmt(value, digits)
    if not np.isnan(low):
        text += f" [{_fmt(low, digits)}, {_fmt(high, digits)}]"
    if not np.isnan(p):
        text += f" (p={p:.1e})" if p < 1e-3 else f" (p={p:.3f})"
    return text


def _fmt(v: float, digits: int) -> str:
    if v != 0 and abs(v) < 10 ** (-digits):
        return f"{v:.{max(digits - 1, 1)}e}"
    return f"{v:.{digits}f}"


def cross_model_table(frame: pd.DataFrame, metric: str, digits: int = 2) -> pd.DataFrame:
    """One metric across models: a row per (study, test, subset), a column per
    ``model (language)``, each cell ``value [ci_low, ci_high] (p=…)``.

    >>> rows = pd.DataFrame({"metric": "weat", "study": "weat", "test": ["T1", "T1"],
    ...                      "subset": "", "model": ["m1", "m2"], "language": "en",
    ...                      "value": [1.0, 0.5], "ci_low": np.nan, "ci_high": np.nan, "p": [0.01, 0.2]})
    >>> cross_model_table(rows, "weat").to_dict("records")
    [{'study': 'weat', 'test': 'T1', 'subset': '', 'm1 (en)': '1.00 (p=0.010)', 'm2 (en)': '0.50 (p=0.200)'}]
    """
    part = frame[frame["metric"] == metric]
    if part.empty:
        raise ResultsError(f"no results for metric {metric!r}; metrics: "
                           f"{', '.join(sorted(frame['metric'].unique()))}")
    part = part.assign(column=part["model"] + " (" + part["language"] + ")",
                       cell=[_cell(*r, digits) for r in
                             part[["value", "ci_low", "ci_high", "p"]].to_numpy(float)])
    keys = ["study", "test", "subset"]
    dup = part.duplicated([*keys, "column"], keep=False)
    if dup.any():
        bad = part.loc[dup, [*keys, "column"]].drop_duplicates().head(3).to_dict("records")
        raise ResultsError(f"metric {metric!r}: several records give the same cell (runs with "
                           f"different options?): {bad}; point FOLDER at the records of one sweep")
    wide = part.pivot(index=keys, columns="column", values="cell")
    columns = list(dict.fromkeys(part["column"]))
    return wide[columns].reset_index().rename_axis(columns=None).fillna("")


#: Titles and value axes of the metrics that are a study's own (not registered measures).
STUDY_METRICS = {
    "eurogest-masculine-rate": ("EuroGEST masculine rate per stereotype",
                                "masculine rate, P_m / (P_m + P_f) averaged over a stereotype's "
                                "sentences (0.5 = no preference; > 0.5 the masculine form)"),
    "crows-difference": ("Difference of stereotype scores between two models",
                         "stereotype score difference, percentage points (0 = the same; > 0: the "
                         "first model more often toward the stereotype)"),
    "stereoset-difference": ("Difference of StereoSet stereotype scores between two languages",
                             "stereotype score SS difference, percentage points (0 = the same; > 0: "
                             "the first language more often toward the stereotype)"),
    "separation": ("Separation of identity groups in the hidden states",
                   "η², share of the variance between groups (0 = no separation; 1 = full)"),
    "census-pearson": ("Occupation bias against the census share of women (Pearson)",
                       "Pearson r with the census share of women, correlation (0 = unrelated; > 0: the bias "
                       "follows the census)"),
    "census-spearman": ("Occupation bias against the census share of women (Spearman)",
                        "Spearman ρ with the census share of women, rank correlation (0 = unrelated; > 0: the bias "
                        "follows the census)"),
}

def null_value(metric: str) -> float:
    """The registered measure's null value (50 for the stereotype scores), else 0; for a
    validity metric, that of the measure it reports."""
    if metric.startswith("validity:"):
        _, design, name = metric.split(":", 2)
        metric = registered_measure(design, name) or ""
    return MEASURES[metric].null_value if metric in MEASURES else 0.0


def metric_axis(metric: str) -> tuple[str, str]:
    """The title of a figure of ``metric`` across models and its value axis: the measure's
    name, unit and the direction of bias (the registry's ``axis``, :data:`STUDY_METRICS`,
    or for the validity sweep the registry's ``validity_units``,
    :func:`polybias.measures.validity_unit`).

    >>> metric_axis("crows")[1]
    'stereotype score, % of pairs (50 = no preference; > 50 toward the stereotype)'
    """
    if metric in MEASURES:
        m = MEASURES[metric]
        return f"{m.title} across models and languages", m.axis or m.value_is
    if metric in STUDY_METRICS:
        return STUDY_METRICS[metric]
    if metric.startswith("validity:"):
        _, measure, name = metric.split(":", 2)
        unit = validity_unit(name) or "its own unit"
        return (f"Validity sweep: {measure} {name} against planted strength p (mean over models)",
                f"{name}, {unit}")
    return f"{metric} across models and languages", metric
