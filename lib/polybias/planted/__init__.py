"""Planted models and corpora: generated text with a known association, the tiny models
trained on it (kept in ``data/planted``, :mod:`polybias.planted.model_store`), random tiny
models of every family, and the probes that measure them."""
