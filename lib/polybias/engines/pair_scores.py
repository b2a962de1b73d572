"""CrowS-Pairs-style minimal pairs scored by a language model: per-sentence and per-token
log-probabilities (masked PLL as Nangia et al., bias-bench, SSS; causal; AUL/AULA) and the
token alignment of the two sentences.

Pairs are rows with ``sent_more`` (the more stereotyping sentence), ``sent_less`` and
``bias_type`` (:mod:`polybias.data.minimal_pairs`, :mod:`polybias.data.crowspairs`). The
scores go to :mod:`polybias.metrics.crows`, which turns them into stereotype scores
(:func:`polybias.metrics.crows.stereotype_score`, and for the b(u) of
:func:`jsd_attributions`, :func:`polybias.metrics.crows.jsd_stereotype_score`). Following the
reference code of Nangia et al. (2020), a pair counts as stereotyped when the model scores
``sent_more`` above ``sent_less``, whatever its stereo/antistereo direction; the direction
decides the order in which the alignment reads the two sentences, and so which tokens they
share (:func:`shared_token_positions`).

Scores of a pair (``pair_scores``):

* ``"nangia"`` (default for masked LMs; Nangia et al. 2020): the tokens shared by both
  sentences are masked one at a time and their log-probabilities summed; the modified
  tokens are the condition. Shared tokens are difflib's ``equal`` blocks of the full
  token-id sequences, special tokens included, the two sentences in the order the
  reference ``metric.py`` puts them for the row's direction (``alignment="metric.py"``,
  :func:`shared_token_positions`): the per-sentence scores are the reference's.
* ``"bias-bench"`` (Meade et al. 2022): for masked LMs the *modified* tokens are masked
  one at a time and their log-probabilities averaged; for causal LMs the mean token
  log-probability of the sentence (given BOS, or as bias-bench feeds it with
  ``causal_bos="first-token"``). ``on_unmodified="skip"`` leaves out pairs without a
  modified token, as bias-bench does.
* ``"sss"`` (masked LMs; the StereoSet-style score of Nadeem et al. 2021 as mlm-bias
  computes it for pairs): the *modified* tokens are masked together in one copy and the
  mean of their log-probabilities is the score (each modified token against its own gold
  token: :func:`polybias.engines.scoring.jointly_masked_token_logprobs`). mlm-bias 0.1.7
  (``mlm_bias/utils/measures.py``, ``compute_sss``) averages the whole k × k matrix of
  every modified position's log-probability of every modified gold token instead of its
  diagonal; the two agree when k = 1 (docs/peers.md).
* ``"causal"`` (causal LMs; Felkner et al. 2023): full-sentence log-likelihood given BOS.
* ``"lm-eval"`` (causal LMs): EleutherAI lm-evaluation-harness's ``crows_pairs`` tasks,
  the same sum given BOS on the text as written (no model text normaliser);
  :func:`polybias.metrics.crows.lm_eval_metrics` gives its ``pct_stereotype`` and
  ``likelihood_diff``.
* ``"aul"`` (masked LMs; Kaneko & Bollegala 2022, "Unmasking the mask"): the all-unmasked
  likelihood, the mean over the sentence's tokens of log P(w_i | S) with nothing masked,
  one forward pass per sentence (:func:`all_unmasked_scores`).
* ``"aula"``: AUL with each token's log-probability weighted by the mean attention it
  receives (averaged over layers, heads and query positions), as AULA of the same paper.


Token attributions (:func:`jsd_attributions`; Gamboa & Lee 2024, seed 001): the
log-probability of every shared token in each sentence, turned into the Jensen–Shannon
distance to the one-hot gold (:func:`polybias.stats.jsd_to_onehot`) and differenced.
"""

from __future__ import annotations

from contextlib import contextmanager, nullcontext
from dataclasses import replace

import numpy as np
import pandas as pd
import torch

from polybias.data.minimal_pairs import (
    ALIGNMENTS,
    CAUSAL_BOS,
    CAUSAL_METHODS,
    DIRECTIONS,
    METHODS,
    ON_UNMODIFIED,
    UNMASKED,
    CrowsError,
    check_columns,
    check_pairs,
    token_alignment,
)
from polybias.engines import scoring
from polybias.engines.batches import fill_padded, flatten, to_device
from polybias.engines.common import pack_batches
from polybias.engines.normalising import normalise
from polybias.stats import jsd_to_onehot

# ------------------------------------------------------------------ token alignment

def _encoded(tokenizer, texts: list[str], normaliser) -> list[tuple[list[int], list[bool]]]:
    """Ids and special-token mask of each of ``texts`` as the scoring engine encodes it
    (after the model's text normaliser, special tokens added, no truncation; one call of
    the tokenizer for all)."""
    if not texts:
        return []
    done = [normalise(normaliser, text, CrowsError)[0] for text in texts]
    enc = tokenizer(done, add_special_tokens=True, return_special_tokens_mask=True, truncation=False)
    return [(list(ids), [bool(s) for s in special])
            for ids, special in zip(enc["input_ids"], enc["special_tokens_mask"], strict=True)]


def _check_directions(pairs: pd.DataFrame) -> list[str]:
    if "direction" not in pairs.columns:
        raise CrowsError("pairs lack the column direction (stereo/antistereo): the 'metric.py' "
                         "alignment puts the two sentences of a pair in the order Nangia et al.'s "
                         "metric.py does, which depends on it; add it, or use alignment='content'")
    directions = pairs["direction"].tolist()
    bad = [label for label, d in zip(pairs.index, directions, strict=True) if d not in DIRECTIONS]
    if bad:
        raise CrowsError(f"pairs whose direction is not one of {DIRECTIONS} (rows {bad[:10]})")
    return directions


def _alignments(tokenizer, pairs: pd.DataFrame, alignment: str, normaliser=None,
                causal: bool = False) -> list[tuple[list[int], list[int], list[int], list[int]]]:
    """Per pair: shared positions in sent_more and sent_less, then the non-special
    positions of each (see :func:`shared_token_positions`)."""
    if alignment not in ALIGNMENTS:
        raise CrowsError(f"unknown alignment {alignment!r}; use one of {ALIGNMENTS}")
    check_columns(pairs, ("sent_more", "sent_less"), "pairs")
    more, less = pairs["sent_more"].tolist(), pairs["sent_less"].tolist()
    directions = _check_directions(pairs) if alignment == "metric.py" else ["stereo"] * len(more)
    with_special = alignment == "metric.py" or (alignment == "seed-001" and not causal)
    autojunk = alignment != "content"
    out = []
    encoded = _encoded(tokenizer, more + less, normaliser)
    for k, direction in enumerate(directions):
        (ids_m, sp_m), (ids_l, sp_l) = encoded[k], encoded[len(more) + k]
        if direction == "stereo":  # metric.py read_data: sent1 = sent_more, sent2 = sent_less
            shared_m, shared_l = token_alignment(ids_m, ids_l, sp_m, sp_l, with_special, autojunk)
        else:                      # antistereo rows: sent1 = sent_less, sent2 = sent_more
            shared_l, shared_m = token_alignment(ids_l, ids_m, sp_l, sp_m, with_special, autojunk)
        out.append((shared_m, shared_l, [i for i, s in enumerate(sp_m) if not s],
                    [i for i, s in enumerate(sp_l) if not s]))
    return out


def shared_token_positions(tokenizer, pairs: pd.DataFrame, alignment: str = "metric.py",
                           normaliser=None, causal: bool = False) -> list[tuple[list[int], list[int]]]:
    """Per pair, the positions of the tokens ``sent_more`` and ``sent_less`` share.

    Positions index each sentence's encoding by the scoring engine (``tokenizer(text)``
    after ``normaliser``, special tokens included; :func:`polybias.engines.scoring.encode`);
    the k-th position in ``sent_more`` is aligned with the k-th in ``sent_less``. The
    alignment is :func:`polybias.data.minimal_pairs.token_alignment`; ``alignment`` says on
    what and in which order:

    ``"metric.py"`` (default)
        Nangia et al.'s ``metric.py`` exactly (nyu-mll/crows-pairs at 8aaac11:
        ``read_data`` and ``get_span``): the full id sequences, special tokens included,
        with the first sentence ``sent_more`` in ``"stereo"`` rows and ``sent_less`` in
        ``"antistereo"`` rows (the column ``direction``, required). bias-bench's masked
        variant aligns the same way (McGill-NLP/bias-bench at 291426a, ``crows.py``
        ``_read_data``, ``_get_span``). Where difflib has equally long blocks to choose from
        (swapped or repeated words), both the special tokens and the order decide which
        tokens count as shared.
    ``"seed-001"``
        Gamboa & Lee's ``find_overlap`` (gamboalance/bias_attribution_scores at a3fba88,
        ``compare_sents``): ``sent_more`` first in every row; the full id sequences for
        masked LMs, the ids without special tokens for causal LMs (``causal=True``).
    ``"content"``
        The special tokens removed before aligning, ``sent_more`` first in every row,
        difflib's autojunk off: a pair's shared tokens do not depend on its direction
        label. Earlier versions of polybias aligned so; it differs from ``metric.py`` on
        pairs with ties (``docs/reference_compat.md`` counts them per dataset).

    Parameters
    ----------
    tokenizer : a ``transformers`` tokenizer (the model's).
    pairs : frame with ``sent_more``, ``sent_less`` (and ``direction`` for ``"metric.py"``).
    alignment : one of :data:`polybias.data.minimal_pairs.ALIGNMENTS`.
    normaliser : the model's text normaliser (``LanguageModel.normaliser``), or None.
    causal : the model is a causal LM (matters for ``"seed-001"`` only).

    Returns
    -------
    list of ``(positions in sent_more, positions in sent_less)``, one per row.
    """
    return [(m, s) for m, s, _, _ in _alignments(tokenizer, pairs, alignment, normaliser, causal)]


def alignment_changes(tokenizer, pairs: pd.DataFrame, before: str = "content",
                      after: str = "metric.py", normaliser=None) -> pd.DataFrame:
    """Which pairs share other tokens under alignment ``after`` than under ``before``.

    Returns ``pairs`` with the boolean column ``changed`` (the positions of
    :func:`shared_token_positions` differ in either sentence) and ``n_shared_before`` /
    ``n_shared_after`` (shared tokens of ``sent_more``).
    """
    old = shared_token_positions(tokenizer, pairs, before, normaliser)
    new = shared_token_positions(tokenizer, pairs, after, normaliser)
    out = pairs.copy()
    out["changed"] = [o != n for o, n in zip(old, new, strict=True)]
    out["n_shared_before"] = [len(o[0]) for o in old]
    out["n_shared_after"] = [len(n[0]) for n in new]
    return out



# ------------------------------------------------------------------ all-unmasked likelihood

@contextmanager
def _eager_attention(model):
    """Switch a transformers model to eager attention (which returns attention weights)."""
    config = getattr(model, "config", None)
    before = getattr(config, "_attn_implementation", None)
    switch = before not in (None, "eager") and hasattr(model, "set_attn_implementation")
    if switch:
        model.set_attn_implementation("eager")
    try:
        yield
    finally:
        if switch:
            model.set_attn_implementation(before)


def all_unmasked_scores(lm, texts: list[str], attention: bool = False,
                        batch_tokens: int = 8192) -> list[dict]:
    """AUL / AULA of every text (Kaneko & Bollegala 2022), one forward pass per text.

    With the whole sentence S unmasked, p_i = log P(w_i | S) for every non-special token
    w_i (n of them), and

    * AUL  = (1/n) Σ_i p_i;
    * AULA = (1/n) Σ_i a_i · p_i, where a_i is the attention token i receives, averaged
      over layers, heads and all query positions (special tokens included).

    This is the reference code (kanekomasahiro/evaluate_bias_in_mlm, ``calculate_aul``):
    it averages ``output.attentions`` over layers, heads and query rows and multiplies the
    log-probabilities of tokens ``[1:-1]`` by it before ``torch.mean`` (the weights are not
    renormalised). Texts are batched (``batch_tokens`` padded tokens a pass, right
    padding with an attention mask), which changes the numbers only at rounding level.
    Attention weights need the eager attention implementation; the model is switched to it
    for the call and back.

    Returns one dict per text: ``score`` (AUL, or AULA with ``attention``), ``logprob``
    (p_i of the non-special tokens), ``weight`` (a_i, or None) and ``n_tokens``.
    """
    if lm.kind != "mlm":
        raise CrowsError(f"AUL/AULA apply to masked LMs, not to {lm.kind} {lm.name}")
    texts = scoring.check_texts(texts)
    encs = scoring.encode(lm, texts)
    pad = lm.tokenizer.pad_token_id if lm.tokenizer.pad_token_id is not None else 0
    results: list[dict | None] = [None] * len(texts)
    flat_ids, starts = flatten([e.ids for e in encs])
    lengths = np.diff(starts)
    with torch.inference_mode(), (_eager_attention(lm.model) if attention else nullcontext()):
        for rows in pack_batches(lengths, batch_tokens, scoring.ScoringError):
            batch = fill_padded(flat_ids, starts[rows], lengths[rows], pad)
            ids, blen = to_device([batch, lengths[rows]], lm.device)
            mask = (torch.arange(batch.shape[1], device=ids.device)[None, :] < blen[:, None]).long()
            out = lm.model(input_ids=ids, attention_mask=mask, output_attentions=attention)
            logits = out.logits.to(torch.promote_types(out.logits.dtype, torch.float32))
            # log-softmax at the gold ids, no (B, T, V) copy
            gold = (logits.gather(2, ids[:, :, None])[:, :, 0] - torch.logsumexp(logits, -1)).double()
            if attention:
                if not out.attentions:
                    raise CrowsError(f"{lm.name} returns no attention weights: AULA needs them")
                att = torch.stack([a.double() for a in out.attentions]).mean(dim=(0, 2))
                both = torch.cat([gold.reshape(-1), att.reshape(-1)]).cpu().numpy()  # one copy
                gold, att = both[:gold.numel()].reshape(gold.shape), both[gold.numel():].reshape(att.shape)
            else:
                gold = gold.cpu().numpy()
            for k, i in enumerate(rows):
                n = lengths[i]
                keep = ~encs[i].special
                p = gold[k, :n][keep]
                w = att[k, :n, :n].mean(axis=0)[keep] if attention else None
                score = float(np.mean(p * w)) if attention else float(np.mean(p))
                results[i] = {"score": score, "logprob": p, "weight": w, "n_tokens": int(keep.sum())}
    return results


# ------------------------------------------------------------------ pair scores

def pair_scores(lm, pairs: pd.DataFrame, method: str | None = None, causal_bos: str = "prepend",
                on_unmodified: str = "raise", alignment: str = "metric.py", **engine) -> pd.DataFrame:
    """Score both sentences of every pair; return ``pairs`` with ``score_more``/``score_less``.

    Parameters
    ----------
    lm : :class:`polybias.engines.scoring.LanguageModel`.
    pairs : frame with ``sent_more``, ``sent_less``, ``bias_type``.
    method : ``"nangia"``, ``"sss"``, ``"aul"`` or ``"aula"`` for masked LMs, ``"causal"`` or
        ``"lm-eval"`` for causal LMs, ``"bias-bench"`` for both; default by ``lm.kind``
        (``"nangia"`` or ``"causal"``). ``"aul"``/``"aula"`` score whole unmasked sentences
        (:func:`all_unmasked_scores`; ``engine`` takes only ``batch_tokens``).
        ``"lm-eval"`` reproduces lm-evaluation-harness's ``crows_pairs`` tasks (see Notes).
    causal_bos : causal LMs: ``"prepend"`` (default) conditions every token on BOS;
        ``"first-token"`` only the first one, the sentence itself fed without BOS — with
        ``method="bias-bench"`` this reproduces bias-bench's generative score (McGill-NLP/
        bias-bench at 291426a, ``bias_bench/benchmark/crows/crows.py``
        ``_joint_log_probability``, lines 290–355: the geometric mean of the token
        probabilities, i.e. exp of our mean log-probability; compat only).
    on_unmodified : ``method="bias-bench"`` or ``"sss"`` on a masked LM: a pair in which one
        sentence has no modified token (identical token ids, or a pure insertion) is an error
        (``"raise"``, default) or left out (``"skip"``), as bias-bench does (same file,
        lines 119–125: ``Skipping example``; the pair is not counted in N). Skipped pairs
        are absent from the result; ``result.attrs["n_skipped"]`` counts them and
        ``result.attrs["skipped"]`` lists their index labels.
    alignment : masked LMs with ``"nangia"`` or ``"bias-bench"``: how the shared and the
        modified tokens are found (:func:`shared_token_positions`). ``"metric.py"``
        (default) aligns as the reference code of both methods does, which needs the column
        ``direction``; ``"content"`` aligns the tokens without special tokens, ``sent_more``
        first, whatever the direction; ``"seed-001"`` as seed 001's JSD code.
    engine : passed to the scoring engine (e.g. ``batch_tokens``).

    Notes
    -----
    ``method="lm-eval"`` is the scoring of EleutherAI's lm-evaluation-harness
    (``lm_eval/tasks/crows_pairs``, ``crows_pairs_english.yaml`` and ``utils.py``; checked
    against lm-eval 0.4.13 executed, ``tests/peers/test_lm_eval.py``). The task is a
    ``multiple_choice`` with an empty context and the two sentences as choices
    (``doc_to_choice`` = ``[sent_more, sent_less]``, ``target_delimiter: ""``); the ``hf``
    model scores an empty context as the prefix token alone (the tokenizer's BOS, its EOS
    when it has none) and the sentence encoded without special tokens, so each score is
    log P(sentence | BOS) summed over its tokens. Its ``process_results`` counts a pair as
    stereotyped when ``sent_more`` scores strictly higher (ties and the ``stereo_antistereo``
    column are ignored, as here) and records ``likelihood_diff`` = |score_more − score_less|
    (:func:`polybias.metrics.crows.lm_eval_metrics`). Compared with ``"causal"``, the
    default for causal LMs, the per-sentence score is the same sum except that the text goes
    to the tokenizer as written: the model's text normaliser (``lm.normaliser``) is not
    applied. lm-eval cuts
    inputs longer than the model's window from the left; here such a text is an error.
    """
    if on_unmodified not in ON_UNMODIFIED:
        raise CrowsError(f"on_unmodified must be one of {ON_UNMODIFIED}, got {on_unmodified!r}")
    if causal_bos not in CAUSAL_BOS:
        raise CrowsError(f"causal_bos must be one of {CAUSAL_BOS}, got {causal_bos!r}")
    method = method or ("causal" if lm.kind == "causal" else "nangia")
    if method not in METHODS:
        raise CrowsError(f"unknown method {method!r}; use one of {METHODS}")
    if method in UNMASKED and lm.kind != "mlm":
        raise CrowsError(f"method {method!r} applies to masked LMs, not to {lm.kind} {lm.name}")
    if method != "bias-bench" and (method in CAUSAL_METHODS) != (lm.kind == "causal"):
        raise CrowsError(f"method {method!r} does not apply to a {lm.kind} model ({lm.name})")
    if causal_bos != "prepend" and lm.kind != "causal":
        raise CrowsError(f"causal_bos applies to causal LMs, not to {lm.kind} {lm.name}")
    if causal_bos != "prepend" and method == "lm-eval":
        raise CrowsError("method 'lm-eval' conditions every token on BOS (causal_bos='prepend')")
    if alignment not in ALIGNMENTS:
        raise CrowsError(f"unknown alignment {alignment!r}; use one of {ALIGNMENTS}")
    if alignment != "metric.py" and (method in UNMASKED or lm.kind == "causal"):
        raise CrowsError(f"alignment applies to methods 'nangia' and 'bias-bench' on a masked LM, "
                         f"not to {method!r} on {lm.kind} {lm.name}")
    skip = on_unmodified == "skip"
    if skip and (method not in ("bias-bench", "sss") or lm.kind == "causal"):
        raise CrowsError("on_unmodified='skip' applies to methods 'bias-bench' and 'sss' on a masked "
                         "LM only")
    check_pairs(pairs, allow_identical=skip)
    more, less = pairs["sent_more"].tolist(), pairs["sent_less"].tolist()
    out = pairs.copy()
    if method in UNMASKED:
        scored = all_unmasked_scores(lm, more + less, attention=method == "aula", **engine)
        values = np.array([r["score"] for r in scored])
        out["score_more"], out["score_less"] = values[: len(more)], values[len(more):]
        out["n_scored_more"] = [r["n_tokens"] for r in scored[: len(more)]]
        out["n_scored_less"] = [r["n_tokens"] for r in scored[len(more):]]
        return out
    if lm.kind == "causal":
        if method == "lm-eval":  # lm-eval tokenizes the text as written
            lm = replace(lm, normaliser=None)
        if causal_bos == "prepend":  # each pair's shared prefix computed once (the same values)
            scored_more, scored_less = scoring.causal_pair_token_logprobs(lm, more, less, **engine)
            scored = scored_more + scored_less
        else:
            scored = scoring.token_logprobs(lm, more + less, bos=causal_bos, **engine)
        scores = scoring.reduce_scores(scored, "mean" if method == "bias-bench" else "sum")
        out["score_more"], out["score_less"] = scores[: len(more)], scores[len(more):]
        return out
    aligned = _alignments(lm.tokenizer, pairs, alignment, lm.normaliser)
    if method == "nangia":
        positions = [a[0] for a in aligned] + [a[1] for a in aligned]
        reduce = np.nansum
    else:  # bias-bench: the tokens outside the equal blocks (its _get_span(..., "diff"))
        positions = ([[p for p in a[2] if p not in set(a[0])] for a in aligned]
                     + [[p for p in a[3] if p not in set(a[1])] for a in aligned])
        reduce = np.nanmean
    empty = sorted({i % len(more) for i, p in enumerate(positions) if not p})
    skipped: list = []
    if empty and skip:
        keep = [i for i in range(len(more)) if i not in set(empty)]
        if not keep:
            raise CrowsError("every pair lacks modified tokens: nothing left to score")
        out = out.iloc[keep].copy()
        more, less = [more[i] for i in keep], [less[i] for i in keep]
        positions = [positions[i] for i in keep] + [positions[len(pairs) + i] for i in keep]
        skipped = [pairs.index[i] for i in empty]
        empty = []
    if empty:
        raise CrowsError(f"pairs with no {'shared' if method == 'nangia' else 'modified'} "
                         f"tokens to score (rows {empty[:10]})")
    if method == "sss":
        scored = scoring.jointly_masked_token_logprobs(lm, more + less, positions=positions, **engine)
    else:
        scored = scoring.masked_token_logprobs(lm, more + less, positions=positions, **engine)
    values = np.array([reduce(s.logprob[p]) for s, p in zip(scored, positions, strict=True)])
    out["score_more"], out["score_less"] = values[: len(more)], values[len(more):]
    out["n_scored_more"] = [len(p) for p in positions[: len(more)]]
    out["n_scored_less"] = [len(p) for p in positions[len(more):]]
    if skip:
        out.attrs["skipped"] = skipped
        out.attrs["n_skipped"] = len(skipped)
    return out


# ------------------------------------------------------------------ JSD attributions

def jsd_attributions(lm, pairs: pd.DataFrame, compat_fourth_root: bool = False,
                     alignment: str = "seed-001", **engine) -> pd.DataFrame:
    """Token-level bias attribution b(u) and the JSD stereotype score of every pair.

    Returns ``pairs`` with columns ``shared_tokens`` (token strings of the biased
    sentence), ``b`` (array of b(u) per shared token), ``offsets`` (character spans of
    those tokens in ``sent_more``), ``sjsd`` (mean b) and ``biased`` (sjsd < 0).
    Masked LMs mask each shared token one at a time (eqs. 1–2); causal LMs condition on
    the preceding tokens and BOS (eqs. 7–8). The shared tokens are those of
    :func:`shared_token_positions` with ``alignment`` (default ``"seed-001"``, the seed-001
    code's ``find_overlap``).
    """
    check_pairs(pairs)
    more, less = pairs["sent_more"].tolist(), pairs["sent_less"].tolist()
    shared = shared_token_positions(lm.tokenizer, pairs, alignment, lm.normaliser,
                                    causal=lm.kind == "causal")
    empty = [i for i, (a, _) in enumerate(shared) if not a]
    if empty:
        raise CrowsError(f"pairs with no shared tokens (rows {empty[:10]})")
    texts = more + less
    positions = [s[0] for s in shared] + [s[1] for s in shared]
    if lm.kind == "causal":
        scored = scoring.causal_token_logprobs(lm, texts, **engine)
    else:
        scored = scoring.masked_token_logprobs(lm, texts, positions=positions, **engine)
    n = len(more)
    rows_b, rows_tok, rows_off = [], [], []
    for i in range(n):
        sm, sl = scored[i], scored[n + i]
        pm, pl = positions[i], positions[n + i]
        b = jsd_to_onehot(sm.logprob[pm], compat_fourth_root) - jsd_to_onehot(sl.logprob[pl], compat_fourth_root)
        if lm.kind == "causal":  # same left context => same prediction: b(u) is exactly 0
            same = [np.array_equal(sm.input_ids[:a], sl.input_ids[:c]) for a, c in zip(pm, pl, strict=True)]
            b = np.where(same, 0.0, b)
        rows_b.append(b)
        rows_tok.append([sm.tokens[p] for p in pm])
        rows_off.append(np.asarray(sm.offsets)[pm])
    out = pairs.copy()
    out["shared_tokens"], out["b"], out["offsets"] = rows_tok, rows_b, rows_off
    out["sjsd"] = [float(np.mean(b)) for b in rows_b]
    out["biased"] = out["sjsd"] < 0
    return out
