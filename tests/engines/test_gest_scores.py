"""GEST scorers of the engine on tiny models: straightforward references, symmetry, errors."""

import numpy as np
import pytest
import torch
from polybias.data import gest
from polybias.engines import gest_scores
from polybias.engines.scoring import ScoringError, next_token_logprobs, wrap_language_model
from polybias.planted.tiny_models import build_tiny_model

SENTENCES = ["I am passionate.", "I fixed the car myself over the weekend.",
             "I couldn't open the pickles, so I asked my roommate to do it.", "I cry at weddings."]


@pytest.fixture(scope="module")
def lms(torch_one_thread):
    return {f: wrap_language_model(*build_tiny_model(f, initializer_range=1.0), name=f"tiny-{f}")
            for f in ("bert", "roberta", "gpt2", "llama")}


def _direct_masked(lm, first, second):
    """Mean log10 P of ``first``'s tokens where it differs from ``second``, masked together,
    one forward pass per sentence."""
    tok, model = lm.tokenizer, lm.model
    a, b = tok(first)["input_ids"], tok(second)["input_ids"]
    where = [i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y]
    masked = list(a)
    for i in where:
        masked[i] = tok.mask_token_id
    with torch.no_grad():
        logp = torch.log_softmax(model(input_ids=torch.tensor([masked])).logits[0].float(), -1)
    return float(np.mean([logp[i, a[i]].item() for i in where]) / np.log(10))


@pytest.mark.parametrize("family", ["bert", "roberta"])
@pytest.mark.parametrize("template", range(len(gest.MASKED_TEMPLATES)))
def test_masked_scores_equal_a_direct_computation(lms, family, template):
    lm = lms[family]
    male, female = gest.MASKED_TEMPLATES[template]
    expected = [_direct_masked(lm, gest.fill(male, s), gest.fill(female, s))
                - _direct_masked(lm, gest.fill(female, s), gest.fill(male, s)) for s in SENTENCES]
    ours = gest_scores.masked_gest_scores(lm, SENTENCES, template, batch_tokens=40)
    np.testing.assert_allclose(ours, expected, atol=1e-5)


def test_swapping_the_two_readings_negates_the_scores(lms):
    for family in ("bert", "gpt2"):
        lm = lms[family]
        if lm.kind == "mlm":
            male, female = gest.MASKED_TEMPLATES[1]
            a = gest_scores.masked_gest_scores(lm, SENTENCES, (male, female))
            b = gest_scores.masked_gest_scores(lm, SENTENCES, (female, male))
        else:
            prompt, male, female = gest.CAUSAL_TEMPLATES[0]  # tiny GPT-2: man, woman end in one piece
            a = gest_scores.causal_gest_scores(lm, SENTENCES, (prompt, male, female))
            b = gest_scores.causal_gest_scores(lm, SENTENCES, (prompt, female, male))
        np.testing.assert_allclose(a, -b, atol=1e-6)
        assert np.isfinite(a).all() and np.abs(a).max() > 0


def test_identical_readings_score_nan(lms):
    same = gest_scores.masked_gest_scores(lms["bert"], SENTENCES[:2], ('He said: "{s}"', 'He said: "{s}"'))
    assert np.isnan(same).all()


@pytest.mark.parametrize("family", ["gpt2", "llama"])
def test_causal_scores_equal_a_direct_computation(lms, family):
    lm = lms[family]
    tok, model = lm.tokenizer, lm.model
    for k, (prompt, male, female) in enumerate(gest.CAUSAL_TEMPLATES):
        ids = gest_scores.answer_token_id(tok, male), gest_scores.answer_token_id(tok, female)
        expected = []
        for s in SENTENCES:
            with torch.no_grad():
                logits = model(**tok(gest.fill(prompt, s), return_tensors="pt")).logits[0, -1]
            logp = torch.log_softmax(logits.float(), -1)
            expected.append(float((logp[ids[0]] - logp[ids[1]]).item() / np.log(10)))
        for budget in (16, 4096):  # one prompt per pass, and all at once: the same numbers
            np.testing.assert_allclose(gest_scores.causal_gest_scores(lm, SENTENCES, k, batch_tokens=budget),
                                       expected, atol=1e-5)


def test_answer_tokens_are_read_after_a_space(lms):
    gpt2, llama = lms["gpt2"].tokenizer, lms["llama"].tokenizer
    assert gpt2.convert_ids_to_tokens(gest_scores.answer_token_id(gpt2, "he")).startswith("Ġ")
    assert llama.convert_ids_to_tokens(gest_scores.answer_token_id(llama, "he")).startswith("▁")


def test_differing_positions_as_the_authors():
    assert gest_scores.differing_positions([1, 2, 3], [1, 5, 3]) == [1]
    assert gest_scores.differing_positions([1, 2, 3, 4], [1, 2, 9]) == [2]


def test_bad_calls_name_the_problem(lms):
    with pytest.raises(ScoringError, match="masked template must be 0-3"):
        gest_scores.masked_gest_scores(lms["bert"], SENTENCES, 4)
    with pytest.raises(ScoringError, match="has no {s}"):
        gest_scores.masked_gest_scores(lms["bert"], SENTENCES, ("He said.", "She said."))
    with pytest.raises(ScoringError, match="needs a masked LM"):
        gest_scores.masked_gest_scores(lms["gpt2"], SENTENCES, 0)
    with pytest.raises(ScoringError, match="needs a causal LM"):
        gest_scores.causal_gest_scores(lms["bert"], SENTENCES, 0)
    with pytest.raises(ScoringError, match="text 1 is empty"):
        gest_scores.causal_gest_scores(lms["gpt2"], ["I am.", " "], 0)
    with pytest.raises(ScoringError, match="token_ids"):
        next_token_logprobs(lms["gpt2"], ["I am."], [10**7])
    with pytest.raises(ScoringError, match="2 masculine but 1 feminine"):
        gest_scores.masked_pair_scores(lms["bert"], ["a b", "c d"], ["e f"])
