"""The new minimal-pair datasets scored end to end, and comparisons across their languages.

A tiny random MLM (tokenizer trained on the pairs it scores, so Hindi, Japanese and Russian
text is not all unknown tokens) stands in for a registered model: each dataset and
language goes through ``crows_pairs.load_pairs`` and ``crows_pairs.run_crows`` (a handful of pairs),
and each aligned dataset through ``crows_languages.run_crows_languages``.
"""

import json

import numpy as np
import pandas as pd
import pytest
from polybias import models
from polybias.data import published_pair_scores
from polybias.engines import scoring
from polybias.metrics import crows
from polybias.planted import tiny_models
from polybias.results import plots, table
from polybias.runner import migrations
from polybias.studies import crows_languages, crows_pairs

NEW = {"indibias": ("en", "hi"), "crows-pairs-dutch": ("nl", "en", "fr"), "kaneko2022": ("ja", "ru")}
N = 4  # pairs scored per language


def first_pairs(dataset, language):
    return crows_pairs.load_pairs(dataset, language).head(N)


def tiny_mlm_on(datasets, mirror_or_local):
    """A tiny random MLM whose tokenizer is trained on the first N pairs of every dataset and
    language of ``datasets`` (dataset -> languages), read from the registered files."""
    corpus = list(tiny_models.CORPUS)
    with mirror_or_local():  # the registered datasets
        for dataset, languages in datasets.items():
            for language in languages:
                pairs = first_pairs(dataset, language)
                corpus += pairs.sent_more.tolist() + pairs.sent_less.tolist()
    model, tok = tiny_models.build_tiny_model("bert", seed=0, vocab_size=1500, corpus=corpus,
                                              max_position_embeddings=256)
    return scoring.wrap_language_model(model, tok, name="tiny-bert", kind="mlm", revision="tiny")


def stand_in_for(monkeypatch, lm) -> str:
    """Registered name ``planted-mlm`` (languages: en) loads ``lm``; datasets give N pairs."""
    real = crows_pairs.load_pairs
    monkeypatch.setattr(models, "load", lambda name, *a, **k: lm)
    monkeypatch.setattr(crows_pairs, "load_pairs", lambda *a, **k: real(*a, **k).head(N))
    return "planted-mlm"


@pytest.fixture(scope="module")
def tiny_mlm(mirror_or_local):
    return tiny_mlm_on(NEW, mirror_or_local)


@pytest.fixture
def stand_in(monkeypatch, tiny_mlm):
    return stand_in_for(monkeypatch, tiny_mlm)


@pytest.mark.parametrize("dataset, language", [(d, lang) for d, ls in NEW.items() for lang in ls])
def test_run_crows_on_every_new_dataset_and_language(mirror, stand_in, dataset, language, tmp_path):
    pairs = crows_pairs.load_pairs(dataset, language)
    assert len(pairs) == N and (pairs.language == language).all()
    run = crows_pairs.run_crows(stand_in, dataset, language, n_bootstrap=20, seed=0,
                          output_dir=str(tmp_path))
    assert len(run.scored) == N and np.isfinite(run.scored[["score_more", "score_less"]]).all().all()
    assert run.stereotype.iloc[0][["bias_type", "n"]].tolist() == ["all", N]
    assert run.jsd.iloc[0]["n"] == N
    records = sorted(tmp_path.glob("*.json"))
    assert len(records) == 2
    record = json.loads(records[0].read_text())
    assert record["language"] == language and record["test"] == dataset


@pytest.mark.parametrize("method", ["aul", "aula"])
def test_unmasked_measures_on_hindi(mirror, stand_in, method):
    run = crows_pairs.run_crows(stand_in, "indibias", "hi", method=method, n_bootstrap=0)
    assert len(run.scored) == N


@pytest.mark.parametrize("dataset", list(NEW))
def test_run_crows_languages_on_every_aligned_dataset(mirror, stand_in, dataset, tmp_path):
    languages = list(NEW[dataset])
    if languages != ["en"] * len(languages):  # planted-mlm is registered for English only
        with pytest.raises(models.ModelError, match="language_override"):
            crows_languages.run_crows_languages(stand_in, dataset, n_bootstrap=0)
    scored, comparison = crows_languages.run_crows_languages(stand_in, dataset, n_bootstrap=50, seed=0,
                                                   output_dir=str(tmp_path), language_override=True)
    assert list(scored) == languages
    per, paired = comparison.per_language, comparison.paired
    assert per.language.tolist() == languages and (per.model == stand_in).all()
    assert (per.n == N).all() and per.ci_low.le(per.score).all() and per.ci_high.ge(per.score).all()
    assert len(paired) == len(languages) * (len(languages) - 1) // 2
    assert (paired.n == N).all()
    record = json.loads(next(tmp_path.glob("crows-languages_*.json")).read_text())
    assert record["parameters"]["languages"] == languages
    assert record["parameters"]["language_override"] is True
    groups = record["values"]["groups"]
    assert [g["measure"] for g in groups].count("crows-difference") == len(paired)
    assert [record["values"]["language"]] + [g["language"] for g in groups if "language" in g] == languages
    # the shape written before the one record shape migrates to exactly this record
    old = {**record, "values": {"per_language": per.astype(object).where(per.notna(), None).to_dict("records"),
                                "paired": paired.astype(object).where(paired.notna(), None).to_dict("records")}}
    assert migrations.crows_languages_measure_records(old) == record
    assert table.record_rows(old, "crows-languages") == table.record_rows(record, "crows-languages")


def test_run_crows_languages_rejects_what_does_not_exist():
    stand_in = "planted-mlm"
    with pytest.raises(crows.CrowsError, match="aligned languages: .*crows-pairs-dutch"):
        crows_languages.run_crows_languages(stand_in, "no-such-set")
    with pytest.raises(crows.CrowsError, match="has nl, en, fr"):
        crows_languages.run_crows_languages(stand_in, "crows-pairs-dutch", ["nl", "de"])
    with pytest.raises(crows.CrowsError, match="two or more"):
        crows_languages.run_crows_languages(stand_in, "crows-pairs", language_override=True)
    with pytest.raises(crows.CrowsError, match="unknown method"):
        crows_languages.run_crows_languages(stand_in, "kaneko2022", method="pll")


def test_published_dutch_comparison(mirror, tmp_path):
    groups = {"one per language": ["bert", "camembert", "bertje"], "Dutch": ["mbert", "bertje"]}
    comparison = crows_languages.published_dutch_comparison(groups, n_bootstrap=100, seed=0,
                                                  output_dir=str(tmp_path))
    per, paired = comparison.per_language, comparison.paired
    assert per.label.tolist() == ["bert (en)", "camembert (fr)", "bertje (nl)", "mbert (nl)",
                                  "bertje (nl)"]
    assert per.language.tolist() == ["en", "fr", "nl", "nl", "nl"]
    # the per-language scores are the re-aggregated published decisions
    agg = crows_languages.dutch_crows_aggregates(n_bootstrap=0)
    agg = agg[agg.bias_type == "all"].set_index("model")
    for row in per.itertuples():
        assert row.score == pytest.approx(agg.loc[row.model, "score"])
        assert row.stereotyped == agg.loc[row.model, "stereotyped"]
        assert row.ci_low <= row.score <= row.ci_high
    assert paired.group.tolist() == ["one per language"] * 3 + ["Dutch"]
    assert (paired.n == 1463).all()
    # paired difference and discordant counts, recomputed from the per-pair decisions
    a = published_pair_scores.load_dutch_crows_scores("bert").set_index("pair_id")
    b = published_pair_scores.load_dutch_crows_scores("bertje").set_index("pair_id").loc[a.index]
    da, db = a.score_more > a.score_less, b.score_more > b.score_less
    row = paired[(paired.label_a == "bert (en)") & (paired.label_b == "bertje (nl)")].iloc[0]
    assert row.a_only == int((da & ~db).sum()) and row.b_only == int((~da & db).sum())
    assert row["diff"] == pytest.approx(100 * (da.mean() - db.mean()))
    records = sorted(tmp_path.glob("crows-languages_*.json"))
    assert len(records) == 2
    record = json.loads(records[0].read_text())
    assert set(record["data_sha256"]) <= {f"crows-pairs-dutch-scores-{m}" for m in published_pair_scores.DUTCH_SCORE_MODELS}
    with pytest.raises(crows.CrowsError, match="no published scores for xlmr"):
        crows_languages.published_dutch_comparison({"g": ["bert", "xlmr"]})
    with pytest.raises(crows.CrowsError, match="two or more"):
        crows_languages.published_dutch_comparison({"g": ["bert", "bert"]})


def test_scores_by_group_figure(tmp_path, monkeypatch):
    monkeypatch.setenv("POLYBIAS_OUTPUT_ROOT", str(tmp_path))
    table = pd.DataFrame({"group": ["a", "a", "b"], "label": ["en", "fr", "nl"],
                          "score": [60.0, 55.0, 52.0], "ci_low": [57.0, 52.0, 49.0],
                          "ci_high": [63.0, 58.0, 55.0]})
    fig = plots.scores_by_group(table, "t", file="groups.png")
    assert len(fig.axes) == 2 and (tmp_path / "figures" / "groups.png").stat().st_size > 0


def test_run_crows_languages_takes_a_loaded_model(mirror, tiny_mlm, monkeypatch, tmp_path):
    """Notebook 12 loads the model itself (revision, device, dtype, batch budget) and hands
    it over; the languages are checked before anything loads."""
    real = crows_pairs.load_pairs
    monkeypatch.setattr(crows_pairs, "load_pairs", lambda *a, **k: real(*a, **k).head(N))
    monkeypatch.setattr(models, "load", lambda *a, **k: pytest.fail("must not load again"))
    scored, comparison = crows_languages.run_crows_languages("some/model", "kaneko2022", n_bootstrap=20,
                                                   output_dir=str(tmp_path), lm=tiny_mlm)
    assert list(scored) == ["ja", "ru"] and (comparison.per_language.model == "some/model").all()
    record = json.loads(next(tmp_path.glob("crows-languages_*.json")).read_text())
    assert record["model"] == "some/model" and record["model_revision"] == "tiny"
    assert record["normaliser"] is None
    with pytest.raises(models.ModelError, match="registered for languages \\[en\\], not 'nl'"):
        crows_languages.compared_languages("planted-mlm", "crows-pairs-dutch")
    assert crows_languages.compared_languages("planted-mlm", "crows-pairs-dutch", language_override=True) == \
        ["nl", "en", "fr"]


#: Maltese CrowS-Pairs and EuroGEST (CrowS-style: sent_more the stereotype's gender form).
NEWER = {"crows-pairs-maltese": ("mt",), "eurogest": ("cs", "mt"), "eurogest-neutral": ("ga",)}


@pytest.fixture(scope="module")
def tiny_mlm_newer(mirror_or_local):
    return tiny_mlm_on(NEWER, mirror_or_local)


@pytest.mark.parametrize("dataset, language", [(d, lang) for d, ls in NEWER.items() for lang in ls])
def test_run_crows_on_maltese_and_eurogest(mirror, monkeypatch, tiny_mlm_newer, dataset, language, tmp_path):
    run = crows_pairs.run_crows(stand_in_for(monkeypatch, tiny_mlm_newer), dataset, language, n_bootstrap=20, seed=0,
                                output_dir=str(tmp_path))
    assert len(run.scored) == N and np.isfinite(run.scored[["score_more", "score_less"]]).all().all()
    assert run.stereotype.iloc[0][["bias_type", "n"]].tolist() == ["all", N]
    record = json.loads(sorted(tmp_path.glob("*.json"))[0].read_text())
    assert record["language"] == language and record["test"] == dataset


def test_run_crows_languages_scores_the_same_declared_sample_in_every_language(
        mirror, monkeypatch, tiny_mlm, tmp_path):
    # 1,461: the ids all three languages have (the French file drops two broken pairs)
    monkeypatch.setattr(models, "load", lambda name, *a, **k: tiny_mlm)
    scored, comparison = crows_languages.run_crows_languages(
        "planted-mlm", "crows-pairs-dutch", n_bootstrap=0, seed=1, output_dir=str(tmp_path),
        language_override=True, max_pairs=5)
    ids = [sorted(s.pair_id) for s in scored.values()]
    assert len(ids[0]) == 5 and ids == [ids[0]] * 3
    assert comparison.per_language.attrs["caption"] == (
        "Pairs: a sample of 5 of the 1,461 aligned pairs, the same in every language, "
        "stratified by bias type (max_pairs = 5, seed 1).")
    again, _ = crows_languages.run_crows_languages(
        "planted-mlm", "crows-pairs-dutch", n_bootstrap=0, seed=1, language_override=True,
        max_pairs=5)
    assert sorted(again["nl"].pair_id) == ids[0]
    record = json.loads(next(tmp_path.glob("crows-languages_*.json")).read_text())
    assert record["parameters"]["max_pairs"] == 5
