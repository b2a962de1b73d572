"""The shape of a minimal-pairs frame: its columns, directions, methods, checks and the
token alignment of two id sequences.

A frame of CrowS-Pairs-style minimal pairs has the columns ``sent_more`` (the more
stereotyping sentence), ``sent_less`` and ``bias_type``, and for the ``"metric.py"``
alignment ``direction`` (one of :data:`DIRECTIONS`). The pairs are scored by
:mod:`polybias.engines.pair_scores` and the scores aggregated by
:mod:`polybias.metrics.crows`; both check their inputs here and raise :class:`CrowsError`.
"""

from __future__ import annotations

import difflib

import numpy as np
import pandas as pd

#: The ways of scoring a pair (:func:`polybias.engines.pair_scores.pair_scores`).
METHODS = ("nangia", "bias-bench", "sss", "causal", "aul", "aula", "lm-eval")
CAUSAL_METHODS = ("causal", "lm-eval")
UNMASKED = ("aul", "aula")
CAUSAL_BOS = ("prepend", "first-token")
ON_UNMODIFIED = ("raise", "skip")


class CrowsError(ValueError):
    """Bad pairs or options for a CrowS-Pairs metric."""


ALIGNMENTS = ("metric.py", "seed-001", "content")
"""How the tokens two sentences share are found
(:func:`polybias.engines.pair_scores.shared_token_positions`)."""
DIRECTIONS = ("stereo", "antistereo")


def token_alignment(ids_a, ids_b, special_a, special_b, with_special: bool = True,
                    autojunk: bool = True) -> tuple[list[int], list[int]]:
    """Positions of the tokens two id sequences share, as Nangia et al.'s ``get_span``.

    The sequences are aligned with :class:`difflib.SequenceMatcher` (no junk function);
    every token inside an ``equal`` opcode is shared, and the k-th shared position of
    ``ids_a`` is aligned with the k-th of ``ids_b``. Special tokens are never returned.

    Parameters
    ----------
    ids_a, ids_b : token ids of the two sentences, special tokens included, as the
        tokenizer encodes them.
    special_a, special_b : the special-token masks of the two (true at [CLS], [SEP], <s>…).
    with_special : align the whole sequences, special tokens included, and drop the
        matched special tokens afterwards (nyu-mll/crows-pairs at 8aaac11, ``metric.py``
        ``get_span`` and ``mask_unigram``: the template's first and last positions, [CLS]
        and [SEP], are never masked; McGill-NLP/bias-bench at 291426a, ``crows.py``
        ``_get_span``; seed 001's ``find_overlap``). False: align only the non-special
        tokens. The special tokens are anchors: when several matching blocks are equally
        long, difflib takes the first, and a block that reaches [CLS] or [SEP] is one token
        longer, so the two settings can share different tokens (e.g., one token a word,
        "the black man and the white man left ." / "the white man and the black man
        left .": with the anchors "man left . [SEP]" is the longest block and the colour
        words are modified; without them "the black man" ties with "man left ." and,
        found first, is shared across the swap).
    autojunk : difflib's popularity heuristic (its default, on, as in the reference code;
        it applies only to sequences of 200 tokens or more).

    Returns
    -------
    (positions in ``ids_a``, positions in ``ids_b``), of equal length and increasing.

    >>> token_alignment([101, 1, 2, 3, 102], [101, 1, 4, 3, 102], [1, 0, 0, 0, 1], [1, 0, 0, 0, 1])
    ([1, 3], [1, 3])
    """
    ids_a, ids_b = list(ids_a), list(ids_b)
    special_a, special_b = [bool(s) for s in special_a], [bool(s) for s in special_b]
    if len(ids_a) != len(special_a) or len(ids_b) != len(special_b):
        raise CrowsError("each id sequence needs a special-token mask of its length")
    pos_a = list(range(len(ids_a))) if with_special else [i for i, s in enumerate(special_a) if not s]
    pos_b = list(range(len(ids_b))) if with_special else [i for i, s in enumerate(special_b) if not s]
    seq_a = [str(ids_a[i]) for i in pos_a]  # get_span compares the ids as strings
    seq_b = [str(ids_b[i]) for i in pos_b]
    shared_a, shared_b = [], []
    for op, a0, a1, b0, b1 in difflib.SequenceMatcher(None, seq_a, seq_b, autojunk=autojunk).get_opcodes():
        if op != "equal":
            continue
        for i, j in zip(pos_a[a0:a1], pos_b[b0:b1], strict=True):
            if not (special_a[i] or special_b[j]):
                shared_a.append(i)
                shared_b.append(j)
    return shared_a, shared_b


def check_columns(frame: pd.DataFrame, columns: tuple[str, ...], what: str) -> None:
    """Raise :class:`CrowsError` unless ``frame`` has ``columns`` (``what`` names the frame)."""
    missing = [c for c in columns if c not in frame.columns]
    if missing:
        raise CrowsError(f"{what} lack the column(s) {', '.join(missing)}")


def check_pairs(pairs: pd.DataFrame, allow_identical: bool = False) -> None:
    """Raise :class:`CrowsError` unless ``pairs`` has ``sent_more``, ``sent_less`` and
    ``bias_type``, at least one row and (unless ``allow_identical``) no pair of identical
    sentences."""
    missing = [c for c in ("sent_more", "sent_less", "bias_type") if c not in pairs.columns]
    if missing:
        raise CrowsError(f"pairs lack the column(s) {', '.join(missing)}")
    if pairs.empty:
        raise CrowsError("no pairs to score")
    same = pairs.index[pairs["sent_more"] == pairs["sent_less"]].tolist()
    if same and not allow_identical:
        raise CrowsError(f"pairs with identical sentences (rows {same[:10]}): not a minimal pair")


def sample_pairs(pairs: pd.DataFrame, n: int, seed: int = 0, by: str = "bias_type",
                 ids: list | None = None) -> pd.DataFrame:
    """A seeded sample of at most ``n`` pairs, stratified by ``by`` (the bias type), in the
    frame's order; all of them when ``n`` is 0 or not smaller than the frame.

    Each stratum gets ``n`` × its share of the pairs, rounded by largest remainder (ties:
    the larger stratum, then its name), and its pairs are drawn without replacement with
    ``numpy.random.default_rng(seed)``, strata in sorted order. ``ids``: draw among the
    pairs whose ``pair_id`` is in this list only (e.g. the ids every language of an
    aligned dataset has), so that the same pairs are drawn in each language.

    >>> frame = pd.DataFrame({"pair_id": [str(i) for i in range(10)],
    ...                       "bias_type": ["gender"] * 6 + ["race-color"] * 4})
    >>> sample = sample_pairs(frame, 5, seed=0)
    >>> len(sample), sample.bias_type.value_counts().to_dict()
    (5, {'gender': 3, 'race-color': 2})
    >>> sample_pairs(frame, 5, seed=0).pair_id.tolist() == sample.pair_id.tolist()
    True
    >>> len(sample_pairs(frame, 0)), len(sample_pairs(frame, 20))
    (10, 10)
    """
    if not isinstance(n, int) or isinstance(n, bool) or n < 0:
        raise CrowsError(f"the number of pairs to sample must be an integer >= 0, got {n!r}")
    check_columns(pairs, (by,), "pairs")
    pool = pairs
    if ids is not None:
        check_columns(pairs, ("pair_id",), "pairs")
        pool = pairs[pairs["pair_id"].isin(set(ids))]
    if n == 0 or n >= len(pool):
        return pool
    sizes = pool[by].astype(str).value_counts()
    quotas = sizes * n / len(pool)
    take = quotas.astype(int)
    order = sorted(sizes.index, key=lambda k: (-(quotas[k] - take[k]), -sizes[k], k))
    for key in order[: n - int(take.sum())]:
        take[key] += 1
    rng = np.random.default_rng(seed)
    chosen: list = []
    strata = pool[by].astype(str)
    for key in sorted(sizes.index):
        labels = pool.index[strata == key]
        if take[key]:
            chosen.extend(labels[np.sort(rng.choice(len(labels), int(take[key]), replace=False))])
    keep = set(chosen)
    return pool.loc[[label for label in pool.index if label in keep]]


def stratified_sample_caption(noun: str, n_scored: int, n_available: int, option: str, limit: int,
                              seed: int, stratum: str, *, items: str = "", all_note: str = "",
                              note: str = "") -> str:
    """The line a table states the items it scored with: all ``n_available`` of them (when
    ``limit`` is 0 or the sample holds them all), or the sample of ``n_scored`` that
    :func:`sample_pairs` drew, stratified by ``stratum``, at ``option = limit`` and ``seed``.

    ``noun`` opens the line (``Pairs``, ``Sentences``); ``items`` names what the
    ``n_available`` are where the line says so; ``all_note`` follows the count of all of them
    and ``note`` ends the line of a sample.

    >>> stratified_sample_caption("Pairs", 30, 231, "max_pairs", 30, 0, "bias type", items="pairs")
    'Pairs: a sample of 30 of the 231 pairs, stratified by bias type (max_pairs = 30, seed 0).'
    >>> stratified_sample_caption("Sentences", 3565, 3565, "max_items", 0, 0, "stereotype")
    'Sentences: all 3,565.'
    """
    if not limit or n_scored >= n_available:
        return f"{noun}: all {n_available:,}{all_note}."
    of = f"{n_available:,} {items}" if items else f"{n_available:,}"
    return (f"{noun}: a sample of {n_scored:,} of the {of}, stratified by {stratum} "
            f"({option} = {limit}, seed {seed}){note}.")


def sample_caption(n_scored: int, n_available: int, max_pairs: int, seed: int,
                   aligned: bool = False) -> str:
    """The line a table of scored pairs states its pairs with: all of them, or the sample
    :func:`sample_pairs` drew (``aligned``: the same pairs in every language);
    :func:`stratified_sample_caption` in the pairs' words.

    >>> sample_caption(30, 231, 30, 0)
    'Pairs: a sample of 30 of the 231 pairs, stratified by bias type (max_pairs = 30, seed 0).'
    >>> sample_caption(231, 231, 0, 0)
    'Pairs: all 231.'
    """
    return stratified_sample_caption(
        "Pairs", n_scored, n_available, "max_pairs", max_pairs, seed, "bias type",
        items="aligned pairs, the same in every language" if aligned else "pairs",
        all_note=" (aligned over the languages)" if aligned else "")
