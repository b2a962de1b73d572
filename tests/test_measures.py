"""The measure registry (data/measures.yaml joined with the code it names) and the result type."""

from __future__ import annotations

import ast
import inspect

import numpy as np
import pytest
import yaml
from polybias import measures, paths


def _registry(tmp_path, edit):
    raw = yaml.safe_load((paths.data_dir() / "measures.yaml").read_text(encoding="utf-8"))
    edit(raw)
    path = tmp_path / "measures.yaml"
    path.write_text(yaml.safe_dump(raw, allow_unicode=True, sort_keys=False), encoding="utf-8")
    return path


def test_every_registered_measure_is_complete():
    assert len(measures.MEASURES) >= 14
    for m in measures.MEASURES.values():
        assert m.reference and m.null_hypothesis and m.uncertainty and m.inputs, m.name
        assert m.value_is and m.n_is and m.summary and m.formula, m.name
        assert m.input_kind in measures.INPUT_KINDS and m.polarity in ("signed", "unsigned")


@pytest.mark.parametrize(("edit", "message"), [
    (lambda r: r["cb"].update(adapter="variance"), "measure 'cb': adapter must be the dotted name .*got 'variance'"),
    (lambda r: r["cb"].update(result=None), "measure 'cb': result must be the dotted name"),
    (lambda r: r["cb"].update(adapter="polybias.metrics.catbias.cb_adaptor"),
     "measure 'cb': adapter 'polybias.metrics.catbias.cb_adaptor' cannot be imported"),
    (lambda r: r["cb"].update(adapter="polybias.metrics.catbias.cb_result"),
     "measure 'cb': adapter 'polybias.metrics.catbias.cb_result' is not marked @measure_adapter"),
    (lambda r: r["kl-difference"].update(result="polybias.metrics.catbias.kl_matrix"),
     "measure 'kl-difference': result 'polybias.metrics.catbias.kl_matrix' is not marked @measure_result"),
    (lambda r: r["weat"].update(scorers="a static embedding"), "measure 'weat': scorers must be a list of dotted"),
    (lambda r: r["weat"].pop("scorers"), "measure 'weat': scorers must be a list of dotted"),
    (lambda r: r["weat"].update(scorer="polybias.engines.static.lookup"), "measure 'weat': .*scorer"),
    (lambda r: r["weat"].update(function="polybias.metrics.weat.wheat"),
     "measure 'weat': function 'polybias.metrics.weat.wheat' cannot be imported"),
    (lambda r: r["ceat"].update(error="polybias.metrics.ceat.ceat"),
     "measure 'ceat': function must name a function and error an exception type"),
    (lambda r: r["crows"].update(input_kind="pairs"), "measure 'crows': input_kind must be one of"),
    (lambda r: r["crows"].update(colour="red"), "measure 'crows': .*colour"),
])
def test_a_malformed_registry_is_refused(tmp_path, edit, message):
    with pytest.raises(measures.MeasureError, match=message):
        measures.load_registry(_registry(tmp_path, edit))


def test_the_shipped_registry_loads_unchanged(tmp_path):
    assert list(measures.load_registry(_registry(tmp_path, lambda r: None))) == list(measures.MEASURES)


def test_result_summary_is_one_flat_row():
    X = np.array([[1., .1], [1., .2], [.9, .1]])
    Y = np.array([[.1, 1.], [.2, 1.], [.1, .9]])
    r = measures.compute("weat", X=X, Y=Y, A=np.array([[1., 0.]]), B=np.array([[0., 1.]]))
    row = r.summary()
    assert row == {"measure": "weat", "value": r.value, "ci_low": None, "ci_high": None,
                   "ci_level": None, "p_value": r.p_value, "p_method": "permutation-exact", "n": 6}
    assert r.options == {"ddof": 1, "alternative": "greater", "n_permutations": 100_000,
                         "exact_limit": 1_000_000, "seed": 0}
    assert list(r.details.columns) == ["set", "item", "association"] and len(r.details) == 6


def test_every_scorer_resolves_and_takes_the_options_it_is_named_with():
    """``scorers`` are checked for their form when the registry loads; here each is
    imported (that loads the engines) and the options written in parentheses must be
    parameters of the function."""
    for m in measures.MEASURES.values():
        for scorer in m.scorers:
            func = measures.scorer_function(scorer)
            assert callable(func), (m.name, scorer)
            if "(" in scorer:
                call = ast.parse(scorer, mode="eval").body
                assert isinstance(call, ast.Call) and not call.args, (m.name, scorer)
                params = inspect.signature(func).parameters
                assert all(k.arg in params for k in call.keywords), (m.name, scorer)


def test_adapters_and_results_live_beside_their_function():
    from polybias.metrics.measure import role

    for m in measures.MEASURES.values():
        assert role(m.adapter) == "adapter" and role(m.convert.func) == "result", m.name
        module = m.function.__module__
        assert m.adapter.__module__ == m.convert.func.__module__ == module, m.name


def test_the_result_types_are_reexported():
    from polybias.metrics import measure

    assert measures.MeasureResult is measure.MeasureResult and measures.Interval is measure.Interval
    assert measures.P_METHODS == measure.P_METHODS
