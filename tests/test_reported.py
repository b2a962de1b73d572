"""The source studies' reported tables (``paper/reported/*.csv``): format and internal consistency.

Format: every CSV parses, names its study and table, and holds finite numbers. Consistency:
the cross-checks each paper allows (a total that is a weighted mean of its parts, a value
printed in two tables, a claim of the prose about a table). Where a source contradicts
itself the check is an expected failure (``xfail(strict=True)``) that names the cells, so
it fails loudly if the transcription changes.
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from polybias import paths
from polybias.results.report import load_reported

REPORTED = paths.paper_dir() / "reported"
CSVS = sorted(REPORTED.glob("*.csv"))
VALUE_COLUMNS = ("value", "effect_size")
NOT_KEYS = {*VALUE_COLUMNS, "pvalue", "note", "significant"}


def format_problems(frame: pd.DataFrame) -> list[str]:
    """What is wrong with one reported table (empty list when it is well formed)."""
    problems = []
    if frame.empty:
        return ["no rows"]
    for column in ("study", "table"):
        if column not in frame.columns:
            problems.append(f"no {column!r} column")
        elif frame[column].isna().any() or (frame[column].astype(str).str.strip() == "").any():
            problems.append(f"blank {column!r} in rows {list(frame.index[frame[column].isna()])}")
    value_columns = [c for c in VALUE_COLUMNS if c in frame.columns]
    if not value_columns:
        problems.append(f"no value column (one of {VALUE_COLUMNS})")
    for column in [*value_columns, *(["pvalue"] if "pvalue" in frame.columns else [])]:
        numbers = pd.to_numeric(frame[column], errors="coerce").to_numpy(dtype=float)
        bad = ~np.isfinite(numbers)
        if bad.any():
            problems.append(f"{column!r} not a finite number in rows {list(np.flatnonzero(bad))}: "
                            f"{frame[column][bad].tolist()[:5]}")
    pvalues = []
    if "pvalue" in frame.columns:
        pvalues.append(pd.to_numeric(frame["pvalue"], errors="coerce"))
    if "metric" in frame.columns and "value" in frame.columns:
        pvalues.append(pd.to_numeric(frame.loc[frame["metric"] == "pvalue", "value"], errors="coerce"))
    for p in pvalues:
        if ((p < 0) | (p > 1)).any():
            problems.append(f"p-values outside [0, 1]: {p[(p < 0) | (p > 1)].tolist()}")
    if "significant" in frame.columns and frame["significant"].dtype != bool:
        problems.append("'significant' is not true/false")
    keys = [c for c in frame.columns if c not in NOT_KEYS]
    duplicated = frame.duplicated(keys, keep=False)
    if duplicated.any():
        problems.append(f"rows {list(np.flatnonzero(duplicated))} repeat the same cell ({keys})")
    return problems


# ------------------------------------------------------------------------------ format


def test_reported_folder_is_not_empty():
    assert len(CSVS) >= 10, CSVS


@pytest.mark.parametrize("path", CSVS, ids=lambda p: p.stem)
def test_reported_csv_is_well_formed(path):
    frame = pd.read_csv(path)
    assert format_problems(frame) == [], path.name


def test_format_check_catches_bad_tables():
    good = pd.DataFrame({"study": ["S"] * 2, "table": ["Table 1"] * 2, "test": ["a", "b"],
                         "metric": ["effect_size", "pvalue"], "value": [1.5, 0.01]})
    assert format_problems(good) == []
    assert format_problems(good.iloc[:0]) == ["no rows"]
    assert any("'study'" in p for p in format_problems(good.drop(columns="study")))
    assert any("no value column" in p for p in format_problems(good.rename(columns={"value": "v"})))
    text = good.astype({"value": object})
    text.loc[0, "value"] = "<0.001"
    assert any("not a finite number" in p for p in format_problems(text))
    assert any("not a finite number" in p for p in format_problems(good.assign(value=[np.inf, 0.01])))
    assert any("outside [0, 1]" in p for p in format_problems(good.assign(value=[1.5, 2.0])))
    assert any("repeat the same cell" in p for p in format_problems(good.assign(test=["a", "a"],
                                                                               metric=["m", "m"])))


def test_readme_lists_every_reported_csv():
    text = (REPORTED / "README.md").read_text(encoding="utf-8")
    named = set(re.findall(r"`([a-z0-9_]+\.csv)`", text))
    # "`malik2022_table3.csv` … `malik2022_table6.csv`" names a range
    ranges = re.findall(r"`([a-z0-9]+)_table(\d)\.csv` … `\1_table(\d)\.csv`", text)
    for stem, lo, hi in ranges:
        named |= {f"{stem}_table{i}.csv" for i in range(int(lo), int(hi) + 1)}
    on_disk = {p.name for p in CSVS}
    assert on_disk - named == set(), "CSV files the README does not describe"
    assert named - on_disk == set(), "README names CSV files that do not exist"


# ------------------------------------------------------------------------------ seed 001


def test_gamboa_table3_all_is_count_weighted_mean():
    """Seed 001 Table 3: each % is a count out of n_pairs, and 'all' pools the two subsets."""
    frame = load_reported("gamboa2024_table3")
    checked = 0
    for model, rows in frame.groupby("model"):
        by = rows.set_index("bias_type")
        n_g, n_s, n_all = (int(by.loc[t, "n_pairs"]) for t in ("gender", "sexual-orientation", "all"))
        g, s, a = (float(by.loc[t, "value"]) for t in ("gender", "sexual-orientation", "all"))
        assert n_all == n_g + n_s, model
        # percentages printed to 2 decimals: 'all' = weighted mean within 0.005 + 0.005
        assert a == pytest.approx((n_g * g + n_s * s) / n_all, abs=0.01), model
        # stronger: each % is an integer count over its subset, and 'all' is their sum
        k_g, k_s = round(g * n_g / 100), round(s * n_s / 100)
        assert 100 * k_g / n_g == pytest.approx(g, abs=0.005 + 1e-9), model
        assert 100 * k_s / n_s == pytest.approx(s, abs=0.005 + 1e-9), model
        assert 100 * (k_g + k_s) / n_all == pytest.approx(a, abs=0.005 + 1e-9), model
        checked += 1
    assert checked == 7


def test_gamboa_table6_proportions_sum_to_100():
    """Seed 001 Table 6: ↑, ∘ and ↓ bias shares of a semantic field are a partition (three 2-dp roundings)."""
    frame = load_reported("gamboa2024_table6")
    sums = frame.groupby(["model", "rank"])["value"].agg(["sum", "size"])
    assert (sums["size"] == 3).all()
    assert np.allclose(sums["sum"], 100.0, atol=0.015 + 1e-9), sums[abs(sums["sum"] - 100) > 0.015]


# ------------------------------------------------------------------------------ seed 000


CEAT_KEYS = ["model", "category", "segment_length", "sample_set"]


def test_sadhu_table4_ceat_column_is_table5_generator_segment9_fixed():
    """Seed 000: Table 4 does not say which CEAT cell it shows; all nine equal one cell of Table 5.

    Table 5's significance (p < 0.005) must then imply Table 4's asterisk (p < 0.05).
    """
    t4 = load_reported("sadhu2024_table4", method="CEAT")
    t5 = load_reported("sadhu2024_table5", model="banglabert-large-generator",
                       segment_length="9", sample_set="fixed")
    both = t4.merge(t5, on="category", suffixes=("_4", "_5"))
    assert len(both) == 9
    assert (both["value_4"] == both["value_5"]).all(), both[["category", "value_4", "value_5"]]
    assert (both["significant_4"] | ~both["significant_5"]).all()


def test_sadhu_table5_and_table6_agree_in_sign_where_both_significant():
    """Seed 000 App. D.4: N = 5000 and N = 1000 pooling give the same direction of bias."""
    t5, t6 = load_reported("sadhu2024_table5"), load_reported("sadhu2024_table6")
    assert set(t5["n_samples"]) == {5000} and set(t6["n_samples"]) == {1000}
    both = t5.merge(t6, on=CEAT_KEYS, suffixes=("_5", "_6"))
    assert len(both) == len(t5) == len(t6) - 1  # one Table 5 cell is a bound, left out
    sig = both[both["significant_5"] & both["significant_6"]]
    assert len(sig) > len(both) / 2
    flipped = sig[np.sign(sig["value_5"]) != np.sign(sig["value_6"])]
    assert flipped.empty, flipped[[*CEAT_KEYS, "value_5", "value_6"]]


def test_sadhu_table6_has_more_insignificant_cells_than_table5():
    """Seed 000 Table 6 caption: with N = 1000 more cells are not significant than with N = 5000."""
    t5, t6 = load_reported("sadhu2024_table5"), load_reported("sadhu2024_table6")
    insignificant_5 = int((~t5["significant"]).sum()) + 1  # the left-out '<0.001*' cell
    assert int((~t6["significant"]).sum()) > insignificant_5


# ------------------------------------------------------------------------------ seed 002


LANGUAGES = ["english", "greek", "persian"]


def _cb(table: str, category: str, template_set: str | None = None) -> pd.Series:
    frame = load_reported("behnamghader2022_cb", table=table, category=category)
    if template_set is not None:
        frame = frame[frame["template_set"].astype(str) == template_set]
    return frame.set_index("language")["value"].reindex(LANGUAGES)


@pytest.mark.parametrize("category", [
    "gender",
    "religion",
    pytest.param("ethnicity", marks=pytest.mark.xfail(strict=True, raises=AssertionError, reason=(
        "seed 002 contradicts itself: Table 1(a) ethnicity (English 4.28, Greek 6.36, Persian 10.44) "
        "is not Table 2's ethnicity 'Aggregated' row (6.56, 57.67, 13.77)"))),
])
def test_behnamghader_table1a_equals_table2_aggregate(category):
    table1a = _cb("Table 1(a)", category)
    table2 = _cb("Table 2", category, "aggregated")
    assert table1a.notna().all() and table2.notna().all()
    assert table1a.tolist() == table2.tolist()


def test_behnamghader_table1a_ethnicity_is_mean_of_coarse_grained_sets():
    """The Table 1(a) ethnicity row matches Table 2's two coarse-grained template sets only."""
    coarse = (_cb("Table 2", "ethnicity", "0") + _cb("Table 2", "ethnicity", "1")) / 2
    all_sets = _cb("Table 2", "ethnicity", "aggregated")
    table1a = _cb("Table 1(a)", "ethnicity")
    assert np.allclose(table1a, coarse, atol=0.01), pd.DataFrame({"1(a)": table1a, "coarse": coarse})
    assert not np.allclose(table1a, all_sets, atol=0.01)


@pytest.mark.parametrize("category", ["gender", "religion", "ethnicity"])
def test_behnamghader_table2_aggregate_lies_within_its_template_sets(category):
    """A (weighted) mean over template sets cannot leave their range."""
    frame = load_reported("behnamghader2022_cb", table="Table 2", category=category)
    is_agg = frame["template_set"].astype(str) == "aggregated"
    parts = frame[~is_agg].groupby("language")["value"].agg(["min", "max"])
    agg = frame[is_agg].set_index("language")["value"]
    assert len(parts) == 3 and len(agg) == 3
    assert ((parts["min"] <= agg) & (agg <= parts["max"])).all(), pd.concat([parts, agg], axis=1)


def test_behnamghader_reddit_cb_order_matches_regular_gender_templates():
    """Seed 002 Sec. 4.2: Table 1(b) is consistent with Table 1(a) gender (Persian lowest, Greek highest)."""
    reddit = load_reported("behnamghader2022_table1", table="Table 1(b)").set_index("language")["value"]
    regular = _cb("Table 1(a)", "gender")
    for scores in (reddit, regular):
        assert scores.idxmin() == "persian" and scores.idxmax() == "greek", scores


def test_behnamghader_table3_template_sets_match_table2():
    kl = load_reported("behnamghader2022_table3").astype({"template_set": str})
    cb = load_reported("behnamghader2022_cb", table="Table 2")
    assert (kl["value"] > 0).all()  # a largest pairwise KL divergence
    pairs = kl.merge(cb, on=["category", "template_set", "language"], suffixes=("_kl", "_cb"))
    assert len(pairs) == len(kl) == 30
    assert (pairs["template_kl"] == pairs["template_cb"]).all()


def test_behnamghader_table4_is_a_top5_ranking():
    frame = load_reported("behnamghader2022_table4")
    assert frame["value"].between(0, 1, inclusive="neither").all()
    for (template, language), rows in frame.groupby(["template", "language"]):
        rows = rows.sort_values("rank")
        assert rows["rank"].tolist() == [1, 2, 3, 4, 5], (template, language)
        assert rows["value"].is_monotonic_decreasing, (template, language)
    assert frame.groupby(["template", "language"]).ngroups == 12


# ------------------------------------------------------------------------------ seed 003


def _malik(table: str, **filters) -> pd.DataFrame:
    return load_reported(table, **filters).set_index(["test_type", "test", "metric"])["value"]


TABLE2_DOCUMENTED = {
    # (test_type, Table 2 test, metric): the other tables' value, which Table 2 contradicts
    ("WEAT", "science, arts vs male, female", "pvalue"): 0.02,
    ("WEAT", "adjectives vs male, female", "effect_size"): 1.22,
}


def test_malik_table1_language_specific_equals_table2_glove():
    table1 = _malik("malik2022_table1", word_lists="language-specific")
    table2 = _malik("malik2022_table2", model="glove-hi-300")
    assert len(table1) == 24
    common = table1.index.intersection(table2.index)
    assert len(common) == len(table1)
    differ = [key for key in common if table1[key] != table2[key] and key not in TABLE2_DOCUMENTED]
    assert differ == [], [(key, table1[key], table2[key]) for key in differ]


@pytest.mark.xfail(strict=True, raises=AssertionError, reason=(
    "seed 003 contradicts itself: Table 2 prints WEAT science-arts p = 0.01, "
    "Table 1 (language-specific) prints 0.02"))
def test_malik_table2_science_arts_pvalue_equals_table1():
    key = ("WEAT", "science, arts vs male, female", "pvalue")
    assert _malik("malik2022_table2", model="glove-hi-300")[key] == _malik(
        "malik2022_table1", word_lists="language-specific")[key]


# Table 2 test → (debiasing table, its test name); the 'original' column repeats Table 2.
DEBIAS_TABLES = {
    "maths, arts vs male, female": ({"WEAT": "malik2022_table3", "SEAT": "malik2022_table4"}, "maths, arts"),
    "science, arts vs male, female": ({"WEAT": "malik2022_table3", "SEAT": "malik2022_table4"}, "science, arts"),
    "adjectives vs male, female": ({"WEAT": "malik2022_table3", "SEAT": "malik2022_table4"}, "adjectives"),
    "gendered verbs vs male, female": ({"WEAT": "malik2022_table3", "SEAT": "malik2022_table4"}, "gen. verbs"),
    "gendered adjectives vs male, female": ({"WEAT": "malik2022_table3", "SEAT": "malik2022_table4"}, "gen. adj"),
    "gendered entities vs male, female": ({"WEAT": "malik2022_table3", "SEAT": "malik2022_table4"},
                                          "gen. entities"),
    "gendered titles vs male, female": ({"WEAT": "malik2022_table3", "SEAT": "malik2022_table4"}, "gen. titles"),
    "occupations vs caste": ({"WEAT": "malik2022_table5", "SEAT": "malik2022_table5"}, "occupations"),
    "adjectives vs caste": ({"WEAT": "malik2022_table5", "SEAT": "malik2022_table5"}, "adjectives"),
    "adjectives vs religion terms": ({"WEAT": "malik2022_table6", "SEAT": "malik2022_table6"},
                                     "adjectives vs religion terms"),
    "adjectives vs lastnames": ({"WEAT": "malik2022_table6", "SEAT": "malik2022_table6"}, "adjectives vs lastnames"),
    "religious entities vs religion": ({"WEAT": "malik2022_table6", "SEAT": "malik2022_table6"},
                                       "religious entities vs religion"),
}


def _original_scores() -> dict[tuple[str, str, str], float]:
    """Table 2 key → the 'original' cell of Tables 3–6 (skips if those files are absent)."""
    out = {}
    for test2, (files, test) in DEBIAS_TABLES.items():
        for test_type, name in files.items():
            try:
                rows = load_reported(name, test_type=test_type, test=test, method="original")
            except FileNotFoundError as err:
                pytest.skip(f"{err}: paper/reported is part of the repository; restore it with "
                            "git checkout -- paper/reported")
            assert len(rows) == 1, (name, test_type, test)
            out[(test_type, test2, "effect_size")] = float(rows["effect_size"].iloc[0])
            out[(test_type, test2, "pvalue")] = float(rows["pvalue"].iloc[0])
    return out


def test_malik_table2_equals_original_column_of_debiasing_tables():
    table2 = _malik("malik2022_table2", model="glove-hi-300")
    original = _original_scores()
    assert len(original) == 48
    differ = [key for key in original if table2[key] != original[key] and key not in TABLE2_DOCUMENTED]
    assert differ == [], [(key, table2[key], original[key]) for key in differ]
    for key, theirs in TABLE2_DOCUMENTED.items():
        assert original[key] == theirs  # the other tables agree with each other


@pytest.mark.xfail(strict=True, raises=AssertionError, reason=(
    "seed 003 contradicts itself: Table 2 prints WEAT adjectives-vs-male/female effect size 1.21 "
    "and science-arts p = 0.01; Table 3 'original' prints 1.22 and 0.02"))
def test_malik_table2_documented_cells_equal_table3():
    table2 = _malik("malik2022_table2", model="glove-hi-300")
    original = _original_scores()
    assert all(table2[key] == original[key] for key in TABLE2_DOCUMENTED)


def test_malik_language_specific_lists_measure_more_bias_than_translated():
    """Seed 003 Sec. 3.1: the language-specific lists record more bias than the translated ones."""
    frame = load_reported("malik2022_table1", metric="effect_size")
    wide = frame.pivot_table(index=["test_type", "test"], columns="word_lists", values="value")
    assert len(wide) == 12
    assert (wide["language-specific"] > wide["translated"]).all(), wide


# ------------------------------------------------------------------------------ seed 004


def _sizes() -> pd.DataFrame:
    return load_reported("capstone2023_table1").pivot(index="characteristic", columns="stage", values="value")


def test_capstone_table1_sampling_shrinks_every_characteristic():
    sizes = _sizes()
    assert len(sizes) == 5
    assert (sizes["after_sampling"] < sizes["pre_sampling"]).all()
    assert (sizes["after_sampling"] >= 1).all()


@pytest.mark.parametrize("characteristic", [
    "Country", "Language", "Dishes",
    pytest.param("Religion", marks=pytest.mark.xfail(strict=True, raises=AssertionError, reason=(
        "seed 004 contradicts itself: Sec. 4.3 reduces the characteristics 10-fold, Table 1 Religion 17 -> 4"))),
    pytest.param("Music", marks=pytest.mark.xfail(strict=True, raises=AssertionError, reason=(
        "seed 004 contradicts itself: Sec. 4.3 reduces the characteristics 10-fold, Table 1 Music 19 -> 4"))),
])
def test_capstone_table1_is_a_tenfold_reduction(characteristic):
    row = _sizes().loc[characteristic]
    assert abs(row["after_sampling"] - row["pre_sampling"] / 10) < 1


def test_capstone_five_way_interaction_is_below_every_two_way_one():
    """Seed 004 abstract: interactions of more than two characteristics are negligible."""
    five = load_reported("capstone2023_table2", metric="cb_score")["value"]
    two = load_reported("capstone2023_interaction", metric="cb_score")["value"]
    assert len(five) == 1 and len(two) == 10
    assert float(five.iloc[0]) < two.min()


def test_seed000_keyed_tables_use_the_loader_test_names_and_table4_cells():
    from polybias.data import sadhu2024

    table4 = load_reported("sadhu2024_table4")
    for name, method in (("sadhu2024_bangla_seat", "SEAT"), ("sadhu2024_bangla_weat", "WEAT")):
        keyed = load_reported(name)
        assert set(keyed["test"]) == set(sadhu2024.CATEGORIES), name
        cells = table4[table4["method"] == method]
        for model, rows in keyed.groupby("model"):
            assert len(rows) == 9
            printed = cells.groupby("category")["value"].apply(set)
            assert all(v in printed[t] for t, v in zip(rows["test"], rows["effect_size"], strict=True)), model
