"""The runner package's shape: no import cycle through it, and imports at the top of its
modules but for heavy optional dependencies loaded lazily with a stated reason."""

import ast
from pathlib import Path

import grimp
import pytest
from polybias import runner

RUNNER = Path(runner.__file__).parent
LAZY = {"jupytext", "nbformat", "papermill", "jupyter_client", "traitlets", "distributed",
        "dask_jobqueue", "torch"}
"""Heavy optional dependencies a runner module may import inside a function."""
PROJECT_DECLARATIONS = {"polybias.studies", "polybias.models", "polybias.results.table"}
"""The project's own notebook declarations and its results table, which read its
registries: the runner imports them only when one of the project's notebooks is about to
run or its records are read, so that a sweep of other notebooks (in a folder without
those registries) never needs them."""


def function_imports(source: str) -> list[tuple[str, int]]:
    """(imported module, line) of every import statement inside a function of ``source``."""
    found = set()
    for fn in ast.walk(ast.parse(source)):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for node in ast.walk(fn):
                if isinstance(node, ast.Import):
                    found |= {(alias.name, node.lineno) for alias in node.names}
                elif isinstance(node, ast.ImportFrom):
                    found.add((node.module or "", node.lineno))
    return sorted(found, key=lambda item: item[1])


def has_reason(lines: list[str], lineno: int) -> bool:
    """Whether the import at ``lineno`` (1-based) or its block of imports, or the line just
    above that block, says ``lazy`` (the one-line reason)."""
    first = lineno
    while first > 1 and lines[first - 2].strip().startswith(("import ", "from ")):
        first -= 1
    return any("lazy" in line for line in lines[max(0, first - 2):lineno])


def test_the_import_checks_see_a_stray_and_an_unexplained_import():
    source = "def f():\n    import json\n\ndef g():\n    # lazy: slow\n    import torch\n"
    assert function_imports(source) == [("json", 2), ("torch", 6)]
    lines = source.splitlines()
    assert not has_reason(lines, 2) and has_reason(lines, 6)


@pytest.mark.parametrize("path", sorted(RUNNER.glob("*.py")), ids=lambda p: p.name)
def test_imports_are_at_the_top_but_heavy_optional_ones(path):
    source = path.read_text(encoding="utf-8")
    lines = source.splitlines()
    for module, lineno in function_imports(source):
        assert module.split(".")[0] in LAZY or module in PROJECT_DECLARATIONS, \
            f"{path.name}:{lineno}: {module} imported in a function"
        assert has_reason(lines, lineno), f"{path.name}:{lineno}: lazy {module} without a reason"


def test_no_import_cycle_passes_through_the_runner():
    graph = grimp.build_graph("polybias")
    ours = sorted(m for m in graph.modules if m == "polybias.runner" or m.startswith("polybias.runner."))
    cycles = [(a, b) for a in ours for b in sorted(graph.modules)
              if a != b and graph.chain_exists(a, b) and graph.chain_exists(b, a)]
    assert cycles == []
