"""The reference loops the benchmarks time the engine against.

Shared by ``bench_scoring.py`` and ``bench_engine.py``: the same loop in both, so that their
reference times measure the same thing.
"""

from __future__ import annotations

import torch


def one_mask_score(tok, model, text: str, positions, device: str = "cpu") -> float:
    """Nangia et al.'s ``metric.py`` loop on one sentence of a masked LM: one forward pass per
    masked copy (the token at each of ``positions`` replaced by the mask token), the
    full-vocabulary log-softmax at that position; the sum of log P(token) over ``positions``.

    Call it under :func:`torch.inference_mode`.
    """
    ids = torch.tensor([tok(text)["input_ids"]], device=device)
    total = 0.0
    for p in positions:
        x = ids.clone()
        x[0, p] = tok.mask_token_id
        logits = model(input_ids=x).logits[0, p]
        total += torch.log_softmax(logits.float(), -1)[ids[0, p]].item()
    return total
