"""Metric cards (docs/measures/) are generated from the registry and committed up to date."""

from __future__ import annotations

import pytest
from polybias import cli, paths
from polybias.measures import MEASURES
from polybias.results import cards


def test_committed_cards_equal_the_generated_ones():
    folder = cards.cards_dir()
    want = cards.generated()
    stale = [n for n, text in want.items()
             if not (folder / n).is_file() or (folder / n).read_text(encoding="utf-8") != text]
    extra = sorted(p.name for p in folder.glob("*.md") if p.name not in want)
    assert not stale and not extra, f"run `polybias cards`: stale {stale}, stray {extra}"


def test_every_measure_has_a_card_with_every_section():
    for name in MEASURES:
        text = cards.card(name)
        for section in ("## Formula", "## Inputs", "## Options", "## Null hypothesis and uncertainty",
                        "## Reference code and compat options", "## Published values we check", "## Source"):
            assert section in text, (name, section)


def test_cards_name_compat_options_from_the_reference_compat_page():
    compat_page = (paths.project_root() / "docs" / "reference_compat.md").read_text(encoding="utf-8")
    for m in MEASURES.values():
        for c in m.compat:
            if c.proof:
                test = c.proof.split("::")[-1]
                assert test in compat_page, (m.name, test)


def test_readme_links_the_cards():
    readme = (paths.project_root() / "README.md").read_text(encoding="utf-8")
    assert "docs/measures/README.md" in readme


def test_check_mode_reports_a_stale_card(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(cards, "cards_dir", lambda: tmp_path)
    assert cards.main(check=True) == 1
    assert "out of date" in capsys.readouterr().err
    assert cards.main() == 0 and cards.main(check=True) == 0
    (tmp_path / "gone.md").write_text("x")
    assert cards.main(check=True) == 1


def test_measures_command_lists_the_registry_and_shows_a_card(capsys):
    from polybias.cli import main

    assert main(["measures"]) == 0
    listed = capsys.readouterr().out
    assert all(name in listed for name in MEASURES)
    assert main(["measures", "jsd-b"]) == 0
    assert capsys.readouterr().out.strip() == cards.card("jsd-b").strip()
    assert main(["measures", "jsd"]) == 1
    assert "unknown measure 'jsd'; registered: weat" in capsys.readouterr().err


def test_measures_help_names_every_registered_measure(capsys):
    from polybias.cli import main

    with pytest.raises(SystemExit):
        main(["measures", "--help"])
    shown = " ".join(capsys.readouterr().out.split())
    assert all(f" {name}," in shown or f" {name} " in shown for name in MEASURES)
    assert "wefat" in shown and "relative-norm-distance" in shown


def test_a_stale_card_advises_polybias_cards_and_that_command_brings_it_up_to_date(tmp_path, monkeypatch,
                                                                                  capsys):
    """``polybias cards --check`` names a stale card and the command to run; run as the
    advice says (through the command line), the check then passes."""
    monkeypatch.setattr(cards, "cards_dir", lambda: tmp_path)
    assert cli.main(["cards"]) == 0
    stale = tmp_path / f"{next(iter(MEASURES))}.md"
    stale.write_text("edited by hand\n")
    capsys.readouterr()
    assert cli.main(["cards", "--check"]) == 1
    err = capsys.readouterr().err
    assert f"docs/measures/{stale.name} is out of date (run polybias cards)" in err
    advice = err.split("(run ", 1)[1].split(")", 1)[0].split()
    assert advice == ["polybias", "cards"]
    assert cli.main(advice[1:]) == 0
    assert cli.main(["cards", "--check"]) == 0 and stale.read_text() != "edited by hand\n"
