# ---
# jupyter:
#   kernelspec:
#     display_name: Python (polybias)
#     language: python
#     name: polybias
# ---

# %% [markdown]
# # 17. Real models: one table, and whether the measures rank them alike
#
# Every real checkpoint the project holds numbers for, under its hub id: the authors'
# released GEST runs (g_s per model and template, English; 11 masked LMs × 4 templates,
# 23 causal LMs × 2), Öztürk et al.'s StereoSet runs (intrasentence SS, micro as in their
# workbook, recomputed from their prediction files; en, de, es, fr, tr), Strazda &
# Spanakis's CrowS-Pairs runs (stereotype score over all pairs; Dutch, English, French),
# and SmolLM2-135M-Instruct (Q4_1), scored by this project on the full sets: read from the
# run records of the sweep's full-set runs of SmolLM2 (they take CPU-hours), where a run
# that is not done in this checkout gives a row that says `not run` and names the command
# that runs it. Intervals: seeded percentile
# bootstraps (GEST: a normal fitted to the bootstrap means within stereotypes, the
# authors' form). The short names each source uses map to hub ids in
# `polybias.studies.real_models` (`STEREOSET_HUB_IDS`, `DUTCH_CROWS_HUB_IDS`; GEST's
# registry carries its own); an unknown name stops the run.
#
# Values: g_s is a ratio (1: masculine and feminine stereotypes read alike); SS and the
# stereotype score are percentages (50: no preference).

# %% tags=["parameters"]
n_bootstrap: int = 1000  # bootstrap resamples for the intervals of g_s, SS and the stereotype score and of the rank correlations (at least 0; 0: none)
seed: int = 0  # seed of every bootstrap (at least 0)
method: str = "spearman"  # rank correlation: spearman or kendall
min_models: int = 3  # fewest shared checkpoints for a rank correlation (at least 2)
sweep_file: str = "configs/sweeps/default.yaml"  # sweep whose full-set runs of the embedded real models give their rows (their run records, or the records kept under paper/records); empty: none
output_dir: str = "results/real-models/interactive"  # run records, relative to the project root
table_file: str = ""  # where to write the tables, e.g. paper/tables/real-models.md
csv_file: str = ""  # where to write the table as CSV, e.g. paper/tables/real-models.csv
findings_file: str = ""  # where to write the findings' tables (EuroGEST per language, the minimal-pair scores, the two models' differences), e.g. paper/tables/real-model-findings.md; their summary goes beside it (-summary.md)

# %%
from polybias import paths
from polybias.results import records, report
from polybias.runner import sweep, validity_eurogest
from polybias.studies import eurogest as eurogest_study
from polybias.studies import real_model_findings as findings
from polybias.studies import real_models as study
from polybias.studies.parameters import check_parameters

check_parameters("17_real_models", n_bootstrap=n_bootstrap, seed=seed, method=method,
                 min_models=min_models)

# %% [markdown]
# ## The table
#
# One row per run: `name` is the source's own name of the model, `run` the template,
# scoring head or dataset, `n` the sentences, items or pairs scored.

# %%
runs = sweep.run_records(paths.project_root() / sweep_file, study.embedded_full_run) if sweep_file else {}
table = study.real_model_table(n_bootstrap=n_bootstrap, seed=seed,
                               extra=study.embedded_rows(runs, sweep_file))
embedded_sources = [facts["source"] for facts in study.EMBEDDED.values()]
released = table[~table.source.isin(embedded_sources)]
embedded = table[table.source.isin(embedded_sources)]
table_text = study.real_model_markdown(table)
print(f"{len(released)} released runs of {released.hub_id.nunique()} checkpoints from "
      f"{released.source.nunique()} sources")

# %% tags=["nbval-check-output"]
report.show_table(study.real_model_markdown(released))

# %% [markdown]
# The embedded real models' rows (SmolLM2 and Gemma-3-270m), from the records of the sweep's
# full-set runs: those done in this checkout, or kept under `paper/records/` and committed
# (not checked by nbval: which runs are done depends on the checkout; the tables in
# `paper/tables/` hold those of the sweep that wrote them).

# %%
for name in study.EMBEDDED:
    rows = embedded[embedded.name == name]
    print(f"{name}: {rows.value.notna().sum()} numbers from "
          f"{sum(study.run_model(k) == name for k in runs)} full-set runs, "
          f"{rows.note.str.startswith('not run').sum()} not run")
report.show_table(study.real_model_markdown(embedded))

# %% [markdown]
# ## What the real models show across languages
#
# The records of the embedded real models' full-set runs, read as findings: EuroGEST's
# g_s per language (Gemma in all 29 languages; SmolLM2, registered for English, in the
# same languages with `language_override`), the stereotype score of every minimal-pair
# dataset and language, and the cells where the two models' 95 % intervals do not overlap.
# Each reading sits beside the validity verdict of its measure in that language, from the
# planted-model study (notebooks 10 and 16): `calibrated` (false positives at the nominal
# rate), `too liberal` (more), `undecided` (too few balanced models to tell), or
# `not tested` (no planted model in that language: the interval is a sampling interval of
# this model, not evidence that the measure detects a bias there).

# %%
verdicts = findings.validity_verdicts(validity_eurogest.read_frame())
tables = findings.findings_tables(runs, verdicts)
eurogest_text = report.markdown_table(tables["eurogest"], digits=3)
pairs_text = report.markdown_table(tables["pairs"].drop(columns=["language_name"]), digits=2)
other_text = report.markdown_table(tables["other"], digits=3)
summary_text = report.markdown_table(findings.summary_counts(tables))
stereotypes_text = report.markdown_table(tables["stereotypes"], digits=3)
strongest_text = report.markdown_table(tables["strongest"], digits=4)
differences_text = report.markdown_table(tables["differences"], digits=3)
measured = findings.languages_measured(tables["tidy"])
print(f"languages measured: {len(measured['all'])} together; "
      + "; ".join(f"{m}: {len(v)}" for m, v in measured.items() if m != "all"))
print(f"EuroGEST: {len(tables['eurogest'])} model-language cells; minimal pairs: "
      f"{len(tables['pairs'])}; cells of both models: {len(tables['differences'])}, "
      f"{int(tables['differences']['differ'].sum())} beyond their intervals")

# %% tags=["nbval-check-output"]
report.show_table(summary_text)

# %% tags=["nbval-check-output"]
report.show_table(eurogest_text)

# %% tags=["nbval-check-output"]
report.show_table(pairs_text)

# %% tags=["nbval-check-output"]
report.show_table(other_text)

# %% [markdown]
# EuroGEST's 16 stereotypes ranked by their mean masculine rate over the languages, from
# the most feminine to the most masculine, and whether the stereotypes Rowe et al. (2025)
# find strongest in all 24 of their models (women beautiful, empathetic, neat; men
# leaders, strong, tough, professional) sit at the ends: `p` is the exact share of random
# sets of as many stereotypes whose ranks lie as far toward that end.

# %% tags=["nbval-check-output"]
report.show_table(stereotypes_text)
report.show_table(strongest_text)

# %% [markdown]
# Gemma-3-270m's masculine rate per language and stereotype (0.5 white; red: the
# masculine form likelier). A stereotyped model is red right of the line and blue left.

# %%
for name in sorted(set(tables["eurogest"].get("model", []))):
    eurogest_study.rates_heatmap(findings.eurogest_rates(tables["tidy"], name),
                                 f"{name}: masculine rate by language and GEST stereotype",
                                 file=f"eurogest_real_{name}.png")
if findings_file:
    report.write_table(summary_text, findings_file.replace(".md", "-summary.md"))
    report.write_table("\n\n".join([
        "**EuroGEST g_s per language** of the embedded real models, with the measure's "
        "validity verdict in that language", eurogest_text,
        "**Stereotype score per minimal-pair dataset and language** of the embedded real "
        "models, with the CrowS-Pairs verdict for causal LMs in that language", pairs_text,
        "**GEST's g_s per causal template and StereoSet's intrasentence SS** of the embedded real "
        "models (neither measure has a planted-model verdict)", other_text,
        "**EuroGEST's stereotypes ranked** by their mean masculine rate over the languages",
        stereotypes_text, "**Rowe et al.'s strongest stereotypes** at the ends of each ranking",
        strongest_text,
        "**Cells measured for both models**: differ = their 95 % intervals do not overlap",
        differences_text]), findings_file)

# %% [markdown]
# ## Do the measures rank the checkpoints they share alike?
#
# One value per checkpoint and measure (the mean over its runs: GEST's templates,
# StereoSet's scoring heads), then the rank correlation between every two measures (and
# languages) on the released checkpoints they share, with a bootstrap interval over
# checkpoints and the exact permutation p-value. Few checkpoints are shared: read `n` first.
# (SmolLM2 would add one checkpoint to a pair of measures it has both of.)

# %%
values = study.model_values(released)
agreement = study.rank_agreement(values, method=method, n_bootstrap=n_bootstrap, seed=seed,
                                 min_models=min_models)
agreement_text = study.agreement_markdown(agreement)

# %% tags=["nbval-check-output"]
report.show_table(agreement_text)

# %% [markdown]
# ## Do GEST's templates rank the checkpoints alike?
#
# The same question inside one measure, where enough checkpoints are shared: the 11
# masked LMs under the 4 masked templates, the 23 causal LMs under the 2 causal ones.

# %%
templates = study.rank_agreement(study.gest_template_values(released), method=method,
                                 n_bootstrap=n_bootstrap, seed=seed, min_models=min_models)
templates_text = study.agreement_markdown(templates.drop(columns=["models"]))

# %% tags=["nbval-check-output"]
report.show_table(templates_text)

# %%
if table_file:
    report.write_table("\n\n".join([table_text, agreement_text, templates_text]), table_file)
if csv_file:
    records.write_text_atomic(paths.output_path(csv_file), study.done_rows(table).to_csv(index=False))
study.write_record(table, {"n_bootstrap": n_bootstrap, "seed": seed, "sweep_file": sweep_file}, output_dir)
