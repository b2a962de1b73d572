"""GEST: the registry of its files, the sentence and score readers, the released runs."""

import pytest
from polybias.data import gest, sources


def test_registry_pins_every_file():
    reg = sources.load_registry()
    names = [n for n in reg if n.startswith("gest-")]
    assert len(names) == 1 + 44 + 46  # the sentences, 11 x 4 masked and 23 x 2 causal runs
    for n in names:
        src = reg[n]
        assert src.repo == "kinit-sk/gest" and src.commit == "7dd908cae11720ee5d95e43a4ab94fb410c8b790"
        assert src.licence.startswith("Apache-2.0")
        assert src.url.startswith("https://raw.githubusercontent.com/kinit-sk/gest/7dd908c")


def test_released_runs_from_the_registry():
    runs = gest.prediction_runs()
    assert runs.groupby("kind").size().to_dict() == {"causal": 46, "masked": 44}
    for kind, templates in (("masked", [0, 1, 2, 3]), ("causal", [0, 1])):
        per_model = runs[runs.kind == kind].groupby("model").template.apply(sorted)
        assert all(t == templates for t in per_model), kind
    assert set(runs.model) <= set(gest.HUB_IDS)
    assert runs.set_index("model").hub_id["xlm-v-base"].iloc[0] == "facebook/xlm-v-base"


def test_templates_are_declared_with_the_sentence_slot():
    assert len(gest.MASKED_TEMPLATES) == 4 and len(gest.CAUSAL_TEMPLATES) == 2
    for template in [t for pair in gest.MASKED_TEMPLATES for t in pair] + [p for p, _, _ in gest.CAUSAL_TEMPLATES]:
        assert template.count("{s}") == 1
    assert gest.fill('He said: "{s}"', "I {s} am.") == 'He said: "I {s} am."'


@pytest.mark.parametrize(("text", "message"), [
    ("sentence\nI am.\n", "missing column.*stereotype"),
    ("sentence,stereotype\nI am.,0\n", "line 2 has the stereotype '0'"),
    ("sentence,stereotype\nI am.,x\n", "line 2 has the stereotype 'x'"),
    ('sentence,stereotype\nI am.,1\n"  ",2\n', "line 3 has an empty sentence"),
])
def test_malformed_sentences(text, message):
    with pytest.raises(gest.GestError, match=message):
        gest.read_sentences(text, "gest.csv")


@pytest.mark.parametrize(("text", "n", "message"), [
    ("0.1\n0.2\n", 3, "2 scores for 3 sentences"),
    ("0.1\n0.2\n0.3", 2, "3 scores for 2 sentences"),
    ("0.1\nabc\n", 2, "line 2 is 'abc', not a number"),
    ("0.1\nnan\n", 2, "line 2 is 'nan', not a finite number"),
    ("0.1\n\n0.3", 3, "line 2 is '', not a number"),
])
def test_malformed_scores(text, n, message):
    with pytest.raises(gest.GestError, match=message):
        gest.read_scores(text, n, "x_template-0.txt")


def test_unknown_runs_are_refused():
    with pytest.raises(gest.GestError, match="no released masked run 'gpt2' template 0; models: albert"):
        gest.load_predictions("masked", "gpt2", 0)
    with pytest.raises(gest.GestError, match="kind must be one of masked, causal"):
        gest.source_name("mlm", "bert-base-uncased", 0)


def test_the_released_files_read(mirror):
    sentences = gest.load_gest()
    assert len(sentences) == gest.N_SENTENCES and set(sentences.stereotype) == set(range(1, 17))
    scores = gest.load_predictions("causal", "gpt2", 0)
    assert scores.shape == (gest.N_SENTENCES,)
    assert scores[0] == pytest.approx(float(sources.fetch("gest-glm-gpt2-t0").read_text().split("\n")[0]))


def test_the_dataset_card_lists_gest():
    card = gest.dataset_card()
    assert card["sources"] == ["gest-sentences"] and card["languages"] == ["en"]
    row = gest.list_datasets().iloc[0]
    assert (row.dataset, row.language, row.sentences) == ("gest", "en", 3565)
    assert "7 Beautiful" in row.stereotypes and "`gest-sentences`" in gest.card_markdown()


def test_cli_lists_gest(capsys):
    from polybias.cli import main

    assert main(["datasets"]) == 0
    lines = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("gest ")]
    assert len(lines) == 1 and lines[0].split()[1:3] == ["en", "3565"]
