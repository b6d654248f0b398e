"""Numba kernels of SPAC's split-and-connect transform (`vcut.spac`): the pairs of the
transformed graph (`split_pairs`), their symmetric CSR (`symmetric_csr`) and the cut of
its auxiliary edges (`aux_cut`)."""

import numpy as np

from vcut_base.jitcache import njit

__all__ = ["split_pairs", "symmetric_csr", "aux_cut"]


@njit(cache=True)
def split_pairs(src, dst, n, contracted, cycles, dominant_weight):
    """Edges of the split-and-connect graph as pairs ``(a, b, w)``.

    Clones of a vertex are taken in edge order (a counting sort over the
    vertices, O(n + m)); consecutive clones are joined by an auxiliary edge of
    weight 1, the last and the first too when the vertex has degree >= 3 and
    ``cycles``. In the split form clone ``2e`` is edge ``e``'s first endpoint,
    ``2e + 1`` its second, and each pair gets a dominant edge; in the
    contracted form the clone of edge ``e`` is vertex ``e``. Returns
    ``(a, b, w, n_aux)``.
    """
    m = src.shape[0]
    ptr = np.zeros(n + 1, dtype=np.int64)
    for e in range(m):
        ptr[src[e] + 1] += 1
        ptr[dst[e] + 1] += 1
    for v in range(n):
        ptr[v + 1] += ptr[v]
    pos = ptr[:-1].copy()
    clone = np.empty(2 * m, dtype=np.int64)
    for e in range(m):
        for side in range(2):
            v = src[e] if side == 0 else dst[e]
            clone[pos[v]] = e if contracted else 2 * e + side
            pos[v] += 1
    cap = 2 * m + (0 if contracted else m)
    a = np.empty(cap, dtype=np.int64)
    b = np.empty(cap, dtype=np.int64)
    w = np.empty(cap, dtype=np.int64)
    k = 0
    for v in range(n):
        lo = ptr[v]
        hi = ptr[v + 1]
        for j in range(lo, hi - 1):
            a[k] = clone[j]
            b[k] = clone[j + 1]
            w[k] = 1
            k += 1
        if cycles and hi - lo >= 3:
            a[k] = clone[hi - 1]
            b[k] = clone[lo]
            w[k] = 1
            k += 1
    n_aux = k
    if not contracted:
        for e in range(m):
            a[k] = 2 * e
            b[k] = 2 * e + 1
            w[k] = dominant_weight
            k += 1
    return a[:k], b[:k], w[:k], n_aux


@njit(cache=True)
def symmetric_csr(a, b, w, nv):
    """CSR (xadj, adjncy, adjwgt) of the undirected edges ``(a[i], b[i], w[i])``."""
    xadj = np.zeros(nv + 1, dtype=np.int64)
    for i in range(a.shape[0]):
        xadj[a[i] + 1] += 1
        xadj[b[i] + 1] += 1
    for v in range(nv):
        xadj[v + 1] += xadj[v]
    pos = xadj[:-1].copy()
    adjncy = np.empty(2 * a.shape[0], dtype=np.int64)
    adjwgt = np.empty(2 * a.shape[0], dtype=np.int64)
    for i in range(a.shape[0]):
        adjncy[pos[a[i]]] = b[i]
        adjwgt[pos[a[i]]] = w[i]
        pos[a[i]] += 1
        adjncy[pos[b[i]]] = a[i]
        adjwgt[pos[b[i]]] = w[i]
        pos[b[i]] += 1
    return xadj, adjncy, adjwgt


@njit(cache=True)
def aux_cut(xadj, adjncy, adjwgt, parts):
    """Edges of weight 1 (Ψ's auxiliary edges) whose ends lie in different parts, each
    counted once (at its lower end)."""
    cut = 0
    for u in range(xadj.shape[0] - 1):
        for j in range(xadj[u], xadj[u + 1]):
            v = adjncy[j]
            if adjwgt[j] == 1 and u < v and parts[u] != parts[v]:
                cut += 1
    return cut
