"""Distributed vertex cuts on a Dask LocalCluster (2 worker processes): hash cuts equal
to the sequential ones, coordinated greedy ingress valid, balanced, deterministic and
unharmed by a worker killed mid-run; GraphX's hash rules against a direct computation."""

import json
import os
import signal
import threading
import time

import numpy as np
import pytest

from vcut_base.errors import InputError, VcutError
from ir_graph import Graph, read_graph
from tests.helpers import dataset
from vcut import hashing_kernels
from vcut.hdrf_kernels import hdrf_dense
from vcut import distributed as D
from vcut.cli import main
from ir_graph.edge_lists import degrees
from vcut.metrics import replica_sets
from vcut.partition import partition_graph, simplify


def _graph(seed=0, n=300, m=2500, weighted=True):
    rng = np.random.default_rng(seed)
    src = rng.integers(0, n, m)
    dst = rng.integers(0, n, m)
    w = rng.integers(1, 20, m).astype(np.float64) if weighted else np.ones(m)
    return Graph(n=n, src=src, dst=dst, weight=w).validate()


@pytest.fixture(scope="module")
def wiki():
    return read_graph(dataset("wiki-Vote.txt.gz"))


@pytest.fixture(scope="module")
def cnr():
    """cnr-2000 (LAW web crawl, 2.7 M edges) and its sequential HDRF at p = 32; a reciprocal
    pair of links summed into one edge of weight 2, as the issue's run read it (HDRF
    balances edge counts, so the weights show how the stream was cut)."""
    g = read_graph(dataset("cnr-2000.arcs.txt.gz"), duplicates="sum")
    return g, partition_graph(g, 32, "hdrf")


# -- GraphX's rules --------------------------------------------------------------
def _gx(x):
    """|x * prime| as a Scala Long, computed with Python integers."""
    y = (x * hashing_kernels.GRAPHX_PRIME) % 2**64
    y = y - 2**64 if y >= 2**63 else y
    return abs(y)


@pytest.mark.parametrize("p", [1, 4, 9, 7, 10, 13])
def test_graphx_rules_match_a_direct_computation(p):
    rng = np.random.default_rng(p)
    src = rng.integers(0, 10**12, 400)
    dst = rng.integers(0, 10**12, 400)
    side = 1
    while side * side < p:
        side += 1
    out1 = np.empty(400, np.int32)
    out2 = np.empty(400, np.int32)
    hashing_kernels.graphx_assign(src, dst, p, hashing_kernels.GRAPHX_1D, 0, out1)
    hashing_kernels.graphx_assign(src, dst, p, hashing_kernels.GRAPHX_2D, 0, out2)
    for e in range(400):
        u, v = int(src[e]), int(dst[e])
        assert out1[e] == _gx(u) % p
        if side * side == p:
            want = ((_gx(u) % side) * side + _gx(v) % side) % p
        else:
            rows = -(-p // side)
            col = _gx(u) % p // rows
            inner = rows if col < side - 1 else p - rows * (side - 1)
            want = col * rows + _gx(v) % inner
        assert out2[e] == want
    assert out2.max() < p and out2.min() >= 0


def test_graphx_2d_bounds_replicas_by_the_grid():
    # a vertex's edges as source stay in one column, as destination in one row:
    # at most 2 * ceil(sqrt(p)) - 1 clusters
    g = _graph(1, n=50, m=4000, weighted=False)
    part = partition_graph(g, 16, "graphx-2d")
    ptr, _ = part.replicas()
    assert int(np.diff(ptr).max()) <= 2 * 4 - 1


def test_graphx_crvc_ignores_the_direction():
    g = _graph(2, weighted=False)
    rev = Graph(n=g.n, src=g.dst, dst=g.src, weight=g.weight).validate()
    a = partition_graph(g, 8, "graphx-crvc", seed=5).assignment
    b = partition_graph(rev, 8, "graphx-crvc", seed=5).assignment
    assert (a == b).all()
    c = partition_graph(g, 8, "graphx-crvc", seed=6).assignment
    assert (a != c).any()


def test_graphx_refuses_capacities():
    with pytest.raises(InputError, match="equal shares"):
        partition_graph(_graph(), 4, "graphx-1d", capacities=[1, 1, 1, 2])


# -- hash cuts: the sequential result ----------------------------------------------
@pytest.mark.parametrize("algo", D.HASH_CUTS)
def test_distributed_hash_cuts_equal_the_sequential_ones(dask_client, monkeypatch, algo):
    monkeypatch.setattr(D, "PIECE", 700)  # several pieces, the last one short
    g = _graph(3)
    for p in (3, 16):
        seq = partition_graph(g, p, algo, seed=11)
        dis = D.partition_distributed(g, p, algo, client=dask_client, seed=11)
        assert (seq.assignment == dis.assignment).all()
        assert dis.info["distributed"] and dis.info["workers"] == 2


def test_distributed_random_keeps_capacities(dask_client, monkeypatch):
    monkeypatch.setattr(D, "PIECE", 333)
    g = _graph(4)
    seq = partition_graph(g, 3, "random", seed=2, capacities=[1, 2, 5])
    dis = D.partition_distributed(g, 3, "random", client=dask_client, seed=2,
                                  capacities=[1, 2, 5])
    assert (seq.assignment == dis.assignment).all()


# -- coordinated greedy ingress ------------------------------------------------------
@pytest.mark.parametrize("algo", D.GREEDY_CUTS)
def test_one_worker_is_the_sequential_stream(dask_client, algo):
    g = _graph(5)
    seq = partition_graph(g, 6, algo)
    dis = D.partition_distributed(g, 6, algo, client=dask_client, workers=1, batch=300)
    assert dis.info["rounds"] == -(-len(seq.src) // 300)
    assert (seq.assignment == dis.assignment).all()


@pytest.mark.parametrize("algo", ["wb-libra", "hdrf", "w-pg"])
def test_merged_state_is_the_assignment_s_replica_sets(dask_client, algo):
    g = _graph(6)
    src, dst, w = simplify(g)[:3]
    deg = degrees(src, dst, g.n)
    cap = np.full(5, 0.2)
    out, rounds, A, load = D._coordinated(dask_client, algo, src, dst, w, deg, g.n, 5, cap, 1.0,
                                          97, 3, None)
    assert rounds == -(-int(np.ceil(len(src) / 3)) // 97)
    assert out.min() >= 0 and out.max() < 5 and len(out) == len(src)
    ptr, cl = replica_sets(src, dst, out, g.n)
    want = np.zeros_like(A)
    for v in range(g.n):
        for c in cl[ptr[v]:ptr[v + 1]]:
            want[v, c // 64] |= np.uint64(1) << np.uint64(c % 64)
    assert (A == want).all()
    wt = np.ones(len(src)) if algo == "hdrf" else w
    assert np.allclose(load, np.bincount(out, weights=wt, minlength=5))


@pytest.mark.parametrize("algo", ["wb-libra", "hdrf"])
def test_distributed_greedy_is_deterministic_balanced_and_close(dask_client, wiki, algo):
    seq = partition_graph(wiki, 16, algo)
    a = D.partition_distributed(wiki, 16, algo, client=dask_client, batch=4096)
    b = D.partition_distributed(wiki, 16, algo, client=dask_client, batch=4096)
    assert (a.assignment == b.assignment).all()
    four = D.partition_distributed(wiki, 16, algo, client=dask_client, workers=4, batch=4096)
    assert (four.assignment != a.assignment).any()  # the result depends on the worker count
    for part in (a, four):
        # the bound holds up to the last round's zero slack (docs/vcut.md)
        imb = part.metrics.edge_imbalance if algo == "hdrf" else part.metrics.edge_weight_imbalance
        assert imb <= 1.02
        # docs/vcut.md's tolerance for small graphs (the shared graphs measure within 5 %)
        assert part.metrics.replication_factor <= 1.15 * seq.metrics.replication_factor


def _crawl(seed, hosts=60, n=12000, m=120000):
    """A web crawl's shape, as cnr-2000 has it: hosts of skewed (Zipf) sizes, nine
    links in ten within the host, each host with its own share of reciprocal
    links, the stream in source order."""
    rng = np.random.default_rng(seed)
    size = rng.zipf(1.6, hosts).clip(1, 50)
    size = np.maximum(1, (size / size.sum() * n).astype(np.int64))
    start = np.concatenate([[0], np.cumsum(size)])
    host = np.repeat(np.arange(hosts), size)
    src = rng.integers(0, int(start[-1]), m)
    h = host[src]
    local = rng.random(m) < 0.9
    near = start[h] + rng.zipf(1.8, m) % size[h]
    dst = np.where(local, near, rng.integers(0, int(start[-1]), m))
    back = rng.random(m) < rng.random(hosts)[h] ** 2
    s2, d2 = np.concatenate([src, dst[back]]), np.concatenate([dst, src[back]])
    order = np.argsort(s2, kind="stable")
    return Graph(n=int(start[-1]), src=s2[order], dst=d2[order],
                 weight=np.ones(len(order))).validate()


def _hdrf_capacity(m, p):
    """HDRF's capacity with equal shares: ceil(m / p) edges (vcut.cuts.hdrf.HDRF_CAPACITY 1)."""
    return -(-m // p)


@pytest.mark.parametrize("workers", [2, 4])
def test_distributed_hdrf_keeps_the_sequential_capacity(dask_client, workers):
    # issue 61, item 5: workers filled the least loaded cluster each on its own after
    # their shares were spent, past HDRF's capacity (3887 edges against 3886 here)
    g = _crawl(0)
    p = 16
    seq = partition_graph(g, p, "hdrf")
    m = len(seq.src)
    cap = _hdrf_capacity(m, p)
    assert np.bincount(seq.simple_assignment, minlength=p).max() <= cap
    dis = D.partition_distributed(g, p, "hdrf", client=dask_client, workers=workers, batch=1024)
    counts = np.bincount(dis.simple_assignment, minlength=p)
    assert counts.sum() == m and counts.max() <= cap


@pytest.mark.parametrize("workers", [2, 4])
def test_distributed_hdrf_on_cnr_2000_keeps_the_sequential_balance(dask_client, cnr, workers):
    # issue 61, item 5: at 2 workers the weight imbalance was 1.237 against the
    # sequential run's 1.065; HDRF's balance term saw the bound less each worker's
    # share, so clusters filled one after another along the crawl
    g, seq = cnr
    m = len(seq.src)
    dis = D.partition_distributed(g, 32, "hdrf", client=dask_client, workers=workers)
    assert np.bincount(dis.simple_assignment, minlength=32).max() <= _hdrf_capacity(m, 32)
    assert dis.metrics.edge_weight_imbalance <= seq.metrics.edge_weight_imbalance


def test_edge_shares_cover_every_round_within_the_room():
    # floor(room * frac) gives worker 0 two edges of each cluster, worker 1 none;
    # worker 1 takes the one left of each, then two from worker 0's spare, from
    # cluster 1 first (the later of two equal preferences, as argsort reversed)
    share = D._edge_shares(np.array([3, 3]), np.array([[0.9, 0.9], [0.1, 0.1]]),
                           np.array([2, 4]))
    assert share.tolist() == [[2, 0], [1, 3]]
    rng = np.random.default_rng(3)
    for _ in range(200):
        room = rng.integers(0, 50, 7)
        frac = rng.random((3, 7))
        frac /= frac.sum(axis=0)
        need = rng.multinomial(int(rng.integers(0, room.sum() + 1)), [1 / 3] * 3)
        share = D._edge_shares(room, frac, need)
        assert (share >= 0).all() and (share.sum(axis=0) <= room).all()
        assert (share.sum(axis=1) >= need).all()


def test_hdrf_step_with_the_least_loaded_cluster_full_takes_the_next_with_room():
    # loads 0, 5, 3; cluster 0 full for this step: the edge (no replicas yet) goes
    # to cluster 2, the least loaded with room (before: to cluster 0, past its limit)
    p = 3
    cap = np.full(p, 1 / p)
    load = np.array([0.0, 5.0, 3.0])
    out = np.empty(1, np.int32)
    rows = np.zeros((2, 1), np.uint64)
    hdrf_dense(np.array([0]), np.array([1]), np.arange(1), cap, 1.1, 1.0, 2,
               np.array([-0.5, 10.0, 10.0]), np.zeros(0, np.int64),
               np.zeros(2, np.int64), out, rows, load, 5.0, np.zeros(2, np.int64))
    assert out[0] == 2 and load.tolist() == [0.0, 5.0, 4.0]
    assert rows[:, 0].tolist() == [4, 4]


def test_a_worker_killed_mid_run_changes_nothing(dask_client, wiki):
    want = D.partition_distributed(wiki, 8, "wb-libra", client=dask_client, batch=256)
    pids = list(dask_client.run(os.getpid).values())
    got = {}

    def job():
        got["part"] = D.partition_distributed(wiki, 8, "wb-libra", client=dask_client, batch=256)

    t = threading.Thread(target=job)
    t.start()
    time.sleep(1.0)
    assert t.is_alive(), "the run ended before the fault: give it more rounds"
    os.kill(pids[0], signal.SIGKILL)
    t.join(300)
    assert (got["part"].assignment == want.assignment).all()
    deadline = time.time() + 60  # the nanny brings the worker back for the next tests
    while len(dask_client.nthreads()) < 2 and time.time() < deadline:
        time.sleep(0.2)


# -- command line and bad input -------------------------------------------------------
def test_cli_on_a_second_cluster_by_address(tmp_path, capsys, wiki):
    from distributed import LocalCluster

    path = dataset("wiki-Vote.txt.gz")
    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False, protocol="tcp",
                      host="127.0.0.1", dashboard_address=":0") as cluster:
        out = tmp_path / "a.part"
        rc = main(["partition", path, "-p", "8", "--algo", "hdrf", "--scheduler",
                   cluster.scheduler_address, "--batch", "2048", "-o", str(out), "--json"])
        assert rc == 0
        doc = json.loads(capsys.readouterr().out)
        from distributed import Client

        with Client(cluster.scheduler_address) as client:
            api = D.partition_distributed(wiki, 8, "hdrf", client=client, batch=2048)
    assert doc["workers"] == 1 and doc["rounds"] == api.info["rounds"]
    assert doc["replication_factor"] == pytest.approx(api.metrics.replication_factor, abs=0)
    assert (np.loadtxt(out, dtype=np.int64) == api.assignment).all()


def test_cli_env_scheduler_is_used(monkeypatch, capsys):
    from distributed import LocalCluster

    with LocalCluster(n_workers=1, processes=False, protocol="tcp", host="127.0.0.1",
                      dashboard_address=":0") as cluster:
        monkeypatch.setenv("VCUT_SCHEDULER", cluster.scheduler_address)
        rc = main(["partition", dataset("wiki-Vote.txt.gz"), "-p", "4", "--algo", "dbh",
                   "--workers", "1", "--json"])
        assert rc == 0
    assert json.loads(capsys.readouterr().out)["workers"] == 1


def _error_lines(capsys):
    """stderr without the reader's note on the reverse pairs of wiki-Vote it merged."""
    return [line for line in capsys.readouterr().err.strip().splitlines()
            if not line.startswith("note: ")]


@pytest.mark.parametrize("argv, message", [
    (["--algo", "spac", "--workers", "2"], "does not run distributed"),
    (["--batch", "100", "--algo", "hdrf"], "batched streaming is for the greedy family"),
    (["--workers", "0"], "--workers must be a positive integer"),
    (["--workers", "2", "--batch", "0"], "--batch must be a positive integer"),
    (["--scheduler", "localhost:8786"], "not a Dask scheduler address"),
    (["--workers", "2", "--order", "random"], "streams the edges as given"),
])
def test_cli_bad_distributed_options(capsys, argv, message):
    rc = main(["partition", dataset("wiki-Vote.txt.gz"), "-p", "4"] + argv)
    assert rc != 0
    err = _error_lines(capsys)
    assert len(err) == 1 and message in err[0]


def test_unreachable_scheduler_is_one_line(monkeypatch, capsys):
    import runtime.dask_cluster as C

    monkeypatch.setattr(C, "CONNECT_TIMEOUT", 1)
    rc = main(["partition", dataset("wiki-Vote.txt.gz"), "-p", "4", "--scheduler",
               "tcp://127.0.0.1:9"])
    assert rc == 1
    err = _error_lines(capsys)
    assert len(err) == 1 and "cannot reach the Dask scheduler at tcp://127.0.0.1:9" in err[0]


def test_api_bad_input(dask_client):
    g = _graph()
    with pytest.raises(InputError, match="does not run distributed"):
        D.partition_distributed(g, 4, "ne", client=dask_client)
    with pytest.raises(InputError, match="batch"):
        D.partition_distributed(g, 4, "hdrf", client=dask_client, batch=0)
    with pytest.raises(InputError, match="workers"):
        D.partition_distributed(g, 4, "hdrf", client=dask_client, workers=0)
    with pytest.raises(InputError, match="clusters"):
        D.partition_distributed(g, 0, "hdrf", client=dask_client)
    with pytest.raises(InputError, match="only"):
        D.partition_distributed(g, 10**6, "hdrf", client=dask_client)
    with pytest.raises(InputError, match="equal shares"):
        D.partition_distributed(g, 2, "graphx-2d", client=dask_client, capacities=[1, 2])
    with pytest.raises(VcutError):
        from runtime.dask_cluster import scheduler_address

        scheduler_address("http://x:1")


def test_cli_workers_on_a_small_graph_run_here_and_say_so(tmp_path, capsys, wiki):
    # wiki-Vote (~100 K edges) is far below LOCAL_MIN_EDGES: the sequential stream in this
    # process, the workers' round size (--batch) set aside, and one note that says so
    out = tmp_path / "w.parts"
    rc = main(["partition", dataset("wiki-Vote.txt.gz"), "-p", "8", "--algo", "hdrf",
               "--workers", "2", "--batch", "2048", "-o", str(out), "--json"])
    assert rc == 0
    got = capsys.readouterr()
    doc = json.loads(got.out)
    assert "workers" not in doc and "rounds" not in doc
    notes = [ln for ln in got.err.splitlines() if ln.startswith("note: --workers")]
    assert notes == [f"note: --workers 2: {wiki.m:,} edges are cut faster in this process than "
                     f"a local Dask cluster starts (it pays from {D.LOCAL_MIN_EDGES:,} edges); "
                     "ran here (the sequential stream's result, not coordinated ingress's); "
                     "--scheduler runs on an existing cluster"]
    seq = partition_graph(wiki, 8, "hdrf")
    assert (np.loadtxt(out, dtype=np.int64) == seq.assignment).all()


def test_local_cluster_pays_from_the_threshold_for_greedy_cuts_never_for_hash_cuts():
    assert D.local_cluster_pays(D.LOCAL_MIN_EDGES, "hdrf") is None
    assert D.local_cluster_pays(D.LOCAL_MIN_EDGES, "wb-libra") is None
    assert D.local_cluster_pays(D.LOCAL_MIN_EDGES - 1, "hdrf").endswith(
        "ran here (the sequential stream's result, not coordinated ingress's); --scheduler "
        "runs on an existing cluster")
    for algo in D.HASH_CUTS:
        for m in (D.LOCAL_MIN_EDGES - 1, D.LOCAL_MIN_EDGES, 10 * D.LOCAL_MIN_EDGES):
            assert D.local_cluster_pays(m, algo) == D.HASH_LOCAL
    assert D.HASH_LOCAL.endswith("ran here (the same result); --scheduler runs on an "
                                 "existing cluster")


def test_cli_workers_above_the_threshold_start_the_cluster(tmp_path, capsys, monkeypatch, wiki):
    monkeypatch.setattr(D, "LOCAL_MIN_EDGES", 1000)
    rc = main(["partition", dataset("wiki-Vote.txt.gz"), "-p", "4", "--algo", "hdrf",
               "--workers", "1", "--json"])
    assert rc == 0
    got = capsys.readouterr()
    assert json.loads(got.out)["workers"] == 1
    assert "note: --workers" not in got.err


def test_cli_workers_run_a_hash_cut_here_whatever_the_size(tmp_path, capsys, monkeypatch, wiki):
    monkeypatch.setattr(D, "LOCAL_MIN_EDGES", 1000)
    out = tmp_path / "w.parts"
    rc = main(["partition", dataset("wiki-Vote.txt.gz"), "-p", "4", "--algo", "dbh",
               "--workers", "2", "-o", str(out), "--json"])
    assert rc == 0
    got = capsys.readouterr()
    assert "workers" not in json.loads(got.out)
    notes = [ln for ln in got.err.splitlines() if ln.startswith("note: --workers")]
    assert notes == [f"note: --workers 2: {D.HASH_LOCAL}"]
    assert (np.loadtxt(out, dtype=np.int64) == partition_graph(wiki, 4, "dbh").assignment).all()
