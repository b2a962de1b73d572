"""Kurita log-probability bias: target-mask reading, whole-word scoring, planted answers.

The planted MLMs (p = 0.9 and the p = 0.5 control) come from the `planted_lm` fixture
(tests/conftest.py): trained once into the project cache, then loaded.
"""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pytest
import torch
from polybias.data import templating
from polybias.engines import scoring, template_scores
from polybias.metrics import logprob
from polybias.metrics.logprob import LogProbError
from polybias.planted import probes

os.environ.setdefault("HF_HUB_OFFLINE", "1")
pytestmark = pytest.mark.usefixtures("torch_one_thread")



@pytest.fixture(scope="module")
def book():
    return probes.planted_templates("en")


def raw_logprob_at(lm, text, index, token_id):
    """Independent reference: one forward pass, log-softmax at ``index``."""
    ids = lm.tokenizer(text, return_tensors="pt")["input_ids"]
    with torch.no_grad():
        lp = lm.model(input_ids=ids).logits[0, index].log_softmax(-1)
    return float(lp[token_id])


def test_prior_is_read_at_the_target_mask(planted_lm, book):
    lm = planted_lm[0.9]
    scores = template_scores.kurita_scores(lm, book, "planted_en_0", targets=["man"], attributes=["office"],
                                   mode="first_piece")
    row = scores.iloc[0]
    # "the [MASK] thinks about the [MASK] ." -> [CLS] the [MASK] thinks about the [MASK] . [SEP]
    text = "the [MASK] thinks about the [MASK] ."
    man = lm.tokenizer.convert_tokens_to_ids("man")
    at_target = raw_logprob_at(lm, text, 2, man)
    at_attribute = raw_logprob_at(lm, text, 6, man)
    assert row.prior == pytest.approx(at_target, abs=1e-5)
    assert abs(at_target - at_attribute) > 0.5  # the two readings really differ
    compat = template_scores.kurita_scores(lm, book, "planted_en_0", targets=["man"], attributes=["office"],
                                   mode="first_piece", prior_at="attribute")
    assert compat.prior.iloc[0] == pytest.approx(at_attribute, abs=1e-5)
    # fill: only the target masked
    fill = raw_logprob_at(lm, "the [MASK] thinks about the office .", 2, man)
    assert row.fill == pytest.approx(fill, abs=1e-5)
    assert row.corrected == pytest.approx(fill - at_target, abs=1e-5)
    # whole-word mode on a one-piece word gives the same numbers
    word = template_scores.kurita_scores(lm, book, "planted_en_0", targets=["man"], attributes=["office"])
    assert word[["fill", "prior"]].to_numpy() == pytest.approx(scores[["fill", "prior"]].to_numpy(), abs=1e-5)


def test_multi_piece_target_whole_word_vs_first_piece(planted_lm):
    lm = planted_lm[0.9]
    raw = {"lists": {"t": ["mothers"], "a": ["office"]},
           "templates": [{"name": "m", "text": "the {t} thinks about the {a} .",
                          "slots": {"t": {"list": "t", "role": "target"}, "a": {"list": "a", "role": "attribute"}}}]}
    book = templating.parse_templates(raw)
    assert lm.tokenizer.tokenize("mothers") == ["mother", "##s"]
    mother, s = lm.tokenizer.convert_tokens_to_ids(["mother", "##s"])
    word = template_scores.kurita_scores(lm, book, "m").iloc[0]
    first = template_scores.kurita_scores(lm, book, "m", mode="first_piece").iloc[0]
    # chain rule within the word: P(mother | [MASK][MASK]) * P(##s | mother [MASK])
    fill_ref = (raw_logprob_at(lm, "the [MASK][MASK] thinks about the office .", 2, mother)
                + raw_logprob_at(lm, "the mother[MASK] thinks about the office .", 3, s))
    prior_ref = (raw_logprob_at(lm, "the [MASK][MASK] thinks about the [MASK] .", 2, mother)
                 + raw_logprob_at(lm, "the mother[MASK] thinks about the [MASK] .", 3, s))
    assert word.fill == pytest.approx(fill_ref, abs=1e-5)
    assert word.prior == pytest.approx(prior_ref, abs=1e-5)
    # first piece: one mask for the whole word, probability of "mother" there
    assert first.fill == pytest.approx(raw_logprob_at(lm, "the [MASK] thinks about the office .", 2, mother),
                                       abs=1e-5)


def effect(lm, book, mode="word"):
    tg = logprob.group_members(book, "targets")
    ag = logprob.group_members(book, "attributes")
    scores = template_scores.kurita_scores(lm, book, list(book.templates), mode=mode)
    bias = logprob.attribute_bias(scores, tg["male"], tg["female"])
    return logprob.kurita_effect(bias, ag["career"], ag["family"], seed=0)


def test_planted_direction_and_balanced_control(planted_lm, book):
    planted = effect(planted_lm[0.9], book)
    control = effect(planted_lm[0.5], book)
    # p = 0.9: male targets gain log-probability next to career words, lose it next to family words
    assert planted.mean_a > 1.0 and planted.mean_b < -0.5
    assert planted.effect_size > 1.0 and planted.pvalue < 0.01
    # p = 0.5: the corrected scores do not separate the attribute sets
    assert abs(control.mean_a - control.mean_b) < 0.05 * (planted.mean_a - planted.mean_b)
    assert control.pvalue > 0.05
    # deterministic
    again = effect(planted_lm[0.9], book)
    assert (again.effect_size, again.pvalue) == (planted.effect_size, planted.pvalue)


def test_hand_computed_attribute_bias_and_effect():
    scores = pd.DataFrame({
        "target": ["he", "she", "he2", "she", "he", "she", "he2", "she"],
        "attribute": ["c", "c", "c", "c", "f", "f", "f", "f"],
        "corrected": [2.0, 0.0, 4.0, 1.0, 0.0, 1.0, 1.0, 3.0]})
    bias = logprob.attribute_bias(scores, ["he", "he2"], ["she"])
    # c: mean(2, 4) - mean(0, 1) = 2.5 ; f: mean(0, 1) - mean(1, 3) = -1.5
    assert bias.to_dict() == {"c": 2.5, "f": -1.5}
    r = logprob.kurita_effect(pd.Series({"c1": 3.0, "c2": 1.0, "f1": 0.0, "f2": -2.0}), ["c1", "c2"], ["f1", "f2"])
    s = np.array([3.0, 1.0, 0.0, -2.0])
    assert r.effect_size == pytest.approx((2.0 - (-1.0)) / s.std(ddof=1))
    assert r.pvalue == pytest.approx(1 / 6) and r.method == "exact"


def test_bad_inputs_are_clear_errors(planted_lm, book):
    lm = planted_lm[0.5]
    with pytest.raises(template_scores.LogProbError, match="mode must be one of"):
        template_scores.kurita_scores(lm, book, "planted_en_0", mode="whole")
    with pytest.raises(template_scores.LogProbError, match="first_piece mode only"):
        template_scores.kurita_scores(lm, book, "planted_en_0", prior_at="attribute")
    with pytest.raises(template_scores.LogProbError, match="has no entries \\['queen'\\]"):
        template_scores.kurita_scores(lm, book, "planted_en_0", targets=["queen"])
    with pytest.raises(template_scores.LogProbError, match="empty list"):
        template_scores.kurita_scores(lm, book, "planted_en_0", attributes=[])
    with pytest.raises(LogProbError, match="targets in both groups"):
        logprob.attribute_bias(pd.DataFrame({"target": ["a"], "attribute": ["x"], "corrected": [0.0]}), ["a"], ["a"])
    nomask = templating.parse_templates({"lists": {"g": ["man"]}, "templates": [
        {"name": "nomask", "text": "the {g} .", "slots": {"g": "g"}}]})
    with pytest.raises(templating.TemplateError, match="'nomask'.*exactly one target"):
        template_scores.kurita_scores(lm, nomask, "nomask")
    two = templating.parse_templates({"lists": {"g": ["man"], "a": ["office"]}, "templates": [
        {"name": "two", "text": "the {g} and the {a} .",
         "slots": {"g": {"list": "g", "role": "target"}, "a": {"list": "a", "role": "context"}}}]})
    with pytest.raises(templating.TemplateError, match="'two'.*exactly one attribute"):
        template_scores.kurita_scores(lm, two, "two")


def test_context_study_per_structure_on_hand_scores():
    raw = {"lists": {"t": [{"id": "m", "features": {"group": "male"}, "word": "m"},
                           {"id": "f", "features": {"group": "female"}, "word": "f"}],
                     "a": [{"id": w, "features": {"group": g}, "word": w}
                           for w, g in (("c1", "career"), ("c2", "career"), ("h1", "family"), ("h2", "family"))]},
           "templates": [{"name": n, "set": s, "text": "{t} {a}",
                          "slots": {"t": {"list": "t", "role": "target"}, "a": {"list": "a", "role": "attribute"}}}
                         for n, s in (("one", "S1"), ("two", "S2"))]}
    book = templating.parse_templates(raw)
    rows = []
    for tpl, scale in (("one", 1.0), ("two", 0.0)):
        for attr, sign in (("c1", 1), ("c2", 1), ("h1", -1), ("h2", -1)):
            bump = 0.1 if attr.endswith("1") else 0.0
            rows.append({"template": tpl, "target": "m", "attribute": attr, "fill": 0.0, "prior": -1.0,
                         "corrected": scale * sign + bump})
            rows.append({"template": tpl, "target": "f", "attribute": attr, "fill": 0.0, "prior": -1.5,
                         "corrected": 0.0})
    summary, per = logprob.context_study(pd.DataFrame(rows), book, "t", "a", "male", "female", "career", "family")
    s = summary.set_index("structure")
    assert s.loc["S1", "corrected_career"] == pytest.approx(1.05)
    assert s.loc["S1", "corrected_family"] == pytest.approx(-0.95)
    assert s.loc["S2", "corrected_career"] == pytest.approx(0.05)
    d = np.array([1.1, 1.0, -0.9, -1.0])
    assert s.loc["S1", "effect_size"] == pytest.approx((1.05 + 0.95) / d.std(ddof=1))
    assert per[per.structure == "S1"].prior.tolist() == pytest.approx([0.5] * 4)
    with pytest.raises(LogProbError, match="has no group \\['boys'\\]"):
        logprob.context_study(pd.DataFrame(rows), book, "t", "a", "boys", "female", "career", "family")
    # a structure without some attributes' sentences (seed 000's blank S5 cells) is tested on the rest
    fewer = pd.DataFrame([r for r in rows if not (r["template"] == "two" and r["attribute"] == "c1")])
    summary, per = logprob.context_study(fewer, book, "t", "a", "male", "female", "career", "family")
    s = summary.set_index("structure")
    assert sorted(per[per.structure == "S2"].attribute) == ["c2", "h1", "h2"]
    assert s.loc["S2", "corrected_career"] == pytest.approx(0.0)
    assert s.loc["S1", "corrected_career"] == pytest.approx(1.05)


def test_bangla_structures_are_valid_templates():
    planted = probes.planted_templates("bn")
    assert list(planted.sets()) == ["S1", "S2", "S3", "S4", "S5"]
    project = templating.load_templates("logprob_bn")
    assert list(project.sets()) == ["S1", "S2", "S3", "S4", "S5"]
    s3 = templating.realise(project, "bn_s3", {"trait": "lazy", "target": "mother"})[0].text
    assert s3 == "অলস স্বভাব মায়েদের মধ্যে বেশি দেখা যায়।"
    s1 = templating.realise(project, "bn_s1", {"trait": "lazy", "target": "sister"})[0].text
    assert s1 == "বোনেরা অলস।"


@pytest.mark.parametrize("family", ["bert", "roberta", "albert", "electra"])
@pytest.mark.parametrize("mode", ["word", "first_piece"])
def test_tokenizer_families_score_and_the_prior_ignores_the_masked_attribute(family, mode):
    from polybias.planted import tiny_models

    model, tok = tiny_models.build_tiny_model(family)
    lm = scoring.wrap_language_model(model, tok, name=f"tiny-{family}")
    raw = {"lists": {"t": ["nurse", "engineer"], "a": ["kind", "rude", "careful"]},
           "templates": [{"name": "x", "text": "The {t} is very {a}.",
                          "slots": {"t": {"list": "t", "role": "target"}, "a": {"list": "a", "role": "attribute"}}}]}
    scores = template_scores.kurita_scores(lm, templating.parse_templates(raw), "x", mode=mode)
    assert len(scores) == 6 and np.isfinite(scores[["fill", "prior"]].to_numpy()).all()
    assert (scores[["fill", "prior"]].to_numpy() < 0).all()
    spread = scores.groupby("target").prior.agg(lambda v: v.max() - v.min())
    assert (spread < 1e-5).all()  # the attribute is masked: its word cannot matter
    assert scores.groupby("target").fill.agg(lambda v: v.max() - v.min()).max() > 1e-6


def test_sentences_realised_masked_are_scored_as_the_error_says_written_out_with_masked(planted_lm, book):
    """Sentences realised with a slot masked are refused, saying to pass them written out and
    name the slot in ``masked``; done so, the target's log-probabilities come out, one per
    sentence."""
    lm = planted_lm[0.9]
    template = book.template("planted_en_0")
    target, attribute = template.the("target"), template.the("attribute")
    masked = templating.expand(book, template, mask=(attribute,))[:4]
    with pytest.raises(template_scores.LogProbError, match=r"pass sentences with every slot written out "
                                           rf"\(masked here: \['{attribute}'\]\); use 'masked' to mask slots"):
        template_scores.target_logprobs(lm, masked, target)
    written = templating.expand(book, template)[:4]
    scores = template_scores.target_logprobs(lm, written, target, masked=(attribute,))
    assert scores.shape == (4,) and np.isfinite(scores).all() and (scores < 0).all()
