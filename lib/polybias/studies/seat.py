"""SEAT (notebook 02): the sent-bias tests and templates read from their registered files,
and SEAT over a model with one run record per test (:func:`run_seat`,
:func:`run_templated_seat`)."""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from polybias import models, paths
from polybias.data import sources, wordlists
from polybias.engines import embeddings
from polybias.engines.embeddings import SENTENCE_POOLINGS, Encoder
from polybias.files import sha256_file
from polybias.measures import compute
from polybias.metrics.seat import (
    _FILE_ROLES,
    _SLOT,
    ROLES,
    SEAT_TESTS,
    SeatError,
    SeatTemplates,
    SeatTest,
    fill_templates,
    templated_test,
)
from polybias.metrics.weat import WeatResult, check_weat_options
from polybias.planted.static import BagOfWords
from polybias.results.plots import finish_figure, pyplot
from polybias.results.records import measure_record, model_fields, write_record
from polybias.stats import ALPHA, EXACT_LIMIT, N_PERMUTATIONS, Alternative
from polybias.studies.notebook_parameters import (
    ALTERNATIVE,
    PLANTED_STRENGTH,
    Notebook,
    ParameterError,
    choice,
    free,
    integer,
    model_engine,
)


def read_sent_bias(path: str | Path, name: str | None = None) -> SeatTest:
    """Read one sent-bias test file (a JSON object with ``targ1``, ``targ2``, ``attr1``,
    ``attr2``, each ``{"category": ..., "examples": [...]}``)."""
    path = Path(path)
    name = name or path.stem.removeprefix("sent-")
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise SeatError(f"{path}: not a readable SEAT test file: {exc}") from exc
    if not isinstance(raw, dict) or set(_FILE_ROLES) - set(raw):
        raise SeatError(f"{path}: a SEAT test needs the keys {', '.join(_FILE_ROLES)}")
    sentences, categories = {}, {}
    for key, role in _FILE_ROLES.items():
        entry = raw[key]
        examples = entry.get("examples") if isinstance(entry, dict) else None
        if not isinstance(examples, list) or not all(isinstance(e, str) and e.strip() for e in examples):
            raise SeatError(f"{path}: {key} must hold a list of non-empty strings under 'examples'")
        sentences[role] = tuple(examples)
        categories[role] = str(entry.get("category", key))
    return SeatTest(name=name, sentences=sentences, categories=categories, language="en",
                    source=path.name)


#: The Maltese SEAT tests (Galea 2024, melanie-galea/maltese-bias-mitigation-and-measurement):
#: May et al.'s tests 6, 6b, 7, 7b, 8 and 8b translated, sentences (``maltese-seat*``) and
#: words (``maltese-weat*``), in the sent-bias layout.
MALTESE_SEAT_TESTS = ("weat6", "weat6b", "weat7", "weat7b", "weat8", "weat8b")
#: Language -> its registered SEAT tests.
SEAT_LANGUAGES = {"en": SEAT_TESTS, "mt": MALTESE_SEAT_TESTS}


def seat_source(name: str, words: bool = False, registry=None, language: str = "en") -> str:
    """Registered source name of a sent-bias test: its sentence file, or with
    ``words=True`` its word-level file (``weat*`` tests only). ``language="mt"``: the
    Maltese translation of the test (:data:`MALTESE_SEAT_TESTS`)."""
    registry = registry if registry is not None else sources.load_registry()
    if language == "mt":
        if name not in MALTESE_SEAT_TESTS:
            raise SeatError(f"unknown Maltese SEAT test {name!r}; registered: "
                            f"{', '.join(MALTESE_SEAT_TESTS)}")
        return f"maltese-{name if words else name.replace('weat', 'seat', 1)}"
    if language != "en":
        raise SeatError(f"no registered SEAT tests in {language!r}; languages: {', '.join(SEAT_LANGUAGES)}")
    if words:
        candidates = [f"sent-bias-{name}"] if name.startswith("weat") else []
    else:  # the double-bind files without the "sent-" prefix hold sentences already
        candidates = [f"sent-bias-sent-{name}"] + ([f"sent-bias-{name}"] if name.startswith("heilman") else [])
    for source in candidates:
        if source in registry:
            return source
    known = sorted({s.removeprefix("sent-bias-").removeprefix("sent-") for s in registry
                    if s.startswith("sent-bias-")})
    raise SeatError(f"unknown SEAT test {name!r}{' (word level)' if words else ''}; "
                    f"registered: {', '.join(known)}")


def _load_registered(name: str, words: bool, registry, language: str = "en") -> SeatTest:
    registry = registry if registry is not None else sources.load_registry()
    source = seat_source(name, words=words, registry=registry, language=language)
    return replace(read_sent_bias(sources.fetch(source, registry), name=name), source=source,
                   language=language)


def load_seat_test(name: str, registry=None, language: str = "en") -> SeatTest:
    """May et al.'s sentence version of the SEAT ``name`` (e.g. ``"weat6"``), fetched
    through the data registry (sha256-verified); ``language="mt"``: its Maltese translation."""
    return _load_registered(name, False, registry, language)


def load_word_test(name: str, registry=None) -> SeatTest:
    """The word-level version of a sent-bias ``weat*`` test (its "sentences" are words),
    for :func:`templated_test` with the project's templates."""
    return _load_registered(name, True, registry)


def load_templates(language: str, path: str | Path | None = None) -> SeatTemplates:
    """Read ``data/templates/seat_<language>.yaml`` (or ``path``) and check every
    template holds exactly one slot ``{X}`` or ``{aX}``."""
    path = Path(path) if path else paths.data_dir() / "templates" / f"seat_{language}.yaml"
    raw = paths.read_yaml(path, SeatError, f"SEAT templates for {language!r}")
    if not isinstance(raw, dict) or not isinstance(raw.get("groups"), dict) or not raw["groups"]:
        raise SeatError(f"{path}: expected a mapping with a non-empty 'groups:' mapping")
    groups = {}
    for group, templates in raw["groups"].items():
        if not isinstance(templates, list) or not templates:
            raise SeatError(f"{path}: group {group!r} must be a non-empty list of templates")
        for t in templates:
            if not isinstance(t, str) or len(_SLOT.findall(t)) != 1:
                raise SeatError(f"{path}: template {t!r} of group {group!r} must hold exactly one "
                                "slot {X} (or {aX})")
            if re.search(r"\{(?!X\}|aX\})", t):
                raise SeatError(f"{path}: template {t!r} of group {group!r} has an unknown slot")
        groups[str(group)] = tuple(templates)
    lang = str(raw.get("language", language))
    if lang != language:
        raise SeatError(f"{path}: holds language {lang!r}, not {language!r}")
    return SeatTemplates(language=lang, groups=groups, citation=str(raw.get("citation", "")).strip(),
                         file=str(path), an_exceptions=frozenset(raw.get("an_exceptions", []) or []),
                         a_exceptions=frozenset(raw.get("a_exceptions", []) or []))


def run_seat(model, tests: list[str] | None = None, pooling: str = "model", layer: int = -1,
             output_dir: str | None = None, cache: bool = True, device: str = "auto",
             special_tokens: bool = True, dtype: str = "auto", language: str = "en", **options):
    """Run May et al.'s English SEATs (default: all of :data:`SEAT_TESTS`) on a registered
    encoder (its name, or an already loaded :class:`polybias.engines.embeddings.Encoder`); one run
    record per test in ``output_dir`` (relative to the project root) when given.
    ``options`` (ddof, alternative, n_permutations, exact_limit, seed) and ``special_tokens``
    (``False`` with ``pooling="first-piece"``: sent-bias compat) go to :func:`seat`;
    ``device`` and ``dtype`` to :func:`polybias.models.load` when ``model`` is a name.
    ``language="mt"`` runs the Maltese tests (:data:`MALTESE_SEAT_TESTS`). Returns a
    DataFrame with one row per test."""
    check_weat_options(**options)
    if language not in SEAT_LANGUAGES:
        raise SeatError(f"no registered SEAT tests in {language!r}; languages: {', '.join(SEAT_LANGUAGES)}")
    names = [tests] if isinstance(tests, str) else list(tests) if tests else list(SEAT_LANGUAGES[language])
    registry = sources.load_registry()
    loaded = {n: load_seat_test(n, registry, language) for n in names}  # unknown names fail before the model loads
    encoder = (model if isinstance(model, Encoder)
               else models.load(model, "encoder", device=device, dtype=dtype))
    model = encoder.name
    rows = []
    for name, test in loaded.items():
        res = seat(encoder, test, pooling=pooling, layer=layer, cache=cache,
                   special_tokens=special_tokens, **options)
        if output_dir is not None:
            record = measure_record(
                res.measure, model=model, language=language, test=name,
                parameters={"pooling": pooling, "special_tokens": special_tokens, "layer": layer},
                **model_fields(encoder), data_sha256={test.source: registry[test.source].sha256})
            write_record(record, paths.output_path(output_dir))
        c = test.categories
        rows.append({"test": name, "targets": f"{c['X']} / {c['Y']}", "attributes": f"{c['A']} / {c['B']}",
                     "effect_size": res.effect_size, "pvalue": res.pvalue, "p_method": res.p_method,
                     "n_x": res.sizes["X"], "n_a": res.sizes["A"]})
    return pd.DataFrame(rows)


def template_groups(language: str, test_name: str) -> dict[str, str]:
    """Template group of each role of word-list test ``test_name`` of ``language``: the
    ``seat`` entry the language's ``debias.yaml`` tables give the test (Hindi: the part of
    speech of each list, seed 003 App. D), else ``noun`` for every role."""
    path = paths.data_dir() / "wordlists" / language / "debias.yaml"
    if path.is_file():
        raw = paths.read_yaml(path, SeatError, "debias spec") or {}
        for table in (raw.get("tables") or {}).values():
            for t in table.get("tests") or []:
                if t.get("test") == test_name and isinstance(t.get("seat"), dict):
                    return dict(t["seat"])
    return {r: "noun" for r in ROLES}


def run_templated_seat(model, language: str, tests: list[str] | None = None, file: str = "",
                       groups: dict[str, dict[str, str]] | None = None, pooling: str = "model",
                       layer: int = -1, output_dir: str | None = None, cache: bool = True,
                       device: str = "auto", special_tokens: bool = True, dtype: str = "auto",
                       **options):
    """SEAT in ``language`` from its word lists (:func:`polybias.data.wordlists.load_tests`,
    ``file`` empty: the language's default) and its bleached templates
    (``data/templates/seat_<language>.yaml``, :func:`templated_test`).

    ``tests``: names of word-list tests (default: all). ``groups``: test name → role →
    template group, overriding :func:`template_groups`. One run record per test in
    ``output_dir`` when given; returns a DataFrame shaped like :func:`run_seat`'s, with the
    template groups in column ``groups``. ``device`` and ``dtype`` go to
    :func:`polybias.models.load` when ``model`` is a name.
    """
    check_weat_options(**options)
    defined = wordlists.load_tests(language, file)
    names = [tests] if isinstance(tests, str) else list(tests) if tests else list(defined)
    unknown = [n for n in names if n not in defined]
    if unknown:
        raise SeatError(f"unknown {language} word-list tests {unknown}; defined: {', '.join(defined)}")
    templates = load_templates(language)
    groups = groups or {}
    built = {}
    for n in names:  # every test is built (and its template groups checked) before the model loads
        g = groups.get(n) or template_groups(language, n)
        built[n] = (templated_test(defined[n], templates, g), g)

    encoder = (model if isinstance(model, Encoder | BagOfWords)
               else models.load(model, "encoder", device=device, dtype=dtype))
    data_sha = {**wordlists.data_sha256(language, file)}
    if templates.file:
        data_sha[f"templates/{Path(templates.file).name}"] = sha256_file(templates.file)
    rows = []
    for name, (test, g) in built.items():
        res = seat(encoder, test, pooling=pooling, layer=layer, cache=cache,
                   special_tokens=special_tokens, **options)
        if output_dir is not None:
            record = measure_record(
                res.measure, model=encoder.name, language=language, test=name,
                parameters={"pooling": pooling, "special_tokens": special_tokens, "layer": layer,
                            "wordlist_file": file or wordlists.default_file(language),
                            "template_groups": g},
                **model_fields(encoder), data_sha256=data_sha)
            write_record(record, paths.output_path(output_dir))
        c = test.categories
        rows.append({"test": name, "targets": f"{c['X']} / {c['Y']}", "attributes": f"{c['A']} / {c['B']}",
                     "groups": "/".join(g[r] for r in ROLES),
                     "effect_size": res.effect_size, "pvalue": res.pvalue, "p_method": res.p_method,
                     "n_x": res.sizes["X"], "n_a": res.sizes["A"]})
    return pd.DataFrame(rows)


def template_examples(words: dict[str, str]) -> pd.DataFrame:
    """One example sentence per template group of each language's SEAT templates
    (:func:`load_templates`): ``words`` maps a language to the word filled in. Columns
    language, group, templates (how many the group has), example (its first template)."""
    rows = []
    for language, word in words.items():
        templates = load_templates(language)
        for group, group_templates in templates.groups.items():
            rows.append({"language": language, "group": group, "templates": len(group_templates),
                         "example": fill_templates([word], group, templates)[0]})
    return pd.DataFrame(rows)


def rebuilt_c6(encoder, frame: pd.DataFrame | None = None, pooling: str = "model", layer: int = -1,
               special_tokens: bool = True, **options) -> pd.DataFrame:
    """C6 (career/family, May et al.'s ``weat6``) rebuilt from its word list in the English
    templates (names in the ``name`` templates, career and family words in the singular
    ``noun`` ones) and run on ``encoder`` with ``options`` (:func:`seat`),
    beside May et al.'s own sentence file where ``frame`` (:func:`run_seat`) holds
    ``weat6``. Columns sentences, n_x, n_a, effect_size, pvalue."""
    rebuilt = templated_test(load_word_test("weat6"), load_templates("en"),
                             groups={"X": "name", "Y": "name", "A": "noun", "B": "noun"})
    result = seat(encoder, rebuilt, pooling=pooling, layer=layer, special_tokens=special_tokens,
                  **options)
    rows = [{"sentences": "project templates", "n_x": result.sizes["X"], "n_a": result.sizes["A"],
             "effect_size": result.effect_size, "pvalue": result.pvalue}]
    if frame is not None and "weat6" in set(frame["test"]):
        row = frame.set_index("test").loc["weat6"]
        rows.insert(0, {"sentences": "May et al. file", "n_x": row["n_x"], "n_a": row["n_a"],
                        "effect_size": row["effect_size"], "pvalue": row["pvalue"]})
    return pd.DataFrame(rows)


def plot_effects(frame: pd.DataFrame, title: str, file: str | None = None, alpha: float = ALPHA):
    """Horizontal bars of ``effect_size`` per ``test`` (:func:`run_seat`), in the frame's
    order from the top; a bar with ``pvalue`` < ``alpha`` is dark and plain, one without is
    light and hatched (told apart without colour), said in a legend under the axis; saved
    as ``figures/<file>`` when given."""
    from matplotlib.patches import Patch  # lazy: heavy; figures only

    plt = pyplot()
    fig, ax = plt.subplots(figsize=(6.5, 0.26 * len(frame) + 2.0), layout="constrained")
    dark, light = "#3b6ea8", "#b8c8dc"
    significant = [p < alpha for p in frame["pvalue"]]
    bars = ax.barh(frame["test"], frame["effect_size"],
                   color=[dark if s else light for s in significant], edgecolor=dark, lw=0.6)
    for bar, s in zip(bars, significant, strict=True):
        if not s:
            bar.set_hatch("///")
    ax.axvline(0, color="black", lw=0.6)
    ax.invert_yaxis()
    ax.set_xlabel("SEAT effect size d, in pooled standard deviations\n"
                  "(0 = no bias; > 0: X with A and Y with B)", fontsize=8.5)
    ax.set_title(title)
    fig.legend(handles=[Patch(facecolor=dark, edgecolor=dark, label=f"p < {alpha:g}"),
                        Patch(facecolor=light, edgecolor=dark, hatch="///", label=f"p ≥ {alpha:g}")],
               loc="outside lower center", ncols=2, frameon=False, fontsize=8)
    return finish_figure(fig, file)


def seat_vectors(encoder, test: SeatTest, pooling: str = "model", layer: int = -1,
                 batch_tokens: int | None = None, cache: bool = False,
                 special_tokens: bool = True) -> dict[str, np.ndarray]:
    """Sentence vectors of the four sets, each distinct sentence encoded once
    (``encoder`` may also be any object with its own ``encode(sentences)``, e.g. the
    known-answer :class:`polybias.planted.static.BagOfWords`)."""
    unique = list(dict.fromkeys(s for r in ROLES for s in test.sentences[r]))
    if callable(getattr(encoder, "encode", None)):  # an encoder of its own (a known answer)
        vecs = encoder.encode(unique)
    else:
        vecs = embeddings.sentence_vectors(encoder, unique, pooling=pooling, layer=layer,
                                           batch_tokens=batch_tokens, cache=cache,
                                           special_tokens=special_tokens)
    index = {s: i for i, s in enumerate(unique)}
    return {r: vecs[[index[s] for s in test.sentences[r]]] for r in ROLES}


def seat(encoder, test: SeatTest, pooling: str = "model", layer: int = -1, ddof: int = 1,
         alternative: Alternative = "greater", n_permutations: int = N_PERMUTATIONS,
         exact_limit: int = EXACT_LIMIT, seed: int = 0, batch_tokens: int | None = None,
         cache: bool = False, special_tokens: bool = True) -> WeatResult:
    """Run one SEAT on an encoder (:mod:`polybias.engines.embeddings`): the registered measure
    ``seat`` (:func:`polybias.measures.compute`) on its sentence vectors.

    Parameters
    ----------
    encoder : an :class:`polybias.engines.embeddings.Encoder`.
    test : from :func:`polybias.studies.seat.load_seat_test` or :func:`templated_test`.
    pooling, layer : sentence pooling (``model``, ``cls``, ``mean``) and hidden layer.
    special_tokens : ``False`` with ``pooling="first-piece"`` reproduces the sent-bias
        code's BERT vectors (W4ngatang/sent-bias ``sentbias/encoders/bert.py`` lines
        19–26: text tokenized without [CLS]/[SEP], output position 0; compat only); see
        :func:`polybias.engines.embeddings.sentence_vectors`.
    ddof, alternative, n_permutations, exact_limit, seed : as in
        :func:`polybias.metrics.weat.weat`.
    batch_tokens, cache : extraction options.
    """
    check_weat_options(ddof=ddof, alternative=alternative, n_permutations=n_permutations,
                       exact_limit=exact_limit, seed=seed)
    v = seat_vectors(encoder, test, pooling, layer, batch_tokens, cache, special_tokens)
    return WeatResult.from_measure(compute("seat", X=v["X"], Y=v["Y"], A=v["A"], B=v["B"], ddof=ddof,
                                           alternative=alternative, n_permutations=n_permutations,
                                           exact_limit=exact_limit, seed=seed))


# ------------------------------------------------------------------ the notebook's parameters

def _check_02_seat(*, language, tests):
    tests = [tests] if isinstance(tests, str) else list(tests)
    unknown = [t for t in tests if t not in SEAT_TESTS] if language == "en" else []
    if unknown:
        raise ParameterError(f"unknown SEAT tests {unknown}; known: {', '.join(SEAT_TESTS)}")


#: The parameters of notebook 02_seat: their help, allowed values and checks.
NOTEBOOK_PARAMETERS: Notebook = Notebook({
    "model": free("registered encoder or MLM (configs/models.yaml or POLYBIAS_MODELS_FILE), "
                  "a model directory or a hub id; planted-static: a bag-of-words encoder "
                  "over a planted table built from the word lists (hi, bn)"),
    "planted_strength": PLANTED_STRENGTH,
    **model_engine(),
    "language": free("en: May et al.'s SEAT files; hi, bn: the language's word lists in "
                     "data/templates/seat_<lang>.yaml"),
    "wordlist_file": free("hi/bn word lists (data/wordlists/<lang>/); empty: the language's "
                          "default"),
    "tests": free("SEAT test names (polybias.metrics.seat.SEAT_TESTS); empty: all of them"),
    "pooling": choice("sentence vector: {values}; model: the model's own, mean: non-special "
                      "tokens, first-piece: sent-bias compat", SENTENCE_POOLINGS),
    "special_tokens": free("encode with [CLS]/[SEP]; False with first-piece: sent-bias's "
                           "encoder (compat)"),
    "layer": integer("hidden layer (-1 last, 0 embeddings)", low=None),
    "ddof": choice("std degrees of freedom of the effect size (1 Caliskan/May, 0 WEFE): "
                   "{values}", (1, 0)),
    "alternative": ALTERNATIVE,
    "n_permutations": integer("Monte Carlo re-splits when exact enumeration is too large "
                              "({range})", low=1, default="polybias.stats.N_PERMUTATIONS_SHORT"),
    "exact_limit": integer("enumerate all re-splits when there are at most this many "
                           "({range})", default="polybias.stats.EXACT_LIMIT"),
    "seed": integer("seed of the Monte Carlo draws ({range})"),
    "cache": free("read/store sentence vectors in the embedding cache"),
    "reported": free("paper/reported/NAME.csv (one model, keyed by test) to print beside the "
                     "effect sizes, e.g. sadhu2024_bangla_seat (BanglaBERT); empty: none"),
    "output_dir": free("run records (relative to the project root)"),
    "table_file": free("where to write the table (e.g. paper/tables/seat_minilm-l6.md)"),
}, _check_02_seat)
