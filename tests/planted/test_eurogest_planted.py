"""Planted causal LMs on EuroGEST's own sentences (polybias.planted.eurogest): the split,
the planted corpus, the spec and deterministic training."""

from __future__ import annotations

import pytest
from polybias.data import eurogest as data
from polybias.files import params_hash, sha256_file
from polybias.planted import eurogest, model_store

pytestmark = pytest.mark.usefixtures("torch_one_thread")


@pytest.mark.parametrize("language", eurogest.LANGUAGES)
def test_the_split_is_disjoint_complete_and_the_same_every_time(language):
    train, held = eurogest.split_pairs(language)
    pairs = data.gendered_pairs(language, duplicates="drop")
    assert len(train) + len(held) == len(pairs)
    assert not set(train["masculine"]) & set(held["masculine"])
    assert not set(train["feminine"]) & set(held["feminine"])
    assert 0.35 < len(held) / len(pairs) < 0.65
    again_train, again_held = eurogest.split_pairs(language)
    assert again_train.equals(train) and again_held.equals(held)
    # every stereotype on both sides, so that the held-out half can rate each
    assert set(held["stereotype"]) == set(train["stereotype"]) == set(range(1, 17))


def test_the_corpus_holds_one_form_of_every_training_sentence_at_the_planted_rate():
    train, held = eurogest.split_pairs("lv")
    never = set(held["masculine"]) | set(held["feminine"])
    for p in (0.0, 1.0):
        corpus = eurogest.planted_eurogest_corpus("lv", p, seed=3)
        assert eurogest.congruent_share(corpus, "lv") == p
    corpus = eurogest.planted_eurogest_corpus("lv", 0.9, seed=0)
    assert len(corpus) == len(train) and not set(corpus) & never
    share = eurogest.congruent_share(corpus, "lv")
    sd = (0.9 * 0.1 / len(corpus)) ** 0.5
    assert abs(share - 0.9) < 4 * sd
    assert corpus == eurogest.planted_eurogest_corpus("lv", 0.9, seed=0)
    assert corpus != eurogest.planted_eurogest_corpus("lv", 0.9, seed=1)
    masculine = set(train["masculine"])
    # p = 1: every masculine-stereotype sentence in its masculine form, and only those
    full = eurogest.planted_eurogest_corpus("lv", 1.0, seed=0)
    assert [s in masculine for s in full] == train["stereotype"].ge(8).tolist()


@pytest.mark.parametrize(("call", "message"), [
    (lambda: eurogest.split_pairs("de"), "exist for cs, el, lv, not 'de'"),
    (lambda: eurogest.planted_eurogest_corpus("cs", 1.5), r"p must be a probability in \[0, 1\]"),
    (lambda: eurogest.planted_eurogest_corpus("cs", 0.9, seed=-1), "seed must be a non-negative"),
    (lambda: eurogest.split_pairs("cs", share=1.0), r"share must lie in \(0, 1\)"),
    (lambda: eurogest.planted_eurogest_spec("cs", 0.9, depth=3), "unknown training option"),
])
def test_bad_input_is_named(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_the_spec_names_every_input_and_keys_the_pinned_models():
    spec = eurogest.planted_eurogest_spec("el", 0.9, seed=2)
    assert spec["kind"] == eurogest.KIND and spec["language"] == "el" and spec["seed"] == 2
    assert spec["training"]["epochs"] == eurogest.PER_LANGUAGE["el"]["epochs"] == 30 and spec["training"]["hidden_size"] == 64
    assert spec["n_sentences"] == len(eurogest.split_pairs("el")[0])
    assert spec != eurogest.planted_eurogest_spec("el", 0.9, seed=3)
    pinned_keys = [k for k, e in model_store.read_manifest().items() if e["spec"]["kind"] == eurogest.KIND]
    assert {model_store.read_manifest()[k]["spec"]["language"] for k in pinned_keys} == set(eurogest.LANGUAGES)
    for key in pinned_keys:
        assert key == f"{eurogest.KIND}-{params_hash(model_store.read_manifest()[key]['spec'])}"


def test_training_is_deterministic(tmp_path):
    """The same spec trained twice gives byte-identical files (one epoch on the Greek
    training sentences: about 2 s)."""
    spec = eurogest.planted_eurogest_spec("el", 0.9, seed=0, epochs=1)
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir()
    second.mkdir()
    eurogest._train(spec, first)
    eurogest._train(spec, second)
    names = sorted(p.name for p in first.iterdir())
    assert "model.safetensors" in names and names == sorted(p.name for p in second.iterdir())
    assert [sha256_file(first / n) for n in names] == [sha256_file(second / n) for n in names]
    other = eurogest.planted_eurogest_spec("el", 0.9, seed=1, epochs=1)
    third = tmp_path / "c"
    third.mkdir()
    eurogest._train(other, third)
    assert sha256_file(third / "model.safetensors") != sha256_file(first / "model.safetensors")


def test_a_stale_spec_is_refused(tmp_path):
    spec = {**eurogest.planted_eurogest_spec("el", 0.9), "code_version": "planted-eurogest-0"}
    with pytest.raises(eurogest.PlantedEuroGestError, match="code version 'planted-eurogest-0'"):
        eurogest._train(spec, tmp_path)
