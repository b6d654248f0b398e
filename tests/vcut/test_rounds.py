"""The batched stream applied in rounds (`vcut.greedy_rounds`, the GPU's form) on the CPU."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vcut_base.errors import InputError
from runtime.generators import rmat
from tests.helpers import degrees_of, graph, ramp, rounds_of, rules, weighted_graphs
from vcut import greedy_rounds
from vcut.partition import partition_graph

GREEDY = ("pg", "libra", "w-pg", "wb-pg", "w-libra", "wb-libra")


def waterfill(load, cap, total):
    """The module's water-filling, literally: clusters by (ratio, id), the level that
    ``total`` quanta reach, each cluster's whole quanta below it (a share within 1e-12,
    relative, below a whole number counts as reaching it), then one quantum each from the
    least loaded until the total is met; returns (clusters in order, cumulative quanta)."""
    def whole(x):
        q = math.floor(x)
        return q + 1 if x * (1 + 1e-12) >= q + 1 else q

    order = sorted(range(len(load)), key=lambda c: (load[c] / cap[c], c))
    sum_load, sum_cap, top = 0, 0.0, len(order) - 1
    for j, c in enumerate(order):
        sum_load += load[c]
        sum_cap += cap[c]
        level = (total + sum_load) / sum_cap
        if j == len(order) - 1 or level <= load[order[j + 1]] / cap[order[j + 1]]:
            top = j
            break
    quota = [max(0, whole(level * cap[c]) - load[c]) if j <= top else 0
             for j, c in enumerate(order)]
    for j in range(total - sum(quota)):  # the rounding's remainder, least loaded first
        quota[j if j <= top else 0] += 1
    return order, np.cumsum(quota).tolist()


def reference_rounds(edges, weights, p, rule, bounded, lam, batch, rounds, cap=None):
    """The rounds of `vcut.greedy_rounds` transcribed with Python sets (integer weights)."""
    cap = [1.0 / p] * p if cap is None else cap
    n, deg = degrees_of(edges)
    rem = deg[:]
    A = [set() for _ in range(n)]
    load = [0] * p
    bound = [lam * sum(weights) * (1 - 1e-12) * c if bounded else math.inf for c in cap]
    decide, _, _ = rules(p, cap, deg, rule, bounded, lam, sum(weights))
    out = [None] * len(edges)
    for lo in range(0, len(edges), batch):
        pending = list(range(lo, min(len(edges), lo + batch)))
        for r in range(rounds):
            last = r == rounds - 1
            choice, writes = {}, {}
            for e in pending:
                u, v = edges[e]
                c = decide(u, v, A, load, rem)
                choice[e] = c
                writes[e] = {u, v} if c is None else {x for x in (u, v) if c not in A[x]}
            first = {}
            for e in pending:
                for x in writes[e]:
                    first.setdefault(x, e)
            ready = [e for e in pending if last or not writes[e] or all(
                first.get(x, e) >= e for x in edges[e])]
            for c in range(p):  # capacity, in stream order
                mine = [e for e in ready if choice[e] == c]
                if load[c] + sum(weights[e] for e in mine) < bound[c]:
                    load[c] += sum(weights[e] for e in mine)
                    continue
                for e in mine:
                    if load[c] < bound[c]:
                        load[c] += weights[e]
                    else:
                        choice[e] = None
            open_ = [e for e in ready if choice[e] is None]
            if open_:
                order, cum = waterfill(load, cap, sum(weights[e] for e in open_))
                at = 0
                for e in open_:
                    c = order[0] if at == 0 else next(
                        (order[j] for j in range(p) if cum[j] > at), order[-1])
                    choice[e] = c
                    at += weights[e]
                    load[c] += weights[e]
            for e in ready:
                u, v = edges[e]
                out[e] = choice[e]
                A[u].add(choice[e])
                A[v].add(choice[e])
                rem[u] -= 1
                rem[v] -= 1
            pending = [e for e in pending if e not in set(ready)]
            if not pending:
                break
    return out


@settings(max_examples=150, deadline=None)
@given(weighted_graphs(), st.integers(2, 9), st.sampled_from(GREEDY),
       st.sampled_from([1, 2, 3, 7, 64]), st.sampled_from([1, 2, 3, 64]), st.booleans())
def test_rounds_equal_the_literal_rounds(gw, p, algo, batch, rounds, hetero):
    edges, weights = gw
    p = min(p, len(edges))
    cap = ramp(p) if hetero else None
    weighted = algo.startswith("w")
    ref = reference_rounds(edges, weights if weighted else [1] * len(edges), p,
                           "libra" if "libra" in algo else "pg", algo.startswith("wb"), 1.0,
                           batch, rounds, cap)
    with rounds_of(rounds):
        got = partition_graph(graph(edges, weights), p, algo,
                              options={"batch": batch, "apply": "rounds"}, capacities=cap)
    assert got.assignment.tolist() == ref
    assert got.info["apply"] == "rounds" and got.info["batch"] == batch


def test_waterfill_gives_whole_shares_whatever_the_fractions_last_bits():
    # A star 0-1 .. 0-6 of weights 4, 3, 1, 1, 1, 1, w-pg (unbounded), p = 6 with capacities
    # 1 : 2 : ... : 6 (k / 21), batches of 2 edges, one round (every edge ready at once).
    # Batch 1: both edges find empty sets and ask for the least loaded of all; 7 quanta are
    # water-filled over empty clusters: level 7 / 1 = 7, whole shares floor(7 k / 21) (exact) =
    # 0, 0, 1, 1, 1, 2 (5 quanta), the 2 left one each to clusters 0 and 1: cumulative
    # 1, 2, 3, 4, 5, 7. (0,1) (weight 4) starts at quantum 0 -> cluster 0; (0,2) starts at
    # quantum 4 -> cluster 4 (cumulative 5 > 4). Loads 4 on 0 (ratio 84), 3 on 4 (12.6).
    # Batches 2 and 3: A(0) = {0, 4}, the leaves are new: case 3, the least loaded of A(0),
    # cluster 4 (ratio 5 * 21 / 5 = 21 before batch 3, still below 84).
    # The kernel used to give [0, 3, 3, 3, 3, 3]: with the fractions normalised again by
    # partition_graph (one ulp above k / 21) the level came out 6.999999999999998 and the
    # shares of clusters 2 and 5 as 0.99.. and 1.99.., floored to 0 and 1.
    edges = [(0, 1), (0, 2), (0, 3), (0, 4), (0, 5), (0, 6)]
    for cap in (ramp(6), [1, 2, 3, 4, 5, 6]):
        with rounds_of(1):
            got = partition_graph(graph(edges, [4, 3, 1, 1, 1, 1]), 6, "w-pg",
                                  options={"batch": 2, "apply": "rounds"}, capacities=cap)
        assert got.assignment.tolist() == [0, 4, 4, 4, 4, 4], cap


def test_one_edge_batches_are_the_sequential_stream():
    g = rmat(9, 6, seed=5)
    rng = np.random.default_rng(1)
    heavy = graph(list(zip(g.src.tolist(), g.dst.tolist())),
                  rng.integers(1, 20, size=g.m).tolist())
    for algo in GREEDY:
        for gr in (g, heavy):
            seq = partition_graph(gr, 7, algo, options={"lam": 1.02})
            one = partition_graph(gr, 7, algo,
                                  options={"lam": 1.02, "batch": 1, "apply": "rounds"})
            assert one.assignment.tolist() == seq.assignment.tolist(), algo
            assert one.info["redecided"] == 0  # one edge: always ready in its first round
            assert one.info["apply_rounds"] == seq.info["simple_edges"]


def test_rounds_by_hand():
    # a path 0-1-2-3 and an edge 4-5 in one batch of 4 on p = 2, w-libra (unbounded).
    # Round 0: every set is empty, so every edge asks for the least loaded (it writes
    # both ends); (0,1) and (4,5) are their vertices' first writers, (1,2) and (2,3) wait.
    # The water-fill spreads 2 quanta at level 1: (0,1) -> 0, (4,5) -> 1.
    # Round 1: (1,2) follows A(1) = {0} (writes 2), (2,3) is open (writes 2 and 3): (1,2)
    # is 2's first writer, so (2,3) waits again. Round 2: (2,3) follows A(2) = {0}.
    edges = [(0, 1), (1, 2), (2, 3), (4, 5)]
    got = partition_graph(graph(edges), 2, "w-libra", options={"batch": 4, "apply": "rounds"})
    assert got.assignment.tolist() == [0, 0, 0, 1]
    assert (got.info["apply_rounds"], got.info["redecided"]) == (3, 3)
    # with one round every edge applies on its first choice: the open ones are water-
    # filled in stream order, two quanta to each cluster
    with rounds_of(1):
        got = partition_graph(graph(edges), 2, "w-libra", options={"batch": 4, "apply": "rounds"})
    assert got.assignment.tolist() == [0, 0, 1, 1] and got.info["redecided"] == 0


def test_rounds_keep_the_bound_and_stay_close_to_the_recheck():
    # measured on this graph (RF / the sequential stream's): B = 64: recheck 1.005, rounds
    # 1.000; B = 512: 1.032, 1.016; B = 4096 (15 % of the stream): 1.092, 1.124
    g = rmat(12, 8, seed=3)
    seq = partition_graph(g, 16, "wb-libra").metrics.replication_factor
    for batch, slack in ((64, 1.0), (512, 1.0), (4096, 1.04)):
        r = partition_graph(g, 16, "wb-libra", options={"batch": batch, "apply": "rounds"})
        m = r.info["simple_edges"]
        loads = np.bincount(r.assignment, minlength=16)
        assert loads.sum() == m and loads.max() <= m / 16 + 1  # lambda = 1: the bound + 1 edge
        assert r.info["apply_rounds"] <= greedy_rounds.ROUNDS * math.ceil(m / batch)
        recheck = partition_graph(g, 16, "wb-libra", options={"batch": batch}).metrics.replication_factor
        assert r.metrics.replication_factor <= slack * recheck, batch
        assert r.metrics.replication_factor >= seq * 0.99


def test_quantize():
    q, s = greedy_rounds.quantize(np.array([1.0, 3.0, 7.0]))
    assert s == 0 and q.tolist() == [1, 3, 7] and q.dtype == np.int64
    q, s = greedy_rounds.quantize(np.array([0.5, 0.25, 1.75]))
    # total 2.5: ceil(log2) = 2, so the shift is 52 - 1 - 2 and these are exact in it
    assert s == 49 and q.tolist() == [2 ** 48, 2 ** 47, 7 * 2 ** 47]
    assert int(q.sum()) < 2 ** 52
    q, s = greedy_rounds.quantize(np.array([1e-300, 3e-300]))  # tiny: scaled up, not zeroed
    assert s == 51 - math.ceil(math.log2(4e-300)) and s > 1023
    assert abs(q[1] - 3 * q[0]) <= 2 and 2 ** 50 < int(q.sum()) < 2 ** 52
    q, s = greedy_rounds.quantize(np.array([1e308, 1e308, 0.5]))  # the sum overflows a float64
    assert s == 51 - math.ceil(math.log2(1e308) + math.log2(3))
    assert q[0] == q[1] and q[2] == 0 and int(q.sum()) < 2 ** 53
    q, s = greedy_rounds.quantize(np.array([2.0 ** 60, 1.0]))  # whole, but the total is too big
    assert s == -9 and q.tolist() == [2 ** 51, 0]  # 2^60 + 1 is 2^60 in a float64


def test_fractional_weights_use_quanta_and_one_edge_batches_match():
    edges = [(0, 1), (1, 2), (2, 3), (3, 0), (0, 2), (4, 5), (5, 6), (4, 6)]
    w = [0.5, 1.25, 0.75, 2.0, 0.125, 1.5, 0.25, 1.0]  # dyadic: exact in quanta
    for scale in (1.0, 2.0 ** -1000, 2.0 ** 1000):  # tiny and huge weights alike
        g = graph(edges, [x * scale for x in w])
        seq = partition_graph(g, 3, "wb-libra", options={"lam": 1.1})
        one = partition_graph(g, 3, "wb-libra",
                              options={"lam": 1.1, "batch": 1, "apply": "rounds"})
        assert one.assignment.tolist() == seq.assignment.tolist(), scale


def test_bad_apply():
    g = graph([(0, 1), (1, 2), (2, 3)])
    with pytest.raises(InputError, match="^unknown apply 'later'; use recheck or rounds$"):
        partition_graph(g, 2, "wb-libra", options={"batch": 2, "apply": "later"})
    with pytest.raises(InputError, match="give --batch or --device gpu, or drop --apply"):
        partition_graph(g, 2, "wb-libra", options={"apply": "rounds"})
    with pytest.raises(InputError, match="drop --batch for hdrf"):
        partition_graph(g, 2, "hdrf", options={"batch": 2, "apply": "rounds"})
    with pytest.raises(InputError, match="give --batch or --device gpu, or drop --apply"):
        partition_graph(g, 2, "dbh", options={"apply": "rounds"})
