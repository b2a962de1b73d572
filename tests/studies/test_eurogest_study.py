"""EuroGEST across languages: scores of a loaded model, records, the results table, the heat map."""

import json

import numpy as np
import pandas as pd
import pytest
from polybias import measures, models
from polybias.engines.eurogest_scores import gendered_pair_scores
from polybias.planted.synthetic import minimal_pairs
from polybias.results import plots, table
from polybias.studies import eurogest as study
from polybias.studies import validity_designs

pytestmark = pytest.mark.usefixtures("torch_one_thread")


@pytest.fixture(scope="module")
def causal(torch_one_thread, monkeypatch_module):
    monkeypatch_module.setenv("POLYBIAS_PLANTED", "pinned")
    return models.load("planted-causal", "lm")


@pytest.fixture(scope="module")
def monkeypatch_module():
    mp = pytest.MonkeyPatch()
    yield mp
    mp.undo()


def test_score_language_keeps_what_fits_and_a_declared_subset(mirror, causal):
    scored = study.score_language(causal, "lv", per_stereotype=10, too_long="skip")
    assert scored.groupby(["condition", "stereotype"]).size().le(10).all()
    assert scored.attrs["n_too_long"] > 0 and set(scored.condition) == {"G", "P"}
    assert np.isfinite(scored.logprob_masc).all()
    with pytest.raises(Exception, match="accepts at most"):
        study.score_language(causal, "lv", per_stereotype=10)


def test_pairs_with_identical_forms_are_counted_and_kept_or_excluded(mirror, causal, monkeypatch):
    """A pair whose two forms are the same string can only tie (r = 0.5): counted per
    language, kept as the authors' code keeps it (default) or excluded by the named option."""
    real = study.eurogest_pairs

    def with_two_identical(language, **kw):
        pairs = real(language, **kw)
        gendered = pairs.index[pairs.condition == "G"][:2]
        pairs.loc[gendered, "feminine"] = pairs.loc[gendered, "masculine"]
        return pairs

    monkeypatch.setattr(study, "eurogest_pairs", with_two_identical)
    kept = study.score_language(causal, "lv", subsets=("gendered",), too_long="skip")
    excluded = study.score_language(causal, "lv", subsets=("gendered",), too_long="skip",
                                    identical_forms="exclude")
    assert kept.attrs["n_identical"] == excluded.attrs["n_identical"] == 2
    assert len(kept) == len(excluded) + 2
    ties = kept[kept.masculine == kept.feminine]
    assert len(ties) == 2 and (ties.logprob_masc == ties.logprob_fem).all()
    with pytest.raises(Exception, match="identical_forms must be one of"):
        study.score_language(causal, "lv", identical_forms="drop")
    monkeypatch.setattr(study, "eurogest_pairs", real)
    for language in ("cs", "hr", "ru", "sk"):  # the pinned files hold none
        assert not (real(language).masculine == real(language).feminine).any()


def test_run_writes_records_the_table_reads(mirror, causal, tmp_path):
    rates, summary = study.run_eurogest("planted-causal", ["cs", "da"], per_stereotype=10,
                                        n_bootstrap=50, too_long="skip", output_dir=str(tmp_path),
                                        lm=causal)
    assert summary.language.tolist() == ["cs", "da"] and summary.family.tolist() == ["Slavic", "Germanic"]
    assert len(rates) == 32 and rates.masculine_rate.between(0, 1).all()
    files = sorted(tmp_path.rglob("*.json"))
    assert len(files) == 2
    record = json.loads(files[0].read_text())
    assert record["metric"] == "eurogest" and "eurogest-gendered" in record["data_sha256"]
    frame = table.read_results(tmp_path)
    gs = frame[frame.metric == "eurogest"].set_index("language")
    assert gs.loc["cs", "value"] == pytest.approx(summary.set_index("language").g_s["cs"])
    assert (frame.metric == "eurogest-masculine-rate").sum() == 32
    again, _ = study.run_eurogest("planted-causal", ["cs", "da"], per_stereotype=10, n_bootstrap=50,
                                  too_long="skip", lm=causal)
    assert again.equals(rates)


def test_heatmap_is_readable(mirror, causal):
    rates, _ = study.run_eurogest("planted-causal", ["cs", "el", "lv", "mt"], subsets=("gendered",),
                                  per_stereotype=10, min_sentences=1, n_bootstrap=0,
                                  too_long="skip", lm=causal)
    fig = study.rates_heatmap(rates, "planted-causal: masculine rate by stereotype")
    assert plots.text_problems(fig) == []
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert labels == ["Czech (Slavic)", "Greek (Greek)", "Latvian (Baltic)", "Maltese (Semitic)"]


@pytest.mark.parametrize("kind", ["causal", "mlm"])
def test_the_measure_recovers_a_planted_association(kind, monkeypatch_module):
    """Planted English pairs as EuroGEST sentences (male/female form; a career attribute a
    masculine stereotype, a family one feminine): g_s above 1 on the planted model (p = 0.9)
    with an interval that excludes 1, and an interval that holds 1 on the balanced one."""
    monkeypatch_module.setenv("POLYBIAS_PLANTED", "pinned")
    pairs = minimal_pairs(n=120, language="en", seed=0)
    career = pairs["attribute_group"] == "career"
    items = pd.DataFrame({"masculine": np.where(career, pairs.sent_more, pairs.sent_less),
                          "feminine": np.where(career, pairs.sent_less, pairs.sent_more),
                          "stereotype": np.where(career, 8, 1)})
    planted, balanced = (measures.compute("eurogest", n_bootstrap=1000, seed=0,
                                          scored=gendered_pair_scores(validity_designs.planted_lm(kind, p), items))
                         for p in (0.9, 0.5))
    assert planted.value > 1.3 and planted.interval.low > 1
    assert balanced.interval.low < 1 < balanced.interval.high
