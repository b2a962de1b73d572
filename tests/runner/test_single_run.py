"""``polybias run NOTEBOOK -p NAME VALUE``: one notebook, one set of parameters."""

import json

import pytest
from polybias import cli, paths
from polybias.runner import single_run


def test_bad_parameters_are_one_line_errors_and_nothing_is_written(tmp_path, capsys):
    out = tmp_path / "out"
    for args, message in [
        (["-p", "modle", "w2v-gnews"], "unknown parameter(s) 'modle' of notebook 01_weat.py"),
        (["-p", "n_permutations", "many"], "parameter 'n_permutations' is int, got 'many'"),
        (["-p", "seed", "1", "-p", "seed", "2"], "parameter(s) given twice: seed"),
        (["-p", "output_dir", "x"], "output_dir is set by the run"),
    ]:
        assert cli.main(["run", "01_weat", *args, "--output", str(out)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and message in err, err
    assert cli.main(["run", "99_nothing"]) == 2
    assert "no notebook '99_nothing'; give a path or one of: 01_weat" in capsys.readouterr().err
    assert not out.exists()


def test_parameters_as_name_value_or_name_equals_value(tmp_path, capsys):
    """``-p NAME=VALUE`` beside ``-p NAME VALUE``; anything else names both forms."""
    out = tmp_path / "out"
    assert cli.main(["run", "01_weat", "-p", "n_permutations=many", "--output", str(out)]) == 2
    assert "parameter 'n_permutations' is int, got 'many'" in capsys.readouterr().err
    assert cli.main(["run", "01_weat", "-p", "seed=1", "-p", "seed", "2", "--output", str(out)]) == 2
    assert "parameter(s) given twice: seed" in capsys.readouterr().err
    for bad in (["-p", "seed"], ["-p", "seed=1", "2"], ["-p", "a", "b", "c"]):
        with pytest.raises(SystemExit) as exit_:
            cli.main(["run", "01_weat", *bad])
        assert exit_.value.code == 2
        assert "takes NAME VALUE or NAME=VALUE" in capsys.readouterr().err
    assert not out.exists()


def test_values_out_of_their_declaration_are_refused_before_a_kernel_starts(tmp_path, capsys,
                                                                          monkeypatch):
    """Allowed values, ranges and joint checks (polybias.studies.parameters) come before the
    run: one line, exit status 2, no kernel, nothing written."""
    from polybias.runner import execution

    monkeypatch.setattr(single_run, "execute_locked", lambda *a, **k: pytest.fail("a kernel started"))
    monkeypatch.setattr(execution, "execute_locked", lambda *a, **k: pytest.fail("a kernel started"))
    out = tmp_path / "out"
    for args, message in [
        (["-p", "n_bootstrap", "-5"], "05_crows_pairs: n_bootstrap must be an integer >= 0, got -5"),
        (["-p", "model", "no-such-model"], "05_crows_pairs: unknown model 'no-such-model'"),
        (["-p", "method", "aul", "-p", "model", "planted-causal"],
         "05_crows_pairs: method 'aul' applies to masked LMs, not to a causal model"),
    ]:
        assert cli.main(["run", "05_crows_pairs", *args, "--output", str(out)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith(f"polybias run: {message}"), err
    assert not out.exists()


def test_values_are_typed_as_papermill_and_checked_against_the_notebook():
    run, folder = single_run.prepare("05_crows_pairs", [("model", "org/model"), ("revision", "1234"),
                                                   ("subset", "gender"), ("n_pairs", "20"),
                                                   ("reproduce", "False")])
    assert run.parameters == {"model": "org/model", "revision": "1234", "subset": ["gender"],
                              "n_pairs": 20, "reproduce": False}
    assert run.notebook == "notebooks/05_crows_pairs.py"
    assert folder == paths.project_root() / "results" / "run" / "05_crows_pairs" / run.key
    again, _ = single_run.prepare("notebooks/05_crows_pairs.py", [("n_pairs", "20"), ("model", "org/model"),
                                                             ("revision", "1234"), ("subset", "[gender]"),
                                                             ("reproduce", "false")])
    assert again.key == run.key  # same notebook and values: the same folder


@pytest.mark.usefixtures("torch_one_thread")
def test_runs_weat_on_one_test(tmp_path, capsys):
    out = tmp_path / "weat7"
    code = cli.main(["run", "01_weat", "-p", "tests", "WEAT7", "-p", "n_permutations", "200",
                     "-p", "reported", "", "-p", "variants_file", "", "--output", str(out)])
    assert code == 0, capsys.readouterr().err
    printed = capsys.readouterr().out
    assert str(out) in printed
    # the headline numbers, read from the run's records: measure, model, test, language, value, n
    assert "headline (" in printed and "weat" in printed and "w2v-gnews on WEAT7 (en)" in printed
    marker = json.loads((out / "run.json").read_text())
    assert marker["status"] == "ok" and marker["parameters"]["tests"] == ["WEAT7"]
    cells = json.loads((out / "executed.ipynb").read_text())["cells"]
    shown = "".join("".join(o.get("text", "")) + "".join(o.get("data", {}).get("text/plain", ""))
                    for c in cells for o in c.get("outputs", []))
    assert "| WEAT7 |" in shown
    records = [p for p in out.rglob("*.json") if p.name != "run.json"]
    assert records and all(json.loads(p.read_text())["model"] == "w2v-gnews" for p in records)


def test_executed_outputs_drop_the_checkout_path_but_not_longer_paths_it_prefixes(tmp_path):
    import nbformat
    from polybias.runner import execution

    root = tmp_path / "repo"
    cell = nbformat.v4.new_code_cell("x")
    cell.outputs = [nbformat.v4.new_output(
        "stream", text=f"{root}/results/a {root} {root}_models/m {root}.\n")]
    nb = nbformat.v4.new_notebook(cells=[cell])
    text = execution.clean_notebook(nb, "n.py", root).cells[0].outputs[0]["text"]
    assert text == f"results/a . {root}_models/m ..\n"
    shown = nbformat.v4.new_output("display_data", data={"text/plain": f"| {root}/results/a |",
                                                         "text/markdown": f"| {root}/results/a |"})
    nb.cells[0].outputs = [shown]
    data = execution.clean_notebook(nb, "n.py", root).cells[0].outputs[0]["data"]
    assert data["text/plain"] == data["text/markdown"] == "| results/a |"


def test_figures_of_a_model_given_by_path_or_hub_id_stay_in_figures(tmp_path, monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from polybias.results import plots

    monkeypatch.setenv("POLYBIAS_OUTPUT_ROOT", str(tmp_path))
    fig = plt.figure()
    for file, name in [("seat_org/name.png", "seat_org-name.png"),
                       ("hidden_/models/my bert.png", "hidden_-models-my-bert.png"),
                       ("crows_planted-mlm_planted.png", "crows_planted-mlm_planted.png")]:
        assert plots.save_figure(fig, file) == tmp_path / "figures" / name
    plt.close(fig)
    assert sorted(p.name for p in (tmp_path / "figures").iterdir()) == [
        "crows_planted-mlm_planted.png", "hidden_-models-my-bert.png", "seat_org-name.png"]


@pytest.mark.usefixtures("torch_one_thread")
def test_runs_crows_on_a_hub_id_from_the_offline_cache_and_records_its_commit(tmp_path, monkeypatch,
                                                                              capsys):
    from polybias.planted.tiny_models import build_tiny_model

    commit = "0123456789abcdef0123456789abcdef01234567"
    repo = tmp_path / "hub" / "models--org--tiny-bert"
    snapshot = repo / "snapshots" / commit
    model, tok = build_tiny_model("bert")
    model.save_pretrained(snapshot)
    tok.save_pretrained(snapshot)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(commit)
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hub"))
    monkeypatch.setenv("POLYBIAS_OUTPUT_ROOT", str(tmp_path / "outputs"))  # figures
    out = tmp_path / "crows"
    code = cli.main(["run", "05_crows_pairs", "-p", "model", "org/tiny-bert", "-p", "device", "cpu",
                     "-p", "n_pairs", "20", "-p", "n_bootstrap", "20", "-p", "reproduce", "false",
                     "--output", str(out)])
    assert code == 0, capsys.readouterr().err
    records = sorted(out.glob("crows*_m-org-tiny-bert_*.json"))
    assert len(records) == 2
    assert all(json.loads(p.read_text())["model_revision"] == commit for p in records)
    capsys.readouterr()
    # a hub id the cache does not hold: the run fails with the loader's one-line reason
    code = cli.main(["run", "05_crows_pairs", "-p", "model", "org/absent", "-p", "n_pairs", "20",
                     "-p", "reproduce", "false", "--output", str(tmp_path / "absent")])
    err = capsys.readouterr().err
    assert code == 1 and err.count("\n") == 1
    assert "ModelError: model 'org/absent' is not in the offline Hugging Face cache" in err


@pytest.mark.parametrize("source", sorted((paths.project_root() / "notebooks").glob("[0-9][0-9]_*.py")),
                         ids=lambda p: p.name)
def test_the_parameters_read_without_jupytext_are_papermill_s(source):
    """Read before anything heavy is imported (runs.percent_parameters_cell, then the
    annotations), the cell is the one jupytext reads, to the character, and the parameters
    and their types are those papermill's inspection gives."""
    import jupytext
    from papermill.translators import PythonTranslator
    from polybias.runner import runs

    cell = next(c for c in jupytext.read(source).cells if "parameters" in c.metadata.get("tags", []))
    assert runs.percent_parameters_cell(source.read_text(encoding="utf-8")) == cell.source
    papermill = {p.name: str(p.inferred_type_name) for p in PythonTranslator.inspect(cell)}
    assert runs.notebook_parameters(source) == papermill
    assert list(runs.notebook_parameters(source)) == list(papermill)


def test_a_run_keeps_its_figures_in_its_folder_and_rewrites_nothing_tracked(tmp_path, capsys):
    import subprocess

    repo = paths.project_root()

    def status():
        return subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=repo,
                              capture_output=True, text=True).stdout

    before = status()
    out = tmp_path / "crows"
    code = cli.main(["run", "05_crows_pairs", "-p", "model=planted-causal", "-p", "n_pairs=20",
                     "-p", "n_bootstrap=0", "-p", "reproduce=False", "--output", str(out)])
    assert code == 0, capsys.readouterr().err
    assert (out / "figures" / "crows_planted-causal_planted.png").is_file()
    assert status() == before


def test_a_run_that_skips_a_part_is_partial_and_says_which(tmp_path, capsys, monkeypatch):
    """The reproduction part of notebook 05 reads seed 001's published scores: with no copy
    of them (empty mirror and cache, downloads off) the notebook skips that part, and the run
    says so, in its marker (``partial``, the part and why) and on screen, instead of ``ok``."""
    monkeypatch.setenv("POLYBIAS_DATA_MIRROR", str(tmp_path / "empty-mirror"))
    monkeypatch.setenv("POLYBIAS_CACHE", str(tmp_path / "empty-cache"))
    monkeypatch.setenv("POLYBIAS_OFFLINE", "1")
    (tmp_path / "empty-mirror").mkdir()
    out = tmp_path / "crows"
    code = cli.main(["run", "05_crows_pairs", "-p", "model=planted-causal", "-p", "n_pairs=20",
                     "-p", "n_bootstrap=0", "-p", "reproduce=True", "--output", str(out)])
    assert code == 0, capsys.readouterr().err
    printed = capsys.readouterr().out
    assert "ran in part (1 part skipped)" in printed
    assert "skipped: the reproduction of seed 001's GPT-2 row: " in printed
    marker = json.loads((out / "run.json").read_text())
    assert marker["status"] == "partial"
    assert list(marker["skipped_parts"]) == ["the reproduction of seed 001's GPT-2 row"]
    assert "gamboa-gpt2-scores" in marker["skipped_parts"]["the reproduction of seed 001's GPT-2 row"]
    assert "headline (" in printed  # the rest ran: its numbers are printed


def test_the_advice_of_a_refused_output_dir_or_notebook_is_what_then_works(tmp_path, capsys):
    """``-p output_dir X`` says to use ``--output DIR``: that option puts the run in X. An
    unknown notebook lists the names to give, or a path: each of those then prepares a run."""
    out = tmp_path / "chosen"
    assert cli.main(["run", "01_weat", "-p", "output_dir", str(out)]) == 2
    assert "(use --output DIR)" in capsys.readouterr().err
    run, folder = single_run.prepare("01_weat", [], output=str(out))
    assert folder == out.resolve() and run.notebook == "notebooks/01_weat.py"
    assert not out.exists()  # prepared, not run
    assert cli.main(["run", "99_nothing"]) == 2
    listed = capsys.readouterr().err.rsplit("give a path or one of: ", 1)[1].strip().split(", ")
    assert "01_weat" in listed and len(listed) > 5
    for name in listed:
        assert single_run.resolve_notebook(name, paths.project_root()).stem == name
    by_path = paths.project_root() / "notebooks" / f"{listed[0]}.py"
    assert single_run.resolve_notebook(str(by_path), paths.project_root()) == by_path.resolve()
