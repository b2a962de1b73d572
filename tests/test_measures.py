"""The measure registry (data/measures.yaml joined with the code it names) and the result type."""

from __future__ import annotations

import ast
import inspect

import numpy as np
import pytest
import test_measure_contracts as contracts
import yaml
from polybias import measures, paths
from polybias.cli import main as cli
from polybias.results import cards, table
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
    assert {  # the validity figures' units of the labels stored records carry, unchanged
        "effect-size": sd, "seat-effect-size": sd, "ceat-ces": sd, "kurita-effect-size": sd,
        "stereotype-score": pairs, "jsd-B": pairs, "cb": variance, "pll-cb": variance,
        "interaction-cb": variance, "pronoun-cb": variance,
        "g_s": "ratio of masculine rates (1 = no difference; > 1 toward the planted association)"
    }.items() <= measures.VALIDITY_UNITS.items()


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
def toy(register_measure):
    """A measure added the documented way (docs/architecture.md, "Adding a measure"): one
    metric module with a pure function, its adapter and its result, and one registry
    entry; nothing else of the library is touched. It is put into the registry in use for
    the test only (tests/conftest.py, ``register_measure``)."""
    return register_measure("median-gap", "toy_median_gap", TOY_MODULE, TOY_ENTRY)


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


def test_a_new_measure_reaches_a_study_results_export_card_and_the_validity_sweep(
        pair_gap_measure, tmp_path, monkeypatch, capsys):
    """A pair-scores measure added the documented way (docs/architecture.md, "Adding a
    measure"): one metric module and one registry entry (``pair-gap``, tests/conftest.py),
    with a validity label for the ``crows-causal`` design; nothing else of the library is
    edited. The CrowS-Pairs study run on two planted causal LMs reports it (a
    ``measure_record`` each, its value the toy function's on the study's scored pairs);
    ``polybias results`` and ``polybias export`` show it (table and figure, the axis from the
    entry); it has its card; a validity sweep of planted causal LMs scores it on every model
    at every size, and it reaches the validity summaries and, from the sweep's records, the
    results table."""
    from polybias.runner import validity_sweep as vs
    from polybias.studies import crows_pairs, validity_designs

    monkeypatch.setenv("POLYBIAS_PLANTED", "pinned")
    toy = pair_gap_measure({"crows-causal": ["pair-gap"]})
    import toy_pair_gap
    results = tmp_path / "results"
    for p in (0.9, 0.5):
        lm = validity_designs.planted_lm("causal", p)
        found = crows_pairs.run_crows(lm, dataset="planted", n_pairs=40, n_bootstrap=0,
                                      output_dir=str(results / "crows" / f"p{p}"))
        assert list(found.others) == ["pair-gap"]
        assert found.others["pair-gap"].value == toy_pair_gap.pair_gap(found.scored)
    frame = table.read_results(results)
    gap = frame[frame["metric"] == "pair-gap"].set_index("model")["value"]
    assert len(gap) == 2 and gap["planted-causal-p0.9-s0"] > gap["planted-causal-p0.5-s0"]
    assert {"crows", "jsd-b"} <= set(frame["metric"])  # the study's own numbers, as before
    assert cli(["results", str(results), "--metric", "pair-gap"]) == 0
    shown = capsys.readouterr().out
    assert "pair-gap" in shown and "planted-causal-p0.9-s0" in shown
    assert cli(["export", str(results), "--out", str(tmp_path / "export")]) == 0
    assert "planted-causal-p0.9-s0 (en)" in (tmp_path / "export" / "pair-gap.md").read_text(encoding="utf-8")
    assert (tmp_path / "export" / "pair-gap.png").stat().st_size > 0
    assert table.metric_axis("pair-gap")[1] == toy.axis
    assert "# pair-gap: Mean pair gap (toy)" in cards.card("pair-gap")
    assert cards.generated()["pair-gap.md"] == cards.card("pair-gap")

    monkeypatch.setenv("POLYBIAS_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("POLYBIAS_PLANTED", "auto")
    cfg = vs.check_config({
        "records_dir": "records", "summary_dir": "summary",
        "blocks": [{"language": "en", "family": "causal", "ps": [0.1, 0.5, 0.9], "models_per_strength": 2,
                    "null_models": 2}],
        "alpha": 0.05, "n_permutations": 100, "word2vec": {"n_sentences": 300}, "mlm": {"n_sentences": 300},
        "causal": {"n_sentences": 400, "epochs": 2, "batch_size": 64},
        "sizes": {"weat_words": [8], "seat_words": [8], "ceat_samples": [5], "crows_pairs": [20, 40],
                  "kurita_templates": [1]},
        "defaults": {"weat_words": 8, "seat_words": 8, "ceat_samples": 5, "crows_pairs": 40,
                     "kurita_templates": 1}})
    records = tmp_path / "validity"
    assert vs.run_validity(cfg, records, log=lambda *a, **k: None)["ran"] == 6
    measured, _ = vs.collect_measurements(cfg, records)
    mine = measured[measured["metric"] == "pair-gap"]
    assert len(mine) == 6 * 2 and set(mine["measure"]) == {"crows-causal"}
    summary = validity.dose_summary(measured).set_index("metric")
    assert "pair-gap" in summary.index and summary.loc["pair-gap", "sign_ok"]
    assert validity.axis_titles(measured)[("crows-causal", "pair-gap")] == toy.axis
    rows = table.read_results(records)
    assert (rows["metric"] == "validity:crows-causal:pair-gap").sum() == 12
    assert table.metric_axis("validity:crows-causal:pair-gap")[1] == \
        "pair-gap, nats (0 = no bias; > 0 toward the planted bias)"
