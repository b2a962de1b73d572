import re
import sys
import tomllib

import pandas as pd
import pytest
from polybias import paths
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


def test_without_empath_the_error_names_the_package_make_env_installs(monkeypatch):
    installed = sys.modules.get("empath") or __import__("empath")
    semantics.empath_lexicon.cache_clear()
    monkeypatch.setitem(sys.modules, "empath", None)  # as if not installed
    try:
        with pytest.raises(RuntimeError, match=r"'empath' package is not installed \(pip install empath;"):
            semantics.empath_lexicon()
    finally:
        semantics.empath_lexicon.cache_clear()
    project = tomllib.loads((paths.project_root() / "pyproject.toml").read_text(encoding="utf-8"))
    assert any(re.match(r"empath\b", d) for d in project["project"]["dependencies"])
    monkeypatch.setitem(sys.modules, "empath", installed)
    assert len(semantics.empath_lexicon()) > 150
