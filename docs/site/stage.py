"""Stage the site's Sphinx source tree from the committed repository files.

The pages live in several places (``paper/``, ``docs/``, ``figures/``); Sphinx wants
one source directory. This script copies them into ``build/site-src`` keeping the
repository layout, so that the relative links and images inside the pages still
resolve:

* ``paper/manuscript.md`` and ``paper/supplement.md`` are rebuilt from ``paper/main`` and
  ``paper/sections`` (``polybias.results.manuscript``),
  so the site always matches the committed sections, tables and figures; its title block
  names the commit it is built from;
* ``paper/executed/*.ipynb`` are copied (rendered with their stored outputs, never
  re-executed); a notebook's first heading gets its run label appended, since several
  runs of one notebook share a title;
* ``docs/*.md`` (peers included when present), ``docs/measures/*.md``,
  ``figures/``, ``paper/export/*.png`` and ``*.csv`` (the manuscript links the CSVs of its
  cross-model tables) and ``paper/references.bib``;
* the hand-written site pages of ``docs/site/pages`` at the root.

Run with the project environment: ``python docs/site/stage.py [OUT]``.
"""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SITE = Path(__file__).resolve().parent


_WRITTEN: set[Path] = set()


def _write(dst: Path, data: bytes) -> None:
    """Write only what changed, so that Sphinx rebuilds only the pages that changed."""
    _WRITTEN.add(dst)
    if dst.is_file() and dst.read_bytes() == data:
        return
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.write_bytes(data)


def _copy(src: Path, dst: Path) -> None:
    _write(dst, src.read_bytes())


#: The parameters of a run that its page does not list under "This run" (where it writes)
_NOT_SHOWN = ("output_dir", "table_file", "csv_file", "findings_file", "figure_prefix")


def this_run(parameters: dict) -> str:
    """The line under a notebook page's title saying which run the page shows: the
    parameters the sweep set (papermill's record of them), the notebook's text describing
    the notebook and its defaults.

    >>> print(this_run({"model": "smollm2", "max_pairs": 30, "output_dir": "x"}))
    **This run:** model = `smollm2`, max_pairs = `30`; every other parameter at its default (the cell below lists them all). The text describes the notebook and its defaults; the outputs are this run's.
    """
    shown = [f"{k} = `{v}`" for k, v in parameters.items() if k not in _NOT_SHOWN]
    if not shown:
        return ("**This run:** every parameter at its default (the cell below lists them all).")
    return (f"**This run:** {', '.join(shown)}; every other parameter at its default (the cell "
            "below lists them all). The text describes the notebook and its defaults; the "
            "outputs are this run's.")


def _notebook(src: Path, dst: Path) -> None:
    """Copy one executed notebook, labelling its title with the run (the name's tail) and
    saying under it which parameters the run set (:func:`this_run`)."""
    nb = json.loads(src.read_text(encoding="utf-8"))
    label = src.stem.split("_", 1)[1] if "_" in src.stem else src.stem
    parameters = nb.get("metadata", {}).get("papermill", {}).get("parameters", {})
    for cell in nb.get("cells", []):
        if cell.get("cell_type") != "markdown":
            continue
        text = "".join(cell["source"])
        match = re.search(r"^# (.+)$", text, flags=re.M)
        if match:
            title = f"# {match.group(1)} — `{label}`\n\n{this_run(parameters)}"
            cell["source"] = text[:match.start()] + title + text[match.end():]
            break
    _write(dst, json.dumps(nb, ensure_ascii=False, indent=1).encode("utf-8"))


def _stamp() -> str:
    """The commit the site is built from and its date (``commit 1a2b3c4, 2026-11-26``),
    printed in the manuscript's title block; '' outside a git checkout."""
    try:
        done = subprocess.run(["git", "-C", str(ROOT), "log", "-1", "--format=%h %cs"],
                              capture_output=True, text=True, check=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return ""
    commit, _, date = done.stdout.strip().partition(" ")
    return f"commit {commit}, {date}" if commit else ""


def stage(out: Path) -> Path:
    sys.path.insert(0, str(ROOT / "lib"))
    from polybias.results import manuscript

    out.mkdir(parents=True, exist_ok=True)
    for page in sorted((SITE / "pages").glob("*.md")):
        text = page.read_bytes()
        if page.name == "index.md" and not (ROOT / "docs" / "peers.md").is_file():
            text = text.replace(b"docs/peers\n", b"")  # written by `make peers`; optional
        _write(out / page.name, text)
    with tempfile.TemporaryDirectory() as tmp:
        for built in manuscript.build_paper(Path(tmp), stamp=_stamp()):  # main text, supplement
            _copy(built, out / "paper" / built.name)
    _copy(ROOT / "paper" / "references.bib", out / "paper" / "references.bib")
    for nb in sorted((ROOT / "paper" / "executed").glob("*.ipynb")):
        _notebook(nb, out / "paper" / "executed" / nb.name)
    for exported in sorted((ROOT / "paper" / "export").glob("*")):
        if exported.suffix in (".png", ".csv"):  # figures, and the tables linked for download
            _copy(exported, out / "paper" / "export" / exported.name)
    for fig in sorted((ROOT / "figures").glob("*")):
        if fig.is_file():
            _copy(fig, out / "figures" / fig.name)
    for doc in sorted((ROOT / "docs").glob("*.md")):
        _copy(doc, out / "docs" / doc.name)
    for card in sorted((ROOT / "docs" / "measures").glob("*.md")):
        _copy(card, out / "docs" / "measures" / card.name)
    for stale in [p for p in out.rglob("*") if p.is_file() and p not in _WRITTEN
                  and p.relative_to(out).parts[0] != "api"]:  # api/: autosummary's stubs
        stale.unlink()
    for stub in sorted((out / "api").glob("polybias*.rst")):  # of a module renamed or removed
        if not _is_module(stub.stem):
            stub.unlink()
    return out


def _is_module(name: str) -> bool:
    """Whether ``name`` is an importable module (its parents are imported to find it)."""
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:
        return False


if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "build" / "site-src"
    print(f"staged {stage(target)}")
