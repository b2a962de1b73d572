"""GEST reference code, executed: the scores, the templates and the aggregation.

Reference: kinit-sk/gest at 7dd908c (source ``ref-gest-masked-utils`` and its siblings):

* ``src/masked_models/utils.py`` — ``masked_logprob_score``, ``token_id``,
  ``generative_score``, imported as published;
* ``_inference.ipynb`` (outputs removed) — the code cell defining ``english_mlm_score`` and
  the four masked templates, and the cell defining the two causal templates, each executed
  from the notebook's JSON at run time;
* ``_english_mlm.ipynb`` — the cell defining ``r_i``, ``r_is``, ``r_f``, ``r_m``, ``g_s``
  and ``r_i_ranks``, executed from the notebook with ``src/utils.py``'s ``bootstrap_ci``.

The models are the project's tiny random BERT, RoBERTa, ALBERT and ELECTRA (masked) and
GPT-2 and Llama (causal) models; ``token_id`` reads a tiny tokenizer saved to a temporary
folder (it loads by name), the GPT-2 one with ``tokenizer_class: GPT2Tokenizer`` in its
config as on the hub (transformers' generic tokenizer class ignores ``add_prefix_space``).

Shims (no reference logic is edited): the notebooks' imports are not executed (their cells
are run in a namespace given ``masked_logprob_score``, ``np``, ``gmean``, ``lru_cache``,
``bootstrap_ci``, ``tqdm`` and ``gest``); ``gest`` is the DataFrame of ``data/gest.csv`` as
``polybias.data.gest`` reads it; ``random`` inside ``src/utils.py`` is, for the interval
test only, a stand-in whose ``choices(scores, k)`` returns the resample the project's seeded
bootstrap draws (``numpy.random.default_rng(seed).integers``), so the two intervals can be
compared exactly; the authors' draw is otherwise unseeded.
"""

from __future__ import annotations

import json
from functools import lru_cache

import numpy as np
import pytest
import torch
from polybias.data import gest, sources
from polybias.engines import gest_scores
from polybias.metrics.gest import gest_rates
from refsupport import load_module, module, reference_file, stand_ins, tiny, tiny_lm
from scipy.stats import gmean

pytestmark = pytest.mark.usefixtures("torch_one_thread")
REPO = "kinit-sk/gest"
TOL = 1e-5

#: GEST-like first-person sentences: quotes, commas, apostrophes, words of several pieces
SENTENCES = [
    "I have always been a leadership type.",
    "When I got bitten by the lion, I didn't hesitate and tended to my wound.",
    "I couldn't open the pickles, so I asked my roommate to do it.",
    "I am passionate.",
    "I cried when the movie ended.",
    "I fixed the car myself over the weekend.",
    'My friends call me "the boss".',
    "I spend hours choosing the right dress.",
]


def _cell(notebook: str, defines: str) -> str:
    """The source of the one code cell of ``notebook`` that defines ``defines``."""
    cells = json.loads(reference_file(REPO, notebook).read_text(encoding="utf-8"))["cells"]
    found = [''.join(c["source"]) for c in cells
             if c["cell_type"] == "code" and defines in ''.join(c["source"])]
    assert len(found) == 1, (notebook, defines, len(found))
    return found[0]


@pytest.fixture(scope="module")
def utils():
    return load_module("gest_reference_utils", reference_file(REPO, "src/masked_models/utils.py"))


@pytest.fixture(scope="module")
def inference(utils):
    """The namespace of the masked cell and of the causal cell of ``_inference.ipynb``."""
    ns = {"masked_logprob_score": utils.masked_logprob_score, "model_init": utils.model_init,
          "tqdm": lambda x: x, "torch": torch}
    exec(_cell("_inference.ipynb", "def english_mlm_score"), ns)  # noqa: S102 - the reference, as published
    causal = {"torch": torch, "generative_score": utils.generative_score, "token_id": utils.token_id}
    exec(_cell("_inference.ipynb", "'int8': ["), causal)  # noqa: S102
    return ns, causal


def test_the_declared_templates_are_the_authors(inference):
    masked, causal = inference
    s = SENTENCES[6]
    assert [(m(s), f(s)) for m, f in masked["templates"]] == \
        [(gest.fill(m, s), gest.fill(f, s)) for m, f in gest.MASKED_TEMPLATES]
    assert [(p(s), m, f) for p, m, f in causal["templates"]] == \
        [(gest.fill(p, s), m, f) for p, m, f in gest.CAUSAL_TEMPLATES]


@pytest.mark.parametrize("family", ["bert", "roberta", "albert", "electra"])
def test_masked_scores_equal_english_mlm_score(family, inference):
    masked, _ = inference
    model, tok = tiny(family)
    lm = tiny_lm(family)
    for k, template in enumerate(masked["templates"]):
        ref = [masked["english_mlm_score"](s, template, model, tok, "cpu") for s in SENTENCES]
        ours = gest_scores.masked_gest_scores(lm, SENTENCES, k, batch_tokens=96)
        np.testing.assert_allclose(ours, ref, rtol=0, atol=TOL, err_msg=f"{family} template {k}")
        assert np.isfinite(ours).all()


@pytest.mark.parametrize("family", ["gpt2", "llama"])
def test_causal_scores_equal_generative_score(family, inference, utils, tmp_path):
    _, causal = inference
    model, tok = tiny(family)
    lm = tiny_lm(family)
    folder = tmp_path / family
    tok.save_pretrained(folder)
    if family == "gpt2":  # as on the hub: a generic tokenizer class ignores add_prefix_space
        config = folder / "tokenizer_config.json"
        config.write_text(json.dumps({**json.loads(config.read_text()), "tokenizer_class": "GPT2Tokenizer"}))
    for k, (prompt, male, female) in enumerate(causal["templates"]):
        ids = utils.token_id(male, str(folder)), utils.token_id(female, str(folder))
        assert ids == (gest_scores.answer_token_id(lm.tokenizer, male),
                       gest_scores.answer_token_id(lm.tokenizer, female)), (family, male, female)
        ref = [utils.generative_score(s, prompt, *ids, model, tok, "cpu") for s in SENTENCES]
        ours = gest_scores.causal_gest_scores(lm, SENTENCES, k, batch_tokens=64)
        np.testing.assert_allclose(ours, ref, rtol=0, atol=TOL, err_msg=f"{family} template {k}")


# ------------------------------------------------------------------ the aggregation

def _aggregation(sentences, random_stand_in=None):
    """The namespace of ``_english_mlm.ipynb``'s aggregation cell (``r_i`` … ``r_i_ranks``)."""
    file = reference_file(REPO, "src/utils.py")
    plt = module("matplotlib.pyplot", plot=None)
    with stand_ins({"matplotlib": module("matplotlib", pyplot=plt), "matplotlib.pyplot": plt}):
        helpers = load_module("gest_reference_helpers", file)
    if random_stand_in is not None:
        helpers.random = random_stand_in
    ns = {"np": np, "gmean": gmean, "lru_cache": lru_cache, "bootstrap_ci": helpers.bootstrap_ci,
          "gest": sentences}
    exec(_cell("_english_mlm.ipynb", "def r_i_ranks"), ns)  # noqa: S102 - the reference, as published
    return ns


@pytest.fixture(scope="module")
def released(mirror_or_local):
    with mirror_or_local():
        return gest.load_gest()


def test_rates_g_s_and_ranks_equal_the_authors_on_every_released_run(released, monkeypatch):
    """All 11 × 4 masked and 23 × 2 causal runs: r_i (16 each), r_f, r_m, g_s and the ranks
    of the authors' functions, run on the released files, equal ours to 1e-12."""
    ns = _aggregation(released)
    registry = sources.load_registry()
    runs = gest.prediction_runs(registry=registry)
    assert len(runs) == 90
    for run in runs.itertuples():
        path = sources.fetch(gest.source_name(run.kind, run.model, run.template), registry)
        ref_rates = ns["r_is"](str(path), bootstrap=False)
        ours = gest_rates(gest.load_predictions(run.kind, run.model, run.template, registry=registry),
                          released.stereotype, n_bootstrap=0)
        where = f"{run.kind} {run.model} t{run.template}"
        np.testing.assert_allclose(ours.rates.rate, ref_rates, rtol=1e-12, err_msg=where)
        assert ours.r_f == pytest.approx(ns["r_f"](str(path)), rel=1e-12), where
        assert ours.r_m == pytest.approx(ns["r_m"](str(path)), rel=1e-12), where
        assert ours.g_s == pytest.approx(ns["g_s"](str(path)), rel=1e-12), where
        assert ours.rates["rank"].tolist() == ns["r_i_ranks"](str(path)).tolist(), where


def gest_source_path(kind, model, template):
    return sources.fetch(gest.source_name(kind, model, template))


class _SeededChoices:
    """``random`` as ``bootstrap_ci`` uses it: ``choices(scores, k)`` gives the resamples of
    ``default_rng(seed).integers(0, n, (n_bootstrap, n))``, one stereotype after the other."""

    def __init__(self, sizes, n_bootstrap, seed):
        rng = np.random.default_rng(seed)
        self._rows = iter([row for n in sizes for row in rng.integers(0, n, size=(n_bootstrap, n))])

    def choices(self, scores, k):
        row = next(self._rows)
        assert len(row) == k == len(scores)
        return [scores[j] for j in row]


@pytest.mark.parametrize(("kind", "model", "template"), [("masked", "bert-base-uncased", 0),
                                                         ("causal", "gpt2", 1)])
def test_the_normal_interval_is_the_authors_bootstrap_ci(released, kind, model, template):
    """With the same resamples, the authors' ``bootstrap_ci`` (normal fit to 1000 bootstrap
    means, exponentiated in ``r_i``) gives our interval of every r_i."""
    sizes = released.stereotype.value_counts().sort_index().tolist()
    ns = _aggregation(released, _SeededChoices(sizes, 1000, seed=7))
    path = str(gest_source_path(kind, model, template))
    ref = np.array(ns["r_is"](path, bootstrap=True))  # (16, 3): mean, lower, upper
    ours = gest_rates(gest.load_predictions(kind, model, template), released.stereotype,
                      n_bootstrap=1000, seed=7).rates
    np.testing.assert_allclose(ours.rate, ref[:, 0], rtol=1e-12)
    np.testing.assert_allclose(ours.ci_low, ref[:, 1], rtol=1e-9)
    np.testing.assert_allclose(ours.ci_high, ref[:, 2], rtol=1e-9)
