"""The scoring engine against straightforward references, on a tiny model of every family.

References are written here the slow, obvious way: one forward pass per masked copy
(masked LMs) and one forward pass over BOS + the whole text, or one per prefix (causal).
"""

import numpy as np
import pytest
import torch
from polybias import models
from polybias.engines import scoring
from polybias.engines.scoring import (
    ScoringError,
    TokenScores,
    causal_token_logprobs,
    masked_token_logprobs,
    pseudo_log_likelihood,
    sentence_log_likelihood,
    token_logprobs,
    wrap_language_model,
)
from polybias.planted.tiny_models import (
    CAUSAL_FAMILIES,
    FAMILIES,
    MASKED_FAMILIES,
    build_tiny_encoder,
    build_tiny_model,
)

TEXTS = [
    "The doctor said that she would be late.",
    "Unbelievably, the smallest photographers won the competition!",
    "He cooked dinner.",
    "My neighbour couldn't believe the price of petrol went up again.",
    "Zyx quibbles.",  # out-of-corpus word: many pieces, maybe [UNK]
]
TOL = 1e-4


@pytest.fixture(scope="module", autouse=True)
def one_thread(torch_one_thread):
    """Every test here runs torch on one thread (see conftest)."""


@pytest.fixture(scope="module")
def lms(one_thread):
    return {f: wrap_language_model(*build_tiny_model(f), name=f"tiny-{f}") for f in FAMILIES}


def special_mask(lm, text):
    return np.asarray(lm.tokenizer(text, return_special_tokens_mask=True)["special_tokens_mask"], bool)


def ref_masked(lm, text, positions=None, l2r=False):
    """One forward per masked copy, full logits, log-softmax over the vocabulary."""
    tok, model = lm.tokenizer, lm.model
    enc = tok(text)
    ids, words = enc["input_ids"], enc.word_ids()
    special = special_mask(lm, text)
    out = np.full(len(ids), np.nan)
    todo = [p for p in range(len(ids)) if not special[p]] if positions is None else positions
    with torch.no_grad():
        for p in todo:
            x = torch.tensor([ids])
            x[0, p] = tok.mask_token_id
            if l2r:
                for q in range(p + 1, len(ids)):
                    if words[q] is not None and words[q] == words[p]:
                        x[0, q] = tok.mask_token_id
            logits = model(input_ids=x).logits[0, p].double()
            out[p] = torch.log_softmax(logits, -1)[ids[p]].item()
    return out


def ref_causal(lm, text):
    """One forward over [BOS] + text (BOS = the tokenizer's own, else bos/eos)."""
    tok, model = lm.tokenizer, lm.model
    ids = tok(text)["input_ids"]
    own_bos = ids[0] == tok.bos_token_id and special_mask(lm, text)[0]
    x = ids if own_bos else [tok.bos_token_id if tok.bos_token_id is not None else tok.eos_token_id] + ids
    with torch.no_grad():
        lp = torch.log_softmax(model(input_ids=torch.tensor([x])).logits[0].double(), -1)
    shift = len(x) - len(ids)
    out = np.full(len(ids), np.nan)
    for j in range(len(ids)):
        if j + shift >= 1 and not special_mask(lm, text)[j]:
            out[j] = lp[j + shift - 1, ids[j]].item()
    return out


def assert_scores(got: TokenScores, want: np.ndarray, tol=TOL):
    assert got.logprob.shape == want.shape
    np.testing.assert_array_equal(np.isnan(got.logprob), np.isnan(want))
    np.testing.assert_allclose(got.logprob, want, atol=tol, rtol=0, equal_nan=True)


# ------------------------------------------------------------------ (a) masked LMs

@pytest.mark.parametrize("family", MASKED_FAMILIES)
def test_pll_equals_one_mask_per_forward(lms, family):
    lm = lms[family]
    got = masked_token_logprobs(lm, TEXTS, batch_tokens=200)
    for text, scores in zip(TEXTS, got, strict=True):
        ref = ref_masked(lm, text)
        assert_scores(scores, ref)
        assert scores.text == text
        assert scores.input_ids.tolist() == lm.tokenizer(text)["input_ids"]
        assert len(scores.tokens) == len(scores.offsets) == len(ref)
    pll = pseudo_log_likelihood(lm, TEXTS)
    np.testing.assert_allclose(pll, [np.nansum(ref_masked(lm, t)) for t in TEXTS], atol=1e-3)
    mean = pseudo_log_likelihood(lm, TEXTS, reduction="mean")
    np.testing.assert_allclose(mean, [np.nanmean(s.logprob) for s in got], atol=1e-6)
    np.testing.assert_allclose(sentence_log_likelihood(lm, TEXTS), pll, atol=1e-6)


@pytest.mark.parametrize("family", MASKED_FAMILIES)
def test_positions_mask_only_those_tokens(lms, family):
    lm = lms[family]
    rng = np.random.default_rng(0)
    positions = []
    for text in TEXTS:
        content = np.flatnonzero(~special_mask(lm, text))
        positions.append(sorted(rng.choice(content, size=max(1, len(content) // 3), replace=False).tolist()))
    got = masked_token_logprobs(lm, TEXTS, positions=positions, batch_tokens=100)
    for text, pos, scores in zip(TEXTS, positions, got, strict=True):
        ref = ref_masked(lm, text, positions=pos)
        assert_scores(scores, ref)
        assert np.flatnonzero(~np.isnan(scores.logprob)).tolist() == pos


@pytest.mark.parametrize("family", MASKED_FAMILIES)
def test_within_word_l2r_equals_reference(lms, family):
    lm = lms[family]
    got = masked_token_logprobs(lm, TEXTS, within_word_l2r=True, batch_tokens=300)
    plain = masked_token_logprobs(lm, TEXTS)
    changed = 0
    for text, scores, orig in zip(TEXTS, got, plain, strict=True):
        assert_scores(scores, ref_masked(lm, text, l2r=True))
        words = lm.tokenizer(text).word_ids()
        for p, w in enumerate(words):
            last_piece = w is not None and (p + 1 == len(words) or words[p + 1] != w)
            if last_piece:  # nothing to its right: same as the original PLL
                assert scores.logprob[p] == pytest.approx(orig.logprob[p], abs=TOL)
            elif w is not None:
                changed += abs(scores.logprob[p] - orig.logprob[p]) > 1e-3
    assert changed > 0  # the texts hold multi-piece words, and masking them matters
    both = pseudo_log_likelihood(lm, TEXTS[:2], within_word_l2r=True, positions=[[1], [2]])
    assert both[0] == pytest.approx(ref_masked(lm, TEXTS[0], [1], l2r=True)[1], abs=TOL)


# ------------------------------------------------------------------ (b) causal LMs

@pytest.mark.parametrize("family", CAUSAL_FAMILIES)
def test_causal_equals_one_forward_reference(lms, family):
    lm = lms[family]
    got = causal_token_logprobs(lm, TEXTS, batch_tokens=50)
    for text, scores in zip(TEXTS, got, strict=True):
        assert_scores(scores, ref_causal(lm, text))
    np.testing.assert_allclose(sentence_log_likelihood(lm, TEXTS),
                               [np.nansum(ref_causal(lm, t)) for t in TEXTS], atol=1e-3)
    np.testing.assert_allclose(sentence_log_likelihood(lm, TEXTS, reduction="mean"),
                               [np.nanmean(s.logprob) for s in got], atol=1e-6)


PAIRS_A = ["The doctor said that she would be late.", "He cooked dinner.", "He cooked dinner.",
           "My neighbour couldn't believe the price", "Zyx quibbles."]
PAIRS_B = ["The doctor said that he would be late.", "She cooked dinner.", "He cooked dinner.",
           "My neighbour couldn't believe the price of petrol went up again.", "Zyx"]


@pytest.mark.parametrize("family", CAUSAL_FAMILIES)
def test_causal_pairs_equal_the_one_forward_reference(lms, family):
    """Each pair's shared prefix computed once (one row, a 4-D mask, position ids): the same
    log-probabilities as one forward over BOS + each text, for pairs that differ in the
    middle, at the first word, not at all, and where one is a prefix of the other; batches
    of several rows and of one."""
    lm = lms[family]
    for budget in (None, 30):
        got_a, got_b = scoring.causal_pair_token_logprobs(lm, PAIRS_A, PAIRS_B, batch_tokens=budget)
        for text, scores in zip(PAIRS_A + PAIRS_B, got_a + got_b, strict=True):
            assert scores.text == text
            assert_scores(scores, ref_causal(lm, text))


@pytest.mark.parametrize("family", CAUSAL_FAMILIES)
def test_causal_groups_of_three_equal_the_one_forward_reference(lms, family):
    """StereoSet's way: three candidates of one context in one row, each seeing the shared
    prefix and itself only; groups of one, two and three texts in one call."""
    lm = lms[family]
    groups = [["The doctor said that she would be late.", "The doctor said that he would be late.",
               "The doctor said that it would be late."], ["He cooked dinner."],
              ["Zyx quibbles.", "Zyx quibbles!"]]
    got = scoring.causal_group_token_logprobs(lm, groups, batch_tokens=40)
    assert [len(g) for g in got] == [3, 1, 2]
    for group, scores in zip(groups, got, strict=True):
        for text, s in zip(group, scores, strict=True):
            assert s.text == text
            assert_scores(s, ref_causal(lm, text))
    with pytest.raises(ScoringError, match="every group needs at least one text"):
        scoring.causal_group_token_logprobs(lm, [["a"], []])


@pytest.mark.parametrize("family", CAUSAL_FAMILIES)
def test_causal_pairs_without_prefix_score_from_the_last_shared_token(lms, family):
    lm = lms[family]
    got_a, got_b = scoring.causal_pair_token_logprobs(lm, PAIRS_A, PAIRS_B, prefix=False)
    for k, (a, b) in enumerate(zip(got_a, got_b, strict=True)):
        c = scoring._common_prefix(a.input_ids, b.input_ids)
        for text, scores in ((PAIRS_A[k], a), (PAIRS_B[k], b)):
            ref = ref_causal(lm, text)
            scored = ~np.isnan(scores.logprob)
            if PAIRS_A[k] == PAIRS_B[k]:  # identical: scored in full
                assert np.array_equal(scored, ~np.isnan(ref))
            else:
                assert not scored[:max(c - 1, 0)].any() and scored[c:].all() or len(scores.logprob) <= c
            np.testing.assert_allclose(scores.logprob[scored], ref[scored], atol=TOL)


def test_causal_pairs_longer_than_a_sliding_window_are_scored_apart(lms, monkeypatch):
    """A window shorter than a pair's row: the texts are scored apart (the reference path),
    never through a 4-D mask that would let tokens see past the window."""
    lm = lms["llama"]
    monkeypatch.setattr(lm.model.config, "sliding_window", 4, raising=False)
    calls = []
    real = scoring._tree_inputs
    monkeypatch.setattr(scoring, "_tree_inputs", lambda *a: calls.append(1) or real(*a))
    got_a, got_b = scoring.causal_pair_token_logprobs(lm, PAIRS_A, PAIRS_B)
    assert not calls
    for text, scores in zip(PAIRS_A + PAIRS_B, got_a + got_b, strict=True):
        assert_scores(scores, ref_causal(lm, text))


def test_causal_pairs_refuse_a_model_that_ignores_the_mask(lms, monkeypatch):
    """A model whose attention drops the 4-D mask would give B the context of A's rest: the
    check on the first pair raises instead of returning other numbers."""
    lm = lms["llama"]
    real = scoring._tree_inputs

    def ignored(branch, lengths, width):
        mask = real(branch, lengths, width)
        return torch.ones_like(mask).tril() & mask.any(-1, keepdim=True)  # plain causal

    monkeypatch.setattr(scoring, "_tree_inputs", ignored)
    with pytest.raises(ScoringError, match="shared prefix once differs from scoring them "
                                           "apart.*does not take a 4-D mask"):
        scoring.causal_pair_token_logprobs(lm, PAIRS_A[:2], PAIRS_B[:2])
    with pytest.raises(ScoringError, match="as many texts in each list: 2 and 1"):
        scoring.causal_pair_token_logprobs(lm, PAIRS_A[:2], PAIRS_B[:1])
    with pytest.raises(ScoringError, match="causal LM"):
        scoring.causal_pair_token_logprobs(lms["bert"], PAIRS_A[:1], PAIRS_B[:1])


@pytest.mark.parametrize("family", CAUSAL_FAMILIES)
def test_causal_equals_loop_over_prefixes(lms, family):
    """Each token's probability from a separate forward over BOS + its prefix."""
    lm = lms[family]
    tok, text = lm.tokenizer, TEXTS[0]
    ids = tok(text)["input_ids"]
    bos = tok.bos_token_id if tok.bos_token_id is not None else tok.eos_token_id
    content = ids[1:] if family == "llama" else ids  # llama's tokenizer adds <s> itself
    got = causal_token_logprobs(lm, [text])[0].logprob
    for j, token in enumerate(content):
        prefix = torch.tensor([[bos] + content[:j]])
        with torch.no_grad():
            lp = torch.log_softmax(lm.model(input_ids=prefix).logits[0, -1].double(), -1)
        assert got[j + len(ids) - len(content)] == pytest.approx(lp[token].item(), abs=TOL)


def test_bos_handling(lms):
    gpt2, llama = lms["gpt2"], lms["llama"]
    g = causal_token_logprobs(gpt2, ["He cooked dinner."])[0]
    assert not np.isnan(g.logprob).any()  # GPT-2: every token scored, the first given <|endoftext|>
    assert g.tokens[0] != gpt2.tokenizer.bos_token
    ll = causal_token_logprobs(llama, ["He cooked dinner."])[0]
    assert ll.tokens[0] == "<s>" and np.isnan(ll.logprob[0]) and not np.isnan(ll.logprob[1:]).any()
    np.testing.assert_array_equal(ll.offsets[0], [0, 0])


def test_first_token_scoring_refuses_a_tokenizer_with_its_own_bos_and_its_advice_is_the_fix(lms):
    with pytest.raises(ScoringError, match="add no BOS.*use bos='prepend'"):
        causal_token_logprobs(lms["llama"], ["He cooked dinner."], bos="first-token")
    fixed = causal_token_logprobs(lms["llama"], ["He cooked dinner."], bos="prepend")[0]
    assert not np.isnan(fixed.logprob[1:]).any()
    assert not np.isnan(causal_token_logprobs(lms["gpt2"], ["He cooked dinner."], bos="first-token")[0]
                        .logprob[1:]).any()


# ------------------------------------------------------------------ (c) batching

@pytest.mark.parametrize("family", FAMILIES)
def test_batching_does_not_change_scores(lms, family):
    lm = lms[family]
    small = token_logprobs(lm, TEXTS, batch_tokens=64)
    large = token_logprobs(lm, TEXTS, batch_tokens=100_000)
    order = [3, 0, 4, 2, 1]
    shuffled = token_logprobs(lm, [TEXTS[i] for i in order], batch_tokens=300)
    for k, i in enumerate(order):
        np.testing.assert_allclose(small[i].logprob, large[i].logprob, atol=1e-5, equal_nan=True)
        np.testing.assert_allclose(shuffled[k].logprob, large[i].logprob, atol=1e-5, equal_nan=True)
        assert shuffled[k].text == TEXTS[i]
    again = token_logprobs(lm, TEXTS, batch_tokens=64)  # same inputs: identical numbers
    for a, b in zip(small, again, strict=True):
        np.testing.assert_array_equal(a.logprob, b.logprob)


class ForwardSpy:
    """Records the (rows, width) of every forward pass of a model."""

    def __init__(self, model):
        self.shapes = []
        self.handle = model.register_forward_pre_hook(self, with_kwargs=True)

    def __call__(self, module, args, kwargs):
        x = kwargs.get("input_ids", args[0] if args else None)
        self.shapes.append(tuple(x.shape))
        mask = kwargs.get("attention_mask")
        assert mask is not None and mask.shape == x.shape


@pytest.mark.parametrize("family", ["bert", "gpt2"])
def test_batches_respect_the_token_budget(lms, family):
    lm = lms[family]
    texts = TEXTS * 4
    lengths = [len(lm.tokenizer(t)["input_ids"]) for t in texts]
    if lm.kind == "mlm":  # one row per content token, as long as its text
        rows = [int((~special_mask(lm, t)).sum()) for t in texts]
    else:  # one row per text, plus the prepended BOS
        rows, lengths = [1] * len(texts), [n + 1 for n in lengths]
    n_rows, real = sum(rows), sum(r * n for r, n in zip(rows, lengths, strict=True))
    spy = ForwardSpy(lm.model)
    try:
        token_logprobs(lm, texts, batch_tokens=256)
    finally:
        spy.handle.remove()
    assert all(r * w <= 256 for r, w in spy.shapes)
    assert 1 < len(spy.shapes) < n_rows  # batched: neither one forward per row nor all at once
    assert sum(r for r, _ in spy.shapes) == n_rows
    padded = sum(r * w for r, w in spy.shapes)
    # sorted by length: little padding (MLM batches hold many rows of one length; the
    # 20 causal rows of 5 lengths share a few batches)
    assert real <= padded <= (1.1 if lm.kind == "mlm" else 1.5) * real


def test_one_long_row_over_budget_runs_alone(lms):
    got = masked_token_logprobs(lms["bert"], [TEXTS[1]], batch_tokens=1)
    assert_scores(got[0], ref_masked(lms["bert"], TEXTS[1]))


# ------------------------------------------------------------------ (d) errors

def test_model_without_lm_head_is_refused():
    model, tok = build_tiny_encoder("bert")
    with pytest.raises(ScoringError, match=r"'enc'.*BertModel.*no MLM or causal LM head"):
        wrap_language_model(model, tok, name="enc")
    with pytest.raises(ScoringError, match="no MLM or causal LM head"):
        wrap_language_model(model, tok, name="enc", kind="mlm")
    gmodel, gtok = build_tiny_encoder("gpt2")
    with pytest.raises(ScoringError, match="GPT2Model"):
        wrap_language_model(gmodel, gtok, name="g")


def test_kind_is_inferred_and_checked(lms):
    assert {f: lms[f].kind for f in FAMILIES} == {
        **dict.fromkeys(MASKED_FAMILIES, "mlm"), **dict.fromkeys(CAUSAL_FAMILIES, "causal")}
    assert all(lm.max_length == 64 for lm in lms.values())
    with pytest.raises(ScoringError, match="not 'causal'"):
        wrap_language_model(lms["bert"].model, lms["bert"].tokenizer, "b", kind="causal")
    with pytest.raises(ScoringError, match="kind must be one of"):
        wrap_language_model(lms["bert"].model, lms["bert"].tokenizer, "b", kind="seq2seq")


@pytest.mark.parametrize("family", FAMILIES)
def test_over_long_text_names_index_and_length(lms, family):
    lm = lms[family]
    long = " ".join(["the"] * 80)
    n = len(lm.tokenizer(long)["input_ids"]) + (1 if family == "gpt2" else 0)
    with pytest.raises(ScoringError, match=rf"text 1 is {n} tokens long .* at most 64"):
        token_logprobs(lm, ["He cooked dinner.", long])


@pytest.mark.parametrize("family", ["roberta", "gpt2", "llama"])
def test_text_of_exactly_max_length_is_scored(lms, family):
    lm = lms[family]
    words = ["the"]
    budget = lm.max_length - (1 if family == "gpt2" else 0)  # GPT-2: the prepended BOS counts
    while len(lm.tokenizer(" ".join(words))["input_ids"]) < budget:
        words.append("the")
    text = " ".join(words)
    assert len(lm.tokenizer(text)["input_ids"]) == budget
    scores = token_logprobs(lm, [text])[0]
    assert np.isfinite(scores.logprob[~special_mask(lm, text)]).all()
    with pytest.raises(ScoringError, match="at most 64"):
        token_logprobs(lm, [text + " the"])


def test_empty_and_non_string_texts(lms):
    for lm in (lms["bert"], lms["gpt2"]):
        with pytest.raises(ScoringError, match="text 1 is empty"):
            token_logprobs(lm, ["fine.", ""])
        with pytest.raises(ScoringError, match="text 0 is empty"):
            sentence_log_likelihood(lm, ["   "])
        with pytest.raises(ScoringError, match="not a string"):
            token_logprobs(lm, ["fine.", float("nan")])
        with pytest.raises(ScoringError, match="list of strings"):
            token_logprobs(lm, "a single string")


def test_bad_positions(lms):
    lm = lms["bert"]
    n = len(lm.tokenizer(TEXTS[0])["input_ids"])
    with pytest.raises(ScoringError, match=rf"position {n} of text 0 is out of range.*{n} tokens"):
        masked_token_logprobs(lm, TEXTS[:1], positions=[[1, n]])
    with pytest.raises(ScoringError, match="position -1 of text 1 is out of range"):
        masked_token_logprobs(lm, TEXTS[:2], positions=[[1], [-1]])
    with pytest.raises(ScoringError, match=r"position 0 of text 0 is the special token '\[CLS\]'"):
        masked_token_logprobs(lm, TEXTS[:1], positions=[[0, 1]])
    with pytest.raises(ScoringError, match="one list of token indices per text"):
        masked_token_logprobs(lm, TEXTS[:2], positions=[[1]])
    with pytest.raises(ScoringError, match="integers"):
        masked_token_logprobs(lm, TEXTS[:1], positions=[[1.5]])
    with pytest.raises(ScoringError, match="masked LMs only"):
        token_logprobs(lms["gpt2"], TEXTS[:1], positions=[[1]])
    with pytest.raises(ScoringError, match="masked LMs only"):
        sentence_log_likelihood(lms["gpt2"], TEXTS[:1], within_word_l2r=True)


def test_wrong_kind_reduction_and_budget(lms):
    with pytest.raises(ScoringError, match="sentence_log_likelihood"):
        pseudo_log_likelihood(lms["gpt2"], TEXTS[:1])
    with pytest.raises(ScoringError, match="masked LM"):
        masked_token_logprobs(lms["llama"], TEXTS[:1])
    with pytest.raises(ScoringError, match="causal LM"):
        causal_token_logprobs(lms["bert"], TEXTS[:1])
    with pytest.raises(ScoringError, match="reduction"):
        sentence_log_likelihood(lms["bert"], TEXTS[:1], reduction="max")
    with pytest.raises(ScoringError, match="batch_tokens"):
        token_logprobs(lms["bert"], TEXTS[:1], batch_tokens=0)


def test_the_token_budget_has_one_name(lms):
    """``batch_tokens`` on the models and on every engine call; the old scoring keyword
    is refused with the new name, not taken as an alias."""
    for lm in (lms["bert"], lms["gpt2"]):
        with pytest.raises(TypeError, match="max_batch_tokens= is now batch_tokens="):
            token_logprobs(lm, TEXTS[:1], max_batch_tokens=64)
    with pytest.raises(TypeError, match="max_batch_tokens= is now batch_tokens="):
        pseudo_log_likelihood(lms["bert"], TEXTS[:1], max_batch_tokens=64)
    assert lms["bert"].batch_tokens == lms["gpt2"].batch_tokens == 8192


def test_float16_only_on_cuda(tmp_path):
    model, tok = build_tiny_model("bert")
    with pytest.raises(ScoringError, match="float16.*CUDA only"):
        wrap_language_model(model.half(), tok, "half")
    model, tok = build_tiny_model("gpt2")
    model.save_pretrained(tmp_path)
    tok.save_pretrained(tmp_path)
    with pytest.raises(models.ModelError, match="float16 is supported on CUDA only"):
        models.load(str(tmp_path), dtype=torch.float16)


# ------------------------------------------------------------------ (e) distribution_fn

@pytest.mark.parametrize("family", ["albert", "llama"])
def test_distribution_fn_sees_the_full_distribution(lms, family):
    lm = lms[family]
    calls = []

    def fn(log_probs, gold):
        assert isinstance(log_probs, torch.Tensor) and log_probs.dtype == torch.float32
        assert log_probs.shape == (lm.model.config.vocab_size,)
        calls.append((float(log_probs.exp().sum()), gold))
        p = log_probs.double().exp()
        return float(-(p * log_probs.double()).sum()) + 1000.0 * float(p[gold])  # entropy + marker

    got = token_logprobs(lm, TEXTS[:3], distribution_fn=fn, batch_tokens=80)
    scored = [(s, j) for s in got for j in np.flatnonzero(~np.isnan(s.logprob))]
    assert len(calls) == len(scored)
    np.testing.assert_allclose([c[0] for c in calls], 1.0, atol=1e-5)
    assert sorted(c[1] for c in calls) == sorted(int(s.input_ids[j]) for s, j in scored)
    for s in got:
        np.testing.assert_array_equal(np.isnan(s.extra), np.isnan(s.logprob))
        ok = ~np.isnan(s.logprob)
        entropy = s.extra[ok] - 1000.0 * np.exp(s.logprob[ok])
        assert ((entropy > 0) & (entropy < np.log(lm.model.config.vocab_size) + 1e-4)).all()
    assert token_logprobs(lm, TEXTS[:1])[0].extra is None


def test_distribution_fn_gold_logprob_lands_in_extra(lms):
    lm = lms["bert"]
    got = masked_token_logprobs(lm, TEXTS, distribution_fn=lambda lp, g: lp[g].item())
    for s in got:
        np.testing.assert_allclose(s.extra, s.logprob, atol=1e-6, equal_nan=True)


# ------------------------------------------------------------------ loading

@pytest.mark.parametrize("family", ["roberta", "llama"])
def test_load_from_local_directory(tmp_path, monkeypatch, lms, family):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    lm = lms[family]
    lm.model.save_pretrained(tmp_path)
    lm.tokenizer.save_pretrained(tmp_path)
    loaded = models.load(str(tmp_path))
    assert loaded.kind == lm.kind and loaded.max_length == lm.max_length == 64
    a = sentence_log_likelihood(lm, TEXTS)
    b = sentence_log_likelihood(loaded, TEXTS)
    np.testing.assert_allclose(a, b, atol=1e-5)


def test_missing_models_are_model_errors(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(models.ModelError, match="unknown model .*nowhere"):
        models.load(str(tmp_path / "nowhere"))
    with pytest.raises(models.ModelError, match="model 'no-such-org/no-such-model' is not in the "
                                                "offline Hugging Face cache"):
        models.load("no-such-org/no-such-model")
    with pytest.raises(models.ModelError, match="kind must be one of"):
        models.load(str(tmp_path), kind="decoder")


def test_load_refuses_encoder_only_checkpoints(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    model, tok = build_tiny_encoder("bert")
    model.save_pretrained(tmp_path)
    tok.save_pretrained(tmp_path)
    with pytest.raises(models.ModelError, match="masked or causal"):
        models.load(str(tmp_path))


def test_public_names():
    for name in ("LanguageModel", "ScoringError", "wrap_language_model",
                 "TokenScores", "masked_token_logprobs", "causal_token_logprobs", "token_logprobs",
                 "pseudo_log_likelihood", "sentence_log_likelihood"):
        assert hasattr(scoring, name)
    assert issubclass(ScoringError, ValueError)


def test_bin_weights_load_by_default(tmp_path, monkeypatch, lms):
    """A plain ``pytorch_model.bin`` state dict loads through the safe weights-only reader
    (GreekBERT, ParsBERT, BanglaBERT ship only ``.bin``), with the same scores."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    lm = lms["bert"]
    torch.save(lm.model.state_dict(), tmp_path / "pytorch_model.bin")
    lm.model.config.architectures = ["BertForMaskedLM"]
    lm.model.config.save_pretrained(tmp_path)
    lm.tokenizer.save_pretrained(tmp_path)
    loaded = models.load(str(tmp_path), dtype="float32")
    assert loaded.load_info.weights_format == "bin" and loaded.device == "cpu" or \
        loaded.device.startswith("cuda")
    np.testing.assert_allclose(sentence_log_likelihood(loaded, TEXTS[:2]),
                               sentence_log_likelihood(lm, TEXTS[:2]), atol=1e-5)
    with pytest.raises(models.ModelError, match="unknown dtype 'float17'"):
        models.load(str(tmp_path), dtype="float17")


@pytest.mark.parametrize("family", CAUSAL_FAMILIES)
def test_the_pll_of_a_causal_lm_advises_sentence_log_likelihood_which_scores_it(lms, family):
    lm = lms[family]
    with pytest.raises(ScoringError, match=rf"tiny-{family} is a causal LM; use sentence_log_likelihood"):
        pseudo_log_likelihood(lm, TEXTS[:2])
    scores = sentence_log_likelihood(lm, TEXTS[:2])
    assert scores.shape == (2,) and np.isfinite(scores).all() and (scores < 0).all()
