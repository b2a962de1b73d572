"""Debiasing benchmarks: polybias.metrics.debias against the reference algorithms, re-executed
as published, on the embedded w2v-gnews (13k x 300), in the same run.

* hard debias against Bolukbasi et al.'s debiaswe ``debias`` (a Python loop over the
  vocabulary, float32), with debiaswe's word lists when the data mirror is set
  (POLYBIAS_DATA_MIRROR) and the project's English lists otherwise;
* INLP against Ravfogel et al.'s ``get_debiasing_projection`` (sum of d x d row-space
  projections and ``scipy.linalg.orth`` after every classifier);
* a linear projection against a per-word loop.

Prints one line per benchmark with both times, the speed ratio and the largest
difference of the outputs; ``main()`` returns the rows.
"""

from __future__ import annotations

import os
import time

import numpy as np
from polybias import models
from polybias.metrics import debias
from polybias.studies import debiasing


def debiaswe_hard_debias(words, vecs, gender_specific, definitional, equalize):
    """debiaswe's ``debias`` (debias.py + we.py) as published: float32, sklearn PCA,
    ``drop`` per word outside the gender-specific set, equalise lower/Title/UPPER forms.
    Returns the vectors and the gender direction (tests/metrics/test_debias.py checks against it)."""
    from sklearn.decomposition import PCA

    vecs = np.array(vecs, dtype="float32")
    vecs /= np.linalg.norm(vecs, axis=1)[:, np.newaxis]
    index = {w: i for i, w in enumerate(words)}

    def v(w):
        return vecs[index[w]]

    def drop(u, d):
        return u - d * u.dot(d) / d.dot(d)

    matrix = []
    for a, b in definitional:
        center = (v(a) + v(b)) / 2
        matrix += [v(a) - center, v(b) - center]
    gender_direction = PCA(n_components=10).fit(np.array(matrix)).components_[0]
    specific_set = set(gender_specific)
    for i, w in enumerate(words):
        if w not in specific_set:
            vecs[i] = drop(vecs[i], gender_direction)
    vecs /= np.linalg.norm(vecs, axis=1)[:, np.newaxis]
    candidates = {x for e1, e2 in equalize for x in [(e1.lower(), e2.lower()),
                                                     (e1.title(), e2.title()),
                                                     (e1.upper(), e2.upper())]}
    for a, b in candidates:
        if a in index and b in index:
            y = drop((v(a) + v(b)) / 2, gender_direction)
            z = np.sqrt(1 - np.linalg.norm(y) ** 2)
            if (v(a) - v(b)).dot(gender_direction) < 0:
                z = -z
            vecs[index[a]] = z * gender_direction + y
            vecs[index[b]] = -z * gender_direction + y
    vecs /= np.linalg.norm(vecs, axis=1)[:, np.newaxis]
    return vecs, gender_direction


def ravfogel_inlp(X, y, X_dev, y_dev, n):
    """Ravfogel et al.'s ``get_debiasing_projection`` (autoregressive, min_accuracy 0):
    projection matrices on each classifier's row space (``scipy.linalg.orth``), and
    ``P = I − orth(Σ P_Wi)`` after every step. Returns ``P`` and each classifier's dev
    accuracy (tests/metrics/test_debias.py checks against both)."""
    import scipy.linalg
    from sklearn.svm import LinearSVC

    def rowspace(W):
        basis = scipy.linalg.orth(W.T)
        return basis @ basis.T

    d = X.shape[1]
    projections, accs = [], []
    Xc = X.copy()
    P = np.eye(d)
    for _ in range(n):
        clf = LinearSVC(fit_intercept=False, dual=False, random_state=0).fit(Xc, y)
        accs.append(clf.score(X_dev @ P, y_dev))
        projections.append(rowspace(clf.coef_))
        P = np.eye(d) - rowspace(np.sum(projections, axis=0))
        Xc = (P @ X.T).T
    return P, accs


def _time(fn, repeat=3):
    best, out = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def _lists():
    if os.environ.get("POLYBIAS_DATA_MIRROR"):
        return ("debiaswe lists",
                debiasing.load_source_pairs("debiaswe-definitional-pairs"),
                debiasing.load_source_pairs("debiaswe-equalize-pairs"),
                debiasing.load_source_words("debiaswe-gender-specific-full"))
    spec = debiasing.load_spec("en")
    specific = [w for s in ("gender_specific", "male_terms", "female_terms") for w in spec.sets[s].words]
    specific += [w for p in ("definitional", "equalise", "roles") for pair in spec.pairs[p].pairs for w in pair]
    return ("project lists", spec.pairs["definitional"].pairs, spec.pairs["equalise"].pairs, specific)


def bench_wefe(python: str) -> list[dict]:
    """WEFE's HardDebias in its own environment (``benchmarks/debias_vs_wefe.py``)."""
    import json
    import subprocess
    from pathlib import Path

    root = Path(__file__).resolve().parents[1]
    out = subprocess.run([python, str(root / "benchmarks" / "debias_vs_wefe.py")], check=True,
                         capture_output=True, text=True, cwd=root)
    r = next(json.loads(line) for line in out.stdout.splitlines() if line.startswith("{"))
    print(f"WEFE 1.0.1 HardDebias vs polybias (debiaswe lists): |cos| of directions "
          f"{r['direction_abs_cos']:.12f}; max |diff| {r['max_abs_diff_not_equalised']:.1e} "
          f"(other words), {r['max_abs_diff_equalised']:.1e} ({r['n_equalised_words']} equalised words)")
    return [{"benchmark": f"hard debias, {r['n_words']:,} words (debiaswe lists)",
             "reference": "WEFE 1.0.1 HardDebias", "reference_s": r["wefe_seconds"],
             "polybias_s": r["polybias_seconds"],
             "max_abs_diff": max(r["max_abs_diff_not_equalised"], r["max_abs_diff_equalised"])}]


def main(inlp_words: int = 500, inlp_iterations: int = 35,
         reference_python: str | None = None) -> list[dict]:
    """Run the benchmarks; with ``reference_python`` (an interpreter with wefe and the data
    mirror set) also compare with WEFE's HardDebias."""
    emb = models.load("w2v-gnews", "static")
    rows = []

    label, definitional, equalize, specific = _lists()
    t_ref, (ref, _) = _time(lambda: debiaswe_hard_debias(emb.words, emb.vectors, specific, definitional, equalize))
    t_ours, ours = _time(lambda: debias.hard_debias(emb, definitional, equalize, specific,
                                                    case_variants=True, on_missing="drop"))
    rows.append({"benchmark": f"hard debias, {len(emb):,} words ({label})",
                 "reference": "debiaswe debias (re-executed)", "reference_s": t_ref,
                 "polybias_s": t_ours,
                 "max_abs_diff": float(np.abs(ours.embeddings.vectors - ref).max())})

    he_she = debias.pair_direction(emb, "he", "she")
    male, female = debias.extreme_words(emb, he_she, inlp_words)
    tr, ytr, te, yte = debias.split_words([male, female], 0.3, seed=0)
    unit = emb.vectors / np.linalg.norm(emb.vectors, axis=1)[:, None]
    X = unit[[emb.index[w] for w in tr]].astype(np.float64)
    Xd = unit[[emb.index[w] for w in te]].astype(np.float64)
    t_ref, (P_ref, _) = _time(lambda: ravfogel_inlp(X, ytr, Xd, yte, inlp_iterations), repeat=1)
    t_ours, res = _time(lambda: debias.inlp(X, ytr, Xd, yte, n_iterations=inlp_iterations), repeat=1)
    rows.append({"benchmark": f"INLP, {inlp_iterations} linear SVMs on {len(tr)} words",
                 "reference": "nullspace_projection get_debiasing_projection (re-executed)",
                 "reference_s": t_ref, "polybias_s": t_ours,
                 "max_abs_diff": float(np.abs(res.projection - P_ref).max())})

    sub = debias.pca_subspace(emb, pairs=definitional, k=1)
    g = sub.basis[0]

    def loop():
        V = emb.vectors.astype(np.float64)
        for i in range(len(V)):
            V[i] = V[i] - g * V[i].dot(g)
        return V

    t_ref, V_ref = _time(loop)
    t_ours, lp = _time(lambda: debias.linear_projection(emb, sub))
    rows.append({"benchmark": f"linear projection, {len(emb):,} words",
                 "reference": "per-word loop", "reference_s": t_ref, "polybias_s": t_ours,
                 "max_abs_diff": float(np.abs(lp.embeddings.vectors - V_ref).max())})

    if reference_python and os.environ.get("POLYBIAS_DATA_MIRROR"):
        rows += bench_wefe(reference_python)
    for r in rows:
        print(f"{r['benchmark']}: reference {r['reference_s']:.3f} s ({r['reference']}), "
              f"polybias {r['polybias_s']:.3f} s, ratio {r['reference_s'] / r['polybias_s']:.1f}x, "
              f"max |diff| {r['max_abs_diff']:.1e}")
    return rows


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reference-python", help="interpreter with wefe installed (.venv-bench)")
    main(reference_python=parser.parse_args().reference_python)
