"""Sentence extraction for CEAT: streaming, normalisation, suffix-aware matching, segments,
sampling, and bad inputs; the Bangla pipeline on the seed-000 raw text sample."""

import inspect
import unicodedata

import pytest
from polybias import paths
from polybias.data import sources, text
from polybias.data.text import Occurrence, TextError
from polybias.data.wordlists import load_wordlist_file

BN_FILE = paths.data_dir() / "wordlists" / "bn" / "weat.yaml"


def occ_at(sentence: str, word: str) -> Occurrence:
    """The first occurrence of ``word`` as a whole word of ``sentence``."""
    tokens = text.word_tokens(sentence)
    start, end = next((a, b) for a, b in tokens if sentence[a:b] == word)
    return Occurrence(word, word, sentence, start, end, n_words=len(tokens))


# ------------------------------------------------------------ sentences and streaming

def test_split_sentences_danda_and_english():
    assert text.split_sentences("রহিম বাড়ি গেল। সীমা এল ॥ কেন? জানি না!", "bn") == [
        "রহিম বাড়ি গেল।", "সীমা এল ॥", "কেন?", "জানি না!"]
    assert text.split_sentences("राम घर गया। सीता आई | ठीक है", "hi") == [
        "राम घर गया।", "सीता आई |", "ठीक है"]
    # '.' ends English sentences but not Bangla ones (abbreviations, decimals)
    assert text.split_sentences("৪.৮ কিঃ মিঃ দীর্ঘ। ভালো", "bn") == ["৪.৮ কিঃ মিঃ দীর্ঘ।", "ভালো"]
    assert text.split_sentences("He left. \"Why?\" she asked.\nNext", "en") == [
        "He left.", "\"Why?\"", "she asked.", "Next"]
    assert text.split_sentences("one\ntwo", "en", line_breaks=False) == ["one\ntwo"]


def test_iter_sentences_streams_folders_in_blocks(tmp_path):
    (tmp_path / "b").mkdir()
    (tmp_path / "a.txt").write_text("প্রথম বাক্য। দ্বিতীয় বাক্য।\nতৃতীয়", encoding="utf-8")
    (tmp_path / "b" / "c.txt").write_text("চতুর্থ বাক্য! পঞ্চম", encoding="utf-8")
    (tmp_path / ".hidden").write_text("লুকানো।", encoding="utf-8")
    gen = text.iter_sentences(tmp_path, "bn")
    assert inspect.isgenerator(gen)
    whole = [(s.text, s.index) for s in gen]
    assert [t for t, _ in whole] == ["প্রথম বাক্য।", "দ্বিতীয় বাক্য।", "তৃতীয়", "চতুর্থ বাক্য!", "পঞ্চম"]
    assert [i for _, i in whole] == [0, 1, 2, 0, 1]
    for block in (1, 3, 7, 64):  # sentence boundaries falling across block borders
        assert [s.text for s in text.iter_sentences(tmp_path, "bn", block_chars=block)] == \
            [t for t, _ in whole]


def test_iter_sentences_caps_sentence_length(tmp_path):
    (tmp_path / "long.txt").write_text("ক" * 25, encoding="utf-8")
    out = [s.text for s in text.iter_sentences(tmp_path / "long.txt", "bn", block_chars=4,
                                               max_sentence_chars=10)]
    assert out == ["ক" * 10, "ক" * 10, "ক" * 5]


def test_bad_corpus_paths(tmp_path):
    with pytest.raises(TextError, match="corpus path not found"):
        list(text.iter_sentences(tmp_path / "nope.txt"))
    (tmp_path / "empty_dir").mkdir()
    with pytest.raises(TextError, match="holds no files"):
        list(text.iter_sentences(tmp_path / "empty_dir"))
    with pytest.raises(TextError, match="no files or folders given"):
        list(text.iter_sentences([]))
    bad = tmp_path / "latin1.txt"
    bad.write_bytes("caf\xe9 ok.".encode("latin-1"))
    with pytest.raises(TextError, match="latin1.txt: not UTF-8"):
        list(text.iter_sentences(bad))


def test_empty_corpus_is_an_error(tmp_path):
    (tmp_path / "empty.txt").write_text("\n  \n", encoding="utf-8")
    with pytest.raises(TextError, match="empty corpus: no sentences"):
        text.find_occurrences(tmp_path / "empty.txt", ["man"])
    with pytest.raises(TextError, match="empty corpus"):
        text.find_occurrences([], ["man"])


# ------------------------------------------------------------ normalisation and scripts

def test_decomposed_words_match_composed_text_and_back():
    composed = "পোকাটি এখানে।"                       # ো is U+09CB
    word_nfd = unicodedata.normalize("NFD", "পোকা")  # ে + া
    assert word_nfd != "পোকা"
    ex = text.find_occurrences([composed], {word_nfd: ["টি"]}, "bn")
    assert ex.counts == {word_nfd: 1} and ex.occurrences[word_nfd][0].form == "পোকাটি"
    # precomposed য় (U+09DF, a composition exclusion) in the text, base + nukta in the list
    ex = text.find_occurrences(["সে \u09df আর"], ["\u09af\u09bc"], "bn")
    assert list(ex.counts.values()) == [1]
    # Devanagari nukta letter: क़ (U+0958) in text, क + ़ in the list
    ex = text.find_occurrences(["यह \u0958लम है।"], ["\u0915\u093c\u0932\u092e"], "hi")
    assert list(ex.counts.values()) == [1]
    # zero-width joiner glued to a word does not stop the match
    ex = text.find_occurrences(["শহর থেকে \u200dরিক্সা যোগে"], ["রিক্সা"], "bn")
    assert ex.counts["রিক্সা"] == 1


def test_mixed_scripts():
    with pytest.raises(TextError, match="not in Bengali script.*rose"):
        text.find_occurrences(["গোলাপ।"], ["গোলাপ", "rose"], "bn")
    with pytest.raises(TextError, match="not in Devanagari script.*गुलाबি"):
        text.check_script(["गुलाबি"], "hi")  # Devanagari root with a Bengali vowel sign
    # a mixed-script sentence is used as it is; Latin tokens never match Bangla words
    ex = text.find_occurrences(["আমার rose গোলাপটি (rose) সুন্দর।"], {"গোলাপ": ["টি"]}, "bn")
    occ = ex.occurrences["গোলাপ"][0]
    assert ex.counts["গোলাপ"] == 1 and occ.text[occ.start:occ.end] == "গোলাপটি"


# ------------------------------------------------------------ matching

def test_whole_word_matching_and_own_suffix_groups():
    sentences = ["মা বাজারে গেল।", "মায়ের শরীর ভালো।", "লোকটি মারা গেল।", "মাটির ঘর।",
                 "শ্বশুরবাড়ি দূরে।", "বাড়িতে কেউ নেই।"]
    own = text.find_occurrences(sentences, {"মা": ["য়ের", "কে"], "বাড়ি": ["তে"]}, "bn")
    assert dict(own.forms["মা"]) == {"মা": 1, "মায়ের": 1}
    assert dict(own.forms["বাড়ি"]) == {"বাড়িতে": 1}   # not inside শ্বশুরবাড়ি
    # one shared suffix list gives মা the endings of other words: মারা (died), মাটির (soil's)
    shared = ["য়ের", "কে", "তে", "রা", "টির"]
    wrong = text.find_occurrences(sentences, {"মা": shared, "বাড়ি": shared}, "bn")
    assert {"মারা", "মাটির"} <= set(wrong.forms["মা"])
    roots = text.find_occurrences(sentences, {"মা": ["য়ের"], "বাড়ি": ["তে"]}, "bn", suffixes=False)
    assert roots.counts == {"মা": 1, "বাড়ি": 0} and roots.missing() == ["বাড়ি"]


def test_occurrence_spans_feed_the_engine():
    ex = text.find_occurrences(["The man met another man.", "Nothing here."], ["man"])
    texts, spans = text.as_inputs(ex.occurrences["man"])
    assert [t[a:b] for t, (a, b) in zip(texts, spans, strict=True)] == ["man", "man"]
    assert spans == [(4, 7), (20, 23)] and ex.n_sentences == 2
    assert text.find_occurrences(["The Man left."], ["man"], casefold=True).counts["man"] == 1
    assert text.find_occurrences(["The Man left."], ["man"]).counts["man"] == 0


def test_reservoir_cap_is_uniform_seeded_and_bounded():
    sentences = [f"man number {i} ." for i in range(500)]
    full = text.find_occurrences(sentences, ["man"])
    capped = text.find_occurrences(sentences, ["man"], max_per_word=20, seed=1)
    again = text.find_occurrences(sentences, ["man"], max_per_word=20, seed=1)
    other = text.find_occurrences(sentences, ["man"], max_per_word=20, seed=2)
    assert full.counts["man"] == capped.counts["man"] == 500
    assert len(capped.occurrences["man"]) == 20
    assert capped.occurrences == again.occurrences != other.occurrences
    kept = [o.index for o in capped.occurrences["man"]]
    assert max(kept) > 250  # a reservoir, not the first 20 seen
    with pytest.raises(TextError, match="max_per_word"):
        text.find_occurrences(sentences, ["man"], max_per_word=0)


# ------------------------------------------------------------ sampling

def test_sampling_with_and_without_replacement():
    occs = {"a": [occ_at(f"a {i}", "a") for i in range(10)], "b": [occ_at("b x", "b")] * 1}
    out = text.sample_occurrences(occs, 5, seed=0)
    assert len(out["a"]) == 5 and len(set(map(id, out["a"]))) == 5  # without replacement
    many = text.sample_occurrences(occs, 30, seed=0)
    drawn = set(map(id, many["a"]))  # with replacement: repeats, all from the word's own
    assert len(many["a"]) == 30 and len(drawn) < 30 and drawn <= set(map(id, occs["a"]))
    assert many["b"] == occs["b"] * 30
    assert text.sample_occurrences(occs, 5, seed=0) == out
    assert text.sample_occurrences(occs, 5, seed=1) != out
    # a word's sample does not depend on the other words
    assert text.sample_occurrences({"a": occs["a"]}, 5, seed=0)["a"] == out["a"]


def test_sampling_absent_words_and_min_words():
    occs = {"a": [occ_at("a b c d", "a")], "zz": []}
    with pytest.raises(TextError, match="1 word\\(s\\) occur in no sentence of the corpus: zz"):
        text.sample_occurrences(occs, 3)
    assert list(text.sample_occurrences(occs, 3, on_missing="drop")) == ["a"]
    with pytest.raises(TextError, match="with at least 5 words.*: a, zz"):
        text.sample_occurrences(occs, 3, min_words=5)
    with pytest.raises(TextError, match="n must be a positive integer"):
        text.sample_occurrences(occs, 0)


def test_fixed_and_random_sample_sets():
    assert text.sample_seed(7, "fixed", "minilm", 9) == text.sample_seed(7, "fixed", "xlmr", ">75") == 7
    seeds = {text.sample_seed(7, "random", "minilm", length) for length in (9, 25, 75, ">75")}
    assert len(seeds) == 4
    assert text.sample_seed(7, "random", "minilm", 9) == text.sample_seed(7, "random", "minilm", 9)
    with pytest.raises(TextError, match="'fixed' or 'random'"):
        text.sample_seed(7, "other")


# ------------------------------------------------------------ segments

SENT = " ".join(f"w{i}" for i in range(1, 21)) + " ."  # 20 words and a lone full stop


@pytest.mark.parametrize("word, length, first, last", [
    ("w10", 9, "w6", "w14"),    # 4 before, 4 after
    ("w10", 4, "w9", "w12"),    # even length: 1 before, 2 after
    ("w2", 9, "w1", "w9"),      # near the start: shifted right, still 9 words
    ("w19", 9, "w12", "w20"),   # near the end: shifted left
    ("w10", 1, "w10", "w10"),
])
def test_segment_length_and_centring(word, length, first, last):
    seg = text.cut_segment(occ_at(SENT, word), length)
    words = seg.text.split()
    assert (words[0], words[-1], len(words), seg.n_words) == (first, last, length, length)
    assert seg.text[seg.start:seg.end] == word


def test_segment_span_points_at_the_word():
    s = "আমি কাল সকালে বাজারে গিয়ে দুটি গোলাপের চারা কিনে এনেছি , খুব সুন্দর ।"
    o = occ_at(s, "গোলাপের")
    for length in (3, 5, 9, 25, ">75", None):
        seg = text.cut_segment(o, length)
        assert seg.text[seg.start:seg.end] == "গোলাপের"
    assert text.cut_segment(o, 3).text == "দুটি গোলাপের চারা"


def test_short_sentences_and_whole_sentence_lengths():
    o = occ_at("the man sat .", "man")
    for length in (9, 25, 75, ">75", "full", None):
        seg = text.cut_segment(o, length)
        assert seg.text == "the man sat ." and seg.n_words == 3  # the lone '.' is no word
    assert text.parse_length(">75") == (None, 76) and text.parse_length("25") == (25, 0)
    for bad in (0, -3, "long", 2.5, True):
        with pytest.raises(TextError, match="segment length"):
            text.parse_length(bad)
    assert [s.n_words for s in text.segments([occ_at(SENT, "w5"), o], 9)] == [9, 3]


# ------------------------------------------------------------ Bangla raw text (seed 000 App. C)

def test_bangla_sample_suffix_aware_matching(mirror):
    sample = sources.fetch("bangla-raw-sample")
    sets, _ = load_wordlist_file(BN_FILE)
    suffix_aware = text.find_occurrences(sample, sets.values(), "bn")
    root_only = text.find_occurrences(sample, sets.values(), "bn", suffixes=False)
    assert suffix_aware.n_sentences == root_only.n_sentences > 3000
    total_sfx, total_root = sum(suffix_aware.counts.values()), sum(root_only.counts.values())
    assert total_sfx > 1.4 * total_root
    # words found only through their inflected forms
    only_inflected = [w for w in suffix_aware.counts
                      if suffix_aware.counts[w] and not root_only.counts[w]]
    assert {"বন্ধু", "বেতন", "সম্মান"} <= set(only_inflected)
    assert suffix_aware.forms["বন্ধু"]["বন্ধুরা"] > 10
    assert {"বাড়িতে", "বাড়ির", "বাড়িটি"} <= set(suffix_aware.forms["বাড়ি"])
    for w, occs in suffix_aware.occurrences.items():
        for o in occs:
            assert o.text[o.start:o.end] == o.form and o.form in sets_forms(sets, w)
    # segments and samples run on the extracted occurrences
    sampled = text.sample_occurrences(suffix_aware, 50, seed=0, on_missing="drop")
    segs = text.segments(sampled["বাড়ি"], 9)
    assert len(segs) == 50 and all(s.n_words <= 9 for s in segs)
    assert all(s.text[s.start:s.end].startswith("বাড়ি") for s in segs)


def sets_forms(sets, word):
    return {f for s in sets.values() if word in s.words for f in s.forms(word)}


def test_bangla_ceat_pipeline_on_a_tiny_sentencepiece_encoder(mirror, torch_one_thread):
    """Bangla sample → suffix-aware occurrences → segments → tiny ALBERT (Unigram
    SentencePiece tokenizer trained on the sample) → CEAT C1, words absent from the
    sample dropped and named."""
    from polybias.data import wordlists
    from polybias.engines import embeddings
    from polybias.planted.tiny_models import build_tiny_encoder
    from polybias.studies.ceat import segment_length_study

    sample = sources.fetch("bangla-raw-sample")
    c1 = wordlists.get_test("bn", "C1")
    ex = text.find_occurrences(sample, c1.sets().values(), "bn", max_per_word=50, seed=0)
    corpus = [s.text for s in text.iter_sentences(sample, "bn")][:400]
    enc = embeddings.wrap_encoder(*build_tiny_encoder("albert", corpus=corpus, vocab_size=600),
                                  name="tiny-albert-bn")
    frame = segment_length_study(enc, [c1], ex, lengths=(9, ">75"), n_samples=5, seed=0,
                                 sample_sets=("fixed",))
    assert len(frame) == 2 and frame["ces"].notna().all() and (frame["n_samples"] == 5).all()
    dropped = frame["dropped"].iloc[0].split(", ")
    assert "মশা" not in dropped and "তেলাপোকা" in dropped  # মশা/মশার occur, তেলাপোকা does not
