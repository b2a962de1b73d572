"""The planted static embedding and its bag-of-words encoder: known answers, determinism, errors."""

from __future__ import annotations

import numpy as np
import pytest
from polybias.data.wordlists import AssociationTest, WordSet
from polybias.metrics import seat
from polybias.planted import static as planted_static
from polybias.planted.static import PlantedStaticError
from polybias.studies import ceat as ceat_study
from polybias.studies import seat as seat_study
from polybias.studies.weat import weat_on_embedding


def _test(name: str, prefix: str, n: int = 6) -> AssociationTest:
    def ws(role):
        return WordSet(f"{prefix}{role}", tuple(f"{prefix}{role.lower()}{i}" for i in range(n)), "project", "test")
    return AssociationTest(name=name, language="xx", X=ws("X"), Y=ws("Y"), A=ws("A"), B=ws("B"))


TESTS = {"t1": _test("t1", "p"), "t2": _test("t2", "q")}


def test_every_planted_test_has_a_large_positive_effect_and_none_without_planting():
    emb = planted_static.planted_embedding(TESTS, strength=0.5, dim=32)
    for t in TESTS.values():
        r = weat_on_embedding(emb, t, n_permutations=2000, seed=0)
        assert r.effect_size > 1.2 and r.pvalue < 0.01
    null = planted_static.planted_embedding(TESTS, strength=0.0, dim=32)
    sizes = [weat_on_embedding(null, t, n_permutations=200, seed=0).effect_size for t in TESTS.values()]
    assert all(abs(d) < 1.2 for d in sizes)
    # the test with its targets swapped, on the same table, finds the reverse association
    flipped = AssociationTest(name="t1", language="xx", X=TESTS["t1"].Y, Y=TESTS["t1"].X,
                              A=TESTS["t1"].A, B=TESTS["t1"].B)
    r = weat_on_embedding(emb, flipped, alternative="less", n_permutations=2000, seed=0)
    assert r.effect_size < -1.2 and r.pvalue < 0.01


def test_a_words_vector_is_its_own_and_the_plant_is_exactly_the_axis():
    both = planted_static.planted_embedding(TESTS, strength=0.5, dim=32)
    one = planted_static.planted_embedding({"t2": TESTS["t2"]}, strength=0.5, dim=32)
    w = "qx0"  # X of t2: axis 1 in `both`, axis 0 in `one`
    u = planted_static._unit(w, 0, 32)
    assert np.allclose(both.vectors[both.index[w]] - u, 0.5 * np.eye(32)[1])
    assert np.allclose(one.vectors[one.index[w]] - u, 0.5 * np.eye(32)[0])
    again = planted_static.planted_embedding(TESTS, strength=0.5, dim=32)
    assert np.array_equal(both.vectors, again.vectors) and both.words == again.words


def test_conflicting_roles_and_bad_options_are_named():
    t = TESTS["t1"]
    bad = AssociationTest(name="bad", language="xx", X=t.X, Y=WordSet("y", (t.X.words[0], "z"), "p", "s"),
                          A=t.A, B=t.B)
    with pytest.raises(PlantedStaticError, match="'bad': word 'px0' is in both X and Y"):
        planted_static.planted_embedding({"bad": bad})
    with pytest.raises(PlantedStaticError, match="smaller than the 2 planted directions"):
        planted_static.planted_embedding(TESTS, dim=1)
    with pytest.raises(PlantedStaticError, match="strength"):
        planted_static.planted_embedding(TESTS, strength=-1.0)


def test_bag_of_words_is_the_mean_of_the_known_words():
    table = planted_static.planted_embedding(TESTS, strength=0.5, dim=32)
    bow = planted_static.BagOfWords(table)
    v = bow.encode(["px0 qa1 unknown.", "“px0”"])
    assert np.allclose(v[0], (table.vectors[table.index["px0"]] + table.vectors[table.index["qa1"]]) / 2)
    with pytest.raises(PlantedStaticError, match="no word of the sentence 'nothing here' is in the table"):
        bow.encode(["nothing here"])


def test_seat_runs_on_the_bag_of_words_encoder():
    table = planted_static.planted_embedding(TESTS, strength=0.5, dim=32)
    t = TESTS["t1"]
    sentences = {r: tuple(f"this is {w} ." for w in getattr(t, r).words) for r in seat.ROLES}
    test = seat.SeatTest("t1", sentences, {r: r for r in seat.ROLES}, "xx")
    r = seat_study.seat(planted_static.BagOfWords(table), test, n_permutations=2000, seed=0)
    assert r.effect_size > 1.2 and r.pvalue < 0.01


def test_contextual_bag_is_the_word_plus_the_weighted_mean_of_its_context():
    table = planted_static.planted_embedding(TESTS, strength=0.5, dim=32)
    bag = planted_static.ContextualBag(table, context_weight=0.5)
    v = table.vectors
    text = "px0er , qa1 unknown qb2 ."
    got = bag.word_vectors([text, "px0"], [(0, 3), (0, 3)])
    # the occurrence "px0er" is looked up by its longest prefix in the table: px0
    expected = v[table.index["px0"]] + 0.5 * (v[table.index["qa1"]] + v[table.index["qb2"]]) / 2
    assert np.allclose(got[0], expected)
    assert np.allclose(got[1], v[table.index["px0"]])  # no context: the static vector
    with pytest.raises(PlantedStaticError, match="the word at 0:3 of 'zzz qa1' is not in the table"):
        bag.word_vectors(["zzz qa1"], [(0, 3)])


def test_list_corpora_hold_every_word_and_the_contextual_bag_plants_ceat():
    from polybias.data import text

    corpora = planted_static.list_corpora("hi", p_values=(0.9,), n_sentences=1500, seed=0)
    tests, sentences = corpora["p=0.9"]
    assert tests[0].name.endswith(" p=0.9") and len(sentences) == 1500
    extraction = text.find_occurrences(sentences, [s for t in tests[:2] for s in t.sets().values()], "hi")
    assert not extraction.missing()
    bag = planted_static.contextual_bag("hi", corpora, seed=0)
    frame = ceat_study.run_segment_study(bag, {"p=0.9": (tests[:2], extraction)}, "hi", None, lengths=[9, ">75"],
                                   n_samples=4, seed=0, sample_sets=["fixed"])
    assert (frame.ces > 1.0).all() and (frame.pvalue < 0.005).all()
