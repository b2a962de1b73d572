"""StereoSet in five languages: registry, restricted unpickler, loaders and card."""

import hashlib
import json
import os
import pickle

import pandas as pd
import pytest
from polybias.data import sources
from polybias.data import stereoset as ss


class _CreatesFile:
    """Unpickling this calls ``open(path, "w")``: a file appears if the pickle is executed."""

    def __init__(self, path):
        self.path = str(path)

    def __reduce__(self):
        return (open, (self.path, "w"))


class _RunsCommand:
    def __reduce__(self):
        return (os.system, ("true",))


def _tiny_wide(task="intrasentence", labels=("stereotype", "anti-stereotype", "unrelated")):
    row = {"id": "i1", "target": "chess player", "bias_type": "profession",
           "context": "The chess player was BLANK."}
    for k, (label, word) in enumerate(zip(labels, ("asian", "hispanic", "fox"), strict=True), 1):
        row |= {f"c{k}_id": f"c{k}", f"c{k}_gold_label": label,
                f"c{k}_sentence": f"The chess player was {word}."}
        if task == "intrasentence":
            row[f"c{k}_word"] = word
    return pd.DataFrame([row])


def test_registry_pins_every_file():
    reg = sources.load_registry()
    names = [f"stereoset-{t}-{lang}" for t in ss.TASKS for lang in ss.LANGUAGES]
    names += [f"stereoset-pred-{run}" for run in ss.prediction_runs()] + ["stereoset-multi-results"]
    assert len(ss.prediction_runs()) == 54
    for name in names:
        src = reg[name]
        assert src.repo == "slds-lmu/stereotypes-multi" and len(src.commit) == 40
        assert src.licence and src.description
    assert reg["stereoset-intrasentence-en"].licence.startswith("CC BY-SA 4.0")
    assert "No licence" in reg["stereoset-intrasentence-tr"].licence


def test_restricted_unpickler_reads_a_dataframe():
    frame = _tiny_wide()
    back = ss.restricted_unpickle(pickle.dumps(frame, protocol=5), "tiny.pkl")
    pd.testing.assert_frame_equal(back, frame)


@pytest.mark.parametrize("protocol", [2, 5])
def test_crafted_pickle_is_refused_before_it_runs(tmp_path, protocol):
    victim = tmp_path / "created-by-the-pickle.txt"
    data = pickle.dumps(_CreatesFile(victim), protocol=protocol)
    with pytest.raises(ss.UnsafePickleError, match=r"global io\.open.*refused"):
        ss.restricted_unpickle(data, "evil.pkl")
    assert not victim.exists()
    # the same payload through the plain unpickler does create the file: the test can fail
    pickle.loads(data).close()
    assert victim.exists()


def test_crafted_pickle_inside_a_dataframe_is_refused(tmp_path):
    victim = tmp_path / "created.txt"
    frame = _tiny_wide()
    frame["c1_labels"] = [[_CreatesFile(victim)]]
    with pytest.raises(ss.UnsafePickleError, match="evil.pkl"):
        ss.restricted_unpickle(pickle.dumps(frame), "evil.pkl")
    assert not victim.exists()


def test_any_other_global_is_refused():
    with pytest.raises(ss.UnsafePickleError, match=r"posix\.system|os\.system"):
        ss.restricted_unpickle(pickle.dumps(_RunsCommand()), "cmd.pkl")
    with pytest.raises(ss.UnsafePickleError, match="collections.OrderedDict"):
        from collections import OrderedDict
        ss.restricted_unpickle(pickle.dumps(OrderedDict(a=1)), "od.pkl")


def test_corrupt_pickle_and_non_frame_are_clear_errors():
    with pytest.raises(ss.StereoSetError, match="trunc.pkl: not a readable"):
        ss.restricted_unpickle(pickle.dumps(_tiny_wide())[:50], "trunc.pkl")
    with pytest.raises(ss.StereoSetError, match="holds a list"):
        ss.restricted_unpickle(pickle.dumps([1, 2]), "list.pkl")


def test_wide_frame_becomes_three_candidates_per_item():
    long = ss.read_items_frame(_tiny_wide(), "intrasentence", "en", "tiny.pkl")
    assert list(long.columns) == list(ss.ITEM_COLUMNS)
    assert long["gold_label"].tolist() == ["stereotype", "anti-stereotype", "unrelated"]
    assert long["word"].tolist() == ["asian", "hispanic", "fox"]
    assert (long["target_en"] == "chess player").all()


def test_missing_candidate_label_names_the_item():
    bad = _tiny_wide(labels=("stereotype", "stereotype", "unrelated"))
    with pytest.raises(ss.StereoSetError, match=r"tiny.pkl: item 'i1'.*anti-stereotype"):
        ss.read_items_frame(bad, "intrasentence", "en", "tiny.pkl")


def test_missing_column_and_empty_sentence():
    with pytest.raises(ss.StereoSetError, match="missing column.*c1_word"):
        ss.read_items_frame(_tiny_wide("intersentence"), "intrasentence", "en", "x.pkl")
    bad = _tiny_wide()
    bad.loc[0, "c2_sentence"] = " "
    with pytest.raises(ss.StereoSetError, match="candidate 'c2' has an empty sentence"):
        ss.read_items_frame(bad, "intrasentence", "en", "x.pkl")


def test_predictions_reader_rejects_bad_entries():
    good = ss.read_predictions({"intrasentence": [{"id": "a", "score": 0.5}]}, "p.json")
    assert good.to_dict("records") == [{"task": "intrasentence", "candidate_id": "a", "score": 0.5}]
    with pytest.raises(ss.StereoSetError, match="p.json: intrasentence entry 0 lacks"):
        ss.read_predictions({"intrasentence": [{"id": "a"}]}, "p.json")
    with pytest.raises(ss.StereoSetError, match="not a finite number"):
        ss.read_predictions({"intrasentence": [{"id": "a", "score": float("nan")}]}, "p.json")
    with pytest.raises(ss.StereoSetError, match="scored twice"):
        ss.read_predictions({"intersentence": [{"id": "a", "score": 1}, {"id": "a", "score": 2}]}, "p.json")
    with pytest.raises(ss.StereoSetError, match="unknown task"):
        ss.read_predictions({"other": []}, "p.json")


@pytest.mark.parametrize("language", ss.LANGUAGES)
def test_five_languages_load_and_match_the_card(mirror, language):
    frame = ss.load_stereoset(language)
    card = ss.dataset_card()
    for task in ss.TASKS:
        part = frame[frame.task == task]
        assert part.item_id.nunique() == card["items"][language][task]
        assert len(part) == 3 * card["items"][language][task]
        assert (part.groupby("item_id").gold_label.apply(sorted).map(tuple)
                == tuple(sorted(ss.GOLD_LABELS))).all()
    assert set(frame.bias_type) == set(card["bias_types"])
    intra = frame[frame.task == "intrasentence"]
    assert intra.context.str.contains("BLANK").all() and (intra.word != "").all()


def test_translations_share_ids_and_labels_with_english(mirror):
    en = ss.load_stereoset("en")
    for language in ("de", "tr"):
        other = ss.load_stereoset(language)
        merged = other.merge(en, on="candidate_id", suffixes=("_lang", "_ref"))
        assert len(merged) == len(other)
        assert (merged["gold_label_lang"].to_numpy() == merged["gold_label_ref"].to_numpy()).all()
        assert (merged["target_en_lang"].to_numpy() == merged["target_en_ref"].to_numpy()).all()


def test_published_predictions_and_workbook(mirror):
    pred = ss.load_predictions("gpt2_GPT2LM_GPT2LM_d_en")
    assert pred.groupby("task").size().to_dict() == {"intersentence": 6369, "intrasentence": 6318}
    book = ss.load_published_results()
    assert book.groupby("sheet").size().to_dict() == {"intersentence": 44, "intrasentence": 35,
                                                      "overall": 35}
    row = book[(book.sheet == "intrasentence") & (book.run == "bert-base-cased_BertLM_BertNextSentence_en")]
    assert row[["Count", "LM Score", "SS Score", "ICAT Score"]].values.tolist() == [[2106, 83.1, 58.74, 68.58]]


def test_a_mirror_file_with_a_foreign_class_is_refused(tmp_path, monkeypatch):
    """A registered DataFrame whose bytes name another global is refused after its sha256."""
    victim = tmp_path / "created.txt"
    data = pickle.dumps(_CreatesFile(victim))
    folder = tmp_path / "mirror" / "slds-lmu+stereotypes-multi" / "create_dataset" / "data" / "intrasentence"
    folder.mkdir(parents=True)
    (folder / "df_intrasentence_en.pkl").write_bytes(data)
    reg = sources.load_registry()
    src = reg["stereoset-intrasentence-en"]
    reg["stereoset-intrasentence-en"] = sources.Source(**{**src.__dict__, "sha256": hashlib.sha256(data).hexdigest()})
    monkeypatch.setenv("POLYBIAS_DATA_MIRROR", str(tmp_path / "mirror"))
    monkeypatch.setattr(sources, "load_registry", lambda *a, **k: reg)
    with pytest.raises(ss.UnsafePickleError, match="df_intrasentence_en.pkl"):
        ss.load_stereoset("en", "intrasentence")
    assert not victim.exists()


def test_cli_lists_stereoset_in_five_languages(capsys):
    from polybias.cli import main

    assert main(["datasets"]) == 0
    out = capsys.readouterr().out
    lines = [ln for ln in out.splitlines() if ln.startswith("stereoset ")]
    assert [ln.split()[1] for ln in lines] == list(ss.LANGUAGES)
    assert "CC BY-SA 4.0" in out


def test_json_roundtrip_of_predictions_keeps_order():
    data = {"intersentence": [{"id": "b", "score": 2}, {"id": "a", "score": 1}]}
    frame = ss.read_predictions(json.loads(json.dumps(data)), "p.json")
    assert frame.candidate_id.tolist() == ["b", "a"]
