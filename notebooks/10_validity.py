# ---
# jupyter:
#   kernelspec:
#     display_name: Python (polybias)
#     language: python
#     name: polybias
# ---

# %% [markdown]
# # 10. Metric validity: do the metrics recover a bias of known size?
#
# The source studies report bias scores for real models, where the true bias is unknown.
# Here we **plant** it: a generated corpus pairs male terms with career words and female
# terms with family words in a share `p` of its sentences (`p = 0.5`: no association;
# `p < 0.5`: the reverse one), a model is trained on it, and each metric is computed with
# the project's defaults. A valid metric is
#
# 1. **monotone** in `p` (dose-response),
# 2. on the **right side** of its null (0 for WEAT, 50 % for the pair scores) whenever
#    `p ≠ 0.5`, and near the null at `p = 0.5`,
# 3. **calibrated**: its significance test fires on about `alpha` of balanced models.
#
# Metrics: WEAT on word2vec trained on the corpus; on a tiny masked LM trained on it, the
# CrowS-style stereotype score and JSD score B on generated minimal pairs, Kurita's
# log-probability bias and the Categorical Bias score on templates, and SEAT and CEAT with
# the masked LM as an encoder; on a tiny causal LM, the stereotype score and JSD score.
#
# A seed changes the corpus draw and the model's initialisation and training order, so
# the spread at `p = 0.5` is the spread between equally unbiased models. The metrics'
# own tests (WEAT's permutation over words, the binomial test over pairs) hold the model
# fixed: they answer "is *this model* biased on these words?", not "was the *training
# data* biased?", and the false-positive rates below show what that difference costs.

# %% tags=["parameters"]
language: str = "en"  # planted-corpus language: en, bn or hi
weat_ps: list = [0.1, 0.3, 0.5, 0.7, 0.9]  # planted strengths for WEAT on word2vec
weat_seeds: int = 5  # seeds per strength (0 .. weat_seeds-1)
null_seeds: int = 40  # seeds at p 0.5 (balanced corpora) for the WEAT false-positive rate
weat_n_sentences: int = 4000  # corpus size for word2vec
lm_measures: list = ["crows-causal", "crows-mlm", "template-mlm", "embedding-mlm"]  # LM measures (polybias.studies.validity.MEASURES)
lm_ps: list = [0.1, 0.3, 0.5, 0.7, 0.9]  # planted strengths for the tiny LMs
lm_seeds: int = 1  # seeds per strength for the LMs (each is one trained model)
lm_null_measures: list = ["crows-causal"]  # LM measures whose false-positive rate is estimated
lm_null_seeds: int = 10  # seeds at p 0.5 for those (0 .. lm_null_seeds-1; one model each)
lm_n_sentences: int = 3000  # corpus size for the tiny LMs
lm_n_pairs: int = 100  # minimal pairs scored per LM
alpha: float = 0.05  # significance level of the calibration check
table_file: str = ""  # where to write the tables, e.g. paper/tables/validity.md
figure_file: str = "validity_dose_response.png"  # figure under figures/; empty: none
output_dir: str = "results/validity/interactive"  # run records, relative to the project root

# %%
import pandas as pd
import torch
from polybias import paths, plots, report
from polybias.records import RunRecord, write_record
from polybias.studies import validity
from polybias.studies.parameters import check_parameters

check_parameters("10_validity", alpha=alpha, weat_seeds=weat_seeds, null_seeds=null_seeds,
                 lm_seeds=lm_seeds, lm_null_seeds=lm_null_seeds)
torch.set_num_threads(1)  # tiny models: one thread is fastest and bit-reproducible

# %% [markdown]
# ## Dose-response

# %%
parts = [validity.dose_response(["weat"], weat_ps, list(range(weat_seeds)), language,
                                weat_n_sentences=weat_n_sentences)]
extra_null = list(range(weat_seeds, null_seeds))
if extra_null:
    parts.append(validity.dose_response(["weat"], [0.5], extra_null, language,
                                        weat_n_sentences=weat_n_sentences))
if lm_measures and lm_seeds:
    parts.append(validity.dose_response(lm_measures, lm_ps, list(range(lm_seeds)), language,
                                        lm_n_sentences=lm_n_sentences, lm_n_pairs=lm_n_pairs))
lm_extra_null = list(range(lm_seeds if 0.5 in lm_ps else 0, lm_null_seeds))
if lm_null_measures and lm_extra_null:
    parts.append(validity.dose_response(lm_null_measures, [0.5], lm_extra_null, language,
                                        lm_n_sentences=lm_n_sentences, lm_n_pairs=lm_n_pairs))
measurements = pd.concat(parts, ignore_index=True)
means = (measurements.groupby(["measure", "metric", "p"], sort=False)["value"]
         .agg(["mean", "std", "count"]).reset_index())
means_table = report.markdown_table(means, digits=2)

# %% tags=["nbval-check-output"]
print(means_table)

# %% [markdown]
# ## Summary: monotone? right sign? calibrated?
#
# `rho` is Spearman's correlation of the value with its dose (`p`, or `|p - 0.5|` for the
# Categorical Bias score, a variance with no sign); `at_null` the mean offset from the
# null at `p = 0.5` (`at_null_sd` its spread over seeds); `fpr` the share of the `n_null`
# balanced models the metric's own test calls biased at level `alpha`.

# %%
summary = validity.validity_summary(measurements, alpha=alpha)
summary_table = report.markdown_table(summary, digits=2)

# %% tags=["nbval-check-output"]
print(summary_table)

# %% [markdown]
# The LM rows come from one trained model per strength (`lm_seeds = 1` keeps the
# notebook fast): read them against the spread the WEAT rows show over seeds, and raise
# `lm_seeds` for error bars on them. The causal LM's tests get their false-positive rate
# from `lm_null_seeds` balanced models (the cheapest LM to train); the masked LM's need
# the same with `lm_null_measures`.
#
# `calibrated` is "yes" when the false-positive count is compatible with `alpha` (exact
# binomial test), "no" when it is not, and "too few seeds" below 10 balanced models.
# WEAT's permutation test treats the words as the random
# sample and the embedding as fixed, and the binomial test treats the pairs as the sample
# and the model as fixed; neither accounts for the spread between models trained on
# equally balanced data (`at_null_sd`). Where `calibrated` is "no", comparing two models
# needs that spread over training seeds, not only the test inside one model.

# %%
for (measure, metric), g in summary.groupby(["measure", "metric"]):
    record = RunRecord(
        metric="validity", model=f"planted-{measure}", language=language, test=metric,
        parameters={"weat_ps": weat_ps, "weat_seeds": weat_seeds, "null_seeds": null_seeds,
                    "weat_n_sentences": weat_n_sentences, "lm_ps": lm_ps, "lm_seeds": lm_seeds,
                    "lm_null_measures": lm_null_measures, "lm_null_seeds": lm_null_seeds,
                    "lm_n_sentences": lm_n_sentences, "lm_n_pairs": lm_n_pairs, "alpha": alpha},
        values={"summary": g.iloc[0].to_dict(),
                "measurements": measurements[(measurements.measure == measure)
                                             & (measurements.metric == metric)].to_dict("records")})
    write_record(record, paths.output_path(output_dir))
if table_file:
    report.write_table(means_table + "\n\n" + summary_table, table_file)
if figure_file:
    plots.dose_response(measurements, f"Metrics against planted association ({language})",
                        file=figure_file)
