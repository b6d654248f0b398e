"""CPU twin of the Borůvka minimum spanning forest (`runtime.mst`).

Edges are named by their *rank*: their position in the order of increasing
weight (ties by input position), so every edge has a distinct key and the
forest is unique. The adjacency is built in rank order (`runtime.traversal_kernels.symmetric_csr`), so the
lightest edge leaving a vertex's component is the first of its list that is
not internal; a per-vertex cursor skips the internal ones once and for all
(components only grow), which makes the edge discovery of all rounds
together linear in the edges.

One round (`boruvka`):

1. *discovery*: every active vertex moves its cursor past internal edges and
   proposes its first crossing edge to its component's root (the minimum of
   the proposals, an ``atomicMin`` on the GPU); vertices with no crossing
   edge left retire;
2. *target*: every live root finds the root on the other side of its edge;
3. *hook*: each root points at its target, except the smaller of a pair that
   chose the same edge (the only cycle unique keys allow), which stays a
   root; the hooking root marks its edge as a forest edge;
4. *jump*: the roots of the round follow their pointers to the new roots
   (pointer jumping), so later finds are short; finds also halve paths.

Roots whose component has no crossing edge are complete and leave the
round's list; the loop ends when the list is empty.
"""

import numpy as np

from vcut_base.jitcache import njit, prange

__all__ = ["rank_order", "boruvka", "labels"]

RADIX_BITS = 11  # digits of the radix sort: six passes cover 64 bits


@njit(cache=True)
def _order_key(w):
    """An unsigned key whose order is the order of the float64 ``w`` (-0.0 as 0.0)."""
    b = np.empty(len(w), dtype=np.uint64)
    top = np.uint64(1) << np.uint64(63)
    for i in range(len(w)):
        x = w[i] + 0.0
        k = np.float64(x).view(np.uint64)
        b[i] = ~k if x < 0 else k | top
    return b


@njit(parallel=True, cache=True)
def rank_order(w, threads):
    """Positions of ``w`` by increasing value, ties in position order (a stable sort):
    least-significant-digit radix sort on the float bits, `RADIX_BITS` per pass, each
    pass's histogram and scatter split into one stable piece per thread; passes whose
    digit is the same for every key are skipped (integer weights need two). ``threads``:
    numba's thread count (read by the caller: a cached kernel cannot ask)."""
    m = len(w)
    key = _order_key(w)
    order = np.arange(m)
    if m < 2:
        return order
    buckets = 1 << RADIX_BITS
    mask = np.uint64(buckets - 1)
    pieces = min(threads, max(1, m // 65536))
    step = (m + pieces - 1) // pieces
    tmp_key = np.empty_like(key)
    tmp_order = np.empty_like(order)
    count = np.zeros((pieces, buckets), dtype=np.int64)
    for shift in range(0, 64, RADIX_BITS):
        sh = np.uint64(shift)
        count[:] = 0
        for p in prange(pieces):
            for i in range(p * step, min(m, (p + 1) * step)):
                count[p, (key[i] >> sh) & mask] += 1
        total = count.sum(axis=0)
        if total.max() == m:  # one digit value everywhere: the pass would change nothing
            continue
        base = 0
        for d in range(buckets):  # bucket-major, piece-minor: stable
            for p in range(pieces):
                c = count[p, d]
                count[p, d] = base
                base += c
        for p in prange(pieces):
            for i in range(p * step, min(m, (p + 1) * step)):
                d = (key[i] >> sh) & mask
                j = count[p, d]
                count[p, d] = j + 1
                tmp_key[j] = key[i]
                tmp_order[j] = order[i]
        key, tmp_key = tmp_key, key
        order, tmp_order = tmp_order, order
    return order


@njit(parallel=True, cache=True)
def ranked_ends(src, dst, keep, order, dtype_of):
    """``(src[keep[order]], dst[keep[order]])`` as ``dtype_of``'s dtype (one parallel gather)."""
    m = len(order)
    eu = np.empty(m, dtype=dtype_of.dtype)
    ev = np.empty(m, dtype=dtype_of.dtype)
    for r in prange(m):
        e = keep[order[r]]
        eu[r] = src[e]
        ev[r] = dst[e]
    return eu, ev


@njit(cache=True)
def _find(parent, x):
    """Root of ``x``, halving the path on the way (safe while roots stay put)."""
    while True:
        p = parent[x]
        if p == x:
            return x
        g = parent[p]
        parent[x] = g
        x = g


@njit(parallel=True, cache=True)
def boruvka(indptr, adj, erank, eu, ev, parent, forest):
    """Borůvka rounds over the rank-ordered adjacency; ``parent`` (identity on entry)
    ends as a union-find forest of the components, ``forest[r]`` is 1 for the
    spanning-forest edges. Returns ``(rounds, edges examined)``."""
    n = len(indptr) - 1
    m = len(eu)
    cursor = indptr[:n].copy()
    best = np.full(n, m, dtype=np.int64)
    active = np.empty(n, dtype=np.int64)
    roots = np.empty(n, dtype=np.int64)
    nact = 0
    for v in range(n):
        if indptr[v + 1] > indptr[v]:
            active[nact] = v
            roots[nact] = v
            nact += 1
    nroots = nact
    cand = np.empty(n, dtype=np.int64)
    target = np.empty(n, dtype=np.int64)
    examined = np.zeros(n, dtype=np.int64)
    rounds = 0
    while nroots > 0:
        rounds += 1
        # 1. discovery
        for i in prange(nact):
            v = active[i]
            cv = _find(parent, v)
            j = cursor[v]
            end = indptr[v + 1]
            start = j
            while j < end and _find(parent, adj[j]) == cv:
                j += 1
            cursor[v] = j
            examined[v] += j - start + (1 if j < end else 0)
            cand[i] = erank[j] if j < end else -1
            target[i] = cv  # the active vertices' roots, until step 2 reuses the array
        k = 0
        for i in range(nact):  # the proposals' minimum per root (atomicMin on the GPU)
            r = cand[i]
            if r >= 0:
                v = active[i]
                c = target[i]
                if r < best[c]:
                    best[c] = r
                active[k] = v
                k += 1
        nact = k
        # 2. target
        for i in prange(nroots):
            c = roots[i]
            r = best[c]
            if r == m:
                target[i] = c
            else:
                a = _find(parent, eu[r])
                target[i] = _find(parent, ev[r]) if a == c else a
        # 3. hook
        for i in prange(nroots):
            c = roots[i]
            t = target[i]
            if t != c and not (best[t] == best[c] and c < t):
                parent[c] = t
                forest[best[c]] = 1
        # 4. jump; the next round's roots are this round's that stayed roots with an edge
        for i in prange(nroots):
            c = roots[i]
            while parent[parent[c]] != parent[c]:
                parent[c] = parent[parent[c]]
            best[c] = m
        k = 0
        for i in range(nroots):
            c = roots[i]
            if parent[c] == c and target[i] != c:
                roots[k] = c
                k += 1
        nroots = k
    return rounds, examined.sum()


@njit(parallel=True, cache=True)
def labels(parent):
    """The root of every vertex (its tree's representative)."""
    n = len(parent)
    out = np.empty(n, dtype=np.int64)
    for v in prange(n):
        x = np.int64(v)  # prange's index is unsigned: unified with int64 it would be a float
        while parent[x] != x:
            x = parent[x]
        out[v] = x
    return out
