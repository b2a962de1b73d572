"""Data and language facts: registered sources (:mod:`~polybias.data.sources`), word lists,
templates, datasets, the source studies' own files, and text handling per language."""
