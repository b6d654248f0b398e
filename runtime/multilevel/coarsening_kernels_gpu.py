"""numba.cuda kernels of the multilevel partitioner's GPU phases (the host side,
which launches them and documents the algorithms, is `runtime.multilevel.gpu`).

One thread per vertex (or per coarse vertex) throughout; every array is int64
and was validated on the host before upload (see `runtime.multilevel.graph`).
Results never depend on the threads' order: every choice is a maximum over a
total order (weights, then seeded vertex keys, then ids), and every atomic is
an addition, a maximum of distinct values, or a buffer slot whose order is
sorted away afterwards.
"""

import numpy as np
from numba import cuda

from .._gpu import _simulated, device_twin
from .._gpu_kernels import _upper_bound
from . import _cpu, _jet

#: distinct neighbour parts a vertex's best move looks at (a per-thread table; parts
#: beyond the first MAXP met in its adjacency are not considered for that vertex; the
#: Jet rules' table, `_jet.MAXP`)
MAXP = _jet.MAXP
#: a vertex's table of its first MAXP other parts (`_jet._table`), shared by the refinement
#: and Jet
_jet_table = device_twin(_jet._table)
#: a vertex of more neighbours than this proposes (`propose_heavy_kernel`) and is refined
#: (`best_move_heavy_kernel`, `select_heavy_kernel`) by a block of `HEAVY_TPB` threads
#: instead of one thread (the refinement only when k is at most `HEAVY_PARTS`: the
#: block's shared table of connections has one entry per part); blocks of 8 under the
#: CUDA simulator, where every thread is a Python thread
HEAVY_DEGREE = 256
HEAVY_TPB = 8 if _simulated() else 256
HEAVY_PARTS = 1024
#: a proposal's weight in the high 32 bits of the packed 64-bit word of the offers
LOW32 = (1 << 32) - 1
TOP31 = (1 << 31) - 1


# ---------------------------------------------------------------------------- generic


@cuda.jit
def fill_kernel(a, n, value):
    i = cuda.grid(1)
    if i < n:
        a[i] = value


# ---------------------------------------------------------------------------- matching


#: the CPU twin's rule, compiled for the device (int64 keys here)
_heaviest_free_of = device_twin(_cpu._heaviest_free_of)
_heaviest_free = device_twin(_cpu._heaviest_free, _heaviest_free_of=_heaviest_free_of)


@cuda.jit
def propose_kernel(indptr, indices, ewgt, vwgt, match, key, max_vw, prop, propw, n, first,
                   heavy, made):
    """Each unmatched vertex with edges proposes to its heaviest free neighbour; a
    proposal to a vertex still free stands (the free set only shrinks). Vertices of more
    than ``heavy`` neighbours (when ``heavy > 0``) are left to `propose_heavy_kernel`.
    Thread 0 also zeroes the round's match count ``made`` (no launch of its own)."""
    u = cuda.grid(1)
    if u == 0:
        made[0] = 0
    if u >= n or match[u] >= 0 or indptr[u + 1] == indptr[u]:
        return
    if heavy > 0 and indptr[u + 1] - indptr[u] > heavy:
        return
    p = prop[u]
    if first != 0 or (p >= 0 and match[p] >= 0):
        v, w = _heaviest_free(indptr, indices, ewgt, vwgt, match, key, max_vw, u)
        prop[u] = v
        propw[u] = w


@cuda.jit
def propose_heavy_kernel(indptr, indices, ewgt, vwgt, match, key, max_vw, prop, propw, heavy,
                         nheavy, first):
    """`propose_kernel` for the vertices ``heavy[:nheavy]``, one block each: the threads'
    heaviest free neighbours over strided parts of the row, reduced by (weight, then
    ``key[u] ^ key[v]``: distinct for distinct v), the CPU twin's `_heaviest_free` order."""
    b = cuda.blockIdx.x
    t = cuda.threadIdx.x
    rv = cuda.shared.array(HEAVY_TPB, np.int64)
    rw = cuda.shared.array(HEAVY_TPB, np.int64)
    rh = cuda.shared.array(HEAVY_TPB, np.int64)
    u = heavy[b] if b < nheavy else -1
    if u >= 0 and match[u] >= 0:
        u = -1  # matched: nothing to do (the whole block agrees)
    if u >= 0 and first == 0:
        p = prop[u]
        if not (p >= 0 and match[p] >= 0):
            u = -1  # its proposal stands
    bw = -1
    bh = 0
    bv = -1
    if u >= 0:
        bv, bw = _heaviest_free_of(indptr, indices, ewgt, vwgt, match, key, max_vw, u, t,
                                   HEAVY_TPB)
        if bv >= 0:
            bh = key[u] ^ key[bv]
    rv[t] = bv
    rw[t] = bw
    rh[t] = bh
    cuda.syncthreads()
    half = HEAVY_TPB // 2
    while half > 0:
        if t < half:
            w = rw[t + half]
            if w > rw[t] or (w == rw[t] and w >= 0 and rh[t + half] > rh[t]):
                rv[t] = rv[t + half]
                rw[t] = w
                rh[t] = rh[t + half]
        cuda.syncthreads()
        half //= 2
    if t == 0 and u >= 0:
        prop[u] = rv[0]
        propw[u] = rw[0]


@cuda.jit
def handshake_kernel(prop, match, n, made, recv, best):
    """Two free vertices that propose to each other are matched (the lower id writes).
    Also resets the cross-examination's ``recv`` (0) and ``best`` (-1) for the round."""
    u = cuda.grid(1)
    if u >= n:
        return
    recv[u] = 0
    best[u] = -1
    if match[u] >= 0:
        return
    v = prop[u]
    if v > u and match[v] < 0 and prop[v] == u:
        match[u] = v
        match[v] = u
        cuda.atomic.add(made, 0, 1)


@cuda.jit
def received_kernel(prop, match, n, recv):
    """``recv[v] = 1`` for every free vertex some free vertex still proposes to."""
    u = cuda.grid(1)
    if u >= n or match[u] >= 0:
        return
    v = prop[u]
    if v >= 0 and match[v] < 0:
        recv[v] = 1


@cuda.jit
def offer_kernel(prop, propw, match, recv, n, best):
    """Cross-examination: a free vertex nobody proposes to (a pure proposer) offers itself
    to its target with an ``atomicMax`` of (weight << 32 | id) in the target's word."""
    u = cuda.grid(1)
    if u >= n or match[u] >= 0 or recv[u] != 0:
        return
    v = prop[u]
    if v >= 0 and match[v] < 0:
        w = propw[u]
        if w > TOP31:
            w = TOP31
        cuda.atomic.max(best, v, (w << 32) | u)


@cuda.jit
def accept_kernel(best, match, n, made):
    """A target takes its best offer: the offerer proposes to it alone and nobody proposes
    to the offerer, so no other thread writes either of the two."""
    v = cuda.grid(1)
    if v >= n or match[v] >= 0:
        return
    b = best[v]
    if b >= 0:
        u = b & LOW32
        match[v] = u
        match[u] = v
        cuda.atomic.add(made, 0, 1)


@cuda.jit
def heavy_kernel(indptr, indices, ewgt, match, n, heavy, hasleaf, left):
    """Each vertex left unmatched (with edges) names its heaviest neighbour (the first of
    equal weight in its row)."""
    u = cuda.grid(1)
    if u >= n:
        return
    heavy[u] = -1
    if match[u] >= 0:
        return
    cuda.atomic.add(left, 0, 1)
    bw = -1
    bv = -1
    for e in range(indptr[u], indptr[u + 1]):
        if ewgt[e] > bw:
            bw = ewgt[e]
            bv = indices[e]
    if bv >= 0:
        heavy[u] = bv
        hasleaf[bv] = 1


@cuda.jit
def two_hop_kernel(indptr, indices, vwgt, match, heavy, hasleaf, max_vw, n):
    """Vertices left unmatched whose heaviest neighbour is ``c`` pair up in the order of
    c's row (one thread per such ``c``: a vertex belongs to one c only)."""
    c = cuda.grid(1)
    if c >= n or hasleaf[c] == 0:
        return
    pending = -1
    for e in range(indptr[c], indptr[c + 1]):
        u = indices[e]
        if match[u] >= 0 or heavy[u] != c:
            continue
        if pending >= 0 and vwgt[u] + vwgt[pending] <= max_vw:
            match[u] = pending
            match[pending] = u
            pending = -1
        else:
            pending = u


@cuda.jit
def island_flags_kernel(indptr, match, n, flag):
    u = cuda.grid(1)
    if u < n:
        flag[u] = 1 if (match[u] < 0 and indptr[u + 1] == indptr[u]) else 0


@cuda.jit
def island_scatter_kernel(flag, rank, n, pos):
    u = cuda.grid(1)
    if u < n and flag[u] != 0:
        pos[rank[u] - 1] = u


@cuda.jit
def island_pair_kernel(pos, count, vwgt, max_vw, match):
    """Islands (no edges) pair with each other in id order: the 2i-th with the next."""
    i = cuda.grid(1)
    j = 2 * i
    if j + 1 < count:
        a = pos[j]
        b = pos[j + 1]
        if vwgt[a] + vwgt[b] <= max_vw:
            match[a] = b
            match[b] = a


@cuda.jit
def finish_match_kernel(match, n):
    u = cuda.grid(1)
    if u < n and match[u] < 0:
        match[u] = u


# ------------------------------------------------------------------ Cmap and contraction


@cuda.jit
def leader_flags_kernel(match, n, flag):
    v = cuda.grid(1)
    if v < n:
        flag[v] = 1 if v <= match[v] else 0


@cuda.jit
def cmap_kernel(match, scan, n, cmap, rep):
    """Cmap[v] = rank of min(v, M[v]) among the leaders (v <= M[v]); rep: a coarse
    vertex's leader."""
    v = cuda.grid(1)
    if v >= n:
        return
    u = match[v]
    lead = v if v <= u else u
    c = scan[lead] - 1
    cmap[v] = c
    if v == lead:
        rep[c] = v


@cuda.jit
def coarse_bounds_kernel(indptr, vwgt, match, rep, nc, cnt, cvw):
    """A coarse vertex's neighbour-count bound (both fine degrees) and its weight."""
    c = cuda.grid(1)
    if c >= nc:
        return
    v = rep[c]
    u = match[v]
    d = indptr[v + 1] - indptr[v]
    w = vwgt[v]
    if u != v:
        d += indptr[u + 1] - indptr[u]
        w += vwgt[u]
    cnt[c] = d
    cvw[c] = w


@cuda.jit(device=True)
def _sift(keys, vals, lo, root, size):
    while True:
        child = 2 * root + 1
        if child >= size:
            return
        if child + 1 < size and keys[lo + child + 1] > keys[lo + child]:
            child += 1
        if keys[lo + root] >= keys[lo + child]:
            return
        t = keys[lo + root]
        keys[lo + root] = keys[lo + child]
        keys[lo + child] = t
        t = vals[lo + root]
        vals[lo + root] = vals[lo + child]
        vals[lo + child] = t
        root = child


@cuda.jit(device=True)
def _merge_repeats(tidx, tw, lo, m):
    """The sorted row ``tidx[lo:lo + m]`` with each run of one neighbour merged into its
    first entry, weights ``tw`` added; the merged row's length."""
    out = 0
    for i in range(m):
        if out > 0 and tidx[lo + out - 1] == tidx[lo + i]:
            tw[lo + out - 1] += tw[lo + i]
        else:
            tidx[lo + out] = tidx[lo + i]
            tw[lo + out] = tw[lo + i]
            out += 1
    return out


@cuda.jit(device=True)
def _heapsort(keys, vals, lo, size):
    """Sort ``keys[lo:lo + size]`` ascending, ``vals`` alongside (in place, O(s log s))."""
    for root in range(size // 2 - 1, -1, -1):
        _sift(keys, vals, lo, root, size)
    for end in range(size - 1, 0, -1):
        t = keys[lo]
        keys[lo] = keys[lo + end]
        keys[lo + end] = t
        t = vals[lo]
        vals[lo] = vals[lo + end]
        vals[lo + end] = t
        _sift(keys, vals, lo, 0, end)


@cuda.jit
def contract_rows_kernel(indptr, indices, ewgt, match, cmap, rep, bscan, cnt, nc, heavy, tidx,
                         tw, real):
    """Coarse vertex c's row in its bounded segment: the relabelled neighbours of both
    fine vertices without self-loops, sorted, repeats merged by adding weights. Rows
    bounded by more than ``heavy`` entries (when ``heavy > 0``) are left to
    `contract_rows_heavy_kernel`."""
    c = cuda.grid(1)
    if c >= nc or (heavy > 0 and cnt[c] > heavy):
        return
    lo = bscan[c] - cnt[c]
    m = 0
    v = rep[c]
    u = match[v]
    for side in range(2):
        x = v if side == 0 else u
        if side == 1 and u == v:
            break
        for e in range(indptr[x], indptr[x + 1]):
            t = cmap[indices[e]]
            if t == c:
                continue
            tidx[lo + m] = t
            tw[lo + m] = ewgt[e]
            m += 1
    _heapsort(tidx, tw, lo, m)
    real[c] = _merge_repeats(tidx, tw, lo, m)


@cuda.jit
def count_flags_kernel(cnt, n, limit, flag):
    i = cuda.grid(1)
    if i < n:
        flag[i] = 1 if cnt[i] > limit else 0


@cuda.jit
def contract_rows_heavy_kernel(indptr, indices, ewgt, match, cmap, rep, bscan, cnt, heavy,
                               nheavy, tidx, tw, real):
    """`contract_rows_kernel` for the coarse vertices ``heavy[:nheavy]``, one block each:
    the threads write the relabelled neighbours into the segment (slots by a shared
    counter, in whatever order), sort them by a bitonic network over the next power of
    two (the missing entries count as +infinity: every run is sorted ascending and each
    step's first comparison mirrors, so a pair whose upper entry is missing is left as it
    is), and one thread merges the repeats by adding weights: the row is the one-thread
    kernel's whatever order the slots were taken in (equal neighbours are summed)."""
    b = cuda.blockIdx.x
    t = cuda.threadIdx.x
    slots = cuda.shared.array(1, np.int64)
    if t == 0:
        slots[0] = 0
    cuda.syncthreads()
    c = heavy[b] if b < nheavy else -1
    lo = 0
    if c >= 0:
        lo = bscan[c] - cnt[c]
        v = rep[c]
        u = match[v]
        dv = indptr[v + 1] - indptr[v]
        du = 0 if u == v else indptr[u + 1] - indptr[u]
        for j in range(t, dv + du, HEAVY_TPB):
            e = indptr[v] + j if j < dv else indptr[u] + (j - dv)
            x = cmap[indices[e]]
            if x != c:
                i = cuda.atomic.add(slots, 0, 1)
                tidx[lo + i] = x
                tw[lo + i] = ewgt[e]
    cuda.syncthreads()
    m = slots[0]
    size = 2
    while size < 2 * m:  # all threads run the same steps (m is shared): barriers agree
        stride = size // 2
        first = True
        while stride > 0:
            for i in range(t, m, HEAVY_TPB):
                if first:
                    j = i ^ (size - 1)
                else:
                    j = i ^ stride
                if i < j < m and tidx[lo + j] < tidx[lo + i]:
                    x = tidx[lo + i]
                    tidx[lo + i] = tidx[lo + j]
                    tidx[lo + j] = x
                    x = tw[lo + i]
                    tw[lo + i] = tw[lo + j]
                    tw[lo + j] = x
            cuda.syncthreads()
            first = False
            stride //= 2
        size *= 2
    if t == 0 and c >= 0:
        real[c] = _merge_repeats(tidx, tw, lo, m)


@cuda.jit
def contract_compact_kernel(bscan, cnt, rscan, real, tidx, tw, nc, cptr, cidx, cw):
    c = cuda.grid(1)
    if c >= nc:
        return
    src = bscan[c] - cnt[c]
    dst = rscan[c] - real[c]
    for i in range(real[c]):
        cidx[dst + i] = tidx[src + i]
        cw[dst + i] = tw[src + i]
    cptr[c + 1] = rscan[c]
    if c == 0:
        cptr[0] = 0


# ------------------------------------------------------------------------ refinement


@cuda.jit
def project_kernel(cpart, cmap, n, part):
    v = cuda.grid(1)
    if v < n:
        part[v] = cpart[cmap[v]]


@cuda.jit
def loads_kernel(part, vwgt, n, load):
    v = cuda.grid(1)
    if v < n:
        cuda.atomic.add(load, part[v], vwgt[v])


@cuda.jit
def cut_kernel(indptr, indices, ewgt, part, n, out):
    """Twice the cut (each cut edge seen from both ends)."""
    v = cuda.grid(1)
    if v >= n:
        return
    s = 0
    p = part[v]
    for e in range(indptr[v], indptr[v + 1]):
        if part[indices[e]] != p:
            s += ewgt[e]
    if s:
        cuda.atomic.add(out, 0, s)


@cuda.jit(device=True)
def _move(q, c, own, a, wv, load, maxload, zero):
    """``(ok, gain, relative load)`` of moving a vertex of weight ``wv`` from part ``a``
    (``own`` its edge weight there) into part ``q`` (``c`` its edge weight there): a
    candidate when the gain is positive and q has room, or (``zero``) the gain is 0 and
    q stays lighter than a."""
    g = c - own
    if g < 0 or load[q] + wv > maxload[q]:
        return False, g, 0.0
    if g == 0 and (zero == 0 or load[q] + wv >= load[a]):
        return False, g, 0.0
    return True, g, load[q] / maxload[q]


@cuda.jit(device=True)
def _better(q, g, rel, bq, bg, brel):
    """Whether move (q, g, rel) beats (bq, bg, brel): higher gain, then the lighter part
    relative to its bound, then the lower part id; bq < 0 is no move."""
    if q < 0:
        return False
    return bq < 0 or g > bg or (g == bg and (rel < brel or (rel == brel and q < bq)))


@cuda.jit
def best_move_kernel(indptr, indices, ewgt, vwgt, part, load, maxload, n, zero, heavy, cto,
                     cgain, k, req, counters):
    """A vertex's best move with a positive gain into a part with room for it (loads at the
    pass start) or, with ``zero``, a move of gain 0 into a part that stays lighter than
    its own (the sum of squared loads falls); the highest gain, then the lightest part
    relative to its bound, then the lowest id; ``cto[v] = -1`` when there is none.
    Vertices of more than ``heavy`` neighbours (when ``heavy > 0``) are left to
    `best_move_heavy_kernel`. Also zeroes the pass's ``req[:k]`` and ``counters[:3]``
    (launched over at least k and 3 threads)."""
    v = cuda.grid(1)
    if v < k:
        req[v] = 0
    if v < 3:
        counters[v] = 0
    if v >= n or (heavy > 0 and indptr[v + 1] - indptr[v] > heavy):
        return
    cto[v] = -1
    cgain[v] = 0
    a = part[v]
    ps = cuda.local.array(MAXP, np.int64)
    cs = cuda.local.array(MAXP, np.int64)
    npt, own = _jet_table(indptr, indices, ewgt, part, v, ps, cs)
    wv = vwgt[v]
    best = -1
    bg = 0
    brel = 0.0
    for i in range(npt):
        q = ps[i]
        ok, g, rel = _move(q, cs[i], own, a, wv, load, maxload, zero)
        if ok and _better(q, g, rel, best, bg, brel):
            best = q
            bg = g
            brel = rel
    if best >= 0:
        cto[v] = best
        cgain[v] = bg


@cuda.jit
def best_move_heavy_kernel(indptr, indices, ewgt, vwgt, part, load, maxload, k, zero, heavy,
                           nheavy, cto, cgain):
    """`best_move_kernel`'s rule for the vertices ``heavy[:nheavy]``, one block each: the
    block adds the vertex's edge weights into a shared table of the k parts (every
    neighbour part considered), then reduces the threads' best moves over the same
    total order (gain, relative load, part id)."""
    b = cuda.blockIdx.x
    t = cuda.threadIdx.x
    conn = cuda.shared.array(HEAVY_PARTS, np.int64)
    rq = cuda.shared.array(HEAVY_TPB, np.int64)
    rg = cuda.shared.array(HEAVY_TPB, np.int64)
    rr = cuda.shared.array(HEAVY_TPB, np.float64)
    for q in range(t, k, HEAVY_TPB):
        conn[q] = 0
    cuda.syncthreads()
    v = heavy[b] if b < nheavy else -1
    if v >= 0:
        for e in range(indptr[v] + t, indptr[v + 1], HEAVY_TPB):
            cuda.atomic.add(conn, part[indices[e]], ewgt[e])
    cuda.syncthreads()
    bq = -1
    bg = 0
    brel = 0.0
    if v >= 0:
        a = part[v]
        own = conn[a]
        wv = vwgt[v]
        for q in range(t, k, HEAVY_TPB):
            if q == a or conn[q] == 0:
                continue
            ok, g, rel = _move(q, conn[q], own, a, wv, load, maxload, zero)
            if ok and _better(q, g, rel, bq, bg, brel):
                bq = q
                bg = g
                brel = rel
    rq[t] = bq
    rg[t] = bg
    rr[t] = brel
    cuda.syncthreads()
    half = HEAVY_TPB // 2
    while half > 0:
        if t < half and _better(rq[t + half], rg[t + half], rr[t + half], rq[t], rg[t], rr[t]):
            rq[t] = rq[t + half]
            rg[t] = rg[t + half]
            rr[t] = rr[t + half]
        cuda.syncthreads()
        half //= 2
    if t == 0 and v >= 0:
        cto[v] = rq[0]
        cgain[v] = rg[0] if rq[0] >= 0 else 0


@cuda.jit
def heavy_flags_kernel(indptr, n, heavy, flag):
    v = cuda.grid(1)
    if v < n:
        flag[v] = 1 if indptr[v + 1] - indptr[v] > heavy else 0


_outranks = device_twin(_jet._outranks)


@cuda.jit
def select_heavy_kernel(indptr, indices, cto, cgain, key, heavy, nheavy, sel):
    """`select_kernel`'s rule for the vertices ``heavy[:nheavy]``, one block each."""
    b = cuda.blockIdx.x
    t = cuda.threadIdx.x
    beaten = cuda.shared.array(1, np.int64)
    if t == 0:
        beaten[0] = 0
    cuda.syncthreads()
    v = heavy[b] if b < nheavy else -1
    if v >= 0 and cto[v] >= 0:
        g = cgain[v]
        kv = key[v]
        for e in range(indptr[v] + t, indptr[v + 1], HEAVY_TPB):
            u = indices[e]
            if cto[u] < 0:
                continue
            if _outranks(cgain[u], key[u], u, g, kv, v):
                beaten[0] = 1
                break
    cuda.syncthreads()
    if t == 0 and v >= 0:
        sel[v] = 1 if (cto[v] >= 0 and beaten[0] == 0) else 0


@cuda.jit
def select_kernel(indptr, indices, cto, cgain, key, n, heavy, sel):
    """Independent moves: a candidate moves only if no neighbour is a candidate of higher
    priority (gain, then key, then id), so the gains of the moves selected add up exactly.
    Vertices of more than ``heavy`` neighbours (when ``heavy > 0``) are left to
    `select_heavy_kernel`."""
    v = cuda.grid(1)
    if v >= n or (heavy > 0 and indptr[v + 1] - indptr[v] > heavy):
        return
    sel[v] = 0
    if cto[v] < 0:
        return
    g = cgain[v]
    kv = key[v]
    for e in range(indptr[v], indptr[v + 1]):
        u = indices[e]
        if cto[u] < 0:
            continue
        if _outranks(cgain[u], key[u], u, g, kv, v):
            return
    sel[v] = 1


@cuda.jit
def request_kernel(sel, cto, vwgt, n, req):
    v = cuda.grid(1)
    if v < n and sel[v] != 0:
        cuda.atomic.add(req, cto[v], vwgt[v])


@cuda.jit
def commit_kernel(sel, cto, cgain, load, maxload, req, n, acc, counters, sat):
    """The selected moves into a part whose requests all fit are accepted; the others go
    to the ``sat`` buffer (counters: moves, gain, saturated requests)."""
    v = cuda.grid(1)
    if v >= n:
        return
    acc[v] = 0
    if sel[v] == 0:
        return
    t = cto[v]
    if load[t] + req[t] <= maxload[t]:
        acc[v] = 1
        cuda.atomic.add(counters, 0, 1)
        cuda.atomic.add(counters, 1, cgain[v])
    else:
        i = cuda.atomic.add(counters, 2, 1)
        sat[i] = v


@cuda.jit(device=True)
def _move_vertex(part, vwgt, load, v, q):
    """Vertex v into part q, both parts' loads updated atomically (a thread per mover)."""
    a = part[v]
    part[v] = q
    cuda.atomic.add(load, q, vwgt[v])
    cuda.atomic.add(load, a, -vwgt[v])


@cuda.jit
def apply_kernel(acc, cto, part, vwgt, load, n):
    v = cuda.grid(1)
    if v < n and acc[v] != 0:
        _move_vertex(part, vwgt, load, v, cto[v])


@cuda.jit
def gather_kernel(ids, count, cto, cgain, vwgt, out_to, out_gain, out_w):
    i = cuda.grid(1)
    if i < count:
        v = ids[i]
        out_to[i] = cto[v]
        out_gain[i] = cgain[v]
        out_w[i] = vwgt[v]


@cuda.jit
def set_parts_kernel(ids, tos, count, part, vwgt, load):
    i = cuda.grid(1)
    if i < count:
        _move_vertex(part, vwgt, load, ids[i], tos[i])


@cuda.jit(device=True)
def _mix(x):
    """splitmix64's finaliser on a uint64."""
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@cuda.jit
def keys_kernel(n, seed, key):
    """Seeded 63-bit keys, one per vertex (ties of the matching and of the move selection)."""
    v = cuda.grid(1)
    if v < n:
        s = _mix(np.uint64(seed) + np.uint64(0x9E3779B97F4A7C15))
        key[v] = np.int64(_mix(s ^ np.uint64(v)) >> np.uint64(1))


# ------------------------------------------------------- Jet refinement (rules in _jet)

_jet_roomiest = device_twin(_jet._roomiest)
_jet_candidate = device_twin(_jet._candidate, _table=_jet_table, _roomiest=_jet_roomiest)
_jet_after = device_twin(_jet._after, _outranks=_outranks)
_jet_bucket = device_twin(_jet._bucket)
_jet_sub = device_twin(_jet._sub)
_jet_evict = device_twin(_jet._evict, _bucket=_jet_bucket, _table=_jet_table,
                         _roomiest=_jet_roomiest)
_jet_sheds = device_twin(_jet._sheds, _sub=_jet_sub)
NB = _jet.NB
SUB = _jet.SUB


@cuda.jit
def jet_candidates_kernel(indptr, indices, ewgt, vwgt, part, load, maxload, lock, heavy, c4, n,
                          dest, gain, status, k):
    """`_jet._candidate` per vertex; also zeroes the round's moves (``status[k + 1]``)."""
    v = cuda.grid(1)
    if v == 0:
        status[k + 1] = 0
    if v >= n:
        return
    ps = cuda.local.array(MAXP, np.int64)
    cs = cuda.local.array(MAXP, np.int64)
    d, g = _jet_candidate(indptr, indices, ewgt, vwgt, part, load, maxload, lock, heavy, c4, v,
                          ps, cs)
    dest[v] = d
    gain[v] = g


@cuda.jit
def jet_after_kernel(indptr, indices, ewgt, part, dest, gain, key, n, lock):
    """The afterburner's verdict (`_jet._after` >= 0) into ``lock``."""
    v = cuda.grid(1)
    if v < n:
        lock[v] = 1 if dest[v] >= 0 and _jet_after(indptr, indices, ewgt, part, dest, gain,
                                                   key, v) >= 0 else 0


@cuda.jit
def jet_apply_kernel(lock, dest, part, vwgt, load, n, moved):
    v = cuda.grid(1)
    if v < n and lock[v] != 0:
        _move_vertex(part, vwgt, load, v, dest[v])
        cuda.atomic.add(moved, 0, 1)


@cuda.jit
def jet_evict_kernel(indptr, indices, ewgt, vwgt, part, load, maxload, soft, heavy, cum, key, n,
                     dest, bucket, hist, status, k):
    """`_jet._evict` per vertex, its weight added to its part's row of the loss buckets
    ``hist``; zeroes the round's moves (``status[k + 1]``)."""
    v = cuda.grid(1)
    if v == 0:
        status[k + 1] = 0
    if v >= n:
        return
    ps = cuda.local.array(MAXP, np.int64)
    cs = cuda.local.array(MAXP, np.int64)
    d, b = _jet_evict(indptr, indices, ewgt, vwgt, part, load, maxload, soft, heavy, cum, key[v],
                      v, ps, cs)
    dest[v] = d
    bucket[v] = b
    if d >= 0:
        cuda.atomic.add(hist, part[v] * NB + b, vwgt[v])


@cuda.jit
def jet_sub_kernel(part, dest, bucket, key, vwgt, cut_b, n, hist):
    """The vertices of their part's cut-off bucket, by key sub-bucket (`_jet._sub`)."""
    v = cuda.grid(1)
    if v < n and dest[v] >= 0 and bucket[v] == cut_b[part[v]]:
        cuda.atomic.add(hist, part[v] * SUB + _jet_sub(key[v]), vwgt[v])


@cuda.jit
def jet_shed_kernel(part, dest, bucket, key, vwgt, cut_b, cut_s, load, n, moved):
    v = cuda.grid(1)
    if v >= n or dest[v] < 0:
        return
    a = part[v]
    if _jet_sheds(bucket[v], key[v], cut_b[a], cut_s[a]):
        _move_vertex(part, vwgt, load, v, dest[v])
        cuda.atomic.add(moved, 0, 1)


@cuda.jit
def copy_kernel(src, n, dst):
    i = cuda.grid(1)
    if i < n:
        dst[i] = src[i]


# ------------------------------------------------- SPAC's split graph (contracted form)


@cuda.jit
def incidence_count_kernel(src, dst, m, deg):
    e = cuda.grid(1)
    if e < m:
        cuda.atomic.add(deg, src[e], 1)
        cuda.atomic.add(deg, dst[e], 1)


@cuda.jit
def incidence_scatter_kernel(src, dst, m, scan, deg, cursor, inc):
    """Each edge into both its endpoints' segments (slots by an atomic cursor; the
    segments are sorted afterwards, so the order of the threads does not show)."""
    e = cuda.grid(1)
    if e < m:
        for side in range(2):
            x = src[e] if side == 0 else dst[e]
            i = cuda.atomic.add(cursor, x, 1)
            inc[scan[x] - deg[x] + i] = e


@cuda.jit
def incidence_sort_kernel(scan, deg, n, inc, scratch):
    """A vertex's incident edges in edge order (heap sort of its segment)."""
    x = cuda.grid(1)
    if x < n:
        _heapsort(inc, scratch, scan[x] - deg[x], deg[x])


@cuda.jit(device=True)
def _clone_neighbours(j, scan, deg, n, inc, cycles):
    """Incidence entry ``j``: ``(x, e, prev, next)``, the vertex whose segment
    ``[lo, hi)`` holds it, its edge (= clone), and the clones next to it, -1 for none;
    consecutive clones are joined, the last and the first too when the vertex has
    degree >= 3 and ``cycles``."""
    x = _upper_bound(scan, n, j)
    hi = scan[x]
    lo = hi - deg[x]
    ring = cycles != 0 and hi - lo >= 3
    prev = -1
    nxt = -1
    if j > lo:
        prev = inc[j - 1]
    elif ring:
        prev = inc[hi - 1]
    if j < hi - 1:
        nxt = inc[j + 1]
    elif ring:
        nxt = inc[lo]
    return x, inc[j], prev, nxt


@cuda.jit
def split_counts_kernel(src, scan, deg, n, inc, entries, cycles, cnt0, cnt1):
    """Auxiliary edges of clone (= edge) e around its first (cnt0) and second (cnt1) end:
    one thread per incidence entry."""
    j = cuda.grid(1)
    if j >= entries:
        return
    x, e, p, q = _clone_neighbours(j, scan, deg, n, inc, cycles)
    c = (1 if p >= 0 else 0) + (1 if q >= 0 else 0)
    if src[e] == x:
        cnt0[e] = c
    else:
        cnt1[e] = c


@cuda.jit
def split_rows_kernel(src, scan, deg, n, inc, entries, cycles, rscan, cnt0, cnt1, adj, w):
    """Each incidence entry writes its clone's neighbours around that end into the clone's
    row (the first end's first); weight 1."""
    j = cuda.grid(1)
    if j >= entries:
        return
    x, e, p, q = _clone_neighbours(j, scan, deg, n, inc, cycles)
    at = rscan[e] - cnt0[e] - cnt1[e] + (0 if src[e] == x else cnt0[e])
    if p >= 0:
        adj[at] = p
        w[at] = 1
        at += 1
    if q >= 0:
        adj[at] = q
        w[at] = 1


@cuda.jit
def sort_rows_kernel(rscan, cnt0, cnt1, m, adj):
    """A clone's row (at most four neighbours) sorted by neighbour."""
    e = cuda.grid(1)
    if e >= m:
        return
    t = cnt0[e] + cnt1[e]
    lo = rscan[e] - t
    for i in range(1, t):
        v = adj[lo + i]
        h = i
        while h > 0 and adj[lo + h - 1] > v:
            adj[lo + h] = adj[lo + h - 1]
            h -= 1
        adj[lo + h] = v


@cuda.jit
def sum_kernel(a, b, n, out):
    i = cuda.grid(1)
    if i < n:
        out[i] = a[i] + b[i]
