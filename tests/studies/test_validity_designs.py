"""The validity designs (polybias.studies.validity_designs): every label the registry
declares for a design is produced through ``compute``, on planted models of known bias."""

import numpy as np
import pandas as pd
import pytest
from polybias import measures
from polybias.planted import eurogest as planted_eurogest
from polybias.studies import validity_designs as designs
from polybias.studies.validity import ValidityError

pytestmark = pytest.mark.usefixtures("torch_one_thread")


def test_planted_weat_follows_the_planted_direction_and_is_deterministic():
    kw = dict(n_sentences=1500, n_permutations=2000)
    (stereo,) = designs.planted_weat(0.9, seed=0, **kw)
    (anti,) = designs.planted_weat(0.1, seed=0, **kw)
    assert stereo["metric"] == "effect-size" and stereo["value"] > 0.8 and stereo["pvalue"] < 0.05
    assert anti["value"] < -0.8
    assert designs.planted_weat(0.9, seed=0, **kw) == [stereo]


def test_planted_lm_scores_show_the_planted_direction(tmp_path, monkeypatch):
    monkeypatch.setenv("POLYBIAS_CACHE", str(tmp_path))
    rows = designs.planted_lm_scores("causal", 0.95, seed=0, n_sentences=2000, n_pairs=60)
    assert [r["metric"] for r in rows] == ["stereotype-score", "jsd-B"]
    assert all(r["value"] > 70 and r["null"] == 50.0 for r in rows)


def test_planted_lm_is_loaded_by_the_one_loader(monkeypatch):
    """validity_designs.planted_lm asks polybias.models.load for the planted model (``trained=``),
    once per process and input set. Cost: one pinned tiny MLM read from disk (under 1 s)."""
    from polybias import models

    monkeypatch.setenv("POLYBIAS_PLANTED", "pinned")
    calls = []

    def spy(*args, **kwargs):
        calls.append((args, kwargs))
        return real(*args, **kwargs)

    real = models.load
    monkeypatch.setattr(models, "load", spy)
    designs._loaded_lm.cache_clear()
    try:
        lm = designs.planted_lm("mlm", 0.5)
        assert designs.planted_lm("mlm", 0.5) is lm
    finally:
        designs._loaded_lm.cache_clear()
    assert calls == [(("planted-mlm-p0.5-s0", "mlm"),
                      {"trained": {"kind": "mlm", "p": 0.5, "seed": 0, "language": "en",
                                   "n_sentences": 3000, "batch_size": 16, "epochs": 10}})]
    assert (lm.name, lm.kind, lm.device) == ("planted-mlm-p0.5-s0", "mlm", "cpu")
    with pytest.raises(ValidityError, match="kind must be one of"):
        designs.planted_lm("seq2seq", 0.5)


def test_dose_response_rows_and_bad_arguments():
    out = designs.dose_response(["weat"], [0.2, 0.8], [0, 1], weat_n_sentences=800,
                                 weat_n_permutations=200)
    assert len(out) == 4 and set(out["p"]) == {0.2, 0.8}
    with pytest.raises(ValidityError, match="unknown"):
        designs.dose_response(["seat"], [0.5], [0])
    with pytest.raises(ValidityError, match="weat_ or lm_"):
        designs.dose_response(["weat"], [0.5], [0], n_sentences=10)
    with pytest.raises(ValidityError, match="p must be"):
        designs.planted_weat(1.5)
    with pytest.raises(ValidityError, match="kind"):
        designs.planted_lm_scores("seq2seq", 0.5)


def test_template_scores_on_the_planted_mlm_and_its_control():
    # same training inputs as tests/metrics/test_logprob.py: the cached models are shared
    stereo = {r["metric"]: r for r in designs.planted_template_scores(0.9, seed=0, n_permutations=2000)}
    control = {r["metric"]: r for r in designs.planted_template_scores(0.5, seed=0, n_permutations=2000)}
    assert stereo["kurita-effect-size"]["value"] > 1.0 and stereo["kurita-effect-size"]["pvalue"] < 0.05
    assert abs(control["kurita-effect-size"]["value"]) < stereo["kurita-effect-size"]["value"]
    assert stereo["cb"]["value"] > control["cb"]["value"] > 0
    assert np.isnan(stereo["cb"]["pvalue"]) and np.isnan(stereo["cb"]["null"])


def test_embedding_scores_of_the_planted_mlm_follow_the_planted_direction():
    stereo = {r["metric"]: r for r in designs.planted_embedding_scores(0.9, seed=0, n_permutations=2000)}
    control = {r["metric"]: r for r in designs.planted_embedding_scores(0.5, seed=0, n_permutations=2000)}
    for metric in ("seat-effect-size", "ceat-ces"):
        assert stereo[metric]["value"] > 0.5 and stereo[metric]["pvalue"] < 0.05, metric
        assert abs(control[metric]["value"]) < stereo[metric]["value"], metric
    assert designs.planted_embedding_scores(0.9, seed=0, n_permutations=2000) == list(stereo.values())


# ------------------------------------------------------------ the EuroGEST measure on planted LMs

#: The pinned planted EuroGEST models (data/planted, kind eurogest-causal): per language the
#: planted (p = 0.9) and the balanced (p = 0.5) model of seed 0.
EUROGEST_PINNED = [(lang, p) for lang in ("cs", "el", "lv") for p in (0.9, 0.5)]


@pytest.fixture(scope="module")
def eurogest_pinned_rows():
    """The EuroGEST rows of the pinned models, computed once (about 15 s in all: scoring the
    held-out pairs, 205 in Greek to 767 in Czech, and 1000 bootstrap resamples each)."""
    import os

    import torch

    before, threads = os.environ.get("POLYBIAS_PLANTED"), torch.get_num_threads()
    os.environ["POLYBIAS_PLANTED"] = "pinned"
    torch.set_num_threads(1)
    try:
        return {(lang, p): designs.planted_eurogest_scores(p, 0, lang) for lang, p in EUROGEST_PINNED}
    finally:
        torch.set_num_threads(threads)
        if before is None:
            os.environ.pop("POLYBIAS_PLANTED")
        else:
            os.environ["POLYBIAS_PLANTED"] = before


@pytest.mark.parametrize("language", ["cs", "el", "lv"])
def test_the_eurogest_measure_resolves_a_planted_masculine_association(eurogest_pinned_rows, language):
    """Trained with the congruent form in 90 % of its sentences, the model's g_s on the
    held-out pairs lies above 1 with its whole interval, and the masculine stereotypes'
    mean masculine rate exceeds the feminine ones'."""
    row = eurogest_pinned_rows[(language, 0.9)]
    assert row["measure"] == "eurogest-causal" and row["metric"] == "g_s" and row["null"] == 1.0
    assert row["low"] > 1.0 and row["value"] > 1.0
    assert row["masculine_rate"] > row["feminine_rate"]
    assert row["n"] == len(planted_eurogest.split_pairs(language)[1])


@pytest.mark.parametrize("language", ["cs", "el", "lv"])
def test_the_eurogest_measure_holds_1_on_a_balanced_model(eurogest_pinned_rows, language):
    row = eurogest_pinned_rows[(language, 0.5)]
    assert row["low"] <= 1.0 <= row["high"]


def test_the_eurogest_rows_are_deterministic_and_are_the_committed_ones(eurogest_pinned_rows, monkeypatch):
    """The same model and seed give the same row, and the committed summary
    (data/validity/eurogest.csv, notebook 16) holds these rows for the pinned models."""
    from polybias.runner import validity_eurogest

    monkeypatch.setenv("POLYBIAS_PLANTED", "pinned")
    again = designs.planted_eurogest_scores(0.9, 0, "el")
    assert pd.Series(again).equals(pd.Series(eurogest_pinned_rows[("el", 0.9)]))
    committed = validity_eurogest.read_frame("data/validity")
    for (lang, p), row in eurogest_pinned_rows.items():
        found = committed[(committed["language"] == lang) & np.isclose(committed["p"], p)
                          & (committed["seed"] == 0)]
        assert len(found) == 1, (lang, p)
        for key in ("value", "low", "high", "feminine_rate", "masculine_rate"):
            assert found[key].iloc[0] == pytest.approx(row[key], rel=1e-5), (lang, p, key)
        assert found["model"].iloc[0] == row["model"] and found["n"].iloc[0] == row["n"]




# ------------------------------------------------------------ every declared label is produced


@pytest.fixture(scope="module")
def design_rows():
    """Every design's rows at one small size, on the pinned planted models (p = 0.9, seed 0):
    what each design produces when the registry is as shipped."""
    import os

    from polybias.planted.synthetic import planted_word2vec

    before = os.environ.get("POLYBIAS_PLANTED")
    os.environ["POLYBIAS_PLANTED"] = "pinned"
    try:
        mlm, causal = designs.planted_lm("mlm", 0.9), designs.planted_lm("causal", 0.9)
        encoder, sentence_vectors = designs.masked_encoder(mlm)
        embedding = {name: designs.embedding_rows(encoder, sentence_vectors, 0.9, 0, "en", 300, [4], [3],
                                                  n_permutations=100, design=name)
                     for name in ("embedding-mlm", "embedding-encoder")}
        return {"weat": designs.weat_rows(planted_word2vec(0.9, seed=0, n_sentences=4000), "en", 0, [4], 100),
                "crows-mlm": designs.pair_rows(mlm, "crows-mlm", "en", 0, [10]),
                "crows-causal": designs.pair_rows(causal, "crows-causal", "en", 0, [10, 20]),
                "template-mlm": designs.template_rows(mlm, "en", 0, [1], 100),
                "interactions-mlm": designs.interaction_rows(mlm, "en"),
                **embedding}
    finally:
        if before is None:
            os.environ.pop("POLYBIAS_PLANTED")
        else:
            os.environ["POLYBIAS_PLANTED"] = before


def test_every_label_the_registry_declares_is_produced_by_its_design(design_rows, eurogest_pinned_rows):
    """Each design of ``polybias.measures.METRIC_MEASURES`` (from the entries'
    ``validity_labels``) produces exactly the labels declared for it, at every size, each
    through ``compute`` (its value the registered measure's on the same inputs), and no
    design of the registry is left without a producer."""
    produced = {**design_rows, designs.EUROGEST_DESIGN: [eurogest_pinned_rows[("el", 0.9)]]}
    assert set(produced) == set(measures.METRIC_MEASURES)
    for design, rows in produced.items():
        labels = [label for _, label in designs.declared(design)]
        assert {r["metric"] for r in rows} == set(labels) == set(measures.METRIC_MEASURES[design]), design
    sizes = [r["size"] for r in design_rows["crows-causal"]]
    assert sizes == [10, 10, 20, 20]
    for r in design_rows["crows-causal"] + design_rows["weat"]:
        assert 0 <= r["pvalue"] <= 1 and r["null"] == measures.get(
            measures.registered_measure("crows-causal" if r["size_key"] == "crows_pairs" else "weat",
                                        r["metric"])).null_value
    cb = {r["metric"]: r for r in design_rows["template-mlm"]}
    assert np.isnan(cb["cb"]["pvalue"]) and np.isnan(cb["cb"]["null"]) and cb["cb"]["value"] > 0
    ceat_rows = {r["metric"]: r for r in design_rows["embedding-mlm"] if r["size_key"] == "ceat_samples"}
    assert ceat_rows["ceat-ces"]["value"] == ceat_rows["ceat-ces-perm"]["value"]  # one CES, two p-values
    assert ceat_rows["ceat-ces"]["pvalue"] != ceat_rows["ceat-ces-perm"]["pvalue"]


def test_a_measure_declared_for_a_design_is_measured_by_it_without_an_edit(pair_gap_measure, monkeypatch):
    """A pair-scores measure added by one module and one registry entry, with a validity
    label for ``crows-causal``, is computed by the design (so by the validity sweep and the
    notebooks) on the same scored pairs as the stereotype score: its value is the toy
    function's on those pairs."""
    monkeypatch.setenv("POLYBIAS_PLANTED", "pinned")
    pair_gap_measure({"crows-causal": ["pair-gap"]})
    import toy_pair_gap
    from polybias.engines.pair_scores import pair_scores
    from polybias.planted.synthetic import minimal_pairs

    lm = designs.planted_lm("causal", 0.9)
    rows = designs.pair_rows(lm, "crows-causal", "en", 0, [15, 30])
    assert [r["metric"] for r in rows] == ["stereotype-score", "jsd-B", "pair-gap"] * 2
    gap = [r for r in rows if r["metric"] == "pair-gap"]
    scored = pair_scores(lm, minimal_pairs(30, language="en", seed=0))
    assert [r["value"] for r in gap] == [toy_pair_gap.pair_gap(scored.iloc[:15]), toy_pair_gap.pair_gap(scored)]
    assert gap[1]["value"] > 0 and np.isnan(gap[1]["pvalue"]) and np.isnan(gap[1]["null"])


def test_a_label_its_design_cannot_produce_is_an_error(pair_gap_measure, monkeypatch):
    """Declared for ``weat`` (static word vectors), a measure that reads scored pairs has
    no input there: the design refuses to run rather than leave its label out."""
    monkeypatch.setenv("POLYBIAS_PLANTED", "pinned")
    pair_gap_measure({"weat": ["pair-gap"]})
    from polybias.planted.synthetic import planted_word2vec

    emb = planted_word2vec(0.9, seed=0, n_sentences=4000)
    with pytest.raises(ValidityError, match=r"design 'weat' produced no 'pair-gap' \(measure 'pair-gap', "
                       r"which reads polybias.engines.pair_scores.pair_scores\)"):
        designs.weat_rows(emb, "en", 0, [4], 100)
    assert designs.declared("weat") == [("weat", "effect-size"), ("pair-gap", "pair-gap")]
