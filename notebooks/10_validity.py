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
# 1. **monotone** in `p` (dose-response) over many independently trained models,
# 2. on the **right side** of its null (0 for the effect sizes, 50 % for the pair scores)
#    whenever `p ≠ 0.5`, with an interval that separates it from the null at moderate `p`,
# 3. **calibrated**: its significance test fires on about `alpha` of balanced models,
# 4. **sensitive** at the sizes people run (words, pairs, templates, occurrences).
#
# Models: word2vec (WEAT); a tiny masked LM (CrowS-style stereotype score and JSD score B
# on generated minimal pairs; Kurita's log-probability bias, Ahn & Oh's Categorical Bias
# and the PLL-based CB on templates; SEAT and CEAT with the MLM as an encoder; in English
# also the interaction CB of target × pronoun, and the pronoun alone as a control on which
# nothing is planted); a tiny causal LM (stereotype and JSD scores).
#
# Training hundreds of models does not fit in a notebook: the validity sweep
# (`make validity`, `configs/sweeps/validity.yaml`, `polybias.runner.validity_sweep`) trains
# them, caches each under its training spec, writes one record per model, and collects
# the records into the committed summary `data/validity/measurements.csv` (one row per
# model, metric and size, with the sha256 of the records it came from). This notebook
# renders that summary; it trains nothing, so its outputs do not depend on the CPU.
#
# A seed changes the corpus draw and the model's initialisation and training order, so
# the spread at `p = 0.5` is the spread between equally unbiased models. The metrics'
# own tests (WEAT's permutation over words, the binomial test over pairs) hold the model
# fixed: they answer "is *this model* biased on these words?", not "was the *training
# data* biased?", and the false-positive rates below show what that difference costs.

# %% tags=["parameters"]
language: str = "en"  # planted-corpus language: en, bn or hi
summary_dir: str = "data/validity"  # committed summary of the validity sweep (make validity)
alpha: float = 0.05  # significance level of the metrics' own tests (in (0, 1))
too_high: float = 0.15  # a false-positive rate the calibration verdict must be able to rule out (in (0, 1); above alpha)
power_target: float = 0.8  # power that defines the minimum detectable bias (in (0, 1))
table_file: str = ""  # where to write the tables, e.g. paper/tables/validity_en.md
figure_prefix: str = "validity"  # figures/<prefix>_dose_response_<language>.png and _mdb_; empty: none
output_dir: str = "results/validity/interactive"  # run record, relative to the project root

# %%
import pandas as pd
from polybias import paths
from polybias.results import plots, report
from polybias.results.records import write_record
from polybias.runner import validity_diagnosis, validity_sweep
from polybias.studies import validity, validity_statistics
from polybias.studies.parameters import check_parameters

check_parameters("10_validity", language=language, alpha=alpha, too_high=too_high,
                 power_target=power_target)
frame, records, n_records = validity_sweep.language_summary(summary_dir, language)
everywhere = validity_sweep.read_summary(paths.project_root() / summary_dir)
encoder_all = validity_diagnosis.read_frame(summary_dir, validity_diagnosis.ENCODER_FILE)
encoder = encoder_all[encoder_all["language"] == language]
layers_all = validity_diagnosis.read_frame(summary_dir, validity_diagnosis.LAYERS_FILE)
layers = layers_all[layers_all["language"] == language]

# %% [markdown]
# The sweep's blocks of this language: models planned (`configs/sweeps/validity.yaml`)
# and models whose record the summary holds. A block not complete is reported as such,
# and its tables hold the models there are (the `n` columns).

# %% tags=["nbval-check-output"]
blocks = pd.DataFrame(records.get("blocks", []), columns=["language", "family", "planned", "done"])
blocks_text = report.markdown_table(blocks[blocks["language"] == language].drop(columns="language"))
print(f"{n_records} models of language {language}; records sha256 {records['records_sha256'][:16]}")
report.show_table(blocks_text)

# %% [markdown]
# ## How strong must a planted model be?
#
# With notebook 10's earlier training (masked LM: 10 epochs of batch 16 on 3000
# sentences; causal LM: 5 epochs of batch 16) the LMs did not learn a `p = 0.7`
# association. A quick check on one measure, the stereotype score on 100 minimal pairs
# at `p = 0.7` (English, seeds 1–3, null 50), measured these options:
#
# | model | training | stereotype score at p = 0.7 |
# |---|---|---|
# | masked LM | 10 epochs, batch 16 (earlier) | 51, 59, 47 |
# | masked LM | 30 epochs, batch 64 | 99, 100 |
# | masked LM | 30 epochs, batch 128, lr 2e-3 | 74 |
# | masked LM, hidden size 32 | 30 epochs, batch 64 | 57 |
# | causal LM | 5 epochs, batch 16 (earlier) | 51, 50, 49 |
# | causal LM | 15 epochs, batch 16 | 100 |
# | causal LM | 15 epochs, batch 64 | 100, 61 |
#
# What resolves `p = 0.7` is the number of examples seen (three times as many), not the
# model's width (a smaller model learns less; per example, training time grows with the
# batch on a CPU). The sweep trains both LMs for 30 epochs of batch 64 on 3000 sentences
# (`configs/sweeps/validity.yaml`, about 30 s of one CPU core per masked LM). The
# Kurita effect sizes of the two 30-epoch masked LMs were 1.78 and 1.92 (earlier: −0.52,
# 1.87, 0.51).

# %% [markdown]
# ## Dose-response over models
#
# Per strength: the number of independently trained models `n`, the mean value and its
# 95 % t-interval over models (default sizes: 8 words per set, 100 pairs, 3 templates,
# 20 occurrences per word).

# %%
doses = validity.dose_table(frame)
dose_text = report.markdown_table(doses.drop(columns="language"), digits=2,
                                  formats={c: ".3g" for c in ("mean", "low", "high")})

# %% tags=["nbval-check-output"]
report.show_table(dose_text)

# %% [markdown]
# Per measure: Spearman's ρ of the value with its dose over all models (`p`, or
# `|p − 0.5|` for the variances of the CB family, which have no sign) and its p-value
# (`rho_p`), whether the means are monotone and on the planted side of the null, and the
# strength each measure **resolves**: from that `p` (and its mirror `1 − p`) on, every
# interval lies on the planted side of the null (CB family: above the interval at
# `p = 0.5`). A blank means not even `p = 0.9` is resolved.

# %%
summary = validity.dose_summary(frame)
summary_text = report.markdown_table(summary.drop(columns="language"), digits=2,
                                     formats={"rho_p": ".1e"})

# %% tags=["nbval-check-output"]
report.show_table(summary_text)

# %% [markdown]
# ## Calibration with power
#
# The false-positive rate of each measure's own test at level `alpha` over the balanced
# (`p = 0.5`) models, with its exact (Clopper–Pearson) 95 % interval. A verdict is given
# only when the interval can tell `alpha` from `too_high`: "calibrated" (holds `alpha`,
# lies below `too_high`), "too liberal" (lies above `alpha`), "conservative" (lies below
# it), otherwise "undecided". `at_null` is the mean offset from the null at `p = 0.5`
# and `at_null_sd` the spread between equally unbiased models.
#
# How many balanced models the rule needs: "calibrated" requires the upper bound of the
# interval below `too_high`, so `k` false positives decide only from the `n` below (0 of
# 20 has the bound 0.168 and cannot; 0 of 40 has 0.088). A test whose rate is exactly
# `alpha` fires on about `alpha · n` models and is decided from about 50 models on; a
# rate between `alpha` and `too_high` needs more (with the defaults: 93 models at a rate
# of 0.08, about 130 near 0.09, 95 at 0.1, where the verdict is "too liberal"), which is
# why the sweep plans 120 balanced models for a block whose rate lay there at 80.

# %%
needed = pd.DataFrame({"false_positives": range(6)})
needed["n_needed"] = [validity_statistics.calibration_sample_size(k, too_high) for k in needed["false_positives"]]
needed_text = report.markdown_table(needed)

# %% tags=["nbval-check-output"]
report.show_table(needed_text)

# %%
calibration = validity.calibration_table(frame, alpha=alpha, too_high=too_high)
calibration_text = report.markdown_table(calibration.drop(columns="language"), digits=3,
                                         formats={"at_null": ".3g", "at_null_sd": ".3g"})

# %% tags=["nbval-check-output"]
report.show_table(calibration_text)

# %% [markdown]
# The same rule over the balanced models of the three languages pooled. Each block
# trains the same model design on the same planted design, so a test's false-positive
# rate is one quantity across languages unless the language changes it; pooled, a rate
# a single language cannot place is decided with three times the models. A pooled
# verdict holds for the design, and a language whose own verdict differs from it is
# named in the paper.

# %%
pooled = validity.calibration_table(everywhere.assign(language="all"), alpha=alpha,
                                    too_high=too_high)
pooled_text = report.markdown_table(pooled.drop(columns="language"), digits=3,
                                    formats={"at_null": ".3g", "at_null_sd": ".3g"})

# %% tags=["nbval-check-output"]
report.show_table(pooled_text)

# %% [markdown]
# ## Minimum detectable bias
#
# For each measure and size, the detection rate over the models of each strength: with a
# test, the test rejects at `alpha` in the planted direction; for the CB family (no test)
# the value exceeds the 95 % quantile of the balanced models of the same size. The
# minimum detectable bias (`mdb`) is the smallest planted `p` from which at least
# `power_target` of the models detect it; `rate_at_0.5` is the same rule's rate on the
# balanced models (its false-positive side). A blank `mdb`: not detected with that power
# even at the strongest `p`.

# %%
mdb = validity.mdb_table(frame, alpha=alpha, target=power_target)
mdb_text = report.markdown_table(mdb.drop(columns="language"), digits=2)

# %% tags=["nbval-check-output"]
report.show_table(mdb_text)

# %% [markdown]
# ## CEAT's false positives: cause and correction
#
# CEAT pools per-sample effect sizes with a random-effects model and refers the pooled
# CES to a normal distribution with the standard error of the pooling. Three suspects for
# its excess false positives on balanced models: (1) DerSimonian–Laird's τ² estimated
# from few samples (then the excess would shrink as the samples per word grow); (2) the
# dependence between samples: every sample reuses the *same* words, so a word's own
# association, which on a balanced model is noise fixed by training, is shared by all
# samples; (3) the reference distribution: the normal p treats those words as fixed and
# only the contexts as random, so it tests "do these words, averaged over contexts,
# associate?", and with more samples it estimates the words' noise ever more precisely.
# (2) and (3) are one cause seen from two sides. The test that separates (1) from (2)–(3)
# is the rate at 5 against 20 occurrences per word; the correction for (2)–(3) is a
# word-permutation p (`polybias.metrics.ceat.ceat_permutation`): CES, with the whole
# random-effects pooling redone, over re-splits of the target words, each word keeping
# its occurrence vectors; exact under exchangeable words for any number of samples.
#
# On the planted masked LMs (`ceat-ces`: the normal p; `ceat-ces-perm`: the
# word-permutation p, scored on the balanced models added to the sweep under its scoring
# version 2):

# %%
ceat_metrics = ["ceat-ces", "ceat-ces-perm"]
ceat_mlm = validity.calibration_by_size(frame, ceat_metrics, alpha=alpha, too_high=too_high)
both = validity.same_models(frame, "ceat-ces-perm")
ceat_mlm_paired = validity.calibration_by_size(both, ceat_metrics, alpha=alpha, too_high=too_high)
ceat_mlm_pooled = validity.calibration_by_size(
    validity.same_models(everywhere, "ceat-ces-perm").assign(language="all"), ceat_metrics,
    alpha=alpha, too_high=too_high)
ceat_mlm_text = "\n\n".join([
    "All balanced models of this language:",
    report.markdown_table(ceat_mlm.drop(columns="language"), digits=3),
    "The models scored with both p-values (this language):",
    report.markdown_table(ceat_mlm_paired.drop(columns="language"), digits=3),
    "The models scored with both p-values, the three languages pooled:",
    report.markdown_table(ceat_mlm_pooled.drop(columns="language"), digits=3)])

# %% tags=["nbval-check-output"]
report.show_table(ceat_mlm_text)

# %% [markdown]
# On the known-answer encoder's balanced models (below: each with its own random word
# vectors, the word-level noise of a trained model, and nothing planted), many more of
# them:

# %%
ceat_encoder = validity.calibration_by_size(encoder, ["ceat-ces", "ceat-ces-perm", "seat-effect-size"],
                                            alpha=alpha, too_high=too_high)
ceat_encoder_text = report.markdown_table(ceat_encoder.drop(columns="language"), digits=3)

# %% tags=["nbval-check-output"]
report.show_table(ceat_encoder_text)

# %% [markdown]
# ## SEAT and CEAT on a known-answer encoder
#
# Is it the measures or the model? The planted association lives in the masked LM's
# output distribution (which words it predicts next to which), while SEAT and CEAT read
# vectors. Here the association is placed in the vectors themselves
# (`polybias.planted.static.corpus_association_embedding`): every target word of the
# planted corpus of strength `p` leans towards the career or the family direction by its
# share of career minus family co-occurrences (about `2p − 1` for a male word), on a
# random unit vector of its own (64 dimensions, gain 0.5). SEAT reads it through the
# sweep's bleached sentences (mean of the words' vectors), CEAT through occurrences in a
# fresh corpus (the word's vector plus half the mean of its context words' vectors).
# Five encoders per strength, sixty balanced; the same sizes as the sweep.

# %%
encoder_doses = validity.dose_table(encoder)
encoder_summary = validity.dose_summary(encoder)
encoder_mdb = validity.mdb_table(encoder, alpha=alpha, target=power_target)
encoder_text = "\n\n".join([
    report.markdown_table(encoder_doses.drop(columns="language"), digits=2,
                          formats={c: ".3g" for c in ("mean", "low", "high")}),
    report.markdown_table(encoder_summary.drop(columns="language"), digits=2, formats={"rho_p": ".1e"}),
    report.markdown_table(encoder_mdb.drop(columns="language"), digits=2)])

# %% tags=["nbval-check-output"]
report.show_table(encoder_text)

# %% [markdown]
# ## Direction or strength?
#
# On the trained masked LMs SEAT and CEAT are large at strong `p`, but with a sign that
# changes from model to model. Per measure: Spearman's ρ of the value against `p`
# (direction and strength), ρ of its distance from the null against `|p − 0.5|` (strength
# only, `rho_abs`), the share of the models with `p ≠ 0.5` on the planted side
# (`right_sign`; 0.5 is a coin flip), and how many of them the measure's own test finds
# significant in the planted direction (`detected`) and in the other (`detected_wrong`);
# first on the sweep's models, then on the known-answer encoder.

# %%
signed = validity.sign_and_magnitude(frame, alpha=alpha)
direction_text = "\n\n".join([
    report.markdown_table(signed.drop(columns="language"), digits=2, formats={"rho_abs_p": ".1e"}),
    report.markdown_table(validity.sign_and_magnitude(encoder, alpha=alpha).drop(columns="language"),
                          digits=2, formats={"rho_abs_p": ".1e"})])

# %% tags=["nbval-check-output"]
report.show_table(direction_text)

# %% [markdown]
# ## Where is the planted association in the masked LM?
#
# SEAT and CEAT at every layer of pinned planted masked LMs (English; layer 0 is the
# input embeddings), beside Kurita's effect size, which reads the output distribution
# (`output`), with the columns of the table above and `agrees_with_output`: the share of
# the models with `p ≠ 0.5` whose value has the sign of the same model's Kurita score.
# Two trainings (`polybias.runner.validity_diagnosis.LAYERS`): 10 epochs of batch 16
# (learns the association at p = 0.1 and 0.9 only; seed 0 at every strength, seeds 1–3
# at 0.1 and 0.9), and the sweep's 30 epochs of batch 64 on four of the sweep's models,
# two whose last-layer SEAT the sweep found on the planted side and two on the other.

# %%
if len(layers):
    layer_text = report.markdown_table(validity.layer_table(layers, alpha=alpha), digits=2,
                                       formats={"rho_p": ".2g"})
else:
    layer_text = f"The per-layer probe runs on the English models (none for {language})."

# %% tags=["nbval-check-output"]
report.show_table(layer_text)

# %% [markdown]
# ## Findings
#
# The tables above in sentences (the minimum detectable bias at the default sizes); the
# paper's validity section quotes these.

# %%
text = validity.findings(summary, calibration, mdb[mdb["default"]], alpha=alpha,
                         target=power_target)

# %% tags=["nbval-check-output"]
print(text)

# %%
write_record(validity.validity_record(
    doses, {"summary": summary, "calibration": calibration, "calibration_pooled": pooled, "mdb": mdb,
            "ceat_calibration": ceat_mlm, "encoder_calibration": ceat_encoder,
            "encoder_summary": encoder_summary, "encoder_mdb": encoder_mdb, "layers": layers,
            "direction": signed},
    language=language, parameters={"summary_dir": summary_dir, "alpha": alpha, "too_high": too_high,
                                   "power_target": power_target},
    data_sha256={"records": records["records_sha256"]}), paths.output_path(output_dir))
if table_file:
    report.write_table("\n\n".join([
        text,
        "**Models** (planned in the sweep, and in this summary)", blocks_text,
        "**Dose-response** (mean and 95 % interval over models per planted strength)", dose_text,
        "**Monotonicity, sign and resolved strength**", summary_text,
        f"**Calibration** (false-positive rate at α = {alpha:g} over balanced models, "
        "Clopper–Pearson interval)", calibration_text,
        "**Calibration, the three languages pooled** (the same rule over every language's "
        "balanced models)", pooled_text,
        f"**Minimum detectable bias** ({power_target:.0%} power)", mdb_text,
        "**Balanced models the calibration verdict needs** (k false positives)", needed_text,
        "**CEAT's false-positive rate, normal against word-permutation p** (planted masked "
        "LMs, every size)", ceat_mlm_text,
        "**The same on the known-answer encoder's balanced models**", ceat_encoder_text,
        "**SEAT and CEAT on the known-answer encoder** (dose-response; monotonicity and "
        "resolved strength; minimum detectable bias)", encoder_text,
        "**Direction or strength** (the sweep's models; the known-answer encoder)", direction_text,
        "**Per layer of the planted masked LM** (SEAT and CEAT; Kurita at the output)",
        layer_text]), table_file)
if figure_prefix:
    plots.dose_response(doses, f"Metrics against planted strength ({language}; mean and 95 % "
                        "interval over models)", points=frame[frame["default"]],
                        axis=validity.axis_titles(doses), titles=validity.panel_titles(doses),
                        file=f"{figure_prefix}_dose_response_{language}.png")
    power = validity.power_table(frame, alpha=alpha)
    plots.power_curves(power, f"Detection rate by size ({language}; line: {power_target:.0%} power)",
                       target=power_target, titles=validity.panel_titles(power),
                       file=f"{figure_prefix}_mdb_{language}.png")
