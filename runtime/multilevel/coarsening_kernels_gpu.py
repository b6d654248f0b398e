"""numba.cuda kernels of the multilevel partitioner's coarsening: seeded vertex keys, the
matching (proposals, handshakes, heavy vertices, two-hop and island pairs), the coarse
map and the contraction (twins of `coarsening_kernels`; the host side, which launches
them and documents the algorithms, is `runtime.multilevel.gpu`).

One thread per vertex (or per coarse vertex) throughout; every array is int64
and was validated on the host before upload (see `runtime.multilevel.graph`).
Results never depend on the threads' order: every choice is a maximum over a
total order (weights, then seeded vertex keys, then ids), and every atomic is
an addition, a maximum of distinct values, or a buffer slot whose order is
sorted away afterwards.
"""

import numpy as np
from numba import cuda

from vcut_base.hashing import mix

from ..gpu import device_twin, is_simulator
from . import coarsening_kernels

#: a vertex of more neighbours than this proposes (`propose_heavy_kernel`) and is refined
#: (`best_move_heavy_kernel`, `select_heavy_kernel`) by a block of `HEAVY_TPB` threads
#: instead of one thread (the refinement only when k is at most `HEAVY_PARTS`: the
#: block's shared table of connections has one entry per part); blocks of 8 under the
#: CUDA simulator, where every thread is a Python thread
HEAVY_DEGREE = 256
HEAVY_TPB = 8 if is_simulator() else 256
HEAVY_PARTS = 1024
#: a proposal's weight in the high 32 bits of the packed 64-bit word of the offers
LOW32 = (1 << 32) - 1
TOP31 = (1 << 31) - 1


# ---------------------------------------------------------------------------- matching


#: the CPU twin's rule, compiled for the device (int64 keys here)
_heaviest_free_of = device_twin(coarsening_kernels._heaviest_free_of)
_heaviest_free = device_twin(coarsening_kernels._heaviest_free, _heaviest_free_of=_heaviest_free_of)


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


# ----------------------------------------------------------------------------- vertex keys


#: `vcut_base.hashing.mix` (splitmix64's finaliser on a uint64), its GPU twin compiled from
#: the same source
mix_gpu = device_twin(mix)


@cuda.jit
def keys_kernel(n, seed, key):
    """Seeded 63-bit keys, one per vertex (ties of the matching and of the move selection)."""
    v = cuda.grid(1)
    if v < n:
        s = mix_gpu(np.uint64(seed) + np.uint64(0x9E3779B97F4A7C15))
        key[v] = np.int64(mix_gpu(s ^ np.uint64(v)) >> np.uint64(1))
