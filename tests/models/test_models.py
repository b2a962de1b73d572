import tomllib

import numpy as np
import pytest
from polybias import models, paths
from polybias.data import sources
from polybias.engines import static
from polybias.models import ModelError

VECS = {"king": [1.0, 2.0, 3.0], "queen": [0.5, -1.0, 2.5], "New York": [0.0, 0.25, -4.0]}


def write_text(path, header, sep_words=False):
    lines = [f"{len(VECS)} 3"] if header else []
    lines += [f"{w} " + " ".join(map(str, v)) for w, v in VECS.items()]
    path.write_text("\n".join(lines) + "\n")
    return path


def test_word2vec_text_with_header(tmp_path):
    emb = models.load(write_text(tmp_path / "v.txt", header=True), "static", format="word2vec-text")
    assert emb.words == list(VECS) and emb.dim == 3
    np.testing.assert_array_equal(emb.vectors[1], np.float32(VECS["queen"]))
    assert emb.revision and len(emb.revision) == 64


def test_glove_text_without_header_and_spaces_in_words(tmp_path):
    emb = models.load(write_text(tmp_path / "glove.txt", header=False), "static", format="glove-text", limit=10)
    assert "New York" in emb and emb.vectors.shape == (3, 3)


def test_word2vec_binary_roundtrip(tmp_path):
    path = tmp_path / "v.bin"
    with open(path, "wb") as fh:
        fh.write(b"3 3\n")
        for w, v in VECS.items():
            fh.write(w.replace(" ", "_").encode() + b" " + np.asarray(v, "<f4").tobytes() + b"\n")
    emb = models.load(path, "static")
    assert emb.words == ["king", "queen", "New_York"]
    np.testing.assert_array_equal(emb.vectors, np.float32(list(VECS.values())))
    assert len(models.load(path, "static", limit=2)) == 2


def test_truncated_binary_is_an_error(tmp_path):
    path = tmp_path / "v.bin"
    path.write_bytes(b"2 3\nking " + np.zeros(2, "<f4").tobytes())
    with pytest.raises(ModelError, match="truncated"):
        models.load(path, "static")


def test_malformed_text_is_an_error(tmp_path):
    path = tmp_path / "v.txt"
    path.write_text("2 3\nking 1 2 3\nqueen 1 x 3\n")
    with pytest.raises(ModelError, match=r"v.txt:3"):
        models.load(path, "static", format="word2vec-text")


def test_pickle_formats_need_opt_in(tmp_path):
    path = tmp_path / "m.kv"
    path.write_bytes(b"not really")
    with pytest.raises(ModelError, match="allow_pickle=True"):
        models.load(path, "static")


def test_unknown_model_and_format(tmp_path):
    with pytest.raises(ModelError, match="unknown model 'gpt-17'.*w2v-gnews"):
        models.load("gpt-17", "static")
    with pytest.raises(ModelError, match="unknown static format"):
        models.load(write_text(tmp_path / "v.txt", True), "static", format="fasttext-zip")
    with pytest.raises(ModelError, match="not found"):
        models.load(tmp_path / "absent.txt", "static")


def test_malformed_model_registry(tmp_path):
    bad = tmp_path / "models.yaml"
    bad.write_text("models:\n  x: [1, 2\n")
    with pytest.raises(ModelError, match="malformed YAML"):
        models.load_registry(bad)
    bad.write_text("models:\n  x: {format: word2vec-text}\n")
    with pytest.raises(ModelError, match="'kind'"):
        models.load_registry(bad)


def test_path_model_with_unset_variable(monkeypatch):
    monkeypatch.delenv("POLYBIAS_MODELS", raising=False)
    with pytest.raises(ModelError, match="unset environment variable"):
        models.load("glove-840b", "static")


def test_embedded_w2v_gnews(w2v):
    assert len(w2v) > 13_000 and w2v.dim == 300 and w2v.vectors.dtype == np.float32
    assert w2v.revision == sources.get_source("wefe-wheel").sha256
    # real word2vec: semantically close words are closer than unrelated ones
    v = {w: w2v.vectors[w2v.index[w]] for w in ("king", "queen", "tulip")}
    cos = lambda a, b: a @ b / np.linalg.norm(a) / np.linalg.norm(b)  # noqa: E731
    assert cos(v["king"], v["queen"]) > cos(v["king"], v["tulip"]) + 0.3


def test_lookup_modes(w2v):
    with pytest.raises(static.MissingWordsError, match="axe"):
        static.lookup(w2v, ["gun", "axe"])
    m, kept, dropped = static.lookup(w2v, ["gun", "axe"], on_missing="drop")
    assert m.shape == (1, 300) and kept == ["gun"] and dropped == ["axe"]
    with pytest.raises(ValueError, match="on_missing"):
        static.lookup(w2v, ["gun"], on_missing="ignore")


def test_load_lm_rejects_non_language_models():
    with pytest.raises(ModelError, match="not a language model"):
        models.load("w2v-gnews", "lm")
    with pytest.raises(ModelError, match="unknown model"):
        models.load("no-such-lm", "lm")


# ------------------------------------------------------------- strict text embeddings

TWELVE = [f"w{i} " + " ".join(str(i + k / 10) for k in range(3)) for i in range(12)]


def files_under(folder):
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*"))


@pytest.mark.parametrize("lines, message", [
    # truncated at a line boundary: 5 of the 12 rows the header declares
    (["12 3", *TWELVE[:5]],
     r"v.txt: the header \(line 1: '12 3'\) declares 12 vectors, but the file ends after 5 "
     r"\(line 6\): truncated\?"),
    # truncated inside a row
    (["12 3", *TWELVE[:11], "w11 11.0 11."],
     r"v.txt:13: expected a word and 3 numbers \(the header declares dimension 3\), found 2"),
    (["12 3", *TWELVE, "w12 1 2 3"], r"v.txt:14: a vector beyond the 12 that the header \(line 1: '12 3'\)"),
    (["12 3", *TWELVE[:4], "w4 1 2 3 4", *TWELVE[5:]],
     r"v.txt:6: expected a word and 3 numbers \(the header declares dimension 3\), found 4"),
    (["12 0", *TWELVE], r"v.txt:1: header declares 12 vectors of dimension 0"),
])
def test_word2vec_text_is_checked_against_its_header(tmp_path, monkeypatch, lines, message):
    monkeypatch.setenv("POLYBIAS_CACHE", str(tmp_path / "cache"))
    path = tmp_path / "v.txt"
    path.write_text("\n".join(lines) + "\n")
    before = files_under(tmp_path)
    with pytest.raises(ModelError, match=message):
        models.load(path, "static", format="word2vec-text")
    assert files_under(tmp_path) == before  # nothing written, no cache


def test_word2vec_text_header_and_limit(tmp_path):
    path = tmp_path / "v.txt"
    path.write_text("\n".join(["12 3", *TWELVE]) + "\n")
    assert len(models.load(path, "static", format="word2vec-text")) == 12
    assert len(models.load(path, "static", format="word2vec-text", limit=5)) == 5  # the first 5 rows only
    path.write_text("\n".join(["12 3", *TWELVE[:5]]) + "\n")
    assert len(models.load(path, "static", format="word2vec-text", limit=5)) == 5
    with pytest.raises(ModelError, match="declares 12 vectors, but the file ends after 5"):
        models.load(path, "static", format="word2vec-text", limit=6)


def test_model_path_directory_or_missing(tmp_path, monkeypatch):
    monkeypatch.setenv("POLYBIAS_CACHE", str(tmp_path / "cache"))
    folder = tmp_path / "vectors"
    folder.mkdir()
    with pytest.raises(ModelError, match=r"embedding path is a directory, not a file: .*vectors; "
                                         r"expected one embedding file in one of the formats "
                                         r"word2vec-text, word2vec-binary, glove-text, gensim-kv"):
        models.load(folder, "static")
    with pytest.raises(ModelError, match=r"^embedding file not found: .*absent.vec$"):
        models.load(tmp_path / "absent.vec", "static")
    registry = {"dir": {"kind": "static", "path": str(folder), "format": "word2vec-text"}}
    with pytest.raises(ModelError, match="is a directory"):
        models.load("dir", "static", registry=registry)
    assert files_under(tmp_path) == ["vectors"]


def test_a_model_run_on_a_language_it_is_not_registered_for_is_an_error():
    models.check_language("minilm-l6", "en")
    models.check_language("xlm-roberta-large", "hi")  # multi
    with pytest.raises(models.ModelError, match=r"'minilm-l6' is registered for languages \[en\], not 'hi'.*"
                                                r"language_override=True"):
        models.check_language("minilm-l6", "hi")
    models.check_language("minilm-l6", "hi", override=True)


# ------------------------------------------------------------- user registry, model by path

def test_user_registry_file_is_merged_over_the_tracked_one(tmp_path, monkeypatch):
    user = tmp_path / "my_models.yaml"
    user.write_text(
        "models:\n"
        "  my-greek:\n    kind: mlm\n    hub: nlpaueb/bert-base-greek-uncased-v1\n"
        "    revision: main\n    languages: [el]\n"
        "  gpt2:\n    kind: causal\n    path: /models/my-gpt2\n    allow_pickle: true\n",
        encoding="utf-8")
    tracked = models.load_registry()
    monkeypatch.setenv(models.USER_REGISTRY_ENV, str(user))
    merged = models.load_registry()
    assert set(merged) == set(tracked) | {"my-greek"}
    assert merged["gpt2"] == {"kind": "causal", "path": "/models/my-gpt2", "allow_pickle": True}
    assert merged["planted-mlm"] == tracked["planted-mlm"]
    opts = models.loading_options("my-greek")
    assert opts["source"] == "nlpaueb/bert-base-greek-uncased-v1" and opts["revision"] == "main"
    models.check_language("my-greek", "el")
    with pytest.raises(ModelError, match="not 'en'"):
        models.check_language("my-greek", "en")
    # validated as the tracked file: remote code needs a pinned commit
    user.write_text("models:\n  bad:\n    kind: mlm\n    hub: org/bad\n"
                    "    trust_remote_code: true\n", encoding="utf-8")
    with pytest.raises(ModelError, match="my_models.yaml: model 'bad' sets trust_remote_code"):
        models.load_registry()
    user.write_text("models:\n  nokind:\n    hub: org/x\n", encoding="utf-8")
    with pytest.raises(ModelError, match="must be a mapping with a 'kind'"):
        models.load_registry()
    monkeypatch.setenv(models.USER_REGISTRY_ENV, str(tmp_path / "absent.yaml"))
    with pytest.raises(ModelError, match="no such model registry file"):
        models.load_registry()


def test_resolve_model_names_paths_and_hub_ids(tmp_path):
    reg = {"m": {"kind": "mlm", "hub": "org/m"}}
    assert models.resolve_model("m", reg) == ("m", reg["m"])
    assert models.resolve_model(str(tmp_path), reg) == (str(tmp_path), {"path": str(tmp_path)})
    assert models.resolve_model("org/name", reg) == ("org/name", {"hub": "org/name"})
    with pytest.raises(ModelError, match="unknown model 'nothing'.*registered models: m"):
        models.resolve_model("nothing", reg)
    (tmp_path / "f.txt").write_text("x")
    with pytest.raises(ModelError, match="a file, not a model directory"):
        models.resolve_model(str(tmp_path / "f.txt"), reg)
    models.check_language(str(tmp_path), "el", registry=reg)  # nothing registered to check


def test_load_lm_and_load_encoder_take_a_directory(tmp_path, monkeypatch):
    from polybias.planted.tiny_models import build_tiny_model

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    model, tok = build_tiny_model("bert")
    model.save_pretrained(tmp_path)
    tok.save_pretrained(tmp_path)
    lm = models.load(str(tmp_path), "lm", device="cpu", dtype="float32")
    assert lm.kind == "mlm" and lm.name == str(tmp_path) and lm.load_info.weights_format == "safetensors"
    enc = models.load(str(tmp_path), "encoder", device="cpu")
    assert enc.load_info.head == "encoder" and enc.device == "cpu"
    assert lm.batch_tokens == enc.batch_tokens == 8192  # auto on the CPU
    lm = models.load(str(tmp_path), "lm", device="cpu", batch_tokens=96)
    enc = models.load(str(tmp_path), "encoder", device="cpu", batch_tokens=96)
    assert lm.batch_tokens == enc.batch_tokens == 96
    texts = ["the nurse said hello .", "he is an engineer ."]
    from polybias.engines import scoring

    np.testing.assert_allclose(scoring.pseudo_log_likelihood(lm, texts),  # budget 96 batches
                               scoring.pseudo_log_likelihood(lm, texts, batch_tokens=8192),
                               atol=1e-5)
    assert models.load("planted-mlm-control", "lm", batch_tokens=64).batch_tokens == 64
    with pytest.raises(ModelError, match="batch_tokens must be a positive integer"):
        models.load("planted-mlm-control", "lm", batch_tokens=-1)
    with pytest.raises(ModelError, match="planted model"):
        models.load("planted-mlm", "lm", dtype="float32")
    with pytest.raises(models.ModelError, match="not in the offline Hugging Face cache"):
        models.load("no-org/no-model", "encoder")


def test_static_model_by_path_or_name(tmp_path):
    f = tmp_path / "tiny.txt"
    f.write_text("2 3\nनर 1 0 0\nनारी 0 1 0\n", encoding="utf-8")
    emb = models.load(str(f), "static", format="word2vec-text")
    assert emb.words == ["नर", "नारी"] and emb.dim == 3 and emb.name == "tiny"
    with pytest.raises(models.ModelError, match="unknown model"):
        models.load("no-such-model", "static")


def test_a_model_package_not_installed_names_the_pip_install_that_makes_it_load():
    """An entry whose package is absent: ``pip install PACKAGE``, naming the distribution; the
    registered embedded encoder's package is a dependency of the project (make env installs
    it), and the same entry with it installed loads."""
    entry = dict(models.load_registry()["minilm-l6"])
    absent = {"m": dict(entry, package="polybias-test-absent-package")}
    with pytest.raises(ModelError, match=r"package 'polybias-test-absent-package' is not installed "
                                         r"\(pip install polybias-test-absent-package\)"):
        models.load("m", kind="encoder", registry=absent)
    project = tomllib.loads((paths.project_root() / "pyproject.toml").read_text(encoding="utf-8"))
    assert any(dep.split("==")[0] == entry["package"] for dep in project["project"]["dependencies"])
    loaded = models.load("m", kind="encoder", registry={"m": entry})
    assert entry["package"] in loaded.revision
