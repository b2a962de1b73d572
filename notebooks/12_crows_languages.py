# ---
# jupyter:
#   kernelspec:
#     display_name: Python (polybias)
#     language: python
#     name: polybias
# ---

# %% [markdown]
# # 12. CrowS-Pairs across languages: the same pairs, scored in each language
#
# Some minimal-pair datasets hold the same pairs in several languages, with shared pair
# ids: Dutch CrowS-Pairs (Dutch, English, French; 1,463 pairs each), IndiBias (Indian
# English and Hindi), Kaneko et al. 2022 (Japanese and Russian) and Steinborn's ten
# translations of CrowS-Pairs. On such a dataset a model's stereotype score (section 5:
# the share of pairs where the model prefers the more stereotyping sentence; 50 = no
# preference) can be compared between languages on the *same* pairs. Per language we
# give the score with a percentile bootstrap interval over pairs; per pair of languages,
# the difference over the pairs present in both, with a paired bootstrap interval (the
# same resampled pairs in both languages) and the exact McNemar test on the per-pair
# decisions (discordant pairs: stereotyped in one language only).
#
# Offline default: the per-pair scores the Dutch CrowS-Pairs authors (Strazda &
# Spanakis 2025) published for seven masked LMs — BERTje, mBERT and RobBERT on the
# Dutch pairs, BERT and RoBERTa on the English, CamemBERT and FlauBERT on the French.
# We recompute each model's score from those per-pair decisions and compare the
# languages over the aligned pair ids. Set `model` to a registered language model to
# score it instead on every language of `dataset`.

# %% tags=["parameters"]
model: str = "published"  # published: the Dutch authors' per-pair scores; else a registered language model (configs/models.yaml or POLYBIAS_MODELS_FILE), a model directory or a hub id
revision: str = ""  # hub branch, tag or 40-hex commit; empty: the registered revision, else main (model not published)
device: str = "auto"  # auto (CUDA when present; the CPU for embedded and planted models), cpu, cuda or cuda:N
dtype: str = "auto"  # auto (bfloat16 on CUDA for decoder families trained in it, else float32), float32, bfloat16 or float16 (CUDA only)
batch_tokens: int = 0  # padded tokens per forward pass; 0: auto (8192 on the CPU, from free GPU memory on CUDA)
dataset: str = "crows-pairs-dutch"  # dataset with aligned languages: crows-pairs-revised, crows-pairs-steinborn, indibias, crows-pairs-dutch, kaneko2022, eurogest or eurogest-neutral
languages: list = []  # languages of the dataset to compare (two or more); empty: all of them
language_override: bool = False  # run a registered model on a language its entry does not list (recorded in the run)
subset: list = []  # bias types to keep; empty: all
method: str = ""  # nangia, bias-bench, sss, causal, aul, aula or lm-eval; empty: by the model's kind
max_pairs: int = 0  # a scored model: score the same sample of at most this many pairs in every language, stratified by bias type and drawn with `seed` (at least 0; 0: all)
published_groups: dict = {"RoBERTa-based, one per language": ["roberta", "camembert", "robbert"], "other monolingual, one per language": ["bert", "flaubert", "bertje"], "Dutch: multilingual vs monolingual": ["mbert", "bertje", "robbert"]}  # published models compared over the shared pairs (model published only)
n_bootstrap: int = 1000  # bootstrap resamples for the confidence intervals (at least 0; 0: none)
seed: int = 0  # seed of the pair sample and the bootstrap (at least 0)
output_dir: str = "results/crows-languages/interactive"  # run records, relative to the project root
table_file: str = ""  # where to write the tables, e.g. paper/tables/crows-languages_published.md

# %%
from polybias import measures, models
from polybias.results import plots, report
from polybias.studies import crows_languages
from polybias.studies.parameters import check_parameters

check_parameters("12_crows_languages", batch_tokens=batch_tokens, dataset=dataset, method=method,
                 n_bootstrap=n_bootstrap, seed=seed, model=model, languages=languages, max_pairs=max_pairs,
                 language_override=language_override, revision=revision, device=device, dtype=dtype)
published = model == "published"
if not published:  # languages checked before the model loads
    languages = crows_languages.compared_languages(model, dataset, languages or None, language_override)
    lm = models.load(model, "lm", revision=revision, device=device, dtype=dtype,
                     batch_tokens=batch_tokens)

# %% [markdown]
# ## The published per-pair scores, re-aggregated
#
# Each file holds, per pair, the pseudo-log-likelihood of both sentences (the authors ran
# Nangia et al.'s `metric.py`, rounded to 3 decimals) and its own 0/1 decision. The
# score recomputed from the two likelihoods (`score`) is beside the share of the file's
# own decisions (`file_score`); the repository states no aggregate numbers, so these
# are the numbers its files imply. Ties (equal rounded likelihoods) count as not
# stereotyped, as in Nangia et al.'s code.

# %%
if published:
    aggregates = crows_languages.dutch_crows_aggregates(n_bootstrap=n_bootstrap, seed=seed)
    aggregates = aggregates[aggregates.bias_type == "all"].drop(columns="bias_type")
    aggregate_table = report.markdown_table(aggregates, digits=2, formats={"binom_p": ".1e"})
else:  # a scored model: the published aggregates are not this run's (not in its table file)
    aggregate_table = ""

# %% tags=["nbval-check-output"]
report.show_table(aggregate_table or f"This run scores {model}; the Dutch authors' published "
                  "aggregates are the run of model = published.")

# %% [markdown]
# ## Score per language, with intervals
#
# With the published scores each group compares models over the same pairs: one
# monolingual model per language — RoBERTa, CamemBERT and RobBERT share the RoBERTa
# architecture; BERT, FlauBERT and BERTje do not all share one — so language and model
# differ together and a difference belongs to the pair *model + language*, not to the
# language alone; and, on the Dutch pairs, the multilingual mBERT against the two Dutch
# models (the same language, different models). The Dutch adaptation changed the
# direction of 313 pairs and the bias type of 34 against the English file (dataset
# card); the pairs are still matched by id, and "stereotyped" means the model preferred
# the sentence each language's file marks as more stereotyping.

# %%
if not published:
    scored, comparison = crows_languages.run_crows_languages(
        model, dataset, languages, subset or None, method or None, n_bootstrap, seed,
        output_dir, language_override, lm=lm, max_pairs=max_pairs)
    caption = comparison.per_language.attrs["caption"]
    per_language = comparison.per_language.assign(group=f"{model} on {dataset}", label=comparison.per_language.language)
else:
    comparison = crows_languages.published_dutch_comparison(published_groups, n_bootstrap, seed, output_dir)
    per_language, caption = comparison.per_language, ""
shown = per_language[[c for c in ("group", "model", "language", "n", "stereotyped", "ties", "score",
                                  "ci_low", "ci_high", "binom_p") if c in per_language]]
language_table = (f"{caption}\n\n" if caption else "") + report.markdown_table(
    shown, digits=2, formats={"binom_p": ".1e"})

# %% tags=["nbval-check-output"]
report.show_table(language_table)

# %% [markdown]
# ## Paired differences over the aligned pairs
#
# `diff` = `score_a` − `score_b` in percentage points over the `n` pairs both have;
# `a_only`/`b_only` count the pairs stereotyped under one only, and `mcnemar_p` tests
# whether those discordant pairs split evenly.

# %%
paired_table = report.markdown_table(comparison.paired, digits=2, formats={"mcnemar_p": ".1e"})

# %% tags=["nbval-check-output"]
report.show_table(paired_table)

# %%
if table_file:
    report.write_table("\n\n".join(t for t in [aggregate_table, language_table, paired_table] if t),
                       table_file)
_ = plots.scores_by_group(per_language, f"Stereotype score per language, {model} on {dataset}",
                          ylabel=measures.get("crows").axis, file=f"crows-languages_{model}_{dataset}.png")
