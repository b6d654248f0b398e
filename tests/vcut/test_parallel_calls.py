"""``par`` on whole calls (vcut.par_kernels.call_labels, par_assign's calls, grain_unit)."""

import json

import numpy as np
import pytest

from vcut_base.errors import InputError
from ir_graph.graph import Graph
from tests.helpers import cli_partition, ir_dag, par_grains_reference
from vcut.par_kernels import call_labels
from vcut.parallel import CALL_SHARE, par_assign
from vcut.partition import partition_graph


def _labels_reference(depth, work, limit):
    """call_labels by the definition: a call begins at the first vertex and at every
    vertex deeper than the one before it, and lasts while the depth stays at least its
    own; the outermost calls within ``limit`` are one label each."""
    n = len(depth)
    calls = []
    for i in range(n):
        if i == 0 or depth[i] > depth[i - 1]:
            j = i + 1
            while j < n and depth[j] >= depth[i]:
                j += 1
            calls.append((i, j))
    ok = [(a, b) for a, b in calls if sum(work[a:b]) <= limit]
    outer = [(a, b) for a, b in ok
             if not any(c <= a and b <= d and (c, d) != (a, b) for c, d in ok)]
    start = {a: b for a, b in outer}
    labels, label, i = [], -1, 0
    while i < n:
        label += 1
        end = start.get(i, i + 1)
        labels += [label] * (end - i)
        i = end
    return labels


def _depths(n, seed):
    """A call depth per vertex: calls one deeper, returns by one or several."""
    rng = np.random.default_rng(seed)
    d = np.empty(n, dtype=np.int32)
    cur = int(rng.integers(0, 3))  # a window may begin inside calls
    for i in range(n):
        r = rng.random()
        if r < 0.12:
            cur += 1
        elif r < 0.24 and cur > 0:
            cur -= int(rng.integers(1, cur + 1)) if rng.random() < 0.2 else 1
        d[i] = cur
    return d


def test_call_labels_by_hand():
    # main (0) | a call [1, 6) holding one [3, 5) | main | a call [7, 9) | main
    d = np.array([0, 1, 1, 2, 2, 1, 0, 1, 1, 0])
    w = np.ones(10)
    assert call_labels(d, w, 2.0).tolist() == [0, 1, 2, 3, 3, 4, 5, 6, 6, 7]
    assert call_labels(d, w, 5.0).tolist() == [0, 1, 1, 1, 1, 1, 2, 3, 3, 4]
    assert call_labels(d, w, 1.9).tolist() == list(range(10))  # no call within 1.9
    assert call_labels(d, w, 10.0).tolist() == [0] * 10  # the whole run: one call
    # work counts: the inner call weighs 2 + 2, the outer 4 + 3 = 7
    w2 = np.array([1.0, 1.0, 1.0, 2.0, 2.0, 1.0, 1.0, 1.0, 1.0, 1.0])
    assert call_labels(d, w2, 6.9).tolist() == [0, 1, 2, 3, 3, 4, 5, 6, 6, 7]
    assert call_labels(d, w2, 7.0).tolist() == [0, 1, 1, 1, 1, 1, 2, 3, 3, 4]
    # two levels entered at once, left one at a time: 1 3 2 1 -> [1, 2) is a call, the
    # vertex at depth 2 belongs to the one begun at depth 1 (vertex 0)
    assert call_labels(np.array([1, 3, 2, 1, 0]), np.ones(5), 1.0).tolist() == [0, 1, 2, 3, 4]
    assert call_labels(np.array([1, 3, 2, 1, 0]), np.ones(5), 4.0).tolist() == [0, 0, 0, 0, 1]
    # a window that begins inside calls: its first vertex begins one; below it, none
    assert call_labels(np.array([3, 3, 1, 1, 2]), np.ones(5), 2.0).tolist() == [0, 0, 1, 2, 3]
    assert call_labels(np.zeros(0, np.int64), np.zeros(0), 1.0).tolist() == []


@pytest.mark.parametrize("seed", range(6))
def test_call_labels_match_the_definition(seed):
    rng = np.random.default_rng(seed + 100)
    d = _depths(400, seed)
    w = rng.integers(0, 5, 400).astype(np.float64)
    for limit in (0.0, 3.0, 12.0, 40.0, 200.0):
        assert call_labels(d.astype(np.int64), w, limit).tolist() == \
            _labels_reference(d, w, limit), limit


def _ir_dag_calls(n, m, seed):
    g = ir_dag(n, m, seed)
    return Graph(n=g.n, src=g.src, dst=g.dst, weight=g.weight, directed=True,
                 node_sid=g.node_sid, node_opclass=g.node_opclass, node_depth=_depths(n, seed))


def _model_bound(src, dst, w, n, p):
    longest = np.zeros(n)
    for e in sorted(range(len(src)), key=lambda e: (dst[e], src[e])):
        longest[dst[e]] = max(longest[dst[e]], longest[src[e]] + w[e])
    return max(longest.max(), w.sum() / p)


@pytest.mark.parametrize("p, share, call_share, seed",
                         [(3, 1.0, CALL_SHARE, 1), (4, 0.5, 0.2, 2), (8, 1.0, 0.5, 3),
                          (2, 1.0, 0.1, 4)])
def test_calls_match_the_definition(p, share, call_share, seed):
    # par_assign's calls: the labels of the definition (the calls within call_share of
    # the model's bound, every other vertex alone), then as grains
    g = _ir_dag_calls(150, 500, seed)
    work = np.bincount(g.dst, weights=g.weight, minlength=g.n)
    bound = _model_bound(g.src, g.dst, g.weight, g.n, p)
    labels = np.array(_labels_reference(g.node_depth, work, call_share * bound))
    kw = dict(latency=4.0, beta=1.5, gamma=0.25)
    out, home, sched, info = par_assign(g.src, g.dst, g.weight, g.n, p, np.full(p, 1.0 / p),
                                        calls=g.node_depth, call_share=call_share,
                                        grain_share=share, **kw)
    r_out, r_home, r_sched, whole = par_grains_reference(g.src, g.dst, g.weight, g.n, p, labels,
                                                         share, **kw)
    assert info["grains"] == whole > 0 and info["call_share"] == call_share
    assert out.tolist() == r_out
    assert home.tolist() == r_home
    assert sched.tolist() == r_sched


@pytest.mark.parametrize("p", [2, 5])
def test_call_invariants(p):
    g = _ir_dag_calls(600, 2500, p)
    part = partition_graph(g, p, "par",
                           options={"latency": 6.0, "grains": 1.0, "grain_unit": "calls"})
    out, sched, homes = part.simple_assignment, part.schedule, part.homes
    src, dst = part.src, part.dst
    lo, hi = np.minimum(src, dst), np.maximum(src, dst)
    assert part.info["grains"] > 0 and part.info["call_share"] == CALL_SHARE
    pos = np.empty(len(src), dtype=np.int64)
    pos[sched] = np.arange(len(src))
    last_in = np.full(g.n, -1)
    np.maximum.at(last_in, hi, pos)
    assert np.all(pos > last_in[lo])  # topological
    assert np.all(out == homes[hi])
    # the calls kept whole: each all on one cluster, each within its share of the work
    work = np.bincount(hi, weights=part.weight, minlength=g.n)
    bound = _model_bound(g.src, g.dst, g.weight, g.n, p)
    labels = np.array(_labels_reference(g.node_depth, work, CALL_SHARE * bound))
    whole = 0
    for r in np.flatnonzero(np.bincount(labels) > 1):
        vs = np.flatnonzero(labels == r)
        tasks = np.isin(hi, vs)
        assert work[vs].sum() <= CALL_SHARE * bound
        whole += tasks.any() and len(np.unique(out[tasks])) == 1
    assert whole >= part.info["grains"]
    again = partition_graph(g, p, "par",
                            options={"latency": 6.0, "grains": 1.0, "grain_unit": "calls"})
    assert np.array_equal(again.simple_assignment, out)
    assert np.array_equal(again.schedule, sched)


def test_bad_calls():
    g = _ir_dag_calls(60, 200, 5)
    cap = np.full(2, 0.5)
    depth = g.node_depth
    for bad in (depth[:-1], depth - 5, depth.astype(np.float64)):
        with pytest.raises(InputError, match="call depths must be 60 integers >= 0"):
            par_assign(g.src, g.dst, g.weight, g.n, 2, cap, calls=bad)
    for share in (0.0, -0.5, 1.5, float("nan")):
        with pytest.raises(InputError, match="call share must be above 0"):
            par_assign(g.src, g.dst, g.weight, g.n, 2, cap, calls=depth, call_share=share)
    with pytest.raises(InputError, match="block runs or calls as its grains, not both"):
        par_assign(g.src, g.dst, g.weight, g.n, 2, cap, calls=depth,
                   grains=np.arange(g.n))
    numa = (np.full(len(g.src), -1), np.zeros(2, np.int64), np.zeros((1, 1)), 100.0)
    with pytest.raises(InputError, match="without a memory model"):
        par_assign(g.src, g.dst, g.weight, g.n, 2, cap, calls=depth, numa=numa)
    with pytest.raises(InputError, match="unknown grain unit 'loops'; use one of runs, calls"):
        partition_graph(g, 2, "par", options={"grains": 0.5, "grain_unit": "loops"})
    no_depth = Graph(n=g.n, src=g.src, dst=g.dst, weight=g.weight, directed=True,
                     node_sid=g.node_sid, node_opclass=g.node_opclass)
    with pytest.raises(InputError, match="calls as grains need an IR graph with its call"):
        partition_graph(no_depth, 2, "par", options={"grains": 0.5, "grain_unit": "calls"})
    # runs need no depths, calls no instructions
    partition_graph(no_depth, 2, "par", options={"grains": 0.5, "grain_unit": "runs"})
    only_depth = Graph(n=g.n, src=g.src, dst=g.dst, weight=g.weight, directed=True,
                       node_depth=depth)
    partition_graph(only_depth, 2, "par", options={"grains": 0.5, "grain_unit": "calls"})


def test_cli_partition_calls(tmp_path):
    g = _ir_dag_calls(300, 1200, 7)
    path, vcut = cli_partition(g, tmp_path)
    res = vcut(path, "--grains", "1", "--grain-unit", "calls", "--json")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    ref = partition_graph(g, 3, "par",
                          options={"latency": 5.0, "grains": 1.0, "grain_unit": "calls"}).info
    assert doc["grains"] == ref["grains"] > 0 and doc["call_share"] == CALL_SHARE
    assert doc["grain_vertices"] == ref["grain_vertices"]
    assert doc["model_makespan"] == ref["model_makespan"]
    runs = json.loads(vcut(path, "--grains", "1", "--json").stdout)
    assert "call_share" not in runs and runs["model_makespan"] != doc["model_makespan"]
    bad = vcut(path, "--grains", "1", "--grain-unit", "loops")
    assert bad.returncode == 2 and "invalid choice: 'loops'" in bad.stderr
    edges = tmp_path / "g.edgelist"
    edges.write_text("".join(f"{a} {b} {w:g}\n" for a, b, w in zip(g.src, g.dst, g.weight)))
    bad = vcut(edges, "--grains", "1", "--grain-unit", "calls")
    assert bad.returncode == 2
    assert bad.stderr.strip().startswith("error: calls as grains need an IR graph")
