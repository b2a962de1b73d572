"""The model zoo through the notebooks (``tests/zoo_notebooks.py``; the full run is
``make zoo``): the committed table is the one the zoo code declares, and a few cells —
every notebook once, both weight formats, masked and causal families, a refusal — run
here through ``polybias run`` with ``device``/``dtype`` left at ``auto`` (the CPU), two at
a time: about 30 s on two cores."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import zoo_notebooks as zn

ROOT = Path(__file__).resolve().parents[1]

#: (family, weights format, notebook) run by this test.
FEW = [("gpt2", "bin", "05_crows_pairs"),
       ("bert-uncased", "safetensors", "06_categorical_bias"),
       ("albert", "bin", "04_logprob_context"),
       ("electra-discriminator", "safetensors", "03_ceat"),
       ("llama", "bin", "08_hidden_states"),
       ("qwen2", "safetensors", "02_seat")]


def _table_of(text: str) -> str:
    return text[text.index(zn.BEGIN) + len(zn.BEGIN):text.index(zn.END)].strip()


def test_every_cell_is_declared_and_the_committed_table_is_the_declared_one():
    assert len(zn.EXPECTED) == len(zn.FAMILIES) * 2 * len(zn.NOTEBOOKS) == 132
    assert set(zn.EXPECTED.values()) <= {zn.RUNS, *zn.REFUSALS}
    assert zn.EXPECTED[("electra-discriminator", "bin", "05_crows_pairs")] == \
        "no MLM head (ELECTRA discriminator)"
    assert zn.EXPECTED[("electra-discriminator", "bin", "02_seat")] == zn.RUNS
    assert zn.EXPECTED[("mpt", "safetensors", "03_ceat")] == "decoder: the measure needs an encoder"
    declared = zn.table(zn.EXPECTED)
    docs = (ROOT / "docs" / "zoo.md").read_text(encoding="utf-8")
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert _table_of(docs) == declared, "docs/zoo.md differs from the declared outcomes: make zoo"
    assert _table_of(readme) == declared, "README's zoo table differs from docs/zoo.md"
    assert zn.readme_with_table(readme, docs) == readme


def test_a_refusal_is_classified_only_by_its_documented_text():
    assert zn._classify("ScoringError: model 'x': ELECTRA discriminator ...") == \
        "no MLM head (ELECTRA discriminator)"
    assert zn._classify("EmbeddingError: model 'x' (LlamaModel) is a decoder, not an encoder") == \
        "decoder: the measure needs an encoder"
    assert zn._classify("KeyError: 'x'") == "failed: KeyError: 'x'"


@pytest.fixture(scope="module")
def few(tmp_path_factory):
    families = {f.name: f for f in zn.FAMILIES}
    cells = [(families[f], fmt, nb) for f, fmt, nb in FEW]
    work = tmp_path_factory.mktemp("zoo-notebooks")
    return zn.run_cells(cells, work, jobs=2), work


@pytest.mark.integration
def test_a_few_cells_run_or_refuse_as_declared(few):
    cells, work = few
    for cell in cells:
        want = zn.EXPECTED[(cell.family, cell.fmt, cell.notebook)]
        assert cell.outcome == want, (cell, want)
        out = work / "runs" / f"{cell.family}-{cell.fmt}" / cell.notebook
        if want == zn.RUNS:
            assert cell.records > 0 and not cell.error
            marker = json.loads((out / "run.json").read_text())
            assert "device" not in marker["parameters"] and "dtype" not in marker["parameters"]
        else:
            assert "\n" not in cell.error and zn.REFUSALS[want] in cell.error
            assert (out / "failed.ipynb").is_file()
