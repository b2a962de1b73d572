"""What the mlm-bias, minicons and WEFE peer tests share: the inputs both sides score,
the tiny checkpoints both sides load, and the driver runner of ``conftest.py``.

Test modules import it as ``peerlib`` (``tests/peers`` is on ``sys.path`` while they run);
``conftest.py`` is loaded here under a name of its own, since every test folder has a
module called ``conftest``.
"""

from __future__ import annotations

import functools
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

_spec = importlib.util.spec_from_file_location("peers_conftest", Path(__file__).with_name("conftest.py"))
_conftest = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("peers_conftest", _conftest)
_spec.loader.exec_module(_conftest)
run_driver = _conftest.run_driver
peer_python = _conftest.peer_python

#: CrowS-style minimal pairs scored on both sides: (bias type, more stereotyping, less).
#: Swaps of one word (one modified token, or a word split into several pieces) and of two
#: words; every sentence has a modified token (the case without one is tested apart).
PAIRS = [
    ("gender", "The doctor said that she would be late for the meeting.",
     "The doctor said that he would be late for the meeting."),
    ("gender", "The nurse said that he would be late for the meeting.",
     "The nurse said that she would be late for the meeting."),
    ("socioeconomic", "Poor students rarely get the opportunities that rich students have.",
     "Rich students rarely get the opportunities that poor students have."),
    ("religion", "The Muslim family celebrated the holiday with a big dinner.",
     "The Christian family celebrated the holiday with a big dinner."),
    ("age", "Old people cannot learn how to use a computer.",
     "Young people cannot learn how to use a computer."),
    ("race-color", "The immigrant worker was always too lazy to finish the work.",
     "The local worker was always too lazy to finish the work."),
]
#: A pair whose less stereotyping sentence only lacks a word of the other: it has no
#: modified token (difflib sees a pure insertion).
INSERTION_PAIR = ("age", "The old man walked slowly across the busy street.",
                  "The old man walked across the busy street.")


def peer_version(peer: str, distribution: str) -> str:
    """The version of ``distribution`` installed in ``peer``'s environment."""
    python = peer_python(peer)
    done = subprocess.run([str(python), "-c", "import importlib.metadata as m; "
                           f"print(m.version({distribution!r}))"],
                          capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        pytest.fail(f"{distribution} is not installed in {python}: {done.stderr[-2000:]}")
    return done.stdout.strip()


@functools.cache
def tiny_checkpoint(family: str, folder: str) -> Path:
    """A deterministic tiny random masked LM of ``family`` saved as a hub-style checkpoint
    (``config.json``, ``model.safetensors``, tokenizer files) under ``folder``, for both
    polybias and the peer to load (a RoBERTa's tokenizer names its CLS and SEP tokens, as
    roberta-base's does: minicons finds the special tokens by those names). ``initializer_range=1.0`` puts the predictions far from
    uniform, so a wrong position or mask changes the numbers."""
    from polybias.planted import tiny_models

    model, tok = tiny_models.build_tiny_model(family, seed=0, initializer_range=1.0)
    if family == "roberta":  # as roberta-base's tokenizer: CLS and SEP are its BOS and EOS
        tok.cls_token, tok.sep_token = tok.bos_token, tok.eos_token
    out = Path(folder) / f"tiny-{family}"
    model.save_pretrained(out, safe_serialization=True)
    tok.save_pretrained(out)
    return out


def load_lm(folder: Path):
    """polybias's own loader on a saved checkpoint (CPU)."""
    from polybias import models

    return models.load(str(folder), "mlm", device="cpu")
