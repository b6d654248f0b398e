"""GPU kernels (numba.cuda) against the CPU references and scipy.

Without a GPU they run under numba's CUDA simulator (tests/conftest.py sets
NUMBA_ENABLE_CUDASIM=1 unless VCUT_REAL_GPU=1). Launch sizes are patched small so
that every multi-block path (block-aggregated pushes, the recursive scan, WD pieces
spanning blocks) runs on small graphs.
"""

import numpy as np
import pytest

from vcut_base.errors import VcutError
from ir_graph import Graph
from runtime import config, gpu as runtime_gpu, primitives, traversal, traversal_gpu
from runtime.generators import erdos_renyi, grid, rmat
from runtime.traversal import STRATEGIES, bfs, choose_strategy, format_bytes, memory_bytes, sssp
from tests.helpers import shortest_distances, two_components


@pytest.fixture(autouse=True)
def small_launches(small_launches, monkeypatch):
    monkeypatch.setattr(config, "SCAN_BLOCK", 8)
    monkeypatch.setattr(config, "RESIDENT_THREADS", 24)
    # the per-level kernels unless a test turns the device-resident loop on
    monkeypatch.setattr(config, "SMALL_FRONTIER", 0)
    monkeypatch.setattr(config, "BLOCK_FRONTIER", 0)
    monkeypatch.setattr(config, "BLOCK_THREADS", 16)


def test_scans():
    x = np.random.default_rng(1).integers(0, 50, size=100)  # 13 blocks of 8: a two-level scan
    assert np.array_equal(primitives.inclusive_scan(x, "gpu"), np.cumsum(x))
    assert np.array_equal(primitives.exclusive_scan(x, "gpu"), np.cumsum(x) - x)
    assert primitives.inclusive_scan([7], "gpu").tolist() == [7]


def test_histogram_and_mdt():
    deg = np.array([0, 1, 1, 2, 3, 10, 10, 10, 4, 1])
    # maxdeg 10, 10 bins of width 1: d -> bin d
    hist, maxd = primitives.degree_histogram(deg, 10, "gpu")
    assert maxd == 10 and hist.tolist() == [0, 3, 1, 1, 1, 0, 0, 0, 0, 0, 3]
    assert np.array_equal(hist, primitives.degree_histogram(deg, 10, "cpu")[0])
    assert primitives.choose_mdt(deg, 10, "gpu") == primitives.choose_mdt(deg, 10, "cpu") == 1  # bin 1 first
    skew = rmat(8, 8, seed=3).degrees()
    assert primitives.choose_mdt(skew, 10, "gpu") == primitives.choose_mdt(skew, 10, "cpu")


def test_wd_offsets_by_hand():
    # worklist degrees 3, 0, 5, 2 -> inclusive scan 3, 3, 8, 10; 4 threads -> 3 edges each
    scan = np.array([3, 3, 8, 10])
    for device in ("cpu", "gpu"):
        per, node_of, edge_of = primitives.wd_offsets(scan, 4, device)
        assert per == 3
        # thread 0: edge 0 = node 0 offset 0; thread 1: edge 3 = node 2 offset 0;
        # thread 2: edge 6 = node 2 offset 3; thread 3: edge 9 = node 3 offset 1
        assert node_of.tolist() == [0, 2, 2, 3] and edge_of.tolist() == [0, 0, 3, 1]
    per, node_of, _ = primitives.wd_offsets(scan, 8, "gpu")  # starts 0, 2, 4, 6, 8
    assert per == 2 and node_of.tolist() == [0, 0, 2, 2, 3, -1, -1, -1]


def test_segmented_reduce():
    values = np.array([5.0, 2.0, 7.0, 1.0, 4.0])
    ptr = np.array([0, 3, 3, 5])  # segments [5, 2, 7], [], [1, 4]
    for device in ("cpu", "gpu"):
        assert primitives.segmented_reduce(values, ptr, "min", device).tolist() == [2.0, np.inf, 1.0]
        assert primitives.segmented_reduce(values, ptr, "sum", device).tolist() == [14.0, 0.0, 5.0]


SMALL = {
    "rmat": lambda: rmat(6, 4, seed=1, weights="uniform"),
    "grid": lambda: grid(5, 6, seed=2, weights="uniform"),
    "er": lambda: erdos_renyi(50, 120, seed=3, weights="uniform"),
    "disconnected": two_components,
    "single": lambda: Graph(n=1, src=np.zeros(0, np.int32), dst=np.zeros(0, np.int32),
                            weight=np.zeros(0)),
}


@pytest.mark.parametrize("name", list(SMALL))
@pytest.mark.parametrize("strategy", STRATEGIES)
def test_gpu_strategies_match_scipy(name, strategy):
    g = SMALL[name]()
    source = int(np.argmax(g.degrees())) if g.m else 0
    got = sssp(g, source, strategy, device="gpu")
    assert got.device == "gpu" and got.strategy == strategy
    assert np.allclose(got.dist, shortest_distances(g, source, False))
    assert np.array_equal(np.isinf(got.dist), np.isinf(shortest_distances(g, source, False)))
    hops = bfs(g, source, strategy, device="gpu")
    assert np.array_equal(hops.dist, shortest_distances(g, source, True))
    assert got.info["kernel_seconds"] >= 0 and got.info["overhead_seconds"] >= 0


@pytest.mark.parametrize("strategy", STRATEGIES)
def test_gpu_zero_weights_directed(strategy):
    g = Graph(n=5, src=np.array([0, 1, 2, 0, 4]), dst=np.array([1, 2, 3, 3, 0]),
              weight=np.array([0.0, 0.0, 5.0, 7.0, 1.0]), directed=True)
    assert sssp(g, 0, strategy, device="gpu").dist.tolist() == [0, 0, 0, 5, np.inf]


def test_gpu_counters_match_the_cpu_where_they_are_deterministic():
    g = grid(5, 6, seed=2, weights="uniform")
    # EP's reservations: one per pushing node with chunking, one per edge without
    a = sssp(g, 0, "ep", device="gpu")
    b = sssp(g, 0, "ep-nochunk", device="gpu")
    assert 0 < a.info["reservations"] < b.info["reservations"]
    ns = sssp(g, 0, "ns", device="gpu")
    assert ns.info["mdt"] == primitives.choose_mdt(np.diff(_csr(g)[0]), 10)


def _csr(g):
    from runtime.traversal import csr_out

    return csr_out(g)


def test_device_memory_refusal(monkeypatch):
    g = grid(5, 6, seed=2, weights="uniform")
    n, m2 = g.n, 2 * g.m
    need = memory_bytes(n, m2, "ep")
    monkeypatch.setattr(config, "DEVICE_MEMORY", memory_bytes(n, m2, "bs"))
    with pytest.raises(VcutError) as exc:
        sssp(g, 0, "ep", device="gpu")
    msg = str(exc.value)
    assert f"the ep traversal needs {format_bytes(need)} of device memory" in msg
    assert f"--strategy bs needs {format_bytes(memory_bytes(n, m2, 'bs'))}" in msg
    assert format_bytes(need) == f"{need / 1024:,.1f} KiB"
    # auto picks what fits: with the delta threshold lowered to this grid, delta is its choice
    # (a grid is not skewed) but needs more memory than BS, which fits
    monkeypatch.setattr(traversal, "GPU_DELTA_MIN_NODES", n)
    assert memory_bytes(n, m2, "delta") > memory_bytes(n, m2, "bs")
    assert sssp(g, 0, "auto", device="gpu").strategy == "bs"
    monkeypatch.setattr(config, "DEVICE_MEMORY", memory_bytes(n, m2, "delta"))
    r = sssp(g, 0, "auto", device="gpu")
    assert r.strategy == "delta" and r.dist.tolist() == shortest_distances(g, 0, False).tolist()
    monkeypatch.setattr(traversal, "GPU_DELTA_MIN_NODES", n + 1)  # one vertex short of it
    assert sssp(g, 0, "auto", device="gpu").strategy == "bs"
    monkeypatch.setattr(config, "DEVICE_MEMORY", 10)
    with pytest.raises(VcutError, match="use --device cpu"):
        sssp(g, 0, "bs", device="gpu")


def test_auto_rule():
    n, m2 = 1000, 8000  # mean degree 8: skewed above 32 x 8 = 256
    for kind in ("bfs", "sssp"):  # the CPU: bs, do for BFS off roads, delta for SSSP on roads
        assert choose_strategy(n, m2, 4, "cpu", kind=kind) == ("bs" if kind == "bfs" else "delta")
        assert choose_strategy(n, m2, 9, "cpu", kind=kind) == ("do" if kind == "bfs" else "bs")
    # BFS's road test reads in + out degree when given
    assert choose_strategy(n, m2, 4, "cpu", kind="bfs", road_degree=9) == "do"
    assert choose_strategy(n, m2, 4, "cpu", kind="sssp", road_degree=9) == "delta"
    # the GPU below both thresholds: bs whatever the degrees (the resident loop beat ns, do and
    # delta on every graph of up to 2^20 vertices and 16 M edges but the large grid and ER)
    for degree in (4, 9, 256, 257, 500):
        for kind in ("bfs", "sssp"):
            assert choose_strategy(n, m2, degree, "gpu", 10**12, kind) == "bs"
    # BFS off roads from GPU_DO_MIN_EDGES directed edges: do; on roads: bs
    big_m2 = traversal.GPU_DO_MIN_EDGES
    n2 = big_m2 // 16
    assert choose_strategy(n2, big_m2, 9, "gpu", 10**12, "bfs") == "do"
    assert choose_strategy(n2, big_m2 - 1, 9, "gpu", 10**12, "bfs") == "bs"
    assert choose_strategy(n2, big_m2, 8, "gpu", 10**12, "bfs") == "bs"
    assert choose_strategy(n2, big_m2, 8, "gpu", 10**12, "bfs", road_degree=9) == "do"
    # SSSP from GPU_DELTA_MIN_NODES vertices on graphs that are not skewed: delta
    n3 = traversal.GPU_DELTA_MIN_NODES
    m3 = 8 * n3  # mean degree 8: skewed above 256
    assert choose_strategy(n3, m3, 256, "gpu", 10**12, "sssp") == "delta"
    assert choose_strategy(n3, m3, 257, "gpu", 10**12, "sssp") == "bs"  # RMAT-like hubs
    assert choose_strategy(n3 - 1, m3, 4, "gpu", 10**12, "sssp") == "bs"  # the small road
    # a choice that does not fit falls back to bs, the leanest
    assert memory_bytes(n, m2, "bs") == min(memory_bytes(n, m2, s) for s in STRATEGIES)
    for kind, choice, args in (("sssp", "delta", (n3, m3, 4)), ("bfs", "do", (n2, big_m2, 9))):
        need = memory_bytes(*args[:2], choice)
        assert choose_strategy(*args, "gpu", need, kind) == choice
        assert choose_strategy(*args, "gpu", need - 1, kind) == "bs"
    with pytest.raises(ValueError, match="kind must be"):
        choose_strategy(n, m2, 4, "gpu", kind="mst")


def test_gpu_absent(monkeypatch):
    monkeypatch.setattr(runtime_gpu, "_device_present", lambda: False)
    g = grid(3, 3)
    with pytest.raises(VcutError, match="no CUDA GPU is available here.*--device auto"):
        sssp(g, 0, device="gpu")
    r = sssp(g, 0, "auto", device="auto")
    # the CPU's auto SSSP on a grid (largest degree 4: road-like) is delta-stepping
    assert r.device == "cpu" and r.strategy == "delta" and r.info["auto"]


def test_cli_gpu_and_auto(tmp_path, capsys):
    import json

    from ir_graph import write_graph
    from vcut.cli import main

    g = grid(4, 4, weights="uniform", seed=7)
    path = tmp_path / "g.npz"
    write_graph(g, path)
    out = tmp_path / "d.txt"
    assert main(["sssp", str(path), "--source", "5", "--strategy", "auto", "--device", "gpu",
                 "-o", str(out), "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    # a small grid: bs in the device-resident loop (delta on the GPU only from 2^19 vertices)
    assert res["device"] == "gpu" and res["strategy"] == "bs" and res["auto"] is True
    assert res["overhead_seconds"] >= 0 and res["reached"] == 16
    dist = [float(line.split()[1]) for line in out.read_text().splitlines()]
    assert dist == shortest_distances(g, 5, False).tolist()
    assert main(["bfs", str(path), "--source", "5", "--strategy", "wd", "--device", "gpu"]) == 0
    out = capsys.readouterr().out  # the summary is the command's result: stdout
    assert "wd on gpu" in out and "kernels +" in out


def test_cli_bad_inputs_exit_codes(tmp_path, capsys, monkeypatch):
    from ir_graph import write_graph
    from vcut.cli import main

    neg = tmp_path / "neg.npz"
    write_graph(Graph(n=2, src=np.array([0]), dst=np.array([1]), weight=np.array([-2.0])), neg)
    # graph files refuse negative weights when read (the API's SSSP check is in test_traversal)
    assert main(["sssp", str(neg), "--source", "0"]) == 10
    assert capsys.readouterr().err.strip() == f"error: {neg}: edge weight -2.0 at index 0 is negative"
    g = tmp_path / "g.npz"
    write_graph(grid(5, 6, seed=2, weights="uniform"), g)
    monkeypatch.setattr(config, "DEVICE_MEMORY", 10)
    assert main(["sssp", str(g), "--source", "0", "--strategy", "ep", "--device", "gpu"]) == 2
    assert "error: the ep traversal needs" in capsys.readouterr().err
    monkeypatch.setattr(runtime_gpu, "_device_present", lambda: False)
    assert main(["bfs", str(g), "--source", "0", "--device", "gpu"]) == 2
    assert capsys.readouterr().err.strip() == (
        "error: --device gpu: no CUDA GPU is available here (numba.cuda found none); "
        "use --device cpu, or --device auto to fall back to the CPU")
    assert main(["bfs", str(g), "--source", "0", "--device", "auto"]) == 0  # falls back


# -- the device-resident loop for small frontiers ------------------------------------
@pytest.mark.parametrize("strategy", ["bs", "wd", "hp"])
def test_small_frontiers_stay_on_the_device(monkeypatch, strategy):
    monkeypatch.setattr(config, "SMALL_FRONTIER", 64)
    monkeypatch.setattr(config, "LEVELS_PER_LAUNCH", 16)
    n = 40  # a path: 40 levels of one node
    g = Graph(n=n, src=np.arange(n - 1), dst=np.arange(1, n), weight=np.ones(n - 1))
    r = bfs(g, 0, strategy, device="gpu")
    assert r.dist.tolist() == list(range(n)) and r.iterations == n
    # one launch and one host read per 16 levels: ceil(40 / 16) = 3
    assert r.info["host_syncs"] == r.info["level_launches"] == 3
    assert r.info["device_resident_levels"] == n


@pytest.mark.parametrize("strategy", ["bs", "wd", "hp"])
def test_frontiers_move_between_the_device_and_host_loops(monkeypatch, strategy):
    monkeypatch.setattr(config, "SMALL_FRONTIER", 5)
    g = grid(6, 7, seed=4, weights="uniform")  # frontiers grow past 5 and shrink again
    r = sssp(g, 0, strategy, device="gpu")
    assert np.allclose(r.dist, shortest_distances(g, 0, False))
    assert 0 < r.info["device_resident_levels"] < r.iterations
    assert r.info["host_syncs"] < r.iterations + (r.iterations if strategy != "bs" else 0)


def test_node_splitting_and_edge_worklists_read_back_every_level(monkeypatch):
    monkeypatch.setattr(config, "SMALL_FRONTIER", 64)
    n = 20
    g = Graph(n=n, src=np.arange(n - 1), dst=np.arange(1, n), weight=np.ones(n - 1))
    for strategy in ("ns", "ep"):
        r = bfs(g, 0, strategy, device="gpu")
        assert r.dist.tolist() == list(range(n))
        assert r.info["host_syncs"] == r.info["level_launches"] == r.iterations == n


def _one_block_grid(monkeypatch):
    """The grid tier on one block, as the simulator runs it, on a real card too (where
    the resident blocks are many): counts and group widths that depend on the grid's
    size are then the same on both."""
    monkeypatch.setattr(traversal_gpu, "cooperative_blocks", lambda *args: 1)


def _hub_graph():
    """A path 0-1-2, a hub 2 with 100 leaves, each leaf with a tail of two more nodes:
    303 nodes, 302 edges of weights 1..302."""
    src, dst = [0, 1], [1, 2]
    for i in range(100):
        leaf, t1, t2 = 3 + 3 * i, 4 + 3 * i, 5 + 3 * i
        src += [2, leaf, t1]
        dst += [leaf, t1, t2]
    return Graph(n=303, src=np.array(src), dst=np.array(dst),
                 weight=np.arange(1, len(src) + 1.0))


def test_resident_loop_shares_a_hub_among_a_warps_lanes(monkeypatch):
    """Blocks of whole warps: each frontier node's edges are shared by 32 lanes (the
    other tests run blocks of 8 threads, a thread per node)."""
    _one_block_grid(monkeypatch)
    monkeypatch.setattr(config, "THREADS_PER_BLOCK", 64)
    monkeypatch.setattr(config, "SMALL_FRONTIER", 1000)
    g = _hub_graph()
    src = g.src
    for kind, run in (("bfs", bfs), ("sssp", sssp)):
        r = run(g, 0, "bs", device="gpu")
        assert np.allclose(r.dist, shortest_distances(g, 0, kind == "bfs"))
        assert r.info["device_resident_levels"] == r.iterations  # every level on the device
        assert r.info["host_syncs"] == 1
    r = bfs(g, 0, "bs", device="gpu")
    assert r.iterations == 6 and r.edges_relaxed == 2 * len(src)  # each edge both ways, once
    # the hub's level has one node: its group widens from a warp to the grid's 64 threads
    assert r.info["widest_group"] == 64 and r.info["grid_launches"] == 1


def test_default_cap_keeps_frontiers_larger_than_the_grid_on_the_device(monkeypatch):
    """By default the resident loop keeps frontiers of up to `config.RESIDENT_FRONTIER`
    nodes, past one node per warp of its grid (the warps loop over them), and runs up to
    `config.LEVELS_PER_LAUNCH` levels a launch: a 9 x 12 grid from a corner is 20 levels
    with frontiers of up to 9 nodes, on the simulator's one-block grid of 8 threads (one
    node per thread: width 1); so one launch and one host read."""
    _one_block_grid(monkeypatch)
    monkeypatch.setattr(config, "SMALL_FRONTIER", None)
    monkeypatch.setattr(config, "LEVELS_PER_LAUNCH", 1024)
    monkeypatch.setattr(config, "RESIDENT_FRONTIER", 65536)
    g = grid(9, 12, seed=2, weights="uniform")
    for kind, run in (("bfs", bfs), ("sssp", sssp)):
        r = run(g, 0, "bs", device="gpu")
        assert np.allclose(r.dist, shortest_distances(g, 0, kind == "bfs"))
        assert r.info["device_resident_levels"] == r.iterations
        assert r.info["host_syncs"] == r.info["level_launches"] == 1
    assert bfs(g, 0, "bs", device="gpu").iterations == 9 + 12 - 1
    # the cap of one node per warp alone (RESIDENT_FRONTIER 0, the rule before): 8 threads
    # are no whole warp, so the cap is 1 node: the frontiers are 1, 2, ..., 9, ..., 2, 1
    # nodes, and only the first and the last level (one launch, one read each) stay on
    # the device; the 18 between are a host read each
    monkeypatch.setattr(config, "RESIDENT_FRONTIER", 0)
    r = bfs(g, 0, "bs", device="gpu")
    assert np.array_equal(r.dist, shortest_distances(g, 0, True))
    assert r.info["device_resident_levels"] == 2
    assert r.info["host_syncs"] == 2 + 18 and r.info["level_launches"] == 2 + 18


def test_block_tier_runs_small_frontiers_in_one_block(monkeypatch):
    """The one-block tier (`block_levels_kernel`): a 9 x 12 grid's mean degree is
    2 x 195 / 108 = 3.6, so groups of 4 lanes; 16 threads are 4 groups, and the tier
    keeps frontiers of up to 4 x 4 = 16 nodes. BFS from a corner has frontiers of at
    most 9 nodes: every one of its 20 levels runs in one launch of one block."""
    monkeypatch.setattr(config, "BLOCK_FRONTIER", None)
    monkeypatch.setattr(config, "SMALL_FRONTIER", None)
    g = grid(9, 12, seed=2, weights="uniform")
    assert traversal_gpu.block_tier(108, 2 * 195) == (16, 4, 16)
    r = bfs(g, 0, "bs", device="gpu")
    assert np.array_equal(r.dist, shortest_distances(g, 0, True)) and r.iterations == 20
    assert r.info["block_launches"] == 1 and r.info["grid_launches"] == 0
    assert r.info["host_syncs"] == 1 and r.info["device_resident_levels"] == 20
    assert r.edges_relaxed == 2 * 195  # each edge once from each end
    for strategy in ("bs", "wd", "hp"):  # SSSP: frontiers may outgrow the tier, then the grid
        r = sssp(g, 0, strategy, device="gpu")
        assert np.allclose(r.dist, shortest_distances(g, 0, False))
        assert r.info["block_launches"] >= 1
    # a path of 40 levels, 16 levels a launch: ceil(40 / 16) = 3 launches, all one block
    monkeypatch.setattr(config, "LEVELS_PER_LAUNCH", 16)
    n = 40
    path = Graph(n=n, src=np.arange(n - 1), dst=np.arange(1, n), weight=np.ones(n - 1))
    r = bfs(path, 0, "bs", device="gpu")
    assert r.dist.tolist() == list(range(n))
    assert r.info["block_launches"] == r.info["host_syncs"] == 3 and r.info["grid_launches"] == 0


def test_block_tier_hands_a_large_frontier_to_the_grid(monkeypatch):
    """A clique of 40 nodes with a tail of 10 from its node 39: 790 edges, mean degree
    2 x 790 / 50 = 31.6, so groups of 32 lanes; 64 threads are 2 groups and the tier's cap
    is 8 nodes. BFS from node 0: level 0 (1 node) runs in the block, level 1 has 39 nodes,
    past the cap, so the cooperative grid runs levels 1-11 (it leaves only when a frontier
    outgrows its own cap): two launches, two host reads, 12 levels on the device, every
    edge examined once from each end."""
    _one_block_grid(monkeypatch)
    monkeypatch.setattr(config, "BLOCK_FRONTIER", None)
    monkeypatch.setattr(config, "BLOCK_THREADS", 64)
    monkeypatch.setattr(config, "SMALL_FRONTIER", None)
    src = [a for a in range(40) for b in range(a + 1, 40)] + list(range(39, 49))
    dst = [b for a in range(40) for b in range(a + 1, 40)] + list(range(40, 50))
    g = Graph(n=50, src=np.array(src), dst=np.array(dst), weight=np.ones(len(src)))
    assert len(src) == 790 and traversal_gpu.block_tier(50, 2 * 790) == (64, 32, 8)
    r = bfs(g, 0, "bs", device="gpu")
    assert np.array_equal(r.dist, shortest_distances(g, 0, True)) and r.iterations == 12
    assert r.info["block_launches"] == 1 and r.info["grid_launches"] == 1
    assert r.info["host_syncs"] == 2 and r.info["device_resident_levels"] == 12
    assert r.edges_relaxed == 2 * 790
    assert r.info["widest_group"] == 64  # the source alone: the block on its row


def test_block_tier_widens_groups_for_a_hub(monkeypatch):
    """The hub graph of the grid's test (a path 0-1-2, hub 2 with 100 leaves, each leaf
    with a tail of two): mean degree 2 x 302 / 303 < 2, so groups of 2 lanes, 8 of them in
    16 threads; the tier's cap set to 1,000 keeps every level in one block. The hub's
    level has one node, so its group widens to the whole block: the same distances, each
    edge examined once from each end, one launch."""
    monkeypatch.setattr(config, "BLOCK_FRONTIER", 1000)
    g = _hub_graph()
    assert traversal_gpu.block_tier(303, 2 * 302) == (16, 2, 1000)
    for kind, run in (("bfs", bfs), ("sssp", sssp)):
        r = run(g, 0, "bs", device="gpu")
        assert np.allclose(r.dist, shortest_distances(g, 0, kind == "bfs"))
        assert r.info["block_launches"] == r.info["host_syncs"] == 1
        assert r.info["device_resident_levels"] == r.iterations
    r = bfs(g, 0, "bs", device="gpu")
    assert r.iterations == 6 and r.edges_relaxed == 2 * 302
    assert r.info["widest_group"] == 16  # the whole block on the hub's level
    monkeypatch.setattr(config, "BLOCK_THREADS", 12)  # no power of two: 8 of 12 threads
    r = bfs(g, 0, "bs", device="gpu")
    assert np.array_equal(r.dist, shortest_distances(g, 0, True)) and r.edges_relaxed == 2 * 302
    assert r.info["widest_group"] == 8


def test_block_tier_shape(monkeypatch):
    """Groups of the least power of two at or above the mean degree, at most 32 lanes
    and the block; 4 nodes a group; BLOCK_FRONTIER overrides, 0 turns the tier off."""
    monkeypatch.setattr(config, "BLOCK_THREADS", 1024)
    monkeypatch.setattr(config, "BLOCK_FRONTIER", None)
    assert traversal_gpu.block_tier(10, 20) == (1024, 2, 2048)    # mean degree 2
    assert traversal_gpu.block_tier(10, 25) == (1024, 4, 1024)    # 2.5 -> 4
    assert traversal_gpu.block_tier(10, 0) == (1024, 1, 4096)     # no edges
    assert traversal_gpu.block_tier(10, 1000) == (1024, 32, 128)  # 100 -> at most a warp
    monkeypatch.setattr(config, "BLOCK_THREADS", 16)
    assert traversal_gpu.block_tier(10, 1000) == (16, 16, 4)      # at most the block
    monkeypatch.setattr(config, "BLOCK_FRONTIER", 50)
    assert traversal_gpu.block_tier(10, 1000) == (16, 16, 50)
    monkeypatch.setattr(config, "BLOCK_FRONTIER", 0)
    assert traversal_gpu.block_tier(10, 1000) == (16, 16, -1)


def test_resident_cap_and_blocks(monkeypatch):
    """The cap: `config.SMALL_FRONTIER` where set, else the larger of one node per warp
    and `config.RESIDENT_FRONTIER`; the grid: the resident blocks, or fewer."""
    monkeypatch.setattr(config, "THREADS_PER_BLOCK", 256)
    monkeypatch.setattr(config, "SMALL_FRONTIER", None)
    monkeypatch.setattr(config, "RESIDENT_FRONTIER", 65536)
    assert traversal_gpu.resident_cap(264) == 65536          # 264 x 8 warps = 2,112 < 65,536
    assert traversal_gpu.resident_cap(10_000) == 80_000      # 10,000 x 8 warps
    monkeypatch.setattr(config, "RESIDENT_FRONTIER", 0)
    assert traversal_gpu.resident_cap(264) == 2112
    monkeypatch.setattr(config, "SMALL_FRONTIER", 77)
    assert traversal_gpu.resident_cap(264) == 77
    assert traversal_gpu.resident_blocks(264) == 264 and traversal_gpu.resident_blocks(0) == 0
    monkeypatch.setattr(config, "RESIDENT_BLOCKS", 8)
    assert traversal_gpu.resident_blocks(264) == 8 and traversal_gpu.resident_blocks(3) == 3
    assert traversal_gpu.resident_blocks(0) == 0             # no cooperative launch: stays none
    monkeypatch.setattr(config, "RESIDENT_BLOCKS", 0)
    assert traversal_gpu.resident_blocks(264) == 1


@pytest.mark.parametrize("tpb", [8, 64])
@pytest.mark.parametrize("directed", [False, True])
def test_direction_optimising_bfs_on_the_gpu(monkeypatch, tpb, directed):
    """DO on the device: the CPU twin's levels, the same switch rule (bottom-up
    steps on a dense random graph, none on a path), one host read per level."""
    monkeypatch.setattr(config, "THREADS_PER_BLOCK", tpb)
    g = erdos_renyi(300, 3000, seed=3)
    cpu = bfs(g, 0, "do", device="cpu", directed=directed)
    gpu = bfs(g, 0, "do", device="gpu", directed=directed)
    assert np.array_equal(gpu.dist, shortest_distances(g, 0, True, directed=directed))
    assert np.array_equal(gpu.dist, cpu.dist) and gpu.iterations == cpu.iterations
    assert gpu.info["bottom_up_steps"] == cpu.info["bottom_up_steps"] >= 1
    assert gpu.info["host_syncs"] == gpu.iterations
    n = 30
    path = Graph(n=n, src=np.arange(n - 1), dst=np.arange(1, n), weight=np.ones(n - 1))
    r = bfs(path, 0, "do", device="gpu")
    assert r.dist.tolist() == list(range(n)) and r.info["bottom_up_steps"] == 0
    assert r.edges_relaxed == 2 * (n - 1)  # top-down only: every edge examined once per side


def test_gpu_auto_bfs_is_direction_optimising_off_roads_on_large_graphs(monkeypatch):
    g = rmat(8, 8, seed=1)
    assert bfs(g, 0, "auto", device="gpu").strategy == "bs"  # below GPU_DO_MIN_EDGES
    monkeypatch.setattr(traversal, "GPU_DO_MIN_EDGES", 2 * g.m)  # as if this graph were large
    r = bfs(g, 0, "auto", device="gpu")
    assert r.strategy == "do" and r.info["auto"]
    assert r.dist.tolist() == bfs(g, 0, "bs").dist.tolist()
    assert bfs(grid(5, 5), 0, "auto", device="gpu").strategy == "bs"  # road-like


def test_without_cooperative_launches_every_level_runs_on_the_host(monkeypatch):
    """Where the grid barrier cannot be built (e.g. the CUDA toolkit lacks libcudadevrt),
    the traversal still runs, level by level from the host, and says why."""
    monkeypatch.setattr(config, "SMALL_FRONTIER", 64)

    def refuse(*args):
        raise RuntimeError("libcudadevrt.a not found")

    monkeypatch.setattr(traversal_gpu, "cooperative_blocks", refuse)
    n = 12
    g = Graph(n=n, src=np.arange(n - 1), dst=np.arange(1, n), weight=np.ones(n - 1))
    r = bfs(g, 0, "bs", device="gpu")
    assert r.dist.tolist() == list(range(n))
    assert r.info["device_resident_levels"] == 0 and r.info["host_syncs"] == n
    assert r.info["resident_error"] == "RuntimeError: libcudadevrt.a not found"
    # the one-block tier is a plain launch: the path's frontiers of one node still run there
    monkeypatch.setattr(config, "BLOCK_FRONTIER", None)
    r = bfs(g, 0, "bs", device="gpu")
    assert r.dist.tolist() == list(range(n))
    assert r.info["device_resident_levels"] == n and r.info["host_syncs"] == 1
    assert r.info["block_launches"] == 1 and r.info["grid_launches"] == 0
    assert r.info["resident_error"] == "RuntimeError: libcudadevrt.a not found"


@pytest.mark.parametrize("name", ["rmat", "grid", "er"])
def test_delta_stepping_on_the_gpu_matches_scipy(monkeypatch, name):
    """Delta-stepping's GPU twin (one cooperative grid: near levels, threshold moves and far
    splits behind grid barriers) gives scipy's distances at the default, narrow and
    one-bucket widths, directed too, with launches of a few phases each."""
    monkeypatch.setattr(config, "LEVELS_PER_LAUNCH", 5)
    g = {"rmat": lambda: rmat(7, 6, seed=2, weights="uniform"),
         "grid": lambda: grid(7, 9, seed=3, weights="uniform"),
         "er": lambda: erdos_renyi(80, 300, seed=4, weights="uniform")}[name]()
    for delta in (None, 3.0, 1e9):
        want = shortest_distances(g, 0, False)
        r = sssp(g, 0, "delta", device="gpu", delta=delta)
        assert r.device == "gpu" and np.allclose(r.dist, want)
        assert np.array_equal(np.isinf(r.dist), np.isinf(want))
        cpu = sssp(g, 0, "delta", delta=delta)
        # the same buckets: a threshold moves only when the near worklist is empty, to
        # the same next bucket (the smallest live far distance is the same on both)
        assert r.info["threshold_moves"] == cpu.info["threshold_moves"]
        assert r.info["host_syncs"] == r.info["level_launches"] >= 1
    r = sssp(g, g.n - 1, "delta", device="gpu", directed=True)
    assert np.allclose(r.dist, shortest_distances(g, g.n - 1, False, directed=True))


def test_delta_stepping_on_the_gpu_by_hand(monkeypatch):
    monkeypatch.setattr(config, "LEVELS_PER_LAUNCH", 2)  # the state crosses launches
    # the CPU twin's hand case: a path of unit edges, delta 1: one bucket per vertex, 3 moves,
    # 4 near levels, 6 edges examined. A launch starts phases while fewer than 2 have run,
    # a threshold move being two (minimum, split): each launch is one level and one move
    g = Graph(n=4, src=np.array([0, 1, 2]), dst=np.array([1, 2, 3]), weight=np.ones(3))
    r = sssp(g, 0, "delta", device="gpu", delta=1.0)
    assert r.dist.tolist() == [0, 1, 2, 3]
    assert (r.iterations, r.edges_relaxed, r.info["threshold_moves"]) == (4, 6, 3)
    assert r.info["host_syncs"] == 4  # the fourth: the last level, then nothing left
    # zero weights, a far vertex improved before its bucket
    g = Graph(n=4, src=np.array([0, 0, 1, 2]), dst=np.array([3, 1, 2, 3]),
              weight=np.array([5.0, 0.0, 0.0, 1.0]), directed=True)
    assert sssp(g, 0, "delta", device="gpu", delta=2.0).dist.tolist() == [0, 0, 0, 1]


def test_delta_stepping_without_cooperative_launches_is_refused(monkeypatch, tmp_path, capsys):
    """GPU delta-stepping lives in one cooperative grid: where none can be built it is
    refused in one line naming the cause and the way out (exit 2 from the CLI)."""
    from ir_graph import write_graph
    from vcut.cli import main

    def refuse(*args):
        raise RuntimeError("libcudadevrt.a not found")

    monkeypatch.setattr(traversal_gpu, "cooperative_blocks", refuse)
    g = grid(3, 3, weights="uniform", seed=1)
    with pytest.raises(VcutError) as exc:
        sssp(g, 0, "delta", device="gpu")
    assert str(exc.value) == (
        "--strategy delta on the GPU needs cooperative launches, which this CUDA installation "
        "cannot build (RuntimeError: libcudadevrt.a not found); use --device cpu")
    path = tmp_path / "g.npz"
    write_graph(g, path)
    assert main(["sssp", str(path), "--source", "0", "--strategy", "delta", "--device",
                 "gpu"]) == 2
    assert capsys.readouterr().err.strip() == f"error: {exc.value}"


def test_device_csr_holds_4_byte_ids_while_they_fit(monkeypatch):
    cuda = runtime_gpu.require_gpu()
    indptr, indices = np.array([0, 2, 3, 3]), np.array([1, 2, 0])
    g = traversal_gpu.DeviceCSR(cuda, indptr, indices, np.ones(3))
    assert g.indices.copy_to_host().dtype == np.int32 and g.indices.copy_to_host().tolist() == [1, 2, 0]
    assert g.nbytes == 8 * 4 + 4 * 3 + 8 * 3  # offsets, ids, weights
    # past 2^31 vertices (pretended here) the ids are 8-byte
    monkeypatch.setattr(traversal_gpu, "index_dtype", lambda n: np.int64)
    g = traversal_gpu.DeviceCSR(cuda, indptr, indices)
    assert g.indices.copy_to_host().dtype == np.int64 and g.nbytes == 8 * 4 + 8 * 3
