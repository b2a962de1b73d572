"""Seed 001 (Gamboa & Lee 2024) reference code, executed: ``jsd_attributions(compat_fourth_root=True)``.

Reference: gamboalance/bias_attribution_scores at a3fba88d, ``bias_attribution_scores.py``
(source ``ref-gamboa-attribution``), executed as published — the script itself (its
module-level ``argparse`` and ``evaluate(args)``: ``compare_sents``, ``find_overlap`` with
difflib, ``get_prob_masked`` / ``get_prob_next``, ``get_jsd`` with scipy's
``jensenshannon`` and its extra square root, the S_JSD mean, the ``biased`` flag and
``summarize_results``) on a CSV of minimal pairs, once with ``--eval_model bert`` on a tiny
random BERT (WordPiece, uncased; most words split into several pieces) and once with
``--eval_model gpt2`` on a tiny random GPT-2 (byte-level BPE; the causal branch, which
prepends ``eos_token`` as BOS).

Shims (the reference logic is untouched):

* ``transformers.AutoTokenizer.from_pretrained`` / ``AutoModelForMaskedLM.from_pretrained``
  / ``AutoModelForCausalLM.from_pretrained`` (the ``bert-base-uncased`` and ``gpt2``
  checkpoints cannot be fetched offline) return the tiny tokenizer and model for those
  names, for the duration of the run.
* ``pandas.DataFrame._append`` (a private method, removed in pandas 3) is restored for the
  run as ``pd.concat([frame, pd.DataFrame([row])], ignore_index=True)``; it also records
  the rows the script appends to its per-pair table (per-token b(u) lists at full
  precision, S_JSD, ``biased``), which is how the test reads them.
* The script's command line is given through ``sys.argv``; it runs in a temporary folder
  (it writes its time, score and summary files there).
"""

from __future__ import annotations

import csv
import io
import sys
from contextlib import redirect_stderr, redirect_stdout

import numpy as np
import pandas as pd
import pytest
import transformers
from polybias.engines.pair_scores import jsd_attributions
from polybias.metrics import crows
from refsupport import load_module, reference_file, tiny, tiny_lm

pytestmark = pytest.mark.usefixtures("torch_one_thread")
REPO = "gamboalance/bias_attribution_scores"
PATH = "bias_attribution_scores.py"
CHECKPOINT = {"bert": "bert-base-uncased", "gpt2": "gpt2"}

#: (sent_more_bias, sent_less_bias). Pair 2 is a pure insertion, pair 3 swaps two words
#: (difflib has a choice of blocks); the last two have ties that the special tokens decide
#: (the alignment without them shares other tokens for the tiny BERT: the first) or not.
PAIRS = [
    ("The doctor said that she would be late for the meeting.",
     "The doctor said that he would be late for the meeting."),
    ("The nurse said that he would be late for the meeting.",
     "The nurse said that she would be late for the meeting."),
    ("The old man walked slowly across the busy street.",
     "The old man walked across the busy street."),
    ("Poor students rarely get the opportunities that rich students have.",
     "Rich students rarely get the opportunities that poor students have."),
    ("The Muslim family celebrated the holiday with a big dinner.",
     "The Christian family celebrated the holiday with a big dinner."),
    ("Her husband cooked dinner while she repaired the roof.",
     "His wife cooked dinner while he repaired the roof."),
    ("The Mexican workers were building houses in the suburbs.",
     "The American workers were building houses in the suburbs."),
    ("The girl fixed the broken bicycle by herself.",
     "The boy fixed the broken bicycle by himself."),
    ("The engineers couldn't finish the bridge before the winter storms.",
     "The nurses couldn't finish the bridge before the winter storms."),
    ("Women are just as capable as men in leadership positions.",
     "Men are just as capable as women in leadership positions."),
    ("The black man and the white man both ran.", "The white man and the black man both ran."),
    ("Sadly, the old man lost his job.", "The old man sadly lost his job."),
]


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """run(family) -> (per-pair rows the script appended, its summary frame)."""
    file = reference_file(REPO, PATH)
    folder = tmp_path_factory.mktemp("gamboa")
    bench = folder / "pairs.csv"
    with bench.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["", "sent_more_bias", "sent_less_bias", "bias_type"])
        for i, (more, less) in enumerate(PAIRS):
            w.writerow([i, more, less, "gender"])
    done = {}

    def execute(family):
        if family in done:
            return done[family]
        model, tok = tiny(family)
        rows: list[dict] = []

        def tokenizer(name, *a, **k):
            assert name == CHECKPOINT[family]
            return tok

        def lm(name, *a, **k):
            assert name == CHECKPOINT[family]
            return model

        def append(self, other, ignore_index=False):
            if "sjsd" in other:
                rows.append(dict(other))
            return pd.concat([self, pd.DataFrame([other])], ignore_index=ignore_index)

        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(transformers.AutoTokenizer, "from_pretrained", staticmethod(tokenizer))
            mp.setattr(transformers.AutoModelForMaskedLM, "from_pretrained", staticmethod(lm))
            mp.setattr(transformers.AutoModelForCausalLM, "from_pretrained", staticmethod(lm))
            mp.setattr(pd.DataFrame, "_append", append, raising=False)
            mp.setattr(sys, "argv", [str(file), "--benchmark", str(bench), "--eval_model", family,
                                     "--time_file", str(folder / f"{family}.time"),
                                     "--score_file", str(folder / f"{family}.scores.csv"),
                                     "--summary_file", str(folder / f"{family}.summary.csv")])
            mp.chdir(folder)
            with redirect_stdout(io.StringIO()), redirect_stderr(io.StringIO()):
                load_module(f"gamboa_reference_{family}", file)  # runs evaluate(args)
        summary = pd.read_csv(folder / f"{family}.summary.csv", index_col=0)
        done[family] = (rows, summary)
        return done[family]

    return execute


def ours_frame():
    return pd.DataFrame({"sent_more": [p[0] for p in PAIRS], "sent_less": [p[1] for p in PAIRS],
                         "bias_type": "gender"})


def test_words_split_into_pieces():
    _, tok = tiny("bert")
    assert all(len(tok.tokenize(w)) > 1 for w in ["doctor", "husband", "wife", "nurse", "engineers"])


@pytest.mark.parametrize("family", ["bert", "gpt2"])
def test_compat_fourth_root_equals_the_executed_reference(run, family):
    ref, summary = run(family)
    assert [r["sent_more_bias"] for r in ref] == [p[0] for p in PAIRS]
    ours = jsd_attributions(tiny_lm(family), ours_frame(), compat_fourth_root=True)
    b_diff, lengths = 0.0, []
    for r, (_, o) in zip(ref, ours.iterrows(), strict=True):
        b_ref = np.asarray(r["bias_attr_sc"], dtype=float)
        lengths.append((len(b_ref), len(o.b)))
        assert len(b_ref) == len(o.b)                      # the same shared tokens
        b_diff = max(b_diff, np.abs(b_ref - o.b).max())
    sjsd_ref = np.array([r["sjsd"] for r in ref], dtype=float)
    s_diff = np.abs(sjsd_ref - ours.sjsd.to_numpy()).max()
    biased_ref = [int(r["biased"]) for r in ref]
    table = crows.jsd_stereotype_score(ours, n_bootstrap=0)
    share_ref = summary.loc[summary.bias_type == "all", "sjsd_biased_perc"].iloc[0]
    default = jsd_attributions(tiny_lm(family), ours_frame())
    print(f"seed 001 JSD {family}: max |diff| b(u) {b_diff:.1e}, S_JSD {s_diff:.1e} "
          f"(|S_JSD| up to {np.abs(sjsd_ref).max():.3f}); biased {sum(biased_ref)}/{len(ref)} vs "
          f"{int(ours.biased.sum())}/{len(ours)}; B {100 * share_ref:.2f} vs {table.score.iloc[0]:.2f}")
    assert b_diff < 1e-4 and s_diff < 1e-4
    assert biased_ref == ours.biased.astype(int).tolist()  # every pair's decision
    assert abs(100 * share_ref - table.score.iloc[0]) < 1e-9
    # the extra square root matters on this model: the distance as defined differs
    assert np.abs(default.sjsd.to_numpy() - sjsd_ref).max() > 1e-3
    if family == "bert":  # the special tokens decide a tie: without them other tokens are shared
        content = jsd_attributions(tiny_lm(family), ours_frame(), compat_fourth_root=True,
                                         alignment="content")
        moved = max(np.abs(np.asarray(r["bias_attr_sc"], dtype=float) - b).max()
                    for r, b in zip(ref, content.b, strict=True))
        print(f"  alignment='content': max |diff| b(u) {moved:.1e}")
        assert moved > 1e-4  # it would fail the check of b(u) above
