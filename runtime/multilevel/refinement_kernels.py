"""Numba kernels of the multilevel partitioner's CPU twin (one function per phase step).

Every array here has been validated by `runtime.multilevel.graph` before it
arrives: CSR offsets ``indptr`` (int64, non-decreasing, ``indptr[0] == 0``),
neighbours ``indices`` (int64 in ``[0, n)``, no self-loops, symmetric), edge
weights ``ewgt`` and vertex weights ``vwgt`` (int64, > 0). Parts are int64 in
``[0, k)``. Random choices come from seeded integer hashes or permutations
made by the caller from ``numpy.random.default_rng(seed)``, so a run is
deterministic for a seed.
"""

import numpy as np

from vcut_base.jitcache import njit

_M64 = np.uint64(0xFFFFFFFFFFFFFFFF)
#: 2-way FM: a pass stops after this many moves plus one per 100 vertices without a better
#: state (50 before the sides took turns: with turns, 50 searched most of a bisection's
#: coarsest graph of ~100 vertices for x 1.18 the time; `fm_bisection`)
FM_BISECTION_LIMIT = 15


@njit(cache=True, inline="always")
def _mix(x):
    """splitmix64 finaliser: a well-spread 64-bit hash of ``x``."""
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@njit(cache=True)
def vertex_keys(n, seed):
    """Seeded random 64-bit keys, one per vertex: edge {a, b} breaks ties by
    ``key[a] ^ key[b]``, the same from both ends."""
    key = np.empty(n, np.uint64)
    s = _mix(np.uint64(seed) + np.uint64(0x9E3779B97F4A7C15))
    for v in range(n):
        key[v] = _mix(s ^ np.uint64(v))
    return key


@njit(cache=True, inline="always")
def _heaviest_free(indptr, indices, ewgt, vwgt, match, key, max_vw, u):
    """``(v, w)``: u's unmatched neighbour of heaviest edge whose combined weight stays
    within ``max_vw`` (ties: the larger ``key[u] ^ key[v]``), -1 when there is none, and
    that edge's weight. Compiled for the GPU too (`_gpu_kernels`): ``key`` may be uint64
    (here) or int64 (there)."""
    return _heaviest_free_of(indptr, indices, ewgt, vwgt, match, key, max_vw, u, 0, 1)


@njit(cache=True, inline="always")
def _heaviest_free_of(indptr, indices, ewgt, vwgt, match, key, max_vw, u, first, step):
    """`_heaviest_free` over the row entries ``first``, ``first + step``, ... of u (the
    GPU's block of threads for a hub takes one stride each, then reduces in this order)."""
    ku = key[u]
    bw = -1
    bh = ku ^ ku  # 0 of the keys' type (the first candidate wins on weight anyway)
    bv = -1
    for e in range(indptr[u] + first, indptr[u + 1], step):
        v = indices[e]
        if match[v] >= 0 or vwgt[u] + vwgt[v] > max_vw:
            continue
        w = ewgt[e]
        h = ku ^ key[v]
        if w > bw or (w == bw and h > bh):
            bw = w
            bh = h
            bv = v
    return bv, bw


# ----------------------------------------------------------------------------- coarsening


@njit(cache=True)
def heavy_edge_matching(indptr, indices, ewgt, vwgt, max_vw, seed, rounds):
    """Heavy-edge matching by mutual proposals, then two-hop pairing of leftovers.

    Each round every unmatched vertex proposes to its unmatched neighbour of
    heaviest edge (ties by a seeded hash of the edge, the same from both
    ends) whose combined weight stays within ``max_vw``; two vertices that
    propose to each other are matched. The heaviest unmatched edge is always
    mutual, so every round with a candidate edge matches at least one pair.
    This is the GPU kernel's cross-examination run in one thread. Vertices
    still unmatched are then paired two hops apart: those whose heaviest
    neighbour is the same vertex are matched in pairs (as METIS does for the
    leaves of a star, which heavy-edge matching cannot shrink), and islands
    (vertices without edges) with each other in id order.

    Returns
    -------
    match : int64 array, ``match[match[v]] == v``; ``match[v] == v`` unmatched
    rounds_used : int
    """
    n = len(vwgt)
    match = np.full(n, -1, np.int64)
    prop = np.full(n, -1, np.int64)
    key = vertex_keys(n, seed)
    free = np.empty(n, np.int64)  # the vertices still unmatched that have an edge
    nf = 0
    for u in range(n):
        if indptr[u + 1] > indptr[u]:
            free[nf] = u
            nf += 1
    used = 0
    for r in range(rounds):
        if nf == 0:
            break
        used = r + 1
        for i in range(nf):
            u = free[i]
            # the free set only shrinks: a proposal to a vertex still free stands (no
            # heavier free neighbour can appear), and none stays none
            if r == 0 or (prop[u] >= 0 and match[prop[u]] >= 0):
                prop[u], _ = _heaviest_free(indptr, indices, ewgt, vwgt, match, key, max_vw,
                                            u)
        made = 0
        for i in range(nf):
            u = free[i]
            v = prop[u]
            if v > u and prop[v] == u:
                match[u] = v
                match[v] = u
                made += 1
        kept = 0
        for i in range(nf):  # compact: the still-unmatched, in increasing id
            u = free[i]
            if match[u] < 0:
                free[kept] = u
                kept += 1
        nf = kept
        if made == 0:
            break
    # then greedily in id order: each vertex still free takes its heaviest free neighbour
    for i in range(nf):
        u = free[i]
        if match[u] >= 0:
            continue
        bv, _ = _heaviest_free(indptr, indices, ewgt, vwgt, match, key, max_vw, u)
        if bv >= 0:
            match[u] = bv
            match[bv] = u
    # two hops: unmatched vertices grouped by their heaviest neighbour
    heavy = np.full(n, -1, np.int64)
    left = 0
    for u in range(n):
        if match[u] >= 0:
            continue
        left += 1
        bw = -1
        bv = -1
        for e in range(indptr[u], indptr[u + 1]):
            if ewgt[e] > bw:
                bw = ewgt[e]
                bv = indices[e]
        heavy[u] = bv
    if left > n // 10:
        last = np.full(n, -1, np.int64)  # per neighbour: an unmatched vertex waiting for a mate
        for u in range(n):
            c = heavy[u]
            if match[u] >= 0 or c < 0:
                continue
            w = last[c]
            if w >= 0 and vwgt[u] + vwgt[w] <= max_vw:
                match[u] = w
                match[w] = u
                last[c] = -1
            else:
                last[c] = u
    # islands (no edges) pair with each other in id order, as METIS matches them: no
    # matching reaches them, and half of an RMAT graph's vertices can be islands
    lone = -1
    for u in range(n):
        if match[u] >= 0 or indptr[u + 1] > indptr[u]:
            continue
        if lone >= 0 and vwgt[u] + vwgt[lone] <= max_vw:
            match[u] = lone
            match[lone] = u
            lone = -1
        else:
            lone = u
    for u in range(n):
        if match[u] < 0:
            match[u] = u
    return match, used


@njit(cache=True)
def mesh_like(indptr, ewgt, max_ratio):
    """Whether every edge weighs the same and no vertex has more than ``max_ratio`` times
    the mean degree (a mesh, grid or road network's unweighted level)."""
    n = len(indptr) - 1
    m = indptr[n]
    if n == 0 or m == 0:
        return False
    w = ewgt[0]
    for e in range(m):
        if ewgt[e] != w:
            return False
    most = 0
    for u in range(n):
        most = max(most, indptr[u + 1] - indptr[u])
    return most <= max_ratio * (m / n)   # in floats: most * n can pass int64


@njit(cache=True)
def coarse_map(match):
    """Cmap: the rank of min(v, match[v]) among the vertices with v <= match[v]."""
    n = len(match)
    cmap = np.empty(n, np.int64)
    c = 0
    for v in range(n):  # flag + exclusive scan
        if v <= match[v]:
            cmap[v] = c
            c += 1
    for v in range(n):
        if v > match[v]:
            cmap[v] = cmap[match[v]]
    return cmap, c


@njit(cache=True)
def contract(indptr, indices, ewgt, vwgt, match, cmap, nc):
    """The coarse graph: matched pairs merged, parallel edges added, self-loops dropped."""
    n = len(vwgt)
    cvw = np.zeros(nc, np.int64)
    for v in range(n):
        cvw[cmap[v]] += vwgt[v]
    cptr = np.zeros(nc + 1, np.int64)
    cidx = np.empty(len(indices), np.int64)
    cw = np.empty(len(indices), np.int64)
    slot = np.full(nc, -1, np.int64)  # where coarse neighbour c sits in the current list
    m = 0
    for v in range(n):
        if v > match[v]:
            continue
        c = cmap[v]
        start = m
        u = v
        for _ in range(2):
            for e in range(indptr[u], indptr[u + 1]):
                t = cmap[indices[e]]
                if t == c:
                    continue
                s = slot[t]
                if s >= start:
                    cw[s] += ewgt[e]
                else:
                    slot[t] = m
                    cidx[m] = t
                    cw[m] = ewgt[e]
                    m += 1
            if match[v] == v:
                break
            u = match[v]
        cptr[c + 1] = m
    # views: the buffers' tails past m are never touched (no copy of the level)
    return cptr, cidx[:m], cw[:m], cvw


# ------------------------------------------------------------------- initial partitioning


@njit(cache=True)
def induced(indptr, indices, ewgt, vwgt, verts, local):
    """The subgraph induced by ``verts``; ``local`` (all -1 on entry, restored) maps ids."""
    nv = len(verts)
    for i in range(nv):
        local[verts[i]] = i
    ptr = np.zeros(nv + 1, np.int64)
    for i in range(nv):
        v = verts[i]
        d = 0
        for e in range(indptr[v], indptr[v + 1]):
            if local[indices[e]] >= 0:
                d += 1
        ptr[i + 1] = ptr[i] + d
    idx = np.empty(ptr[nv], np.int64)
    w = np.empty(ptr[nv], np.int64)
    vw = np.empty(nv, np.int64)
    for i in range(nv):
        v = verts[i]
        vw[i] = vwgt[v]
        p = ptr[i]
        for e in range(indptr[v], indptr[v + 1]):
            t = local[indices[e]]
            if t >= 0:
                idx[p] = t
                w[p] = ewgt[e]
                p += 1
    for i in range(nv):
        local[verts[i]] = -1
    return ptr, idx, w, vw


@njit(cache=True, inline="always")
def _heap_push(hk, hv, size, key, val):
    i = size
    hk[i] = key
    hv[i] = val
    while i > 0:
        p = (i - 1) >> 1
        if hk[p] >= hk[i]:
            break
        hk[p], hk[i] = hk[i], hk[p]
        hv[p], hv[i] = hv[i], hv[p]
        i = p
    return size + 1


@njit(cache=True, inline="always")
def _heap_pop(hk, hv, size):
    key = hk[0]
    val = hv[0]
    size -= 1
    hk[0] = hk[size]
    hv[0] = hv[size]
    i = 0
    while True:
        a = 2 * i + 1
        if a >= size:
            break
        b = a + 1
        c = a if b >= size or hk[a] >= hk[b] else b
        if hk[i] >= hk[c]:
            break
        hk[c], hk[i] = hk[i], hk[c]
        hv[c], hv[i] = hv[i], hv[c]
        i = c
    return key, val, size


@njit(cache=True)
def _grow(indptr, indices, ewgt, vwgt, start, order, target0):
    """Side 0 grown greedily from ``start`` until it holds ``target0`` weight (GGGP).

    The next vertex is always the outside one whose move lowers the cut most
    (edge weight into side 0 minus edge weight elsewhere). When no outside
    vertex touches side 0, growth restarts from the next vertex of ``order``
    (a seeded permutation) not yet inside.
    """
    side = np.ones(len(vwgt), np.int64)
    _grow_into(indptr, indices, ewgt, vwgt, side, start, order, target0)
    return side


@njit(cache=True)
def _grow_into(indptr, indices, ewgt, vwgt, side, start, order, target0):
    """`_grow` from a given ``side`` (0/1, changed in place): side 0's weight so far counts
    towards ``target0``, and restarts take only vertices of ``order``."""
    n = len(vwgt)
    gain = np.zeros(n, np.int64)
    w0 = 0
    for v in range(n):
        if side[v] == 0:
            w0 += vwgt[v]
        for e in range(indptr[v], indptr[v + 1]):
            if side[indices[e]] == 0:
                gain[v] += ewgt[e]
            else:
                gain[v] -= ewgt[e]
    hk = np.empty(len(indices) + n + 1, np.int64)
    hv = np.empty(len(indices) + n + 1, np.int64)
    size = _heap_push(hk, hv, 0, gain[start], start)
    nxt = 0
    skipped = np.zeros(n, np.bool_)
    while w0 < target0:
        v = -1
        while size > 0:
            g, u, size = _heap_pop(hk, hv, size)
            if side[u] == 1 and not skipped[u] and g == gain[u]:
                v = u
                break
        if v < 0:
            while nxt < len(order) and (side[order[nxt]] == 0 or skipped[order[nxt]]):
                nxt += 1
            if nxt == len(order):
                break
            v = order[nxt]
        if w0 + vwgt[v] > target0 and w0 > 0 and 2 * (w0 + vwgt[v] - target0) > vwgt[v]:
            skipped[v] = True  # would overshoot by more than half its weight
            continue
        side[v] = 0
        w0 += vwgt[v]
        for e in range(indptr[v], indptr[v + 1]):
            t = indices[e]
            if side[t] == 1:
                gain[t] += 2 * ewgt[e]
                size = _heap_push(hk, hv, size, gain[t], t)


@njit(cache=True)
def components(indptr, indices):
    """Connected components: ``(label per vertex, count)``; labels are numbered in the
    order of each component's lowest vertex."""
    n = len(indptr) - 1
    lab = np.full(n, -1, np.int64)
    stack = np.empty(n, np.int64)
    nc = 0
    for s in range(n):
        if lab[s] >= 0:
            continue
        lab[s] = nc
        stack[0] = s
        top = 1
        while top > 0:
            top -= 1
            u = stack[top]
            for e in range(indptr[u], indptr[u + 1]):
                v = indices[e]
                if lab[v] < 0:
                    lab[v] = nc
                    stack[top] = v
                    top += 1
        nc += 1
    return lab, nc


@njit(cache=True)
def _excess(vwgt, side, max0, max1):
    """A bisection's excess over its bounds as a share of the bound it breaks (`_over`)."""
    bound = np.empty(2, np.int64)
    bound[0] = max0
    bound[1] = max1
    return _over(part_loads(side, vwgt, 2), bound)


@njit(cache=True, inline="always")
def _key_less(ea, eb, cut, fa, fb, fcut):
    """Whether a bisection of excess ``ea / eb`` and ``cut`` beats one of ``fa / fb`` and
    ``fcut``: less excess, or as little and a lower cut."""
    return ratio_less(ea, eb, fa, fb) or (cut < fcut and not ratio_less(fa, fb, ea, eb))


@njit(cache=True)
def split_components(indptr, indices, ewgt, vwgt, side, order, target0, max0, max1, passes,
                     tries, limit, margin):
    """Bisections of a disconnected graph that split one component alone; ``side`` is
    replaced by the best of them when it breaks the bounds less, or as little and cuts
    less than ``margin`` times ``side``'s cut. Returns whether it was.

    Whole components go to side 0, heaviest first, while they fit under ``target0``; if
    side 1 is then within its bound that is a bisection of cut 0. Otherwise side 0 lacks
    some weight d, and every component left on side 1 weighs more than d: each of the
    ``limit`` lightest of them in turn gives side 0 its last d by growth (`_grow_into`,
    from the first ``tries`` of its vertices in ``order``), refined by FM over the whole
    graph. Growth from one start alone can fill a component and restart inside a dense
    one at the wrong share of it (a web graph's bisection: cut 189,701 where 56 exists);
    a component split at the share the others leave does not."""
    best_ea, best_eb = _excess(vwgt, side, max0, max1)
    best_cut = edge_cut(indptr, indices, ewgt, side)
    if best_ea == 0 and best_cut == 0:
        return False
    lab, nc = components(indptr, indices)
    if nc < 2:
        return False
    n = len(vwgt)
    w = np.zeros(nc, np.int64)
    for v in range(n):
        w[lab[v]] += vwgt[v]
    total = w.sum()
    heavy = np.argsort(-w, kind="mergesort")
    on0 = np.zeros(nc, np.bool_)
    w0 = 0
    for c in heavy:
        if w0 + w[c] <= target0:
            on0[c] = True
            w0 += w[c]
    base = np.ones(n, np.int64)
    for v in range(n):
        if on0[lab[v]]:
            base[v] = 0
    bar = best_cut * margin  # the cut a split must beat at the same excess
    found = False
    if w0 >= total - max1:  # the components alone balance the sides: no edge is cut
        ea, eb = _excess(vwgt, base, max0, max1)
        if _key_less(ea, eb, 0, best_ea, best_eb, bar):
            side[:] = base
            return True
        return False
    verts = np.empty(n, np.int64)
    trial = np.empty(n, np.int64)
    taken = 0
    for i in range(nc - 1, -1, -1):  # the lightest components left on side 1 first
        c = heavy[i]
        if on0[c]:
            continue
        if taken == limit:
            break
        taken += 1
        nv = 0
        for v in order:
            if lab[v] == c:
                verts[nv] = v
                nv += 1
        for t in range(min(tries, nv)):
            trial[:] = base
            _grow_into(indptr, indices, ewgt, vwgt, trial, verts[t], verts[:nv], target0)
            cut = fm_bisection(indptr, indices, ewgt, vwgt, trial, target0, max0, max1, passes)
            ea, eb = _excess(vwgt, trial, max0, max1)
            if _key_less(ea, eb, cut, best_ea, best_eb, bar):
                best_ea = ea
                best_eb = eb
                bar = cut
                side[:] = trial
                found = True
    return found


@njit(cache=True, inline="always")
def _flip(indptr, indices, ewgt, vwgt, side, load, gain, v):
    """Move v to the other side, updating loads and gains; the cut's decrease (v's gain)."""
    a = side[v]
    b = 1 - a
    side[v] = b
    load[a] -= vwgt[v]
    load[b] += vwgt[v]
    g = gain[v]
    gain[v] = -g
    for e in range(indptr[v], indptr[v + 1]):
        t = indices[e]
        if side[t] == b:
            gain[t] -= 2 * ewgt[e]
        else:
            gain[t] += 2 * ewgt[e]
    return g


@njit(cache=True, inline="always")
def _live_top(hk, hv, size, side, s, locked, gain):
    """``(v, size)``: the best live entry of side ``s``'s queue (not locked, still on side s,
    its gain current), left on top; the stale ones above it are dropped. v = -1 when none
    is left."""
    while size > 0:
        u = hv[0]
        if not locked[u] and side[u] == s and hk[0] == gain[u]:
            return u, size
        _, _, size = _heap_pop(hk, hv, size)
    return -1, size


@njit(cache=True, inline="always")
def _over(load, bound):
    """A bisection's excess as a fraction ``(amount, bound)`` of the bound broken (the
    larger; ``(0, 1)`` within both): scaled weights compare alike."""
    a = max(load[0] - bound[0], 0)
    b = max(bound[0], 1)
    c = max(load[1] - bound[1], 0)
    d = max(bound[1], 1)
    if ratio_less(a, b, c, d):
        return c, d
    return a, b


@njit(cache=True)
def fm_bisection(indptr, indices, ewgt, vwgt, side, target0, max0, max1, passes):
    """Fiduccia-Mattheyses refinement of a bisection, with rollback to the best prefix.

    Each side keeps a max-queue of its vertices by gain. The side further above its
    target weight (``target0``, the rest for side 1) gives its best move (negative gains
    included, so the search can climb out of local minima; the other side when its queue
    is empty), as METIS's 2-way FM does; where no bound can bind (each side may hold the
    whole weight) the better of the two sides' best moves is taken instead. A vertex moves
    at most once a pass. So the sides take turns around their targets, a bound may break
    for a while, and no vertex is passed over for a bound (a pass that dropped the moves a
    bound forbade lost those vertices until the next pass: with both sides at their bounds
    it moved nothing). A pass stops after ``15 + n / 100`` moves without a
    better state (METIS stops at 15 to 100) and the moves after the best are undone; a
    state that breaks a bound counts as better only by lowering the excess (a share of the
    bound it breaks, `_over`, so that weights scaled by any factor decide alike), so a
    start within the bounds ends within them. Passes repeat until one finds nothing better.
    Returns the cut.
    """
    n = len(vwgt)
    gain = np.zeros(n, np.int64)
    load = np.zeros(2, np.int64)
    cut = 0
    for v in range(n):
        load[side[v]] += vwgt[v]
        for e in range(indptr[v], indptr[v + 1]):
            if side[indices[e]] != side[v]:
                gain[v] += ewgt[e]
                cut += ewgt[e]
            else:
                gain[v] -= ewgt[e]
    cut //= 2
    target1 = load[0] + load[1] - target0
    bound = np.empty(2, np.int64)
    bound[0] = max0
    bound[1] = max1
    # a pass pushes n entries, then one per edge of a moved vertex: the two queues share
    # one buffer, side 1's from its end (a reversed view), and never meet
    cap = len(indices) + n + 1
    hk0 = np.empty(cap, np.int64)
    hv0 = np.empty(cap, np.int64)
    hk1 = hk0[::-1]
    hv1 = hv0[::-1]
    locked = np.zeros(n, np.bool_)
    moved = np.empty(n, np.int64)
    limit = FM_BISECTION_LIMIT + n // 100
    free = max0 >= load[0] + load[1] and max1 >= load[0] + load[1]
    for _ in range(passes):
        n0 = 0
        n1 = 0
        for v in range(n):
            locked[v] = False
            if side[v] == 0:
                n0 = _heap_push(hk0, hv0, n0, gain[v], v)
            else:
                n1 = _heap_push(hk1, hv1, n1, gain[v], v)
        best_ea, best_eb = _over(load, bound)
        best_cut = cut
        best_at = 0
        nm = 0
        since = 0
        while since < limit:
            v0, n0 = _live_top(hk0, hv0, n0, side, 0, locked, gain)
            v1, n1 = _live_top(hk1, hv1, n1, side, 1, locked, gain)
            if v0 < 0 and v1 < 0:
                break
            heavy0 = load[0] - target0 > load[1] - target1  # side 0 further above target
            if v0 < 0 or v1 < 0:
                take0 = v1 < 0
            elif free:  # no bound can bind: the better move
                take0 = gain[v0] > gain[v1] or (gain[v0] == gain[v1] and heavy0)
            else:  # the side further above its target gives
                take0 = heavy0
            if take0:
                v = v0
                _, _, n0 = _heap_pop(hk0, hv0, n0)
            else:
                v = v1
                _, _, n1 = _heap_pop(hk1, hv1, n1)
            locked[v] = True
            cut -= _flip(indptr, indices, ewgt, vwgt, side, load, gain, v)
            for e in range(indptr[v], indptr[v + 1]):
                t = indices[e]
                if not locked[t]:
                    if side[t] == 0:
                        n0 = _heap_push(hk0, hv0, n0, gain[t], t)
                    else:
                        n1 = _heap_push(hk1, hv1, n1, gain[t], t)
            moved[nm] = v
            nm += 1
            since += 1
            ea, eb = _over(load, bound)
            if _key_less(ea, eb, cut, best_ea, best_eb, best_cut):
                best_cut = cut
                best_ea = ea
                best_eb = eb
                best_at = nm
                since = 0
        for i in range(nm - 1, best_at - 1, -1):  # roll back
            cut -= _flip(indptr, indices, ewgt, vwgt, side, load, gain, moved[i])
        if best_at == 0:
            break
    return cut


@njit(cache=True)
def grow_bisection(indptr, indices, ewgt, vwgt, starts, order, target0, max0, max1, passes):
    """The best of several grown-and-refined bisections (one per start vertex)."""
    n = len(vwgt)
    best = np.zeros(n, np.int64)
    found = False
    best_ea = best_eb = best_cut = 0
    for s in starts:
        side = _grow(indptr, indices, ewgt, vwgt, s, order, target0)
        cut = fm_bisection(indptr, indices, ewgt, vwgt, side, target0, max0, max1, passes)
        ea, eb = _excess(vwgt, side, max0, max1)
        if not found or _key_less(ea, eb, cut, best_ea, best_eb, best_cut):
            found = True
            best_ea = ea
            best_eb = eb
            best_cut = cut
            best[:] = side
    return best


# ---------------------------------------------------------------------------- refinement


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


@njit(cache=True)
def _touched_size(indptr, k):
    """Room for `_gather`'s parts: k, or more when zero-weight edges list a part twice."""
    most = k
    for v in range(len(indptr) - 1):
        most = max(most, indptr[v + 1] - indptr[v])
    return most


@njit(cache=True, inline="always")
def _gather(indptr, indices, ewgt, part, v, conn, touched):
    """Add v's edge weight per adjacent part into ``conn``; the parts go to ``touched``.

    Returns how many entries of ``touched`` were written (a part reached only by
    zero-weight edges can appear more than once, hence `_touched_size`); the
    caller resets ``conn`` at those entries.
    """
    nt = 0
    for e in range(indptr[v], indptr[v + 1]):
        p = part[indices[e]]
        if conn[p] == 0:
            touched[nt] = p
            nt += 1
        conn[p] += ewgt[e]
    return nt


@njit(cache=True, inline="always")
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
    touched = np.empty(_touched_size(indptr, k), np.int64)
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


@njit(cache=True, inline="always")
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


@njit(cache=True, inline="always")
def _best_move(indptr, indices, ewgt, vwgt, part, load, maxload, v, conn, touched, improving):
    """v's best move: (part, gain) with gain = its edge weight into that part minus into
    its own, the highest over adjacent parts with room for it (ties: the lighter part
    relative to its bound); (-1, 0) when no adjacent other part has room. ``improving``
    (the greedy pass): only moves that lower the cut, or keep it and leave the
    destination lighter after the move than the source is now (relative to bounds)."""
    a = part[v]
    nt = _gather(indptr, indices, ewgt, part, v, conn, touched)
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
    """`_heap_push`, doubling the arrays first when they are full. Inlined with the heap's
    push and pop: as calls, returning the arrays cost reference counting on every push
    (k-way FM 20-25 % slower: delaunay_n16 k = 32, 20.3 -> 16.2 ms)."""
    if size == len(hk):
        hk2 = np.empty(2 * size, hk.dtype)
        hv2 = np.empty(2 * size, hv.dtype)
        hk2[:size] = hk[:size]
        hv2[:size] = hv[:size]
        hk, hv = hk2, hv2
    return hk, hv, _heap_push(hk, hv, size, key, val)


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
    touched = np.empty(_touched_size(indptr, k), np.int64)
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
    seeds = order[np.argsort(key, kind="mergesort")]
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
            g0, u, size = _heap_pop(hk, hv, size)
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
    touched = np.empty(_touched_size(indptr, k), np.int64)
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
            nt = _gather(indptr, indices, ewgt, part, v, conn, touched)
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
