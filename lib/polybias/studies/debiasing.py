"""Debiasing static embeddings (notebook 09): the per-language spec
(``data/wordlists/<lang>/debias.yaml``), the word lists of the source studies, the tables
before and after each method, their records and figure."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd

from polybias import paths
from polybias.data import sources, wordlists
from polybias.engines.static import StaticEmbeddings, lookup
from polybias.files import sha256_file
from polybias.measures import compute, record_measure
from polybias.metrics.debias import (
    DebiasError,
    DebiasResult,
    Pair,
    Subspace,
    _check_pairs,
    extreme_words,
    hard_debias,
    inlp_debias,
    linear_projection,
    lpsg,
    pair_direction,
    pca_subspace,
    static_seat_vectors,
)
from polybias.metrics.measure import MeasureResult, finite_or_none
from polybias.results.plots import colours, finish_figure, pyplot, wrap
from polybias.results.records import Record, measure_results_record, model_fields, write_record
from polybias.results.report import load_reported, markdown_table
from polybias.studies.notebook_parameters import (
    OUTPUT_DIR,
    STATIC_FILE_FORMATS,
    TABLE_FILE,
    Notebook,
    ParameterError,
    choice,
    free,
    integer,
)
from polybias.studies.seat import load_templates
from polybias.studies.weat import weat_on_embedding


def _fixed(v: float, digits: int) -> str:
    text = f"{v:.{digits}f}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def effect_table(frame, digits: int = 2, pdigits: int = 2, value: str = "effect_size"):
    """Wide table shaped like seed 003 Tables 3-6: one row per test, one column per method,
    cells ``effect (p)`` (``value="gap"``: the unnormalised gap, no p).

    >>> import pandas as pd
    >>> f = pd.DataFrame({"method": ["original", "hard"], "kind": ["BM", "BM"],
    ...                   "test": ["t", "t"], "effect_size": [1.234, -0.001], "pvalue": [0.01, 0.5]})
    >>> effect_table(f).values.tolist()
    [['BM', 't', '1.23 (0.01)', '0.00 (0.50)']]
    """
    if value == "effect_size":
        cells = [f"{_fixed(e, digits)} ({_fixed(p, pdigits)})"
                 for e, p in zip(frame.effect_size, frame.pvalue, strict=True)]
    else:
        cells = [_fixed(v, digits) for v in frame[value]]
    cell = frame.assign(cell=cells)
    keys = [c for c in ("test_type", "kind", "test") if c in frame.columns]
    wide = cell.pivot(index=keys, columns="method", values="cell")
    methods = list(dict.fromkeys(frame.method))
    order = list(dict.fromkeys(zip(*(frame[k] for k in keys), strict=True)))
    wide = wide.loc[pd.MultiIndex.from_tuples(order, names=keys), methods]
    return wide.reset_index().rename_axis(columns=None)


@dataclass(frozen=True)
class PairList:
    """Named word pairs of a debias spec (definitional, equalise, grammatical...)."""

    name: str
    pairs: tuple[Pair, ...]
    provenance: str
    source: str


@dataclass
class DebiasSpec:
    """A parsed ``debias.yaml``: word sets, pair lists, tests and experiment tables."""

    language: str
    file: Path
    sets: dict[str, Any]
    pairs: dict[str, PairList]
    tests: dict[str, Any]
    tables: dict[str, dict[str, Any]]


METHODS = ("projection", "hard", "lpsg", "inlp")


def load_spec(language: str, file: str = "debias.yaml") -> DebiasSpec:
    """Read and validate ``data/wordlists/<language>/<file>``.

    Besides the ``sets`` and ``tests`` of :mod:`polybias.data.wordlists`, the file holds
    ``pairs`` (name → provenance, source, pairs: [[a, b], ...]) and ``tables`` (name →
    title, tests: [{test, kind}], methods: name → method spec). A test ``F:NAME`` is test
    NAME of file F in the same folder.
    """
    path = paths.data_dir() / "wordlists" / language / file
    if not path.is_file():
        raise DebiasError(f"no debias spec {language}/{file} under data/wordlists")
    sets, tests = wordlists.load_wordlist_file(path)
    raw = paths.read_yaml(path, DebiasError, "debias spec")
    pairs = {}
    for name, entry in (raw.get("pairs") or {}).items():
        if not isinstance(entry, dict) or not isinstance(entry.get("pairs"), list):
            raise DebiasError(f"{path}: pair list {name!r} needs 'pairs: [[a, b], ...]'")
        if entry.get("provenance") not in wordlists.PROVENANCES or not entry.get("source"):
            raise DebiasError(f"{path}: pair list {name!r} needs provenance in "
                              f"{wordlists.PROVENANCES} and a source")
        plist = _check_pairs(entry["pairs"], f"{path.name}: pair list {name!r}")
        dups = [p for p in dict.fromkeys(plist) if plist.count(p) > 1]
        if dups:
            raise DebiasError(f"{path}: pair list {name!r} repeats {dups}")
        pairs[name] = PairList(name, tuple(plist), entry["provenance"], str(entry["source"]))
    spec = DebiasSpec(language, path, sets, pairs, tests, dict(raw.get("tables") or {}))
    for tname, table in spec.tables.items():
        _validate_table(spec, tname, table)
    return spec


def _validate_table(spec: DebiasSpec, tname: str, table: Any) -> None:
    where = f"{spec.file.name}: table {tname!r}"
    if not isinstance(table, dict) or not table.get("tests") or not table.get("methods"):
        raise DebiasError(f"{where} needs 'tests' and 'methods'")
    for t in table["tests"]:
        if not isinstance(t, dict) or t.get("kind") not in ("BM", "IR") or "test" not in t:
            raise DebiasError(f"{where}: each test needs 'test' and kind BM or IR, got {t!r}")
        if "seat" in t and (not isinstance(t["seat"], dict) or set(t["seat"]) != {"X", "Y", "A", "B"}):
            raise DebiasError(f"{where}: test {t['test']!r} seat needs a template group for "
                              f"each of X, Y, A, B, got {t['seat']!r}")
        resolve_test(spec, t["test"])
    for mname, m in table["methods"].items():
        if not isinstance(m, dict) or m.get("method") not in METHODS:
            raise DebiasError(f"{where}: method {mname!r} must name one of {METHODS}")
        for key in ("direction",) if m["method"] in ("projection", "lpsg") else ():
            _validate_direction(spec, m.get(key), f"{where}: method {mname!r}")
        for d in m.get("orthogonal_to", []):
            _validate_direction(spec, d, f"{where}: method {mname!r} orthogonal_to")
        if m["method"] == "hard":
            _validate_direction(spec, {"pairs": m.get("definitional")}, f"{where}: {mname!r}")
            for key in ("equalise",):
                if m.get(key) not in spec.pairs:
                    raise DebiasError(f"{where}: method {mname!r} {key} names unknown pairs "
                                      f"{m.get(key)!r}")
            for s in m.get("specific", []):
                if s not in spec.sets and s not in spec.pairs:
                    raise DebiasError(f"{where}: method {mname!r} specific names unknown {s!r}")
        if m["method"] == "inlp":
            if "classes" in m:
                if not isinstance(m["classes"], list) or len(m["classes"]) < 2:
                    raise DebiasError(f"{where}: method {mname!r} needs at least two class sets")
                for s in m["classes"]:
                    if s not in spec.sets:
                        raise DebiasError(f"{where}: method {mname!r} class set {s!r} unknown")
            else:
                _validate_direction(spec, m.get("direction"), f"{where}: method {mname!r}")
            for s in m.get("exclude", []):
                if s not in spec.sets:
                    raise DebiasError(f"{where}: method {mname!r} exclude set {s!r} unknown")


def _validate_direction(spec: DebiasSpec, d: Any, where: str) -> None:
    if not isinstance(d, dict) or len({"pair", "pairs", "list"} & set(d)) != 1:
        raise DebiasError(f"{where}: a direction is one of {{pair: [a, b]}}, {{pairs: NAME}}, "
                          f"{{list: [SET, ...]}}; got {d!r}")
    if not isinstance(d.get("k", 1), int) or d.get("k", 1) < 1:
        raise DebiasError(f"{where}: k must be a positive integer, got {d.get('k')!r}")
    if "pair" in d:
        _check_pairs([d["pair"]], where)
    if "pairs" in d and d["pairs"] not in spec.pairs:
        raise DebiasError(f"{where}: unknown pair list {d['pairs']!r}")
    for s in d.get("list", []):
        if s not in spec.sets:
            raise DebiasError(f"{where}: unknown word set {s!r}")


def resolve_test(spec: DebiasSpec, name: str):
    if ":" in name:
        file, tname = name.split(":", 1)
        return wordlists.get_test(spec.language, tname, file)
    if name not in spec.tests:
        raise DebiasError(f"{spec.file.name}: unknown test {name!r}; defined: {', '.join(spec.tests)}")
    return spec.tests[name]


def direction_from_spec(emb: StaticEmbeddings, spec: DebiasSpec, d: dict[str, Any]) -> Subspace:
    """Build the subspace a spec direction describes (pair, paired PCA or listwise PCA)."""
    k = int(d.get("k", 1))
    if "pair" in d:
        return pair_direction(emb, *d["pair"])
    if "pairs" in d:
        return pca_subspace(emb, pairs=spec.pairs[d["pairs"]].pairs, k=k)
    words = [w for s in d["list"] for w in spec.sets[s].words]
    return pca_subspace(emb, words=list(dict.fromkeys(words)), k=k)


def _target_words(tests: Iterable[Any]) -> list[str]:
    """The target words (X, Y) of resolved tests, first occurrence first."""
    return list(dict.fromkeys(w for test in tests for w in (*test.X.words, *test.Y.words)))


def apply_method(
    emb: StaticEmbeddings, spec: DebiasSpec, m: dict[str, Any],
    words: Sequence[str] | None = None, seed: int = 0,
) -> DebiasResult:
    """Run one method entry of a spec table on ``emb``."""
    kind = m["method"]
    if kind == "projection":
        return linear_projection(emb, direction_from_spec(emb, spec, m["direction"]), words)
    if kind == "lpsg":
        sem = direction_from_spec(emb, spec, m["direction"])
        gram = [direction_from_spec(emb, spec, d) for d in m.get("orthogonal_to", [])]
        return lpsg(emb, sem, gram, words)
    if kind == "hard":
        specific: list[str] = []
        for s in m.get("specific", []):
            specific += (list(spec.sets[s].words) if s in spec.sets
                         else [w for p in spec.pairs[s].pairs for w in p])
        if m.get("specific_source"):
            specific += load_source_words(m["specific_source"])
        return hard_debias(
            emb, spec.pairs[m["definitional"]].pairs, spec.pairs[m["equalise"]].pairs,
            specific, k=int(m.get("k", 1)), words=words,
            case_variants=bool(m.get("case_variants", False)),
            on_missing=m.get("on_missing", "raise"),
        )
    if kind == "inlp":
        if "classes" in m:
            groups = [list(spec.sets[s].words) for s in m["classes"]]
            groups = [[w for w in g if w in emb.index] for g in groups]
        else:
            direction = direction_from_spec(emb, spec, m["direction"])
            exclude = [w for s in m.get("exclude", []) for w in spec.sets[s].words]
            groups = list(extreme_words(emb, direction, int(m.get("n_words", 500)), exclude))
        return inlp_debias(emb, groups, int(m.get("n_iterations", 35)),
                           m.get("classifier", "linear_svc"), float(m.get("test_fraction", 0.3)),
                           seed=seed, words=words)
    raise DebiasError(f"unknown method {kind!r}")


def _read_source_json(name: str) -> Any:
    """The parsed JSON of a registered data source (fetched or found in the mirror)."""
    with open(sources.fetch(name), encoding="utf-8") as fh:
        return json.load(fh)


def load_source_words(name: str) -> list[str]:
    """Words of a registered JSON list (e.g. debiaswe's ``gender_specific_full.json``)."""
    words = _read_source_json(name)
    if not isinstance(words, list) or not all(isinstance(w, str) for w in words):
        raise DebiasError(f"source {name!r} is not a JSON list of words")
    return words


def load_source_pairs(name: str) -> list[Pair]:
    """Pairs of a registered JSON list of two-word lists (debiaswe's pair files)."""
    return _check_pairs(_read_source_json(name), f"source {name!r}")


def run_table(
    emb: StaticEmbeddings,
    language: str,
    table: str,
    file: str = "debias.yaml",
    scope: Literal["all", "targets"] = "all",
    methods: Sequence[str] | None = None,
    seed: int = 0,
    seat: bool = True,
    **weat_options,
):
    """Run one experiment table of a debias spec: every method, then every test.

    Tests of the table with ``seat: {X: group, Y: group, A: group, B: group}`` also run
    as static SEAT (templates ``data/templates/seat_<language>.yaml``) unless ``seat=False``.

    ``scope="targets"`` is the seed-003 compat mode: only the target words (X, Y) of the
    table's tests are debiased. Returns ``(long frame, {method: DebiasResult})``; the
    first method column is ``original``.
    """
    if scope not in ("all", "targets"):
        raise DebiasError(f"scope must be 'all' or 'targets', got {scope!r}")
    spec = load_spec(language, file)
    if table not in spec.tables:
        raise DebiasError(f"{spec.file.name}: no table {table!r}; defined: {', '.join(spec.tables)}")
    t = spec.tables[table]
    chosen = list(t["methods"]) if not methods else list(methods)
    unknown = [m for m in chosen if m not in t["methods"]]
    if unknown:
        raise DebiasError(f"table {table!r} has no method(s) {', '.join(unknown)}")
    resolved = [(x, resolve_test(spec, x["test"])) for x in t["tests"]]  # once: targets and rows
    words = None
    if scope == "targets":
        words = [w for w in _target_words(test for _, test in resolved) if w in emb.index]
    results = {name: apply_method(emb, spec, t["methods"][name], words, seed) for name in chosen}
    tests = {x.get("label", x["test"]): (test, x["kind"]) for x, test in resolved}
    embs = {"original": emb, **{name: r.embeddings for name, r in results.items()}}
    seat_groups = {x.get("label", x["test"]): x["seat"] for x in t["tests"] if seat and "seat" in x}
    templates = None
    if seat_groups:
        templates = load_templates(language)
    return evaluate(embs, tests, seat_groups=seat_groups, templates=templates, seed=seed,
                    **weat_options), results


def reported_table(name: str, test_type: str = "WEAT", digits: int = 2):
    """A transcribed seed table (``paper/reported/<name>.csv``) in the shape of
    :func:`effect_table` (one test type: WEAT or SEAT)."""
    frame = load_reported(name, test_type=test_type)
    if frame.empty:
        raise DebiasError(f"{name}.csv has no {test_type} rows")
    return effect_table(frame, digits=digits)


def side_by_side_table(frame, reported_names: str | Sequence[str]):
    """Reproduced and reported effect sizes per (test type, test, method), with the
    difference; ``reported_names`` are ``paper/reported`` tables (e.g. seed 003 Tables 3
    and 4 for the WEAT and SEAT rows of the Hindi gender table)."""
    names = [reported_names] if isinstance(reported_names, str) else list(reported_names)
    keys = ["test_type", "test", "method"]
    rep = pd.concat([load_reported(n)[[*keys, "effect_size"]] for n in names], ignore_index=True)
    out = frame[["test_type", "kind", "test", "method", "effect_size"]].rename(
        columns={"effect_size": "reproduced"}).merge(
        rep.rename(columns={"effect_size": "reported"}), on=keys, how="left")
    out["difference"] = out["reproduced"] - out["reported"]
    return out


def removed_summary(results: dict[str, dict[str, DebiasResult]]):
    """What each method removed, one row per (table, method) of ``results`` (table →
    :func:`run_table`'s ``{method: DebiasResult}``): the removed subspace's method and
    rank, the words changed, INLP's held-out accuracy before and after with the chance
    rate (NaN for other methods), and hard debias's number of equalised pairs (— for
    other methods)."""
    rows = []
    for name, res in results.items():
        for method, r in res.items():
            d = r.details
            rows.append({
                "table": name, "method": method, "removed": r.removed.method, "rank": r.removed.k,
                "words changed": r.changed_words,
                "heldout before": d.get("heldout_accuracy_before", float("nan")),
                "heldout after": d.get("heldout_accuracy_after", float("nan")),
                "chance": d.get("chance", float("nan")),
                "equalised pairs": str(len(d["equalised"])) if "equalised" in d else "—",
            })
    return pd.DataFrame(rows)


def scope_comparison(emb: StaticEmbeddings, language: str, frames: dict[str, Any],
                     scope: Literal["all", "targets"] = "all", seed: int = 0, **weat_options):
    """The WEAT effect sizes of each table of ``frames`` (table → :func:`run_table`'s
    frame, run with ``scope``) beside those of the other scope, every method but the
    original and INLP (whose classifier words are not the test words); SEAT rows are not
    rerun. Columns table, kind, test, method, ``effect_size (<scope>)`` and
    ``effect_size (<other scope>)``."""
    spec = load_spec(language)
    other_scope = "targets" if scope == "all" else "all"
    rows = []
    for name, frame in frames.items():
        methods = [m for m, e in spec.tables[name]["methods"].items() if e["method"] != "inlp"]
        other, _ = run_table(emb, language, name, scope=other_scope, methods=methods, seed=seed,
                             seat=False, **weat_options)
        both = frame.merge(other, on=["method", "test_type", "kind", "test"],
                           suffixes=(f" ({scope})", f" ({other_scope})"))
        both = both[["kind", "test", "method", f"effect_size ({scope})", f"effect_size ({other_scope})"]]
        rows.append(both[both["method"] != "original"].assign(table=name))
    return pd.concat(rows, ignore_index=True)


#: Seed 003's reported tables (``paper/reported``) of each Hindi debias table.
SEED003_TABLES = {"gender": ["malik2022_table3", "malik2022_table4"], "caste": ["malik2022_table5"],
                  "religion": ["malik2022_table6"]}


def language_tables(emb: StaticEmbeddings, language: str, scope: Literal["all", "targets"] = "all",
                    seed: int = 0, output_dir: str | Path | None = None, **weat_options) -> list[str]:
    """Every table of ``language``'s debias spec run on ``emb`` (:func:`run_table`; one
    record each under ``output_dir`` when given, and a figure each), as Markdown texts: a
    heading and the effect-size table per table and, in Hindi, the cells beside seed
    003's (:data:`SEED003_TABLES`, :func:`side_by_side_table`)."""
    spec = load_spec(language)
    texts = []
    for name in spec.tables:
        frame, results = run_table(emb, language, name, scope=scope, seed=seed, **weat_options)
        if output_dir is not None:
            record_table(frame, results, emb, language, name,
                         {"table": name, "scope": scope, "seed": seed, **weat_options}, output_dir)
        texts += [f"### {spec.tables[name]['title']} ({emb.name})", markdown_table(effect_table(frame))]
        if language == "hi" and name in SEED003_TABLES:
            texts.append(markdown_table(side_by_side_table(frame, SEED003_TABLES[name]), digits=2))
        plot_effects(frame, f"{spec.tables[name]['title']} ({emb.name})")
    return texts


def reference_hard_debias(emb: StaticEmbeddings, language: str, table: str, seed: int = 0,
                          **weat_options):
    """Hard debias with Bolukbasi et al.'s own lists (debiaswe's definitional and
    equalise pairs and gender-specific words, their case variants, missing pairs
    dropped) evaluated on the tests of ``table``: the WEAT frame of the original and the
    debiased embedding (:func:`evaluate`)."""
    spec = load_spec(language)
    ref = hard_debias(emb, load_source_pairs("debiaswe-definitional-pairs"),
                      load_source_pairs("debiaswe-equalize-pairs"),
                      load_source_words("debiaswe-gender-specific-full"),
                      case_variants=True, on_missing="drop")
    tests = {x.get("label", x["test"]): (resolve_test(spec, x["test"]), x["kind"])
             for x in spec.tables[table]["tests"]}
    return evaluate({"original": emb, "hard (debiaswe lists)": ref.embeddings}, tests, seed=seed,
                    **weat_options)


def debias_record(frame, results: dict[str, DebiasResult], *, model: str, language: str, test: str,
                  parameters: dict[str, Any], **fields: Any) -> Record:
    """The run record (metric ``debias``) of one debiasing table (:func:`evaluate`'s
    ``frame``): each cell's effect size as the registered ``weat`` or ``seat`` (its
    ``test_type``) with its permutation p and n, then its unnormalised gap
    (``weat-gap``, subset ``<method>; <kind>; <test type>``), each under the cell's
    ``test`` and subset ``<method>; <kind>``; the first cell is the record's value, the
    others its groups. The details are each method's (``results``): what it changed.

    >>> f = pd.DataFrame([{"method": "original", "test_type": "WEAT", "kind": "BM", "test": "t",
    ...                    "effect_size": 1.2, "pvalue": 0.01, "gap": 0.1, "dropped": "",
    ...                    "n": 16, "p_method": "permutation-exact"}])
    >>> rec = debias_record(f, {}, model="m", language="en", test="T", parameters={}, packages={})
    >>> rec.values["test"], [(g["measure"], g["subset"]) for g in rec.values["groups"]]
    ('t', [('weat-gap', 'original; BM; WEAT')])
    """
    entries = []
    for r in frame.to_dict(orient="records"):
        over, subset = {"test": r["test"]}, f"{r['method']}; {r['kind']}"
        p = finite_or_none(r["pvalue"])
        extra = {"method": r["method"], "kind": r["kind"], "dropped": r["dropped"]}
        entries.append((subset, MeasureResult(record_measure(r["test_type"]), float(r["effect_size"]), None,
                                              p, r["p_method"] if p is not None else "none", int(r["n"]),
                                              extra=extra), over))
        if finite_or_none(r["gap"]) is not None:
            entries.append((f"{subset}; {r['test_type']}",
                            MeasureResult("weat-gap", float(r["gap"]), None, None, "none", int(r["n"]),
                                          extra=extra), over))
    details = [{"name": name, "method": r.method, "changed_words": r.changed_words,
                "removed_rank": r.removed.k, "removed_method": r.removed.method,
                **{k: v for k, v in r.details.items() if k != "equalised"}}
               for name, r in results.items()]
    return measure_results_record(entries, model=model, language=language, test=test, metric="debias",
                                  parameters=parameters, details=details or None, **fields)


def record_table(frame, results: dict[str, DebiasResult], emb: StaticEmbeddings, language: str,
                 table: str, parameters: dict[str, Any], output_dir: str | Path,
                 file: str = "debias.yaml") -> Path:
    """Write the run record of a debiasing table (:func:`debias_record`), with the sha256
    of its word-list file, under ``output_dir`` (relative to the output root)."""
    spec_path = paths.data_dir() / "wordlists" / language / file
    record = debias_record(frame, results, model=emb.name, language=language, test=table,
                           parameters={"file": file, **parameters}, **model_fields(emb),
                           data_sha256={f"wordlists/{language}/{file}": sha256_file(spec_path)})
    return write_record(record, paths.output_path(output_dir))


def plot_effects(frame, title: str, file: str | None = None):
    """Effect size per test and method: one panel per test type (WEAT, SEAT; rows) and
    test kind (bias BM, retention IR; columns), one bar per method, told apart by colour and
    hatch (a legend under the panels). One value per bar, no error bars; a bar whose
    ``pvalue`` is below 0.05 carries a dot at its end. Saved as ``figures/<file>`` when given."""
    from matplotlib.patches import Patch  # lazy: heavy; figures only

    plt = pyplot()

    kinds = list(dict.fromkeys(frame["kind"]))
    types = list(dict.fromkeys(frame["test_type"])) if "test_type" in frame else [None]
    methods = list(dict.fromkeys(frame["method"]))
    hatches = ["", "///", "...", "xxx", "\\\\", "ooo", "---", "+++"]
    style = {m: (c, hatches[i % len(hatches)]) for i, (m, c) in enumerate(zip(methods, colours(len(methods)), strict=True))}
    width = 0.8 / len(methods)
    fig, axes = plt.subplots(len(types), len(kinds), figsize=(6.6, 2.7 * len(types) + 1.1),
                             sharey="row", squeeze=False, layout="constrained",
                             gridspec_kw={"width_ratios": [max(1, frame[frame["kind"] == k]["test"].nunique()) for k in kinds]})
    for r, test_type in enumerate(types):
        for c, kind in enumerate(kinds):
            ax = axes[r][c]
            part = frame[(frame["kind"] == kind) & ((frame["test_type"] == test_type) if test_type else True)]
            tests = list(dict.fromkeys(part["test"]))
            for i, method in enumerate(methods):
                rows = part[part["method"] == method].set_index("test").reindex(tests)
                x = np.arange(len(tests)) - 0.4 + width * (i + 0.5)
                colour, hatch = style[method]
                ax.bar(x, rows["effect_size"], width, color=colour, hatch=hatch, edgecolor="white", lw=0)
                if "pvalue" in rows:
                    sig = rows["pvalue"].to_numpy(float) < 0.05
                    ax.plot(x[sig], rows["effect_size"].to_numpy(float)[sig], "o", ms=2.5, color="black")
            ax.axhline(0, color="black", lw=0.6)
            name = {"BM": "bias tests (should drop)", "IR": "retention tests (should stay)"}.get(kind, kind)
            ax.set_title(f"{test_type}: {name}" if test_type else name, fontsize=8.5)  # fit_titles wraps it
            ax.set_xticks(np.arange(len(tests)), [wrap(t, 11) for t in tests], fontsize=7)
            ax.tick_params(axis="y", labelsize=7.5)
            if c == 0:
                ax.set_ylabel(f"{test_type or 'WEAT'} effect size d, pooled SDs\n(0 = no bias; > 0: X with A)",
                              fontsize=8)
    handles = [Patch(facecolor=style[m][0], hatch=style[m][1], edgecolor="white", label=m) for m in methods]
    handles.append(plt.Line2D([], [], marker="o", ls="", ms=3, color="black", label="p < 0.05"))
    fig.legend(handles=handles, loc="outside lower center", ncols=min(len(handles), 4), frameon=False,
               fontsize=8)
    fig.suptitle(title, fontsize=10)
    return finish_figure(fig, file)


def evaluate(
    embeddings: dict[str, StaticEmbeddings],
    tests: dict[str, tuple[Any, str]],
    on_missing: Literal["raise", "drop"] = "drop",
    seat_groups: dict[str, dict[str, str]] | None = None,
    templates=None,
    **weat_options,
):
    """WEAT (and static SEAT) of every test on every embedding: a long DataFrame.

    ``tests`` maps a row label to ``(AssociationTest, kind)`` with kind ``BM``
    (bias measuring) or ``IR`` (information retention). Columns: method, test_type,
    kind, test, effect_size, pvalue, gap, dropped. ``gap`` is the unnormalised association
    ``mean_X s(x, A, B) − mean_Y s(y, A, B)`` in cosine units: the effect size divides it
    by the spread of s, so after a debiasing that shrinks every s, a tiny residual gap
    can still give a large effect size (of either sign).

    ``seat_groups`` maps a label to the template group of each role (X, Y, A, B); those
    tests also run as SEAT on :func:`static_seat_vectors` with ``templates``
    (:func:`polybias.studies.seat.load_templates`).
    """
    def gap_of(M):
        return compute("weat-gap", X=M["X"], Y=M["Y"], A=M["A"], B=M["B"]).value

    seat_groups = seat_groups or {}
    if seat_groups and templates is None:
        raise DebiasError("SEAT rows need the templates of the language")
    rows = []
    for method, emb in embeddings.items():
        for label, (test, kind) in tests.items():
            r = weat_on_embedding(emb, test, on_missing=on_missing, **weat_options)
            M = {role: lookup(emb, list(ws.words), on_missing="drop")[0]
                 for role, ws in test.sets().items()}
            rows.append({"method": method, "test_type": "WEAT", "kind": kind, "test": label,
                         "effect_size": r.effect_size, "pvalue": r.pvalue, "gap": gap_of(M),
                         "dropped": ", ".join(w for ws in r.dropped.values() for w in ws),
                         "n": r.measure.n, "p_method": r.measure.p_method})
        for label, groups in seat_groups.items():
            test, kind = tests[label]
            M, dropped = {}, []
            for role, ws in test.sets().items():
                M[role], _, miss = static_seat_vectors(emb, ws.words, groups[role], templates)
                dropped += miss
                if not len(M[role]):
                    raise DebiasError(f"SEAT {label}: no word of set {role} in {emb.name}")
            r = compute("weat", X=M["X"], Y=M["Y"], A=M["A"], B=M["B"], **weat_options)
            rows.append({"method": method, "test_type": "SEAT", "kind": kind, "test": label,
                         "effect_size": r.value, "pvalue": r.p_value, "gap": gap_of(M),
                         "dropped": ", ".join(dropped), "n": r.n, "p_method": r.p_method})
    frame = pd.DataFrame(rows)
    order = {"WEAT": 0, "SEAT": 1}
    return frame.sort_values("test_type", key=lambda c: c.map(order), kind="stable",
                             ignore_index=True)


# ------------------------------------------------------------------ the notebook's parameters

def _check_09_debiasing(*, language, tables):
    spec = load_spec(language)
    unknown = [t for t in tables if t not in spec.tables]
    if unknown:
        raise ParameterError(f"tables not in {language}/debias.yaml: {unknown}; defined: "
                             f"{list(spec.tables)}")


#: The parameters of notebook 09_debiasing: their help, allowed values and checks.
NOTEBOOK_PARAMETERS: Notebook = Notebook({
    "model": free("registered static model (configs/models.yaml) or a file path"),
    "language": free("word-list folder of the model's language (data/wordlists/)"),
    "tables": free("experiment tables of debias.yaml to run; empty: all of them"),
    "scope": choice("{values} (all: debias every word; targets: only the tests' target "
                    "words, seed-003 code)", ("all", "targets")),
    "compare_scope": free("also run the other scope and show the difference"),
    "ddof": choice("std degrees of freedom of the WEAT effect size (1 Caliskan, 0 seed-003 "
                   "code): {values}", (1, 0)),
    "n_permutations": integer("Monte Carlo draws of the WEAT p-value ({range})", low=1,
                              default="polybias.stats.N_PERMUTATIONS_SHORT"),
    "seed": integer("seed of the p-values, the INLP split and classifiers ({range})"),
    "extra_model": free("Hindi/Bangla static model: registered name or file path; empty: "
                        "none"),
    "extra_language": choice("language of extra_model: {values}", ("hi", "bn")),
    "extra_format": choice("file format of extra_model: {values}; empty: by suffix",
                           STATIC_FILE_FORMATS, empty=True),
    "extra_limit": integer("read only the first N words of extra_model; 0: all"),
    "reference_lists": free("also hard-debias with the debiaswe lists (needs the data mirror "
                            "or network)"),
    "output_dir": OUTPUT_DIR,
    "table_file": free(TABLE_FILE.format("debias_w2v-gnews")),
}, _check_09_debiasing)
