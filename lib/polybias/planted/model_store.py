"""The planted-model store: planted models trained once, kept in the repository, verified by
sha256.

Training a model is deterministic on one machine, but not across machines: another CPU
runs other matrix-multiply kernels (MKL, oneDNN, OpenBLAS pick them at run time), the
rounding differs in the last bit, and a few hundred optimiser steps turn that into
different weights and, downstream, different printed tables. The models whose outputs
the executed notebooks check are therefore *pinned*: their files live under
``data/planted/<key>/`` (safetensors weights, tokenizer, config, the training spec) and
``data/planted/manifest.json`` lists the sha256 of every file. A request for a model is
answered, in this order:

1. from the pinned store, when its key (a hash of every training input, see
   :func:`polybias.planted.synthetic.planted_model_spec`) is in the manifest; every file is
   checked against its sha256 first and a mismatch is an error;
2. otherwise according to ``POLYBIAS_PLANTED`` (:func:`mode`):

   ``auto`` (default)
       train on this machine and keep it in the cache (``.cache/trained``);
   ``pinned``
       raise: only pinned models may be used (``make test`` and ``make reproduce``
       run the checked notebooks this way);
   ``pin``
       train, then add it to the pinned store (how new models are pinned).

``make planted`` retrains every pinned model from its stored spec (:func:`retrain_all`)
and rewrites the store; on the machine that produced the store the files come out
byte-identical, on another CPU they may differ in the last bits of the weights while the
planted behaviour stays the same (``tests/planted/test_model_store.py`` checks that on
whatever CPU runs it).

A model in the store is *pinned* only in this sense (its own files kept and checked), as
the ``POLYBIAS_PLANTED`` modes say; the revision pins of a sweep (hub ids pinned to commits,
``polybias pin``) are :mod:`polybias.runner.pins`, an unrelated thing.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from polybias import paths
from polybias.files import sha256_file, temp_dir, write_text_atomic

MODES = ("auto", "pinned", "pin")
MANIFEST = "manifest.json"
SPEC_FILE = "polybias_planted.json"


class ModelStoreError(RuntimeError):
    """A pinned model is corrupt, or a model that must be pinned is not."""


def mode() -> str:
    """The pinning mode from ``POLYBIAS_PLANTED`` (``auto`` when unset); others raise."""
    value = os.environ.get("POLYBIAS_PLANTED", "auto") or "auto"
    if value not in MODES:
        raise ModelStoreError(f"POLYBIAS_PLANTED must be one of {', '.join(MODES)}, got {value!r}")
    return value


def store_dir() -> Path:
    """The pinned store, ``data/planted`` under the project root."""
    return paths.data_dir() / "planted"


def _restore(folder: Path) -> str:
    """The fix for a pinned model's damaged file: the committed copy, not a retraining."""
    return (f"restore the committed files with `git checkout -- {folder}` (`make planted` would "
            "retrain every pinned model instead, and on another CPU give other weights)")


def read_manifest(store: Path | None = None) -> dict[str, Any]:
    """``{key: {"spec": ..., "files": {name: sha256}}}`` of the pinned store ({} if none)."""
    path = (store or store_dir()) / MANIFEST
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ModelStoreError(f"{path}: malformed JSON: {exc}") from exc
    if not isinstance(data, dict):
        raise ModelStoreError(f"{path}: must hold a mapping of model keys")
    return data


def _write_manifest(manifest: dict[str, Any], store: Path) -> None:
    text = json.dumps(manifest, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    write_text_atomic(store / MANIFEST, text)


def lookup(key: str, store: Path | None = None) -> Path | None:
    """The verified folder of pinned model ``key``, or None when it is not pinned.

    Every file the manifest lists is checked against its sha256; a missing file, a
    mismatch or an unlisted extra file raises :class:`ModelStoreError` naming it.
    """
    store = store or store_dir()
    entry = read_manifest(store).get(key)
    if entry is None:
        return None
    folder = store / key
    listed = entry.get("files") or {}
    if not listed:
        raise ModelStoreError(f"{store / MANIFEST}: pinned model {key} lists no files")
    for name, sha in listed.items():
        path = folder / name
        if not path.is_file():
            raise ModelStoreError(f"pinned model {key}: file {path} is missing; {_restore(folder)}")
        if sha256_file(path) != sha:
            raise ModelStoreError(f"pinned model {key}: {path} does not match its sha256 in "
                                  f"{store / MANIFEST} (corrupt or edited); {_restore(folder)}")
    extra = sorted(p.name for p in folder.iterdir() if p.name not in listed)
    if extra:
        raise ModelStoreError(f"pinned model {key}: files not in the manifest: {', '.join(extra)}")
    return folder


def add(key: str, folder: Path, spec: dict[str, Any], store: Path | None = None) -> Path:
    """Copy a trained model's ``folder`` into the pinned store as ``key`` and list its
    files with their sha256 in the manifest. The copy is made under a temporary name and
    renamed, then the manifest is rewritten atomically; an existing entry is replaced."""
    store = store or store_dir()
    store.mkdir(parents=True, exist_ok=True)
    tmp = temp_dir(store, prefix=f".{key}.")
    try:
        for path in sorted(folder.iterdir()):
            if path.is_file():
                shutil.copyfile(path, tmp / path.name)
        files = {p.name: sha256_file(p) for p in sorted(tmp.iterdir())}
        target = store / key
        if target.exists():
            shutil.rmtree(target)
        os.rename(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    manifest = read_manifest(store)
    manifest[key] = {"spec": spec, "files": files}
    _write_manifest(manifest, store)
    return target


def build_folder(folder: Path, build: Callable[[Path], None], marker: str = SPEC_FILE) -> Path:
    """``folder``, built once: unless it already holds ``marker``, ``build`` writes every
    file into a fresh temporary folder beside it, which must then hold ``marker`` and is
    renamed to ``folder``. A complete folder renamed there meanwhile by a concurrent
    writer is kept; on any error the temporary folder is removed, so no half-built
    folder is ever seen under the name."""
    if (folder / marker).is_file():
        return folder
    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_dir(folder.parent, prefix=f".{folder.name}.")
    try:
        build(tmp)
        if not (tmp / marker).is_file():
            raise ModelStoreError(f"building {folder.name} wrote no {marker}")
        try:
            os.rename(tmp, folder)
        except OSError:
            if not (folder / marker).is_file():  # not a concurrent writer's folder
                raise
            shutil.rmtree(tmp, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return folder


def resolve(key: str, spec: dict[str, Any], train: Callable[[Path], None]) -> Path:
    """The folder holding model ``key``: pinned, cached or trained by ``train(folder)``.

    ``train`` writes every file of the model into the (empty) folder it is given. Trained
    models go to ``cache_dir()/trained/<key>`` (written under a temporary name, renamed
    when complete) and, in ``pin`` mode, into the pinned store too.
    """
    pinned = lookup(key)
    if pinned is not None:
        return pinned
    current = mode()
    if current == "pinned":
        raise ModelStoreError(
            f"planted model {key} is not pinned in {store_dir()} and POLYBIAS_PLANTED=pinned "
            "forbids training it here (its weights would depend on this CPU); pin it with "
            "POLYBIAS_PLANTED=pin, or unset POLYBIAS_PLANTED to train it locally")
    folder = build_folder(paths.cache_dir() / "trained" / key, train)
    if current == "pin":
        return add(key, folder, spec)
    return folder


def retrain_all(trainers: dict[str, Callable[[dict[str, Any], Path], None]],
                store: Path | None = None, keys: list[str] | None = None,
                progress: Callable[[str], None] | None = None) -> dict[str, bool]:
    """Retrain pinned models from their stored specs and rewrite the store.

    ``trainers[spec["kind"]](spec, folder)`` trains one model into ``folder``. Returns
    ``{key: unchanged}``: whether every file came out byte-identical to the pinned one.
    """
    store = store or store_dir()
    manifest = read_manifest(store)
    chosen = sorted(manifest) if keys is None else keys
    unknown = [k for k in chosen if k not in manifest]
    if unknown:
        raise ModelStoreError(f"not pinned: {', '.join(unknown)}")
    outcome = {}
    for key in chosen:
        entry = manifest[key]
        if progress:
            progress(key)
        with tempfile.TemporaryDirectory(prefix=f".{key}.", dir=store) as tmp:
            trainers[entry["spec"]["kind"]](entry["spec"], Path(tmp))
            files = {p.name: sha256_file(p) for p in sorted(Path(tmp).iterdir())}
            outcome[key] = files == entry["files"]
            add(key, Path(tmp), entry["spec"], store)
    return outcome
