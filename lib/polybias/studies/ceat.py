"""CEAT over segment lengths (notebook 03): planted corpora with a known association,
the segment-length study over several corpora with one run record per test, its table
and figure."""

from __future__ import annotations

import dataclasses

import numpy as np
import pandas as pd

from polybias import paths
from polybias.data import text
from polybias.engines.embeddings import WORD_POOLINGS, occurrence_vectors
from polybias.measures import compute
from polybias.metrics.ceat import ALTERNATIVES, CeatAlternative, CeatError, occurrence_sets
from polybias.metrics.measure import Interval, MeasureResult
from polybias.models import PLANTED_STATIC
from polybias.results.plots import colours, drop_parts, finish_figure, part_name, pyplot, wrap
from polybias.results.records import (
    Record,
    measure_group,
    measure_record,
    model_fields,
    write_record,
)
from polybias.results.report import markdown_table
from polybias.stats import CONFIDENCE_LEVEL
from polybias.studies.notebook_parameters import (
    LANGUAGE_OVERRIDE,
    Notebook,
    Parameter,
    ParameterError,
    check_model_language,
    choice,
    free,
    integer,
    model_engine,
)

#: The two-sided normal quantile of a CES's 95 % interval, CES ± z · SE (docs/measures/ceat.md).
_Z95 = 1.959963984540054


def extraction_summary(runs: dict) -> pd.DataFrame:
    """One row per corpus of ``runs`` (label → (tests, :class:`polybias.data.text.Extraction`)):
    its sentences, the words looked for, the fewest occurrences of any of them and the
    words never found (comma-separated)."""
    return pd.DataFrame([
        {"corpus": label, "sentences": ex.n_sentences, "words": len(ex.counts),
         "fewest occurrences": min(ex.counts.values()), "absent": ", ".join(ex.missing())}
        for label, (_, ex) in runs.items()])


def all_positive_sentence(frame, alpha: float = 0.005) -> str:
    """Whether every CES of ``frame`` (:func:`run_segment_study`) is positive and every one
    significant at ``alpha``, in one sentence (the known answer of a planted encoder).

    >>> import pandas as pd
    >>> all_positive_sentence(pd.DataFrame({"ces": [0.5, 1.2], "pvalue": [0.001, 0.01]}))
    '2 CES: all positive True, all significant at alpha = 0.005: False'
    """
    return (f"{len(frame)} CES: all positive {bool((frame.ces > 0).all())}, "
            f"all significant at alpha = {alpha}: {bool((frame.pvalue < alpha).all())}")


def ces_by_strength(frame, planted_p: list[float]) -> pd.DataFrame:
    """Per sample set and segment length, the CES of the planted corpora (tests named
    ``C5 p=<p>``, as :func:`polybias.planted.probes.planted_extractions` names them) in
    increasing order of ``p`` (columns ``p=<p>``), and whether they increase.

    >>> import pandas as pd
    >>> f = pd.DataFrame({"sample_set": "fixed", "length": 9, "test": ["C5 p=0.9", "C5 p=0.1"],
    ...                   "ces": [0.8, -0.3]})
    >>> ces_by_strength(f, [0.9, 0.1]).values.tolist()
    [['fixed', 9, -0.3, 0.8, True]]
    """
    order = sorted(planted_p)
    rows = []
    for (mode, length), grp in frame.groupby(["sample_set", "length"], sort=False):
        by_test = grp.set_index("test")["ces"]
        missing = [f"C5 p={p}" for p in order if f"C5 p={p}" not in by_test.index]
        if missing:
            raise CeatError(f"no CES of {', '.join(missing)} at {mode} length {length}")
        ces = [float(by_test[f"C5 p={p}"]) for p in order]
        rows.append({"sample_set": mode, "length": length,
                     **{f"p={p}": c for p, c in zip(order, ces, strict=True)},
                     "increasing": all(a < b for a, b in zip(ces[:-1], ces[1:], strict=True))})
    return pd.DataFrame(rows)


def ces_table(frame, alpha: float = 0.005, digits: int = 3) -> str:
    """Markdown table shaped like seed 000 Tables 2/5/6: a row per (test, sample set), a
    column per segment length, CES with ``*`` where p ≥ ``alpha`` (not significant)."""
    if frame.empty:
        raise CeatError("no results to tabulate")
    lengths = list(dict.fromkeys(frame["length"]))
    rows = []
    for (test, mode), grp in frame.groupby(["test", "sample_set"], sort=False):
        by_length = grp.set_index("length")
        cells = []
        for length in lengths:
            if length not in by_length.index:
                cells.append("")
                continue
            row = by_length.loc[length]
            star = "*" if row["pvalue"] >= alpha else ""
            cells.append(f"{row['ces']:.{digits}f}{star}")
        rows.append([test, mode[0], *cells])
    return markdown_table(pd.DataFrame(rows, columns=["test", "set", *lengths]))


def plot_segment_study(frame, title: str, file: str | None = None, alpha: float = 0.005,
                       ncols: int = 3, max_panels: int = 12) -> list:
    """CES against segment length (seed 000 Fig. 1): one panel per test (so that every
    line is named by its panel's title, however many tests), the fixed sample set as a
    solid line, the random one dashed, each CES with its normal 95 % interval (CES ± z · SE,
    the interval its record holds) and the number of samples it is over named in the
    legend; hollow markers are not significant at ``alpha``.
    At most ``max_panels`` panels a figure, drawn to print at full size; more tests go on
    further figures, each titled with its part. Saved under ``figures/`` if ``file`` (the
    k-th figure as ``<stem>_k.png``, :func:`polybias.results.plots.part_name`). Returns
    the figures."""
    tests = list(dict.fromkeys(frame["test"]))
    pages = [tests[i:i + max_panels] for i in range(0, len(tests), max_panels)] or [[]]
    figures = []
    for k, page in enumerate(pages, start=1):
        name = title + (f" (part {k} of {len(pages)})" if len(pages) > 1 else "")
        figures.append(_segment_figure(frame[frame["test"].isin(page)], name,
                                       part_name(file, k) if file else None, alpha, ncols))
    if file:
        drop_parts(file, len(pages))
    return figures


def _segment_figure(frame, title: str, file: str | None, alpha: float, ncols: int):
    from matplotlib.lines import Line2D  # lazy: heavy; figures only

    plt = pyplot()

    lengths = list(dict.fromkeys(frame["length"]))
    x = {length: i for i, length in enumerate(lengths)}
    tests = list(dict.fromkeys(frame["test"]))
    ncols = max(1, min(ncols, len(tests)))
    nrows = -(-len(tests) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(6.6, 1.75 * nrows + 1.3),
                             sharex=True, sharey=True, squeeze=False, layout="constrained")
    colour = dict(zip(("fixed", "random"), colours(2), strict=True))
    for ax, test in zip(axes.flat, tests, strict=False):
        for mode, grp in frame[frame["test"] == test].groupby("sample_set", sort=False):
            xs = np.array([x[v] for v in grp["length"]])
            ces = grp["ces"].to_numpy(float)
            sig = (grp["pvalue"] < alpha).to_numpy()
            c = colour.get(mode, "0.3")
            shift = -0.06 if mode == "fixed" else 0.06  # the two sets' bars side by side
            ax.errorbar(xs + shift, ces, yerr=_Z95 * grp["se"].to_numpy(float), fmt="none", ecolor=c,
                        elinewidth=0.8, capsize=1.5, alpha=0.8)
            ax.plot(xs, ces, ls="-" if mode == "fixed" else "--", color=c, lw=1.2)
            ax.scatter(xs[sig], ces[sig], color=c, s=16, zorder=3)
            ax.scatter(xs[~sig], ces[~sig], facecolors="white", edgecolors=c, s=16, zorder=3)
        ax.axhline(0, color="black", lw=0.6)
        ax.set_title(wrap(test, 30), fontsize=8)
        ax.tick_params(labelsize=7.5)
    for ax in axes.flat[len(tests):]:
        ax.set_visible(False)
    for ax in axes.flat:
        ax.set_xticks(range(len(lengths)), lengths)
    for col in axes.T:  # the lowest panel in use of each column carries the x axis
        ax = [a for a in col if a.get_visible()][-1]
        ax.xaxis.set_tick_params(labelbottom=True)
        ax.set_xlabel("segment length (words)", fontsize=8)
    for ax in axes[:, 0]:
        ax.set_ylabel("CES, pooled SDs\n(0 = no bias)", fontsize=8)
    counts = sorted(set(frame["n_samples"].astype(int)))
    n = f"n = {counts[0]:,} samples" if len(counts) == 1 else f"n = {counts[0]:,}–{counts[-1]:,} samples"
    handles = [Line2D([], [], color=colour["fixed"], ls="-", marker="o", label="fixed samples"),
               Line2D([], [], color=colour["random"], ls="--", marker="o", label="random samples"),
               Line2D([], [], color="0.3", ls="none", marker="o", mfc="white",
                      label=f"hollow: not significant (p ≥ {alpha:g})"),
               Line2D([], [], color="0.3", ls="none", marker="|", markersize=8,
                      label=f"bars: 95 % interval (CES ± {_Z95:.2f} SE); {n} a point")]
    fig.legend(handles=handles, loc="outside lower center", ncols=2, frameon=False, fontsize=8)
    fig.suptitle(title, fontsize=10)
    return finish_figure(fig, file)


def run_segment_study(
    encoder, runs: dict, language: str = "en", output_dir: str | None = None,
    parameters: dict | None = None, data_sha256: dict | None = None, **options,
):
    """:func:`segment_length_study` over several corpora, with one run
    record per test.

    ``runs`` maps a corpus label to ``(tests, extraction)`` (e.g. from
    :func:`polybias.planted.probes.planted_extractions`); ``options`` go to
    ``segment_length_study``. Records (metric ``ceat``; values: the rows of the test) go to ``output_dir`` (relative to the
    project root) when given. Returns the rows of all runs with a ``corpus`` column.
    """
    frames = []
    for label, (tests, extraction) in runs.items():
        frame = segment_length_study(encoder, tests, extraction, **options)
        frame.insert(0, "corpus", label)
        frames.append(frame)
        if output_dir is None:
            continue
        for t in tests:
            rows = frame[frame["test"] == t.name].to_dict(orient="records")
            counts = {w: extraction.counts.get(w, 0) for s in t.sets().values() for w in s.words}
            record = ceat_record(
                rows, counts, extraction.n_sentences, model=getattr(encoder, "name", "model"),
                language=language, test=t.name,
                parameters={**(parameters or {}), "corpus": label,
                            **{k: v for k, v in options.items() if k != "model_key"}},
                **model_fields(encoder), data_sha256=data_sha256 or {})
            write_record(record, paths.output_path(output_dir))
    return pd.concat(frames, ignore_index=True)




def ceat_record(rows: list[dict], occurrence_counts: dict[str, int], n_sentences: int, *, model: str,
                language: str, test: str, parameters: dict, **fields) -> Record:
    """The run record of one CEAT test over sample sets and segment lengths: for each row
    of :func:`segment_length_study` the CES (the measure ``ceat``) with its normal 95 %
    interval (CES ± 1.96 SE) and p-value, under the subset ``<sample set>, length
    <length>``, the first as the record's value and the others as its groups; a row's other
    columns (SE, τ², mean words, dropped words) as its ``extra``; the number of sentences as
    the record's, and each word's occurrences as its ``details``. One
    :func:`polybias.results.records.measure_record`."""
    entries = []
    for row in rows:
        ces, se = float(row["ces"]), float(row["se"])
        interval = None if not np.isfinite(se) else Interval(ces - _Z95 * se, ces + _Z95 * se, CONFIDENCE_LEVEL, "normal")
        p = None if row.get("pvalue") is None or np.isnan(row["pvalue"]) else float(row["pvalue"])
        extra = {k: v for k, v in row.items() if k not in ("ces", "pvalue", "n_samples", "test")}
        entries.append((f"{row.get('sample_set', '')}, length {row.get('length', '')}",
                        MeasureResult("ceat", ces, interval, p, "normal" if p is not None else "none",
                                      int(row["n_samples"]), extra=extra)))
    (subset, first), rest = entries[0], entries[1:]
    first = dataclasses.replace(first, extra={**first.extra, "n_sentences": int(n_sentences)})
    return measure_record(first, model=model, language=language, test=test, parameters=parameters,
                          subset=subset, groups=[measure_group(s, r) for s, r in rest],
                          details=[{"word": w, "occurrences": int(c)} for w, c in occurrence_counts.items()],
                          **fields)


def segment_length_study(
    encoder,
    tests,
    extraction,
    lengths=(9, 25, 75, ">75"),
    n_samples: int = 1000,
    seed: int = 0,
    sample_sets=("fixed", "random"),
    alternative: CeatAlternative = "two-sided",
    layer: int = -1,
    pooling: str = "mean",
    strict_lengths: bool = False,
    cache: bool = False,
    model_key: str | None = None,
):
    """CES of each test at each segment length, for fixed and random sample sets (seed 000 §5.1):
    the registered measure ``ceat`` (:func:`polybias.measures.compute`) on the occurrence
    vectors of the test's words (:func:`polybias.metrics.ceat.occurrence_sets`).

    Parameters
    ----------
    encoder : :class:`polybias.engines.embeddings.Encoder`.
    tests : iterable of :class:`polybias.data.wordlists.AssociationTest` (their words are
        looked up in ``extraction``).
    extraction : :class:`polybias.data.text.Extraction` from :func:`polybias.data.text.find_occurrences`.
    lengths : segment lengths in words (:func:`polybias.data.text.parse_length`: ints, ``">K"``).
    n_samples : N, occurrences drawn per word and CEAT samples.
    seed : seed of the sample sets. ``"fixed"``: one draw of occurrences, cut at every
        length (and the same for every model); ``"random"``: a new draw per
        (model, length) (:func:`polybias.data.text.sample_seed`).
    strict_lengths : draw only from sentences with at least L words for length L (more
        than K for ``">K"``); by default shorter sentences are used whole.
    model_key : name of the model in the random seeds (default: ``encoder.name``).

    Returns
    -------
    DataFrame with one row per (test, sample set, length): ``ces``, ``se``, ``pvalue``,
    ``tau2``, ``n_samples``, ``mean_words`` (mean words per segment) and ``dropped``.
    """
    tests = list(tests)
    if not tests:
        raise CeatError("no tests given")
    words = {w for t in tests for s in t.sets().values() for w in s.words}
    pool = {w: extraction.occurrences.get(w, []) for w in sorted(words)}
    for mode in sample_sets:
        text.sample_seed(seed, mode)  # validates the mode
    key = model_key or getattr(encoder, "name", "model")
    rows, memo = [], {}
    for mode in sample_sets:
        fixed = None
        for length in lengths:
            window, more_than = text.parse_length(length)
            need = max(window or 0, more_than) if strict_lengths else 0
            s = text.sample_seed(seed, mode, key, length)
            if mode == "fixed" and not strict_lengths:  # the same occurrences at every length
                if fixed is None:
                    fixed = text.sample_occurrences(pool, n_samples, s, on_missing="drop")
                drawn = fixed
            else:
                drawn = text.sample_occurrences(pool, n_samples, s, min_words=need, on_missing="drop")
            segs = {w: text.segments(occs, length) for w, occs in drawn.items()}
            vectors = occurrence_vectors(encoder, segs, layer, pooling, cache=cache, memo=memo)
            mean_words = float(np.mean([o.n_words for occs in segs.values() for o in occs]))
            for t in tests:
                sets, dropped = occurrence_sets(vectors, t, on_missing="drop")
                r = compute("ceat", **sets, alternative=alternative)
                rows.append({"test": t.name, "sample_set": mode, "length": str(length),
                             "ces": r.value, "se": r.extra["se"], "pvalue": r.p_value,
                             "tau2": r.extra["tau2"], "n_samples": r.n, "mean_words": mean_words,
                             "dropped": ", ".join(w for ws in dropped.values() for w in ws)})
    return pd.DataFrame(rows)


# ------------------------------------------------------------------ the notebook's parameters

def _check_03_ceat(*, model, language, language_override, lengths, sample_sets, seed, corpus,
                   planted_p):
    if model != PLANTED_STATIC:
        check_model_language(model, language, language_override)
    for length in lengths:
        text.parse_length(length)
    for mode in sample_sets:
        text.sample_seed(seed, mode)
    if not corpus and not planted_p:
        raise ParameterError("give a corpus or at least one planted strength in planted_p")


#: The parameters of notebook 03_ceat: their help, allowed values and checks.
NOTEBOOK_PARAMETERS: Notebook = Notebook({
    "model": free("registered encoder or MLM (configs/models.yaml or POLYBIAS_MODELS_FILE), "
                  "a model directory or a hub id; planted-static: an analytic contextual "
                  "encoder over a table planted from the word lists (bn, hi)"),
    **model_engine(),
    "language": free("language of the corpus and word lists"),
    "language_override": LANGUAGE_OVERRIDE,
    "corpus": free("text file or folder to extract sentences from; empty: generated planted "
                   "corpora"),
    "wordlist_file": free("word lists (used with corpus); empty: the language's default (bn: "
                          "seed000, the study's own C1-C9; else weat.yaml); weat.yaml: the "
                          "project's lists"),
    "tests": free("tests of wordlist_file to run (used with corpus); empty: all"),
    "planted_p": Parameter("planted association strengths, one generated corpus each (each "
                           "{range})", low=0, high=1, each=True, empty=True),
    "n_sentences": integer("sentences per generated corpus ({range})", low=1),
    "n_words": integer("words per set of the planted test (male, female, career, family; "
                       "{range})", low=1),
    "lengths": free("segment lengths in words; \">75\": the whole sentence"),
    "n_samples": integer("N: occurrences drawn per word and CEAT samples (seed 000 uses 1000 "
                         "and 5000; {range}: random effects need several samples)", low=2),
    "sample_sets": free("fixed: same occurrences at every length; random: redrawn"),
    "strict_lengths": free("draw only sentences with at least L words (more than K for "
                           "\">K\")"),
    "max_per_word": integer("occurrences kept per word while streaming the corpus (reservoir; "
                            "{range})", low=1),
    "alternative": choice("p-value of CES: {values} (two-sided: seed 000; greater: Guo & "
                          "Caliskan code)", ALTERNATIVES),
    "alpha": Parameter("significance level marked in the tables (seed 000; {range})", low=0,
                       high=1, open_range=True),
    "layer": integer("hidden layer (-1 last)", low=None),
    "pooling": choice("word vector over its pieces: {values}", WORD_POOLINGS),
    "seed": integer("seed of corpora and sample sets ({range})"),
    "cache": free("read/store vectors in the embedding cache"),
    "output_dir": free("run records (relative to the project root)"),
    "table_file": free("where to write the tables (e.g. paper/tables/ceat_minilm-l6.md)"),
}, _check_03_ceat)
