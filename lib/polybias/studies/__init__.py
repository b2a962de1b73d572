"""Studies: one module per paper section. Each runs a metric (:mod:`polybias.metrics`)
over a model (:func:`polybias.models.load`) and data (:mod:`polybias.data`), writes run
records, and builds the section's tables and figures; the reproduction helpers of the
source studies live beside them. :mod:`~polybias.studies.parameters` checks every
notebook's parameters (each study module declares its notebook's, with
:mod:`~polybias.studies.notebook_parameters`), :mod:`~polybias.studies.template_books` names the template
books notebooks run on."""
