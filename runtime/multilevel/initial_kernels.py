"""Numba kernels of the multilevel partitioner's initial partitioning (CPU): induced
subgraphs, greedy graph growing, connected components and FM bisection.

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
from runtime.gain_kernels import heap_pop, heap_push

from .refinement_kernels import edge_cut, part_loads, ratio_less

#: 2-way FM: a pass stops after this many moves plus one per 100 vertices without a better
#: state (with the sides taking turns, 50 searched most of a bisection's coarsest graph
#: of ~100 vertices for x 1.18 the time; `fm_bisection`)
FM_BISECTION_LIMIT = 15


@helper
def _copy(dst, src):
    """``dst[:] = src`` as a loop: numba's array-to-slice assignment takes ~1 s to compile
    per signature."""
    for i in range(src.shape[0]):
        dst[i] = src[i]


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
    size = heap_push(hk, hv, 0, gain[start], start)
    nxt = 0
    skipped = np.zeros(n, np.bool_)
    while w0 < target0:
        v = -1
        while size > 0:
            g, u, size = heap_pop(hk, hv, size)
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
                size = heap_push(hk, hv, size, gain[t], t)


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


@helper
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
    heavy = stable_argsort(-w)
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
            _copy(side, base)
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
            _copy(trial, base)
            _grow_into(indptr, indices, ewgt, vwgt, trial, verts[t], verts[:nv], target0)
            cut = fm_bisection(indptr, indices, ewgt, vwgt, trial, target0, max0, max1, passes)
            ea, eb = _excess(vwgt, trial, max0, max1)
            if _key_less(ea, eb, cut, best_ea, best_eb, bar):
                best_ea = ea
                best_eb = eb
                bar = cut
                _copy(side, trial)
                found = True
    return found


@helper
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


@helper
def _live_top(hk, hv, size, side, s, locked, gain):
    """``(v, size)``: the best live entry of side ``s``'s queue (not locked, still on side s,
    its gain current), left on top; the stale ones above it are dropped. v = -1 when none
    is left."""
    while size > 0:
        u = hv[0]
        if not locked[u] and side[u] == s and hk[0] == gain[u]:
            return u, size
        _, _, size = heap_pop(hk, hv, size)
    return -1, size


@helper
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
    # a pass pushes n entries, then one per edge of a moved vertex; each side's queue has
    # a buffer of its own (contiguous, so the heap's helpers compile for one layout)
    cap = len(indices) + n + 1
    hk0 = np.empty(cap, np.int64)
    hv0 = np.empty(cap, np.int64)
    hk1 = np.empty(cap, np.int64)
    hv1 = np.empty(cap, np.int64)
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
                n0 = heap_push(hk0, hv0, n0, gain[v], v)
            else:
                n1 = heap_push(hk1, hv1, n1, gain[v], v)
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
                _, _, n0 = heap_pop(hk0, hv0, n0)
            else:
                v = v1
                _, _, n1 = heap_pop(hk1, hv1, n1)
            locked[v] = True
            cut -= _flip(indptr, indices, ewgt, vwgt, side, load, gain, v)
            for e in range(indptr[v], indptr[v + 1]):
                t = indices[e]
                if not locked[t]:
                    if side[t] == 0:
                        n0 = heap_push(hk0, hv0, n0, gain[t], t)
                    else:
                        n1 = heap_push(hk1, hv1, n1, gain[t], t)
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
            _copy(best, side)
    return best
