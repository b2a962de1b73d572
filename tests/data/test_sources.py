import hashlib
import http.server
import shutil
import subprocess
import threading
from functools import partial

import pytest
from polybias import paths
from polybias.data import sources

SHA = "a" * 64


@pytest.fixture(autouse=True)
def _downloads_as_each_test_sets_them(monkeypatch):
    """These tests make their own network (a local server, a closed port): downloads on,
    whatever the run's POLYBIAS_OFFLINE (make offline-test turns them off)."""
    monkeypatch.delenv("POLYBIAS_OFFLINE", raising=False)


def write_registry(path, body):
    path.write_text(body)
    return path


def test_repository_registry_is_valid():
    reg = sources.load_registry()
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
    with pytest.raises(sources.DataError, match=message):
        sources.load_registry(write_registry(tmp_path / "s.yaml", body))


def test_unknown_source_lists_known():
    with pytest.raises(sources.DataError, match="unknown data source 'nope'.*wefe-wheel"):
        sources.fetch("nope")


def test_mirror_is_used_and_verified(tmp_path, monkeypatch):
    mirror = tmp_path / "mirror"
    f = mirror / "o+r" / "d" / "f.txt"
    f.parent.mkdir(parents=True)
    f.write_text("hello")
    good = hashlib.sha256(b"hello").hexdigest()
    reg = sources.load_registry(write_registry(tmp_path / "s.yaml", f"""sources:
  ok: {{repo: o/r, commit: {"1" * 40}, path: d/f.txt, sha256: {good}, licence: MIT}}
  bad: {{repo: o/r, commit: {"1" * 40}, path: d/f.txt, sha256: {SHA}, licence: MIT}}
"""))
    monkeypatch.setenv("POLYBIAS_DATA_MIRROR", str(mirror))
    assert sources.fetch("ok", reg) == f
    with pytest.raises(sources.DataError, match="sha256 does not match"):
        sources.fetch("bad", reg)


@pytest.fixture
def http_server(tmp_path, monkeypatch):
    # a proxy set for the machine must not catch requests to this local server
    for name in ("NO_PROXY", "no_proxy"):
        monkeypatch.setenv(name, "127.0.0.1,localhost")
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
    reg = sources.load_registry(write_registry(tmp_path / "s.yaml", f"""sources:
  ok: {{url: "{http_server}/file.txt", sha256: {good}, licence: MIT}}
  corrupt: {{url: "{http_server}/file.txt", sha256: {SHA}, licence: MIT}}
"""))
    path = sources.fetch("ok", reg)
    assert path.read_text() == "payload"
    with pytest.raises(sources.DataError, match="failed its sha256"):
        sources.fetch("corrupt", reg)
    assert not any((tmp_path / "cache" / "sources" / "corrupt").glob("*"))
    # a cached copy that went bad is replaced by a fresh, verified download
    path.write_text("tampered")
    assert sources.fetch("ok", reg).read_text() == "payload"


def test_weat_json_from_mirror_matches_wheel(mirror):
    import json

    from_mirror = json.loads(sources.fetch("wefe-weat-json").read_text())
    from_wheel = json.loads(sources.extract_member("wefe-wheel", "wefe/datasets/data/WEAT.json").read_text())
    assert from_mirror == from_wheel


# ------------------------------------------------------------- availability, offline errors

def closed_port_url(path="f.txt"):
    """A URL on this machine where nothing listens: connecting is refused at once."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}/{path}"


def offline_registry():
    """A GitHub-style and a URL source whose URLs cannot be reached."""
    return {
        "gh": sources.Source("gh", closed_port_url("o/r/1/d/f.txt"), hashlib.sha256(b"hello").hexdigest(),
                          "MIT", repo="o/r", commit="1" * 40, path="d/f.txt"),
        "wheel": sources.Source("wheel", closed_port_url("w.whl"), SHA, "MIT"),
    }


def files_under(folder):
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())


def test_availability_mirror_cache_and_offline(tmp_path, monkeypatch):
    monkeypatch.setenv("POLYBIAS_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("POLYBIAS_EMBEDDED", str(tmp_path / "embedded"))
    monkeypatch.delenv("POLYBIAS_DATA_MIRROR", raising=False)
    reg = offline_registry()
    ok, reason = sources.availability("gh", reg)
    assert not ok and "\n" not in reason
    # the source and its remedy first, then why the download failed and its URL
    assert reason == ("data source 'gh' cannot be had: set POLYBIAS_DATA_MIRROR to a folder laid out "
                      "<owner>+<repo>/<path> (holding o+r/d/f.txt), or connect to the network; the "
                      f"download failed (no connection to 127.0.0.1 (offline?)): {reg['gh'].url}")
    ok, reason = sources.availability("wheel", reg)
    assert not ok and reason.startswith(
        f"data source 'wheel' cannot be had: put the file w.whl (sha256 {SHA}) in "
        f"{tmp_path / 'embedded'} or at "
        f"{tmp_path / 'cache' / 'sources' / 'wheel' / 'w.whl'}, or connect to the network; ")
    assert files_under(tmp_path) == []  # a failed attempt leaves nothing
    with pytest.raises(sources.DataError, match="unknown data source 'nope'"):
        sources.availability("nope", reg)
    # the mirror makes it available
    mirror = tmp_path / "mirror"
    (mirror / "o+r" / "d").mkdir(parents=True)
    (mirror / "o+r" / "d" / "f.txt").write_text("hello")
    monkeypatch.setenv("POLYBIAS_DATA_MIRROR", str(mirror))
    assert sources.availability("gh", reg) == (True, "gh: verified copy in the mirror")
    # so does a verified cached copy
    monkeypatch.delenv("POLYBIAS_DATA_MIRROR")
    cached = tmp_path / "cache" / "sources" / "gh" / "f.txt"
    cached.parent.mkdir(parents=True)
    cached.write_text("hello")
    assert sources.availability("gh", reg) == (True, "gh: verified copy in the cache")


def test_availability_downloads_into_the_cache(tmp_path, monkeypatch, http_server):
    monkeypatch.setenv("POLYBIAS_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("POLYBIAS_DATA_MIRROR", raising=False)
    reg = {"ok": sources.Source("ok", f"{http_server}/file.txt", hashlib.sha256(b"payload").hexdigest(), "MIT")}
    assert sources.availability("ok", reg) == (True, f"ok: downloaded from {http_server}/file.txt")
    assert (tmp_path / "cache" / "sources" / "ok" / "file.txt").read_text() == "payload"


def test_fetch_offline_is_one_line(tmp_path, monkeypatch):
    monkeypatch.setenv("POLYBIAS_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("POLYBIAS_DATA_MIRROR", raising=False)
    with pytest.raises(sources.SourceUnreachable) as err:
        sources.fetch("gh", offline_registry())
    assert "\n" not in str(err.value)
    assert str(err.value).startswith("data source 'gh' cannot be had: set POLYBIAS_DATA_MIRROR")
    assert "the download failed (no connection to 127.0.0.1 (offline?))" in str(err.value)
    assert files_under(tmp_path) == []


def test_a_host_that_did_not_connect_is_not_tried_again_at_once(tmp_path, monkeypatch):
    """Offline, the second source of the same host fails at once, with the same cause."""
    import time

    monkeypatch.setenv("POLYBIAS_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("POLYBIAS_DATA_MIRROR", raising=False)
    url = closed_port_url("o/r/1/a.txt")
    reg = {"a": sources.Source("a", url, SHA, "MIT"),
           "b": sources.Source("b", url.replace("a.txt", "b.txt"), SHA, "MIT")}
    with pytest.raises(sources.SourceUnreachable):
        sources.fetch("a", reg)
    tried = []
    monkeypatch.setattr("pooch.retrieve", lambda **kw: tried.append(kw))
    with pytest.raises(sources.SourceUnreachable, match=r"no connection to 127\.0\.0\.1 \(offline\?\)"):
        sources.fetch("b", reg)
    assert tried == []
    # once the memory is older than UNREACHABLE_FOR, the host is tried again
    monkeypatch.setattr(time, "monotonic", lambda: 1e12)
    with pytest.raises(TypeError):  # the stand-in of pooch.retrieve was called and returned None
        sources.fetch("b", reg)
    assert len(tried) == 1


def test_downloads_off_is_unreachable_without_trying(tmp_path, monkeypatch):
    monkeypatch.setenv("POLYBIAS_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("POLYBIAS_OFFLINE", "1")
    monkeypatch.delenv("POLYBIAS_DATA_MIRROR", raising=False)
    monkeypatch.setattr("pooch.retrieve", lambda **kw: pytest.fail("downloaded with downloads off"))
    ok, reason = sources.availability("gh", offline_registry())
    assert not ok and "the download failed (downloads are off: POLYBIAS_OFFLINE=1)" in reason


def test_a_skipped_part_is_one_line_naming_each_source_and_how_to_provide_it(tmp_path, monkeypatch):
    """What a notebook shows in place of its reproduction part when the files it reads
    cannot be had: one line, the first source's whole reason, then each other source with
    what to provide; None once the files can be had (the part then runs, its outputs as
    before)."""
    monkeypatch.setenv("POLYBIAS_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("POLYBIAS_EMBEDDED", str(tmp_path / "embedded"))
    monkeypatch.delenv("POLYBIAS_DATA_MIRROR", raising=False)
    reg = offline_registry()
    reg["gh2"] = sources.Source("gh2", closed_port_url("o/r/1/e.csv"), SHA, "MIT", repo="o/r",
                                commit="1" * 40, path="e.csv")
    note = sources.unavailable_note(["gh", "gh2", "wheel"], "the reproduction of X", reg)
    assert "\n" not in note
    assert note.startswith("(not run: the reproduction of X, skipped because data source 'gh' "
                           "cannot be had: set POLYBIAS_DATA_MIRROR to a folder laid out "
                           "<owner>+<repo>/<path> (holding o+r/d/f.txt), or connect to the network; "
                           "the download failed (no connection to 127.0.0.1 (offline?)): ")
    assert note.endswith(f"; likewise 'gh2' (holding o+r/e.csv), 'wheel' (the file w.whl, sha256 "
                         f"{SHA}). The rest of the notebook does not need them.)")
    assert files_under(tmp_path) == []  # nothing downloaded, nothing half-written
    # with the mirror holding the GitHub files, only the wheel is named
    mirror = tmp_path / "mirror"
    (mirror / "o+r" / "d").mkdir(parents=True)
    (mirror / "o+r" / "d" / "f.txt").write_text("hello")
    monkeypatch.setenv("POLYBIAS_DATA_MIRROR", str(mirror))
    assert sources.unavailable_note(["gh"], "the reproduction of X", reg) is None
    one = sources.unavailable_note(["gh", "wheel"], "the reproduction of X", reg)
    assert one.startswith("(not run: the reproduction of X, skipped because data source 'wheel' "
                          "cannot be had: put the file w.whl") and "'gh'" not in one
    assert one.endswith(". The rest of the notebook does not need it.)")


def test_the_environment_s_embedded_copy_is_used_and_verified(tmp_path, monkeypatch):
    """``make env`` puts the pinned wheels in the environment: read there, sha256-checked,
    with downloads off; a copy that fails its sha256 is an error naming the remedy."""
    monkeypatch.setenv("POLYBIAS_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("POLYBIAS_EMBEDDED", str(tmp_path / "embedded"))
    monkeypatch.setenv("POLYBIAS_OFFLINE", "1")
    (tmp_path / "embedded").mkdir()
    wheel = tmp_path / "embedded" / "w.whl"
    wheel.write_bytes(b"wheel")
    good = hashlib.sha256(b"wheel").hexdigest()
    reg = {"ok": sources.Source("ok", "https://example.org/w.whl", good, "MIT"),
           "bad": sources.Source("bad", "https://example.org/w.whl", SHA, "MIT")}
    assert sources.fetch("ok", reg) == wheel
    assert sources.availability("ok", reg) == (True, "ok: verified copy in the environment")
    with pytest.raises(sources.DataError, match="sha256 does not match .*run make env again"):
        sources.fetch("bad", reg)
    # the remedy of a wheel that make env downloads says so
    monkeypatch.setenv("POLYBIAS_EMBEDDED", str(tmp_path / "not-set-up"))
    ok, reason = sources.availability("wefe-wheel")
    assert not ok and reason.startswith(
        "data source 'wefe-wheel' cannot be had: put the file wefe-1.0.1-py3-none-any.whl (sha256 "
        f"{sources.get_source('wefe-wheel').sha256}) in {tmp_path / 'not-set-up'} (make env does) or at ")
    assert "(make env does)" not in sources.availability("ok", {"ok": reg["bad"]})[1]


def test_embedded_requirements_pin_the_registered_files(tmp_path):
    """Each wheel ``make env`` downloads (data/embedded.txt) carries the sha256 of a registered
    source, so what pip checks is what the fetcher checks; the WEFE wheel is one."""
    assert sources.embedded_sources() == ["wefe-wheel"]
    wheel = sources.get_source("wefe-wheel")
    assert wheel.filename == "wefe-1.0.1-py3-none-any.whl"
    stray = tmp_path / "embedded.txt"
    stray.write_text(f"# a comment\nwefe==1.0.1 --hash=sha256:{SHA}\n")
    with pytest.raises(sources.DataError, match="pins no registered source's sha256"):
        sources.embedded_sources(requirements=stray)


def test_only_a_failed_connection_is_unreachable(tmp_path, monkeypatch, http_server):
    """A missing file (HTTP 404) or a wrong sha256 is an error of the source, not of being
    offline: a plain DataError, which the tests never skip."""
    monkeypatch.setenv("POLYBIAS_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("POLYBIAS_DATA_MIRROR", raising=False)
    reg = {"gone": sources.Source("gone", f"{http_server}/missing.txt", SHA, "MIT"),
           "bad": sources.Source("bad", f"{http_server}/file.txt", SHA, "MIT")}
    for name, says in (("gone", "HTTP 404 from 127.0.0.1"), ("bad", "failed its sha256")):
        with pytest.raises(sources.DataError, match=says) as err:
            sources.fetch(name, reg)
        assert not isinstance(err.value, sources.SourceUnreachable), name


def test_cli_fetch_prints_one_line_and_exits_1(tmp_path, monkeypatch, capsys):
    from polybias import cli

    root = tmp_path / "project"
    (root / "configs").mkdir(parents=True)
    (root / "data").mkdir()
    (root / "pyproject.toml").write_text("")
    (root / "data" / "sources.yaml").write_text(
        f"sources:\n  gh: {{repo: o/r, commit: {'1' * 40}, path: d/f.txt, sha256: {SHA}, licence: MIT}}\n"
        f"  far: {{url: '{closed_port_url()}', sha256: {SHA}, licence: MIT}}\n")
    monkeypatch.setenv("POLYBIAS_ROOT", str(root))
    monkeypatch.setenv("POLYBIAS_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("POLYBIAS_DATA_MIRROR", raising=False)
    assert cli.main(["fetch", "far", "nope"]) == 1
    captured = capsys.readouterr()
    err = captured.err.splitlines()
    assert err[0].startswith("polybias fetch: data source 'far' cannot be had: put the file ")
    assert "the download failed (no connection to 127.0.0.1 (offline?))" in err[0]
    assert err[1].startswith("polybias fetch: unknown data source 'nope'; registered: far, gh")
    assert "Traceback" not in captured.err and captured.out == ""
    assert files_under(tmp_path / "cache") == []


@pytest.mark.skipif(shutil.which("make") is None,
                    reason="needs GNU make, which make env itself needs (e.g. apt-get install make)")
def test_a_corrupt_embedded_wheel_removed_as_the_error_says_is_downloaded_again_by_make_env(
        tmp_path, monkeypatch):
    """The advice of a wheel that fails its sha256, "remove it and run make env again": with
    the wheel gone, make env (a dry run, ``make -n``) downloads the pinned wheels again, though
    its stamp says the environment was set up; with every wheel there it does nothing."""
    venv = tmp_path / "venv"
    folder = venv / "share" / "polybias" / "embedded"
    folder.mkdir(parents=True)
    wheel = folder / sources.get_source("wefe-wheel").filename
    wheel.write_bytes(b"not the pinned wheel")
    for stamp in (".installed", ".embedded"):  # make env ran before
        (venv / stamp).touch()
    monkeypatch.setenv("POLYBIAS_EMBEDDED", str(folder))
    monkeypatch.setenv("POLYBIAS_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("POLYBIAS_OFFLINE", "1")
    with pytest.raises(sources.DataError, match=f"{wheel}: sha256 does not match") as err:
        sources.fetch("wefe-wheel")
    assert str(err.value).endswith("remove it and run make env again")

    def make_env() -> str:
        return subprocess.run(["make", "-n", "-C", str(paths.project_root()), f"VENV={venv}", "env"],
                              capture_output=True, text=True, check=True).stdout

    assert "pip download" not in make_env()
    wheel.unlink()
    planned = make_env()
    assert "pip download" in planned and f"-d {folder}" in planned


def test_a_mirror_copy_failing_its_sha256_is_fixed_by_the_file_at_the_url_it_names(tmp_path, monkeypatch):
    """The advice names the URL of the pinned commit's file; the mirror copy replaced by that
    file (here: the bytes whose sha256 the registry pins) is then read."""
    mirror = tmp_path / "mirror"
    copy = mirror / "o+r" / "d" / "f.txt"
    copy.parent.mkdir(parents=True)
    copy.write_text("an older version")
    pinned = b"the pinned version"
    reg = sources.load_registry(write_registry(tmp_path / "s.yaml", f"""sources:
  f: {{repo: o/r, commit: {"1" * 40}, path: d/f.txt, sha256: {hashlib.sha256(pinned).hexdigest()}, licence: MIT}}
"""))
    monkeypatch.setenv("POLYBIAS_DATA_MIRROR", str(mirror))
    with pytest.raises(sources.DataError, match="corrupt or a different version") as err:
        sources.fetch("f", reg)
    url = str(err.value).rsplit("replace it with the file at ", 1)[1]
    assert url == reg["f"].url and f"/o/r/{'1' * 40}/d/f.txt" in url
    copy.write_bytes(pinned)
    assert sources.fetch("f", reg) == copy
