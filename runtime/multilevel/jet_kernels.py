"""Jet refinement's rules (Gilbert et al., "Jet: Multilevel Graph Partitioning on GPUs",
2023), written once for the CPU kernels here and the GPU's (`jet_kernels_gpu`, through
`runtime.gpu.device_twin`).

A round is three maps over the vertices, each reading only what the one before wrote,
so the CPU's loops and the GPU's threads give the same parts:

1. **candidates** (`_candidate`): an unlocked vertex of at most ``heavy`` neighbours
   looks at the first `MAXP` other parts its row meets, keeps those with room for it
   (loads of the round's start), and takes the best connected (then the lighter relative
   to its bound, then the lower id). It is a candidate when the gain ``g`` (that part's
   connection minus its own part's) is >= 0, or when the loss is small against what
   holds it: ``-g < c4 / 4 * own`` (``c4`` quarters; Jet's filter ratio ``c``). So
   moves that lower the cut now are taken together with some that open the way to
   better ones, which greedy moves never take.
2. **afterburner** (`_after`): each candidate recomputes its gain as if every
   neighbour candidate of higher priority (gain, then key, then id) had moved first,
   and moves when that gain is >= 0. Two neighbours can no longer both move on a
   stale view of each other.
3. **apply**: the movers change parts and are locked for the next round (a vertex
   cannot move straight back); every other vertex is unlocked.

The driver (`refinement.jet_loop`) keeps the best balanced partition seen and stops
after `refinement.JET_PATIENCE` rounds without a better one.
"""

import numpy as np

from vcut_base.jitcache import helper, njit, prange

#: distinct neighbour parts a vertex looks at (the GPU's per-thread table; the same as
#: `refinement_kernels_gpu.MAXP`)
MAXP = 32


@helper
def _table(indptr, indices, ewgt, part, v, ps, cs):
    """``(npt, own)``: v's edge weight into each of the first `MAXP` other parts its row
    meets (``ps[:npt]``, ``cs[:npt]``) and into its own part. A ``cs`` longer than `MAXP`
    (the CPU's) holds each part q's place in the table at ``cs[MAXP + q]`` (-1: not in it;
    all -1 again on return): a lookup instead of the search the GPU's threads make."""
    a = part[v]
    npt = 0
    own = 0
    dense = len(cs) > MAXP
    for e in range(indptr[v], indptr[v + 1]):
        q = part[indices[e]]
        w = ewgt[e]
        if q == a:
            own += w
            continue
        if dense:
            s = cs[MAXP + q]
            if s >= 0:
                cs[s] += w
            elif npt < MAXP:
                cs[MAXP + q] = npt
                ps[npt] = q
                cs[npt] = w
                npt += 1
            continue
        found = False
        for i in range(npt):
            if ps[i] == q:
                cs[i] += w
                found = True
                break
        if not found and npt < MAXP:
            ps[npt] = q
            cs[npt] = w
            npt += 1
    if dense:
        for i in range(npt):
            cs[MAXP + ps[i]] = -1
    return npt, own


#: the CPU looks parts up in `_table` (a place per part) up to this many parts; beyond,
#: a chunk's scratch would cost more than the search it saves
DENSE_PARTS = 1 << 12


@njit(cache=True)
def _table_scratch(k):
    """`_table`'s ``cs`` for the CPU's maps: the table, then each of the ``k`` parts' place
    in it (-1) when k <= `DENSE_PARTS`."""
    return np.full(MAXP + (k if k <= DENSE_PARTS else 0), -1, np.int64)


@helper
def _roomiest(ps, cs, npt, load, maxload, bound, wv):
    """``(part, connection)`` of the table's best part with room for weight ``wv`` below
    ``bound``: the best connected, then the lighter relative to its ``maxload``, then the
    lower id; part -1 when none has room."""
    best = -1
    bc = 0
    brel = 0.0
    for i in range(npt):
        q = ps[i]
        if load[q] + wv > bound[q]:
            continue
        c = cs[i]
        rel = load[q] / maxload[q]
        if best < 0 or c > bc or (c == bc and (rel < brel or (rel == brel and q < best))):
            best = q
            bc = c
            brel = rel
    return best, bc


@helper
def _candidate(indptr, indices, ewgt, vwgt, part, load, maxload, lock, heavy, c4, v, ps, cs):
    """``(dest, gain)`` of vertex v (``dest`` < 0: not a candidate, -2 when an unlocked
    vertex's row meets no other part, so that it cannot be one until a neighbour moves);
    ``ps``/``cs`` `_table`'s scratch."""
    if lock[v] != 0:
        return -1, 0
    if heavy > 0 and indptr[v + 1] - indptr[v] > heavy:
        return -1, 0
    npt, own = _table(indptr, indices, ewgt, part, v, ps, cs)
    if npt == 0:
        return -2, 0
    best, bc = _roomiest(ps, cs, npt, load, maxload, maxload, vwgt[v])
    if best < 0:
        return -1, 0
    g = bc - own
    if g >= 0 or -g < 0.25 * c4 * own:  # in floats: no int64 overflow on huge weights
        return best, g
    return -1, 0


@helper
def _outranks(gu, ku, u, g, kv, v):
    """Whether candidate u (gain gu, key ku) has priority over candidate v: higher gain,
    then higher key, then higher id (the rule of `refinement_kernels_gpu.select_kernel`)."""
    return gu > g or (gu == g and (ku > kv or (ku == kv and u > v)))


@helper
def _after(indptr, indices, ewgt, part, dest, gain, key, v):
    """Candidate v's gain with every neighbour candidate of higher priority moved."""
    a = part[v]
    q = dest[v]
    g = gain[v]
    kv = key[v]
    s = 0
    for e in range(indptr[v], indptr[v + 1]):
        u = indices[e]
        pu = part[u]
        du = dest[u]
        if du >= 0 and _outranks(gain[u], key[u], u, g, kv, v):
            pu = du
        if pu == q:
            s += ewgt[e]
        elif pu == a:
            s -= ewgt[e]
    return s


@helper
def _relocate(part, vwgt, load, v, q):
    """Vertex v into part q, both parts' loads updated (the CPU's apply steps; the GPU's
    is `refinement_kernels_gpu._move_vertex`, with atomics)."""
    load[part[v]] -= vwgt[v]
    load[q] += vwgt[v]
    part[v] = q


#: vertices per parallel task of the CPU's maps
CHUNK = 4096


@njit(cache=True, parallel=True)
def cut(indptr, indices, ewgt, part):
    """The cut's weight (a parallel sum of integers: the same in any order)."""
    twice = 0
    for v in prange(len(part)):
        p = part[v]
        for e in range(indptr[v], indptr[v + 1]):
            if part[indices[e]] != p:
                twice += ewgt[e]
    return twice // 2


# The CPU visits only the vertices on its active list: the boundary, and the vertices
# next to a move since the list was last pruned. A vertex off the list has no other part
# in its row, so it can be no candidate (`_candidate` -2) and its ``dest`` stays < 0;
# the rounds thus move exactly what the GPU's maps over every vertex move. The cut is
# kept up to date from the moves alone (`_moved_cut`).


@helper
def _enlist(indptr, indices, v, active, na, listed):
    """v and its neighbours onto the active list ``active[:na]`` (those not on it yet);
    returns the new length."""
    if listed[v] == 0:
        listed[v] = 1
        active[na] = v
        na += 1
    for e in range(indptr[v], indptr[v + 1]):
        u = indices[e]
        if listed[u] == 0:
            listed[u] = 1
            active[na] = u
            na += 1
    return na


@njit(cache=True, parallel=True)
def _moved_cut(indptr, indices, ewgt, part, dest, verts, nv):
    """The change of the cut when every vertex v of ``verts[:nv]`` with ``dest[v] >= 0``
    moves to ``dest[v]`` (all of them at once; an edge between two movers counted once)."""
    delta = 0
    for i in prange(nv):
        v = verts[i]
        dv = dest[v]
        if dv < 0:
            continue
        pv = part[v]
        for e in range(indptr[v], indptr[v + 1]):
            u = indices[e]
            du = dest[u]
            if du >= 0 and u < v:
                continue  # counted from u
            pu = part[u]
            nu = du if du >= 0 else pu
            delta += ewgt[e] * ((1 if dv != nu else 0) - (1 if pv != pu else 0))
    return delta


@njit(cache=True, parallel=True)
def jet_round(indptr, indices, ewgt, vwgt, part, load, maxload, lock, key, heavy, c4, dest,
              gain, active, na, listed):
    """One Jet round on the CPU over the active list ``active[:na]`` (flags ``listed``; see
    above): ``part``, ``load``, ``lock`` and the list changed in place, ``dest``/``gain``
    kept < 0 off the list; returns ``(moved, new length of the list, change of the
    cut)``. Interior vertices leave the list, the movers' neighbours join it."""
    chunks = (na + CHUNK - 1) // CHUNK
    for c in prange(chunks):  # maps: any thread order gives the same arrays
        ps = np.empty(MAXP, np.int64)
        cs = _table_scratch(len(load))
        for i in range(c * CHUNK, min(na, (c + 1) * CHUNK)):
            v = active[i]
            dest[v], gain[v] = _candidate(indptr, indices, ewgt, vwgt, part, load, maxload,
                                          lock, heavy, c4, v, ps, cs)
    kept = 0
    for i in range(na):  # interior vertices (unlocked: their lock is 0) leave the list
        v = active[i]
        if dest[v] == -2:
            listed[v] = 0
            dest[v] = -1
        else:
            active[kept] = v
            kept += 1
    na = kept
    # the afterburner's verdict goes to lock (read by nobody in this step); then the
    # candidates that stay drop their dest, so that dest >= 0 marks the movers
    for i in prange(na):
        v = active[i]
        lock[v] = 1 if dest[v] >= 0 and _after(indptr, indices, ewgt, part, dest, gain, key,
                                               v) >= 0 else 0
    for i in prange(na):
        v = active[i]
        if lock[v] == 0:
            dest[v] = -1
    delta = _moved_cut(indptr, indices, ewgt, part, dest, active, na)
    moved = 0
    grown = na
    for i in range(na):
        v = active[i]
        if dest[v] >= 0:
            _relocate(part, vwgt, load, v, dest[v])
            moved += 1
            grown = _enlist(indptr, indices, v, active, grown, listed)
    return moved, grown, delta


# ------------------------------------------------------------------------- rebalancing

#: loss buckets of the rebalancing: 0 for a move that costs nothing, then
#: 1 + floor(log2(loss)), the last one open-ended
NB = 48
#: sub-buckets of the cut-off bucket, by the top bits of the vertices' keys
SUB_BITS = 8
SUB = 1 << SUB_BITS


@helper
def _bucket(loss):
    if loss <= 0:
        return 0
    b = 1
    while loss > 1 and b < NB - 1:
        loss >>= 1
        b += 1
    return b


@helper
def _sub(kv):
    """A key's sub-bucket: its top `SUB_BITS` of 63."""
    return kv >> (63 - SUB_BITS)


@helper
def _evict(indptr, indices, ewgt, vwgt, part, load, maxload, soft, heavy, cum, kv, v, ps, cs):
    """``(dest, bucket)`` of vertex v in the rebalancing: a vertex of an overloaded part
    goes to the adjacent part with room for it below its ``soft`` bound that it is best
    connected to (then the lighter relative to its bound, then the lower id; loads of the
    round's start), else to a part drawn by its key ``kv`` in proportion to the parts'
    room (``cum``: the room's running sum over the parts), so that the vertices with
    nowhere near to go spread over the parts; ``bucket`` is its loss's (`_bucket`);
    dest -1: it stays."""
    a = part[v]
    if load[a] <= maxload[a]:
        return -1, 0
    if heavy > 0 and indptr[v + 1] - indptr[v] > heavy:
        return -1, 0
    npt, own = _table(indptr, indices, ewgt, part, v, ps, cs)
    wv = vwgt[v]
    best, bc = _roomiest(ps, cs, npt, load, maxload, soft, wv)
    if best < 0:
        k = len(cum)
        total = cum[k - 1]
        if total <= 0:
            return -1, 0
        r = (kv >> 8) % total
        lo = 0
        hi = k - 1
        while lo < hi:  # the first part whose running room passes r
            mid = (lo + hi) // 2
            if cum[mid] > r:
                hi = mid
            else:
                lo = mid + 1
        if lo == a or load[lo] + wv > soft[lo]:
            return -1, 0
        best = lo
        bc = 0
    return best, _bucket(own - bc)


@njit(cache=True)
def cutoffs(hist, need, width):
    """Per part p (rows of ``hist``, ``width`` bins each, in order of preference): the
    first bin at which the weight of its bins reaches ``need[p]``, and the weight still
    needed within that bin; bin -1 where nothing is needed, ``width`` where all the bins
    together fall short (all move)."""
    k = len(need)
    cut = np.empty(k, np.int64)
    left = np.zeros(k, np.int64)
    for p in range(k):
        if need[p] <= 0:
            cut[p] = -1
            continue
        acc = 0
        cut[p] = width
        for b in range(width):
            h = hist[p * width + b]
            if acc + h >= need[p]:
                cut[p] = b
                left[p] = need[p] - acc
                break
            acc += h
    return cut, left


def room_sums(load, soft):
    """The running sum over the parts of their room below ``soft`` (`_evict`'s draw)."""
    return np.cumsum(np.maximum(soft - load, 0))


@njit(cache=True, parallel=True)
def jet_rebalance(indptr, indices, ewgt, vwgt, part, load, maxload, soft, key, heavy, cum,
                  dest, bucket, active, na, listed):
    """One rebalancing round on the CPU: every overloaded part sheds its cheapest
    vertices (`_evict`'s buckets in order, the cut-off bucket by key sub-bucket) until
    their weight covers its excess, a sub-bucket more at most. The GPU runs the same
    steps (`gpu._DeviceJet.rebalance`). Every vertex is visited (an interior one can be
    evicted); the movers and their neighbours join the active list ``active[:na]``
    (`jet_round`) and every ``dest`` ends -1. Returns ``(moved, new length of the list,
    change of the cut)``."""
    n = len(part)
    k = len(load)
    chunks = (n + CHUNK - 1) // CHUNK
    for c in prange(chunks):
        ps = np.empty(MAXP, np.int64)
        cs = _table_scratch(len(load))
        for v in range(c * CHUNK, min(n, (c + 1) * CHUNK)):
            dest[v], bucket[v] = _evict(indptr, indices, ewgt, vwgt, part, load, maxload, soft,
                                        heavy, cum, key[v], v, ps, cs)
    hist = np.zeros(k * NB, np.int64)
    for v in range(n):
        if dest[v] >= 0:
            hist[part[v] * NB + bucket[v]] += vwgt[v]
    cut_b, left = cutoffs(hist, load - maxload, NB)
    hist2 = np.zeros(k * SUB, np.int64)
    for v in range(n):
        if dest[v] >= 0 and bucket[v] == cut_b[part[v]]:
            hist2[part[v] * SUB + _sub(key[v])] += vwgt[v]
    cut_s, _ = cutoffs(hist2, left, SUB)
    for v in prange(n):  # dest >= 0 now marks the movers
        a = part[v]
        if dest[v] >= 0 and not _sheds(bucket[v], key[v], cut_b[a], cut_s[a]):
            dest[v] = -1
    moved = 0
    for v in range(n):  # the movers, listed in bucket (no longer needed)
        if dest[v] >= 0:
            bucket[moved] = v
            moved += 1
    delta = _moved_cut(indptr, indices, ewgt, part, dest, bucket, moved)
    for i in range(moved):
        v = bucket[i]
        _relocate(part, vwgt, load, v, dest[v])
        dest[v] = -1
        na = _enlist(indptr, indices, v, active, na, listed)
    return moved, na, delta


@helper
def _sheds(b, kv, cut_b, cut_s):
    """Whether an evictable vertex (bucket b, key kv) of a part with cut-offs
    ``(cut_b, cut_s)`` moves."""
    return b < cut_b or (b == cut_b and _sub(kv) <= cut_s)
