"""WEAT with p-value: polybias against WEFE's WEAT query on the same vectors and word sets.

Runs in an environment that has ``wefe`` installed (WEFE pins old numpy/scipy, so
``make bench`` keeps it in its own venv); polybias is imported from ``lib/``.
Prints one JSON object per test on stdout.

Definitions differ, so the effect sizes are compared with ddof=0 (WEFE's np.std)
and the p-values are reported, not asserted: WEFE draws each "permutation" with
replacement from X ∪ Y (rng.choice without replace=False), unseeded, and keeps
drawing until it has seen ``iterations`` distinct tuples; polybias draws true
re-splits without replacement (seeded) or enumerates them exactly.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))

from gensim.models import KeyedVectors  # noqa: E402
from polybias import models  # noqa: E402
from polybias.data import wordlists
from polybias.studies.weat import weat_on_embedding  # noqa: E402
from wefe.metrics import WEAT  # noqa: E402
from wefe.query import Query  # noqa: E402
from wefe.word_embedding_model import WordEmbeddingModel  # noqa: E402


def main(iterations: int = 10_000) -> None:
    emb = models.load("w2v-gnews", "static")
    kv = KeyedVectors(emb.dim)
    kv.add_vectors(emb.words, emb.vectors)
    model = WordEmbeddingModel(kv, "w2v-gnews")
    metric = WEAT()
    for name, test in wordlists.load_tests("en").items():
        sets = {r: [w for w in s.words if w in emb] for r, s in test.sets().items()}
        query = Query([sets["X"], sets["Y"]], [sets["A"], sets["B"]],
                      [test.X.name, test.Y.name], [test.A.name, test.B.name])
        t0 = time.perf_counter()
        ref = metric.run_query(query, model, calculate_p_value=True, p_value_iterations=iterations,
                               lost_vocabulary_threshold=1.0)
        t_ref = time.perf_counter() - t0
        t0 = time.perf_counter()
        ours = weat_on_embedding(emb, test, on_missing="drop", n_permutations=iterations, exact_limit=0, ddof=0)
        t_ours = time.perf_counter() - t0
        t0 = time.perf_counter()
        ours_default = weat_on_embedding(emb, test, on_missing="drop", n_permutations=iterations)
        t_default = time.perf_counter() - t0
        print(json.dumps({
            "test": name, "iterations": iterations,
            "wefe_seconds": t_ref, "polybias_mc_seconds": t_ours, "polybias_default_seconds": t_default,
            "wefe_effect_size": float(ref["effect_size"]), "polybias_effect_size_ddof0": ours.effect_size,
            "wefe_p": float(ref["p_value"]), "polybias_mc_p": ours.pvalue,
            "polybias_default_p": ours_default.pvalue, "polybias_default_method": ours_default.p_method,
            "effect_size_abs_diff": abs(float(ref["effect_size"]) - ours.effect_size),
        }), flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 10_000)
