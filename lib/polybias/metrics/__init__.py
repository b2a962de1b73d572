"""Bias metrics, one module per family (``weat``; more to come: seat, ceat, logprob, crows, catbias)."""
