"""Hard debias: polybias against WEFE's HardDebias on the same vectors and word lists.

Runs in an environment with ``wefe`` installed (``make bench`` keeps it in its own venv);
polybias is imported from ``lib/``. Prints one JSON object on stdout.

Definitions differ in one place: WEFE reads the equalise pairs' vectors when it is
fitted, before neutralising, and chooses each pair's side from those vectors; debiaswe
(and polybias) equalise the neutralised, renormalised vectors. The two therefore agree
on every word when all equalise words are gender-specific (true of debiaswe's lists,
used here) and may differ on equalised words that are not.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lib"))

import numpy as np  # noqa: E402
from gensim.models import KeyedVectors  # noqa: E402
from polybias import models
from polybias.metrics import debias  # noqa: E402
from polybias.studies import debiasing
from wefe.debias.hard_debias import HardDebias  # noqa: E402
from wefe.word_embedding_model import WordEmbeddingModel  # noqa: E402


def main() -> None:
    emb = models.load("w2v-gnews", "static")
    definitional = debiasing.load_source_pairs("debiaswe-definitional-pairs")
    equalize = debiasing.load_source_pairs("debiaswe-equalize-pairs")
    specific = debiasing.load_source_words("debiaswe-gender-specific-full")
    kv = KeyedVectors(emb.dim)
    kv.add_vectors(emb.words, emb.vectors)
    model = WordEmbeddingModel(kv, "w2v-gnews")
    t0 = time.perf_counter()
    hd = HardDebias(verbose=False).fit(model, definitional_pairs=[list(p) for p in definitional],
                                       equalize_pairs=[list(p) for p in equalize])
    out = hd.transform(model, ignore=specific, copy=True)
    t_ref = time.perf_counter() - t0
    ref = np.vstack([out[w] for w in emb.words])
    t0 = time.perf_counter()
    ours = debias.hard_debias(emb, definitional, equalize, specific, case_variants=True,
                              on_missing="drop")
    t_ours = time.perf_counter() - t0
    V = ours.embeddings.vectors
    equalised = {w for p in ours.details["equalised"] for w in p}
    rest = np.array([w not in equalised for w in emb.words])
    g_ref = np.asarray(hd.bias_direction_, dtype=np.float64)
    print(json.dumps({
        "wefe_seconds": t_ref, "polybias_seconds": t_ours,
        "direction_abs_cos": float(abs(g_ref @ ours.removed.basis[0]) / np.linalg.norm(g_ref)),
        "max_abs_diff_not_equalised": float(np.abs(V[rest] - ref[rest]).max()),
        "max_abs_diff_equalised": float(np.abs(V[~rest] - ref[~rest]).max()),
        "n_equalised_words": int((~rest).sum()), "n_words": len(emb.words),
    }), flush=True)


if __name__ == "__main__":
    main()
