"""Corpus sentences for CEAT: streaming, normalisation, suffix-aware matching, segments, sampling.

CEAT (Guo & Caliskan 2021) needs, for every stimulus word, many naturally occurring
sentences that contain it. This module turns a corpus (text files or folders of any
size) into word *occurrences* — a sentence plus the character span of the word in it,
exactly what :func:`polybias.engines.embeddings.word_vectors` takes — then cuts them into
segments of a chosen length and draws N of them per word with a seed (seed 000 §3.2,
§4.2, App. C).

Pipeline, one function per step:

* :func:`iter_sentences` — stream sentences from files/folders (a generator; memory is
  bounded by the longest sentence, capped by ``max_sentence_chars``).
* :func:`normalize` — Unicode normalisation (see *Normalisation* below).
* :func:`find_occurrences` — match every word (and, for Bangla, its own suffix group)
  in each sentence; keep at most ``max_per_word`` occurrences per word by seeded
  reservoir sampling, so memory stays bounded on any corpus.
* :func:`sample_occurrences` — N occurrences per word, without replacement when the word
  has at least N, else with replacement (seed 000 §3.2); :func:`sample_seed` gives the
  seed of a *fixed* or a *random* sample set.
* :func:`cut_segment` / :func:`segments` — a window of L words centred on the occurrence
  (9, 25, 75 ..., or ``">75"``: the whole sentence).
* :func:`as_inputs` — ``(texts, spans)`` for :func:`polybias.engines.embeddings.word_vectors`.

Normalisation
-------------
Text and words are brought to the same Unicode normal form before matching, so a word
list typed with decomposed characters finds composed text and vice versa. Bangla and
Hindi use **NFKC**: it is what the csebuetnlp normaliser applies for seed 000 (Hasan et
al. 2020), it makes the nukta letters consistent (Bangla য়/ড়/ঢ় and Devanagari क़ ख़ ग़ …
are composition exclusions, so both precomposed and decomposed input end up as base +
nukta) and it folds compatibility characters that web text carries (no-break spaces,
full-width punctuation, presentation forms) into the plain ones. Other languages use
**NFC**, which changes no visible character (NFKC would, e.g., fold ligatures and
superscripts). Zero-width joiners and non-joiners, zero-width spaces, BOMs and soft
hyphens are ignored when comparing words (they are kept in the sentence text).

Sentences and words
-------------------
A sentence ends at a line break or at a terminator followed by white space: ``. ? !``
for English; the danda ``।``, double danda ``॥``, ``?``, ``!`` and ``|`` (often typed for
the danda) for Bangla and Hindi. ``.`` does not end a Bangla/Hindi sentence (it marks
abbreviations and decimals there, e.g. "মি." and "৪.৮"). A *word* is a whitespace
token with at least one letter or digit; punctuation around it is not part of the
word for matching (a danda glued to the word is stripped), nor does a token of
punctuation alone count towards a segment length.

Matching
--------
A word list word w matches a token whose core (punctuation stripped, normalised) equals
w or w + s for a suffix s of *w's own* suffix group (seed 000 App. C: one shared suffix
list extracts wrong sentences). Words are matched whole, never as substrings. Tokens in
another script simply never match: a mixed-script sentence is used as it is. A word
*list* entry in the wrong script for the language (or mixing scripts) is an error,
named by :func:`check_script`.
"""

from __future__ import annotations

import os
import random
import re
import unicodedata
import zlib
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal

from polybias.data import languages

SEGMENT_LENGTHS = (9, 25, 75, ">75")

_CLOSERS = "\"'”’»)]}"
_IGNORABLE = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff\u00ad"))
_TOKEN = re.compile(r"\S+")


class TextError(ValueError):
    """Bad corpus or word input: missing path, empty corpus, wrong script, absent word."""


def normalization_form(language: str) -> str:
    """Unicode normal form used for ``language`` (``data/languages/<lang>.yaml``: NFKC for
    bn/hi, NFC otherwise).

    >>> normalization_form("bn"), normalization_form("en")
    ('NFKC', 'NFC')
    """
    return languages.language(language).normalization


def normalize(text: str, language: str = "en", form: str | None = None) -> str:
    """Normalise ``text`` for ``language`` (see the module notes).

    >>> nukta = "\\u09af\\u09bc"               # য + nukta, the canonical form of U+09DF
    >>> normalize("\\u09df", "bn") == nukta     # precomposed য় from web text
    True
    """
    form = form or normalization_form(language)
    if form not in ("NFC", "NFKC", "NFD", "NFKD"):
        raise TextError(f"unknown Unicode normal form {form!r}")
    return unicodedata.normalize(form, text)


def match_key(word: str, language: str = "en", casefold: bool = False) -> str:
    """The string a word is compared by: normalised, zero-width characters removed."""
    key = normalize(word, language).translate(_IGNORABLE)
    return key.casefold() if casefold else key


def check_script(words: Iterable[str], language: str) -> None:
    """Raise :class:`TextError` naming list words whose letters are not in the language's script.

    Bangla words must be written in the Bengali block, Hindi words in Devanagari; other
    languages are not checked.

    >>> check_script(["গোলাপ", "rose"], "bn")
    Traceback (most recent call last):
    ...
    polybias.data.text.TextError: words not in Bengali script for language 'bn': rose (U+0072 'r')
    """
    block = languages.language(language).script
    if block is None:
        return
    script, lo, hi = block.name, block.first, block.last
    bad = []
    for w in words:
        for ch in normalize(w, language).translate(_IGNORABLE):
            if unicodedata.category(ch)[0] in "LM" and not lo <= ord(ch) <= hi:
                bad.append(f"{w} (U+{ord(ch):04X} {ch!r})")
                break
    if bad:
        raise TextError(f"words not in {script} script for language {language!r}: {', '.join(bad)}")


# ---------------------------------------------------------------- streaming sentences

def iter_files(corpus: str | Path | Sequence[str | Path], pattern: str = "*") -> Iterator[Path]:
    """Files of a corpus: a file, a folder (recursively, sorted, hidden files skipped) or a list."""
    items = [corpus] if isinstance(corpus, (str, Path)) else list(corpus)
    if not items:
        raise TextError("empty corpus: no files or folders given")
    for item in items:
        path = Path(item)
        if path.is_file():
            yield path
        elif path.is_dir():
            found = False
            for root, dirs, files in os.walk(path):
                dirs[:] = sorted(d for d in dirs if not d.startswith("."))
                for name in sorted(files):
                    child = Path(root) / name
                    if not name.startswith(".") and child.match(pattern):
                        found = True
                        yield child
            if not found:
                raise TextError(f"corpus folder {path} holds no files matching {pattern!r}")
        else:
            raise TextError(f"corpus path not found: {path}")


def _boundary(language: str, line_breaks: bool) -> re.Pattern:
    terms = re.escape(languages.language(language).sentence_terminators)
    closers = re.escape(_CLOSERS)
    nl = r"|\n+" if line_breaks else ""
    return re.compile(rf"[{terms}]+[{closers}]*(?=\s)\s*{nl}")


def split_sentences(text: str, language: str = "en", line_breaks: bool = True) -> list[str]:
    """Split text into sentences (see the module notes); strips white space, drops empties.

    >>> split_sentences("সে বাড়ি গেল। তারপর খেল! আবার?  মি. রহিম এলেন।", "bn")
    ['সে বাড়ি গেল।', 'তারপর খেল!', 'আবার?', 'মি. রহিম এলেন।']
    >>> split_sentences("The man left. He ate!\\nNew line", "en")
    ['The man left.', 'He ate!', 'New line']
    """
    out, last = [], 0
    for m in _boundary(language, line_breaks).finditer(text):
        end = m.end()
        piece = text[last:end].strip()
        if piece:
            out.append(piece)
        last = end
    tail = text[last:].strip()
    if tail:
        out.append(tail)
    return out


@dataclass(frozen=True)
class Sentence:
    """A normalised sentence and where it comes from (file and 0-based sentence number)."""

    text: str
    source: str
    index: int


def iter_sentences(
    corpus: str | Path | Sequence[str | Path],
    language: str = "en",
    pattern: str = "*",
    line_breaks: bool = True,
    block_chars: int = 1 << 20,
    max_sentence_chars: int = 100_000,
) -> Iterator[Sentence]:
    """Stream normalised sentences from a corpus (a generator; bounded memory).

    Files are read in blocks of ``block_chars`` characters; only the unfinished last
    sentence of a block is carried over. A run of text longer than
    ``max_sentence_chars`` without a sentence boundary is cut there (so memory stays
    bounded on files without terminators).

    Raises
    ------
    TextError
        for a missing path, a folder without files, or a file that is not UTF-8 (named).
    """
    boundary = _boundary(language, line_breaks)
    form = normalization_form(language)
    for path in iter_files(corpus, pattern):
        index, carry = 0, ""
        try:
            with open(path, encoding="utf-8") as fh:
                while True:
                    block = fh.read(block_chars)
                    text = carry + block
                    last = 0
                    for m in boundary.finditer(text):
                        if block and m.end() == len(text):
                            break  # the boundary may continue in the next block
                        piece = text[last:m.end()].strip()
                        last = m.end()
                        if piece:
                            yield Sentence(unicodedata.normalize(form, piece), str(path), index)
                            index += 1
                    carry = text[last:]
                    while len(carry) > max_sentence_chars:
                        piece = carry[:max_sentence_chars].strip()
                        carry = carry[max_sentence_chars:]
                        if piece:
                            yield Sentence(unicodedata.normalize(form, piece), str(path), index)
                            index += 1
                    if not block:
                        break
        except UnicodeDecodeError as err:
            raise TextError(f"{path}: not UTF-8 text ({err.reason} at byte {err.start} of a block)") from err
        piece = carry.strip()
        if piece:
            yield Sentence(unicodedata.normalize(form, piece), str(path), index)


# ---------------------------------------------------------------- words and matching

def word_tokens(text: str) -> list[tuple[int, int]]:
    """Character spans of the words of ``text``: whitespace tokens with a letter or digit,
    leading and trailing punctuation, symbols and zero-width characters stripped.

    >>> t = "“গোলাপটি” সুন্দর।  ‍রিক্সা — ok"
    >>> [t[a:b] for a, b in word_tokens(t)]
    ['গোলাপটি', 'সুন্দর', 'রিক্সা', 'ok']
    """
    spans = []
    for m in _TOKEN.finditer(text):
        a, b = m.start(), m.end()
        while a < b and unicodedata.category(text[a])[0] not in "LNM":
            a += 1
        while b > a and unicodedata.category(text[b - 1])[0] not in "LNM":
            b -= 1
        if a < b:
            spans.append((a, b))
    return spans


def word_forms(word: str, suffixes: Iterable[str] = ()) -> list[str]:
    """The root and root + each suffix, in order, without repeats.

    >>> word_forms("গোলাপ", ["ের", "টি"])
    ['গোলাপ', 'গোলাপের', 'গোলাপটি']
    """
    forms = [word] + [word + s for s in suffixes]
    return list(dict.fromkeys(forms))


def _as_word_map(words) -> dict[str, tuple[str, ...]]:
    """word → suffixes from a mapping, WordSets, or plain words."""
    if isinstance(words, Mapping):
        return {str(w): tuple(s or ()) for w, s in words.items()}
    out: dict[str, tuple[str, ...]] = {}
    for item in words:
        if hasattr(item, "words"):  # a polybias.data.wordlists.WordSet
            sfx = getattr(item, "suffixes", {}) or {}
            for w in item.words:
                out.setdefault(w, tuple(sfx.get(w, ())))
        else:
            out.setdefault(str(item), ())
    return out


@dataclass(frozen=True)
class Occurrence:
    """One occurrence of a list word: ``text[start:end]`` is the matched surface form.

    ``text`` is the normalised sentence (or a segment of it); ``n_words`` its number of
    words; ``source`` and ``index`` locate the sentence in the corpus.
    """

    word: str
    form: str
    text: str
    start: int
    end: int
    source: str = ""
    index: int = -1
    n_words: int = 0


@dataclass
class Extraction:
    """Occurrences found per word, with the total counts before any capping."""

    occurrences: dict[str, list[Occurrence]]
    counts: dict[str, int]
    forms: dict[str, Counter] = field(default_factory=dict)
    n_sentences: int = 0

    def missing(self) -> list[str]:
        """List words that were not found at all."""
        return [w for w, c in self.counts.items() if c == 0]


def find_occurrences(
    corpus: str | Path | Sequence[str | Path] | Iterable[Sentence | str],
    words,
    language: str = "en",
    max_per_word: int | None = None,
    seed: int = 0,
    casefold: bool = False,
    suffixes: bool = True,
    pattern: str = "*",
) -> Extraction:
    """Find the occurrences of list words in a corpus.

    Parameters
    ----------
    corpus : a file, a folder, a list of them, or an iterable of :class:`Sentence` or
        strings (already split sentences).
    words : ``{word: suffixes}``, an iterable of :class:`polybias.data.wordlists.WordSet`
        (their per-word ``suffixes`` are used), or plain words.
    language : language code (normalisation, sentence terminators, script check).
    max_per_word : keep at most this many occurrences per word (uniform reservoir sample,
        seeded); None keeps all. ``counts`` still gives the totals.
    seed : seed of the reservoir sampling.
    casefold : compare case-insensitively.
    suffixes : False matches roots only (to compare with suffix-aware matching).

    Returns
    -------
    Extraction with, per word, its occurrences (sentence text + span of the surface
    form), the total number found, and a counter of the surface forms found.

    Raises
    ------
    TextError
        for list words in the wrong script, an empty corpus (no sentence at all), or a
        missing path. Words found nowhere are reported by :meth:`Extraction.missing` and
        by :func:`sample_occurrences`.
    """
    word_map = _as_word_map(words)
    if not word_map:
        raise TextError("no words to look for")
    check_script(word_map, language)
    if max_per_word is not None and (not isinstance(max_per_word, int) or max_per_word < 1):
        raise TextError(f"max_per_word must be a positive integer or None, got {max_per_word!r}")
    form_of: dict[str, list[str]] = {}
    for w, sfx in word_map.items():
        for f in word_forms(w, sfx if suffixes else ()):
            roots = form_of.setdefault(match_key(f, language, casefold), [])
            if w not in roots:
                roots.append(w)
    if isinstance(corpus, (str, Path)) or (isinstance(corpus, Sequence) and corpus
                                           and all(isinstance(c, Path) for c in corpus)):
        stream: Iterable = iter_sentences(corpus, language, pattern)
    else:
        stream = corpus
    rng = random.Random(f"occurrences/{seed}")
    found = {w: [] for w in word_map}
    counts = dict.fromkeys(word_map, 0)
    forms = {w: Counter() for w in word_map}
    form = normalization_form(language)
    n_sentences = 0
    for k, sent in enumerate(stream):
        if isinstance(sent, str):
            sent = Sentence(unicodedata.normalize(form, sent), "", k)
        n_sentences += 1
        spans = word_tokens(sent.text)
        for a, b in spans:
            key = sent.text[a:b].translate(_IGNORABLE)
            roots = form_of.get(key.casefold() if casefold else key)
            if not roots:
                continue
            for w in roots:
                occ = Occurrence(w, sent.text[a:b], sent.text, a, b, sent.source, sent.index, len(spans))
                counts[w] += 1
                forms[w][occ.form] += 1
                bucket = found[w]
                if max_per_word is None or len(bucket) < max_per_word:
                    bucket.append(occ)
                else:
                    j = rng.randrange(counts[w])
                    if j < max_per_word:
                        bucket[j] = occ
    if n_sentences == 0:
        raise TextError("empty corpus: no sentences found")
    return Extraction(found, counts, forms, n_sentences)


# ---------------------------------------------------------------- sampling

def sample_seed(seed: int, mode: Literal["fixed", "random"] = "fixed", *run_key) -> int:
    """Seed of a sample set (seed 000 §5.1: fixed vs random sample sets).

    ``"fixed"``: the same seed whatever the run, so every model and every segment length
    uses the same occurrences (comparable across models). ``"random"``: a seed derived
    from ``seed`` and the run's key (e.g. model name, segment length), so each run draws
    its own sample set.

    >>> sample_seed(3, "fixed", "minilm", 9) == sample_seed(3, "fixed", "bert", 25) == 3
    True
    >>> sample_seed(3, "random", "minilm", 9) != sample_seed(3, "random", "minilm", 25)
    True
    """
    if mode == "fixed":
        return int(seed)
    if mode != "random":
        raise TextError(f"sample mode must be 'fixed' or 'random', got {mode!r}")
    key = "/".join(map(str, (seed, *run_key))).encode("utf-8")
    return zlib.crc32(key) ^ (int(seed) & 0xFFFFFFFF)


def sample_occurrences(
    occurrences: Mapping[str, Sequence[Occurrence]] | Extraction,
    n: int,
    seed: int = 0,
    min_words: int = 0,
    on_missing: Literal["raise", "drop"] = "raise",
) -> dict[str, list[Occurrence]]:
    """N occurrences per word: without replacement when a word has at least N, else with.

    Parameters
    ----------
    occurrences : per-word occurrences (or an :class:`Extraction`).
    n : samples per word (N of CEAT).
    seed : seed; each word draws from its own stream derived from the seed and the word,
        so adding or removing a word does not change the others' samples.
    min_words : only occurrences whose sentence has at least this many words are eligible
        (e.g. 76 for a strict ">75" segment).
    on_missing : "raise" names every word with no eligible occurrence; "drop" leaves them
        out of the result.
    """
    if isinstance(occurrences, Extraction):
        occurrences = occurrences.occurrences
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise TextError(f"n must be a positive integer, got {n!r}")
    if on_missing not in ("raise", "drop"):
        raise TextError(f"on_missing must be 'raise' or 'drop', got {on_missing!r}")
    eligible = {w: [o for o in occ if o.n_words >= min_words] for w, occ in occurrences.items()}
    missing = [w for w, occ in eligible.items() if not occ]
    if missing and on_missing == "raise":
        extra = f" with at least {min_words} words" if min_words else ""
        raise TextError(f"{len(missing)} word(s) occur in no sentence{extra} of the corpus: "
                        f"{', '.join(missing)}. Pass on_missing='drop' to leave them out.")
    out = {}
    for w, occ in eligible.items():
        if not occ:
            continue
        rng = random.Random(f"sample/{seed}/{w}")
        if len(occ) >= n:
            out[w] = [occ[i] for i in rng.sample(range(len(occ)), n)]
        else:
            out[w] = [occ[rng.randrange(len(occ))] for _ in range(n)]
    return out


# ---------------------------------------------------------------- segments

def parse_length(length: int | str | None) -> tuple[int | None, int]:
    """``(window, min_words)`` of a segment length: ``9`` → (9, 0); ``">75"`` → (None, 76);
    ``None`` or ``"full"`` → (None, 0) (the whole sentence).

    >>> parse_length(25), parse_length(">75"), parse_length("full")
    ((25, 0), (None, 76), (None, 0))
    """
    if length is None or length == "full":
        return None, 0
    if isinstance(length, str) and length.startswith(">") and length[1:].isdigit():
        return None, int(length[1:]) + 1
    if isinstance(length, str) and length.isdigit():
        length = int(length)
    if isinstance(length, bool) or not isinstance(length, int) or length < 1:
        raise TextError(f"segment length must be a positive integer, '>K' or 'full', got {length!r}")
    return length, 0


def cut_segment(occ: Occurrence, length: int | str | None) -> Occurrence:
    """The occurrence inside a window of ``length`` words centred on it.

    The window holds (length − 1)//2 words before the occurrence's word and the rest
    after it; near a sentence edge it shifts inward so that it still holds ``length``
    words. A sentence of at most ``length`` words is kept whole (its ``n_words`` says
    how long it is). ``">75"``, ``"full"`` or None keep the whole sentence. The span is
    re-based on the segment text.

    >>> s = "one two three four five six seven"
    >>> o = Occurrence("five", "five", s, 19, 23, n_words=7)
    >>> seg = cut_segment(o, 3); seg.text, seg.text[seg.start:seg.end], seg.n_words
    ('four five six', 'five', 3)
    >>> cut_segment(o, 4).text          # 1 word before, 2 after
    'four five six seven'
    >>> cut_segment(o, 6).text          # shifted inward at the end of the sentence
    'two three four five six seven'
    """
    window, _ = parse_length(length)
    tokens = word_tokens(occ.text)
    if window is None or len(tokens) <= window:
        return replace(occ, n_words=len(tokens))
    i = next((k for k, (a, b) in enumerate(tokens) if a <= occ.start < b), None)
    if i is None:
        raise TextError(f"occurrence span {occ.start}:{occ.end} of {occ.word!r} is not on a word "
                        f"of its text {occ.text[:80]!r}")
    lo = min(max(0, i - (window - 1) // 2), len(tokens) - window)
    first, last = tokens[lo][0], tokens[lo + window - 1][1]
    if occ.end > last:  # a multi-token match at the window's edge: keep it whole
        last = occ.end
    return replace(occ, text=occ.text[first:last], start=occ.start - first,
                   end=occ.end - first, n_words=window)


def segments(occurrences: Sequence[Occurrence], length: int | str | None) -> list[Occurrence]:
    """:func:`cut_segment` over a list."""
    return [cut_segment(o, length) for o in occurrences]


def as_inputs(occurrences: Sequence[Occurrence]) -> tuple[list[str], list[tuple[int, int]]]:
    """``(texts, spans)`` for :func:`polybias.engines.embeddings.word_vectors`.

    >>> as_inputs([Occurrence("a", "a", "x a", 2, 3)])
    (['x a'], [(2, 3)])
    """
    return [o.text for o in occurrences], [(o.start, o.end) for o in occurrences]
