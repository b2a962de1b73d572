"""Section 14: StereoSet in five languages — the published table recomputed, models scored,
languages compared over shared item ids.

:func:`recompute_published` recomputes every row of the three sheets of Öztürk et al.'s
(2023) results workbook from their 54 per-candidate prediction files and the gold labels
of the pickled items (:mod:`polybias.data.stereoset`), with
:func:`polybias.metrics.stereoset.stereoset_scores`. :func:`published_table` prints it
beside the published values. :func:`run_stereoset` scores a language model on one
language and writes its run record; :func:`compare_languages` compares the SS decisions
of several languages over their shared item ids (paired bootstrap difference, McNemar),
as section 12 does for CrowS-Pairs.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd

from polybias import paths
from polybias.data.minimal_pairs import sample_pairs
from polybias.data.stereoset import (
    LANGUAGES,
    RESULT_COLUMNS,
    TASKS,
    StereoSetError,
    load_predictions,
    load_published_results,
    load_stereoset,
    prediction_runs,
    run_language,
)
from polybias.engines import scoring
from polybias.measures import compute
from polybias.metrics import crows
from polybias.metrics.measure import Interval, MeasureResult
from polybias.metrics.stereoset import (
    AGGREGATES,
    INTERSENTENCE,
    INTRASENTENCE,
    WORD_SOURCES,
    StereoSetMetricError,
    _context_with_stop,
    _need,
    intrasentence_mlm_inputs,
    item_decisions,
    stereoset_template_word,
    workbook_row,
)
from polybias.models import load_registry
from polybias.results import records, report
from polybias.stats import CONFIDENCE_LEVEL, N_BOOTSTRAP
from polybias.studies import crows_languages
from polybias.studies.notebook_parameters import (
    BATCH_TOKENS,
    DEVICE,
    DTYPE,
    HUB,
    LANGUAGE_OVERRIDE,
    OUTPUT_DIR,
    TABLE_FILE,
    Notebook,
    Parameter,
    ParameterError,
    check_model_language,
    choice,
    free,
    integer,
    published_only,
)

RUN_ALIASES = {
    "gpt2__GPT2LM_c_en": "gpt2_GPT2LM_GPT2LM_c_en",
    "THUMT_mGPT__GPT2LM_c_en": "THUMT_mGPT_GPT2LM_GPT2LM_c_en",
    "THUMT_mGPT__GPT2LM_c_de": "THUMT_mGPT_GPT2LM_GPT2LM_c_de",
}
"""Workbook rows named otherwise than their prediction file (intersentence sheet: the
``c`` runs are scored with the intersentence part of the ``GPT2LM_GPT2LM_c`` files)."""

GERMAN_INTRASENTENCE_ROWS = {("overall", "t5-base_T5LM_ModelNSP_en")}
"""Workbook rows computed on the German file's 2,103 intrasentence items instead of the
English 2,106 (its ``Count`` is 4,226 = 2,103 + 2,123; every column matches that way and
none matches on the English items)."""

UNREPRODUCED = {
    ("intrasentence", "bert-base-multilingual-cased_BertLM_BertNextSentence_de"):
        "the published predictions file is not the one behind this row: its LM score is 16 of "
        "4,206 comparisons lower (65.29 vs 65.67) and SS 2 items lower; the intersentence row "
        "of the same file matches",
    ("overall", "bert-base-multilingual-cased_BertLM_BertNextSentence_de"):
        "follows from the intrasentence row (LM score again 16 comparisons apart, of 8,452)",
}
"""Rows that do not reproduce from the published files, with the reason."""


def _file_for(run: str, runs: set[str]) -> str:
    file = RUN_ALIASES.get(run, run)
    if file not in runs:
        raise StereoSetError(f"workbook row {run!r} has no prediction file "
                             f"(stereoset-pred-{file} is not registered)")
    return file


def scores_table(decisions: pd.DataFrame, by: str | None = None, **options) -> pd.DataFrame:
    """LMS, SS and ICAT of item decisions (:func:`~polybias.metrics.stereoset.item_decisions`),
    overall and per value of the column ``by`` where given: the table (``groups``) of the
    registered ``stereoset`` (:func:`polybias.measures.compute`), which reads each item's
    three scores; ``options`` (aggregate, n_bootstrap, seed, confidence) go to
    :func:`~polybias.metrics.stereoset.stereoset_scores`."""
    return compute("stereoset", scored=decisions, by=by, **options).groups


def recompute_published(book: pd.DataFrame | None = None) -> pd.DataFrame:
    """Every row of Öztürk et al.'s workbook, recomputed from the prediction files.

    Parameters
    ----------
    book : pandas.DataFrame, optional
        :func:`polybias.data.stereoset.load_published_results` (read from the registry
        by default).

    Returns
    -------
    pandas.DataFrame
        One row per workbook row: ``sheet``, ``run``, ``predictions`` (the file's run name),
        ``items`` (which items were scored), for every column ``c`` of
        :data:`polybias.data.stereoset.RESULT_COLUMNS` the published value ``c`` and the
        recomputed ``c (ours)``, ``equal`` (all nine equal at the workbook's two decimals)
        and ``note`` (the reason for rows in :data:`UNREPRODUCED`).
        Per-target columns group by the English target (``target_en``), as the reference
        code does with ``target_original`` for translations.
    """
    book = load_published_results() if book is None else book
    runs = set(prediction_runs())
    items: dict[str, pd.DataFrame] = {}
    decisions: dict[tuple[str, str, str], pd.DataFrame] = {}

    def items_of(language: str) -> pd.DataFrame:
        if language not in items:
            items[language] = load_stereoset(language)
        return items[language]

    def decided(file: str, language: str, task: str) -> pd.DataFrame:
        key = (file, language, task)
        if key not in decisions:
            frame = items_of(language)
            preds = load_predictions(file)
            decisions[key] = item_decisions(frame[frame.task == task],
                                            preds[preds.task == task])
        return decisions[key]

    rows = []
    for row in book.to_dict("records"):
        sheet, run = row["sheet"], row["run"]
        file = _file_for(run, runs)
        language = run_language(file)
        if sheet == "overall":
            intra_lang = "de" if (sheet, run) in GERMAN_INTRASENTENCE_ROWS else language
            intra = decided(file, language, "intrasentence")
            if intra_lang != language:  # keep the items of the other language's file
                intra = intra[intra.item_id.isin(set(items_of(intra_lang).item_id))]
            dec = pd.concat([intra, decided(file, language, "intersentence")], ignore_index=True)
            what = f"{language} intra- and intersentence" if intra_lang == language else \
                f"{language} intersentence + the {intra_lang} file's intrasentence items"
        else:
            dec = decided(file, language, sheet)
            what = f"{language} {sheet}"
        ours = workbook_row(scores_table(dec, n_bootstrap=0).iloc[0])
        out = {"sheet": sheet, "run": run, "predictions": file, "items": what}
        equal = True
        for col in RESULT_COLUMNS:
            pub, mine = float(row[col]), float(ours[col])
            out[col], out[f"{col} (ours)"] = pub, mine
            equal &= bool(np.round(mine, 2) == np.round(pub, 2))
        out["equal"] = equal
        out["note"] = UNREPRODUCED.get((sheet, run), "")
        rows.append(out)
    return pd.DataFrame(rows)


SHORT = {"Count": "n", "LM Score": "LMS", "SS Score": "SS", "ICAT Score": "ICAT",
         "Multi Class LM Score": "LMS/t", "Multi Class SS Score": "SS/t",
         "Multi Class SS Score Stdev": "sd SS/t", "Macro ICAT Score": "mean ICAT/t",
         "Micro ICAT Score": "ICAT/t"}
"""Short headers of the printed table (``/t``: per target, "multi class" in the workbook)."""


def published_table(recomputed: pd.DataFrame, sheet: str) -> str:
    """One sheet of :func:`recompute_published` as a Markdown table: each cell the
    published value, and ``≠ ours`` after it where the recomputed value differs at two
    decimals; ``equal`` says whether all nine agree."""
    part = recomputed[recomputed.sheet == sheet]
    cells = []
    for row in part.to_dict("records"):
        rec = {"run": row["run"]}
        for col, short in SHORT.items():
            pub, mine = row[col], row[f"{col} (ours)"]
            fmt = "{:.0f}" if col == "Count" else "{:.2f}"
            text = fmt.format(pub)
            if fmt.format(mine) != text:
                text += " ≠ " + fmt.format(mine)
            rec[short] = text
        rec["equal"] = "yes" if row["equal"] else "no"
        cells.append(rec)
    return report.markdown_table(pd.DataFrame(cells))


def match_summary(recomputed: pd.DataFrame) -> pd.DataFrame:
    """Rows and equal rows per sheet, plus the rows that differ with their reason."""
    per = recomputed.groupby("sheet", sort=False).agg(rows=("equal", "size"), equal=("equal", "sum"))
    return per.reset_index()


# ------------------------------------------------------------------ across languages

def compare_languages(decisions: dict[str, pd.DataFrame], n_bootstrap: int = N_BOOTSTRAP, seed: int = 0,
                      confidence: float = CONFIDENCE_LEVEL) -> crows.LanguageComparison:
    """SS per language and paired differences over shared item ids.

    Parameters
    ----------
    decisions : language -> :func:`polybias.metrics.stereoset.item_decisions` of one model
        (or run) on that language; item ids are shared across languages (an item id is
        made unique per task).
    n_bootstrap, seed, confidence : percentile bootstrap over items (seeded).

    Returns
    -------
    :class:`polybias.metrics.crows.LanguageComparison`
        ``per_language``: ``n``, ``stereotyped`` (items with s(stereotype) > s(anti)),
        ``ties``, ``score`` (micro SS), its interval and ``binom_p``; ``paired``: per pair
        of languages over the items both have, the SS difference with a paired bootstrap
        interval and the exact McNemar test of the discordant items (the same computation
        as CrowS-Pairs across languages, :func:`polybias.metrics.crows.compare_languages`,
        with s(stereotype) and s(anti-stereotype) as the pair's two sentences).
    """
    scored = {}
    for language, dec in decisions.items():
        missing = [c for c in ("item_id", "task", "score_stereotype", "score_anti", "bias_type")
                   if c not in dec.columns]
        if missing:
            raise StereoSetMetricError(f"{language}: decisions lack {', '.join(missing)}")
        scored[language] = pd.DataFrame({
            "pair_id": dec["task"].astype(str) + ":" + dec["item_id"].astype(str),
            "score_more": dec["score_stereotype"].to_numpy(float),
            "score_less": dec["score_anti"].to_numpy(float),
            "bias_type": dec["bias_type"].to_numpy()})
    return crows.compare_languages(scored, n_bootstrap=n_bootstrap, seed=seed,
                                           confidence=confidence)


def published_decisions(model: str, languages: list[str] | None = None,
                        tasks: tuple[str, ...] = TASKS) -> dict[str, pd.DataFrame]:
    """Item decisions of a published model in each language it was run on.

    ``model`` is the run name without its language (e.g.
    ``"bert-base-multilingual-cased_BertLM_BertNextSentence"``); every registered run
    ``<model>_<lang>`` is read (or only ``languages``).
    """
    runs = [r for r in prediction_runs() if r.rsplit("_", 1)[0] == model]
    if not runs:
        raise StereoSetError(f"no published run of {model!r}")
    out = {}
    for run in sorted(runs, key=lambda r: LANGUAGES.index(run_language(r))):
        language = run_language(run)
        if languages and language not in languages:
            continue
        items = load_stereoset(language)
        preds = load_predictions(run)
        parts = [item_decisions(items[items.task == t], preds[preds.task == t]) for t in tasks]
        out[language] = pd.concat(parts, ignore_index=True)
    return out


# ------------------------------------------------------------------ a model on one language

def run_stereoset(lm, model: str, language: str, output_dir: str | Path, *, tasks=TASKS,
                  limit: int = 0, intrasentence: str = "stereoset", intersentence: str = "",
                  nsp=None, aggregate: str = "per-target", n_bootstrap: int = N_BOOTSTRAP,
                  seed: int = 0, progress: bool = False, model_revision: str | None = None,
                  data_sha256: dict | None = None, max_items: int = 0
                  ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Score ``lm`` on StereoSet in ``language`` and write one run record.

    ``limit`` > 0 keeps the first ``limit`` items of each task (a quick run); ``max_items``
    > 0 a sample of at most that many items of each task, stratified by bias type and
    drawn with ``seed`` (:func:`polybias.data.minimal_pairs.sample_pairs`). The scoring
    options are those of :func:`candidate_scores`.

    Returns
    -------
    (decisions, scores)
        :func:`~polybias.metrics.stereoset.item_decisions` and their scores per task and
        overall (:func:`scores_table`, by bias type).
    """
    items = load_stereoset(language)
    items = items[items.task.isin(tasks)]
    if limit:
        keep = items.groupby("task", sort=False)["item_id"].apply(lambda s: list(pd.unique(s))[:limit])
        items = items[items.apply(lambda r: r.item_id in set(keep[r.task]), axis=1)]
    if max_items:
        items = sample_items(items, max_items, seed)
    cand = candidate_scores(lm, items, intrasentence=intrasentence,
                                   intersentence=intersentence or None, nsp=nsp, progress=progress)
    dec = item_decisions(items, cand)
    tables = []
    for task in [*tasks, "overall"] if len(tasks) > 1 else list(tasks):
        part = dec if task == "overall" else dec[dec.task == task]
        t = scores_table(part, by="bias_type", aggregate=aggregate, n_bootstrap=n_bootstrap, seed=seed)
        tables.append(t.assign(task=task))
    scores = pd.concat(tables, ignore_index=True)
    record = stereoset_record(
        scores.replace({np.nan: None}).to_dict("records"), model=model, language=language,
        parameters={"tasks": list(tasks), "limit": limit, "intrasentence": intrasentence,
                    "intersentence": intersentence, "aggregate": aggregate,
                    "n_bootstrap": n_bootstrap, "seed": seed,
                    **({"max_items": max_items} if max_items else {})},
        model_revision=model_revision, data_sha256=data_sha256 or {})
    records.write_record(record, paths.output_path(output_dir))
    return dec, scores


#: The measures of a StereoSet record, each with its column of :func:`scores_table` (its
#: interval in ``<column>_low`` and ``<column>_high``).
SCORE_MEASURES = (("stereoset", "ss"), ("stereoset-lms", "lms"), ("stereoset-icat", "icat"))


def stereoset_record(scores: list[dict], *, model: str, language: str, parameters: dict,
                     **fields) -> records.Record:
    """The run record of one StereoSet run: for every row of :func:`scores_table` (a task
    and a group), SS with its bootstrap interval and binomial p-value, LMS and ICAT with
    theirs, under the subset ``<task>; <group>``; the first row's SS is the record's value,
    the others its groups, in that order; a row's other columns are its SS's ``extra``. One
    :func:`polybias.results.records.measure_record`."""
    entries = []
    for row in scores:
        subset = f"{row.get('task', '')}; {row.get('group', 'all')}"
        used = {"task", "group", "n", "binom_p"} | {f"{c}{end}" for _, c in SCORE_MEASURES
                                                    for end in ("", "_low", "_high")}
        for measure, column in SCORE_MEASURES:
            low, p = row.get(f"{column}_low"), row.get("binom_p") if measure == "stereoset" else None
            interval = None if low is None else Interval(float(low), float(row[f"{column}_high"]),
                                                         CONFIDENCE_LEVEL, "bootstrap-percentile")
            extra = {k: v for k, v in row.items() if k not in used} if measure == "stereoset" else {}
            value = row.get(column)
            result = MeasureResult(measure, math.nan if value is None else float(value), interval,
                                   None if p is None else float(p), "binomial-exact" if p is not None else "none",
                                   int(row.get("n") or 0), extra=extra)
            entries.append((subset, result))
    (subset, first), rest = entries[0], entries[1:]
    return records.measure_record(first, model=model, language=language, test="stereoset",
                                  parameters=parameters, subset=subset,
                                  groups=[records.measure_group(s, r) for s, r in rest], **fields)


def sample_items(items: pd.DataFrame, max_items: int, seed: int = 0) -> pd.DataFrame:
    """The rows of a sample of at most ``max_items`` items of each task, stratified by bias
    type and drawn with ``seed`` (:func:`polybias.data.minimal_pairs.sample_pairs` over the
    items' ids), every candidate of a drawn item kept."""
    keep = set()
    for _task, part in items.groupby("task", sort=False):
        unique = part.drop_duplicates("item_id")[["item_id", "bias_type"]]
        drawn = sample_pairs(unique.rename(columns={"item_id": "pair_id"}), max_items, seed)
        keep |= set(drawn["pair_id"])
    return items[items["item_id"].isin(keep)]


def sample_caption(max_items: int, seed: int) -> str:
    """The line the score tables state a sample of items with (:func:`sample_items`; empty
    when every item was scored).

    >>> sample_caption(40, 0)
    'Items: a sample of at most 40 items of each task, stratified by bias type (max_items = 40, seed 0); n counts them.'
    """
    if not max_items:
        return ""
    return (f"Items: a sample of at most {max_items} items of each task, stratified by bias "
            f"type (max_items = {max_items}, seed {seed}); n counts them.")


def language_scores(decisions: dict[str, pd.DataFrame], aggregate: str = "per-target",
                    n_bootstrap: int = N_BOOTSTRAP, seed: int = 0) -> pd.DataFrame:
    """LMS, SS and ICAT with bootstrap intervals and the binomial test, one row per language
    (and per task and both tasks together): ``language``, ``task``, ``n``, ``lms``, ``ss``,
    ``ss_low``, ``ss_high``, ``icat``, ``binom_p`` (:func:`scores_table` of ``aggregate``)."""
    rows = []
    for language, dec in decisions.items():
        tasks = list(pd.unique(dec["task"]))
        for task in tasks + (["both"] if len(tasks) > 1 else []):
            part = dec if task == "both" else dec[dec.task == task]
            row = scores_table(part, aggregate=aggregate, n_bootstrap=n_bootstrap, seed=seed).iloc[0]
            rows.append({"language": language, "task": task, "n": int(row["n"]), "lms": row["lms"],
                         "ss": row["ss"], "ss_low": row["ss_low"], "ss_high": row["ss_high"],
                         "icat": row["icat"], "binom_p": row["binom_p"]})
    return pd.DataFrame(rows)


def comparison_record(comparison: crows.LanguageComparison, model: str, languages: list[str],
                      parameters: dict, output_dir: str | Path) -> Path:
    """Write the cross-language comparison as one ``stereoset-languages`` run record."""
    rows = [frame.astype(object).where(frame.notna(), None).to_dict("records")
            for frame in (comparison.per_language, comparison.paired)]
    record = languages_record(*rows, model=model, language="+".join(languages), parameters=parameters)
    return records.write_record(record, paths.output_path(output_dir))


def languages_record(per_language: list[dict], paired: list[dict], *, model: str, language: str,
                     parameters: dict, **fields) -> records.Record:
    """The run record of StereoSet's comparison of languages over shared items (metric
    ``stereoset-languages``): each language's SS under the subset ``shared items`` and the
    paired differences (``stereoset-difference``), as
    :func:`polybias.studies.crows_languages.comparison_record` writes a CrowS-Pairs one."""
    return crows_languages.comparison_record(
        per_language, paired, model=model, language=language, test="stereoset", parameters=parameters,
        metric="stereoset-languages", measure="stereoset", difference="stereoset-difference",
        subset_of=lambda row: "shared items", **fields)


def bias_type_scores(decisions: dict[str, pd.DataFrame], aggregate: str = "per-target",
                     n_bootstrap: int = N_BOOTSTRAP, seed: int = 0) -> pd.DataFrame:
    """LMS, SS (bootstrap interval, binomial test) and ICAT per language and bias type, over
    all the tasks of each language's decisions: ``language``, ``bias_type``, ``n``,
    ``n_targets``, ``lms``, ``ss``, ``ss_low``, ``ss_high``, ``icat``, ``binom_p``."""
    rows = []
    for language, dec in decisions.items():
        table = scores_table(dec, by="bias_type", aggregate=aggregate, n_bootstrap=n_bootstrap,
                             seed=seed)
        table = table[table.group != "all"].sort_values("group")
        for row in table.to_dict("records"):
            rows.append({"language": language, "bias_type": row["group"], "n": row["n"],
                         "n_targets": row["n_targets"], "lms": row["lms"], "ss": row["ss"],
                         "ss_low": row["ss_low"], "ss_high": row["ss_high"], "icat": row["icat"],
                         "binom_p": row["binom_p"]})
    return pd.DataFrame(rows)


def _causal_bos(lm) -> str:
    """``"first-token"`` (the first token given the start token alone, as StereoSet) for
    tokenizers that add no BOS of their own, else ``"prepend"`` (their own BOS)."""
    enc = lm.tokenizer("a", add_special_tokens=True, return_special_tokens_mask=True)
    return "prepend" if enc["special_tokens_mask"][:1] == [1] else "first-token"


def _mean_logprob(scores, start: list[int] | None = None) -> np.ndarray:
    """Mean natural-log probability of the scored tokens of each text, from token ``start[i]``."""
    out = np.empty(len(scores))
    for i, s in enumerate(scores):
        lp = s.logprob[(start[i] if start else 0):]
        lp = lp[~np.isnan(lp)]
        if not len(lp):
            raise StereoSetMetricError(f"no scored token in {s.text!r}")
        out[i] = lp.mean()
    return out


def _intrasentence_causal(lm, intra: pd.DataFrame, progress: bool = False) -> list:
    """Token log-probabilities of every intrasentence candidate of a causal LM, in the order
    of ``intra``. With the model's own BOS the candidates of one context are scored as one
    group, their shared beginning (the context up to the blank) computed once
    (:func:`polybias.engines.scoring.causal_group_token_logprobs`, the same values); a
    tokenizer without BOS takes StereoSet's first-token conditioning, text by text."""
    sentences = list(intra["sentence"])
    bos = _causal_bos(lm)
    if bos != "prepend":
        return scoring.causal_token_logprobs(lm, sentences, bos=bos, progress=progress)
    members = list(intra.groupby("context", sort=False).indices.values())
    scored = scoring.causal_group_token_logprobs(lm, [[sentences[i] for i in m] for m in members],
                                                 progress=progress)
    out: list = [None] * len(sentences)
    for m, group in zip(members, scored, strict=True):
        for i, scores in zip(m, group, strict=True):
            out[i] = scores
    return out


def candidate_scores(lm, items: pd.DataFrame, intrasentence: str = "stereoset",
                     intersentence: str | None = None, nsp=None, word: str = "item",
                     progress: bool = False) -> pd.DataFrame:
    """Score every candidate of ``items`` with a language model (higher = preferred).

    Parameters
    ----------
    lm : :class:`polybias.engines.scoring.LanguageModel`, masked or causal.
    items : candidate frame (:mod:`polybias.data.stereoset`): ``task``, ``candidate_id``,
        ``context``, ``sentence`` and, for intrasentence items, ``word``.
    intrasentence : ``"stereoset"`` — masked LMs: mean over the word's pieces of
        P(piece | context with the earlier pieces and one mask in the blank); causal LMs:
        the geometric mean of the sentence's token probabilities,
        exp(mean_i ln P(t_i | t_<i)), the first token given the start token alone
        (StereoSet ``eval_generative_models.py``, bias-bench, Öztürk et al.).
    intersentence : ``"conditional"`` (default for causal LMs; Öztürk et al.'s case ``d``):
        exp(mean ln P(t | context, earlier tokens)) over the candidate sentence's tokens,
        the input being ``context + " " + sentence`` (a full stop added to a context
        without one) and the candidate's tokens those after the context's own;
        ``"stereoset"`` (StereoSet's ``eval_generative_models.py``): the mean log2
        probability of the sentence alone divided by that of the context (a ratio of two
        negative numbers, as published); ``"nsp"`` (default when ``nsp`` is given):
        P(is next | context, sentence) of a next-sentence head. None: the default.
    nsp : (model, tokenizer) of a next-sentence-prediction head (e.g.
        ``BertForNextSentencePrediction``), for ``intersentence="nsp"``.
    word : the word a masked LM predicts in the blank: ``"item"`` (default; the items'
        ``word`` column, as Öztürk et al.) or ``"stereoset"`` (read from the sentence,
        :func:`polybias.metrics.stereoset.stereoset_template_word`, as StereoSet and bias-bench; 9 English
        candidates differ, e.g. in case).

    Returns
    -------
    pandas.DataFrame with ``task``, ``candidate_id``, ``score``, in the order of ``items``.
    """
    if intrasentence not in INTRASENTENCE:
        raise StereoSetMetricError(f"unknown intrasentence scoring {intrasentence!r}; "
                                   f"choose {', '.join(INTRASENTENCE)}")
    if word not in WORD_SOURCES:
        raise StereoSetMetricError(f"unknown word source {word!r}; choose {', '.join(WORD_SOURCES)}")
    if intersentence is None:
        intersentence = "nsp" if nsp is not None else "conditional"
    if intersentence not in INTERSENTENCE:
        raise StereoSetMetricError(f"unknown intersentence scoring {intersentence!r}; "
                                   f"choose {', '.join(INTERSENTENCE)}")
    _need(items, ("task", "candidate_id", "context", "sentence"), "items")
    unknown = set(items["task"]) - {"intrasentence", "intersentence"}
    if unknown:
        raise StereoSetMetricError(f"unknown task(s) {sorted(unknown)}")
    out = pd.Series(np.nan, index=items.index)
    intra = items[items["task"] == "intrasentence"]
    inter = items[items["task"] == "intersentence"]
    if len(intra):
        if lm.kind == "mlm":
            if word == "item":
                _need(intra, ("word",), "intrasentence items")
                words = list(intra["word"])
            else:
                words = [stereoset_template_word(c, s) for c, s in zip(intra["context"], intra["sentence"],
                                                                       strict=True)]
            texts, gold, owner = [], [], []
            for idx, context, w in zip(intra.index, intra["context"], words, strict=True):
                for text, piece in intrasentence_mlm_inputs(lm.tokenizer, context, w):
                    texts.append(text)
                    gold.append(piece)
                    owner.append(idx)
            probs = np.exp(scoring.mask_fill_logprobs(lm, texts, gold, progress=progress))
            out.loc[intra.index] = pd.Series(probs).groupby(np.asarray(owner)).mean().loc[intra.index].to_numpy()
        else:
            out.loc[intra.index] = np.exp(_mean_logprob(_intrasentence_causal(lm, intra, progress)))
    if len(inter):
        if intersentence == "nsp":
            if nsp is None:
                raise StereoSetMetricError("intersentence='nsp' needs nsp=(model, tokenizer)")
            model, tok = nsp
            out.loc[inter.index] = scoring.next_sentence_probabilities(
                model, tok, list(zip(inter["context"], inter["sentence"], strict=True)),
                device=str(getattr(model, "device", "cpu")))
        elif lm.kind != "causal":
            raise StereoSetMetricError(f"intersentence={intersentence!r} scores causal LMs; "
                                       f"{lm.name} is a {lm.kind} LM (give nsp=(model, tokenizer))")
        else:
            bos = _causal_bos(lm)
            contexts = [_context_with_stop(c) for c in inter["context"]]
            full = [f"{c} {s}" for c, s in zip(contexts, inter["sentence"], strict=True)]
            full_lp = scoring.causal_token_logprobs(lm, full, bos=bos, progress=progress)
            # the context's own tokens (after the model's text normaliser), as the full text begins
            n_context = [len(e.ids) for e in scoring.encode(lm, contexts)]
            if intersentence == "conditional":
                out.loc[inter.index] = np.exp(_mean_logprob(full_lp, start=n_context))
            else:  # StereoSet's ratio of mean log2 probabilities
                context_lp = np.array([np.nanmean(s.logprob[:n]) for s, n in zip(full_lp, n_context, strict=True)])
                alone = _mean_logprob(scoring.causal_token_logprobs(lm, list(inter["sentence"]), bos=bos,
                                                                    progress=progress))
                out.loc[inter.index] = (alone / np.log(2)) / (context_lp / np.log(2))
    return pd.DataFrame({"task": items["task"].to_numpy(), "candidate_id": items["candidate_id"].to_numpy(),
                         "score": out.to_numpy(float)})


# ------------------------------------------------------------------ the notebook's parameters

def _check_14_stereoset(*, model, language, languages, language_override, published_model,
                        revision, device, dtype, batch_tokens):
    published_only(model, revision, device, dtype, batch_tokens)
    if model == "published":
        if not published_model:
            raise ParameterError("published_model must name a published run (without its language)")
        return
    registry = load_registry()
    for lang in languages or [language]:  # before the model loads
        check_model_language(model, lang, language_override, registry)


#: The parameters of notebook 14_stereoset: their help, allowed values and checks.
NOTEBOOK_PARAMETERS: Notebook = Notebook({
    "model": free("published: Öztürk et al.'s prediction files; else a registered language "
                  "model (configs/models.yaml), " + HUB),
    "revision": free("hub branch, tag or 40-hex commit; empty: the registered revision, else "
                     "main (model not published)"),
    "device": DEVICE,
    "dtype": DTYPE,
    "batch_tokens": BATCH_TOKENS,
    "language": choice("language a scored model runs on: {values} (model not published)",
                       LANGUAGES),
    "languages": Parameter("languages to compare over shared item ids, among {values}; empty: "
                           "every language of the published model's runs (published) or only "
                           "`language`", values=LANGUAGES, each=True,
                           empty=True),
    "language_override": LANGUAGE_OVERRIDE,
    "published_model": free("published run, without its language, compared across "
                            "languages"),
    "tasks": Parameter("StereoSet tasks to score, among {values} (a masked LM scores "
                       "intersentence items only with a next-sentence head)",
                       values=TASKS, each=True),
    "intersentence": choice("causal LMs: {values}; empty: conditional",
                            tuple(i for i in INTERSENTENCE if i != "nsp"),
                            empty=True),
    "aggregate": choice("{values} (per-target: Nadeem et al.; micro: pooled over items)",
                        AGGREGATES),
    "limit": integer("score only the first `limit` items of each task; 0: all"),
    "max_items": integer("score a sample of at most this many items of each task, "
                         "stratified by bias type and drawn with `seed` ({range}; 0: all)"),
    "n_bootstrap": integer("bootstrap resamples over items for the intervals ({range}; 0: "
                           "none)", default="polybias.stats.N_BOOTSTRAP"),
    "seed": integer("seed of the item sample and the bootstrap ({range})"),
    "output_dir": OUTPUT_DIR,
    "table_file": free(TABLE_FILE.format("stereoset_published")),
}, _check_14_stereoset)
