"""What is checked before and after a checkpoint loads: its weights files (safetensors
preferred; a ``.bin`` pickle of other objects refused unless ``allow_pickle``), repository
code (refused unless trusted at a pinned commit) and the loading report (no weight the
measure uses initialised at random or dropped) (:mod:`polybias.models.loading`, "Weights",
"Repository code")."""

from __future__ import annotations

import pickle
import re
from pathlib import Path
from typing import Any

from polybias.models.errors import CheckpointError, RemoteCodeError, WeightsError
from polybias.models.hub import _HEX40, _read_json, _short_keys

HEADS = ("mlm", "causal", "encoder")

#: transformers' Auto class per head.
AUTO_CLASSES = {"mlm": "AutoModelForMaskedLM", "causal": "AutoModelForCausalLM",
                "encoder": "AutoModel"}


def weights_files(path: Path, label: str) -> tuple[str, list[Path]]:
    """Weights format (``safetensors`` or ``bin``) and files of a model directory."""
    for fmt, single, index in (("safetensors", "model.safetensors", "model.safetensors.index.json"),
                               ("bin", "pytorch_model.bin", "pytorch_model.bin.index.json")):
        if (path / single).is_file():
            return fmt, [path / single]
        if (path / index).is_file():
            shards = sorted(set(_read_json(path / index, label).get("weight_map", {}).values()))
            missing = [s for s in shards if not (path / s).is_file()]
            if not shards or missing:
                raise CheckpointError(f"{label}: {index} names shard(s) that are not there: "
                                      f"{', '.join(missing) or '(none listed)'}")
            return fmt, [path / s for s in shards]
    others = sorted(p.name for p in path.iterdir()
                    if p.suffix in (".h5", ".msgpack", ".gguf", ".ckpt", ".pt", ".pth"))
    found = f" (found only {', '.join(others)})" if others else ""
    raise CheckpointError(f"{label}: no PyTorch weights (model.safetensors or pytorch_model.bin) "
                          f"in {path}{found}")


def remote_code_needs(path: Path, head: str, label: str) -> list[str]:
    """Why loading ``path`` with ``head`` needs repository code (empty: it does not)."""
    from transformers import CONFIG_MAPPING  # lazy: only loading needs it

    config = _read_json(path / "config.json", label)
    tok_config = _read_json(path / "tokenizer_config.json", label)
    reasons = []
    auto_map = config.get("auto_map") or {}
    for key in ("AutoConfig", AUTO_CLASSES[head], "AutoTokenizer"):
        if key in auto_map:
            target = auto_map[key]
            target = next((t for t in target if t), None) if isinstance(target, list) else target
            reasons.append(f"config.json auto_map {key} -> {target}")
    tok_map = tok_config.get("auto_map") or {}
    if isinstance(tok_map, list | tuple):
        tok_map = {"AutoTokenizer": tok_map}
    if "AutoTokenizer" in tok_map and not any("AutoTokenizer" in r for r in reasons):
        target = tok_map["AutoTokenizer"]
        target = next((t for t in target if t), None) if isinstance(target, list) else target
        reasons.append(f"tokenizer_config.json auto_map AutoTokenizer -> {target}")
    model_type = config.get("model_type")
    if model_type and model_type not in CONFIG_MAPPING:
        reasons.append(f"model_type {model_type!r} is not in transformers")
    return reasons


def _check_remote_code(path: Path, head: str, commit: str | None, revision: str | None,
                       trust_remote_code: bool, label: str) -> None:
    reasons = remote_code_needs(path, head, label)
    if reasons and not trust_remote_code:
        raise RemoteCodeError(
            f"{label}: needs code from its repository ({'; '.join(reasons)}); repository code is "
            "refused by default: review it, then opt in with trust_remote_code=True and the "
            "reviewed 40-hex commit as revision")
    if trust_remote_code:
        if not revision or not _HEX40.match(revision):
            raise RemoteCodeError(f"{label}: trust_remote_code needs a pinned 40-hex commit "
                                  f"revision, got {revision!r}")
        if commit != revision:
            raise RemoteCodeError(
                f"{label}: trust_remote_code needs the snapshot of commit {revision}, but the "
                + ("directory is not a hub snapshot (load it by hub id from the cache)"
                   if commit is None else f"source resolves to commit {commit}"))


_BUFFER = re.compile(r"(^|\.)(position_ids|inv_freq|masked_bias)$|(^|\.)attn\.bias$")


_UNUSED_HEADS = re.compile(r"(^|\.)(pooler|seq_relationship|sop_classifier)\.")


def check_loading_report(info: dict[str, Any], head: str, model, label: str,
                         architectures: list[str] | None = None) -> dict[str, list[str]]:
    """Raise :class:`WeightsError` when a weight the measure uses was not loaded from the
    checkpoint, or a checkpoint weight was dropped (rules in the module docstring).

    ``info`` is transformers' ``output_loading_info`` dict. Returns the tolerated keys.
    """
    buffers = {name for name, _ in model.named_buffers()}
    base = getattr(model, "base_model", model)
    base_parts = {name for name, _ in base.named_children()}
    missing = set(info.get("missing_keys") or ())
    unexpected = set(info.get("unexpected_keys") or ())
    mismatched = list(info.get("mismatched_keys") or ())

    def harmless_missing(key: str) -> bool:
        return key in buffers or bool(_BUFFER.search(key)) or (
            head == "encoder" and (key.startswith("pooler.") or ".pooler." in key))

    def harmless_unexpected(key: str) -> bool:
        if _BUFFER.search(key) or _UNUSED_HEADS.search(key):
            return True
        return head == "encoder" and key.split(".")[0] not in base_parts

    bad_missing = sorted(k for k in missing if not harmless_missing(k))
    bad_unexpected = sorted(k for k in unexpected if not harmless_unexpected(k))
    problems = []
    if mismatched:
        shapes = [f"{k[0]} {tuple(k[1])} vs {tuple(k[2])}" if isinstance(k, tuple) else str(k)
                  for k in mismatched]
        problems.append(f"{len(shapes)} weight(s) of another shape: {', '.join(shapes[:4])}")
    if bad_missing:
        problems.append(f"{len(bad_missing)} weight(s) not in the checkpoint (would be random): "
                        + _short_keys(bad_missing))
    if bad_unexpected:
        problems.append(f"{len(bad_unexpected)} checkpoint weight(s) the model would drop: "
                        + _short_keys(bad_unexpected))
    if problems:
        arch = ", ".join(architectures or []) or "unknown"
        why = ""
        if head == "mlm" and any(a == "ElectraForPreTraining" for a in architectures or []):
            why = ("an ELECTRA discriminator has no MLM head (use the generator checkpoint for "
                   "masked-LM scores, or head 'encoder'); ")
        raise WeightsError(f"{label}: loaded as {type(model).__name__} ({head}) from a checkpoint "
                           f"of {arch}: {why}{'; '.join(problems)}")
    return {"missing": sorted(missing), "unexpected": sorted(unexpected),
            "mismatched": [str(k) for k in mismatched]}


def _pickle_state_dict(files: list[Path]) -> tuple[dict[str, Any], list[str]]:
    import torch  # lazy: the registry and its checks import without it

    state, dropped = {}, []
    for f in files:
        for key, value in torch.load(f, map_location="cpu", weights_only=False).items():
            if isinstance(value, torch.Tensor):
                state[key] = value
            else:
                dropped.append(str(key))
    return state, dropped


def _is_unpickling_error(exc: BaseException) -> bool:
    while exc is not None:
        if isinstance(exc, pickle.UnpicklingError) or "Weights only load failed" in str(exc):
            return True
        exc = exc.__cause__ or exc.__context__
    return False
