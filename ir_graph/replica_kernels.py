"""Numba kernels of replicas: the replica table of an edge assignment
(`ir_graph.replicas.replica_table`) and the replica sets ``A(v)`` the streaming
partitioners grow (`ir_graph.replicas.replica_sets`).

Replica table: `incidence` (vertex -> incident edges), `count_replicas` and
`fill_replicas` over it; up to 64 clusters `edge_masks` and `vertex_masks`, then `mask_ranks`,
`tally_replicas` and `masters_from_masks`, from one 64-bit mask per vertex instead.
`sort_run` sorts a vertex's short cluster list.

Replica sets ``(cnt, ids, ovf, pool)``: up to ``ids.shape[1]`` cluster ids inline
per vertex, beyond that a bitset row of ``pool`` (``ovf[v]``, or row ``v`` itself
when ``ovf`` is empty: the dense form). `set_row`, `has_replica`, `row_has` read a
set, `add_replica` grows one (the pool must have a free row: `pool_room`),
`count_rows` counts the dense rows' bits, `lowbit` walks a word's bits.
"""

import numpy as np

from vcut_base.jitcache import helper, njit

__all__ = ["sort_run", "heap_sort", "incidence", "count_replicas", "fill_replicas", "edge_masks",
           "vertex_masks", "mask_ranks", "tally_replicas", "masters_from_masks", "lowbit", "set_row",
           "has_replica", "row_has", "add_replica", "pool_room", "count_rows"]


@helper
def heap_sort(a, lo, hi):
    """Sort ``a[lo:hi]`` in place (not stable), O(k log k), allocating nothing.

    Here rather than ``numpy.sort`` because numba compiles its quicksort, ~1.3 s, in
    every first run of a command that sorts; a key that must sort stably carries its
    position in its low bits (`ir_graph.edge_lists`' groups)."""
    n = hi - lo
    for start in range(n // 2 - 1, -1, -1):
        _sift_down(a, lo, start, n)
    for end in range(n - 1, 0, -1):
        t = a[lo]
        a[lo] = a[lo + end]
        a[lo + end] = t
        _sift_down(a, lo, 0, end)


@helper
def _sift_down(a, lo, root, end):
    """Restore the max-heap ``a[lo:lo + end]`` below ``root``."""
    while True:
        child = 2 * root + 1
        if child >= end:
            return
        if child + 1 < end and a[lo + child] < a[lo + child + 1]:
            child += 1
        if a[lo + root] < a[lo + child]:
            t = a[lo + root]
            a[lo + root] = a[lo + child]
            a[lo + child] = t
            root = child
        else:
            return


@njit(cache=True)
def sort_run(a, lo, hi):
    """Sort ``a[lo:hi]`` in place: insertion sort for the few entries a vertex's
    or an object's cluster list usually has, `heap_sort` beyond 32."""
    if hi - lo > 32:
        heap_sort(a, lo, hi)
        return
    for j in range(lo + 1, hi):
        x = a[j]
        i = j - 1
        while i >= lo and a[i] > x:
            a[i + 1] = a[i]
            i -= 1
        a[i + 1] = x


@njit(cache=True)
def incidence(src, dst, n, ptr, inc):
    """Vertex -> incident edges, coded ``2 e`` (as source) or ``2 e + 1`` (as destination).

    A vertex's list holds its edges as source, then as destination, each in
    edge order: the order in which ``numpy.bincount`` over ``[src, dst]``
    would add their weights, so sums agree bit for bit with that formulation.
    """
    for e in range(len(src)):
        ptr[src[e] + 1] += 1
        ptr[dst[e] + 1] += 1
    for v in range(n):
        ptr[v + 1] += ptr[v]
    fill = ptr[:-1].copy()
    for e in range(len(src)):  # a vertex's edges as source first, then as destination
        inc[fill[src[e]]] = 2 * e
        fill[src[e]] += 1
    for e in range(len(src)):
        inc[fill[dst[e]]] = 2 * e + 1
        fill[dst[e]] += 1


@njit(cache=True)
def count_replicas(ptr, inc, assign, n, p, rep_ptr):
    mark = np.full(p, -1, dtype=np.int64)
    total = 0
    for v in range(n):
        for k in range(ptr[v], ptr[v + 1]):
            c = assign[inc[k] >> 1]
            if mark[c] != v:
                mark[c] = v
                total += 1
        rep_ptr[v + 1] = total
    return total


@njit(cache=True)
def fill_replicas(ptr, inc, assign, weight, n, p, rep_ptr, rep_cluster, master, rep_in,
                   rep_out, rep_src, rep_dst):
    """Replicas of every vertex (clusters sorted), their in/out edge counts, each
    edge's two replicas, and each vertex's master: the replica of most edge
    weight, ties to the lowest cluster."""
    mark = np.full(p, -1, dtype=np.int64)
    pos = np.empty(p, dtype=np.int64)
    buf = np.empty(p, dtype=np.int64)
    wsum = np.zeros(p, dtype=np.float64)
    for v in range(n):
        cnt = 0
        for k in range(ptr[v], ptr[v + 1]):
            c = assign[inc[k] >> 1]
            if mark[c] != v:
                mark[c] = v
                buf[cnt] = c
                cnt += 1
        if cnt == 0:
            master[v] = -1
            continue
        sort_run(buf, 0, cnt)
        base = rep_ptr[v]
        for j in range(cnt):
            rep_cluster[base + j] = buf[j]
            pos[buf[j]] = base + j
        for k in range(ptr[v], ptr[v + 1]):
            x = inc[k]
            e = x >> 1
            c = assign[e]
            r = pos[c]
            wsum[c] += weight[e]
            if x & 1:
                rep_dst[e] = r
                rep_in[r] += 1
            else:
                rep_src[e] = r
                rep_out[r] += 1
        best = buf[0]
        for j in range(1, cnt):
            if wsum[buf[j]] > wsum[best]:
                best = buf[j]
        master[v] = best
        for j in range(cnt):
            wsum[buf[j]] = 0.0


@helper
def _popcount(x):
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return (x * np.uint64(0x0101010101010101)) >> np.uint64(56)


@njit(cache=True, nogil=True)
def edge_masks(src, dst, assign, mask, lo, hi):
    """Add to ``mask[v]`` the bit of the cluster of each edge ``lo .. hi - 1`` at ``v``
    (ranges apart may run side by side, each on its own masks: `vertex_masks`)."""
    for e in range(lo, hi):
        b = np.uint64(1) << np.uint64(assign[e])
        mask[src[e]] |= b
        mask[dst[e]] |= b


@njit(cache=True)
def vertex_masks(masks, rep_ptr):
    """Each vertex's clusters as a bit mask, the union of the rows of ``masks`` (one per
    range of edges, `edge_masks`) put in its first row; ``rep_ptr`` their running
    counts. Returns the masks and the number of replicas."""
    mask = masks[0]
    total = 0
    for v in range(masks.shape[1]):
        x = mask[v]
        for i in range(1, masks.shape[0]):
            x |= masks[i, v]
        mask[v] = x
        total += _popcount(x)
        rep_ptr[v + 1] = total
    return mask, total


@helper
def _rank(mask, rep_ptr, v, c):
    """The replica of cluster ``c`` of vertex ``v``."""
    below = mask[v] & ((np.uint64(1) << np.uint64(c)) - np.uint64(1))
    return rep_ptr[v] + _popcount(below)


@njit(cache=True, nogil=True)
def mask_ranks(vert, assign, mask, rep_ptr, out, lo, hi):
    """``out[e]``: the replica of edge ``e``'s cluster at its end ``vert[e]``, for the
    edges ``lo .. hi - 1`` (ranges apart may run side by side: each edge alone)."""
    for e in range(lo, hi):
        out[e] = _rank(mask, rep_ptr, vert[e], assign[e])


@njit(cache=True, nogil=True)
def tally_replicas(rep_src, rep_dst, weight, rep_out, rep_in, wsum, lo, hi):
    """The edges out of and into each replica ``lo .. hi - 1`` and their weight sum: its
    edges as source, then as destination, each in edge order (the incidence order of
    `fill_replicas`). Every replica's sums are one range's alone, in the same order
    whatever the ranges: replica ranges apart may run side by side."""
    for e in range(len(rep_src)):
        r = rep_src[e]
        if r >= lo and r < hi:
            rep_out[r] += 1
            wsum[r] += weight[e]
    for e in range(len(rep_dst)):
        r = rep_dst[e]
        if r >= lo and r < hi:
            rep_in[r] += 1
            wsum[r] += weight[e]


@njit(cache=True)
def masters_from_masks(mask, rep_ptr, wsum, rep_cluster, master):
    """Each replica's cluster (in increasing order per vertex, from the masks) and each
    vertex's master: its replica of the largest weight sum (ties: the lower cluster;
    -1 without replicas)."""
    for v in range(len(mask)):
        x = mask[v]
        r = rep_ptr[v]
        c = 0
        while x != np.uint64(0):
            if x & np.uint64(1):
                rep_cluster[r] = c
                r += 1
            x >>= np.uint64(1)
            c += 1
        lo = rep_ptr[v]
        if lo == rep_ptr[v + 1]:
            master[v] = -1
            continue
        best = lo
        for r in range(lo + 1, rep_ptr[v + 1]):
            if wsum[r] > wsum[best]:
                best = r
        master[v] = rep_cluster[best]


@helper
def lowbit(x):
    """Index of the lowest set bit of a non-zero uint64."""
    k = 0
    while (x & np.uint64(1)) == np.uint64(0):
        x >>= np.uint64(1)
        k += 1
    return k


@helper
def set_row(v, cnt, ids, ovf):
    """The bitset row of A(v), or -1 while its ids are inline."""
    if cnt[v] <= ids.shape[1]:
        return -1
    return v if ovf.shape[0] == 0 else ovf[v]


@helper
def has_replica(v, c, cnt, ids, ovf, pool):
    """Whether cluster ``c`` is in A(v)."""
    return row_has(v, set_row(v, cnt, ids, ovf), c, cnt, ids, pool)


@helper
def row_has(v, row, c, cnt, ids, pool):
    """Whether cluster ``c`` is in A(v), whose bitset row is ``row`` (-1: inline)."""
    if row < 0:
        for i in range(cnt[v]):
            if ids[v, i] == c:
                return True
        return False
    return (pool[row, c // 64] >> np.uint64(c % 64)) & np.uint64(1) != np.uint64(0)


@helper
def add_replica(v, c, cnt, ids, ovf, pool, used):
    """Put ``c`` into A(v); returns the pool rows in use. The pool must have a
    free row (`pool_room`)."""
    if has_replica(v, c, cnt, ids, ovf, pool):
        return used
    k = cnt[v]
    inline = ids.shape[1]
    if k < inline:
        ids[v, k] = c
    else:
        if ovf.shape[0] == 0:
            row = v
        elif k == inline:  # the inline ids move to an overflow row
            row = used
            used += 1
            ovf[v] = row
            for i in range(inline):
                d = ids[v, i]
                pool[row, d // 64] |= np.uint64(1) << np.uint64(d % 64)
        else:
            row = ovf[v]
        pool[row, c // 64] |= np.uint64(1) << np.uint64(c % 64)
    cnt[v] = k + 1
    return used


@njit(cache=True)
def pool_room(pool, used, ovf, rows=2):
    """The pool with at least ``rows`` free rows (a copy, doubled as often as needed)."""
    if ovf.shape[0] == 0 or used + rows <= pool.shape[0]:
        return pool
    size = max(2 * pool.shape[0], 1)
    while used + rows > size:
        size *= 2
    grown = np.zeros((size, pool.shape[1]), dtype=np.uint64)
    for r in range(used):  # a loop, not a slice copy: numba compiles that in ~1 s the first time
        for w in range(pool.shape[1]):
            grown[r, w] = pool[r, w]
    return grown


@njit(cache=True)
def count_rows(A, cnt):
    """``cnt[v]``: the set bits of row ``v``."""
    for v in range(A.shape[0]):
        k = 0
        for wi in range(A.shape[1]):
            x = A[v, wi]
            while x != np.uint64(0):
                x &= x - np.uint64(1)
                k += 1
        cnt[v] = k
