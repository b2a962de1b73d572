"""The measure registry (data/measures.yaml joined with polybias.measures.CODE) and the result type."""

from __future__ import annotations

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
    (lambda r: r["cb"].update(adapter="variance"), "measure 'cb': adapter must be one of weat, .*got 'variance'"),
    (lambda r: r["cb"].update(result=None), "measure 'cb': result must be one of"),
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
