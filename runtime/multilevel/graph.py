"""The multilevel partitioner's graph: an undirected CSR with integer weights, validated.

`level_from` accepts an `ir_graph.Graph` (its edges symmetrised, repeats
merged by adding weights, self-loops dropped; its node weights, if any, as
vertex weights), a scipy sparse matrix (symmetrised the same way), or a
tuple ``(indptr, indices[, edge_weights[, vertex_weights]])`` already in
symmetric CSR form. A matrix entry pair A[u, v], A[v, u] gives one edge of
weight max(A[u, v], A[v, u]). Weights must be finite and non-negative; non-integral
weights are scaled (the largest to 2**20) and rounded, at least 1 for a
positive weight, because the kernels work in exact integers as METIS does.
"""

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from numba import get_num_threads

from vcut_base.errors import InputError

from ..traversal_kernels import symmetric_csr

__all__ = ["Level", "DeviceLevel", "level_from", "csr_from_edges", "integer_weights"]

#: Non-integral weights are scaled so that the largest becomes this.
WEIGHT_SCALE = 1 << 20
#: Integral weights above this are scaled down the same way (sums stay in int64).
MAX_WEIGHT = 1 << 40


@dataclass(frozen=True, eq=False)
class Level:
    """One level of the hierarchy: symmetric CSR, int64 arrays."""

    indptr: np.ndarray
    indices: np.ndarray
    ewgt: np.ndarray
    vwgt: np.ndarray

    @property
    def n(self):
        return len(self.vwgt)

    @property
    def m(self):
        """Undirected edges (each stored twice)."""
        return len(self.indices) // 2


class DeviceLevel:
    """One level on the device (int64 arrays), with its host copy on demand; ``total``:
    the vertex weights' sum (known on the host where the level was built), ``arena``:
    the region its arrays came from, which the run goes on allocating from."""

    def __init__(self, indptr, indices, ewgt, vwgt, n, entries, host=None, total=None,
                 arena=None):
        self.indptr, self.indices, self.ewgt, self.vwgt = indptr, indices, ewgt, vwgt
        self.n = n
        self.entries = entries
        self._host = host
        self.total = int(host.vwgt.sum()) if total is None and host is not None else total
        self.arena = arena

    @property
    def m(self):
        """Undirected edges (each stored twice)."""
        return self.entries // 2

    def heaviest(self):
        """The largest vertex weight (one download of the weights)."""
        vw = self._host.vwgt if self._host is not None else self.vwgt.copy_to_host()[:self.n]
        return int(vw.max()) if self.n else 0

    def host(self):
        if self._host is None:
            ind = self.indices.copy_to_host()[:self.entries]
            ew = self.ewgt.copy_to_host()[:self.entries]
            self._host = Level(self.indptr.copy_to_host()[:self.n + 1], ind, ew,
                               self.vwgt.copy_to_host()[:self.n])
        return self._host


def integer_weights(w, what):
    """``w`` as int64 >= 0: integral values kept, others scaled and rounded (positive -> >= 1)."""
    w = np.asarray(w, dtype=np.float64)
    if len(w) and not np.isfinite(w).all():
        raise InputError(f"{what} must be finite numbers; fix the input")
    if len(w) and w.min() < 0:
        raise InputError(f"{what} must be >= 0 (found {w.min():g}); fix the input")
    top = float(w.max()) if len(w) else 0.0
    if top <= MAX_WEIGHT and np.array_equal(w, np.round(w)):
        return w.astype(np.int64)
    scaled = np.round(w * (WEIGHT_SCALE / top)).astype(np.int64)
    return np.where((w > 0) & (scaled == 0), 1, scaled)


def csr_from_edges(src, dst, weight, n, vertex_weight=None):
    """Symmetric CSR of an edge list: repeats (either direction) merged, self-loops dropped."""
    src = np.asarray(src, dtype=np.int64)
    dst = np.asarray(dst, dtype=np.int64)
    w = integer_weights(np.ones(len(src)) if weight is None else weight, "edge weights")
    if not (len(src) == len(dst) == len(w)):
        raise InputError("edge arrays of different lengths; fix the input")
    if len(src) and (min(src.min(), dst.min()) < 0 or max(src.max(), dst.max()) >= n):
        raise InputError(f"edge endpoints must lie in [0, {n}); fix the input")
    keep = src != dst
    a = np.minimum(src[keep], dst[keep])
    b = np.maximum(src[keep], dst[keep])
    w = w[keep]
    key = a * np.int64(n) + b
    order = np.argsort(key, kind="stable")
    key, w = key[order], w[order]
    first = np.ones(len(key), dtype=bool)
    first[1:] = key[1:] != key[:-1]
    start = np.flatnonzero(first)
    merged_w = np.add.reduceat(w, start) if len(start) else w[:0]
    a, b = key[start] // n, key[start] % n
    # pairs sorted by (a, b), a < b: the rows come out sorted by neighbour
    indptr, cols, pair = symmetric_csr(n, a, b, get_num_threads())
    ww = merged_w[pair]
    vw = (np.ones(n, dtype=np.int64) if vertex_weight is None
          else integer_weights(vertex_weight, "vertex weights"))
    if len(vw) != n:
        raise InputError(f"{len(vw)} vertex weights for {n} vertices; fix the input")
    return Level(indptr, cols, ww, vw)


def check_csr(indptr, indices, ewgt, vwgt):
    """Validate a symmetric CSR before a kernel sees it (one-line errors)."""
    indptr = np.ascontiguousarray(indptr)
    n = len(indptr) - 1
    if indptr.ndim != 1 or n < 0 or indptr.dtype.kind not in "iu":
        raise InputError("CSR offsets must be a 1-d integer array of n + 1 entries")
    indptr = indptr.astype(np.int64)
    if indptr[0] != 0 or (np.diff(indptr) < 0).any():
        raise InputError("CSR offsets must start at 0 and never decrease")
    indices = np.ascontiguousarray(indices)
    if indices.ndim != 1 or indices.dtype.kind not in "iu" or len(indices) != indptr[-1]:
        raise InputError(f"CSR neighbours must be a 1-d integer array of {indptr[-1]} entries")
    indices = indices.astype(np.int64)
    if len(indices) and (indices.min() < 0 or indices.max() >= n):
        raise InputError(f"CSR neighbours must lie in [0, {n})")
    rows = np.repeat(np.arange(n, dtype=np.int64), np.diff(indptr))
    if (rows == indices).any():
        raise InputError("the graph has self-loops; drop them (or pass an edge list)")
    ew = integer_weights(np.ones(len(indices)) if ewgt is None else ewgt, "edge weights")
    if len(ew) != len(indices):
        raise InputError(f"{len(ew)} edge weights for {len(indices)} CSR entries")
    fwd = rows * max(n, 1) + indices
    rev = indices * max(n, 1) + rows
    of, orv = np.argsort(fwd, kind="stable"), np.argsort(rev, kind="stable")
    if not (np.array_equal(fwd[of], rev[orv]) and np.array_equal(ew[of], ew[orv])):
        raise InputError("the CSR graph is not symmetric (every edge u-v needs v-u with the "
                         "same weight); pass an edge list to have it symmetrised")
    if len(fwd) and (np.diff(fwd[of]) == 0).any():
        raise InputError("the CSR graph repeats an edge; merge repeats (or pass an edge list)")
    vw = (np.ones(n, dtype=np.int64) if vwgt is None
          else integer_weights(vwgt, "vertex weights"))
    if len(vw) != n:
        raise InputError(f"{len(vw)} vertex weights for {n} vertices")
    return Level(indptr, indices, ew, vw)


def level_from(graph):
    """The finest `Level` of ``graph`` (see the module docstring for what is accepted)."""
    if hasattr(graph, "src") and hasattr(graph, "dst") and hasattr(graph, "n"):
        return csr_from_edges(graph.src, graph.dst, graph.weight, int(graph.n),
                              getattr(graph, "node_weight", None))
    if hasattr(graph, "tocoo"):
        if graph.shape[0] != graph.shape[1]:
            raise InputError(f"an adjacency matrix must be square, got {graph.shape}")
        a = sp.csr_matrix(graph)
        if a.nnz and a.data.min() < 0:
            raise InputError(f"edge weights must be >= 0 (found {a.data.min():g}); fix the input")
        coo = sp.triu(a.maximum(a.T), k=1).tocoo()  # u-v weighs max(A[u,v], A[v,u])
        return csr_from_edges(coo.row, coo.col, coo.data, graph.shape[0])
    if isinstance(graph, tuple) and 2 <= len(graph) <= 4:
        return check_csr(*graph, *([None] * (4 - len(graph))))
    raise InputError("multilevel_partition takes an ir_graph.Graph, a scipy sparse matrix or "
                     "(indptr, indices[, edge_weights[, vertex_weights]])")
