"""Where and in what precision a model runs, and whether it fits: the one reading of
``device="auto"`` and ``dtype="auto"``, the memory estimate from the weights files, and the
batch size in tokens (:mod:`polybias.models.loading`, "Device and dtype", "Memory")."""

from __future__ import annotations

import json
import struct
from pathlib import Path

from polybias.engines.common import auto_batch_tokens, check_half
from polybias.models.errors import DeviceError, LoadError, MemoryBudgetError

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


_DTYPE_BYTES = {"float32": 4, "float16": 2, "bfloat16": 2, "float64": 8,
                "F32": 4, "F16": 2, "BF16": 2, "F64": 8, "I64": 8, "I32": 4, "I16": 2, "I8": 1,
                "U8": 1, "BOOL": 1, "F8_E4M3": 1, "F8_E5M2": 1}


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
