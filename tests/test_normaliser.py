"""A registry entry's text normaliser: the loaded model carries it and the engines apply it
to every text before tokenising, with offsets and spans still in the text given; run
records name it; ``banglabert`` is this project's implementation (no extra package), and
``banglabert-upstream``, the csebuetnlp package, refuses before anything loads when it is
not installed."""

from __future__ import annotations

import numpy as np
import pytest
import zoo
from polybias import models
from polybias.engines import embeddings, scoring
from polybias.models import errors, loading, normalisers


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


def _without_upstream(monkeypatch):
    import builtins

    real = builtins.__import__

    def no_normalizer(name, *args, **kwargs):
        if name == "normalizer":
            raise ImportError("No module named 'normalizer'")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_normalizer)


def test_banglabert_needs_no_extra_package_and_upstream_says_what_to_install(folder, monkeypatch):
    _without_upstream(monkeypatch)
    reg = {"bangla": {"kind": "mlm", "path": str(folder), "normaliser": "banglabert",
                      "languages": ["bn"]},
           "upstream": {"kind": "mlm", "path": str(folder), "normaliser": "banglabert-upstream",
                        "languages": ["bn"]}}
    lm = models.load("bangla", "lm", registry=reg, device="cpu")  # this project's implementation
    assert lm.normaliser.to_record() == {
        "name": "banglabert", "implementation": "polybias.models.normalisers.banglabert_normalise",
        "version": f"{normalisers.VERSION} (ftfy {normalisers.ftfy_version()})"}
    assert lm.normaliser("অা") == "আ"
    with pytest.raises(models.ModelError) as err:  # asked for by name: refused, saying why
        models.load("upstream", "lm", registry=reg, device="cpu")
    msg = str(err.value)
    assert "\n" not in msg and msg.startswith("model 'upstream': text normaliser 'banglabert-upstream'")
    assert "pip install git+https://github.com/csebuetnlp/normalizer" in msg
    with pytest.raises(models.ModelError, match="csebuetnlp/normalizer"):
        models.load("upstream", "encoder", device="cpu", registry=reg)
    with pytest.raises(models.ModelError, match="names text normaliser 'bangla'; known: banglabert, "
                                                "banglabert-upstream"):
        models.check_loading_keys("m", {"kind": "mlm", "normaliser": "bangla"})


def test_upstream_package_is_used_when_installed(folder, monkeypatch):
    """A stand-in module named ``normalizer`` with the upstream signature is picked up and
    recorded with its version."""
    import sys
    import types

    fake = types.ModuleType("normalizer")
    fake.__version__ = "0.0.1"

    def normalize(text, unicode_norm="NFKC", punct_replacement=None, url_replacement=None,
                  emoji_replacement=None, apply_unicode_norm_last=True):
        return text.upper()

    fake.normalize = normalize
    monkeypatch.setitem(sys.modules, "normalizer", fake)
    found = loading.get_normaliser("banglabert-upstream")
    assert found("ab") == "AB"
    assert found.to_record() == {"name": "banglabert-upstream",
                                 "implementation": "normalizer.normalize (csebuetnlp)",
                                 "version": "0.0.1"}
    fake.normalize = lambda text: text  # another package of the same name
    with pytest.raises(errors.NormaliserError, match="not the csebuetnlp one"):
        loading.get_normaliser("banglabert-upstream")


def test_run_records_name_the_normaliser(registry, tmp_path):
    """Every record of a model with a normaliser names it; a model without one says null."""
    from polybias.results import records
    from polybias.studies import crows_pairs as crows

    lm = models.load("tiny", "lm", registry=registry, device="cpu")
    plain = models.load("plain", "lm", registry=registry, device="cpu")
    for model, out in ((lm, tmp_path / "tiny"), (plain, tmp_path / "plain")):
        crows.run_crows(model, "planted", "en", n_pairs=6, n_bootstrap=0, output_dir=str(out))
    tiny = [records.read_record(p) for p in sorted((tmp_path / "tiny").glob("*.json"))]
    assert len(tiny) == 2
    want = {"name": "fake", "implementation": f"{__name__}._fake.<locals>.<lambda>", "version": None}
    assert all(r["normaliser"] == want for r in tiny)
    assert all(records.read_record(p)["normaliser"] is None
               for p in (tmp_path / "plain").glob("*.json"))
    enc = models.load("tiny", "encoder", device="cpu", registry=registry)
    assert records.model_fields(enc) == {"model_revision": enc.revision, "normaliser": want,
                                         "engine": {"device": "cpu", "dtype": "float32",
                                                    "batch_tokens": 8192}}
    bangla = models.load("tiny", "lm", registry={"tiny": {**registry["tiny"], "normaliser": "banglabert"}},
                         device="cpu")
    record = records.Record(metric="m", model="tiny", language="bn", test="t", parameters={},
                            values={}, **records.model_fields(bangla))
    assert record.to_dict()["normaliser"]["implementation"] == \
        "polybias.models.normalisers.banglabert_normalise"


def test_banglabert_entries_name_the_normaliser():
    reg = models.load_registry()
    assert reg["banglabert-large-generator"]["normaliser"] == "banglabert"
    assert reg["banglabert-large"]["normaliser"] == "banglabert"
