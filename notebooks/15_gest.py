# ---
# jupyter:
#   kernelspec:
#     display_name: Python (polybias)
#     language: python
#     name: polybias
# ---

# %% [markdown]
# # 15. GEST: gender stereotypes in first-person sentences
#
# GEST (Pikuliak et al. 2024) holds 3,565 English sentences written in the first person,
# each expressing one of 16 gender stereotypes: 1–7 about women (emotional, gentle,
# empathetic, neat, social, weak, beautiful), 8–16 about men (tough, self-confident,
# professional, rational, providers, leaders, childish, sexual, strong). A model says
# whether a man or a woman more likely said a sentence: a masked LM compares
# `He said: "…"` with `She said: "…"` (four such templates; the mean log10 probability of
# the masked differing tokens, masculine minus feminine), a causal LM the probability of
# *he* against *she* (or *man* against *woman*) after `"…",` (two templates). The score
# x_s > 0 when the masculine reading wins. Per stereotype, the rate r_i = exp(mean x_s)
# (the authors' code raises e to the mean of base-10 scores); over the groups,
# r_f and r_m are the geometric means of the feminine and masculine r_i, and the
# **masculine rate** g_s = r_m / r_f is above 1 when the model reads the masculine
# stereotypes as more masculine than the feminine ones (registered measure `gest`).
#
# Offline default (`model = "published"`): the authors' released scores of 11 masked LMs
# × 4 templates and 23 causal LMs × 2 templates are aggregated by the registered measure,
# with seeded bootstrap intervals in the authors' form (a normal fitted to the bootstrap
# means). Set `model` to a registered language model, a model directory or a hub id to
# score it with the engine's GEST scorers under every template of its kind instead (a user
# with hub access gets the published files' numbers this way).

# %% tags=["parameters"]
model: str = "published"  # published: the authors' released scores; else a registered language model (configs/models.yaml or POLYBIAS_MODELS_FILE), a model directory or a hub id
revision: str = ""  # hub branch, tag or 40-hex commit; empty: the registered revision, else main (model not published)
device: str = "auto"  # auto (CUDA when present; the CPU for embedded and planted models), cpu, cuda or cuda:N
dtype: str = "auto"  # auto (bfloat16 on CUDA for decoder families trained in it, else float32), float32, bfloat16 or float16 (CUDA only)
batch_tokens: int = 0  # padded tokens per forward pass; 0: auto (8192 on the CPU, from free GPU memory on CUDA)
kinds: list = ["masked", "causal"]  # released runs to aggregate, among masked and causal (model published)
limit: int = 0  # score only the first `limit` sentences; 0: all (model not published)
max_items: int = 0  # score a sample of at most this many sentences, stratified by stereotype and drawn with `seed` (at least 0; 0: all; model not published)
interval: str = "normal"  # normal or percentile (normal: the authors' bootstrap_ci)
base: str = "e"  # e or 10 (e: the authors' np.exp of the mean base-10 score)
n_bootstrap: int = 1000  # bootstrap resamples within each stereotype for the intervals (at least 0; 0: none)
seed: int = 0  # seed of the sentence sample and the bootstrap (at least 0)
output_dir: str = "results/gest/interactive"  # run records, relative to the project root
table_file: str = ""  # where to write the tables, e.g. paper/tables/gest_published.md

# %%
from polybias import models
from polybias.data import gest as gest_data
from polybias.results import report
from polybias.studies import gest as study
from polybias.studies.parameters import check_parameters

check_parameters("15_gest", model=model, revision=revision, device=device, dtype=dtype,
                 batch_tokens=batch_tokens, kinds=kinds, limit=limit, max_items=max_items, interval=interval,
                 base=base, n_bootstrap=n_bootstrap, seed=seed)
published = model == "published"
options = {"n_bootstrap": n_bootstrap, "seed": seed, "interval": interval, "base": base}
caption = ""
if published:
    summary, rates = study.published_rates(tuple(kinds), **options)
else:
    lm = models.load(model, "lm", revision=revision, device=device, dtype=dtype, batch_tokens=batch_tokens)
    sentences = gest_data.load_gest()
    available = len(sentences)
    if limit:
        sentences = sentences.iloc[:limit]
    sentences = study.sample_sentences(sentences, max_items, seed)
    caption = study.sample_caption(len(sentences), available, max_items, seed) if not limit else \
        f"Sentences: the first {len(sentences):,} of the {available:,} (limit = {limit})."
    scores = study.score_model(lm, sentences["sentence"].tolist())
    summary, rates = study.model_rates(scores, sentences["stereotype"], model,
                                       "masked" if lm.kind == "mlm" else "causal", **options)
study.write_records(summary, rates, {**options, "limit": limit, **({"max_items": max_items} if max_items else {})},
                    output_dir,
                    model_revision=None if published else lm.revision)

# %% [markdown]
# ## The masculine rate g_s of every run
#
# One row per (model, template), templates numbered from 1 as in the paper; `n` sentences,
# r_f and r_m the geometric means of the feminine and masculine rates, g_s = r_m / r_f with
# its bootstrap interval (each stereotype resampled within itself).

# %%
overview = study.overview_table(summary)
summary_table = study.summary_table(summary)

# %% [markdown]
# First the runs of each kind together: how many have a g_s interval wholly above 1 (the
# masculine stereotypes read as more masculine than the feminine ones) or wholly below 1,
# and the spread of g_s.

# %% tags=["nbval-check-output"]
if caption:
    print(caption)
report.show_table(overview)
report.show_table(summary_table)

# %% [markdown]
# ## The rate of every stereotype
#
# As the authors print them in their appendix tables: each cell is `lower r_i upper`,
# two decimals, the interval from 1000 bootstrap means (theirs unseeded, ours seeded, so an
# interval bound may differ from theirs in the second decimal; the rates do not).

# %%
rate_tables = {kind: study.rates_table(rates, kind) for kind in gest_data.KINDS
               if kind in set(summary.kind)}

# %% tags=["nbval-check-output"]
for kind, text in rate_tables.items():
    report.show_table(f"### {kind} LMs\n\n{text}")

# %% [markdown]
# ## Where each stereotype ranks
#
# The rank of r_i among the 16 stereotypes of a run (1 = the most feminine reading): its
# median, lowest and highest over the runs of each kind. A model that reasons
# stereotypically ranks stereotypes 1–7 low and 8–16 high.

# %%
ranks = study.rank_table(rates)

# %% tags=["nbval-check-output"]
report.show_table(ranks)

# %%
if table_file:
    report.write_table("\n\n".join([*([caption] if caption else []), overview, summary_table,
                                     *rate_tables.values(), ranks]), table_file)
