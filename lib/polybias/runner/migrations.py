"""Kept run records brought to the current record shape, never recomputed.

The records of real-model runs are kept under ``paper/records/`` (``keep_records`` runs,
:func:`polybias.runner.execution.keep_records`) because they take CPU-hours. When the shape
of a record changes (a field added), a migration here rewrites the kept records with what
the new field would have held, derived from the record and the pinned data, and rehashes
the kept folder's ``run.json``; a record that does not need it is left byte for byte.

    .venv/bin/python -m polybias.runner.migrations          # every kept folder, in place
    .venv/bin/python -m polybias.runner.migrations results  # a sweep's run folders, in place

Migrations:

* ``eurogest_identical_forms`` — EuroGEST records written before pairs with identical
  forms were counted: ``parameters.identical_forms = "keep"`` (what those runs did: every
  pair scored) and ``values.n_identical``, counted in the language's pinned files
  (:func:`polybias.data.eurogest.eurogest_pairs`).
* ``crows_measure_records``, ``eurogest_measure_records``, ``gest_measure_records``,
  ``stereoset_measure_records``, ``crows_languages_measure_records``,
  ``stereoset_languages_measure_records`` — CrowS-Pairs (``crows``, ``crows-jsd``,
  ``crows-languages``), EuroGEST, GEST and StereoSet (``stereoset``,
  ``stereoset-languages``) records of the shapes written before the one record shape,
  rewritten as the measure records their studies write now
  (:func:`polybias.results.records.measure_record` with ``subset`` and ``groups``); the
  results table reads the same rows from both (``tests/runner/test_migrations.py``).

And one of the run folders' ``run.json`` (:func:`rehash_run`): ``hash_without_defaults``,
the run's hash rewritten to leave out the parameters equal to their notebook's defaults, so
that the sweep configs can state only what differs from them and a kept run stays done.
"""

from __future__ import annotations

import dataclasses
import json
import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from polybias import paths
from polybias.data.eurogest import eurogest_pairs
from polybias.files import params_hash, sha256_file, write_text_atomic
from polybias.metrics.crows import share_groups, share_row_result
from polybias.metrics.measure import Interval, MeasureResult
from polybias.results.records import measure_group, measure_record
from polybias.runner.execution import KEPT_ROOT, MARKER
from polybias.runner.runs import hashed_parameters, source_sha
from polybias.stats import CONFIDENCE_LEVEL
from polybias.studies.crows_languages import comparison_record
from polybias.studies.eurogest import stereotype_groups
from polybias.studies.gest import gest_record
from polybias.studies.stereoset import languages_record, stereoset_record


def eurogest_identical_forms(record: dict[str, Any]) -> dict[str, Any] | None:
    """Add ``identical_forms`` and ``n_identical`` to a EuroGEST record that lacks them."""
    values = record.get("values", {})
    if record.get("metric") != "eurogest" or "n_identical" in values or "g_s" not in values:
        return None
    parameters = record["parameters"]
    pairs = eurogest_pairs(record["language"], subsets=tuple(parameters["subsets"]))
    record = json.loads(json.dumps(record))
    record["parameters"]["identical_forms"] = "keep"
    record["params_hash"] = params_hash(record["parameters"])
    record["values"]["n_identical"] = int((pairs["masculine"] == pairs["feminine"]).sum())
    return record


#: The fields of a record that say where its values came from, carried over as they are.
_PROVENANCE = ("model_revision", "data_sha256", "packages", "normaliser", "engine")


def _as_measure_record(record: dict[str, Any], result, **shape: Any) -> dict[str, Any]:
    """``record`` rewritten as :func:`polybias.results.records.measure_record` writes it:
    the same metric, model, language, test, parameters and provenance, ``values`` from
    ``result`` (whose options are not added to the parameters) and ``shape`` (``subset``,
    ``groups``)."""
    result = dataclasses.replace(result, options={})
    return measure_record(result, model=record["model"], language=record["language"], test=record["test"],
                          parameters=record["parameters"], metric=record["metric"],
                          **{k: record[k] for k in _PROVENANCE if k in record}, **shape).to_dict()


def crows_measure_records(record: dict[str, Any]) -> dict[str, Any] | None:
    """A ``crows`` or ``crows-jsd`` record of the shape written before the one record
    shape (``values.by_bias_type``: the table of
    :func:`polybias.metrics.crows.aggregate_pairs`) as the share's measure record
    (:func:`polybias.studies.crows_pairs.share_record`): the ``all`` row under its subset,
    one group per bias type; the interval's level the measure's default (95 %)."""
    if record.get("metric") not in ("crows", "crows-jsd") or "by_bias_type" not in record.get("values", {}):
        return None
    rows = record["values"]["by_bias_type"]
    method = record.get("parameters", {}).get("method")
    name = "jsd-b" if record["metric"] == "crows-jsd" else (method if method in ("aul", "aula") else "crows")
    opts = {"confidence": CONFIDENCE_LEVEL}
    groups = [measure_group(subset, r) for subset, r in share_groups(name, rows, opts)]
    return _as_measure_record(record, share_row_result(name, rows[0], opts),
                              subset=str(rows[0]["bias_type"]), groups=groups)


def eurogest_measure_records(record: dict[str, Any]) -> dict[str, Any] | None:
    """A ``eurogest`` record of the shape written before the one record shape (``g_s``,
    ``ci_low``, ``ci_high``, ``level``, ``n``, the counts and ``per_stereotype``) as
    :func:`polybias.studies.eurogest.eurogest_record` writes it."""
    v = record.get("values", {})
    if record.get("metric") != "eurogest" or "per_stereotype" not in v:
        return None
    level = v.get("level")
    interval = None if v.get("ci_low") is None else Interval(v["ci_low"], v["ci_high"], level,
                                                               "bootstrap-percentile")
    counts = {k: v[k] for k in ("n_too_long", "n_identical", "complete") if k in v}
    result = MeasureResult("eurogest", v["g_s"], interval, None, "none", int(v["n"]), extra=counts)
    return _as_measure_record(record, result, subset="g_s",
                              groups=stereotype_groups(v["per_stereotype"], level))


def gest_measure_records(record: dict[str, Any]) -> dict[str, Any] | None:
    """A ``gest`` record of the shape written before the one record shape (``g_s``,
    ``g_s_low``, ``g_s_high``, ``r_f``, ``r_m``, ``n``, ``rates``) as
    :func:`polybias.studies.gest.gest_record` writes it."""
    v = record.get("values", {})
    if record.get("metric") != "gest" or "rates" not in v:
        return None
    run = {k: math.nan if v.get(k) is None else v[k] for k in ("n", "r_f", "r_m", "g_s", "g_s_low", "g_s_high")}
    new = gest_record(run, v["rates"], model=record["model"], test=record["test"],
                      parameters=record["parameters"], **{k: record[k] for k in _PROVENANCE if k in record})
    return new.to_dict()


def stereoset_measure_records(record: dict[str, Any]) -> dict[str, Any] | None:
    """A ``stereoset`` record of the shape written before the one record shape (``scores``:
    the rows of :func:`polybias.studies.stereoset.scores_table`) as
    :func:`polybias.studies.stereoset.stereoset_record` writes it."""
    if record.get("metric") != "stereoset" or "scores" not in record.get("values", {}):
        return None
    return stereoset_record(record["values"]["scores"], model=record["model"], language=record["language"],
                            parameters=record["parameters"],
                            **{k: record[k] for k in _PROVENANCE if k in record}).to_dict()


def crows_languages_measure_records(record: dict[str, Any]) -> dict[str, Any] | None:
    """A ``crows-languages`` record of the shape written before the one record shape
    (``per_language`` and ``paired``) as
    :func:`polybias.studies.crows_languages.comparison_record` writes it."""
    v = record.get("values", {})
    if record.get("metric") != "crows-languages" or "per_language" not in v:
        return None
    return comparison_record(v["per_language"], v["paired"], model=record["model"],
                             language=record["language"], test=record["test"],
                             parameters=record["parameters"],
                             **{k: record[k] for k in _PROVENANCE if k in record}).to_dict()


def stereoset_languages_measure_records(record: dict[str, Any]) -> dict[str, Any] | None:
    """A ``stereoset-languages`` record of the shape written before the one record shape
    (``per_language`` and ``paired``) as :func:`polybias.studies.stereoset.languages_record`
    writes it."""
    v = record.get("values", {})
    if record.get("metric") != "stereoset-languages" or "per_language" not in v:
        return None
    return languages_record(v["per_language"], v["paired"], model=record["model"],
                            language=record["language"], parameters=record["parameters"],
                            **{k: record[k] for k in _PROVENANCE if k in record}).to_dict()


MIGRATIONS: tuple[Callable[[dict[str, Any]], dict[str, Any] | None], ...] = (
    eurogest_identical_forms, crows_measure_records, eurogest_measure_records, gest_measure_records,
    stereoset_measure_records, crows_languages_measure_records, stereoset_languages_measure_records)


def migrate_folder(folder: Path) -> list[str]:
    """Apply :data:`MIGRATIONS` to the records of one run folder (a kept one, whose
    ``run.json`` lists its ``files``, or a sweep's, listing its ``outputs``); returns the
    files changed (the ``run.json``'s digests rewritten to match)."""
    marker = json.loads((folder / MARKER).read_text(encoding="utf-8"))
    digests = "files" if "files" in marker else "outputs"
    if not isinstance(marker.get(digests), dict):  # a run that failed or wrote nothing
        return []
    changed, applied = [], set()
    for name in sorted(n for n in marker[digests] if n.endswith(".json")):
        path = folder / name
        record = json.loads(path.read_text(encoding="utf-8"))
        new = None
        for migration in MIGRATIONS:
            out = migration(new or record)
            if out is not None:
                new = out
                applied.add(migration.__name__)
        if new is not None:
            write_text_atomic(path, json.dumps(new, sort_keys=True, indent=2, ensure_ascii=False,
                                               allow_nan=False) + "\n")
            marker[digests][name] = sha256_file(path)
            changed.append(name)
    if changed:
        marker.setdefault("migrated", []).extend(
            m.__name__ for m in MIGRATIONS if m.__name__ in applied and m.__name__ not in marker.get("migrated", []))
        write_text_atomic(folder / MARKER, json.dumps(marker, indent=2, sort_keys=True) + "\n")
    return changed


#: The name a run folder's ``run.json`` lists under ``migrated`` once :func:`rehash_run` rewrote it
REHASH = "hash_without_defaults"


def rehash_run(folder: Path, root: Path | None = None) -> bool:
    """Rewrite the hash in a run folder's ``run.json`` to the scheme that leaves out the
    parameters equal to their notebook's defaults
    (:func:`polybias.runner.runs.hashed_parameters`), when it holds the hash of the scheme
    before (of every stated parameter): a kept run's ``parameters_hash``
    (:meth:`~polybias.runner.runs.Run.kept_hash`), a sweep run's ``params_hash`` (with the
    notebook's source as it is now: a run of an edited notebook stays stale). Returns
    whether it rewrote it; any other ``run.json`` is left byte for byte."""
    root = Path(root) if root else paths.project_root()
    marker_path = folder / MARKER
    marker = json.loads(marker_path.read_text(encoding="utf-8"))
    notebook, stated = marker.get("notebook"), marker.get("parameters")
    if not isinstance(notebook, str) or not isinstance(stated, dict):
        return False
    if "parameters_hash" in marker:  # a kept run: its stated parameters
        field, base = "parameters_hash", {"notebook": notebook}
    elif (root / notebook).is_file():  # a sweep's run: the executor adds output_dir to them
        field, base = "params_hash", {"notebook": notebook, "source": source_sha(root / notebook)}
        stated = {k: v for k, v in stated.items() if k != "output_dir"}
    else:
        return False
    if marker.get(field) != params_hash({**base, **stated}):
        return False
    new = params_hash({**base, **hashed_parameters(notebook, stated, root)})
    if new == marker[field]:
        return False
    marker[field] = new
    marker.setdefault("migrated", []).append(REHASH)
    write_text_atomic(marker_path, json.dumps(marker, indent=2, sort_keys=True) + "\n")
    return True


def main(argv: list[str] | None = None) -> int:
    """Migrate every run folder (one with a ``run.json``, at any depth) under the folder given (default:
    the kept records, ``paper/records``; e.g. ``results`` for a sweep's own copies)."""
    args = list(argv or [])
    if len(args) > 1 or any(a.startswith("-") for a in args):
        print("usage: python -m polybias.runner.migrations [FOLDER]  (default: paper/records)", file=sys.stderr)
        return 2
    root = Path(args[0]) if args else paths.project_root() / KEPT_ROOT
    if not root.is_dir():
        print(f"migrations: no folder {root}", file=sys.stderr)
        return 2
    total = 0
    rehashed = 0
    for marker in sorted(root.rglob(MARKER)):
        changed = migrate_folder(marker.parent)
        total += len(changed)
        for name in changed:
            print(f"migrated {marker.parent.relative_to(root)}/{name}")
        if rehash_run(marker.parent):
            rehashed += 1
            print(f"rehashed {marker.parent.relative_to(root)}/{MARKER}")
    print(f"{total} record(s) migrated, {rehashed} run hash(es) rewritten under {root if args else KEPT_ROOT}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
