"""Census shares of women per occupation and the occupation and gender words of Garg et al.

Garg, Schiebinger, Jurafsky & Zou (2018), "Word embeddings quantify 100 years of gender
and ethnic stereotypes", PNAS 115(16):E3635–E3644, ship with their code
(nikhgarg/EmbeddingDynamicStereotypes) the share of women and of men in each occupation
per US census year (1850–2015, occupations coded to the 1950 scheme and named by one
word), the list of occupation words they score, and their words for women and men. The
files are registered in ``data/sources.yaml`` (``garg2018-*``) and read at run time
through :func:`polybias.data.sources.fetch` (never committed).

Every loader checks what it reads: the number of words or rows kept equals the number in
the file, and a malformed row (a blank or repeated word, a share that is not a number in
[0, 1], shares of women and men that do not add up to 1, a repeated occupation-year) is a
:class:`CensusError` naming the file, the line and what is wrong.
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np
import pandas as pd

from polybias.data import sources

OCCUPATIONS = "garg2018-occupations"
SHARES = "garg2018-occupation-gender-shares"
FEMALE_WORDS = "garg2018-female-words"
MALE_WORDS = "garg2018-male-words"

SHARE_COLUMNS = ("Census year", "Occupation", "Total Weight", "Female", "Male")
#: The largest ``abs(Female + Male - 1)`` allowed in a row (the file's own sums differ from 1 by < 3e-16).
SUM_TOLERANCE = 1e-6
#: Outcomes of the share of women p that :func:`women_share_outcome` computes.
OUTCOMES = ("share", "logit", "relative_percentage")


class CensusError(ValueError):
    """A census or word-list file is malformed; the message names the file and line."""


def read_word_list(path: str | Path) -> list[str]:
    """Words of a one-word-a-line file, in file order.

    Each non-empty line is one word (surrounding whitespace stripped; a missing final
    newline is fine). A blank line between words, a line with a space inside, or a word
    given twice is an error naming the line.

    >>> import tempfile, os
    >>> f = os.path.join(tempfile.mkdtemp(), "w.txt")
    >>> _ = open(f, "w").write("she\\nher\\nwoman")
    >>> read_word_list(f)
    ['she', 'her', 'woman']
    """
    path = Path(path)
    lines = path.read_text(encoding="utf-8").splitlines()
    while lines and not lines[-1].strip():  # trailing empty lines only
        lines.pop()
    words: list[str] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(lines, start=1):
        word = line.strip()
        if not word:
            raise CensusError(f"{path.name}: line {number} is blank")
        if any(ch.isspace() for ch in word):
            raise CensusError(f"{path.name}: line {number} holds more than one word: {word!r}")
        if word in seen:
            raise CensusError(f"{path.name}: line {number} repeats {word!r} (first on line {seen[word]})")
        seen[word] = number
        words.append(word)
    if not words:
        raise CensusError(f"{path.name}: no words")
    return words


def read_occupation_shares(path: str | Path) -> pd.DataFrame:
    """Rows of a Garg et al. occupation-share CSV as a tidy frame.

    Returns
    -------
    DataFrame with columns year (int), occupation (str), total_weight (float, the census
    weight of the occupation that year), women, men (shares in [0, 1]); one row per line
    of the file, in file order.

    Raises
    ------
    CensusError
        Wrong header, a field that is not a number, a share outside [0, 1], shares that
        do not add up to 1 (within :data:`SUM_TOLERANCE`), a negative weight, or an
        occupation given twice for one year; the message names the file and line.
    """
    path = Path(path)
    with open(path, newline="", encoding="utf-8") as f:
        reader = csv.reader(f)
        header = next(reader, None)
        if header is None or tuple(h.strip() for h in header) != SHARE_COLUMNS:
            raise CensusError(f"{path.name}: header {header!r} is not {list(SHARE_COLUMNS)}")
        rows, seen = [], {}
        for line, fields in enumerate(reader, start=2):
            if not fields:
                continue
            if len(fields) != len(SHARE_COLUMNS):
                raise CensusError(f"{path.name}: line {line} has {len(fields)} fields, "
                                  f"expected {len(SHARE_COLUMNS)}")
            year_s, occupation, *numbers = (x.strip() for x in fields)
            if not occupation:
                raise CensusError(f"{path.name}: line {line} has no occupation")
            try:
                year = int(year_s)
                weight, women, men = (float(x) for x in numbers)
            except ValueError:
                raise CensusError(f"{path.name}: line {line} ({occupation}) has a field that is "
                                  f"not a number: {fields!r}") from None
            if not all(np.isfinite((weight, women, men))):
                raise CensusError(f"{path.name}: line {line} ({occupation}) has a non-finite number")
            if weight < 0:
                raise CensusError(f"{path.name}: line {line} ({occupation}) has a negative weight {weight}")
            for name, share in (("Female", women), ("Male", men)):
                if not 0.0 <= share <= 1.0:
                    raise CensusError(f"{path.name}: line {line} ({occupation}, {year}) has "
                                      f"{name} = {share}, outside [0, 1]")
            if abs(women + men - 1.0) > SUM_TOLERANCE:
                raise CensusError(f"{path.name}: line {line} ({occupation}, {year}): Female + Male = "
                                  f"{women + men:.6g}, not 1")
            key = (year, occupation)
            if key in seen:
                raise CensusError(f"{path.name}: line {line} repeats {occupation} in {year} "
                                  f"(first on line {seen[key]})")
            seen[key] = line
            rows.append((year, occupation, weight, women, men))
    if not rows:
        raise CensusError(f"{path.name}: no data rows")
    return pd.DataFrame(rows, columns=["year", "occupation", "total_weight", "women", "men"])


def occupation_words() -> list[str]:
    """Garg et al.'s occupation words (registered source ``garg2018-occupations``)."""
    return read_word_list(sources.fetch(OCCUPATIONS))


def gender_words() -> dict[str, list[str]]:
    """Garg et al.'s words for women and for men: ``{"women": [...], "men": [...]}``.

    The two files pair their words line by line (she/he, daughter/son, …); a different
    number of words in the two is an error.
    """
    women = read_word_list(sources.fetch(FEMALE_WORDS))
    men = read_word_list(sources.fetch(MALE_WORDS))
    if len(women) != len(men):
        raise CensusError(f"{FEMALE_WORDS} has {len(women)} words but {MALE_WORDS} has "
                          f"{len(men)}; the lists pair line by line")
    overlap = sorted(set(women) & set(men))
    if overlap:
        raise CensusError(f"words in both gender lists: {overlap}")
    return {"women": women, "men": men}


def occupation_shares(year: int | None = None) -> pd.DataFrame:
    """Share of women per occupation in census ``year`` (all years when None).

    Reads the registered ``garg2018-occupation-gender-shares``; see
    :func:`read_occupation_shares` for the columns and checks. An unknown year is an
    error listing the years the file has.
    """
    frame = read_occupation_shares(sources.fetch(SHARES))
    if year is None:
        return frame
    years = sorted(frame["year"].unique())
    if year not in years:
        raise CensusError(f"{SHARES}: no census year {year}; the file has {years}")
    return frame[frame["year"] == year].reset_index(drop=True)


def latest_year() -> int:
    """The most recent census year in the registered share file."""
    return int(occupation_shares()["year"].max())


def women_share_outcome(share, outcome: str = "share") -> np.ndarray:
    """The census outcome a bias score is correlated with, from the share of women p.

    * ``share``: p itself (Caliskan et al. 2017 correlate with the percentage of women);
    * ``logit``: log(p / (1 − p)), Garg et al.'s "logit proportion" (their code,
      ``utilities.occupation_func_female_logitprop``, drops p < 1e-5 or p > 1 − 1e-5;
      here such a p is an error, as its logit is not finite);
    * ``relative_percentage``: 100 (p − (1 − p)) = 100 (2p − 1), Garg et al.'s "women
      occupation % difference" of their Fig. 1 (a linear map of p: the same Pearson r).

    >>> women_share_outcome([0.5, 0.25], "logit").round(4).tolist()
    [0.0, -1.0986]
    >>> women_share_outcome([0.5, 0.25], "relative_percentage").tolist()
    [0.0, -50.0]
    """
    p = np.asarray(share, dtype=float)
    if outcome not in OUTCOMES:
        raise CensusError(f"outcome must be one of {OUTCOMES}, got {outcome!r}")
    if np.any((p < 0) | (p > 1)) or not np.isfinite(p).all():
        raise CensusError(f"shares must lie in [0, 1], got {p[(p < 0) | (p > 1) | ~np.isfinite(p)].tolist()}")
    if outcome == "share":
        return p
    if outcome == "relative_percentage":
        return 100.0 * (2.0 * p - 1.0)
    if np.any((p <= 0) | (p >= 1)):
        raise CensusError(f"logit needs 0 < p < 1, got {p[(p <= 0) | (p >= 1)].tolist()}")
    return np.log(p / (1.0 - p))
