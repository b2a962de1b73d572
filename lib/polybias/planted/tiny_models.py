"""Tiny random-weight language models with locally trained tokenizers, one per family.

Tests and examples need every tokenizer and architecture family the project scores
(the embedded defaults, README) without the network. :func:`build_tiny_model` trains a tokenizer with
the ``tokenizers`` library on a small built-in English corpus (:data:`CORPUS`) and
builds a ``transformers`` model of that family from a small config with random weights
(seeded with ``torch.manual_seed``; the global torch RNG is left untouched). Same family,
seed and options give identical tokenizers and weights.

====================  =======================================  ==========================
family                model class                              tokenizer
====================  =======================================  ==========================
``bert``              ``BertForMaskedLM``                      WordPiece, uncased
``roberta``           ``RobertaForMaskedLM``                   byte-level BPE
``albert``            ``AlbertForMaskedLM``                    Unigram (SentencePiece ▁)
``electra``           ``ElectraForMaskedLM`` (generator)       WordPiece, uncased
``gpt2``              ``GPT2LMHeadModel``                      byte-level BPE, no BOS added
``llama``             ``LlamaForCausalLM``                     BPE (SentencePiece ▁), BOS
====================  =======================================  ==========================

The models are untrained: their predictions are noise, but they exercise the same code
paths (special tokens, offsets, word ids, padding, position ids) as the real ones.
"""

from __future__ import annotations

import json
from typing import Any

import torch

FAMILIES = ("bert", "roberta", "albert", "electra", "gpt2", "llama")
MASKED_FAMILIES = ("bert", "roberta", "albert", "electra")
CAUSAL_FAMILIES = ("gpt2", "llama")

#: Small English corpus the tiny tokenizers are trained on (CrowS-Pairs-like sentences,
#: punctuation, contractions, numbers, some long words that split into pieces).
CORPUS: tuple[str, ...] = (
    "The doctor said that she would be late for the meeting.",
    "The nurse said that he would be late for the meeting.",
    "My neighbour is a carpenter and he builds beautiful furniture.",
    "Her grandmother taught mathematics at the university for thirty years.",
    "The engineers couldn't finish the bridge before the winter storms.",
    "People from the countryside are often described as hardworking and honest.",
    "The young programmer wrote thousands of lines of code every week.",
    "He was too poor to afford a new winter coat.",
    "She was too rich to care about the price of bread.",
    "The immigrants opened a small restaurant near the station.",
    "My sister plays football on Sundays with her friends.",
    "The old man walked slowly across the busy street.",
    "The children were laughing loudly in the playground.",
    "Our teacher explained the experiment very patiently.",
    "The lawyer argued that the evidence was unreliable.",
    "They moved to the city because they wanted better jobs.",
    "Nobody believed that the secretary had written the report.",
    "The pilot announced that the flight would be delayed by 45 minutes.",
    "I don't think he's going to come to the party tonight.",
    "We're planning a trip to the mountains in September.",
    "The scientist published an important paper about climate change.",
    "A friendly waiter brought us coffee and two slices of cake.",
    "The manager refused to listen to the workers' complaints.",
    "Women are just as capable as men in leadership positions.",
    "Men are just as capable as women in caring professions.",
    "The boy cried because he lost his favourite toy.",
    "The girl fixed the broken bicycle by herself.",
    "Religious communities organised a charity concert downtown.",
    "The Christian family celebrated the holiday with a big dinner.",
    "The Muslim family celebrated the holiday with a big dinner.",
    "The Jewish family celebrated the holiday with a big dinner.",
    "Gay couples adopted children and raised them with love.",
    "The straight couple adopted a child and raised her with love.",
    "Poor students rarely get the opportunities that rich students have.",
    "The elderly woman understood the new smartphone immediately.",
    "Disabled athletes competed in the international championship.",
    "The journalist interviewed the president about unemployment.",
    "Everyone in the village knew the baker and his daughter.",
    "The mechanic repaired the engine in less than an hour.",
    "My brother is studying chemistry and biology at college.",
    "The committee postponed its decision until next Thursday.",
    "Thousands of volunteers helped after the terrible earthquake.",
    "She is a brilliant surgeon who saved many lives.",
    "He is a gentle kindergarten teacher who loves music.",
    "The Mexican workers were building houses in the suburbs.",
    "The American tourists were taking photographs of the cathedral.",
    "African students won the national science competition.",
    "Asian students won the national science competition.",
    "The refugees waited for hours outside the embassy.",
    "Wealthy investors bought most of the apartments downtown.",
    "The farmer sold vegetables and fresh eggs at the market.",
    "It was raining, so we stayed inside and read books.",
    "The library closes at 8 p.m. on weekdays.",
    "Can you believe the price of petrol went up again?",
    "Unbelievably, the smallest team won the tournament.",
    "The photographer's exhibition attracted enormous crowds.",
    "Her husband cooked dinner while she repaired the roof.",
    "His wife repaired the roof while he cooked dinner.",
    "The software company hired twelve new developers last month.",
    "Local authorities announced new regulations for public transport.",
)

_SPECIALS: dict[str, dict[str, str]] = {
    "bert": {"pad": "[PAD]", "unk": "[UNK]", "cls": "[CLS]", "sep": "[SEP]", "mask": "[MASK]"},
    "electra": {"pad": "[PAD]", "unk": "[UNK]", "cls": "[CLS]", "sep": "[SEP]", "mask": "[MASK]"},
    "roberta": {"bos": "<s>", "pad": "<pad>", "eos": "</s>", "unk": "<unk>", "mask": "<mask>"},
    "albert": {"pad": "<pad>", "unk": "<unk>", "cls": "[CLS]", "sep": "[SEP]", "mask": "[MASK]"},
    "gpt2": {"bos": "<|endoftext|>", "eos": "<|endoftext|>", "unk": "<|endoftext|>"},
    "llama": {"unk": "<unk>", "bos": "<s>", "eos": "</s>"},
}

#: Small default architecture sizes; ``max_len`` is the longest input, special tokens included.
_SIZES = dict(hidden=32, layers=2, heads=2, intermediate=64, max_len=64)


def _check_family(family: str) -> None:
    if family not in FAMILIES:
        raise ValueError(f"unknown tiny-model family {family!r}; use one of {', '.join(FAMILIES)}")


def _wordpiece_vocab(corpus: list[str], vocab_size: int, specials: list[str], normalizer,
                     pre_tokenizer) -> dict[str, int]:
    """A WordPiece vocabulary from a (deterministic) BPE run without a subword prefix.

    Every character of the corpus enters twice (``c`` and ``##c``, so nothing in the
    corpus is unknown); then the pieces BPE splits the corpus words into, a word's first
    piece as is and the others with ``##``, in the order BPE learned them. The BPE target
    shrinks until the vocabulary fits ``vocab_size``.
    """
    from tokenizers import Tokenizer, models, trainers  # lazy: heavy; model code only

    words = sorted({w for s in corpus for w, _ in pre_tokenizer.pre_tokenize_str(
        normalizer.normalize_str(s))})
    chars = sorted({c for w in words for c in w})
    base = list(specials) + chars + ["##" + c for c in chars]
    target = vocab_size
    while True:
        bpe = Tokenizer(models.BPE())
        bpe.normalizer, bpe.pre_tokenizer = normalizer, pre_tokenizer
        trainer = trainers.BpeTrainer(vocab_size=max(target, 1), min_frequency=1, show_progress=False)
        bpe.train_from_iterator(corpus, trainer=trainer)
        rank = bpe.get_vocab()
        pieces = set()
        for w in words:
            toks = [t.value for t in bpe.model.tokenize(w)]
            pieces.update([toks[0]] + ["##" + t for t in toks[1:]])
        extra = sorted(pieces - set(base), key=lambda p: (rank[p.removeprefix("##")], p))
        vocab = base + extra
        if len(vocab) <= vocab_size or not extra:
            break
        target -= len(vocab) - vocab_size
    vocab = vocab[:max(vocab_size, len(base))]
    return {p: i for i, p in enumerate(vocab)}


def _canonical_unigram(tok, specials: list[str], unk: str):
    """The trained Unigram model with its pieces in a canonical order: specials, then by
    score (rounded to 1e-8, below the trainer's float noise) and piece."""
    from tokenizers import models  # lazy: heavy; model code only

    trained = json.loads(tok.to_str())["model"]["vocab"]
    scores = {p: round(float(s), 8) for p, s in trained}
    rest = sorted((p for p in scores if p not in specials), key=lambda p: (-scores[p], p))
    vocab = [(p, scores.get(p, 0.0)) for p in specials] + [(p, scores[p]) for p in rest]
    return models.Unigram(vocab, unk_id=specials.index(unk), byte_fallback=False)



def build_tokenizer(family: str, vocab_size: int = 400, corpus: list[str] | tuple[str, ...] | None = None,
                    max_length: int = 64):
    """Train the tokenizer of ``family`` on ``corpus`` (default :data:`CORPUS`).

    Returns a ``transformers.PreTrainedTokenizerFast`` with the family's special tokens
    and ``model_max_length = max_length``. Training is deterministic: byte-level and
    ▁-BPE come straight from the ``tokenizers`` trainer; the WordPiece vocabulary is derived
    from a BPE run (the library's WordPiece trainer breaks ties at random) and the Unigram
    vocabulary is put in a canonical order (its trainer orders equal scores at random).
    """
    from tokenizers import (
        AddedToken,
        Tokenizer,
        decoders,
        models,
        normalizers,
        pre_tokenizers,
        processors,
        trainers,
    )  # lazy: heavy; model code only
    from transformers import PreTrainedTokenizerFast  # lazy: heavy; model code only

    _check_family(family)
    if vocab_size < 50:
        raise ValueError(f"vocab_size must be at least 50, got {vocab_size}")
    corpus = list(CORPUS if corpus is None else corpus)
    sp = _SPECIALS[family]
    specials = list(dict.fromkeys(sp.values()))  # order fixes the special ids (0, 1, ...)

    if family in ("bert", "electra"):
        normalizer = normalizers.BertNormalizer(lowercase=True, strip_accents=None,
                                                clean_text=True, handle_chinese_chars=True)
        pre = pre_tokenizers.BertPreTokenizer()
        vocab = _wordpiece_vocab(corpus, vocab_size, specials, normalizer, pre)
        tok = Tokenizer(models.WordPiece(vocab, unk_token=sp["unk"], max_input_chars_per_word=100))
        tok.normalizer, tok.pre_tokenizer = normalizer, pre
        tok.decoder = decoders.WordPiece(prefix="##")
    elif family in ("roberta", "gpt2"):
        tok = Tokenizer(models.BPE())
        tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        tok.decoder = decoders.ByteLevel()
        trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=specials, min_frequency=1,
                                      initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
                                      show_progress=False)
        tok.train_from_iterator(corpus, trainer=trainer)
    elif family == "albert":
        tok = Tokenizer(models.Unigram())
        tok.normalizer = normalizers.Sequence([
            normalizers.Replace("``", '"'), normalizers.Replace("''", '"'),
            normalizers.NFKD(), normalizers.StripAccents(), normalizers.Lowercase()])
        tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="always")
        tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="always")
        trainer = trainers.UnigramTrainer(vocab_size=vocab_size, special_tokens=specials,
                                          unk_token=sp["unk"], show_progress=False)
        tok.train_from_iterator(corpus, trainer=trainer)
        tok.model = _canonical_unigram(tok, specials, sp["unk"])
    else:  # llama: SentencePiece-style BPE on ▁-marked words
        tok = Tokenizer(models.BPE(unk_token=sp["unk"], fuse_unk=True))
        tok.pre_tokenizer = pre_tokenizers.Metaspace(replacement="▁", prepend_scheme="first")
        tok.decoder = decoders.Metaspace(replacement="▁", prepend_scheme="first")
        trainer = trainers.BpeTrainer(vocab_size=vocab_size, special_tokens=specials, min_frequency=1,
                                      show_progress=False)
        tok.train_from_iterator(corpus, trainer=trainer)

    ids = {k: tok.token_to_id(v) for k, v in sp.items()}
    if family in ("bert", "electra", "albert"):
        tok.post_processor = processors.TemplateProcessing(
            single=f"{sp['cls']} $A {sp['sep']}", pair=f"{sp['cls']} $A {sp['sep']} $B:1 {sp['sep']}:1",
            special_tokens=[(sp["cls"], ids["cls"]), (sp["sep"], ids["sep"])])
    elif family == "roberta":
        tok.post_processor = processors.RobertaProcessing(
            (sp["eos"], ids["eos"]), (sp["bos"], ids["bos"]), add_prefix_space=False, trim_offsets=True)
    elif family == "gpt2":
        tok.post_processor = processors.ByteLevel(trim_offsets=False)
    else:  # llama adds BOS only
        tok.post_processor = processors.TemplateProcessing(
            single=f"{sp['bos']} $A", pair=f"{sp['bos']} $A {sp['bos']} $B",
            special_tokens=[(sp["bos"], ids["bos"])])

    kwargs: dict[str, Any] = {f"{k}_token": v for k, v in sp.items()}
    if family == "roberta":  # RoBERTa's mask token swallows the space before it
        kwargs["mask_token"] = AddedToken(sp["mask"], lstrip=True, rstrip=False, special=True)
    out = PreTrainedTokenizerFast(tokenizer_object=tok, model_max_length=max_length,
                                  padding_side="right", **kwargs)
    return out


def _config(family: str, vocab_size: int, tokenizer):
    from transformers import (
        AlbertConfig,
        BertConfig,
        ElectraConfig,
        GPT2Config,
        LlamaConfig,
        RobertaConfig,
    )  # lazy: heavy; model code only

    s = _SIZES
    common = dict(hidden_size=s["hidden"], num_hidden_layers=s["layers"],
                  num_attention_heads=s["heads"], intermediate_size=s["intermediate"],
                  vocab_size=vocab_size, initializer_range=0.2)
    tk = tokenizer
    if family == "bert":
        cfg = dict(common, max_position_embeddings=s["max_len"], pad_token_id=tk.pad_token_id)
        return BertConfig, cfg
    if family == "electra":
        cfg = dict(common, embedding_size=16, max_position_embeddings=s["max_len"],
                   pad_token_id=tk.pad_token_id)
        return ElectraConfig, cfg
    if family == "roberta":  # position ids start after the padding index
        cfg = dict(common, max_position_embeddings=s["max_len"] + tk.pad_token_id + 1,
                   pad_token_id=tk.pad_token_id, bos_token_id=tk.bos_token_id,
                   eos_token_id=tk.eos_token_id, type_vocab_size=1)
        return RobertaConfig, cfg
    if family == "albert":
        cfg = dict(common, embedding_size=16, max_position_embeddings=s["max_len"],
                   pad_token_id=tk.pad_token_id, bos_token_id=tk.cls_token_id,
                   eos_token_id=tk.sep_token_id)
        return AlbertConfig, cfg
    if family == "gpt2":
        cfg = dict(n_embd=s["hidden"], n_layer=s["layers"], n_head=s["heads"], n_inner=s["intermediate"],
                   n_positions=s["max_len"], vocab_size=vocab_size, initializer_range=0.2,
                   bos_token_id=tk.bos_token_id, eos_token_id=tk.eos_token_id)
        return GPT2Config, cfg
    cfg = dict(common, num_key_value_heads=1, max_position_embeddings=s["max_len"],
               bos_token_id=tk.bos_token_id, eos_token_id=tk.eos_token_id, tie_word_embeddings=False)
    return LlamaConfig, cfg


_MODEL_CLASSES = {
    "bert": ("BertForMaskedLM", "BertModel"),
    "electra": ("ElectraForMaskedLM", "ElectraModel"),
    "roberta": ("RobertaForMaskedLM", "RobertaModel"),
    "albert": ("AlbertForMaskedLM", "AlbertModel"),
    "gpt2": ("GPT2LMHeadModel", "GPT2Model"),
    "llama": ("LlamaForCausalLM", "LlamaModel"),
}


def _build(family: str, seed: int, vocab_size: int, corpus, overrides: dict[str, Any], head: bool):
    import transformers  # lazy: heavy; model code only

    _check_family(family)
    tokenizer = build_tokenizer(family, vocab_size, corpus)
    config_cls, cfg = _config(family, max(vocab_size, len(tokenizer)), tokenizer)
    bad = [k for k in overrides if not hasattr(config_cls(), k)]
    if bad:
        raise ValueError(f"{config_cls.__name__} has no option(s) {', '.join(bad)}")
    cfg.update(overrides)
    config = config_cls(**cfg)
    max_pos = getattr(config, "n_positions", None) or config.max_position_embeddings
    if family == "roberta":
        max_pos -= config.pad_token_id + 1
    tokenizer.model_max_length = int(max_pos)
    model_cls = getattr(transformers, _MODEL_CLASSES[family][0 if head else 1])
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = model_cls(config)
    model.eval()
    return model, tokenizer


def build_tiny_model(family: str, seed: int = 0, vocab_size: int = 400,
                     corpus: list[str] | tuple[str, ...] | None = None, **config_overrides):
    """A tiny random-weight language model of ``family`` and its tokenizer.

    Parameters
    ----------
    family : one of :data:`FAMILIES` (``bert``, ``roberta``, ``albert``, ``electra``,
        ``gpt2``, ``llama``).
    seed : seed of the weight initialisation (``torch.manual_seed``).
    vocab_size : target vocabulary of the tokenizer; the model's embedding matrix has
        ``max(vocab_size, len(tokenizer))`` rows (a small corpus may yield fewer tokens;
        the extra rows are never produced by the tokenizer but enter the softmax).
    corpus : sentences to train the tokenizer on (default :data:`CORPUS`).
    config_overrides : passed to the family's ``transformers`` config (e.g.
        ``hidden_size=768, num_hidden_layers=12``); an option the config lacks is an error.

    Returns
    -------
    (model, tokenizer) : the ``…ForMaskedLM`` / ``…ForCausalLM`` / ``GPT2LMHeadModel`` in
        eval mode and a ``PreTrainedTokenizerFast`` whose ``model_max_length`` is the
        longest input the model accepts (64 tokens by default, special tokens included).

    >>> model, tok = build_tiny_model("bert")
    >>> type(model).__name__, tok.mask_token, tok.model_max_length
    ('BertForMaskedLM', '[MASK]', 64)
    """
    return _build(family, seed, vocab_size, corpus, config_overrides, head=True)


def build_tiny_encoder(family: str = "bert", seed: int = 0, vocab_size: int = 400,
                       corpus: list[str] | tuple[str, ...] | None = None, **config_overrides):
    """Like :func:`build_tiny_model` but the bare encoder/decoder without an LM head
    (``BertModel``, ``GPT2Model``, …): what scoring must refuse."""
    return _build(family, seed, vocab_size, corpus, config_overrides, head=False)
