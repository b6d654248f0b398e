"""The greedy family against the spec's rules: hand-made cases and a literal reference."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers import graph, greedy_reference, ramp, weighted_graphs
from vcut.partition import partition_graph


def assign(edges, p, algo, weights=None, lam=1.0, capacities=None):
    return partition_graph(graph(edges, weights), p, algo, options={"lam": lam},
                           capacities=capacities).assignment.tolist()


# -- one test per case of Algorithm 1 -------------------------------------------------
def test_case4_both_new_goes_to_the_least_loaded_cluster():
    # (0,1) -> cluster 0 (all empty: lowest id); (2,3) -> cluster 1, the least loaded
    assert assign([(0, 1), (2, 3), (4, 5)], 3, "wb-libra") == [0, 1, 2]


def test_case3_one_endpoint_known_and_its_fallback():
    # (0,1) -> 0; (0,2): only A(0) = {0} is known -> 0
    assert assign([(0, 1), (0, 2), (3, 4)], 2, "w-libra") == [0, 0, 1]
    # weights 3,1,1 and p = 2: bound 2.5; cluster 0 holds 3 >= 2.5 -> fall back to all
    assert assign([(0, 1), (0, 2), (3, 4)], 2, "wb-libra", weights=[3, 1, 1]) == [0, 1, 1]


def test_case1_common_cluster_and_both_fallbacks():
    edges = [(0, 1), (1, 2), (0, 2), (3, 4)]
    # (1,2) joins 0 by case 3, then (0,2) has A(0) & A(2) = {0} -> 0; (3,4) -> 1
    assert assign(edges, 3, "w-libra", weights=[1, 1, 1, 3]) == [0, 0, 0, 1]
    # weights 1,1,1,3 on p = 3: bound 2; after (1,2) cluster 0 holds 2 -> the common
    # cluster and the union are full -> the least loaded of all (1)
    assert assign(edges, 3, "wb-libra", weights=[1, 1, 1, 3]) == [0, 0, 1, 2]


def test_case1_falls_back_to_the_union_first():
    # A(0) = {0, 1} and A(3) = {0} when (0,3) arrives; cluster 0 is full, 1 is not
    edges = [(3, 4), (0, 5), (0, 3), (6, 7)]
    got = partition_graph(graph(edges, [2, 1, 1, 2]), 3, "wb-pg").assignment.tolist()
    ref = greedy_reference(edges, [2, 1, 1, 2], 3, rule="pg", bounded=True, lam=1.0)
    assert got == ref


def test_case2_pg_and_libra_keep_different_endpoints_whole():
    # degrees: d(1) = 2, d(2) = 3; when (1,2) arrives A(1) = {0}, A(2) = {1} (disjoint)
    edges = [(0, 1), (2, 3), (1, 2), (2, 4)]
    # Libra cuts the higher-degree vertex: keeps vertex 1 whole -> cluster 0
    assert assign(edges, 2, "w-libra")[2] == 0
    # PowerGraph keeps the vertex with more unassigned edges whole: 2 (2 left) -> cluster 1
    assert assign(edges, 2, "w-pg")[2] == 1
    # WB-Libra: cluster 0 already at the bound (weights 3,1,1,1: bound 3) -> A(t) = {1}
    assert assign(edges, 2, "wb-libra", weights=[3, 1, 1, 1])[2] == 1


def test_unweighted_variants_ignore_weights():
    edges = [(0, 1), (2, 3), (1, 2), (2, 4)]
    heavy = [100, 1, 1, 1]
    assert assign(edges, 2, "libra", weights=heavy) == assign(edges, 2, "libra")
    assert assign(edges, 2, "pg", weights=heavy) == assign(edges, 2, "pg")


def test_star_vertex_cut_beats_any_edge_cut():
    """Fig. 2: a star cut by its centre costs p - 1 copies; an edge cut costs more."""
    n_leaves, p = 12, 3
    g = graph([(0, k) for k in range(1, n_leaves + 1)])
    part = partition_graph(g, p, "wb-libra")
    m = part.metrics
    assert m.counts == [4, 4, 4]
    assert m.vertex_copies == p - 1
    assert m.replication_factor == pytest.approx((n_leaves + p) / (n_leaves + 1))
    # the best balanced 3-way vertex partition of 13 vertices keeps at most 4 leaves
    # with the centre, so it cuts at least 8 edges
    best_edge_cut = min(n_leaves - a for a in range(0, 5))
    assert m.vertex_copies < best_edge_cut == 8


# -- the kernel against a literal transcription of the spec's rules (helpers.rules) ----
@settings(max_examples=200, deadline=None)
@given(weighted_graphs(), st.integers(1, 70), st.sampled_from(["pg", "libra", "w-pg", "wb-pg", "w-libra", "wb-libra"]),
       st.sampled_from([1.0, 1.05, 1.5]), st.booleans())
def test_kernel_equals_the_literal_rules(gw, p, algo, lam, hetero):
    edges, weights = gw
    p = min(p, len(edges))
    cap = ramp(p) if hetero else None
    got = partition_graph(graph(edges, weights), p, algo, options={"lam": lam}, capacities=cap).assignment.tolist()
    weighted = algo.startswith("w")
    ref = greedy_reference(edges, weights if weighted else [1] * len(edges), p,
                           rule="libra" if "libra" in algo else "pg", bounded=algo.startswith("wb"),
                           lam=lam, cap=cap)
    assert got == ref


# -- batched streaming (the greedy family's parallel form) ----------------------------
@settings(max_examples=150, deadline=None)
@given(weighted_graphs(), st.integers(2, 9), st.sampled_from(["pg", "libra", "wb-pg", "wb-libra"]),
       st.sampled_from([1, 2, 3, 7, 64]), st.booleans())
def test_batched_kernel_equals_the_literal_batches(gw, p, algo, batch, recheck):
    from vcut.cuts import greedy as greedy_cut  # where the batched stream reads RECHECK

    edges, weights = gw
    p = min(p, len(edges))
    weighted = algo.startswith("w")
    ref = greedy_reference(edges, weights if weighted else [1] * len(edges), p,
                           rule="libra" if "libra" in algo else "pg", bounded=algo.startswith("wb"),
                           lam=1.0, batch=batch, recheck=recheck)
    old = greedy_cut.RECHECK
    greedy_cut.RECHECK = recheck
    try:
        got = partition_graph(graph(edges, weights), p, algo, options={"batch": batch})
    finally:
        greedy_cut.RECHECK = old
    assert got.assignment.tolist() == ref
    if batch == 1:  # one edge a batch is the sequential stream, whatever the recheck
        assert ref == partition_graph(graph(edges, weights), p, algo).assignment.tolist()


def test_batched_by_hand():
    # a path 0-1-2-3 and an edge 4-5 in one batch of 4 on p = 2, w-libra (unbounded):
    # frozen at the start every set is empty, so every edge asks for the least loaded
    # and decides again when applied: the sequential result [0, 0, 0, 1]
    edges = [(0, 1), (1, 2), (2, 3), (4, 5)]
    assert partition_graph(graph(edges), 2, "w-libra", options={"batch": 4}).assignment.tolist() == [0, 0, 0, 1]
    # two batches of 2 after a first edge (0,1) -> 0: in batch 2, (0,2) follows A(0) = {0}
    # and (3,4) is new -> the least loaded: cluster 1
    edges = [(0, 1), (5, 6), (0, 2), (3, 4)]
    got = partition_graph(graph(edges), 2, "w-libra", options={"batch": 2})
    assert got.assignment.tolist() == [0, 1, 0, 1] and got.info["batch"] == 2


def test_batched_on_a_real_graph_keeps_the_bound_and_is_deterministic():
    from ir_graph import read_graph
    from tests.helpers import dataset

    g = read_graph(dataset("wiki-Vote.txt.gz"))
    seq = partition_graph(g, 16, "wb-libra")
    one = partition_graph(g, 16, "wb-libra", options={"batch": 1})
    assert np.array_equal(one.assignment, seq.assignment)
    a = partition_graph(g, 16, "wb-libra", options={"batch": 4096})  # decisions in parallel
    b = partition_graph(g, 16, "wb-libra", options={"batch": 4096})
    assert np.array_equal(a.assignment, b.assignment)
    assert 0 <= a.assignment.min() and a.assignment.max() < 16
    # the bound lambda * W / p, as the sequential stream keeps it: an edge goes to a
    # cluster below the bound (one always is), so no load passes it by more than one
    # edge (weight 1, or 2 for a pair listed both ways): imbalance <= 1 + 2p / W
    bound = 1 + 2 * 16 / len(a.assignment)
    assert seq.metrics.edge_weight_imbalance <= bound and a.metrics.edge_weight_imbalance <= bound
    assert 0 < a.info["redecided"] <= g.m


@pytest.mark.parametrize("kwargs, message", [
    (dict(algo="hdrf", options={"batch": 8}), "batched streaming is for the greedy family"),
    (dict(algo="wb-libra", options={"batch": 0}),
     "the batch must be a whole number of edges >= 1, got 0"),
    (dict(algo="wb-libra", options={"batch": 2.5}),
     "the batch must be a whole number of edges >= 1, got 2.5"),
])
def test_batched_bad_arguments(kwargs, message):
    from vcut_base.errors import InputError

    with pytest.raises(InputError, match=message):
        partition_graph(graph([(0, 1), (1, 2), (2, 3)]), 2, **kwargs)


def test_batched_needs_dense_sets():
    from vcut_base.errors import InputError

    edges = [(i, i + 1) for i in range(300)]
    with pytest.raises(InputError, match="dense replica sets, p <= 128; got p = 129"):
        partition_graph(graph(edges), 129, "wb-libra", options={"batch": 8})
