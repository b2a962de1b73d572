"""``polybias profile MODEL``: every measure that applies to a model's kind, in every language
with data, as one resumable sweep, then the model's profile.

A causal LM is scored with CrowS-Pairs (all pairs, and seed 001's gender and
sexual-orientation pairs with the JSD attributions), every minimal-pair dataset with aligned
languages (the revised, Steinborn, Dutch, Kaneko and IndiBias pairs), StereoSet
intrasentence (en, de, fr, es, tr), GEST's templates and EuroGEST (29 languages, one run
each); a masked LM with the same, scored the masked way; an encoder with SEAT (English); a
static table with WEAT (English). ``--languages`` narrows the languages (a dataset is kept
when at least two of its languages remain, one for a one-language dataset), ``--dry-run``
lists the runs and exits. The sweep is written to ``results/profile/<model>/sweep.yaml`` and
run by :func:`polybias.runner.sweep.run_sweep` (locally, ``--jobs``; resumable: a second
call runs only what is missing). Each entry's data sources are those the default sweep
declares for the same notebook, so a run whose files cannot be had is skipped with its
reason.

The profile is notebook 18 (:mod:`polybias.studies.model_profile`), run last on the
records of the profile's runs and of the default sweep's runs of the same model (those the
default sweep has done, or kept under ``paper/records/``, are not run again): each measure's
overall number per dataset and language, with interval and n, beside the validity verdict
of its measure in that language and the released real checkpoints under the same measure,
with a figure. Its table is printed and written to ``results/profile/<model>/profile.md``;
its executed notebook and figure stay in its run folder under ``results/profile/<model>/``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import yaml

from polybias import models, paths
from polybias.data.crowspairs import DATASETS
from polybias.data.eurogest import NEUTRAL_LANGUAGES
from polybias.files import write_text_atomic
from polybias.runner import sweep
from polybias.runner.runs import SweepError, read_sweep

STEREOSET_LANGUAGES = ("en", "de", "fr", "es", "tr")
PAIR_DATASETS = ("crows-pairs-revised", "crows-pairs-steinborn", "crows-pairs-dutch", "kaneko2022",
                 "indibias")
KINDS = ("causal", "mlm", "encoder", "static")
COMMON = {"n_bootstrap": 1000, "seed": 0}


def _keep(languages: list[str], chosen: list[str] | None, least: int) -> list[str] | None:
    """``languages`` narrowed to ``chosen``; None when fewer than ``least`` remain."""
    kept = [lang for lang in languages if chosen is None or lang in chosen]
    return kept if len(kept) >= least else None


def profile_entries(model: str, kind: str, languages: list[str] | None = None) -> list[dict[str, Any]]:
    """The sweep entries of a profile: one per notebook and grid (see the module docstring).

    >>> [e["notebook"] for e in profile_entries("m", "causal", ["en"])]  # no dataset pairs en with itself
    ['notebooks/05_crows_pairs.py', 'notebooks/14_stereoset.py', 'notebooks/15_gest.py']
    >>> profile_entries("m", "static")[0]["grid"]
    {'model': ['m'], 'language': ['en']}
    """
    if kind not in KINDS:
        raise SweepError(f"model {model!r} is of kind {kind!r}; a profile needs one of {', '.join(KINDS)}")
    english = languages is None or "en" in languages
    if kind == "static":
        return [{"notebook": "notebooks/01_weat.py", "section": "weat",
                 "grid": {"model": [model], "language": ["en"]},
                 "parameters": {"n_permutations": 10000, "seed": 0, "reported": ""}}] if english else []
    if kind == "encoder":
        return [{"notebook": "notebooks/02_seat.py", "section": "seat",
                 "grid": {"model": [model], "language": ["en"]},
                 "parameters": {"n_permutations": 10000, "seed": 0}}] if english else []
    method = "causal" if kind == "causal" else "nangia"
    entries = []
    if english:
        entries.append({"notebook": "notebooks/05_crows_pairs.py", "section": "crows",
                        "grid": {"model": [model], "dataset": ["crows-pairs", "crows-pairs-gamboa"]},
                        "parameters": {"language": "en", "method": method, "reproduce": False,
                                       "language_override": True, **COMMON}})
    for dataset in PAIR_DATASETS:
        kept = _keep(list(DATASETS[dataset]), languages, 2)
        if kept is not None:
            entries.append({"notebook": "notebooks/12_crows_languages.py", "section": "crows-languages",
                            "grid": {"model": [model], "dataset": [dataset], "method": [method]},
                            "parameters": {"languages": kept, "language_override": True, **COMMON}})
    stereoset = _keep(list(STEREOSET_LANGUAGES), languages, 1)
    if stereoset:
        entries.append({"notebook": "notebooks/14_stereoset.py", "section": "stereoset",
                        "grid": {"model": [model], "language": stereoset},
                        "parameters": {"tasks": ["intrasentence"], "language_override": True, **COMMON}})
    if english:
        entries.append({"notebook": "notebooks/15_gest.py", "section": "gest",
                        "grid": {"model": [model]}, "parameters": dict(COMMON)})
    eurogest = _keep(list(NEUTRAL_LANGUAGES), languages, 1)
    if eurogest:
        entries.append({"notebook": "notebooks/16_eurogest.py", "section": "eurogest",
                        "grid": {"model": [model], "languages": eurogest},
                        "parameters": {"per_stereotype": 0, "too_long": "skip", "min_sentences": 10,
                                       "language_override": True, **COMMON}})
    return entries


def _declared_sources(default: Path) -> dict[str, list[str]]:
    """Per notebook, the union of the data sources the default sweep declares for it."""
    raw = yaml.safe_load(default.read_text(encoding="utf-8"))
    out: dict[str, list[str]] = {}
    for entry in raw["runs"]:
        out.setdefault(entry["notebook"], [])
        for source in entry.get("sources") or []:
            if source not in out[entry["notebook"]]:
                out[entry["notebook"]].append(source)
    return out


def write_profile_sweep(model: str, kind: str, languages: list[str] | None, folder: Path,
                        root: Path) -> Path:
    """Write the profile's sweep YAML into ``folder`` (each entry with the default sweep's
    data sources for its notebook; its runs' folders under ``results/profile/<model>/``, apart
    from any other sweep's) and return its path; checked by reading it back."""
    entries = profile_entries(model, kind, languages)
    for entry in entries:
        entry["section"] = f"profile/{folder.name}/{entry['section']}"
    if not entries:
        raise SweepError(f"no measure of a {kind} model has data in {', '.join(languages or [])}")
    declared = _declared_sources(root / "configs" / "sweeps" / "default.yaml")
    for entry in entries:
        if declared.get(entry["notebook"]):
            entry["sources"] = declared[entry["notebook"]]
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "sweep.yaml"
    text = ("# polybias profile: every measure that applies to the model, written by "
            "polybias.runner.profile\n" + yaml.safe_dump({"kernel": "polybias", "runs": entries},
                                                         sort_keys=False, width=100))
    write_text_atomic(path, text)
    read_sweep(path)  # every notebook, parameter and source checked before anything runs
    return path


def done_elsewhere(config: Path, root: Path) -> dict[str, Path]:
    """The runs of a profile sweep that the default sweep has done under the same key (its
    run folders, or the records kept under ``paper/records/``): key -> records folder. The
    profile reads those and does not run them again."""
    keys = {run.key for run in read_sweep(config)}
    out = {}
    for run in read_sweep(root / "configs" / "sweeps" / "default.yaml"):
        if run.key in keys:
            folder = run.records_folder(root)
            if folder is not None:
                out[run.key] = folder
    return out


def report_sweep(model: str, config: Path, folder: Path, root: Path) -> Path:
    """Write the sweep of the profile's notebook (18_profile) into ``folder`` and return its
    path: one run of ``model`` on the records of the default sweep and of ``config`` (the
    profile's measures), its executed notebook, figure and table (``profile.md``) in
    ``folder``."""
    declared = _declared_sources(root / "configs" / "sweeps" / "default.yaml")
    entry = {"notebook": "notebooks/18_profile.py", "section": f"profile/{folder.name}/report",
             "grid": {"profiled": [model]},
             "parameters": {"sweep_files": ["configs/sweeps/default.yaml",
                                            config.relative_to(root).as_posix()], **COMMON},
             "sources": declared.get("notebooks/18_profile.py", []),
             "table_file": (folder / "profile.md").relative_to(root).as_posix()}
    path = folder / "report.yaml"
    write_text_atomic(path, "# polybias profile: the profile notebook of the model, written by "
                      "polybias.runner.profile\n" + yaml.safe_dump(
                          {"kernel": "polybias", "runs": [entry]}, sort_keys=False, width=100))
    read_sweep(path)
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="polybias profile", description=__doc__.splitlines()[0])
    parser.add_argument("model", help="a registered name, a model directory or a hub id")
    parser.add_argument("--kind", choices=KINDS, help="the model's kind when its registry entry "
                        "does not say (a directory or hub id): causal, mlm, encoder or static")
    parser.add_argument("--languages", help="comma-separated languages to keep (default: every "
                        "language with data)")
    parser.add_argument("--dry-run", action="store_true", help="list the runs and exit")
    parser.add_argument("-j", "--jobs", type=int, default=1, help="parallel runs (default 1)")
    args = parser.parse_args(argv)
    root = paths.project_root()
    try:
        name, entry = models.resolve_model(args.model)
    except models.ModelError as exc:
        print(f"polybias profile: {exc}", file=sys.stderr)
        return 2
    kind = args.kind or entry.get("kind")
    if kind is None:
        print(f"polybias profile: model {name!r} has no registry entry saying its kind; pass "
              f"--kind ({', '.join(KINDS)})", file=sys.stderr)
        return 2
    languages = [x.strip() for x in args.languages.split(",") if x.strip()] if args.languages else None
    folder = root / "results" / "profile" / "".join(c if c.isalnum() or c in "-._" else "_" for c in name)
    try:
        config = write_profile_sweep(name, kind, languages, folder, root)
    except SweepError as exc:
        print(f"polybias profile: {str(exc).splitlines()[0]}", file=sys.stderr)
        return 2
    elsewhere = done_elsewhere(config, root)
    planned = read_sweep(config)
    if args.dry_run:
        for run in planned:
            state = "done (default sweep)" if run.key in elsewhere else run.state(root)
            print(f"{state:6s} {run.key}")
        print(f"polybias profile: {len(planned)} runs of {name} ({kind}), "
              f"{len(elsewhere)} done in the default sweep; sweep {config.relative_to(root)}")
        return 0
    todo = [run.key for run in planned if run.key not in elsewhere]
    outcomes = sweep.run_sweep(config, jobs=args.jobs, progress=False, only=",".join(todo)) \
        if todo else []
    failed = [o for o in outcomes if o["status"] == "failed"]
    report = report_sweep(name, config, folder, root)  # always redrawn: the records may have grown
    shown = sweep.run_sweep(report, jobs=1, progress=False, force=True)
    failed += [o for o in shown if o["status"] != "ok"]
    table = folder / "profile.md"
    if table.is_file():
        print(table.read_text(encoding="utf-8"))
    notebook = next((r.folder(root) / "executed.ipynb" for r in read_sweep(report)), None)
    ran = sum(o["status"] == "ok" for o in outcomes)
    print(f"polybias profile: {len(planned)} runs of {name}: {len(elsewhere)} done in the default "
          f"sweep, {ran} run now, {len(failed)} failed; profile {table.relative_to(root)}"
          + (f", notebook {notebook.relative_to(root)}" if notebook is not None and notebook.is_file() else ""))
    return 1 if failed else 0
