"""Why a checkpoint is refused: :class:`LoadError` and one subclass per cause, each message
naming the model and the cause on one line (:mod:`polybias.models.loading`)."""

from __future__ import annotations

import re


class LoadError(RuntimeError):
    """A checkpoint that cannot be loaded correctly; the message names model and cause."""


class NotCachedError(LoadError):
    """A hub id that is not in the offline cache (or cannot be resolved online)."""


class CheckpointError(LoadError):
    """Not a model directory, no PyTorch weights, or a config/tokenizer that cannot be read."""


class RemoteCodeError(LoadError):
    """Repository code is needed but not allowed, or allowed without a pinned commit."""


class PickleError(LoadError):
    """A ``.bin`` pickle with content beyond tensors, without ``allow_pickle``."""


class WeightsError(LoadError):
    """Weights the measure uses are not in the checkpoint, or checkpoint weights are dropped."""


class DeviceError(LoadError):
    """An unknown or unavailable device, or a dtype the device does not support."""


class MemoryBudgetError(LoadError):
    """The model does not fit in the memory available."""


class NormaliserError(LoadError):
    """A text normaliser that is unknown, or required and not installed."""


def first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    line = text.splitlines()[0].strip()
    return re.sub(r"\x1b\[[0-9;]*m", "", line)
