"""Files and hashes: canonical JSON and its hash, a file's sha256, and atomic writes.

The ground floor of the package (it imports no other module of it): sources, word lists,
models, planted corpora, run records, tables and the runner all write and fingerprint
their files through these helpers, so that the same inputs give byte-identical files and
a reader never sees a half-written one.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import secrets
from pathlib import Path
from typing import Any

import numpy as np


def jsonable(value: Any) -> Any:
    """Convert numpy scalars/arrays, paths, tuples and non-finite floats to plain JSON.

    >>> jsonable({"a": np.float64(1.5), "b": (np.int64(2), float("nan"), float("-inf"))})
    {'a': 1.5, 'b': [2, None, '-inf']}
    """
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return jsonable(value.tolist())
    if isinstance(value, np.generic):
        return jsonable(value.item())
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
    return json.dumps(jsonable(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


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
