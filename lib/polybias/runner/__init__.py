"""Running notebooks: sweeps, a single run, revision pins, cluster jobs and the validity sweep.

The modules, each importing only those above it in this list:

* :mod:`~polybias.runner.locks` — the file lock a run holds while it executes (``lock``
  means only this in the package);
* :mod:`~polybias.runner.cluster` — batch jobs (SLURM, PBS, ...) of Dask workers;
* :mod:`~polybias.runner.runs` — a sweep YAML read into its runs; a notebook's declared
  parameters and their checks;
* :mod:`~polybias.runner.pins` — hub revisions pinned to commits (``polybias pin``;
  ``polybias lock`` is its earlier name);
* :mod:`~polybias.runner.sweep` — executing runs, resumable, locally or on Dask
  (``polybias sweep``);
* :mod:`~polybias.runner.single_run` — one notebook on one set of parameters
  (``polybias run``), through the sweep's execution;
* :mod:`~polybias.runner.validity_sweep` — the planted-model validity study, a sweep of
  ``kind: validity`` whose runs (one planted model each) the sweep executes like its
  notebooks (the sweep finds it by the kind's dotted name, :data:`polybias.runner.sweep.KINDS`,
  and does not import it);
* :mod:`~polybias.runner.validity_diagnosis` — the validity study's diagnostic jobs, a
  sweep of ``kind: validity-diagnosis``;
* :mod:`~polybias.runner.validity_eurogest` — the EuroGEST measure on causal LMs planted in
  three of EuroGEST's languages, a sweep of ``kind: validity-eurogest``;
* :mod:`~polybias.runner.record_run` — the run of those three kinds: score one planted
  model, write its record, under the runner's lock-done-skip protocol.
"""
