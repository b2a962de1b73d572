# ---
# jupyter:
#   kernelspec:
#     display_name: Python (polybias)
#     language: python
#     name: polybias
# ---

# %% [markdown]
# # 2. SEAT on sentence encoders
#
# The Sentence Encoder Association Test (May et al. 2019) carries WEAT over to sentence
# encoders: every target and attribute word is put into semantically bleached templates
# ("This is X.", "X is here.", "The person's name is X."), each sentence is encoded, and
# the WEAT statistics are computed over the sentence vectors. For a sentence w,
# s(w, A, B) = mean cos(w, a) − mean cos(w, b); the effect size is the difference of the
# mean s over the X and Y sentences divided by the standard deviation of s over X ∪ Y
# (ddof = 1); the p-value is the one-sided permutation test of Σ_X s − Σ_Y s, exact
# when the re-splits can be enumerated, else Monte Carlo with a seed.
#
# The tests are May et al.'s own files (C1–C10 with the "b" variants that use group
# terms instead of names, the Angry Black Woman stereotype, and the Heilman double binds).
# The default sweep leaves out C1–C4 and C5b, the tests with the most sentences,
# to keep the notebook under a minute and a half on one CPU; `tests: []` runs all 27.
# The embedded default `minilm-l6` (all-MiniLM-L6-v2) is not one of the encoders May et
# al. evaluated, so there is no published row to compare with: the table below is our
# measurement only. Sentence vectors use the model's own pooling (mean over all tokens
# for MiniLM), not the first-wordpiece vector of the original code (docs/conventions.md, pitfalls).
#
# In Hindi and Bangla the tests are the studies' own lists (seed 003 App. C, seed 000
# C1–C9) in the language's bleached templates. Offline, `model: planted-static` is a
# known-answer encoder (`polybias.models.load` builds it: `polybias.models._planted.bag_of_words`): a sentence's vector is
# the mean of the planted static vectors of its words (the list word carries the planted
# association, the template words are random), so every test must show a positive
# effect, diluted by the templates; the table is built analytically, the same on every
# machine.

# %% tags=["parameters"]
model: str = "minilm-l6"  # registered encoder or MLM (configs/models.yaml or POLYBIAS_MODELS_FILE), a model directory or a hub id; planted-static: a bag-of-words encoder over a planted table built from the word lists (hi, bn)
planted_strength: float = 0.5  # planted-static: strength of the planted association (0: none; at least 0)
revision: str = ""  # hub branch, tag or 40-hex commit; empty: the registered revision, else main
device: str = "auto"  # auto (CUDA when present; the CPU for embedded and planted models), cpu, cuda or cuda:N
dtype: str = "auto"  # auto (bfloat16 on CUDA for decoder families trained in it, else float32), float32, bfloat16 or float16 (CUDA only)
batch_tokens: int = 0  # padded tokens per forward pass; 0: auto (8192 on the CPU, from free GPU memory on CUDA)
language: str = "en"  # en: May et al.'s SEAT files; hi, bn: the language's word lists in data/templates/seat_<lang>.yaml
wordlist_file: str = ""  # hi/bn word lists (data/wordlists/<lang>/); empty: the language's default
tests: list = []  # SEAT test names (polybias.metrics.seat.SEAT_TESTS); empty: all of them
pooling: str = "model"  # sentence vector: model, cls, mean or first-piece; model: the model's own, mean: non-special tokens, first-piece: sent-bias compat
special_tokens: bool = True  # encode with [CLS]/[SEP]; False with first-piece: sent-bias's encoder (compat)
layer: int = -1  # hidden layer (-1 last, 0 embeddings)
ddof: int = 1  # std degrees of freedom of the effect size (1 Caliskan/May, 0 WEFE): 1 or 0
alternative: str = "greater"  # permutation test: two-sided, greater or less
n_permutations: int = 10000  # Monte Carlo re-splits when exact enumeration is too large (at least 1)
exact_limit: int = 1000000  # enumerate all re-splits when there are at most this many (at least 0)
seed: int = 0  # seed of the Monte Carlo draws (at least 0)
cache: bool = False  # read/store sentence vectors in the embedding cache
reported: str = ""  # paper/reported/NAME.csv (one model, keyed by test) to print beside the effect sizes, e.g. sadhu2024_bangla_seat (BanglaBERT); empty: none
output_dir: str = "results/seat/interactive"  # run records (relative to the project root)
table_file: str = ""  # where to write the table (e.g. paper/tables/seat_minilm-l6.md)

# %%
from polybias import models
from polybias.planted import static as planted_static
from polybias.results import report
from polybias.studies import seat as seat_study
from polybias.studies.parameters import check_parameters

check_parameters("02_seat", planted_strength=planted_strength, batch_tokens=batch_tokens,
                 pooling=pooling, layer=layer, ddof=ddof, alternative=alternative,
                 n_permutations=n_permutations, exact_limit=exact_limit, seed=seed,
                 language=language, tests=tests)
options = dict(ddof=ddof, alternative=alternative, n_permutations=n_permutations,
               exact_limit=exact_limit, seed=seed)
tests = [tests] if isinstance(tests, str) else list(tests)  # `-p tests weat6` gives one name

# %% [markdown]
# ## Effect sizes of May et al.'s English SEATs
#
# One run record per test goes to `output_dir`. `n_x` and `n_a` are the numbers of
# target and attribute sentences (per side). Monte Carlo p-values are (hits + 1) /
# (n + 1), so 1.0e-04 is the floor with 10,000 re-splits; the double-bind tests with 8 +
# 8 targets are enumerated exactly. `pooling="first-piece", special_tokens=False`
# reproduces sent-bias's BERT encoder (tested by executing it; `docs/reference_compat.md`).

# %%
# planted-static: its table holds the words of the language's lists and templates
templates = seat_study.load_templates(language).groups.values()
planted = models.Planted(strength=planted_strength, language=language, seed=seed,
                         wordlist_file=wordlist_file, texts=tuple(t for g in templates for t in g))
encoder = models.load(model, "encoder", revision=revision, device=device, dtype=dtype,
                      batch_tokens=batch_tokens, planted=planted)
if language == "en":
    frame = seat_study.run_seat(encoder, tests or None, pooling=pooling, layer=layer, output_dir=output_dir,
                          special_tokens=special_tokens, cache=cache, **options)
else:  # the language's word-list tests in its bleached templates (seat_study.run_templated_seat)
    frame = seat_study.run_templated_seat(encoder, language, tests or None, file=wordlist_file, pooling=pooling,
                                    layer=layer, output_dir=output_dir, special_tokens=special_tokens,
                                    cache=cache, **options)
if reported:
    frame = report.side_by_side(frame, report.load_reported(reported), on="test", value="effect_size")
table = report.markdown_table(frame, digits=2, formats={"pvalue": ".1e"})

# %% tags=["nbval-check-output"]
report.show_table(table)

# %% [markdown]
# Effect sizes per test; darker bars have p < 0.05.

# %%
_ = seat_study.plot_effects(frame, f"SEAT, {model} ({pooling} pooling)" + ("" if language == "en" else f", {language}"),
                            file=f"seat_{model}.png" if language == "en" else f"seat_{model}_{language}.png")

# %% [markdown]
# ## The project's templates
#
# Word-level tests in other languages are turned into SEATs with the bleached templates
# of `data/templates/seat_<lang>.yaml`: English from May et al., Hindi from Malik et al.
# (2022, App. D; written in Devanagari), Bangla translated from May et al. as in Sadhu
# et al. (2024, App. A.2). The English `name` templates reproduce May et al.'s name
# sentences exactly (tested). Below, one example sentence per template group, and
# C6 (career/family) rebuilt from its word list with the English templates beside May
# et al.'s sentence file. The rebuilt version puts every career and family word into
# the singular `noun` templates ("This is a salary."), where May et al. chose the
# article, number and mass-noun forms word by word, so its attribute sentences differ.

# %%
example_table = report.markdown_table(seat_study.template_examples({"en": "Emily", "hi": "कमला", "bn": "কমলা"}))

# %% tags=["nbval-check-output"]
report.show_table(example_table)

# %%
c6_table = ""  # the planted encoder holds only the words of the language's lists: no English C6
if not isinstance(encoder, planted_static.BagOfWords):
    c6 = seat_study.rebuilt_c6(encoder, frame, pooling=pooling, layer=layer,  # English C6, whatever `language` is
                               special_tokens=special_tokens, **options)
    c6_table = report.markdown_table(c6, digits=2, formats={"pvalue": ".1e"})

# %% tags=["nbval-check-output"]
report.show_table(c6_table or "The rebuilt English C6 needs an encoder of any English word; the "
                  "planted encoder holds only the words of the language's lists.")

# %%
if table_file:
    report.write_table("\n\n".join(t for t in [table, c6_table] if t), table_file)
