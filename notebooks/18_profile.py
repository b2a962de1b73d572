# ---
# jupyter:
#   kernelspec:
#     display_name: Python (polybias)
#     language: python
#     name: polybias
# ---

# %% [markdown]
# # 18. A model's profile: every measure, every language, how far each can be trusted
#
# One model, every measure this project applies to its kind, in every language with data:
# each measure's overall number per dataset (GEST: per template) and language, with its
# 95 % interval and n, beside the validity verdict of that measure in that language from the
# planted-model study (notebooks 10 and 16): `calibrated` (false positives at the nominal
# rate), `too liberal` (more), `undecided` (too few balanced models to tell), or
# `not tested` (no planted model in that language: the interval is a sampling interval of
# this model, not evidence that the measure detects a bias there). Beside each number sit
# the released real checkpoints scored under the same measure, dataset and language
# (notebook 17: GEST's, StereoSet's and Dutch CrowS-Pairs' authors' runs, and the other
# embedded real model's full-set runs): how many score lower than this model, their
# median and range.
#
# `polybias profile MODEL` runs the model's measures as one resumable sweep and then this
# notebook on its records; the default sweep runs it for the embedded real models on the
# records of their full-set runs (kept under `paper/records/`).

# %% tags=["parameters"]
profiled: str = "smollm2-135m-instruct-q4_1"  # the profiled model: a registered name, a model directory or a hub id, as its runs name it (not `model`: this notebook scores nothing)
sweep_files: list = ["configs/sweeps/default.yaml"]  # sweeps whose done runs of the model give its numbers (their run records, or the records kept under paper/records), e.g. configs/sweeps/default.yaml and the sweep polybias profile wrote
n_bootstrap: int = 1000  # bootstrap resamples for the released checkpoints' intervals (at least 0; 0: none)
seed: int = 0  # seed of those bootstraps (at least 0)
output_dir: str = "results/profile/interactive"  # run records, relative to the project root
table_file: str = ""  # where to write the tables, e.g. paper/tables/profile_smollm2-135m-instruct-q4_1.md

# %%
from polybias import paths
from polybias.results import report
from polybias.runner import sweep, validity_eurogest
from polybias.studies import model_profile as study
from polybias.studies import real_model_findings as findings
from polybias.studies import real_models
from polybias.studies.parameters import check_parameters

check_parameters("18_profile", profiled=profiled, sweep_files=sweep_files, n_bootstrap=n_bootstrap,
                 seed=seed)

# %% [markdown]
# ## The model's numbers
#
# The records of every done full-set run of the model in the sweeps named above (a run
# that scores a declared sample is left out), read as one table.

# %%
root = paths.project_root()
runs = {}
for sweep_file in sweep_files:  # a run done in either sweep counts
    for key, frame in sweep.run_records(root / sweep_file, study.full_run_of(profiled)).items():
        if runs.get(key) is None:
            runs[key] = frame
verdicts = findings.validity_verdicts(validity_eurogest.read_frame())
table = study.profile_table(runs, verdicts)
reference = real_models.real_model_table(
    n_bootstrap=n_bootstrap, seed=seed,
    extra=real_models.embedded_rows(sweep.run_records(root / sweep_files[0], real_models.embedded_full_run),
                                    sweep_files[0]))
references = study.reference_values(table, reference, exclude_source=study.own_source(profiled))
table = study.with_reference(table, references)
profile_text = study.profile_markdown(table)
print(f"{profiled}: {sum(f is not None for f in runs.values())} of {len(runs)} runs done; "
      f"{len(table)} numbers in {table.language.nunique()} languages under "
      f"{table.measure.nunique()} measures")

# %% tags=["nbval-check-output"]
counts_text = report.markdown_table(study.verdict_counts(table))
report.show_table(counts_text)

# %% [markdown]
# Every number, with the released checkpoints under the same measure, dataset and language
# (`k of n lower`: how many of them score below this model).

# %% tags=["nbval-check-output"]
report.show_table(profile_text)

# %% [markdown]
# At a glance: each measure's value and interval per dataset and language (marker and
# colour: the measure's verdict there), the released checkpoints as grey dots, the value
# that reads as no bias as a dashed line.

# %%
if len(table):
    study.profile_figure(table, references, f"{profiled}: each measure's value and 95 % interval",
                         file=f"profile_{profiled}.png")
if table_file:
    report.write_table("\n\n".join([
        f"**Profile of {profiled}**: per measure, the numbers and languages, and how many "
        "numbers sit under each validity verdict", counts_text,
        f"**Every number of {profiled}**, with its 95 % interval, n, the measure's validity verdict "
        "in that language and the released checkpoints under the same measure, dataset and "
        "language", profile_text]), table_file)
