"""Numba kernels of the FM refinement of an edge partition (`vcut.quality`
holds the API and the documentation).

The objective is the number of replicas, sum_v |A(v)| (the connectivity of
the hypergraph whose nodes are the edges and whose nets are the vertices).
A move takes one edge ``e = (u, v)`` from its cluster ``a`` to a cluster
``b``; its gain is ``[u's only edge in a] + [v's only edge in a] - [u not
in b] - [v not in b]``, in -2..2. Only clusters of ``u`` or ``v`` are
targets (any other cluster costs two replicas).

Localised searches (as in Mt-KaHyPar's and KaMinPar's FM): from a seed
vertex, its edges go into a max-priority queue by gain (ties: the edge
pushed last, which keeps the search where it has just moved); the best
edge moves when its target has room, even at a negative gain, and is then
locked; the edges of its endpoints whose gain may have risen are pushed
again with their new gains (a fallen gain is found when its edge is popped
and re-evaluated, and the edge goes back in line): all edges of an endpoint
that gained a replica in the target, or that left a full set of slots, and
the one edge an endpoint has left in the source cluster. (The room a move
frees in the source cluster re-queues nothing: the edges it would let move
are found when a later search reaches them.)
A search stops after ``limit`` moves that do not beat its best prefix, or at
the first move that takes it more than ``drop`` below that prefix, and the
moves after that prefix are undone (loads restored exactly). Only
prefixes with a positive total gain are kept, so the replica count never
rises. The first pass seeds a search at every replicated vertex not touched
by an earlier search of the pass, in ``order``; the next passes only at the
endpoints of the edges the previous pass moved.

Replica sets are per-vertex slots (``sptr``; ``sl``: cluster << 32 | edge
count in one word, the ``snum[v]`` used slots of v first, so a lookup reads
one array and never a free slot), |A(v)| + ``slack`` of them: a move that
needs a slot where none is free is not considered.
"""

import numpy as np

from vcut_base.jitcache import helper, njit
from vcut_base.progress_kernels import TICK_MASK

#: bits of a queue key below the gain: the push stamp (ties: the last pushed)
STAMP_BITS = 40
STAMP_MASK = (1 << STAMP_BITS) - 1
#: a slot holds its cluster above this bit and its edge count below it
CLUSTER_SHIFT = 32
COUNT_MASK = (1 << CLUSTER_SHIFT) - 1


@helper
def slot(v, c, sptr, snum, sl):
    """The slot of cluster ``c`` among ``v``'s used ones; -1 if none."""
    for s in range(sptr[v], sptr[v] + snum[v]):
        if sl[s] >> CLUSTER_SHIFT == c:
            return s
    return -1


@helper
def count(s, sl):
    """The edge count of slot ``s``."""
    return sl[s] & COUNT_MASK


@helper
def has_free(v, sptr, snum):
    """Whether ``v`` has a free slot."""
    return snum[v] < sptr[v + 1] - sptr[v]


@helper
def _add_copy(x, c, sptr, snum, sl):
    """One more edge of ``x`` in cluster ``c``: its slot's count (a free slot taken when ``x``
    had none there); 1 when that made a new replica, else 0."""
    s = slot(x, c, sptr, snum, sl)
    new = 0
    if s < 0:
        s = sptr[x] + snum[x]
        snum[x] += 1
        sl[s] = c << CLUSTER_SHIFT
        new = 1
    sl[s] += 1
    return new


@helper
def _remove_copy(x, c, sptr, snum, sl):
    """One edge fewer of ``x`` in cluster ``c`` (the slot freed, the last used one moved
    into its place, when that was the last); -1 when a replica went, else 0."""
    s = slot(x, c, sptr, snum, sl)
    sl[s] -= 1
    if sl[s] & COUNT_MASK == 0:
        snum[x] -= 1
        sl[s] = sl[sptr[x] + snum[x]]
        return -1
    return 0


@njit(cache=True)
def build_slots(ptr, adj, out, weight, n, k, slack):
    """``(load, sptr, snum, sl, replicas)``: each cluster's load (edge weight), each
    vertex's clusters and its edge count in each (``sl[s]``: cluster << 32 | count, the
    used slots of v first, ``snum[v]`` of them), with ``slack`` free slots (at most its
    degree in all)."""
    load = np.zeros(k)
    for e in range(out.shape[0]):
        load[out[e]] += weight[e]
    mark = np.full(k, -1, dtype=np.int64)
    sptr = np.zeros(n + 1, dtype=np.int64)
    for v in range(n):
        d = ptr[v + 1] - ptr[v]
        a = 0
        for j in range(ptr[v], ptr[v + 1]):
            c = out[adj[j]]
            if mark[c] != v:
                mark[c] = v
                a += 1
        sptr[v + 1] = sptr[v] + min(d, a + slack)
    snum = np.zeros(n, dtype=np.int64)
    sl = np.zeros(sptr[n], dtype=np.int64)
    at = np.empty(k, dtype=np.int64)  # the slot of cluster c in v's (when mark[c] == v + n)
    for v in range(n):  # as _add_copy edge by edge (the same slots), without slot scans
        for j in range(ptr[v], ptr[v + 1]):
            c = out[adj[j]]
            if mark[c] != v + n:
                mark[c] = v + n
                at[c] = sptr[v] + snum[v]
                snum[v] += 1
                sl[at[c]] = c << CLUSTER_SHIFT
            sl[at[c]] += 1
    return load, sptr, snum, sl, int(snum.sum())


@helper
def _mark(v, a, sptr, snum, sl, marks, stamp):
    """``marks[c] = stamp`` for each cluster c of ``v``; ``(end of v's used slots, whether
    v has exactly one edge in cluster a)``."""
    end = sptr[v] + snum[v]
    one = False
    for s in range(sptr[v], end):
        c = sl[s] >> CLUSTER_SHIFT
        marks[c] = stamp
        if c == a:
            one = sl[s] & COUNT_MASK == 1
    return end, one


@helper
def _gain(e, src, dst, weight, out, load, bound, rel, sptr, snum, sl, mu, mv, stamp):
    """``(gain, target)`` of the best move of edge ``e`` (target -1: none).

    Among targets, the highest gain, then the lowest load / bound, then the
    lowest id (a total order: the result does not depend on slot positions).
    ``rel``: each cluster's load / bound, kept up by the caller (no division per
    candidate: a hub's edge has a candidate per cluster of the hub).
    ``mu``/``mv``: per-cluster marks, ``stamp``: a fresh mark value.
    """
    a = out[e]
    u = src[e]
    v = dst[e]
    w = weight[e]
    su = sptr[u]
    sv = sptr[v]
    eu, lu = _mark(u, a, sptr, snum, sl, mu, stamp)
    ev, lv = _mark(v, a, sptr, snum, sl, mv, stamp)
    base = np.int64(lu) + np.int64(lv)
    free_u = lu or eu < sptr[u + 1]
    free_v = lv or ev < sptr[v + 1]
    best = -1
    bg = np.int64(-3)
    brel = 0.0
    for side in range(2):
        s0 = su if side == 0 else sv
        s1 = eu if side == 0 else ev
        for s in range(s0, s1):
            b = sl[s] >> CLUSTER_SHIFT
            if b == a or (side == 1 and mu[b] == stamp):
                continue  # (a cluster of both is seen from u)
            hu = mu[b] == stamp
            hv = mv[b] == stamp
            if (not hu and not free_u) or (not hv and not free_v):
                continue
            g = base - np.int64(not hu) - np.int64(not hv)
            if g < bg or load[b] + w > bound[b]:
                continue
            r = rel[b]
            if g > bg or r < brel or (r == brel and b < best):
                bg = g
                best = b
                brel = r
    return bg, best


#: a vertex with at least this many clusters has its edges' gains found by `_gain_x`
BATCH_MIN = 8


@helper
def _prep_x(x, rel, sptr, snum, sl, mx, cx, xs, stamp):
    """For `_gain_x` on ``x``'s edges: ``mx[c] = stamp`` and ``cx[c]`` = x's edge count for
    each cluster c of x, and x's clusters in ``xs`` by (load / bound, id) ascending; more
    than 32 of them are left for `_sort_x`."""
    na = snum[x]
    for t in range(na):
        v = sl[sptr[x] + t]
        c = v >> CLUSTER_SHIFT
        mx[c] = stamp
        cx[c] = v & COUNT_MASK
        xs[t] = c
    if na > 32:
        return na
    for t in range(1, na):  # insertion sort by (rel, id)
        c = xs[t]
        i = t
        while i > 0 and (rel[xs[i - 1]] > rel[c] or (rel[xs[i - 1]] == rel[c] and xs[i - 1] > c)):
            xs[i] = xs[i - 1]
            i -= 1
        xs[i] = c
    return na


@helper
def _before(rel, a, b):
    """Cluster ``a`` comes before ``b`` in `_prep_x`'s order: (load / bound, id)."""
    return rel[a] < rel[b] or (rel[a] == rel[b] and a < b)


@helper
def _sort_x(xs, na, rel):
    """``xs[:na]`` by (``rel``, id), in place: `_prep_x`'s order for many clusters. A
    heapsort (the ids are distinct, so the order is total and any sort gives it): numba's
    ``np.sort`` and ``np.argsort`` took 1.9 s of the first compilation of `fm`."""
    for start in range(na // 2 - 1, -1, -1):
        _sift(xs, start, na, rel)
    for end in range(na - 1, 0, -1):
        xs[0], xs[end] = xs[end], xs[0]
        _sift(xs, 0, end, rel)


@helper
def _sift(xs, i, size, rel):
    """Restore the max-heap (by `_before`) of ``xs[:size]`` below ``i``."""
    while True:
        a = 2 * i + 1
        if a >= size:
            return
        if a + 1 < size and _before(rel, xs[a], xs[a + 1]):
            a += 1
        if not _before(rel, xs[i], xs[a]):
            return
        xs[i], xs[a] = xs[a], xs[i]
        i = a


@helper
def _gain_x(f, x, na, src, dst, weight, out, load, bound, rel, sptr, snum, sl, mx, cx, xs,
            xstamp, my, ystamp):
    """`_gain` of edge ``f`` of ``x`` after `_prep_x` (loads unchanged since): the same
    result, found without a pass over x's clusters (a hub has one per cluster). The
    candidates in both ends' clusters come from y's clusters; the best of those of x
    alone (gain base - 1) is the first of ``xs`` with room that is neither a nor y's."""
    a = out[f]
    y = dst[f] if src[f] == x else src[f]
    w = weight[f]
    lx = cx[a] == 1
    sy = sptr[y]
    ey, ly = _mark(y, a, sptr, snum, sl, my, ystamp)
    base = np.int64(lx) + np.int64(ly)
    free_x = lx or na < sptr[x + 1] - sptr[x]
    free_y = ly or ey < sptr[y + 1]
    best = -1
    bg = np.int64(-3)
    brel = 0.0
    for s in range(sy, ey):
        b = sl[s] >> CLUSTER_SHIFT
        if b == a:
            continue
        hx = mx[b] == xstamp
        if not hx and not free_x:
            continue
        g = base - np.int64(not hx)
        if g < bg or load[b] + w > bound[b]:
            continue
        r = rel[b]
        if g > bg or r < brel or (r == brel and b < best):
            bg = g
            best = b
            brel = r
    if free_y and bg <= base - 1:
        for t in range(na):
            b = xs[t]
            if b == a or my[b] == ystamp or load[b] + w > bound[b]:
                continue
            r = rel[b]
            if bg < base - 1 or r < brel or (r == brel and b < best):
                bg = base - 1
                best = b
            break
    return bg, best


@helper
def move_edge(e, b, src, dst, weight, out, load, sptr, snum, sl):
    """Edge ``e`` to cluster ``b`` (its slots updated); the change of the replica count."""
    a = out[e]
    change = _remove_copy(src[e], a, sptr, snum, sl) + _remove_copy(dst[e], a, sptr, snum, sl)
    change += _add_copy(src[e], b, sptr, snum, sl) + _add_copy(dst[e], b, sptr, snum, sl)
    out[e] = b
    load[a] -= weight[e]
    load[b] += weight[e]
    return change


@helper
def _push(hkey, hval, hver, size, key, e, ver):
    i = size
    while i > 0:
        parent = (i - 1) >> 1
        if hkey[parent] >= key:
            break
        hkey[i] = hkey[parent]
        hval[i] = hval[parent]
        hver[i] = hver[parent]
        i = parent
    hkey[i] = key
    hval[i] = e
    hver[i] = ver
    return size + 1


@helper
def _pop(hkey, hval, hver, size):
    """Removes the top entry (read it first); the new size."""
    size -= 1
    key = hkey[size]
    e = hval[size]
    ver = hver[size]
    i = 0
    while True:
        c = 2 * i + 1
        if c >= size:
            break
        if c + 1 < size and hkey[c + 1] > hkey[c]:
            c += 1
        if hkey[c] <= key:
            break
        hkey[i] = hkey[c]
        hval[i] = hval[c]
        hver[i] = hver[c]
        i = c
    if size > 0:
        hkey[i] = key
        hval[i] = e
        hver[i] = ver
    return size


@njit(cache=True)
def _grown(a):
    """``a`` in an array twice its length (a loop, not a slice copy, whose code took
    0.85 s to compile per dtype)."""
    b = np.empty(2 * a.shape[0], dtype=a.dtype)
    for i in range(a.shape[0]):
        b[i] = a[i]
    return b


@njit(cache=True)
def _enqueue(hkey, hval, hver, size, g, stamp, e, ver):
    """Edge ``e`` (version ``ver``) queued with gain ``g``, ties by ``stamp``
    (the later first); the queue's arrays (grown when full) and new size. `fm` calls
    `_queue` instead while the queue has room (no reference counting per entry)."""
    if size == hkey.shape[0]:
        hkey = _grown(hkey)
        hval = _grown(hval)
        hver = _grown(hver)
    return hkey, hval, hver, _queue(hkey, hval, hver, size, g, stamp, e, ver)


@helper
def _queue(hkey, hval, hver, size, g, stamp, e, ver):
    """`_enqueue` into a queue with room; the new size."""
    return _push(hkey, hval, hver, size, ((g + 3) << STAMP_BITS) | (stamp & STAMP_MASK), e, ver)


@njit(cache=True, nogil=True)
def fm(src, dst, weight, ptr, adj, n, k, out, bound, order, passes, slack, limit, drop, hub,
       budget, counter):
    """FM passes (module docstring) on ``out`` in place, each cluster's load
    kept within ``bound`` (a cluster above it may only lose weight);
    ``hub``: the edges of a vertex of higher degree are not pushed again after
    a move next to it (they are evaluated when popped). Stops after a pass
    that gains nothing, after ``passes`` passes, or before the first search
    that would start with ``budget`` moves tried (kept or undone) in all
    (``budget`` < 0: no such bound).
    Returns (moves kept, passes run, replicas before, replicas after, moves tried)."""
    m = src.shape[0]
    load, sptr, snum, sl, before = build_slots(ptr, adj, out, weight, n, k, slack)
    replicas = before
    rel = load / bound
    cx = np.zeros(k, dtype=np.int64)
    xs = np.empty(k, dtype=np.int64)
    na = 0
    xstamp = 0
    mu = np.full(k, -1, dtype=np.int64)
    mv = np.full(k, -1, dtype=np.int64)
    mstamp = 0
    ver = np.zeros(m, dtype=np.int64)
    lock = np.zeros(m, dtype=np.int64)
    visited = np.zeros(n, dtype=np.int64)
    cap = 1024
    hkey = np.empty(cap, dtype=np.int64)
    hval = np.empty(cap, dtype=np.int64)
    hver = np.empty(cap, dtype=np.int64)
    log_e = np.empty(cap, dtype=np.int64)
    log_a = np.empty(cap, dtype=np.int64)
    log_la = np.empty(cap)
    log_lb = np.empty(cap)
    pstamp = 0
    sid = 0
    kept = 0
    tried = 0
    run = 0
    step = 0
    active = np.ones(n, dtype=np.bool_)  # seeds of the next pass: all, then next to kept moves
    nxt = np.zeros(n, dtype=np.bool_)
    while run < passes:
        run += 1
        gained = 0
        for seed in order:
            if visited[seed] == run or not active[seed]:
                continue
            step += 1
            if step & TICK_MASK == 0:
                counter[0] = step
                if counter[1] != 0:
                    return kept, run, before, replicas, tried
            if snum[seed] < 2:
                continue
            if budget >= 0 and tried >= budget:
                counter[0] = step
                return kept, run, before, replicas, tried
            visited[seed] = run
            sid += 1
            size = 0
            batch = snum[seed] >= BATCH_MIN
            if batch:
                mstamp += 1
                xstamp = mstamp
                na = _prep_x(seed, rel, sptr, snum, sl, mu, cx, xs, xstamp)
                if na > 32:
                    _sort_x(xs, na, rel)
            for j in range(ptr[seed], ptr[seed + 1]):
                f = adj[j]
                mstamp += 1
                if batch:
                    g, b = _gain_x(f, seed, na, src, dst, weight, out, load, bound, rel, sptr,
                                   snum, sl, mu, cx, xs, xstamp, mv, mstamp)
                else:
                    g, b = _gain(f, src, dst, weight, out, load, bound, rel, sptr, snum, sl, mu,
                                 mv, mstamp)
                if b >= 0:
                    ver[f] += 1
                    pstamp += 1
                    if size < hkey.shape[0]:
                        size = _queue(hkey, hval, hver, size, g, pstamp, f, ver[f])
                    else:
                        hkey, hval, hver, size = _enqueue(hkey, hval, hver, size, g, pstamp, f,
                                                          ver[f])
            cum = 0
            best = 0
            best_len = 0
            nm = 0
            while size > 0:
                key = hkey[0]
                e = hval[0]
                ev = hver[0]
                size = _pop(hkey, hval, hver, size)
                if ev != ver[e] or lock[e] == sid:
                    continue
                mstamp += 1
                g, b = _gain(e, src, dst, weight, out, load, bound, rel, sptr, snum, sl, mu, mv,
                             mstamp)
                if b < 0:
                    continue
                if g < (key >> STAMP_BITS) - 3:  # worse than queued: back in line
                    ver[e] += 1
                    pstamp += 1
                    if size < hkey.shape[0]:
                        size = _queue(hkey, hval, hver, size, g, pstamp, e, ver[e])
                    else:
                        hkey, hval, hver, size = _enqueue(hkey, hval, hver, size, g, pstamp, e,
                                                          ver[e])
                    continue
                if nm == log_e.shape[0]:
                    log_e = _grown(log_e)
                    log_a = _grown(log_a)
                    log_la = _grown(log_la)
                    log_lb = _grown(log_lb)
                a = out[e]
                log_e[nm] = e
                log_a[nm] = a
                log_la[nm] = load[a]
                log_lb[nm] = load[b]
                to = b
                full_u = not has_free(src[e], sptr, snum)
                full_v = not has_free(dst[e], sptr, snum)
                replicas += move_edge(e, b, src, dst, weight, out, load, sptr, snum, sl)
                rel[a] = load[a] / bound[a]
                rel[to] = load[to] / bound[to]
                lock[e] = sid
                nm += 1
                cum += g
                if cum > best:
                    best = cum
                    best_len = nm
                elif nm - best_len >= limit or cum < best - drop:
                    break
                for side in range(2):
                    x = src[e] if side == 0 else dst[e]
                    visited[x] = run
                    if ptr[x + 1] - ptr[x] > hub:
                        continue
                    # only gains that rise are pushed again (a fallen one is found stale
                    # when popped): all of x's edges when x gained a replica in the target
                    # (no new replica at x to move there) or left a with its slots full (a
                    # free slot now); its one edge left in a (that replica may go now)
                    sa = slot(x, a, sptr, snum, sl)
                    ca = 0 if sa < 0 else count(sa, sl)
                    if count(slot(x, to, sptr, snum, sl), sl) == 1 or (
                            ca == 0 and (full_u if side == 0 else full_v)):
                        only = -1
                    elif ca == 1:
                        only = a
                    else:
                        continue
                    batch = only < 0 and snum[x] >= BATCH_MIN
                    if batch:
                        mstamp += 1
                        xstamp = mstamp
                        na = _prep_x(x, rel, sptr, snum, sl, mu, cx, xs, xstamp)
                        if na > 32:
                            _sort_x(xs, na, rel)
                    for j in range(ptr[x], ptr[x + 1]):
                        f = adj[j]
                        if lock[f] == sid or (only >= 0 and out[f] != only):
                            continue
                        mstamp += 1
                        if batch:
                            g, b = _gain_x(f, x, na, src, dst, weight, out, load, bound, rel,
                                           sptr, snum, sl, mu, cx, xs, xstamp, mv, mstamp)
                        else:
                            g, b = _gain(f, src, dst, weight, out, load, bound, rel, sptr, snum,
                                         sl, mu, mv, mstamp)
                        ver[f] += 1  # its queued entry is stale either way
                        if b >= 0:
                            pstamp += 1
                            if size < hkey.shape[0]:
                                size = _queue(hkey, hval, hver, size, g, pstamp, f, ver[f])
                            else:
                                hkey, hval, hver, size = _enqueue(hkey, hval, hver, size, g,
                                                                  pstamp, f, ver[f])
            for t in range(nm - 1, best_len - 1, -1):  # undo the moves after the best prefix
                e = log_e[t]
                b = out[e]
                a = log_a[t]
                replicas += move_edge(e, a, src, dst, weight, out, load, sptr, snum, sl)
                load[a] = log_la[t]
                load[b] = log_lb[t]
                rel[a] = load[a] / bound[a]
                rel[b] = load[b] / bound[b]
            for t in range(best_len):
                nxt[src[log_e[t]]] = True
                nxt[dst[log_e[t]]] = True
            kept += best_len
            tried += nm
            gained += best
        if gained == 0:
            break
        active, nxt = nxt, active
        nxt[:] = False
    counter[0] = step
    return kept, run, before, replicas, tried
