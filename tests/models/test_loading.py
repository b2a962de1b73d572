"""Rules of polybias.models.loading one by one: sources, weights files, the loading report,
device and dtype, the memory budget, normalisers and the registry's loading keys."""

from __future__ import annotations

import json
import re
import shutil
import sys
import tomllib
from importlib import metadata

import pytest
import torch
from polybias import models, paths
from polybias.models import ModelError, hub, loading, placement, safety
from polybias.models.errors import (
    CheckpointError,
    DeviceError,
    LoadError,
    MemoryBudgetError,
    NormaliserError,
    NotCachedError,
    WeightsError,
)
from polybias.models.loading import load_checkpoint
from polybias.models.safety import check_loading_report
from polybias.planted.tiny_models import build_tiny_model


@pytest.fixture(scope="module")
def tiny_bert(tmp_path_factory, torch_one_thread):
    """A tiny BERT MLM saved with safetensors (tokenizer.json) and the model it came from."""
    model, tok = build_tiny_model("bert")
    folder = tmp_path_factory.mktemp("bert")
    model.save_pretrained(str(folder))
    tok.save_pretrained(str(folder))
    return folder, model


# ---------------------------------------------------------------- arguments and sources

def test_unknown_head_and_bad_fraction(tiny_bert):
    with pytest.raises(LoadError, match="head must be one of mlm, causal, encoder, got 'seq2seq'"):
        load_checkpoint(tiny_bert[0], "seq2seq")
    with pytest.raises(LoadError, match=r"max_memory_fraction must be in \(0, 1\]"):
        load_checkpoint(tiny_bert[0], "mlm", max_memory_fraction=0)


def test_paths_that_are_not_model_directories(tmp_path):
    file = tmp_path / "weights.bin"
    file.write_bytes(b"x")
    with pytest.raises(CheckpointError, match="is not a model directory"):
        load_checkpoint(file, "mlm", device="cpu")
    with pytest.raises(CheckpointError, match="no such model directory './absent'"):
        load_checkpoint("./absent", "mlm", device="cpu")
    with pytest.raises(CheckpointError, match="has no config.json"):
        load_checkpoint(tmp_path, "mlm", device="cpu")


def test_weights_files_rules(tmp_path):
    (tmp_path / "tf_model.h5").write_bytes(b"")
    with pytest.raises(CheckpointError, match=r"no PyTorch weights .* \(found only tf_model.h5\)"):
        safety.weights_files(tmp_path, "model 'x'")
    (tmp_path / "pytorch_model.bin.index.json").write_text(json.dumps(
        {"weight_map": {"a": "pytorch_model-00001-of-00002.bin", "b": "pytorch_model-00002-of-00002.bin"}}))
    with pytest.raises(CheckpointError, match="names shard.* pytorch_model-00001-of-00002.bin"):
        safety.weights_files(tmp_path, "model 'x'")
    for i in (1, 2):
        (tmp_path / f"pytorch_model-0000{i}-of-00002.bin").write_bytes(b"")
    assert safety.weights_files(tmp_path, "x")[0] == "bin"
    (tmp_path / "model.safetensors").write_bytes(b"")
    fmt, files = safety.weights_files(tmp_path, "x")
    assert fmt == "safetensors" and [f.name for f in files] == ["model.safetensors"]


def test_online_id_not_cached_offline(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    with pytest.raises(NotCachedError) as err:
        load_checkpoint("csebuetnlp/banglabert", "encoder", device="cpu")
    msg = str(err.value)
    assert "\n" not in msg and msg.startswith("model 'csebuetnlp/banglabert' is not in the offline")
    assert "hf download csebuetnlp/banglabert" in msg and "HF_HUB_CACHE" in msg


def test_an_unreachable_hub_advises_the_cache_only_when_it_holds_the_model(tmp_path, monkeypatch):
    """Online, a hub that cannot be reached: HF_HUB_OFFLINE=1 helps only with a cached copy;
    with an empty cache the advice is a download or a model directory."""
    import huggingface_hub

    def unreachable(self, repo_id, revision=None, **kw):
        raise ConnectionError("no route to host")

    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path))
    monkeypatch.setattr(huggingface_hub.HfApi, "model_info", unreachable)
    with pytest.raises(NotCachedError) as err:
        hub.resolve_commit("org/absent")
    assert "HF_HUB_OFFLINE" not in str(err.value)
    assert "not in the local cache" in str(err.value) and "hf download org/absent" in str(err.value)
    snapshot = tmp_path / "models--org--absent" / "snapshots" / ("0" * 40)
    snapshot.mkdir(parents=True)  # a snapshot an offline load cannot read (no config, no ref)
    with pytest.raises(NotCachedError, match="not in the local cache"):
        hub.resolve_commit("org/absent")
    (snapshot / "config.json").write_text("{}")
    (tmp_path / "models--org--absent" / "refs").mkdir()
    (tmp_path / "models--org--absent" / "refs" / "main").write_text("0" * 40)
    with pytest.raises(NotCachedError, match="set HF_HUB_OFFLINE=1 to use its copy in the local cache"):
        hub.resolve_commit("org/absent")
    with pytest.raises(NotCachedError, match="not in the local cache"):  # another revision
        hub.resolve_commit("org/absent", "v2")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # as the advice says
    assert hub.resolve_commit("org/absent") == "0" * 40


def test_an_id_not_in_the_offline_cache_is_found_where_the_advice_points(tmp_path, monkeypatch):
    """Offline, not cached: the advice names ``hf download ID``, HF_HOME or HF_HUB_CACHE, or a
    local directory; a cache that holds the model, named by HF_HUB_CACHE, then resolves it."""
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "empty"))
    with pytest.raises(NotCachedError) as err:
        hub.resolve_commit("org/model", "v1")
    assert "download it once online (hf download org/model --revision v1)" in str(err.value)
    assert "point HF_HOME or HF_HUB_CACHE at a cache that holds it" in str(err.value)
    scripts = {ep.name: ep.value for ep in metadata.entry_points(group="console_scripts")}
    assert scripts.get("hf", "").startswith("huggingface_hub")  # the command the advice names
    cache = tmp_path / "home" / "hub"
    repo = cache / "models--org--model"
    (repo / "snapshots" / ("a" * 40)).mkdir(parents=True)
    (repo / "snapshots" / ("a" * 40) / "config.json").write_text("{}")
    (repo / "refs").mkdir()
    (repo / "refs" / "v1").write_text("a" * 40)
    monkeypatch.setenv("HF_HUB_CACHE", str(cache))
    assert hub.resolve_commit("org/model", "v1") == "a" * 40
    monkeypatch.delenv("HF_HUB_CACHE")
    monkeypatch.delenv("HUGGINGFACE_HUB_CACHE", raising=False)
    monkeypatch.setenv("HF_HOME", str(cache.parent))
    assert hub.resolve_commit("org/model", "v1") == "a" * 40


def test_hub_cache_dir_follows_the_environment(tmp_path, monkeypatch):
    monkeypatch.delenv("HF_HUB_CACHE", raising=False)
    monkeypatch.delenv("HUGGINGFACE_HUB_CACHE", raising=False)
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    assert hub.hub_cache_dir() == tmp_path / "hub"
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "elsewhere"))
    assert hub.hub_cache_dir() == tmp_path / "elsewhere"


# ---------------------------------------------------------------- device and dtype

def test_device_rules(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    assert placement.resolve_device("auto") == "cpu"
    with pytest.raises(DeviceError, match="device 'cuda' asked for, but CUDA is not available"):
        placement.resolve_device("cuda", "model 'm'")
    with pytest.raises(DeviceError, match="unknown device 'gpu0'"):
        placement.resolve_device("gpu0")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    assert placement.resolve_device("auto") == "cuda"


def test_cuda_without_cuda_refused_before_loading(tiny_bert, monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(DeviceError, match=r"^model 'tiny': device 'cuda' asked for"):
        load_checkpoint(tiny_bert[0], "mlm", device="cuda", name="tiny")


def test_dtype_rules(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: True)
    assert placement.resolve_dtype("auto", "cpu", "llama") == torch.float32
    assert placement.resolve_dtype("auto", "cuda", "llama") == torch.bfloat16
    assert placement.resolve_dtype("auto", "cuda", "qwen2") == torch.bfloat16
    assert placement.resolve_dtype("auto", "cuda", "bert") == torch.float32
    assert placement.resolve_dtype("auto", "cuda", "gpt2") == torch.float32
    assert placement.resolve_dtype("auto", "cuda", "bert", stored="bfloat16") == torch.bfloat16
    assert placement.resolve_dtype("auto", "cpu", "bert", stored="float64") == torch.float64
    assert placement.resolve_dtype("auto", "cuda", "bert", stored="float64") == torch.float64
    assert placement.resolve_dtype("float32", "cpu", "bert", stored="float64") == torch.float32
    assert placement.resolve_dtype("bfloat16", "cpu") == torch.bfloat16
    assert placement.resolve_dtype(torch.float16, "cuda:0") == torch.float16
    with pytest.raises(DeviceError, match="float16 is supported on CUDA only, not on 'cpu'"):
        placement.resolve_dtype("float16", "cpu")
    with pytest.raises(DeviceError, match="unknown dtype 'int8'"):
        placement.resolve_dtype("int8", "cpu")
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: False)
    assert placement.resolve_dtype("auto", "cuda", "llama") == torch.float32


def test_loads_in_bfloat16_when_asked(tiny_bert):
    model, _tok, info = load_checkpoint(tiny_bert[0], "mlm", device="cpu", dtype="bfloat16")
    assert info.dtype == "bfloat16" and next(model.parameters()).dtype == torch.bfloat16


# ---------------------------------------------------------------- memory

def test_memory_estimate_counts_the_parameters(tiny_bert):
    folder, model = tiny_bert
    fmt, files = safety.weights_files(folder, "x")
    saved = {p.data_ptr(): p.numel() for p in model.state_dict().values()}  # tied stored once
    assert placement.estimate_weight_bytes(files, fmt, 4, None) == 4 * sum(saved.values())
    assert placement.estimate_weight_bytes(files, fmt, 2, None) == 2 * sum(saved.values())


def test_too_large_for_memory_is_refused(tiny_bert):
    with pytest.raises(MemoryBudgetError, match=r"^model 'tiny': needs about 0\.00 GiB on cpu .*"
                                                r"more than the memory limit of 0\.00 GiB; use a GPU"):
        load_checkpoint(tiny_bert[0], "mlm", device="cpu", memory_limit=10_000, name="tiny")
    *_, info = load_checkpoint(tiny_bert[0], "mlm", device="cpu", memory_limit=10**9)
    assert info.estimated_bytes > 10_000


def test_available_memory_falls_back_to_meminfo(monkeypatch):
    monkeypatch.setitem(sys.modules, "psutil", None)  # import fails
    free = placement.available_memory("cpu")
    assert 0 < free < 1 << 62


def test_memory_fraction_of_available(monkeypatch):
    monkeypatch.setattr(placement, "available_memory", lambda device: 1000)
    placement.check_memory(600, "cpu", "m", max_memory_fraction=0.8)  # 720 <= 800
    with pytest.raises(MemoryBudgetError, match="80% of the 0.00 GiB of available RAM"):
        placement.check_memory(700, "cpu", "m", max_memory_fraction=0.8)  # 840 > 800


# ---------------------------------------------------------------- the loading report rule

@pytest.fixture(scope="module")
def bert_models():
    from transformers import BertConfig, BertForMaskedLM, BertModel

    cfg = BertConfig(vocab_size=50, hidden_size=8, num_hidden_layers=1, num_attention_heads=2,
                     intermediate_size=16)
    return BertForMaskedLM(cfg), BertModel(cfg)


def _info(missing=(), unexpected=(), mismatched=()):
    return {"missing_keys": set(missing), "unexpected_keys": set(unexpected),
            "mismatched_keys": set(mismatched), "error_msgs": []}


def test_harmless_keys_pass(bert_models):
    mlm, enc = bert_models
    ok = _info(missing=["bert.embeddings.position_ids"],
               unexpected=["bert.pooler.dense.weight", "cls.seq_relationship.weight",
                           "bert.embeddings.position_ids", "model.rotary_emb.inv_freq",
                           "h.0.attn.bias"])
    report = check_loading_report(ok, "mlm", mlm, "m")
    assert "cls.seq_relationship.weight" in report["unexpected"]
    enc_ok = _info(missing=["pooler.dense.weight", "pooler.dense.bias"],
                   unexpected=["cls.predictions.bias", "lm_head.weight",
                               "discriminator_predictions.dense.weight", "sop_classifier.weight"])
    check_loading_report(enc_ok, "encoder", enc, "m")


@pytest.mark.parametrize("head,info,named", [
    ("mlm", _info(missing=["cls.predictions.transform.dense.weight"]), "not in the checkpoint"),
    ("mlm", _info(unexpected=["bert.encoder.layer.0.attention.self.Wqkv.weight"]), "would drop"),
    ("mlm", _info(unexpected=["discriminator_predictions.dense.weight"]), "would drop"),
    ("encoder", _info(missing=["encoder.layer.0.intermediate.dense.weight"]), "not in the checkpoint"),
    ("encoder", _info(unexpected=["embeddings.extra.weight"]), "would drop"),
    ("mlm", _info(mismatched=[("bert.embeddings.word_embeddings.weight", (60, 8), (50, 8))]),
     "of another shape: bert.embeddings.word_embeddings.weight (60, 8) vs (50, 8)"),
])
def test_weights_the_measure_uses_must_load(bert_models, head, info, named):
    model = bert_models[0] if head == "mlm" else bert_models[1]
    with pytest.raises(WeightsError, match=r"^m: loaded as Bert\w+ \(" + head) as err:
        check_loading_report(info, head, model, "m", ["BertForPreTraining"])
    assert named in str(err.value) and "\n" not in str(err.value)


def test_layer_numbers_are_folded_in_messages(bert_models):
    keys = [f"bert.encoder.layer.{i}.attention.self.query.weight" for i in range(12)]
    with pytest.raises(WeightsError, match=r"12 weight\(s\) not in the checkpoint \(would be "
                                           r"random\): bert\.encoder\.layer\.\*\.attention"):
        check_loading_report(_info(missing=keys), "mlm", bert_models[0], "m")


# ---------------------------------------------------------------- LoadInfo

def test_load_info_of_a_local_directory(tiny_bert):
    model, tok, info = load_checkpoint(tiny_bert[0], "mlm", device="auto")
    assert info.commit is None and info.weights_format == "safetensors"
    assert info.architecture == "BertForMaskedLM" and not model.training
    assert tok.is_fast and info.report["missing"] == []
    rec = info.to_record()
    assert rec["model_revision"] is None and rec["weights_format"] == "safetensors"
    assert hub.read_config(tiny_bert[0])["architectures"] == ["BertForMaskedLM"]


# ---------------------------------------------------------------- normalisers

def test_normalisers(monkeypatch):
    assert loading.get_normaliser(None) is None
    with pytest.raises(NormaliserError, match="unknown text normaliser 'nfc'; known: banglabert, "
                                              "banglabert-upstream"):
        loading.get_normaliser("nfc")
    monkeypatch.setitem(sys.modules, "normalizer", None)  # not installed
    assert loading.get_normaliser("banglabert")("অা") == "আ"  # this project's: no package needed
    with pytest.raises(NormaliserError, match=r"^model 'banglabert': text normaliser "
                                              r"'banglabert-upstream' .*not installed: pip install "
                                              r"git\+https://github.com/csebuetnlp/normalizer"):
        loading.get_normaliser("banglabert-upstream", model="banglabert")


def test_a_normaliser_package_of_another_kind_is_refused(monkeypatch):
    import types

    fake = types.ModuleType("normalizer")
    fake.normalize = lambda text: text
    monkeypatch.setitem(sys.modules, "normalizer", fake)
    with pytest.raises(NormaliserError, match="is not the csebuetnlp one"):
        loading.get_normaliser("banglabert-upstream")
    good = types.ModuleType("normalizer")
    good.normalize = lambda text, unicode_norm="NFKC": text.strip()
    monkeypatch.setitem(sys.modules, "normalizer", good)
    assert loading.get_normaliser("banglabert-upstream")(" x ") == "x"
    assert loading.get_normaliser("banglabert")(" x ") == " x "  # the name picks the implementation


# ---------------------------------------------------------------- registry keys

HEX = "a" * 40


def _registry(tmp_path, entry):
    path = tmp_path / "models.yaml"
    import yaml

    path.write_text(yaml.safe_dump({"models": {"m": {"kind": "mlm", "hub": "org/m", **entry}}}))
    return path


@pytest.mark.parametrize("entry,match", [
    ({"trust_remote_code": True}, "sets trust_remote_code but its revision None is not a pinned"),
    ({"trust_remote_code": True, "revision": "main"}, "revision 'main' is not a pinned 40-hex"),
    ({"trust_remote_code": "yes", "revision": HEX}, "trust_remote_code: 'yes'; expected true or false"),
    ({"allow_pickle": 1}, "allow_pickle: 1; expected true or false"),
    ({"revision": 123}, "revision 123; expected a branch, tag or 40-hex commit"),
    ({"normaliser": "bengali"}, "names text normaliser 'bengali'; known: banglabert"),
])
def test_registry_loading_keys_are_validated(tmp_path, entry, match):
    with pytest.raises(ModelError, match=match):
        models.load_registry(_registry(tmp_path, entry))


def test_registry_loading_options(tmp_path):
    reg = models.load_registry(_registry(tmp_path, {"trust_remote_code": True, "revision": HEX,
                                                    "normaliser": "banglabert"}))
    opts = models.loading_options("m", reg)
    assert opts == {"source": "org/m", "revision": HEX, "trust_remote_code": True,
                    "allow_pickle": False, "name": "m", "normaliser": "banglabert"}
    with pytest.raises(ModelError, match="neither 'hub' nor 'path'"):
        models.loading_options("t", {"t": {"kind": "mlm", "trained": {}}})
    assert models.load_registry()  # the project's registry passes the checks


def _dependencies() -> set[str]:
    """The distributions polybias depends on (pyproject.toml), which make env installs."""
    project = tomllib.loads((paths.project_root() / "pyproject.toml").read_text(encoding="utf-8"))
    return {re.match(r"[A-Za-z0-9_.-]+", d)[0].lower() for d in project["project"]["dependencies"]}


def test_a_tokenizer_needing_sentencepiece_names_the_packages_that_make_env_installs(tiny_bert, monkeypatch):
    """A tokenizer that fails for want of SentencePiece: the hint names the pip packages, both
    dependencies of the project; once they import, the same folder's tokenizer loads."""
    import transformers

    real = transformers.AutoTokenizer.from_pretrained

    def without_sentencepiece(*args, **kwargs):
        raise ImportError("LlamaTokenizer requires the SentencePiece library but it was not found")

    monkeypatch.setattr(transformers.AutoTokenizer, "from_pretrained", without_sentencepiece)
    with pytest.raises(CheckpointError, match="cannot load its tokenizer: .*SentencePiece") as err:
        load_checkpoint(tiny_bert[0], "mlm", device="cpu")
    packages = re.search(r"pip install ([a-z ]+);", str(err.value))[1].split()
    assert packages == ["sentencepiece", "protobuf"] and set(packages) <= _dependencies()
    for package in packages:
        assert metadata.version(package)  # installed here, as make env installs them
    monkeypatch.setattr(transformers.AutoTokenizer, "from_pretrained", real)
    _model, tokenizer, _info = load_checkpoint(tiny_bert[0], "mlm", device="cpu")
    assert tokenizer.is_fast


def test_the_banglabert_normaliser_without_ftfy_names_the_package_make_env_installs(monkeypatch):
    installed = sys.modules.get("ftfy") or __import__("ftfy")
    monkeypatch.setitem(sys.modules, "ftfy", None)  # as if not installed
    with pytest.raises(NormaliserError, match=r"needs the ftfy package \(pip install ftfy; make env installs it"):
        loading.get_normaliser("banglabert")
    assert "ftfy" in _dependencies()
    monkeypatch.setitem(sys.modules, "ftfy", installed)
    assert loading.get_normaliser("banglabert")("অা") == "আ"


def test_the_device_and_dtype_a_refusal_advises_are_ones_that_load(tiny_bert, monkeypatch):
    """No CUDA: ``device='cuda'`` advises ``'auto'`` or ``'cpu'``; an unknown dtype lists the
    valid ones; float16 on the CPU advises float32 or bfloat16. Each advised value loads."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(DeviceError) as err:
        load_checkpoint(tiny_bert[0], "mlm", device="cuda", name="tiny")
    devices = re.findall(r"'(\w+)'", str(err.value).rsplit("(use ", 1)[1])
    assert devices == ["auto", "cpu"]
    for device in devices:
        model, _, _ = load_checkpoint(tiny_bert[0], "mlm", device=device)
        assert next(model.parameters()).device.type == "cpu"
    with pytest.raises(DeviceError) as err:
        load_checkpoint(tiny_bert[0], "mlm", device="cpu", dtype="float17")
    dtypes = re.split(r", | or ", str(err.value).rsplit("(use ", 1)[1].rstrip(")"))
    assert dtypes == ["auto", "float32", "bfloat16", "float16"]
    with pytest.raises(DeviceError, match=r"float16 is supported on CUDA only, not on 'cpu' "
                                          r"\(use float32 or bfloat16\)"):
        load_checkpoint(tiny_bert[0], "mlm", device="cpu", dtype="float16")
    for dtype in ("auto", "float32", "bfloat16"):
        model, _, _ = load_checkpoint(tiny_bert[0], "mlm", device="cpu", dtype=dtype)
        assert next(model.parameters()).dtype == (torch.float32 if dtype == "auto" else getattr(torch, dtype))


def test_a_checkpoint_naming_no_architecture_is_loaded_with_the_kind_its_error_names(tiny_bert, tmp_path):
    """A config without ``architectures`` cannot say masked or causal: the error names
    ``kind='mlm' or 'causal'``, and the right one of them loads the model."""
    folder = tmp_path / "bert"
    shutil.copytree(tiny_bert[0], folder)
    config = json.loads((folder / "config.json").read_text())
    config.pop("architectures", None)
    (folder / "config.json").write_text(json.dumps(config))
    with pytest.raises(ModelError, match=r"cannot tell whether .* is a masked or causal LM "
                                         r"\(architectures: none\); pass kind='mlm' or 'causal'"):
        models.load(str(folder), device="cpu")
    lm = models.load(str(folder), "mlm", device="cpu")
    assert lm.kind == "mlm"
