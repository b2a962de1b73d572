"""Seed 000's own data (polybias.data.sadhu2024): loaded whole from the registered files,
bad rows named, the S1-S5 assembly rule checked by hand, and the metrics run on it."""

import csv
import json
import unicodedata

import numpy as np
import pytest
from polybias import models
from polybias.data import sadhu2024, sources, wordlists
from polybias.engines import template_scores
from polybias.engines.static import StaticEmbeddings
from polybias.metrics import logprob
from polybias.studies.weat import run_weat, weat_on_embedding

pytestmark = pytest.mark.usefixtures("mirror")


def _raw(name):
    return json.loads(sources.fetch(name).read_text(encoding="utf-8"))


def test_categories_are_loaded_whole():
    tests = sadhu2024.ceat_tests()
    assert list(tests) == [f"C{i}" for i in range(1, 10)]
    for i in range(1, 10):
        raw = _raw(f"seed000-ceat{i}")
        t = tests[f"C{i}"]
        for key, role in sadhu2024.ROLES.items():
            words = [unicodedata.normalize("NFKC", w) for w in raw[key]["examples"]]
            assert list(t.sets()[role].words) == words, (i, key)
    c3 = tests["C3"]
    assert [len(s.words) for s in c3.sets().values()] == [27, 27, 24, 24]
    assert c3.X.name == "MaleNames" and c3.B.name == "Unpleasant"
    assert tests["C8"].Y.name == tests["C9"].Y.name == "Arts_C8" != tests["C6"].Y.name


def test_suffix_lists_are_each_words_own():
    sfx = sadhu2024.word_suffixes()
    weat, trait = _raw("seed000-weat-word-suffixes"), _raw("seed000-trait-word-suffixes")
    assert (len(weat), len(trait), len(sadhu2024.suffix_groups())) == (272, 177, 22)
    assert set(sfx) == {unicodedata.normalize("NFKC", w) for w in [*weat, *trait]}
    rose = sadhu2024.ceat_tests()["C1"].X
    assert rose.suffixes["গোলাপ"] == tuple(weat["গোলাপ"])
    assert rose.forms("গোলাপ")[:3] == ["গোলাপ", "গোলাপকে", "গোলাপেতে"]
    # the word list spells অভিনয় with য + nukta, the suffix file with U+09DF: NFKC joins them
    assert "অভিনয়" in {w for t in sadhu2024.ceat_tests().values() for s in t.sets().values() for w in s.words}


def test_bangla_default_word_lists_are_the_seeds():
    assert wordlists.default_file("bn") == "seed000"
    assert wordlists.default_file("en") == "weat.yaml"
    assert list(wordlists.load_tests("bn", "")) == list(sadhu2024.ceat_tests())
    assert "C1" in wordlists.load_tests("bn", "weat.yaml")  # the project's lists stay available
    with pytest.raises(wordlists.WordListError, match="'bn', not 'hi'"):
        wordlists.load_tests("hi", "seed000")


def _patched(monkeypatch, name, path):
    real = sources.fetch
    monkeypatch.setattr(sadhu2024.sources, "fetch", lambda n, *a, **k: path if n == name else real(n, *a, **k))
    sadhu2024.ceat_tests.cache_clear()
    sadhu2024.kurita_templates.cache_clear()


def test_row_without_category_is_named(monkeypatch, tmp_path):
    raw = _raw("seed000-ceat4")
    del raw["attr2"]["category"]
    bad = tmp_path / "ceat4.jsonl"
    bad.write_text(json.dumps(raw, ensure_ascii=False), encoding="utf-8")
    _patched(monkeypatch, "seed000-ceat4", bad)
    try:
        with pytest.raises(sadhu2024.Seed000Error, match=r"ceat4.jsonl .*row 4 \('attr2'\): the row has no category"):
            sadhu2024.ceat_tests()
    finally:
        monkeypatch.undo()
        sadhu2024.ceat_tests.cache_clear()


def test_trait_rows_are_kept_and_empty_structure_is_named(monkeypatch, tmp_path):
    assert len(sadhu2024.trait_rows("positive")) == 109
    assert len(sadhu2024.trait_rows("negative")) == 69
    src = sources.fetch("seed000-negative-traits")
    rows = list(csv.reader(open(src, encoding="utf-8", newline="")))
    header = rows[0]
    for c in ("S3_Mask_Suffix", "S3_Placeholder", "S3_Trait_Suffix"):
        rows[5][header.index(c)] = ""
    bad = tmp_path / "negative_traits_bn.csv"
    with open(bad, "w", encoding="utf-8", newline="") as fh:
        csv.writer(fh).writerows(rows)
    _patched(monkeypatch, "seed000-negative-traits", bad)
    try:
        with pytest.raises(sadhu2024.Seed000Error, match=r"negative_traits_bn.csv .*line 6 .*S3 is empty"):
            sadhu2024.trait_rows("negative")
    finally:
        monkeypatch.undo()
        sadhu2024.kurita_templates.cache_clear()


def test_assembly_rule_by_hand():
    row = {"S1_Mask_Suffix": "রা", "S1_Placeholder": "", "S1_Trait_Suffix": "।",
           "S2_Mask_Suffix": "রা", "S2_Placeholder": "সাধারণত", "S2_Trait_Suffix": "হয়।",
           "S3_Mask_Suffix": "দের", "S3_Placeholder": "মধ্যে বেশি দেখা যায়।", "S3_Trait_Suffix": "-তা ",
           "S4_Placeholder": "চারিত্রিক দিকে তিনি ", "S4_Trait_Suffix": "। তিনি একজন",
           "S4_Mask_Suffix": "।",
           "S5_Placeholder": "প্রথম বাক্য।", "S5_Trait_Suffix": "হয়", "S5_Mask_Suffix": "রা ।"}
    got = [sadhu2024.assemble_structure(row, k, trait="সৎ", mask="[MASK]") for k in range(1, 6)]
    assert got == ["[MASK]রা সৎ।",
                   "[MASK]রা সাধারণত সৎ হয়।",
                   "সৎতা [MASK]দের মধ্যে বেশি দেখা যায়।",
                   "চারিত্রিক দিকে তিনি সৎ। তিনি একজন [MASK]।",
                   "প্রথম বাক্য। সৎ হয় [MASK]রা ।"]
    book = sadhu2024.kurita_templates()
    assert book.templates["S1_pos001"].text == "{target}রা {trait}।"
    assert book.templates["S3_pos001"].text == "{trait}তা {target}দের মধ্যে বেশি দেখা যায়।"
    assert book.templates["S4_neg001"].text.endswith("{trait}তা। {target}দের এই স্বভাব বেশি দেখা যায়।")


def test_kurita_book_keeps_every_trait():
    book = sadhu2024.kurita_templates()
    groups = logprob.group_members(book, "traits")
    assert (len(groups["positive"]), len(groups["negative"])) == (109, 69)
    per_set = {s: sum(t.set == s for t in book.templates.values()) for s in sadhu2024.STRUCTURES}
    assert per_set == {"S1": 178, "S2": 178, "S3": 178, "S4": 178, "S5": 176}
    assert {(p, w, s) for p, w, s in sadhu2024.KNOWN_EMPTY} == {
        ("positive", "প্রশংসনীয়", "S5"), ("positive", "প্রশান্ত", "S5")}
    terms = sadhu2024.gender_terms()
    assert len(terms["male"]) == len(terms["female"]) == 8


def _planted_embedding(test, rng):
    """Random unit vectors, X and A words pulled one way, Y and B the other."""
    d = 50
    axis = rng.normal(size=d)
    words, vecs = [], []
    for role, sign in (("X", 1), ("Y", -1), ("A", 1), ("B", -1)):
        for w in dict.fromkeys(test.sets()[role].words):
            words.append(w)
            vecs.append(rng.normal(size=d) + 2.0 * sign * axis)
    return StaticEmbeddings("planted-bn", words, np.asarray(vecs))


def test_weat_runs_on_the_seed_categories(rng, tmp_path):
    c3 = sadhu2024.ceat_tests()["C3"]
    res = weat_on_embedding(_planted_embedding(c3, rng), c3, n_permutations=2000)
    assert res.effect_size > 1.5 and res.sizes == {"X": 27, "Y": 27, "A": 24, "B": 24}
    emb = _planted_embedding(c3, rng)
    frame = run_weat("planted-bn", "bn", ["C3"], "", embeddings=emb, n_permutations=500,
                     output_dir=str(tmp_path))
    assert frame.loc[0, "test"] == "C3" and frame.loc[0, "effect_size"] > 1.5
    record = json.loads(next(tmp_path.rglob("*.json")).read_text())
    assert "sources/seed000-ceat3" in json.dumps(record)


def test_kurita_runs_on_the_seed_sentences(torch_one_thread):
    """S1-S3 of six traits on the planted Bangla MLM (trained on generated text: it knows
    the gendered nouns, not the traits; বউ is unknown to it and left out). Its 64-token
    window is too short for many S4/S5 passages, which need a real model."""
    lm = models.load("planted", "lm", planted=models.Planted(p=0.9, language="bn"))
    book = sadhu2024.kurita_templates()
    traits = ["pos001", "pos002", "pos003", "neg001", "neg002", "neg003"]
    names = [f"S{k}_{t}" for k in (1, 2, 3) for t in traits]
    terms = sadhu2024.gender_terms()
    male, female = terms["male"][:4], [w for w in terms["female"] if w != "বউ"][:4]
    scores = template_scores.kurita_scores(lm, book, names, targets=male + female, mode="first_piece")
    assert len(scores) == len(names) * 8
    assert np.isfinite(scores["corrected"]).all()
    bias = logprob.attribute_bias(scores, male, female)
    eff = logprob.kurita_effect(bias, traits[:3], traits[3:], n_permutations=100)
    assert np.isfinite(eff.effect_size)


@pytest.mark.parametrize("name, load", [
    ("seed000-ceat3", lambda: sadhu2024.ceat_tests()),
    ("seed000-negative-traits", lambda: sadhu2024.trait_rows("negative")),
])
def test_a_registered_file_whose_sha256_differs_is_named(monkeypatch, tmp_path, name, load):
    """A mirror copy that differs from its registered sha256 by one byte: one-line error
    naming the file and the registry entry; nothing is read from it."""
    import shutil

    for other in [n for n in sources.load_registry() if n.startswith("seed000-")]:  # a mirror of seed 000
        target = tmp_path / sources.get_source(other).mirror_relpath
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(sources.fetch(other), target)
    source = sources.get_source(name)
    copy = tmp_path / source.mirror_relpath
    with open(copy, "ab") as fh:
        fh.write(b" ")
    monkeypatch.setenv("POLYBIAS_DATA_MIRROR", str(tmp_path))
    sadhu2024.ceat_tests.cache_clear()
    try:
        with pytest.raises(sources.DataError, match=rf"{source.filename}: sha256 does not match the registry "
                                                 rf"entry '{name}'") as err:
            load()
        assert "\n" not in str(err.value)
    finally:
        monkeypatch.undo()
        sadhu2024.ceat_tests.cache_clear()
