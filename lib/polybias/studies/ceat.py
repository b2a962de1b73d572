"""CEAT over segment lengths (notebook 03): planted corpora with a known association,
the segment-length study over several corpora with one run record per test, its table
and figure."""

from __future__ import annotations

from ..metrics.ceat import CeatError, segment_length_study


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
