# ---
# jupyter:
#   kernelspec:
#     display_name: Python (polybias)
#     language: python
#     name: polybias
# ---

# %% [markdown]
# # 8. Hidden states of identity words, layer by layer
#
# Seed 004 (App. A) looks for implicit associations inside the encoder rather than in
# its predictions: it takes the hidden states of the identity word in "A person from
# {country} is {adjective}" at every layer, compares the layers' activation sums with a
# one-way ANOVA (it reports F ≈ 8·10⁴ for BERT: earlier layers sum higher) and projects
# the states to two dimensions with PCA, TruncatedSVD and t-SNE, finding no visible
# structure. Here the identity's word pieces are found through the tokenizer's offsets
# and averaged (multi-word identities such as "the United States" included), every
# projection is seeded, and a number is reported beside each picture: the share of the
# 2-D variance that lies between world regions (η²; 0 = regions indistinguishable).
#
# Offline default: `minilm-l6` (all-MiniLM-L6-v2, 6 layers, shipped in a PyPI package)
# on the project's country list (`data/templates/identities_en.yaml`). The authors' own
# list, all 245 countries of `Data/countries.json`: `templates="seed004_countries"`
# (`polybias.studies.capstone2023.country_templates`; the 24 countries the project's list also holds
# carry its world region, the others `unknown` and are left out of the agreement numbers).
#
# Seed 004 also clustered the states with KMeans and compared the first with the last
# layers ("the sum of the last 6 layers is always smaller"): the section *Clusters and
# layers* does both, with a number for each — the adjusted Rand index of the KMeans
# clusters of each layer against the regions, and a paired test of the summed activation
# of the first against the last half of the layers.

# %% tags=["parameters"]
model: str = "minilm-l6"  # registered encoder or MLM (configs/models.yaml or POLYBIAS_MODELS_FILE), a model directory or a hub id
revision: str = ""  # hub branch, tag or 40-hex commit; empty: the registered revision, else main
device: str = "auto"  # auto (CUDA when present; the CPU for embedded and planted models), cpu, cuda or cuda:N
dtype: str = "auto"  # auto (bfloat16 on CUDA for decoder families trained in it, else float32), float32, bfloat16 or float16 (CUDA only)
batch_tokens: int = 0  # padded tokens per forward pass; 0: auto (8192 on the CPU, from free GPU memory on CUDA)
templates: str = "identities_en"  # template file in data/templates, or seed004_countries (all the authors' countries)
template: str = "person_from_is"  # template whose identity slot is analysed
slot: str = "country"  # the identity slot
group_feature: str = "region"  # entry feature the groups of the 2-D views come from
layer_view: int = -1  # layer whose states are projected (-1: last; all layers flattened if 99)
views: list = ["pca", "svd"]  # 2-D views drawn, with their η²: pca, svd and tsne (tsne: chaotic, its layout and η² change with the CPU's kernels, so not drawn by default)
seed: int = 0  # seed of the TruncatedSVD and t-SNE projections (at least 0)
output_dir: str = "results/hidden/interactive"  # run records, relative to the project root
table_file: str = ""  # where to write the tables, e.g. paper/tables/hidden_minilm-l6.md

# %%
import pandas as pd
from polybias import models
from polybias.engines import hidden_states
from polybias.results import report
from polybias.studies import hidden_states as hidden_study
from polybias.studies import template_books
from polybias.studies.parameters import check_parameters

check_parameters("08_hidden_states", batch_tokens=batch_tokens, layer_view=layer_view, views=views, seed=seed,
                 templates=templates, template=template, slot=slot)
book = template_books.template_book(templates)
encoder = models.load(model, "encoder", revision=revision, device=device, dtype=dtype,
                      batch_tokens=batch_tokens)

# %% [markdown]
# ## Activation per layer
#
# Mean and standard deviation over the sentences of the sum and of the L2 norm of the
# identity's hidden state; layer 0 is the embedding output.

# %%
states, items = hidden_states.identity_states(encoder, book, template, slot)
stats, anova = hidden_study.layer_tables(states)
stats_table = report.markdown_table(stats, digits=3)
anova_table = report.markdown_table(anova, digits=1, formats={"p": ".1e"})

# %% tags=["nbval-check-output"]
print(f"{len(items)} sentences, {states.shape[1]} layers, {states.shape[2]} dimensions")
report.show_table(stats_table)
report.show_table(anova_table)

# %% [markdown]
# ## Two-dimensional views
#
# η² of each view for the groups of `group_feature`: the between-group share of the
# 2-D variance. PCA and TruncatedSVD are stable projections, so their η² is a checked
# result. t-SNE (seed 004's view) is chaotic: float differences in the last bit of the
# hidden states (another CPU's kernels) move its layout, so a run that draws it
# (`views`: add `tsne`) cannot give the same picture and η² on every machine; the runs
# beside the paper draw the stable views only.

# %%
points, groups, separation = hidden_study.two_d_views(states, items, group_feature, layer_view, seed,
                                                      methods=views)
separation_table = report.markdown_table(separation, digits=3)

# %% tags=["nbval-check-output"]
report.show_table(separation_table)

# %% [markdown]
# Countries of one region lie near each other in the encoder (the views separate the
# regions far better than chance), which is what a model that knows geography should
# do; it is not by itself a bias. Whether an adjective moves the identity's state
# differently by group is a question for the CB scores (notebooks 6 and 7), which read
# the model's predictions.

# %% [markdown]
# ## Clusters and layers
#
# KMeans (as many clusters as groups, `random_state=seed`, 10 restarts) on the states of
# every layer, against the groups of `group_feature` (adjusted Rand index: 1 = the
# clusters are the groups, 0 = unrelated), and seed 004's comparison of the first and the
# last half of the layers. KMeans assignments can flip for a borderline point when the
# states change in their last bits, so the indices are printed for reading; the checked
# cell prints the layer comparison's decision.

# %%
agreement = hidden_states.kmeans_agreement(states, groups, seed=seed)
halves = hidden_states.half_sums_test(states)
agreement_table = report.markdown_table(agreement, digits=2)
halves_table = report.markdown_table(pd.DataFrame([halves]), digits=2, formats={"p_t": ".1e", "p_wilcoxon": ".1e"})
report.show_table(agreement_table)
report.show_table(halves_table)

# %% tags=["nbval-check-output"]
print(hidden_study.halves_sentence(halves))

# %% [markdown]
# On MiniLM, as seed 004 found on BERT, the first half of the layers sums higher than the
# last half for every country. The KMeans clusters agree with the world regions only
# partly (adjusted Rand index well below 1), and more in the later layers than in the
# embedding layer: what separates the regions is built up by the encoder, not given by
# the word pieces alone.

# %%
_ = hidden_study.plot_views(points, groups, f"Hidden states of the {slot} word, {model}, layer {layer_view}",
                            file=f"hidden_{model}.png" if templates == "identities_en" else f"hidden_{model}_{templates}.png")

# %%
hidden_study.write_hidden_record(encoder, model, book.language, f"{templates}:{template}:{slot}",
                                 {"layer_view": layer_view, "seed": seed, "group_feature": group_feature},
                                 anova, separation, agreement, halves, output_dir)
if table_file:
    report.write_table("\n\n".join([stats_table, anova_table, separation_table, agreement_table, halves_table]), table_file)
