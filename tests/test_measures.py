"""The measure registry (data/measures.yaml joined with the code it names) and the result type."""

from __future__ import annotations

import ast
import inspect
import json

import numpy as np
import pandas as pd
import pytest
import test_measure_contracts as contracts
import yaml
from polybias import measures, paths
from polybias.cli import main as cli
from polybias.results import cards, table
from polybias.results.records import Record, measure_record, write_record
from polybias.studies import validity

#: the planted models of the contract tests, for the contract run on a new measure
planted = contracts.planted


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
        assert m.input_kind in measures.INPUT_KINDS and m.polarity in measures.POLARITIES


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
    (lambda r: r["cb"].update(record_labels="ahn_oh_cb"), "measure 'cb': record_labels must be a list"),
    (lambda r: r["cb"].update(record_labels=["crows-jsd"]),
     "record label 'crows-jsd' of measure 'cb' is already a label of 'jsd-b'"),
    (lambda r: r["cb"].update(record_labels=["weat"]), "record label 'weat' of measure 'cb' is already a measure"),
    (lambda r: r["cb"].update(validity_labels=["cb"]), "measure 'cb': validity_labels must map validity designs"),
    (lambda r: r["cb"].update(validity_labels={"template-mlm": ["kurita-effect-size"]}, validity_units={}),
     "validity label 'kurita-effect-size' of design 'template-mlm' is given to both 'kurita' and 'cb'"),
    (lambda r: r["cb"].update(validity_units={"pll-cb": "variance"}),
     "measure 'cb': validity_units names 'pll-cb', not among its validity_labels"),
    (lambda r: r["cb"].update(validity_units=["variance"]), "measure 'cb': validity_units must map validity labels"),
    (lambda r: r["crows"].update(validity_units={"stereotype-score": "% of pairs"}, validity_labels={
        "crows-mlm": ["stereotype-score"], "crows-causal": ["stereotype-score"]}) or r["jsd-b"].update(
        validity_labels={"toy-design": ["stereotype-score"]}, validity_units={"stereotype-score": "%"}),
     "validity label 'stereotype-score' of measure 'jsd-b' is given two units"),
])
def test_a_malformed_registry_is_refused(tmp_path, edit, message):
    with pytest.raises(measures.MeasureError, match=message):
        measures.load_registry(_registry(tmp_path, edit))


def test_the_shipped_registry_loads_unchanged(tmp_path):
    assert list(measures.load_registry(_registry(tmp_path, lambda r: None))) == list(measures.MEASURES)


def test_the_labels_stored_records_carry_keep_their_measure():
    """The labels written records and the validity sweep's measurements carry (they never
    change) map, through the entries' record_labels and validity_labels, to their measure."""
    stored = {"crows-jsd": "jsd-b", "crows-languages": "crows", "logprob-context": "kurita",
              "stereoset-languages": "stereoset", "ahn_oh_cb": "cb", "pll_cb": "pll-cb",
              "max_kl": "kl-difference", "WEAT": "weat", "SEAT": "seat", "gap": "weat-gap"}
    assert stored.items() <= measures.RECORD_MEASURES.items()
    embedding = {"seat-effect-size": "seat", "ceat-ces": "ceat", "ceat-ces-perm": "ceat"}
    crows = {"stereotype-score": "crows", "jsd-B": "jsd-b"}
    measured = {"weat": {"effect-size": "weat"}, "crows-mlm": crows, "crows-causal": crows,
                "template-mlm": {"kurita-effect-size": "kurita", "cb": "cb", "pll-cb": "pll-cb"},
                "embedding-mlm": embedding, "embedding-encoder": embedding,
                "interactions-mlm": {"interaction-cb": "interaction-cb", "pronoun-cb": "interaction-cb"}}
    for design, labels in measured.items():
        assert labels.items() <= measures.METRIC_MEASURES[design].items(), design
    sd = "in pooled standard deviations (0 = no bias; > 0 toward the planted bias)"
    pairs = "% of pairs (50 = no preference; > 50 toward the planted stereotype)"
    variance = "variance over groups (0 = no bias; larger = more bias)"
    assert measures.VALIDITY_UNITS == {  # the validity figures' units, unchanged
        "effect-size": sd, "seat-effect-size": sd, "ceat-ces": sd, "kurita-effect-size": sd,
        "stereotype-score": pairs, "jsd-B": pairs, "cb": variance, "pll-cb": variance,
        "interaction-cb": variance, "pronoun-cb": variance,
        "g_s": "ratio of masculine rates (1 = no difference; > 1 toward the planted association)"}


def test_the_unsigned_validity_labels_come_from_the_entries_polarity(tmp_path):
    """The validity summaries take ``|p - 0.5|`` as the dose of the labels of unsigned
    measures: the CB family's, and any label an unsigned entry adds."""
    assert measures.UNSIGNED_LABELS == ("cb", "pll-cb", "interaction-cb", "pronoun-cb")
    assert validity.UNSIGNED_METRICS == measures.UNSIGNED_LABELS
    assert all(measures.get(measures.registered_measure(d, label)).polarity == "unsigned"
               for d, labels in measures.METRIC_MEASURES.items() for label in labels
               if label in measures.UNSIGNED_LABELS)

    def edit(raw):
        raw["kl-difference"]["validity_labels"] = {"template-mlm": ["max-kl"]}
        raw["pll-cb"]["polarity"] = "signed"
    edited = measures.load_registry(_registry(tmp_path, edit))
    assert measures.unsigned_labels(edited) == ("cb", "interaction-cb", "pronoun-cb", "max-kl")


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


#: The studies' direct uses of a registered measure's function that report no number of it.
NOT_REPORTED = {("categorical_bias", "kl_matrix"): "distribution_difference gives the whole KL matrix"}


def _registered_functions_used(source: str) -> set[str]:
    """The names by which ``source`` refers to a registered measure's ``function`` (imported
    by name or read as an attribute of its imported module)."""
    functions = {(m.function.__module__, m.function.__name__) for m in measures.MEASURES.values()}
    tree = ast.parse(source)
    imported = {a.asname or a.name: (n.module, a.name) for n in ast.walk(tree)
                if isinstance(n, ast.ImportFrom) and n.module for a in n.names}
    used = set()
    for n in ast.walk(tree):
        if isinstance(n, ast.Name) and imported.get(n.id) in functions:
            used.add(imported[n.id][1])
        elif isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.value.id in imported:
            module, name = imported[n.value.id]
            if (f"{module}.{name}", n.attr) in functions:
                used.add(n.attr)
    return used


def test_studies_runner_and_notebooks_report_registered_measures_through_compute():
    """A study, the runner (the validity sweep and its jobs) and a notebook compute a
    registered measure through measures.compute (docs/architecture.md, "Adding a measure"),
    never by calling the measure's function itself: one producer per number."""
    root = paths.project_root()
    scanned = [*sorted((root / "lib" / "polybias" / "studies").glob("*.py")),
               *sorted((root / "lib" / "polybias" / "runner").glob("*.py")),
               *sorted((root / "notebooks").glob("*.py"))]
    assert len(scanned) > 40 and any(p.parent.name == "notebooks" for p in scanned)
    direct = {(p.stem, name) for p in scanned
              for name in _registered_functions_used(p.read_text(encoding="utf-8"))}
    assert direct == set(NOT_REPORTED)
    planted = "from polybias.metrics.crows import stereotype_score\nstereotype_score(x)\n"
    assert _registered_functions_used(planted) == {"stereotype_score"}
    assert _registered_functions_used("from polybias.metrics import ceat\nceat.ceat(x)\n") == {"ceat"}


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


# ------------------------------------------------------------------ adding a measure

TOY_MODULE = '''"""A toy measure: the gap between the median associations of two target sets."""

import numpy as np

from polybias.metrics.measure import MeasureResult, measure_adapter, measure_result
from polybias.metrics.weat import weat_association


def median_gap(X, Y, A, B) -> float:
    """median_X s(x, A, B) - median_Y s(y, A, B), s the WEAT association."""
    return float(np.median(weat_association(X, A, B, ("X", "A", "B")))
                 - np.median(weat_association(Y, A, B, ("Y", "A", "B"))))


@measure_adapter
def median_gap_adapter(X, Y, A, B):
    return (median_gap(X, Y, A, B), len(X) + len(Y)), {}


@measure_result
def median_gap_result(name, raw, opts):
    value, n = raw
    return MeasureResult(name, value, None, None, "none", n, opts)
'''

TOY_ENTRY = {
    "title": "Median association gap (toy)",
    "summary": "The gap between the median associations of two target sets.",
    "formula": "median_X s(x, A, B) - median_Y s(y, A, B)",
    "inputs": {"X": "(n_x, d) target vectors", "Y": "(n_y, d) target vectors",
               "A": "(n_a, d) attribute vectors", "B": "(n_b, d) attribute vectors"},
    "input_kind": "vectors",
    "function": "toy_median_gap.median_gap",
    "adapter": "toy_median_gap.median_gap_adapter",
    "result": "toy_median_gap.median_gap_result",
    "error": "builtins.ValueError",
    "value_is": "the gap in cosine units",
    "n_is": "|X| + |Y| target items",
    "polarity": "signed",
    "null_value": 0.0,
    "axis": "median association gap, cosine units (0 = no bias)",
    "validity_labels": {"weat": ["median-gap"]},
    "validity_units": {"median-gap": "cosine units (0 = no bias; > 0 toward the planted bias)"},
    "null_hypothesis": "none tested",
    "uncertainty": "none",
    "reference": "the test suite",
    "scorers": ["polybias.engines.static.lookup"],
}


@pytest.fixture
def toy(tmp_path, monkeypatch):
    """A measure added the documented way (docs/architecture.md, "Adding a measure"): one
    metric module with a pure function, its adapter and its result, and one registry
    entry; nothing else of the library is touched. It is put into the registry in use for
    the test only."""
    (tmp_path / "toy_median_gap.py").write_text(TOY_MODULE, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    path = tmp_path / "measures.yaml"
    path.write_text(yaml.safe_dump({"median-gap": TOY_ENTRY}, sort_keys=False), encoding="utf-8")
    (m,) = measures.load_registry(path).values()
    monkeypatch.setitem(measures.MEASURES, "median-gap", m)
    # the tables derived from the registry at import, derived again with the toy in it
    monkeypatch.setattr(measures, "RECORD_MEASURES", measures.record_label_map(measures.MEASURES))
    monkeypatch.setattr(measures, "METRIC_MEASURES", measures.validity_label_map(measures.MEASURES))
    monkeypatch.setattr(measures, "VALIDITY_UNITS", measures.validity_unit_map(measures.MEASURES))
    return m


def test_a_new_measure_is_one_module_and_one_registry_entry(toy):
    import toy_median_gap
    from polybias.results import cards

    rng = np.random.default_rng(0)
    X, Y, A, B = (rng.normal(size=(5, 4)) for _ in range(4))
    r = measures.compute("median-gap", X=X, Y=Y, A=A, B=B)
    assert r.value == toy_median_gap.median_gap(X, Y, A, B) and r.n == 10 and r.p_method == "none"
    text = cards.card("median-gap")
    assert text == cards.card(toy)
    assert "# median-gap: Median association gap (toy)" in text
    assert "Computed by `toy_median_gap.median_gap`: median_X s(x, A, B) - median_Y" in text
    assert "adapter `toy_median_gap.median_gap_adapter`" in text


def test_a_new_measure_gets_the_whole_contract(toy, planted):
    """The contract checks of tests/test_measure_contracts.py, run on the toy measure."""
    contracts.test_deterministic_for_a_seed(name="median-gap")
    contracts.test_swapping_the_target_groups(name="median-gap")
    contracts.test_reordering_items_changes_nothing(name="median-gap")
    contracts.test_malformed_input_raises_the_measures_error("median-gap")
    contracts.test_the_planted_direction_shows_on_the_planted_model("median-gap", planted)


def test_a_new_measure_with_an_unmarked_adapter_is_refused(tmp_path, monkeypatch):
    (tmp_path / "toy_unmarked.py").write_text(TOY_MODULE.replace("@measure_adapter\n", ""), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    entry = {**TOY_ENTRY, "function": "toy_unmarked.median_gap", "adapter": "toy_unmarked.median_gap_adapter",
             "result": "toy_unmarked.median_gap_result"}
    path = tmp_path / "measures.yaml"
    path.write_text(yaml.safe_dump({"median-gap": entry}, sort_keys=False), encoding="utf-8")
    with pytest.raises(measures.MeasureError, match="measure 'median-gap': adapter "
                       "'toy_unmarked.median_gap_adapter' is not marked @measure_adapter"):
        measures.load_registry(path)


def test_a_new_measure_reaches_records_tables_cards_and_the_validity_sweep(toy, tmp_path, capsys):
    """The toy measure, added in one module and one registry entry, reported the way a study
    reports a registered measure: computed through ``measures.compute`` and written with
    ``records.measure_record``. It comes back from ``polybias results`` and ``polybias
    export`` (table and figure, its axis from the entry), it has its card, and its validity
    measurements (label ``median-gap`` of the ``weat`` design, from the entry's
    ``validity_labels``) reach the validity summaries, a validity record, the results table
    and the validity figure's axis (the entry's ``validity_units``). No reader, label table
    or axis table of the library is edited."""
    def vectors(shift, seed):  # X leans toward A and Y toward B by ``shift``
        rng = np.random.default_rng(seed)
        A, B = rng.normal(size=(6, 8)) + 4 * np.eye(8)[0], rng.normal(size=(6, 8)) + 4 * np.eye(8)[1]
        X = rng.normal(size=(5, 8)) + shift * (A.mean(0) - B.mean(0))
        Y = rng.normal(size=(5, 8)) - shift * (A.mean(0) - B.mean(0))
        return {"X": X, "Y": Y, "A": A, "B": B}

    results = tmp_path / "results"
    for model, seed in (("toy-a", 0), ("toy-b", 1)):
        r = measures.compute("median-gap", **vectors(0.5, seed))
        write_record(measure_record(r, model=model, language="en", test="T1",
                                    parameters={"vectors": f"seed {seed}"}), results / "toy" / "run")
    frame = table.read_results(results)
    assert set(frame["metric"]) == {"median-gap"} and len(frame) == 2
    (record,) = [json.loads(p.read_text()) for p in (results / "toy" / "run").glob("*toy-a*.json")]
    assert frame.set_index("model").loc["toy-a", "value"] == record["values"]["value"] > 0
    assert cli(["results", str(results), "--metric", "median-gap"]) == 0
    shown = capsys.readouterr().out
    assert "median-gap" in shown and "toy-a" in shown and "toy-b" in shown
    assert cli(["export", str(results), "--out", str(tmp_path / "export")]) == 0
    assert "toy-a (en)" in (tmp_path / "export" / "median-gap.md").read_text(encoding="utf-8")
    assert (tmp_path / "export" / "median-gap.png").stat().st_size > 0
    assert table.metric_axis("median-gap")[1] == toy.axis

    assert "# median-gap: Median association gap (toy)" in cards.card("median-gap")
    assert cards.generated()["median-gap.md"] == cards.card("median-gap")

    measured = pd.DataFrame([
        {"language": "en", "measure": "weat", "metric": "median-gap", "p": p, "seed": seed,
         "value": measures.compute("median-gap", **vectors(p - 0.5, seed)).value,
         "null": toy.null_value, "pvalue": np.nan, "default": True}
        for p in (0.3, 0.5, 0.7) for seed in range(3)])
    summary = validity.dose_summary(measured).set_index("metric")
    assert summary.loc["median-gap", "monotone"] and summary.loc["median-gap", "sign_ok"]
    assert validity.axis_titles(measured) == {("weat", "median-gap"): toy.axis}
    dose = validity.dose_table(measured)
    write_record(Record(metric="validity", model="planted", language="en", test="dose", parameters={},
                        values={"dose": dose.to_dict("records")}), results / "validity" / "run")
    rows = table.read_results(results / "validity")
    assert set(rows["metric"]) == {"validity:weat:median-gap"} and len(rows) == 3
    assert table.metric_axis("validity:weat:median-gap")[1] == \
        "median-gap, cosine units (0 = no bias; > 0 toward the planted bias)"
