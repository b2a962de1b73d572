"""StereoSet in five languages: items, published predictions and results, read safely.

StereoSet (Nadeem, Bethke & Reddy 2021) asks a language model to choose between three
candidates for one context: a stereotypical, an anti-stereotypical and an unrelated
(meaningless) one. The **intrasentence** task fills the ``BLANK`` of a sentence with a
word; the **intersentence** task continues a context sentence with a sentence.
Öztürk et al. (2023) machine-translated the dev set into German, French, Spanish and
Turkish and published it as pickled pandas DataFrames, with per-candidate predictions of
54 model runs and their results workbook (registered in ``data/sources.yaml`` as
``stereoset-<task>-<lang>``, ``stereoset-pred-<run>`` and ``stereoset-multi-results``).

**Safety.** A pickle can run any code when it is read. The DataFrame files are therefore
checked against their sha256 (:func:`polybias.data.sources.fetch`) and then read by
:func:`restricted_unpickle`, which resolves only the few pandas and numpy globals a
DataFrame of strings and lists needs (:data:`ALLOWED_GLOBALS`) and refuses any other
global *before* it is imported or called, so nothing a crafted file asks for is executed.
``pickle.load`` and ``pandas.read_pickle`` are never used on them.

Frames (plain data):

:func:`load_stereoset` — one row per **candidate** (:data:`ITEM_COLUMNS`): ``item_id``
(shared across languages), ``task``, ``language``, ``bias_type`` (gender, profession,
race, religion), ``target`` (in the item's language), ``target_en`` (the English target,
the ``target_original`` column of the translations), ``context`` (with ``BLANK`` for
intrasentence items), ``candidate_id`` (shared across languages), ``gold_label``
(``stereotype``, ``anti-stereotype`` or ``unrelated``), ``sentence`` (the filled-in
sentence, or the continuation) and ``word`` (the word in the blank; empty for
intersentence items).

:func:`load_predictions` — one row per scored candidate of a published run:
``task``, ``candidate_id``, ``score``.

:func:`load_published_results` — the three sheets of the workbook as one frame.

Validation raises :class:`StereoSetError` naming the file and the item: an item without
exactly one candidate of each gold label, an empty sentence, a duplicate candidate id, a
missing column, or a pickle that names a global outside the allowlist.

References
----------
Nadeem, Bethke & Reddy (2021). StereoSet: measuring stereotypical bias in pretrained
language models. ACL.
Öztürk, Dogan, Altun & Ercan... (2023). How different is stereotypical bias across
languages? ECML-PKDD workshop on bias and fairness in AI (arXiv:2307.07331).
Blodgett, Lopez, Olteanu, Sim & Wallach (2021). Stereotyping Norwegian salmon: an
inventory of pitfalls in fairness benchmark datasets. ACL.
"""

from __future__ import annotations

import importlib
import io
import json
import pickle
from pathlib import Path

import numpy as np
import pandas as pd

from polybias.data import sources
from polybias.data.dataset_cards import card_rows, read_card

TASKS = ("intrasentence", "intersentence")
LANGUAGES = ("en", "de", "fr", "es", "tr")
GOLD_LABELS = ("stereotype", "anti-stereotype", "unrelated")
BIAS_TYPES = ("gender", "profession", "race", "religion")
ITEM_COLUMNS = ("item_id", "task", "language", "bias_type", "target", "target_en", "context",
                "candidate_id", "gold_label", "sentence", "word")
RESULT_COLUMNS = ("Count", "LM Score", "SS Score", "ICAT Score", "Multi Class LM Score",
                  "Multi Class SS Score", "Multi Class SS Score Stdev", "Macro ICAT Score",
                  "Micro ICAT Score")
"""The columns of each sheet of the published workbook, after ``model_name``."""
SHEETS = ("intrasentence", "intersentence", "overall")

ALLOWED_GLOBALS: dict[tuple[str, str], tuple[str, str]] = {
    ("pandas.core.frame", "DataFrame"): ("pandas.core.frame", "DataFrame"),
    ("pandas.core.internals.managers", "BlockManager"): ("pandas.core.internals.managers", "BlockManager"),
    ("pandas._libs.internals", "_unpickle_block"): ("pandas._libs.internals", "_unpickle_block"),
    ("pandas.core.indexes.base", "_new_Index"): ("pandas.core.indexes.base", "_new_Index"),
    ("pandas.core.indexes.base", "Index"): ("pandas.core.indexes.base", "Index"),
    ("pandas.core.indexes.range", "RangeIndex"): ("pandas.core.indexes.range", "RangeIndex"),
    # pandas < 2 wrote integer indexes as Int64Index; pandas 2 reads them as Index
    ("pandas.core.indexes.numeric", "Int64Index"): ("pandas.core.indexes.base", "Index"),
    ("numpy", "ndarray"): ("numpy", "ndarray"),
    ("numpy", "dtype"): ("numpy", "dtype"),
    # numpy < 2 named its core ``numpy.core``; numpy 2 calls it ``numpy._core``
    ("numpy.core.multiarray", "_reconstruct"): ("numpy._core.multiarray", "_reconstruct"),
    ("numpy._core.multiarray", "_reconstruct"): ("numpy._core.multiarray", "_reconstruct"),
    ("numpy.core.numeric", "_frombuffer"): ("numpy._core.numeric", "_frombuffer"),
    ("numpy._core.numeric", "_frombuffer"): ("numpy._core.numeric", "_frombuffer"),
    ("builtins", "slice"): ("builtins", "slice"),
    # the names pandas 3 writes for the same classes (frames the project pickles itself)
    ("pandas", "DataFrame"): ("pandas.core.frame", "DataFrame"),
    ("pandas", "Index"): ("pandas.core.indexes.base", "Index"),
    ("pandas", "RangeIndex"): ("pandas.core.indexes.range", "RangeIndex"),
    ("pandas", "StringDtype"): ("pandas", "StringDtype"),
    ("pandas.arrays", "StringArray"): ("pandas.arrays", "StringArray"),
    ("pandas._libs.arrays", "__pyx_unpickle_NDArrayBacked"):
        ("pandas._libs.arrays", "__pyx_unpickle_NDArrayBacked"),
    ("__builtin__", "slice"): ("builtins", "slice"),
    ("_codecs", "encode"): ("_codecs", "encode"),  # protocol 2 writes bytes this way
}
"""(module, name) a DataFrame pickle may name -> where it is resolved. Nothing else is."""


class StereoSetError(ValueError):
    """A StereoSet file that is unsafe, malformed or inconsistent."""


class UnsafePickleError(StereoSetError):
    """A pickle names a global outside :data:`ALLOWED_GLOBALS`."""


class _RestrictedUnpickler(pickle.Unpickler):
    def __init__(self, file, where: str):
        super().__init__(file)
        self._where = where

    def find_class(self, module: str, name: str):
        target = ALLOWED_GLOBALS.get((module, name))
        if target is None:
            raise UnsafePickleError(
                f"{self._where}: the pickle names the global {module}.{name}, which is not one of "
                "the pandas/numpy classes a DataFrame needs; refused (nothing was imported or called)")
        mod, attr = target
        return getattr(importlib.import_module(mod), attr)

    def persistent_load(self, pid):
        raise UnsafePickleError(f"{self._where}: the pickle asks for a persistent object; refused")


def restricted_unpickle(data: bytes, where: str = "pickle") -> pd.DataFrame:
    """Read a pickled pandas DataFrame, resolving only :data:`ALLOWED_GLOBALS`.

    Parameters
    ----------
    data : bytes
        The pickle.
    where : str
        The file's name, for error messages.

    Returns
    -------
    pandas.DataFrame

    Raises
    ------
    UnsafePickleError
        The pickle names any other global (e.g. ``os.system``, ``builtins.open``) or a
        persistent id: raised when the global is looked up, before it is imported, so no
        code of the file runs.
    StereoSetError
        The pickle is truncated or corrupt, or holds something other than a DataFrame.
    """
    try:
        obj = _RestrictedUnpickler(io.BytesIO(data), where).load()
    except UnsafePickleError:
        raise
    except Exception as exc:  # truncated/corrupt streams raise many kinds of errors
        raise StereoSetError(f"{where}: not a readable DataFrame pickle ({type(exc).__name__}: "
                             f"{str(exc)[:120]})") from None
    if not isinstance(obj, pd.DataFrame):
        raise StereoSetError(f"{where}: the pickle holds a {type(obj).__name__}, not a DataFrame")
    return obj


def _check(value: str, allowed: tuple[str, ...], what: str) -> str:
    if value not in allowed:
        raise StereoSetError(f"unknown {what} {value!r}; known: {', '.join(allowed)}")
    return value


def read_items_frame(raw: pd.DataFrame, task: str, language: str, where: str) -> pd.DataFrame:
    """The long candidate frame (:data:`ITEM_COLUMNS`) from one published wide DataFrame.

    ``raw`` has one row per item with ``id``, ``target``, ``bias_type``, ``context`` and,
    for each candidate k = 1..3, ``ck_id``, ``ck_sentence``, ``ck_gold_label`` (and
    ``ck_word`` for intrasentence items); translations carry ``target_original``.

    Raises
    ------
    StereoSetError
        Naming ``where`` and the item: a missing column, an item without exactly one
        candidate per gold label, an empty id or sentence, a duplicate item or candidate id.
    """
    _check(task, TASKS, "task")
    need = ["id", "target", "bias_type", "context"]
    for k in (1, 2, 3):
        need += [f"c{k}_id", f"c{k}_sentence", f"c{k}_gold_label"]
        if task == "intrasentence":
            need.append(f"c{k}_word")
    missing = [c for c in need if c not in raw.columns]
    if missing:
        raise StereoSetError(f"{where}: missing column(s) {', '.join(missing)}")
    if not raw["id"].is_unique:
        dup = raw.loc[raw["id"].duplicated(), "id"].iloc[0]
        raise StereoSetError(f"{where}: item id {dup!r} occurs more than once")
    target_en = raw["target_original"] if "target_original" in raw.columns else raw["target"]
    rows = []
    for i, item in enumerate(raw.itertuples(index=False)):
        rec = dict(zip(raw.columns, item, strict=True))
        labels = [rec[f"c{k}_gold_label"] for k in (1, 2, 3)]
        if sorted(map(str, labels)) != sorted(GOLD_LABELS):
            raise StereoSetError(f"{where}: item {rec['id']!r} (row {i}) has the candidate labels "
                                 f"{labels}; expected one each of {', '.join(GOLD_LABELS)}")
        if rec["bias_type"] not in BIAS_TYPES:
            raise StereoSetError(f"{where}: item {rec['id']!r} has the unknown bias type "
                                 f"{rec['bias_type']!r}")
        for k in (1, 2, 3):
            cid, sent = rec[f"c{k}_id"], rec[f"c{k}_sentence"]
            if not isinstance(cid, str) or not cid:
                raise StereoSetError(f"{where}: item {rec['id']!r} candidate {k} has no id")
            if not isinstance(sent, str) or not sent.strip():
                raise StereoSetError(f"{where}: item {rec['id']!r} candidate {cid!r} has an empty "
                                     "sentence")
            word = rec.get(f"c{k}_word", "") if task == "intrasentence" else ""
            rows.append((str(rec["id"]), task, language, rec["bias_type"], str(rec["target"]),
                         str(target_en.iloc[i]), str(rec["context"]), cid,
                         rec[f"c{k}_gold_label"], sent, "" if word is None else str(word)))
    out = pd.DataFrame(rows, columns=list(ITEM_COLUMNS))
    if not out["candidate_id"].is_unique:
        dup = out.loc[out["candidate_id"].duplicated(), "candidate_id"].iloc[0]
        raise StereoSetError(f"{where}: candidate id {dup!r} occurs more than once")
    out.attrs["source"] = where
    return out


def load_stereoset(language: str, task: str | None = None) -> pd.DataFrame:
    """StereoSet items of one language as a long candidate frame (:data:`ITEM_COLUMNS`).

    Parameters
    ----------
    language : one of :data:`LANGUAGES`.
    task : ``"intrasentence"``, ``"intersentence"`` or None (both, intrasentence first).

    Returns
    -------
    pandas.DataFrame
        Three rows per item, in the order of the published file. ``attrs["source"]`` names
        the files read.
    """
    _check(language, LANGUAGES, "StereoSet language")
    tasks = TASKS if task is None else (_check(task, TASKS, "task"),)
    frames = []
    for t in tasks:
        name = f"stereoset-{t}-{language}"
        path = sources.fetch(name)
        raw = restricted_unpickle(Path(path).read_bytes(), where=Path(path).name)
        frames.append(read_items_frame(raw, t, language, Path(path).name))
    out = pd.concat(frames, ignore_index=True)
    out.attrs["source"] = ", ".join(f.attrs["source"] for f in frames)
    return out


# ------------------------------------------------------------------ published runs

def prediction_runs() -> list[str]:
    """The published model runs of Öztürk et al. (2023), i.e. the ``stereoset-pred-<run>``
    sources, sorted. A run is ``<model>_<intrasentence model>_<intersentence model>_<lang>``."""
    return sorted(n[len("stereoset-pred-"):] for n in sources.load_registry()
                  if n.startswith("stereoset-pred-"))


def run_language(run: str) -> str:
    """The language a run was scored on: the last ``_`` field of its name."""
    language = run.rsplit("_", 1)[-1]
    return _check(language, LANGUAGES, f"language of run {run!r}")


def read_predictions(data: dict, where: str) -> pd.DataFrame:
    """Predictions (``{task: [{"id": ..., "score": ...}, ...]}``) as a frame.

    Columns ``task``, ``candidate_id``, ``score`` (float). Raises :class:`StereoSetError` on
    an unknown task, an entry without id or score, a non-finite score or a duplicate id.
    """
    if not isinstance(data, dict):
        raise StereoSetError(f"{where}: expected a mapping task -> list of predictions")
    rows = []
    for task, entries in data.items():
        _check(task, TASKS, f"task in {where}")
        if not isinstance(entries, list):
            raise StereoSetError(f"{where}: {task} is not a list")
        for j, entry in enumerate(entries):
            if not isinstance(entry, dict) or "id" not in entry or "score" not in entry:
                raise StereoSetError(f"{where}: {task} entry {j} lacks an id or a score")
            score = entry["score"]
            if isinstance(score, bool) or not isinstance(score, int | float) or not np.isfinite(score):
                raise StereoSetError(f"{where}: {task} entry {j} ({entry['id']!r}) has the score "
                                     f"{score!r}, not a finite number")
            rows.append((task, str(entry["id"]), float(score)))
    out = pd.DataFrame(rows, columns=["task", "candidate_id", "score"])
    dup = out.duplicated(["task", "candidate_id"])
    if dup.any():
        raise StereoSetError(f"{where}: candidate {out.loc[dup, 'candidate_id'].iloc[0]!r} is scored "
                             "twice")
    out.attrs["source"] = where
    return out


def load_predictions(run: str, registry: dict | None = None) -> pd.DataFrame:
    """The published per-candidate scores of one run (see :func:`read_predictions`);
    ``registry``: :func:`polybias.data.sources.load_registry`, read once by callers of many runs."""
    path = sources.fetch(f"stereoset-pred-{run}", registry=registry)
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise StereoSetError(f"{Path(path).name}: not JSON ({exc})") from None
    return read_predictions(data, Path(path).name)


def load_published_results() -> pd.DataFrame:
    """The results workbook of Öztürk et al. (2023), every row of its three sheets.

    Columns ``sheet`` (intrasentence, intersentence, overall), ``run`` (the sheet's
    ``model_name``) and :data:`RESULT_COLUMNS` as printed (two decimals; ``Count`` an
    integer). Empty rows are dropped.
    """
    import openpyxl  # lazy: the workbook only

    path = sources.fetch("stereoset-multi-results")
    book = openpyxl.load_workbook(path, read_only=True, data_only=True)
    rows = []
    try:
        for sheet in SHEETS:
            if sheet not in book.sheetnames:
                raise StereoSetError(f"{Path(path).name}: no sheet {sheet!r}")
            values = list(book[sheet].iter_rows(values_only=True))
            header = [str(h) if h is not None else "" for h in values[0]]
            if header[:1 + len(RESULT_COLUMNS)] != ["model_name", *RESULT_COLUMNS]:
                raise StereoSetError(f"{Path(path).name}: sheet {sheet} has the columns {header}")
            for row in values[1:]:
                if row[0] is None:
                    continue
                rows.append({"sheet": sheet, "run": str(row[0]),
                             **dict(zip(RESULT_COLUMNS, row[1:1 + len(RESULT_COLUMNS)], strict=True))})
    finally:
        book.close()
    out = pd.DataFrame(rows)
    out["Count"] = out["Count"].astype(int)
    return out


# ------------------------------------------------------------------ dataset card

CARD_FIELDS = ("name", "title", "languages", "items", "tasks", "bias_types", "licence",
               "provenance", "sources", "citation", "known_issues")


def dataset_card() -> dict:
    """The card ``data/datasets/stereoset.yaml`` (fields :data:`CARD_FIELDS`)."""
    card = read_card("stereoset", CARD_FIELDS, StereoSetError)
    if tuple(card["languages"]) != LANGUAGES:
        raise StereoSetError(f"stereoset.yaml: languages disagree with {', '.join(LANGUAGES)}")
    if set(card["items"]) != set(LANGUAGES) or set(card["provenance"]) != set(LANGUAGES):
        raise StereoSetError("stereoset.yaml: 'items' and 'provenance' need one entry per language")
    return card


def list_datasets() -> pd.DataFrame:
    """One row per language: ``dataset``, ``language``, ``items`` (intrasentence +
    intersentence), ``intrasentence``, ``intersentence``, ``bias_types``, ``licence``,
    ``provenance``, ``title``; from the card."""
    card = dataset_card()

    def columns(language: str) -> dict:
        intra, inter = (int(card["items"][language][task]) for task in ("intrasentence", "intersentence"))
        return {"items": intra + inter, "intrasentence": intra, "intersentence": inter,
                "bias_types": ", ".join(card["bias_types"])}

    return card_rows(card, columns)


def card_markdown() -> str:
    """The StereoSet card as a Markdown section (appended to ``docs/datasets.md``)."""
    card = dataset_card()
    lines = [f"## `{card['name']}`: {card['title']}", "",
             "- Languages and items (intrasentence + intersentence): " + ", ".join(
                 f"{lang} {card['items'][lang]['intrasentence']} + {card['items'][lang]['intersentence']}"
                 for lang in card["languages"]),
             f"- Tasks: {', '.join(card['tasks'])}",
             f"- Bias types: {', '.join(card['bias_types'])}",
             f"- Licence: {card['licence']}",
             "- Provenance: " + "; ".join(f"{lang}: {card['provenance'][lang]}" for lang in card["languages"]),
             f"- Registered files: {', '.join(f'`{x}`' for x in card['sources'])}",
             f"- Citation: {card['citation']}", "- Known issues:"]
    lines += [f"  - {issue}" for issue in card["known_issues"]]
    return "\n".join(lines) + "\n"
