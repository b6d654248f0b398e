"""`best`'s multilevel cut (`vcut.quality.multilevel_assign`, `vcut.cut_levels.multilevel_cut`):
the clique expansion METIS cuts (by hand and against a transcription), the rebalancing moves
(by hand and their invariants), the cut replayed by hand, its invariants, the ``multilevel``
knob and the ``strong`` preset, the summary, and the candidate dropped where the memory cannot
hold it or its cut is above the bound."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers import (edge_arrays, hyper_level, hyper_objective, no_room_for,
                           random_hyper_level, run_cli, simple_edges, weighted_graphs)
from vcut import cut_levels, quality, vcycle_kernels as kernels
from vcut.capacities import equal_capacities
from vcut.cuts import make_options
from vcut_base.errors import InputError


def _clique(level, max_net, scale):
    xadj = kernels.clique_degrees(*level[:4], max_net, scale)
    adjncy, adjwgt = kernels.clique_fill(*level[:4], max_net, scale, xadj)
    return xadj, adjncy, adjwgt


def test_the_clique_expansion_by_hand():
    # nets 0 = {0, 1, 2} (500 per pair at scale 1000), 1 = {1, 2} (1000), 2 = {2, 3} (1000),
    # 3 = {3} (one pin: no edge); each row in the order the node's nets list its neighbours
    level = hyper_level([[0], [0, 1], [0, 1, 2], [2, 3]], [1, 1, 1, 1], [0, 0, 0, 0])
    xadj, adjncy, adjwgt = _clique(level, 3, 1000)
    assert xadj.tolist() == [0, 2, 4, 7, 8]
    assert adjncy.tolist() == [1, 2, 0, 2, 0, 1, 3, 2]
    assert adjwgt.tolist() == [500, 500, 500, 1500, 500, 1500, 1000, 1000]
    # nets of more than max_net pins are left out: node 0 is alone
    xadj, adjncy, adjwgt = _clique(level, 2, 1000)
    assert xadj.tolist() == [0, 0, 1, 3, 4]
    assert adjncy.tolist() == [2, 1, 3, 2] and adjwgt.tolist() == [1000, 1000, 1000, 1000]
    # a weight never rounds to 0: a net of 3 pins at scale 1 weighs 1 per pair
    assert _clique(level, 3, 1)[2].tolist() == [1, 1, 1, 2, 1, 2, 1, 1]


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 9), st.integers(0, 10_000), st.integers(2, 5))
def test_the_clique_expansion_equals_the_transcription(nodes, seed, max_net):
    rng = np.random.default_rng(seed)
    node_nets = random_hyper_level(rng, nodes, 2)[0]
    want = {}
    for e in {e for nets in node_nets for e in nets}:
        pins = [u for u, nets in enumerate(node_nets) if e in nets]
        if 2 <= len(pins) <= max_net:
            for u in pins:
                for v in pins:
                    if u != v:
                        want[u, v] = want.get((u, v), 0) + max(1, 97 // (len(pins) - 1))
    xadj, adjncy, adjwgt = _clique(hyper_level(node_nets, np.ones(nodes), [0] * nodes),
                                   max_net, 97)
    got = {(u, int(adjncy[j])): int(adjwgt[j]) for u in range(nodes)
           for j in range(xadj[u], xadj[u + 1])}
    assert len(got) == xadj[-1]  # each neighbour once per row
    assert got == want  # symmetric, as METIS needs


def test_rebalancing_by_hand():
    # block 0 holds nodes 0, 1, 2 (weight 3, bound 2). Node 0 shares net 0 with node 3 in
    # block 1: its move there gains 1 (net 0 then connects one block); nodes 1 and 2 (net 1
    # alone, in block 0) would cost 1 each. Node 0 moves, and block 0 is within its bound
    level = hyper_level([[0], [1], [1], [0]], [1, 1, 1, 1], [0, 0, 0, 1])
    part, load = level[5].copy(), np.array([3.0, 1.0])
    assert kernels.rebalance(*level[:5], part, load, np.array([2.0, 3.0]), 2) == (1, 1)
    assert part.tolist() == [1, 0, 0, 1] and load.tolist() == [2.0, 2.0]
    # no block a node's nets connect has room: a move to the lightest block with room, at
    # the cost of the node's nets (node 0 or node 2: one net each; node 1 has two)
    level = hyper_level([[0], [0, 1], [1]], [1, 1, 1], [0, 0, 0])
    part, load = level[5].copy(), np.array([3.0, 0.0, 0.0])
    assert kernels.rebalance(*level[:5], part, load, np.array([2.0, 0.5, 3.0]), 3) == (1, -1)
    assert sorted(part.tolist()) == [0, 0, 2] and part[1] == 0 and load.tolist() == [2, 0, 1]
    # nothing above the bound: nothing moves
    part, load = level[5].copy(), np.array([3.0, 0.0, 0.0])
    assert kernels.rebalance(*level[:5], part, load, np.full(3, 3.0), 3) == (0, 0)
    # no block has room for any node: nothing moves, the block stays above
    assert kernels.rebalance(*level[:5], part, load, np.array([2.0, 0.5, 0.5]), 3) == (0, 0)
    assert part.tolist() == [0, 0, 0]


@settings(max_examples=80, deadline=None)
@given(st.integers(2, 9), st.integers(2, 5), st.integers(0, 10_000))
def test_rebalancing_leaves_no_block_above_the_bound_that_could_shed_a_node(nodes, k, seed):
    rng = np.random.default_rng(seed)
    node_nets, c, part, load, _ = random_hyper_level(rng, nodes, k)
    bound = np.maximum(load * rng.uniform(0.3, 1.2, k), 1.0)  # some blocks above it
    level = hyper_level(node_nets, c, part)
    got, after = part.copy().astype(np.int64), load.copy()
    moves, gain = kernels.rebalance(*level[:5], got, after, bound, k)
    assert hyper_objective(node_nets, part) - hyper_objective(node_nets, got) == gain
    assert moves == np.count_nonzero(got != part)  # a node moved lands within the bound
    assert np.allclose(after, np.bincount(got, weights=c, minlength=k))
    for b in range(k):
        if load[b] <= bound[b]:
            assert after[b] <= bound[b] + 1e-9  # a block within its bound stays so
        if after[b] > bound[b]:  # still above: none of its nodes fits anywhere else
            for u in np.flatnonzero(got == b):
                assert all(after[t] + c[u] > bound[t] for t in range(k) if t != b)
        if after[b] < load[b] - 1e-9:  # a block lost weight only where it was above
            assert load[b] > bound[b]


def _graph(seed=5, n=200, m=900):
    rng = np.random.default_rng(seed)
    src, dst = simple_edges(rng, n, m)
    return src, dst, rng.integers(1, 4, len(src)).astype(float), n


def test_the_cut_replayed_by_hand(monkeypatch):
    # coarsened from one block with the seed's rng, METIS given the clique expansion of the
    # coarsest level (node weights as integers, a thousandth below the imbalance), then each
    # level rebalanced and refined on the way back
    import runtime.vertex_partition as vp
    from vcut.spac import _int_weights

    src, dst, w, n = _graph()
    k, seed = 4, 9
    cap = equal_capacities(k)
    calls = []
    real = vp.vertex_partition

    def recorded(*args, **kw):
        calls.append((args, kw))
        return real(*args, **kw)

    monkeypatch.setattr(vp, "vertex_partition", recorded)
    got = quality.multilevel_assign(src, dst, w, n, cap, seed=seed)
    assert got.dtype == np.int32 and got.shape == src.shape
    rng = np.random.default_rng(seed)
    ground = cut_levels.ground_level(src, dst, w, n)
    levels, maps = cut_levels.coarsen(ground, np.zeros(len(src), dtype=np.int64), k, rng,
                                      nodes_per_part=cut_levels.ML_NODES_PER_PART,
                                      max_net=cut_levels.ML_RATE_NET)
    assert len(levels) >= 2  # 900 edges coarsen towards 160 nodes
    coarsest = levels[-1]
    xadj, adjncy, adjwgt = _clique(coarsest, cut_levels.ML_MAX_NET, cut_levels.ML_SCALE)
    (args, kw), = calls
    assert [a.tolist() for a in args[:4]] == [xadj.tolist(), adjncy.tolist(),
                                             adjwgt.tolist(), _int_weights(coarsest[4]).tolist()]
    assert args[4] == k
    assert kw == {"backend": "metis", "imbalance": 1.03 - quality.METIS_MARGIN, "seed": seed,
                  "targets": None}
    part = np.asarray(real(*args, **kw), dtype=np.int64)
    levels[-1] = (*coarsest[:5], part)
    load = np.bincount(part, weights=coarsest[4], minlength=k)
    bound = quality.balance_bounds(1.03, cap, w)
    want, _ = cut_levels.uncoarsen(levels, maps, load, bound, k, rng, balance=True)
    assert got.tolist() == want.tolist()


@settings(max_examples=25, deadline=None)
@given(weighted_graphs(), st.integers(2, 4), st.integers(0, 1000))
def test_the_cut_is_an_assignment_within_the_bound_where_rebalancing_can_reach_it(gw, k,
                                                                                  seed):
    src, dst, w, n = edge_arrays(*gw)
    k = min(k, len(src))
    cap = equal_capacities(k)
    got = quality.multilevel_assign(src, dst, w, n, cap, seed=seed)
    assert got.tolist() == quality.multilevel_assign(src, dst, w, n, cap, seed=seed).tolist()
    assert got.shape == src.shape and got.min() >= 0 and got.max() < k
    load = np.bincount(got, weights=w, minlength=k)
    bound = quality.balance_bounds(1.03, cap, w)
    for b in np.flatnonzero(load > bound):  # no edge of it fits in another cluster
        for e in np.flatnonzero(got == b):
            assert all(load[t] + w[e] > bound[t] for t in range(k) if t != b)


def test_the_knob_and_the_presets():
    assert make_options("best", {}).multilevel is False
    assert make_options("best", {"preset": "fast"}).multilevel is False
    assert make_options("best", {"preset": "strong"}).multilevel is True
    assert make_options("best", {"preset": "strong", "multilevel": False}).multilevel is False
    for bad in (1, "yes", None):
        with pytest.raises(InputError) as exc:
            make_options("best", {"multilevel": bad})
        assert str(exc.value) == f"best's multilevel must be True or False, got {bad!r}"


def test_best_keeps_the_fewest_replicas_with_the_multilevel_cut_among_the_candidates():
    from ir_graph import Graph
    from vcut.partition import partition_graph

    src, dst, w, n = _graph(seed=7, n=400, m=1600)
    g = Graph(n=n, src=src, dst=dst, weight=w)
    for k in (4, 16):
        plain = partition_graph(g, k, "best", {})
        more = partition_graph(g, k, "best", {"multilevel": True})
        assert more.info["candidates"].endswith(", ml")
        assert more.info["replicas_after"] <= plain.info["replicas_after"]
        if more.info["best_of"] != "ml":  # the other candidates are refined as before
            assert np.array_equal(more.assignment, plain.assignment)
        else:
            assert more.info["replicas_after"] < plain.info["replicas_after"]


def test_best_goes_on_without_the_cut_the_memory_cannot_hold_or_above_the_bound(monkeypatch):
    from ir_graph import Graph
    from vcut.partition import partition_graph

    src, dst, w, n = _graph()
    m, k = len(src), 4
    assert cut_levels.levels_bytes(n, m, k) == 152 * m + 8 * n + n * (4 * k + 8)
    g = Graph(n=n, src=src, dst=dst, weight=w)
    plain = partition_graph(g, k, "best", {})
    no_room_for(monkeypatch, quality, "the multilevel cut", cut_levels.levels_bytes(n, m, k))
    p = partition_graph(g, k, "best", {"multilevel": True})
    assert "the multilevel cut on 200 vertices" in p.info["ml_skipped"]
    assert "best goes on without it" in p.info["ml_skipped"]
    assert p.info["candidates"] == plain.info["candidates"]
    assert np.array_equal(p.assignment, plain.assignment)
    monkeypatch.undo()
    monkeypatch.setattr(quality, "multilevel_assign",
                        lambda *a, **kw: np.zeros(m, dtype=np.int32))
    p = partition_graph(g, k, "best", {"multilevel": True})
    assert p.info["ml_skipped"] == "the multilevel cut was above the balance bound"
    assert np.array_equal(p.assignment, plain.assignment)


def test_the_summary_and_json_name_the_multilevel_cut(tmp_path, capsys):
    import json

    src, dst, _, n = _graph()
    path = tmp_path / "g.txt"
    path.write_text("".join(f"{a} {b}\n" for a, b in zip(src, dst)))
    code, out, err = run_cli(capsys, "partition", path, "-p", "4", "--algo", "best",
                             "--preset", "strong", "-o", tmp_path / "out.parts")
    assert code == 0, err
    line = next(x for x in out.splitlines() if x.startswith("quality mode"))
    assert "and the multilevel cut: " in line
    code, out, err = run_cli(capsys, "partition", path, "-p", "4", "--algo", "best",
                             "--preset", "strong", "--json", "-o", tmp_path / "out2.parts")
    assert code == 0, err
    result = json.loads(out)
    assert result["candidates"].split(", ")[-1] == "ml"
    assert result["best_of"] in result["candidates"].split(", ")
