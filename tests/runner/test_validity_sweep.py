"""The validity sweep (polybias.runner.validity_sweep), a sweep of the one runner (kind:
validity): plan, resumable records, summary, and polybias sweep running it.

End to end on 2 strengths x 2 models of the cheapest families (word2vec on 300 sentences,
a causal LM trained one epoch on 300 sentences): about 10 s on one core.
"""

import copy
import hashlib
import json

import pandas as pd
import pytest
import yaml
from polybias import cli, paths
from polybias.runner import sweep
from polybias.runner import validity_sweep as vs
from polybias.runner.locks import RunLock
from polybias.runner.validity_sweep import ValiditySweepError

pytestmark = pytest.mark.usefixtures("torch_one_thread")

TINY = {
    "records_dir": "records", "summary_dir": "summary",
    "blocks": [
        {"language": "en", "family": "word2vec", "ps": [0.5, 0.9], "models_per_strength": 2,
         "null_models": 2},
        {"language": "en", "family": "causal", "ps": [0.5, 0.9], "models_per_strength": 2,
         "null_models": 2},
    ],
    "alpha": 0.05, "n_permutations": 200,
    "word2vec": {"n_sentences": 300}, "mlm": {"n_sentences": 300, "epochs": 1},
    "causal": {"n_sentences": 300, "epochs": 1, "batch_size": 64},
    "sizes": {"weat_words": [4, 8], "seat_words": [8], "ceat_samples": [5],
              "crows_pairs": [10, 20], "kurita_templates": [1]},
    "defaults": {"weat_words": 8, "seat_words": 8, "ceat_samples": 5, "crows_pairs": 20,
                 "kurita_templates": 1},
}


def test_plan_runs_seed_by_seed_then_the_extra_balanced_models():
    cfg = copy.deepcopy(TINY)
    cfg["blocks"][0]["null_models"] = 4
    jobs = vs.plan(vs.check_config(cfg))
    w2v = [(j["p"], j["seed"]) for j in jobs if j["family"] == "word2vec"]
    assert w2v == [(0.5, 0), (0.9, 0), (0.5, 1), (0.9, 1), (0.5, 2), (0.5, 3)]
    assert len(jobs) == 6 + 4


def test_first_strengths_and_the_calibration_models_run_before_the_others():
    cfg = copy.deepcopy(TINY)
    cfg["blocks"] = [{"language": "en", "family": "causal", "ps": [0.1, 0.5, 0.7, 0.9],
                      "first": [0.5, 0.9], "models_per_strength": 2, "null_models": 3}]
    jobs = [(j["p"], j["seed"]) for j in vs.plan(vs.check_config(cfg))]
    assert jobs == [(0.5, 0), (0.9, 0), (0.5, 1), (0.9, 1), (0.5, 2),
                    (0.1, 0), (0.7, 0), (0.1, 1), (0.7, 1)]
    cfg["blocks"][0]["first"] = [0.9]
    with pytest.raises(ValiditySweepError, match="first"):
        vs.check_config(cfg)


@pytest.mark.parametrize("change, message", [
    (lambda c: c.pop("alpha"), "missing keys \\['alpha'\\]"),
    (lambda c: c["blocks"][0].update(family="glove"), "family"),
    (lambda c: c["blocks"][0].update(ps=[0.1, 0.9]), "including 0.5"),
    (lambda c: c["blocks"].append(dict(c["blocks"][0])), "listed twice"),
    (lambda c: c["defaults"].update(crows_pairs=15), "defaults.crows_pairs"),
    (lambda c: c["sizes"].update(sentences=[1]), "unknown sizes"),
])
def test_check_config_names_what_is_wrong(change, message):
    cfg = copy.deepcopy(TINY)
    change(cfg)
    with pytest.raises(ValiditySweepError, match=message):
        vs.check_config(cfg)


def test_the_shipped_config_is_valid_and_covers_every_language():
    from polybias import paths

    cfg = vs.load_config(paths.project_root() / "configs/sweeps/validity.yaml")
    assert {b["language"] for b in cfg["blocks"]} == {"en", "bn", "hi"}
    jobs = vs.plan(cfg)
    for block in cfg["blocks"]:
        mine = [j for j in jobs if (j["language"], j["family"]) == (block["language"], block["family"])]
        at_half = sum(1 for j in mine if j["p"] == 0.5)
        assert at_half == max(block["null_models"], block["models_per_strength"])
        assert block["models_per_strength"] >= 5 and block["null_models"] >= 40


def test_sweep_is_resumable_and_its_summary_names_the_records(tmp_path, monkeypatch):
    monkeypatch.setenv("POLYBIAS_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("POLYBIAS_PLANTED", "auto")
    cfg = vs.check_config(copy.deepcopy(TINY))
    records = tmp_path / "records"
    # two shards split the jobs between them
    half = vs.run_validity(cfg, records, shard=(1, 2), log=lambda *a, **k: None)
    assert half == {"done": 0, "ran": 4, "elsewhere": 0, "jobs": 4}  # the jobs of this shard
    first = vs.run_validity(cfg, records, log=lambda *a, **k: None)
    assert first == {"done": 4, "ran": 4, "elsewhere": 0, "jobs": 8}
    again = vs.run_validity(cfg, records, log=lambda *a, **k: None)
    assert again == {"done": 8, "ran": 0, "elsewhere": 0, "jobs": 8}
    # a lost record is redone, and only it; it comes out identical (deterministic)
    lost = vs.record_path(records, {"language": "en", "family": "causal", "p": 0.9, "seed": 1})
    before = lost.read_bytes()
    lost.unlink()
    assert vs.run_validity(cfg, records, log=lambda *a, **k: None)["ran"] == 1
    assert lost.read_bytes() == before
    # a changed scoring option makes every record stale
    changed = copy.deepcopy(cfg)
    changed["n_permutations"] = 300
    with pytest.raises(ValiditySweepError, match="missing or stale"):
        vs.collect_measurements(changed, records)

    frame, hashes = vs.collect_measurements(cfg, records)
    assert len(hashes) == 8
    for name, sha in hashes.items():
        assert hashlib.sha256((records / name).read_bytes()).hexdigest() == sha
    out = vs.write_summary(frame, hashes, tmp_path / "summary")
    summary = vs.read_summary(out.parent)
    digest = hashlib.sha256(json.dumps(hashes, sort_keys=True, separators=(",", ":"))
                            .encode()).hexdigest()
    assert set(summary["records_sha256"]) == {digest}
    # word2vec: 2 sizes x 4 models; causal: 2 metrics x 2 sizes x 4 models
    counts = summary.groupby("measure").size().to_dict()
    assert counts == {"weat": 8, "crows-causal": 16}
    assert summary[summary["default"]].groupby("measure")["size"].unique().map(list).to_dict() == \
        {"crows-causal": [20], "weat": [8]}
    # a summary edited after the fact no longer matches its manifest
    text = (out.parent / vs.SUMMARY_FILE).read_text().replace(digest, "0" * 64)
    (out.parent / vs.SUMMARY_FILE).write_text(text)
    with pytest.raises(ValiditySweepError, match="records_sha256"):
        vs.read_summary(out.parent)
    assert isinstance(frame, pd.DataFrame)


def test_a_measure_declared_for_a_design_reruns_only_the_model_runs_of_that_design(
        tmp_path, monkeypatch, pair_gap_measure):
    """A pair-scores measure given a validity label for ``crows-causal`` (one module, one
    registry entry) makes the causal cells todo and leaves the word2vec cells done; rerun,
    a causal record keeps its rows byte for byte and gains the new label's, and a committed
    summary without the label no longer counts as holding those records."""
    monkeypatch.setenv("POLYBIAS_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("POLYBIAS_PLANTED", "auto")
    cfg = vs.check_config(copy.deepcopy(TINY))
    records = tmp_path / "records"
    assert vs.run_validity(cfg, records, log=lambda *a, **k: None)["ran"] == 8
    frame, hashes = vs.collect_measurements(cfg, records)
    vs.write_summary(frame, hashes, tmp_path / "summary", blocks=vs.completion(cfg, hashes))
    causal = vs.record_path(records, {"language": "en", "family": "causal", "p": 0.9, "seed": 0})
    before = json.loads(causal.read_text())["rows"]

    pair_gap_measure({"crows-causal": ["pair-gap"]})
    states = {c.job["family"]: c.state() for c in vs.model_runs(cfg, records)}
    assert states == {"word2vec": "done", "causal": "todo"}
    assert vs.run_validity(cfg, records, log=lambda *a, **k: None) == \
        {"done": 4, "ran": 4, "elsewhere": 0, "jobs": 8}
    after = json.loads(causal.read_text())["rows"]
    assert [r for r in after if r["metric"] != "pair-gap"] == before
    gap = [r for r in after if r["metric"] == "pair-gap"]
    assert [(r["measure"], r["size"], r["default"]) for r in gap] == [
        ("crows-causal", 10, False), ("crows-causal", 20, True)]
    committed = vs.committed_records(tmp_path / "summary")
    assert {n.split("/")[1].split("-")[0] for n in vs.held(committed)} == {"word2vec"}


def test_balanced_first_completes_the_balanced_models_block_by_block():
    cfg = copy.deepcopy(TINY)
    cfg["blocks"][0]["null_models"] = 4
    cfg["blocks"][1]["null_models"] = 3
    jobs = vs.balanced_first(vs.check_config(cfg))
    head = [(j["family"], j["p"], j["seed"]) for j in jobs[:4]]
    assert head == [("word2vec", 0.5, 2), ("word2vec", 0.5, 3), ("causal", 0.5, 2), ("word2vec", 0.5, 0)]
    jobs = vs.balanced_first(cfg, ["en/causal"])
    assert [(j["family"], j["seed"]) for j in jobs[:2]] == [("causal", 2), ("word2vec", 2)]
    with pytest.raises(ValiditySweepError, match="unknown blocks"):
        vs.balanced_first(cfg, ["xx/mlm"])
    # the same jobs as the plan, each once
    key = lambda j: (j["language"], j["family"], j["p"], j["seed"])  # noqa: E731
    assert sorted(map(key, jobs)) == sorted(map(key, vs.plan(cfg)))


def _fake_record(records, cfg, job, value):
    """A record as run_validity writes it, without training (the rows are made up)."""
    row = {"language": job["language"], "family": job["family"], "measure": "weat",
           "metric": "effect-size", "p": job["p"], "seed": job["seed"], "size_axis": "words per set",
           "size": 8, "default": True, "value": value, "null": 0.0, "pvalue": 0.5}
    path = vs.record_path(records, job)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"job": job, "job_hash": vs.job_hash(job, cfg), "rows": [row]}))


def test_a_new_summary_carries_the_committed_rows_of_records_it_lacks(tmp_path):
    cfg = copy.deepcopy(TINY)
    cfg["blocks"] = [dict(TINY["blocks"][0], null_models=2)]
    cfg = vs.check_config(cfg)
    old = tmp_path / "old"
    for i, job in enumerate(vs.plan(cfg)):
        _fake_record(old, cfg, job, value=float(i))
    frame, hashes = vs.collect_measurements(cfg, old)
    vs.write_summary(frame, hashes, tmp_path / "summary", blocks=vs.completion(cfg, hashes))
    committed = vs.committed_records(tmp_path / "summary")
    # more balanced models; only the new ones have records on this machine
    bigger = copy.deepcopy(cfg)
    bigger["blocks"][0]["null_models"] = 4
    new = tmp_path / "new"
    fresh = [j for j in vs.plan(bigger) if str(vs.record_path(tmp_path, j).relative_to(tmp_path))
             not in committed["records"]]
    assert [(j["p"], j["seed"]) for j in fresh] == [(0.5, 2), (0.5, 3)]
    for job in fresh:
        _fake_record(new, bigger, job, value=10.0 + job["seed"])
    with pytest.raises(ValiditySweepError, match="missing or stale"):
        vs.collect_measurements(bigger, new)
    merged, merged_hashes = vs.collect_measurements(bigger, new, carry=committed)
    assert len(merged) == 6 and set(merged_hashes.carried) == set(committed["records"])
    assert set(merged_hashes.carried.values()) == {vs.SCORING_VERSION}
    for name, sha in hashes.items():
        assert merged_hashes[name] == sha  # the committed record's own sha256
    half = merged[merged["p"] == 0.5]
    values = dict(zip(half["seed"], half["value"], strict=True))
    assert values == {0: 0.0, 1: 2.0, 2: 12.0, 3: 13.0}
    out = vs.write_summary(merged, merged_hashes, tmp_path / "summary",
                           blocks=vs.completion(bigger, merged_hashes))
    manifest = json.loads((out.parent / vs.MANIFEST_FILE).read_text())
    assert sorted(manifest["carried"]) == sorted(committed["records"])
    assert manifest["blocks"][0]["done"] == 6 and vs.read_summary(out.parent).shape[0] == 6
    # carried again from the new summary, the carried records keep their own version
    again = vs.committed_records(out.parent)
    assert again["carried"] == manifest["carried"] and len(again["rows"]) == 6


def test_a_job_whose_lock_is_held_is_skipped_as_running_elsewhere(tmp_path):
    """Each job runs under the runner's file lock on ``<record>.lock``: while it is held
    (here by other open files, as another process would hold it), the job is neither
    trained nor written, and counts as running elsewhere."""
    cfg = vs.check_config(copy.deepcopy(TINY))
    records = tmp_path / "records"
    held = []
    for job in vs.plan(cfg):
        path = vs.record_path(records, job)
        lock = RunLock(path.parent, name=path.name + ".lock")
        assert lock.acquire()
        held.append(lock)
    logged = []
    try:
        counts = vs.run_validity(cfg, records, log=lambda *a, **k: logged.append(a[0]))
    finally:
        for lock in held:
            lock.release()
    assert counts == {"done": 0, "ran": 0, "elsewhere": 8, "jobs": 8}
    assert not list(records.rglob("*.json"))
    assert len(logged) == 8 and all("running elsewhere (locked by " in line for line in logged)


def _w2v_sweep(tmp_path, kind=True):
    """A validity sweep YAML of five word2vec models (under a second each), records and
    summary under ``tmp_path``."""
    cfg = copy.deepcopy(TINY)
    cfg["blocks"] = [dict(TINY["blocks"][0], null_models=3)]
    cfg["records_dir"] = str(tmp_path / "records")
    cfg["summary_dir"] = str(tmp_path / "summary")
    if kind:
        cfg["kind"] = "validity"
    path = tmp_path / ("validity.yaml" if kind else "old.yaml")
    path.write_text(yaml.safe_dump(cfg))
    return path, vs.check_config(cfg)


def test_polybias_sweep_runs_a_validity_sweep_through_the_one_runner(tmp_path, monkeypatch, capsys):
    """``polybias sweep`` on a ``kind: validity`` YAML: the runner's shards, resume, --list,
    --limit and summary; the records are those the earlier driver writes, byte for byte."""
    monkeypatch.setenv("POLYBIAS_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("POLYBIAS_PLANTED", "auto")
    path, cfg = _w2v_sweep(tmp_path)
    units = sweep.load_sweep(path)
    assert [u.key for u in units] == ["en/word2vec-p0.5-s0", "en/word2vec-p0.9-s0",
                                      "en/word2vec-p0.5-s1", "en/word2vec-p0.9-s1",
                                      "en/word2vec-p0.5-s2"]
    # one shard: its runs ran, the summary refuses the missing others (exit 1)
    assert sweep.main([str(path), "--jobs", "1", "--no-progress", "--shard", "1/2"]) == 1
    out, err = capsys.readouterr()
    assert "sweep: 2 ran" in out and "3 records missing or stale" in err
    assert sweep.main([str(path), "--jobs", "1", "--no-progress", "--limit", "1"]) == 1
    assert "sweep: 1 ran, 2 skipped (2 already done), 0 failed, 2 todo (past --limit 1)" in capsys.readouterr().out
    assert sweep.main([str(path), "--list"]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert [line.split()[0] for line in listed] == ["done", "done", "todo", "done", "todo"]
    assert sweep.main([str(path), "--jobs", "1", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "sweep: 2 ran, 3 skipped (3 already done), 0 failed" in out and "summary of 5 records" in out
    summary = vs.read_summary(tmp_path / "summary")
    assert len(summary) == 10  # 5 models x 2 sizes
    # the earlier driver's records of the same jobs, elsewhere: the same bytes
    vs.run_validity(cfg, tmp_path / "earlier", log=lambda *a, **k: None)
    for unit in units:
        name = unit.key + ".json"
        assert (tmp_path / "earlier" / name).read_bytes() == (tmp_path / "records" / name).read_bytes()
    # the earlier command is an alias of the same runner, for a YAML without a kind too
    old, _ = _w2v_sweep(tmp_path, kind=False)
    assert vs.main([str(old), "--no-progress"]) == 0
    assert "sweep: 0 ran, 5 skipped (5 already done), 0 failed" in capsys.readouterr().out
    assert vs.main([str(old), "--summary-only"]) == 0
    assert "summary of 5 records" in capsys.readouterr().out


def test_the_earlier_command_says_what_it_now_is(capsys):
    with pytest.raises(SystemExit):
        vs.main(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    assert "earlier spelling of `polybias sweep CONFIG --jobs 1`" in text
    assert "--carry-committed" in text and "--shard" in text and "--cluster" in text


def test_the_kind_of_a_sweep_is_checked_and_its_options_kept_to_it(tmp_path, capsys):
    from polybias import paths

    bad = tmp_path / "bad.yaml"
    bad.write_text("kind: papers\nruns: []\n")
    assert sweep.main([str(bad), "--list"]) == 2
    assert "unknown kind 'papers'; valid kinds: notebooks, validity" in capsys.readouterr().err
    default = str(paths.project_root() / "configs/sweeps/default.yaml")
    with pytest.raises(SystemExit) as exit_:
        sweep.main([default, "--list", "--order", "balanced-first"])
    assert exit_.value.code == 2
    assert "--order: options of a validity sweep, not of a notebook sweep" in capsys.readouterr().err
    validity = paths.project_root() / "configs/sweeps/validity.yaml"
    assert sweep.sweep_kind(validity) == "validity" and sweep.sweep_kind(default) == "notebooks"
    with pytest.raises(sweep.SweepError, match="kind 'validity' has no run folders"):
        sweep.run_folders(validity)
    cfg = copy.deepcopy(TINY)
    cfg["kind"] = "notebooks"
    with pytest.raises(ValiditySweepError, match="kind must be 'validity'"):
        vs.check_config(cfg)


def _recipe(target: str) -> list[str]:
    """The recipe lines of ``target`` in the project's Makefile."""
    lines = (paths.project_root() / "Makefile").read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"{target}:"))
    out = []
    for line in lines[start + 1:]:
        if not line.startswith("\t"):
            break
        out.append(line.strip())
    return out


def test_missing_records_or_languages_advise_make_validity_which_runs_the_validity_sweep(tmp_path):
    """Records missing from the sweep's records_dir, or a language missing from the committed
    summary, say ``run make validity``: that target runs the committed validity sweep, whose
    records_dir and summary_dir are the folders these errors read."""
    cfg = copy.deepcopy(TINY)
    cfg["blocks"] = [dict(TINY["blocks"][0], null_models=2)]
    cfg = vs.check_config(cfg)
    jobs = vs.plan(cfg)
    for i, job in enumerate(jobs[1:]):  # the first job's record is missing
        _fake_record(tmp_path / "records", cfg, job, value=float(i))
    with pytest.raises(ValiditySweepError, match=r"1 records missing or stale .*\(run make validity\)"):
        vs.collect_measurements(cfg, tmp_path / "records")
    frame, hashes = vs.collect_measurements(cfg, tmp_path / "records", allow_missing=True)
    vs.write_summary(frame, hashes, tmp_path / "summary", blocks=vs.completion(cfg, hashes))
    with pytest.raises(ValiditySweepError, match=r"no measurements for language 'xx' .*; run make validity"):
        vs.language_summary(tmp_path / "summary", "xx")
    assert vs.language_summary(tmp_path / "summary", "en")[0].shape[0] == len(jobs) - 1
    recipe = " ".join(_recipe("validity"))
    assert "polybias sweep configs/sweeps/validity.yaml" in recipe
    shipped = paths.read_yaml(paths.project_root() / "configs/sweeps/validity.yaml")
    assert shipped["kind"] == "validity" and shipped["summary_dir"] == "data/validity"
    assert "language_summary(summary_dir" in (paths.project_root() / "notebooks/10_validity.py").read_text()


def test_exporting_a_validity_sweep_names_the_folder_polybias_results_reads(tmp_path, capsys):
    """``polybias export --sweep`` of a validity sweep is one line (no traceback) naming
    ``polybias results RECORDS_DIR``; that command then reads the sweep's records."""
    cfg = copy.deepcopy(TINY)
    cfg["blocks"] = [dict(TINY["blocks"][0], null_models=2)]
    checked = vs.check_config(copy.deepcopy(cfg))
    records = tmp_path / "records"
    jobs = vs.plan(checked)
    for i, job in enumerate(jobs):
        _fake_record(records, checked, job, value=float(i))
    config = tmp_path / "validity.yaml"
    config.write_text(yaml.safe_dump({"kind": "validity", **cfg, "records_dir": str(records)}))
    assert cli.main(["export", "--sweep", str(config), "--out", str(tmp_path / "out")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "kind 'validity' has no run folders" in err
    advice = err.rsplit("are read with ", 1)[1].split()
    assert advice == ["polybias", "results", str(records)]
    assert cli.main([*advice[1:], "--csv", str(tmp_path / "all.csv")]) == 0
    assert len(pd.read_csv(tmp_path / "all.csv")) == len(jobs)
    assert not (tmp_path / "out").exists()
