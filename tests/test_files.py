"""The file helpers: canonical hashes, atomic writes with the umask's permissions."""

import os
import stat

import pytest
from polybias import files
from polybias.files import params_hash, write_text_atomic


def test_params_hash_ignores_key_order_but_not_values():
    assert params_hash({"a": 1, "b": [1, 2]}) == params_hash({"b": [1, 2], "a": 1})
    assert params_hash({"a": 1}) != params_hash({"a": 2})


def test_atomic_write_failure_keeps_old_file(tmp_path, monkeypatch):
    target = tmp_path / "t.txt"
    write_text_atomic(target, "old")

    def boom(*a, **k):
        raise OSError("disk full")

    monkeypatch.setattr(files.os, "replace", boom)
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
        folder = files.temp_dir(tmp_path, ".build.")
    finally:
        os.umask(old)
    assert stat.S_IMODE(written.stat().st_mode) == mode
    assert stat.S_IMODE(folder.stat().st_mode) == 0o777 & ~umask
    assert written.read_text() == "x" and [p.name for p in written.parent.iterdir()] == ["t.txt"]
