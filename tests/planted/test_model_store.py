"""The pinned store of planted models (polybias.planted.model_store): integrity, modes, and that a
model retrained on this CPU shows the planted behaviour of the pinned one."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from polybias.files import params_hash
from polybias.planted import model_store, synthetic


def _fake_model(folder: Path, spec: dict) -> None:
    (folder / "weights.bin").write_bytes(b"\x00\x01" * 8)
    (folder / model_store.SPEC_FILE).write_text(json.dumps(spec))


def test_every_pinned_model_verifies_against_its_sha256():
    manifest = model_store.read_manifest()
    assert manifest, "data/planted/manifest.json lists no pinned models"
    for key, entry in manifest.items():
        assert model_store.lookup(key) == model_store.store_dir() / key
        assert key == f"{entry['spec']['kind']}-{params_hash(entry['spec'])}"


def test_add_then_lookup_and_a_tampered_file_is_an_error(tmp_path):
    source = tmp_path / "trained"
    source.mkdir()
    _fake_model(source, {"kind": "mlm"})
    store = tmp_path / "store"
    model_store.add("mlm-abc", source, {"kind": "mlm"}, store)
    assert model_store.lookup("mlm-abc", store) == store / "mlm-abc"
    assert model_store.lookup("mlm-other", store) is None
    (store / "mlm-abc" / "weights.bin").write_bytes(b"tampered")
    with pytest.raises(model_store.ModelStoreError, match=r"mlm-abc: .*weights.bin does not match its sha256"):
        model_store.lookup("mlm-abc", store)
    (store / "mlm-abc" / "weights.bin").unlink()
    with pytest.raises(model_store.ModelStoreError, match="weights.bin is missing"):
        model_store.lookup("mlm-abc", store)


def test_the_advice_for_a_damaged_pinned_model_restores_it(tmp_path):
    """The error names `git checkout -- <folder>`, and running it gives back a model that
    loads (the advice is the fix, not a retraining)."""
    import shlex
    import subprocess

    repo = tmp_path / "repo"
    source = tmp_path / "trained"
    source.mkdir()
    _fake_model(source, {"kind": "mlm"})
    store = repo / "data" / "planted"
    model_store.add("mlm-abc", source, {"kind": "mlm"}, store)
    git = ["git", "-c", "user.email=t@t", "-c", "user.name=t"]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run([*git, "-C", str(repo), "add", "-A"], check=True)
    subprocess.run([*git, "-C", str(repo), "commit", "-qm", "pinned"], check=True)
    (store / "mlm-abc" / "weights.bin").write_bytes(b"tampered")
    with pytest.raises(model_store.ModelStoreError) as err:
        model_store.lookup("mlm-abc", store)
    command = str(err.value).split("`")[1]
    assert command.startswith("git checkout -- ") and "make planted" in str(err.value)
    subprocess.run(shlex.split(command), cwd=repo, check=True)
    assert model_store.lookup("mlm-abc", store) == store / "mlm-abc"


def test_an_unlisted_file_in_a_pinned_folder_is_an_error(tmp_path):
    source = tmp_path / "trained"
    source.mkdir()
    _fake_model(source, {"kind": "mlm"})
    model_store.add("mlm-abc", source, {"kind": "mlm"}, tmp_path)
    (tmp_path / "mlm-abc" / "extra.bin").write_bytes(b"?")
    with pytest.raises(model_store.ModelStoreError, match="not in the manifest: extra.bin"):
        model_store.lookup("mlm-abc", tmp_path)


def test_pinned_mode_refuses_to_train_and_writes_nothing(empty_project, monkeypatch):
    monkeypatch.setenv("POLYBIAS_PLANTED", "pinned")
    calls = []
    with pytest.raises(model_store.ModelStoreError, match="mlm-123 is not pinned.*POLYBIAS_PLANTED=pinned"):
        model_store.resolve("mlm-123", {"kind": "mlm"}, calls.append)
    assert calls == []
    assert not (empty_project / ".cache" / "trained").exists()


def test_auto_trains_into_the_cache_and_pin_adds_to_the_store(empty_project, monkeypatch):
    monkeypatch.delenv("POLYBIAS_PLANTED", raising=False)
    folder = model_store.resolve("mlm-123", {"kind": "mlm"}, lambda out: _fake_model(out, {"kind": "mlm"}))
    assert folder == empty_project / ".cache" / "trained" / "mlm-123"
    assert model_store.read_manifest() == {}
    monkeypatch.setenv("POLYBIAS_PLANTED", "pin")
    pinned_folder = model_store.resolve("mlm-123", {"kind": "mlm"}, lambda out: pytest.fail("retrained"))
    assert pinned_folder == empty_project / "data" / "planted" / "mlm-123"
    assert set(model_store.read_manifest()["mlm-123"]["files"]) == {"weights.bin", model_store.SPEC_FILE}


def test_a_failed_training_leaves_nothing(empty_project, monkeypatch):
    monkeypatch.delenv("POLYBIAS_PLANTED", raising=False)

    def broken(out):
        (out / "partial.bin").write_bytes(b"x")
        raise RuntimeError("diverged")

    with pytest.raises(RuntimeError, match="diverged"):
        model_store.resolve("mlm-123", {"kind": "mlm"}, broken)
    assert list((empty_project / ".cache" / "trained").iterdir()) == []


def test_a_built_folder_needs_its_marker_and_is_built_once(tmp_path):
    target = tmp_path / "cache" / "mlm-9"
    with pytest.raises(model_store.ModelStoreError, match=f"building mlm-9 wrote no {model_store.SPEC_FILE}"):
        model_store.build_folder(target, lambda out: (out / "weights.bin").write_bytes(b"w"))
    assert list((tmp_path / "cache").iterdir()) == []
    calls = []

    def build(out):
        calls.append(out)
        (out / "done.json").write_text("{}")

    assert model_store.build_folder(target, build, marker="done.json") == target
    assert model_store.build_folder(target, build, marker="done.json") == target
    assert len(calls) == 1 and calls[0] != target and (target / "done.json").is_file()


def test_an_unknown_mode_is_an_error(monkeypatch):
    monkeypatch.setenv("POLYBIAS_PLANTED", "sometimes")
    with pytest.raises(model_store.ModelStoreError, match="POLYBIAS_PLANTED must be one of auto, pinned, pin"):
        model_store.mode()


# ------------------------------------------------------- retraining on whatever CPU runs this

RETRAIN_TOLERANCE = 10.0  # stereotype-score points between the pinned and a retrained MLM
WEAT_TOLERANCE = 0.35  # WEAT effect size between pinned and retrained word2vec


def _entry(kind: str, p: float, n_sentences: int) -> str:
    keys = [k for k, e in model_store.read_manifest().items()
            if e["spec"]["kind"] == kind and e["spec"]["p"] == p and e["spec"]["seed"] == 0
            and e["spec"]["language"] == "en" and e["spec"]["n_sentences"] == n_sentences]
    assert keys, f"no pinned {kind} at p={p}, n={n_sentences}"
    return keys[0]


def _copy_entry(key: str, store: Path) -> None:
    shutil.copytree(model_store.store_dir() / key, store / key)
    entry = model_store.read_manifest()[key]
    (store / model_store.MANIFEST).write_text(json.dumps({key: entry}))


_SCORE = """
import sys
from pathlib import Path
from polybias.engines import scoring
from polybias.planted import synthetic
from polybias.engines.pair_scores import pair_scores
from polybias.metrics import crows
model, tok = synthetic.load_trained_folder(Path(sys.argv[1]), "mlm")
lm = scoring.wrap_language_model(model, tok, name="m", kind="mlm", revision="x")
pairs = synthetic.minimal_pairs(100, "en", seed=0)
print(float(crows.stereotype_score(pair_scores(lm, pairs), n_bootstrap=0).score.iloc[0]))
"""


def _score(folder: Path) -> float:
    out = subprocess.run([sys.executable, "-c", _SCORE, str(folder)], check=True,
                         capture_output=True, text=True)
    return float(out.stdout.strip().splitlines()[-1])


@pytest.mark.integration
def test_a_retrained_planted_mlm_shows_the_pinned_planted_behaviour(tmp_path):
    """Retrained under the generic kernels (ATEN_CPU_CAPABILITY=default, standing in for
    another CPU), the p = 0.9 MLM of the validity study prefers the stereotypical sentence
    as the pinned one does: score above 70 and within RETRAIN_TOLERANCE points of it."""
    key = _entry("mlm", 0.9, 3000)
    _copy_entry(key, tmp_path)
    code = ("import sys; from pathlib import Path; from polybias.planted import model_store, synthetic; "
            "trainers = {'mlm': synthetic._train_planted}; "
            f"print(model_store.retrain_all(trainers, store=Path(sys.argv[1]), keys=[{key!r}]))")
    env = {**os.environ, "ATEN_CPU_CAPABILITY": "default"}
    subprocess.run([sys.executable, "-c", code, str(tmp_path)], check=True, env=env,
                   capture_output=True, text=True)
    pinned_score, retrained = _score(model_store.store_dir() / key), _score(tmp_path / key)
    assert pinned_score > 70 and retrained > 70
    assert abs(retrained - pinned_score) <= RETRAIN_TOLERANCE


@pytest.mark.integration
def test_retrained_planted_word2vec_shows_the_pinned_weat_effect(tmp_path, monkeypatch):
    from polybias.studies import validity_designs

    key = _entry(synthetic.WORD2VEC_KIND, 0.9, 4000)
    (pinned_row,) = validity_designs.planted_weat(0.9, seed=0, n_permutations=1000)
    monkeypatch.setenv("POLYBIAS_ROOT", str(tmp_path))
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "configs").mkdir()
    monkeypatch.delenv("POLYBIAS_PLANTED", raising=False)
    (retrained_row,) = validity_designs.planted_weat(0.9, seed=0, n_permutations=1000)
    assert (tmp_path / ".cache" / "trained" / key).is_dir()  # trained here, not read from the store
    assert pinned_row["value"] > 0.5 and retrained_row["value"] > 0.5
    assert abs(retrained_row["value"] - pinned_row["value"]) <= WEAT_TOLERANCE


def test_the_advice_of_pinned_mode_pin_it_or_unset_the_variable_is_what_then_works(empty_project, monkeypatch):
    """Refused under POLYBIAS_PLANTED=pinned, an unpinned model is trained as the error says:
    with POLYBIAS_PLANTED unset (into the cache), or with POLYBIAS_PLANTED=pin (into the store,
    after which POLYBIAS_PLANTED=pinned finds it)."""
    train = lambda out: _fake_model(out, {"kind": "mlm"})
    monkeypatch.setenv("POLYBIAS_PLANTED", "pinned")
    with pytest.raises(model_store.ModelStoreError) as err:
        model_store.resolve("mlm-456", {"kind": "mlm"}, train)
    assert str(err.value).endswith("pin it with POLYBIAS_PLANTED=pin, or unset POLYBIAS_PLANTED to "
                                   "train it locally")
    monkeypatch.delenv("POLYBIAS_PLANTED")
    assert model_store.resolve("mlm-456", {"kind": "mlm"}, train) == empty_project / ".cache" / "trained" / "mlm-456"
    monkeypatch.setenv("POLYBIAS_PLANTED", "pin")
    pinned = model_store.resolve("mlm-456", {"kind": "mlm"}, train)
    assert pinned == empty_project / "data" / "planted" / "mlm-456"
    monkeypatch.setenv("POLYBIAS_PLANTED", "pinned")
    assert model_store.resolve("mlm-456", {"kind": "mlm"}, lambda out: pytest.fail("retrained")) == pinned
