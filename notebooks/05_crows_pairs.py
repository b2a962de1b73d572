# ---
# jupyter:
#   kernelspec:
#     display_name: Python (polybias)
#     language: python
#     name: polybias
# ---

# %% [markdown]
# # 5. CrowS-Pairs: stereotype scores, JSD stereotype score and bias attribution
#
# A CrowS-Pairs item is a minimal pair: a more stereotyping sentence and a less
# stereotyping one that differ in a few words (Nangia et al. 2020). A language model
# "prefers" the sentence it scores higher; the **stereotype score** is the share of pairs
# where it prefers the more stereotyping one (50 = no preference). Masked LMs score the
# shared tokens one at a time with the modified tokens as condition (Nangia et al.);
# causal LMs score the whole sentence given BOS.
#
# Gamboa & Lee (2024, seed 001) replace the likelihood comparison by a distance: for each
# shared token u, b(u) = JSD(P_u,more ‖ one-hot) − JSD(P_u,less ‖ one-hot), the
# Jensen–Shannon distance (base 2) of the model's prediction from the gold token under
# either condition. b(u) < 0 means the token is better predicted in the biased context:
# it **attributes** bias to that token. A pair is biased when the mean of b(u) is < 0,
# and B is the share of biased pairs.
#
# Offline default: a tiny masked LM that the project trains on a generated corpus where
# male terms co-occur with career words and female terms with family words (p = 0.9),
# evaluated on generated minimal pairs; the planted direction must show (score > 50).

# %% tags=["parameters"]
model: str = "planted-mlm"  # registered language model (configs/models.yaml or POLYBIAS_MODELS_FILE), a model directory or a hub id
revision: str = ""  # hub branch, tag or 40-hex commit; empty: the registered revision, else main
device: str = "auto"  # auto (CUDA when present; the CPU for embedded and planted models), cpu, cuda or cuda:N
dtype: str = "auto"  # auto (bfloat16 on CUDA for decoder families trained in it, else float32), float32, bfloat16 or float16 (CUDA only)
batch_tokens: int = 0  # padded tokens per forward pass; 0: auto (8192 on the CPU, from free GPU memory on CUDA)
dataset: str = "planted"  # planted minimal pairs or a registered CrowS-Pairs dataset: planted, crows-pairs, crows-pairs-revised, crows-pairs-steinborn, crows-pairs-gamboa, indibias, crows-pairs-dutch, kaneko2022, crows-pairs-maltese, eurogest or eurogest-neutral
language: str = "en"  # language of the dataset (planted: en, bn or hi; a dataset: its own, polybias.data.crowspairs.DATASETS)
language_override: bool = False  # run a registered model on a language its entry does not list (recorded in the run)
subset: list = []  # bias types to keep; empty: all
method: str = ""  # nangia, bias-bench, sss, causal, aul, aula or lm-eval; empty: by the model's kind
n_pairs: int = 200  # number of planted pairs (dataset planted only; at least 1)
max_pairs: int = 0  # a dataset: score a sample of at most this many pairs, stratified by bias type and drawn with `seed` (at least 0; 0: all)
n_bootstrap: int = 1000  # bootstrap resamples for the confidence intervals (at least 0; 0: none)
seed: int = 0  # seed of the pair draw and the bootstrap (at least 0)
compat_fourth_root: bool = False  # seed-001 code's extra square root in the JSD
causal_bos: str = "prepend"  # causal LMs: prepend or first-token (prepend: BOS before every sentence; first-token: bias-bench compat)
on_unmodified: str = "raise"  # bias-bench: a pair with no modified token: raise or skip (skip: bias-bench compat)
alignment: str = "metric.py"  # nangia/bias-bench on masked LMs: metric.py, seed-001 or content (metric.py: the reference's shared tokens; content: special tokens removed, sent_more first)
output_dir: str = "results/crows/interactive"  # run records, relative to the project root
reproduce: bool = True  # recompute seed 001's GPT-2 Table 3 row from its shipped per-pair scores
table_file: str = ""  # where to write the tables, e.g. paper/tables/crows_planted-mlm.md

# %%
from polybias import measures, models
from polybias.metrics import crows
from polybias.results import plots, report
from polybias.studies import crows_pairs
from polybias.studies.parameters import check_parameters

check_parameters("05_crows_pairs", batch_tokens=batch_tokens, dataset=dataset, method=method,
                 n_pairs=n_pairs, max_pairs=max_pairs, n_bootstrap=n_bootstrap, seed=seed, causal_bos=causal_bos,
                 on_unmodified=on_unmodified, alignment=alignment, model=model, language=language,
                 language_override=language_override)

# %% [markdown]
# ## Reproducing seed 001's GPT-2 row from its published per-pair scores
#
# The seed-001 repository ships GPT-2's per-pair S_JSD on the 231-pair gender and
# sexual-orientation subset. Aggregating them with eq. 6 gives the numbers below, beside
# Table 3 of the paper.

# %%
unavailable = crows_pairs.gamboa_gpt2_unavailable() if reproduce else None  # offline: a note
if reproduce and unavailable is None:
    gpt2_table = report.markdown_table(crows_pairs.gamboa_gpt2_reproduction(), digits=2)
else:
    gpt2_table = unavailable or ("Not part of this run (reproduce = False): the runs with "
                                 "reproduce = True recompute seed 001's GPT-2 row.")

# %% tags=["nbval-check-output"]
report.show_table(gpt2_table)

# %% [markdown]
# Eq. 6 applied to the shipped scores gives one biased gender pair more than the paper
# (and so one more overall). The paper's numbers are exact counts (89/159, 51/72,
# 140/231). In the shipped file one gender pair ("The blacks hated the whites at
# school." / "... at doctors") has S_JSD ≈ −1e-6: all its shared tokens precede the
# edit, so for a causal model every b(u) is exactly 0 in exact arithmetic (pairs of the
# same shape are 0.0 in the file) and the sign is floating-point noise. Counting
# noise-level S_JSD as a tie reproduces the paper exactly (second block). Our engine
# sets b(u) = 0 exactly for causal tokens whose left context is the same in both
# sentences, so it does not depend on such noise.

# %% [markdown]
# ## Stereotype score and JSD stereotype score of the model
#
# The line above the table names the model, the pairs (planted or a registered dataset) and
# how many were scored.
#
# Which options reproduce which reference code (each tested by executing that code on
# tiny models; `docs/reference_compat.md`): `method="nangia"` (default for masked LMs) is
# nyu-mll/crows-pairs `metric.py`, down to which tokens count as shared
# (`alignment="metric.py"`: the full token sequences aligned in the order the script puts
# them for each row); `method="bias-bench"` with `on_unmodified="skip"` is
# bias-bench's masked runner, and with `causal_bos="first-token"` its causal one;
# `compat_fourth_root=True` is seed 001's `bias_attribution_scores.py` (S_JSD and b(u)).

# %%
lm = models.load(model, "lm", revision=revision, device=device, dtype=dtype,
                 batch_tokens=batch_tokens)
run = crows_pairs.run_crows(lm, dataset, language, subset or None, method or None, n_pairs,
                            n_bootstrap, seed, compat_fourth_root, output_dir, causal_bos=causal_bos,
                            on_unmodified=on_unmodified, alignment=alignment, max_pairs=max_pairs)
score_table = (f"{run.caption}\n\n"
               + report.markdown_table(crows_pairs.score_summary(run), digits=2, formats={"binom_p": ".1e"}))

# %% tags=["nbval-check-output"]
report.show_table(score_table)

# %% [markdown]
# ## Which tokens carry the bias (seed 001 Tables 4–5)
#
# The pair with the most negative S_JSD; b(u) per word of the biased sentence (subword
# scores summed per word).

# %%
tokens = report.markdown_table(crows.token_table(run.attributed), digits=4)

# %% tags=["nbval-check-output"]
report.show_table(tokens)

# %% [markdown]
# ## Semantic categories of bias-contributing words (seed 001 Table 6)
#
# Seed 001 tagged words with PyMUSAS into USAS semantic fields (e.g. "S2 People",
# "A1 General and abstract terms"). The `pymusas` package itself installs from the package
# registry (0.4.2), but its English tagger does not: the pretrained English pipeline
# (`en_dual_none_contextual`), the USAS lexicons it reads and the spaCy English model it
# needs are distributed from GitHub, not from the registry. So the categories here are
# Empath's (194 hand-validated categories shipped inside its package): a bias-raising
# word lands in categories such as `family` or `crime` rather than in a USAS field, and
# the table is comparable with seed 001's Table 6 in kind (which kinds of words increase
# bias), not cell by cell.
# Shares are percentages of a category's tokens that increase (b < 0), do not change (b = 0)
# or lower (b > 0) bias.

# %%
category_table = report.markdown_table(crows_pairs.bias_categories(run, top=10), digits=2)

# %% tags=["nbval-check-output"]
report.show_table(category_table)

# %%
if table_file:
    report.write_table("\n\n".join([score_table, tokens, category_table]), table_file)
_ = plots.scores_with_ci(run.stereotype, f"Stereotype score, {model} on {dataset}",
                         ylabel=measures.get("crows").axis, file=f"crows_{model}_{dataset}.png")
