"""The BanglaBERT normaliser (this project's implementation of the csebuetnlp rules): one
hand-made input per rule, the options, the order of Unicode normalisation, and, where the
csebuetnlp package is installed, agreement with it on every input here."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from polybias.models.normalisers import EMOJI, LATIN_TO_ASCII, banglabert_normalise

N = banglabert_normalise

#: (input, output with the defaults), one or more per rule.
DEFAULTS = [
    # encoding repair (ftfy): mojibake, HTML entity in plain text, ligature, full width
    ("cafÃ© au lait", "cafe au lait"),
    ("tom &amp; jerry", "tom & jerry"),
    ("ﬁnal ﬂow", "final flow"),
    ("ＡＢＣ１２３", "ABC123"),
    # quotes
    ("«আমার» ‹সোনার› „বাংলা“ ”x‟", '"আমার" "সোনার" "বাংলা" "x"'),
    ("‘এক’ ‛দুই` ´তিন❜", "'এক' 'দুই' 'তিন'"),
    ("〝a〞 ❝b❞ ＂c＂", '"a" "b" "c"'),
    # URLs, punctuation and emoji are kept by default
    ("দেখুন https://example.org/পাতা!", "দেখুন https://example.org/পাতা!"),
    ("ভালো 😀👍🏽", "ভালো 😀👍🏽"),
    # Latin letters with diacritics to ASCII (and the csebuetnlp table's exceptions)
    ("Afganistán, Pakistán e Irán", "Afganistan, Pakistan e Iran"),
    ("Łódź, Øresund, Đakovo, Ħamrun, ðe", "Lodz, Oresund, Dakovo, Hamrun, de"),
    ("Škoda Ýmir ǰ", "skoda ymir ǰ"),
    ("Straße Æsir œuvre", "Straße Æsir œuvre"),
    ("x² ª", "x2 a"),
    # Bangla vowels written in two parts
    ("\u0985\u09be\u09ae", "\u0986\u09ae"),                    # অ + া → আ
    ("\u0995\u09c7\u09be\u09a8", "\u0995\u09cb\u09a8"),        # ে + া → ো
    ("\u0995\u09c7\u09d7\u09b6\u09b2", "\u0995\u09cc\u09b6\u09b2"),  # ে + ৗ → ৌ
    ("\u09a8\u09c7\u0981\u09be", "\u09a8\u09cb\u0981"),        # ে + ঁ + া → ো + ঁ
    ("\u09a8\u09c7\u0981\u09d7", "\u09a8\u09cc\u0981"),        # ে + ঁ + ৗ → ৌ + ঁ
    ("\u09c7\u09b6\u09d7", "\u09b6\u09cc"),                    # ে, শ, ৗ → শ + ৌ
    # consonant + nukta: ব + ় → র; য় ড় ঢ় stay decomposed after NFKC (Unicode)
    ("\u09ac\u09bc\u09be\u09a4", "\u09b0\u09be\u09a4"),
    ("\u09af\u09bc \u09a1\u09bc \u09a2\u09bc", "\u09af\u09bc \u09a1\u09bc \u09a2\u09bc"),
    ("\u09df", "\u09af\u09bc"),
    # danda, spaces, invisible characters (ZWJ and ZWNJ are kept: Bangla spelling uses them)
    ("শেষ\u09f7", "শেষ\u0964"),
    ("এক\u00a0দুই", "এক দুই"),
    ("ক\u200bখ\u2060গ\u00adঘ", "কখগঘ"),
    ("র\u200d\u09cd\u09af \u0995\u09cd\u200c\u09b7", "র\u200d\u09cd\u09af \u0995\u09cd\u200c\u09b7"),
    # dashes, ellipsis, CJK and full-width punctuation
    ("ক–খ — গ━ঘ", "ক-খ - গ-ঘ"),
    ("আচ্ছা…", "আচ্ছা..."),
    ("এক、দুই，তিন∶ 《চার》「পাঁচ」〈ছয়〉【সাত】", 'এক,দুই,তিন: "চার""পাঁচ"<ছয়>[সাত]'),
    ("১০％？！（ক）；～", "১০%?!(ক);~"),
    # whitespace: every run becomes one space; nothing is stripped
    ("  আমি \t\n তুমি  ", " আমি তুমি "),
]


@pytest.mark.parametrize("text, want", DEFAULTS)
def test_each_rule_with_the_defaults(text, want):
    assert N(text) == want


def test_url_replacement():
    text = "সাইটে https://www.example.com.bd/a/b?x=1 যান, বা www.prothomalo.com-এ (ftp://files.example.org:21/x)"
    assert N(text, url_replacement="<url>") == "সাইটে <url> যান, বা <url>-এ (<url>)"
    assert N("লিখুন http://user:pw@example.net/p এখানে", url_replacement="") == "লিখুন এখানে"
    assert N("http://203.0.113.9/x http://localhost:8080/", url_replacement="U") == "U U"
    # private, loopback and reserved addresses and bare host names are not URLs
    kept = "http://192.168.1.1 http://10.0.0.2/a http://127.0.0.1 http://224.1.1.1 example.com a/http://x.org"
    assert N(kept, url_replacement="U") == kept
    assert N("https://a.org/x", url_replacement=lambda m: f"<{len(m.group(0))}>") == "<15>"


def test_punctuation_replacement():
    assert N("হ্যাঁ, তাই! (ঠিক?) ১০০$ + ২।", punct_replacement="<p>") == \
        "হ্যাঁ<p> তাই<p> <p>ঠিক<p><p> ১০০$ + ২<p>"
    assert N("a-b", punct_replacement="") == "ab"


def test_emoji_replacement():
    text = "শুভ🎉জন্মদিন 👨🏻‍🎨 🇧🇩 1️⃣ ❤️ 🏴󠁧󠁢󠁳󠁣󠁴󠁿 ©"
    assert N(text, emoji_replacement="<e>") == "শুভ<e>জন্মদিন <e> <e> <e> <e> <e> <e>"
    assert N("👍🏽👍🏽", emoji_replacement="E") == "EE"  # one per emoji, its skin tone with it
    assert EMOJI.fullmatch("👩‍👩‍👧‍👦")  # a zero-width-joiner family is one emoji


def test_unicode_form_and_when_it_is_applied():
    assert N("① ㎏") == "1 kg"                      # NFKC
    assert N("① ㎏", unicode_norm="NFC") == "① ㎏"
    assert N("\u09cb", unicode_norm="NFD") == "\u09c7\u09be"  # applied last: stays decomposed
    # applied first, the sequence rules join what NFD split
    assert N("\u09cb", unicode_norm="NFD", apply_unicode_norm_last=False) == "\u09cb"
    assert N("\u0985\u09be ①", unicode_norm="NFKC", apply_unicode_norm_last=False) == "\u0986 1"


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match="unicode_norm must be one of NFC, NFD, NFKC, NFKD, got 'NFX'"):
        N("x", unicode_norm="NFX")
    with pytest.raises(TypeError, match="takes a string, got bytes"):
        N(b"x")
    with pytest.raises(TypeError, match="string or a callable, got int"):
        N("a.", punct_replacement=1)


def test_latin_table_shape():
    """The table maps single letters of the Latin blocks to ASCII (two for the IJ ligature)."""
    assert len(LATIN_TO_ASCII) == 509
    assert all(v.isascii() and v.isalnum() and 1 <= len(v) <= 2 for v in LATIN_TO_ASCII.values())
    assert chr(0x01F0) not in map(chr, LATIN_TO_ASCII)


_ALPHABET = st.sampled_from(
    [chr(c) for c in range(0x0980, 0x0A00)] + list(" \t\n\u00a0\u200b\u2060\u00ad\u200c\u200d")
    + list("ab.,!?'\"«»‘’“”„–—…") + ["😀", "https://x.org/a "])


@settings(max_examples=200, deadline=None)
@given(st.lists(_ALPHABET, max_size=30).map("".join))
def test_output_holds_none_of_what_the_rules_remove(text):
    out = N(text)
    assert not set(out) & set("\u00a0\u200b\u2060\u00ad\t\n«»‘’“”„–…\u09f7")
    assert "  " not in out
    assert "\u0985\u09be" not in out and "\u09c7\u09be" not in out
    assert out.count("\u200d") == text.count("\u200d")  # ZWJ kept


def random_strings(n: int = 20000, seed: int = 0) -> list[str]:
    """``n`` strings of 1–12 characters over the Bengali block, ASCII, the Latin blocks,
    general and CJK punctuation, full-width forms, a few emoji, URLs and invisible
    characters (those the rules touch)."""
    import random

    rng = random.Random(seed)
    blocks = [(0x0980, 0x0A00), (0x20, 0x7F), (0xA0, 0x250), (0x1E00, 0x1F00), (0x2000, 0x2070),
              (0x3000, 0x3020), (0xFF00, 0xFF60)]
    alphabet = [chr(c) for a, b in blocks for c in range(a, b)] + [
        "😀", "👨🏻‍🎨", "🇧🇩", "\u200d", "\u200c", "https://a.com/x ", "www.example.org ", "\ufeff"]
    return ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 12))) for _ in range(n)]


def test_agrees_with_the_csebuetnlp_package_where_installed():
    """Identical output to the csebuetnlp code (with its pinned ftfy replaced by ours) on
    every input above and on :func:`random_strings`, with the defaults and each option
    (emoji aside: their lists differ, see the module notes)."""
    import inspect

    upstream = pytest.importorskip(
        "normalizer", reason="needs csebuetnlp's normalizer, not on the package index: "
        ".venv/bin/pip install git+https://github.com/csebuetnlp/normalizer (where GitHub can be reached)")
    if "unicode_norm" not in inspect.signature(getattr(upstream, "normalize", print)).parameters:
        pytest.skip("the installed 'normalizer' is not the csebuetnlp package: pip uninstall normalizer, "
                    "then .venv/bin/pip install git+https://github.com/csebuetnlp/normalizer")
    texts = [t for t, _ in DEFAULTS] + random_strings()
    for options in ({}, {"url_replacement": "<u>"}, {"punct_replacement": "<p>"},
                    {"unicode_norm": "NFC"}, {"unicode_norm": "NFKD"}):
        differ = [t for t in texts if upstream.normalize(t, **options) != N(t, **options)]
        assert not differ, (options, differ[:5])
