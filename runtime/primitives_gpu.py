"""numba.cuda primitives shared by the GPU kernels, and the launchers of the library ones.

The block scan (`block_inclusive`), binary search in a scan (`_upper_bound`), fills and
copies of device arrays, and the kernels of `runtime.primitives` on the device
(inclusive scan, degree histogram, WD offsets, segmented min / sum) with their
launchers, which take and return device arrays. Each kernel is equivalent to the CPU
code named in its docstring; device helpers read no globals except the compile-time
size of the scan's shared array (`runtime.config.SCAN_SHARED`).
"""

import math

import numpy as np
from numba import cuda
from numba import int64 as nb_int64

from . import config
from .config import SCAN_SHARED
from .gpu import grid_blocks

__all__ = ["inclusive_scan", "histogram", "wd_offsets", "segmented_reduce", "block_inclusive"]


# --------------------------------------------------------------------------
# binary search, scans, histogram, segmented reductions (`runtime.primitives` on the device)
# --------------------------------------------------------------------------


@cuda.jit(device=True)
def _upper_bound(scan, size, x):
    """First index k < size with scan[k] > x (= numpy.searchsorted(side='right'))."""
    lo = 0
    hi = size
    while lo < hi:
        mid = (lo + hi) // 2
        if scan[mid] > x:
            hi = mid
        else:
            lo = mid + 1
    return lo


@cuda.jit
def wd_offsets_kernel(scan, size, per, total, node_of, edge_of):
    """find_offsets: thread t's first edge ``t * per`` as (worklist index, edge
    offset in that node) by binary search in the inclusive scan (= `wd_offsets`)."""
    t = cuda.grid(1)
    start = t * per
    if start < total:
        k = _upper_bound(scan, size, start)
        node_of[t] = k
        edge_of[t] = start - (scan[k - 1] if k > 0 else 0)


@cuda.jit(device=True)
def block_inclusive(tmp, tid, x):
    """Inclusive prefix sum of ``x`` over the threads of the block (Hillis-Steele in the
    shared array ``tmp``, at least one entry per thread): ``(this thread's prefix, the
    block's total)``. Every thread of the block must call it; ``tmp`` is free again on
    return."""
    tmp[tid] = x
    cuda.syncthreads()
    off = 1
    while off < cuda.blockDim.x:
        add = tmp[tid - off] if tid >= off else 0
        cuda.syncthreads()
        tmp[tid] += add
        cuda.syncthreads()
        off *= 2
    mine = tmp[tid]
    total = tmp[cuda.blockDim.x - 1]
    cuda.syncthreads()
    return mine, total


@cuda.jit
def block_scan_kernel(x, out, sums, n):
    """Inclusive scan of each block's slice (`block_inclusive`); ``sums[b]`` = the
    block's total."""
    tmp = cuda.shared.array(SCAN_SHARED, dtype=nb_int64)
    tid = cuda.threadIdx.x
    i = cuda.blockIdx.x * cuda.blockDim.x + tid
    mine, total = block_inclusive(tmp, tid, x[i] if i < n else 0)
    if i < n:
        out[i] = mine
    if tid == cuda.blockDim.x - 1:
        sums[cuda.blockIdx.x] = total


@cuda.jit
def add_offsets_kernel(out, offsets, n):
    """``out[i] += offsets[block - 1]`` for every block but the first."""
    b = cuda.blockIdx.x
    i = b * cuda.blockDim.x + cuda.threadIdx.x
    if b > 0 and i < n:
        out[i] += offsets[b - 1]


@cuda.jit
def histogram_kernel(degrees, maxd, bins, hist):
    """Degree histogram of `choose_mdt`: degree d >= 1 in bin ceil(d * bins / maxd)."""
    i = cuda.grid(1)
    if i < degrees.shape[0]:
        d = degrees[i]
        if d > 0:
            cuda.atomic.add(hist, (d * bins + maxd - 1) // maxd, 1)


@cuda.jit
def segmented_min_kernel(values, ptr, out):
    """``out[s] = min(values[ptr[s]:ptr[s + 1]])`` (inf for an empty segment)."""
    s = cuda.grid(1)
    if s < out.shape[0]:
        best = math.inf
        for j in range(ptr[s], ptr[s + 1]):
            if values[j] < best:
                best = values[j]
        out[s] = best


@cuda.jit
def segmented_sum_kernel(values, ptr, out):
    """``out[s] = sum(values[ptr[s]:ptr[s + 1]])``."""
    s = cuda.grid(1)
    if s < out.shape[0]:
        acc = 0.0
        for j in range(ptr[s], ptr[s + 1]):
            acc += values[j]
        out[s] = acc


# --------------------------------------------------------------------------
# fills and copies of device arrays
# --------------------------------------------------------------------------


@cuda.jit
def fill_kernel(a, n, value):
    i = cuda.grid(1)
    if i < n:
        a[i] = value


@cuda.jit
def copy_kernel(src, n, dst):
    i = cuda.grid(1)
    if i < n:
        dst[i] = src[i]


# --------------------------------------------------------------------------
# launchers (device arrays in, device or host arrays out)
# --------------------------------------------------------------------------


def inclusive_scan(cuda, d_x, n, out=None):
    """Inclusive prefix sum of the first ``n`` int64 entries of device array ``d_x`` (into
    ``out`` when given: a device array of at least ``n`` entries)."""
    tpb = config.SCAN_BLOCK
    nb = max(1, math.ceil(n / tpb))
    d_out = cuda.device_array(max(n, 1), dtype=np.int64) if out is None else out
    d_sums = cuda.device_array(nb, dtype=np.int64)
    block_scan_kernel[nb, tpb](d_x, d_out, d_sums, n)
    if nb > 1:
        d_off = inclusive_scan(cuda, d_sums, nb)
        add_offsets_kernel[nb, tpb](d_out, d_off, n)
    return d_out


def histogram(cuda, degrees, bins):
    """Degree histogram of `runtime.traversal_kernels.choose_mdt` on the device."""
    maxd = int(degrees.max()) if len(degrees) else 0
    hist = np.zeros(bins + 1, dtype=np.int64)
    if maxd == 0:
        return hist, 0
    d_hist = cuda.to_device(hist)
    histogram_kernel[grid_blocks(len(degrees))](cuda.to_device(degrees.astype(np.int64)), maxd, bins,
                                            d_hist)
    return d_hist.copy_to_host(), maxd


def wd_offsets(cuda, scan, per, threads):
    """(worklist index, edge offset) of every thread's first edge (host arrays)."""
    total = int(scan[-1]) if len(scan) else 0
    node_of = cuda.to_device(np.full(threads, -1, dtype=np.int64))
    edge_of = cuda.to_device(np.full(threads, -1, dtype=np.int64))
    wd_offsets_kernel[grid_blocks(threads)](cuda.to_device(scan), len(scan), per, total, node_of,
                                        edge_of)
    return node_of.copy_to_host(), edge_of.copy_to_host()


def segmented_reduce(cuda, values, ptr, op):
    out = cuda.device_array(len(ptr) - 1, dtype=np.float64)
    kern = segmented_min_kernel if op == "min" else segmented_sum_kernel
    kern[grid_blocks(len(ptr) - 1)](cuda.to_device(np.asarray(values, dtype=np.float64)),
                                cuda.to_device(np.asarray(ptr, dtype=np.int64)), out)
    return out.copy_to_host()
