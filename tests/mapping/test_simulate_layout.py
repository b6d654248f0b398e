"""The simulator's layout of scheduled clusterings (`mapping.simulate.positioned`) and its
event heap's bound: the same outputs, to the bit, as the task-order layout."""

import dataclasses
import importlib

import numpy as np
import pytest

from vcut_base import arrays
from mapping.interactions import Clustering, from_vertex_partition
from mapping.machine import table2

sim = importlib.import_module("mapping.simulate")


def clustering(edges, cluster, home, schedule=None, n=None):
    src = np.array([a for a, _, _ in edges], dtype=np.int64)
    dst = np.array([b for _, b, _ in edges], dtype=np.int64)
    w = np.array([x for _, _, x in edges], dtype=np.float64)
    n = n or int(max(src.max(), dst.max())) + 1
    return Clustering(n=n, p=int(max(cluster)) + 1, src=src, dst=dst, weight=w,
                      cluster=np.array(cluster, dtype=np.int32),
                      home=np.array(home, dtype=np.int32),
                      obj=np.full(len(src), -1, dtype=np.int64), kind="vertex-cut", method="hand",
                      schedule=None if schedule is None else np.array(schedule, dtype=np.int32))


def unpositioned(cl, core, machine):
    """`simulate` in the task-order layout (the layout `positioned` replaces)."""
    kept = vars(cl).pop("_positioned", None)
    vars(cl)["_positioned"] = None
    try:
        return sim.simulate(cl, core, machine)
    finally:
        vars(cl)["_positioned"] = kept


def same(a, b):
    return (np.array_equal(a.finish, b.finish) and np.array_equal(a.busy, b.busy)
            and np.array_equal(a.link_bytes, b.link_bytes) and a.makespan == b.makespan
            and (a.messages, a.communication_bytes, a.network_bytes, a.hop_bytes,
                 a.remote_memory_tasks)
            == (b.messages, b.communication_bytes, b.network_bytes, b.hop_bytes,
                b.remote_memory_tasks))


def test_a_schedule_is_followed_and_finish_times_come_back_in_task_order():
    # one cluster, two tasks ready at 0: by execution order (0 -> 1) runs first (10, 15);
    # scheduled the other way round, (2 -> 3) runs first: finishes 5 and 15, reported per task
    edges = [(0, 1, 10), (2, 3, 5)]
    plain = clustering(edges, [0, 0], home=[0, 0, 0, 0])
    assert sim.positioned(plain) is None  # no schedule: the tasks run in their own order
    assert sim.simulate(plain, [0], table2(1, (1, 1))).finish.tolist() == [10.0, 15.0]
    cl = clustering(edges, [0, 0], home=[0, 0, 0, 0], schedule=[1, 0])
    pv = sim.positioned(cl)
    assert pv is not None and pv.cluster.tolist() == [0, 0] and pv.weight.tolist() == [5.0, 10.0]
    # vertices relabelled by the position that first touches them: 2, 3, 0, 1
    assert pv.vorder.tolist() == [2, 3, 0, 1]
    r = sim.simulate(cl, [0], table2(1, (1, 1)))
    assert r.finish.tolist() == [15.0, 5.0] and r.makespan == 15.0
    assert same(r, unpositioned(cl, [0], table2(1, (1, 1))))


def test_every_in_flight_message_fits_the_heap():
    # a hub (vertex 4) with an in-task and an out-task in each of 4 clusters on a row of 4
    # cores: 3 gathers in flight at once, then 3 scatters. Links are reserved in injection
    # order (cores 1, 2, 3 at time 10): gathers arrive at 14, 16, 18; the hub is final at 18
    # and its scatters reach cores 1, 2, 3 at 22, 26, 30; the out-tasks end at 28..40.
    edges = [(i, 4, 10) for i in range(4)] + [(4, 5 + i, 10) for i in range(4)]
    cluster = [0, 1, 2, 3, 0, 1, 2, 3]
    home = [0, 1, 2, 3, 0, 0, 1, 2, 3]
    schedule = [0, 1, 2, 3, 4, 5, 6, 7]
    cl = clustering(edges, cluster, home, schedule=schedule)
    machine = table2(4, (1, 4))
    r = sim.simulate(cl, [0, 1, 2, 3], machine)
    assert r.finish.tolist() == [10.0] * 4 + [28.0, 32.0, 36.0, 40.0]
    assert r.messages == 6 and r.makespan == 40.0
    assert same(r, unpositioned(cl, [0, 1, 2, 3], machine))


@pytest.mark.parametrize("p", [8, 64])
def test_par_clusterings_simulate_the_same_in_either_layout(strassen8, p):
    from vcut.clustering import cluster_graph
    from mapping.time_aware import compact

    _, g = strassen8
    cl, _ = cluster_graph(g, p, "par")
    pv = sim.positioned(cl)
    assert pv is not None
    # the relabelling is a permutation, and each position's replicas are its task's
    assert np.array_equal(np.sort(pv.vorder), np.arange(cl.n))
    order = cl.order
    new = pv.vorder
    assert np.array_equal(pv.vertex[pv.src], new[cl.src[order]])
    assert np.array_equal(pv.vertex[pv.dst], new[cl.dst[order]])
    assert np.array_equal(pv.rep_cluster[pv.src], cl.cluster[order])
    assert np.array_equal(pv.home[new], cl.home)
    assert np.array_equal(np.diff(pv.ptr), np.diff(cl.table.ptr)[np.argsort(new)])
    machine = table2(p)
    rng = np.random.default_rng(5)
    for core in (compact(p, machine), rng.integers(0, machine.cores, p)):
        assert same(sim.simulate(cl, core, machine), unpositioned(cl, core, machine))


def test_no_layout_for_edge_cuts_or_while_spilling(tmp_path, strassen8):
    from vcut.clustering import cluster_graph

    src, dst, w = np.array([0, 0, 0]), np.array([1, 2, 3]), np.ones(3)
    assert sim.positioned(from_vertex_partition(src, dst, w, np.array([0, 1, 1, 1]), 2)) is None
    _, g = strassen8
    cl, _ = cluster_graph(g, 8, "par")
    with arrays.spilling(str(tmp_path)):
        assert sim.positioned(cl) is None  # disk-backed runs keep the task-order layout
    assert sim.positioned(cl) is not None


def test_no_layout_where_it_and_a_simulation_would_not_fit(monkeypatch, strassen8):
    import vcut_base.memory
    from vcut.clustering import cluster_graph

    _, g = strassen8
    cl, _ = cluster_graph(g, 8, "par")
    need = sim.positioned_bytes(cl) + sim.simulation_bytes(cl)
    monkeypatch.setattr(vcut_base.memory, "available_bytes",
                        lambda: int(need / sim.LAYOUT_SHARE) - 1)
    assert sim.positioned(cl) is None
    r = sim.simulate(cl, np.arange(8), table2(8))  # the task-order layout: the same figures
    monkeypatch.setattr(vcut_base.memory, "available_bytes",
                        lambda: int(need / sim.LAYOUT_SHARE) + 1)
    other, _ = cluster_graph(g, 8, "par")
    assert sim.positioned(other) is not None
    assert same(sim.simulate(other, np.arange(8), table2(8)), r)


def _random_scheduled(rng, low):
    """A random clustering with a schedule, and each task's source level: a random DAG
    (edges u < v, some vertices isolated), random clusters and homes (each a cluster of
    one of the vertex's tasks), weights ``low`` to 119, objects, and a random topological
    schedule (`_random_schedule`)."""
    n = int(rng.integers(5, 60))
    m = int(rng.integers(1, 4 * n))
    u = rng.integers(0, n - 1, m)
    v = np.minimum(u + rng.integers(1, 8, m), n - 1)
    keep = np.unique(u * n + v, return_index=True)[1]
    u, v = u[keep], v[keep]
    m = len(u)
    p = int(rng.integers(1, 7))
    cluster = rng.integers(0, p, m).astype(np.int32)
    home = np.full(n, -1, dtype=np.int32)
    for x in range(n):  # the home holds one of the vertex's tasks
        mine = np.flatnonzero((u == x) | (v == x))
        if len(mine):
            home[x] = cluster[rng.choice(mine)]
    level = np.zeros(n, dtype=np.int64)
    for e in np.argsort(v, kind="stable"):
        level[v[e]] = max(level[v[e]], level[u[e]] + 1)
    schedule = _random_schedule(rng, level[u])
    cl = Clustering(n=n, p=p, src=u.astype(np.int64), dst=v.astype(np.int64),
                    weight=rng.integers(low, 120, m).astype(np.float64), cluster=cluster,
                    home=home, obj=rng.integers(-1, 3, m).astype(np.int64), kind="vertex-cut",
                    method="random", schedule=schedule)
    return cl, level[u]


def _random_schedule(rng, level_u):
    """A random topological schedule: tasks by their source's level, ties at random (every
    in-task of u has a source of a lower level, so it comes first)."""
    return np.lexsort((rng.random(len(level_u)), level_u)).astype(np.int32)


@pytest.mark.parametrize("seed", range(12))
def test_random_schedules_simulate_the_same_in_either_layout(seed):
    # random DAGs (edges u < v, some vertices isolated), random clusters and homes, objects,
    # and a random topological schedule: tasks sorted by their source's level, ties at random
    # (every in-task of u has a source of a lower level, so it comes first)
    rng = np.random.default_rng(seed)
    cl, _ = _random_scheduled(rng, 1)
    p = cl.p
    machine = table2(int(rng.choice([2, 4, 8])))
    core = rng.integers(0, machine.cores, p)
    assert sim.positioned(cl) is not None
    assert same(sim.simulate(cl, core, machine), unpositioned(cl, core, machine))


@pytest.mark.parametrize("seed", range(8))
def test_rescheduled_simulates_as_a_fresh_layout(seed):
    # `rescheduled` derives the new schedule's layout from the old one's (the vertices keep
    # the old labels); a clustering made afresh with that schedule lays itself out again:
    # both simulate the same, to the bit, and the same as the task-order layout
    rng = np.random.default_rng(40 + seed)
    cl, level_u = _random_scheduled(rng, 0)
    p = cl.p
    machine = table2(int(rng.choice([2, 4, 8])))
    core = rng.integers(0, machine.cores, p)
    sim.simulate(cl, core, machine)  # makes cl's layout
    assert sim.positioned(cl) is not None
    order = _random_schedule(rng, level_u)
    derived = sim.rescheduled(cl, order)
    assert vars(derived)["_positioned"] is not None  # derived, not made on first use
    assert vars(derived)["table"] is vars(cl)["table"]  # the replica table is kept
    assert np.array_equal(derived.schedule, order) and np.array_equal(derived.order, order)
    fresh = Clustering(**{f: getattr(cl, f) for f in ("n", "p", "src", "dst", "weight",
                                                      "cluster", "home", "obj", "kind",
                                                      "method")}, schedule=order)
    a, b = sim.simulate(derived, core, machine), sim.simulate(fresh, core, machine)
    assert same(a, b)
    assert same(a, unpositioned(fresh, core, machine))
    # the derived layout holds the tasks in the new order, the vertices' old labels
    pv, old = sim.positioned(derived), sim.positioned(cl)
    assert np.array_equal(pv.vorder, old.vorder)
    assert np.array_equal(pv.weight, cl.weight[order])
    assert np.array_equal(pv.cluster, cl.cluster[order])


def test_rescheduled_without_a_layout_is_a_plain_replace():
    edges = [(0, 1, 10), (2, 3, 5)]
    cl = clustering(edges, [0, 0], home=[0, 0, 0, 0], schedule=[0, 1])
    new = sim.rescheduled(cl, np.array([1, 0], dtype=np.int32))  # cl was never simulated
    assert "_positioned" not in vars(new) and new.schedule.tolist() == [1, 0]
    r = sim.simulate(new, [0], table2(1, (1, 1)))
    assert r.finish.tolist() == [15.0, 5.0]


def test_positions_are_int32_until_the_slots_would_not_fit():
    from mapping.simulation_kernels import READY_BLOCK

    # slots: the tasks plus up to READY_BLOCK padding per core in use (at most p of them)
    limit = 2**31 - 1
    assert sim.position_dtype(limit - 1 - 8 * READY_BLOCK, 8) == np.int32
    assert sim.position_dtype(limit - 8 * READY_BLOCK, 8) == np.int64
    assert sim.position_dtype(limit - 1 - 8 * READY_BLOCK, 9) == np.int64


@pytest.mark.parametrize("p", [3, 8])
def test_int64_positions_simulate_as_int32_ones(monkeypatch, strassen8, p):
    # the layout past 2**31 tasks, taken here on a small clustering: the same outputs
    from vcut.clustering import cluster_graph
    from mapping.time_aware import compact

    _, g = strassen8
    machine = table2(p)
    core = compact(p, machine)
    narrow, _ = cluster_graph(g, p, "par")
    expect = [sim.simulate(narrow, core, machine), unpositioned(narrow, core, machine)]
    assert sim.positioned(narrow).tasks[1].dtype == np.int32
    monkeypatch.setattr(sim, "position_dtype", lambda m, p: np.int64)
    wide, _ = cluster_graph(g, p, "par")
    got = [sim.simulate(wide, core, machine), unpositioned(wide, core, machine)]
    assert sim.positioned(wide).tasks[1].dtype == np.int64
    assert all(same(a, b) for a, b in zip(got, expect))


@pytest.mark.parametrize("layout", ["positioned", "task order"])
def test_figures_without_the_finish_times_are_the_same(strassen8, layout):
    from vcut.clustering import cluster_graph
    from mapping.time_aware import compact

    _, g = strassen8
    cl, _ = cluster_graph(g, 8, "par")
    machine = table2(8)
    core = compact(8, machine)
    run = sim.simulate if layout == "positioned" else unpositioned
    whole = run(cl, core, machine)
    if layout == "task order":
        vars(cl)["_positioned"] = None
    figures = sim.simulate(cl, core, machine, finish=False)
    assert figures.finish is None and whole.finish.shape == (len(cl.src),)
    assert figures.makespan == whole.finish.max()
    assert same(dataclasses.replace(figures, finish=whole.finish), whole)
    assert figures.utilization_figures() == whole.utilization_figures()
