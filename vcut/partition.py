"""Edge partitioning (vertex cuts) of a `Graph` into p clusters.

`partition_graph` runs a vertex cut of the registry `vcut.cuts` by its kebab-case name
(the same in the API, the CLI and reports; `ALGORITHMS` lists them, `vcut.cuts` says
which family each belongs to and what its options are).

The partitioners see the *simple* undirected graph: self-loops are left out
and an edge repeated (in either direction) is one edge whose weight is the
sum; the result maps back to the input's edges (a repeated edge gets its
representative's cluster, a self-loop the cluster of its vertex's master
copy) and reports how many of each there were.
"""

import time
from dataclasses import dataclass, field

import numpy as np

from ir_graph.edge_lists import degrees, simple_edges
from ir_graph.replicas import replica_table
from ir_graph.stats import alpha_mle
from vcut_base.errors import InputError

from .capacities import capacities_from_fractions, equal_capacities
from .cuts import ALGORITHMS, check_device, lookup, make_options
from .cuts.base import CutInput, check_lambda
from .metrics import PartitionMetrics, partition_metrics, random_rf_bound, replica_sets
from .quality import refine_assignment

__all__ = ["ALGORITHMS", "EdgePartition", "partition_graph", "simplify",
           "partition_from_assignment", "finish_partition", "check_arguments", "simple_input",
           "check_clusters", "capacity_fractions"]


@dataclass(frozen=True, eq=False)
class EdgePartition:
    """The result of `partition_graph`.

    Attributes
    ----------
    assignment : int32 ndarray
        Cluster of every *input* edge, in the input's edge order.
    src, dst, weight, simple_assignment : ndarray
        The simple graph that was partitioned and its assignment.
    metrics : PartitionMetrics
        Computed on the simple graph.
    capacities : float64 ndarray
        Capacity fraction of each cluster.
    info : dict
        Algorithm, p, lambda, order, seed, seconds, self-loops and repeated
        edges of the input, alpha and the Eq. 10 bound.
    homes : int32 ndarray, optional
        The cluster where each vertex's value is final, when the partitioner
        chose it (``par``); otherwise `masters` decides by weight.
    schedule : int ndarray, optional
        The simple graph's edges in the order the partitioner scheduled them
        (``par``): each cluster runs its tasks in this order rather than in
        the program's.
    """

    assignment: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    weight: np.ndarray
    simple_assignment: np.ndarray
    n: int
    metrics: PartitionMetrics
    capacities: np.ndarray
    info: dict = field(default_factory=dict)
    homes: np.ndarray = None
    schedule: np.ndarray = None

    def replicas(self):
        """``(ptr, clusters)``: the clusters of each vertex (CSR, sorted)."""
        return replica_sets(self.src, self.dst, self.simple_assignment, self.n)

    def replica_table(self):
        """The `ir_graph.replicas.ReplicaTable` of the simple graph's assignment."""
        return replica_table(self.src, self.dst, self.simple_assignment, self.weight, self.n,
                             int(self.info["p"]))

    def masters(self):
        """Master copy of every vertex: `homes` when the partitioner chose them,
        else the cluster holding most of its edge weight (ties: the lowest id);
        -1 for vertices without edges."""
        if self.homes is not None:
            return self.homes
        return self.replica_table().masters()


def simplify(graph):
    """The simple undirected graph the partitioners work on.

    Returns
    -------
    src, dst, weight : ndarray
        One edge per unordered pair, in order of first appearance, with the
        summed weight of its repetitions (the graph's own arrays when it is
        simple already: no copy).
    input_edge : int64 ndarray or None
        For every input edge, its simple edge (-1 for a self-loop); None
        when the graph is simple (every input edge is its own simple edge).
    loops, repeats : int
    """
    return simple_edges(graph.src, graph.dst, graph.weight, graph.n)


def check_arguments(p, seed, lam):
    """Refuse a cluster count, seed or lambda a partitioner cannot take (`InputError`)."""
    if not isinstance(p, (int, np.integer)) or p < 1:
        raise InputError(f"the number of clusters must be a positive integer, got {p!r}")
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) or \
            not 0 <= seed < 2**63:
        raise InputError(f"the seed must be an integer in 0..{2**63 - 1}, got {seed!r}")
    check_lambda(lam)


def simple_input(graph, p, algo, capacities):
    """``(simplify(graph), capacity fractions)`` of a partitioning of ``graph`` into ``p``
    clusters by ``algo``, after validating the graph; `InputError` for a graph without
    edges, more clusters than edges, or capacities of the wrong length, not positive
    or given to a GraphX hash (equal shares only)."""
    graph.validate()
    simple = simplify(graph)
    m = len(simple[0])
    if m == 0:
        raise InputError("the graph has no edges (other than self-loops); nothing to partition")
    check_clusters(p, m)
    return simple, capacity_fractions(p, algo, capacities)


def check_clusters(p, m):
    """`InputError` for more clusters than the ``m`` edges to share among them."""
    if p > m:
        raise InputError(f"{p} clusters but the graph has only {m} edges; use p <= {m}")


def capacity_fractions(p, algo, capacities):
    """The capacity fractions of ``p`` clusters (equal shares without ``capacities``);
    `InputError` for the wrong length, shares that are not positive, or capacities
    given to a GraphX hash (equal shares only)."""
    if capacities is None:
        return equal_capacities(p)
    if algo in ALGORITHMS and lookup(algo).equal_shares:
        raise InputError(f"{algo} hashes to equal shares only; drop --capacities")
    cap = capacities_from_fractions(capacities)
    if len(cap) != p:
        raise InputError(f"{len(cap)} capacities given for {p} clusters")
    return cap


def partition_graph(graph, p, algo="wb-libra", options=None, *, seed=0, capacities=None,
                    device="cpu"):
    """Partition the edges of ``graph`` into ``p`` clusters.

    Parameters
    ----------
    graph : ir_graph.Graph
    p : int
        Number of clusters (1 <= p <= number of edges).
    algo : str
        One of `ALGORITHMS` (the registry `vcut.cuts`).
    options : dataclass or mapping, optional
        The options of ``algo``'s family (`vcut.cuts.greedy.GreedyOptions`,
        `vcut.cuts.par.ParOptions`, ...) or a mapping of their field names, with
        ``"preset"`` (``fast``, ``default``, ``strong``) for ``par`` and ``best``
        (`vcut.cuts.make_options`). None: the family's defaults.
    seed : int
        Seed of every random choice (random order, random placement, DBH hash).
    capacities : sequence of float, optional
        Capacity of each cluster (relative; normalised to sum 1); equal shares
        by default. The greedy family and HDRF bound each cluster's load by its
        share (WB: ``lambda * W * cap``; HDRF: ``ceil(|E| / p) * cap * p``); DBH
        and random hash in proportion; SPAC, WVP, NE, HEP, ``par`` and ``best``
        balance the parts to it; the GraphX hashes and the hypergraph model take
        equal shares only.
    device : {"cpu", "gpu", "auto"}
        The greedy family's batched stream and SPAC over the multilevel backend run
        on the GPU with ``"gpu"``; ``"auto"`` takes the GPU when one is usable, else
        the CPU. Other algorithms: CPU.

    Returns
    -------
    EdgePartition

    Raises
    ------
    InputError
        p < 1 or p > |E|, an unknown algorithm, option or preset, an option out of
        range (lambda < 1, an unknown order, ...), an empty graph, capacities of the
        wrong length or not positive.
    VcutError
        A SPAC / WVP / hypergraph backend that is missing, fails, cannot take
        per-part targets, or a transformed graph that would not fit in memory.

    Examples
    --------
    >>> from ir_graph import Graph
    >>> g = Graph.from_edges([(0, 1), (1, 2), (2, 0), (2, 3)])  # doctest: +SKIP
    >>> partition_graph(g, 2, "hdrf", options={"order": "bfs"}, seed=1)  # doctest: +SKIP
    """
    cut = lookup(algo)
    opts = make_options(algo, options)
    check_arguments(p, seed, 1.0)
    asked, device = device, check_device(algo, opts, p, device)
    if cut.check is not None:
        opts = cut.check(algo, opts, graph, p, capacities, asked, device)
    simple, cap = simple_input(graph, p, algo, capacities)
    src, dst, weight = simple[:3]
    deg = degrees(src, dst, graph.n)
    t0 = time.perf_counter()
    res = cut.run(algo, opts, CutInput(graph, src, dst, weight, graph.n, len(src), int(p), cap,
                                       deg, seed, None if capacities is None else cap, device))
    out, extra = res.out, dict(res.info)
    if cut.refined and opts.refine:
        out[:], refine_info = refine_assignment(src, dst, weight, graph.n, out, cap,
                                                imbalance=opts.imbalance, seed=seed)
        extra.update(refine_info)
    seconds = time.perf_counter() - t0
    info = {"algo": algo, "p": int(p), "lambda": float(getattr(opts, "lam", 1.0)),
            "order": getattr(opts, "order", "given"), "seed": int(seed), "seconds": seconds,
            **extra}
    return finish_partition(graph, simple, out, cap, deg, info, homes=res.homes,
                            schedule=res.schedule)


def finish_partition(graph, simple, out, cap, deg, info, homes=None, schedule=None):
    """The `EdgePartition` of ``graph`` from the assignment ``out`` of its simple
    graph ``simple`` (what `simplify` returned): metrics, the input's edges'
    clusters (a self-loop with its vertex's master copy), the Zipf fit and
    Eq. 10's bound. ``info`` has at least ``p``."""
    src, dst, weight, input_edge, loops, repeats = simple
    n, p, m = graph.n, int(info["p"]), len(src)
    metrics = partition_metrics(src, dst, weight, out, n, p, cap, deg=deg)
    part = EdgePartition(
        assignment=np.empty(0, dtype=np.int32), src=src, dst=dst, weight=weight,
        simple_assignment=out, n=n, metrics=metrics, capacities=cap,
        info={**info, "edges": int(graph.m), "simple_edges": int(m), "self_loops": loops,
              "repeated_edges": repeats},
        homes=homes, schedule=schedule,
    )
    # map back to the input's edges; a self-loop goes with its vertex's master copy
    if input_edge is None:  # the graph is simple: its assignment is the simple one
        full = out
    else:
        full = np.empty(graph.m, dtype=np.int32)
        ok = input_edge >= 0
        full[ok] = out[input_edge[ok]]
    if loops:
        master = part.masters()
        lv = graph.src[~ok]
        fallback = int(np.argmin(metrics.loads / cap))
        full[~ok] = np.where(master[lv] >= 0, master[lv], fallback)
    alpha = _zipf_alpha(deg)
    part.info["alpha"] = alpha
    part.info["rf_random_bound"] = (random_rf_bound(p, alpha, int((deg > 0).sum()))
                                    if np.isfinite(alpha) else None)
    return EdgePartition(**{**part.__dict__, "assignment": full})


def partition_from_assignment(graph, assignment, p=None, algo="file"):
    """The `EdgePartition` of a given cluster per input edge (a partition file).

    Parameters
    ----------
    graph : ir_graph.Graph
    assignment : int array (graph.m,)
    p : int, optional
        Number of clusters (default: the largest id + 1).

    Raises
    ------
    InputError
        The assignment does not have one cluster per edge of the graph, has
        negative ids, or ids beyond ``p``.
    """
    a = np.asarray(assignment)
    if a.ndim != 1 or len(a) != graph.m:
        raise InputError(f"the partition assigns {a.size:,} edges but the graph has {graph.m:,}: "
                         "it is not this graph's; partition this graph with 'vcut partition'")
    if graph.m == 0:
        raise InputError("the graph has no edges; nothing to map")
    if not np.issubdtype(a.dtype, np.integer) or a.min() < 0:
        raise InputError("a partition must give every edge a cluster id >= 0")
    found = int(a.max()) + 1
    p = found if p is None else int(p)
    if found > p:
        raise InputError(f"the partition uses cluster ids up to {found - 1} but p = {p}; "
                         f"use -p {found} or the partition made for p = {p}")
    src, dst, weight, input_edge, loops, repeats = simplify(graph)
    if input_edge is None:
        simple = a.astype(np.int32)
    else:
        first = np.full(len(src), graph.m, dtype=np.int64)
        ok = input_edge >= 0
        np.minimum.at(first, input_edge[ok], np.flatnonzero(ok))
        simple = a[first].astype(np.int32)
    cap = equal_capacities(p)
    metrics = partition_metrics(src, dst, weight, simple, graph.n, p, cap)
    return EdgePartition(
        assignment=a.astype(np.int32), src=src, dst=dst, weight=weight, simple_assignment=simple,
        n=graph.n, metrics=metrics, capacities=cap,
        info={"algo": algo, "p": p, "edges": int(graph.m), "simple_edges": int(len(src)),
              "self_loops": loops, "repeated_edges": repeats, "seconds": 0.0},
    )


def _zipf_alpha(deg):
    """Discrete MLE of a Zipf law over all positive degrees (x_min = 1), for Eq. 10."""
    x = deg[deg > 0].astype(np.float64)
    return alpha_mle(x, 1) if len(x) else float("nan")
