
import numpy as np
import pytest
from polybias.data import wordlists
from polybias.engines.static import MissingWordsError, StaticEmbeddings
from polybias.metrics.weat import weat, weat_association
from polybias.results import report
from polybias.studies.weat import weat_on_embedding


def test_association_by_hand():
    W = np.array([[1.0, 0.0], [1.0, 1.0]])
    A = np.array([[1.0, 0.0], [2.0, 0.0]])  # norms do not matter
    B = np.array([[0.0, 1.0]])
    # w1: cos to A = 1, to B = 0 -> 1; w2: both cos = 1/sqrt(2) -> 0
    assert weat_association(W, A, B) == pytest.approx([1.0, 0.0])


def test_effect_size_by_hand():
    # s(x) = 1, 0.6; s(y) = -0.6, -1  (unit vectors at the right cosines)
    def vec(s):  # cos to e1 minus cos to e2 equals s for this unit vector
        a = np.arctan2(1, 1) - np.arcsin(s / np.sqrt(2))
        return [np.cos(a), np.sin(a)]
    X = np.array([vec(1.0), vec(0.6)]); Y = np.array([vec(-0.6), vec(-1.0)])
    r = weat(X, Y, A=np.array([[1.0, 0.0]]), B=np.array([[0.0, 1.0]]))
    s = np.array([1.0, 0.6, -0.6, -1.0])
    assert r.effect_size == pytest.approx((0.8 - -0.8) / s.std(ddof=1))
    assert r.statistic == pytest.approx(3.2)
    assert r.pvalue == pytest.approx(1 / 6) and r.p_method == "exact"
    assert weat(X, Y, np.array([[1.0, 0.0]]), np.array([[0.0, 1.0]]), ddof=0).effect_size == \
        pytest.approx(1.6 / s.std(ddof=0))


def planted(rng, n, d, bias):
    """Targets X lean toward attribute direction A by `bias`, Y toward B."""
    a, b = np.eye(d)[0], np.eye(d)[1]
    noise = lambda m: rng.normal(size=(m, d))  # noqa: E731
    X = noise(n) + bias * a; Y = noise(n) + bias * b
    A = noise(n) * 0.3 + 3 * a; B = noise(n) * 0.3 + 3 * b
    return X, Y, A, B


def test_planted_bias_is_recovered(rng):
    X, Y, A, B = planted(rng, 20, 30, bias=2.0)
    r = weat(X, Y, A, B, n_permutations=5000)
    assert r.effect_size > 1.0 and r.pvalue < 0.01
    flipped = weat(Y, X, A, B, n_permutations=5000)
    assert flipped.effect_size == pytest.approx(-r.effect_size)
    assert flipped.pvalue > 0.99
    none = weat(*planted(rng, 20, 30, bias=0.0), n_permutations=5000)
    assert abs(none.effect_size) < abs(r.effect_size) / 2


def test_effect_size_grows_with_planted_bias():
    sizes = [weat(*planted(np.random.default_rng(0), 30, 30, bias=b), n_permutations=10).effect_size
             for b in (0.0, 0.5, 1.0, 2.0)]
    assert sizes == sorted(sizes)


def test_unequal_target_sizes(rng):
    X, Y, A, B = planted(rng, 12, 10, bias=1.5)
    r = weat(X[:5], Y, A, B)
    assert r.sizes == {"X": 5, "Y": 12, "A": 12, "B": 12}
    assert r.p_method == "exact" and r.n_permutations == 6188  # C(17, 5)


def test_bad_vectors():
    A, B = np.eye(3)[:1], np.eye(3)[1:2]
    with pytest.raises(ValueError, match="set Y is empty"):
        weat(np.eye(3), np.empty((0, 3)), A, B)
    with pytest.raises(ValueError, match="zero vectors"):
        weat(np.array([[0.0, 0, 0], [1, 0, 0]]), np.eye(3), A, B)
    with pytest.raises(ValueError, match="dimension mismatch"):
        weat(np.eye(3), np.eye(3), np.eye(4)[:1], np.eye(4)[1:2])


@pytest.fixture
def toy():
    words = ["x1", "x2", "y1", "y2", "a1", "b1", "zero"]
    vecs = np.array([[1, .1], [1, .2], [.1, 1], [.2, 1], [1, 0], [0, 1], [0, 0]], dtype=np.float32)
    return StaticEmbeddings("toy", words, vecs)


def make_test(X, Y, A=("a1",), B=("b1",)):
    ws = lambda n, w: wordlists.WordSet(n, tuple(w), "language-specific", "test")  # noqa: E731
    return wordlists.AssociationTest("T", ws("x", X), ws("y", Y), ws("a", A), ws("b", B), "en")


def test_missing_words_raise_by_default_and_drop_on_request(toy):
    test = make_test(["x1", "x2", "nope"], ["y1", "y2", "gone"])
    with pytest.raises(MissingWordsError) as err:
        weat_on_embedding(toy, test)
    assert "nope" in str(err.value) and "gone" in str(err.value) and "on_missing='drop'" in str(err.value)
    r = weat_on_embedding(toy, test, on_missing="drop")
    assert r.dropped == {"X": ["nope"], "Y": ["gone"]}
    assert r.sizes["X"] == 2


def test_zero_vector_word_is_named(toy):
    with pytest.raises(ValueError, match="zero"):
        weat_on_embedding(toy, make_test(["x1", "zero"], ["y1", "y2"]))


def test_all_words_missing_is_an_error(toy):
    with pytest.raises(ValueError, match="no word of set A"):
        weat_on_embedding(toy, make_test(["x1"], ["y1"], A=("zz",)), on_missing="drop")


# ----------------------------------------------------------- published values (Caliskan et al. 2017)

REPRODUCED = ["WEAT1", "WEAT2", "WEAT3", "WEAT5", "WEAT6", "WEAT7", "WEAT8", "WEAT9"]


def test_caliskan_word2vec_effect_sizes(w2v):
    reported = report.load_reported("caliskan2017_weat", model="w2v-gnews").set_index("test")
    tests = wordlists.load_tests("en")
    for name in REPRODUCED:
        got = weat_on_embedding(w2v, tests[name], on_missing="drop", n_permutations=100).effect_size
        assert got == pytest.approx(reported.loc[name, "effect_size"], abs=0.01), name


def test_weat4_with_caliskan_names_reproduces(w2v):
    """WEAT4 reproduces only with the 16+16 names of Caliskan et al. (weat_variants.yaml)."""
    reported = report.load_reported("caliskan2017_weat", model="w2v-gnews").set_index("test")
    variants = wordlists.load_tests("en", "weat_variants.yaml")
    full = weat_on_embedding(w2v, wordlists.get_test("en", "WEAT4"), n_permutations=100).effect_size
    caliskan = weat_on_embedding(w2v, variants["WEAT4-caliskan"], n_permutations=100).effect_size
    assert caliskan == pytest.approx(reported.loc["WEAT4", "effect_size"], abs=0.01)
    assert abs(full - reported.loc["WEAT4", "effect_size"]) > 0.05


def test_only_axe_is_missing_from_w2v_gnews(w2v):
    missing = {w for t in wordlists.load_tests("en").values() for s in t.sets().values()
               for w in s.words if w not in w2v}
    assert missing == {"axe"}


