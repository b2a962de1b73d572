"""The EuroGEST measure: ratio, options, the minimum of sentences, g_s and its bootstrap."""

import numpy as np
import pandas as pd
import pytest
from polybias import measures
from polybias.metrics import eurogest as eg


def _scores(rates: dict[int, float], k: int = 12) -> pd.DataFrame:
    """k sentences per stereotype whose masculine ratio is exactly ``rates[s]``."""
    rows = []
    for s, r in rates.items():
        logit = np.log(r / (1 - r))
        rows += [{"stereotype": s, "logprob_masc": logit, "n_masc": 1, "logprob_fem": 0.0, "n_fem": 1,
                  "logprob_masc_whole": 0.0, "n_masc_whole": 4, "logprob_fem_whole": 0.0,
                  "n_fem_whole": 4}] * k
    return pd.DataFrame(rows)


def test_g_s_by_hand():
    rates = {s: (0.4 if s <= 7 else 0.6) for s in range(1, 17)}
    out = eg.eurogest_scores(_scores(rates), n_bootstrap=0)
    assert out["g_s"] == pytest.approx(1.5) and out["complete"] and out["interval"] is None
    assert out["per_stereotype"]["masculine_rate"].tolist() == pytest.approx(list(rates.values()))
    whole = eg.eurogest_scores(_scores(rates), differing_only=False, n_bootstrap=0)
    assert whole["g_s"] == pytest.approx(1.0)  # equal whole-sentence scores


def test_normalisation_divides_by_the_token_counts():
    frame = pd.DataFrame({"stereotype": [8], "logprob_masc": [-4.0], "n_masc": [4],
                          "logprob_fem": [-3.0], "n_fem": [1]})
    assert eg.masculine_ratio(frame)[0] == pytest.approx(1 / (1 + np.exp(-3.0 + 1.0)))
    assert eg.masculine_ratio(frame, normalise=False)[0] == pytest.approx(1 / (1 + np.exp(1.0)))


def test_no_rate_below_the_minimum_and_incomplete_languages():
    frame = _scores({s: 0.5 for s in range(1, 17)})
    frame = frame[~((frame.stereotype == 5) & (frame.index % 12 >= 9))]  # 9 sentences left
    out = eg.eurogest_scores(frame, n_bootstrap=50)
    per = out["per_stereotype"].set_index("stereotype")
    assert np.isnan(per.masculine_rate[5]) and np.isnan(per.ci_low[5]) and not out["complete"]
    assert out["g_s"] == pytest.approx(1.0)
    assert not np.isnan(eg.eurogest_scores(frame, min_sentences=9, n_bootstrap=0)["per_stereotype"]
                        .masculine_rate).any()


def test_bootstrap_is_seeded_and_brackets_the_value():
    rng = np.random.default_rng(1)
    frame = _scores({s: 0.5 for s in range(1, 17)}, k=15)
    frame["logprob_masc"] = rng.normal(size=len(frame)) + np.where(frame.stereotype >= 8, 0.5, 0.0)
    a = measures.compute("eurogest", scored=frame, n_bootstrap=300, seed=4)
    b = measures.compute("eurogest", scored=frame, n_bootstrap=300, seed=4)
    c = measures.compute("eurogest", scored=frame, n_bootstrap=300, seed=5)
    assert a == b and a.interval != c.interval
    assert a.interval.low < a.value < a.interval.high and a.value > 1
    assert a.n == len(frame) and len(a.details) == 16


def test_malformed_scores_name_the_problem():
    frame = _scores({1: 0.5, 8: 0.5})
    with pytest.raises(eg.EuroGestMetricError, match="lack the column.*stereotype"):
        eg.eurogest_scores(frame.drop(columns="stereotype"))
    with pytest.raises(eg.EuroGestMetricError, match="whole-sentence scores"):
        eg.eurogest_scores(frame.drop(columns="n_fem_whole"), differing_only=False)
    with pytest.raises(eg.EuroGestMetricError, match="GEST stereotypes are 1-16"):
        eg.eurogest_scores(frame.assign(stereotype=17))
    with pytest.raises(eg.EuroGestMetricError, match="carry both genders"):
        eg.eurogest_scores(frame.assign(stereotype_gender=["feminine", "masculine"] * 12))
    nan = frame.assign(logprob_masc_whole=np.nan)
    with pytest.raises(eg.EuroGestMetricError, match="NaN log-probabilities"):
        eg.eurogest_scores(nan, differing_only=False)


def test_nan_whole_sentence_scores_advise_differing_only_which_then_scores_them():
    """Masked-LM scores have no whole-sentence part: the advice, differing_only=True, is the
    call that scores the same frame (the differing part's ratios: 0.4 and 0.6 here)."""
    nan = _scores({1: 0.4, 8: 0.6}).assign(logprob_masc_whole=np.nan, logprob_fem_whole=np.nan)
    with pytest.raises(eg.EuroGestMetricError, match=r"no whole-sentence part: use differing_only=True\)"):
        eg.masculine_ratio(nan, differing_only=False)
    assert eg.masculine_ratio(nan, differing_only=True) == pytest.approx([0.4] * 12 + [0.6] * 12)
