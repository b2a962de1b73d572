"""Readers of the record shapes no study writes any more, frozen: records written before a
study moved to the one record shape (:func:`polybias.results.records.measure_record`) are
still read, and only read.

Each reader turns the ``values`` of one record of its metric into tidy rows
(:func:`polybias.results.rows.table_row`). :data:`LEGACY_READERS` maps the record metric to
its reader; :func:`polybias.results.table.record_rows` uses it only for a record that does
not have the one shape. ``tests/results/test_table.py`` checks that no study, runner module
or notebook writes these shapes, and that each study's measure record reads as its legacy
shape did; :mod:`polybias.runner.migrations` rewrites the kept ones.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from polybias.measures import record_measure
from polybias.results.rows import declared_subset, permutation_label, record_number, table_row
from polybias.stats import CONFIDENCE_LEVEL


def _weat_like(rec: dict[str, Any]) -> Iterator[dict[str, Any]]:
    v = rec["values"]
    sizes = v.get("sizes", {})
    yield table_row(record_measure(rec["metric"]), v["effect_size"], p=v.get("pvalue"), p_method=permutation_label(v),
                    n=sizes.get("X", 0) + sizes.get("Y", 0))


def _crows_measure(rec: dict[str, Any]) -> str:
    """``crows``, ``aul`` or ``aula`` by the scoring method of a ``crows`` record; ``jsd-b``
    for a ``crows-jsd`` record."""
    if rec["metric"] != "crows":
        return record_measure(rec["metric"])
    method = rec.get("parameters", {}).get("method")
    return method if method in ("aul", "aula") else "crows"


def _share_rows(metric: str, rows: list[dict[str, Any]], level: float = CONFIDENCE_LEVEL,
                subset_of: Callable[[dict[str, Any]], str] = lambda r: str(r.get("bias_type", "")),
                **over: Any) -> Iterator[dict[str, Any]]:
    for r in rows:
        yield table_row(metric, r["score"], subset=subset_of(r), p=r.get("binom_p"),
                        p_method="binomial-exact", n=r.get("n"), ci=(r.get("ci_low"), r.get("ci_high")),
                        level=level, **over)


def _crows(rec: dict[str, Any]) -> Iterator[dict[str, Any]]:
    yield from _share_rows(_crows_measure(rec), rec["values"]["by_bias_type"],
                           subset_of=lambda r: declared_subset(rec, str(r.get("bias_type", ""))))


def _crows_languages(rec: dict[str, Any]) -> Iterator[dict[str, Any]]:
    v = rec["values"]
    for r in v["per_language"]:
        over = {"language": r.get("language", rec["language"])}
        if "model" in r:
            over["model"] = r["model"]
        subset = declared_subset(rec, f"{r['group']}" if "group" in r else "all")
        yield from _share_rows(record_measure(rec["metric"]), [r], subset_of=lambda _r, s=subset: s, **over)
    for r in v["paired"]:
        a, b = r.get("label_a", r.get("language_a")), r.get("label_b", r.get("language_b"))
        group = f"{r['group']}: " if "group" in r else ""
        yield table_row("crows-difference", r["diff"], subset=declared_subset(rec, f"{group}{a} − {b}"),
                        p=r.get("mcnemar_p"),
                        p_method="binomial-exact", n=r.get("n"), ci=(r.get("ci_low"), r.get("ci_high")),
                        level=CONFIDENCE_LEVEL)


def _ceat(rec: dict[str, Any]) -> Iterator[dict[str, Any]]:
    z = 1.959963984540054  # the normal 95 % interval of the CES (docs/measures/ceat.md)
    for r in rec["values"]["rows"]:
        ces, se = record_number(r["ces"]), record_number(r["se"])
        yield table_row("ceat", ces, subset=f"{r.get('sample_set', '')}, length {r.get('length', '')}",
                        p=r.get("pvalue"), p_method="normal", n=r.get("n_samples"),
                        ci=(ces - z * se, ces + z * se), level=CONFIDENCE_LEVEL)


def _catbias(rec: dict[str, Any]) -> Iterator[dict[str, Any]]:
    v = rec["values"]
    for key in ("ahn_oh_cb", "pll_cb", "max_kl"):
        if v.get(key) is not None:
            subset = " ‖ ".join(v["max_kl_pair"]) if key == "max_kl" and v.get("max_kl_pair") else ""
            yield table_row(record_measure(key), v[key], subset=subset)


def _interaction(rec: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for r in rec["values"]["scores"]:
        metric = "sentiment-cb" if r.get("weighted") else "interaction-cb"
        yield table_row(metric, r["score"], subset=f"{r.get('characteristics', '')}; {r.get('base', '')}",
                        n=r.get("n_attributes"))


def _logprob_context(rec: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for r in rec["values"]["summary"]:
        yield table_row(record_measure(rec["metric"]), r["effect_size"], subset=f"structure {r['structure']}",
                        p=r.get("pvalue"), p_method="permutation-monte-carlo")


def _debias(rec: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for r in rec["values"]["cells"]:
        over = {"test": r["test"]}
        subset = f"{r.get('method', '')}; {r.get('kind', '')}"
        yield table_row(record_measure(str(r.get("test_type", "WEAT"))), r["effect_size"], subset=subset,
                        p=r.get("pvalue"), p_method="permutation-monte-carlo", **over)
        if r.get("gap") is not None:
            yield table_row(record_measure("gap"), r["gap"], subset=f"{subset}; {r.get('test_type', 'WEAT')}",
                            **over)


def _hidden(rec: dict[str, Any]) -> Iterator[dict[str, Any]]:
    v = rec["values"]
    for method, value in v.get("separation", {}).items():
        yield table_row("separation", value, subset=method)


def _validity(rec: dict[str, Any]) -> Iterator[dict[str, Any]]:
    for r in rec["values"].get("measurements", []):
        yield table_row(f"validity:{r['measure']}:{r['metric']}", r["value"],
                        subset=f"p={r['p']}, seed={r['seed']}", p=r.get("pvalue"))
    for r in rec["values"].get("dose", []):  # notebook 10: mean over models per strength
        yield table_row(f"validity:{r['measure']}:{r['metric']}", r["mean"], subset=f"p={r['p']}",
                        n=r["n"], ci=(r["low"], r["high"]), level=CONFIDENCE_LEVEL)


def _external_validity(rec: dict[str, Any]) -> Iterator[dict[str, Any]]:
    level = rec.get("parameters", {}).get("confidence", 0.95)
    for r in rec["values"]["correlations"]:
        for method in ("pearson", "spearman"):
            yield table_row(f"census-{method}", r[method], subset=f"{r['outcome']}, census {r['year']}",
                            p=r.get(f"{method}_p"), p_method=f"{method}-test", n=r.get("n"),
                            ci=(r.get(f"{method}_low"), r.get(f"{method}_high")), level=level)


def _stereoset(rec: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """SS (the registered measure ``stereoset``), LMS and ICAT per task and group, with
    their bootstrap intervals; SS carries its binomial test against 50."""
    level = rec.get("parameters", {}).get("confidence", 0.95)
    for r in rec["values"]["scores"]:
        subset = declared_subset(rec, f"{r.get('task', '')}; {r.get('group', 'all')}")
        yield table_row("stereoset", r["ss"], subset=subset, p=r.get("binom_p"), p_method="binomial-exact",
                        n=r.get("n"), ci=(r.get("ss_low"), r.get("ss_high")), level=level)
        for key, metric in (("lms", "stereoset-lms"), ("icat", "stereoset-icat")):
            yield table_row(metric, r[key], subset=subset, n=r.get("n"),
                            ci=(r.get(f"{key}_low"), r.get(f"{key}_high")), level=level)


def _stereoset_languages(rec: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Per-language SS decisions and the paired differences over shared item ids."""
    v = rec["values"]
    for r in v["per_language"]:
        yield table_row(record_measure(rec["metric"]), r["score"], language=r.get("language", rec["language"]),
                        subset="shared items", p=r.get("binom_p"), p_method="binomial-exact",
                        n=r.get("n"), ci=(r.get("ci_low"), r.get("ci_high")), level=CONFIDENCE_LEVEL)
    for r in v["paired"]:
        yield table_row("stereoset-difference", r["diff"], subset=f"{r['language_a']} − {r['language_b']}",
                        p=r.get("mcnemar_p"), p_method="binomial-exact", n=r.get("n"),
                        ci=(r.get("ci_low"), r.get("ci_high")), level=CONFIDENCE_LEVEL)


def _gest(rec: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """The masculine rate g_s (the registered measure ``gest``) of one GEST run, with its
    bootstrap interval; a declared sample of sentences (``max_items``) says so in the subset."""
    v = rec["values"]
    level = rec.get("parameters", {}).get("level", 0.95)
    yield table_row("gest", v["g_s"], subset=declared_subset(rec, rec.get("test", "")), n=v.get("n"),
                    ci=(v.get("g_s_low"), v.get("g_s_high")), level=level)


def _eurogest(rec: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """g_s (the registered measure ``eurogest``) with its bootstrap interval, and the
    masculine rate of each stereotype (``eurogest-masculine-rate``, subset ``<id> <label>``);
    a declared subset of the sentences (``per_stereotype``) says so in the subset."""
    v = rec["values"]
    level = v.get("level") or 0.95
    first = rec.get("parameters", {}).get("per_stereotype")
    subset = f"; first {first} per stereotype" if first else ""
    yield table_row("eurogest", v["g_s"], subset=f"g_s{subset}", n=v.get("n"),
                    ci=(v.get("ci_low"), v.get("ci_high")), level=level)
    for r in v["per_stereotype"]:
        yield table_row("eurogest-masculine-rate", r["masculine_rate"],
                        subset=f"{r['stereotype']} {r.get('label', '')}".strip() + subset, n=r.get("n"),
                        ci=(r.get("ci_low"), r.get("ci_high")), level=level)


def _real_models(rec: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Each real checkpoint's number of the real-model table (notebook 17,
    :func:`polybias.studies.real_models.write_record`) under its hub id: the registered
    measure it reports, test the source (released runs, or this project's), subset its cell."""
    for r in rec["values"]["rows"]:
        yield table_row(r["metric"], r["value"], subset=r["cell"], n=r.get("n"),
                        ci=(r.get("ci_low"), r.get("ci_high")), level=0.95, model=r["hub_id"],
                        language=r["language"], test=r["source"])


LEGACY_READERS: dict[str, Callable[[dict[str, Any]], Iterator[dict[str, Any]]]] = {
    "weat": _weat_like, "seat": _weat_like, "crows": _crows, "crows-jsd": _crows, "eurogest": _eurogest,
    "gest": _gest, "stereoset": _stereoset, "crows-languages": _crows_languages,
    "stereoset-languages": _stereoset_languages, "ceat": _ceat,
    "catbias": _catbias, "interaction-cb": _interaction, "logprob-context": _logprob_context,
    "debias": _debias, "hidden-states": _hidden, "validity": _validity,
    "external_validity": _external_validity, "real-models": _real_models,
}
"""Record metric → reader of the shape its study wrote before it wrote
:func:`polybias.results.records.measure_record` s (every study does now: WEAT, SEAT, CEAT,
CrowS-Pairs in one language or several, EuroGEST, GEST, StereoSet in one language or
several, categorical bias, cultural interactions, log-probability context, debiasing,
hidden states, external validity, notebook 10's validity summary and the real-model table)."""
