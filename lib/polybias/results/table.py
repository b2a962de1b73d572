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
:func:`polybias.measures.record_measure`), else a statistic
(:data:`polybias.measures.STATISTICS`: ``separation``, ``census-pearson``,
``census-spearman``; a validity statistic ``validity:…``) or a comparison's difference
(``crows-difference``, ``stereoset-difference``). ``subset`` says which part of a run a row is (a bias type, a segment
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
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from polybias import paths
from polybias.measures import (
    MEASURES,
    is_reported,
    record_measure,
    registered_measure,
    validity_unit,
)
from polybias.results.legacy import LEGACY_READERS
from polybias.results.rows import declared_subset, table_row

COLUMNS = ("model", "revision", "language", "study", "test", "subset", "metric", "value",
           "ci_low", "ci_high", "ci_level", "p", "p_method", "n", "options_hash", "run_time",
           "record")
_SKIP_FILES = {"run.json"}


class ResultsError(ValueError):
    """A record that cannot be read or tabulated; the message names the file."""


# ------------------------------------------------------------------ the readers

def _validity_model(rec: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The rows of one planted model of a validity sweep (:func:`as_record`): one per
    measure, metric, size and (the diagnosis' per-layer probe) layer, as the sweep scored
    them, with the interval and n a row holds (the EuroGEST validity's g_s)."""
    for r in rec["values"]["rows"]:
        parts = ([f"layer {r['layer']}"] if "layer" in r else []) + \
            ([f"{r['size']} {r['size_axis']}"] if "size" in r else [])
        yield table_row(f"validity:{r['measure']}:{r['metric']}", r["value"], subset=", ".join(parts),
                        p=r.get("pvalue"), n=r.get("n"), ci=(r.get("low"), r.get("high")),
                        level=r.get("level"))


READERS: dict[str, Callable[[dict[str, Any]], Iterator[dict[str, Any]]]] = {
    "validity-model": _validity_model,
}
"""Record metric → reader of its ``values`` into rows, for the records that keep a shape
of their own: the validity sweep's record of one planted model (:func:`as_record`), whose
sha256 the committed validity summary holds (``data/validity``). Every study writes
:func:`polybias.results.records.measure_record` s; the shapes they wrote before are read
by :data:`polybias.results.legacy.LEGACY_READERS`."""

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
    yield _measure_row(v.get("measure") or record_measure(rec["metric"]), v, declared_subset(rec, v.get("subset", "")),
                       **{k: v[k] for k in GROUP_FIELDS if k in v})
    for g in v.get("groups", []):
        over = {k: g[k] for k in GROUP_FIELDS if k in g}
        yield _measure_row(record_measure(g["measure"]), g, declared_subset(rec, g["subset"]), **over)


def _measure_row(metric: str, v: dict[str, Any], subset: str, **over: Any) -> dict[str, Any]:
    iv = v["interval"]
    return table_row(metric, v["value"], subset=subset, p=v["p_value"], p_method=v["p_method"], n=v["n"],
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
    (a registered measure's or a statistic's ``metric``, :func:`polybias.measures.is_reported`;
    ``values`` as :meth:`polybias.metrics.measure.MeasureResult.record_values` gives them),
    read by the registry alone; other shapes are read by their metric's entry of :data:`READERS`.

    >>> is_measure_record({"metric": "weat", "values": {"value": 1.0, "interval": None, "p_value": 0.1,
    ...                    "p_method": "permutation-exact", "n": 16, "extra": {}}})
    True
    >>> is_measure_record({"metric": "weat", "values": {"effect_size": 1.0}})
    False
    """
    return _has_measure_shape(record) and is_reported(_reported_label(record))


def _has_measure_shape(record: dict[str, Any]) -> bool:
    values = record.get("values")
    return (isinstance(values, dict)
            and MEASURE_RECORD_VALUES <= set(values) <= MEASURE_RECORD_VALUES | MEASURE_RECORD_SUBSETS)


def _reported_label(record: dict[str, Any]) -> str:
    """What a measure record's value reports: its ``values["measure"]``, else its metric."""
    return record["values"].get("measure") or str(record.get("metric"))


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
    if is_reported(metric):
        return _measure_result
    raise ResultsError(
        f"no reader for record metric {metric!r}: it is no registered measure (data/measures.yaml, "
        f"its key or record_labels) whose records polybias.results.records.measure_record writes; add "
        f"a reader to polybias.results.table.READERS (it has {', '.join(sorted(READERS))}), or, for a "
        f"record that holds no measure's value, declare it in polybias.results.table.NOT_TABULATED")


def as_record(record: Any) -> Any:
    """A record as the run record it is read as: itself, but for the record of one planted
    model of a validity sweep (:mod:`polybias.runner.validity_sweep`, and its diagnosis and
    EuroGEST kinds: ``job``, ``job_hash``, ``scoring_version`` and ``rows``), which keeps
    the shape it has always had (its sha256 is in the committed summary, ``data/validity``):
    that one is the run record of metric ``validity-model`` (model ``planted``, the job's
    language, test the job's family or part, strength, seed and grid, ``values`` its rows),
    read by :data:`READERS` like any other.

    >>> job = {"language": "en", "family": "mlm", "p": 0.9, "seed": 0}
    >>> rec = as_record({"job": job, "job_hash": "ab", "rows": []})
    >>> rec["metric"], rec["model"], rec["test"], rec["params_hash"]
    ('validity-model', 'planted', 'mlm-p0.9-s0', 'ab')
    >>> as_record({"job": {"language": "en", "part": "layers", "grid": 1, "p": 0.1, "seed": 0},
    ...            "job_hash": "cd", "rows": []})["test"]
    'layers-p0.1-s0-g1'
    >>> as_record({"metric": "weat"})
    {'metric': 'weat'}
    """
    if (not isinstance(record, dict) or "metric" in record
            or not {"job", "job_hash", "rows"} <= set(record) or not isinstance(record["job"], dict)):
        return record
    job, rows = record["job"], record["rows"]
    try:
        kind = job.get("family") or job.get("part") or (rows[0]["family"] if rows else "validity")
        test = f"{kind}-p{float(job['p']):g}-s{job['seed']}" + (f"-g{job['grid']}" if "grid" in job else "")
        return {"metric": "validity-model", "model": "planted", "language": job["language"],
                "test": test, "params_hash": record["job_hash"], "values": {"rows": rows}}
    except (KeyError, TypeError, ValueError, IndexError):
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
    if _has_measure_shape(record) and not is_reported(_reported_label(record)):
        raise ResultsError(
            f"{where}record {record['metric']!r} reports {_reported_label(record)!r}: no registered "
            "measure (data/measures.yaml, its key or record_labels) nor a statistic of "
            "polybias.measures.STATISTICS; register it there, or write the record with its measure's key")
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
