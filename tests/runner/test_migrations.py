"""Kept records brought to the current shape without recomputing (polybias.runner.migrations)."""

import json

from polybias.files import params_hash, sha256_file
from polybias.runner import execution, migrations


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
