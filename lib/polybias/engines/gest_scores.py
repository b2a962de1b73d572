"""GEST scores of a language model: one number per sentence, > 0 when the masculine reading wins.

Pikuliak et al. (2024) score each GEST sentence s through templates that attribute it to a
man and to a woman (declared once in :mod:`polybias.data.gest`):

* **Masked LMs** (``english_mlm_score`` in the authors' ``_inference.ipynb``, built on
  ``masked_logprob_score`` of ``src/masked_models/utils.py``, kinit-sk/gest at 7dd908c):
  with M = the masculine template sentence and F = the feminine one, the token positions
  where the two token sequences differ (compared position by position, special tokens
  included, up to the shorter length) are masked together in M, and
  a = mean over those positions of log10 P(M's token | M masked); b likewise for F against
  M. The score is x_s = a − b.
* **Causal LMs** (``generative_score``): after the prompt (``"{s}",`` or ``"{s}", the``),
  x_s = log10 P(next = masculine word) − log10 P(next = feminine word), the words *he*/*she*
  or *man*/*woman* as the tokenizer writes them after a space (the last id of the word
  encoded with a prefix space, the authors' ``token_id``).

Both run on the scoring engine's batches (:func:`polybias.engines.scoring.jointly_masked_token_logprobs`,
:func:`polybias.engines.scoring.next_token_logprobs`): several sentences per forward pass,
where the authors run one sentence at a time. The reference tests execute the authors'
functions on tiny models and compare to 1e-5 (``tests/reference/test_gest_reference.py``).
"""

from __future__ import annotations

import math

import numpy as np

from polybias.data import gest
from polybias.engines import scoring
from polybias.engines.scoring import LanguageModel, ScoringError

LN10 = math.log(10.0)  # not numpy: the docs build imports this with numpy mocked


def _template(template, templates: tuple, what: str) -> tuple:
    if isinstance(template, int | np.integer) and not isinstance(template, bool):
        if not 0 <= template < len(templates):
            raise ScoringError(f"{what} template must be 0-{len(templates) - 1}, got {template}")
        return templates[int(template)]
    if not isinstance(template, tuple | list) or len(template) != len(templates[0]) or \
            not all(isinstance(t, str) for t in template):
        raise ScoringError(f"a {what} template is an index into polybias.data.gest's templates or a "
                           f"tuple of {len(templates[0])} strings, got {template!r}")
    if "{s}" not in template[0]:
        raise ScoringError(f"{what} template {template[0]!r} has no {{s}} for the sentence")
    return tuple(template)


def differing_positions(first_ids, second_ids) -> list[int]:
    """Indices where two token sequences differ, compared position by position up to the
    shorter length (the authors' ``tokenize_with_mask``).

    >>> differing_positions([101, 2002, 2056, 102], [101, 2016, 2056, 102])
    [1]
    >>> differing_positions([1, 5, 6, 2], [1, 7, 2])
    [1, 2]
    """
    return [i for i, (a, b) in enumerate(zip(first_ids, second_ids, strict=False)) if a != b]


def masked_pair_scores(lm: LanguageModel, masculine: list[str], feminine: list[str],
                       batch_tokens: int | None = None, progress: bool = False) -> np.ndarray:
    """a − b per pair: mean log10 P of the masculine sentence's differing tokens, masked
    together, minus the same for the feminine sentence (module docstring).

    Parameters
    ----------
    lm : a masked LM.
    masculine, feminine : the two sentences of each pair, in the same order.
    batch_tokens, progress : as in :func:`polybias.engines.scoring.jointly_masked_token_logprobs`.

    Returns
    -------
    numpy.ndarray
        One float64 score per pair; NaN where the two sentences tokenize alike.
    """
    masculine, feminine = scoring.check_texts(masculine), scoring.check_texts(feminine)
    if len(masculine) != len(feminine):
        raise ScoringError(f"{len(masculine)} masculine but {len(feminine)} feminine sentences")
    if lm.kind != "mlm":
        raise ScoringError(f"{lm.name} is a {lm.kind} LM; the masked GEST score needs a masked LM")
    enc_m, enc_f = scoring.encode(lm, masculine), scoring.encode(lm, feminine)
    pos_m = [differing_positions(m.ids, f.ids) for m, f in zip(enc_m, enc_f, strict=True)]
    pos_f = [differing_positions(f.ids, m.ids) for m, f in zip(enc_m, enc_f, strict=True)]
    texts, positions = masculine + feminine, pos_m + pos_f
    scored = scoring.jointly_masked_token_logprobs(lm, texts, positions, batch_tokens=batch_tokens,
                                                   progress=progress, allow_special=True)
    means = scoring.reduce_scores(scored, "mean") / LN10
    n = len(masculine)
    return means[:n] - means[n:]


def masked_gest_scores(lm: LanguageModel, sentences: list[str], template=0,
                       batch_tokens: int | None = None, progress: bool = False) -> np.ndarray:
    """The masked-LM GEST score of every sentence under one template (``english_mlm_score``).

    Parameters
    ----------
    lm : a masked LM.
    sentences : GEST sentences.
    template : an index into :data:`polybias.data.gest.MASKED_TEMPLATES` (0–3) or a
        (masculine, feminine) pair of templates with ``{s}``.
    batch_tokens, progress : as in :func:`masked_pair_scores`.

    Returns
    -------
    numpy.ndarray, one score per sentence (log10 units; > 0: the masculine reading).
    """
    male, female = _template(template, gest.MASKED_TEMPLATES, "masked")
    sentences = scoring.check_texts(sentences)
    return masked_pair_scores(lm, [gest.fill(male, s) for s in sentences],
                              [gest.fill(female, s) for s in sentences], batch_tokens, progress)


def answer_token_id(tokenizer, word: str) -> int:
    """The vocabulary id the causal score reads for ``word`` after a space.

    The authors take the last id of ``word`` encoded by the tokenizer loaded with
    ``add_prefix_space=True`` (``token_id``). Without reloading the tokenizer: a
    SentencePiece-style tokenizer already writes ``word`` with its ``▁`` prefix; a
    byte-level one (GPT-2) needs the space written, ``" " + word``.
    """
    plain = tokenizer(word, add_special_tokens=False)["input_ids"]
    if not plain:
        raise ScoringError(f"the tokenizer writes {word!r} as no token")
    first = tokenizer.convert_ids_to_tokens(plain[0])
    if isinstance(first, str) and first.startswith(("▁", "Ġ")):
        return int(plain[-1])
    spaced = tokenizer(" " + word, add_special_tokens=False)["input_ids"]
    return int(spaced[-1])


def causal_gest_scores(lm: LanguageModel, sentences: list[str], template=0,
                       male_token_id: int | None = None, female_token_id: int | None = None,
                       batch_tokens: int | None = None, progress: bool = False) -> np.ndarray:
    """The causal-LM GEST score of every sentence under one template (``generative_score``):
    log10 P(masculine word | prompt) − log10 P(feminine word | prompt).

    Parameters
    ----------
    lm : a causal LM.
    sentences : GEST sentences.
    template : an index into :data:`polybias.data.gest.CAUSAL_TEMPLATES` (0–1) or a
        (prompt with ``{s}``, masculine word, feminine word) triple.
    male_token_id, female_token_id : the ids to read; None: :func:`answer_token_id` of the
        template's words.
    batch_tokens, progress : as in :func:`polybias.engines.scoring.next_token_logprobs`.

    Returns
    -------
    numpy.ndarray, one score per sentence (log10 units; > 0: the masculine word).
    """
    prompt, male, female = _template(template, gest.CAUSAL_TEMPLATES, "causal")
    if lm.kind != "causal":
        raise ScoringError(f"{lm.name} is a {lm.kind} LM; the causal GEST score needs a causal LM")
    sentences = scoring.check_texts(sentences)
    ids = [answer_token_id(lm.tokenizer, male) if male_token_id is None else int(male_token_id),
           answer_token_id(lm.tokenizer, female) if female_token_id is None else int(female_token_id)]
    lp = scoring.next_token_logprobs(lm, [gest.fill(prompt, s) for s in sentences], ids,
                                     batch_tokens=batch_tokens, progress=progress)
    return (lp[:, 0] - lp[:, 1]) / LN10
