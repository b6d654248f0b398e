"""Borůvka's minimum spanning forest (runtime.mst) against hand cases, a literal Kruskal
and scipy, on the CPU and on the GPU kernels (the CUDA simulator without a GPU)."""

import json

import numpy as np
import pytest
from scipy.sparse import coo_matrix
from scipy.sparse.csgraph import connected_components, minimum_spanning_tree

from vcut_base.errors import InputError
from ir_graph import Graph
from runtime import config, gpu as runtime_gpu
from runtime.generators import erdos_renyi, grid, rmat
from runtime.mst import memory_bytes, minimum_spanning_forest
from tests.helpers import dataset, edge_graph


def kruskal(g):
    """Literal Kruskal: edges by (weight, position), union-find without tricks."""
    parent = list(range(g.n))

    def root(x):
        while parent[x] != x:
            x = parent[x]
        return x

    chosen = []
    for k in sorted(range(g.m), key=lambda k: (float(g.weight[k]), k)):
        a, b = root(int(g.src[k])), root(int(g.dst[k]))
        if a != b:
            parent[a] = b
            chosen.append(k)
    return sorted(chosen)


def scipy_weight(g):
    """scipy's forest weight; parallel edges reduced to their lightest first (scipy
    would add them), zero weights shifted (scipy takes a zero as no edge)."""
    keep = g.src != g.dst
    u, v, w = g.src[keep], g.dst[keep], g.weight[keep] + 1.0
    best = {}
    for a, b, x in zip(u.tolist(), v.tolist(), w.tolist()):
        key = (min(a, b), max(a, b))
        best[key] = min(best.get(key, np.inf), x)
    if not best:
        return 0.0, g.n
    a, b = zip(*best.keys())
    m = coo_matrix((list(best.values()), (a, b)), shape=(g.n, g.n)).tocsr()
    trees = connected_components(m, directed=False)[0]
    return float(minimum_spanning_tree(m).sum()) - (g.n - trees), trees


def check(g, device="cpu"):
    f = minimum_spanning_forest(g, device)
    assert f.edges.tolist() == kruskal(g)
    assert f.components == g.n - len(f.edges)
    # the labels: one representative per tree, shared exactly by the tree's vertices
    reps = np.unique(f.component)
    assert len(reps) == f.components and np.all(f.component[reps] == reps)
    assert np.all(f.component[g.src[f.edges]] == f.component[g.dst[f.edges]])
    return f


# -- hand cases ---------------------------------------------------------------------------
def test_triangle_and_square_by_hand():
    # triangle 0-1 (3), 1-2 (1), 0-2 (2): the forest is 1-2 and 0-2, weight 3
    f = check(edge_graph(3, [(0, 1), (1, 2), (0, 2)], [3, 1, 2]))
    assert f.edges.tolist() == [1, 2] and f.weight == 3.0 and f.components == 1
    # a unit-weight square: ties by position, so the first three edges
    f = check(edge_graph(4, [(0, 1), (1, 2), (2, 3), (3, 0)]))
    assert f.edges.tolist() == [0, 1, 2] and f.weight == 3.0


def test_a_path_of_rising_weights_hooks_one_long_chain():
    # every vertex's lightest edge points left: round 1 hooks a chain of n - 1 roots onto
    # vertex 0 (0 and 1 chose the same edge: the smaller stays root); round 2 finds no
    # crossing edge left
    n = 200
    f = check(edge_graph(n, [(i, i + 1) for i in range(n - 1)], list(range(n - 1))))
    assert f.edges.tolist() == list(range(n - 1)) and f.rounds == 2
    assert f.weight == sum(range(n - 1)) and np.all(f.component == f.component[0])


def test_forests_loops_parallel_edges_and_direction():
    # trees {0, 1, 2}, {3, 4} and the isolated 5; a self-loop (0, 0) and a parallel 3-4
    g = edge_graph(6, [(0, 0), (0, 1), (1, 2), (2, 0), (3, 4), (4, 3)], [0.5, 4, 5, 6, 9, 2])
    f = check(g)
    assert f.edges.tolist() == [1, 2, 5] and f.weight == 11.0 and f.components == 3
    assert f.component[5] == 5 and f.component[0] == f.component[1] == f.component[2]
    assert f.component[3] == f.component[4] != f.component[0]
    # a directed graph is taken as undirected (as scipy does)
    d = edge_graph(3, [(0, 1), (2, 1)], [1, 2], directed=True)
    assert check(d).edges.tolist() == [0, 1]


def test_empty_and_edgeless_graphs():
    f = check(edge_graph(0, []))
    assert f.components == 0 and f.weight == 0.0 and f.rounds == 0 and len(f.component) == 0
    f = check(edge_graph(3, [(1, 1)]))
    assert f.components == 3 and f.component.tolist() == [0, 1, 2] and len(f.edges) == 0


# -- generated and real graphs ------------------------------------------------------------
@pytest.mark.parametrize("make", [
    lambda: grid(15, 20, weights="uniform", seed=3),
    lambda: rmat(10, 6, weights="uniform", seed=4),
    lambda: erdos_renyi(600, 900, weights="uniform", seed=5),  # a forest of many trees
    lambda: rmat(9, 4, seed=6),  # unit weights: ties everywhere
])
def test_generated_graphs_against_kruskal_and_scipy(make):
    g = make()
    f = check(g)
    weight, trees = scipy_weight(g)
    assert f.weight == pytest.approx(weight, rel=1e-12) and f.components == trees


def test_random_weighted_multigraphs():
    rng = np.random.default_rng(7)
    for trial in range(20):
        n = int(rng.integers(1, 40))
        m = int(rng.integers(0, 120))
        g = Graph(n=n, src=rng.integers(0, n, m), dst=rng.integers(0, n, m),
                  weight=rng.integers(0, 6, m).astype(float))  # few values: many ties
        f = check(g)
        weight, trees = scipy_weight(g)
        assert f.weight == pytest.approx(weight, abs=1e-9) and f.components == trees


def test_a_road_graph():
    from ir_graph import read_graph

    g = read_graph(dataset("luxembourg_osm.mtx.gz"))
    rng = np.random.default_rng(1)
    g = Graph(n=g.n, src=g.src, dst=g.dst, weight=rng.integers(1, 101, g.m).astype(float))
    f = minimum_spanning_forest(g)
    weight, trees = scipy_weight(g)
    assert f.weight == weight and f.components == trees == 1
    assert len(f.edges) == g.n - 1 and f.info["edges_examined"] >= g.m


# -- bad input ----------------------------------------------------------------------------
def test_bad_input(monkeypatch):
    with pytest.raises(InputError, match="edge 1 has weight nan: a spanning forest needs finite"):
        minimum_spanning_forest(edge_graph(3, [(0, 1), (1, 2)], [1, np.nan]))
    from vcut_base.errors import GraphFormatError

    with pytest.raises(GraphFormatError, match="out of range|dst"):
        minimum_spanning_forest(edge_graph(3, [(0, 1), (1, 7)]))
    with pytest.raises(InputError, match="unknown device 'tpu'"):
        minimum_spanning_forest(edge_graph(2, [(0, 1)]), "tpu")
    g = grid(4, 4)
    monkeypatch.setattr(config, "DEVICE_MEMORY", 100)
    need = memory_bytes(g.n, g.m)
    with pytest.raises(InputError, match=rf"needs about {need / 1024:,.1f} KiB of GPU memory but "
                                         r"100 bytes are free; use --device cpu"):
        minimum_spanning_forest(g, "gpu")
    import vcut_base.memory

    # above what validating the graph needs (64 bytes a node), below the forest's 2,016 bytes
    monkeypatch.setattr(vcut_base.memory, "available_bytes", lambda: 1500)
    with pytest.raises(InputError, match="a spanning forest of 16 vertices and 24 edges needs about "
                                         "2.0 KiB of memory but 1.5 KiB are available; use a machine "
                                         "with more memory"):
        minimum_spanning_forest(g, "cpu")


def test_memory_estimate_uses_narrow_indices_where_they_fit():
    # 4-byte indices: 6m x 4 + 9m + 8(n + 1) + n (4 + 64)
    assert memory_bytes(10, 20) == 6 * 20 * 4 + 9 * 20 + 8 * 11 + 10 * 68
    big = 2**31
    assert memory_bytes(big, 1) == 6 * 8 + 9 + 8 * (big + 1) + big * 72


# -- the command line ---------------------------------------------------------------------
def test_cli(tmp_path, capsys, monkeypatch):
    from vcut.cli import main

    el = tmp_path / "g.edgelist"
    el.write_text("10 20 3\n20 30 1\n10 30 2\n40 50 7\n")  # ids as in the file
    out = tmp_path / "forest.txt"
    assert main(["mst", str(el), "-o", str(out), "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    assert (res["weight"], res["edges"], res["components"], res["device"]) == (10.0, 3, 2, "cpu")
    assert out.read_text() == "20 30 1\n10 30 2\n40 50 7\n"
    assert main(["mst", str(el)]) == 0
    text = capsys.readouterr().out
    assert "total weight    10" in text and "forest edges    3 of 4" in text
    neg = tmp_path / "neg.edgelist"
    neg.write_text("0 1 -2\n")
    assert main(["mst", str(neg)]) == 10
    assert capsys.readouterr().err.strip() == f"error: {neg}:1: edge weight -2 is negative"
    assert main(["mst", str(el), "-o", str(el)]) == 9  # never over an input
    assert "vcut never overwrites its inputs" in capsys.readouterr().err
    assert el.read_text().startswith("10 20 3")
    monkeypatch.setattr(runtime_gpu, "_device_present", lambda: False)
    assert main(["mst", str(el), "--device", "gpu"]) == 2
    assert capsys.readouterr().err.strip() == (
        "error: --device gpu: no CUDA GPU is available here (numba.cuda found none); "
        "use --device cpu, or --device auto to fall back to the CPU")
    assert main(["mst", str(el), "--device", "auto", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["device"] == "cpu"


# -- the GPU kernels ----------------------------------------------------------------------
@pytest.mark.parametrize("make", [
    lambda: grid(9, 11, weights="uniform", seed=3),
    lambda: rmat(7, 6, weights="uniform", seed=4),
    lambda: erdos_renyi(120, 150, weights="uniform", seed=5),
    lambda: edge_graph(60, [(i, i + 1) for i in range(59)], list(range(59))),
])
def test_gpu_twin(small_launches, make):
    g = make()
    c = minimum_spanning_forest(g, "cpu")
    f = check(g, "gpu")
    assert f.device == "gpu" and f.rounds == c.rounds
    assert np.array_equal(f.component, c.component) and f.weight == c.weight
    assert f.info["edges_examined"] == c.info["edges_examined"]
    # one host synchronisation per round; five launches a round (four once no vertex is
    # active) and the labels
    assert f.info["host_syncs"] == f.rounds
    assert 4 * f.rounds + 1 <= f.info["launches"] <= 5 * f.rounds + 1
