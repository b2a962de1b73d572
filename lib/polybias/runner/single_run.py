"""Run one notebook on one set of parameters (``polybias run NOTEBOOK -p NAME VALUE ...``).

The single-run counterpart of :mod:`polybias.runner.sweep`, through the same machinery: the
notebook's declared parameters are checked strictly (an unknown name, a value that does
not fit the parameter's annotated type, or one its declaration in
:mod:`polybias.studies.parameters` does not allow, is a
:class:`~polybias.runner.runs.SweepError` before a kernel starts), a lone value of a ``list`` parameter becomes a one-item list, and
the run executes with papermill under its folder's lock, writing ``executed.ipynb``, the
notebook's run records and a ``run.json`` marker, or ``failed.ipynb`` on an error.

Values are typed as papermill's ``-p`` types them: ``True``/``False`` (also lower case),
``None``/``null``, integers, floats, a YAML flow list or mapping (``[weat6, weat7]``,
``{a: 1}``); anything else is a string. A value is then converted to the parameter's
annotation where that is lossless (``-p revision 1234`` to ``"1234"`` for ``str``, an
integer for ``float``).

The folder is ``results/run/<notebook>/<hash>/`` (the hash of the notebook's source and
the parameters), or ``--output DIR``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import yaml

from polybias import paths
from polybias.files import params_hash
from polybias.runner.execution import execute_locked, headline, under_lock
from polybias.runner.locks import RunLock
from polybias.runner.runs import (
    Run,
    SweepError,
    check_parameters,
    check_values,
    normalise_parameters,
    notebook_parameters,
)

SECTION = "run"


def parse_value(text: str) -> Any:
    """A ``-p`` value typed as papermill types it (YAML flow lists and mappings too).

    >>> [parse_value(v) for v in ["3", "0.5", "True", "false", "None", "[a, 2]", "org/m", ""]]
    [3, 0.5, True, False, None, ['a', 2], 'org/m', '']
    """
    if text in ("True", "true"):
        return True
    if text in ("False", "false"):
        return False
    if text in ("None", "null"):
        return None
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            pass
    if text.strip().startswith(("[", "{")):
        try:
            return paths.parse_yaml(text)
        except yaml.YAMLError as exc:
            raise SweepError(f"cannot read {text!r} as a YAML list or mapping: "
                             f"{str(exc).splitlines()[0]}") from None
    return text


def coerce(name: str, value: Any, type_name: str) -> Any:
    """``value`` converted to the parameter's annotated type, or a :class:`SweepError`.

    >>> coerce("revision", 1234, "str"), coerce("alpha", 1, "float"), coerce("tests", "weat6", "list")
    ('1234', 1.0, 'weat6')
    >>> coerce("seed", "x", "int")
    Traceback (most recent call last):
    ...
    polybias.runner.runs.SweepError: parameter 'seed' is int, got 'x'
    """
    base = type_name.split("[", 1)[0].strip().lower()
    if value is None or base in ("none", "any", ""):
        return value
    ok = True
    if base == "str":
        if isinstance(value, (bool, int, float)):
            value = str(value)
        ok = isinstance(value, str)
    elif base == "bool":
        ok = isinstance(value, bool)
    elif base == "int":
        ok = isinstance(value, int) and not isinstance(value, bool)
    elif base == "float":
        if isinstance(value, int) and not isinstance(value, bool):
            value = float(value)
        ok = isinstance(value, float)
    elif base in ("dict", "typing.dict"):
        ok = isinstance(value, dict)
    if not ok:
        raise SweepError(f"parameter {name!r} is {type_name}, got {value!r}")
    return value


def resolve_notebook(notebook: str, root: Path) -> Path:
    """``05_crows_pairs`` (a notebook of ``notebooks/``) or a path to a ``.py``/``.ipynb``."""
    path = Path(notebook).expanduser()
    if path.is_file():
        return path.resolve()
    named = root / "notebooks" / (notebook if notebook.endswith(".py") else notebook + ".py")
    if "/" not in notebook and named.is_file():
        return named
    known = sorted(p.stem for p in (root / "notebooks").glob("[0-9][0-9]_*.py"))
    raise SweepError(f"no notebook {notebook!r}; give a path or one of: {', '.join(known)}")


def prepare(notebook: str, pairs: list[tuple[str, str]], output: str | None = None,
            kernel: str = "polybias", root: str | Path | None = None) -> tuple[Run, Path]:
    """The :class:`~polybias.runner.runs.Run` and its folder for one notebook and its ``-p``
    pairs, checked as a sweep checks its entries; nothing runs."""
    root = Path(root) if root else paths.project_root()
    path = resolve_notebook(notebook, root)
    declared = notebook_parameters(path)
    names = [n for n, _ in pairs]
    dup = sorted({n for n in names if names.count(n) > 1})
    if dup:
        raise SweepError(f"parameter(s) given twice: {', '.join(dup)}")
    if "output_dir" in names:
        raise SweepError("output_dir is set by the run (use --output DIR)")
    check_parameters(names + ["output_dir"], path.name, declared, f"notebook {path.name}")
    params = {n: coerce(n, parse_value(v), declared[n]) for n, v in pairs}
    params = normalise_parameters(params, declared)
    try:
        rel = path.relative_to(root).as_posix()
    except ValueError:
        rel = str(path)
    digest = params_hash({"notebook": rel, "source": Run(rel, "", "", {}, None, kernel)
                          .hash_in(root), **params})[:16]
    stem = path.stem
    run = Run(rel, f"{SECTION}/{stem}", digest, params, None, kernel)
    check_values(run, root)
    folder = Path(output).expanduser().resolve() if output else root / "results" / SECTION / stem / digest
    return run, folder


class _Parameter(argparse.Action):
    """``-p NAME VALUE`` or ``-p NAME=VALUE``, appended as a (name, value) pair."""

    def __call__(self, parser, namespace, values, option_string=None):
        if len(values) == 1 and "=" in values[0]:
            pair = tuple(values[0].split("=", 1))
        elif len(values) == 2 and "=" not in values[0]:
            pair = tuple(values)
        else:
            parser.error(f"{option_string} takes NAME VALUE or NAME=VALUE, got "
                         f"{' '.join(values)!r} (e.g. -p n_pairs 20 or -p n_pairs=20)")
        getattr(namespace, self.dest).append(pair)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="polybias run", description="Run one notebook on one set of parameters: the "
        "executed notebook and its run records go to results/run/<notebook>/<hash>/.")
    parser.add_argument("notebook", help="a notebook of notebooks/ (e.g. 05_crows_pairs) or a "
                        "path to a .py (jupytext) or .ipynb notebook")
    parser.add_argument("-p", "--parameter", nargs="+", action=_Parameter, default=[],
                        metavar="NAME VALUE", help="a parameter of the notebook, as NAME VALUE "
                        "or NAME=VALUE (repeatable)")
    parser.add_argument("--output", help="folder for the executed notebook and records")
    parser.add_argument("--kernel", default="polybias", help="Jupyter kernel (default: polybias)")
    args = parser.parse_args(argv)
    root = paths.project_root()
    try:
        run, folder = prepare(args.notebook, list(args.parameter), args.output,
                              args.kernel, root)
    except (SweepError, OSError) as exc:
        print(f"polybias run: {str(exc).splitlines()[0]}", file=sys.stderr)
        return 2
    inside = folder.resolve().is_relative_to(root.resolve())
    # records go to the run's folder (an absolute path when outside the project); a single
    # run always runs (force), under the runner's one lock protocol
    outcome = under_lock(run.key, RunLock(folder), lambda: False,
                         lambda: execute_locked(run, root, folder, None if inside else str(folder.resolve())),
                         force=True)
    if outcome["status"] == "skipped":
        print(f"polybias run: {folder} is {outcome['reason']}", file=sys.stderr)
        return 1
    if outcome["status"] != "ok":
        where = f" (see {folder / 'failed.ipynb'})" if outcome.get("notebook") else ""
        print(f"polybias run: {run.notebook} failed: {outcome['error']}{where}", file=sys.stderr)
        return 1
    skipped = outcome.get("skipped_parts", {})
    state = f"ran in part ({len(skipped)} part{'s' * (len(skipped) != 1)} skipped)" if skipped else "ok"
    print(f"{run.notebook}: {state} in {outcome['seconds']:.1f} s -> {folder}")
    for part, why in sorted(skipped.items()):
        print(f"  skipped: {part}: {why}")
    print(headline(folder))
    return 0
