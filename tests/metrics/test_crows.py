import numpy as np
import pandas as pd
import pytest
from polybias.data import published_pair_scores
from polybias.engines.pair_scores import (
    alignment_changes,
    jsd_attributions,
    pair_scores,
    shared_token_positions,
)
from polybias.metrics import crows
from polybias.metrics.crows import aggregate_pairs, jsd_to_onehot, word_attributions
from scipy.spatial.distance import jensenshannon


def test_jsd_closed_form_matches_scipy_on_random_distributions(rng):
    for _ in range(50):
        p = rng.dirichlet(np.full(30, 0.3))
        gold = rng.integers(30)
        onehot = np.eye(30)[gold]
        assert jsd_to_onehot(np.log(p[gold])) == pytest.approx(jensenshannon(p, onehot, base=2), abs=1e-9)
        assert jsd_to_onehot(np.log(p[gold]), compat_fourth_root=True) == pytest.approx(
            np.sqrt(jensenshannon(p, onehot, base=2)), abs=1e-9)


def test_jsd_limits_and_monotonicity():
    q = np.linspace(1e-9, 1, 200)
    d = jsd_to_onehot(np.log(q))
    assert d[-1] == pytest.approx(0) and d[0] == pytest.approx(1, abs=1e-6)
    assert np.all(np.diff(d) < 0)  # a more probable gold is closer


def test_aggregate_by_hand_and_ties():
    stereo = np.array([True, False, False, True, True])
    ties = np.array([False, True, False, False, False])
    kinds = np.array(["g", "g", "g", "s", "s"])
    t = aggregate_pairs(stereo, kinds, ties, n_bootstrap=200, seed=3).set_index("bias_type")
    assert t.loc["all", "score"] == pytest.approx(60.0) and t.loc["all", "ties"] == 1
    assert t.loc["g", "score"] == pytest.approx(100 / 3) and t.loc["s", "score"] == 100.0
    # binomial test excludes the tie: 3 of 4 untied
    from scipy.stats import binomtest
    assert t.loc["all", "binom_p"] == pytest.approx(binomtest(3, 4, 0.5).pvalue)
    assert t.loc["all", "ci_low"] <= 60.0 <= t.loc["all", "ci_high"]
    again = aggregate_pairs(stereo, kinds, ties, n_bootstrap=200, seed=3)
    pd.testing.assert_frame_equal(t.reset_index(), again)


def test_aggregate_errors():
    with pytest.raises(crows.CrowsError, match="tied pair"):
        aggregate_pairs(np.array([True]), np.array(["g"]), np.array([True]))
    with pytest.raises(crows.CrowsError, match="no pairs"):
        aggregate_pairs(np.array([], bool), np.array([]))
    with pytest.raises(crows.CrowsError, match="equal length"):
        aggregate_pairs(np.array([True, False]), np.array(["g"]))


def test_stereotype_score_rounding_makes_ties():
    scored = pd.DataFrame({"score_more": [-1.0001, -2.0, -3.0], "score_less": [-1.0002, -1.0, -3.0],
                           "bias_type": ["g", "g", "g"]})
    plain = crows.stereotype_score(scored, n_bootstrap=0).iloc[0]
    assert (plain.stereotyped, plain.ties) == (1, 1)
    rounded = crows.stereotype_score(scored, decimals=3, n_bootstrap=0).iloc[0]
    assert (rounded.stereotyped, rounded.ties) == (0, 2)


def test_word_attributions_keep_the_last_word():
    text = "women are bad drivers"
    offsets = np.array([[6, 9], [10, 13], [14, 17], [17, 21]])  # dri + ##vers
    words = word_attributions(text, offsets, np.array([0.1, -0.2, -0.3, -0.4]))
    assert words == [("are", 0.1), ("bad", -0.2), ("drivers", pytest.approx(-0.7))]
    assert word_attributions(text, offsets, np.array([0.1, -0.2, -0.3, -0.4]), how="mean")[-1][1] == \
        pytest.approx(-0.35)
    with pytest.raises(crows.CrowsError, match="offsets"):
        word_attributions(text, offsets, np.array([1.0]))


def test_attribution_words_from_attributed_pairs():
    attributed = pd.DataFrame({
        "sent_more": ["women can't drive", "gays like sex"], "bias_type": ["gender", "so"],
        "offsets": [np.array([[6, 9], [9, 11], [12, 17]]), np.array([[5, 9], [10, 13]])],
        "b": [np.array([0.1, 0.2, -0.5]), np.array([-0.1, -0.2])]})
    words = crows.attribution_words(attributed)
    assert words[["pair", "word"]].values.tolist() == [[0, "can't"], [0, "drive"], [1, "like"], [1, "sex"]]
    assert words.b.tolist() == pytest.approx([0.3, -0.5, -0.1, -0.2])


def test_gamboa_gpt2_table3_reproduction(mirror):
    from polybias.results import report

    scores = published_pair_scores.load_gamboa_gpt2_scores()
    summary = published_pair_scores.load_gamboa_gpt2_summary()
    ours = crows.gamboa_table3(scores).set_index("bias_type")
    # eq. 6 as written reproduces the summary file shipped with the seed-001 code (61.04 ...)
    for _, row in summary.iterrows():
        key = crows._bias_type_name(row["bias_type"])
        assert ours.loc[key, "stereotyped"] == row["sjsd_biased"]
        assert ours.loc[key, "score"] == pytest.approx(100 * row["sjsd_biased_perc"])
    # noise-level S_JSD counted as a tie reproduces the paper's Table 3 (60.61 / 55.97 / 70.83)
    paper = report.load_reported("gamboa2024_table3", model="gpt2").set_index("bias_type")["value"]
    tied = crows.gamboa_table3(scores, atol=1e-5).set_index("bias_type")
    for key, value in paper.items():
        assert round(tied.loc[key, "score"], 2) == pytest.approx(value)
    assert round(ours.loc["all", "score"], 2) != paper["all"]


# ------------------------------------------------------------------ with tiny models

PAIRS = pd.DataFrame({"sent_more": ["the woman is a bad driver .", "she said the nurse was kind ."],
                      "sent_less": ["the man is a bad driver .", "he said the nurse was kind ."],
                      "bias_type": ["gender", "gender"], "direction": ["stereo", "antistereo"]})


@pytest.fixture(scope="module")
def tiny_lms(torch_one_thread):
    from polybias.engines import scoring
    from polybias.planted import tiny_models

    return {f: scoring.wrap_language_model(*tiny_models.build_tiny_model(f), name=f) for f in ("bert", "gpt2")}


def test_nangia_scores_sum_shared_token_logprobs(tiny_lms):
    from polybias.engines import scoring

    lm = tiny_lms["bert"]
    scored = pair_scores(lm, PAIRS)
    shared = shared_token_positions(lm.tokenizer, PAIRS)
    for i, row in PAIRS.iterrows():
        pos_more, pos_less = shared[i]
        ids_more = lm.tokenizer(row.sent_more)["input_ids"]
        ids_less = lm.tokenizer(row.sent_less)["input_ids"]
        assert [ids_more[p] for p in pos_more] == [ids_less[p] for p in pos_less]  # same tokens
        full = scoring.masked_token_logprobs(lm, [row.sent_more])[0]
        assert scored.loc[i, "score_more"] == pytest.approx(full.logprob[pos_more].sum(), abs=1e-4)
    table = crows.stereotype_score(scored, n_bootstrap=0)
    assert table.loc[0, "stereotyped"] == int((scored.score_more > scored.score_less).sum())


def test_causal_jsd_is_exactly_zero_before_the_edit(tiny_lms):
    lm = tiny_lms["gpt2"]
    pairs = pd.DataFrame({"sent_more": ["the driver said the woman"], "sent_less": ["the driver said the man"],
                          "bias_type": ["gender"]})
    at = jsd_attributions(lm, pairs)
    [(pos_more, pos_less)] = shared_token_positions(lm.tokenizer, pairs, "seed-001", causal=True)
    ids_more = lm.tokenizer(pairs.sent_more[0])["input_ids"]
    ids_less = lm.tokenizer(pairs.sent_less[0])["input_ids"]
    before = np.array([ids_more[:a] == ids_less[:b] for a, b in zip(pos_more, pos_less, strict=True)])
    assert before.sum() >= 4  # "the driver said the" precedes the edit
    assert np.all(at.b[0][before] == 0.0)  # same left context: exactly no attribution
    # a pair whose shared tokens all precede the edit is a tie, not biased
    only_before = at.assign(b=[at.b[0][before]], sjsd=[float(at.b[0][before].mean())])
    assert crows.jsd_stereotype_score(only_before, n_bootstrap=0).loc[0, "ties"] == 1


def test_masked_jsd_uses_the_gold_probability(tiny_lms):
    from polybias.engines import scoring

    lm = tiny_lms["bert"]
    at = jsd_attributions(lm, PAIRS.iloc[:1])
    [(pos_more, pos_less)] = shared_token_positions(lm.tokenizer, PAIRS.iloc[:1], "seed-001")
    more = scoring.masked_token_logprobs(lm, [PAIRS.sent_more[0]], positions=[pos_more])[0]
    less = scoring.masked_token_logprobs(lm, [PAIRS.sent_less[0]], positions=[pos_less])[0]
    expected = jsd_to_onehot(more.logprob[pos_more]) - jsd_to_onehot(less.logprob[pos_less])
    assert at.b[0] == pytest.approx(expected, abs=1e-6)
    assert at.sjsd[0] == pytest.approx(expected.mean(), abs=1e-6)


def test_alignment_with_special_tokens_and_order_decides_ties():
    """Worked by hand from difflib's rule: the longest block first, among equally long
    ones the first in the first sequence."""
    cls, sep = 101, 102
    the, black, man, and_, white, both, stop = 1, 2, 3, 4, 5, 6, 7
    # [CLS] the black man and the white man both . [SEP]  /  … white … black …
    a = [cls, the, black, man, and_, the, white, man, both, stop, sep]
    b = [cls, the, white, man, and_, the, black, man, both, stop, sep]
    special = [1] + [0] * 9 + [1]
    # with the anchors, "man both . [SEP]" (4) is the longest block, then "man and the",
    # then "[CLS] the": the two colour words are the modified tokens
    assert crows.token_alignment(a, b, special, special) == ([1, 3, 4, 5, 7, 8, 9], [1, 3, 4, 5, 7, 8, 9])
    # without them, "the black man", "man and the" and "man both ." tie at 3 and the first,
    # a crossing match, wins; then only "both ." is left to share
    assert crows.token_alignment(a, b, special, special, with_special=False, autojunk=False) == \
        ([1, 2, 3, 8, 9], [5, 6, 7, 8, 9])
    # two swapped tokens: the one that comes first in the first sequence is shared
    x, y = [cls, 1, 2, sep], [cls, 2, 1, sep]
    s4 = [1, 0, 0, 1]
    assert crows.token_alignment(x, y, s4, s4) == ([1], [2])
    assert crows.token_alignment(y, x, s4, s4) == ([1], [2])  # token 2 now: the order decides
    with pytest.raises(crows.CrowsError, match="special-token mask"):
        crows.token_alignment([1, 2], [1, 2], [0], [0, 0])


def test_metric_py_alignment_follows_the_direction(tiny_lms):
    """metric.py aligns sent_less against sent_more in antistereo rows: on a pair with
    ties the shared tokens depend on the direction; the 'content' alignment does not."""
    tok = tiny_lms["bert"].tokenizer
    pair = {"sent_more": "The man paid the woman before the woman paid the man.",
            "sent_less": "The woman paid the man before the man paid the woman.", "bias_type": "gender"}
    both = pd.DataFrame([{**pair, "direction": "stereo"}, {**pair, "direction": "antistereo"}])
    stereo, anti = shared_token_positions(tok, both)
    assert stereo != anti
    content = shared_token_positions(tok, both, "content")
    assert content[0] == content[1] and anti != content[1]
    for m, s in (stereo, anti):  # aligned positions hold the same tokens
        ids_m, ids_s = tok(pair["sent_more"])["input_ids"], tok(pair["sent_less"])["input_ids"]
        assert [ids_m[p] for p in m] == [ids_s[p] for p in s] and len(m) == len(s)
    changes = alignment_changes(tok, both)
    assert changes.changed.tolist() == [False, True]
    assert changes.n_shared_after.tolist() == [len(stereo[0]), len(anti[0])]


def test_alignment_needs_a_direction(tiny_lms):
    lm = tiny_lms["bert"]
    with pytest.raises(crows.CrowsError, match="column direction"):
        pair_scores(lm, PAIRS.drop(columns="direction"))
    with pytest.raises(crows.CrowsError, match=r"direction is not one of .*rows \[1\]"):
        pair_scores(lm, PAIRS.assign(direction=["stereo", "anti"]))
    with pytest.raises(crows.CrowsError, match="unknown alignment"):
        pair_scores(lm, PAIRS, alignment="difflib")
    with pytest.raises(crows.CrowsError, match="alignment applies to"):
        pair_scores(lm, PAIRS, method="aul", alignment="content")
    # without a direction, the direction-free alignment still scores
    scored = pair_scores(lm, PAIRS.drop(columns="direction"), alignment="content")
    assert np.isfinite(scored[["score_more", "score_less"]].to_numpy()).all()


def test_bad_pairs_and_methods(tiny_lms):
    same = pd.DataFrame({"sent_more": ["a b c"], "sent_less": ["a b c"], "bias_type": ["gender"]})
    with pytest.raises(crows.CrowsError, match="identical"):
        pair_scores(tiny_lms["bert"], same)
    with pytest.raises(crows.CrowsError, match="column"):
        pair_scores(tiny_lms["bert"], PAIRS.drop(columns="bias_type"))
    with pytest.raises(crows.CrowsError, match="does not apply"):
        pair_scores(tiny_lms["gpt2"], PAIRS, method="nangia")
    with pytest.raises(crows.CrowsError, match="unknown method"):
        pair_scores(tiny_lms["bert"], PAIRS, method="magic")


def test_token_table_shows_the_most_biased_pair():
    attributed = pd.DataFrame({
        "sent_more": ["women can't drive", "gays like sex"], "bias_type": ["gender", "so"],
        "offsets": [np.array([[6, 9], [9, 11], [12, 17]]), np.array([[5, 9], [10, 13]])],
        "b": [np.array([0.1, 0.2, -0.5]), np.array([-0.1, 0.0])], "sjsd": [-0.2 / 3, -0.05]})
    attributed["biased"] = attributed.sjsd < 0
    table = crows.token_table(attributed)
    assert table.word.tolist() == ["can't", "drive"]
    assert table.direction.tolist() == ["less bias", "more bias"]
    assert crows.token_table(attributed, row=1).direction.tolist() == ["more bias", "none"]
    with pytest.raises(crows.CrowsError, match="no biased pair"):
        crows.token_table(attributed.assign(biased=False))
