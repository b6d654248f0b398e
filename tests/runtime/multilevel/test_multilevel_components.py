"""Bisections of disconnected graphs (`initial_kernels.components`, `initial_kernels.split_components`): the
initial partitioning splits one component at the share the whole others leave, where
growth from one start can fill a small component and restart inside a dense one at the
wrong share of it."""

import itertools

import networkx as nx
import numpy as np
import pytest

from runtime.multilevel import Level, csr_from_edges, initial
from runtime.multilevel import initial_kernels as IK


def level_of(g, weight=10):
    """``g``'s CSR: every edge of weight ``weight`` unless it has its own, vertices of 1."""
    e = np.array([(u, v) for u, v in g.edges()], dtype=np.int64)
    w = np.array([d.get("weight", weight) for _, _, d in g.edges(data=True)], np.float64)
    return csr_from_edges(e[:, 0], e[:, 1], w, g.number_of_nodes())


def cut_and_w0(lv, side):
    src = np.repeat(np.arange(lv.n), np.diff(lv.indptr))
    cut = int(lv.ewgt[side[src] != side[lv.indices]].sum()) // 2
    return cut, int(lv.vwgt[side == 0].sum())


def brute_force(lv, max0, max1):
    """The least cut over every bisection with both sides within their bounds."""
    total = int(lv.vwgt.sum())
    best = None
    for bits in itertools.product((0, 1), repeat=lv.n):
        side = np.array(bits, np.int64)
        cut, w0 = cut_and_w0(lv, side)
        if w0 <= max0 and total - w0 <= max1 and (best is None or cut < best):
            best = cut
    return best


def three_components():
    """X: a 6-clique (0-5) and a triangle (6-8) joined by edge 5-6 of weight 1; Y: a
    4-clique (9-12); Z: an island (13). Weights 9, 4 and 1 of 14."""
    g = nx.disjoint_union_all([nx.complete_graph(6), nx.complete_graph(3),
                               nx.complete_graph(4), nx.empty_graph(1)])
    nx.set_edge_attributes(g, 10, "weight")
    g.add_edge(5, 6, weight=1)
    return level_of(g)


def split(lv, side, target0, max0, max1, order=None, tries=4, limit=1, margin=0.5):
    order = np.arange(lv.n, dtype=np.int64) if order is None else order
    return IK.split_components(lv.indptr, lv.indices, lv.ewgt, lv.vwgt, side, order,
                              np.int64(target0), np.int64(max0), np.int64(max1),
                              initial.FM_PASSES, tries, limit, margin)


@pytest.mark.parametrize("seed", range(4))
def test_components_label_each_connected_set_by_its_lowest_vertex(seed):
    g = nx.gnm_random_graph(60, 45, seed=seed)
    lv = level_of(g)
    lab, nc = IK.components(lv.indptr, lv.indices)
    want = sorted((sorted(c) for c in nx.connected_components(g)), key=min)
    assert nc == len(want)
    for i, comp in enumerate(want):  # numbered in the order of their lowest vertex
        assert np.flatnonzero(lab == i).tolist() == comp


def bad_side():
    """Side 0 of 7: Y, Z and two vertices of the 6-clique, cut 2 x 4 x 10 = 80 (the growth
    that filled Y and Z and restarted inside the clique)."""
    side = np.ones(14, np.int64)
    side[[9, 10, 11, 12, 13, 0, 1]] = 0
    return side


def test_a_failed_growth_is_replaced_by_a_component_split():
    lv = three_components()
    side = bad_side()
    assert cut_and_w0(lv, side) == (80, 7)
    # bounds 8 / 8: no set of whole components fits ([6, 8] from 9, 4, 1), so X is split:
    # Y and Z on side 0 lack 2, grown inside X from its first vertices in ``order`` (the
    # triangle's here), then FM over the whole graph
    order = np.arange(13, -1, -1, dtype=np.int64)
    assert split(lv, side, 7, 8, 8, order=order)
    cut, w0 = cut_and_w0(lv, side)
    assert cut == brute_force(lv, 8, 8) == 1  # only edge 5-6: the triangle joins Y and Z
    assert (cut, w0) == (1, 8)
    assert side.tolist() == [1] * 6 + [0] * 8


def test_a_split_must_halve_the_cut():
    lv = three_components()
    # grown from the 6-clique's vertices 0-3 (each takes two of them: cut 80 again), FM
    # finds nothing better within 15 moves: not below 80, so the side stays at any margin
    for margin in (0.5, 1.0):
        side = bad_side()
        assert not split(lv, side, 7, 8, 8, margin=margin)
        assert side.tolist() == bad_side().tolist()
    # Y, Z and two of the triangle: cut 21 (two triangle edges and 5-6); the split's 1 is
    # below 0.05 x 21 = 1.05 but not below 0.04 x 21 = 0.84
    two = np.ones(lv.n, np.int64)
    two[[9, 10, 11, 12, 13, 6, 7]] = 0
    assert cut_and_w0(lv, two) == (21, 7)
    order = np.arange(13, -1, -1, dtype=np.int64)
    side = two.copy()
    assert not split(lv, side, 7, 8, 8, order=order, margin=0.04)
    assert side.tolist() == two.tolist()
    assert split(lv, side, 7, 8, 8, order=order, margin=0.05)
    assert cut_and_w0(lv, side) == (1, 8)


def test_components_that_fit_the_bounds_alone_are_cut_nowhere():
    # cliques of 5, 4, 3 and 2 (14), sides of 7 exactly: heaviest first while they fit
    # under 7 puts 5 and 2 on side 0
    g = nx.disjoint_union_all([nx.complete_graph(s) for s in (5, 4, 3, 2)])
    lv = level_of(g)
    side = np.zeros(lv.n, np.int64)
    side[7:] = 1  # the 5-clique and two of the 4-clique: cut 2 x 2 x 10 = 40
    assert cut_and_w0(lv, side) == (40, 7)
    assert split(lv, side, 7, 7, 7)
    assert side.tolist() == [0] * 5 + [1] * 7 + [0] * 2
    assert cut_and_w0(lv, side) == (0, 7)


def test_a_connected_graph_or_the_best_side_is_left_alone():
    lv = level_of(nx.path_graph(10))
    side = np.array([0, 1] * 5, np.int64)
    assert not split(lv, side, 5, 5, 5)
    assert side.tolist() == [0, 1] * 5
    lv = three_components()
    best = np.array([1] * 6 + [0] * 8, np.int64)
    side = best.copy()
    order = np.arange(13, -1, -1, dtype=np.int64)
    assert not split(lv, side, 7, 8, 8, order=order, margin=1.0)
    assert side.tolist() == best.tolist()


def test_the_bisections_split_components_on_their_coarsest_graph(monkeypatch):
    seen = []
    real = IK.split_components

    def spy(indptr, indices, ewgt, vwgt, side, order, target0, max0, max1, passes, tries,
            limit, margin):
        seen.append((len(vwgt), tries, limit, margin))
        return real(indptr, indices, ewgt, vwgt, side, order, target0, max0, max1, passes,
                    tries, limit, margin)

    monkeypatch.setattr(IK, "split_components", spy)
    lv = three_components()
    side = initial._bisect(Level(lv.indptr, lv.indices, lv.ewgt, lv.vwgt), 7, 8, 8,
                           np.random.default_rng(0))
    assert seen == [(14, initial.SPLIT_TRIES, initial.COMPONENT_SPLITS, initial.SPLIT_MARGIN)]
    assert cut_and_w0(lv, side)[0] == 1


@pytest.mark.parametrize("seed", range(12))
def test_a_split_never_makes_a_bisection_worse(seed):
    rng = np.random.default_rng(seed)
    g = nx.disjoint_union_all([nx.gnm_random_graph(int(s), int(2 * s), seed=seed + i)
                               for i, s in enumerate(rng.integers(2, 30, size=5))])
    for u, v in g.edges():
        g[u][v]["weight"] = int(rng.integers(1, 20))
    lv = level_of(g)
    lv = Level(lv.indptr, lv.indices, lv.ewgt, rng.integers(1, 5, size=lv.n))
    total = int(lv.vwgt.sum())
    target0 = int(total * rng.uniform(0.3, 0.7))
    max0, max1 = int(target0 * 1.03), int((total - target0) * 1.03)

    def key(side):
        cut, w0 = cut_and_w0(lv, side)
        return max(w0 - max0, 0) + max(total - w0 - max1, 0), cut

    side = rng.integers(0, 2, size=lv.n).astype(np.int64)
    before = key(side)
    replaced = split(lv, side, target0, max0, max1, order=rng.permutation(lv.n),
                     margin=1.0)
    after = key(side)
    assert after < before if replaced else after == before
