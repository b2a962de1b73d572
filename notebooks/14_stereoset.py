# ---
# jupyter:
#   kernelspec:
#     display_name: Python (polybias)
#     language: python
#     name: polybias
# ---

# %% [markdown]
# # 14. StereoSet in five languages
#
# StereoSet (Nadeem et al. 2021) gives a language model a context and three candidates —
# a stereotypical, an anti-stereotypical and an unrelated one — either a word for the
# blank of a sentence (intrasentence) or a sentence to follow the context
# (intersentence). The **SS** score is the share of items where the model prefers the
# stereotype to the anti-stereotype (50 = no preference), the **LM score** the share of
# comparisons where it prefers a meaningful candidate to the unrelated one, and
# **ICAT** = LMS · min(SS, 100 − SS) / 50 combines them. The paper averages LMS and SS
# over target terms (`/t` below, the default); Öztürk et al. (2023), who machine-translated
# the dev set into German, French, Spanish and Turkish, also pool them over items.
#
# Offline default (`model = "published"`): from Öztürk et al.'s 54 per-candidate
# prediction files and the gold labels of the items (read from the pickled DataFrames by
# a restricted unpickler), every row of their results workbook is recomputed and printed
# beside the published value. Then the stereotype decisions of one published model are
# compared across the five languages over the shared item ids. Set `model` to a
# registered language model to score it instead (`polybias.studies.stereoset.candidate_scores`).

# %% tags=["parameters"]
model: str = "published"  # published: Öztürk et al.'s prediction files; else a registered language model (configs/models.yaml), a model directory or a hub id
revision: str = ""  # hub branch, tag or 40-hex commit; empty: the registered revision, else main (model not published)
device: str = "auto"  # auto (CUDA when present; the CPU for embedded and planted models), cpu, cuda or cuda:N
dtype: str = "auto"  # auto (bfloat16 on CUDA for decoder families trained in it, else float32), float32, bfloat16 or float16 (CUDA only)
batch_tokens: int = 0  # padded tokens per forward pass; 0: auto (8192 on the CPU, from free GPU memory on CUDA)
language: str = "en"  # language a scored model runs on: en, de, fr, es or tr (model not published)
languages: list = []  # languages to compare over shared item ids, among en, de, fr, es and tr; empty: every language of the published model's runs (published) or only `language`
language_override: bool = False  # run a registered model on a language its entry does not list (recorded in the run)
published_model: str = "bert-base-multilingual-cased_BertLM_BertNextSentence"  # published run, without its language, compared across languages
tasks: list = ["intrasentence", "intersentence"]  # StereoSet tasks to score, among intrasentence and intersentence (a masked LM scores intersentence items only with a next-sentence head)
intersentence: str = ""  # causal LMs: conditional or stereoset; empty: conditional
aggregate: str = "per-target"  # per-target or micro (per-target: Nadeem et al.; micro: pooled over items)
limit: int = 0  # score only the first `limit` items of each task; 0: all
max_items: int = 0  # score a sample of at most this many items of each task, stratified by bias type and drawn with `seed` (at least 0; 0: all)
n_bootstrap: int = 1000  # bootstrap resamples over items for the intervals (at least 0; 0: none)
seed: int = 0  # seed of the item sample and the bootstrap (at least 0)
output_dir: str = "results/stereoset/interactive"  # run records, relative to the project root
table_file: str = ""  # where to write the tables, e.g. paper/tables/stereoset_published.md

# %%
from polybias import models
from polybias.results import plots, report
from polybias.studies import stereoset as study
from polybias.studies.parameters import check_parameters

check_parameters("14_stereoset", batch_tokens=batch_tokens, language=language, languages=languages,
                 tasks=tasks, intersentence=intersentence, aggregate=aggregate, limit=limit, max_items=max_items,
                 n_bootstrap=n_bootstrap, seed=seed, model=model,
                 language_override=language_override, published_model=published_model,
                 revision=revision, device=device, dtype=dtype)
published = model == "published"
if not published:
    lm = models.load(model, "lm", revision=revision, device=device, dtype=dtype,
                     batch_tokens=batch_tokens)

# %% [markdown]
# ## Öztürk et al.'s results workbook, recomputed
#
# Each cell is the published value (two decimals); where our recomputation from the
# prediction files differs at that precision it follows after `≠`. Columns: `n` items;
# `LMS`, `SS`, `ICAT` pooled over items; `LMS/t`, `SS/t`, `sd SS/t`, `mean ICAT/t`, `ICAT/t`
# per target term (the workbook's "Multi Class" LM and SS scores, the population standard
# deviation of the per-target SS, the mean of the per-target ICAT and the ICAT of the
# per-target means). The intersentence rows `…__GPT2LM_c_…` are read from the
# `…_GPT2LM_GPT2LM_c_…` files; the overall row of `t5-base_T5LM_ModelNSP_en` counts
# 4,226 items because it was computed on the German file's 2,103 intrasentence items (it
# reproduces that way, and only that way). The two German mBERT rows do not reproduce:
# the published intrasentence predictions are 16 of 4,206 comparisons away from the
# numbers in the workbook, while the intersentence row of the same file matches.

# %%
if published:
    recomputed = study.recompute_published()
    summary = study.match_summary(recomputed)
    summary_table = report.markdown_table(summary)
    sheet_tables = {sheet: study.published_table(recomputed, sheet)
                    for sheet in ("intrasentence", "intersentence", "overall")}
    unequal = recomputed.loc[~recomputed.equal, ["sheet", "run", "note"]]
    unequal_table = report.markdown_table(unequal) if len(unequal) else "(every row equal)"
else:  # a scored model: the published workbook is not this run's (nothing shown)
    summary_table, sheet_tables, unequal_table = "", {}, ""

# %% tags=["nbval-check-output"]
report.show_table(summary_table or f"This run scores {model}; the recomputation of Öztürk et "
                  "al.'s workbook is the run of model = published.")
report.show_table(unequal_table)

# %% tags=["nbval-check-output"]
for sheet, text in sheet_tables.items():
    report.show_table(f"### {sheet}\n\n{text}\n")
if not sheet_tables:
    report.show_table(f"This run scores {model}; the workbook's sheets are the run of model = published.")

# %% [markdown]
# ## Scores per language, with intervals
#
# LMS, SS and ICAT (`aggregate`) per language and task with a seeded percentile bootstrap
# interval of SS over items and an exact binomial test of the share of stereotyped items
# against 50 %.

# %%
if published:
    decisions = study.published_decisions(published_model, languages or None)
    label = published_model
else:
    decisions = {}
    for lang in (languages or [language]):
        kept = [t for t in tasks if t == "intrasentence" or lm.kind == "causal"]
        decisions[lang], _ = study.run_stereoset(
            lm, model, lang, output_dir, tasks=tuple(kept), limit=limit, max_items=max_items,
            intersentence=intersentence, aggregate=aggregate, n_bootstrap=n_bootstrap, seed=seed,
            model_revision=lm.revision)
    label = model
scores = study.language_scores(decisions, aggregate=aggregate, n_bootstrap=n_bootstrap, seed=seed)
caption = "" if published else study.sample_caption(max_items, seed)
scores_table = (f"{caption}\n\n" if caption else "") + report.markdown_table(
    scores, digits=2, formats={"binom_p": ".1e"})

# %% tags=["nbval-check-output"]
report.show_table(scores_table)

# %% [markdown]
# Per bias type (both tasks together), with the same interval and test:

# %%
bias_table = report.markdown_table(
    study.bias_type_scores(decisions, aggregate=aggregate, n_bootstrap=n_bootstrap, seed=seed),
    digits=2, formats={"binom_p": ".1e"})

# %% tags=["nbval-check-output"]
report.show_table(bias_table)

# %% [markdown]
# ## Languages compared over the shared items
#
# Items and candidates keep their ids across the translations (German has 2,103 of the
# 2,106 intrasentence items), so the stereotype decision of the same item can be compared
# between languages: `score` is the pooled SS per language with its bootstrap interval,
# `diff` the paired difference over the items both languages have (paired bootstrap
# interval), `a_only`/`b_only` the items stereotyped in one language only and
# `mcnemar_p` the exact McNemar test on them — the computation of section 12 for
# CrowS-Pairs. A difference between languages belongs to the model *and* the machine
# translation together: translation changes agreement, articles and fluency of the
# candidates (dataset card, `data/datasets/stereoset.yaml`).

# %%
if len(decisions) > 1:
    comparison = study.compare_languages(decisions, n_bootstrap=n_bootstrap, seed=seed)
    study.comparison_record(comparison, label, list(decisions),
                            {"n_bootstrap": n_bootstrap, "seed": seed, "tasks": list(tasks)}, output_dir)
    per_language_table = report.markdown_table(comparison.per_language, digits=2,
                                               formats={"binom_p": ".1e"})
    paired_table = report.markdown_table(comparison.paired, digits=2, formats={"mcnemar_p": ".1e"})
else:
    comparison = None
    per_language_table = paired_table = ""  # one language: no comparison to show

# %% tags=["nbval-check-output"]
report.show_table(per_language_table or "One language scored: the comparison across languages "
                  "needs two or more (languages).")
report.show_table(paired_table)

# %%
if table_file:
    report.write_table("\n\n".join(t for t in [summary_table, unequal_table, *sheet_tables.values(),
                                              scores_table, bias_table, per_language_table,
                                              paired_table] if t), table_file)
if comparison is not None:
    plots.scores_by_group(comparison.per_language.assign(label=comparison.per_language.language),
                          f"StereoSet SS per language, {label}", file=f"stereoset_{model}.png")
