"""Text normalisers that models require before tokenising: the BanglaBERT normaliser.

BanglaBERT (Bhattacharjee et al. 2022) was pre-trained on text cleaned by the csebuetnlp
normaliser (Hasan et al. 2020, "Not low-resource anymore", EMNLP; package ``normalizer``,
github.com/csebuetnlp/normalizer, not on PyPI), and its model card asks for the same
normalisation of every input. :func:`banglabert_normalise` is this project's
implementation of that normaliser's documented behaviour, with the same options and
defaults (``unicode_norm="NFKC"``, no punctuation, URL or emoji replacement, Unicode
normalisation applied last). Steps, in order:

1. **Encoding repair** with ftfy's ``fix_text`` (mojibake, HTML entities in text without
   markup, Latin ligatures, full-width characters, curly quotes, line breaks, control
   characters), ending in Unicode NFC.
2. **Quotes**: every double-quote variant (guillemets, low-9 and high-reversed-9 quotes,
   ornament and CJK double quotes, the full-width quotation mark) becomes ``"``; single
   curly, reversed, ornament quotes, the backtick and the acute accent become ``'``.
3. **URLs** (only with ``url_replacement``): ``http://``, ``https://``, ``ftp://`` or
   ``www.`` followed by a host (a public dotted IPv4 address, a host name with a letter
   top-level domain, or ``localhost``), an optional port and a path up to whitespace or a
   closing bracket, not preceded by a word character, ``/`` or ``.``.
4. **Punctuation** (only with ``punct_replacement``): every character of Unicode general
   category P (so the danda ``।`` too, but not symbols such as ``$`` or ``+``).
5. **Emoji** (only with ``emoji_replacement``): each emoji, one replacement for a whole
   sequence (skin tone, variation selector, keycap, flag pair and zero-width-joiner
   sequences), see :data:`EMOJI`.
6. **Latin letters with diacritics to ASCII** (:data:`LATIN_TO_ASCII`): ``Afganistán`` →
   ``Afganistan``.
7. **Sequence rules** (:data:`SEQUENCE_RULES`): Bangla vowel signs and independent vowels
   written in two parts joined (অ + া → আ; ে + ঁ + া → ো + ঁ; ে, a consonant, ৗ → the
   consonant + ৌ), consonant + nukta to the precomposed letter (ব + ় → র), the Bengali
   currency numerator four ``৷`` to the danda ``।``, no-break space to space, zero-width
   space, word joiner and soft hyphen removed (zero-width joiner and non-joiner, which
   Bangla spelling uses, are kept), dashes, ellipsis and CJK/full-width punctuation to
   ASCII.
8. **Unicode normalisation** ``unicode_norm`` (NFKC by default; with
   ``apply_unicode_norm_last=False`` it is applied before step 7 instead). NFKC turns the
   precomposed nukta letters য় ড় ঢ় back into consonant + nukta, as Unicode requires.
9. **Whitespace**: every run of whitespace becomes one space (leading and trailing runs
   too; nothing is stripped).

Where this differs from the upstream package (documented, tested):

* With ``apply_unicode_norm_last=False`` the upstream code passes its arguments to
  ``unicodedata.normalize`` in the wrong order and raises ``ValueError``; here the form is
  applied before step 7, as its README describes.
* A string replacement is inserted literally (upstream hands it to ``re.sub``, which
  would expand backslash escapes); a callable gets the match object, as upstream.
* Emoji are recognised by Unicode properties (:data:`EMOJI`), not by the emoji list of the
  ``emoji`` 1.4.2 package upstream pins; the two agree on ordinary emoji and sequences,
  and this one also knows emoji added to Unicode since. A variation selector after an
  emoji is replaced with it here; upstream leaves it behind where its list holds the emoji
  without one (``❤️`` → ``<e>`` + U+FE0F).
* URL host names are ASCII letters and digits, single hyphens inside a label. The upstream
  pattern means the same but, through a mis-escaped character range, also accepts some
  ASCII punctuation in host names and digits in the top-level domain, so it rewrites part
  of a private address (``http://192.168.1.1`` → ``<url>.1.1``); here that address is
  left whole, as its exclusion of private addresses intends.

:data:`VERSION` names this implementation in run records; change it whenever the output
of :func:`banglabert_normalise` changes for some input.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from importlib import metadata

import regex

#: Recorded with every run of a model using this normaliser; bump on any output change.
VERSION = "1"

UNICODE_FORMS = ("NFC", "NFD", "NFKC", "NFKD")

_DOUBLE_QUOTES = "«‹»›„“‟”❝❞❮❯〝〞〟＂"
_SINGLE_QUOTES = "‘‛’❛❜`´"
_QUOTES = str.maketrans({**dict.fromkeys(_DOUBLE_QUOTES, '"'), **dict.fromkeys(_SINGLE_QUOTES, "'")})


def _latin_to_ascii() -> dict[int, str]:
    """Latin letters with diacritics → their ASCII base letter (see the module notes).

    Every letter of Latin-1 Supplement, Latin Extended-A and -B and Latin Extended
    Additional whose canonical decomposition is an ASCII letter followed by combining marks
    maps to that letter, except ǰ (U+01F0), which the csebuetnlp table leaves as it is, and
    Š and Ý, which it maps to lower-case ``s`` and ``y``; letters written with a stroke or
    bar and a few others without a decomposition are added by hand.
    """
    table = {}
    for block in (range(0x00C0, 0x0250), range(0x1E00, 0x1F00)):
        for code in block:
            parts = unicodedata.normalize("NFD", chr(code))
            base = parts[0]
            if (len(parts) > 1 and base.isascii() and base.isalpha()
                    and all(unicodedata.combining(c) for c in parts[1:])):
                table[code] = base
    del table[0x01F0]
    table[ord("Š")], table[ord("Ý")] = "s", "y"
    by_hand = {"Ð": "D", "ð": "d", "Đ": "D", "đ": "d", "Ħ": "H", "ħ": "h", "ı": "i", "ɨ": "i",
               "Ŀ": "L", "ŀ": "l", "Ł": "L", "ł": "l", "Ŧ": "T", "ŧ": "t", "Ø": "O", "ø": "o",
               "Ĳ": "IJ", "ĳ": "ij", "ª": "a", "¹": "1", "²": "2", "³": "3"}
    table.update({ord(k): v for k, v in by_hand.items()})
    return table


#: ``str.translate`` table of step 6.
LATIN_TO_ASCII: dict[int, str] = _latin_to_ascii()

_E, _AA, _AU_MARK, _CANDRABINDU = "\u09c7", "\u09be", "\u09d7", "\u0981"

#: Step 7: (pattern, replacement) in priority order; at each position the first rule that
#: matches applies (so ে + ঁ + ৗ is reordered, not read as ে, a consonant, ৗ).
SEQUENCE_RULES: tuple[tuple[str, str | Callable], ...] = (
    ("\u00ad", ""),                       # soft hyphen
    ("\u09af\u09bc", "\u09df"),           # য + nukta → য়
    ("\u09a2\u09bc", "\u09dd"),           # ঢ + nukta → ঢ়
    ("\u09a1\u09bc", "\u09dc"),           # ড + nukta → ড়
    ("\u09ac\u09bc", "\u09b0"),           # ব + nukta → র
    (_E + _AA, "\u09cb"),                 # ে + া → ো
    (_E + _AU_MARK, "\u09cc"),            # ে + ৗ → ৌ
    ("\u0985" + _AA, "\u0986"),           # অ + া → আ
    (_E + _CANDRABINDU + _AU_MARK, "\u09cc" + _CANDRABINDU),
    (_E + _CANDRABINDU + _AA, "\u09cb" + _CANDRABINDU),
    (_E + "([^\u09d7])" + _AU_MARK, lambda m: m.group(1) + "\u09cc"),  # ে X ৗ → X ৌ
    ("\u00a0", " "), ("\u200b", ""), ("\u2060", ""),   # no-break space, zero-width space, word joiner
    ("[\u201e\u201c\u201d]", '"'), ("[\u00b4\u2018\u201a\u2019]", "'"),
    ("\u2013", "-"), ("\u2014", " - "), ("\u2501", "-"),  # en dash, em dash, heavy box line
    ("\u2026", "..."),
    ("\u09f7", "\u0964"),                 # Bengali currency numerator four → danda
    ("[\uff0c\u3001]", ","), ("[\u2236\uff1a]", ":"), ("\uff1f", "?"), ("\uff01", "!"),
    ("\uff08", "("), ("\uff09", ")"), ("\uff1b", ";"), ("[\u300a\u300b\u300c\u300d]", '"'),
    ("\u3008", "<"), ("\u3009", ">"), ("\u3010", "["), ("\u3011", "]"), ("\uff5e", "~"),
    ("\uff05", "%"), ("[\uff10-\uff19]", lambda m: str(ord(m.group(0)) - 0xFF10)),
)

_SEQUENCES = regex.compile("|".join(f"(?P<r{i}>{p})" for i, (p, _) in enumerate(SEQUENCE_RULES)))


def _apply_sequence_rules(text: str) -> str:
    def replace(m):
        i = int(m.lastgroup[1:])
        rule = SEQUENCE_RULES[i][1]
        if callable(rule):
            inner = regex.match(SEQUENCE_RULES[i][0], m.group(0))
            return rule(inner)
        return rule

    return _SEQUENCES.sub(replace, text)


_OCTET = r"(?:1?\d{1,2}|2[0-4]\d|25[0-5])"
_LABEL = r"[a-z0-9]+(?:-[a-z0-9]+)*"  # single hyphens inside a label

#: Step 3's pattern (case-insensitive). Private, loopback and link-local IPv4 addresses
#: (10., 127., 169.254., 192.168., 172.16–31.) are not URLs, nor are network, broadcast and
#: reserved (≥ 224) addresses.
URL = regex.compile(
    r"(?<![\w/.])(?:https?://|ftp://|www\d{0,3}\.)"
    r"(?:\S+(?::\S*)?@)?"
    r"(?:"
    r"(?!(?:10|127)(?:\.\d{1,3}){3})(?!(?:169\.254|192\.168)(?:\.\d{1,3}){2})"
    r"(?!172\.(?:1[6-9]|2\d|3[01])(?:\.\d{1,3}){2})"
    rf"(?:[1-9]\d?|1\d\d|2[01]\d|22[0-3])(?:\.{_OCTET}){{2}}(?:\.(?:[1-9]\d?|1\d\d|2[0-4]\d|25[0-4]))"
    rf"|{_LABEL}(?:\.{_LABEL})*\.[a-z]{{2,}}"
    r"|localhost"
    r")"
    r"(?::\d{2,5})?"
    r"(?:/[^)\]}\s]*)?",
    regex.IGNORECASE)

_PUNCT = regex.compile(r"\p{P}")

_EMOJI_UNIT = (r"(?:[#*0-9]\uFE0F?\u20E3"                       # keycap
               r"|\p{Regional_Indicator}{2}"                   # flag
               r"|\p{Emoji_Modifier}"                          # a lone skin tone
               r"|\p{Extended_Pictographic}[\uFE0E\uFE0F]?\p{Emoji_Modifier}?"
               r"(?:[\U000E0020-\U000E007E]+\U000E007F)?)")     # tag sequence (subdivision flags)

#: Step 5's pattern: an emoji (keycap, flag pair or pictograph with optional variation
#: selector, skin-tone modifier and tag sequence), zero-width-joined to further ones.
EMOJI = regex.compile(rf"{_EMOJI_UNIT}(?:\u200D{_EMOJI_UNIT})*")

_WHITESPACE = regex.compile(r"\s+")


def _replacer(replacement: str | Callable) -> str | Callable:
    if callable(replacement):
        return replacement
    if not isinstance(replacement, str):
        raise TypeError(f"a replacement must be a string or a callable, got {type(replacement).__name__}")
    return lambda m: replacement


def banglabert_normalise(
    text: str,
    unicode_norm: str = "NFKC",
    punct_replacement: str | Callable | None = None,
    url_replacement: str | Callable | None = None,
    emoji_replacement: str | Callable | None = None,
    apply_unicode_norm_last: bool = True,
) -> str:
    """Normalise Bangla or English text as the csebuetnlp normaliser does (module notes).

    Parameters
    ----------
    text : the text.
    unicode_norm : Unicode normalisation form (NFKC, the default; NFC, NFD, NFKD).
    punct_replacement, url_replacement, emoji_replacement : None (the default: kept), or a
        string put in place of each punctuation character / URL / emoji, or a callable
        taking the match and returning that string.
    apply_unicode_norm_last : normalise after the sequence rules (default) or before them.

    Examples
    --------
    >>> banglabert_normalise("আমি  “বাংলায়”   গান গাই…")
    'আমি "বাংলায়" গান গাই...'
    >>> banglabert_normalise("ে\u0995ৗ") == "\u0995ৌ"  # e-kar, ka, au length mark → ka + au-kar
    True
    >>> banglabert_normalise("Afganistán, Irán") + banglabert_normalise("ﬁve ２０", unicode_norm="NFC")
    'Afganistan, Iranfive 20'
    >>> banglabert_normalise("দেখুন https://example.org/a এখানে।", url_replacement="<url>")
    'দেখুন <url> এখানে।'
    """
    from ftfy import fix_text  # lazy: only the banglabert normaliser needs it (checked on use)

    if not isinstance(text, str):
        raise TypeError(f"banglabert_normalise takes a string, got {type(text).__name__}")
    if unicode_norm not in UNICODE_FORMS:
        raise ValueError(f"unicode_norm must be one of {', '.join(UNICODE_FORMS)}, got {unicode_norm!r}")
    text = fix_text(text, normalization="NFC")
    text = text.translate(_QUOTES)
    if url_replacement is not None:
        text = URL.sub(_replacer(url_replacement), text)
    if punct_replacement is not None:
        text = _PUNCT.sub(_replacer(punct_replacement), text)
    if emoji_replacement is not None:
        text = EMOJI.sub(_replacer(emoji_replacement), text)
    text = text.translate(LATIN_TO_ASCII)
    if not apply_unicode_norm_last:
        text = unicodedata.normalize(unicode_norm, text)
    text = _apply_sequence_rules(text)
    if apply_unicode_norm_last:
        text = unicodedata.normalize(unicode_norm, text)
    return _WHITESPACE.sub(" ", text)


def ftfy_version() -> str | None:
    """The installed ftfy version (recorded with the normaliser), None when absent."""
    try:
        return metadata.version("ftfy")
    except metadata.PackageNotFoundError:
        return None
