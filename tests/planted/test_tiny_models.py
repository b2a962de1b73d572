import numpy as np
import pytest
import torch
from polybias.planted.tiny_models import (
    CAUSAL_FAMILIES,
    FAMILIES,
    MASKED_FAMILIES,
    build_tiny_encoder,
    build_tiny_model,
    build_tokenizer,
)
from transformers import PreTrainedTokenizerFast

TEXT = "The photographer's neighbour couldn't believe it, unbelievably."

# family -> (model class, special tokens it must have, special tokens it must lack)
EXPECTED = {
    "bert": ("BertForMaskedLM", {"cls_token": "[CLS]", "sep_token": "[SEP]", "mask_token": "[MASK]",
                                 "pad_token": "[PAD]", "unk_token": "[UNK]"}, ("bos_token",)),
    "electra": ("ElectraForMaskedLM", {"cls_token": "[CLS]", "sep_token": "[SEP]",
                                       "mask_token": "[MASK]", "pad_token": "[PAD]"}, ("bos_token",)),
    "roberta": ("RobertaForMaskedLM", {"bos_token": "<s>", "eos_token": "</s>", "mask_token": "<mask>",
                                       "pad_token": "<pad>", "unk_token": "<unk>"}, ()),
    "albert": ("AlbertForMaskedLM", {"cls_token": "[CLS]", "sep_token": "[SEP]", "mask_token": "[MASK]",
                                     "pad_token": "<pad>", "unk_token": "<unk>"}, ("bos_token",)),
    "gpt2": ("GPT2LMHeadModel", {"bos_token": "<|endoftext|>", "eos_token": "<|endoftext|>"},
             ("pad_token", "mask_token")),
    "llama": ("LlamaForCausalLM", {"bos_token": "<s>", "eos_token": "</s>", "unk_token": "<unk>"},
              ("pad_token", "mask_token")),
}

# what the tokenizer adds around a text: (first token, last token) or None for nothing
FRAME = {"bert": ("[CLS]", "[SEP]"), "electra": ("[CLS]", "[SEP]"), "albert": ("[CLS]", "[SEP]"),
         "roberta": ("<s>", "</s>"), "gpt2": None, "llama": ("<s>", None)}


@pytest.fixture(scope="module", autouse=True)
def one_thread(torch_one_thread):
    """Every test here runs torch on one thread (see conftest)."""


@pytest.fixture(scope="module", params=FAMILIES)
def built(request):
    return request.param, *build_tiny_model(request.param)


def test_families_are_split_by_kind():
    assert set(MASKED_FAMILIES) | set(CAUSAL_FAMILIES) == set(FAMILIES)
    assert not set(MASKED_FAMILIES) & set(CAUSAL_FAMILIES)


def test_model_class_eval_mode_and_special_tokens(built):
    family, model, tok = built
    cls_name, has, lacks = EXPECTED[family]
    assert type(model).__name__ == cls_name
    assert not model.training
    assert isinstance(tok, PreTrainedTokenizerFast) and tok.is_fast
    for attr, value in has.items():
        assert getattr(tok, attr) == value, attr
        assert getattr(tok, attr + "_id") is not None and getattr(tok, attr + "_id") < len(tok)
    for attr in lacks:
        assert getattr(tok, attr) is None, attr
    assert tok.model_max_length == 64
    assert model.config.vocab_size >= len(tok)


def test_special_tokens_frame_the_text(built):
    family, _, tok = built
    enc = tok(TEXT, return_special_tokens_mask=True, return_offsets_mapping=True)
    tokens = tok.convert_ids_to_tokens(enc["input_ids"])
    frame = FRAME[family]
    mask = enc["special_tokens_mask"]
    if frame is None:
        assert not any(mask)
    else:
        first, last = frame
        assert tokens[0] == first and mask[0] == 1
        if last is None:
            assert mask[-1] == 0
        else:
            assert tokens[-1] == last and mask[-1] == 1
    # offsets point into the text; word ids exist for every content token
    words = enc.word_ids()
    for (s, e), m, w in zip(enc["offset_mapping"], mask, words, strict=True):
        assert 0 <= s <= e <= len(TEXT)
        assert (w is None) == bool(m)
    assert max(w for w in words if w is not None) >= 5
    # a tiny vocabulary splits some words into several pieces
    content = [w for w, m in zip(words, mask, strict=True) if not m]
    assert len(content) > len(set(content))


def test_decode_roundtrip(built):
    family, _, tok = built
    text = "The nurse said that he would be late."
    decoded = tok.decode(tok(text)["input_ids"], skip_special_tokens=True).strip()
    expected = text.lower() if family in ("bert", "electra", "albert") else text
    assert decoded.replace(" .", ".") == expected


def test_accepts_model_max_length_tokens(built):
    family, model, tok = built
    n = tok.model_max_length
    words = ["the"]
    while len(tok(" ".join(words))["input_ids"]) < n:
        words.append("the")
    ids = tok(" ".join(words))["input_ids"]
    assert len(ids) == n
    with torch.inference_mode():
        out = model(input_ids=torch.tensor([ids]))
    assert out.logits.shape == (1, n, model.config.vocab_size)
    assert torch.isfinite(out.logits).all()


def test_same_seed_same_model_other_seed_other_weights():
    state = torch.random.get_rng_state()
    m1, t1 = build_tiny_model("roberta", seed=3)
    m2, t2 = build_tiny_model("roberta", seed=3)
    m3, _ = build_tiny_model("roberta", seed=4)
    assert torch.equal(torch.random.get_rng_state(), state)  # global RNG untouched
    assert t1.get_vocab() == t2.get_vocab()
    s1, s2, s3 = m1.state_dict(), m2.state_dict(), m3.state_dict()
    assert all(torch.equal(s1[k], s2[k]) for k in s1)
    assert not torch.equal(s1["roberta.embeddings.word_embeddings.weight"],
                           s3["roberta.embeddings.word_embeddings.weight"])


@pytest.mark.parametrize("family", FAMILIES)
def test_tokenizer_training_is_deterministic(family):
    """The tokenizers trainers break ties through hash maps seeded at random, so a
    non-canonicalised WordPiece/Unigram vocabulary differs from one call to the next."""
    vocabs = [build_tokenizer(family).get_vocab() for _ in range(3)]
    assert vocabs[0] == vocabs[1] == vocabs[2]


def test_vocab_size_and_overrides():
    model, tok = build_tiny_model("bert", vocab_size=300, hidden_size=48, num_hidden_layers=1)
    assert len(tok) <= 300 and model.config.vocab_size == 300
    assert model.config.hidden_size == 48 and len(model.bert.encoder.layer) == 1
    big, tok_big = build_tiny_model("gpt2", vocab_size=5000)
    assert big.config.vocab_size == 5000 and len(tok_big) < 5000  # padded embedding matrix


def test_custom_corpus():
    _, tok = build_tiny_model("bert", corpus=["zebra quagga okapi"] * 5)
    assert "zebra" in tok.get_vocab() and "doctor" not in tok.get_vocab()


def test_encoders_have_no_lm_head():
    for family, name in [("bert", "BertModel"), ("gpt2", "GPT2Model"), ("roberta", "RobertaModel")]:
        model, tok = build_tiny_encoder(family)
        assert type(model).__name__ == name
        assert model.get_output_embeddings() is None
        assert tok.model_max_length == 64


def test_unknown_family_and_bad_options():
    with pytest.raises(ValueError, match="unknown tiny-model family 'xlnet'.*bert.*llama"):
        build_tiny_model("xlnet")
    with pytest.raises(ValueError, match="no option.*hidden_sise"):
        build_tiny_model("bert", hidden_sise=8)
    with pytest.raises(ValueError, match="vocab_size"):
        build_tiny_model("bert", vocab_size=10)


def test_predictions_are_not_uniform(built):
    """Weights are initialised widely enough that predictions differ between tokens
    (scoring tests would otherwise compare near-constant numbers)."""
    _, model, tok = built
    with torch.inference_mode():
        lp = model(input_ids=torch.tensor([tok(TEXT)["input_ids"]])).logits.log_softmax(-1)
    assert float(lp.max(-1).values.mean()) > -np.log(model.config.vocab_size) + 1.0
