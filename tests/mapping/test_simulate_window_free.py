"""The simulator without an issue window: ready bitsets per core give the scan's choices.

With a window as large as every cluster, `simulate_events` keeps each core's ready tasks in
a bitset instead of scanning the windows at each start. Both must start the same task at the
same time: the finish times, busy cycles, link bytes and counts are compared exactly with
the scan (``scan=True``) on IR graphs whose tasks wait in long runs (control edges of the
``base`` and ``cd`` models), with cores shared by clusters, and on random DAGs.
"""

import dataclasses

import numpy as np
import pytest

from frontend import trace_program
from ir_graph import Graph, build_graph
from mapping import load_machine, simulate, simulation_kernels
from vcut.clustering import cluster_graph


def _both(monkeypatch, cl, core, machine):
    """The simulation with the heaps, then with the scan forced."""
    heaps = simulate(cl, core, machine)
    kernel = simulation_kernels.simulate_events
    calls = []

    def scanning(*args):
        calls.append(len(args))
        return kernel(*args, True)

    monkeypatch.setattr(simulation_kernels, "simulate_events", scanning)
    scanned = simulate(cl, core, machine)
    monkeypatch.setattr(simulation_kernels, "simulate_events", kernel)
    assert len(calls) == 1  # the scan did run
    return heaps, scanned


def _same(a, b):
    assert np.array_equal(a.finish, b.finish)
    assert np.array_equal(a.busy, b.busy)
    assert np.array_equal(a.link_bytes, b.link_bytes)
    assert (a.makespan, a.messages, a.hop_bytes, a.network_bytes, a.remote_memory_tasks) == \
        (b.makespan, b.messages, b.hop_bytes, b.network_bytes, b.remote_memory_tasks)


def _random_dag(rng, low, high):
    """A random DAG of 40-400 nodes (edges u < v), weights ``low`` to ``high`` - 1, a third
    of the nodes with one of 5 objects."""
    n = int(rng.integers(40, 400))
    u = rng.integers(0, n - 1, 4 * n)
    v = np.minimum(u + 1 + rng.integers(0, np.maximum(n - 1 - u, 1)), n - 1)
    key = np.unique(u * n + v)
    src, dst = key // n, key % n
    keep = src < dst
    return Graph(n=n, src=src[keep], dst=dst[keep],
                 weight=rng.integers(low, high, int(keep.sum())).astype(float), directed=True,
                 node_object=np.where(rng.random(n) < 0.3, rng.integers(0, 5, n), -1)).validate()


@pytest.fixture(scope="module")
def strassen():
    return trace_program("samples/strassen.c", timing=False,
                         compile_options={"defines": ["N=4"]})


@pytest.mark.parametrize("model", ["oracle", "cd", "base"])
@pytest.mark.parametrize("method,p", [("wb-libra", 4), ("metis", 8), ("par", 8)])
def test_window_free_heaps_choose_as_the_scan_on_ir_graphs(monkeypatch, strassen, model, method,
                                                            p):
    g = build_graph(strassen, control=model)
    cl, _ = cluster_graph(g, p, method)
    machine = dataclasses.replace(load_machine(f"table2:{p}"), issue_window=len(cl.src))
    core = np.arange(p)[::-1].copy()  # not the identity: clusters and cores differ
    heaps, scanned = _both(monkeypatch, cl, core, machine)
    _same(heaps, scanned)
    assert heaps.makespan > 0


@pytest.mark.parametrize("seed", range(6))
def test_window_free_heaps_choose_as_the_scan_on_random_dags(monkeypatch, seed):
    rng = np.random.default_rng(seed)
    g = _random_dag(rng, 1, 120)
    p = int(rng.integers(2, 9))
    cl, _ = cluster_graph(g, p, "wb-libra", seed=seed)
    machine = dataclasses.replace(load_machine("mesh:2x4"), issue_window=len(cl.src))
    core = rng.permutation(8)[:p]
    heaps, scanned = _both(monkeypatch, cl, core, machine)
    _same(heaps, scanned)


def test_a_window_smaller_than_a_cluster_keeps_the_scan(monkeypatch, strassen):
    """Below the largest cluster's size the heaps are not used: forcing the scan changes
    nothing, and a window of one gives the in-order result, slower than no window."""
    g = build_graph(strassen)
    cl, _ = cluster_graph(g, 4, "wb-libra")
    base = load_machine("table2:4")
    core = np.arange(4)
    small = dataclasses.replace(base, issue_window=1)
    heaps, scanned = _both(monkeypatch, cl, core, small)
    _same(heaps, scanned)
    free = simulate(cl, core, dataclasses.replace(base, issue_window=len(cl.src)))
    assert free.makespan <= heaps.makespan


@pytest.mark.parametrize("model", ["oracle", "cd", "base"])
@pytest.mark.parametrize("method,p,cores", [("par", 8, 3), ("metis", 8, 2), ("wb-libra", 6, 1)])
def test_window_free_bitsets_choose_as_the_scan_with_shared_cores(monkeypatch, strassen, model,
                                                                   method, p, cores):
    """Several clusters per core: a core's slots interleave its clusters' tasks."""
    g = build_graph(strassen, control=model)
    cl, _ = cluster_graph(g, p, method)
    machine = dataclasses.replace(load_machine(f"table2:{max(cores, 2)}"),
                                  issue_window=len(cl.src))
    core = (np.arange(p)[::-1] % cores).copy()
    fast, scanned = _both(monkeypatch, cl, core, machine)
    _same(fast, scanned)
    assert fast.makespan > 0


@pytest.mark.parametrize("seed", range(12))
def test_window_free_bitsets_choose_as_the_scan_on_random_dags_with_shared_cores(monkeypatch,
                                                                                  seed):
    rng = np.random.default_rng(100 + seed)
    # weights of 0 too: tasks that finish at once tie with the events of their start
    g = _random_dag(rng, 0, 60)
    p = int(rng.integers(4, 9))
    cl, _ = cluster_graph(g, p, "wb-libra", seed=seed)
    machine = dataclasses.replace(load_machine("mesh:2x4"), issue_window=len(cl.src))
    core = rng.integers(0, 1 + seed % 2, p)  # clusters share one core or two
    fast, scanned = _both(monkeypatch, cl, core, machine)
    _same(fast, scanned)
