"""Every notebook's parameter checks (polybias.studies.parameters): each notebook calls
them once, its defaults pass, and a bad value is a one-line error naming the notebook and
the parameter."""

import inspect
import re

import jupytext
import pytest
from polybias import paths
from polybias.models import ModelError
from polybias.studies.parameters import CHECKS, ParameterError, check_parameters

NOTEBOOKS = sorted((paths.project_root() / "notebooks").glob("[0-9][0-9]_*.py"))


def _defaults(source):
    """The parameters cell of a notebook, executed: name -> default value."""
    nb = jupytext.read(source)
    [cell] = [c for c in nb.cells if "parameters" in c.metadata.get("tags", [])]
    values = {}
    exec(cell.source, {}, values)
    return values


def _checked(name):
    source = paths.project_root() / "notebooks" / f"{name}.py"
    defaults = _defaults(source)
    return {k: defaults[k] for k in inspect.signature(CHECKS[name]).parameters}


@pytest.mark.parametrize("source", NOTEBOOKS, ids=lambda p: p.stem)
def test_each_notebook_checks_its_parameters_once_and_its_defaults_pass(source):
    text = source.read_text(encoding="utf-8")
    assert "raise " not in re.sub(r"#.*", "", text), f"{source.name} raises; checks belong in the library"
    assert text.count(f'check_parameters("{source.stem}"') == 1
    defaults = _defaults(source)
    names = list(inspect.signature(CHECKS[source.stem]).parameters)
    assert set(names) <= set(defaults), set(names) - set(defaults)  # checks only real parameters
    check_parameters(source.stem, **{k: defaults[k] for k in names})


@pytest.mark.parametrize("notebook, change, message", [
    ("01_weat", {"model_format": "fasttext"}, "model_format must be one of"),
    ("02_seat", {"pooling": "max"}, "pooling must be one of"),
    ("02_seat", {"tests": "sent-weat99"}, r"unknown SEAT tests \['sent-weat99'\]"),
    ("03_ceat", {"n_samples": 1}, "n_samples must be at least 2"),
    ("03_ceat", {"planted_p": []}, "give a corpus or at least one planted strength"),
    ("04_logprob_context", {"planted_p": 1.5}, "planted_p must be a probability, got 1.5"),
    ("04_logprob_context", {"y": "male"}, "the two target groups and the two attribute groups must differ"),
    ("04_logprob_context", {"templates": "seed000_bn"}, "cannot read the study's passages of 'seed000_bn'; "
                                                          "use model='planted-analytic'"),
    ("05_crows_pairs", {"method": "metric.py"}, "method must be one of"),
    ("06_categorical_bias", {"ddof": 2}, "ddof must be one of \\(0, 1\\), got 2"),
    ("06_categorical_bias", {"top_k": 0}, "top_k must be a positive integer, got 0"),
    ("07_cultural_interactions", {"identity_slots": []}, "identity_slots must name at least one slot"),
    ("08_hidden_states", {"slot": "nobody"}, "has no slot 'nobody'"),
    ("09_debiasing", {"tables": ["table99"]}, r"tables not in en/debias.yaml: \['table99'\]"),
    ("09_debiasing", {"scope": "some"}, "scope must be one of"),
    ("10_validity", {"alpha": 1.0}, r"alpha must be in \(0, 1\), got 1.0"),
    ("10_validity", {"too_high": 0.01}, "need alpha < too_high, got alpha=0.05, too_high=0.01"),
    ("11_agreement", {"seeds": 0}, "seeds must be a positive integer, got 0"),
    ("12_crows_languages", {"model": "published", "dataset": "indibias"}, "crows-pairs-dutch only"),
    ("13_external_validity", {"outcomes": ["odds"]}, "outcomes must be among"),
    ("13_external_validity", {"mlm_men": []}, "mlm_women and mlm_men must be non-empty and of equal length"),
])
def test_a_bad_value_names_the_notebook_and_the_parameter(notebook, change, message):
    with pytest.raises(ParameterError, match=f"^{notebook}: .*{message}") as err:
        check_parameters(notebook, **{**_checked(notebook), **change})
    assert "\n" not in str(err.value)


def test_lower_layers_keep_their_errors_and_the_call_is_checked():
    with pytest.raises(ModelError, match="registered for languages \\[en\\], not 'hi'"):
        check_parameters("05_crows_pairs", **{**_checked("05_crows_pairs"), "language": "hi"})
    with pytest.raises(ValueError, match="alternative"):
        check_parameters("01_weat", **{**_checked("01_weat"), "alternative": "sideways"})
    with pytest.raises(ParameterError, match="no parameter checks for notebook '99_x'"):
        check_parameters("99_x")
    with pytest.raises(ParameterError, match="02_seat: missing parameter\\(s\\) .*pooling.*; "
                                             "unchecked parameter\\(s\\) colour"):
        check_parameters("02_seat", colour="red")
