"""CrowS-Pairs (notebook 05): the pairs of a registered dataset or the planted minimal
pairs, scored by a model with one run record (:func:`run_crows`)."""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from ..metrics.crows import (
    METHODS,
    CrowsError,
    jsd_attributions,
    jsd_stereotype_score,
    pair_scores,
    stereotype_score,
)


def load_pairs(dataset: str, language: str = "en", bias_types: list[str] | None = None,
               n: int = 200, seed: int = 0) -> pd.DataFrame:
    """Pairs to evaluate: a registered CrowS-Pairs dataset, or ``"planted"`` minimal pairs.

    ``"planted"`` pairs come from :func:`polybias.planted.synthetic.minimal_pairs` (``n`` pairs,
    ``seed``) and match the vocabulary of the models trained on planted corpora.
    """
    if dataset == "planted":
        from ..planted.synthetic import minimal_pairs

        pairs = minimal_pairs(n=n, language=language, seed=seed)
        if bias_types:
            unknown = sorted(set(bias_types) - set(pairs.bias_type))
            if unknown:
                raise CrowsError(f"planted pairs have no bias type {', '.join(unknown)}")
        return pairs
    from ..data.crowspairs import load_crows_pairs

    # drop only broken pairs (empty or identical sentences); keep the benchmark's non-minimal ones
    return load_crows_pairs(dataset, language, bias_types=bias_types or None, on_invalid="drop",
                            max_diff=None)


@dataclass
class CrowsRun:
    """Everything one CrowS evaluation computed (plain frames)."""

    scored: pd.DataFrame
    stereotype: pd.DataFrame
    attributed: pd.DataFrame
    jsd: pd.DataFrame


def run_crows(
    model,
    dataset: str = "planted",
    language: str = "en",
    bias_types: list[str] | None = None,
    method: str | None = None,
    n_pairs: int = 200,
    n_bootstrap: int = 1000,
    seed: int = 0,
    compat_fourth_root: bool = False,
    output_dir: str | None = None,
    causal_bos: str = "prepend",
    on_unmodified: str = "raise",
    **engine,
) -> CrowsRun:
    """Stereotype score and JSD attribution of an LM on a pair set.

    ``model`` is a loaded :class:`polybias.engines.scoring.LanguageModel` or what
    :func:`polybias.models.load` takes (a registered name, a model directory, a hub id).
    ``causal_bos`` and ``on_unmodified`` go to :func:`pair_scores` (bias-bench compat:
    ``method="bias-bench", causal_bos="first-token", on_unmodified="skip"``). Writes two
    run records (``crows`` and ``crows-jsd``) into ``output_dir`` when given.
    """
    from .. import models, paths
    from ..records import RunRecord, model_fields, write_record

    if method is not None and method not in METHODS:
        raise CrowsError(f"unknown method {method!r}; use one of {METHODS}")
    pairs = load_pairs(dataset, language, bias_types, n_pairs, seed)
    from ..engines.scoring import LanguageModel

    lm = model if isinstance(model, LanguageModel) else models.load(model, "lm")
    model = lm.name
    scored = pair_scores(lm, pairs, method, causal_bos=causal_bos, on_unmodified=on_unmodified,
                         **engine)
    stereo = stereotype_score(scored, n_bootstrap=n_bootstrap, seed=seed)
    attributed = jsd_attributions(lm, pairs, compat_fourth_root, **engine)
    jsd = jsd_stereotype_score(attributed, n_bootstrap=n_bootstrap, seed=seed)
    if output_dir is not None:
        params = {"dataset": dataset, "bias_types": bias_types or [], "n_pairs": n_pairs,
                  "n_bootstrap": n_bootstrap, "seed": seed}
        used = method or ("causal" if lm.kind == "causal" else "nangia")
        scoring_options = {"method": used, "causal_bos": causal_bos, "on_unmodified": on_unmodified}
        for metric, table, extra in (("crows", stereo, scoring_options),
                                     ("crows-jsd", jsd, {"compat_fourth_root": compat_fourth_root})):
            record = RunRecord(
                metric=metric, model=model, language=language, test=dataset,
                parameters={**params, **extra}, values={"by_bias_type": table.to_dict("records")},
                **model_fields(lm))
            write_record(record, paths.output_path(output_dir))
    return CrowsRun(scored, stereo, attributed, jsd)
