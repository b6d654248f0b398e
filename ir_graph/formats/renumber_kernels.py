"""Numba kernels that renumber the node ids of an edge list to ``0..n-1``.

`ir_graph.formats.edgelist` renumbers ids in increasing order when they are
not ``0..n-1`` already, and finds an id beyond a declared node count.
"""

import numpy as np

from vcut_base.jitcache import njit

__all__ = ["renumber_dense", "renumber_sorted", "first_at_least"]


@njit(cache=True)
def renumber_dense(src, dst, count, rank):
    """Renumber ids through a table over ``0..max``: ranks in increasing order.

    Parameters
    ----------
    src, dst : int32[:] or int64[:]
        Ids ``0..len(rank) - 1`` in their first ``count`` entries; replaced
        in place by their ranks when the ids are not ``0..n-1`` already.
    count : int
    rank : int32[:] or int64[:]
        Zeros, one per possible id; overwritten (present ids: their rank).

    Returns
    -------
    n : int
        Distinct ids.
    labels : int64[n]
        The distinct ids in increasing order (empty when they are ``0..n-1``,
        in which case ``src`` and ``dst`` are left unchanged).
    """
    for k in range(count):
        rank[src[k]] = 1
        rank[dst[k]] = 1
    n = 0
    for x in range(len(rank)):
        n += rank[x]
    if n == len(rank):
        return n, np.empty(0, np.int64)
    labels = np.empty(n, np.int64)
    r = 0
    for x in range(len(rank)):
        if rank[x]:
            rank[x] = r
            labels[r] = x
            r += 1
    for k in range(count):
        src[k] = rank[src[k]]
        dst[k] = rank[dst[k]]
    return n, labels


@njit(cache=True)
def renumber_sorted(src, dst, count, labels):
    """Replace each id by its index in the sorted distinct ids ``labels`` (in place).

    Parameters
    ----------
    src, dst : int32[:] or int64[:]
        First ``count`` entries: ids, each present in ``labels``.
    count : int
    labels : int64[n]
        Sorted, distinct.
    """
    for k in range(count):
        src[k] = np.searchsorted(labels, src[k])
        dst[k] = np.searchsorted(labels, dst[k])


@njit(cache=True)
def first_at_least(src, dst, count, bound):
    """Index of the first entry with an id >= ``bound`` (-1: none)."""
    for k in range(count):
        if src[k] >= bound or dst[k] >= bound:
            return k
    return -1
