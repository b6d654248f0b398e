"""Numba kernel of `vcut.quality.canonical_graph`: a numbering of the vertices and an order
of the edges that do not depend on the input's (`vcut.quality` holds the documentation)."""

import numpy as np

from vcut_base.hashing import mix
from vcut_base.jitcache import njit
from vcut_base.sort_kernels import stable_argsort

#: the colour refinement's salt per round (times the round number, from 1) and multiplier
SALT = np.uint64(0x9E3779B97F4A7C15)
PRIME = np.uint64(0x100000001B3)


@njit(cache=True, nogil=True)
def canonical_numbering(src, dst, n, rounds):
    """``(label, order, lo, hi)``: colour refinement, ``rounds`` rounds from the degrees (each
    colour `vcut_base.hashing.mix` of the colour times `PRIME` xor the wrapping sum of the
    neighbours' colours salted by round); ranks by (colour, number); a breadth-first
    numbering from the lowest rank, neighbours in rank order, component after component
    (``label[v]``, int64[n]); the edges by (min, max) of their new numbers (``order[i]``
    the input edge at ``i``, stable); ``lo[e]`` and ``hi[e]``, the smaller and the larger
    new number of input edge ``e``'s ends. Linear in the edges but for one sort of the colours:
    rank-ordered adjacency and the edge order come from counting fills, not sorts."""
    m = src.shape[0]
    ptr = np.zeros(n + 1, dtype=np.int64)
    for e in range(m):
        ptr[src[e] + 1] += 1
        ptr[dst[e] + 1] += 1
    colour = np.empty(n, dtype=np.uint64)
    for v in range(n):
        colour[v] = mix(np.uint64(ptr[v + 1]))
        ptr[v + 1] += ptr[v]
    fill = ptr[:n].copy()
    nbr = np.empty(2 * m, dtype=np.int64)
    for e in range(m):
        u = src[e]
        v = dst[e]
        nbr[fill[u]] = v
        fill[u] += 1
        nbr[fill[v]] = u
        fill[v] += 1
    h = np.empty(n, dtype=np.uint64)
    for r in range(rounds):
        salt = SALT * np.uint64(r + 1)
        for v in range(n):
            h[v] = mix(colour[v] ^ salt)
        for v in range(n):
            around = np.uint64(0)
            for i in range(ptr[v], ptr[v + 1]):
                around += h[nbr[i]]
            colour[v] = mix((colour[v] * PRIME) ^ around)
    by = stable_argsort(colour)  # stable: ties by number
    # each vertex's neighbours in rank order: the vertices visited in rank order, each
    # appended to its neighbours' lists
    for v in range(n):
        fill[v] = ptr[v]
    ranked = np.empty(2 * m, dtype=np.int64)
    for r in range(n):
        w = by[r]
        for i in range(ptr[w], ptr[w + 1]):
            u = nbr[i]
            ranked[fill[u]] = w
            fill[u] += 1
    label = np.full(n, -1, dtype=np.int64)
    queue = np.empty(n, dtype=np.int64)
    count = 0
    head = 0
    for r in range(n):
        s = by[r]
        if label[s] >= 0:
            continue
        label[s] = count
        queue[count] = s
        count += 1
        while head < count:
            u = queue[head]
            head += 1
            for i in range(ptr[u], ptr[u + 1]):
                w = ranked[i]
                if label[w] < 0:
                    label[w] = count
                    queue[count] = w
                    count += 1
    # the edges by (min, max) new number: a stable counting sort by max, then by min
    lo = np.empty(m, dtype=np.int64)
    hi = np.empty(m, dtype=np.int64)
    for e in range(m):
        a = label[src[e]]
        b = label[dst[e]]
        lo[e] = min(a, b)
        hi[e] = max(a, b)
    order = _stable_by(lo, _stable_by(hi, np.arange(m), n), n)
    return label, order, lo, hi


@njit(cache=True, nogil=True)
def _stable_by(key, items, n):
    """``items`` (edge numbers) in the order of ``key[item]`` (each in ``0..n-1``), ties in
    their order in ``items``: a counting sort."""
    start = np.zeros(n + 1, dtype=np.int64)
    for e in items:
        start[key[e] + 1] += 1
    for v in range(n):
        start[v + 1] += start[v]
    out = np.empty(len(items), dtype=np.int64)
    for e in items:
        out[start[key[e]]] = e
        start[key[e]] += 1
    return out
