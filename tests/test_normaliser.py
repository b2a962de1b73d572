"""A registry entry's text normaliser: the loaded model carries it and the engines apply it
to every text before tokenising, with offsets and spans still in the text given; a
normaliser that is required but not installed refuses before anything loads."""

from __future__ import annotations

import numpy as np
import pytest
import zoo
from polybias import models
from polybias.engines import embeddings, scoring
from polybias.models import loading


def _fake():
    return lambda text: text.replace("colour", "color").replace("ﬁ", "fi")


@pytest.fixture(scope="module")
def folder(tmp_path_factory, torch_one_thread):
    return zoo.build(zoo.FAMILIES[0], "safetensors", tmp_path_factory.mktemp("norm") / "bert")


@pytest.fixture
def registry(folder, monkeypatch):
    monkeypatch.setitem(loading.NORMALISERS, "fake", _fake)
    return {"tiny": {"kind": "mlm", "path": str(folder), "normaliser": "fake", "languages": ["en"]},
            "plain": {"kind": "mlm", "path": str(folder), "languages": ["en"]}}


TEXT = "The colour of the ﬁeld."


def test_language_model_applies_its_normaliser_before_tokenising(registry):
    lm = models.load("tiny", "lm", registry=registry, device="cpu")
    plain = models.load("plain", "lm", registry=registry, device="cpu")
    assert lm.normaliser is not None and plain.normaliser is None
    normalised = _fake()(TEXT)
    [got] = scoring.pseudo_log_likelihood(lm, [TEXT])
    [want] = scoring.pseudo_log_likelihood(plain, [normalised])
    assert got == pytest.approx(want)
    [scores] = scoring.token_logprobs(lm, [TEXT])
    [ref] = scoring.token_logprobs(plain, [normalised])
    assert scores.text == TEXT and scores.tokens == ref.tokens
    np.testing.assert_allclose(scores.logprob, ref.logprob)
    # offsets are spans of the text given: the tokens over "colour" there are those over
    # "color" in the normalised text, and every offset lies inside the text
    def over(offsets, s, e):
        return [k for k, (a, b) in enumerate(offsets) if b > a and max(a, s) < min(b, e)]

    start = TEXT.index("colour")
    assert over(scores.offsets, start, start + 6) == over(ref.offsets, start, start + 5) != []
    assert scores.offsets.max() <= len(TEXT)


def test_encoder_applies_it_and_spans_stay_in_the_text_given(registry):
    enc = models.load("tiny", "encoder", device="cpu", registry=registry)
    plain = models.load("plain", "encoder", device="cpu", registry=registry)
    normalised = _fake()(TEXT)
    start = TEXT.index("colour")
    got = embeddings.word_vectors(enc, [TEXT], [(start, start + len("colour"))])
    want = embeddings.word_vectors(plain, [normalised], [(start, start + len("color"))])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(embeddings.sentence_vectors(enc, [TEXT]),
                               embeddings.sentence_vectors(plain, [normalised]), rtol=1e-5, atol=1e-6)
    assert embeddings.fingerprint(enc) != embeddings.fingerprint(plain)


def test_missing_normaliser_says_what_to_install(folder, monkeypatch):
    import builtins

    real = builtins.__import__

    def no_normalizer(name, *args, **kwargs):
        if name == "normalizer":
            raise ImportError("No module named 'normalizer'")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_normalizer)
    reg = {"bangla": {"kind": "mlm", "path": str(folder), "normaliser": "banglabert",
                      "languages": ["bn"]}}
    with pytest.raises(models.ModelError) as err:
        models.load("bangla", "lm", registry=reg, device="cpu")
    msg = str(err.value)
    assert "\n" not in msg and msg.startswith("model 'bangla': text normaliser 'banglabert'")
    assert "pip install git+https://github.com/csebuetnlp/normalizer" in msg
    with pytest.raises(models.ModelError, match="csebuetnlp/normalizer"):
        models.load("bangla", "encoder", device="cpu", registry=reg)


def test_banglabert_entries_name_the_normaliser():
    reg = models.load_registry()
    assert reg["banglabert-large-generator"]["normaliser"] == "banglabert"
    assert reg["banglabert-large"]["normaliser"] == "banglabert"
