# ---
# jupyter:
#   kernelspec:
#     display_name: Python (polybias)
#     language: python
#     name: polybias
# ---

# %% [markdown]
# # 1. WEAT on static word embeddings
#
# The Word Embedding Association Test (Caliskan, Bryson & Narayanan 2017) compares how
# two target word sets X, Y (e.g. flowers, insects) associate with two attribute sets
# A, B (pleasant, unpleasant) in an embedding space. For a word w,
# s(w, A, B) = mean cos(w, a) − mean cos(w, b); the effect size is the difference of
# the mean s over X and over Y divided by the standard deviation of s over X ∪ Y
# (ddof = 1 as in the original paper); the p-value is a one-sided permutation test
# of Σ_X s − Σ_Y s over re-splits of X ∪ Y, exact when the splits can be enumerated.
#
# This notebook runs WEAT 1–10 on a registered static model and prints the effect
# sizes beside those reported by Caliskan et al. for word2vec GoogleNews. On the
# embedded `w2v-gnews` (13k real GoogleNews vectors shipped with WEFE) the tables
# below are checked by nbval.
#
# Other languages: `language: hi` runs the Hindi tests of Malik et al. (2022, seed 003;
# gender, caste, religion, rural/urban occupation, meaningful encoding, each with its
# translated variant) and `language: bn` the Bangla categories C1–C9 of Sadhu et al.
# (2024, seed 000), on any static model given by path (`model_path`: word2vec or GloVe,
# text or binary; `model` then only names it, e.g. `glove-hi` or `w2v-bn` to line up
# with the reported values `malik2022_hindi_weat` / `sadhu2024_bangla_weat`).
#
# Offline, no static model holds the Bangla or Hindi words, so `model: planted-static`
# builds a known-answer embedding from the lists at run time (`polybias.planted.static`):
# each word a random unit vector plus `planted_strength` along one axis per test, towards
# A for the targets X and towards B for Y. Every test must then show a large positive
# effect (about 1.5 to 1.9 at strength 0.5), and none at strength 0. The table is built
# analytically (no training) and is the same on every machine.

# %% tags=["parameters"]
model: str = "w2v-gnews"  # registered static model (configs/models.yaml), the name of model_path, or planted-static (built from the word lists)
planted_strength: float = 0.5  # planted-static: strength of the planted association (0: none; at least 0)
model_path: str = ""  # static embedding file used instead of a registered model; empty: none
model_format: str = ""  # format of model_path: word2vec-text, word2vec-binary or glove-text; empty: by suffix
language: str = "en"  # word-list folder under data/wordlists/
language_override: bool = False  # run a registered model on a language its entry does not list (recorded in the run)
tests: list = []  # test names; empty: every test of wordlist_file
wordlist_file: str = ""  # word lists; empty: the language's default (bn: seed000, the study's own C1-C9; else weat.yaml); weat.yaml: the project's lists
variants_file: str = "weat_variants.yaml"  # extra list variants to compare; empty: none
ddof: int = 1  # std degrees of freedom of the effect size (1 Caliskan, 0 WEFE): 1 or 0
alternative: str = "greater"  # permutation test: two-sided, greater or less
n_permutations: int = 100000  # Monte Carlo draws when exact enumeration is too large (at least 1)
exact_limit: int = 1000000  # enumerate all splits when there are at most this many (at least 0)
seed: int = 0  # seed of the Monte Carlo draws (at least 0)
on_missing: str = "drop"  # words missing from the model's vocabulary: raise or drop
reported: str = "caliskan2017_weat"  # paper/reported/NAME.csv; empty: none
output_dir: str = "results/weat/interactive"  # run records (relative to the project root)
table_file: str = ""  # where to write the table (e.g. paper/tables/weat_w2v-gnews.md)

# %%
from polybias import measures, models
from polybias.results import plots, report
from polybias.studies.parameters import check_parameters
from polybias.studies.weat import run_variants, run_weat

check_parameters("01_weat", planted_strength=planted_strength, model_format=model_format, ddof=ddof,
                 alternative=alternative, n_permutations=n_permutations, exact_limit=exact_limit,
                 seed=seed, on_missing=on_missing, model=model, model_path=model_path,
                 language=language, language_override=language_override)
options = dict(ddof=ddof, alternative=alternative, n_permutations=n_permutations,
               exact_limit=exact_limit, seed=seed)
# a file given by path (its words brought to NFC, as the lists are), a registered table, or
# planted-static: a known-answer table built from the word lists
planted = models.Planted(strength=planted_strength, language=language, seed=seed,
                         wordlist_file=wordlist_file)
embeddings = (models.load(model_path, "static", format=model_format, name=model, nfc=True)
              if model_path else models.load(model, "static", planted=planted))
variants_table_file = table_file.replace(".md", "_variants.md") if table_file else ""

# %% [markdown]
# ## Effect sizes, reproduced and reported
#
# One run record per test is written to `output_dir`. `dropped` lists words missing
# from the model (with `on_missing="drop"`); WEFE's GoogleNews subset lacks only "axe".

# %%
frame = run_weat(model, language, tests or None, wordlist_file, on_missing, output_dir,
                 embeddings=embeddings, **options)
if reported:
    frame = report.side_by_side(frame, report.load_reported(reported, model=model),
                                on="test", value="effect_size")
table = report.markdown_table(frame, digits=2, formats={"pvalue": ".1e"})

# %% tags=["nbval-check-output"]
report.show_table(table)

# %%
if table_file:
    report.write_table(table, table_file)
if reported:
    plots.reproduced_vs_reported(frame, "test", f"WEAT effect sizes, {model}",
                                 ylabel=measures.get("weat").axis, file=f"weat_{model}.png")

# %% [markdown]
# ## Why WEAT 3, 4 and 10 need care
#
# The WEAT lists travel between projects with small edits, and three of the ten tests
# are sensitive to them. The variant table below runs each variant of
# `data/wordlists/en/weat_variants.yaml` beside the published value of its base test.
#
# * **WEAT 3** reproduces with the attribute lists of Caliskan et al.'s WEAT 3 (their
#   unpleasant list with *bomb* and *evil*, WEFE's `unpleasant_5b`), which `weat.yaml`
#   uses. The WEAT 1 list (`unpleasant_5a`, with *agony* and *prison*) is a common
#   substitute that does not reproduce it.
# * **WEAT 4** reproduces only with the 16 + 16 names that Caliskan et al. kept after
#   dropping *Jay*, *Kristen*, *Tremayne* and *Latonya* (the list of sent-bias's
#   `weat4.jsonl`; XWEAT notes the exclusion). WEFE keeps all 18 + 18 names; the
#   attribute list (`5a` vs `5b`) and the ddof do not explain the gap. Curiously, the
#   published WEAT 5, which uses the same names, matches the full 18 + 18 list and not
#   the reduced one (`WEAT5-caliskan`): the two published numbers were computed with
#   different name lists.
# * **WEAT 10** uses *Billy* in Caliskan et al. (and in sent-bias and XWEAT) where WEFE
#   has *Bill*. *Billy* is not in the 13k-word `w2v-gnews` subset, so the exact list can
#   only be run on the full GoogleNews model (`w2v-gnews-full`, a local file); with
#   *Billy* dropped the value moves toward the published one but does not reach it.
#   This difference stays open on the embedded model.

# %%
variant_table = ""
variants = run_variants(model, language, variants_file, on_missing, output_dir, embeddings=embeddings,
                        reported=reported, **options)
if variants is not None:
    variant_table = report.markdown_table(variants, digits=2, formats={"pvalue": ".1e"})
    if variants_table_file:
        report.write_table(variant_table, variants_table_file)

# %% tags=["nbval-check-output"]
report.show_table(variant_table or f"No variants of the {language} lists to compare "
                  "(variants_file names none for this language, or no published value to set them beside).")
