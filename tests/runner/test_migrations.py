"""Kept records brought to the current shape without recomputing (polybias.runner.migrations)."""

import json

import pytest
from polybias import models
from polybias.files import params_hash, sha256_file
from polybias.runner import execution, migrations


@pytest.fixture
def causal(torch_one_thread, monkeypatch):
    monkeypatch.setenv("POLYBIAS_PLANTED", "pinned")
    return models.load("planted-causal", "lm")


def _kept(tmp_path, record):
    folder = tmp_path / "eurogest" / "16_eurogest__model-m__languages-lv"
    folder.mkdir(parents=True)
    (folder / "r.json").write_text(json.dumps(record, indent=2, sort_keys=True) + "\n")
    marker = {"status": "kept", "files": {"r.json": sha256_file(folder / "r.json")}}
    (folder / execution.MARKER).write_text(json.dumps(marker))
    return folder


def test_a_eurogest_record_gains_the_identical_forms_fields_and_its_folder_stays_valid(mirror, tmp_path):
    parameters = {"subsets": ["gendered", "neutral"], "too_long": "raise"}
    record = {"metric": "eurogest", "language": "lv", "parameters": parameters,
              "params_hash": params_hash(parameters), "values": {"g_s": 1.1, "n": 5}}
    folder = _kept(tmp_path, record)
    assert migrations.migrate_folder(folder) == ["r.json"]
    new = json.loads((folder / "r.json").read_text())
    assert new["values"] == {"g_s": 1.1, "n": 5, "n_identical": 0}  # the pinned files hold none
    assert new["parameters"]["identical_forms"] == "keep"
    assert new["params_hash"] == params_hash(new["parameters"]) != record["params_hash"]
    marker = json.loads((folder / execution.MARKER).read_text())
    assert marker["files"]["r.json"] == sha256_file(folder / "r.json")
    assert marker["migrated"] == ["eurogest_identical_forms"]
    before = (folder / "r.json").read_bytes()
    assert migrations.migrate_folder(folder) == [] and (folder / "r.json").read_bytes() == before


def test_other_records_are_left_byte_for_byte(tmp_path):
    record = {"metric": "crows", "language": "en", "parameters": {}, "values": {"n": 3}}
    folder = _kept(tmp_path, record)
    before = (folder / "r.json").read_bytes()
    assert migrations.migrate_folder(folder) == [] and (folder / "r.json").read_bytes() == before


def _rows(record):
    from polybias.results import table

    return table.record_rows(record, "s")


def test_kept_crows_records_become_measure_records_that_read_the_same(planted_lm, tmp_path):
    """A CrowS-Pairs run's two records written in the shape before the one record shape
    (``by_bias_type``) migrate to the measure records the study writes now: the table reads
    the same rows from both, and from the study's own new record but for its parameters'
    hash (the new record also states the measure's options)."""
    from polybias.results import table
    from polybias.studies import crows_pairs

    run = crows_pairs.run_crows(planted_lm[0.9], n_pairs=30, n_bootstrap=100, output_dir=str(tmp_path / "new"))
    written = {json.loads(p.read_text())["metric"]: json.loads(p.read_text())
               for p in (tmp_path / "new").rglob("*.json")}
    assert {"crows", "crows-jsd"} <= set(written)
    for metric, by_type in (("crows", run.stereotype), ("crows-jsd", run.jsd)):
        new = written[metric]
        assert table.is_measure_record(new) and new["values"]["subset"] == "all"
        assert [g["subset"] for g in new["values"]["groups"]] == by_type.bias_type.tolist()[1:]
        parameters = {"dataset": "planted", "method": "nangia"}
        old = {**{k: new[k] for k in ("metric", "model", "language", "test", "run_id", "model_revision")},
               "parameters": parameters, "params_hash": params_hash(parameters),
               "values": {"by_bias_type": by_type.to_dict("records")}}
        folder = _kept(tmp_path / metric, old)
        assert migrations.migrate_folder(folder) == ["r.json"]
        migrated = json.loads((folder / "r.json").read_text())
        assert table.is_measure_record(migrated) and not table.is_measure_record(old)
        assert migrated["params_hash"] == old["params_hash"]
        assert _rows(migrated) == _rows(old)
        drop = ("options_hash", "record")
        assert [{k: v for k, v in r.items() if k not in drop} for r in _rows(new)] == \
            [{k: v for k, v in r.items() if k not in drop} for r in _rows(old)]
        marker = json.loads((folder / execution.MARKER).read_text())
        assert marker["files"]["r.json"] == sha256_file(folder / "r.json")
        assert marker["migrated"] == ["crows_measure_records"]


def test_a_kept_eurogest_record_becomes_the_measure_record_the_study_writes(mirror, causal, tmp_path):
    """The EuroGEST study's record rewritten in the shape before the one record shape
    migrates back to exactly what the study writes now, and the table reads the same rows
    from both."""
    import math

    from polybias.results import table
    from polybias.studies import eurogest as study

    study.run_eurogest("planted-causal", ["cs"], per_stereotype=10, n_bootstrap=50, too_long="skip",
                       output_dir=str(tmp_path / "new"), lm=causal)
    (path,) = (tmp_path / "new").rglob("*.json")
    new = json.loads(path.read_text())
    v = new["values"]
    assert table.is_measure_record(new) and v["subset"] == "g_s" and len(v["groups"]) == 16
    per = [{**g["extra"], "n": g["n"], "masculine_rate": g["value"],
            "ci_low": g["interval"]["low"] if g["interval"] else None,
            "ci_high": g["interval"]["high"] if g["interval"] else None} for g in v["groups"]]
    old = {**new, "values": {"g_s": v["value"], "ci_low": v["interval"]["low"], "ci_high": v["interval"]["high"],
                             "level": v["interval"]["level"], "n": v["n"], **v["extra"], "per_stereotype": per}}
    assert not table.is_measure_record(old)
    folder = _kept(tmp_path, old)
    assert migrations.migrate_folder(folder) == ["r.json"]
    migrated = json.loads((folder / "r.json").read_text())
    assert migrated == new
    old_rows, new_rows = _rows(old), _rows(migrated)
    assert len(old_rows) == 17 and all(
        a.keys() == b.keys() and all(a[k] == b[k] or (isinstance(a[k], float) and math.isnan(a[k])
                                                      and math.isnan(b[k])) for k in a)
        for a, b in zip(old_rows, new_rows, strict=True))


def test_a_kept_gest_record_becomes_the_measure_record_the_study_writes(tmp_path):
    """A GEST record rewritten in the shape before the one record shape (``g_s``, its
    interval, ``r_f``, ``r_m`` and ``rates``) migrates back to exactly what the study writes
    now; the table reads the same row from both."""
    import numpy as np
    from polybias.results import table
    from polybias.studies import gest as study

    rng = np.random.default_rng(0)
    stereotypes = np.repeat(np.arange(1, 17), 12)
    scores = {0: rng.normal(0.1 * (stereotypes > 7), 1.0)}
    summary, rates = study.model_rates(scores, stereotypes, "m", "causal", n_bootstrap=50, seed=0)
    (path,) = study.write_records(summary, rates, {"n_bootstrap": 50, "seed": 0, "interval": "normal"},
                                  str(tmp_path / "new"))
    new = json.loads(path.read_text())
    v = new["values"]
    assert table.is_measure_record(new) and v["subset"] == "causal-template1" and len(v["details"]) == 16
    old = {**new, "values": {"n": v["n"], "g_s": v["value"], "g_s_low": v["interval"]["low"],
                             "g_s_high": v["interval"]["high"], **v["extra"], "rates": v["details"]}}
    folder = _kept(tmp_path, old)
    assert migrations.migrate_folder(folder) == ["r.json"]
    assert json.loads((folder / "r.json").read_text()) == new
    assert _rows(old) == _rows(new) and len(_rows(new)) == 1


def test_a_sweeps_run_folder_is_migrated_and_stays_done(tmp_path, capsys):
    """``python -m polybias.runner.migrations results`` rewrites the records of a sweep's run
    folders (their ``run.json`` lists ``outputs``, the executed notebook among them): the
    record's digest is rewritten, the notebook's left, so the sweep still counts the run done."""
    from polybias.results import table

    old = {"metric": "gest", "model": "m", "language": "en", "test": "causal-template1",
           "parameters": {"n_bootstrap": 50, "seed": 0, "interval": "normal"}, "params_hash": "ab",
           "values": {"n": 12, "g_s": 1.1, "g_s_low": 1.0, "g_s_high": 1.2, "r_f": 0.4, "r_m": 0.44,
                      "rates": []}}
    folder = tmp_path / "results" / "gest" / "15_gest__model-m"
    folder.mkdir(parents=True)
    (folder / "r.json").write_text(json.dumps(old, indent=2, sort_keys=True) + "\n")
    (folder / "executed.ipynb").write_text("{}")
    marker = {"status": "ok", "key": "15_gest__model-m",
              "outputs": {name: sha256_file(folder / name) for name in ("r.json", "executed.ipynb")}}
    (folder / execution.MARKER).write_text(json.dumps(marker))
    assert migrations.main([str(tmp_path / "results")]) == 0
    assert "migrated gest/15_gest__model-m/r.json" in capsys.readouterr().out
    new = json.loads((folder / "r.json").read_text())
    def same(rows):
        return [{k: v for k, v in r.items() if k not in ("options_hash", "record")} for r in rows]

    assert table.is_measure_record(new) and same(_rows(new)) == same(_rows(old))
    digests = json.loads((folder / execution.MARKER).read_text())["outputs"]
    assert digests == {name: sha256_file(folder / name) for name in ("r.json", "executed.ipynb")}
    assert migrations.main([str(tmp_path / "no-such")]) == 2


def test_a_default_stated_or_left_out_names_the_same_run_and_kept_hashes_are_rewritten(tmp_path):
    """The sweep configs state only what differs from a notebook's defaults: a run's hash
    leaves out the parameters equal to them (``runs.hashed_parameters``), so stating
    ``n_bootstrap: 1000`` (15_gest's default) or leaving it out names the same run, while
    another value is another run. A kept run hashed before (over every stated parameter)
    gets its hash rewritten once (``rehash_run``) and stays done; a stale one is left stale."""
    from polybias import paths
    from polybias.runner.runs import Run

    def run(**params):
        return Run("notebooks/15_gest.py", "gest", "15_gest__model-m", params, None, "polybias")

    stated, left_out = run(model="smollm2-135m-instruct-q4_1", n_bootstrap=1000, seed=0), \
        run(model="smollm2-135m-instruct-q4_1")
    other = run(model="smollm2-135m-instruct-q4_1", n_bootstrap=200)
    root = paths.project_root()
    assert stated.kept_hash() == left_out.kept_hash() != other.kept_hash()
    assert stated.hash_in(root) == left_out.hash_in(root) != other.hash_in(root)

    def kept(name, parameters, digest):
        folder = tmp_path / "gest" / name
        folder.mkdir(parents=True)
        marker = {"status": "kept", "notebook": "notebooks/15_gest.py", "parameters": parameters,
                  "parameters_hash": digest, "files": {}}
        (folder / execution.MARKER).write_text(json.dumps(marker))
        return folder

    before = params_hash({"notebook": "notebooks/15_gest.py", **stated.parameters})  # the scheme before
    current = kept("current", stated.parameters, before)
    stale = kept("stale", stated.parameters, params_hash({"notebook": "notebooks/15_gest.py", "x": 1}))
    assert migrations.rehash_run(current) and not migrations.rehash_run(current)  # once
    marker = json.loads((current / execution.MARKER).read_text())
    assert marker["parameters_hash"] == left_out.kept_hash() and marker["migrated"] == [migrations.REHASH]
    assert not migrations.rehash_run(stale)
    assert json.loads((stale / execution.MARKER).read_text())["parameters_hash"] != left_out.kept_hash()
