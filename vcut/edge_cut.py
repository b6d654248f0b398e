"""Edge-cut baselines: vertex partitions that cut edges (METIS, CompNet-style).

The framework's evaluation compares its vertex cuts with two edge cuts; both
partition the *vertices* of the simple graph into p parts of balanced work,
where a vertex's work is the weight of its in-edges (edges oriented from the
lower to the higher node id: an IR graph's execution order), because an
edge-cut cluster computes the values of its own vertices.

``metis``
    METIS multilevel k-way partitioning (pymetis) minimising cut edges (unit
    edge weights: a cut edge is one value to communicate), vertex weights =
    work, 3 % imbalance.
``multilevel``
    The same partition by the runtime's multilevel partitioner
    (`runtime.multilevel`, its CPU twin) instead of METIS.
``compnet``
    In the spirit of CompNet (Xiao et al., ICCAD 2017: an edge cut found by a
    community-detection-inspired optimisation; its code is not public):
    size-constrained label propagation finds communities (a community may
    not exceed the balanced share ``W / p`` of work), visiting vertices in a
    seeded random order, then the communities are packed into p clusters
    largest first, each to the least-loaded cluster (LPT). Vertices without
    work follow their community like any other.
"""

import heapq

import numpy as np

from vcut_base.errors import InputError
from runtime.vertex_partition import vertex_partition

from .label_propagation import label_propagation
from .spac import _int_weights
from .spac_kernels import symmetric_csr

__all__ = ["EDGE_CUTS", "edge_cut", "vertex_work"]

EDGE_CUTS = ("compnet", "metis", "multilevel")
LPA_ROUNDS = 20


def vertex_work(src, dst, weight, n):
    """Work of every vertex: the summed weight of its in-edges (lower id -> higher id)."""
    v = np.maximum(np.asarray(src, dtype=np.int64), np.asarray(dst, dtype=np.int64))
    return np.bincount(v, weights=np.asarray(weight, dtype=np.float64), minlength=n)


def edge_cut(src, dst, weight, n, p, method="metis", *, imbalance=1.03, seed=0):
    """Vertex partition of the simple graph ``(src, dst, weight)`` into ``p`` parts.

    Returns
    -------
    parts : int32 ndarray (n,)
    """
    if method not in EDGE_CUTS:
        raise InputError(f"unknown edge cut {method!r}; use one of {', '.join(EDGE_CUTS)}")
    if not isinstance(p, (int, np.integer)) or p < 1:
        raise InputError(f"the number of clusters must be a positive integer, got {p!r}")
    if p > n:
        raise InputError(f"{p} clusters but the graph has only {n} vertices; use p <= {n}")
    work = vertex_work(src, dst, weight, n)
    a = np.asarray(src, dtype=np.int64)
    b = np.asarray(dst, dtype=np.int64)
    xadj, adjncy, adjwgt = symmetric_csr(a, b, np.ones(len(a), dtype=np.int64), n)
    if p == 1:
        return np.zeros(n, dtype=np.int32)
    if method in ("metis", "multilevel"):
        return vertex_partition(xadj, adjncy, adjwgt, _int_weights(work), p, imbalance=imbalance,
                                seed=seed, backend=method)
    labels = np.arange(n, dtype=np.int64)
    perm = np.random.default_rng(seed).permutation(n).astype(np.int64)
    cap = max(work.sum() / p, work.max())
    label_propagation(xadj, adjncy, adjwgt.astype(np.float64), work, cap, perm, LPA_ROUNDS,
                      labels)
    comm_ids, inv = np.unique(labels, return_inverse=True)
    cw = np.bincount(inv, weights=work)
    order = np.lexsort((np.arange(len(cw)), -cw))
    heap = [(0.0, 0, k) for k in range(p)]  # (load, communities, cluster): least loaded first
    to = np.empty(len(cw), dtype=np.int32)
    for k in order.tolist():
        load, cnt, dest = heapq.heappop(heap)
        to[k] = dest
        heapq.heappush(heap, (load + float(cw[k]), cnt + 1, dest))
    return to[inv]
