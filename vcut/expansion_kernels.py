"""Numba kernels of neighbour expansion (NE, NE++ of HEP), HEP's HDRF phase and
the replica refinement (`vcut.quality` holds the API and the documentation).

Shared conventions: ``src``/``dst``/``weight`` describe the simple graph,
``out[e]`` is the cluster of edge ``e`` (-1 while unassigned), ``ptr``/``adj``
is the incidence CSR of `incidence` (each vertex's edges in edge order) and
``counter`` is the progress counter of `vcut_base.progress.run_kernel`.
"""

import numpy as np

from vcut_base.jitcache import helper, njit
from vcut_base.progress_kernels import TICK_MASK

from .fm_kernels import CLUSTER_SHIFT, build_slots, count, has_free, move_edge, slot

UNASSIGNED = -1


@njit(cache=True, nogil=True)
def incidence(src, dst, n, keep):
    """``(ptr, adj)``: every vertex's incident edges with ``keep[e]``, in edge order."""
    return incidence_of(src, dst, n, keep, np.int64)


@njit(cache=True, nogil=True)
def incidence_of(src, dst, n, keep, dtype):
    """`incidence` with edge ids of ``dtype`` in ``adj`` (int32 where the edge count
    allows: the expansion reads less memory)."""
    m = src.shape[0]
    ptr = np.zeros(n + 1, dtype=np.int64)
    for e in range(m):
        if keep[e]:
            ptr[src[e] + 1] += 1
            ptr[dst[e] + 1] += 1
    for v in range(n):
        ptr[v + 1] += ptr[v]
    pos = ptr[:-1].copy()
    adj = np.empty(ptr[n], dtype=dtype)
    for e in range(m):
        if keep[e]:
            adj[pos[src[e]]] = e
            pos[src[e]] += 1
            adj[pos[dst[e]]] = e
            pos[dst[e]] += 1
    return ptr, adj


# --- an indexed binary min-heap of vertices -----------------------------------
# heap[i] is a vertex, hkey[i] its key (beside it, so that a sift reads one array),
# hpos[v] its place (-1: not in the heap). Neighbour expansion keys a vertex by
# (unassigned edges, push stamp): rem * KEY_STEP + stamp (ties: the first pushed).

#: a vertex's unassigned-edge count in the heap key counts in steps of this
KEY_STEP = 1 << 32


@helper
def _sift_up(heap, hkey, hpos, i):
    v = heap[i]
    key = hkey[i]
    while i > 0:
        parent = (i - 1) >> 1
        if hkey[parent] <= key:
            break
        heap[i] = heap[parent]
        hkey[i] = hkey[parent]
        hpos[heap[i]] = i
        i = parent
    heap[i] = v
    hkey[i] = key
    hpos[v] = i


@helper
def _sift_down(heap, hkey, hpos, i, size):
    v = heap[i]
    key = hkey[i]
    while True:
        c = 2 * i + 1
        if c >= size:
            break
        if c + 1 < size and hkey[c + 1] < hkey[c]:
            c += 1
        if hkey[c] >= key:
            break
        heap[i] = heap[c]
        hkey[i] = hkey[c]
        hpos[heap[i]] = i
        i = c
    heap[i] = v
    hkey[i] = key
    hpos[v] = i


@helper
def _decrease(v, heap, hkey, hpos):
    """One fewer unassigned edge for ``v``, if it waits in the heap."""
    p = hpos[v]
    if p >= 0:
        hkey[p] -= KEY_STEP
        _sift_up(heap, hkey, hpos, p)


# --- neighbour expansion ------------------------------------------------------

@helper
def _allocate(e, a, b, i, cap, weight, out, load, rem, heap, hkey, hpos, state, counter):
    """Edge ``e`` = (``a``, ``b``) into cluster ``i`` of capacity ``cap``;
    whether the cluster is full now (or the kernel is asked to stop).
    ``state``: heap size, edges assigned, stopped, pushes."""
    out[e] = i
    load[i] += weight[e]
    rem[a] -= 1
    _decrease(a, heap, hkey, hpos)
    rem[b] -= 1
    _decrease(b, heap, hkey, hpos)
    state[1] += 1
    if state[1] & TICK_MASK == 0:
        counter[0] = state[1]
        if counter[1] != 0:
            state[2] = 1
            return True
    return load[i] >= cap


@helper
def _join(y, i, cap, push, weight, ptr, adj, nbr, live, high, out, load, rem, in_s, heap, hkey,
          hpos, state, counter):
    """``y`` joins the boundary S of cluster ``i``: its unassigned edges to S and
    to ``high`` vertices (NE++ counts those as in every core) are allocated (not
    scanned for a high-degree ``y``: its edges come from the low side); then
    ``y`` waits in the heap if ``push``. Whether the cluster is full. The same
    sweep drops ``y``'s assigned edges from its list (order kept: ``adj``/``nbr``
    hold each vertex's live edges first)."""
    in_s[y] = i
    if high[y]:
        return False
    j = ptr[y]
    end = j + live[y]
    w = j
    full = False
    while j < end:
        e = adj[j]
        z = nbr[j]
        j += 1
        if out[e] != UNASSIGNED:
            continue
        if in_s[z] == i or high[z]:
            if _allocate(e, y, z, i, cap, weight, out, load, rem, heap, hkey, hpos, state,
                         counter):
                full = True
                break
            continue
        adj[w] = e
        nbr[w] = z
        w += 1
    while j < end:  # stopped early: the rest stays as it is
        adj[w] = adj[j]
        nbr[w] = nbr[j]
        w += 1
        j += 1
    live[y] = w - ptr[y]
    if full:
        return True
    if push and rem[y] > 0:
        size = state[0]
        heap[size] = y
        hkey[size] = rem[y] * KEY_STEP + state[3]
        state[0] = size + 1
        state[3] += 1
        _sift_up(heap, hkey, hpos, size)
    return False


@njit(cache=True, nogil=True)
def expand(src, dst, weight, ptr, adj, n, caps, high, seeds, out, counter):
    """Neighbour expansion of the edges with ``out[e] == -1`` into clusters
    0..k-2 of capacity ``caps[i]`` (edge weight); the rest goes to k-1.

    Per cluster: while it is below capacity, the boundary vertex with the
    fewest unassigned edges (ties: the one that joined the boundary first)
    moves into the core and its neighbours join the boundary, taking every
    unassigned edge between boundary vertices; with an empty boundary the
    next vertex of ``seeds`` that still has edges (and is not ``high``)
    starts a new core. High-degree
    vertices join the boundary but are never expanded, and a vertex joining
    the boundary takes its edges to them at once, as if they were in every
    core (HEP's NE++).
    ``adj`` (each vertex's edges, `incidence`) is reordered in place.
    Returns the cluster loads.
    """
    k = caps.shape[0]
    m = src.shape[0]
    load = np.zeros(k)
    nbr = np.empty(adj.shape[0], dtype=np.int32)  # the other end of adj[j], beside it (n < 2**31)
    for v in range(n):
        for j in range(ptr[v], ptr[v + 1]):
            e = adj[j]
            nbr[j] = dst[e] if src[e] == v else src[e]
    live = ptr[1:] - ptr[:-1]
    rem = live.copy()
    in_s = np.full(n, -1, dtype=np.int32)
    heap = np.empty(n, dtype=np.int32)
    hpos = np.full(n, -1, dtype=np.int32)
    state = np.zeros(4, dtype=np.int64)  # heap size, edges assigned, stopped, pushes
    hkey = np.empty(n, dtype=np.int64)
    sp = 0
    for i in range(k - 1):
        state[0] = 0
        state[3] = 0  # push stamps count per cluster (below KEY_STEP: n < 2**32)
        cap = caps[i]
        full = load[i] >= caps[i]
        while not full:
            if state[0] == 0:
                while sp < n and (rem[seeds[sp]] == 0 or high[seeds[sp]]):
                    sp += 1
                if sp == n:
                    break
                x = seeds[sp]
                full = _join(x, i, cap, False, weight, ptr, adj, nbr, live, high, out, load,
                             rem, in_s, heap, hkey, hpos, state, counter)
                if full:
                    break
            else:
                x = heap[0]
                hpos[x] = -1
                state[0] -= 1
                if state[0] > 0:
                    heap[0] = heap[state[0]]
                    hkey[0] = hkey[state[0]]
                    _sift_down(heap, hkey, hpos, 0, state[0])
            # x into the core: all its unassigned edges go to cluster i (x's list is
            # left alone meanwhile: a join compacts only the joining vertex's)
            for j in range(ptr[x], ptr[x] + live[x]):
                e = adj[j]
                if out[e] != UNASSIGNED:
                    continue
                y = nbr[j]
                if in_s[y] != i:
                    full = _join(y, i, cap, True, weight, ptr, adj, nbr, live, high, out,
                                 load, rem, in_s, heap, hkey, hpos, state, counter)
                    if full:
                        break
                if out[e] == UNASSIGNED:  # y is high-degree: not scanned when it joined
                    full = _allocate(e, x, y, i, cap, weight, out, load, rem, heap, hkey,
                                     hpos, state, counter)
                    if full:
                        break
            if not full:
                live[x] = 0  # every edge of x is assigned now
        for t in range(state[0]):
            hpos[heap[t]] = -1
        if state[2]:
            return load
    for e in range(m):
        if out[e] == UNASSIGNED:
            out[e] = k - 1
            load[k - 1] += weight[e]
    counter[0] = m
    return load


# --- HEP: the edges between two high-degree vertices, streamed with HDRF -----

@njit(cache=True, nogil=True)
def hdrf_rest(src, dst, weight, order, hid, nh, degree, share, hard, lam, eps, out, load,
              counter):
    """HDRF (HEP's form: full degrees, normalised balance term, hard capacity
    ``hard[c]``) for the edges ``order`` (both endpoints high), in that order,
    starting from the replicas that the clusters in ``out`` already give the
    high-degree vertices (``hid[v]``: their index, -1 for the others).

    Score of cluster c: g(u, c) + g(v, c) + lam (maxrel - rel_c) / (eps +
    maxrel - minrel) with g(x, c) = 2 - theta(x) when c already holds x,
    theta(u) = d(u) / (d(u) + d(v)), rel_c = load_c / share_c; only clusters
    with room for the edge compete; ties go to the lowest id.
    """
    k = load.shape[0]
    m = src.shape[0]
    held = np.zeros((nh, k), dtype=np.bool_)
    for e in range(m):
        c = out[e]
        if c >= 0:
            if hid[src[e]] >= 0:
                held[hid[src[e]], c] = True
            if hid[dst[e]] >= 0:
                held[hid[dst[e]], c] = True
    for t in range(order.shape[0]):
        if t & TICK_MASK == 0:
            counter[0] = t
            if counter[1] != 0:
                return
        e = order[t]
        u = src[e]
        v = dst[e]
        du = float(degree[u])
        dv = float(degree[v])
        th_u = du / (du + dv)
        th_v = 1.0 - th_u
        maxrel = -np.inf
        minrel = np.inf
        for c in range(k):
            r = load[c] / share[c]
            maxrel = max(maxrel, r)
            minrel = min(minrel, r)
        denom = eps + maxrel - minrel
        if denom <= 0.0:  # loads past 2**53 absorb eps (equal loads: 0.0, a ZeroDivisionError)
            denom = eps + (maxrel - minrel)
        best = -1
        best_s = -np.inf
        hu = hid[u]
        hv = hid[v]
        for c in range(k):
            if load[c] + weight[e] > hard[c]:
                continue
            s = lam * (maxrel - load[c] / share[c]) / denom
            if held[hu, c]:
                s += 2.0 - th_u
            if held[hv, c]:
                s += 2.0 - th_v
            if s > best_s:
                best_s = s
                best = c
        if best < 0:  # no room anywhere (cannot happen with hard >= share W + max w)
            best = 0
            for c in range(1, k):
                if load[c] / share[c] < load[best] / share[best]:
                    best = c
        out[e] = best
        load[best] += weight[e]
        held[hu, best] = True
        held[hv, best] = True
    counter[0] = order.shape[0]


# --- replica refinement -------------------------------------------------------

@helper
def _lighter(c, best, w, load, delta, bound):
    """``(choice, over)``: ``c`` when it has room for weight ``w`` (load plus the pending
    ``delta`` within ``bound``) and is relatively lighter than ``best`` (ties: the lower
    id; ``best`` -1: none yet), else ``best``; ``over``: ``c`` lacked the room."""
    if load[c] + delta[c] + w > bound[c]:
        return best, True
    if best < 0:
        return c, False
    rc = (load[c] + delta[c]) / bound[c]
    rb = (load[best] + delta[best]) / bound[best]
    if rc < rb or (rc == rb and c < best):
        return c, False
    return best, False


@njit(cache=True, nogil=True)
def refine(src, dst, weight, ptr, adj, n, k, out, bound, order, passes, slack, skip, counter):
    """Moves that dissolve a replica: all edges of vertex v in cluster a leave
    a, each (v, u) for a cluster of v that u holds already when one has room
    (else for another cluster of v, which gives u a new replica), when that
    lowers the number of replicas, sum_v |A(v)|, and keeps every receiving
    cluster's load within ``bound``; in place on ``out``.

    Gain: 1 (v leaves a) + sum over the edges (v, u) of [this is u's only
    edge in a] - [no cluster of v other than a holds u]. Among the clusters an
    edge may take, the least relatively loaded one with room wins (ties: the
    lowest id); the first replica of v with a positive gain is dissolved.
    Passes visit the replicated vertices in ``order``: the first all of them,
    the next only those next to a move, until one moves nothing; then a pass
    over all of them again, and it stops after a pass over all of them that
    moves nothing (a fixed point), or after ``passes`` passes. A vertex holds at most |A(v)| +
    ``slack`` replicas (its slots): a move that needs more is not made.
    With ``skip``, a later pass over every vertex does not evaluate v again when
    nothing its last evaluation read has changed (its clusters, its neighbours'
    replica counts) and no cluster was too full for it then: it would move
    nothing again (more room changes no gain when none was missing; less can
    only lower it), so the result is the same, found cheaper.
    Returns (moves, passes run, replicas before, replicas after).
    """
    load, sptr, snum, sl, before = build_slots(ptr, adj, out, weight, n, k, slack)
    replicas = before
    own = np.zeros(k, dtype=np.bool_)
    vown = np.empty(k, dtype=np.int64)
    slot_of = np.full(k, -1, dtype=np.int64)
    gstart = np.zeros(k + 1, dtype=np.int64)
    delta = np.zeros(k)
    dmax = 0
    for v in range(n):
        dmax = max(dmax, ptr[v + 1] - ptr[v])
    ge = np.empty(dmax, dtype=np.int64)
    gu = np.empty(dmax, dtype=np.int64)  # the other end of ge[t]
    gc = np.empty(dmax, dtype=np.int64)  # the group of v's j-th edge
    dest = np.empty(dmax, dtype=np.int64)
    nbr = np.empty(adj.shape[0], dtype=np.int64)  # the other end of adj[j], beside it
    for v in range(n):
        for j in range(ptr[v], ptr[v + 1]):
            e = adj[j]
            nbr[j] = dst[e] if src[e] == v else src[e]
    active = np.ones(n, dtype=np.bool_)
    # a later pass over every vertex skips v when its last evaluation (at move count
    # seen[v]) met no full cluster and nothing it reads has changed since: its slots
    # and its neighbours' (changed[x]: the move count when x's slots last changed)
    seen = np.full(n, -1, dtype=np.int64)
    changed = np.zeros(n, dtype=np.int64)
    tight = np.zeros(n, dtype=np.bool_)
    full = True  # a pass over every vertex; the others visit the active ones
    moves = 0
    run = 0
    step = 0
    while run < passes:
        run += 1
        moved = 0
        for v in order:
            if not full and not active[v]:
                continue
            active[v] = False
            if skip and full and seen[v] >= 0 and not tight[v] and changed[v] <= seen[v]:
                same = True
                for j in range(ptr[v], ptr[v + 1]):
                    if changed[nbr[j]] > seen[v]:
                        same = False
                        break
                if same:
                    continue
            step += 1
            if step & TICK_MASK == 0:
                counter[0] = step
                if counter[1] != 0:
                    return moves, run, before, replicas
            d = ptr[v + 1] - ptr[v]
            na = 0
            for s in range(sptr[v], sptr[v] + snum[v]):
                c = sl[s] >> CLUSTER_SHIFT
                t = na  # insertion sort: v's clusters in increasing order
                while t > 0 and vown[t - 1] > c:
                    vown[t] = vown[t - 1]
                    t -= 1
                vown[t] = c
                na += 1
            if na < 2:
                continue
            seen[v] = moves
            tight[v] = False
            for t in range(na):
                own[vown[t]] = True
                slot_of[vown[t]] = t
                gstart[t + 1] = 0
            p0 = ptr[v]
            for j in range(p0, ptr[v + 1]):  # v's edges grouped by cluster
                t = slot_of[out[adj[j]]]
                gc[j - p0] = t
                gstart[t + 1] += 1
            for t in range(na):
                gstart[t + 1] += gstart[t]
            for j in range(p0, ptr[v + 1]):
                t = gc[j - p0]
                ge[gstart[t]] = adj[j]
                gu[gstart[t]] = nbr[j]
                gstart[t] += 1
            for t in range(na - 1, -1, -1):
                gstart[t + 1] = gstart[t]
            gstart[0] = 0
            for t in range(na):
                slot_of[vown[t]] = -1
            for g in range(na):
                a = vown[g]
                lo = gstart[g]
                hi = gstart[g + 1]
                # the gain with room everywhere first: room can only lower it, so a
                # group that cannot gain then is passed over without the clusters' loads
                gain = 1
                for t in range(lo, hi):
                    u = gu[t]
                    gain += np.int64(count(slot(u, a, sptr, snum, sl), sl) == 1) - 1
                    for s in range(sptr[u], sptr[u] + snum[u]):
                        c = sl[s] >> CLUSTER_SHIFT
                        if c != a and own[c]:
                            gain += 1  # u is in another cluster of v: no new replica
                            break
                    if gain + (hi - t - 1) <= 0:
                        break
                if gain <= 0:
                    continue
                gain = 1
                ok = True
                for t in range(lo, hi):
                    e = ge[t]
                    w = weight[e]
                    u = gu[t]
                    leave = count(slot(u, a, sptr, snum, sl), sl) == 1
                    best = -1
                    for s in range(sptr[u], sptr[u] + snum[u]):  # a cluster of v that u holds
                        c = sl[s] >> CLUSTER_SHIFT
                        if c != a and own[c]:
                            best, over = _lighter(c, best, w, load, delta, bound)
                            tight[v] = tight[v] or over
                    if best < 0:  # u gets a new replica in a cluster of v
                        gain -= 1
                        if not leave and not has_free(u, sptr, snum):
                            ok = False
                        for r in range(na):
                            c = vown[r]
                            if c != a:
                                best, over = _lighter(c, best, w, load, delta, bound)
                                tight[v] = tight[v] or over
                    if leave:
                        gain += 1
                    if best < 0:
                        ok = False
                    if not ok or gain + (hi - t - 1) <= 0:  # cannot reach a positive gain
                        ok = False
                        break
                    dest[t] = best
                    delta[best] += w
                for r in range(na):
                    delta[vown[r]] = 0.0
                if ok and gain > 0:
                    for t in range(lo, hi):  # (every destination is a cluster of v)
                        replicas += move_edge(ge[t], dest[t], src, dst, weight, out, load, sptr,
                                              snum, sl)
                    moves += 1
                    moved += 1
                    active[v] = True
                    changed[v] = moves
                    for t in range(lo, hi):
                        u = gu[t]
                        active[u] = True
                        changed[u] = moves
                    break  # v's clusters changed: on to the next vertex
            for t in range(na):
                own[vown[t]] = False
        if moved == 0:
            if full:
                break
            full = True  # confirm the fixed point with a pass over every vertex
        else:
            full = False
    counter[0] = step
    return moves, run, before, replicas


@njit(cache=True, nogil=True)
def replica_count(ptr, adj, out, n, k):
    """sum_v |A(v)| of the assignment ``out`` (``ptr``/``adj``: `incidence`)."""
    mark = np.full(k, -1, dtype=np.int64)
    total = 0
    for v in range(n):
        for j in range(ptr[v], ptr[v + 1]):
            c = out[adj[j]]
            if mark[c] != v:
                mark[c] = v
                total += 1
    return total


@njit(cache=True, nogil=True)
def gather(ptr, adj, weight, out, load, bound, vertices, k):
    """Move the edges of each vertex of ``vertices``, in order, onto the cluster that holds
    the most of its edge weight (ties: the lowest cluster), where that cluster's load stays
    within ``bound``; ``out`` and ``load`` are updated. Returns the vertices gathered (the
    perturbation of `vcut.quality.perturb_refine`)."""
    held = np.zeros(k)
    gathered = 0
    for i in range(vertices.shape[0]):
        v = vertices[i]
        if ptr[v] == ptr[v + 1]:
            continue  # no edges
        total = 0.0
        for j in range(ptr[v], ptr[v + 1]):
            e = adj[j]
            held[out[e]] += weight[e]
            total += weight[e]
        best = out[adj[ptr[v]]]
        for j in range(ptr[v] + 1, ptr[v + 1]):
            c = out[adj[j]]
            if held[c] > held[best] or (held[c] == held[best] and c < best):
                best = c
        moving = total - held[best]
        for j in range(ptr[v], ptr[v + 1]):
            held[out[adj[j]]] = 0.0
        if moving <= 0.0 or load[best] + moving > bound[best]:
            continue
        for j in range(ptr[v], ptr[v + 1]):
            e = adj[j]
            c = out[e]
            if c != best:
                load[c] -= weight[e]
                out[e] = best
        load[best] += moving
        gathered += 1
    return gathered
