"""Loading a hub or local checkpoint correctly, or refusing with a one-line reason.

:func:`load_checkpoint` is the one entry point both :mod:`polybias.engines.scoring` (masked and
causal LMs) and :mod:`polybias.engines.embeddings` (encoders) use. It returns the model, its fast
tokenizer and a :class:`LoadInfo` (resolved commit, weights format, device, dtype and the
loading report). Every refusal is a :class:`LoadError` (one subclass per cause) whose
message names the model and the cause on one line.

The rules below live in one module each: where a checkpoint comes from
(:mod:`polybias.models.hub`: "Source"), what is checked before and after it loads
(:mod:`polybias.models.safety`: "Weights", "Repository code", the loading report), where
and in what precision it runs and whether it fits (:mod:`polybias.models.placement`:
"Device and dtype", "Memory"), and why it is refused (:mod:`polybias.models.errors`); this
module loads it and names its text normaliser.

Rules
-----
Source
    A local directory, or a hub id. With ``HF_HUB_OFFLINE`` set, a hub id is resolved in
    the Hugging Face cache only (``HF_HUB_CACHE``, else ``HF_HOME/hub``, else
    ``~/.cache/huggingface/hub``): ``models--org--name/snapshots/<commit>/`` found through
    ``refs/<revision>`` (``main`` by default) or a 40-hex ``revision``. The resolved commit
    is the snapshot folder's name; a local directory that is itself such a snapshot also
    has one, any other local directory has none (``LoadInfo.commit`` is None). Online,
    the hub's commit for ``revision`` is resolved first and only that commit's files are
    fetched (configs, tokenizer files and one weights format).

Weights
    ``model.safetensors`` (or its shard index) is preferred; otherwise ``pytorch_model.bin``
    (or its index) loads by default. transformers (5.x) reads every ``.bin`` with
    ``torch.load(weights_only=True)``: tensors, containers and a few allowlisted types only,
    no code runs (its ``weights_only=False`` option does not reach the ``.bin`` reader).
    A ``.bin`` pickle holding other Python objects is refused (:class:`PickleError`);
    ``allow_pickle=True`` makes this module unpickle such a file itself with full pickle
    (which can run code from the file: trusted sources only) and hand its tensors to
    transformers, non-tensor entries dropped and listed in the report. A directory without
    PyTorch weights (only TensorFlow/Flax/GGUF files) is refused.

Weights the measure uses (:func:`check_loading_report`)
    Loads use ``output_loading_info=True``. A weight whose shape differs from the model's
    is always an error. A model weight *missing* from the checkpoint (which transformers
    would initialise at random) is an error unless it is a buffer (``position_ids``, rotary
    ``inv_freq``: recomputed, not learned) or, for ``head="encoder"``, part of the
    ``pooler`` (the extraction reads hidden states, never the pooler). A checkpoint weight
    the model does not have (*unexpected*, silently dropped by transformers) is an error
    unless it is such a buffer (or GPT-2's attention-mask ``attn.bias``), or belongs to a
    part of the network the measure does not run: the ``pooler``, a next-sentence
    (``seq_relationship``) or sentence-order (``sop_classifier``) head, or, for
    ``head="encoder"``, any task head on top of the base model (``cls.*``, ``lm_head.*``,
    ``generator_*``, ``discriminator_predictions.*``…). So an ELECTRA discriminator read as
    an MLM (generator head missing), a MosaicBERT-style checkpoint read as BERT (query and
    intermediate weights missing, fused ``Wqkv`` unexpected) and an MPT checkpoint with
    learned positions read by the native ALiBi class (``transformer.wpe.weight``
    unexpected) are refused, naming the weights.

Repository code
    Refused by default (:class:`RemoteCodeError`), also when only the tokenizer needs it:
    an ``auto_map`` in ``config.json`` for the class the head needs or for the tokenizer,
    an ``auto_map`` in ``tokenizer_config.json``, or a ``model_type`` transformers does not
    know. ``trust_remote_code=True`` is accepted only with a 40-hex commit ``revision``
    that the resolved snapshot matches (so the code that runs is the code reviewed).

Device and dtype
    Decided once, here: :func:`resolve_device` is the one place ``device="auto"`` is
    read (CUDA when available, else CPU; the CPU for embedded and planted models);
    ``"cuda"`` without CUDA is an error. :func:`load_checkpoint` moves the model to its
    device once; the engines never move a model, they check where it is.
    ``dtype="auto"``: float32 on CPU; on CUDA bfloat16 for the families in
    :data:`BF16_FAMILIES` (causal LMs trained in bfloat16) or a checkpoint stored in
    bfloat16, when the GPU supports it, else float32 (masked LMs and encoders stay in
    float32: their bias scores are small differences of log-probabilities); a checkpoint
    stored in float64 (the planted analytic models, :mod:`polybias.planted.analytic`)
    stays in float64 on every device. float16 is
    refused on CPU (:func:`polybias.engines.common.check_half`, the one rule, which the
    engines apply to the weights they are given). Log-softmax is taken in float32 by the scorers, whatever the weights'
    dtype; this module does not compute any.

Memory
    Before loading, the weights' size in the target dtype is estimated (parameter count
    from the safetensors headers, else the ``.bin`` file sizes scaled from the stored
    dtype) and :data:`MEMORY_OVERHEAD` times it must fit in ``max_memory_fraction`` of the
    available memory (RAM: ``psutil``, else ``/proc/meminfo``; CUDA: free device memory),
    or in ``memory_limit`` bytes when given; otherwise :class:`MemoryBudgetError`.

Text normalisers
    A registry entry may name a normaliser (``normaliser: banglabert``, this project's
    implementation of the csebuetnlp normaliser, :mod:`polybias.models.normalisers`; or
    ``banglabert-upstream``, the csebuetnlp package itself, which must then be installed);
    :func:`get_normaliser` returns it as a :class:`Normaliser` or raises
    :class:`NormaliserError` saying what to install. Run records name it
    (:func:`normaliser_record`: name, implementation, version).
"""

from __future__ import annotations

import inspect
import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any

from polybias.engines.normalising import normaliser_fields
from polybias.models import normalisers, placement
from polybias.models.errors import (
    CheckpointError,
    LoadError,
    NormaliserError,
    PickleError,
    first_line,
)
from polybias.models.hub import _read_json, resolve_source
from polybias.models.safety import (
    AUTO_CLASSES,
    HEADS,
    _check_remote_code,
    _is_unpickling_error,
    _pickle_state_dict,
    check_loading_report,
    weights_files,
)

# ---------------------------------------------------------------- errors


# ---------------------------------------------------------------- result

@dataclass(frozen=True)
class LoadInfo:
    """What was loaded: ``commit`` is the resolved hub commit (None for a plain local
    directory); ``revision`` the one asked for; ``report`` the checked loading report
    (``missing``, ``unexpected``, ``mismatched`` weights that were tolerated as harmless,
    ``dropped_non_tensors`` for ``allow_pickle`` loads)."""

    source: str
    path: str
    head: str
    architecture: str
    commit: str | None
    revision: str | None
    weights_format: str
    device: str
    dtype: str
    trust_remote_code: bool
    estimated_bytes: int
    report: dict[str, list[str]] = field(default_factory=dict)

    def to_record(self) -> dict[str, Any]:
        """Plain values for a run record."""
        return {"model_source": self.source, "model_revision": self.commit or self.revision,
                "model_commit": self.commit, "weights_format": self.weights_format,
                "architecture": self.architecture, "device": self.device, "dtype": self.dtype,
                "trust_remote_code": self.trust_remote_code}


# ---------------------------------------------------------------- small helpers


# ---------------------------------------------------------------- source


# ---------------------------------------------------------------- checks before loading


# ---------------------------------------------------------------- loading report


# ---------------------------------------------------------------- load

class _Quiet:
    """transformers' logging at error level and no progress bars, restored afterwards."""

    def __enter__(self):
        import transformers  # lazy: only loading needs it

        self._log = transformers.logging
        self._level = transformers.logging.get_verbosity()
        self._bars = transformers.logging.is_progress_bar_enabled()
        transformers.logging.set_verbosity_error()
        transformers.logging.disable_progress_bar()
        return self

    def __exit__(self, *exc):
        self._log.set_verbosity(self._level)
        if self._bars:
            self._log.enable_progress_bar()
        return False


def _load_tokenizer(path: Path, label: str, trust_remote_code: bool):
    from transformers import AutoTokenizer  # lazy: only loading needs it

    try:
        tok = AutoTokenizer.from_pretrained(str(path), use_fast=True, local_files_only=True,
                                            trust_remote_code=trust_remote_code)
    except Exception as exc:  # transformers raises many types here
        msg = first_line(exc)
        hint = (" (pip install sentencepiece protobuf; make env installs both, dependencies of polybias)"
                if re.search(r"sentencepiece|protobuf", msg, re.I) else "")
        raise CheckpointError(f"{label}: cannot load its tokenizer: {msg}{hint}") from exc
    if not getattr(tok, "is_fast", False):
        raise CheckpointError(f"{label}: its tokenizer ({type(tok).__name__}) has no fast version; "
                              "the measures need offsets and word ids")
    return tok


def load_checkpoint(source: str | os.PathLike, head: str, *, revision: str | None = None,
                    device: str = "auto", dtype="auto", trust_remote_code: bool = False,
                    allow_pickle: bool = False, max_memory_fraction: float = 0.8,
                    memory_limit: int | None = None, name: str | None = None):
    """Load a checkpoint for a measure, or refuse with a one-line :class:`LoadError`.

    Parameters
    ----------
    source : a local model directory or a hub id (offline: from the hub cache only).
    head : ``"mlm"`` (``AutoModelForMaskedLM``), ``"causal"`` (``AutoModelForCausalLM``) or
        ``"encoder"`` (``AutoModel``, the base model whose hidden states are read).
    revision : hub branch, tag or commit (``main`` when None); required, as a 40-hex
        commit, with ``trust_remote_code``.
    device : ``"auto"`` (CUDA when available, else CPU), ``"cpu"``, ``"cuda"``, ``"cuda:N"``.
    dtype : ``"auto"`` (module rules), ``"float32"``, ``"bfloat16"``, ``"float16"`` (CUDA
        only) or a ``torch.dtype``.
    trust_remote_code : run the repository's code; only with a pinned commit ``revision``.
    allow_pickle : unpickle ``.bin`` files holding more than tensors (full pickle; trusted
        sources only). Plain ``.bin`` state dicts load without it.
    max_memory_fraction : share of the free memory the model may take.
    memory_limit : a memory budget in bytes instead (tests use a small one).
    name : the label errors use (the source when None).

    Returns
    -------
    (model, tokenizer, LoadInfo) : the model in eval mode on ``device``, its fast tokenizer.
    """
    import torch  # lazy: the registry and its checks import without it

    label = f"model {name or str(source)!r}"
    if head not in HEADS:
        raise LoadError(f"{label}: head must be one of {', '.join(HEADS)}, got {head!r}")
    if not 0 < max_memory_fraction <= 1:
        raise LoadError(f"{label}: max_memory_fraction must be in (0, 1], got {max_memory_fraction}")
    device = placement.resolve_device(device, label)
    path, commit = resolve_source(source, revision, label)
    if not (path / "config.json").is_file():
        raise CheckpointError(f"{label}: {path} has no config.json (not a transformers model "
                              "directory)")
    config_json = _read_json(path / "config.json", label)
    _check_remote_code(path, head, commit, revision, trust_remote_code, label)
    fmt, files = weights_files(path, label)
    stored = config_json.get("torch_dtype") or config_json.get("dtype")
    torch_dtype = placement.resolve_dtype(dtype, device, config_json.get("model_type"), stored, label)
    target = torch.empty((), dtype=torch_dtype).element_size()
    estimate = placement.estimate_weight_bytes(files, fmt, target, stored)
    placement.check_memory(estimate, device, label, max_memory_fraction, memory_limit)

    import transformers  # lazy: the registry and its checks import without it

    auto = getattr(transformers, AUTO_CLASSES[head])
    opts = dict(local_files_only=True, trust_remote_code=trust_remote_code)
    dropped: list[str] = []
    with _Quiet():
        try:
            config = transformers.AutoConfig.from_pretrained(str(path), **opts)
        except Exception as exc:
            raise CheckpointError(f"{label}: cannot read its config: {first_line(exc)}") from exc
        tokenizer = _load_tokenizer(path, label, trust_remote_code)
        archs = list(getattr(config, "architectures", None) or [])
        try:
            try:
                model, info = auto.from_pretrained(
                    str(path), config=config, dtype=torch_dtype, use_safetensors=fmt == "safetensors",
                    output_loading_info=True, **opts)
            except Exception as exc:
                if fmt != "bin" or not _is_unpickling_error(exc):
                    raise
                if not allow_pickle:
                    raise PickleError(
                        f"{label}: {files[0].name} holds Python objects beyond tensors, which the "
                        f"safe weights-only reader refuses ({first_line(exc)}); load it only from "
                        "a trusted source with allow_pickle=True (or convert it to safetensors)"
                    ) from exc
                state, dropped = _pickle_state_dict(files)
                cls = _concrete_class(auto, config, label, head)
                model, info = cls.from_pretrained(None, config=config, state_dict=state,
                                                  dtype=torch_dtype, output_loading_info=True)
        except LoadError:
            raise
        except ValueError as exc:
            msg = first_line(exc)
            if "Unrecognized configuration class" in msg:
                raise CheckpointError(f"{label}: transformers has no {head} class for "
                                      f"{type(config).__name__} (architectures: "
                                      f"{', '.join(archs) or 'none'})") from exc
            raise CheckpointError(f"{label}: cannot load its {fmt} weights as {head}: {msg}") from exc
        except Exception as exc:
            raise CheckpointError(f"{label}: cannot load its {fmt} weights as {head}: "
                                  f"{first_line(exc)}") from exc
    report = check_loading_report(info, head, model, label, archs)
    if dropped:
        report["dropped_non_tensors"] = sorted(dropped)
    model.eval()
    model.to(device)
    load_info = LoadInfo(source=str(source), path=str(path), head=head,
                         architecture=type(model).__name__, commit=commit, revision=revision,
                         weights_format=fmt, device=device, dtype=str(torch_dtype).removeprefix("torch."),
                         trust_remote_code=trust_remote_code, estimated_bytes=estimate, report=report)
    return model, tokenizer, load_info


def _concrete_class(auto, config, label: str, head: str):
    try:
        return auto._model_mapping[type(config)]
    except KeyError as exc:
        raise CheckpointError(f"{label}: transformers has no {head} class for "
                              f"{type(config).__name__}") from exc


# ---------------------------------------------------------------- text normalisers

@dataclass(frozen=True)
class Normaliser:
    """A text normaliser as run records name it: ``name`` (the registry's), ``function``
    (str → str), ``implementation`` (what runs) and ``version`` (of that implementation).
    Called like its function."""

    name: str
    function: Callable[[str], str]
    implementation: str
    version: str | None = None

    def __call__(self, text: str) -> str:
        return self.function(text)

    def to_record(self) -> dict[str, Any]:
        """Plain values for a run record."""
        return {"name": self.name, "implementation": self.implementation,
                "version": self.version}


_UPSTREAM = "pip install git+https://github.com/csebuetnlp/normalizer"


def _banglabert() -> Normaliser:
    """This project's implementation of the csebuetnlp normaliser BanglaBERT was trained with
    (:func:`polybias.models.normalisers.banglabert_normalise`, defaults of the model card)."""
    try:
        import ftfy  # noqa: F401  # lazy: banglabert normaliser only
    except ImportError as exc:  # a runtime dependency: only a broken install lacks it
        raise NormaliserError("text normaliser 'banglabert' needs the ftfy package "
                              "(pip install ftfy; make env installs it, a dependency of polybias)") from exc
    return Normaliser("banglabert", normalisers.banglabert_normalise,
                      "polybias.models.normalisers.banglabert_normalise",
                      f"{normalisers.VERSION} (ftfy {normalisers.ftfy_version()})")


def _banglabert_upstream() -> Normaliser:
    """The csebuetnlp ``normalizer`` package itself (``normalizer.normalize``), for whoever
    wants the original code: it must be installed (not on PyPI)."""
    try:
        from normalizer import normalize  # lazy: csebuetnlp/normalizer (not on PyPI)
    except ImportError as exc:
        raise NormaliserError(
            "text normaliser 'banglabert-upstream' (the csebuetnlp package) is not installed: "
            f"{_UPSTREAM} (or name 'banglabert', this project's implementation of its rules)"
        ) from exc
    if "unicode_norm" not in inspect.signature(normalize).parameters:
        raise NormaliserError("text normaliser 'banglabert-upstream': the installed 'normalizer' "
                              f"package is not the csebuetnlp one ({_UPSTREAM})")
    try:
        version = metadata.version("normalizer")
    except metadata.PackageNotFoundError:
        version = getattr(sys.modules.get("normalizer"), "__version__", None)
    return Normaliser("banglabert-upstream", normalize, "normalizer.normalize (csebuetnlp)", version)


#: Normaliser name → factory returning it (raising when it cannot be had): ``banglabert``
#: is this project's implementation of the csebuetnlp normaliser (no extra install),
#: ``banglabert-upstream`` the csebuetnlp package itself.
NORMALISERS: dict[str, Callable[[], Normaliser | Callable[[str], str]]] = {
    "banglabert": _banglabert, "banglabert-upstream": _banglabert_upstream}


def get_normaliser(name: str | None, model: str | None = None) -> Normaliser | None:
    """The text normaliser called ``name`` (None: no normaliser, returns None), as a
    :class:`Normaliser` (a factory returning a bare callable gets its qualified name as
    ``implementation``).

    Raises :class:`NormaliserError` for an unknown name, or one whose package is missing.

    >>> n = get_normaliser("banglabert")
    >>> n("অা  ৷"), n.to_record()["implementation"]
    ('আ ।', 'polybias.models.normalisers.banglabert_normalise')
    """
    if name is None:
        return None
    prefix = f"model {model!r}: " if model else ""
    if name not in NORMALISERS:
        raise NormaliserError(f"{prefix}unknown text normaliser {name!r}; known: "
                              f"{', '.join(sorted(NORMALISERS))}")
    try:
        found = NORMALISERS[name]()
    except NormaliserError as exc:
        raise NormaliserError(f"{prefix}{exc}") from exc
    if isinstance(found, Normaliser):
        return found
    where = f"{getattr(found, '__module__', '?')}.{getattr(found, '__qualname__', type(found).__name__)}"
    return Normaliser(name, found, where)


def normaliser_record(normaliser: Normaliser | Callable[[str], str] | None) -> dict[str, Any] | None:
    """What a run record says about a model's text normaliser (None when it has none).

    >>> normaliser_record(None) is None, normaliser_record(get_normaliser("banglabert"))["name"]
    (True, 'banglabert')
    """
    return normaliser_fields(normaliser)
