"""The debiasing specs and tables (polybias.studies.debiasing)."""

import textwrap

import pytest
from polybias.engines.static import StaticEmbeddings
from polybias.metrics.debias import DebiasError
from polybias.studies import debiasing


def test_wellformed_spec_loads(write_spec):
    write_spec()
    assert debiasing.load_spec("xx").pairs["p"].pairs == (("x", "y"),)
    with pytest.raises(DebiasError, match="no debias spec"):
        debiasing.load_spec("xx", "other.yaml")


@pytest.mark.parametrize(("change", "match"), [
    ({"pairs": "[[x, y, z]]"}, "exactly two words"),
    ({"pairs": "[[x, x]]"}, "same word twice"),
    ({"direction": "nope"}, "unknown pair list 'nope'"),
    ({"kind": "XX"}, "kind BM or IR"),
    ({"direction": "p, k: 0"}, "k must be a positive integer"),
    ({"kind": "BM, seat: {X: noun}"}, "template group for each of X, Y, A, B"),
])
def test_malformed_spec_is_rejected(write_spec, change, match):
    write_spec(**change)
    with pytest.raises(DebiasError, match=match):
        debiasing.load_spec("xx")


@pytest.mark.parametrize("language", ["en", "hi", "bn"])
def test_shipped_specs_run_end_to_end(language, rng):
    spec = debiasing.load_spec(language)
    words = _set_and_pair_words(spec)
    for table in spec.tables.values():
        for t in table["tests"]:
            test = debiasing.resolve_test(spec, t["test"])
            for ws in test.sets().values():
                words |= set(ws.words)
    words = sorted(words)
    # random vectors for every word of the spec: every method and test must run
    emb = StaticEmbeddings(f"random-{language}", words, rng.normal(size=(len(words), 40)))
    for name in spec.tables:
        frame, results = debiasing.run_table(emb, language, name, n_permutations=50,
                                          methods=[m for m, e in spec.tables[name]["methods"].items()
                                                   if e["method"] != "inlp" or "classes" in e])
        assert set(frame["method"]) == {"original", *results}
        assert frame["effect_size"].notna().all()


@pytest.mark.parametrize("language", ["hi", "bn"])
def test_indic_specs_are_nfc(language):
    import unicodedata

    spec = debiasing.load_spec(language)
    words = sorted(_set_and_pair_words(spec))
    assert [w for w in words if unicodedata.normalize("NFC", w) != w] == []


def test_hindi_tables_line_up_with_the_seed_tables(rng):
    """Every cell of the Hindi experiment tables has its reported seed-003 value, so the
    notebook's side-by-side join is complete (labels and method names match)."""
    spec = debiasing.load_spec("hi")
    words = sorted(_set_and_pair_words(spec))
    emb = StaticEmbeddings("random-hi", words, rng.normal(size=(len(words), 30)))
    seed_tables = {"gender": ["malik2022_table3", "malik2022_table4"],
                   "caste": ["malik2022_table5"], "religion": ["malik2022_table6"]}
    for name, reported in seed_tables.items():
        frame, _ = debiasing.run_table(emb, "hi", name, n_permutations=20)
        both = debiasing.side_by_side_table(frame, reported)
        missing = both[both["reported"].isna()][["test_type", "test", "method"]]
        assert missing.empty, missing.to_string()
        assert len(both) == len(frame)


def _set_and_pair_words(spec) -> set[str]:
    return ({w for s in spec.sets.values() for w in s.words}
            | {w for p in spec.pairs.values() for pair in p.pairs for w in pair})


@pytest.fixture
def write_spec(tmp_path, monkeypatch):
    """Writes ``data/wordlists/xx/debias.yaml`` under a temporary project root."""
    folder = tmp_path / "data" / "wordlists" / "xx"
    folder.mkdir(parents=True)
    monkeypatch.setenv("POLYBIAS_ROOT", str(tmp_path))

    def write(pairs="[[x, y]]", direction="p", kind="BM"):
        text = _SPEC.replace("PAIRS", pairs).replace("DIR", direction).replace("KIND", kind)
        (folder / "debias.yaml").write_text(text)

    return write


_SPEC = textwrap.dedent("""
    sets:
      a: {provenance: language-specific, source: s, words: [x, y]}
      b: {provenance: language-specific, source: s, words: [z, w]}
    pairs:
      p: {provenance: language-specific, source: s, pairs: PAIRS}
    tables:
      t:
        tests: [{test: T, kind: KIND}]
        methods: {m: {method: projection, direction: {pairs: DIR}}}
    tests:
      T: {X: a, Y: b, A: a, B: b}
""")
