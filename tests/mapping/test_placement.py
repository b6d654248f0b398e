"""Algorithm 2's helpers, the memory-centric mapping and the baseline mappings."""

import numpy as np
import pytest
from scipy import sparse

from vcut_base.errors import InputError
from mapping.baselines import comm_greedy, random_mapping, recursive_bisection, round_robin
from mapping.interactions import ClusterInteractions, from_edge_partition, interactions
from mapping.machine import load_machine, machine_from_dict, table2
from mapping.memory_centric import (architecture_decomposition, cluster_comm, cluster_from_mem,
                                    diff_region, memory_centric, nearby, run_queue)
from mapping.placement import MAPPERS, check_memory, hop_bytes, place


def make_inter(comm, work=None, access=None, object_bytes=None):
    comm = np.asarray(comm, dtype=np.float64)
    p = comm.shape[0]
    work = np.ones(p) if work is None else np.asarray(work, dtype=np.float64)
    access = sparse.csr_matrix(np.zeros((p, 1)) if access is None else np.asarray(access, float))
    object_bytes = np.zeros(access.shape[1]) if object_bytes is None else np.asarray(object_bytes, float)
    touched = (access > 0).astype(float)
    return ClusterInteractions(
        work=work, tasks=np.ones(p, dtype=np.int64), first=np.arange(p), comm=comm,
        messages=int(comm.sum() / 32), access=access, object_bytes=object_bytes,
        footprint=np.asarray(touched @ object_bytes).ravel(), value_bytes=32)


def test_shared_accesses_and_cluster_from_mem():
    # objects: 0 touched by clusters 0 (5), 1 (2), 2 (7); object 1 by clusters 2 (1), 3 (4)
    inter = make_inter(np.zeros((4, 4)), access=[[5, 0], [2, 0], [7, 1], [0, 4]])
    s = inter.shared_accesses()
    assert s.tolist() == [[0, 2, 5, 0], [2, 0, 2, 0], [5, 2, 0, 1], [0, 0, 1, 0]]
    partner = cluster_from_mem(s, np.array([0, 1, 2, 3]))
    assert partner.tolist() == [-1, 0, 0, 2]  # 2 shares 5 with 0 and 2 with 1; 3 only with 2
    # an earlier cluster only: in the order 3, 2, 1, 0 the first has no partner
    assert cluster_from_mem(s, np.array([3, 2, 1, 0])).tolist() == [2, 2, 3, -1]


def test_cluster_comm_and_run_queue():
    comm = np.zeros((4, 4))
    comm[0, 1] = 32
    comm[1, 2] = 320
    comm[3, 2] = 64
    comm[2, 3] = 64
    ipc = cluster_comm(comm)
    assert ipc[1, 2] == ipc[2, 1] == 320 and ipc[2, 3] == 128 and np.all(np.diag(ipc) == 0)
    # the heaviest cluster (2: 448 bytes) first, then its heaviest partners, ...
    assert run_queue(ipc, np.ones(4, dtype=np.int64)).tolist() == [2, 1, 3, 0]
    # empty clusters go last
    assert run_queue(ipc, np.array([1, 0, 1, 1])).tolist() == [2, 3, 0, 1]


def test_architecture_decomposition():
    m = table2(64)
    assert np.array_equal(architecture_decomposition(m), m.numa_of_core)
    one_node = machine_from_dict({"cores": 8, "mesh": [1, 8]})  # one row: quadrants are halves
    assert architecture_decomposition(one_node).tolist() == [0] * 4 + [1] * 4
    flat = machine_from_dict({"cores": 16, "mesh": [4, 4], "numa": {"latency_cycles": [[100]]}})
    assert architecture_decomposition(flat).reshape(4, 4).tolist() == [
        [0, 0, 1, 1], [0, 0, 1, 1], [2, 2, 3, 3], [2, 2, 3, 3]]


def test_nearby():
    m = table2(16)  # 4 x 4
    hops = m.hop_matrix()
    room = np.ones(16, dtype=bool)
    load = np.zeros(16)
    room[5] = False
    # partners on cores 5 (64 bytes) and 7 (32 bytes): core 6 is one hop from each
    assert nearby(np.array([64.0, 32.0]), np.array([5, 7]), hops, room, load) == 6
    # one partner at core 5 (full): its four neighbours 1, 4, 6, 9 tie on cost and load; the
    # most central (total hops to all cores: 40, 40, 32, 32) wins, then the lowest id
    assert nearby(np.array([1.0]), np.array([5]), hops, room, load) == 6
    load[6] = 3.0
    assert nearby(np.array([1.0]), np.array([5]), hops, room, load) == 9


def test_diff_region():
    m = table2(16)
    region = architecture_decomposition(m)
    room = np.ones(16, dtype=bool)
    load = np.zeros(16)
    load[[0, 1]] = 5.0  # region 0 loaded
    hops = m.hop_matrix()
    # avoiding region 1: regions 2 {8, 9, 12, 13} and 3 are empty, 2 has the lower id; in it
    # the most central core (total hops 40, 32, 48, 40) is 9
    assert diff_region(1, region, room, load, hops) == 9
    load[9] = 1.0
    assert diff_region(1, region, room, load, hops) == 10  # region 3 is now lighter than 2
    # every other region full: the avoided one is still allowed (core 2 is more central than 3)
    room[:] = False
    room[[2, 3]] = True
    assert diff_region(1, region, room, load, hops) == 2


def test_memory_centric_keeps_sharing_clusters_together_up_to_the_threshold():
    # 8 clusters of equal work sharing one object, on the 2 cores of a 1 x 2 mesh. Each one's
    # partner is cluster 0 (core 0). Joining core 0 wins the execution-time comparison only
    # when the alternative core is no less loaded, so the cores alternate; the threshold then
    # refuses core 0 once it holds `threshold` clusters.
    p = 8
    inter = make_inter(np.zeros((p, p)), access=np.full((p, 1), 3.0))
    core, rule = memory_centric(inter, table2(2, (1, 2)), threshold=4)
    assert core.tolist() == [0, 1, 0, 1, 0, 1, 0, 1]
    assert rule == ["region", "region", "memory", "region", "memory", "region", "memory",
                    "threshold"]
    core3, rule3 = memory_centric(inter, table2(2, (1, 2)), threshold=3)
    assert core3.tolist() == [0, 1, 0, 1, 0, 1, 1, 0]
    assert rule3 == ["region", "region", "memory", "region", "memory", "threshold", "threshold",
                     "threshold"]
    # with a free core per cluster, parallelism wins: one cluster per core
    core16, rule16 = memory_centric(inter, table2(16), threshold=4)
    assert len(set(core16.tolist())) == p and "memory" not in rule16
    with pytest.raises(InputError, match="threshold"):
        memory_centric(inter, table2(2), threshold=0)


def test_memory_centric_puts_communicating_clusters_next_to_each_other():
    # two heavy pairs (0, 1) and (2, 3) on a 4 x 4 mesh: each pair ends up one hop apart
    comm = np.zeros((4, 4))
    comm[0, 1] = comm[1, 0] = 3200
    comm[2, 3] = comm[3, 2] = 6400
    m = table2(16)
    core, rule = memory_centric(make_inter(comm), m)
    assert m.hops(core[0], core[1]) == 1 and m.hops(core[2], core[3]) == 1
    assert rule.count("nearby") == 2 and rule.count("region") == 2
    # independent pairs go to different regions
    region = architecture_decomposition(m)
    assert region[core[0]] != region[core[2]]


def test_heterogeneous_speeds_get_proportional_clusters():
    m = machine_from_dict({"cores": 2, "mesh": [1, 2], "core_speed": [3.0, 1.0]})
    inter = make_inter(np.zeros((8, 8)))
    core, _ = memory_centric(inter, m)
    assert np.bincount(core, minlength=2).tolist() == [6, 2]
    assert np.bincount(comm_greedy(inter, m), minlength=2).tolist() == [6, 2]


def test_baselines():
    m = table2(4)  # 2 x 2
    assert round_robin(6, m).tolist() == [0, 1, 2, 3, 0, 1]
    r = random_mapping(8, m, seed=3)
    assert np.bincount(r).tolist() == [2, 2, 2, 2]
    assert np.array_equal(r, random_mapping(8, m, seed=3))
    assert not np.array_equal(r, random_mapping(8, m, seed=4))
    comm = np.zeros((4, 4))
    comm[0, 3] = comm[3, 0] = 1000
    comm[1, 2] = comm[2, 1] = 1000
    comm[0, 1] = 1
    inter = make_inter(comm)
    for core in (comm_greedy(inter, m), recursive_bisection(inter, m)):
        assert sorted(core.tolist()) == [0, 1, 2, 3]
        assert m.hops(core[0], core[3]) == 1 and m.hops(core[1], core[2]) == 1
    # round-robin puts 0 and 3 (and 1 and 2) diagonally apart: 2 hops
    assert hop_bytes(inter, round_robin(4, m), m) == (4001.0, 1000 * 2 * 2 * 2 + 1)


def test_place_registry_and_memory_check():
    inter = make_inter(np.zeros((2, 2)), access=[[1, 0], [0, 1]], object_bytes=[3e9, 3e9])
    small = machine_from_dict({"cores": 2, "memory": {"bytes_per_node": [2, 2]},
                               "numa": {"node_of_core": [0, 1], "latency_cycles": [[100, 120], [120, 100]]}})
    with pytest.raises(InputError, match="cluster 0 touches 3,000,000,000 bytes.*largest NUMA node"):
        place(inter, small)
    with pytest.raises(InputError, match="exceed the memory"):
        check_memory(make_inter(np.zeros((2, 2)), access=[[1, 0], [0, 1]], object_bytes=[1.5e9, 1.5e9]),
                     machine_from_dict({"cores": 2, "memory": {"bytes_per_node": [2_000_000_000]},
                                        "numa": {"latency_cycles": [[100]]}}))
    with pytest.raises(InputError, match="unknown mapping 'nope'"):
        place(make_inter(np.zeros((2, 2))), table2(2), "nope")


def test_every_mapper_on_a_sample(strassen8):
    from vcut.partition import partition_graph

    trace, g = strassen8
    part = partition_graph(g, 16, "wb-libra")
    cl = from_edge_partition(part, g.node_object)
    inter = interactions(cl, trace.obj_size)
    assert inter.work.sum() == pytest.approx(g.weight.sum())
    assert inter.footprint.max() > 0 and inter.messages > 0
    m = table2(16)
    hb = {}
    for method in MAPPERS:
        pl = place(inter, m, method, clustering=cl)
        assert pl.core.shape == (16,) and sorted(np.bincount(pl.core, minlength=16)) == [1] * 16
        hb[method] = pl.info["hop_bytes"]
    assert hb["memory-centric"] < hb["round-robin"]
    assert hb["comm-greedy"] < hb["round-robin"]


def test_time_aware_is_never_slower_than_memory_centric(strassen8):
    from mapping.interactions import from_edge_partition, interactions
    from mapping.memory_centric import memory_centric
    from mapping.simulate import simulate
    from mapping.time_aware import compact, time_aware
    from vcut.partition import partition_graph

    trace, g = strassen8
    m = load_machine("mesh:4x4")
    part = partition_graph(g, 8, "par", options={"latency": m.mean_message_cycles(32)})
    cl = from_edge_partition(part, g.node_object)
    inter = interactions(cl, trace.obj_size)
    start, _ = memory_centric(inter, m, 4)
    t_start = simulate(cl, start, m).makespan
    core, info = time_aware(cl, inter, m, 4, seed=0, evals=6)
    assert info["makespan_start"] == t_start and info["evaluations"] == 6
    assert info["makespan"] == simulate(cl, core, m).makespan <= t_start
    assert info["makespan"] <= simulate(cl, compact(8, m), m).makespan
    assert info["makespan"] <= simulate(cl, place(inter, m, "comm-greedy").core, m).makespan
    for other in ("round-robin", "random", "recursive-bisection"):
        assert info["makespan"] <= simulate(cl, place(inter, m, other).core, m).makespan
    again, _ = time_aware(cl, inter, m, 4, seed=0, evals=6)
    assert np.array_equal(again, core)
    none, info = time_aware(cl, inter, m, 4, seed=0, evals=0)
    assert np.array_equal(none, start) and info["makespan"] is None
    with pytest.raises(InputError, match="clustering"):
        place(inter, m, "time-aware")


def test_time_aware_judges_a_start_its_caller_simulated_beyond_the_budget(strassen8,
                                                                          monkeypatch):
    # a budget of one simulation: the memory-centric start alone is simulated; the compact
    # placement, which the caller simulated already (par's steering), is judged too
    # without a simulation, and kept where it is faster
    import mapping.time_aware as ta
    from mapping.memory_centric import memory_centric
    from mapping.simulate import simulate
    from vcut.partition import partition_graph

    trace, g = strassen8
    m = load_machine("table2:8")
    part = partition_graph(g, 8, "par", options={"latency": m.mean_message_cycles(32)})
    cl = from_edge_partition(part, g.node_object)
    inter = interactions(cl, trace.obj_size)
    mc = np.asarray(memory_centric(inter, m, 4)[0])
    t_mc = simulate(cl, mc, m).makespan
    cc = ta.compact(8, m)
    held = simulate(cl, cc, m)
    assert not np.array_equal(mc, cc) and held.makespan != t_mc
    calls = []
    monkeypatch.setattr(ta, "simulate", lambda cl, core, *a, real=ta.simulate: (
        calls.append(np.array(core)) or real(cl, core, *a)))
    sims = {"compact": (cc, held)}
    core, info = ta.time_aware(cl, inter, m, 4, seed=0, evals=1, simulations=sims)
    assert len(calls) == 1 and np.array_equal(calls[0], mc)
    assert info["makespan_start"] == t_mc and info["evaluations"] == 1
    assert info["makespan"] == min(t_mc, held.makespan)
    assert np.array_equal(core, cc if held.makespan < t_mc else mc)
    assert np.array_equal(sims["time-aware"][0], core)
    assert sims["memory-centric"][1].makespan == t_mc
    # without it, the same budget keeps the memory-centric start
    calls.clear()
    alone, info = ta.time_aware(cl, inter, m, 4, seed=0, evals=1)
    assert len(calls) == 1 and np.array_equal(alone, mc) and info["makespan"] == t_mc
    # a simulation held under the name but of another placement is not taken for it
    calls.clear()
    other = {"compact": (mc[::-1].copy(), held)}
    core, info = ta.time_aware(cl, inter, m, 4, seed=0, evals=1, simulations=other)
    assert len(calls) == 1 and np.array_equal(core, mc) and info["makespan"] == t_mc
    # the default budget: at least the one simulation, at most MAX_EVALS
    assert ta.evaluations(10**12) == 1 and ta.evaluations(1) == ta.MAX_EVALS == 16
    assert ta.evaluations(ta.EVAL_TASKS // 3) == 3


def test_compact_fills_numa_nodes_first():
    from mapping.time_aware import compact

    # mesh:4x4 has four 2 x 2 NUMA quadrants: node 0 = cores 0, 1, 4, 5
    assert compact(8, load_machine("mesh:4x4")).tolist() == [0, 1, 4, 5, 2, 3, 6, 7]
    assert compact(18, load_machine("mesh:4x4")).tolist()[16:] == [0, 1]


def test_time_aware_speculating_two_moves_at_once_finds_the_one_at_a_time_result(
        strassen8, monkeypatch):
    """jobs=2 simulates move i + 1 beside move i (as if i is rejected) and proposes it again
    when i is kept: every placement jobs=1 simulates is simulated, at most one more per kept
    move, and the result is the same."""
    import mapping.time_aware as ta
    from mapping.interactions import from_edge_partition, interactions
    from vcut.partition import partition_graph

    trace, g = strassen8
    m = load_machine("mesh:4x4")
    part = partition_graph(g, 8, "par", options={"latency": m.mean_message_cycles(32)})
    cl = from_edge_partition(part, g.node_object)
    inter = interactions(cl, trace.obj_size)
    seen = []
    simulate = ta.simulate

    def recording(cl, core, *args):
        seen.append(tuple(core.tolist()))
        return simulate(cl, core, *args)

    monkeypatch.setattr(ta, "simulate", recording)
    kept_in_pairs = 0
    for seed in range(6):
        seen.clear()
        one = ta.time_aware(cl, inter, m, 4, seed=seed, evals=16, jobs=1)
        sequential = list(seen)
        seen.clear()
        two = ta.time_aware(cl, inter, m, 4, seed=seed, evals=16, jobs=2)
        assert np.array_equal(one[0], two[0])
        assert one[1] == two[1]
        missing = set(sequential) - set(seen)
        assert not missing
        extra = len(seen) - len(sequential)
        assert 0 <= extra <= one[1]["accepted"]
        kept_in_pairs += extra
    assert kept_in_pairs  # the path that proposes a move again ran
