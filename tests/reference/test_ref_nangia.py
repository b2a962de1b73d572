"""Nangia et al. (2020) CrowS-Pairs reference code, executed: ``pair_scores(method="nangia")``.

Reference: nyu-mll/crows-pairs at 8aaac11c, ``metric.py`` (source ``ref-crows-pairs-metric``),
executed as published — the script itself (its module-level ``argparse`` and
``evaluate(args)``: ``read_data``, ``mask_unigram``, ``get_span`` with difflib, the
3-decimal rounding, the counting and the printed metric) on a CSV of minimal pairs, with
``--lm_model bert``, on a tiny random BERT (WordPiece, uncased; most words split into
several pieces). Pairs whose alignment has ties (equally long difflib blocks: swapped,
moved or repeated words; stereo and antistereo rows) also run with ``--lm_model roberta``
and ``albert`` on tiny models of those families, and so do the rows of the CrowS-Pairs
file (data mirror) whose shared tokens the reference alignment changes for the tiny BERT.

Shims (the reference logic is untouched):

* ``transformers.BertTokenizer.from_pretrained`` / ``BertForMaskedLM.from_pretrained``
  (the ``bert-base-uncased`` checkpoint cannot be fetched offline) return the tiny
  tokenizer and model for that name, for the duration of the run; likewise the Roberta
  (``roberta-large``) and Albert (``albert-xxlarge-v2``) classes.
* ``pandas.DataFrame.append`` (removed in pandas 2.0) is restored for the run as
  ``pd.concat([frame, pd.DataFrame([row])], ignore_index=True)``.
* The script's command line is given through ``sys.argv``; it runs in a temporary
  folder (it writes ``bert.vocab`` and its per-pair CSV there).

The per-pair decisions, the neutral count and the metric are read from the CSV and the
output the script wrote. Its CSV holds the scores rounded to 3 decimals; the unrounded
per-sentence scores come from calling its own ``mask_unigram`` on the rows its
``read_data`` returns, with the ``lm`` dictionary as ``evaluate`` builds it for
``--lm_model bert`` (checked: rounded, they are the script's CSV values).
"""

from __future__ import annotations

import io
import re
import sys
from contextlib import redirect_stdout

import numpy as np
import pandas as pd
import pytest
import torch
import transformers
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
REPO = "nyu-mll/crows-pairs"
PATH = "metric.py"

#: (sent_more, sent_less, direction). Pair 2 differs only in case (identical token ids for
#: the uncased BERT: a tie on both sides), pair 3 only by an inserted word, pair 4 swaps
#: two words (difflib has a choice of blocks).
PAIRS = CROWS_STYLE_PAIRS


def _append(self, other, ignore_index=False):
    return pd.concat([self, pd.DataFrame([other])], ignore_index=ignore_index)


#: metric.py's --lm_model -> (tokenizer class, model class, checkpoint, uncased), as its
#: evaluate() loads them.
LM_MODELS = {"bert": ("BertTokenizer", "BertForMaskedLM", "bert-base-uncased", True),
             "roberta": ("RobertaTokenizer", "RobertaForMaskedLM", "roberta-large", False),
             "albert": ("AlbertTokenizer", "AlbertForMaskedLM", "albert-xxlarge-v2", True)}


def run_metric_py(pairs, folder, family="bert"):
    """metric.py executed on ``pairs`` with ``--lm_model family`` on the tiny model of that
    family: (module, its rows from read_data, per-pair CSV, printed output)."""
    file = reference_file(REPO, PATH)
    model, tok = tiny(family)
    tok_class, lm_class, checkpoint, _ = LM_MODELS[family]
    csv_file = write_pairs_csv(folder / "pairs.csv", pairs)

    def tokenizer(name, *a, **k):
        assert name == checkpoint
        return tok

    def masked_lm(name, *a, **k):
        assert name == checkpoint
        return model

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(getattr(transformers, tok_class), "from_pretrained", staticmethod(tokenizer))
        mp.setattr(getattr(transformers, lm_class), "from_pretrained", staticmethod(masked_lm))
        mp.setattr(pd.DataFrame, "append", _append, raising=False)
        mp.setattr(sys, "argv", [str(file), "--input_file", str(csv_file), "--lm_model", family,
                                 "--output_file", str(folder / "scores.csv")])
        mp.chdir(folder)
        out = io.StringIO()
        with redirect_stdout(out):
            mod = load_module(f"crows_pairs_metric_reference_{folder.name}", file)  # runs evaluate(args)
        rows = mod.read_data(str(csv_file))
    scores = pd.read_csv(folder / "scores.csv", index_col=0)
    return mod, rows, scores, out.getvalue()


def unrounded_scores(mod, rows, family="bert"):
    """(sent_more, sent_less) scores of the reference's own ``mask_unigram`` on its
    ``read_data`` rows, with the lm dictionary as ``evaluate`` builds it for --lm_model family."""
    model, tok = tiny(family)
    lm_dict = {"model": model, "tokenizer": tok, "mask_token": tok.mask_token,
               "log_softmax": torch.nn.LogSoftmax(dim=0), "uncased": LM_MODELS[family][3]}
    ref_more, ref_less = [], []
    with torch.no_grad():
        for _, row in rows.iterrows():
            s = mod.mask_unigram(row, lm_dict)
            stereo = row["direction"] == "stereo"
            ref_more.append(s["sent1_score"] if stereo else s["sent2_score"])
            ref_less.append(s["sent2_score"] if stereo else s["sent1_score"])
    return np.array(ref_more), np.array(ref_less)


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The executed script on :data:`PAIRS`."""
    return run_metric_py(PAIRS, tmp_path_factory.mktemp("nangia"))


def ours_frame(pairs=PAIRS):
    return pd.DataFrame({"sent_more": [p[0] for p in pairs], "sent_less": [p[1] for p in pairs],
                         "bias_type": "gender", "direction": [p[2] for p in pairs]})


def test_words_split_into_pieces():
    _, tok = tiny("bert")
    assert all(len(tok.tokenize(w)) > 1 for w in ["doctor", "husband", "wife", "nurse", "engineers"])


def test_nangia_equals_the_executed_reference(reference):
    mod, rows, ref, printed = reference
    n = int(re.search(r"Total examples: (\d+)", printed).group(1))
    metric = float(re.search(r"Metric score: ([\d.]+)", printed).group(1))
    neutral = int(re.search(r"Num\. neutral: (\d+)", printed).group(1))
    assert n == len(PAIRS) == len(ref)
    assert ref.sent_more.tolist() == [p[0] for p in PAIRS]

    ref_more, ref_less = unrounded_scores(mod, rows)
    # the same numbers as the script's own run (its CSV holds them rounded to 3 decimals)
    assert np.array_equal(np.round(ref_more, 3), ref.sent_more_score.to_numpy(float))
    assert np.array_equal(np.round(ref_less, 3), ref.sent_less_score.to_numpy(float))

    ours = pair_scores(tiny_lm("bert"), ours_frame(), method="nangia")
    diff = max(np.abs(ref_more - ours.score_more.to_numpy()).max(),
               np.abs(ref_less - ours.score_less.to_numpy()).max())
    rel = max((np.abs(ref_more - ours.score_more.to_numpy()) / np.abs(ref_more)).max(),
              (np.abs(ref_less - ours.score_less.to_numpy()) / np.abs(ref_less)).max())
    # the CSV the script wrote holds its 3-decimal scores: they may differ by one unit of the
    # last decimal where the two unrounded values lie on either side of a rounding boundary
    ref3 = np.concatenate([ref.sent_more_score.to_numpy(float), ref.sent_less_score.to_numpy(float)])
    ours_raw = np.concatenate([ours.score_more.to_numpy(), ours.score_less.to_numpy()])
    ref_raw = np.concatenate([ref_more, ref_less])
    flips = np.round(ours_raw, 3) != ref3
    straddle = np.floor(ref_raw * 1e3 + 0.5) != np.floor(ours_raw * 1e3 + 0.5)
    table = crows.stereotype_score(ours, decimals=3, n_bootstrap=0)
    more, less = ours.score_more.round(3).to_numpy(), ours.score_less.round(3).to_numpy()
    print(f"nangia: max |diff| per-sentence score {diff:.1e}, relative {rel:.1e} (scores up to "
          f"{max(np.abs(ref_more).max(), np.abs(ref_less).max()):.1f}); 3-decimal scores equal for "
          f"{(~flips).sum()} of {flips.size} sentences ({flips.sum()} at a rounding boundary); "
          f"metric {metric} vs {table.score.iloc[0]:.2f}; neutral {neutral} vs {table.ties.iloc[0]}")
    assert rel < 1e-5  # float32 token log-probabilities summed: the error grows with the sum
    assert np.all(np.abs(np.round(ours_raw, 3) - ref3)[flips] < 1e-3 + 1e-9) and np.all(straddle[flips])
    assert ref.score.astype(int).tolist() == (more > less).astype(int).tolist()  # every pair's decision
    assert neutral == table.ties.iloc[0] == 1                                   # the case-only pair
    assert round(table.score.iloc[0], 2) == metric


def check_pairs_with_ties(pairs, folder, label, family="bert"):
    """metric.py and ``pair_scores(method="nangia")`` on ``pairs``: every per-sentence score
    within 1e-5 relative, every decision and the metric equal; the alignment without the
    special tokens and the reference's order (``"content"``) disagrees."""
    mod, rows, ref, printed = run_metric_py(pairs, folder, family)
    metric = float(re.search(r"Metric score: ([\d.]+)", printed).group(1))
    neutral = int(re.search(r"Num\. neutral: (\d+)", printed).group(1))
    assert ref.sent_more.tolist() == [p[0] for p in pairs]
    ref_raw = np.concatenate(unrounded_scores(mod, rows, family))
    lm = tiny_lm(family)
    ours = pair_scores(lm, ours_frame(pairs), method="nangia")
    ours_raw = np.concatenate([ours.score_more.to_numpy(), ours.score_less.to_numpy()])
    rel = np.abs(ours_raw - ref_raw) / np.abs(ref_raw)
    table = crows.stereotype_score(ours, decimals=3, n_bootstrap=0)
    more, less = ours.score_more.round(3).to_numpy(), ours.score_less.round(3).to_numpy()
    content = pair_scores(lm, ours_frame(pairs), method="nangia", alignment="content")
    content_raw = np.concatenate([content.score_more.to_numpy(), content.score_less.to_numpy()])
    content_rel = np.abs(content_raw - ref_raw) / np.abs(ref_raw)
    content_decisions = (content.score_more.round(3) > content.score_less.round(3)).astype(int).tolist()
    print(f"nangia, {family}, {label}: {len(pairs)} pairs; max relative diff per-sentence score {rel.max():.1e}; "
          f"metric {metric} vs {table.score.iloc[0]:.2f}; neutral {neutral} vs {table.ties.iloc[0]}; "
          f"alignment='content': max relative diff {content_rel.max():.1e}, max |diff| "
          f"{np.abs(content_raw - ref_raw).max():.2f} nats, "
          f"{sum(a != b for a, b in zip(content_decisions, ref.score.astype(int), strict=True))} "
          f"decision(s) differ")
    assert rel.max() < 1e-5
    assert ref.score.astype(int).tolist() == (more > less).astype(int).tolist()  # every pair's decision
    assert neutral == table.ties.iloc[0]
    assert round(table.score.iloc[0], 2) == metric
    assert content_rel.max() > 1e-3  # the pairs do test the alignment


@pytest.mark.parametrize("family", ["bert", "roberta", "albert"])
def test_nangia_equals_the_executed_reference_on_pairs_with_ties(tmp_path, family):
    """WordPiece with [CLS]/[SEP]; cased byte-level BPE with <s>/</s>; SentencePiece."""
    check_pairs_with_ties(TIE_PAIRS, tmp_path, "constructed pairs with ties", family)


def test_nangia_equals_the_executed_reference_on_crows_pairs_rows_with_ties(tmp_path):
    pairs, n_changed = crows_rows_with_ties(tiny("bert")[1])
    assert n_changed >= 1
    check_pairs_with_ties(pairs, tmp_path, f"CrowS-Pairs rows ({n_changed} with ties, 2 without)")
