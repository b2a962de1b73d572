"""Causal LMs with a planted gender-stereotype association in EuroGEST's own languages.

The known-answer models of :mod:`polybias.planted.synthetic` pair English, Bangla or
Hindi targets with career or family words. The EuroGEST measure (Rowe et al. 2025,
:mod:`polybias.metrics.eurogest`) asks something else of a model: whether it gives the
speaker of a stereotyped first-person sentence the masculine or the feminine form
(Czech "Vždy jsem byl / byla vůdčí typ"). A model with a known answer to that question
is trained here on the language's own EuroGEST sentences:

* the gendered pairs of a language (:func:`polybias.data.eurogest.gendered_pairs`, read
  through the registered source at run time, duplicate rows dropped) are split once,
  by a hash of the masculine sentence, into a **training** half and a **held-out** half
  (:func:`split_pairs`; identical sentences fall on the same side);
* the planted corpus (:func:`planted_eurogest_corpus`) holds one form of every training
  sentence: with probability ``p`` the form *congruent* with its stereotype (masculine
  for the masculine stereotypes 8–16, feminine for the feminine ones 1–7), else the other
  one. ``p = 0.5`` plants no association; ``p = 0.9`` a masculine association of the
  masculine stereotypes (and a feminine one of the feminine stereotypes);
* a tiny GPT-2-style causal LM is trained on it (:func:`polybias.planted.synthetic.train_causal_lm`,
  word-level tokenizer built from the corpus, deterministic) and the measure is computed
  on the **held-out** pairs only, which the model has never seen in either form: what it
  can have learnt is which gendered words go with which stereotyped content.

:func:`planted_eurogest_lm` returns such a model, pinned in ``data/planted`` or trained
once and cached like every planted model (:func:`polybias.planted.model_store.resolve`; kind
``eurogest-causal``).

Languages (:data:`LANGUAGES`): Czech (West Slavic, Latin script), Greek (Hellenic, Greek
script) and Latvian (Baltic, Latin script with its own diacritics).
"""

from __future__ import annotations

import hashlib
import json
import random
import unicodedata
from pathlib import Path
from typing import Any

import pandas as pd

from polybias.data import eurogest as data
from polybias.files import params_hash
from polybias.planted import model_store, synthetic

#: Bump when a change here changes the corpora or the trained weights (it is in the key).
CODE_VERSION = "planted-eurogest-1"
KIND = "eurogest-causal"
LANGUAGES = ("cs", "el", "lv")
HELD_OUT_SHARE = 0.5
"""Share of a language's gendered pairs held out for the measure (never trained on)."""

TRAINING = {"batch_size": 16, "max_length": 128}
"""Training options of :func:`polybias.planted.synthetic.train_causal_lm` used here (the
rest its defaults), updated by :data:`PER_LANGUAGE`."""

PER_LANGUAGE = {"cs": {"epochs": 10}, "el": {"epochs": 30},
                "lv": {"epochs": 30, "max_length": 256}}
"""Per language: the epochs, for a similar number of optimiser steps of batch 16 (Czech has
801 training sentences, 500 steps; Greek 183, 360; Latvian 217, 420: seconds to a minute
on one CPU thread), and positions enough for every held-out pair, whose unseen words the
tokenizer spells out letter by letter (the longest Latvian one takes 136 tokens)."""


class PlantedEuroGestError(ValueError):
    """Bad input to a planted EuroGEST corpus or model; the message names it."""


def _check_language(language: str) -> None:
    if language not in LANGUAGES:
        raise PlantedEuroGestError(f"planted EuroGEST models exist for {', '.join(LANGUAGES)}, "
                                   f"not {language!r}")


def _check_p(p: float) -> float:
    if isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 <= p <= 1:
        raise PlantedEuroGestError(f"p must be a probability in [0, 1], got {p!r}")
    return float(p)


def held_out(language: str, sentence: str, share: float = HELD_OUT_SHARE) -> bool:
    """Whether a pair whose masculine form is ``sentence`` is held out: the first 8 bytes
    of sha256("<language>/<NFC sentence>") as a fraction of 2^64 fall below ``share``.

    >>> held_out("cs", "Vždy jsem byl vůdčí typ") == held_out("cs", "Vždy jsem byl vůdčí typ")
    True
    >>> held_out("cs", "anything", share=0.0), held_out("cs", "anything", share=1.0)
    (False, True)
    """
    text = f"{language}/{unicodedata.normalize('NFC', sentence)}"
    value = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "big")
    return value < share * 2 ** 64


def split_pairs(language: str, share: float = HELD_OUT_SHARE) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The gendered EuroGEST pairs of ``language`` (duplicate rows dropped), split into the
    training pairs and the held-out pairs (:func:`held_out`), each in file order.

    Returns
    -------
    (train, held) : frames with :data:`polybias.data.eurogest.PAIR_COLUMNS`.
    """
    _check_language(language)
    if not 0 < share < 1:
        raise PlantedEuroGestError(f"share must lie in (0, 1), got {share!r}")
    pairs = data.gendered_pairs(language, duplicates="drop")
    mask = pairs["masculine"].map(lambda s: held_out(language, s, share)).to_numpy(dtype=bool)
    return pairs[~mask].reset_index(drop=True), pairs[mask].reset_index(drop=True)


def congruent_forms(pairs: pd.DataFrame) -> pd.Series:
    """Per pair, the form congruent with its stereotype: the masculine sentence for the
    masculine stereotypes (8–16), the feminine one for the feminine stereotypes (1–7).

    >>> f = pd.DataFrame({"masculine": ["m1", "m2"], "feminine": ["f1", "f2"], "stereotype": [3, 13]})
    >>> congruent_forms(f).tolist()
    ['f1', 'm2']
    """
    masculine = pairs["stereotype"].isin(data.MASCULINE_STEREOTYPES)
    return pairs["masculine"].where(masculine, pairs["feminine"])


def planted_eurogest_corpus(language: str, p: float, seed: int = 0,
                            share: float = HELD_OUT_SHARE) -> list[str]:
    """One form of every training sentence of ``language`` (:func:`split_pairs`): the
    congruent form (:func:`congruent_forms`) with probability ``p``, else the other one,
    drawn with a generator seeded by the language and ``seed``.

    Returns
    -------
    list of str, NFC, in the order of the training pairs.
    """
    p = _check_p(p)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise PlantedEuroGestError(f"seed must be a non-negative integer, got {seed!r}")
    train, _ = split_pairs(language, share)
    rng = random.Random(f"planted-eurogest/{language}/{seed}")
    congruent = congruent_forms(train).tolist()
    other = train["feminine"].where(train["stereotype"].isin(data.MASCULINE_STEREOTYPES),
                                    train["masculine"]).tolist()
    return [unicodedata.normalize("NFC", c if rng.random() < p else o)
            for c, o in zip(congruent, other, strict=True)]


def congruent_share(corpus: list[str], language: str, share: float = HELD_OUT_SHARE) -> float:
    """The share of a planted corpus' sentences in the congruent form (what ``p`` plants)."""
    train, _ = split_pairs(language, share)
    if len(corpus) != len(train):
        raise PlantedEuroGestError(f"corpus has {len(corpus)} sentences, the {language} training "
                                   f"pairs {len(train)}")
    congruent = [unicodedata.normalize("NFC", s) for s in congruent_forms(train)]
    return sum(a == b for a, b in zip(corpus, congruent, strict=True)) / len(corpus)


def planted_eurogest_spec(language: str, p: float, seed: int = 0, **training: Any) -> dict[str, Any]:
    """Every input of a planted EuroGEST model (its key in the pinned store and the cache):
    :data:`TRAINING` updated by ``training``, with the defaults of
    :func:`polybias.planted.synthetic.train_causal_lm` filled in; unknown options raise."""
    _check_language(language)
    p = _check_p(p)
    options = {**TRAINING, **PER_LANGUAGE[language], **training}
    full = synthetic.planted_model_spec("causal", p, seed, "en", **options)["training"]
    train, _ = split_pairs(language)
    return {"code_version": CODE_VERSION, "kind": KIND, "language": language, "p": p,
            "seed": seed, "held_out_share": HELD_OUT_SHARE, "n_sentences": int(len(train)),
            "source": "eurogest-gendered", "training": full}


def _train(spec: dict[str, Any], folder: Path) -> None:
    """Train the model of ``spec`` (:func:`planted_eurogest_spec`) into ``folder``."""
    if spec.get("code_version") != CODE_VERSION:
        raise PlantedEuroGestError(f"spec of code version {spec.get('code_version')!r} cannot be "
                                   f"trained by this code ({CODE_VERSION!r})")
    corpus = planted_eurogest_corpus(spec["language"], spec["p"], spec["seed"],
                                     spec["held_out_share"])
    model, tokenizer = synthetic.train_causal_lm(corpus, spec["seed"], **spec["training"])
    synthetic.save_planted(model, tokenizer, spec, folder)


TRAINERS = {KIND: _train}
"""The trainer of this kind, for retraining the pinned store (``make planted``)."""


def planted_eurogest_lm(language: str, p: float, seed: int = 0, **training: Any):
    """The causal LM trained on ``planted_eurogest_corpus(language, p, seed)``: pinned, or
    trained once and cached (:func:`polybias.planted.model_store.resolve`).

    Returns
    -------
    (model, tokenizer, key)
        ``GPT2LMHeadModel`` in eval mode (float64), its ``PreTrainedTokenizerFast`` and the
        model's key ``eurogest-causal-<hash>``.
    """
    spec = planted_eurogest_spec(language, p, seed, **training)
    key = f"{KIND}-{params_hash(spec)}"
    folder = model_store.resolve(key, spec, lambda out: _train(spec, out))
    stored = json.loads((folder / model_store.SPEC_FILE).read_text(encoding="utf-8"))
    if stored != spec:
        raise PlantedEuroGestError(f"{folder}: its {model_store.SPEC_FILE} is not the spec of {key}")
    model, tokenizer = synthetic.load_trained_folder(folder, "causal")
    return model, tokenizer, key
