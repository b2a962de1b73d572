"""EuroGEST sentences scored by the engine: the part that differs, BOS modes, masked LMs."""

import numpy as np
import pandas as pd
import pytest
from polybias.engines import scoring
from polybias.engines.eurogest_scores import divergence, gendered_pair_scores
from polybias.planted import tiny_models

pytestmark = pytest.mark.usefixtures("torch_one_thread")
PAIRS = pd.DataFrame({
    "masculine": ["I was always a leader type.", "He said that I am tired.", "I cooked."],
    "feminine": ["I was always a leaderess type.", "She said that I am tired.", "I cooked too."],
    "stereotype": [13, 2, 4]})


def _lm(family):
    model, tok = tiny_models.build_tiny_model(family, seed=0, initializer_range=0.5)
    return scoring.wrap_language_model(model, tok, name=f"tiny-{family}")


def test_divergence_edge_cases():
    assert divergence([1, 2, 3], [1, 2, 4]) == 2
    assert divergence([1, 2], [1, 2, 3]) == 1 and divergence([1, 2, 3], [1, 2]) == 1
    assert divergence([7, 8], [7, 8]) == 0 and divergence([1], [2]) == 0


def test_causal_scores_sum_the_tokens_after_the_divergence():
    lm = _lm("gpt2")
    out = gendered_pair_scores(lm, PAIRS)
    tokens = scoring.causal_token_logprobs(lm, PAIRS.masculine.tolist())
    for k, t in enumerate(tokens):
        start = out.diverge_masc[k]
        assert out.logprob_masc[k] == pytest.approx(np.nansum(t.logprob[start:]), abs=1e-5)
        assert out.n_masc[k] == len(t.logprob) - start
        assert out.logprob_masc_whole[k] == pytest.approx(np.nansum(t.logprob), abs=1e-5)
    none = gendered_pair_scores(lm, PAIRS, causal_bos="none")
    assert (none.n_masc_whole == out.n_masc_whole - 1).all()  # the first token is not scored
    assert list(out.columns[:3]) == ["masculine", "feminine", "stereotype"]


@pytest.mark.parametrize("family", ["gpt2", "llama"])
def test_shared_prefix_and_part_only_scoring_give_the_same_part(family):
    """The forms' shared prefix computed once (default), and with whole=False the output
    layer run only from the divergence: the differing part's sums and counts are those of
    scoring every form apart; the whole-sentence columns are NaN with count 0 then."""
    lm = _lm(family)
    pairs = pd.concat([PAIRS, pd.DataFrame({"masculine": ["I cooked."], "feminine": ["I cooked."],
                                            "stereotype": [4]})], ignore_index=True)
    apart = gendered_pair_scores(lm, pairs, shared_prefix=False)
    shared = gendered_pair_scores(lm, pairs)
    part = gendered_pair_scores(lm, pairs, whole=False)
    for column in ("logprob_masc", "logprob_fem", "logprob_masc_whole", "logprob_fem_whole"):
        np.testing.assert_allclose(shared[column], apart[column], atol=1e-4)
    for column in ("logprob_masc", "logprob_fem"):
        np.testing.assert_allclose(part[column], apart[column], atol=1e-4)
    assert (part[["n_masc", "n_fem", "diverge_masc"]].values
            == apart[["n_masc", "n_fem", "diverge_masc"]].values).all()
    assert part.logprob_masc_whole.isna().all() and (part.n_fem_whole == 0).all()
    assert part.logprob_masc.iloc[-1] == part.logprob_fem.iloc[-1]  # identical forms tie


def test_masked_scores_mask_the_differing_tokens_jointly():
    lm = _lm("bert")
    out = gendered_pair_scores(lm, PAIRS.iloc[:2])
    assert out.n_masc.ge(1).all() and out.logprob_masc.lt(0).all()
    assert out.logprob_masc_whole.isna().all()
    with pytest.raises(scoring.ScoringError, match="no differing token"):
        gendered_pair_scores(lm, PAIRS.iloc[2:])  # an insertion: the shorter form has none
    with pytest.raises(scoring.ScoringError, match="causal_bos applies to causal LMs"):
        gendered_pair_scores(lm, PAIRS, causal_bos="none")


def test_bad_pairs_name_the_problem():
    lm = _lm("gpt2")
    with pytest.raises(scoring.ScoringError, match="lack the column.*stereotype"):
        gendered_pair_scores(lm, PAIRS.drop(columns="stereotype"))
    with pytest.raises(scoring.ScoringError, match="no pairs"):
        gendered_pair_scores(lm, PAIRS.iloc[:0])
    with pytest.raises(scoring.ScoringError, match="causal_bos must be"):
        gendered_pair_scores(lm, PAIRS, causal_bos="first-token")
