"""``par`` on whole basic-block runs (vcut.parallel: block_runs, par_assign's grains)."""

import json

import numpy as np
import pytest

from vcut_base.errors import InputError
from ir_graph.graph import OPCLASSES, Graph
from tests.helpers import cli_partition, ir_dag, par_grains_reference
from vcut.parallel import block_runs, par_assign
from vcut.partition import partition_graph

INT, CONTROL = OPCLASSES.index("int"), OPCLASSES.index("control")


def test_block_runs_by_hand():
    # sids 0 1 2 | 3 4 | 10 11 | 5: the branch (sid 2) ends its run though sid 3 follows,
    # the jump to sid 10 (a call) and back to 5 start new ones
    sid = [0, 1, 2, 3, 4, 10, 11, 5]
    op = [INT, INT, CONTROL, INT, INT, INT, INT, INT]
    assert block_runs(sid, op).tolist() == [0, 0, 0, 1, 1, 2, 2, 3]
    # a branch and the phis after it stay together; the first other instruction starts a run
    assert block_runs([0, 1, 2, 3], [CONTROL, CONTROL, CONTROL, INT]).tolist() == [0, 0, 0, 1]
    assert block_runs([], []).tolist() == []


@pytest.mark.parametrize("p, share, seed", [(3, 0.5, 1), (4, 0.3, 2), (8, 1.0, 3), (2, 0.5, 4)])
def test_grains_match_the_definition(p, share, seed):
    g = ir_dag(150, 500, seed)
    runs = block_runs(g.node_sid, g.node_opclass)
    kw = dict(latency=4.0, beta=1.5, gamma=0.25)
    out, home, sched, info = par_assign(g.src, g.dst, g.weight, g.n, p, np.full(p, 1.0 / p),
                                        grains=runs, grain_share=share, **kw)
    r_out, r_home, r_sched, whole = par_grains_reference(g.src, g.dst, g.weight, g.n, p, runs,
                                                         share, **kw)
    assert info["grains"] == whole > 0
    assert out.tolist() == r_out
    assert home.tolist() == r_home
    assert sched.tolist() == r_sched


@pytest.mark.parametrize("p, share", [(2, 0.5), (5, 1.0), (12, 1.0)])
def test_grain_invariants(p, share):
    g = ir_dag(600, 2500, p)
    part = partition_graph(g, p, "par", options={"latency": 6.0, "grains": share})
    out, sched, homes = part.simple_assignment, part.schedule, part.homes
    src, dst = part.src, part.dst
    lo, hi = np.minimum(src, dst), np.maximum(src, dst)
    runs = block_runs(g.node_sid, g.node_opclass)
    assert part.info["grains"] > 0 and part.info["grain_share"] == share
    assert sorted(sched.tolist()) == list(range(len(src)))
    pos = np.empty(len(src), dtype=np.int64)
    pos[sched] = np.arange(len(src))
    last_in = np.full(g.n, -1)
    np.maximum.at(last_in, hi, pos)
    assert np.all(pos > last_in[lo])  # topological
    # every vertex with in-edges has them all on its home (no piece here has 64 in-edges)
    assert np.all(out == homes[hi])
    # every run kept whole has all its tasks on one cluster: at least that many runs of
    # two or more vertices with an in-edge from another run do
    one = 0
    for r in np.unique(runs):
        vs = np.flatnonzero(runs == r)
        tasks = np.isin(hi, vs)
        if len(vs) > 1 and (tasks & ~np.isin(lo, vs)).any():
            one += len(np.unique(out[tasks])) == 1
    assert one >= part.info["grains"]
    # a vertex is homed on a cluster holding one of its edges; one without edges nowhere
    deg = np.bincount(np.concatenate([src, dst]), minlength=g.n)
    assert np.all((homes >= 0) == (deg > 0))
    for v in np.flatnonzero(homes >= 0):
        assert homes[v] in set(out[(src == v) | (dst == v)].tolist())
    again = partition_graph(g, p, "par", options={"latency": 6.0, "grains": share})
    assert np.array_equal(again.simple_assignment, out)
    assert np.array_equal(again.schedule, sched)


def test_without_a_run_to_keep_whole_par_runs_as_without_grains():
    # p = 16 on this DAG: no run's paths are within the bound (the work over 16 clusters
    # is short), so par runs on the vertices as it would without runs
    g = ir_dag(600, 2500, 16)
    part = partition_graph(g, 16, "par", options={"latency": 6.0, "grains": 0.5})
    plain = partition_graph(g, 16, "par", options={"latency": 6.0})
    assert part.info["grains"] == 0
    assert np.array_equal(part.simple_assignment, plain.simple_assignment)
    assert np.array_equal(part.schedule, plain.schedule)


def test_bad_grains():
    g = ir_dag(60, 200, 5)
    runs = block_runs(g.node_sid, g.node_opclass)
    cap = np.full(2, 0.5)
    for share in (0.0, -0.5, 1.5, float("nan")):
        with pytest.raises(InputError, match="grain share must be above 0"):
            par_assign(g.src, g.dst, g.weight, g.n, 2, cap, grains=runs, grain_share=share)
    for bad in (runs[:-1], runs + 1, runs * 2, runs.astype(np.float64)):
        with pytest.raises(InputError, match="block runs must be 60 labels"):
            par_assign(g.src, g.dst, g.weight, g.n, 2, cap, grains=bad)
    numa = (np.full(len(g.src), -1), np.zeros(2, np.int64), np.zeros((1, 1)), 100.0)
    with pytest.raises(InputError, match="without a memory model"):
        par_assign(g.src, g.dst, g.weight, g.n, 2, cap, grains=runs, numa=numa)
    for share in (-0.1, 1.01, float("inf")):
        with pytest.raises(InputError, match="between 0 \\(off\\) and 1"):
            partition_graph(g, 2, "par", options={"grains": share})
    with pytest.raises(InputError, match="scheduled whole by par; wb-libra"):
        partition_graph(g, 2, "wb-libra", options={"grains": 0.5})
    plain = Graph(n=g.n, src=g.src, dst=g.dst, weight=g.weight, directed=True)
    with pytest.raises(InputError, match="need an IR graph"):
        partition_graph(plain, 2, "par", options={"grains": 0.5})


def test_cli_partition_grains(tmp_path):
    g = ir_dag(300, 1200, 7)
    path, vcut = cli_partition(g, tmp_path)
    res = vcut(path, "--grains", "0.5", "--json")
    assert res.returncode == 0, res.stderr
    doc = json.loads(res.stdout)
    ref = partition_graph(g, 3, "par", options={"latency": 5.0, "grains": 0.5}).info
    assert doc["grains"] == ref["grains"] > 0 and doc["grain_share"] == 0.5
    assert doc["grain_vertices"] == ref["grain_vertices"]
    assert doc["model_makespan"] == ref["model_makespan"]
    bad = vcut(path, "--grains", "2")
    assert bad.returncode == 2
    assert bad.stderr.strip() == "error: the grain share must be between 0 (off) and 1, got 2.0"
    edges = tmp_path / "g.edgelist"  # no instructions in an edge list
    edges.write_text("".join(f"{a} {b} {w:g}\n" for a, b, w in zip(g.src, g.dst, g.weight)))
    bad = vcut(edges, "--grains", "0.5")
    assert bad.returncode == 2 and bad.stderr.strip().startswith("error: block runs need an IR")
