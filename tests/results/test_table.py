"""Run records read back into one tidy table, cross-model tables and figures
(``polybias results`` / ``polybias export``). Records are written with the library's own
writer and the values the metric functions return, in the shapes the studies record."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from polybias import paths
from polybias.cli import main as cli
from polybias.metrics import ceat, crows, weat
from polybias.results import commands, export
from polybias.results import table as results
from polybias.results.records import Record, write_record


def _weat_record(model: str, language: str, test: str, shift: float, seed: int) -> Record:
    rng = np.random.default_rng(seed)
    a, b = rng.normal(size=4), rng.normal(size=4)
    X, Y = shift * a + rng.normal(size=(6, 4)), shift * b + rng.normal(size=(6, 4))
    res = weat.weat(X, Y, a + 0.1 * rng.normal(size=(5, 4)), b + 0.1 * rng.normal(size=(5, 4)),
                    n_permutations=200, exact_limit=0, seed=seed)
    return Record(metric="weat", model=model, language=language, test=test,
                  parameters={"ddof": 1, "seed": seed}, values=res.as_dict(), model_revision="r1",
                  packages={})


def _crows_record(model: str, language: str) -> Record:
    rng = np.random.default_rng(1)
    scored = pd.DataFrame({"score_more": rng.normal(size=40) + 0.5, "score_less": rng.normal(size=40),
                           "bias_type": np.where(np.arange(40) % 2, "gender", "race")})
    table = crows.stereotype_score(scored, n_bootstrap=100, seed=0)
    return Record(metric="crows", model=model, language=language, test="planted",
                  parameters={"method": "nangia"}, values={"by_bias_type": table.to_dict("records")},
                  packages={})


@pytest.fixture
def records(tmp_path):
    folder = tmp_path / "results"
    for model, shift in (("m-strong", 2.0), ("m-weak", 0.0)):
        for language in ("en", "hi"):
            write_record(_weat_record(model, language, "T1", shift, 3), folder / "weat" / f"01_weat__{model}")
        write_record(_crows_record(model, "en"), folder / "crows" / f"05_crows__{model}")
    rng = np.random.default_rng(2)
    r = ceat.ceat(*(rng.normal(size=(3, 5, 4)) for _ in range(4)))
    rows = [{"test": "C5", "sample_set": "fixed", "length": "9", "ces": r.ces, "se": r.se,
             "pvalue": r.pvalue, "tau2": r.tau2, "n_samples": r.n_samples}]
    write_record(Record(metric="ceat", model="m-strong", language="en", test="C5", parameters={},
                        values={"rows": rows}, packages={}), folder / "ceat" / "03_ceat__m")
    (folder / "weat" / "01_weat__m-strong" / "run.json").write_text("{}")  # a sweep marker
    return folder


def test_every_record_becomes_tidy_rows(records):
    frame = results.read_results(records)
    assert list(frame.columns) == list(results.COLUMNS)
    assert sorted(frame["study"].unique()) == ["ceat", "crows", "weat"]
    weat_rows = frame[frame.metric == "weat"]
    assert len(weat_rows) == 4 and set(weat_rows.language) == {"en", "hi"}
    stored = json.loads((records / "weat" / "01_weat__m-strong" / "weat_m-m-strong_l-en_t-t1.json").read_text())
    row = weat_rows[(weat_rows.model == "m-strong") & (weat_rows.language == "en")].iloc[0]
    assert row.value == stored["values"]["effect_size"] and row.p == stored["values"]["pvalue"]
    assert row.p_method == "permutation-monte-carlo" and row.n == 12
    assert row.options_hash == stored["params_hash"] and row.revision == "r1"
    crows_all = frame[(frame.metric == "crows") & (frame.subset == "all")]
    assert len(crows_all) == 2 and crows_all.ci_level.eq(0.95).all()
    assert (crows_all.ci_low <= crows_all.value).all() and (crows_all.value <= crows_all.ci_high).all()
    ceat_row = frame[frame.metric == "ceat"].iloc[0]
    stored = json.loads(next((records / "ceat").rglob("*.json")).read_text())["values"]["rows"][0]
    assert ceat_row.value == stored["ces"]
    assert ceat_row.ci_high - ceat_row.value == pytest.approx(1.959963984540054 * stored["se"], rel=1e-12)
    assert ceat_row.p_method == "normal" and ceat_row.subset == "fixed, length 9"


def test_cross_model_table_has_a_column_per_model_and_language(records):
    table = results.cross_model_table(results.read_results(records), "weat")
    assert list(table.columns) == ["study", "test", "subset", "m-strong (en)", "m-strong (hi)",
                                   "m-weak (en)", "m-weak (hi)"]
    assert table["m-strong (en)"].str.fullmatch(r"-?\d+\.\d\d \(p=0\.\d{3}\)").all(), table
    with pytest.raises(results.ResultsError, match="no results for metric 'cb'; metrics: ceat, crows, weat"):
        results.cross_model_table(results.read_results(records), "cb")


def test_export_writes_tables_and_figures(records, tmp_path):
    out = tmp_path / "export"
    written = export.export(results.read_results(records), out)
    names = sorted(p.name for p in written)
    assert names == sorted(["results.csv", *(f"{m}.{e}" for m in ("ceat", "crows", "weat")
                                             for e in ("csv", "md", "png"))])
    md = (out / "crows.md").read_text()
    assert md.startswith("| study | test | subset | m-strong (en) | m-weak (en) |")
    assert "[" in md  # intervals
    assert (out / "weat.png").stat().st_size > 1000
    from polybias.results import plots
    # the smallest font is recorded for the PDF to check (7 pt or more: 6.6 in prints at full size)
    assert plots.png_font((out / "weat.png").read_bytes()) >= plots.MIN_FONT_PT
    assert pd.read_csv(out / "results.csv").shape[0] == len(results.read_results(records))


def test_the_figures_are_redrawn_from_the_exported_tables_without_the_records(records, tmp_path, capsys):
    """``polybias export --redraw``: the committed tables give back the rows the figures
    draw, to the tables' digits, and the figures record their smallest font."""
    from polybias.results import plots

    frame = results.read_results(records)
    out = tmp_path / "export"
    export.export(frame, out, figures=False, tidy=False)
    for metric in ("crows", "weat"):
        back = export.read_cross_model_table(out / f"{metric}.csv")
        want = frame[frame["metric"] == metric]
        assert len(back) == len(want) and set(back["metric"]) == {metric}
        merged = back.merge(want, on=["model", "language", "study", "test", "subset"])
        assert len(merged) == len(want)
        for column in ("value", "ci_low", "ci_high"):
            got, exact = merged[f"{column}_x"].to_numpy(float), merged[f"{column}_y"].to_numpy(float)
            assert np.allclose(got, exact, atol=0.005, equal_nan=True), column  # 2 digits
    (out / "weat_7.png").write_bytes(b"a part of an earlier drawing")
    assert commands.main_export(["--redraw", "--out", str(out)]) == 0
    assert sorted(p.name for p in out.glob("*.png")) == ["ceat.png", "crows.png", "weat.png"]
    assert all(plots.png_font(p.read_bytes()) >= plots.MIN_FONT_PT for p in out.glob("*.png"))
    assert str(out / "weat.png") in capsys.readouterr().out
    (out / "crows.csv").write_text((out / "crows.csv").read_text().replace("[", "<", 1))
    assert commands.main_export(["--redraw", "--out", str(out)]) == 1
    assert "crows.csv: row 1, column 'm-strong (en)'" in capsys.readouterr().err
    assert commands.main_export([str(records), "--redraw", "--out", str(out)]) == 1
    assert commands.main_export(["--redraw", "--out", str(tmp_path / "empty")]) == 1
    assert "no cross-model tables" in capsys.readouterr().err


def test_commands(records, tmp_path, capsys):
    assert cli(["results", str(records), "--metric", "weat"]) == 0
    printed = capsys.readouterr().out
    assert "m-strong" in printed and "crows" not in printed
    csv = tmp_path / "all.csv"
    assert cli(["results", str(records), "--csv", str(csv)]) == 0
    assert pd.read_csv(csv).shape[0] == len(results.read_results(records))
    assert cli(["export", str(records), "--out", str(tmp_path / "x"), "--no-figures"]) == 0
    assert (tmp_path / "x" / "weat.md").is_file() and not (tmp_path / "x" / "weat.png").exists()
    assert cli(["results", str(tmp_path / "nowhere")]) == 1
    assert "no results folder" in capsys.readouterr().err


def test_the_validity_sweeps_model_records_are_read_like_any_other(records, tmp_path, capsys):
    rows = [{"language": "en", "family": "mlm", "measure": "crows-mlm", "metric": "stereotype-score",
             "p": 0.9, "seed": 0, "size_axis": "pairs", "size": n, "default": n == 20,
             "value": v, "null": 50.0, "pvalue": pv} for n, v, pv in ((10, 61.0, 0.2), (20, 64.5, 0.04))]
    rows.append({**rows[0], "measure": "template-mlm", "metric": "cb", "size_axis": "templates",
                 "size": 1, "value": 0.25, "null": float("nan"), "pvalue": float("nan")})
    model_record = {"job": {"language": "en", "family": "mlm", "p": 0.9, "seed": 0},
                    "job_hash": "ab" * 8, "training": {}, "scoring_version": "validity-sweep-2",
                    "rows": rows}
    folder = records / "validity" / "models" / "en"
    folder.mkdir(parents=True)
    (folder / "mlm-p0.9-s0.json").write_text(json.dumps(model_record))
    frame = results.read_results(records)
    mine = frame[frame["study"] == "validity"].sort_values(["metric", "subset"])
    assert mine[["metric", "subset", "value"]].to_dict("records") == [
        {"metric": "validity:crows-mlm:stereotype-score", "subset": "10 pairs", "value": 61.0},
        {"metric": "validity:crows-mlm:stereotype-score", "subset": "20 pairs", "value": 64.5},
        {"metric": "validity:template-mlm:cb", "subset": "1 templates", "value": 0.25}]
    assert set(mine["model"]) == {"planted"} and set(mine["test"]) == {"mlm-p0.9-s0"}
    assert set(mine["options_hash"]) == {"ab" * 8} and mine["p"].isna().tolist() == [False, False, True]
    assert set(mine["record"]) == {"validity/models/en/mlm-p0.9-s0.json"}
    # and so through the command line, as every record
    assert cli(["results", str(records), "--metric", "validity:crows-mlm:stereotype-score"]) == 0
    assert "mlm-p0.9-s0" in capsys.readouterr().out
    assert cli(["export", str(records), "--out", str(tmp_path / "x"), "--no-figures"]) == 0
    assert (tmp_path / "x" / "validity_crows-mlm_stereotype-score.md").is_file()
    # anything else without a metric is still an error naming the file
    (folder / "mlm-p0.9-s0.json").write_text(json.dumps({"job": {}, "rows": []}))
    with pytest.raises(results.ResultsError, match="mlm-p0.9-s0.json: not a run record"):
        results.read_results(records)


def test_export_of_the_runs_of_one_sweep(records, tmp_path, capsys):
    runs = sorted((records / "weat").iterdir())
    frame = results.read_results(runs=runs)
    assert set(frame["study"]) == {"weat"} and set(frame["model"]) == {"m-strong", "m-weak"}
    assert frame["record"].str.startswith("01_weat__").all()
    # a complete sweep: its tables, no tidy table; --prune removes what is no longer exported
    out = tmp_path / "export"
    out.mkdir()
    (out / "old-metric.md").write_text("stale")
    (out / "notes.txt").write_text("kept")
    complete = lambda config: (runs, [])  # noqa: E731
    assert commands.main_export(["--sweep", "s.yaml", "--out", str(out), "--no-figures", "--no-tidy",
                                "--prune"], sweep_runs=complete) == 0
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt", "weat.csv", "weat.md"]
    before = (out / "weat.md").read_text()
    # a sweep with runs not done: an error, or with --if-complete a note; nothing written
    partial = lambda config: (runs[:1], ["01_weat__m-weak"])  # noqa: E731
    (out / "weat.md").unlink()
    assert commands.main_export(["--sweep", "s.yaml", "--out", str(out)], sweep_runs=partial) == 1
    assert "1 of 2 runs of s.yaml are not done (e.g. 01_weat__m-weak)" in capsys.readouterr().err
    assert commands.main_export(["--sweep", "s.yaml", "--out", str(out), "--if-complete"],
                               sweep_runs=partial) == 0
    assert "left as it is" in capsys.readouterr().err
    assert not (out / "weat.md").exists()
    assert commands.main_export(["--sweep", "s.yaml", "--out", str(out), "--no-figures", "--no-tidy"],
                               sweep_runs=complete) == 0
    assert (out / "weat.md").read_text() == before  # deterministic
    assert commands.main_export([str(records), "--sweep", "s.yaml"], sweep_runs=complete) == 1
    assert "not both" in capsys.readouterr().err


def test_bad_records_name_the_file(tmp_path):
    folder = tmp_path / "results" / "weat"
    folder.mkdir(parents=True)
    (folder / "broken.json").write_text("{not json")
    with pytest.raises(results.ResultsError, match=r"broken.json: not a readable JSON record"):
        results.read_results(tmp_path / "results")
    (folder / "broken.json").write_text(json.dumps({"metric": "weat", "model": "m"}))
    with pytest.raises(results.ResultsError, match=r"broken.json: not a run record \(no 'language' field\)"):
        results.read_results(tmp_path / "results")
    (folder / "broken.json").write_text(json.dumps({"metric": "weat", "model": "m", "language": "en",
                                                    "test": "T", "values": {"pvalue": 0.1}}))
    with pytest.raises(results.ResultsError, match=r"broken.json: malformed 'weat' record: KeyError"):
        results.read_results(tmp_path / "results")


def test_same_cell_from_two_runs_is_an_error(records):
    frame = results.read_results(records)
    doubled = pd.concat([frame, frame[frame.metric == "weat"].assign(options_hash="other")])
    with pytest.raises(results.ResultsError, match="several records give the same cell"):
        results.cross_model_table(doubled, "weat")


def test_a_record_metric_without_a_reader_is_an_error_naming_it(tmp_path):
    rec = {"metric": "agreement", "model": "m", "language": "en", "test": "t", "values": {"table": {}}}
    assert results.record_rows(rec) == []  # declared: it holds no measure's value
    assert "agreement" in results.NOT_TABULATED and "agreement" not in results.READERS
    with pytest.raises(results.ResultsError, match="r.json: no reader for record metric 'toy': .*add "
                       "a reader to polybias.results.table.READERS .*NOT_TABULATED"):
        results.record_rows({**rec, "metric": "toy"}, source="r.json")
    (tmp_path / "toy" / "run").mkdir(parents=True)
    (tmp_path / "toy" / "run" / "r.json").write_text(json.dumps({**rec, "metric": "toy"}), encoding="utf-8")
    with pytest.raises(results.ResultsError, match="toy/run/r.json: no reader for record metric 'toy'"):
        results.read_results(tmp_path)  # the record is not skipped: the whole table fails


def test_a_registered_measures_record_is_read_without_a_reader_of_its_own():
    """A study that reports a registered measure through ``measures.compute`` writes its
    result with ``records.measure_record``; the table reads it by the registry alone."""
    from polybias.measures import Interval, MeasureResult
    from polybias.results.records import measure_record

    r = MeasureResult("kl-difference", 0.25, Interval(0.1, 0.4, 0.95, "bootstrap-percentile"), 0.03,
                      "normal", 12, {"seed": 1}, extra={"pair": "a ‖ b"})
    rec = measure_record(r, model="m", language="en", test="T", packages={}).to_dict()
    assert "kl-difference" not in results.READERS
    (row,) = results.record_rows(json.loads(json.dumps(rec)))
    assert (row["metric"], row["value"], row["ci_low"], row["ci_high"], row["ci_level"]) == \
        ("kl-difference", 0.25, 0.1, 0.4, 0.95)
    assert (row["p"], row["p_method"], row["n"], row["test"]) == (0.03, "normal", 12, "T")
    assert rec["parameters"] == {"seed": 1} and rec["values"]["extra"] == {"pair": "a ‖ b"}
    no_ci = measure_record(MeasureResult("kl-difference", 0.5, None, None, "none", 3), model="m",
                           language="en", test="T", packages={}).to_dict()
    (row,) = results.record_rows(no_ci)
    assert np.isnan(row["ci_low"]) and np.isnan(row["p"]) and row["p_method"] == "none"
    with pytest.raises(results.ResultsError, match="malformed 'kl-difference' record: KeyError"):
        results.record_rows({**no_ci, "values": {"score": 0.5}})


def test_validity_records_give_the_mean_per_strength_with_its_interval():
    rec = {"metric": "validity", "model": "planted", "language": "bn", "test": "dose-calibration-mdb",
           "values": {"dose": [{"language": "bn", "measure": "weat", "metric": "effect-size", "p": 0.7,
                                "n": 5, "mean": 1.1, "low": 0.7, "high": 1.4}],
                      "summary": [], "calibration": [], "mdb": []}}
    (row,) = results.record_rows(rec)
    assert row["metric"] == "validity:weat:effect-size" and row["subset"] == "p=0.7"
    assert (row["value"], row["ci_low"], row["ci_high"], row["n"]) == (1.1, 0.7, 1.4, 5)


def test_every_record_metric_the_studies_write_has_a_reader():
    """A new study's records must not drop silently out of the table: every metric name
    written through ``Record(metric="...")`` or a measure record's ``metric="..."`` in the
    library or the notebooks has a reader (``agreement``'s, for a correlation matrix between
    measures, gives no rows); a measure record named by its measure is read by the registry."""
    import re

    from polybias import paths

    root = paths.project_root()
    # run_crows writes the share's record under its measure's name and crows-jsd through a
    # loop variable; crows-languages is comparison_record's default metric
    written = {"crows", "crows-jsd", "crows-languages"}
    for path in [*(root / "lib" / "polybias").rglob("*.py"), *(root / "notebooks").glob("*.py")]:
        written |= set(re.findall(r'(?:Record\(\s*|record\([^)]*?)metric="([^"]+)"',
                                  path.read_text(encoding="utf-8"), flags=re.S))
    assert len(written) >= 12, written
    assert "agreement" in written
    for metric in written:  # a reader of its own, a registered measure's, or declared untabulated
        assert metric in results.NOT_TABULATED or results.record_reader(metric) is not None, metric


def test_the_studies_tables_come_back_from_their_records(w2v, planted_lm, tmp_path, monkeypatch):
    """What a study prints (its table) and what `polybias results` reads from the records it
    wrote are the same numbers: WEAT on w2v-gnews and CrowS-Pairs on the pinned planted MLM."""
    from polybias.studies.crows_pairs import run_crows
    from polybias.studies.weat import run_weat

    monkeypatch.setenv("POLYBIAS_OUTPUT_ROOT", str(tmp_path))
    printed = run_weat("w2v-gnews", "en", ["WEAT1", "WEAT6"], embeddings=w2v, n_permutations=2000,
                       output_dir="results/weat/run")
    crows_run = run_crows(planted_lm[0.9], n_pairs=30, n_bootstrap=100, output_dir="results/crows/run")
    frame = results.read_results(tmp_path / "results")
    weat_rows = frame[frame.metric == "weat"].set_index("test")
    for row in printed.itertuples():
        assert weat_rows.loc[row.test, "value"] == row.effect_size
        assert weat_rows.loc[row.test, "p"] == row.pvalue
        assert weat_rows.loc[row.test, "n"] == row.n_x + row.n_y
    for metric, table in (("crows", crows_run.stereotype), ("jsd-b", crows_run.jsd)):
        got = frame[frame.metric == metric].set_index("subset")
        for row in table.itertuples():
            assert got.loc[row.bias_type, ["value", "ci_low", "ci_high", "p"]].tolist() == \
                [row.score, row.ci_low, row.ci_high, row.binom_p], (metric, row.bias_type)
            assert got.loc[row.bias_type, "model"] == planted_lm[0.9].name


def test_every_stored_label_maps_to_a_registered_measure():
    """One name per measure: the labels run records store (kept, so records stay
    byte-identical) map to registry keys in one table, and the table's ``metric`` column
    holds registry keys or a study's own metric names only."""
    from polybias.measures import MEASURES, RECORD_MEASURES, record_measure

    assert set(RECORD_MEASURES.values()) <= set(MEASURES)
    assert not set(RECORD_MEASURES) & set(MEASURES)  # a key is never relabelled
    for label in results.READERS:
        key = record_measure(label)
        assert key in MEASURES or label in ("catbias", "debias", "hidden-states", "validity",
                                            "validity-model", "external_validity",
                                            "real-models"), label


def test_the_table_names_every_measure_by_its_registry_key():
    from polybias.measures import MEASURES

    records = [
        {"metric": "catbias", "values": {"ahn_oh_cb": 0.1, "pll_cb": 0.2, "max_kl": 0.3,
                                         "max_kl_pair": ["a", "b"]}},
        {"metric": "logprob-context", "values": {"summary": [{"structure": 1, "effect_size": 0.5}]}},
        {"metric": "debias", "values": {"cells": [{"test": "T", "test_type": "SEAT", "effect_size": 0.4,
                                                   "gap": 0.01}]}},
        {"metric": "crows-jsd", "values": {"by_bias_type": [{"bias_type": "all", "score": 55.0, "n": 10}]}},
        {"metric": "crows", "parameters": {"method": "aula"},
         "values": {"by_bias_type": [{"bias_type": "all", "score": 52.0, "n": 10}]}},
        {"metric": "stereoset-languages", "values": {"per_language": [{"score": 51.0, "n": 3}], "paired": []}},
    ]
    metrics = [r["metric"] for rec in records
               for r in results.record_rows({"model": "m", "language": "en", "test": "t", **rec})]
    assert metrics == ["cb", "pll-cb", "kl-difference", "kurita", "seat", "weat-gap", "jsd-b", "aula",
                       "stereoset"]
    assert set(metrics) <= set(MEASURES)


def test_a_declared_sample_and_the_lm_eval_scoring_get_their_own_cells():
    share = {"bias_type": "all", "n": 8, "score": 62.5, "ci_low": 25.0, "ci_high": 87.5,
             "binom_p": 0.7, "ties": 0}
    base = {"metric": "crows", "model": "smollm2", "language": "en", "test": "crows-pairs-gamboa",
            "values": {"by_bias_type": [share]}}
    frames = [pd.DataFrame(results.record_rows({**base, "parameters": p}, "crows"))
              for p in ({"method": "causal"}, {"method": "causal", "max_pairs": 8, "seed": 0},
                        {"method": "lm-eval"})]
    assert [f.subset.item() for f in frames] == ["all", "all; sample of 8 (seed 0)", "all; lm-eval"]
    table = results.cross_model_table(pd.concat(frames, ignore_index=True), "crows")
    assert table.subset.tolist() == ["all", "all; lm-eval", "all; sample of 8 (seed 0)"]


def test_a_gest_sample_gets_its_own_cell():
    values = {"n": 80, "g_s": 1.1, "g_s_low": 1.0, "g_s_high": 1.2}
    base = {"metric": "gest", "model": "smollm2", "language": "en", "test": "causal-template1",
            "values": values}
    frames = [pd.DataFrame(results.record_rows({**base, "parameters": p}, "gest"))
              for p in ({"limit": 0, "seed": 0}, {"limit": 0, "max_items": 80, "seed": 0})]
    assert [f.subset.item() for f in frames] == ["causal-template1",
                                                 "causal-template1; sample of 80 (seed 0)"]
    table = results.cross_model_table(pd.concat(frames, ignore_index=True), "gest")
    assert len(table) == 2


def test_a_eurogest_subset_gets_its_own_cell():
    values = {"g_s": 1.1, "ci_low": 1.0, "ci_high": 1.2, "level": 0.95, "n": 32,
              "per_stereotype": [{"stereotype": 1, "label": "Emotional", "masculine_rate": 0.4, "n": 2}]}
    base = {"metric": "eurogest", "model": "smollm2", "language": "cs", "test": "eurogest", "values": values}
    frames = [pd.DataFrame(results.record_rows({**base, "parameters": p}, "eurogest"))
              for p in ({"per_stereotype": None}, {"per_stereotype": 1})]
    assert [f.subset.tolist() for f in frames] == [["g_s", "1 Emotional"],
                                                   ["g_s; first 1 per stereotype",
                                                    "1 Emotional; first 1 per stereotype"]]
    table = results.cross_model_table(pd.concat(frames, ignore_index=True), "eurogest")
    assert len(table) == 2


def test_the_legacy_shapes_are_only_read_and_the_measure_record_reads_the_same():
    """No study, runner module or notebook writes a record shape of :data:`LEGACY_READERS`
    any more: they write ``measure_record`` s. An old record of that shape and the measure record
    of the same result give the same tidy row."""
    import ast

    from polybias.measures import compute
    from polybias.metrics.weat import WeatResult
    from polybias.results.records import measure_record

    root = paths.project_root()
    sources = [*(root / "lib" / "polybias" / "studies").glob("*.py"),
               *(root / "lib" / "polybias" / "runner").glob("*.py"), *(root / "notebooks").glob("*.py")]
    written = set()
    for source in sources:
        for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "Record":
                for kw in node.keywords:
                    if kw.arg == "metric" and isinstance(kw.value, ast.Constant):
                        written.add(kw.value.value)
    assert written and not written & set(results.LEGACY_READERS)
    rng = np.random.default_rng(0)
    X, Y, A, B = (rng.normal(size=(6, 4)) for _ in range(4))
    result = compute("weat", X=X, Y=Y, A=A, B=B, n_permutations=200, seed=0)
    new = measure_record(result, model="m", language="en", test="T").to_dict()
    old = {**new, "values": WeatResult.from_measure(result).as_dict()}
    assert results.is_measure_record(new) and not results.is_measure_record(old)
    row_new, row_old = results.record_rows(new, "weat")[0], results.record_rows(old, "weat")[0]
    assert {k: v for k, v in row_new.items() if k != "options_hash"} == \
        {k: v for k, v in row_old.items() if k != "options_hash"}


def _rows_without(record: dict, study: str, *drop: str) -> list[dict]:
    return [{k: v for k, v in row.items() if k not in ("options_hash", "record", *drop)}
            for row in results.record_rows(record, study)]


def test_the_study_records_of_catbias_interactions_context_and_debias_read_as_their_legacy_shapes():
    """The four studies that wrote shapes of their own (notebooks 04, 06, 07, 09) now write
    measure records through one builder each; the tidy rows are those of the legacy shape,
    plus the n and p the legacy readers dropped (CB's and PLL CB's rows, the interaction
    test's p, each cell's n) and the exact permutation p-method where the split was exact."""
    from polybias.metrics import catbias as catbias_metrics
    from polybias.studies import categorical_bias, cultural_interactions, debiasing, logprob_context

    base = {"model": "m", "language": "en", "test": "T", "params_hash": "ab", "parameters": {}}
    # catbias: CB, PLL CB and the largest KL pair
    rows = pd.DataFrame({"cb": [0.1, 0.3, 0.2], "n_groups": [2, 2, 2]})
    cb = catbias_metrics.CBResult(0.2, rows, pd.DataFrame(), 0)
    kl = pd.DataFrame([{"template": "t", "from": "a", "to": "b", "kl": 0.5, "scale": "sum"}])
    new = categorical_bias.catbias_record(cb, cb, kl, None, model="m", language="en", test="T",
                                          parameters={}, packages={}).to_dict()
    old = {**base, "metric": "catbias", "values": {"ahn_oh_cb": 0.2, "pll_cb": 0.2, "max_kl": 0.5,
                                                   "max_kl_pair": ["a", "b"]}}
    assert results.is_measure_record(new) and not results.is_measure_record(old)
    assert _rows_without(new, "catbias", "n") == _rows_without(old, "catbias", "n")
    assert [r["n"] for r in results.record_rows(new, "catbias")] == [3, 3, None]
    # interactions: one row per characteristics and base; sentiment-weighted rows as sentiment-cb
    scores = pd.DataFrame([{"characteristics": c, "base": "double-mask", "weighted": w, "n_groups": 2,
                            "n_attributes": 4, "score": s, "T": 1.0, "T_null_mean": 0.5, "p": 0.02,
                            "significant": True} for c, w, s in (("pro", True, 0.1), ("target", True, 0.3))])
    new = cultural_interactions.interaction_record(scores, model="m", language="en", test="T",
                                                   parameters={}, packages={}).to_dict()
    old = {**base, "metric": "interaction-cb", "values": {"scores": scores.to_dict("records")}}
    assert _rows_without(new, "i", "p", "p_method") == _rows_without(old, "i", "p", "p_method")
    assert [(r["metric"], r["p"], r["p_method"]) for r in results.record_rows(new, "i")] == \
        [("sentiment-cb", 0.02, "permutation-monte-carlo")] * 2
    # log-probability context: one row per structure, exact p where the split was enumerated
    summary = pd.DataFrame([{"structure": s, "effect_size": e, "pvalue": 0.1, "corrected_c": 1.0}
                            for s, e in (("S1", 1.2), ("S2", 0.4))])
    per = pd.DataFrame({"structure": ["S1"] * 4 + ["S2"] * 4, "attribute_group": ["c", "c", "f", "f"] * 2})
    new = logprob_context.context_record(summary, per, "c", "f", model="m", language="en", test="T",
                                         parameters={}, packages={}).to_dict()
    old = {**base, "metric": "logprob-context", "values": {"summary": summary.to_dict("records")}}
    assert _rows_without(new, "l", "n", "p_method") == _rows_without(old, "l", "n", "p_method")
    assert [(r["n"], r["p_method"]) for r in results.record_rows(new, "l")] == [(4, "permutation-exact")] * 2
    # debias: each cell's WEAT or SEAT effect and its gap, under the cell's test
    cells = pd.DataFrame([{"method": m, "test_type": t, "kind": "BM", "test": "t1", "effect_size": 1.0,
                           "pvalue": 0.01, "gap": 0.1, "dropped": "", "n": 16,
                           "p_method": "permutation-monte-carlo"}
                          for m, t in (("original", "WEAT"), ("hard", "SEAT"))])
    new = debiasing.debias_record(cells, {}, model="m", language="en", test="T", parameters={},
                                  packages={}).to_dict()
    old = {**base, "metric": "debias", "values": {"cells": cells.to_dict("records")}}
    assert _rows_without(new, "d", "n") == _rows_without(old, "d", "n")
    assert [(r["metric"], r["test"], r["n"]) for r in results.record_rows(new, "d")] == \
        [("weat", "t1", 16), ("weat-gap", "t1", 16), ("seat", "t1", 16), ("weat-gap", "t1", 16)]


def test_the_records_of_hidden_states_census_validity_and_real_models_read_as_their_legacy_shapes():
    """The studies whose numbers are statistics, not measures (:data:`polybias.measures.STATISTICS`
    and the validity statistics), write measure records too; they read as their legacy shapes."""
    from polybias.studies import external_validity, hidden_states, real_models, validity

    base = {"model": "m", "language": "en", "test": "T", "params_hash": "ab", "parameters": {}}
    # hidden states: the separation of each 2-D view
    sep = pd.DataFrame({"method": ["pca", "tsne"], "eta2": [0.4, 0.6]})
    anova = pd.DataFrame({"statistic": ["sum"], "F": [3.0], "p": [0.01]})
    new = hidden_states.hidden_record("m", "en", "T", {}, anova, sep, pd.DataFrame({"layer": [0], "ari": [0.2]}),
                                      {"h": 1.0}, packages={}).to_dict()
    old = {**base, "metric": "hidden-states", "values": {"separation": {"pca": 0.4, "tsne": 0.6}}}
    assert results.is_measure_record(new)
    assert _rows_without(new, "h") == _rows_without(old, "h")
    # census correlations: Pearson's and Spearman's per outcome and year
    corr = pd.DataFrame([{"measure": "wefat", "year": 2015, "outcome": "share", "n": 5, "pearson": 0.5,
                          "pearson_low": 0.1, "pearson_high": 0.8, "pearson_p": 0.04, "spearman": 0.4,
                          "spearman_low": np.nan, "spearman_high": np.nan, "spearman_p": 0.1, "no_census": ""}])
    new = external_validity.external_record("wefat", "m", corr, pd.DataFrame({"occupation": [], "wefat": []}),
                                            {}, {"confidence": 0.9}, packages={}).to_dict()
    old = {**base, "metric": "external_validity", "test": "wefat", "parameters": {"confidence": 0.9},
           "values": {"correlations": corr.replace({np.nan: None}).to_dict("records")}}
    assert _rows_without(new, "e") == _rows_without(old, "e")
    # notebook 10: the mean over planted models per strength
    doses = pd.DataFrame([{"language": "en", "measure": "crows-causal", "metric": "jsd-B", "p": p, "n": 10,
                           "mean": m, "low": m - 0.1, "high": m + 0.1} for p, m in ((0.5, 0.0), (0.9, 0.4))])
    new = validity.validity_record(doses, {}, language="en", parameters={}, packages={}).to_dict()
    old = {**base, "metric": "validity", "model": "planted", "test": "dose-calibration-mdb",
           "values": {"dose": doses.to_dict("records")}}
    assert _rows_without(new, "v") == _rows_without(old, "v")
    assert {r["metric"] for r in results.record_rows(new, "v")} == {"validity:crows-causal:jsd-B"}
    # the real-model table: each row under its checkpoint's hub id, language and source
    table = pd.DataFrame([{"hub_id": "gpt2", "source": "gest-published", "name": "gpt2", "run": "causal",
                           "measure": "gest g_s", "language": "en", "value": 1.2, "ci_low": 1.1,
                           "ci_high": 1.3, "n": 3565, "note": ""}])
    new = real_models.real_models_record(table, {}).to_dict()
    old = {**base, "metric": "real-models", "model": "real checkpoints", "language": "multi", "test": "table",
           "values": {"rows": real_models.record_rows(table)}}
    assert _rows_without(new, "r", "revision") == _rows_without(old, "r", "revision")
    assert [(r["model"], r["test"], r["metric"]) for r in results.record_rows(new, "r")] == \
        [("gpt2", "gest-published", "gest")]


def test_a_record_of_an_unknown_statistic_is_refused():
    """A measure record may carry a registered measure or a declared statistic, nothing else."""
    from polybias.metrics.measure import MeasureResult
    from polybias.results.records import measure_record

    rec = measure_record(MeasureResult("toy-statistic", 1.0, None, None, "none", 3), model="m",
                         language="en", test="T", metric="hidden-states", packages={}).to_dict()
    assert not results.is_measure_record(rec)
    with pytest.raises(results.ResultsError, match="x.json: record 'hidden-states' reports 'toy-statistic': "
                       "no registered measure .* nor a statistic of polybias.measures.STATISTICS"):
        results.record_rows(rec, "h", source="x.json")


def test_the_diagnosis_and_eurogest_validity_records_are_read_beside_the_sweeps(tmp_path):
    """``polybias results`` on a folder holding the validity diagnosis' and the EuroGEST
    validity's records (their jobs have a part or no family) reads them like the validity
    sweep's: one row per metric, with the layer and size, or the interval and n, they hold."""
    layers = {"job": {"grid": 0, "language": "en", "p": 0.1, "part": "layers", "seed": 0}, "job_hash": "a",
              "scoring_version": "validity-diagnosis-1",
              "rows": [{"family": "mlm", "language": "en", "layer": 2, "measure": "embedding-mlm",
                        "metric": "seat-effect-size", "p": 0.1, "pvalue": 0.5, "seed": 0, "size": 4,
                        "size_axis": "words per set", "value": -1.8}]}
    eurogest = {"job": {"language": "cs", "p": 0.5, "seed": 8}, "job_hash": "b",
                "scoring_version": "validity-eurogest-1",
                "rows": [{"family": "eurogest-causal", "measure": "eurogest-causal", "metric": "g_s", "n": 767,
                          "low": 0.96, "high": 1.05, "level": 0.95, "p": 0.5, "seed": 8, "value": 1.006}]}
    for name, record in (("diagnosis/layers/en-p0.1-s0-g0.json", layers), ("eurogest/cs/eurogest-p0.5-s8.json", eurogest)):
        (tmp_path / name).parent.mkdir(parents=True)
        (tmp_path / name).write_text(json.dumps(record))
    frame = results.read_results(tmp_path).sort_values("language")
    assert frame.test.tolist() == ["eurogest-causal-p0.5-s8", "layers-p0.1-s0-g0"]
    assert frame.subset.tolist() == ["", "layer 2, 4 words per set"]
    assert frame.iloc[0][["n", "ci_low", "ci_high", "ci_level"]].tolist() == [767, 0.96, 1.05, 0.95]
