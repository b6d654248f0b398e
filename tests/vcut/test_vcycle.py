"""`best`'s multilevel cycles: the hypergraph levels of `vcut.vcycle_kernels` (level 0,
the clusterings by hand, contraction keeping the objective), label propagation against a
Python transcription, `quality.vcycle_refine`'s invariants and cycles replayed by hand,
the ``vcycles`` knob, the ``strong`` preset, the summary and the memory refusal."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers import (check_iterated_search, edge_arrays, hyper_level, hyper_objective,
                           no_room_for, random_hyper_level, replay_search, simple_edges,
                           weighted_graphs)
from vcut import cut_levels, quality, vcycle_kernels as kernels
from vcut.capacities import equal_capacities
from vcut.cuts import make_options
from vcut_base.errors import InputError


def _replicas(src, dst, out):
    return len({(int(v), int(c)) for e, c in enumerate(out) for v in (src[e], dst[e])})


def test_level_zero_is_the_incidence():
    src, dst = np.array([0, 0, 1, 2]), np.array([1, 2, 2, 3])
    nptr, nnet, eptr, epin, c = cut_levels.ground_level(src, dst, np.arange(1.0, 5.0), 5)
    assert nptr.tolist() == [0, 2, 4, 6, 8] and nnet.tolist() == [0, 1, 0, 2, 1, 2, 2, 3]
    assert eptr.tolist() == [0, 2, 4, 7, 8, 8]  # vertex 4 has no edge: an empty net
    assert epin.tolist() == [0, 1, 0, 2, 1, 2, 3, 3]
    assert c.tolist() == [1.0, 2.0, 3.0, 4.0]  # each node weighs its edge
    # the objective of level 0 is the replicas less the vertices with an edge
    part = np.array([0, 1, 1, 0])
    assert kernels.objective(eptr, epin, part, 2) == _replicas(src, dst, part) - 4 == 3


def test_the_rating_clustering_by_hand():
    # nodes 0, 1, 2 of weight 1 in one block; net 0 = {0, 1} rates 1, net 1 = {0, 1, 2}
    # rates 1/2 per pin: node 0 joins node 1 (1.5 against 0.5); node 1 is taken; node 2
    # joins that cluster (1/2 through each of its pins 0 and 1)
    level = hyper_level([[0, 1], [0, 1], [1]], [1, 1, 1], [0, 0, 0])
    order = np.array([0, 1, 2])
    rep, clusters = kernels.cluster(*level, order, 10.0, 100, 1)
    assert rep.tolist() == [1, 1, 1] and clusters == 1
    # the target of two clusters ends the pass after the first join
    assert [x.tolist() if hasattr(x, "tolist") else x
            for x in kernels.cluster(*level, order, 10.0, 100, 2)] == [[1, 1, 2], 2]
    # a cluster may weigh at most cmax
    assert kernels.cluster(*level, order, 2.0, 100, 1)[0].tolist() == [1, 1, 2]
    # a net of more pins than max_net is not rated: net 1 alone links node 2
    assert kernels.cluster(*level, order, 10.0, 2, 1)[0].tolist() == [1, 1, 2]
    # nodes of another block are never joined
    level = hyper_level([[0, 1], [0, 1], [1]], [1, 1, 1], [0, 1, 0])
    assert kernels.cluster(*level, order, 10.0, 100, 1)[0].tolist() == [2, 1, 2]


def test_the_star_clustering_by_hand():
    # edges 0:(0,1) 1:(0,2) 2:(0,3) 3:(1,2), blocks [0, 0, 1, 0], vertices 3, 1, 2, 0:
    # vertex 3 has one edge (left for its other end); vertex 1 gathers edges 0 and 3 (both
    # block 0); vertex 2 and vertex 0 have one edge left per block: nothing more
    src, dst = np.array([0, 0, 0, 1]), np.array([1, 2, 3, 2])
    _, _, eptr, epin, _ = cut_levels.ground_level(src, dst, np.ones(4), 4)
    part, c = np.array([0, 0, 1, 0]), np.ones(4)
    vertices = np.array([3, 1, 2, 0])
    rep, clusters = kernels.star_cluster(eptr, epin, c, part, 2, vertices, 10.0, 1)
    assert rep.tolist() == [0, 1, 2, 0] and clusters == 3
    # cmax 1.5: edge 3 would take the cluster past it and starts its own
    rep, clusters = kernels.star_cluster(eptr, epin, c, part, 2, vertices, 1.5, 1)
    assert rep.tolist() == [0, 1, 2, 3] and clusters == 4
    # vertex 0 first: edges 0 and 1 (block 0) gather, edge 2 stays alone
    rep, clusters = kernels.star_cluster(eptr, epin, c, part, 2, np.array([0, 1, 2, 3]),
                                         10.0, 1)
    assert rep.tolist() == [0, 0, 2, 3] and clusters == 3


@settings(max_examples=60, deadline=None)
@given(weighted_graphs(), st.integers(2, 4), st.integers(0, 1000))
def test_coarser_levels_keep_the_objective_and_the_blocks(gw, k, seed):
    src, dst, w, n = edge_arrays(*gw)
    rng = np.random.default_rng(seed)
    part = rng.integers(0, k, len(src))
    levels, maps = cut_levels.coarsen(cut_levels.ground_level(src, dst, w, n), part, k, rng,
                                      nodes_per_part=1)
    want = _replicas(src, dst, part) - len(np.unique(np.concatenate([src, dst])))
    cmax = w.sum() / k
    fine = np.arange(len(src))  # each edge's node at the current level
    for i, (nptr, nnet, eptr, epin, c, cpart) in enumerate(levels):
        assert kernels.objective(eptr, epin, cpart, k) == want
        assert np.allclose(np.bincount(fine, weights=w, minlength=len(c)), c)
        assert cpart[fine].tolist() == part.tolist()  # a node holds edges of one block
        if i:  # a merged node weighs at most cmax
            assert np.all((c <= cmax + 1e-9) | (np.bincount(fine, minlength=len(c)) == 1))
            assert len(c) < len(levels[i - 1][4])
        # a node's nets are those of its edges' ends that still link two nodes
        for u in range(len(c)):
            ends = {int(x) for e in np.flatnonzero(fine == u) for x in (src[e], dst[e])}
            assert len(set(nnet[nptr[u]:nptr[u + 1]].tolist())) == nptr[u + 1] - nptr[u]
            assert len(nnet[nptr[u]:nptr[u + 1]]) <= len(ends)
        if i < len(maps):
            fine = maps[i][fine]


def _lp_literal(node_nets, c, part, load, bound, k, order, rounds):
    """Label propagation as its docstring says, on Python lists."""
    part, load = list(part), list(load)
    moves = gain_total = 0
    stale = set(range(len(part)))  # nodes to visit: a neighbour moved since their visit
    for _ in range(rounds):
        moved = 0
        for u in order:
            if u not in stale:
                continue
            stale.discard(u)
            nets = node_nets[u]
            if not nets:
                continue
            a = part[u]
            blocks = {e: [part[v] for v, x in enumerate(node_nets) if e in x] for e in nets}
            benefit = sum(1 for e in nets if blocks[e].count(a) == 1)
            best, gain = None, 0
            for b in sorted({b for e in nets for b in blocks[e]} - {a}):
                g = benefit - sum(1 for e in nets if b not in blocks[e])
                if g > gain and load[b] + c[u] <= bound[b]:
                    best, gain = b, g
            if best is None:
                continue
            stale |= {v for v, x in enumerate(node_nets) if set(x) & set(nets)} - {u}
            load[a] -= c[u]
            load[best] += c[u]
            part[u] = best
            moved += 1
            gain_total += gain
        moves += moved
        if not moved:
            break
    return part, load, moves, gain_total


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 9), st.integers(2, 5), st.integers(0, 10_000), st.integers(1, 4))
def test_label_propagation_equals_the_transcription(nodes, k, seed, rounds):
    rng = np.random.default_rng(seed)
    node_nets, c, part, load, bound = random_hyper_level(rng, nodes, k)
    order = rng.permutation(nodes)
    want = _lp_literal(node_nets, c.tolist(), part.tolist(), load.tolist(), bound.tolist(), k,
                       order.tolist(), rounds)
    level = hyper_level(node_nets, c, part)
    before = hyper_objective(node_nets, part)
    got_part = part.copy().astype(np.int64)
    moves, gain = kernels.label_propagation(*level[:5], got_part, load, bound.astype(float), k,
                                            order.astype(np.int64), rounds)
    assert (got_part.tolist(), moves, gain) == (want[0], want[2], want[3])
    assert np.allclose(load, want[1])
    assert hyper_objective(node_nets, got_part) == before - gain


def test_label_propagation_past_64_blocks():
    # the connectivity bitsets of 2 words: a node of block 100 moves to block 70, where
    # both of its nets' other pins are
    level = hyper_level([[0, 1], [0], [1]], [1, 1, 1], [100, 70, 70])
    part = level[5].copy()
    load = np.bincount(part, weights=level[4], minlength=128)
    moves, gain = kernels.label_propagation(*level[:5], part, load, np.full(128, 9.0), 128,
                                            np.array([0, 1, 2]), 3)
    assert part.tolist() == [70, 70, 70] and (moves, gain) == (1, 2)


def _graph(seed=3, n=300, m=1500):
    rng = np.random.default_rng(seed)
    src, dst = simple_edges(rng, n, m)
    return src, dst, np.ones(len(src)), n


@settings(max_examples=30, deadline=None)
@given(weighted_graphs(), st.integers(2, 4), st.integers(0, 1000), st.integers(0, 4))
def test_cycles_never_add_replicas_or_break_the_bound(gw, k, seed, cycles):
    src, dst, w, n = edge_arrays(*gw)
    k = min(k, len(src))
    cap = equal_capacities(k)
    start, _ = quality.refine_assignment(src, dst, w, n,
                                         np.random.default_rng(seed).integers(0, k, len(src)),
                                         cap, seed=seed)
    check_iterated_search(quality.vcycle_refine, (src, dst, w, n), start, k, cycles, seed,
                          "vcycles", "vcycles_kept")


def test_the_cycles_replayed_by_hand():
    # each cycle: the levels of the best so far with the cycle's rng, label propagation
    # from the coarsest, refined in full with the cycle's seed, kept with fewer replicas
    src, dst, w, n = _graph()
    k, seed, cycles = 8, 11, 6
    cap = equal_capacities(k)
    start, _ = quality.refine_assignment(src, dst, w, n, quality.ne_assign(src, dst, w, n, cap),
                                         cap, seed=seed)
    out, info = quality.vcycle_refine(src, dst, w, n, start, cap, cycles, seed=seed)
    bound = 1.03 * w.sum() / k

    def cycled(cur, r):
        rng = np.random.default_rng(seed + 1 + r)
        levels, maps = cut_levels.coarsen(cut_levels.ground_level(src, dst, w, n), cur, k, rng)
        assert len(levels) >= 2  # 1,500 edges coarsen towards 80 nodes
        load = np.bincount(cur, weights=w, minlength=k)
        return cut_levels.uncoarsen(levels, maps, load, np.maximum(bound, load), k, rng)[0]

    best, run, kept, fewest = replay_search((src, dst, w, n), start, k, cycles, seed, cycled)
    assert out.tolist() == best.tolist()
    assert (info["vcycles"], info["vcycles_kept"], info["replicas_after"]) == (run, kept, fewest)
    assert kept >= 1 and fewest < _replicas(src, dst, start)  # the cycles found something


def test_bad_arguments():
    src, dst, w, n = edge_arrays([(0, 1), (1, 2), (2, 0)])
    cap = equal_capacities(2)
    start = np.array([0, 1, 0])
    for bad in (-1, 1.5, True, "2"):
        with pytest.raises(InputError, match=r"cycles must be a whole number >= 0"):
            quality.vcycle_refine(src, dst, w, n, start, cap, bad)
    with pytest.raises(InputError, match="each of the 3 edges a cluster in 0..1"):
        quality.vcycle_refine(src, dst, w, n, np.array([0, 2, 0]), cap, 1)
    from vcut.cuts.best import STRONG_VCYCLES

    assert make_options("best", {}).vcycles == 0
    assert make_options("best", {"preset": "strong"}).vcycles == STRONG_VCYCLES == 8
    assert make_options("best", {"preset": "fast"}).vcycles == 0
    for bad in (-1, 1.5, True, "8"):
        with pytest.raises(InputError) as exc:
            make_options("best", {"vcycles": bad})
        assert str(exc.value) == f"best's vcycles must be a whole number >= 0, got {bad!r}"


def test_best_goes_on_without_the_cycles_the_memory_cannot_hold(monkeypatch):
    from ir_graph import Graph
    from vcut.partition import partition_graph

    src, dst, w, n = _graph()
    m, k = len(src), 4
    words = 1
    assert quality.vcycle_bytes(n, m, k) == (quality.refine_bytes(n, m) + 172 * m + 8 * n
                                             + n * (4 * k + 8 * words))
    no_room_for(monkeypatch, quality, "the multilevel cycles", quality.vcycle_bytes(n, m, k))
    cap = equal_capacities(k)
    with pytest.raises(InputError, match="run fewer cycles"):
        quality.vcycle_refine(src, dst, w, n, np.zeros(m, dtype=int), cap, 1)
    g = Graph(n=n, src=src, dst=dst, weight=w)
    p = partition_graph(g, k, "best", {"vcycles": 2})
    assert "best goes on without it" in p.info["vcycles_skipped"]
    assert "vcycles" not in p.info
    plain = partition_graph(g, k, "best", {})
    assert np.array_equal(p.assignment, plain.assignment)


def test_fm_takes_a_losing_step_label_propagation_cannot():
    # one net {0, 1, 2}: nodes 0 and 1 in block 0 (full), node 2 in block 1. Node 2 may not
    # move (block 0 is at its bound); nodes 0 and 1 gain nothing alone, so label
    # propagation stops. FM moves node 0 at gain 0, then node 1 at gain 1, and keeps both
    level = hyper_level([[0], [0], [0]], [1, 1, 1], [0, 0, 1])
    bound = np.array([2.0, 5.0])
    part, load = level[5].copy(), np.array([2.0, 1.0])
    assert kernels.label_propagation(*level[:5], part, load, bound, 2, np.array([0, 1, 2]),
                                     4) == (0, 0)
    assert kernels.fm(*level[:5], part, load, bound, 2, np.array([0, 1, 2]), 4, 100,
                      10) == (2, 1, 2)
    assert part.tolist() == [1, 1, 1] and load.tolist() == [0.0, 3.0]
    # a budget of no moves starts no search
    part, load = level[5].copy(), np.array([2.0, 1.0])
    assert kernels.fm(*level[:5], part, load, bound, 2, np.array([0, 1, 2]), 4, 100,
                      0) == (0, 0, 0)
    # a search that ends after one move past its best prefix (none) undoes it
    part, load = level[5].copy(), np.array([2.0, 1.0])
    assert kernels.fm(*level[:5], part, load, bound, 2, np.array([0, 1, 2]), 1, 100,
                      10)[:2] == (0, 0)
    assert part.tolist() == [0, 0, 1] and load.tolist() == [2.0, 1.0]


def test_fm_stops_after_stall_searches_in_a_row_that_keep_nothing():
    # blocks 0 and 1: the level of the test above (net 0 = {0, 1, 2}), where the search
    # from node 0 takes one replica off. Blocks 2 and 3: net 1 = {3, 4, 5}, nodes 3 and 4 in
    # block 2 (full), node 5 in block 3 (room for one more): from node 3 every move gains 0
    # (3 to block 3; 5 to block 2; 4 to block 3 ...) and the search keeps none
    level = hyper_level([[0], [0], [0], [1], [1], [1]], [1] * 6, [0, 0, 1, 2, 2, 3])
    bound = np.array([2.0, 5.0, 2.0, 2.0])
    order = np.array([3, 0, 1, 2, 4, 5])

    def run(stall):
        part, load = level[5].copy(), np.array([2.0, 1.0, 2.0, 1.0])
        out = kernels.fm(*level[:5], part, load, bound, 4, order, 4, 100, 100, stall)
        return out, part.tolist()

    # one search that keeps nothing ends them: the search from node 0 never runs
    (kept, gain, tried), part = run(1)
    assert (kept, gain) == (0, 0) and tried > 0 and part == [0, 0, 1, 2, 2, 3]
    # two in a row: it runs, and so it does without a stall limit (-1)
    for stall in (2, -1):
        (kept, gain, _), part = run(stall)
        assert (kept, gain) == (2, 1) and part[:3] == [1, 1, 1]


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 9), st.integers(2, 5), st.integers(0, 10_000), st.integers(1, 6))
def test_fm_keeps_what_it_gains_within_the_bound(nodes, k, seed, limit):
    rng = np.random.default_rng(seed)
    node_nets, c, part, load, bound = random_hyper_level(rng, nodes, k)
    level = hyper_level(node_nets, c, part)
    got = part.copy().astype(np.int64)
    kept, gain, tried = kernels.fm(*level[:5], got, load, bound.astype(float), k,
                                   rng.permutation(nodes).astype(np.int64), limit,
                                   int(rng.integers(1, 10)), 2 * nodes)
    assert gain >= 0 and kept <= tried
    assert hyper_objective(node_nets, part) - hyper_objective(node_nets, got) == gain
    assert np.allclose(load, np.bincount(got, weights=c, minlength=k))
    assert np.all(load <= bound)
    if gain == 0:
        assert got.tolist() == part.tolist() and kept == 0


def test_the_cycles_run_from_the_two_best_refined_candidates(monkeypatch):
    from ir_graph import Graph
    from vcut.partition import partition_graph

    src, dst, w, n = _graph(seed=4, n=400, m=1600)
    refined, cycled = [], []
    real_refine, real_cycles = quality.refine_assignment, quality.vcycle_refine

    def refine(*args, **kw):
        out = real_refine(*args, **kw)
        if not cycled:  # the candidates' refinements, before any cycle
            refined.append(out[1]["replicas_after"])
        return out

    def cycles(*args, **kw):
        cycled.append(None)
        out = real_cycles(*args, **kw)
        cycled[cycled.index(None)] = (_replicas(args[0], args[1], args[4]), out)
        return out

    monkeypatch.setattr(quality, "refine_assignment", refine)
    monkeypatch.setattr(quality, "vcycle_refine", cycles)
    g = Graph(n=n, src=src, dst=dst, weight=w)
    p = partition_graph(g, 8, "best", {"vcycles": 3, "multilevel": True, "metis": True})
    names = p.info["candidates"].split(", ")
    assert len(refined) == len(names) == 3  # the expansion, the METIS and multilevel cuts
    assert quality.VCYCLE_FINALISTS == 2 and len(cycled) == 2
    # each run of the cycles starts from one of the two refined cuts of fewest replicas
    assert sorted(start for start, _ in cycled) == sorted(refined)[:2]
    assert [x in names for x in p.info["finalists"].split(", ")] == [True, True]
    # the one kept has the fewest replicas after its cycles, and the counts are its own
    after = [out[1]["replicas_after"] for _, out in cycled]
    assert p.info["replicas_after"] == min(after) == _replicas(src, dst, p.assignment)
    kept = next(out for _, out in cycled if out[1]["replicas_after"] == min(after))
    assert (p.info["vcycles"], p.info["vcycles_kept"]) == (kept[1]["vcycles"],
                                                           kept[1]["vcycles_kept"])
    assert p.info["best_of"] in p.info["finalists"].split(", ")
    # without cycles, no finalists: the refined cut of fewest replicas is kept
    monkeypatch.undo()
    q = partition_graph(g, 8, "best", {"multilevel": True, "metis": True})
    assert "finalists" not in q.info and q.info["replicas_after"] == min(refined)
