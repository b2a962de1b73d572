"""The CrowS-Pairs study's tables: seed 001's GPT-2 row, the score summary, the categories."""

from __future__ import annotations

import pandas as pd
import pytest
from polybias.studies import crows_pairs


def test_gpt2_row_reproduces_table3_when_noise_is_a_tie(mirror):
    table = crows_pairs.gamboa_gpt2_reproduction()
    assert table["aggregation"].unique().tolist() == ["eq. 6 as written", "|S_JSD| <= 1e-5 is a tie"]
    tie = table[table["aggregation"] == "|S_JSD| <= 1e-5 is a tie"]
    assert (tie["difference"].abs() < 0.005).all()  # the paper's exact counts
    written = table[table["aggregation"] == "eq. 6 as written"].set_index("bias_type")
    assert written.loc["gender", "stereotyped"] == tie.set_index("bias_type").loc["gender", "stereotyped"] + 1


def test_score_summary_and_categories_of_a_run(planted_lm):
    pytest.importorskip("empath", reason="needs empath: make env installs it (a dependency of polybias), or pip install empath")
    run = crows_pairs.run_crows(planted_lm[0.9], n_pairs=30, n_bootstrap=100)
    summary = crows_pairs.score_summary(run)
    assert summary.columns.tolist() == ["bias_type", "n", "score", "ci_low", "ci_high", "binom_p", "ties", "jsd_B"]
    assert summary["bias_type"].tolist() == run.stereotype["bias_type"].tolist()
    pd.testing.assert_series_equal(summary["jsd_B"], run.jsd["score"], check_names=False)
    categories = crows_pairs.bias_categories(run, top=3)
    assert len(categories) <= 3
    assert crows_pairs.bias_categories(run, top=10).head(3).equals(categories)


def test_the_gpt2_reproduction_says_why_it_cannot_run_offline(monkeypatch):
    from polybias.studies import crows_pairs as study

    monkeypatch.setattr(study.sources, "availability",
                        lambda name, *_: (False, f"data source {name!r} cannot be had: offline"))
    note = study.gamboa_gpt2_unavailable()
    assert note.startswith("(not run:") and "'gamboa-gpt2-scores' cannot be had: offline" in note
    monkeypatch.setattr(study.sources, "availability", lambda name, *_: (True, "mirror"))
    assert study.gamboa_gpt2_unavailable() is None


def test_max_pairs_scores_a_declared_sample_of_a_dataset(planted_lm, mirror):
    run = crows_pairs.run_crows(planted_lm[0.9], "crows-pairs-gamboa", "en", max_pairs=6,
                                n_bootstrap=0, seed=0)
    assert len(run.scored) == 6
    assert run.scored.bias_type.value_counts().to_dict() == {"gender": 4, "sexual-orientation": 2}
    name = planted_lm[0.9].name
    # the caption names the model, the dataset and its language, and the sample
    assert run.caption == (f"**{name} on crows-pairs-gamboa** (en). Pairs: a sample of 6 of the "
                           "231 pairs, stratified by bias type (max_pairs = 6, seed 0).")
    planted = crows_pairs.run_crows(planted_lm[0.9], n_pairs=5, n_bootstrap=0).caption
    assert planted.startswith(f"**{name} on planted minimal pairs** (en; generated for the planted-bias")
    assert planted.endswith("not a published dataset): 5 pairs.")
