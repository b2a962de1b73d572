"""Agreement between metrics: rank correlation, sign agreement, published sign tables."""

import numpy as np
import pandas as pd
import pytest
from polybias.metrics import agreement
from polybias.metrics.agreement import AgreementError
from polybias.results import report


def measurements():
    ps = [0.1, 0.3, 0.5, 0.7, 0.9]
    rows = []
    for i, p in enumerate(ps):
        rows += [{"measure": "weat", "metric": "d", "p": p, "seed": 0, "value": 4 * (p - 0.5), "null": 0.0},
                 {"measure": "crows", "metric": "s", "p": p, "seed": 0, "value": 50 + 100 * (p - 0.5) ** 3, "null": 50.0},
                 {"measure": "noise", "metric": "n", "p": p, "seed": 0, "value": [3, 1, 4, 1.5, 2][i], "null": 0.0},
                 {"measure": "cb", "metric": "cb", "p": p, "seed": 0, "value": [2, 1, 0, 1, 2][i], "null": np.nan}]
    return pd.DataFrame(rows)


def test_rank_correlation_between_metrics():
    corr = agreement.metric_agreement(measurements())
    assert corr.loc["weat:d", "crows:s"] == pytest.approx(1.0)  # monotone transform
    assert corr.loc["weat:d", "cb:cb"] == pytest.approx(0.0)  # V-shaped against linear
    assert corr.loc["weat:d", "noise:n"] == pytest.approx(-0.1)  # hand-computed ranks
    pear = agreement.metric_agreement(measurements(), method="pearson")
    assert pear.loc["weat:d", "crows:s"] < 1.0


def test_sign_agreement_skips_unsigned_metrics_and_flags_disagreement():
    signs = agreement.sign_agreement(measurements())
    assert "cb:cb" not in signs.columns
    by_p = signs.set_index("p")
    assert by_p.loc[0.9, "weat:d"] == 1 and by_p.loc[0.9, "crows:s"] == 1
    assert by_p.loc[0.1, "noise:n"] == 1 and not by_p.loc[0.1, "agree"]  # noise stays positive
    assert not by_p.loc[0.5, "agree"]  # exactly at the null (0) vs positive noise


def test_reported_signs_of_seed000_table4_find_the_disagreeing_categories():
    table = agreement.reported_signs(report.load_reported("sadhu2024_table4"))
    assert list(table["category"]) == [f"C{i}" for i in range(1, 10)]
    # every method of a category in one column each; C1 agrees in sign everywhere
    c1 = table.set_index("category").loc["C1"]
    assert c1["agree"] and c1["n_neg"] == 0
    assert not table["agree"].all()  # the paper's point: metrics disagree in sign somewhere


def test_bad_input_is_named():
    with pytest.raises(AgreementError, match="seed"):
        agreement.metric_agreement(measurements().drop(columns="seed"))
    with pytest.raises(AgreementError, match="two metrics"):
        agreement.metric_agreement(measurements()[lambda f: f.measure == "weat"])
    with pytest.raises(AgreementError, match="method"):
        agreement.metric_agreement(measurements(), method="cosine")
    bad = pd.DataFrame({"category": ["C1"], "method": ["W"], "model": [""], "value": [1.0],
                        "significant": ["maybe"]})
    with pytest.raises(AgreementError, match="true/false"):
        agreement.reported_signs(bad)
