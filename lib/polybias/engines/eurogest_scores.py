"""EuroGEST sentences scored by a language model: the masculine and the feminine form of
each sentence, the part where they differ and the whole (Rowe et al. 2025).

:func:`gendered_pair_scores` takes rows with ``masculine``, ``feminine`` and ``stereotype``
(:func:`polybias.data.eurogest.eurogest_pairs`: gendered pairs, and neutral sentences in
their scaffolds) and adds, per form, the summed log-probability and the number of tokens
of the part that differs and of the whole sentence; :mod:`polybias.metrics.eurogest` turns
them into masculine rates and g_s. The forward passes are the scoring engine's
(:func:`polybias.engines.scoring.causal_token_logprobs`,
:func:`polybias.engines.scoring.jointly_masked_token_logprobs`).

Causal LMs (the authors' ``evaluate_sentence`` in ``main.py``): every token's
log-probability given the tokens before it; the differing part starts at the first token
position where the two id sequences differ (where one is a prefix of the other, at the last
token of the shorter), and runs to the end of the sentence. The authors score
``lp[start:]`` with ``start`` one before that position in an array that begins at the
second token, i.e. the same tokens. ``causal_bos="prepend"`` (default) conditions the first
token on BOS, as every causal score of the project; ``causal_bos="none"`` feeds the
sentence as tokenized and leaves its first token unscored, as the authors' code does with a
tokenizer that adds no BOS (GPT-2 style; with a tokenizer that adds its own BOS, e.g.
Llama's, the two are the same). One difference from the authors' code, in the pairs whose
very first token differs: they take ``start = -1`` and so score only the last token; here
the whole sentence is the differing part.

Masked LMs (the differing part masked, as GEST scores masked LMs): every piece of the words
in which the two forms differ (:func:`differing_word_tokens`) is masked together in one copy
of each form and their log-probabilities summed; there is no whole-sentence score (NaN). A
pair whose forms differ by a word present in one form only cannot be scored this way (an
error naming it).
"""

from __future__ import annotations

import difflib

import numpy as np
import pandas as pd

from polybias.engines import scoring
from polybias.engines.scoring import ScoringError

CAUSAL_BOS = ("prepend", "none")
SCORE_COLUMNS = ("logprob_masc", "n_masc", "logprob_fem", "n_fem",
                 "logprob_masc_whole", "n_masc_whole", "logprob_fem_whole", "n_fem_whole")


def divergence(ids_m, ids_f) -> int:
    """The first token position of the part where two id sequences differ.

    The first index at which they differ; where one is a prefix of the other, the last
    index of the shorter; 0 for identical sequences (the authors' ``start`` + 1).

    >>> divergence([5, 6, 7, 8], [5, 6, 9, 8]), divergence([5, 6], [5, 6, 7]), divergence([1], [1])
    (2, 1, 0)
    """
    ids_m, ids_f = list(ids_m), list(ids_f)
    for i, (a, b) in enumerate(zip(ids_m, ids_f, strict=False)):  # up to the shorter
        if a != b:
            return i
    if len(ids_m) != len(ids_f):
        return max(min(len(ids_m), len(ids_f)) - 1, 0)
    return 0


def _words(enc) -> tuple[list[str], list[int | None]]:
    """The words of an encoding (its ``word_ids``) as the ids of their pieces joined, and the
    word of each token (None for special tokens)."""
    words: dict[int, list[str]] = {}
    for i, w in enumerate(enc.word_ids):
        if w is not None and not enc.special[i]:
            words.setdefault(w, []).append(str(enc.ids[i]))
    order = sorted(words)
    index = {w: k for k, w in enumerate(order)}
    return [" ".join(words[w]) for w in order], [index.get(w) if w is not None and not enc.special[i]
                                                else None for i, w in enumerate(enc.word_ids)]


def differing_word_tokens(lm, text_a: str, text_b: str) -> tuple[list[int], list[int]]:
    """Token positions, in each text, of the words in which two texts differ.

    The words (the tokenizer's ``word_ids``, each as the sequence of its piece ids) are
    aligned with :class:`difflib.SequenceMatcher`; every piece of a word outside the equal
    blocks is returned, so that "byl" / "byla" (pieces ``by ##l`` / ``by ##l ##a``) gives
    both whole words, not only the inserted piece. A word present in one text only leaves
    the other text without positions (an empty list).
    """
    ea, eb = scoring.encode(lm, [text_a, text_b])
    words_a, of_a = _words(ea)
    words_b, of_b = _words(eb)
    changed_a, changed_b = set(), set()
    for op, a0, a1, b0, b1 in difflib.SequenceMatcher(None, words_a, words_b,
                                                       autojunk=False).get_opcodes():
        if op != "equal":
            changed_a.update(range(a0, a1))
            changed_b.update(range(b0, b1))
    return ([i for i, w in enumerate(of_a) if w in changed_a],
            [i for i, w in enumerate(of_b) if w in changed_b])


def _check(pairs: pd.DataFrame) -> None:
    if not isinstance(pairs, pd.DataFrame):
        raise ScoringError(f"pairs must be a DataFrame, got {type(pairs).__name__}")
    missing = [c for c in ("masculine", "feminine", "stereotype") if c not in pairs.columns]
    if missing:
        raise ScoringError(f"pairs lack the column(s) {', '.join(missing)}")
    if pairs.empty:
        raise ScoringError("no pairs to score")


def _adds_bos(lm) -> bool:
    tok = lm.tokenizer
    ids = tok("a", add_special_tokens=True)["input_ids"]
    return tok.bos_token_id is not None and bool(ids) and ids[0] == tok.bos_token_id


def _sums(logprob: np.ndarray, start: int) -> tuple[float, int, float, int]:
    part, whole = logprob[start:], logprob
    part, whole = part[~np.isnan(part)], whole[~np.isnan(whole)]
    return float(part.sum()), int(part.size), float(whole.sum()), int(whole.size)


def gendered_pair_scores(lm, pairs: pd.DataFrame, causal_bos: str = "prepend",
                         batch_tokens: int | None = None, progress: bool = False,
                         shared_prefix: bool = True, whole: bool = True) -> pd.DataFrame:
    """Score the masculine and the feminine form of every row (module docstring).

    Parameters
    ----------
    lm : :class:`polybias.engines.scoring.LanguageModel`, causal or masked.
    pairs : rows with ``masculine``, ``feminine`` and ``stereotype`` (1–16); other columns
        are kept.
    causal_bos : causal LMs: ``"prepend"`` (default) or ``"none"`` (the authors' code on a
        tokenizer without BOS).
    batch_tokens, progress : passed to the scoring engine.
    shared_prefix : causal LMs with ``causal_bos="prepend"``: score the two forms' shared
        prefix once (:func:`polybias.engines.scoring.causal_pair_token_logprobs`; default);
        False scores every form apart (the same values up to float rounding, slower).
    whole : causal LMs: also the whole sentences' sums (``*_whole``; default). False (with
        ``shared_prefix``) runs the output layer only from where the forms differ and
        leaves the whole-sentence columns NaN with count 0, as for masked LMs: what the
        measure needs with ``differing_only=True``.

    Returns
    -------
    ``pairs`` with :data:`SCORE_COLUMNS` (``logprob_*`` natural
    log, ``n_*`` token counts) and ``diverge_masc``/``diverge_fem`` (the token index where
    the differing part starts).
    """
    _check(pairs)
    if causal_bos not in CAUSAL_BOS:
        raise ScoringError(f"causal_bos must be one of {CAUSAL_BOS}, got {causal_bos!r}")
    if causal_bos != "prepend" and lm.kind != "causal":
        raise ScoringError(f"causal_bos applies to causal LMs, not to {lm.kind} {lm.name}")
    masc, fem = pairs["masculine"].tolist(), pairs["feminine"].tolist()
    n = len(masc)
    engine = {"batch_tokens": batch_tokens, "progress": progress}
    if lm.kind == "causal":
        unscored_first = causal_bos == "none" and not _adds_bos(lm)
        if unscored_first or not shared_prefix:
            scored = scoring.causal_token_logprobs(lm, masc + fem, bos="first-token" if unscored_first
                                                   else "prepend", **engine)
        else:  # the two forms' shared prefix computed once (the same values, faster)
            scored_m, scored_f = scoring.causal_pair_token_logprobs(lm, masc, fem, prefix=whole,
                                                                    **engine)
            scored = scored_m + scored_f
        starts = [divergence(a.input_ids, b.input_ids) for a, b in zip(scored[:n], scored[n:], strict=True)]
        rows = []
        for k, start in enumerate(starts):
            lp_m, lp_f = scored[k].logprob.copy(), scored[n + k].logprob.copy()
            if unscored_first:  # the authors' array starts at the second token
                lp_m[0] = lp_f[0] = np.nan
            sums_m, sums_f = _sums(lp_m, start), _sums(lp_f, start)
            if not whole and not (unscored_first or not shared_prefix):
                sums_m, sums_f = (*sums_m[:2], np.nan, 0), (*sums_f[:2], np.nan, 0)
            rows.append((*sums_m[:2], *sums_f[:2], *sums_m[2:], *sums_f[2:], start, start))
    else:
        tok = lm.tokenizer
        positions, starts = [], []
        for a, b in zip(masc, fem, strict=True):
            diff_a, diff_b = differing_word_tokens(lm, a, b)
            if not diff_a or not diff_b:
                raise ScoringError(f"a form has no differing token to mask ({a!r} / {b!r}); the "
                                   f"masked-LM score needs a modified token in both ({tok.name_or_path})")
            positions.append((diff_a, diff_b))
            starts.append((diff_a[0], diff_b[0]))
        scored = scoring.jointly_masked_token_logprobs(
            lm, masc + fem, positions=[p[0] for p in positions] + [p[1] for p in positions], **engine)
        rows = []
        for k in range(n):
            lp_m = scored[k].logprob[positions[k][0]]
            lp_f = scored[n + k].logprob[positions[k][1]]
            rows.append((float(lp_m.sum()), len(lp_m), float(lp_f.sum()), len(lp_f),
                         np.nan, 0, np.nan, 0, *starts[k]))
    values = pd.DataFrame(rows, columns=[*SCORE_COLUMNS, "diverge_masc", "diverge_fem"],
                          index=pairs.index)
    out = pairs.copy()
    for column in values.columns:
        out[column] = values[column]
    return out
