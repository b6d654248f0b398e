"""numba.cuda kernels of the multilevel partitioner's refinement: projection, loads and cut,
every vertex's best move, the selection and commit of moves (twins of
`refinement_kernels`; the host side is `runtime.multilevel.gpu`).

One thread per vertex (or per coarse vertex) throughout; every array is int64
and was validated on the host before upload (see `runtime.multilevel.graph`).
Results never depend on the threads' order: every choice is a maximum over a
total order (weights, then seeded vertex keys, then ids), and every atomic is
an addition, a maximum of distinct values, or a buffer slot whose order is
sorted away afterwards.
"""

import numpy as np
from numba import cuda

from ..gpu import device_twin
from . import jet_kernels
from .coarsening_kernels_gpu import HEAVY_PARTS, HEAVY_TPB

#: distinct neighbour parts a vertex's best move looks at (a per-thread table; parts
#: beyond the first MAXP met in its adjacency are not considered for that vertex; the
#: Jet rules' table, `jet_kernels.MAXP`)
MAXP = jet_kernels.MAXP
#: a vertex's table of its first MAXP other parts (`jet_kernels._table`), shared by the refinement
#: and Jet
_jet_table = device_twin(jet_kernels._table)


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
def cut_kernel(indptr, indices, ewgt, part, n, width, out):
    """Twice the cut (each cut edge seen from both ends): groups of ``width`` threads (a
    power of two dividing the block) take a vertex at a time over the grid and share its
    edges, and each thread adds its sum once. Width 1 is a thread per vertex, whose loop
    over a hub's row is the launch's tail on a power-law graph; a grid of
    `runtime.multilevel.gpu.CUT_WIDTH` lanes a vertex splits it."""
    lane = cuda.threadIdx.x % width
    groups = cuda.gridsize(1) // width
    s = 0
    v = cuda.grid(1) // width
    while v < n:
        p = part[v]
        for e in range(indptr[v] + lane, indptr[v + 1], width):
            if part[indices[e]] != p:
                s += ewgt[e]
        v += groups
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


_outranks = device_twin(jet_kernels._outranks)


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
