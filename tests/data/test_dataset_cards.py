"""Dataset cards: read and checked with the error of the dataset's module, and listed one
row per language in the same shape for every dataset."""

from __future__ import annotations

import pandas as pd
import pytest
from polybias.data import crowspairs, dataset_cards, gest, stereoset


class ToyError(ValueError):
    pass


@pytest.fixture
def root(tmp_path, monkeypatch):
    (tmp_path / "data" / "datasets").mkdir(parents=True)
    monkeypatch.setenv("POLYBIAS_ROOT", str(tmp_path))
    return tmp_path / "data" / "datasets"


def test_a_card_missing_a_field_or_not_a_mapping_raises_the_given_error(root):
    with pytest.raises(ToyError, match="dataset card not found: .*toy.yaml"):
        dataset_cards.read_card("toy", ("name",), ToyError)
    (root / "toy.yaml").write_text("- a list\n")
    with pytest.raises(ToyError, match="toy.yaml: a dataset card must be a mapping"):
        dataset_cards.read_card("toy", ("name",), ToyError)
    (root / "toy.yaml").write_text("name: toy\ntitle: Toy\n")
    with pytest.raises(ToyError, match=r"toy.yaml: missing field\(s\) languages, licence"):
        dataset_cards.read_card("toy", ("name", "title", "languages", "licence"), ToyError)
    assert dataset_cards.read_card("toy", ("name", "title"), ToyError) == {"name": "toy", "title": "Toy"}


def test_rows_take_one_provenance_or_one_per_language():
    card = {"name": "toy", "title": "Toy", "languages": ["en", "fr"], "licence": "MIT",
            "provenance": "native"}
    rows = dataset_cards.card_rows(card, lambda language: {"n": len(language)})
    assert list(rows.columns) == ["dataset", "language", "n", "licence", "provenance", "title"]
    assert rows.provenance.tolist() == ["native", "native"] and rows.n.tolist() == [2, 2]
    rows = dataset_cards.card_rows(dict(card, provenance={"en": "native", "fr": "translated"}), lambda _: {})
    assert rows.provenance.tolist() == ["native", "translated"]


def test_every_dataset_lists_in_the_same_shape():
    for listed in (crowspairs.list_datasets(), gest.list_datasets(), stereoset.list_datasets()):
        columns = list(listed.columns)
        assert columns[:2] == ["dataset", "language"] and columns[-3:] == ["licence", "provenance", "title"]
        assert listed.notna().all().all() and len(listed)


# ------------------------------------------------------------ a dataset declared by one card

TOY_CARD = {
    "name": "toy-pairs", "title": "Toy minimal pairs in Swahili (the test suite)", "languages": ["sw"],
    "pairs": {"sw": 6}, "bias_types": ["gender"], "licence": "CC0 1.0 (the test suite)",
    "provenance": {"sw": "native (written for the test)"}, "sources": [],
    "citation": "The polybias test suite.", "known_issues": [],
    "format": {"file": "toy-pairs-{language}.csv", "pair_id": "id"}, "registered": 11,
}


@pytest.fixture
def toy_dataset(tmp_path, monkeypatch):
    """A data folder that is the project's, plus one card (``toy-pairs``, language ``sw``)
    and the file it names beside it; nothing else declares the dataset."""
    import shutil

    import yaml
    from polybias import paths
    from polybias.planted.synthetic import minimal_pairs

    real = paths.data_dir()
    data = tmp_path / "data"
    data.mkdir()
    for entry in real.iterdir():
        if entry.name != "datasets":
            (data / entry.name).symlink_to(entry)
    shutil.copytree(real / "datasets", data / "datasets")
    pairs = minimal_pairs(6, language="en", seed=3)  # words the planted models know
    pd.DataFrame({"id": range(6), "sent_more": pairs["sent_more"], "sent_less": pairs["sent_less"],
                  "stereo_antistereo": "stereo", "bias_type": "gender"}).to_csv(
        data / "datasets" / "toy-pairs-sw.csv", index=False)
    (data / "datasets" / "toy-pairs.yaml").write_text(yaml.safe_dump(TOY_CARD, sort_keys=False),
                                                       encoding="utf-8")
    monkeypatch.setattr(paths, "data_dir", lambda: data)
    return pairs


def test_a_dataset_added_by_one_card_is_listed_run_and_exported(toy_dataset, tmp_path, monkeypatch, capsys):
    """One card (and the file it names) makes a minimal-pair dataset in a new language: it is
    registered (``DATASETS``, after the others), listed by ``polybias datasets``, scored by a
    CrowS-Pairs run and written as an lm-eval task."""
    from polybias.cli import main as cli
    from polybias.data import crowspairs, lm_eval_tasks
    from polybias.studies import crows_pairs, validity_designs

    assert list(crowspairs.DATASETS)[-1] == "toy-pairs" and crowspairs.DATASETS["toy-pairs"] == ("sw",)
    loaded = crowspairs.load_crows_pairs("toy-pairs", "sw")
    assert loaded["sent_more"].tolist() == toy_dataset["sent_more"].tolist()
    assert (loaded["language"] == "sw").all() and (loaded["bias_type"] == "gender").all()
    assert cli(["datasets"]) == 0
    listed = [line for line in capsys.readouterr().out.splitlines() if "toy-pairs" in line]
    assert len(listed) == 1 and "sw" in listed[0] and "written for the test" in listed[0]
    assert "## `toy-pairs`: Toy minimal pairs in Swahili" in crowspairs.datasets_markdown()
    assert "sw" in crowspairs.likelihood_languages()

    monkeypatch.setenv("POLYBIAS_PLANTED", "pinned")
    found = crows_pairs.run_crows(validity_designs.planted_lm("causal", 0.9), dataset="toy-pairs",
                                  language="sw", n_bootstrap=0, output_dir=str(tmp_path / "run"))
    assert len(found.scored) == 6
    (overall,) = found.stereotype[found.stereotype["bias_type"] == "all"]["n"].tolist()
    assert overall == 6 and list((tmp_path / "run").glob("*.json"))

    names = lm_eval_tasks.write_tasks(tmp_path / "tasks", datasets=["toy-pairs"])
    assert names == [lm_eval_tasks.task_name("toy-pairs", "sw")]
    assert len(list((tmp_path / "tasks").glob("*.yaml"))) == 1


def test_a_card_that_names_its_file_two_ways_or_a_language_without_its_column_is_refused(
        toy_dataset, monkeypatch):
    import yaml
    from polybias import paths
    from polybias.data import crowspairs

    path = paths.data_dir() / "datasets" / "toy-pairs.yaml"
    path.write_text(yaml.safe_dump({**TOY_CARD, "format": {**TOY_CARD["format"], "source": "crows-pairs"}}))
    with pytest.raises(crowspairs.CrowsPairsError, match="by 'source' .* or 'file'"):
        crowspairs.load_crows_pairs("toy-pairs", "sw")
    path.write_text(yaml.safe_dump({**TOY_CARD, "format": {"file": "toy-pairs-sw.csv",
                                                           "pair_id": {"en": "id"}}}))
    with pytest.raises(crowspairs.CrowsPairsError, match="format.pair_id gives no value for 'sw'"):
        crowspairs.load_crows_pairs("toy-pairs", "sw")


def test_the_eurogest_cards_list_the_languages_the_eurogest_files_hold():
    """The EuroGEST cards declare their languages; the EuroGEST module reads the same from
    the authors' files (its statistics), and the two agree."""
    from polybias.data import eurogest

    assert crowspairs.DATASETS["eurogest"] == tuple(eurogest.GENDERED_LANGUAGES)
    assert crowspairs.DATASETS["eurogest-neutral"] == tuple(eurogest.NEUTRAL_LANGUAGES)
