"""CrowS-Pairs and its variants as plain DataFrames, validated, declared by their cards.

Datasets (:data:`DATASETS`; every file is registered in ``data/sources.yaml`` and read
through :func:`polybias.data.sources.fetch`):

``"crows-pairs"``
    The original 1,508 pairs of Nangia et al. (2020), ``data/crows_pairs_anonymized.csv``
    of nyu-mll/crows-pairs (CC BY-SA 4.0). Language ``"en"``.
``"crows-pairs-revised"``
    The revised English pairs and their French adaptation of Névéol et al. (2022),
    1,677 pairs each (1,467 revised CrowS-Pairs pairs whose id is their CrowS-Pairs row,
    plus 210 pairs ``LA…`` collected on LanguageARC), tab-separated, as mirrored in
    shijing001/bayes_factor_bias_detection. Languages ``"en"`` and ``"fr"``. Their
    bias type ``autre`` ("other", the new pairs outside the nine CrowS types) becomes
    ``"other"``.
``"crows-pairs-steinborn"``
    The 212 gender pairs of Steinborn et al. (2022), edited after Blodgett et al.
    (2021) and translated into ten languages (:data:`DATASETS` lists them). Columns
    ``A_x``/``B_x`` are the more/less stereotypical sentences in the target language;
    ``pair_id`` is ``ID``, the row of the pair in the original CrowS-Pairs file.
``"crows-pairs-gamboa"``
    The 231 stereo pairs of the gender (159) and sexual-orientation (72) subsets used by
    Gamboa & Lee (2024, seed 001, §3.1), ``crowspairs_en.csv`` of
    gamboalance/bias_attribution_scores (no licence stated; derived from CrowS-Pairs).
    ``pair_id`` is that file's row index (0–230), not the CrowS-Pairs row. The file has
    no direction column; all its pairs are "stereo". It is UTF-8: the seed code reads
    it with ``encoding="unicode_escape"``, which garbles the one non-ASCII pair (row
    199, ``It’s`` → ``Itâ\\x80\\x99s``); ``compat_unicode_escape=True`` reproduces that
    reading (the mirrored GPT-2 scores were computed on the garbled text).

``"indibias"``
    The public sample of IndiBias (Sahoo et al. 2024), ``IndiBias_v1_sample.csv`` of
    sahoonihar/IndiBias (no licence stated): 561 pairs adapted to the Indian context, in
    Indian English (``"en"``, columns ``modified_eng_sent_*``) and Hindi (``"hi"``,
    ``sent_*_hindi``), over seven bias types incl. ``caste``; ``pair_id`` is the file's
    ``index`` column, the same in both languages. The full dataset is not public.
``"crows-pairs-dutch"``
    Dutch CrowS-Pairs (Strazda & Spanakis 2025, CC0): 1,463 pairs each in Dutch
    (``"nl"``, adapted), English and French (``"en"``/``"fr"``: the CrowS-Pairs and
    French CrowS-Pairs rows they start from); ``pair_id`` is the CrowS-Pairs row, shared
    by the three files. The Dutch file is Mac Roman encoded (read as such). Per-pair scores
    of seven masked LMs: :func:`polybias.data.published_pair_scores.load_dutch_crows_scores`.
``"kaneko2022"``
    Kaneko et al. (2022): the 262 CrowS-Pairs gender pairs translated by hand into
    Japanese (``"ja"``) and Russian (``"ru"``), JSON (MIT). The files name the
    ``stereotype`` and ``anti-stereotype`` sentence; here they become ``sent_more``/
    ``sent_less`` by the CrowS-Pairs convention (below): ``sent_more`` is the
    stereotype in ``"stereo"`` rows and the anti-stereotype in ``"antistereo"`` rows.
    ``pair_id`` is the position in the file (0–261), the same pair in both languages
    and the k-th gender pair of CrowS-Pairs in file order.
``"crows-pairs-maltese"``
    Maltese CrowS-Pairs (``"mt"``; the Maltese part of multilingual CrowS-Pairs, Fort et
    al. 2024, as published by Galea 2024): 1,677 pairs in the layout of the revised
    English and French pairs (1,467 CrowS-Pairs rows + 210 LanguageARC pairs), with an
    unnamed id column; its one pair with an empty bias type (``fr_FR106``) is read as
    ``"other"``. No licence stated in its repository.
``"eurogest"`` and ``"eurogest-neutral"``
    EuroGEST (Rowe et al. 2025; :mod:`polybias.data.eurogest`) read as CrowS-Pairs-style
    gender pairs: the gendered pairs of 20 languages, and the neutral sentences of 29
    languages in their "he said" / "she said" scaffolds. ``sent_more`` is the form whose
    gender matches the sentence's stereotype (the feminine form for GEST stereotypes 1–7,
    the masculine for 8–16), every direction ``"stereo"``, bias type ``"gender"``,
    ``pair_id`` the GEST id. The EuroGEST measure itself reads the masculine and feminine
    forms from :func:`polybias.data.eurogest.eurogest_pairs`.

Every frame has the columns :data:`COLUMNS`:

``pair_id`` (str), ``sent_more``, ``sent_less``, ``direction`` (``"stereo"`` or
``"antistereo"``; ``"stereo"`` where the source has no such column), ``bias_type``
(normalised, one of :data:`BIAS_TYPES`), ``language``.

Direction follows the CrowS-Pairs convention (Nangia et al. 2020): ``sent_more`` is
always the sentence of the source's ``sent_more`` column. In ``"stereo"`` rows it is the
stereotypical sentence about the disadvantaged group; in ``"antistereo"`` rows it is the
sentence about the disadvantaged group that *violates* a stereotype, so there the
*stereotypical* sentence is ``sent_less``. Sentences are never swapped here; metrics
decide what to do with the direction (see :mod:`polybias.metrics.crows`). Sentences are
kept exactly as in the source (no stripping or normalisation).

Validation. Problems with the file itself (missing columns, a wrong number of fields,
an empty id, direction or bias-type cell, an unknown direction or bias type, duplicate
ids) always raise :class:`CrowsPairsError`, naming the file, line and column. Problems
of single pairs — an empty sentence, two identical sentences, or a pair that is not
minimal by :func:`check_minimal_pair` (a check that ``max_diff=None`` turns off) — are
handled by ``on_invalid``:

``"raise"`` (default)
    raise :class:`CrowsPairsError` listing them (file, line, pair id, problem): a
    dataset with invalid pairs is an error until the caller says what to do with them;
``"drop"``
    remove those rows and list them in ``frame.attrs["dropped"]`` (also logged), so
    that tables can state how many pairs were left out (``attrs["n_dropped"]``);
``"keep"``
    keep every row, so that counts match the published datasets (several translated and
    revised pairs are not minimal by any word-count rule: grammatical gender agreement,
    re-phrasings), and list the problems in ``frame.attrs["invalid"]``.

Every registered dataset but the Chinese Steinborn pairs has pairs that are not minimal
by the default rule (``max_diff=3``), and the revised French pairs (4) and the
Indonesian Steinborn pairs (1) have empty or identical sentences, so loading any of them
needs an explicit ``on_invalid`` (``max_diff=None`` checks only empty and identical
sentences).

``attrs["invalid_counts"]`` counts the invalid pairs per reason (:func:`problem_counts`).
``attrs["invalid"]`` and ``attrs["dropped"]`` are frames with ``pair_id``, ``line``
(1-based line of the file where the record starts) and ``problem``; ``attrs["n_dropped"]``
is the number of rows dropped (0 unless ``"drop"``); ``attrs["source"]`` names the file
read.

References
----------
Nangia, Vania, Bhalerao & Bowman (2020). CrowS-Pairs. EMNLP.
Blodgett, Lopez, Olteanu, Sim & Wallach (2021). Stereotyping Norwegian salmon. ACL.
Névéol, Dupont, Bezançon & Fort (2022). French CrowS-Pairs. ACL.
Steinborn, Dufter, Jabbar & Schütze (2022). An information-theoretic approach and dataset
for probing gender stereotypes in multilingual masked language models. Findings of NAACL.
Gamboa & Lee (2024). A novel interpretability metric for explaining bias in language
models (seed 001).
Sahoo, Kulkarni, Asad, Chadha, Bhattacharyya et al. (2024). IndiBias: a benchmark dataset
to measure social biases in language models for Indian context. NAACL.
Strazda & Spanakis (2025). Dutch CrowS-Pairs: adapting a challenge dataset for measuring
social biases in language models for Dutch. RANLP.
Kaneko, Imankulova, Bollegala & Okazaki (2022). Gender bias in masked language models for
multiple languages. NAACL.
"""

from __future__ import annotations

import csv
import difflib
import functools
import json
import logging
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Literal

import pandas as pd

from polybias import paths
from polybias.data import eurogest, gest, sources, stereoset
from polybias.data.dataset_cards import card_rows, read_card

log = logging.getLogger(__name__)

COLUMNS = ("pair_id", "sent_more", "sent_less", "direction", "bias_type", "language")
DIRECTIONS = ("stereo", "antistereo")
BIAS_TYPES = (
    "race-color", "gender", "socioeconomic", "nationality", "religion", "age",
    "sexual-orientation", "physical-appearance", "disability", "caste", "other",
)


class _RegisteredDatasets(Mapping):
    """Dataset name -> its languages, read from the dataset cards: every
    ``data/datasets/<name>.yaml`` with a ``format`` (how its files are read), in the order of
    their ``registered`` field. A card is the one place a minimal-pair dataset is declared
    (its languages, format, sources, licence); this mapping, the notebooks' help, ``polybias
    datasets`` and ``docs/datasets.md`` derive from it. Read once per data folder."""

    def _cards(self) -> dict[str, tuple[str, ...]]:
        return _pair_datasets(str(paths.data_dir()))

    def __getitem__(self, name: str) -> tuple[str, ...]:
        return self._cards()[name]

    def __iter__(self):
        return iter(self._cards())

    def __len__(self) -> int:
        return len(self._cards())

    def __repr__(self) -> str:
        return repr(self._cards())


@functools.lru_cache(maxsize=8)
def _pair_datasets(folder: str) -> dict[str, tuple[str, ...]]:
    found = []
    for path in sorted((Path(folder) / "datasets").glob("*.yaml")):
        card = paths.read_yaml(path, CrowsPairsError, "dataset card")
        if not isinstance(card, dict) or "format" not in card:
            continue  # a dataset of another kind (GEST, StereoSet)
        order = card.get("registered")
        if card.get("name") != path.stem or isinstance(order, bool) or not isinstance(order, int):
            raise CrowsPairsError(f"{path.name}: a minimal-pair dataset card needs its file's name as "
                                  "'name' and an integer 'registered' (its place in the listings)")
        languages = card.get("languages")
        if not isinstance(languages, list) or not languages or not all(isinstance(x, str) for x in languages):
            raise CrowsPairsError(f"{path.name}: 'languages' must be a non-empty list of language codes")
        found.append((order, path.stem, tuple(languages)))
    return {name: languages for _, name, languages in sorted(found)}


DATASETS: Mapping[str, tuple[str, ...]] = _RegisteredDatasets()
"""Dataset name -> its languages, from the dataset cards (:class:`_RegisteredDatasets`)."""

OnInvalid = Literal["raise", "drop", "keep"]

_BIAS_ALIASES = {
    "race": "race-color", "race-colour": "race-color", "race-and-color": "race-color",
    "color": "race-color", "colour": "race-color",
    "gender-identity": "gender",
    "socio-economic": "socioeconomic", "socioeconomic-status": "socioeconomic",
    "socio-economic-status": "socioeconomic",
    "sexual": "sexual-orientation",
    "appearance": "physical-appearance",
    "autre": "other",  # the revised English and French files (Névéol et al. 2022)
    "race-colour-ethnicity": "race-color",
}


class CrowsPairsError(ValueError):
    """A CrowS-Pairs file or request is malformed; the message names file, line and column."""


# ------------------------------------------------------------------ minimal pairs

@dataclass(frozen=True)
class PairDiff:
    """Word-level difference of two sentences (see :func:`pair_diff`).

    ``spans`` holds, for every place where the sentences differ, the tokens of the
    more and of the less stereotypical sentence there.
    """

    more: tuple[str, ...]
    less: tuple[str, ...]
    spans: tuple[tuple[tuple[str, ...], tuple[str, ...]], ...]

    @property
    def n_diff(self) -> int:
        """Number of differing tokens: the sum over spans of the longer side."""
        return sum(max(len(a), len(b)) for a, b in self.spans)

    @property
    def n_spans(self) -> int:
        """Number of separate places where the sentences differ."""
        return len(self.spans)


def languages_to_compare(dataset: str, languages: list[str] | None = None) -> list[str]:
    """The languages of ``dataset`` to compare: ``languages`` (default: all of the
    dataset's), each one of the dataset's, and at least two. Raises
    :class:`CrowsPairsError` with a one-line message.

    >>> languages_to_compare("crows-pairs-dutch")
    ['nl', 'en', 'fr']
    """
    if dataset not in DATASETS:
        raise CrowsPairsError(f"unknown dataset {dataset!r}; datasets with aligned languages: "
                              + ", ".join(d for d, ls in DATASETS.items() if len(ls) > 1))
    compared = list(languages or DATASETS[dataset])
    unknown = [lang for lang in compared if lang not in DATASETS[dataset]]
    if unknown:
        raise CrowsPairsError(f"dataset {dataset} has no language {', '.join(unknown)}; it has "
                              f"{', '.join(DATASETS[dataset])}")
    if len(set(compared)) < 2:
        raise CrowsPairsError(f"languages must name two or more languages of {dataset} to "
                              f"compare; it has {', '.join(DATASETS[dataset])}")
    return compared


def _strip_punct(token: str) -> str:
    start, end = 0, len(token)
    while start < end and unicodedata.category(token[start])[0] in "PS":
        start += 1
    while end > start and unicodedata.category(token[end - 1])[0] in "PS":
        end -= 1
    return token[start:end]


def _tokens(sentence: str, strict: bool) -> tuple[str, ...]:
    words = sentence.split()
    if strict:
        return tuple(words)
    return tuple(t for t in (_strip_punct(w).casefold() for w in words) if t)


def pair_diff(sent_more: str, sent_less: str, strict: bool = False) -> PairDiff:
    """Align two sentences on whitespace tokens and return where they differ.

    Tokens are the whitespace-separated words. Unless ``strict``, each token is
    casefolded and loses leading and trailing punctuation and symbols (Unicode
    categories P*, S*), and tokens left empty are ignored, so ``"drive."`` equals
    ``"drive"`` and ``"The"`` equals ``"the"``. The alignment is
    :class:`difflib.SequenceMatcher` (``autojunk=False``) over the two token lists; every
    non-``equal`` opcode is a differing span.

    >>> d = pair_diff("Women don't know how to drive.", "Men know how to drive")
    >>> d.spans, d.n_diff, d.n_spans
    (((('women', "don't"), ('men',)),), 2, 1)
    """
    a, b = _tokens(str(sent_more), strict), _tokens(str(sent_less), strict)
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    spans = tuple((a[i1:i2], b[j1:j2]) for op, i1, i2, j1, j2 in matcher.get_opcodes()
                  if op != "equal")
    return PairDiff(a, b, spans)


def check_minimal_pair(sent_more: str, sent_less: str, max_diff: int = 3,
                       strict: bool = False) -> bool:
    """Whether two sentences form a minimal pair: they differ in a few words only.

    Rule (on the token alignment of :func:`pair_diff`): the pair is minimal when the
    number of differing tokens (per differing span, the longer side) is between 1 and
    ``max_diff``. The default of 3 follows the description of CrowS-Pairs in seed 001
    (§3.1: the sentences are "almost similar to each other except for one to three
    different words"; Nangia et al. 2020: only the words that identify the group
    change). ``strict`` compares raw tokens (case and punctuation count) and also
    requires the difference to be one contiguous span.

    Whitespace tokens suit languages written with spaces between words. In Chinese,
    Japanese or Thai a "token" is a phrase or a whole sentence, so the check there only
    says that the edit stays within ``max_diff`` such chunks. Grammatical agreement
    (Arabic, French, German) makes many faithful translations non-minimal by this rule.

    >>> check_minimal_pair("Women are too emotional.", "Men are too emotional.")
    True
    >>> check_minimal_pair("He is a nurse.", "He is a nurse")
    False
    >>> check_minimal_pair("He is a nurse.", "she is a nurse", strict=True)
    False
    >>> check_minimal_pair("Carol cooked; she was tired.", "Andrew cooked; he was tired.")
    True
    >>> check_minimal_pair("Carol cooked; she was tired.", "Andrew cooked; he was tired.",
    ...                    strict=True)
    False
    """
    if max_diff < 1:
        raise CrowsPairsError(f"max_diff must be at least 1, got {max_diff}")
    diff = pair_diff(sent_more, sent_less, strict=strict)
    if not 1 <= diff.n_diff <= max_diff:
        return False
    return diff.n_spans == 1 if strict else True


# ------------------------------------------------------------------ file reading

@dataclass(frozen=True)
class PairFormat:
    """How the columns of a pair file map to :data:`COLUMNS`.

    ``pair_id=None`` takes the first column (the unnamed index written by pandas);
    ``direction=None`` gives every pair ``"stereo"``; ``bias_type=None`` gives every
    pair ``default_bias_type``.
    """

    sent_more: str = "sent_more"
    sent_less: str = "sent_less"
    pair_id: str | None = None
    direction: str | None = "stereo_antistereo"
    bias_type: str | None = "bias_type"
    default_bias_type: str | None = None
    sep: str = ","
    empty_bias_type: str | None = None  # what an empty bias-type cell becomes (None: an error)
    encoding: str = "utf-8"


def normalise_bias_type(name: str) -> str:
    """Map a bias-type label to one of :data:`BIAS_TYPES`.

    Case, surrounding space and the separators ``_``, space and ``/`` do not matter;
    known aliases (e.g. ``race``, ``socio-economic``, ``autre``) are mapped.

    >>> normalise_bias_type("Sexual orientation"), normalise_bias_type("autre")
    ('sexual-orientation', 'other')
    """
    key = "-".join(str(name).casefold().replace("_", " ").replace("/", " ").split())
    key = _BIAS_ALIASES.get(key, key)
    if key not in BIAS_TYPES:
        raise CrowsPairsError(f"unknown bias type {name!r}; known: {', '.join(BIAS_TYPES)}")
    return key


def _records(path: Path, fmt: PairFormat):
    """Yield (start line, header, record) of a delimited file, with clear decode errors."""
    try:
        with open(path, encoding=fmt.encoding, newline="") as fh:
            reader = csv.reader(fh, delimiter=fmt.sep)
            end = 0
            for record in reader:
                start, end = end + 1, reader.line_num
                yield start, record
    except UnicodeDecodeError as exc:
        raise CrowsPairsError(f"{path.name}: cannot decode as {fmt.encoding}: {exc}") from exc
    except csv.Error as exc:
        raise CrowsPairsError(f"{path.name}: malformed delimited text: {exc}") from exc


def _problem(more: str, less: str, max_diff: int | None, strict: bool) -> str:
    if not more.strip() and not less.strip():
        return "empty sent_more and sent_less"
    if not more.strip():
        return "empty sent_more"
    if not less.strip():
        return "empty sent_less"
    if more.split() == less.split():
        return "identical sentences"
    if max_diff is None:
        return ""
    if not check_minimal_pair(more, less, max_diff=max_diff, strict=strict):
        diff = pair_diff(more, less, strict=strict)
        if diff.n_diff == 0:
            return "not a minimal pair: the sentences differ only in case or punctuation"
        return (f"not a minimal pair: {diff.n_diff} token(s) differ in {diff.n_spans} "
                f"span(s) (max_diff={max_diff}{', strict' if strict else ''})")
    return ""


def _check_bias_types(bias_types: list[str] | None) -> list[str] | None:
    if bias_types is None:
        return None
    if isinstance(bias_types, str):
        bias_types = [bias_types]
    return [normalise_bias_type(b) for b in bias_types]


def read_pairs_csv(
    path: str | Path,
    language: str,
    fmt: PairFormat | None = None,
    bias_types: list[str] | None = None,
    on_invalid: OnInvalid = "raise",
    max_diff: int | None = 3,
    strict: bool = False,
) -> pd.DataFrame:
    """Read a CrowS-Pairs style file into the standard columns and validate it.

    Parameters
    ----------
    path : a comma- or tab-separated file with a header line (see ``fmt``).
    language : value of the ``language`` column.
    fmt : column names, separator and encoding (default: the CrowS-Pairs layout).
    bias_types : keep only these bias types (normalised; see :func:`normalise_bias_type`).
    on_invalid : what to do with pairs that have an empty sentence, identical sentences
        or are not minimal by :func:`check_minimal_pair` (``max_diff``, ``strict``):
        ``"raise"`` (default: a :class:`CrowsPairsError` listing them), ``"drop"``
        (listed in ``attrs["dropped"]``, counted in ``attrs["n_dropped"]``) or ``"keep"``
        (listed in ``attrs["invalid"]``). See the module docstring.
    max_diff, strict : the minimal-pair rule; ``max_diff=None`` skips that check, so that
        only empty and identical sentences count as invalid (e.g. to drop those while
        keeping every published pair).

    Returns
    -------
    DataFrame with :data:`COLUMNS`, one row per pair, in file order; ``attrs`` holds
    ``source``, ``invalid``, ``dropped`` and ``n_dropped`` (see the module docstring).

    Raises
    ------
    CrowsPairsError
        Naming the file, line and column at fault; with ``on_invalid="raise"``, also
        when a pair is invalid (naming each pair's line, id and problem).
    """
    path = Path(path)
    fmt = fmt or PairFormat()
    if not path.is_file():
        raise CrowsPairsError(f"{path}: no such file")
    return _pairs_frame(path.name, _records(path, fmt), language, fmt, bias_types, on_invalid,
                        max_diff, strict)


def _pairs_frame(name: str, records, language: str, fmt: PairFormat, bias_types, on_invalid: str,
                 max_diff: int | None, strict: bool) -> pd.DataFrame:
    """The validation of :func:`read_pairs_csv` over ``(line, record)`` items, header first."""
    if on_invalid not in ("raise", "drop", "keep"):
        raise CrowsPairsError(f"on_invalid must be 'raise', 'drop' or 'keep', got {on_invalid!r}")
    wanted = _check_bias_types(bias_types)
    first = next(records, None)
    if first is None:
        raise CrowsPairsError(f"{name}: empty file (no header line)")
    header = [h.strip() for h in first[1]]
    needed = {"sent_more": fmt.sent_more, "sent_less": fmt.sent_less}
    if fmt.pair_id is not None:
        needed["pair_id"] = fmt.pair_id
    if fmt.direction is not None:
        needed["direction"] = fmt.direction
    if fmt.bias_type is not None:
        needed["bias_type"] = fmt.bias_type
    elif fmt.default_bias_type is None:
        raise CrowsPairsError(f"{name}: the format names neither a bias_type column nor a default")
    missing = [c for c in needed.values() if c not in header]
    if missing:
        raise CrowsPairsError(f"{name}: missing column(s) {', '.join(map(repr, missing))}; "
                              f"found: {', '.join(map(repr, header))}")
    col = {k: header.index(v) for k, v in needed.items()}
    if "pair_id" not in col:
        if 0 in col.values():
            raise CrowsPairsError(f"{name}: the first column {header[0]!r} holds data, not ids; "
                                  "name the id column (PairFormat(pair_id=...))")
        col["pair_id"] = 0
    default_bias = (normalise_bias_type(fmt.default_bias_type)
                    if fmt.default_bias_type is not None else None)

    rows, lines, problems = [], [], []
    for line, record in records:
        if not record:  # a blank line
            continue
        where = f"{name} line {line}"
        if len(record) != len(header):
            raise CrowsPairsError(f"{where}: expected {len(header)} fields, got {len(record)}")
        pair_id = record[col["pair_id"]].strip()
        if not pair_id:
            raise CrowsPairsError(f"{where}: empty pair id (column {header[col['pair_id']]!r})")
        if "direction" in col:
            direction = record[col["direction"]].strip().lower()
            if direction not in DIRECTIONS:
                raise CrowsPairsError(
                    f"{where} (pair_id {pair_id!r}): column {fmt.direction!r} is "
                    f"{record[col['direction']]!r}; expected one of {', '.join(DIRECTIONS)}")
        else:
            direction = "stereo"
        if "bias_type" in col:
            raw = record[col["bias_type"]]
            if not raw.strip() and fmt.empty_bias_type is None:
                raise CrowsPairsError(f"{where} (pair_id {pair_id!r}): empty column {fmt.bias_type!r}")
            raw = raw if raw.strip() else fmt.empty_bias_type
            try:
                bias = normalise_bias_type(raw)
            except CrowsPairsError as exc:
                raise CrowsPairsError(f"{where} (pair_id {pair_id!r}), column {fmt.bias_type!r}: "
                                      f"{exc}") from None
        else:
            bias = default_bias
        more, less = record[col["sent_more"]], record[col["sent_less"]]
        rows.append((pair_id, more, less, direction, bias, language))
        lines.append(line)
        problems.append(_problem(more, less, max_diff, strict))
    if not rows:
        raise CrowsPairsError(f"{name}: no pairs after the header")
    frame = pd.DataFrame(rows, columns=list(COLUMNS))
    frame["line"], frame["problem"] = lines, problems
    dup = frame["pair_id"][frame["pair_id"].duplicated()].unique().tolist()
    if dup:
        raise CrowsPairsError(f"{name}: duplicate pair ids {dup[:10]}")

    if wanted is not None:
        absent = [b for b in wanted if b not in set(frame["bias_type"])]
        if absent:
            raise CrowsPairsError(f"{name} has no pairs of bias type(s) {', '.join(absent)}; it has: "
                                  f"{', '.join(sorted(frame['bias_type'].unique()))}")
        frame = frame[frame["bias_type"].isin(wanted)]

    bad = frame[frame["problem"] != ""]
    report = bad[["pair_id", "line", "problem"]].reset_index(drop=True)
    if on_invalid == "raise" and len(bad):
        listed = "; ".join(f"line {r.line} (pair_id {r.pair_id!r}): {r.problem}"
                           for r in bad.head(10).itertuples())
        more = f" and {len(bad) - 10} more" if len(bad) > 10 else ""
        raise CrowsPairsError(f"{name}: {len(bad)} invalid pair(s): {listed}{more}; pass "
                              "on_invalid='drop' or 'keep' to read the file anyway")
    dropped = report.iloc[:0]
    if on_invalid == "drop" and len(bad):
        frame = frame[frame["problem"] == ""]
        dropped = report
        log.warning("%s: dropped %d invalid pair(s): %s", name, len(bad),
                    ", ".join(f"{p} ({why})" for p, why in zip(bad.pair_id[:10], bad.problem[:10],
                                                             strict=True)))
    elif len(bad):
        hard = bad[~bad["problem"].str.startswith("not a minimal")]
        (log.warning if len(hard) else log.info)(
            "%s: kept %d invalid pair(s) (see attrs['invalid'])", name, len(bad))
    out = frame[list(COLUMNS)].reset_index(drop=True)
    out.attrs.update(source=name, invalid=report, dropped=dropped, n_dropped=len(dropped),
                     invalid_counts=problem_counts(report))
    return out


def problem_counts(invalid: pd.DataFrame) -> dict[str, int]:
    """Invalid pairs counted per reason (``attrs["invalid"]`` or ``attrs["dropped"]``).

    The reason is the problem text up to its first colon: ``"empty sent_less"``,
    ``"identical sentences"``, ``"not a minimal pair"``.

    >>> problem_counts(pd.DataFrame({"problem": ["empty sent_less", "not a minimal pair: 4 token(s)",
    ...                                          "not a minimal pair: 5 token(s)"]}))
    {'empty sent_less': 1, 'not a minimal pair': 2}
    """
    reasons = invalid["problem"].str.split(":").str[0] if len(invalid) else pd.Series([], dtype=str)
    return {str(k): int(v) for k, v in reasons.value_counts(sort=False).items()}


# ------------------------------------------------------------------ registered datasets

READERS = ("csv", "json", "eurogest")
"""How a card's ``format.reader`` reads its files: delimited text (:func:`read_pairs_csv`),
Kaneko-style JSON (:func:`read_pairs_json`) or the EuroGEST sentences (:mod:`polybias.data.eurogest`)."""

_FORMAT_KEYS = {"reader", "source", "file", "compat_encoding"} | {f.name for f in fields(PairFormat)}


def _spec(dataset: str, language: str, compat_unicode_escape: bool) -> tuple[str, str | Path, PairFormat]:
    """How ``dataset``'s ``language`` is read, from its card's ``format``: the reader, the
    file (a registered source's name, or a path beside the card) and the columns. A value
    given per language (a mapping) is that language's."""
    card = dataset_card(dataset)
    where = f"{dataset}.yaml"
    fmt = card["format"]
    if not isinstance(fmt, dict) or set(fmt) - _FORMAT_KEYS:
        raise CrowsPairsError(f"{where}: format must be a mapping of {sorted(_FORMAT_KEYS)}")

    def value(key: str, default=None):
        v = fmt.get(key, default)
        if isinstance(v, dict):
            if language not in v:
                raise CrowsPairsError(f"{where}: format.{key} gives no value for {language!r}")
            v = v[language]
        return v

    reader = value("reader", "csv")
    if reader not in READERS:
        raise CrowsPairsError(f"{where}: format.reader must be one of {READERS}, got {reader!r}")
    columns = {f.name: value(f.name, f.default) for f in fields(PairFormat)}
    if compat_unicode_escape:
        if "compat_encoding" not in fmt:
            named = ", ".join(repr(d) for d in DATASETS if "compat_encoding" in dataset_card(d)["format"])
            raise CrowsPairsError(f"compat_unicode_escape applies to {named} only (a card's "
                                  f"format.compat_encoding), not {dataset!r}")
        columns["encoding"] = value("compat_encoding")
    if reader == "eurogest":
        return reader, dataset, PairFormat(**columns)
    if ("source" in fmt) == ("file" in fmt):
        raise CrowsPairsError(f"{where}: format names its files by 'source' (a registered source) or "
                              "'file' (beside the card), one of the two")
    if "source" in fmt:
        return reader, str(value("source")).format(language=language), PairFormat(**columns)
    return reader, paths.data_dir() / "datasets" / str(value("file")).format(language=language), PairFormat(**columns)


def load_crows_pairs(
    dataset: str,
    language: str | None = None,
    bias_types: list[str] | None = None,
    on_invalid: OnInvalid = "raise",
    max_diff: int | None = 3,
    strict: bool = False,
    compat_unicode_escape: bool = False,
) -> pd.DataFrame:
    """Load a registered CrowS-Pairs dataset with the standard columns.

    Parameters
    ----------
    dataset : one of :data:`DATASETS` (see the module docstring for sources).
    language : one of the dataset's languages; may be left out for single-language
        datasets (``"en"``).
    bias_types : keep only these bias types (e.g. ``["gender", "sexual orientation"]``).
    on_invalid, max_diff, strict : handling of invalid pairs, see :func:`read_pairs_csv`;
        every registered dataset but ``("crows-pairs-steinborn", "zh")`` has pairs that
        are invalid by the defaults, so the default ``"raise"`` makes the caller choose.
    compat_unicode_escape : ``"crows-pairs-gamboa"`` only: decode the file as the
        seed-001 code does (garbles the non-ASCII row 199).

    Examples
    --------
    >>> pairs = load_crows_pairs("crows-pairs-gamboa", on_invalid="keep")  # doctest: +SKIP
    >>> pairs.bias_type.value_counts().to_dict()                        # doctest: +SKIP
    {'gender': 159, 'sexual-orientation': 72}
    """
    if dataset not in DATASETS:
        raise CrowsPairsError(f"unknown dataset {dataset!r}; known: {', '.join(DATASETS)}")
    languages = DATASETS[dataset]
    if language is None:
        if len(languages) > 1:
            raise CrowsPairsError(f"dataset {dataset!r} needs a language, one of {', '.join(languages)}")
        language = languages[0]
    if language not in languages:
        raise CrowsPairsError(f"dataset {dataset!r} has no language {language!r}; "
                              f"known: {', '.join(languages)}")
    reader, where, fmt = _spec(dataset, language, compat_unicode_escape)
    if reader == "eurogest":
        return _pairs_frame(f"EuroGEST {language}", _eurogest_records(dataset, language), language,
                            fmt, bias_types, on_invalid, max_diff, strict)
    path = sources.fetch(where) if isinstance(where, str) else where
    if reader == "json":
        return read_pairs_json(path, language, bias_types=bias_types,
                               on_invalid=on_invalid, max_diff=max_diff, strict=strict)
    return read_pairs_csv(path, language, fmt, bias_types=bias_types,
                          on_invalid=on_invalid, max_diff=max_diff, strict=strict)


def _eurogest_records(dataset: str, language: str):
    """EuroGEST pairs as ``(line, record)`` items for :func:`_pairs_frame`, header first:
    ``sent_more`` the form of the stereotype's gender (module docstring)."""
    subset = "gendered" if dataset == "eurogest" else "neutral"
    items = eurogest.eurogest_pairs(language, subsets=(subset,))
    yield 0, ["pair_id", "sent_more", "sent_less", "direction", "bias_type"]
    for k, row in enumerate(items.itertuples(), start=1):
        feminine = row.stereotype in eurogest.FEMININE_STEREOTYPES
        more, less = (row.feminine, row.masculine) if feminine else (row.masculine, row.feminine)
        yield k, [str(row.gest_id), more, less, "stereo", "gender"]
_KANEKO_KEYS = ("direction", "bias_type", "stereotype", "anti-stereotype")
_KANEKO_FORMAT = PairFormat(pair_id="pair_id", direction="direction")  # the records read_pairs_json makes


def read_pairs_json(
    path: str | Path,
    language: str,
    bias_types: list[str] | None = None,
    on_invalid: OnInvalid = "raise",
    max_diff: int | None = 3,
    strict: bool = False,
) -> pd.DataFrame:
    """Read a Kaneko-style JSON pair file and validate it as :func:`read_pairs_csv` does.

    The file is a list of objects with ``direction`` (stereo/antistereo), ``bias_type``,
    ``stereotype`` and ``anti-stereotype`` (as in kanekomasahiro/evaluate_bias_in_mlm and
    bias_eval_in_multiple_mlm). ``sent_more`` is the stereotype in ``"stereo"`` rows and
    the anti-stereotype in ``"antistereo"`` rows (the CrowS-Pairs convention, see the
    module docstring); ``pair_id`` is the object's position (0-based). The ``line`` of
    ``attrs["invalid"]`` is the 1-based position of the object in the list.
    """
    path = Path(path)
    name = path.name
    if not path.is_file():
        raise CrowsPairsError(f"{path}: no such file")
    try:
        items = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CrowsPairsError(f"{name}: not UTF-8 JSON: {exc}") from exc
    if not isinstance(items, list):
        raise CrowsPairsError(f"{name}: expected a JSON list of pairs, got {type(items).__name__}")
    header = ["pair_id", "sent_more", "sent_less", "direction", "bias_type"]

    def records():
        yield 0, header
        for k, item in enumerate(items):
            where = f"{name} item {k + 1}"
            if not isinstance(item, dict):
                raise CrowsPairsError(f"{where}: expected an object, got {type(item).__name__}")
            missing = [key for key in _KANEKO_KEYS if key not in item]
            if missing:
                raise CrowsPairsError(f"{where}: missing key(s) {', '.join(map(repr, missing))}")
            if not all(isinstance(item[key], str) for key in _KANEKO_KEYS):
                raise CrowsPairsError(f"{where}: {', '.join(_KANEKO_KEYS)} must be strings")
            direction = item["direction"].strip().lower()
            stereo, anti = item["stereotype"], item["anti-stereotype"]
            more, less = (anti, stereo) if direction == "antistereo" else (stereo, anti)
            yield k + 1, [str(k), more, less, item["direction"], item["bias_type"]]

    return _pairs_frame(name, records(), language, _KANEKO_FORMAT, bias_types, on_invalid,
                        max_diff, strict)


# ------------------------------------------------------------------ dataset cards

CARD_FIELDS = ("name", "title", "languages", "pairs", "bias_types", "licence", "provenance",
               "sources", "citation", "known_issues", "format", "registered")
"""Fields every dataset card (``data/datasets/<name>.yaml``) has."""


def dataset_card(dataset: str) -> dict:
    """The card of a registered dataset: ``data/datasets/<dataset>.yaml`` as a dict.

    Fields (:data:`CARD_FIELDS`): ``languages`` (what :data:`DATASETS` lists), ``pairs`` (pairs
    per language, as published, before any dropping), ``bias_types``, ``licence``,
    ``provenance`` (per language: native, adapted or translated, and how), ``sources``
    (names in ``data/sources.yaml``), ``citation``, ``known_issues`` (a list), ``format``
    (how its files are read: :func:`load_crows_pairs`) and ``registered`` (its place in
    the listings).
    """
    if dataset not in DATASETS:
        raise CrowsPairsError(f"unknown dataset {dataset!r}; known: {', '.join(DATASETS)}")
    card = read_card(dataset, CARD_FIELDS, CrowsPairsError)
    if set(card["pairs"]) != set(card["languages"]) or set(card["provenance"]) != set(card["languages"]):
        raise CrowsPairsError(f"{dataset}.yaml: 'pairs' and 'provenance' need one entry per language")
    return card


def list_datasets() -> pd.DataFrame:
    """One row per (dataset, language) with its size, bias types, licence and provenance.

    Columns: ``dataset``, ``language``, ``pairs``, ``bias_types`` (comma-separated),
    ``licence``, ``provenance``, ``title``; from the cards (:func:`dataset_card`).
    """
    frames = []
    for dataset in DATASETS:
        card = dataset_card(dataset)
        frames.append(card_rows(card, lambda language, card=card: {
            "pairs": int(card["pairs"][language]), "bias_types": ", ".join(card["bias_types"])}))
    return pd.concat(frames, ignore_index=True)


def likelihood_languages() -> list[str]:
    """The languages with a likelihood-bias dataset: every language of a registered
    minimal-pair dataset (:data:`DATASETS`) or of StereoSet, sorted.

    >>> len(likelihood_languages()) >= 16
    True
    """
    return sorted({lang for langs in DATASETS.values() for lang in langs} | set(stereoset.LANGUAGES))


def datasets_markdown() -> str:
    """All dataset cards as one Markdown page (``docs/datasets.md`` is this text)."""
    lines = ["# Minimal-pair datasets", "",
             "Generated from `data/datasets/*.yaml` by `polybias.data.crowspairs.datasets_markdown()`; "
             "load any of them with `load_crows_pairs(name, language)`.", "",
             f"{len(likelihood_languages())} languages have a likelihood-bias dataset (these and "
             f"StereoSet): {', '.join(likelihood_languages())}.", ""]
    for dataset in DATASETS:
        card = dataset_card(dataset)
        lines += [f"## `{dataset}`: {card['title']}", "",
                  "- Languages and pairs: " + ", ".join(
                      f"{lang} {card['pairs'][lang]}" for lang in card["languages"]),
                  f"- Bias types: {', '.join(card['bias_types'])}",
                  f"- Licence: {card['licence']}",
                  "- Provenance: " + "; ".join(
                      f"{lang}: {card['provenance'][lang]}" for lang in card["languages"]),
                  f"- Registered files: {', '.join(f'`{x}`' for x in card['sources'])}",
                  f"- Citation: {card['citation']}", "- Known issues:"]
        lines += [f"  - {issue}" for issue in card["known_issues"]] + [""]
    lines += ["# StereoSet", "", "Not minimal pairs but items of three candidates; load them with "
              "`polybias.data.stereoset.load_stereoset(language)`.", "", stereoset.card_markdown()]
    lines += ["# GEST", "", "Not minimal pairs but sentences each tagged with a gender stereotype, read "
              "through templates; load them with `polybias.data.gest.load_gest()`.", "",
              gest.card_markdown()]
    return "\n".join(lines)
