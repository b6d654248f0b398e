"""Host loop of the Borůvka rounds on the device (the kernels, ``mst_*``, are in
`runtime.mst_kernels_gpu`; the algorithm is described in `runtime.mst_kernels`).

A round is five launches and one host synchronisation (the two list sizes):
reset the counters, discovery (a thread per active vertex: cursor, then an
``atomicMin`` of its first crossing edge's rank into its root's slot, the
survivors pushed block-aggregated), target, hook and jump (which also resets
the roots' slots and compacts the roots that go on). The rank-ordered
adjacency is built on the host (`traversal_kernels.symmetric_csr`, linear) and uploaded:
the order inside each vertex's list is what makes the cursors work, and a
device counting sort would have to restore it. Results do not depend on the
threads' order: keys are unique, so the forest is the CPU's.
"""

import time

import numpy as np

from .gpu import grid_blocks, _loop_info, require_gpu
from .mst_kernels_gpu import (mst_discover_kernel, mst_hook_kernel, mst_jump_kernel,
                              mst_labels_kernel, mst_reset_kernel, mst_target_kernel)
from .traversal_kernels import symmetric_csr

__all__ = ["boruvka_gpu"]


def boruvka_gpu(n, eu, ev, parent, forest, threads):
    """Borůvka's rounds on the device. Returns ``(rounds, edges examined, labels, forest,
    info)`` with ``info`` as `gpu._loop_info` gives it (``kernel_seconds`` the rounds)."""
    cu = require_gpu()
    t0 = time.perf_counter()
    m = len(eu)
    indptr, adj, erank = symmetric_csr(n, eu, ev, threads)

    def up(a):
        return cu.to_device(np.ascontiguousarray(a) if len(a) else np.zeros(1, a.dtype))

    d_indptr, d_adj, d_erank, d_eu, d_ev = (up(a) for a in (indptr, adj, erank, eu, ev))
    d_parent, d_forest = up(parent), up(forest)
    d_cursor = up(indptr[:n])
    d_best = up(np.full(n, m, dtype=np.int64))
    start = np.flatnonzero(indptr[1:] > indptr[:-1]).astype(np.int64)
    d_act = [up(start), cu.device_array(max(n, 1), dtype=np.int64)]
    d_roots = [up(start), cu.device_array(max(n, 1), dtype=np.int64)]
    d_target = cu.device_array(max(n, 1), dtype=np.int64)
    d_counts = up(np.zeros(3, dtype=np.int64))
    d_labels = cu.device_array(max(n, 1), dtype=np.int64)
    nact = nroots = len(start)
    rounds = syncs = launches = a = r = 0
    cu.synchronize()
    t1 = time.perf_counter()
    while nroots > 0:
        rounds += 1
        mst_reset_kernel[1, 1](d_counts)
        if nact:
            mst_discover_kernel[grid_blocks(nact)](d_indptr, d_adj, d_erank, d_parent, d_cursor,
                                               d_act[a], nact, d_best, d_act[1 - a], d_counts)
        grid = grid_blocks(nroots)
        mst_target_kernel[grid](d_roots[r], nroots, d_best, d_eu, d_ev, d_parent, d_target, m)
        mst_hook_kernel[grid](d_roots[r], nroots, d_best, d_target, d_parent, d_forest)
        mst_jump_kernel[grid](d_roots[r], nroots, d_target, d_parent, d_best, m, d_roots[1 - r],
                              d_counts[1:])
        launches += 5 if nact else 4
        counts = d_counts.copy_to_host()
        syncs += 1
        nact, nroots = int(counts[0]), int(counts[1])
        a, r = 1 - a, 1 - r
    if n:
        mst_labels_kernel[grid_blocks(n)](d_parent, d_labels)
        launches += 1
    cu.synchronize()
    t2 = time.perf_counter()
    labels = d_labels.copy_to_host()[:n]
    out = d_forest.copy_to_host()[:m]
    examined = int(d_counts.copy_to_host()[2])
    return rounds, examined, labels, out, _loop_info(t0, t1, t2, syncs, launches)
