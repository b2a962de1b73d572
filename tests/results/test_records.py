import json
import os
import stat

import numpy as np
import pytest
from polybias.results import records
from polybias.results.records import RunRecord, params_hash, write_record, write_text_atomic


def rec(**values):
    return RunRecord("weat", "toy", "en", "WEAT 1", {"seed": 0, "ddof": 1}, values, packages={"numpy": "x"})


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


def test_params_hash_ignores_key_order_but_not_values():
    assert params_hash({"a": 1, "b": [1, 2]}) == params_hash({"b": [1, 2], "a": 1})
    assert params_hash({"a": 1}) != params_hash({"a": 2})


def test_package_versions_lists_installed():
    v = records.package_versions(("numpy", "surely-not-a-package"))
    assert v["numpy"] and v["surely-not-a-package"] is None


def test_unserialisable_record_leaves_nothing(tmp_path):
    with pytest.raises(TypeError):
        write_record(rec(bad=object()), tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_atomic_write_failure_keeps_old_file(tmp_path, monkeypatch):
    target = tmp_path / "t.txt"
    write_text_atomic(target, "old")

    def boom(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(records.os, "replace", boom)
    with pytest.raises(OSError):
        write_text_atomic(target, "new")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["t.txt"]


@pytest.mark.parametrize("umask, mode", [(0o022, 0o644), (0o077, 0o600), (0o002, 0o664)])
def test_atomic_writes_get_the_permissions_of_the_umask(tmp_path, umask, mode):
    """Not mkstemp's 0600: colleagues on a shared filesystem read what the umask lets them."""
    old = os.umask(umask)
    try:
        written = write_text_atomic(tmp_path / "a" / "t.txt", "x")
        folder = records.temp_dir(tmp_path, ".build.")
    finally:
        os.umask(old)
    assert stat.S_IMODE(written.stat().st_mode) == mode
    assert stat.S_IMODE(folder.stat().st_mode) == 0o777 & ~umask
    assert written.read_text() == "x" and [p.name for p in written.parent.iterdir()] == ["t.txt"]


def test_nan_values_are_rejected_or_encoded(tmp_path):
    path = write_record(rec(p=float("nan"), d=float("inf")), tmp_path)
    assert json.loads(path.read_text())["values"] == {"p": None, "d": "inf"}
