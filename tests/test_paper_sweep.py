"""The paper sweep, dry: every hub-model run of ``configs/sweeps/paper.yaml`` runs against
an offline Hugging Face cache of stand-ins (``tests/paper_dryrun.py``: the real
repositories' architecture classes, tokenizer types and weights formats) and either
finishes with records carrying the snapshot's commit (pinned by a pin file written from
the cache, as ``polybias pin`` does) or is refused with its documented reason (repository
code not opted in); the BanglaBERT run's records name its text normaliser. Small
overrides (``paper_dryrun.OVERRIDES``: 20 bootstrap resamples, 100 permutations) keep it to
about three minutes on two cores; docs/paper_sweep.md lists the expected outcome of every
entry."""

from __future__ import annotations

import json
import os
from pathlib import Path

import paper_dryrun
import pytest
from polybias import paths
from polybias.models import load_registry, loading
from polybias.runner.sweep import load_sweep

PAPER = Path("configs/sweeps/paper.yaml")

#: Run key → "ok", or the text its failure must hold (the documented refusal).
REMOTE_CODE = "repository code is refused by default"
EXPECTED = {
    "05_crows_pairs__model-bert-base-uncased": "ok",
    "05_crows_pairs__model-albert-xxlarge-v2": "ok",
    "05_crows_pairs__model-bert-base-multilingual-uncased": "ok",
    "05_crows_pairs__model-gpt2": "ok",
    "05_crows_pairs__model-sea-lion-3b": REMOTE_CODE,
    "05_crows_pairs__model-sealion-bert-base": REMOTE_CODE,
    "05_crows_pairs__model-seallms-v3-7b-chat": "ok",
    "04_logprob_context__model-banglabert-large-generator": "ok",
    "04_logprob_context__model-muril-large-cased": "ok",
    "04_logprob_context__model-xlm-roberta-large": "ok",
    "06_categorical_bias__model-bert-base-uncased": "ok",
    "06_categorical_bias__model-bert-base-uncased__target_list-religion_groups": "ok",
    "06_categorical_bias__model-greekbert": "ok",
    "06_categorical_bias__model-parsbert": "ok",
    "08_hidden_states__model-bert-base-uncased": "ok",
    "02_seat__model-bert-base-uncased": "ok",
    "02_seat__model-albert-xxlarge-v2": "ok",
    "02_seat__model-bert-base-multilingual-uncased": "ok",
    "02_seat__model-xlm-roberta-large": "ok",
}


def test_every_hub_model_of_the_paper_sweep_has_a_stand_in():
    root = paths.project_root()
    named = paper_dryrun.registry_hub_ids(root / PAPER)
    assert set(named.values()) <= set(paper_dryrun.HUB_STANDINS)
    registry = load_registry()
    for run in load_sweep(root / PAPER):  # runs outside the dry run: static embeddings only
        if Path(run.notebook).stem not in paper_dryrun.HUB_NOTEBOOKS:
            assert registry[run.parameters["model"]]["kind"] == "static", run.key


@pytest.fixture(scope="module")
def dry_run(tmp_path_factory, torch_one_thread, unreachable_reason):
    mirror = os.environ.get("POLYBIAS_DATA_MIRROR")  # the paper runs read the studies' datasets
    work = tmp_path_factory.mktemp("paper")
    config, env = paper_dryrun.prepare(work)
    with pytest.MonkeyPatch.context() as mp:
        for key, value in env.items():
            mp.setenv(key, value)
        mp.setenv("OMP_NUM_THREADS", "1")
        if not mirror:  # only the copies already here: a run lacking one fails at once
            mp.setenv("POLYBIAS_OFFLINE", "1")
        from polybias.runner import pins
        from polybias.runner.sweep import run_sweep

        # pinned from the cache, as `polybias pin` does: the sweep picks the file up
        pins.write_pins(pins.make_pins(config), pins.default_path(config), config)

        outcomes = run_sweep(config, jobs=1, progress=False)
    if not mirror:
        lacking = {reason for o in outcomes if o["status"] == "failed"
                   for reason in [unreachable_reason(RuntimeError(o["error"]))] if reason}
        if lacking:
            first, *more = sorted(lacking)
            pytest.skip(f"offline: {first}" + (f" (and {len(more)} more sources of the paper sweep)"
                                               if more else ""))
    return outcomes, Path(env["POLYBIAS_ROOT"]), work


@pytest.mark.integration
def test_paper_sweep_runs_or_refuses_as_documented(dry_run):
    outcomes, root, work = dry_run
    got = {o["key"]: o for o in outcomes}
    assert set(got) == set(EXPECTED)
    registry = load_registry()
    for key, expected in EXPECTED.items():
        o = got[key]
        if expected != "ok":
            assert o["status"] == "failed" and expected in o["error"], o
            assert "\n" not in o["error"]
            continue
        assert o["status"] == "ok", o
        marker = json.loads(next(root.glob(f"results/*/{key}/run.json")).read_text())
        model = marker["parameters"]["model"]
        commit = paper_dryrun.commit_of(registry[model]["hub"])
        assert marker["parameters"]["revision"] == commit, key  # from the pin file
        records = [json.loads(p.read_text()) for p in (root / marker["parameters"]["output_dir"])
                   .rglob("*.json") if p.name != "run.json"]
        assert records, key
        assert {r["model_revision"] for r in records} == {commit}, key
        normaliser = registry[model].get("normaliser")  # BanglaBERT's: the project's own
        want = loading.normaliser_record(loading.get_normaliser(normaliser))
        assert all(r["normaliser"] == want for r in records), key
        assert (want is None) == (model != "banglabert-large-generator"), key
        assert Path(marker["parameters"]["table_file"]).is_file(), key
    assert not list((root / "paper").glob("tables/**/*.md"))  # nothing under the checkout's paper/
