"""Every measure x dataset x language a notebook takes: each combination passes
check_parameters or is refused with a one-line reason naming what does not fit, never
another error; and every measure is reachable on every dataset and language it applies to.
No model runs: these are parameter checks, not scores."""

import functools
import itertools

import pytest
from polybias.data import stereoset as stereoset_data
from polybias.data.crowspairs import DATASETS
from polybias.metrics import crows
from polybias.models import ModelError
from polybias.planted import synthetic
from polybias.studies import crows_languages, crows_pairs, eurogest, parameters, stereoset
from polybias.studies.parameters import NOTEBOOKS, ParameterError, check_parameters

#: Which model kinds each CrowS-Pairs method scores, written out here as the oracle
#: (metrics.crows.pair_scores); "" lets the model's kind choose.
KINDS_OF_METHOD = {"": {"mlm", "causal"}, "bias-bench": {"mlm", "causal"}, "nangia": {"mlm"},
                   "sss": {"mlm"}, "aul": {"mlm"}, "aula": {"mlm"}, "causal": {"causal"},
                   "lm-eval": {"causal"}}
MODELS = {"mlm": "planted-mlm", "causal": "planted-causal"}  # both registered for en only
LANGUAGES = sorted({lang for langs in DATASETS.values() for lang in langs} | set(synthetic.LANGUAGES))


def _checked(notebook):
    defaults = parameters.defaults(notebook)
    return {name: defaults[name] for name in NOTEBOOKS[notebook].checked}


@pytest.fixture(autouse=True)
def registry_read_once(monkeypatch):
    """The model registry is read once here (the test does not change it), not per check:
    in each study module whose notebook's check reads it."""
    registry = functools.cache(parameters.load_registry)
    for study in (crows_pairs, crows_languages, stereoset, eurogest):
        monkeypatch.setattr(study, "load_registry", registry)


def _refusal(notebook, base, **change):
    """None when the combination passes, else the one-line reason it is refused."""
    try:
        check_parameters(notebook, **{**base, **change})
    except (ParameterError, ModelError) as exc:
        assert "\n" not in str(exc)
        assert str(exc).startswith(f"{notebook}: ") or isinstance(exc, ModelError)
        return str(exc)
    return None


def test_the_oracle_knows_every_crows_method():
    assert set(KINDS_OF_METHOD) == {"", *crows.METHODS}


@pytest.mark.parametrize("dataset", ["planted", *DATASETS])
def test_crows_pairs_every_method_language_and_model_kind(dataset):
    base = _checked("05_crows_pairs")
    own = synthetic.LANGUAGES if dataset == "planted" else DATASETS[dataset]
    for method, language, (kind, model), override in itertools.product(
            KINDS_OF_METHOD, LANGUAGES, MODELS.items(), (False, True)):
        refusal = _refusal("05_crows_pairs", base, dataset=dataset, method=method,
                           language=language, model=model, language_override=override)
        where = (dataset, method, language, model, override)
        if language not in own:
            assert refusal and f"dataset {dataset} has no language {language!r}" in refusal, where
        elif language != "en" and not override:
            assert refusal and f"not {language!r}" in refusal, where
        elif kind not in KINDS_OF_METHOD[method]:
            assert refusal and f"method {method!r}" in refusal and model in refusal, where
        else:
            assert refusal is None, (where, refusal)


def test_crows_pairs_every_method_reaches_every_dataset_and_language():
    base = {**_checked("05_crows_pairs"), "language_override": True}
    unreached = [(dataset, language, method)
                 for dataset in ["planted", *DATASETS]
                 for language in (synthetic.LANGUAGES if dataset == "planted" else DATASETS[dataset])
                 for method in crows.METHODS
                 if all(_refusal("05_crows_pairs", base, dataset=dataset, language=language,
                                 method=method, model=model) for model in MODELS.values())]
    assert unreached == []


@pytest.mark.parametrize("dataset", list(DATASETS))
def test_crows_languages_every_method_language_set_and_model(dataset):
    base = {**_checked("12_crows_languages"), "language_override": True}
    aligned = len(DATASETS[dataset]) > 1
    language_sets = [[], *([lang] for lang in DATASETS[dataset]),
                     *map(list, itertools.combinations(DATASETS[dataset], 2)), ["xx", "en"]]
    for method, languages, model in itertools.product(
            KINDS_OF_METHOD, language_sets, ["published", *MODELS.values()]):
        refusal = _refusal("12_crows_languages", base, dataset=dataset, method=method,
                           languages=languages, model=model)
        where = (dataset, method, languages, model)
        kind = next((k for k, m in MODELS.items() if m == model), None)
        if not aligned:
            assert refusal and "dataset must be one of" in refusal, where
        elif model == "published":
            if dataset == "crows-pairs-dutch":
                assert refusal is None, (where, refusal)
            else:
                assert refusal and "crows-pairs-dutch only" in refusal, where
        elif "xx" in languages:
            assert refusal and f"dataset {dataset} has no language xx" in refusal, where
        elif len(languages) == 1 or (not languages and len(DATASETS[dataset]) < 2):
            assert refusal and "two or more languages" in refusal, where
        elif kind not in KINDS_OF_METHOD[method]:
            assert refusal and f"method {method!r}" in refusal, where
        else:
            assert refusal is None, (where, refusal)


def test_stereoset_every_language_task_and_option():
    base = _checked("14_stereoset")
    tasks = [[t] for t in stereoset_data.TASKS] + [list(stereoset_data.TASKS)]
    intersentence = ["", "conditional", "stereoset", "nsp"]
    models = {"published": None, "bert-base-multilingual-cased": "multi", "planted-causal": "en"}
    for language, task, inter, aggregate, (model, registered) in itertools.product(
            (*stereoset_data.LANGUAGES, "it"), tasks, intersentence, ("per-target", "micro"),
            models.items()):
        refusal = _refusal("14_stereoset", base, language=language, tasks=task, intersentence=inter,
                           aggregate=aggregate, model=model)
        where = (language, task, inter, aggregate, model)
        if language not in stereoset_data.LANGUAGES:
            assert refusal and "language must be one of" in refusal, where
        elif inter == "nsp":
            assert refusal and "intersentence must be one of" in refusal, where
        elif registered == "en" and language != "en":
            assert refusal and f"not {language!r}" in refusal, where
        else:
            assert refusal is None, (where, refusal)
