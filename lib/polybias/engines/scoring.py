"""Language-model scoring engine: per-token log-probabilities of masked and causal LMs.

Every LM-based metric (CrowS-Pairs, JSD attribution, Kurita, CB score with PLL) reads
its numbers from here, so the conventions live in one place (docs/conventions.md):

* **Masked LMs** — pseudo-log-likelihood (PLL; Salazar et al. 2020, ACL,
  "Masked Language Model Scoring"):

      PLL(W) = Σ_{t ∉ special} log P(w_t | W_{\\t})

  where W_{\\t} is the sentence with token t replaced by the mask token, one token
  masked per copy. With ``within_word_l2r=True`` (PLL-word-l2r; Kauf & Ivanova 2023,
  ACL, "A Better Way to Do Masked Language Model Scoring") the pieces of the same word
  to the right of t are masked too: log P(w_t | W_{\\{t} ∪ {t' > t : word(t') = word(t)}}),
  words being the tokenizer's own ``word_ids()`` (as in minicons, the authors' code).
* **Causal LMs** — the chain rule, conditioned on a beginning-of-sequence token:

      log P(W) = Σ_i log P(w_i | BOS, w_{<i})

  The tokenizer's own BOS when it adds one (Llama); otherwise ``bos_token`` (or
  ``eos_token`` when there is none) is prepended, as is usual for GPT-2.

Token indices (``positions``, the arrays of :class:`TokenScores`) always index the
tokenizer's own encoding ``tokenizer(text)["input_ids"]``, special tokens included; an
engine-prepended BOS is not part of it.

Batching: all masked copies (or all causal sequences) of all texts are sorted by length
and packed into batches of at most ``batch_tokens`` padded tokens (rows × longest
row), padded on the right with an attention mask. The output layer runs only on the
scored positions, and log-softmax is taken in float32, in chunks, so memory stays
bounded by the budget rather than the dataset or vocabulary × tokens. Eval mode and
``torch.inference_mode`` throughout; the same inputs and options give identical numbers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
import torch
from tqdm.auto import tqdm

from polybias.engines.common import (
    LoadedModel,
    check_placed,
    max_length,
    normalise,
    pack_batches,
    renamed_keyword,
)

KINDS = ("mlm", "causal")
REDUCTIONS = ("sum", "mean")
#: How a causal LM's sentence is conditioned: BOS prepended (every token sees it), or
#: only the first token conditioned on BOS (bias-bench compat).
BOS_MODES = ("prepend", "first-token")
_LOGSOFTMAX_CHUNK = 256  # rows of (rows, V) float32 log-probabilities held at once


class ScoringError(ValueError):
    """A model that cannot be scored, or texts/options the engine cannot score."""


@dataclass
class LanguageModel(LoadedModel):
    """A masked or causal LM ready for scoring (see :func:`wrap_language_model`): the
    settings of :class:`polybias.engines.common.LoadedModel` and its ``kind``.
    """

    kind: str  # "mlm" | "causal"


@dataclass
class TokenScores:
    """Per-token scores of one text, aligned with ``tokenizer(text)["input_ids"]``.

    ``offsets`` are (n, 2) character spans in ``text`` ((0, 0) for special tokens);
    ``logprob`` is the natural-log probability of each token given its context, NaN where
    not scored (special tokens, BOS, positions not asked for); ``extra`` holds the value of
    the engine's ``distribution_fn`` at the scored tokens (NaN elsewhere), or None.
    """

    text: str
    input_ids: np.ndarray
    tokens: list[str]
    offsets: np.ndarray
    logprob: np.ndarray
    extra: np.ndarray | None = None


# ---------------------------------------------------------------- models

def kind_of_class(class_name: str) -> str | None:
    """``"mlm"`` or ``"causal"`` from a ``transformers`` class name (None: neither).

    >>> kind_of_class("BertForMaskedLM"), kind_of_class("GPT2LMHeadModel"), kind_of_class("BertModel")
    ('mlm', 'causal', None)
    """
    name = class_name
    if name.endswith("ForMaskedLM"):
        return "mlm"
    if name.endswith("ForCausalLM") or name.endswith("LMHeadModel"):
        return "causal"
    return None


def wrap_language_model(model, tokenizer, name: str, kind: str | None = None, revision=None,
                        device: str = "cpu") -> LanguageModel:
    """Wrap a ``transformers`` LM and its (fast) tokenizer for scoring.

    Parameters
    ----------
    model : a ``…ForMaskedLM``, ``…ForCausalLM`` or ``…LMHeadModel``, already on ``device``
        (the engine never moves it); put in eval mode. A model without an LM head (``BertModel``,
        ``ElectraForPreTraining``) is refused.
    tokenizer : its fast tokenizer (offsets and word ids are needed).
    name : the name results are recorded under.
    kind : "mlm" or "causal"; inferred from the class name when None.
    revision : model revision / sha recorded with results.
    device : the torch device the model is on; float16 weights are allowed on CUDA only
        (:func:`polybias.engines.common.check_placed`).

    Returns
    -------
    LanguageModel, with ``max_length`` the smaller of the tokenizer's
    ``model_max_length`` and the config's position limit (RoBERTa-style position ids,
    which start after the padding index, counted).
    """
    inferred = kind_of_class(type(model).__name__)
    if kind is not None and kind not in KINDS:
        raise ScoringError(f"kind must be one of {KINDS}, got {kind!r}")
    has_head = callable(getattr(model, "get_output_embeddings", None)) and \
        model.get_output_embeddings() is not None
    if inferred is None and not (kind is not None and has_head):
        raise ScoringError(
            f"model {name!r} ({type(model).__name__}) has no MLM or causal LM head; load it with "
            "AutoModelForMaskedLM or AutoModelForCausalLM")
    if kind is not None and inferred is not None and kind != inferred:
        raise ScoringError(f"model {name!r} is a {type(model).__name__} ({inferred}), not {kind!r}")
    kind = kind or inferred
    if not getattr(tokenizer, "is_fast", False):
        raise ScoringError(f"the tokenizer of {name!r} is not a fast tokenizer; the engine needs "
                           "offsets and word ids (load it with use_fast=True)")
    if kind == "mlm" and tokenizer.mask_token_id is None:
        raise ScoringError(f"the tokenizer of masked LM {name!r} has no mask token")
    if kind == "causal" and tokenizer.bos_token_id is None and tokenizer.eos_token_id is None:
        raise ScoringError(f"the tokenizer of causal LM {name!r} has neither a BOS nor an EOS token "
                           "to condition the first token on")
    check_placed(model, device, name, ScoringError)
    model.eval()
    return LanguageModel(name=name, kind=kind, model=model, tokenizer=tokenizer, revision=revision,
                         max_length=max_length(model, tokenizer, error=ScoringError), device=str(device))


# ---------------------------------------------------------------- encoding

@dataclass
class Encoded:
    """One text as the tokenizer encodes it (:func:`encode`): ids, character offsets in the
    text given ((0, 0) for special tokens), the special-token mask, word ids and tokens."""

    ids: np.ndarray
    offsets: np.ndarray
    special: np.ndarray  # bool
    word_ids: list[int | None]
    tokens: list[str]


def check_texts(texts) -> list[str]:
    """``texts`` as a list, each a non-empty string (else a :class:`ScoringError` naming it)."""
    if isinstance(texts, str):
        raise ScoringError("texts must be a list of strings, not one string")
    texts = list(texts)
    for i, t in enumerate(texts):
        if not isinstance(t, str):
            raise ScoringError(f"text {i} is not a string but {type(t).__name__}: {t!r}")
        if not t.strip():
            raise ScoringError(f"text {i} is empty")
    return texts


def _bos(lm: LanguageModel, ids: np.ndarray, special: np.ndarray) -> int | None:
    """The id to prepend, or None when the tokenizer already starts with its own BOS."""
    tok = lm.tokenizer
    if special[0] and tok.bos_token_id is not None and ids[0] == tok.bos_token_id:
        return None
    return tok.bos_token_id if tok.bos_token_id is not None else tok.eos_token_id


def encode(lm: LanguageModel, texts: list[str], causal: bool = False) -> list[Encoded]:
    """Tokenize (after the model's text normaliser, offsets mapped back to the text given);
    check emptiness and length (a BOS the engine prepends counts)."""
    tok = lm.tokenizer
    out = []
    for i, text in enumerate(texts):
        normalised, remap = normalise(lm.normaliser, text, ScoringError)
        enc = tok(normalised, add_special_tokens=True, return_offsets_mapping=True,
                  return_special_tokens_mask=True, truncation=False)
        ids = np.asarray(enc["input_ids"], dtype=np.int64)
        special = np.asarray(enc["special_tokens_mask"], dtype=bool)
        if special.all():
            raise ScoringError(f"text {i} has no tokens besides special tokens: {text!r}")
        n = len(ids) + int(causal and _bos(lm, ids, special) is not None)
        if n > lm.max_length:
            raise ScoringError(
                f"text {i} is {n} tokens long (special tokens included) but {lm.name} accepts at "
                f"most {lm.max_length}; shorten or split it: {text[:60]!r}")
        offsets = remap(np.asarray(enc["offset_mapping"], dtype=np.int64).reshape(-1, 2))
        offsets[special] = 0
        out.append(Encoded(ids, offsets, special, enc.word_ids(),
                            tok.convert_ids_to_tokens(ids.tolist())))
    return out


# ---------------------------------------------------------------- forward

@contextmanager
def head_only_at(model, shape: tuple[int, int], rows: torch.Tensor, cols: torch.Tensor):
    """Run the output layer only on hidden states ``[rows, cols]`` (a forward pre-hook on
    ``get_output_embeddings()``); yields a dict telling whether the hook applied."""
    state = {"applied": False}
    head = model.get_output_embeddings() if hasattr(model, "get_output_embeddings") else None
    if not isinstance(head, torch.nn.Module):
        yield state
        return

    def hook(module, args):
        h = args[0] if args else None
        if isinstance(h, torch.Tensor) and h.dim() == 3 and tuple(h.shape[:2]) == shape:
            state["applied"] = True
            return (h[rows, cols], *args[1:])
        return None

    handle = head.register_forward_pre_hook(hook)
    try:
        yield state
    finally:
        handle.remove()


def _score_batch(lm: LanguageModel, batch: np.ndarray, lengths: np.ndarray, rows: np.ndarray,
                 cols: np.ndarray, gold: np.ndarray, distribution_fn) -> tuple[np.ndarray, np.ndarray | None]:
    """Log P(gold[k] | row rows[k]) read at position cols[k], for every k."""
    device = lm.device
    input_ids = torch.from_numpy(batch).to(device)
    width = batch.shape[1]
    attention = (torch.arange(width)[None, :] < torch.from_numpy(lengths)[:, None]).long().to(device)
    r = torch.from_numpy(rows).to(device)
    c = torch.from_numpy(cols).to(device)
    kwargs = {"use_cache": False} if lm.kind == "causal" else {}
    with head_only_at(lm.model, tuple(batch.shape), r, c) as state:
        out = lm.model(input_ids=input_ids, attention_mask=attention, **kwargs)
    logits = out.logits if hasattr(out, "logits") else out[0]
    if not state["applied"] or logits.dim() != 2:
        logits = logits[r, c]
    g = torch.from_numpy(gold).to(device)
    values = np.empty(len(gold), dtype=np.float64)
    extra = np.empty(len(gold), dtype=np.float64) if distribution_fn is not None else None
    for s in range(0, len(gold), _LOGSOFTMAX_CHUNK):
        chunk = logits[s:s + _LOGSOFTMAX_CHUNK]
        lp = torch.log_softmax(chunk.to(torch.promote_types(chunk.dtype, torch.float32)), dim=-1)
        gs = g[s:s + _LOGSOFTMAX_CHUNK]
        values[s:s + len(gs)] = lp.gather(1, gs[:, None])[:, 0].double().cpu().numpy()
        if extra is not None:
            golds = gs.tolist()
            for k in range(len(golds)):
                extra[s + k] = float(distribution_fn(lp[k], golds[k]))
    return values, extra


def _progress(total: int, enabled: bool, desc: str):
    return tqdm(total=total, disable=not enabled, desc=desc, unit="batch", leave=False)


def _padded_batches(lm: LanguageModel, lengths: np.ndarray, batch_tokens: int | None,
                    pad_id: int, progress: bool, desc: str):
    """Rows of ``lengths`` packed into forward passes of at most ``batch_tokens`` padded
    tokens (None: ``lm.batch_tokens``; :func:`polybias.engines.common.pack_batches`), with a
    progress bar: yields each pass's row indices, their lengths and a (rows, longest row)
    int64 array filled with ``pad_id``, for the caller to fill."""
    batches = pack_batches(lengths, lm.batch_tokens if batch_tokens is None else batch_tokens,
                           ScoringError)
    with _progress(len(batches), progress, desc) as bar:
        for b in batches:
            blen = lengths[b]
            yield b, blen, np.full((len(b), int(blen.max())), pad_id, dtype=np.int64)
            bar.update()


def _store(results: list[TokenScores], where, values: np.ndarray, extra: np.ndarray | None) -> None:
    """Put the k-th of ``values`` (and of ``extra``) at token j of text i, for the k-th
    (i, j) of ``where``."""
    for k, (i, j) in enumerate(where):
        results[i].logprob[j] = values[k]
        if extra is not None:
            results[i].extra[j] = extra[k]


def _result(texts, encs, distribution_fn) -> list[TokenScores]:
    return [TokenScores(text=t, input_ids=e.ids, tokens=e.tokens, offsets=e.offsets,
                        logprob=np.full(len(e.ids), np.nan),
                        extra=np.full(len(e.ids), np.nan) if distribution_fn is not None else None)
            for t, e in zip(texts, encs, strict=True)]


# ---------------------------------------------------------------- masked LMs

def _check_positions(positions, encs: list[Encoded], allow_special: bool = False) -> list[list[int]]:
    if positions is None:
        return [np.flatnonzero(~e.special).tolist() for e in encs]
    if isinstance(positions, str | bytes) or len(positions) != len(encs):
        raise ScoringError(f"positions must hold one list of token indices per text "
                           f"({len(encs)} texts), got {len(positions)}")
    out = []
    for i, (pos, e) in enumerate(zip(positions, encs, strict=True)):
        if pos is None:
            out.append(np.flatnonzero(~e.special).tolist())
            continue
        keep = []
        for p in pos:
            if not isinstance(p, int | np.integer) or isinstance(p, bool):
                raise ScoringError(f"positions of text {i} must be integers, got {p!r}")
            if not 0 <= p < len(e.ids):
                raise ScoringError(f"position {p} of text {i} is out of range: the text has "
                                   f"{len(e.ids)} tokens (special tokens included)")
            if e.special[p] and not allow_special:
                raise ScoringError(f"position {p} of text {i} is the special token "
                                   f"{e.tokens[p]!r}, which is not scored")
            keep.append(int(p))
        out.append(sorted(set(keep)))
    return out


def _masked_lm_encodings(lm: LanguageModel, texts: Iterable[str]) -> tuple[list[str], list]:
    """The checked texts and their encodings, for scoring that masks tokens (masked LMs only)."""
    if lm.kind != "mlm":
        raise ScoringError(f"{lm.name} is a {lm.kind} LM; masked scoring needs a masked LM")
    texts = check_texts(texts)
    return texts, encode(lm, texts)


@renamed_keyword("max_batch_tokens", "batch_tokens")
def masked_token_logprobs(
    lm: LanguageModel,
    texts: list[str],
    positions: list[list[int]] | None = None,
    within_word_l2r: bool = False,
    batch_tokens: int | None = None,
    distribution_fn: Callable[[torch.Tensor, int], float] | None = None,
    progress: bool = False,
) -> list[TokenScores]:
    """log P(token | rest of the text) of a masked LM, one masked token per copy.

    Parameters
    ----------
    lm : a masked LM (:func:`wrap_language_model`, :func:`polybias.models.load`).
    texts : sentences; each must fit ``lm.max_length`` with its special tokens.
    positions : per text, the token indices (into ``tokenizer(text)["input_ids"]``) to
        score, each masked on its own (CrowS-Pairs masks only the shared tokens); None
        scores every non-special token (the PLL of Salazar et al. 2020). A None entry
        stands for all tokens of that text.
    within_word_l2r : also mask the pieces of the same word to the right of the scored
        piece (PLL-word-l2r, Kauf & Ivanova 2023); words are ``word_ids()``.
    batch_tokens : budget of one forward pass in padded tokens (rows × longest row);
        None: the model's ``batch_tokens`` (8192 unless set when loading).
    distribution_fn : ``f(log_probs, gold_id) -> float`` called at every scored token with
        the (V,) float32 log-probabilities predicted there (valid during the call only);
        its values land in :attr:`TokenScores.extra`.
    progress : show a tqdm bar over batches.

    Returns
    -------
    list of :class:`TokenScores`, one per text, in input order.
    """
    texts, encs = _masked_lm_encodings(lm, texts)
    positions = _check_positions(positions, encs)
    mask_id = lm.tokenizer.mask_token_id
    pad_id = lm.tokenizer.pad_token_id
    pad_id = pad_id if pad_id is not None else mask_id

    jobs: list[tuple[int, int, list[int]]] = []  # (text, scored position, masked positions)
    for i, (pos, e) in enumerate(zip(positions, encs, strict=True)):
        for p in pos:
            masked = [p]
            if within_word_l2r and e.word_ids[p] is not None:
                masked += [q for q in range(p + 1, len(e.ids))
                           if e.word_ids[q] == e.word_ids[p] and not e.special[q]]
            jobs.append((i, p, masked))
    results = _result(texts, encs, distribution_fn)
    if not jobs:
        return results
    lengths = np.array([len(encs[j[0]].ids) for j in jobs])
    with torch.inference_mode():
        for b, blen, batch in _padded_batches(lm, lengths, batch_tokens, pad_id, progress,
                                              f"PLL {lm.name}"):
            gold = np.empty(len(b), dtype=np.int64)
            cols = np.empty(len(b), dtype=np.int64)
            for r, k in enumerate(b):
                i, p, masked = jobs[k]
                ids = encs[i].ids
                batch[r, :len(ids)] = ids
                batch[r, masked] = mask_id
                gold[r], cols[r] = ids[p], p
            values, extra = _score_batch(lm, batch, blen, np.arange(len(b)), cols, gold,
                                         distribution_fn)
            _store(results, [jobs[k][:2] for k in b], values, extra)
    return results


@renamed_keyword("max_batch_tokens", "batch_tokens")
def jointly_masked_token_logprobs(
    lm: LanguageModel,
    texts: list[str],
    positions: list[list[int]],
    batch_tokens: int | None = None,
    progress: bool = False,
    allow_special: bool = False,
) -> list[TokenScores]:
    """log P(token | text with all of its ``positions`` masked at once), for each position.

    One masked copy per text: every position of ``positions[i]`` is replaced by the mask
    token in the same copy, and each is scored against its own gold token (the diagonal;
    the StereoSet-style score of the modified tokens of a pair, Nadeem et al. 2021, ACL,
    "StereoSet", as mlm-bias scores them). :func:`masked_token_logprobs` masks one token
    per copy instead.

    Parameters
    ----------
    lm : a masked LM.
    texts : sentences; each must fit ``lm.max_length`` with its special tokens.
    positions : per text, the token indices (into ``tokenizer(text)["input_ids"]``) to mask
        together; an empty list leaves that text unscored (all NaN). None is not accepted:
        masking every token at once leaves no context.
    batch_tokens, progress : as in :func:`masked_token_logprobs`.
    allow_special : accept special-token positions too (GEST's reference masks every
        position where two token sequences differ, a final separator included when their
        lengths differ; :mod:`polybias.engines.gest_scores`).

    Returns
    -------
    list of :class:`TokenScores`, one per text, in input order.
    """
    texts, encs = _masked_lm_encodings(lm, texts)
    if positions is None or any(p is None for p in positions):
        raise ScoringError("jointly masked scoring needs the positions to mask for every text")
    positions = _check_positions(positions, encs, allow_special=allow_special)
    mask_id = lm.tokenizer.mask_token_id
    pad_id = lm.tokenizer.pad_token_id
    pad_id = pad_id if pad_id is not None else mask_id
    jobs = [i for i, pos in enumerate(positions) if pos]
    results = _result(texts, encs, None)
    if not jobs:
        return results
    lengths = np.array([len(encs[i].ids) for i in jobs])
    with torch.inference_mode():
        for b, blen, batch in _padded_batches(lm, lengths, batch_tokens, pad_id, progress,
                                              f"joint masks {lm.name}"):
            rows, cols, gold, where = [], [], [], []
            for r, k in enumerate(b):
                i = jobs[k]
                ids, pos = encs[i].ids, positions[i]
                batch[r, :len(ids)] = ids
                batch[r, pos] = mask_id
                rows += [r] * len(pos)
                cols += pos
                gold += ids[pos].tolist()
                where += [(i, p) for p in pos]
            values, _ = _score_batch(lm, batch, blen, np.array(rows, dtype=np.int64),
                                     np.array(cols, dtype=np.int64), np.array(gold, dtype=np.int64), None)
            _store(results, where, values, None)
    return results


# ---------------------------------------------------------------- causal LMs

@renamed_keyword("max_batch_tokens", "batch_tokens")
def causal_token_logprobs(
    lm: LanguageModel,
    texts: list[str],
    batch_tokens: int | None = None,
    distribution_fn: Callable[[torch.Tensor, int], float] | None = None,
    progress: bool = False,
    bos: str = "prepend",
) -> list[TokenScores]:
    """log P(t_i | BOS, t_<i) of a causal LM for every non-special token.

    The tokenizer's own BOS is used when it adds one (its entry stays NaN); otherwise
    ``bos_token`` — or ``eos_token`` when the tokenizer has no BOS, as for GPT-2 — is
    prepended (not part of the returned arrays, but counted against ``lm.max_length``).
    Other options as in :func:`masked_token_logprobs`; every position of a causal batch
    is scored, so its logits take about ``batch_tokens`` × V × 4 bytes (lower the
    budget for large vocabularies on small machines).

    ``bos="first-token"`` (compat, for tokenizers that add no BOS of their own) conditions
    only the first token on BOS, log P(t_0 | BOS), and scores the others on the sentence
    fed without BOS, log P(t_i | t_<i): bias-bench's ``_joint_log_probability``
    (McGill-NLP/bias-bench at 291426a, ``bias_bench/benchmark/crows/crows.py`` lines
    290–346: the first token's probability from the model run on ``<|endoftext|>`` alone,
    the rest from the model run on the sentence's own tokens).
    """
    if lm.kind != "causal":
        raise ScoringError(f"{lm.name} is a {lm.kind} LM; causal scoring needs a causal LM")
    if bos not in BOS_MODES:
        raise ScoringError(f"bos must be one of {BOS_MODES}, got {bos!r}")
    texts = check_texts(texts)
    tok = lm.tokenizer
    encs = encode(lm, texts, causal=bos == "prepend")
    pad_id = tok.pad_token_id if tok.pad_token_id is not None else (
        tok.eos_token_id if tok.eos_token_id is not None else tok.bos_token_id)

    rows_ids, shift = [], []
    for i, e in enumerate(encs):
        bos_id = _bos(lm, e.ids, e.special)
        if bos == "first-token":
            if bos_id is None:
                raise ScoringError(f"bos='first-token' is for tokenizers that add no BOS; {lm.name}'s "
                                   f"tokenizer starts text {i} with its own")
            bos_id = None  # the sentence is fed as tokenized; its first token is scored below
        rows_ids.append(e.ids if bos_id is None else np.concatenate([[bos_id], e.ids]))
        shift.append(0 if bos_id is None else 1)
    results = _result(texts, encs, distribution_fn)
    lengths = np.array([len(r) for r in rows_ids])
    with torch.inference_mode():
        for b, blen, batch in _padded_batches(lm, lengths, batch_tokens, pad_id, progress,
                                              f"LL {lm.name}"):
            rows, cols, gold, where = [], [], [], []
            for r, i in enumerate(b):
                batch[r, :blen[r]] = rows_ids[i]
                scored = np.flatnonzero(~encs[i].special)
                scored = scored[scored + shift[i] >= 1]  # a first token needs a context
                rows.append(np.full(len(scored), r))
                cols.append(scored + shift[i] - 1)  # the position predicting token j
                gold.append(encs[i].ids[scored])
                where += [(i, int(j)) for j in scored]
            values, extra = _score_batch(lm, batch, blen, np.concatenate(rows), np.concatenate(cols),
                                         np.concatenate(gold), distribution_fn)
            _store(results, where, values, extra)
        if bos == "first-token":  # every first token from one run of the model on BOS alone
            first = [i for i, e in enumerate(encs) if not e.special[0]]
            if first:
                start = tok.bos_token_id if tok.bos_token_id is not None else tok.eos_token_id
                n = len(first)
                values, extra = _score_batch(lm, np.array([[start]], dtype=np.int64), np.array([1]),
                                             np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64),
                                             np.array([encs[i].ids[0] for i in first], dtype=np.int64),
                                             distribution_fn)
                _store(results, [(i, 0) for i in first], values, extra)
    return results


@renamed_keyword("max_batch_tokens", "batch_tokens")
def next_token_logprobs(lm: LanguageModel, prompts: list[str], token_ids, batch_tokens: int | None = None,
                        progress: bool = False) -> np.ndarray:
    """log P(next token = ``token_ids[j]`` | prompt i) of a causal LM, read after the
    prompt's last token.

    Each prompt is fed as its tokenizer encodes it (its own special tokens, e.g. Llama's
    BOS; nothing prepended), right-padded into batches of at most ``batch_tokens`` tokens
    with an attention mask; the next-token distribution is the one at the prompt's last
    position (GEST's causal score, :mod:`polybias.engines.gest_scores`).

    Parameters
    ----------
    lm : a causal LM.
    prompts : texts, each non-empty and within ``lm.max_length`` tokens.
    token_ids : (k,) vocabulary ids whose log-probability is read for every prompt.
    batch_tokens, progress : as in :func:`masked_token_logprobs`.

    Returns
    -------
    numpy.ndarray
        (n_prompts, k) natural-log probabilities, float64.
    """
    if lm.kind != "causal":
        raise ScoringError(f"{lm.name} is a {lm.kind} LM; next-token scoring needs a causal LM")
    prompts = check_texts(prompts)
    ids = np.asarray(token_ids, dtype=np.int64).reshape(-1)
    vocab = lm.model.get_output_embeddings().weight.shape[0]
    if len(ids) == 0 or ids.min() < 0 or ids.max() >= vocab:
        raise ScoringError(f"token_ids {ids.tolist()} must be non-empty ids inside {lm.name}'s "
                           f"vocabulary of {vocab}")
    encs = encode(lm, prompts)
    tok = lm.tokenizer
    pad_id = tok.pad_token_id if tok.pad_token_id is not None else (
        tok.eos_token_id if tok.eos_token_id is not None else tok.bos_token_id)
    out = np.full((len(prompts), len(ids)), np.nan)
    lengths = np.array([len(e.ids) for e in encs])
    k = len(ids)
    with torch.inference_mode():
        for b, blen, batch in _padded_batches(lm, lengths, batch_tokens, pad_id, progress,
                                              f"next token {lm.name}"):
            for r, i in enumerate(b):
                batch[r, :blen[r]] = encs[i].ids
            rows = np.repeat(np.arange(len(b)), k)
            cols = np.repeat(blen - 1, k)
            values, _ = _score_batch(lm, batch, blen, rows, cols, np.tile(ids, len(b)), None)
            out[b] = values.reshape(len(b), k)
    return out


# ---------------------------------------------------------------- dispatch and sentences

_MLM_ONLY = ("positions", "within_word_l2r")


def token_logprobs(lm: LanguageModel, texts: list[str], positions=None, **kw) -> list[TokenScores]:
    """:func:`masked_token_logprobs` or :func:`causal_token_logprobs` by ``lm.kind``."""
    if lm.kind == "mlm":
        return masked_token_logprobs(lm, texts, positions=positions, **kw)
    bad = [k for k in _MLM_ONLY if (positions if k == "positions" else kw.get(k))]
    if bad:
        raise ScoringError(f"{', '.join(bad)} apply to masked LMs only, not to causal {lm.name}")
    kw.pop("within_word_l2r", None)
    return causal_token_logprobs(lm, texts, **kw)


def reduce_scores(scores: list[TokenScores], reduction: str) -> np.ndarray:
    """Per text, the sum or mean of its scored token log-probabilities (NaN when none)."""
    if reduction not in REDUCTIONS:
        raise ScoringError(f"reduction must be one of {REDUCTIONS}, got {reduction!r}")
    out = np.full(len(scores), np.nan)
    for k, s in enumerate(scores):
        v = s.logprob[~np.isnan(s.logprob)]
        if v.size:
            out[k] = v.sum() if reduction == "sum" else v.mean()
    return out


def pseudo_log_likelihood(lm: LanguageModel, texts: list[str], reduction: str = "sum",
                          within_word_l2r: bool = False, **kw) -> np.ndarray:
    """Sentence PLL of a masked LM (Salazar et al. 2020): Σ_t log P(w_t | W_{\\t}).

    ``reduction="mean"`` divides by the number of scored tokens; ``within_word_l2r``
    gives PLL-word-l2r (Kauf & Ivanova 2023); ``kw`` goes to
    :func:`masked_token_logprobs` (``positions``, ``batch_tokens``, ``progress``).
    A text with no scored token gets NaN.
    """
    if reduction not in REDUCTIONS:
        raise ScoringError(f"reduction must be one of {REDUCTIONS}, got {reduction!r}")
    if lm.kind != "mlm":
        raise ScoringError(f"{lm.name} is a {lm.kind} LM; use sentence_log_likelihood for the "
                           "log-likelihood of causal LMs")
    return reduce_scores(masked_token_logprobs(lm, texts, within_word_l2r=within_word_l2r, **kw), reduction)


def sentence_log_likelihood(lm: LanguageModel, texts: list[str], reduction: str = "sum",
                            **kw) -> np.ndarray:
    """PLL for masked LMs, log P(W | BOS) = Σ_i log P(w_i | BOS, w_<i) for causal LMs."""
    if reduction not in REDUCTIONS:
        raise ScoringError(f"reduction must be one of {REDUCTIONS}, got {reduction!r}")
    return reduce_scores(token_logprobs(lm, texts, **kw), reduction)


# ---------------------------------------------------------------- one mask to fill, next sentence

@renamed_keyword("max_batch_tokens", "batch_tokens")
def mask_fill_logprobs(lm: LanguageModel, texts: list[str], gold_ids, batch_tokens: int | None = None,
                       progress: bool = False) -> np.ndarray:
    """log P(``gold_ids[i]`` at the one mask token of ``texts[i]``) of a masked LM.

    Each text holds the tokenizer's mask token exactly once (e.g. StereoSet's
    intrasentence inputs, where the blank becomes the word's earlier pieces and one mask;
    :func:`polybias.studies.stereoset.candidate_scores`). Texts are padded into batches
    of at most ``batch_tokens`` tokens with an attention mask.

    Returns
    -------
    numpy.ndarray of float64, one natural-log probability per text.

    Raises
    ------
    ScoringError
        A text without, or with more than one, mask token (naming it), or a gold id outside
        the vocabulary.
    """
    if lm.kind != "mlm":
        raise ScoringError(f"{lm.name} is a {lm.kind} LM; filling a mask needs a masked LM")
    texts = check_texts(texts)
    gold_ids = np.asarray(gold_ids, dtype=np.int64)
    if gold_ids.shape != (len(texts),):
        raise ScoringError(f"gold_ids must hold one id per text ({len(texts)}), got shape {gold_ids.shape}")
    vocab = lm.model.get_output_embeddings().weight.shape[0] \
        if hasattr(lm.model, "get_output_embeddings") and lm.model.get_output_embeddings() is not None \
        else len(lm.tokenizer)
    if len(gold_ids) and (gold_ids.min() < 0 or gold_ids.max() >= vocab):
        raise ScoringError(f"a gold id lies outside {lm.name}'s vocabulary of {vocab}")
    encs = encode(lm, texts)
    mask_id = lm.tokenizer.mask_token_id
    where = []
    for i, e in enumerate(encs):
        at = np.flatnonzero(e.ids == mask_id)
        if len(at) != 1:
            raise ScoringError(f"text {i} holds {len(at)} mask tokens, not one: {texts[i][:80]!r}")
        where.append(int(at[0]))
    pad_id = lm.tokenizer.pad_token_id if lm.tokenizer.pad_token_id is not None else mask_id
    out = np.full(len(texts), np.nan)
    lengths = np.array([len(e.ids) for e in encs])
    with torch.inference_mode():
        for b, blen, batch in _padded_batches(lm, lengths, batch_tokens, pad_id, progress,
                                              f"mask fill {lm.name}"):
            for r, i in enumerate(b):
                batch[r, :blen[r]] = encs[i].ids
            values, _ = _score_batch(lm, batch, blen, np.arange(len(b)), np.array([where[i] for i in b]),
                                     gold_ids[b], None)
            out[b] = values
    return out


def next_sentence_probabilities(model, tokenizer, pairs: list[tuple[str, str]], is_next_index: int = 0,
                                batch_size: int = 16, device: str = "cpu") -> np.ndarray:
    """P(the second text follows the first) from a next-sentence-prediction head.

    ``model`` is a ``…ForNextSentencePrediction`` (or any model whose output ``logits`` are
    (batch, 2)); ``tokenizer`` encodes each pair as the model was trained
    (``[CLS] A [SEP] B [SEP]`` with token types 0/1 for BERT). The probability is the
    softmax of the two logits at ``is_next_index`` (0 for BERT's head: "is next").

    Returns
    -------
    numpy.ndarray of float64, one probability per pair.
    """
    if not pairs:
        return np.empty(0)
    for i, pair in enumerate(pairs):
        if len(pair) != 2:
            raise ScoringError(f"pair {i} is not (context, sentence): {pair!r}")
        check_texts(list(pair))
    out = np.empty(len(pairs), dtype=np.float64)
    model.eval()
    with torch.inference_mode():
        for s in range(0, len(pairs), batch_size):
            chunk = pairs[s:s + batch_size]
            enc = tokenizer([a for a, _ in chunk], [b for _, b in chunk], padding=True,
                            return_tensors="pt", return_token_type_ids=True)
            enc = {k: v.to(device) for k, v in enc.items()}
            output = model(**enc)
            logits = output.logits if hasattr(output, "logits") else output[0]
            if logits.dim() != 2 or logits.shape[1] != 2:
                raise ScoringError(f"expected (batch, 2) next-sentence logits, got {tuple(logits.shape)}")
            probs = torch.softmax(logits.float(), dim=-1)[:, is_next_index]
            out[s:s + len(chunk)] = probs.double().cpu().numpy()
    return out
