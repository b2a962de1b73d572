"""WEFE side: WEAT (statistic, effect size, per-word association, p-value) and RND.

Request: {"vectors": word2vec text file, "weat": [{"name", "targets": [X, Y],
"attributes": [A, B], "p_iterations": 0 or N, "p_test_type": "right-sided" | ...,
"runs": 1}], "rnd": [{"name", "targets": [T0, T1], "attribute": [...]}]}.
Answer: {"version", "weat": [{"name", "weat", "effect_size", "s_x", "s_y", "p_values",
"seconds", "rng_calls", "choice_replace", "draws_with_repeats", "draws"}],
"rnd": [{"name", "rnd", "distance_by_word"}]}.

The p-value runs record how WEFE 1.0.1 draws its permutations
(``wefe/metrics/WEAT.py``, ``WEAT._calc_p_value``): the arguments of every
``np.random.default_rng`` call (no seed) and of every ``Generator.choice`` call
(``replace`` left at its default, True), and how many drawn "permutations" repeat a word.
"""

import importlib.metadata
import json
import sys
import time

import numpy as np
from gensim.models import KeyedVectors
from wefe.metrics import RND, WEAT
from wefe.query import Query
from wefe.word_embedding_model import WordEmbeddingModel

_real_default_rng = np.random.default_rng
LOG = {"rng_calls": [], "replace": [], "draws": 0, "repeats": 0}


class RecordingGenerator:
    """A numpy Generator that records the arguments and outcome of ``choice``."""

    def __init__(self, generator):
        self._generator = generator

    def choice(self, a, size=None, replace=True, *args, **kwargs):
        out = self._generator.choice(a, size, replace, *args, **kwargs)
        LOG["replace"].append(bool(replace))
        LOG["draws"] += 1
        LOG["repeats"] += int(len(set(out.tolist())) < len(out))
        return out

    def __getattr__(self, name):
        return getattr(self._generator, name)


def recording_default_rng(*args, **kwargs):
    LOG["rng_calls"].append({"args": [repr(a) for a in args], "kwargs": sorted(kwargs)})
    return RecordingGenerator(_real_default_rng(*args, **kwargs))


def main() -> None:
    request = json.load(sys.stdin)
    kv = KeyedVectors.load_word2vec_format(request["vectors"], binary=False)
    model = WordEmbeddingModel(kv, "peer-test-vectors")
    np.random.default_rng = recording_default_rng  # what WEAT._calc_p_value calls
    answer = {"version": importlib.metadata.version("wefe"), "weat": [], "rnd": []}
    weat = WEAT()
    for q in request.get("weat", []):
        query = Query(q["targets"], q["attributes"], ["X", "Y"], ["A", "B"])
        plain = weat.run_query(query, model, return_effect_size=True)
        vec = {name: np.array([kv[w] for w in words]) for name, words in
               zip("XYAB", [*q["targets"], *q["attributes"]], strict=True)}
        s_x = [float(weat._calc_s(x, vec["A"], vec["B"])) for x in vec["X"]]
        s_y = [float(weat._calc_s(y, vec["A"], vec["B"])) for y in vec["Y"]]
        p_values, seconds = [], []
        for key in LOG:
            LOG[key] = [] if isinstance(LOG[key], list) else 0
        for _ in range(int(q.get("runs", 1)) if q.get("p_iterations") else 0):
            t0 = time.perf_counter()
            result = weat.run_query(query, model, calculate_p_value=True,
                                    p_value_iterations=int(q["p_iterations"]),
                                    p_value_test_type=q.get("p_test_type", "right-sided"))
            seconds.append(time.perf_counter() - t0)
            p_values.append(float(result["p_value"]))
        answer["weat"].append({
            "name": q["name"], "weat": float(plain["weat"]), "effect_size": float(plain["effect_size"]),
            "s_x": s_x, "s_y": s_y, "p_values": p_values, "seconds": seconds,
            "rng_calls": LOG["rng_calls"], "choice_replace": sorted(set(LOG["replace"])),
            "draws": LOG["draws"], "draws_with_repeats": LOG["repeats"]})
    for q in request.get("rnd", []):
        query = Query(q["targets"], [q["attribute"]], ["T0", "T1"], ["A"])
        result = RND().run_query(query, model, normalize=True)
        answer["rnd"].append({"name": q["name"], "rnd": float(result["rnd"]),
                              "distance_by_word": {w: float(d) for w, d in result["distance_by_word"].items()}})
    print(json.dumps(answer))


if __name__ == "__main__":
    main()
