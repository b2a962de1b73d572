"""Hindi and Bangla word lists (seed 003 Tables 1-2 / App. C; seed 000 Table 1 / App. C)
and the optional per-word suffix groups of the word-list schema."""

import unicodedata

import pytest
from polybias import paths
from polybias.data import text, wordlists
from polybias.data.wordlists import WordListError, load_wordlist_file
from polybias.engines import static

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


def _toy_hindi_model(path, rng):
    """word2vec text file: gendered verbs near the male/female term directions; the words
    with ड़ / ढ़ written with precomposed nukta letters (U+095C, U+095D) as unnormalised
    corpora have them."""
    test = wordlists.get_test("hi", "me_gendered_verbs")
    a, b = rng.normal(size=16), rng.normal(size=16)
    rows = []
    for ws, centre in ((test.X, a), (test.A, a), (test.Y, b), (test.B, b)):
        for w in ws.words:
            w = w.replace("\u0921\u093c", "\u095c").replace("\u0922\u093c", "\u095d")
            rows.append((w, centre + 0.5 * rng.normal(size=16)))
    lines = [f"{len(rows)} 16"] + [w + " " + " ".join(f"{x:.6f}" for x in v) for w, v in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    written = path.read_text(encoding="utf-8")
    assert "\u095c" in written and "\u095d" in written  # लड़का, पढ़ता ... precomposed
    return path


def test_hindi_weat_on_a_static_model_given_by_path(tmp_path, rng):
    from polybias import models
    from polybias.studies.weat import run_weat

    path = _toy_hindi_model(tmp_path / "toy.vec", rng)
    raw = models.load(path, "static", format="word2vec-text", name="toy-hi")
    frame = run_weat("toy-hi", "hi", ["me_gendered_verbs"], embeddings=raw, on_missing="drop")
    assert set(frame["dropped"].iloc[0].split(", ")) == {"पढ़ता", "पढ़ती", "लड़का", "लड़की"}
    emb = static.normalize_vocabulary(raw)
    frame = run_weat("toy-hi", "hi", ["me_gendered_verbs"], embeddings=emb, on_missing="raise",
                     n_permutations=2000)
    assert frame["effect_size"].iloc[0] > 1.5 and frame["pvalue"].iloc[0] < 0.01


def test_weat_notebook_runs_hindi_with_a_model_path(tmp_path, rng):
    papermill = pytest.importorskip("papermill", reason="needs papermill: make env installs it (a dependency of polybias), or pip install papermill")
    import jupytext

    path = _toy_hindi_model(tmp_path / "toy.vec", rng)
    nb = jupytext.read(paths.project_root() / "notebooks" / "01_weat.py")
    src = tmp_path / "01_weat.ipynb"
    jupytext.write(nb, src)
    out = tmp_path / "out.ipynb"
    papermill.execute_notebook(
        str(src), str(out), kernel_name="polybias", progress_bar=False, cwd=str(tmp_path),
        parameters={"model": "toy-hi", "model_path": str(path), "language": "hi",
                    "tests": ["me_gendered_verbs"], "reported": "", "variants_file": "",
                    "output_dir": str(tmp_path / "records"), "n_permutations": 2000})
    shown = "".join(o.get("text", "") + o.get("data", {}).get("text/plain", "")
                    for c in jupytext.read(out)["cells"] for o in c.get("outputs", []))
    assert "| me_gendered_verbs |" in shown
    assert len(list((tmp_path / "records").glob("weat_m-toy-hi_l-hi_*.json"))) == 1
