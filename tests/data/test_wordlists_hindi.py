"""Seed 003's Hindi WEAT lists: one source of truth (``hi/weat.yaml``, included by
``hi/debias.yaml``), equal to App. C as printed, and the word-list ``include`` schema."""

import pytest
from polybias import paths
from polybias.data import wordlists
from polybias.data.wordlists import WordListError, load_wordlist_file
from polybias.studies import debiasing

# Every distinct list of seed 003 App. C (Tables 7-9) as the paper prints it, in Latin
# transliteration, in the order of the tables. The 'Female titles' cell of Table 7 is not
# legible.
APPENDIX_C = [
    "ganit, beejganit, jyamiti, kalan, sameekaran, ganna, sankhya, yog",
    "kavita, kala, nritya, sahitya, upanyas, raag, naatak, murti",
    "purush, aadmi, ladka, bhai, pati, chacha, maama, beta",
    "mahila, aurat, ladki, behen, patni, chachi, maami, beti",
    "vigyan, praudyogiki, bhautik, rasayan, prayogshala, niyam, prayog, khagol",
    "kavita, kala, naach, nritya, sahitya, upanyas, raag, naatak",
    "bhai, chacha, daada, beta, purush, pati, aadmi, ladka",
    "behen, chachi, daadi, beti, mahila, patni, aurat, ladki",
    "krodhit, shramik, takatwar, nipun, veer, sahsi, diler",
    "sundar, sharm, aakarshak, manmohak, madhur, gharelu, kamzor",
    "gaya, aaya, khelta, baitha, leta, rehta, deta, padhta",
    "gayi, aayi, khelti, baithi, leti, rehti, deti, padhti",
    "accha, bura, ganda, lamba, chota, meetha, neela, bada, pehla",
    "acchi, buri, gandi, lambi, choti, meethi, neeli, badi, pehli",
    "adhyapak, shishya, vidvan, saadhu, kavi, chhatr, pradhanacharya, mahoday",
    "pajama, ghada, kurta, phool, kapda, pahiya, yantra, putla, taala",
    "almaari, chadar, poshaak, bijli, buddhi, tasvir, ghadi, raakhi, kameez",
    "vyapar, jameendar, sunar, guru, munim, chikitsak, pandit",
    "safai, dhobi, mallah, maali, naai, mochi, machuara",
    "thakur, brahmin, rajput, kshatriya, arya, jaat, baniya, kayastha",
    "dalit, shudra, bhangi, chamaar, valimiki, harijan, chuhda, jatav",
    "ameer, gyani, veer, taakatvar, sundar, ucch, sahsi",
    "neech, ghrana, ganda, kamzor, gareeb, agyani, nirbal",
    "shikshit, veer, ucch, sahsi, shant, dayalu, safal",
    "neech, ghrana, ashikshit, hinsak, krodhi, nirdayi, atyachaari",
    "hindu, bhagwan, geeta, brahmin, pandit, mandir, ram, vrat",
    "musalman, allah, quran, shiya, sunni, masjid, muhammad, roza",
    "sharma, verma, agrawal, gupta, chauhan, bansal, mittal, singh, chaudhary",
    "yusuf, malik, khan, ansari, sheikh, abdullah, ahmad, pathan, mirza",
    "bhagwan, geeta, brahmin, pandit, mandir, ram, vrat",
    "allah, quran, shiya, sunni, masjid, muhammad, roza",
    "hindu, hindutva",
    "musalman, islam",
    "ameer, gyani, veer, takatvar, sundar, ucchh, sahsi",
    "neech, ganda, ghrana, kamzor, gareeb, agyani, nirbal",
    "banker, vyavsayi, engineer, vakeel, vaigyanik, chaalak, abhineta, manager",
    "lohar, jalvahak, kisaan, gwala, charwaaha, kumhar, jameendar, julaha",
]
NOT_IN_PAPER = {"female_titles"}


def _hi_sets():
    return load_wordlist_file(paths.data_dir() / "wordlists" / "hi" / "weat.yaml")[0]


def _printed():
    return [tuple(w.strip() for w in row.split(",")) for row in APPENDIX_C]


def test_language_specific_hindi_lists_are_appendix_c_as_printed():
    sets = _hi_sets()
    ls = {n: s for n, s in sets.items() if s.provenance == "language-specific"}
    printed = _printed()
    for name, s in ls.items():
        if name in NOT_IN_PAPER:
            assert not s.transliteration and s.source.startswith("NOT FROM THE PAPER"), name
            continue
        assert s.transliteration in printed, (name, s.transliteration)
        assert s.source.startswith("seed 003 App. C Table"), name
    # every printed list is some set's list: nothing of App. C left out
    assert set(printed) == {s.transliteration for s in ls.values() if s.transliteration}
    # one printed word is one Devanagari word wherever it appears
    seen = {}
    for s in ls.values():
        for latin, word in zip(s.transliteration, s.words, strict=False):
            assert seen.setdefault(latin, word) == word, (latin, word, seen[latin])


def test_hindi_tests_follow_appendix_c_rows_and_the_reported_keys():
    import pandas as pd

    tests = wordlists.load_tests("hi")
    reported = pd.read_csv(paths.paper_dir() / "reported" / "malik2022_hindi_weat.csv")
    assert set(reported["test"]) <= set(tests)
    # targets are the first two lists of an App. C row, attributes the last two
    assert [tests["caste_occupations"].sets()[r].name for r in "XYAB"] == [
        "upper_caste_occupations", "lower_caste_occupations", "upper_caste_names", "lower_caste_names"]
    assert [tests["religion_lastnames"].sets()[r].name for r in "XYAB"] == [
        "positive_adjectives", "negative_adjectives", "hindu_lastnames", "muslim_lastnames"]
    assert tests["occupation_adjectives"].A.name == "urban_occupations"
    # a translated test swaps in the translated adjectives and keeps the other lists
    assert tests["caste_adjectives_translated"].A == tests["caste_adjectives"].A


def test_debias_spec_runs_on_the_same_hindi_lists():
    spec = debiasing.load_spec("hi")
    weat = wordlists.load_tests("hi")
    for table in spec.tables.values():
        for t in table["tests"]:
            test = debiasing.resolve_test(spec, t["test"])
            assert test.sets() == weat[t["test"]].sets(), t["test"]
    assert spec.sets["upper_caste_names"].transliteration[0] == "thakur"


def _write(folder, name, body):
    (folder / name).write_text(body, encoding="utf-8")
    return folder / name


SET = "    provenance: language-specific\n    source: test\n"


def test_include_takes_the_other_files_sets_and_tests(tmp_path):
    _write(tmp_path, "base.yaml", "sets:\n  a:\n" + SET + "    words: [x, y]\n"
           "    transliteration: [ex, why]\n  b:\n" + SET + "    words: [z]\n"
           "tests:\n  t: {X: a, Y: b, A: a, B: b}\n")
    sets, tests = load_wordlist_file(_write(
        tmp_path, "top.yaml", "include: [base.yaml]\nsets:\n  c:\n" + SET + "    words: [w]\n"
        "tests:\n  u: {X: a, Y: c, A: b, B: c}\n"))
    assert set(sets) == {"a", "b", "c"} and set(tests) == {"t", "u"}
    assert sets["a"].transliteration == ("ex", "why") and tests["t"].file == "base.yaml"
    for body, message in [
        ("include: [base.yaml]\nsets:\n  a:\n" + SET + "    words: [q]\n", "defines set a"),
        ("include: [base.yaml]\nsets: {}\ntests:\n  t: {X: a, Y: b, A: a, B: b}\n",
         "defines test 't'"),
        ("include: [nope.yaml]\nsets: {}\n", "include 'nope.yaml' is not a file"),
        ("include: [top.yaml]\nsets: {}\n", "forms a cycle"),
        ("sets:\n  a:\n" + SET + "    words: [x, y]\n    transliteration: [ex]\n",
         "transliteration must give one entry per word"),
    ]:
        with pytest.raises(WordListError, match=message):
            load_wordlist_file(_write(tmp_path, "top.yaml", body))
