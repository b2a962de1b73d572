# ---
# jupyter:
#   kernelspec:
#     display_name: Python (polybias)
#     language: python
#     name: polybias
# ---

# %% [markdown]
# # 11. Do the metrics agree with each other?
#
# Seed 000 (Table 4) measured the same nine Bangla bias categories with WEAT on two static
# models, SEAT, CEAT and Kurita's log-probability bias, and the methods disagree in sign
# for several categories. On real models one cannot tell which metric is right. On models
# of **known** bias one can: here every metric is computed on models trained on corpora
# with a planted male–career / female–family association of strength `p`, and we ask
# (1) do the metrics rank the models the same way (Spearman correlation across models),
# (2) do the signed metrics fall on the same side of their nulls for each model?
#
# WEAT is computed on word2vec trained on the same corpus as the masked LM (same `p`,
# same seed: same data, another model); the stereotype score, JSD score, Kurita effect
# size and Categorical Bias (CB) on the masked LM itself, and SEAT and CEAT on the same
# masked LM used as an encoder.

# %% tags=["parameters"]
language: str = "en"  # planted-corpus language: en, bn or hi
ps: list = [0.1, 0.3, 0.5, 0.7, 0.9]  # planted strengths (one model per strength and seed; each in [0, 1])
seeds: int = 1  # seeds per strength (0 .. seeds-1; at least 1)
measures: list = ["weat", "crows-mlm", "template-mlm", "embedding-mlm"]  # measures compared, among weat, crows-mlm, crows-causal, template-mlm and embedding-mlm
lm_n_sentences: int = 3000  # corpus size of the masked LMs (at least 1)
lm_n_pairs: int = 100  # minimal pairs per model (at least 1)
weat_n_sentences: int = 3000  # corpus size of word2vec (at least 1)
reported: str = "sadhu2024_table4"  # published per-category values of several methods; empty: none
table_file: str = ""  # where to write the tables, e.g. paper/tables/agreement_en.md
figure_file: str = "agreement_heatmap.png"  # figure under figures/; empty: none
output_dir: str = "results/agreement/interactive"  # run records, relative to the project root

# %%
import torch
from polybias.metrics import agreement
from polybias.results import plots, report
from polybias.studies import agreement as agreement_study
from polybias.studies import validity_designs
from polybias.studies.parameters import check_parameters

check_parameters("11_agreement", language=language, ps=ps, seeds=seeds, measures=measures,
                 lm_n_sentences=lm_n_sentences, lm_n_pairs=lm_n_pairs,
                 weat_n_sentences=weat_n_sentences)
torch.set_num_threads(1)

# %% [markdown]
# ## Published values: seed 000 Table 4
#
# Per category, each method's effect size; `n_pos`/`n_neg` count the **significant**
# values of each sign as the paper marks them, and `agree` is false where two significant
# values have opposite signs.

# %%
published_table = agreement_study.published_signs_table(reported)

# %% tags=["nbval-check-output"]
report.show_table(published_table)

# %% [markdown]
# ## Metrics on models of known bias

# %%
measurements = validity_designs.dose_response(measures, ps, list(range(seeds)), language,
                                              weat_n_sentences=weat_n_sentences,
                                              lm_n_sentences=lm_n_sentences, lm_n_pairs=lm_n_pairs)
correlation = agreement.metric_agreement(measurements)
signs = agreement.sign_agreement(measurements)
corr_table = agreement_study.correlation_table(correlation)
sign_table = agreement_study.sign_table(signs)

# %% tags=["nbval-check-output"]
report.show_table(corr_table)
report.show_table(sign_table)

# %% [markdown]
# The signed metrics (WEAT, SEAT, CEAT, stereotype score, JSD score, Kurita) should correlate
# positively with each other and with `p`; CB is a variance across target words and
# grows with the *distance* of `p` from 0.5, so its correlation with the signed metrics
# is near zero by construction, not a disagreement. At `p = 0.5` there is no bias to
# find, and the signs there are noise: disagreement at `p = 0.5` is expected, anywhere
# else it is a failure of a metric.

# %%
agreement_study.write_agreement_records(
    correlation, signs, language,
    {"ps": ps, "seeds": seeds, "measures": measures, "lm_n_sentences": lm_n_sentences,
     "lm_n_pairs": lm_n_pairs, "weat_n_sentences": weat_n_sentences}, output_dir)
if table_file:
    report.write_table("\n\n".join([published_table, corr_table, sign_table]), table_file)
n_models = len(ps) * seeds
if figure_file and n_models >= agreement_study.MIN_MODELS_DRAWN:
    plots.correlation_heatmap(correlation, f"Spearman correlation across {n_models} planted models",
                              file=figure_file)
elif figure_file:  # a correlation over so few models is ±1 at a swap of two: not drawn
    print(f"No heat map: {n_models} models per measure, fewer than the "
          f"{agreement_study.MIN_MODELS_DRAWN} a drawn correlation needs (seeds > 1 gives more); "
          "section 10 correlates each measure with the planted strength over every model of the "
          "validity sweep.")
