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
# structure. Offline default: a tiny Bangla masked LM trained by the project on a
# generated corpus where male nouns co-occur with career words 90 % of the time
# (`planted_p = 0.9`; 0.5 is the balanced control); its corrected differences must be
# positive for career and negative for family words in every structure. With a hub model
# (e.g. `banglabert-generator`), use the project's trait templates `logprob_bn` with
# groups `positive` / `negative`.

# %% tags=["parameters"]
model: str = "planted"  # registered masked LM, a model directory or a hub id, or planted: the planted Bangla MLM (polybias.synthetic)
revision: str = ""  # hub branch, tag or 40-hex commit; empty: the registered revision, else main
device: str = "auto"  # auto (CUDA when present; the CPU for embedded and planted models), cpu, cuda or cuda:N
dtype: str = "auto"  # auto (bfloat16 on CUDA for decoder families trained in it, else float32), float32, bfloat16 or float16 (CUDA only)
batch_tokens: int = 0  # padded tokens per forward pass; 0: auto (8192 on the CPU, from free GPU memory on CUDA)
planted_p: float = 0.9  # planted association strength when model is planted (0.5: none)
templates: str = "planted_bn"  # template file in data/templates (e.g. logprob_bn), or planted_<lang>
target_list: str = "targets"  # word list of the target slot
attribute_list: str = "attributes"  # word list of the attribute slot
group_feature: str = "group"  # entry feature naming a word's group
x: str = "male"  # first target group
y: str = "female"  # second target group
a: str = "career"  # first attribute group
b: str = "family"  # second attribute group
mode: str = "word"  # target scoring: word (whole word) | first_piece (Kurita / seed-000 compat)
n_permutations: int = 10000  # Monte Carlo draws of the permutation test when not exact
seed: int = 0  # seed of the permutation test (and of the planted model's training)
output_dir: str = "results/logprob/interactive"  # run records, relative to the project root
table_file: str = ""  # where to write the tables, e.g. paper/tables/logprob_context_planted.md

# %%
from polybias import models, paths, records, report, templating
from polybias.metrics import logprob

if mode not in logprob.MODES:
    raise ValueError(f"mode must be one of {logprob.MODES}, got {mode!r}")
if not 0.0 <= planted_p <= 1.0:
    raise ValueError(f"planted_p must be a probability, got {planted_p}")
if len({x, y}) != 2 or len({a, b}) != 2:
    raise ValueError("the two target groups and the two attribute groups must differ")
book = (logprob.planted_templates(templates.split("_", 1)[1]) if templates.startswith("planted_")
        else templating.load_templates(templates))
lm = (logprob.planted_masked_lm(planted_p, book.language, seed=seed) if model == "planted"
      else models.load_lm(model, revision=revision, device=device, dtype=dtype,
                          batch_tokens=batch_tokens))
label = f"planted-p{planted_p}" if model == "planted" else model

# %% [markdown]
# ## One example per structure
#
# The sentences scored for the first target and attribute (fill sentences; the prior
# masks the attribute too).

# %%
first = {s: book.lists[book.template(t).slots[s].list].ids[0] for t in book.templates
         for s in (book.template(t).the("target"), book.template(t).the("attribute"))}
examples = [(t.set, templating.expand(book, t, fixed={k: v for k, v in first.items() if k in t.slots})[0].text)
            for t in book.templates.values()]
for structure, text in examples:
    print(f"{structure}: {text}")

# %% [markdown]
# ## Effect per structure
#
# `effect_size`: (mean over `a` attributes − mean over `b` attributes) of the corrected
# male − female difference, over its standard deviation (ddof = 1); `pvalue`: one-sided
# permutation test over re-splits of the attributes. `corrected_*`: the mean
# differences; `prior_spread`: how far apart the prior scores of paired male and female
# nouns are (standard deviation over noun pairs of their prior difference).

# %%
scores = logprob.kurita_scores(lm, book, list(book.templates), mode=mode)
summary, per_attribute = logprob.context_study(scores, book, target_list, attribute_list, x, y, a, b,
                                               group_feature, n_permutations, seed)
summary_table = report.markdown_table(summary, digits=3, formats={"pvalue": ".1e"})

# %% tags=["nbval-check-output"]
print(summary_table)

# %% [markdown]
# Per attribute group and structure: mean fill, prior and corrected differences.

# %%
means = per_attribute.groupby(["structure", "attribute_group"], sort=False)[["fill", "prior", "corrected"]].mean()
means_table = report.markdown_table(means.reset_index(), digits=3)

# %% tags=["nbval-check-output"]
print(means_table)

# %% [markdown]
# What the planted Bangla MLM shows (`planted_p = 0.9`): the corrected differences
# separate career from family words clearly in S1 and S2, the structures of its
# training sentences. With the attribute before the subject (S3) the separation nearly
# disappears — the model learned the association in one word order — and with several
# sentences of neutral context (S4, S5) the corrected differences shrink towards zero
# for career words while the prior differences stay large: more context leaves the
# inherent (prior) preference as the main influence, the pattern seed 000 reports for
# BanglaBERT (§5.2). At `planted_p = 0.5` no structure separates the attribute groups.

# %%
logprob.plot_context_study(per_attribute, f"Prior vs corrected differences, {label}",
                           file=f"logprob_context_{label}.png", ylabel=f"{x} − {y} (log-probability)")
record = records.RunRecord(
    metric="logprob-context", model=label, language=book.language, test=templates,
    parameters={"mode": mode, "x": x, "y": y, "a": a, "b": b, "n_permutations": n_permutations,
                "seed": seed, "planted_p": planted_p if model == "planted" else None},
    values={"summary": summary.to_dict("records")}, model_revision=lm.revision)
records.write_record(record, paths.output_path(output_dir))
if table_file:
    report.write_table("\n\n".join([summary_table, means_table]), table_file)
