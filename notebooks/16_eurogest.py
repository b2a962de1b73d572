# ---
# jupyter:
#   kernelspec:
#     display_name: Python (polybias)
#     language: python
#     name: polybias
# ---

# %% [markdown]
# # 16. EuroGEST: gender stereotypes in 29 European languages
#
# EuroGEST (Rowe et al. 2025) translates the 3,565 first-person sentences of GEST
# (Pikuliak et al. 2024), each written to express one of 16 gender stereotypes (1–7
# stereotypically feminine, e.g. *Emotional*, *Beautiful*; 8–16 masculine, e.g. *Tough*,
# *Leaders*), into 29 European languages. Where the translation marks the speaker's gender
# (Czech *Vždy jsem byl* / *byla vůdčí typ*) it has a masculine and a feminine form — a
# minimal pair (20 languages); where it does not, the neutral sentence is scored inside the
# language's scaffolds, `"…," he said` / `"…," she said` (29 languages).
#
# Per sentence the **masculine rate** is P_m / (P_m + P_f), the probability of the
# masculine form over both (mean token log-probability of the part where the forms differ,
# the authors' defaults); per stereotype its mean (no value below `min_sentences`);
# **g_s** is the mean over the masculine stereotypes divided by that over the feminine
# ones (> 1: the model gives masculine stereotypes a male speaker more often). The
# measure reproduces the authors' code to 1e-5 (`tests/reference/test_eurogest_reference.py`).
#
# Offline default: the pinned planted causal LM (`planted-causal`, trained on English
# text with a planted career/family association), a smoke model: its tokenizer spells
# these languages almost letter by letter and knows no Cyrillic letter (Bulgarian, Russian
# and Ukrainian forms become the same unknown tokens: a rate of exactly 0.5), so its rates
# stay near 0.5 and say nothing about these languages. As shipped (and in the sweep) the
# notebook is a smoke run of a few minutes: the sentences that fit the model's 64
# positions (`too_long` skip, counted), a declared subset of 3 per stereotype and subset,
# rates from 3 sentences and 200 bootstrap resamples (`language_override` is on: the
# smoke model is registered for English only). For a real run set `model` to a registered
# causal LM (e.g. a multilingual one), `language_override` off, `per_stereotype` to 0,
# `too_long` to raise, `min_sentences` to 10 (the authors') and `n_bootstrap` to 1000.

# %% tags=["parameters"]
model: str = "planted-causal"  # registered language model (configs/models.yaml or POLYBIAS_MODELS_FILE), a model directory or a hub id
revision: str = ""  # hub branch, tag or 40-hex commit; empty: the registered revision, else main
device: str = "auto"  # auto (CUDA when present; the CPU for embedded and planted models), cpu, cuda or cuda:N
dtype: str = "auto"  # auto (bfloat16 on CUDA for decoder families trained in it, else float32), float32, bfloat16 or float16 (CUDA only)
batch_tokens: int = 0  # padded tokens per forward pass; 0: auto (8192 on the CPU, from free GPU memory on CUDA)
languages: list = []  # EuroGEST languages to score, among cs, sk, pl, sl, hr, bg, ru, uk, it, fr, es, pt, ca, gl, ro, lv, lt, el, de, da, nl, sv, no, mt, ga, et, fi, hu and tr; empty: all 29, by family
language_override: bool = True  # run a registered model on a language its entry does not list (recorded in the run)
subsets: list = ["gendered", "neutral"]  # sentences to score, among gendered and neutral (neutral: in the scaffolds)
per_stereotype: int = 3  # keep the first `per_stereotype` sentences of each stereotype and subset (at least 0; 0: all)
too_long: str = "skip"  # a sentence longer than the model accepts: raise or skip (counted)
causal_bos: str = "prepend"  # causal LMs: prepend or none (prepend: every token given BOS; none: the authors' code on a tokenizer without BOS)
normalise: bool = True  # mean token log-probability (the authors' default); False: summed
differing_only: bool = True  # score only the part where the two forms differ (the authors' default); False: whole sentences
min_sentences: int = 3  # a stereotype with fewer sentences gets no rate (the authors' 10; at least 1)
n_bootstrap: int = 1000  # bootstrap resamples within each stereotype for the intervals (at least 0; 0: none)
seed: int = 0  # seed of the bootstrap (at least 0)
output_dir: str = "results/eurogest/interactive"  # run records, relative to the project root
table_file: str = ""  # where to write the tables, e.g. paper/tables/eurogest_planted-causal.md

# %%
from polybias import models
from polybias.data import eurogest as data
from polybias.results import report
from polybias.runner import validity_eurogest
from polybias.studies import eurogest as study
from polybias.studies import validity
from polybias.studies.parameters import check_parameters

check_parameters("16_eurogest", batch_tokens=batch_tokens, languages=languages, subsets=subsets,
                 per_stereotype=per_stereotype, too_long=too_long, causal_bos=causal_bos,
                 min_sentences=min_sentences, n_bootstrap=n_bootstrap, seed=seed, model=model,
                 language_override=language_override, revision=revision, device=device, dtype=dtype)
chosen = list(languages or data.NEUTRAL_LANGUAGES)
lm = models.load(model, "lm", revision=revision, device=device, dtype=dtype, batch_tokens=batch_tokens)

# %% [markdown]
# ## The files, as read
#
# Sentences per language in the gendered file (pairs) and in the neutral file, each beside
# the count the authors publish (`language_statistics.csv`), and the duplicate rows (same
# English sentence, stereotype and translation as an earlier row), which are kept so that
# the counts are the published ones. Both files end with one empty row, skipped.

# %%
counts = data.file_counts()
counts_table = report.markdown_table(counts, digits=0)

# %% tags=["nbval-check-output"]
report.show_table(counts_table)
print(f"sentence rows per file: {counts.attrs['gest_rows']}; empty rows skipped: {counts.attrs['empty_rows']}")

# %% [markdown]
# ## g_s per language, with intervals
#
# `n` sentences scored (`n_too_long` left out because they do not fit the model), g_s
# with its stratified bootstrap interval, the mean masculine rate of the feminine and of
# the masculine stereotypes, and whether all 16 stereotypes have a rate (the authors
# report g_s only then). One `eurogest` run record per language goes to `output_dir`.

# %%
rates, summary = study.run_eurogest(
    model, chosen, subsets=tuple(subsets), per_stereotype=per_stereotype or None,
    causal_bos=causal_bos, normalise=normalise, differing_only=differing_only,
    min_sentences=min_sentences, n_bootstrap=n_bootstrap, seed=seed, too_long=too_long,
    output_dir=output_dir, lm=lm)
summary_table = report.markdown_table(summary, digits=4)
caption = study.subset_caption(per_stereotype, too_long)

# %% tags=["nbval-check-output"]
print(caption)
report.show_table(summary_table)

# %% [markdown]
# ## Masculine rate by language and stereotype
#
# Rows are languages grouped by family, columns the 16 stereotypes (feminine ones left of
# the line); 0.5 is white, blue below (the feminine form likelier), red above. A
# stereotyped model is red right of the line and blue left of it.

# %%
rates_table = report.markdown_table(
    rates.pivot(index="language", columns="stereotype", values="masculine_rate")
    .reindex(chosen).reset_index(), digits=3)
# a run without a table file (the real models' per-language runs) draws no figure beside the paper
figure = study.rates_heatmap(rates, f"{model}: masculine rate by language and GEST stereotype",
                             file=f"eurogest_{model}.png" if table_file else None)

# %% tags=["nbval-check-output"]
report.show_table(rates_table)

# %% [markdown]
# ## Does the measure find a planted association in these languages?
#
# A known-answer check in three languages of different families and scripts: Czech (West
# Slavic, Latin script), Greek (Hellenic, Greek script) and Latvian (Baltic). Each
# language's gendered pairs are split once, by a hash of the sentence, into a training and
# a held-out half (`polybias.planted.eurogest`). A tiny causal LM (two layers, 64
# dimensions, a word-level tokenizer built from its corpus; batches of 16, 30 epochs, 10 for
# Czech, which has four times the sentences) is
# trained on one form of every training sentence: with probability `p` the form congruent
# with its stereotype (masculine for stereotypes 8–16, feminine for 1–7), else the other.
# `p = 0.9` plants a masculine association of the masculine stereotypes; `p = 0.5` plants
# none. The measure, with the authors' defaults, is computed on the held-out pairs only,
# which the model never saw in either form; g_s gets its stratified bootstrap interval
# (1000 resamples, 95 %). Five planted models and ten balanced ones per language (seeds
# 0, 1, ...), trained and scored by `polybias sweep configs/sweeps/validity-eurogest.yaml`
# (part of `make validity`) into the committed summary `data/validity/eurogest.csv`,
# which this section renders (it trains nothing, so its outputs do not depend on the CPU).
#
# The decision rule is the validity study's (notebook 10): a model's 95 % interval that
# excludes 1 is the two-sided test at 0.05; a planted model is **resolved** when its
# interval lies above 1, a balanced model is a **false positive** when its interval
# excludes 1 on either side, and the false-positive rate gets its Clopper–Pearson interval
# and a verdict only where that interval tells 0.05 from 0.15 ("calibrated": it holds 0.05
# and lies below 0.15; zero false positives decide from 23 balanced models, so the three
# languages are also pooled, `all`). `mean`, `mean_low`, `mean_high`: g_s over the planted
# models with its t-interval; `balanced_mean`: over the balanced ones.

# %%
planted_runs = validity_eurogest.read_frame()
verdicts = validity.interval_verdicts(planted_runs)
verdict_table = report.markdown_table(verdicts.drop(columns=["measure", "metric"]), digits=3)

# %% tags=["nbval-check-output"]
report.show_table(verdict_table)

# %% [markdown]
# The mean masculine rate per stereotype over the models of each language and strength
# (blank: no model rated it; a stereotype needs 10 held-out sentences, which some Greek and
# Latvian ones lack). A planted model is above 0.5 right of stereotype 7 and below it left.

# %%
planted_rates = validity.stereotype_rates(planted_runs)
planted_rates_table = report.markdown_table(planted_rates, digits=2)

# %% tags=["nbval-check-output"]
report.show_table(planted_rates_table)

# %%
if table_file:
    report.write_table("\n\n".join([
        counts_table, caption, summary_table, rates_table,
        "**Planted causal LMs in Czech, Greek and Latvian**: g_s on the held-out pairs, planted "
        "models resolved (interval above 1) and balanced models' false-positive rate "
        "(interval excluding 1) with its Clopper–Pearson interval and verdict", verdict_table,
        "**Mean masculine rate per stereotype** over the planted (p = 0.9) and balanced "
        "(p = 0.5) models", planted_rates_table]), table_file)
