"""Seeded, stratified samples of minimal pairs (polybias.data.minimal_pairs.sample_pairs)."""

from __future__ import annotations

import pandas as pd
import pytest
from polybias.data.minimal_pairs import (
    CrowsError,
    sample_caption,
    sample_pairs,
    stratified_sample_caption,
)


def _pairs(n_gender=60, n_race=30, n_age=10):
    types = ["gender"] * n_gender + ["race-color"] * n_race + ["age"] * n_age
    return pd.DataFrame({"pair_id": [f"p{i}" for i in range(len(types))], "bias_type": types})


def test_sample_is_stratified_seeded_and_in_the_frames_order():
    pairs = _pairs()
    sample = sample_pairs(pairs, 10, seed=3)
    assert sample.bias_type.value_counts().to_dict() == {"gender": 6, "race-color": 3, "age": 1}
    assert sample.index.is_monotonic_increasing
    assert sample_pairs(pairs, 10, seed=3).equals(sample)
    assert not sample_pairs(pairs, 10, seed=4).pair_id.tolist() == sample.pair_id.tolist()


def test_largest_remainders_fill_the_sample_exactly():
    pairs = _pairs(5, 5, 5)
    for n in range(1, 15):
        assert len(sample_pairs(pairs, n, seed=0)) == n


def test_sample_draws_only_among_the_given_ids():
    pairs = _pairs()
    ids = [f"p{i}" for i in range(0, 100, 2)]
    sample = sample_pairs(pairs, 12, seed=0, ids=ids)
    assert len(sample) == 12 and set(sample.pair_id) <= set(ids)


def test_bad_sizes_are_refused():
    with pytest.raises(CrowsError, match="integer >= 0, got -1"):
        sample_pairs(_pairs(), -1)
    with pytest.raises(CrowsError, match="bias_type"):
        sample_pairs(pd.DataFrame({"pair_id": ["a"]}), 1)


def test_caption_states_the_sample():
    assert sample_caption(8, 212, 8, 0, aligned=True) == (
        "Pairs: a sample of 8 of the 212 aligned pairs, the same in every language, stratified "
        "by bias type (max_pairs = 8, seed 0).")
    assert sample_caption(212, 212, 0, 0, aligned=True) == "Pairs: all 212 (aligned over the languages)."


def test_one_caption_line_in_the_words_of_pairs_and_of_sentences():
    """The pairs' captions and GEST's sentences' (polybias.studies.gest.sample_caption) are one
    line in two sets of words; these are the lines their tables print."""
    assert sample_caption(30, 231, 30, 0) == (
        "Pairs: a sample of 30 of the 231 pairs, stratified by bias type (max_pairs = 30, seed 0).")
    assert sample_caption(1508, 1508, 2000, 1) == "Pairs: all 1,508."
    assert sample_caption(1508, 1508, 0, 1, aligned=True) == "Pairs: all 1,508 (aligned over the languages)."
    assert stratified_sample_caption("Sentences", 1200, 3565, "max_items", 1200, 3, "stereotype",
                                     note="; n counts them") == (
        "Sentences: a sample of 1,200 of the 3,565, stratified by stereotype (max_items = 1200, "
        "seed 3); n counts them.")
    assert stratified_sample_caption("Sentences", 80, 3565, "max_items", 0, 0, "stereotype") == (
        "Sentences: all 3,565.")
