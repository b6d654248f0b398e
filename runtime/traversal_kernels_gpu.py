"""numba.cuda twins of the traversal kernels (BS, EP, WD, NS, HP, delta-stepping, DO-BFS).

Each kernel is equivalent to the CPU code named in its docstring
(`runtime.traversal_kernels`); the host loops that launch them are in
`runtime.traversal_gpu`, the scans and binary search they share in
`runtime.primitives_gpu`. Device helpers read no globals except the compile-time
size of the shared push buffer (`runtime.config.SHARED_PUSH`). Without a GPU
these kernels run under numba's CUDA simulator (``NUMBA_ENABLE_CUDASIM=1``),
which the test suite uses.
"""

import math

from numba import cuda
from numba import int64 as nb_int64

from .config import SHARED_PUSH
from .primitives_gpu import _upper_bound

# --------------------------------------------------------------------------
# worklists: block-aggregated pushes
# --------------------------------------------------------------------------


@cuda.jit(device=True)
def _claim(v, it, stamp):
    """True for the first push of ``v`` in iteration ``it`` (stamp[v] < it before)."""
    return cuda.atomic.max(stamp, v, it) < it


#: the block buffer: [0] entries staged, [1] the block's base in the global worklist, then entries
_PUSH_SLOTS = SHARED_PUSH + 2


@cuda.jit(device=True)
def _open(sbuf):
    """Start the block's push buffer (every thread of the block calls it)."""
    if cuda.threadIdx.x == 0:
        sbuf[0] = 0
    cuda.syncthreads()


@cuda.jit(device=True)
def _stage(v, sbuf, nxt, count):
    """Append ``v`` to the block's shared buffer (one shared atomic); when the
    buffer is full, straight to the global worklist (one global atomic)."""
    p = cuda.atomic.add(sbuf, 0, 1)
    if p < SHARED_PUSH:
        sbuf[2 + p] = v
    else:
        nxt[cuda.atomic.add(count, 0, 1)] = v


@cuda.jit(device=True)
def _flush(sbuf, nxt, count):
    """Copy the block's buffer to the global worklist with one global atomic.

    Every thread of the block must call it (it synchronises the block).
    """
    cuda.syncthreads()
    tid = cuda.threadIdx.x
    filled = min(sbuf[0], SHARED_PUSH)
    if tid == 0:
        sbuf[1] = cuda.atomic.add(count, 0, filled)
    cuda.syncthreads()
    i = tid
    while i < filled:
        nxt[sbuf[1] + i] = sbuf[2 + i]
        i += cuda.blockDim.x


@cuda.jit(device=True)
def _relax(u, j, indices, weights, dist):
    """``atomicMin(dist[v], dist[u] + w)``; returns v when it improved, else -1."""
    v = indices[j]
    nd = dist[u] + weights[j]
    if nd < dist[v]:
        old = cuda.atomic.min(dist, v, nd)
        if nd < old:
            return v
    return -1


@cuda.jit(device=True)
def _relax_claim(u, j, indices, weights, dist, it, stamp):
    """`_relax` edge ``j`` of ``u``; v when it improved and this is its first push of
    iteration ``it`` (`_claim`), else -1: what enters the next worklist."""
    v = _relax(u, j, indices, weights, dist)
    if v >= 0 and _claim(v, it, stamp):
        return v
    return -1


# --------------------------------------------------------------------------
# BS / NS / HP (node-based)
# --------------------------------------------------------------------------


@cuda.jit
def bs_kernel(indptr, indices, weights, dist, wl, size, it, stamp, nxt, count, work):
    """BS: one thread per worklist node relaxes all its out-edges (= `sssp_bs`)."""
    sbuf = cuda.shared.array(_PUSH_SLOTS, dtype=nb_int64)
    _open(sbuf)
    i = cuda.grid(1)
    if i < size:
        u = wl[i]
        lo = indptr[u]
        hi = indptr[u + 1]
        cuda.atomic.add(work, 0, hi - lo)
        for j in range(lo, hi):
            v = _relax_claim(u, j, indices, weights, dist, it, stamp)
            if v >= 0:
                _stage(v, sbuf, nxt, count)
    _flush(sbuf, nxt, count)


@cuda.jit(device=True)
def _append(v, which, a0, a1, counts, slot):
    """Append ``v`` to ``a0`` (``which`` 0) or ``a1`` (1) at the position ``counts[slot]``
    reserves: the kernels' worklists come in pairs whose roles alternate."""
    p = cuda.atomic.add(counts, slot, 1)
    if which == 0:
        a0[p] = v
    else:
        a1[p] = v


@cuda.jit(device=True)
def _pick(which, a0, a1, k):
    """``a0[k]`` (``which`` 0) or ``a1[k]`` (1)."""
    return a0[k] if which == 0 else a1[k]


@cuda.jit(device=True)
def _group_width():
    """Threads that share one node's edges in the resident loop: a warp (32), or
    1 (a thread per node) when the block is not a whole number of warps."""
    return 32 if cuda.blockDim.x % 32 == 0 else 1


@cuda.jit(device=True)
def _resident_level(indptr, indices, weights, dist, wl, nxt, stamp, counts, size, level, it0,
                    rank, total, width):
    """One level of the device-resident loop, run by thread ``rank`` of the ``total``
    that meet at its barrier (a block's or the grid's): groups of ``width`` lanes share a
    frontier node's edges, widened (powers of two, up to ``total``) while the frontier has
    fewer nodes than groups, so a lone hub's row is shared by every thread. Pushes count
    in ``counts[level % 3]``; the counter of the next level is reset here, a level ahead
    (it was last read at the end of level - 2, and every thread has passed a barrier
    since), so no reset races a read. Returns (edges this thread examined, the group
    width). Same relaxation and claims as `bs_kernel` (iteration ``it0 + level``)."""
    w = width
    while 2 * w <= total and 2 * w * size <= total:
        w *= 2
    lane = rank % w
    group = rank // w
    groups = total // w
    c = level % 3
    if rank == 0:
        counts[(level + 1) % 3] = 0
    it = it0 + level
    side = level % 2  # 0: wl -> nxt, 1: nxt -> wl
    mine = 0
    k = group
    while k < size and group < groups:
        u = _pick(side, wl, nxt, k)
        lo = indptr[u]
        hi = indptr[u + 1]
        if lane == 0:
            mine += hi - lo
        j = lo + lane
        while j < hi:
            v = _relax_claim(u, j, indices, weights, dist, it, stamp)
            if v >= 0:
                _append(v, 1 - side, wl, nxt, counts, c)
            j += w
        k += groups
    return mine, w


@cuda.jit(device=True)
def _resident_done(work, mine, state, rank, size, level, widest):
    """End of a resident launch: each thread's examined edges into ``work`` (one atomic
    a thread), and (frontier size, levels run, the widest group so far) into ``state``."""
    if mine > 0:
        cuda.atomic.add(work, 0, mine)
    if rank == 0:
        state[0] = size
        state[1] = level
        state[2] = max(state[2], widest)


@cuda.jit
def resident_levels_kernel(indptr, indices, weights, dist, wl, nxt, size0, it0, max_levels, cap,
                           stamp, counts, work, state):
    """Up to ``max_levels`` BS iterations in ONE cooperative launch, while the
    frontier holds at most ``cap`` nodes: the device-resident loop's grid tier. Every
    warp of the grid takes a frontier node at a time and its 32 lanes share the node's
    edges (`_resident_level`: wider groups on a frontier of fewer nodes than warps); the
    grid synchronises (cooperative groups) between levels, so a level costs a grid
    barrier instead of a launch and a blocking host read. The worklists alternate
    between ``wl`` and ``nxt`` (the input is in ``wl``; after an odd number of levels
    the frontier is in ``nxt``); the host zeroes ``counts[0]``. ``state`` gets (frontier
    size, levels run, the widest group so far); each thread adds its examined edges to
    ``work`` once, at the end. The result is the fixed point every strategy reaches."""
    g = cuda.cg.this_grid()
    width = _group_width()
    rank = cuda.grid(1)
    total = cuda.gridsize(1)
    size = size0
    level = 0
    mine = 0
    widest = width
    while level < max_levels and size > 0 and size <= cap:
        m, w = _resident_level(indptr, indices, weights, dist, wl, nxt, stamp, counts, size,
                               level, it0, rank, total, width)
        mine += m
        widest = max(widest, w)
        g.sync()
        size = counts[level % 3]
        level += 1
    _resident_done(work, mine, state, rank, size, level, widest)


@cuda.jit
def block_levels_kernel(indptr, indices, weights, dist, wl, nxt, size0, it0, max_levels, cap,
                        width, stamp, work, state):
    """Up to ``max_levels`` BS iterations in a launch of ONE block, while the frontier
    holds at most ``cap`` nodes: the first tier of the device-resident loop, for the
    frontiers of a few hundred nodes that grids, roads and paths have level after level.
    A block barrier (``syncthreads``) ends a level instead of a grid barrier, the push
    counters are shared memory, and groups of ``width`` lanes (1, 2, 4, ... 32: sized to
    the mean degree by the host, widened on small frontiers) share a frontier node's
    edges (`_resident_level`). Worklists, ``work`` and ``state`` as
    `resident_levels_kernel`."""
    counts = cuda.shared.array(3, dtype=nb_int64)
    tid = cuda.threadIdx.x
    nth = cuda.blockDim.x
    if tid == 0:
        counts[0] = 0
    cuda.syncthreads()
    size = size0
    level = 0
    mine = 0
    widest = width
    while level < max_levels and size > 0 and size <= cap:
        m, w = _resident_level(indptr, indices, weights, dist, wl, nxt, stamp, counts, size,
                               level, it0, tid, nth, width)
        mine += m
        widest = max(widest, w)
        cuda.syncthreads()
        size = counts[level % 3]
        level += 1
    _resident_done(work, mine, state, tid, size, level, widest)


@cuda.jit
def ns_kernel(indptr2, indices2, weights2, child_ptr, children, n, dist2, wl, size, it, stamp,
              nxt, count, work):
    """NS: BS over the split graph; an improved parent hands its distance to
    its children (atomicMin), which become active (= `sssp_ns`)."""
    sbuf = cuda.shared.array(_PUSH_SLOTS, dtype=nb_int64)
    _open(sbuf)
    i = cuda.grid(1)
    if i < size:
        u = wl[i]
        lo = indptr2[u]
        hi = indptr2[u + 1]
        cuda.atomic.add(work, 0, hi - lo)
        for j in range(lo, hi):
            v = _relax(u, j, indices2, weights2, dist2)
            if v >= 0:
                if _claim(v, it, stamp):
                    _stage(v, sbuf, nxt, count)
                nd = dist2[v]
                for q in range(child_ptr[v], child_ptr[v + 1]):
                    c = children[q]
                    if nd < dist2[c]:
                        old = cuda.atomic.min(dist2, c, nd)
                        if nd < old and _claim(c, it, stamp):
                            _stage(c, sbuf, nxt, count)
    _flush(sbuf, nxt, count)


@cuda.jit
def hp_kernel(indptr, indices, weights, dist, sub, ssize, done, mdt, it, stamp, nxt, count, sub2,
              count2, work):
    """HP sub-iteration: each remaining node relaxes at most ``mdt`` of its
    unprocessed edges; nodes with edges left go to ``sub2`` (= `sssp_hp`)."""
    sbuf = cuda.shared.array(_PUSH_SLOTS, dtype=nb_int64)
    _open(sbuf)
    i = cuda.grid(1)
    if i < ssize:
        u = sub[i]
        lo = indptr[u] + done[u]
        hi = min(indptr[u + 1], lo + mdt)
        cuda.atomic.add(work, 0, hi - lo)
        for j in range(lo, hi):
            v = _relax_claim(u, j, indices, weights, dist, it, stamp)
            if v >= 0:
                _stage(v, sbuf, nxt, count)
        done[u] += hi - lo
        if hi < indptr[u + 1]:
            sub2[cuda.atomic.add(count2, 0, 1)] = u
    _flush(sbuf, nxt, count)


@cuda.jit
def reset_done_kernel(wl, size, done):
    i = cuda.grid(1)
    if i < size:
        done[wl[i]] = 0


# --------------------------------------------------------------------------
# Delta-stepping SSSP (near/far), the whole algorithm in one cooperative grid
# --------------------------------------------------------------------------

#: slots of `delta_kernel`'s integer state (host <-> device between launches)
D_SIZE, D_NFAR, D_IT, D_MOVES, D_GEN, D_CUR, D_FPAR, D_DONE, D_SLOTS = 0, 1, 2, 3, 4, 5, 6, 7, 8


@cuda.jit
def delta_kernel(indptr, indices, weights, dist, done, wl0, wl1, far0, far1, stamp, fstamp,
                 counts, farcount, fmin, istate, fstate, delta, max_gens, work):
    """Delta-stepping with near/far worklists (= `sssp_delta`), device-resident:
    near levels, the threshold moves and the far splits all run in one
    cooperative launch, separated by grid barriers, for up to ``max_gens``
    barrier-separated phases; the host reads the state once per launch.

    A near level: a thread per node u of the near worklist (skipped when
    dist[u] >= done[u]: processed at this distance already; a thread, not a
    warp, so that the test and the write of done[u] are one thread's: lanes
    could disagree, and the road-like graphs Delta-stepping is for have small
    degrees); an improved v below the threshold enters the next near worklist
    once per level (stamp 2 x it), one at or above it enters the far pile once
    per threshold epoch (fstamp = moves). When the near worklist empties: the
    smallest live far distance (atomic min), the threshold moves past empty
    buckets (the CPU rule), and the far pile splits into near (stamp 2 x it -
    1, between the levels' claims) and the kept pile, deduplicated again. Counters: near pushes of phase
    g go to counts[g % 3] (reset a phase ahead), the far piles count in
    farcount[parity], the minimum in fmin[moves % 2]. ``istate`` (`D_*` slots)
    and ``fstate[0]`` (the threshold) carry everything between launches."""
    g = cuda.cg.this_grid()
    rank = cuda.grid(1)
    threads = cuda.gridsize(1)
    size = istate[D_SIZE]
    nfar = istate[D_NFAR]
    it = istate[D_IT]
    moves = istate[D_MOVES]
    gen = istate[D_GEN]
    cur = istate[D_CUR]
    fpar = istate[D_FPAR]
    threshold = fstate[0]
    finished = 0
    steps = 0
    while steps < max_gens:
        if size == 0 and nfar == 0:
            finished = 1
            break
        if rank == 0:
            counts[(gen + 1) % 3] = 0
        if size > 0:  # one near level: wl[cur] -> wl[1 - cur], far[fpar] grows
            claim = 2 * it
            k = rank
            while k < size:
                u = _pick(cur, wl0, wl1, k)
                du = dist[u]
                if du < done[u]:
                    done[u] = du
                    cuda.atomic.add(work, 0, indptr[u + 1] - indptr[u])
                    for j in range(indptr[u], indptr[u + 1]):
                        v = indices[j]
                        nd = du + weights[j]
                        if nd < dist[v] and nd < cuda.atomic.min(dist, v, nd):
                            if nd < threshold:
                                if _claim(v, claim, stamp):
                                    _append(v, 1 - cur, wl0, wl1, counts, gen % 3)
                            elif _claim(v, moves, fstamp):
                                _append(v, fpar, far0, far1, farcount, fpar)
                k += threads
            g.sync()
            size = counts[gen % 3]
            nfar = farcount[fpar]
            cur = 1 - cur
            it += 1
            gen += 1
            steps += 1
            continue
        # the near worklist is empty: the smallest live far distance
        if rank == 0:
            farcount[1 - fpar] = 0
        k = rank
        while k < nfar:
            v = _pick(fpar, far0, far1, k)
            if dist[v] < done[v]:
                cuda.atomic.min(fmin, moves % 2, dist[v])
            k += threads
        g.sync()
        gen += 1
        steps += 1
        lowest = fmin[moves % 2]
        if lowest == math.inf:
            finished = 1  # every far entry was stale
            break
        threshold = max(threshold + delta, (math.floor(lowest / delta) + 1.0) * delta)
        moves += 1
        if rank == 0:
            counts[(gen + 1) % 3] = 0
            fmin[moves % 2] = math.inf  # for the next move (its slot was read a phase ago)
        claim = 2 * it - 1  # between the last level's (2 it - 2) and the next one's (2 it)
        k = rank
        while k < nfar:  # the split: live entries under the threshold -> near, others kept
            v = _pick(fpar, far0, far1, k)
            dv = dist[v]
            if dv < done[v]:
                if dv < threshold:
                    if _claim(v, claim, stamp):
                        _append(v, cur, wl0, wl1, counts, gen % 3)
                elif _claim(v, moves, fstamp):
                    _append(v, 1 - fpar, far0, far1, farcount, 1 - fpar)
            k += threads
        g.sync()
        size = counts[gen % 3]
        fpar = 1 - fpar
        nfar = farcount[fpar]
        gen += 1
        steps += 1
    if rank == 0:
        istate[D_SIZE] = size
        istate[D_NFAR] = nfar
        istate[D_IT] = it
        istate[D_MOVES] = moves
        istate[D_GEN] = gen
        istate[D_CUR] = cur
        istate[D_FPAR] = fpar
        istate[D_DONE] = finished
        fstate[0] = threshold


# --------------------------------------------------------------------------
# DO: direction-optimising BFS (Beamer et al.) on hop levels
# --------------------------------------------------------------------------


@cuda.jit(device=True)
def _do_totals(acc, examined, out_deg, in_deg):
    """Add a thread's tallies to ``acc[1:4]`` (edges examined, the new frontier's
    out-degrees and in-degrees), one atomic each and only when non-zero."""
    if examined:
        cuda.atomic.add(acc, 1, examined)
    if out_deg:
        cuda.atomic.add(acc, 2, out_deg)
    if in_deg:
        cuda.atomic.add(acc, 3, in_deg)


@cuda.jit
def do_top_down_kernel(indptr, indices, rindptr, level, wl, size, depth, nxt, acc):
    """DO top-down step (= the top-down branch of `bfs_do`): a warp per frontier
    node, its lanes sharing the out-edges; an unvisited neighbour is claimed with
    one compare-and-swap (-1 -> depth + 1), so it enters the next frontier once
    (block-aggregated pushes counted in ``acc[0]``)."""
    sbuf = cuda.shared.array(_PUSH_SLOTS, dtype=nb_int64)
    _open(sbuf)
    width = _group_width()
    lane = cuda.threadIdx.x % width
    groups = cuda.gridsize(1) // width
    examined = 0
    out_deg = 0
    in_deg = 0
    k = cuda.grid(1) // width
    while k < size:
        u = wl[k]
        j = indptr[u] + lane
        hi = indptr[u + 1]
        while j < hi:
            v = indices[j]
            examined += 1
            if level[v] < 0 and cuda.atomic.cas(level, v, -1, depth + 1) == -1:
                _stage(v, sbuf, nxt, acc)
                out_deg += indptr[v + 1] - indptr[v]
                in_deg += rindptr[v + 1] - rindptr[v]
            j += width
        k += groups
    _flush(sbuf, nxt, acc)
    _do_totals(acc, examined, out_deg, in_deg)


@cuda.jit
def do_bottom_up_kernel(rindptr, rindices, indptr, level, n, depth, nxt, acc):
    """DO bottom-up step (= `_bottom_up`): every unvisited vertex scans its in-edges
    for a parent on level ``depth`` and stops at the first; found vertices join
    the next frontier (``nxt``, counted in ``acc[0]``). A vertex written this
    step holds depth + 1, never ``depth``, so it cannot serve as a parent of the
    same step."""
    sbuf = cuda.shared.array(_PUSH_SLOTS, dtype=nb_int64)
    _open(sbuf)
    examined = 0
    out_deg = 0
    in_deg = 0
    v = cuda.grid(1)
    stride = cuda.gridsize(1)
    while v < n:
        if level[v] < 0:
            lo = rindptr[v]
            hi = rindptr[v + 1]
            for j in range(lo, hi):
                examined += 1
                if level[rindices[j]] == depth:
                    level[v] = depth + 1
                    _stage(v, sbuf, nxt, acc)
                    out_deg += indptr[v + 1] - indptr[v]
                    in_deg += hi - lo
                    break
        v += stride
    _flush(sbuf, nxt, acc)
    _do_totals(acc, examined, out_deg, in_deg)


# --------------------------------------------------------------------------
# EP (edge-based)
# --------------------------------------------------------------------------


@cuda.jit
def ep_kernel(indptr, indices, weights, src_of, dist, wl, size, it, stamp, nxt, count, chunking,
              reservations):
    """EP: the worklist holds edges, dealt to the grid's threads round-robin;
    an improved node reserves its out-edges with one atomicAdd (work chunking)
    or one per edge (= `sssp_ep`)."""
    start = cuda.grid(1)
    stride = cuda.gridsize(1)
    k = start
    while k < size:
        j = wl[k]
        v = _relax_claim(src_of[j], j, indices, weights, dist, it, stamp)
        if v >= 0:
            lo = indptr[v]
            d = indptr[v + 1] - lo
            if chunking:
                base = cuda.atomic.add(count, 0, d)
                cuda.atomic.add(reservations, 0, 1)
                for q in range(d):
                    nxt[base + q] = lo + q
            else:
                for q in range(d):
                    nxt[cuda.atomic.add(count, 0, 1)] = lo + q
                cuda.atomic.add(reservations, 0, d)
        k += stride


@cuda.jit
def src_of_kernel(indptr, src_of, n):
    """``src_of[j]``: the node owning CSR position ``j`` (COO sources for EP)."""
    u = cuda.grid(1)
    if u < n:
        for j in range(indptr[u], indptr[u + 1]):
            src_of[j] = u


# --------------------------------------------------------------------------
# WD (workload decomposition) and the library kernels it uses
# --------------------------------------------------------------------------


@cuda.jit
def worklist_degrees_kernel(indptr, wl, size, done, deg):
    """``deg[k]``: unprocessed out-degree of worklist node ``k`` (= `worklist_degrees`)."""
    k = cuda.grid(1)
    if k < size:
        u = wl[k]
        deg[k] = indptr[u + 1] - indptr[u] - done[u]

@cuda.jit
def wd_kernel(indptr, indices, weights, dist, wl, size, scan, done, per, total, it, stamp, nxt,
              count, work):
    """WD: thread t relaxes edges ``[t * per, (t + 1) * per)`` of the worklist's
    concatenated edge lists, crossing node boundaries (= `_wd_iteration`)."""
    sbuf = cuda.shared.array(_PUSH_SLOTS, dtype=nb_int64)
    _open(sbuf)
    t = cuda.grid(1)
    start = t * per
    if start < total:
        stop = min(start + per, total)
        k = _upper_bound(scan, size, start)
        e = start
        cuda.atomic.add(work, 0, stop - start)
        while e < stop:
            u = wl[k]
            base = scan[k] - (indptr[u + 1] - indptr[u] - done[u])
            j = indptr[u] + done[u] + (e - base)
            upto = min(stop, scan[k])
            while e < upto:
                v = _relax_claim(u, j, indices, weights, dist, it, stamp)
                if v >= 0:
                    _stage(v, sbuf, nxt, count)
                e += 1
                j += 1
            k += 1
    _flush(sbuf, nxt, count)
