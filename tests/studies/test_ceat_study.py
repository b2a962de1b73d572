"""CEAT segment-length study over planted corpora with records (polybias.studies.ceat)."""

import numpy as np
import pytest
from polybias.data.wordlists import AssociationTest, WordSet
from polybias.results import table as results


def _planted_tests(p_words):
    from polybias.planted.synthetic import planted_groups

    g = planted_groups("en")
    sets = {"X": g["targets"]["male"][:p_words], "Y": g["targets"]["female"][:p_words],
            "A": g["attributes"]["career"][:p_words], "B": g["attributes"]["family"][:p_words]}
    test = AssociationTest("C5", language="en", **{
        k: WordSet(k, tuple(v), "language-specific", "synthetic") for k, v in sets.items()})
    return test, {"C5": {**sets}}


def test_segment_study_shows_planted_direction_and_dilution(monkeypatch):
    from polybias.data import text
    from polybias.planted import synthetic
    from polybias.studies.ceat import ces_table, segment_length_study

    calls = _bag_of_words_encoder(monkeypatch)
    test, cats = _planted_tests(4)
    frames = {}
    for p in (0.9, 0.5, 0.1):
        cats["C5"]["p"] = p
        corpus = synthetic.varied_length_corpus(400, cats, seed=0, min_words=8, max_words=90)
        ex = text.find_occurrences(corpus, [w for s in test.sets().values() for w in s.words])
        frames[p] = segment_length_study(None, [test], ex, lengths=(9, 75), n_samples=100,
                                         seed=0, model_key="bow")
    up, null, down = (frames[p].set_index(["sample_set", "length"]) for p in (0.9, 0.5, 0.1))
    for mode in ("fixed", "random"):
        assert up.loc[(mode, "9"), "ces"] > 0.3 and up.loc[(mode, "9"), "pvalue"] < 1e-3
        assert down.loc[(mode, "9"), "ces"] < -0.3 and down.loc[(mode, "9"), "pvalue"] < 1e-3
        assert (null.loc[mode, "ces"].abs() < 0.2).all()
        # the association sits next to the target: long segments dilute it
        for frame in (up, down):
            assert abs(frame.loc[(mode, "9"), "ces"]) > abs(frame.loc[(mode, "75"), "ces"])
    assert len(frames[0.9]) == 4 and len(calls) == 12
    again = segment_length_study(None, [test], ex, lengths=(9, 75), n_samples=100, seed=0,
                                 model_key="bow")
    assert again.equals(frames[0.1])
    table = ces_table(frames[0.9])
    assert table.splitlines()[0] == "| test | set | 9 | 75 |" and "| C5 | f |" in table


def test_planted_runs_write_one_record_per_test(monkeypatch, tmp_path):
    import json

    from polybias.planted.probes import planted_extractions
    from polybias.studies.ceat import run_segment_study

    _bag_of_words_encoder(monkeypatch)
    runs = planted_extractions([0.9, 0.1], n_sentences=120, n_words=3, seed=0)
    assert list(runs) == ["p=0.9", "p=0.1"] and runs["p=0.9"][0][0].name == "C5 p=0.9"
    frame = run_segment_study(None, runs, "en", output_dir=str(tmp_path), lengths=(9,),
                              n_samples=20, seed=0, sample_sets=("fixed",), model_key="bow")
    assert frame["corpus"].tolist() == ["p=0.9", "p=0.1"]
    assert frame["ces"].iloc[0] > 0 > frame["ces"].iloc[1]
    records = sorted(tmp_path.glob("*.json"))
    assert [r.name for r in records] == ["ceat_m-model_l-en_t-c5-p-0.1.json",
                                         "ceat_m-model_l-en_t-c5-p-0.9.json"]
    rec = json.loads(records[1].read_text())
    assert results.is_measure_record(rec) and rec["values"]["subset"] == "fixed, length 9"
    assert rec["values"]["value"] == pytest.approx(frame["ces"].iloc[0])
    assert rec["parameters"]["corpus"] == "p=0.9" and min(d["occurrences"] for d in rec["values"]["details"]) > 0
    # the shape written before the one record shape reads the same row
    row = frame[frame.corpus == "p=0.9"].drop(columns="corpus").iloc[0].to_dict()
    old = {**rec, "values": {"rows": [row]}}
    assert results.record_rows(old, "ceat") == results.record_rows(rec, "ceat")


def _bag_of_words_encoder(monkeypatch, dim=1024):
    """An 'encoder' whose word vector is the mean of fixed random vectors of the words
    of the text: context enters exactly as much as its share of the segment."""
    import zlib

    from polybias.engines import embeddings

    table = {}

    def vec(word):
        if word not in table:
            table[word] = np.random.default_rng(zlib.crc32(word.encode())).normal(size=dim)
        return table[word]

    calls = []

    def word_vectors(encoder, texts, spans, **options):
        texts = list(texts)
        calls.append(len(texts))
        return np.stack([np.mean([vec(w) for w in t.split()], axis=0) for t in texts])

    monkeypatch.setattr(embeddings, "word_vectors", word_vectors)
    return calls


def test_summary_and_direction_tables_of_planted_runs(monkeypatch):
    import pandas as pd
    from polybias.metrics.ceat import CeatError
    from polybias.planted.probes import planted_extractions
    from polybias.studies.ceat import (
        all_positive_sentence,
        ces_by_strength,
        extraction_summary,
        run_segment_study,
    )

    _bag_of_words_encoder(monkeypatch)
    runs = planted_extractions([0.9, 0.1], n_sentences=120, n_words=3, seed=0)
    summary = extraction_summary(runs)
    assert summary["corpus"].tolist() == ["p=0.9", "p=0.1"]
    assert (summary["sentences"] == 120).all() and (summary["words"] == 12).all()
    ex = runs["p=0.9"][1]
    assert summary["fewest occurrences"].iloc[0] == min(ex.counts.values()) > 0
    assert summary["absent"].iloc[0] == ""
    frame = run_segment_study(None, runs, "en", lengths=(9, 75), n_samples=20, seed=0,
                              sample_sets=("fixed",), model_key="bow")
    direction = ces_by_strength(frame, [0.9, 0.1])
    assert direction.columns.tolist() == ["sample_set", "length", "p=0.1", "p=0.9", "increasing"]
    assert direction["increasing"].all() and (direction["p=0.1"] < 0).all()
    flipped = frame.assign(ces=-frame["ces"])
    assert not ces_by_strength(flipped, [0.9, 0.1])["increasing"].any()
    with pytest.raises(CeatError, match="no CES of C5 p=0.5 at fixed length 9"):
        ces_by_strength(frame, [0.9, 0.5, 0.1])
    sentence = all_positive_sentence(frame, alpha=0.005)
    assert sentence.startswith("4 CES: all positive False, ")
    assert all_positive_sentence(pd.DataFrame({"ces": [1.0], "pvalue": [0.0]})) == \
        "1 CES: all positive True, all significant at alpha = 0.005: True"
