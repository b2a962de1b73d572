"""WEAT over a registered static model (notebook 01): every test of a word-list file, one
run record per test (:func:`run_weat`)."""

from __future__ import annotations

from typing import Literal

import pandas as pd

from polybias import models, paths
from polybias.data.wordlists import AssociationTest, data_sha256, default_file, load_tests
from polybias.engines.static import MissingWordsError, StaticEmbeddings, lookup
from polybias.measures import compute
from polybias.metrics.weat import WeatResult, _unit_rows, check_weat_options
from polybias.models import PLANTED_STATIC
from polybias.results.records import measure_record, model_fields, write_record
from polybias.results.report import load_reported, side_by_side
from polybias.studies.notebook_parameters import (
    ALTERNATIVE,
    DDOF_WEAT,
    LANGUAGE_OVERRIDE,
    PLANTED_STRENGTH,
    STATIC_FILE_FORMATS,
    Notebook,
    check_model_language,
    choice,
    free,
    integer,
)


def run_weat(
    model: str,
    language: str,
    tests: list[str] | str | None = None,
    wordlist_file: str = "weat.yaml",
    on_missing: Literal["raise", "drop"] = "drop",
    output_dir: str | None = None,
    embeddings: StaticEmbeddings | None = None,
    **options,
):
    """Run named WEATs of ``data/wordlists/<language>/<wordlist_file>`` on a registered model.

    ``wordlist_file`` may name a collection read from a study's registered files
    (``seed000``) or be empty: the language's default (:func:`polybias.data.wordlists.default_file`).

    Writes one :func:`polybias.results.records.measure_record` per test into ``output_dir``
    (relative to the project root) when given, and returns a DataFrame with one row per test.
    ``options`` (ddof, alternative, n_permutations, exact_limit, seed) go to :func:`polybias.metrics.weat.weat`.
    ``embeddings``: an already loaded table (e.g. :func:`polybias.models.load` of a file
    given by path) used instead of loading the registered ``model``; ``model`` then
    only names it in the records.
    """
    check_weat_options(on_missing=on_missing, **options)
    emb = embeddings if embeddings is not None else models.load(model, "static")
    wordlist_file = wordlist_file or default_file(language)
    defined = load_tests(language, wordlist_file)
    names = [tests] if isinstance(tests, str) else list(tests) if tests else list(defined)
    unknown = [t for t in names if t not in defined]
    if unknown:
        raise KeyError(f"tests not defined in {language}/{wordlist_file}: {', '.join(unknown)}")
    wordlist_sha = data_sha256(language, wordlist_file)
    results = {name: weat_on_embedding(emb, defined[name], on_missing=on_missing, **options) for name in names}
    rows = []
    for name, res in results.items():
        if output_dir is not None:
            record = measure_record(
                res.measure, model=model, language=language, test=name,
                parameters={"wordlist_file": wordlist_file, "on_missing": on_missing,
                            "dropped_words": res.dropped},
                **model_fields(emb), data_sha256=wordlist_sha)
            write_record(record, paths.output_path(output_dir))
        rows.append({"test": name, "effect_size": res.effect_size, "pvalue": res.pvalue,
                     "p_method": res.p_method, "n_x": res.sizes["X"], "n_y": res.sizes["Y"],
                     "dropped": ", ".join(w for ws in res.dropped.values() for w in ws)})
    return pd.DataFrame(rows)


def run_variants(model: str, language: str, variants_file: str, on_missing: Literal["raise", "drop"] = "drop",
                 output_dir: str | None = None, embeddings: StaticEmbeddings | None = None,
                 reported: str = "", **options):
    """:func:`run_weat` on every test of the list-variant file
    ``data/wordlists/<language>/<variants_file>`` (tests named ``<base>-<variant>``), each
    beside the published value of its base test (``paper/reported/<reported>.csv`` rows of
    ``model``) when ``reported`` is given; None when there is no such file."""
    if not variants_file or not (paths.data_dir() / "wordlists" / language / variants_file).is_file():
        return None
    variants = run_weat(model, language, None, variants_file, on_missing, output_dir,
                        embeddings=embeddings, **options)
    if not reported:
        return variants
    variants["base"] = variants["test"].str.split("-").str[0]
    published = load_reported(reported, model=model).rename(columns={"test": "base"})
    return side_by_side(variants, published, on="base", value="effect_size").drop(columns="base")


def weat_on_embedding(
    emb: StaticEmbeddings,
    test: AssociationTest,
    on_missing: Literal["raise", "drop"] = "raise",
    **options,
) -> WeatResult:
    """Run a word-list test on a static embedding: the registered measure ``weat``
    (:func:`polybias.measures.compute`); ``options`` go to :func:`polybias.metrics.weat.weat`.

    Missing words raise :class:`polybias.engines.static.MissingWordsError` naming all of them,
    unless ``on_missing="drop"``; the dropped words are listed in the result.
    """
    vectors, dropped, missing_all = {}, {}, []
    for role, ws in test.sets().items():
        M, kept, missing = lookup(emb, list(ws.words), on_missing="drop")
        if missing:
            dropped[role] = missing
            missing_all += [f"{w} [{role}: {ws.name}]" for w in missing]
        if not kept:
            raise ValueError(f"{test.name}: no word of set {role} ({ws.name}) is in {emb.name}")
        vectors[role] = (M, kept)
    if missing_all and on_missing == "raise":
        raise MissingWordsError(missing_all, emb.name, where=test.name)
    for role, (M, kept) in vectors.items():
        _unit_rows(M, f"{role} ({test.sets()[role].name})", kept)
    result = compute("weat", **{r: vectors[r][0] for r in ("X", "Y", "A", "B")}, **options)
    return WeatResult.from_measure(result, dropped)


# ------------------------------------------------------------------ the notebook's parameters

def _check_01_weat(*, model, model_path, language, language_override, on_missing, ddof,
                   alternative, n_permutations, exact_limit, seed):
    check_weat_options(on_missing=on_missing, ddof=ddof, alternative=alternative,
                       n_permutations=n_permutations, exact_limit=exact_limit, seed=seed)
    if not model_path and model != PLANTED_STATIC:
        check_model_language(model, language, language_override)


#: The parameters of notebook 01_weat: their help, allowed values and checks.
NOTEBOOK_PARAMETERS: Notebook = Notebook({
    "model": free("registered static model (configs/models.yaml), the name of model_path, "
                  "or planted-static (built from the word lists)"),
    "planted_strength": PLANTED_STRENGTH,
    "model_path": free("static embedding file used instead of a registered model; "
                       "empty: none"),
    "model_format": choice("format of model_path: {values}; empty: by suffix",
                           STATIC_FILE_FORMATS, empty=True),
    "language": free("word-list folder under data/wordlists/"),
    "language_override": LANGUAGE_OVERRIDE,
    "tests": free("test names; empty: every test of wordlist_file"),
    "wordlist_file": free("word lists; empty: the language's default (bn: seed000, the "
                          "study's own C1-C9; else weat.yaml); weat.yaml: the project's lists"),
    "variants_file": free("extra list variants to compare; empty: none"),
    "ddof": DDOF_WEAT,
    "alternative": ALTERNATIVE,
    "n_permutations": integer("Monte Carlo draws when exact enumeration is too large "
                              "({range})", low=1, default="polybias.stats.N_PERMUTATIONS"),
    "exact_limit": integer("enumerate all splits when there are at most this many ({range})",
                           default="polybias.stats.EXACT_LIMIT"),
    "seed": integer("seed of the Monte Carlo draws ({range})"),
    "on_missing": choice("words missing from the model's vocabulary: {values}",
                         ("raise", "drop")),
    "reported": free("paper/reported/NAME.csv; empty: none"),
    "output_dir": free("run records (relative to the project root)"),
    "table_file": free("where to write the table (e.g. paper/tables/weat_w2v-gnews.md)"),
}, _check_01_weat)
