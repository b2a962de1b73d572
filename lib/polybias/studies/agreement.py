"""Do the metrics agree with each other? (notebook 11; seed 000, Table 4).

The agreement measures are :mod:`polybias.metrics.agreement` and the planted models'
measurements :func:`polybias.studies.validity_designs.dose_response`; this module makes the
section's tables and writes its run records:

* :func:`published_signs_table` — the published values of several methods per category,
  with the signs of the significant ones counted (Markdown);
* :func:`correlation_table` and :func:`sign_table` — the Spearman correlations across
  planted models and the side of the null each measure falls on per model (Markdown), the
  measures named for a reader (:func:`display_names`);
* :func:`write_agreement_records` — one run record per agreement table.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd

from polybias import paths
from polybias.metrics import agreement
from polybias.results import report
from polybias.results.records import Record, write_record
from polybias.studies import validity, validity_designs
from polybias.studies.notebook_parameters import (
    OUTPUT_DIR,
    TABLE_FILE,
    Notebook,
    Parameter,
    choice,
    free,
    integer,
    planted_languages,
)

#: What :func:`published_signs_table` shows when no published values are chosen.
NO_PUBLISHED = "(no published values chosen)"


MIN_MODELS_DRAWN = 10
"""The fewest models a correlation between two measures is drawn over: with fewer, one swap
of two models moves Spearman's ρ by a large step and its interval spans most of [−1, 1]."""


def published_signs_table(reported: str, digits: int = 2) -> str:
    """The published values ``paper/reported/<reported>.csv`` lined up per category, one
    column per method, with ``n_pos``/``n_neg`` (significant values of each sign) and
    ``agree`` (:func:`polybias.metrics.agreement.reported_signs`), as a Markdown table;
    :data:`NO_PUBLISHED` when ``reported`` is empty."""
    if not reported:
        return NO_PUBLISHED
    return report.markdown_table(agreement.reported_signs(report.load_reported(reported)),
                                 digits=digits)


TABLE_NOTES = {"ceat-ces": ", normal p", "ceat-ces-perm": ", perm. p",
               "pronoun-cb": ", pronoun only"}
"""The short forms of :data:`polybias.studies.validity.LABEL_NOTES` a table column takes."""


def display_names(labels) -> dict[str, str]:
    """Each ``design:metric`` label of the agreement tables as a reader's name: the
    measure's short name and the planted model it is measured on
    (:func:`polybias.studies.validity.panel_titles`, from the registry), e.g.
    ``crows-mlm:jsd-B`` → ``JSD score B (masked LM, pairs)``; a label with no registered
    measure keeps its own name.

    >>> display_names(["weat:effect-size", "embedding-mlm:ceat-ces-perm", "p"])
    {'weat:effect-size': 'WEAT d (word2vec)', 'embedding-mlm:ceat-ces-perm': 'CEAT CES, perm. p (masked LM as encoder)', 'p': 'p'}
    """
    labels = list(labels)
    split = pd.DataFrame([label.split(":", 1) if ":" in label else [label, ""] for label in labels],
                         columns=["measure", "metric"])
    titles = validity.panel_titles(split)
    out = {}
    for label, (measure, metric) in zip(labels, split.itertuples(index=False), strict=True):
        title = titles.get((measure, metric))
        if title is None:
            out[label] = label
            continue
        name, design = title.split("\n", 1)
        note = validity.LABEL_NOTES.get(metric, "")
        if note and name.endswith(note):  # a table column is narrow: "CEAT CES, perm. p"
            name = name[:-len(note)] + TABLE_NOTES.get(metric, note)
        out[label] = f"{name} ({design})"
    return out


def correlation_table(correlation: pd.DataFrame, digits: int = 2) -> str:
    """The square matrix of :func:`polybias.metrics.agreement.metric_agreement` as a
    Markdown table whose first column, ``metric``, names the rows; rows and columns named
    by :func:`display_names`."""
    names = display_names(correlation.columns)
    table = correlation.rename(index=names, columns=names).reset_index()
    return report.markdown_table(table.rename(columns={table.columns[0]: "metric"}), digits=digits)


def sign_table(signs: pd.DataFrame, digits: int = 2) -> str:
    """The frame of :func:`polybias.metrics.agreement.sign_agreement` as a Markdown table,
    its measures' columns named by :func:`display_names`."""
    return report.markdown_table(signs.rename(columns=display_names(signs.columns)), digits=digits)


def write_agreement_records(correlation: pd.DataFrame, signs: pd.DataFrame, language: str,
                            parameters: dict[str, Any], output_dir: str | Path) -> list[Path]:
    """Write two run records (metric ``agreement``, model ``planted``) under ``output_dir``
    (relative to the output root): test ``correlation`` holds the correlation matrix
    (column → row → value, rounded to 12 decimals so that the last bits of a CPU's sums do
    not show), test ``signs`` the rows of the sign table. Returns their paths."""
    tables = (("correlation", correlation.round(12).to_dict()), ("signs", signs.to_dict("records")))
    return [write_record(Record(metric="agreement", model="planted", language=language, test=name,
                                parameters=parameters, values={"table": table}),
                         paths.output_path(output_dir))
            for name, table in tables]


# ------------------------------------------------------------------ the notebook's parameters

#: The parameters of notebook 11_agreement: their help and allowed values.
NOTEBOOK_PARAMETERS: Notebook = Notebook({
    "language": choice("planted-corpus language: {values}", planted_languages),
    "ps": Parameter("planted strengths (one model per strength and seed; each {range})",
                    low=0, high=1, each=True),
    "seeds": integer("seeds per strength (0 .. seeds-1; {range})", low=1),
    "measures": Parameter("measures compared, among {values}",
                          values=lambda: validity_designs.DESIGNS, each=True),
    "lm_n_sentences": integer("corpus size of the masked LMs ({range})", low=1),
    "lm_n_pairs": integer("minimal pairs per model ({range})", low=1),
    "weat_n_sentences": integer("corpus size of word2vec ({range})", low=1),
    "reported": free("published per-category values of several methods; empty: none"),
    "table_file": free(TABLE_FILE.format("agreement_en")),
    "figure_file": free("figure under figures/; empty: none"),
    "output_dir": OUTPUT_DIR,
})
