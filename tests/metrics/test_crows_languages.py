"""Per-language scores and paired tests over aligned pairs (compare_languages)."""

import numpy as np
import pandas as pd
import pytest
from polybias.engines.pair_scores import pair_scores
from polybias.metrics import crows
from scipy.stats import binomtest


def frame(ids, stereotyped):
    stereotyped = np.asarray(stereotyped, bool)
    return pd.DataFrame({"pair_id": [str(i) for i in ids], "score_more": np.where(stereotyped, -1.0, -2.0),
                         "score_less": np.full(len(ids), -1.5), "bias_type": "gender"})


def test_paired_counts_and_mcnemar_by_hand():
    a = frame(range(10), [1, 1, 1, 1, 1, 1, 1, 0, 0, 0])
    b = frame(range(10), [1, 1, 0, 0, 0, 0, 0, 0, 0, 1])
    out = crows.compare_languages({"en": a, "hi": b}, n_bootstrap=500, seed=1)
    per = out.per_language.set_index("language")
    assert per.loc["en", "score"] == 70.0 and per.loc["hi", "score"] == 30.0
    [row] = out.paired.to_dict("records")
    assert (row["language_a"], row["language_b"], row["n"]) == ("en", "hi", 10)
    assert (row["a_only"], row["b_only"]) == (5, 1)
    assert row["diff"] == pytest.approx(40.0)
    assert row["mcnemar_p"] == pytest.approx(binomtest(5, 6, 0.5).pvalue)
    assert row["ci_low"] <= 40.0 <= row["ci_high"]


def test_only_aligned_pairs_enter_the_paired_test():
    a = frame([0, 1, 2, 3], [1, 1, 0, 0])
    b = frame([2, 3, 4], [1, 1, 1])  # shares pairs 2 and 3
    c = frame([0, 1, 2, 3], [1, 1, 0, 0])
    out = crows.compare_languages({"nl": a, "fr": b, "en": c}, n_bootstrap=0)
    rows = out.paired.set_index(["language_a", "language_b"])
    assert rows.loc[("nl", "fr"), "n"] == 2 and rows.loc[("nl", "fr"), "b_only"] == 2
    assert rows.loc[("nl", "fr"), "score_a"] == 0.0 and rows.loc[("nl", "fr"), "score_b"] == 100.0
    same = rows.loc[("nl", "en")]
    assert same["diff"] == 0 and same["mcnemar_p"] == 1.0
    assert len(out.per_language) == 3 and out.per_language.set_index("language").loc["fr", "n"] == 3


def test_errors():
    a = frame([0, 1], [1, 0])
    with pytest.raises(crows.CrowsError, match="at least two"):
        crows.compare_languages({"en": a})
    with pytest.raises(crows.CrowsError, match="share no pair id"):
        crows.compare_languages({"en": a, "hi": frame([5], [1])})
    with pytest.raises(crows.CrowsError, match="pair_id"):
        crows.compare_languages({"en": a.drop(columns="pair_id"), "hi": a})


def test_indibias_languages_on_a_tiny_model(mirror, torch_one_thread):
    from polybias.data import crowspairs
    from polybias.engines import scoring
    from polybias.planted import tiny_models

    lm = scoring.wrap_language_model(*tiny_models.build_tiny_model("bert", max_position_embeddings=512), name="bert")
    scored = {}
    for language in ("en", "hi"):
        pairs = crowspairs.load_crows_pairs("indibias", language, on_invalid="drop", max_diff=None)
        scored[language] = pair_scores(lm, pairs.head(12), method="aul")
    out = crows.compare_languages(scored, n_bootstrap=100)
    [row] = out.paired.to_dict("records")
    assert row["n"] == 12 and 0 <= row["mcnemar_p"] <= 1
