"""Every notebook's parameters (polybias.studies.parameters): each notebook declares them
once, calls the check once, its defaults and every committed sweep run pass, a bad value
is a one-line error naming the notebook, the parameter and what it may be, and the help of
each parameters cell is the declaration's."""

import ast
from pathlib import Path

import jupytext
import pytest
import yaml
from polybias import paths
from polybias.models import ModelError
from polybias.runner.runs import notebook_parameters
from polybias.runner.sweep import load_sweep
from polybias.studies import notebook_parameters as framework
from polybias.studies import parameters
from polybias.studies.parameters import NOTEBOOKS, Parameter, ParameterError, check_parameters

SOURCES = parameters.notebook_sources()
SWEEPS = [p for p in sorted((paths.project_root() / "configs" / "sweeps").glob("*.yaml"))
          if "runs" in yaml.safe_load(p.read_text(encoding="utf-8"))]  # notebook sweeps


def _defaults(source):
    """The parameters cell of a notebook, executed: name -> default value."""
    nb = jupytext.read(source)
    [cell] = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    values = {}
    exec(cell.source, {}, values)
    return {k: v for k, v in values.items() if k != "__annotations__"}


def _checked(name, values=None):
    values = values or parameters.defaults(name)
    return {k: values[k] for k in NOTEBOOKS[name].checked}


def test_every_notebook_is_declared_and_only_they():
    assert sorted(NOTEBOOKS) == [s.stem for s in SOURCES]


def test_the_framework_imports_no_study():
    """Every study module imports polybias.studies.notebook_parameters to declare its
    notebook's parameters, so it imports none of them (that would be a cycle)."""
    tree = ast.parse(Path(framework.__file__).read_text(encoding="utf-8"))
    imported = [node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)] + \
        [alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names]
    assert [m for m in imported if m and m.startswith("polybias.studies")] == []


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_each_notebook_checks_its_parameters_once_and_its_defaults_pass(source):
    text = source.read_text(encoding="utf-8")
    code = "\n".join(line.split("#", 1)[0] for line in text.splitlines())
    assert "raise " not in code, f"{source.name} raises; checks belong in the library"
    assert text.count(f'check_parameters("{source.stem}"') == 1
    defaults = _defaults(source)
    assert parameters.defaults(source.stem) == defaults
    assert list(defaults) == list(NOTEBOOKS[source.stem].parameters)
    assert list(notebook_parameters(source)) == list(defaults)  # papermill reads every one
    check_parameters(source.stem, **_checked(source.stem, defaults))


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: p.stem)
def test_the_help_of_each_parameters_cell_is_its_declaration(source):
    assert parameters.help_differences(source) == []
    for name, declared in NOTEBOOKS[source.stem].parameters.items():
        assert "=" not in declared.render(), f"{name}: papermill skips a line with two '='"


def test_the_help_command_finds_and_rewrites_drifted_help(tmp_path, capsys):
    source = paths.project_root() / "notebooks" / "05_crows_pairs.py"
    drifted = tmp_path / source.name
    text = source.read_text(encoding="utf-8")
    stale = text.replace(f"# {NOTEBOOKS['05_crows_pairs'].parameters['method'].render()}",
                         "# nangia, bias-bench or causal; empty: by the model's kind")
    assert stale != text
    drifted.write_text(stale.replace("n_pairs: int = 200", "pairs: int = 200"), encoding="utf-8")
    assert parameters.main([str(drifted)]) == 1
    out = capsys.readouterr().out
    assert "help of 'method' differs" in out
    assert "parameter 'pairs' is not declared" in out
    assert "declared parameter 'n_pairs' is not in the parameters cell" in out
    assert parameters.main([str(drifted), "--write"]) == 0
    fixed = drifted.read_text(encoding="utf-8")
    assert fixed == text.replace("n_pairs: int = 200", "pairs: int = 200")
    assert parameters.main([str(source)]) == 0


def test_a_declared_default_is_the_library_constant_and_written_from_it(tmp_path, monkeypatch, capsys):
    """A default declared as a library constant (``Parameter.default``) is the value the
    parameters cell writes; a cell that states another value, or a constant that changes,
    is reported, and ``--write`` writes the constant's value."""
    from polybias import stats

    declared = {(nb, name): p.default for nb, decl in NOTEBOOKS.items()
                for name, p in decl.parameters.items() if p.default}
    assert declared[("01_weat", "n_permutations")] == "polybias.stats.N_PERMUTATIONS"
    assert declared[("16_eurogest", "n_bootstrap")] == "polybias.stats.N_BOOTSTRAP"
    assert len(declared) >= 15
    for nb, name in declared:
        assert parameters.defaults(nb)[name] == NOTEBOOKS[nb].parameters[name].default_value(), (nb, name)
    source = paths.project_root() / "notebooks" / "05_crows_pairs.py"
    copy = tmp_path / source.name
    text = source.read_text(encoding="utf-8")
    copy.write_text(text, encoding="utf-8")
    monkeypatch.setattr(stats, "N_BOOTSTRAP", 500)
    assert parameters.main([str(copy)]) == 1
    assert ("the default of 'n_bootstrap' is 1000, not polybias.stats.N_BOOTSTRAP (500)"
            in capsys.readouterr().out)
    assert parameters.main([str(copy), "--write"]) == 0
    assert copy.read_text(encoding="utf-8") == text.replace("n_bootstrap: int = 1000", "n_bootstrap: int = 500")
    assert parameters.defaults("05_crows_pairs")["n_bootstrap"] == 1000  # the project's own cell untouched
    with pytest.raises(parameters.ParameterError, match="names no library constant"):
        parameters.Parameter("x", default="polybias.stats.NO_SUCH").default_value()


def test_allowed_values_come_from_the_library():
    from polybias.data.crowspairs import DATASETS
    from polybias.metrics import crows

    crows_nb = NOTEBOOKS["05_crows_pairs"].parameters
    assert crows_nb["method"].allowed() == crows.METHODS
    assert set(crows_nb["dataset"].allowed()) == {"planted", *DATASETS}
    assert "aul, aula" in crows_nb["method"].render()
    assert set(NOTEBOOKS["12_crows_languages"].parameters["dataset"].allowed()) == \
        {d for d, langs in DATASETS.items() if len(langs) > 1}


def _sweep_runs():
    return [pytest.param(run, id=f"{config.stem}:{run.key}")
            for config in SWEEPS for run in load_sweep(config, pins=None)]


@pytest.mark.parametrize("run", _sweep_runs())
def test_every_committed_sweep_run_passes_its_checks(run, request):
    name = run.notebook.rsplit("/", 1)[-1].removesuffix(".py")
    values = {**parameters.defaults(name), **run.parameters}
    if run.sources:  # the check may read a study's files: without a mirror, skip naming one lacking
        request.getfixturevalue("mirror")
    check_parameters(name, **_checked(name, values))


@pytest.mark.parametrize("notebook, change, message", [
    ("01_weat", {"model_format": "fasttext"}, "model_format must be one of"),
    ("01_weat", {"planted_strength": -0.5}, "planted_strength must be a number >= 0, got -0.5"),
    ("01_weat", {"seed": -1}, "seed must be an integer >= 0, got -1"),
    ("02_seat", {"pooling": "max"}, "pooling must be one of"),
    ("02_seat", {"tests": "sent-weat99"}, r"unknown SEAT tests \['sent-weat99'\]"),
    ("02_seat", {"layer": 1.5}, "layer must be an integer, got 1.5"),
    ("03_ceat", {"n_samples": 1}, "n_samples must be an integer >= 2, got 1"),
    ("03_ceat", {"planted_p": []}, "give a corpus or at least one planted strength"),
    ("03_ceat", {"planted_p": [0.9, 1.2]}, r"planted_p must be a number in \[0, 1\], got 1.2"),
    ("03_ceat", {"alpha": 0}, r"alpha must be a number in \(0, 1\), got 0"),
    ("04_logprob_context", {"planted_p": 1.5}, r"planted_p must be a number in \[0, 1\], got 1.5"),
    ("04_logprob_context", {"y": "male"}, "the two target groups and the two attribute groups must differ"),
    ("04_logprob_context", {"templates": "seed000_bn"}, "cannot read the study's passages of 'seed000_bn'; "
                                                          "use model='planted-analytic'"),
    ("04_logprob_context", {"index_quirk": "kurita"}, r"index_quirk must be one of \('kurita2019',\) or empty"),
    ("05_crows_pairs", {"method": "metric.py"}, "method must be one of"),
    ("05_crows_pairs", {"n_bootstrap": -5}, "n_bootstrap must be an integer >= 0, got -5"),
    ("05_crows_pairs", {"n_pairs": 0}, "n_pairs must be an integer >= 1, got 0"),
    ("05_crows_pairs", {"dataset": "crows"}, "dataset must be one of"),
    ("05_crows_pairs", {"dataset": "crows-pairs", "language": "fr"},
     "dataset crows-pairs has no language 'fr'; it has en"),
    ("05_crows_pairs", {"method": "causal"}, r"method 'causal' does not apply to a mlm model \(planted-mlm\)"),
    ("06_categorical_bias", {"ddof": 2}, "ddof must be one of \\(0, 1\\), got 2"),
    ("06_categorical_bias", {"ddof": True}, "ddof must be one of \\(0, 1\\), got True"),
    ("06_categorical_bias", {"top_k": 0}, "top_k must be an integer >= 1, got 0"),
    ("06_categorical_bias", {"batch_tokens": -1}, "batch_tokens must be an integer >= 0, got -1"),
    ("07_cultural_interactions", {"identity_slots": []}, "identity_slots must name at least one slot"),
    ("07_cultural_interactions", {"n_permutations": 0}, "n_permutations must be an integer >= 1, got 0"),
    ("08_hidden_states", {"slot": "nobody"}, "has no slot 'nobody'"),
    ("09_debiasing", {"tables": ["table99"]}, r"tables not in en/debias.yaml: \['table99'\]"),
    ("09_debiasing", {"scope": "some"}, "scope must be one of"),
    ("09_debiasing", {"extra_limit": -3}, "extra_limit must be an integer >= 0, got -3"),
    ("10_validity", {"alpha": 1.0}, r"alpha must be a number in \(0, 1\), got 1.0"),
    ("10_validity", {"too_high": 0.01}, "need alpha < too_high, got alpha=0.05, too_high=0.01"),
    ("10_validity", {"language": "fr"}, r"language must be one of \('en', 'bn', 'hi'\), got 'fr'"),
    ("11_agreement", {"seeds": 0}, "seeds must be an integer >= 1, got 0"),
    ("11_agreement", {"measures": ["weat", "cb"]}, "measures must be among .*'weat'.*, got 'cb'"),
    ("11_agreement", {"ps": [0.5, float("nan")]}, r"ps must be a number in \[0, 1\], got nan"),
    ("12_crows_languages", {"model": "published", "dataset": "indibias"}, "crows-pairs-dutch only"),
    ("12_crows_languages", {"model": "planted-mlm", "languages": ["nl"], "language_override": True},
     "languages must name two or more languages of crows-pairs-dutch"),
    ("12_crows_languages", {"n_bootstrap": -5}, "n_bootstrap must be an integer >= 0, got -5"),
    ("13_external_validity", {"outcomes": ["odds"]}, "outcomes must be among"),
    ("13_external_validity", {"mlm_men": []}, "mlm_women and mlm_men must be non-empty and of equal length"),
    ("13_external_validity", {"confidence": 95}, r"confidence must be a number in \(0, 1\), got 95"),
    ("15_gest", {"max_items": -1}, "max_items must be an integer >= 0, got -1"),
    ("15_gest", {"max_items": 80}, "max_items applies to a model that is scored"),
    ("15_gest", {"model": "planted-causal", "limit": 10, "max_items": 80}, "not both"),
    ("16_eurogest", {"languages": ["cs", "en"]}, "languages must be among"),
    ("16_eurogest", {"subsets": ["all"]}, "subsets must be among"),
    ("16_eurogest", {"causal_bos": "first-token"}, "causal_bos must be one of"),
    ("16_eurogest", {"min_sentences": 0}, "min_sentences must be an integer >= 1, got 0"),
    ("14_stereoset", {"tasks": []}, "tasks must not be empty"),
    ("14_stereoset", {"languages": ["en", "it"]}, "languages must be among"),
    ("14_stereoset", {"intersentence": "nsp"}, "intersentence must be one of"),
    ("14_stereoset", {"limit": -1}, "limit must be an integer >= 0, got -1"),
    ("14_stereoset", {"n_bootstrap": "many"}, "n_bootstrap must be an integer >= 0, got 'many'"),
])
def test_a_bad_value_names_the_notebook_and_the_parameter(notebook, change, message):
    with pytest.raises(ParameterError, match=f"^{notebook}: .*{message}") as err:
        check_parameters(notebook, **{**_checked(notebook), **change})
    assert "\n" not in str(err.value)


def test_lower_layers_keep_their_errors_and_the_call_is_checked():
    with pytest.raises(ModelError, match="registered for languages \\[en\\], not 'hi'"):
        check_parameters("05_crows_pairs", **{**_checked("05_crows_pairs"), "language": "hi"})
    with pytest.raises(ModelError, match="registered for languages \\[en\\], not 'nl'"):
        check_parameters("12_crows_languages", **{**_checked("12_crows_languages"),
                                                  "model": "planted-mlm", "languages": ["nl", "en"]})
    with pytest.raises(ValueError, match="alternative"):
        check_parameters("01_weat", **{**_checked("01_weat"), "alternative": "sideways"})
    with pytest.raises(ParameterError, match="no parameter checks for notebook '99_x'"):
        check_parameters("99_x")
    with pytest.raises(ParameterError, match="02_seat: missing parameter\\(s\\) .*pooling.*; "
                                             "undeclared parameter\\(s\\) colour"):
        check_parameters("02_seat", colour="red")


@pytest.mark.parametrize("declared, good, bad", [
    (Parameter("x", low=0, high=1), [0, 0.5, 1], [-0.1, 1.1, float("inf"), "0.5", None, True]),
    (Parameter("x", low=0, high=1, open_range=True), [0.5], [0, 1]),
    (Parameter("x", low=1, integer=True), [1, 10**9], [0, 1.0, False]),
    (Parameter("x", values=("a", "b"), empty=True), ["a", "", None], ["c", 1]),
    (Parameter("x", values=("a", "b"), each=True), [["a", "b"], "a"], [[], ["a", "c"], 3]),
])
def test_a_declared_rule_lets_through_only_what_it_declares(declared, good, bad):
    for value in good:
        declared.check("x", value)
    for value in bad:
        with pytest.raises(ParameterError, match="^x must "):
            declared.check("x", value)


def test_a_help_shows_its_values_and_range():
    assert Parameter("scope: {values}", values=("all", "targets")).render() == "scope: all or targets"
    assert Parameter("among {values}", values=("a", "b", "c"), each=True).render() == \
        "among a, b and c"
    assert Parameter("draws ({range})", low=1, integer=True).render() == "draws (at least 1)"
    assert Parameter("level ({range})", low=0, high=1, open_range=True).render() == \
        "level (in (0, 1))"


@pytest.mark.parametrize("config", ["paper.yaml", "multilingual.yaml"])
def test_a_sweep_states_only_the_parameters_that_differ_from_the_defaults(config):
    """The sweeps that keep no executed copy and no records (a copy or a kept record is
    hashed on the parameters its run was given) state a parameter only where it differs
    from the notebook's default, which is the library's."""
    import yaml

    raw = yaml.safe_load((paths.project_root() / "configs" / "sweeps" / config).read_text(encoding="utf-8"))
    assert raw["runs"]
    for i, run in enumerate(raw["runs"]):
        assert "executed" not in run and not run.get("keep_records"), (config, i)
        defaults = parameters.defaults(Path(run["notebook"]).stem)
        same = [k for k, v in (run.get("parameters") or {}).items()
                if k in defaults and defaults[k] == v and type(defaults[k]) is type(v)]
        assert not same, (config, i, run["notebook"], same)


@pytest.mark.parametrize("notebook, bad, advised, message", [
    ("04_logprob_context", {"templates": "seed000_bn"}, {"model": "planted-analytic"},
     "use model='planted-analytic'"),
    ("03_ceat", {"planted_p": []}, {"planted_p": [0.9]}, "give a corpus or at least one planted strength"),
    ("15_gest", {"model": "planted-causal", "limit": 10, "max_items": 80}, {"max_items": 0},
     "give limit (the first sentences) or max_items (a stratified sample), not both"),
    ("05_crows_pairs", {"language": "hi"}, {"language_override": True},
     "or set language_override=True to run it anyway"),
])
def test_the_value_a_refusal_advises_passes_the_checks(notebook, bad, advised, message):
    """Each refusal that names a value to use: with that value (and the rest as refused), the
    notebook's checks pass."""
    values = {**_checked(notebook), **bad}
    with pytest.raises((ParameterError, ModelError)) as err:
        check_parameters(notebook, **values)
    assert message in str(err.value)
    check_parameters(notebook, **{**values, **advised})
