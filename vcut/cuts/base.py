"""What every vertex-cut family shares: its input, its result, the stream order and the
checks of the options most of them take.

A family module (`vcut.cuts.greedy`, `vcut.cuts.hdrf`, ...) holds an options dataclass
(frozen; ``__post_init__`` validates with the messages `vcut.partition.partition_graph`
has always given) and a ``run(algo, options, cut_input)`` that returns an `Assigned`.
"""

from dataclasses import dataclass, field

import numpy as np

from ir_graph.replicas import replica_set_bytes
from vcut_base import arrays
from vcut_base.errors import InputError
from vcut_base.memory import check_memory

from ..stream_order import stream_order as traversal_order

__all__ = ["CutInput", "Assigned", "ORDERS", "stream_order", "check_lambda", "check_order",
           "check_imbalance", "check_replica_memory", "new_assignment", "DEVICES", "preset_knobs",
           "RefinedOptions"]

ORDERS = ("given", "random", "bfs", "dfs")
DEVICES = ("cpu", "gpu", "auto")


@dataclass(frozen=True, eq=False)
class CutInput:
    """The simple graph a cut partitions and what it is cut for.

    Attributes
    ----------
    graph : ir_graph.Graph
        The input graph (its node arrays: ``par``'s grains and memory objects).
    src, dst : int ndarray (m,); weight : float64 ndarray (m,)
        The simple undirected graph (`vcut.partition.simplify`).
    n, m, p : int
    cap : float64 ndarray (p,)
        Capacity fractions (sum 1).
    deg : int64 ndarray (n,)
        Vertex degrees in the simple graph.
    seed : int
    targets : float64 ndarray (p,) or None
        ``cap`` when capacities were given, else None (equal shares).
    device : {"cpu", "gpu"}
        The device the cut runs on (after ``"auto"`` was resolved).
    """

    graph: object
    src: np.ndarray
    dst: np.ndarray
    weight: np.ndarray
    n: int
    m: int
    p: int
    cap: np.ndarray
    deg: np.ndarray
    seed: int
    targets: np.ndarray = None
    device: str = "cpu"


@dataclass(frozen=True, eq=False)
class Assigned:
    """What a cut returns: the cluster of every simple edge (int32, m), what it reports
    in `vcut.partition.EdgePartition.info`, and, when it chose them, the home of every
    vertex and the order it scheduled the edges in (``par``)."""

    out: np.ndarray
    info: dict = field(default_factory=dict)
    homes: np.ndarray = None
    schedule: np.ndarray = None


def stream_order(kind, src, dst, n, seed):
    """The edge stream of a streaming cut: the edge ids in ``kind`` order (`ORDERS`)."""
    m = len(src)
    if kind == "given":
        out = arrays.empty(m, np.int64)
        for lo in range(0, m, 1 << 24):  # in pieces: no second m-sized array under --spill
            hi = min(lo + (1 << 24), m)
            out[lo:hi] = np.arange(lo, hi)
        return out
    if kind == "random":
        return np.random.default_rng(seed).permutation(m).astype(np.int64)
    u = np.concatenate([src, dst]).astype(np.int64)
    v = np.concatenate([dst, src]).astype(np.int64)
    e = np.concatenate([np.arange(m), np.arange(m)])
    idx = np.lexsort((e, u))
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(u, minlength=n), out=indptr[1:])
    return traversal_order(indptr, e[idx], v[idx], n, m, kind == "dfs")


def preset_knobs(table, name):
    """The knobs preset ``name`` of ``table`` (name: knobs) sets; `InputError` for
    another name."""
    if name not in table:
        raise InputError(f"unknown preset {name!r}; use one of {', '.join(table)}")
    return table[name]


def new_assignment(m):
    """An int32 cluster per simple edge, to fill (memory-mapped under ``--spill``)."""
    return arrays.empty(m, np.int32)


def check_lambda(lam):
    """`InputError` for a lambda below 1 or not finite."""
    if not np.isfinite(lam) or lam < 1:
        raise InputError(f"lambda must be at least 1 (1 = tightest balance), got {lam}")


def check_order(order):
    """`InputError` for an edge order not in `ORDERS`."""
    if order not in ORDERS:
        raise InputError(f"unknown edge order {order!r}; use one of {', '.join(ORDERS)}")


def check_imbalance(imbalance):
    """`InputError` for a balance tolerance below 1 or not finite."""
    if not np.isfinite(imbalance) or imbalance < 1:
        raise InputError(f"imbalance must be at least 1 (1.03 = 3 %), got {imbalance}")


def check_replica_memory(algo, n, p, extra=0):
    """`InputError` when the replica sets of ``n`` vertices and ``p`` clusters (and
    ``extra`` bytes of scratch) would not fit in memory."""
    check_memory(replica_set_bytes(n, p) + extra,
                 f"{algo} with p = {p} on {n:,} vertices", "use fewer clusters")


@dataclass(frozen=True, eq=False)
class RefinedOptions:
    """The options of a cut that `vcut.quality.refine_assignment` may follow.

    Attributes
    ----------
    refine : bool
        Refine the result: replica-dissolving passes, then FM searches, that lower
        the replication factor within ``imbalance``.
    imbalance : float
        Balance tolerance (>= 1; 1.03 = 3 %) of the refinement and of the cuts that
        balance within one.
    """

    refine: bool = False
    imbalance: float = 1.03

    def __post_init__(self):
        check_imbalance(self.imbalance)
