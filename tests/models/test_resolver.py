"""models.load as the one resolver: every kind by name, clear errors for bad names, and
the device decided once (placement.resolve_device) with the model moved once."""

from __future__ import annotations

from dataclasses import fields

import numpy as np
import pytest
import torch
from polybias import models
from polybias.engines import scoring
from polybias.engines.common import LoadedModel
from polybias.engines.embeddings import EmbeddingError, Encoder, wrap_encoder
from polybias.engines.scoring import LanguageModel, ScoringError, wrap_language_model
from polybias.engines.static import StaticEmbeddings
from polybias.models import errors, placement
from polybias.planted import probes
from polybias.planted import static as planted_static
from polybias.planted.tiny_models import build_tiny_encoder, build_tiny_model

pytestmark = pytest.mark.usefixtures("torch_one_thread")

TEXTS = ["he is an engineer .", "she is a nurse ."]


@pytest.fixture(scope="module")
def tiny_dir(tmp_path_factory):
    """A tiny BERT masked LM saved as a checkpoint directory."""
    folder = tmp_path_factory.mktemp("tiny-bert")
    model, tok = build_tiny_model("bert")
    model.save_pretrained(folder)
    tok.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def seat_texts():
    from polybias.studies.seat import load_templates

    return tuple(t for group in load_templates("hi").groups.values() for t in group)


# ---------------------------------------------------------------- every kind by name

def test_static_by_registered_name_file_and_planted(tmp_path):
    path = tmp_path / "toy.txt"
    path.write_text("2 2\nnurse 1.0 0.0\nengineer 0.0 1.0\n", encoding="utf-8")
    table = models.load(str(path), "static", format="word2vec-text", name="toy")
    assert isinstance(table, StaticEmbeddings) and table.name == "toy" and table.dim == 2
    planted = models.load(models.PLANTED_STATIC, "static",
                          planted=models.Planted(language="hi", strength=0.5, seed=3))
    same = planted_static.for_wordlists("hi", "", strength=0.5, seed=3)
    assert planted.name == models.PLANTED_STATIC and planted.words == same.words
    np.testing.assert_array_equal(planted.vectors, same.vectors)


def test_encoder_from_a_checkpoint_and_planted_static_encoders(tiny_dir, seat_texts):
    enc = models.load(str(tiny_dir), "encoder", device="cpu")
    assert isinstance(enc, Encoder) and isinstance(enc, LoadedModel) and enc.pooling == "cls"
    bag = models.load(models.PLANTED_STATIC, "encoder",
                      planted=models.Planted(language="hi", texts=seat_texts))
    assert isinstance(bag, planted_static.BagOfWords)
    template_word = next(w for t in seat_texts for w in planted_static.words_of(
        t.replace("{X}", " ").replace("{aX}", " ")))
    assert template_word in bag.table.index  # the templates' words get noise vectors
    assert bag.revision.endswith(",bag-of-words")
    corpora = planted_static.list_corpora("hi", "", (0.9,), 20, 0)
    ctx = models.load(models.PLANTED_STATIC, "encoder",
                      planted=models.Planted(language="hi", contextual=True, corpora=corpora))
    assert isinstance(ctx, planted_static.ContextualBag)


def test_masked_causal_and_either_by_name(tiny_dir):
    mlm = models.load(str(tiny_dir), "mlm", device="cpu")
    assert isinstance(mlm, LanguageModel) and mlm.kind == "mlm"
    assert models.load(str(tiny_dir), device="cpu").kind == "mlm"  # kind from the config
    causal = models.load("planted-causal", "causal")
    assert causal.kind == "causal" and causal.device == "cpu"
    assert models.load("planted-mlm", "lm").kind == "mlm"


def test_planted_trained_at_a_strength_is_the_registered_one_at_that_strength():
    named = models.load(models.PLANTED, "lm", planted=models.Planted(p=0.9, language="en"))
    registered = models.load("planted-mlm", "lm")  # p = 0.9, seed 0, English
    assert named.name == "planted-p0.9" and named.revision == registered.revision
    np.testing.assert_array_equal(scoring.pseudo_log_likelihood(named, TEXTS),
                                  scoring.pseudo_log_likelihood(registered, TEXTS))


def test_planted_analytic_from_a_book(tmp_path, monkeypatch):
    monkeypatch.setenv("POLYBIAS_CACHE", str(tmp_path / "cache"))
    book = probes.planted_templates("en")
    lm = models.load(models.ANALYTIC, "lm", planted=models.Planted(p=0.9, book=book))
    assert lm.name == "planted-analytic-p0.9" and lm.kind == "mlm"
    assert lm.revision.startswith("analytic:") and lm.device == "cpu"
    assert next(lm.model.parameters()).dtype == torch.float64  # auto: float64
    assert set(models.STRENGTH_P) == {models.PLANTED, models.ANALYTIC}


# ---------------------------------------------------------------- bad names, clear errors

@pytest.mark.parametrize("model, kind, planted, message", [
    ("no-such-model", "lm", None, "unknown model 'no-such-model'.*registered models"),
    ("planted-mlm", "encoder", None, None),  # an MLM serves as an encoder: no error
    ("w2v-gnews", "lm", None, "is of kind 'static', not a language model"),
    (models.PLANTED, "lm", models.Planted(), r"needs Planted\(p=\.\.\.\)"),
    (models.ANALYTIC, "lm", models.Planted(p=0.9), "built from a template book"),
    (models.PLANTED_STATIC, "mlm", models.Planted(), "ask for kind 'static' or 'encoder'"),
    (models.PLANTED_STATIC, "encoder", models.Planted(contextual=True), "cannot read a corpus"),
    (models.PLANTED_STATIC, "static", {"strength": 0.5}, "must be a polybias.models.Planted"),
])
def test_bad_names_and_planted_options_are_clear_errors(model, kind, planted, message):
    if message is None:
        assert isinstance(models.load(model, kind), Encoder)
        return
    with pytest.raises(models.ModelError, match=message):
        models.load(model, kind, planted=planted)


def test_planted_static_refuses_revision_and_dtype():
    with pytest.raises(models.ModelError, match="revision, dtype and loading options do not apply"):
        models.load(models.PLANTED_STATIC, "static", revision="main")
    with pytest.raises(models.ModelError, match="revision, dtype and loading options do not apply"):
        models.load(models.PLANTED_STATIC, "encoder", dtype="float32")


def test_planted_options_are_ignored_for_other_models(tiny_dir):
    """A notebook passes its planted parameters whatever model it names."""
    lm = models.load(str(tiny_dir), "lm", device="cpu", planted=models.Planted(p=0.9))
    assert lm.name == str(tiny_dir) and lm.kind == "mlm"


# ---------------------------------------------------------------- device and dtype, once

@pytest.fixture
def device_calls(monkeypatch):
    """Every call of the one deciding function, (device given, embedded, device decided)."""
    calls, decide = [], placement.resolve_device

    def spy(device, label="model", embedded=False):
        decided = decide(device, label, embedded)
        calls.append((device, embedded, decided))
        return decided

    monkeypatch.setattr(placement, "resolve_device", spy)
    return calls


@pytest.mark.parametrize("name, kind, embedded", [
    ("planted-mlm", "lm", True), ("planted-causal", "causal", True),
    ("minilm-l6", "encoder", True), ("checkpoint", "lm", False), ("checkpoint", "encoder", False)])
def test_auto_is_decided_once_by_resolve_device(device_calls, tiny_dir, name, kind, embedded):
    loaded = models.load(str(tiny_dir) if name == "checkpoint" else name, kind)
    autos = [c for c in device_calls if c[0] in (None, "", "auto")]
    assert autos == [("auto", embedded, "cpu")]  # one decision; later calls get its answer
    assert all(c[0] == "cpu" for c in device_calls[1:])
    assert loaded.device == "cpu" and {p.device.type for p in loaded.model.parameters()} == {"cpu"}


def test_an_embedded_model_runs_on_the_cpu_under_auto_even_with_cuda(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert placement.resolve_device("auto", embedded=True) == "cpu"
    assert placement.resolve_device("auto") == "cuda"
    assert placement.resolve_device("", embedded=False) == "cuda"


def test_the_model_is_moved_once(monkeypatch, tiny_dir):
    """The checkpoint loader moves the model; the engines' wrappers never do."""
    moves = []
    move = torch.nn.Module.to

    def spy(self, *args, **kwargs):
        moves.append(type(self).__name__)
        return move(self, *args, **kwargs)

    monkeypatch.setattr(torch.nn.Module, "to", spy)
    models.load(str(tiny_dir), "lm", device="cpu")
    assert moves == ["BertForMaskedLM"]
    moves.clear()
    models.load("planted-mlm-control", "lm")
    assert moves == ["BertForMaskedLM"]
    moves.clear()
    model, tok = build_tiny_model("gpt2")
    wrap_language_model(model, tok, "tiny-gpt2")
    wrap_encoder(*build_tiny_encoder("bert"), name="tiny-bert")
    assert moves == []


def test_the_wrappers_check_where_the_model_is_and_its_precision():
    model, tok = build_tiny_model("bert")
    with pytest.raises(ScoringError, match="has weights on cpu, not on 'cuda:0': move it there"):
        wrap_language_model(model, tok, "tiny", device="cuda:0")
    enc_model, enc_tok = build_tiny_encoder("bert")
    with pytest.raises(EmbeddingError, match="has weights on cpu, not on 'cuda'"):
        wrap_encoder(enc_model, enc_tok, name="tiny", device="cuda")
    with pytest.raises(ScoringError, match=r"\(float16 weights\): float16 is supported on CUDA only"):
        wrap_language_model(model.half(), tok, "tiny-half")
    with pytest.raises(errors.DeviceError, match="float16 is supported on CUDA only"):
        placement.resolve_dtype("float16", "cpu", label="model 'm'")


def test_one_base_one_name_per_setting():
    model, tok = build_tiny_model("bert")
    lm = wrap_language_model(model, tok, "tiny")
    enc = wrap_encoder(*build_tiny_encoder("bert"), name="tiny")
    shared = {"model", "tokenizer", "name", "revision", "max_length", "device", "load_info",
              "batch_tokens", "normaliser", "normaliser_name"}
    assert {f.name for f in fields(LoadedModel)} == shared
    assert {f.name for f in fields(lm)} - shared == {"kind"}
    assert {f.name for f in fields(enc)} - shared == {"pooling", "_fingerprint"}
    assert lm.batch_tokens == enc.batch_tokens


def test_the_analytic_model_is_built_from_what_its_refusals_ask_for(tmp_path, monkeypatch):
    """Without a book: ``pass Planted(book=...)``; without a strength: ``needs Planted(p=...)``;
    given both, as the two errors ask, the model is built."""
    monkeypatch.setenv("POLYBIAS_CACHE", str(tmp_path / "cache"))
    book = probes.planted_templates("en")
    with pytest.raises(models.ModelError, match=r"is built from a template book: pass Planted\(book=\.\.\.\)"):
        models.load(models.ANALYTIC, "lm", planted=models.Planted(p=0.9))
    with pytest.raises(models.ModelError, match=r"needs Planted\(p=\.\.\.\), the association strength"):
        models.load(models.ANALYTIC, "lm", planted=models.Planted(book=book))
    lm = models.load(models.ANALYTIC, "lm", planted=models.Planted(p=0.9, book=book))
    assert lm.kind == "mlm" and lm.name == "planted-analytic-p0.9"
