"""Numba kernels of the edge partitioners.

Replica sets ``A(v)`` (`replica_sets`): for up to `DENSE_WORDS` 64-bit words
per vertex (p <= 128) dense bitsets, ``|V| * ceil(p / 64)`` words; above,
`INLINE` cluster ids kept inline per vertex and a bitset row allocated from a
growing pool only for the vertices with more replicas, so that p = 1024 on
10^8 vertices does not need ``|V| * p / 8`` bytes. Both give the same
partitions; the dense form has kernels of its own (`_greedy_dense`,
`_hdrf_dense`: word operations, twice as fast as going through the general
set helpers). "Least loaded" compares ``load / capacity``; ties go to the
lowest cluster id. The least loaded of all clusters comes from a segment tree
over the clusters (O(log p) per update), the least loaded of a set from its
members.
"""

import numpy as np

from vcut_base.jitcache import helper, njit, prange

__all__ = ["greedy_assign", "greedy_batched", "hdrf_assign", "replica_sets", "replica_set_bytes", "dbh_assign", "stream_order", "RULE_PG", "RULE_LIBRA"]

#: A cluster counts as full within this relative distance of its bound.
FULL_TOLERANCE = 1e-12

RULE_PG = 0  # case 2: the endpoint with more unassigned edges left
RULE_LIBRA = 1  # case 2: the endpoint of lower degree


@njit(cache=True, inline="always")
def _lowbit(x):
    """Index of the lowest set bit of a non-zero uint64."""
    k = 0
    while (x & np.uint64(1)) == np.uint64(0):
        x >>= np.uint64(1)
        k += 1
    return k


@njit(cache=True)
def _tree_build(load, cap, size):
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
def _tree_update(tree, c, size, load, cap):
    i = (size + c) // 2
    while i >= 1:
        tree[i] = _better(tree[2 * i], tree[2 * i + 1], load, cap)
        i //= 2


@helper
def _tree_range(tree, size, lo, hi, key, cap):
    """The best leaf (`_better`) among clusters ``lo..hi-1`` of a `_tree_build` tree, -1
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


#: The streaming kernels publish their progress every TICK edges (and look
#: whether they are asked to stop).
TICK = 1 << 16
TICK_MASK = TICK - 1

#: Dense replica bitsets up to this many 64-bit words per vertex (p <= 128).
DENSE_WORDS = 2
#: Cluster ids kept inline per vertex by the compact replica sets.
INLINE = 3


def replica_sets(n, p, dense=None):
    """Empty replica sets of ``n`` vertices over ``p`` clusters, for the kernels.

    Returns ``(cnt, ids, ovf, pool)``: ``cnt[v]`` replicas of ``v``; up to
    ``ids.shape[1]`` of them inline in ``ids[v]``, beyond that the bitset
    ``pool[ovf[v]]`` (``pool[v]`` when ``ovf`` is empty: the dense form, no
    inline ids). ``dense`` None chooses by `DENSE_WORDS`.
    """
    nw = (p + 63) // 64
    if dense is None:
        dense = nw <= DENSE_WORDS
    cnt = np.zeros(n, dtype=np.int32)
    if dense:
        return (cnt, np.zeros((n, 0), dtype=np.int16), np.zeros(0, dtype=np.int32),
                np.zeros((n, nw), dtype=np.uint64))
    ids = np.zeros((n, INLINE), dtype=np.int16 if p <= np.iinfo(np.int16).max else np.int32)
    return cnt, ids, np.full(n, -1, dtype=np.int32), np.zeros((max(64, n >> 10), nw), np.uint64)


def replica_set_bytes(n, p, dense=None):
    """Bytes of `replica_sets` before any overflow row (for the memory check)."""
    nw = (p + 63) // 64
    if dense is None:
        dense = nw <= DENSE_WORDS
    if dense:
        return n * (4 + 8 * nw)
    return n * (4 + 4 + INLINE * (2 if p <= np.iinfo(np.int16).max else 4))


@helper
def _row(v, cnt, ids, ovf):
    """The bitset row of A(v), or -1 while its ids are inline."""
    if cnt[v] <= ids.shape[1]:
        return -1
    return v if ovf.shape[0] == 0 else ovf[v]


@helper
def _contains(v, c, cnt, ids, ovf, pool):
    """Whether cluster ``c`` is in A(v)."""
    return _in_row(v, _row(v, cnt, ids, ovf), c, cnt, ids, pool)


@helper
def _in_row(v, row, c, cnt, ids, pool):
    """Whether cluster ``c`` is in A(v), whose bitset row is ``row`` (-1: inline)."""
    if row < 0:
        for i in range(cnt[v]):
            if ids[v, i] == c:
                return True
        return False
    return (pool[row, c // 64] >> np.uint64(c % 64)) & np.uint64(1) != np.uint64(0)


@helper
def _add(v, c, cnt, ids, ovf, pool, used):
    """Put ``c`` into A(v); returns the pool rows in use. The pool must have a
    free row (`_room`)."""
    if _contains(v, c, cnt, ids, ovf, pool):
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
def _room(pool, used, ovf, rows=2):
    """The pool with at least ``rows`` free rows (a copy, doubled as often as needed)."""
    if ovf.shape[0] == 0 or used + rows <= pool.shape[0]:
        return pool
    size = max(2 * pool.shape[0], 1)
    while used + rows > size:
        size *= 2
    grown = np.zeros((size, pool.shape[1]), dtype=np.uint64)
    grown[:used] = pool[:used]
    return grown


@helper
def _pick(c, best, best_v, load, cap):
    """``(best, best_v)`` after looking at cluster ``c``: the least loaded, ties
    to the lowest id."""
    r = load[c] / cap[c]
    if best < 0 or r < best_v or (r == best_v and c < best):
        return c, r
    return best, best_v


@helper
def _ll_set(v, cnt, ids, ovf, pool, load, cap, best):
    """Least loaded of A(v) and ``best`` (-1: none yet)."""
    best_v = np.inf if best < 0 else load[best] / cap[best]
    row = _row(v, cnt, ids, ovf)
    if row < 0:
        for i in range(cnt[v]):
            best, best_v = _pick(np.int64(ids[v, i]), best, best_v, load, cap)
        return best
    for wi in range(pool.shape[1]):
        x = pool[row, wi]
        while x != np.uint64(0):
            best, best_v = _pick(wi * 64 + _lowbit(x), best, best_v, load, cap)
            x &= x - np.uint64(1)
    return best


@helper
def _ll_common(u, v, cnt, ids, ovf, pool, load, cap):
    """Least loaded of A(u) & A(v) (-1 if they share none)."""
    best = -1
    best_v = np.inf
    ru = _row(u, cnt, ids, ovf)
    rv = _row(v, cnt, ids, ovf)
    if ru < 0 or rv < 0:
        x, y = (u, v) if ru < 0 else (v, u)
        for i in range(cnt[x]):
            c = np.int64(ids[x, i])
            if _contains(y, c, cnt, ids, ovf, pool):
                best, best_v = _pick(c, best, best_v, load, cap)
        return best
    for wi in range(pool.shape[1]):
        x = pool[ru, wi] & pool[rv, wi]
        while x != np.uint64(0):
            best, best_v = _pick(wi * 64 + _lowbit(x), best, best_v, load, cap)
            x &= x - np.uint64(1)
    return best


@helper
def _stopped(k, counter):
    """Every `TICK` edges: publish ``k`` in ``counter[0]``; whether ``counter[1]``
    asks the kernel to stop."""
    if k & TICK_MASK == 0:
        counter[0] = k
        return counter[1] != 0
    return False


@helper
def _done(counter, m):
    """All ``m`` edges assigned, unless the kernel was stopped."""
    if counter[1] == 0:
        counter[0] = m


@njit(cache=True, inline="always")
def _tree_of(load, cap):
    """The segment tree of the least loaded cluster over ``load``: ``(size, tree)``."""
    size = 1
    while size < load.shape[0]:
        size *= 2
    return size, _tree_build(load, cap, size)


@njit(cache=True, inline="always")
def _loads(p, cap):
    """Zero loads over ``p`` clusters and their segment tree: ``(load, size, tree)``."""
    load = np.zeros(p, dtype=np.float64)
    size, tree = _tree_of(load, cap)
    return load, size, tree


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
    _tree_update(tree, best, size, load, scale)
    return maxload


@njit(cache=True)
def _count_rows(A, cnt):
    """``cnt[v]``: the set bits of row ``v``."""
    for v in range(A.shape[0]):
        k = 0
        for wi in range(A.shape[1]):
            x = A[v, wi]
            while x != np.uint64(0):
                x &= x - np.uint64(1)
                k += 1
        cnt[v] = k


@helper
def _ll_rows(A, u, v, mode, load, cap):
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
            c = wi * 64 + _lowbit(x)
            r = load[c] / cap[c]
            if best < 0 or r < best_v:
                best_v = r
                best = c
            x &= x - np.uint64(1)
    return best


@helper
def _decide_dense(u, v, A, load, cap, full, rule, degree, rem):
    """Algorithm 1's choice for edge (u, v) on dense bitset rows ``A``: the cluster, or
    -1 for the least loaded of all (case 4 and the fallbacks when the candidates are
    full). Reads the state only, so a batch of edges can decide in parallel against
    the state frozen at its start (`greedy_batched`)."""
    has_u = False
    has_v = False
    for wi in range(A.shape[1]):
        if A[u, wi] != np.uint64(0):
            has_u = True
        if A[v, wi] != np.uint64(0):
            has_v = True
    if not has_u and not has_v:  # case 4
        return -1
    if has_u != has_v:  # case 3
        c = _ll_rows(A, u if has_u else v, 0, 0, load, cap)
        return c if load[c] < full[c] else -1
    c = _ll_rows(A, u, v, 1, load, cap)
    if c >= 0:  # case 1
        if load[c] >= full[c]:
            c = _ll_rows(A, u, v, 2, load, cap)
            if load[c] >= full[c]:
                return -1
        return c
    # case 2: keep one endpoint whole, cut the other
    if rule == RULE_LIBRA:
        s = u if degree[u] <= degree[v] else v
    else:
        s = u if rem[u] >= rem[v] else v
    t = v if s == u else u
    c = _ll_rows(A, s, 0, 0, load, cap)
    if load[c] >= full[c]:
        c = _ll_rows(A, t, 0, 0, load, cap)
        if load[c] >= full[c]:
            return -1
    return c


@helper
def _apply_dense(e, u, v, c, weight, A, load, cap, full, rem, tree, size, out):
    """Place edge ``e`` = (u, v) on ``c`` (-1, or a cluster full by now: the least
    loaded of all) and update the state; returns the cluster."""
    if c < 0 or load[c] >= full[c]:
        c = tree[1]
    load[c] += weight[e]
    _tree_update(tree, c, size, load, cap)
    _place(e, u, v, c, A, rem, out)
    return c


@helper
def _place(e, u, v, c, A, rem, out):
    """Edge ``e`` = (u, v) on cluster ``c``: its assignment, replica bits and the ends'
    unassigned-edge counts (loads are the caller's)."""
    out[e] = c
    bit = np.uint64(1) << np.uint64(c % 64)
    A[u, c // 64] |= bit
    A[v, c // 64] |= bit
    rem[u] -= 1
    rem[v] -= 1


@njit(cache=True, nogil=True)
def _greedy_dense(src, dst, weight, order, degree, rem, cap, full, rule, out, A, load,
                  counter):
    """`greedy_assign` on dense bitsets ``A`` (n, ceil(p / 64)), the vertices' rows,
    from the loads ``load`` and the unassigned-edge counts ``rem`` (both updated
    in place): a whole stream from empty sets, or one step of a distributed one
    (`vcut.distributed`) from the state merged so far. Cluster ``c`` is full when
    ``load[c] >= full[c]`` (the bound times its capacity, `greedy_assign`; a
    distributed step is given its share of the room left)."""
    size, tree = _tree_of(load, cap)
    for k in range(order.shape[0]):
        if _stopped(k, counter):
            break
        e = order[k]
        u = src[e]
        v = dst[e]
        c = _decide_dense(u, v, A, load, cap, full, rule, degree, rem)
        _apply_dense(e, u, v, c, weight, A, load, cap, full, rem, tree, size, out)
    _done(counter, order.shape[0])
    return load


#: batches smaller than this decide on one thread (a parallel region costs more)
PARALLEL_BATCH = 2048
#: `greedy_batched` re-decides on the live state every edge whose frozen choice would
#: add a replica (not a cluster that holds both endpoints by now)
RECHECK = True


@helper
def _in_both(A, u, v, c):
    """Whether cluster ``c`` holds replicas of both ``u`` and ``v``."""
    w = c // 64
    bit = np.uint64(1) << np.uint64(c % 64)
    return (A[u, w] & bit) != np.uint64(0) and (A[v, w] & bit) != np.uint64(0)


@njit(cache=True, parallel=True)
def greedy_batched(src, dst, weight, order, degree, cap, full, rule, out, A, batch, recheck,
                   counter):
    """The greedy family in batches of ``batch`` edges: every edge of a batch decides
    (`_decide_dense`) against the replica sets, loads and remaining degrees frozen at
    the batch's start, in parallel; then one pass applies the batch in stream order
    (`_apply_dense`: an edge whose cluster filled up during the batch, or that asked
    for the least loaded, takes the least loaded now). ``batch = 1`` is
    `_greedy_dense` exactly. Dense bitsets ``A`` only (p <= 64 DENSE_WORDS).
    Returns the loads; ``counter`` as `greedy_assign`'s, checked once per batch."""
    m = order.shape[0]
    p = cap.shape[0]
    load = np.zeros(p, dtype=np.float64)
    rem = degree.copy()
    size, tree = _tree_of(load, cap)
    dec = np.empty(max(1, min(batch, m)), dtype=np.int64)
    redo = 0
    for lo in range(0, m, batch):
        counter[0] = lo
        if counter[1] != 0:
            return load, redo
        hi = min(m, lo + batch)
        if hi - lo >= PARALLEL_BATCH:
            for k in prange(hi - lo):
                e = order[lo + k]
                dec[k] = _decide_dense(src[e], dst[e], A, load, cap, full, rule, degree, rem)
        else:
            for k in range(hi - lo):
                e = order[lo + k]
                dec[k] = _decide_dense(src[e], dst[e], A, load, cap, full, rule, degree, rem)
        redo += apply_batch(src, dst, weight, order, lo, hi, dec, degree, cap, full, rule, out,
                            A, load, rem, tree, size, recheck)
    _done(counter, m)
    return load, redo


@njit(cache=True, nogil=True)
def apply_batch(src, dst, weight, order, lo, hi, dec, degree, cap, full, rule, out, A, load, rem,
                tree, size, recheck):
    """The apply pass of the batch ``order[lo:hi]`` whose frozen choices are ``dec``
    (`greedy_batched`, and the GPU's host loop after its decide kernel): in stream
    order, an edge that asked for the least loaded of all, or (``recheck``) whose
    cluster does not hold both endpoints by now, decides again on the live state; then
    `_apply_dense` updates loads, sets, counts and the load tree. Returns how many
    edges decided again."""
    redo = 0
    for k in range(hi - lo):
        e = order[lo + k]
        u = src[e]
        v = dst[e]
        c = dec[k]
        if c < 0 or (recheck and not _in_both(A, u, v, c)):
            c = _decide_dense(u, v, A, load, cap, full, rule, degree, rem)
            redo += 1
        _apply_dense(e, u, v, c, weight, A, load, cap, full, rem, tree, size, out)
    return redo


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
def _hdrf_dense(src, dst, order, cap, lam, eps, normalized, limit, degree, part, out, A, load,
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
    size, tree = _tree_of(load, scale)
    for k in range(order.shape[0]):
        if _stopped(k, counter):
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
                    b = _lowbit(bits)
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
    _done(counter, order.shape[0])
    return maxload


@njit(cache=True, nogil=True)
def greedy_assign(src, dst, weight, order, n, p, degree, cap, limit, rule, out, sets, counter):
    """The PowerGraph / Libra greedy family (spec §2, Algorithm 1).

    Parameters
    ----------
    src, dst : int[m]; weight : float64[m]
        Edges (a simple graph: no self-loops, no repeated pairs).
    order : int64[m]
        Stream order (edge indices).
    n, p : int
        Vertices, clusters.
    degree : int64[n]
        Degree of every vertex (Libra's case 2; PG's unassigned-edge counts
        start from it).
    cap : float64[p]
        Capacity fractions (sum 1; equal shares 1/p).
    limit : float
        The bound: cluster ``m`` is full when ``load[m] >= limit * cap[m]``
        (``limit = lambda * total weight``; ``inf`` for the unbounded W variants),
        within a relative `FULL_TOLERANCE`, so that the rounding of capacity
        fractions cannot decide.
    rule : int
        `RULE_PG` or `RULE_LIBRA` (which endpoint case 2 keeps whole).
    out : int32[m]
        Written in place: the cluster of every edge.
    sets : tuple
        Empty replica sets (`replica_sets`).
    counter : int64[2]
        ``counter[0]``: edges assigned so far (written every `TICK` edges);
        a non-zero ``counter[1]`` stops the kernel there (`vcut_base.progress`).

    Returns
    -------
    load : float64[p]
        Weight assigned to each cluster.
    pool : uint64[rows, ceil(p / 64)]
        The sets' bitset rows at the end (a new array when the pool grew).
    """
    cnt, ids, ovf, pool = sets
    if ids.shape[1] == 0:  # dense bitsets: the plain kernel
        load = _greedy_dense(src, dst, weight, order, degree, degree.copy(), cap,
                             limit * (1.0 - FULL_TOLERANCE) * cap, rule, out, pool,
                             np.zeros(p, dtype=np.float64), counter)
        _count_rows(pool, cnt)
        return load, pool
    used = 0
    load, size, tree = _loads(p, cap)
    rem = degree.copy()
    limit = limit * (1.0 - FULL_TOLERANCE)
    for k in range(order.shape[0]):
        if _stopped(k, counter):
            break
        e = order[k]
        u = src[e]
        v = dst[e]
        has_u = cnt[u] > 0
        has_v = cnt[v] > 0
        if not has_u and not has_v:  # case 4
            c = tree[1]
        elif has_u != has_v:  # case 3
            c = _ll_set(u if has_u else v, cnt, ids, ovf, pool, load, cap, -1)
            if load[c] >= limit * cap[c]:
                c = tree[1]
        else:
            c = _ll_common(u, v, cnt, ids, ovf, pool, load, cap)
            if c >= 0:  # case 1
                if load[c] >= limit * cap[c]:
                    c = _ll_set(v, cnt, ids, ovf, pool, load, cap,
                                _ll_set(u, cnt, ids, ovf, pool, load, cap, -1))
                    if load[c] >= limit * cap[c]:
                        c = tree[1]
            else:  # case 2: keep one endpoint whole, cut the other
                if rule == RULE_LIBRA:
                    s = u if degree[u] <= degree[v] else v
                else:
                    s = u if rem[u] >= rem[v] else v
                t = v if s == u else u
                c = _ll_set(s, cnt, ids, ovf, pool, load, cap, -1)
                if load[c] >= limit * cap[c]:
                    c = _ll_set(t, cnt, ids, ovf, pool, load, cap, -1)
                    if load[c] >= limit * cap[c]:
                        c = tree[1]
        out[e] = c
        load[c] += weight[e]
        _tree_update(tree, c, size, load, cap)
        if ovf.shape[0] > 0 and used + 2 > pool.shape[0]:
            pool = _room(pool, used, ovf)
        used = _add(u, c, cnt, ids, ovf, pool, used)
        used = _add(v, c, cnt, ids, ovf, pool, used)
        rem[u] -= 1
        rem[v] -= 1
    _done(counter, order.shape[0])
    return load, pool


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


@njit(cache=True, nogil=True)
def hdrf_assign(src, dst, order, n, p, cap, lam, eps, normalized, limit, degree, out, sets,
                counter):
    """HDRF (Petroni et al., CIKM 2015) with partial degrees and edge-count loads.

    Score of cluster ``c`` for edge (u, v): ``g(u, c) + g(v, c) + lam * bal(c)``
    with ``g(x, c) = 1 + (1 - theta(x))`` if ``c`` in A(x) else 0 and
    ``theta(u) = d(u) / (d(u) + d(v))`` over the degrees seen so far (this edge
    included), or over ``degree`` when it is given (non-empty). ``bal(c) = maxload - load_c``, divided by ``eps + maxload -
    minload`` when ``normalized`` is 1 (the paper's formula), by ``eps + maxload``
    when it is 2 (the reference implementation, whose running minimum size
    never leaves 0: `vcut.partition.HDRF_NORMALIZED`). Loads are divided by
    the capacity fraction times p (equal shares: unchanged). Only clusters in
    A(u) or A(v), and the least loaded cluster, can score highest; ties go to
    the lowest id. ``sets``: empty replica sets (`replica_sets`); returns their
    bitset rows at the end (a new array when the pool grew). ``counter`` as
    for `greedy_assign`.
    """
    cnt, ids, ovf, pool = sets
    if ids.shape[1] == 0:  # dense bitsets: the plain kernel
        _hdrf_dense(src, dst, order, cap, lam, eps, normalized, np.full(p, limit), degree,
                    np.zeros(n, dtype=np.int64), out, pool, np.zeros(p, dtype=np.float64), 0.0,
                    counter)
        _count_rows(pool, cnt)
        return pool
    used = 0
    scale = cap * p
    load, size, tree = _loads(p, scale)
    part = np.zeros(n, dtype=np.int64)
    maxload = 0.0
    for k in range(order.shape[0]):
        if _stopped(k, counter):
            break
        e = order[k]
        u = src[e]
        v = dst[e]
        th_u, th_v, c_min, denom, best, best_s = _hdrf_start(
            u, v, degree, part, load, scale, tree, lam, eps, normalized, maxload)
        for which in range(2):
            x = u if which == 0 else v
            y = v if which == 0 else u
            row = _row(x, cnt, ids, ovf)
            ry = _row(y, cnt, ids, ovf)
            if row < 0:
                for i in range(cnt[x]):
                    c = np.int64(ids[x, i])
                    in_y = _in_row(y, ry, c, cnt, ids, pool)
                    best, best_s = _hdrf_score(c, which == 0 or in_y, which == 1 or in_y, load,
                                               scale, limit, c_min, lam, maxload, denom, th_u,
                                               th_v, best, best_s)
            else:
                for wi in range(pool.shape[1]):
                    bits = pool[row, wi]
                    while bits != np.uint64(0):
                        c = wi * 64 + _lowbit(bits)
                        bits &= bits - np.uint64(1)
                        in_y = _in_row(y, ry, c, cnt, ids, pool)
                        best, best_s = _hdrf_score(c, which == 0 or in_y, which == 1 or in_y,
                                                   load, scale, limit, c_min, lam, maxload,
                                                   denom, th_u, th_v, best, best_s)
        out[e] = best
        maxload = _hdrf_commit(best, load, scale, tree, size, maxload)
        if ovf.shape[0] > 0 and used + 2 > pool.shape[0]:
            pool = _room(pool, used, ovf)
        used = _add(u, best, cnt, ids, ovf, pool, used)
        used = _add(v, best, cnt, ids, ovf, pool, used)
    _done(counter, order.shape[0])
    return pool


@njit(cache=True)
def _mix(x):
    """splitmix64 finaliser."""
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@njit(cache=True)
def dbh_assign(src, dst, degree, cum_cap, seed, out):
    """Degree-based hashing (Xie et al., NIPS 2014): hash the endpoint of lower
    degree (ties: the lower id) to a cluster; ``cum_cap`` maps the hash to
    clusters in proportion to their capacities."""
    for e in range(src.shape[0]):
        out[e] = _dbh_one(src[e], dst[e], degree[src[e]], degree[dst[e]], cum_cap, seed)


@njit(cache=True)
def dbh_pairs(src, dst, du, dv, cum_cap, seed, out):
    """`dbh_assign` with the endpoints' degrees given per edge (``du[e]``, ``dv[e]``):
    a piece of the stream without the whole degree array (`vcut.distributed`)."""
    for e in range(src.shape[0]):
        out[e] = _dbh_one(src[e], dst[e], du[e], dv[e], cum_cap, seed)


@helper
def _dbh_one(u, v, du, dv, cum_cap, seed):
    x = u if (du < dv or (du == dv and u < v)) else v
    h = _mix(np.uint64(x) + np.uint64(seed) * np.uint64(0x9E3779B97F4A7C15))
    r = (h >> np.uint64(11)) * (1.0 / 9007199254740992.0)
    return np.searchsorted(cum_cap, r, side="right")


#: GraphX's partition strategies (org.apache.spark.graphx.PartitionStrategy).
GRAPHX_1D = 0
GRAPHX_2D = 1
GRAPHX_CRVC = 2
#: The multiplier GraphX mixes vertex ids with.
GRAPHX_PRIME = 1125899906842597


@njit(cache=True, inline="always")
def _graphx_hash(x):
    """``|x * GRAPHX_PRIME|`` on a wrapping 64-bit integer, as GraphX computes it on a
    Long, as an unsigned value (the product -2**63 counts as 2**63, where Scala's
    ``math.abs`` would leave it negative)."""
    # in unsigned arithmetic, which wraps by definition: a signed product that overflows is
    # undefined to LLVM, which may then fold the sign test away (it did when this function
    # was compiled apart from its caller)
    y = np.uint64(x) * np.uint64(GRAPHX_PRIME)
    if y >= np.uint64(1 << 63):
        return np.uint64(0) - y
    return y


@njit(cache=True)
def graphx_assign(src, dst, p, rule, seed, out):
    """GraphX's hash partitioning of edges into ``p`` parts (equal shares).

    ``GRAPHX_1D`` (EdgePartition1D): the source's hash; ``GRAPHX_2D``
    (EdgePartition2D): a ceil(sqrt(p))-wide grid, the source's hash picks the
    column and the destination's the row (GraphX's rule for a p that is not a
    square: columns of ``ceil(p / side)`` parts, the last one shorter), so a
    vertex has at most 2 ceil(sqrt(p)) replicas; ``GRAPHX_CRVC``
    (CanonicalRandomVertexCut): a hash of the pair ordered (min, max), with
    `_mix` and ``seed`` for Scala's tuple hash.
    """
    side = np.int64(np.ceil(np.sqrt(p)))
    while side * side < p:  # floating-point square roots of large squares
        side += 1
    while (side - 1) * (side - 1) >= p:
        side -= 1
    up = np.uint64(p)
    us = np.uint64(side)
    rows = (p + side - 1) // side
    last = p - rows * (side - 1)
    for e in range(src.shape[0]):
        u = src[e]
        v = dst[e]
        if rule == GRAPHX_1D:
            out[e] = np.int64(_graphx_hash(u) % up)
        elif rule == GRAPHX_2D:
            if side * side == p:
                col = np.int64(_graphx_hash(u) % us)
                row = np.int64(_graphx_hash(v) % us)
                out[e] = (col * side + row) % p
            else:
                col = np.int64(_graphx_hash(u) % up) // rows
                inner = rows if col < side - 1 else last
                out[e] = col * rows + np.int64(_graphx_hash(v) % np.uint64(inner))
        else:
            a = min(u, v)
            b = max(u, v)
            h = _mix(np.uint64(a) * np.uint64(0x9E3779B97F4A7C15) ^
                     _mix(np.uint64(b) + np.uint64(seed) * np.uint64(0xD1B54A32D192ED03)))
            out[e] = np.int64(h % up)


@njit(cache=True)
def stream_order(indptr, adj_edge, adj_vertex, n, m, depth_first):
    """Edges in the order a BFS (or DFS) over vertices discovers them.

    Traversal starts at vertex 0 and restarts at the lowest unvisited vertex;
    visiting a vertex emits its not yet emitted edges in adjacency order.
    """
    order = np.empty(m, dtype=np.int64)
    emitted = np.zeros(m, dtype=np.bool_)
    seen = np.zeros(n, dtype=np.bool_)
    stack = np.empty(n + m + 1, dtype=np.int64)
    k = 0
    for root in range(n):
        if seen[root]:
            continue
        head = 0
        tail = 0
        stack[tail] = root
        tail += 1
        seen[root] = True
        while head < tail:
            if depth_first:
                tail -= 1
                x = stack[tail]
            else:
                x = stack[head]
                head += 1
            for j in range(indptr[x], indptr[x + 1]):
                e = adj_edge[j]
                if not emitted[e]:
                    emitted[e] = True
                    order[k] = e
                    k += 1
                y = adj_vertex[j]
                if not seen[y]:
                    seen[y] = True
                    stack[tail] = y
                    tail += 1
            if depth_first:
                head = 0
    return order[:k]


@njit(cache=True)
def split_pairs(src, dst, n, contracted, cycles, dominant_weight):
    """Edges of the split-and-connect graph as pairs ``(a, b, w)``.

    Clones of a vertex are taken in edge order (a counting sort over the
    vertices, O(n + m)); consecutive clones are joined by an auxiliary edge of
    weight 1, the last and the first too when the vertex has degree >= 3 and
    ``cycles``. In the split form clone ``2e`` is edge ``e``'s first endpoint,
    ``2e + 1`` its second, and each pair gets a dominant edge; in the
    contracted form the clone of edge ``e`` is vertex ``e``. Returns
    ``(a, b, w, n_aux)``.
    """
    m = src.shape[0]
    ptr = np.zeros(n + 1, dtype=np.int64)
    for e in range(m):
        ptr[src[e] + 1] += 1
        ptr[dst[e] + 1] += 1
    for v in range(n):
        ptr[v + 1] += ptr[v]
    pos = ptr[:-1].copy()
    clone = np.empty(2 * m, dtype=np.int64)
    for e in range(m):
        for side in range(2):
            v = src[e] if side == 0 else dst[e]
            clone[pos[v]] = e if contracted else 2 * e + side
            pos[v] += 1
    cap = 2 * m + (0 if contracted else m)
    a = np.empty(cap, dtype=np.int64)
    b = np.empty(cap, dtype=np.int64)
    w = np.empty(cap, dtype=np.int64)
    k = 0
    for v in range(n):
        lo = ptr[v]
        hi = ptr[v + 1]
        for j in range(lo, hi - 1):
            a[k] = clone[j]
            b[k] = clone[j + 1]
            w[k] = 1
            k += 1
        if cycles and hi - lo >= 3:
            a[k] = clone[hi - 1]
            b[k] = clone[lo]
            w[k] = 1
            k += 1
    n_aux = k
    if not contracted:
        for e in range(m):
            a[k] = 2 * e
            b[k] = 2 * e + 1
            w[k] = dominant_weight
            k += 1
    return a[:k], b[:k], w[:k], n_aux


@njit(cache=True)
def symmetric_csr(a, b, w, nv):
    """CSR (xadj, adjncy, adjwgt) of the undirected edges ``(a[i], b[i], w[i])``."""
    xadj = np.zeros(nv + 1, dtype=np.int64)
    for i in range(a.shape[0]):
        xadj[a[i] + 1] += 1
        xadj[b[i] + 1] += 1
    for v in range(nv):
        xadj[v + 1] += xadj[v]
    pos = xadj[:-1].copy()
    adjncy = np.empty(2 * a.shape[0], dtype=np.int64)
    adjwgt = np.empty(2 * a.shape[0], dtype=np.int64)
    for i in range(a.shape[0]):
        adjncy[pos[a[i]]] = b[i]
        adjwgt[pos[a[i]]] = w[i]
        pos[a[i]] += 1
        adjncy[pos[b[i]]] = a[i]
        adjwgt[pos[b[i]]] = w[i]
        pos[b[i]] += 1
    return xadj, adjncy, adjwgt


@njit(cache=True)
def aux_cut(xadj, adjncy, adjwgt, parts):
    """Edges of weight 1 (Ψ's auxiliary edges) whose ends lie in different parts, each
    counted once (at its lower end)."""
    cut = 0
    for u in range(xadj.shape[0] - 1):
        for j in range(xadj[u], xadj[u + 1]):
            v = adjncy[j]
            if adjwgt[j] == 1 and u < v and parts[u] != parts[v]:
                cut += 1
    return cut


@njit(cache=True)
def label_propagation(indptr, indices, ew, vw, cap, perm, iters, labels):
    """Size-constrained label propagation (in place on ``labels``).

    Visits vertices in ``perm`` order, ``iters`` rounds at most; a vertex takes
    the neighbouring label with the largest total edge weight ``ew`` whose
    community weight (sum of ``vw``) stays within ``cap`` with it (ties: the
    current label, then the smallest label). Returns the rounds run.
    """
    n = len(vw)
    size = np.zeros(n)
    for v in range(n):
        size[labels[v]] += vw[v]
    acc = np.zeros(n)
    touched = np.empty(n, dtype=np.int64)
    rounds = 0
    for _ in range(iters):
        rounds += 1
        moved = 0
        for v in perm:
            nt = 0
            for j in range(indptr[v], indptr[v + 1]):
                lab = labels[indices[j]]
                if acc[lab] == 0.0:
                    touched[nt] = lab
                    nt += 1
                acc[lab] += ew[j]
            own = labels[v]
            best = own
            best_w = acc[own]
            for i in range(nt):
                lab = touched[i]
                if lab == own:
                    continue
                if size[lab] + vw[v] > cap:
                    continue
                if acc[lab] > best_w or (acc[lab] == best_w and best != own and lab < best):
                    best = lab
                    best_w = acc[lab]
            for i in range(nt):
                acc[touched[i]] = 0.0
            if best != own:
                size[own] -= vw[v]
                size[best] += vw[v]
                labels[v] = best
                moved += 1
        if moved == 0:
            break
    return rounds
