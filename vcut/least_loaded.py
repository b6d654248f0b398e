"""Numba helpers that find the least loaded cluster, for the streaming partitioners.

"Least loaded" compares ``load / capacity``; ties go to the lowest cluster id. The
least loaded of all clusters comes from a segment tree over the clusters (`tree_of`,
`tree_build`; O(log p) per `tree_update`; `tree_range` for a range of clusters), the
least loaded of a replica set (`ir_graph.replica_kernels`) from its members
(`least_of_set`, `least_of_common`; `least_of_rows` on dense bitset rows).
"""

import numpy as np

from vcut_base.jitcache import helper, njit
from ir_graph.replica_kernels import has_replica, lowbit, set_row

__all__ = ["tree_build", "tree_update", "tree_range", "tree_of", "zero_loads", "least_of_set",
           "least_of_common", "least_of_rows"]


@njit(cache=True)
def tree_build(load, cap, size):
    tree = np.full(2 * size, -1, dtype=np.int64)
    for c in range(load.shape[0]):
        tree[size + c] = c
    for i in range(size - 1, 0, -1):
        tree[i] = _better(tree[2 * i], tree[2 * i + 1], load, cap)
    return tree


@helper
def _better(a, b, load, cap):
    if a < 0:
        return b
    if b < 0:
        return a
    ra = load[a] / cap[a]
    rb = load[b] / cap[b]
    if rb < ra or (rb == ra and b < a):
        return b
    return a


@njit(cache=True)
def tree_update(tree, c, size, load, cap):
    i = (size + c) // 2
    while i >= 1:
        tree[i] = _better(tree[2 * i], tree[2 * i + 1], load, cap)
        i //= 2


@helper
def tree_range(tree, size, lo, hi, key, cap):
    """The best leaf (`_better`) among clusters ``lo..hi-1`` of a `tree_build` tree, -1
    when the range is empty."""
    best = -1
    a = lo + size
    b = hi + size
    while a < b:
        if a & 1:
            best = _better(best, tree[a], key, cap)
            a += 1
        if b & 1:
            b -= 1
            best = _better(best, tree[b], key, cap)
        a //= 2
        b //= 2
    return best


@njit(cache=True)
def tree_of(load, cap):
    """The segment tree of the least loaded cluster over ``load``: ``(size, tree)``."""
    size = 1
    while size < load.shape[0]:
        size *= 2
    return size, tree_build(load, cap, size)


@njit(cache=True)
def zero_loads(p, cap):
    """Zero loads over ``p`` clusters and their segment tree: ``(load, size, tree)``."""
    load = np.zeros(p, dtype=np.float64)
    size, tree = tree_of(load, cap)
    return load, size, tree


@helper
def _pick(c, best, best_v, load, cap):
    """``(best, best_v)`` after looking at cluster ``c``: the least loaded, ties
    to the lowest id."""
    r = load[c] / cap[c]
    if best < 0 or r < best_v or (r == best_v and c < best):
        return c, r
    return best, best_v


@helper
def least_of_set(v, cnt, ids, ovf, pool, load, cap, best):
    """Least loaded of A(v) and ``best`` (-1: none yet)."""
    best_v = np.inf if best < 0 else load[best] / cap[best]
    row = set_row(v, cnt, ids, ovf)
    if row < 0:
        for i in range(cnt[v]):
            best, best_v = _pick(np.int64(ids[v, i]), best, best_v, load, cap)
        return best
    for wi in range(pool.shape[1]):
        x = pool[row, wi]
        while x != np.uint64(0):
            best, best_v = _pick(wi * 64 + lowbit(x), best, best_v, load, cap)
            x &= x - np.uint64(1)
    return best


@helper
def least_of_common(u, v, cnt, ids, ovf, pool, load, cap):
    """Least loaded of A(u) & A(v) (-1 if they share none)."""
    best = -1
    best_v = np.inf
    ru = set_row(u, cnt, ids, ovf)
    rv = set_row(v, cnt, ids, ovf)
    if ru < 0 or rv < 0:
        x, y = (u, v) if ru < 0 else (v, u)
        for i in range(cnt[x]):
            c = np.int64(ids[x, i])
            if has_replica(y, c, cnt, ids, ovf, pool):
                best, best_v = _pick(c, best, best_v, load, cap)
        return best
    for wi in range(pool.shape[1]):
        x = pool[ru, wi] & pool[rv, wi]
        while x != np.uint64(0):
            best, best_v = _pick(wi * 64 + lowbit(x), best, best_v, load, cap)
            x &= x - np.uint64(1)
    return best


@helper
def least_of_rows(A, u, v, mode, load, cap):
    """Least loaded cluster of row ``u`` of ``A`` (``mode`` 0), of ``A[u] & A[v]`` (1) or
    of ``A[u] | A[v]`` (2); -1 if the set is empty. A load over a tiny capacity may
    overflow to ``inf``; the first member is still taken, so a non-empty set always
    yields a cluster."""
    best = -1
    best_v = np.inf
    for wi in range(A.shape[1]):
        x = A[u, wi]
        if mode == 1:
            x &= A[v, wi]
        elif mode == 2:
            x |= A[v, wi]
        while x != np.uint64(0):
            c = wi * 64 + lowbit(x)
            r = load[c] / cap[c]
            if best < 0 or r < best_v:
                best_v = r
                best = c
            x &= x - np.uint64(1)
    return best
