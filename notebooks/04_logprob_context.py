# ---
# jupyter:
#   kernelspec:
#     display_name: Python (polybias)
#     language: python
#     name: polybias
# ---

# %% [markdown]
# # 4. Log-probability bias and the amount of context (Bangla, S1–S5)
#
# Kurita et al. (2019) measure how a masked LM associates a target group with an
# attribute by comparing the probability of the target at its mask with the attribute
# written out (**fill score**) and masked (**prior score**): the **corrected score**
# log P(target | attribute) − log P(target | attribute masked) removes how likely the
# target is anyway. Both probabilities are read at the target's mask (the reference code
# read the prior elsewhere; see `polybias.metrics.logprob`). Seed 000 (Sadhu et al. 2024,
# §4.3, §5.2) applies it to Bangla gendered nouns in five sentence structures, from a
# bare subject–object sentence (S1) to several sentences of context (S4, S5), and finds
# that longer contexts pull the prior scores towards zero while the corrected scores
# stay put.
#
# Here the difference male − female of each score is computed per attribute, per
# structure. Offline there are two known-answer models:
#
# * `model="planted"`: a tiny Bangla masked LM trained by the project on a generated
#   corpus where male nouns co-occur with career words 90 % of the time (`planted_p =
#   0.9`; 0.5 is the balanced control), scored on the project's planted sentences
#   (`templates="planted_bn"`, career/family words). Its window is 64 tokens.
# * `model="planted-analytic"`: a masked LM written down, not trained, from the template
#   book itself (`polybias.planted.analytic`): a one-layer BERT with hand-set weights over
#   the book's own words, with 512 positions, so it reads the study's longest S4/S5
#   passages, and identical on every CPU. Its trait embeddings lean towards the male
#   nouns' output direction by (2 `planted_p` − 1) for group `a` and away for group `b`.
#   It runs the study's own sentences (`templates="seed000_bn"`, `attribute_list="traits"`,
#   groups `positive` / `negative`): the male − female corrected difference of a trait
#   then has the planted sign in every structure, and is exactly 0 at `planted_p = 0.5`
#   (the formula is in the module's docstring). What it checks is the measuring
#   pipeline — the S1–S5 sentences, tokenisation at the slots, masking, the fill/prior
#   reading and the test — not the behaviour of a real Bangla model.
#
# With a hub model (e.g. `banglabert-generator`), use the study's own sentences as
# above (or the project's trait templates `logprob_bn`, same groups).
#
# `seed000_bn` is read from the authors' `positive_traits_bn.csv` (109 traits) and
# `negative_traits_bn.csv` (69), every row kept (`polybias.data.sadhu2024`). Each row carries
# its five structures in columns `S<k>_Mask_Suffix`, `S<k>_Placeholder`,
# `S<k>_Trait_Suffix` (S4, S5: placeholder, trait suffix, mask suffix). Assembly rule
# (after Table 3 of seed 000: S1–S2 target first, S3–S5 attribute first):
# S1, S2 = target+mask suffix · placeholder · trait+trait suffix;
# S3 = trait+trait suffix · target+mask suffix · placeholder;
# S4, S5 = placeholder · trait+trait suffix · target+mask suffix.
# The mask suffix (রা, দের …) is written onto the target; a trait suffix starting with
# "-" is written onto the trait without the hyphen (-তা), one starting with punctuation
# directly after it, any other after a space. Two positive traits have no S5 in the
# authors' file (প্রশংসনীয়, প্রশান্ত), so S5 has 176 traits. The targets are the 8 + 8
# male and female terms of C5. The trained planted model's 64-token window is too short
# for many S4/S5 passages: run them on `planted-analytic` or a hub model.

# %% tags=["parameters"]
model: str = "planted"  # registered masked LM, a model directory or a hub id; planted: the trained planted Bangla MLM (polybias.planted.synthetic); planted-analytic: the analytic MLM built from the template book (polybias.planted.analytic)
revision: str = ""  # hub branch, tag or 40-hex commit; empty: the registered revision, else main
device: str = "auto"  # auto (CUDA when present; the CPU for embedded and planted models), cpu, cuda or cuda:N
dtype: str = "auto"  # auto (bfloat16 on CUDA for decoder families trained in it, float64 for the planted models, else float32), float32, bfloat16 or float16 (CUDA only)
batch_tokens: int = 0  # padded tokens per forward pass; 0: auto (8192 on the CPU, from free GPU memory on CUDA)
planted_p: float = 0.9  # planted association strength when model is planted or planted-analytic (0.5: none; in [0, 1])
templates: str = "planted_bn"  # template file in data/templates (e.g. logprob_bn), planted_<lang>, or seed000_bn (the study's own S1-S5 trait sentences)
target_list: str = "targets"  # word list of the target slot
attribute_list: str = "attributes"  # word list of the attribute slot
group_feature: str = "group"  # entry feature naming a word's group
x: str = "male"  # first target group
y: str = "female"  # second target group
a: str = "career"  # first attribute group
b: str = "family"  # second attribute group
mode: str = "word"  # target scoring: word or first_piece (word: whole word; first_piece: Kurita / seed-000 compat)
prior_at: str = "target"  # first_piece: read the prior at the target or attribute (target: default; attribute: seed 000's code)
index_quirk: str = ""  # first_piece: kurita2019 reads one token before the mask as Kurita et al.'s code; empty: none
n_permutations: int = 10000  # Monte Carlo draws of the permutation test when not exact (at least 1)
seed: int = 0  # seed of the permutation test (and of the planted model's training, or the analytic model's codes; at least 0)
output_dir: str = "results/logprob/interactive"  # run records, relative to the project root
table_file: str = ""  # where to write the tables, e.g. paper/tables/logprob_context_planted.md

# %%
from polybias import models, paths
from polybias.engines import template_scores
from polybias.metrics import logprob
from polybias.results import records, report
from polybias.studies import logprob_context, template_books
from polybias.studies.parameters import check_parameters

check_parameters("04_logprob_context", batch_tokens=batch_tokens, planted_p=planted_p, mode=mode,
                 prior_at=prior_at, index_quirk=index_quirk, n_permutations=n_permutations,
                 seed=seed, model=model, templates=templates, x=x, y=y, a=a, b=b)
book = template_books.template_book(templates)
planted = models.Planted(p=planted_p, language=book.language, seed=seed, book=book,
                         target_list=target_list, attribute_list=attribute_list,
                         group_feature=group_feature, x=x, y=y, a=a, b=b)
lm = models.load(model, "lm", revision=revision, device=device, dtype=dtype,
                 batch_tokens=batch_tokens, planted=planted)
label = lm.name

# %% [markdown]
# ## One example per structure
#
# The sentences scored for the first target and attribute (fill sentences; the prior
# masks the attribute too).

# %%
for structure, text in logprob_context.structure_examples(book):
    print(f"{structure}: {text}")

# %% [markdown]
# ## Effect per structure
#
# `effect_size`: (mean over `a` attributes − mean over `b` attributes) of the corrected
# male − female difference, over its standard deviation (ddof = 1); `pvalue`: one-sided
# permutation test over re-splits of the attributes. `corrected_*`: the mean
# differences; `prior_spread`: how far apart the prior scores of paired male and female
# nouns are (standard deviation over noun pairs of their prior difference).
#
# Reference code reproduced by options (each tested by executing that code on tiny
# models; `docs/reference_compat.md`): `mode="first_piece", index_quirk="kurita2019"` is
# Kurita et al.'s `bias_calculator.py` (its prior or fill read one token before the
# mask); `mode="first_piece", prior_at="attribute"` is seed 000's `bias_score.py`.

# %%
scores = template_scores.kurita_scores(lm, book, list(book.templates), mode=mode, prior_at=prior_at,
                                       index_quirk=index_quirk or None)
summary, per_attribute = logprob.context_study(scores, book, target_list, attribute_list, x, y, a, b,
                                               group_feature, n_permutations, seed)
summary_table = report.markdown_table(summary, digits=3, formats={"pvalue": ".1e"})
report.show_table(summary_table)

# %% [markdown]
# Per attribute group and structure: mean fill, prior and corrected differences.

# %%
means_table = report.markdown_table(logprob_context.attribute_group_means(per_attribute), digits=3)
report.show_table(means_table)

# %% [markdown]
# The decisions, checked by nbval (the numbers above are not: their last digits, and
# every digit of a difference that is 0 up to rounding, depend on the CPU): per
# structure, how many attributes of each group were scored and how many have a
# corrected male − female difference above or below 0 (|difference| > 1e-9 nats), and
# whether the permutation test separates `a` from `b` at α = 0.05.

# %%
decision_table = report.markdown_table(logprob_context.decisions(summary, per_attribute, a, b))

# %% tags=["nbval-check-output"]
report.show_table(decision_table)

# %% [markdown]
# What the planted Bangla MLM shows (`planted_p = 0.9`): the corrected differences
# separate career from family words clearly in S1 and S2, the structures of its
# training sentences. With the attribute before the subject (S3) the separation nearly
# disappears — the model learned the association in one word order — and with several
# sentences of neutral context (S4, S5) the corrected differences shrink towards zero
# for career words while the prior differences stay large: more context leaves the
# inherent (prior) preference as the main influence, the pattern seed 000 reports for
# BanglaBERT (§5.2). At `planted_p = 0.5` no structure separates the attribute groups.
#
# What the analytic model shows on the study's sentences (`planted-analytic`,
# `seed000_bn`): at `planted_p = 0.9` every trait's corrected difference has the planted
# sign in every structure, S1 to S5, except আবেগপ্রবণ, which the authors list as both
# positive and negative (the model plants nothing on it, so its difference is 0 where no
# other trait stands in its passage), and every structure separates positive from
# negative traits. The differences shrink from S1 to S5, as 1/n in the number of tokens
# of the passage: the trait is one token of more context. Many S4/S5 passages name other
# traits (বন্ধুসুলভ ও সৌজন্যপূর্ণ …), which carry the planted lean too: there the prior
# differences move away from 0 in the direction of the passage's traits while the
# corrected ones keep the planted sign of the masked trait. At `planted_p = 0.5` every
# corrected difference is 0 and no structure separates the groups, while the prior
# differences (the model's fixed preference between the nouns, from their output codes)
# stay as they were: the control removes the association, not the nouns' priors.

# %%
logprob_context.plot_context_study(per_attribute, f"Prior vs corrected differences, {label}",
                                   file=f"logprob_context_{label}.png", ylabel=f"{x} − {y} (log-probability)")
record = logprob_context.context_record(
    summary, per_attribute, a, b, model=label, language=book.language, test=templates,
    parameters={"mode": mode, "x": x, "y": y, "a": a, "b": b, "n_permutations": n_permutations,
                "seed": seed, "planted_p": planted_p if model in models.STRENGTH_P else None},
    **records.model_fields(lm))
records.write_record(record, paths.output_path(output_dir))
if table_file:
    report.write_table("\n\n".join([summary_table, means_table, decision_table]), table_file)
