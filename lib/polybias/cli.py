"""Command line: ``polybias sweep|run|profile|pin|fetch|models|sources|datasets|crows-alignment|lm-eval-tasks|measures|results|export|cards``.

Each subcommand imports the modules it runs when it is called (marked ``lazy: start-up``):
importing them all here (pandas, torch, Dask, papermill, the measure registry) would make
every call, ``polybias --help`` included, take seconds.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading

from polybias import paths


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] == ["sweep"]:
        return _sweep(argv[1:])
    parser = argparse.ArgumentParser(prog="polybias", description="Multilingual bias measurement.")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("sweep", help="run a sweep YAML on Dask, resumable (see polybias sweep --help)",
                   add_help=False)
    sub.add_parser("run", help="run one notebook on one set of parameters (see polybias run --help)",
                   add_help=False)
    sub.add_parser("profile", help="every measure that applies to a model, in every language with "
                                   "data, as one resumable sweep, then its profile (polybias profile "
                                   "MODEL [--languages L] [--dry-run])", add_help=False)
    sub.add_parser("pin", help="pin a sweep's hub ids to commits in a pin file (polybias pin "
                              "CONFIG [--output FILE])", add_help=False)
    sub.add_parser("lock", help="the earlier name of polybias pin, still accepted", add_help=False)
    fetch = sub.add_parser("fetch", help="download and verify registered data sources")
    fetch.add_argument("names", nargs="*", help="source names (default: all)")
    sub.add_parser("models", help="list the model registry")
    sub.add_parser("sources", help="list the data registry with licences")
    # -- datasets: the minimal-pair datasets and their cards
    sub.add_parser("datasets", help="list the minimal-pair datasets and StereoSet (languages, size, licence)")
    align = sub.add_parser("crows-alignment", help="count the pairs of each minimal-pair dataset "
                                                   "whose shared tokens differ between metric.py's "
                                                   "alignment and the content-token alignment")
    align.add_argument("--model", default="minilm-l6", help="whose tokenizer (default: minilm-l6)")
    align.add_argument("--dataset", action="append", help="a registered dataset, all its languages "
                                                          "(repeatable; default: every dataset)")
    tasks = sub.add_parser("lm-eval-tasks", help="write lm-evaluation-harness task YAMLs (and their "
                                                 "CSVs) for the minimal-pair datasets, from local files")
    tasks.add_argument("--out", required=True, help="folder to create (lm-eval --include_path)")
    tasks.add_argument("--dataset", action="append", help="a registered dataset (repeatable; "
                                                          "default: every dataset)")
    tasks.add_argument("--language", action="append", help="keep only this language (repeatable)")
    tasks.add_argument("--force", action="store_true", help="replace an existing --out folder")
    measures = sub.add_parser("measures", help="list the registered measures, or show one's card "
                                               "(polybias measures [NAME])")
    measures.add_argument("name", nargs="?", help="a measure (default: list them all): "
                                                  + _measure_names())
    sub.add_parser("results", help="read every run record into one tidy table (polybias results "
                                   "[FOLDER] [--csv FILE])", add_help=False)
    sub.add_parser("export", help="cross-model tables and comparison figures from the run records "
                                  "(polybias export [FOLDER | --sweep CONFIG] [--out DIR])",
                   add_help=False)
    cards_parser = sub.add_parser("cards", help="write the metric cards docs/measures/*.md from the registry")
    cards_parser.add_argument("--check", action="store_true", help="only check that the cards are up to date")
    if argv[:1] == ["results"]:
        # lazy: start-up (see the module docstring)
        from polybias.results.commands import main_results

        return main_results(argv[1:])
    if argv[:1] == ["export"]:
        # lazy: start-up (see the module docstring)
        from polybias.results.commands import main_export
        from polybias.runner.sweep import run_folders

        return main_export(argv[1:], sweep_runs=run_folders)
    if argv[:1] in (["pin"], ["lock"]):
        # lazy: start-up (see the module docstring)
        from polybias.runner import pins

        return pins.main(argv[1:], prog=f"polybias {argv[0]}")
    if argv[:1] == ["profile"]:
        # lazy: start-up (see the module docstring)
        from polybias.runner import profile

        return profile.main(argv[1:])
    if argv[:1] == ["run"]:
        # lazy: start-up (see the module docstring)
        from polybias.runner import single_run

        return single_run.main(argv[1:])
    args = parser.parse_args(argv)
    if args.command == "fetch":
        return _fetch(args.names)
    elif args.command == "models":
        # lazy: start-up (see the module docstring; torch)
        from polybias import models

        rows = models.registry_rows()
        columns = ("name", "kind", "languages", "offline", "origin", "licence")
        widths = {c: max(len(c), *(len(r[c]) for r in rows)) for c in columns[:-1]}
        print("  ".join(c.upper().ljust(widths.get(c, 0)) for c in columns).rstrip())
        for r in rows:
            print("  ".join(r[c].ljust(widths.get(c, 0)) for c in columns).rstrip())
    elif args.command == "sources":
        # lazy: start-up (see the module docstring)
        from polybias.data.sources import availability, load_registry

        registry = load_registry()
        print("NAME  offline: whether a verified copy is here (mirror, environment or cache)")
        print("  licence, url")
        for src in registry.values():
            here, where = availability(src.name, registry, download=False)
            offline = (f"yes ({where.rsplit(' ', 1)[-1]})" if here
                       else "no (polybias fetch NAME with the network, or POLYBIAS_DATA_MIRROR)")
            print(f"{src.name}  offline: {offline}\n  licence: {src.licence}\n  url: {src.url}")
    elif args.command == "measures":
        return _measures(args.name)
    elif args.command == "cards":
        # lazy: start-up (see the module docstring)
        from polybias.results import cards

        return cards.main(check=args.check)
    elif args.command == "crows-alignment":
        # lazy: start-up (see the module docstring)
        from polybias.data.crowspairs import DATASETS
        from polybias.results.report import markdown_table
        from polybias.studies.crows_pairs import alignment_change_counts

        unknown = sorted(set(args.dataset or []) - set(DATASETS))
        if unknown:
            print(f"unknown dataset(s) {', '.join(unknown)}; known: {', '.join(DATASETS)}", file=sys.stderr)
            return 2
        chosen = {d: DATASETS[d] for d in args.dataset} if args.dataset else None
        print(markdown_table(alignment_change_counts(args.model, chosen)))
    elif args.command == "lm-eval-tasks":
        # lazy: start-up (see the module docstring)
        from polybias.data.lm_eval_tasks import LmEvalTaskError, write_tasks

        try:
            names = write_tasks(args.out, args.dataset, args.language, overwrite=args.force)
        except LmEvalTaskError as err:
            print(f"polybias lm-eval-tasks: {err}", file=sys.stderr)
            return 2
        print(f"{len(names)} task(s) in {args.out} (tag polybias_crows):")
        for name in names:
            print(f"  {name}")
    elif args.command == "datasets":
        # lazy: start-up (see the module docstring)
        from polybias.data import crowspairs, gest, stereoset

        listed = crowspairs.list_datasets()
        print(f"{'DATASET':22s} {'LANG':4s}{'SIZE':>5s}  PROVENANCE\n{'':32s}bias types or items; licence; "
              "citation (size: pairs, items or sentences; polybias sources: whether their files are here)")
        for row in listed.itertuples():
            print(f"{row.dataset:22s} {row.language:3s} {row.pairs:5d}  {row.provenance}\n"
                  f"{'':32s}{row.bias_types}; {row.licence}")
            if row.Index == len(listed) - 1 or listed.dataset.iloc[row.Index + 1] != row.dataset:
                print(f"{'':32s}citation: {crowspairs.dataset_card(row.dataset)['citation']}")
        for row in stereoset.list_datasets().itertuples():
            print(f"{row.dataset:22s} {row.language:3s} {row.items:5d}  {row.provenance}\n"
                  f"{'':32s}items: {row.intrasentence} intrasentence + {row.intersentence} "
                  f"intersentence; {row.bias_types}; {row.licence}")
        for row in gest.list_datasets().itertuples():
            print(f"{row.dataset:22s} {row.language:3s} {row.sentences:5d}  {row.provenance}\n"
                  f"{'':32s}stereotypes: {row.stereotypes}; {row.licence}")
        languages = crowspairs.likelihood_languages()
        print(f"{len(languages)} languages with a likelihood-bias dataset: {', '.join(languages)}")
    return 0


def _sweep(argv: list[str]) -> int:
    """``polybias sweep``; a Ctrl-C while its modules load (torch: seconds) ends it once they
    are loaded, as one later does: exit status 130 and a summary line, no traceback.

    The Ctrl-C is only noted while they load: a KeyboardInterrupt raised inside torch's
    import would make Python end killed by SIGINT whatever the exit status asked.
    """
    pressed: list[int] = []
    noting = signal.getsignal(signal.SIGINT) is signal.default_int_handler \
        and threading.current_thread() is threading.main_thread()
    if noting:
        signal.signal(signal.SIGINT, lambda signum, frame: pressed.append(signum))
    try:
        # lazy: start-up (see the module docstring)
        from polybias.runner import sweep
    finally:
        if noting:
            signal.signal(signal.SIGINT, signal.default_int_handler)
    if pressed:
        print("sweep: interrupted (Ctrl-C) before its runs were counted; --list shows them")
        print("polybias sweep: interrupted (Ctrl-C)", file=sys.stderr)
        return 130
    return sweep.main(argv)


def _measure_names() -> str:
    """The registered measure names, read from ``data/measures.yaml`` without importing the
    measures' code (the help of ``polybias measures``)."""
    try:
        return ", ".join(paths.read_yaml(paths.data_dir() / "measures.yaml"))
    except (OSError, ValueError, TypeError) as exc:  # help outside a project still works
        return f"(the registry cannot be read: {exc})"


def _measures(name: str | None) -> int:
    """``polybias measures [NAME]``: the registry as a list, or the card of one measure."""
    # lazy: start-up (see the module docstring)
    from polybias.measures import MEASURES, MeasureError

    if name is None:
        width = max(len(m) for m in MEASURES)
        for m in MEASURES.values():
            print(f"{m.name:{width}s} {m.input_kind:18s} {m.title}")
        print("\npolybias measures NAME shows a measure's card (docs/measures/NAME.md)")
        return 0
    # lazy: start-up (see the module docstring)
    from polybias.results.cards import card

    try:
        print(card(name))
    except MeasureError as exc:
        print(f"polybias measures: {exc}", file=sys.stderr)
        return 1
    return 0


def _fetch(names: list[str]) -> int:
    """``polybias fetch``: fetch each source (all by default) and print where it is.

    A source that cannot be had prints its one-line reason to stderr (no traceback);
    the others are still fetched, and the exit status is 1 if any failed.
    """
    # lazy: start-up (see the module docstring)
    from polybias.data.sources import DataError, fetch, load_registry

    try:
        names = names or sorted(load_registry())
    except DataError as exc:
        print(f"polybias fetch: {exc}", file=sys.stderr)
        return 1
    status = 0
    for name in names:
        try:
            print(f"{name}: {fetch(name)}")
        except DataError as exc:
            print(f"polybias fetch: {exc}", file=sys.stderr)
            status = 1
    return status


def entry() -> int:
    """The ``polybias`` command: :func:`main`, with a pipe closed early by the reader
    (``polybias models | head``) ending it quietly with exit status 0."""
    try:
        status = main()
        sys.stdout.flush()
    except BrokenPipeError:
        # the reader is gone: send what is left of stdout nowhere, and say nothing
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    return status


if __name__ == "__main__":
    sys.exit(entry())
