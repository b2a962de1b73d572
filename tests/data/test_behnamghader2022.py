"""Seed 002's templates read from the authors' file: whole, per category and language."""

from __future__ import annotations

import json

import pytest
from polybias.data import behnamghader2022, sources, templating
from polybias.metrics import catbias
from polybias.results import report
from polybias.studies import categorical_bias


@pytest.fixture
def raw(mirror):
    return json.loads(sources.fetch(behnamghader2022.SOURCE).read_text(encoding="utf-8"))


def _words(w):
    return (w,) if isinstance(w, str) else tuple(w)


@pytest.mark.parametrize("category", ["gender", "religion", "ethnicity"])
@pytest.mark.parametrize("language", ["en", "el", "fa"])
def test_books_are_loaded_whole(raw, category, language):
    lang = {v: k for k, v in behnamghader2022.LANGUAGES.items()}[language]
    book = behnamghader2022.template_book(category, language)
    assert book.language == language
    cat = next(c for c in raw["categories"] if behnamghader2022.CATEGORIES[c["type"]] == category)
    assert len(cat["templates"]) == behnamghader2022.EXPECTED_SETS[category]
    assert len(book.templates) == sum(len(s["base_templates"]) for s in cat["templates"])
    for i, tset in enumerate(cat["templates"]):
        for j, bt in enumerate(tset["base_templates"]):
            t = book.template(f"{language}_{category}_{i}_{j}")
            assert t.set == f"{category}_{i}"
            assert t.text == bt[lang].replace("[MASK]", "{group}")
            for slot, field in (("group", "words"), ("prior", "prior_variations")):
                lname, _, key = tset[field][lang].partition("|")
                wl = book.lists[t.slots[slot].list]
                assert wl.name == lname
                # every word of the file's list, in file order, synonyms kept
                assert [e.forms[key] for e in wl.entries] == [_words(w) for w in raw["word_lists"][lname][key]]
                assert len(wl.entries) == behnamghader2022.EXPECTED_LIST_SIZES[lname]
                # the same ids in every language: the English words
                assert [e.id.rsplit("_", 1)[0] if e.id.endswith("_2") else e.id for e in wl.entries] == \
                    [_words(w)[0] for w in raw["word_lists"][lname]["english"]]


def test_every_sentence_of_every_book_can_be_realised(mirror):
    n = 0
    for cat in behnamghader2022.CATEGORIES.values():
        for lang in behnamghader2022.LANGUAGES.values():
            book = behnamghader2022.template_book(cat, lang)
            for t in book.templates:
                n += len(templating.expand(book, t, mask=["group"]))
    assert n > 10_000


def test_greek_priors_decline_for_women_where_the_file_gives_feminine_forms(raw):
    book = behnamghader2022.template_book("gender", "el")
    adjs = raw["word_lists"]["negative_adjs"]
    men = templating.realise(book, "el_gender_2_0", {"group": "men", "prior": "violent"})
    women = templating.realise(book, "el_gender_2_0", {"group": "women", "prior": "violent"})
    assert men[0].text == f"Οι άντρες είναι {adjs['greek'][0]}."
    assert women[0].text == f"Οι γυναίκες είναι {adjs['greek_fem'][0]}."
    # careers (set 0) have no feminine list: the same word for both
    c = [templating.realise(book, "el_gender_0_0", {"group": g, "prior": "programmers"})[0].text
         for g in ("men", "women")]
    assert c == ["Είναι καλύτερα οι προγραμματιστές να είναι άντρες.",
                 "Είναι καλύτερα οι προγραμματιστές να είναι γυναίκες."]
    # the religion-noun set uses the feminine list for every religion (θρησκεία)
    rel = behnamghader2022.template_book("religion", "el")
    assert rel.template("el_religion_2_0").slots["prior"].form == "greek_fem"


def test_synonyms_and_repeats_are_kept(mirror):
    en = behnamghader2022.template_book("ethnicity", "en")
    usa = templating.realise(en, "en_ethnicity_1_0", {"group": "the United States", "prior": "violent"})
    assert [f.text for f in usa] == [f"People from {c} are violent." for c in
                                     ("the United States", "the US", "the USA")]
    ids = en.lists["race_people_specific"].ids
    assert "germans" in ids and "germans_2" in ids and len(ids) == 117


def test_set_descriptions_negated_periphrastic_broad_specific(mirror):
    sets = behnamghader2022.template_sets()
    en = sets[sets.language == "english"].set_index("set")
    assert list(en.index[en.negated]) == ["gender_1", "religion_0"]
    assert list(en.index[en.periphrastic]) == ["ethnicity_1", "ethnicity_3"]
    assert list(en.granularity[en.index.str.startswith("ethnicity")]) == ["broad", "broad", "specific", "specific"]
    assert list(sets.feminine_priors[sets.feminine_priors != ""]) == \
        ["negative_adjs|greek_fem", "negative_adjs_gendered|greek_fem"]


def test_counts_through_the_loader_equal_the_files_and_reproduce_0_6271(mirror):
    keys = ["category", "template_set", "language"]
    ours = behnamghader2022.prior_counts().sort_values(keys).reset_index(drop=True)
    direct = categorical_bias.seed002_prior_counts(sources.fetch(behnamghader2022.SOURCE)).sort_values(keys).reset_index(drop=True)
    assert ours.equals(direct[ours.columns])
    rep = report.load_reported("behnamghader2022_cb")
    nb = rep[rep.table.str.startswith("main.ipynb") & (rep.template_set != "aggregated")].copy()
    nb["template_set"] = nb.template_set.astype(int)
    agg = catbias.seed002_aggregate(nb.rename(columns={"value": "cb"}), ours).set_index(["category", "language"])
    assert agg.cb["gender", "english"] == pytest.approx(0.6271, abs=5e-5)


def test_book_names(mirror):
    assert behnamghader2022.book_from_name("seed002_religion_fa").language == "fa"
    assert behnamghader2022.template_book("ethnicity/race", "greek").language == "el"
    with pytest.raises(behnamghader2022.Seed002Error, match="seed002_<category>_<language>"):
        behnamghader2022.book_from_name("seed002_gender")
    with pytest.raises(behnamghader2022.Seed002Error, match="not 'de'"):
        behnamghader2022.book_from_name("seed002_gender_de")


def _write(tmp_path, raw):
    path = tmp_path / "prior_sentence_templates.json"
    path.write_text(json.dumps(raw, ensure_ascii=False), encoding="utf-8")
    return path


def test_template_without_a_language_names_the_file_and_entry(raw, tmp_path):
    del raw["categories"][0]["templates"][1]["base_templates"][0]["greek"]
    with pytest.raises(behnamghader2022.Seed002Error,
                       match=r"prior_sentence_templates.json: category 'gender' template set 1, "
                             r"base template 0: no text for language 'greek'"):
        behnamghader2022.template_book("gender", "en", path=_write(tmp_path, raw))


def test_reference_without_a_language_or_list_is_named(raw, tmp_path):
    del raw["categories"][1]["templates"][0]["words"]["persian"]
    with pytest.raises(behnamghader2022.Seed002Error, match=r"category 'religion' template set 0: words has no "
                                                   r"language 'persian'"):
        behnamghader2022.load(_write(tmp_path, raw))


def test_lost_words_and_broken_templates_are_errors(raw, tmp_path):
    bad = json.loads(json.dumps(raw))
    bad["word_lists"]["careers"]["greek"].pop()
    with pytest.raises(behnamghader2022.Seed002Error, match=r"word list 'careers': its languages differ in length"):
        behnamghader2022.load(_write(tmp_path, bad))
    bad = json.loads(json.dumps(raw))
    for k in bad["word_lists"]["careers"]:
        bad["word_lists"]["careers"][k].pop()
    with pytest.raises(behnamghader2022.Seed002Error, match=r"'careers': 22 words, expected 23"):
        behnamghader2022.load(_write(tmp_path, bad))
    bad = json.loads(json.dumps(raw))
    bad["categories"][2]["templates"][0]["base_templates"][0]["english"] = "People are {prior}."
    with pytest.raises(behnamghader2022.Seed002Error, match=r"'ethnicity/race' template set 0, base template 0 "
                                                   r"\(english\): needs one \[MASK\]"):
        behnamghader2022.load(_write(tmp_path, bad))


def test_paper_tables_rebuild_tables_1a_and_2_from_the_printed_set_values(mirror):
    rep = report.load_reported("behnamghader2022_cb")
    tables = behnamghader2022.paper_tables({"cb": behnamghader2022.seed_set_values(rep)})
    t1 = tables["table1"].set_index("category")
    assert list(t1.columns) == ["English", "Greek", "Persian"]
    assert list(t1.index) == ["gender", "religion", "ethnicity"]
    assert t1.English["gender"] == pytest.approx(0.6271, abs=5e-5)
    assert t1.Greek["ethnicity"] == pytest.approx(57.67, abs=5e-3)   # Table 2's aggregate, not Table 1(a)'s
    t2 = tables["table2"]
    assert len(t2) == 4 + 1 + 3 + 1 + 4 + 1
    # the set labels are the paper's (as transcribed in the reported table)
    printed = rep[rep.table.str.startswith("Table 2") & (rep.template_set != "aggregated")]
    assert set(t2.template[t2.template != "Aggregated"]) == set(printed.template)
    agg = t2[t2.template == "Aggregated"].set_index("category")
    table2 = rep[rep.table.str.startswith("Table 2") & (rep.template_set == "aggregated")].pivot_table(
        index="category", columns="language", values="value")
    for cat in ("gender", "religion", "ethnicity"):
        for lang, col in (("english", "English"), ("greek", "Greek"), ("persian", "Persian")):
            assert agg[col][cat] == pytest.approx(table2[lang][cat], abs=0.011)


def test_score_all_gives_every_set_of_a_category_and_its_tables(mirror):
    import torch
    from polybias.engines import scoring
    from polybias.planted import tiny_models

    torch.set_num_threads(1)
    model, tok = tiny_models.build_tiny_model("bert", seed=0)
    lm = scoring.wrap_language_model(model, tok, name="tiny-bert")
    res = categorical_bias.score_all(lm, categories=["gender"], languages=["en"])
    assert res["cb"].set.tolist() == ["gender_0", "gender_1", "gender_2", "gender_3"]
    assert res["cb"].n_priors.tolist() == [23, 23, 14, 22]
    weighted = (res["cb"].cb * res["cb"].n_priors).sum() / res["cb"].n_priors.sum()
    assert res["aggregate"].cb.iloc[0] == pytest.approx(weighted)
    assert (res["kl"].max_kl >= 0).all() and len(res["kl"]) == 4 and res["top"].empty
    tables = behnamghader2022.paper_tables(res)
    assert set(tables) == {"table1", "table2", "table3"}
    assert tables["table2"].template.tolist()[-1] == "Aggregated"
    assert tables["table3"].template.tolist()[0] == "It's better for {prior} to be [MASK]."


def test_table2_beside_the_paper_agrees_to_the_printed_digit(mirror):
    rep = report.load_reported("behnamghader2022_cb")
    side = behnamghader2022.beside_reported(behnamghader2022.paper_tables({"cb": behnamghader2022.seed_set_values(rep)}), rep)
    assert list(side.columns) == ["category", "template", "English", "English (paper)", "Greek",
                                  "Greek (paper)", "Persian", "Persian (paper)"]
    assert side[[c for c in side.columns if "(paper)" in c]].notna().all().all()
    for lang in ("English", "Greek", "Persian"):  # set values and aggregates round to the printed ones
        assert (side[lang] - side[f"{lang} (paper)"]).abs().max() <= 0.0101


def test_reported_tables_are_keyed_by_the_loaders_set_names(mirror):
    sets = set(behnamghader2022.template_sets().set)
    for name in ("behnamghader2022_cb", "behnamghader2022_table3", "behnamghader2022_table4"):
        keyed = set(report.load_reported(name).set) - {"aggregated"}
        assert keyed <= sets and keyed, name
    table4 = report.load_reported("behnamghader2022_table4")
    assert set(zip(table4.set, table4.prior, strict=True)) == set(behnamghader2022.TABLE4["pairs"])
