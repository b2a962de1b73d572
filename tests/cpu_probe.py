"""Print the checked tables of a few notebooks' computations (run as a script).

``tests/test_cpu_independence.py`` runs this under several kernel settings
(``ATEN_CPU_CAPABILITY``, ``MKL_ENABLE_INSTRUCTIONS``) that stand in for other CPUs and
asserts that the printed text is identical: a pinned planted model loaded and scored
(Kurita, Categorical Bias and its KL difference), a CrowS-Pairs table, and the
hidden-state table. The calls and print precisions are those of notebooks 04, 05, 06 and
08 with the default sweep's parameters.
"""

from __future__ import annotations

import pandas as pd
import torch
from polybias import models
from polybias.data import templating
from polybias.engines import hidden_states, template_scores
from polybias.metrics import catbias, crows, logprob
from polybias.planted import probes
from polybias.results import report
from polybias.studies import categorical_bias, crows_pairs


def crows_tables() -> str:
    run = crows_pairs.run_crows("planted-mlm-control", "planted", "en", None, None, 200, 1000, 0, False)
    scores = run.stereotype[["bias_type", "n", "score", "ci_low", "ci_high", "binom_p", "ties"]].merge(
        run.jsd[["bias_type", "score"]].rename(columns={"score": "jsd_B"}), on="bias_type")
    return "\n\n".join([report.markdown_table(scores, digits=2, formats={"binom_p": ".1e"}),
                        report.markdown_table(crows.token_table(run.attributed), digits=4)])


def kurita_table() -> str:
    book = probes.planted_templates("bn")
    lm = models.load("planted", "lm", planted=models.Planted(p=0.5, language=book.language, seed=0))
    scores = template_scores.kurita_scores(lm, book, list(book.templates), mode="word")
    summary, per_attribute = logprob.context_study(
        scores, book, "targets", "attributes", "male", "female", "career", "family", "group",
        10_000, 0)
    means = per_attribute.groupby(["structure", "attribute_group"], sort=False)[
        ["fill", "prior", "corrected"]].mean()
    return "\n\n".join([report.markdown_table(summary, digits=3, formats={"pvalue": ".1e"}),
                        report.markdown_table(means.reset_index(), digits=3)])


def catbias_tables() -> str:
    torch.set_num_threads(1)
    book = probes.planted_templates("en")
    names = list(book.templates)
    lm = models.load("planted-mlm-control", "lm")
    ahn_oh = categorical_bias.ahn_oh_cb(lm, book, names, mode="word", ddof=0)
    pll = catbias.pll_cb(categorical_bias.pll_scores(lm, book, names), ddof=0)
    summary = pd.DataFrame([{"ahn_oh_cb": ahn_oh.score, "pll_cb": pll.score}])
    ids = book.lists[book.template(names[0]).slots[book.template(names[0]).the("target")].list].ids
    kl = categorical_bias.distribution_difference(lm, book, names[0], ids[:8], scale="sum")
    row, col, value = catbias.max_kl(kl)
    kl_table = report.markdown_table(pd.DataFrame([{"from": row, "to": col, "kl": value}]),
                                     formats={"kl": catbias.KL_FORMAT})
    return "\n\n".join([report.markdown_table(summary, digits=4), kl_table])


def hidden_state_tables() -> str:
    book = templating.load_templates("identities_en")
    encoder = models.load("minilm-l6", "encoder")
    states, items = hidden_states.identity_states(encoder, book, "person_from_is", "country")
    stats = hidden_states.layer_statistics(states)
    f_sum, p_sum = hidden_states.layer_anova(states, "sum")
    groups = items["feature:region"].tolist()
    eta = {m: hidden_states.group_separation(hidden_states.project(states[:, -1], m, seed=0), groups)
           for m in ("pca", "svd")}
    return "\n\n".join([report.markdown_table(stats, digits=3),
                        report.markdown_table(pd.DataFrame([{"F": f_sum, "p": p_sum}]), digits=1,
                                              formats={"p": ".1e"}),
                        report.markdown_table(pd.DataFrame([eta]), digits=3)])


if __name__ == "__main__":
    print(f"capability {torch.backends.cpu.get_cpu_capability()}")
    for part in (crows_tables, kurita_table, catbias_tables, hidden_state_tables):
        print(f"## {part.__name__}\n{part()}\n", flush=True)
