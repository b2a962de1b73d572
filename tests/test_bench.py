"""The benchmark runner: its table, scaling exponents and the bench_*.py protocol."""

import importlib.util
import os
import sys
from pathlib import Path

import pytest

RUN = Path(__file__).resolve().parents[1] / "benchmarks" / "run.py"


@pytest.fixture(scope="module")
def bench():
    spec = importlib.util.spec_from_file_location("bench_run", RUN)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_summary_ratios_and_scaling_exponents(bench):
    rows = [{"benchmark": "thing", "reference": "loop", "reference_s": 3.0, "polybias_s": 1.5},
            {"benchmark": "grow", "size": 1000, "unit": "items", "reference": "loop",
             "reference_s": 0.1, "polybias_s": 0.01},
            {"benchmark": "grow", "size": 100000, "unit": "items", "reference": "loop",
             "reference_s": 1000.0, "polybias_s": 1.0},
            {"benchmark": "printed only", "reference": "", "reference_s": None, "polybias_s": None,
             "ratio": 4.5}]
    table = bench.summary(rows).splitlines()
    assert any(line.startswith("thing") and line.rstrip().endswith("2.0x") for line in table)
    assert any(line.startswith("grow, 100,000 items") and line.rstrip().endswith("1000.0x") for line in table)
    assert any(line.startswith("printed only") and line.rstrip().endswith("4.5x") for line in table)
    # polybias: 0.01 s -> 1 s over 100x more items: k = 1; the reference grows as size^2
    [grow] = [line for line in table if line.startswith("grow ") and "->" in line]
    assert grow.split()[-2:] == ["1.00", "2.00"]


def test_modules_run_in_a_child_and_return_rows(bench, tmp_path, monkeypatch, capsys):
    returns = tmp_path / "bench_returns.py"
    returns.write_text("import sys\n"
                       "def main(quick=False):\n"
                       "    print('hello')\n"
                       "    return [{'benchmark': 'b', 'reference': 'r', 'reference_s': 2.0,"
                       " 'polybias_s': 0.5, 'quick': quick}]\n")
    prints = tmp_path / "bench_prints.py"
    prints.write_text("import sys\n"
                      "def main():\n"
                      "    print('speed ratio (reference / engine): 3.5x')\n"
                      "if __name__ == '__main__':\n    main()\n")
    fails = tmp_path / "bench_fails.py"
    fails.write_text("def main():\n    raise RuntimeError('broken benchmark')\n")
    monkeypatch.setattr(sys, "argv", ["run.py"])
    [row] = bench.run_module(returns, quick=True, reference_python=None, timeout=60)
    assert row == {"benchmark": "b", "reference": "r", "reference_s": 2.0, "polybias_s": 0.5,
                   "quick": True}
    assert "hello" in capsys.readouterr().out
    [row] = bench.run_module(prints, quick=False, reference_python=None, timeout=60)
    assert row["ratio"] == 3.5 and row["benchmark"].startswith("bench_prints: speed ratio")
    [row] = bench.run_module(fails, quick=False, reference_python=None, timeout=60)
    assert row["benchmark"] == "bench_fails: failed"
    assert "broken benchmark" in capsys.readouterr().out


# ------------------------------------------------------------------ --device

@pytest.fixture(scope="module")
def devices():
    spec = importlib.util.spec_from_file_location("bench_devices", RUN.parent / "devices.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_device_selection(devices, monkeypatch):
    import torch

    assert devices.resolve_device("cpu") == "cpu" and devices.resolve_device("") == "cpu"
    with pytest.raises(SystemExit, match="not a device name"):
        devices.resolve_device("gpu please")
    with pytest.raises(SystemExit, match="cpu or cuda only"):
        devices.resolve_device("meta")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(SystemExit, match=r"^--device cuda: CUDA is not available \("):
        devices.resolve_device("cuda")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    assert devices.resolve_device("cuda") == "cuda:0" and devices.resolve_device("cuda:1") == "cuda:1"
    with pytest.raises(SystemExit, match="there are 2 CUDA device"):
        devices.resolve_device("cuda:2")


@pytest.mark.skipif(__import__("torch").cuda.is_available(), reason="a CUDA device is present: hide it to run this "
                    "test (CUDA_VISIBLE_DEVICES= pytest ...)")
def test_cuda_without_cuda_is_one_line(tmp_path):
    import subprocess

    out = subprocess.run([sys.executable, str(RUN), "--device", "cuda", "--only", "none"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode != 0 and out.stdout == ""
    assert out.stderr.strip().count("\n") == 0
    assert out.stderr.startswith("--device cuda: CUDA is not available")


@pytest.fixture(scope="module")
def real_models_bench():
    sys.path.insert(0, str(RUN.parent))
    spec = importlib.util.spec_from_file_location("bench_real_models", RUN.parent / "bench_real_models.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("family", ["gpt2", "llama"])
def test_the_float32_floor_counts_the_tokens_and_output_rows_the_engine_sends(real_models_bench, family):
    """The floor's FLOP count, on the batches the engine really ran: a pair's shared prefix
    counted once (tree rows), padding not at all, one output-layer row per scored token."""
    from polybias.engines import scoring
    from polybias.planted.tiny_models import build_tiny_model

    bench = real_models_bench
    lm = scoring.wrap_language_model(*build_tiny_model(family), name=f"tiny-{family}")
    more = ["The doctor said that he would come.", "He cooked dinner for everyone tonight."]
    less = ["The doctor said that she would come.", "She cooked dinner."]
    (a, b), batches = bench.record_batches(
        lm, lambda: scoring.causal_pair_token_logprobs(lm, more, less, check=False))
    ids = [[lm.tokenizer.bos_token_id or 0] + lm.tokenizer(t, add_special_tokens=False)["input_ids"]
           for t in more + less]
    shared = [len(os.path.commonprefix([x, y])) for x, y in zip(ids[:2], ids[2:], strict=True)]
    want_tokens = sum(len(x) for x in ids) - sum(shared)
    got_tokens = sum(bench.unpadded_tokens(i, m) for i, m, _ in batches)
    assert got_tokens == want_tokens
    assert sum(i.numel() for i, _, _ in batches) >= got_tokens  # padding is left out, not added
    body, head, shapes = bench.matmul_parameters(lm.model)
    assert head == lm.model.get_output_embeddings().weight.numel()
    matrices = [p.numel() for n, p in lm.model.named_parameters() if p.dim() == 2
                and not any(e in n for e in ("embed", "wte", "wpe", "lm_head"))]
    assert body == sum(matrices) > 0 and len(shapes) == len(matrices)
    flops_body, flops_head = bench.batch_flops(batches, body, head)
    # one output-layer row per predicted token (all but BOS), a shared prefix's predicted once
    predicted = sum(len(x) - 1 for x in ids) - sum(n - 1 for n in shared)
    assert sum(k for _, _, k in batches) == predicted
    assert flops_body == 2.0 * want_tokens * body
    assert flops_head == 2.0 * predicted * head
    assert len(a) == len(b) == 2

