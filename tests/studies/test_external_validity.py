"""External validity (``polybias.studies.external_validity``): intervals by hand, the census join lists what
it leaves out, the language-model paths on tiny random models, and Garg et al.'s
published r² reproduced on the embedded word2vec from the mirrored census data."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from polybias.data import templating
from polybias.engines import static
from polybias.studies import external_validity
from scipy import stats

# ---------------------------------------------------------------- correlation intervals


def test_pearson_fisher_interval_by_hand():
    # r = 0.8 (x = 1..5, y = 2 1 4 3 5); se = 1/sqrt(2); atanh(0.8) = 1.098612
    c = external_validity.correlation_with_interval([1, 2, 3, 4, 5], [2, 1, 4, 3, 5], "pearson")
    assert c.estimate == pytest.approx(0.8)
    assert c.low == pytest.approx(np.tanh(1.098612 - 1.959964 / np.sqrt(2)), abs=1e-6)
    assert c.high == pytest.approx(np.tanh(1.098612 + 1.959964 / np.sqrt(2)), abs=1e-6)
    assert (round(c.low, 3), round(c.high, 3)) == (-0.280, 0.986)
    assert c.n == 5 and c.interval == "Fisher z"


def test_spearman_bonett_wright_interval_by_hand():
    # ranks differ by 0 1 1 0 1 1: rho = 1 - 6 * 4 / (6 * 35) = 0.885714;
    # se = sqrt((1 + rho^2 / 2) / 3)
    x, y = [1, 2, 3, 4, 5, 6], [1, 3, 2, 4, 6, 5]
    c = external_validity.correlation_with_interval(x, y, "spearman", confidence=0.90)
    rho = 1 - 24 / 210
    se = np.sqrt((1 + rho**2 / 2) / 3)
    assert c.estimate == pytest.approx(rho)
    assert c.low == pytest.approx(np.tanh(np.arctanh(rho) - 1.644854 * se), abs=1e-6)
    assert c.high == pytest.approx(np.tanh(np.arctanh(rho) + 1.644854 * se), abs=1e-6)
    assert c.pvalue == pytest.approx(stats.spearmanr(x, y)[1])


def test_perfect_correlation_and_bad_inputs():
    c = external_validity.correlation_with_interval([1, 2, 3, 4], [2, 4, 6, 8])
    assert (c.estimate, c.low, c.high) == pytest.approx((1.0, 1.0, 1.0))
    for args, message in [(([1, 2, 3], [1, 2, 3]), "needs n >= 4"),
                          (([1, 2, 3, 4], [1, 1, 1, 1]), "constant"),
                          (([1, 2, 3, 4], [1, 2, 3]), "same length"),
                          (([1, 2, 3, np.nan], [1, 2, 3, 4]), "finite")]:
        with pytest.raises(external_validity.ExternalValidityError, match=message):
            external_validity.correlation_with_interval(*args)
    with pytest.raises(external_validity.ExternalValidityError, match="method must be one of"):
        external_validity.correlation_with_interval([1, 2, 3, 4], [1, 2, 4, 3], "kendall")


# ---------------------------------------------------------------- census join and table

SHARES = pd.DataFrame({"year": [2015] * 4 + [2010] * 2,
                       "occupation": ["nurse", "carpenter", "teacher", "pilot", "nurse", "pilot"],
                       "women": [0.9, 0.0, 0.75, 0.05, 0.92, 0.03]})


def test_join_lists_every_occupation_it_leaves_out():
    scores = pd.DataFrame({"occupation": ["nurse", "carpenter", "wizard", "teacher"], "s": [1.0, -2.0, 0.0, 0.5]})
    joined, left = external_validity.join_census(scores, SHARES[SHARES.year == 2015])
    assert joined["occupation"].tolist() == ["nurse", "carpenter", "teacher"] and left == ["wizard"]
    joined, left = external_validity.join_census(scores, SHARES[SHARES.year == 2015], "logit")
    assert left == ["carpenter", "wizard"]  # a share of 0 has no logit
    assert joined["outcome"].tolist() == pytest.approx([np.log(9), np.log(3)])
    with pytest.raises(external_validity.ExternalValidityError, match="several census years"):
        external_validity.join_census(scores, SHARES)


def test_planted_linear_share_correlates_perfectly():
    shares = pd.DataFrame({"year": 2015, "occupation": [f"o{i}" for i in range(10)],
                           "women": np.linspace(0.05, 0.95, 10)})
    scores = pd.DataFrame({"occupation": [f"o{i}" for i in range(11)],
                           "planted": np.r_[3 * shares["women"] - 1, 0.0],
                           "reversed": np.r_[-shares["women"], np.nan]})
    table = external_validity.external_validity_table(scores, shares, ["planted", "reversed"], [2015], ("share", "logit"))
    planted = table[(table.measure == "planted") & (table.outcome == "share")].iloc[0]
    assert planted["pearson"] == pytest.approx(1.0) and planted["spearman"] == pytest.approx(1.0)
    assert planted["n"] == 10 and planted["no_census"] == "o10"
    reversed_ = table[table.measure == "reversed"]
    assert reversed_["spearman"].tolist() == pytest.approx([-1.0, -1.0]) and (reversed_["no_census"] == "").all()
    logit = table[(table.measure == "planted") & (table.outcome == "logit")].iloc[0]
    assert 0.95 < logit["pearson"] < 1.0 and logit["spearman"] == pytest.approx(1.0)
    with pytest.raises(external_validity.ExternalValidityError, match="no census shares for year 1999"):
        external_validity.external_validity_table(scores, shares, ["planted"], [1999])


def test_published_values_beside_ours():
    ours = pd.DataFrame({"measure": ["rnd", "w"], "year": [2015, 2015], "outcome": ["share", "share"], "n": [60, 60],
                         "pearson": [0.7, 0.6], "pearson_low": [0.5, 0.4], "pearson_high": [0.8, 0.7]})
    published = pd.DataFrame({"study": ["G", "C"], "model": ["m1", "m2"], "measure": ["rnd", "wefat"],
                              "outcome": ["relative_percentage", "share"], "census_year": [2015, 2015],
                              "n_occupations": [np.nan, 50], "metric": ["r_squared", "pearson"],
                              "value": [0.49, 0.9]})
    table = external_validity.published_comparison(ours, published, "mine", measure_of={"wefat": "w"})
    assert table["published_r"].tolist() == pytest.approx([0.7, 0.9])
    assert table["published"].tolist() == ["r² = 0.490", "r = 0.90"]
    assert table["ours"].tolist() == ["r² = 0.490", "r = 0.60"]
    assert table["published_n"].tolist() == ["—", "50"]


# ---------------------------------------------------------------- static embedding


def test_static_scores_and_missing_words():
    words = ["she", "he", "nurse", "pilot"]
    vectors = np.array([[1.0, 0.0], [0.0, 1.0], [0.9, 0.1], [0.2, 0.8]])
    emb = static.StaticEmbeddings("toy", words, vectors)
    scores, missing = external_validity.static_occupation_bias(emb, ["nurse", "wizard", "pilot"], ["she", "her"], ["he"])
    assert scores["occupation"].tolist() == ["nurse", "pilot"]
    assert missing == {"occupations": ["wizard"], "women": ["her"], "men": []}
    assert (scores.set_index("occupation").loc["nurse"] > 0).all()
    assert (scores.set_index("occupation").loc["pilot"] < 0).all()
    with pytest.raises(external_validity.ExternalValidityError, match="no men's word is in toy"):
        external_validity.static_occupation_bias(emb, ["nurse"], ["she"], ["him"])


# ---------------------------------------------------------------- language models (tiny, random)


def test_template_book_agrees_the_article():
    book = external_validity.occupation_template_book(["nurse", "accountant"], ["she", "woman"], ["he", "man"])
    texts = sorted(f.text for f in templating.expand(book, "occupation"))
    assert len(texts) == 8
    assert "woman is an accountant ." in texts and "he is a nurse ." in texts
    with pytest.raises(external_validity.ExternalValidityError, match="both gender groups"):
        external_validity.occupation_template_book(["nurse"], ["she"], ["she"])


def test_logprob_bias_is_women_minus_men_on_a_tiny_bert(torch_one_thread):
    """Cost: one tiny random BERT, 3 occupations x 4 targets (about 4 s on a free core)."""
    from polybias.engines import scoring
    from polybias.engines.template_scores import kurita_scores
    from polybias.planted import tiny_models

    lm = scoring.wrap_language_model(*tiny_models.build_tiny_model("bert"), name="tiny-bert")
    occupations = ["doctor", "nurse", "engineer"]
    got = external_validity.logprob_occupation_bias(lm, occupations, ["she", "woman"], ["he", "man"])
    assert got["occupation"].tolist() == occupations and np.isfinite(got["logprob_bias"]).all()
    book = external_validity.occupation_template_book(occupations, ["she", "woman"], ["he", "man"])
    rows = kurita_scores(lm, book, "occupation")
    assert set(rows["text"]) >= {"she is a doctor .", "man is an engineer ."}
    per = rows.groupby(["attribute", "target"])["corrected"].mean()
    for o in occupations:
        expected = (per[o, "she"] + per[o, "woman"]) / 2 - (per[o, "he"] + per[o, "man"]) / 2
        assert got.set_index("occupation").loc[o, "logprob_bias"] == pytest.approx(expected)


def test_encoder_wefat_on_a_tiny_encoder(torch_one_thread):
    """Cost: one tiny random BERT encoder, 9 sentences (under 1 s)."""
    from polybias.engines import embeddings
    from polybias.metrics.wefat import wefat_association
    from polybias.planted import tiny_models

    encoder = embeddings.wrap_encoder(*tiny_models.build_tiny_encoder("bert"), name="tiny-bert")
    occupations, women, men = ["doctor", "nurse", "engineer"], ["she", "woman", "her"], ["he", "man", "his"]
    got = external_validity.encoder_occupation_bias(encoder, occupations, women, men)
    vec = {t: embeddings.sentence_vectors(encoder, [t])[0] for t in
           ["This is a doctor.", "This is a nurse.", "This is an engineer."]
           + [f"This is {w}." for w in women + men]}
    expected = wefat_association(
        np.stack([vec["This is a doctor."], vec["This is a nurse."], vec["This is an engineer."]]),
        np.stack([vec[f"This is {w}."] for w in women]), np.stack([vec[f"This is {w}."] for w in men]))
    np.testing.assert_allclose(got["encoder_wefat"], expected, rtol=1e-5, atol=1e-6)
    with pytest.raises(external_validity.ExternalValidityError, match="no {phrase} slot"):
        external_validity.encoder_occupation_bias(encoder, occupations, women, men, template="This is {word}.")


# ---------------------------------------------------------------- the mirrored census data


def test_garg_relative_norm_distance_reproduces_on_w2v_gnews(mirror, w2v):
    """Garg et al. 2018 Fig. 1: r² = 0.499 between the relative norm distance on Google
    News word2vec and the 2015 census relative percentage of women. The embedded subset
    holds the same vectors; the four occupations it lacks have no 2015 share either.
    Cost: about 2 s (reads the census file once)."""
    from polybias.data import census
    from polybias.results.report import load_reported

    words = census.gender_words()
    scores, missing = external_validity.static_occupation_bias(w2v, census.occupation_words(), words["women"], words["men"])
    assert missing == {"occupations": ["midwife", "auctioneer", "blacksmith", "postmaster"],
                       "women": [], "men": []}
    shares = census.occupation_shares()
    table = external_validity.external_validity_table(scores, shares, list(external_validity.STATIC_MEASURES), [2015],
                                             ("share", "relative_percentage"))
    rnd = table[(table.measure == "relative_norm_distance")].set_index("outcome")
    published = load_reported("external_validity_published", measure="relative_norm_distance").iloc[0]
    assert published["metric"] == "r_squared"
    assert round(rnd.loc["relative_percentage", "pearson"] ** 2, 3) == published["value"] == 0.499
    assert rnd.loc["share", "pearson"] == pytest.approx(rnd.loc["relative_percentage", "pearson"])
    assert (table["n"] == 66).all()
    assert table["no_census"].iloc[0] == "supervisor, mathematician, tailor, collector, retired, student"
    assert 0.5 < table.set_index(["measure", "outcome"]).loc[("wefat", "share"), "pearson_low"]


def test_scatter_is_a_grid_with_the_fitted_line(tmp_path, monkeypatch):
    monkeypatch.setenv("POLYBIAS_OUTPUT_ROOT", str(tmp_path))
    frame = pd.DataFrame({"women": [0.1, 0.4, 0.6, 0.9], "a": [-1.0, -0.2, 0.2, 1.0], "b": [1.0, 0.0, 0.5, -1.0]})
    joined = {m: frame for m in ("a", "b", "a2", "b2")}
    for m in ("a2", "b2"):
        joined[m] = frame.rename(columns={m[0]: m})
    fig = external_validity.plot_census_scatter(joined, 2015, "t", file="scatter.png", labels={"a": "A (model)"})
    visible = [ax for ax in fig.axes if ax.get_visible()]
    assert len(fig.axes) == 6 and len(visible) == 4
    assert visible[0].get_title() == "A (model)\nPearson r = 1.00, n = 4"  # r = 0.9989
    line = visible[0].get_lines()[0].get_ydata()  # least-squares line at share 0 and 1
    slope, intercept = np.polyfit(frame["women"], frame["a"], 1)
    assert line == pytest.approx([intercept, intercept + slope])
    assert (tmp_path / "figures" / "scatter.png").is_file()
    with pytest.raises(external_validity.ExternalValidityError, match="nothing to plot"):
        external_validity.plot_census_scatter({}, 2015, "t")


# ---------------------------------------------------------------- the study over several models


def _toy_result(monkeypatch):
    from polybias import models

    words = ["she", "he", "woman", "man", "nurse", "pilot", "baker"]
    vectors = np.array([[1.0, 0.0], [0.0, 1.0], [0.9, 0.2], [0.1, 0.9], [0.9, 0.1], [0.2, 0.8], [0.5, 0.6]])
    emb = static.StaticEmbeddings("toy", words, vectors)
    loaded = []

    def load(name, kind, **kwargs):
        loaded.append((name, kind))
        return emb if kind == "static" else f"{kind}:{name}"

    def by_model(column):
        def score(model, occupations, women, men, **kwargs):
            return pd.DataFrame({"occupation": occupations[:2], column: [0.5, -0.5]})
        return score

    monkeypatch.setattr(models, "load", load)
    monkeypatch.setattr(external_validity, "encoder_occupation_bias", by_model("encoder_wefat"))
    monkeypatch.setattr(external_validity, "logprob_occupation_bias", by_model("logprob_bias"))
    result = external_validity.occupation_scores("toy", ["nurse", "pilot", "wizard"], ["she"], ["he"],
                                                 encoder="enc", mlm="lm")
    return result, loaded


def test_occupation_scores_gathers_every_measure_with_its_model(monkeypatch):
    result, loaded = _toy_result(monkeypatch)
    assert loaded == [("toy", "static"), ("enc", "encoder"), ("lm", "lm")]
    assert result.model_of == {"wefat": "toy", "relative_norm_distance": "toy",
                               "wefat_caliskan_terms": "toy", "encoder_wefat": "enc", "logprob_bias": "lm"}
    assert result.measures == list(result.scores.columns[1:])
    assert result.scores["occupation"].tolist() == ["nurse", "pilot", "wizard"]
    assert result.scores["wefat"].isna().tolist() == [False, False, True]  # wizard is not in toy
    by_terms = result.scores.set_index("occupation")["wefat_caliskan_terms"]
    assert by_terms["nurse"] > 0 > by_terms["pilot"]
    assert result.missing["occupations"] == ["wizard"]
    assert "daughter" in result.missing["female_terms"] and "she" not in result.missing["female_terms"]
    coverage = external_validity.coverage_table("toy", result.missing)
    assert coverage.set_index("words").loc["women", "missing"] == "none"


def test_correlations_records_and_scatter_of_the_study(monkeypatch, tmp_path):
    import json

    monkeypatch.setenv("POLYBIAS_OUTPUT_ROOT", str(tmp_path))
    result, _ = _toy_result(monkeypatch)
    result.scores = pd.concat([result.scores] * 2, ignore_index=True)  # enough rows to correlate
    result.scores["occupation"] = [f"o{i}" for i in range(len(result.scores))]
    result.scores = result.scores.fillna({m: 0.0 for m in result.measures}).assign(
        **{m: np.linspace(-1, 1, len(result.scores)) * (1 if i % 2 else -1)
           for i, m in enumerate(result.measures)})
    shares = pd.DataFrame({"occupation": result.scores["occupation"].tolist()[:-1], "year": 2015,
                           "women": np.linspace(0.1, 0.9, len(result.scores) - 1)})
    table, left_out = external_validity.correlation_tables(result, shares, [2015])
    assert table["model"].tolist() == [result.model_of[m] for m in table["measure"]]
    assert table.set_index("measure").loc["relative_norm_distance", "pearson"] == pytest.approx(1.0)
    assert left_out["scored occupations without a census share"].unique().tolist() == ["o5"]
    joined = external_validity.joined_by_measure(result, shares, 2015)
    assert list(joined) == result.measures and all(len(j) == 5 for j in joined.values())
    paths = external_validity.write_external_records(result, table, "toy", {"ddof": 1}, "ext")
    records = {r["test"]: r for r in (json.loads(p.read_text()) for p in paths)}
    assert set(records) == set(result.measures)
    def part(record, name):
        return [{k: v for k, v in r.items() if k != "part"} for r in record["values"]["details"]
                if r["part"] == name]

    assert records["logprob_bias"]["model"] == "lm" and part(records["logprob_bias"], "missing") == []
    assert {r["set"]: r["words"] for r in part(records["wefat"], "missing")} == result.missing
    assert len(part(records["wefat"], "score")) == 6 and len(records["wefat"]["data_sha256"]) == 4
    wefat = table[table["measure"] == "wefat"].iloc[0]
    assert (records["wefat"]["values"]["measure"], records["wefat"]["values"]["value"]) == \
        ("census-pearson", pytest.approx(wefat["pearson"]))
