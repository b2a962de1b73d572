"""The cultural-interaction study: seed 004's lists and samples, the interaction CB table."""

from __future__ import annotations

import pytest
from polybias import models
from polybias.data import templating
from polybias.studies import cultural_interactions as study
from polybias.studies import template_books

VADER = "needs vaderSentiment: make env installs it (a dependency of polybias), or pip install vaderSentiment"

pytestmark = pytest.mark.usefixtures("torch_one_thread")


def test_identity_lists_beside_table1(mirror):
    table = study.identity_lists_table(seed=0)
    assert table["characteristic"].tolist() == list(study.SEED004_LISTS)
    assert (table["unique"] <= table["raw"] - table["empty"]).all()
    assert (table["sampled"] == table[["table1_after", "unique"]].min(axis=1)).all()
    food = table.set_index("characteristic").loc["Food"]
    assert food["empty"] == 38  # the dishes file's empty strings


def test_adjective_sample_is_stratified_and_seeded(mirror):
    pytest.importorskip("vaderSentiment", reason=VADER)
    summary, picked = study.adjective_sample(12, seed=0)
    row = summary.iloc[0]
    assert row["sampled"] == len(picked) == 12
    assert row["with_sentiment"] + row["dropped_no_sentiment"] == row["adjectives"]
    assert row["negative"] + row["positive"] <= row["with_sentiment"]
    assert set(picked["stratum"]) == {"negative", "positive"}
    assert ((picked["compound"] < 0) == (picked["stratum"] == "negative")).all()
    assert picked.equals(study.adjective_sample(12, seed=0)[1])


def test_sentiment_weights_are_keyed_by_entry_and_skip_neutral_words():
    pytest.importorskip("vaderSentiment", reason=VADER)
    book = templating.parse_templates({"lists": {
        "people": ["he", "she"],
        "traits": [{"id": "k", "word": "kind"}, {"id": "r", "word": "rude"}, {"id": "t", "word": "table"},
                   {"id": "g", "word": "good"}]},
        "templates": [{"name": "is", "text": "{who} is {trait}.",
                       "slots": {"who": {"list": "people", "role": "target"},
                                 "trait": {"list": "traits", "role": "attribute"}}}]})
    weights = study.sentiment_attribute_weights(book, "is", "trait", neutral_attributes=["g"])
    assert set(weights) == {"k", "r"} and all(w > 0 for w in weights.values())
    assert set(study.sentiment_attribute_weights(book, "is", "trait", attributes=["g", "t"])) == {"g"}


def test_interaction_scores_on_the_planted_mlm():
    book = template_books.template_book("planted_interactions_en")
    lm = models.load("planted-mlm", "lm")
    frame = study.interaction_scores(lm, book, "said", ["pro", "target"], "attribute",
                                     cell_feature="group", n_permutations=200, seed=0)
    assert frame["characteristics"].tolist() == ["pro", "target", "pro × target"]
    assert (frame["base"] == "double-mask").all() and not frame["weighted"].any()
    scores = frame.set_index("characteristics")["score"]
    assert scores["target"] > 10 * scores["pro"]  # the planted bias sits on the target
    assert frame.set_index("characteristics").loc["target", "significant"]
    assert (frame["p"] == frame["p"].clip(0, 1)).all() and (frame["significant"] == (frame["p"] < 0.05)).all()
