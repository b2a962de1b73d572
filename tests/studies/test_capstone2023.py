"""Seed 004: the permutation test of interactions against their base rate, the authors' countries."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from polybias.data import sources
from polybias.studies import capstone2023
from polybias.studies.capstone2023 import Seed004Error


def _frame(d: np.ndarray, cells: list[str] | None = None) -> pd.DataFrame:
    """(replicates, groups) corrected scores as rows attribute, group, corrected[, cell]."""
    rows = []
    for r, n in itertools.product(range(d.shape[0]), range(d.shape[1])):
        rows.append({"attribute": f"a{r}", "group": f"g{n}", "corrected": float(d[r, n]),
                     **({"cell": cells[r]} if cells else {})})
    return pd.DataFrame(rows)


def test_exact_test_by_hand():
    # two groups, replicates (1, -1), (1, -1), (-1, 1): mean (1/3, -1/3), T = 1/9;
    # of 8 label permutations, 6 give means ±1/3 (T = 1/9) and 2 give ±1 (T = 1): p = 1
    r = capstone2023.group_permutation_test(_frame(np.array([[1.0, -1], [1, -1], [-1, 1]])))
    assert r.exact and r.n_permutations == 8
    assert r.statistic == pytest.approx(1 / 9) and r.pvalue == pytest.approx(1.0)
    assert r.null_mean == pytest.approx((6 / 9 + 2) / 8)
    # all three agree: T = 1, only the 2 permutations that keep all or flip all reach it
    r = capstone2023.group_permutation_test(_frame(np.array([[1.0, -1], [1, -1], [1, -1]])))
    assert r.statistic == pytest.approx(1.0) and r.pvalue == pytest.approx(2 / 8)


def test_cells_average_their_own_variances():
    # cell c1 agrees (T_c1 = 1), cell c2 cancels (T_c2 = 0): T = 1/2
    d = np.array([[1.0, -1], [1, -1], [1, -1], [-1, 1]])
    r = capstone2023.group_permutation_test(_frame(d, ["c1", "c1", "c2", "c2"]), cell="cell")
    assert r.n_cells == 2 and r.statistic == pytest.approx(0.5)
    # per cell, T_c is 1 for 2 of 4 permutations and 0 otherwise: P(T >= 1/2) = 1 - (1/2)^2
    assert r.exact and r.pvalue == pytest.approx(0.75)


def test_planted_bias_is_found_and_the_null_keeps_its_level():
    rng = np.random.default_rng(0)
    n_attr, n_groups = 12, 4
    sign = np.repeat([1.0, -1.0], n_attr // 2)[:, None]          # career vs family attributes
    effect = np.array([1.0, 1.0, -1.0, -1.0])[None, :]           # male vs female terms
    cells = ["career"] * 6 + ["family"] * 6
    shift = rng.normal(0, 3, (n_attr, 1))                         # a shift common to all groups
    planted = shift + 0.8 * sign * effect + rng.normal(0, 0.5, (n_attr, n_groups))
    r = capstone2023.group_permutation_test(_frame(planted, cells), cell="cell", n_permutations=2000, seed=1)
    assert not r.exact and r.pvalue < 0.01
    # without the cells the two halves cancel: the planted effect is invisible
    assert capstone2023.group_permutation_test(_frame(planted), n_permutations=2000, seed=1).pvalue > 0.05
    # under the null (no group effect) the test rejects at about its level
    pvalues = [capstone2023.group_permutation_test(
        _frame(rng.normal(0, 3, (n_attr, 1)) + rng.normal(0, 0.5, (n_attr, n_groups)), cells),
        cell="cell", n_permutations=199, seed=k).pvalue for k in range(100)]
    assert 0.0 <= np.mean(np.array(pvalues) <= 0.05) <= 0.12


def test_bad_input_is_named():
    with pytest.raises(Seed004Error, match="at least two replicates"):
        capstone2023.group_permutation_test(_frame(np.array([[1.0, -1]])))
    frame = _frame(np.array([[1.0, -1], [1, -1]])).iloc[:-1]
    with pytest.raises(Seed004Error, match="without a score for every group"):
        capstone2023.group_permutation_test(frame)
    with pytest.raises(Seed004Error, match="no column 'cell'"):
        capstone2023.group_permutation_test(_frame(np.array([[1.0, -1], [1, -1]])), cell="cell")
    with pytest.raises(Seed004Error, match="more than one score"):
        capstone2023.group_permutation_test(pd.concat([frame, frame]))


def _have_mirror() -> bool:
    return sources.availability("seed004-cg-score-2", timeout=1)[0]


@pytest.mark.skipif(not _have_mirror(), reason="seed 004's files cannot be had (no mirror, offline)")
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


@pytest.mark.skipif(not _have_mirror(), reason="seed 004's files cannot be had (no mirror, offline)")
def test_country_book_holds_every_country_of_the_list():
    book = capstone2023.country_templates()
    entries = book.lists["countries"].entries
    assert len(entries) == capstone2023.N_COUNTRIES == len(capstone2023.countries())
    regions = [e.features["region"] for e in entries]
    assert regions.count("unknown") == 245 - 24
    assert dict(zip([e.id for e in entries], regions, strict=True))["United States"] == "americas"


@pytest.mark.skipif(not _have_mirror(), reason="seed 004's files cannot be had (no mirror, offline)")
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
