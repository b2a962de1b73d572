"""Real models: the hub-id maps, the table builder and the rank agreement, by hand."""

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from polybias.data import published_pair_scores
from polybias.data import stereoset as ss_data
from polybias.results import records
from polybias.results import table as results
from polybias.runner import sweep
from polybias.runner.runs import read_sweep
from polybias.studies import real_models as study

REPO = Path(__file__).resolve().parents[2]


def _values(a, b, models="vwxyz"):
    n = len(a)
    return pd.DataFrame({"key": ["A"] * n + ["B"] * n, "hub_id": list(models[:n]) * 2,
                         "value": list(a) + list(b)})


def test_identical_rankings_give_one_and_reversed_minus_one():
    same = study.rank_agreement(_values([1, 2, 3, 4, 5], [10, 20, 30, 40, 50]), n_bootstrap=0)
    rev = study.rank_agreement(_values([1, 2, 3, 4, 5], [5, 4, 3, 2, 1]), n_bootstrap=0)
    assert same.rho.iloc[0] == pytest.approx(1.0) and rev.rho.iloc[0] == pytest.approx(-1.0)
    # exact permutation p: 2 of 5! orderings reach |rho| = 1
    assert same.p.iloc[0] == pytest.approx(2 / 120)


def test_a_planted_disagreement():
    # two checkpoints swapped: d^2 = 2, rho = 1 - 6 * 2 / (5 * 24) = 0.9; tau = (9 - 1) / 10
    v = _values([1, 2, 3, 4, 5], [2, 1, 3, 4, 5])
    assert study.rank_agreement(v, n_bootstrap=0).rho.iloc[0] == pytest.approx(0.9)
    assert study.rank_agreement(v, method="kendall", n_bootstrap=0).rho.iloc[0] == pytest.approx(0.8)


def test_only_shared_checkpoints_count_and_too_few_say_nothing():
    v = pd.DataFrame({"key": ["A", "A", "A", "B", "B"], "hub_id": ["x", "y", "z", "x", "q"],
                      "value": [1.0, 2.0, 3.0, 4.0, 5.0]})
    row = study.rank_agreement(v, n_bootstrap=100).iloc[0]
    assert row.n == 1 and row.models == "x" and np.isnan(row.rho) and "nothing to say" in row.note
    three = study.rank_agreement(_values([1, 2, 3], [1, 2, 3]), n_bootstrap=0).iloc[0]
    assert three.p == pytest.approx(1 / 3) and "1/3" in three.note


def test_the_bootstrap_is_seeded():
    rng = np.random.default_rng(1)
    v = _values(rng.normal(size=8), rng.normal(size=8), models="abcdefgh")
    a = study.rank_agreement(v, n_bootstrap=300, seed=3)
    pd.testing.assert_frame_equal(a, study.rank_agreement(v, n_bootstrap=300, seed=3))
    b = study.rank_agreement(v, n_bootstrap=300, seed=4)
    assert (a.ci_low.iloc[0], a.ci_high.iloc[0]) != (b.ci_low.iloc[0], b.ci_high.iloc[0])
    assert a.ci_low.iloc[0] <= a.rho.iloc[0] <= a.ci_high.iloc[0]


def test_bad_input_is_named():
    with pytest.raises(study.RealModelError, match="spearman or kendall"):
        study.rank_agreement(_values([1, 2, 3], [1, 2, 3]), method="pearson")
    dup = pd.DataFrame({"key": ["A", "A"], "hub_id": ["x", "x"], "value": [1.0, 2.0]})
    with pytest.raises(study.RealModelError, match="two values"):
        study.rank_agreement(dup)
    with pytest.raises(study.RealModelError, match="'opt-125m_GPT2LM_en'.*STEREOSET_HUB_IDS"):
        study.stereoset_hub_id("opt-125m_GPT2LM_en")
    with pytest.raises(study.RealModelError, match="'gpt-j'.*known: bert"):
        study.dutch_crows_hub_id("gpt-j")


def test_hub_ids_of_the_short_names():
    assert study.stereoset_hub_id("google_mt5-base_mT5LM_ModelNSP_de") == "google/mt5-base"
    assert study.stereoset_hub_id("bert-base-multilingual-cased_BertLM_BertNextSentence_tr") == \
        "bert-base-multilingual-cased"
    assert set(study.DUTCH_CROWS_HUB_IDS) == set(published_pair_scores.DUTCH_SCORE_MODELS)


def test_model_values_average_the_runs():
    t = pd.DataFrame({"measure": ["m", "m", "m"], "language": ["en"] * 3, "hub_id": ["x", "x", "y"],
                      "value": [1.0, 3.0, 5.0]})
    v = study.model_values(t)
    assert v.to_dict("records") == [{"key": "m (en)", "hub_id": "x", "value": 2.0, "runs": 2},
                                    {"key": "m (en)", "hub_id": "y", "value": 5.0, "runs": 1}]


def _record(folder, **fields):
    records.write_record(records.Record(language="en", parameters={"seed": 0}, **fields), folder)


SMOL, GEMMA = study.SMOLLM2, study.GEMMA


def test_embedded_rows_read_the_records_of_the_full_runs(tmp_path):
    share = {"n": 10, "score": 60.0, "ci_low": 50.0, "ci_high": 70.0, "binom_p": 0.5}
    crows = tmp_path / "crows" / f"05_crows_pairs__model-{SMOL}__dataset-crows-pairs"
    _record(crows, metric="crows", model=study.SMOLLM2, test="crows-pairs",
            values={"by_bias_type": [{**share, "bias_type": "all"}, {**share, "bias_type": "gender", "score": 1.0}]})
    gest = tmp_path / "gest" / f"15_gest__model-{GEMMA}"
    for k, g in ((1, 1.2), (2, 1.0)):
        _record(gest, metric="gest", model=GEMMA, test=f"causal-template{k}",
                values={"n": 9, "g_s": g, "g_s_low": g - 0.1, "g_s_high": g + 0.1})
    eurogest = tmp_path / "eurogest" / f"16_eurogest__model-{SMOL}__languages-cs"
    _record(eurogest, metric="eurogest", model=study.SMOLLM2, test="eurogest",
            values={"g_s": 1.1, "ci_low": 1.0, "ci_high": 1.2, "level": 0.95, "n": 32,
                    "per_stereotype": [{"stereotype": 1, "label": "Emotional", "masculine_rate": 0.4, "n": 2}]})
    runs = {f.name: results.read_results(runs=[f]) for f in (crows, gest, eurogest)}
    runs[f"14_stereoset__model-{SMOL}"] = None
    rows = study.embedded_rows(runs, "configs/sweeps/default.yaml")
    assert rows[["measure", "run"]].values.tolist()[:4] == [
        ["crows-pairs stereotype score", "crows-pairs"], ["gest g_s", "causal template 1"],
        ["gest g_s", "causal template 2"], ["eurogest g_s", "eurogest"]]
    np.testing.assert_allclose(rows[["value", "ci_low", "ci_high"]].to_numpy()[:4],
                               [[60, 50, 70], [1.2, 1.1, 1.3], [1.0, 0.9, 1.1], [1.1, 1.0, 1.2]])
    assert rows.n.tolist()[:4] == [10, 9, 9, 32]
    assert rows.hub_id.tolist() == [study.SMOLLM2_HUB_ID, study.GEMMA_HUB_ID, study.GEMMA_HUB_ID,
                                    study.SMOLLM2_HUB_ID, study.SMOLLM2_HUB_ID]
    assert rows.note.iloc[1].startswith("Q4_K_M quantization; record gest/")
    missing = rows.iloc[-1]
    assert missing.measure == "stereoset SS" and np.isnan(missing.value) and missing.n is pd.NA
    assert missing.note == f"not run: polybias sweep configs/sweeps/default.yaml --only 14_stereoset__model-{SMOL}"
    text = study.real_model_markdown(rows)  # a run not done is counted above the table, not a row
    assert "not run" not in text and "| — |" not in text
    assert text.startswith(f"1 full-set run(s) of {SMOL} are not done in this checkout")
    assert len(study.done_rows(rows)) == len(rows) - 1
    only_rates = results.read_results(runs=[eurogest])
    with pytest.raises(study.RealModelError, match=f"16_eurogest__model-{SMOL}__languages-cs: its records hold no overall"):
        study.embedded_rows({f"16_eurogest__model-{SMOL}__languages-cs": only_rates[only_rates.metric != "eurogest"]}, "s.yaml")
    with pytest.raises(study.RealModelError, match="no measure declared for notebook 99_x"):
        study.embedded_rows({f"99_x__model-{SMOL}": None}, "s.yaml")
    with pytest.raises(study.RealModelError, match="names no embedded real model"):
        study.embedded_rows({"15_gest__model-x": None}, "s.yaml")


def test_only_the_embedded_models_full_runs_of_the_sweep_are_read_and_kept():
    runs = [r for r in read_sweep(REPO / "configs/sweeps/default.yaml") if study.embedded_full_run(r.parameters)]
    assert {r.key.split("__")[0] for r in runs} == set(study.NOTEBOOK_MEASURES)
    assert all(r.executed is None for r in runs)  # the full sets: no executed copy beside the paper
    assert all(r.keep_records for r in runs)  # their records are committed under paper/records
    keys = {r.key for r in runs}
    assert "15_gest__model-smollm2-135m-instruct-q4_1" in keys and "15_gest__model-gemma-3-270m-q4_k_m" in keys
    for model in study.EMBEDDED:  # EuroGEST: one run per language, 29 each
        assert sum(k.startswith(f"16_eurogest__model-{model}__languages-") for k in keys) == 29


@pytest.fixture(scope="module")
def table(mirror_or_local):
    with mirror_or_local():
        return study.real_model_table(n_bootstrap=1000, seed=0)  # as the paper


def test_every_real_run_is_in_the_table(table):
    counts = table.groupby("source").size().to_dict()
    # 35 StereoSet runs, 6 of which repeat another run's intrasentence scores (one note each)
    assert counts == {"gest": 90, "stereoset-published": 29, "crows-pairs-dutch-published": 7}
    assert table.note.str.contains("the same intrasentence scores as").sum() == 6
    assert table[list(study.COLUMNS)].notna().drop(columns=["note"]).all().all()
    assert ((table.ci_low <= table.value) & (table.value <= table.ci_high)).all()


def test_stereoset_ss_equals_the_workbook(table):
    book = ss_data.load_published_results()
    book = book[book.sheet == "intrasentence"].set_index("run")["SS Score"]
    ss = table[table.source == "stereoset-published"].set_index("name")["value"]
    unreproduced = "bert-base-multilingual-cased_BertLM_BertNextSentence_de"
    assert (ss.drop(unreproduced).round(2) == book.drop(unreproduced).reindex(ss.drop(unreproduced).index)
            .astype(float).round(2)).all()
    assert table.set_index("name").loc[unreproduced, "note"] != ""


def test_the_agreement_table_counts_the_pairs_it_leaves_out():
    v = pd.DataFrame({"key": ["A", "A", "A", "B", "B", "B", "C"], "hub_id": list("xyzxyzx"),
                      "value": [1.0, 2.0, 3.0, 3.0, 2.0, 1.0, 0.0]})
    text = study.agreement_markdown(study.rank_agreement(v, n_bootstrap=0))
    assert text.startswith("Pairs of measures sharing at least 2 checkpoints; 2 more pair(s)")
    assert "| A | B | 3 |" in text and text.count("\n| A |") == 1


def test_the_sections_statements(table):
    gest = table[table.source == "gest"]
    assert len(table) == 126 and table.hub_id.nunique() == 54
    assert (gest.ci_low > 1).sum() == 88
    assert set(gest[gest.ci_low <= 1].name) == {"pythia-70m", "bert-base-multilingual-cased"}
    causal = gest[gest.run.str.startswith("causal")]
    assert (round(causal.value.min(), 3), round(causal.value.max(), 3)) == (1.002, 1.634)
    ss = table[table.source == "stereoset-published"]
    assert (ss.ci_low > 50).sum() == 20 and ss[ss.ci_high < 50].name.tolist() == [
        "flaubert_flaubert_base_cased_BertLM_BertNextSentence_fr"]
    dutch = table[table.source == "crows-pairs-dutch-published"].set_index("name")
    assert (dutch.drop("mbert").ci_low > 50).all() and dutch.loc["mbert", "ci_low"] < 50
    values = study.model_values(table)
    agreement = study.rank_agreement(values, n_bootstrap=0).set_index(["key_a", "key_b"])
    assert agreement.loc[("gest g_s (en)", "stereoset SS (en)"), "models"] == "bert-base-multilingual-cased, gpt2"
    assert agreement.loc[("crows-pairs stereotype score (en)", "gest g_s (en)"), "models"] == "bert-base-uncased"
    three = agreement[agreement.n == 3]
    assert agreement.n.max() == 3 and all(a.startswith("stereoset") and b.startswith("stereoset")
                                          for a, b in three.index)
    templates = study.rank_agreement(study.gest_template_values(table), n_bootstrap=200, seed=0)
    causal = templates[templates.key_a.str.contains("causal")].iloc[0]
    assert causal.n == 23 and round(causal.rho, 2) == 0.93
    masked = templates[templates.key_a.str.contains("masked")]
    assert (masked.n == 11).all() and round(masked.rho.min(), 2) == 0.74 and round(masked.rho.max(), 2) == 0.95
    assert (templates.ci_low > 0).all()


def test_the_rows_reach_the_results_table_and_export(table, tmp_path):
    path = study.write_record(table, {"n_bootstrap": 1000, "seed": 0}, tmp_path / "real-models" / "run")
    frame = results.read_results(tmp_path)
    assert set(frame.metric) == {"gest", "stereoset", "crows"} and len(frame) == len(table)
    assert set(frame.study) == {"real-models"} and set(frame.model) == set(table.hub_id)
    gpt2 = frame[(frame.model == "gpt2") & (frame.metric == "stereoset")]
    heads = table[(table.hub_id == "gpt2") & (table.measure == "stereoset SS")]
    # its two runs differ only in the intersentence head: one row, naming both
    assert len(gpt2) == len(heads) == 1 and "gpt2_GPT2LM_GPT2LM_d_en" in heads.note.iloc[0]
    assert set(gpt2.subset) == {"intrasentence"}  # one run of the checkpoint: no run name needed
    for metric in ("gest", "stereoset", "crows"):
        results.cross_model_table(frame, metric)  # no two rows share a cell
    assert path.read_text() == study.write_record(table, {"n_bootstrap": 1000, "seed": 0},
                                                  tmp_path / "again").read_text()
    not_run = pd.DataFrame([{**table.iloc[0].to_dict(), "value": np.nan, "note": "not run: x"}])
    assert study.record_rows(not_run) == []  # a row without a value has nothing to export


def test_the_rows_are_the_same_under_a_seed(table):
    again = study.dutch_crows_rows(n_bootstrap=1000, seed=0).reset_index(drop=True)
    ours = table[table.source == "crows-pairs-dutch-published"].sort_values("name").reset_index(drop=True)
    pd.testing.assert_frame_equal(again.sort_values("name").reset_index(drop=True), ours)
    other = study.dutch_crows_rows(n_bootstrap=1000, seed=1)
    assert not np.array_equal(other.sort_values("name").ci_low.to_numpy(), ours.ci_low.to_numpy())


def test_the_committed_table_holds_done_rows_only_and_section_17s_numbers():
    """The table the sweep wrote from the kept records: no row without a value (the pending
    runs are counted above its Markdown), the released runs, and section 17's numbers of the
    embedded models, in 30 languages or more together."""
    committed = pd.read_csv(REPO / "paper/tables/real-models.csv")
    assert committed.value.notna().all()
    assert not committed.note.fillna("").str.contains("not run").any()
    embedded = committed.source.isin([facts["source"] for facts in study.EMBEDDED.values()])
    released = committed[~embedded]
    assert len(released) == 126 and released.hub_id.nunique() == 54
    assert committed[embedded].language.nunique() >= 30
    smol = committed[committed.hub_id == study.SMOLLM2_HUB_ID]
    gest = smol[smol.measure == "gest g_s"].sort_values("run")
    assert gest.value.round(3).tolist() == [1.004, 1.093] and gest.ci_low.iloc[0] < 1 < gest.ci_low.iloc[1]
    crows = smol[(smol.language == "en") & (smol.run == "crows-pairs")].iloc[0]
    assert [round(crows[c], 1) for c in ("value", "ci_low", "ci_high")] == [55.6, 53.2, 58.0]
    gemma = committed[committed.hub_id == study.GEMMA_HUB_ID]
    assert (gemma.measure == "eurogest g_s").sum() == 29


def test_section_15s_ranking_of_smollm2_holds_in_the_committed_table():
    committed = pd.read_csv(REPO / "paper/tables/real-models.csv")
    causal = committed[(committed.measure == "gest g_s") & committed.run.str.startswith("causal")]
    lowest = {run: part.sort_values("value").name.tolist()[:3] for run, part in causal.groupby("run")}
    assert lowest["causal template 1"][:2] == ["pythia-70m", study.SMOLLM2]
    assert lowest["causal template 2"] == ["phi-1", "pythia-160m", study.SMOLLM2]


def test_the_command_a_run_not_done_names_runs_that_run_and_no_other():
    """``polybias sweep configs/sweeps/default.yaml --only KEY``, the note of a full-set run not
    done, selects exactly that run of the sweep (not the runs whose keys extend KEY, such as
    its sample runs or another dataset's); the table's note (--only MODEL,...) selects every
    full-set run of those models."""
    default = "configs/sweeps/default.yaml"
    runs = read_sweep(REPO / default)
    full = [r for r in runs if study.embedded_full_run(r.parameters)]
    assert full
    for run in full:
        command = study.not_run_command(run.key, default).split()
        assert command[:3] == ["polybias", "sweep", default]
        options = sweep.parser().parse_args(command[2:])
        assert [r.key for r in sweep.select(runs, options.only)] == [run.key]
    models = sorted({r.parameters["model"] for r in full})
    selected = {r.key for r in sweep.select(runs, ",".join(models))}
    assert {r.key for r in full} <= selected


def test_the_advice_for_an_undeclared_model_or_notebook_is_the_fix(monkeypatch):
    """Declaring what the message asks for (a prefix in STEREOSET_HUB_IDS, a notebook in
    NOTEBOOK_MEASURES) is all it takes."""
    with pytest.raises(study.RealModelError, match="add its prefix to STEREOSET_HUB_IDS"):
        study.stereoset_hub_id("opt-125m_GPT2LM_en")
    monkeypatch.setitem(study.STEREOSET_HUB_IDS, "opt-125m", "facebook/opt-125m")
    assert study.stereoset_hub_id("opt-125m_GPT2LM_en") == "facebook/opt-125m"
    key = f"99_x__model-{SMOL}"
    with pytest.raises(study.RealModelError, match="add it to NOTEBOOK_MEASURES"):
        study.embedded_rows({key: None}, "s.yaml")
    monkeypatch.setitem(study.NOTEBOOK_MEASURES, "99_x", "crows")
    (row,) = study.embedded_rows({key: None}, "s.yaml").itertuples()
    assert row.run == key and row.note == f"not run: polybias sweep s.yaml --only {key}"
