import json

import numpy as np
import pytest
from polybias.results import records
from polybias.results.records import Record, write_record


def rec(**values):
    return Record("weat", "toy", "en", "WEAT 1", {"seed": 0, "ddof": 1}, values, packages={"numpy": "x"})


def test_record_fields_and_determinism(tmp_path):
    r = rec(effect_size=np.float64(1.5), sizes={"X": np.int64(3)}, arr=np.arange(2))
    path = write_record(r, tmp_path)
    assert path.name == "weat_m-toy_l-en_t-weat-1.json"
    data = json.loads(path.read_text())
    for key in ("run_id", "metric", "model", "model_revision", "language", "test", "parameters",
                "params_hash", "values", "data_sha256", "packages"):
        assert key in data
    assert data["values"] == {"effect_size": 1.5, "sizes": {"X": 3}, "arr": [0, 1]}
    first = path.read_bytes()
    write_record(rec(effect_size=np.float64(1.5), sizes={"X": np.int64(3)}, arr=np.arange(2)), tmp_path)
    assert path.read_bytes() == first


def test_package_versions_lists_installed():
    v = records.package_versions(("numpy", "surely-not-a-package"))
    assert v["numpy"] and v["surely-not-a-package"] is None


def test_unserialisable_record_leaves_nothing(tmp_path):
    with pytest.raises(TypeError):
        write_record(rec(bad=object()), tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_nan_values_are_rejected_or_encoded(tmp_path):
    path = write_record(rec(p=float("nan"), d=float("inf")), tmp_path)
    assert json.loads(path.read_text())["values"] == {"p": None, "d": "inf"}
