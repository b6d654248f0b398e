"""numba.cuda kernels of SPAC's split graph in contracted form on the device: the incidence
lists, every clone's neighbours, the rows of the split graph (the host side is
`runtime.multilevel.gpu`).

One thread per vertex (or per coarse vertex) throughout; every array is int64
and was validated on the host before upload (see `runtime.multilevel.graph`).
Results never depend on the threads' order: every choice is a maximum over a
total order (weights, then seeded vertex keys, then ids), and every atomic is
an addition, a maximum of distinct values, or a buffer slot whose order is
sorted away afterwards.
"""

from numba import cuda

from ..primitives_gpu import _upper_bound
from .coarsening_kernels_gpu import _heapsort

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
