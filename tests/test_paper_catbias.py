"""The paper sweep's Categorical Bias runs score one characteristic per run.

``data/templates/catbias_en`` holds gender and religion templates; scored together they
have no score for every group in any row (``CatBiasError``), for any model. Each English
run of ``configs/sweeps/paper.yaml`` names the templates of one category, and notebook
06's CB calls run on each, here on a tiny random MLM.
"""

from pathlib import Path

import pytest
from polybias.data import templating
from polybias.engines import scoring
from polybias.metrics import catbias
from polybias.planted.tiny_models import build_tiny_model
from polybias.runner import sweep
from polybias.studies import categorical_bias, parameters

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def tiny_mlm():
    model, tok = build_tiny_model("bert")
    return scoring.wrap_language_model(model, tok, "tiny-bert")


def _catbias_runs(monkeypatch):
    monkeypatch.setenv("POLYBIAS_ROOT", str(REPO))
    return [r for r in sweep.load_sweep(REPO / "configs/sweeps/paper.yaml")
            if r.notebook.endswith("06_categorical_bias.py")]


def test_each_cb_run_scores_the_groups_of_one_list(monkeypatch):
    runs = _catbias_runs(monkeypatch)
    english = [r for r in runs if r.parameters["templates"] == "catbias_en"]
    assert {r.parameters["target_list"] for r in english} == {"gender_groups", "religion_groups"}
    assert len({r.section + "/" + r.key for r in runs}) == len(runs)
    assert len({r.parameters["table_file"] for r in runs}) == len(runs)
    for run in runs:
        book = templating.load_templates(run.parameters["templates"])
        names = run.parameters.get("template_names") or list(book.templates)
        lists = {book.template(n).slots[book.template(n).the("target")].list for n in names}
        assert lists == {run.parameters["target_list"]}, (run.key, names, lists)


def test_notebook_06_cb_calls_run_for_both_english_categories(monkeypatch, tiny_mlm,
                                                               torch_one_thread):
    book = templating.load_templates("catbias_en")
    with pytest.raises(catbias.CatBiasError, match="rows without a score for every group"):
        categorical_bias.ahn_oh_cb(tiny_mlm, book, list(book.templates))
    defaults = parameters.defaults("06_categorical_bias")  # what a run does not state, it takes from here
    for run in [r for r in _catbias_runs(monkeypatch) if r.parameters["templates"] == "catbias_en"]:
        given = {**defaults, **run.parameters}
        names, ddof = given["template_names"], given["ddof"]
        ahn_oh = categorical_bias.ahn_oh_cb(tiny_mlm, book, names, mode=given["mode"], ddof=ddof)
        pll = catbias.pll_cb(categorical_bias.pll_scores(tiny_mlm, book, names), ddof=ddof)
        groups = len(book.lists[run.parameters["target_list"]].ids)
        assert int(ahn_oh.rows.n_groups.iloc[0]) == groups and ahn_oh.score >= 0 and pll.score >= 0
        p_norm = catbias.normalized_word_probability(ahn_oh.scores)
        assert not catbias.top_k_groups(p_norm[p_norm.template == names[0]], k=3).empty
        kl = categorical_bias.distribution_difference(tiny_mlm, book, names[0],
                                             book.lists[run.parameters["target_list"]].ids[:8])
        assert catbias.max_kl(kl)[2] >= 0
