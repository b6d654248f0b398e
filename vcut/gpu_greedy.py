"""The greedy family's batched stream on a GPU, in two forms.

**Rounds** (the default, `greedy_rounds_gpu`): the batches apply in parallel rounds
(`vcut.greedy_rounds`, whose CPU twin gives the same assignment), all on the device: one
cooperative launch runs every round of the batches of about `CHUNK` edges, its phases
separated by grid barriers, so the host waits once per launch, not once per batch.
Loads are integer quanta, so the atomics' order changes no sum: deterministic.

**Recheck** (`greedy_batched_gpu`, `vcut.greedy_kernels.greedy_batched`'s device form).
Per batch of B edges: one launch decides every edge (a thread per edge,
`vcut.greedy_kernels.decide_dense` compiled for the device) against the replica
sets, loads and unassigned-edge counts frozen on the device at the batch's
start; the B choices come back to the host, which applies them in stream
order (`vcut.greedy_kernels.apply_batch`: the same pass as the CPU's, with its
recheck); the rows of the vertices the batch touched, their counts and the
loads go back up (a scatter launch). The decisions are pure functions of the
frozen state, so the assignment is the CPU batched stream's exactly, whatever
the threads' order: deterministic, and B = 1 is the sequential stream.

The decide functions are the CPU kernel's own Python source compiled for the
device (`runtime.gpu.device_twin`), so the rules exist once.
"""

import time

import numpy as np
from numba import cuda

from numba import int64 as nb_int64

from vcut_base.errors import InputError
from vcut_base.jitcache import njit
from ir_graph.replica_kernels import lowbit
from runtime import config
from runtime.gpu import (grid_blocks, is_simulator, cooperative_blocks, device_memory, device_twin,
                         require_gpu)
from runtime.primitives_gpu import block_inclusive

from . import greedy_rounds as R
from .greedy_kernels import apply_batch, decide_dense
from .least_loaded import least_of_rows, tree_of

__all__ = ["greedy_batched_gpu", "greedy_rounds_gpu", "device_bytes", "rounds_bytes"]


_lowbit = device_twin(lowbit)
_least_of_rows = device_twin(least_of_rows, lowbit=_lowbit)
_decide = device_twin(decide_dense, least_of_rows=_least_of_rows)
_has = device_twin(R._has)
_writes = device_twin(R._writes, _has=_has)
_ready = device_twin(R._ready)
_waterfill = device_twin(R._waterfill)
_filled = device_twin(R._filled)

#: edges per cooperative launch of the rounds form (whole batches; the host publishes
#: progress and looks for a stop request between launches)
CHUNK = 1 << 21
#: most threads per block of the rounds kernel (its shared scan array)
ROUNDS_TPB = 1024
# counter slots of the rounds kernel: 0-2 pending edges left (rotating by round)
_OPEN, _REDO, _RUN, _SLOTS = 3, 4, 5, 6


@cuda.jit
def greedy_rounds_kernel(src, dst, wq, order, degree, cap, full, rule, out, A, load, rem, first,
                         dec, bits, state, hist, fill_order, quota, tiles, ctr, lo0, hi0, batch,
                         rounds):
    """The batches of ``order[lo0:hi0]``, each in up to ``rounds`` rounds of
    `vcut.greedy_rounds` (decide, ready, capacity, water-fill, apply), ONE cooperative
    launch: the steps are separated by grid barriers. ``state``: 0 pending, 1 ready,
    2 placed; ``ctr``: pending counts (rotating), open edges, re-decisions, rounds."""
    g = cuda.cg.this_grid()
    tmp = cuda.shared.array(ROUNDS_TPB, dtype=nb_int64)
    acc = cuda.shared.array(1, dtype=nb_int64)
    tid = cuda.threadIdx.x
    bd = cuda.blockDim.x
    nb = cuda.gridDim.x
    rank = cuda.grid(1)
    stride = cuda.gridsize(1)
    p = cap.shape[0]
    lo = lo0
    while lo < hi0:
        cnt = min(hi0, lo + batch) - lo
        ntiles = (cnt + bd - 1) // bd
        k = rank
        while k < cnt:
            state[k] = 0
            k += stride
        if rank == 0:
            ctr[0] = 0
        g.sync()
        r = 0
        while r < rounds:
            last = r == rounds - 1
            slot = r % 3
            if rank == 0:
                ctr[(r + 1) % 3] = 0
                ctr[_RUN] += 1
            k = rank  # 1. decide
            while k < cnt:
                if state[k] == 0:
                    e = order[lo + k]
                    u = src[e]
                    v = dst[e]
                    c = _decide(u, v, A, load, cap, full, rule, degree, rem)
                    dec[k] = c
                    b = _writes(A, u, v, c)
                    bits[k] = b
                    if r > 0:
                        cuda.atomic.add(ctr, _REDO, 1)
                    if not last:
                        if b & 1:
                            cuda.atomic.min(first, u, k)
                        if b & 2:
                            cuda.atomic.min(first, v, k)
                k += stride
            g.sync()
            k = rank  # 2. ready
            while k < cnt:
                if state[k] == 0:
                    e = order[lo + k]
                    if _ready(k, src[e], dst[e], bits[k], first, last):
                        state[k] = 1
                        if dec[k] >= 0:
                            cuda.atomic.add(hist, dec[k], wq[e])
                k += stride
            g.sync()
            k = rank  # the first writers are read: clear them
            while k < cnt:
                if state[k] <= 1:
                    e = order[lo + k]
                    first[src[e]] = R.NONE
                    first[dst[e]] = R.NONE
                k += stride
            cl = cuda.blockIdx.x  # 3. capacity, a block per cluster
            while cl < p:
                fits = load[cl] + hist[cl] < full[cl]
                if tid == 0:
                    acc[0] = 0
                cuda.syncthreads()
                if fits:
                    if tid == 0:
                        load[cl] += hist[cl]
                else:
                    running = 0
                    t = 0
                    while t < ntiles:
                        k = t * bd + tid
                        member = k < cnt and state[k] == 1 and dec[k] == cl
                        x = wq[order[lo + k]] if member else 0
                        inc, tot = block_inclusive(tmp, tid, x)
                        before = running + inc - x
                        if member:
                            if load[cl] + before < full[cl]:
                                cuda.atomic.max(acc, 0, before + x)
                            else:
                                dec[k] = -1
                        running += tot
                        t += 1
                    cuda.syncthreads()
                    if tid == 0:
                        load[cl] += acc[0]
                cuda.syncthreads()
                cl += nb
            g.sync()
            t = cuda.blockIdx.x  # 4. the open edges' weight per tile
            while t < ntiles:
                k = t * bd + tid
                is_open = k < cnt and state[k] == 1 and dec[k] < 0
                inc, tot = block_inclusive(tmp, tid, wq[order[lo + k]] if is_open else 0)
                inc, opened = block_inclusive(tmp, tid, 1 if is_open else 0)
                if tid == 0:
                    tiles[t] = tot
                    if opened > 0:
                        cuda.atomic.add(ctr, _OPEN, opened)
                t += nb
            g.sync()
            if cuda.blockIdx.x == 0:  # tile offsets, the water level; the histogram is read
                base = 0
                t = 0
                while t < ntiles:
                    x = tiles[t + tid] if t + tid < ntiles else 0
                    inc, tot = block_inclusive(tmp, tid, x)
                    if t + tid < ntiles:
                        tiles[t + tid] = base + inc - x
                    base += tot
                    t += bd
                if tid == 0:
                    if ctr[_OPEN] > 0:
                        _waterfill(load, cap, base, fill_order, quota)
                    for j in range(p):
                        hist[j] = 0
            g.sync()
            if ctr[_OPEN] > 0:  # 5. water-fill (the same value in every thread)
                t = cuda.blockIdx.x
                while t < ntiles:
                    k = t * bd + tid
                    is_open = k < cnt and state[k] == 1 and dec[k] < 0
                    x = wq[order[lo + k]] if is_open else 0
                    inc, tot = block_inclusive(tmp, tid, x)
                    if is_open:
                        c = _filled(tiles[t] + inc - x, fill_order, quota)
                        dec[k] = c
                        cuda.atomic.add(load, c, x)
                    t += nb
            g.sync()
            k = rank  # 6. apply
            while k < cnt:
                if state[k] == 1:
                    e = order[lo + k]
                    u = src[e]
                    v = dst[e]
                    c = dec[k]
                    out[e] = c
                    bit = np.uint64(1) << np.uint64(c % 64)
                    cuda.atomic.or_(A, (u, c // 64), bit)
                    cuda.atomic.or_(A, (v, c // 64), bit)
                    cuda.atomic.sub(rem, u, 1)
                    cuda.atomic.sub(rem, v, 1)
                    state[k] = 2
                elif state[k] == 0:
                    cuda.atomic.add(ctr, slot, 1)
                k += stride
            if rank == 0:
                ctr[_OPEN] = 0
            g.sync()
            if ctr[slot] == 0:
                break
            r += 1
        lo += batch


@cuda.jit
def greedy_decide_kernel(src, dst, order, lo, count, A, load, cap, full, rule, degree, rem, dec):
    """Thread k: the frozen choice of edge ``order[lo + k]`` into ``dec[k]``."""
    k = cuda.grid(1)
    if k < count:
        e = order[lo + k]
        dec[k] = _decide(src[e], dst[e], A, load, cap, full, rule, degree, rem)


@cuda.jit
def greedy_scatter_kernel(verts, rows, counts, count, A, rem):
    """Thread i: vertex ``verts[i]``'s replica row and unassigned-edge count from the host."""
    i = cuda.grid(1)
    if i < count:
        v = verts[i]
        for w in range(A.shape[1]):
            A[v, w] = rows[i, w]
        rem[v] = counts[i]


@njit(cache=True, nogil=True)
def _touched(src, dst, order, lo, hi, mark, verts):
    """The distinct endpoints of the batch ``order[lo:hi]`` into ``verts``; how many.
    ``mark`` (per vertex, -1 initially) is left with the batch's ``lo``."""
    c = 0
    for k in range(lo, hi):
        e = order[k]
        for x in (src[e], dst[e]):
            if mark[x] != lo:
                mark[x] = lo
                verts[c] = x
                c += 1
    return c


def device_bytes(n, m, words, batch):
    """Device memory of the batched stream: ends and stream order (3 m int64), the
    replica rows (n x words uint64), degrees and counts (2 n), the batch's choices
    and its scatter buffers (B + 2 B (words + 2))."""
    b = min(batch, max(m, 1))
    return 8 * (3 * m + n * words + 2 * n + b + 2 * b * (words + 2))


def greedy_batched_gpu(src, dst, weight, order, degree, cap, full, rule, out, A, batch, recheck,
                       counter):
    """`vcut.greedy_kernels.greedy_batched` with the decide step on the GPU; the same
    arguments and result ``(loads, edges decided again)``, plus ``info`` (seconds on
    the device's launches and transfers, launches)."""
    cu = require_gpu()
    n, words = A.shape
    m = order.shape[0]
    p = cap.shape[0]
    need = device_bytes(n, m, words, batch)
    have = device_memory()
    if need > have:
        raise InputError(f"--device gpu: the batched stream needs {need / 2**20:,.1f} MiB of "
                         f"device memory, {have / 2**20:,.1f} MiB are free; use --device cpu "
                         "or a smaller --batch")
    load = np.zeros(p, dtype=np.float64)
    rem = degree.astype(np.int64)
    size, tree = tree_of(load, cap)
    b = max(1, min(batch, m))

    def up(a):
        return cu.to_device(np.ascontiguousarray(a))

    d_src, d_dst, d_order = up(src.astype(np.int64)), up(dst.astype(np.int64)), up(order)
    d_A, d_load, d_rem = up(A), up(load), up(rem)
    d_cap, d_full, d_degree = up(cap), up(full), up(degree.astype(np.int64))
    d_dec = cu.device_array(b, dtype=np.int64)
    d_verts = cu.device_array(2 * b, dtype=np.int64)
    d_rows = cu.device_array((2 * b, words), dtype=np.uint64)
    d_counts = cu.device_array(2 * b, dtype=np.int64)
    mark = np.full(n, -1, dtype=np.int64)
    verts = np.empty(2 * b, dtype=np.int64)
    launches = 0
    device_s = 0.0
    redo = 0
    for lo in range(0, m, b):
        counter[0] = lo
        if counter[1] != 0:
            break
        hi = min(m, lo + b)
        t = time.perf_counter()
        greedy_decide_kernel[grid_blocks(hi - lo)](d_src, d_dst, d_order, lo, hi - lo, d_A, d_load,
                                                d_cap, d_full, rule, d_degree, d_rem, d_dec)
        dec = d_dec[:hi - lo].copy_to_host()
        launches += 1
        device_s += time.perf_counter() - t
        redo += apply_batch(src, dst, weight, order, lo, hi, dec, degree, cap, full, rule, out,
                            A, load, rem, tree, size, recheck)
        if hi == m:
            break
        c = _touched(src, dst, order, lo, hi, mark, verts)
        t = time.perf_counter()
        d_verts[:c].copy_to_device(verts[:c])
        d_rows[:c].copy_to_device(np.ascontiguousarray(A[verts[:c]]))
        d_counts[:c].copy_to_device(rem[verts[:c]])
        d_load.copy_to_device(load)
        greedy_scatter_kernel[grid_blocks(c)](d_verts, d_rows, d_counts, c, d_A, d_rem)
        launches += 1
        device_s += time.perf_counter() - t
    if counter[1] == 0:
        counter[0] = m
    return load, redo, {"device_seconds": device_s, "launches": launches}


def rounds_bytes(n, m, words, batch, p):
    """Device memory of the rounds form: ends and stream order (3 m, int32 while n and
    m fit, else int64), weight quanta (m int64), the assignment (m int32), the replica
    rows (n x words uint64), degrees, counts and first writers (3 n), the batch's
    choices, write bits and states (3 B) and the per-cluster and per-tile scratch."""
    b = min(batch, max(m, 1))
    ids = 4 if max(n, m) < 2**31 else 8
    return 8 * (m + n * words + 3 * n + 3 * b + 4 * p + b + _SLOTS) + (3 * ids + 4) * m


def greedy_rounds_gpu(src, dst, wq, order, degree, cap, full, rule, out, A, batch, rounds,
                      counter):
    """`vcut.greedy_rounds.greedy_rounds` on the GPU (the same arguments and result), plus
    ``info``: launches (one per `CHUNK` edges), host waits, device seconds (uploads,
    launches, downloads)."""
    cu = require_gpu()
    n, words = A.shape
    m = order.shape[0]
    p = cap.shape[0]
    need = rounds_bytes(n, m, words, batch, p)
    have = device_memory()
    if need > have:
        raise InputError(f"--device gpu: the batched stream needs {need / 2**20:,.1f} MiB of "
                         f"device memory, {have / 2**20:,.1f} MiB are free; use --device cpu "
                         "or a smaller graph")
    b = max(1, min(batch, m))
    t0 = time.perf_counter()

    def up(a, dtype):
        return cu.to_device(np.ascontiguousarray(a, dtype=dtype))

    ids = np.int32 if max(n, m) < 2**31 else np.int64  # 4-byte ends and order where they fit
    d = [up(src, ids), up(dst, ids), up(wq, np.int64), up(order, ids),
         up(degree, np.int64), up(cap, np.float64), up(full, np.float64), int(rule),
         cu.device_array(m, dtype=np.int32), up(A, np.uint64), up(np.zeros(p), np.int64),
         up(degree, np.int64), up(np.full(n, R.NONE), np.int64), cu.device_array(b, np.int64),
         cu.device_array(b, np.int64), cu.device_array(b, np.int32),
         up(np.zeros(p), np.int64), cu.device_array(p, np.int64), cu.device_array(p, np.int64)]
    tpb = min(config.THREADS_PER_BLOCK, ROUNDS_TPB)
    d += [cu.device_array(-(-b // tpb), np.int64), up(np.zeros(_SLOTS), np.int64)]
    blocks = cooperative_blocks(greedy_rounds_kernel, d + [0, 0, b, int(rounds)], tpb)
    if not is_simulator():
        blocks = max(1, min(blocks, -(-b // tpb)))
    step = max(1, CHUNK // b) * b
    launches = 0
    for lo in range(0, m, step):
        counter[0] = lo
        if counter[1] != 0:
            break
        greedy_rounds_kernel[blocks, tpb](*d, lo, min(m, lo + step), b, int(rounds))
        launches += 1
        cu.synchronize()
    out[:] = d[8].copy_to_host()
    A[:] = d[9].copy_to_host()
    load = d[10].copy_to_host()
    ctr = d[-1].copy_to_host()
    if counter[1] == 0:
        counter[0] = m
    return load, int(ctr[_REDO]), int(ctr[_RUN]), {
        "device_seconds": time.perf_counter() - t0, "launches": launches, "host_waits": launches,
        "blocks": blocks}


def default_batch(m):
    """The GPU's batch when none is given: 65,536 edges (a few hundred blocks of
    decisions per launch), or the whole stream when it is shorter."""
    return int(max(1, min(m, 1 << 16)))

