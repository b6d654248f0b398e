"""Every strategy agrees with scipy / networkx on graphs of several shapes."""

import json

import networkx as nx
import numpy as np
import pytest

from vcut_base.errors import InputError, VcutError
from ir_graph import Graph
from runtime import traversal_kernels as K
from runtime.generators import erdos_renyi, grid, rmat
from runtime.traversal import STRATEGIES, bfs, csr_out, sssp
from tests.helpers import dataset, shortest_distances, two_components


GRAPHS = {
    "rmat": lambda: rmat(9, 8, seed=2, weights="uniform"),
    "grid": lambda: grid(12, 17, seed=3, weights="uniform"),
    "er": lambda: erdos_renyi(400, 1600, seed=4, weights="uniform"),
    "disconnected": two_components,
    "single": lambda: Graph(n=1, src=np.zeros(0, np.int32), dst=np.zeros(0, np.int32), weight=np.zeros(0)),
}


@pytest.mark.parametrize("name", list(GRAPHS))
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_strategies_match_scipy(name, strategy):
    g = GRAPHS[name]()
    for source in sorted({0, g.n // 2, g.n - 1}):
        got = sssp(g, source, strategy)
        assert np.array_equal(np.isinf(got.dist), np.isinf(shortest_distances(g, source, False)))
        assert np.allclose(got.dist, shortest_distances(g, source, False))
        hops = bfs(g, source, strategy)
        assert np.array_equal(hops.dist, shortest_distances(g, source, True))


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_zero_weight_edges_and_directed_graphs(strategy):
    # 0 -0-> 1 -0-> 2 -5-> 3, 0 -7-> 3, and 4 -> 0 (4 unreachable from 0 when directed)
    g = Graph(n=5, src=np.array([0, 1, 2, 0, 4]), dst=np.array([1, 2, 3, 3, 0]),
              weight=np.array([0.0, 0.0, 5.0, 7.0, 1.0]), directed=True)
    nxg = nx.DiGraph()
    nxg.add_weighted_edges_from(zip(g.src.tolist(), g.dst.tolist(), g.weight.tolist()))
    ref = nx.single_source_dijkstra_path_length(nxg, 0)
    got = sssp(g, 0, strategy).dist
    assert got.tolist() == [ref.get(v, np.inf) for v in range(5)] == [0, 0, 0, 5, np.inf]
    assert sssp(g, 0, strategy, directed=False).dist[4] == 1.0


def test_mdt_rule_and_node_splitting_by_hand():
    # degrees 1..10 once each and many nodes of degree 2: bins of width 1, the tallest is bin 2
    deg = np.array(list(range(1, 11)) + [2] * 50)
    assert K.choose_mdt(deg, 10) == (2 * 10) // 10
    # max degree 1181 with most vertices small (an rmat20-like shape): bin 1 -> 118
    assert K.choose_mdt(np.array([3] * 100 + [1181]), 10) == 118
    # a road-like graph, max degree 6, mostly degree 2: bin ceil(20 / 6) = 4 -> floor(4 * 6 / 10) = 2
    assert K.choose_mdt(np.array([2] * 50 + [3] * 20 + [6]), 10) == 2
    # a star with 7 out-edges split with mdt = 3: parent keeps 3, children take 3 and 1
    g = Graph(n=8, src=np.zeros(7, np.int32), dst=np.arange(1, 8, dtype=np.int32),
              weight=np.arange(1.0, 8.0), directed=True)
    ip, ix, w = csr_out(g)
    ip2, ix2, w2, cptr, ch = K.split_nodes(ip, ix, w, 3)
    assert cptr.tolist() == [0, 2, 2, 2, 2, 2, 2, 2, 2] and ch.tolist() == [8, 9]
    assert np.diff(ip2).tolist() == [3, 0, 0, 0, 0, 0, 0, 0, 3, 1]
    assert ix2.tolist() == ix.tolist() and w2.tolist() == w.tolist()  # edges dealt in order


def test_work_counters():
    g = grid(10, 10)
    ep = sssp(g, 0, "ep")
    nochunk = sssp(g, 0, "ep-nochunk")
    assert ep.info["reservations"] < nochunk.info["reservations"]  # chunking saves atomics
    ns = sssp(rmat(10, 8, seed=5), 0, "ns")
    assert ns.info["mdt"] >= 1 and 0 < ns.info["fraction_split"] < 1
    assert sssp(g, 0, "wd").info["pieces"] > 0 and sssp(g, 0, "hp").info["sub_iterations"] > 0


def test_bad_input():
    g = grid(3, 3)
    with pytest.raises(InputError, match="source 9 out of range: the graph has vertices 0..8"):
        sssp(g, 9)
    neg = Graph(n=2, src=np.array([0]), dst=np.array([1]), weight=np.array([-2.0]))
    with pytest.raises(InputError) as exc:
        sssp(neg, 0)
    assert str(exc.value) == ("SSSP needs non-negative weights (Dijkstra-style relaxation), but edge 0 "
                              "weighs -2.0")
    assert bfs(Graph(n=2, src=np.array([0]), dst=np.array([1]), weight=np.array([1.0])), 0).dist.tolist() == [0, 1]
    with pytest.raises(InputError, match="unknown strategy 'dfs'"):
        sssp(g, 0, "dfs")
    with pytest.raises(InputError, match="unknown device 'tpu'"):
        sssp(g, 0, device="tpu")


def test_cli_writes_distances_and_json(tmp_path, capsys):
    import json

    from ir_graph import write_graph
    from vcut.cli import main

    g = grid(4, 4, weights="uniform", seed=7)
    path = tmp_path / "g.npz"
    write_graph(g, path)
    out = tmp_path / "d.txt"
    assert main(["sssp", str(path), "--source", "5", "--strategy", "ns", "-o", str(out), "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert res["strategy"] == "ns" and res["reached"] == 16 and "mdt" in res and res["memory_bytes"] > 0
    rows = [line.split() for line in out.read_text().splitlines()]
    assert [int(v) for v, _ in rows] == list(range(16))  # a .npz keeps vcut's 0-based ids
    assert [float(d) for _, d in rows] == shortest_distances(g, 5, False).tolist()
    assert main(["bfs", str(path), "--source", "99"]) == 2
    assert ("error: vertex 99 is not in the graph (its ids: 0..15); give one of the file's own "
            "vertex ids") in capsys.readouterr().err


def test_cli_source_and_output_use_the_files_own_ids(tmp_path, capsys):
    from vcut.cli import main

    # an edge list with ids 10, 20, 30, 40 (renumbered inside to 0..3)
    el = tmp_path / "g.edgelist"
    el.write_text("10 20\n20 30\n40 10\n")
    out = tmp_path / "d.txt"
    assert main(["bfs", str(el), "--source", "30", "-o", str(out)]) == 0
    assert out.read_text() == "10 2\n20 1\n30 0\n40 3\n"
    assert main(["bfs", str(el), "--source", "3"]) == 2
    assert "vertex 3 is not in the graph (its ids: 10..40, not all of them)" in capsys.readouterr().err
    # METIS numbers vertices from 1: vertex 1 is the first line
    metis = tmp_path / "g.graph"
    metis.write_text("3 2\n2\n1 3\n2\n")
    assert main(["bfs", str(metis), "--source", "1", "-o", str(out)]) == 0
    assert out.read_text() == "1 0\n2 1\n3 2\n"


# -- direction-optimising BFS ------------------------------------------------------
@pytest.mark.parametrize("name", list(GRAPHS))
def test_direction_optimising_bfs_matches_scipy(name):
    g = GRAPHS[name]()
    for source in sorted({0, g.n // 2, g.n - 1}):
        assert np.array_equal(bfs(g, source, "do").dist, shortest_distances(g, source, True))
        assert np.array_equal(bfs(g, source, "do", directed=True).dist,
                              shortest_distances(g, source, True, directed=True))


def test_direction_optimising_bfs_on_a_star_by_hand():
    # hub 0 with 1000 leaves: step 0 has 1000 frontier edges > 1000 unexplored / 14, so it
    # goes bottom-up: each leaf finds the hub at its first in-edge (1000 edges examined);
    # step 1 (frontier 1000 >= n / 24) stays bottom-up and finds no one unvisited
    leaves = np.arange(1, 1001)
    g = Graph(n=1001, src=np.zeros(1000, np.int64), dst=leaves, weight=np.ones(1000))
    r = bfs(g, 0, "do")
    assert r.dist.tolist() == [0.0] + [1.0] * 1000
    assert (r.edges_relaxed, r.info["bottom_up_steps"], r.iterations) == (1000, 2, 2)
    # top-down all the way examines every edge both ways
    assert bfs(g, 0, "bs").edges_relaxed == 2000
    # from a leaf: top-down to the hub (1 edge), bottom-up from there
    r = bfs(g, 5, "do")
    assert r.dist[0] == 1 and r.dist[5] == 0 and (r.dist[leaves[leaves != 5]] == 2).all()


def test_direction_optimising_parallel_steps_equal_serial():
    g = rmat(12, 8, seed=9)
    ip, ix, _ = csr_out(g, True)
    rip, rix, _ = K.out_csr(g.dst.astype(np.int64), g.src.astype(np.int64), np.zeros(g.m), g.n,
                            False)
    source = int(np.argmax(np.diff(ip)))
    one, many = np.empty(g.n, np.int64), np.empty(g.n, np.int64)
    a = K.bfs_do(ip, ix, rip, rix, source, one, 14.0, 24.0, 1)
    b = K.bfs_do(ip, ix, rip, rix, source, many, 14.0, 24.0, 7)
    assert np.array_equal(one, many) and a == b and a[2] >= 1


@pytest.mark.parametrize("run, strategy, other", [(bfs, "do", sssp), (sssp, "delta", bfs)])
def test_do_and_delta_bad_input_and_cli(capsys, run, strategy, other):
    from vcut.cli import main

    g = grid(3, 3, weights="uniform", seed=1)
    with pytest.raises(InputError, match=f"unknown strategy '{strategy}'"):
        other(g, 0, strategy)  # a BFS strategy is not an SSSP one, and back
    with pytest.raises(InputError, match="source 9 out of range"):
        run(g, 9, strategy)
    path = dataset("3elt.graph.gz")
    kind, wrong = ("bfs", "sssp") if run is bfs else ("sssp", "bfs")
    assert main([wrong, path, "--source", "1", "--strategy", strategy]) == 2
    assert f"invalid choice: '{strategy}'" in capsys.readouterr().err
    assert main([kind, path, "--source", "1", "--strategy", strategy, "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["strategy"] == strategy and doc["reached"] == 4720


def test_cpu_auto_bfs_is_direction_optimising_except_on_roads():
    star = Graph(n=20, src=np.zeros(19, np.int64), dst=np.arange(1, 20), weight=np.ones(19))
    r = bfs(star, 0, "auto")
    assert r.strategy == "do" and r.info["auto"] and r.dist.tolist() == [0.0] + [1.0] * 19
    road = grid(6, 7)  # largest degree 4
    r = bfs(road, 0, "auto")
    assert r.strategy == "bs" and r.info["auto"]
    assert np.array_equal(r.dist, shortest_distances(road, 0, True))


# -- delta-stepping SSSP -------------------------------------------------------------
@pytest.mark.parametrize("name", list(GRAPHS))
def test_delta_stepping_matches_scipy(name):
    g = GRAPHS[name]()
    for source in sorted({0, g.n // 2, g.n - 1}):
        want = shortest_distances(g, source, False)
        for delta in (None, 0.05, 1e9):  # default, narrow buckets, one bucket
            got = sssp(g, source, "delta", delta=delta).dist
            assert np.array_equal(np.isinf(got), np.isinf(want)) and np.allclose(got, want)
        got = sssp(g, source, "delta", directed=True).dist
        assert np.allclose(got, shortest_distances(g, source, False, directed=True))


def test_delta_stepping_by_hand():
    # path 0 -1- 1 -1- 2 -1- 3 with delta 1: one bucket per vertex, three threshold moves;
    # edges examined: 1 (from 0) + 2 + 2 + 1 (from 3)
    g = Graph(n=4, src=np.array([0, 1, 2]), dst=np.array([1, 2, 3]), weight=np.ones(3))
    r = sssp(g, 0, "delta", delta=1.0)
    assert r.dist.tolist() == [0, 1, 2, 3]
    assert (r.iterations, r.edges_relaxed, r.info["threshold_moves"]) == (4, 6, 3)
    # zero weights and a far vertex improved before its bucket: 0 -5-> 3 first, then 0-0-1-0-2-1-3
    g = Graph(n=4, src=np.array([0, 0, 1, 2]), dst=np.array([3, 1, 2, 3]),
              weight=np.array([5.0, 0.0, 0.0, 1.0]), directed=True)
    assert sssp(g, 0, "delta", delta=2.0).dist.tolist() == [0, 0, 0, 1]


def test_delta_stepping_bad_width(capsys):
    from vcut.cli import main

    g = grid(3, 3, weights="uniform", seed=1)
    for bad in (0, -1.0, float("nan"), "x"):
        with pytest.raises(InputError, match="the bucket width must be a positive number"):
            sssp(g, 0, "delta", delta=bad)
    path = dataset("3elt.graph.gz")
    assert main(["sssp", path, "--source", "1", "--delta", "2"]) == 2
    assert "--delta is the bucket width of --strategy delta" in capsys.readouterr().err
    assert main(["sssp", path, "--source", "1", "--strategy", "delta", "--delta", "2",
                 "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["strategy"] == "delta" and doc["delta"] == 2.0 and doc["reached"] == 4720


def test_cpu_auto_sssp_is_delta_stepping_on_roads_only():
    road = grid(6, 7, weights="uniform", seed=2)
    r = sssp(road, 0, "auto")
    assert r.strategy == "delta" and r.info["auto"]
    assert np.allclose(r.dist, shortest_distances(road, 0, False))
    star = Graph(n=20, src=np.zeros(19, np.int64), dst=np.arange(1, 20), weight=np.ones(19))
    assert sssp(star, 0, "auto").strategy == "bs"
    assert bfs(road, 0, "auto").strategy == "bs"  # BFS keeps its own rule
