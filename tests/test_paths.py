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
