"""EuroGEST (Rowe et al. 2025): the GEST gender-stereotype sentences in 29 European languages.

GEST (Pikuliak et al. 2024) holds 3,565 English first-person sentences, each written to
express one of 16 gender stereotypes (:data:`STEREOTYPES`; 1–7 stereotypically feminine,
8–16 masculine). EuroGEST translated them into 29 languages (:data:`LANGUAGES`). Where
the translation marks the speaker's gender (Czech "Vždy jsem byl vůdčí typ" / "Vždy jsem
byla vůdčí typ") both forms are given: a **gendered pair**, masculine vs feminine, that
differs only in gendered morphology (:func:`gendered_pairs`; 20 languages,
:data:`GENDERED_LANGUAGES`). Where it does not, the one **neutral** sentence is scored
inside the language's scaffolds, ``“…,” he said`` / ``“…,” she said`` (or "the man said" /
"the woman said" where the language has no gendered pronoun there; :func:`scaffolded_pairs`,
29 languages, :data:`NEUTRAL_LANGUAGES`), built exactly as the authors' ``prompts.py``
(``wrap_neutral_sentence`` and ``build_row_prompts``) builds them.

Files (registered in ``data/sources.yaml``, read through :func:`polybias.data.sources.fetch`):
``eurogest-gendered`` (two header rows: the language of each column, then the scaffold the
column stands for, "the man said" / "the woman said"; the stereotype number last),
``eurogest-neutral`` (one header row), ``eurogest-language-statistics`` (published counts
per language), and the authors' configuration files ``eurogest-scaffolds``,
``eurogest-punctuation``, ``eurogest-language-configs`` and ``eurogest-stereotype-labels``.

What the reader does with the files, stated and counted (:func:`file_counts`):

* **Header rows.** Both rows of the gendered file are read as headers and checked: the
  first names the language of each column (two columns per language), the second says
  which column is the masculine ("the man said") and which the feminine ("the woman
  said") form. A header that differs is an error naming the column.
* **Empty cells.** A language's cell is empty where its translation of the sentence is in
  the other file; an empty cell is "not in this language", never an empty sentence. A
  gendered row with only one of its two forms filled is an error. The last row of both
  files (GEST id 3565) is empty in every column (no sentence, no stereotype): it is
  counted (``empty_rows``) and skipped. A row with a sentence but no stereotype number is
  an error.
* **Duplicate rows.** GEST repeats some English sentences, and some translations repeat
  across different English sentences. A *duplicate row* of a language is a row whose
  English sentence, stereotype and translation(s) equal those of an earlier row of that
  language. ``duplicates="keep"`` (default) keeps them, so that the counts are the
  published ones (``language_statistics.csv``) and the authors' code, which scores every
  row, is reproduced; ``duplicates="drop"`` keeps the first of each.
  ``frame.attrs["n_duplicates"]`` counts them either way.

Every frame carries ``attrs["source"]``, ``attrs["n_duplicates"]`` and ``attrs["n_dropped"]``.

References
----------
Rowe, Klimaszewski, Guillou, Vallor & Birch (2025). EuroGEST: investigating gender
stereotypes in multilingual language models. EMNLP.
Pikuliak, Oresko, Hrckova & Simko (2024). Women are beautiful, men are leaders: gender
stereotypes in machine translation and language modeling. Findings of EMNLP.
"""

from __future__ import annotations

import csv
import json
import re
from functools import cache
from pathlib import Path
from typing import Literal

import pandas as pd

from polybias.data import sources

#: Language code -> the English name the EuroGEST files use (the authors'
#: ``supported_languages.json``), English excepted (the GEST source sentences).
LANGUAGES: dict[str, str] = {
    "bg": "Bulgarian", "ca": "Catalan", "cs": "Czech", "da": "Danish", "de": "German",
    "el": "Greek", "es": "Spanish", "et": "Estonian", "fi": "Finnish", "fr": "French",
    "ga": "Irish", "gl": "Galician", "hr": "Croatian", "hu": "Hungarian", "it": "Italian",
    "lt": "Lithuanian", "lv": "Latvian", "mt": "Maltese", "nl": "Dutch", "no": "Norwegian",
    "pl": "Polish", "pt": "Portuguese", "ro": "Romanian", "ru": "Russian", "sk": "Slovak",
    "sl": "Slovenian", "sv": "Swedish", "tr": "Turkish", "uk": "Ukrainian",
}
#: The 20 languages with gendered pairs, by family (Slavic, Romance, Baltic, Greek,
#: Germanic, Semitic), as the notebook orders them.
GENDERED_LANGUAGES: tuple[str, ...] = (
    "cs", "sk", "pl", "sl", "hr", "bg", "ru", "uk",
    "it", "fr", "es", "pt", "ca", "gl", "ro",
    "lv", "lt", "el", "de", "mt",
)
#: The 29 languages with scaffolded neutral sentences, by family: Slavic, Romance, Baltic,
#: Greek, Germanic, Semitic, Celtic, Uralic, Turkic.
NEUTRAL_LANGUAGES: tuple[str, ...] = (
    "cs", "sk", "pl", "sl", "hr", "bg", "ru", "uk",
    "it", "fr", "es", "pt", "ca", "gl", "ro",
    "lv", "lt", "el", "de", "da", "nl", "sv", "no", "mt", "ga", "et", "fi", "hu", "tr")
FAMILIES: dict[str, str] = {
    **dict.fromkeys(("cs", "sk", "pl", "sl", "hr", "bg", "ru", "uk"), "Slavic"),
    **dict.fromkeys(("it", "fr", "es", "pt", "ca", "gl", "ro"), "Romance"),
    **dict.fromkeys(("lv", "lt"), "Baltic"), "el": "Greek",
    **dict.fromkeys(("de", "da", "nl", "sv", "no"), "Germanic"), "mt": "Semitic",
    "ga": "Celtic", **dict.fromkeys(("et", "fi", "hu"), "Uralic"), "tr": "Turkic",
}
"""Language code -> its family (the order of :data:`NEUTRAL_LANGUAGES` groups them)."""
#: GEST's 16 stereotypes (the authors' ``stereotype_labels.json``).
STEREOTYPES: dict[int, str] = {
    1: "Emotional", 2: "Gentle", 3: "Empathetic", 4: "Neat", 5: "Social", 6: "Weak",
    7: "Beautiful", 8: "Tough", 9: "Self-confident", 10: "Professional", 11: "Rational",
    12: "Providers", 13: "Leaders", 14: "Childish", 15: "Sexual", 16: "Strong",
}
FEMININE_STEREOTYPES: tuple[int, ...] = tuple(range(1, 8))
MASCULINE_STEREOTYPES: tuple[int, ...] = tuple(range(8, 17))
CONDITIONS = {"G": "gendered pair", "P": "neutral sentence in the pronoun scaffolds",
              "N": "neutral sentence in the noun scaffolds"}
PAIR_COLUMNS = ("gest_id", "stereotype", "source", "masculine", "feminine", "condition", "language")
"""Columns of :func:`gendered_pairs`, :func:`scaffolded_pairs` and :func:`eurogest_pairs`."""
_SECOND_HEADER = ("the man said", "the woman said")
Duplicates = Literal["keep", "drop"]
_EDGE_PUNCTUATION = re.compile(r"^[^\w\s]+|[^\w\s]+\Z")


class EuroGestError(ValueError):
    """A EuroGEST file or request is malformed; the message names the file, row and column."""


def _check_language(language: str, allowed: tuple[str, ...], what: str) -> str:
    if language not in allowed:
        raise EuroGestError(f"EuroGEST has no {what} in {language!r}; it has them in "
                            f"{', '.join(allowed)}")
    return LANGUAGES[language]


def _rows(path: Path) -> list[list[str]]:
    try:
        with open(path, encoding="utf-8-sig", newline="") as fh:
            return list(csv.reader(fh))
    except (UnicodeDecodeError, csv.Error) as exc:
        raise EuroGestError(f"{path.name}: cannot read as UTF-8 CSV: {exc}") from exc


def _stereotype(text: str, where: str) -> int:
    try:
        value = float(text)
    except ValueError:
        raise EuroGestError(f"{where}: stereotype number {text!r} is not a number") from None
    if value != int(value) or int(value) not in STEREOTYPES:
        raise EuroGestError(f"{where}: stereotype number {text!r} is not one of 1-16")
    return int(value)


@cache
def _table(which: str) -> tuple[pd.DataFrame, int]:
    """The file ``which`` ("gendered"/"neutral") as one row per GEST sentence: ``gest_id``,
    ``stereotype``, ``source`` and one column per language (gendered: ``<lang>_m`` and
    ``<lang>_f``), empty strings where the language has no translation; and the number of
    wholly empty rows skipped."""
    path = sources.fetch(f"eurogest-{which}")
    rows = _rows(path)
    n_header = 2 if which == "gendered" else 1
    if len(rows) <= n_header:
        raise EuroGestError(f"{path.name}: no rows after the {n_header} header row(s)")
    header = [h.strip() for h in rows[0]]
    if len(header) < 3 or header[1] != "GEST_sentence" or header[-1] != "stereotype_number":
        raise EuroGestError(f"{path.name}: expected the columns id, GEST_sentence, <languages>, "
                            f"stereotype_number; got {header[:2]} ... {header[-1:]}")
    names = {name: code for code, name in LANGUAGES.items()}
    columns: dict[str, int] = {}
    for j in range(2, len(header) - 1):
        if header[j] not in names:
            raise EuroGestError(f"{path.name}: column {j + 1} names the language {header[j]!r}, "
                                "not one of EuroGEST's")
        code = names[header[j]]
        if which == "gendered":
            second = rows[1][j].strip()
            if second not in _SECOND_HEADER:
                raise EuroGestError(f"{path.name}: second header row, column {j + 1} ({header[j]}): "
                                    f"{second!r}, expected one of {_SECOND_HEADER}")
            key = f"{code}_{'m' if second == _SECOND_HEADER[0] else 'f'}"
        else:
            key = code
        if key in columns:
            raise EuroGestError(f"{path.name}: column {j + 1}: {key} appears twice")
        columns[key] = j
    expected = ([f"{c}_{g}" for c in GENDERED_LANGUAGES for g in "mf"] if which == "gendered"
                else list(NEUTRAL_LANGUAGES))
    missing = sorted(set(expected) - set(columns))
    if missing:
        raise EuroGestError(f"{path.name}: missing language column(s) {', '.join(missing)}")
    out, empty = [], 0
    for k, record in enumerate(rows[n_header:], start=n_header + 1):
        where = f"{path.name} line {k}"
        if len(record) != len(header):
            raise EuroGestError(f"{where}: expected {len(header)} fields, got {len(record)}")
        if not any(cell.strip() for cell in record[1:]):
            empty += 1
            continue
        if not record[-1].strip():
            raise EuroGestError(f"{where}: a sentence without a stereotype number")
        if not record[0].strip():
            raise EuroGestError(f"{where}: empty GEST id")
        row = {"gest_id": int(float(record[0])), "stereotype": _stereotype(record[-1], where),
               "source": record[1]}
        row.update({key: record[j].strip() for key, j in columns.items()})
        out.append(row)
    frame = pd.DataFrame(out)
    dup = frame["gest_id"][frame["gest_id"].duplicated()].tolist()
    if dup:
        raise EuroGestError(f"{path.name}: duplicate GEST ids {dup[:10]}")
    if which == "gendered":
        for code in GENDERED_LANGUAGES:
            half = frame.index[(frame[f"{code}_m"] == "") != (frame[f"{code}_f"] == "")].tolist()
            if half:
                raise EuroGestError(f"{path.name}: {LANGUAGES[code]} has only one of its two forms "
                                    f"at GEST id(s) {frame.loc[half, 'gest_id'].tolist()[:10]}")
    return frame, empty


def _finish(frame: pd.DataFrame, key: list[str], duplicates: str, source: str) -> pd.DataFrame:
    if duplicates not in ("keep", "drop"):
        raise EuroGestError(f"duplicates must be 'keep' or 'drop', got {duplicates!r}")
    is_dup = frame.duplicated(subset=key, keep="first")
    n_dup = int(is_dup.sum())
    if duplicates == "drop":
        frame = frame[~is_dup]
    frame = frame.reset_index(drop=True)
    frame.attrs.update(source=source, n_duplicates=n_dup,
                       n_dropped=n_dup if duplicates == "drop" else 0)
    return frame


def gendered_pairs(language: str, duplicates: Duplicates = "keep") -> pd.DataFrame:
    """The gendered pairs of ``language``: masculine vs feminine form of each sentence.

    Parameters
    ----------
    language : one of :data:`GENDERED_LANGUAGES`.
    duplicates : ``"keep"`` (default; the published counts) or ``"drop"`` (the first row of
        each repeated English sentence, stereotype and pair; see the module docstring).

    Returns
    -------
    DataFrame with :data:`PAIR_COLUMNS`, one row per pair in file order; ``condition`` is
    ``"G"``; ``source`` is the English GEST sentence.
    """
    _check_language(language, GENDERED_LANGUAGES, "gendered pairs")
    table, _ = _table("gendered")
    have = table[table[f"{language}_m"] != ""]
    frame = pd.DataFrame({"gest_id": have["gest_id"], "stereotype": have["stereotype"],
                          "source": have["source"], "masculine": have[f"{language}_m"],
                          "feminine": have[f"{language}_f"], "condition": "G",
                          "language": language})
    return _finish(frame, ["source", "stereotype", "masculine", "feminine"], duplicates,
                   "gest_translations_gender_sensitive.csv")


def neutral_sentences(language: str, duplicates: Duplicates = "keep") -> pd.DataFrame:
    """The gender-neutral sentences of ``language`` (one of :data:`NEUTRAL_LANGUAGES`).

    Columns ``gest_id``, ``stereotype``, ``source``, ``sentence``, ``language``; duplicates
    as in :func:`gendered_pairs`.
    """
    _check_language(language, NEUTRAL_LANGUAGES, "neutral sentences")
    table, _ = _table("neutral")
    have = table[table[language] != ""]
    frame = pd.DataFrame({"gest_id": have["gest_id"], "stereotype": have["stereotype"],
                          "source": have["source"], "sentence": have[language],
                          "language": language})
    return _finish(frame, ["source", "stereotype", "sentence"], duplicates,
                   "gest_translations_gender_insensitive.csv")


@cache
def _configs() -> tuple[dict, dict, dict]:
    out = []
    for name in ("eurogest-scaffolds", "eurogest-punctuation", "eurogest-language-configs"):
        path = sources.fetch(name)
        try:
            out.append(json.loads(path.read_text(encoding="utf-8")))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise EuroGestError(f"{path.name}: not UTF-8 JSON: {exc}") from exc
    return tuple(out)


def scaffold(sentence: str, language: str,
             compat_identical_scaffolds: bool = False) -> tuple[str, str, str]:
    """The masculine and feminine scaffolded forms of a neutral sentence and the condition.

    As the authors' ``wrap_neutral_sentence`` and ``build_row_prompts``
    (JacquelineRowe/EuroGEST, ``evaluate_models/utils/prompts.py``): leading and trailing
    punctuation is stripped (``^[^\\w\\s]+|[^\\w\\s]+\\Z``), the sentence is quoted with the
    language's marks (``punc_map.json``) and followed by a space and the scaffold: "he said"
    / "she said" in the language (condition ``"P"``) where the language has gendered
    pronouns and ``use_pronouns_if_available`` is true (``language_test_configs.json``),
    "the man said" / "the woman said" (``"N"``) elsewhere (``prompt_scaffolds.json``).

    One difference from the authors' code, and the option that restores it: their
    configuration gives Italian gendered pronoun scaffolds, but its "he said" and "she
    said" are the same word ("disse"), so every Italian neutral sentence gets two identical
    forms (a masculine ratio of exactly 0.5 whatever the model). Here a language whose two
    pronoun scaffolds are identical takes the noun scaffolds ("disse l'uomo" / "disse la
    donna", condition ``"N"``); ``compat_identical_scaffolds=True`` keeps the authors'
    identical forms (condition ``"P"``).

    >>> scaffold("Olen aina ollut johtajatyyppi.", "fi")  # doctest: +SKIP
    ('"Olen aina ollut johtajatyyppi", mies sanoi', '"Olen aina ollut johtajatyyppi", nainen sanoi', 'N')
    """
    name = _check_language(language, NEUTRAL_LANGUAGES, "scaffolds")
    scaffolds, punctuation, configs = _configs()
    try:
        pronouns = (name in configs["language_types"]["gendered_pronouns"]
                    and configs["use_pronouns_if_available"] == "True")
        if pronouns and not compat_identical_scaffolds and \
                scaffolds["he said"][name].strip() == scaffolds["she said"][name].strip():
            pronouns = False
        keys = ("he said", "she said") if pronouns else ("the man said", "the woman said")
        masc, fem = scaffolds[keys[0]][name], scaffolds[keys[1]][name]
        start, end = punctuation[name]
    except (KeyError, TypeError, ValueError) as exc:
        raise EuroGestError(f"the EuroGEST configuration files lack the scaffolds or quotation "
                            f"marks of {name}: {exc!r}") from None
    base = f"{start}{_EDGE_PUNCTUATION.sub('', sentence.strip())}{end}"
    return f"{base} {masc}", f"{base} {fem}", "P" if pronouns else "N"


def scaffolded_pairs(language: str, duplicates: Duplicates = "keep",
                     compat_identical_scaffolds: bool = False) -> pd.DataFrame:
    """The neutral sentences of ``language`` in their masculine and feminine scaffolds.

    Columns :data:`PAIR_COLUMNS` plus ``sentence`` (the neutral sentence); ``condition`` is
    ``"P"`` or ``"N"`` (:func:`scaffold`, which also explains
    ``compat_identical_scaffolds``). Duplicates as in :func:`gendered_pairs`.
    """
    frame = neutral_sentences(language, duplicates)
    forms = [scaffold(s, language, compat_identical_scaffolds) for s in frame["sentence"]]
    out = frame.assign(masculine=[f[0] for f in forms], feminine=[f[1] for f in forms],
                       condition=[f[2] for f in forms])
    out = out[[*PAIR_COLUMNS, "sentence"]]
    out.attrs.update(frame.attrs)
    return out


def eurogest_pairs(language: str, subsets: tuple[str, ...] = ("gendered", "neutral"),
                   duplicates: Duplicates = "keep", per_stereotype: int | None = None,
                   compat_identical_scaffolds: bool = False) -> pd.DataFrame:
    """Every item of ``language`` the EuroGEST measure scores: its gendered pairs and its
    scaffolded neutral sentences, as the authors' ``main.py`` scores a language.

    Parameters
    ----------
    language : one of :data:`NEUTRAL_LANGUAGES` (a language without gendered pairs gives
        only its scaffolded sentences).
    subsets : ``"gendered"`` and/or ``"neutral"``.
    duplicates : see :func:`gendered_pairs`.
    per_stereotype : keep only the first ``per_stereotype`` items of each stereotype and
        subset (in GEST id order); None keeps all. A declared subset for quick runs.
    compat_identical_scaffolds : see :func:`scaffold` (Italian only).

    Returns
    -------
    DataFrame with :data:`PAIR_COLUMNS`, gendered pairs first, each subset in GEST id order.
    """
    unknown = [s for s in subsets if s not in ("gendered", "neutral")]
    if unknown or not subsets:
        raise EuroGestError(f"subsets must name 'gendered' and/or 'neutral', got {subsets!r}")
    _check_language(language, NEUTRAL_LANGUAGES, "sentences")
    parts, n_dup = [], 0
    if "gendered" in subsets and language in GENDERED_LANGUAGES:
        parts.append(gendered_pairs(language, duplicates))
    if "neutral" in subsets:
        parts.append(scaffolded_pairs(language, duplicates,
                                      compat_identical_scaffolds)[list(PAIR_COLUMNS)])
    if not parts:
        raise EuroGestError(f"{language} has no gendered pairs; ask for subsets=('neutral',)")
    n_dup = sum(p.attrs["n_duplicates"] for p in parts)
    if per_stereotype is not None:
        if per_stereotype < 1:
            raise EuroGestError(f"per_stereotype must be at least 1, got {per_stereotype}")
        parts = [p.groupby("stereotype", sort=False).head(per_stereotype) for p in parts]
    out = pd.concat(parts, ignore_index=True)
    out.attrs.update(n_duplicates=n_dup, source="EuroGEST")
    return out


def file_counts() -> pd.DataFrame:
    """What the reader found in the files, per language: the counts the cards state.

    Columns: ``language``, ``gendered`` (pairs, duplicates included), ``gendered_duplicates``,
    ``neutral`` (sentences, duplicates included), ``neutral_duplicates``,
    ``published_gendered`` and ``published_neutral`` (``language_statistics.csv``); one row
    per language of :data:`NEUTRAL_LANGUAGES`. ``attrs`` holds ``gest_rows`` (sentence rows
    of each file) and ``empty_rows`` (wholly empty rows skipped, per file).
    """
    path = sources.fetch("eurogest-language-statistics")
    stats = pd.read_csv(path, encoding="utf-8-sig", index_col=0)
    names = {name: code for code, name in LANGUAGES.items()}
    rows = []
    for code in NEUTRAL_LANGUAGES:
        gendered = gendered_pairs(code) if code in GENDERED_LANGUAGES else None
        neutral = neutral_sentences(code)
        published = stats.loc[LANGUAGES[code]]
        rows.append({"language": code,
                     "gendered": 0 if gendered is None else len(gendered),
                     "gendered_duplicates": 0 if gendered is None else gendered.attrs["n_duplicates"],
                     "neutral": len(neutral), "neutral_duplicates": neutral.attrs["n_duplicates"],
                     "published_gendered": int(published["Gendered sentences"]),
                     "published_neutral": int(published["Gender-neutral sentences"])})
    unknown = sorted(set(stats.index) - set(names))
    if unknown:
        raise EuroGestError(f"{path.name}: unknown language(s) {', '.join(unknown)}")
    out = pd.DataFrame(rows)
    gendered, empty_g = _table("gendered")
    neutral, empty_n = _table("neutral")
    out.attrs.update(gest_rows={"gendered": len(gendered), "neutral": len(neutral)},
                     empty_rows={"gendered": empty_g, "neutral": empty_n})
    return out
