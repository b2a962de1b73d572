"""Planted-bias corpora, minimal pairs and the small models trained on them.

The four models of the known-answer checks (MLM and causal LM at p = 0.9 and 0.1) are
trained once per session into a temporary cache by ``planted``; the environment points
at that cache only while a test needs it, so other tests keep the project cache.
"""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
import torch
from polybias.planted import model_store, probes, synthetic
from polybias.planted.synthetic import PLANTED_GROUPS, SyntheticError

os.environ.setdefault("HF_HUB_OFFLINE", "1")
pytestmark = pytest.mark.usefixtures("torch_one_thread")

# Small but reliable settings: the MLM needs ~1900 steps (half of them content masking).
SMALL = {"mlm": {"epochs": 10, "batch_size": 16}, "causal": {"epochs": 5, "batch_size": 16}}
N_SENTENCES = 3000


def groups_of(language):
    g = PLANTED_GROUPS[language]
    target = {w: i for i, k in enumerate(("male", "female")) for w in g["targets"][k]}
    attribute = {w: i for i, k in enumerate(("career", "family")) for w in g["attributes"][k]}
    return target, attribute


# ------------------------------------------------------------------ corpus


def test_corpus_is_deterministic_and_seeded():
    a = synthetic.planted_corpus(400, 0.7, seed=3)
    assert a == synthetic.planted_corpus(400, 0.7, seed=3)
    assert a != synthetic.planted_corpus(400, 0.7, seed=4)
    assert len(a) == 400 and all(isinstance(s, str) and s.endswith(" .") for s in a)
    assert synthetic.planted_corpus(0, 0.5) == []


@pytest.mark.parametrize("language", ["en", "bn", "hi"])
@pytest.mark.parametrize("p", [0.0, 0.1, 0.5, 0.9])
def test_corpus_realises_the_planted_share(language, p):
    corpus = synthetic.planted_corpus(5000, p, seed=1, language=language)
    target_of, attribute_of = groups_of(language)
    planted = congruent = 0
    for sentence in corpus:
        words = sentence.split(" ")
        t = [target_of[w] for w in words if w in target_of]
        a = [attribute_of[w] for w in words if w in attribute_of]
        assert len(t) <= 1 and len(a) <= 1, sentence
        if t and a:
            planted += 1
            congruent += t[0] == a[0]
    assert abs(congruent / planted - p) <= 0.03
    assert abs(1 - planted / len(corpus) - 0.25) <= 0.03  # default filler share
    assert synthetic.planted_share(corpus, language) == {
        "n": planted, "congruent": congruent, "share": congruent / planted}


def test_filler_share_and_groups_are_data():
    corpus = synthetic.planted_corpus(2000, 0.9, filler_share=0.0)
    assert synthetic.planted_share(corpus)["n"] == 2000
    groups = synthetic.planted_groups("hi")
    groups["targets"]["male"].append("x")
    assert "x" not in PLANTED_GROUPS["hi"]["targets"]["male"]  # a copy
    for lang, g in PLANTED_GROUPS.items():
        words = [w for kind in g.values() for ws in kind.values() for w in ws]
        assert len(words) == len(set(words)), lang
        assert len(g["targets"]["male"]) == len(g["targets"]["female"])


@pytest.mark.parametrize("bad", [-0.1, 1.5, "0.5", True, float("nan")])
def test_p_outside_unit_interval_is_an_error(bad):
    with pytest.raises(SyntheticError, match="p must be a probability"):
        synthetic.planted_corpus(10, bad)


def test_bad_arguments_name_the_input():
    with pytest.raises(SyntheticError, match="unknown language 'fr'"):
        synthetic.planted_corpus(10, 0.5, language="fr")
    with pytest.raises(SyntheticError, match="unknown language 'xx'"):
        synthetic.minimal_pairs(5, language="xx")
    with pytest.raises(SyntheticError, match="n_sentences"):
        synthetic.planted_corpus(-1, 0.5)
    with pytest.raises(SyntheticError, match="filler_share"):
        synthetic.planted_corpus(10, 0.5, filler_share=2)
    with pytest.raises(SyntheticError, match="n must be an integer"):
        synthetic.minimal_pairs(10**6)
    with pytest.raises(SyntheticError, match="unknown model kind 'rnn'"):
        synthetic.cached_planted_model("rnn", 0.5)
    with pytest.raises(SyntheticError, match="unknown training option.*hiden_size"):
        synthetic.planted_model_spec("mlm", 0.5, hiden_size=8)
    with pytest.raises(SyntheticError, match="corpus must be"):
        synthetic.train_causal_lm([])


# ------------------------------------------------------------------ minimal pairs


@pytest.mark.parametrize("language", ["en", "bn", "hi"])
def test_minimal_pairs_differ_only_in_the_target(language):
    pairs = synthetic.minimal_pairs(100, language=language, seed=2)
    assert list(pairs.columns[:4]) == ["sent_more", "sent_less", "bias_type", "direction"]
    assert len(pairs) == 100 and not pairs.duplicated(["sent_more", "sent_less"]).any()
    assert set(pairs["bias_type"]) == {"gender"} and set(pairs["direction"]) == {"stereo"}
    assert pairs.equals(synthetic.minimal_pairs(100, language=language, seed=2))
    target_of, attribute_of = groups_of(language)
    for row in pairs.itertuples():
        more, less = row.sent_more.split(" "), row.sent_less.split(" ")
        assert len(more) == len(less)
        diff = [(a, b) for a, b in zip(more, less, strict=True) if a != b]
        assert diff == [(row.target_more, row.target_less)]
        # sent_more pairs a target with the attribute group of the same index
        assert target_of[row.target_more] == attribute_of[row.attribute]
        assert target_of[row.target_less] != attribute_of[row.attribute]
        assert row.attribute in more
    assert {"career", "family"} == set(pairs["attribute_group"])


# ------------------------------------------------------------------ tokenizers


def test_tokenizers_have_the_special_tokens_and_whole_words():
    corpus = synthetic.planted_corpus(300, 0.5, language="bn")
    mlm = synthetic.build_tokenizer(corpus, "mlm", model_max_length=48)
    causal = synthetic.build_tokenizer(corpus, "causal")
    for name in ("cls_token", "sep_token", "mask_token", "pad_token", "unk_token"):
        assert getattr(mlm, name) is not None and getattr(mlm, f"{name}_id") is not None
    for name in ("bos_token", "eos_token", "pad_token", "unk_token"):
        assert getattr(causal, f"{name}_id") is not None
    assert mlm.model_max_length == 48 and causal.model_max_length == 64
    sentence = corpus[0]
    tokens = mlm.convert_ids_to_tokens(mlm(sentence)["input_ids"])
    assert tokens == ["[CLS]", *sentence.split(" "), "[SEP]"]
    assert causal.convert_ids_to_tokens(causal(sentence)["input_ids"]) == sentence.split(" ")
    # unseen words split into known pieces instead of becoming unknown
    en = synthetic.build_tokenizer(synthetic.planted_corpus(300, 0.5), "mlm")
    assert en.tokenize("The Mothers") == ["the", "mother", "##s"]


# ------------------------------------------------------------------ trained models


def sentence_score(model, tokenizer, sentence, kind):
    """PLL (MLM: each token masked in turn) or log-likelihood given BOS (causal)."""
    with torch.no_grad():
        if kind == "mlm":
            ids = tokenizer(sentence, return_tensors="pt")["input_ids"][0]
            positions = torch.arange(1, len(ids) - 1)  # [CLS] and [SEP] excluded
            masked = ids.repeat(len(positions), 1)  # copy k has token k masked
            masked[torch.arange(len(positions)), positions] = tokenizer.mask_token_id
            logprobs = model(input_ids=masked).logits.log_softmax(-1)
            return logprobs[torch.arange(len(positions)), positions, ids[positions]].sum().item()
        ids = [tokenizer.bos_token_id, *tokenizer(sentence)["input_ids"]]
        x = torch.tensor([ids])
        logprobs = model(input_ids=x).logits[0, :-1].log_softmax(-1)
        return logprobs[torch.arange(len(ids) - 1), x[0, 1:]].sum().item()


def share_preferring_more(model, tokenizer, pairs, kind):
    wins = [sentence_score(model, tokenizer, r.sent_more, kind)
            > sentence_score(model, tokenizer, r.sent_less, kind) for r in pairs.itertuples()]
    return float(np.mean(wins))


@pytest.fixture(scope="session")
def planted(tmp_path_factory):
    """{(kind, p): (model, tokenizer)} trained once into a temporary cache (returned too),
    with an empty pinned store, so that they are trained here even where pinned."""
    cache = tmp_path_factory.mktemp("planted-cache")
    models = {}
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("POLYBIAS_CACHE", str(cache))
        mp.delenv("POLYBIAS_PLANTED", raising=False)
        mp.setattr(model_store, "store_dir", lambda: cache / "no-pins")
        for kind in ("mlm", "causal"):
            for p in (0.9, 0.1):
                models[kind, p] = synthetic.cached_planted_model(
                    kind, p, seed=0, n_sentences=N_SENTENCES, **SMALL[kind])
    return cache, models


@pytest.mark.parametrize("kind", ["mlm", "causal"])
def test_trained_models_learn_the_planted_direction(planted, kind):
    _, models = planted
    pairs = synthetic.minimal_pairs(100, seed=11)
    stereo = share_preferring_more(*models[kind, 0.9], pairs, kind)
    anti = share_preferring_more(*models[kind, 0.1], pairs, kind)
    assert stereo >= 0.7, f"{kind} at p=0.9 prefers sent_more on only {stereo:.0%}"
    assert anti <= 0.3, f"{kind} at p=0.1 prefers sent_more on {anti:.0%}"


def test_trained_models_are_eval_mode_and_expected_classes(planted):
    _, models = planted
    mlm, mlm_tok = models["mlm", 0.9]
    causal, causal_tok = models["causal", 0.9]
    assert type(mlm).__name__ == "BertForMaskedLM" and type(causal).__name__ == "GPT2LMHeadModel"
    assert not mlm.training and not causal.training
    assert mlm.config.vocab_size == len(mlm_tok) and causal.config.vocab_size == len(causal_tok)
    assert causal.config.bos_token_id == causal_tok.bos_token_id


def state(model):
    return {k: v.clone() for k, v in model.state_dict().items()}


def same_weights(a, b):
    return a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)


@pytest.mark.parametrize("train", [synthetic.train_masked_lm, synthetic.train_causal_lm])
def test_retraining_with_the_same_seed_is_bit_identical(train):
    corpus = synthetic.planted_corpus(200, 0.9, seed=5)
    threads, deterministic = torch.get_num_threads(), torch.are_deterministic_algorithms_enabled()
    rng_before = torch.random.get_rng_state()
    opts = {"epochs": 1, "batch_size": 16, "hidden_size": 32, "intermediate_size": 64}
    first = state(train(corpus, seed=1, **opts)[0])
    second = state(train(corpus, seed=1, **opts)[0])
    other = state(train(corpus, seed=2, **opts)[0])
    assert same_weights(first, second)
    assert not same_weights(first, other)
    # the caller's torch state is restored
    assert torch.get_num_threads() == threads
    assert torch.are_deterministic_algorithms_enabled() == deterministic
    assert torch.equal(torch.random.get_rng_state(), rng_before)


def test_cache_reloads_the_same_weights_without_training(planted, monkeypatch):
    cache, models = planted
    monkeypatch.setenv("POLYBIAS_CACHE", str(cache))
    monkeypatch.setattr(model_store, "store_dir", lambda: cache / "no-pins")

    def no_training(*args, **kwargs):
        raise AssertionError("cached_planted_model trained instead of loading the cache")

    monkeypatch.setitem(synthetic._TRAINERS, "mlm", no_training)
    monkeypatch.setitem(synthetic._TRAINERS, "causal", no_training)
    for kind in ("mlm", "causal"):
        model, tokenizer = synthetic.cached_planted_model(
            kind, 0.9, seed=0, n_sentences=N_SENTENCES, **SMALL[kind])
        assert not model.training
        assert same_weights(state(model), state(models[kind, 0.9][0]))
        assert tokenizer.get_vocab() == models[kind, 0.9][1].get_vocab()
    entries = sorted(path.name for path in (cache / "trained").iterdir())
    assert len(entries) == 4, entries  # a different p or kind is a different entry
    assert not [e for e in entries if e.startswith(".")]  # no temporary folder left
    for entry in entries:
        meta = json.loads((cache / "trained" / entry / "polybias_planted.json").read_text())
        assert entry.startswith(meta["kind"] + "-")
        assert meta["code_version"] == synthetic.CODE_VERSION
        assert meta["training"]["batch_size"] == 16
        assert (cache / "trained" / entry / "model.safetensors").is_file()
    spec = synthetic.planted_model_spec("mlm", 0.9, n_sentences=N_SENTENCES, **SMALL["mlm"])
    assert spec == synthetic.planted_model_spec("mlm", 0.9, 0, "en", N_SENTENCES, 0.25,
                                                epochs=10, batch_size=16, lr=1e-3)


def test_a_failed_training_leaves_no_cache_entry(tmp_path, monkeypatch):
    monkeypatch.setenv("POLYBIAS_CACHE", str(tmp_path))

    def broken(corpus, seed, **size):
        model, tokenizer = synthetic.train_causal_lm(corpus[:20], seed, epochs=1, hidden_size=16,
                                                     intermediate_size=16)
        model.save_pretrained = lambda *a, **k: (_ for _ in ()).throw(OSError("disk full"))
        return model, tokenizer

    monkeypatch.setitem(synthetic._TRAINERS, "causal", broken)
    with pytest.raises(OSError, match="disk full"):
        synthetic.cached_planted_model("causal", 0.5, n_sentences=50)
    assert list((tmp_path / "trained").iterdir()) == []


# ------------------------------------------------------------------ word2vec


def test_word2vec_is_deterministic_and_shows_the_planted_association():
    from polybias.engines.static import lookup
    from polybias.metrics.weat import weat

    g = PLANTED_GROUPS["en"]
    effects = {}
    for p in (0.9, 0.1):
        corpus = synthetic.planted_corpus(3000, p, seed=2)
        emb = synthetic.train_word2vec(corpus, seed=4, vector_size=32, epochs=5)
        again = synthetic.train_word2vec(corpus, seed=4, vector_size=32, epochs=5)
        assert emb.words == again.words and np.array_equal(emb.vectors, again.vectors)
        assert emb.revision == again.revision and emb.vectors.dtype == np.float32
        sets = [lookup(emb, g[k][s])[0] for k, s in (("targets", "male"), ("targets", "female"),
                                                     ("attributes", "career"),
                                                     ("attributes", "family"))]
        effects[p] = weat(*sets, n_permutations=1000).effect_size
    assert effects[0.9] > 0.5 and effects[0.1] < -0.5, effects


def test_hindi_planted_templates_use_only_the_corpus_vocabulary():
    from polybias.metrics import logprob
    from polybias.planted.synthetic import planted_corpus

    book = probes.planted_templates("hi")
    vocab = {w for sentence in planted_corpus(3000, 0.5, seed=0, language="hi") for w in sentence.split()}
    words = {w for t in book.templates.values() for w in t.text.split()} - {"{target}", "{attribute}"}
    assert len(book.templates) == 3 and words <= vocab, sorted(words - vocab)
    members = logprob.group_members(book, "targets")
    assert set(members) == {"male", "female"} and len(members["male"]) == 8


