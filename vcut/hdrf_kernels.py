"""Numba kernels of HDRF (Petroni et al., CIKM 2015): `hdrf_assign` over the replica sets
of `ir_graph.replicas.replica_sets`, `hdrf_dense` on dense bitset rows (also one step
of a distributed stream, `vcut.distributed`).
"""

import numpy as np

from vcut_base.jitcache import helper, njit
from vcut_base.progress_kernels import completed, stopped_at
from ir_graph.replica_kernels import add_replica, count_rows, lowbit, pool_room, row_has, set_row

from .least_loaded import tree_of, tree_update, zero_loads

__all__ = ["hdrf_assign", "hdrf_dense", "hdrf_sparse"]


@helper
def _hdrf_start(u, v, degree, part, load, scale, tree, lam, eps, normalized, maxload):
    """HDRF's view of edge (u, v): ``(th_u, th_v, c_min, denom, best, best_s)``, the
    least loaded cluster being the first candidate."""
    if degree.shape[0] > 0:
        part[u] = degree[u]
        part[v] = degree[v]
    else:
        part[u] += 1
        part[v] += 1
    th_u = part[u] / (part[u] + part[v])
    c_min = tree[1]
    minload = load[c_min] / scale[c_min]
    if normalized == 1:  # the paper's formula
        denom = eps + maxload - minload
    elif normalized == 2:  # the HDRF reference code: its smallest size stays 0
        denom = eps + maxload
    else:
        denom = 1.0
    return th_u, 1.0 - th_u, c_min, denom, c_min, lam * (maxload - minload) / denom


@helper
def _hdrf_commit(best, load, scale, tree, size, maxload):
    """One more edge on cluster ``best``; returns the new largest load."""
    load[best] += 1.0
    if load[best] / scale[best] > maxload:
        maxload = load[best] / scale[best]
    tree_update(tree, best, size, load, scale)
    return maxload


@helper
def _least_not_full(load, scale, limit, c_min):
    """The least loaded cluster with ``load / scale < limit`` (ties: the lowest id);
    ``c_min`` when every cluster is full. O(p)."""
    best = c_min
    best_r = np.inf
    for c in range(load.shape[0]):
        r = load[c] / scale[c]
        if r < limit[c] and r < best_r:
            best_r = r
            best = c
    return best


@njit(cache=True, nogil=True)
def hdrf_dense(src, dst, order, cap, lam, eps, normalized, limit, degree, part, out, A, load,
                maxload, counter):
    """`hdrf_assign` on dense bitsets ``A`` (n, ceil(p / 64)), the vertices' rows,
    from the edge counts ``load`` (updated in place), their largest scaled value
    ``maxload`` and the partial degrees ``part``; returns the new ``maxload``.
    Cluster ``c`` is full when ``load[c] / scale[c] >= limit[c]`` (one bound for
    all in a whole stream; a distributed step is given its share of the room).
    The least loaded cluster, the fallback, is the least loaded one not full:
    with one bound for all that is the least loaded of all (when it is full, so
    is every cluster, and it takes the edge)."""
    nw = A.shape[1]
    scale = cap * cap.shape[0]
    size, tree = tree_of(load, scale)
    for k in range(order.shape[0]):
        if stopped_at(k, counter):
            break
        e = order[k]
        u = src[e]
        v = dst[e]
        th_u, th_v, c_min, denom, best, best_s = _hdrf_start(
            u, v, degree, part, load, scale, tree, lam, eps, normalized, maxload)
        if load[c_min] / scale[c_min] >= limit[c_min]:  # per-cluster limits only
            c_min = _least_not_full(load, scale, limit, c_min)
            best = c_min
            best_s = lam * (maxload - load[c_min] / scale[c_min]) / denom
        for which in range(2):
            x = u if which == 0 else v
            for wi in range(nw):
                bits = A[x, wi]
                while bits != np.uint64(0):
                    b = lowbit(bits)
                    c = wi * 64 + b
                    bits &= bits - np.uint64(1)
                    if load[c] / scale[c] >= limit[c] and c != c_min:
                        continue
                    s = lam * (maxload - load[c] / scale[c]) / denom
                    if (A[u, c // 64] >> np.uint64(c % 64)) & np.uint64(1):
                        s += 1.0 + (1.0 - th_u)
                    if (A[v, c // 64] >> np.uint64(c % 64)) & np.uint64(1):
                        s += 1.0 + (1.0 - th_v)
                    if s > best_s or (s == best_s and c < best):
                        best_s = s
                        best = c
        out[e] = best
        maxload = _hdrf_commit(best, load, scale, tree, size, maxload)
        A[u, best // 64] |= np.uint64(1) << np.uint64(best % 64)
        A[v, best // 64] |= np.uint64(1) << np.uint64(best % 64)
    completed(counter, order.shape[0])
    return maxload


@helper
def _hdrf_score(c, in_u, in_v, load, scale, limit, c_min, lam, maxload, denom, th_u, th_v, best,
                best_s):
    """``(best, best_s)`` after scoring cluster ``c`` of A(u) or A(v)."""
    if load[c] / scale[c] >= limit and c != c_min:
        return best, best_s
    s = lam * (maxload - load[c] / scale[c]) / denom
    if in_u:
        s += 1.0 + (1.0 - th_u)
    if in_v:
        s += 1.0 + (1.0 - th_v)
    if s > best_s or (s == best_s and c < best):
        return c, s
    return best, best_s


def hdrf_assign(src, dst, order, n, p, cap, lam, eps, normalized, limit, degree, out, sets,
                counter):
    """HDRF (Petroni et al., CIKM 2015) with partial degrees and edge-count loads.

    Score of cluster ``c`` for edge (u, v): ``g(u, c) + g(v, c) + lam * bal(c)``
    with ``g(x, c) = 1 + (1 - theta(x))`` if ``c`` in A(x) else 0 and
    ``theta(u) = d(u) / (d(u) + d(v))`` over the degrees seen so far (this edge
    included), or over ``degree`` when it is given (non-empty). ``bal(c) = maxload - load_c``, divided by ``eps + maxload -
    minload`` when ``normalized`` is 1 (the paper's formula), by ``eps + maxload``
    when it is 2 (the reference implementation, whose running minimum size
    never leaves 0: `vcut.cuts.hdrf.HDRF_NORMALIZED`). Loads are divided by
    the capacity fraction times p (equal shares: unchanged). Only clusters in
    A(u) or A(v), and the least loaded cluster, can score highest; ties go to
    the lowest id. ``sets``: empty replica sets (`ir_graph.replicas.replica_sets`);
    returns their bitset rows at the end (a new array when the pool grew).
    ``counter`` as for `vcut.greedy_kernels.greedy_assign`.

    Which kernel runs is decided here, in Python (`hdrf_dense` on dense bitsets,
    `hdrf_sparse` otherwise), so that a first run compiles only the one it needs.
    """
    cnt, ids, ovf, pool = sets
    if ids.shape[1] == 0:  # dense bitsets: the plain kernel
        hdrf_dense(src, dst, order, cap, lam, eps, normalized, np.full(p, float(limit)), degree,
                   np.zeros(n, dtype=np.int64), out, pool, np.zeros(p, dtype=np.float64), 0.0,
                   counter)
        count_rows(pool, cnt)
        return pool
    return hdrf_sparse(src, dst, order, n, p, cap, lam, eps, normalized, limit, degree, out,
                       sets, counter)


@njit(cache=True, nogil=True)
def hdrf_sparse(src, dst, order, n, p, cap, lam, eps, normalized, limit, degree, out, sets,
                counter):
    """`hdrf_assign` over replica sets with inline ids and overflow rows."""
    cnt, ids, ovf, pool = sets
    used = 0
    scale = cap * p
    load, size, tree = zero_loads(p, scale)
    part = np.zeros(n, dtype=np.int64)
    maxload = 0.0
    for k in range(order.shape[0]):
        if stopped_at(k, counter):
            break
        e = order[k]
        u = src[e]
        v = dst[e]
        th_u, th_v, c_min, denom, best, best_s = _hdrf_start(
            u, v, degree, part, load, scale, tree, lam, eps, normalized, maxload)
        for which in range(2):
            x = u if which == 0 else v
            y = v if which == 0 else u
            row = set_row(x, cnt, ids, ovf)
            ry = set_row(y, cnt, ids, ovf)
            if row < 0:
                for i in range(cnt[x]):
                    c = np.int64(ids[x, i])
                    in_y = row_has(y, ry, c, cnt, ids, pool)
                    best, best_s = _hdrf_score(c, which == 0 or in_y, which == 1 or in_y, load,
                                               scale, limit, c_min, lam, maxload, denom, th_u,
                                               th_v, best, best_s)
            else:
                for wi in range(pool.shape[1]):
                    bits = pool[row, wi]
                    while bits != np.uint64(0):
                        c = wi * 64 + lowbit(bits)
                        bits &= bits - np.uint64(1)
                        in_y = row_has(y, ry, c, cnt, ids, pool)
                        best, best_s = _hdrf_score(c, which == 0 or in_y, which == 1 or in_y,
                                                   load, scale, limit, c_min, lam, maxload,
                                                   denom, th_u, th_v, best, best_s)
        out[e] = best
        maxload = _hdrf_commit(best, load, scale, tree, size, maxload)
        if ovf.shape[0] > 0 and used + 2 > pool.shape[0]:
            pool = pool_room(pool, used, ovf)
        used = add_replica(u, best, cnt, ids, ovf, pool, used)
        used = add_replica(v, best, cnt, ids, ovf, pool, used)
    completed(counter, order.shape[0])
    return pool
