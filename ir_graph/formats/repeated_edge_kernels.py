"""Numba kernels that merge the repeated edges of a graph file into the first of each pair.

`ir_graph.formats.read_graph` marks the first edge of each pair (`first_of_pairs`)
and keeps those, in place and in order (`compact_pairs`).
"""

from vcut_base.jitcache import njit

__all__ = ["first_of_pairs", "compact_pairs"]


@njit(cache=True)
def first_of_pairs(src, dst, n, directed, first, rep, order, ptr, mark):
    """Whether each edge is the first of its pair (``first``), and that first edge (``rep``).

    Undirected (``directed`` False), ``u v`` and ``v u`` are one pair; directed,
    ``u v`` and ``v u`` are two. O(n + m): the edges are grouped by their
    larger end (by ``dst`` when directed) with a counting sort, in edge order,
    and each group's other ends are looked up in ``mark``.

    Parameters
    ----------
    src, dst : int32[:] or int64[:]
        ``m`` edges over ids ``0..n-1``.
    n : int
    directed : bool
    first : bool[m]
        Output: whether edge ``e`` is the first of its pair.
    rep : int64[m] or int64[0]
        Output when of length ``m``: the first edge of each edge's pair (``e``
        itself when first).
    order : int32[m] or int64[m]
        Work array.
    ptr : int64[n + 1]
        Zeros; overwritten.
    mark : int64[n]
        -1 everywhere; left so.

    Returns
    -------
    repeats : int
        Edges that repeat their pair's first edge as written (same ends in
        the same order; a self-loop's repeats all count here).
    reverse : int
        Edges written the other way round from their pair's first edge.
    """
    m = len(src)
    for e in range(m):
        hi = dst[e] if directed else max(src[e], dst[e])
        ptr[hi + 1] += 1
    for v in range(n):
        ptr[v + 1] += ptr[v]
    for e in range(m):
        hi = dst[e] if directed else max(src[e], dst[e])
        order[ptr[hi]] = e
        ptr[hi] += 1
    repeats = 0
    reverse = 0
    start = 0
    for v in range(n):  # ptr[v] is now the end of group v
        end = ptr[v]
        for k in range(start, end):
            e = order[k]
            lo = src[e] if directed else min(src[e], dst[e])
            f = mark[lo]
            first[e] = f < 0
            if f < 0:
                mark[lo] = e
                f = e
            else:
                if src[e] == src[f]:
                    repeats += 1
                else:
                    reverse += 1
            if len(rep):
                rep[e] = f
        for k in range(start, end):
            e = order[k]
            mark[src[e] if directed else min(src[e], dst[e])] = -1
        start = end
    return repeats, reverse



@njit(cache=True)
def compact_pairs(first, rep, src, dst, w, add):
    """Keep the first edge of each pair (`first_of_pairs`), in place and in order.

    Parameters
    ----------
    first : bool[m]
    rep : int64[m]
        The first edge of each edge's pair (``add``); overwritten. Unused
        (length 0) without ``add``.
    src, dst : int32[m] or int64[m]
    w : float64[m]
        Weights; the first ``k`` entries become the kept edges' (with ``add``
        the sum of their pair's weights, added in edge order).
    add : bool

    Returns
    -------
    int
        ``k``, the edges kept: ``src[:k]``, ``dst[:k]``, ``w[:k]``.
    """
    k = 0
    for e in range(len(src)):
        x = w[e]  # not written yet: every write so far went to an index below e
        if first[e]:
            src[k] = src[e]
            dst[k] = dst[e]
            w[k] = x
            if add:
                rep[e] = k  # the new index of a first edge, for its repeats
            k += 1
        elif add:
            w[rep[rep[e]]] += x
    return k
