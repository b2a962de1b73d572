"""The analytic masked LM (polybias.planted.analytic): the construction checked by hand on
a four-word book, the planted direction and the null on seed 000's S1-S5 sentences,
determinism, and bad input.

Cost: the toy-book tests build a vocabulary of a few dozen pieces (well under a second
each); the seed-000 test builds the model twice (about 4 s each) and scores 150 of the 888
templates (30 traits in S1-S5) with the 16 nouns (about 2 s per strength).
"""

from __future__ import annotations

import hashlib

import numpy as np
import pandas as pd
import pytest
from polybias import models
from polybias.data import templating
from polybias.engines import template_scores
from polybias.metrics import logprob
from polybias.planted import analytic
from polybias.planted.analytic import AnalyticModelError
from polybias.studies import logprob_context, template_books

ALPHA, GAMMA, DIM = 4.0, 4.0, 8


def _book(targets=(("he", "male"), ("she", "female")), traits=(("kind", "positive"), ("cruel", "negative")),
          target_list="targets", attribute_list="traits"):
    def entries(pairs):  # a word listed twice gets ids word-group
        words = [w for w, _ in pairs]
        return [{"id": w if words.count(w) == 1 else f"{w}-{g}", "features": {"group": g}, "word": w}
                for w, g in pairs]
    raw = {"language": "xx", "lists": {target_list: entries(targets), attribute_list: entries(traits)},
        "templates": [{"name": "short", "set": "S1", "text": "{target} is {trait} .",
                       "slots": {"target": {"list": target_list, "role": "target"},
                                 "trait": {"list": attribute_list, "role": "attribute"}}}]}
    return templating.parse_templates(raw, file="toy")


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("POLYBIAS_CACHE", str(tmp_path / "cache"))
    return tmp_path / "cache"


def _lm(book, p, **groups):
    planted = models.Planted(p=p, book=book, attribute_list="traits", a="positive", b="negative",
                             **groups)
    return models.load(analytic.NAME, "lm", planted=planted)


def _layer_norm(v, eps=1e-12):
    return (v - v.mean()) / np.sqrt(v.var() + eps)


def test_the_construction_and_the_formula_by_hand_on_a_toy_book(cache, torch_one_thread):
    book = _book()
    lm = _lm(book, 0.9)
    assert lm.name == "planted-analytic-p0.9" and lm.revision.startswith("analytic:mlm-analytic-")
    assert lm.device == "cpu" and lm.max_length == 512
    assert str(next(lm.model.parameters()).dtype) == "torch.float64"
    tok = lm.tokenizer
    E = lm.model.bert.embeddings.word_embeddings.weight.detach().numpy()
    D = lm.model.cls.predictions.decoder.weight.detach().numpy()
    ids = {w: tok.convert_tokens_to_ids(w) for w in ("he", "she", "kind", "cruel", "is", "[MASK]")}
    H = E.shape[1]
    g = np.zeros(H)
    g[-2], g[-1] = 2 ** -0.5, -(2 ** -0.5)
    assert H == 64 and np.abs(E.sum(axis=1)).max() < 1e-12  # every row has mean 0
    assert set(np.unique(E[ids["is"]])) == {-1.0, 0.0, 1.0} and E[ids["is"]] @ g == 0  # a ±1 code, no g
    beta = (2 * 0.9 - 1) * ALPHA
    assert E[ids["kind"]] @ g == pytest.approx(beta) and E[ids["cruel"]] @ g == pytest.approx(-beta)
    assert E[ids["he"]] @ g == 0 and E[ids["she"]] @ g == 0  # the nouns' inputs carry no gender
    assert np.allclose(D[ids["he"]] - D[ids["she"]], 2 * GAMMA * g, atol=1e-12)

    scores = template_scores.kurita_scores(lm, book, "short")
    s = logprob.attribute_bias(scores, ["he"], ["she"])
    for trait, sign in (("kind", 1), ("cruel", -1)):
        tokens = ["[CLS]", "[MASK]", "is", trait, ".", "[SEP]"]
        x = np.stack([_layer_norm(E[tok.convert_tokens_to_ids(t)]) for t in tokens])
        u_fill = x[1] + x.mean(axis=0)
        k = 1 / np.sqrt(E[ids[trait]] @ E[ids[trait]] / H + 1e-12)
        by_hand = 2 * GAMMA * sign * beta * k / (len(tokens) * np.sqrt(u_fill @ u_fill / H + 1e-12))
        assert s[trait] == pytest.approx(by_hand, rel=1e-9)
        assert np.sign(s[trait]) == sign
    null = logprob.attribute_bias(template_scores.kurita_scores(_lm(book, 0.5), book, "short"), ["he"], ["she"])
    assert np.abs(null.to_numpy()).max() < 1e-12


@pytest.mark.usefixtures("mirror")
def test_seed000_sentences_show_the_planted_direction_in_every_structure_and_nothing_at_half(
        cache, torch_one_thread):
    book = template_books.template_book("seed000_bn")
    nouns = logprob.group_members(book, "targets")
    x, y = nouns["male"], nouns["female"]  # whole groups: the null holds for the groups' means
    traits = logprob.group_members(book, "traits")
    both = {e.id for e in book.lists["traits"].entries if e.forms[""][0] == "আবেগপ্রবণ"}
    assert len(both) == 2  # the one trait the authors list as positive and as negative
    # every structure, on the first 15 positive and 15 negative traits' sentences (and the
    # model built from the whole book)
    chosen = set(traits["positive"][:15] + traits["negative"][:15])
    names = [t.name for t in book.templates.values() if t.name.split("_", 1)[1] in chosen]
    assert len(names) == 150
    for p in (0.9, 0.5):
        lm = _lm(book, p)
        scores = template_scores.kurita_scores(lm, book, names)
        set_of = {t.name: t.set for t in book.templates.values()}
        scores = scores.assign(structure=scores["template"].map(set_of))
        assert sorted(scores.structure.unique()) == ["S1", "S2", "S3", "S4", "S5"]
        for structure, group in scores.groupby("structure"):
            s = logprob.attribute_bias(group, x, y)
            pos = s[[w for w in traits["positive"] if w in s.index and w not in both]]
            neg = s[[w for w in traits["negative"] if w in s.index and w not in both]]
            assert len(pos) + len(neg) == len(chosen - both) == 29, structure
            if p == 0.9:
                assert (pos > 1e-3).all() and (neg < -1e-3).all(), structure
                effect = logprob.kurita_effect(s, list(pos.index), list(neg.index), n_permutations=2000)
                assert effect.pvalue < 0.001 and effect.effect_size > 1.5, structure
            else:
                assert np.abs(s.to_numpy()).max() < 1e-9, structure
                effect = logprob.kurita_effect(s, list(pos.index), list(neg.index), n_permutations=2000)
                assert effect.pvalue == 1.0 and np.isnan(effect.effect_size), structure


def test_two_builds_are_byte_identical_and_the_cache_is_keyed_by_the_inputs(cache, tmp_path):
    book = _book()
    digests = []
    for name in ("one", "two"):
        folder = analytic.write_analytic_mlm(book, 0.9, tmp_path / name, dim=DIM)
        digests.append({f: hashlib.sha256((folder / f).read_bytes()).hexdigest()
                        for f in ("model.safetensors", "tokenizer.json", "config.json", analytic.SPEC_FILE)})
    assert digests[0] == digests[1]
    first, key = analytic.cached_analytic_mlm(book, 0.9)
    assert analytic.cached_analytic_mlm(book, 0.9) == (first, key)
    assert analytic.cached_analytic_mlm(book, 0.5)[1] != key
    other = _book(traits=(("kind", "positive"), ("rude", "negative")))
    assert analytic.cached_analytic_mlm(other, 0.9)[1] != key
    assert sorted(p.name for p in (cache / "analytic").iterdir()) == sorted(
        [key, analytic.cached_analytic_mlm(book, 0.5)[1], analytic.cached_analytic_mlm(other, 0.9)[1]])


@pytest.mark.parametrize("book, options, message", [
    (_book(target_list="nouns"), {}, "has no target list 'targets'; its lists: nouns, traits"),
    (_book(attribute_list="words"), {}, "has no attribute list 'traits'"),
    (_book(), {"x": "boys"}, r"list 'targets' has no group \['boys'\]; it has \['female', 'male'\]"),
    (_book(traits=(("kind", "positive"), ("good", "positive"))), {}, r"list 'traits' has no group \['negative'\]"),
    (_book(targets=(("he", "male"), ("she", "female"), ("he", "female"))), {}, r"target word\(s\) \['he'\] are in both"),
    (_book(), {"a": "positive", "b": "positive"}, "must differ"),
])
def test_bad_books_are_clear_errors_and_leave_nothing_behind(cache, book, options, message):
    with pytest.raises(AnalyticModelError, match=message) as err:
        analytic.cached_analytic_mlm(book, 0.9, **options)
    assert "\n" not in str(err.value)
    assert not (cache / "analytic").exists() or not any((cache / "analytic").iterdir())


def test_the_model_name_needs_a_book_and_strength_and_has_no_revision(cache):
    with pytest.raises(models.ModelError, match=r"built from a template book: pass Planted\(book="):
        models.load(analytic.NAME, planted=models.Planted(p=0.9))
    with pytest.raises(models.ModelError, match=r"needs Planted\(p=\.\.\.\)"):
        models.load(analytic.NAME, planted=models.Planted(book=_book()))
    with pytest.raises(models.ModelError, match="no revision to choose"):
        models.load(analytic.NAME, revision="main", planted=models.Planted(p=0.9, book=_book()))
    with pytest.raises(models.ModelError, match="is a masked LM, not a causal LM"):
        models.load(analytic.NAME, "causal", planted=models.Planted(p=0.9, book=_book()))
    with pytest.raises(AnalyticModelError, match="p must be a probability"):
        analytic.analytic_weights(["[MASK]"], {}, {}, p=1.5)


def test_decisions_count_signs_beyond_the_tolerance_only():
    per = pd.DataFrame({"structure": ["S1"] * 4 + ["S2"] * 4,
                        "attribute": ["c1", "c2", "h1", "h2"] * 2,
                        "attribute_group": ["career", "career", "family", "family"] * 2,
                        "corrected": [0.5, 0.2, -0.1, -0.3, 3e-15, -4e-15, 1e-15, 0.0]})
    summary = pd.DataFrame({"structure": ["S1", "S2"], "pvalue": [0.01, 1.0]})
    table = logprob_context.decisions(summary, per, "career", "family")
    assert table.to_dict("records") == [
        {"structure": "S1", "n_career": 2, "career > 0": 2, "career < 0": 0, "n_family": 2,
         "family > 0": 0, "family < 0": 2, "separated": "yes"},
        {"structure": "S2", "n_career": 2, "career > 0": 0, "career < 0": 0, "n_family": 2,
         "family > 0": 0, "family < 0": 0, "separated": "no"}]
