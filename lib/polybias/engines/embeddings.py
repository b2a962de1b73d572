"""Contextual embeddings: word vectors and sentence vectors from transformer encoders.

Every contextual metric (SEAT, CEAT, per-layer analyses) reads its vectors from here.

* **Word vectors** (:func:`word_vectors`). The caller names the target occurrence by its
  character span ``[start, end)`` in the text; the engine finds the subword pieces that
  overlap the span through the tokenizer's offset mapping (never by whitespace index)
  and pools the hidden states of the chosen layer over them:

      v(w) = 1/|P| Σ_{t ∈ P} h_t^(layer)        (pooling="mean", the default)

  where P is the set of pieces of the occurrence, the suffix included (docs/conventions.md;
  seed 000 §3 averages the pieces of the surface word). ``"first"`` / ``"last"`` take
  one piece only. A root-only vector (seed 000's code) is a shorter span passed by the
  caller: the pieces overlapping the root are pooled. A SentencePiece marker split off
  as a piece of its own (``"▁"``, whose offsets cover the space before the word) does
  not overlap the word and is left out.
* **Sentence vectors** (:func:`sentence_vectors`): the model's own pooling
  (``pooling="model"``; for sentence-transformers models the pooling of their
  ``1_Pooling/config.json``: all-MiniLM-L6-v2 averages over every attended token,
  special tokens included, as ``sentence-transformers`` does), the first token
  (``"cls"``), or the mean over non-special tokens (``"mean"``); ``"first-piece"`` takes
  the first token after the special prefix, the May et al. (2019) sent-bias code's choice
  for BERT (docs/conventions.md, pitfalls), only to reproduce its numbers. The final L2
  normalisation of some sentence-transformers models is left out (cosines are unchanged).

Engine: texts are tokenized in chunks with the fast tokenizer; identical inputs (the
same sentence sampled twice, or several targets in one sentence) are run once; inputs
are sorted by length and packed into batches of at most ``batch_tokens`` padded tokens
(rows × longest row);
forward passes run in eval mode under ``torch.inference_mode``; hidden states are
pooled in float32 (half-precision weights are allowed on CUDA only). Inputs are
consumed chunk by chunk (:func:`iter_word_vectors`, :func:`iter_sentence_vectors`), so
memory is bounded by the chunk, not by the corpus.

Long texts: a text whose pieces do not fit the model (``Encoder.max_length``, special
tokens included) is cut, for word vectors, to a window of pieces centred on the
target occurrence; the target is never cut away (a target longer than the window is an
error). Sentence vectors of over-long texts are an error (there is no target to centre on).

Cache (``cache=True``): vectors are stored in an SQLite file under
``paths.cache_dir()/embeddings``, one per model fingerprint (name, revision or weights
checksum, tokenizer, length limit), keyed by the sha256 of (layer, pooling, text, span);
a rerun reads them back instead of running the model.
"""

from __future__ import annotations

import hashlib
import itertools
import sqlite3
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from tqdm.auto import tqdm

from polybias import paths
from polybias.engines import batches, common, normalising
from polybias.files import canonical_json

WORD_POOLINGS = ("mean", "first", "last")
SENTENCE_POOLINGS = ("model", "cls", "mean", "first-piece")
MODEL_POOLINGS = ("mean", "cls")  # what an Encoder's own pooling may be
_CHUNK = 4096  # texts tokenized, batched and cached together
_CACHE_VERSION = "1"


class EmbeddingError(ValueError):
    """A model that cannot be used as an encoder, or texts/spans/options it cannot embed."""


@dataclass
class Encoder(common.LoadedModel):
    """A transformer encoder ready for extraction (see :func:`wrap_encoder`,
    :func:`polybias.models.load`): the settings of
    :class:`polybias.engines.common.LoadedModel` and ``pooling``, the model's own sentence
    pooling (``"mean"``: mean over all attended tokens, as sentence-transformers;
    ``"cls"``: first token).
    """

    pooling: str
    _fingerprint: str | None = field(default=None, init=False, repr=False, compare=False)


# ---------------------------------------------------------------- wrapping

def wrap_encoder(model, tokenizer, name: str, revision: str | None = None,
                 pooling: str = "cls", device: str = "cpu", max_length: int | None = None,
                 batch_tokens: int | None = None) -> Encoder:
    """Wrap a ``transformers`` model and its fast tokenizer for extraction.

    Parameters
    ----------
    model : a bare encoder (``BertModel``, ``AlbertModel``…) or a model with a head
        (``…ForMaskedLM``), whose base model is then used, already on ``device`` (the
        engine never moves it); put in eval mode.
    tokenizer : its fast tokenizer (offsets are needed).
    name : the name results and the cache are recorded under.
    revision : model revision or weights checksum; when None, the cache keys on a
        checksum of the weights.
    pooling : the model's own sentence pooling, ``"cls"`` or ``"mean"``.
    device : the torch device the model is on; float16 weights are allowed on CUDA only
        (:func:`polybias.engines.common.check_placed`).
    max_length : a lower length limit than the model's (e.g. a sentence-transformers
        ``max_seq_length``).
    batch_tokens : the token budget of a forward pass when a call gives none; None: chosen
        from the free memory of a CUDA device, 8192 elsewhere
        (:func:`polybias.engines.common.auto_batch_tokens`).

    Examples
    --------
    >>> from polybias.planted.tiny_models import build_tiny_encoder
    >>> enc = wrap_encoder(*build_tiny_encoder("bert"), name="tiny-bert")
    >>> enc.max_length, enc.pooling
    (64, 'cls')
    """
    import torch  # lazy: heavy; model code only

    if pooling not in MODEL_POOLINGS:
        raise EmbeddingError(f"the model's own pooling must be one of {MODEL_POOLINGS}, got {pooling!r}")
    if not isinstance(model, torch.nn.Module):
        raise EmbeddingError(f"model {name!r} is not a torch module but {type(model).__name__}")
    if not getattr(tokenizer, "is_fast", False):
        raise EmbeddingError(f"the tokenizer of {name!r} is not a fast tokenizer; extraction needs "
                             "offset mappings (load it with use_fast=True)")
    base = getattr(model, "base_model", model)
    # polybias.models.load refuses every decoder family (it knows transformers' class
    # tables); a model wrapped here directly is checked for the common ones
    if getattr(getattr(base, "config", None), "is_decoder", False) or \
            type(base).__name__ in ("GPT2Model", "LlamaModel", "Qwen2Model", "MptModel"):
        raise EmbeddingError(f"model {name!r} ({type(base).__name__}) is a decoder, not an encoder")
    common.check_placed(base, device, name, EmbeddingError)
    if batch_tokens is not None and (not isinstance(batch_tokens, int | np.integer)
                                     or isinstance(batch_tokens, bool) or batch_tokens < 1):
        raise EmbeddingError(f"batch_tokens must be a positive integer or None (auto), got {batch_tokens!r}")
    base.eval()
    budget = common.auto_batch_tokens(base, str(device), "encoder") if batch_tokens is None else int(batch_tokens)
    return Encoder(model=base, tokenizer=tokenizer, name=name, revision=revision,
                   max_length=common.max_length(base, tokenizer, max_length, EmbeddingError), pooling=pooling,
                   device=str(device), batch_tokens=budget)


# ---------------------------------------------------------------- inputs

def _check_text(i: int, text) -> str:
    if not isinstance(text, str):
        raise EmbeddingError(f"text {i} is not a string but {type(text).__name__}: {text!r}")
    if not text.strip():
        raise EmbeddingError(f"text {i} is empty")
    return text


def _check_span(i: int, text: str, span) -> tuple[int, int]:
    try:
        start, end = span
    except (TypeError, ValueError) as exc:
        raise EmbeddingError(f"span of text {i} must be a (start, end) pair, got {span!r}") from exc
    if not all(isinstance(v, int | np.integer) and not isinstance(v, bool) for v in (start, end)):
        raise EmbeddingError(f"span of text {i} must hold integers, got {span!r}")
    start, end = int(start), int(end)
    if not 0 <= start < end <= len(text):
        raise EmbeddingError(f"span ({start}, {end}) of text {i} is out of range: the text has "
                             f"{len(text)} characters (need 0 <= start < end <= length): {text[:60]!r}")
    word = text[start:end]
    if not word.strip() or word != word.strip():
        raise EmbeddingError(f"span ({start}, {end}) of text {i} is not on a word: it covers "
                             f"{word!r} (spaces at its ends or only spaces)")
    return start, end


def _chunks(iterable: Iterable, size: int) -> Iterator[list]:
    it = iter(iterable)
    while block := list(itertools.islice(it, size)):
        yield block


@dataclass
class _Row:
    ids: list[int]          # input ids with special tokens
    weights: np.ndarray     # pooling weights over the row's positions (sum 1)


@dataclass
class _Pieces:
    head: list[int]         # special tokens the tokenizer puts before the text
    body: list[int]         # the text's pieces
    tail: list[int]         # special tokens after the text
    offsets: np.ndarray     # (len(body), 2) character spans of the body's pieces


def _encode_chunk(encoder: Encoder, texts: list[str], first: int) -> list[_Pieces]:
    done = [normalising.normalise(encoder.normaliser, t, EmbeddingError) for t in texts]
    enc = encoder.tokenizer([t for t, _ in done], add_special_tokens=True, return_offsets_mapping=True,
                            return_special_tokens_mask=True, truncation=False, verbose=False)
    out = []
    for k, (ids, offs, special) in enumerate(zip(enc["input_ids"], enc["offset_mapping"],
                                                 enc["special_tokens_mask"], strict=True)):
        content = np.flatnonzero(np.asarray(special) == 0)
        if content.size == 0:
            raise EmbeddingError(f"text {first + k} has no tokens besides special tokens: "
                                 f"{texts[k][:60]!r}")
        a, b = int(content[0]), int(content[-1]) + 1
        offsets = done[k][1](np.asarray(offs, dtype=np.int64).reshape(-1, 2))[a:b].copy()
        offsets[np.asarray(special[a:b], dtype=bool)] = 0
        out.append(_Pieces(list(ids[:a]), list(ids[a:b]), list(ids[b:]), offsets))
    return out


def _word_rows(encoder: Encoder, texts: list[str], spans: list[tuple[int, int]], pooling: str,
               first: int) -> list[_Row]:
    rows = []
    for k, (p, (s, e)) in enumerate(zip(_encode_chunk(encoder, texts, first), spans, strict=True)):
        i = first + k
        offs = p.offsets
        hit = np.flatnonzero(np.maximum(offs[:, 0], s) < np.minimum(offs[:, 1], e))
        if hit.size == 0:
            raise EmbeddingError(f"span ({s}, {e}) of text {i} ({texts[k][s:e]!r}) covers no "
                                 f"token of {encoder.name}'s tokenizer: {texts[k][:60]!r}")
        a, b = int(hit[0]), int(hit[-1]) + 1
        room = encoder.max_length - len(p.head) - len(p.tail)
        if b - a > room:
            raise EmbeddingError(f"the target of text {i} ({texts[k][s:e][:40]!r}) is {b - a} "
                                 f"pieces long; {encoder.name} takes at most {room}")
        lo, hi = 0, len(p.body)
        if hi > room:  # a window of `room` pieces centred on the target, inside the text
            lo = min(max(0, a - (room - (b - a)) // 2), len(p.body) - room)
            hi = lo + room
        row_ids = p.head + p.body[lo:hi] + p.tail
        w = np.zeros(len(row_ids), dtype=np.float32)
        pa, pb = len(p.head) + a - lo, len(p.head) + b - lo
        if pooling == "mean":
            w[pa:pb] = 1.0 / (pb - pa)
        elif pooling == "first":
            w[pa] = 1.0
        else:
            w[pb - 1] = 1.0
        rows.append(_Row(row_ids, w))
    return rows


_NO_SPECIAL = ":no-special"  # pooling suffix: sentences encoded without special tokens


def _sentence_rows(encoder: Encoder, texts: list[str], pooling: str, first: int) -> list[_Row]:
    rows = []
    bare = pooling.endswith(_NO_SPECIAL)
    pooling = pooling.removesuffix(_NO_SPECIAL)
    for k, p in enumerate(_encode_chunk(encoder, texts, first)):
        if bare:  # sent-bias compat: tokenizer.tokenize(text), no [CLS]/[SEP]
            p = _Pieces([], p.body, [], p.offsets)
        row_ids = p.head + p.body + p.tail
        if len(row_ids) > encoder.max_length:
            raise EmbeddingError(
                f"text {first + k} is {len(row_ids)} tokens long (special tokens included) but "
                f"{encoder.name} accepts at most {encoder.max_length}; split or shorten it "
                f"(word_vectors windows long texts around a target): {texts[k][:60]!r}")
        w = np.zeros(len(row_ids), dtype=np.float32)
        mode = encoder.pooling if pooling == "model" else pooling
        if mode == "cls":
            w[0] = 1.0
        elif mode == "first-piece":  # sent-bias compat: the first piece of the text itself
            w[len(p.head)] = 1.0
        elif pooling == "model":  # sentence-transformers mean: every attended token
            w[:] = 1.0 / len(row_ids)
        else:  # mean over the text's own (non-special) tokens
            w[len(p.head):len(p.head) + len(p.body)] = 1.0 / len(p.body)
        rows.append(_Row(row_ids, w))
    return rows


def _run(encoder: Encoder, rows: list[_Row], layers: list[int], batch_tokens: int, bar) -> np.ndarray:
    """(len(rows), len(layers), hidden) pooled vectors of ``rows`` at every layer of
    ``layers``; rows with the same input ids share one forward pass, which serves all layers."""
    import torch  # lazy: heavy; model code only

    tok = encoder.tokenizer
    pad = tok.pad_token_id if tok.pad_token_id is not None else 0
    seq_of: dict[tuple[int, ...], int] = {}
    row_seq = np.array([seq_of.setdefault(tuple(r.ids), len(seq_of)) for r in rows], dtype=np.int64)
    flat_ids, seq_starts = batches.flatten(list(seq_of))
    lengths = np.diff(seq_starts)
    # the rows using each sequence, grouped by sequence (in row order within a group)
    users = np.argsort(row_seq, kind="stable")
    user_starts = np.zeros(len(seq_of) + 1, dtype=np.int64)
    np.cumsum(np.bincount(row_seq, minlength=len(seq_of)), out=user_starts[1:])
    flat_w, w_starts = batches.flatten([r.weights for r in rows], dtype=np.float32)
    hidden_size = encoder.model.config.hidden_size
    out = np.empty((len(rows), len(layers), hidden_size), dtype=np.float32)
    all_states = any(k != -1 for k in layers)

    def prepared():
        for b in common.pack_batches(lengths, batch_tokens, EmbeddingError):
            width = int(lengths[b].max())
            n_users = user_starts[b + 1] - user_starts[b]
            items = users[batches.ranges(user_starts[b], n_users)]
            where = np.repeat(np.arange(len(b), dtype=np.int64), n_users)
            ids = batches.fill_padded(flat_ids, seq_starts[b], lengths[b], pad, width)
            weights = batches.fill_padded(flat_w, w_starts[items], np.diff(w_starts)[items], 0.0, width)
            yield items, ids, lengths[b], where, weights

    def launch(batch):
        items, ids, blen, where, weights = batch
        input_ids, blen, where = batches.to_device([ids, blen, where], encoder.device)
        (w,) = batches.to_device([weights], encoder.device)
        attention = torch.arange(ids.shape[1], device=input_ids.device)[None, :] < blen[:, None]
        result = encoder.model(input_ids=input_ids, attention_mask=attention.long(),
                               output_hidden_states=all_states)
        pooled = []
        for layer in layers:
            hidden = result.last_hidden_state if layer == -1 else result.hidden_states[layer]
            h = hidden.to(torch.promote_types(hidden.dtype, torch.float32))[where]
            pooled.append(torch.einsum("kt,ktd->kd", w.to(h.dtype), h))
        return batches.start_fetch(torch.stack(pooled, dim=1))

    def finish(batch, fetch) -> None:
        out[batch[0]] = fetch.result()
        if bar is not None:
            bar.update(len(batch[0]))

    with torch.inference_mode():
        batches.pipelined(prepared(), launch, finish)
    return out


def _check_options(encoder: Encoder, layer: int, pooling: str, allowed: tuple[str, ...],
                   batch_tokens: int | None) -> int:
    """Check the options; returns the budget (the encoder's ``batch_tokens`` when None)."""
    if batch_tokens is None:
        batch_tokens = getattr(encoder, "batch_tokens", common.DEFAULT_BATCH_TOKENS)
    if not isinstance(encoder, Encoder):
        raise EmbeddingError(f"expected an Encoder (polybias.models.load / wrap_encoder), got "
                             f"{type(encoder).__name__}")
    if pooling not in allowed:
        raise EmbeddingError(f"pooling must be one of {allowed}, got {pooling!r}")
    n_layers = int(encoder.model.config.num_hidden_layers)
    if not isinstance(layer, int | np.integer) or isinstance(layer, bool) or \
            not -(n_layers + 1) <= layer <= n_layers:
        raise EmbeddingError(f"layer must be an integer in [{-(n_layers + 1)}, {n_layers}] for "
                             f"{encoder.name} (0 = embeddings, {n_layers} or -1 = last), got {layer!r}")
    if not isinstance(batch_tokens, int | np.integer) or batch_tokens < 1:
        raise EmbeddingError(f"batch_tokens must be a positive integer, got {batch_tokens!r}")
    return int(batch_tokens)


def _norm_layer(encoder: Encoder, layer: int) -> int:
    n_layers = int(encoder.model.config.num_hidden_layers)
    layer = int(layer)
    return -1 if layer in (-1, n_layers) else layer % (n_layers + 1)


# ---------------------------------------------------------------- cache

def fingerprint(encoder: Encoder) -> str:
    """Identity of an encoder for the cache: name, revision (or a checksum of the weights
    when there is none), tokenizer, length limit and text normaliser. Computed once per
    encoder."""
    if encoder._fingerprint is None:
        h = hashlib.sha256()
        h.update(f"{_CACHE_VERSION}|{encoder.name}|{encoder.max_length}|{encoder.pooling}|".encode())
        if encoder.normaliser is not None:  # name, implementation and version
            h.update(f"normaliser:{canonical_json(normalising.normaliser_fields(encoder.normaliser))}|".encode())
        if encoder.revision:
            h.update(f"rev:{encoder.revision}|".encode())
        else:
            for key, tensor in sorted(encoder.model.state_dict().items()):
                h.update(key.encode())
                h.update(tensor.detach().cpu().contiguous().float().numpy().tobytes())
        h.update(encoder.tokenizer.backend_tokenizer.to_str().encode())
        encoder._fingerprint = h.hexdigest()
    return encoder._fingerprint


def cache_path(encoder: Encoder) -> Path:
    """SQLite file holding the cached vectors of ``encoder``."""
    folder = paths.cache_dir() / "embeddings"
    folder.mkdir(parents=True, exist_ok=True)
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in encoder.name)[:60]
    return folder / f"{safe}-{fingerprint(encoder)[:16]}.sqlite"


def _keys(kind: str, layer: int, pooling: str, texts: list[str], spans) -> list[bytes]:
    out = []
    for k, text in enumerate(texts):
        span = f"{spans[k][0]}:{spans[k][1]}" if spans is not None else "-"
        out.append(hashlib.sha256(f"{kind}|{layer}|{pooling}|{span}|{text}".encode()).digest())
    return out


def _open_cache(path: Path) -> sqlite3.Connection:
    con = sqlite3.connect(path, timeout=60)
    con.execute("CREATE TABLE IF NOT EXISTS vectors (key BLOB PRIMARY KEY, vec BLOB NOT NULL)")
    return con


def _cache_get(con: sqlite3.Connection, keys: list[bytes], dim: int) -> dict[bytes, np.ndarray]:
    found: dict[bytes, np.ndarray] = {}
    for block in _chunks(keys, 500):
        marks = ",".join("?" * len(block))
        for key, blob in con.execute(f"SELECT key, vec FROM vectors WHERE key IN ({marks})", block):
            vec = np.frombuffer(blob, dtype="<f4")
            if vec.size == dim:
                found[bytes(key)] = vec
    return found


def _cache_put(con: sqlite3.Connection, keys: list[bytes], vectors: np.ndarray) -> None:
    with con:  # one transaction: all or nothing
        con.executemany("INSERT OR REPLACE INTO vectors (key, vec) VALUES (?, ?)",
                        [(k, v.astype("<f4").tobytes()) for k, v in zip(keys, vectors, strict=True)])


# ---------------------------------------------------------------- public API

def _iter_vectors(encoder: Encoder, items: Iterable, kind: str, layer: int, pooling: str,
                  batch_tokens: int, cache: bool, progress: bool, chunk_size: int) -> Iterator[np.ndarray]:
    dim = int(encoder.model.config.hidden_size)
    con = _open_cache(cache_path(encoder)) if cache else None
    layer_key = _norm_layer(encoder, layer)
    bar = tqdm(disable=not progress, desc=f"{kind} vectors {encoder.name}", unit="text", leave=False)
    first = 0
    try:
        for block in _chunks(items, chunk_size):
            if kind == "word":
                texts = [_check_text(first + k, t) for k, (t, _) in enumerate(block)]
                spans = [_check_span(first + k, t, s) for k, (t, s) in enumerate(block)]
            else:
                texts = [_check_text(first + k, t) for k, t in enumerate(block)]
                spans = None
            out = np.empty((len(texts), dim), dtype=np.float32)
            todo = list(range(len(texts)))
            keys: list[bytes] = []
            if con is not None:
                keys = _keys(kind, layer_key, pooling, texts, spans)
                found = _cache_get(con, keys, dim)
                todo = [k for k in todo if keys[k] not in found]
                for k, key in enumerate(keys):
                    if key in found:
                        out[k] = found[key]
                bar.update(len(texts) - len(todo))
            if todo:
                sub_texts = [texts[k] for k in todo]
                if kind == "word":
                    rows = _word_rows(encoder, sub_texts, [spans[k] for k in todo], pooling, first)
                else:
                    rows = _sentence_rows(encoder, sub_texts, pooling, first)
                vecs = _run(encoder, rows, [layer], batch_tokens, bar)[:, 0]
                out[todo] = vecs
                if con is not None:
                    _cache_put(con, [keys[k] for k in todo], vecs)
            first += len(texts)
            yield out
    finally:
        bar.close()
        if con is not None:
            con.close()


def iter_word_vectors(encoder: Encoder, items: Iterable[tuple[str, tuple[int, int]]], layer: int = -1,
                      pooling: str = "mean", batch_tokens: int | None = None, cache: bool = False,
                      progress: bool = False, chunk_size: int = _CHUNK) -> Iterator[np.ndarray]:
    """Streaming form of :func:`word_vectors`: consume ``(text, span)`` pairs from any
    iterable and yield (≤ ``chunk_size``, dim) float32 blocks in input order."""
    batch_tokens = _check_options(encoder, layer, pooling, WORD_POOLINGS, batch_tokens)
    return _iter_vectors(encoder, items, "word", layer, pooling, batch_tokens, cache, progress, chunk_size)


def iter_sentence_vectors(encoder: Encoder, texts: Iterable[str], pooling: str = "model",
                          layer: int = -1, batch_tokens: int | None = None, cache: bool = False,
                          progress: bool = False, chunk_size: int = _CHUNK,
                          special_tokens: bool = True) -> Iterator[np.ndarray]:
    """Streaming form of :func:`sentence_vectors` (blocks of ≤ ``chunk_size`` rows)."""
    batch_tokens = _check_options(encoder, layer, pooling, SENTENCE_POOLINGS, batch_tokens)
    if isinstance(texts, str):
        raise EmbeddingError("texts must be a list of strings, not one string")
    if not special_tokens:
        if pooling not in ("first-piece", "mean"):
            raise EmbeddingError(f"special_tokens=False goes with pooling 'first-piece' or 'mean', "
                                 f"not {pooling!r}")
        pooling += _NO_SPECIAL
    return _iter_vectors(encoder, texts, "sentence", layer, pooling, batch_tokens, cache, progress,
                         chunk_size)


def _stack(blocks: Iterable[np.ndarray], dim: int) -> np.ndarray:
    parts = list(blocks)
    return np.vstack(parts) if parts else np.empty((0, dim), dtype=np.float32)


def word_vectors(encoder: Encoder, texts: Iterable[str], spans: Iterable[tuple[int, int]],
                 layer: int = -1, pooling: str = "mean", batch_tokens: int | None = None,
                 cache: bool = False, progress: bool = False) -> np.ndarray:
    """Contextual vectors of target word occurrences.

    Parameters
    ----------
    encoder : from :func:`polybias.models.load` or :func:`wrap_encoder`.
    texts : sentences (any iterable; consumed in chunks).
    spans : per text, the character span ``[start, end)`` of the target occurrence; a
        root-only vector is a shorter span. The pieces overlapping the span are pooled.
    layer : hidden-state layer: -1 or L = last, 0 = embedding output, negative counts
        from the end (``hidden_states[layer]`` of ``transformers``).
    pooling : ``"mean"`` over the pieces (suffix included), ``"first"`` or ``"last"`` piece.
    batch_tokens : padded tokens (rows × longest row) per forward pass.
    cache : read and store vectors in the disk cache (see module docstring).
    progress : tqdm bar over texts.

    Returns
    -------
    (n, hidden) float32 array, in input order. Texts longer than the model limit are
    windowed around the target.

    >>> from polybias.planted.tiny_models import build_tiny_encoder
    >>> enc = wrap_encoder(*build_tiny_encoder("bert"), name="tiny-bert")
    >>> word_vectors(enc, ["The nurse said hello."], [(4, 9)]).shape
    (1, 32)
    """
    if isinstance(texts, str):
        raise EmbeddingError("texts must be a list of strings, not one string")
    batch_tokens = _check_options(encoder, layer, pooling, WORD_POOLINGS, batch_tokens)
    items = _zip_checked(texts, spans)
    blocks = _iter_vectors(encoder, items, "word", layer, pooling, batch_tokens, cache, progress, _CHUNK)
    return _stack(blocks, int(encoder.model.config.hidden_size))


def word_vectors_by_layer(encoder: Encoder, texts: Iterable[str], spans: Iterable[tuple[int, int]],
                          layers: Iterable[int], pooling: str = "mean",
                          batch_tokens: int | None = None) -> np.ndarray:
    """Vectors of target occurrences at several layers from one forward pass per batch.

    Same as stacking ``word_vectors(encoder, texts, spans, layer=k, ...)`` over ``layers``
    on axis 1, without running the model once per layer (and without the disk cache).
    Returns an (n, len(layers), hidden) float32 array.

    >>> from polybias.planted.tiny_models import build_tiny_encoder
    >>> enc = wrap_encoder(*build_tiny_encoder("bert"), name="tiny-bert")
    >>> word_vectors_by_layer(enc, ["The nurse said hello."], [(4, 9)], layers=[0, 1, -1]).shape
    (1, 3, 32)
    """
    if isinstance(texts, str):
        raise EmbeddingError("texts must be a list of strings, not one string")
    layers = list(layers)
    if not layers:
        raise EmbeddingError("word_vectors_by_layer needs at least one layer")
    for layer in layers:
        batch_tokens = _check_options(encoder, layer, pooling, WORD_POOLINGS, batch_tokens)
    parts, first = [], 0
    for block in _chunks(_zip_checked(texts, spans), _CHUNK):
        chunk = [_check_text(first + k, t) for k, (t, _) in enumerate(block)]
        chunk_spans = [_check_span(first + k, t, s) for k, (t, s) in enumerate(block)]
        rows = _word_rows(encoder, chunk, chunk_spans, pooling, first)
        parts.append(_run(encoder, rows, layers, batch_tokens, None))
        first += len(block)
    if not parts:
        return np.empty((0, len(layers), int(encoder.model.config.hidden_size)), dtype=np.float32)
    return np.concatenate(parts)


def _zip_checked(texts: Iterable[str], spans: Iterable) -> Iterator[tuple[str, Any]]:
    sentinel = object()
    for i, (t, s) in enumerate(itertools.zip_longest(texts, spans, fillvalue=sentinel)):
        if t is sentinel or s is sentinel:
            raise EmbeddingError(f"texts and spans differ in length (one ends at item {i})")
        yield t, s


def sentence_vectors(encoder: Encoder, texts: Iterable[str], pooling: str = "model", layer: int = -1,
                     batch_tokens: int | None = None, cache: bool = False, progress: bool = False,
                     special_tokens: bool = True) -> np.ndarray:
    """Sentence vectors: the model's own pooling, the first token, or the mean over
    non-special tokens, at ``layer`` (other parameters as in :func:`word_vectors`).

    ``special_tokens=False`` (with ``pooling="first-piece"`` or ``"mean"``; compat) feeds
    the text's own pieces without the tokenizer's special tokens, as the sent-bias code
    does (W4ngatang/sent-bias at e3559fb, ``sentbias/encoders/bert.py`` ``encode``, lines
    19–26: ``tokenizer.tokenize(text)``, no [CLS]/[SEP], then ``enc[:, 0, :]``): with
    ``"first-piece"`` this is the reference's vector, the first word piece seen without
    [CLS]. The default keeps the special tokens the model was trained with.

    Returns an (n, hidden) float32 array. A text longer than the model limit is an error.

    >>> from polybias.planted.tiny_models import build_tiny_encoder
    >>> enc = wrap_encoder(*build_tiny_encoder("bert"), name="tiny-bert")
    >>> sentence_vectors(enc, ["This is a nurse.", "That is here."], pooling="mean").shape
    (2, 32)
    """
    blocks = iter_sentence_vectors(encoder, texts, pooling, layer, batch_tokens, cache, progress,
                                   special_tokens=special_tokens)
    return _stack(blocks, int(encoder.model.config.hidden_size))


def clear_cache(encoder: Encoder) -> None:
    """Delete the cached vectors of ``encoder``."""
    cache_path(encoder).unlink(missing_ok=True)


def occurrence_vectors(
    encoder, samples: dict[str, list], layer: int = -1, pooling: str = "mean",
    batch_tokens: int | None = None, cache: bool = False, progress: bool = False,
    memo: dict | None = None,
) -> dict[str, np.ndarray]:
    """Contextual vectors of sampled occurrences: ``{word: (N, dim)}``, row i = occurrence i.

    ``samples`` maps each word to its N occurrences (:class:`polybias.data.text.Occurrence`:
    text + character span), e.g. segments from :func:`polybias.data.text.segments`. All
    occurrences go to :func:`polybias.engines.embeddings.word_vectors` in one call; an occurrence
    drawn several times (sampling with replacement) is embedded once. ``memo`` (a dict
    keyed by (text, start, end), filled here) carries vectors over between calls with the
    same encoder, layer and pooling, e.g. across segment lengths whose segments coincide.
    """
    memo = {} if memo is None else memo
    todo: dict[tuple[str, int, int], None] = {}
    for occs in samples.values():
        for o in occs:
            key = (o.text, o.start, o.end)
            if key not in memo:
                todo[key] = None
    if todo:
        keys = list(todo)
        if callable(getattr(encoder, "word_vectors", None)):  # an analytic encoder with its own
            # word vectors (polybias.planted.static.ContextualBag, a known-answer model)
            V = encoder.word_vectors([k[0] for k in keys], [(k[1], k[2]) for k in keys])
        else:
            V = word_vectors(encoder, [k[0] for k in keys], [(k[1], k[2]) for k in keys],
                             layer=layer, pooling=pooling, batch_tokens=batch_tokens,
                             cache=cache, progress=progress)
        memo.update(zip(keys, V, strict=True))
    return {w: np.stack([memo[(o.text, o.start, o.end)] for o in occs]) for w, occs in samples.items()}
