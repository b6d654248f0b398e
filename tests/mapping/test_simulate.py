"""The discrete-event cost model on cases solved by hand (see mapping.simulate)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vcut_base.errors import InputError
from mapping.interactions import Clustering, from_vertex_partition, interactions
from mapping.machine import machine_from_dict, table2
from mapping.placement import hop_bytes, independent_time
from mapping.simulate import simulate


def clustering(edges, cluster, home, n=None, obj=None, kind="vertex-cut"):
    src = np.array([a for a, _, _ in edges], dtype=np.int64)
    dst = np.array([b for _, b, _ in edges], dtype=np.int64)
    w = np.array([x for _, _, x in edges], dtype=np.float64)
    n = n or int(max(src.max(), dst.max())) + 1
    return Clustering(n=n, p=int(max(cluster)) + 1, src=src, dst=dst, weight=w,
                      cluster=np.array(cluster, dtype=np.int32), home=np.array(home, dtype=np.int32),
                      obj=np.full(len(src), -1, dtype=np.int64) if obj is None else np.array(obj),
                      kind=kind, method="hand")


def test_two_clusters_one_link():
    # 0 -> 1 in cluster 0 (10 cycles), 1 -> 2 in cluster 1 (20 cycles); vertex 1 is homed in
    # cluster 1, so cluster 0 sends its partial result: 1 hop = 2 cycles + 32 B / 16 B/cycle.
    cl = clustering([(0, 1, 10), (1, 2, 20)], [0, 1], home=[0, 1, 1])
    m = table2(2, (1, 2))
    r = simulate(cl, [0, 1], m)
    assert r.finish.tolist() == [10.0, 10 + 2 + 2 + 20.0]
    assert r.makespan == 34.0
    assert r.messages == 1 and r.communication_bytes == 32.0
    assert r.network_bytes == 32.0 and r.hop_bytes == 32.0
    assert r.link_bytes[0 * 4 + 0] == 32.0 and r.link_bytes.sum() == 32.0  # router 0, east
    assert r.busy.tolist() == [10.0, 20.0]
    assert r.seconds == pytest.approx(34.0 / 2.4e9)
    # both clusters on one core: no network, the same work in sequence
    one = simulate(cl, [0, 0], m)
    assert one.makespan == 30.0 and one.network_bytes == 0.0 and one.messages == 1
    # without dependency waits: core 1 works 20 cycles and receives one message (2 + 2)
    inter = interactions(cl)
    assert inter.dependencies() == [(0, 1)] and inter.comm.tolist() == [[0, 32], [0, 0]]
    assert inter.work.tolist() == [10.0, 20.0] and inter.first.tolist() == [0, 1]
    assert independent_time(inter, np.array([0, 1]), m, r.busy) == 24.0
    assert independent_time(inter, np.array([0, 0]), m, one.busy) == 30.0


def test_chain_over_three_cores():
    # a chain 0-1-2-3, one edge per cluster, cores in a row: each value crosses one hop
    cl = clustering([(0, 1, 10), (1, 2, 10), (2, 3, 10)], [0, 1, 2], home=[0, 0, 1, 2])
    r = simulate(cl, [0, 1, 2], table2(3, (1, 3)))
    assert r.finish.tolist() == [10.0, 24.0, 38.0]
    assert r.makespan == 38.0 and r.messages == 2 and r.hop_bytes == 64.0
    # reversed placement: cluster 0 on core 2, cluster 2 on core 0: the same hops
    assert simulate(cl, [2, 1, 0], table2(3, (1, 3))).makespan == 38.0
    # clusters 0 and 2 at the ends, cluster 1 two hops from... 0 -> core 0, 1 -> core 2, 2 -> core 1
    r2 = simulate(cl, [0, 2, 1], table2(3, (1, 3)))
    assert r2.finish.tolist() == [10.0, 10 + 4 + 2 + 10.0, 26 + 2 + 2 + 10.0]
    assert r2.hop_bytes == 32 * 2 + 32 * 1


def test_contention_on_one_link():
    # vertices 0 and 1 have no in-edges and are homed in cluster 0 (core 0); both are sent
    # to cluster 1 (core 1) at time 0 over the same link: the second waits 2 cycles for it.
    edges = [(0, 2, 100), (1, 2, 100), (0, 3, 1), (1, 3, 1)]
    cl = clustering(edges, [0, 0, 1, 1], home=[0, 0, 0, 1])
    r = simulate(cl, [0, 1], table2(2, (1, 2)))
    assert r.finish.tolist() == [100.0, 200.0, 5.0, 7.0]  # arrivals at 4 and 6
    assert r.link_bytes[0] == 64.0 and r.messages == 2
    # a wider link halves the serialisation: arrivals at 3 and 4
    wide = machine_from_dict({"cores": 2, "mesh": [1, 2], "link_bytes_per_cycle": 32})
    assert simulate(cl, [0, 1], wide).finish.tolist()[2:] == [4.0, 5.0]


def test_numa_first_touch_and_remote_latency():
    machine = machine_from_dict({"cores": 2, "mesh": [1, 2], "hop_cycles": 0,
                                 "numa": {"node_of_core": [0, 1],
                                          "latency_cycles": [[100, 300], [300, 100]]}})
    # cluster 0 touches object 0 first (100 cycles: a full DRAM access); cluster 1 then pays
    # the remote latency: 100 + 1 * (300 - 100); a 50-cycle access pays half of it.
    edges = [(0, 1, 100), (2, 3, 100), (4, 5, 50)]
    cl = clustering(edges, [0, 1, 1], home=[0, 0, 1, 1, 1, 1], obj=[0, 0, 0])
    r = simulate(cl, [0, 1], machine)
    assert r.busy.tolist() == [100.0, 300.0 + 150.0]
    assert r.remote_memory_tasks == 2
    # on one core nothing is remote
    assert simulate(cl, [0, 0], machine).makespan == 250.0


def test_heterogeneous_speed():
    machine = machine_from_dict({"cores": 2, "mesh": [1, 2], "core_speed": [1.0, 2.0]})
    cl = clustering([(0, 1, 10), (2, 3, 10)], [0, 1], home=[0, 0, 1, 1])
    assert simulate(cl, [0, 1], machine).finish.tolist() == [10.0, 5.0]


def test_edge_cut_sends_one_message_per_cut_edge():
    # vertex 0 (part 0) feeds three vertices of part 1: three cut edges, three messages
    src, dst, w = np.array([0, 0, 0]), np.array([1, 2, 3]), np.ones(3)
    cl = from_vertex_partition(src, dst, w, np.array([0, 1, 1, 1]), 2)
    assert cl.per_edge_messages and cl.cluster.tolist() == [1, 1, 1]
    r = simulate(cl, [0, 1], table2(2, (1, 2)))
    assert r.messages == 3 and interactions(cl).messages == 3
    # the three leave at time 0 and queue on the link: arrivals 4, 6, 8
    assert r.finish.tolist() == [5.0, 7.0, 9.0]
    # plain Python lists are the same edges
    same = from_vertex_partition([0, 0, 0], [1, 2, 3], [1.0] * 3, [0, 1, 1, 1], 2)
    assert simulate(same, [0, 1], table2(2, (1, 2))).finish.tolist() == [5.0, 7.0, 9.0]


def test_single_core_runs_all_work_back_to_back(strassen8):
    from mapping.interactions import from_edge_partition
    from vcut.partition import partition_graph

    g = strassen8[1]
    part = partition_graph(g, 4, "wb-libra")
    cl = from_edge_partition(part, g.node_object)
    r = simulate(cl, [0, 0, 0, 0], table2(1))
    assert r.makespan == pytest.approx(cl.weight.sum())
    assert r.network_bytes == 0.0 and r.remote_memory_tasks == 0
    # on four cores: never faster than a perfect split, never slower than one core plus
    # every message's latency; the simulated hop-bytes are the mapping's hop-bytes
    m = table2(4)
    r4 = simulate(cl, [0, 1, 2, 3], m)
    inter = interactions(cl)
    assert r4.makespan >= cl.weight.sum() / 4 - 1e-6
    assert r4.messages == inter.messages
    assert r4.communication_bytes == inter.communication_bytes
    net, hb = hop_bytes(inter, np.array([0, 1, 2, 3]), m)
    assert (r4.network_bytes, r4.hop_bytes) == (net, hb)
    assert np.all(r4.busy <= r4.makespan + 1e-6)


def test_bad_mapping_refused():
    cl = clustering([(0, 1, 10), (1, 2, 20)], [0, 1], home=[0, 1, 1])
    with pytest.raises(InputError, match="core 0..1"):
        simulate(cl, [0, 2], table2(2))
    with pytest.raises(InputError, match="2 clusters"):
        simulate(cl, [0], table2(2))


def _chain_bound(cl):
    """Lower bound of every task's finish: its weight after all in-tasks of its source."""
    order = np.lexsort((cl.src, cl.dst))
    done = np.zeros(cl.n)  # latest finish of the in-tasks of each vertex
    bound = np.zeros(len(order))
    for e in order:
        bound[e] = done[cl.src[e]] + cl.weight[e]
        done[cl.dst[e]] = max(done[cl.dst[e]], bound[e])
    return bound


@settings(max_examples=40, deadline=None)
@given(st.data())
def test_simulation_invariants(data):
    n = data.draw(st.integers(3, 12))
    pairs = data.draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1))
                               .filter(lambda t: t[0] != t[1]), min_size=1, max_size=30,
                               unique_by=lambda t: (min(t), max(t))))
    p = data.draw(st.integers(1, 4))
    src = np.array([min(t) for t in pairs])
    dst = np.array([max(t) for t in pairs])
    w = np.array(data.draw(st.lists(st.integers(1, 50), min_size=len(pairs), max_size=len(pairs))),
                 dtype=np.float64)
    cluster = np.array(data.draw(st.lists(st.integers(0, p - 1), min_size=len(pairs),
                                          max_size=len(pairs))), dtype=np.int32)
    home = np.full(n, -1, dtype=np.int32)
    for e in range(len(pairs)):  # any cluster holding an edge of the vertex may be its home
        for x in (src[e], dst[e]):
            if home[x] < 0:
                home[x] = cluster[e]
    cl = Clustering(n=n, p=p, src=src.astype(np.int64), dst=dst.astype(np.int64), weight=w,
                    cluster=cluster, home=home, obj=np.full(len(pairs), -1, dtype=np.int64),
                    kind="vertex-cut", method="hypothesis")
    m = table2(4)  # 2 x 2
    core = np.array(data.draw(st.lists(st.integers(0, 3), min_size=p, max_size=p)))
    r = simulate(cl, core, m)
    assert np.all(r.finish >= _chain_bound(cl) - 1e-9)  # dependencies are honoured
    assert r.makespan >= r.busy.max() - 1e-9
    assert r.busy.sum() == pytest.approx(w.sum())  # every task runs once, nothing is remote
    inter = interactions(cl)
    assert r.messages == inter.messages
    assert (r.network_bytes, r.hop_bytes) == hop_bytes(inter, core, m)
    one = simulate(cl, np.zeros(p, dtype=np.int64), m)  # one core never waits
    assert one.makespan == pytest.approx(w.sum())


def test_utilization_of_the_cores_in_use_and_of_all_cores_by_hand():
    # issue 61, item 14: two clusters on a 1 x 4 machine leave cores 2 and 3 empty. The
    # two-cluster case above: makespan 34, busy 10 (core 0) and 20 (core 1), so the cores in
    # use are busy (10 + 20) / (2 * 34) = 15/34 of the time and the machine (10 + 20) /
    # (4 * 34) = 15/68; a mean over all cores halves the figure of the cores that work.
    cl = clustering([(0, 1, 10), (1, 2, 20)], [0, 1], home=[0, 1, 1])
    r = simulate(cl, [0, 1], table2(4, (1, 4)))
    assert r.makespan == 34.0 and r.busy.tolist() == [10.0, 20.0, 0.0, 0.0]
    assert r.cores_used == 2
    assert r.utilization_used_cores == pytest.approx(15 / 34, rel=1e-15)
    assert r.utilization_all_cores == pytest.approx(15 / 68, rel=1e-15)
    d = r.to_dict()
    assert "mean_utilization" not in d
    assert (d["cores_used"], d["utilization_used_cores"], d["utilization_all_cores"]) == (
        2, r.utilization_used_cores, r.utilization_all_cores)
    # a core that holds a cluster counts as in use even when its cluster has no task
    empty = clustering([(0, 1, 10), (1, 2, 20)], [0, 1], home=[0, 1, 1])
    empty = Clustering(n=empty.n, p=3, src=empty.src, dst=empty.dst, weight=empty.weight,
                       cluster=empty.cluster, home=empty.home, obj=empty.obj,
                       kind="vertex-cut", method="hand")
    r3 = simulate(empty, [0, 1, 3], table2(4, (1, 4)))
    assert r3.cores_used == 3
    assert r3.utilization_used_cores == pytest.approx(30 / (3 * r3.makespan), rel=1e-15)
    assert r3.utilization_all_cores == pytest.approx(30 / (4 * r3.makespan), rel=1e-15)
