"""The agreement study's tables and run records."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
from polybias.metrics import agreement
from polybias.results import report
from polybias.studies import agreement as study


def _measurements():
    rows = []
    for i, p in enumerate([0.1, 0.3, 0.5, 0.7, 0.9]):
        rows += [{"measure": "weat", "metric": "d", "p": p, "seed": 0, "value": 4 * (p - 0.5), "null": 0.0},
                 {"measure": "crows", "metric": "s", "p": p, "seed": 0, "value": 50 + 10 * (p - 0.5), "null": 50.0},
                 {"measure": "cb", "metric": "cb", "p": p, "seed": 0, "value": [2, 1, 0, 1, 2][i], "null": np.nan}]
    return pd.DataFrame(rows)


def test_published_signs_table_counts_the_published_signs_or_says_none_was_chosen():
    table = study.published_signs_table("sadhu2024_table4")
    expected = agreement.reported_signs(report.load_reported("sadhu2024_table4"))
    assert table == report.markdown_table(expected, digits=2)
    assert table.splitlines()[0].startswith("| category |") and "agree" in table.splitlines()[0]
    assert study.published_signs_table("") == study.NO_PUBLISHED


def test_correlation_table_names_its_rows_metric():
    correlation = agreement.metric_agreement(_measurements())
    lines = study.correlation_table(correlation).splitlines()
    assert lines[0].split("|")[1].strip() == "metric"
    assert [line.split("|")[1].strip() for line in lines[2:]] == list(correlation.index)
    assert "1.00" in lines[2]  # weat:d against itself


def test_records_hold_both_tables(tmp_path, monkeypatch):
    monkeypatch.setenv("POLYBIAS_OUTPUT_ROOT", str(tmp_path))
    measurements = _measurements()
    correlation = agreement.metric_agreement(measurements)
    signs = agreement.sign_agreement(measurements)
    paths = study.write_agreement_records(correlation, signs, "en", {"ps": [0.1, 0.9]}, "agree")
    records = {r["test"]: r for r in (json.loads(p.read_text()) for p in paths)}
    assert set(records) == {"correlation", "signs"} and all(p.parent == tmp_path / "agree" for p in paths)
    for r in records.values():
        assert (r["metric"], r["model"], r["language"], r["parameters"]) == ("agreement", "planted", "en",
                                                                              {"ps": [0.1, 0.9]})
    got = pd.DataFrame(records["correlation"]["values"]["table"])
    pd.testing.assert_frame_equal(got.loc[correlation.index, correlation.columns], correlation.round(12),
                                  check_names=False)  # the record keeps its keys sorted
    assert records["signs"]["values"]["table"] == json.loads(signs.to_json(orient="records"))
