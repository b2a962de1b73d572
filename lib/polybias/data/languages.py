"""Language facts, one file per language: ``data/languages/<lang>.yaml``.

Each file gives the language's ``name``, the Unicode ``normalization`` form of its word
lists and corpora, the ``sentence_terminators`` that end a sentence, and optionally the
``script`` block its letters must lie in (``{name, first, last}``). A language without a
file has the defaults: NFC, sentences ended by ``.?!``, no script check.
:mod:`polybias.data.text` reads them to normalise, split sentences and check scripts.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from pathlib import Path

from .. import paths

DEFAULT_NORMALIZATION = "NFC"
DEFAULT_TERMINATORS = ".?!"
NORMAL_FORMS = ("NFC", "NFKC", "NFD", "NFKD")
_KEYS = ("name", "normalization", "sentence_terminators", "script")


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


def language(code: str) -> Language:
    """The facts of language ``code`` (defaults when it has no file).

    >>> language("bn").normalization, language("bn").script.name
    ('NFKC', 'Bengali')
    >>> language("xx")
    Language(code='xx', name='xx', normalization='NFC', sentence_terminators='.?!', script=None)
    """
    return _read(code, str(paths.data_dir() / "languages" / f"{code}.yaml"))


@cache
def _read(code: str, path: str) -> Language:
    file = Path(path)
    if not file.is_file():
        return Language(code, code)
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
    script = raw.get("script")
    if script is not None:
        if not isinstance(script, dict) or set(script) != {"name", "first", "last"} or \
                not all(isinstance(script[k], int) for k in ("first", "last")):
            raise LanguageError(f"{file}: script must be {{name, first, last}} with integer "
                                f"code points, got {script!r}")
        script = Script(str(script["name"]), script["first"], script["last"])
    return Language(code, str(raw.get("name", code)), form, terminators, script)
