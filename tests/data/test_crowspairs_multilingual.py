"""IndiBias, Dutch CrowS-Pairs (with the authors' per-pair scores) and Kaneko et al. 2022."""

import json

import numpy as np
import pandas as pd
import pytest
from polybias.data import crowspairs as cp
from polybias.data import published_pair_scores as published
from polybias.data import sources
from polybias.metrics import crows
from polybias.studies import crows_languages

NEW = {"indibias": ("en", "hi"), "crows-pairs-dutch": ("nl", "en", "fr"), "kaneko2022": ("ja", "ru")}
SIZES = {"indibias": 561, "crows-pairs-dutch": 1463, "kaneko2022": 262}


def test_registry_pins_the_new_files():
    reg = sources.load_registry()
    names = ["indibias"] + [f"crows-pairs-dutch-{lang}" for lang in ("nl", "en", "fr")]
    names += [f"crows-pairs-dutch-scores-{m}" for m in published.DUTCH_SCORE_MODELS]
    names += ["kaneko2022-ja", "kaneko2022-ru"]
    for name in names:
        src = reg[name]
        assert src.url.startswith(f"https://raw.githubusercontent.com/{src.repo}/{src.commit}/")
        assert src.licence and src.description
    assert "No licence" in reg["indibias"].licence
    assert reg["crows-pairs-dutch-nl"].licence.startswith("CC0")
    assert reg["kaneko2022-ja"].licence.startswith("MIT")
    for dataset, languages in NEW.items():
        assert cp.DATASETS[dataset] == languages


@pytest.mark.parametrize("dataset, language", [(d, lang) for d, ls in NEW.items() for lang in ls])
def test_new_datasets_load(mirror, dataset, language):
    frame = cp.load_crows_pairs(dataset, language, on_invalid="keep")
    assert len(frame) == SIZES[dataset]
    assert list(frame.columns) == list(cp.COLUMNS)
    assert frame.pair_id.is_unique and (frame.language == language).all()
    assert set(frame.bias_type) <= set(cp.BIAS_TYPES) and set(frame.direction) <= set(cp.DIRECTIONS)
    counts = frame.attrs["invalid_counts"]
    assert sum(counts.values()) == len(frame.attrs["invalid"])


@pytest.mark.parametrize("dataset", list(NEW))
def test_languages_are_aligned_by_pair_id(mirror, dataset):
    frames = [cp.load_crows_pairs(dataset, lang, on_invalid="keep") for lang in NEW[dataset]]
    for other in frames[1:]:
        assert other.pair_id.tolist() == frames[0].pair_id.tolist()
    if dataset != "crows-pairs-dutch":  # the Dutch adaptation re-labelled some pairs (see its card)
        for other in frames[1:]:
            assert other.direction.tolist() == frames[0].direction.tolist()
            assert other.bias_type.tolist() == frames[0].bias_type.tolist()


def test_indibias_counts(mirror):
    frame = cp.load_crows_pairs("indibias", "hi", on_invalid="keep")
    assert frame.bias_type.value_counts().to_dict() == {
        "gender": 197, "socioeconomic": 108, "religion": 81, "age": 62, "caste": 48,
        "physical-appearance": 41, "disability": 24}
    assert frame.direction.value_counts().to_dict() == {"stereo": 454, "antistereo": 107}
    # one Hindi pair has two identical sentences: reported per reason, dropped only when asked
    assert frame.attrs["invalid_counts"]["identical sentences"] == 1
    dropped = cp.load_crows_pairs("indibias", "hi", on_invalid="drop", max_diff=None)
    assert len(dropped) == 560 and dropped.attrs["n_dropped"] == 1
    assert dropped.attrs["invalid_counts"] == {"identical sentences": 1}
    caste = cp.load_crows_pairs("indibias", "en", bias_types=["Caste"], on_invalid="keep")
    assert len(caste) == 48


def test_dutch_counts_and_defects(mirror):
    nl = cp.load_crows_pairs("crows-pairs-dutch", "nl", on_invalid="keep")
    assert nl.bias_type.value_counts().to_dict() == {
        "race-color": 475, "gender": 262, "nationality": 173, "socioeconomic": 171,
        "religion": 101, "age": 82, "sexual-orientation": 78, "physical-appearance": 63,
        "disability": 58}
    assert nl.pair_id.astype(int).between(0, 1507).all()  # CrowS-Pairs rows
    assert any("financiële" in s for s in nl.sent_more)  # Mac Roman decoded
    en = cp.load_crows_pairs("crows-pairs-dutch", "en", on_invalid="keep")
    assert (nl.direction != en.direction).sum() == 313
    assert (nl.bias_type != en.bias_type).sum() == 34
    # the French file has a missing sentence and an identical pair: counted per reason
    fr = cp.load_crows_pairs("crows-pairs-dutch", "fr", on_invalid="keep", max_diff=None)
    assert fr.attrs["invalid_counts"] == {"empty sent_less": 1, "identical sentences": 1}
    with pytest.raises(cp.CrowsPairsError, match="2 invalid pair"):
        cp.load_crows_pairs("crows-pairs-dutch", "fr", max_diff=None)


def test_kaneko_direction_and_sentence_roles(mirror):
    original = cp.load_crows_pairs("crows-pairs", on_invalid="keep")
    gender = original[original.bias_type == "gender"]
    raw = json.loads(sources.fetch("kaneko2022-ja").read_text(encoding="utf-8"))
    ja = cp.load_crows_pairs("kaneko2022", "ja", on_invalid="keep")
    # the k-th pair is the k-th CrowS-Pairs gender pair (same direction sequence)
    assert ja.direction.tolist() == gender.direction.tolist()
    for k in (0, 1, 5):
        stereo, anti = raw[k]["stereotype"], raw[k]["anti-stereotype"]
        expected = (anti, stereo) if raw[k]["direction"] == "antistereo" else (stereo, anti)
        assert (ja.sent_more[k], ja.sent_less[k]) == expected
    assert raw[0]["direction"] == "antistereo" and ja.sent_less[0] == raw[0]["stereotype"]


def test_bad_input_is_reported(tmp_path):
    good = {"direction": "stereo", "bias_type": "gender", "stereotype": "she cooks .",
            "anti-stereotype": "he cooks ."}
    path = tmp_path / "pairs.json"
    items = [good, {**good, "anti-stereotype": "she cooks ."}, {**good, "anti-stereotype": " "}]
    path.write_text(json.dumps(items), encoding="utf-8")
    frame = cp.read_pairs_json(path, "xx", on_invalid="keep")
    assert frame.attrs["invalid_counts"] == {"identical sentences": 1, "empty sent_less": 1}
    assert frame.attrs["invalid"].line.tolist() == [2, 3]
    dropped = cp.read_pairs_json(path, "xx", on_invalid="drop")
    assert dropped.pair_id.tolist() == ["0"] and dropped.attrs["n_dropped"] == 2
    with pytest.raises(cp.CrowsPairsError, match="2 invalid pair"):
        cp.read_pairs_json(path, "xx")
    path.write_text(json.dumps([good, {**good, "bias_type": "weather"}]), encoding="utf-8")
    with pytest.raises(cp.CrowsPairsError, match="line 2 .*unknown bias type 'weather'"):
        cp.read_pairs_json(path, "xx")
    path.write_text(json.dumps([{"direction": "stereo"}]), encoding="utf-8")
    with pytest.raises(cp.CrowsPairsError, match="missing key"):
        cp.read_pairs_json(path, "xx")


def test_unknown_dataset_or_language_lists_what_exists():
    with pytest.raises(cp.CrowsPairsError, match="has no language 'de'; known: nl, en, fr"):
        cp.load_crows_pairs("crows-pairs-dutch", "de")
    with pytest.raises(cp.CrowsPairsError, match="known: .*indibias.*kaneko2022"):
        cp.load_crows_pairs("indibias-full", "hi")
    with pytest.raises(cp.CrowsPairsError, match="needs a language, one of ja, ru"):
        cp.load_crows_pairs("kaneko2022")
    with pytest.raises(cp.CrowsPairsError, match="known: bertje"):
        published.load_dutch_crows_scores("geitje")


# the share of pairs whose sent_more the model scored higher, as the authors' files imply
DUTCH_FILES = {"bertje": 54.82, "mbert": 52.43, "robbert": 54.82, "bert": 61.45, "roberta": 65.14,
               "camembert": 58.30, "flaubert": 55.02}


def test_dutch_published_scores_reaggregate(mirror):
    table = crows_languages.dutch_crows_aggregates()
    overall = table[table.bias_type == "all"].set_index("model")
    assert set(overall.index) == set(DUTCH_FILES)
    for model, value in DUTCH_FILES.items():
        assert round(overall.loc[model, "score"], 2) == pytest.approx(value)
    # recomputed from the two sentence scores = the files' own per-pair decisions, every bias type
    assert np.allclose(table.score, table.file_score)
    assert (overall.n == 1463).all()
    assert overall.ties.to_dict() == {"bertje": 0, "mbert": 0, "robbert": 0, "bert": 2,
                                      "roberta": 2, "camembert": 2, "flaubert": 3}
    # BERTje and RobBERT share the overall score by coincidence: their decisions differ
    b, r = published.load_dutch_crows_scores("bertje"), published.load_dutch_crows_scores("robbert")
    assert (b.stereotyped != r.stereotyped).sum() == 614


@pytest.mark.parametrize("model", list(published.DUTCH_SCORE_MODELS))
def test_dutch_score_files_are_the_dataset_pairs(mirror, model):
    scores = published.load_dutch_crows_scores(model)
    pairs = cp.load_crows_pairs("crows-pairs-dutch", published.DUTCH_SCORE_MODELS[model], on_invalid="keep",
                                max_diff=None)
    assert scores.pair_id.tolist() == pairs.pair_id.tolist()
    assert scores.direction.tolist() == pairs.direction.tolist()
    assert scores.bias_type.tolist() == pairs.bias_type.tolist()
    same = [a.split() == b.split() for a, b in zip(scores.sent_more, pairs.sent_more, strict=True)]
    assert sum(same) >= len(pairs) - 3  # three Dutch rows differ in a no-break space or newline
    assert (scores.stereotyped == (scores.score_more > scores.score_less)).all()
    table = crows.stereotype_score(scores, n_bootstrap=200, seed=0)
    assert table.loc[0, "ci_low"] <= table.loc[0, "score"] <= table.loc[0, "ci_high"]
    assert isinstance(table, pd.DataFrame)


# ------------------------------------------------------------------ dataset cards

def test_every_dataset_has_a_card():
    listing = cp.list_datasets()
    assert set(listing.dataset) == set(cp.DATASETS)
    assert len(listing) == sum(len(v) for v in cp.DATASETS.values())
    reg = sources.load_registry()
    for dataset in cp.DATASETS:
        card = cp.dataset_card(dataset)
        assert set(card) >= set(cp.CARD_FIELDS) and card["known_issues"]
        assert all(name in reg for name in card["sources"])
        assert all(cp.normalise_bias_type(b) == b for b in card["bias_types"])
    with pytest.raises(cp.CrowsPairsError, match="unknown dataset"):
        cp.dataset_card("nope")


def test_docs_page_is_the_cards():
    from polybias import paths

    assert (paths.project_root() / "docs" / "datasets.md").read_text(encoding="utf-8") == \
        cp.datasets_markdown()


@pytest.mark.parametrize("dataset", list(cp.DATASETS))
def test_card_sizes_and_bias_types_match_the_files(mirror, dataset):
    card = cp.dataset_card(dataset)
    for language in card["languages"]:
        frame = cp.load_crows_pairs(dataset, language, on_invalid="keep")
        assert len(frame) == card["pairs"][language]
        assert set(frame.bias_type) == set(card["bias_types"])


def test_cli_lists_datasets(capsys):
    from polybias.cli import main

    assert main(["datasets"]) == 0
    out = capsys.readouterr().out
    for dataset in ("indibias", "crows-pairs-dutch", "kaneko2022"):
        assert dataset in out
    assert "CC0" in out and " hi " in out
