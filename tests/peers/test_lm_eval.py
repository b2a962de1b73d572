"""lm-evaluation-harness executed beside polybias on CrowS-Pairs (``method="lm-eval"``).

lm-eval 0.4.13 (``.venv-peers/lm-eval``) runs ``simple_evaluate`` with its ``hf`` model on a
tiny random GPT-2 saved to a local folder (safetensors and tokenizer), offline, on
(i) its own ``crows_pairs_english`` task (the installed YAML and ``utils.py``, only the
dataset lines pointed at a local CSV of the revised English CrowS-Pairs, the pairs of
that task's dataset) and (ii) two tasks written by ``polybias lm-eval-tasks``
(:func:`polybias.data.lm_eval_tasks.write_tasks`): CrowS-Pairs (English), Kaneko et
al.'s Japanese pairs, and two EuroGEST tasks (the Maltese gendered pairs and the Irish
scaffolded sentences). polybias scores the same pairs with ``pair_scores(method="lm-eval")``
and :func:`polybias.metrics.crows.lm_eval_metrics`; ``pct_stereotype`` must be equal and
``likelihood_diff`` and every per-pair log-likelihood equal to float32 rounding.
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import run_driver
from polybias.data import lm_eval_tasks
from polybias.engines import scoring
from polybias.engines.pair_scores import pair_scores
from polybias.metrics import crows
from report import record

GENERATED = (("crows-pairs", "en"), ("kaneko2022", "ja"), ("eurogest", "mt"), ("eurogest-neutral", "ga"))
LOGLIK_ATOL = 1e-3  # float32 forward passes of different batch shapes; values are ≈ -100 to -2000


@pytest.fixture(scope="module")
def tiny_gpt2(tmp_path_factory, torch_one_thread):
    """A tiny random GPT-2 with a 1024-token window, saved as safetensors with its tokenizer."""
    from polybias.planted import tiny_models

    model, tok = tiny_models.build_tiny_model("gpt2", n_positions=1024, initializer_range=0.2)
    tok.model_max_length = 1024
    folder = tmp_path_factory.mktemp("tiny-gpt2")
    model.save_pretrained(folder, safe_serialization=True)
    tok.save_pretrained(folder)
    return folder, scoring.wrap_language_model(model, tok, name="tiny-gpt2")


@pytest.fixture(scope="module")
def lm_eval_run(tiny_gpt2, tmp_path_factory):
    """One lm-eval run on the generated tasks and on its own English task (local CSV)."""
    folder, _ = tiny_gpt2
    root = tmp_path_factory.mktemp("lm-eval")
    include = root / "tasks"
    names = lm_eval_tasks.write_tasks(include, [d for d, _ in GENERATED], [lang for _, lang in GENERATED])
    english = root / "crows_pairs_english.csv"
    lm_eval_tasks.csv_frame(lm_eval_tasks.task_pairs("crows-pairs-revised", "en")).to_csv(english, index=False)
    answer = run_driver("lm-eval", "lm_eval_crows", {
        "model_dir": str(folder), "include_path": str(include), "tasks": names,
        "english_csv": str(english)}, timeout=1800)
    return names, answer


def _compare(lm, pairs, theirs) -> tuple[float, float]:
    """Assert polybias's lm-eval method equals lm-eval's numbers; return the largest
    per-pair and likelihood_diff differences."""
    scored = pair_scores(lm, pairs, method="lm-eval")
    ours = crows.lm_eval_metrics(scored).iloc[0]
    assert theirs["n"] == len(pairs) == ours["n"]
    assert theirs["sent_more"] == pairs["sent_more"].tolist()  # same documents, same order
    lls = np.array(theirs["loglikelihoods"])
    per_pair = float(np.abs(lls - scored[["score_more", "score_less"]].to_numpy()).max())
    assert per_pair < LOGLIK_ATOL
    assert ((lls[:, 0] > lls[:, 1]) == (scored.score_more > scored.score_less)).all()
    assert ours["pct_stereotype"] == theirs["pct_stereotype"]
    diff = abs(ours["likelihood_diff"] - theirs["likelihood_diff"])
    assert diff < LOGLIK_ATOL
    print(f"n={len(pairs)} pct_stereotype lm-eval {theirs['pct_stereotype']:.6f} polybias "
          f"{ours['pct_stereotype']:.6f}; likelihood_diff {theirs['likelihood_diff']:.6f} vs "
          f"{ours['likelihood_diff']:.6f}; largest per-pair difference {per_pair:.2e}")
    return per_pair, diff


def test_lm_eval_crows_english_format_equals_polybias(tiny_gpt2, lm_eval_run):
    _, lm = tiny_gpt2
    _, answer = lm_eval_run
    theirs = answer["tasks"]["crows_pairs_english_local"]
    per_pair, _ = _compare(lm, lm_eval_tasks.task_pairs("crows-pairs-revised", "en"), theirs)
    record(measure="crows (lm-eval crows_pairs_english)", peer="lm-eval", peer_version=answer["version"],
           peer_function="lm_eval/tasks/crows_pairs/crows_pairs_english.yaml, utils.process_results "
                         "(simple_evaluate, hf model)",
           agreement=f"pct_stereotype equal ({theirs['pct_stereotype']:.4f}, "
                     f"{theirs['n']} revised English pairs); every pair's decision equal",
           max_difference=per_pair,
           definition_difference="lm-eval counts sent_more > sent_less whatever the direction and "
                                 "reads the text without the model's normaliser: "
                                 "pair_scores(method='lm-eval')",
           test="tests/peers/test_lm_eval.py::test_lm_eval_crows_english_format_equals_polybias")


@pytest.mark.parametrize("dataset,language", GENERATED)
def test_generated_task_equals_polybias(tiny_gpt2, lm_eval_run, dataset, language):
    _, lm = tiny_gpt2
    _, answer = lm_eval_run
    theirs = answer["tasks"][lm_eval_tasks.task_name(dataset, language)]
    per_pair, _ = _compare(lm, lm_eval_tasks.task_pairs(dataset, language), theirs)
    record(measure=f"crows (polybias lm-eval-tasks, {dataset} {language})", peer="lm-eval",
           peer_version=answer["version"],
           peer_function="simple_evaluate on a task written by polybias lm-eval-tasks",
           agreement=f"pct_stereotype equal ({theirs['pct_stereotype']:.4f}, {theirs['n']} pairs)",
           max_difference=per_pair, definition_difference="none (method='lm-eval')",
           test=f"tests/peers/test_lm_eval.py::test_generated_task_equals_polybias[{dataset}-{language}]")
