"""AUL and AULA (Kaneko & Bollegala 2022) against an independent per-sentence computation."""

import numpy as np
import pandas as pd
import pytest
import torch
from polybias.engines.pair_scores import all_unmasked_scores, pair_scores
from polybias.metrics import crows
from polybias.studies import crows_pairs

PAIRS = pd.DataFrame({
    "sent_more": ["the woman is a bad driver .", "she said the nurse was kind .", "women cook ."],
    "sent_less": ["the man is a bad driver .", "he said the nurse was kind .",
                  "men often cook in the big kitchen ."],
    "bias_type": ["gender", "gender", "gender"]})


@pytest.fixture(scope="module")
def tiny(torch_one_thread):
    from polybias.engines import scoring
    from polybias.planted import tiny_models

    return {f: scoring.wrap_language_model(*tiny_models.build_tiny_model(f), name=f)
            for f in ("bert", "roberta", "gpt2")}


def reference(model, tokenizer, sentence):
    """The reference ``calculate_aul`` (evaluate_bias_in_mlm), one unpadded sentence at a time."""
    before = model.config._attn_implementation
    model.set_attn_implementation("eager")
    try:
        token_ids = tokenizer(sentence, return_tensors="pt")["input_ids"]
        with torch.no_grad():
            output = model(token_ids, output_attentions=True)
        log_probs = torch.log_softmax(output.logits.squeeze(0), dim=1)
        token_log_probs = log_probs.gather(1, token_ids.view(-1, 1))[1:-1]
        aul = torch.mean(token_log_probs).item()
        attentions = torch.mean(torch.cat(output.attentions, 0), 0)
        averaged_token_attentions = torch.mean(torch.mean(attentions, 0), 0)
        aula = torch.mean(token_log_probs.squeeze(1) * averaged_token_attentions[1:-1]).item()
    finally:
        model.set_attn_implementation(before)
    return aul, aula


@pytest.mark.parametrize("family", ["bert", "roberta"])
def test_aul_and_aula_equal_the_reference_computation(tiny, family):
    lm = tiny[family]
    aul = pair_scores(lm, PAIRS, method="aul", batch_tokens=64)  # padded batches
    aula = pair_scores(lm, PAIRS, method="aula")
    for i, row in PAIRS.iterrows():
        for col, sentence in (("score_more", row.sent_more), ("score_less", row.sent_less)):
            ref_aul, ref_aula = reference(lm.model, lm.tokenizer, sentence)
            assert aul.loc[i, col] == pytest.approx(ref_aul, abs=1e-5)
            assert aula.loc[i, col] == pytest.approx(ref_aula, abs=1e-6)
    n = len(lm.tokenizer(PAIRS.sent_less[2])["input_ids"]) - 2
    assert aul.n_scored_less[2] == n
    assert lm.model.config._attn_implementation != "eager"  # switched back after AULA
    table = crows.stereotype_score(aula, n_bootstrap=100)
    assert table.loc[0, "n"] == 3 and table.loc[0, "stereotyped"] == int((aula.score_more > aula.score_less).sum())


def test_aula_weights_by_hand(tiny):
    lm = tiny["bert"]
    [r] = all_unmasked_scores(lm, ["the nurse was kind ."], attention=True)
    [plain] = all_unmasked_scores(lm, ["the nurse was kind ."])
    assert plain["weight"] is None and plain["logprob"] == pytest.approx(r["logprob"], abs=1e-5)
    assert plain["score"] == pytest.approx(r["logprob"].mean(), abs=1e-5)
    # every query row is a distribution, so the weights of all tokens (special ones too) sum to 1
    assert 0 < r["weight"].sum() < 1 and (r["weight"] > 0).all()
    assert r["score"] == pytest.approx(np.mean(r["weight"] * r["logprob"]), abs=1e-12)
    assert (r["logprob"] < 0).all() and r["n_tokens"] == len(r["logprob"])


def test_aul_refuses_causal_models_and_identical_pairs(tiny):
    with pytest.raises(crows.CrowsError, match="masked LMs"):
        pair_scores(tiny["gpt2"], PAIRS, method="aul")
    with pytest.raises(crows.CrowsError, match="masked LMs"):
        all_unmasked_scores(tiny["gpt2"], ["a b"])
    same = PAIRS.iloc[:1].assign(sent_less=PAIRS.sent_more[0])
    with pytest.raises(crows.CrowsError, match="identical"):
        pair_scores(tiny["bert"], same, method="aula")


@pytest.mark.parametrize("method", ["aul", "aula"])
def test_planted_direction(planted_lm, method):
    pairs = crows_pairs.load_pairs("planted", n=200, seed=0)
    biased = crows.stereotype_score(pair_scores(planted_lm[0.9], pairs, method=method),
                                    n_bootstrap=200, seed=0).iloc[0]
    control = crows.stereotype_score(pair_scores(planted_lm[0.5], pairs, method=method),
                                     n_bootstrap=200, seed=0).iloc[0]
    assert biased.score > 50 and biased.ci_low > 50 and biased.binom_p < 0.01  # 99.0 / 98.0
    assert control.ci_low <= 50 <= control.ci_high  # the p = 0.5 control: 51.5 / 53.5
