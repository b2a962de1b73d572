"""``polybias profile MODEL``: the runs a model's kind takes, in its languages, as one sweep
apart from the others, and the profile read from the records (polybias.runner.profile)."""

import subprocess
import sys
from pathlib import Path

import pytest
from polybias import cli
from polybias.runner import profile
from polybias.runner.runs import SweepError, read_sweep

REPO = Path(__file__).resolve().parents[2]


def test_the_runs_follow_the_kind_and_the_languages():
    causal = profile.profile_entries("m", "causal")
    notebooks = [e["notebook"].split("/")[1] for e in causal]
    assert notebooks == ["05_crows_pairs.py"] + ["12_crows_languages.py"] * 5 + [
        "14_stereoset.py", "15_gest.py", "16_eurogest.py"]
    assert causal[-1]["grid"]["languages"][:3] == ["cs", "sk", "pl"] and len(causal[-1]["grid"]["languages"]) == 29
    masked = profile.profile_entries("m", "mlm", ["ja", "ru", "fr"])
    assert [(e["notebook"].split("/")[1], e["grid"].get("dataset")) for e in masked] == [
        ("12_crows_languages.py", ["kaneko2022"]), ("14_stereoset.py", None), ("16_eurogest.py", None)]
    assert masked[0]["grid"]["method"] == ["nangia"] and masked[0]["parameters"]["languages"] == ["ja", "ru"]
    assert profile.profile_entries("m", "encoder", ["hi"]) == []
    with pytest.raises(SweepError, match="kind 'decoder'; a profile needs one of causal, mlm"):
        profile.profile_entries("m", "decoder")


def test_the_sweep_is_checked_and_kept_apart_from_the_default_one(tmp_path):
    config = profile.write_profile_sweep("smollm2-135m-instruct-q4_1", "causal", ["ja", "ru"],
                                         tmp_path / "smollm2", REPO)
    runs = read_sweep(config)
    assert [r.key for r in runs] == [
        "12_crows_languages__model-smollm2-135m-instruct-q4_1__dataset-kaneko2022__method-causal",
        "16_eurogest__model-smollm2-135m-instruct-q4_1__languages-ru"]
    assert all(r.folder(REPO).parts[-4:-2] == ("profile", "smollm2") for r in runs)
    assert "kaneko2022-ja" in runs[0].sources and "eurogest-gendered" in runs[1].sources
    with pytest.raises(SweepError, match="no measure of a encoder model has data in hi"):
        profile.write_profile_sweep("minilm-l6", "encoder", ["hi"], tmp_path / "x", REPO)


def test_bad_input_is_one_line(capsys):
    assert cli.main(["profile", "no-such-model"]) == 2
    assert "unknown model 'no-such-model'" in capsys.readouterr().err
    assert cli.main(["profile", "minilm-l6", "--languages", "hi", "--dry-run"]) == 2
    assert "no measure of a encoder model has data in hi" in capsys.readouterr().err


@pytest.mark.integration
def test_profile_of_a_planted_causal_lm_runs_and_leaves_nothing_tracked_changed(mirror):
    """Kaneko et al.'s pairs and EuroGEST in Russian on the planted causal LM: the sweep runs,
    the profile names each number's verdict, and git sees no tracked file changed."""
    before = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO,
                            capture_output=True, text=True).stdout
    proc = subprocess.run([sys.executable, "-c", "import sys; from polybias.cli import entry; "
                           "sys.exit(entry())", "profile", "planted-causal", "--languages", "ja,ru"],
                          cwd=REPO, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    text = (REPO / "results/profile/planted-causal/profile.md").read_text()
    assert "| CrowS-Pairs stereotype score (%) | kaneko2022 | ja |" in text and "not tested" in text
    assert "| EuroGEST g_s | eurogest | ru |" in text
    # the profile notebook ran on those records, its figure in its own run folder
    report = REPO / "results/profile/planted-causal/report/18_profile__profiled-planted-causal"
    assert (report / "executed.ipynb").is_file()
    assert (report / "figures" / "profile_planted-causal.png").is_file()
    assert "notebook results/profile/planted-causal/report/" in proc.stdout
    after = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO,
                           capture_output=True, text=True).stdout
    assert after == before


def test_a_model_without_a_kind_is_told_to_pass_kind_and_passing_it_is_accepted(capsys, monkeypatch):
    """A hub id has no registry entry saying its kind: the error lists ``--kind``'s values, and
    with ``--kind`` the profile goes on to plan its sweep with that kind (stopped there)."""
    assert cli.main(["profile", "org/unregistered-model", "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert "has no registry entry saying its kind; pass --kind" in err
    kinds = err.rsplit("--kind (", 1)[1].split(")")[0].split(", ")
    assert kinds == list(profile.KINDS)
    planned = []

    def stop_at_the_plan(name, kind, languages, folder, root):
        planned.append((name, kind))
        raise SweepError("planned (stopped by the test)")

    monkeypatch.setattr(profile, "write_profile_sweep", stop_at_the_plan)
    for kind in kinds:
        assert cli.main(["profile", "org/unregistered-model", "--kind", kind, "--dry-run"]) == 2
        assert "planned (stopped by the test)" in capsys.readouterr().err
    assert planned == [("org/unregistered-model", kind) for kind in kinds]
