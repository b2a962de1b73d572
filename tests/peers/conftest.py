"""Peers executed side by side: each peer package lives in its own virtual environment
(``make peers`` builds ``.venv-peers/<peer>`` from ``tests/peers/requirements/<peer>.txt``),
so its pins never touch the project's environment. A test runs a driver script
(``tests/peers/drivers/<name>.py``) in the peer's interpreter, passes it a JSON request on
stdin and reads a JSON answer on stdout; polybias computes the same thing in this
process, and the test compares the two and records the agreement (``tests/peers/report.py``)
for ``docs/peers.md``.

Outside ``make peers`` a missing peer environment skips the test with the command that
builds it; under ``make peers`` (``POLYBIAS_PEERS_REQUIRED=1``) it is an error.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DRIVERS = Path(__file__).resolve().parent / "drivers"


def peers_env() -> Path:
    """The folder that holds one virtual environment per peer."""
    return Path(os.environ.get("POLYBIAS_PEERS_ENV", ROOT / ".venv-peers"))


def peer_python(peer: str) -> Path:
    """The interpreter of ``peer``'s environment, or a skip (an error under ``make peers``)."""
    python = peers_env() / peer / "bin" / "python"
    if not (peers_env() / peer / ".installed").exists():
        message = f"peer environment {peer!r} absent ({python}): run `make peers`"
        if os.environ.get("POLYBIAS_PEERS_REQUIRED") == "1":
            pytest.fail(message)
        pytest.skip(message)
    return python


def run_driver(peer: str, driver: str, request: dict, timeout: float = 900) -> dict:
    """Run ``drivers/<driver>.py`` in ``peer``'s environment with ``request`` as JSON on
    stdin; return the JSON object it prints last on stdout. A failing driver fails the
    test with its stderr."""
    python = peer_python(peer)
    env = {**os.environ, "PYTHONHASHSEED": "0", "OMP_NUM_THREADS": "1",
           "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    env.pop("PYTHONPATH", None)
    done = subprocess.run([str(python), str(DRIVERS / f"{driver}.py")], input=json.dumps(request),
                          capture_output=True, text=True, timeout=timeout, env=env)
    if done.returncode != 0:
        pytest.fail(f"peer driver {driver} exited {done.returncode}:\n{done.stderr[-4000:]}")
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if not lines:
        pytest.fail(f"peer driver {driver} printed no JSON answer:\n{done.stdout[-2000:]}")
    return json.loads(lines[-1])
