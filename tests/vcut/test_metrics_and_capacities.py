"""Metrics against brute force, the WB bound, capacities (Table III), other partitioners."""

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vcut_base.errors import InputError
from ir_graph import Graph
from tests.helpers import graph, weighted_graphs
from vcut.capacities import capacities_from_units, target_weights
from vcut.metrics import random_rf_bound
from vcut.cuts import ALGORITHMS, option_names
from vcut.partition import partition_graph, simplify


def brute_metrics(edges, weights, assignment, p, cap):
    reps = {}
    for (a, b), c in zip(edges, assignment):
        reps.setdefault(a, set()).add(c)
        reps.setdefault(b, set()).add(c)
    loads = [0.0] * p
    counts = [0] * p
    for w, c in zip(weights, assignment):
        loads[c] += w
        counts[c] += 1
    W, m = sum(weights), len(edges)
    return {
        "rf": sum(len(s) for s in reps.values()) / len(reps),
        "copies": sum(len(s) - 1 for s in reps.values()),
        "wimb": max(loads[c] / (W * cap[c]) for c in range(p)),
        "imb": max(counts[c] / (m * cap[c]) for c in range(p)),
        "reps": {v: sorted(s) for v, s in reps.items()},
        "loads": loads,
    }


@settings(max_examples=150, deadline=None)
@given(weighted_graphs(), st.integers(1, 9), st.sampled_from(ALGORITHMS), st.booleans(),
       st.sampled_from(["given", "random", "bfs", "dfs"]))
def test_every_edge_once_and_metrics_equal_brute_force(gw, p, algo, hetero, order):
    edges, weights = gw
    p = min(p, len(edges))
    # the hypergraph model and GraphX's hashes take equal shares only
    hetero = hetero and algo != "hypergraph" and not algo.startswith("graphx")
    cap = np.arange(1, p + 1, dtype=float) if hetero else np.ones(p)
    cap = cap / cap.sum()
    streams = "order" in option_names(algo)  # the streaming cuts take an edge order
    part = partition_graph(graph(edges, weights), p, algo,
                           options={"order": order} if streams else None, seed=3,
                           capacities=cap if hetero else None)
    a = part.assignment
    assert len(a) == len(edges) and a.min() >= 0 and a.max() < p  # each edge exactly once
    ref = brute_metrics(edges, weights, a.tolist(), p, cap)
    m = part.metrics
    assert m.replication_factor == pytest.approx(ref["rf"])
    assert m.vertex_copies == ref["copies"]
    assert m.edge_weight_imbalance == pytest.approx(ref["wimb"])
    assert m.edge_imbalance == pytest.approx(ref["imb"])
    assert m.loads == pytest.approx(ref["loads"])
    ptr, clusters = part.replicas()
    for v, s in ref["reps"].items():
        assert clusters[ptr[v]:ptr[v + 1]].tolist() == s  # replica sets match the assignment
    master = part.masters()
    for v, s in ref["reps"].items():
        assert master[v] in s


@settings(max_examples=150, deadline=None)
@given(weighted_graphs(), st.integers(2, 9), st.sampled_from(["wb-pg", "wb-libra"]),
       st.sampled_from([1.0, 1.1]), st.booleans())
def test_wb_respects_the_bound_whenever_a_cluster_can_take_the_edge(gw, p, algo, lam, hetero):
    edges, weights = gw
    p = min(p, len(edges))
    cap = np.arange(1, p + 1, dtype=float) if hetero else np.ones(p)
    cap = cap / cap.sum()
    part = partition_graph(graph(edges, weights), p, algo, options={"lam": lam}, capacities=cap)
    bound = lam * sum(weights) * cap * (1 - 1e-12)  # full within a relative 1e-12
    load = np.zeros(p)
    for c, w in zip(part.assignment.tolist(), weights):
        if load[c] >= bound[c]:
            assert np.all(load >= bound)  # it only went to a full cluster when all were full
        load[c] += w


def test_capacities_reproduce_table_iii():
    """Tzovas et al., Table III (memories rescaled to 1.2 n, k = 96 units)."""
    expected = {8: [1.0, 1.98, 3.27, 5.53, 9.47], 16: [1.0, 2.00, 3.48, 6.14, 11.44]}
    for nf, ratios in expected.items():
        got = []
        for s, mem in [(1, 2), (2, 3.2), (4, 5.2), (8, 8.5), (16, 13.8)]:
            speeds = [s] * nf + [1] * (96 - nf)
            mems = np.array([mem] * nf + [2] * (96 - nf), dtype=float)
            mems *= 1.2e6 / mems.sum()
            tw = target_weights(speeds, mems, 1e6)
            got.append(round(tw[0] / tw[-1], 2))
        assert got == ratios
    assert capacities_from_units([1, 1, 2, 4], [0.2, 0.2, 0.5, 0.5], 1.0).tolist() == [0.125, 0.125, 0.25, 0.5]


def test_heterogeneous_loads_follow_capacities():
    rng = np.random.default_rng(1)
    edges = [(int(a), int(b)) for a, b in rng.integers(0, 300, size=(3000, 2)) if a != b]
    g = graph(edges)
    s, d, w, *_ = simplify(g)
    part = partition_graph(g, 4, "wb-libra", capacities=[1, 1, 2, 4])
    share = np.asarray(part.metrics.loads) / w.sum()
    assert np.allclose(share, [0.125, 0.125, 0.25, 0.5], atol=0.002)
    assert part.metrics.edge_weight_imbalance <= 1.002


def test_random_bound_formula():
    # p = 2, alpha large: all degree-1 vertices -> RF = 1; d = 1 and 2 by hand
    assert random_rf_bound(2, 60.0, 1000) == pytest.approx(1.0)
    h = 1 + 2 ** -2.0
    expected = 2 - (2 / h) * (0.5 * 1 + 0.25 * 2 ** -2.0)
    assert random_rf_bound(2, 2.0, 3) == pytest.approx(expected)


def test_dbh_hashes_the_lower_degree_endpoint():
    # a star: every edge's lower-degree endpoint is its leaf
    g = graph([(0, k) for k in range(1, 200)])
    part = partition_graph(g, 8, "dbh", seed=5)
    again = partition_graph(g, 8, "dbh", seed=5)
    assert np.array_equal(part.assignment, again.assignment)  # deterministic with a seed
    assert part.metrics.replication_factor == pytest.approx((199 + len(set(part.assignment.tolist()))) / 200)


def test_hdrf_and_random_are_balanced_and_seeded():
    rng = np.random.default_rng(2)
    edges = [(int(a), int(b)) for a, b in rng.integers(0, 500, size=(5000, 2)) if a != b]
    g = graph(edges)
    h = partition_graph(g, 16, "hdrf")
    assert h.metrics.edge_imbalance <= 1.01
    r1 = partition_graph(g, 16, "random", seed=9)
    r2 = partition_graph(g, 16, "random", seed=9)
    assert np.array_equal(r1.assignment, r2.assignment)
    assert h.metrics.replication_factor < r1.metrics.replication_factor


def test_self_loops_and_repeats_are_merged_and_mapped_back():
    g = Graph(n=4, src=np.array([0, 1, 2, 1, 3]), dst=np.array([1, 0, 2, 2, 1]),
              weight=np.array([1.0, 2.0, 5.0, 1.0, 1.0]))
    part = partition_graph(g, 2, "wb-libra")
    assert part.info["self_loops"] == 1 and part.info["repeated_edges"] == 1
    # one edge per pair, in order of first appearance, in that appearance's direction
    assert part.src.tolist() == [0, 1, 3] and part.dst.tolist() == [1, 2, 1]
    assert part.weight.tolist() == [3.0, 1.0, 1.0]  # the repeat's weight is added
    a = part.assignment.tolist()
    assert a[1] == a[0]  # a repeat gets its representative's cluster
    assert a[2] == part.masters()[2]  # the self-loop goes with its vertex's master copy


@pytest.mark.parametrize("kwargs, message", [
    ({"p": 0}, "the number of clusters must be a positive integer, got 0"),
    ({"p": 9}, "9 clusters but the graph has only 3 edges; use p <= 3"),
    ({"p": 2, "options": {"lam": 0.5}}, "lambda must be at least 1 (1 = tightest balance), got 0.5"),
    ({"p": 2, "algo": "metis"}, "unknown algorithm 'metis'"),
    ({"p": 2, "options": {"order": "sorted"}}, "unknown edge order 'sorted'"),
    ({"p": 2, "capacities": [1, 2, 3]}, "3 capacities given for 2 clusters"),
    ({"p": 2, "capacities": [1, -2]}, "capacity -2.0 of cluster 1 is not a positive number"),
])
def test_bad_arguments(kwargs, message):
    g = graph([(0, 1), (1, 2), (2, 3)])
    p = kwargs.pop("p")
    with pytest.raises(InputError) as exc:
        partition_graph(g, p, **kwargs)
    assert str(exc.value).startswith(message)


def test_bad_graphs():
    from vcut_base.errors import GraphFormatError

    with pytest.raises(InputError, match="the graph has no edges"):
        partition_graph(Graph(n=3, src=np.array([1]), dst=np.array([1]), weight=np.ones(1)), 1)
    with pytest.raises(GraphFormatError, match="is negative"):
        partition_graph(Graph(n=2, src=np.array([0]), dst=np.array([1]), weight=np.array([-1.0])), 1)
    with pytest.raises(GraphFormatError, match="not a finite number"):
        partition_graph(Graph(n=2, src=np.array([0]), dst=np.array([1]), weight=np.array([np.nan])), 1)
    with pytest.raises(InputError) as exc:
        target_weights([1, 1], [0.3, 0.4], 1.0)
    assert str(exc.value) == ("the units' memories hold 0.7 in all but the graph weighs 1: short by 0.3 "
                              "(42.9 %); add units or memory")


def test_huge_and_tiny_capacities():
    """Capacities whose sum overflows (1e308 twice) made every share 0 (nan metrics; the
    greedy family: ZeroDivisionError); a share that underflows is refused."""
    from vcut.capacities import capacities_from_fractions

    assert capacities_from_fractions([1e308, 1e308]).tolist() == [0.5, 0.5]
    assert capacities_from_fractions([1e308, 1e308, 1e308]).tolist() == [1 / 3] * 3
    g = graph([(0, 1), (1, 2), (2, 3), (3, 0)])
    for algo in ("wb-libra", "ne", "hep", "best"):
        part = partition_graph(g, 2, algo, capacities=[1e308, 1e308])
        assert part.capacities.tolist() == [0.5, 0.5], algo
        assert part.metrics.edge_weight_imbalance == 1.0, algo
    with pytest.raises(InputError) as exc:
        capacities_from_fractions([1.0, 1e-320, 1.0])
    assert str(exc.value) == ("capacity 9.99989e-321 of cluster 1 is too small next to the "
                              "largest, 1: its share underflows; give capacities within a "
                              "factor of 1e300 of each other")


def test_huge_and_tiny_unit_speeds():
    """--units speeds whose sum overflows (1e308 twice) gave nan capacities ("capacity nan of
    cluster 0"); they are relative, so they split the weight as equal speeds do. A unit
    whose share underflows next to the others' is refused, named."""
    assert capacities_from_units([1e308, 1e308], [1.0, 1.0], 1.0).tolist() == [0.5, 0.5]
    assert capacities_from_units([3e307, 1e308, 1e308], [1.0, 1.0, 1.0], 1.0).tolist() == \
        capacities_from_units([0.3, 1, 1], [1.0, 1.0, 1.0], 1.0).tolist()
    with pytest.raises(InputError) as exc:
        capacities_from_units([1e308, 1e-300], [1.0, 1.0], 1.0)
    assert str(exc.value) == ("unit 1 (speed 1e-300, memory 1) gets no share of the weight next "
                              "to the others: give speeds and memories within a factor of 1e300 "
                              "of each other")


@pytest.mark.parametrize("cap", [
    np.full(32, 1 / 32),  # equal shares: the lookup's first guess
    np.array([0.5, 0.0, 0.0, 0.25, 0.125, 0.125]),  # uneven, with empty clusters
    np.array([1e-9, 1 - 2e-9, 1e-9]),  # far from equal: walks the whole table
])
def test_dbh_assign_matches_numpy_hash_and_searchsorted(cap):
    from vcut.hashing_kernels import dbh_assign
    from vcut_base.hashing import mix64

    rng = np.random.default_rng(4)
    m, n, seed = 50_000, 3_000, 11
    src = rng.integers(0, n, m).astype(np.int32)
    dst = rng.integers(0, n, m).astype(np.int32)
    deg = (np.bincount(src, minlength=n) + np.bincount(dst, minlength=n)).astype(np.int64)
    du, dv = deg[src], deg[dst]
    lower = np.where((du < dv) | ((du == dv) & (src < dst)), src, dst).astype(np.uint64)
    with np.errstate(over="ignore"):
        h = mix64(lower + np.uint64(seed) * np.uint64(0x9E3779B97F4A7C15))
    r = (h >> np.uint64(11)).astype(np.float64) * (1.0 / 9007199254740992.0)
    cum = np.cumsum(cap)[:-1]
    want = np.searchsorted(cum, r, side="right")
    # the lookup itself at the clusters' boundaries and at the largest hash
    from vcut.hashing_kernels import share_of
    for x in [np.nextafter(c, -1.0) for c in cum] + list(cum) + [0.0, 1 - 2.0 ** -53]:
        assert share_of.py_func(cum, x) == np.searchsorted(cum, x, side="right")
    out = np.full(m, -1, dtype=np.int32)
    half = m // 2  # two ranges, as the threads of `vcut.cuts.hashing.dbh` run them
    dbh_assign(src, dst, deg, cum, seed, out, 0, half)
    assert (out[half:] == -1).all()
    dbh_assign(src, dst, deg, cum, seed, out, half, m)
    assert np.array_equal(out, want)
    assert set(np.flatnonzero(cap == 0)).isdisjoint(out.tolist())


def test_dbh_in_threads_is_the_one_thread_result(three_threads):
    import vcut.cuts.hashing as hashing

    rng = np.random.default_rng(5)
    g = graph([(int(a), int(b)) for a, b in rng.integers(0, 400, size=(4000, 2)) if a != b])
    one = partition_graph(g, 8, "dbh", seed=3)
    calls = three_threads(hashing)
    split = partition_graph(g, 8, "dbh", seed=3)
    assert calls == [3]
    assert np.array_equal(one.assignment, split.assignment)
