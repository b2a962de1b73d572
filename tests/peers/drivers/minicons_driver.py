"""minicons side: MaskedLMScorer token and sequence pseudo-log-likelihoods.

Request: {"model": checkpoint folder, "texts": [...], "metrics": ["original",
"within_word_l2r"], "threads": 1, "repeat": 1}.

minicons 0.3.39 needs transformers 4, whose AutoTokenizer does not know the generic
``TokenizersBackend`` class that transformers 5 writes into ``tokenizer_config.json``;
the driver loads the same ``tokenizer.json`` and special tokens with
``PreTrainedTokenizerFast`` and hands it to the scorer.
Answer: {"version", "results": {metric: {"tokens": [[...]], "token_scores": [[...]],
"sums": [...]}}, "seconds": {metric: best of ``repeat`` sequence_score timings}}.
"""

import importlib.metadata
import json
import sys
import time

import torch
from minicons import scorer
from transformers import PreTrainedTokenizerFast


def main() -> None:
    request = json.load(sys.stdin)
    torch.set_num_threads(int(request.get("threads", 1)))
    tokenizer = PreTrainedTokenizerFast.from_pretrained(request["model"])
    lm = scorer.MaskedLMScorer(request["model"], "cpu", tokenizer=tokenizer)
    texts = list(request["texts"])
    results, seconds = {}, {}
    for metric in request["metrics"]:
        tokens = lm.token_score(texts, PLL_metric=metric)
        times, sums = [], None
        for _ in range(int(request.get("repeat", 1))):
            t0 = time.perf_counter()
            sums = lm.sequence_score(texts, reduction=lambda x: x.sum(0).item(), PLL_metric=metric)
            times.append(time.perf_counter() - t0)
        results[metric] = {"tokens": [[t for t, _ in row] for row in tokens],
                           "token_scores": [[float(s) for _, s in row] for row in tokens],
                           "sums": [float(s) for s in sums]}
        seconds[metric] = min(times)
    print(json.dumps({"version": importlib.metadata.version("minicons"), "results": results,
                      "seconds": seconds}))


if __name__ == "__main__":
    main()
