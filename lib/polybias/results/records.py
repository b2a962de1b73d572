"""Records: one JSON file per reported result, deterministic and written atomically.

A record is one result a run reports (a run, one notebook executed with one set of
parameters, writes one or more): the values of one metric on one model, language and test,
with everything needed to tell what was computed and from what: its id, metric, model
(+ revision or checksum, and its text normaliser when it has one), language, test,
parameters and their hash, values, data sha256s and package versions. No timestamps: the
same inputs and seed give byte-identical records. The id is stored in the field
``run_id``, the name records have always had (kept so that records stay byte-identical).
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field, replace
from importlib import metadata
from pathlib import Path
from typing import Any

from polybias.engines.normalising import normaliser_fields
from polybias.files import jsonable, params_hash, write_text_atomic
from polybias.metrics.measure import MeasureResult

_PACKAGES = ("polybias", "numpy", "scipy", "pandas", "gensim", "torch", "transformers")


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9.]+", "-", str(text)).strip("-").lower() or "none"


def record_id(metric: str, model: str, language: str, test: str) -> str:
    """Stable, file-name-safe id of a record (stored as its ``run_id``; the file name).

    >>> record_id("weat", "w2v-gnews", "en", "WEAT 7")
    'weat_m-w2v-gnews_l-en_t-weat-7'
    """
    return f"{_slug(metric)}_m-{_slug(model)}_l-{_slug(language)}_t-{_slug(test)}"


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
    resolved commit, checksum or other revision), ``normaliser`` (its text normaliser as
    its ``to_record()`` gives it: name, implementation, version;
    :class:`polybias.models.loading.Normaliser`) and ``engine`` (how the engines ran it:
    device, weights' dtype, token budget; its ``run_settings()``, None when it has none),
    read from a loaded language model, encoder or static embeddings.

    >>> from types import SimpleNamespace
    >>> model_fields(SimpleNamespace(revision="abc"))
    {'model_revision': 'abc', 'normaliser': None, 'engine': None}
    >>> norm = SimpleNamespace(to_record=lambda: {"name": "n", "implementation": "f", "version": "1"})
    >>> model_fields(SimpleNamespace(revision=None, normaliser=norm))["normaliser"]["name"]
    'n'
    """
    settings = getattr(model, "run_settings", None)
    return {"model_revision": getattr(model, "revision", None),
            "normaliser": normaliser_fields(getattr(model, "normaliser", None)),
            "engine": settings() if callable(settings) else None}


@dataclass
class Record:
    """One reported result: ``values`` holds the numbers; everything else says where they came
    from. A run writes one or more."""

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
    #: how the engines ran the model (device, dtype, batch_tokens), None for static tables
    engine: dict[str, Any] | None = None

    @property
    def record_id(self) -> str:
        """The record's id (:func:`record_id`), written as its ``run_id`` field."""
        return record_id(self.metric, self.model, self.language, self.test)

    @property
    def params_hash(self) -> str:
        return params_hash(self.parameters)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["run_id"] = self.record_id
        out["params_hash"] = self.params_hash
        return jsonable(out)


def measure_group(subset: str, result: MeasureResult, **over: Any) -> dict[str, Any]:
    """One subset of a :func:`measure_record` (its ``values["groups"]``): ``subset`` (what
    the subset is: a bias type, a stereotype, a task and group), the measure when it is
    another than the record's, and :meth:`MeasureResult.record_values`. ``over`` holds the
    fields a subset sets apart from its record (``language``, ``model``).

    >>> from polybias.metrics.measure import MeasureResult
    >>> measure_group("gender", MeasureResult("crows", 60.0, None, 0.2, "binomial-exact", 20))["subset"]
    'gender'
    """
    return {"subset": subset, "measure": result.measure, **result.record_values(), **over}


def measure_record(result: MeasureResult, *, model: str, language: str, test: str,
                   parameters: dict[str, Any] | None = None, subset: str = "",
                   groups: list[dict[str, Any]] | None = None, metric: str | None = None,
                   details: list[dict[str, Any]] | None = None,
                   sets_apart: dict[str, Any] | None = None, **fields: Any) -> Record:
    """The record of one registered measure's result (:func:`polybias.measures.compute`):
    ``metric`` is the measure's registry key, ``parameters`` the options it ran with (and
    ``parameters``, e.g. the data the inputs came from), ``values``
    :meth:`~polybias.metrics.measure.MeasureResult.record_values`. The results table reads
    such a record with no reader of its own (:mod:`polybias.results.table`). ``fields`` are
    the other fields of :class:`Record` (``model_revision``, ``data_sha256``, …).

    >>> from polybias.metrics.measure import MeasureResult
    >>> rec = measure_record(MeasureResult("weat", 1.5, None, 0.01, "permutation-exact", 16, {"seed": 0}),
    ...                      model="m", language="en", test="T", packages={})
    >>> rec.metric, rec.parameters, rec.values["value"], rec.values["interval"]
    ('weat', {'seed': 0}, 1.5, None)

    A result reported overall and per subset (CrowS-Pairs per bias type, EuroGEST's g_s and
    each stereotype's masculine rate) is one record: ``subset`` names the overall value's
    subset (e.g. ``all``) and ``groups`` holds the others (:func:`measure_group`), in the
    order they are reported. ``metric`` is the record's metric when it is one of the
    measure's ``record_labels`` rather than its key (e.g. ``crows-jsd`` for ``jsd-b``), so
    that the record keeps its name. ``details`` are rows the record keeps beside the
    measure's values but the results table does not read (GEST's rate of every stereotype).
    ``sets_apart`` holds the fields the overall value sets apart from its record, as a
    group's do (a comparison of languages: the ``language`` of its first score). A
    ``metric`` that is no label of the result's measure (a study's record of several
    measures, e.g. ``catbias``) keeps the measure in ``values["measure"]``.
    """
    values = result.record_values()
    if metric and metric != result.measure:
        # lazy: the registry is read from the project's data/measures.yaml, which a notebook
        # writing plain Records (a project of its own) need not have
        from polybias.measures import record_measure

        if record_measure(metric) != result.measure:
            values["measure"] = result.measure
    if subset:
        values["subset"] = subset
    if groups:
        values["groups"] = list(groups)
    if details:
        values["details"] = list(details)
    values.update(sets_apart or {})
    return Record(metric=metric or result.measure, model=model, language=language, test=test,
                  parameters={**result.options, **(parameters or {})}, values=values, **fields)


def measure_results_record(entries: list[tuple[str, MeasureResult, dict[str, Any]]], *, model: str,
                           language: str, test: str, metric: str,
                           parameters: dict[str, Any] | None = None,
                           details: list[dict[str, Any]] | None = None, **fields: Any) -> Record:
    """The one :func:`measure_record` of results a study reports together (a table of
    measures, subsets or languages): ``entries`` are ``(subset, result, sets_apart)`` in
    the order reported; the first is the record's value, the others its groups
    (:func:`measure_group`). The results' options stay out: ``parameters`` are the
    study's. ``metric`` names the record (its file name), ``details`` are kept rows the
    results table does not read.

    >>> from polybias.metrics.measure import MeasureResult
    >>> rec = measure_results_record(
    ...     [("S1", MeasureResult("kurita", 0.5, None, 0.01, "permutation-monte-carlo", 8), {}),
    ...      ("S2", MeasureResult("kurita", 0.2, None, 0.3, "permutation-monte-carlo", 8), {})],
    ...     model="m", language="en", test="T", metric="logprob-context", packages={})
    >>> rec.values["subset"], [g["subset"] for g in rec.values["groups"]]
    ('S1', ['S2'])
    """
    if not entries:
        raise ValueError(f"a {metric!r} record of {model} on {test} needs at least one result")
    (subset, first, over), rest = entries[0], entries[1:]
    return measure_record(replace(first, options={}), model=model, language=language, test=test,
                          parameters=parameters, subset=subset, sets_apart=over, metric=metric,
                          groups=[measure_group(s, r, **o) for s, r, o in rest], details=details,
                          **fields)


def write_record(record: Record | dict[str, Any], folder: str | Path) -> Path:
    """Write a record as ``<folder>/<record id>.json`` atomically and return the path.

    The record is serialised completely before anything touches the disk, so an
    unserialisable value raises without leaving a file.
    """
    data = record.to_dict() if isinstance(record, Record) else jsonable(record)
    for key in ("run_id", "metric", "values"):
        if key not in data:
            raise ValueError(f"record lacks the required field {key!r}")
    text = json.dumps(data, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    return write_text_atomic(Path(folder) / f"{data['run_id']}.json", text)


def read_record(path: str | Path) -> dict[str, Any]:
    """Read a record written by :func:`write_record`."""
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)
