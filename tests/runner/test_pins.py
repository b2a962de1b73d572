"""``polybias pin CONFIG``: a sweep's hub ids pinned to commits, resolved offline from a
cache laid out like the hub; sweeps pick the pin file up beside their config. ``polybias
lock``, ``--lock`` and ``<stem>.lock.yaml`` are the earlier names, still accepted."""

from __future__ import annotations

import hashlib

import paper_dryrun
import pytest
import yaml
from polybias import cli, paths
from polybias.runner import pins
from polybias.runner.sweep import SweepError, load_sweep


def _sha(repo_id: str) -> str:
    return hashlib.sha1(repo_id.encode()).hexdigest()


def _cache(hub, repo_ids, ref="main"):
    """A hub cache with a snapshot (config.json only) and a ref per hub id."""
    for repo_id in repo_ids:
        repo = hub / ("models--" + repo_id.replace("/", "--"))
        (repo / "snapshots" / _sha(repo_id)).mkdir(parents=True)
        (repo / "snapshots" / _sha(repo_id) / "config.json").write_text("{}")
        (repo / "refs").mkdir(exist_ok=True)
        (repo / "refs" / ref).write_text(_sha(repo_id))


@pytest.fixture
def offline(tmp_path, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf" / "hub"))
    return tmp_path / "hf" / "hub"


SWEEP = {"runs": [
    {"notebook": "notebooks/05_crows_pairs.py", "section": "lock-test",
     "grid": {"model": ["bert-base-uncased", "gpt2", "planted-mlm", "org/direct"]},
     "parameters": {"n_pairs": 20}},
    {"notebook": "notebooks/01_weat.py", "section": "lock-test", "grid": {"model": ["w2v-gnews"]}},
]}


@pytest.fixture
def config(tmp_path):
    path = tmp_path / "small.yaml"
    path.write_text(yaml.safe_dump(SWEEP))
    return path


def test_lock_writes_pins_and_sweeps_use_them(config, offline, capsys):
    _cache(offline, ["bert-base-uncased", "gpt2", "org/direct"])
    assert cli.main(["pin", str(config)]) == 0
    written = config.with_name("small.pins.yaml")
    assert str(written) in capsys.readouterr().out
    assert pins.read_pins(written) == {r: _sha(r) for r in ("bert-base-uncased", "gpt2", "org/direct")}
    revisions = {r.parameters["model"]: r.parameters.get("revision") for r in load_sweep(config)}
    assert revisions == {"bert-base-uncased": _sha("bert-base-uncased"), "gpt2": _sha("gpt2"),
                         "org/direct": _sha("org/direct"), "planted-mlm": None, "w2v-gnews": None}
    plain = {r.key: r for r in load_sweep(config, pins=None)}
    assert all("revision" not in r.parameters for r in plain.values())
    pinned = {r.key: r for r in load_sweep(config)}
    key = "05_crows_pairs__model-gpt2"
    assert pinned[key].params_hash != plain[key].params_hash  # a pinned run is another run
    # --output elsewhere; sweep --pins (or --lock) names it, --no-pins (or --no-lock) ignores
    # the one beside the config
    other = config.parent / "elsewhere.yaml"
    assert cli.main(["pin", str(config), "--output", str(other)]) == 0
    for named in (["--pins", str(other)], ["--lock", str(other)], ["--no-pins"], ["--no-lock"]):
        assert cli.main(["sweep", str(config), *named, "--list"]) == 0, named
    with pytest.raises(SystemExit):
        cli.main(["sweep", str(config), "--pins", str(other), "--no-pins", "--list"])
    assert "--pins and --no-pins exclude each other" in capsys.readouterr().err


def test_unresolvable_hub_id_is_one_line_naming_it(config, offline, capsys):
    _cache(offline, ["bert-base-uncased", "org/direct"])
    assert cli.main(["pin", str(config)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("polybias pin: cannot pin gpt2: ")
    assert "not in the offline Hugging Face cache" in err
    assert not config.with_name("small.pins.yaml").exists()


def test_a_pin_file_missing_a_hub_id_or_malformed_is_an_error(config, tmp_path):
    path = config.with_name("small.pins.yaml")
    path.write_text(yaml.safe_dump({"bert-base-uncased": _sha("x"), "gpt2": _sha("y")}))
    with pytest.raises(SweepError, match=r"hub id org/direct \(run 05_crows_pairs__model-org_direct\) "
                                         r"is not in the pin file .*polybias pin"):
        load_sweep(config)
    path.write_text(yaml.safe_dump({"gpt2": "main"}))
    with pytest.raises(SweepError, match="not a 40-hex commit for gpt2"):
        load_sweep(config)
    bad = dict(SWEEP, runs=[dict(SWEEP["runs"][0], grid={"model": ["gpt2"]},
                                 parameters={"revision": _sha("other")})])
    config.write_text(yaml.safe_dump(bad))
    path.write_text(yaml.safe_dump({"gpt2": _sha("y")}))
    with pytest.raises(SweepError, match="pins gpt2 at .* but the pin file"):
        load_sweep(config)


def test_paper_sweep_pins_from_the_offline_cache(offline, tmp_path):
    _cache(offline, list(paper_dryrun.HUB_STANDINS))
    out = tmp_path / "paper.pins.yaml"
    assert cli.main(["pin", str(paths.project_root() / "configs/sweeps/paper.yaml"),
                     "--output", str(out)]) == 0
    named = set(paper_dryrun.registry_hub_ids(paths.project_root() / "configs/sweeps/paper.yaml")
                .values())
    assert pins.read_pins(out) == {r: _sha(r) for r in named}


def test_the_earlier_names_still_work(config, offline, capsys):
    """``polybias lock`` is ``polybias pin`` under its earlier name (its help says so), and a
    sweep still reads a pin file named ``<stem>.lock.yaml`` when there is no ``.pins.yaml``."""
    _cache(offline, ["bert-base-uncased", "gpt2", "org/direct"])
    with pytest.raises(SystemExit):
        cli.main(["lock", "--help"])
    assert "earlier name of polybias pin" in " ".join(capsys.readouterr().out.split())
    old = config.with_name("small.lock.yaml")
    assert cli.main(["lock", str(config), "--output", str(old)]) == 0
    assert not config.with_name("small.pins.yaml").exists()
    revisions = {r.parameters["model"]: r.parameters.get("revision") for r in load_sweep(config)}
    assert revisions["gpt2"] == _sha("gpt2")
    # the new name wins over the old one when both are there
    config.with_name("small.pins.yaml").write_text(yaml.safe_dump(
        {r: _sha(r + "-new") for r in ("bert-base-uncased", "gpt2", "org/direct")}))
    assert {r.parameters.get("revision") for r in load_sweep(config)
            if r.parameters["model"] == "gpt2"} == {_sha("gpt2-new")}


def test_a_hub_id_missing_from_the_pin_file_is_fixed_by_pinning_again(config, offline, capsys):
    """The error's advice, ``polybias pin CONFIG``, run as it says: the sweep then loads."""
    _cache(offline, ["bert-base-uncased", "gpt2", "org/direct"])
    path = config.with_name("small.pins.yaml")
    path.write_text(yaml.safe_dump({"bert-base-uncased": _sha("bert-base-uncased"),
                                    "gpt2": _sha("gpt2")}))
    with pytest.raises(SweepError, match="hub id org/direct .* is not in the pin file") as err:
        load_sweep(config)
    advice = str(err.value).rsplit("pin again: ", 1)[1]
    assert advice == f"polybias pin {config}"
    assert cli.main(advice.split()[1:]) == 0
    capsys.readouterr()
    pinned = {r.parameters["model"]: r.parameters.get("revision") for r in load_sweep(config)}
    assert pinned["org/direct"] == _sha("org/direct")
