"""Performance benchmarks in one run (``make bench``): every ``benchmarks/bench_*.py``
plus the permutation-test benchmark below, each against a naive or reference approach
measured in the same run, summarised in one table of ratios and one of how the cost
grows with the input size. Absolute times depend on the machine; ratios are what the
README quotes.

    .venv/bin/python benchmarks/run.py [--quick] [--only sweep,scoring] [--reference-python PY] [--device cuda]

A benchmark module ``bench_<topic>.py`` defines ``main()`` and runs in its own process.
``main()`` returns a list of rows: dicts with ``benchmark`` (what is measured),
``reference`` (the approach compared with), ``reference_s`` and ``polybias_s`` (seconds,
``reference_s`` None when there is no reference), optionally ``size`` and ``unit`` for
scaling rows (the same ``benchmark`` at growing ``size``). ``main()`` may take
``quick`` and ``reference_python`` keyword arguments, or parse ``--quick`` from the
command line; a module that returns nothing contributes the ratios it prints
(lines ``... ratio ...: 4.2x``). A ``main()`` that takes ``device`` runs on ``--device``
(``cpu`` by default, ``cuda`` on a GPU: checked first, one line when it cannot run); the
others run on the CPU.
"""

from __future__ import annotations

import argparse
import importlib.util
import inspect
import json
import math
import re
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
from polybias.engines import static

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from devices import resolve_device  # noqa: E402

ROW = "@@bench-row "
# smoke-run arguments of modules that have no quick option: command line or main() keywords
QUICK_ARGS = {"bench_scoring": ["--pairs", "2", "--reference-pairs", "1"]}
QUICK_KWARGS = {"bench_debias": {"inlp_words": 100, "inlp_iterations": 3}}


# ------------------------------------------------------------------ WEAT permutation test
def naive_permutation_p(x: np.ndarray, y: np.ndarray, n: int, seed: int) -> float:
    """One Python iteration per permutation: shuffle, split, sum (the textbook loop)."""
    rng = np.random.default_rng(seed)
    pooled = np.concatenate([x, y])
    observed = x.sum() - y.sum()
    hits = 0
    for _ in range(n):
        perm = rng.permutation(pooled)
        if perm[: len(x)].sum() - perm[len(x):].sum() >= observed - 1e-12:
            hits += 1
    return (hits + 1) / (n + 1)


def best(fn, repeat: int) -> float:
    """Shortest of ``repeat`` timings of ``fn()``, in seconds."""
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter(); fn(); times.append(time.perf_counter() - t0)
    return min(times)


def bench_permutation(sizes: list[int]) -> list[dict]:
    """Monte Carlo WEAT p-value of WEAT 1 on w2v-gnews at growing numbers of permutations."""
    from polybias import models
    from polybias.data import wordlists
    from polybias.metrics.weat import weat_association
    from polybias.stats import split_permutation_test

    emb = models.load("w2v-gnews", "static")
    t = wordlists.get_test("en", "WEAT1")
    vec = {r: static.lookup(emb, list(s.words), "drop")[0] for r, s in t.sets().items()}
    sx = weat_association(vec["X"], vec["A"], vec["B"])
    sy = weat_association(vec["Y"], vec["A"], vec["B"])
    rows = []
    for n in sizes:
        repeat = 3 if n <= 10_000 else 1  # best of 3 where a run takes milliseconds
        t_naive = best(lambda n=n: naive_permutation_p(sx, sy, n, 0), repeat)
        t_ours = best(lambda n=n: split_permutation_test(sx, sy, n_permutations=n, exact_limit=0), repeat)
        rows.append({"benchmark": "WEAT p-value (WEAT 1, Monte Carlo)", "size": n,
                     "unit": "permutations", "reference": "Python loop per permutation",
                     "reference_s": t_naive, "polybias_s": t_ours})
    print("WEAT 1 p-value, Monte Carlo: " + ", ".join(
        f"{r['size']:,} permutations {r['reference_s'] / r['polybias_s']:.1f}x" for r in rows))
    return rows


def bench_wefe(python: str, iterations: int) -> list[dict]:
    out = subprocess.run([python, str(ROOT / "benchmarks" / "weat_vs_wefe.py"), str(iterations)],
                         check=True, capture_output=True, text=True, cwd=ROOT)
    rows = [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]
    print("\nWEFE 1.0.1 vs polybias, same vectors and word sets "
          f"({iterations:,} Monte Carlo permutations each):")
    print(f"{'test':7s} {'d WEFE':>8s} {'d ours':>8s} {'p WEFE':>8s} {'p ours':>8s} {'ratio':>7s}")
    for r in rows:
        print(f"{r['test']:7s} {r['wefe_effect_size']:8.4f} {r['polybias_effect_size_ddof0']:8.4f} "
              f"{r['wefe_p']:8.4f} {r['polybias_mc_p']:8.4f} {r['wefe_seconds'] / r['polybias_mc_seconds']:7.0f}x")
    print("effect sizes (ddof=0) agree to "
          f"{max(r['effect_size_abs_diff'] for r in rows):.1e}; p-values differ by definition "
          "(WEFE samples with replacement, unseeded).")
    total_ref = sum(r["wefe_seconds"] for r in rows)
    return [{"benchmark": f"WEAT 1-10 with p-value ({iterations:,} MC permutations)",
             "reference": "WEFE 1.0.1 WEAT.run_query", "reference_s": total_ref,
             "polybias_s": sum(r["polybias_mc_seconds"] for r in rows)},
            {"benchmark": "WEAT 1-10 with p-value (exact where <= 1e6 splits)",
             "reference": "WEFE 1.0.1 WEAT.run_query", "reference_s": total_ref,
             "polybias_s": sum(r["polybias_default_seconds"] for r in rows)}]


# ------------------------------------------------------------------ bench_*.py modules
def child(path: Path, quick: bool, reference_python: str | None, device: str = "cpu") -> None:
    """Run ``main()`` of one module in this process; print its rows as marked JSON lines."""
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    params = inspect.signature(module.main).parameters
    kwargs = {}
    if "quick" in params:
        kwargs["quick"] = quick
    elif quick:
        kwargs.update({k: v for k, v in QUICK_KWARGS.get(path.stem, {}).items() if k in params})
    if "reference_python" in params and reference_python:
        kwargs["reference_python"] = reference_python
    if "device" in params:
        kwargs["device"] = device
    argv = []
    if quick and "quick" not in params:
        argv = ["--quick"] if '"--quick"' in path.read_text() else QUICK_ARGS.get(path.stem, [])
    if "argv" in params:
        kwargs["argv"] = argv
    sys.argv = [str(path), *argv]
    rows = module.main(**kwargs)
    sys.stdout.flush()
    for row in rows or []:
        print(ROW + json.dumps(row), flush=True)


def run_module(path: Path, quick: bool, reference_python: str | None, timeout: int,
               device: str = "cpu") -> list[dict]:
    """Run one module in a child process; echo its output; return its rows."""
    cmd = [sys.executable, __file__, "--child", str(path), *(["--quick"] if quick else []),
           *(["--reference-python", reference_python] if reference_python else []),
           *(["--device", device] if device != "cpu" else [])]
    print(f"\n== {path.name}", flush=True)
    t0 = time.perf_counter()
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=timeout)
    except subprocess.TimeoutExpired:
        print(f"   timed out after {timeout} s")
        return [{"benchmark": f"{path.stem}: timed out", "reference": "", "reference_s": None,
                 "polybias_s": None}]
    rows, printed = [], []
    for line in out.stdout.splitlines():
        if line.startswith(ROW):
            rows.append(json.loads(line[len(ROW):]))
        else:
            printed.append(line)
            print("   " + line)
    if out.returncode != 0:
        print("   FAILED:\n" + "\n".join("   " + ln for ln in out.stderr.strip().splitlines()[-15:]))
        return [{"benchmark": f"{path.stem}: failed", "reference": "", "reference_s": None,
                 "polybias_s": None}]
    if not rows:  # a module that only prints: keep its "... ratio ...: 4.2x" lines
        for line in printed:
            m = re.match(r"\s*(.*ratio[^:]*):\s*([0-9.]+)x\s*$", line)
            if m:
                rows.append({"benchmark": f"{path.stem}: {m.group(1)}", "reference": "",
                             "reference_s": None, "polybias_s": None, "ratio": float(m.group(2))})
    print(f"   ({time.perf_counter() - t0:.0f} s)")
    return rows


# ------------------------------------------------------------------ the summary
def _s(x: float | None) -> str:
    return "-" if x is None else f"{x:.3f}" if x < 10 else f"{x:.1f}"


def ratio(row: dict) -> float | None:
    if row.get("ratio") is not None:
        return float(row["ratio"])
    ref, ours = row.get("reference_s"), row.get("polybias_s")
    return ref / ours if ref and ours else None


def summary(rows: list[dict]) -> str:
    """One table of ratios (reference s / polybias s) and one of costs against input size."""
    lines = ["", f"{'benchmark':58s} {'reference approach':38s} {'ref s':>8s} {'polybias s':>10s} "
             f"{'ratio':>8s}"]
    for r in rows:
        name = r["benchmark"] + (f", {r['size']:,} {r.get('unit', '')}".rstrip() if "size" in r else "")
        q = ratio(r)
        lines.append(f"{name[:58]:58s} {str(r.get('reference', ''))[:38]:38s} "
                     f"{_s(r.get('reference_s')):>8s} {_s(r.get('polybias_s')):>10s} "
                     f"{'-' if q is None else f'{q:.1f}x':>8s}")
    groups: dict[str, list[dict]] = {}
    for r in rows:
        if "size" in r and r.get("polybias_s"):
            groups.setdefault(r["benchmark"], []).append(r)
    if groups:
        lines += ["", "scaling (time ~ size^k between the smallest and the largest size):",
                  f"{'benchmark':50s} {'sizes':>22s} {'k polybias':>11s} {'k reference':>12s}"]
        for name, rs in groups.items():
            rs = sorted(rs, key=lambda r: r["size"])
            if len(rs) < 2:
                continue
            a, b = rs[0], rs[-1]
            span = math.log(b["size"] / a["size"])
            k = math.log(b["polybias_s"] / a["polybias_s"]) / span
            kr = (math.log(b["reference_s"] / a["reference_s"]) / span
                  if a.get("reference_s") and b.get("reference_s") else None)
            sizes = " -> ".join(f"{r['size']:,}" for r in rs)
            lines.append(f"{name[:50]:50s} {sizes:>22s} {k:11.2f} {'-' if kr is None else f'{kr:.2f}':>12s}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="smoke run: small sizes, about a minute")
    parser.add_argument("--only", default="", help="comma-separated topics (permutation, sweep, ...)")
    parser.add_argument("--reference-python", help="python of an environment with wefe installed")
    parser.add_argument("--iterations", type=int, default=200, help="WEFE permutations")
    parser.add_argument("--timeout", type=int, default=1800, help="seconds per benchmark module")
    parser.add_argument("--device", default="cpu", help="cpu (default) or cuda[:N], for the "
                        "benchmarks that take a device (bench_engine, bench_overhead, bench_precision)")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    device = resolve_device(args.device)
    if args.child:
        child(Path(args.child), args.quick, args.reference_python, device)
        return
    only = {t.strip() for t in args.only.split(",") if t.strip()}
    rows: list[dict] = []
    if not only or "permutation" in only:
        rows += bench_permutation([1_000, 10_000] if args.quick else [1_000, 10_000, 100_000])
    for path in sorted((ROOT / "benchmarks").glob("bench_*.py")):
        if not only or path.stem.removeprefix("bench_") in only:
            # the WEFE comparisons take minutes: not in a smoke run
            rows += run_module(path, args.quick, None if args.quick else args.reference_python,
                               args.timeout, device)
    if args.reference_python and not args.quick and (not only or "wefe" in only):
        rows += bench_wefe(args.reference_python, args.iterations)
    print(summary(rows))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
