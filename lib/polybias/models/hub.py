"""Where a checkpoint comes from: a local directory or a hub id, resolved to a snapshot and
its commit (offline: in the Hugging Face cache only; online: the hub's commit for the
revision, and only that commit's files), and its config read (:mod:`polybias.models.loading`,
"Source")."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from polybias.models.errors import CheckpointError, NotCachedError, first_line

_HEX40 = re.compile(r"^[0-9a-f]{40}$")


_HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)?$")


def _offline() -> bool:
    return os.environ.get("HF_HUB_OFFLINE", "").strip().lower() in ("1", "true", "yes", "on")


def hub_cache_dir() -> Path:
    """The Hugging Face hub cache, read from the environment at call time."""
    for var in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):
        if os.environ.get(var):
            return Path(os.path.expanduser(os.environ[var]))
    home = os.environ.get("HF_HOME") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "huggingface")
    return Path(os.path.expanduser(home)) / "hub"


def _short_keys(keys, limit: int = 6) -> str:
    """Weight names with layer numbers folded (``layer.*.``), at most ``limit`` shown."""
    folded = sorted({re.sub(r"\.\d+\.", ".*.", k) for k in keys})
    shown = ", ".join(folded[:limit])
    return shown + (f" (+{len(folded) - limit} more)" if len(folded) > limit else "")


def _read_json(path: Path, label: str) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CheckpointError(f"{label}: {path.name} is not valid JSON ({first_line(exc)})") from exc
    return value if isinstance(value, dict) else {}


def resolve_source(source: str | os.PathLike, revision: str | None = None,
                   label: str | None = None) -> tuple[Path, str | None]:
    """Local directory and resolved commit of ``source`` (a directory or a hub id).

    Offline (``HF_HUB_OFFLINE``) a hub id is looked up in the hub cache only; a hub id not
    there is a :class:`NotCachedError` saying how to provide it.
    """
    label = label or str(source)
    text = os.path.expanduser(os.fspath(source))
    path = Path(text)
    if path.exists():
        if not path.is_dir():
            raise CheckpointError(f"{label}: {path} is not a model directory (a folder with "
                                  "config.json, tokenizer files and weights)")
        commit = path.name if path.parent.name == "snapshots" and _HEX40.match(path.name) else None
        if revision and _HEX40.match(revision) and commit and commit != revision:
            raise CheckpointError(f"{label}: the snapshot's commit {commit} is not the pinned "
                                  f"revision {revision}")
        return path, commit
    if not _HUB_ID.match(text) or text.startswith((".", "/", "~")):
        raise CheckpointError(f"{label}: no such model directory {text!r}")
    if _offline():
        return _from_cache(text, revision, label)
    return _from_hub(text, revision, label)


def _from_cache(repo_id: str, revision: str | None, label: str) -> tuple[Path, str]:
    cache = hub_cache_dir()
    repo = cache / ("models--" + repo_id.replace("/", "--"))
    rev = revision or "main"
    how = (f"download it once online (hf download {repo_id}"
           + (f" --revision {revision}" if revision else "")
           + "), point HF_HOME or HF_HUB_CACHE at a cache that holds it, or pass a local directory")
    if _HEX40.match(rev):
        commit = rev
    else:
        ref = repo / "refs" / rev
        if not ref.is_file():
            where = "is not in" if not repo.is_dir() else f"has no revision {rev!r} in"
            raise NotCachedError(f"model {repo_id!r} {where} the offline Hugging Face cache "
                                 f"({cache}); {how}")
        commit = ref.read_text(encoding="utf-8").strip()
    snapshot = repo / "snapshots" / commit
    if not (snapshot / "config.json").is_file():
        raise NotCachedError(f"model {repo_id!r} at commit {commit} is not in the offline Hugging "
                             f"Face cache ({cache}); {how}")
    return snapshot, commit


_META_PATTERNS = ["*.json", "*.txt", "*.model", "*.tiktoken", "*.py"]


def _from_hub(repo_id: str, revision: str | None, label: str) -> tuple[Path, str]:
    """Resolve ``revision`` to a commit online and fetch that commit's config, tokenizer
    and one weights format (safetensors when the repository has them, else ``.bin``)."""
    try:
        from huggingface_hub import HfApi, snapshot_download  # lazy: only a hub source needs it

        info = HfApi().model_info(repo_id, revision=revision)
        files = [s.rfilename for s in (info.siblings or [])]
        if any(f.endswith(".safetensors") and "/" not in f for f in files):
            weights = ["*.safetensors", "*.safetensors.index.json"]
        else:
            weights = ["pytorch_model*.bin", "pytorch_model.bin.index.json"]
        path = snapshot_download(repo_id, revision=info.sha, cache_dir=str(hub_cache_dir()),
                                 allow_patterns=_META_PATTERNS + weights)
    except Exception as exc:  # network, auth, unknown repository or revision
        raise NotCachedError(f"model {repo_id!r}: cannot resolve it on the hub "
                             f"({first_line(exc)}); {_hub_advice(repo_id, revision)}") from exc
    return Path(path), str(info.sha)


def resolve_commit(repo_id: str, revision: str | None = None) -> str:
    """The 40-hex commit a hub id's ``revision`` (``main`` when None) names, nothing
    downloaded: offline (``HF_HUB_OFFLINE``) from the cache's ``refs/`` (and a snapshot that
    is there), online from the hub. Raises :class:`NotCachedError` naming the hub id."""
    if _offline():
        return _from_cache(repo_id, revision, f"model {repo_id!r}")[1]
    try:
        from huggingface_hub import HfApi  # lazy: only a hub source needs it

        return str(HfApi().model_info(repo_id, revision=revision).sha)
    except Exception as exc:  # network, auth, unknown repository or revision
        raise NotCachedError(f"model {repo_id!r}: cannot resolve it on the hub "
                             f"({first_line(exc)}); {_hub_advice(repo_id, revision)}") from exc


def _hub_advice(repo_id: str, revision: str | None = None) -> str:
    """What helps when a hub id cannot be resolved online: the local cache when it holds the
    model at ``revision`` (as an offline load would read it), else the network or a local
    copy (the cache cannot help when it is empty)."""
    cached = hub_cache_dir() / f"models--{repo_id.replace('/', '--')}"
    try:
        _from_cache(repo_id, revision, f"model {repo_id!r}")
    except NotCachedError:
        pass
    else:
        return ("check the id and revision, or set HF_HUB_OFFLINE=1 to use its copy in the "
                f"local cache ({cached})")
    return (f"check the id and revision; it is not in the local cache ({hub_cache_dir()}) either: "
            f"download it once where the hub can be reached (hf download {repo_id}), or give a "
            "model directory")


def read_config(source: str | os.PathLike, revision: str | None = None,
                name: str | None = None) -> dict[str, Any]:
    """``config.json`` of ``source`` as a dict, resolved as :func:`load_checkpoint` does
    (e.g. to read ``architectures`` before choosing a head); no code runs."""
    label = f"model {name or str(source)!r}"
    path, _commit = resolve_source(source, revision, label)
    if not (path / "config.json").is_file():
        raise CheckpointError(f"{label}: {path} has no config.json (not a transformers model "
                              "directory)")
    return _read_json(path / "config.json", label)
