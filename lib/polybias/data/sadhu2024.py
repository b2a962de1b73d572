"""The Bangla study's own data (Sadhu et al. 2024, seed 000), read from its registered files.

Everything here is read from the authors' files as registered in ``data/sources.yaml``
(:func:`polybias.data.sources.fetch`); nothing is copied into the project.

WEAT / SEAT / CEAT categories C1–C9
-----------------------------------
``CeatDataCollection/CEAT_Categories/ceat<i>.jsonl`` holds one JSON object with four
rows ``targ1``, ``targ2``, ``attr1``, ``attr2``, each ``{"category": ..., "examples": [...]}``.
They become the targets X, Y and attributes A, B of test ``C<i>``
(:class:`polybias.data.wordlists.AssociationTest`). Every word keeps its *own* suffix list
from ``weatWordsWithSuffix.jsonl`` (272 words) or ``traitWordsWithSuffix.jsonl`` (177
words, all lists empty upstream), as App. C of the paper requires; ``suffixCategories.jsonl``
gives the 22 suffix groups the lists were drawn from (:func:`suffix_groups`).

Lists are kept as the files give them, repeats included: the pleasant and unpleasant
lists of C1–C3 hold 24 entries of which 23 differ (স্বর্গ and হত্যা appear twice), and a
repeated word weighs twice in the authors' means, as it does here. Words and suffixes
are put in Unicode NFKC, as the authors' normaliser did for word lists (csebuetnlp
``normalizer``, ``apply_unicode_norm_last=True``); this also makes the two spellings of
য় in the files (precomposed U+09DF and য + nukta) the same word.

Kurita sentence structures S1–S5
--------------------------------
See :func:`assemble_structure` for how a row of ``positive_traits_bn.csv`` /
``negative_traits_bn.csv`` becomes five sentences, and :func:`kurita_templates` for the
template book the log-probability notebook runs on.
"""

from __future__ import annotations

import csv
import json
import unicodedata
from functools import cache
from pathlib import Path

from polybias.data import sources
from polybias.data.templating import TemplateBook, parse_templates
from polybias.data.wordlists import AssociationTest, WordListError, WordSet

CITATION = ("Sadhu, J., Khan, A. A., Bhattacharjee, A., & Shahriyar, R. (2024). An Empirical "
            "Study on the Characteristics of Bias upon Context Length Variation for Bangla. "
            "Findings of the Association for Computational Linguistics: ACL 2024.")
ROLES = {"targ1": "X", "targ2": "Y", "attr1": "A", "attr2": "B"}
CATEGORIES = tuple(f"C{i}" for i in range(1, 10))

# Sizes of the lists in the registered files (targ1, targ2, attr1, attr2), checked on
# every load so that no word is lost between the file and the test.
EXPECTED_SIZES = {
    "C1": (14, 14, 24, 24), "C2": (12, 12, 24, 24), "C3": (27, 27, 24, 24),
    "C4": (27, 27, 8, 8), "C5": (8, 8, 8, 8), "C6": (10, 10, 8, 8),
    "C7": (10, 10, 27, 27), "C8": (12, 12, 8, 8), "C9": (12, 12, 27, 27),
}
N_WEAT_SUFFIX_WORDS = 272
N_TRAIT_SUFFIX_WORDS = 177
N_SUFFIX_GROUPS = 22
N_TRAITS = {"positive": 109, "negative": 69}
STRUCTURES = ("S1", "S2", "S3", "S4", "S5")
# Structures left empty in the pinned files (all three columns blank): the trait row is
# kept, its other structures are used, and this structure has no sentence for it. Any
# other empty structure is an error.
KNOWN_EMPTY = {("positive", "প্রশংসনীয়", "S5"), ("positive", "প্রশান্ত", "S5")}


class Seed000Error(WordListError):
    """A seed-000 file does not have the shape or the size the loaders expect."""


def nfkc(text: str) -> str:
    return unicodedata.normalize("NFKC", text)


def _json_rows(name: str) -> tuple[Path, list[tuple[str, object]]]:
    """(path, [(row label, value)]) of a registered JSON / JSON-lines file.

    The files are one pretty-printed JSON object (the usual case upstream) or one object
    per line; the rows are the object's top-level keys in file order.
    """
    path = sources.fetch(name)
    text = path.read_text(encoding="utf-8")
    try:
        objs = [json.loads(text)]
    except json.JSONDecodeError:
        objs = []
        for i, line in enumerate(text.splitlines(), 1):
            if line.strip():
                try:
                    objs.append(json.loads(line))
                except json.JSONDecodeError as exc:
                    raise Seed000Error(f"{path.name} ({name}): line {i} is not JSON: {exc}") from None
    rows = []
    for obj in objs:
        if not isinstance(obj, dict):
            raise Seed000Error(f"{path.name} ({name}): expected JSON objects, got {type(obj).__name__}")
        rows.extend(obj.items())
    return path, rows


@cache
def word_suffixes() -> dict[str, tuple[str, ...]]:
    """Every WEAT and trait word (NFKC) → its own suffix list, from the two suffix files."""
    out: dict[str, tuple[str, ...]] = {}
    for name, expected in (("seed000-weat-word-suffixes", N_WEAT_SUFFIX_WORDS),
                           ("seed000-trait-word-suffixes", N_TRAIT_SUFFIX_WORDS)):
        path, rows = _json_rows(name)
        if len(rows) != expected:
            raise Seed000Error(f"{path.name} ({name}): {len(rows)} words, expected {expected}")
        for word, sfx in rows:
            if not isinstance(sfx, list) or not all(isinstance(s, str) and s for s in sfx):
                raise Seed000Error(f"{path.name} ({name}): word {word!r} needs a list of suffixes")
            key = nfkc(word)
            sfx_n = tuple(dict.fromkeys(nfkc(s) for s in sfx))
            if key in out and sfx_n and out[key] and out[key] != sfx_n:
                raise Seed000Error(f"{path.name} ({name}): word {word!r} has two different suffix lists")
            out[key] = sfx_n or out.get(key, ())
    return out


@cache
def suffix_groups() -> dict[str, tuple[str, ...]]:
    """The 22 suffix groups of ``suffixCategories.jsonl`` (group "0" is empty upstream)."""
    path, rows = _json_rows("seed000-suffix-groups")
    if len(rows) != N_SUFFIX_GROUPS:
        raise Seed000Error(f"{path.name}: {len(rows)} suffix groups, expected {N_SUFFIX_GROUPS}")
    out = {}
    for g, sfx in rows:
        if not isinstance(sfx, list):
            raise Seed000Error(f"{path.name}: suffix group {g!r} must be a list")
        out[str(g)] = tuple(nfkc(s) for s in sfx)
    return out


def _category(i: int) -> dict[str, tuple[str, list[str]]]:
    name = f"seed000-ceat{i}"
    path, rows = _json_rows(name)
    out = {}
    for n, (key, row) in enumerate(rows, 1):
        where = f"{path.name} ({name}), row {n} ({key!r})"
        if key not in ROLES:
            raise Seed000Error(f"{where}: unknown row; expected {', '.join(ROLES)}")
        if not isinstance(row, dict) or not str(row.get("category") or "").strip():
            raise Seed000Error(f"{where}: the row has no category")
        words = row.get("examples")
        if not isinstance(words, list) or not words or \
                not all(isinstance(w, str) and w.strip() for w in words):
            raise Seed000Error(f"{where}: 'examples' must be a non-empty list of words")
        out[key] = (str(row["category"]).strip(), [nfkc(w.strip()) for w in words])
    missing = [k for k in ROLES if k not in out]
    if missing:
        raise Seed000Error(f"{path.name} ({name}): rows {', '.join(missing)} are missing")
    return out


@cache
def ceat_tests() -> dict[str, AssociationTest]:
    """Tests C1–C9 of seed 000 (Table 1), with each word's own suffixes.

    Set names are the files' categories (``MaleNames``, ``Pleasant`` …); a category whose
    words differ between files gets the first test using them appended (``Arts`` of
    C6/C7 has 10 words, ``Arts_C8`` of C8/C9 12).
    """
    suffixes = word_suffixes()
    seen: dict[str, tuple[str, ...]] = {}
    tests = {}
    for i in range(1, 10):
        test = f"C{i}"
        rows = _category(i)
        sets = {}
        for key, role in ROLES.items():
            category, words = rows[key]
            variants = [n for n, ws in seen.items()
                        if (n == category or n.startswith(f"{category}_")) and ws == tuple(words)]
            name = variants[0] if variants else category if category not in seen else f"{category}_{test}"
            seen.setdefault(name, tuple(words))
            absent = [w for w in words if w not in suffixes]
            if absent:
                raise Seed000Error(f"ceat{i}.jsonl row {key!r}: words without a suffix list in "
                                   f"the suffix files: {', '.join(absent)}")
            sets[role] = WordSet(
                name=name, words=tuple(words), provenance="language-specific",
                source=f"Sadhu et al. (2024), CeatDataCollection/CEAT_Categories/ceat{i}.jsonl {key}",
                suffixes={w: suffixes[w] for w in words if suffixes[w]})
        sizes = tuple(len(sets[r].words) for r in "XYAB")
        if sizes != EXPECTED_SIZES[test]:
            raise Seed000Error(f"ceat{i}.jsonl: list sizes {sizes}, expected {EXPECTED_SIZES[test]}")
        tests[test] = AssociationTest(
            name=test, language="bn", citation=CITATION, file=f"seed000:ceat{i}.jsonl",
            description=f"{sets['X'].name} vs {sets['Y'].name}, {sets['A'].name} vs {sets['B'].name} "
                        f"(seed 000 Table 1, {test})", **sets)
    return tests


def data_sha256() -> dict[str, str]:
    """Registered name → sha256 of the files :func:`ceat_tests` reads (for run records)."""
    reg = sources.load_registry()
    names = [f"seed000-ceat{i}" for i in range(1, 10)] + ["seed000-weat-word-suffixes",
                                                          "seed000-trait-word-suffixes"]
    return {f"sources/{n}": reg[n].sha256 for n in names}


# ---------------------------------------------------------------- Kurita S1-S5

TRAIT_FILES = {"positive": "seed000-positive-traits", "negative": "seed000-negative-traits"}
_GLUE_PUNCTUATION = "।॥?!,.;:"


def _trait_with_suffix(trait: str, suffix: str) -> str:
    s = suffix.strip()
    if not s:
        return trait
    if s.startswith("-"):          # "-তা": a suffix written onto the trait (অকৃত্রিম-তা → অকৃত্রিমতা)
        return trait + s[1:]
    if s[0] in _GLUE_PUNCTUATION:  # "।", "। তিনি একজন": punctuation closes the trait's sentence
        return trait + s
    return f"{trait} {s}"


def assemble_structure(row: dict[str, str], k: int, trait: str = "{trait}",
                       mask: str = "{target}") -> str:
    """Sentence structure S<k> of one trait row, with ``mask`` where the target goes.

    The assembly rule, reconstructed from the columns (in file order) and Table 3 of
    seed 000 (S1–S2: subject = target first; S3–S5: object = attribute first):

    * S1, S2 (columns ``Mask_Suffix, Placeholder, Trait_Suffix``):
      ``MASK+Mask_Suffix  Placeholder  TRAIT·Trait_Suffix``
      e.g. S1 "[MASK]রা অকৃত্রিম।", S2 "[MASK]দের অনুভূতিগুলো অকৃত্রিম।";
    * S3 (same columns): ``TRAIT·Trait_Suffix  MASK+Mask_Suffix  Placeholder``
      e.g. "অকৃত্রিমতা [MASK]দের মধ্যে বেশি দেখা যায়।";
    * S4, S5 (columns ``Placeholder, Trait_Suffix, Mask_Suffix``):
      ``Placeholder  TRAIT·Trait_Suffix  MASK+Mask_Suffix``
      e.g. S4 "চারিত্রিক দিকে তিনি অদ্বিতীয়। তিনি একজন [MASK]।".

    ``MASK+Mask_Suffix``: the mask suffix is written directly after the target (the
    plural রা, the genitive দের …; a suffix starting with a space, " ।", keeps it).
    ``TRAIT·Trait_Suffix``: a trait suffix starting with "-" is written onto the trait
    without the hyphen (-তা, the abstract noun), one starting with punctuation directly
    after it, any other one after a space. Empty placeholders are left out, runs of
    spaces become one and the sentence is stripped. A structure whose three columns are
    all empty cannot be built and is an error (:func:`trait_rows` names file and row).
    """
    if k not in range(1, 6):
        raise Seed000Error(f"no sentence structure S{k}; structures are S1-S5")
    m = mask + row[f"S{k}_Mask_Suffix"].rstrip()
    p = row[f"S{k}_Placeholder"].strip()
    t = _trait_with_suffix(trait, row[f"S{k}_Trait_Suffix"])
    parts = [m, p, t] if k <= 2 else [t, m, p] if k == 3 else [p, t, m]
    return " ".join(" ".join(x for x in parts if x).split())


def trait_rows(polarity: str) -> list[dict[str, str]]:
    """Every row of ``<polarity>_traits_bn.csv`` (NFKC), in file order, checked.

    A row without a trait, or with a structure whose three columns are all empty, is an
    error naming the file and the row (line number of the CSV, header = line 1); the
    only exceptions are the two S5 cells left blank upstream (:data:`KNOWN_EMPTY`).
    """
    if polarity not in TRAIT_FILES:
        raise Seed000Error(f"polarity must be one of {', '.join(TRAIT_FILES)}, got {polarity!r}")
    name = TRAIT_FILES[polarity]
    path = sources.fetch(name)
    with open(path, encoding="utf-8-sig", newline="") as fh:
        reader = csv.DictReader(fh)
        columns = ["Trait"] + [f"S{k}_{c}" for k in range(1, 6)
                               for c in ("Mask_Suffix", "Placeholder", "Trait_Suffix")]
        lacking = [c for c in columns if c not in (reader.fieldnames or [])]
        if lacking:
            raise Seed000Error(f"{path.name} ({name}): columns missing: {', '.join(lacking)}")
        rows = []
        for line, raw in enumerate(reader, 2):
            row = {c: nfkc(raw.get(c) or "") for c in columns}
            if not row["Trait"].strip():
                raise Seed000Error(f"{path.name} ({name}), line {line}: the row has no trait")
            row["Trait"] = row["Trait"].strip()
            for k in range(1, 6):
                if not any(row[f"S{k}_{c}"].strip() for c in ("Mask_Suffix", "Placeholder", "Trait_Suffix")):
                    if (polarity, row["Trait"], f"S{k}") in KNOWN_EMPTY:
                        continue
                    raise Seed000Error(f"{path.name} ({name}), line {line} ({row['Trait'].strip()}): "
                                       f"structure S{k} is empty")
            row["line"] = str(line)
            rows.append(row)
    if len(rows) != N_TRAITS[polarity]:
        raise Seed000Error(f"{path.name} ({name}): {len(rows)} traits, expected {N_TRAITS[polarity]}")
    return rows


def gender_terms() -> dict[str, list[str]]:
    """Male and female terms of the log-probability study.

    They are the MaleTerms / FemaleTerms of category C5 (8 + 8 nouns), the same lists as
    the first version of ``male_words`` / ``female_words`` in the authors' log-probability
    notebook (whose later version adds ছাত্র / ছাত্রী).
    """
    c5 = ceat_tests()["C5"]
    return {"male": list(c5.X.words), "female": list(c5.Y.words)}


@cache
def kurita_templates() -> TemplateBook:
    """Template book of the seed's S1–S5 trait sentences, every trait row kept.

    Lists: ``targets`` (the C5 male and female terms, ``features: {group: male|female}``)
    and ``traits`` (all 178 traits, ``group: positive|negative``; ids ``pos001`` …
    ``neg069`` in file order, since a trait may appear in both files). Each trait row
    gives five templates (sets ``S1`` … ``S5``) whose trait slot draws from a one-entry
    list ``trait_<id>``: the sentence around a trait is the trait's own. The two S5 cells
    left blank upstream (:data:`KNOWN_EMPTY`) give no S5 template: 178 traits in S1–S4,
    176 in S5, 888 templates.
    """
    terms = gender_terms()
    lists: dict[str, dict] = {"targets": {
        "source": "seed 000 CeatDataCollection/CEAT_Categories/ceat5.jsonl (MaleTerms, FemaleTerms)",
        "entries": [{"id": w, "features": {"group": g}, "word": w} for g in ("male", "female")
                    for w in terms[g]]}}
    trait_entries, templates = [], []
    for polarity, prefix in (("positive", "pos"), ("negative", "neg")):
        for n, row in enumerate(trait_rows(polarity), 1):
            tid = f"{prefix}{n:03d}"
            entry = {"id": tid, "features": {"group": polarity}, "word": row["Trait"]}
            trait_entries.append(entry)
            lists[f"trait_{tid}"] = {"source": f"seed 000 {TRAIT_FILES[polarity]} line {row['line']}",
                                     "entries": [entry]}
            for k in range(1, 6):
                if (polarity, row["Trait"], f"S{k}") in KNOWN_EMPTY:
                    continue
                text = assemble_structure(row, k).replace("{target}", "\x00").replace("{trait}", "\x01")
                text = text.replace("{", "{{").replace("}", "}}")
                text = text.replace("\x00", "{target}").replace("\x01", "{trait}")
                templates.append({
                    "name": f"S{k}_{tid}", "set": f"S{k}", "text": text,
                    "slots": {"target": {"list": "targets", "role": "target"},
                              "trait": {"list": f"trait_{tid}", "role": "attribute"}}})
    lists["traits"] = {"source": "seed 000 positive_traits_bn.csv, negative_traits_bn.csv",
                       "entries": trait_entries}
    return parse_templates({"language": "bn", "citation": CITATION, "lists": lists,
                            "templates": templates}, file="seed000_bn")
