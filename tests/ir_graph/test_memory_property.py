"""Byte-level memory dependencies of the real kernel against a brute-force reference."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from ir_graph import dependency_kernels
from ir_graph.dependency_kernels import KIND_MEM, KIND_WAR, KIND_WAW
from ir_graph.build import segments

access = st.tuples(st.integers(0, 40), st.sampled_from([0, 1, 2, 4, 8, 12]), st.booleans())


def run_kernel(accesses, war, waw):
    """Each access is its own dynamic instruction in one activation, one block."""
    n = len(accesses)
    addr = np.array([a for a, _, _ in accesses], dtype=np.uint64)
    size = np.array([s for _, s, _ in accesses], dtype=np.uint64)
    write = np.array([w for _, _, w in accesses], dtype=np.bool_)
    lo, hi, nseg = segments(addr, size)
    dyn_sid = write.astype(np.int32)  # sid 0: a load, sid 1: a store
    op_ptr = np.zeros(3, dtype=np.int64)
    bound = dependency_kernels.edge_bound(dyn_sid, op_ptr, write, lo, hi, war, waw)
    e_src = np.empty(bound, np.int64)
    e_dst = np.empty(bound, np.int64)
    e_kind = np.empty(bound, np.uint8)
    ne = dependency_kernels.dependencies(
        dyn_sid, np.zeros(n, np.int32), np.ones(2, np.bool_),
        np.zeros(1, np.int32), np.zeros(1, np.int32), np.zeros(1, np.int64),
        np.zeros(1, np.int32), np.full(1, -1, np.int32), np.full(1, -1, np.int64),
        np.array([n - 1], np.int64), np.zeros(2, np.int64), np.zeros(1, np.int32),
        op_ptr, np.zeros(0, np.uint8), np.zeros(0, np.int64), np.zeros(0, np.int32),
        np.zeros(2, np.bool_), np.zeros(2, np.bool_), np.zeros(2, np.bool_), np.full(2, -1, np.int32),
        np.arange(n + 1, dtype=np.int64), write, lo, hi, nseg, war, waw, e_src, e_dst, e_kind,
    )
    edges = {}
    for u, v, k in zip(e_src[:ne].tolist(), e_dst[:ne].tolist(), e_kind[:ne].tolist()):
        assert (u, v) not in edges  # one edge per pair
        edges[(u, v)] = k
    return edges


def brute_force(accesses, war, waw):
    """Scan back byte by byte: the obvious, slow definition."""
    expected = {}
    for v, (a, s, w) in enumerate(accesses):
        for byte in range(a, a + s):
            last_w = None
            readers = []
            for u in range(v - 1, -1, -1):
                ua, us, uw = accesses[u]
                if ua <= byte < ua + us:
                    if uw:
                        last_w = u
                        break
                    readers.append(u)
            if not w and last_w is not None:
                expected[(last_w, v)] = expected.get((last_w, v), 0) | KIND_MEM
            if w and waw and last_w is not None:
                expected[(last_w, v)] = expected.get((last_w, v), 0) | KIND_WAW
            if w and war:
                for r in readers:
                    expected[(r, v)] = expected.get((r, v), 0) | KIND_WAR
    return expected


@settings(max_examples=300, deadline=None)
@given(st.lists(access, min_size=1, max_size=40), st.booleans(), st.booleans())
def test_memory_edges_match_brute_force(accesses, war, waw):
    got = run_kernel(accesses, war, waw)
    assert got == brute_force(accesses, war, waw)
    assert all(u < v for u, v in got)


def test_segments_split_at_every_boundary():
    lo, hi, nseg = segments(np.array([0, 2, 4], np.uint64), np.array([8, 2, 0], np.uint64))
    # breakpoints 0, 2, 4, 8: segments [0,2) [2,4) [4,8)
    assert nseg == 3
    assert lo.tolist() == [0, 1, 2] and hi.tolist() == [3, 2, 2]
