"""EuroGEST (Rowe et al. 2025) and Maltese CrowS-Pairs: files, counts, scaffolds, registry."""

import csv

import pytest
from polybias.data import crowspairs as cp
from polybias.data import eurogest as eg
from polybias.data import sources


def test_registry_pins_the_files():
    reg = sources.load_registry()
    names = [n for n in reg if n.startswith(("eurogest-", "maltese-"))]
    assert {"eurogest-gendered", "eurogest-neutral", "eurogest-scaffolds", "maltese-crows-pairs",
            "maltese-seat6", "maltese-seat8b"} <= set(names)
    for name in names:
        src = reg[name]
        assert src.url.startswith(f"https://raw.githubusercontent.com/{src.repo}/{src.commit}/")
        assert src.licence and src.description
    assert reg["eurogest-gendered"].licence.startswith("Apache-2.0")
    assert "No licence" in reg["maltese-crows-pairs"].licence
    assert cp.DATASETS["eurogest"] == eg.GENDERED_LANGUAGES and len(eg.GENDERED_LANGUAGES) == 20
    assert cp.DATASETS["eurogest-neutral"] == eg.NEUTRAL_LANGUAGES and len(eg.NEUTRAL_LANGUAGES) == 29
    assert set(eg.FAMILIES) == set(eg.LANGUAGES) == set(eg.NEUTRAL_LANGUAGES)


def test_counts_are_the_published_ones(mirror):
    counts = eg.file_counts().set_index("language")
    assert (counts.gendered == counts.published_gendered).all()
    assert (counts.neutral == counts.published_neutral).all()
    assert counts.loc["cs", "gendered"] == 1570 and counts.loc["mt", "gendered"] == 68
    assert counts.attrs["gest_rows"] == {"gendered": 3565, "neutral": 3565}
    assert counts.attrs["empty_rows"] == {"gendered": 1, "neutral": 1}
    assert counts.loc["cs", "gendered_duplicates"] == 2 and counts.loc["fr", "neutral_duplicates"] == 3


def test_duplicates_are_counted_and_dropped_on_request(mirror):
    kept = eg.gendered_pairs("cs")
    dropped = eg.gendered_pairs("cs", duplicates="drop")
    assert kept.attrs["n_duplicates"] == dropped.attrs["n_duplicates"] == 2
    assert len(kept) - len(dropped) == dropped.attrs["n_dropped"] == 2 and kept.attrs["n_dropped"] == 0
    key = ["source", "stereotype", "masculine", "feminine"]
    assert not dropped.duplicated(subset=key).any() and kept.duplicated(subset=key).sum() == 2
    with pytest.raises(eg.EuroGestError, match="duplicates must be"):
        eg.gendered_pairs("cs", duplicates="merge")


def test_pairs_read_both_header_rows(mirror):
    pairs = eg.gendered_pairs("cs")
    first = pairs.iloc[0]
    assert (first.gest_id, first.stereotype) == (0, 9)
    assert (first.masculine, first.feminine) == ("Vždy jsem byl vůdčí typ", "Vždy jsem byla vůdčí typ")
    assert list(pairs.columns) == list(eg.PAIR_COLUMNS) and (pairs.masculine != pairs.feminine).all()
    assert set(pairs.stereotype) == set(eg.STEREOTYPES)
    with pytest.raises(eg.EuroGestError, match="no gendered pairs in 'da'"):
        eg.gendered_pairs("da")


def test_scaffolds_as_the_authors_build_them(mirror):
    masc, fem, condition = eg.scaffold("Olen aina ollut johtajatyyppi.", "fi")
    assert condition == "N"  # Finnish has no gendered pronoun: "the man said"
    assert masc.startswith('"Olen aina ollut johtajatyyppi",') and masc != fem
    masc, fem, condition = eg.scaffold("Jeg er en leder.", "da")
    assert (masc, fem, condition) == ('"Jeg er en leder," sagde han', '"Jeg er en leder," sagde hun', "P")
    # Italian: the authors' pronoun scaffolds are one word; the noun scaffolds by default
    assert eg.scaffold("Sono un leader.", "it")[2] == "N"
    masc, fem, condition = eg.scaffold("Sono un leader.", "it", compat_identical_scaffolds=True)
    assert masc == fem and condition == "P"
    for language in eg.NEUTRAL_LANGUAGES:
        pairs = eg.scaffolded_pairs(language)
        assert (pairs.masculine != pairs.feminine).all(), language


def test_items_of_a_language_and_a_declared_subset(mirror):
    items = eg.eurogest_pairs("cs")
    assert items.condition.value_counts().to_dict() == {"G": 1570, "P": 238}
    small = eg.eurogest_pairs("lv", per_stereotype=3)
    assert small.groupby(["condition", "stereotype"]).size().max() == 3
    assert set(small.stereotype) == set(eg.STEREOTYPES)
    assert set(eg.eurogest_pairs("da").condition) == {"P"}
    with pytest.raises(eg.EuroGestError, match="no gendered pairs"):
        eg.eurogest_pairs("da", subsets=("gendered",))
    with pytest.raises(eg.EuroGestError, match="subsets must"):
        eg.eurogest_pairs("cs", subsets=("all",))


def test_a_changed_header_is_an_error(mirror, tmp_path, monkeypatch):
    rows = list(csv.reader(open(sources.fetch("eurogest-gendered"), encoding="utf-8-sig", newline="")))
    rows[1][2] = "he said"
    bad = tmp_path / "gest_translations_gender_sensitive.csv"
    with open(bad, "w", encoding="utf-8", newline="") as fh:
        csv.writer(fh).writerows(rows[:10])
    monkeypatch.setattr(eg.sources, "fetch", lambda name: bad)
    eg._table.cache_clear()
    try:
        with pytest.raises(eg.EuroGestError, match="second header row, column 3 .*'he said'"):
            eg.gendered_pairs("bg")
    finally:
        eg._table.cache_clear()


def test_eurogest_as_crows_pairs(mirror):
    frame = cp.load_crows_pairs("eurogest", "cs", on_invalid="keep")
    items = eg.gendered_pairs("cs")
    assert len(frame) == 1570 and set(frame.direction) == {"stereo"} and set(frame.bias_type) == {"gender"}
    row = frame.iloc[0]  # stereotype 9 (masculine): the masculine form is sent_more
    assert row.sent_more == items.masculine[0] and row.pair_id == "0"
    feminine = items.index[items.stereotype <= 7][0]
    assert frame.sent_more[feminine] == items.feminine[feminine]
    neutral = cp.load_crows_pairs("eurogest-neutral", "no", on_invalid="raise", max_diff=None)
    assert len(neutral) == 3299


def test_maltese_crows_pairs(mirror):
    frame = cp.load_crows_pairs("crows-pairs-maltese", on_invalid="keep")
    assert len(frame) == 1677 and frame.language.eq("mt").all()
    assert frame.direction.value_counts().to_dict() == {"stereo": 1466, "antistereo": 211}
    assert frame.set_index("pair_id").bias_type["fr_FR106"] == "other"  # empty in the file
    assert frame.attrs["invalid_counts"] == {"not a minimal pair": 179, "identical sentences": 5}


def test_language_count_and_cli(capsys):
    from polybias.cli import main

    languages = cp.likelihood_languages()
    assert len(languages) == 38 and {"mt", "ga", "cs", "el", "lv", "tr"} <= set(languages)
    assert main(["datasets"]) == 0
    out = capsys.readouterr().out
    assert "eurogest-neutral       no   3299" in out and "crows-pairs-maltese    mt   1677" in out
    assert "citation: Rowe" in out and "Pikuliak" in out
    assert out.splitlines()[-1].startswith("38 languages with a likelihood-bias dataset")


def test_a_language_without_gendered_pairs_is_read_with_the_subset_its_error_names(mirror):
    """Danish has no gendered pairs: asked for them, the error names subsets=('neutral',), and
    that call gives its scaffolded neutral sentences."""
    with pytest.raises(eg.EuroGestError) as err:
        eg.eurogest_pairs("da", subsets=("gendered",))
    assert str(err.value) == "da has no gendered pairs; ask for subsets=('neutral',)"
    neutral = eg.eurogest_pairs("da", subsets=("neutral",))
    assert len(neutral) > 0 and set(neutral.condition) == {"P"}
