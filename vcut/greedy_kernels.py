"""Numba kernels of the PowerGraph / Libra greedy family (spec §2, Algorithm 1).

`greedy_assign` streams the edges over the replica sets of `ir_graph.replicas.replica_sets`:
on dense bitsets (p <= 128) through `greedy_dense`, whose word operations are twice as
fast as the general set helpers; `greedy_batched` decides a batch of edges in parallel
against the state frozen at its start (`decide_dense`) and applies it in stream order
(`apply_batch`). The least loaded cluster comes from `vcut.least_loaded`.
"""

import numpy as np

from vcut_base.jitcache import helper, njit, prange
from vcut_base.progress_kernels import completed, stopped_at
from ir_graph.replica_kernels import add_replica, count_rows, pool_room

from .least_loaded import (least_of_common, least_of_rows, least_of_set, tree_of, tree_update,
                           zero_loads)

__all__ = ["greedy_assign", "greedy_sparse", "greedy_batched", "greedy_dense", "apply_batch", "decide_dense",
           "place", "RULE_PG", "RULE_LIBRA", "FULL_TOLERANCE", "RECHECK", "PARALLEL_BATCH"]

#: A cluster counts as full within this relative distance of its bound.
FULL_TOLERANCE = 1e-12

RULE_PG = 0  # case 2: the endpoint with more unassigned edges left
RULE_LIBRA = 1  # case 2: the endpoint of lower degree


@helper
def decide_dense(u, v, A, load, cap, full, rule, degree, rem):
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
        c = least_of_rows(A, u if has_u else v, 0, 0, load, cap)
        return c if load[c] < full[c] else -1
    c = least_of_rows(A, u, v, 1, load, cap)
    if c >= 0:  # case 1
        if load[c] >= full[c]:
            c = least_of_rows(A, u, v, 2, load, cap)
            if load[c] >= full[c]:
                return -1
        return c
    # case 2: keep one endpoint whole, cut the other
    if rule == RULE_LIBRA:
        s = u if degree[u] <= degree[v] else v
    else:
        s = u if rem[u] >= rem[v] else v
    t = v if s == u else u
    c = least_of_rows(A, s, 0, 0, load, cap)
    if load[c] >= full[c]:
        c = least_of_rows(A, t, 0, 0, load, cap)
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
    tree_update(tree, c, size, load, cap)
    place(e, u, v, c, A, rem, out)
    return c


@helper
def place(e, u, v, c, A, rem, out):
    """Edge ``e`` = (u, v) on cluster ``c``: its assignment, replica bits and the ends'
    unassigned-edge counts (loads are the caller's)."""
    out[e] = c
    bit = np.uint64(1) << np.uint64(c % 64)
    A[u, c // 64] |= bit
    A[v, c // 64] |= bit
    rem[u] -= 1
    rem[v] -= 1


@njit(cache=True, nogil=True)
def greedy_dense(src, dst, weight, order, degree, rem, cap, full, rule, out, A, load,
                  counter):
    """`greedy_assign` on dense bitsets ``A`` (n, ceil(p / 64)), the vertices' rows,
    from the loads ``load`` and the unassigned-edge counts ``rem`` (both updated
    in place): a whole stream from empty sets, or one step of a distributed one
    (`vcut.distributed`) from the state merged so far. Cluster ``c`` is full when
    ``load[c] >= full[c]`` (the bound times its capacity, `greedy_assign`; a
    distributed step is given its share of the room left)."""
    size, tree = tree_of(load, cap)
    for k in range(order.shape[0]):
        if stopped_at(k, counter):
            break
        e = order[k]
        u = src[e]
        v = dst[e]
        c = decide_dense(u, v, A, load, cap, full, rule, degree, rem)
        _apply_dense(e, u, v, c, weight, A, load, cap, full, rem, tree, size, out)
    completed(counter, order.shape[0])
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
    (`decide_dense`) against the replica sets, loads and remaining degrees frozen at
    the batch's start, in parallel; then one pass applies the batch in stream order
    (`_apply_dense`: an edge whose cluster filled up during the batch, or that asked
    for the least loaded, takes the least loaded now). ``batch = 1`` is
    `greedy_dense` exactly. Dense bitsets ``A`` only (p <= 64 DENSE_WORDS).
    Returns the loads; ``counter`` as `greedy_assign`'s, checked once per batch."""
    m = order.shape[0]
    p = cap.shape[0]
    load = np.zeros(p, dtype=np.float64)
    rem = degree.copy()
    size, tree = tree_of(load, cap)
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
                dec[k] = decide_dense(src[e], dst[e], A, load, cap, full, rule, degree, rem)
        else:
            for k in range(hi - lo):
                e = order[lo + k]
                dec[k] = decide_dense(src[e], dst[e], A, load, cap, full, rule, degree, rem)
        redo += apply_batch(src, dst, weight, order, lo, hi, dec, degree, cap, full, rule, out,
                            A, load, rem, tree, size, recheck)
    completed(counter, m)
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
            c = decide_dense(u, v, A, load, cap, full, rule, degree, rem)
            redo += 1
        _apply_dense(e, u, v, c, weight, A, load, cap, full, rem, tree, size, out)
    return redo


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
        Empty replica sets (`ir_graph.replicas.replica_sets`).
    counter : int64[2]
        ``counter[0]``: edges assigned so far (written every
        `vcut_base.progress_kernels.TICK` edges); a non-zero ``counter[1]`` stops the
        kernel there (`vcut_base.progress`).

    Returns
    -------
    load : float64[p]
        Weight assigned to each cluster.
    pool : uint64[rows, ceil(p / 64)]
        The sets' bitset rows at the end (a new array when the pool grew).

    Which kernel runs is decided here, in Python (`greedy_dense` on dense bitsets,
    `greedy_sparse` otherwise), so that a first run compiles only the one it needs.
    """
    cnt, ids, ovf, pool = sets
    if ids.shape[1] == 0:  # dense bitsets: the plain kernel
        load = greedy_dense(src, dst, weight, order, degree, degree.copy(), cap,
                            limit * (1.0 - FULL_TOLERANCE) * cap, rule, out, pool,
                            np.zeros(p, dtype=np.float64), counter)
        count_rows(pool, cnt)
        return load, pool
    return greedy_sparse(src, dst, weight, order, n, p, degree, cap, limit, rule, out, sets,
                         counter)


@njit(cache=True, nogil=True)
def greedy_sparse(src, dst, weight, order, n, p, degree, cap, limit, rule, out, sets, counter):
    """`greedy_assign` over replica sets with inline ids and overflow rows."""
    cnt, ids, ovf, pool = sets
    used = 0
    load, size, tree = zero_loads(p, cap)
    rem = degree.copy()
    limit = limit * (1.0 - FULL_TOLERANCE)
    for k in range(order.shape[0]):
        if stopped_at(k, counter):
            break
        e = order[k]
        u = src[e]
        v = dst[e]
        has_u = cnt[u] > 0
        has_v = cnt[v] > 0
        if not has_u and not has_v:  # case 4
            c = tree[1]
        elif has_u != has_v:  # case 3
            c = least_of_set(u if has_u else v, cnt, ids, ovf, pool, load, cap, -1)
            if load[c] >= limit * cap[c]:
                c = tree[1]
        else:
            c = least_of_common(u, v, cnt, ids, ovf, pool, load, cap)
            if c >= 0:  # case 1
                if load[c] >= limit * cap[c]:
                    c = least_of_set(v, cnt, ids, ovf, pool, load, cap,
                                least_of_set(u, cnt, ids, ovf, pool, load, cap, -1))
                    if load[c] >= limit * cap[c]:
                        c = tree[1]
            else:  # case 2: keep one endpoint whole, cut the other
                if rule == RULE_LIBRA:
                    s = u if degree[u] <= degree[v] else v
                else:
                    s = u if rem[u] >= rem[v] else v
                t = v if s == u else u
                c = least_of_set(s, cnt, ids, ovf, pool, load, cap, -1)
                if load[c] >= limit * cap[c]:
                    c = least_of_set(t, cnt, ids, ovf, pool, load, cap, -1)
                    if load[c] >= limit * cap[c]:
                        c = tree[1]
        out[e] = c
        load[c] += weight[e]
        tree_update(tree, c, size, load, cap)
        if ovf.shape[0] > 0 and used + 2 > pool.shape[0]:
            pool = pool_room(pool, used, ovf)
        used = add_replica(u, c, cnt, ids, ovf, pool, used)
        used = add_replica(v, c, cnt, ids, ovf, pool, used)
        rem[u] -= 1
        rem[v] -= 1
    completed(counter, order.shape[0])
    return load, pool
