"""Dataset cards: read and checked with the error of the dataset's module, and listed one
row per language in the same shape for every dataset."""

from __future__ import annotations

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
