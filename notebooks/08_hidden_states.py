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
# (`polybias.seed004.country_templates`; the 24 countries the project's list also holds
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
seed: int = 0  # seed of the TruncatedSVD and t-SNE projections
output_dir: str = "results/hidden/interactive"  # run records, relative to the project root
table_file: str = ""  # where to write the tables, e.g. paper/tables/hidden_minilm-l6.md

# %%
import pandas as pd
from polybias import embeddings, hidden_states, paths, records, report, seed004, templating

book = seed004.country_templates() if templates == "seed004_countries" else templating.load_templates(templates)
if slot not in book.template(template).slots:
    raise ValueError(f"template {template!r} has no slot {slot!r}")
encoder = embeddings.load_encoder(model, revision=revision, device=device, dtype=dtype,
                                  batch_tokens=batch_tokens)

# %% [markdown]
# ## Activation per layer
#
# Mean and standard deviation over the sentences of the sum and of the L2 norm of the
# identity's hidden state; layer 0 is the embedding output.

# %%
states, items = hidden_states.identity_states(encoder, book, template, slot)
stats = hidden_states.layer_statistics(states)
f_sum, p_sum = hidden_states.layer_anova(states, "sum")
f_norm, p_norm = hidden_states.layer_anova(states, "norm")
anova = pd.DataFrame([{"statistic": "sum", "F": f_sum, "p": p_sum},
                      {"statistic": "norm", "F": f_norm, "p": p_norm}])
stats_table = report.markdown_table(stats, digits=3)
anova_table = report.markdown_table(anova, digits=1, formats={"p": ".1e"})

# %% tags=["nbval-check-output"]
print(f"{len(items)} sentences, {states.shape[1]} layers, {states.shape[2]} dimensions")
print(stats_table)
print()
print(anova_table)

# %% [markdown]
# ## Two-dimensional views
#
# η² of each view for the groups of `group_feature`: the between-group share of the
# 2-D variance. PCA and TruncatedSVD are stable projections, so their η² is a checked
# result. t-SNE is chaotic: float differences in the last bit of the hidden states (another
# CPU's kernels) move its layout, so its η² is printed for reading only and its picture
# is drawn below, but neither is checked.

# %%
view = states.reshape(len(states), -1) if layer_view == 99 else states[:, layer_view]
groups = items[f"feature:{group_feature}"].tolist()
points = {m: hidden_states.project(view, m, seed=seed) for m in hidden_states.METHODS}
separation = pd.DataFrame([{"method": m, "eta2": hidden_states.group_separation(p, groups)}
                           for m, p in points.items()])
stable = separation[separation.method != "tsne"]
separation_table = report.markdown_table(stable, digits=3)

# %% tags=["nbval-check-output"]
print(separation_table)

# %%
print(f"t-SNE eta2 (not checked, varies with the CPU): "
      f"{separation.set_index('method').eta2.get('tsne', float('nan')):.2f}")

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
print(agreement_table)
print()
print(halves_table)

# %% tags=["nbval-check-output"]
print(f"{halves['n']} occurrences, layers 1-{halves['h']} against the last {halves['h']}: "
      f"the first half sums {'higher' if halves['mean_first'] > halves['mean_last'] else 'lower'} "
      f"for {halves['share_first_larger']:.0%} of them; paired t-test "
      f"{'significant' if halves['p_t'] < 0.05 else 'not significant'} at 0.05, Wilcoxon "
      f"{'significant' if halves['p_wilcoxon'] < 0.05 else 'not significant'}")

# %% [markdown]
# On MiniLM, as seed 004 found on BERT, the first half of the layers sums higher than the
# last half for every country. The KMeans clusters agree with the world regions only
# partly (adjusted Rand index well below 1), and more in the later layers than in the
# embedding layer: what separates the regions is built up by the encoder, not given by
# the word pieces alone.

# %%
import matplotlib

matplotlib.use("Agg", force=False)
import matplotlib.pyplot as plt
import seaborn as sns
from polybias.plots import save_figure

fig, axes = plt.subplots(1, 3, figsize=(11, 3.4))
for ax, (m, p) in zip(axes, points.items(), strict=True):
    sns.scatterplot(x=p[:, 0], y=p[:, 1], hue=groups, ax=ax, s=18, legend=ax is axes[-1])
    ax.set_title(m)
    ax.set_xticks([])
    ax.set_yticks([])
fig.suptitle(f"Hidden states of the {slot} word, {model}, layer {layer_view}")
fig.tight_layout()
_ = save_figure(fig, f"hidden_{model}.png" if templates == "identities_en" else f"hidden_{model}_{templates}.png")

# %%
record = records.RunRecord(
    metric="hidden-states", model=model, language=book.language, test=f"{templates}:{template}:{slot}",
    parameters={"layer_view": layer_view, "seed": seed, "group_feature": group_feature},
    values={"anova_sum": [f_sum, p_sum], "anova_norm": [f_norm, p_norm],
            "separation": separation.set_index("method").eta2.to_dict(),
            "kmeans_ari": agreement.set_index("layer").ari.to_dict(), "half_sums": halves},
    model_revision=encoder.revision)
records.write_record(record, paths.output_path(output_dir))
if table_file:
    report.write_table("\n\n".join([stats_table, anova_table, separation_table, agreement_table, halves_table]), table_file)
