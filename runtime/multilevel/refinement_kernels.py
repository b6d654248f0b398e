"""Numba kernels of the multilevel partitioner's refinement (CPU): loads and cut, boundaries,
greedy and k-way FM moves, balance repair and projection to the finer level (the
touched-list gather and the heap they use are `runtime.gain_kernels`'). Twins on the GPU:
`refinement_kernels_gpu`; Jet's rules are `jet_kernels`'.

Every array here has been validated by `runtime.multilevel.graph` before it
arrives: CSR offsets ``indptr`` (int64, non-decreasing, ``indptr[0] == 0``),
neighbours ``indices`` (int64 in ``[0, n)``, no self-loops, symmetric), edge
weights ``ewgt`` and vertex weights ``vwgt`` (int64, > 0). Parts are int64 in
``[0, k)``. Random choices come from seeded integer hashes or permutations
made by the caller from ``numpy.random.default_rng(seed)``, so a run is
deterministic for a seed.
"""

import numpy as np

from vcut_base.jitcache import helper, njit
from vcut_base.sort_kernels import stable_argsort
from runtime.gain_kernels import gather, heap_pop, heap_push, touched_size


@njit(cache=True)
def part_loads(part, vwgt, k):
    load = np.zeros(k, np.int64)
    for v in range(len(part)):
        load[part[v]] += vwgt[v]
    return load


@njit(cache=True)
def edge_cut(indptr, indices, ewgt, part):
    cut = 0
    for v in range(len(part)):
        for e in range(indptr[v], indptr[v + 1]):
            if part[indices[e]] != part[v]:
                cut += ewgt[e]
    return cut // 2


@helper
def _on_boundary(indptr, indices, part, v):
    """Whether v has a neighbour in another part."""
    p = part[v]
    for e in range(indptr[v], indptr[v + 1]):
        if part[indices[e]] != p:
            return True
    return False


@njit(cache=True)
def boundary(indptr, indices, part):
    """The vertices with a neighbour in another part, increasing."""
    n = len(part)
    out = np.empty(n, np.int64)
    nb = 0
    for v in range(n):
        if _on_boundary(indptr, indices, part, v):
            out[nb] = v
            nb += 1
    return out[:nb].copy()


@njit(cache=True)
def boundary_among(indptr, indices, part, cand):
    """The vertices of ``cand`` (increasing) with a neighbour in another part: `boundary`
    where only ``cand`` can be on it."""
    out = np.empty(len(cand), np.int64)
    nb = 0
    for i in range(len(cand)):
        v = cand[i]
        if _on_boundary(indptr, indices, part, v):
            out[nb] = v
            nb += 1
    return out[:nb].copy()


@njit(cache=True)
def boundary_since(indptr, indices, part, before, prev):
    """`boundary` of ``part``, given ``prev``, the boundary of the partition ``before``:
    a vertex can be on it only when it was on ``prev``, or it or a neighbour has moved
    since (a vertex's row and its own part unchanged keep its side). Linear in the
    vertices, plus the rows of those candidates."""
    n = len(part)
    mark = np.zeros(n, np.bool_)
    for i in range(len(prev)):
        mark[prev[i]] = True
    for v in range(n):
        if part[v] != before[v]:
            mark[v] = True
            for e in range(indptr[v], indptr[v + 1]):
                mark[indices[e]] = True
    out = np.empty(n, np.int64)
    nb = 0
    for v in range(n):
        if mark[v] and _on_boundary(indptr, indices, part, v):
            out[nb] = v
            nb += 1
    return out[:nb].copy()


@njit(cache=True)
def projected_candidates(cmap, coarse_boundary, nc):
    """The fine vertices (increasing) whose coarse vertex is on ``coarse_boundary``: only
    they can be on the boundary of the projected partition (a fine vertex's neighbours
    lie in its coarse vertex or in that one's neighbours, all in its part otherwise)."""
    on = np.zeros(nc, np.bool_)
    for i in range(len(coarse_boundary)):
        on[coarse_boundary[i]] = True
    n = len(cmap)
    out = np.empty(n, np.int64)
    m = 0
    for v in range(n):
        if on[cmap[v]]:
            out[m] = v
            m += 1
    return out[:m]


@njit(cache=True)
def greedy_refine(indptr, indices, ewgt, vwgt, part, load, maxload, order, passes):
    """k-way greedy refinement: boundary vertices move to their best-connected part.

    A vertex moves when the move lowers the cut, or keeps it and leaves the
    two parts' loads closer (relative to their bounds); the destination must
    stay within its bound. The first pass visits the vertices of ``order``
    (the caller's seeded order of the boundary vertices: an interior vertex
    has nowhere to go); later passes visit the neighbours of the vertices
    the previous pass moved, in the order they were reached, until a pass
    moves nothing. Never raises the cut; never breaks a bound that held.

    Returns
    -------
    moves, passes_used
    """
    n = len(part)
    k = len(load)
    conn = np.zeros(k, np.int64)
    touched = np.empty(touched_size(indptr, k), np.int64)
    queued = np.zeros(n, np.bool_)
    cur = order.copy()
    ncur = len(cur)
    nxt = np.empty(n, np.int64)
    total = 0
    used = 0
    for _ in range(passes):
        used += 1
        moves = 0
        nn = 0
        for i in range(ncur):
            v = cur[i]
            best, _ = _best_move(indptr, indices, ewgt, vwgt, part, load, maxload, v, conn,
                                 touched, True)
            if best >= 0:
                a = part[v]
                part[v] = best
                load[a] -= vwgt[v]
                load[best] += vwgt[v]
                moves += 1
                for e in range(indptr[v], indptr[v + 1]):
                    t = indices[e]
                    if not queued[t]:
                        queued[t] = True
                        nxt[nn] = t
                        nn += 1
        total += moves
        if moves == 0:
            break
        if len(cur) < nn:
            cur = np.empty(n, np.int64)
        for i in range(nn):
            cur[i] = nxt[i]
            queued[nxt[i]] = False
        ncur = nn
    return total, used


@helper
def ratio_less(a, b, c, d):
    """Whether ``a / b < c / d`` (int64, ``a, c >= 0``, ``b, d > 0``), exactly: the
    products when every operand is below 2**31, else by continued fractions (weights
    up to 2**40 make loads whose products pass 2**63)."""
    if (a | b | c | d) >> 31 == 0:
        return a * d < c * b
    while True:
        qa = a // b
        qc = c // d
        if qa != qc:
            return qa < qc
        a -= qa * b  # the fractional parts: a / b < c / d <=> d / c < b / a
        c -= qc * d
        if a == 0:
            return c > 0
        if c == 0:
            return False
        a, b, c, d = d, c, b, a


@helper
def _best_move(indptr, indices, ewgt, vwgt, part, load, maxload, v, conn, touched, improving):
    """v's best move: (part, gain) with gain = its edge weight into that part minus into
    its own, the highest over adjacent parts with room for it (ties: the lighter part
    relative to its bound); (-1, 0) when no adjacent other part has room. ``improving``
    (the greedy pass): only moves that lower the cut, or keep it and leave the
    destination lighter after the move than the source is now (relative to bounds)."""
    a = part[v]
    nt = gather(indptr, indices, ewgt, part, v, conn, touched)
    wv = vwgt[v]
    best = -1
    bgain = np.int64(0)
    for j in range(nt):
        b = touched[j]
        if b == a or load[b] + wv > maxload[b]:
            continue
        g = conn[b] - conn[a]
        if improving and (g < 0 or (g == 0 and not ratio_less(load[b] + wv, maxload[b],
                                                             load[a], maxload[a]))):
            continue
        if best < 0 or g > bgain or (g == bgain and ratio_less(load[b], maxload[b],
                                                               load[best], maxload[best])):
            best = b
            bgain = g
    for j in range(nt):
        conn[touched[j]] = 0
    return best, bgain


@njit(cache=True, inline="always")
def _push_grow(hk, hv, size, key, val):
    """`heap_push`, doubling the arrays first when they are full. The one helper numba
    inlines itself: it returns the arrays, and as a call that costs reference counting on
    every push (k-way FM 20-25 % slower: delaunay_n16 k = 32, 20.3 -> 16.2 ms; its
    refinement phase 5 % slower as a plain call)."""
    if size == len(hk):
        hk2 = np.empty(2 * size, hk.dtype)
        hv2 = np.empty(2 * size, hv.dtype)
        for i in range(size):  # a loop: a slice copy takes ~1 s to compile
            hk2[i] = hk[i]
            hv2[i] = hv[i]
        hk, hv = hk2, hv2
    return hk, hv, heap_push(hk, hv, size, key, val)


@njit(cache=True)
def kway_fm(indptr, indices, ewgt, vwgt, part, load, maxload, order, limit, hub, budget,
            seed_degree=-1):
    """k-way FM refinement by localised searches (as KaMinPar's / Mt-KaHyPar's FM).

    The seeds are the vertices of ``order`` (the caller's seeded order of the
    boundary vertices), taken by the gain of their best move (`_best_move`),
    highest first (stable, so ties keep ``order``). A search starts at a seed
    that no earlier search of the pass has moved, kept or undone (as
    Mt-KaHyPar's localised FM moves a vertex at most once per round: a seed
    an earlier search walked through and undid would mostly walk the same
    way again; 5 % less time over bench_multilevel's 64 cells, cut 0.3 %
    higher in geometric mean), and keeps a max-queue of
    vertices by the gain of their best move; a popped vertex is evaluated
    again and queued again when its gain differs. It moves the best vertex
    even at zero or negative gain when its target has room, locks it, and
    queues the neighbours whose gain may have risen: not locked, not hubs
    (degree above ``hub``), not in the part it just joined (theirs only fell).
    A neighbour already evaluated in this search is queued at its last gain
    plus twice the edge weight instead of being evaluated again (an upper
    bound unless a full part regained room): only pops pay for an exact
    evaluation. The search stops ``limit`` moves past its best prefix (or
    when the queue empties); the moves after the best prefix are undone,
    loads restored exactly. Only prefixes of positive gain are kept, so the
    cut falls with every kept search and never rises; no bound is broken
    (moves need room).

    ``budget`` bounds the work: no search starts once the evaluations have
    scanned more than ``budget`` adjacency entries (the seeds' first
    evaluation included; -1: no bound), so a level costs O(budget + one
    search) whatever its degrees. A vertex of more than ``seed_degree``
    neighbours (-1: no limit) is neither evaluated as a seed nor starts a
    search (a search may still move it): on power-law graphs evaluating the
    hubs of the boundary took 84-100 % of the budget, leaving one search a
    level.

    Returns
    -------
    moves kept, cut reduction, adjacency entries scanned
    """
    n = len(part)
    k = len(load)
    conn = np.zeros(k, np.int64)
    touched = np.empty(touched_size(indptr, k), np.int64)
    locked = np.zeros(n, np.int64)   # the search that moved the vertex
    moved = np.zeros(n, np.bool_)    # moved by a search of this pass, kept or undone
    seen = np.zeros(n, np.int64)     # the search that last evaluated the vertex ...
    last = np.zeros(n, np.int64)     # ... the gain it found, or a bound on it since
    exact = np.zeros(n, np.bool_)    # ... and whether that is still its exact gain
    hk = np.empty(64, np.int64)
    hv = np.empty(64, np.int64)
    mv = np.empty(n, np.int64)
    mfrom = np.empty(n, np.int64)
    work = 0
    key = np.empty(len(order), np.int64)
    for i in range(len(order)):
        v = order[i]
        if seed_degree >= 0 and indptr[v + 1] - indptr[v] > seed_degree:
            key[i] = 1 << 62  # no seed
            continue
        b, g = _best_move(indptr, indices, ewgt, vwgt, part, load, maxload, v, conn, touched,
                          False)
        work += indptr[v + 1] - indptr[v]
        key[i] = -g if b >= 0 else (1 << 62)
    seeds = order[stable_argsort(key)]
    sid = 0
    kept = 0
    total = np.int64(0)
    for i in range(len(seeds)):
        if budget >= 0 and work > budget:
            break
        s = seeds[i]
        if moved[s] or (seed_degree >= 0 and indptr[s + 1] - indptr[s] > seed_degree):
            continue
        b, g = _best_move(indptr, indices, ewgt, vwgt, part, load, maxload, s, conn, touched,
                          False)
        work += indptr[s + 1] - indptr[s]
        if b < 0:
            continue
        sid += 1
        hk, hv, size = _push_grow(hk, hv, 0, g, s)
        cur = np.int64(0)
        best = np.int64(0)
        bestlen = 0
        nm = 0
        since = 0
        while size > 0 and since < limit:
            g0, u, size = heap_pop(hk, hv, size)
            if locked[u] == sid:
                continue
            if seen[u] == sid and exact[u] and g0 != last[u]:
                continue  # a stale duplicate: the exact entry is queued too
            b, g = _best_move(indptr, indices, ewgt, vwgt, part, load, maxload, u, conn,
                              touched, False)
            work += indptr[u + 1] - indptr[u]
            seen[u] = sid
            last[u] = g
            exact[u] = True
            if b < 0:
                continue
            if g != g0:
                hk, hv, size = _push_grow(hk, hv, size, g, u)
                continue
            a = part[u]
            part[u] = b
            load[a] -= vwgt[u]
            load[b] += vwgt[u]
            locked[u] = sid
            moved[u] = True
            mv[nm] = u
            mfrom[nm] = a
            nm += 1
            cur += g
            if cur > best:
                best = cur
                bestlen = nm
                since = 0
            else:
                since += 1
            for e in range(indptr[u], indptr[u + 1]):
                w = indices[e]
                if locked[w] == sid or part[w] == b or indptr[w + 1] - indptr[w] > hub:
                    continue
                if seen[w] == sid:  # raise the bound: u's move adds at most 2 w(u, w)
                    last[w] += 2 * ewgt[e]
                    exact[w] = False
                    hk, hv, size = _push_grow(hk, hv, size, last[w], w)
                    continue
                bw, gw = _best_move(indptr, indices, ewgt, vwgt, part, load, maxload, w, conn,
                                    touched, False)
                work += indptr[w + 1] - indptr[w]
                seen[w] = sid
                last[w] = gw
                exact[w] = True
                if bw >= 0:
                    hk, hv, size = _push_grow(hk, hv, size, gw, w)
        for t in range(nm - 1, bestlen - 1, -1):  # undo past the best prefix
            u = mv[t]
            b = part[u]
            a = mfrom[t]
            part[u] = a
            load[b] -= vwgt[u]
            load[a] += vwgt[u]
        kept += bestlen
        total += best
    return kept, total, work


@njit(cache=True)
def repair_balance(indptr, indices, ewgt, vwgt, part, load, maxload, order):
    """Move vertices out of overloaded parts until every part is within its bound.

    Each round visits the vertices of overloaded parts (seeded ``order``) and
    moves a vertex to the feasible part it is best connected to (the lightest
    relative to its bound among equals; any feasible part when it has no
    neighbour with room), preferring vertices whose move costs the least cut:
    first moves that cost nothing, then rounds that allow ever larger losses.
    Stops when no part is over its bound or no vertex can move.

    Returns
    -------
    moves
    """
    n = len(part)
    k = len(load)
    conn = np.zeros(k, np.int64)
    touched = np.empty(touched_size(indptr, k), np.int64)
    moves = 0
    allowance = np.int64(0)
    while True:
        over = False
        for p in range(k):
            if load[p] > maxload[p]:
                over = True
        if not over:
            break
        lightest = 0
        for p in range(k):
            if ratio_less(load[p], maxload[p], load[lightest], maxload[lightest]):
                lightest = p
        made = 0
        loss_seen = np.int64(-1)
        for i in range(n):
            v = order[i]
            a = part[v]
            if load[a] <= maxload[a]:
                continue
            wv = vwgt[v]
            nt = gather(indptr, indices, ewgt, part, v, conn, touched)
            best = -1
            bgain = np.int64(0)
            for j in range(nt):
                b = touched[j]
                if b == a or load[b] + wv > maxload[b]:
                    continue
                g = conn[b] - conn[a]
                if best < 0 or g > bgain:
                    best = b
                    bgain = g
            if best < 0 and load[lightest] + wv <= maxload[lightest] and lightest != a:
                best = lightest
                bgain = -conn[a]
            for j in range(nt):
                conn[touched[j]] = 0
            if best < 0:
                continue
            if -bgain > allowance:
                if loss_seen < 0 or -bgain < loss_seen:
                    loss_seen = -bgain
                continue
            part[v] = best
            load[a] -= wv
            load[best] += wv
            moves += 1
            made += 1
        if made == 0:
            if loss_seen < 0:
                break  # nothing can move: a vertex heavier than every bound's room
            allowance = loss_seen
    return moves


@njit(cache=True)
def project(part_coarse, cmap):
    n = len(cmap)
    part = np.empty(n, np.int64)
    for v in range(n):
        part[v] = part_coarse[cmap[v]]
    return part
