"""Run records: one JSON file per run, deterministic and written atomically.

A record holds everything needed to tell what was computed and from what:
run id, metric, model (+ revision or checksum, and its text normaliser when it has
one), language, test, parameters and their hash, values, data sha256s and package
versions. No timestamps: the same
inputs and seed give byte-identical records.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from polybias.engines.common import normaliser_fields
from polybias.files import jsonable, params_hash, write_text_atomic

_PACKAGES = ("polybias", "numpy", "scipy", "pandas", "gensim", "torch", "transformers")


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9.]+", "-", str(text)).strip("-").lower() or "none"


def run_id(metric: str, model: str, language: str, test: str) -> str:
    """Stable, file-name-safe run id.

    >>> run_id("weat", "w2v-gnews", "en", "WEAT 7")
    'weat_m-w2v-gnews_l-en_t-weat-7'
    """
    return f"{_slug(metric)}_m-{_slug(model)}_l-{_slug(language)}_t-{_slug(test)}"


#: The registered measure (its key in ``data/measures.yaml``) behind each label that stored
#: run records use for it where the label is not the key itself: a record's ``metric``, a
#: value key of a ``catbias`` or ``debias`` record, a ``debias`` cell's ``test_type``.
#: Records keep their labels (the same inputs give byte-identical records); code that reads
#: them maps the labels here (:func:`record_measure`) and selects measures by registry key
#: only. A record label that is a registry key already (``weat``, ``seat``, ``ceat``,
#: ``crows``, ``stereoset``, ``interaction-cb``) maps to itself; one that holds several
#: measures (``catbias``, ``debias``) names them by its value keys. The validity sweep's
#: labels are mapped in :data:`METRIC_MEASURES`.
RECORD_MEASURES: dict[str, str] = {
    # a record's metric
    "crows-jsd": "jsd-b", "crows-languages": "crows", "logprob-context": "kurita",
    "stereoset-languages": "stereoset",
    # the values of a catbias record
    "ahn_oh_cb": "cb", "pll_cb": "pll-cb", "max_kl": "kl-difference",
    # the test type and the gap of a debias cell
    "WEAT": "weat", "SEAT": "seat", "gap": "weat-gap",
}


def record_measure(label: str) -> str:
    """The registry key of a label stored in run records (:data:`RECORD_MEASURES`; a label
    that is a key already is returned as it is).

    >>> record_measure("logprob-context"), record_measure("ahn_oh_cb"), record_measure("weat")
    ('kurita', 'cb', 'weat')
    """
    return RECORD_MEASURES.get(label, label)


METRIC_MEASURES: dict[str, dict[str, str]] = {
    "weat": {"effect-size": "weat"},
    "crows-mlm": {"stereotype-score": "crows", "jsd-B": "jsd-b"},
    "crows-causal": {"stereotype-score": "crows", "jsd-B": "jsd-b"},
    "template-mlm": {"kurita-effect-size": "kurita", "cb": "cb", "pll-cb": "pll-cb"},
    "embedding-mlm": {"seat-effect-size": "seat", "ceat-ces": "ceat", "ceat-ces-perm": "ceat"},
    "embedding-encoder": {"seat-effect-size": "seat", "ceat-ces": "ceat", "ceat-ces-perm": "ceat"},
    "interactions-mlm": {"interaction-cb": "interaction-cb", "pronoun-cb": "interaction-cb"},
}
"""Per validity design (:data:`polybias.studies.validity.DESIGNS`, the sweep's
``interactions-mlm``, :mod:`polybias.runner.validity_sweep`, and the known-answer encoder's
``embedding-encoder``, :mod:`polybias.runner.validity_diagnosis`): its metric labels, as
stored in the measurements and run records, → the key of the registered measure each reports (:mod:`polybias.measures`;
``ceat-ces-perm`` is the CES with the word-permutation p-value, ``pronoun-cb`` the
interaction CB of the pronoun alone)."""


def registered_measure(design: str, metric: str) -> str | None:
    """The registry key behind a validity measurement's ``measure`` (its design) and
    ``metric`` labels, or None.

    >>> registered_measure("crows-causal", "jsd-B"), registered_measure("weat", "gap")
    ('jsd-b', None)
    """
    return METRIC_MEASURES.get(design, {}).get(metric)


def package_versions(packages: tuple[str, ...] = _PACKAGES) -> dict[str, str | None]:
    """Installed versions of the packages a result depends on (None when absent)."""
    versions: dict[str, str | None] = {}
    for name in packages:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def model_fields(model: Any) -> dict[str, Any]:
    """The record fields that say which model computed a result: ``model_revision`` (its
    resolved commit, checksum or other revision) and ``normaliser`` (its text normaliser as
    its ``to_record()`` gives it: name, implementation, version;
    :class:`polybias.models.loading.Normaliser`), read from a loaded language model, encoder
    or static embeddings.

    >>> from types import SimpleNamespace
    >>> model_fields(SimpleNamespace(revision="abc"))
    {'model_revision': 'abc', 'normaliser': None}
    >>> norm = SimpleNamespace(to_record=lambda: {"name": "n", "implementation": "f", "version": "1"})
    >>> model_fields(SimpleNamespace(revision=None, normaliser=norm))["normaliser"]["name"]
    'n'
    """
    return {"model_revision": getattr(model, "revision", None),
            "normaliser": normaliser_fields(getattr(model, "normaliser", None))}


@dataclass
class RunRecord:
    """One run's result. ``values`` holds the numbers; everything else says where they came from."""

    metric: str
    model: str
    language: str
    test: str
    parameters: dict[str, Any]
    values: dict[str, Any]
    model_revision: str | None = None
    data_sha256: dict[str, str] = field(default_factory=dict)
    packages: dict[str, str | None] = field(default_factory=package_versions)
    #: the model's text normaliser (name, implementation, version), None when it has none
    normaliser: dict[str, Any] | None = None

    @property
    def run_id(self) -> str:
        return run_id(self.metric, self.model, self.language, self.test)

    @property
    def params_hash(self) -> str:
        return params_hash(self.parameters)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["run_id"] = self.run_id
        out["params_hash"] = self.params_hash
        return jsonable(out)


def write_record(record: RunRecord | dict[str, Any], folder: str | Path) -> Path:
    """Write a record as ``<folder>/<run_id>.json`` atomically and return the path.

    The record is serialised completely before anything touches the disk, so an
    unserialisable value raises without leaving a file.
    """
    data = record.to_dict() if isinstance(record, RunRecord) else jsonable(record)
    for key in ("run_id", "metric", "values"):
        if key not in data:
            raise ValueError(f"record lacks the required field {key!r}")
    text = json.dumps(data, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    return write_text_atomic(Path(folder) / f"{data['run_id']}.json", text)


def read_record(path: str | Path) -> dict[str, Any]:
    """Read a record written by :func:`write_record`."""
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)
