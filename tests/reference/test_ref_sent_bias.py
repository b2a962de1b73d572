"""sent-bias (May et al. 2019) reference code, executed: ``seat(pooling="first-piece",
special_tokens=False)``.

Reference: W4ngatang/sent-bias at e3559fb6, ``sentbias/encoders/bert.py`` (``encode``)
and ``sentbias/weat.py`` (``run_test``: cosine table, effect size, permutation p-value)
(sources ``ref-sent-bias-bert``, ``ref-sent-bias-weat``), executed unchanged on a tiny
random BERT encoder (WordPiece; most words split into several pieces).

Shims (the reference logic is untouched):

* ``pytorch_pretrained_bert`` (not installable today): ``BertModel`` is the tiny
  ``transformers`` encoder called as the old class was — ``model(ids, segment_ids,
  output_all_encoded_layers=False)`` returns (last layer, pooled output);
  ``BertTokenizer`` is the tiny tokenizer, whose ``tokenize`` (lowercasing, basic split,
  WordPiece, no special tokens) and ``convert_tokens_to_ids`` behave as the old ones.

* ``numpy.int`` (removed in numpy 1.24; ``weat.py``'s permutation test uses it as a
  dtype) is set to the builtin ``int`` while the test runs.

What is checked: the vectors (tokenisation without special
tokens, position 0), the effect size and the exact permutation p-value.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from polybias.engines import embeddings
from polybias.metrics import seat
from polybias.studies import seat as seat_study
from refsupport import load_module, module, reference_file, stand_ins, tiny

pytestmark = pytest.mark.usefixtures("torch_one_thread")
REPO = "W4ngatang/sent-bias"
SENTENCES = {
    "X": ("This is a doctor.", "That is an engineer.", "Here is a programmer.", "The mechanic is here."),
    "Y": ("This is a nurse.", "That is a teacher.", "Here is a secretary.", "The baker is here."),
    "A": ("He is a man.", "This is his brother.", "That is her husband.", "Here is a boy."),
    "B": ("She is a woman.", "This is his sister.", "That is his wife.", "Here is a girl."),
}


class _Model:
    def __init__(self, model):
        self.model = model

    @classmethod
    def from_pretrained(cls, name):
        return cls(tiny("bert", head=False)[0])

    def eval(self):
        self.model.eval()
        return self

    def __call__(self, ids, segments, output_all_encoded_layers=True):
        out = self.model(input_ids=ids, token_type_ids=segments)
        return out.last_hidden_state, out.pooler_output


class _Tokenizer:
    @classmethod
    def from_pretrained(cls, name):
        return tiny("bert", head=False)[1]


@pytest.fixture(scope="module")
def reference():
    bert_file = reference_file(REPO, "sentbias/encoders/bert.py")
    weat_file = reference_file(REPO, "sentbias/weat.py")
    with stand_ins({"pytorch_pretrained_bert": module("pytorch_pretrained_bert", BertModel=_Model,
                                                      BertTokenizer=_Tokenizer)}):
        bert = load_module("sent_bias_bert_reference", bert_file)
        weat = load_module("sent_bias_weat_reference", weat_file)
    return bert, weat


def test_special_tokens_false_equals_the_executed_reference(reference, monkeypatch):
    bert, weat = reference
    monkeypatch.setattr(np, "int", int, raising=False)
    model, tok = bert.load_model("tiny")
    with torch.no_grad():
        ref_vecs = {r: bert.encode(model, tok, list(s)) for r, s in SENTENCES.items()}
    encs = {k: {"category": r, "encs": ref_vecs[r]}
            for k, r in (("targ1", "X"), ("targ2", "Y"), ("attr1", "A"), ("attr2", "B"))}
    ref_es, ref_p = weat.run_test(encs, n_samples=100_000)

    enc = embeddings.wrap_encoder(*tiny("bert", head=False), name="tiny-bert-encoder")
    test = seat.SeatTest("tiny", {r: tuple(s) for r, s in SENTENCES.items()})
    ours = seat_study.seat(enc, test, pooling="first-piece", special_tokens=False, ddof=1)
    vecs = seat_study.seat_vectors(enc, test, pooling="first-piece", special_tokens=False)
    vdiff = max(np.abs(vecs[r][i] - ref_vecs[r][s]).max()
                for r, ss in SENTENCES.items() for i, s in enumerate(ss))
    print(f"sent-bias: max |diff| vectors {vdiff:.1e}, effect size {ours.effect_size:.6f} vs {ref_es:.6f}, "
          f"p {ours.pvalue:.6f} vs {ref_p:.6f}")
    assert vdiff < 1e-5
    assert ours.effect_size == pytest.approx(ref_es, abs=1e-5)
    assert ours.pvalue == pytest.approx(ref_p, abs=1e-9)
    assert np.sign(ours.effect_size) == np.sign(ref_es)
    # the special tokens matter: with [CLS]/[SEP] the first piece's vector differs
    with_special = seat_study.seat_vectors(enc, test, pooling="first-piece")
    assert np.abs(with_special["X"] - vecs["X"]).max() > 1e-2


def test_special_tokens_false_needs_a_text_pooling():
    enc = embeddings.wrap_encoder(*tiny("bert", head=False), name="tiny-bert-encoder")
    with pytest.raises(embeddings.EmbeddingError, match="special_tokens=False goes with"):
        embeddings.sentence_vectors(enc, ["This is a doctor."], pooling="cls", special_tokens=False)
    mean = embeddings.sentence_vectors(enc, ["This is a doctor."], pooling="mean", special_tokens=False)
    assert mean.shape == (1, 32)
