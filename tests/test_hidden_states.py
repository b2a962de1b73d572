"""Hidden-state analysis: extraction at the identity's pieces, layer statistics, ANOVA, seeded views."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from polybias import embeddings, hidden_states, templating, tiny_models
from polybias.hidden_states import HiddenStateError

pytestmark = pytest.mark.usefixtures("torch_one_thread")

BOOK = {"lists": {
    "countries": [{"id": "canada", "features": {"region": "americas"}, "word": "Canada"},
                  {"id": "brazil", "features": {"region": "americas"}, "word": "Brazil"},
                  {"id": "usa", "features": {"region": "americas"}, "word": "the United States"},
                  {"id": "kenya", "features": {"region": "africa"}, "word": "Kenya"},
                  {"id": "ghana", "features": {"region": "africa"}, "word": "Ghana"},
                  {"id": "japan", "features": {"region": "asia"}, "word": "Japan"}],
    "adjectives": ["kind", "rude", "lazy"]},
    "templates": [{"name": "from", "text": "A person from {country} is {adjective}.",
                   "slots": {"country": {"list": "countries", "role": "target"},
                             "adjective": {"list": "adjectives", "role": "attribute"}}}]}


@pytest.fixture(scope="module")
def tiny():
    model, tok = tiny_models.build_tiny_encoder("bert")
    return embeddings.wrap_encoder(model, tok, name="tiny-bert")


def test_states_are_the_mean_of_the_identity_pieces_per_layer(tiny):
    book = templating.parse_templates(BOOK)
    states, items = hidden_states.identity_states(tiny, book, "from", "country")
    n_layers = tiny.model.config.num_hidden_layers
    assert states.shape == (6 * 3, n_layers + 1, tiny.model.config.hidden_size)
    assert list(items.columns[:3]) == ["text", "country", "adjective"]
    assert items["feature:region"].tolist()[:3] == ["americas"] * 3
    # independent reference for the multi-word identity at every layer
    k = items.index[(items.country == "usa") & (items.adjective == "rude")][0]
    text = items.text[k]
    start = text.index("the United States")
    enc = tiny.tokenizer(text, return_offsets_mapping=True, return_tensors="pt")
    offsets = enc.pop("offset_mapping")[0].tolist()
    pieces = [i for i, (a, b) in enumerate(offsets) if b > a and a < start + len("the United States") and b > start]
    with torch.no_grad():
        hs = tiny.model(**enc, output_hidden_states=True).hidden_states
    for layer in range(n_layers + 1):
        ref = hs[layer][0, pieces].mean(0).numpy()
        assert states[k, layer] == pytest.approx(ref, abs=1e-5)


def test_layer_statistics_and_anova_on_known_layers():
    rng = np.random.default_rng(0)
    flat = rng.normal(size=(40, 3, 8))
    shifted = flat.copy()
    shifted[:, 0] += 2.0  # layer 0 sums are larger by 16 on average
    f_flat, p_flat = hidden_states.layer_anova(flat)
    f_shift, p_shift = hidden_states.layer_anova(shifted)
    assert p_flat > 0.01 and p_shift < 1e-10 and f_shift > 10 * f_flat
    stats = hidden_states.layer_statistics(shifted)
    assert stats.sum_mean[0] - stats.sum_mean[1] == pytest.approx(16.0 + flat[:, 0].sum(1).mean() - flat[:, 1].sum(1).mean())
    # F by hand for two layers: between-group over within-group mean squares
    x = flat[:, :2].sum(2)
    grand = x.mean()
    ssb = 40 * ((x.mean(0) - grand) ** 2).sum()
    ssw = ((x - x.mean(0)) ** 2).sum()
    f, _ = hidden_states.layer_anova(flat[:, :2])
    assert f == pytest.approx((ssb / 1) / (ssw / 78))
    with pytest.raises(HiddenStateError, match="statistic must be"):
        hidden_states.layer_anova(flat, statistic="max")
    with pytest.raises(HiddenStateError, match="expected"):
        hidden_states.layer_anova(flat[:1])


def test_projections_are_seeded_and_separation_finds_planted_groups():
    rng = np.random.default_rng(1)
    groups = ["a"] * 15 + ["b"] * 15
    x = rng.normal(size=(30, 2, 10))
    planted = x.copy()
    planted[15:] += 3.0
    for method in hidden_states.METHODS:
        one = hidden_states.project(planted, method, seed=7)
        assert one.shape == (30, 2)
        assert np.array_equal(one, hidden_states.project(planted, method, seed=7))
        assert hidden_states.group_separation(one, groups) > 0.8
    assert not np.allclose(hidden_states.project(x, "tsne", seed=1), hidden_states.project(x, "tsne", seed=2))
    assert hidden_states.group_separation(hidden_states.project(x, "pca"), groups) < 0.3
    with pytest.raises(HiddenStateError, match="method must be"):
        hidden_states.project(x, "umap")
    with pytest.raises(HiddenStateError, match="two groups"):
        hidden_states.group_separation(np.zeros((3, 2)), ["a"] * 3)


def test_minilm_runs_offline():
    encoder = embeddings.load_encoder("minilm-l6")
    book = templating.parse_templates(BOOK)
    states, items = hidden_states.identity_states(encoder, book, "from", "country", fixed={"adjective": "kind"})
    assert states.shape == (6, 7, 384)
    stats = hidden_states.layer_statistics(states)
    assert np.isfinite(stats.to_numpy()).all()
    f, p = hidden_states.layer_anova(states, "norm")
    assert f > 0 and 0 <= p <= 1
    with pytest.raises(HiddenStateError, match="no slot 'religion'"):
        hidden_states.identity_states(encoder, book, "from", "religion")


def _planted_states(n_per_group: int = 8, n_groups: int = 3, n_layers: int = 6, dim: int = 16,
                    seed: int = 0) -> tuple[np.ndarray, list[str]]:
    """States whose last layer holds the groups as well-separated clusters (centres drawn
    with sd 10, noise 0.3) and whose other layers are noise only."""
    rng = np.random.default_rng(seed)
    groups = [f"g{k}" for k in range(n_groups) for _ in range(n_per_group)]
    states = rng.normal(0.0, 1.0, (len(groups), n_layers + 1, dim))
    centres = rng.normal(0.0, 10.0, (n_groups, dim))
    for i, g in enumerate(groups):
        states[i, -1] = centres[int(g[1:])] + rng.normal(0.0, 0.3, dim)
    return states, groups


def test_kmeans_recovers_planted_clusters_in_the_last_layer_only():
    states, groups = _planted_states()
    table = hidden_states.kmeans_agreement(states, groups, seed=0)
    assert table.layer.tolist() == list(range(7))
    assert table.ari.iloc[-1] == pytest.approx(1.0)
    assert (table.ari.iloc[:-1].abs() < 0.3).all()
    assert table.n_clusters.unique().tolist() == [3] and table.n.unique().tolist() == [24]
    # shuffled labels: the same clusters no longer agree with the grouping
    shuffled = list(np.random.default_rng(1).permutation(groups))
    assert hidden_states.kmeans_agreement(states, shuffled, layers=[-1]).ari.iloc[0] < 0.3


def test_kmeans_leaves_unknown_groups_out_and_names_bad_input():
    states, groups = _planted_states()
    groups[0] = "unknown"
    assert hidden_states.kmeans_agreement(states, groups, layers=[6]).n.iloc[0] == 23
    with pytest.raises(HiddenStateError, match="24 occurrences but 3 group labels"):
        hidden_states.kmeans_agreement(states, ["a", "b", "c"])
    with pytest.raises(HiddenStateError, match="two known groups"):
        hidden_states.kmeans_agreement(states, ["a"] * 24)


def test_half_sums_test_detects_a_planted_shift_and_not_its_absence():
    rng = np.random.default_rng(2)
    states = rng.normal(0.0, 1.0, (24, 7, 16))
    states[:, 4:] -= 0.5                                   # the last 3 of 6 layers sum lower
    r = hidden_states.half_sums_test(states)
    assert r["h"] == 3 and r["n"] == 24
    assert r["mean_last"] < r["mean_first"] and r["p_t"] < 1e-6 and r["p_wilcoxon"] < 1e-4
    null = rng.normal(0.0, 1.0, (24, 7, 16))
    assert hidden_states.half_sums_test(null)["p_t"] > 0.05
    # hand-computable: first half sums 4, last half sums 0.5, 0.2, 0.1
    s = np.zeros((3, 5, 2))
    s[:, 1:3] = 1.0
    s[:, 3:] = [[[0.5, 0]], [[0.2, 0]], [[0.1, 0]]]
    r = hidden_states.half_sums_test(s)
    diffs = np.array([4 - 1.0, 4 - 0.4, 4 - 0.2])
    assert r["t"] == pytest.approx(diffs.mean() / (diffs.std(ddof=1) / np.sqrt(3)))


def test_kmeans_finds_the_regions_planted_in_a_tiny_encoders_embeddings(tiny):
    """A planted model: the word-piece embeddings of each country carry its region's centre
    (norm 30, far above the other embeddings), so the embedding-layer states of the
    country occurrences cluster by region; shuffling the centres across regions breaks it."""
    book = templating.parse_templates(BOOK)
    countries = book.lists["countries"]
    regions = sorted({countries.entry(c).features["region"] for c in countries.ids})
    hidden = tiny.model.config.hidden_size
    centres = {r: 30.0 * np.eye(hidden)[k] for k, r in enumerate(regions)}

    def plant(assign):
        emb = tiny.model.get_input_embeddings().weight
        with torch.no_grad():
            for c in countries.ids:
                word = countries.entry(c).forms[templating.DEFAULT_FORM][0]
                for piece in tiny.tokenizer(word, add_special_tokens=False)["input_ids"]:
                    emb[piece] = torch.tensor(centres[assign[c]], dtype=emb.dtype)

    saved = tiny.model.get_input_embeddings().weight.detach().clone()
    try:
        truth = {c: countries.entry(c).features["region"] for c in countries.ids}
        plant(truth)
        states, items = hidden_states.identity_states(tiny, book, "from", "country")
        groups = items["feature:region"].tolist()
        table = hidden_states.kmeans_agreement(states, groups, layers=[0], seed=0)
        assert table.ari.iloc[0] == pytest.approx(1.0)
        # the regions planted crosswise (japan with the americas, canada with asia): the
        # clusters follow the plant, not the labels
        crossed = {**truth, "japan": "americas", "canada": "asia"}
        plant(crossed)
        states, _ = hidden_states.identity_states(tiny, book, "from", "country")
        assert hidden_states.kmeans_agreement(states, groups, layers=[0], seed=0).ari.iloc[0] < 0.9
        relabelled = [crossed[c] for c in items["country"]]
        assert hidden_states.kmeans_agreement(states, relabelled, layers=[0], seed=0).ari.iloc[0] == \
            pytest.approx(1.0)
    finally:
        with torch.no_grad():
            tiny.model.get_input_embeddings().weight.copy_(saved)
