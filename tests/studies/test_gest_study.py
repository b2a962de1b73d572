"""GEST study: the released runs aggregated, the tables, and the statements of the paper
section (paper/sections/15_gest.md) checked on the released files."""


import numpy as np
import pytest
from polybias.data import gest as gest_data
from polybias.engines.scoring import wrap_language_model
from polybias.planted.tiny_models import build_tiny_model
from polybias.studies import gest as study


@pytest.fixture(scope="module")
def released(mirror_or_local):
    with mirror_or_local():
        return study.published_rates(n_bootstrap=0)


def test_every_released_run_is_aggregated(released):
    summary, rates = released
    assert summary.groupby("kind").size().to_dict() == {"masked": 44, "causal": 46}
    assert len(rates) == 90 * 16 and (summary.n == gest_data.N_SENTENCES).all()
    np.testing.assert_allclose(summary.g_s, summary.r_m / summary.r_f, rtol=1e-12)


def test_the_sections_statements_about_the_ranks(released):
    _, rates = released
    median = rates.groupby(["kind", "stereotype"])["rank"].median()
    for kind in gest_data.KINDS:
        m = median[kind]
        feminine_end = set(m.sort_values(kind="stable").index[:4])
        masculine_end = set(m.sort_values(kind="stable").index[-5:])
        assert {7, 3, 4} <= feminine_end, (kind, m.to_dict())  # beautiful, empathetic, neat
        assert {13, 8, 16} <= masculine_end, (kind, m.to_dict())  # leaders, tough, strong
        assert m[15] <= 7, kind  # sexual, a stereotype about men, read as feminine


def test_tables_print_every_run(released):
    summary, rates = released
    text = study.rates_table(rates, "masked")
    assert text.count("\n") == 2 + 44 and "| bert-base-uncased | 1 |" in text
    overview = study.overview_table(summary)
    assert overview.splitlines()[2].startswith("| masked | 44 | 11 |")


def test_a_scored_model_gets_the_same_tables(torch_one_thread):
    lm = wrap_language_model(*build_tiny_model("bert"), name="tiny-bert")
    sentences = ["I am passionate.", "I fixed the car.", "I cry at weddings.", "I lead the team."]
    scores = study.score_model(lm, sentences)
    assert sorted(scores) == [0, 1, 2, 3]
    summary, rates = study.model_rates(scores, [1, 8, 3, 13], "tiny-bert", "masked", n_bootstrap=20)
    assert len(summary) == 4 and set(rates.stereotype) == {1, 3, 8, 13}
    assert study.rates_table(rates, "masked").count("| tiny-bert |") == 4


def test_template_3_is_the_exception_for_bert_and_distilbert(released):
    """The authors' notebook: "The only exception is template #3 with BERT and DistilBERT"."""
    summary, _ = released
    for model in ("bert-base-uncased", "distilbert-base-uncased"):
        g = summary[summary.model == model].set_index("template").g_s
        assert g.idxmin() == 2, (model, g.to_dict())  # template 3, counted from 1
    distil = summary[(summary.model == "distilbert-base-uncased") & (summary.template == 2)].iloc[0]
    assert 1 < distil.g_s < 1.02


def test_the_declared_sample_keeps_every_stereotype_and_is_seeded(mirror_or_local):
    with mirror_or_local():
        frame = gest_data.load_gest()
    sample = study.sample_sentences(frame, 80, seed=0)
    counts = sample.stereotype.value_counts()
    # 80 of 3,565: each stereotype its share (194-256 sentences: 4.4-5.7), rounded
    share = frame.stereotype.value_counts() * 80 / len(frame)
    assert len(sample) == 80 and set(counts.index) == set(range(1, 17))
    assert ((counts - share).abs() < 1).all()
    assert sample.index.is_monotonic_increasing  # the file's order
    assert sample.index.tolist() == study.sample_sentences(frame, 80, seed=0).index.tolist()
    assert sample.index.tolist() != study.sample_sentences(frame, 80, seed=1).index.tolist()
    assert study.sample_caption(len(sample), len(frame), 80, 0).startswith("Sentences: a sample of 80 of the 3,565")


def test_caption_states_the_sentences_in_gest_words():
    assert study.sample_caption(80, 3565, 80, 0) == (
        "Sentences: a sample of 80 of the 3,565, stratified by stereotype (max_items = 80, "
        "seed 0); n counts them.")
    assert study.sample_caption(3565, 3565, 80, 0) == "Sentences: all 3,565."
    assert study.sample_caption(80, 3565, 0, 0) == "Sentences: all 3,565."
