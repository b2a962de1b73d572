"""EuroGEST reference code, executed: the measure ``eurogest`` and the scaffolds.

Reference: JacquelineRowe/EuroGEST at b54359247d6a0cfab3247cc02be152e809004cbe,
``evaluate_models/main.py`` (``evaluate_sentence``), ``utils/prompts.py``
(``build_row_prompts``, ``wrap_neutral_sentence``) and ``utils/scoring.py``
(``load_and_aggregate_results``, ``calculate_gs_scores``), run unchanged on tiny random
causal LMs: GPT-2 (byte-level BPE, no BOS: ``causal_bos="none"``) and Llama (its tokenizer
adds BOS: the default ``causal_bos="prepend"``), for the four combinations of the authors'
options ``normalisation`` and ``measure_whole_sequences``.

Layout shim (no reference file is edited or copied): the reference's ``utils`` package reads
its configuration files at import time from ``evaluate_models/configs/``, which the pinned
code does not hold (they are registered data, ``eurogest-scaffolds`` etc.). The test builds
a temporary ``evaluate_models/`` whose ``utils`` is a symbolic link to the reference's and
whose ``configs`` is a symbolic link to the data mirror's, and imports from there.
``main.py`` imports ``fire`` and ``datasets`` at the top (the command line and the hub
dataset, neither used by ``evaluate_sentence``): stand-in modules take their place.
``evaluate_sentence`` ends by generating a continuation of the shared prefix (the authors'
extrinsic check, not part of the measure; with whole sequences it runs past the tiny
models' 64 positions): ``main.generate_new_tokens`` is replaced by a stand-in returning ``""``.
"""

from __future__ import annotations

import importlib
import os
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import torch
from polybias import measures
from polybias.data import eurogest as data
from polybias.data import sources
from polybias.engines.eurogest_scores import gendered_pair_scores
from polybias.metrics.eurogest import masculine_ratio
from refsupport import module, reference_file, stand_ins, tiny, tiny_lm

pytestmark = pytest.mark.usefixtures("torch_one_thread")
REPO = "JacquelineRowe/EuroGEST"
OPTIONS = [(True, False), (False, False), (True, True), (False, True)]  # (normalisation, whole)


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """The reference modules ``main``, ``utils.prompts``, ``utils.scoring`` and the configs."""
    main_file = reference_file(REPO, "evaluate_models/main.py")
    if not os.environ.get("POLYBIAS_DATA_MIRROR"):  # the reference reads its configs folder whole
        pytest.skip("needs data sources 'eurogest-scaffolds', 'eurogest-punctuation' and "
                    "'eurogest-language-configs' in their folder beside the authors' other configs: "
                    "set POLYBIAS_DATA_MIRROR to a folder laid out <owner>+<repo>/<path> holding "
                    "JacquelineRowe+EuroGEST/evaluate_models/configs/")
    configs = Path(sources.fetch("eurogest-scaffolds")).parent
    root = tmp_path_factory.mktemp("eurogest") / "evaluate_models"
    root.mkdir()
    (root / "utils").symlink_to(main_file.parent / "utils", target_is_directory=True)
    (root / "configs").symlink_to(configs, target_is_directory=True)
    (root / "main.py").symlink_to(main_file)
    names = [n for n in sys.modules if n == "utils" or n.startswith("utils.") or n == "main"]
    saved = {n: sys.modules.pop(n) for n in names}
    sys.path.insert(0, str(root))
    try:
        with stand_ins({"fire": module("fire", Fire=None),
                        "datasets": module("datasets", load_dataset=None)}):
            main = importlib.import_module("main")
            prompts = importlib.import_module("utils.prompts")
            scoring = importlib.import_module("utils.scoring")
            setup = importlib.import_module("utils.setup")
        yield {"main": main, "prompts": prompts, "scoring": scoring, "setup": setup}
    finally:
        sys.path.remove(str(root))
        for n in [n for n in sys.modules if n == "utils" or n.startswith("utils.") or n == "main"]:
            del sys.modules[n]
        sys.modules.update(saved)


def test_scaffolds_equal_the_executed_prompt_code(reference, mirror):
    prompts, setup = reference["prompts"], reference["setup"]
    punc_map, scaffolds = setup.load_scaffolds_configs()
    _, language_configs = setup.load_summary_configs()
    compared = 0
    for language in data.NEUTRAL_LANGUAGES:
        name = data.LANGUAGES[language]
        for sentence in data.neutral_sentences(language)["sentence"].head(25):
            inputs, condition, _, _ = prompts.build_row_prompts(
                {"Neutral": sentence}, False, name, scaffolds, punc_map, language_configs)
            ours = data.scaffold(sentence, language, compat_identical_scaffolds=True)
            assert ours == (*inputs["baseline"], condition), (language, sentence)
            default = data.scaffold(sentence, language)
            assert (default == ours) == (language != "it"), language
            compared += 1
        row = data.gendered_pairs(language).iloc[0] if language in data.GENDERED_LANGUAGES else None
        if row is not None:
            inputs, condition, _, _ = prompts.build_row_prompts(
                {"Masculine": row.masculine, "Feminine": row.feminine}, True, name, scaffolds,
                punc_map, language_configs)
            assert (*inputs["baseline"], condition) == (row.masculine, row.feminine, "G")
    assert compared == 29 * 25


def _items(tok, family: str) -> pd.DataFrame:
    """Czech gendered pairs and Danish scaffolded sentences that fit the tiny model (64
    tokens), 10 per stereotype each; pairs whose first token differs are left out (there the
    reference scores only the last token, ``start = -1``; see the engine's docstring)."""
    limit = tok.model_max_length - 8  # the reference also generates a few tokens after the prefix
    parts = []
    for language, subset in (("cs", "gendered"), ("da", "neutral")):
        items = data.eurogest_pairs(language, subsets=(subset,))
        ids_m = tok(items.masculine.tolist())["input_ids"]
        ids_f = tok(items.feminine.tolist())["input_ids"]
        first = 1 if family == "llama" else 0  # llama's BOS comes first
        keep = [max(len(a), len(b)) <= limit and a[first] == b[first] for a, b in zip(ids_m, ids_f, strict=True)]
        parts.append(items[keep].groupby("stereotype").head(10))
    out = pd.concat(parts, ignore_index=True)
    assert out.groupby(["condition", "stereotype"]).size().eq(10).all()
    return out


def _reference_probs(main, model, tok, items, normalisation: bool, whole: bool) -> pd.DataFrame:
    main.generate_new_tokens = lambda *args, **kwargs: ""  # generation is not the measure
    rows = []
    for row in items.itertuples():
        out = main.evaluate_sentence((row.masculine, row.feminine), model, tok, torch.device("cpu"),
                                     normalisation, whole)
        rows.append({"Stereotype_ID": row.stereotype, "masc_prob": out["masc_prob"],
                     "fem_prob": out["fem_prob"]})
    return pd.DataFrame(rows)


@pytest.mark.parametrize("family, causal_bos", [("gpt2", "none"), ("llama", "prepend")])
def test_ratio_equals_the_executed_reference(reference, mirror, tmp_path, family, causal_bos):
    model, tok = tiny(family, initializer_range=0.5)
    lm = tiny_lm(family, initializer_range=0.5)
    items = _items(tok, family)
    scored = gendered_pair_scores(lm, items, causal_bos=causal_bos)
    for normalisation, whole in OPTIONS:
        ref = _reference_probs(reference["main"], model, tok, items, normalisation, whole)
        ref_ratio = (ref.masc_prob / (ref.masc_prob + ref.fem_prob)).to_numpy()
        ours = masculine_ratio(scored, normalise=normalisation, differing_only=not whole)
        np.testing.assert_allclose(ours, ref_ratio, atol=1e-5, rtol=0)
        worst = {"ratio": float(np.abs(ours - ref_ratio).max()), "rate": 0.0, "g_s": 0.0}
        # the authors' aggregation, executed on their own per-sentence probabilities
        folder = tmp_path / f"{family}-{normalisation}-{whole}"
        folder.mkdir()
        for language, part in (("czech", ref.iloc[:160]), ("danish", ref.iloc[160:])):
            part.to_csv(folder / f"{language}.csv", index=False)
        per_stereotype = reference["scoring"].load_and_aggregate_results(str(folder), ["Czech", "Danish"])
        g_s = reference["scoring"].calculate_gs_scores(per_stereotype.reset_index())["g_s_score"]
        for language, rows in (("Czech", scored.iloc[:160]), ("Danish", scored.iloc[160:])):
            result = measures.compute("eurogest", scored=rows, normalise=normalisation,
                                      differing_only=not whole, n_bootstrap=0)
            rates = result.details.set_index("stereotype").masculine_rate.to_numpy()
            np.testing.assert_allclose(rates, per_stereotype[language].to_numpy(), atol=1e-5, rtol=0)
            assert result.value == pytest.approx(g_s[language], abs=1e-5)
            worst["rate"] = max(worst["rate"], float(np.abs(rates - per_stereotype[language]).max()))
            worst["g_s"] = max(worst["g_s"], abs(result.value - g_s[language]))
        print(f"{family} causal_bos={causal_bos} normalisation={normalisation} whole={whole}: largest "
              f"difference ratio {worst['ratio']:.1e}, rate {worst['rate']:.1e}, g_s {worst['g_s']:.1e} "
              f"(g_s {g_s['Czech']:.6f}, {g_s['Danish']:.6f})")


def test_the_minimum_of_ten_sentences_as_the_reference(reference, tmp_path):
    rng = np.random.default_rng(0)
    counts = {s: (9 if s in (3, 12) else 12) for s in range(1, 17)}
    rows = [{"stereotype": s, "logprob_masc": rng.normal(), "n_masc": 1, "logprob_fem": rng.normal(),
             "n_fem": 1} for s, k in counts.items() for _ in range(k)]
    ours = pd.DataFrame(rows)
    ref = pd.DataFrame({"Stereotype_ID": ours.stereotype, "masc_prob": np.exp(ours.logprob_masc),
                        "fem_prob": np.exp(ours.logprob_fem)})
    ref.to_csv(tmp_path / "czech.csv", index=False)
    per_stereotype = reference["scoring"].load_and_aggregate_results(str(tmp_path), ["Czech"])
    g_s = reference["scoring"].calculate_gs_scores(per_stereotype.reset_index())["g_s_score"]["Czech"]
    result = measures.compute("eurogest", scored=ours, n_bootstrap=0)
    rates = result.details.set_index("stereotype").masculine_rate
    assert rates.isna().tolist() == per_stereotype["Czech"].isna().tolist() and rates[[3, 12]].isna().all()
    np.testing.assert_allclose(rates.dropna(), per_stereotype["Czech"].dropna(), atol=1e-12)
    assert result.value == pytest.approx(g_s, abs=1e-12)
