"""Sweep throughput and overhead: the same sweep of small notebook runs on a Dask
LocalCluster with 2 workers against 1 worker, the sweep's cost per run against one
``papermill`` process per run (what a shell loop does), and how the resume check
(which runs are done?) grows with the number of runs.

    .venv/bin/python benchmarks/bench_sweep.py [--runs 12] [--quick]

Each run executes a throw-away notebook in a temporary project: it sorts random arrays
for a fixed amount of work (timed inside the notebook) and writes one number. The
cluster is started and each worker has executed one warm-up run before the clock starts
(a cold start costs a few seconds per sweep, once); the 1-worker sweep runs on the same
cluster scaled down to one of its workers. The papermill-process
reference runs on the first 3 runs (1 with --quick) and is compared per run.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

NOTEBOOK = '''# %% tags=["parameters"]
x: int = 0  # run number (the seed)
size: int = 400000  # length of each sorted array
repeats: int = 6  # arrays sorted
output_dir: str = "results/x"  # where to write

# %%
import json
import pathlib
import time

import numpy as np

t0 = time.perf_counter()
rng = np.random.default_rng(x)
value = 0.0
for _ in range(repeats):
    value += float(np.sort(rng.standard_normal(size))[size // 2])
work = time.perf_counter() - t0
pathlib.Path(output_dir, "value.json").write_text(json.dumps({"value": value, "work_s": work}))
'''


def make_project(folder: Path, runs: int, name: str = "sweep.yaml", section: str = "bench",
                 first: int = 0) -> Path:
    (folder / "configs").mkdir(parents=True, exist_ok=True)
    (folder / "nb").mkdir(exist_ok=True)
    (folder / "pyproject.toml").write_text("")
    (folder / "nb" / "work.py").write_text(NOTEBOOK)
    cfg = folder / name
    cfg.write_text(f"runs:\n  - notebook: nb/work.py\n    section: {section}\n"
                   f"    grid:\n      x: {list(range(first, first + runs))}\n")
    return cfg


def _warm() -> None:
    import jupytext  # noqa: F401
    import nbformat  # noqa: F401
    import papermill  # noqa: F401


def timed_sweeps(cfg: Path) -> tuple[float, float, list[float]]:
    """Seconds for the whole sweep on a warm LocalCluster with 2 workers, then with 1 (the
    same cluster scaled down), and the work seconds of each run of the 1-worker sweep."""
    from distributed import Client
    from polybias.runner import sweep

    warm = make_project(cfg.parent, 2, name="warm.yaml", section="warm", first=1000)
    seconds = {}
    with sweep.local_cluster(2) as cluster, Client(cluster) as client:
        client.wait_for_workers(2)
        client.run(_warm)
        sweep.run_sweep(warm, client=client, force=True, progress=False)  # first kernel starts
        for workers in (2, 1):
            if workers == 1:
                cluster.scale(1)
                while len(client.scheduler_info()["workers"]) > 1:
                    time.sleep(0.1)
            t0 = time.perf_counter()
            outcomes = sweep.run_sweep(cfg, client=client, force=True, progress=False)
            seconds[workers] = time.perf_counter() - t0
            bad = [o for o in outcomes if o["status"] != "ok"]
            if bad:
                raise RuntimeError(f"benchmark runs failed: {bad[:2]}")
    root = cfg.parent
    work = [json.loads(p.read_text())["work_s"] for p in sorted(root.glob("results/bench/*/value.json"))]
    return seconds[1], seconds[2], work


def papermill_per_run(cfg: Path, n: int) -> float:
    """Seconds per run of ``papermill in.ipynb out.ipynb -p x X`` in a fresh process each."""
    import jupytext

    root = cfg.parent
    nb = jupytext.read(root / "nb" / "work.py")
    nb.metadata["kernelspec"] = {"name": "polybias", "display_name": "polybias", "language": "python"}
    src = root / "work.ipynb"
    jupytext.write(nb, src)
    exe = Path(sys.executable).with_name("papermill")
    t0 = time.perf_counter()
    for x in range(n):
        out = root / "results" / "ref" / f"x{x}"
        out.mkdir(parents=True, exist_ok=True)
        subprocess.run([str(exe), str(src), str(out / "out.ipynb"), "-p", "x", str(x), "-p", "output_dir",
                        str(out), "-k", "polybias", "--no-progress-bar"],
                       check=True, capture_output=True, cwd=root)
    return (time.perf_counter() - t0) / n


def resume_check(folder: Path, sizes: list[int]) -> list[dict]:
    """Time to tell which runs are done (``--list``, and the start of every sweep)."""
    from polybias.files import write_text_atomic
    from polybias.runner import execution, sweep

    rows = []
    for n in sizes:
        root = folder / f"resume{n}"
        cfg = make_project(root, n)
        os.environ["POLYBIAS_ROOT"] = str(root)
        runs = sweep.load_sweep(cfg)
        for r in runs:  # fake finished runs: one output and a marker each
            d = r.folder(root)
            d.mkdir(parents=True)
            (d / "value.json").write_text("{}")
            marker = {"status": "ok", "params_hash": r.hash_in(root), "outputs": execution.output_digests(d)}
            write_text_atomic(d / execution.MARKER, json.dumps(marker))
        t0 = time.perf_counter()
        done = sum(sweep.is_done(r, root) for r in sweep.load_sweep(cfg))
        seconds = time.perf_counter() - t0
        assert done == n
        rows.append({"benchmark": "sweep resume check (which runs are done)", "size": n,
                     "unit": "runs", "reference": "", "reference_s": None, "polybias_s": seconds})
        shutil.rmtree(root)
    return rows


def main(argv: list[str] | None = None) -> list[dict]:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=12, help="runs in the timed sweep")
    parser.add_argument("--quick", action="store_true", help="a smoke run: 4 runs, small scaling sizes")
    args = parser.parse_args(argv)
    runs = 4 if args.quick else args.runs
    sizes = [10, 100] if args.quick else [100, 1000, 10000]
    before = os.environ.get("POLYBIAS_ROOT")
    with tempfile.TemporaryDirectory(prefix="polybias-bench-") as tmp:
        tmp = Path(tmp)
        cfg = make_project(tmp / "sweep", runs)
        os.environ["POLYBIAS_ROOT"] = str(cfg.parent)  # the workers inherit it
        try:
            one, two, work1 = timed_sweeps(cfg)
            n_ref = 1 if args.quick else min(3, runs)
            ref = papermill_per_run(cfg, n_ref)
            scaling = resume_check(tmp, sizes)
        finally:
            if before is None:
                os.environ.pop("POLYBIAS_ROOT", None)
            else:
                os.environ["POLYBIAS_ROOT"] = before
    per_run = one / runs
    overhead = per_run - sum(work1) / len(work1)
    print(f"sweep of {runs} notebook runs ({sum(work1) / len(work1):.2f} s of work each), warm "
          f"LocalCluster, {os.cpu_count()} cores")
    print(f"  1 worker: {one:.1f} s   2 workers: {two:.1f} s   speed-up: {one / two:.2f}x")
    print(f"  per run on 1 worker: {per_run:.2f} s, of which overhead (kernel start, papermill, "
          f"marker): {overhead:.2f} s")
    print(f"  one papermill process per run (first {n_ref} runs): {ref:.2f} s per run, "
          f"{ref / per_run:.2f}x the sweep's")
    for r in scaling:
        print(f"  resume check, {r['size']:>6,} done runs: {r['polybias_s']:.3f} s")
    return [
        {"benchmark": f"sweep of {runs} small runs, LocalCluster 2 workers",
         "reference": "same sweep, 1 worker", "reference_s": one, "polybias_s": two},
        {"benchmark": "sweep, seconds per run (1 worker)",
         "reference": "one papermill process per run", "reference_s": ref, "polybias_s": per_run},
        {"benchmark": "sweep overhead per run (kernel, papermill, marker)", "reference": "",
         "reference_s": None, "polybias_s": overhead},
        *scaling,
    ]


if __name__ == "__main__":
    main()
