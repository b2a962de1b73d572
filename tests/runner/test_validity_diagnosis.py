"""The SEAT/CEAT diagnosis of the validity study: the known-answer encoder, the per-layer
table, calibration at every size and the sample size the calibration verdict needs."""

import copy

import numpy as np
import pandas as pd
import pytest
from polybias.planted.static import corpus_association_embedding
from polybias.planted.synthetic import planted_corpus, planted_groups
from polybias.runner import validity_diagnosis
from polybias.studies import validity, validity_statistics
from scipy.stats import spearmanr

CONFIG = {"n_permutations": 500, "mlm": {"n_sentences": 1500},
          "sizes": {"seat_words": [8], "ceat_samples": [10]},
          "defaults": {"seat_words": 8, "ceat_samples": 10}}


def test_the_encoder_carries_the_corpus_association_of_each_target_word():
    groups = planted_groups("en")
    corpus = planted_corpus(3000, 0.8, seed=4, language="en")
    plain = corpus_association_embedding(corpus, groups, seed=4, gain=0.0)
    emb = corpus_association_embedding(corpus, groups, seed=4, gain=2.0)
    lean = {w: (emb.vectors[emb.index[w]] - plain.vectors[plain.index[w]])[0] / 2.0 for w in emb.words}
    male, female = groups["targets"]["male"], groups["targets"]["female"]
    # the share of career minus family co-occurrences is about 2p - 1 = 0.6 and 1 - 2p = -0.6
    assert np.mean([lean[w] for w in male]) == pytest.approx(0.6, abs=0.06)
    assert np.mean([lean[w] for w in female]) == pytest.approx(-0.6, abs=0.06)
    assert np.allclose([lean[w] for w in groups["attributes"]["career"]], 1.0, atol=1e-12)
    assert np.allclose([lean[w] for w in groups["attributes"]["family"]], -1.0, atol=1e-12)
    with pytest.raises(ValueError, match="gain"):
        corpus_association_embedding(corpus, groups, gain=-1.0)


@pytest.mark.parametrize("language", ["en", "hi"])
def test_seat_and_ceat_follow_the_planted_strength_on_the_known_answer_encoder(language):
    rows = pd.DataFrame([r for p in (0.1, 0.3, 0.5, 0.7, 0.9) for seed in (0, 1)
                         for r in validity_diagnosis.encoder_rows(language, p, seed, CONFIG)])
    assert set(rows["metric"]) == {"seat-effect-size", "ceat-ces", "ceat-ces-perm"}
    for metric, g in rows.groupby("metric"):
        rho = spearmanr(g["p"], g["value"]).statistic
        assert rho > 0.8, (metric, rho)
        strong = g[g["p"] == 0.9]
        assert (strong["value"] > 0).all() and (strong["pvalue"] < 0.05).all(), metric
        reverse = g[g["p"] == 0.1]
        assert (reverse["value"] < 0).all(), metric


def test_encoder_rows_are_deterministic():
    first = validity_diagnosis.encoder_rows("bn", 0.6, 3, CONFIG)
    assert first == validity_diagnosis.encoder_rows("bn", 0.6, 3, CONFIG)


def test_layer_table_tells_direction_from_strength():
    """Layer 1 follows the planted direction; layer 0 sees the planted strength with a
    sign that flips between seeds (what SEAT shows on the trained masked LMs)."""
    rows = []
    for layer in (0, 1, -1):
        for p in (0.1, 0.3, 0.5, 0.7, 0.9):
            for seed in (0, 1):
                flip = -1.0 if (layer == 0 and seed == 1) else 1.0
                value = flip * (p - 0.5) * 4 + 0.01 * seed
                rows.append({"language": "en", "family": "mlm", "measure": "embedding-mlm",
                             "metric": "kurita-effect-size" if layer < 0 else "seat-effect-size", "p": p, "seed": seed,
                             "size_axis": "words per set", "size": 8, "default": True,
                             "value": value, "null": 0.0, "layer": layer,
                             "pvalue": 0.01 if p != 0.5 else 0.5})
    table = validity.layer_table(pd.DataFrame(rows)).set_index("layer")
    assert table.loc["1", "agrees_with_output"] == 1.0 and table.loc["0", "agrees_with_output"] == 0.5
    assert list(table.index) == ["output", "0", "1"]
    assert table.loc["1", "rho"] > 0.9 and table.loc["1", "right_sign"] == 1.0
    assert table.loc["1", "detected"] == "8/8" and table.loc["1", "detected_wrong"] == "0/8"
    assert table.loc["0", "right_sign"] == 0.5 and table.loc["0", "detected_wrong"] == "4/8"
    assert abs(table.loc["0", "rho"]) < 0.3 and table.loc["0", "rho_abs"] > 0.8


def test_calibration_by_size_counts_every_size():
    f = pd.DataFrame({"language": "en", "measure": "m", "metric": ["a"] * 6 + ["b"] * 2,
                      "p": 0.5, "seed": [0, 1, 2, 0, 1, 2, 0, 1], "size_axis": "words",
                      "size": [5, 5, 5, 20, 20, 20, 5, 5], "default": True, "value": 0.0,
                      "null": 0.0, "pvalue": [0.01, 0.2, 0.3, 0.01, 0.02, 0.5, 0.01, 0.01]})
    t = validity.calibration_by_size(f, ["a"])
    assert t[["size", "n", "false_positives"]].values.tolist() == [[5, 3, 1], [20, 3, 2]]


def test_calibration_sample_size_is_the_first_n_that_decides():
    for k in range(4):
        n = validity_statistics.calibration_sample_size(k)
        assert validity_statistics.calibration_verdict(k, n)["verdict"] == "calibrated"
        assert validity_statistics.calibration_verdict(k, n - 1)["verdict"] != "calibrated"
    assert validity_statistics.calibration_verdict(0, 40)["fpr_high"] == pytest.approx(0.0881, abs=1e-4)


def test_layer_rows_run_every_layer_of_a_tiny_planted_mlm(tmp_path, monkeypatch, torch_one_thread):
    monkeypatch.setenv("POLYBIAS_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("POLYBIAS_PLANTED", "auto")
    cfg = copy.deepcopy(CONFIG)
    cfg["n_permutations"] = 100
    from polybias.studies import validity_designs as v

    monkeypatch.setitem(v.LM_TRAINING, "mlm", {"epochs": 1, "batch_size": 64})
    rows = pd.DataFrame(validity_diagnosis.layer_rows(0.9, cfg, "en", seed=0, n_sentences=300))
    assert sorted(set(rows["layer"])) == [-1, 0, 1, 2]
    assert set(rows[rows["layer"] >= 0]["metric"]) == {"seat-effect-size", "ceat-ces", "ceat-ces-perm"}
    assert rows[rows["layer"] == -1]["metric"].tolist() == ["kurita-effect-size"]
    assert rows["value"].notna().all()


def test_the_diagnosis_runs_through_the_one_runner(tmp_path, monkeypatch, capsys):
    """``polybias sweep`` on a ``kind: validity-diagnosis`` YAML (a small encoder grid, no
    probed models): one record per encoder, ``encoder.csv`` written in plan order with the
    validity summary's columns and the rows :func:`encoder_rows` gives, ``layers.csv`` left
    unwritten and said so; rerun, nothing is redone."""
    import yaml
    from polybias.runner import sweep, validity_sweep

    monkeypatch.setattr(validity_diagnosis, "ENCODER", {**validity_diagnosis.ENCODER, "ps": [0.1, 0.9],
                                                        "models_per_strength": 1, "null_models": 1})
    monkeypatch.setattr(validity_diagnosis, "LAYERS", [])
    scoring = {**copy.deepcopy(CONFIG), "kind": "validity", "records_dir": "r", "summary_dir": "s",
               "blocks": [{"language": "en", "family": "word2vec", "ps": [0.5], "models_per_strength": 1,
                           "null_models": 1}], "alpha": 0.05, "word2vec": {"n_sentences": 100},
               "causal": {"n_sentences": 100}}
    scoring["mlm"] = {"n_sentences": 600}
    (tmp_path / "validity.yaml").write_text(yaml.safe_dump(scoring))
    config = {"kind": "validity-diagnosis", "validity": str(tmp_path / "validity.yaml"),
              "records_dir": str(tmp_path / "records"), "summary_dir": str(tmp_path / "summary")}
    path = tmp_path / "diagnosis.yaml"
    path.write_text(yaml.safe_dump(config))
    keys = [u.key for u in sweep.load_sweep(path)]
    assert keys == [f"encoder/{lang}-p{p}-s0" for lang in ("en", "bn", "hi") for p in ("0.1", "0.9", "0.5")]
    assert sweep.main([str(path), "--jobs", "1", "--no-progress", "--only", "encoder/hi"]) == 1
    assert "records missing or stale in every part" in capsys.readouterr().err
    assert sweep.main([str(path), "--jobs", "1", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "sweep: 6 ran, 3 skipped" in out and "layers.csv not written" in out
    frame = validity_diagnosis.read_frame(tmp_path / "summary", validity_diagnosis.ENCODER_FILE)
    assert frame.columns.tolist() == validity_sweep.COLUMNS and len(frame) == 9 * 3  # SEAT, CEAT, its perm. p
    grid = validity_diagnosis.ENCODER
    direct = validity_diagnosis.encoder_rows("bn", 0.9, 0, validity_sweep.check_config(scoring), grid["dim"],
                                             grid["gain"], grid["context_weight"])
    got = frame[(frame["language"] == "bn") & (frame["p"] == 0.9)]
    assert np.allclose(got["value"], [r["value"] for r in direct], rtol=1e-5)
    assert sweep.main([str(path), "--jobs", "1", "--no-progress"]) == 0
    assert "sweep: 0 ran, 9 skipped" in capsys.readouterr().out
