"""Debiasing static word embeddings, and the evaluation around it (seed 003, App. E).

Every method returns a :class:`DebiasResult`: a **new** :class:`~polybias.engines.static.StaticEmbeddings`
(float64; the input is never modified) and the subspace it removed. By default the whole
vocabulary is debiased. ``words=`` restricts the change to a list of words: the seed-003
code debiased only the WEAT target words, which leaves every other word (attributes
included) untouched, so its effect sizes are not those of a debiased embedding.

Bias subspaces (rows of an orthonormal ``(k, d)`` basis ``B``):

* **pair** -- one direction ``u = v̂_a − v̂_b`` (e.g. *he − she*; seed 003: *naari − nar*),
  on unit-normalised vectors.
* **paired PCA** (Bolukbasi et al. 2016, §5): for each pair ``(a, b)`` with centre
  ``μ = (v̂_a + v̂_b)/2`` the rows ``v̂_a − μ`` and ``v̂_b − μ``; ``B`` = the top ``k``
  principal directions.
* **listwise PCA** (seed 003, caste and religion: groups without pairs): the rows are the
  unit vectors of a word list centred on their mean; ``B`` = the top ``k`` directions.

Methods:

* :func:`linear_projection` (Dev & Phillips 2019; seed 003 eq. 5): ``v' = v − B^T B v``.
* :func:`hard_debias` (Bolukbasi et al. 2016, "neutralise and equalise", as in their
  ``debiaswe`` code): unit-normalise; neutralise every word outside a gender-specific
  list, ``v' = (v − B^T B v)/‖·‖``; then for each equalise pair with mean ``μ`` and
  ``ν = μ − B^T B μ``, set ``e_w = ν + √(1 − ‖ν‖²) · (w_B − μ_B)/‖w_B − μ_B‖`` (for
  ``k = 1`` this is debiaswe's ``±z g + ν``).
* :func:`lpsg` (Zhou et al. 2019; seed 003 eqs. 6-7, "linear projection with semantic
  gender"): the semantic direction with its component in the span of the grammatical
  directions removed, ``g_s = g − P_G g`` (normalised); then a linear projection along ``g_s``.
* :func:`inlp` / :func:`inlp_debias` (Ravfogel et al. 2020, iterative nullspace
  projection): repeatedly fit a linear classifier of the protected attribute, add its
  weight rows to the removed space, and project the data onto the nullspace of
  everything removed so far; ``P = I − Q^T Q`` with ``Q`` an orthonormal basis of the
  union of the classifiers' row spaces.

Evaluation (:func:`evaluate`, :func:`polybias.studies.debiasing.effect_table`) runs WEATs, and SEATs on sentence
vectors averaged from word vectors (:func:`static_seat_vectors`), on every debiased
embedding: bias-measuring (BM) tests should go towards 0, meaningful-encoding /
information-retention (IR) tests should keep their association (seed 003 Tables 3-6).
Beside each effect size it reports the unnormalised gap ``mean_X s − mean_Y s``: the
effect size is scale-free, so a nearly removed association can still show a large one.
:func:`polybias.studies.debiasing.run_table` reads a whole experiment from ``data/wordlists/<lang>/debias.yaml``.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np

from polybias.engines.static import MissingWordsError, StaticEmbeddings

Pair = tuple[str, str]
_TINY = 1e-12


class DebiasError(ValueError):
    """Bad input to a debiasing method (zero direction, rank too low, malformed spec...)."""


@dataclass(frozen=True)
class Subspace:
    """An orthonormal basis (rows) of a bias subspace, and how it was found."""

    basis: np.ndarray
    method: str
    words: tuple[str, ...] = ()
    explained_variance_ratio: np.ndarray | None = None

    @property
    def k(self) -> int:
        return int(self.basis.shape[0])


@dataclass
class DebiasResult:
    """A debiased copy of an embedding and what was removed from it."""

    embeddings: StaticEmbeddings
    removed: Subspace
    method: str
    changed_words: int
    details: dict[str, Any] = field(default_factory=dict)


# ---------------------------------------------------------------- helpers

def _check_words(emb: StaticEmbeddings, words: Iterable[str], where: str) -> None:
    missing = [w for w in dict.fromkeys(words) if w not in emb.index]
    if missing:
        raise MissingWordsError(missing, emb.name, where)


def _unit_vectors(emb: StaticEmbeddings, words: Sequence[str], where: str) -> np.ndarray:
    _check_words(emb, words, where)
    M = emb.vectors[[emb.index[w] for w in words]].astype(np.float64)
    norms = np.linalg.norm(M, axis=1)
    zero = [w for w, n in zip(words, norms, strict=True) if n <= _TINY]
    if zero:
        raise DebiasError(f"{where}: zero vectors for {', '.join(zero)} in {emb.name}")
    return M / norms[:, None]


def orthonormal_basis(vectors: np.ndarray, tol: float | None = None) -> np.ndarray:
    """Orthonormal rows spanning the rows of ``vectors`` (SVD; rank by ``tol``).

    ``tol`` defaults to ``max(shape) · eps · σ_max`` (as ``scipy.linalg.orth``); a zero
    input is an error.

    >>> orthonormal_basis(np.array([[2., 0., 0.], [1., 0., 0.], [0., 3., 0.]])).shape
    (2, 3)
    """
    V = np.atleast_2d(np.asarray(vectors, dtype=np.float64))
    if not np.isfinite(V).all():
        raise DebiasError("direction has non-finite components")
    _, s, vt = np.linalg.svd(V, full_matrices=False)
    if s.size == 0 or s[0] <= _TINY:
        raise DebiasError("zero direction: the vectors span nothing (identical words or zero vectors?)")
    tol = max(V.shape) * np.finfo(np.float64).eps * s[0] if tol is None else tol
    return vt[s > tol]


def _as_subspace(direction: Subspace | np.ndarray, dim: int) -> Subspace:
    if isinstance(direction, Subspace):
        sub = direction
    else:
        sub = Subspace(orthonormal_basis(direction), "given")
    if sub.basis.ndim != 2 or sub.basis.shape[1] != dim:
        raise DebiasError(f"subspace of shape {sub.basis.shape} does not fit {dim}-d vectors")
    gram = sub.basis @ sub.basis.T
    if not np.allclose(gram, np.eye(sub.k), atol=1e-8):
        raise DebiasError("subspace basis rows must be orthonormal (use orthonormal_basis)")
    return sub


def _new(emb: StaticEmbeddings, vectors: np.ndarray, tag: str) -> StaticEmbeddings:
    return StaticEmbeddings(f"{emb.name}+{tag}", list(emb.words), vectors, revision=emb.revision)


def _rows(emb: StaticEmbeddings, words: Sequence[str] | None, where: str) -> np.ndarray:
    """Row indices to change: all rows, or those of ``words`` (each must exist)."""
    if words is None:
        return np.arange(len(emb.words))
    _check_words(emb, words, where)
    return np.unique([emb.index[w] for w in words])


# ---------------------------------------------------------------- subspaces

def pair_direction(emb: StaticEmbeddings, a: str, b: str) -> Subspace:
    """The unit direction ``v̂_a − v̂_b`` (vectors unit-normalised first).

    >>> emb = StaticEmbeddings("toy", ["he", "she"], np.array([[2., 1.], [0., 1.]]))
    >>> pair_direction(emb, "he", "she").basis.round(3).tolist()
    [[0.851, -0.526]]
    """
    if a == b:
        raise DebiasError(f"direction pair {a!r}-{b!r} has the same word twice")
    U = _unit_vectors(emb, [a, b], f"direction pair {a}-{b}")
    diff = U[0] - U[1]
    norm = np.linalg.norm(diff)
    if norm <= 1e-9:
        raise DebiasError(f"zero direction: {a!r} and {b!r} have the same unit vector in {emb.name}")
    return Subspace((diff / norm)[None, :], "pair", (a, b), np.array([1.0]))


def _orient(basis: np.ndarray, reference: np.ndarray) -> np.ndarray:
    """Flip each basis row to have a non-negative dot product with ``reference`` rows' mean
    (or, when that is ~0, a positive largest component): deterministic signs."""
    out = basis.copy()
    ref = reference.mean(axis=0)
    for i, row in enumerate(out):
        dot = row @ ref
        if abs(dot) <= 1e-12:
            dot = row[np.argmax(np.abs(row))]
        if dot < 0:
            out[i] = -row
    return out


def pca_subspace(
    emb: StaticEmbeddings,
    pairs: Sequence[Pair] | None = None,
    words: Sequence[str] | None = None,
    k: int = 1,
) -> Subspace:
    """Top-``k`` principal directions of paired (``pairs``) or listwise (``words``) differences.

    Parameters
    ----------
    pairs : paired PCA (Bolukbasi et al. 2016): rows ``v̂_a − μ_ab`` and ``v̂_b − μ_ab``.
        The first direction is oriented from the second members towards the first.
    words : listwise PCA (seed 003 for caste, religion): unit vectors centred on their mean.
    k : number of directions kept (at most the rank of the rows).

    >>> emb = StaticEmbeddings("toy", list("abcd"), np.array(
    ...     [[1., .1, 0.], [-1., .1, 0.], [1., -.1, .2], [-1., -.1, .2]]))
    >>> pca_subspace(emb, pairs=[("a", "b"), ("c", "d")]).basis.round(3).tolist()
    [[1.0, 0.0, 0.0]]
    """
    if (pairs is None) == (words is None):
        raise DebiasError("give either pairs (paired PCA) or words (listwise PCA)")
    if pairs is not None:
        pairs = _check_pairs(pairs, "PCA pairs")
        flat = [w for p in pairs for w in p]
        U = _unit_vectors(emb, flat, "PCA pairs")
        A, B = U[0::2], U[1::2]
        mu = (A + B) / 2
        rows = np.empty_like(U)
        rows[0::2], rows[1::2] = A - mu, B - mu
        method, used, ref = "paired-pca", tuple(flat), A - B
    else:
        words = list(words)
        if len(words) < 2 or len(set(words)) < len(words):
            raise DebiasError("listwise PCA needs at least two distinct words")
        U = _unit_vectors(emb, words, "PCA word list")
        rows = U - U.mean(axis=0)
        method, used, ref = "listwise-pca", tuple(words), rows
    if not isinstance(k, int) or k < 1:
        raise DebiasError(f"k must be a positive integer, got {k!r}")
    _, s, vt = np.linalg.svd(rows, full_matrices=False)
    if s[0] <= 1e-9:
        raise DebiasError(f"zero direction: the {method} rows are all zero (identical words?)")
    rank = int((s > max(rows.shape) * np.finfo(float).eps * s[0]).sum())
    if k > rank:
        raise DebiasError(f"k={k} exceeds the rank {rank} of the {method} rows")
    var = s**2
    return Subspace(_orient(vt[:k], ref), method, used, var[:k] / var.sum())


def orthogonalize(semantic: Subspace, against: Sequence[Subspace]) -> Subspace:
    """Remove from ``semantic`` its components in the span of ``against`` (Zhou et al. 2019).

    Seed 003 eq. 6: ``g_s = g − Σ_i (g·d_i) d_i`` over an orthonormal basis ``d_i`` of the
    grammatical directions (verbs, adjectives, titles, entities), then normalised.

    >>> g = Subspace(np.array([[.6, .8, 0.]]), "given")
    >>> d = Subspace(np.array([[0., 1., 0.]]), "given")
    >>> orthogonalize(g, [d]).basis.tolist()
    [[1.0, 0.0, 0.0]]
    """
    if not against:
        return semantic
    dim = semantic.basis.shape[1]
    G = orthonormal_basis(np.vstack([_as_subspace(s, dim).basis for s in against]))
    rest = semantic.basis - (semantic.basis @ G.T) @ G
    norms = np.linalg.norm(rest, axis=1)
    if (norms <= 1e-9).any():
        raise DebiasError("zero direction: the semantic direction lies in the span of the "
                          "directions it is orthogonalised against")
    basis = orthonormal_basis(rest)
    if basis.shape[0] < semantic.k:
        raise DebiasError("orthogonalised semantic subspace lost rank")
    basis = _orient(basis, rest)
    return Subspace(basis, f"{semantic.method}⊥{len(against)}", semantic.words)


# ---------------------------------------------------------------- methods

def _subtract(V: np.ndarray, coef: np.ndarray, basis: np.ndarray) -> None:
    """In place ``V -= coef @ basis``, one rank-1 update per direction (no BLAS threads
    for the common k = 1)."""
    for j in range(basis.shape[0]):
        V -= np.multiply.outer(coef[:, j], basis[j])


def project_out(vectors: np.ndarray, direction: Subspace | np.ndarray) -> np.ndarray:
    """``V − (V B^T) B``: the rows of ``vectors`` with the subspace removed (a new array).

    >>> project_out(np.array([[1., 2.]]), np.array([[0., 1.]])).tolist()
    [[1.0, 0.0]]
    """
    V = np.asarray(vectors, dtype=np.float64)
    sub = _as_subspace(direction, V.shape[-1])
    return V - (V @ sub.basis.T) @ sub.basis


def linear_projection(
    emb: StaticEmbeddings,
    direction: Subspace | np.ndarray,
    words: Sequence[str] | None = None,
) -> DebiasResult:
    """Project every vector (or only ``words``: seed-003 compat) orthogonally to a subspace.

    Seed 003 eq. 5 / Dev & Phillips (2019): ``v' = v − B^T B v``. Vectors keep their
    remaining length (cosines, hence WEAT, do not depend on it).
    """
    sub = _as_subspace(direction, emb.dim)
    rows = _rows(emb, words, "linear projection words")
    V = emb.vectors.astype(np.float64)  # a copy: the input is not touched
    coef = V @ sub.basis.T
    if words is not None:  # only the listed rows move
        keep = np.ones(len(V), dtype=bool)
        keep[rows] = False
        coef[keep] = 0.0
    _subtract(V, coef, sub.basis)
    return DebiasResult(_new(emb, V, "proj"), sub, "linear-projection", len(rows),
                        {"scope": "all" if words is None else "words"})


def lpsg(
    emb: StaticEmbeddings,
    semantic: Subspace,
    grammatical: Sequence[Subspace],
    words: Sequence[str] | None = None,
) -> DebiasResult:
    """Linear projection along the semantic direction orthogonalised against grammatical ones.

    Seed 003 App. E (LPSG, after Zhou et al. 2019): keeps the grammatical-gender
    information (verbs, adjectives, titles, entities) while removing semantic gender.
    """
    sub = orthogonalize(semantic, grammatical)
    res = linear_projection(emb, sub, words)
    cos = float(np.linalg.norm(semantic.basis @ sub.basis.T))
    return DebiasResult(_new(emb, res.embeddings.vectors, "lpsg"), sub, "lpsg",
                        res.changed_words, {**res.details, "cos_to_semantic": cos})


def _check_pairs(pairs: Iterable[Sequence[str]], where: str) -> list[Pair]:
    out = []
    for p in pairs:
        if isinstance(p, str) or len(p) != 2 or not all(isinstance(w, str) and w for w in p):
            raise DebiasError(f"{where}: each pair needs exactly two words, got {p!r}")
        if p[0] == p[1]:
            raise DebiasError(f"{where}: pair {p[0]!r}-{p[1]!r} has the same word twice")
        out.append((p[0], p[1]))
    if not out:
        raise DebiasError(f"{where}: no pairs")
    return out


def _equalise_candidates(
    emb: StaticEmbeddings, pairs: list[Pair], case_variants: bool,
    on_missing: Literal["raise", "drop"],
) -> tuple[list[Pair], list[Pair]]:
    if case_variants:  # debiaswe: lower, Title and UPPER forms of every pair (a set)
        variants = {(f(a), f(b)) for a, b in pairs for f in (str.lower, str.title, str.upper)}
        present = sorted(p for p in variants if p[0] in emb.index and p[1] in emb.index)
        covered = {(a.lower(), b.lower()) for a, b in present}
        missing = [p for p in pairs if (p[0].lower(), p[1].lower()) not in covered]
    else:
        present = [p for p in dict.fromkeys(pairs) if p[0] in emb.index and p[1] in emb.index]
        missing = [p for p in pairs if p not in present]
    if missing and on_missing == "raise":
        names = [f"{a}-{b} (missing: {', '.join(w for w in (a, b) if w not in emb.index)})"
                 for a, b in missing]
        raise MissingWordsError(names, emb.name, "equalise pairs")
    return present, missing


def hard_debias(
    emb: StaticEmbeddings,
    definitional_pairs: Sequence[Pair],
    equalise_pairs: Sequence[Pair],
    gender_specific: Iterable[str],
    k: int = 1,
    words: Sequence[str] | None = None,
    case_variants: bool = False,
    on_missing: Literal["raise", "drop"] = "raise",
) -> DebiasResult:
    """Hard debias (Bolukbasi et al. 2016): neutralise, then equalise.

    Parameters
    ----------
    definitional_pairs : pairs whose paired PCA gives the bias subspace (top ``k``);
        every word must be in the vocabulary.
    equalise_pairs : pairs made equidistant from every neutralised word. A pair with a
        missing member raises, unless ``on_missing="drop"`` (listed in ``details``).
    gender_specific : words left as they are (not neutralised); words absent from the
        vocabulary are ignored (the list is an exclusion list).
    words : compat: neutralise exactly these words (gender-specific or not) instead of
        every word outside ``gender_specific``; equalising is unchanged.
    case_variants : debiaswe compat: equalise the lower-case, Title-case and UPPER-case
        forms of each pair that are in the vocabulary, instead of the pairs as given.

    All vectors are unit-normalised first (before the subspace is computed) and after each
    step, as in debiaswe.
    """
    if on_missing not in ("raise", "drop"):
        raise ValueError(f"on_missing must be 'raise' or 'drop', got {on_missing!r}")
    eq_pairs = _check_pairs(equalise_pairs, "equalise pairs")
    V = emb.vectors.astype(np.float64)
    norms = np.sqrt(np.einsum("ij,ij->i", V, V))
    if (norms <= _TINY).any():
        raise DebiasError(f"{emb.name} has zero vectors; hard debias normalises every vector")
    V /= norms[:, None]
    unit = _new(emb, V, "unit")
    sub = pca_subspace(unit, pairs=definitional_pairs, k=k)
    candidates, dropped = _equalise_candidates(unit, eq_pairs, case_variants, on_missing)
    specific = set(gender_specific)
    if words is None:
        rows = np.array([i for i, w in enumerate(emb.words) if w not in specific], dtype=np.int64)
    else:
        rows = _rows(emb, words, "hard debias words")
    B = sub.basis
    moved = np.zeros(len(V), dtype=bool)
    moved[rows] = True
    coef = V @ B.T
    coef[~moved] = 0.0
    _subtract(V, coef, B)
    left = np.sqrt(np.einsum("ij,ij->i", V, V))
    if (left[moved] <= 1e-9).any():
        bad = [emb.words[i] for i in np.flatnonzero(moved & (left <= 1e-9))]
        raise DebiasError(f"neutralising leaves zero vectors for {', '.join(bad[:10])}: "
                          "they lie in the bias subspace (add them to gender_specific)")
    left[~moved] = 1.0
    V /= left[:, None]
    no_side = []
    for a, b in candidates:
        ia, ib = emb.index[a], emb.index[b]
        mu = (V[ia] + V[ib]) / 2
        mu_b = (mu @ B.T) @ B
        nu = mu - mu_b
        scale = np.sqrt(max(1.0 - float(nu @ nu), 0.0))
        side = (V[ia] @ B.T) @ B - mu_b  # (a_B − b_B) / 2
        n = np.linalg.norm(side)
        if n <= 1e-12:  # e.g. both words were neutralised: debiaswe puts a on the + side
            side, n = B[0], 1.0
            no_side.append((a, b))
        V[ia] = nu + scale * side / n
        V[ib] = nu - scale * side / n
    if candidates:
        touched = np.unique([emb.index[w] for p in candidates for w in p])
        V[touched] /= np.linalg.norm(V[touched], axis=1)[:, None]
    return DebiasResult(
        _new(emb, V, "hard"), sub, "hard-debias", len(rows),
        {"equalised": candidates, "equalise_dropped": dropped, "equalised_without_side": no_side,
         "gender_specific_in_vocab": len(specific & set(emb.index)),
         "scope": "all" if words is None else "words"},
    )


# ---------------------------------------------------------------- INLP

CLASSIFIERS = ("linear_svc", "logistic")


def make_classifier(kind: str = "linear_svc", seed: int = 0, **params):
    """A scikit-learn linear classifier; ``linear_svc`` defaults follow Ravfogel et al.'s
    word-embedding experiment (``fit_intercept=False``, ``dual=False``)."""
    if kind == "linear_svc":
        from sklearn.svm import LinearSVC  # lazy: scikit-learn is heavy

        return LinearSVC(**{"fit_intercept": False, "dual": False, "random_state": seed, **params})
    if kind == "logistic":
        from sklearn.linear_model import LogisticRegression  # lazy: scikit-learn is heavy

        return LogisticRegression(**{"fit_intercept": False, "max_iter": 1000,
                                     "random_state": seed, **params})
    raise DebiasError(f"classifier must be one of {CLASSIFIERS}, got {kind!r}")


@dataclass
class InlpResult:
    """Nullspace projection ``P = I − Q^T Q`` and the removed orthonormal basis ``Q``."""

    projection: np.ndarray
    removed: np.ndarray
    dev_accuracy: list[float]
    train_accuracy: list[float]


def inlp(
    X: np.ndarray, y: np.ndarray,
    X_dev: np.ndarray | None = None, y_dev: np.ndarray | None = None,
    n_iterations: int = 35,
    classifier: str = "linear_svc",
    min_accuracy: float = 0.0,
    seed: int = 0,
    **classifier_params,
) -> InlpResult:
    """Iterative nullspace projection (Ravfogel et al. 2020, Algorithm 1).

    At iteration ``i`` a classifier is fitted on ``X P_{i-1}``; its weight rows ``W_i``
    are added to the removed space unless its dev accuracy is below ``min_accuracy``;
    ``P_i = I − Q_i^T Q_i`` with ``Q_i`` an orthonormal basis of ``span(W_1 … W_i)``.
    ``dev_accuracy[i]`` is the accuracy of classifier ``i`` (fitted on data with
    ``i`` earlier directions removed) on the dev set, or on the training set without one.
    """
    X = np.asarray(X, dtype=np.float64)
    y = np.asarray(y)
    if X.ndim != 2 or len(X) != len(y) or len(X) == 0:
        raise DebiasError("X must be a non-empty (n, d) array with one label per row")
    if len(np.unique(y)) < 2:
        raise DebiasError("INLP needs at least two classes")
    if not isinstance(n_iterations, int) or n_iterations < 1:
        raise DebiasError(f"n_iterations must be a positive integer, got {n_iterations!r}")
    if X_dev is None:
        X_dev, y_dev = X, y
    X_dev = np.asarray(X_dev, dtype=np.float64)
    d = X.shape[1]
    Q = np.zeros((0, d))
    dev_acc, train_acc = [], []
    for _ in range(n_iterations):
        Xp = X - (X @ Q.T) @ Q
        clf = make_classifier(classifier, seed, **classifier_params)
        clf.fit(Xp, y)
        acc = float(clf.score(X_dev - (X_dev @ Q.T) @ Q, y_dev))
        dev_acc.append(acc)
        train_acc.append(float(clf.score(Xp, y)))
        if acc < min_accuracy:
            continue
        W = np.atleast_2d(clf.coef_)
        if np.allclose(W, 0):
            break
        Q = orthonormal_basis(np.vstack([Q, W]))
    return InlpResult(np.eye(d) - Q.T @ Q, Q, dev_acc, train_acc)


def split_words(
    groups: Sequence[Sequence[str]], test_fraction: float = 0.3, seed: int = 0,
) -> tuple[list[str], np.ndarray, list[str], np.ndarray]:
    """Shuffle each group with ``seed`` and hold out ``test_fraction`` of it: (train words,
    train labels, held-out words, held-out labels); labels are group indices."""
    if not 0 < test_fraction < 1:
        raise DebiasError(f"test_fraction must be in (0, 1), got {test_fraction!r}")
    rng = np.random.default_rng(seed)
    tr, ytr, te, yte = [], [], [], []
    for label, group in enumerate(groups):
        group = list(group)
        if len(group) < 2:
            raise DebiasError(f"group {label} needs at least two words to split")
        order = rng.permutation(len(group))
        n_test = max(1, round(test_fraction * len(group)))
        te += [group[i] for i in order[:n_test]]
        tr += [group[i] for i in order[n_test:]]
        yte += [label] * n_test
        ytr += [label] * (len(group) - n_test)
    return tr, np.array(ytr), te, np.array(yte)


def extreme_words(
    emb: StaticEmbeddings, direction: Subspace, n: int, exclude: Iterable[str] = (),
    lowercase_only: bool = True,
) -> tuple[list[str], list[str]]:
    """The ``n`` words with the largest and the ``n`` with the smallest cosine to a direction
    (Ravfogel et al. select gendered words by their projection on *he − she*). Only
    alphabetic words are eligible (no phrases with ``_``), and with ``lowercase_only``
    only lower-case ones (no names)."""
    u = direction.basis[0]
    excluded = set(exclude)
    keep = [i for i, w in enumerate(emb.words)
            if w not in excluded and (not lowercase_only or w.islower()) and w.isalpha()]
    V = emb.vectors[keep].astype(np.float64)
    cos = (V @ u) / np.maximum(np.linalg.norm(V, axis=1), _TINY)
    order = np.argsort(-cos, kind="stable")
    if 2 * n > len(order):
        raise DebiasError(f"asked for 2x{n} words, only {len(order)} eligible")
    return [emb.words[keep[i]] for i in order[:n]], [emb.words[keep[i]] for i in order[::-1][:n]]


def inlp_debias(
    emb: StaticEmbeddings,
    groups: Sequence[Sequence[str]],
    n_iterations: int = 35,
    classifier: str = "linear_svc",
    test_fraction: float = 0.3,
    seed: int = 0,
    words: Sequence[str] | None = None,
    **classifier_params,
) -> DebiasResult:
    """INLP on word vectors labelled by group; the projection is applied to every word.

    The words of each group are split (seeded) into training and held-out words; the
    held-out accuracy of a fresh classifier after the projection is in
    ``details["heldout_accuracy_after"]`` and the majority-class rate in ``details["chance"]``.
    """
    for g, group in enumerate(groups):
        _check_words(emb, group, f"INLP group {g}")
    tr, ytr, te, yte = split_words(groups, test_fraction, seed)
    V = emb.vectors.astype(np.float64)
    unit = V / np.maximum(np.linalg.norm(V, axis=1), _TINY)[:, None]
    Xtr, Xte = unit[[emb.index[w] for w in tr]], unit[[emb.index[w] for w in te]]
    res = inlp(Xtr, ytr, Xte, yte, n_iterations, classifier, seed=seed, **classifier_params)
    before = make_classifier(classifier, seed, **classifier_params).fit(Xtr, ytr).score(Xte, yte)
    P = res.projection
    after = make_classifier(classifier, seed, **classifier_params).fit(Xtr @ P, ytr).score(Xte @ P, yte)
    rows = _rows(emb, words, "INLP words")
    V[rows] = V[rows] @ P  # P is symmetric
    chance = float(np.bincount(yte).max() / len(yte))
    return DebiasResult(
        _new(emb, V, "inlp"), Subspace(res.removed, "inlp"), "inlp", len(rows),
        {"dev_accuracy": res.dev_accuracy, "heldout_accuracy_before": float(before),
         "heldout_accuracy_after": float(after), "chance": chance,
         "n_train": len(tr), "n_heldout": len(te), "rank_removed": int(res.removed.shape[0]),
         "scope": "all" if words is None else "words"},
    )


# ---------------------------------------------------------------- evaluation

_SLOT = "\x00"  # stands for the word while a template is split into tokens


def _strip_punct(token: str) -> str:
    start, end = 0, len(token)
    while start < end and unicodedata.category(token[start]).startswith("P"):
        start += 1
    while end > start and unicodedata.category(token[end - 1]).startswith("P"):
        end -= 1
    return token[start:end]


def static_seat_vectors(
    emb: StaticEmbeddings, words: Sequence[str], group: str, templates,
) -> tuple[np.ndarray, list[str], list[str]]:
    """Sentence vectors of a static embedding for SEAT: for each word in the vocabulary and
    each template of ``group``, the mean of the vectors of the word and of the template's
    other tokens that are in the vocabulary (punctuation stripped). Returns (vectors, kept
    words, dropped words). Seed 003 ran SEAT on GloVe this way (a bag of word vectors).

    >>> from polybias.metrics.seat import SeatTemplates
    >>> emb = StaticEmbeddings("toy", ["this", "is", "rose"], np.eye(3))
    >>> t = SeatTemplates("en", {"noun": ("this is {X}.", "{X} here.")})
    >>> V, kept, dropped = static_seat_vectors(emb, ["rose", "lily"], "noun", t)
    >>> V.round(3).tolist(), dropped
    ([[0.333, 0.333, 0.333], [0.0, 0.0, 1.0]], ['lily'])
    """
    if group not in templates.groups:
        raise DebiasError(f"no SEAT template group {group!r} for {templates.language!r}; "
                          f"groups: {', '.join(templates.groups)}")
    kept = [w for w in words if w in emb.index]
    dropped = [w for w in words if w not in emb.index]
    rows = []
    for w in kept:
        for t in templates.groups[group]:
            text = t.replace("{aX}", f"{templates.article(w)} {_SLOT}").replace("{X}", _SLOT)
            toks = [_strip_punct(tok) for tok in text.split()]
            idx = [emb.index[k] for k in toks if k and k != _SLOT and k in emb.index]
            idx.append(emb.index[w])
            rows.append(emb.vectors[idx].astype(np.float64).mean(axis=0))
    return (np.array(rows) if rows else np.zeros((0, emb.dim))), kept, dropped


# ---------------------------------------------------------------- experiment specs


# ---------------------------------------------------------------- reports


