"""Numba kernels of the multilevel partitioner's coarsening (CPU): seeded vertex keys,
heavy-edge matching, the coarse map and the contraction (twins on the GPU:
`coarsening_kernels_gpu`).

Every array here has been validated by `runtime.multilevel.graph` before it
arrives: CSR offsets ``indptr`` (int64, non-decreasing, ``indptr[0] == 0``),
neighbours ``indices`` (int64 in ``[0, n)``, no self-loops, symmetric), edge
weights ``ewgt`` and vertex weights ``vwgt`` (int64, > 0). Parts are int64 in
``[0, k)``. Random choices come from seeded integer hashes or permutations
made by the caller from ``numpy.random.default_rng(seed)``, so a run is
deterministic for a seed.
"""

import numpy as np

from vcut_base.hashing import mix
from vcut_base.jitcache import helper, njit

_M64 = np.uint64(0xFFFFFFFFFFFFFFFF)


@njit(cache=True)
def vertex_keys(n, seed):
    """Seeded random 64-bit keys, one per vertex: edge {a, b} breaks ties by
    ``key[a] ^ key[b]``, the same from both ends."""
    key = np.empty(n, np.uint64)
    s = mix(np.uint64(seed) + np.uint64(0x9E3779B97F4A7C15))
    for v in range(n):
        key[v] = mix(s ^ np.uint64(v))
    return key


@helper
def _heaviest_free(indptr, indices, ewgt, vwgt, match, key, max_vw, u):
    """``(v, w)``: u's unmatched neighbour of heaviest edge whose combined weight stays
    within ``max_vw`` (ties: the larger ``key[u] ^ key[v]``), -1 when there is none, and
    that edge's weight. Compiled for the GPU too (`coarsening_kernels_gpu`): ``key`` may be uint64
    (here) or int64 (there)."""
    return _heaviest_free_of(indptr, indices, ewgt, vwgt, match, key, max_vw, u, 0, 1)


@helper
def _heaviest_free_of(indptr, indices, ewgt, vwgt, match, key, max_vw, u, first, step):
    """`_heaviest_free` over the row entries ``first``, ``first + step``, ... of u (the
    GPU's block of threads for a hub takes one stride each, then reduces in this order)."""
    ku = key[u]
    bw = -1
    bh = ku ^ ku  # 0 of the keys' type (the first candidate wins on weight anyway)
    bv = -1
    for e in range(indptr[u] + first, indptr[u + 1], step):
        v = indices[e]
        if match[v] >= 0 or vwgt[u] + vwgt[v] > max_vw:
            continue
        w = ewgt[e]
        h = ku ^ key[v]
        if w > bw or (w == bw and h > bh):
            bw = w
            bh = h
            bv = v
    return bv, bw


@njit(cache=True)
def heavy_edge_matching(indptr, indices, ewgt, vwgt, max_vw, seed, rounds):
    """Heavy-edge matching by mutual proposals, then two-hop pairing of leftovers.

    Each round every unmatched vertex proposes to its unmatched neighbour of
    heaviest edge (ties by a seeded hash of the edge, the same from both
    ends) whose combined weight stays within ``max_vw``; two vertices that
    propose to each other are matched. The heaviest unmatched edge is always
    mutual, so every round with a candidate edge matches at least one pair.
    This is the GPU kernel's cross-examination run in one thread. Vertices
    still unmatched are then paired two hops apart: those whose heaviest
    neighbour is the same vertex are matched in pairs (as METIS does for the
    leaves of a star, which heavy-edge matching cannot shrink), and islands
    (vertices without edges) with each other in id order.

    Returns
    -------
    match : int64 array, ``match[match[v]] == v``; ``match[v] == v`` unmatched
    rounds_used : int
    """
    n = len(vwgt)
    match = np.full(n, -1, np.int64)
    prop = np.full(n, -1, np.int64)
    key = vertex_keys(n, seed)
    free = np.empty(n, np.int64)  # the vertices still unmatched that have an edge
    nf = 0
    for u in range(n):
        if indptr[u + 1] > indptr[u]:
            free[nf] = u
            nf += 1
    used = 0
    for r in range(rounds):
        if nf == 0:
            break
        used = r + 1
        for i in range(nf):
            u = free[i]
            # the free set only shrinks: a proposal to a vertex still free stands (no
            # heavier free neighbour can appear), and none stays none
            if r == 0 or (prop[u] >= 0 and match[prop[u]] >= 0):
                prop[u], _ = _heaviest_free(indptr, indices, ewgt, vwgt, match, key, max_vw,
                                            u)
        made = 0
        for i in range(nf):
            u = free[i]
            v = prop[u]
            if v > u and prop[v] == u:
                match[u] = v
                match[v] = u
                made += 1
        kept = 0
        for i in range(nf):  # compact: the still-unmatched, in increasing id
            u = free[i]
            if match[u] < 0:
                free[kept] = u
                kept += 1
        nf = kept
        if made == 0:
            break
    # then greedily in id order: each vertex still free takes its heaviest free neighbour
    for i in range(nf):
        u = free[i]
        if match[u] >= 0:
            continue
        bv, _ = _heaviest_free(indptr, indices, ewgt, vwgt, match, key, max_vw, u)
        if bv >= 0:
            match[u] = bv
            match[bv] = u
    # two hops: unmatched vertices grouped by their heaviest neighbour
    heavy = np.full(n, -1, np.int64)
    left = 0
    for u in range(n):
        if match[u] >= 0:
            continue
        left += 1
        bw = -1
        bv = -1
        for e in range(indptr[u], indptr[u + 1]):
            if ewgt[e] > bw:
                bw = ewgt[e]
                bv = indices[e]
        heavy[u] = bv
    if left > n // 10:
        last = np.full(n, -1, np.int64)  # per neighbour: an unmatched vertex waiting for a mate
        for u in range(n):
            c = heavy[u]
            if match[u] >= 0 or c < 0:
                continue
            w = last[c]
            if w >= 0 and vwgt[u] + vwgt[w] <= max_vw:
                match[u] = w
                match[w] = u
                last[c] = -1
            else:
                last[c] = u
    # islands (no edges) pair with each other in id order, as METIS matches them: no
    # matching reaches them, and half of an RMAT graph's vertices can be islands
    lone = -1
    for u in range(n):
        if match[u] >= 0 or indptr[u + 1] > indptr[u]:
            continue
        if lone >= 0 and vwgt[u] + vwgt[lone] <= max_vw:
            match[u] = lone
            match[lone] = u
            lone = -1
        else:
            lone = u
    for u in range(n):
        if match[u] < 0:
            match[u] = u
    return match, used


@njit(cache=True)
def mesh_like(indptr, ewgt, max_ratio):
    """Whether every edge weighs the same and no vertex has more than ``max_ratio`` times
    the mean degree (a mesh, grid or road network's unweighted level)."""
    n = len(indptr) - 1
    m = indptr[n]
    if n == 0 or m == 0:
        return False
    w = ewgt[0]
    for e in range(m):
        if ewgt[e] != w:
            return False
    most = 0
    for u in range(n):
        most = max(most, indptr[u + 1] - indptr[u])
    return most <= max_ratio * (m / n)   # in floats: most * n can pass int64


@njit(cache=True)
def coarse_map(match):
    """Cmap: the rank of min(v, match[v]) among the vertices with v <= match[v]."""
    n = len(match)
    cmap = np.empty(n, np.int64)
    c = 0
    for v in range(n):  # flag + exclusive scan
        if v <= match[v]:
            cmap[v] = c
            c += 1
    for v in range(n):
        if v > match[v]:
            cmap[v] = cmap[match[v]]
    return cmap, c


@njit(cache=True)
def contract(indptr, indices, ewgt, vwgt, match, cmap, nc):
    """The coarse graph: matched pairs merged, parallel edges added, self-loops dropped."""
    n = len(vwgt)
    cvw = np.zeros(nc, np.int64)
    for v in range(n):
        cvw[cmap[v]] += vwgt[v]
    cptr = np.zeros(nc + 1, np.int64)
    cidx = np.empty(len(indices), np.int64)
    cw = np.empty(len(indices), np.int64)
    slot = np.full(nc, -1, np.int64)  # where coarse neighbour c sits in the current list
    m = 0
    for v in range(n):
        if v > match[v]:
            continue
        c = cmap[v]
        start = m
        u = v
        for _ in range(2):
            for e in range(indptr[u], indptr[u + 1]):
                t = cmap[indices[e]]
                if t == c:
                    continue
                s = slot[t]
                if s >= start:
                    cw[s] += ewgt[e]
                else:
                    slot[t] = m
                    cidx[m] = t
                    cw[m] = ewgt[e]
                    m += 1
            if match[v] == v:
                break
            u = match[v]
        cptr[c + 1] = m
    # views: the buffers' tails past m are never touched (no copy of the level)
    return cptr, cidx[:m], cw[:m], cvw
