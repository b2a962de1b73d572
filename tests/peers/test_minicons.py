"""minicons (PyPI ``minicons``) executed beside polybias on the same tiny checkpoints:
sentence pseudo-log-likelihoods (Salazar et al. 2020) and the within-word left-to-right
variant PLL-word-l2r (Kauf & Ivanova 2023), per token and per sentence.

minicons's ``MaskedLMScorer.token_score`` / ``sequence_score`` with
``PLL_metric="original"`` / ``"within_word_l2r"`` are polybias's
:func:`polybias.engines.scoring.masked_token_logprobs` /
:func:`polybias.engines.scoring.pseudo_log_likelihood` with ``within_word_l2r`` False /
True.
"""

from __future__ import annotations

import numpy as np
import pytest
from peerlib import PAIRS, load_lm, run_driver, tiny_checkpoint
from polybias.engines import scoring
from report import record

PEER = "minicons"
TEXTS = [text for _, more, less in PAIRS for text in (more, less)]
VARIANTS = {"original": False, "within_word_l2r": True}
#: as in test_mlm_bias.py: float32 forward passes (minicons pads all masked copies of all
#: texts into one batch, polybias packs its own batches) with logits of magnitude ~100
#: (ATOL); sentence sums reach about -400, where one float32 ulp is 3e-5 (RTOL)
ATOL, RTOL = 2e-5, 1e-6


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return str(tmp_path_factory.mktemp("minicons"))


@pytest.mark.parametrize("family", ["bert", "roberta"])
def test_token_and_sentence_pll_equal_minicons(folder, family, torch_one_thread):
    checkpoint = tiny_checkpoint(family, folder)
    theirs = run_driver(PEER, "minicons_driver", {"model": str(checkpoint), "texts": TEXTS,
                                                  "metrics": list(VARIANTS)})
    lm = load_lm(checkpoint)
    worst = {}
    for metric, l2r in VARIANTS.items():
        ours = scoring.masked_token_logprobs(lm, TEXTS, within_word_l2r=l2r)
        sums = scoring.pseudo_log_likelihood(lm, TEXTS, within_word_l2r=l2r)
        their = theirs["results"][metric]
        token_diff = 0.0
        for k, scored in enumerate(ours):
            values = scored.logprob[~np.isnan(scored.logprob)]
            tokens = [t for t, v in zip(scored.tokens, scored.logprob, strict=True) if not np.isnan(v)]
            assert len(values) == len(their["token_scores"][k]), TEXTS[k]
            assert lm.tokenizer.convert_tokens_to_string(tokens).strip() == \
                lm.tokenizer.convert_tokens_to_string(
                    lm.tokenizer.tokenize(TEXTS[k])).strip()
            diff = np.abs(values - np.array(their["token_scores"][k]))
            assert (diff <= ATOL + RTOL * np.abs(values)).all(), (TEXTS[k], diff)
            token_diff = max(token_diff, float(diff.max()))
        sum_diff = np.abs(sums - np.array(their["sums"]))
        assert (sum_diff <= ATOL + RTOL * np.abs(sums)).all(), sum_diff
        worst[metric] = max(token_diff, float(sum_diff.max()))
    # the variants differ where words have several pieces, so each check has teeth
    plain = scoring.pseudo_log_likelihood(lm, TEXTS)
    l2r = scoring.pseudo_log_likelihood(lm, TEXTS, within_word_l2r=True)
    assert np.abs(plain - l2r).max() > 1.0
    for metric, l2r_flag in VARIANTS.items():
        record(measure=f"PLL{'-word-l2r' if l2r_flag else ''} ({family}), per token and per sentence",
               peer=PEER, peer_version=theirs["version"],
               peer_function=f"minicons/scorer.py::MaskedLMScorer.token_score, sequence_score "
                             f"(PLL_metric='{metric}')",
               agreement=f"{len(TEXTS)} sentences on a tiny {family}: every token's log-probability "
                         "and every sentence sum",
               max_difference=worst[metric],
               definition_difference=f"none: scoring.pseudo_log_likelihood(within_word_l2r={l2r_flag}) "
                                     "is sequence_score with a sum reduction (minicons's default, "
                                     "the mean per token, is reduction='mean')",
               peer_bugs="none found (all masked copies of a batch go through one forward pass: "
                         "memory grows with the batch's total tokens)",
               test=f"tests/peers/test_minicons.py::test_token_and_sentence_pll_equal_minicons[{family}]")
