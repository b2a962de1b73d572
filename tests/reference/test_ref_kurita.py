"""Kurita et al. (2019) reference code, executed: ``kurita_scores(index_quirk="kurita2019")``.

Reference: keitakurita/contextual_embedding_bias_measure at 18044f87,
``lib/bert_utils.py`` and ``lib/bias_calculator.py`` (sources ``ref-kurita-bert-utils``,
``ref-kurita-bias-calculator``), executed unchanged on a tiny random BERT (WordPiece; the
gender words and most attributes split into several pieces).

Shims (stand-in modules; the reference logic is untouched):

* ``pytorch_pretrained_bert`` (not installable today): ``BertForMaskedLM.from_pretrained``
  returns the tiny ``transformers`` model, called as the old class was (input ids in,
  prediction scores out); ``BertConfig`` is unused.
* ``allennlp`` (not installable today): ``PretrainedBertIndexer`` with the tiny
  tokenizer's vocabulary, ``wordpiece_tokenizer`` = its WordPiece model on one word (as
  ``BertTokenizer.wordpiece_tokenizer.tokenize``: no lowercasing) and
  ``tokens_to_indices`` as allennlp 0.9's ``WordpieceIndexer`` (lowercase except the
  special tokens, word-piece each token, wrap in [CLS] … [SEP]); ``Token`` holds ``text``;
  ``Vocabulary`` and ``SpacyWordSplitter`` are unused placeholders.
* ``spacy`` / ``get_spacy_model`` (the en_core_web_sm model cannot be fetched offline): a
  splitter of words, punctuation and the special case [MASK]; on the test sentences
  (lowercase words and a full stop) spaCy splits the same way.

What is checked: the reference's index arithmetic (``get_index``, ``use_last_mask``), its
softmax and its bias score against ours; the model forward pass is the same object on
both sides.
"""

from __future__ import annotations

import re
import types

import numpy as np
import pytest
import torch
from polybias.data import templating
from polybias.engines import template_scores
from polybias.metrics import logprob
from refsupport import load_module, module, reference_file, stand_ins, tiny, tiny_lm

pytestmark = pytest.mark.usefixtures("torch_one_thread")
REPO = "keitakurita/contextual_embedding_bias_measure"
MODEL = "tiny-bert-reference"
TEMPLATES = {"first": "the {t} thinks about the {a} .",      # target before the attribute
             "second": "the {a} was praised by the {t} ."}   # target after the attribute
MALE, FEMALE = ["husband"], ["wife"]
ATTRIBUTES = ["doctor", "nurse", "programmer", "mechanic", "careful", "kind"]


def _stand_ins(model, tok):
    class Token:
        def __init__(self, text):
            self.text = text

    class PretrainedBertIndexer:
        def __init__(self, pretrained_model, max_pieces=512, do_lowercase=True):
            assert pretrained_model == MODEL
            self.vocab = tok.get_vocab()
            wordpiece = tok.backend_tokenizer.model
            self.wordpiece_tokenizer = lambda w: [t.value for t in wordpiece.tokenize(w)]
            self._do_lowercase = do_lowercase
            self._never_lowercase = {"[UNK]", "[SEP]", "[PAD]", "[CLS]", "[MASK]"}

        def _add_encoding_to_vocabulary(self, vocabulary):
            pass

        def tokens_to_indices(self, tokens, vocabulary, index_name):
            text = [t.text.lower() if self._do_lowercase and t.text not in self._never_lowercase else t.text
                    for t in tokens]
            ids = [self.vocab[p] for t in text for p in self.wordpiece_tokenizer(t)]
            return {index_name: [self.vocab["[CLS]"]] + ids + [self.vocab["[SEP]"]]}

    class Nlp:
        tokenizer = types.SimpleNamespace(add_special_case=lambda *a, **k: None)

        def __call__(self, s):
            return [Token(w) for w in re.findall(r"\[MASK\]|\w+|[^\w\s]", s)]

    class BertForMaskedLM:
        def __init__(self, m):
            self.m = m

        @classmethod
        def from_pretrained(cls, name):
            assert name == MODEL
            return cls(model)

        def eval(self):
            self.m.eval()
            return self

        def __call__(self, input_ids):
            return self.m(input_ids=input_ids).logits

    spacy = module("spacy")
    return {
        "spacy": spacy,
        "spacy.attrs": module("spacy.attrs", ORTH=65),
        "spacy.tokenizer": module("spacy.tokenizer", Tokenizer=object),
        "allennlp": module("allennlp"),
        "allennlp.common": module("allennlp.common"),
        "allennlp.common.util": module("allennlp.common.util", get_spacy_model=lambda *a, **k: Nlp()),
        "allennlp.data": module("allennlp.data", Vocabulary=lambda: None),
        "allennlp.data.tokenizers": module("allennlp.data.tokenizers", Token=Token),
        "allennlp.data.tokenizers.word_splitter": module("allennlp.data.tokenizers.word_splitter",
                                                         SpacyWordSplitter=object),
        "allennlp.data.token_indexers": module("allennlp.data.token_indexers",
                                               PretrainedBertIndexer=PretrainedBertIndexer),
        "pytorch_pretrained_bert": module("pytorch_pretrained_bert", BertConfig=object,
                                          BertForMaskedLM=BertForMaskedLM),
    }


@pytest.fixture(scope="module")
def reference():
    utils = reference_file(REPO, "lib/bert_utils.py")
    calc = reference_file(REPO, "lib/bias_calculator.py")
    model, tok = tiny("bert")
    with stand_ins(_stand_ins(model, tok)):
        load_module("bert_utils", utils, package="kurita_reference_lib")
        mod = load_module("bias_calculator", calc, package="kurita_reference_lib")
        with torch.no_grad():
            yield mod.BiasScorer(MODEL)


def book():
    return templating.parse_templates({
        "lists": {"t": MALE + FEMALE, "a": ATTRIBUTES},
        "templates": [{"name": k, "text": v, "slots": {"t": {"list": "t", "role": "target"},
                                                       "a": {"list": "a", "role": "attribute"}}}
                      for k, v in TEMPLATES.items()]})


def test_words_split_into_pieces():
    _, tok = tiny("bert")
    assert all(len(tok.tokenize(w)) > 1 for w in MALE + FEMALE + ATTRIBUTES[:4])


def test_index_quirk_kurita2019_equals_the_executed_reference(reference):
    lm = tiny_lm("bert")
    ours = template_scores.kurita_scores(lm, book(), list(TEMPLATES), mode="first_piece", index_quirk="kurita2019")
    ours = ours.set_index(["template", "target", "attribute"])
    default = template_scores.kurita_scores(lm, book(), list(TEMPLATES), mode="first_piece",
                                    prior_at="attribute").set_index(["template", "target", "attribute"])
    diffs, bias_diffs, gaps = [], [], []
    with torch.no_grad():
        for name, text in TEMPLATES.items():
            sentence = text.replace("{t}", "GGG").replace("{a}", "XXX")
            first = name == "first"
            bland = sentence.replace("XXX", "[MASK]").replace("GGG", "[MASK]")
            prior = reference.get_mask_fill_logits(bland, MALE + FEMALE, use_last_mask=first)
            for a in ATTRIBUTES:
                fill = reference.get_mask_fill_logits(sentence.replace("XXX", a).replace("GGG", "[MASK]"),
                                                      MALE + FEMALE, use_last_mask=not first)
                for w in MALE + FEMALE:
                    row = ours.loc[(name, w, a)]
                    diffs += [abs(np.log(fill[w]) - row.fill), abs(np.log(prior[w]) - row.prior)]
                    gaps.append(abs(np.log(prior[w]) - default.loc[(name, w, a)].prior) +
                                abs(np.log(fill[w]) - default.loc[(name, w, a)].fill))
                ref = reference.bias_score(sentence, [MALE, FEMALE], a, gender_comes_first=first)
                mine = logprob.attribute_bias(ours.loc[name].reset_index(), MALE, FEMALE).loc[a]
                bias_diffs.append(abs(ref["bias_prior_corrected"] - mine))
                assert np.sign(ref["bias_prior_corrected"]) == np.sign(mine)  # same decision
    print(f"kurita2019: max |diff| log-prob {max(diffs):.2e}, bias score {max(bias_diffs):.2e}")
    assert max(diffs) < 1e-4 and max(bias_diffs) < 1e-4
    # the quirk matters on this model: the Bangla-study reading does not reproduce the reference
    assert max(gaps) > 0.1


def test_index_quirk_needs_first_piece_mode():
    lm = tiny_lm("bert")
    with pytest.raises(template_scores.LogProbError, match="needs mode='first_piece'"):
        template_scores.kurita_scores(lm, book(), "first", index_quirk="kurita2019")
    with pytest.raises(template_scores.LogProbError, match="index_quirk must be one of"):
        template_scores.kurita_scores(lm, book(), "first", mode="first_piece", index_quirk="kurita")
