"""WEAT over a registered model with run records (polybias.studies.weat)."""

import json

import pandas as pd
import pytest
from polybias import paths
from polybias.engines.static import MissingWordsError
from polybias.studies.weat import run_weat


def test_run_weat_writes_one_deterministic_record_per_test(tmp_path, monkeypatch):
    out = tmp_path / "records"
    rel = out.relative_to(paths.project_root()) if out.is_relative_to(paths.project_root()) else out
    frame = run_weat("w2v-gnews", "en", ["WEAT6", "WEAT7"], output_dir=str(rel), n_permutations=100)
    assert isinstance(frame, pd.DataFrame) and list(frame.test) == ["WEAT6", "WEAT7"]
    files = sorted(out.glob("*.json"))
    assert [f.name for f in files] == ["weat_m-w2v-gnews_l-en_t-weat6.json", "weat_m-w2v-gnews_l-en_t-weat7.json"]
    rec = json.loads(files[0].read_text())
    # the one record shape: a measure_record of the registered weat measure
    assert rec["metric"] == "weat" and rec["values"]["value"] == pytest.approx(frame.effect_size[0])
    assert rec["values"]["p_value"] == pytest.approx(frame.pvalue[0]) and rec["values"]["interval"] is None
    assert rec["parameters"]["n_permutations"] == 100 and rec["parameters"]["dropped_words"] == {}
    assert rec["model_revision"] and rec["params_hash"] and rec["data_sha256"]
    first = files[0].read_bytes()
    run_weat("w2v-gnews", "en", ["WEAT6"], output_dir=str(rel), n_permutations=100)
    assert files[0].read_bytes() == first


def test_run_weat_missing_word_writes_no_record(tmp_path):
    with pytest.raises(MissingWordsError, match="axe"):
        run_weat("w2v-gnews", "en", ["WEAT1", "WEAT2"], on_missing="raise", output_dir=str(tmp_path))
    assert list(tmp_path.iterdir()) == []


def test_run_weat_unknown_test():
    with pytest.raises(KeyError, match="WEAT99"):
        run_weat("w2v-gnews", "en", ["WEAT99"])


@pytest.mark.parametrize("kwargs, message", [
    ({"ddof": 2}, "ddof"), ({"alternative": "up"}, "alternative"), ({"n_permutations": 0}, "n_permutations"),
    ({"on_missing": "ignore"}, "on_missing"), ({"seed": 1.5}, "seed"),
])
def test_run_weat_rejects_bad_options_before_work(kwargs, message, tmp_path):
    with pytest.raises(ValueError, match=message):
        run_weat("no-such-model", "en", output_dir=str(tmp_path), **kwargs)
    assert list(tmp_path.iterdir()) == []


def test_run_weat_takes_one_test_name_as_a_string(w2v):
    from polybias.studies.weat import run_weat

    frame = run_weat("w2v-gnews", "en", "WEAT7", embeddings=w2v, n_permutations=100)
    assert frame["test"].tolist() == ["WEAT7"]


def test_variants_sit_beside_the_published_value_of_their_base_test(w2v):
    from polybias.results.report import load_reported
    from polybias.studies.weat import run_variants

    plain = run_variants("w2v-gnews", "en", "weat_variants.yaml", embeddings=w2v, n_permutations=100)
    beside = run_variants("w2v-gnews", "en", "weat_variants.yaml", embeddings=w2v, n_permutations=100,
                          reported="caliskan2017_weat")
    assert "reported" not in plain.columns and "base" not in beside.columns
    assert beside["test"].tolist() == plain["test"].tolist()
    published = load_reported("caliskan2017_weat", model="w2v-gnews").set_index("test").effect_size
    for test, value in zip(beside["test"], beside["reported"], strict=True):
        assert value == published[test.split("-")[0]]
    assert run_variants("w2v-gnews", "en", "no_such_variants.yaml", embeddings=w2v) is None
    assert run_variants("w2v-gnews", "en", "", embeddings=w2v) is None


def test_static_table_in_place_of_the_registered_model(tmp_path):
    import unicodedata

    from polybias import models
    from polybias.planted import static as planted_static

    planted = models.load(planted_static.NAME, "static",
                          planted=models.Planted(language="hi", strength=0.5))
    assert planted.name == planted_static.NAME and len(planted.words) > 0
    path = tmp_path / "toy.txt"
    decomposed = unicodedata.normalize("NFD", "café")
    path.write_text(f"2 2\n{decomposed} 1.0 0.0\nhe 0.0 1.0\n", encoding="utf-8")
    table = models.load(str(path), "static", format="word2vec-text", name="toy", nfc=True)
    assert table.name == "toy" and "café" in table.index  # NFC, as the word lists are
    assert "café" not in models.load(str(path), "static", format="word2vec-text").index
