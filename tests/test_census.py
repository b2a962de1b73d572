"""Census shares and Garg et al.'s word lists (``polybias.census``): whole files, bad rows."""

from __future__ import annotations

import re

import numpy as np
import pytest
from polybias import census, data

GOOD_CSV = (
    "Census year,Occupation,Total Weight,Female,Male\n"
    "2015,nurse,100.0,0.9,0.1\n"
    "2015,carpenter,50.0,0.02,0.98\n"
    "2010,nurse,90.0,0.92,0.08\n"
)


def _write(tmp_path, text, name="shares.csv"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


# ---------------------------------------------------------------- word lists


def test_word_list_keeps_every_line_in_order(tmp_path):
    path = _write(tmp_path, "she\n  daughter \nhers\n\n", "w.txt")
    assert census.read_word_list(path) == ["she", "daughter", "hers"]


@pytest.mark.parametrize("text, message", [
    ("she\n\nher\n", "w.txt: line 2 is blank"),
    ("she\nher\nshe\n", "w.txt: line 3 repeats 'she' (first on line 1)"),
    ("she\nbank teller\n", "w.txt: line 2 holds more than one word: 'bank teller'"),
    ("\n\n", "w.txt: no words"),
])
def test_word_list_bad_lines_are_named(tmp_path, text, message):
    with pytest.raises(census.CensusError, match=re.escape(message)):
        census.read_word_list(_write(tmp_path, text, "w.txt"))


# ---------------------------------------------------------------- share table


def test_shares_are_read_whole(tmp_path):
    frame = census.read_occupation_shares(_write(tmp_path, GOOD_CSV))
    assert len(frame) == 3
    assert frame.columns.tolist() == ["year", "occupation", "total_weight", "women", "men"]
    assert frame.iloc[1].to_dict() == {"year": 2015, "occupation": "carpenter", "total_weight": 50.0,
                                       "women": 0.02, "men": 0.98}


@pytest.mark.parametrize("row, message", [
    ("2015,nurse,100.0,0.9,0.1\n", r"line 5 repeats nurse in 2015 \(first on line 2\)"),
    ("2015,baker,10.0,zero,1.0\n", r"line 5 \(baker\) has a field that is not a number"),
    ("2015,baker,10.0,1.2,-0.2\n", r"line 5 \(baker, 2015\) has Female = 1.2, outside \[0, 1\]"),
    ("2015,baker,10.0,0.5,0.4\n", r"line 5 \(baker, 2015\): Female \+ Male = 0.9, not 1"),
    ("2015,baker,10.0,0.5\n", "line 5 has 4 fields, expected 5"),
    ("2015,,10.0,0.5,0.5\n", "line 5 has no occupation"),
    ("2015,baker,-1,0.5,0.5\n", r"line 5 \(baker\) has a negative weight"),
    ("2015,baker,10.0,nan,0.5\n", r"line 5 \(baker\) has a non-finite number"),
])
def test_bad_share_rows_are_named(tmp_path, row, message):
    with pytest.raises(census.CensusError, match="shares.csv: " + message):
        census.read_occupation_shares(_write(tmp_path, GOOD_CSV + row))


def test_bad_header_and_empty_file(tmp_path):
    with pytest.raises(census.CensusError, match="header"):
        census.read_occupation_shares(_write(tmp_path, GOOD_CSV.replace("Female", "Women")))
    with pytest.raises(census.CensusError, match="no data rows"):
        census.read_occupation_shares(_write(tmp_path, GOOD_CSV.splitlines()[0] + "\n"))


def test_outcomes_of_the_share():
    p = np.array([0.1, 0.5, 0.8])
    assert census.women_share_outcome(p).tolist() == p.tolist()
    np.testing.assert_allclose(census.women_share_outcome(p, "logit"), [np.log(1 / 9), 0.0, np.log(4)])
    np.testing.assert_allclose(census.women_share_outcome(p, "relative_percentage"), [-80.0, 0.0, 60.0])
    with pytest.raises(census.CensusError, match="logit needs 0 < p < 1"):
        census.women_share_outcome([0.0, 0.5], "logit")
    with pytest.raises(census.CensusError, match=r"shares must lie in \[0, 1\]"):
        census.women_share_outcome([1.5])
    with pytest.raises(census.CensusError, match="outcome must be one of"):
        census.women_share_outcome([0.5], "odds")


# ---------------------------------------------------------------- the registered files


def _nonblank_lines(name: str) -> list[str]:
    return [ln.strip() for ln in data.fetch(name).read_text(encoding="utf-8").splitlines() if ln.strip()]


def test_registered_files_are_loaded_whole(mirror):
    occupations = census.occupation_words()
    assert occupations == _nonblank_lines(census.OCCUPATIONS)
    assert len(occupations) == 76
    words = census.gender_words()
    assert words["women"] == _nonblank_lines(census.FEMALE_WORDS)
    assert words["men"] == _nonblank_lines(census.MALE_WORDS)
    assert (len(words["women"]), len(words["men"])) == (20, 20)
    assert (words["women"][0], words["men"][0]) == ("she", "he")  # paired line by line
    shares = census.occupation_shares()
    rows = len(data.fetch(census.SHARES).read_text(encoding="utf-8").splitlines()) - 1
    assert len(shares) == rows == 3280
    assert shares["year"].nunique() == 30 and census.latest_year() == 2015
    one = census.occupation_shares(2015)
    assert len(one) == 103 and set(one["year"]) == {2015}
    with pytest.raises(census.CensusError, match="no census year 2016"):
        census.occupation_shares(2016)
