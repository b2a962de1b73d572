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
    assert set(debiasing.SEED003_TABLES) == set(spec.tables)
    for name, reported in debiasing.SEED003_TABLES.items():
        frame, _ = debiasing.run_table(emb, "hi", name, n_permutations=20)
        both = debiasing.side_by_side_table(frame, reported)
        missing = both[both["reported"].isna()][["test_type", "test", "method"]]
        assert missing.empty, missing.to_string()
        assert len(both) == len(frame)


def test_language_tables_record_each_table_beside_the_seed(rng, tmp_path, monkeypatch):
    monkeypatch.setenv("POLYBIAS_OUTPUT_ROOT", str(tmp_path))
    spec = debiasing.load_spec("hi")
    words = sorted(_set_and_pair_words(spec))
    emb = StaticEmbeddings("random-hi", words, rng.normal(size=(len(words), 30)))
    monkeypatch.setattr(debiasing, "run_table", _without_inlp(debiasing.run_table, spec))
    texts = debiasing.language_tables(emb, "hi", n_permutations=20, output_dir="rec")
    assert len(texts) == 3 * len(spec.tables)  # heading, effect sizes, beside seed 003
    assert texts[0] == f"### {spec.tables['gender']['title']} (random-hi)"
    assert "reported" in texts[2].splitlines()[0]
    assert len(list((tmp_path / "rec").glob("*.json"))) == len(spec.tables)


def test_removed_summary_and_the_other_scope(rng):
    spec = debiasing.load_spec("en")
    words = sorted(_set_and_pair_words(spec) | {w for t in spec.tables["gender"]["tests"]
                                                 for ws in debiasing.resolve_test(spec, t["test"]).sets().values()
                                                 for w in ws.words})
    emb = StaticEmbeddings("random-en", words, rng.normal(size=(len(words), 30)))
    methods = [m for m, e in spec.tables["gender"]["methods"].items() if e["method"] != "inlp"]
    frame, results = debiasing.run_table(emb, "en", "gender", methods=methods, n_permutations=20, seat=False)
    summary = debiasing.removed_summary({"gender": results})
    assert summary["method"].tolist() == methods and (summary["table"] == "gender").all()
    assert summary["rank"].tolist() == [r.removed.k for r in results.values()]
    hard = [m for m in methods if spec.tables["gender"]["methods"][m]["method"] == "hard"]
    assert (summary.set_index("method").loc[hard, "equalised pairs"] != "—").all()
    assert summary["heldout before"].isna().all()  # no INLP here
    both = debiasing.scope_comparison(emb, "en", {"gender": frame}, scope="all", n_permutations=20)
    assert list(both.columns[-3:]) == ["effect_size (all)", "effect_size (targets)", "table"]
    assert "original" not in set(both["method"]) and set(both["method"]) == set(methods)
    kept = frame[frame["method"] != "original"].set_index(["method", "test"])["effect_size"]
    assert both.set_index(["method", "test"])["effect_size (all)"].equals(kept.loc[both.set_index(["method", "test"]).index])


def _without_inlp(run_table, spec):
    """``run_table`` with the INLP methods left out (they need a large vocabulary)."""
    def run(emb, language, name, **kwargs):
        methods = [m for m, e in spec.tables[name]["methods"].items() if e["method"] != "inlp"]
        return run_table(emb, language, name, methods=methods, **kwargs)
    return run


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
