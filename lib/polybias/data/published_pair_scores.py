"""Per-pair scores published with the minimal-pair datasets, read to plain frames: the seven
masked LMs of Dutch CrowS-Pairs (Strazda & Spanakis 2025) and seed 001's GPT-2 scores and
summary (Gamboa & Lee 2024). The pairs themselves are read by :mod:`polybias.data.crowspairs`."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pandas as pd

from polybias.data import sources
from polybias.data.crowspairs import CrowsPairsError, load_crows_pairs, normalise_bias_type

DUTCH_SCORE_MODELS: dict[str, str] = {
    "bertje": "nl", "mbert": "nl", "robbert": "nl", "bert": "en", "roberta": "en",
    "camembert": "fr", "flaubert": "fr",
}
"""Models with per-pair scores in the Dutch CrowS-Pairs repository -> the language scored."""


def load_dutch_crows_scores(model: str) -> pd.DataFrame:
    """Per-pair scores of ``model`` published with Dutch CrowS-Pairs (Strazda & Spanakis 2025).

    ``model`` is one of :data:`DUTCH_SCORE_MODELS` (BERTje, mBERT, RobBERT on the Dutch
    pairs; BERT, RoBERTa on the English; CamemBERT, FlauBERT on the French). The files are
    the output of the authors' ``mlm_metric.py`` (Nangia et al.'s code: pseudo-log-
    likelihood of the shared tokens, rounded to 3 decimals). Columns: ``pair_id`` (the
    CrowS-Pairs row), ``sent_more``, ``sent_less``, ``score_more``, ``score_less``,
    ``stereotyped`` (the file's ``score``: 1 when ``sent_more`` scored higher),
    ``direction``, ``bias_type``, ``language``; :func:`polybias.metrics.crows.stereotype_score`
    aggregates them. The files differ in layout (the BERT file is ``;``-separated with
    CRLF lines, the Dutch ones Mac Roman encoded, the non-Dutch ones have an unnamed id
    column, whose row numbers are replaced by the CrowS-Pairs ids of the dataset file after
    checking that the rows hold the same pairs); all are read to the same columns.
    """
    if model not in DUTCH_SCORE_MODELS:
        raise CrowsPairsError(f"no published Dutch CrowS-Pairs scores for {model!r}; known: "
                              f"{', '.join(DUTCH_SCORE_MODELS)}")
    language = DUTCH_SCORE_MODELS[model]
    path = sources.fetch(f"crows-pairs-dutch-scores-{model}")
    sep = ";" if model == "bert" else ","
    encoding = "mac_roman" if language == "nl" else "utf-8"
    try:
        raw = pd.read_csv(path, sep=sep, encoding=encoding, dtype=str, keep_default_na=False)
    except (UnicodeDecodeError, pd.errors.ParserError) as exc:
        raise CrowsPairsError(f"{path.name}: cannot read: {exc}") from exc
    has_ids = raw.columns[0] == "id"
    raw = raw.rename(columns={raw.columns[0]: "pair_id"})
    needed = ["pair_id", "sent_more", "sent_less", "sent_more_score", "sent_less_score", "score",
              "stereo_antistereo", "bias_type"]
    missing = [c for c in needed if c not in raw.columns]
    if missing:
        raise CrowsPairsError(f"{path.name}: missing column(s) {', '.join(missing)}")
    try:
        more = raw["sent_more_score"].astype(float).to_numpy()
        less = raw["sent_less_score"].astype(float).to_numpy()
        stereotyped = raw["score"].astype(int).to_numpy()
    except ValueError as exc:
        raise CrowsPairsError(f"{path.name}: non-numeric score: {exc}") from None
    if not set(np.unique(stereotyped)) <= {0, 1}:
        raise CrowsPairsError(f"{path.name}: column 'score' must be 0 or 1")
    out = pd.DataFrame({
        "pair_id": raw["pair_id"].str.strip(), "sent_more": raw["sent_more"],
        "sent_less": raw["sent_less"], "score_more": more, "score_less": less,
        "stereotyped": stereotyped.astype(bool),
        "direction": raw["stereo_antistereo"].str.strip().str.lower(),
        "bias_type": [normalise_bias_type(b) for b in raw["bias_type"]], "language": language})
    if not has_ids:  # the row number of the file: take the dataset's ids, row by row
        pairs = load_crows_pairs("crows-pairs-dutch", language, on_invalid="keep", max_diff=None)
        same = (len(pairs) == len(out)) and all(
            a.split() == b.split() for a, b in zip(pairs.sent_more, out.sent_more, strict=True))
        if not same:
            raise CrowsPairsError(f"{path.name}: its rows are not the pairs of the {language} "
                                  "Dutch CrowS-Pairs file in order; cannot assign pair ids")
        out["pair_id"] = pairs["pair_id"].to_numpy()
    out.attrs["source"] = path.name
    return out


_SCORE_COLUMNS = {
    "bias_type": "str", "sent_more_bias": "str", "sent_less_bias": "str",
    "matching_tokens": "list", "sent_more_jsd": "float", "sent_less_jsd": "float",
    "sjsd": "float", "biased": "bool", "bias_attr_sc": "list",
    "sorted_bias-contributing_tokens": "list",
}


def _literal_list(text: str, where: str) -> list:
    try:
        value = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError) as exc:
        raise CrowsPairsError(f"{where}: not a Python list literal ({exc.__class__.__name__}): "
                              f"{text[:60]!r}") from None
    if not isinstance(value, list):
        raise CrowsPairsError(f"{where}: expected a list, got {type(value).__name__}")
    return value


def read_gamboa_scores(path: str | Path) -> pd.DataFrame:
    """Parse a per-pair score file written by the seed-001 code (``--score_file``).

    Columns, as written by ``bias_attribution_scores.py`` (Gamboa & Lee 2024):
    ``pair_id`` (str; the row of the benchmark file), ``bias_type``, ``sent_more_bias``,
    ``sent_less_bias`` (the sentences as the code read them), ``matching_tokens``
    (list of str: the shared tokens u), ``sent_more_jsd``/``sent_less_jsd`` (mean
    per-token distance of each sentence), ``sjsd`` (S_JSD, eq. 5: mean of the b(u)),
    ``biased`` (bool; the code sets it to ``sjsd < 0``, eq. 6, so a pair with S_JSD = 0
    is not biased), ``bias_attr_sc`` (float array: b(u) per shared token, eq. 4;
    computed with the code's extra square root, a 4th root of the JS divergence) and
    ``sorted_bias-contributing_tokens`` (the shared tokens sorted by b(u), most
    bias-inducing first). List cells are parsed with :func:`ast.literal_eval`.

    Raises
    ------
    CrowsPairsError
        On a missing column, a malformed cell or list, or lists of unequal length,
        naming the file, row and column.
    """
    path = Path(path)
    name = path.name
    try:
        raw = pd.read_csv(path, index_col=0, dtype=str, keep_default_na=False, encoding="utf-8")
    except (UnicodeDecodeError, pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise CrowsPairsError(f"{name}: cannot read: {exc}") from exc
    missing = [c for c in _SCORE_COLUMNS if c not in raw.columns]
    if missing:
        raise CrowsPairsError(f"{name}: missing column(s) {', '.join(missing)}")
    out = pd.DataFrame({"pair_id": raw.index.astype(str)})
    for column, kind in _SCORE_COLUMNS.items():
        values = []
        for row, text in zip(raw.index, raw[column], strict=True):
            where = f"{name} row {row}, column {column!r}"
            if kind == "str":
                values.append(text)
            elif kind == "list":
                values.append(_literal_list(text, where))
            elif kind == "bool":
                if text.strip() not in ("0", "1"):
                    raise CrowsPairsError(f"{where}: expected 0 or 1, got {text!r}")
                values.append(text.strip() == "1")
            else:
                try:
                    values.append(float(text))
                except ValueError:
                    raise CrowsPairsError(f"{where}: not a number: {text!r}") from None
        out[column] = values
    for row, toks, scores, ranked in zip(out.pair_id, out.matching_tokens, out.bias_attr_sc,
                                         out["sorted_bias-contributing_tokens"], strict=True):
        if not (len(toks) == len(scores) == len(ranked)):
            raise CrowsPairsError(
                f"{name} row {row}: matching_tokens ({len(toks)}), bias_attr_sc ({len(scores)}) "
                f"and sorted_bias-contributing_tokens ({len(ranked)}) differ in length")
        if not all(isinstance(x, int | float) for x in scores):
            raise CrowsPairsError(f"{name} row {row}, column 'bias_attr_sc': non-numeric entries")
    out["bias_attr_sc"] = [np.asarray(x, dtype=float) for x in out["bias_attr_sc"]]
    out.attrs["source"] = name
    return out


def load_gamboa_gpt2_scores() -> pd.DataFrame:
    """Seed 001's shipped per-pair GPT-2 scores on the 231-pair subset (``sample_score_file_gpt2.csv``).

    See :func:`read_gamboa_scores` for the columns. The share of ``biased`` pairs gives
    61.04 / 56.60 / 70.83 % (all / gender / sexual orientation), as in
    :func:`load_gamboa_gpt2_summary`; the paper's Table 3 prints 60.61 / 55.97 / 70.83.
    """
    return read_gamboa_scores(sources.fetch("gamboa-gpt2-scores"))


def load_gamboa_gpt2_summary() -> pd.DataFrame:
    """Seed 001's shipped GPT-2 summary (``sample_summary_file_gpt2.csv``).

    Columns: ``bias_type`` (``all``, ``gender``, ``sexual-orientation``), ``total_pairs``,
    ``sjsd_avg`` (mean S_JSD), ``sjsd_biased`` (pairs with S_JSD < 0) and
    ``sjsd_biased_perc`` (their share, a fraction, not a percentage).
    """
    path = sources.fetch("gamboa-gpt2-summary")
    frame = pd.read_csv(path, index_col=0)
    expected = ["bias_type", "total_pairs", "sjsd_avg", "sjsd_biased", "sjsd_biased_perc"]
    if list(frame.columns) != expected:
        raise CrowsPairsError(f"{path.name}: expected columns {expected}, got {list(frame.columns)}")
    frame = frame.reset_index(drop=True).astype(
        {"bias_type": str, "total_pairs": int, "sjsd_biased": int,
         "sjsd_avg": float, "sjsd_biased_perc": float})
    frame.attrs["source"] = path.name
    return frame
