"""``make help``: one line per target, the descriptions in one column, and the command line
of a single notebook run (``polybias run``)."""

import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.skipif(shutil.which("make") is None, reason="no make on this machine: install GNU make (e.g. apt-get install make)")
def test_make_help_is_aligned_and_names_polybias_run():
    out = subprocess.run(["make", "-s", "--no-print-directory", "help"], cwd=ROOT, capture_output=True,
                         text=True, check=True).stdout.splitlines()
    targets = re.findall(r"^([a-zA-Z_-]+):.*?## ", (ROOT / "Makefile").read_text(), flags=re.M)
    assert [line.split()[1] for line in out if line.startswith("  make ")] == targets
    columns = {re.match(r"  (make \S+|polybias run NB) +", line).end() for line in out}
    assert len(columns) == 1, out
    assert any(line.startswith("  polybias run NB ") for line in out)
