"""Numba kernels of `mapping.insight`: one linear pass each, arrays only.

(Beside `mapping.simulation_kernels`, the simulator's, so that the report's passes and
the event loop compile and change apart.)
"""

import numpy as np

from vcut_base.jitcache import njit

__all__ = ["task_starts", "longest_path", "occupancy"]


@njit(cache=True, nogil=True)
def task_starts(cluster, place, core_speed, numa_of_core, w, finish, obj, n_obj, lat,
                mem_cycles):
    """``(start, core)`` of every task: `mapping.insight.task_intervals` in two passes.

    cluster : int (m,) cluster of each task; place : int64 (p,) core of each cluster;
    core_speed : float64 (cores,); numa_of_core : int64 (cores,); w, finish : float64
    (m,); obj : int (m,) object of each task (-1: none), ``n_obj`` objects; lat :
    float64 (nodes, nodes) memory latencies; mem_cycles: a DRAM access. The first pass
    finds the NUMA node of each object's first toucher, the task of the earliest local
    start (every task costed locally; ties: the earlier task), the second charges every
    task its remote share. The same floating-point
    operations, in the same order, as the array expressions it replaces.
    """
    m = cluster.shape[0]
    home = np.full(max(n_obj, 1), -1, dtype=np.int64)
    best = np.full(max(n_obj, 1), np.inf)
    for e in range(m):
        o = obj[e]
        if o >= 0:
            k = place[cluster[e]]
            local = finish[e] - w[e] / core_speed[k]
            if local < best[o]:
                best[o] = local
                home[o] = numa_of_core[k]
    start = np.empty(m)
    core = np.empty(m, dtype=np.int64)
    for e in range(m):
        k = place[cluster[e]]
        core[e] = k
        a = numa_of_core[k]
        b = a
        if obj[e] >= 0 and n_obj > 0:
            b = home[obj[e]]
        f = w[e] / mem_cycles
        if f > 1.0:
            f = 1.0
        extra = f * (lat[a, b] - lat[a, a])
        start[e] = finish[e] - (w[e] + extra) / core_speed[k]
    return start, core


@njit(cache=True, nogil=True)
def longest_path(order, src, dst, d, n, pred):
    """The longest chain of task durations through the task DAG.

    order : int (m,) tasks in execution order (empty: the arrays are in it);
    src, dst : int (m,) with ``src < dst``; d : float64 (m,) durations;
    ``pred`` (n,), filled with -1 by the caller, receives the task that last
    raised each node's ready time. Returns ``(length, path)``: the path's
    tasks (int64) from its first to its last; ties go to the earlier task in
    execution order.
    """
    ready = np.zeros(n)
    length = 0.0
    last = -1
    for k in range(src.shape[0]):
        e = k if order.shape[0] == 0 else order[k]
        f = ready[src[e]] + d[e]
        if f > ready[dst[e]]:
            ready[dst[e]] = f
            pred[dst[e]] = e
        if f > length:
            length = f
            last = e
    count = 0
    e = last
    while e >= 0:
        count += 1
        e = pred[src[e]]
    path = np.empty(count, dtype=np.int64)
    e = last
    for i in range(count - 1, -1, -1):
        path[i] = e
        e = pred[src[e]]
    return length, path


@njit(cache=True, nogil=True)
def occupancy(start, finish, row, rows, width, bins):
    """Busy share of every (row, time bin): interval ``[start, finish)`` of
    each task on row ``row[e]`` (-1: not drawn), bins ``[b * width, (b + 1) *
    width)``. Returns float64 (rows, bins); O(tasks + rows * bins)."""
    busy = np.zeros((rows, bins))
    full = np.zeros((rows, bins + 1))
    for e in range(start.shape[0]):
        r = row[e]
        if r < 0 or finish[e] <= start[e]:
            continue
        b0 = min(int(start[e] / width), bins - 1)
        b1 = min(int(finish[e] / width), bins - 1)
        if b0 == b1:
            busy[r, b0] += finish[e] - start[e]
            continue
        busy[r, b0] += (b0 + 1) * width - start[e]
        busy[r, b1] += finish[e] - b1 * width
        full[r, b0 + 1] += 1.0
        full[r, b1] -= 1.0
    for r in range(rows):
        run = 0.0
        for b in range(bins):
            run += full[r, b]
            busy[r, b] = (busy[r, b] + run * width) / width
    return busy
