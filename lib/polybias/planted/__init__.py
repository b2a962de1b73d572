"""Planted models and corpora: generated text with a known association, the tiny models
trained on it (pinned in ``data/planted``), random tiny models of every family, and the
probes that measure them."""
