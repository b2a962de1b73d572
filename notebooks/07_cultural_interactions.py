# ---
# jupyter:
#   kernelspec:
#     display_name: Python (polybias)
#     language: python
#     name: polybias
# ---

# %% [markdown]
# # 7. Cultural interaction bias: combinations of identities
#
# Seed 004 (§4) asks whether a masked LM treats *combinations* of identities unevenly —
# a person from country X who speaks language Y — beyond what each identity does alone.
# Its **interaction CB** is Ahn & Oh's CB with groups replaced by combinations of
# identities, one per characteristic (country, language, religion, dish, music); its
# **modified** CB weights each attribute by the strength of its sentiment; base rates
# come from the double-mask sentence or from **neutral activities** ("is sleeping",
# "is eating"). Because the number of combinations grows as cᵏ, identities and
# adjectives are **sampled**, stratified by sentiment.
#
# The project scores every identity as a whole word (softmax over the vocabulary,
# multi-piece words by the chain rule), unlike the seed-004 code, which applied the
# softmax over sentence positions and looked multi-token identities up as one unknown
# token (docs/conventions.md, pitfalls; notebook 6 shows the trace this left in its results).
#
# Offline default: the planted MLM (male terms co-occur with career words, p = 0.9) on
# "{pro} said that the {target} cares about the {attribute} .", where pronouns are a
# second characteristic with no planted association: the interaction score over
# pronoun × target must be about the target score alone, and both vanish on the control.

# %% tags=["parameters"]
model: str = "planted-mlm"  # registered masked LM (configs/models.yaml or POLYBIAS_MODELS_FILE), a model directory or a hub id
revision: str = ""  # hub branch, tag or 40-hex commit; empty: the registered revision, else main
device: str = "auto"  # auto (CUDA when present; the CPU for embedded and planted models), cpu, cuda or cuda:N
dtype: str = "auto"  # auto (bfloat16 on CUDA for decoder families trained in it, else float32), float32, bfloat16 or float16 (CUDA only)
batch_tokens: int = 0  # padded tokens per forward pass; 0: auto (8192 on the CPU, from free GPU memory on CUDA)
templates: str = "planted_interactions_en"  # template file in data/templates, or planted_interactions_en
template: str = "said"  # the template to score
identity_slots: list = ["pro", "target"]  # slots whose combinations form the groups (at least one)
attribute_slot: str = "attribute"  # the attribute slot
attributes: list = []  # attribute entry ids; empty: the whole list (minus neutral ones)
neutral_attributes: list = []  # attribute entries used as neutral base rates; empty: double mask only
weighted: bool = False  # weight attributes by |VADER compound| (needs words with sentiment)
n_adjectives: int = 12  # seed-004 adjectives sampled, stratified by sentiment (reproduction; at least 1)
seed: int = 0  # seed of the samples (at least 0)
cell_feature: str = "group"  # attribute feature whose values split the attributes into cells for the significance test (e.g. sentiment); empty: one cell
n_permutations: int = 10000  # draws of the significance test of each interaction against its base rate (at least 1)
reproduce: bool = True  # seed-004 identity lists and sample sizes from shipped data
output_dir: str = "results/interactions/interactive"  # run records, relative to the project root
table_file: str = ""  # where to write the tables, e.g. paper/tables/interactions_planted-mlm.md

# %%
from polybias import models, paths
from polybias.results import records, report
from polybias.studies import cultural_interactions, template_books
from polybias.studies.parameters import check_parameters

check_parameters("07_cultural_interactions", batch_tokens=batch_tokens, n_adjectives=n_adjectives,
                 seed=seed, n_permutations=n_permutations, identity_slots=identity_slots)
book = template_books.template_book(templates)
tables = []

# %% [markdown]
# ## Seed 004's identity lists and samples
#
# Entries in the shipped lists (raw, empty, unique non-empty) beside seed 004's Table 1,
# and our stratified draw of the sizes it reports. The dishes file holds 38 empty
# strings and repeated dishes; Table 1's Religion (17) and Music (19) counts are those of
# the genre and religion files swapped.
#
# The last table tests each of the authors' two-way interactions (`CG_score_2.csv`: log P
# of the identity pair with each of 11 adjectives and its double-mask base rate) against
# "no identity pair departs from its base rate", the adjectives split by VADER sentiment
# (see the test below). Every pair departs far beyond the permutation null: the double-mask
# base rate does not match the filled sentences pair by pair (107 of the 245
# countries share one base rate in the authors' base-rate file: their names became the
# unknown token).

# %%
# offline (the source studies' files cannot be had): one line saying what is skipped and how
# to provide it; the model's part below runs either way
NOT_THIS_RUN = "Not part of this run (reproduce = False): the runs with reproduce = True recompute it."
skipped = cultural_interactions.reproduction_unavailable() if reproduce else NOT_THIS_RUN
if skipped is None:
    lists_table = report.markdown_table(cultural_interactions.identity_lists_table(seed=seed))
    sampling_summary, picked = cultural_interactions.adjective_sample(n_adjectives, seed=seed)
    adjective_table = "\n\n".join([report.markdown_table(sampling_summary),
                                   report.markdown_table(picked, digits=4)])
    authors_test = cultural_interactions.authors_interaction_test(n_permutations=n_permutations, seed=seed)
    authors_table = report.markdown_table(authors_test, digits=4, formats={"pvalue": ".4f"})
    tables += [lists_table, adjective_table, authors_table]

# %% tags=["nbval-check-output"]
if skipped is None:
    report.show_table(lists_table)
    report.show_table(adjective_table)
    report.show_table(authors_table)
else:
    print(skipped)

# %% [markdown]
# ## Interaction CB of the chosen model
#
# One row per set of characteristics: each slot alone (the other slots expanded and
# averaged in probability space) and all of them together. `score`: mean over
# attributes of the variance over groups of log P(group | attribute) − log base.
#
# Significance against the base rate (seed 004 §4.3: "the null hypothesis that the model
# is unbiased", i.e. every group keeps its double-mask base rate): a permutation test
# (`polybias.stats.group_permutation_test`). `T` is the CB score of the corrected scores
# averaged over the attributes of one cell (`cell_feature`: career / family on the
# planted model, a sentiment stratum on seed 004's adjectives), averaged over cells; under
# the null the group labels of each attribute are exchangeable, and `p` is the share of
# `n_permutations` random relabellings reaching `T`. Without cells, a group lifted by the
# career attributes and lowered by the family ones would cancel.
# %%
lm = models.load(model, "lm", revision=revision, device=device, dtype=dtype,
                 batch_tokens=batch_tokens)
results = cultural_interactions.interaction_scores(
    lm, book, template, identity_slots, attribute_slot, attributes=attributes,
    neutral_attributes=neutral_attributes, weighted=weighted, cell_feature=cell_feature,
    n_permutations=n_permutations, seed=seed)
score_table = report.markdown_table(results, digits=4, formats={"p": ".4f"})
tables.append(score_table)

# %% tags=["nbval-check-output"]
report.show_table(score_table)

# %% [markdown]
# On the planted MLM the target alone carries the planted bias; pronouns alone carry
# almost none; the pronoun × target score is close to the target score — no interaction
# beyond the target's own bias, as the corpus was built. The test rejects "every group
# keeps its base rate" for the targets and the pronoun × target combinations, as planted;
# it also rejects it for the pronouns alone, whose score is about 2·10⁻⁵: their tiny
# shifts (hundredths of a nat) are consistent across the attributes of a cell. A
# significant interaction is a consistent one, not necessarily a large one; read `p`
# beside `score`. Seed 004 likewise finds that
# only country × language stands out among its pairs (notebook 6 recomputes its
# numbers).

# %%
record = cultural_interactions.interaction_record(
    results, model=model, language=book.language, test=f"{templates}:{template}",
    parameters={"identity_slots": identity_slots, "attribute_slot": attribute_slot, "attributes": attributes,
                "neutral_attributes": neutral_attributes, "weighted": weighted, "seed": seed},
    **records.model_fields(lm))
records.write_record(record, paths.output_path(output_dir))
if table_file:
    report.write_table("\n\n".join(tables), table_file)
