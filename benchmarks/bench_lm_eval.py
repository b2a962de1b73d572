"""CrowS-Pairs scored as lm-evaluation-harness scores it: polybias's batched engine
(``pair_scores(method="lm-eval")`` and ``lm_eval_metrics``) against lm-eval's own
``simple_evaluate`` (``hf`` model, batch size 1, its default), same model, same pairs,
same run.

    .venv/bin/python benchmarks/bench_lm_eval.py [--pairs 200] [--quick]
        [--lm-eval-python .venv-peers/lm-eval/bin/python]

The model is a GPT-2 with random weights (GPT-2 small's depth and width, a tokenizer
trained on the pairs; ``--quick``: 2 layers), saved to a temporary folder that both sides
load; the pairs are the synthetic CrowS-like pairs of ``bench_aul.py``, written as a
CSV task in lm-eval's crows_pairs format. Both timings include loading the model from
the folder; lm-eval's also includes building its task (``datasets``' csv builder). Both
sides run on 2 threads; the two ``pct_stereotype`` must be equal. Without the lm-eval
environment (``make -o .venv/.installed .venv-peers/lm-eval/.installed``) the benchmark
says so and contributes no row.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import torch  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_PYTHON = ROOT / ".venv-peers" / "lm-eval" / "bin" / "python"
GPT2_SMALL = dict(n_embd=768, n_layer=12, n_head=12, n_inner=3072, n_positions=1024)
TASK = "bench_crows_local"

LM_EVAL_CHILD = """
import json, sys, time
t0 = time.perf_counter()
import torch
torch.set_num_threads(2)
import lm_eval
from lm_eval.tasks import TaskManager
t1 = time.perf_counter()
req = json.loads(sys.argv[1])
out = lm_eval.simple_evaluate(model="hf", model_args=f"pretrained={req['model']},dtype=float32",
                              tasks=[req['task']], task_manager=TaskManager(include_path=req['include']),
                              device="cpu", batch_size=1)
t2 = time.perf_counter()
r = out["results"][req["task"]]
print(json.dumps({"import_s": t1 - t0, "evaluate_s": t2 - t1, "pct_stereotype": r["pct_stereotype,none"],
                  "likelihood_diff": r["likelihood_diff,none"]}))
"""


def _task_folder(folder: Path, pairs) -> Path:
    from polybias.data.lm_eval_tasks import UTILS

    include = folder / "tasks"
    include.mkdir()
    (include / "utils.py").write_text(UTILS)
    csv = include / "pairs.csv"
    pairs.assign(stereo_antistereo="stereo").to_csv(csv, index=False)
    (include / f"{TASK}.yaml").write_text("\n".join([
        f"task: {TASK}", "dataset_path: csv", "dataset_kwargs:", "  data_files:",
        f"    test: {json.dumps(str(csv))}", "  keep_default_na: false", "test_split: test",
        "output_type: multiple_choice", 'doc_to_text: ""', "doc_to_target: 0",
        "doc_to_choice: !function utils.doc_to_choice", 'target_delimiter: ""',
        "process_results: !function utils.process_results", "metric_list:",
        "  - metric: likelihood_diff", "    aggregation: mean", "    higher_is_better: false",
        "  - metric: pct_stereotype", "    aggregation: mean", "    higher_is_better: false",
        "metadata:", "  version: 1.0", ""]))
    return include


def main(quick: bool = False, argv: list[str] | None = None) -> list[dict]:
    from bench_aul import synthetic_pairs
    from polybias.engines.pair_scores import pair_scores
    from polybias.engines.scoring import wrap_language_model
    from polybias.metrics.crows import lm_eval_metrics
    from polybias.planted.tiny_models import CORPUS, build_tiny_model
    from transformers import AutoModelForCausalLM, AutoTokenizer

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=200)
    parser.add_argument("--quick", action="store_true", help="smoke run: 10 pairs, a 2-layer model")
    parser.add_argument("--lm-eval-python", default=str(DEFAULT_PYTHON),
                        help="python of the lm-eval environment (default: %(default)s)")
    args = parser.parse_args(argv if argv is not None else [])
    quick = quick or args.quick
    python = Path(args.lm_eval_python)
    if not python.exists():
        print(f"bench_lm_eval: skipped, no lm-eval environment at {python} (build it with "
              "`make -o .venv/.installed .venv-peers/lm-eval/.installed`)")
        return []
    n = 10 if quick else args.pairs
    torch.set_num_threads(2)
    pairs = synthetic_pairs(n)
    corpus = list(pairs.sent_more) + list(pairs.sent_less) + list(CORPUS)
    dims = dict(GPT2_SMALL, n_layer=2) if quick else GPT2_SMALL
    model, tok = build_tiny_model("gpt2", seed=0, vocab_size=8000, corpus=corpus, **dims)
    tok.model_max_length = dims["n_positions"]
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp) / "model"
        model.save_pretrained(folder, safe_serialization=True)
        tok.save_pretrained(folder)
        include = _task_folder(Path(tmp), pairs)
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1",
               "TRANSFORMERS_OFFLINE": "1", "HF_DATASETS_CACHE": str(Path(tmp) / "hf-datasets")}
        env.pop("PYTHONPATH", None)
        request = json.dumps({"model": str(folder), "include": str(include), "task": TASK})
        done = subprocess.run([str(python), "-c", LM_EVAL_CHILD, request], capture_output=True,
                              text=True, env=env, check=False)
        if done.returncode != 0:
            raise SystemExit(f"lm-eval failed:\n{done.stderr[-3000:]}")
        theirs = json.loads([x for x in done.stdout.splitlines() if x.startswith("{")][-1])
        t0 = time.perf_counter()
        lm = wrap_language_model(AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32),
                                 AutoTokenizer.from_pretrained(folder), name="gpt2-random")
        ours = lm_eval_metrics(pair_scores(lm, pairs, method="lm-eval")).iloc[0]
        polybias_s = time.perf_counter() - t0
    if ours["pct_stereotype"] != theirs["pct_stereotype"]:
        raise SystemExit(f"pct_stereotype differs: polybias {ours['pct_stereotype']} vs lm-eval "
                         f"{theirs['pct_stereotype']}")
    print(f"CrowS-Pairs as lm-eval scores it, {n} synthetic pairs, GPT-2 ({dims['n_layer']} layers, "
          f"random weights), 2 threads")
    print(f"lm-eval simple_evaluate (hf, batch 1): {theirs['evaluate_s']:.2f} s (+ import "
          f"{theirs['import_s']:.2f} s); polybias pair_scores(method='lm-eval'): {polybias_s:.2f} s")
    print(f"pct_stereotype {theirs['pct_stereotype']:.4f} = {ours['pct_stereotype']:.4f}; likelihood_diff "
          f"{theirs['likelihood_diff']:.6f} vs {ours['likelihood_diff']:.6f}")
    print(f"ratio lm-eval / polybias: {theirs['evaluate_s'] / polybias_s:.1f}x")
    return [{"benchmark": f"CrowS as lm-eval scores it, {n} pairs (GPT-2 {dims['n_layer']} layers)",
             "reference": "lm-eval simple_evaluate (hf, batch 1)", "reference_s": theirs["evaluate_s"],
             "polybias_s": polybias_s}]


if __name__ == "__main__":
    main(argv=sys.argv[1:])
