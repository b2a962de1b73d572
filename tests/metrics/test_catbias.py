"""Categorical Bias family: hand-computed values, reproductions from shipped data, planted answers."""

from __future__ import annotations

import os

import numpy as np
import pandas as pd
import pytest
from polybias.data import behnamghader2022, templating
from polybias.engines import scoring
from polybias.metrics import catbias, logprob
from polybias.metrics.catbias import CatBiasError
from polybias.planted import probes
from polybias.results import report
from polybias.studies import categorical_bias

os.environ.setdefault("HF_HUB_OFFLINE", "1")
pytestmark = pytest.mark.usefixtures("torch_one_thread")


# ---------------------------------------------------------------- hand-computable

def test_cb_is_mean_of_population_variances_with_ddof_option():
    log_p = np.log(np.array([[[0.6, 0.3, 0.1], [0.2, 0.2, 0.6]],
                             [[0.5, 0.25, 0.25], [0.1, 0.1, 0.8]]]))  # (T=2, A=2, N=3)
    expected0 = np.mean([np.var(r) for r in log_p.reshape(4, 3)])
    expected1 = np.mean([np.var(r, ddof=1) for r in log_p.reshape(4, 3)])
    assert catbias.categorical_bias(log_p) == pytest.approx(expected0)
    assert catbias.categorical_bias(log_p, ddof=1) == pytest.approx(expected1)
    assert catbias.categorical_bias(log_p, ddof=1) == pytest.approx(expected0 * 3 / 2)
    # two groups, probabilities 0.9 / 0.1: variance (log 9 / 2)^2
    assert catbias.categorical_bias(np.log([[0.9, 0.1]])) == pytest.approx((np.log(9) / 2) ** 2)


def test_prior_normalisation_removes_group_frequency():
    # group y is 10x rarer everywhere: no bias once divided by the prior
    fill = np.log([[0.5, 0.05], [0.2, 0.02]])
    prior = np.log([[0.4, 0.04]])
    assert catbias.categorical_bias(fill) > 1.0
    assert catbias.categorical_bias(fill, prior) == pytest.approx(0.0, abs=1e-12)


def test_variants_are_averaged_in_probability_space_and_rows_weighted_by_priors():
    rows = []
    # set s1: 1 attribute, two templates whose probabilities average to (0.3, 0.1)
    for tpl, px, py in (("t1", 0.2, 0.1), ("t2", 0.4, 0.1)):
        rows += [("s1", tpl, "a", "x", 0, np.log(px)), ("s1", tpl, "a", "y", 0, np.log(py))]
    # set s2: 3 attributes, no bias
    for a in ("b", "c", "d"):
        rows += [("s2", "t3", a, "x", 0, np.log(0.5)), ("s2", "t3", a, "y", 0, np.log(0.5))]
    scores = pd.DataFrame(rows, columns=["set", "template", "attribute", "target", "variant", "pll"])
    result = catbias.pll_cb(scores)
    s1 = (np.log(0.3 / 0.1) / 2) ** 2  # population variance of (log .3, log .1)
    per_set = catbias.aggregate(result.rows, by="set").set_index("set")["cb"]
    assert per_set["s1"] == pytest.approx(s1) and per_set["s2"] == pytest.approx(0.0)
    # aggregate = mean over (set, attribute) rows = s1 weighted 1, s2 weighted 3
    assert result.score == pytest.approx(s1 / 4)
    assert catbias.aggregate(per_set.rename("cb").reset_index().assign(n=[1, 3]), weights="n") == \
        pytest.approx(s1 / 4)
    # averaging log-probabilities instead would give a different (wrong) value
    assert result.score != pytest.approx(((np.log(np.sqrt(0.08)) - np.log(0.1)) / 2) ** 2 / 4)


def test_kl_matrix_direction_and_scaling():
    p, q = np.array([0.5, 0.5]), np.array([0.9, 0.1])
    m = catbias.kl_matrix(np.log([p, q]), ["p", "q"])
    assert m.loc["p", "q"] == pytest.approx(np.sum(p * np.log(p / q)))
    assert m.loc["q", "p"] == pytest.approx(np.sum(q * np.log(q / p)))
    assert catbias.max_kl(m) == ("p", "q", pytest.approx(np.sum(p * np.log(p / q))))
    mean = catbias.kl_matrix(np.log([p, q]), ["p", "q"], scale="mean")
    assert mean.loc["p", "q"] == pytest.approx(m.loc["p", "q"] / 2)


def test_normalised_probability_and_top_k():
    scores = pd.DataFrame({"template": "t", "attribute": "rude", "target": ["a", "b", "c"],
                           "corrected": np.log([2.0, 1.0, 1.0])})
    p = catbias.normalized_word_probability(scores)
    assert p.p_norm.tolist() == pytest.approx([0.5, 0.25, 0.25])
    top = catbias.top_k_groups(p, k=2)
    assert top.target.tolist() == ["a", "b"] and top["rank"].tolist() == [1, 2]


def test_bad_inputs():
    with pytest.raises(CatBiasError, match="at least two groups"):
        catbias.categorical_bias(np.array([[0.0]]))
    with pytest.raises(CatBiasError, match="finite"):
        catbias.categorical_bias(np.array([[-np.inf, 0.0]]))
    with pytest.raises(CatBiasError, match="ddof=2"):
        catbias.categorical_bias(np.log([[0.5, 0.5]]), ddof=2)
    incomplete = pd.DataFrame({"template": "t", "attribute": ["a", "a", "b"], "target": ["x", "y", "x"],
                               "lp": [0.0, -1.0, -2.0]})
    with pytest.raises(CatBiasError, match="without a score for every group"):
        catbias.cb_rows(incomplete, "lp")
    with pytest.raises(CatBiasError, match="scale must be"):
        catbias.kl_matrix(np.zeros((2, 2)), ["a", "b"], scale="max")
    with pytest.raises(CatBiasError, match="top-k|k must be"):
        catbias.top_k_groups(pd.DataFrame(columns=["template", "attribute", "target", "p_norm"]), k=0)


# ---------------------------------------------------------------- reproductions (mirror)

def seed002_notebook_values():
    rep = report.load_reported("behnamghader2022_cb")
    nb = rep[rep.table.str.startswith("main.ipynb") & (rep.template_set != "aggregated")].copy()
    nb["template_set"] = nb.template_set.astype(int)
    return rep, nb.rename(columns={"value": "cb"})


def test_seed002_aggregate_is_the_prior_count_weighted_mean(mirror):
    counts = behnamghader2022.prior_counts()
    rep, per_set = seed002_notebook_values()
    agg = catbias.seed002_aggregate(per_set, counts).set_index(["category", "language"])["cb"]
    assert agg["gender", "english"] == pytest.approx(0.6271, abs=5e-5)  # seed 002 aggregate (0.63 in its Table 2)
    nb_agg = rep[rep.table.str.startswith("main.ipynb") & (rep.template_set == "aggregated")]
    for r in nb_agg.itertuples():
        assert agg[r.category, r.language] == pytest.approx(r.value, abs=1e-4)
    table2 = rep[(rep.table == "Table 2") & (rep.template_set == "aggregated")]
    for r in table2.itertuples():
        # within one unit of the last printed digit: English ethnicity 6.5674 is printed 6.56
        assert agg[r.category, r.language] == pytest.approx(r.value, abs=0.0101)
    # an unweighted mean of the set values would not reproduce them
    plain = per_set.groupby(["category", "language"]).cb.mean()
    assert abs(plain["gender", "english"] - 0.6271) > 0.01


def test_seed002_table1a_ethnicity_contradicts_table2(mirror):
    counts = behnamghader2022.prior_counts()
    rep, per_set = seed002_notebook_values()
    t1 = rep[rep.table == "Table 1(a)"].set_index(["category", "language"]).value
    t2 = rep[(rep.table == "Table 2") & (rep.template_set == "aggregated")].set_index(["category", "language"]).value
    for cat in ("gender", "religion"):
        assert (t1[cat] == t2[cat]).all()
    assert (t1["ethnicity"] != t2["ethnicity"]).all()
    # Table 1(a) ethnicity is the aggregate of the two coarse-grained sets only
    coarse = catbias.seed002_aggregate(per_set, counts, sets=[0, 1]).set_index(["category", "language"]).cb
    for lang in ("english", "greek", "persian"):
        assert round(coarse["ethnicity", lang], 2) == pytest.approx(t1["ethnicity", lang], abs=0.006)


def test_reported_transcription_matches_the_shipped_notebook_output(mirror):
    derived = os.path.join("ParishadBehnam+Social-Biases-in-BERT-Variants-Across-Multiple-Languages",
                           "_derived", "categorical_bias_from_main_ipynb_cell25.csv")
    if mirror is None:  # a file of the mirror only, not a registered source
        pytest.skip(f"offline: set POLYBIAS_DATA_MIRROR to a folder laid out <owner>+<repo>/<path> "
                    f"holding {derived} (the seed-002 notebook's output, a file of the data mirror)")
    shipped = pd.read_csv(os.path.join(mirror, derived))
    shipped["category"] = shipped.category.replace({"race": "ethnicity"})
    rep = report.load_reported("behnamghader2022_cb")
    nb = rep[rep.table.str.startswith("main.ipynb")]
    merged = nb.merge(shipped, left_on=["category", "template_set", "language"],
                      right_on=["category", "template_set_index", "language"])
    assert len(merged) == len(nb) == len(shipped)
    assert merged.value.to_numpy() == pytest.approx(merged.CB.to_numpy(), abs=1e-9)


# ---------------------------------------------------------------- planted MLM

def test_cb_scores_on_planted_and_control(planted_lm):
    book = probes.planted_templates("en")
    names = list(book.templates)
    tg = logprob.group_members(book, "targets")
    ag = logprob.group_members(book, "attributes")
    strong = categorical_bias.ahn_oh_cb(planted_lm[0.9], book, names)
    control = categorical_bias.ahn_oh_cb(planted_lm[0.5], book, names)
    assert strong.score > 20 * control.score and control.score < 0.01
    # direction: male targets take most of the normalised probability next to career words
    p = catbias.normalized_word_probability(strong.scores)
    share = (p.assign(male=p.target.isin(tg["male"])).groupby(["template", "attribute", "male"]).p_norm.sum()
             .groupby(["attribute", "male"]).mean().unstack())
    assert share.loc[ag["career"], True].mean() > 0.7 and share.loc[ag["family"], True].mean() < 0.3
    pll_strong = catbias.pll_cb(categorical_bias.pll_scores(planted_lm[0.9], book, names))
    pll_control = catbias.pll_cb(categorical_bias.pll_scores(planted_lm[0.5], book, names))
    assert pll_strong.score > 20 * pll_control.score
    kl = catbias.max_kl(categorical_bias.distribution_difference(planted_lm[0.9], book, names[0], ["man", "woman"]))
    kl0 = catbias.max_kl(categorical_bias.distribution_difference(planted_lm[0.5], book, names[0], ["man", "woman"]))
    assert kl[2] > 10 * kl0[2]


def test_greek_templates_score_declined_sentences_on_a_tiny_model():
    from polybias.planted import tiny_models

    model, tok = tiny_models.build_tiny_model("roberta")  # byte-level BPE: any script
    lm = scoring.wrap_language_model(model, tok, name="tiny-roberta")
    book = templating.load_templates("catbias_el")
    scores = categorical_bias.pll_scores(lm, book, "el_gender_are", attributes=["violent", "savage"])
    assert set(scores.text) == {"Οι άντρες είναι βίαιοι.", "Οι γυναίκες είναι βίαιες.",
                                "Οι άντρες είναι άγριοι.", "Οι άντρες είναι βάρβαροι.",
                                "Οι γυναίκες είναι άγριες.", "Οι γυναίκες είναι βάρβαρες."}
    assert np.isfinite(scores.pll).all()
    result = catbias.pll_cb(scores)
    assert len(result.rows) == 2 and result.score >= 0


def test_seed002_reproduction_table(mirror):
    counts = behnamghader2022.prior_counts()
    rep, per_set = seed002_notebook_values()
    table = catbias.seed002_reproduction(per_set, counts, rep).set_index(["category", "language"])
    assert table.loc[("gender", "english"), ["notebook", "table2", "table1a"]].tolist() == [0.6271, 0.63, 0.63]
    assert table.loc[("ethnicity", "greek"), "table1a"] == 6.36
    assert table.loc[("ethnicity", "greek"), "table2"] == 57.67
    assert (table.reproduced - table.notebook).abs().max() < 1.5e-4


def test_group_shares_sum_member_probabilities():
    book = probes.planted_templates("en")
    tg = logprob.group_members(book, "targets")
    rows = [{"template": "t", "attribute": "office", "target": w, "corrected": 0.0}
            for w in tg["male"] + tg["female"]]
    rows[0]["corrected"] = np.log(9.0)  # the first male target is 9x more likely than the others
    p = catbias.normalized_word_probability(pd.DataFrame(rows))
    shares = catbias.group_shares(p, book, "targets", "attributes").set_index("target_group").share
    n = len(rows)
    assert shares["male"] == pytest.approx((9 + len(tg["male"]) - 1) / (9 + n - 1))
    assert shares.sum() == pytest.approx(1.0)
    with pytest.raises(CatBiasError, match="no feature 'colour'"):
        catbias.group_shares(p, book, "targets", "attributes", feature="colour")


# ---------------------------------------------------------------- cultural interaction bias


def test_sentiment_weights_and_unknown_words():
    w = catbias.sentiment_weights(["happy", "sad", "chair"])
    assert set(w.weights) == {"happy", "sad"} and w.dropped == ("chair",)
    assert 0 < w.weights["sad"] <= 1 and w.compound["sad"] < 0 < w.compound["happy"]
    # compound = v / sqrt(v^2 + 15) of the lexicon valence
    from vaderSentiment.vaderSentiment import SentimentIntensityAnalyzer

    v = SentimentIntensityAnalyzer().lexicon["happy"]
    assert w.weights["happy"] == pytest.approx(v / np.sqrt(v * v + 15), abs=1e-4)
    with pytest.raises(CatBiasError, match="does not know.*chair"):
        catbias.sentiment_weights(["happy", "chair"], on_unknown="raise")
    with pytest.raises(CatBiasError, match="empty or non-text"):
        catbias.sentiment_weights(["happy", ""])


def test_stratified_sampler_sizes_and_seed():
    items = [f"w{i}" for i in range(40)]
    strata = ["neg"] * 20 + ["neu"] * 12 + ["pos"] * 8
    a = catbias.stratified_sample(items, strata, 10, seed=3)
    counts = pd.Series([strata[items.index(x)] for x in a]).value_counts().to_dict()
    assert counts == {"neg": 5, "neu": 3, "pos": 2}  # 10 * (20, 12, 8) / 40
    assert a == catbias.stratified_sample(items, strata, 10, seed=3)
    assert a != catbias.stratified_sample(items, strata, 10, seed=4)
    # largest remainders and minimums: 7 of (20, 12, 8) -> quotas 3.5, 2.1, 1.4 -> 4, 2, 1
    b = catbias.stratified_sample(items, strata, 7, seed=0)
    assert pd.Series([strata[items.index(x)] for x in b]).value_counts().to_dict() == {"neg": 4, "neu": 2, "pos": 1}
    tiny = ["a", "b", "c", "d", "e"]
    c = catbias.stratified_sample(tiny, ["x", "x", "x", "x", "y"], 2, min_per_stratum=1)
    assert "e" in c and len(c) == 2
    with pytest.raises(CatBiasError, match="n must be between 1 and 5"):
        catbias.stratified_sample(tiny, ["x"] * 5, 6)
    with pytest.raises(CatBiasError, match="5 items but 4"):
        catbias.stratified_sample(tiny, ["x"] * 4, 2)
    with pytest.raises(CatBiasError, match="per stratum"):
        catbias.stratified_sample(tiny, ["x", "y", "z", "u", "v"], 2, min_per_stratum=1)
    assert catbias.sentiment_strata({"a": -0.4, "b": 0.0, "c": 0.3}) == {"a": "negative", "b": "neutral",
                                                                         "c": "positive"}


def test_interaction_cb_k1_is_ahn_oh_and_k2_shows_the_planted_bias(planted_lm):
    book = probes.planted_templates("en")
    one = categorical_bias.interaction_cb(planted_lm[0.9], book, "planted_en_0", ["target"], "attribute")
    ahn = categorical_bias.ahn_oh_cb(planted_lm[0.9], book, "planted_en_0")
    assert one.score == pytest.approx(ahn.score, rel=1e-9)
    pairs = probes.planted_interaction_templates("en")
    targets = {"target": ["man", "father", "woman", "mother"]}
    attrs = ["office", "salary", "home", "children"]
    strong = categorical_bias.interaction_cb(planted_lm[0.9], pairs, "said", ["pro", "target"], "attribute",
                                    attributes=attrs, identities=targets)
    control = categorical_bias.interaction_cb(planted_lm[0.5], pairs, "said", ["pro", "target"], "attribute",
                                     attributes=attrs, identities=targets)
    assert strong.rows.n_groups.iloc[0] == 4 * 4
    assert strong.score > 10 * control.score
    # equal weights change nothing; weighting one attribute only gives its own variance
    same = categorical_bias.interaction_cb(planted_lm[0.9], pairs, "said", ["pro", "target"], "attribute",
                                  attributes=attrs, identities=targets, weights=dict.fromkeys(attrs, 0.5))
    assert same.score == pytest.approx(strong.score)
    only = categorical_bias.interaction_cb(planted_lm[0.9], pairs, "said", ["pro", "target"], "attribute",
                                  attributes=attrs, identities=targets,
                                  weights={"office": 1.0, "salary": 0.0, "home": 0.0, "children": 0.0})
    assert only.score == pytest.approx(strong.rows.set_index("attribute").cb["office"])
    # neutral base rate: neutral "attributes" from the list itself (here: two family words)
    neutral = categorical_bias.interaction_cb(planted_lm[0.9], pairs, "said", ["pro", "target"], "attribute",
                                     attributes=["office", "salary"], identities=targets, base="neutral",
                                     neutral_attributes=["home", "children"])
    assert neutral.score > strong.rows.set_index("attribute").cb[["office", "salary"]].mean()
    with pytest.raises(CatBiasError, match="needs neutral_attributes"):
        categorical_bias.interaction_cb(planted_lm[0.9], pairs, "said", ["pro", "target"], "attribute", base="neutral")
    with pytest.raises(CatBiasError, match="has no slot"):
        categorical_bias.interaction_cb(planted_lm[0.9], pairs, "said", ["country"], "attribute")


