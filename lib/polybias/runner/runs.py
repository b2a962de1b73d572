"""What a sweep runs: a sweep YAML expanded into its runs, each a notebook with checked
parameters.

:func:`read_sweep` reads and checks a sweep YAML (its format is described in
:mod:`polybias.runner.sweep`) into one :class:`Run` per grid point;
:func:`notebook_parameters` reads the parameters a notebook declares, which
:func:`check_parameters` and :func:`normalise_parameters` hold the given ones to. Both the
sweep and the single run (:mod:`polybias.runner.single_run`) build their runs here, and
the revision pins (:mod:`polybias.runner.pins`) read the runs they pin from here. A
:class:`Run` answers what the sweep runner asks of any run (its marker, whether it is done,
its state, its values checked, its execution under its lock); how a notebook is executed is
:mod:`polybias.runner.execution`.
"""

from __future__ import annotations

import ast
import functools
import itertools
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from polybias import paths
from polybias.data import sources
from polybias.files import canonical_json, params_hash, sha256_file
from polybias.runner import execution
from polybias.runner.locks import RunLock

TOP_KEYS = ("kind", "kernel", "runs")
"""Keys of a sweep YAML's top level (``kind``: ``notebooks``, the default; a sweep of
another kind is read by its own module, :data:`polybias.runner.sweep.KINDS`)."""
RUN_KEYS = ("notebook", "section", "grid", "parameters", "executed", "table_file",
            "resources", "sources", "optional_sources", "keep_records")
"""Keys of one entry of ``runs:`` (``keep_records: true``: the run's records are kept under
``paper/records/<section>/<key>/`` to be committed, :func:`polybias.runner.execution.keep_records`)."""
class SweepError(ValueError):
    """A sweep configuration (or how it is asked to run) is malformed."""


@dataclass(frozen=True)
class Run:
    """One notebook execution of a sweep."""

    notebook: str
    section: str
    key: str
    parameters: dict[str, Any]
    executed: str | None
    kernel: str
    resources: dict[str, float] = field(default_factory=dict)
    sources: tuple[str, ...] = ()
    optional_sources: tuple[str, ...] = ()
    """Data sources only a part of the notebook reads (its reproduction of published values),
    which checks them itself and runs the rest without them."""
    lacking: dict[str, str] = field(default_factory=dict)
    """The optional sources that cannot be had for this execution, each with its reason: set
    by the sweep, whose run then executes in part (see :mod:`polybias.runner.sweep`)."""
    keep_records: bool = False
    """Whether a finished run's records are kept beside the paper to be committed (runs of
    CPU-hours: real models on full data), so that a checkout holding them counts the run
    done (:meth:`kept_folder`)."""

    @property
    def params_hash(self) -> str:
        """Hash of the parameters and of the notebook's source: editing either reruns the run."""
        return self.hash_in(paths.project_root())

    def hash_in(self, root: str | Path) -> str:
        """:attr:`params_hash` with the notebook read from the project at ``root``: of its
        source and of the parameters that are not its defaults (:func:`hashed_parameters`)."""
        source = source_sha(Path(root) / self.notebook)
        return params_hash({"notebook": self.notebook, "source": source,
                            **hashed_parameters(self.notebook, self.parameters, root)})

    # What the sweep runner asks of any run, whatever its kind (see polybias.runner.sweep):
    # folder/marker, is_done, state, check, execute, failed_notebook.

    def folder(self, root: str | Path) -> Path:
        """The run's folder, ``results/<section>/<key>/`` under ``root``."""
        return Path(root) / "results" / self.section / self.key

    def marker(self, root: str | Path) -> Path:
        """The file whose writing says the run is done: its ``run.json``."""
        return self.folder(root) / execution.MARKER

    def kept_folder(self, root: str | Path) -> Path:
        """Where a ``keep_records`` run's records are kept to be committed:
        ``paper/records/<section>/<key>/`` under ``root``."""
        return Path(root) / execution.KEPT_ROOT / self.section / self.key

    def kept_hash(self) -> str:
        """Hash of the notebook's name and the parameters (not of its source): what kept
        records were computed with. A notebook edit leaves them valid (they are migrated,
        never silently recomputed); a changed parameter makes them stale, a default stated or
        left out (:func:`hashed_parameters`) does not."""
        return params_hash({"notebook": self.notebook, **hashed_parameters(self.notebook, self.parameters)})

    def is_done(self, root: str | Path) -> bool:
        """True when the run finished before with the same parameters and its files are
        intact, or, for a ``keep_records`` run, when its kept records are
        (:func:`polybias.runner.execution.kept_done`)."""
        return execution.is_done(self, Path(root), self.folder(root)) or (
            self.keep_records and execution.kept_done(self, Path(root)))

    def records_folder(self, root: str | Path) -> Path | None:
        """The folder whose records are this run's results: its run folder when it is done
        there, else its kept records; None when it is not done."""
        root = Path(root)
        if execution.is_done(self, root, self.folder(root)):
            return self.folder(root)
        if self.keep_records and execution.kept_done(self, root):
            return self.kept_folder(root)
        return None

    def state(self, root: str | Path) -> str:
        """``done``, ``running`` (its lock held elsewhere), ``failed``, ``part`` (it last ran in
        part) or ``todo``, as ``polybias sweep --list`` shows it."""
        folder = self.folder(root)
        if self.is_done(root):
            return "done"
        if RunLock(folder).held_elsewhere():
            return "running"
        if (folder / execution.FAILED).exists():
            return "failed"
        return "part" if execution.in_part(folder) else "todo"

    def check(self, root: str | Path) -> None:
        """Refuse values the notebook's declarations refuse, before a kernel starts
        (:func:`check_values`)."""
        check_values(self, root)

    def execute(self, root: str | Path, force: bool = False) -> dict[str, Any]:
        """Execute the run now, under its folder's lock, and return its outcome.

        Skipped when another process holds the lock (``reason``: running elsewhere) or,
        unless ``force``, when the run is done (checked under the lock: it may just have
        finished; Dask may re-execute a task whose worker died after the run had finished).

        Returns
        -------
        dict
            ``key``, ``status`` (``ok``, ``failed`` or ``skipped``) and: ``seconds`` (ok);
            ``error`` (the exception's type and first line) and ``notebook`` (failed);
            ``reason`` (skipped). See :func:`polybias.runner.execution.execute_locked`.
        """
        root = Path(root)
        folder = self.folder(root)
        return execution.under_lock(self.key, RunLock(folder), lambda: self.is_done(root),
                                    lambda: execution.execute_locked(self, root, folder), force)

    def failed_notebook(self, root: str | Path) -> Path | None:
        """The notebook an attempt that did not finish left (its outputs up to the error)."""
        partial = self.folder(root) / execution.PARTIAL
        return partial if partial.exists() else None


def source_sha(path: Path) -> str:
    """The sha256 of a notebook's source, what a run's hash holds of it (cached per file
    version)."""
    stat = path.stat()
    return _source_sha_cached(str(path), stat.st_mtime_ns, stat.st_size)


@functools.lru_cache(maxsize=256)
def _source_sha_cached(path: str, mtime_ns: int, size: int) -> str:
    return sha256_file(path)


def _slug(value: Any) -> str:
    text = value if isinstance(value, str) else canonical_json(value)
    return "".join(c if c.isalnum() or c in "-." else "_" for c in text)[:60]


def _resources(value: Any, where: str) -> dict[str, float]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(
            isinstance(k, str) and isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0
            for k, v in value.items()):
        raise SweepError(f"{where}: 'resources' must map resource names to positive numbers, "
                         f"e.g. {{GPU: 1}}; got {value!r}")
    return {k: float(v) for k, v in value.items()}


def _unknown_keys(found: Any, valid: tuple[str, ...], where: str) -> None:
    unknown = [str(k) for k in found if k not in valid]
    if unknown:
        raise SweepError(f"{where}: unknown key(s) {', '.join(map(repr, unknown))}; "
                         f"valid keys: {', '.join(valid)}")


def notebook_parameters(path: str | Path) -> dict[str, str]:
    """The parameters a notebook declares, with their annotated types.

    Parameters
    ----------
    path : str or Path
        A jupytext source (``.py`` percent format) or an ``.ipynb`` notebook.

    Returns
    -------
    dict
        Parameter name -> the type name of its annotation (``"str"``, ``"list"``, ...;
        ``"None"`` when not annotated), in the order of the notebook's first cell tagged
        ``parameters``, as papermill's parameter inspection reads it.

    Raises
    ------
    SweepError
        If the notebook has no cell tagged ``parameters``.
    """
    path = Path(path)
    stat = path.stat()
    return dict(_notebook_parameters(str(path), stat.st_mtime_ns, stat.st_size))


_PERCENT_CELL = "# %%"
_PARAMETERS_TAG = re.compile(r"""\btags\s*=\s*\[[^]]*["']parameters["']""")


def percent_parameters_cell(text: str) -> str | None:
    r"""The source of the first cell tagged ``parameters`` of a jupytext percent-format
    notebook (its lines up to the next ``# %%`` marker), or None when it has none.

    Read without jupytext (whose import, through nbformat's schema checks, takes seconds),
    so that a run's parameters are checked before anything heavy is loaded.

    >>> percent_parameters_cell('# %%\nimport x\n# %% tags=["parameters"]\nn: int = 1  # help\n\n# %%\nx')
    'n: int = 1  # help'
    >>> percent_parameters_cell("# %%\nx = 1\n") is None
    True
    """
    lines = text.splitlines()
    start = next((i for i, line in enumerate(lines)
                  if line.startswith(_PERCENT_CELL) and _PARAMETERS_TAG.search(line)), None)
    if start is None:
        return None
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith(_PERCENT_CELL)),
               len(lines))
    return "\n".join(lines[start + 1:end]).strip("\n")


def _annotated(source: str) -> list[tuple[str, str]]:
    """``(name, annotation)`` of each assignment of a parameters cell, as papermill's
    inspection reads them (an annotation's text without quotes; ``"None"`` when none).

    >>> _annotated('n: int = 1  # help\\nname: "str" = "x"\\nplain = [1]\\nt: dict[str, float] = {}')
    [('n', 'int'), ('name', 'str'), ('plain', 'None'), ('t', 'dict[str, float]')]
    """
    found = []
    for statement in ast.parse(source).body:
        if isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
            note = statement.annotation
            text = note.value if isinstance(note, ast.Constant) and isinstance(note.value, str) \
                else ast.unparse(note)
            found.append((statement.target.id, text))
        elif isinstance(statement, ast.Assign):
            found += [(t.id, "None") for t in statement.targets if isinstance(t, ast.Name)]
    return found


@functools.lru_cache(maxsize=64)
def _notebook_parameters(path: str, mtime_ns: int, size: int) -> tuple[tuple[str, str], ...]:
    if path.endswith(".py"):  # read directly: jupytext and papermill take seconds to import
        source = percent_parameters_cell(Path(path).read_text(encoding="utf-8"))
        if source is None:
            raise SweepError(f"notebook {path} has no cell tagged 'parameters', so it takes no "
                             "parameters (a sweep passes at least output_dir)")
        try:
            return tuple(_annotated(source))
        except SyntaxError as exc:
            raise SweepError(f"notebook {path}: its parameters cell is not Python: {exc.msg} "
                             f"(line {exc.lineno})") from None
    # lazy: jupytext and papermill take seconds to import, and only runs need them
    import jupytext  # lazy: notebook runs only
    from papermill.translators import PythonTranslator  # lazy: notebook runs only

    nb = jupytext.read(path)
    cell = next((c for c in nb.cells if "parameters" in c.get("metadata", {}).get("tags", [])), None)
    if cell is None:
        raise SweepError(f"notebook {path} has no cell tagged 'parameters', so it takes no "
                         "parameters (a sweep passes at least output_dir)")
    return tuple((p.name, str(p.inferred_type_name)) for p in PythonTranslator.inspect(cell))


def _is_list_type(type_name: str) -> bool:
    return type_name.split("[", 1)[0].strip().lower() in ("list", "typing.list")


def normalise_parameters(params: dict[str, Any], declared: dict[str, str]) -> dict[str, Any]:
    """Parameter values as the notebook expects them: a lone value of a ``list`` parameter
    becomes a one-item list.

    A string given where the notebook declares ``tests: list = []`` would otherwise be
    iterated letter by letter (``"weat1"`` -> ``w``, ``e``, ...).

    >>> normalise_parameters({"tests": "weat1", "seed": 0}, {"tests": "list", "seed": "int"})
    {'tests': ['weat1'], 'seed': 0}
    """
    return {name: [value] if _is_list_type(declared.get(name, "")) and not isinstance(value, list)
            and value is not None else value for name, value in params.items()}


def check_parameters(names: list[str], nb: str, declared: dict[str, str], where: str) -> None:
    """Refuse a parameter name that the notebook does not declare.

    Parameters
    ----------
    names : list of str
        The names given (a sweep entry's grid and fixed parameters, or the ``-p`` names of
        a single run), with ``output_dir`` and any other name the runner passes.
    nb : str
        The notebook, as the message names it.
    declared : dict
        :func:`notebook_parameters` of the notebook.
    where : str
        Where the names come from (``CONFIG: runs[i]``, ``notebook NAME``), the message's start.

    Raises
    ------
    SweepError
        Naming the unknown parameters and the ones the notebook declares.
    """
    unknown = [n for n in names if n not in declared]
    if unknown:
        raise SweepError(f"{where}: unknown parameter(s) {', '.join(map(repr, unknown))} of notebook "
                         f"{nb}; it declares: {', '.join(declared) or 'none'}")


def _sources(value: Any, where: str, registry: dict[str, Any], key: str = "sources") -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
        raise SweepError(f"{where}: '{key}' must be a list of data source names "
                         f"(data/sources.yaml), e.g. [crows-pairs]; got {value!r}")
    unknown = [v for v in value if v not in registry]
    if unknown:
        raise SweepError(f"{where}: unknown data source(s) {', '.join(map(repr, unknown))} in "
                         f"'{key}'; registered: {', '.join(sorted(registry))}")
    return tuple(dict.fromkeys(value))


def _data_registry(config: Path) -> dict[str, Any]:
    try:
        return sources.load_registry()
    except sources.DataError as exc:
        raise SweepError(f"{config}: 'sources' needs the data registry: {exc}") from exc


def read_sweep(config: str | Path) -> list[Run]:
    """Expand a sweep YAML into its runs, validated; nothing is executed, nothing is pinned.

    :func:`polybias.runner.sweep.load_sweep` gives the same runs with the pinned revisions
    of a pin file (:mod:`polybias.runner.pins`).

    Parameters
    ----------
    config : str or Path
        The sweep YAML (see :mod:`polybias.runner.sweep`).

    Returns
    -------
    list of Run
        One run per grid point of every entry, in file order.

    Raises
    ------
    SweepError
        On malformed YAML, an unknown key (top level or run entry), a missing notebook,
        a parameter the notebook does not declare, an unknown data source, malformed
        resources, or two runs that would share a folder. The message names the entry
        (``runs[i]``) and what is valid.
    """
    config = Path(config)
    raw = paths.read_yaml(config, SweepError, "sweep config")
    if not isinstance(raw, dict) or not isinstance(raw.get("runs"), list) or not raw["runs"]:
        raise SweepError(f"{config}: expected a mapping with a non-empty list 'runs:'")
    _unknown_keys(raw, TOP_KEYS, str(config))
    kernel = str(raw.get("kernel", "polybias"))
    root = paths.project_root()
    registry: dict[str, Any] | None = None
    runs: list[Run] = []
    for i, entry in enumerate(raw["runs"]):
        where = f"{config}: runs[{i}]"
        if not isinstance(entry, dict) or "notebook" not in entry:
            raise SweepError(f"{where} needs a 'notebook'")
        _unknown_keys(entry, RUN_KEYS, where)
        nb = str(entry["notebook"])
        if not (root / nb).is_file():
            raise SweepError(f"{where}: notebook {nb} not found")
        grid = entry.get("grid") or {}
        fixed = entry.get("parameters") or {}
        if not isinstance(grid, dict) or not all(isinstance(v, list) and v for v in grid.values()):
            raise SweepError(f"{where}: 'grid' must map parameter names to non-empty lists")
        if not isinstance(fixed, dict):
            raise SweepError(f"{where}: 'parameters' must be a mapping")
        clash = sorted(set(grid) & set(fixed))
        if clash:
            raise SweepError(f"{where}: {', '.join(clash)} both in grid and parameters")
        try:
            declared = notebook_parameters(root / nb)
        except SweepError as exc:
            raise SweepError(f"{where}: {exc}") from None
        given = [*map(str, grid), *map(str, fixed), "output_dir"]
        if "table_file" in entry:
            given.append("table_file")
        check_parameters(given, nb, declared, where)
        resources = _resources(entry.get("resources"), where)
        if (entry.get("sources") is not None or entry.get("optional_sources") is not None) \
                and registry is None:
            registry = _data_registry(config)
        needed = _sources(entry.get("sources"), where, registry or {})
        optional = _sources(entry.get("optional_sources"), where, registry or {}, "optional_sources")
        both = [s for s in optional if s in needed]
        if both:
            raise SweepError(f"{where}: data source(s) {', '.join(map(repr, both))} both in 'sources' "
                             "(the run needs them) and 'optional_sources' (a part of it reads them)")
        section = str(entry.get("section", Path(nb).stem))
        keep = entry.get("keep_records", False)
        if not isinstance(keep, bool):
            raise SweepError(f"{where}: keep_records must be true or false, got {keep!r}")
        names = list(grid)
        for values in itertools.product(*(grid[n] for n in names)):
            point = dict(zip(names, values, strict=True))
            params = normalise_parameters({**fixed, **point}, declared)
            if "table_file" in entry:
                params["table_file"] = _fill(entry["table_file"], point, where)
            key = "__".join([Path(nb).stem] + [f"{n}-{_slug(point[n])}" for n in names])
            executed = _fill(entry["executed"], point, where) if entry.get("executed") else None
            runs.append(Run(nb, section, key, params, executed, kernel, dict(resources), needed,
                            optional, keep_records=keep))
    dups = sorted(k for k, n in Counter(r.key for r in runs).items() if n > 1)
    if dups:
        raise SweepError(f"{config}: runs collide on the same folder: {', '.join(dups)}")
    return runs


def _fill(template: str, point: dict[str, Any], where: str) -> str:
    try:
        return str(template).format(**point)
    except KeyError as exc:
        raise SweepError(f"{where}: template {template!r} uses {exc} which is not in the grid") from exc




def hashed_parameters(notebook: str, parameters: dict[str, Any],
                      root: str | Path | None = None) -> dict[str, Any]:
    """The parameters a run's hash is taken over: those it states, less any equal to its
    notebook's declared default (:func:`polybias.studies.parameters.defaults`), so that a
    sweep config that states a default and one that leaves it out name the same run (the
    configs state only what differs from the defaults). A notebook outside the project's
    ``notebooks/``, or one without declarations, keeps them all.

    >>> hashed_parameters("notebooks/15_gest.py", {"model": "smollm2-135m-instruct-q4_1", "n_bootstrap": 1000})
    {'model': 'smollm2-135m-instruct-q4_1'}
    >>> hashed_parameters("nb/toy.py", {"n_bootstrap": 1000})
    {'n_bootstrap': 1000}
    """
    root = Path(root) if root else paths.project_root()
    path = (root / notebook).resolve()
    if path != (root / "notebooks" / f"{path.stem}.py").resolve():
        return dict(parameters)
    # lazy: the declarations read the project's registries (as check_values)
    from polybias.studies import parameters as declared

    if path.stem not in declared.NOTEBOOKS:
        return dict(parameters)
    defaults = declared.defaults(path.stem)
    return {k: v for k, v in parameters.items() if k not in defaults or defaults[k] != v}


def check_values(run: Run, root: str | Path | None = None) -> None:
    """Check a run's parameter values against its notebook's declarations before a kernel
    starts: the allowed values, ranges and joint checks of
    :data:`polybias.studies.parameters.NOTEBOOKS` (those the notebook itself runs right
    after its parameters cell), on the notebook's defaults overridden by the run's values.

    A notebook of ``notebooks/`` only (another file of the same name may declare other
    parameters). A check that needs a data source that cannot be had here is left to the
    run (a sweep skips such a run; a single run says so).

    Parameters
    ----------
    run : Run
        A sweep's run, or the one of ``polybias run``.
    root : str or Path, optional
        The project root; :func:`polybias.paths.project_root` by default.

    Raises
    ------
    SweepError
        One line: the notebook, the parameter and what it may be (or the lower layer's
        refusal, e.g. an unknown model).
    """
    root = Path(root) if root else paths.project_root()
    path = (root / run.notebook).resolve()
    name = path.stem
    if path != (root / "notebooks" / f"{name}.py").resolve():
        return
    # The declarations read the project's registries (measures, models, sources), which a
    # sweep of other notebooks need not have: imported only for the project's own notebooks.
    # lazy: polybias.studies.parameters and polybias.models, the project's declarations
    from polybias.models import ModelError
    from polybias.studies import parameters

    if name not in parameters.NOTEBOOKS:
        return
    values = {**parameters.defaults(name), **run.parameters}
    checked = {k: values[k] for k in parameters.NOTEBOOKS[name].checked if k in values}
    try:
        parameters.check_parameters(name, **checked)
    except sources.SourceUnreachable:
        return
    except (ValueError, ModelError, sources.DataError) as exc:
        first = next((ln.strip() for ln in str(exc).splitlines() if ln.strip()), type(exc).__name__)
        if not first.startswith(f"{name}:"):
            first = f"{name}: {first}"
        raise SweepError(first) from None
