"""Real models: the hub-id maps, the table builder and the rank agreement, by hand."""


import numpy as np
import pandas as pd
import pytest
from polybias.data import crowspairs
from polybias.data import stereoset as ss_data
from polybias.studies import real_models as study


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
    assert set(study.DUTCH_CROWS_HUB_IDS) == set(crowspairs.DUTCH_SCORE_MODELS)


def test_model_values_average_the_runs():
    t = pd.DataFrame({"measure": ["m", "m", "m"], "language": ["en"] * 3, "hub_id": ["x", "x", "y"],
                      "value": [1.0, 3.0, 5.0]})
    v = study.model_values(t)
    assert v.to_dict("records") == [{"key": "m (en)", "hub_id": "x", "value": 2.0, "runs": 2},
                                    {"key": "m (en)", "hub_id": "y", "value": 5.0, "runs": 1}]


def test_smollm2_rows_read_the_full_tables(tmp_path):
    crows = "Pairs: all.\n\n| bias_type | n | score | ci_low | ci_high |\n|---|---|---|---|---|\n" \
            "| all | 10 | 60.00 | 50.00 | 70.00 |\n| gender | 4 | 1 | 0 | 2 |\n"
    ss = "(not run)\n\n| language | task | n | lms | ss | ss_low | ss_high |\n|---|---|---|---|---|---|---|\n" \
         "| en | intrasentence | 7 | 90 | 55.5 | 51.0 | 60.0 |\n"
    langs = "| group | model | language | n | score | ci_low | ci_high |\n|---|---|---|---|---|---|---|\n" \
            "| g | m | ja | 5 | 40 | 30 | 50 |\n| g | m | ru | 5 | 45 | 35 | 55 |\n"
    for rel, _, _ in study.SMOLLM2_TABLES:
        f = tmp_path / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(ss if "stereoset" in rel else langs if "kaneko" in rel else crows)
    gest = ("| kind | runs |\n|---|---|\n| causal | 2 |\n\n| kind | model | template | n | g_s | g_s_low | g_s_high |\n"
            "|---|---|---|---|---|---|---|\n| causal | m | 1 | 9 | 1.2 | 1.1 | 1.3 |\n"
            "| causal | m | 2 | 9 | 1.0 | 0.9 | 1.1 |\n")
    (tmp_path / study.SMOLLM2_GEST_TABLE).write_text(gest)
    rows = study.smollm2_rows(tmp_path)
    assert rows[["language", "value", "ci_low", "ci_high", "n"]].values.tolist() == [
        ["en", 60.0, 50.0, 70.0, 10], ["en", 60.0, 50.0, 70.0, 10], ["en", 55.5, 51.0, 60.0, 7],
        ["ja", 40.0, 30.0, 50.0, 5], ["ru", 45.0, 35.0, 55.0, 5], ["en", 1.2, 1.1, 1.3, 9],
        ["en", 1.0, 0.9, 1.1, 9]]
    assert rows.run.tolist()[-2:] == ["causal template 0", "causal template 1"]
    assert (rows.hub_id == study.SMOLLM2_HUB_ID).all()
    (tmp_path / study.SMOLLM2_TABLES[0][0]).unlink()
    with pytest.raises(study.RealModelError, match="missing"):
        study.smollm2_rows(tmp_path)


@pytest.fixture(scope="module")
def table(mirror_or_local):
    with mirror_or_local():
        return study.real_model_table(n_bootstrap=1000, seed=0)  # as the paper


def test_every_real_run_is_in_the_table(table):
    counts = table.groupby("source").size().to_dict()
    assert counts == {"gest": 90, "stereoset-published": 35, "crows-pairs-dutch-published": 7,
                      "smollm2 (this project)": 7}
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
    assert len(table) == 139 and table.hub_id.nunique() == 55
    assert (gest.ci_low > 1).sum() == 88
    assert set(gest[gest.ci_low <= 1].name) == {"pythia-70m", "bert-base-multilingual-cased"}
    ss = table[table.source == "stereoset-published"]
    assert (ss.ci_low > 50).sum() == 25 and ss[ss.ci_high < 50].name.tolist() == [
        "flaubert_flaubert_base_cased_BertLM_BertNextSentence_fr"]
    dutch = table[table.source == "crows-pairs-dutch-published"].set_index("name")
    assert (dutch.drop("mbert").ci_low > 50).all() and dutch.loc["mbert", "ci_low"] < 50
    values = study.model_values(table)
    agreement = study.rank_agreement(values, n_bootstrap=0).set_index(["key_a", "key_b"])
    assert agreement.loc[("gest g_s (en)", "stereoset SS (en)"), "n"] == 3
    assert agreement.loc[("crows-pairs stereotype score (en)", "gest g_s (en)"), "models"] == \
        "HuggingFaceTB/SmolLM2-135M-Instruct, bert-base-uncased"
    assert agreement.n.max() == 3
    templates = study.rank_agreement(study.gest_template_values(table), n_bootstrap=200, seed=0)
    causal = templates[templates.key_a.str.contains("causal")].iloc[0]
    assert causal.n == 24 and round(causal.rho, 2) == 0.93
    masked = templates[templates.key_a.str.contains("masked")]
    assert (masked.n == 11).all() and round(masked.rho.min(), 2) == 0.74 and round(masked.rho.max(), 2) == 0.95
    assert (templates.ci_low > 0).all()
    smol = table[(table.hub_id == study.SMOLLM2_HUB_ID) & (table.measure == "gest g_s")]
    assert smol.value.round(3).tolist() == [1.004, 1.093] and smol.ci_low.iloc[0] < 1 < smol.ci_low.iloc[1]
    kaneko = table[(table.hub_id == study.SMOLLM2_HUB_ID) & table.language.isin(["ja", "ru"])]
    assert ((kaneko.ci_low < 50) & (kaneko.ci_high > 50)).all()
    english = table[(table.hub_id == study.SMOLLM2_HUB_ID) & (table.language == "en") & (table.measure != "gest g_s")]
    assert len(english) == 3 and (english.ci_low > 50).all()


def test_the_rows_are_the_same_under_a_seed(table):
    again = study.dutch_crows_rows(n_bootstrap=1000, seed=0).reset_index(drop=True)
    ours = table[table.source == "crows-pairs-dutch-published"].sort_values("name").reset_index(drop=True)
    pd.testing.assert_frame_equal(again.sort_values("name").reset_index(drop=True), ours)
    other = study.dutch_crows_rows(n_bootstrap=1000, seed=1)
    assert not np.array_equal(other.sort_values("name").ci_low.to_numpy(), ours.ci_low.to_numpy())
