"""A model's profile: its overall number under every measure, per dataset and language, with
interval, n and the measure's validity verdict there, beside the released real checkpoints'
numbers under the same measure, dataset and language.

What ``polybias profile MODEL`` prints and notebook 18 shows. The rows come from the run
records of the model's runs (:func:`profile_table`); the validity verdicts from the
planted-model study (:func:`polybias.studies.real_model_findings.validity_verdicts`); the
reference checkpoints from the table of notebook 17
(:func:`polybias.studies.real_models.real_model_table`: the authors' released GEST,
StereoSet and Dutch CrowS-Pairs runs, and the embedded real models' full-set runs).
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from polybias.results import plots
from polybias.studies import real_model_findings as findings
from polybias.studies import real_models
from polybias.studies.notebook_parameters import (
    OUTPUT_DIR,
    TABLE_FILE,
    Notebook,
    Parameter,
    free,
    integer,
)

COLUMNS = ("measure", "test", "subset", "language", "value", "ci_low", "ci_high", "n", "verdict")
"""The columns of :func:`profile_table`."""

LABELS = {"crows": "CrowS-Pairs stereotype score (%)", "jsd-b": "JSD stereotype score B (%)",
          "stereoset": "StereoSet intrasentence SS (%)", "gest": "GEST g_s",
          "eurogest": "EuroGEST g_s", "weat": "WEAT effect size d", "seat": "SEAT effect size d"}
"""Display name of each measure of a profile (its unit in brackets)."""

NEUTRAL = {"crows": 50.0, "jsd-b": 50.0, "stereoset": 50.0, "gest": 1.0, "eurogest": 1.0,
           "weat": 0.0, "seat": 0.0}
"""The value of each measure that reads as no bias (no preference; masculine and feminine
alike; no association)."""

VERDICT_STYLES = {"calibrated": ("o", 0), "too liberal": ("X", 3), "undecided": ("s", 1),
                  "not tested": ("D", 8)}
"""The marker and colour (an index of the palette; 8: near black) of a number in the
profile figure, by its measure's validity verdict."""

SOURCE_DATASETS = {"crows-pairs-dutch-published": "crows-pairs-dutch"}
"""The dataset a released source's ``crows-pairs stereotype score`` rows were scored on (the
embedded models' rows name theirs in ``run``)."""


def profile_table(runs: dict[str, pd.DataFrame | None], verdicts: pd.DataFrame) -> pd.DataFrame:
    """One row per measure, test, subset and language of the done runs' overall numbers
    (CrowS-Pairs, its JSD score B and StereoSet over all pairs or items, GEST per template,
    EuroGEST's g_s, WEAT and SEAT per test), with interval and n, and the validity verdict of
    the measure in that language (``not tested`` where the planted-model study has none).

    Parameters
    ----------
    runs : dict
        Run key -> the run's tidy results (:func:`polybias.results.table.read_results`), or
        None for a run that is not done.
    verdicts : pandas.DataFrame
        :func:`polybias.studies.real_model_findings.validity_verdicts`.

    Examples
    --------
    >>> tidy = pd.DataFrame({"metric": ["crows", "crows"], "test": ["crows-pairs"] * 2,
    ...     "subset": ["gender", "all"], "language": ["en", "en"], "value": [60.0, 55.0],
    ...     "ci_low": [50.0, 52.0], "ci_high": [70.0, 58.0], "n": [262, 1508]})
    >>> profile_table({"a": tidy, "b": None}, pd.DataFrame(columns=["measure", "language",
    ...     "verdict"]))[["measure", "subset", "value", "verdict"]].to_dict("records")
    [{'measure': 'crows', 'subset': 'all', 'value': 55.0, 'verdict': 'not tested'}]
    """
    frames = [f for f in runs.values() if f is not None and not f.empty]
    if not frames:
        return pd.DataFrame(columns=list(COLUMNS))
    tidy = pd.concat(frames, ignore_index=True)
    keep = ((tidy.metric.isin(["crows", "stereoset"]) & tidy.subset.astype(str).str.endswith("all"))
            | tidy.metric.isin(["gest", "eurogest", "weat", "seat"])
            | ((tidy.metric == "jsd-b") & (tidy.subset == "all")))
    rows = tidy[keep]
    out = pd.DataFrame({"measure": rows.metric, "test": rows.test, "subset": rows.subset,
                        "language": rows.language, "value": rows.value, "ci_low": rows.ci_low,
                        "ci_high": rows.ci_high, "n": rows.n})
    out["verdict"] = [findings.verdict_of(verdicts, m, lang)
                      for m, lang in zip(out.measure, out.language, strict=True)]
    return out.sort_values(["measure", "test", "language"]).reset_index(drop=True)[list(COLUMNS)]


def full_run_of(model: str):
    """The predicate :func:`polybias.runner.sweep.run_records` selects a model's full-set runs
    by: its ``model`` parameter is ``model`` and it scores no declared sample
    (:data:`polybias.studies.real_models.SAMPLE_PARAMETERS`).

    >>> chosen = full_run_of("m")
    >>> chosen({"model": "m"}), chosen({"model": "m", "max_pairs": 8}), chosen({"model": "x"})
    (True, False, False)
    """
    def chosen(parameters: dict) -> bool:
        return parameters.get("model") == model and not any(
            parameters.get(k) for k in real_models.SAMPLE_PARAMETERS)
    return chosen


def own_source(model: str) -> str | None:
    """The ``source`` of the model's own rows in the real-model table (an embedded real model's),
    or None for any other model.

    >>> own_source("smollm2-135m-instruct-q4_1"), own_source("bert-base-uncased")
    ('smollm2 (this project)', None)
    """
    facts = real_models.EMBEDDED.get(model)
    return facts["source"] if facts else None


def verdict_counts(table: pd.DataFrame) -> pd.DataFrame:
    """Per measure of a profile: how many numbers, in how many languages, and how many sit
    under each validity verdict (the verdicts no number has are left out).

    >>> t = pd.DataFrame({"measure": ["crows", "crows", "gest"], "language": ["en", "ja", "en"],
    ...                   "verdict": ["calibrated", "not tested", "not tested"]})
    >>> verdict_counts(t).to_dict("records")[0]
    {'measure': 'CrowS-Pairs stereotype score (%)', 'numbers': 2, 'languages': 2, 'calibrated': 1, 'not tested': 1}
    """
    order = [v for v in ("calibrated", "too liberal", "undecided", "not tested") if v in set(table.verdict)]
    order += sorted(set(table.verdict) - set(order))
    rows = []
    for measure in [m for m in LABELS if m in set(table.measure)] + sorted(set(table.measure) - set(LABELS)):
        part = table[table.measure == measure]
        rows.append({"measure": LABELS.get(measure, measure), "numbers": len(part),
                     "languages": part.language.nunique(),
                     **{v: int((part.verdict == v).sum()) for v in order}})
    return pd.DataFrame(rows, columns=["measure", "numbers", "languages", *order])


def comparison_key(measure: str, test: str, language: str) -> tuple[str, str, str]:
    """The key under which a profile row and a real-model table row compare: measure,
    dataset or template, language.

    >>> comparison_key("gest", "causal-template1", "en")
    ('gest', 'causal template 1', 'en')
    >>> comparison_key("stereoset", "stereoset", "de"), comparison_key("crows", "kaneko2022", "ja")
    (('stereoset', 'intrasentence', 'de'), ('crows', 'kaneko2022', 'ja'))
    """
    if measure == "gest":
        match = re.fullmatch(r"(causal|masked)-template(\d+)", test)
        return ("gest", f"{match[1]} template {match[2]}" if match else test, language)
    if measure == "stereoset":
        return ("stereoset", "intrasentence", language)
    if measure == "eurogest":
        return ("eurogest", "eurogest", language)
    return (measure, test, language)


def _reference_key(row: pd.Series) -> tuple[str, str, str] | None:
    """:func:`comparison_key` of a row of the real-model table (None: a measure no profile has)."""
    measure = next((m for m, label in real_models.MEASURES.items() if label == row.measure), None)
    if measure is None:
        return None
    if measure == "crows":
        dataset = SOURCE_DATASETS.get(row.source, row.run)
        return ("crows", dataset, row.language)
    if measure == "gest":
        return ("gest", row.run, row.language)
    return comparison_key(measure, row.run, row.language)


def reference_values(table: pd.DataFrame, reference: pd.DataFrame, exclude_source: str | None = None
                     ) -> pd.DataFrame:
    """The real checkpoints' values under each profile row's measure, dataset (GEST: template)
    and language: one row per profile row and checkpoint.

    Parameters
    ----------
    table : pandas.DataFrame
        :func:`profile_table`.
    reference : pandas.DataFrame
        :func:`polybias.studies.real_models.real_model_table` (rows without a value are left
        out).
    exclude_source : str, optional
        The profiled model's own ``source`` in that table (an embedded model's), left out.

    Returns
    -------
    pandas.DataFrame
        ``measure``, ``test``, ``language`` (the profile row's), ``hub_id``, ``source``, ``value``.
    """
    ref = reference[reference.value.notna()]
    if exclude_source is not None:
        ref = ref[ref.source != exclude_source]
    keys = [_reference_key(r) for r in ref.itertuples(index=False)]
    ref = ref.assign(key=keys)
    rows = []
    for row in table.itertuples(index=False):
        key = comparison_key(row.measure, row.test, row.language)
        for match in ref[ref.key == key].itertuples(index=False):
            rows.append({"measure": row.measure, "test": row.test, "language": row.language,
                         "hub_id": match.hub_id, "source": match.source, "value": match.value})
    return pd.DataFrame(rows, columns=["measure", "test", "language", "hub_id", "source", "value"])


def with_reference(table: pd.DataFrame, references: pd.DataFrame) -> pd.DataFrame:
    """``table`` with the reference checkpoints' summary beside each row: ``ref_n`` (how many),
    ``ref_median``, ``ref_min``, ``ref_max``, and ``below`` (how many of them score lower than
    the model: its place among them).

    >>> t = pd.DataFrame({"measure": ["crows"], "test": ["d"], "language": ["en"], "value": [55.0]})
    >>> r = pd.DataFrame({"measure": ["crows"] * 3, "test": ["d"] * 3, "language": ["en"] * 3,
    ...                   "value": [50.0, 60.0, 52.0]})
    >>> with_reference(t, r)[["ref_n", "ref_median", "ref_min", "ref_max", "below"]].to_dict("records")
    [{'ref_n': 3, 'ref_median': 52.0, 'ref_min': 50.0, 'ref_max': 60.0, 'below': 2}]
    """
    out = table.copy()
    stats = {"ref_n": [], "ref_median": [], "ref_min": [], "ref_max": [], "below": []}
    for row in out.itertuples(index=False):
        values = references[(references.measure == row.measure) & (references.test == row.test)
                            & (references.language == row.language)].value.to_numpy(dtype=float)
        stats["ref_n"].append(len(values))
        stats["ref_median"].append(float(np.median(values)) if len(values) else np.nan)
        stats["ref_min"].append(float(values.min()) if len(values) else np.nan)
        stats["ref_max"].append(float(values.max()) if len(values) else np.nan)
        stats["below"].append(int((values < row.value).sum()))
    for name, values in stats.items():
        out[name] = values
    return out


def profile_markdown(table: pd.DataFrame, digits: int = 3) -> str:
    """The profile as a narrow markdown table: measure (display name), dataset, language,
    value with its 95 % interval, n, verdict, and the reference checkpoints (their median
    and range, and how many score lower than the model) where there are any."""
    def number(x: float) -> str:
        return "" if pd.isna(x) else f"{x:.1f}" if abs(x) >= 10 else f"{x:.{digits}f}"

    lines = ["| measure | dataset | language | value [95 % CI] | n | verdict | released checkpoints |",
             "|---|---|---|---|---|---|---|"]
    for row in table.itertuples(index=False):
        ref = ""
        if getattr(row, "ref_n", 0) == 1:
            ref = f"1 checkpoint, {'lower' if row.below else 'not lower'}: {number(row.ref_median)}"
        elif getattr(row, "ref_n", 0):
            ref = (f"{row.below} of {row.ref_n} lower; median {number(row.ref_median)} "
                   f"[{number(row.ref_min)}, {number(row.ref_max)}]")
        lines.append(f"| {LABELS.get(row.measure, row.measure)} | {row.test} | {row.language} | "
                     f"{number(row.value)} [{number(row.ci_low)}, {number(row.ci_high)}] | "
                     f"{int(row.n)} | {row.verdict} | {ref} |")
    return "\n".join(lines)


def _draw_measure(ax, rows: pd.DataFrame, references: pd.DataFrame, measure: str, seen: set) -> None:
    """One measure's panel of :func:`profile_figure`."""
    colour = [*plots.colours(8), "0.1"]  # not tested: near black, apart from the grey checkpoints
    labels = [row.language if measure == "eurogest" else f"{row.test} ({row.language})"
              for row in rows.itertuples(index=False)]
    y = np.arange(len(rows))[::-1]
    for pos, row in zip(y, rows.itertuples(index=False), strict=True):
        refs = references[(references.measure == measure) & (references.test == row.test)
                          & (references.language == row.language)].value
        ax.scatter(refs, [pos] * len(refs), s=10, color="0.65", zorder=1,
                   label="released checkpoints" if "ref" not in seen and len(refs) else None)
        if len(refs):
            seen.add("ref")
        marker, c = VERDICT_STYLES.get(row.verdict, ("o", 0))
        ax.errorbar(row.value, pos, xerr=[[row.value - row.ci_low], [row.ci_high - row.value]],
                    fmt=marker, color=colour[c], ms=4, capsize=2, zorder=2,
                    label=f"model: {row.verdict}" if row.verdict not in seen else None)
        seen.add(row.verdict)
    ax.axvline(NEUTRAL[measure], color="0.3", lw=0.8, ls="--")
    ax.set_yticks(y)
    ax.set_yticklabels(labels, fontsize=7)
    ax.set_ylim(-0.7, len(rows) - 0.3)
    ax.set_xlabel(LABELS[measure], fontsize=8)
    ax.tick_params(axis="x", labelsize=7)


def profile_figure(table: pd.DataFrame, references: pd.DataFrame, title: str,
                   file: str | None = None):
    """One panel per measure: the model's value per dataset (or template) and language with its
    95 % interval (marker by verdict), the released checkpoints under the same measure as grey
    dots, and the no-bias value as a dashed line. EuroGEST, with many languages, takes a
    column of its own on the right, and the rows shrink (to no less than 7 pt labels) so that
    the figure prints at the page's size.
    Saved as ``figures/<file>`` when ``file`` is given."""
    plt = plots.pyplot()
    measures = [m for m in LABELS if m in set(table.measure)]
    if not measures:
        raise ValueError("the profile has no row to draw")
    counts = {m: int((table.measure == m).sum()) for m in measures}
    # the measures labelled by dataset and language on the left, EuroGEST (a language per
    # row, short labels) in a column of its own on the right when it has many rows
    right = [m for m in measures if m == "eurogest" and counts[m] > 12]
    left = [m for m in measures if m not in right]
    columns = [c for c in (left, right) if c]
    # a row's height: 0.22 in, less when the tallest column would outgrow the printed page
    # (plots.PRINT_HEIGHT_IN less the title and legend), never under 0.13 in (7 pt labels)
    room = plots.PRINT_HEIGHT_IN - 1.3
    row = min(0.22, max(0.13, min((room - 0.75 * len(col)) / sum(counts[m] for m in col) for col in columns)))
    height = max(max(sum(row * counts[m] + 0.75 for m in col) for col in columns), 2.5)
    height += 0.3 if len(columns) == 1 else 0  # a second line of the legend
    fig = plt.figure(figsize=(3.15 * len(columns) + 0.35, height + 0.7))  # at most the text block's 6.7 in
    grid = fig.add_gridspec(1, len(columns), wspace=0.3)
    axes = []
    for k, col in enumerate(columns):
        inner = grid[0, k].subgridspec(len(col), 1, height_ratios=[row * counts[m] + 0.3 for m in col],
                                       hspace=0.9)
        axes += [(fig.add_subplot(inner[j, 0]), m) for j, m in enumerate(col)]
    seen: set = set()
    for ax, measure in axes:
        _draw_measure(ax, table[table.measure == measure].reset_index(drop=True), references, measure, seen)
    fig.suptitle(title, fontsize=9)
    handles, names = [], []
    for ax, _ in axes:
        for h, n in zip(*ax.get_legend_handles_labels(), strict=True):
            if n not in names:
                handles.append(h)
                names.append(n)
    ncol = min(len(names), 3 if len(columns) > 1 else 2)
    fig.legend(handles, names, loc="lower center", ncol=ncol, fontsize=7, frameon=False)
    legend_rows = -(-len(names) // ncol)
    fig.subplots_adjust(left=1.5 / (3.15 * len(columns) + 0.35), right=0.97, top=1 - 0.5 / (height + 0.7),
                        bottom=(0.5 + 0.16 * legend_rows) / (height + 0.7))
    from matplotlib.layout_engine import PlaceHolderLayoutEngine  # lazy: figures only

    fig.set_layout_engine(PlaceHolderLayoutEngine(adjust_compatible=True, colorbar_gridspec=True))
    return plots.finish_figure(fig, file)


# ------------------------------------------------------------------ the notebook's parameters

#: The parameters of notebook 18_profile: their help and allowed values.
NOTEBOOK_PARAMETERS: Notebook = Notebook({
    "profiled": free("the profiled model: a registered name, a model directory or a hub id, as "
                     "its runs name it (not `model`: this notebook scores nothing)"),
    "sweep_files": Parameter("sweeps whose done runs of the model give its numbers (their run "
                             "records, or the records kept under paper/records), e.g. "
                             "configs/sweeps/default.yaml and the sweep polybias profile wrote"),
    "n_bootstrap": integer("bootstrap resamples for the released checkpoints' intervals "
                           "({range}; 0: none)", default="polybias.stats.N_BOOTSTRAP"),
    "seed": integer("seed of those bootstraps ({range})"),
    "output_dir": OUTPUT_DIR,
    "table_file": free(TABLE_FILE.format("profile_smollm2-135m-instruct-q4_1")),
})
