"""Loading a hub or local checkpoint correctly, or refusing with a one-line reason.

:func:`load_checkpoint` is the one entry point both :mod:`polybias.engines.scoring` (masked and
causal LMs) and :mod:`polybias.engines.embeddings` (encoders) use. It returns the model, its fast
tokenizer and a :class:`LoadInfo` (resolved commit, weights format, device, dtype and the
loading report). Every refusal is a :class:`LoadError` (one subclass per cause) whose
message names the model and the cause on one line.

Rules
-----
Source
    A local directory, or a hub id. With ``HF_HUB_OFFLINE`` set, a hub id is resolved in
    the Hugging Face cache only (``HF_HUB_CACHE``, else ``HF_HOME/hub``, else
    ``~/.cache/huggingface/hub``): ``models--org--name/snapshots/<commit>/`` found through
    ``refs/<revision>`` (``main`` by default) or a 40-hex ``revision``. The resolved commit
    is the snapshot folder's name; a local directory that is itself such a snapshot also
    has one, any other local directory has none (``LoadInfo.commit`` is None). Online,
    the hub's commit for ``revision`` is resolved first and only that commit's files are
    fetched (configs, tokenizer files and one weights format).

Weights
    ``model.safetensors`` (or its shard index) is preferred; otherwise ``pytorch_model.bin``
    (or its index) loads by default. transformers (5.x) reads every ``.bin`` with
    ``torch.load(weights_only=True)``: tensors, containers and a few allowlisted types only,
    no code runs (its ``weights_only=False`` option does not reach the ``.bin`` reader).
    A ``.bin`` pickle holding other Python objects is refused (:class:`PickleError`);
    ``allow_pickle=True`` makes this module unpickle such a file itself with full pickle
    (which can run code from the file: trusted sources only) and hand its tensors to
    transformers, non-tensor entries dropped and listed in the report. A directory without
    PyTorch weights (only TensorFlow/Flax/GGUF files) is refused.

Weights the measure uses (:func:`check_loading_report`)
    Loads use ``output_loading_info=True``. A weight whose shape differs from the model's
    is always an error. A model weight *missing* from the checkpoint (which transformers
    would initialise at random) is an error unless it is a buffer (``position_ids``, rotary
    ``inv_freq``: recomputed, not learned) or, for ``head="encoder"``, part of the
    ``pooler`` (the extraction reads hidden states, never the pooler). A checkpoint weight
    the model does not have (*unexpected*, silently dropped by transformers) is an error
    unless it is such a buffer (or GPT-2's attention-mask ``attn.bias``), or belongs to a
    part of the network the measure does not run: the ``pooler``, a next-sentence
    (``seq_relationship``) or sentence-order (``sop_classifier``) head, or, for
    ``head="encoder"``, any task head on top of the base model (``cls.*``, ``lm_head.*``,
    ``generator_*``, ``discriminator_predictions.*``…). So an ELECTRA discriminator read as
    an MLM (generator head missing), a MosaicBERT-style checkpoint read as BERT (query and
    intermediate weights missing, fused ``Wqkv`` unexpected) and an MPT checkpoint with
    learned positions read by the native ALiBi class (``transformer.wpe.weight``
    unexpected) are refused, naming the weights.

Repository code
    Refused by default (:class:`RemoteCodeError`), also when only the tokenizer needs it:
    an ``auto_map`` in ``config.json`` for the class the head needs or for the tokenizer,
    an ``auto_map`` in ``tokenizer_config.json``, or a ``model_type`` transformers does not
    know. ``trust_remote_code=True`` is accepted only with a 40-hex commit ``revision``
    that the resolved snapshot matches (so the code that runs is the code reviewed).

Device and dtype
    Decided once, here: :func:`resolve_device` is the one place ``device="auto"`` is
    read (CUDA when available, else CPU; the CPU for embedded and planted models);
    ``"cuda"`` without CUDA is an error. :func:`load_checkpoint` moves the model to its
    device once; the engines never move a model, they check where it is.
    ``dtype="auto"``: float32 on CPU; on CUDA bfloat16 for the families in
    :data:`BF16_FAMILIES` (causal LMs trained in bfloat16) or a checkpoint stored in
    bfloat16, when the GPU supports it, else float32 (masked LMs and encoders stay in
    float32: their bias scores are small differences of log-probabilities); a checkpoint
    stored in float64 (the planted analytic models, :mod:`polybias.planted.analytic`)
    stays in float64 on every device. float16 is
    refused on CPU (:func:`polybias.engines.common.check_half`, the one rule, which the
    engines apply to the weights they are given). Log-softmax is taken in float32 by the scorers, whatever the weights'
    dtype; this module does not compute any.

Memory
    Before loading, the weights' size in the target dtype is estimated (parameter count
    from the safetensors headers, else the ``.bin`` file sizes scaled from the stored
    dtype) and :data:`MEMORY_OVERHEAD` times it must fit in ``max_memory_fraction`` of the
    available memory (RAM: ``psutil``, else ``/proc/meminfo``; CUDA: free device memory),
    or in ``memory_limit`` bytes when given; otherwise :class:`MemoryBudgetError`.

Text normalisers
    A registry entry may name a normaliser (``normaliser: banglabert``, this project's
    implementation of the csebuetnlp normaliser, :mod:`polybias.models.normalisers`; or
    ``banglabert-upstream``, the csebuetnlp package itself, which must then be installed);
    :func:`get_normaliser` returns it as a :class:`Normaliser` or raises
    :class:`NormaliserError` saying what to install. Run records name it
    (:func:`normaliser_record`: name, implementation, version).
"""

from __future__ import annotations

import inspect
import json
import os
import pickle
import re
import struct
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from polybias.engines.common import auto_batch_tokens, check_half
from polybias.engines.normalising import normaliser_fields
from polybias.models import normalisers

HEADS = ("mlm", "causal", "encoder")

#: transformers' Auto class per head.
AUTO_CLASSES = {"mlm": "AutoModelForMaskedLM", "causal": "AutoModelForCausalLM",
                "encoder": "AutoModel"}

#: ``model_type``s that ``dtype="auto"`` runs in bfloat16 on CUDA: decoder families trained
#: and published in bfloat16. Others (BERT, RoBERTa, XLM-R, ALBERT, ELECTRA, GPT-2…) stay in
#: float32 unless the checkpoint itself is stored in bfloat16.
BF16_FAMILIES = frozenset({
    "llama", "mistral", "mixtral", "qwen2", "qwen2_moe", "qwen3", "qwen3_moe", "gemma",
    "gemma2", "gemma3", "gemma3_text", "mpt", "falcon", "gpt_neox", "olmo", "olmo2", "phi3",
    "stablelm", "starcoder2", "cohere",
})

#: Memory needed per byte of weights (activations, buffers, tokenizer, allocator slack).
MEMORY_OVERHEAD = 1.2

_HEX40 = re.compile(r"^[0-9a-f]{40}$")
_HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)?$")
_DTYPE_BYTES = {"float32": 4, "float16": 2, "bfloat16": 2, "float64": 8,
                "F32": 4, "F16": 2, "BF16": 2, "F64": 8, "I64": 8, "I32": 4, "I16": 2, "I8": 1,
                "U8": 1, "BOOL": 1, "F8_E4M3": 1, "F8_E5M2": 1}


# ---------------------------------------------------------------- errors

class LoadError(RuntimeError):
    """A checkpoint that cannot be loaded correctly; the message names model and cause."""


class NotCachedError(LoadError):
    """A hub id that is not in the offline cache (or cannot be resolved online)."""


class CheckpointError(LoadError):
    """Not a model directory, no PyTorch weights, or a config/tokenizer that cannot be read."""


class RemoteCodeError(LoadError):
    """Repository code is needed but not allowed, or allowed without a pinned commit."""


class PickleError(LoadError):
    """A ``.bin`` pickle with content beyond tensors, without ``allow_pickle``."""


class WeightsError(LoadError):
    """Weights the measure uses are not in the checkpoint, or checkpoint weights are dropped."""


class DeviceError(LoadError):
    """An unknown or unavailable device, or a dtype the device does not support."""


class MemoryBudgetError(LoadError):
    """The model does not fit in the memory available."""


class NormaliserError(LoadError):
    """A text normaliser that is unknown, or required and not installed."""


# ---------------------------------------------------------------- result

@dataclass(frozen=True)
class LoadInfo:
    """What was loaded: ``commit`` is the resolved hub commit (None for a plain local
    directory); ``revision`` the one asked for; ``report`` the checked loading report
    (``missing``, ``unexpected``, ``mismatched`` weights that were tolerated as harmless,
    ``dropped_non_tensors`` for ``allow_pickle`` loads)."""

    source: str
    path: str
    head: str
    architecture: str
    commit: str | None
    revision: str | None
    weights_format: str
    device: str
    dtype: str
    trust_remote_code: bool
    estimated_bytes: int
    report: dict[str, list[str]] = field(default_factory=dict)

    def to_record(self) -> dict[str, Any]:
        """Plain values for a run record."""
        return {"model_source": self.source, "model_revision": self.commit or self.revision,
                "model_commit": self.commit, "weights_format": self.weights_format,
                "architecture": self.architecture, "device": self.device, "dtype": self.dtype,
                "trust_remote_code": self.trust_remote_code}


# ---------------------------------------------------------------- small helpers

def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    line = text.splitlines()[0].strip()
    return re.sub(r"\x1b\[[0-9;]*m", "", line)


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
        raise CheckpointError(f"{label}: {path.name} is not valid JSON ({_first_line(exc)})") from exc
    return value if isinstance(value, dict) else {}


# ---------------------------------------------------------------- source

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
                             f"({_first_line(exc)}); {_hub_advice(repo_id)}") from exc
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
                             f"({_first_line(exc)}); {_hub_advice(repo_id)}") from exc


def _hub_advice(repo_id: str) -> str:
    """What helps when a hub id cannot be resolved online: the local cache when it holds the
    model, else the network or a local copy (the cache cannot help when it is empty)."""
    cached = hub_cache_dir() / f"models--{repo_id.replace('/', '--')}"
    if (cached / "snapshots").is_dir() and any((cached / "snapshots").iterdir()):
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


# ---------------------------------------------------------------- checks before loading

def weights_files(path: Path, label: str) -> tuple[str, list[Path]]:
    """Weights format (``safetensors`` or ``bin``) and files of a model directory."""
    for fmt, single, index in (("safetensors", "model.safetensors", "model.safetensors.index.json"),
                               ("bin", "pytorch_model.bin", "pytorch_model.bin.index.json")):
        if (path / single).is_file():
            return fmt, [path / single]
        if (path / index).is_file():
            shards = sorted(set(_read_json(path / index, label).get("weight_map", {}).values()))
            missing = [s for s in shards if not (path / s).is_file()]
            if not shards or missing:
                raise CheckpointError(f"{label}: {index} names shard(s) that are not there: "
                                      f"{', '.join(missing) or '(none listed)'}")
            return fmt, [path / s for s in shards]
    others = sorted(p.name for p in path.iterdir()
                    if p.suffix in (".h5", ".msgpack", ".gguf", ".ckpt", ".pt", ".pth"))
    found = f" (found only {', '.join(others)})" if others else ""
    raise CheckpointError(f"{label}: no PyTorch weights (model.safetensors or pytorch_model.bin) "
                          f"in {path}{found}")


def remote_code_needs(path: Path, head: str, label: str) -> list[str]:
    """Why loading ``path`` with ``head`` needs repository code (empty: it does not)."""
    from transformers import CONFIG_MAPPING  # lazy: only loading needs it

    config = _read_json(path / "config.json", label)
    tok_config = _read_json(path / "tokenizer_config.json", label)
    reasons = []
    auto_map = config.get("auto_map") or {}
    for key in ("AutoConfig", AUTO_CLASSES[head], "AutoTokenizer"):
        if key in auto_map:
            target = auto_map[key]
            target = next((t for t in target if t), None) if isinstance(target, list) else target
            reasons.append(f"config.json auto_map {key} -> {target}")
    tok_map = tok_config.get("auto_map") or {}
    if isinstance(tok_map, list | tuple):
        tok_map = {"AutoTokenizer": tok_map}
    if "AutoTokenizer" in tok_map and not any("AutoTokenizer" in r for r in reasons):
        target = tok_map["AutoTokenizer"]
        target = next((t for t in target if t), None) if isinstance(target, list) else target
        reasons.append(f"tokenizer_config.json auto_map AutoTokenizer -> {target}")
    model_type = config.get("model_type")
    if model_type and model_type not in CONFIG_MAPPING:
        reasons.append(f"model_type {model_type!r} is not in transformers")
    return reasons


def _check_remote_code(path: Path, head: str, commit: str | None, revision: str | None,
                       trust_remote_code: bool, label: str) -> None:
    reasons = remote_code_needs(path, head, label)
    if reasons and not trust_remote_code:
        raise RemoteCodeError(
            f"{label}: needs code from its repository ({'; '.join(reasons)}); repository code is "
            "refused by default: review it, then opt in with trust_remote_code=True and the "
            "reviewed 40-hex commit as revision")
    if trust_remote_code:
        if not revision or not _HEX40.match(revision):
            raise RemoteCodeError(f"{label}: trust_remote_code needs a pinned 40-hex commit "
                                  f"revision, got {revision!r}")
        if commit != revision:
            raise RemoteCodeError(
                f"{label}: trust_remote_code needs the snapshot of commit {revision}, but the "
                + ("directory is not a hub snapshot (load it by hub id from the cache)"
                   if commit is None else f"source resolves to commit {commit}"))


def resolve_device(device: str | None, label: str = "model", embedded: bool = False) -> str:
    """The device a model runs on: the one place ``auto`` is interpreted.

    ``auto`` (or None, or empty) → ``cuda`` when available, else ``cpu``; for an
    ``embedded`` model (planted, analytic or package-shipped) ``cpu``, so its checked
    outputs are the same on every machine. An explicit device is honoured; CUDA asked for
    but absent is an error.

    >>> resolve_device("auto", embedded=True), resolve_device("cpu")
    ('cpu', 'cpu')
    """
    import torch  # lazy: the registry and its checks import without it

    device = "auto" if device in (None, "") else str(device)
    if device == "auto":
        return "cuda" if torch.cuda.is_available() and not embedded else "cpu"
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError) as exc:
        raise DeviceError(f"{label}: unknown device {device!r}") from exc
    if dev.type == "cuda":
        if not torch.cuda.is_available():
            raise DeviceError(f"{label}: device {device!r} asked for, but CUDA is not available "
                              "here (use device='auto' or 'cpu')")
        if dev.index is not None and dev.index >= torch.cuda.device_count():
            raise DeviceError(f"{label}: device {device!r} asked for, but only "
                              f"{torch.cuda.device_count()} CUDA device(s) are visible")
    return device


def resolve_dtype(dtype, device: str, model_type: str | None = None,
                  stored: str | None = None, label: str = "model"):
    """The torch dtype to load in (see the module's rules); float16 off CUDA is an error."""
    import torch  # lazy: the registry and its checks import without it

    cuda = torch.device(device).type == "cuda"
    if dtype in (None, "", "auto"):
        if stored == "float64":  # the planted analytic models: exact in float64
            return torch.float64
        if cuda and (model_type in BF16_FAMILIES or stored == "bfloat16") \
                and torch.cuda.is_bf16_supported():
            return torch.bfloat16
        return torch.float32
    if isinstance(dtype, str):
        value = getattr(torch, dtype, None)
        if not isinstance(value, torch.dtype) or not value.is_floating_point:
            raise DeviceError(f"{label}: unknown dtype {dtype!r} (use auto, float32, bfloat16 or "
                              "float16)")
        dtype = value
    check_half(dtype, device, label, DeviceError)
    return dtype


def _safetensors_numel(file: Path) -> int | None:
    """Number of parameters in a safetensors file, from its header (no tensor is read)."""
    try:
        with open(file, "rb") as fh:
            (size,) = struct.unpack("<Q", fh.read(8))
            header = json.loads(fh.read(size))
    except (OSError, ValueError, struct.error):
        return None
    total = 0
    for key, meta in header.items():
        if key == "__metadata__":
            continue
        n = 1
        for d in meta.get("shape", []):
            n *= int(d)
        total += n
    return total


def estimate_weight_bytes(files: list[Path], fmt: str, target_bytes: int,
                          stored_dtype: str | None) -> int:
    """Bytes the weights take once loaded in a dtype of ``target_bytes`` per parameter."""
    if fmt == "safetensors":
        counts = [_safetensors_numel(f) for f in files]
        if all(c is not None for c in counts):
            return int(sum(counts) * target_bytes)
    stored = _DTYPE_BYTES.get(stored_dtype or "float32", 4)
    return int(sum(f.stat().st_size for f in files) * target_bytes / stored)


def available_memory(device: str) -> int:
    """Free memory in bytes: free CUDA memory, else available RAM (psutil, /proc/meminfo)."""
    import torch  # lazy: the registry and its checks import without it

    if torch.device(device).type == "cuda":
        free, _total = torch.cuda.mem_get_info(torch.device(device))
        return int(free)
    try:
        import psutil  # lazy: optional; /proc/meminfo otherwise

        return int(psutil.virtual_memory().available)
    except ImportError:
        pass
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 1 << 62  # unknown: do not refuse


def _gib(n: float) -> str:
    return f"{n / 2**30:.2f} GiB"


def check_memory(estimate: int, device: str, label: str, max_memory_fraction: float = 0.8,
                 memory_limit: int | None = None) -> None:
    """Refuse (:class:`MemoryBudgetError`) when ``MEMORY_OVERHEAD × estimate`` bytes do not
    fit in ``memory_limit`` (or ``max_memory_fraction`` of the available memory)."""
    need = int(estimate * MEMORY_OVERHEAD)
    if memory_limit is not None:
        budget, where = int(memory_limit), f"the memory limit of {_gib(memory_limit)}"
    else:
        free = available_memory(device)
        budget = int(free * max_memory_fraction)
        kind = "free GPU memory" if device.startswith("cuda") else "available RAM"
        where = f"{max_memory_fraction:.0%} of the {_gib(free)} of {kind}"
    if need > budget:
        hint = ("use a GPU (device='cuda', dtype bfloat16) or a machine with more memory"
                if not device.startswith("cuda") else "use a GPU with more memory or bfloat16")
        raise MemoryBudgetError(f"{label}: needs about {_gib(need)} on {device} (weights "
                                f"{_gib(estimate)} × {MEMORY_OVERHEAD}), more than {where}; {hint}")


# ---------------------------------------------------------------- loading report

_BUFFER = re.compile(r"(^|\.)(position_ids|inv_freq|masked_bias)$|(^|\.)attn\.bias$")
_UNUSED_HEADS = re.compile(r"(^|\.)(pooler|seq_relationship|sop_classifier)\.")


def batch_tokens_for(model, device: str, head: str, batch_tokens: int | None = None, *,
                     free_bytes: int | None = None, fraction: float = 0.5) -> int:
    """The engines' token budget (padded tokens per forward pass) for a loaded model.

    ``batch_tokens`` given (a positive integer) is used as it is; None or 0 means *auto*
    (:func:`polybias.engines.common.auto_batch_tokens`, also what the engines' wrappers
    pick): 8192 on the CPU (so CPU results do not depend on the machine's memory), and on
    CUDA ``fraction`` of the free device memory (``free_bytes`` when given) divided by an
    estimate of the memory one token takes in a forward pass; at least 1024 and at most
    262144.

    >>> from polybias.planted.tiny_models import build_tiny_model
    >>> model, _ = build_tiny_model("gpt2")
    >>> batch_tokens_for(model, "cpu", "causal"), batch_tokens_for(model, "cpu", "causal", 512)
    (8192, 512)
    >>> batch_tokens_for(model, "cuda", "causal", free_bytes=2**30)
    35840
    """
    if batch_tokens not in (None, 0):
        if not isinstance(batch_tokens, int) or isinstance(batch_tokens, bool) or batch_tokens < 1:
            raise LoadError(f"batch_tokens must be a positive integer or 0 (auto), got "
                            f"{batch_tokens!r}")
        return int(batch_tokens)
    return auto_batch_tokens(model, device, head, free_bytes, fraction)


def check_loading_report(info: dict[str, Any], head: str, model, label: str,
                         architectures: list[str] | None = None) -> dict[str, list[str]]:
    """Raise :class:`WeightsError` when a weight the measure uses was not loaded from the
    checkpoint, or a checkpoint weight was dropped (rules in the module docstring).

    ``info`` is transformers' ``output_loading_info`` dict. Returns the tolerated keys.
    """
    buffers = {name for name, _ in model.named_buffers()}
    base = getattr(model, "base_model", model)
    base_parts = {name for name, _ in base.named_children()}
    missing = set(info.get("missing_keys") or ())
    unexpected = set(info.get("unexpected_keys") or ())
    mismatched = list(info.get("mismatched_keys") or ())

    def harmless_missing(key: str) -> bool:
        return key in buffers or bool(_BUFFER.search(key)) or (
            head == "encoder" and (key.startswith("pooler.") or ".pooler." in key))

    def harmless_unexpected(key: str) -> bool:
        if _BUFFER.search(key) or _UNUSED_HEADS.search(key):
            return True
        return head == "encoder" and key.split(".")[0] not in base_parts

    bad_missing = sorted(k for k in missing if not harmless_missing(k))
    bad_unexpected = sorted(k for k in unexpected if not harmless_unexpected(k))
    problems = []
    if mismatched:
        shapes = [f"{k[0]} {tuple(k[1])} vs {tuple(k[2])}" if isinstance(k, tuple) else str(k)
                  for k in mismatched]
        problems.append(f"{len(shapes)} weight(s) of another shape: {', '.join(shapes[:4])}")
    if bad_missing:
        problems.append(f"{len(bad_missing)} weight(s) not in the checkpoint (would be random): "
                        + _short_keys(bad_missing))
    if bad_unexpected:
        problems.append(f"{len(bad_unexpected)} checkpoint weight(s) the model would drop: "
                        + _short_keys(bad_unexpected))
    if problems:
        arch = ", ".join(architectures or []) or "unknown"
        why = ""
        if head == "mlm" and any(a == "ElectraForPreTraining" for a in architectures or []):
            why = ("an ELECTRA discriminator has no MLM head (use the generator checkpoint for "
                   "masked-LM scores, or head 'encoder'); ")
        raise WeightsError(f"{label}: loaded as {type(model).__name__} ({head}) from a checkpoint "
                           f"of {arch}: {why}{'; '.join(problems)}")
    return {"missing": sorted(missing), "unexpected": sorted(unexpected),
            "mismatched": [str(k) for k in mismatched]}


# ---------------------------------------------------------------- load

class _Quiet:
    """transformers' logging at error level and no progress bars, restored afterwards."""

    def __enter__(self):
        import transformers  # lazy: only loading needs it

        self._log = transformers.logging
        self._level = transformers.logging.get_verbosity()
        self._bars = transformers.logging.is_progress_bar_enabled()
        transformers.logging.set_verbosity_error()
        transformers.logging.disable_progress_bar()
        return self

    def __exit__(self, *exc):
        self._log.set_verbosity(self._level)
        if self._bars:
            self._log.enable_progress_bar()
        return False


def _load_tokenizer(path: Path, label: str, trust_remote_code: bool):
    from transformers import AutoTokenizer  # lazy: only loading needs it

    try:
        tok = AutoTokenizer.from_pretrained(str(path), use_fast=True, local_files_only=True,
                                            trust_remote_code=trust_remote_code)
    except Exception as exc:  # transformers raises many types here
        msg = _first_line(exc)
        hint = (" (install sentencepiece and protobuf)"
                if re.search(r"sentencepiece|protobuf", msg, re.I) else "")
        raise CheckpointError(f"{label}: cannot load its tokenizer: {msg}{hint}") from exc
    if not getattr(tok, "is_fast", False):
        raise CheckpointError(f"{label}: its tokenizer ({type(tok).__name__}) has no fast version; "
                              "the measures need offsets and word ids")
    return tok


def _pickle_state_dict(files: list[Path]) -> tuple[dict[str, Any], list[str]]:
    import torch  # lazy: the registry and its checks import without it

    state, dropped = {}, []
    for f in files:
        for key, value in torch.load(f, map_location="cpu", weights_only=False).items():
            if isinstance(value, torch.Tensor):
                state[key] = value
            else:
                dropped.append(str(key))
    return state, dropped


def load_checkpoint(source: str | os.PathLike, head: str, *, revision: str | None = None,
                    device: str = "auto", dtype="auto", trust_remote_code: bool = False,
                    allow_pickle: bool = False, max_memory_fraction: float = 0.8,
                    memory_limit: int | None = None, name: str | None = None):
    """Load a checkpoint for a measure, or refuse with a one-line :class:`LoadError`.

    Parameters
    ----------
    source : a local model directory or a hub id (offline: from the hub cache only).
    head : ``"mlm"`` (``AutoModelForMaskedLM``), ``"causal"`` (``AutoModelForCausalLM``) or
        ``"encoder"`` (``AutoModel``, the base model whose hidden states are read).
    revision : hub branch, tag or commit (``main`` when None); required, as a 40-hex
        commit, with ``trust_remote_code``.
    device : ``"auto"`` (CUDA when available, else CPU), ``"cpu"``, ``"cuda"``, ``"cuda:N"``.
    dtype : ``"auto"`` (module rules), ``"float32"``, ``"bfloat16"``, ``"float16"`` (CUDA
        only) or a ``torch.dtype``.
    trust_remote_code : run the repository's code; only with a pinned commit ``revision``.
    allow_pickle : unpickle ``.bin`` files holding more than tensors (full pickle; trusted
        sources only). Plain ``.bin`` state dicts load without it.
    max_memory_fraction : share of the free memory the model may take.
    memory_limit : a memory budget in bytes instead (tests use a small one).
    name : the label errors use (the source when None).

    Returns
    -------
    (model, tokenizer, LoadInfo) : the model in eval mode on ``device``, its fast tokenizer.
    """
    import torch  # lazy: the registry and its checks import without it

    label = f"model {name or str(source)!r}"
    if head not in HEADS:
        raise LoadError(f"{label}: head must be one of {', '.join(HEADS)}, got {head!r}")
    if not 0 < max_memory_fraction <= 1:
        raise LoadError(f"{label}: max_memory_fraction must be in (0, 1], got {max_memory_fraction}")
    device = resolve_device(device, label)
    path, commit = resolve_source(source, revision, label)
    if not (path / "config.json").is_file():
        raise CheckpointError(f"{label}: {path} has no config.json (not a transformers model "
                              "directory)")
    config_json = _read_json(path / "config.json", label)
    _check_remote_code(path, head, commit, revision, trust_remote_code, label)
    fmt, files = weights_files(path, label)
    stored = config_json.get("torch_dtype") or config_json.get("dtype")
    torch_dtype = resolve_dtype(dtype, device, config_json.get("model_type"), stored, label)
    target = torch.empty((), dtype=torch_dtype).element_size()
    estimate = estimate_weight_bytes(files, fmt, target, stored)
    check_memory(estimate, device, label, max_memory_fraction, memory_limit)

    import transformers  # lazy: the registry and its checks import without it

    auto = getattr(transformers, AUTO_CLASSES[head])
    opts = dict(local_files_only=True, trust_remote_code=trust_remote_code)
    dropped: list[str] = []
    with _Quiet():
        try:
            config = transformers.AutoConfig.from_pretrained(str(path), **opts)
        except Exception as exc:
            raise CheckpointError(f"{label}: cannot read its config: {_first_line(exc)}") from exc
        tokenizer = _load_tokenizer(path, label, trust_remote_code)
        archs = list(getattr(config, "architectures", None) or [])
        try:
            try:
                model, info = auto.from_pretrained(
                    str(path), config=config, dtype=torch_dtype, use_safetensors=fmt == "safetensors",
                    output_loading_info=True, **opts)
            except Exception as exc:
                if fmt != "bin" or not _is_unpickling_error(exc):
                    raise
                if not allow_pickle:
                    raise PickleError(
                        f"{label}: {files[0].name} holds Python objects beyond tensors, which the "
                        f"safe weights-only reader refuses ({_first_line(exc)}); load it only from "
                        "a trusted source with allow_pickle=True (or convert it to safetensors)"
                    ) from exc
                state, dropped = _pickle_state_dict(files)
                cls = _concrete_class(auto, config, label, head)
                model, info = cls.from_pretrained(None, config=config, state_dict=state,
                                                  dtype=torch_dtype, output_loading_info=True)
        except LoadError:
            raise
        except ValueError as exc:
            msg = _first_line(exc)
            if "Unrecognized configuration class" in msg:
                raise CheckpointError(f"{label}: transformers has no {head} class for "
                                      f"{type(config).__name__} (architectures: "
                                      f"{', '.join(archs) or 'none'})") from exc
            raise CheckpointError(f"{label}: cannot load its {fmt} weights as {head}: {msg}") from exc
        except Exception as exc:
            raise CheckpointError(f"{label}: cannot load its {fmt} weights as {head}: "
                                  f"{_first_line(exc)}") from exc
    report = check_loading_report(info, head, model, label, archs)
    if dropped:
        report["dropped_non_tensors"] = sorted(dropped)
    model.eval()
    model.to(device)
    load_info = LoadInfo(source=str(source), path=str(path), head=head,
                         architecture=type(model).__name__, commit=commit, revision=revision,
                         weights_format=fmt, device=device, dtype=str(torch_dtype).removeprefix("torch."),
                         trust_remote_code=trust_remote_code, estimated_bytes=estimate, report=report)
    return model, tokenizer, load_info


def _is_unpickling_error(exc: BaseException) -> bool:
    while exc is not None:
        if isinstance(exc, pickle.UnpicklingError) or "Weights only load failed" in str(exc):
            return True
        exc = exc.__cause__ or exc.__context__
    return False


def _concrete_class(auto, config, label: str, head: str):
    try:
        return auto._model_mapping[type(config)]
    except KeyError as exc:
        raise CheckpointError(f"{label}: transformers has no {head} class for "
                              f"{type(config).__name__}") from exc


# ---------------------------------------------------------------- text normalisers

@dataclass(frozen=True)
class Normaliser:
    """A text normaliser as run records name it: ``name`` (the registry's), ``function``
    (str → str), ``implementation`` (what runs) and ``version`` (of that implementation).
    Called like its function."""

    name: str
    function: Callable[[str], str]
    implementation: str
    version: str | None = None

    def __call__(self, text: str) -> str:
        return self.function(text)

    def to_record(self) -> dict[str, Any]:
        """Plain values for a run record."""
        return {"name": self.name, "implementation": self.implementation,
                "version": self.version}


_UPSTREAM = "pip install git+https://github.com/csebuetnlp/normalizer"


def _banglabert() -> Normaliser:
    """This project's implementation of the csebuetnlp normaliser BanglaBERT was trained with
    (:func:`polybias.models.normalisers.banglabert_normalise`, defaults of the model card)."""
    try:
        import ftfy  # noqa: F401  # lazy: banglabert normaliser only
    except ImportError as exc:  # a runtime dependency: only a broken install lacks it
        raise NormaliserError("text normaliser 'banglabert' needs the ftfy package "
                              "(pip install ftfy)") from exc
    return Normaliser("banglabert", normalisers.banglabert_normalise,
                      "polybias.models.normalisers.banglabert_normalise",
                      f"{normalisers.VERSION} (ftfy {normalisers.ftfy_version()})")


def _banglabert_upstream() -> Normaliser:
    """The csebuetnlp ``normalizer`` package itself (``normalizer.normalize``), for whoever
    wants the original code: it must be installed (not on PyPI)."""
    try:
        from normalizer import normalize  # lazy: csebuetnlp/normalizer (not on PyPI)
    except ImportError as exc:
        raise NormaliserError(
            "text normaliser 'banglabert-upstream' (the csebuetnlp package) is not installed: "
            f"{_UPSTREAM} (or name 'banglabert', this project's implementation of its rules)"
        ) from exc
    if "unicode_norm" not in inspect.signature(normalize).parameters:
        raise NormaliserError("text normaliser 'banglabert-upstream': the installed 'normalizer' "
                              f"package is not the csebuetnlp one ({_UPSTREAM})")
    try:
        version = metadata.version("normalizer")
    except metadata.PackageNotFoundError:
        version = getattr(sys.modules.get("normalizer"), "__version__", None)
    return Normaliser("banglabert-upstream", normalize, "normalizer.normalize (csebuetnlp)", version)


#: Normaliser name → factory returning it (raising when it cannot be had): ``banglabert``
#: is this project's implementation of the csebuetnlp normaliser (no extra install),
#: ``banglabert-upstream`` the csebuetnlp package itself.
NORMALISERS: dict[str, Callable[[], Normaliser | Callable[[str], str]]] = {
    "banglabert": _banglabert, "banglabert-upstream": _banglabert_upstream}


def get_normaliser(name: str | None, model: str | None = None) -> Normaliser | None:
    """The text normaliser called ``name`` (None: no normaliser, returns None), as a
    :class:`Normaliser` (a factory returning a bare callable gets its qualified name as
    ``implementation``).

    Raises :class:`NormaliserError` for an unknown name, or one whose package is missing.

    >>> n = get_normaliser("banglabert")
    >>> n("অা  ৷"), n.to_record()["implementation"]
    ('আ ।', 'polybias.models.normalisers.banglabert_normalise')
    """
    if name is None:
        return None
    prefix = f"model {model!r}: " if model else ""
    if name not in NORMALISERS:
        raise NormaliserError(f"{prefix}unknown text normaliser {name!r}; known: "
                              f"{', '.join(sorted(NORMALISERS))}")
    try:
        found = NORMALISERS[name]()
    except NormaliserError as exc:
        raise NormaliserError(f"{prefix}{exc}") from exc
    if isinstance(found, Normaliser):
        return found
    where = f"{getattr(found, '__module__', '?')}.{getattr(found, '__qualname__', type(found).__name__)}"
    return Normaliser(name, found, where)


def normaliser_record(normaliser: Normaliser | Callable[[str], str] | None) -> dict[str, Any] | None:
    """What a run record says about a model's text normaliser (None when it has none).

    >>> normaliser_record(None) is None, normaliser_record(get_normaliser("banglabert"))["name"]
    (True, 'banglabert')
    """
    return normaliser_fields(normaliser)
