"""Run lm-evaluation-harness on CrowS-Pairs tasks from local files (runs in .venv-peers/lm-eval).

Request (JSON on stdin):
    model_dir      a local causal LM folder (safetensors + tokenizer) for lm-eval's ``hf`` model
    include_path   folder of task YAMLs (``TaskManager(include_path=...)``)
    tasks          task names to run
    english_csv    optional: a CSV in the column format of lm-eval's own crows_pairs_english
                   dataset; lm-eval's installed ``crows_pairs_english.yaml`` and ``utils.py``
                   are copied into ``include_path`` with only the dataset lines pointed at it
                   (task ``crows_pairs_english_local``)
Answer (JSON on stdout): lm-eval's version, per task ``pct_stereotype`` and
``likelihood_diff`` and, per document (in ``doc_id`` order), the two log-likelihoods.
"""

import json
import shutil
import sys
from importlib.metadata import version
from pathlib import Path

import lm_eval
from lm_eval.tasks import TaskManager

LOCAL_ENGLISH = "crows_pairs_english_local"


def local_english(include: Path, csv_path: str) -> None:
    """lm-eval's own crows_pairs_english task, dataset lines replaced by the local CSV."""
    source = Path(lm_eval.__file__).parent / "tasks" / "crows_pairs"
    folder = include / "lm_eval_english"
    folder.mkdir()
    shutil.copy(source / "utils.py", folder / "utils.py")
    lines = []
    for line in (source / "crows_pairs_english.yaml").read_text().splitlines():
        if line.startswith("dataset_path:"):
            lines += ["dataset_path: csv", "dataset_kwargs:", "  data_files:",
                      f"    test: {json.dumps(csv_path)}", "  keep_default_na: false"]
        elif line.startswith("dataset_name:"):
            continue
        elif line.startswith("task:"):
            lines.append(f"task: {LOCAL_ENGLISH}")
        elif line.strip() == "- crows_pairs":  # the tag would clash with the installed group
            lines.append("  - crows_pairs_local")
        else:
            lines.append(line)
    (folder / "crows_pairs_english_local.yaml").write_text("\n".join(lines) + "\n")


def main() -> None:
    request = json.load(sys.stdin)
    include = Path(request["include_path"])
    tasks = list(request["tasks"])
    if request.get("english_csv"):
        local_english(include, request["english_csv"])
        tasks.append(LOCAL_ENGLISH)
    out = lm_eval.simple_evaluate(
        model="hf", model_args=f"pretrained={request['model_dir']},dtype=float32",
        tasks=tasks, task_manager=TaskManager(include_path=str(include)), log_samples=True,
        device="cpu", batch_size=1)
    answer = {"version": version("lm-eval"), "tasks": {}}
    for task in tasks:
        metrics = out["results"][task]
        samples = sorted(out["samples"][task], key=lambda s: s["doc_id"])
        answer["tasks"][task] = {
            "pct_stereotype": float(metrics["pct_stereotype,none"]),
            "likelihood_diff": float(metrics["likelihood_diff,none"]),
            "n": len(samples),
            "loglikelihoods": [[float(r[0]) for r in s["filtered_resps"]] for s in samples],
            "sent_more": [s["doc"]["sent_more"] for s in samples],
        }
    print(json.dumps(answer))


if __name__ == "__main__":
    main()
