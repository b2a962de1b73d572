"""Where things live: the project root, its data, configs, results and the download cache.

Every location can be overridden by an environment variable so that an installed
package (not a checkout) works too:

``POLYBIAS_ROOT``
    project root (folder holding ``data/`` and ``configs/``)
``POLYBIAS_CACHE``
    download and conversion cache (default ``<root>/.cache``)
``POLYBIAS_DATA_MIRROR``
    a local mirror of external files, laid out ``<mirror>/<owner>+<repo>/<path>``
    (read by :mod:`polybias.data.sources`)
``POLYBIAS_EMBEDDED``
    the files the environment's set-up put in place (``make env``: the pinned wheels of
    ``data/embedded.txt``); default ``<environment>/share/polybias/embedded``
``POLYBIAS_OFFLINE``
    ``1``: never download; a source with no local copy cannot be had (as with no network)
``POLYBIAS_OUTPUT_ROOT``
    where notebooks write records, tables and figures (default: the project root);
    ``make test`` points it at a scratch folder so that re-executing the checked
    notebooks never writes into the checkout
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import yaml

_MARKERS = ("pyproject.toml", "configs")


def project_root() -> Path:
    """Return the project root.

    ``POLYBIAS_ROOT`` wins; otherwise the first parent of this file, then of the
    working directory, that holds both ``pyproject.toml`` and ``configs/``.
    """
    env = os.environ.get("POLYBIAS_ROOT")
    if env:
        return Path(env).resolve()
    for start in (Path(__file__).resolve(), Path.cwd().resolve()):
        for folder in (start, *start.parents):
            if all((folder / m).exists() for m in _MARKERS):
                return folder
    raise FileNotFoundError(
        "cannot find the polybias project root (a folder with pyproject.toml and configs/) "
        "above the package or the working directory; set POLYBIAS_ROOT to that folder"
    )


def data_dir() -> Path:
    """Project data: word lists, templates, ``sources.yaml``."""
    return project_root() / "data"


def configs_dir() -> Path:
    """Model registry and sweep grids."""
    return project_root() / "configs"


def results_dir() -> Path:
    """Run records and executed notebooks of sweeps."""
    return project_root() / "results"


def paper_dir() -> Path:
    """Manuscript, reported values, generated tables and executed notebooks checked by nbval."""
    return project_root() / "paper"


def figures_dir() -> Path:
    """Generated figures."""
    return project_root() / "figures"


#: Environment variable naming the folder figures are saved in instead of ``figures/`` under
#: :func:`output_root`: set by the runner for a run whose outputs stay in its run folder.
FIGURES_ENV = "POLYBIAS_FIGURES_DIR"


#: Environment variable naming the file in which a run notes the parts of its notebook that
#: were skipped (set by the runner; written by :func:`note_skipped_part`, read back by
#: :func:`skipped_parts`): a run that skipped a part is recorded as ``partial``, not ``ok``.
SKIPPED_PARTS_ENV = "POLYBIAS_SKIPPED_PARTS"


def note_skipped_part(part: str, reason: str) -> None:
    """Note, for the runner, that the ``part`` of the running notebook was skipped and why
    (one JSON line appended to ``$POLYBIAS_SKIPPED_PARTS``); nothing when no runner asked.

    >>> import os, tempfile; f = os.path.join(tempfile.mkdtemp(), "skipped.jsonl")
    >>> os.environ["POLYBIAS_SKIPPED_PARTS"] = f
    >>> note_skipped_part("the reproduction", "its file cannot be had")
    >>> skipped_parts(f)
    {'the reproduction': 'its file cannot be had'}
    >>> del os.environ["POLYBIAS_SKIPPED_PARTS"]
    """
    path = os.environ.get(SKIPPED_PARTS_ENV)
    if not path:
        return
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(json.dumps({"part": part, "reason": reason}, sort_keys=True) + "\n")


def skipped_parts(path: str | Path) -> dict[str, str]:
    """The parts noted by :func:`note_skipped_part` in ``path`` (part -> reason); empty when
    the file is absent."""
    try:
        lines = Path(path).read_text(encoding="utf-8").splitlines()
    except FileNotFoundError:
        return {}
    notes = [json.loads(line) for line in lines if line.strip()]
    return {n["part"]: n["reason"] for n in notes}


def figure_path(file: str | Path) -> Path:
    """Where a figure named ``file`` is saved: under ``$POLYBIAS_FIGURES_DIR`` when set (a run
    that keeps its outputs in its run folder), else ``figures/`` under :func:`output_root`.

    >>> import os; os.environ["POLYBIAS_FIGURES_DIR"] = "/tmp/run/figures"
    >>> figure_path("a.png").as_posix()
    '/tmp/run/figures/a.png'
    >>> del os.environ["POLYBIAS_FIGURES_DIR"]
    """
    folder = os.environ.get(FIGURES_ENV)
    return Path(folder) / file if folder else output_path(Path("figures") / file)


def output_root() -> Path:
    """Root of everything notebooks write (records, tables, figures): ``POLYBIAS_OUTPUT_ROOT``
    when set, else the project root."""
    env = os.environ.get("POLYBIAS_OUTPUT_ROOT")
    return Path(env).resolve() if env else project_root()


def output_path(relpath: str | Path) -> Path:
    """Where to write ``relpath`` (e.g. ``results/weat/run1``, ``paper/tables/weat.md``):
    under :func:`output_root`; an absolute path is kept as it is.

    >>> import os; os.environ["POLYBIAS_OUTPUT_ROOT"] = "/tmp/scratch"
    >>> output_path("paper/tables/t.md").as_posix()
    '/tmp/scratch/paper/tables/t.md'
    >>> output_path("/data/out.md").as_posix()
    '/data/out.md'
    >>> del os.environ["POLYBIAS_OUTPUT_ROOT"]
    """
    path = Path(relpath)
    return path if path.is_absolute() else output_root() / path


def cache_dir() -> Path:
    """Download and conversion cache (created on demand)."""
    env = os.environ.get("POLYBIAS_CACHE")
    path = Path(env) if env else project_root() / ".cache"
    path.mkdir(parents=True, exist_ok=True)
    return path


def embedded_dir() -> Path:
    """Files the environment's set-up put in place (``make env`` downloads the pinned wheels of
    ``data/embedded.txt`` there): ``POLYBIAS_EMBEDDED``, else ``share/polybias/embedded`` of
    the running Python's environment (``sys.prefix``: the ``.venv`` of ``make env``)."""
    env = os.environ.get("POLYBIAS_EMBEDDED")
    return Path(env) if env else Path(sys.prefix) / "share" / "polybias" / "embedded"


def downloads_off() -> bool:
    """Whether downloads are off (``POLYBIAS_OFFLINE=1``): only local copies count.

    >>> import os; os.environ["POLYBIAS_OFFLINE"] = "1"; downloads_off()
    True
    >>> del os.environ["POLYBIAS_OFFLINE"]; downloads_off()
    False
    """
    return os.environ.get("POLYBIAS_OFFLINE", "").strip().lower() in ("1", "true", "yes")


def mirror_dir() -> Path | None:
    """Local mirror of external files named by ``POLYBIAS_DATA_MIRROR``, or None."""
    env = os.environ.get("POLYBIAS_DATA_MIRROR")
    return Path(env) if env else None


#: libyaml's safe loader when PyYAML was built with it (about ten times faster on the
#: project's registries and sweeps, same data), else PyYAML's own; both build plain data only.
_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def parse_yaml(text: str) -> Any:
    """``yaml.safe_load`` of ``text``, through libyaml's safe loader when there is one.

    Malformed YAML raises PyYAML's own :class:`yaml.YAMLError`, which quotes the line at
    fault (libyaml's does not): the text is parsed again by the pure-Python loader then.

    >>> parse_yaml("a: [1, 2]")
    {'a': [1, 2]}
    >>> try:
    ...     parse_yaml("a: [1")
    ... except yaml.YAMLError as exc:
    ...     print(str(exc).splitlines()[2].strip())  # the line at fault, quoted
    a: [1
    """
    try:
        return yaml.load(text, Loader=_SAFE_LOADER)  # a safe loader: plain data only
    except yaml.YAMLError:
        return yaml.safe_load(text)


def read_yaml(path: str | Path, error: type[Exception] = ValueError, what: str = "file") -> Any:
    """:func:`parse_yaml` of a file; a missing file or malformed YAML raises ``error`` naming it."""
    path = Path(path)
    try:
        return parse_yaml(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise error(f"{what} not found: {path}") from exc
    except yaml.YAMLError as exc:
        raise error(f"{path}: malformed YAML: {exc}") from exc
