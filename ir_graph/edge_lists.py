"""Linear-time passes over edge lists: the simple graph, the execution order, orientation,
vertex degrees and per-cluster sums.

Everything here replaces a sort of ``|E|``-sized keys (``numpy.unique``,
``lexsort``) or a ``numpy.bincount`` over int64 copies by counting passes, so that
the cost is ``O(|V| + |E|)`` in time and a few words per edge of scratch memory,
and the results are the same as those of the sorting formulation (tests compare
them).

* `simple_edges`: the simple undirected graph of an edge list (self-loops out,
  repeats merged), in order of first appearance; the identity (no copies)
  when the list is simple already, as IR graphs are.
* `execution_order`: the permutation that sorts edges by (dst, src), without
  a global sort when the list is sorted by dst already (IR graphs are).
* `is_oriented`: whether every edge runs from its lower to its higher end.
* `degrees`: the degree of every vertex; `cluster_sums`: the edge weight and edge
  count of every cluster of an edge assignment.
"""

from functools import partial

import numpy as np

from vcut_base import arrays
from vcut_base.jitcache import njit
from vcut_base.memory import check_memory, pass_threads, spans
from vcut_base.progress import run_parallel

from .graph import index_dtype
from .replica_kernels import heap_sort

__all__ = ["simple_edges", "execution_order", "is_oriented", "degrees", "cluster_sums"]


@njit(cache=True, nogil=True)
def _count_by_max(src, dst, cnt, lo, hi):
    """``cnt[b]``: the edges ``lo .. hi - 1`` whose larger endpoint is ``b``."""
    for e in range(lo, hi):
        b = src[e] if src[e] > dst[e] else dst[e]
        cnt[b] += 1


@njit(cache=True)
def _group_starts(cnt, ptr):
    """From the counts of each range of edges (a row of ``cnt`` per range, in edge
    order), ``ptr``: where each group of `_group_by_max` starts, and each row of
    ``cnt`` turned into where its range's first edge of each group goes (after the
    earlier ranges' edges of that group: the order stays the edges' order)."""
    pos = 0
    for b in range(cnt.shape[1]):
        ptr[b] = pos
        for t in range(cnt.shape[0]):
            c = cnt[t, b]
            cnt[t, b] = pos
            pos += c
    ptr[cnt.shape[1]] = pos


@njit(cache=True, nogil=True)
def _place_by_max(src, dst, fill, pairs, lo, hi):
    """Put the edges ``lo .. hi - 1`` at their places of the grouping (``fill[b]``: the
    next place of this range in group ``b``): ``pairs[k]`` the edge and its smaller
    endpoint."""
    for e in range(lo, hi):
        u, v = src[e], dst[e]
        b, a = (u, v) if u > v else (v, u)
        k = fill[b]
        pairs[k, 0] = e
        pairs[k, 1] = a
        fill[b] = k + 1


def _group_by_max(src, dst, n, ptr, pairs):
    """Counting sort of the edges by their larger endpoint (stable): ``pairs[k]`` is the
    ``k``-th edge in that order and its smaller endpoint, so that `_first_of_pair` reads
    both in order instead of each edge's ends all over memory. Ranges of the edges are
    counted and placed side by side (`vcut_base.memory.pass_threads`), each at places of
    its own: the same order whatever the threads."""
    workers = pass_threads(len(src), 8.0 * n)
    cnt = np.zeros((workers, n), dtype=np.int64)
    cuts = spans(len(src), workers)
    run_parallel([partial(_count_by_max, src, dst, cnt[i], a, b)
                  for i, (a, b) in enumerate(cuts)], workers)
    _group_starts(cnt, ptr)
    run_parallel([partial(_place_by_max, src, dst, cnt[i], pairs, a, b)
                  for i, (a, b) in enumerate(cuts)], workers)


@njit(cache=True)
def _first_of_pair(pairs, n, ptr, rep):
    """``rep[e]``: the first edge of ``e``'s unordered pair (-1 for a self-loop), from
    the edges grouped by their larger endpoint (`_group_by_max`).

    Returns the number of self-loops and of repeated (non-first) edges.
    """
    seen = np.full((n, 2), -1, dtype=np.int64)  # per smaller end: the group, its first edge
    loops = 0
    repeats = 0
    for b in range(n):
        for k in range(ptr[b], ptr[b + 1]):
            e = pairs[k, 0]
            a = pairs[k, 1]
            if a == b:
                rep[e] = -1
                loops += 1
            elif seen[a, 0] == b:
                rep[e] = seen[a, 1]
                repeats += 1
            else:
                seen[a, 0] = b
                seen[a, 1] = e
                rep[e] = e
    return loops, repeats


@njit(cache=True, nogil=True)
def _simple_by_dst(src, dst):
    """Whether every edge has ``src < dst``, the edges are sorted by ``dst`` and no
    ``src`` repeats within a run of equal ``dst`` (runs of at most 16 edges;
    longer ones answer False): then the graph is simple. One pass over IR
    graphs, whose edges are made in that order with a few operands each."""
    lo = 0
    for e in range(len(src)):
        if src[e] >= dst[e]:
            return False
        if e and dst[e] != dst[e - 1]:
            if dst[e] < dst[e - 1]:
                return False
            lo = e
        if e - lo >= 16:
            return False
        for f in range(lo, e):
            if src[f] == src[e]:
                return False
    return True


def simple_edges(src, dst, weight, n):
    """The simple undirected graph of an edge list.

    Returns
    -------
    src, dst, weight : ndarray
        One edge per unordered pair, in order of first appearance, with the
        summed weight of its repetitions (the input arrays themselves when
        there is nothing to merge).
    input_edge : int64 ndarray or None
        For every input edge its simple edge (-1 for a self-loop); None
        when the simple graph is the input (the identity).
    loops, repeats : int
    """
    m = len(src)
    n = max(int(n), 1)
    if _simple_by_dst(src, dst):  # simple already, known in one pass
        return src, dst, np.asarray(weight, dtype=np.float64), None, 0, 0
    pdt, rdt = index_dtype(max(m, n)), index_dtype(m)
    check_memory(8.0 * (4 * n + 2) + arrays.resident(2.0 * np.dtype(pdt).itemsize * m)
                 + arrays.resident(np.dtype(rdt).itemsize * float(m)),
                 f"merging repeated edges of {m:,} edges", "use a machine with more memory")
    ptr = np.zeros(n + 1, dtype=np.int64)
    pairs = arrays.empty((m, 2), pdt)  # spill files under --spill
    _group_by_max(src, dst, n, ptr, pairs)
    rep = arrays.empty(m, rdt)
    loops, repeats = _first_of_pair(pairs, n, ptr, rep)
    del ptr, pairs
    if loops == 0 and repeats == 0:
        return src, dst, np.asarray(weight, dtype=np.float64), None, 0, 0
    ok = rep >= 0
    is_first = rep == np.arange(m)
    pos = np.cumsum(is_first) - 1
    input_edge = np.where(ok, pos[np.maximum(rep, 0)], -1)
    sel = np.flatnonzero(is_first)
    w = np.bincount(input_edge[ok], weights=np.asarray(weight, dtype=np.float64)[ok],
                    minlength=len(sel))
    return (arrays.spill(src[sel]), arrays.spill(dst[sel]), arrays.spill(w),
            arrays.spill(input_edge), int(loops), int(repeats))


@njit(cache=True)
def _dst_sorted(dst):
    for e in range(1, len(dst)):
        if dst[e] < dst[e - 1]:
            return False
    return True


@njit(cache=True)
def _sort_groups(src, dst, order):
    """Within every run of equal ``dst``, order the edges by ``src`` (stable).

    Returns whether anything moved.
    """
    m = len(dst)
    moved = False
    lo = 0
    while lo < m:
        hi = lo + 1
        while hi < m and dst[hi] == dst[lo]:
            hi += 1
        sorted_run = True
        for e in range(lo + 1, hi):
            if src[e] < src[e - 1]:
                sorted_run = False
                break
        if not sorted_run:
            moved = True
            # stable by src: each key carries its position below the vertex id (ids below
            # 2**32, runs below 2**31 edges), sorted by `heap_sort` (numba's mergesort costs
            # ~0.7 s to compile in every first run)
            keys = np.empty(hi - lo, dtype=np.int64)
            for j in range(hi - lo):
                keys[j] = (np.int64(src[lo + j]) << 31) | j
            heap_sort(keys, 0, hi - lo)
            for j in range(hi - lo):
                order[lo + j] = lo + (keys[j] & 0x7FFFFFFF)
        lo = hi
    return moved


def execution_order(src, dst):
    """The permutation sorting edges by (dst, src), stable (int32 below 2**31
    edges); None for the identity."""
    m = len(dst)
    if m == 0:
        return None
    if not _dst_sorted(dst):
        return np.lexsort((src, dst)).astype(index_dtype(m), copy=False)
    order = np.arange(m, dtype=index_dtype(m))
    return order if _sort_groups(src, dst, order) else None


@njit(cache=True)
def _is_oriented(src, dst):
    for e in range(len(src)):
        if src[e] > dst[e]:
            return False
    return True


def is_oriented(src, dst):
    """Whether ``src[e] <= dst[e]`` for every edge."""
    return bool(_is_oriented(src, dst))


@njit(cache=True, nogil=True)
def _add_degrees(src, dst, deg, lo, hi):
    for e in range(lo, hi):
        deg[src[e]] += 1
        deg[dst[e]] += 1


def degrees(src, dst, n):
    """Degree of every vertex (int64), in compiled passes: no int64 copy of the edge
    arrays as ``numpy.bincount`` makes of int32 ones; ranges of the edges side by side
    (`vcut_base.memory.pass_threads`), each counted apart and the counts summed."""
    n = int(n)
    workers = pass_threads(len(src), 8.0 * n)
    deg = np.zeros((workers, n), dtype=np.int64)
    run_parallel([partial(_add_degrees, src, dst, deg[i], a, b)
                  for i, (a, b) in enumerate(spans(len(src), workers))], workers)
    return deg[0] if workers == 1 else deg.sum(axis=0)


@njit(cache=True, nogil=True)
def cluster_sums(assign, weight, p):
    """Edge weight and edge count of every cluster in one pass (the sums in edge
    order: ``numpy.bincount``'s, bit for bit)."""
    loads = np.zeros(p, np.float64)
    counts = np.zeros(p, np.int64)
    for e in range(len(assign)):
        c = assign[e]
        loads[c] += weight[e]
        counts[c] += 1
    return loads, counts
