"""WEFE (PyPI ``wefe``) executed beside polybias on the same word vectors: WEAT statistic,
per-word association, effect size (``ddof=0``) and RND, on Caliskan et al.'s WEAT 1–10
word sets with the embedded GoogleNews word2vec subset, exported to a word2vec text file
that both sides read. Its p-value bugs, each shown by executing it: the two-sided p-value
is 1 for every negative statistic; permutations are drawn with replacement from an
unseeded generator.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from peerlib import run_driver
from polybias import models
from polybias.data import wordlists
from polybias.engines.static import lookup
from polybias.metrics.weat import weat, weat_association
from polybias.metrics.wefat import relative_norm_distance
from report import record

PEER = "wefe"
TESTS = [f"WEAT{i}" for i in range(1, 11)]


def word_sets(w2v) -> dict[str, dict[str, list[str]]]:
    """WEAT 1–10's sets, restricted to the words of the embedded vectors (WEAT 2 loses "axe")."""
    out = {}
    for name in TESTS:
        sets = wordlists.get_test("en", name).sets()
        out[name] = {role: lookup(w2v, list(sets[role].words), "drop")[1] for role in "XYAB"}
    return out


def export_word2vec(w2v, words: set[str], path) -> None:
    """Write ``words``' vectors as word2vec text; ``%.9g`` round-trips float32 exactly."""
    words = sorted(words)
    matrix, kept, _ = lookup(w2v, words)
    lines = [f"{len(kept)} {matrix.shape[1]}"]
    lines += [w + " " + " ".join(f"{x:.9g}" for x in row) for w, row in zip(kept, matrix, strict=True)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.fixture(scope="module")
def setup(w2v, tmp_path_factory):
    sets = word_sets(w2v)
    path = tmp_path_factory.mktemp("wefe") / "weat-words.txt"
    export_word2vec(w2v, {w for s in sets.values() for ws in s.values() for w in ws}, path)
    vectors = models.load(str(path), "static", format="word2vec-text")
    return sets, path, vectors


def vec(emb, words):
    return lookup(emb, words)[0]


def test_weat_statistic_per_word_association_and_effect_size_equal_wefe(setup):
    sets, path, emb = setup
    theirs = run_driver(PEER, "wefe_driver", {"vectors": str(path), "weat": [
        {"name": name, "targets": [s["X"], s["Y"]], "attributes": [s["A"], s["B"]]}
        for name, s in sets.items()]})
    worst = {"s": 0.0, "statistic": 0.0, "effect_size": 0.0}
    signs = 0
    for name, t in zip(TESTS, theirs["weat"], strict=True):
        assert t["name"] == name
        X, Y, A, B = (vec(emb, sets[name][r]) for r in "XYAB")
        ours = weat(X, Y, A, B, ddof=0, exact_limit=0, n_permutations=1)
        sx, sy = weat_association(X, A, B), weat_association(Y, A, B)
        worst["s"] = max(worst["s"], float(np.abs(sx - t["s_x"]).max()), float(np.abs(sy - t["s_y"]).max()))
        worst["statistic"] = max(worst["statistic"], abs(ours.statistic - t["weat"]))
        worst["effect_size"] = max(worst["effect_size"], abs(ours.effect_size - t["effect_size"]))
        signs += np.sign(ours.effect_size) == np.sign(t["effect_size"])
        # the Caliskan default (ddof=1) is a fixed rescaling of WEFE's, not equal to it
        n = len(sx) + len(sy)
        d1 = weat(X, Y, A, B, exact_limit=0, n_permutations=1).effect_size
        assert d1 == pytest.approx(t["effect_size"] * np.sqrt((n - 1) / n), rel=1e-6)
    assert signs == len(TESTS)
    assert worst["s"] <= 1e-6 and worst["statistic"] <= 1e-5 and worst["effect_size"] <= 1e-6, worst
    common = dict(peer=PEER, peer_version=theirs["version"],
                  test="tests/peers/test_wefe.py::"
                       "test_weat_statistic_per_word_association_and_effect_size_equal_wefe")
    record(measure="WEAT per-word association s(w, A, B)",
           peer_function="wefe/metrics/WEAT.py::WEAT._calc_s",
           agreement="every target word of WEAT 1–10 (w2v-gnews subset, exported as word2vec text)",
           max_difference=worst["s"], **common)
    record(measure="WEAT test statistic", peer_function="wefe/metrics/WEAT.py::WEAT.run_query ('weat')",
           agreement="WEAT 1–10", max_difference=worst["statistic"], **common)
    record(measure="WEAT effect size", peer_function="wefe/metrics/WEAT.py::WEAT.run_query ('effect_size')",
           agreement="WEAT 1–10 with weat(..., ddof=0); every sign equal",
           max_difference=worst["effect_size"],
           definition_difference="WEFE divides by the population std (np.std, ddof=0); polybias's "
                                 "default is Caliskan's sample std (ddof=1), a factor √((n−1)/n) "
                                 "smaller; ddof=0 is the compat option",
           **common)


def test_rnd_per_word_distances_equal_wefe_normalized_and_its_mean(setup):
    """WEFE's RND with ``normalize=True``: d(a) = ‖â − mean T0‖ − ‖â − mean T1‖ on unit
    vectors for each attribute word a, and their mean; polybias's
    :func:`relative_norm_distance` (W = the words scored, A = T1, B = T0), summed by Garg
    et al."""
    sets, path, emb = setup
    queries = [{"name": name, "targets": [sets[name]["X"], sets[name]["Y"]],
                "attribute": sets[name]["A"] + sets[name]["B"]} for name in ("WEAT6", "WEAT7", "WEAT8")]
    theirs = run_driver(PEER, "wefe_driver", {"vectors": str(path), "rnd": queries})
    worst_word, worst_mean = 0.0, 0.0
    for q, t in zip(queries, theirs["rnd"], strict=True):
        d = relative_norm_distance(vec(emb, q["attribute"]), A=vec(emb, q["targets"][1]),
                                   B=vec(emb, q["targets"][0]))
        assert sorted(t["distance_by_word"]) == sorted(q["attribute"])
        their_d = np.array([t["distance_by_word"][w] for w in q["attribute"]])
        worst_word = max(worst_word, float(np.abs(d - their_d).max()))
        worst_mean = max(worst_mean, abs(d.sum() / len(d) - t["rnd"]))
        assert abs(d.sum() - t["rnd"]) > 10 * worst_mean  # the aggregates differ: sum vs mean
    assert worst_word <= 1e-6 and worst_mean <= 1e-6, (worst_word, worst_mean)
    record(measure="Relative norm distance (RND)", peer=PEER, peer_version=theirs["version"],
           peer_function="wefe/metrics/RND.py::RND.run_query (normalize=True), RND.__calc_rnd",
           agreement="per attribute word (WEAT 6–8's targets × their attribute words) and the "
                     "mean over the words",
           max_difference=max(worst_word, worst_mean),
           definition_difference="WEFE reports the mean of d over the words, Garg et al. (and "
                                 "polybias's studies) their sum; WEFE without normalize=True uses "
                                 "raw vectors, polybias always unit vectors",
           test="tests/peers/test_wefe.py::test_rnd_per_word_distances_equal_wefe_normalized_and_its_mean")


def exact_two_sided(sx: np.ndarray, sy: np.ndarray) -> float:
    """Brute force: the share of all equal-size re-splits whose statistic is at least as
    far from its null mean as the observed one."""
    pooled = np.concatenate([sx, sy])
    k, n = len(sx), len(pooled)
    centre = pooled.sum() * k / n
    observed = abs(sx.sum() - centre)
    hits = total = 0
    for subset in itertools.combinations(range(n), k):
        total += 1
        hits += abs(pooled[list(subset)].sum() - centre) >= observed - 1e-12
    return hits / total


def test_two_sided_p_value_of_a_negative_statistic_is_exact_where_wefe_gives_one(setup):
    """WEFE's two-sided test counts |permuted| > observed: with a negative observed
    statistic every permutation passes and p = 1. polybias enumerates the splits."""
    sets, path, emb = setup
    s = sets["WEAT1"]
    small = {r: s[r][:6] for r in "XYAB"}  # C(12, 6) = 924 splits: exact on our side
    X, Y, A, B = (vec(emb, small[r]) for r in "XYAB")
    theirs = run_driver(PEER, "wefe_driver", {"vectors": str(path), "weat": [
        {"name": "negative", "targets": [small["Y"], small["X"]], "attributes": [small["A"], small["B"]],
         "p_iterations": 100, "p_test_type": "two-sided"},
        {"name": "positive", "targets": [small["X"], small["Y"]], "attributes": [small["A"], small["B"]],
         "p_iterations": 100, "p_test_type": "two-sided"}]})
    negative, positive = theirs["weat"]
    assert negative["weat"] < 0 < positive["weat"]
    assert negative["p_values"] == [1.0]
    ours_neg = weat(Y, X, A, B, alternative="two-sided")
    ours_pos = weat(X, Y, A, B, alternative="two-sided")
    expected = exact_two_sided(weat_association(Y, A, B), weat_association(X, A, B))
    assert ours_neg.p_method == "exact" and ours_neg.pvalue == pytest.approx(expected, abs=1e-12)
    assert ours_neg.pvalue == ours_pos.pvalue < 0.5
    record(measure="WEAT two-sided p-value of a negative statistic", peer=PEER,
           peer_version=theirs["version"],
           peer_function="wefe/metrics/WEAT.py::_two_sided_test_function, WEAT._calc_p_value",
           agreement=f"polybias: exact p = {ours_neg.pvalue:.4f} for the statistic and its "
                     f"mirror (brute force equal); WEFE: p = {negative['p_values'][0]:.0f} for the "
                     f"negative one, {positive['p_values'][0]:.4f} for its mirror",
           max_difference=None,
           definition_difference="polybias's two-sided p: distance from the null mean, all splits "
                                 "enumerated up to exact_limit",
           peer_bugs="np.abs(permuted) > observed is true for every permutation when the observed "
                     "statistic is negative: p = 1",
           test="tests/peers/test_wefe.py::"
                "test_two_sided_p_value_of_a_negative_statistic_is_exact_where_wefe_gives_one")


def test_permutations_are_seeded_splits_where_wefe_draws_with_replacement_unseeded(setup):
    sets, path, emb = setup
    s = sets["WEAT1"]
    small = {r: s[r][:6] for r in "XYAB"}
    X, Y, A, B = (vec(emb, small[r]) for r in "XYAB")
    answer = run_driver(PEER, "wefe_driver", {"vectors": str(path), "weat": [
        {"name": "p", "targets": [small["X"], small["Y"]], "attributes": [small["A"], small["B"]],
         "p_iterations": 100, "p_test_type": "right-sided", "runs": 2}]})
    theirs = answer["weat"][0]
    assert len(theirs["rng_calls"]) == 2
    assert all(call == {"args": [], "kwargs": []} for call in theirs["rng_calls"])  # no seed
    assert theirs["choice_replace"] == [True]
    assert theirs["draws_with_repeats"] / theirs["draws"] > 0.9  # 12!/12^12: almost every draw
    # polybias: the same seed gives the same p; Monte Carlo splits of X ∪ Y (without
    # replacement) estimate the exact p within sampling error
    exact = weat(X, Y, A, B)
    mc = [weat(X, Y, A, B, exact_limit=0, n_permutations=20_000, seed=seed).pvalue for seed in (0, 0, 1)]
    assert mc[0] == mc[1] and mc[0] != mc[2]
    se = np.sqrt(exact.pvalue * (1 - exact.pvalue) / 20_000)
    assert abs(mc[0] - exact.pvalue) <= 4 * se + 1 / 20_001
    record(measure="WEAT permutation p-value (Monte Carlo)", peer=PEER,
           peer_version=answer["version"],
           peer_function="wefe/metrics/WEAT.py::WEAT._calc_p_value",
           agreement=f"not comparable by definition; polybias exact p = {exact.pvalue:.4f}, seeded "
                     f"Monte Carlo {mc[0]:.4f}; WEFE's two unseeded runs: "
                     + ", ".join(f"{p:.4f}" for p in theirs["p_values"]),
           max_difference=None,
           definition_difference="polybias: one-sided on Σ_X s, ties count, exact enumeration up "
                                 "to 10⁶ splits, else seeded splits with p = (hits+1)/(n+1); WEFE: "
                                 "strict >, (hits+1)/(runs+1) always",
           peer_bugs=f"np.random.default_rng() without a seed (results change run to run); "
                     f"rng.choice(words, size=n) with replacement: "
                     f"{theirs['draws_with_repeats']} of {theirs['draws']} draws repeat a word, so "
                     "they are not re-splits of X ∪ Y",
           test="tests/peers/test_wefe.py::"
                "test_permutations_are_seeded_splits_where_wefe_draws_with_replacement_unseeded")
