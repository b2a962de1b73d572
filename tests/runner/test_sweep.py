"""Sweep runner on a throw-away project: expansion, runs, resume, failures (the Dask
cluster, faults and GPU resources: test_sweep_faults.py)."""

import json
from pathlib import Path

import pytest
from polybias.results import table as _table  # noqa: F401  (loads the measure registry of this project on import)
from polybias.runner import execution, sweep

NOTEBOOK = '''# %% tags=["parameters"]
x: int = 1  # a number
output_dir: str = "results/x"  # where to write
table_file: str = ""  # table

# %%
import pathlib
if x < 0:
    raise ValueError("negative x")
out = pathlib.Path(output_dir); out.mkdir(parents=True, exist_ok=True)
(out / "value.txt").write_text(str(x * 2))
print("wrote", pathlib.Path(output_dir).resolve())

# %% tags=["nbval-check-output"]
print(x * 2)
'''


@pytest.fixture
def project(empty_project):
    (empty_project / "nb" / "double.py").write_text(NOTEBOOK)
    return empty_project


def config(project, xs, executed=True):
    text = ("kernel: polybias\nruns:\n  - notebook: nb/double.py\n    section: demo\n"
            f"    grid:\n      x: {xs}\n")
    if executed:
        text += "    executed: paper/executed/double_{x}.ipynb\n    table_file: t/{x}.md\n"
    path = project / "sweep.yaml"
    path.write_text(text)
    return path


def test_expand_grid(project):
    runs = sweep.load_sweep(config(project, [1, 2, 3]))
    assert [r.key for r in runs] == ["double__x-1", "double__x-2", "double__x-3"]
    assert runs[0].parameters == {"x": 1, "table_file": "t/1.md"}
    assert runs[0].executed == "paper/executed/double_1.ipynb"
    assert len({r.params_hash for r in runs}) == 3


@pytest.mark.parametrize("body, message", [
    ("runs: [", "malformed YAML"),
    ("runs: []", "non-empty list 'runs:'"),
    ("runs:\n  - grid: {x: [1]}\n", "needs a 'notebook'"),
    ("runs:\n  - notebook: nb/absent.py\n", "not found"),
    ("runs:\n  - notebook: nb/double.py\n    grid: {x: []}\n", "non-empty lists"),
    ("runs:\n  - notebook: nb/double.py\n    grid: {x: [1]}\n    parameters: {x: 2}\n", "both in grid"),
    ("runs:\n  - notebook: nb/double.py\n    grid: {x: [1]}\n    executed: 'a/{y}.ipynb'\n", "not in the grid"),
])
def test_malformed_sweeps(project, body, message):
    path = project / "bad.yaml"
    path.write_text(body)
    with pytest.raises(sweep.SweepError, match=message):
        sweep.load_sweep(path)


def test_sweep_runs_resumes_and_reports_failures(project):
    cfg = config(project, [1, 2, -1])
    outcomes = {o["key"]: o for o in sweep.run_sweep(cfg, jobs=1)}
    assert outcomes["double__x-1"]["status"] == outcomes["double__x-2"]["status"] == "ok"
    failed = outcomes["double__x--1"]
    assert failed["status"] == "failed" and "negative x" in failed["error"]
    assert (project / failed["notebook"]).is_file()
    assert not (project / "results/demo/double__x--1/run.json").exists()
    folders, not_done = sweep.run_folders(cfg)  # what polybias export --sweep reads
    assert folders == [project / "results/demo/double__x-1", project / "results/demo/double__x-2"]
    assert not_done == ["double__x--1"]
    done = project / "results/demo/double__x-2"
    assert (done / "value.txt").read_text() == "4"
    marker = json.loads((done / "run.json").read_text())
    assert marker["status"] == "ok" and marker["parameters"]["output_dir"] == "results/demo/double__x-2"
    executed = json.loads((project / "paper/executed/double_2.ipynb").read_text())
    assert executed["metadata"]["kernelspec"]["name"] == "polybias"
    assert str(project) not in json.dumps(executed)  # no machine paths in the executed copy
    # resume: finished runs are skipped, the failed one is tried again
    again = {o["key"]: o["status"] for o in sweep.run_sweep(cfg, jobs=1)}
    assert again == {"double__x-1": "skipped", "double__x-2": "skipped", "double__x--1": "failed"}
    # an edited notebook invalidates finished runs
    nb = project / "nb/double.py"
    nb.write_text(nb.read_text() + "\n# edited\n")
    assert not sweep.is_done(sweep.load_sweep(cfg)[0])
    # changed parameters invalidate a finished run
    assert sweep.main([str(config(project, [1], executed=False)), "--jobs", "1"]) == 0
    assert json.loads((project / "results/demo/double__x-1/run.json").read_text())["parameters"].get("table_file") is None


RECORD_NOTEBOOK = '''# %% tags=["parameters"]
x: int = 1  # a number
output_dir: str = "results/x"  # where to write

# %%
from polybias.results import records
records.write_record(records.Record(metric="gest", model="m", language="en", test="causal-template1",
                                       parameters={"x": x}, values={"g_s": x, "n": 3}), output_dir)
'''


def test_run_records_reads_the_done_runs_and_names_the_others(empty_project):
    (empty_project / "nb" / "rec.py").write_text(RECORD_NOTEBOOK)
    cfg = empty_project / "sweep.yaml"
    cfg.write_text("kernel: polybias\nruns:\n  - notebook: nb/rec.py\n    section: demo\n"
                   "    grid:\n      x: [1, 2]\n")
    assert [o["status"] for o in sweep.run_sweep(cfg, jobs=1, only="x-2")] == ["ok"]
    shown = sweep.headlines(cfg, [{"key": "rec__x-2", "status": "ok"}, {"key": "rec__x-1",
                                                                         "status": "skipped"}])
    assert shown.splitlines() == ["rec__x-2:", "  gest causal-template1: m on causal-template1 (en) 2, n=3"]
    got = sweep.run_records(cfg, lambda parameters: True)
    assert list(got) == ["rec__x-1", "rec__x-2"] and got["rec__x-1"] is None  # not run: None
    done = got["rec__x-2"]
    assert done[["study", "metric", "value", "n"]].values.tolist() == [["demo", "gest", 2.0, 3]]
    assert list(sweep.run_records(cfg, lambda parameters: parameters["x"] == 1)) == ["rec__x-1"]
    rec = empty_project / "nb" / "rec.py"
    rec.write_text(rec.read_text() + "\n# edited\n")  # another version of the notebook: not done
    assert sweep.run_records(cfg, lambda parameters: True)["rec__x-2"] is None



def test_kept_records_make_a_run_done_in_a_checkout_without_its_results(empty_project):
    """A keep_records run copies its records under paper/records/<section>/<key>/ (what is
    committed); a fresh checkout holding them skips the run and reads its numbers from them,
    an edited notebook leaves them valid, changed parameters or a changed file do not."""
    import shutil

    (empty_project / "nb" / "rec.py").write_text(RECORD_NOTEBOOK)
    cfg = empty_project / "sweep.yaml"
    body = ("kernel: polybias\nruns:\n  - notebook: nb/rec.py\n    section: demo\n"
            "    grid:\n      x: [1, 2]\n    keep_records: true\n")
    cfg.write_text(body)
    assert [o["status"] for o in sweep.run_sweep(cfg, jobs=1, only="x-2")] == ["ok"]
    kept = empty_project / "paper/records/demo/rec__x-2"
    marker = json.loads((kept / "run.json").read_text())
    assert marker["status"] == "kept" and list(marker["files"]) == [
        p.name for p in (empty_project / "results/demo/rec__x-2").glob("*.json") if p.name != "run.json"]
    assert marker["seconds"] > 0 and marker["parameters"] == {"x": 2}
    assert not (empty_project / "paper/records/demo/rec__x-1").exists()
    shutil.rmtree(empty_project / "results")  # a fresh clone: only what is committed
    run = sweep.load_sweep(cfg)[1]
    assert sweep.is_done(run) and run.records_folder(empty_project) == kept
    got = sweep.run_records(cfg, lambda parameters: True)
    assert got["rec__x-1"] is None
    assert got["rec__x-2"][["study", "metric", "value", "n"]].values.tolist() == [["demo", "gest", 2.0, 3]]
    assert sweep.run_folders(cfg) == ([kept], ["rec__x-1"])
    assert {o["key"]: o["status"] for o in sweep.run_sweep(cfg, jobs=1, only="x-2")} == {
        "rec__x-2": "skipped"}
    rec = empty_project / "nb" / "rec.py"
    rec.write_text(rec.read_text() + "\n# narrative edited\n")
    assert sweep.is_done(sweep.load_sweep(cfg)[1])  # kept records are migrated, never rerun
    cfg.write_text(body.replace("keep_records: true", "keep_records: true\n    parameters: {}"))
    record = next(p for p in kept.glob("*.json") if p.name != "run.json")
    record.write_text(record.read_text().replace('"g_s": 2', '"g_s": 3'))
    assert not sweep.is_done(sweep.load_sweep(cfg)[1])  # a changed number is not taken
    cfg.write_text(body.replace("keep_records: true", "keep_records: yes please"))
    with pytest.raises(sweep.SweepError, match="keep_records must be true or false"):
        sweep.load_sweep(cfg)


FIGURE_NOTEBOOK = '''# %% tags=["parameters"]
x: int = 1  # a number
output_dir: str = "results/x"  # where to write

# %%
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
from polybias.results import plots
plots.save_figure(plt.figure(), f"fig_{x}.png")
'''


def test_a_run_without_a_copy_beside_the_paper_keeps_its_figures_in_its_folder(empty_project):
    """Nothing tracked is rewritten by a full-set run, a profile or polybias run: its figures
    go to its run folder; a run whose executed copy the paper shows writes figures/."""
    (empty_project / "nb" / "fig.py").write_text(FIGURE_NOTEBOOK)
    cfg = empty_project / "sweep.yaml"
    cfg.write_text("kernel: polybias\nruns:\n  - notebook: nb/fig.py\n    section: demo\n"
                   "    grid:\n      x: [1]\n  - notebook: nb/fig.py\n    section: paper\n"
                   "    grid:\n      x: [2]\n    executed: paper/executed/fig_{x}.ipynb\n")
    assert [o["status"] for o in sweep.run_sweep(cfg, jobs=1, progress=False)] == ["ok", "ok"]
    assert (empty_project / "results/demo/fig__x-1/figures/fig_1.png").is_file()
    assert sorted(p.name for p in (empty_project / "figures").glob("*.png")) == ["fig_2.png"]
    marker = json.loads((empty_project / "results/demo/fig__x-1/run.json").read_text())
    assert "figures/fig_1.png" in marker["outputs"]  # part of the run, checked on resume
    import os
    assert "POLYBIAS_FIGURES_DIR" not in os.environ

# ----------------------------------------------------------------------- paper sweep
REPO = Path(__file__).resolve().parents[2]
NOTEBOOK_KINDS = {"01_weat": {"static"}, "05_crows_pairs": {"mlm", "causal"},
                  "02_seat": {"encoder", "mlm"}, "03_ceat": {"encoder", "mlm"},
                  "04_logprob_context": {"mlm"}, "06_categorical_bias": {"mlm"},
                  "07_cultural_interactions": {"mlm"}, "08_hidden_states": {"encoder", "mlm"},
                  "09_debiasing": {"static"}}


def commented_blocks(text):
    """The commented-out run entries of a sweep file, parsed as YAML."""
    import yaml

    lines = [ln[4:] for ln in text.splitlines() if ln.startswith("  # ")]
    body = "\n".join(ln for ln in lines if ln.startswith(("- ", "  ")))
    return yaml.safe_load(body) or []


def test_paper_sweep_names_registered_models_and_existing_notebooks(monkeypatch):
    from polybias import models

    monkeypatch.setenv("POLYBIAS_ROOT", str(REPO))
    registry = models.load_registry()
    runs = sweep.load_sweep(REPO / "configs/sweeps/paper.yaml")  # checks each notebook exists
    assert len(runs) >= 21
    text = (REPO / "configs/sweeps/paper.yaml").read_text()
    planned = commented_blocks(text)
    assert len(planned) >= 3
    for entry in planned:
        assert set(entry) <= {"notebook", "section", "grid", "parameters", "resources", "table_file"}
    points = [(r.notebook, r.parameters["model"], r.resources) for r in runs]
    points += [(e["notebook"], m, e.get("resources") or {}) for e in planned for m in e["grid"]["model"]]
    for notebook, model, resources in points:
        assert model in registry, f"{model} ({notebook}) is not in configs/models.yaml"
        kind = registry[model]["kind"]
        assert kind in NOTEBOOK_KINDS[Path(notebook).stem], (model, notebook)
        assert (kind == "static") == (not resources), f"{model}: GPU only for neural models"
    named = {m for _, m, _ in points}
    for study_model in ("bert-base-uncased", "albert-xxlarge-v2", "bert-base-multilingual-uncased",
                        "gpt2", "xlm-roberta-large", "muril-large-cased", "banglabert-large-generator",
                        "banglabert-large", "greekbert", "parsbert", "sea-lion-3b",
                        "sealion-bert-base", "seallms-v3-7b-chat"):
        assert study_model in named


def test_multilingual_sweep_models_are_registered_for_their_notebook_and_languages(monkeypatch):
    """configs/sweeps/multilingual.yaml: every model is registered, of a kind its notebook
    scores, and meant for the dataset languages it is run on (no language_override)."""
    from polybias import models
    from polybias.data import crowspairs

    monkeypatch.setenv("POLYBIAS_ROOT", str(REPO))
    registry = models.load_registry()
    kinds = {**NOTEBOOK_KINDS, "12_crows_languages": {"mlm", "causal"}}
    from polybias.data import stereoset

    runs = sweep.load_sweep(REPO / "configs/sweeps/multilingual.yaml")
    assert {Path(r.notebook).stem for r in runs} == {"05_crows_pairs", "12_crows_languages", "14_stereoset"}
    stereoset_runs = [r for r in runs if Path(r.notebook).stem == "14_stereoset"]
    runs = [r for r in runs if r not in stereoset_runs]
    on_stereoset = set()
    for run in stereoset_runs:
        p = run.parameters
        assert registry[p["model"]]["kind"] in {"mlm", "causal"}, p["model"]
        assert run.resources == {"GPU": 1} and not p.get("language_override")
        languages = [p["language"]] if "language" in p else p["languages"]
        for language in languages:
            models.check_language(p["model"], language, registry=registry)
            on_stereoset.add(language)
        if registry[p["model"]]["kind"] == "mlm":  # no next-sentence head: intrasentence only
            assert p["tasks"] == ["intrasentence"], p["model"]
        assert set(run.sources) <= set(stereoset.dataset_card()["sources"])
    assert on_stereoset == set(stereoset.LANGUAGES)
    covered = set()
    for run in runs:
        p = run.parameters
        model, dataset = p["model"], p["dataset"]
        assert model in registry, f"{model} is not in configs/models.yaml"
        assert registry[model]["kind"] in kinds[Path(run.notebook).stem], (model, run.notebook)
        assert run.resources == {"GPU": 1}
        assert not p.get("language_override")
        languages = [p["language"]] if "language" in p else p["languages"]
        assert set(languages) <= set(crowspairs.DATASETS[dataset]), (dataset, languages)
        if "languages" in p:
            assert len(languages) >= 2
        for language in languages:
            models.check_language(model, language, registry=registry)
            covered.add((dataset, language))
        assert set(run.sources) <= {s for s in crowspairs.dataset_card(dataset)["sources"]}
    for dataset in ("indibias", "crows-pairs-dutch", "kaneko2022", "crows-pairs-steinborn"):
        assert {(dataset, lang) for lang in crowspairs.DATASETS[dataset]} <= covered
    named = {r.parameters["model"] for r in runs}
    assert {"bertje", "robbert-v2-dutch-base", "camembert-base", "bert-base-multilingual-cased",
            "muril-base-cased", "xlm-roberta-large"} <= named


def test_the_sweep_kernel_draws_figures_to_files_only(monkeypatch):
    """Executed notebooks hold no pictures even where the caller's environment names the
    inline backend (as make lab does for a reader)."""
    import asyncio

    monkeypatch.setenv("MPLBACKEND", "module://matplotlib_inline.backend_inline")
    km = execution._kernel_manager_class()(kernel_name="python3")
    _, kw = asyncio.run(km._async_pre_start_kernel())
    assert kw["env"]["MPLBACKEND"] == "Agg"


@pytest.mark.parametrize("config", ["default", "multilingual", "paper"])
def test_the_sweep_configs_state_only_what_differs_from_the_defaults(config):
    """A sweep config's ``parameters`` state no value equal to its notebook's declared
    default (a default lives once, in the notebook's declaration; a run's hash leaves it out,
    so the configs and the kept runs agree either way)."""
    from pathlib import Path

    import yaml
    from polybias import paths
    from polybias.studies import parameters

    raw = yaml.safe_load((paths.project_root() / "configs" / "sweeps" / f"{config}.yaml").read_text())
    restated = []
    for entry in raw["runs"]:
        name = Path(entry["notebook"]).stem
        defaults = parameters.defaults(name) if name in parameters.NOTEBOOKS else {}
        restated += [f"{name}: {k} = {v!r}" for k, v in (entry.get("parameters") or {}).items()
                     if k in defaults and defaults[k] == v]
    assert restated == []


MODEL_NOTEBOOK = '''# %% tags=["parameters"]
model: str = "a"  # a model
output_dir: str = "results/x"  # where to write

# %%
import pathlib
out = pathlib.Path(output_dir); out.mkdir(parents=True, exist_ok=True)
(out / "model.txt").write_text(model)
'''


def test_the_sweep_prepares_the_models_of_its_runs_before_the_first_run(empty_project, monkeypatch,
                                                                        caplog):
    """An embedded model is prepared once, by the sweep, before any notebook starts: never
    inside a notebook (whose executed copy would print it) nor by two runs side by side. A
    model that cannot be prepared is left to its runs."""
    (empty_project / "nb" / "named.py").write_text(MODEL_NOTEBOOK)
    cfg = empty_project / "sweep.yaml"
    cfg.write_text("kernel: polybias\nruns:\n  - notebook: nb/named.py\n    section: demo\n"
                   "    grid:\n      model: [q-gguf, other, q-gguf-2]\n")
    seen = []

    def prepare(name):
        seen.append((name, sorted(p.parent.name for p in empty_project.glob("results/demo/*/model.txt"))))
        if name == "q-gguf-2":
            raise sweep.models.ModelError("package 'p' is not installed")
        return None

    monkeypatch.setattr(sweep.models, "prepare", prepare)
    with caplog.at_level("WARNING", logger="polybias.runner.sweep"):
        outcomes = sweep.run_sweep(cfg, jobs=1, progress=False)
    assert seen == [("other", []), ("q-gguf", []), ("q-gguf-2", [])]  # each once, before any run
    assert [o["status"] for o in outcomes] == ["ok"] * 3
    assert "model 'q-gguf-2' not prepared here (ModelError: package 'p' is not installed)" in caplog.text
    seen.clear()
    sweep.run_sweep(cfg, jobs=1, progress=False)  # all done: nothing to prepare
    assert seen == []
