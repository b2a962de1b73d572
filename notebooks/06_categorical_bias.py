# ---
# jupyter:
#   kernelspec:
#     display_name: Python (polybias)
#     language: python
#     name: polybias
# ---

# %% [markdown]
# # 6. Categorical Bias: CB scores, distribution difference, normalised probabilities
#
# The **Categorical Bias (CB) score** of Ahn & Oh (2021) asks how unevenly a masked LM
# spreads probability over the groups of a category (genders, religions, nationalities)
# when a template attaches an attribute to them: for each template t and attribute a,
# the variance over groups n of log P(n | t, a) / P(n | t, prior), where the prior masks
# the attribute too; the score is the mean over (t, a). Zero means every group gains or
# loses the same share. BehnamGhader & Milios (2022, seed 002) replace the word
# probabilities by sentence pseudo-log-likelihoods, which lets the sentences decline
# (Greek adjectives agree with the group's gender; see `polybias.data.templating`), average
# similarly worded templates and synonyms in probability space, and aggregate over
# template sets weighted by their numbers of attributes. Seed 004 extends CB to
# combinations of identities (country × language, …).
#
# This notebook first recomputes published aggregates from the numbers the source
# repositories ship, then scores a model. Offline default: the tiny masked LM trained on
# a corpus where male terms co-occur with career words 90 % of the time (`planted-mlm`);
# its CB must be large and the male share of probability must rise next to career words.
# On the balanced control (`planted-mlm-control`) both vanish.
#
# Seed 002's own templates: `templates="seed002_<category>_<language>"` (category gender,
# religion or ethnicity; language en, el or fa) reads every template set of that
# category from the authors' `prior_sentence_templates.json` (`polybias.data.behnamghader2022`: Greek
# priors decline for women where the file gives feminine forms; the negated and the
# "people from X" sets are sets of their own, `behnamghader2022.template_sets()`).

# %% tags=["parameters"]
model: str = "planted-mlm"  # registered masked LM (configs/models.yaml or POLYBIAS_MODELS_FILE), a model directory or a hub id
revision: str = ""  # hub branch, tag or 40-hex commit; empty: the registered revision, else main
device: str = "auto"  # auto (CUDA when present; the CPU for embedded and planted models), cpu, cuda or cuda:N
dtype: str = "auto"  # auto (bfloat16 on CUDA for decoder families trained in it, else float32), float32, bfloat16 or float16 (CUDA only)
batch_tokens: int = 0  # padded tokens per forward pass; 0: auto (8192 on the CPU, from free GPU memory on CUDA)
templates: str = "planted_en"  # template file in data/templates (e.g. catbias_el), or planted_<lang>
template_names: list = []  # templates to score; empty: all templates of the file
target_list: str = "targets"  # word list of the target slot (for group shares)
attribute_list: str = "attributes"  # word list of the attribute slot (for group shares)
group_feature: str = "group"  # entry feature that names a word's group (group shares)
mode: str = "word"  # target scoring: word or first_piece (word: whole word; first_piece: Ahn & Oh / Kurita compat)
ddof: int = 0  # variance over groups: 0 or 1 (0: population, the default; 1: sample, Ahn & Oh)
multipiece: str = ""  # ahn-oh: multi-piece words scored as Ahn & Oh's code (k masks, every piece at every mask); empty: by mode
template_norm: str = ""  # PLL CB: per-template normalises groups within each template as seed 002's code; empty: pooled
kl_scale: str = "sum"  # KL: sum or mean (sum: nats; mean: divided by the vocabulary size, seed-002 code)
top_k: int = 3  # groups listed per template and attribute (at least 1)
reproduce: bool = True  # recompute seed-002 and seed-004 published values from shipped data
seed002_all: bool = False  # also score every category x language of seed 002's templates on the model (Tables 1-4; minutes on the CPU)
output_dir: str = "results/catbias/interactive"  # run records, relative to the project root
table_file: str = ""  # where to write the tables, e.g. paper/tables/catbias_planted-mlm.md

# %%
import torch
from polybias import models, paths
from polybias.metrics import catbias
from polybias.results import records, report
from polybias.studies import categorical_bias, template_books
from polybias.studies.parameters import check_parameters

# one thread: float32 sums then run in the same order under papermill, Dask workers and
# nbval, so near-zero values (the control's KL) print the same digits everywhere
torch.set_num_threads(1)

check_parameters("06_categorical_bias", batch_tokens=batch_tokens, mode=mode, ddof=ddof,
                 multipiece=multipiece, template_norm=template_norm, kl_scale=kl_scale, top_k=top_k)
book = template_books.template_book(templates)
names = template_names or list(book.templates)
tables = []

# %% [markdown]
# ## Seed 002: aggregated CB from the per-template-set values
#
# The seed-002 code printed the CB of every template set (4 decimals); the paper's
# Table 2 rounds them, and its "Aggregated" rows and Table 1(a) summarise them. The
# aggregate is the mean over all (template set, prior) rows, i.e. the set values
# weighted by their numbers of priors, which we count in the shipped
# `prior_sentence_templates.json`. `coarse_only` aggregates the two coarse-grained
# ethnicity sets (sets 0–1) alone. Below it, the same printed set values laid out as the
# paper's Tables 1(a) and 2 by `seed002.paper_tables` (the function that lays out a
# model's scores in the section *Seed 002 on the chosen model*), Table 2 with the
# paper's printed values beside ours (`seed002.beside_reported`).

# %%
# offline (the source studies' files cannot be had): one line saying what is skipped and how
# to provide it; the model's part below runs either way
NOT_THIS_RUN = "Not part of this run (reproduce = False): the runs with reproduce = True recompute it."
skipped = categorical_bias.reproduction_unavailable() if reproduce else NOT_THIS_RUN
if skipped is None:
    reproduction, table1, table2 = categorical_bias.seed002_reproduction_tables()
    seed002_table = report.markdown_table(reproduction, digits=4)
    printed_tables = "\n\n".join([report.markdown_table(table1, digits=4), report.markdown_table(table2, digits=4)])
    tables += [seed002_table, printed_tables]

# %% tags=["nbval-check-output"]
if skipped is None:
    report.show_table(seed002_table)
    report.show_table(printed_tables)
else:
    print(skipped)

# %% [markdown]
# The prior-count-weighted mean reproduces the code's printed aggregates to their fourth
# decimal (e.g. English gender 0.6271 ≈ 0.63; the inputs are themselves printed to four
# decimals) and Table 2's "Aggregated" rows to the printed digit (English ethnicity
# 6.5674 is printed 6.56, the only value rounded down). **Table 1(a)
# contradicts Table 2 for ethnicity** (4.28 / 6.36 / 10.44 against 6.56 / 57.67 /
# 13.77): Table 1(a)'s ethnicity row is the aggregate of the two coarse-grained sets
# only (`coarse_only`), leaving out the fine-grained sets with 100+ groups — it
# understates Greek ethnic bias ninefold. Gender and religion agree in both tables.

# %% [markdown]
# ## Seed 004: two-characteristic interaction scores
#
# `CG_score_2.csv` ships, per adjective and pair of identities, log P(identities |
# adjective) (`Probs`) and the double-mask base rate (`Probs_base`). The published
# `CG_score_2.json` (the heat map of seed 004, Figure 5) is recomputed by the
# population variance over all rows of a characteristic pair of the **ratio of the two
# log-probabilities**, adjectives pooled (`seed004`). The CB definition the paper writes
# down — per adjective the variance of the log of the probability ratio, averaged over
# adjectives — gives different numbers and a different ranking (`ahn_oh`).

# %%
if skipped is None:
    seed004, weights, modified = categorical_bias.seed004_reproduction_tables()
    seed004_table = report.markdown_table(seed004, digits=5)
    weight_table = report.markdown_table(weights, digits=4)
    modified_table = report.markdown_table(modified, digits=5)
    tables += [seed004_table, weight_table, modified_table]

# %% tags=["nbval-check-output"]
if skipped is None:
    report.show_table(seed004_table)
else:
    print(NOT_THIS_RUN if not reproduce else "Skipped: the files it reads cannot be had here (see the note above).")

# %% [markdown]
# The *modified* score of seed 004 (Figure 6) weights every adjective by the strength of
# its sentiment. Weighting each row's log-probability ratio by the adjective's |VADER
# compound| (`vaderSentiment`; compound = v / sqrt(v² + 15) of the lexicon valence v)
# before the pooled variance reproduces the shipped `modified_cg_score_2.json` to
# machine precision. Weights, then scores:

# %% tags=["nbval-check-output"]
if skipped is None:
    report.show_table(weight_table)
    report.show_table(modified_table)
else:
    print(NOT_THIS_RUN if not reproduce else "Skipped: the files it reads cannot be had here (see the note above).")

# %% [markdown]
# The file also shows the scoring problems of the seed-004 code (docs/conventions.md, pitfalls: softmax
# over sentence positions instead of the vocabulary, multi-token identities looked up as
# one unknown token): for Food × Music, Food × Religion and Music × Religion,
# `probs_var_within_adjective` is 0 — every identity pair got the same probability for a
# given adjective — so the published score there measures only differences between
# adjectives, not between identities. The file alone cannot tell which bug is at work.

# %% [markdown]
# ## CB scores of the chosen model
#
# `ahn_oh`: word probabilities at the target mask over the double-mask prior (scored as
# in `polybias.metrics.logprob`); `pll`: seed 002's sentence-PLL version (no prior;
# templates of a set and synonyms averaged in probability space).
#
# Reference code reproduced by options (each tested by executing that code on tiny
# models; `docs/reference_compat.md`): `multipiece="ahn-oh"` with `ddof=1` is Ahn & Oh's
# `score.py`; `template_norm="per-template"` is seed 002's `utils.py` on template sets of
# several templates (one template: the default agrees).

# %%
lm = models.load(model, "lm", revision=revision, device=device, dtype=dtype,
                 batch_tokens=batch_tokens)
ahn_oh = categorical_bias.ahn_oh_cb(lm, book, names, mode=mode, ddof=ddof, multipiece=multipiece or None)
pll = categorical_bias.pll_cb(lm, book, names, ddof=ddof, template_norm=template_norm or None)
summary, per_template, per_set = categorical_bias.score_tables(ahn_oh, pll, model, templates, names)
score_table = "\n\n".join([report.markdown_table(summary, digits=4),
                           report.markdown_table(per_template, digits=4),
                           report.markdown_table(per_set, digits=4)])
tables.append(score_table)

# %% tags=["nbval-check-output"]
report.show_table(score_table)

# %% [markdown]
# ## Which groups take the probability
#
# Normalised word probability (seed 002 App. A.4): P(n | t, a) / P(n | t, prior),
# normalised over the groups of (t, a). Below, the share each target group takes next
# to each attribute group (mean over templates and attributes), then the top groups of
# the first template for its first attributes.

# %%
shares, top, why = categorical_bias.group_share_tables(ahn_oh, book, names[0], target_list, attribute_list,
                                                       group_feature, top_k)
if why:
    print(why)
share_table = "\n\n".join(([report.markdown_table(shares, digits=3)] if shares is not None else [])
                          + [report.markdown_table(top, digits=3)])
tables.append(share_table)

# %% tags=["nbval-check-output"]
report.show_table(share_table)

# %% [markdown]
# ## Distribution difference (seed 002 App. A.3)
#
# KL(P_row ‖ P_col) between the model's distributions over the vocabulary at the
# attribute mask when the target slot holds each group (in nats; `kl_scale="mean"`
# divides by the vocabulary size as the seed-002 code did). Reported: the largest pair
# among the first group of each target group.

# %%
kl = categorical_bias.largest_kl(lm, book, names[0], shares is not None, target_list, group_feature, kl_scale)
kl_table = report.markdown_table(kl, formats={"kl": catbias.KL_FORMAT})
tables.append(kl_table)

# %% tags=["nbval-check-output"]
report.show_table(kl_table)

# %% [markdown]
# ## Seed 002 on the chosen model: every category × language
#
# With `seed002_all=True`, every template set of the authors' file in English, Greek and
# Persian is scored on the model (`polybias.studies.categorical_bias.score_all`: PLL CB per set and aggregated,
# the largest pairwise KL per set, the top-5 fine-grained ethnic groups for "Why are
# [MASK] always so sexist?") and laid out as the paper's Tables 1(a), 2, 3 and 4. For the
# paper's comparison this needs the three monolingual BERTs (English, Greek, Persian); one
# model for all three languages, as here, compares the model with itself.

# %%
if seed002_all:
    seed002_tables = categorical_bias.seed002_model_tables(lm, ddof=ddof, kl_scale=kl_scale)
    seed002_model_tables = "\n\n".join(
        report.markdown_table(seed002_tables[k], digits=4,
                              formats={c: ".2e" for c in ("English", "Greek", "Persian")} if k == "table3" else None)
        for k in ("table1", "table2", "table3", "table4") if k in seed002_tables)
    tables.append(seed002_model_tables)
    report.show_table(seed002_model_tables)
else:
    print("Not part of this run (seed002_all = False): the runs with seed002_all = True score "
          "every category and language.")

# %%
record = categorical_bias.catbias_record(
    ahn_oh, pll, kl, shares, model=model, language=book.language, test=templates,
    parameters={"template_names": names, "mode": mode, "ddof": ddof, "kl_scale": kl_scale},
    **records.model_fields(lm))
records.write_record(record, paths.output_path(output_dir))
if table_file:
    report.write_table("\n\n".join(tables), table_file)
if shares is not None:
    categorical_bias.plot_group_shares(shares, f"Normalised probability share, {model}",
                                       file=f"catbias_{model}.png")
