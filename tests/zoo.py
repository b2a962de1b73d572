"""Model zoo: tiny random checkpoints in the shapes of the studies' hub models.

Each stand-in has the hub model's architecture class, tokenizer type and tokenizer files
(``vocab.txt`` for WordPiece, ``vocab.json`` + ``merges.txt`` for byte-level BPE, a
SentencePiece ``spiece.model`` / ``sentencepiece.bpe.model`` / ``tokenizer.model``, no
``tokenizer.json``: transformers builds the fast tokenizer from those files) and is saved
with ``model.safetensors`` or with ``pytorch_model.bin`` only. :func:`run_zoo` loads every
case through :func:`polybias.models.loading.load_checkpoint` and :func:`table` prints the outcome
per family, head and weights format::

    python -m tests.zoo            # from the repository root
"""

from __future__ import annotations

import argparse
import io
import json
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import torch

SIZES = dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64)
MAX_LEN = 64
FORMATS = ("safetensors", "bin")


# ---------------------------------------------------------------- tokenizer files

#: Options of the build in progress (:func:`build` sets them): extra tokenizer training
#: text (e.g. the sentences a sweep scores in other scripts) and the position limit.
_OPTIONS: dict = {"text": (), "max_len": MAX_LEN}


def _corpus() -> list[str]:
    from polybias.planted.tiny_models import CORPUS

    return list(CORPUS) + list(_OPTIONS["text"])


def _vocab(size: int) -> int:
    """Vocabulary size: ``size``, larger when extra text is in the corpus."""
    return size if not _OPTIONS["text"] else max(size, 1500)


def _sentencepiece(path: Path, vocab_size: int = 400, **options) -> None:
    import sentencepiece as spm

    if _OPTIONS["text"]:
        options.setdefault("hard_vocab_limit", False)
    buf = io.BytesIO()
    spm.SentencePieceTrainer.train(sentence_iterator=iter(_corpus()), model_writer=buf,
                                   vocab_size=_vocab(vocab_size), character_coverage=1.0, minloglevel=2,
                                   num_threads=1, **options)
    path.write_bytes(buf.getvalue())


def _byte_bpe(folder: Path, family: str) -> None:
    """vocab.json + merges.txt of the tiny byte-level BPE of ``family`` (gpt2 or roberta)."""
    from polybias.planted.tiny_models import build_tokenizer

    model = json.loads(build_tokenizer(family).backend_tokenizer.to_str())["model"]
    (folder / "vocab.json").write_text(json.dumps(model["vocab"], ensure_ascii=False), encoding="utf-8")
    merges = [" ".join(m) if isinstance(m, list) else m for m in model["merges"]]
    (folder / "merges.txt").write_text("#version: 0.2\n" + "\n".join(merges) + "\n", encoding="utf-8")


def _wordpiece(folder: Path, lowercase: bool) -> None:
    from polybias.planted.tiny_models import _SPECIALS, _wordpiece_vocab
    from tokenizers import normalizers, pre_tokenizers

    specials = list(_SPECIALS["bert"].values())
    norm = normalizers.BertNormalizer(lowercase=lowercase, strip_accents=None, clean_text=True,
                                      handle_chinese_chars=True)
    vocab = _wordpiece_vocab(_corpus(), _vocab(400), specials, norm, pre_tokenizers.BertPreTokenizer())
    (folder / "vocab.txt").write_text("".join(p + "\n" for p in vocab), encoding="utf-8")


def _tokenizer_config(folder: Path, cls: str, **extra) -> None:
    cfg = {"tokenizer_class": cls, "model_max_length": _OPTIONS["max_len"], **extra}
    (folder / "tokenizer_config.json").write_text(json.dumps(cfg), encoding="utf-8")


TOKENIZERS: dict[str, Callable[[Path], None]] = {
    "wordpiece-uncased": lambda f: (_wordpiece(f, True),
                                    _tokenizer_config(f, "BertTokenizer", do_lower_case=True)),
    "wordpiece-cased": lambda f: (_wordpiece(f, False),
                                  _tokenizer_config(f, "BertTokenizer", do_lower_case=False)),
    "electra-wordpiece": lambda f: (_wordpiece(f, True),
                                    _tokenizer_config(f, "ElectraTokenizer", do_lower_case=True)),
    "albert-sentencepiece": lambda f: (
        _sentencepiece(f / "spiece.model", model_type="unigram", hard_vocab_limit=False, pad_id=0, unk_id=1, bos_id=-1,
                       eos_id=-1, control_symbols=["[CLS]", "[SEP]", "[MASK]"]),
        _tokenizer_config(f, "AlbertTokenizer", do_lower_case=True)),
    "xlmr-sentencepiece": lambda f: (
        _sentencepiece(f / "sentencepiece.bpe.model", model_type="bpe", vocab_size=300, bos_id=0, pad_id=1,
                       eos_id=2, unk_id=3),
        _tokenizer_config(f, "XLMRobertaTokenizer")),
    "llama-sentencepiece": lambda f: (
        _sentencepiece(f / "tokenizer.model", model_type="bpe", unk_id=0, bos_id=1, eos_id=2,
                       pad_id=-1, byte_fallback=True),
        _tokenizer_config(f, "LlamaTokenizer", add_bos_token=True, add_eos_token=False)),
    "roberta-bpe": lambda f: (_byte_bpe(f, "roberta"), _tokenizer_config(f, "RobertaTokenizer")),
    "gpt2-bpe": lambda f: (_byte_bpe(f, "gpt2"), _tokenizer_config(f, "GPT2Tokenizer")),
    "qwen2-bpe": lambda f: (_byte_bpe(f, "gpt2"), _tokenizer_config(f, "Qwen2Tokenizer")),
    "neox-bpe": lambda f: (_byte_bpe(f, "gpt2"), _tokenizer_config(f, "GPTNeoXTokenizer")),
}


# ---------------------------------------------------------------- models

def _config(arch: str, tok):
    import transformers as tf

    MAX_LEN = _OPTIONS["max_len"]  # noqa: N806
    n = len(tok)
    if arch in ("BertForMaskedLM", "BertForPreTraining"):
        return tf.BertConfig(vocab_size=n, max_position_embeddings=MAX_LEN, pad_token_id=tok.pad_token_id, **SIZES)
    if arch in ("ElectraForMaskedLM", "ElectraForPreTraining"):
        return tf.ElectraConfig(vocab_size=n, embedding_size=16, max_position_embeddings=MAX_LEN,
                                pad_token_id=tok.pad_token_id, **SIZES)
    if arch == "AlbertForMaskedLM":
        return tf.AlbertConfig(vocab_size=n, embedding_size=16, max_position_embeddings=MAX_LEN,
                               pad_token_id=tok.pad_token_id, **SIZES)
    if arch in ("RobertaForMaskedLM", "XLMRobertaForMaskedLM"):
        cls = tf.RobertaConfig if arch.startswith("Roberta") else tf.XLMRobertaConfig
        return cls(vocab_size=n, max_position_embeddings=MAX_LEN + tok.pad_token_id + 1,
                   pad_token_id=tok.pad_token_id, bos_token_id=tok.bos_token_id,
                   eos_token_id=tok.eos_token_id, type_vocab_size=1, **SIZES)
    if arch == "GPT2LMHeadModel":
        return tf.GPT2Config(vocab_size=n, n_embd=32, n_layer=2, n_head=2, n_inner=64,
                             n_positions=MAX_LEN, bos_token_id=tok.bos_token_id,
                             eos_token_id=tok.eos_token_id)
    if arch in ("LlamaForCausalLM", "Qwen2ForCausalLM"):
        cls = tf.LlamaConfig if arch.startswith("Llama") else tf.Qwen2Config
        return cls(vocab_size=n, num_key_value_heads=1, max_position_embeddings=MAX_LEN,
                   bos_token_id=tok.bos_token_id, eos_token_id=tok.eos_token_id,
                   tie_word_embeddings=arch.startswith("Qwen2"), **SIZES)
    if arch == "MptForCausalLM":
        return tf.MptConfig(vocab_size=n, d_model=32, n_heads=2, n_layers=2, expansion_ratio=2,
                            max_seq_len=MAX_LEN, bos_token_id=tok.bos_token_id,
                            eos_token_id=tok.eos_token_id)
    raise ValueError(arch)


def _mosaic(state: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """BERT weights renamed as MosaicBERT stores them (fused Wqkv, gated MLP)."""
    out = {}
    for key, value in state.items():
        if ".attention.self.query." in key:
            kind = key.rsplit(".", 1)[1]
            stem = key.split(".attention.self.query.")[0]
            parts = [state[f"{stem}.attention.self.{p}.{kind}"] for p in ("query", "key", "value")]
            out[f"{stem}.attention.self.Wqkv.{kind}"] = torch.cat(parts)
        elif ".attention.self.key." in key or ".attention.self.value." in key:
            continue
        elif ".intermediate.dense." in key:
            out[key.replace(".intermediate.dense.", ".mlp.gated_layers.")] = torch.cat([value, value])
        elif ".output.dense." in key and ".attention." not in key:
            out[key.replace(".output.dense.", ".mlp.wo.")] = value
        elif ".output.LayerNorm." in key and ".attention." not in key:
            out[key.replace(".output.LayerNorm.", ".mlp.layernorm.")] = value
        else:
            out[key] = value
    return out


def _learned_positions(state: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """MPT weights with learned positions (``transformer.wpe``), as SEA-LION 3B has them."""
    out = dict(state)
    out["transformer.wpe.weight"] = torch.zeros(_OPTIONS["max_len"], state["transformer.wte.weight"].shape[1])
    return out


def _with_object(state: dict[str, torch.Tensor]) -> dict:
    """A ``.bin`` pickle holding a Python object beside the tensors (as old training scripts
    saved with their arguments)."""
    out = dict(state)
    out["training_args"] = argparse.Namespace(lr=1e-4)
    return out


@dataclass(frozen=True)
class Family:
    """A stand-in: architecture class, tokenizer files, and how its checkpoint differs."""

    name: str
    arch: str
    tokenizer: str
    heads: tuple[str, ...]
    stands_for: str
    state: Callable | None = None   # rewrites the state dict before saving
    config_extra: dict | None = None  # extra config.json keys (auto_map…)
    tokenizer_extra: dict | None = None  # extra tokenizer_config.json keys
    formats: tuple[str, ...] = FORMATS


_REMOTE_MPT = {"auto_map": {"AutoConfig": "configuration_mpt.MPTConfig",
                            "AutoModelForCausalLM": "modeling_mpt.MPTForCausalLM"}}
_REMOTE_TOKENIZER = {"auto_map": {"AutoTokenizer": ["tokenization_SEA_BPE.SEABPETokenizer", None]}}
_REMOTE_MOSAIC = {"auto_map": {"AutoConfig": "configuration_bert.BertConfig",
                               "AutoModelForMaskedLM": "bert_layers.BertForMaskedLM"}}

FAMILIES: tuple[Family, ...] = (
    Family("bert-uncased", "BertForPreTraining", "wordpiece-uncased", ("mlm", "encoder"),
           "bert-base-uncased, GreekBERT (with pooler and NSP head)"),
    Family("bert-cased", "BertForMaskedLM", "wordpiece-cased", ("mlm", "encoder"),
           "bert-base-cased, ParsBERT"),
    Family("albert", "AlbertForMaskedLM", "albert-sentencepiece", ("mlm", "encoder"),
           "albert-xxlarge-v2"),
    Family("xlm-roberta", "XLMRobertaForMaskedLM", "xlmr-sentencepiece", ("mlm", "encoder"),
           "FacebookAI/xlm-roberta-large"),
    Family("roberta", "RobertaForMaskedLM", "roberta-bpe", ("mlm", "encoder"), "roberta-base"),
    Family("electra-generator", "ElectraForMaskedLM", "electra-wordpiece", ("mlm", "encoder"),
           "google/electra-base-generator"),
    Family("electra-discriminator", "ElectraForPreTraining", "electra-wordpiece", ("mlm", "encoder"),
           "BanglaBERT, google/electra-base-discriminator"),
    Family("gpt2", "GPT2LMHeadModel", "gpt2-bpe", ("causal",), "gpt2"),
    Family("llama", "LlamaForCausalLM", "llama-sentencepiece", ("causal",),
           "SeaLLMs (Llama-2 based)"),
    Family("qwen2", "Qwen2ForCausalLM", "qwen2-bpe", ("causal",), "SeaLLMs v3 (Qwen2 based)"),
    Family("mpt", "MptForCausalLM", "neox-bpe", ("causal",), "MPT-style decoder (ALiBi)"),
    # refusals
    Family("mpt-learned-positions", "MptForCausalLM", "neox-bpe", ("causal",),
           "SEA-LION 3B weights read by the native MPT class", state=_learned_positions),
    Family("mpt-remote-code", "MptForCausalLM", "neox-bpe", ("causal",),
           "SEA-LION 3B/7B repository (custom model and tokenizer code)",
           config_extra=_REMOTE_MPT, tokenizer_extra=_REMOTE_TOKENIZER),
    Family("mosaicbert-as-bert", "BertForMaskedLM", "wordpiece-uncased", ("mlm",),
           "sealion-bert-base weights with a plain BERT config", state=_mosaic),
    Family("mosaicbert-remote-code", "BertForMaskedLM", "wordpiece-uncased", ("mlm",),
           "sealion-bert-base repository (bert_layers.py)", state=_mosaic,
           config_extra=_REMOTE_MOSAIC),
    Family("bert-bin-with-objects", "BertForMaskedLM", "wordpiece-uncased", ("mlm",),
           "an old .bin pickling its training arguments", state=_with_object, formats=("bin",)),
)


def build(family: Family, fmt: str, folder: Path, max_len: int = MAX_LEN,
          text: tuple[str, ...] = ()) -> Path:
    """Write ``family``'s stand-in with weights in ``fmt`` into ``folder`` (created);
    ``max_len`` positions, tokenizer trained on the tiny corpus plus ``text``."""
    _OPTIONS.update(text=tuple(text), max_len=max_len)
    try:
        return _build(family, fmt, folder)
    finally:
        _OPTIONS.update(text=(), max_len=MAX_LEN)


def _build(family: Family, fmt: str, folder: Path) -> Path:
    import transformers as tf
    from safetensors.torch import save_file

    folder.mkdir(parents=True, exist_ok=True)
    TOKENIZERS[family.tokenizer](folder)
    if family.tokenizer_extra:
        cfg = json.loads((folder / "tokenizer_config.json").read_text())
        (folder / "tokenizer_config.json").write_text(json.dumps({**cfg, **family.tokenizer_extra}))
    tok = tf.AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
    config = _config(family.arch, tok)
    config.architectures = [family.arch]
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        model = getattr(tf, family.arch)(config)
    state = {k: v.detach().clone().contiguous() for k, v in model.state_dict().items()}
    if fmt == "safetensors":  # tied weights stored once, as save_pretrained does
        seen, deduped = set(), {}
        for k, v in state.items():
            ptr = (v.data_ptr(), v.shape)
            if ptr not in seen or not v.numel():
                deduped[k] = v
            seen.add(ptr)
        state = {k: v.clone() for k, v in model.state_dict().items() if k in deduped}
    if family.state:
        state = family.state(state)
    config.save_pretrained(str(folder))
    if family.config_extra:
        cfg = json.loads((folder / "config.json").read_text())
        (folder / "config.json").write_text(json.dumps({**cfg, **family.config_extra}, indent=2))
    if fmt == "safetensors":
        save_file(state, str(folder / "model.safetensors"), metadata={"format": "pt"})
    else:
        torch.save(state, folder / "pytorch_model.bin")
    return folder


# ---------------------------------------------------------------- running the zoo

@dataclass(frozen=True)
class Outcome:
    family: str
    head: str
    fmt: str
    ok: bool
    error: str  # LoadError subclass name, "" when it loaded
    message: str
    stands_for: str

    @property
    def cell(self) -> str:
        return "loads" if self.ok else f"refused ({_reason(self)})"


def _reason(o: Outcome) -> str:
    m = o.message
    if o.error == "RemoteCodeError":
        return "repository code not opted in"
    if o.error == "PickleError":
        return "pickle beyond tensors; allow_pickle=True"
    if o.error == "WeightsError":
        if "ELECTRA discriminator" in m:
            return "discriminator has no MLM head"
        if "not in the checkpoint" in m and "would drop" in m:
            return "weights missing and dropped"
        return "weights missing" if "not in the checkpoint" in m else "checkpoint weights dropped"
    return o.error


def _silence_warnings() -> None:
    """Keep the helper's output to the table (transformers warns about random inits)."""
    import warnings

    from transformers.utils import logging as hf_logging

    hf_logging.set_verbosity_error()
    hf_logging.disable_progress_bar()
    warnings.filterwarnings("ignore", module="transformers")


def run_zoo(root: Path, families: tuple[Family, ...] = FAMILIES, device: str = "cpu",
            dtype: str = "auto") -> list[Outcome]:
    """Build every stand-in under ``root`` and load it with each of its heads."""
    from polybias.models.errors import LoadError
    from polybias.models.loading import load_checkpoint

    out = []
    for fam in families:
        for fmt in fam.formats:
            folder = root / f"{fam.name}-{fmt}"
            if not (folder / "config.json").is_file():
                build(fam, fmt, folder)
            for head in fam.heads:
                try:
                    load_checkpoint(folder, head, device=device, dtype=dtype, name=fam.name)
                    out.append(Outcome(fam.name, head, fmt, True, "", "", fam.stands_for))
                except LoadError as exc:
                    out.append(Outcome(fam.name, head, fmt, False, type(exc).__name__, str(exc),
                                       fam.stands_for))
    return out


def table(outcomes: list[Outcome]) -> str:
    """A Markdown table: family × head → outcome per weights format."""
    rows: dict[tuple[str, str], dict[str, str]] = {}
    stands = {}
    for o in outcomes:
        rows.setdefault((o.family, o.head), {})[o.fmt] = o.cell
        stands[o.family] = o.stands_for
    lines = ["| stand-in | stands for | head | safetensors | .bin only |",
             "|---|---|---|---|---|"]
    for (fam, head), cells in rows.items():
        lines.append(f"| {fam} | {stands[fam]} | {head} | {cells.get('safetensors', '—')} | "
                     f"{cells.get('bin', '—')} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--dtype", default="auto")
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    _silence_warnings()
    with tempfile.TemporaryDirectory() as tmp:
        outcomes = run_zoo(Path(tmp), device=args.device, dtype=args.dtype)
    print(table(outcomes))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
