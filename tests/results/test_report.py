import pandas as pd
import pytest
from polybias.results import report


def test_reported_caliskan_values_are_complete():
    rep = report.load_reported("caliskan2017_weat", model="w2v-gnews")
    assert list(rep.test) == [f"WEAT{i}" for i in range(1, 11)]
    assert rep.effect_size.tolist()[-1] == -0.08


def test_side_by_side_and_table():
    ours = pd.DataFrame({"test": ["a", "b"], "d": [1.234, 0.5]})
    theirs = pd.DataFrame({"test": ["a"], "d": [1.2]})
    out = report.side_by_side(ours, theirs, on="test", value="d")
    assert out.difference.iloc[0] == pytest.approx(0.034) and pd.isna(out.reported.iloc[1])
    text = report.markdown_table(out, digits=2)
    assert text.splitlines()[2] == "| a | 1.23 | 1.20 | 0.03 |"
    assert text.splitlines()[3] == "| b | 0.50 | — | — |"


def test_unknown_reported_file_and_column():
    with pytest.raises(FileNotFoundError):
        report.load_reported("nope")
    with pytest.raises(KeyError, match="colour"):
        report.load_reported("caliskan2017_weat", colour="red")
