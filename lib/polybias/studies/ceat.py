"""CEAT over segment lengths (notebook 03): planted corpora with a known association,
the segment-length study over several corpora with one run record per test, its table
and figure."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..metrics.ceat import CeatError, segment_length_study

if TYPE_CHECKING:
    import pandas as pd


def extraction_summary(runs: dict) -> pd.DataFrame:
    """One row per corpus of ``runs`` (label → (tests, :class:`polybias.data.text.Extraction`)):
    its sentences, the words looked for, the fewest occurrences of any of them and the
    words never found (comma-separated)."""
    import pandas as pd

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
    import pandas as pd

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
    import pandas as pd

    from ..report import markdown_table

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


def plot_segment_study(frame, title: str, file: str | None = None, alpha: float = 0.005):
    """CES against segment length, one line per test and sample set (seed 000 Fig. 1);
    hollow markers are not significant at ``alpha``. Saved under ``figures/`` if ``file``."""
    from ..plots import finish_figure, pyplot

    plt = pyplot()

    lengths = list(dict.fromkeys(frame["length"]))
    x = {length: i for i, length in enumerate(lengths)}
    tests = list(dict.fromkeys(frame["test"]))
    palette = plt.get_cmap("tab10")
    colour = {t: palette(i % 10) for i, t in enumerate(tests)}
    fig, ax = plt.subplots(figsize=(6.5, 3.4))
    for (test, mode), grp in frame.groupby(["test", "sample_set"], sort=False):
        xs = [x[v] for v in grp["length"]]
        ax.plot(xs, grp["ces"], ls="-" if mode == "fixed" else "--", color=colour[test],
                label=f"{test} ({mode[0]})")
        sig = (grp["pvalue"] < alpha).to_numpy()
        ces = grp["ces"].to_numpy()
        ax.scatter([v for v, s in zip(xs, sig, strict=True) if s], ces[sig], color=colour[test])
        ax.scatter([v for v, s in zip(xs, sig, strict=True) if not s], ces[~sig],
                   facecolors="none", edgecolors=colour[test])
    ax.axhline(0, color="black", lw=0.6)
    ax.set_xticks(range(len(lengths)), lengths)
    ax.set_xlabel("segment length (words)")
    ax.set_ylabel("CES")
    ax.set_title(title)
    ax.legend(frameon=False, fontsize=7, loc="center left", bbox_to_anchor=(1.0, 0.5))
    return finish_figure(fig, file)


def run_segment_study(
    encoder, runs: dict, language: str = "en", output_dir: str | None = None,
    parameters: dict | None = None, data_sha256: dict | None = None, **options,
):
    """:func:`polybias.metrics.ceat.segment_length_study` over several corpora, with one run
    record per test.

    ``runs`` maps a corpus label to ``(tests, extraction)`` (e.g. from
    :func:`polybias.planted.probes.planted_extractions`); ``options`` go to
    ``segment_length_study``. Records (metric ``ceat``; values: the rows of the test) go to ``output_dir`` (relative to the
    project root) when given. Returns the rows of all runs with a ``corpus`` column.
    """
    import pandas as pd

    from .. import paths
    from ..records import RunRecord, model_fields, write_record

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
            record = RunRecord(
                metric="ceat", model=getattr(encoder, "name", "model"), language=language,
                test=t.name, parameters={**(parameters or {}), "corpus": label,
                                         **{k: v for k, v in options.items() if k != "model_key"}},
                values={"rows": rows, "occurrence_counts": counts,
                        "n_sentences": extraction.n_sentences},
                **model_fields(encoder), data_sha256=data_sha256 or {},
            )
            write_record(record, paths.output_path(output_dir))
    return pd.concat(frames, ignore_index=True)
