"""Seed 000 (Bangla) reimplementation of Kurita et al., executed:
``kurita_scores(mode="first_piece", prior_at="attribute")``.

Reference: csebuetnlp/BanglaContextualBias at feec322f, ``LogProbCalculations/BertUtils.py``
and ``LogProbCalculations/bias_score.py`` (sources ``ref-bangla-bert-utils``,
``ref-bangla-bias-score``), executed unchanged on a tiny random BERT (WordPiece; the
gender words and most attributes split into several pieces): its ``calculateScore`` (the
per-element step of its ``__main__``: ``getFillScore``, ``getBiasNormScore`` →
``bias_score``, the male/female counts and the averaged scores, written to
``results/<title>_scores.csv``) on a frame of traits with its ``Trait``/``Mask_Sent``/
``Bias_Sent`` columns, for two templates (gender word before the trait, read with
``use_last_mask=False``; after it, ``use_last_mask=True``) and two gender-word pairs.

Shims (stand-in modules and loaders; the reference logic is untouched):

* ``transformers.AutoTokenizer.from_pretrained`` / ``AutoModelForMaskedLM.from_pretrained``
  (the ``csebuetnlp/banglabert_large_generator`` checkpoint cannot be fetched offline)
  return the tiny tokenizer and model for that name while ``BertUtils`` is loaded.
* ``normalizer`` (csebuetnlp's text normalizer, installed from its repository, not
  available offline): ``normalize`` is Unicode NFKC with runs of whitespace collapsed.
  The test sentences are lowercase ASCII words, ``[MASK]`` and a full stop, which that
  normalizer (written for Bangla text) is assumed to leave as they are.
* ``dataLoader`` and ``dataVisualizer`` (sibling modules of the repository that are not
  among the pinned files; only its ``__main__`` block uses them): empty modules.
* ``LogProbCalculations`` is a namespace package on the copies' folder, so that
  ``bias_score.py``'s ``from LogProbCalculations.BertUtils import *`` finds ``BertUtils.py``.

What is compared: the reference reports *raw logits* (``get_mask_fill_logits`` with its
default ``apply_softmax=False``), so its per-word fill and prior numbers are not
log-probabilities; their male − female differences are (the softmax normaliser of one
mask cancels). The test compares those differences — fill score ``Bias_Score``, prior
correction, prior-corrected ``Norm_Score`` — and the male/female counts with ours. The
per-word fill and prior log-probabilities are compared by calling the reference's
``get_mask_fill_logits`` on the sentences ``bias_score`` builds, with its own
``apply_softmax=True`` option, and taking the log.
"""

from __future__ import annotations

import io
import unicodedata
from contextlib import redirect_stdout

import numpy as np
import pandas as pd
import pytest
import torch
import transformers
from polybias.data import templating
from polybias.engines import template_scores
from refsupport import load_module, module, reference_file, stand_ins, tiny, tiny_lm

pytestmark = pytest.mark.usefixtures("torch_one_thread")
REPO = "csebuetnlp/BanglaContextualBias"
CHECKPOINT = "csebuetnlp/banglabert_large_generator"
#: name -> (template, the reference's use_last_mask for it)
TEMPLATES = {"first": ("the {t} is very {a} .", False),          # gender word before the trait
             "second": ("a {a} person is the {t} .", True)}      # gender word after the trait
GENDERED = [["husband", "wife"], ["father", "mother"]]
ATTRIBUTES = ["careful", "kind", "doctor", "nurse", "programmer", "mechanic"]


def _normalize(text):
    return unicodedata.normalize("NFKC", " ".join(text.split()))


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    utils = reference_file(REPO, "LogProbCalculations/BertUtils.py")
    score = reference_file(REPO, "LogProbCalculations/bias_score.py")
    model, tok = tiny("bert")

    def tokenizer(name, *a, **k):
        assert name == CHECKPOINT
        return tok

    def masked_lm(name, *a, **k):
        assert name == CHECKPOINT
        return model

    shims = {"normalizer": module("normalizer", normalize=_normalize),
             "dataLoader": module("dataLoader"), "dataVisualizer": module("dataVisualizer")}
    with stand_ins(shims), pytest.MonkeyPatch.context() as mp:
        mp.setattr(transformers.AutoTokenizer, "from_pretrained", staticmethod(tokenizer))
        mp.setattr(transformers.AutoModelForMaskedLM, "from_pretrained", staticmethod(masked_lm))
        load_module("BertUtils", utils, package="LogProbCalculations")
        mod = load_module("bias_score", score, package="LogProbCalculations")
        yield mod


def book():
    return templating.parse_templates({
        "lists": {"t": [w for pair in GENDERED for w in pair], "a": ATTRIBUTES},
        "templates": [{"name": k, "text": v[0], "slots": {"t": {"list": "t", "role": "target"},
                                                          "a": {"list": "a", "role": "attribute"}}}
                      for k, v in TEMPLATES.items()]})


def test_words_split_into_pieces():
    _, tok = tiny("bert")
    assert all(len(tok.tokenize(w)) > 1 for pair in GENDERED for w in pair)
    assert all(len(tok.tokenize(w)) > 1 for w in ATTRIBUTES)


def test_prior_at_attribute_equals_the_executed_reference(reference, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "results").mkdir()
    ours = template_scores.kurita_scores(tiny_lm("bert"), book(), list(TEMPLATES), mode="first_piece",
                                 prior_at="attribute").set_index(["template", "target", "attribute"])
    default = template_scores.kurita_scores(tiny_lm("bert"), book(), list(TEMPLATES), mode="first_piece")
    default = default.set_index(["template", "target", "attribute"])
    diffs = {"fill": [], "prior": [], "Bias_Score": [], "prior correction": [], "Norm_Score": []}
    gaps = []
    for name, (text, last) in TEMPLATES.items():
        bias_sent = text.replace("{t}", "GGG").replace("{a}", "XXX")
        frame = pd.DataFrame({"Trait": ATTRIBUTES,
                              "Mask_Sent": bias_sent.replace("GGG", "[MASK]").replace("XXX", "%s"),
                              "Bias_Sent": bias_sent})
        with redirect_stdout(io.StringIO()):
            comparison, _ = reference.calculateScore(frame, name, gendered_words=GENDERED, use_last_mask=last)
        table = pd.read_csv(tmp_path / "results" / f"{name}_scores.csv").set_index("Attribute")
        for pair, counts in zip(GENDERED, comparison, strict=True):
            m, f = pair
            o = ours.loc[name]
            fill = o.loc[m].fill - o.loc[f].fill
            prior = o.loc[m].prior - o.loc[f].prior
            norm = o.loc[m].corrected - o.loc[f].corrected
            ref_fill = table[f"Bias_Score({m}-{f})"]
            ref_norm = table[f"Norm_Score({m}-{f})"]
            diffs["Bias_Score"] += list(np.abs(ref_fill - fill.loc[ATTRIBUTES]))
            diffs["Norm_Score"] += list(np.abs(ref_norm - norm.loc[ATTRIBUTES]))
            # counts of attributes leaning male (>= 0) / female, as the reference counts them
            assert counts["mc_f"] == int((fill.loc[ATTRIBUTES] >= 0).sum())
            assert counts["mc_norm"] == int((norm.loc[ATTRIBUTES] >= 0).sum())
            assert counts["fc_norm"] == int((norm.loc[ATTRIBUTES] < 0).sum())
            assert (np.sign(ref_norm) == np.sign(norm.loc[ATTRIBUTES])).all()
            for a in ATTRIBUTES:
                with torch.no_grad():
                    r = reference.bias_score(bias_sent, pair, a, use_last_mask=last)
                    # per word: the sentences bias_score builds, read with its own softmax option
                    fills = reference.get_mask_fill_logits(
                        bias_sent.replace("XXX", a).replace("GGG", "[MASK]"), pair, apply_softmax=True)
                    priors = reference.get_mask_fill_logits(
                        bias_sent.replace("XXX", "[MASK]").replace("GGG", "[MASK]"), pair,
                        use_last_mask=not last, apply_softmax=True)
                diffs["prior correction"].append(abs(r["gender_fill_prior_correction"] - prior.loc[a]))
                assert abs(r["gender_fill_bias_prior_corrected"] - table.loc[a, f"Norm_Score({m}-{f})"]) < 1e-6  # its CSV
                for w in pair:
                    diffs["fill"].append(abs(np.log(fills[w].item()) - o.loc[(w, a)].fill))
                    diffs["prior"].append(abs(np.log(priors[w].item()) - o.loc[(w, a)].prior))
                    gaps.append(abs(np.log(priors[w].item()) - default.loc[(name, w, a)].prior))
    worst = {k: max(v) for k, v in diffs.items()}
    print("seed 000 bias_score: max |diff| " + ", ".join(f"{k} {v:.1e}" for k, v in worst.items()))
    assert max(worst.values()) < 1e-4
    # the prior's reading matters on this model: read at the target, it differs
    assert max(gaps) > 0.1
