"""Language facts, one file per language: ``data/languages/<lang>.yaml``.

Each file gives the language's ``name``, the Unicode ``normalization`` form of its word
lists and corpora, the ``sentence_terminators`` that end a sentence, and optionally the
``full_stop`` a generated sentence ends with (one of the terminators; default the first),
the ``script`` block its letters must lie in (``{name, first, last}``) and, for a
language whose words inflect by suffixes (Bangla; seed 000 App. C), its
``suffix_groups``: group name → the suffixes a word of that group takes. A language
without a file has its English name from :data:`NAMES` and the defaults: NFC, sentences ended by ``.?!`` and generated ones by
``.``, no script check, no suffix groups. :mod:`polybias.data.text` reads them to
normalise, split sentences and check scripts, :mod:`polybias.data.wordlists` for the
suffix groups its sets name, :mod:`polybias.planted.synthetic` for the full stop.

A malformed file raises :class:`LanguageError` naming the file and the key.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from polybias import paths

DEFAULT_NORMALIZATION = "NFC"
DEFAULT_TERMINATORS = ".?!"
NORMAL_FORMS = ("NFC", "NFKC", "NFD", "NFKD")
#: English names of the languages the model registry lists, for a language without a
#: file (its ``name`` otherwise); figures and tables name languages in words.
NAMES = {"ar": "Arabic", "bn": "Bangla", "de": "German", "el": "Greek", "en": "English",
         "fa": "Persian", "fi": "Finnish", "fr": "French", "hi": "Hindi", "id": "Indonesian",
         "ja": "Japanese", "km": "Khmer", "ko": "Korean", "lo": "Lao", "ms": "Malay",
         "my": "Burmese", "nl": "Dutch", "ru": "Russian", "ta": "Tamil", "th": "Thai",
         "vi": "Vietnamese", "zh": "Chinese"}
_KEYS = ("name", "normalization", "sentence_terminators", "full_stop", "script", "suffix_groups")


class LanguageError(ValueError):
    """A language file that cannot be read or holds a fact in the wrong shape."""


@dataclass(frozen=True)
class Script:
    """A Unicode block: ``first`` ≤ code point ≤ ``last``."""

    name: str
    first: int
    last: int


@dataclass(frozen=True)
class Language:
    """The facts of one language (see the module docstring)."""

    code: str
    name: str
    normalization: str = DEFAULT_NORMALIZATION
    sentence_terminators: str = DEFAULT_TERMINATORS
    script: Script | None = None
    full_stop: str = DEFAULT_TERMINATORS[0]
    suffix_groups: dict[str, tuple[str, ...]] = field(default_factory=dict, hash=False)


def language(code: str) -> Language:
    """The facts of language ``code`` (defaults when it has no file).

    >>> language("bn").normalization, language("bn").script.name, language("bn").full_stop
    ('NFKC', 'Bengali', '।')
    >>> language("nl").name  # no file: the name only
    'Dutch'
    >>> language("xx")
    Language(code='xx', name='xx', normalization='NFC', sentence_terminators='.?!', script=None, full_stop='.', suffix_groups={})
    """
    return _read(code, str(paths.data_dir() / "languages" / f"{code}.yaml"))


@cache
def _read(code: str, path: str) -> Language:
    file = Path(path)
    if not file.is_file():
        return Language(code, NAMES.get(code, code))
    raw = paths.read_yaml(file, LanguageError, "language file")
    if not isinstance(raw, dict):
        raise LanguageError(f"{file}: expected a mapping of language facts")
    unknown = sorted(set(raw) - set(_KEYS))
    if unknown:
        raise LanguageError(f"{file}: unknown key(s) {', '.join(unknown)}; known: {', '.join(_KEYS)}")
    form = raw.get("normalization", DEFAULT_NORMALIZATION)
    if form not in NORMAL_FORMS:
        raise LanguageError(f"{file}: normalization {form!r} is not one of {NORMAL_FORMS}")
    terminators = raw.get("sentence_terminators", DEFAULT_TERMINATORS)
    if not isinstance(terminators, str) or not terminators:
        raise LanguageError(f"{file}: sentence_terminators must be a non-empty string")
    full_stop = raw.get("full_stop", terminators[0])
    if not isinstance(full_stop, str) or len(full_stop) != 1 or full_stop not in terminators:
        raise LanguageError(f"{file}: full_stop must be one of the sentence_terminators "
                            f"{terminators!r}, got {full_stop!r}")
    script = raw.get("script")
    if script is not None:
        if not isinstance(script, dict) or set(script) != {"name", "first", "last"} or \
                not all(isinstance(script[k], int) for k in ("first", "last")):
            raise LanguageError(f"{file}: script must be {{name, first, last}} with integer "
                                f"code points, got {script!r}")
        script = Script(str(script["name"]), script["first"], script["last"])
    return Language(code, str(raw.get("name", NAMES.get(code, code))), form, terminators, script, full_stop,
                    suffix_table(raw.get("suffix_groups"), f"{file}: suffix_groups"))


def suffix_table(groups: object, where: str,
                 error: type[Exception] = LanguageError) -> dict[str, tuple[str, ...]]:
    """A checked ``suffix_groups`` table: group name → non-empty list of distinct suffixes
    (None or empty: no groups). A malformed table raises ``error`` prefixed with ``where``.

    >>> suffix_table({"nouns": ["er", "s"]}, "x.yaml")
    {'nouns': ('er', 's')}
    >>> suffix_table({"nouns": ["s", "s"]}, "x.yaml")
    Traceback (most recent call last):
    ...
    polybias.data.languages.LanguageError: x.yaml: suffix group 'nouns' repeats s
    """
    if groups is None:
        return {}
    if not isinstance(groups, dict):
        raise error(f"{where}: suffix_groups must map group names to lists of suffixes")
    out = {}
    for g, sfx in groups.items():
        if not isinstance(sfx, list) or not sfx or not all(isinstance(x, str) and x.strip() for x in sfx):
            raise error(f"{where}: suffix group {g!r} must be a non-empty list of suffixes, got {sfx!r}")
        dups = sorted(x for x, c in Counter(sfx).items() if c > 1)
        if dups:
            raise error(f"{where}: suffix group {g!r} repeats {', '.join(dups)}")
        out[str(g)] = tuple(sfx)
    return out
