"""Kurita et al. fill, prior and corrected log-probabilities of template sentences, read
from a masked LM the caller gives (the model-running half of
:mod:`polybias.metrics.logprob`, which turns these scores into biases and effect sizes).

Targets are scored in one of two ways:

* ``mode="word"`` (default) — the whole target word through :mod:`polybias.engines.scoring`:
  the sentence keeps the target written out, and each of its word pieces is scored
  with itself and the pieces to its right in the same word masked (PLL-word-l2r, Kauf &
  Ivanova 2023), summed: ``log P(word | context)`` by the chain rule. The attribute mask
  of the prior sentence stays masked throughout.
* ``mode="first_piece"`` (Kurita / seed-000 compatible) — the target is replaced by a
  single mask token and the probability of its first word piece is read there.

Both the fill and the prior are read **at the target's mask** (docs/conventions.md);
``prior_at="attribute"`` reproduces the Bangla scripts' reading at the trait slot, for
comparison.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import torch

from polybias.data import templating
from polybias.data.templating import Filled, TemplateBook
from polybias.engines import scoring
from polybias.engines.batches import fill_padded, flatten, pipelined, start_fetch, to_device
from polybias.engines.common import pack_batches

MODES = ("word", "first_piece")
PRIOR_AT = ("target", "attribute")
#: Index quirks of reference code that ``kurita_scores`` can reproduce (compat only).
INDEX_QUIRKS = (None, "kurita2019")


class LogProbError(ValueError):
    """Bad input to log-probability scoring; the message names what is wrong."""


def _pieces_in_span(enc, span: tuple[int, int]) -> list[int]:
    """Token indices whose character offsets fall inside ``span`` (special tokens excluded)."""
    a, b = span
    special = enc["special_tokens_mask"]
    return [i for i, (s, e) in enumerate(enc["offset_mapping"])
            if not special[i] and e > s and s >= a and e <= b]


def _encode(lm: scoring.LanguageModel, text: str):
    return lm.tokenizer(text, add_special_tokens=True, return_offsets_mapping=True,
                        return_special_tokens_mask=True, truncation=False)


def _mask_index(lm: scoring.LanguageModel, enc, start: int, text: str) -> int:
    """Index of the mask token that starts at character ``start``."""
    mask_id = lm.tokenizer.mask_token_id
    for i, (s, _) in enumerate(enc["offset_mapping"]):
        if enc["input_ids"][i] == mask_id and s == start:
            return i
    raise LogProbError(f"no mask token at character {start} of {text!r}")


def mask_log_distributions(lm: scoring.LanguageModel, texts: list[str], starts: list[int],
                           batch_tokens: int | None = None, shifts: list[int] | None = None) -> np.ndarray:
    """(n, V) natural-log distributions predicted at the mask token starting at character
    ``starts[i]`` of ``texts[i]`` (other masks of the text stay masked).

    ``shifts[i]`` (default 0) reads the output ``shifts[i]`` tokens after that mask
    instead (−1: the token before it), for reference code that reads at a shifted index
    (compat only; see ``index_quirk`` of :func:`kurita_scores`).

    One forward pass per distinct (text, mask) pair, batched by length with the token
    budget of :mod:`polybias.engines.scoring` and the output layer run only at the masks; eval
    mode and ``inference_mode``. Used for the first-piece scores and for the distribution
    difference of :mod:`polybias.metrics.catbias`.
    """
    if lm.kind != "mlm":
        raise LogProbError(f"{lm.name} is a {lm.kind} LM; mask predictions need a masked LM")
    if len(texts) != len(starts):
        raise LogProbError(f"{len(texts)} texts but {len(starts)} mask positions")
    shifts = [0] * len(texts) if shifts is None else [int(k) for k in shifts]
    if len(shifts) != len(texts):
        raise LogProbError(f"{len(texts)} texts but {len(shifts)} shifts")
    # a text read at the same mask twice (e.g. a prior whose attribute is masked, once per
    # attribute) is run once
    keys = list(zip(texts, starts, shifts, strict=True))
    unique = list(dict.fromkeys(keys))
    where = {key: u for u, key in enumerate(unique)}
    encs, idx = [], []
    for t, s, k in unique:
        e = _encode(lm, t)
        if len(e["input_ids"]) > lm.max_length:
            raise LogProbError(f"{lm.name} accepts at most {lm.max_length} tokens; {text_head(t)} "
                               f"has {len(e['input_ids'])}")
        encs.append(e)
        i = _mask_index(lm, e, s, t) + k
        if not 0 <= i < len(e["input_ids"]):
            raise LogProbError(f"shift {k} leaves {text_head(t)} (mask at character {s})")
        idx.append(i)
    flat_ids, starts = flatten([e["input_ids"] for e in encs])
    lengths = np.diff(starts)
    idx = np.asarray(idx, dtype=np.int64)
    pad = lm.tokenizer.pad_token_id if lm.tokenizer.pad_token_id is not None else 0
    out: list[np.ndarray | None] = [None]  # (len(unique), V), allocated at the first batch
    budget = lm.batch_tokens if batch_tokens is None else batch_tokens

    def prepared():
        for batch in pack_batches(lengths, budget, scoring.ScoringError):
            yield batch, fill_padded(flat_ids, starts[batch], lengths[batch], pad)

    def launch(item):
        batch, ids = item
        x, blen, cols = to_device([ids, lengths[batch], idx[batch]], lm.device)
        att = (torch.arange(ids.shape[1], device=x.device)[None, :] < blen[:, None]).long()
        rows = torch.arange(len(batch), device=x.device)
        with scoring.head_only_at(lm.model, tuple(ids.shape), rows, cols) as state:
            logits = lm.model(input_ids=x, attention_mask=att).logits
        if not state["applied"] or logits.dim() != 2:
            logits = logits[rows, cols]
        lp = torch.log_softmax(logits.to(torch.promote_types(logits.dtype, torch.float32)), dim=-1)
        return start_fetch(lp.double())

    def finish(item, fetch) -> None:
        lp = fetch.result()
        if out[0] is None:
            out[0] = np.empty((len(unique), lp.shape[1]), dtype=np.float64)
        out[0][item[0]] = lp

    with torch.inference_mode():
        pipelined(prepared(), launch, finish)
    if out[0] is None:  # no texts
        return None
    return out[0][[where[key] for key in keys]]


def text_head(text: str) -> str:
    return repr(text if len(text) <= 60 else text[:57] + "...")


def target_logprobs(lm: scoring.LanguageModel, items: list[Filled], target: str,
                    masked: tuple[str, ...] | list[str] = (), mode: str = "word",
                    read_at: str | None = None, batch_tokens: int | None = None,
                    read_shift: list[int] | None = None) -> np.ndarray:
    """log P(target word | rest of the sentence) for realised templates.

    Parameters
    ----------
    lm : masked LM.
    items : sentences from :func:`polybias.data.templating.realise` with every slot written out.
    target : the target slot (its word is what is scored).
    masked : other slots to replace by the mask token (the attribute, for the prior).
    mode : "word" (whole word via :func:`polybias.engines.scoring.masked_token_logprobs`, pieces
        of the target scored left to right) or "first_piece" (the target replaced by one
        mask; the log-probability of its first word piece, as tokenised in the sentence).
    read_at : first-piece mode only: the slot whose mask the prediction is read at.
        Default (and correct) is the target; naming the attribute reproduces the
        wrong-index prior of the reference code (compat only).
    read_shift : first-piece mode only: per sentence, read the output that many tokens
        after the ``read_at`` mask (−1: the token before it; compat only, see
        ``index_quirk`` of :func:`kurita_scores`). Default: at the mask.

    Returns
    -------
    (n,) natural-log probabilities.
    """
    if mode not in MODES:
        raise LogProbError(f"mode must be one of {MODES}, got {mode!r}")
    if lm.kind != "mlm":
        raise LogProbError(f"{lm.name} is a {lm.kind} LM; the log-probability bias score needs a masked LM")
    if not items:
        raise LogProbError("no sentences to score")
    if target in masked:
        raise LogProbError(f"the target slot {target!r} cannot also be in 'masked'")
    mask_token = lm.tokenizer.mask_token
    for f in items:
        if f.masked:
            raise LogProbError(f"template {f.template!r}: pass sentences with every slot written out "
                               f"(masked here: {list(f.masked)}); use 'masked' to mask slots")
        for s in (target, *masked):
            if s not in f.spans:
                raise LogProbError(f"template {f.template!r} has no slot {s!r}")
    first, first_ids = [], []  # target pieces in the written-out sentence, id of the first
    for f in items:
        enc = _encode(lm, f.text)
        pieces = _pieces_in_span(enc, f.spans[target])
        if not pieces:
            raise LogProbError(f"target {f.words[target]!r} has no word piece in {text_head(f.text)}")
        first.append(pieces)
        first_ids.append(enc["input_ids"][pieces[0]])
    if mode == "word" and read_shift is not None:
        raise LogProbError("read_shift exists in first_piece mode only")
    if mode == "word":
        jobs = []  # (text, target pieces)
        for f, pieces in zip(items, first, strict=True):
            if masked:
                f = templating.mask_slots(f, masked, mask_token)
                pieces = _pieces_in_span(_encode(lm, f.text), f.spans[target])
            jobs.append((f.text, tuple(pieces)))
        # a sentence repeated with the same target pieces (a prior whose masked attribute
        # was written out differently) is scored once
        unique = list(dict.fromkeys(jobs))
        scores = scoring.masked_token_logprobs(lm, [t for t, _ in unique], positions=[list(p) for _, p in unique],
                                               within_word_l2r=True, batch_tokens=batch_tokens)
        total = {job: float(np.sum(s.logprob[list(job[1])])) for job, s in zip(unique, scores, strict=True)}
        return np.array([total[job] for job in jobs])
    read_at = read_at or target
    gold, texts, starts = [], [], []
    for f, first_id in zip(items, first_ids, strict=True):
        if read_at not in f.spans:
            raise LogProbError(f"template {f.template!r} has no slot {read_at!r} to read at")
        if read_at != target and read_at not in masked:
            raise LogProbError(f"read_at={read_at!r} must be the target or a masked slot")
        gold.append(first_id)
        g = templating.mask_slots(f, (target, *masked), mask_token)
        texts.append(g.text)
        starts.append(g.spans[read_at][0])
    if read_shift is not None and len(read_shift) != len(items):
        raise LogProbError(f"{len(items)} sentences but {len(read_shift)} read shifts")
    dist = mask_log_distributions(lm, texts, starts, batch_tokens, shifts=read_shift)
    return dist[np.arange(len(items)), np.asarray(gold)]


def _items(book: TemplateBook, template: str, targets, attributes) -> tuple[list[Filled], str, str]:
    t = book.template(template)
    tgt, att = t.the("target"), t.the("attribute")
    fixed_pools = {}
    for slot, chosen in ((tgt, targets), (att, attributes)):
        ids = book.lists[t.slots[slot].list].ids
        chosen = list(chosen) if chosen is not None else ids
        if not chosen:
            raise LogProbError(f"template {template!r}: empty list of {slot!r} entries")
        missing = [c for c in chosen if c not in ids]
        if missing:
            raise LogProbError(f"template {template!r}: list {t.slots[slot].list!r} has no "
                               f"entries {missing}")
        fixed_pools[slot] = chosen
    items = []
    for a in fixed_pools[att]:
        for x in fixed_pools[tgt]:
            items.extend(templating.expand(book, t, fixed={tgt: x, att: a}))
    return items, tgt, att


def kurita_scores(lm: scoring.LanguageModel, book: TemplateBook, templates: list[str] | str,
                  targets: list[str] | None = None, attributes: list[str] | None = None,
                  mode: str = "word", prior_at: str = "target",
                  batch_tokens: int | None = None, index_quirk: str | None = None) -> pd.DataFrame:
    """Fill, prior and corrected log-probability scores for every sentence of ``templates``.

    Every template needs exactly one target and one attribute slot; context slots are
    expanded over their lists. ``prior_at="attribute"`` (first-piece mode only) reads the
    prior at the attribute's mask, as the Bangla study's reimplementation
    (csebuetnlp/BanglaContextualBias ``LogProbCalculations/bias_score.py``) does (compat).

    ``index_quirk="kurita2019"`` (first-piece mode only; compat) reproduces the numbers of
    Kurita et al.'s own code (keitakurita/contextual_embedding_bias_measure at 18044f8):
    ``lib/bias_calculator.py`` lines 47–50 read the fill with
    ``use_last_mask = not gender_comes_first`` and lines 59–62 the prior with
    ``use_last_mask = gender_comes_first``, and ``lib/bert_utils.py`` ``get_index`` returns
    ``i + 1`` (line 85, counting [CLS]) for the first mask but ``len(toks) - 1 - i``
    (line 89, no +1) for the last one. So, with the target before the attribute, the fill
    is read at the target's mask and the prior one token *before the attribute's* mask;
    with the target after the attribute, the fill is read one token before the target's
    mask and the prior at the attribute's mask. "Before" is decided per template by the
    slots' positions (the reference's ``gender_comes_first`` argument). The reference's
    bias score of one male and one female word is then :func:`polybias.metrics.logprob.attribute_bias` of these
    rows. Use it only to compare with published numbers: the default reads both at the
    target's mask.

    Returns
    -------
    DataFrame with columns template, target, attribute, variant, text, fill, prior,
    corrected (one row per sentence; entry ids in target/attribute).
    """
    if prior_at not in PRIOR_AT:
        raise LogProbError(f"prior_at must be one of {PRIOR_AT}, got {prior_at!r}")
    if prior_at != "target" and mode != "first_piece":
        raise LogProbError("prior_at='attribute' (the reference code's index) exists in "
                           "first_piece mode only")
    if index_quirk not in INDEX_QUIRKS:
        raise LogProbError(f"index_quirk must be one of {INDEX_QUIRKS}, got {index_quirk!r}")
    if index_quirk is not None and (mode != "first_piece" or prior_at != "target"):
        raise LogProbError(f"index_quirk={index_quirk!r} needs mode='first_piece' and sets the "
                           "prior's reading itself (leave prior_at at 'target')")
    templates = [templates] if isinstance(templates, str) else list(templates)
    frames = []
    for name in templates:
        items, tgt, att = _items(book, name, targets, attributes)
        fill_shift = prior_shift = None
        read_prior = att if prior_at == "attribute" else tgt
        if index_quirk == "kurita2019":
            first = [f.spans[tgt][0] < f.spans[att][0] for f in items]
            fill_shift = [0 if x else -1 for x in first]   # last mask read without the +1
            prior_shift = [-1 if x else 0 for x in first]
            read_prior = att
        fill = target_logprobs(lm, items, tgt, (), mode, batch_tokens=batch_tokens,
                               read_shift=fill_shift)
        prior = target_logprobs(lm, items, tgt, (att,), mode, read_at=read_prior,
                                batch_tokens=batch_tokens, read_shift=prior_shift)
        frames.append(pd.DataFrame({
            "template": name, "target": [f.choice[tgt] for f in items],
            "attribute": [f.choice[att] for f in items], "variant": [f.variant for f in items],
            "text": [f.text for f in items], "fill": fill, "prior": prior, "corrected": fill - prior}))
    return pd.concat(frames, ignore_index=True)


def ahn_oh_scores(lm: scoring.LanguageModel, book: TemplateBook, templates: list[str] | str,
                  targets: list[str] | None = None, attributes: list[str] | None = None,
                  batch_tokens: int | None = None) -> pd.DataFrame:
    """Fill, prior and corrected scores computed as Ahn & Oh's code does for multi-piece
    words (compat; ``multipiece="ahn-oh"`` of :func:`polybias.studies.categorical_bias.ahn_oh_cb`).

    Follows jaimeenahn/ethnic_bias at a115eb7, ``score.py``
    ``log_probability_for_single_sentence`` (lines 76–140) and ``bias_utils.py``
    ``find_mask_token`` (lines 26–33):

    * a target of k word pieces (the word tokenized on its own) is replaced by k mask
      tokens separated by spaces (line 90); in the prior the attribute is replaced by as
      many masks as it has pieces (lines 91, 95);
    * the fill is read at the k target masks; the prior at k consecutive positions from
      the first mask when the target comes first, and otherwise from the *second* mask
      of the sentence (``find_mask_token(..., last=True)`` skips only the first [MASK]):
      the target's first mask for a one-piece attribute, but the attribute's second mask
      when the attribute has two or more pieces (lines 114–115, 145–147);
    * the probability of the word is the product of **every** piece's probability at
      **every** read position (lines 130–134: ``for token in tokenize(nat): for logit in
      logits``), so log P = Σ_pieces Σ_positions log p_position(piece) — k² terms, not
      the chain rule.

    Returns the columns of :func:`kurita_scores` (fill, prior and corrected in nats).
    """
    if lm.kind != "mlm":
        raise LogProbError(f"{lm.name} is a {lm.kind} LM; the CB score needs a masked LM")
    tok = lm.tokenizer
    mask = tok.mask_token
    templates = [templates] if isinstance(templates, str) else list(templates)
    frames = []
    for name in templates:
        items, tgt, att = _items(book, name, targets, attributes)
        texts, starts, shifts, gold, owner = [], [], [], [], []
        for n, f in enumerate(items):
            pieces = tok.convert_tokens_to_ids(tok.tokenize(f.words[tgt]))
            n_attr = len(tok.tokenize(f.words[att]))
            if not pieces or not n_attr:
                raise LogProbError(f"template {name!r}: an empty word in {text_head(f.text)}")
            k = len(pieces)
            target_first = f.spans[tgt][0] < f.spans[att][0]
            fill = templating.mask_slots(f, [tgt], " ".join([mask] * k))
            prior = templating.mask_slots(fill, [att], " ".join([mask] * n_attr))
            for kind, g in (("fill", fill), ("prior", prior)):
                enc = _encode(lm, g.text)
                at = [i for i, t in enumerate(enc["input_ids"]) if t == tok.mask_token_id]
                first = at[0] if kind == "fill" or target_first else at[1]
                for j in range(k):
                    for p in pieces:
                        texts.append(g.text)
                        starts.append(enc["offset_mapping"][first][0])
                        shifts.append(j)
                        gold.append(p)
                        owner.append((n, kind))
        dist = mask_log_distributions(lm, texts, starts, batch_tokens, shifts=shifts)
        values = dist[np.arange(len(texts)), np.asarray(gold)]
        total: dict[tuple[int, str], float] = {}
        for key, v in zip(owner, values, strict=True):
            total[key] = total.get(key, 0.0) + float(v)
        fill_v = np.array([total[(n, "fill")] for n in range(len(items))])
        prior_v = np.array([total[(n, "prior")] for n in range(len(items))])
        frames.append(pd.DataFrame({
            "template": name, "target": [f.choice[tgt] for f in items],
            "attribute": [f.choice[att] for f in items], "variant": [f.variant for f in items],
            "text": [f.text for f in items], "fill": fill_v, "prior": prior_v,
            "corrected": fill_v - prior_v}))
    return pd.concat(frames, ignore_index=True)
