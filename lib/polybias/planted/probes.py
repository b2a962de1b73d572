"""Probes over the planted vocabulary: the word-list test, template books and corpora
with which the measures are run on planted models (the known answer: male targets go
with career words at p > 0.5). Used by the studies, the validity study and the tests.
"""

from __future__ import annotations

from polybias.data import templating, text
from polybias.data.templating import TemplateBook
from polybias.data.wordlists import AssociationTest, WordSet
from polybias.planted import synthetic
from polybias.planted.synthetic import PLANTED_GROUPS, SyntheticError, planted_groups

_PLANTED_TEMPLATES = {
    "en": [("planted_en", "the {target} thinks about the {attribute} ."),
           ("planted_en", "yesterday the {target} spoke about the {attribute} ."),
           ("planted_en", "the {target} was happy with the {attribute} .")],
    # Bangla: sentence structures S1-S5 of seed 000 (Table 3) in the planted vocabulary:
    # S1 subject-object, no context; S2 minimal context; S3 object before subject; S4 and
    # S5 several sentences of neutral context before the probe
    "bn": [("S1", "{target} {attribute} নিয়ে ভাবে ।"),
           ("S2", "{target} প্রতিদিন {attribute} নিয়ে কথা বলে ।"),
           ("S3", "{attribute} নিয়ে {target} সবসময় চিন্তা করে ।"),
           ("S4", "আজ শহরে খুব বৃষ্টি হয়েছে । বন্ধু খবর নিয়ে কথা বলে । "
                  "{attribute} নিয়ে {target} সারাদিন কাজ করেছে ।"),
           ("S5", "গতকাল সকালে প্রতিবেশী বাজার নিয়ে অনেক কথা বলেছে । অতিথি নদী আর শহর নিয়ে "
                  "গান গেয়েছে । সবাই জানে যে {attribute} নিয়ে {target} একটি লম্বা চিঠি লিখেছে । "
                  "তারা খেলা নিয়ে খুশি ।")],
    # Hindi: three sentence shapes of the planted corpus (the target before a postposition,
    # so a male and a female target fit the same sentence)
    "hi": [("planted_hi", "{target} को {attribute} पसंद है ।"),
           ("planted_hi", "{target} ने {attribute} के बारे में सोचा ।"),
           ("planted_hi", "{target} के लिए {attribute} जरूरी है ।")],
}


def planted_templates(language: str = "en") -> TemplateBook:
    """Templates over the word groups of the planted corpora (:mod:`polybias.planted.synthetic`):
    targets carry ``features: {group: male|female}``, attributes ``{group: career|family}``.
    English and Hindi sentences use only the corpus vocabulary; the Bangla ones are the sentence
    structures S1–S5 of seed 000 (template sets ``S1`` … ``S5``), whose longer contexts
    also use a few words the corpus lacks. Known answer: at p > 0.5 male targets gain
    probability next to career words.
    """
    if language not in _PLANTED_TEMPLATES:
        raise SyntheticError(f"no planted templates for language {language!r}; "
                           f"available: {', '.join(_PLANTED_TEMPLATES)}")
    g = PLANTED_GROUPS[language]
    lists = {
        "targets": {"source": "polybias.planted.synthetic.PLANTED_GROUPS", "entries": [
            {"id": w, "features": {"group": k}, "word": w} for k in ("male", "female")
            for w in g["targets"][k]]},
        "attributes": {"source": "polybias.planted.synthetic.PLANTED_GROUPS", "entries": [
            {"id": w, "features": {"group": k}, "word": w} for k in ("career", "family")
            for w in g["attributes"][k]]},
    }
    templates = [{"name": f"planted_{language}_{i}", "set": tset, "text": text,
                  "slots": {"target": {"list": "targets", "role": "target"},
                            "attribute": {"list": "attributes", "role": "attribute"}}}
                 for i, (tset, text) in enumerate(_PLANTED_TEMPLATES[language])]
    return templating.parse_templates({"language": language, "lists": lists, "templates": templates},
                                      file=f"planted_{language}")


def planted_interaction_templates(language: str = "en") -> TemplateBook:
    """A two-identity template over the planted corpus vocabulary: "{pro} said that the
    {target} cares about the {attribute} ." (a sentence shape of the English planted
    corpus), with pronouns as a second characteristic that carries no planted association.
    Targets and attributes carry ``features: {group: ...}`` as in
    :func:`planted_templates`."""
    if language != "en":
        raise SyntheticError(f"planted interaction templates exist for 'en' only, not {language!r}")
    g = PLANTED_GROUPS[language]
    raw = {"language": language, "lists": {
        "pronouns": {"source": "polybias.planted.synthetic (pronouns of the English corpus)",
                     "entries": ["i", "we", "you", "they"]},
        "targets": {"source": "polybias.planted.synthetic.PLANTED_GROUPS", "entries": [
            {"id": w, "features": {"group": k}, "word": w} for k in ("male", "female") for w in g["targets"][k]]},
        "attributes": {"source": "polybias.planted.synthetic.PLANTED_GROUPS", "entries": [
            {"id": w, "features": {"group": k}, "word": w} for k in ("career", "family")
            for w in g["attributes"][k]]}},
        "templates": [{"name": "said", "set": "said",
                       "text": "{pro} said that the {target} cares about the {attribute} .",
                       "slots": {"pro": "pronouns", "target": {"list": "targets", "role": "target"},
                                 "attribute": {"list": "attributes", "role": "attribute"}}}]}
    return templating.parse_templates(raw, file=f"planted_interactions_{language}")


def planted_test(language: str = "en", n_words: int | None = None, name: str = "C5"):
    """The C5-style test of the planted corpora: male vs female terms, career vs family
    (:data:`polybias.planted.synthetic.PLANTED_GROUPS`), the first ``n_words`` words of each set."""
    g = planted_groups(language)
    groups = {"X": g["targets"]["male"], "Y": g["targets"]["female"],
              "A": g["attributes"]["career"], "B": g["attributes"]["family"]}
    src = "polybias.planted.synthetic.PLANTED_GROUPS (generated corpus with a planted association)"
    return AssociationTest(name, language=language, description="planted: male/female terms, career/family",
                           **{k: WordSet(k, tuple(v[:n_words]), "language-specific", src)
                              for k, v in groups.items()})


def planted_extractions(
    p_values, n_sentences: int = 300, n_words: int | None = 4, language: str = "en",
    seed: int = 0, min_words: int = 8, max_words: int = 100,
) -> dict[str, tuple[list, object]]:
    """One generated varied-length corpus per planted strength p, with its test and occurrences.

    Returns ``{"p=0.9": ([test], extraction), ...}``; the test is named ``"C5 p=0.9"``.
    Corpora come from :func:`polybias.planted.synthetic.varied_length_corpus` (seeded).
    """
    out = {}
    for p in p_values:
        test = planted_test(language, n_words, name=f"C5 p={p}")
        sets = {k: list(s.words) for k, s in test.sets().items()}
        corpus = synthetic.varied_length_corpus(n_sentences, {"C5": {**sets, "p": p}}, seed=seed,
                                                language=language, min_words=min_words,
                                                max_words=max_words)
        out[f"p={p}"] = ([test], text.find_occurrences(corpus, test.sets().values(), language))
    return out
