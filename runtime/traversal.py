"""BFS and SSSP under the load-balancing strategies of Raval et al. (CPU path).

``sssp(graph, source, strategy)`` / ``bfs(...)`` return distances (``inf`` for
unreachable vertices) and counters of the work each strategy did. Strategies:
``bs`` (node-based), ``ep`` (edge-based with work chunking), ``ep-nochunk``,
``wd`` (workload decomposition), ``ns`` (node splitting), ``hp``
(hierarchical processing with the WD switch), or ``auto`` (`choose_strategy`).
See `runtime.traversal_kernels` (CPU) and `runtime.traversal_kernels_gpu` (numba.cuda).
Undirected graphs are traversed in both directions; directed ones along
their edges. ``device``: ``cpu``, ``gpu`` (refused with a clear message
when there is none) or ``auto`` (the GPU when there is one).
"""

import os
import time
from dataclasses import dataclass, field

import numpy as np
from numba import get_num_threads

from vcut_base.errors import InputError

from . import primitives
from . import traversal_kernels as K
from .gpu import device_memory, resolve_device

__all__ = ["STRATEGIES", "BFS_STRATEGIES", "SSSP_STRATEGIES", "default_delta", "TraversalResult",
           "sssp", "bfs", "csr_out", "memory_bytes", "choose_strategy"]

STRATEGIES = ("bs", "ep", "ep-nochunk", "wd", "ns", "hp")
#: SSSP adds delta-stepping (near/far worklists; CPU and GPU)
SSSP_STRATEGIES = STRATEGIES + ("delta",)
#: BFS adds direction-optimising BFS (Beamer et al.; CPU and GPU)
BFS_STRATEGIES = STRATEGIES + ("do",)
DO_ALPHA, DO_BETA = 14.0, 24.0  # the paper's switch parameters
ROAD_MAX_DEGREE = 8  # graphs whose largest degree is at most this are road-like for `auto`
SKEWED = 32  # largest degree / mean degree above which a graph is skewed (no GPU delta)
GPU_DO_MIN_EDGES = 2**26  # directed edges from which GPU BFS `auto` is direction-optimising
GPU_DELTA_MIN_NODES = 2**19  # vertices from which GPU SSSP `auto` is delta-stepping
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
    Neighbour ids are counted at 8 bytes: the CPU's CSR holds them so; on the GPU
    (`traversal_gpu.DeviceCSR`, 4-byte ids while they fit) the figure is a bound.
    """
    csr = 8 * (n + 1) + 16 * m2 + 8 * n
    per = {"bs": 24 * n, "ep": 8 * n + 24 * m2, "ep-nochunk": 8 * n + 24 * m2,
           "wd": 32 * n, "ns": 48 * n + 16 * m2, "hp": 56 * n,
           "do": 24 * n, "delta": 56 * n}  # do: + an in-edge CSR on directed graphs;
    # delta: the GPU's two near and two far worklists, two claim stamps, done (CPU: 40 n)
    return int(csr + per[strategy])


def choose_strategy(n, m2, max_degree, device, memory=None, kind="sssp", road_degree=None):
    """The strategy ``auto`` runs, by device, kind of traversal, size and degrees.

    ``max_degree`` is the largest out-degree; ``road_degree`` the largest in + out degree of
    a directed graph (default ``max_degree``), which BFS's road test reads.

    CPU (`bench/bench_traversal.py`): ``bs``, the fastest CPU strategy on every
    benchmark graph (one core walks every piece, so the other strategies' bookkeeping costs
    more than the imbalance it removes); BFS takes ``do`` unless the graph is road-like
    (``road_degree`` at most `ROAD_MAX_DEGREE`: 5x faster than ``bs`` on the power-law and
    random graphs, 1.1x slower on roads); SSSP takes ``delta`` on road-like graphs (7x
    faster than ``bs`` on the weighted grid, where ``bs`` takes 4.4x scipy's time).

    GPU (an H200, docs/notes/gpu-h200.md): ``bs``, whose frontiers run in the
    device-resident loop: it beat ``ns`` (1.7-10x), ``do`` (2.2-3.5x) and ``ep`` on every
    graph of up to 2^20 vertices and 16 M edges. BFS takes ``do`` on graphs that are not
    road-like from `GPU_DO_MIN_EDGES` directed edges (2x faster than ``bs`` on RMAT 22's
    128 M); SSSP takes ``delta`` on graphs that are not skewed (largest degree at most
    `SKEWED` x the mean) from `GPU_DELTA_MIN_NODES` vertices (1.5-1.8x faster than ``bs`` on
    a 1024 x 1024 grid and ER 20; 1.7-2.7x slower on the 0.1 M-vertex road and grid, 5x on
    RMAT 20). A choice whose memory does not fit ``memory`` (bytes) falls back to ``bs``,
    the leanest strategy; whether that fits is the caller's check.
    """
    if kind not in ("bfs", "sssp"):
        raise ValueError(f"kind must be 'bfs' or 'sssp', not {kind!r}")
    road = (max_degree if road_degree is None else road_degree) <= ROAD_MAX_DEGREE
    if device == "cpu":
        if kind == "bfs":
            return "bs" if road else "do"
        return "delta" if max_degree <= ROAD_MAX_DEGREE else "bs"
    memory = np.inf if memory is None else memory
    skewed = n and max_degree > SKEWED * m2 / n
    if kind == "bfs":
        choice = "do" if not road and m2 >= GPU_DO_MIN_EDGES else "bs"
    else:
        choice = "delta" if not skewed and n >= GPU_DELTA_MIN_NODES else "bs"
    return choice if memory_bytes(n, m2, choice) <= memory else "bs"


def format_bytes(b):
    """``1.5 GiB``, ``12.0 MiB``, ``3.2 KiB``."""
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if b >= size:
            return f"{b / size:,.1f} {unit}"
    return f"{b:,.0f} bytes"


def _threads():
    return max(1, os.cpu_count() or 1) * 1024  # a GPU-like number of pieces per iteration


def default_delta(weights, indptr):
    """Delta-stepping's bucket width: 32 x the mean edge weight / the mean degree (a
    bucket then holds about a warp's worth of edges to relax; Davidson et al.), at
    least the smallest positive weight."""
    n = len(indptr) - 1
    m = len(weights)
    if m == 0:
        return 1.0
    mean_w = float(weights.mean())
    positive = weights[weights > 0]
    if mean_w <= 0 or not len(positive):
        return 1.0
    return max(32.0 * mean_w / (m / max(n, 1)), float(positive.min()))


def _bfs_do(graph, source, indptr, indices, directed, info, device="cpu"):
    if directed:  # bottom-up steps read the in-edges
        rindptr, rindices, _ = K.out_csr(graph.dst.astype(np.int64), graph.src.astype(np.int64),
                                         np.zeros(graph.m), int(graph.n), False)
        info["memory_bytes"] += 8 * (graph.n + 1) + 8 * len(indices)
    else:
        rindptr, rindices = indptr, indices
    if device == "gpu":
        from .traversal_gpu import bfs_do_gpu  # lazy: numba.cuda is optional

        level, it, work, bottom, ginfo = bfs_do_gpu(indptr, indices, rindptr, rindices,
                                                    int(source), DO_ALPHA, DO_BETA)
        info.update(bottom_up_steps=int(bottom), **ginfo)
        seconds = ginfo["kernel_seconds"]
    else:
        threads = get_num_threads()
        level = np.empty(graph.n, dtype=np.int64)
        t0 = time.perf_counter()
        it, work, bottom = K.bfs_do(indptr, indices, rindptr, rindices, int(source), level,
                                    DO_ALPHA, DO_BETA, 8 * threads if threads > 1 else 1)
        seconds = time.perf_counter() - t0
        info.update(bottom_up_steps=int(bottom), threads=int(threads))
    dist = np.where(level >= 0, level, np.inf).astype(np.float64)
    return TraversalResult(dist=dist, strategy="do", device=device, seconds=seconds,
                           edges_relaxed=int(work), iterations=int(it), info=info)


def _sssp_delta(graph, source, indptr, indices, weights, delta, info, device="cpu"):
    if delta is None:
        delta = default_delta(weights, indptr)
    elif not (isinstance(delta, (int, float)) and np.isfinite(delta) and delta > 0):
        raise InputError(f"--delta {delta!r}: the bucket width must be a positive number")
    if device == "gpu":
        from .traversal_gpu import sssp_delta_gpu  # lazy: numba.cuda is optional

        dist, it, work, moves, ginfo = sssp_delta_gpu(indptr, indices, weights, int(source),
                                                      float(delta))
        info.update(delta=float(delta), threshold_moves=moves, **ginfo)
        seconds = ginfo["kernel_seconds"]
    else:
        dist = np.full(graph.n, np.inf)
        t0 = time.perf_counter()
        it, work, moves = K.sssp_delta(indptr, indices, weights, int(source), dist, float(delta))
        seconds = time.perf_counter() - t0
        info.update(delta=float(delta), threshold_moves=int(moves))
    return TraversalResult(dist=dist, strategy="delta", device=device, seconds=seconds,
                           edges_relaxed=int(work), iterations=int(it), info=info)


def sssp(graph, source, strategy="bs", *, device="cpu", directed=None, delta=None, _unit=False):
    """Single-source shortest paths with one strategy.

    Parameters
    ----------
    graph : ir_graph.Graph
    source : int
    strategy : str
        One of `STRATEGIES` or ``"auto"``.
    device : {"cpu", "gpu", "auto"}
    directed : bool, optional
        Follow edges in their direction only (default: the graph's own flag).
    delta : float, optional
        The bucket width of ``strategy="delta"`` (default `default_delta`).

    Raises
    ------
    InputError
        Source out of range, unknown strategy or device, negative weights;
        ``device="gpu"`` without a GPU; a traversal that would not fit in the
        device's memory (the message gives both sizes and a strategy that fits).
    """
    allowed = BFS_STRATEGIES if _unit else SSSP_STRATEGIES
    if strategy not in allowed + ("auto",):
        raise InputError(f"unknown strategy {strategy!r}; use one of {', '.join(allowed)}, auto")
    dev = resolve_device(device)
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
    directed = graph.directed if directed is None else directed
    indptr, indices, weights = csr_out(graph, directed)
    if _unit:
        weights = np.ones_like(weights)
    deg = np.diff(indptr)
    info = {}
    memory = None
    if dev == "gpu":
        memory = device_memory()
    if strategy == "auto":
        max_degree = int(deg.max()) if len(deg) else 0
        road_degree = max_degree
        if _unit and directed and graph.n:  # BFS's road test reads in + out degree
            road_degree = int((deg + np.bincount(graph.dst, minlength=graph.n)).max())
        strategy = choose_strategy(graph.n, len(indices), max_degree, dev, memory,
                                   "bfs" if _unit else "sssp", road_degree)
        info["auto"] = True
    need = memory_bytes(graph.n, len(indices), strategy)
    info["memory_bytes"] = need
    if dev == "gpu":
        _check_memory(graph.n, len(indices), strategy, need, memory)
    if strategy == "do":
        return _bfs_do(graph, source, indptr, indices, directed, info, dev)
    if strategy == "delta":
        return _sssp_delta(graph, source, indptr, indices, weights, delta, info, dev)
    if dev == "gpu":
        return _sssp_gpu(indptr, indices, weights, int(source), strategy, deg, info)
    dist = np.full(graph.n, np.inf)
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
        mdt = int(K.choose_mdt(deg, MDT_BINS))
        ip2, ix2, w2, cptr, children = K.split_nodes(indptr, indices, weights, mdt)
        d2 = np.full(len(ip2) - 1, np.inf)
        it, work = K.sssp_ns(ip2, ix2, w2, cptr, children, graph.n, int(source), d2)
        dist[:] = d2[: graph.n]
        info.update(_split_info(mdt, cptr, graph.n, ip2))
    else:  # hp
        mdt = int(K.choose_mdt(deg, MDT_BINS))
        it, subits, work = K.sssp_hp(indptr, indices, weights, int(source), dist, mdt, HP_BLOCK,
                                     _threads())
        info.update(mdt=mdt, sub_iterations=int(subits))
    seconds = time.perf_counter() - t0
    return TraversalResult(dist=dist, strategy=strategy, device="cpu", seconds=seconds,
                           edges_relaxed=int(work), iterations=int(it), info=info)


def _split_info(mdt, cptr, n, ip2):
    split = int(np.count_nonzero(np.diff(cptr)))
    return {"mdt": mdt, "nodes_split": split, "fraction_split": float(split / max(n, 1)),
            "split_nodes_total": int(len(ip2) - 1)}


def _check_memory(n, m2, strategy, need, have):
    if need <= have:
        return
    fits = sorted((memory_bytes(n, m2, s), s) for s in STRATEGIES if memory_bytes(n, m2, s) <= have)
    hint = (f"--strategy {fits[0][1]} needs {format_bytes(fits[0][0])}" if fits
            else "use --device cpu")
    raise InputError(f"the {strategy} traversal needs {format_bytes(need)} of device memory "
                     f"but {format_bytes(have)} are free; {hint}")


def _sssp_gpu(indptr, indices, weights, source, strategy, deg, info):
    from .traversal_gpu import sssp_gpu  # lazy: numba.cuda is optional

    mdt = 1
    split = None
    if strategy in ("ns", "hp"):
        mdt = primitives.choose_mdt(deg, MDT_BINS, device="gpu")
        info["mdt"] = mdt
    if strategy == "ns":
        split = primitives.split_nodes(indptr, indices, weights, mdt)
        info.update(_split_info(mdt, split[3], len(indptr) - 1, split[0]))
    dist, it, work, ginfo = sssp_gpu(indptr, indices, weights, source, strategy, mdt=mdt,
                                     hp_block=HP_BLOCK, split=split)
    info.update(ginfo)
    return TraversalResult(dist=dist, strategy=strategy, device="gpu",
                           seconds=ginfo["kernel_seconds"], edges_relaxed=int(work),
                           iterations=int(it), info=info)


def bfs(graph, source, strategy="bs", *, device="cpu", directed=None):
    """Breadth-first hop distances (``inf`` unreachable): SSSP with unit weights under
    one of `STRATEGIES`, or ``do``, direction-optimising BFS (`traversal_kernels.bfs_do`:
    top-down and bottom-up steps, bottom-up ones on every numba thread)."""
    return sssp(graph, source, strategy, device=device, directed=directed, _unit=True)
