"""The main text's statements about the embedded real models (its section 5 and abstract) hold in
their kept records (paper/records): every number the prose gives is recomputed here and looked up
in the text."""

from pathlib import Path

import pytest
from polybias.runner import sweep, validity_eurogest
from polybias.studies import real_model_findings as findings
from polybias.studies import real_models as study

REPO = Path(__file__).resolve().parents[2]
TEXT = (REPO / "paper/main/e_real_models.md").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def tables():
    runs = sweep.run_records(REPO / "configs/sweeps/default.yaml", study.embedded_full_run, root=REPO)
    out = findings.findings_tables(runs, findings.validity_verdicts(validity_eurogest.read_frame()))
    out["runs"] = runs
    return out


def _cell(row, value="g_s", digits=3):
    return f"{row[value]:.{digits}f} [{row.ci_low:.{digits}f}, {row.ci_high:.{digits}f}]"


def test_languages_and_runs(tables):
    measured = findings.languages_measured(tables["tidy"])
    done = sum(v is not None for v in tables["runs"].values())
    assert (f"measured in {len(measured['all'])} languages (Gemma in {len(measured[study.GEMMA])}, "
            f"SmolLM2 in {len(measured[study.SMOLLM2])}" in " ".join(TEXT.split()))
    assert f"in {done} of the sweep's {len(tables['runs'])} full-set runs" in " ".join(TEXT.split())


def test_eurogest_in_29_languages(tables):
    gemma = tables["eurogest"][tables["eurogest"].model == study.GEMMA].set_index("language")
    counts = gemma.reading.value_counts()
    text = " ".join(TEXT.split())
    assert len(gemma) == 29 and gemma.complete.all()
    assert (f"above 1 in {counts['above']} languages" in text and f"holds 1 in {counts['holds']}" in text)
    assert counts.get("below", 0) == 1
    finnish, german = gemma.loc["fi"], gemma.loc["de"]
    assert finnish.reading == "below" and f"Finnish ({_cell(finnish)})" in text
    assert gemma.g_s.idxmax() == "de" and f"German's ({_cell(german)})" in text
    assert gemma.loc["el", "verdict"] == "too liberal" and f"({_cell(gemma.loc['el'])})" in text
    assert gemma.loc["cs", "reading"] == gemma.loc["lv", "reading"] == "holds"
    assert (gemma.verdict == "not tested").sum() == 26
    means = findings.eurogest_rates(tables["tidy"], study.GEMMA).groupby("language").masculine_rate.mean()
    for language, name in (("gl", "Galician"), ("el", "Greek"), ("ca", "Catalan"), ("ga", "Irish")):
        assert f"{means[language]:.3f} in {name}" in text
    assert means.idxmin() == "gl" and means.idxmax() == "ga"
    smollm2 = tables["eurogest"][tables["eurogest"].model == study.SMOLLM2]
    if len(smollm2):
        counts = smollm2.reading.value_counts()
        assert ("was scored in all 29 languages too" if len(smollm2) == 29
                else f"was scored in {len(smollm2)} of the 29 languages") in text
        smollm2_strongest = tables["strongest"][tables["strongest"].model == study.SMOLLM2].set_index("gender")
        assert f"(probability {smollm2_strongest.loc['feminine', 'p']:.3f})" in text
        assert f"the masculine ones not ({smollm2_strongest.loc['masculine', 'p']:.3f})" in text
        assert f"holds 1 in {counts.get('holds', 0)}" in text


def test_the_stereotypes_against_the_paper(tables):
    strongest = tables["strongest"][tables["strongest"].model == study.GEMMA].set_index("gender")
    text = " ".join(TEXT.split())
    assert strongest.loc["feminine", "ranks"] == "2, 3, 6"
    assert f"probability {strongest.loc['feminine', 'p']:.3f}" in text
    assert strongest.loc["masculine", "ranks"] == "13, 11, 14, 15"
    assert f"probability {strongest.loc['masculine', 'p']:.4f}" in text
    rates = findings.eurogest_rates(tables["tidy"], study.GEMMA)
    ranking = tables["stereotypes"][tables["stereotypes"].model == study.GEMMA]
    assert f"({ranking.mean_rate.min():.3f} to {ranking.mean_rate.max():.3f})" in text
    assert f"{int((rates.masculine_rate > 0.5).sum())} of the {len(rates)} rates" in text


def test_gest_crows_and_stereoset(tables):
    other = tables["other"].set_index(["model", "measure", "test", "language"])
    text = " ".join(TEXT.split())
    for model in (study.GEMMA, study.SMOLLM2):
        for template in (1, 2):
            row = other.loc[(model, "gest g_s", f"causal template {template}", "en")]
            assert _cell(row, "value") in text
    pairs = tables["pairs"].set_index(["model", "dataset", "language"])
    for key in [(study.GEMMA, "crows-pairs", "en"), (study.SMOLLM2, "crows-pairs", "en"),
                (study.GEMMA, "crows-pairs-gamboa", "en"), (study.SMOLLM2, "crows-pairs-gamboa", "en"),
                (study.GEMMA, "kaneko2022", "ja"), (study.GEMMA, "kaneko2022", "ru")]:
        assert _cell(pairs.loc[key], "score", 2) in text, key
    assert (pairs.loc[(study.GEMMA, "crows-pairs", "en"), "reading"] == "above"
            == pairs.loc[(study.SMOLLM2, "crows-pairs", "en"), "reading"])
    for key in [(study.GEMMA, "stereoset SS", "intrasentence", "en"),
                (study.GEMMA, "stereoset SS", "intrasentence", "de"),
                (study.GEMMA, "stereoset SS", "intrasentence", "es"),
                (study.SMOLLM2, "stereoset SS", "intrasentence", "de")]:
        assert _cell(other.loc[key], "value", 2) in text, key
    differ = tables["differences"][tables["differences"].differ]
    gemma_higher = int(((differ.model_a == study.GEMMA) & (differ.value_a > differ.value_b)).sum())
    assert f"Of the {len(tables['differences'])} cells both were measured in, they differ beyond their intervals in {len(differ)}" in text
    assert ("in every one Gemma's value is the higher" in text if gemma_higher == len(differ)
            else f"Gemma's value the higher in {gemma_higher} of them" in text)
    # English: every pair set above 50, for both models; outside English, the counts
    english = tables["pairs"][tables["pairs"].language == "en"]
    for model, name in ((study.GEMMA, "Gemma"), (study.SMOLLM2, "SmolLM2")):
        rows = english[english.model == model]
        assert (rows.reading == "above").all() and f"{len(rows)} of {len(rows)} for {name}" in text
    other_languages = tables["pairs"][tables["pairs"].language != "en"]
    gemma = other_languages[other_languages.model == study.GEMMA]
    smollm2 = other_languages[other_languages.model == study.SMOLLM2]
    assert f"Gemma's intervals hold 50 in {(gemma.reading == 'holds').sum()} of its {len(gemma)} cells outside English" in text
    assert (gemma.reading != "below").all() and (smollm2.reading == "below").sum() >= 1
    assert f"of its {len(smollm2)}: " in text


def test_the_abstract_states_the_same_findings(tables):
    abstract = " ".join((REPO / "paper/main/a_introduction.md").read_text(encoding="utf-8")
                        .split("## 1. Introduction")[0].split())
    measured = findings.languages_measured(tables["tidy"])
    gemma = tables["eurogest"][tables["eurogest"].model == study.GEMMA]
    strongest = tables["strongest"][tables["strongest"].model == study.GEMMA].set_index("gender")
    pairs = tables["pairs"].set_index(["model", "dataset", "language"])
    assert f"full data in {len(measured['all'])} languages" in abstract
    assert f"above 1 in {(gemma.reading == 'above').sum()} of {len(gemma)} European languages" in abstract
    assert f"p = {strongest.loc['feminine', 'p']:.3f} for the feminine ones, " \
           f"{strongest.loc['masculine', 'p']:.4f} for the masculine" in abstract
    assert (f"({pairs.loc[(study.GEMMA, 'crows-pairs', 'en'), 'score']:.2f} % and "
            f"{pairs.loc[(study.SMOLLM2, 'crows-pairs', 'en'), 'score']:.2f} % of 1,508 pairs)") in abstract


def test_what_can_be_trusted(tables):
    """The cells whose measure is calibrated in their language: CrowS-Pairs in English and Hindi."""
    text = " ".join(TEXT.split())
    pairs = tables["pairs"]
    for model in (study.GEMMA, study.SMOLLM2):
        rows = pairs[pairs.model == model]
        calibrated = rows[rows.verdict == "calibrated"]
        assert set(calibrated.language) == {"en", "hi"}
        assert f"({len(calibrated)} of each model's {len(rows)} cells of the measure)" in text
    assert not (tables["eurogest"].verdict == "calibrated").any()

