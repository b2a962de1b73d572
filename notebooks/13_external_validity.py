# ---
# jupyter:
#   kernelspec:
#     display_name: Python (polybias)
#     language: python
#     name: polybias
# ---

# %% [markdown]
# # 13. External validity: occupation bias against the census share of women
#
# Section 10 asks whether a metric recovers a bias we planted. Here the ground truth is
# the world: a gender-bias score of an occupation word should track how many women work
# in that occupation. Two studies made this check on static embeddings:
#
# * **WEFAT** (Caliskan, Bryson & Narayanan 2017): for an occupation w, words for women
#   A and for men B, s(w) = (mean_a cos(w, a) − mean_b cos(w, b)) / std_{x∈A∪B} cos(w, x).
#   On GloVe Common Crawl and 50 occupations, Pearson ρ = 0.90 with the 2015 Bureau of
#   Labor Statistics percentage of women (their Fig. 1).
# * **Relative norm distance** (Garg, Schiebinger, Jurafsky & Zou 2018): on unit vectors,
#   d(w) = ‖w − mean(men)‖ − ‖w − mean(women)‖. On Google News word2vec and the 2015
#   census, r² = 0.499 against the "women occupation relative percentage" 100 (2p − 1)
#   (their Fig. 1), a linear map of the share p, so r = √0.499 ≈ 0.71 with p itself.
#
# We compute both on the embedded `w2v-gnews` (the 13k-word subset of the same Google News
# vectors), with Garg et al.'s occupation list, 20 + 20 gender words and census shares
# (registered sources `garg2018-*`, read at run time), and two language-model measures
# with an occupation template: WEFAT on the sentence vectors of a contextual encoder
# ("This is an engineer." against "This is she.", SEAT's bleached-template recipe), and
# Kurita et al.'s (2019) log-probability bias with the occupation in the attribute slot,
# "[MASK] is a/an <occupation> .", on a masked LM when one is given (`mlm`).
#
# Correlations are Pearson and Spearman with 95 % Fisher-z intervals (for Spearman with
# the Bonett–Wright standard error; no bootstrap, so the intervals are the same on every
# run), against the share of women and its logit, in the latest census year of the file
# and in the year the model's text comes from. Every occupation left out is listed: words
# missing from a model's vocabulary, occupations without a census share that year.

# %% tags=["parameters"]
model: str = "w2v-gnews"  # registered static model (configs/models.yaml)
encoder: str = "minilm-l6"  # registered encoder for the sentence-vector WEFAT; empty: none
caliskan_terms: bool = True  # also WEFAT with Caliskan et al.'s 8 + 8 gender terms (en/weat.yaml female_terms, male_terms)
mlm: str = ""  # registered masked LM for Kurita's log-probability bias; empty: none (no embedded MLM knows occupations; planted-mlm: a negative control)
mlm_women: list = ["she"]  # Kurita targets for women (Kurita et al. 2019: he / she)
mlm_men: list = ["he"]  # Kurita targets for men, in the same order
census_year: int = 0  # census year to correlate with; 0: the latest year in the file
model_year: int = 2013  # census year matching the model's text (Google News word2vec, released 2013); 0: none
outcomes: list = ["share", "logit"]  # among share, logit and relative_percentage: share of women p, logit(p) (Garg et al.'s "logit proportion")
ddof: int = 1  # std degrees of freedom of WEFAT (1: sample std): 1 or 0
confidence: float = 0.95  # level of the Fisher-z intervals (in (0, 1))
reported: str = "external_validity_published"  # paper/reported/NAME.csv with the published correlations; empty: none
output_dir: str = "results/external/interactive"  # run records, relative to the project root
table_file: str = ""  # where to write the tables (e.g. paper/tables/external_w2v-gnews.md)
figure_file: str = "external_validity_scatter.png"  # scatter figure under figures/; empty: none

# %%
import torch
from polybias.data import census
from polybias.results import report
from polybias.studies import external_validity
from polybias.studies.parameters import check_parameters

check_parameters("13_external_validity", census_year=census_year, model_year=model_year,
                 outcomes=outcomes, ddof=ddof, confidence=confidence, mlm_women=mlm_women,
                 mlm_men=mlm_men)
torch.set_num_threads(1)
occupations = census.occupation_words()
gender = census.gender_words()
shares = census.occupation_shares()
latest = int(shares["year"].max())
year = census_year or latest
years = [year] + ([model_year] if model_year and model_year != year else [])
print(f"{len(occupations)} occupations, {len(gender['women'])} + {len(gender['men'])} gender words; "
      f"census years {years} (latest in the file: {latest})")

# %% [markdown]
# ## Scores per occupation
#
# Positive scores mean closer to (or more probable with) the words for women. Words a
# model lacks are listed below, never dropped silently.

# %%
result = external_validity.occupation_scores(
    model, occupations, gender["women"], gender["men"], caliskan_terms=caliskan_terms, encoder=encoder,
    mlm=mlm, mlm_women=mlm_women, mlm_men=mlm_men, ddof=ddof)
coverage = external_validity.coverage_table(model, result.missing)

# %% tags=["nbval-check-output"]
report.show_table(report.markdown_table(coverage))

# %% [markdown]
# ## Correlation with the census share of women

# %%
table, left_out = external_validity.correlation_tables(result, shares, years, tuple(outcomes), confidence)
correlation_table = report.markdown_table(table.drop(columns=["pearson_p", "spearman_p", "no_census"]), digits=2)
left_out_table = report.markdown_table(left_out)

# %% tags=["nbval-check-output"]
report.show_table(correlation_table)
report.show_table(left_out_table)

# %% [markdown]
# ## Beside the published correlations
#
# The published numbers come from other models (Caliskan et al.: GloVe 840B) or the full
# vocabulary (Garg et al.: all 3M Google News words; our subset lacks a few occupations),
# other occupation lists (Caliskan et al.: 50 BLS occupations) and other gender words
# (Caliskan et al.: 8 + 8; our row beside theirs uses those 8 + 8 terms), so they frame
# our numbers rather than test them; Garg et al.'s r is √r² of their Fig. 1.

# %%
published_table = ""
if reported:
    comparison = external_validity.published_comparison(
        table, report.load_reported(reported), model,
        measure_of={"wefat": "wefat_caliskan_terms"} if caliskan_terms else None)
    published_table = report.markdown_table(comparison, digits=2)

# %% tags=["nbval-check-output"]
report.show_table(published_table)

# %%
if figure_file:
    external_validity.plot_census_scatter(
        external_validity.joined_by_measure(result, shares, year), year,
        f"Occupation bias against the census share of women ({year})", file=figure_file,
        labels={m: f"{m} ({by})" for m, by in result.model_of.items()})
external_validity.write_external_records(
    result, table, model, {"years": years, "outcomes": outcomes, "ddof": ddof, "confidence": confidence,
                           "mlm_women": mlm_women, "mlm_men": mlm_men}, output_dir)
if table_file:
    report.write_table("\n\n".join(t for t in (report.markdown_table(coverage), correlation_table,
                                               left_out_table, published_table) if t), table_file)

# %% [markdown]
# ## Reading the numbers
#
# On `w2v-gnews`, both static measures correlate with the 2015 share of women at about
# r = 0.7 over the 66 occupations that the subset and the census both cover, and the
# relative norm distance gives Garg et al.'s r² = 0.499 (r = 0.71) to the printed digits:
# the subset holds the full model's vectors for these words, and the four occupations it
# lacks (midwife, auctioneer, blacksmith, postmaster) have no 2015 share either. WEFAT with
# Garg et al.'s 20 + 20 words is close to the relative norm distance; it stays well below
# Caliskan et al.'s ρ = 0.90, which came from another model, another occupation list and
# 8 + 8 gender words. The logit of the share correlates slightly less than the share
# itself, and the census year matching the model (2013) changes the correlations by about
# 0.01.
#
# The encoder measure on `minilm-l6` correlates less (r about 0.5, Spearman about 0.35): a
# sentence encoder trained for semantic similarity keeps less of the occupation–gender
# association than word2vec does, or the bleached template dilutes it.
#
# Kurita's log-probability bias needs a masked LM that knows the occupations, and none of
# the embedded models does: `minilm-l6` has no LM head, and the planted MLMs know only
# their generated vocabulary. The default sweep runs it on `planted-mlm` as a **negative
# control**: that model has never seen an occupation or a word for women or men of Garg
# et al.'s lists (its tokenizer spells them letter by letter), so its correlation with the
# census should be indistinguishable from zero, and it is. For a real measurement run the
# notebook with a hub MLM in the local cache, e.g.
# `polybias run 13_external_validity -p mlm bert-base-uncased`.
