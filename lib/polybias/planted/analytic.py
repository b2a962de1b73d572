"""An analytic masked LM built from a template book: a known-answer model for the
log-probability bias score (Kurita et al. 2019), with no training.

The planted masked LMs of :mod:`polybias.planted.synthetic` are trained, so their
weights depend on the CPU, and their 64-token window is shorter than the study's long
passages (seed 000's S4 and S5). This model is written down instead: a one-layer,
one-head ``BertForMaskedLM`` whose weights are set by hand from the book's own words, in
float64, with ``max_positions`` (512) positions. It is the same on every CPU and runs the
real scoring path (:func:`polybias.models.load` → :mod:`polybias.engines.scoring` →
:func:`polybias.engines.template_scores.kurita_scores`).

Construction
------------
Tokenizer: BERT WordPiece over the book's words. Every whole word of every realised
sentence (slots filled with every entry, text between slots split by BERT's
pre-tokenizer) is one piece; text glued to the right of a slot (a suffix, ``{target}রা``)
is also a ``##`` piece; every character is a piece and a ``##`` piece, so nothing is
unknown. A vocabulary word that swallows a slot's boundary (``পুরুষরা`` written out
elsewhere, which would eat the target ``পুরুষ`` + ``রা``) is removed, so that every target
and attribute of every sentence is exactly its own pieces (checked after building).

Weights (H = ``dim`` hidden units: a word block W of H − 2 units and a gender direction
g = (e_{H−2} − e_{H−1}) / √2, so every row below has mean 0 over its H units):

* input embedding of token v: E(v) = r(v) + β(v) g, where r(v) is a balanced ±1 code on W
  (half +1, half −1, permuted by ``numpy.random.default_rng((seed, sha256(v)))``, so a
  token's code does not depend on the other tokens), and β(v) = (2p − 1) α s(v) for the
  attribute words, s = +1 in group ``a``, −1 in group ``b`` (0 for a word in both groups,
  and for every other token);
* position and token-type embeddings 0; every LayerNorm weight 1, bias 0;
* attention: query and key weights 0 (every position attends uniformly to the n tokens
  of its sentence), value and output projections the identity; feed-forward weights 0
  (with ``hidden_act="linear"``); the head's transform dense the identity;
* decoder (output embedding, untied, bias 0): D(v) = E(v) for every token but the
  targets; for a target t of group σ(t) = +1 (``x``) or −1 (``y``),
  D(t) = r(t) − r̄_{σ(t)} + r̄ + γ σ(t) g, with r̄_σ the mean code of its group and r̄ the
  mean over both groups, so that the two groups' mean decoder rows differ by exactly 2γ g.

Why the planted direction comes out, and nothing at p = 0.5
------------------------------------------------------------
A zero-mean row v passes LayerNorm as ℓ(v) = v / √(|v|²/H + ε). Let x_j = ℓ(E(token j))
for the n tokens of a sentence and M the mask token. At the target's mask the model
computes z = ℓ(u), u = x_M + (1/n) Σ_j x_j (attention and residual; the feed-forward adds
0, and the identity transform and the later LayerNorms leave a normalised vector as it
is), and the logit of token v is D(v)·z. The fill sentence F and the prior sentence P
(attribute masked too) are the same for every target (the target is masked), so the
log-normalisers cancel in the difference of the two groups' mean corrected scores:

    s(a) = mean_{t∈x} [log P_F(t) − log P_P(t)] − mean_{t∈y} [·]
         = (mean_x D − mean_y D) · (z_F − z_P) = 2γ g·(z_F − z_P)

(the groups' codes cancel in the means over the whole groups, as the score takes them).

Only attribute words carry g, so g·u_P = (1/n) Σ_{context attribute words j} β_j k_j and
g·u_F = g·u_P + β_a k_a / n, with k_j = 1/√(|E_j|²/H + ε). With no other attribute word
in the sentence,

    s(a) = 2γ β_a k_a / (n √(|u_F|²/H + ε)),   β_a = (2p − 1) α s(a),

which has the sign of (2p − 1) s(a): positive for group ``a`` and negative for group
``b`` at p > 0.5, and exactly 0 at p = 0.5 (β = 0 for every word, so g·u = 0 everywhere),
for every sentence structure and length. Another attribute word in the sentence adds
(2γ/n)(c_F − c_P) Σ_j β_j k_j, c = 1/√(|u|²/H + ε): also 0 at p = 0.5, and small beside the
planted term otherwise (c_F and c_P differ by one token of n). In floating point the
p = 0.5 differences are rounding noise (about 1e-15 in float64, far below the 1e-9
tolerance of :func:`polybias.stats.split_permutation_test`, whose p-value is then 1).

:func:`cached_analytic_mlm` writes the model (safetensors), its tokenizer and its spec into
``cache_dir()/analytic/<key>``, the key a hash of every input (the book's content
included); :func:`polybias.models.load` (``planted-analytic``) loads it as any model directory.
Nothing built from a book is kept anywhere else.
"""

from __future__ import annotations

import hashlib
import inspect
import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

from polybias import paths
from polybias.data import templating
from polybias.data.templating import TemplateBook
from polybias.files import canonical_json, params_hash
from polybias.planted.model_store import build_folder

NAME = "planted-analytic"
#: Bump when the construction changes: the cache key covers it.
CODE_VERSION = 1
SPEC_FILE = "polybias_analytic.json"
SPECIALS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")


class AnalyticModelError(ValueError):
    """Bad input to the analytic masked LM; the message names what is wrong."""


# ---------------------------------------------------------------- roles of the book's words

def _members(book: TemplateBook, list_name: str, feature: str, groups: tuple[str, str],
             what: str) -> dict[str, int]:
    """Surface word → +1 (first group) / −1 (second group) / 0 (in both) of a list."""
    if list_name not in book.lists:
        raise AnalyticModelError(f"template book {book.file!r} has no {what} list {list_name!r}; "
                                 f"its lists: {', '.join(sorted(book.lists))}")
    signs: dict[str, set[int]] = {}
    found = set()
    for e in book.lists[list_name].entries:
        if feature not in e.features:
            raise AnalyticModelError(f"template book {book.file!r}: entry {e.id!r} of list "
                                     f"{list_name!r} has no feature {feature!r}")
        group = e.features[feature]
        found.add(group)
        if group not in groups:
            continue
        for forms in e.forms.values():
            for w in forms:
                signs.setdefault(w, set()).add(1 if group == groups[0] else -1)
    missing = [g for g in groups if g not in found]
    if missing:
        raise AnalyticModelError(f"template book {book.file!r}: list {list_name!r} has no "
                                 f"{feature} {missing}; it has {sorted(found)}")
    return {w: (s.pop() if len(s) == 1 else 0) for w, s in signs.items()}


def _sentences(book: TemplateBook, target_list: str, attribute_list: str) -> list[tuple[Any, str, str]]:
    """(Filled, target slot, attribute slot) of every sentence of every template that
    draws its target from ``target_list`` (all entries) and has an attribute slot."""
    out = []
    for t in book.templates.values():
        roles = {s.role: name for name, s in t.slots.items()}
        tgt, att = roles.get("target"), roles.get("attribute")
        if tgt is None or att is None or t.slots[tgt].list != target_list:
            continue
        out.extend((f, tgt, att) for f in templating.expand(book, t))
    if not out:
        raise AnalyticModelError(f"template book {book.file!r} has no template with a target slot "
                                 f"from list {target_list!r} and an attribute slot")
    return out


# ---------------------------------------------------------------- tokenizer

def _pre_tokenizer():
    from tokenizers import pre_tokenizers  # lazy: heavy; model code only

    return pre_tokenizers.BertPreTokenizer()


def _collect_words(items) -> tuple[list[str], list[str]]:
    """Whole words and ``##`` pieces of the realised sentences (see the module docstring)."""
    pre = _pre_tokenizer()
    words: dict[str, None] = {}
    pieces: dict[str, None] = {}
    for f, _tgt, _att in items:
        cuts = sorted(f.spans.values())
        pos = 0
        segments = []  # (text, glued to the slot before it)
        for a, b in cuts:
            segments.append((f.text[pos:a], False if pos == 0 else True))
            words[f.text[a:b]] = None
            pos = b
        segments.append((f.text[pos:], pos > 0))
        for text, after_slot in segments:
            split = pre.pre_tokenize_str(text)
            for i, (w, (s, _e)) in enumerate(split):
                words[w] = None
                if i == 0 and after_slot and s == 0:
                    pieces["##" + w] = None
    return list(words), list(pieces)


def _tokenizer(vocab: list[str], max_positions: int):
    from tokenizers import Tokenizer, decoders, models, processors  # lazy: heavy; model code only
    from transformers import PreTrainedTokenizerFast  # lazy: heavy; model code only

    ids = {p: i for i, p in enumerate(vocab)}
    tok = Tokenizer(models.WordPiece(ids, unk_token="[UNK]", max_input_chars_per_word=1000))
    tok.pre_tokenizer = _pre_tokenizer()
    tok.decoder = decoders.WordPiece(prefix="##")
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B:1 [SEP]:1",
        special_tokens=[("[CLS]", ids["[CLS]"]), ("[SEP]", ids["[SEP]"])])
    return PreTrainedTokenizerFast(tokenizer_object=tok, model_max_length=max_positions,
                                   padding_side="right", pad_token="[PAD]", unk_token="[UNK]",
                                   cls_token="[CLS]", sep_token="[SEP]", mask_token="[MASK]")


def _straddlers(tokenizer, items) -> set[str]:
    """Pieces that cross the boundary of a target or attribute span, in the written-out
    sentences and in those with the attribute masked."""
    texts, spans = [], []
    for f, tgt, att in items:
        texts.append(f.text)
        spans.append((f.spans[tgt], f.spans[att]))
        g = templating.mask_slots(f, [att], tokenizer.mask_token)
        texts.append(g.text)
        spans.append((g.spans[tgt],))
    encodings = tokenizer.backend_tokenizer.encode_batch(texts, add_special_tokens=False)
    bad: set[str] = set()
    for enc, slot_spans in zip(encodings, spans, strict=True):
        for token, (s, e) in zip(enc.tokens, enc.offsets, strict=True):
            if any(s < a < e or s < b < e for a, b in slot_spans):
                bad.add(token)
    return bad


def book_tokenizer(book: TemplateBook, target_list: str, attribute_list: str, max_positions: int = 512):
    """The WordPiece tokenizer of the book's words (module docstring), checked: every target
    and attribute of every sentence is made of whole pieces. Returns (tokenizer, vocab)."""
    items = _sentences(book, target_list, attribute_list)
    words, pieces = _collect_words(items)
    chars = sorted({c for w in words for c in w})
    keep = [w for w in words if w not in SPECIALS]
    fixed = set(SPECIALS) | set(chars) | {"##" + c for c in chars}
    slot_words = {f.words[s] for f, tgt, att in items for s in (tgt, att)}
    removed: set[str] = set()
    for _ in range(10):
        vocab = list(dict.fromkeys([*SPECIALS, *chars, *("##" + c for c in chars), *pieces,
                                    *(w for w in keep if w not in removed)]))
        tokenizer = _tokenizer(vocab, max_positions)
        bad = _straddlers(tokenizer, items)
        if not bad:
            return tokenizer, vocab
        stuck = sorted(bad & (fixed | slot_words))
        if stuck:
            raise AnalyticModelError(f"template book {book.file!r}: the piece(s) {stuck} cross a "
                                     "slot's boundary and cannot be removed from the vocabulary")
        removed |= bad
    raise AnalyticModelError(f"template book {book.file!r}: no vocabulary keeps every slot whole")


# ---------------------------------------------------------------- weights

def _code(token: str, seed: int, width: int) -> np.ndarray:
    key = int.from_bytes(hashlib.sha256(token.encode("utf-8")).digest()[:8], "little")
    half = np.concatenate([np.ones(width // 2), -np.ones(width // 2)])
    return np.random.default_rng([seed, key]).permutation(half)


def analytic_weights(vocab: list[str], target_signs: dict[str, int], attribute_signs: dict[str, int],
                     p: float, alpha: float = 4.0, gamma: float = 4.0, dim: int = 64,
                     seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Input and output (decoder) embedding matrices, (V, dim) float64 each (module docstring).

    ``target_signs``: target word → +1 (group ``x``) / −1 (group ``y``);
    ``attribute_signs``: attribute word → +1 (``a``) / −1 (``b``) / 0.

    >>> E, D = analytic_weights(["[MASK]", "he", "she", "kind"], {"he": 1, "she": -1},
    ...                         {"kind": 1}, p=0.9, dim=6)
    >>> bool(np.abs(E.sum(axis=1)).max() < 1e-12), np.round(E[3, 4:] * np.sqrt(2), 6).tolist()
    (True, [3.2, -3.2])
    >>> np.round((D[1] - D[2])[4:] * np.sqrt(2), 6).tolist(), bool((D[1] - D[2])[:4].any())
    ([8.0, -8.0], False)
    """
    if dim < 4 or dim % 2:
        raise AnalyticModelError(f"dim must be an even number of at least 4, got {dim}")
    if not 0.0 <= p <= 1.0:
        raise AnalyticModelError(f"p must be a probability, got {p!r}")
    for name, value in (("alpha", alpha), ("gamma", gamma)):
        if not np.isfinite(value) or value <= 0:
            raise AnalyticModelError(f"{name} must be a finite number > 0, got {value!r}")
    width = dim - 2
    g = np.zeros(dim)
    g[width], g[width + 1] = 1 / np.sqrt(2), -1 / np.sqrt(2)
    index = {v: i for i, v in enumerate(vocab)}
    codes = np.zeros((len(vocab), dim))
    for i, v in enumerate(vocab):
        codes[i, :width] = _code(v, seed, width)
    inputs = codes.copy()
    beta = (2 * p - 1) * alpha
    for w, s in attribute_signs.items():
        if w in index and s:
            inputs[index[w]] += beta * s * g
    decoder = inputs.copy()
    rows = {s: [index[w] for w, sw in target_signs.items() if sw == s and w in index] for s in (1, -1)}
    if not rows[1] or not rows[-1]:
        raise AnalyticModelError("both target groups need a word in the vocabulary")
    overall = codes[rows[1] + rows[-1]].mean(axis=0)
    for s, idx in rows.items():
        centre = codes[idx].mean(axis=0)
        for i in idx:
            decoder[i] = codes[i] - centre + overall + gamma * s * g
    return inputs, decoder


def build_analytic_mlm(book: TemplateBook, p: float, *, target_list: str = "targets",
                       attribute_list: str = "traits", feature: str = "group", x: str = "male",
                       y: str = "female", a: str = "positive", b: str = "negative",
                       alpha: float = 4.0, gamma: float = 4.0, dim: int = 64,
                       max_positions: int = 512, seed: int = 0):
    """The analytic masked LM of ``book`` (module docstring): (model, tokenizer), float64,
    in eval mode. ``x``/``y`` are the target groups (+γ g / −γ g in the decoder), ``a``/``b``
    the attribute groups (+/− (2p − 1) α g in the input embeddings), read from the entries'
    ``feature`` in ``target_list`` and ``attribute_list``."""
    import torch  # lazy: heavy; model code only
    from transformers import BertConfig, BertForMaskedLM  # lazy: heavy; model code only

    if len({x, y}) != 2 or len({a, b}) != 2:
        raise AnalyticModelError(f"the target groups ({x!r}, {y!r}) and the attribute groups "
                                 f"({a!r}, {b!r}) must differ")
    targets = _members(book, target_list, feature, (x, y), "target")
    both = [w for w, s in targets.items() if s == 0]
    if both:
        raise AnalyticModelError(f"template book {book.file!r}: target word(s) {both} are in both "
                                 f"{x!r} and {y!r}")
    attributes = _members(book, attribute_list, feature, (a, b), "attribute")
    tokenizer, vocab = book_tokenizer(book, target_list, attribute_list, max_positions)
    single = [w for w in targets if len(tokenizer.tokenize(w)) != 1]
    if single:
        raise AnalyticModelError(f"template book {book.file!r}: target(s) {single} are not one "
                                 "word each")
    inputs, decoder = analytic_weights(vocab, targets, attributes, p, alpha, gamma, dim, seed)
    config = BertConfig(vocab_size=len(vocab), hidden_size=dim, num_hidden_layers=1,
                        num_attention_heads=1, intermediate_size=1, hidden_act="linear",
                        hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0,
                        max_position_embeddings=max_positions, type_vocab_size=1,
                        pad_token_id=vocab.index("[PAD]"), tie_word_embeddings=False,
                        architectures=["BertForMaskedLM"])
    with torch.random.fork_rng(devices=[]):  # its random initialisation, all overwritten below,
        model = BertForMaskedLM(config).to(torch.float64)  # leaves the global RNG as it was
    eye = torch.eye(dim, dtype=torch.float64)
    state = {}
    for name, value in model.state_dict().items():
        zero = torch.zeros_like(value)
        if name.endswith("LayerNorm.weight"):
            zero = torch.ones_like(value)
        state[name] = zero
    state["bert.embeddings.word_embeddings.weight"] = torch.from_numpy(inputs)
    state["cls.predictions.decoder.weight"] = torch.from_numpy(decoder)
    for name in ("bert.encoder.layer.0.attention.self.value.weight",
                 "bert.encoder.layer.0.attention.output.dense.weight",
                 "cls.predictions.transform.dense.weight"):
        state[name] = eye.clone()
    if "bert.embeddings.position_ids" in state:
        state["bert.embeddings.position_ids"] = torch.arange(max_positions).unsqueeze(0)
    model.load_state_dict(state)
    return model.eval(), tokenizer


# ---------------------------------------------------------------- the cached model directory

def analytic_spec(book: TemplateBook, p: float, **options) -> dict[str, Any]:
    """Every input of :func:`build_analytic_mlm` (defaults included), the book as the sha256 of
    its content, and :data:`CODE_VERSION`: what the cache key hashes."""
    defaults = {k: v.default for k, v in inspect.signature(build_analytic_mlm).parameters.items()
                if v.kind is inspect.Parameter.KEYWORD_ONLY}
    unknown = sorted(set(options) - set(defaults))
    if unknown:
        raise AnalyticModelError(f"unknown option(s) of the analytic MLM: {', '.join(unknown)}")
    content = hashlib.sha256(canonical_json(asdict(book)).encode("utf-8")).hexdigest()
    return {"kind": "mlm-analytic", "code_version": CODE_VERSION, "p": float(p),
            "book": book.file, "book_sha256": content, **defaults, **options}


def cached_analytic_mlm(book: TemplateBook, p: float, **options) -> tuple[Path, str]:
    """The model directory of :func:`build_analytic_mlm` in ``cache_dir()/analytic/<key>``
    (built once: written under a temporary name, renamed when complete) and its key
    ``mlm-analytic-<hash of analytic_spec>``."""
    spec = analytic_spec(book, p, **options)
    key = f"mlm-analytic-{params_hash(spec)}"
    folder = build_folder(paths.cache_dir() / "analytic" / key,
                          lambda tmp: write_analytic_mlm(book, p, tmp, **options), marker=SPEC_FILE)
    return folder, key


def write_analytic_mlm(book: TemplateBook, p: float, folder: str | Path, **options) -> Path:
    """Build the analytic MLM and write it into ``folder``: ``model.safetensors``,
    ``config.json``, the tokenizer files and :data:`SPEC_FILE` (its spec). Nothing time- or
    machine-dependent is written, so two builds give byte-identical files."""
    import transformers  # lazy: heavy; model code only

    folder = Path(folder)
    spec = analytic_spec(book, p, **options)
    model, tokenizer = build_analytic_mlm(book, p, **options)
    bars = transformers.logging.is_progress_bar_enabled()
    transformers.logging.disable_progress_bar()
    try:
        model.save_pretrained(folder, safe_serialization=True)
    finally:
        if bars:
            transformers.logging.enable_progress_bar()
    tokenizer.save_pretrained(folder)
    (folder / SPEC_FILE).write_text(json.dumps(spec, indent=2, sort_keys=True, ensure_ascii=False) + "\n",
                                    encoding="utf-8")
    return folder
