"""Array-built batches and the device pipeline (polybias.engines.batches), and the token
budget the wrappers pick."""

import numpy as np
import pytest
import torch
from polybias.engines import batches, common, embeddings, scoring
from polybias.engines.batches import fill_padded, flatten, pipelined, ranges, start_fetch, to_device
from polybias.planted.tiny_models import build_tiny_encoder, build_tiny_model


def test_ranges_match_a_loop():
    rng = np.random.default_rng(0)
    starts, counts = rng.integers(0, 50, 40), rng.integers(0, 5, 40)
    want = [s + k for s, c in zip(starts, counts, strict=True) for k in range(c)]
    assert ranges(starts, counts).tolist() == want


def test_fill_padded_matches_a_loop():
    rng = np.random.default_rng(1)
    arrays = [rng.integers(1, 100, rng.integers(1, 9)) for _ in range(30)]
    flat, starts = flatten(arrays)
    rows = rng.permutation(30)[:12]
    got = fill_padded(flat, starts[rows], np.diff(starts)[rows], -1)
    want = np.full((12, max(len(arrays[r]) for r in rows)), -1)
    for k, r in enumerate(rows):
        want[k, :len(arrays[r])] = arrays[r]
    assert got.dtype == flat.dtype and np.array_equal(got, want)


def test_flatten_keeps_the_dtype_of_empty_arrays():
    flat, starts = flatten([[], [], [3]])
    assert flat.dtype == np.int64 and flat.tolist() == [3] and starts.tolist() == [0, 0, 0, 1]
    flat, _ = flatten([np.ones(2, np.float32)], dtype=np.float32)
    assert flat.dtype == np.float32


def test_to_device_on_the_cpu_shares_memory_and_shapes():
    a, b = np.arange(6).reshape(2, 3), np.array([9])
    ta, tb = to_device([a, b], "cpu")
    assert ta.shape == (2, 3) and tb.tolist() == [9] and np.shares_memory(ta.numpy(), a)
    assert start_fetch(ta * 2).result().tolist() == [[0, 2, 4], [6, 8, 10]]


def test_pipeline_finishes_every_item_in_order_one_step_behind():
    events = []

    def launch(i):
        events.append(("launch", i))
        return i

    pipelined(iter(range(4)), launch, lambda i, h: events.append(("finish", i)))
    assert events == [("launch", 0), ("launch", 1), ("finish", 0), ("launch", 2), ("finish", 1),
                      ("launch", 3), ("finish", 2), ("finish", 3)]


@pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device: run on a machine with an NVIDIA "
                    "GPU, with the CUDA build of torch")
def test_to_device_and_fetch_round_trip_on_cuda():
    a, b = to_device([np.arange(6).reshape(2, 3), np.array([7])], "cuda")
    assert a.device.type == "cuda" and a.shape == (2, 3)
    assert start_fetch(a + b).result().tolist() == [[7, 8, 9], [10, 11, 12]]


# ------------------------------------------------------------------ budgets of wrapped models

def test_wrappers_pick_the_automatic_budget(monkeypatch):
    model, tok = build_tiny_model("bert")
    assert scoring.wrap_language_model(model, tok, name="m").batch_tokens == common.DEFAULT_BATCH_TOKENS
    assert scoring.wrap_language_model(model, tok, name="m", batch_tokens=512).batch_tokens == 512
    seen = []
    monkeypatch.setattr(scoring, "auto_batch_tokens", lambda m, d, h: seen.append((d, h)) or 4096)
    assert scoring.wrap_language_model(model, tok, name="m").batch_tokens == 4096
    monkeypatch.setattr(common, "auto_batch_tokens", lambda m, d, h: seen.append((d, h)) or 2048)
    enc = embeddings.wrap_encoder(*build_tiny_encoder("bert"), name="e")
    assert enc.batch_tokens == 2048 and seen == [("cpu", "mlm"), ("cpu", "encoder")]
    with pytest.raises(scoring.ScoringError, match="batch_tokens must be a positive integer"):
        scoring.wrap_language_model(model, tok, name="m", batch_tokens=0)
    with pytest.raises(embeddings.EmbeddingError, match="batch_tokens must be a positive integer"):
        embeddings.wrap_encoder(*build_tiny_encoder("bert"), name="e", batch_tokens=-5)


def test_run_settings_state_device_dtype_and_budget():
    lm = scoring.wrap_language_model(*build_tiny_model("gpt2"), name="g", batch_tokens=640)
    assert lm.run_settings() == {"device": "cpu", "dtype": "float32", "batch_tokens": 640}


def test_automatic_budget_grows_with_free_cuda_memory_and_is_bounded():
    model, _ = build_tiny_model("bert", hidden_size=64, intermediate_size=128)
    small = common.auto_batch_tokens(model, "cuda", "mlm", free_bytes=2**26)
    large = common.auto_batch_tokens(model, "cuda", "mlm", free_bytes=2**30)
    assert common.AUTO_BUDGET_MIN <= small < large <= common.AUTO_BUDGET_MAX
    assert small % 1024 == 0 and large % 1024 == 0
    assert common.auto_batch_tokens(model, "cuda", "mlm", free_bytes=2**50) == common.AUTO_BUDGET_MAX
    causal, _ = build_tiny_model("gpt2", hidden_size=64)
    assert common.auto_batch_tokens(causal, "cuda", "causal", free_bytes=2**30) < \
        common.auto_batch_tokens(causal, "cuda", "encoder", free_bytes=2**30)
    assert batches.is_cuda("cuda:0") and not batches.is_cuda("cpu")
