"""Kept run records brought to the current record shape, never recomputed.

The records of real-model runs are kept under ``paper/records/`` (``keep_records`` runs,
:func:`polybias.runner.execution.keep_records`) because they take CPU-hours. When the shape
of a record changes (a field added), a migration here rewrites the kept records with what
the new field would have held, derived from the record and the pinned data, and rehashes
the kept folder's ``run.json``; a record that does not need it is left byte for byte.

    .venv/bin/python -m polybias.runner.migrations     # every kept folder, in place

Migrations:

* ``eurogest_identical_forms`` — EuroGEST records written before pairs with identical
  forms were counted: ``parameters.identical_forms = "keep"`` (what those runs did: every
  pair scored) and ``values.n_identical``, counted in the language's pinned files
  (:func:`polybias.data.eurogest.eurogest_pairs`).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from polybias import paths
from polybias.data.eurogest import eurogest_pairs
from polybias.files import params_hash, sha256_file, write_text_atomic
from polybias.runner.execution import KEPT_ROOT, MARKER


def eurogest_identical_forms(record: dict[str, Any]) -> dict[str, Any] | None:
    """Add ``identical_forms`` and ``n_identical`` to a EuroGEST record that lacks them."""
    if record.get("metric") != "eurogest" or "n_identical" in record.get("values", {}):
        return None
    parameters = record["parameters"]
    pairs = eurogest_pairs(record["language"], subsets=tuple(parameters["subsets"]))
    record = json.loads(json.dumps(record))
    record["parameters"]["identical_forms"] = "keep"
    record["params_hash"] = params_hash(record["parameters"])
    record["values"]["n_identical"] = int((pairs["masculine"] == pairs["feminine"]).sum())
    return record


MIGRATIONS: tuple[Callable[[dict[str, Any]], dict[str, Any] | None], ...] = (eurogest_identical_forms,)


def migrate_folder(folder: Path) -> list[str]:
    """Apply :data:`MIGRATIONS` to the records of one kept folder; returns the files changed
    (the ``run.json``'s digests rewritten to match)."""
    marker = json.loads((folder / MARKER).read_text(encoding="utf-8"))
    changed = []
    for name in sorted(marker["files"]):
        path = folder / name
        record = json.loads(path.read_text(encoding="utf-8"))
        new = None
        for migration in MIGRATIONS:
            out = migration(new or record)
            new = out if out is not None else new
        if new is not None:
            write_text_atomic(path, json.dumps(new, sort_keys=True, indent=2, ensure_ascii=False,
                                               allow_nan=False) + "\n")
            marker["files"][name] = sha256_file(path)
            changed.append(name)
    if changed:
        marker.setdefault("migrated", []).extend(
            m.__name__ for m in MIGRATIONS if m.__name__ not in marker.get("migrated", []))
        write_text_atomic(folder / MARKER, json.dumps(marker, indent=2, sort_keys=True) + "\n")
    return changed


def main(argv: list[str] | None = None) -> int:
    root = paths.project_root() / KEPT_ROOT
    total = 0
    for marker in sorted(root.glob(f"*/*/{MARKER}")):
        changed = migrate_folder(marker.parent)
        total += len(changed)
        for name in changed:
            print(f"migrated {marker.parent.relative_to(root)}/{name}")
    print(f"{total} record(s) migrated under {KEPT_ROOT}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
