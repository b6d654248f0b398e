"""Numba kernels of the parallelism-aware vertex cut ``par`` (`vcut.parallel`).

`timed_assign` is a list scheduler over the vertices of a DAG whose tasks are
its edges (oriented from the lower to the higher node id): a vertex's
in-edges are scheduled together (at most `CHUNK` at a time) on one cluster.
A vertex is *pending* once every vertex it reads is scheduled, with a
release time (when its last input is final at its home); it becomes *ready*
when the first cluster falls idle at or after that time (or when nothing
else is ready), and the ready vertex with the highest priority (its bottom
level, `levels`) goes first. Its cluster: the one where it finishes first
under the timing model, plus ``beta * latency`` per new replica of an input.

The timing model: cluster ``c`` runs its tasks in order at ``cap[c] * p``
(``free[c]``: when its last task finishes); task ``(u, v)`` of weight ``w``
starts at ``max(free[c], when u's value is in c)``; ``u``'s value is at its
home cluster at ``avail[u]`` (0 for a vertex without in-edges, homed where
it is first used) and anywhere else ``latency`` cycles later. The candidates
are the homes of the group's inputs (at most `CANDIDATES`) and the cluster
free first among those below their work bound; a cluster over its bound
(``limit * cap[c]``) takes a group only when no cluster has room.
"""

import numpy as np

from vcut_base.jitcache import helper, njit
from vcut_base.progress_kernels import completed, stopped_at
from ir_graph.replica_kernels import add_replica, has_replica, pool_room

from .least_loaded import tree_build, tree_range, tree_update

#: In-edges of one vertex decided together, at most this many at a time.
CHUNK = 64
#: A cluster within this fraction of its work bound takes no more groups
#: unless no cluster has room.
FULL = 1e-3
#: Clusters scored per group: the first homes of its sources, then the freest.
CANDIDATES = 8


@helper
def _edge(order, k):
    return k if order.shape[0] == 0 else order[k]


@njit(cache=True, nogil=True)
def levels(src, dst, weight, order, n):
    """``(top, bottom)`` of every vertex: the longest path of task weights from a
    vertex without in-edges to it, and from it to a vertex without out-edges.

    ``order`` lists the edges by (max endpoint, min endpoint) (empty: already).
    """
    top = np.zeros(n)
    bottom = np.zeros(n)
    m = src.shape[0]
    for k in range(m):
        e = _edge(order, k)
        u = min(src[e], dst[e])
        v = max(src[e], dst[e])
        top[v] = max(top[v], top[u] + weight[e])
    for k in range(m - 1, -1, -1):
        e = _edge(order, k)
        u = min(src[e], dst[e])
        v = max(src[e], dst[e])
        bottom[u] = max(bottom[u], weight[e] + bottom[v])
    return top, bottom


@helper
def _remote(e, c, weight, numa):
    """Cycles task ``e`` adds on cluster ``c`` for reaching its memory object on
    another NUMA node (0 without `numa`, for no object, or for one not touched yet:
    the first touch places it on ``c``'s node)."""
    obj, node, starts, pen, mem, first = numa
    if obj.shape[0] == 0 or obj[e] < 0:
        return 0.0
    b = first[obj[e]]
    if b < 0:
        return 0.0
    return min(1.0, weight[e] / mem) * pen[node[c], b]


@njit(cache=True, nogil=True)
def remote_cycles(out, weight, numa):
    """Cycles of work the memory model ``numa`` added to the assignment ``out`` of the
    run that filled its first touches (`_remote` of every task)."""
    total = 0.0
    for e in range(out.shape[0]):
        total += _remote(e, out[e], weight, numa)
    return total


@helper
def _finish(k, end, order, src, dst, weight, home, avail, c, start, latency, speed, numa):
    """When edges ``order[k:end]`` finish on cluster ``c`` from ``start``."""
    t = start
    for j in range(k, end):
        e = _edge(order, j)
        u = min(src[e], dst[e])
        hu = home[u]
        a = 0.0
        if hu >= 0:
            a = avail[u] if hu == c else avail[u] + latency
        t = max(t, a) + (weight[e] + _remote(e, c, weight, numa)) / speed[c]
    return t


@helper
def _local(lo, end, order, numa, tree, size, key, ones):
    """The cluster free first on the NUMA node holding the memory object of the
    group ``order[lo:end]`` (its first task with one), -1 if none or not placed yet."""
    obj, node, starts, pen, mem, first = numa
    if obj.shape[0] == 0:
        return -1
    for j in range(lo, end):
        o = obj[_edge(order, j)]
        if o >= 0:
            b = first[o]
            return -1 if b < 0 else tree_range(tree, size, starts[b], starts[b + 1], key, ones)
    return -1


@helper
def _touch(e, c, numa):
    """Task ``e`` runs on cluster ``c``: its memory object, if untouched, goes to ``c``'s
    node (first touch)."""
    obj, node, starts, pen, mem, first = numa
    if obj.shape[0] > 0 and obj[e] >= 0 and first[obj[e]] < 0:
        first[obj[e]] = node[c]


@helper
def _offer(cand, nc, h):
    """Cluster ``h`` added to the candidates ``cand[:nc]`` unless it is one; their
    number."""
    for i in range(nc):
        if cand[i] == h:
            return nc
    cand[nc] = h
    return nc + 1


@helper
def _delay(c, res_v, res_t, t, v, crit, chains):
    """How long vertex ``v``'s group finishing at ``t`` on cluster ``c`` holds up the
    critical chain for which ``c`` is reserved (``res_v[c]`` >= 0), whose next vertex
    could start there at ``res_t[c]``: every cycle of it is a cycle more of makespan
    while the chain bounds it. Exempt: with one chain, its vertices (``crit``); with
    several (``chains``), the vertex the cluster waits for."""
    w = res_v[c]
    if w < 0 or t <= res_t[c] or (w == v if chains else crit):
        return 0.0
    return t - res_t[c]


@helper
def _release(c, res_v, key, load, limit, cap, free, tree, size, ones):
    """Cluster ``c`` is reserved for no chain vertex any more: offered again as the
    cluster free first unless full."""
    res_v[c] = -1
    key[c] = np.inf if load[c] >= limit * cap[c] * (1.0 - FULL) else free[c]
    tree_update(tree, c, size, key, ones)


#: Children per node of the vertex heaps. The ready heap holds a large share of the
#: vertices at once (a 3 M-node dijkstra trace at p = 8: 268 K on average); with four
#: children a pop descends half as many levels as in a binary heap, reading each
#: level's children from one or two cache lines (`par` on a 10 M-node trace: 10.7 ->
#: 9.2 s; eight children measured the same). The order (key, then id) is strict, so every
#: arity pops the same vertices.
ARITY = 4


@helper
def _before(ka, ia, kb, ib):
    """Whether the heap entry (key ``ka``, id ``ia``) comes before (``kb``, ``ib``)."""
    return ka < kb or (ka == kb and ia < ib)


@helper
def _hpush(key, ids, size, k, x):
    """Add ``x`` with key ``k`` to the heap of ``size`` entries; the new size."""
    i = size
    while i > 0:
        parent = (i - 1) // ARITY
        if _before(k, x, key[parent], ids[parent]):
            key[i] = key[parent]
            ids[i] = ids[parent]
            i = parent
        else:
            break
    key[i] = k
    ids[i] = x
    return size + 1


@helper
def _hpop(key, ids, size):
    """Remove the smallest entry (key, then id; returned as ``ids[size - 1]``); the new
    size."""
    size -= 1
    top_k = key[0]
    top_i = ids[0]
    k = key[size]
    x = ids[size]
    i = 0
    while True:
        first = ARITY * i + 1
        if first >= size:
            break
        m = first
        for j in range(first + 1, min(first + ARITY, size)):
            if _before(key[j], ids[j], key[m], ids[m]):
                m = j
        if _before(key[m], ids[m], k, x):
            key[i] = key[m]
            ids[i] = ids[m]
            i = m
        else:
            break
    key[i] = k
    ids[i] = x
    key[size] = top_k
    ids[size] = top_i
    return size


@njit(cache=True, nogil=True)
def timed_assign(src, dst, weight, order, ptr, out_ptr, out_v, priority, critical, hold, n, p,
                 cap, limit, latency, beta, cutoff, out, sets, home, avail, schedule, numa,
                 chains, counter):
    """Assign every edge (see the module docstring).

    Parameters
    ----------
    src, dst : int[m]; weight : float64[m]
        A simple graph (no self-loops, no repeated pairs).
    order : int[m] or empty
        Edges by (max endpoint, min endpoint) (empty: already in that order).
    ptr : int64[n + 1]
        The in-edges of vertex ``v`` are ``order[ptr[v]:ptr[v + 1]]``.
    out_ptr, out_v : int64[n + 1], int[m]
        The out-neighbours of vertex ``u`` are ``out_v[out_ptr[u]:out_ptr[u + 1]]``.
    priority : float64[n]
        Among the vertices whose inputs are available when the first cluster
        falls idle, the highest priority goes first (ties: the lowest id).
    critical : bool[n] or empty
        Vertices on a chain that bounds the makespan: once one is placed on a
        cluster and has a critical successor, that cluster is reserved for the
        chain until the successor is placed: it is not offered as the cluster
        free first, and a vertex placed there that finishes after the chain's
        value is final pays ``hold`` times the delay it causes (`_delay`).
    chains : bool
        ``critical`` holds several chains (the vertices near a longest path): each
        placed critical vertex reserves its cluster for its critical successor of
        highest priority (its heir), from when its value is there, until the heir
        is placed, while the clusters of the other chains stay offered; the heir
        may take its reserved cluster past ``limit`` (a chain longer than a
        cluster's share stays on its cluster), and only the heir is exempt from
        the hold penalty there. False: one chain, as above.
    cap : float64[p]
        Capacity fractions (sum 1): cluster ``c`` runs at ``cap[c] * p``.
    limit : float
        Work bound: cluster ``c`` takes no group that would put its work above
        ``limit * cap[c]`` while a candidate has room.
    latency : float
        Cycles a value takes to reach another cluster.
    beta : float
        Price of a new replica in units of ``latency``.
    cutoff : float
        The run stops as soon as a cluster's finish time passes it (the model
        makespan only grows, so such a run would end above it): the caller
        rejects any run above its cutoff. ``inf``: run to the end.
    out : int32[m]
        Written: the cluster of every edge.
    sets : tuple
        Empty replica sets (`ir_graph.replicas.replica_sets`).
    home : int32[n]
        Written: the cluster where each vertex's value is final (-1: no edges).
    avail : float64[n]
        Written: when each vertex's value is final there (model cycles).
    schedule : int[m]
        Written: the edges in the order they were scheduled (each cluster runs
        its tasks in this order).
    numa : tuple
        ``(obj, node, starts, pen, mem, first)``: the memory object of every edge
        (int[m], -1: none; empty: no NUMA model), the NUMA node of every
        cluster (int64[p], nondecreasing), node ``b``'s clusters
        ``starts[b]..starts[b + 1] - 1``, ``pen[a, b]`` the extra cycles of a
        DRAM access from node ``a`` to memory of node ``b``, ``mem`` the cycles
        of one DRAM access (a task of ``w`` cycles pays ``min(1, w / mem)`` of
        it) and ``first`` (int64, one per object, -1) written: the node of the
        cluster that touched each object first (first-touch placement).
    counter : int64[2]
        Progress (edges) and stop flag (`vcut_base.progress`).

    Returns
    -------
    free : float64[p]
        When each cluster finishes its last task (model cycles); stopped at the
        cutoff: when each had finished by then (the largest above ``cutoff``).
    load : float64[p]
        Work of each cluster.
    complete : bool
        Whether every edge was assigned (False: stopped at the cutoff or by
        ``counter``).
    """
    cnt, ids, ovf, pool = sets
    used = 0
    free = np.zeros(p)
    load = np.zeros(p)
    speed = cap * p
    ones = np.ones(p)
    size = 1
    while size < p:
        size *= 2
    key = np.zeros(p)  # the tree's key: free time, inf once the cluster is full
    tree = tree_build(key, ones, size)
    cand = np.empty(CANDIDATES + 2, dtype=np.int64)
    home[:] = -1
    avail[:] = 0.0
    numa[5][:] = -1
    done = 0
    # per cluster: the critical vertex it is reserved for (-1: none; with one chain,
    # a successor of the last vertex placed) and from when; with several chains, per
    # vertex the cluster reserved for it; with one, the reserved cluster
    res_v = np.full(p, -1, dtype=np.int64)
    res_t = np.zeros(p)
    wait_c = np.full(n if chains and critical.shape[0] > 0 else 0, -1, dtype=np.int32)
    rc = -1
    # vertices whose in-neighbours are all scheduled wait in `pend` by release
    # time, then in `ready` by priority once a cluster could start them
    need = np.zeros(n, dtype=np.int64)
    for v in range(n):
        need[v] = ptr[v + 1] - ptr[v]
    pk = np.empty(n)
    pi = np.empty(n, dtype=np.int64)
    rk = np.empty(n)
    ri = np.empty(n, dtype=np.int64)
    n_pend = 0
    n_ready = 0
    for u in range(n):
        if ptr[u + 1] == ptr[u]:  # no in-edges: its value is there from the start
            for j in range(out_ptr[u], out_ptr[u + 1]):
                x = out_v[j]
                need[x] -= 1
                if need[x] == 0:
                    n_pend = _hpush(pk, pi, n_pend, 0.0, x)
    floor = 0.0  # no cluster can start a vertex before: none is ready earlier
    while n_pend > 0 or n_ready > 0:
        if n_ready == 0 and pk[0] > floor:
            floor = pk[0]
        now = max(key[tree[1]], floor)
        while n_pend > 0 and pk[0] <= now:
            n_pend = _hpop(pk, pi, n_pend)
            x = pi[n_pend]
            n_ready = _hpush(rk, ri, n_ready, -priority[x], x)
        n_ready = _hpop(rk, ri, n_ready)
        v = ri[n_ready]
        crit = critical.shape[0] > 0 and critical[v]
        lo = ptr[v]
        while lo < ptr[v + 1]:
            if stopped_at(done, counter):
                return free, load, False
            end = min(lo + CHUNK, ptr[v + 1])
            group_w = 0.0
            nc = 0
            for j in range(lo, end):
                e = _edge(order, j)
                group_w += weight[e]
                h = home[min(src[e], dst[e])]
                if h >= 0 and nc < CANDIDATES:
                    nc = _offer(cand, nc, h)
            h = tree[1]
            if key[h] != np.inf:
                nc = _offer(cand, nc, h)
            h = _local(lo, end, order, numa, tree, size, key, ones)
            if h >= 0 and key[h] != np.inf:
                nc = _offer(cand, nc, h)
            best = -1
            best_s = np.inf
            best_f = 0.0
            for i in range(nc):
                c = cand[i]
                if load[c] + group_w > limit * cap[c] and load[c] > 0.0 \
                        and not (chains and res_v[c] == v):  # a chain may pass its share
                    continue
                t = _finish(lo, end, order, src, dst, weight, home, avail, c, free[c], latency,
                            speed, numa)
                new = 0
                for j in range(lo, end):
                    e = _edge(order, j)
                    u = min(src[e], dst[e])
                    if home[u] >= 0 and not has_replica(u, c, cnt, ids, ovf, pool):
                        new += 1
                s = t + beta * latency * new + hold * _delay(c, res_v, res_t, t, v, crit, chains)
                if s < best_s:
                    best, best_s, best_f = c, s, t
            if best < 0:  # every candidate is full: the first to finish among those with room
                for c in range(p):
                    if load[c] + group_w <= limit * cap[c] or load[c] == 0.0:
                        t = _finish(lo, end, order, src, dst, weight, home, avail, c, free[c],
                                    latency, speed, numa)
                        s = t + hold * _delay(c, res_v, res_t, t, v, crit, chains)
                        if s < best_s:
                            best, best_s, best_f = c, s, t
            if best < 0:  # no cluster has room: the least loaded one
                best = 0
                for c in range(1, p):
                    if load[c] / cap[c] < load[best] / cap[best]:
                        best = c
                best_f = _finish(lo, end, order, src, dst, weight, home, avail, best, free[best],
                                 latency, speed, numa)
            # room for the group's new rows (two per edge at most) before its loop, so that
            # `pool` is not reassigned per edge: a loop-carried array is counted per turn
            if ovf.shape[0] > 0 and used + 2 * (end - lo) > pool.shape[0]:
                pool = pool_room(pool, used, ovf, 2 * (end - lo))
            for j in range(lo, end):
                e = _edge(order, j)
                u = min(src[e], dst[e])
                out[e] = best
                schedule[done] = e
                _touch(e, best, numa)
                done += 1
                if home[u] < 0:  # a vertex without in-edges: homed where it is first used
                    home[u] = best
                used = add_replica(u, best, cnt, ids, ovf, pool, used)
                used = add_replica(v, best, cnt, ids, ovf, pool, used)
            if home[v] < 0:
                home[v] = best
                avail[v] = best_f
            elif home[v] != best:  # a later piece of a large group: its partial result goes home
                avail[v] = max(avail[v], best_f + latency)
            else:
                avail[v] = max(avail[v], best_f)
            free[best] = best_f
            if best_f > cutoff:  # the makespan can only grow: this run cannot be kept
                return free, load, False
            load[best] += group_w
            key[best] = np.inf if load[best] >= limit * cap[best] * (1.0 - FULL) \
                or res_v[best] >= 0 \
                else best_f
            tree_update(tree, best, size, key, ones)
            lo = end
        if crit and not chains:  # the chain moves on: reserve the cluster of v while it
            # has a critical successor
            if rc >= 0:
                _release(rc, res_v, key, load, limit, cap, free, tree, size, ones)
                rc = -1
            for j in range(out_ptr[v], out_ptr[v + 1]):
                if critical[out_v[j]]:
                    rc = home[v]
                    res_v[rc] = out_v[j]
                    res_t[rc] = avail[v]
            if rc >= 0:
                key[rc] = np.inf
                tree_update(tree, rc, size, key, ones)
        elif crit:  # one of several chains moves on: release the cluster reserved for v,
            # reserve v's for its critical successor of highest priority (its heir) unless
            # another input of the heir arrives later
            c0 = wait_c[v]
            if c0 >= 0 and res_v[c0] == v:
                _release(c0, res_v, key, load, limit, cap, free, tree, size, ones)
            heir = -1
            for j in range(out_ptr[v], out_ptr[v + 1]):
                x = out_v[j]
                if critical[x] and (heir < 0 or priority[x] > priority[heir]):
                    heir = x
            c = home[v]
            c1 = wait_c[heir] if heir >= 0 else -1
            if c1 >= 0 and res_v[c1] == heir and res_t[c1] >= avail[v]:
                heir = -1
            if heir >= 0:
                if c1 >= 0 and res_v[c1] == heir and c1 != c:
                    _release(c1, res_v, key, load, limit, cap, free, tree, size, ones)
                old = res_v[c]
                if old >= 0 and old != heir:
                    wait_c[old] = -1
                res_v[c] = heir
                res_t[c] = avail[v]
                wait_c[heir] = c
                key[c] = np.inf
                tree_update(tree, c, size, key, ones)
        for j in range(out_ptr[v], out_ptr[v + 1]):
            x = out_v[j]
            need[x] -= 1
            if need[x] == 0:
                release = 0.0
                for i in range(ptr[x], ptr[x + 1]):
                    e = _edge(order, i)
                    release = max(release, avail[min(src[e], dst[e])])
                n_pend = _hpush(pk, pi, n_pend, release, x)
    completed(counter, done)
    return free, load, True


@njit(cache=True)
def successors(src, dst, n, out_v):
    """Both sides of the DAG (edges oriented from the lower to the higher
    endpoint) by counting: returns ``(ptr, out_ptr)``, int64 (n + 1,): vertex
    ``v`` has ``ptr[v + 1] - ptr[v]`` in-edges, and ``out_v[out_ptr[u]:out_ptr[u
    + 1]]`` is written with the higher endpoints of the edges whose lower one is
    ``u``, in edge order."""
    ptr = np.zeros(n + 1, dtype=np.int64)
    out_ptr = np.zeros(n + 1, dtype=np.int64)
    for e in range(src.shape[0]):
        ptr[max(src[e], dst[e]) + 1] += 1
        out_ptr[min(src[e], dst[e]) + 1] += 1
    for v in range(n):
        ptr[v + 1] += ptr[v]
        out_ptr[v + 1] += out_ptr[v]
    fill = out_ptr[:-1].copy()
    for e in range(src.shape[0]):
        u = min(src[e], dst[e])
        out_v[fill[u]] = max(src[e], dst[e])
        fill[u] += 1
    return ptr, out_ptr


@njit(cache=True, nogil=True)
def call_labels(depth, work, limit):
    """A label per vertex, non-decreasing from 0: the vertices of every outermost call
    whose work is at most ``limit`` share one, every other vertex has its own.

    ``depth`` is each vertex's call depth in execution order: a call is the stretch
    from a vertex deeper than the one before it (or the first vertex) to the last
    before the depth drops below the call's (so calls nest or are apart); ``work`` is
    each vertex's (its in-edges' weights). One pass with a stack of the calls open,
    then one over the vertices."""
    n = depth.shape[0]
    end = np.full(n, -1, dtype=np.int64)  # per first vertex of a call within the limit
    s_start = np.empty(n + 1, dtype=np.int64)
    s_depth = np.empty(n + 1, dtype=np.int64)
    s_work = np.empty(n + 1)
    top = 0
    for i in range(n + 1):
        d = depth[i] if i < n else -1
        while top > 0 and s_depth[top - 1] > d:  # the calls deeper than this vertex end
            top -= 1
            if s_work[top] <= limit:
                end[s_start[top]] = i
            if top > 0:
                s_work[top - 1] += s_work[top]
        if i == n:
            break
        if i == 0 or d > depth[i - 1]:  # a call begins (deeper than any call open)
            s_start[top] = i
            s_depth[top] = d
            s_work[top] = 0.0
            top += 1
        if top > 0:
            s_work[top - 1] += work[i]
    labels = np.empty(n, dtype=np.int64)
    label = -1
    covered = 0  # the vertices before this are in a call taken whole
    for i in range(n):
        if i >= covered:
            label += 1
            if end[i] > i + 1:
                covered = end[i]
        labels[i] = label
    return labels
