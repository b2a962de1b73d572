"""Hindi and Bangla word lists (seed 003 Tables 1-2 / App. C; seed 000 Table 1 / App. C)
and the optional per-word suffix groups of the word-list schema."""

import unicodedata

import pytest
from polybias import paths, text, wordlists
from polybias.wordlists import WordListError, load_wordlist_file

SET = "    provenance: language-specific\n    source: test\n"


def _file(language):
    return paths.data_dir() / "wordlists" / language / "weat.yaml"


@pytest.mark.parametrize("language", ["hi", "bn"])
def test_words_are_nfc_in_the_language_script_with_provenance(language):
    sets, tests = load_wordlist_file(_file(language))
    for s in sets.values():
        assert s.provenance in wordlists.PROVENANCES and s.source
        for w in s.words:
            assert unicodedata.normalize("NFC", w) == w, (s.name, w)
            assert " " not in w, (s.name, w)
        text.check_script(s.words, language)
    for t in tests.values():
        assert t.language == language and t.citation


def test_hindi_has_every_seed003_test_in_both_variants():
    tests = wordlists.load_tests("hi")
    expected = {
        "gender_maths_arts", "gender_science_arts", "gender_adjectives",
        "me_gendered_verbs", "me_gendered_adjectives", "me_gendered_entities",
        "me_gendered_titles", "caste_occupations", "caste_adjectives", "religion_adjectives",
        "religion_lastnames", "me_religious_entities", "occupation_adjectives",
    }
    assert expected <= set(tests)
    # Table 1 compares translated with language-specific lists for these tests
    for name in ("gender_maths_arts", "gender_science_arts", "caste_adjectives",
                 "religion_adjectives", "religion_lastnames", "occupation_adjectives"):
        ls, tr = tests[name], tests[name + "_translated"]
        assert {s.provenance for s in ls.sets().values()} == {"language-specific"}
        assert "translated" in {s.provenance for s in tr.sets().values()}
    # gendered-form ME tests pair each masculine form with its feminine form
    for name in ("me_gendered_verbs", "me_gendered_adjectives", "me_gendered_titles"):
        t = tests[name]
        assert len(t.X.words) == len(t.Y.words) and not set(t.X.words) & set(t.Y.words)


def test_bangla_has_categories_c1_to_c9_with_own_suffix_groups():
    sets, tests = load_wordlist_file(_file("bn"))
    assert list(tests) == [f"C{i}" for i in range(1, 10)]
    assert (tests["C1"].X.name, tests["C1"].Y.name) == ("flowers", "insects")
    assert (tests["C9"].X.name, tests["C9"].A.name) == ("science", "male_names")
    for s in sets.values():
        assert set(s.suffixes) == set(s.words), f"{s.name}: every word needs its suffix group"
    groups = {g for s in sets.values() for g in map(tuple, s.suffixes.values())}
    assert len(groups) >= 10  # not one shared suffix list (seed 000 App. C)
    female = sets["female_terms"]
    assert female.forms("মা")[:2] == ["মা", "মায়ের"] and "মারা" not in female.forms("মা")
    assert {"flowers", "instruments", "male_names"} <= {
        n for n, s in sets.items() if s.provenance == "language-specific"}
    assert {"pleasant", "career", "math"} <= {n for n, s in sets.items() if s.provenance == "translated"}


def test_suffix_schema_is_optional_and_validated(tmp_path):
    base = "sets:\n  a:\n" + SET + "    words: [x, y]\n"
    path = tmp_path / "w.yaml"
    path.write_text(base)
    assert load_wordlist_file(path)[0]["a"].suffixes == {}
    path.write_text("suffix_groups:\n  g: [s1, s2]\n" + base + "    suffixes:\n      g: [x]\n")
    ws = load_wordlist_file(path)[0]["a"]
    assert ws.suffixes == {"x": ("s1", "s2")} and ws.forms("x") == ["x", "xs1", "xs2"]
    assert ws.forms("y") == ["y"]
    for body, message in [
        ("suffix_groups:\n  g: []\n" + base, "suffix group 'g' must be a non-empty list"),
        ("suffix_groups:\n  g: [s, s]\n" + base, "suffix group 'g' repeats s"),
        ("suffix_groups:\n  g: [s]\n" + base + "    suffixes:\n      h: [x]\n",
         "unknown suffix group 'h'"),
        ("suffix_groups:\n  g: [s]\n" + base + "    suffixes:\n      g: [z]\n",
         "gives suffix group 'g' to 'z', which is not one of its words"),
        ("suffix_groups:\n  g: [s]\n  h: [t]\n" + base + "    suffixes:\n      g: [x]\n      h: [x]\n",
         "gives 'x' more than one suffix group"),
    ]:
        path.write_text(body)
        with pytest.raises(WordListError, match=message):
            load_wordlist_file(path)
