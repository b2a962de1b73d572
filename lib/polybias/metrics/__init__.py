"""Bias metrics, pure: arrays, frames and model outputs in, results out (no files, plots,
records or model loading; a metric may call an engine on a model it is given). One module
per family: weat, seat, ceat, logprob, crows, catbias, debias, agreement."""
