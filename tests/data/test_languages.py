"""Language facts from data/languages/<lang>.yaml (polybias.data.languages)."""

import pytest
from polybias.data import languages, text


def test_the_shipped_facts_are_those_text_applies():
    bn, hi, en = (languages.language(c) for c in ("bn", "hi", "en"))
    assert (bn.normalization, bn.script.name, hi.script.name, en.normalization) == \
        ("NFKC", "Bengali", "Devanagari", "NFC")
    assert text.normalization_form("bn") == "NFKC" and text.normalization_form("fr") == "NFC"
    assert text.split_sentences("এক। দুই॥ তিন", "bn") == ["এক।", "দুই॥", "তিন"]
    with pytest.raises(text.TextError, match="not in Devanagari script"):
        text.check_script(["दो", "two"], "hi")


@pytest.mark.parametrize("body, message", [
    ("normalization: NFX\n", "normalization 'NFX' is not one of"),
    ("sentence_terminators: ''\n", "sentence_terminators must be a non-empty string"),
    ("script: {name: Thai, first: 3584}\n", "script must be {name, first, last}"),
    ("scripts: {}\n", "unknown key\\(s\\) scripts"),
    ("suffix_groups: {nouns: []}\n", "suffix_groups: suffix group 'nouns' must be a non-empty list"),
    ("suffix_groups: {nouns: [a, b, a]}\n", "suffix_groups: suffix group 'nouns' repeats a"),
    ("suffix_groups: [a, b]\n", "suffix_groups: suffix_groups must map group names to lists"),
    ("sentence_terminators: '.?'\nfull_stop: '!'\n", "full_stop must be one of the sentence_terminators"),
])
def test_a_malformed_language_file_names_the_problem(empty_project, body, message):
    folder = empty_project / "data" / "languages"
    folder.mkdir(parents=True)
    (folder / "th.yaml").write_text(body)
    with pytest.raises(languages.LanguageError, match=f"th.yaml: {message}"):
        languages.language("th")
    assert languages.language("vi") == languages.Language("vi", "Vietnamese")  # no file: defaults


def test_a_word_list_takes_its_suffix_groups_from_the_language_file(empty_project):
    """Word lists name a suffix group; its suffixes are the language's (data/languages), and
    a malformed table there is reported for the word-list file that needs it."""
    from polybias.data.wordlists import WordListError, load_wordlist_file

    (empty_project / "data" / "languages").mkdir(parents=True)
    lang = empty_project / "data" / "languages" / "th.yaml"
    lang.write_text("suffix_groups:\n  nouns: [s1, s2]\n")
    lists = empty_project / "data" / "wordlists" / "th"
    lists.mkdir(parents=True)
    (lists / "weat.yaml").write_text(
        "language: th\nsets:\n  a:\n    provenance: translated\n    source: here\n"
        "    words: [x, y]\n    suffixes:\n      nouns: [x]\n")
    ws = load_wordlist_file(lists / "weat.yaml")[0]["a"]
    assert ws.suffixes == {"x": ("s1", "s2")} and ws.forms("y") == ["y"]
    assert languages.language("th").full_stop == "."  # the first default terminator
    languages._read.cache_clear()
    lang.write_text("suffix_groups:\n  nouns: s1\n")
    with pytest.raises(WordListError, match="weat.yaml: suffix groups of language 'th': .*th.yaml: "
                                            "suffix_groups: suffix group 'nouns' must be a non-empty list"):
        load_wordlist_file(lists / "weat.yaml")


def test_the_shipped_bangla_suffix_groups_and_full_stops():
    bn = languages.language("bn")
    assert len(bn.suffix_groups) == 14 and bn.suffix_groups["person_ma"][:2] == ("য়ের", "র")
    assert [languages.language(c).full_stop for c in ("en", "bn", "hi")] == [".", "।", "।"]
