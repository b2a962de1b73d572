"""The device a benchmark runs on (``--device``), and its matrix-multiply peak.

Shared by ``run.py`` and the benchmarks that take ``--device``; a device that cannot run
ends the benchmark with one line saying why.
"""

from __future__ import annotations

import time

import torch

DTYPES = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16}


def resolve_device(name: str) -> str:
    """``"cpu"`` or a CUDA device that exists here; anything else ends the run (SystemExit)
    with one line naming the problem.

    >>> resolve_device("cpu")
    'cpu'
    """
    name = (name or "cpu").strip()
    try:
        device = torch.device(name)
    except (RuntimeError, TypeError):
        raise SystemExit(f"--device {name}: not a device name (use cpu or cuda[:N])") from None
    if device.type == "cpu":
        return "cpu"
    if device.type != "cuda":
        raise SystemExit(f"--device {name}: the benchmarks run on cpu or cuda only")
    if not torch.cuda.is_available():
        why = ("this torch is built without CUDA" if torch.version.cuda is None
               else "no CUDA device is visible")
        raise SystemExit(f"--device {name}: CUDA is not available ({why}, torch {torch.__version__})")
    count = torch.cuda.device_count()
    if device.index is not None and device.index >= count:
        raise SystemExit(f"--device {name}: there are {count} CUDA device(s), numbered from 0")
    return f"cuda:{device.index or 0}"


def describe(device: str) -> str:
    """The device in words (the GPU's name, or the CPU's thread count)."""
    if device.startswith("cuda"):
        return f"{torch.cuda.get_device_name(torch.device(device))} ({device})"
    return f"CPU, {torch.get_num_threads()} thread(s)"


def synchronize(device: str) -> None:
    """Wait for the work queued on ``device`` (a no-op on the CPU)."""
    if device.startswith("cuda"):
        torch.cuda.synchronize(torch.device(device))


def matmul_peak(device: str, dtype: torch.dtype, n: int | None = None, repeat: int = 5) -> float:
    """The device's measured rate (FLOP/s) of an n × n matrix product in ``dtype``, the
    best of ``repeat`` (TF32 off for float32 on CUDA, as the engine's numbers are taken)."""
    n = n or (8192 if device.startswith("cuda") else 1024)
    if device.startswith("cuda"):
        torch.backends.cuda.matmul.allow_tf32 = False
    a = torch.randn(n, n, device=device).to(dtype)
    b = torch.randn(n, n, device=device).to(dtype)
    torch.mm(a, b)
    synchronize(device)
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        torch.mm(a, b)
        synchronize(device)
        best = min(best, time.perf_counter() - t0)
    return 2 * n ** 3 / best
