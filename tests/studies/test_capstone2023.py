"""Seed 004: the permutation test of interactions against their base rate, the authors' countries
(the test itself: tests/test_stats.py)."""

from __future__ import annotations

import pandas as pd
import pytest
from polybias.data import sources
from polybias.studies import capstone2023


@pytest.mark.usefixtures("mirror")  # reads seed 004's files
def test_every_two_way_interaction_is_tested_on_the_authors_rows():
    path = sources.fetch("seed004-cg-score-2")
    adjectives = pd.read_csv(path).Adjective.unique().tolist()
    strata = capstone2023.adjective_strata(adjectives)
    assert sorted(set(strata.values())) == ["negative", "positive"] and len(strata) == 11
    table = capstone2023.row_significance(path, strata, n_permutations=199, seed=0)
    assert len(table) == 10 and set(table.n_adjectives) == {11} and set(table.n_cells) == {2}
    row = table.set_index("characteristics").loc["Countries,Languages"]
    assert row.n_groups == 432 and row.repeated_rows == 0
    # the dishes list's empty entries repeat rows verbatim: counted once
    assert table.set_index("characteristics").loc["Countries,Food"].repeated_rows == 792
    assert (table.statistic > table.null_mean).all()


@pytest.mark.usefixtures("mirror")  # reads seed 004's files
def test_country_book_holds_every_country_of_the_list():
    book = capstone2023.country_templates()
    entries = book.lists["countries"].entries
    assert len(entries) == capstone2023.N_COUNTRIES == len(capstone2023.countries())
    regions = [e.features["region"] for e in entries]
    assert regions.count("unknown") == 245 - 24
    assert dict(zip([e.id for e in entries], regions, strict=True))["United States"] == "americas"


@pytest.mark.usefixtures("mirror")  # reads seed 004's files
def test_a_changed_countries_file_is_refused(monkeypatch, tmp_path):
    import shutil

    source = sources.get_source("seed004-countries")
    copy = tmp_path / source.mirror_relpath
    copy.parent.mkdir(parents=True)
    shutil.copyfile(sources.fetch("seed004-countries"), copy)
    copy.write_text(copy.read_text(encoding="utf-8").replace('"Albania"', '"Albania "'), encoding="utf-8")
    monkeypatch.setenv("POLYBIAS_DATA_MIRROR", str(tmp_path))
    with pytest.raises(sources.DataError, match="countries.json: sha256 does not match the registry entry"):
        capstone2023.countries()
