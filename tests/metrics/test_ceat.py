"""CEAT: random-effects formulas on hand-computed inputs, an independent per-sample loop
(the algorithm of Guo & Caliskan's published code), statsmodels' DerSimonian–Laird
meta-analysis, planted associations and bad inputs."""

import itertools
from math import sqrt

import numpy as np
import pytest
from polybias import paths
from polybias.data.wordlists import AssociationTest, WordSet
from polybias.metrics.ceat import (
    CeatError,
    ceat,
    ceat_from_occurrences,
    ceat_permutation,
    dersimonian_laird,
    pvalue_normal,
    random_effects,
    sample_effect_sizes,
)
from scipy.stats import norm

# ------------------------------------------------------------ hand-computed random effects


def test_dl_heterogeneous_pair_by_hand():
    # d = (0, 2), V = (1, 1/4): W = (1, 4), ΣW = 5, ΣWd = 8, ΣWd² = 16
    # Q = 16 − 64/5 = 3.2; c = 5 − 17/5 = 1.6; τ² = (3.2 − 1)/1.6 = 11/8
    tau2, q, c = dersimonian_laird([0.0, 2.0], [1.0, 0.25])
    assert (tau2, q, c) == pytest.approx((11 / 8, 3.2, 1.6))
    # v = (8/19, 8/13); CES = (16/13)/(8/19 + 8/13) = 19/16; SE = sqrt(247/256)
    r = random_effects([0.0, 2.0], [1.0, 0.25])
    assert r.ces == pytest.approx(19 / 16)
    assert r.se == pytest.approx(sqrt(247 / 256))
    assert r.z == pytest.approx((19 / 16) / sqrt(247 / 256))
    assert r.pvalue == pytest.approx(2 * norm.sf((19 / 16) / sqrt(247 / 256)))


def test_dl_homogeneous_gives_zero_tau_and_fixed_effect_mean():
    # d = (1, 1.5), V = (1, 1): Q = 3.25 − 6.25/2 = 0.125 < N − 1 = 1 → τ² = 0
    tau2, q, _ = dersimonian_laird([1.0, 1.5], [1.0, 1.0])
    assert tau2 == 0.0 and q == pytest.approx(0.125)
    r = random_effects([1.0, 1.5], [1.0, 1.0])
    assert r.ces == pytest.approx(1.25) and r.se == pytest.approx(sqrt(0.5))


def test_q_equal_to_df_gives_zero_tau():
    # d = (0, 2), V = (2, 2): W = 1/2, Q = 0.5·4 − 1/1 = 1 = N − 1 → τ² = 0
    tau2, q, _ = dersimonian_laird([0.0, 2.0], [2.0, 2.0])
    assert q == pytest.approx(1.0) and tau2 == 0.0


def test_alternatives():
    r2 = random_effects([0.5, 0.7, 0.6], [0.2, 0.3, 0.25])
    rg = random_effects([0.5, 0.7, 0.6], [0.2, 0.3, 0.25], alternative="greater")
    rl = random_effects([0.5, 0.7, 0.6], [0.2, 0.3, 0.25], alternative="less")
    assert rg.pvalue == pytest.approx(r2.pvalue / 2)
    assert rl.pvalue == pytest.approx(1 - rg.pvalue)
    assert pvalue_normal(-1.959963985) == pytest.approx(0.05)
    with pytest.raises(CeatError, match="alternative must be one of"):
        random_effects([1.0], [1.0], alternative="one-sided")


def test_matches_statsmodels_dersimonian_laird(rng):
    meta = pytest.importorskip("statsmodels.stats.meta_analysis", reason="needs statsmodels: make env installs it (the dev extra), or pip install statsmodels")
    for spread in (0.05, 1.0):  # Q < N − 1 (τ² = 0) and Q > N − 1 (τ² > 0)
        d = rng.normal(0.4, spread, size=40)
        V = rng.uniform(0.5, 1.5, size=40)
        ours = random_effects(d, V)
        with np.errstate(invalid="ignore"):
            ref = meta.combine_effects(d, V, method_re="dl")
        if ref.tau2 > 0:  # heterogeneous: statsmodels' random-effects estimate
            assert ours.tau2 == pytest.approx(ref.tau2, rel=1e-10)
            assert ours.ces == pytest.approx(ref.mean_effect_re, rel=1e-10)
            assert ours.se == pytest.approx(ref.sd_eff_w_re, rel=1e-10)
        else:  # statsmodels does not truncate τ² at 0; truncated DL is the fixed effect
            assert ours.tau2 == 0.0
            assert ours.ces == pytest.approx(ref.mean_effect_fe, rel=1e-10)
            assert ours.se == pytest.approx(ref.sd_eff_w_fe, rel=1e-10)


# ------------------------------------------------------------ per-sample effect sizes

def _reference_ceat(X, Y, A, B):
    """Per-sample loop, written after the algorithm of Guo & Caliskan's CEAT code (the same
    code benchmarks/bench_ceat.py times)."""
    import sys

    sys.path.insert(0, str(paths.project_root() / "benchmarks"))
    try:
        from bench_ceat import reference_ceat
    finally:
        sys.path.pop(0)
    e, v, ces, z = reference_ceat(X, Y, A, B)
    return e, v, ces, norm.sf(z)


def test_vectorised_matches_per_sample_loop(rng):
    X, Y, A, B = (rng.normal(size=(n, 30, 6)) for n in (4, 5, 3, 4))
    X = X + 0.4 * A.mean(axis=0)  # some association, so that τ² > 0 may occur
    d, V = sample_effect_sizes(X, Y, A, B)
    e, v, ces, p_one = _reference_ceat(X, Y, A, B)
    np.testing.assert_allclose(d, e, rtol=1e-10)
    np.testing.assert_allclose(V, v, rtol=1e-10)
    r = ceat(X, Y, A, B, alternative="greater")
    assert r.ces == pytest.approx(ces, rel=1e-10) and r.pvalue == pytest.approx(p_one, rel=1e-8)
    assert ceat(X, Y, A, B).pvalue == pytest.approx(2 * min(p_one, 1 - p_one), rel=1e-8)


def test_chunking_does_not_change_results(rng):
    X, Y, A, B = (rng.normal(size=(3, 25, 5)) for _ in range(4))
    full = sample_effect_sizes(X, Y, A, B)
    chunked = sample_effect_sizes(X, Y, A, B, chunk=7)
    np.testing.assert_array_equal(full[0], chunked[0])
    np.testing.assert_array_equal(full[1], chunked[1])


def test_ddof_zero_option(rng):
    X, Y, A, B = (rng.normal(size=(3, 4, 5)) for _ in range(4))
    d1, V1 = sample_effect_sizes(X, Y, A, B, ddof=1)
    d0, V0 = sample_effect_sizes(X, Y, A, B, ddof=0)
    np.testing.assert_allclose(V0, V1 * 5 / 6)
    np.testing.assert_allclose(d0, d1 * np.sqrt(6 / 5))


# ------------------------------------------------------------ planted associations

def _planted(rng, strength, n=200, dim=16):
    """X near A's direction and Y near B's (strength > 0), or the reverse (< 0)."""
    a_dir, b_dir = rng.normal(size=dim), rng.normal(size=dim)
    A = a_dir + rng.normal(size=(6, n, dim))
    B = b_dir + rng.normal(size=(6, n, dim))
    X = strength * a_dir + rng.normal(size=(6, n, dim))
    Y = strength * b_dir + rng.normal(size=(6, n, dim))
    return X, Y, A, B


def test_planted_direction_and_null(rng):
    pos = ceat(*_planted(rng, 0.6))
    neg = ceat(*_planted(rng, -0.6))
    null = ceat(*_planted(rng, 0.0))
    assert pos.ces > 0.5 and pos.pvalue < 1e-10
    assert neg.ces < -0.5 and neg.pvalue < 1e-10
    assert abs(null.ces) < 0.2 and null.pvalue > 1e-3


def test_from_occurrences_with_wordlist_test(rng):
    X, Y, A, B = _planted(rng, 0.6, n=50)
    sets = {}
    vectors = {}
    for role, M in zip("XYAB", (X, Y, A, B), strict=True):
        words = [f"{role.lower()}{k}" for k in range(M.shape[0])]
        sets[role] = WordSet(role, tuple(words), "language-specific", "test")
        vectors.update({w: M[k] for k, w in enumerate(words)})
    test = AssociationTest("T", language="en", **sets)
    r = ceat_from_occurrences(vectors, test)
    assert r.ces == pytest.approx(ceat(X, Y, A, B).ces)
    assert r.sizes == {"X": 6, "Y": 6, "A": 6, "B": 6} and r.as_dict()["n_samples"] == 50
    del vectors["x3"], vectors["b0"]
    with pytest.raises(CeatError, match=r"x3 \[X: X\], b0 \[B: B\]"):
        ceat_from_occurrences(vectors, test)
    dropped = ceat_from_occurrences(vectors, test, on_missing="drop")
    assert dropped.dropped == {"X": ["x3"], "B": ["b0"]} and dropped.sizes["X"] == 5


# ------------------------------------------------------------ bad inputs

def test_bad_inputs(rng):
    good = rng.normal(size=(3, 4, 5))
    with pytest.raises(CeatError, match="differ in the number of samples"):
        sample_effect_sizes(good, good, good, rng.normal(size=(3, 5, 5)))
    with pytest.raises(CeatError, match="differ in vector dimension"):
        sample_effect_sizes(good, good, good, rng.normal(size=(3, 4, 6)))
    with pytest.raises(CeatError, match="set Y must be a non-empty array"):
        sample_effect_sizes(good, np.empty((0, 4, 5)), good, good)
    zero = good.copy()
    zero[1, 2] = 0
    with pytest.raises(CeatError, match="set A has a zero vector"):
        sample_effect_sizes(good, good, zero, good)
    nan = good.copy()
    nan[0, 0, 0] = np.nan
    with pytest.raises(CeatError, match="set X has non-finite"):
        sample_effect_sizes(nan, good, good, good)
    same = np.ones((2, 4, 5))
    with pytest.raises(CeatError, match="zero variance"):
        sample_effect_sizes(same, same, good, good)
    with pytest.raises(CeatError, match="variances must be positive"):
        random_effects([1.0, 2.0], [1.0, 0.0])
    with pytest.raises(CeatError, match="at least one sample"):
        random_effects([], [])
    with pytest.raises(CeatError, match="differ in length"):
        random_effects([1.0, 2.0], [1.0])


# ------------------------------------------------------------ from a corpus: segment-length study

def _planted_tests(p_words):
    from polybias.planted.synthetic import planted_groups

    g = planted_groups("en")
    sets = {"X": g["targets"]["male"][:p_words], "Y": g["targets"]["female"][:p_words],
            "A": g["attributes"]["career"][:p_words], "B": g["attributes"]["family"][:p_words]}
    test = AssociationTest("C5", language="en", **{
        k: WordSet(k, tuple(v), "language-specific", "synthetic") for k, v in sets.items()})
    return test, {"C5": {**sets}}


def test_segment_study_runs_the_engine_on_a_tiny_encoder(torch_one_thread):
    from polybias.data import text
    from polybias.engines import embeddings
    from polybias.engines.embeddings import occurrence_vectors
    from polybias.planted import synthetic
    from polybias.planted.tiny_models import build_tiny_encoder
    from polybias.studies.ceat import segment_length_study

    test, cats = _planted_tests(2)
    corpus = synthetic.varied_length_corpus(60, cats, seed=1, min_words=5, max_words=30)
    enc = embeddings.wrap_encoder(*build_tiny_encoder("bert", corpus=corpus), name="tiny-bert")
    ex = text.find_occurrences(corpus, [w for s in test.sets().values() for w in s.words])
    frame = segment_length_study(enc, [test], ex, lengths=(5, ">75"), n_samples=4, seed=0)
    assert frame["ces"].notna().all() and (frame["n_samples"] == 4).all()
    samples = text.sample_occurrences(ex, 4, seed=0)
    vecs = occurrence_vectors(enc, samples)
    direct = embeddings.word_vectors(enc, *text.as_inputs(samples["man"]))
    np.testing.assert_allclose(vecs["man"], direct, rtol=1e-5, atol=1e-6)




# ------------------------------------------------------------ the word-permutation p-value


def _word_noise_null(rng, n_words=4, n_samples=20, dim=8, word_sd=1.0, context_sd=0.3):
    """Four sets of exchangeable words: each word a fixed random vector (word-level noise,
    as a model trained on a balanced corpus has) plus independent context noise per sample."""
    return tuple(rng.normal(size=(n_words, 1, dim)) * word_sd
                 + rng.normal(size=(n_words, n_samples, dim)) * context_sd for _ in range(4))


def test_word_permutation_p_is_the_share_of_splits_reaching_the_observed_ces(rng):
    X, Y, A, B = _word_noise_null(rng, n_words=3, n_samples=6)
    X[:, :, 0] += 1.5  # some signal, so that few splits reach it
    observed = ceat(X, Y, A, B)
    targets = np.concatenate([X, Y])
    reach = []
    for chosen in itertools.combinations(range(6), 3):  # brute force, one ceat() per split
        rest = [i for i in range(6) if i not in chosen]
        reach.append(abs(ceat(targets[list(chosen)], targets[rest], A, B).ces)
                     >= abs(observed.ces) - 1e-12)
    result = ceat_permutation(X, Y, A, B)
    assert result.n_permutations == 20 and result.pvalue_method == "word-permutation-exact"
    assert result.pvalue == pytest.approx(np.mean(reach), abs=1e-12)
    assert result.ces == observed.ces and result.se == observed.se and result.tau2 == observed.tau2
    assert ceat(X, Y, A, B, pvalue="word-permutation").pvalue == result.pvalue
    greater = ceat_permutation(X, Y, A, B, alternative="greater")
    assert greater.pvalue <= result.pvalue


def test_word_permutation_monte_carlo_is_seeded_and_close_to_exact(rng):
    X, Y, A, B = _word_noise_null(rng, n_words=5, n_samples=10)
    exact = ceat_permutation(X, Y, A, B)
    assert exact.n_permutations == 252
    mc = ceat_permutation(X, Y, A, B, exact_limit=10, n_permutations=4000, seed=3)
    again = ceat_permutation(X, Y, A, B, exact_limit=10, n_permutations=4000, seed=3)
    assert mc.pvalue == again.pvalue and mc.n_permutations == 4000
    assert mc.pvalue_method == "word-permutation-monte-carlo"
    assert abs(mc.pvalue - exact.pvalue) < 4 * sqrt(exact.pvalue * (1 - exact.pvalue) / 4000) + 1e-3


def test_normal_p_is_liberal_under_word_level_noise_and_the_permutation_p_is_not():
    """The cause of CEAT's excess false positives on balanced models: the words' own
    (null) associations are shared by every sample, which the normal p-value treats as
    fixed. With 300 null replicates the normal p rejects far more than 5%, the
    word-permutation p about 5% (its 95% Clopper-Pearson interval holds 0.05)."""
    from polybias.studies.validity_statistics import binomial_interval

    rng = np.random.default_rng(11)
    normal = perm = 0
    reps = 300
    for _ in range(reps):
        sets = _word_noise_null(rng)
        normal += ceat(*sets).pvalue < 0.05
        perm += ceat_permutation(*sets).pvalue < 0.05
    assert binomial_interval(normal, reps)[0] > 0.15
    lo, hi = binomial_interval(perm, reps)
    assert lo <= 0.05 <= hi


def test_without_word_level_noise_the_normal_p_is_closer_to_nominal():
    """A control: only context noise (words carry no association of their own); with
    N = 20 draws the normal p's rejection rate is far below its rate under word noise."""
    rng = np.random.default_rng(12)
    reps, normal = 300, 0
    for _ in range(reps):
        sets = _word_noise_null(rng, word_sd=0.0, context_sd=1.0)
        normal += ceat(*sets).pvalue < 0.05
    assert normal / reps < 0.12


def test_bad_pvalue_option(rng):
    with pytest.raises(CeatError, match="pvalue must be one of"):
        ceat(*_word_noise_null(rng), pvalue="bootstrap")


def test_the_measure_registry_reports_the_word_permutation_p(rng):
    from polybias import measures

    X, Y, A, B = _word_noise_null(rng)
    r = measures.compute("ceat", X=X, Y=Y, A=A, B=B, pvalue="word-permutation")
    assert r.p_method == "permutation-exact" and r.p_value == ceat_permutation(X, Y, A, B).pvalue
    assert measures.compute("ceat", X=X, Y=Y, A=A, B=B).p_method == "normal"
