"""The `polybias` command's list commands: a header, an offline column, and a pipe closed
early by the reader ending them quietly."""

import os
import subprocess
import sys
from pathlib import Path

from polybias import cli, models

REPO = Path(__file__).resolve().parents[1]


def test_models_lists_a_header_the_offline_column_and_gemmas_origin_and_terms(capsys):
    assert cli.main(["models"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["NAME", "KIND", "LANGUAGES", "OFFLINE", "ORIGIN", "LICENCE"]
    gemma = next(line for line in lines if line.startswith("gemma-3-270m-q4_k_m "))
    assert "google/gemma-3-270m (Q4_K_M)" in gemma and "Gemma Terms of Use" in gemma
    planted = next(line for line in lines if line.startswith("planted-mlm "))
    assert "yes (planted)" in planted
    assert len(lines) == len(models.load_registry()) + 1


def test_offline_status_says_what_provides_a_model():
    assert models.offline_status("q", {"kind": "causal", "package": "polybias-no-such-package",
                                       "gguf": "m.gguf"}) == "no: make env"
    assert models.offline_status("g", {"kind": "static", "path": "$POLYBIAS_NO_SUCH_VAR/x.txt"}) \
        == "no: set $POLYBIAS_NO_SUCH_VAR"


def test_a_pipe_closed_early_is_quiet_and_exits_0():
    env = {**os.environ, "PYTHONPATH": str(REPO / "lib")}
    for command in ("models", "sources", "datasets"):
        proc = subprocess.run(
            f"{sys.executable} -c 'import sys; from polybias.cli import entry; sys.exit(entry())' "
            f"{command} | head -1", shell=True, capture_output=True, text=True, env=env, cwd=REPO,
            executable="/bin/bash")
        # `set -o pipefail` semantics by hand: the producer's status is the first of PIPESTATUS
        status = subprocess.run(
            f"{sys.executable} -c 'import sys; from polybias.cli import entry; sys.exit(entry())' "
            f"{command} | head -1; exit ${{PIPESTATUS[0]}}", shell=True, capture_output=True,
            text=True, env=env, cwd=REPO, executable="/bin/bash")
        assert proc.stdout.strip(), command
        assert "Traceback" not in proc.stderr and "BrokenPipe" not in proc.stderr, proc.stderr
        assert status.returncode == 0, (command, status.stderr)


def test_sources_lists_a_header_and_whether_each_source_is_here(capsys, monkeypatch, tmp_path):
    monkeypatch.delenv("POLYBIAS_DATA_MIRROR", raising=False)
    monkeypatch.setenv("POLYBIAS_CACHE", str(tmp_path))  # an empty cache: only the environment's files
    assert cli.main(["sources"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("NAME  offline:") and lines[1] == "  licence, url"
    assert "wefe-wheel  offline: yes (environment)" in lines
    assert "crows-pairs  offline: no (polybias fetch NAME with the network, or POLYBIAS_DATA_MIRROR)" in lines
