"""Figures a reader can read at the size they are shown (polybias.results.plots, the export's
comparison figures): no text outside the canvas, no label cut with an ellipsis, no
overlapping tick labels, no tiny fonts; rows named with model and language in words."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
from polybias.measures import MEASURES
from polybias.results import export, plots
from polybias.results import table as results
from polybias.studies import (
    categorical_bias,
    ceat,
    debiasing,
    external_validity,
    hidden_states,
    logprob_context,
    seat,
    validity,
)

plt = plots.pyplot()


@pytest.fixture(autouse=True)
def _close():
    yield
    plt.close("all")


# ------------------------------------------------------------------ the checker itself

def test_the_checker_finds_a_label_outside_the_canvas():
    fig, ax = plt.subplots(figsize=(3, 2))
    ax.set_yticks([0, 1], ["a very long row label that does not fit on the left", "b"])
    assert any("outside the canvas" in p for p in plots.text_problems(fig))


def test_the_checker_finds_a_cut_label_small_fonts_and_overlaps():
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.set_xticks(range(4), ["crows-pairs-dutch-published", "other monolingu…", "c", "d"],
                  fontsize=11)
    ax.set_title("tiny", fontsize=5)
    fig.tight_layout()
    problems = plots.text_problems(fig)
    assert any("ellipsis" in p and "monolingu…" in p for p in problems)
    assert any("font 5 pt" in p for p in problems)
    assert any("tick labels overlap" in p for p in problems)


def test_a_readable_figure_passes():
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.plot([0, 1], [0, 1], label="line")
    ax.set_xlabel("x (unit)")
    ax.legend()
    fig.tight_layout()
    assert plots.text_problems(fig) == []


def test_wrap_never_cuts_a_word():
    text = "crows-pairs-dutch-published · other monolingual, one per language"
    assert plots.wrap(text, 20).replace("\n", " ") == text
    assert "…" not in plots.wrap(text, 5)


# ------------------------------------------------------------------ the export's figures

def _crows_frame() -> pd.DataFrame:
    """Records shaped like the default sweep's CrowS-Pairs rows: planted models in two
    languages and the Dutch CrowS-Pairs comparison groups with long subset names."""
    rows = []
    for subset in ("all", "gender"):
        for model, lang, v in (("planted-mlm", "en", 100.0), ("planted-mlm-control", "en", 46.5),
                               ("planted-mlm-hi", "hi", 100.0)):
            rows.append(dict(test="planted", subset=subset, model=model, language=lang, value=v,
                             ci_low=v - 5, ci_high=min(v + 5, 100)))
    groups = {"Dutch: multilingual vs monolingual": [("bertje", "nl"), ("mbert", "nl")],
              "other monolingual models, one per language, on the same translated pairs":
                  [("bert", "en"), ("flaubert", "fr"), ("bertje", "nl")]}
    for subset, members in groups.items():
        for k, (model, lang) in enumerate(members):
            rows.append(dict(test="crows-pairs-dutch-published", subset=subset, model=model,
                             language=lang, value=52.0 + 3 * k, ci_low=50.0 + 3 * k,
                             ci_high=55.0 + 3 * k))
    rows.append(dict(test="planted", subset="all", model="planted-causal", language="en",
                     value=np.nan, ci_low=np.nan, ci_high=np.nan))
    frame = pd.DataFrame(rows).assign(metric="crows", study="crows", p=0.01)
    return frame


def test_the_comparison_figure_names_every_row_and_hides_nothing():
    frame = _crows_frame()
    fig = export.comparison_figure(frame, "crows")
    assert plots.text_problems(fig) == []
    ax = fig.axes[0]
    labels = [t.get_text().replace("\n", " ") for t in ax.get_yticklabels()]
    assert len(labels) == len(frame)  # one row per model and group, none dropped
    for row in frame.itertuples():
        name = {"en": "English", "hi": "Hindi", "nl": "Dutch", "fr": "French"}[row.language]
        assert f"{row.model} ({name})" in labels
    headings = [t.get_text().replace("\n", " ") for t in ax.texts if t.get_fontweight() == "bold"]
    assert any("other monolingual models, one per language, on the same translated pairs" in h
               for h in headings)  # wrapped, never cut
    assert any(t.get_text() == "no value" for t in ax.texts)
    assert "50 = no preference; > 50 toward the stereotype" in ax.get_xlabel().replace("\n", " ")
    legend = fig.legends[0]
    assert sorted(t.get_text() for t in legend.get_texts()) == ["Dutch", "English", "French", "Hindi"]
    # the legend lies outside the data area
    fig.canvas.draw()
    assert not legend.get_window_extent().overlaps(ax.get_window_extent())


def test_the_exported_figure_fits_the_readme_width():
    fig = export.comparison_figure(_crows_frame(), "crows")
    assert fig.get_size_inches()[0] * export.EXPORT_DPI <= 800


def test_rows_are_grouped_by_dataset_and_ordered_by_language():
    fig = export.comparison_figure(_crows_frame(), "crows")
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    first = labels[:4]  # planted · all: the English models, then the Hindi one
    assert first[-1] == "planted-mlm-hi (Hindi)" and all("English" in x for x in first[:-1])


def test_the_colours_are_the_colour_blind_palette():
    import matplotlib.colors as mcolors
    import seaborn as sns

    fig = export.comparison_figure(_crows_frame(), "crows")
    used = {mcolors.to_hex(line.get_color()) for line in fig.axes[0].get_lines()
            if line.get_marker() not in (None, "None", "")}
    palette = {mcolors.to_hex(c) for c in sns.color_palette("colorblind")}
    assert used and used <= palette


def test_every_registered_measure_has_an_axis_with_unit_and_direction():
    """'<name>, <unit> (<null> = no bias; <which side> ...)'."""
    shape = re.compile(r"^.+, .+ \(.+ = .+; .+\)$")
    for name, m in MEASURES.items():
        assert shape.match(m.axis), (name, m.axis)
    for metric in results.STUDY_METRICS:
        assert shape.match(results.metric_axis(metric)[1]), metric


def test_a_long_export_goes_on_further_figures_and_leaves_nothing_out():
    frame = pd.concat([_crows_frame().assign(test=f"T{i}") for i in range(12)], ignore_index=True)
    figs = export.comparison_figures(frame, "crows", max_rows=24)
    assert len(figs) == -(-len(frame) // 24)
    shown = sum(len(f.axes[0].get_yticklabels()) for f in figs)
    assert shown == len(frame)
    assert f"(part 1 of {len(figs)}: rows 1–24 of {len(frame)})" in figs[0].texts[0].get_text()
    assert all(plots.text_problems(f) == [] for f in figs)


def test_tests_sort_as_numbers_and_a_model_is_named_once():
    frame = pd.DataFrame([dict(test=f"WEAT{i}", subset="", model="w2v", language="en", value=0.1 * i,
                               ci_low=np.nan, ci_high=np.nan) for i in (1, 10, 2, 3)]
                         ).assign(metric="weat", study="weat", p=0.01)
    fig = export.comparison_figure(frame.sort_values("test"), "weat")
    labels = [t.get_text() for t in fig.axes[0].get_yticklabels()]
    assert labels == ["WEAT1", "WEAT2", "WEAT3", "WEAT10"]
    headings = [t.get_text() for t in fig.axes[0].texts if t.get_fontweight() == "bold"]
    assert headings == ["w2v (English)"]


# ------------------------------------------------------------------ the notebooks' shared figures

def _strength_tables():
    ps = [0.1, 0.3, 0.5, 0.7, 0.9]
    keys = [("crows-mlm", "stereotype-score"), ("template-mlm", "kurita-effect-size"),
            ("embedding-mlm", "seat-effect-size"), ("interactions-mlm", "interaction-cb"),
            ("weat", "effect-size")]
    dose = pd.DataFrame([dict(measure=m, metric=k, p=p, mean=p, low=p - 0.1, high=p + 0.1)
                         for m, k in keys for p in ps])
    power = pd.DataFrame([dict(measure=m, metric=k, size_axis="pairs", size=s, p=p,
                               power=min(1.0, p * s / 50))
                          for m, k in keys for s in (25, 50, 100) for p in ps])
    return dose, power


FIGURES = {
    "reproduced_vs_reported": lambda: plots.reproduced_vs_reported(
        pd.DataFrame({"test": [f"WEAT{i}" for i in range(1, 11)],
                      "reproduced": np.linspace(-0.2, 1.9, 10), "reported": np.linspace(0, 1.8, 10)}),
        "test", "WEAT effect sizes, w2v-gnews"),
    "scores_with_ci": lambda: plots.scores_with_ci(
        pd.DataFrame({"bias_type": ["all", "gender", "sexual-orientation"], "score": [60, 55, 70],
                      "ci_low": [55, 50, 62], "ci_high": [65, 60, 78]}),
        "Stereotype score, planted-mlm on planted"),
    "scores_by_group": lambda: plots.scores_by_group(
        pd.DataFrame({"group": ["RoBERTa-based, one per language"] * 3 + ["Dutch"] * 2,
                      "label": ["roberta (en)", "camembert (fr)", "robbert (nl)", "mbert (nl)",
                                "bertje (nl)"],
                      "score": [65, 58, 55, 52, 55], "ci_low": [62, 55, 52, 50, 52],
                      "ci_high": [67, 61, 57, 55, 57]}),
        "Stereotype score per language, published on crows-pairs-dutch"),
    "dose_response": lambda: plots.dose_response(  # the measures' own, long axis titles
        _strength_tables()[0], "Metrics against planted strength (en; mean and 95 % interval "
        "over models)", axis=validity.axis_titles(_strength_tables()[0])),
    "power_curves": lambda: plots.power_curves(_strength_tables()[1],
                                               "Detection rate against planted strength (en)"),
    "correlation_heatmap": lambda: plots.correlation_heatmap(
        pd.DataFrame(np.eye(6), index=[f"metric-{i}:effect-size" for i in range(6)],
                     columns=[f"metric-{i}:effect-size" for i in range(6)]),
        "Spearman correlation across planted models"),
}


@pytest.mark.parametrize("name", FIGURES)
def test_the_shared_figures_are_readable(name):
    drawn = FIGURES[name]()
    for fig in drawn if isinstance(drawn, list) else [drawn]:
        assert plots.text_problems(fig) == []


def test_strength_grids_span_every_strength_and_title_their_axes():
    dose, power = _strength_tables()
    dose = pd.concat([dose, pd.DataFrame([dict(measure="embedding-mlm", metric="ceat-ces-perm", p=0.5,
                                                mean=0.0, low=-0.1, high=0.1)])], ignore_index=True)
    axis = {("weat", "effect-size"): "WEAT effect size d, pooled SDs (0 = no bias; > 0: X with A)"}
    [fig] = plots.dose_response(dose, "Metrics against planted strength", axis=axis)
    panels = [ax for ax in fig.axes if ax.get_visible()]
    assert all(ax.get_xlim() == (0.0, 1.0) for ax in panels)  # a panel at p = 0.5 only too
    labels = [ax.get_ylabel().replace("\n", " ") for ax in panels]
    assert "value" not in labels and any(label.startswith("WEAT effect size d") for label in labels)
    assert "value of ceat-ces-perm" in labels
    [fig] = plots.power_curves(power, "Detection rate")
    markers = {line.get_marker() for line in fig.axes[0].get_lines() if line.get_label()[0] != "_"}
    assert len(markers) == 3  # one per size, not colour alone


def test_a_figure_is_shown_below_its_cell_only_in_a_kernel():
    fig = FIGURES["scores_with_ci"]()
    assert plots.show_figure(fig) is False  # no kernel here: nothing shown, nothing closed
    assert plots.png_bytes(fig) == plots.png_bytes(fig)  # the same figure, the same bytes


# ------------------------------------------------------------------ the studies' figures

def _ceat_frame(n_tests: int) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame([dict(test=f"religion_adjectives_translated_{t}", sample_set=s, length=n,
                              ces=1.5 + rng.normal(0, 0.2), se=0.05, n_samples=1000,
                              pvalue=0.001 if t % 3 else 0.2)
                         for t in range(n_tests) for s in ("fixed", "random")
                         for n in ("9", "25", "75", ">75")])


def _context_frame() -> pd.DataFrame:
    rng = np.random.default_rng(1)
    return pd.DataFrame([dict(structure=f"S{k}", attribute=f"a{i}", attribute_group=g,
                              prior=rng.normal(0, 1), corrected=(2 if g == "positive" else -2)
                              + rng.normal(0, 0.3))
                         for k in range(1, 6) for g in ("positive", "negative") for i in range(25)])


def _study_figures():
    rng = np.random.default_rng(2)
    points = {m: rng.normal(size=(120, 2)) for m in ("pca", "svd", "tsne")}
    groups = list(np.repeat(["unknown", "americas", "asia", "africa", "europe", "oceania"], 20))
    debias = pd.DataFrame([dict(kind=k, test=t, method=m, effect_size=rng.normal(1, 0.5))
                           for k, tests in (("BM", ["WEAT6 names: career vs family",
                                                     "WEAT7 math vs arts", "occupations"]),
                                            ("IR", ["gendered role nouns", "kinship terms"]))
                           for t in tests
                           for m in ("original", "he-she", "PCA", "hard", "LPSG (⊥ roles)", "INLP")])
    women = rng.uniform(0, 1, 60)
    return {
        "ceat, 22 tests": lambda: ceat.plot_segment_study(_ceat_frame(22),
                                                          "CEAT by segment length, planted-static"),
        "ceat, 2 tests": lambda: ceat.plot_segment_study(_ceat_frame(2), "CEAT, minilm-l6"),
        "seat": lambda: seat.plot_effects(
            pd.DataFrame({"test": ["weat5", "heilman_double_bind_competent_one_sentence"] * 6,
                          "effect_size": np.linspace(-1, 1.4, 12), "pvalue": [0.01, 0.3] * 6}),
            "SEAT, minilm-l6 (model pooling)"),
        "hidden states": lambda: hidden_states.plot_views(
            points, groups, "Hidden states of the country word, minilm-l6, layer -1"),
        "log-probability context": lambda: logprob_context.plot_context_study(
            _context_frame(), "Prior vs corrected differences, planted-analytic-p0.9"),
        "debiasing": lambda: debiasing.plot_effects(
            debias, "English gender: debiasing methods on bias (BM) and retention (IR) tests"),
        "categorical bias": lambda: categorical_bias.plot_group_shares(
            pd.DataFrame({"attribute_group": ["career", "career", "family", "family"],
                          "target_group": ["female", "male"] * 2, "share": [0.1, 0.9, 0.9, 0.1]}),
            "Normalised probability share, planted-mlm"),
        "census": lambda: external_validity.plot_census_scatter(
            {m: pd.DataFrame({"women": women, m: women - 0.5 + rng.normal(0, 0.1, 60)})
             for m in ("wefat", "relative_norm_distance", "encoder_wefat", "logprob_bias")},
            2015, "Occupation bias against the census share of women (2015)"),
    }


STUDY_FIGURES = ["ceat, 22 tests", "ceat, 2 tests", "seat", "hidden states",
                 "log-probability context", "debiasing", "categorical bias", "census"]


@pytest.mark.parametrize("name", STUDY_FIGURES)
def test_the_study_figures_are_readable(name):
    figs = _study_figures()[name]()
    for fig in figs if isinstance(figs, list) else [figs]:
        _readable(fig, name)


def _readable(fig, name):
    assert plots.text_problems(fig) == []
    fig.canvas.draw()
    for legend in [*fig.legends, *(ax.get_legend() for ax in fig.axes)]:
        if legend is None:
            continue
        for ax in fig.axes:  # no legend over a panel of data
            if ax.get_visible() and ax.has_data() and legend.axes is not ax:
                assert not legend.get_window_extent().overlaps(ax.get_window_extent()), name


def test_a_figure_records_its_smallest_font_and_prints_it_at_size():
    fig, ax = plt.subplots(figsize=(4, 3))
    ax.plot([0, 1], [0, 1])
    ax.tick_params(labelsize=7.5)
    ax.set_title("title", fontsize=11)
    assert plots.png_font(plots.png_bytes(fig)) == 7.5
    assert plots.text_problems(fig) == []
    fig.set_size_inches(8, 3)  # wider than the PDF's text block: printed at 6.69 / 8 of it
    assert any("printed at 6.3 pt" in p for p in plots.text_problems(fig))
    assert plots.text_problems(fig, printed=False) == []


def test_the_validity_grids_with_their_long_axis_titles_are_readable():
    """The validity sweep's panels with their registered axis titles (four lines each): the
    x title still fits its panel, and the twelve panels go on two figures."""
    keys = [("crows-causal", "jsd-B"), ("crows-causal", "stereotype-score"), ("crows-mlm", "jsd-B"),
            ("crows-mlm", "stereotype-score"), ("embedding-mlm", "ceat-ces"),
            ("embedding-mlm", "ceat-ces-perm"), ("embedding-mlm", "seat-effect-size"),
            ("interactions-mlm", "interaction-cb"), ("interactions-mlm", "pronoun-cb"),
            ("template-mlm", "cb"), ("template-mlm", "kurita-effect-size"), ("weat", "effect-size")]
    dose = pd.DataFrame([dict(measure=m, metric=k, p=p, mean=100 * p, low=100 * p - 10,
                              high=100 * p + 10) for m, k in keys for p in (0.1, 0.3, 0.5, 0.7, 0.9)])
    figs = plots.dose_response(dose, "Metrics against planted strength (en; mean and 95 % "
                               "interval over models)", axis=validity.axis_titles(dose))
    assert len(figs) == 2
    for fig in figs:
        assert plots.text_problems(fig) == []


def test_the_ceat_segment_figure_draws_each_ces_with_its_interval_and_names_n():
    """Every CES is drawn with its 95 % interval (CES ± 1.96 SE, the interval its record
    holds), and the legend names the samples a point is over."""
    from matplotlib.collections import LineCollection

    frame = _ceat_frame(2)
    (fig,) = ceat.plot_segment_study(frame, "CEAT, minilm-l6")
    bars = [c for ax in fig.axes for c in ax.collections if isinstance(c, LineCollection)]
    assert len(bars) == 4  # 2 tests × (fixed, random)
    segments = np.concatenate([np.asarray(b.get_segments()) for b in bars])
    assert np.allclose(segments[:, 1, 1] - segments[:, 0, 1], 2 * 1.959963984540054 * 0.05)
    labels = [t.get_text() for t in fig.legends[0].get_texts()]
    assert any("95 % interval" in t and "n = 1,000 samples" in t for t in labels)
