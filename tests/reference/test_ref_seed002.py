"""Seed 002 (BehnamGhader & Milios 2022) reference code, executed:
``pll_cb(template_norm="per-template")`` and ``max_kl(labels="seed002")``.

Reference: ParishadBehnam/Social-Biases-in-BERT-Variants-Across-Multiple-Languages at
7d89b25f, ``utils.py`` (source ``ref-seed002-utils``): ``score_lists_sent_prob`` and
``average_across_templates_from_dict`` executed unchanged on a three-template set; the
categorical-bias cell of ``main.ipynb`` (``np.var(np.log(scores), -1)``, averaged over
priors) and its KL cell are two lines each and are restated in the test, not executed.

Shims (stand-in modules; the reference logic is untouched):

* ``mlm.scorers.MLMScorerPT`` (awslabs mlm-scoring, needs mxnet/gluonnlp, not installable
  today): ``score_sentences`` returns the sentence pseudo-log-likelihood of the tiny
  random BERT from :func:`polybias.engines.scoring.pseudo_log_likelihood` — the same numbers
  enter both sides, so the test checks the reference's normalisation within a template
  and averaging across templates (the part where the issue found a difference), not
  mlm-scoring's PLL itself.
* ``mxnet``: ``mx.cpu()`` only.

The reference scores three languages at once (it asserts the lists' lengths agree); the
test gives all three the same English template set and model.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import torch
from polybias.data import templating
from polybias.engines import scoring
from polybias.metrics import catbias
from polybias.studies import categorical_bias
from refsupport import load_module, module, reference_file, stand_ins, tiny_lm

pytestmark = pytest.mark.usefixtures("torch_one_thread")
REPO = "ParishadBehnam/Social-Biases-in-BERT-Variants-Across-Multiple-Languages"
TEMPLATES = ["[MASK] are always so {prior}.", "all [MASK] are {prior}.", "why are [MASK] always so {prior}?"]
GROUPS = ["muslims", "christians", "asians", "africans", "americans"]
PRIORS = ["careful", "kind", "friendly", "rich"]


@pytest.fixture(scope="module")
def reference():
    lm = tiny_lm("bert")

    class MLMScorerPT:
        def __init__(self, model, vocab, tokenizer, ctxs):
            pass

        def score_sentences(self, sentences, per_token=False):
            return list(scoring.pseudo_log_likelihood(lm, list(sentences)))

    with stand_ins({"mlm": module("mlm"), "mlm.scorers": module("mlm.scorers", MLMScorerPT=MLMScorerPT),
                    "mxnet": module("mxnet", cpu=lambda: "cpu")}):
        mod = load_module("seed002_utils_reference", reference_file(REPO, "utils.py"))
    return mod, MLMScorerPT(None, None, None, None)


def test_per_template_norm_equals_the_executed_reference(reference):
    mod, scorer = reference
    langs = ["english", "greek", "persian"]
    scorers = {lang: scorer for lang in langs}
    prior_list = {lang: list(PRIORS) for lang in langs}
    mask_list = {lang: list(GROUPS) for lang in langs}
    with torch.no_grad():
        per_template = [mod.score_lists_sent_prob(scorers, {lang: t for lang in langs}, prior_list, mask_list)
                        for t in TEMPLATES]
    averaged = mod.average_across_templates_from_dict(per_template)["english"]
    probs = np.array([[averaged[p][g] for g in GROUPS] for p in PRIORS])
    ref_rows = np.var(np.log(probs), -1)          # main.ipynb, categorical-bias cell
    ref_cb = float(ref_rows.mean())

    book = templating.parse_templates({
        "lists": {"g": GROUPS, "p": PRIORS},
        "templates": [{"name": f"t{i}", "set": "s", "text": t.replace("[MASK]", "{g}").replace("{prior}", "{p}"),
                       "slots": {"g": {"list": "g", "role": "target"}, "p": {"list": "p", "role": "attribute"}}}
                      for i, t in enumerate(TEMPLATES)]})
    lm = tiny_lm("bert")
    scores = categorical_bias.pll_scores(lm, book, list(book.templates))
    ours = catbias.pll_cb(scores, template_norm="per-template")
    rows = ours.rows.set_index("attribute").cb.reindex(PRIORS).to_numpy()
    default = catbias.pll_cb(scores).score
    print(f"seed002 per-template: max |diff| per-prior CB {np.abs(rows - ref_rows).max():.1e}, "
          f"CB {ours.score:.6f} vs {ref_cb:.6f} (default {default:.6f})")
    assert np.abs(rows - ref_rows).max() < 1e-6 * max(1.0, np.abs(ref_rows).max())
    assert ours.score == pytest.approx(ref_cb, rel=1e-6)
    assert abs(default - ref_cb) > 1e-3  # the default (log-mean-exp of raw probabilities) differs
    # one template: both agree
    one = catbias.pll_cb(scores[scores.template == "t0"], template_norm="per-template").score
    assert one == pytest.approx(catbias.pll_cb(scores[scores.template == "t0"]).score, rel=1e-9)


def test_kl_labels_follow_the_seed002_notebook():
    """The notebook's KL cell, restated: ``F.kl_div(dist_1, dist_2, log_target=True)`` under
    ``w_1-w_2`` (reduction "mean", as there)."""
    rng = np.random.default_rng(0)
    logits = torch.tensor(rng.normal(size=(3, 50)) * 3)
    dists = {w: torch.log_softmax(logits[i], -1) for i, w in enumerate(["x", "y", "z"])}
    table = {}
    for w_1, dist_1 in dists.items():
        for w_2, dist_2 in dists.items():
            table[w_1 + "-" + w_2] = float(torch.nn.functional.kl_div(dist_1, dist_2, log_target=True))
    ref_key = max(table, key=table.get)
    matrix = catbias.kl_matrix(torch.stack(list(dists.values())).numpy(), list(dists), scale="mean")
    a, b, value = catbias.max_kl(matrix, labels="seed002")
    assert f"{a}-{b}" == ref_key and value == pytest.approx(table[ref_key], rel=1e-6)
    row, col, _ = catbias.max_kl(matrix)
    assert (row, col) == (b, a)
    with pytest.raises(catbias.CatBiasError, match="labels must be one of"):
        catbias.max_kl(matrix, labels="ref")
    with pytest.raises(catbias.CatBiasError, match="template_norm must be one of"):
        catbias.pll_cb(pd.DataFrame(), template_norm="per-set")
