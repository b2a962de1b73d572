"""Templating language: agreement, synonyms, masking, spans and validation errors."""

from __future__ import annotations

import copy

import pytest
from polybias.data import templating
from polybias.data.templating import TemplateError


def test_greek_feminine_group_declines_the_adjective_and_quantifier():
    book = templating.load_templates("catbias_el")
    fem = templating.realise(book, "el_gender_all_are", {"all": "all", "group": "women", "trait": "violent"})
    masc = templating.realise(book, "el_gender_all_are", {"all": "all", "group": "men", "trait": "violent"})
    assert [f.text for f in fem] == ["Όλες οι γυναίκες είναι βίαιες."]
    assert [f.text for f in masc] == ["Όλοι οι άντρες είναι βίαιοι."]
    # the agreement holds when the group itself is masked (prior / CB sentences)
    masked = templating.realise(book, "el_gender_why", {"group": "women", "trait": "hysterical"},
                                mask=["group"])
    assert masked[0].text == "Γιατί είναι πάντα τόσο υστερικές οι [MASK];"


def test_hindi_adjective_and_verb_agree_with_the_subject():
    book = templating.load_templates("catbias_hi")
    assert templating.realise(book, "hi_person_is", {"person": "girl", "trait": "bad"})[0].text == \
        "वह लड़की बहुत बुरी है।"
    assert templating.realise(book, "hi_person_is", {"person": "boy", "trait": "bad"})[0].text == \
        "वह लड़का बहुत बुरा है।"
    assert templating.realise(book, "hi_person_always", {"person": "woman", "habit": "lies"})[0].text == \
        "औरत हमेशा झूठ बोलती है।"


BANGLA = {
    "language": "bn",
    "lists": {
        "men_women": [{"id": "boy", "features": {"gender": "m"}, "word": "ছেলে"},
                      {"id": "girl", "features": {"gender": "f"}, "word": "মেয়ে"}],
        "traits": [{"id": "ungrateful", "features": {"s2": "hoy"}, "word": "অকৃতজ্ঞ"},
                   {"id": "untidy", "features": {"s2": "hoye_thake"}, "word": "অগোছালো"}],
        "s2_ending": [{"id": "copula", "forms": {"hoy": "হয়", "hoye_thake": "হয়ে থাকে"}}],
    },
    "templates": [{"name": "bn_s2", "text": "{t}রা সাধারণত {a} {end}।",
                   "slots": {"t": {"list": "men_women", "role": "target"},
                             "a": {"list": "traits", "role": "attribute"},
                             "end": {"list": "s2_ending", "form": "{a.s2}"}}}],
}


def test_bangla_trait_takes_its_own_ending_and_target_keeps_the_suffix():
    book = templating.parse_templates(BANGLA)
    texts = [f.text for f in templating.expand(book, "bn_s2", fixed={"t": "girl"})]
    assert texts == ["মেয়েরা সাধারণত অকৃতজ্ঞ হয়।", "মেয়েরা সাধারণত অগোছালো হয়ে থাকে।"]
    f = templating.realise(book, "bn_s2", {"t": "boy", "a": "untidy", "end": "copula"}, mask=["t"])[0]
    assert f.text.startswith("[MASK]রা") and f.spans["t"] == (0, 6)


def test_synonyms_give_variants_and_spans_point_at_the_words():
    book = templating.load_templates("catbias_el")
    out = templating.realise(book, "el_gender_are", {"group": "men", "trait": "savage"})
    assert [f.text for f in out] == ["Οι άντρες είναι άγριοι.", "Οι άντρες είναι βάρβαροι."]
    assert [f.variant for f in out] == [0, 1]
    for f in out:
        for slot, (a, b) in f.spans.items():
            assert f.text[a:b] == f.words[slot]


def test_expand_covers_every_entry_and_literal_braces_survive():
    raw = {"lists": {"g": ["a", "b"], "x": ["u", ["v", "w"]]},
           "templates": [{"name": "t", "text": "{{lit}} {g} {x}", "slots": {"g": "g", "x": "x"}}]}
    out = templating.expand(templating.parse_templates(raw), "t")
    assert [f.text for f in out] == ["{lit} a u", "{lit} a v", "{lit} a w",
                                     "{lit} b u", "{lit} b v", "{lit} b w"]
    assert out[1].spans == {"g": (6, 7), "x": (8, 9)}


def test_shipped_template_files_are_valid():
    for name in ("catbias_en", "catbias_el", "catbias_fa", "catbias_hi"):
        book = templating.load_templates(name)
        for t in book.templates.values():
            assert t.the("target") and t.the("attribute")


# ---------------------------------------------------------------- errors name the template

def broken(edit):
    raw = copy.deepcopy(BANGLA)
    edit(raw)
    return raw


@pytest.mark.parametrize("edit, message", [
    (lambda r: r["templates"][0].update(text="{t}রা {a} {end} {oops}।"), r"'bn_s2'.*unknown slot.*oops"),
    (lambda r: r["templates"][0].update(text="{t}রা {a}।"), r"'bn_s2'.*'end'.*declared but not in the text"),
    (lambda r: r["lists"]["s2_ending"][0]["forms"].pop("hoye_thake"),
     r"'bn_s2'.*entry 'copula'.*no form 'hoye_thake'"),
    (lambda r: r["lists"]["traits"][0]["features"].pop("s2"), r"'bn_s2'.*'ungrateful'.*no feature 's2'"),
    (lambda r: r["templates"][0]["slots"]["a"].update(role="target"), r"'bn_s2' has 2 target slots"),
    (lambda r: r["templates"][0]["slots"]["t"].update(list="nope"), r"'bn_s2'.*unknown list 'nope'"),
    (lambda r: r["lists"]["men_women"].append(""), r"empty or non-text word"),
    (lambda r: r["lists"]["traits"].append({"id": "x", "word": "{a}"}), r"brace"),
    (lambda r: r["lists"]["men_women"].append({"id": "boy", "word": "x"}), r"repeats entry id"),
    (lambda r: r["templates"][0]["slots"]["t"].update(form="{a.s2}") or
     r["templates"][0]["slots"]["a"].update(form="{t.gender}"), r"'bn_s2'.*cycle"),
])
def test_bad_templates_are_errors_naming_the_template(edit, message):
    with pytest.raises(TemplateError, match=message):
        templating.parse_templates(broken(edit), file="bn.yaml")


def test_unfilled_placeholder_and_unknown_entries_are_errors():
    book = templating.parse_templates(BANGLA)
    with pytest.raises(TemplateError, match=r"'bn_s2'.*\['end'\] left unfilled"):
        templating.realise(book, "bn_s2", {"t": "boy", "a": "untidy"})
    with pytest.raises(TemplateError, match=r"list 'traits' has no entry 'kind'"):
        templating.realise(book, "bn_s2", {"t": "boy", "a": "kind", "end": "copula"})
    with pytest.raises(TemplateError, match=r"cannot mask unknown slot"):
        templating.realise(book, "bn_s2", {"t": "boy", "a": "untidy", "end": "copula"}, mask=["z"])
    with pytest.raises(TemplateError, match=r"no template 'nope'"):
        book.template("nope")


def test_missing_file_and_malformed_yaml_are_errors(tmp_path):
    with pytest.raises(TemplateError, match="not found"):
        templating.load_templates(tmp_path / "none.yaml")
    bad = tmp_path / "bad.yaml"
    bad.write_text("lists: [unclosed\n", encoding="utf-8")
    with pytest.raises(TemplateError, match="malformed YAML"):
        templating.load_templates(bad)
    empty = tmp_path / "empty.yaml"
    empty.write_text("language: en\n", encoding="utf-8")
    with pytest.raises(TemplateError, match="empty.yaml: expected a mapping"):
        templating.load_templates(empty)


def test_the_role_lookup_names_the_template():
    raw = {"lists": {"g": ["a"]}, "templates": [{"name": "nomask", "text": "{g} x", "slots": {"g": "g"}}]}
    t = templating.parse_templates(raw, file="f.yaml").template("nomask")
    with pytest.raises(TemplateError, match=r"'nomask' \(f.yaml\) needs exactly one target slot, has 0"):
        t.the("target")


def test_words_and_texts_are_put_in_nfc():
    import unicodedata

    composed = unicodedata.normalize("NFC", "বোন")  # vowel sign O (U+09CB)
    decomposed = unicodedata.normalize("NFD", composed)  # E + AA signs
    assert decomposed != composed
    raw = {"lists": {"g": [decomposed]}, "templates": [
        {"name": "t", "text": "{g}েরা " + unicodedata.normalize("NFD", "কোথায়?"),
         "slots": {"g": {"list": "g", "role": "target"}}}]}
    out = templating.expand(templating.parse_templates(raw), "t")[0]
    assert out.words["g"] == composed
    assert out.text == unicodedata.normalize("NFC", composed + "েরা কোথায়?")
