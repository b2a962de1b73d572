"""The per-dataset count of pairs whose CrowS alignment changed, as ``docs/reference_compat.md``
states it, recomputed (so the page cannot go stale)."""

import pytest
from polybias import cli, paths
from polybias.data.crowspairs import DATASETS
from polybias.engines.pair_scores import alignment_changes
from polybias.models import ModelError
from polybias.planted.synthetic import build_tokenizer, minimal_pairs
from polybias.studies import crows_pairs

DOC = paths.project_root() / "docs" / "reference_compat.md"


def doc_rows() -> dict[tuple[str, str], str]:
    """(dataset, language) -> the table row of the page."""
    rows = {}
    for line in DOC.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| ") and len(cells) == 5 and cells[2].isdigit():
            rows[(cells[0], cells[1])] = line
    return rows


def test_the_page_lists_every_registered_dataset_and_language():
    assert set(doc_rows()) == {(d, lang) for d, langs in DATASETS.items() for lang in langs}


def test_crows_pairs_count_equals_the_page(mirror):
    table = crows_pairs.alignment_change_counts(datasets={"crows-pairs": ("en",)})
    row = table.iloc[0]
    assert row.changed >= 1  # the file has a pair with ties under an uncased WordPiece tokenizer
    assert doc_rows()[("crows-pairs", "en")] == \
        f"| crows-pairs | en | {row.pairs} | {row.changed} | {row.pair_ids} |"


def test_command_prints_the_rows_of_the_page(mirror, capsys):
    assert cli.main(["crows-alignment", "--dataset", "kaneko2022"]) == 0
    printed = capsys.readouterr().out.strip().splitlines()
    assert printed[0] == "| dataset | language | pairs | changed | pair_ids |"
    rows = doc_rows()
    assert printed[2:] == [rows[("kaneko2022", "ja")], rows[("kaneko2022", "ru")]]


def test_command_refuses_an_unknown_dataset(capsys):
    assert cli.main(["crows-alignment", "--dataset", "crows-pears"]) == 2
    assert "unknown dataset(s) crows-pears" in capsys.readouterr().err


def test_counts_need_a_model_with_a_tokenizer():
    with pytest.raises(ModelError, match="static"):
        crows_pairs.alignment_change_counts("w2v-gnews", {"crows-pairs": ("en",)})


@pytest.mark.parametrize("language", ["en", "bn", "hi"])
def test_planted_pairs_keep_their_alignment(language):
    """The planted minimal pairs substitute one word and the planted tokenizers make every
    corpus word one token: no pair has a tie, so planted scores do not change."""
    pairs = minimal_pairs(200, language=language, seed=0)
    tok = build_tokenizer(pairs.sent_more.tolist() + pairs.sent_less.tolist(), "mlm")
    assert not alignment_changes(tok, pairs).changed.any()
    assert not alignment_changes(tok, pairs, after="seed-001").changed.any()
    # the check can fail: a swapped pair with a tie changes
    swapped = pairs.head(1).assign(sent_more="the man and the woman left .",
                                   sent_less="the woman and the man left .")
    tok = build_tokenizer(swapped.sent_more.tolist(), "mlm")
    assert alignment_changes(tok, swapped).changed.all()
