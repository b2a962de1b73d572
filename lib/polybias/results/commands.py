"""The command line of the results: ``polybias results`` (the tidy table,
:mod:`polybias.results.table`) and ``polybias export`` (cross-model tables and figures,
:mod:`polybias.results.export`)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path

import pandas as pd

from polybias import paths
from polybias.files import write_text_atomic
from polybias.results.export import export, redraw_figures
from polybias.results.table import ResultsError, read_results


def main_results(argv: list[str] | None = None) -> int:
    """``polybias results [FOLDER] [--csv FILE] [--metric M] [--model M]``."""
    parser = argparse.ArgumentParser(prog="polybias results",
                                     description="Read every run record into one tidy table.")
    parser.add_argument("folder", nargs="?", help="records folder (default: results/ under the "
                                                  "output root)")
    parser.add_argument("--csv", help="write the table to this CSV file instead of printing it")
    parser.add_argument("--metric", action="append", help="keep only this metric (repeatable)")
    parser.add_argument("--model", action="append", help="keep only this model (repeatable)")
    args = parser.parse_args(argv)
    try:
        frame = read_results(args.folder)
    except ResultsError as exc:
        print(f"polybias results: {exc}", file=sys.stderr)
        return 1
    if args.metric:
        frame = frame[frame["metric"].isin(args.metric)]
    if args.model:
        frame = frame[frame["model"].isin(args.model)]
    if args.csv:
        write_text_atomic(args.csv, frame.to_csv(index=False))
        print(f"{len(frame)} rows -> {args.csv}")
        return 0
    shown = frame.drop(columns=["revision", "record", "run_time"])
    with pd.option_context("display.max_rows", None, "display.max_columns", None, "display.width", 200,
                           "display.max_colwidth", 40):
        print(shown.to_string(index=False))
    return 0


def main_export(argv: list[str] | None = None, sweep_runs: Callable | None = None) -> int:
    """``polybias export [FOLDER | --sweep CONFIG [--if-complete]] [--out DIR] [--metric M]
    [--no-figures] [--no-tidy] [--prune]``, or ``polybias export --redraw [--out DIR]``
    (:func:`redraw_figures`: the figures from the tables already in ``DIR``).

    ``--sweep CONFIG`` exports the records of that sweep's runs only; ``sweep_runs(CONFIG)``
    (given by the command line, :func:`polybias.runner.sweep.run_folders`) returns their folders
    and the keys of the runs that are not done. A sweep with runs not done is an error
    (nothing written) or, with ``--if-complete``, a note on stderr and exit 0 with
    nothing written: ``make reproduce`` rewrites ``paper/export`` only from a complete
    sweep, so an offline run that skipped some notebooks leaves the committed tables as
    they are.
    """
    parser = argparse.ArgumentParser(prog="polybias export",
                                     description="Cross-model tables (CSV, Markdown) and comparison "
                                                 "figures from the run records.")
    parser.add_argument("folder", nargs="?", help="records folder (default: results/ under the "
                                                  "output root)")
    parser.add_argument("--sweep", help="export the records of this sweep config's runs only")
    parser.add_argument("--if-complete", action="store_true",
                        help="with --sweep: when some runs are not done, write nothing and exit 0")
    parser.add_argument("--out", default=None, help="output folder (default: results/export under "
                                                    "the output root)")
    parser.add_argument("--metric", action="append", help="export only this metric (repeatable)")
    parser.add_argument("--no-figures", action="store_true", help="tables only")
    parser.add_argument("--no-tidy", action="store_true",
                        help="no results.csv (the tidy table, which names record files and times)")
    parser.add_argument("--prune", action="store_true",
                        help="remove tables and figures in --out of metrics not exported now")
    parser.add_argument("--redraw", action="store_true",
                        help="no records: redraw the figures of the tables already in --out from "
                             "the tables themselves (the values as printed)")
    args = parser.parse_args(argv)
    out = Path(args.out) if args.out else paths.output_path("results/export")
    try:
        if args.redraw:
            if args.folder or args.sweep:
                raise ResultsError("--redraw reads the tables in --out: give no FOLDER or --sweep")
            for path in redraw_figures(out):
                print(path)
            return 0
        if args.sweep:
            if args.folder:
                raise ResultsError("give a records FOLDER or --sweep CONFIG, not both")
            if sweep_runs is None:
                raise ResultsError("--sweep needs the sweep module (run it as polybias export)")
            try:
                folders, not_done = sweep_runs(args.sweep)
            except ValueError as exc:  # the sweep's own error (malformed, or of another kind)
                raise ResultsError(str(exc)) from None
            if not_done:
                message = (f"{len(not_done)} of {len(folders) + len(not_done)} runs of {args.sweep} "
                           f"are not done (e.g. {not_done[0]}); nothing exported")
                if args.if_complete:
                    print(f"polybias export: {message}; {out} left as it is", file=sys.stderr)
                    return 0
                raise ResultsError(message)
            frame = read_results(runs=folders)
        else:
            frame = read_results(args.folder)
        written = export(frame, out, args.metric, figures=not args.no_figures,
                         tidy=not args.no_tidy, prune=args.prune)
    except ResultsError as exc:
        print(f"polybias export: {exc}", file=sys.stderr)
        return 1
    for path in written:
        print(path)
    return 0
