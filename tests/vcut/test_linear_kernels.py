"""The linear-time kernels (`ir_graph.replicas`, `ir_graph.edge_lists`, `mapping.simulation_kernels`) against the
sorting formulations they replaced, on random graphs and the ten samples.

Every expectation here is computed by the straightforward numpy formulation
(``numpy.unique`` / ``lexsort`` over (vertex, cluster) keys), which is what
vcut computed before the kernels; results must agree exactly (bit for bit for
floating-point sums).
"""

import json
import os

import numpy as np
import pytest

from frontend import compile_program, trace_program
from ir_graph import build_graph
from ir_graph.graph import Graph
from mapping import simulation_kernels as mk
from mapping.machine import MEMORY_CYCLES, table2
from ir_graph.edge_lists import execution_order, simple_edges
from ir_graph.replicas import replica_counts, replica_table
from vcut.pipeline.analysis import analyze_graph

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


# -- reference formulations ----------------------------------------------------
def ref_simplify(src, dst, weight, n):
    n = max(n, 1)
    a = np.minimum(src, dst).astype(np.int64)
    b = np.maximum(src, dst).astype(np.int64)
    loop = a == b
    keys = a * n + b
    keys[loop] = -1
    uniq, first, inv = np.unique(keys, return_index=True, return_inverse=True)
    shift = 1 if len(uniq) and uniq[0] == -1 else 0
    first = first[shift:]
    rank = np.argsort(first, kind="stable")
    pos = np.empty(len(first), dtype=np.int64)
    pos[rank] = np.arange(len(first))
    input_edge = np.where(loop, -1, pos[np.maximum(inv - shift, 0)])
    sel = first[rank]
    w = np.bincount(input_edge[~loop], weights=weight[~loop], minlength=len(sel))
    return src[sel], dst[sel], w, input_edge, int(loop.sum()), int((~loop).sum() - len(sel))


def ref_masters(src, dst, assign, weight, n, p):
    v = np.concatenate([src, dst]).astype(np.int64)
    c = np.concatenate([assign, assign]).astype(np.int64)
    w = np.concatenate([weight, weight])
    keys, inv = np.unique(v * p + c, return_inverse=True)
    wsum = np.bincount(inv, weights=w)
    kv, kc = keys // p, keys % p
    order = np.lexsort((kc, -wsum, kv))
    first = np.r_[True, kv[order][1:] != kv[order][:-1]]
    master = np.full(n, -1, dtype=np.int32)
    master[kv[order][first]] = kc[order][first]
    return master


def ref_replicas(src, dst, assign, n, p):
    keys = np.unique(np.concatenate([src, dst]).astype(np.int64) * p
                     + np.concatenate([assign, assign]))
    return np.bincount(keys // p, minlength=n), keys


def random_graph(rng, n, m, loops=True):
    src = rng.integers(0, n, m)
    dst = rng.integers(0, n, m)
    if not loops:
        dst = np.where(dst == src, (dst + 1) % n, dst)
    return src.astype(np.int32), dst.astype(np.int32), rng.integers(1, 5, m).astype(np.float64)


# -- random graphs -------------------------------------------------------------
@pytest.mark.parametrize("seed", range(6))
def test_simple_edges_equal_the_sorting_formulation(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(1, 40))
    src, dst, w = random_graph(rng, n, int(rng.integers(1, 300)))
    got = simple_edges(src, dst, w, n)
    exp = ref_simplify(src, dst, w, n)
    for g, e in zip(got[:3], exp[:3]):
        np.testing.assert_array_equal(g, e)
    if got[3] is None:
        np.testing.assert_array_equal(exp[3], np.arange(len(src)))
    else:
        np.testing.assert_array_equal(got[3], exp[3])
    assert got[4:] == exp[4:]


def test_simple_graph_is_returned_without_copies():
    src = np.array([0, 1, 2, 0], dtype=np.int32)
    dst = np.array([1, 2, 3, 3], dtype=np.int32)
    w = np.array([1.0, 2.0, 3.0, 4.0])
    s, d, ww, input_edge, loops, repeats = simple_edges(src, dst, w, 4)
    assert s is src and d is dst and ww is w and input_edge is None
    assert (loops, repeats) == (0, 0)
    # a repeat in the other direction, and a loop
    s, d, ww, input_edge, loops, repeats = simple_edges(
        np.array([0, 1, 2, 2]), np.array([1, 0, 2, 3]), np.array([1.0, 2.0, 5.0, 1.0]), 4)
    assert s.tolist() == [0, 2] and d.tolist() == [1, 3] and ww.tolist() == [3.0, 1.0]
    assert input_edge.tolist() == [0, 0, -1, 1] and (loops, repeats) == (1, 1)


@pytest.mark.parametrize("seed", range(8))
def test_graphs_sorted_by_destination_take_the_one_pass_check(seed):
    """Edges sorted by dst with src < dst (IR graphs' order): the one-pass check
    answers, and the result is the sorting formulation's, repeats or not."""
    from ir_graph.edge_lists import _simple_by_dst

    rng = np.random.default_rng(50 + seed)
    n = int(rng.integers(3, 60))
    dst = np.sort(rng.integers(1, n, int(rng.integers(1, 200))))
    src = (rng.random(len(dst)) * dst).astype(np.int64)  # 0 <= src < dst
    if seed % 2:  # distinct sources within each destination's run: simple
        pairs = np.unique(np.stack([dst, src], axis=1), axis=0)
        dst, src = pairs[:, 0], pairs[:, 1]
    mix = rng.permutation(len(dst))  # sources in any order within a destination's run
    keep = mix[np.argsort(dst[mix], kind="stable")]
    src, dst = src[keep], dst[keep]
    w = rng.integers(1, 5, len(src)).astype(np.float64)
    src, dst = src.astype(np.int32), dst.astype(np.int32)
    exp = ref_simplify(src, dst, w, n)
    simple = exp[5] == 0
    runs = np.diff(np.flatnonzero(np.r_[True, dst[1:] != dst[:-1], True]))
    assert _simple_by_dst(src, dst) == (simple and runs.max() <= 16)
    got = simple_edges(src, dst, w, n)
    for g, e in zip(got[:3], exp[:3]):
        np.testing.assert_array_equal(g, e)
    assert got[4:] == exp[4:] and (got[3] is None) == simple
    # a long run of one destination is simple but not for the one-pass check
    long_src = np.arange(20, dtype=np.int32)
    assert not _simple_by_dst(long_src, np.full(20, 25, np.int32))
    assert simple_edges(long_src, np.full(20, 25, np.int32), np.ones(20), 26)[3] is None


@pytest.mark.parametrize("seed", range(6))
def test_replica_table_equals_the_sorting_formulation(seed):
    rng = np.random.default_rng(100 + seed)
    n, p = int(rng.integers(2, 50)), int(rng.integers(1, 70))
    src, dst, w = random_graph(rng, n, int(rng.integers(1, 400)), loops=False)
    w = rng.random(len(src))  # sums of random floats: the order of additions matters
    assign = rng.integers(0, p, len(src)).astype(np.int32)
    t = replica_table(src, dst, assign, w, n, p)
    counts, keys = ref_replicas(src, dst, assign, n, p)
    np.testing.assert_array_equal(t.counts, counts)
    np.testing.assert_array_equal(replica_counts(src, dst, assign, n, p), counts)
    np.testing.assert_array_equal(t.vertex() * p + t.cluster, keys)
    np.testing.assert_array_equal(t.src, np.searchsorted(keys, src.astype(np.int64) * p + assign))
    np.testing.assert_array_equal(t.dst, np.searchsorted(keys, dst.astype(np.int64) * p + assign))
    np.testing.assert_array_equal(t.n_in, np.bincount(t.dst, minlength=len(keys)))
    np.testing.assert_array_equal(t.n_out, np.bincount(t.src, minlength=len(keys)))
    np.testing.assert_array_equal(t.masters(), ref_masters(src, dst, assign, w, n, p))


@pytest.mark.parametrize("seed", range(4))
def test_execution_order_sorts_by_destination_then_source(seed):
    rng = np.random.default_rng(200 + seed)
    src, dst, _ = random_graph(rng, 30, 200)
    if seed % 2:  # sorted by destination, sources shuffled within: the IR graph case
        k = np.argsort(dst, kind="stable")
        src, dst = src[k], dst[k]
    order = execution_order(src, dst)
    np.testing.assert_array_equal(np.arange(len(src)) if order is None else order,
                                  np.lexsort((src, dst)))
    k = np.lexsort((src, dst))
    assert execution_order(src[k], dst[k]) is None


def test_object_clusters_is_the_access_matrix():
    rng = np.random.default_rng(7)
    obj = rng.integers(-1, 20, 500).astype(np.int32)
    cl = rng.integers(0, 40, 500).astype(np.int32)
    indptr, indices, data = mk.object_clusters(obj, cl, 20, 40)
    dense = np.zeros((40, 20))
    np.add.at(dense, (cl[obj >= 0], obj[obj >= 0]), 1.0)
    got = np.zeros((40, 20))
    for o in range(20):
        seg = indices[indptr[o]:indptr[o + 1]]
        assert np.all(np.diff(seg) > 0)
        got[seg, o] = data[indptr[o]:indptr[o + 1]]
    np.testing.assert_array_equal(got, dense)


# -- the ten samples -----------------------------------------------------------
def _sample_graphs():
    with open(os.path.join(ROOT, "samples", "manifest.json")) as fh:
        return json.load(fh)["samples"]


@pytest.fixture(scope="module")
def sample_graphs():
    cwd = os.getcwd()
    out = {}
    try:
        os.chdir(os.path.join(ROOT, "samples"))
        for s in _sample_graphs():
            tr = trace_program(compile_program(s["source"], defines=s["defines"]), timing=False)
            out[s["name"]] = (build_graph(tr), tr.obj_size)
    finally:
        os.chdir(cwd)
    return out


def ref_simulation(cl, core, machine, value_bytes=32):
    """The simulator's inputs built by sorting (vertex, cluster) keys, run by the kernel."""
    p = np.int64(cl.p)
    order = np.lexsort((cl.src, cl.dst))
    u, v = cl.src[order].astype(np.int64), cl.dst[order].astype(np.int64)
    c = cl.cluster[order].astype(np.int64)
    skey, dkey = u * p + c, v * p + c
    keys = np.unique(np.concatenate([skey, dkey]))
    rs, rd = np.searchsorted(keys, skey), np.searchsorted(keys, dkey)
    rv, rc = keys // p, keys % p
    ptr = np.zeros(cl.n + 1, dtype=np.int64)
    np.cumsum(np.bincount(rv, minlength=cl.n), out=ptr[1:])
    cl_ptr = np.zeros(cl.p + 1, dtype=np.int64)
    np.cumsum(np.bincount(c, minlength=cl.p), out=cl_ptr[1:])
    core = np.asarray(core, dtype=np.int64)
    core_ptr = np.zeros(machine.cores + 1, dtype=np.int64)
    np.cumsum(np.bincount(core, minlength=machine.cores), out=core_ptr[1:])
    t_obj = cl.obj[order].astype(np.int64)
    finish, busy, links, stats, _ = mk.simulate_events(
        np.empty(0, np.int64), c, cl.weight[order], t_obj, rs, rd, rv, rc,
        np.bincount(rd, minlength=len(keys)).astype(np.int64),
        np.bincount(rs, minlength=len(keys)).astype(np.int64), ptr, cl.home.astype(np.int64),
        np.empty(0, np.int64), cl_ptr, np.argsort(c, kind="stable").astype(np.int64), core, core_ptr,
        np.argsort(core, kind="stable").astype(np.int64),
        np.asarray(machine.core_speed, dtype=np.float64),
        np.asarray(machine.numa_of_core, dtype=np.int64),
        np.asarray(machine.numa_latency, dtype=np.float64), MEMORY_CYCLES, machine.mesh_cols,
        float(machine.hop_cycles), value_bytes / machine.link_bytes_per_cycle,
        float(value_bytes), machine.cores * 4, int(t_obj.max()) + 1, int(machine.issue_window),
        np.empty(len(keys) + machine.cores + 1, dtype=np.int64), np.zeros(2, np.int64))
    out = np.empty_like(finish)
    out[order] = finish
    return out, busy, links, stats


# md, the largest sample, took 39 s of the 20-minute CI budget here: the formulation is
# compared on the other nine samples (fft at p = 8 and 64)
@pytest.mark.parametrize("name", [s["name"] for s in _sample_graphs() if s["name"] != "md"])
def test_sample_figures_equal_the_sorting_formulation(sample_graphs, name):
    g, obj = sample_graphs[name]
    for p in (8, 64) if name == "fft" else (8,):
        a = analyze_graph(g, p, "wb-libra", object_bytes=obj, baselines=False)
        cl = a.clustering
        assert cl.src is g.src and cl.dst is g.dst  # IR graphs are simple and oriented
        np.testing.assert_array_equal(cl.home, ref_masters(cl.src, cl.dst, cl.cluster,
                                                           cl.weight, g.n, p))
        counts, _ = ref_replicas(cl.src, cl.dst, cl.cluster, g.n, p)
        assert a.partition["replication_factor"] == counts.sum() / (counts > 0).sum()
        # messages: one per (vertex, cluster) with an in-edge (gather) / out-edge (scatter) away
        # from the vertex's home
        kin = np.unique(cl.dst.astype(np.int64) * p + cl.cluster)
        kout = np.unique(cl.src.astype(np.int64) * p + cl.cluster)
        n_msg = (np.count_nonzero(kin % p != cl.home[kin // p])
                 + np.count_nonzero(kout % p != cl.home[kout // p]))
        assert a.interactions.messages == n_msg
        order = np.lexsort((cl.src, cl.dst))
        first = [int(np.flatnonzero(cl.cluster[order] == c)[0]) for c in range(p)]
        assert a.interactions.first.tolist() == first
        mem = cl.obj >= 0
        dense = np.zeros(a.interactions.access.shape)
        np.add.at(dense, (cl.cluster[mem], cl.obj[mem]), 1.0)
        np.testing.assert_array_equal(a.interactions.access.toarray(), dense)
        finish, busy, links, stats = ref_simulation(cl, a.placement.core, table2(p))
        np.testing.assert_array_equal(a.result.finish, finish)
        np.testing.assert_array_equal(a.result.busy, busy)
        np.testing.assert_array_equal(a.result.link_bytes, links)
        assert a.result.hop_bytes == stats[1] and a.result.messages == int(stats[2])


def test_graph_is_not_copied_by_the_clustering():
    src = np.array([0, 1, 0, 2], dtype=np.int32)
    dst = np.array([1, 2, 2, 3], dtype=np.int32)
    g = Graph(n=4, src=src, dst=dst, weight=np.ones(4), directed=True)
    a = analyze_graph(g, 2, "wb-libra", baselines=False)
    assert a.clustering.src is src and a.clustering.dst is dst


@pytest.mark.parametrize("seed", range(4))
def test_mask_replica_table_equals_the_incidence_one(seed, monkeypatch):
    """p <= 64: the table from per-vertex cluster masks is the incidence CSR's, array
    for array (integer weights: ties between clusters go to the lowest id in both)."""
    import ir_graph.replicas as rep

    rng = np.random.default_rng(300 + seed)
    for _ in range(25):
        n, p = int(rng.integers(2, 60)), int(rng.integers(1, rep.MASK_CLUSTERS + 1))
        src, dst, w = random_graph(rng, n, int(rng.integers(1, 500)), loops=False)
        if seed % 2:
            w = rng.random(len(src))
        assign = rng.integers(0, p, len(src)).astype(np.int32)
        masks = replica_table(src, dst, assign, w, n, p)
        counts = replica_counts(src, dst, assign, n, p)
        monkeypatch.setattr(rep, "MASK_CLUSTERS", 0)
        csr = replica_table(src, dst, assign, w, n, p)
        np.testing.assert_array_equal(counts, replica_counts(src, dst, assign, n, p))
        monkeypatch.undo()
        for f in ("ptr", "cluster", "master", "n_in", "n_out", "src", "dst"):
            a, b = getattr(masks, f), getattr(csr, f)
            assert a.dtype == b.dtype, f
            np.testing.assert_array_equal(a, b, err_msg=f)


@pytest.mark.parametrize("seed", range(3))
def test_mask_replica_table_in_threads_equals_one_pass(seed, three_threads):
    """The mask table's passes split over threads (edge ranges, then replica ranges) give
    the one-thread table array for array, the weight sums (random floats: the order of
    additions shows in the masters) included."""
    import ir_graph.replicas as rep

    rng = np.random.default_rng(400 + seed)
    n, p = int(rng.integers(50, 300)), int(rng.integers(2, rep.MASK_CLUSTERS + 1))
    src, dst, _ = random_graph(rng, n, 3000, loops=False)
    w = rng.random(len(src))
    assign = rng.integers(0, p, len(src)).astype(np.int32)
    one = replica_table(src, dst, assign, w, n, p)
    calls = three_threads(rep)
    split = replica_table(src, dst, assign, w, n, p)
    assert calls == [3, 6, 3]  # the masks, the ranks (both ends) and the sums, 3 threads
    for f in ("ptr", "cluster", "master", "n_in", "n_out", "src", "dst"):
        np.testing.assert_array_equal(getattr(one, f), getattr(split, f), err_msg=f)
    np.testing.assert_array_equal(replica_counts(src, dst, assign, n, p), one.counts)


@pytest.mark.parametrize("seed", range(3))
def test_edge_passes_in_threads_equal_one_pass(seed, three_threads):
    """The repeated-edge merge's grouping and the degrees, their edge ranges in three
    threads, give the one-thread results (the merged graph and the map of every input
    edge, in first-appearance order)."""
    import ir_graph.edge_lists as el

    rng = np.random.default_rng(500 + seed)
    n = int(rng.integers(20, 200))
    src, dst, _ = random_graph(rng, n, 5000, loops=True)
    w = rng.random(len(src))
    one = simple_edges(src, dst, w, n)
    deg = el.degrees(src, dst, n)
    calls = three_threads(el)
    split = simple_edges(src, dst, w, n)
    assert calls == [3, 3]  # the grouping's counts and places
    for a, b in zip(one[:4], split[:4]):
        np.testing.assert_array_equal(a, b)
    assert one[4:] == split[4:] and one[4] > 0 and one[5] > 0  # loops and repeats met
    np.testing.assert_array_equal(el.degrees(src, dst, n), deg)
    assert calls[2:] == [3]
    np.testing.assert_array_equal(deg, np.bincount(src, minlength=n)
                                  + np.bincount(dst, minlength=n))
