"""Every skip of the test suite says how to provide what it lacks (a make target, a package to
install, a variable to set, a file to restore): read from the tests' source, so that a new
``importorskip`` without a reason, or a reason that only says what is missing, fails here."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent
#: words of a reason that says how to provide the missing thing
HOW = ("make ", "pip install", "apt-get install", "set ", "git checkout", "run ", "put ",
       "CUDA_VISIBLE_DEVICES=")
#: names whose value is a library's own message with its remedy (e.g. a data source's
#: availability reason, "... cannot be had: set POLYBIAS_DATA_MIRROR ..."), checked by the
#: library's tests
DYNAMIC = ("reason", "availability", "first", "err", "message")


def _skip_calls(tree: ast.AST):
    """(call, reason node) of each importorskip, skip, mark.skip and mark.skipif call."""
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = ast.unparse(node.func)
        if name not in ("pytest.importorskip", "pytest.skip", "pytest.mark.skip", "pytest.mark.skipif"):
            continue
        reason = next((k.value for k in node.keywords if k.arg == "reason"), None)
        if reason is None and name == "pytest.skip" and node.args:
            reason = node.args[0]
        yield name, node, reason


def _says_how(reason: ast.AST, constants: dict[str, str]) -> bool:
    """Whether a reason's text (its literal parts, or the module constant it names) names a
    way to provide the missing thing, or carries a library's message that does."""
    if isinstance(reason, ast.Name):
        if reason.id in constants:
            return any(h in constants[reason.id] for h in HOW)
        return reason.id in DYNAMIC
    literal, dynamic = [], False
    for node in ast.walk(reason):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            literal.append(node.value)
        elif isinstance(node, ast.FormattedValue):
            if isinstance(node.value, ast.Name) and node.value.id in constants:
                literal.append(constants[node.value.id])
            elif any(d in ast.unparse(node.value) for d in DYNAMIC):
                dynamic = True
    return dynamic or any(h in "".join(literal) for h in HOW)


def _constants(tree: ast.Module) -> dict[str, str]:
    """Module-level NAME = "text" (or a parenthesised concatenation of literals)."""
    out = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            try:
                value = ast.literal_eval(node.value)
            except ValueError:
                continue
            if isinstance(value, str):
                out[node.targets[0].id] = value
    return out


def test_every_skip_says_how_to_provide_what_it_lacks():
    lacking = []
    files = sorted(TESTS.rglob("*.py"))
    assert len(files) > 50
    for path in files:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        constants = _constants(tree)
        for name, node, reason in _skip_calls(tree):
            where = f"{path.relative_to(TESTS.parent)}:{node.lineno}"
            if reason is None:
                lacking.append(f"{where}: {name} without a reason")
            elif not _says_how(reason, constants):
                lacking.append(f"{where}: {ast.unparse(reason)[:120]}")
    assert lacking == [], "skips that do not say how to provide what they lack:\n" + "\n".join(lacking)


@pytest.mark.parametrize("source, ok", [
    ('pytest.importorskip("x")', False),
    ('pytest.importorskip("x", reason="needs x")', False),
    ('pytest.importorskip("x", reason="needs x: pip install x")', True),
    ('pytest.mark.skipif(True, reason=f"no file at {PATH}")', False),
    ('pytest.mark.skipif(True, reason=f"no file at {PATH}: run make site")', True),
    ('pytest.skip(f"offline: {reason}")', True),
    ('pytest.skip(HOW_TO)', True),
    ('pytest.skip(WHAT)', False),
    ('pytest.skip(f"needs x: {HOW_TO}")', True),
])
def test_the_check_tells_a_reason_that_says_how_from_one_that_does_not(source, ok):
    tree = ast.parse(f'HOW_TO = "set X to a folder"\nWHAT = "no folder"\n{source}\n')
    (name, node, reason), = _skip_calls(tree)
    assert (reason is not None and _says_how(reason, _constants(tree))) is ok
