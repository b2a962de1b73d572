"""The logprob-context study's examples and per-group means (polybias.studies.logprob_context)."""

from __future__ import annotations

import pandas as pd
from polybias.data import templating
from polybias.studies import logprob_context, template_books


def test_one_example_per_structure_with_the_first_target_and_attribute():
    book = template_books.template_book("planted_bn")
    examples = logprob_context.structure_examples(book)
    sets = list(dict.fromkeys(t.set for t in book.templates.values()))
    assert [s for s, _ in examples] == sets
    for (structure, text), template in zip(examples, [next(t for t in book.templates.values() if t.set == s)
                                                      for s in sets], strict=True):
        target = book.lists[template.slots[template.the("target")].list].entries[0]
        attribute = book.lists[template.slots[template.the("attribute")].list].entries[0]
        assert any(form in text for forms in target.forms.values() for form in forms), structure
        assert any(form in text for forms in attribute.forms.values() for form in forms), structure
        assert "[MASK]" not in text and text in {f.text for f in templating.expand(book, template)}


def test_group_means_keep_the_order_of_appearance():
    frame = pd.DataFrame({"structure": ["S2", "S2", "S1", "S1"], "attribute_group": ["b", "a", "b", "a"],
                          "fill": [1.0, 2.0, 3.0, 4.0], "prior": [0.0, 0.5, 1.0, 1.5],
                          "corrected": [1.0, 1.5, 2.0, 2.5], "attribute": ["x", "y", "x", "y"]})
    means = logprob_context.attribute_group_means(frame)
    assert means[["structure", "attribute_group"]].values.tolist() == [["S2", "b"], ["S2", "a"], ["S1", "b"], ["S1", "a"]]
    assert means.columns.tolist() == ["structure", "attribute_group", "fill", "prior", "corrected"]
