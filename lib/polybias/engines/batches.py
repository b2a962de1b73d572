"""Padded batches built with array operations, and the device kept busy while they run.

What the engines (:mod:`polybias.engines.scoring`, :mod:`polybias.engines.embeddings`,
:mod:`polybias.engines.template_scores`) do around each forward pass, with no Python
loop over the rows of a batch:

* the inputs of all rows live in one flat array (every text's ids one after the other,
  ``starts`` giving where each begins), and a padded batch is cut out of it with one
  fancy-indexing step (:func:`fill_padded`); a variable number of items per row (the
  masked pieces of a word, the scored tokens of a sentence) is gathered the same way
  (:func:`ranges`);
* the integer inputs of a batch go to the device in one host-to-device copy
  (:func:`to_device`: page-locked memory and an asynchronous copy on CUDA) and the
  values it produces come back in one device-to-host copy (:func:`start_fetch`);
* :func:`pipelined` runs the batches one step ahead: the next batch is built and its
  forward pass queued while the device still runs the current one, and the values of a
  batch are read back only after the following batch has been queued. On the CPU every
  step runs in order, as before; the numbers are the same either way (each batch is
  computed exactly as it would be alone).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import numpy as np

from polybias.engines.common import is_cuda


def ranges(starts, counts) -> np.ndarray:
    """The concatenation of ``arange(s, s + c)`` for every ``(s, c)`` of ``starts`` and
    ``counts`` (int64), built without a Python loop.

    >>> ranges([10, 0, 5], [2, 0, 3]).tolist()
    [10, 11, 5, 6, 7]
    >>> ranges([], []).tolist()
    []
    """
    starts = np.asarray(starts, dtype=np.int64)
    counts = np.asarray(counts, dtype=np.int64)
    total = int(counts.sum())
    if total == 0:
        return np.empty(0, dtype=np.int64)
    first = np.cumsum(counts) - counts  # where each run begins in the output
    return np.repeat(starts - first, counts) + np.arange(total, dtype=np.int64)


def fill_padded(flat: np.ndarray, starts, lengths, pad, width: int | None = None) -> np.ndarray:
    """A (rows, width) array whose row r holds ``flat[starts[r]:starts[r] + lengths[r]]``
    followed by ``pad`` (``width``: the longest row when None), in ``flat``'s dtype.

    >>> fill_padded(np.array([1, 2, 3, 4, 5]), [0, 3], [3, 2], 0).tolist()
    [[1, 2, 3], [4, 5, 0]]
    """
    starts = np.asarray(starts, dtype=np.int64)
    lengths = np.asarray(lengths, dtype=np.int64)
    width = int(lengths.max()) if width is None else int(width)
    out = np.full((len(starts), width), pad, dtype=flat.dtype)
    cols = np.arange(width, dtype=np.int64)
    inside = cols[None, :] < lengths[:, None]
    out[inside] = flat[(starts[:, None] + cols[None, :])[inside]]
    return out


def flatten(arrays: Iterable, dtype=np.int64) -> tuple[np.ndarray, np.ndarray]:
    """``(flat, starts)``: the arrays one after the other (as ``dtype``), and where each
    begins (one entry more than there are arrays: the last is the total length).

    >>> flat, starts = flatten([[7, 8], [], [9]])
    >>> flat.tolist(), starts.tolist()
    ([7, 8, 9], [0, 2, 2, 3])
    """
    arrays = [np.asarray(a, dtype=dtype) for a in arrays]
    lengths = np.fromiter((len(a) for a in arrays), dtype=np.int64, count=len(arrays))
    starts = np.zeros(len(arrays) + 1, dtype=np.int64)
    np.cumsum(lengths, out=starts[1:])
    flat = np.concatenate(arrays) if arrays else np.empty(0, dtype=dtype)
    return flat, starts


def to_device(arrays: list[np.ndarray], device) -> list:
    """The numpy ``arrays`` as torch tensors on ``device``, in one host-to-device copy.

    Arrays of one dtype are packed into one buffer; on CUDA the buffer is page-locked and
    copied asynchronously (the call returns before the copy ends; later work on the same
    stream waits for it). On the CPU the tensors share the arrays' memory.

    >>> a, b = to_device([np.arange(6).reshape(2, 3), np.array([7, 8])], "cpu")
    >>> a.tolist(), b.tolist()
    ([[0, 1, 2], [3, 4, 5]], [7, 8])
    """
    import torch  # lazy: heavy; model code only

    if not is_cuda(device):
        return [torch.from_numpy(np.ascontiguousarray(a)) for a in arrays]
    dtypes = {a.dtype for a in arrays}
    if len(dtypes) != 1:
        raise ValueError(f"to_device packs arrays of one dtype, got {sorted(map(str, dtypes))}")
    flat = np.concatenate([np.ravel(a) for a in arrays])
    buffer = torch.from_numpy(flat).pin_memory().to(device, non_blocking=True)
    out, at = [], 0
    for a in arrays:
        out.append(buffer[at:at + a.size].view(a.shape))
        at += a.size
    return out


class Fetch:
    """Values on their way from the device to the host (:func:`start_fetch`);
    :meth:`result` waits for them and gives a numpy array."""

    def __init__(self, host, event=None):
        self._host, self._event = host, event

    def result(self) -> np.ndarray:
        if self._event is not None:
            self._event.synchronize()
        return self._host.numpy()


def start_fetch(tensor) -> Fetch:
    """Start copying ``tensor`` to the host: on CUDA an asynchronous copy into page-locked
    memory with an event to wait on, so that the device keeps running the work queued after
    it; on the CPU the tensor itself."""
    import torch  # lazy: heavy; model code only

    tensor = tensor.detach()
    if tensor.device.type != "cuda":
        return Fetch(tensor)
    host = torch.empty(tensor.shape, dtype=tensor.dtype, pin_memory=True)
    host.copy_(tensor, non_blocking=True)
    event = torch.cuda.Event()
    event.record(torch.cuda.current_stream(tensor.device))
    return Fetch(host, event)


def pipelined(items: Iterable, launch: Callable[[Any], Any], finish: Callable[[Any, Any], None],
              depth: int = 1) -> None:
    """For each of ``items`` (built lazily by the iterable), ``launch(item)`` queues the
    work and returns a handle (e.g. a :class:`Fetch`); ``finish(item, handle)`` reads it
    back and stores the values. Up to ``depth`` launched items wait unfinished, so the
    next item is built and queued before the previous one is read back; the items finish
    in order.

    >>> done = []
    >>> pipelined(range(3), lambda i: i * 10, lambda i, h: done.append((i, h)))
    >>> done
    [(0, 0), (1, 10), (2, 20)]
    """
    waiting: deque = deque()
    iterator: Iterator = iter(items)
    for item in iterator:
        waiting.append((item, launch(item)))
        while len(waiting) > depth:
            finish(*waiting.popleft())
    while waiting:
        finish(*waiting.popleft())
