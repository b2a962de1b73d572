"""Seed 004's published interaction scores and identity lists recomputed from its files
(polybias.studies.categorical_bias, polybias.studies.cultural_interactions)."""

import numpy as np
import pandas as pd
import pytest
from polybias.data import sources
from polybias.metrics import catbias
from polybias.metrics.catbias import CatBiasError
from polybias.results import report
from polybias.studies import capstone2023, categorical_bias, cultural_interactions

SEED004_COMBINATIONS = {2: 10, 3: 10, 4: 5, 5: 1}  # characteristic sets of k = 2..5 of 5


def test_seed004_two_characteristic_scores(mirror):
    path = sources.fetch("seed004-cg-score-2")
    ours = categorical_bias.seed004_interaction_scores(path).set_index("characteristics").score
    reported = report.load_reported("capstone2023_interaction", metric="cb_score").set_index("characteristics").value
    assert ours["Countries,Languages"] == pytest.approx(0.53699, abs=5e-6)  # seed 004, CG_score_2.json
    assert ours.sort_index().to_numpy() == pytest.approx(reported.sort_index().to_numpy(), rel=1e-9)
    proper = categorical_bias.seed004_interaction_scores(path, method="ahn-oh").set_index("characteristics").score
    assert not np.allclose(proper.sort_index(), ours.sort_index())  # the published recipe differs


def test_seed004_bad_file(tmp_path):
    bad = tmp_path / "cg.csv"
    bad.write_text("Adjective,Probs\nx,1\n", encoding="utf-8")
    with pytest.raises(CatBiasError, match="cg.csv: missing column"):
        categorical_bias.seed004_interaction_scores(bad)


def test_seed004_modified_scores_are_sentiment_weighted(mirror):
    path = sources.fetch("seed004-cg-score-2")
    adjectives = sorted(pd.read_csv(path).Adjective.unique())
    w = catbias.sentiment_weights(adjectives)
    assert w.dropped == ()
    ours = categorical_bias.seed004_interaction_scores(path, weights=w.weights).set_index("characteristics").score
    reported = report.load_reported("capstone2023_interaction", metric="modified_cb_score").set_index(
        "characteristics").value
    assert ours.sort_index().to_numpy() == pytest.approx(reported.sort_index().to_numpy(), rel=1e-9)
    assert ours["Countries,Languages"] == pytest.approx(0.150906, abs=1e-6)
    proper = categorical_bias.seed004_interaction_scores(path, method="ahn-oh", weights=w.weights)
    assert (proper.score > 0).all()
    with pytest.raises(CatBiasError, match="no weight for adjective"):
        categorical_bias.seed004_interaction_scores(path, weights={"boring": 1.0})


def test_seed004_published_files_are_whole_and_the_two_way_ones_reproduce(mirror):
    published = {(k, m): categorical_bias.seed004_published_scores(sources.fetch(categorical_bias.seed004_score_source(k, m)), k)
                 .set_index("characteristics").score for k in range(2, 6) for m in (False, True)}
    for (k, _m), scores in published.items():
        assert len(scores) == SEED004_COMBINATIONS[k]  # every combination, nothing else
        assert (scores > 0).all()
    # k = 2: the per-row file is shipped, both published files are recomputed from it
    path = sources.fetch("seed004-cg-score-2")
    plain = categorical_bias.seed004_interaction_scores(path).set_index("characteristics").score
    w = catbias.sentiment_weights(sorted(pd.read_csv(path).Adjective.unique()))
    modified = categorical_bias.seed004_interaction_scores(path, weights=w.weights).set_index("characteristics").score
    for ours, m in ((plain, False), (modified, True)):
        ref = published[2, m]
        assert ours.loc[ref.index].to_numpy() == pytest.approx(ref.to_numpy(), rel=1e-9)
    assert round(plain["Countries,Languages"], 5) == 0.53699
    # the transcription in paper/reported is the registered 2-way files, to the last digit
    rep = report.load_reported("capstone2023_interaction")
    for metric, m in (("cb_score", False), ("modified_cb_score", True)):
        r = rep[rep.metric == metric].set_index("characteristics").value
        assert r.sort_index().to_numpy() == pytest.approx(published[2, m].sort_index().to_numpy(), rel=1e-15)
    # k = 3..5: the upstream snapshot has no per-row input (CG_score_3.csv is an absent
    # large blob, 4 and 5 have none), so only the published values can be read, not recomputed
    assert set(categorical_bias.SEED004_ROW_FILES) == {2}
    registered = {s.path for s in sources.load_registry().values() if s.repo == "BeyondInfinities/Capstone_BERT"}
    assert not any(f"CG_score_{k}.csv" in p for k in (3, 4, 5) for p in registered)
    assert published[5, False]["Countries,Languages,Food,Music,Religion"] == pytest.approx(0.0019226, abs=5e-8)


def test_seed004_published_file_missing_a_combination(tmp_path):
    bad = tmp_path / "CG_score_3.json"
    bad.write_text('{"Countries,Languages,Food": 0.1}')
    with pytest.raises(CatBiasError, match=r"CG_score_3.json: expected the 10 combinations of 3 characteristics"):
        categorical_bias.seed004_published_scores(bad, 3)
    bad.write_text('{"Countries,Languages,Food,Music,Religion": "x"}')
    with pytest.raises(CatBiasError, match=r"not finite numbers"):
        categorical_bias.seed004_published_scores(bad, 5)
    with pytest.raises(CatBiasError, match="2 to 5 characteristics"):
        categorical_bias.seed004_score_source(6)


def test_seed004_identity_lists_and_their_empty_entries(mirror, tmp_path):
    sizes = {name: capstone2023.read_identity_list(sources.fetch(src))[1:] for name, src in cultural_interactions.SEED004_LISTS.items()}
    unique = {name: len(capstone2023.read_identity_list(sources.fetch(src))[0]) for name, src in cultural_interactions.SEED004_LISTS.items()}
    assert sizes["Food"] == (185, 38) and unique["Food"] == 129  # 38 empty strings, repeats
    assert unique["Countries"] == 245 and unique["Languages"] == 185
    # seed 004 Table 1 gives Religion 17 and Music 19: the files hold 19 religions and 17 genres
    assert unique["Religion"] == 19 and unique["Music"] == 17
    f = tmp_path / "x.txt"
    f.write_text("a, b,,a ,c,\n", encoding="utf-8")
    assert capstone2023.read_identity_list(f) == (["a", "b", "c"], 6, 2)
    bad = tmp_path / "bad.txt"
    bad.write_text("[1, 2", encoding="utf-8")
    with pytest.raises(CatBiasError, match="bad.txt: malformed list literal"):
        capstone2023.read_identity_list(bad)


# ---------------------------------------------------------------- the notebook's tables


def test_seed004_reproduction_tables_sit_beside_the_published(mirror):
    pytest.importorskip("vaderSentiment", reason="needs vaderSentiment: make env installs it (a dependency of polybias), or pip install vaderSentiment")
    scores, weights, modified = categorical_bias.seed004_reproduction_tables()
    assert {"characteristics", "reproduced", "reported", "ahn_oh"} <= set(scores.columns)
    assert np.allclose(scores["reproduced"], scores["reported"], atol=1e-6)
    assert np.allclose(modified["reproduced"], modified["reported"], atol=1e-6)
    assert list(weights.columns) == ["adjective", "compound"] and weights["adjective"].is_monotonic_increasing


def test_seed002_reproduction_tables(mirror):
    reproduction, table1, table2 = categorical_bias.seed002_reproduction_tables()
    # the prior-weighted mean gives the code's printed aggregates to their 4 decimals
    assert np.allclose(reproduction["reproduced"], reproduction["notebook"], atol=6e-5)
    assert table1.columns.tolist() == ["category", "English", "Greek", "Persian"]
    for language in ("English", "Greek", "Persian"):  # printed to 2 decimals (6.5674 as 6.56: truncated)
        assert np.allclose(table2[language], table2[f"{language} (paper)"], atol=0.0075)


@pytest.fixture(scope="module")
def planted_scores(torch_one_thread):
    from polybias import models
    from polybias.studies import template_books

    book = template_books.template_book("planted_en")
    lm = models.load("planted-mlm", "lm")
    names = list(book.templates)
    ahn_oh = categorical_bias.ahn_oh_cb(lm, book, names, mode="word", ddof=0)
    return lm, book, names, ahn_oh


def test_score_share_and_kl_tables_on_the_planted_mlm(planted_scores):
    lm, book, names, ahn_oh = planted_scores
    pll = catbias.pll_cb(categorical_bias.pll_scores(lm, book, names), ddof=0)
    summary, per_template, per_set = categorical_bias.score_tables(ahn_oh, pll, "planted-mlm", "planted_en", names)
    assert summary.iloc[0][["ahn_oh_cb", "pll_cb", "n_templates"]].tolist() == [ahn_oh.score, pll.score, len(names)]
    assert "ahn_oh_cb" in per_template and "pll_cb" in per_set
    shares, top, why = categorical_bias.group_share_tables(ahn_oh, book, names[0], "targets", "attributes",
                                                           "group", top_k=2)
    assert why == "" and shares is not None
    assert top["template"].eq(names[0]).all() and top["attribute"].nunique() <= 4
    none, _, why = categorical_bias.group_share_tables(ahn_oh, book, names[0], "targets", "attributes",
                                                       "colour")
    assert none is None and why.startswith("no group shares: ")
    kl = categorical_bias.largest_kl(lm, book, names[0], True, "targets", "group")
    assert kl.iloc[0]["template"] == names[0] and kl.iloc[0]["kl"] > 0 and kl.iloc[0]["scale"] == "sum"
    from polybias.metrics import logprob

    firsts = {members[0] for members in logprob.group_members(book, "targets", "group").values()}
    assert {kl.iloc[0]["from"], kl.iloc[0]["to"]} <= firsts


REPRODUCTIONS = [(categorical_bias.reproduction_unavailable, categorical_bias.REPRODUCTION_SOURCES),
                 (cultural_interactions.reproduction_unavailable, cultural_interactions.REPRODUCTION_SOURCES)]


@pytest.mark.parametrize("unavailable, names", REPRODUCTIONS, ids=["06", "07"])
def test_the_reproduction_part_says_what_it_skips_offline(unavailable, names, tmp_path, monkeypatch):
    """No mirror, an empty cache, downloads off: the note notebooks 06 and 07 show in place of
    their reproduction names each file it reads and how to provide it, in one line."""
    monkeypatch.delenv("POLYBIAS_DATA_MIRROR", raising=False)
    monkeypatch.setenv("POLYBIAS_CACHE", str(tmp_path))
    monkeypatch.setenv("POLYBIAS_OFFLINE", "1")
    note = unavailable()
    assert "\n" not in note and note.startswith("(not run: the reproduction of ")
    assert f"data source '{names[0]}' cannot be had: set POLYBIAS_DATA_MIRROR" in note
    assert all(f"'{name}' (holding " in note for name in names[1:])
    assert note.endswith("The rest of the notebook does not need them.)")


@pytest.mark.parametrize("unavailable, names", REPRODUCTIONS, ids=["06", "07"])
def test_the_reproduction_part_runs_where_its_files_can_be_had(unavailable, names, mirror):
    if mirror is None:
        pytest.skip(f"offline: {sources.availability(names[0])[1]}")
    assert unavailable() is None
