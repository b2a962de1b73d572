"""Engines that run a loaded model: log-probabilities (:mod:`~polybias.engines.scoring`),
contextual vectors (:mod:`~polybias.engines.embeddings`), hidden states, static lookups;
shared helpers in :mod:`~polybias.engines.common`, a model's text normaliser applied and
described in :mod:`~polybias.engines.normalising`."""
