import pandas as pd
import pytest
from polybias.data import semantics


def test_empath_lexicon_is_installed_and_sensible():
    lex = semantics.empath_lexicon()
    assert len(lex) > 150
    assert "crime" in semantics.word_categories("murder")
    assert "family" in semantics.word_categories("Mothers")


def test_category_shares_by_hand():
    lex = {"kin": frozenset({"mother", "son"}), "crime": frozenset({"theft"})}
    words = pd.DataFrame({"word": ["mother", "son", "sons.", "theft", "table"], "b": [-0.1, 0.0, 0.2, -0.3, -1.0]})
    t = semantics.category_shares(words, lex).set_index("category")
    assert t.loc["kin"].tolist() == pytest.approx([3, 100 / 3, 100 / 3, 100 / 3])
    assert t.loc["crime", "raise"] == 100.0 and list(t.index) == ["crime", "kin"]
    assert list(semantics.category_shares(words, lex, min_count=2).category) == ["kin"]
    with pytest.raises(ValueError, match="'word' and 'b'"):
        semantics.category_shares(pd.DataFrame({"w": []}), lex)
