"""Model zoo: every family of the studies loads with the right head, or is refused with the
documented reason; the same weights give the same scores from safetensors and from .bin;
a hub id resolves from an offline cache laid out like the hub, with its commit."""

from __future__ import annotations

import json
import shutil

import pytest
import torch
import zoo
from polybias.engines import embeddings, scoring
from polybias.models.errors import NotCachedError, PickleError, RemoteCodeError
from polybias.models.loading import load_checkpoint

#: (stand-in, head) → "loads" or the LoadError subclass that refuses it (both formats).
EXPECTED = {
    ("bert-uncased", "mlm"): "loads", ("bert-uncased", "encoder"): "loads",
    ("bert-cased", "mlm"): "loads", ("bert-cased", "encoder"): "loads",
    ("albert", "mlm"): "loads", ("albert", "encoder"): "loads",
    ("xlm-roberta", "mlm"): "loads", ("xlm-roberta", "encoder"): "loads",
    ("roberta", "mlm"): "loads", ("roberta", "encoder"): "loads",
    ("electra-generator", "mlm"): "loads", ("electra-generator", "encoder"): "loads",
    ("electra-discriminator", "mlm"): "WeightsError",
    ("electra-discriminator", "encoder"): "loads",
    ("gpt2", "causal"): "loads", ("llama", "causal"): "loads", ("qwen2", "causal"): "loads",
    ("mpt", "causal"): "loads",
    ("mpt-learned-positions", "causal"): "WeightsError",
    ("mpt-remote-code", "causal"): "RemoteCodeError",
    ("mosaicbert-as-bert", "mlm"): "WeightsError",
    ("mosaicbert-remote-code", "mlm"): "RemoteCodeError",
    ("bert-bin-with-objects", "mlm"): "PickleError",
}

#: What each refusal's message must name.
NAMED = {
    "electra-discriminator": ["ELECTRA discriminator", "generator_predictions.dense.weight",
                              "discriminator_predictions.dense.weight"],
    "mpt-learned-positions": ["transformer.wpe.weight", "would drop"],
    "mpt-remote-code": ["repository code is refused", "modeling_mpt.MPTForCausalLM",
                        "tokenization_SEA_BPE.SEABPETokenizer", "trust_remote_code=True"],
    "mosaicbert-as-bert": ["attention.self.query.weight", "Wqkv", "not in the checkpoint"],
    "mosaicbert-remote-code": ["bert_layers.BertForMaskedLM"],
    "bert-bin-with-objects": ["allow_pickle=True", "pytorch_model.bin"],
}

SENTENCE = "The doctor said that she would be late."


@pytest.fixture(scope="module")
def zoo_dir(tmp_path_factory, torch_one_thread):
    return tmp_path_factory.mktemp("zoo")


@pytest.fixture(scope="module")
def outcomes(zoo_dir):
    return zoo.run_zoo(zoo_dir)


def test_every_family_loads_or_is_refused_as_documented(outcomes):
    got = {}
    for o in outcomes:
        got.setdefault((o.family, o.head), set()).add(o.error or "loads")
    assert set(got) == set(EXPECTED)
    wrong = {k: (EXPECTED[k], v) for k, v in got.items() if v != {EXPECTED[k]}}
    assert not wrong, wrong
    for o in outcomes:
        if not o.ok:
            assert "\n" not in o.message and o.message.startswith(f"model {o.family!r}: ")
            for part in NAMED[o.family]:
                assert part in o.message, (o.family, part, o.message)


def test_table_lists_every_case(outcomes):
    text = zoo.table(outcomes)
    assert text.count("\n") == len(EXPECTED) + 1
    assert "| electra-discriminator | BanglaBERT, google/electra-base-discriminator | mlm | " \
           "refused (discriminator has no MLM head) | refused (discriminator has no MLM head) |" in text
    assert "| albert | albert-xxlarge-v2 | mlm | loads | loads |" in text


def _score(folder, head, name):
    model, tok, info = load_checkpoint(folder, head, device="cpu", name=name)
    assert tok.is_fast and info.device == "cpu" and info.dtype == "float32"
    if head == "encoder":
        enc = embeddings.wrap_encoder(model, tok, name=name)
        batch = tok([SENTENCE], return_tensors="pt")
        with torch.no_grad():
            return enc.model(**batch).last_hidden_state.double().sum().item(), info
    lm = scoring.wrap_language_model(model, tok, name=name, kind=head)
    fn = scoring.pseudo_log_likelihood if head == "mlm" else scoring.sentence_log_likelihood
    return float(fn(lm, [SENTENCE], progress=False)[0]), info


@pytest.mark.parametrize("family,head", sorted(k for k, v in EXPECTED.items() if v == "loads"))
def test_loaded_weights_are_the_checkpoints(outcomes, zoo_dir, family, head):
    """Two loads and the two weight formats give the same scores: nothing is random."""
    st, st_info = _score(zoo_dir / f"{family}-safetensors", head, family)
    st2, _ = _score(zoo_dir / f"{family}-safetensors", head, family)
    pt, pt_info = _score(zoo_dir / f"{family}-bin", head, family)
    assert st == st2 == pt and torch.isfinite(torch.tensor(st))
    assert (st_info.weights_format, pt_info.weights_format) == ("safetensors", "bin")
    assert st_info.commit is None and st_info.head == head


def test_sentencepiece_tokenizers_load_from_model_files(outcomes, zoo_dir):
    for family, head, files in (("albert", "mlm", "spiece.model"),
                                ("xlm-roberta", "mlm", "sentencepiece.bpe.model"),
                                ("llama", "causal", "tokenizer.model")):
        folder = zoo_dir / f"{family}-bin"
        assert (folder / files).is_file() and not (folder / "tokenizer.json").exists()
        _model, tok, _ = load_checkpoint(folder, head, device="cpu")
        ids = tok(SENTENCE)["input_ids"]
        assert tok.unk_token_id not in ids[1:-1] or family == "albert", (family, ids)
        if head == "mlm":
            assert tok.mask_token_id is not None


def test_pickle_beyond_tensors_is_opt_in(outcomes, zoo_dir):
    folder = zoo_dir / "bert-bin-with-objects-bin"
    with pytest.raises(PickleError, match="allow_pickle=True"):
        load_checkpoint(folder, "mlm", device="cpu")
    _model, _tok, info = load_checkpoint(folder, "mlm", device="cpu", allow_pickle=True)
    assert info.report["dropped_non_tensors"] == ["training_args"]


# ---------------------------------------------------------------- offline hub cache

SHA = "0123456789abcdef0123456789abcdef01234567"


def _hub_cache(root, repo_id, source, sha=SHA, ref="main"):
    repo = root / "hub" / ("models--" + repo_id.replace("/", "--"))
    shutil.copytree(source, repo / "snapshots" / sha)
    (repo / "refs").mkdir(parents=True, exist_ok=True)
    (repo / "refs" / ref).write_text(sha)
    return repo


@pytest.fixture
def offline_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    return tmp_path


def test_hub_id_loads_from_offline_cache_with_its_commit(outcomes, zoo_dir, offline_cache):
    _hub_cache(offline_cache, "nlpaueb/bert-base-greek-uncased-v1", zoo_dir / "bert-uncased-bin")
    model, _tok, info = load_checkpoint("nlpaueb/bert-base-greek-uncased-v1", "mlm", device="cpu")
    assert info.commit == SHA and info.weights_format == "bin"
    assert info.to_record()["model_revision"] == SHA
    assert type(model).__name__ == "BertForMaskedLM"
    _m, _t, pinned = load_checkpoint("nlpaueb/bert-base-greek-uncased-v1", "encoder",
                                     revision=SHA, device="cpu")
    assert pinned.commit == SHA
    with pytest.raises(NotCachedError, match=r"has no revision 'v2' in the offline"):
        load_checkpoint("nlpaueb/bert-base-greek-uncased-v1", "mlm", revision="v2", device="cpu")
    with pytest.raises(NotCachedError, match=r"^model 'org/absent' is not in the offline Hugging "
                                             r"Face cache .*hf download org/absent"):
        load_checkpoint("org/absent", "mlm", device="cpu")


# ---------------------------------------------------------------- repository code

_CONFIG_CODE = '''from transformers import BertConfig


class TinyCodeConfig(BertConfig):
    model_type = "tiny-code-bert"
'''
_MODEL_CODE = '''from transformers import BertForMaskedLM

from .configuration_tiny import TinyCodeConfig


class TinyCodeForMaskedLM(BertForMaskedLM):
    config_class = TinyCodeConfig
'''


def test_remote_code_needs_a_pinned_snapshot(outcomes, zoo_dir, offline_cache, monkeypatch):
    import transformers.dynamic_module_utils as dmu

    monkeypatch.setattr(dmu, "HF_MODULES_CACHE", str(offline_cache / "modules"))
    repo = _hub_cache(offline_cache, "org/tiny-code", zoo_dir / "bert-cased-safetensors")
    snap = repo / "snapshots" / SHA
    (snap / "configuration_tiny.py").write_text(_CONFIG_CODE)
    (snap / "modeling_tiny.py").write_text(_MODEL_CODE)
    cfg = json.loads((snap / "config.json").read_text())
    cfg.update(model_type="tiny-code-bert", architectures=["TinyCodeForMaskedLM"],
               auto_map={"AutoConfig": "configuration_tiny.TinyCodeConfig",
                         "AutoModelForMaskedLM": "modeling_tiny.TinyCodeForMaskedLM"})
    (snap / "config.json").write_text(json.dumps(cfg))

    with pytest.raises(RemoteCodeError, match=r"^model 'org/tiny-code': needs code from its "
                                              r"repository .*model_type 'tiny-code-bert'"):
        load_checkpoint("org/tiny-code", "mlm", device="cpu")
    with pytest.raises(RemoteCodeError, match="needs a pinned 40-hex commit revision, got 'main'"):
        load_checkpoint("org/tiny-code", "mlm", revision="main", trust_remote_code=True, device="cpu")
    with pytest.raises(RemoteCodeError, match="not a hub snapshot"):
        load_checkpoint(zoo_dir / "bert-cased-safetensors", "mlm", revision=SHA,
                        trust_remote_code=True, device="cpu")
    model, _tok, info = load_checkpoint("org/tiny-code", "mlm", revision=SHA,
                                        trust_remote_code=True, device="cpu")
    assert type(model).__name__ == "TinyCodeForMaskedLM"
    assert info.trust_remote_code and info.commit == SHA
    assert info.to_record()["trust_remote_code"] is True
