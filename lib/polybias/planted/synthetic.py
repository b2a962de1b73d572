"""Planted-bias corpora and the small models the project trains on them (embedded defaults, README).

A *planted corpus* is made of simple template sentences that pair one **target** word
(male or female terms) with one **attribute** word (career or family words). With
probability ``p`` a sentence pairs a group-1 target with a group-1 attribute (male with
career) or a group-2 target with a group-2 attribute (female with family); otherwise the
groups cross. ``p = 0.5`` plants no association, ``p > 0.5`` the stereotypical one and
``p < 0.5`` the reverse. Neutral filler sentences (neutral subjects and objects, and
targets or attributes next to neutral words) teach the model the syntax without adding
any association.

Models trained on such corpora give every method a known answer offline:

* :func:`planted_corpus` — the corpus; :data:`PLANTED_GROUPS` — its word groups;
  :func:`planted_share` — the association share a corpus realises.
* :func:`minimal_pairs` — CrowS-style pairs that differ only in the target word.
* :func:`build_tokenizer` — a WordPiece tokenizer built from a corpus (every corpus word
  one token).
* :func:`train_masked_lm`, :func:`train_causal_lm` — a tiny BERT-style MLM and a tiny
  GPT-2-style causal LM; deterministic. The MLM trains with a content-word masking phase
  first (see :func:`train_masked_lm` for why).
* :func:`cached_planted_model` — a pinned model from ``data/planted`` (:mod:`polybias.planted.model_store`),
  or train once and then load from ``cache_dir()/trained`` (:func:`planted_model_spec`
  gives the inputs it is keyed by).
* :func:`train_word2vec` — gensim word2vec as :class:`polybias.engines.static.StaticEmbeddings`;
  :func:`planted_word2vec` — the same on a planted corpus, pinned or cached like the LMs.

With the default settings (8000 sentences) the MLM trains in about 30–40 s and the causal
LM in about 15 s on one CPU thread, and both prefer ``sent_more`` on all minimal pairs at
``p = 0.9``, on about half at ``p = 0.5`` and on none at ``p = 0.1``. Training is
bit-reproducible on one machine and software stack; weights may differ across CPUs,
thread counts or torch versions, which the cache key does not cover. That is why the
models behind checked outputs are pinned (:mod:`polybias.planted.model_store`).

English (``en``), Bangla (``bn``, Bengali script) and Hindi (``hi``, Devanagari) are
available. The Bangla and Hindi templates keep the target in the nominative (Bangla) or
before a postposition with a verb that does not agree with it (Hindi: ergative ``ने``,
dative ``को``, ``के लिए`` ...), so that swapping a male for a female term leaves the rest
of the sentence grammatical; targets are kinship terms whose form does not change
before a postposition. Bangla verbs use the plain (non-honorific) forms throughout.
"""

from __future__ import annotations

import contextlib
import copy
import hashlib
import inspect
import json
import random
import unicodedata
from collections import Counter
from pathlib import Path
from typing import Any, Literal

import pandas as pd

from polybias.data import languages
from polybias.engines.static import StaticEmbeddings
from polybias.files import params_hash, write_text_atomic
from polybias.planted import model_store

#: Bump when a change to this module changes the corpora or the trained weights:
#: it is part of the cache key of :func:`cached_planted_model`.
CODE_VERSION = "synthetic-1"

LANGUAGES = ("en", "bn", "hi")
KINDS = ("mlm", "causal")

#: Sentences of the planted corpus a planted word2vec model is trained on (:func:`planted_word2vec`).
N_WORD2VEC_SENTENCES = 4000


def _nfc(value):
    if isinstance(value, str):
        return unicodedata.normalize("NFC", value)
    if isinstance(value, dict):
        return {k: _nfc(v) for k, v in value.items()}
    return [_nfc(v) for v in value]


# Targets are listed so that the i-th male and the i-th female term form a minimal pair.
_LANGUAGE_DATA: dict[str, dict[str, Any]] = {
    "en": {
        "targets": {
            "male": ["man", "father", "brother", "son", "uncle", "boy", "husband", "grandfather"],
            "female": ["woman", "mother", "sister", "daughter", "aunt", "girl", "wife",
                       "grandmother"],
        },
        "attributes": {
            "career": ["office", "salary", "business", "career", "meeting", "company", "project",
                       "promotion"],
            "family": ["home", "children", "wedding", "cooking", "family", "kitchen", "relatives",
                       "marriage"],
        },
        "neutral_subjects": ["friend", "neighbour", "student", "guest", "traveller", "stranger"],
        "neutral_objects": ["weather", "book", "river", "music", "city", "film", "market", "game",
                            "news", "train"],
        "pronouns": ["i", "we", "you", "they"],
        "templates": [
            "the {t} thinks about the {a} .",
            "my {t} talks about the {a} every day .",
            "{pro} said that the {t} cares about the {a} .",
            "yesterday the {t} spoke about the {a} .",
            "the {t} is always busy with the {a} .",
            "everyone knows that the {t} loves the {a} .",
            "our {t} spent the whole day on the {a} .",
            "the {t} wrote a long letter about the {a} .",
            "in the morning the {t} worries about the {a} .",
            "the {t} was happy with the {a} .",
            "{pro} asked the {t} about the {a} .",
            "the old {t} often dreams about the {a} .",
        ],
    },
    "bn": {
        "targets": {
            "male": ["পুরুষ", "বাবা", "ভাই", "ছেলে", "স্বামী", "কাকা", "দাদু", "মামা"],
            "female": ["নারী", "মা", "বোন", "মেয়ে", "স্ত্রী", "কাকি", "দিদিমা", "মামি"],
        },
        "attributes": {
            "career": ["অফিস", "বেতন", "ব্যবসা", "চাকরি", "কোম্পানি", "সভা", "প্রকল্প", "পদোন্নতি"],
            "family": ["বাড়ি", "সংসার", "সন্তান", "বিয়ে", "রান্না", "পরিবার", "রান্নাঘর",
                       "আত্মীয়"],
        },
        "neutral_subjects": ["বন্ধু", "প্রতিবেশী", "শিক্ষার্থী", "অতিথি", "যাত্রী", "শিল্পী"],
        "neutral_objects": ["আবহাওয়া", "বই", "নদী", "গান", "শহর", "সিনেমা", "বাজার", "খেলা",
                            "খবর", "ট্রেন"],
        "pronouns": [],
        "templates": [
            "{t} {a} নিয়ে ভাবে ।",
            "{t} প্রতিদিন {a} নিয়ে কথা বলে ।",
            "{t} সবসময় {a} নিয়ে ব্যস্ত থাকে ।",
            "আমি জানি যে {t} {a} ভালোবাসে ।",
            "গতকাল {t} {a} নিয়ে আলোচনা করেছে ।",
            "{t} {a} নিয়ে চিন্তা করে ।",
            "সবাই বলে {t} {a} পছন্দ করে ।",
            "আজ {t} সারাদিন {a} নিয়ে কাজ করেছে ।",
            "{t} {a} নিয়ে একটি লম্বা চিঠি লিখেছে ।",
            "সকালে {t} {a} নিয়ে স্বপ্ন দেখে ।",
            "{t} {a} নিয়ে খুশি ।",
            "তারা বলেছে {t} {a} নিয়ে ভাবছে ।",
        ],
    },
    "hi": {
        "targets": {
            "male": ["आदमी", "पिता", "भाई", "पति", "चाचा", "दादा", "मामा", "नाना"],
            "female": ["औरत", "माँ", "बहन", "पत्नी", "चाची", "दादी", "मामी", "नानी"],
        },
        "attributes": {
            "career": ["दफ्तर", "वेतन", "व्यापार", "नौकरी", "कंपनी", "बैठक", "परियोजना",
                       "पदोन्नति"],
            "family": ["घर", "परिवार", "शादी", "रसोई", "गृहस्थी", "रिश्तेदार", "संतान", "देखभाल"],
        },
        "neutral_subjects": ["दोस्त", "पड़ोसी", "मेहमान", "यात्री", "छात्र", "कलाकार"],
        "neutral_objects": ["मौसम", "किताब", "नदी", "संगीत", "शहर", "फिल्म", "बाजार", "खेल",
                            "समाचार", "ट्रेन"],
        "pronouns": [],
        "templates": [
            "{t} को {a} पसंद है ।",
            "{t} ने {a} के बारे में सोचा ।",
            "{t} ने {a} के बारे में बात की ।",
            "{t} के लिए {a} जरूरी है ।",
            "कल {t} ने {a} की चर्चा की ।",
            "{t} को {a} में रुचि है ।",
            "{t} का ध्यान {a} पर है ।",
            "मैंने {t} से {a} के बारे में पूछा ।",
            "आज {t} ने {a} पर काम किया ।",
            "{t} के पास {a} के लिए समय है ।",
            "हमें पता है कि {t} को {a} की चिंता है ।",
            "{t} के मन में {a} का विचार है ।",
        ],
    },
}
_LANGUAGE_DATA = {lang: _nfc(d) for lang, d in _LANGUAGE_DATA.items()}

#: Word groups of the planted corpora: ``PLANTED_GROUPS[lang]["targets"]["male"]`` etc.
#: Group 1 is ``male`` / ``career``, group 2 ``female`` / ``family``. The i-th male and
#: the i-th female target form the minimal pairs of :func:`minimal_pairs`.
PLANTED_GROUPS: dict[str, dict[str, dict[str, list[str]]]] = {
    lang: {"targets": d["targets"], "attributes": d["attributes"]}
    for lang, d in _LANGUAGE_DATA.items()
}
_TARGET_GROUPS = ("male", "female")
_ATTRIBUTE_GROUPS = ("career", "family")


class SyntheticError(ValueError):
    """Bad input to a planted corpus, pair generator or trainer."""


def _language(language: str) -> dict[str, Any]:
    if language not in _LANGUAGE_DATA:
        raise SyntheticError(f"unknown language {language!r}; planted corpora exist for "
                             f"{', '.join(LANGUAGES)}")
    return _LANGUAGE_DATA[language]


def _check_probability(name: str, value: float) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value <= 1:
        raise SyntheticError(f"{name} must be a probability in [0, 1], got {value!r}")
    return float(value)


def _check_count(name: str, value: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise SyntheticError(f"{name} must be a non-negative integer, got {value!r}")
    return value


def planted_groups(language: str = "en") -> dict[str, dict[str, list[str]]]:
    """Word groups of the planted corpus of ``language`` (a copy of :data:`PLANTED_GROUPS`).

    >>> planted_groups("en")["targets"]["male"][:3]
    ['man', 'father', 'brother']
    """
    _language(language)
    return copy.deepcopy(PLANTED_GROUPS[language])


def _pronoun(template: str, rng: random.Random, pronouns: list[str]) -> str:
    return pronouns[rng.randrange(len(pronouns))] if "{pro}" in template else ""


def planted_corpus(
    n_sentences: int,
    p: float,
    seed: int = 0,
    language: str = "en",
    filler_share: float = 0.25,
) -> list[str]:
    """Template sentences with a planted target–attribute association of strength ``p``.

    Parameters
    ----------
    n_sentences : number of sentences (planted and filler together).
    p : probability that a planted sentence pairs a target with the attribute group of the
        same index (male–career, female–family); ``1 - p`` that it crosses them. 0.5 plants
        no association.
    seed : seed of the generator; the same arguments give the identical corpus.
    language : ``"en"``, ``"bn"`` or ``"hi"``.
    filler_share : expected share of neutral filler sentences. A filler sentence fills a
        template with a neutral subject and object, a target and a neutral object, or a
        neutral subject and an attribute (each a third of the time).

    Returns
    -------
    list of str
        Sentences, words (punctuation included) separated by single spaces, NFC.

    Examples
    --------
    >>> corpus = planted_corpus(2, p=1.0, seed=3, filler_share=0.0)
    >>> len(corpus), corpus == planted_corpus(2, p=1.0, seed=3, filler_share=0.0)
    (2, True)
    """
    data = _language(language)
    p = _check_probability("p", p)
    filler_share = _check_probability("filler_share", filler_share)
    _check_count("n_sentences", n_sentences)
    rng = random.Random(f"planted-corpus/{language}/{seed}")
    targets = [data["targets"][g] for g in _TARGET_GROUPS]
    attributes = [data["attributes"][g] for g in _ATTRIBUTE_GROUPS]
    subjects, objects = data["neutral_subjects"], data["neutral_objects"]
    templates, pronouns = data["templates"], data["pronouns"]

    def pick(words: list[str]) -> str:
        return words[rng.randrange(len(words))]

    corpus = []
    for _ in range(n_sentences):
        template = pick(templates)
        if rng.random() < filler_share:
            kind = rng.randrange(3)
            subject = pick(targets[rng.randrange(2)]) if kind == 1 else pick(subjects)
            obj = pick(attributes[rng.randrange(2)]) if kind == 2 else pick(objects)
        else:
            group = rng.randrange(2)
            same = rng.random() < p
            subject = pick(targets[group])
            obj = pick(attributes[group if same else 1 - group])
        corpus.append(template.format(t=subject, a=obj, pro=_pronoun(template, rng, pronouns)))
    return corpus


def planted_share(corpus: list[str], language: str = "en") -> dict[str, float]:
    """Realised association of a corpus: the share of planted sentences that pair groups.

    A sentence is *planted* when it holds exactly one target and one attribute word
    (words are split on whitespace); it is *congruent* when both belong to the group of
    the same index (male–career or female–family).

    Returns
    -------
    dict with ``n`` (planted sentences), ``congruent`` (their count) and ``share``
    (congruent / n; NaN when n = 0).
    """
    groups = planted_groups(language)
    target_of = {w: i for i, g in enumerate(_TARGET_GROUPS) for w in groups["targets"][g]}
    attribute_of = {w: i for i, g in enumerate(_ATTRIBUTE_GROUPS) for w in groups["attributes"][g]}
    n = congruent = 0
    for sentence in corpus:
        words = unicodedata.normalize("NFC", sentence).split()
        t = [target_of[w] for w in words if w in target_of]
        a = [attribute_of[w] for w in words if w in attribute_of]
        if len(t) == 1 and len(a) == 1:
            n += 1
            congruent += t[0] == a[0]
    return {"n": n, "congruent": congruent, "share": congruent / n if n else float("nan")}


def minimal_pairs(n: int = 100, language: str = "en", seed: int = 0) -> pd.DataFrame:
    """CrowS-style minimal pairs that differ only in the target word.

    Each pair fills one template with the i-th male and the i-th female target and one
    attribute. ``sent_more`` is the sentence consistent with the association planted by
    ``p > 0.5`` (male with a career word, female with a family word), so a model trained
    with ``p > 0.5`` should prefer ``sent_more`` and one trained with ``p < 0.5``
    ``sent_less``. Pairs are drawn without replacement from all (template, target pair,
    attribute) combinations.

    Parameters
    ----------
    n : number of pairs (at most templates × target pairs × attributes).
    language : ``"en"``, ``"bn"`` or ``"hi"``.
    seed : seed of the draw.

    Returns
    -------
    DataFrame
        Columns ``sent_more``, ``sent_less``, ``bias_type`` (``"gender"``), ``direction``
        (``"stereo"``), ``target_more``, ``target_less``, ``attribute``,
        ``attribute_group`` and ``template``.
    """
    data = _language(language)
    male, female = (data["targets"][g] for g in _TARGET_GROUPS)
    combos = [(ti, pi, g, a)
              for ti in range(len(data["templates"]))
              for pi in range(len(male))
              for g in _ATTRIBUTE_GROUPS
              for a in data["attributes"][g]]
    if isinstance(n, bool) or not isinstance(n, int) or not 0 < n <= len(combos):
        raise SyntheticError(f"n must be an integer in [1, {len(combos)}] for language "
                             f"{language!r}, got {n!r}")
    rng = random.Random(f"minimal-pairs/{language}/{seed}")
    rows = []
    for ti, pi, group, attribute in rng.sample(combos, n):
        template = data["templates"][ti]
        pronoun = _pronoun(template, rng, data["pronouns"])
        m = template.format(t=male[pi], a=attribute, pro=pronoun)
        f = template.format(t=female[pi], a=attribute, pro=pronoun)
        more, less = (m, f) if group == "career" else (f, m)
        rows.append({
            "sent_more": more, "sent_less": less, "bias_type": "gender", "direction": "stereo",
            "target_more": male[pi] if group == "career" else female[pi],
            "target_less": female[pi] if group == "career" else male[pi],
            "attribute": attribute, "attribute_group": group, "template": template,
        })
    return pd.DataFrame(rows)


# ------------------------------------------------------------------ tokenizers

_MLM_SPECIALS = {"pad_token": "[PAD]", "unk_token": "[UNK]", "cls_token": "[CLS]",
                 "sep_token": "[SEP]", "mask_token": "[MASK]"}
_CAUSAL_SPECIALS = {"pad_token": "<pad>", "unk_token": "<unk>", "bos_token": "<bos>",
                    "eos_token": "<eos>"}


def _wordpiece_vocab(corpus: list[str], specials: list[str], normalizer, pre_tokenizer) -> dict:
    """Specials, every corpus word (most frequent first), then single characters as
    word-initial and ``##`` continuation pieces so unseen words decompose instead of
    becoming unknown. Built by counting, so it is deterministic."""
    counts: Counter[str] = Counter()
    for sentence in corpus:
        words = pre_tokenizer.pre_tokenize_str(normalizer.normalize_str(sentence))
        counts.update(w for w, _ in words)
    if not counts:
        raise SyntheticError("cannot build a tokenizer from an empty corpus")
    words = sorted(counts, key=lambda w: (-counts[w], w))
    chars = sorted({c for w in words for c in w})
    tokens = [*specials, *words, *chars, *(f"##{c}" for c in chars)]
    return {tok: i for i, tok in enumerate(dict.fromkeys(tokens))}


def build_tokenizer(corpus: list[str], kind: Literal["mlm", "causal"], model_max_length: int = 64):
    """A WordPiece :class:`~transformers.PreTrainedTokenizerFast` built from ``corpus``.

    Every word of the corpus is one token (so minimal pairs differ in one token); other
    words split into characters. Text is NFC-normalised and lowercased (no accent
    stripping, which would delete Bengali and Devanagari vowel signs) and split on
    whitespace and punctuation (BERT pre-tokenizer).

    ``kind="mlm"``: ``[PAD] [UNK] [CLS] [SEP] [MASK]``; encodings are ``[CLS] … [SEP]``.
    ``kind="causal"``: ``<pad> <unk> <bos> <eos>``; as for GPT-2, no special token is
    added on encoding (prepend ``bos_token_id`` to score a sentence).
    """
    from tokenizers import (  # lazy: heavy; model code only
        Tokenizer,
        decoders,
        models,
        normalizers,
        pre_tokenizers,
        processors,
    )
    from transformers import PreTrainedTokenizerFast  # lazy: heavy; model code only

    if kind not in KINDS:
        raise SyntheticError(f"unknown model kind {kind!r}; use one of {KINDS}")
    specials = _MLM_SPECIALS if kind == "mlm" else _CAUSAL_SPECIALS
    normalizer = normalizers.Sequence([normalizers.NFC(), normalizers.Lowercase()])
    pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    vocab = _wordpiece_vocab(corpus, list(specials.values()), normalizer, pre_tokenizer)
    tok = Tokenizer(models.WordPiece(vocab, unk_token=specials["unk_token"],
                                     max_input_chars_per_word=100))
    tok.normalizer = normalizer
    tok.pre_tokenizer = pre_tokenizer
    tok.decoder = decoders.WordPiece(prefix="##")
    if kind == "mlm":
        cls, sep = (specials["cls_token"], vocab["[CLS]"]), (specials["sep_token"], vocab["[SEP]"])
        tok.post_processor = processors.TemplateProcessing(
            single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1", special_tokens=[cls, sep])
    return PreTrainedTokenizerFast(tokenizer_object=tok, model_max_length=model_max_length,
                                   padding_side="right", **specials)


# ------------------------------------------------------------------ training

@contextlib.contextmanager
def _deterministic(seed: int, threads: int):
    """Seeded, deterministic torch on ``threads`` threads; the caller's state is restored."""
    import torch  # lazy: heavy; model code only

    previous = (torch.are_deterministic_algorithms_enabled(),
                torch.is_deterministic_algorithms_warn_only_enabled(), torch.get_num_threads())
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        torch.use_deterministic_algorithms(True)
        torch.set_num_threads(threads)
        try:
            yield
        finally:
            torch.use_deterministic_algorithms(previous[0], warn_only=previous[1])
            torch.set_num_threads(previous[2])


def _check_training(corpus, seed, epochs, batch_size, lr, threads) -> None:
    if not isinstance(corpus, list) or not corpus or not all(isinstance(s, str) for s in corpus):
        raise SyntheticError("corpus must be a non-empty list of sentences (str)")
    for name, value in (("seed", seed), ("epochs", epochs), ("batch_size", batch_size),
                        ("threads", threads)):
        least = 0 if name == "seed" else 1
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise SyntheticError(f"{name} must be an integer >= {least}, got {value!r}")
    if not lr > 0:
        raise SyntheticError(f"lr must be positive, got {lr!r}")


def _encode(tokenizer, corpus: list[str], max_length: int, causal: bool):
    enc = tokenizer(corpus, add_special_tokens=not causal, truncation=False)
    ids = enc["input_ids"]
    if causal:
        ids = [[tokenizer.bos_token_id, *x, tokenizer.eos_token_id] for x in ids]
    too_long = [i for i, x in enumerate(ids) if len(x) > max_length]
    if too_long:
        raise SyntheticError(f"sentence {too_long[0]} ({corpus[too_long[0]]!r}) has more than "
                             f"max_length={max_length} tokens")
    return ids


def _batches(ids: list[list[int]], batch_size: int, pad_id: int, generator):
    import torch  # lazy: heavy; model code only

    order = torch.randperm(len(ids), generator=generator).tolist()
    for start in range(0, len(order), batch_size):
        rows = [ids[i] for i in order[start:start + batch_size]]
        width = max(len(r) for r in rows)
        input_ids = torch.full((len(rows), width), pad_id, dtype=torch.long)
        for i, r in enumerate(rows):
            input_ids[i, :len(r)] = torch.tensor(r, dtype=torch.long)
        yield input_ids, input_ids != pad_id


def _fit(model, ids, *, pad_id, epochs, batch_size, lr, seed, make_labels) -> None:
    """AdamW with linear warm-up (5 %) and decay, gradient clipping at 1, seeded shuffling.

    ``make_labels(input_ids, attention, progress)`` returns (inputs, labels); progress
    is the share of training steps done (0 to 1).
    """
    import torch  # lazy: heavy; model code only

    steps = epochs * -(-len(ids) // batch_size)
    warmup = max(1, steps // 20)
    optimizer = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min((s + 1) / warmup, max(0.0, (steps - s) / max(1, steps - warmup))))
    shuffle = torch.Generator().manual_seed(seed)
    model.train()
    step = 0
    for _ in range(epochs):
        for input_ids, attention in _batches(ids, batch_size, pad_id, shuffle):
            inputs, labels = make_labels(input_ids, attention, step / steps)
            loss = model(input_ids=inputs, attention_mask=attention.long(), labels=labels).loss
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            schedule.step()
            optimizer.zero_grad(set_to_none=True)
            step += 1
    model.eval()


def content_tokens(tokenizer, ids: list[list[int]], max_freq: float) -> list[int]:
    """Ids of the tokens that occur at most ``max_freq`` times per sentence on average
    (the rarer, content-bearing words of a template corpus), special tokens excluded."""
    counts = Counter(i for row in ids for i in row)
    special = set(tokenizer.all_special_ids)
    return sorted(i for i, c in counts.items() if c / len(ids) <= max_freq and i not in special)


def train_masked_lm(
    corpus: list[str],
    seed: int = 0,
    *,
    hidden_size: int = 64,
    num_layers: int = 2,
    num_heads: int = 4,
    intermediate_size: int = 256,
    max_length: int = 64,
    dropout: float = 0.0,
    epochs: int = 10,
    batch_size: int = 32,
    lr: float = 1e-3,
    mask_prob: float = 0.15,
    content_share: float = 0.5,
    content_mask_prob: float = 0.5,
    content_max_freq: float = 0.07,
    threads: int = 1,
):
    """Train a tiny BERT-style masked LM (``BertForMaskedLM``) on ``corpus``.

    A WordPiece tokenizer is built from the corpus (:func:`build_tokenizer`), then a plain
    PyTorch loop runs AdamW (linear warm-up and decay, gradient clipping at 1) with dynamic
    masking drawn from a seeded generator, in two phases:

    1. *content phase* (the first ``content_share`` of the steps): only content tokens —
       those found at most ``content_max_freq`` times per sentence (:func:`content_tokens`:
       targets, attributes and other slot fillers of a template corpus, not the template
       words) — are masked, each with probability ``content_mask_prob``;
    2. *standard phase*: every non-special token is masked with probability ``mask_prob``
       (BERT: 80 % ``[MASK]``, 10 % a random token, 10 % kept).

    Why two phases: a tiny MLM trained with standard masking from the start learns the
    template syntax first, its ``[MASK]`` queries then attend sharply to the neighbouring
    template words, and it fails to learn the target–attribute co-occurrence for thousands
    of steps (a long plateau; a causal LM of the same size learns it within a few hundred
    steps). Predicting content words first builds the attention between slots; the
    standard phase then teaches every token and keeps the association. Input and output
    embeddings are not tied (tying also delays learning the association).

    Training runs with ``torch.use_deterministic_algorithms(True)`` on ``threads`` threads
    inside a forked RNG, so the same corpus, seed and settings give bit-identical weights
    on a machine, and the caller's torch state is left as it was.

    Parameters
    ----------
    corpus : sentences.
    seed : seeds initialisation, shuffling, masking and dropout.
    hidden_size, num_layers, num_heads, intermediate_size, max_length, dropout : model size
        (``max_length`` is both the position table and the tokenizer's ``model_max_length``).
    epochs, batch_size, lr : training.
    mask_prob : masking probability of the standard phase.
    content_share, content_mask_prob, content_max_freq : the content phase (share of the
        steps, masking probability of content tokens, frequency bound of a content token);
        ``content_share=0`` gives standard masking throughout.
    threads : torch threads while training (results can differ between thread counts).

    Returns
    -------
    (model, tokenizer)
        ``BertForMaskedLM`` in eval mode and its ``PreTrainedTokenizerFast``.
    """
    import torch  # lazy: heavy; model code only
    from transformers import BertConfig, BertForMaskedLM  # lazy: heavy; model code only

    _check_training(corpus, seed, epochs, batch_size, lr, threads)
    for name, value in (("mask_prob", mask_prob), ("content_mask_prob", content_mask_prob)):
        if not 0 < value < 1:
            raise SyntheticError(f"{name} must be in (0, 1), got {value!r}")
    if not 0 <= content_share <= 1:
        raise SyntheticError(f"content_share must be in [0, 1], got {content_share!r}")
    tokenizer = build_tokenizer(corpus, "mlm", model_max_length=max_length)
    ids = _encode(tokenizer, corpus, max_length, causal=False)
    specials = torch.tensor(sorted(tokenizer.all_special_ids))
    content = torch.tensor(content_tokens(tokenizer, ids, content_max_freq), dtype=torch.long)
    mask_id, n_vocab = tokenizer.mask_token_id, len(tokenizer)
    with _deterministic(seed, threads):
        config = BertConfig(
            vocab_size=n_vocab, hidden_size=hidden_size, num_hidden_layers=num_layers,
            num_attention_heads=num_heads, intermediate_size=intermediate_size,
            max_position_embeddings=max_length, type_vocab_size=2,
            pad_token_id=tokenizer.pad_token_id, hidden_dropout_prob=dropout,
            attention_probs_dropout_prob=dropout, tie_word_embeddings=False)
        config._attn_implementation = "eager"
        model = BertForMaskedLM(config)
        masking = torch.Generator().manual_seed(seed + 1)

        def make_labels(input_ids, attention, progress):
            draw = torch.rand(input_ids.shape, generator=masking)
            how = torch.rand(input_ids.shape, generator=masking)
            random_ids = torch.randint(len(specials), n_vocab, input_ids.shape, generator=masking)
            inputs = input_ids.clone()
            if progress < content_share:
                chosen = torch.isin(input_ids, content) & (draw < content_mask_prob)
                inputs[chosen] = mask_id
            else:
                chosen = attention & ~torch.isin(input_ids, specials) & (draw < mask_prob)
                inputs[chosen & (how < 0.8)] = mask_id
                swap = chosen & (how >= 0.8) & (how < 0.9)
                inputs[swap] = random_ids[swap]
            labels = torch.where(chosen, input_ids, torch.full_like(input_ids, -100))
            return inputs, labels

        _fit(model, ids, pad_id=tokenizer.pad_token_id, epochs=epochs, batch_size=batch_size,
             lr=lr, seed=seed, make_labels=make_labels)
    return model, tokenizer


def train_causal_lm(
    corpus: list[str],
    seed: int = 0,
    *,
    hidden_size: int = 64,
    num_layers: int = 2,
    num_heads: int = 2,
    intermediate_size: int = 256,
    max_length: int = 64,
    dropout: float = 0.0,
    epochs: int = 4,
    batch_size: int = 32,
    lr: float = 2e-3,
    threads: int = 1,
):
    """Train a tiny GPT-2-style causal LM (``GPT2LMHeadModel``) on ``corpus``.

    Each sentence is trained as ``<bos> sentence <eos>``; the tokenizer (see
    :func:`build_tokenizer`) adds no special tokens itself, as GPT-2's does not. Training
    is as in :func:`train_masked_lm` (deterministic, seeded, plain AdamW loop).

    Returns
    -------
    (model, tokenizer)
        ``GPT2LMHeadModel`` in eval mode and its ``PreTrainedTokenizerFast``.
    """
    from transformers import GPT2Config, GPT2LMHeadModel  # lazy: heavy; model code only

    _check_training(corpus, seed, epochs, batch_size, lr, threads)
    tokenizer = build_tokenizer(corpus, "causal", model_max_length=max_length)
    ids = _encode(tokenizer, corpus, max_length, causal=True)
    with _deterministic(seed, threads):
        config = GPT2Config(
            vocab_size=len(tokenizer), n_positions=max_length, n_embd=hidden_size,
            n_layer=num_layers, n_head=num_heads, n_inner=intermediate_size,
            resid_pdrop=dropout, embd_pdrop=dropout, attn_pdrop=dropout,
            bos_token_id=tokenizer.bos_token_id, eos_token_id=tokenizer.eos_token_id,
            pad_token_id=tokenizer.pad_token_id)
        config._attn_implementation = "eager"
        model = GPT2LMHeadModel(config)
        model.loss_type = "ForCausalLM"  # the default it would pick, without a warning

        def make_labels(input_ids, attention, progress):
            return input_ids, input_ids.masked_fill(~attention, -100)

        _fit(model, ids, pad_id=tokenizer.pad_token_id, epochs=epochs, batch_size=batch_size,
             lr=lr, seed=seed, make_labels=make_labels)
    return model, tokenizer


# ------------------------------------------------------------------ cache

_TRAINERS = {"mlm": train_masked_lm, "causal": train_causal_lm}
_META = model_store.SPEC_FILE


def _model_class(kind: str):
    from transformers import BertForMaskedLM, GPT2LMHeadModel  # lazy: heavy; model code only

    return BertForMaskedLM if kind == "mlm" else GPT2LMHeadModel


@contextlib.contextmanager
def _no_progress_bars():
    """Silence transformers' loading/saving progress bars (notebook outputs stay clean)."""
    from transformers.utils import logging  # lazy: heavy; model code only

    enabled = logging.is_progress_bar_enabled()
    logging.disable_progress_bar()
    try:
        yield
    finally:
        if enabled:
            logging.enable_progress_bar()


def load_trained_folder(folder: Path, kind: str):
    """Load a saved planted LM (``mlm`` or ``causal``) and its tokenizer from ``folder``
    (local files, safetensors only, no remote code); the model in eval mode, in float64.

    The weights were trained and stored in float32; inference runs in float64 so that the
    CPU's kernels (which differ between machines in the last bits of float32 sums) cannot
    move a printed digit or flip a near-tie: these models are tiny, so it costs little.
    """
    import torch  # lazy: heavy; model code only
    from transformers import PreTrainedTokenizerFast  # lazy: heavy; model code only

    with _no_progress_bars():
        model = _model_class(kind).from_pretrained(folder, local_files_only=True,
                                                   use_safetensors=True, dtype=torch.float64)
    if kind == "causal":
        model.loss_type = "ForCausalLM"
    tokenizer = PreTrainedTokenizerFast.from_pretrained(folder, local_files_only=True)
    return model.eval(), tokenizer


def _training_options(trainer, given: dict[str, Any], what: str,
                      exclude: tuple[str, ...] = ()) -> dict[str, Any]:
    """``trainer``'s keyword-only defaults updated with ``given``; unknown names raise."""
    options = {name: par.default for name, par in inspect.signature(trainer).parameters.items()
               if par.kind is inspect.Parameter.KEYWORD_ONLY and name not in exclude}
    unknown = sorted(set(given) - set(options))
    if unknown:
        raise SyntheticError(f"unknown {what}: {', '.join(unknown)}; known: {', '.join(options)}")
    return {**options, **given}


def planted_model_spec(
    kind: Literal["mlm", "causal"],
    p: float,
    seed: int = 0,
    language: str = "en",
    n_sentences: int = 8000,
    filler_share: float = 0.25,
    **size,
) -> dict[str, Any]:
    """Every input of a planted model, defaults filled in (the cache key of
    :func:`cached_planted_model`); unknown training options raise."""
    if kind not in KINDS:
        raise SyntheticError(f"unknown model kind {kind!r}; use one of {KINDS}")
    _language(language)
    _check_probability("p", p)
    _check_probability("filler_share", filler_share)
    options = _training_options(train_masked_lm if kind == "mlm" else train_causal_lm, size,
                                f"training option(s) for a {kind} model")
    return {"code_version": CODE_VERSION, "kind": kind, "p": float(p), "seed": seed,
            "language": language, "n_sentences": n_sentences,
            "filler_share": float(filler_share), "training": options}


def cached_planted_model(
    kind: Literal["mlm", "causal"],
    p: float,
    seed: int = 0,
    language: str = "en",
    n_sentences: int = 8000,
    filler_share: float = 0.25,
    **size,
):
    """A model trained on a planted corpus: pinned, or trained once and then cached.

    The corpus is ``planted_corpus(n_sentences, p, seed, language, filler_share)``; the
    model is trained by :func:`train_masked_lm` (``kind="mlm"``) or :func:`train_causal_lm`
    (``kind="causal"``) with ``seed`` and the training options ``size``. Its key is
    ``<kind>-<hash>``, the hash covering every input (defaults included) and
    :data:`CODE_VERSION`. A model in the repository's pinned store (``data/planted``,
    sha256-verified, identical on every machine) is loaded from there; otherwise
    :func:`polybias.planted.model_store.resolve` trains it into ``cache_dir()/trained/<key>`` (safetensors,
    tokenizer and ``polybias_planted.json`` holding the spec; written under a temporary name
    and renamed when complete) or refuses, as ``POLYBIAS_PLANTED`` says. Loading reads
    local files only, with no remote code.

    Returns
    -------
    (model, tokenizer)
        The model in eval mode and its ``PreTrainedTokenizerFast``, as loaded from disk.
    """
    spec = planted_model_spec(kind, p, seed, language, n_sentences, filler_share, **size)
    folder = model_store.resolve(f"{kind}-{params_hash(spec)}", spec,
                                 lambda out: _train_planted(spec, out))
    return load_trained_folder(folder, kind)


def _train_planted(spec: dict[str, Any], folder: Path) -> None:
    """Train the planted LM described by ``spec`` (:func:`planted_model_spec`) and save it
    into ``folder``: safetensors weights, tokenizer and ``polybias_planted.json`` (the spec).
    Nothing time- or machine-dependent is written, so a retrain on the same machine gives
    byte-identical files."""
    if spec.get("code_version") != CODE_VERSION:
        raise SyntheticError(f"spec of code version {spec.get('code_version')!r} cannot be "
                             f"trained by this code ({CODE_VERSION!r})")
    corpus = planted_corpus(spec["n_sentences"], spec["p"], seed=spec["seed"],
                            language=spec["language"], filler_share=spec["filler_share"])
    model, tokenizer = _TRAINERS[spec["kind"]](corpus, spec["seed"], **spec["training"])
    save_planted(model, tokenizer, spec, folder)


def save_planted(model, tokenizer, spec: dict[str, Any], folder: Path) -> None:
    """Save a trained planted LM into ``folder``: safetensors weights, tokenizer and
    ``polybias_planted.json`` (``spec``). Nothing time- or machine-dependent is written."""
    with _no_progress_bars():
        model.save_pretrained(folder, safe_serialization=True)
    tokenizer.save_pretrained(folder)
    write_text_atomic(folder / _META, json.dumps(spec, indent=2, sort_keys=True, ensure_ascii=False) + "\n")


# ------------------------------------------------------------------ word2vec

def train_word2vec(
    corpus: list[str],
    seed: int = 0,
    *,
    vector_size: int = 50,
    window: int = 5,
    min_count: int = 1,
    sg: int = 1,
    negative: int = 5,
    epochs: int = 10,
    name: str = "planted-w2v",
):
    """Train gensim word2vec on ``corpus`` (whitespace tokens) deterministically.

    One worker thread and a fixed ``seed`` make gensim's training reproducible.

    Returns
    -------
    :class:`polybias.engines.static.StaticEmbeddings`
        Words in gensim's order (most frequent first) and float32 vectors.
    """
    from gensim.models import Word2Vec  # lazy: heavy; word2vec files only

    if not isinstance(corpus, list) or not corpus or not all(isinstance(s, str) for s in corpus):
        raise SyntheticError("corpus must be a non-empty list of sentences (str)")
    sentences = [unicodedata.normalize("NFC", s).split() for s in corpus]
    w2v = Word2Vec(sentences, vector_size=vector_size, window=window, min_count=min_count,
                   sg=sg, negative=negative, epochs=epochs, workers=1, seed=seed)
    words = list(w2v.wv.index_to_key)
    vectors = w2v.wv.vectors.astype("float32", copy=True)
    params = {"seed": seed, "vector_size": vector_size, "window": window,
              "min_count": min_count, "sg": sg, "negative": negative, "epochs": epochs,
              "corpus": hashlib.sha256("\n".join(corpus).encode()).hexdigest()}
    return StaticEmbeddings(name, words, vectors, revision=f"word2vec:{params_hash(params)}")


WORD2VEC_KIND = "word2vec"


def planted_word2vec_spec(p: float, seed: int = 0, language: str = "en",
                          n_sentences: int = N_WORD2VEC_SENTENCES, **word2vec: Any) -> dict[str, Any]:
    """Every input of a planted word2vec model (the key of :func:`planted_word2vec`);
    unknown word2vec options raise."""
    _language(language)
    _check_probability("p", p)
    options = _training_options(train_word2vec, word2vec, "word2vec option(s)", exclude=("name",))
    return {"code_version": CODE_VERSION, "kind": WORD2VEC_KIND, "p": float(p), "seed": seed,
            "language": language, "n_sentences": n_sentences, "training": options}


def _train_planted_word2vec(spec: dict[str, Any], folder: Path) -> None:
    from safetensors.numpy import save_file  # lazy: weight files only

    corpus = planted_corpus(spec["n_sentences"], spec["p"], seed=spec["seed"],
                            language=spec["language"])
    emb = train_word2vec(corpus, seed=spec["seed"], **spec["training"])
    save_file({"vectors": emb.vectors}, str(folder / "vectors.safetensors"))
    write_text_atomic(folder / "words.json", json.dumps(emb.words, ensure_ascii=False) + "\n")
    write_text_atomic(folder / _META, json.dumps(spec, indent=2, sort_keys=True, ensure_ascii=False) + "\n")


def planted_word2vec(p: float, seed: int = 0, language: str = "en", n_sentences: int = N_WORD2VEC_SENTENCES,
                     **word2vec: Any):
    """word2vec (:func:`train_word2vec`) on ``planted_corpus(n_sentences, p, seed, language)``,
    pinned or trained once and cached like :func:`cached_planted_model`: gensim's training
    runs on the BLAS kernels of the CPU at hand, so its vectors differ across CPUs too.

    Returns
    -------
    :class:`polybias.engines.static.StaticEmbeddings`
        Named ``planted-w2v``, revision ``planted:<key>``.
    """
    from safetensors.numpy import load_file  # lazy: weight files only

    spec = planted_word2vec_spec(p, seed, language, n_sentences, **word2vec)
    key = f"{WORD2VEC_KIND}-{params_hash(spec)}"
    folder = model_store.resolve(key, spec, lambda out: _train_planted_word2vec(spec, out))
    words = json.loads((folder / "words.json").read_text(encoding="utf-8"))
    vectors = load_file(str(folder / "vectors.safetensors"))["vectors"]
    return StaticEmbeddings("planted-w2v", words, vectors, revision=f"planted:{key}")


def retrain_pinned(keys: list[str] | None = None,
                   more_trainers: dict[str, Any] | None = None) -> dict[str, bool]:
    """Retrain every pinned planted model (or ``keys``) from its stored spec, rewriting
    ``data/planted`` (``make planted``); returns ``{key: byte-identical to the pinned}``.
    ``more_trainers`` adds the trainers of kinds built elsewhere (``{kind: train(spec,
    folder)}``, e.g. :data:`polybias.planted.eurogest.TRAINERS`)."""
    trainers = {"mlm": _train_planted, "causal": _train_planted,
                WORD2VEC_KIND: _train_planted_word2vec, **(more_trainers or {})}
    return model_store.retrain_all(trainers, keys=keys, progress=lambda k: print(f"training {k}",
                                                                                 flush=True))


def varied_length_corpus(
    n_sentences: int,
    categories: dict[str, dict[str, Any]] | None = None,
    p: float = 0.9,
    seed: int = 0,
    language: str = "en",
    min_words: int = 6,
    max_words: int = 100,
) -> list[str]:
    """Sentences of varied length, each holding one target–attribute pair with a planted association.

    Built for CEAT's context-length study (seed 000 §3.2): every sentence carries a short
    *core* clause (a template of :data:`PLANTED_GROUPS`' language filled with one target
    and one attribute word), placed at a random position among neutral filler clauses
    (templates filled with neutral subjects and objects, joined by commas), so that the
    target's nearest words hold the association and the far context does not.

    Parameters
    ----------
    n_sentences : number of sentences.
    categories : ``{name: {"X": [...], "Y": [...], "A": [...], "B": [...], "p": float}}``;
        a sentence picks a category and a target group uniformly, then pairs X with A
        (Y with B) with probability ``p`` of that category, else crosses them. Default:
        one category ``"planted"`` with the male/female targets and career/family
        attributes of the language and association ``p``.
    p : association of the default category.
    seed : seed; the same arguments give the identical corpus.
    language : ``"en"``, ``"bn"`` or ``"hi"``.
    min_words, max_words : sentence length in words (whitespace tokens, punctuation
        included) is drawn uniformly in this range; the core clause is never cut.

    Returns
    -------
    list of str (NFC), words separated by single spaces, ending with the language's
    sentence terminator.

    Examples
    --------
    >>> c = varied_length_corpus(3, seed=1, min_words=10, max_words=40)
    >>> len(c), c == varied_length_corpus(3, seed=1, min_words=10, max_words=40)
    (3, True)
    """
    data = _language(language)
    p = _check_probability("p", p)
    for name, value in (("n_sentences", n_sentences), ("min_words", min_words), ("max_words", max_words)):
        _check_count(name, value)
    if min_words > max_words:
        raise SyntheticError(f"min_words ({min_words}) exceeds max_words ({max_words})")
    if categories is None:
        categories = {"planted": {"X": data["targets"]["male"], "Y": data["targets"]["female"],
                                  "A": data["attributes"]["career"],
                                  "B": data["attributes"]["family"], "p": p}}
    if not categories:
        raise SyntheticError("categories is empty")
    cats = []
    for name, cat in categories.items():
        missing = [k for k in ("X", "Y", "A", "B") if not cat.get(k)]
        if missing:
            raise SyntheticError(f"category {name!r} lacks word lists {', '.join(missing)}")
        cats.append((_nfc(list(cat["X"])), _nfc(list(cat["Y"])), _nfc(list(cat["A"])),
                     _nfc(list(cat["B"])), _check_probability(f"p of {name!r}", cat.get("p", p))))
    rng = random.Random(f"varied-length/{language}/{seed}")
    templates, pronouns = data["templates"], data["pronouns"] or [""]
    end = languages.language(language).full_stop

    def clause(subject: str, obj: str) -> list[str]:
        template = templates[rng.randrange(len(templates))]
        words = template.format(t=subject, a=obj, pro=_pronoun(template, rng, pronouns)).split()
        return words[:-1] if words and words[-1] == end else words

    def filler() -> list[str]:
        subjects, objects = data["neutral_subjects"], data["neutral_objects"]
        return clause(subjects[rng.randrange(len(subjects))], objects[rng.randrange(len(objects))])

    corpus = []
    for _ in range(n_sentences):
        X, Y, A, B, share = cats[rng.randrange(len(cats))]
        first = rng.random() < 0.5
        same = rng.random() < share
        targets, attributes = (X, A if same else B) if first else (Y, B if same else A)
        core = clause(targets[rng.randrange(len(targets))], attributes[rng.randrange(len(attributes))])
        goal = rng.randint(min_words, max_words)
        before, after = [], []
        while len(core) + len(before) + len(after) + 1 < goal:
            piece = filler() + [","]
            if rng.random() < 0.5:
                before = before + piece
            else:
                after = [","] + filler() + after
        words = before + core + after
        extra = len(words) + 1 - goal
        if extra > 0:  # trim filler words from the outer ends, never the core
            cut_front = min(extra // 2, len(before))
            cut_back = min(extra - cut_front, len(after))
            words = words[cut_front:len(words) - cut_back]
            while words and words[0] == ",":
                words = words[1:]
            while words and words[-1] == ",":
                words = words[:-1]
        corpus.append(" ".join(words + [end]))
    return corpus
