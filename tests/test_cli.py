"""The `polybias` command's list commands: a header, an offline column, and a pipe closed
early by the reader ending them quietly."""

import os
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from polybias import cli, models
from polybias.data import sources

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


def test_the_offline_column_s_advice_is_what_makes_a_model_available(tmp_path, monkeypatch):
    """``no: set $VAR``: set, the model's file is found; ``no: make env``: every package a
    registry entry ships in is one that make env installs (requirements-embedded.txt, or a
    dependency of polybias)."""
    entry = {"kind": "static", "path": "$POLYBIAS_TEST_VECTORS/x.txt"}
    monkeypatch.delenv("POLYBIAS_TEST_VECTORS", raising=False)
    advice = models.offline_status("g", entry)
    assert advice == "no: set $POLYBIAS_TEST_VECTORS"
    (tmp_path / "x.txt").write_text("1 2\nword 0.5 0.5\n")
    monkeypatch.setenv(advice.rsplit("$", 1)[1], str(tmp_path))
    assert models.offline_status("g", entry) == "yes (file)"
    assert models.offline_status("q", {"kind": "causal", "package": "polybias-no-such-package",
                                       "gguf": "m.gguf"}) == "no: make env"
    embedded = {m[1].lower() for m in re.finditer(r"^([A-Za-z0-9_.-]+)==", (REPO / "requirements-embedded.txt")
                                                   .read_text(encoding="utf-8"), re.M)}
    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    declared = {re.match(r"[A-Za-z0-9_.-]+", d)[0].lower() for d in project["dependencies"]}
    for name, entry in models.load_registry().items():
        for package in [entry.get("package"), *(p["package"] for p in entry.get("gguf_parts") or [])]:
            if package:
                assert str(package).lower() in embedded | declared, (name, package)
    makefile = (REPO / "Makefile").read_text(encoding="utf-8")
    assert "-r requirements-embedded.txt" in makefile and "-e '.[dev]'" in makefile


def test_a_source_not_here_is_listed_with_the_mirror_or_fetch_that_provides_it(capsys, monkeypatch, tmp_path):
    """``no (polybias fetch NAME with the network, or POLYBIAS_DATA_MIRROR)``: with the variable
    set to a mirror holding the file, the source is listed as here and ``polybias fetch NAME``
    gives its path (no network)."""
    source = sources.get_source("crows-pairs")
    here, reason = sources.availability("crows-pairs", download=False)
    if not here:
        pytest.skip(f"needs the crows-pairs file to build a mirror from: {reason}")
    mirrored = sources.fetch("crows-pairs")
    monkeypatch.delenv("POLYBIAS_DATA_MIRROR", raising=False)
    monkeypatch.setenv("POLYBIAS_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("POLYBIAS_OFFLINE", "1")
    assert cli.main(["sources"]) == 0
    advice = "crows-pairs  offline: no (polybias fetch NAME with the network, or POLYBIAS_DATA_MIRROR)"
    assert advice in capsys.readouterr().out.splitlines()
    assert cli.main(["fetch", "crows-pairs"]) == 1
    assert "cannot be had" in capsys.readouterr().err
    mirror = tmp_path / "mirror"
    (mirror / source.mirror_relpath).parent.mkdir(parents=True)
    shutil.copyfile(mirrored, mirror / source.mirror_relpath)
    monkeypatch.setenv("POLYBIAS_DATA_MIRROR", str(mirror))
    assert cli.main(["sources"]) == 0
    listed = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("crows-pairs "))
    assert listed.startswith("crows-pairs  offline: yes (")
    assert cli.main(["fetch", "crows-pairs"]) == 0
    assert str(mirror / source.mirror_relpath) in capsys.readouterr().out
