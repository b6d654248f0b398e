"""Replicas of an edge assignment (a vertex cut): ``A(v)``, the clusters holding an edge of ``v``.

* `replica_table`: the replicas ``(v, c)`` of an edge partition, sorted by vertex then
  cluster, with their edge weight and in/out edge counts, and each edge's two replicas
  (`ReplicaTable`); `replica_counts`: ``|A(v)|`` alone. Counting passes over a
  vertex-indexed CSR (or, up to `MASK_CLUSTERS` clusters, one 64-bit mask per vertex)
  instead of a sort of ``|E|``-sized keys: ``O(|V| + |E|)`` time, a few words per edge
  of scratch memory, the sorting formulation's results (tests compare them).
* `replica_sets`: the empty replica sets a streaming partitioner grows. For up to
  `DENSE_WORDS` 64-bit words per vertex (p <= 128) dense bitsets, ``|V| * ceil(p / 64)``
  words; above, `INLINE` cluster ids kept inline per vertex and a bitset row allocated
  from a growing pool only for the vertices with more replicas, so that p = 1024 on
  10^8 vertices does not need ``|V| * p / 8`` bytes. Both give the same partitions.
  `replica_set_bytes`: their size before any overflow row (for memory checks).

Kernels in `ir_graph.replica_kernels`.
"""

from dataclasses import dataclass
from functools import partial

import numpy as np

from vcut_base import arrays
from vcut_base.memory import check_memory, pass_threads, spans
from vcut_base.progress import run_parallel

from .graph import index_dtype
from .replica_kernels import (count_replicas, edge_masks, fill_replicas, incidence, mask_ranks,
                              masters_from_masks, tally_replicas, vertex_masks)

__all__ = ["ReplicaTable", "replica_table", "replica_counts", "replica_sets", "replica_set_bytes",
           "MASK_CLUSTERS", "DENSE_WORDS", "INLINE"]


@dataclass(frozen=True, eq=False)
class ReplicaTable:
    """The replicas of an edge partition, sorted by (vertex, cluster).

    Attributes
    ----------
    ptr : int64 (n + 1,)
        Replicas of vertex ``v``: ``ptr[v]:ptr[v + 1]``.
    cluster : int32 (R,)
    master : int32 (n,)
        The cluster holding most of the vertex's edge weight (ties: the
        lowest id); -1 for a vertex without edges.
    n_in, n_out : int32 (R,) (int64 beyond 2**31 edges)
        Edges of the cluster that enter / leave the vertex (edge ``(u, v)``
        leaves ``u`` and enters ``v``).
    src, dst : int (m,)
        The replica of each edge's source / destination.
    """

    ptr: np.ndarray
    cluster: np.ndarray
    master: np.ndarray
    n_in: np.ndarray
    n_out: np.ndarray
    src: np.ndarray
    dst: np.ndarray

    @property
    def n(self):
        return len(self.ptr) - 1

    @property
    def counts(self):
        """Replicas per vertex (|A(v)|)."""
        return np.diff(self.ptr)

    def vertex(self):
        """The vertex of each replica (int32 below 2**31 vertices)."""
        return np.repeat(np.arange(self.n, dtype=index_dtype(self.n)), self.counts)

    def masters(self):
        """The cluster holding most of each vertex's edge weight (ties: the lowest
        id); -1 for a vertex without edges."""
        return self.master


def _incidence_of(src, dst, n, p, what):
    m = len(src)
    idt = index_dtype(2 * m + 1)
    check_memory(8.0 * (n + 1) + arrays.resident(np.dtype(idt).itemsize * 2.0 * m) + 24.0 * m,
                 f"the {what} of {m:,} edges in {int(p)} clusters", "use a machine with more memory")
    ptr = np.zeros(n + 1, dtype=np.int64)
    inc = arrays.empty(2 * m, idt)  # a spill file under --spill
    incidence(src, dst, n, ptr, inc)
    return ptr, inc


#: Up to this many clusters a vertex's replicas are one 64-bit mask: the
#: table comes from passes over the edges, without the incidence CSR.
MASK_CLUSTERS = 64


def replica_counts(src, dst, assign, n, p):
    """|A(v)| for every vertex (int64): the clusters holding an edge of ``v``."""
    n = int(n)
    if p <= MASK_CLUSTERS:
        rep_ptr = np.zeros(n + 1, dtype=np.int64)
        _masks(src, dst, np.asarray(assign), n, rep_ptr, "replica counts")
        return np.diff(rep_ptr)
    ptr, inc = _incidence_of(src, dst, n, p, "replica counts")
    rep_ptr = np.zeros(n + 1, dtype=np.int64)
    count_replicas(ptr, inc, np.asarray(assign), n, int(p), rep_ptr)
    return np.diff(rep_ptr)


def replica_table(src, dst, assign, weight, n, p):
    """The `ReplicaTable` of edge partition ``assign`` (a cluster per edge)."""
    m = len(src)
    n = int(n)
    assign = np.asarray(assign)
    weight = np.asarray(weight, dtype=np.float64)
    rep_ptr = arrays.zeros(n + 1, np.int64)  # the table: in spill files under --spill
    if p <= MASK_CLUSTERS:
        mask, R = _masks(src, dst, assign, n, rep_ptr, "replicas")
        check_memory(8.0 * R, f"the replicas of {m:,} edges in {int(p)} clusters",
                     "use a machine with more memory")
        ptr = inc = None
    else:
        ptr, inc = _incidence_of(src, dst, n, p, "replicas")
        R = count_replicas(ptr, inc, assign, n, int(p), rep_ptr)
    rdt = index_dtype(R + 1)
    cluster = arrays.empty(R, np.int32)
    master = arrays.empty(n, np.int32)
    n_in = arrays.zeros(R, index_dtype(m + 1))
    n_out = arrays.zeros(R, index_dtype(m + 1))
    rs = arrays.empty(m, rdt)
    rd = arrays.empty(m, rdt)
    if ptr is None:
        _fill_from_masks(src, dst, assign, weight, mask, rep_ptr, cluster, master, n_in,
                         n_out, rs, rd)
    else:
        fill_replicas(ptr, inc, assign, weight, n, int(p), rep_ptr, cluster, master, n_in,
                       n_out, rs, rd)
    return ReplicaTable(ptr=rep_ptr, cluster=cluster, master=master, n_in=n_in, n_out=n_out,
                        src=rs, dst=rd)


def _masks(src, dst, assign, n, rep_ptr, what):
    """`vertex_masks` of the edges, their ranges side by side
    (`vcut_base.memory.pass_threads`), each thread on its own row of masks (united
    after): ``(mask, replicas)``."""
    check_memory(16.0 * (n + 1), f"the {what} of {n:,} vertices",
                 "use a machine with more memory")
    workers = pass_threads(len(src), 8.0 * n)
    masks = np.zeros((workers, n), dtype=np.uint64)
    run_parallel([partial(edge_masks, src, dst, assign, masks[i], a, b)
                  for i, (a, b) in enumerate(spans(len(src), workers))], workers)
    return vertex_masks(masks, rep_ptr)


def _fill_from_masks(src, dst, assign, weight, mask, rep_ptr, cluster, master, n_in, n_out,
                     rs, rd):
    """The table's arrays from the masks: each edge's replicas at both ends (edge ranges
    side by side, `vcut_base.memory.pass_threads`), the replicas' edge counts and weight
    sums (replica ranges side by side, each sum in the incidence order whatever the
    threads), the clusters and masters."""
    workers = pass_threads(len(src))
    run_parallel([partial(mask_ranks, ends, assign, mask, rep_ptr, out, a, b)
                  for ends, out in ((src, rs), (dst, rd)) for a, b in spans(len(src), workers)],
                 workers)
    wsum = np.zeros(len(cluster), dtype=np.float64)
    run_parallel([partial(tally_replicas, rs, rd, weight, n_out, n_in, wsum, a, b)
                  for a, b in spans(len(cluster), workers)], workers)
    masters_from_masks(mask, rep_ptr, wsum, cluster, master)


#: Dense replica bitsets up to this many 64-bit words per vertex (p <= 128).
DENSE_WORDS = 2
#: Cluster ids kept inline per vertex by the compact replica sets.
INLINE = 3


def replica_sets(n, p, dense=None):
    """Empty replica sets of ``n`` vertices over ``p`` clusters, for the kernels.

    Returns ``(cnt, ids, ovf, pool)``: ``cnt[v]`` replicas of ``v``; up to
    ``ids.shape[1]`` of them inline in ``ids[v]``, beyond that the bitset
    ``pool[ovf[v]]`` (``pool[v]`` when ``ovf`` is empty: the dense form, no
    inline ids). ``dense`` None chooses by `DENSE_WORDS`.
    """
    nw = (p + 63) // 64
    if dense is None:
        dense = nw <= DENSE_WORDS
    cnt = np.zeros(n, dtype=np.int32)
    if dense:
        return (cnt, np.zeros((n, 0), dtype=np.int16), np.zeros(0, dtype=np.int32),
                np.zeros((n, nw), dtype=np.uint64))
    ids = np.zeros((n, INLINE), dtype=np.int16 if p <= np.iinfo(np.int16).max else np.int32)
    return cnt, ids, np.full(n, -1, dtype=np.int32), np.zeros((max(64, n >> 10), nw), np.uint64)


def replica_set_bytes(n, p, dense=None):
    """Bytes of `replica_sets` before any overflow row (for the memory check)."""
    nw = (p + 63) // 64
    if dense is None:
        dense = nw <= DENSE_WORDS
    if dense:
        return n * (4 + 8 * nw)
    return n * (4 + 4 + INLINE * (2 if p <= np.iinfo(np.int16).max else 4))
