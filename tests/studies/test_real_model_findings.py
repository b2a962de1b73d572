"""The findings of the embedded real models: tables from tidy records, read against the
validity verdicts (polybias.studies.real_model_findings)."""

import numpy as np
import pandas as pd
import pytest
from polybias.studies import real_model_findings as findings

A, B = "gemma-3-270m-q4_k_m", "smollm2-135m-instruct-q4_1"


def _row(model, metric, language, value, low, high, n, test="eurogest", subset="g_s"):
    return {"model": model, "metric": metric, "language": language, "test": test, "subset": subset,
            "value": value, "ci_low": low, "ci_high": high, "n": n}


@pytest.fixture
def tidy():
    rows = [_row(A, "eurogest", "el", 1.30, 1.10, 1.50, 300), _row(B, "eurogest", "el", 1.00, 0.95, 1.05, 300),
            _row(A, "eurogest", "cs", 1.02, 0.99, 1.04, 1808), _row(A, "eurogest", "de", 0.90, 0.85, 0.95, 200),
            _row(A, "crows", "en", 57.6, 55.0, 59.9, 1508, test="crows-pairs", subset="all"),
            _row(B, "crows", "en", 55.6, 53.2, 58.0, 1508, test="crows-pairs", subset="all"),
            _row(A, "crows", "en", 50.0, 40.0, 60.0, 30, test="crows-pairs", subset="gender"),
            _row(A, "crows", "fi", 49.0, 46.0, 52.0, 1000, test="crows-pairs-steinborn", subset="all")]
    rows += [_row(A, "eurogest-masculine-rate", "cs", 0.5 + s / 100, 0.4, 0.7, 20, subset=f"{s} Label")
             for s in range(1, 17)]
    rows += [_row(A, "gest", "en", 1.17, 1.15, 1.18, 3565, test="causal-template1", subset="causal-template1"),
             _row(B, "gest", "en", 1.00, 0.99, 1.02, 3565, test="causal-template1", subset="causal-template1"),
             _row(A, "stereoset", "en", 61.5, 59.3, 63.5, 2106, test="stereoset", subset="intrasentence; all"),
             _row(A, "stereoset", "en", 68.6, 62.7, 74.1, 255, test="stereoset", subset="intrasentence; gender")]
    return pd.DataFrame(rows)


VERDICTS = pd.DataFrame({"measure": ["crows", "eurogest", "eurogest"], "language": ["en", "el", "cs"],
                         "verdict": ["calibrated", "too liberal", "undecided"], "basis": ["", "", ""]})


def test_eurogest_by_language_orders_by_family_and_reads_each_interval_with_its_verdict(tidy):
    out = findings.eurogest_by_language(tidy, VERDICTS)
    assert out[out.model == A].language.tolist() == ["cs", "el", "de"]  # EuroGEST's family order
    row = out.set_index(["model", "language"])
    assert row.loc[(A, "el"), "reading"] == "above" and row.loc[(A, "el"), "verdict"] == "too liberal"
    assert row.loc[(A, "de"), "reading"] == "below" and row.loc[(A, "de"), "verdict"] == "not tested"
    assert row.loc[(A, "cs"), "reading"] == "holds" and bool(row.loc[(A, "cs"), "complete"])
    assert not bool(row.loc[(A, "el"), "complete"])  # no stereotype rates: not all 16 rated


def test_pair_scores_keep_the_overall_number_and_the_crows_verdict(tidy):
    out = findings.pair_scores(tidy, VERDICTS)
    assert len(out) == 3 and set(out.dataset) == {"crows-pairs", "crows-pairs-steinborn"}
    fi = out[out.language == "fi"].iloc[0]
    assert fi.verdict == "not tested" and fi.reading == "holds" and fi.language_name == "Finnish"
    assert (out[out.language == "en"].verdict == "calibrated").all()


def test_differences_only_where_the_intervals_do_not_overlap(tidy):
    tables = findings.findings_tables({"r1": tidy, "r2": None}, VERDICTS)
    diff = tables["differences"].set_index("measure")
    assert diff.loc["eurogest g_s", "language"] == "el" and bool(diff.loc["eurogest g_s", "differ"])
    assert not bool(diff.loc["stereotype score", "differ"])  # 57.6 [55.0, 59.9] vs 55.6 [53.2, 58.0]
    assert bool(diff.loc["gest g_s", "differ"]) and diff.loc["gest g_s", "test"] == "causal template 1"
    other = tables["other"]
    assert other[["measure", "model", "reading"]].values.tolist() == [
        ["gest g_s", A, "above"], ["gest g_s", B, "holds"], ["stereoset SS", A, "above"]]
    assert (other.verdict == "not tested").all()
    empty = findings.findings_tables({"r": None}, VERDICTS)
    assert empty["eurogest"].empty and empty["pairs"].empty and empty["differences"].empty


def test_rates_for_the_heat_map(tidy):
    rates = findings.eurogest_rates(tidy, A)
    assert rates.stereotype.tolist() == list(range(1, 17)) and rates.label.iloc[0] == "Emotional"
    assert (rates.stereotype_gender == np.where(rates.stereotype <= 7, "feminine", "masculine")).all()
    with pytest.raises(findings.FindingsError, match=f"no EuroGEST masculine rates of {B}"):
        findings.eurogest_rates(tidy, B)


def test_the_validity_verdicts_come_from_the_planted_models():
    from polybias.runner import validity_eurogest

    verdicts = findings.validity_verdicts(validity_eurogest.read_frame()).set_index(["measure", "language"]).verdict
    assert verdicts[("crows", "en")] == verdicts[("crows", "hi")] == "calibrated"
    assert verdicts[("eurogest", "el")] == "too liberal"
    assert verdicts[("eurogest", "cs")] == verdicts[("eurogest", "lv")] == "undecided"


def test_the_stereotype_ranking_and_the_papers_strongest(tidy):
    """Rates rising with the stereotype number rank the stereotypes 1..16; Rowe et al.'s
    feminine three (beautiful 7, empathetic 3, neat 4) then have ranks 3, 4, 7 and the
    masculine four (leaders 13, strong 16, tough 8, professional 10) 8, 10, 13, 16."""
    ranking = findings.stereotype_ranking(tidy, A)
    assert ranking.stereotype.tolist() == list(range(1, 17)) and (ranking.languages == 1).all()
    assert ranking.strongest_in_paper.sum() == 7
    agreement = findings.strongest_agreement(ranking).set_index("gender")
    assert agreement.loc["feminine", "rank_sum"] == 14 and agreement.loc["masculine", "rank_sum"] == 47
    from itertools import combinations
    below = sum(sum(c) <= 14 for c in combinations(range(1, 17), 3)) / 560
    above = sum(sum(c) >= 47 for c in combinations(range(1, 17), 4)) / 1820
    assert agreement.loc["feminine", "p"] == pytest.approx(below)
    assert agreement.loc["masculine", "p"] == pytest.approx(above)
    tables = findings.findings_tables({"r": tidy}, VERDICTS)
    assert set(tables["stereotypes"].model) == {A} and len(tables["strongest"]) == 2
