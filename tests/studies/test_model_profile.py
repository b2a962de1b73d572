"""A model's profile (polybias.studies.model_profile): its overall numbers with their
verdicts, beside the released checkpoints under the same measure, dataset and language."""

import pandas as pd
import pytest
from polybias import paths
from polybias.results import plots
from polybias.studies import model_profile as study


def test_the_profile_table_keeps_overall_numbers_with_their_verdicts():
    tidy = pd.DataFrame([
        {"metric": "crows", "test": "kaneko2022", "subset": "all", "language": "ja", "value": 48.0,
         "ci_low": 42.0, "ci_high": 54.0, "n": 262},
        {"metric": "crows", "test": "kaneko2022", "subset": "gender", "language": "ja", "value": 1.0,
         "ci_low": 0.0, "ci_high": 2.0, "n": 2},
        {"metric": "crows", "test": "crows-pairs", "subset": "all", "language": "en", "value": 55.6,
         "ci_low": 53.2, "ci_high": 58.0, "n": 1508},
        {"metric": "eurogest", "test": "eurogest", "subset": "g_s", "language": "el", "value": 1.2,
         "ci_low": 1.1, "ci_high": 1.3, "n": 300}])
    verdicts = pd.DataFrame({"measure": ["crows", "eurogest"], "language": ["en", "el"],
                             "verdict": ["calibrated", "too liberal"], "basis": ["", ""]})
    table = study.profile_table({"a": tidy, "b": None}, verdicts)
    assert table[["measure", "language", "verdict"]].values.tolist() == [
        ["crows", "en", "calibrated"], ["crows", "ja", "not tested"], ["eurogest", "el", "too liberal"]]
    assert study.profile_table({"a": None}, verdicts).empty



def _reference():
    """Rows shaped as notebook 17's real-model table: GEST per template, the Dutch authors'
    CrowS-Pairs runs, StereoSet, and an embedded model's own rows."""
    rows = [("a/gest1", "gest", "causal template 1", "gest g_s", "en", 1.10),
            ("a/gest2", "gest", "causal template 1", "gest g_s", "en", 1.30),
            ("a/gest2", "gest", "causal template 2", "gest g_s", "en", 1.50),
            ("b/robbert", "crows-pairs-dutch-published", "all pairs", "crows-pairs stereotype score", "nl", 60.0),
            ("c/gpt2", "stereoset-published", "intrasentence", "stereoset SS", "en", 58.0),
            ("m/own", "smollm2 (this project)", "crows-pairs-dutch", "crows-pairs stereotype score", "nl", 70.0),
            ("g/other", "gemma-3-270m (this project)", "crows-pairs-dutch", "crows-pairs stereotype score", "nl", 52.0),
            ("g/other", "gemma-3-270m (this project)", "eurogest", "eurogest g_s", "de", None)]
    return pd.DataFrame(rows, columns=["hub_id", "source", "run", "measure", "language", "value"])


def _profile():
    return pd.DataFrame({
        "measure": ["crows", "gest", "gest", "stereoset", "eurogest"],
        "test": ["crows-pairs-dutch", "causal-template1", "causal-template2", "stereoset", "eurogest"],
        "subset": ["all", "causal-template1", "causal-template2", "intrasentence; all", "g_s"],
        "language": ["nl", "en", "en", "en", "de"], "value": [55.0, 1.2, 1.6, 60.0, 1.05],
        "ci_low": [50.0, 1.1, 1.5, 57.0, 1.0], "ci_high": [60.0, 1.3, 1.7, 63.0, 1.1],
        "n": [100, 3565, 3565, 2106, 2829],
        "verdict": ["calibrated", "not tested", "not tested", "not tested", "too liberal"]})


def test_each_number_meets_the_checkpoints_of_its_own_measure_dataset_template_and_language():
    refs = study.reference_values(_profile(), _reference(), exclude_source="smollm2 (this project)")
    got = sorted(zip(refs.test, refs.hub_id, strict=True))
    # the Dutch pairs meet the Dutch authors' run and the other embedded model, not the model
    # itself; each GEST template its own template; a value-less row nothing
    assert got == [("causal-template1", "a/gest1"), ("causal-template1", "a/gest2"),
                   ("causal-template2", "a/gest2"), ("crows-pairs-dutch", "b/robbert"),
                   ("crows-pairs-dutch", "g/other"), ("stereoset", "c/gpt2")]
    table = study.with_reference(_profile(), refs).set_index("test")
    assert table.loc["causal-template1", ["ref_n", "below"]].tolist() == [2, 1]
    assert table.loc["causal-template1", "ref_median"] == pytest.approx(1.2)
    assert table.loc["causal-template2", ["ref_n", "below"]].tolist() == [1, 1]
    assert table.loc["eurogest", "ref_n"] == 0
    text = study.profile_markdown(table.reset_index())
    assert "| GEST g_s | causal-template1 | en | 1.200 [1.100, 1.300] | 3565 | not tested | 1 of 2 lower; median 1.200 [1.100, 1.300] |" in text
    assert "| CrowS-Pairs stereotype score (%) | crows-pairs-dutch | nl | 55.0 [50.0, 60.0] | 100 | calibrated | 1 of 2 lower; median 56.0 [52.0, 60.0] |" in text
    assert "1 checkpoint, lower: 1.500" in text and "1 checkpoint, lower: 58.0" in text


def test_a_model_s_full_runs_are_chosen_and_its_own_rows_named():
    chosen = study.full_run_of("gemma-3-270m-q4_k_m")
    assert chosen({"model": "gemma-3-270m-q4_k_m", "languages": ["cs"]})
    assert not chosen({"model": "gemma-3-270m-q4_k_m", "per_stereotype": 1})
    assert study.own_source("gemma-3-270m-q4_k_m") == "gemma-3-270m (this project)"


def test_the_verdicts_are_counted_per_measure():
    counts = study.verdict_counts(_profile())
    assert counts.columns.tolist() == ["measure", "numbers", "languages", "calibrated", "too liberal",
                                       "not tested"]
    assert counts.set_index("measure").loc["GEST g_s", ["numbers", "languages", "not tested"]].tolist() == [2, 1, 2]


def test_the_figure_is_drawn_with_every_measure_and_no_text_problem(tmp_path, monkeypatch):
    monkeypatch.setenv(paths.FIGURES_ENV, str(tmp_path))
    references = study.reference_values(_profile(), _reference())
    table = study.with_reference(_profile(), references)
    fig = study.profile_figure(table, references, "m", file="p.png")
    assert (tmp_path / "p.png").is_file()
    assert len(fig.axes) == 4  # crows, stereoset, gest, eurogest
    assert plots.text_problems(fig) == []
    with pytest.raises(ValueError, match="no row to draw"):
        study.profile_figure(table.iloc[:0], table.iloc[:0], "m")
