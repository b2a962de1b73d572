"""mlm-bias (PyPI ``mlm-bias``) executed beside polybias on the same tiny checkpoints and
CrowS-style pairs: CSPS, SSS, AUL and AULA per sentence and as stereotype scores.

mlm-bias's measures and polybias's :func:`polybias.engines.pair_scores.pair_scores` methods:
``csps`` = ``"nangia"``, ``sss`` = ``"sss"``, ``aul`` = ``"aul"``, ``aula`` = ``"aula"``.
Its bugs, each shown by executing it: ``BiasMLM`` never loads the checkpoint's weights;
``compute_sss`` averages a k × k matrix instead of its diagonal; a sentence without a
modified token gets NaN and its pair silently counts as not stereotyped.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch
from peerlib import INSERTION_PAIR, PAIRS, load_lm, run_driver, tiny_checkpoint
from polybias.engines.pair_scores import pair_scores, shared_token_positions
from polybias.metrics import crows
from report import record

PEER = "mlm-bias"
FILE = "mlm_bias/utils/measures.py"
#: mlm-bias measure -> polybias pair_scores method
METHODS = {"csps": "nangia", "sss": "sss", "aul": "aul", "aula": "aula"}
#: Both sides run float32 forward passes (mlm-bias one sentence at a time, polybias in
#: padded batches) on a model far from uniform: logits of magnitude ~100, whose float32
#: ulp is 8e-6, give each log-probability an error of a few 1e-6 (ATOL); mlm-bias also
#: sums them in float32, and sentence sums reach about -400, where one ulp is 3e-5 (RTOL,
#: about 16 ulps).
ATOL, RTOL = 2e-5, 1e-6


def close(ours, theirs) -> np.ndarray:
    """|ours - theirs| <= ATOL + RTOL * |theirs|, elementwise."""
    ours, theirs = np.asarray(ours, dtype=float), np.asarray(theirs, dtype=float)
    return np.abs(ours - theirs) <= ATOL + RTOL * np.abs(theirs)


def frame(pairs) -> pd.DataFrame:
    return pd.DataFrame([{"bias_type": b, "sent_more": m, "sent_less": s, "direction": "stereo"}
                         for b, m, s in pairs])


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return str(tmp_path_factory.mktemp("mlm-bias"))


@pytest.fixture(scope="module")
def peer(folder):
    """mlm-bias's answers for each family's checkpoint on :data:`PAIRS`."""
    return {family: run_driver(PEER, "mlm_bias_driver", {"model": str(tiny_checkpoint(family, folder)),
                                                    "pairs": [list(p) for p in PAIRS],
                                                    "measures": ["csps", "sss", "aul"]})
            for family in ("bert", "roberta")}


@pytest.fixture(scope="module")
def ours(folder, torch_one_thread):
    out = {}
    for family in ("bert", "roberta"):
        lm = load_lm(tiny_checkpoint(family, folder))
        out[family] = (lm, {m: pair_scores(lm, frame(PAIRS), method=method)
                            for m, method in METHODS.items()})
    return out


def matrix_mean_and_diagonal(lm, text: str, positions: list[int]) -> tuple[float, float]:
    """Mean over the k × k log-probabilities of every jointly masked modified position
    predicting every modified gold token, and the mean of its diagonal (a direct forward
    pass of the model, as ``compute_sss`` sets it up)."""
    ids = torch.tensor([lm.tokenizer(text)["input_ids"]])
    masked = ids.clone()
    masked[0, positions] = lm.tokenizer.mask_token_id
    with torch.no_grad():
        logp = torch.log_softmax(lm.model(masked).logits[0].double(), dim=-1)
    block = logp[positions][:, ids[0, positions]]
    return float(block.mean()), float(block.diagonal().mean())


def modified_positions(lm, more: str, less: str) -> tuple[list[int], list[int]]:
    pair = pd.DataFrame({"sent_more": [more], "sent_less": [less], "direction": ["stereo"]})
    shared = shared_token_positions(lm.tokenizer, pair)[0]
    out = []
    for text, keep in zip((more, less), shared, strict=True):
        enc = lm.tokenizer(text, return_special_tokens_mask=True)
        out.append([i for i, s in enumerate(enc["special_tokens_mask"]) if not s and i not in set(keep)])
    return out[0], out[1]


@pytest.mark.parametrize("measure", ["csps", "aul", "aula"])
def test_per_sentence_scores_and_stereotype_score_equal_mlm_bias(peer, ours, measure):
    worst, worst_rel = 0.0, 0.0
    for family in ("bert", "roberta"):
        scored = ours[family][1][measure]
        theirs = peer[family]["eval_results"]
        for col, s in (("score_more", "S1"), ("score_less", "S2")):
            diff = np.abs(scored[col].to_numpy() - np.array(theirs[s][measure]))
            worst = max(worst, float(diff.max()))
            worst_rel = max(worst_rel, float((diff / np.abs(np.array(theirs[s][measure]))).max()))
            assert close(scored[col], theirs[s][measure]).all(), f"{family} {measure} {col}: {diff}"
        table = crows.stereotype_score(scored, n_bootstrap=0).set_index("bias_type")["score"]
        scores = peer[family]["bias_scores"][measure]
        assert table["all"] == pytest.approx(scores["total"], abs=1e-9)
        for bias_type in scored["bias_type"].unique():
            assert table[bias_type] == pytest.approx(scores[bias_type], abs=1e-9)
    record(measure=f"CrowS-Pairs {measure.upper()} (per sentence and stereotype score)",
           peer=PEER, peer_version=peer["bert"]["version"],
           peer_function=f"{FILE}::compute_{'aul' if measure == 'aula' else measure}, "
                         "mlm_bias/compute_mlm_bias.py::BiasMLM.scores",
           agreement=f"{len(PAIRS)} pairs × 2 sentences on a tiny BERT and RoBERTa: every sentence "
                     f"score (largest relative difference {worst_rel:.1e}: float32 on both sides); "
                     "stereotype scores, overall and per bias type, equal",
           max_difference=worst,
           definition_difference=(
               f"none: pair_scores(method='{METHODS[measure]}')" +
               (" (Nangia: shared tokens masked one at a time, log-probabilities summed)"
                if measure == "csps" else "")),
           peer_bugs="BiasMLM scores a randomly initialised model, not the checkpoint "
                     "(test_biasmlm_does_not_load_the_checkpoint_weights); the comparison loads "
                     "the weights into it",
           test=f"tests/peers/test_mlm_bias.py::test_per_sentence_scores_and_stereotype_score_equal_mlm_bias[{measure}]")


def test_sss_equals_mlm_bias_where_one_token_is_modified_and_its_matrix_mean_elsewhere(peer, ours):
    """SSS masks the modified tokens together. With one modified token mlm-bias's k × k
    matrix is 1 × 1 and the two agree; with k > 1 mlm-bias returns the mean of the whole
    matrix (reproduced here by a direct forward pass), polybias the mean of its diagonal."""
    worst_equal, worst_matrix, n_single, n_multi, gaps = 0.0, 0.0, 0, 0, []
    for family in ("bert", "roberta"):
        lm, scored = ours[family]
        sss = scored["sss"]
        theirs = peer[family]["eval_results"]
        for i, (_, more, less) in enumerate(PAIRS):
            for text, positions, col, s in zip((more, less), modified_positions(lm, more, less),
                                               ("score_more", "score_less"), ("S1", "S2"), strict=True):
                value, their = float(sss.loc[i, col]), float(theirs[s]["sss"][i])
                matrix, diagonal = matrix_mean_and_diagonal(lm, text, positions)
                assert close(value, diagonal)
                if len(positions) == 1:
                    n_single += 1
                    worst_equal = max(worst_equal, abs(value - their))
                    assert close(value, their)
                else:
                    n_multi += 1
                    worst_matrix = max(worst_matrix, abs(their - matrix))
                    gaps.append(abs(value - their))
                    assert close(their, matrix) and not close(their, diagonal), (text, their, matrix, diagonal)
    assert n_single >= 4 and n_multi >= 4, (n_single, n_multi)
    record(measure="CrowS-Pairs SSS (modified tokens masked together)", peer=PEER,
           peer_version=peer["bert"]["version"], peer_function=f"{FILE}::compute_sss",
           agreement=f"equal on the {n_single} sentences with one modified token; on the {n_multi} "
                     "with k > 1 mlm-bias returns the k × k matrix mean (reproduced to "
                     f"{worst_matrix:.1e}), polybias the diagonal mean (gaps {min(gaps):.3f} to {max(gaps):.2f})",
           max_difference=worst_equal,
           definition_difference="pair_scores(method='sss'): mean of the modified tokens' own "
                                 "log-probabilities (the diagonal)",
           peer_bugs="compute_sss averages span_probs = probs[:, token_ids], a k × k matrix "
                     "(every masked position × every gold token), instead of its diagonal",
           test="tests/peers/test_mlm_bias.py::"
                "test_sss_equals_mlm_bias_where_one_token_is_modified_and_its_matrix_mean_elsewhere")


def test_biasmlm_does_not_load_the_checkpoint_weights(peer, ours, folder):
    """BiasMLM builds its model with from_config; polybias loads the checkpoint's tensors."""
    from safetensors.torch import load_file

    for family in ("bert", "roberta"):
        assert peer[family]["weights_max_abs_diff_before_load"] > 0.1
        stored = load_file(str(tiny_checkpoint(family, folder) / "model.safetensors"))
        state = ours[family][0].model.state_dict()
        assert max(float((state[k] - v).abs().max()) for k, v in stored.items()) == 0.0
    record(measure="Model loading", peer=PEER, peer_version=peer["bert"]["version"],
           peer_function="mlm_bias/compute_mlm_bias.py::BiasMLM.__init__",
           agreement="polybias's model holds the checkpoint's tensors exactly; BiasMLM's differ "
                     f"by up to {peer['bert']['weights_max_abs_diff_before_load']:.2f}",
           max_difference=0.0, definition_difference="none",
           peer_bugs="AutoModelForMaskedLM.from_config: random weights, the checkpoint's are "
                     "never loaded (every mlm-bias number is of an untrained model)",
           test="tests/peers/test_mlm_bias.py::test_biasmlm_does_not_load_the_checkpoint_weights")


def test_a_sentence_without_modified_tokens_is_an_error_not_a_silent_non_stereotyped_pair(
        folder, torch_one_thread):
    checkpoint = tiny_checkpoint("bert", folder)
    theirs = run_driver(PEER, "mlm_bias_driver", {"model": str(checkpoint), "pairs": [list(INSERTION_PAIR)],
                                           "measures": ["sss"]})
    assert np.isnan(theirs["eval_results"]["S2"]["sss"][0])
    assert np.isfinite(theirs["eval_results"]["S1"]["sss"][0])
    assert theirs["bias_scores"]["sss"]["total"] == 0.0  # NaN > x is False: "not stereotyped"
    lm = load_lm(checkpoint)
    with pytest.raises(crows.CrowsError, match="no modified tokens"):
        pair_scores(lm, frame([INSERTION_PAIR]), method="sss")
    skipped = pair_scores(lm, frame([PAIRS[0], INSERTION_PAIR]), method="sss",
                                on_unmodified="skip")
    assert skipped.attrs["n_skipped"] == 1 and len(skipped) == 1
    record(measure="CrowS-Pairs SSS, pair without a modified token", peer=PEER,
           peer_version=theirs["version"], peer_function=f"{FILE}::compute_sss, "
                                                         "mlm_bias/compute_mlm_bias.py::BiasMLM.scores",
           agreement="polybias raises CrowsError naming the row (or leaves the pair out with "
                     "on_unmodified='skip' and counts it in attrs['n_skipped'])",
           max_difference=None, definition_difference="none",
           peer_bugs="the sentence's SSS is the mean of an empty tensor (NaN); NaN > x is False, "
                     "so the pair silently counts as not stereotyped and stays in the denominator",
           test="tests/peers/test_mlm_bias.py::"
                "test_a_sentence_without_modified_tokens_is_an_error_not_a_silent_non_stereotyped_pair")
