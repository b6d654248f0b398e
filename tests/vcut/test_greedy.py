"""The greedy family against the spec's rules: hand-made cases and a literal reference."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ir_graph import Graph
from vcut.partition import partition_graph


def graph(edges, weights=None, n=None):
    src = np.array([a for a, _ in edges], dtype=np.int32)
    dst = np.array([b for _, b in edges], dtype=np.int32)
    w = np.ones(len(edges)) if weights is None else np.asarray(weights, dtype=np.float64)
    return Graph(n=n or int(max(src.max(), dst.max()) + 1), src=src, dst=dst, weight=w).validate()


def assign(edges, p, algo, weights=None, lam=1.0, capacities=None):
    return partition_graph(graph(edges, weights), p, algo, lam=lam, capacities=capacities).assignment.tolist()


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
    ref = reference(edges, [2, 1, 1, 2], 3, rule="pg", bounded=True, lam=1.0)
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


# -- a literal transcription of the spec's rules, as the reference -----------------
def reference(edges, weights, p, rule, bounded, lam, cap=None):
    cap = [1.0 / p] * p if cap is None else cap
    W = sum(weights)
    n = max(max(e) for e in edges) + 1
    deg = [0] * n
    for a, b in edges:
        deg[a] += 1
        deg[b] += 1
    rem = deg[:]
    A = [set() for _ in range(n)]
    load = [0.0] * p

    def ll(S):
        return min(S, key=lambda c: (load[c] / cap[c], c))

    def full(c):  # at the bound, within the kernel's relative tolerance of 1e-12
        return bounded and load[c] >= lam * W * cap[c] * (1 - 1e-12)

    out = []
    for (u, v), w in zip(edges, weights):
        C = range(p)
        if not A[u] and not A[v]:
            m = ll(C)
        elif A[u] and not A[v]:
            m = ll(A[u])
            if full(m):
                m = ll(C)
        elif A[v] and not A[u]:
            m = ll(A[v])
            if full(m):
                m = ll(C)
        elif A[u] & A[v]:
            m = ll(A[u] & A[v])
            if full(m):
                m = ll(A[u] | A[v])
                if full(m):
                    m = ll(C)
        else:
            if rule == "libra":
                s = u if deg[u] <= deg[v] else v
            else:
                s = u if rem[u] >= rem[v] else v
            t = v if s == u else u
            m = ll(A[s])
            if full(m):
                m = ll(A[t])
                if full(m):
                    m = ll(C)
        out.append(m)
        load[m] += w
        A[u].add(m)
        A[v].add(m)
        rem[u] -= 1
        rem[v] -= 1
    return out


@st.composite
def weighted_graphs(draw):
    n = draw(st.integers(3, 14))
    pairs = draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)),
                          min_size=2, max_size=40))
    seen, edges = set(), []
    for a, b in pairs:
        if a != b and (min(a, b), max(a, b)) not in seen:
            seen.add((min(a, b), max(a, b)))
            edges.append((a, b))
    if not edges:
        edges = [(0, 1)]
    weights = draw(st.lists(st.integers(1, 9), min_size=len(edges), max_size=len(edges)))
    return edges, weights


@settings(max_examples=200, deadline=None)
@given(weighted_graphs(), st.integers(1, 70), st.sampled_from(["pg", "libra", "w-pg", "wb-pg", "w-libra", "wb-libra"]),
       st.sampled_from([1.0, 1.05, 1.5]), st.booleans())
def test_kernel_equals_the_literal_rules(gw, p, algo, lam, hetero):
    edges, weights = gw
    p = min(p, len(edges))
    cap = None
    if hetero:
        raw = np.arange(1, p + 1, dtype=float)
        cap = (raw / raw.sum()).tolist()
    got = partition_graph(graph(edges, weights), p, algo, lam=lam, capacities=cap).assignment.tolist()
    weighted = algo.startswith("w")
    ref = reference(edges, weights if weighted else [1] * len(edges), p,
                    rule="libra" if "libra" in algo else "pg", bounded=algo.startswith("wb"),
                    lam=lam, cap=cap)
    assert got == ref
