"""Section 14: Öztürk et al.'s results workbook recomputed; languages compared."""

import numpy as np
import pandas as pd
import pytest
from polybias.data import stereoset as ds
from polybias.metrics import stereoset as ms
from polybias.results import table as results
from polybias.runner import migrations
from polybias.studies import stereoset as st


@pytest.fixture(scope="module")
def recomputed(mirror_or_local):
    with mirror_or_local():  # the StereoSet files
        return st.recompute_published()


def test_every_workbook_row_is_recomputed_to_its_printed_precision(recomputed):
    book = ds.load_published_results()
    assert len(recomputed) == len(book) == 114
    assert recomputed.groupby("sheet").size().to_dict() == {"intrasentence": 35, "intersentence": 44,
                                                            "overall": 35}
    unequal = set(zip(recomputed.loc[~recomputed.equal, "sheet"], recomputed.loc[~recomputed.equal, "run"],
                      strict=True))
    assert unequal == set(st.UNREPRODUCED)
    for col in ds.RESULT_COLUMNS:
        ok = recomputed[recomputed.equal]
        assert (np.round(ok[f"{col} (ours)"], 2) == np.round(ok[col], 2)).all(), col
    assert (recomputed.loc[~recomputed.equal, "note"] != "").all()


def test_the_t5_overall_row_counts_the_german_intrasentence_items(recomputed):
    row = recomputed[(recomputed.sheet == "overall") & (recomputed.run == "t5-base_T5LM_ModelNSP_en")].iloc[0]
    assert row["Count (ours)"] == 4226 and row.equal
    assert "de file" in row["items"]


def test_published_table_prints_both_values_where_they_differ(recomputed):
    text = st.published_table(recomputed, "intrasentence")
    assert "| bert-base-cased_BertLM_BertNextSentence_en | 2106 | 83.10 | 58.74 | 68.58 |" in text
    assert "65.67 ≠ 65.29" in text
    assert text.count("| yes |") == 34 and text.count("| no |") == 1


def _decisions(pro_a, pro_b):
    out = {}
    for lang, pro in (("en", pro_a), ("de", pro_b)):
        n = len(pro)
        out[lang] = pd.DataFrame({"item_id": [f"i{i}" for i in range(n)], "task": "intrasentence",
                                  "bias_type": "gender", "score_stereotype": np.where(pro, 0.6, 0.4),
                                  "score_anti": 0.5})
    return out


def test_languages_compared_over_shared_items_with_mcnemar():
    from scipy.stats import binomtest

    pro_a = np.array([1, 1, 1, 1, 0, 0, 1, 0, 1, 1], bool)
    pro_b = np.array([0, 0, 0, 1, 0, 0, 1, 0, 1, 0], bool)
    cmp = st.compare_languages(_decisions(pro_a, pro_b), n_bootstrap=100, seed=0)
    per = cmp.per_language.set_index("language")
    assert per.loc["en", "score"] == 70.0 and per.loc["de", "score"] == 30.0
    paired = cmp.paired.iloc[0]
    assert (paired.a_only, paired.b_only, paired.n) == (4, 0, 10)
    assert paired["diff"] == 40.0
    assert paired.mcnemar_p == pytest.approx(binomtest(4, 4, 0.5).pvalue)
    with pytest.raises(ms.StereoSetMetricError, match="de: decisions lack score_anti"):
        st.compare_languages({"en": _decisions(pro_a, pro_b)["en"],
                              "de": _decisions(pro_a, pro_b)["de"].drop(columns="score_anti")})


def test_published_mbert_compared_across_five_languages(mirror):
    dec = st.published_decisions("bert-base-multilingual-cased_BertLM_BertNextSentence")
    assert sorted(dec) == sorted(ds.LANGUAGES)
    cmp = st.compare_languages(dec, n_bootstrap=0)
    assert len(cmp.paired) == 10
    en_de = cmp.paired[(cmp.paired.language_a == "de") | (cmp.paired.language_b == "de")]
    assert (en_de.n == 4226).all()
    en = cmp.per_language.set_index("language").loc["en"]
    # the micro SS over both tasks is the workbook's overall "SS Score" (55.17)
    assert round(en.score, 2) == 55.17


def test_language_scores_and_comparison_record(tmp_path, monkeypatch):
    import json

    pro_a = np.array([1, 1, 1, 1, 0, 0, 1, 0, 1, 1], bool)
    dec = {lang: d.assign(target="t", score_unrelated=0.0, pro=d.score_stereotype > d.score_anti,
                          ties=False, related=2)
           for lang, d in _decisions(pro_a, ~pro_a).items()}
    table = st.language_scores(dec, n_bootstrap=20, seed=0)
    assert table[["language", "task", "n"]].values.tolist() == [["en", "intrasentence", 10],
                                                                 ["de", "intrasentence", 10]]
    assert table.ss.tolist() == [70.0, 30.0] and (table.lms == 100.0).all()
    monkeypatch.setenv("POLYBIAS_OUTPUT_ROOT", str(tmp_path))
    comparison = st.compare_languages(dec, n_bootstrap=0)
    path = st.comparison_record(comparison, "m", ["en", "de"], {"seed": 0}, "results/x")
    record = json.loads(path.read_text())
    (difference,) = [g for g in record["values"]["groups"] if g["measure"] == "stereoset-difference"]
    assert record["metric"] == "stereoset-languages" and difference["extra"]["a_only"] == 7
    assert record["values"]["language"] == "en" and difference["subset"] == "en − de"
    # the shape written before the one record shape reads the same rows, and migrates to this record
    old = {**record, "values": {k: f.astype(object).where(f.notna(), None).to_dict("records")
                                for k, f in (("per_language", comparison.per_language),
                                             ("paired", comparison.paired))}}
    assert migrations.stereoset_languages_measure_records(old) == record
    assert results.record_rows(old, "s") == results.record_rows(record, "s")


def test_bias_type_scores_per_language():
    pro = np.array([1, 1, 1, 1, 0, 0, 1, 0, 1, 1], bool)
    dec = {lang: d.assign(target="t", score_unrelated=0.0, pro=d.score_stereotype > d.score_anti, ties=False,
                          related=2, bias_type=["gender"] * 4 + ["race"] * 6)
           for lang, d in _decisions(pro, pro).items()}
    table = st.bias_type_scores(dec, n_bootstrap=0)
    assert table[["language", "bias_type", "n"]].values.tolist() == [
        ["en", "gender", 4], ["en", "race", 6], ["de", "gender", 4], ["de", "race", 6]]
    assert table.ss.tolist() == [100.0, 50.0, 100.0, 50.0]


def test_the_unreproduced_german_mbert_rows_are_sixteen_comparisons_apart(recomputed):
    rows = recomputed[recomputed.run == "bert-base-multilingual-cased_BertLM_BertNextSentence_de"].set_index("sheet")
    # LM score = 100 · related / (2 n): the published and recomputed values differ by 16 comparisons
    for sheet, n in (("intrasentence", 2103), ("overall", 4226)):
        gap = (rows.loc[sheet, "LM Score"] - rows.loc[sheet, "LM Score (ours)"]) * 2 * n / 100
        assert round(gap) == 16 and abs(gap - 16) < 2 * n / 100 * 0.005
    assert rows.loc["intersentence", "equal"]


def test_sample_items_keeps_every_candidate_of_a_stratified_seeded_sample():
    rows = []
    for task, n in (("intrasentence", 20), ("intersentence", 10)):
        for i in range(n):
            bias = ("gender", "race", "profession", "religion")[i % 4]
            rows += [{"task": task, "item_id": f"{task}-{i}", "bias_type": bias, "candidate_id": c}
                     for c in range(3)]
    items = pd.DataFrame(rows)
    sample = st.sample_items(items, 8, seed=0)
    per_task = sample.drop_duplicates("item_id").groupby("task").size().to_dict()
    assert per_task == {"intersentence": 8, "intrasentence": 8}
    assert (sample.groupby("item_id").size() == 3).all()
    intra = sample[sample.task == "intrasentence"].drop_duplicates("item_id")
    assert intra.bias_type.value_counts().to_dict() == {"gender": 2, "profession": 2, "race": 2,
                                                         "religion": 2}
    assert st.sample_items(items, 8, seed=0).equals(sample)
    assert st.sample_items(items, 0, seed=0).equals(items)
    assert st.sample_caption(0, 0) == ""
