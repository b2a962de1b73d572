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
Batches are built with array operations from one flat array of all ids, go to the device
in one copy and come back in one (the gold log-probabilities gathered on the device), and
on CUDA the next batch is queued before the previous one is read back
(:mod:`polybias.engines.batches`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
import torch
from tqdm.auto import tqdm

from polybias.engines.batches import (
    Fetch,
    fill_padded,
    flatten,
    pipelined,
    ranges,
    start_fetch,
    to_device,
)
from polybias.engines.common import (
    LoadedModel,
    auto_batch_tokens,
    check_placed,
    max_length,
    pack_batches,
    renamed_keyword,
)
from polybias.engines.normalising import normalise

KINDS = ("mlm", "causal")
REDUCTIONS = ("sum", "mean")
#: How a causal LM's sentence is conditioned: BOS prepended (every token sees it), or
#: only the first token conditioned on BOS (bias-bench compat).
BOS_MODES = ("prepend", "first-token")
#: Rows of (rows, V) float32 log-probabilities held at once. A few rows (8 MB for Gemma 3's
#: 262,144-token vocabulary) stay in the allocator's reused memory; 256 rows (268 MB) were
#: fresh pages every chunk, and cost Gemma's CrowS-Pairs scoring about a fifth of its time
#: (benchmarks/bench_real_models.py, engine against the bare forwards).
_LOGSOFTMAX_CHUNK = 8


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
                        device: str = "cpu", batch_tokens: int | None = None) -> LanguageModel:
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
    batch_tokens : the token budget of a forward pass when an engine call gives none; None:
        chosen from the free memory of a CUDA device, 8192 elsewhere
        (:func:`polybias.engines.common.auto_batch_tokens`). Run records state it
        (:meth:`polybias.engines.common.LoadedModel.run_settings`).

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
    if batch_tokens is not None and (not isinstance(batch_tokens, int | np.integer)
                                     or isinstance(batch_tokens, bool) or batch_tokens < 1):
        raise ScoringError(f"batch_tokens must be a positive integer or None (auto), got {batch_tokens!r}")
    model.eval()
    budget = auto_batch_tokens(model, str(device), kind) if batch_tokens is None else int(batch_tokens)
    return LanguageModel(name=name, kind=kind, model=model, tokenizer=tokenizer, revision=revision,
                         max_length=max_length(model, tokenizer, error=ScoringError), device=str(device),
                         batch_tokens=budget)


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
    done = [normalise(lm.normaliser, text, ScoringError) for text in texts]
    if not done:
        return []
    # one call of the fast tokenizer for all texts (the same encoding as one call each)
    batch = tok([normalised for normalised, _ in done], add_special_tokens=True,
                return_offsets_mapping=True, return_special_tokens_mask=True, truncation=False)
    all_ids = batch["input_ids"]
    distinct = sorted({t for ids in all_ids for t in ids})  # an id's token does not depend on
    token_of = dict(zip(distinct, tok.convert_ids_to_tokens(distinct), strict=True))  # its context
    out = []
    for i, text in enumerate(texts):
        remap = done[i][1]
        ids = np.asarray(all_ids[i], dtype=np.int64)
        special = np.asarray(batch["special_tokens_mask"][i], dtype=bool)
        if special.all():
            raise ScoringError(f"text {i} has no tokens besides special tokens: {text!r}")
        n = len(ids) + int(causal and _bos(lm, ids, special) is not None)
        if n > lm.max_length:
            raise ScoringError(
                f"text {i} is {n} tokens long (special tokens included) but {lm.name} accepts at "
                f"most {lm.max_length}; shorten or split it: {text[:60]!r}")
        offsets = remap(np.asarray(batch["offset_mapping"][i], dtype=np.int64).reshape(-1, 2))
        offsets[special] = 0
        out.append(Encoded(ids, offsets, special, batch.word_ids(i), [token_of[t] for t in all_ids[i]]))
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


@dataclass
class _Batch:
    """One forward pass: the padded ``ids`` (rows, width) and row ``lengths``, and the
    scored entries: log P(``gold[k]`` | row ``rows[k]``) read at position ``cols[k]``,
    stored at ``dest[k]`` of the flat result (:func:`_flat_result`)."""

    ids: np.ndarray
    lengths: np.ndarray
    rows: np.ndarray
    cols: np.ndarray
    gold: np.ndarray
    dest: np.ndarray
    tree: tuple[np.ndarray, np.ndarray] | None = None
    """Texts sharing a prefix in one row (:func:`causal_group_token_logprobs`): the (rows,
    width) branch of every position (0: the shared prefix, k: the rest of the k-th text,
    -1: padding) and its position id; a token sees the prefix and its own branch only."""


def _tree_inputs(branch: torch.Tensor, lengths: torch.Tensor, width: int) -> torch.Tensor:
    """The (rows, 1, width, width) boolean attention mask of rows that hold several texts
    after a shared prefix (:attr:`_Batch.tree`): token i sees token j ≤ i when j is in the
    prefix (branch 0) or both lie in the same branch; padding sees only itself."""
    idx = torch.arange(width, device=branch.device)
    valid = idx[None, :] < lengths[:, None]
    causal = idx[:, None] >= idx[None, :]
    seen = (branch[:, None, :] == 0) | (branch[:, :, None] == branch[:, None, :])
    mask = causal[None] & valid[:, None, :] & valid[:, :, None] & seen
    mask |= torch.eye(width, dtype=torch.bool, device=branch.device)[None] & ~valid[:, :, None]
    return mask[:, None]


def _forward_logits(lm: LanguageModel, batch: _Batch):
    """The (K, V) logits at the scored entries of ``batch`` (the output layer run only
    there when the model allows it) and the device tensor of the golds; queued, not
    waited for."""
    input_ids, lengths, r, c, g = to_device(
        [batch.ids, batch.lengths, batch.rows, batch.cols, batch.gold], lm.device)
    width = batch.ids.shape[1]
    kwargs = {"use_cache": False} if lm.kind == "causal" else {}
    if batch.tree is not None:
        branch, kwargs["position_ids"] = to_device(list(batch.tree), lm.device)
        attention = _tree_inputs(branch, lengths, width)
    else:
        attention = (torch.arange(width, device=input_ids.device)[None, :] < lengths[:, None]).long()
    with head_only_at(lm.model, tuple(batch.ids.shape), r, c) as state:
        out = lm.model(input_ids=input_ids, attention_mask=attention, **kwargs)
    logits = out.logits if hasattr(out, "logits") else out[0]
    if not state["applied"] or logits.dim() != 2:
        logits = logits[r, c]
    return logits, g


def _gold_logprobs(logits, gold):
    """log-softmax of every row of ``logits`` (float32 at least, :data:`_LOGSOFTMAX_CHUNK`
    rows at a time) read at ``gold``: a (K,) tensor on the device."""
    if not len(gold):
        return torch.empty(0, device=logits.device)
    values = []
    for s in range(0, len(gold), _LOGSOFTMAX_CHUNK):
        chunk = logits[s:s + _LOGSOFTMAX_CHUNK]
        lp = torch.log_softmax(chunk.to(torch.promote_types(chunk.dtype, torch.float32)), dim=-1)
        values.append(lp.gather(1, gold[s:s + _LOGSOFTMAX_CHUNK, None])[:, 0])
    return values[0] if len(values) == 1 else torch.cat(values)


def _score_batch(lm: LanguageModel, batch: _Batch, distribution_fn):
    """Queue ``batch`` and return what :func:`_finish_batch` reads back: a
    :class:`~polybias.engines.batches.Fetch` of the gold log-probabilities (one
    device-to-host copy), and the ``distribution_fn`` values (computed row by row, which
    waits for the device) or None."""
    logits, gold = _forward_logits(lm, batch)
    if distribution_fn is None:
        return start_fetch(_gold_logprobs(logits, gold)), None
    values = np.empty(len(batch.gold), dtype=np.float64)
    extra = np.empty(len(batch.gold), dtype=np.float64)
    golds = batch.gold.tolist()
    for s in range(0, len(golds), _LOGSOFTMAX_CHUNK):
        chunk = logits[s:s + _LOGSOFTMAX_CHUNK]
        lp = torch.log_softmax(chunk.to(torch.promote_types(chunk.dtype, torch.float32)), dim=-1)
        gs = gold[s:s + _LOGSOFTMAX_CHUNK]
        values[s:s + len(gs)] = lp.gather(1, gs[:, None])[:, 0].double().cpu().numpy()
        for k in range(len(gs)):
            extra[s + k] = float(distribution_fn(lp[k], golds[s + k]))
    return values, extra


def _run_batches(lm: LanguageModel, batches: Iterable[_Batch], logprob: np.ndarray,
                 extra: np.ndarray | None, distribution_fn) -> None:
    """Score every batch, the next one queued before the previous one is read back
    (:func:`polybias.engines.batches.pipelined`), storing its values at its ``dest`` of
    the flat ``logprob`` (and ``extra``)."""
    def finish(batch: _Batch, handle) -> None:
        values, more = handle
        logprob[batch.dest] = values.result() if isinstance(values, Fetch) else values
        if extra is not None:
            extra[batch.dest] = more

    with torch.inference_mode():
        pipelined(batches, lambda batch: _score_batch(lm, batch, distribution_fn), finish)


def _progress(total: int, enabled: bool, desc: str):
    return tqdm(total=total, disable=not enabled, desc=desc, unit="batch", leave=False)


def _packed(lm: LanguageModel, lengths: np.ndarray, batch_tokens: int | None, progress: bool,
            desc: str):
    """Rows of ``lengths`` packed into forward passes of at most ``batch_tokens`` padded
    tokens (None: ``lm.batch_tokens``; :func:`polybias.engines.common.pack_batches`), with a
    progress bar: yields each pass's row indices."""
    batches = pack_batches(lengths, lm.batch_tokens if batch_tokens is None else batch_tokens,
                           ScoringError)
    with _progress(len(batches), progress, desc) as bar:
        for b in batches:
            yield b
            bar.update()


def _flat_result(encs: list[Encoded], distribution_fn) -> tuple[np.ndarray, np.ndarray | None, np.ndarray]:
    """NaN-filled flat arrays holding every text's tokens one after the other (values and
    ``distribution_fn`` values), and where each text begins."""
    starts = np.zeros(len(encs) + 1, dtype=np.int64)
    np.cumsum([len(e.ids) for e in encs], out=starts[1:])
    logprob = np.full(int(starts[-1]), np.nan)
    extra = np.full(int(starts[-1]), np.nan) if distribution_fn is not None else None
    return logprob, extra, starts


def _result(texts, encs, logprob: np.ndarray, extra: np.ndarray | None,
            starts: np.ndarray) -> list[TokenScores]:
    return [TokenScores(text=t, input_ids=e.ids, tokens=e.tokens, offsets=e.offsets,
                        logprob=logprob[starts[i]:starts[i + 1]],
                        extra=None if extra is None else extra[starts[i]:starts[i + 1]])
            for i, (t, e) in enumerate(zip(texts, encs, strict=True))]


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
        at = np.asarray(pos)
        ok = at.ndim == 1 and (len(at) == 0 or at.dtype.kind in "iu")
        if ok and len(at):
            ok = at.min() >= 0 and at.max() < len(e.ids) and (allow_special or not e.special[at].any())
        if not ok:  # find the first culprit and name it
            for p in pos:
                if not isinstance(p, int | np.integer) or isinstance(p, bool):
                    raise ScoringError(f"positions of text {i} must be integers, got {p!r}")
                if not 0 <= p < len(e.ids):
                    raise ScoringError(f"position {p} of text {i} is out of range: the text has "
                                       f"{len(e.ids)} tokens (special tokens included)")
                if e.special[p] and not allow_special:
                    raise ScoringError(f"position {p} of text {i} is the special token "
                                       f"{e.tokens[p]!r}, which is not scored")
        out.append(sorted(set(at.tolist())))
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

    flat_ids, starts = flatten([e.ids for e in encs])
    logprob, extra, _ = _flat_result(encs, distribution_fn)
    # one masked copy (job) per scored position: its text and position; with
    # within_word_l2r also the word's later pieces, masked with it (ragged: later_starts)
    counts = np.fromiter((len(p) for p in positions), dtype=np.int64, count=len(positions))
    job_text = np.repeat(np.arange(len(encs), dtype=np.int64), counts)
    job_pos = np.fromiter((p for pos in positions for p in pos), dtype=np.int64, count=int(counts.sum()))
    later, later_starts = None, None
    if within_word_l2r and len(job_pos):
        later, later_starts = flatten(
            [[q for q in range(p + 1, len(encs[i].ids))
              if encs[i].word_ids[p] is not None and encs[i].word_ids[q] == encs[i].word_ids[p]
              and not encs[i].special[q]]
             for i, pos in enumerate(positions) for p in pos])
    results = _result(texts, encs, logprob, extra, starts)
    if not len(job_pos):
        return results
    lengths = starts[job_text + 1] - starts[job_text]

    def batches():
        for b in _packed(lm, lengths, batch_tokens, progress, f"PLL {lm.name}"):
            text_start = starts[job_text[b]]
            rows = np.arange(len(b), dtype=np.int64)
            cols = job_pos[b]
            ids = fill_padded(flat_ids, text_start, lengths[b], pad_id)
            ids[rows, cols] = mask_id
            if later is not None:
                n_later = later_starts[b + 1] - later_starts[b]
                ids[np.repeat(rows, n_later), later[ranges(later_starts[b], n_later)]] = mask_id
            dest = text_start + cols
            yield _Batch(ids, lengths[b], rows, cols, flat_ids[dest], dest)

    _run_batches(lm, batches(), logprob, extra, distribution_fn)
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
    flat_ids, starts = flatten([e.ids for e in encs])
    logprob, _, _ = _flat_result(encs, None)
    results = _result(texts, encs, logprob, None, starts)
    jobs = np.array([i for i, pos in enumerate(positions) if pos], dtype=np.int64)
    if not len(jobs):
        return results
    masked, masked_starts = flatten([positions[i] for i in jobs])
    lengths = starts[jobs + 1] - starts[jobs]

    def batches():
        for b in _packed(lm, lengths, batch_tokens, progress, f"joint masks {lm.name}"):
            text_start = starts[jobs[b]]
            n_masked = masked_starts[b + 1] - masked_starts[b]
            rows = np.repeat(np.arange(len(b), dtype=np.int64), n_masked)
            cols = masked[ranges(masked_starts[b], n_masked)]
            ids = fill_padded(flat_ids, text_start, lengths[b], pad_id)
            ids[rows, cols] = mask_id
            dest = text_start[rows] + cols
            yield _Batch(ids, lengths[b], rows, cols, flat_ids[dest], dest)

    _run_batches(lm, batches(), logprob, None, None)
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

    shift = np.zeros(len(encs), dtype=np.int64)  # 1 where the engine prepends a BOS
    rows_ids = []
    for i, e in enumerate(encs):
        bos_id = _bos(lm, e.ids, e.special)
        if bos == "first-token":
            if bos_id is None:
                raise ScoringError(f"bos='first-token' is for tokenizers that add no BOS; {lm.name}'s "
                                   f"tokenizer starts text {i} with its own: use bos='prepend' (its "
                                   "first token is then the tokenizer's BOS, not scored)")
            bos_id = None  # the sentence is fed as tokenized; its first token is scored below
        rows_ids.append(e.ids if bos_id is None else np.concatenate([[bos_id], e.ids]))
        shift[i] = 0 if bos_id is None else 1
    flat_ids, starts = flatten([e.ids for e in encs])
    flat_rows, row_starts = flatten(rows_ids)
    logprob, extra, _ = _flat_result(encs, distribution_fn)
    results = _result(texts, encs, logprob, extra, starts)
    # the scored tokens of every text, as flat indices: not special, and with a context
    # (a first token needs a BOS before it)
    counts = np.diff(starts)
    text_of = np.repeat(np.arange(len(encs), dtype=np.int64), counts)
    position = np.arange(len(flat_ids), dtype=np.int64) - starts[text_of]
    special = np.concatenate([e.special for e in encs])
    scored = np.flatnonzero(~special & (position + shift[text_of] >= 1))
    scored_starts = np.zeros(len(encs) + 1, dtype=np.int64)
    np.cumsum(np.bincount(text_of[scored], minlength=len(encs)), out=scored_starts[1:])
    lengths = np.diff(row_starts)

    def batches():
        for b in _packed(lm, lengths, batch_tokens, progress, f"LL {lm.name}"):
            n_scored = scored_starts[b + 1] - scored_starts[b]
            dest = scored[ranges(scored_starts[b], n_scored)]
            rows = np.repeat(np.arange(len(b), dtype=np.int64), n_scored)
            cols = position[dest] + shift[b][rows] - 1  # the position predicting token j
            yield _Batch(fill_padded(flat_rows, row_starts[b], lengths[b], pad_id), lengths[b],
                         rows, cols, flat_ids[dest], dest)

    _run_batches(lm, batches(), logprob, extra, distribution_fn)
    if bos == "first-token":  # every first token from one run of the model on BOS alone
        first = np.array([i for i, e in enumerate(encs) if not e.special[0]], dtype=np.int64)
        if len(first):
            start = tok.bos_token_id if tok.bos_token_id is not None else tok.eos_token_id
            zeros = np.zeros(len(first), dtype=np.int64)
            dest = starts[first]
            _run_batches(lm, [_Batch(np.array([[start]], dtype=np.int64), np.array([1]), zeros,
                                     zeros, flat_ids[dest], dest)], logprob, extra, distribution_fn)
    return results


def _common_prefix(a: np.ndarray, b: np.ndarray) -> int:
    """Length of the longest common prefix of two id arrays.

    >>> _common_prefix(np.array([2, 5, 6, 7]), np.array([2, 5, 9])), _common_prefix(np.array([1]), np.array([1]))
    (2, 1)
    """
    n = min(len(a), len(b))
    diff = np.flatnonzero(a[:n] != b[:n])
    return int(diff[0]) if len(diff) else n


def causal_pair_token_logprobs(
    lm: LanguageModel,
    texts_a: list[str],
    texts_b: list[str],
    batch_tokens: int | None = None,
    distribution_fn: Callable[[torch.Tensor, int], float] | None = None,
    progress: bool = False,
    check: bool = True,
    prefix: bool = True,
) -> tuple[list[TokenScores], list[TokenScores]]:
    """:func:`causal_group_token_logprobs` of two lists of texts paired item by item
    (minimal pairs: a masculine and a feminine form, a more and a less stereotypical
    sentence): the scores of ``texts_a`` and of ``texts_b``."""
    texts_a, texts_b = check_texts(texts_a), check_texts(texts_b)
    if len(texts_a) != len(texts_b):
        raise ScoringError(f"pairs need as many texts in each list: {len(texts_a)} and {len(texts_b)}")
    scored = causal_group_token_logprobs(lm, [[a, b] for a, b in zip(texts_a, texts_b, strict=True)],
                                         batch_tokens, distribution_fn, progress, check, prefix)
    return [g[0] for g in scored], [g[1] for g in scored]


def causal_group_token_logprobs(
    lm: LanguageModel,
    groups: list[list[str]],
    batch_tokens: int | None = None,
    distribution_fn: Callable[[torch.Tensor, int], float] | None = None,
    progress: bool = False,
    check: bool = True,
    prefix: bool = True,
) -> list[list[TokenScores]]:
    """:func:`causal_token_logprobs` (``bos="prepend"``) of groups of texts that share a
    beginning (minimal pairs; StereoSet's three candidates of a context), computing what
    they share once.

    The sequences of a group (after the BOS) agree on a prefix of ``c`` tokens, whose hidden
    states and next-token distributions are the same in all of them. Each group is one row
    ``prefix + rest of the 1st + rest of the 2nd + ...``: the k-th text's tokens take the
    positions ``c, c+1, ...`` and attend to the prefix and to themselves only (a boolean
    4-D attention mask and position ids), so the body runs on ``Σ len - (K - 1) c`` tokens
    instead of ``Σ len``, and the output layer on as many positions; the other texts'
    prefix tokens take the first text's values. Rows are packed by length as in
    :func:`causal_token_logprobs`.

    The values equal :func:`causal_token_logprobs` on the texts one by one up to float
    rounding (the same products summed in another order); with ``check`` (default) the
    first group is scored both ways first and a difference above 1e-3 in a log-probability
    raises :class:`ScoringError` (a model whose attention ignores the mask or the position
    ids), never a silently different number. A model with a sliding attention window (Gemma
    3's local layers) whose rows could be longer than the window is scored text by text
    (:func:`causal_token_logprobs`), since the window is not part of the 4-D mask.

    With ``prefix=False`` the tokens of the shared prefix but its last are not scored (NaN
    in all), so that the output layer runs only where the texts differ (and at the last
    shared token): for measures that read only the part from the divergence on (EuroGEST's
    default). A group of identical sequences is scored in full.

    Returns
    -------
    list of lists of TokenScores
        One list per group, in its order, as :func:`causal_token_logprobs` returns them.
    """
    if lm.kind != "causal":
        raise ScoringError(f"{lm.name} is a {lm.kind} LM; causal scoring needs a causal LM")
    groups = [check_texts(g) for g in groups]
    if any(not g for g in groups):
        raise ScoringError("every group needs at least one text")
    if not groups:
        return []
    if check:
        plain = causal_token_logprobs(lm, groups[0], batch_tokens=batch_tokens,
                                      distribution_fn=distribution_fn)
        shared = causal_group_token_logprobs(lm, groups[:1], batch_tokens, distribution_fn,
                                             check=False, prefix=prefix)[0]
        for want, got in zip(plain, shared, strict=True):
            both = ~np.isnan(got.logprob)
            gap = np.max(np.abs(want.logprob[both] - got.logprob[both]), initial=0.0)
            if not np.isfinite(gap) or gap > 1e-3 or not both.any() or (
                    prefix and not np.array_equal(np.isnan(want.logprob), ~both)):
                raise ScoringError(
                    f"{lm.name}: scoring texts with their shared prefix once differs from scoring "
                    f"them apart by {gap:.2g} nats ({want.text!r}); its attention does "
                    "not take a 4-D mask and position ids: score the texts apart "
                    "(causal_token_logprobs)")
    tok = lm.tokenizer
    texts = [t for g in groups for t in g]
    first_of = np.concatenate([[0], np.cumsum([len(g) for g in groups])])
    encs = encode(lm, texts, causal=True)
    rows_ids, shift = [], np.zeros(len(encs), dtype=np.int64)
    for i, e in enumerate(encs):
        bos_id = _bos(lm, e.ids, e.special)
        rows_ids.append(e.ids if bos_id is None else np.concatenate([[bos_id], e.ids]))
        shift[i] = 0 if bos_id is None else 1
    prefixes = []
    for gi in range(len(groups)):
        members = rows_ids[first_of[gi]:first_of[gi + 1]]
        c = len(members[0])
        for other in members[1:]:
            c = min(c, _common_prefix(members[0], other))
        prefixes.append(c)
    window = getattr(getattr(lm.model, "config", None), "sliding_window", None)
    longest = max(sum(len(r) for r in rows_ids[first_of[gi]:first_of[gi + 1]])
                  - (first_of[gi + 1] - first_of[gi] - 1) * prefixes[gi] for gi in range(len(groups)))
    if isinstance(window, int) and window > 0 and longest > window:
        # a group's row could outgrow a sliding attention window, which a 4-D mask does not
        # carry: score the texts apart (the same values, the reference path)
        plain = causal_token_logprobs(lm, texts, batch_tokens=batch_tokens,
                                      distribution_fn=distribution_fn, progress=progress)
        return [plain[first_of[gi]:first_of[gi + 1]] for gi in range(len(groups))]
    pad_id = tok.pad_token_id if tok.pad_token_id is not None else (
        tok.eos_token_id if tok.eos_token_id is not None else tok.bos_token_id)
    logprob, extra, starts = _flat_result(encs, distribution_fn)
    results = _result(texts, encs, logprob, extra, starts)
    # one row per group; its scored entries: the first text's tokens, the others' after the prefix
    group_rows, branches, positions, entries = [], [], [], []
    copies = []  # (flat index in a later text, flat index in the first) of the prefix tokens
    for gi in range(len(groups)):
        members = list(range(first_of[gi], first_of[gi + 1]))
        c = prefixes[gi]
        identical = all(len(rows_ids[m]) == c for m in members)
        first = 1 if prefix or identical else max(c - 1, 1)  # the first row index scored
        head = members[0]
        pieces, branch, pos = [rows_ids[head]], [np.where(np.arange(len(rows_ids[head])) < c, 0, 1)], \
            [np.arange(len(rows_ids[head]))]
        offset = len(rows_ids[head])
        cols, gold, dest = [], [], []
        for k, m in enumerate(members):
            e, r_ids = encs[m], rows_ids[m]
            if k:
                pieces.append(r_ids[c:])
                branch.append(np.full(len(r_ids) - c, k + 1))
                pos.append(c + np.arange(len(r_ids) - c))
            for j in range(len(e.ids)):
                r = j + shift[m]  # the row index of the text's token j
                if e.special[j] or r < first:
                    continue
                if k and r < c:  # a prefix token: the same context and token as the first text's
                    copies.append((starts[m] + j, starts[head] + r - shift[head]))
                    continue
                prev = r - 1  # the position predicting it: in the prefix, or in the text's rest
                cols.append(prev if (prev < c or not k) else offset + prev - c)
                gold.append(e.ids[j])
                dest.append(starts[m] + j)
            if k:
                offset += len(r_ids) - c
        group_rows.append(np.concatenate(pieces))
        branches.append(np.concatenate(branch))
        positions.append(np.concatenate(pos))
        entries.append((np.asarray(cols, dtype=np.int64), np.asarray(gold, dtype=np.int64),
                        np.asarray(dest, dtype=np.int64)))
    flat_rows, row_starts = flatten(group_rows)
    flat_branch, _ = flatten(branches)
    flat_pos, _ = flatten(positions)
    lengths = np.diff(row_starts)

    def batches():
        for b in _packed(lm, lengths, batch_tokens, progress, f"LL groups {lm.name}"):
            cols = [entries[k][0] for k in b]
            rows = np.repeat(np.arange(len(b), dtype=np.int64), [len(x) for x in cols])
            tree = (fill_padded(flat_branch, row_starts[b], lengths[b], -1),
                    fill_padded(flat_pos, row_starts[b], lengths[b], 0))
            yield _Batch(fill_padded(flat_rows, row_starts[b], lengths[b], pad_id), lengths[b],
                         rows, np.concatenate(cols), np.concatenate([entries[k][1] for k in b]),
                         np.concatenate([entries[k][2] for k in b]), tree)

    _run_batches(lm, batches(), logprob, extra, distribution_fn)
    if copies:
        to, frm = np.asarray(copies, dtype=np.int64).T
        logprob[to] = logprob[frm]
        if extra is not None:
            extra[to] = extra[frm]
    return [results[first_of[gi]:first_of[gi + 1]] for gi in range(len(groups))]


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
    k = len(ids)
    out = np.full(len(prompts) * k, np.nan)
    flat_ids, starts = flatten([e.ids for e in encs])
    lengths = np.diff(starts)

    def batches():
        for b in _packed(lm, lengths, batch_tokens, progress, f"next token {lm.name}"):
            rows = np.repeat(np.arange(len(b), dtype=np.int64), k)
            dest = (b[:, None] * k + np.arange(k, dtype=np.int64)[None, :]).reshape(-1)
            yield _Batch(fill_padded(flat_ids, starts[b], lengths[b], pad_id), lengths[b],
                         rows, np.repeat(lengths[b] - 1, k), np.tile(ids, len(b)), dest)

    _run_batches(lm, batches(), out, None, None)
    out = out.reshape(len(prompts), k)
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
    where = np.empty(len(encs), dtype=np.int64)
    for i, e in enumerate(encs):
        at = np.flatnonzero(e.ids == mask_id)
        if len(at) != 1:
            raise ScoringError(f"text {i} holds {len(at)} mask tokens, not one: {texts[i][:80]!r}")
        where[i] = at[0]
    pad_id = lm.tokenizer.pad_token_id if lm.tokenizer.pad_token_id is not None else mask_id
    out = np.full(len(texts), np.nan)
    flat_ids, starts = flatten([e.ids for e in encs])
    lengths = np.diff(starts)

    def batches():
        for b in _packed(lm, lengths, batch_tokens, progress, f"mask fill {lm.name}"):
            yield _Batch(fill_padded(flat_ids, starts[b], lengths[b], pad_id), lengths[b],
                         np.arange(len(b), dtype=np.int64), where[b], gold_ids[b], b)

    _run_batches(lm, batches(), out, None, None)
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
