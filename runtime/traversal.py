"""BFS and SSSP under the load-balancing strategies of Raval et al. (CPU path).

``sssp(graph, source, strategy)`` / ``bfs(...)`` return distances (``inf`` for
unreachable vertices) and counters of the work each strategy did. Strategies:
``bs`` (node-based), ``ep`` (edge-based with work chunking), ``ep-nochunk``,
``wd`` (workload decomposition), ``ns`` (node splitting), ``hp``
(hierarchical processing with the WD switch). See `runtime._cpu_kernels`.
Undirected graphs are traversed in both directions; directed ones along
their edges. The GPU twins are not built yet: ``device="gpu"`` is refused.
"""

import os
import time
from dataclasses import dataclass, field

import numpy as np

from frontend.errors import InputError, VcutError

from . import _cpu_kernels as K

__all__ = ["STRATEGIES", "TraversalResult", "sssp", "bfs", "csr_out", "memory_bytes"]

STRATEGIES = ("bs", "ep", "ep-nochunk", "wd", "ns", "hp")
MDT_BINS = 10  # histogram bins for the MDT choice (fits the published MDTs)
HP_BLOCK = 32  # sub-worklists smaller than this switch to WD


@dataclass(frozen=True, eq=False)
class TraversalResult:
    dist: np.ndarray
    strategy: str
    device: str
    seconds: float
    edges_relaxed: int
    iterations: int
    info: dict = field(default_factory=dict)

    @property
    def mteps(self):
        """Millions of edges relaxed per second."""
        return self.edges_relaxed / self.seconds / 1e6 if self.seconds > 0 else float("inf")


def csr_out(graph, directed=None):
    """Out-edge CSR ``(indptr, indices, weights)``; undirected edges both ways."""
    directed = graph.directed if directed is None else directed
    return K.out_csr(graph.src.astype(np.int64), graph.dst.astype(np.int64),
                     np.asarray(graph.weight, dtype=np.float64), int(graph.n), not directed)


def memory_bytes(n, m2, strategy):
    """Working memory of a traversal, in bytes (CSR + distances + the strategy's arrays).

    ``m2`` counts the directed edges traversed (twice the edges of an undirected graph).
    """
    csr = 8 * (n + 1) + 16 * m2 + 8 * n
    per = {"bs": 24 * n, "ep": 8 * n + 24 * m2, "ep-nochunk": 8 * n + 24 * m2,
           "wd": 32 * n, "ns": 48 * n + 16 * m2, "hp": 56 * n}
    return int(csr + per[strategy])


def _threads():
    return max(1, os.cpu_count() or 1) * 1024  # a GPU-like number of pieces per iteration


def sssp(graph, source, strategy="bs", *, device="cpu", directed=None, _unit=False):
    """Single-source shortest paths with one strategy.

    Raises
    ------
    InputError
        Source out of range, unknown strategy, negative weights.
    VcutError
        ``device="gpu"``: the GPU kernels are not available in this version.
    """
    if strategy not in STRATEGIES:
        raise InputError(f"unknown strategy {strategy!r}; use one of {', '.join(STRATEGIES)}")
    if device not in ("cpu", "auto"):
        raise VcutError(
            f"device {device!r}: the GPU traversal kernels are not available in this version; "
            "use --device cpu (or auto)"
        )
    # checked before the generic validation so the message says why SSSP needs it
    if not _unit and graph.m and graph.weight.min() < 0:
        k = int(np.argmin(graph.weight))
        raise InputError(
            f"SSSP needs non-negative weights (Dijkstra-style relaxation), but edge {k} weighs "
            f"{graph.weight[k]}"
        )
    graph.validate()
    if not (0 <= int(source) < graph.n):
        raise InputError(f"source {source} out of range: the graph has vertices 0..{graph.n - 1}")
    indptr, indices, weights = csr_out(graph, directed)
    if _unit:
        weights = np.ones_like(weights)
    dist = np.full(graph.n, np.inf)
    info = {}
    t0 = time.perf_counter()
    if strategy == "bs":
        it, work = K.sssp_bs(indptr, indices, weights, int(source), dist)
    elif strategy in ("ep", "ep-nochunk"):
        it, work, res = K.sssp_ep(indptr, indices, weights, int(source), dist, strategy == "ep")
        info["reservations"] = int(res)
    elif strategy == "wd":
        it, work, pieces = K.sssp_wd(indptr, indices, weights, int(source), dist, _threads())
        info["pieces"] = int(pieces)
    elif strategy == "ns":
        deg = np.diff(indptr)
        mdt = int(K.choose_mdt(deg, MDT_BINS))
        ip2, ix2, w2, cptr, children = K.split_nodes(indptr, indices, weights, mdt)
        d2 = np.full(len(ip2) - 1, np.inf)
        it, work = K.sssp_ns(ip2, ix2, w2, cptr, children, graph.n, int(source), d2)
        dist[:] = d2[: graph.n]
        info.update(mdt=mdt, nodes_split=int(np.count_nonzero(np.diff(cptr))),
                    fraction_split=float(np.count_nonzero(np.diff(cptr)) / max(graph.n, 1)),
                    split_nodes_total=int(len(ip2) - 1))
    else:  # hp
        mdt = int(K.choose_mdt(np.diff(indptr), MDT_BINS))
        it, subits, work = K.sssp_hp(indptr, indices, weights, int(source), dist, mdt, HP_BLOCK,
                                     _threads())
        info.update(mdt=mdt, sub_iterations=int(subits))
    seconds = time.perf_counter() - t0
    info["memory_bytes"] = memory_bytes(graph.n, len(indices), strategy)
    return TraversalResult(dist=dist, strategy=strategy, device="cpu", seconds=seconds,
                           edges_relaxed=int(work), iterations=int(it), info=info)


def bfs(graph, source, strategy="bs", *, device="cpu", directed=None):
    """Breadth-first hop distances (SSSP with unit weights; ``inf`` unreachable)."""
    return sssp(graph, source, strategy, device=device, directed=directed, _unit=True)
