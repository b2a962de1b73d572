"""One contract, checked over every registered measure (as scikit-learn's estimator checks).

For every measure of :data:`polybias.measures.MEASURES`:

* determinism: the same inputs and seed give the same result, details included;
* group swap: exchanging the two target groups reflects a signed measure's value about
  its null (an effect size changes sign, a score s becomes 100 − s), inverts a ratio
  measure about its null of 1 (GEST's g_s becomes 1 / g_s when the masculine and feminine
  readings are exchanged) and leaves an unsigned one (a variance over groups, a largest divergence) unchanged; a per-word
  measure (kind ``word-vectors``: WEFAT, relative norm distance) has no target groups, and
  its two groups are the attribute sets A and B;
* order: reordering the items within a set changes neither the value nor n (nor a
  p-value obtained without resampling; a seeded bootstrap or Monte Carlo draw indexes
  the items, so its interval follows their order by design);
* planted direction: on the pinned planted models (``data/planted``) a signed measure
  points towards the planted association (male ~ career) and an unsigned one is larger
  on the planted model (p = 0.9) than on its control (p = 0.5);
* malformed input raises the measure's error type with a message naming the problem;
* per-word measures, on their details: swapping A and B flips the sign of every word's
  score, permuting the rows of W permutes the scores the same way, reordering A or B
  changes no score.

and, for the studies that compute a headline number by calling a metric function
themselves (the validity study goes through :func:`polybias.measures.compute`), that
their call gives bit for bit the numbers of ``compute`` on the same inputs.

Inputs are generated per input kind (:data:`polybias.measures.INPUT_KINDS`), so a new
measure of a known kind gets the whole battery; a new kind fails
``test_every_input_kind_has_builders`` until it has them. The synthetic properties run
under hypothesis (``max_examples`` 8 per measure, seeds and sizes drawn); the planted
checks read the pinned tiny models (CPU-independent). Cost: about 20 s of CPU (half of it
loading and scoring the planted models once per module).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polybias import measures
from polybias.measures import MEASURES, compute
from polybias.planted import probes

NAMES = list(MEASURES)
SETTINGS = settings(max_examples=8, deadline=None, derandomize=True)


# ------------------------------------------------------------------ synthetic inputs per kind

def _vectors(seed: int, n: int, shift: float = 1.0) -> dict:
    rng = np.random.default_rng(seed)
    d = 6
    a_dir, b_dir = rng.normal(size=d), rng.normal(size=d)
    A = a_dir + 0.5 * rng.normal(size=(n, d))
    B = b_dir + 0.5 * rng.normal(size=(n + 1, d))
    X = shift * a_dir + rng.normal(size=(n, d))
    Y = shift * b_dir + rng.normal(size=(n + 2, d))
    return {"X": X, "Y": Y, "A": A, "B": B}


def _word_vectors(seed: int, n: int, shift: float = 1.0) -> dict:
    """Words W leaning towards attribute set A (per-word measures: WEFAT, relative norm distance)."""
    v = _vectors(seed, n, shift)
    return {"W": v["X"], "A": v["A"], "B": v["B"]}


def _occurrences(seed: int, n: int, shift: float = 1.0) -> dict:
    rng = np.random.default_rng(seed)
    N, d = 6, 5
    a_dir, b_dir = rng.normal(size=d), rng.normal(size=d)
    A = a_dir + 0.5 * rng.normal(size=(n, N, d))
    B = b_dir + 0.5 * rng.normal(size=(n, N, d))
    X = shift * a_dir + rng.normal(size=(n, N, d))
    Y = shift * b_dir + rng.normal(size=(n + 1, N, d))
    return {"X": X, "Y": Y, "A": A, "B": B}


def _attribute_scores(seed: int, n: int, shift: float = 1.0) -> dict:
    rng = np.random.default_rng(seed)
    x, y = [f"x{i}" for i in range(n)], [f"y{i}" for i in range(n)]
    a, b = [f"a{i}" for i in range(n + 1)], [f"b{i}" for i in range(n + 1)]
    rows = []
    for t in x + y:
        for att in a + b:
            planted = shift if (t in x) == (att in a) else 0.0
            for template in ("t0", "t1"):
                rows.append({"template": template, "target": t, "attribute": att,
                             "corrected": planted + rng.normal()})
    return {"scores": pd.DataFrame(rows), "x": x, "y": y, "a": a, "b": b}


def _pair_scores(seed: int, n: int, shift: float = 1.0) -> dict:
    rng = np.random.default_rng(seed)
    m = 10 * n
    more = rng.normal(size=m) + shift
    less = rng.normal(size=m)
    kinds = np.where(np.arange(m) % 3 == 0, "gender", "race")
    scored = pd.DataFrame({"sent_more": [f"m{i}" for i in range(m)], "sent_less": [f"l{i}" for i in range(m)],
                           "bias_type": kinds, "score_more": more, "score_less": less})
    return {"scored": scored, "attributed": scored.assign(sjsd=less - more)}


def _group_scores(seed: int, n: int, shift: float = 1.0) -> dict:
    rng = np.random.default_rng(seed)
    targets, pros = [f"g{i}" for i in range(n + 1)], ["p0", "p1"]
    attributes = [f"a{i}" for i in range(n + 2)]
    rows = []
    for template in ("t0", "t1"):
        for att in attributes:
            for k, tgt in enumerate(targets):
                for pro in pros:
                    value = shift * (k - n / 2) * (1 if att < "a1" else -1) + rng.normal()
                    rows.append({"set": "s0", "template": template, "attribute": att, "target": tgt,
                                 "pro": pro, "variant": 0, "corrected": value, "pll": value})
    weights = {a: 0.5 + (i % 3) for i, a in enumerate(attributes)}
    return {"scores": pd.DataFrame(rows), "weights": weights, "identity_columns": ["pro", "target"]}


def _distributions(seed: int, n: int, shift: float = 1.0) -> dict:
    rng = np.random.default_rng(seed)
    logits = rng.normal(size=(n + 1, 20)) * shift
    log_dists = logits - np.log(np.exp(logits).sum(axis=1, keepdims=True))
    return {"log_dists": log_dists, "labels": [f"g{i}" for i in range(n + 1)]}


def _item_scores(seed: int, n: int, shift: float = 1.0) -> dict:
    rng = np.random.default_rng(seed)
    m = 10 * n
    anti = rng.normal(size=m)
    return {"scored": pd.DataFrame({
        "item_id": [f"i{k}" for k in range(m)], "target": [f"t{k % (n + 1)}" for k in range(m)],
        "bias_type": np.where(np.arange(m) % 3 == 0, "gender", "race"),
        "score_stereotype": rng.normal(size=m) + shift, "score_anti": anti,
        "score_unrelated": rng.normal(size=m) - 1.0})}


def _stereotype_scores(seed: int, n: int, shift: float = 1.0) -> dict:
    """GEST-style scores: 16 stereotypes, 1-7 feminine, 8-16 masculine; the masculine ones
    shifted towards the masculine reading by ``shift`` / 2, the feminine ones away from it."""
    rng = np.random.default_rng(seed)
    m = 16 * (n + 1)
    ids = np.tile(np.arange(1, 17), n + 1)
    return {"scores": rng.normal(size=m) + np.where(ids >= 8, shift / 2, -shift / 2), "stereotypes": ids}
def _gendered_pair_scores(seed: int, n: int, shift: float = 1.0) -> dict:
    rng = np.random.default_rng(seed)
    rows = []
    for stereotype in range(1, 17):
        lean = shift if stereotype >= 8 else -shift  # the masculine form likelier for 8-16
        for _ in range(10 + n):
            lm, lf = rng.normal() + lean / 2, rng.normal() - lean / 2
            rows.append({"stereotype": stereotype,
                         "stereotype_gender": "masculine" if stereotype >= 8 else "feminine",
                         "logprob_masc": lm, "n_masc": 1 + stereotype % 3,
                         "logprob_fem": lf, "n_fem": 1 + stereotype % 2,
                         "logprob_masc_whole": lm - 3.0, "n_masc_whole": 6,
                         "logprob_fem_whole": lf - 3.0, "n_fem_whole": 6})
    return {"scored": pd.DataFrame(rows)}


BUILD = {"vectors": _vectors, "word-vectors": _word_vectors, "occurrences": _occurrences,
         "attribute-scores": _attribute_scores,
         "pair-scores": _pair_scores, "pair-attributions": _pair_scores, "group-scores": _group_scores,
         "distributions": _distributions, "item-scores": _item_scores,
         "stereotype-scores": _stereotype_scores,
         "gendered-pair-scores": _gendered_pair_scores}


def _swap(kind: str, inputs: dict) -> dict:
    """The same inputs with the two target groups exchanged (for unsigned measures: two
    groups' labels exchanged)."""
    out = dict(inputs)
    if kind in ("vectors", "occurrences"):
        out["X"], out["Y"] = inputs["Y"], inputs["X"]
    elif kind == "word-vectors":  # a per-word measure has no target groups: its two groups are A and B
        out["A"], out["B"] = inputs["B"], inputs["A"]
    elif kind == "attribute-scores":
        out["x"], out["y"] = inputs["y"], inputs["x"]
    elif kind in ("pair-scores", "pair-attributions"):
        s = inputs["scored"]
        out["scored"] = s.assign(score_more=s["score_less"], score_less=s["score_more"])
        out["attributed"] = inputs["attributed"].assign(sjsd=-inputs["attributed"]["sjsd"])
    elif kind == "item-scores":
        s = inputs["scored"]
        out["scored"] = s.assign(score_stereotype=s["score_anti"], score_anti=s["score_stereotype"])
    elif kind == "stereotype-scores":  # the masculine and the feminine reading exchanged
        out["scores"] = -np.asarray(inputs["scores"])
    elif kind == "gendered-pair-scores":  # the feminine and the masculine stereotypes exchanged
        genders = {"feminine": "masculine", "masculine": "feminine"}
        out["scored"] = inputs["scored"].assign(
            stereotype_gender=inputs["scored"]["stereotype_gender"].map(genders))
    elif kind == "group-scores":
        names = {"g0": "g1", "g1": "g0"}
        out["scores"] = inputs["scores"].assign(target=inputs["scores"]["target"].replace(names))
    elif kind == "distributions":
        order = [1, 0, *range(2, len(inputs["labels"]))]
        out["log_dists"] = inputs["log_dists"][order]
        out["labels"] = [inputs["labels"][i] for i in order]
    return out


def _reorder(kind: str, inputs: dict, seed: int) -> dict:
    """The same inputs with the items of every set in another order."""
    rng = np.random.default_rng(seed + 1)
    out = dict(inputs)
    if kind in ("vectors", "occurrences", "word-vectors"):
        for k in ("X", "Y", "W", "A", "B"):
            if k in inputs:
                out[k] = inputs[k][rng.permutation(len(inputs[k]))]
    elif kind == "attribute-scores":
        out["scores"] = inputs["scores"].sample(frac=1.0, random_state=seed)
        for k in ("x", "y", "a", "b"):
            out[k] = list(rng.permutation(inputs[k]))
    elif kind in ("pair-scores", "pair-attributions"):
        out["scored"] = inputs["scored"].sample(frac=1.0, random_state=seed)
        out["attributed"] = inputs["attributed"].sample(frac=1.0, random_state=seed)
    elif kind == "group-scores":
        out["scores"] = inputs["scores"].sample(frac=1.0, random_state=seed)
    elif kind in ("item-scores", "gendered-pair-scores"):
        out["scored"] = inputs["scored"].sample(frac=1.0, random_state=seed)
    elif kind == "stereotype-scores":
        order = rng.permutation(len(inputs["scores"]))
        out["scores"], out["stereotypes"] = inputs["scores"][order], inputs["stereotypes"][order]
    elif kind == "distributions":
        out["log_dists"] = inputs["log_dists"][:, rng.permutation(inputs["log_dists"].shape[1])]
    return out


def _run(name: str, inputs: dict, **options) -> measures.MeasureResult:
    m = MEASURES[name]
    return compute(name, **{k: inputs[k] for k in m.inputs}, **options)


def _accepted(name: str, options: dict) -> dict:
    """The ``options`` the measure takes (a measure without a test, e.g. ``weat-gap``, takes
    no seed)."""
    accepted = measures.option_defaults(name)
    return {k: v for k, v in options.items() if k in accepted}


def _seeded(name: str) -> dict:
    m = MEASURES[name]
    options = {}
    if m.input_kind in ("vectors",):
        options = {"seed": 3, "n_permutations": 500, "exact_limit": 0}
    elif m.input_kind == "attribute-scores":
        options = {"seed": 3, "n_permutations": 500}
    elif m.input_kind in ("pair-scores", "pair-attributions", "item-scores", "stereotype-scores",
                          "gendered-pair-scores"):
        options = {"seed": 3, "n_bootstrap": 200}
    return _accepted(name, options)


def test_every_input_kind_has_builders():
    kinds = {m.input_kind for m in MEASURES.values()}
    assert kinds <= set(measures.INPUT_KINDS)
    assert set(measures.INPUT_KINDS) <= set(BUILD) and set(measures.INPUT_KINDS) <= set(MALFORMED)


# ------------------------------------------------------------------ the contract

def over_measures(test):
    """Run ``test(name, seed, n)`` for every registered measure on hypothesis-drawn seeds
    and set sizes."""
    drawn = given(seed=st.integers(0, 2**31 - 1), n=st.integers(3, 6))(test)
    return pytest.mark.parametrize("name", NAMES)(SETTINGS(drawn))


@over_measures
def test_deterministic_for_a_seed(name, seed, n):
    inputs = BUILD[MEASURES[name].input_kind](seed, n)
    first, second = _run(name, inputs, **_seeded(name)), _run(name, inputs, **_seeded(name))
    assert first == second
    pd.testing.assert_frame_equal(first.details, second.details)
    assert first.measure == name and first.p_method in measures.P_METHODS
    assert np.isfinite(first.value) and first.n > 0


@over_measures
def test_swapping_the_target_groups(name, seed, n):
    m = MEASURES[name]
    inputs = BUILD[m.input_kind](seed, n)
    before = _run(name, inputs, **_seeded(name))
    after = _run(name, _swap(m.input_kind, inputs), **_seeded(name))
    if m.polarity == "signed":
        assert after.value - m.null_value == pytest.approx(-(before.value - m.null_value), abs=1e-9)
        if before.interval is not None:
            reflected = 2 * m.null_value - before.interval.high
            assert after.interval.low == pytest.approx(reflected, abs=1e-9)
    elif m.polarity == "ratio":
        assert after.value * before.value == pytest.approx(m.null_value ** 2, rel=1e-9)
        if before.interval is not None:
            assert after.interval.low == pytest.approx(m.null_value ** 2 / before.interval.high, rel=1e-9)
    else:
        assert after.value == pytest.approx(before.value, rel=1e-12, abs=1e-12)


@over_measures
def test_reordering_items_changes_nothing(name, seed, n):
    m = MEASURES[name]
    inputs = BUILD[m.input_kind](seed, n)
    base = _run(name, inputs)
    moved = _run(name, _reorder(m.input_kind, inputs, seed))
    assert moved.value == pytest.approx(base.value, rel=1e-9, abs=1e-12)
    assert moved.n == base.n
    if base.p_method in ("permutation-exact", "normal", "binomial-exact"):
        assert moved.p_value == pytest.approx(base.p_value, rel=1e-9, abs=1e-15)


def test_a_planted_difference_shows_in_synthetic_inputs():
    """The builders plant the direction the planted-model test expects (a check of the
    builders themselves: with shift 0 the signed measures lose it)."""
    for name, m in MEASURES.items():
        strong = _run(name, BUILD[m.input_kind](0, 5, shift=3.0))
        if m.polarity in ("signed", "ratio"):
            assert strong.value > m.null_value, name


# ------------------------------------------------------------------ malformed input

def _drop(frame_key: str, column: str):
    return lambda i: {**i, frame_key: i[frame_key].drop(columns=column)}


MALFORMED = {
    "vectors": [(lambda i: {**i, "X": i["X"][:0]}, "set X is empty"),
                (lambda i: {**i, "A": np.where(np.arange(i["A"].size).reshape(i["A"].shape) == 0,
                                               np.nan, i["A"])}, "non-finite"),
                (lambda i: {**i, "B": i["B"][:, :3]}, "dimension mismatch")],
    "word-vectors": [(lambda i: {**i, "W": i["W"][:0]}, "set W is empty"),
                     (lambda i: {**i, "A": i["A"][:0]}, "set A is empty"),
                     (lambda i: {**i, "B": np.where(np.arange(i["B"].size).reshape(i["B"].shape) == 0,
                                                    np.nan, i["B"])}, "set B has non-finite"),
                     (lambda i: {**i, "W": i["W"][:, :3]}, "dimension mismatch")],
    "occurrences": [(lambda i: {**i, "Y": i["Y"][:, :2]}, "differ in the number of samples"),
                    (lambda i: {**i, "A": i["A"][:0]}, "set A must be a non-empty array")],
    "attribute-scores": [(lambda i: {**i, "x": [*i["x"], "nobody"]}, "no scores for target"),
                         (lambda i: {**i, "a": [*i["a"], "nothing"]}, "no bias score for attribute"),
                         (lambda i: {**i, "y": list(i["x"])}, "targets in both groups")],
    "pair-scores": [(_drop("scored", "score_less"), "lack the column"),
                    (lambda i: {**i, "scored": i["scored"].iloc[:0]}, "no pairs")],
    "pair-attributions": [(_drop("attributed", "sjsd"), "lack the column"),
                          (lambda i: {**i, "attributed": i["attributed"].iloc[:0]}, "no pairs")],
    "group-scores": [(lambda i: {**i, "scores": i["scores"][(i["scores"]["target"] == "g0")
                                                            & (i["scores"]["pro"] == "p0")]},
                      "at least two groups"),
                     (lambda i: {**i, "scores": i["scores"].drop(columns=["target", "pro"])},
                      "no (identity )?column"),
                     (lambda i: {**i, "scores": i["scores"][~((i["scores"]["attribute"] == "a0")
                                                             & (i["scores"]["target"] == "g0"))]},
                      "rows without a score for every group"),
                     (lambda i: {**i, "weights": {}}, "no weight for attribute")],
    "item-scores": [(_drop("scored", "score_anti"), "lack the column"),
                    (lambda i: {**i, "scored": i["scored"].iloc[:0]}, "no items")],
    "stereotype-scores": [(lambda i: {**i, "stereotypes": i["stereotypes"][:-1]}, "differ in length"),
                          (lambda i: {**i, "scores": np.where(np.arange(len(i["scores"])) == 0, np.nan,
                                                              i["scores"])}, "non-finite score"),
                          (lambda i: {**i, "stereotypes": np.where(i["stereotypes"] == 3, 17,
                                                                   i["stereotypes"])}, "unknown stereotype"),
                          (lambda i: {**i, "scores": i["scores"][i["stereotypes"] >= 8],
                                      "stereotypes": i["stereotypes"][i["stereotypes"] >= 8]},
                           "no sentence of a feminine stereotype")],
    "gendered-pair-scores": [(_drop("scored", "logprob_fem"), "lack the column"),
                             (lambda i: {**i, "scored": i["scored"].iloc[:0]}, "no sentences"),
                             (lambda i: {**i, "scored": i["scored"].assign(stereotype_gender="male")},
                              "stereotype_gender must be one of")],
    "distributions": [(lambda i: {**i, "labels": i["labels"][:-1]}, r"expected \(\d+, V\)"),
                      (lambda i: {**i, "labels": ["g"] * len(i["labels"])}, "labels repeat")],
}


@pytest.mark.parametrize("name", NAMES)
def test_malformed_input_raises_the_measures_error(name):
    m = MEASURES[name]
    inputs = BUILD[m.input_kind](7, 4)
    checked = 0
    for mutate, message in MALFORMED[m.input_kind]:
        bad = mutate(inputs)
        if all(bad[k] is inputs[k] for k in m.inputs):
            continue  # this case changes an input the measure does not take
        with pytest.raises(m.error, match=message):
            _run(name, bad)
        checked += 1
    assert checked >= 1, f"no malformed case applies to {name}"


def test_unknown_measure_and_missing_input_name_the_problem():
    with pytest.raises(measures.MeasureError, match="unknown measure 'weta'; registered: weat"):
        compute("weta")
    with pytest.raises(measures.MeasureError, match="measure 'weat' needs the input.* B"):
        compute("weat", X=np.eye(2), Y=np.eye(2), A=np.eye(2))
    with pytest.raises(TypeError, match="unknown option.*permutations"):
        compute("weat", **_vectors(0, 3), permutations=10)


# ------------------------------------------------------------------ the planted models

@pytest.fixture(scope="module")
def planted(torch_one_thread):
    """Inputs of every input kind from the pinned planted models: p = 0.9 (male ~ career,
    female ~ family) and the p = 0.5 control. Pinned, so the numbers do not depend on the CPU."""
    import os

    from polybias.data import text
    from polybias.engines import embeddings, template_scores
    from polybias.engines.eurogest_scores import gendered_pair_scores
    from polybias.engines.gest_scores import masked_pair_scores
    from polybias.engines.pair_scores import jsd_attributions, pair_scores
    from polybias.engines.static import lookup
    from polybias.metrics import ceat, logprob
    from polybias.planted.synthetic import (
        minimal_pairs,
        planted_corpus,
        planted_groups,
        planted_word2vec,
    )
    from polybias.studies import categorical_bias, validity_designs

    def planted_gendered_scores(p: float) -> pd.DataFrame:
        """The planted causal LM on planted pairs as EuroGEST sentences: the male and the
        female form, a career attribute a masculine stereotype (8), a family one feminine (1)."""
        causal = validity_designs.planted_lm("causal", p)
        pairs = minimal_pairs(n=120, language="en", seed=0)
        career = pairs["attribute_group"] == "career"
        male = np.where(career, pairs["sent_more"], pairs["sent_less"])
        female = np.where(career, pairs["sent_less"], pairs["sent_more"])
        items = pd.DataFrame({"masculine": male, "feminine": female,
                              "stereotype": np.where(career, 8, 1)})
        return gendered_pair_scores(causal, items)

    before = os.environ.get("POLYBIAS_PLANTED")
    os.environ["POLYBIAS_PLANTED"] = "pinned"
    try:
        groups = planted_groups("en")
        sets = {"X": groups["targets"]["male"], "Y": groups["targets"]["female"],
                "A": groups["attributes"]["career"], "B": groups["attributes"]["family"]}
        out = {}
        for p in (0.9, 0.5):
            emb = planted_word2vec(p, seed=0, n_sentences=4000)
            lm = validity_designs.planted_lm("mlm", p)
            encoder = embeddings.wrap_encoder(lm.model, lm.tokenizer, name=lm.name, revision=lm.revision,
                                              pooling="mean")
            book = probes.planted_templates("en")
            scores = template_scores.kurita_scores(lm, book, list(book.templates))
            pll = categorical_bias.pll_scores(lm, book, list(book.templates))
            pairs = minimal_pairs(n=40, language="en", seed=0)
            fresh = planted_corpus(600, p, seed=validity_designs.FRESH_SEED_OFFSET, language="en")
            found = text.find_occurrences(fresh, [w for ws in sets.values() for w in ws], language="en")
            vectors = embeddings.occurrence_vectors(encoder, text.sample_occurrences(found, 6, seed=0))
            occ = {r: ceat.stack_occurrences(vectors, ws, r) for r, ws in sets.items()}
            inter = categorical_bias.interaction_cb(lm, probes.planted_interaction_templates("en"), "said",
                                           ["pro", "target"], "attribute")
            fill = inter.scores.assign(pro=inter.scores["group"].str.split("|").str[0],
                                       target=inter.scores["group"].str.split("|").str[1],
                                       template="said")
            dists, labels = categorical_bias.attribute_mask_distributions(lm, book, list(book.templates)[0],
                                                                 ["man", "woman"])
            targets = logprob.group_members(book, "targets")
            attributes = logprob.group_members(book, "attributes")
            static = {r: lookup(emb, ws, on_missing="raise")[0] for r, ws in sets.items()}
            nangia = pair_scores(lm, pairs, method="nangia")
            # GEST's masked score of the planted pairs: the masculine sentence against the
            # feminine one, a career pair as the masculine stereotype "Professional" (10), a
            # family pair as the feminine stereotype "Empathetic" (3)
            career = (pairs["attribute_group"] == "career").to_numpy()
            masculine = np.where(career, pairs["sent_more"], pairs["sent_less"]).tolist()
            feminine = np.where(career, pairs["sent_less"], pairs["sent_more"]).tolist()
            seat = {r: embeddings.sentence_vectors(encoder, [f"the {w} ." for w in ws], pooling="mean")
                    for r, ws in sets.items()}
            weights = {a: 1.0 + (i % 2) for i, a in enumerate(sorted(set(scores["attribute"])))}
            # What each scorer the registry names gives on this model, by the scorer as an
            # entry's ``scorers`` writes it: a measure reads the first of its scorers found here
            # (:func:`_planted_inputs`). Static look-ups give both the target sets (WEAT) and the
            # words of both sets as one list W (per-word measures: the male words, then the
            # female ones, scored between career A and family B).
            out[p] = {
                "polybias.engines.static.lookup": {**static, "W": np.vstack([static["X"], static["Y"]]),
                                                   "n_first": len(static["X"])},
                "polybias.studies.debiasing.evaluate": static,
                "polybias.studies.seat.seat_vectors": seat,
                "polybias.engines.embeddings.occurrence_vectors": occ,
                "polybias.engines.template_scores.kurita_scores": {
                    "scores": scores, "x": targets["male"], "y": targets["female"],
                    "a": attributes["career"], "b": attributes["family"]},
                **{f"polybias.engines.pair_scores.pair_scores(method='{m}')":
                   {"scored": nangia if m == "nangia" else pair_scores(lm, pairs, method=m)}
                   for m in ("nangia", "aul", "aula")},
                "polybias.engines.pair_scores.jsd_attributions": {"attributed": jsd_attributions(lm, pairs)},
                "polybias.studies.categorical_bias.pll_scores": {"scores": pll},
                "polybias.studies.categorical_bias.interaction_cb(weights=...)": {"scores": scores,
                                                                                  "weights": weights},
                "polybias.studies.categorical_bias.interaction_cb": {"scores": fill,
                                                                     "identity_columns": ["pro", "target"]},
                "polybias.studies.categorical_bias.attribute_mask_distributions": {"log_dists": dists,
                                                                                   "labels": labels},
                "polybias.engines.eurogest_scores.gendered_pair_scores(causal_bos='prepend')":
                    {"scored": planted_gendered_scores(p)},
                "polybias.engines.gest_scores.masked_gest_scores": {
                    "scores": masked_pair_scores(lm, masculine, feminine), "stereotypes": np.where(career, 10, 3)},
                # StereoSet's aggregation on the planted model's pair scores: the more stereotyping
                # sentence as the stereotypical candidate, an unrelated candidate scored below both
                "polybias.studies.stereoset.candidate_scores": {"scored": pd.DataFrame({
                    "target": nangia["bias_type"].to_numpy(), "bias_type": nangia["bias_type"].to_numpy(),
                    "score_stereotype": nangia["score_more"].to_numpy(float),
                    "score_anti": nangia["score_less"].to_numpy(float),
                    "score_unrelated": np.minimum(nangia["score_more"], nangia["score_less"]).to_numpy(float)
                    - 1.0})},
                "interaction-score": inter.score,
            }
        return out
    finally:
        if before is None:
            os.environ.pop("POLYBIAS_PLANTED", None)
        else:
            os.environ["POLYBIAS_PLANTED"] = before


def _planted_inputs(name: str, per_model: dict) -> dict:
    """The planted inputs a measure reads: those of the first of its registry ``scorers``
    the fixture ran, matched as the entry writes it (options included), else by the scorer's
    dotted name alone (a new measure on ``pair_scores(method='causal')`` reads the masked
    model's pair scores). Derived from the entry: no table to extend for a new measure."""
    scorers = MEASURES[name].scorers
    for scorer in scorers:
        if scorer in per_model:
            return per_model[scorer]
    for scorer in scorers:
        bare = scorer.split("(", 1)[0]
        for ran, inputs in per_model.items():
            if ran.split("(", 1)[0] == bare:
                return inputs
    raise KeyError(f"{name}: the planted fixture ran none of its scorers {scorers}; add what one of "
                   "them gives on the planted models to the fixture")


def _planted_direction(name: str, result: measures.MeasureResult, per_model: dict) -> measures.MeasureResult:
    """The result whose value carries the planted direction: the measure's own, or for a
    per-word measure (W = the male words, then the female ones) the mean score of the male
    words minus that of the female words. The per-word mean alone also carries how close
    all the words lie to A, which the planting does not fix (on the control model the male
    words lean towards family)."""
    if MEASURES[name].input_kind != "word-vectors":
        return result
    first = result.details["item"] < per_model["polybias.engines.static.lookup"]["n_first"]
    score = result.details["association"]
    return dataclasses.replace(result, value=float(score[first].mean() - score[~first].mean()))


@pytest.mark.parametrize("name", NAMES)
def test_the_planted_direction_shows_on_the_planted_model(name, planted):
    m = MEASURES[name]
    options = _accepted(name, {"seed": 0, "n_permutations": 2000}
                        if m.input_kind in ("vectors", "attribute-scores") else {})
    strong, control = (_planted_direction(name, _run(name, _planted_inputs(name, planted[p]), **options), planted[p])
                       for p in (0.9, 0.5))
    if m.polarity in ("signed", "ratio"):
        assert strong.value > m.null_value, (name, strong.summary())
        if m.polarity == "ratio":  # compared on the log scale, where the swap is a reflection
            assert np.log(strong.value / m.null_value) > abs(np.log(control.value / m.null_value)), \
                (name, control.summary())
        else:
            assert strong.value - m.null_value > abs(control.value - m.null_value), (name, control.summary())
        if strong.p_value is not None:
            assert strong.p_value < 0.05, strong.summary()
    else:
        assert strong.value > 2 * control.value, (name, strong.value, control.value)


# ------------------------------------------------------------------ per-word measures

PER_WORD = [name for name, m in MEASURES.items() if m.input_kind == "word-vectors"]


def _scores(name: str, inputs: dict, **options) -> np.ndarray:
    r = _run(name, inputs, **options)
    assert list(r.details["item"]) == list(range(len(inputs["W"]))) and r.n == len(inputs["W"])
    return r.details["association"].to_numpy()


def per_word(test):
    drawn = given(seed=st.integers(0, 2**31 - 1), n=st.integers(2, 6))(test)
    return pytest.mark.parametrize("name", PER_WORD)(SETTINGS(drawn))


def test_the_per_word_measures_are_registered():
    assert set(PER_WORD) == {"wefat", "relative-norm-distance"}


@per_word
def test_swapping_a_and_b_flips_every_words_score(name, seed, n):
    inputs = _word_vectors(seed, n)
    before = _scores(name, inputs)
    after = _scores(name, {**inputs, "A": inputs["B"], "B": inputs["A"]})
    np.testing.assert_allclose(after, -before, rtol=1e-12, atol=1e-12)


@per_word
def test_permuting_w_permutes_the_scores(name, seed, n):
    inputs = _word_vectors(seed, n)
    order = np.random.default_rng(seed).permutation(len(inputs["W"]))
    np.testing.assert_allclose(_scores(name, {**inputs, "W": inputs["W"][order]}),
                               _scores(name, inputs)[order], rtol=1e-12, atol=1e-12)


@per_word
def test_reordering_a_or_b_changes_no_score(name, seed, n):
    inputs = _word_vectors(seed, n)
    rng = np.random.default_rng(seed)
    moved = {**inputs, "A": inputs["A"][rng.permutation(len(inputs["A"]))],
             "B": inputs["B"][rng.permutation(len(inputs["B"]))]}
    np.testing.assert_allclose(_scores(name, moved), _scores(name, inputs), rtol=1e-12, atol=1e-12)


@per_word
def test_per_word_scores_are_deterministic(name, seed, n):
    inputs = _word_vectors(seed, n)
    first, second = _run(name, inputs), _run(name, {k: v.copy() for k, v in inputs.items()})
    assert first == second
    pd.testing.assert_frame_equal(first.details, second.details)


@given(seed=st.integers(0, 2**31 - 1), n=st.integers(2, 6))
@SETTINGS
def test_wefat_ddof_compat_option_scales_every_score_by_one_factor(seed, n):
    """ddof = 0 (numpy's default std, the compat option) and ddof = 1 (the default) differ by
    the factor sqrt(m / (m − 1)), m = |A| + |B|, on every word: same signs and ranks."""
    inputs = _word_vectors(seed, n)
    sample, population = _run("wefat", inputs), _run("wefat", inputs, ddof=0)
    assert sample.options == {"ddof": 1} and population.options == {"ddof": 0}
    m = len(inputs["A"]) + len(inputs["B"])
    np.testing.assert_allclose(population.details["association"],
                               sample.details["association"] * np.sqrt(m / (m - 1)), rtol=1e-12)
    assert population.value == pytest.approx(sample.value * np.sqrt(m / (m - 1)), rel=1e-12)
    with pytest.raises(ValueError, match="ddof must be 0 or 1"):
        _run("wefat", inputs, ddof=2)


def test_per_word_values_by_hand():
    """WEFAT's value is the mean of s(w), the relative norm distance Garg et al.'s sum of d(w):
    w₁ = (1, 0), w₂ = (0, 1), A = {(1, 0)}, B = {(0, 1)}: s = ±√2 and d = ±√2."""
    inputs = {"W": np.eye(2), "A": np.eye(2)[:1], "B": np.eye(2)[1:]}
    wefat = _run("wefat", inputs)
    np.testing.assert_allclose(wefat.details["association"], [np.sqrt(2), -np.sqrt(2)])
    assert wefat.value == pytest.approx(0.0, abs=1e-12)
    tilted = {**inputs, "W": np.array([[1.0, 0.0], [1.0, 1.0]])}
    rnd = _run("relative-norm-distance", tilted)
    np.testing.assert_allclose(rnd.details["association"], [np.sqrt(2), 0.0], atol=1e-12)
    assert rnd.value == pytest.approx(np.sqrt(2))
    assert _run("wefat", {**inputs, "W": np.array([[1.0, 0.0], [3.0, 0.0]])}).value == pytest.approx(np.sqrt(2))


# ------------------------------------------------------------------ the studies' own calls

# Where a study computes a headline number by calling a metric function itself rather than
# polybias.measures.compute (the validity, debiasing and categorical-bias studies go through
# compute), its call, written as the study writes it, and compute give the same numbers on
# the same inputs, bit for bit: the registered measure is the number the study reports.

def test_crows_studies_report_the_registered_stereotype_scores():
    """studies.crows_pairs.run_crows and studies.crows_languages: the ``all`` row of
    ``stereotype_score`` / ``jsd_stereotype_score`` with a seeded bootstrap."""
    from polybias.metrics import crows

    inputs = _pair_scores(4, 5)
    for key, func, arg in (("crows", crows.stereotype_score, "scored"),
                           ("jsd-b", crows.jsd_stereotype_score, "attributed")):
        table = func(inputs[arg], n_bootstrap=200, seed=3)
        row = table[table["bias_type"] == "all"].iloc[0]
        r = compute(key, **{arg: inputs[arg]}, n_bootstrap=200, seed=3)
        assert (r.value, r.interval.low, r.interval.high, r.p_value, r.n) == (
            row["score"], row["ci_low"], row["ci_high"], row["binom_p"], row["n"]), key


def test_the_stereoset_study_reports_the_registered_ss():
    """studies.stereoset: ``stereoset_scores`` of ``item_decisions`` (candidates in the
    dataset's format) over all items."""
    from polybias.metrics import stereoset

    scored = _item_scores(5, 4)["scored"]
    labels = {"score_stereotype": "stereotype", "score_anti": "anti-stereotype",
              "score_unrelated": "unrelated"}
    items = pd.DataFrame([{"item_id": r.item_id, "task": "intrasentence", "bias_type": r.bias_type,
                           "candidate_id": f"{r.item_id}-{label}", "gold_label": label,
                           "target_en": r.target}
                          for r in scored.itertuples() for label in labels.values()])
    scores = pd.DataFrame([{"candidate_id": f"{r['item_id']}-{label}", "score": r[column]}
                           for _, r in scored.iterrows() for column, label in labels.items()])
    dec = stereoset.item_decisions(items, scores)
    row = stereoset.stereoset_scores(dec, by=None, n_bootstrap=200, seed=3).iloc[0]
    r = compute("stereoset", scored=dec[["item_id", "task", "bias_type", "target", *labels]],
                n_bootstrap=200, seed=3)
    assert (r.value, r.interval.low, r.interval.high, r.p_value, r.n) == (
        row["ss"], row["ss_low"], row["ss_high"], row["binom_p"], row["n"])


def test_the_categorical_bias_study_reports_the_registered_cb_scores():
    """The mean of ``cb_rows`` (what the registered ``cb`` is; studies.categorical_bias.ahn_oh_cb
    takes it from compute) and ``pll_cb``, as notebook 06 calls it (score_all takes its rows
    from compute)."""
    from polybias.metrics import catbias

    scores = _group_scores(6, 4)["scores"]
    for ddof in (0, 1):
        ahn_oh = float(catbias.cb_rows(scores, "corrected", ddof=ddof)["cb"].mean())
        assert compute("cb", scores=scores, ddof=ddof).value == ahn_oh
        assert compute("pll-cb", scores=scores, ddof=ddof).value == catbias.pll_cb(scores, ddof=ddof).score


def test_the_external_validity_study_reports_the_registered_word_scores():
    """studies.external_validity.static_occupation_bias: ``wefat_association`` and
    ``relative_norm_distance`` per word."""
    from polybias.metrics.wefat import relative_norm_distance, wefat_association

    inputs = _word_vectors(8, 5)
    for ddof in (0, 1):
        np.testing.assert_array_equal(
            compute("wefat", **inputs, ddof=ddof).details["association"].to_numpy(),
            wefat_association(inputs["W"], inputs["A"], inputs["B"], ddof=ddof))
    np.testing.assert_array_equal(
        compute("relative-norm-distance", **inputs).details["association"].to_numpy(),
        relative_norm_distance(inputs["W"], inputs["A"], inputs["B"]))


def test_the_debiasing_and_weat_studies_report_the_registered_weat_and_gap():
    """studies.debiasing.evaluate takes the gap of every cell (and its SEAT rows) from compute,
    its WEAT rows from weat_on_embedding, as studies.weat.run_weat does (on the words of an
    embedding): compute on the looked-up vectors gives the same effect size and p-value."""
    from polybias.data.wordlists import AssociationTest, WordSet
    from polybias.engines.static import StaticEmbeddings, lookup
    from polybias.metrics.weat import weat_association
    from polybias.studies.weat import weat_on_embedding

    v = _vectors(9, 4)
    words = {role: [f"{role.lower()}{i}" for i in range(len(M))] for role, M in v.items()}
    emb = StaticEmbeddings("toy", [w for ws in words.values() for w in ws], np.vstack(list(v.values())))
    test = AssociationTest("T", *(WordSet(role, tuple(ws), "", "") for role, ws in words.items()), "en")
    M = {role: lookup(emb, ws, on_missing="drop")[0] for role, ws in words.items()}
    gap = float(weat_association(M["X"], M["A"], M["B"]).mean() - weat_association(M["Y"], M["A"], M["B"]).mean())
    assert compute("weat-gap", **M).value == gap
    options = {"n_permutations": 500, "seed": 3, "exact_limit": 0}
    r = weat_on_embedding(emb, test, on_missing="drop", **options)
    assert compute("weat", **M, **options).summary()["value"] == r.effect_size
    assert compute("weat", **M, **options).p_value == r.pvalue


def test_the_context_study_reports_the_registered_kurita_score():
    """metrics.logprob.context_study (notebook 04, studies.logprob_context): per sentence
    structure, ``kurita_effect`` of the corrected ``attribute_bias``."""
    from polybias.metrics.logprob import attribute_bias, kurita_effect

    inputs = _attribute_scores(10, 4)
    for _structure, g in inputs["scores"].groupby("template", sort=False):
        bias = attribute_bias(g, inputs["x"], inputs["y"], value="corrected")
        eff = kurita_effect(bias, inputs["a"], inputs["b"], n_permutations=500, seed=3)
        r = compute("kurita", **{**inputs, "scores": g}, n_permutations=500, seed=3)
        assert (r.value, r.p_value) == (eff.effect_size, eff.pvalue)


def test_the_ceat_study_reports_the_registered_ces():
    """metrics.ceat.ceat_from_occurrences (studies.ceat: segment_length_study): CEAT of a
    word-list test on per-word occurrence vectors."""
    from polybias.data.wordlists import AssociationTest, WordSet
    from polybias.metrics.ceat import ceat_from_occurrences

    occ = _occurrences(11, 4)
    words = {role: [f"{role.lower()}{i}" for i in range(len(M))] for role, M in occ.items()}
    vectors = {w: occ[role][i] for role, ws in words.items() for i, w in enumerate(ws)}
    test = AssociationTest("C", *(WordSet(role, tuple(ws), "", "") for role, ws in words.items()), "en")
    for alternative in ("two-sided", "greater"):
        r = ceat_from_occurrences(vectors, test, alternative=alternative)
        m = compute("ceat", **occ, alternative=alternative)
        assert (m.value, m.p_value, m.n) == (r.ces, r.pvalue, r.n_samples)


def test_the_cultural_interactions_study_reports_the_registered_interaction_cb(planted):
    """studies.categorical_bias.interaction_cb (studies.cultural_interactions): its score is the
    registered interaction CB of the scores it returns."""
    # the planted fixture ran interaction_cb on the planted model and kept its scores
    for p in (0.9, 0.5):
        inputs = planted[p]["polybias.studies.categorical_bias.interaction_cb"]
        assert compute("interaction-cb", **inputs).value == planted[p]["interaction-score"]
