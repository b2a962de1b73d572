"""Seed 002's own templates (BehnamGhader & Milios 2022), read from its registered file.

``data/prior_sentence_templates.json`` (registered as ``seed002-prior-sentence-templates``)
holds ``word_lists`` (11 lists, each a mapping language key → list of words; a word is a
string or a list of synonyms) and ``categories`` (gender, religion, ethnicity/race), each a
list of **template sets**: ``base_templates`` (texts per language with ``[MASK]`` where the
group goes and ``{prior}`` where the attribute goes), ``prior_variations`` and ``words``
(language → ``"<list>|<key>"``). Nothing is copied into the project: :func:`template_book`
turns one category in one language into a :class:`polybias.data.templating.TemplateBook`.

How the file maps onto the book
-------------------------------
* Each referenced word list becomes a list of the book, under the file's name; its
  entries carry one **form per language key** of the file (``greek``, ``greek_fem``,
  ``greek_acc``, ``english``, ``persian``) and the form a set refers to is the form its
  slot uses. Entry ids are the English words (first synonym), shared by the three
  languages, so that one id names the same group or attribute in every language; a
  word the English list repeats (``germans`` of ``race_people_specific``) gets ``_2``
  and is kept: the authors' lists are used whole.
* **Greek feminine forms**: where a set gives a ``greek_fem`` prior list (the gender
  sets of negative adjectives), the prior declines for the group: the Greek gender
  terms carry ``prior_form: greek`` (άντρες) or ``greek_fem`` (γυναίκες) and the prior
  slot's form is ``{group.prior_form}``. The religion set "… is a {prior} religion"
  uses ``greek_fem`` for every religion, as the file says (θρησκεία is feminine).
* Template set ``<category>_<i>`` holds the base templates of set *i* (file order);
  templates are named ``<lang>_<category>_<i>_<j>``. :func:`template_sets` describes
  each set as the file's structure gives it: the negated templates ("shouldn't be",
  "don't like"), the broad / specific region lists and the periphrastic variants
  ("people from X", the ``race_regions_*`` sets) against the demonyms
  (``race_people_*``).
* Texts are kept as the file writes them, typos included (the Greek "Oι [MASK] δεν
  πρέπει …" starts with a Latin O; "…οι [MASK];." ends with ";."), and so is the
  masculine quantifier of "Όλοι οι [MASK] …", which the file does not decline for
  γυναίκες (only the prior declines).

Every problem is a :class:`Seed002Error` naming the file and the entry: a template or
list reference without one of the three languages, a reference to a missing list,
parallel lists of different lengths, a template without exactly one ``[MASK]`` and one
``{prior}``. The sizes of the file (sets per category, list lengths) are checked
against :data:`EXPECTED_SETS` and :data:`EXPECTED_LIST_SIZES` on every load.
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

import pandas as pd

from polybias.data import sources
from polybias.data.templating import TemplateBook, TemplateError, parse_templates

SOURCE = "seed002-prior-sentence-templates"
CITATION = ("BehnamGhader, P. & Milios, A. (2022). An Analysis of Social Biases Present in BERT "
            "Variants Across Multiple Languages. (seed 002)")
#: file language key → ISO code used by the project
LANGUAGES = {"english": "en", "greek": "el", "persian": "fa"}
#: file category type → project category name
CATEGORIES = {"gender": "gender", "religion": "religion", "ethnicity/race": "ethnicity"}
EXPECTED_SETS = {"gender": 4, "religion": 3, "ethnicity": 4}
EXPECTED_LIST_SIZES = {
    "careers": 23, "negative_adjs": 14, "negative_adjs_rel_subset": 6, "negative_adjs_gendered": 22,
    "gender_terms": 2, "race_regions_specific": 114, "race_regions_broad": 17,
    "race_people_specific": 117, "race_people_broad": 17, "religion_people": 6, "religions": 6,
}
MASK = "[MASK]"


class Seed002Error(TemplateError):
    """Seed 002's template file does not have the shape or the sizes the loader expects."""


def _language(language: str) -> str:
    """File language key of ``language`` (``en`` or ``english`` → ``english``)."""
    codes = {v: k for k, v in LANGUAGES.items()}
    if language in LANGUAGES:
        return language
    if language in codes:
        return codes[language]
    raise Seed002Error(f"seed 002 has languages {', '.join(f'{k} ({v})' for k, v in LANGUAGES.items())}, "
                       f"not {language!r}")


def _category(category: str) -> str:
    if category in CATEGORIES.values():
        return category
    if category in CATEGORIES:
        return CATEGORIES[category]
    raise Seed002Error(f"seed 002 has categories {', '.join(CATEGORIES.values())}, not {category!r}")


@cache
def _load(path: Path) -> dict:
    """The parsed and checked file at ``path`` (see the module docstring for the checks)."""
    f = path.name
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise Seed002Error(f"{f}: cannot read as JSON ({exc})") from exc
    if not isinstance(raw, dict) or not isinstance(raw.get("word_lists"), dict) \
            or not isinstance(raw.get("categories"), list):
        raise Seed002Error(f"{f}: expected an object with 'word_lists' and 'categories'")
    lists = raw["word_lists"]
    for name, by_key in lists.items():
        where = f"{f}: word list {name!r}"
        if not isinstance(by_key, dict) or "english" not in by_key:
            raise Seed002Error(f"{where} has no 'english' entry (ids are the English words)")
        sizes = {k: len(v) if isinstance(v, list) else -1 for k, v in by_key.items()}
        if len(set(sizes.values())) != 1:
            raise Seed002Error(f"{where}: its languages differ in length {sizes}")
        for key, words in by_key.items():
            for i, w in enumerate(words):
                ok = (isinstance(w, str) and w.strip()) or (
                    isinstance(w, list) and w and all(isinstance(s, str) and s.strip() for s in w))
                if not ok:
                    raise Seed002Error(f"{where} ({key}) word {i}: expected a word or a list of synonyms, "
                                       f"got {w!r}")
        expected = EXPECTED_LIST_SIZES.get(name)
        if expected is not None and sizes["english"] != expected:
            raise Seed002Error(f"{where}: {sizes['english']} words, expected {expected}")
    missing = sorted(set(EXPECTED_LIST_SIZES) - set(lists))
    if missing:
        raise Seed002Error(f"{f}: word list(s) {missing} are missing")
    seen = set()
    for c, cat in enumerate(raw["categories"]):
        if not isinstance(cat, dict) or cat.get("type") not in CATEGORIES \
                or not isinstance(cat.get("templates"), list):
            raise Seed002Error(f"{f}: category {c} needs a 'type' ({', '.join(CATEGORIES)}) and 'templates'")
        name = CATEGORIES[cat["type"]]
        seen.add(name)
        if len(cat["templates"]) != EXPECTED_SETS[name]:
            raise Seed002Error(f"{f}: category {cat['type']!r} has {len(cat['templates'])} template sets, "
                               f"expected {EXPECTED_SETS[name]}")
        for i, tset in enumerate(cat["templates"]):
            where = f"{f}: category {cat['type']!r} template set {i}"
            if not isinstance(tset, dict) or not isinstance(tset.get("base_templates"), list) \
                    or not tset["base_templates"]:
                raise Seed002Error(f"{where} has no base_templates")
            for lang in LANGUAGES:
                for field in ("prior_variations", "words"):
                    ref = (tset.get(field) or {}).get(lang)
                    if not isinstance(ref, str):
                        raise Seed002Error(f"{where}: {field} has no language {lang!r}")
                    lname, _, key = ref.partition("|")
                    if lname not in lists or key not in lists[lname]:
                        raise Seed002Error(f"{where}: {field} ({lang}) refers to missing word list {ref!r}")
                for j, bt in enumerate(tset["base_templates"]):
                    text = bt.get(lang) if isinstance(bt, dict) else None
                    if not isinstance(text, str) or not text.strip():
                        raise Seed002Error(f"{where}, base template {j}: no text for language {lang!r}")
                    if text.count(MASK) != 1 or text.count("{prior}") != 1:
                        raise Seed002Error(f"{where}, base template {j} ({lang}): needs one {MASK} and one "
                                           f"{{prior}}, got {text!r}")
    if seen != set(EXPECTED_SETS):
        raise Seed002Error(f"{f}: categories {sorted(seen)}, expected {sorted(EXPECTED_SETS)}")
    return raw


def load(path: str | Path | None = None) -> dict:
    """The registered template file (or ``path``), parsed and checked."""
    return _load(Path(path) if path is not None else sources.fetch(SOURCE))


def _ids(words: list) -> list[str]:
    out, count = [], {}
    for w in words:
        first = w if isinstance(w, str) else w[0]
        count[first] = count.get(first, 0) + 1
        out.append(first if count[first] == 1 else f"{first}_{count[first]}")
    return out


def _sets(raw: dict, category: str) -> list[dict]:
    for cat in raw["categories"]:
        if CATEGORIES[cat["type"]] == category:
            return cat["templates"]
    raise Seed002Error(f"no category {category!r}")  # unreachable after _load's checks


def _text(text: str) -> str:
    return text.replace("{prior}", "\x01").replace(MASK, "\x00").replace("{", "{{").replace("}", "}}") \
        .replace("\x00", "{group}").replace("\x01", "{prior}")


def template_book(category: str, language: str, path: str | Path | None = None) -> TemplateBook:
    """All template sets of one seed-002 category in one language, as a template book.

    ``category``: gender, religion or ethnicity (the file's ``ethnicity/race``);
    ``language``: en / el / fa (or the file's english / greek / persian). Slots: ``group``
    (role target, the group at the mask) and ``prior`` (role attribute).
    """
    raw = load(path)
    cat, lang = _category(category), _language(language)
    file = Path(path).name if path is not None else "prior_sentence_templates.json"
    lists: dict[str, dict] = {}
    templates = []

    def use(ref: str) -> tuple[str, str]:
        lname, _, key = ref.partition("|")
        if lname not in lists:
            by_key = raw["word_lists"][lname]
            keys = [k for k in by_key if k == lang or k.startswith(f"{lang}_")]
            entries = []
            for n, eid in enumerate(_ids(by_key["english"])):
                entry = {"id": eid, "forms": {k: by_key[k][n] for k in keys}}
                if lname == "gender_terms":
                    gender = "masc" if n == 0 else "fem"
                    entry["features"] = {"gender": gender, "group": eid,
                                         "prior_form": f"{lang}_fem" if gender == "fem" else lang}
                entries.append(entry)
            lists[lname] = {"source": f"seed 002 {file} word_lists.{lname} ({', '.join(keys)})",
                            "entries": entries}
        return lname, key

    for i, tset in enumerate(_sets(raw, cat)):
        glist, gform = use(tset["words"][lang])
        plist, pform = use(tset["prior_variations"][lang])
        fem = tset["prior_variations"].get(f"{lang}_fem")
        if fem is not None:
            flist, fform = use(fem)
            if flist != plist or glist != "gender_terms":
                raise Seed002Error(f"{file}: category {cat!r} set {i}: a feminine prior list "
                                   f"({fem!r}) is expected only with the gender terms and the same list")
            pform = "{group.prior_form}"
        for j, bt in enumerate(tset["base_templates"]):
            templates.append({"name": f"{LANGUAGES[lang]}_{cat}_{i}_{j}", "set": f"{cat}_{i}",
                              "text": _text(bt[lang]),
                              "slots": {"group": {"list": glist, "form": gform, "role": "target"},
                                        "prior": {"list": plist, "form": pform, "role": "attribute"}}})
    return parse_templates({"language": LANGUAGES[lang], "citation": CITATION, "lists": lists,
                            "templates": templates}, file=f"seed002_{cat}_{LANGUAGES[lang]}")


BOOK_PREFIX = "seed002_"


def book_from_name(name: str) -> TemplateBook:
    """``seed002_<category>_<language>`` (e.g. ``seed002_gender_el``) → :func:`template_book`."""
    rest = name[len(BOOK_PREFIX):] if name.startswith(BOOK_PREFIX) else ""
    cat, _, lang = rest.rpartition("_")
    if not cat or not lang:
        raise Seed002Error(f"seed-002 templates are named seed002_<category>_<language> "
                           f"(categories {', '.join(CATEGORIES.values())}; languages "
                           f"{', '.join(LANGUAGES.values())}), got {name!r}")
    return template_book(cat, lang)


def template_sets(path: str | Path | None = None) -> pd.DataFrame:
    """One row per (category, template set, language): what the set is, read off the file.

    Columns: category, template_set, language, set (book set name), groups / priors (the
    file's ``list|key`` references), feminine_priors (the ``greek_fem`` reference or ""),
    n_templates, n_groups, n_priors, negated (an English template of the set negates:
    "n't"), periphrastic (groups named by region, "people from X": ``race_regions_*``),
    granularity (broad / specific for the ethnicity lists, else "").
    """
    raw = load(path)
    rows = []
    for cat in CATEGORIES.values():
        for i, tset in enumerate(_sets(raw, cat)):
            english = " ".join(bt["english"] for bt in tset["base_templates"])
            for lang in LANGUAGES:
                gname, _, gkey = tset["words"][lang].partition("|")
                pname, _, pkey = tset["prior_variations"][lang].partition("|")
                rows.append({
                    "category": cat, "template_set": i, "language": lang, "set": f"{cat}_{i}",
                    "groups": tset["words"][lang], "priors": tset["prior_variations"][lang],
                    "feminine_priors": tset["prior_variations"].get(f"{lang}_fem", ""),
                    "n_templates": len(tset["base_templates"]),
                    "n_groups": len(raw["word_lists"][gname][gkey]),
                    "n_priors": len(raw["word_lists"][pname][pkey]),
                    "negated": "n't" in english,
                    "periphrastic": gname.startswith("race_regions_"),
                    "granularity": gname.rsplit("_", 1)[1] if gname.startswith("race_") else ""})
    return pd.DataFrame(rows)


def prior_counts(path: str | Path | None = None) -> pd.DataFrame:
    """Priors, templates and groups of every set, counted in the template books.

    Same columns as :func:`polybias.studies.categorical_bias.seed002_prior_counts` (category,
    template_set, language, n_priors, n_templates, n_groups): the weights of seed 002's
    aggregated CB, read through :func:`template_book`.
    """
    rows = []
    for cat in CATEGORIES.values():
        for lang in LANGUAGES:
            book = template_book(cat, lang, path)
            by_set: dict[str, list] = {}
            for t in book.templates.values():
                by_set.setdefault(t.set, []).append(t)
            for sname, ts in by_set.items():
                t = ts[0]
                rows.append({"category": cat, "template_set": int(sname.rsplit("_", 1)[1]), "language": lang,
                             "n_priors": len(book.lists[t.slots["prior"].list].entries),
                             "n_templates": len(ts),
                             "n_groups": len(book.lists[t.slots["group"].list].entries)})
    return pd.DataFrame(rows)


# ---------------------------------------------------------------- every category × language, as the paper's tables

LANGUAGE_NAMES = {"en": "English", "el": "Greek", "fa": "Persian"}
#: seed 002 Table 4: the (set, prior) pairs whose top fine-grained groups it lists, in the
#: set's fourth template "Why are [MASK] / people from [MASK] always so {prior}?"
TABLE4 = {"category": "ethnicity", "template_index": 3,
          "pairs": (("ethnicity_2", "sexist"), ("ethnicity_2", "prejudiced"),
                    ("ethnicity_3", "sexist"), ("ethnicity_3", "prejudiced"))}


def set_labels(path: str | Path | None = None) -> pd.DataFrame:
    """The label of each template set as the paper's Tables 2–3 print it: the set's first
    English template, with "(more gendered priors)" for the gender set over the gendered
    adjectives and "(coarse-grained terms)" / "(fine-grained terms)" for the broad and
    specific ethnicity lists. Columns category, template_set, set, template."""
    sets = template_sets(path)
    raw = load(path)
    rows = []
    for (cat, i), g in sets[sets.language == "english"].groupby(["category", "template_set"], sort=False):
        text = _sets(raw, cat)[i]["base_templates"][0]["english"]
        r = g.iloc[0]
        if r.granularity:
            text += " (coarse-grained terms)" if r.granularity == "broad" else " (fine-grained terms)"
        elif r.priors.startswith("negative_adjs_gendered"):
            text += " (more gendered priors)"
        rows.append({"category": cat, "template_set": int(i), "set": r.set, "template": text})
    return pd.DataFrame(rows)


def seed_set_values(reported: pd.DataFrame, path: str | Path | None = None) -> pd.DataFrame:
    """The per-set CB values the authors' notebook printed (rows of
    ``behnamghader2022_cb.csv`` from ``main.ipynb``), with each set's number of priors
    counted in the template books: the ``cb`` input of :func:`paper_tables`."""
    nb = reported[reported.table.str.startswith("main.ipynb") & (reported.template_set != "aggregated")].copy()
    if nb.empty:
        raise Seed002Error("no per-set values printed by main.ipynb in the reported rows")
    nb["template_set"] = nb.template_set.astype(int)
    counts = prior_counts(path)
    out = nb.merge(counts, on=["category", "template_set", "language"], how="left").rename(columns={"value": "cb"})
    if out.n_priors.isna().any():
        raise Seed002Error(f"reported sets missing from the template file: "
                           f"{out[out.n_priors.isna()][['category', 'template_set']].values.tolist()}")
    out["language"] = out.language.map(LANGUAGES)
    out["set"] = out.category + "_" + out.template_set.astype(str)
    return out[["category", "language", "set", "template_set", "cb", "n_priors"]]


def paper_tables(results: dict[str, pd.DataFrame], path: str | Path | None = None) -> dict[str, pd.DataFrame]:
    """Seed 002's Tables 1(a), 2, 3 and 4 in the paper's shape, from :func:`score_all`.

    * ``table1``: one row per category, one column per language (English, Greek,
      Persian): the aggregated CB;
    * ``table2``: per category, one row per template set (labelled as the paper does,
      :func:`set_labels`) and an "Aggregated" row, languages as columns;
    * ``table3``: the same rows without the aggregate: the largest pairwise KL;
    * ``table4``: rank, then per language the group and its normalised probability.

    A frame that ``results`` lacks or leaves empty gives no table. The aggregate is taken
    from ``results["aggregate"]`` when given, else recomputed as the n_priors-weighted
    mean of the set values (the same number: the mean over all (set, prior) rows).
    """
    out: dict[str, pd.DataFrame] = {}
    labels = set_labels(path)
    cols = [LANGUAGE_NAMES[x] for x in LANGUAGE_NAMES]
    cb = results.get("cb")
    if cb is not None and not cb.empty:
        agg = results.get("aggregate")
        if agg is None or agg.empty:
            agg = (cb.assign(w=cb.cb * cb.n_priors).groupby(["category", "language"], sort=False)
                   .apply(lambda g: g.w.sum() / g.n_priors.sum(), include_groups=False).rename("cb").reset_index())
        t1 = agg.pivot_table(index="category", columns="language", values="cb", sort=False)
        t1 = t1.rename(columns=LANGUAGE_NAMES)
        out["table1"] = t1[[c for c in cols if c in t1.columns]].reset_index().rename_axis(columns=None)
        t2 = cb.merge(labels, on=["category", "template_set", "set"], how="left").pivot_table(
            index=["category", "template_set", "template"], columns="language", values="cb", sort=False)
        t2 = t2.rename(columns=LANGUAGE_NAMES).reset_index()
        aggregated = agg.pivot_table(index="category", columns="language", values="cb", sort=False)
        aggregated = aggregated.rename(columns=LANGUAGE_NAMES).reset_index()
        aggregated["template_set"], aggregated["template"] = 99, "Aggregated"
        t2 = pd.concat([t2, aggregated], ignore_index=True)
        order = {c: i for i, c in enumerate(CATEGORIES.values())}
        t2 = t2.sort_values(["category", "template_set"], key=lambda s: s.map(order) if s.name == "category" else s,
                            kind="stable")
        out["table2"] = t2[["category", "template", *[c for c in cols if c in t2.columns]]].reset_index(drop=True)
        out["table2"].columns.name = None
    kl = results.get("kl")
    if kl is not None and not kl.empty:
        t3 = kl.merge(labels, on=["category", "template_set", "set"], how="left").pivot_table(
            index=["category", "template_set", "template"], columns="language", values="max_kl", sort=False)
        t3 = t3.rename(columns=LANGUAGE_NAMES).reset_index()
        out["table3"] = t3[["category", "template", *[c for c in cols if c in t3.columns]]]
        out["table3"].columns.name = None
    top = results.get("top")
    if top is not None and not top.empty:
        wide = None
        for lang, g in top.groupby("language", sort=False):
            part = g[["set", "prior", "rank", "group", "p_norm"]].rename(
                columns={"group": f"{LANGUAGE_NAMES[lang]} group", "p_norm": f"{LANGUAGE_NAMES[lang]} p"})
            wide = part if wide is None else wide.merge(part, on=["set", "prior", "rank"], how="outer")
        out["table4"] = wide.reset_index(drop=True)
    return out


def beside_reported(tables: dict[str, pd.DataFrame], reported_cb: pd.DataFrame) -> pd.DataFrame:
    """Table 2 of :func:`paper_tables` with the paper's Table 2 beside it: per language the
    reproduced value and the printed one (``<Language> (paper)``), matched on category and
    set label (rows of ``behnamghader2022_cb.csv``, ``table`` "Table 2")."""
    t2 = tables["table2"]
    printed = reported_cb[reported_cb.table.str.startswith("Table 2")].copy()
    printed["template"] = printed.template.where(printed.template_set.astype(str) != "aggregated", "Aggregated")
    wide = printed.pivot_table(index=["category", "template"], columns="language", values="value", sort=False)
    wide = wide.rename(columns={k: f"{v} (paper)" for k, v in zip(LANGUAGES, LANGUAGE_NAMES.values(), strict=True)})
    out = t2.merge(wide.reset_index(), on=["category", "template"], how="left")
    order = ["category", "template"] + [c for lang in LANGUAGE_NAMES.values()
                                        for c in (lang, f"{lang} (paper)") if c in out.columns]
    return out[order]
