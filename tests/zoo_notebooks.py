"""The model zoo through the notebooks: every stand-in family of ``tests/zoo.py``, saved as
safetensors and as ``.bin`` only, given by its directory to each notebook that loads a
model (``polybias run NOTEBOOK -p model DIR``, default ``device``/``dtype`` ``auto``), and
either running to the end with run records or refused with its documented reason.

:data:`EXPECTED` declares the outcome of every cell (family × weights format × notebook);
:func:`run_cells` executes cells, :func:`table` writes the outcome table, and
``make zoo`` (:func:`main`) runs them all, checks each against the declaration and writes
``docs/zoo.md`` and the README's copy of the table::

    python tests/zoo_notebooks.py --jobs 1 --write     # from the repository root

The studies' English SEAT files are read from ``POLYBIAS_DATA_MIRROR`` (or the network):
without them notebook 02's cells are reported as not run.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import zoo  # noqa: E402

#: Notebook → the small parameters its zoo runs take (the model is the stand-in's folder;
#: ``device`` and ``dtype`` stay ``auto``).
NOTEBOOKS: dict[str, dict[str, object]] = {
    "05_crows_pairs": {"n_pairs": 20, "n_bootstrap": 20, "reproduce": False},
    "06_categorical_bias": {"reproduce": False},
    "02_seat": {"tests": ["weat6"], "n_permutations": 100},
    "03_ceat": {"planted_p": [0.9], "n_sentences": 100},
    "08_hidden_states": {},
    "04_logprob_context": {"templates": "planted_en", "n_permutations": 100},
}

#: Families run through the notebooks: the stand-ins of the studies' models (the zoo's
#: refusal-only families are covered by ``tests/test_zoo.py`` at load time).
FAMILIES: tuple[zoo.Family, ...] = tuple(
    f for f in zoo.FAMILIES
    if f.name in ("bert-uncased", "bert-cased", "albert", "xlm-roberta", "roberta",
                  "electra-generator", "electra-discriminator", "gpt2", "llama", "qwen2", "mpt"))

RUNS = "runs"
#: Refusal reasons, each with the text the run's one-line error must hold.
REFUSALS = {
    "no MLM head (ELECTRA discriminator)": "ELECTRA discriminator",
    "causal LM: the measure needs a masked LM": "needs a masked LM",
    "decoder: the measure needs an encoder": "is a decoder, not an encoder",
}
NOT_RUN = "not run: needs the SEAT files (POLYBIAS_DATA_MIRROR)"


def expected(family: zoo.Family, notebook: str) -> str:
    """The declared outcome of ``family`` through ``notebook``: :data:`RUNS` or a key of
    :data:`REFUSALS` (the same for both weight formats)."""
    causal = "causal" in family.heads
    if notebook == "05_crows_pairs":
        if family.name == "electra-discriminator":
            return "no MLM head (ELECTRA discriminator)"
        return RUNS
    if notebook in ("06_categorical_bias", "04_logprob_context"):
        if causal:
            return "causal LM: the measure needs a masked LM"
        if family.name == "electra-discriminator":
            return "no MLM head (ELECTRA discriminator)"
        return RUNS
    # 02, 03, 08: encoders (an MLM's encoder; the discriminator's too)
    return "decoder: the measure needs an encoder" if causal else RUNS


#: (family, format, notebook) → declared outcome, for every cell of the table.
EXPECTED: dict[tuple[str, str, str], str] = {
    (f.name, fmt, nb): expected(f, nb) for f in FAMILIES for fmt in zoo.FORMATS for nb in NOTEBOOKS}


@dataclass(frozen=True)
class Cell:
    family: str
    fmt: str
    notebook: str
    outcome: str   # RUNS, a REFUSALS key, NOT_RUN, or "failed: <error>" (unexpected)
    error: str     # the run's one-line error ("" when it ran)
    seconds: float
    records: int   # run records written


def _classify(error: str) -> str:
    if "DataError" in error and "sent-bias" in error:
        return NOT_RUN
    for reason, text in REFUSALS.items():
        if text in error:
            return reason
    return f"failed: {error}"


def _parameters(notebook: str, folder: Path) -> list[str]:
    args = ["-p", "model", str(folder)]
    for name, value in NOTEBOOKS[notebook].items():
        text = json.dumps(value) if isinstance(value, (list, bool)) else str(value)
        args += ["-p", name, text]
    return args


def run_cell(family: zoo.Family, fmt: str, notebook: str, standins: Path, work: Path,
             env: dict[str, str] | None = None) -> Cell:
    """Run one notebook on one stand-in through ``polybias run`` (a new process and kernel)."""
    folder = standins / f"{family.name}-{fmt}"
    out = work / "runs" / f"{family.name}-{fmt}" / notebook
    cmd = [sys.executable, "-m", "polybias.cli", "run", notebook, *_parameters(notebook, folder),
           "--output", str(out)]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, **(env or {})})
    seconds = time.perf_counter() - t0
    records = [p for p in out.rglob("*.json") if p.name != "run.json"] if out.is_dir() else []
    if proc.returncode == 0:
        marker = json.loads((out / "run.json").read_text())
        ok = marker.get("status") == "ok" and records
        return Cell(family.name, fmt, notebook, RUNS if ok else "failed: no run records", "",
                    seconds, len(records))
    lines = [ln for ln in proc.stderr.strip().splitlines() if ln.startswith("polybias run:")]
    error = lines[-1] if lines else (proc.stderr.strip().splitlines() or ["(no error output)"])[-1]
    error = re.sub(r" \(see [^)]*failed\.ipynb\)$", "", error)
    error = re.sub(r"^polybias run: \S+ failed: ", "", error)
    return Cell(family.name, fmt, notebook, _classify(error), error, seconds, len(records))


def build_standins(standins: Path, families=FAMILIES) -> None:
    for fam in families:
        for fmt in zoo.FORMATS:
            folder = standins / f"{fam.name}-{fmt}"
            if not (folder / "config.json").is_file():
                zoo.build(fam, fmt, folder)


def scratch_env(work: Path) -> dict[str, str]:
    """Environment of the runs: offline, figures and caches under ``work``."""
    return {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1",
            "POLYBIAS_OUTPUT_ROOT": str(work / "outputs"), "OMP_NUM_THREADS": "1",
            "MKL_NUM_THREADS": "1", "PYTHONHASHSEED": "0", "MPLBACKEND": "Agg"}


def run_cells(cells: list[tuple[zoo.Family, str, str]], work: Path, jobs: int = 1) -> list[Cell]:
    """Build the stand-ins the cells use under ``work`` and run the cells (``jobs`` at a
    time); returns them in the order given."""
    standins = work / "standins"
    build_standins(standins, tuple({f.name: f for f, _, _ in cells}.values()))
    env = scratch_env(work)
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        futures = [pool.submit(run_cell, f, fmt, nb, standins, work, env) for f, fmt, nb in cells]
        return [f.result() for f in futures]


def all_cells() -> list[tuple[zoo.Family, str, str]]:
    return [(f, fmt, nb) for f in FAMILIES for fmt in zoo.FORMATS for nb in NOTEBOOKS]


def _cell_text(outcome: str) -> str:
    return "runs" if outcome == RUNS else (outcome if outcome.startswith(("not run", "failed"))
                                            else f"refused: {outcome}")


def table(outcomes: dict[tuple[str, str, str], str]) -> str:
    """Markdown table: one row per family and weights format, one column per notebook."""
    head = "| stand-in (stands for) | weights | " + " | ".join(NOTEBOOKS) + " |"
    lines = [head, "|---|---|" + "---|" * len(NOTEBOOKS)]
    for fam in FAMILIES:
        for fmt in zoo.FORMATS:
            cells = [_cell_text(outcomes.get((fam.name, fmt, nb), "—")) for nb in NOTEBOOKS]
            weights = "model.safetensors" if fmt == "safetensors" else "pytorch_model.bin only"
            lines.append(f"| {fam.name} ({fam.stands_for}) | {weights} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


BEGIN, END = "<!-- zoo table: begin (make zoo) -->", "<!-- zoo table: end -->"


def document(cells: list[Cell], seconds: float, jobs: int) -> str:
    """docs/zoo.md: how the table is made, the table, and what the run measured."""
    outcomes = {(c.family, c.fmt, c.notebook): c.outcome for c in cells}
    runs = sum(c.outcome == RUNS for c in cells)
    refused = sum(c.outcome in REFUSALS for c in cells)
    return "\n".join([
        "# The model zoo through the notebooks",
        "",
        "Tiny random checkpoints built in the shapes of the studies' hub models",
        "(`tests/zoo.py`: each family's architecture class and tokenizer files), saved with",
        "`model.safetensors` and with `pytorch_model.bin` only, each given by its folder to every",
        "notebook that loads a model (`polybias run NOTEBOOK -p model DIR`, `device` and `dtype`",
        "left at `auto`, small sizes: `tests/zoo_notebooks.py`). A cell says `runs` when the",
        "notebook ran to the end and wrote its run records, or the reason the notebook refused",
        "the model with a one-line error. The declared outcome of every cell is",
        "`zoo_notebooks.EXPECTED`; `make zoo` runs all cells, fails on any that differs, and",
        "rewrites this file and the README's copy of the table. `make test` runs a few cells",
        "(`tests/test_zoo_notebooks.py`) and checks that this table is the declared one.",
        "",
        BEGIN,
        table(outcomes),
        END,
        "",
        f"Last `make zoo`: {len(cells)} notebook runs ({runs} ran, {refused} refused as declared), "
        f"{seconds / 60:.1f} min wall time with {jobs} run(s) at a time on the CPU "
        "(one new process and kernel per run).",
        "",
    ])


def readme_with_table(readme: str, text: str) -> str:
    """``readme`` with the part between the zoo-table markers replaced by ``text``'s table."""
    new = text[text.index(BEGIN):text.index(END) + len(END)]
    if BEGIN not in readme or END not in readme:
        raise ValueError("README.md lacks the zoo table markers")
    return readme[:readme.index(BEGIN)] + new + readme[readme.index(END) + len(END):]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=1, help="runs at a time (default 1)")
    parser.add_argument("--write", action="store_true",
                        help="rewrite docs/zoo.md and the README table (only when every cell "
                             "is as declared)")
    parser.add_argument("--only", help="run only cells whose 'family-format-notebook' holds this")
    args = parser.parse_args(argv)
    root = Path(__file__).resolve().parents[1]
    cells = [c for c in all_cells() if not args.only or args.only in f"{c[0].name}-{c[1]}-{c[2]}"]
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="zoo-") as tmp:
        got = run_cells(cells, Path(tmp), args.jobs)
    seconds = time.perf_counter() - t0
    wrong = [c for c in got if c.outcome != EXPECTED[(c.family, c.fmt, c.notebook)]]
    for c in got:
        mark = "" if c.outcome == EXPECTED[(c.family, c.fmt, c.notebook)] else "   <-- declared: " + \
            EXPECTED[(c.family, c.fmt, c.notebook)]
        print(f"{c.family:22s} {c.fmt:11s} {c.notebook:20s} {c.seconds:6.1f}s {_cell_text(c.outcome)}"
              f"{' | ' + c.error if c.error and c.outcome not in REFUSALS else ''}{mark}")
    print(f"{len(got)} runs in {seconds / 60:.1f} min; {len(wrong)} not as declared")
    if args.write and not wrong and len(got) == len(EXPECTED):
        text = document(got, seconds, args.jobs)
        (root / "docs" / "zoo.md").write_text(text, encoding="utf-8")
        readme = root / "README.md"
        readme.write_text(readme_with_table(readme.read_text(encoding="utf-8"), text), encoding="utf-8")
        print("wrote docs/zoo.md and the README table")
    elif args.write:
        print("not written: some cells were not run or not as declared")
    return 1 if wrong else 0


if __name__ == "__main__":
    raise SystemExit(main())
