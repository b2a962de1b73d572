"""Checked outputs do not depend on the CPU's kernels.

Another CPU runs other matrix-multiply and vector kernels. These settings make this
machine run the kernels another CPU would pick, and the printed tables of
``tests/cpu_probe.py`` (a pinned planted model scored, a CrowS-Pairs table, Categorical
Bias with its KL difference, the hidden-state table: the calls and precisions of
notebooks 04-06 and 08) must come out identical under every one of them. MKL treats its
setting as a ceiling and falls back on a CPU without AVX-512; PyTorch does not (its
AVX-512 kernels stop with an illegal instruction there), so ``aten-avx512`` is skipped,
with that reason, on a CPU whose flags lack ``avx512f``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

PROBE = Path(__file__).with_name("cpu_probe.py")
SETTINGS = {
    "native": {},
    "aten-default": {"ATEN_CPU_CAPABILITY": "default"},
    "aten-avx2": {"ATEN_CPU_CAPABILITY": "avx2"},
    "aten-avx512": {"ATEN_CPU_CAPABILITY": "avx512"},
    "mkl-avx2": {"MKL_ENABLE_INSTRUCTIONS": "AVX2"},
    "mkl-avx512": {"MKL_ENABLE_INSTRUCTIONS": "AVX512"},
}


def _cpu_flags() -> set[str]:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return set()
    return {flag for line in text.splitlines() if line.startswith("flags") for flag in line.split()}


def _unsupported(setting: dict[str, str]) -> str | None:
    """Why this CPU cannot run ``setting``, or None."""
    if setting.get("ATEN_CPU_CAPABILITY") == "avx512" and "avx512f" not in _cpu_flags():
        return ("this CPU has no AVX-512 (no avx512f flag): PyTorch's AVX-512 kernels cannot run here; "
                "run this test on a CPU that has it (grep avx512f /proc/cpuinfo)")
    return None


def _probe(setting: dict[str, str], output_root: Path) -> str:
    env = {k: v for k, v in os.environ.items()
           if k not in ("ATEN_CPU_CAPABILITY", "MKL_ENABLE_INSTRUCTIONS")}
    env.update(setting, POLYBIAS_PLANTED="pinned", POLYBIAS_OUTPUT_ROOT=str(output_root),
               OMP_NUM_THREADS="1")
    out = subprocess.run([sys.executable, str(PROBE)], env=env, capture_output=True, text=True)
    if out.returncode:
        pytest.fail(f"probe failed under {setting}:\n{out.stderr[-3000:]}")
    return out.stdout


@pytest.fixture(scope="module")
def outputs(tmp_path_factory):
    root = tmp_path_factory.mktemp("cpu")
    runnable = {name: s for name, s in SETTINGS.items() if _unsupported(s) is None}
    with ThreadPoolExecutor(max_workers=2) as pool:
        texts = dict(zip(runnable, pool.map(lambda s: _probe(s, root), runnable.values()),
                         strict=True))
    return {name: text.split("\n", 1) for name, text in texts.items()}


@pytest.mark.integration
def test_the_kernel_settings_really_change_the_kernels(outputs):
    capabilities = {name: first for name, (first, _) in outputs.items()}
    assert capabilities["aten-default"] == "capability DEFAULT"
    assert capabilities["aten-default"] != capabilities["native"] or \
        capabilities["native"] == "capability DEFAULT"


@pytest.mark.integration
@pytest.mark.parametrize("setting", [s for s in SETTINGS if s != "native"])
def test_printed_tables_are_identical_under(outputs, setting):
    if (reason := _unsupported(SETTINGS[setting])) is not None:
        pytest.skip(reason)
    native, other = outputs["native"][1], outputs[setting][1]
    assert "## crows_tables" in native and "## hidden_state_tables" in native
    assert other == native
