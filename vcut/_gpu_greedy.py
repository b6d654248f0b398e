"""The greedy family's batched stream on a GPU (`vcut._kernels.greedy_batched`'s
device form).

Per batch of B edges: one launch decides every edge (a thread per edge,
`vcut._kernels._decide_dense` compiled for the device) against the replica
sets, loads and unassigned-edge counts frozen on the device at the batch's
start; the B choices come back to the host, which applies them in stream
order (`vcut._kernels.apply_batch`: the same pass as the CPU's, with its
recheck); the rows of the vertices the batch touched, their counts and the
loads go back up (a scatter launch). The decisions are pure functions of the
frozen state, so the assignment is the CPU batched stream's exactly, whatever
the threads' order: deterministic, and B = 1 is the sequential stream.

The decide functions are the CPU kernel's own Python source compiled for the
device (`runtime._gpu.device_twin`), so the rules exist once.
"""

import time

import numpy as np
from numba import cuda

from frontend.errors import InputError
from frontend.jitcache import njit
from runtime._gpu import device_twin

from . import _kernels as K

__all__ = ["greedy_batched_gpu", "device_bytes"]


_lowbit = device_twin(K._lowbit)
_ll_rows = device_twin(K._ll_rows, _lowbit=_lowbit)
_decide = device_twin(K._decide_dense, _ll_rows=_ll_rows)


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
    """`vcut._kernels.greedy_batched` with the decide step on the GPU; the same
    arguments and result ``(loads, edges decided again)``, plus ``info`` (seconds on
    the device's launches and transfers, launches)."""
    from runtime._gpu import _blocks, device_memory, require_gpu

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
    size, tree = K._tree_of(load, cap)
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
        greedy_decide_kernel[_blocks(hi - lo)](d_src, d_dst, d_order, lo, hi - lo, d_A, d_load,
                                                d_cap, d_full, rule, d_degree, d_rem, d_dec)
        dec = d_dec[:hi - lo].copy_to_host()
        launches += 1
        device_s += time.perf_counter() - t
        redo += K.apply_batch(src, dst, weight, order, lo, hi, dec, degree, cap, full, rule, out,
                              A, load, rem, tree, size, recheck)
        if hi == m:
            break
        c = _touched(src, dst, order, lo, hi, mark, verts)
        t = time.perf_counter()
        d_verts[:c].copy_to_device(verts[:c])
        d_rows[:c].copy_to_device(np.ascontiguousarray(A[verts[:c]]))
        d_counts[:c].copy_to_device(rem[verts[:c]])
        d_load.copy_to_device(load)
        greedy_scatter_kernel[_blocks(c)](d_verts, d_rows, d_counts, c, d_A, d_rem)
        launches += 1
        device_s += time.perf_counter() - t
    if counter[1] == 0:
        counter[0] = m
    return load, redo, {"device_seconds": device_s, "launches": launches}


def default_batch(m):
    """The GPU's batch when none is given: 65,536 edges (a few hundred blocks of
    decisions per launch), or the whole stream when it is shorter."""
    return int(max(1, min(m, 1 << 16)))

