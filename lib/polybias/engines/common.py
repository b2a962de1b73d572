"""What the engines share: a model's input length limit, the device and precision checks, packing inputs
into batches under a token budget. A model's text normaliser is :mod:`polybias.engines.normalising`.

Used by :mod:`polybias.engines.scoring` (language models) and
:mod:`polybias.engines.embeddings` (encoders); each passes its own error type, so a
caller sees the error of the engine it called.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

#: Padded tokens per forward pass when neither the call nor the model gives a budget.
DEFAULT_BATCH_TOKENS = 8192


@dataclass
class LoadedModel:
    """What every model an engine runs on holds, one name per setting: the base of
    :class:`polybias.engines.scoring.LanguageModel` and
    :class:`polybias.engines.embeddings.Encoder`.

    ``max_length`` is the longest input the model accepts, special tokens included;
    ``device`` is where its weights are (decided by the loader, checked by the wrappers,
    :func:`check_placed`). The settings after it are keyword-only.
    """

    model: Any
    tokenizer: Any
    name: str
    revision: str | None
    max_length: int
    device: str = field(default="cpu", kw_only=True)
    #: :class:`polybias.models.loading.LoadInfo` of a checkpoint load (None for wrapped models).
    load_info: Any = field(default=None, kw_only=True, repr=False, compare=False)
    #: padded tokens per forward pass when an engine call does not give ``batch_tokens``
    batch_tokens: int = field(default=DEFAULT_BATCH_TOKENS, kw_only=True, compare=False)
    #: text normaliser applied to every text before tokenising (the registry entry's
    #: ``normaliser``, :func:`polybias.models.loading.get_normaliser`); spans and offsets
    #: stay in the text given
    normaliser: Any = field(default=None, kw_only=True, compare=False)
    #: the normaliser's registry name
    normaliser_name: str | None = field(default=None, kw_only=True, compare=False)

    def run_settings(self) -> dict[str, Any]:
        """How the engines run this model, for run records: ``device``, ``dtype`` (of its
        weights) and ``batch_tokens`` (the token budget used when a call gives none)."""
        params = self.model.parameters() if hasattr(self.model, "parameters") else iter(())
        first = next(iter(params), None)
        return {"device": str(self.device),
                "dtype": None if first is None else str(first.dtype).removeprefix("torch."),
                "batch_tokens": int(self.batch_tokens)}


def max_length(model, tokenizer, limit: int | None = None,
               error: type[Exception] = ValueError) -> int:
    """The longest input ``model`` accepts, special tokens included: the smallest of
    ``limit``, the tokenizer's ``model_max_length`` and the config's position limit
    (``max_position_embeddings`` or ``n_positions``; RoBERTa-style position ids, which
    start after the padding index, counted).

    >>> from types import SimpleNamespace as NS
    >>> max_length(NS(config=NS(max_position_embeddings=512)), NS(model_max_length=10**30))
    512
    >>> max_length(NS(config=NS(max_position_embeddings=512)), NS(model_max_length=128), limit=64)
    64
    """
    limits = [int(limit)] if limit else []
    tml = getattr(tokenizer, "model_max_length", None)
    if isinstance(tml, int) and 0 < tml < 10**7:  # transformers uses ~1e30 for "no limit"
        limits.append(tml)
    cfg = getattr(model, "config", None)
    for attr in ("max_position_embeddings", "n_positions"):
        value = getattr(cfg, attr, None)
        if isinstance(value, int) and value > 0:
            emb = getattr(getattr(model, "base_model", model), "embeddings", None)
            pe = getattr(emb, "position_embeddings", None)
            if getattr(pe, "padding_idx", None) is not None:  # RoBERTa: positions after pad
                value -= pe.padding_idx + 1
            limits.append(value)
            break
    if not limits:
        raise error(f"cannot tell the longest input of {type(model).__name__}: neither the "
                    "tokenizer's model_max_length nor the config's max positions is set")
    return int(min(limits))


#: The automatic budget's bounds (padded tokens per forward pass) and its share of the
#: free device memory.
AUTO_BUDGET_MIN, AUTO_BUDGET_MAX, AUTO_BUDGET_FRACTION = 1024, 262144, 0.5


def free_device_memory(device: str) -> int | None:
    """Free memory of a CUDA ``device`` in bytes (None for other devices)."""
    import torch  # lazy: heavy; model code only

    if torch.device(device).type != "cuda":
        return None
    free, _total = torch.cuda.mem_get_info(torch.device(device))
    return int(free)


def auto_batch_tokens(model, device: str, head: str, free_bytes: int | None = None,
                      fraction: float = AUTO_BUDGET_FRACTION) -> int:
    """The engines' token budget (padded tokens per forward pass) chosen for ``model`` on
    ``device`` when the caller gives none: :data:`DEFAULT_BATCH_TOKENS` off CUDA (so CPU
    results do not depend on the machine's memory), and on CUDA ``fraction`` of the free
    device memory (``free_bytes`` when given) divided by an estimate of the memory one token
    takes in a forward pass: the layer's activations (hidden, attention projections,
    feed-forward) in the weights' dtype, the hidden states of every layer in float32
    (extraction keeps them), the attention scores over up to 512 positions, and for a
    causal LM (``head="causal"``) its logits and float32 log-softmax over the vocabulary
    at every position. Rounded down to a multiple of 1024, within
    [:data:`AUTO_BUDGET_MIN`, :data:`AUTO_BUDGET_MAX`].

    >>> from torch import nn
    >>> from types import SimpleNamespace as NS
    >>> m = nn.Linear(2, 2)
    >>> m.config = NS(hidden_size=768, intermediate_size=3072, num_attention_heads=12,
    ...               num_hidden_layers=12, vocab_size=30522)
    >>> auto_batch_tokens(m, "cpu", "mlm"), auto_batch_tokens(m, "cuda", "mlm", free_bytes=2**30)
    (8192, 3072)
    >>> auto_batch_tokens(m, "cuda", "mlm", free_bytes=80 * 2**30)
    262144
    """
    if not is_cuda(device):
        return DEFAULT_BATCH_TOKENS
    free = free_device_memory(device) if free_bytes is None else int(free_bytes)
    cfg = getattr(model, "config", None)

    def get(*names, default):
        for name in names:
            value = getattr(cfg, name, None)
            if isinstance(value, int) and value > 0:
                return value
        return default

    hidden = get("hidden_size", "d_model", "n_embd", default=1024)
    inter = get("intermediate_size", "n_inner", "ffn_dim", default=4 * hidden)
    heads = get("num_attention_heads", "n_head", "n_heads", default=16)
    layers = get("num_hidden_layers", "n_layer", "n_layers", default=24)
    vocab = get("vocab_size", default=50000)
    element = next(iter(model.parameters())).element_size()
    per_token = element * (6 * hidden + 2 * inter + 2 * heads * 512) + 4 * hidden * (layers + 1)
    if head == "causal":
        per_token += (element + 8) * vocab
    budget = int(fraction * free) // per_token // 1024 * 1024
    return int(min(max(budget, AUTO_BUDGET_MIN), AUTO_BUDGET_MAX))


def is_cuda(device: str, error: type[Exception] = ValueError) -> bool:
    """Whether ``device`` names a CUDA device (an unknown device is an ``error``).

    >>> is_cuda("cpu"), is_cuda("cuda:1")
    (False, True)
    """
    import torch  # lazy: heavy; model code only

    try:
        return torch.device(device).type == "cuda"
    except (RuntimeError, TypeError) as exc:
        raise error(f"unknown device {device!r}") from exc


def renamed_keyword(old: str, new: str):
    """Decorate a public function whose keyword ``old`` is now ``new``: passing ``old``
    is a ``TypeError`` naming ``new`` (one name per setting, and no silent alias).

    >>> @renamed_keyword("max_batch_tokens", "batch_tokens")
    ... def f(batch_tokens=None):
    ...     return batch_tokens
    >>> f(max_batch_tokens=4)
    Traceback (most recent call last):
    ...
    TypeError: f(): max_batch_tokens= is now batch_tokens= (the one name of the token budget of LanguageModel and Encoder)
    """
    def decorate(function):
        @functools.wraps(function)
        def checked(*args, **kwargs):
            if old in kwargs:
                raise TypeError(f"{function.__name__}(): {old}= is now {new}= (the one name of "
                                "the token budget of LanguageModel and Encoder)")
            return function(*args, **kwargs)
        return checked
    return decorate


def check_half(dtypes, device: str, what: str, error: type[Exception] = ValueError) -> None:
    """The one rule on half precision: float16 runs on CUDA only. ``dtypes`` is a dtype or
    a collection of them (a load's requested dtype, a model's weights); ``what`` starts the
    message (``"model 'm'"``).

    >>> import torch
    >>> check_half({torch.float32}, "cpu", "model 'm'")
    >>> check_half(torch.float16, "cpu", "model 'm'")
    Traceback (most recent call last):
    ...
    ValueError: model 'm': float16 is supported on CUDA only, not on 'cpu' (use float32 or bfloat16)
    """
    import torch  # lazy: only the model checks need it, not the packing helpers

    dtypes = {dtypes} if isinstance(dtypes, torch.dtype) else set(dtypes)
    if torch.float16 in dtypes and not is_cuda(device, error):
        raise error(f"{what}: float16 is supported on CUDA only, not on {device!r} "
                    "(use float32 or bfloat16)")


def check_placed(model, device: str, name: str, error: type[Exception] = ValueError) -> None:
    """Check that a model handed to an engine sits on ``device`` with weights that may run
    there (:func:`check_half`). The engines never move a model: the loader
    (:func:`polybias.models.load`) decides its device and places it once; a caller wrapping
    its own model moves it first.

    >>> from torch import nn
    >>> check_placed(nn.Linear(2, 2), "cpu", "m")
    >>> check_placed(nn.Linear(2, 2).half(), "cpu", "m")
    Traceback (most recent call last):
    ...
    ValueError: model 'm' (float16 weights): float16 is supported on CUDA only, not on 'cpu' (use float32 or bfloat16)
    """
    import torch  # lazy: only the model checks need it, not the packing helpers

    params = list(model.parameters())
    check_half({p.dtype for p in params}, device, f"model {name!r} (float16 weights)", error)
    try:
        want = torch.device(device)
    except (RuntimeError, TypeError) as exc:
        raise error(f"unknown device {device!r}") from exc
    places = {p.device for p in params}
    wrong = sorted(str(d) for d in places if d.type != want.type
                   or (want.index is not None and d.index not in (want.index, None)))
    if wrong:
        raise error(f"model {name!r} has weights on {', '.join(wrong)}, not on {device!r}: move "
                    f"it there first (model.to({str(device)!r}))")


def pack_batches(lengths: Sequence[int], batch_tokens: int,
                 error: type[Exception] = ValueError) -> list[np.ndarray]:
    """Row indices sorted by length (longest first, stable) cut into batches whose
    rows × longest row ≤ ``batch_tokens`` (a row longer than the budget goes alone).

    >>> [b.tolist() for b in pack_batches([3, 5, 2, 5], 10)]
    [[1, 3], [0, 2]]
    """
    if not isinstance(batch_tokens, int | np.integer) or batch_tokens < 1:
        raise error(f"batch_tokens must be a positive integer, got {batch_tokens!r}")
    lengths = np.asarray(lengths, dtype=np.int64)
    order = np.argsort(-lengths, kind="stable")
    batches, start = [], 0
    while start < len(order):
        rows = max(1, batch_tokens // int(lengths[order[start]]))
        batches.append(order[start:start + rows])
        start += rows
    return batches
