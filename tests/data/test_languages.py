"""Language facts from data/languages/<lang>.yaml (polybias.data.languages)."""

import pytest
from polybias.data import languages, text


def test_the_shipped_facts_are_those_text_applies():
    bn, hi, en = (languages.language(c) for c in ("bn", "hi", "en"))
    assert (bn.normalization, bn.script.name, hi.script.name, en.normalization) == \
        ("NFKC", "Bengali", "Devanagari", "NFC")
    assert text.normalization_form("bn") == "NFKC" and text.normalization_form("fr") == "NFC"
    assert text.split_sentences("এক। দুই॥ তিন", "bn") == ["এক।", "দুই॥", "তিন"]
    with pytest.raises(text.TextError, match="not in Devanagari script"):
        text.check_script(["दो", "two"], "hi")


@pytest.mark.parametrize("body, message", [
    ("normalization: NFX\n", "normalization 'NFX' is not one of"),
    ("sentence_terminators: ''\n", "sentence_terminators must be a non-empty string"),
    ("script: {name: Thai, first: 3584}\n", "script must be {name, first, last}"),
    ("scripts: {}\n", "unknown key\\(s\\) scripts"),
])
def test_a_malformed_language_file_names_the_problem(empty_project, body, message):
    folder = empty_project / "data" / "languages"
    folder.mkdir(parents=True)
    (folder / "th.yaml").write_text(body)
    with pytest.raises(languages.LanguageError, match=f"th.yaml: {message}"):
        languages.language("th")
    assert languages.language("vi") == languages.Language("vi", "vi")  # no file: defaults
