"""Project paths and the one YAML reader."""

from __future__ import annotations

import pytest
import yaml
from polybias import paths


def test_parse_yaml_gives_what_safe_load_gives_on_every_project_file():
    root = paths.project_root()
    files = sorted(p for folder in ("data", "configs") for p in (root / folder).rglob("*.yaml"))
    assert len(files) > 20
    for path in files:
        text = path.read_text(encoding="utf-8")
        assert paths.parse_yaml(text) == yaml.safe_load(text), path


def test_parse_yaml_builds_plain_data_only():
    with pytest.raises(yaml.YAMLError, match="could not determine a constructor"):
        paths.parse_yaml("!!python/object/apply:os.system ['true']")


def test_malformed_yaml_is_named_with_the_line_at_fault(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("a: b: c\n")
    with pytest.raises(ValueError, match=r"bad.yaml: malformed YAML: mapping values are not allowed "
                                         r"here\n.*\n    a: b: c\n        \^"):
        paths.read_yaml(bad)


def test_a_root_not_found_says_to_set_polybias_root_and_setting_it_finds_the_root(tmp_path, monkeypatch):
    """Outside the project (package installed elsewhere, working directory elsewhere) the root
    is an error naming POLYBIAS_ROOT; set to the project's folder, the root is found."""
    project = paths.project_root()
    monkeypatch.delenv("POLYBIAS_ROOT", raising=False)
    monkeypatch.setattr(paths, "__file__", str(tmp_path / "site-packages" / "polybias" / "paths.py"))
    monkeypatch.chdir(tmp_path)
    with pytest.raises(FileNotFoundError, match="pyproject.toml and configs/") as err:
        paths.project_root()
    assert "set POLYBIAS_ROOT to that folder" in str(err.value)
    monkeypatch.setenv("POLYBIAS_ROOT", str(project))
    assert paths.project_root() == project.resolve()
    assert paths.configs_dir().is_dir()
