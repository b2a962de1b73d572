"""mlm-bias side: BiasMLM.evaluate on CrowS-style pairs (CSPS, SSS, AUL, AULA).

Request: {"model": checkpoint folder, "pairs": [[bias_type, sent_more, sent_less], ...],
"measures": ["csps", "sss", "aul"], "threads": 1, "time_measures": [["csps"], ["aul"]]}.
Answer: {"version", "eval_results": {"S1": {measure: [...]}, "S2": {...}},
"bias_scores": {measure: {"total": %, bias_type: %}}, "weights_max_abs_diff_before_load",
"seconds", "timings": {"csps": seconds of one evaluate call with those measures, ...}}
(``measures`` and ``time_measures`` are optional; ``"aul"`` also gives AULA).

mlm-bias 0.1.7 builds ``BiasMLM.model`` with ``AutoModelForMaskedLM.from_config``
(``mlm_bias/compute_mlm_bias.py``, ``BiasMLM.__init__``): random weights, not the
checkpoint's. The driver reports how far those weights are from the checkpoint's, then
loads the checkpoint's state dict into the model (strict) so that the measures are
computed on the same weights as polybias's.
"""

import importlib.metadata
import json
import sys
import time

import torch
from mlm_bias import BiasDataset, BiasMLM
from transformers import AutoModelForMaskedLM


def main() -> None:
    request = json.load(sys.stdin)
    torch.set_num_threads(int(request.get("threads", 1)))
    # BiasMLM's from_config initialisation draws from torch's RNG: a seed other than the
    # tiny checkpoint's own initialisation seed (0), as any trained checkpoint would differ
    torch.manual_seed(12345)
    bias_types, dis, adv = (list(column) for column in zip(*request["pairs"], strict=True))
    mlm = BiasMLM(request["model"], BiasDataset(bias_types, dis, adv))
    checkpoint = AutoModelForMaskedLM.from_pretrained(request["model"]).state_dict()
    own = mlm.model.state_dict()
    before = max(float((own[k].float() - v.float()).abs().max()) for k, v in checkpoint.items())
    mlm.model.load_state_dict(checkpoint, strict=True)
    mlm.model.eval()
    answer = {"version": importlib.metadata.version("mlm-bias"),
              "weights_max_abs_diff_before_load": before, "timings": {}}
    for measures in request.get("time_measures", []):
        t0 = time.perf_counter()
        mlm.evaluate(measures=list(measures), attention=True)
        answer["timings"]["+".join(measures)] = time.perf_counter() - t0
    if request.get("measures"):
        t0 = time.perf_counter()
        results = mlm.evaluate(measures=list(request["measures"]), attention=True)
        answer["seconds"] = time.perf_counter() - t0
        answer["eval_results"] = {s: {m: [float(v) for v in vs] for m, vs in results.eval_results[s].items()}
                                  for s in ("S1", "S2")}
        answer["bias_types"] = results.eval_results["bias_types"]
        answer["bias_scores"] = results.bias_scores
    print(json.dumps(answer))


if __name__ == "__main__":
    main()
