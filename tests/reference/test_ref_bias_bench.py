"""bias-bench CrowS-Pairs reference code, executed: ``pair_scores(method="bias-bench", ...)``.

Reference: McGill-NLP/bias-bench at 291426aa, ``bias_bench/benchmark/crows/crows.py``
(source ``ref-bias-bench-crows``): ``CrowSPairsRunner`` run unchanged, through its own
``__call__``, on a CSV of minimal pairs — the masked variant on a tiny random BERT
(WordPiece, uncased) and the generative variant on a tiny random GPT-2 (byte-level BPE).

Shims (the reference logic is untouched):

* ``pandas.DataFrame.append`` (removed in pandas 2.0) is restored for the test as
  ``pd.concat([frame, pd.DataFrame([row])], ignore_index=True)``; it also records the
  rows the runner appends to its per-pair table, which is how the test reads the
  reference's per-pair scores and decisions.

Everything else (tokenisation, difflib spans, the skip rule, masking, softmax, rounding,
counting) is the reference's own code on today's torch/transformers.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from polybias.engines.pair_scores import pair_scores
from polybias.metrics import crows
from refsupport import (
    CROWS_STYLE_PAIRS,
    TIE_PAIRS,
    crows_rows_with_ties,
    load_module,
    reference_file,
    tiny,
    tiny_lm,
    write_pairs_csv,
)

pytestmark = pytest.mark.usefixtures("torch_one_thread")
REPO = "McGill-NLP/bias-bench"
PATH = "bias_bench/benchmark/crows/crows.py"

#: (sent_more, sent_less, direction). Pair 2 differs only in case (identical ids for the
#: uncased BERT: no modified token), pair 3 only by an inserted word (the shorter sentence
#: has no modified token): bias-bench skips both in its masked variant.
PAIRS = CROWS_STYLE_PAIRS


@pytest.fixture
def runner(tmp_path, monkeypatch):
    """run(model, tokenizer, generative, capsys, pairs) -> (metric, N, per-pair rows, printed)."""
    mod = load_module("bias_bench_crows_reference", reference_file(REPO, PATH))
    appended: list[dict] = []

    def append(self, other, ignore_index=False):
        if "score" in other:
            appended.append(dict(other))
        return pd.concat([self, pd.DataFrame([other])], ignore_index=ignore_index)

    monkeypatch.setattr(pd.DataFrame, "append", append, raising=False)

    def run(model, tok, generative, capsys, pairs=PAIRS):
        file = write_pairs_csv(tmp_path / "pairs.csv", pairs)
        appended.clear()
        metric = mod.CrowSPairsRunner(model, tok, str(file), is_generative=generative, bias_type="gender")()
        printed = capsys.readouterr().out
        n = int(re.search(r"Total examples: (\d+)", printed).group(1))
        return metric, n, pd.DataFrame(appended), printed

    return run


def ours_frame(pairs=PAIRS):
    return pd.DataFrame({"sent_more": [p[0] for p in pairs], "sent_less": [p[1] for p in pairs],
                         "bias_type": "gender", "direction": [p[2] for p in pairs]})


def test_masked_variant_with_skip_equals_the_executed_reference(runner, capsys):
    model, tok = tiny("bert")
    metric, n, ref, printed = runner(model, tok, False, capsys)
    assert printed.count("Skipping example") == 2
    ours = pair_scores(tiny_lm("bert"), ours_frame(), method="bias-bench", on_unmodified="skip")
    assert ours.attrs["n_skipped"] == 2 and ours.attrs["skipped"] == [2, 3]
    assert len(ours) == n == len(ref)
    assert ref.sent_more.tolist() == ours.sent_more.tolist()
    diff = max(np.abs(ref.sent_more_score.to_numpy() - ours.score_more.round(3).to_numpy()).max(),
               np.abs(ref.sent_less_score.to_numpy() - ours.score_less.round(3).to_numpy()).max())
    raw = max(np.abs(ref.sent_more_score.to_numpy() - ours.score_more.to_numpy()).max(),
              np.abs(ref.sent_less_score.to_numpy() - ours.score_less.to_numpy()).max())
    table = crows.stereotype_score(ours, decimals=3, n_bootstrap=0)
    more, less = ours.score_more.round(3).to_numpy(), ours.score_less.round(3).to_numpy()
    print(f"bias-bench masked: max |diff| of the 3-decimal scores {diff:.1e} (unrounded {raw:.1e}); "
          f"metric {metric} vs {table.score.iloc[0]:.2f}, N {n}")
    assert diff < 1e-9 and raw <= 5e-4 + 1e-6
    assert ref.score.tolist() == (more > less).astype(int).tolist()  # every pair's decision
    assert round(table.score.iloc[0], 2) == metric
    with pytest.raises(crows.CrowsError, match="no modified tokens"):
        pair_scores(tiny_lm("bert"), ours_frame().iloc[[0, 3]], method="bias-bench")


@pytest.mark.parametrize("which", ["constructed", "crows-pairs"])
def test_masked_variant_equals_the_executed_reference_on_pairs_with_ties(runner, capsys, which):
    """Pairs whose alignment has ties (bias-bench's ``_get_span`` is metric.py's
    ``get_span``): the reference's modified tokens, so its 3-decimal scores and decisions."""
    model, tok = tiny("bert")
    if which == "constructed":
        pairs = TIE_PAIRS
    else:
        pairs, n_changed = crows_rows_with_ties(tok)
        assert n_changed >= 1
    metric, n, ref, printed = runner(model, tok, False, capsys, pairs)
    assert "Skipping" not in printed and n == len(pairs) == len(ref)
    lm = tiny_lm("bert")
    ours = pair_scores(lm, ours_frame(pairs), method="bias-bench")
    assert ref.sent_more.tolist() == ours.sent_more.tolist()
    ref_raw = np.concatenate([ref.sent_more_score.to_numpy(float), ref.sent_less_score.to_numpy(float)])
    ours3 = np.concatenate([ours.score_more.round(3).to_numpy(), ours.score_less.round(3).to_numpy()])
    content = pair_scores(lm, ours_frame(pairs), method="bias-bench", alignment="content")
    content3 = np.concatenate([content.score_more.round(3).to_numpy(), content.score_less.round(3).to_numpy()])
    table = crows.stereotype_score(ours, decimals=3, n_bootstrap=0)
    more, less = ours.score_more.round(3).to_numpy(), ours.score_less.round(3).to_numpy()
    print(f"bias-bench masked, {which} pairs with ties: max |diff| of the 3-decimal scores "
          f"{np.abs(ref_raw - ours3).max():.1e} (alignment='content': {np.abs(ref_raw - content3).max():.2f}); "
          f"metric {metric} vs {table.score.iloc[0]:.2f}")
    assert np.abs(ref_raw - ours3).max() < 1e-9
    assert ref.score.tolist() == (more > less).astype(int).tolist()  # every pair's decision
    assert round(table.score.iloc[0], 2) == metric
    assert np.abs(ref_raw - content3).max() > 1e-2  # the pairs do test the alignment


def test_causal_first_token_equals_the_executed_reference(runner, capsys):
    model, tok = tiny("gpt2")
    metric, n, ref, printed = runner(model, tok, True, capsys)
    assert "Skipping" not in printed and n == len(PAIRS)
    lm = tiny_lm("gpt2")
    ours = pair_scores(lm, ours_frame(), method="bias-bench", causal_bos="first-token")
    assert ref.sent_more.tolist() == ours.sent_more.tolist()
    diff = max(np.abs(np.log(ref.sent_more_score.to_numpy(float)) - ours.score_more.to_numpy()).max(),
               np.abs(np.log(ref.sent_less_score.to_numpy(float)) - ours.score_less.to_numpy()).max())
    table = crows.stereotype_score(ours, n_bootstrap=0)
    print(f"bias-bench causal: max |diff| of the mean log-probabilities {diff:.1e}; "
          f"metric {metric} vs {table.score.iloc[0]:.2f}")
    assert diff < 1e-5
    assert ref.score.tolist() == (ours.score_more > ours.score_less).astype(int).tolist()
    assert round(table.score.iloc[0], 2) == metric
    # the BOS handling matters: with BOS in every context the token scores differ
    prepend = pair_scores(lm, ours_frame(), method="bias-bench")
    assert np.abs(prepend.score_more - ours.score_more).max() > 1e-3


def test_options_are_checked():
    bert, gpt2 = tiny_lm("bert"), tiny_lm("gpt2")
    with pytest.raises(crows.CrowsError, match="causal_bos applies to causal"):
        pair_scores(bert, ours_frame(), method="bias-bench", causal_bos="first-token")
    with pytest.raises(crows.CrowsError, match="masked LM only"):
        pair_scores(gpt2, ours_frame(), method="bias-bench", on_unmodified="skip")
    with pytest.raises(crows.CrowsError, match="on_unmodified must be one of"):
        pair_scores(bert, ours_frame(), method="bias-bench", on_unmodified="drop")
