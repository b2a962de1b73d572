"""Word lists and association-test definitions stored as YAML under ``data/wordlists/<lang>/``.

A file holds named word ``sets`` (each with its words, provenance and source) and
``tests`` that say which sets form the targets X, Y and the attributes A, B::

    language: en
    citation: Caliskan, Bryson & Narayanan (2017) ...
    sets:
      flowers:
        provenance: language-specific      # or: translated
        source: Greenwald et al. (1998), IAT stimuli
        words: [aster, clover, ...]
    tests:
      WEAT1:
        description: Flowers vs insects, pleasant vs unpleasant
        X: flowers
        Y: insects
        A: pleasant
        B: unpleasant

Optional, for languages whose words inflect by suffixes (Bangla; seed 000 App. C): in a
set, ``suffixes`` mapping suffix group names to the words of the set that take that
group. Each word takes at most one group (its own, as the paper requires); words in no
group match as roots only. The groups (group name → suffixes) are facts of the language,
``suffix_groups`` in ``data/languages/<lang>.yaml`` (:mod:`polybias.data.languages`); a
file may instead define its own top-level ``suffix_groups``, which then replace the
language's for that file::

    sets:
      flowers:
        ...
        words: [গোলাপ, পদ্ম]
        suffixes:
          inanimate_consonant: [গোলাপ, পদ্ম]

``WordSet.suffixes`` then maps each word to its suffixes (see :func:`polybias.data.text.find_occurrences`).

Optional, for lists a paper prints in another script: ``transliteration``, one entry per
word in the order of ``words``, as printed (e.g. seed 003 App. C prints its Hindi lists
in Latin letters); ``WordSet.transliteration`` keeps it so tests can compare it with the
paper.

Optional, so one list has one source of truth: ``include`` names other files of the same
folder whose sets and tests this file takes as its own (a name defined in both is an
error); its tests may then use the included sets::

    include: [weat.yaml]
"""

from __future__ import annotations

import importlib
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from polybias import paths
from polybias.data import languages
from polybias.data.text import word_forms
from polybias.files import sha256_file

PROVENANCES = ("language-specific", "translated")


class WordListError(ValueError):
    """A word-list file is malformed or refers to something it does not define."""


@dataclass(frozen=True)
class WordSet:
    """A named list of words and where it comes from."""

    name: str
    words: tuple[str, ...]
    provenance: str
    source: str
    suffixes: dict[str, tuple[str, ...]] = field(default_factory=dict, hash=False, compare=False)
    transliteration: tuple[str, ...] = field(default=(), hash=False, compare=False)

    def forms(self, word: str) -> list[str]:
        """``word`` followed by ``word`` + each suffix of its group."""
        return word_forms(word, self.suffixes.get(word, ()))


@dataclass(frozen=True)
class AssociationTest:
    """Targets X, Y and attributes A, B of a WEAT-style test."""

    name: str
    X: WordSet
    Y: WordSet
    A: WordSet
    B: WordSet
    language: str
    description: str = ""
    citation: str = ""
    file: str = ""

    def sets(self) -> dict[str, WordSet]:
        return {"X": self.X, "Y": self.Y, "A": self.A, "B": self.B}


def _suffix_groups(raw: dict, file: Path, language: str) -> dict[str, tuple[str, ...]]:
    """The file's own ``suffix_groups`` when it has the key, else the language's."""
    if "suffix_groups" not in raw:
        try:
            return languages.language(language).suffix_groups
        except languages.LanguageError as exc:
            raise WordListError(f"{file}: suffix groups of language {language!r}: {exc}") from exc
    return languages.suffix_table(raw["suffix_groups"] or {}, str(file), WordListError)


def _word_suffixes(name: str, entry: dict, words: list[str], groups: dict, file: Path) -> dict:
    spec = entry.get("suffixes")
    if spec is None:
        return {}
    if not isinstance(spec, dict):
        raise WordListError(f"{file}: set {name!r} suffixes must map suffix groups to words")
    out: dict[str, tuple[str, ...]] = {}
    for g, members in spec.items():
        if g not in groups:
            raise WordListError(f"{file}: set {name!r} names unknown suffix group {g!r}; "
                                f"defined: {', '.join(groups) or 'none'}")
        if not isinstance(members, list):
            raise WordListError(f"{file}: set {name!r} suffix group {g!r} must list words")
        for w in members:
            if w not in words:
                raise WordListError(f"{file}: set {name!r} gives suffix group {g!r} to {w!r}, "
                                    "which is not one of its words")
            if w in out:
                raise WordListError(f"{file}: set {name!r} gives {w!r} more than one suffix group")
            out[w] = groups[g]
    return out


def _word_set(name: str, entry: object, file: Path, groups: dict | None = None) -> WordSet:
    if not isinstance(entry, dict):
        raise WordListError(f"{file}: set {name!r} must be a mapping with 'words'")
    words = entry.get("words")
    if not isinstance(words, list) or not words:
        raise WordListError(f"{file}: set {name!r} has no words")
    if not all(isinstance(w, str) and w.strip() for w in words):
        raise WordListError(f"{file}: set {name!r} has an empty or non-text entry")
    dups = sorted(w for w, c in Counter(words).items() if c > 1)
    if dups:
        raise WordListError(f"{file}: set {name!r} repeats {', '.join(dups)}")
    prov = entry.get("provenance")
    if prov not in PROVENANCES:
        raise WordListError(f"{file}: set {name!r} needs provenance in {PROVENANCES}, got {prov!r}")
    if not entry.get("source"):
        raise WordListError(f"{file}: set {name!r} needs a source")
    suffixes = _word_suffixes(name, entry, words, groups or {}, file)
    translit = entry.get("transliteration")
    if translit is not None:
        if (not isinstance(translit, list) or len(translit) != len(words)
                or not all(isinstance(t, str) and t.strip() for t in translit)):
            raise WordListError(f"{file}: set {name!r} transliteration must give one entry per word "
                                f"({len(words)})")
    return WordSet(name, tuple(words), prov, str(entry["source"]), suffixes, tuple(translit or ()))


def _included(raw: dict, file: Path, seen: tuple[Path, ...]) -> tuple[dict, dict]:
    inc = raw.get("include") or []
    if isinstance(inc, str):
        inc = [inc]
    if not isinstance(inc, list) or not all(isinstance(f, str) and f for f in inc):
        raise WordListError(f"{file}: include must list file names of the same folder")
    sets: dict[str, WordSet] = {}
    tests: dict[str, AssociationTest] = {}
    for name in inc:
        other = file.parent / name
        if other.resolve() in seen:
            raise WordListError(f"{file}: include {name!r} forms a cycle")
        if not other.is_file():
            raise WordListError(f"{file}: include {name!r} is not a file next to it")
        s, t = _load(other, seen)
        for kind, mine, theirs in (("set", sets, s), ("test", tests, t)):
            clash = sorted(set(mine) & set(theirs))
            if clash:
                raise WordListError(f"{file}: included files both define {kind} {', '.join(clash)}")
            mine.update(theirs)
    return sets, tests


def load_wordlist_file(file: str | Path) -> tuple[dict[str, WordSet], dict[str, AssociationTest]]:
    """Parse and validate one word-list YAML file: its sets and its tests (with those of
    the files it names under ``include``)."""
    return _load(Path(file), ())


def _load(file: Path, seen: tuple[Path, ...]) -> tuple[dict[str, WordSet], dict[str, AssociationTest]]:
    raw = paths.read_yaml(file, WordListError, "word-list file")
    if not isinstance(raw, dict) or not isinstance(raw.get("sets"), dict):
        raise WordListError(f"{file}: expected a mapping with 'sets:' (and optionally 'tests:')")
    language = str(raw.get("language", file.parent.name))
    groups = _suffix_groups(raw, file, language)
    inc_sets, inc_tests = _included(raw, file, seen + (file.resolve(),))
    own = {name: _word_set(name, entry, file, groups) for name, entry in raw["sets"].items()}
    clash = sorted(set(own) & set(inc_sets))
    if clash:
        raise WordListError(f"{file}: defines set {', '.join(clash)}, which an included file "
                            "already defines")
    sets = {**inc_sets, **own}
    tests: dict[str, AssociationTest] = dict(inc_tests)
    for tname, t in (raw.get("tests") or {}).items():
        if not isinstance(t, dict):
            raise WordListError(f"{file}: test {tname!r} must be a mapping")
        if tname in inc_tests:
            raise WordListError(f"{file}: defines test {tname!r}, which an included file "
                                "already defines")
        roles = {}
        for role in ("X", "Y", "A", "B"):
            ref = t.get(role)
            if ref not in sets:
                raise WordListError(f"{file}: test {tname!r} role {role} names unknown set {ref!r}")
            roles[role] = sets[ref]
        for a, b in (("X", "Y"), ("A", "B")):
            shared = sorted(set(roles[a].words) & set(roles[b].words))
            if shared:
                raise WordListError(
                    f"{file}: test {tname!r} has words in both {a} and {b}: {', '.join(shared)}"
                )
        tests[tname] = AssociationTest(
            name=tname, language=language, description=str(t.get("description", "")),
            citation=str(t.get("citation", raw.get("citation", ""))), file=file.name, **roles,
        )
    return sets, tests


# Word lists read from a study's own registered files rather than from a YAML file here:
# name → (language, loader). ``wordlist_file=<name>`` selects them.
COLLECTIONS = {"seed000": ("bn", "polybias.data.sadhu2024:ceat_tests")}
# The word lists a language runs on when no file is named: the study's own where the
# project has them (Bangla: seed 000's C1-C9), else the project's weat.yaml.
DEFAULT_FILES = {"bn": "seed000"}


def default_file(language: str) -> str:
    """The word-list file (or collection) of ``language`` used when none is named."""
    return DEFAULT_FILES.get(language, "weat.yaml")


def _collection(language: str, file: str):
    lang, target = COLLECTIONS[file]
    if language != lang:
        raise WordListError(f"word lists {file!r} are in {lang!r}, not {language!r}")
    module, func = target.split(":")
    return getattr(importlib.import_module(module), func)()


def data_sha256(language: str, file: str = "") -> dict[str, str]:
    """Path or registered name → sha256 of what :func:`load_tests` reads (for run records)."""
    file = file or default_file(language)
    if file in COLLECTIONS:
        module = COLLECTIONS[file][1].split(":")[0]
        return importlib.import_module(module).data_sha256()
    return {f"wordlists/{language}/{file}":
            sha256_file(paths.data_dir() / "wordlists" / language / file)}


def load_tests(language: str, file: str = "weat.yaml") -> dict[str, AssociationTest]:
    """Tests defined in ``data/wordlists/<language>/<file>``.

    ``file`` may also name a collection of :data:`COLLECTIONS` (``seed000``: the Bangla
    study's own C1–C9, :func:`polybias.data.sadhu2024.ceat_tests`); empty: :func:`default_file`.
    """
    file = file or default_file(language)
    if file in COLLECTIONS:
        return dict(_collection(language, file))
    folder = paths.data_dir() / "wordlists" / language
    if not folder.is_dir():
        known = sorted(p.name for p in (paths.data_dir() / "wordlists").iterdir() if p.is_dir())
        raise WordListError(f"no word lists for language {language!r}; available: {', '.join(known)}")
    return load_wordlist_file(folder / file)[1]


def get_test(language: str, name: str, file: str = "weat.yaml") -> AssociationTest:
    """One named test; an unknown name lists the defined ones."""
    file = file or default_file(language)
    tests = load_tests(language, file)
    if name not in tests:
        raise WordListError(f"no test {name!r} in {language}/{file}; defined: {', '.join(tests)}")
    return tests[name]
