"""Fidelity of half precision: bfloat16 and float16 against float32 on the trained planted
models, measure by measure.

    .venv/bin/python benchmarks/bench_precision.py [--device cuda] [--pairs 500] [--quick]

The planted models (``planted-mlm`` and ``planted-causal``, trained with p = 0.9, and
their controls trained with p = 0.5, whose pairs are near ties; float64 weights) are cast to float32, bfloat16 and float16 and score the same planted
minimal pairs (:func:`polybias.planted.synthetic.minimal_pairs`) with every CrowS-Pairs
method of their kind and the JSD attribution score. For each measure and precision the
table gives the share of pairs whose decision is the same as in float32 (the pair counted
as stereotyping: ``score_more > score_less``; for JSD: S_JSD < 0), the largest absolute
difference of the per-pair score (nats; S_JSD for JSD), and the stereotype score (% of
pairs) in float32 and in that precision.

float16 runs on CUDA only in the engines; on the CPU this benchmark still measures it by
running the float16 weights on the CPU (its kernels accumulate in float32 like CUDA's, but
may round differently), and says so.
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import os
import sys
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))

import numpy as np  # noqa: E402
import torch  # noqa: E402
from devices import DTYPES, describe, resolve_device  # noqa: E402

_MASKED = [("CrowS nangia", "nangia"), ("CrowS sss", "sss"), ("CrowS aul", "aul"),
           ("JSD attribution", "jsd")]
_CAUSAL = [("CrowS causal", "causal"), ("JSD attribution", "jsd")]
#: per model, the measures compared: (label, pair_scores method or "jsd"); the control
#: models (p = 0.5) prefer neither sentence, so their pairs are near ties: the hard case
MEASURES = {"planted-mlm": _MASKED, "planted-mlm-control": _MASKED,
            "planted-causal": _CAUSAL, "planted-causal-control": _CAUSAL}


def cast(lm, dtype: torch.dtype, device: str):
    """A copy of the loaded model in ``dtype`` on ``device`` (float16 on the CPU included:
    the wrapper's CUDA-only rule is bypassed here, to measure)."""
    model = copy.deepcopy(lm.model).to(device=device, dtype=dtype)
    model.eval()
    return dataclasses.replace(lm, model=model, device=device)


def decisions(lm, pairs, method: str) -> tuple[np.ndarray, np.ndarray]:
    """(per-pair score, per-pair decision) of one measure."""
    from polybias.engines.pair_scores import jsd_attributions, pair_scores

    if method == "jsd":
        out = jsd_attributions(lm, pairs)
        return out["sjsd"].to_numpy(float), out["biased"].to_numpy(bool)
    out = pair_scores(lm, pairs, method=method)
    diff = (out["score_more"] - out["score_less"]).to_numpy(float)
    return diff, diff > 0


def measure(name: str, pairs, device: str, dtypes: list[str]) -> list[dict]:
    from polybias import models

    base = models.load(name, "lm", device="cpu")
    rows = []
    reference = cast(base, torch.float32, device)
    for label, method in MEASURES[name]:
        ref_score, ref_dec = decisions(reference, pairs, method)
        for dtype in dtypes:
            score, dec = decisions(cast(base, DTYPES[dtype], device), pairs, method)
            rows.append({"model": name, "measure": label, "dtype": dtype, "pairs": len(pairs),
                         "agree": float(np.mean(dec == ref_dec)),
                         "max_diff": float(np.max(np.abs(score - ref_score))),
                         "score_fp32": float(100 * np.mean(ref_dec)), "score": float(100 * np.mean(dec))})
    return rows


def main(quick: bool = False, device: str = "cpu", argv: list[str] | None = None) -> list[dict]:
    from polybias.planted.synthetic import minimal_pairs

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--device", default=None, help="cpu (default) or cuda[:N]")
    parser.add_argument("--pairs", type=int, default=500, help="planted minimal pairs")
    parser.add_argument("--dtypes", default="bf16,fp16")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    device = resolve_device(args.device or device)
    torch.set_num_threads(1)
    n = 60 if (quick or args.quick) else args.pairs
    pairs = minimal_pairs(n=n, language="en", seed=0)
    dtypes = args.dtypes.split(",")
    print(f"half precision against float32 on the trained planted models, {describe(device)}, "
          f"torch {torch.__version__}; {len(pairs)} planted minimal pairs"
          + ("; fp16 run on the CPU (the engines allow it on CUDA only)" if "fp16" in dtypes
             and device == "cpu" else ""))
    rows = [r for name in MEASURES for r in measure(name, pairs, device, dtypes)]
    print(f"{'model':22s} {'measure':16s} {'dtype':5s} {'same decision':>13s} {'largest |diff|':>14s} "
          f"{'score fp32':>10s} {'score':>7s}")
    for r in rows:
        print(f"{r['model']:22s} {r['measure']:16s} {r['dtype']:5s} {100 * r['agree']:12.1f}% "
              f"{r['max_diff']:14.2e} {r['score_fp32']:9.1f}% {r['score']:6.1f}%")
    return [{"benchmark": f"{r['model']} {r['measure']} {r['dtype']}: same decisions as fp32",
             "reference": "float32", "reference_s": None, "polybias_s": None, **r} for r in rows]


if __name__ == "__main__":
    main()
