"""Sentence Encoder Association Test (May, Wang, Bordia, Bowman & Rudinger 2019, NAACL).

SEAT is WEAT (:mod:`polybias.metrics.weat`) on sentence vectors: each target or
attribute word is put into semantically bleached templates ("This is X.", "X is
here."), every sentence is encoded, and with s(w, A, B) = mean_{a∈A} cos(w, a) −
mean_{b∈B} cos(w, b) over the sentence vectors,

    d = (mean_{x∈X} s(x, A, B) − mean_{y∈Y} s(y, A, B)) / std_{w∈X∪Y} s(w, A, B)

with ddof=1 (docs/conventions.md) and the one-sided permutation p-value of Σ_X s − Σ_Y s
(:func:`polybias.stats.split_permutation_test`).

Tests come from two places:

* May et al.'s own test files (the ``sent-bias`` repository, registered in
  ``data/sources.yaml`` as ``sent-bias-<file>``): :func:`load_seat_test` reads the
  sentence version of a test (``sent-weat6.jsonl`` for ``weat6``, or the sentence-level
  double-bind files);
* a word-list test (:class:`polybias.wordlists.AssociationTest`) and the project's
  templates ``data/templates/seat_<lang>.yaml`` (English from May et al., Hindi from
  seed 003 App. D, Bangla translated as in seed 000 App. A.2):
  :func:`templated_test`.

Sentence vectors come from :func:`polybias.embeddings.sentence_vectors` (the model's own
pooling by default; ``pooling="first-piece"`` reproduces the sent-bias code's first
wordpiece vector for comparison only, docs/conventions.md, pitfalls). Duplicate sentences are encoded once.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field, replace
from pathlib import Path

import numpy as np

from ..stats import Alternative
from .weat import WeatResult, check_weat_options, weat

ROLES = ("X", "Y", "A", "B")
_FILE_ROLES = {"targ1": "X", "targ2": "Y", "attr1": "A", "attr2": "B"}

#: English SEAT tests of May et al. (2019) in their order (C1–C10 with the "b" variants
#: using group terms instead of names, Angry Black Woman, Heilman double binds).
SEAT_TESTS: tuple[str, ...] = (
    "weat1", "weat2", "weat3", "weat3b", "weat4", "weat5", "weat5b", "weat6", "weat6b",
    "weat7", "weat7b", "weat8", "weat8b", "weat9", "weat10",
    "angry_black_woman_stereotype", "angry_black_woman_stereotype_b",
    "heilman_double_bind_competent_1", "heilman_double_bind_competent_1+3-",
    "heilman_double_bind_competent_1-", "heilman_double_bind_competent_one_sentence",
    "heilman_double_bind_competent_one_word",
    "heilman_double_bind_likable_1", "heilman_double_bind_likable_1+3-",
    "heilman_double_bind_likable_1-", "heilman_double_bind_likable_one_sentence",
    "heilman_double_bind_likable_one_word",
)

_SLOT = re.compile(r"\{(X|aX)\}")


class SeatError(ValueError):
    """A malformed SEAT test file or template file, or an unknown test or template group."""


@dataclass(frozen=True)
class SeatTest:
    """Target (X, Y) and attribute (A, B) sentences of one SEAT."""

    name: str
    sentences: dict[str, tuple[str, ...]]
    categories: dict[str, str] = field(default_factory=dict)
    language: str = "en"
    source: str = ""

    def __post_init__(self) -> None:
        for role in ROLES:
            if not self.sentences.get(role):
                raise SeatError(f"SEAT {self.name!r}: set {role} has no sentences")


# ---------------------------------------------------------------- May et al.'s files

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


def seat_source(name: str, words: bool = False, registry=None) -> str:
    """Registered source name of a sent-bias test: its sentence file, or with
    ``words=True`` its word-level file (``weat*`` tests only)."""
    from .. import data

    registry = registry if registry is not None else data.load_registry()
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


def _load_registered(name: str, words: bool, registry) -> SeatTest:
    from .. import data

    registry = registry if registry is not None else data.load_registry()
    source = seat_source(name, words=words, registry=registry)
    return replace(read_sent_bias(data.fetch(source, registry), name=name), source=source)


def load_seat_test(name: str, registry=None) -> SeatTest:
    """May et al.'s sentence version of the SEAT ``name`` (e.g. ``"weat6"``), fetched
    through the data registry (sha256-verified)."""
    return _load_registered(name, False, registry)


def load_word_test(name: str, registry=None) -> SeatTest:
    """The word-level version of a sent-bias ``weat*`` test (its "sentences" are words),
    for :func:`templated_test` with the project's templates."""
    return _load_registered(name, True, registry)


# ---------------------------------------------------------------- templates

@dataclass(frozen=True)
class SeatTemplates:
    """Bleached templates of one language, by group (part of speech)."""

    language: str
    groups: dict[str, tuple[str, ...]]
    citation: str = ""
    file: str = ""
    an_exceptions: frozenset[str] = frozenset()
    a_exceptions: frozenset[str] = frozenset()

    def article(self, word: str) -> str:
        """English indefinite article of ``word`` (first letter, with the listed exceptions)."""
        w = word.lower()
        first = w.split()[0] if w.split() else w
        if first in self.an_exceptions:
            return "an"
        if first in self.a_exceptions:
            return "a"
        return "an" if w[:1] in "aeiou" else "a"


def load_templates(language: str, path: str | Path | None = None) -> SeatTemplates:
    """Read ``data/templates/seat_<language>.yaml`` (or ``path``) and check every
    template holds exactly one slot ``{X}`` or ``{aX}``."""
    from .. import paths

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


def fill_templates(words, group: str, templates: SeatTemplates) -> list[str]:
    """Every word in every template of ``group`` (word-major order, as sent-bias).

    >>> t = SeatTemplates("en", {"noun": ("This is {aX}.", "The {X} is here.")})
    >>> fill_templates(["aster", "rose"], "noun", t)
    ['This is an aster.', 'The aster is here.', 'This is a rose.', 'The rose is here.']
    """
    if group not in templates.groups:
        raise SeatError(f"no template group {group!r} for {templates.language!r}; groups: "
                        f"{', '.join(templates.groups)}")
    words = list(words)
    if not words:
        raise SeatError(f"no words to put into the {group!r} templates")
    out = []
    for w in words:
        if not isinstance(w, str) or not w.strip():
            raise SeatError(f"empty or non-string word {w!r} for the {group!r} templates")
        for t in templates.groups[group]:
            text = t.replace("{aX}", f"{templates.article(w)} {w}").replace("{X}", w)
            if t.startswith("{") and templates.language == "en":
                text = text[0].upper() + text[1:]
            out.append(text)
    return out


def templated_test(test, groups: str | dict[str, str] = "noun",
                   templates: SeatTemplates | None = None) -> SeatTest:
    """A SEAT from a word-level test and the templates of its language.

    ``test`` is a :class:`polybias.wordlists.AssociationTest` or a word-level
    :class:`SeatTest` (:func:`load_word_test`); ``groups`` names the template group of
    every set (one name for all, or a mapping role → group).
    """
    templates = templates or load_templates(test.language)
    if templates.language != test.language:
        raise SeatError(f"test {test.name!r} is in {test.language!r} but the templates are in "
                        f"{templates.language!r}")
    by_role = {r: groups for r in ROLES} if isinstance(groups, str) else dict(groups)
    missing = [r for r in ROLES if r not in by_role]
    if missing:
        raise SeatError(f"templated_test: no template group for set(s) {', '.join(missing)}")
    if isinstance(test, SeatTest):
        words, categories, origin = test.sentences, dict(test.categories), test.source
    else:
        sets = test.sets()
        words = {r: sets[r].words for r in ROLES}
        categories = {r: sets[r].name for r in ROLES}
        origin = Path(test.file).name if test.file else "word lists"
    sentences = {r: tuple(fill_templates(words[r], by_role[r], templates)) for r in ROLES}
    return SeatTest(test.name, sentences, categories, test.language,
                    source=f"{origin} + {Path(templates.file).name if templates.file else 'templates'}")


# ---------------------------------------------------------------- the test

def seat_vectors(encoder, test: SeatTest, pooling: str = "model", layer: int = -1,
                 batch_tokens: int | None = None, cache: bool = False,
                 special_tokens: bool = True) -> dict[str, np.ndarray]:
    """Sentence vectors of the four sets, each distinct sentence encoded once
    (``encoder`` may also be a :class:`polybias.planted_static.BagOfWords`)."""
    from ..embeddings import sentence_vectors
    from ..planted_static import BagOfWords

    unique = list(dict.fromkeys(s for r in ROLES for s in test.sentences[r]))
    if isinstance(encoder, BagOfWords):  # a known-answer encoder over a planted static table
        vecs = encoder.encode(unique)
    else:
        vecs = sentence_vectors(encoder, unique, pooling=pooling, layer=layer,
                                batch_tokens=batch_tokens, cache=cache, special_tokens=special_tokens)
    index = {s: i for i, s in enumerate(unique)}
    return {r: vecs[[index[s] for s in test.sentences[r]]] for r in ROLES}


def seat(encoder, test: SeatTest, pooling: str = "model", layer: int = -1, ddof: int = 1,
         alternative: Alternative = "greater", n_permutations: int = 100_000,
         exact_limit: int = 1_000_000, seed: int = 0, batch_tokens: int | None = None,
         cache: bool = False, special_tokens: bool = True) -> WeatResult:
    """Run one SEAT on an encoder (:mod:`polybias.embeddings`).

    Parameters
    ----------
    encoder : an :class:`polybias.embeddings.Encoder`.
    test : from :func:`load_seat_test` or :func:`templated_test`.
    pooling, layer : sentence pooling (``model``, ``cls``, ``mean``) and hidden layer.
    special_tokens : ``False`` with ``pooling="first-piece"`` reproduces the sent-bias
        code's BERT vectors (W4ngatang/sent-bias ``sentbias/encoders/bert.py`` lines
        19–26: text tokenized without [CLS]/[SEP], output position 0; compat only); see
        :func:`polybias.embeddings.sentence_vectors`.
    ddof, alternative, n_permutations, exact_limit, seed : as in
        :func:`polybias.metrics.weat.weat`.
    batch_tokens, cache : extraction options.
    """
    check_weat_options(ddof=ddof, alternative=alternative, n_permutations=n_permutations,
                       exact_limit=exact_limit, seed=seed)
    v = seat_vectors(encoder, test, pooling, layer, batch_tokens, cache, special_tokens)
    return weat(v["X"], v["Y"], v["A"], v["B"], ddof=ddof, alternative=alternative,
                n_permutations=n_permutations, exact_limit=exact_limit, seed=seed)


def run_seat(model, tests: list[str] | None = None, pooling: str = "model", layer: int = -1,
             output_dir: str | None = None, cache: bool = True, device: str = "cpu",
             special_tokens: bool = True, **options):
    """Run May et al.'s English SEATs (default: all of :data:`SEAT_TESTS`) on a registered
    encoder (its name, or an already loaded :class:`polybias.embeddings.Encoder`); one run
    record per test in ``output_dir`` (relative to the project root) when given.
    ``options`` (ddof, alternative, n_permutations, exact_limit, seed) and ``special_tokens``
    (``False`` with ``pooling="first-piece"``: sent-bias compat) go to :func:`seat`. Returns a
    DataFrame with one row per test."""
    import pandas as pd

    from .. import data, paths
    from ..embeddings import Encoder, load_encoder
    from ..records import RunRecord, write_record

    check_weat_options(**options)
    names = [tests] if isinstance(tests, str) else list(tests) if tests else list(SEAT_TESTS)
    registry = data.load_registry()
    loaded = {n: load_seat_test(n, registry) for n in names}  # unknown names fail before the model loads
    encoder = model if isinstance(model, Encoder) else load_encoder(model, device=device)
    model = encoder.name
    rows = []
    for name, test in loaded.items():
        res = seat(encoder, test, pooling=pooling, layer=layer, cache=cache,
                   special_tokens=special_tokens, **options)
        if output_dir is not None:
            record = RunRecord(
                metric="seat", model=model, language="en", test=name,
                parameters={"pooling": pooling, "special_tokens": special_tokens, "layer": layer,
                            "ddof": res.ddof,
                            "alternative": res.alternative, **options},
                values=res.as_dict(), model_revision=encoder.revision,
                data_sha256={test.source: registry[test.source].sha256})
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
    from .. import paths

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
                       device: str = "cpu", special_tokens: bool = True, **options):
    """SEAT in ``language`` from its word lists (:func:`polybias.wordlists.load_tests`,
    ``file`` empty: the language's default) and its bleached templates
    (``data/templates/seat_<language>.yaml``, :func:`templated_test`).

    ``tests``: names of word-list tests (default: all). ``groups``: test name → role →
    template group, overriding :func:`template_groups`. One run record per test in
    ``output_dir`` when given; returns a DataFrame shaped like :func:`run_seat`'s, with the
    template groups in column ``groups``.
    """
    import pandas as pd

    from .. import paths, wordlists
    from ..embeddings import Encoder, load_encoder
    from ..records import RunRecord, sha256_file, write_record

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
        built[n] = (templated_test(defined[n], g, templates), g)
    from ..planted_static import BagOfWords

    encoder = model if isinstance(model, Encoder | BagOfWords) else load_encoder(model, device=device)
    data_sha = {**wordlists.data_sha256(language, file)}
    if templates.file:
        data_sha[f"templates/{Path(templates.file).name}"] = sha256_file(templates.file)
    rows = []
    for name, (test, g) in built.items():
        res = seat(encoder, test, pooling=pooling, layer=layer, cache=cache,
                   special_tokens=special_tokens, **options)
        if output_dir is not None:
            record = RunRecord(
                metric="seat", model=encoder.name, language=language, test=name,
                parameters={"pooling": pooling, "special_tokens": special_tokens, "layer": layer,
                            "ddof": res.ddof, "alternative": res.alternative,
                            "wordlist_file": file or wordlists.default_file(language),
                            "template_groups": g, **options},
                values=res.as_dict(), model_revision=encoder.revision, data_sha256=data_sha)
            write_record(record, paths.output_path(output_dir))
        c = test.categories
        rows.append({"test": name, "targets": f"{c['X']} / {c['Y']}", "attributes": f"{c['A']} / {c['B']}",
                     "groups": "/".join(g[r] for r in ROLES),
                     "effect_size": res.effect_size, "pvalue": res.pvalue, "p_method": res.p_method,
                     "n_x": res.sizes["X"], "n_a": res.sizes["A"]})
    return pd.DataFrame(rows)
