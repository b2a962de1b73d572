"""SEAT: test files, templates, WEAT on sentence vectors (hand-computed and known-answer)."""

from __future__ import annotations

import numpy as np
import pytest
from polybias.data.wordlists import AssociationTest, WordSet
from polybias.engines import embeddings
from polybias.metrics import seat as S
from polybias.metrics.weat import weat
from polybias.studies import seat as seat_study

# ---------------------------------------------------------------- files


# ---------------------------------------------------------------- templates


def test_articles_and_capitals():
    t = S.SeatTemplates("en", {"noun": ("{aX} is a thing.", "This is {aX}.")},
                        an_exceptions=frozenset({"hour"}), a_exceptions=frozenset({"university"}))
    assert S.fill_templates(["orchid", "hour", "university", "rose"], "noun", t) == [
        "An orchid is a thing.", "This is an orchid.", "An hour is a thing.", "This is an hour.",
        "A university is a thing.", "This is a university.", "A rose is a thing.", "This is a rose."]


def _word_test(language="en"):
    ws = {r: WordSet(r.lower(), tuple(words), "language-specific", "test")
          for r, words in (("X", ["rose", "tulip"]), ("Y", ["ant", "wasp"]),
                           ("A", ["joy", "love"]), ("B", ["agony", "filth"]))}
    return AssociationTest("toy", ws["X"], ws["Y"], ws["A"], ws["B"], language=language)


EN = seat_study.load_templates("en")


def test_templated_test_from_word_lists():
    t = S.templated_test(_word_test(), EN, groups={"X": "noun", "Y": "noun", "A": "mass_noun",
                                                   "B": "mass_noun"})
    assert t.sentences["X"][0] == "This is a rose." and len(t.sentences["X"]) == 16
    assert t.sentences["A"][:2] == ("This is joy.", "That is joy.")
    with pytest.raises(S.SeatError, match="no template group for set"):
        S.templated_test(_word_test(), EN, groups={"X": "noun"})
    with pytest.raises(S.SeatError, match="is in 'hi' but the templates are in 'en'"):
        S.templated_test(_word_test("hi"), EN)


# ---------------------------------------------------------------- the statistic

def test_seat_is_weat_on_sentence_vectors_hand_computed(monkeypatch):
    # the doctest example of weat(): X = [(1, .1), (1, .2)], Y = [(.1, 1), (.2, 1)],
    # A = [(1, 0)], B = [(0, 1)] -> d = 1.728 (ddof=1), exact p = 1/6
    table = {"x1": [1, .1], "x2": [1, .2], "y1": [.1, 1], "y2": [.2, 1], "a": [1, 0], "b": [0, 1]}
    seen = []

    def fake(encoder, texts, **kwargs):
        seen.append(list(texts))
        return np.array([table[t] for t in texts], dtype=np.float32)

    monkeypatch.setattr(embeddings, "sentence_vectors", fake)
    test = S.SeatTest("toy", {"X": ("x1", "x2"), "Y": ("y1", "y2"), "A": ("a", "a"), "B": ("b",)})
    r = seat_study.seat(None, test)
    assert seen == [["x1", "x2", "y1", "y2", "a", "b"]]  # each distinct sentence once
    assert round(r.effect_size, 3) == 1.728 and r.pvalue == pytest.approx(1 / 6)
    assert r.p_method == "exact" and r.sizes == {"X": 2, "Y": 2, "A": 2, "B": 1}
    # by hand: s(x) = cos(x, a) - cos(x, b)
    s = [(1 - .1) / np.hypot(1, .1), (1 - .2) / np.hypot(1, .2)]
    d = (np.mean(s) + np.mean(s)) / np.std(s + [-v for v in s], ddof=1)
    assert r.effect_size == pytest.approx(d, rel=1e-6)


def test_seat_matches_weat_on_a_tiny_encoder(torch_one_thread):
    from polybias.planted.tiny_models import build_tiny_encoder

    enc = embeddings.wrap_encoder(*build_tiny_encoder("bert"), name="tiny-bert")
    t = S.templated_test(_word_test(), EN, groups="mass_noun")
    r = seat_study.seat(enc, t, pooling="mean", n_permutations=2000, exact_limit=10, seed=3)
    v = {role: embeddings.sentence_vectors(enc, list(t.sentences[role]), pooling="mean")
         for role in S.ROLES}
    expected = weat(v["X"], v["Y"], v["A"], v["B"], n_permutations=2000, exact_limit=10, seed=3)
    assert r.effect_size == pytest.approx(expected.effect_size, abs=1e-5)
    assert r.pvalue == expected.pvalue and r.p_method == "monte-carlo"
    again = seat_study.seat(enc, t, pooling="mean", n_permutations=2000, exact_limit=10, seed=3)
    assert again == r


