"""The paper sweep on stand-ins: an offline Hugging Face cache holding, under each hub id
of ``configs/sweeps/paper.yaml``, a tiny random checkpoint with the real repository's
architecture class, tokenizer type and weights format (:data:`HUB_STANDINS`), and a copy
of the sweep whose runs all use it (:func:`dry_config`).

Used by ``tests/test_paper_sweep.py``; also runnable by hand (prints the outcome table)::

    python tests/paper_dryrun.py        # from the repository root
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
import zoo  # noqa: E402

#: The runs of the dry run: those of hub models (the static-embedding entries read files
#: under $POLYBIAS_MODELS, not the hub cache).
HUB_NOTEBOOKS = ("04_logprob_context", "05_crows_pairs", "06_categorical_bias",
                 "08_hidden_states", "02_seat")

#: Small values for the dry run (the real sweep's are kept for everything else).
OVERRIDES = {"n_bootstrap": 20, "n_permutations": 100}


@dataclass(frozen=True)
class Standin:
    """A hub repository's shape: the zoo family giving its architecture class and tokenizer
    files, and the weights format the repository ships."""

    family: str
    fmt: str
    shape: str  # what the real repository is, for the documentation


_MBERT = zoo.Family("bert-uncased-mlm", "BertForMaskedLM", "wordpiece-uncased", ("mlm", "encoder"),
                    "mBERT uncased, ParsBERT")

#: hub id → stand-in, for every hub id the registry entries of paper.yaml name.
HUB_STANDINS: dict[str, Standin] = {
    "bert-base-uncased": Standin("bert-uncased", "safetensors",
                                 "BertForMaskedLM (+NSP head), WordPiece uncased, safetensors"),
    "albert-xxlarge-v2": Standin("albert", "safetensors",
                                 "AlbertForMaskedLM, SentencePiece (spiece.model), safetensors"),
    "bert-base-multilingual-uncased": Standin("bert-uncased-mlm", "safetensors",
                                              "BertForMaskedLM, WordPiece uncased, safetensors"),
    "gpt2": Standin("gpt2", "safetensors", "GPT2LMHeadModel, byte-level BPE, safetensors"),
    "aisingapore/sea-lion-3b": Standin(
        "mpt-remote-code", "safetensors",
        "MPT with repository code (auto_map) and a custom SEA BPE tokenizer"),
    "aisingapore/sealion-bert-base": Standin(
        "mosaicbert-remote-code", "safetensors",
        "MosaicBERT with repository code (bert_layers.py, auto_map)"),
    "SeaLLMs/SeaLLMs-v3-7B-Chat": Standin("qwen2", "safetensors",
                                          "Qwen2ForCausalLM, byte-level BPE, safetensors"),
    "csebuetnlp/banglabert_large_generator": Standin(
        "electra-generator", "bin", "ElectraForMaskedLM (generator), WordPiece, .bin only"),
    "csebuetnlp/banglabert_large": Standin(
        "electra-discriminator", "bin", "ElectraForPreTraining (discriminator), WordPiece, .bin only"),
    "google/muril-large-cased": Standin("bert-cased", "bin",
                                        "BertForMaskedLM, WordPiece cased, .bin only"),
    "FacebookAI/xlm-roberta-large": Standin(
        "xlm-roberta", "safetensors",
        "XLMRobertaForMaskedLM, SentencePiece (sentencepiece.bpe.model), safetensors"),
    "nlpaueb/bert-base-greek-uncased-v1": Standin(
        "bert-uncased", "bin", "BertForPreTraining, WordPiece uncased, .bin only"),
    "HooshvareLab/bert-base-parsbert-uncased": Standin(
        "bert-uncased-mlm", "bin", "BertForMaskedLM, WordPiece uncased, .bin only"),
}

FAMILIES = {f.name: f for f in (*zoo.FAMILIES, _MBERT)}


def commit_of(repo_id: str) -> str:
    """A fixed 40-hex commit per hub id (so records can be checked against it)."""
    return hashlib.sha1(repo_id.encode()).hexdigest()


#: Positions of every stand-in (the real models take 512 tokens or more).
MAX_LEN = 512

#: Template files whose text the stand-in tokenizers are trained on besides the zoo's tiny
#: English corpus, so that the Bangla, Greek and Persian runs see words, not [UNK]s.
TEXT_FROM = ("logprob_bn", "catbias_el", "catbias_fa")


def _strings(value) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def standin_text(root: Path | None = None) -> tuple[str, ...]:
    """The strings of the :data:`TEXT_FROM` template files."""
    from polybias import paths

    root = root or paths.project_root()
    out = []
    for name in TEXT_FROM:
        raw = yaml.safe_load((root / "data" / "templates" / f"{name}.yaml").read_text("utf-8"))
        out += _strings(raw)
    return tuple(out)


def build_cache(hub: Path, repo_ids=None, builds: Path | None = None) -> dict[str, str]:
    """Write the offline hub cache under ``hub`` (``models--org--name/snapshots/<sha>/``
    and ``refs/main``); returns hub id → commit."""
    builds = builds or hub.parent / "standins"
    text = standin_text()
    out = {}
    for repo_id in repo_ids or HUB_STANDINS:
        spec = HUB_STANDINS[repo_id]
        src = builds / f"{spec.family}-{spec.fmt}"
        if not (src / "config.json").is_file():
            zoo.build(FAMILIES[spec.family], spec.fmt, src, max_len=MAX_LEN, text=text)
        sha = commit_of(repo_id)
        repo = hub / ("models--" + repo_id.replace("/", "--"))
        if not (repo / "snapshots" / sha).is_dir():
            shutil.copytree(src, repo / "snapshots" / sha)
        (repo / "refs").mkdir(parents=True, exist_ok=True)
        (repo / "refs" / "main").write_text(sha)
        out[repo_id] = sha
    return out


def project_copy(root: Path, dest: Path) -> Path:
    """A project root at ``dest`` whose files are links to ``root``'s (so the runs' results,
    caches and tables land under ``dest``)."""
    dest.mkdir(parents=True, exist_ok=True)
    for name in ("pyproject.toml", "notebooks", "data", "lib", "tests"):
        if (root / name).exists() and not (dest / name).exists():
            (dest / name).symlink_to(root / name)
    (dest / "paper").mkdir(exist_ok=True)  # its reported values; tables go elsewhere
    if not (dest / "paper" / "reported").exists():
        (dest / "paper" / "reported").symlink_to(root / "paper" / "reported")
    (dest / "configs").mkdir(exist_ok=True)
    for item in (root / "configs").iterdir():
        if not (dest / "configs" / item.name).exists():
            (dest / "configs" / item.name).symlink_to(item)
    return dest


def dry_config(paper: Path, dest: Path, tables: Path) -> Path:
    """Copy of ``paper`` keeping the hub-model runs, with :data:`OVERRIDES` applied where
    the entry sets them and tables written under ``tables``."""
    from polybias.runner.runs import notebook_parameters

    raw = yaml.safe_load(paper.read_text(encoding="utf-8"))
    root = paper.resolve().parents[2]
    runs = []
    for entry in raw["runs"]:
        if Path(entry["notebook"]).stem not in HUB_NOTEBOOKS:
            continue
        entry = dict(entry)
        declared = notebook_parameters(root / entry["notebook"])
        params = dict(entry.get("parameters") or {})
        for key, value in OVERRIDES.items():
            if key in declared and key not in (entry.get("grid") or {}):
                params[key] = value
        entry["parameters"] = params
        if "table_file" in entry:
            entry["table_file"] = str(tables / Path(entry["table_file"]).name)
        entry.pop("executed", None)
        runs.append(entry)
    raw["runs"] = runs
    dest.write_text(yaml.safe_dump(raw, sort_keys=False, allow_unicode=True), encoding="utf-8")
    return dest


def registry_hub_ids(config: Path) -> dict[str, str]:
    """Model name → hub id for the registered hub models a sweep's runs name."""
    from polybias.models import load_registry
    from polybias.runner.sweep import load_sweep

    registry = load_registry()
    out = {}
    for run in load_sweep(config):
        name = run.parameters.get("model")
        entry = registry.get(name) if isinstance(name, str) else None
        if entry and entry.get("hub"):
            out[name] = entry["hub"]
    return out


def offline_env(home: Path) -> dict[str, str]:
    return {"HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_HOME": str(home),
            "HF_HUB_CACHE": str(home / "hub")}


def prepare(work: Path) -> tuple[Path, dict[str, str]]:
    """Build the cache, a project copy and the dry config under ``work``; returns the
    config and the environment the sweep runs in (offline hub cache, project copy)."""
    from polybias import paths

    real = paths.project_root()
    build_cache(work / "hf" / "hub")
    root = project_copy(real, work / "project")
    config = dry_config(real / "configs" / "sweeps" / "paper.yaml",
                        work / "paper_dryrun.yaml", work / "tables")
    return config, {**offline_env(work / "hf"), "POLYBIAS_ROOT": str(root)}


def run(work: Path) -> tuple[list[dict[str, Any]], Path]:
    """Build everything under ``work``, lock the dry sweep from the cache and run it in this
    process (``--jobs 1``: the runs' GPU resources are not asked for); returns (outcomes,
    project root)."""
    from polybias.runner import pins
    from polybias.runner.sweep import run_sweep

    config, env = prepare(work)
    os.environ.update(env)
    pins.write_pins(pins.make_pins(config), pins.default_path(config), config)
    return run_sweep(config, jobs=1, progress=False), Path(env["POLYBIAS_ROOT"])


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        outcomes, _ = run(Path(tmp))
        for o in outcomes:
            print(o["key"], o["status"], o.get("error", ""))
