"""Docs that cannot go stale: every dotted ``polybias.`` name written in the README, the
docs, the paper's prose, the notebooks, the registries under ``data/`` and the library's
own docstrings and comments must resolve to a module or an attribute that exists."""

from __future__ import annotations

import dataclasses
import importlib
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOTTED = re.compile(r"(?<![\w/.-])polybias(?:\.[A-Za-z_]\w*)+")
WRITTEN = ["README.md", "docs/**/*.md", "paper/sections/*.md", "notebooks/*.py", "data/**/*.yaml",
           "lib/**/*.py", "benchmarks/*.py", "configs/**/*.yaml"]


def resolves(name: str) -> bool:
    """Whether ``name`` is an importable module, or an attribute reached from the longest
    importable module prefix (submodules imported on the way)."""
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ModuleNotFoundError:
            continue
        for depth, attr in enumerate(parts[cut:], start=cut + 1):
            if hasattr(obj, attr):
                obj = getattr(obj, attr)
                continue
            if dataclasses.is_dataclass(obj) and attr in {f.name for f in dataclasses.fields(obj)}:
                return depth == len(parts)  # the last name is a field with a default factory: no class attribute
            try:
                obj = importlib.import_module(f"{obj.__name__}.{attr}")
            except (ModuleNotFoundError, AttributeError):
                return False
        return True
    return False


def written_names() -> dict[str, set[str]]:
    found: dict[str, set[str]] = {}
    for pattern in WRITTEN:
        for path in sorted(ROOT.glob(pattern)):
            for match in DOTTED.finditer(path.read_text(encoding="utf-8")):
                found.setdefault(match.group(0), set()).add(str(path.relative_to(ROOT)))
    return found


def test_every_dotted_name_resolves():
    names = written_names()
    assert len(names) > 50, "the scan found almost no dotted names: the patterns are wrong"
    stale = {name: sorted(files) for name, files in names.items() if not resolves(name)}
    assert not stale, "dotted names that no longer exist (name: files):\n" + "\n".join(
        f"  {name}: {', '.join(files)}" for name, files in sorted(stale.items()))


@pytest.mark.parametrize("name, exists", [
    ("polybias.metrics.weat", True),
    ("polybias.studies.weat.weat_on_embedding", True),
    ("polybias.metrics.weat.weat_test", False),
    ("polybias.engines.static.StaticEmbeddings", True),
    ("polybias.models.StaticEmbeddings", False),
    ("polybias.embeddings.sentence_vectors", False),
    ("polybias.metrics.weat.no_such_function", False),
])
def test_resolution_tells_stale_from_live(name, exists):
    assert resolves(name) is exists
