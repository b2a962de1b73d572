"""Run records: one JSON file per run, deterministic and written atomically.

A record holds everything needed to tell what was computed and from what:
run id, metric, model (+ revision or checksum, and its text normaliser when it has
one), language, test, parameters and their hash, values, data sha256s and package
versions. No timestamps: the same
inputs and seed give byte-identical records.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import secrets
from dataclasses import asdict, dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

_PACKAGES = ("polybias", "numpy", "scipy", "pandas", "gensim", "torch", "transformers")


def _jsonable(value: Any) -> Any:
    """Convert numpy scalars/arrays, paths, tuples and non-finite floats to plain JSON."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return _jsonable(value.tolist())
    if isinstance(value, np.generic):
        return _jsonable(value.item())
    if isinstance(value, float) and not math.isfinite(value):
        return None if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, Path):
        return value.as_posix()
    return value


def canonical_json(value: Any) -> str:
    """JSON with sorted keys and fixed separators, used for hashing and writing.

    >>> canonical_json({"b": 1, "a": [1.5, None]})
    '{"a":[1.5,null],"b":1}'
    """
    return json.dumps(_jsonable(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def params_hash(params: dict[str, Any]) -> str:
    """First 16 hex digits of the sha256 of the canonical JSON of ``params``.

    >>> params_hash({"seed": 0, "ddof": 1}) == params_hash({"ddof": 1, "seed": 0})
    True
    """
    return hashlib.sha256(canonical_json(params).encode()).hexdigest()[:16]


def sha256_file(path: str | Path, chunk: int = 1 << 20) -> str:
    """sha256 hex digest of a file, read in chunks."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            digest.update(block)
    return digest.hexdigest()


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
#: labels are mapped in :data:`polybias.studies.validity.METRIC_MEASURES`.
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


def normaliser_fields(normaliser: Any) -> dict[str, Any] | None:
    """What a run record says about a text normaliser (None when there is none): its
    ``to_record()`` when it has one, else the function's name and qualified name.

    >>> normaliser_fields(None) is None
    True
    >>> import unicodedata
    >>> normaliser_fields(unicodedata.normalize)["implementation"]
    'unicodedata.normalize'
    """
    if normaliser is None:
        return None
    if callable(getattr(normaliser, "to_record", None)):
        return normaliser.to_record()
    return {"name": getattr(normaliser, "__name__", type(normaliser).__name__),
            "implementation": f"{getattr(normaliser, '__module__', '?')}."
                              f"{getattr(normaliser, '__qualname__', type(normaliser).__name__)}",
            "version": None}


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
    #: how the engines ran the model (device, dtype, batch_tokens), None for static tables
    engine: dict[str, Any] | None = None

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
        return _jsonable(out)


def _temp_name(folder: Path, prefix: str, suffix: str) -> Path:
    return folder / f"{prefix}{secrets.token_hex(6)}{suffix}"


def temp_file(folder: str | Path, prefix: str, suffix: str = ".tmp") -> tuple[int, Path]:
    """Create a new, empty file with a random name in ``folder``, for a write and a rename.

    Unlike :func:`tempfile.mkstemp` (mode 0600, whatever the umask), the file gets the
    permissions the user's umask gives (0644 under umask 022), so that once renamed into
    place it can be read as any file the user writes, e.g. by colleagues on a shared
    cluster filesystem.

    Returns
    -------
    fd : int
        A descriptor open for writing (the caller closes it).
    path : Path
    """
    folder = Path(folder)
    for _ in range(100):
        path = _temp_name(folder, prefix, suffix)
        try:
            return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0),
                           0o666), path
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name {prefix}*{suffix} in {folder}")


def temp_dir(folder: str | Path, prefix: str) -> Path:
    """Create a new folder with a random name in ``folder``, for a build and a rename, with
    the permissions the user's umask gives (:func:`tempfile.mkdtemp` gives 0700).

    >>> import stat, tempfile
    >>> old = os.umask(0o022)
    >>> made = temp_dir(tempfile.mkdtemp(), ".x.")
    >>> _ = os.umask(old)
    >>> oct(stat.S_IMODE(made.stat().st_mode))
    '0o755'
    """
    folder = Path(folder)
    for _ in range(100):
        path = _temp_name(folder, prefix, "")
        try:
            path.mkdir(0o777)
            return path
        except FileExistsError:
            continue
    raise FileExistsError(f"no free temporary name {prefix}* in {folder}")


def write_text_atomic(path: str | Path, text: str) -> Path:
    """Write ``text`` to ``path`` through a temporary file in the same folder and a rename.

    A reader never sees a half-written file, and a failure leaves no file behind. The
    file gets the permissions the user's umask gives (:func:`temp_file`).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = temp_file(path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


def write_record(record: RunRecord | dict[str, Any], folder: str | Path) -> Path:
    """Write a record as ``<folder>/<run_id>.json`` atomically and return the path.

    The record is serialised completely before anything touches the disk, so an
    unserialisable value raises without leaving a file.
    """
    data = record.to_dict() if isinstance(record, RunRecord) else _jsonable(record)
    for key in ("run_id", "metric", "values"):
        if key not in data:
            raise ValueError(f"record lacks the required field {key!r}")
    text = json.dumps(data, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    return write_text_atomic(Path(folder) / f"{data['run_id']}.json", text)


def read_record(path: str | Path) -> dict[str, Any]:
    """Read a record written by :func:`write_record`."""
    with open(path, encoding="utf-8") as fh:
        return json.load(fh)
