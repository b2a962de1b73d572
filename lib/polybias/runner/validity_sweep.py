"""The validity sweep: many planted models per strength, every measure, every language.

``make validity`` runs ``polybias sweep configs/sweeps/validity.yaml``: a sweep of the one
runner (:mod:`polybias.runner.sweep`) of ``kind: validity``, whose runs are this module's
:class:`ModelRun` (:func:`sweep_runs`) and whose summary :func:`finish` writes; plan order,
``--only``, ``--shard``, ``--limit``, resume, locks, local or Dask and batch workers, and
the summary of outcomes are the runner's. ``python -m polybias.runner.validity_sweep
CONFIG`` is the earlier spelling of ``polybias sweep CONFIG --jobs 1`` (:func:`main`). Each
*job* is one trained model: a language, a model family (``word2vec``, ``mlm`` or
``causal``), a planted strength ``p`` and a seed. The model is trained once and cached
under its training spec (:func:`polybias.planted.synthetic.cached_planted_model` and
:func:`polybias.planted.synthetic.planted_word2vec` key it by a hash of every training input),
then every measure of its family is scored at every size of :data:`SIZES` and the rows are
written as one JSON record per job (``<records>/<language>/<family>-p<p>-s<seed>.json``,
atomically). A job whose record exists with the same job hash (training spec, scoring
options and :data:`SCORING_VERSION`) is skipped, so an interrupted sweep resumes where it
stopped and a changed option reruns only what it touches. A job runs under the runner's
file lock (:class:`polybias.runner.locks.RunLock` on ``<record>.lock``), as a notebook run
of :mod:`polybias.runner.sweep` does: two processes sharing a sweep (shards, or the same
command twice) never train the same model at once; the second skips it as running
elsewhere.

:func:`collect_measurements` reads the records back into one frame (one row per model,
metric and size) and :func:`write_summary` writes it, with the sha256 of every record it
came from, to the committed summary folder (``data/validity``) that notebook 10 renders.

Families and their measures (``measure``, the validity design / ``metric``; sizes in
brackets; :data:`polybias.measures.METRIC_MEASURES` names the registered measure
behind each metric):

* ``word2vec`` — ``weat`` / ``effect-size`` [words per set];
* ``mlm`` — ``crows-mlm`` / ``stereotype-score``, ``jsd-B`` [pairs];
  ``template-mlm`` / ``kurita-effect-size``, ``cb`` (Ahn & Oh), ``pll-cb`` (seed 002)
  [templates]; ``embedding-mlm`` / ``seat-effect-size`` [words per set], ``ceat-ces``
  [occurrences per word], ``ceat-ces-perm`` (the same CES with the word-permutation
  p-value of :func:`polybias.metrics.ceat.ceat_permutation`); ``interactions-mlm`` / ``interaction-cb`` (target × pronoun),
  ``pronoun-cb`` (pronoun alone: a control with nothing planted) [one template; English
  only, the Bangla and Hindi corpora have no second characteristic];
* ``causal`` — ``crows-causal`` / ``stereotype-score``, ``jsd-B`` [pairs].
"""

from __future__ import annotations

import hashlib
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from polybias import paths
from polybias.files import canonical_json, params_hash, sha256_file, write_text_atomic
from polybias.planted import synthetic
from polybias.runner.execution import DONE
from polybias.runner.record_run import RecordRun
from polybias.runner.sweep import SweepError, earlier_spelling, run_sweep, select
from polybias.studies import validity_designs as designs

FAMILIES = ("word2vec", "mlm", "causal")
SCORING_VERSION = "validity-sweep-2"
"""Bump when a change here changes the scored rows: it is part of every job hash.
Version 2 adds CEAT's word-permutation p-value (``ceat-ces-perm``) to the masked LMs."""

LABELS_ADDED = {"validity-sweep-2": {("embedding-mlm", "ceat-ces-perm")}}
"""The (design, label) rows each scoring version added: a record scored under an earlier
version, carried in a committed summary, lacks them by that version's definition
(:func:`held`), not because a measure was declared since."""

SIZES = {"weat_words": "words per set", "seat_words": "words per set",
         "ceat_samples": "occurrences per word", "crows_pairs": "pairs",
         "kurita_templates": "templates"}
"""Size axes of the minimum-detectable-bias study (config key: what is counted)."""

SUMMARY_FILE = "measurements.csv"
MANIFEST_FILE = "records.sha256.json"


class ValiditySweepError(ValueError):
    """A malformed validity-sweep configuration or record."""


_TOP_KEYS = {"records_dir", "summary_dir", "blocks", "alpha", "n_permutations",
             "word2vec", "mlm", "causal", "sizes", "defaults"}
_OPTIONAL_TOP_KEYS = {"kind"}
_BLOCK_KEYS = {"language", "family", "ps", "models_per_strength", "null_models"}
_OPTIONAL_BLOCK_KEYS = {"first"}


def load_config(path: str | Path) -> dict[str, Any]:
    """Read and check a validity-sweep YAML (see ``configs/sweeps/validity.yaml``)."""
    path = Path(path)
    raw = paths.read_yaml(path, error=ValiditySweepError, what="validity sweep")
    return check_config(raw, where=str(path))


def check_config(raw: Any, where: str = "config") -> dict[str, Any]:
    """Validate a validity-sweep mapping; unknown or missing keys raise, naming them.
    ``kind``, when given, is ``validity`` (``polybias sweep`` reads the file by it).

    ``blocks`` is a list of ``{language, family, ps, models_per_strength, null_models}``:
    ``models_per_strength`` models at every ``p`` of ``ps``, and at ``p = 0.5`` as many
    more as make ``null_models`` balanced models in all (the calibration study). An
    optional ``first`` (a subset of ``ps`` with 0.5) runs those strengths and the
    calibration models before the other strengths (:func:`plan`).
    """
    if not isinstance(raw, dict):
        raise ValiditySweepError(f"{where}: must be a mapping")
    unknown = sorted(set(raw) - _TOP_KEYS - _OPTIONAL_TOP_KEYS)
    missing = sorted(_TOP_KEYS - set(raw))
    if unknown or missing:
        raise ValiditySweepError(f"{where}: unknown keys {unknown}, missing keys {missing}")
    if raw.get("kind", "validity") != "validity":
        raise ValiditySweepError(f"{where}: kind must be 'validity' (the runner's sweep kind of "
                                 f"this file), got {raw['kind']!r}")
    if not isinstance(raw["blocks"], list) or not raw["blocks"]:
        raise ValiditySweepError(f"{where}: blocks must be a non-empty list")
    seen = set()
    for i, block in enumerate(raw["blocks"]):
        name = f"{where}: block {i + 1}"
        if (not isinstance(block, dict) or not _BLOCK_KEYS <= set(block)
                or set(block) - _BLOCK_KEYS - _OPTIONAL_BLOCK_KEYS):
            got = sorted(block) if isinstance(block, dict) else block
            raise ValiditySweepError(f"{name}: needs the keys {sorted(_BLOCK_KEYS)} (optional: "
                                     f"{sorted(_OPTIONAL_BLOCK_KEYS)}), got {got}")
        if block["language"] not in synthetic.LANGUAGES or block["family"] not in FAMILIES:
            raise ValiditySweepError(f"{name}: language must be one of {synthetic.LANGUAGES} and family one "
                                     f"of {FAMILIES}, got {block['language']!r}, {block['family']!r}")
        if (block["language"], block["family"]) in seen:
            raise ValiditySweepError(f"{name}: {block['language']}/{block['family']} is listed twice")
        seen.add((block["language"], block["family"]))
        ps = block["ps"]
        if (not isinstance(ps, list) or 0.5 not in ps or any(
                isinstance(p, bool) or not isinstance(p, (int, float)) or not 0 <= p <= 1 for p in ps)):
            raise ValiditySweepError(f"{name}: ps must be numbers in [0, 1] including 0.5, got {ps!r}")
        first = block.get("first", ps)
        if not isinstance(first, list) or 0.5 not in first or not set(first) <= set(ps):
            raise ValiditySweepError(f"{name}: first must be a subset of ps including 0.5, got {first!r}")
        for key in ("models_per_strength", "null_models"):
            if isinstance(block[key], bool) or not isinstance(block[key], int) or block[key] < 1:
                raise ValiditySweepError(f"{name}: {key} must be a positive integer")
    unknown_sizes = sorted(set(raw["sizes"]) - set(SIZES))
    if unknown_sizes:
        raise ValiditySweepError(f"{where}: unknown sizes {unknown_sizes}; known: {sorted(SIZES)}")
    for key, values in raw["sizes"].items():
        if (not isinstance(values, list) or not values
                or not all(isinstance(v, int) and v > 0 for v in values)):
            raise ValiditySweepError(f"{where}: sizes.{key} must be a list of positive integers")
        if raw["defaults"].get(key) not in values:
            raise ValiditySweepError(f"{where}: defaults.{key} must be one of sizes.{key}")
    return raw


def plan(config: dict[str, Any]) -> list[dict[str, Any]]:
    """The jobs of a sweep, in the order they run: block by block; in a block, seed by
    seed over the strengths of ``first`` (default: all of ``ps``; so a sweep stopped
    early still covers every one of them), then the extra balanced (p = 0.5) models of
    the calibration study, then seed by seed over the other strengths.

    >>> cfg = {"blocks": [{"language": "en", "family": "causal", "ps": [0.1, 0.5, 0.9],
    ...                    "models_per_strength": 2, "null_models": 3}]}
    >>> [(j["p"], j["seed"]) for j in plan(cfg)]
    [(0.1, 0), (0.5, 0), (0.9, 0), (0.1, 1), (0.5, 1), (0.9, 1), (0.5, 2)]
    >>> cfg["blocks"][0]["first"] = [0.5, 0.9]
    >>> [(j["p"], j["seed"]) for j in plan(cfg)]
    [(0.5, 0), (0.9, 0), (0.5, 1), (0.9, 1), (0.5, 2), (0.1, 0), (0.1, 1)]
    """
    jobs = []
    for block in config["blocks"]:
        lang, family = block["language"], block["family"]
        ps, per = [float(p) for p in block["ps"]], int(block["models_per_strength"])
        first = [float(p) for p in block.get("first", ps)]
        later = [p for p in ps if p not in first]

        order = ([(p, seed) for seed in range(per) for p in first]
                 + [(0.5, seed) for seed in range(per, int(block["null_models"]))]
                 + [(p, seed) for seed in range(per) for p in later])
        jobs.extend({"language": lang, "family": family, "p": p, "seed": seed} for p, seed in order)
    return jobs


def balanced_first(config: dict[str, Any], blocks: list[str] | None = None) -> list[dict[str, Any]]:
    """:func:`plan`'s jobs with the extra balanced (p = 0.5) models of the calibration
    study first, block by block (in the order of ``blocks``, names ``language/family``,
    then of the config), so that a sweep stopped early has completed the calibration of
    whole blocks rather than a few models of each; then the other jobs in :func:`plan`'s order.

    >>> cfg = {"blocks": [{"language": "en", "family": "mlm", "ps": [0.5, 0.9],
    ...                    "models_per_strength": 1, "null_models": 3},
    ...                   {"language": "bn", "family": "mlm", "ps": [0.5, 0.9],
    ...                    "models_per_strength": 1, "null_models": 2}]}
    >>> [(j["language"], j["p"], j["seed"]) for j in balanced_first(cfg, ["bn/mlm"])][:4]
    [('bn', 0.5, 1), ('en', 0.5, 1), ('en', 0.5, 2), ('en', 0.5, 0)]
    """
    names = [f"{b['language']}/{b['family']}" for b in config["blocks"]]
    first = list(blocks or [])
    unknown = sorted(set(first) - set(names))
    if unknown:
        raise ValiditySweepError(f"unknown blocks {unknown}; the config has {names}")
    rank = {name: i for i, name in enumerate(first + [n for n in names if n not in first])}
    per = {(b["language"], b["family"]): int(b["models_per_strength"]) for b in config["blocks"]}
    jobs = plan(config)
    extra = [j for j in jobs if j["p"] == 0.5 and j["seed"] >= per[(j["language"], j["family"])]]
    extra.sort(key=lambda j: (rank[f"{j['language']}/{j['family']}"], j["seed"]))
    chosen = {id(j) for j in extra}
    return extra + [j for j in jobs if id(j) not in chosen]


def record_path(records: Path, job: dict[str, Any]) -> Path:
    """``<records>/<language>/<family>-p<p>-s<seed>.json``."""
    return records / job["language"] / f"{job['family']}-p{job['p']:g}-s{job['seed']}.json"


def training_spec(job: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """The full training spec of a job's model (what its cache key hashes)."""
    family, lang, p, seed = job["family"], job["language"], job["p"], job["seed"]
    if family == "word2vec":
        opts = dict(config["word2vec"])
        n = opts.pop("n_sentences")
        return synthetic.planted_word2vec_spec(p, seed, lang, n, **opts)
    opts = dict(config[family])
    n = opts.pop("n_sentences")
    return synthetic.planted_model_spec(family, p, seed, lang, n, **opts)


def job_hash(job: dict[str, Any], config: dict[str, Any]) -> str:
    """Hash of everything a job's record depends on."""
    scoring = {k: config[k] for k in ("n_permutations", "sizes", "defaults")}
    return params_hash({"job": job, "training": training_spec(job, config), "scoring": scoring,
                        "version": SCORING_VERSION})


def measurement_row(job: dict[str, Any], measure: str, metric: str, size_key: str, size: int,
                    defaults: dict[str, Any], value: float, null: float, pvalue: float
                    ) -> dict[str, Any]:
    """One row of a job's record (:data:`COLUMNS`): a measurement of ``metric`` at ``size``
    on the axis ``size_key`` (a key of :data:`SIZES`), flagged ``default`` when ``size`` is
    the config's ``defaults`` size of that axis.

    >>> job = {"language": "en", "family": "mlm", "p": 0.9, "seed": 0}
    >>> row = measurement_row(job, "template-mlm", "cb", "kurita_templates", 3,
    ...                       {"kurita_templates": 3}, 0.25, float("nan"), float("nan"))
    >>> row["size_axis"], row["default"], row["value"]
    ('templates', True, 0.25)
    """
    return {"language": job["language"], "family": job["family"], "measure": measure,
            "metric": metric, "p": job["p"], "seed": job["seed"], "size_axis": SIZES[size_key],
            "size": int(size), "default": bool(defaults.get(size_key) == size),
            "value": float(value), "null": float(null), "pvalue": float(pvalue)}


def _rows(job: dict[str, Any], design: str, config: dict[str, Any],
          found: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [measurement_row(job, design, r["metric"], r["size_key"], r["size"], config["defaults"],
                            r["value"], r["null"], r["pvalue"]) for r in found]


def _lm(job, config):
    opts = dict(config[job["family"]])
    n = opts.pop("n_sentences")
    return designs.planted_lm(job["family"], job["p"], job["seed"], job["language"], n, **opts)


def embedding_rows(job: dict[str, Any], config: dict[str, Any], sentence_vectors, encoder,
                   measure: str = "embedding-mlm", layer: int = -1) -> list[dict[str, Any]]:
    """SEAT and CEAT rows of one model at every size of ``config``: the job's rows of
    :func:`polybias.studies.validity_designs.embedding_rows` (design ``measure``), with the
    config's ``seat_words`` and ``ceat_samples`` sizes, CEAT's corpus of
    ``config["mlm"]["n_sentences"]`` sentences and both of CEAT's p-values.

    ``sentence_vectors(texts) -> (n, dim)`` embeds SEAT's bleached sentences; ``encoder``
    gives CEAT's occurrence vectors at ``layer``.
    """
    found = designs.embedding_rows(
        encoder, sentence_vectors, job["p"], job["seed"], job["language"],
        config["mlm"]["n_sentences"], seat_words=config["sizes"]["seat_words"],
        ceat_samples=config["sizes"]["ceat_samples"], n_permutations=config["n_permutations"],
        layer=layer, design=measure)
    return _rows(job, measure, config, found)


def score_job(job: dict[str, Any], config: dict[str, Any]) -> list[dict[str, Any]]:
    """Train (or load) one job's model and score every design of its family at every size
    (:mod:`polybias.studies.validity_designs`: every label the registry declares for the
    design): one row per (design, metric, size). Families: ``word2vec`` (``weat``),
    ``causal`` (``crows-causal``), ``mlm`` (``crows-mlm``, ``template-mlm``,
    ``embedding-mlm`` and, in English, ``interactions-mlm``)."""
    sizes, lang, seed = config["sizes"], job["language"], job["seed"]
    if job["family"] == "word2vec":
        opts = dict(config["word2vec"])
        n = opts.pop("n_sentences")
        emb = synthetic.planted_word2vec(job["p"], seed, lang, n, **opts)
        return _rows(job, "weat", config, designs.weat_rows(emb, lang, seed, sizes["weat_words"],
                                                            config["n_permutations"]))
    lm = _lm(job, config)
    design = f"crows-{job['family']}"
    rows = _rows(job, design, config, designs.pair_rows(lm, design, lang, seed, sizes["crows_pairs"]))
    if job["family"] == "mlm":
        rows += _rows(job, "template-mlm", config, designs.template_rows(
            lm, lang, seed, sizes["kurita_templates"], config["n_permutations"]))
        encoder, sentence_vectors = designs.masked_encoder(lm)
        rows += embedding_rows(job, config, sentence_vectors, encoder)
        if lang == "en":
            rows += [{**row, "size_axis": "templates", "default": True}
                     for row in _rows(job, "interactions-mlm", config, designs.interaction_rows(lm, lang))]
    return rows


def family_designs(job: dict[str, Any]) -> list[str]:
    """The validity designs :func:`score_job` runs on a job's model.

    >>> family_designs({"family": "mlm", "language": "bn"})
    ['crows-mlm', 'template-mlm', 'embedding-mlm']
    """
    if job["family"] == "word2vec":
        return ["weat"]
    if job["family"] == "causal":
        return ["crows-causal"]
    return ["crows-mlm", "template-mlm", "embedding-mlm"] + (["interactions-mlm"] if job["language"] == "en" else [])


def covers_declared(job: dict[str, Any], rows: list[dict[str, Any]],
                    exempt: set[tuple[str, str]] | frozenset = frozenset()) -> bool:
    """Whether ``rows`` (a record's, or a committed summary's) hold every label the registry
    declares for the job's designs: a measure given a validity label since they were scored
    makes the job's model run todo again, and only the model runs of the designs it is declared for.

    >>> job = {"family": "causal", "language": "en"}
    >>> covers_declared(job, [{"measure": "crows-causal", "metric": "stereotype-score"}])
    False
    """
    have = {(r["measure"], r["metric"]) for r in rows} | set(exempt)
    return all((d, label) in have for d in family_designs(job) for _, label in designs.declared(d))


@dataclass(frozen=True, eq=False)
class ModelRun(RecordRun):
    """One job of the validity sweep as a run of the sweep runner (:mod:`polybias.runner.sweep`,
    ``kind: validity``; :class:`polybias.runner.record_run.RecordRun`): train (or load) one
    planted model, score every design of its family, write its record.

    ``key`` is the record's name without ``.json`` (``en/mlm-p0.9-s0``), ``records`` the
    records folder, ``digest`` the job's hash (:func:`job_hash`); a model run is done when its
    record holds that hash and every label the registry declares for its designs
    (:func:`covers_declared`).
    """

    def relative(self) -> str:
        """``<language>/<family>-p<p>-s<seed>.json`` (:func:`record_path`)."""
        return str(record_path(Path(), self.job))

    def score(self) -> list[dict[str, Any]]:
        """:func:`score_job`."""
        return score_job(self.job, self.config)

    def header(self) -> dict[str, Any]:
        """The model's training spec and the scoring version."""
        return {"training": training_spec(self.job, self.config), "scoring_version": SCORING_VERSION}

    def complete(self, record: dict[str, Any]) -> bool:
        """:func:`covers_declared`."""
        return covers_declared(self.job, record.get("rows", []))


def model_runs(config: dict[str, Any], records: Path | None = None, order: str = "plan",
          first: list[str] | None = None,
          skip: set[str] | frozenset[str] = frozenset()) -> list[ModelRun]:
    """The runs of a validity sweep, in the order they run: :func:`plan`'s jobs, or
    :func:`balanced_first`'s for ``order="balanced-first"`` (``first``: the blocks whose
    balanced models go before the others), less the records named in ``skip`` (as
    ``<language>/<family>-p<p>-s<seed>.json``, e.g. those a committed summary holds,
    :func:`committed_records`). ``records``: the records folder (default: the config's
    ``records_dir`` under the output root)."""
    records = Path(records) if records else paths.output_path(config["records_dir"])
    if order not in ("plan", "balanced-first"):
        raise ValiditySweepError(f"order must be 'plan' or 'balanced-first', got {order!r}")
    jobs = plan(config) if order == "plan" else balanced_first(config, first)
    out = []
    for job in jobs:
        name = str(record_path(Path(), job))
        if name not in skip:
            out.append(ModelRun(name.removesuffix(".json"), job, config, str(records), job_hash(job, config)))
    return out


def sweep_runs(config: str | Path, options: dict[str, Any]) -> list[ModelRun]:
    """The runs of the validity sweep YAML ``config`` for the sweep runner (``kind:
    validity``, :data:`polybias.runner.sweep.KINDS`): :func:`model_runs` with the command's
    ``order``, ``first`` and, with ``carry_committed``, the records the committed summary
    holds skipped. A malformed config is a :class:`polybias.runner.sweep.SweepError`."""
    try:
        cfg = load_config(config)
        carry = (committed_records(paths.project_root() / cfg["summary_dir"])
                 if options.get("carry_committed") else None)
        return model_runs(cfg, order=options.get("order") or "plan", first=options.get("first") or None,
                     skip=held(carry) if carry else frozenset())
    except ValiditySweepError as exc:
        raise SweepError(str(exc)) from None


def finish(config: str | Path, options: dict[str, Any]) -> str:
    """After the runs of a validity sweep: collect the records into the summary
    (:func:`collect_measurements`, with ``allow_missing`` and, with ``carry_committed``,
    the committed summary's rows of the records it lacks) and write it into the config's
    ``summary_dir`` (:func:`write_summary`); returns the line that says so. Raises
    :class:`ValiditySweepError` (a ``ValueError``) when records are missing."""
    cfg = load_config(config)
    summary_dir = paths.project_root() / cfg["summary_dir"]
    carry = committed_records(summary_dir) if options.get("carry_committed") else None
    frame, hashes = collect_measurements(cfg, allow_missing=bool(options.get("allow_missing")),
                                         carry=carry)
    out = write_summary(frame, hashes, summary_dir, blocks=completion(cfg, hashes))
    return (f"summary of {len(hashes)} records ({len(hashes.carried)} carried from the "
            f"committed summary): {out}")


def run_validity(config: dict[str, Any], records: Path | None = None, limit: int | None = None,
                 only: list[str] | None = None, shard: tuple[int, int] = (0, 1),
                 log=print, skip: set[str] | frozenset[str] = frozenset(),
                 order: str = "plan", first: list[str] | None = None) -> dict[str, int]:
    """Run every job of ``config`` whose record is missing or stale, in this process,
    through the sweep runner (:func:`polybias.runner.sweep.run_sweep` on :func:`model_runs`);
    returns counts ``{"done": already there, "ran": scored now, "elsewhere": skipped
    because another process holds the job's lock, "jobs": planned for this shard}``.
    ``limit`` stops after that many jobs not yet done; ``only`` keeps the blocks named
    ``language/family`` (e.g. ``["en/mlm"]``) and ``shard=(i, n)`` every n-th of the
    remaining jobs from the i-th, so that separate processes can share a sweep. ``skip``,
    ``order`` and ``first``: as :func:`model_runs` takes them. ``log`` gets one line per job
    not already done."""
    planned = model_runs(config, records, order=order, first=first, skip=skip)
    picked = ",".join(f"{b}-" for b in only) if only else None
    try:
        outcomes = run_sweep(None, jobs=1, only=picked, shard=shard, limit=limit, progress=False,
                             given=planned)
    except SweepError as exc:
        raise ValiditySweepError(str(exc)) from None
    for o in outcomes:
        if o["status"] == "ok":
            log(f"{o['key']}.json {o['seconds']:.1f}s (cpu {o['cpu_seconds']:.1f}s)", flush=True)
        elif o.get("reason") != DONE:
            log(f"{o['key']}.json {o.get('reason') or o.get('error')}", flush=True)
    elsewhere = sum(str(o.get("reason", "")).startswith("running elsewhere") for o in outcomes)
    return {"done": sum(o.get("reason") == DONE for o in outcomes),
            "ran": sum(o["status"] == "ok" for o in outcomes), "elsewhere": elsewhere,
            "jobs": len(select(planned, picked, shard))}


def held(carry: dict[str, Any]) -> set[str]:
    """The records of a committed summary (:func:`committed_records`) whose rows hold every
    label the registry now declares for their designs (:func:`covers_declared`), less those
    added by scoring versions after the one a record was scored under (:data:`LABELS_ADDED`):
    the model runs a sweep carrying that summary skips."""
    out = set()
    for name in carry["records"]:
        language, stem = name.split("/", 1)
        family = stem.split("-p", 1)[0]
        version = int(carry["carried"].get(name, carry["version"]).rsplit("-", 1)[1])
        exempt = {label for v, added in LABELS_ADDED.items() if int(v.rsplit("-", 1)[1]) > version
                  for label in added}
        if name in carry["rows"] and covers_declared({"family": family, "language": language},
                                                     carry["rows"][name], exempt):
            out.add(name)
    return out


def committed_records(folder: str | Path) -> dict[str, Any]:
    """What a committed summary holds, to carry into a new one: ``{"rows": {record name:
    list of row dicts}, "records": {record name: sha256}, "carried": {record name: scoring
    version}}`` (``carried`` lists the records whose rows were themselves carried, with the
    scoring version they were scored under). Record names are
    ``<language>/<family>-p<p>-s<seed>.json``."""
    folder = Path(folder)
    frame = read_summary(folder)
    manifest = json.loads((folder / MANIFEST_FILE).read_text(encoding="utf-8"))
    rows: dict[str, list] = {}
    for key, g in frame[COLUMNS].groupby(["language", "family", "p", "seed"], sort=False):
        lang, family, p, seed = key
        name = str(record_path(Path(), {"language": lang, "family": family, "p": float(p), "seed": int(seed)}))
        rows[name] = g.to_dict("records")
    return {"rows": rows, "records": dict(manifest["records"]),
            "carried": dict(manifest.get("carried", {})),
            "version": manifest.get("scoring_version", "validity-sweep-1")}


def collect_measurements(config: dict[str, Any], records: Path | None = None,
                         allow_missing: bool = False, carry: dict[str, Any] | None = None,
                         ) -> tuple[pd.DataFrame, dict[str, str]]:
    """Every planned job's rows as one frame, and ``{record name: sha256}``. A missing or
    stale record raises (naming it) unless ``allow_missing``, or unless ``carry``
    (:func:`committed_records` of a committed summary) holds it with every label now declared
    for its designs (:func:`held`): then its rows and sha256
    are taken from that summary as they were committed (scored under that summary's
    scoring version), and the returned hashes carry a ``carried`` attribute
    ``{record name: scoring version}`` naming them (:func:`write_summary` writes it)."""
    records = Path(records) if records else paths.output_path(config["records_dir"])
    rows, hashes, missing, carried = [], {}, [], {}
    carriable = held(carry) if carry is not None else set()
    for run in model_runs(config, records):
        path, name = run.path, run.relative()
        record = run.done_record()
        if record is None:
            if name in carriable:
                rows.extend(carry["rows"][name])
                hashes[name] = carry["records"][name]
                carried[name] = carry["carried"].get(name, carry["version"])
                continue
            missing.append(name)
            continue
        rows.extend(record["rows"])
        hashes[name] = sha256_file(path)
    if missing and not allow_missing:
        raise ValiditySweepError(f"{len(missing)} records missing or stale in {records}, "
                                 f"e.g. {missing[0]} (run make validity)")
    if not rows:
        raise ValiditySweepError(f"no records in {records}")
    return pd.DataFrame(rows), _Hashes(hashes, carried=carried)


class _Hashes(dict):
    """``{record name: sha256}`` with the ``carried`` records named beside it."""

    def __init__(self, *args, carried: dict[str, str] | None = None, **kwargs):
        super().__init__(*args, **kwargs)
        self.carried = dict(carried or {})


def records_digest(hashes: dict[str, str]) -> str:
    """One sha256 over the sorted ``{record name: sha256}`` (canonical JSON)."""
    return hashlib.sha256(canonical_json(hashes).encode()).hexdigest()


def completion(config: dict[str, Any], hashes: dict[str, str]) -> list[dict[str, Any]]:
    """Per block of ``config``: how many of its planned models have a record in ``hashes``.

    >>> cfg = {"blocks": [{"language": "en", "family": "causal", "ps": [0.5, 0.9],
    ...                    "models_per_strength": 1, "null_models": 2}]}
    >>> completion(cfg, {"en/causal-p0.5-s0.json": "x"})
    [{'language': 'en', 'family': 'causal', 'planned': 3, 'done': 1}]
    """
    out = []
    for block in config["blocks"]:
        jobs = plan({"blocks": [block]})
        names = {str(record_path(Path(), j)) for j in jobs}
        out.append({"language": block["language"], "family": block["family"],
                    "planned": len(jobs), "done": len(names & set(hashes))})
    return out


COLUMNS = ["language", "family", "measure", "metric", "p", "seed", "size_axis", "size",
           "default", "value", "null", "pvalue"]


def write_summary(frame: pd.DataFrame, hashes: dict[str, str], folder: Path,
                  blocks: list[dict[str, Any]] | None = None) -> Path:
    """Write ``measurements.csv`` (:data:`COLUMNS`, values rounded to 6 significant
    digits, and a ``records_sha256`` column holding :func:`records_digest`) and
    ``records.sha256.json`` (every record's sha256, ``blocks``: :func:`completion`, the
    current ``scoring_version``, and ``carried``: the records whose rows were carried from
    an earlier summary, with the scoring version they were scored under) into ``folder``,
    each atomically."""
    digest = records_digest(dict(hashes))
    carried = dict(getattr(hashes, "carried", {}))
    out = frame[COLUMNS].copy()
    for col in ("value", "pvalue"):
        out[col] = out[col].map(lambda v: float(f"{v:.6g}") if v == v else v)
    out["records_sha256"] = digest
    folder = Path(folder)
    write_text_atomic(folder / MANIFEST_FILE, json.dumps(
        {"records_sha256": digest, "records": dict(hashes), "blocks": blocks or [],
         "scoring_version": SCORING_VERSION, "carried": carried},
        indent=1, sort_keys=True) + "\n")
    return write_text_atomic(folder / SUMMARY_FILE, out.to_csv(index=False, lineterminator="\n"))


def read_summary(folder: str | Path) -> pd.DataFrame:
    """Read the committed ``measurements.csv``, checking its ``records_sha256`` against
    ``records.sha256.json`` beside it (a mismatch means the two were not written together)."""
    folder = Path(folder)
    frame = pd.read_csv(folder / SUMMARY_FILE)
    manifest = json.loads((folder / MANIFEST_FILE).read_text(encoding="utf-8"))
    if records_digest(manifest["records"]) != manifest["records_sha256"]:
        raise ValiditySweepError(f"{folder / MANIFEST_FILE}: records_sha256 does not match its records")
    found = set(frame["records_sha256"])
    if found != {manifest["records_sha256"]}:
        raise ValiditySweepError(f"{folder / SUMMARY_FILE}: records_sha256 {sorted(found)} differs "
                                 f"from {folder / MANIFEST_FILE}")
    return frame


def language_summary(summary_dir: str | Path, language: str) -> tuple[pd.DataFrame, dict, int]:
    """The committed summary's measurements of one ``language`` (:func:`read_summary`; a
    relative ``summary_dir`` is under the project root), its manifest, and the number of
    that language's records. Raises :class:`ValiditySweepError` when the summary holds no
    measurements of ``language``."""
    folder = Path(summary_dir)
    if not folder.is_absolute():
        folder = paths.project_root() / folder
    measurements = read_summary(folder)
    if language not in set(measurements["language"]):
        raise ValiditySweepError(f"{folder}: no measurements for language {language!r} "
                                 f"(has {sorted(set(measurements['language']))}); run make validity")
    manifest = json.loads((folder / MANIFEST_FILE).read_text(encoding="utf-8"))
    n_records = sum(1 for name in manifest["records"] if name.startswith(f"{language}/"))
    return measurements[measurements["language"] == language], manifest, n_records


def main(argv: list[str] | None = None) -> int:
    """``python -m polybias.runner.validity_sweep CONFIG [options]``: the earlier spelling
    of ``polybias sweep CONFIG --jobs 1`` (:func:`polybias.runner.sweep.earlier_spelling`);
    its options (``--limit``, ``--only``, ``--shard``, ``--summary-only``,
    ``--allow-missing``, ``--carry-committed``, ``--order``, ``--first``) are that
    command's."""
    return earlier_spelling(argv, "polybias.runner.validity_sweep", "validity", "the validity sweep")


if __name__ == "__main__":
    sys.exit(main())
