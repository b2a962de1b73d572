"""Checkpoints as language models or encoders, for :func:`polybias.models.load`.

Every checkpoint goes through :func:`polybias.models.loading.load_checkpoint` (resolved
commit, ``.bin`` weights through the safe weights-only reader, checked loading report,
device, dtype and memory rules); a :class:`~polybias.models.errors.LoadError` becomes the
caller's error with the same one-line message.
"""

from __future__ import annotations

import json
from importlib import metadata
from pathlib import Path

from polybias.engines.embeddings import Encoder, wrap_encoder
from polybias.engines.scoring import KINDS, LanguageModel, kind_of_class, wrap_language_model
from polybias.models import errors, hub, loading, placement


def language_model(source: str, error: type[Exception], kind: str | None = None, revision=None,
                   device: str = "auto", dtype="auto", allow_pickle: bool = False,
                   trust_remote_code: bool = False, name: str | None = None,
                   memory_limit: int | None = None, batch_tokens: int | None = None
                   ) -> LanguageModel:
    """A masked or causal LM from a local directory or a hub id (offline: the hub cache).

    ``kind`` is read from the config's ``architectures`` when None (a pre-training class,
    BERT/ALBERT with MLM + NSP/SOP heads, is read as an MLM; an ELECTRA discriminator then
    fails the loading check). ``batch_tokens``: the engines' default token budget (None or
    0: auto, :func:`polybias.models.placement.batch_tokens_for`).
    """
    if kind is not None and kind not in KINDS:
        raise error(f"kind must be one of {KINDS}, got {kind!r}")
    label = name or str(source)
    try:
        if kind is None:
            archs = list(hub.read_config(source, revision, name=label)
                         .get("architectures") or [])
            kinds = {k for k in (kind_of_class(a) or ("mlm" if a.endswith("ForPreTraining")
                                                      else None) for a in archs) if k}
            if len(kinds) != 1:
                raise error(f"cannot tell whether {label!r} is a masked or causal LM "
                            f"(architectures: {archs or 'none'}); pass kind='mlm' or 'causal'")
            kind = kinds.pop()
        model, tokenizer, info = loading.load_checkpoint(
            source, kind, revision=revision, device=device, dtype=dtype,
            trust_remote_code=trust_remote_code,
            allow_pickle=allow_pickle, memory_limit=memory_limit, name=label)
        budget = placement.batch_tokens_for(model, info.device, kind, batch_tokens)
    except errors.LoadError as exc:
        raise error(errors.first_line(exc)) from exc
    lm = wrap_language_model(model, tokenizer, name=label, kind=kind,
                             revision=info.commit or revision, device=info.device)
    lm.load_info = info
    lm.batch_tokens = budget
    return lm


def is_decoder(model) -> bool:
    """Whether a transformers model is a decoder (causal attention: its hidden states of a
    word see only the words before it), which the encoder measures must not read: its
    config says ``is_decoder``, or its family (``model_type``) has a causal-LM class and no
    masked-LM class in transformers (GPT-2, Llama, Qwen2, MPT, …; BERT-like families have
    both).

    >>> from polybias.planted.tiny_models import build_tiny_encoder, build_tiny_model
    >>> is_decoder(build_tiny_encoder("bert")[0]), is_decoder(build_tiny_model("gpt2")[0])
    (False, True)
    """
    # heavy: only loading needs transformers
    from transformers.models.auto.modeling_auto import (
        MODEL_FOR_CAUSAL_LM_MAPPING_NAMES,
        MODEL_FOR_MASKED_LM_MAPPING_NAMES,
    )  # lazy: heavy; model code only

    config = getattr(model, "config", None)
    if config is None:
        return False
    if getattr(config, "is_decoder", False):
        return True
    kind = getattr(config, "model_type", None)
    return kind in MODEL_FOR_CAUSAL_LM_MAPPING_NAMES and kind not in MODEL_FOR_MASKED_LM_MAPPING_NAMES


def package_folder(package: str, folder: str, error: type[Exception]) -> Path:
    """The model folder ``folder`` inside installed package ``package``."""
    try:
        dist = metadata.distribution(package)
    except metadata.PackageNotFoundError as exc:
        raise error(f"package {package!r} is not installed (pip install {package})") from exc
    path = Path(str(dist.locate_file(folder)))
    if not (path / "config.json").is_file():
        raise error(f"package {package!r} has no model folder {folder!r} with a config.json")
    return path


def _st_options(path: Path, error: type[Exception]) -> tuple[str | None, int | None]:
    """Pooling and max_seq_length of a sentence-transformers folder (None when absent)."""
    pooling, limit = None, None
    pool_cfg = path / "1_Pooling" / "config.json"
    if pool_cfg.is_file():
        cfg = json.loads(pool_cfg.read_text(encoding="utf-8"))
        modes = [k for k in ("pooling_mode_mean_tokens", "pooling_mode_cls_token",
                             "pooling_mode_max_tokens", "pooling_mode_mean_sqrt_len_tokens")
                 if cfg.get(k)]
        if modes == ["pooling_mode_mean_tokens"]:
            pooling = "mean"
        elif modes == ["pooling_mode_cls_token"]:
            pooling = "cls"
        else:
            raise error(f"{pool_cfg}: unsupported sentence-transformers pooling {modes}")
    st_cfg = path / "sentence_bert_config.json"
    if st_cfg.is_file():
        limit = json.loads(st_cfg.read_text(encoding="utf-8")).get("max_seq_length")
    return pooling, limit


def encoder(source: Path | str, name: str, error: type[Exception], revision: str | None = None,
            device: str = "auto", dtype="auto", allow_pickle: bool = False,
            pooling: str | None = None, trust_remote_code: bool = False,
            record_revision: str | None = None, memory_limit: int | None = None,
            batch_tokens: int | None = None) -> Encoder:
    """A model directory or hub id as an encoder (head ``encoder``). The
    sentence-transformers pooling and length limit are read from the resolved folder;
    ``record_revision`` replaces the resolved commit as the recorded revision
    (package-shipped models)."""
    import transformers  # lazy: only loading needs it

    bars = transformers.logging.is_progress_bar_enabled()
    transformers.logging.disable_progress_bar()  # keep notebook outputs clean
    try:
        model, tokenizer, info = loading.load_checkpoint(
            source, "encoder", revision=revision or None, device=device, dtype=dtype,
            trust_remote_code=trust_remote_code,
            allow_pickle=allow_pickle, memory_limit=memory_limit, name=name)
        budget = placement.batch_tokens_for(model, info.device, "encoder", batch_tokens)
    except errors.LoadError as exc:
        raise error(errors.first_line(exc)) from exc
    finally:
        if bars:
            transformers.logging.enable_progress_bar()
    if is_decoder(getattr(model, "base_model", model)):
        raise error(f"model {name!r} ({type(getattr(model, 'base_model', model)).__name__}) is a "
                    "decoder, not an encoder")
    st_pooling, limit = _st_options(Path(info.path), error)
    enc = wrap_encoder(model, tokenizer, name=name,
                       revision=record_revision or info.commit or revision or None,
                       pooling=pooling or st_pooling or "cls", device=info.device,
                       max_length=limit)
    enc.load_info = info
    enc.batch_tokens = budget
    return enc
