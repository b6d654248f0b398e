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
    """An edge partition (vertex cut): the result of `partition_graph`.

    Made by `partition_graph` (or `partition_from_assignment` for a partition
    read from a file). The partitioners see the *simple* undirected graph
    (`simplify`: no self-loops, a repeated edge once with the summed weight);
    ``assignment`` maps the result back to the input's edges.

    Attributes
    ----------
    assignment : int32 ndarray
        Cluster of every *input* edge, in the input's edge order (a repeated
        edge: its representative's cluster; a self-loop: the cluster of its
        vertex's master copy).
    src, dst, weight, simple_assignment : ndarray
        The simple graph that was partitioned and its assignment.
    n : int
        Number of vertices.
    metrics : PartitionMetrics
        Computed on the simple graph.
    capacities : float64 ndarray
        Capacity fraction of each cluster (summing to 1).
    info : dict
        Algorithm (``"algo"``), ``"p"``, ``"lambda"``, ``"order"``, ``"seed"``,
        ``"seconds"``, the input's ``"edges"``, ``"simple_edges"``,
        ``"self_loops"`` and ``"repeated_edges"``, the Zipf exponent ``"alpha"``
        of the degrees and the Eq. 10 bound ``"rf_random_bound"``, with what
        the algorithm adds.
    homes : int32 ndarray, optional
        The cluster where each vertex's value is final, when the partitioner
        chose it (``par``); otherwise `masters` decides by weight.
    schedule : int ndarray, optional
        The simple graph's edges in the order the partitioner scheduled them
        (``par``): each cluster runs its tasks in this order rather than in
        the program's.

    See Also
    --------
    partition_graph, partition_from_assignment
    mapping.from_edge_partition : the clusters' tasks and messages.

    Examples
    --------
    A star, centre 0, four unit edges, split by ``wb-libra`` into two clusters
    of at most half the weight each: the centre has a copy in both clusters,
    every leaf one, so ``RF = (2 + 4) / 5``:

    >>> import numpy as np
    >>> from ir_graph import Graph
    >>> from vcut import partition_graph
    >>> star = Graph(n=5, src=np.array([0, 0, 0, 0]), dst=np.array([1, 2, 3, 4]),
    ...              weight=np.ones(4))
    >>> part = partition_graph(star, 2, "wb-libra")
    >>> part.assignment.tolist()
    [0, 0, 1, 1]
    >>> part.metrics.replication_factor, part.metrics.loads
    (1.2, [2.0, 2.0])
    >>> part.info["algo"], part.info["p"], part.capacities.tolist()
    ('wb-libra', 2, [0.5, 0.5])

    The masters (the cluster with most of a vertex's weight; ties: the lowest
    id) and the clusters of each vertex (CSR):

    >>> part.masters().tolist()
    [0, 0, 0, 1, 1]
    >>> ptr, clusters = part.replicas()
    >>> ptr.tolist(), clusters.tolist()
    ([0, 2, 3, 4, 5, 6], [0, 1, 0, 0, 1, 1])
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
    """Partition the edges of ``graph`` into ``p`` clusters (a vertex cut).

    The graph is validated and simplified (`simplify`: self-loops left out, a
    repeated edge once with the summed weight); the algorithm assigns each
    simple edge a cluster; the result maps back to the input's edges and
    carries the metrics (`partition_metrics`), among them the replication
    factor ``RF = sum_v |A(v)| / |V+|`` that the partitioners minimise while
    they balance the clusters' edge weights.

    Parameters
    ----------
    graph : ir_graph.Graph
        The graph; its direction is ignored.
    p : int
        Number of clusters (1 <= p <= number of edges of the simple graph).
    algo : str, default "wb-libra"
        One of `ALGORITHMS` (the registry `vcut.cuts`, whose table says what
        each is): ``random``, ``dbh``, ``graphx-1d``, ``graphx-2d``,
        ``graphx-crvc`` (hashing); ``pg``, ``libra``, ``w-pg``, ``wb-pg``,
        ``w-libra``, ``wb-libra`` (greedy); ``hdrf``; ``spac``; ``wvp-random``,
        ``wvp-greedy``; ``hypergraph``; ``par``; ``ne``; ``hep``; ``best``.
    options : dataclass or mapping, optional
        The options of ``algo``'s family (`vcut.cuts.greedy.GreedyOptions`,
        `vcut.cuts.par.ParOptions`, ...) or a mapping of their field names, with
        ``"preset"`` (``fast``, ``default``, ``strong``) for ``par`` and ``best``
        (`vcut.cuts.make_options`). None: the family's defaults.
    seed : int, default 0
        Seed of every random choice (random order, random placement, DBH hash),
        in ``0..2**63 - 1``.
    capacities : sequence of float, optional
        Capacity of each cluster (relative; normalised to sum 1); equal shares
        by default. The greedy family and HDRF bound each cluster's load by its
        share (WB: ``lambda * W * cap``; HDRF: ``ceil(|E| / p) * cap * p``); DBH
        and random hash in proportion; SPAC, WVP, NE, HEP, ``par`` and ``best``
        balance the parts to it; the GraphX hashes and the hypergraph model take
        equal shares only.
    device : {"cpu", "gpu", "auto"}, default "cpu"
        The greedy family's batched stream and SPAC over the multilevel backend run
        on the GPU with ``"gpu"``; ``"auto"`` takes the GPU when one is usable, else
        the CPU. Other algorithms: CPU.

    Returns
    -------
    EdgePartition
        The cluster of every input edge (``assignment``), the simple graph's
        assignment, the metrics and the run's ``info``.

    Raises
    ------
    InputError
        p < 1 or p > ``|E|``, a seed out of range, an unknown algorithm, option or
        preset, an option out of range (lambda < 1, an unknown order, ...), a
        graph without edges, capacities of the wrong length, not positive or
        given to a GraphX hash; an unknown device, or ``device="gpu"`` for an
        algorithm that runs on the CPU only or without a usable GPU.
    GraphFormatError
        A malformed graph (`ir_graph.Graph.validate`: ids out of range, weights
        negative or not finite, attribute arrays of the wrong length).
    VcutError
        A SPAC / WVP / hypergraph backend that is missing, fails, cannot take
        per-part targets, or a transformed graph that would not fit in memory.

    See Also
    --------
    partition_from_assignment : the same result for a given assignment.
    vcut.pipeline : partition, map, simulate and report in one call.

    Examples
    --------
    A star (centre 0, four leaves, unit weights) into two clusters:

    >>> import numpy as np
    >>> from ir_graph import Graph
    >>> from vcut import partition_graph
    >>> star = Graph(n=5, src=np.array([0, 0, 0, 0]), dst=np.array([1, 2, 3, 4]),
    ...              weight=np.ones(4))

    PowerGraph's greedy rule keeps every edge with the centre's first cluster
    (no vertex is cut, one cluster takes all the weight):

    >>> part = partition_graph(star, 2, "pg")
    >>> part.assignment.tolist(), part.metrics.replication_factor
    ([0, 0, 0, 0], 1.0)
    >>> part.metrics.edge_weight_imbalance
    2.0

    The weight-balanced variant bounds each cluster's load by
    ``lambda * W * cap = 1 * 4 * 0.5 = 2``: cluster 0 is full after two edges,
    the other two go to cluster 1, and the centre is copied into both, so
    ``RF = (2 + 4) / 5``:

    >>> part = partition_graph(star, 2, "wb-libra")
    >>> part.assignment.tolist(), part.metrics.replication_factor
    ([0, 0, 1, 1], 1.2)

    A looser bound (lambda = 1.5: 3 per cluster) and unequal capacities (1 : 3,
    bounds 1 and 3):

    >>> partition_graph(star, 2, "wb-libra", options={"lam": 1.5}).assignment.tolist()
    [0, 0, 0, 1]
    >>> partition_graph(star, 2, "wb-libra", capacities=[1, 3]).assignment.tolist()
    [0, 1, 1, 1]

    More clusters than edges are refused:

    >>> partition_graph(star, 5)
    Traceback (most recent call last):
    ...
    vcut_base.errors.InputError: 5 clusters but the graph has only 4 edges; use p <= 4
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

    The graph is simplified as `partition_graph` does (`simplify`); a repeated
    edge of the simple graph takes the cluster of its first occurrence in the
    input, and self-loops are left out. ``assignment`` is kept as given. The
    metrics use equal capacities (``1 / p`` each); ``info`` has no ``lambda``,
    order, seed or Eq. 10 bound.

    Parameters
    ----------
    graph : ir_graph.Graph
        The graph the assignment was made for.
    assignment : array_like of int, shape (graph.m,)
        Cluster of every input edge, in the input's edge order (ids >= 0).
    p : int, optional
        Number of clusters (default: the largest id + 1); may exceed it (empty
        clusters).
    algo : str, default "file"
        The name recorded as ``info["algo"]``.

    Returns
    -------
    EdgePartition

    Raises
    ------
    InputError
        The assignment does not have one cluster per edge of the graph, the
        graph has no edges, the ids are not integers, are negative, or reach
        ``p`` or beyond.

    See Also
    --------
    partition_graph

    Examples
    --------
    Three vertices; edge 0-1 given twice (once reversed) and a self-loop on 2.
    The simple graph is 0-1 (weight 2, cluster 0: its first occurrence's) and
    1-2 (cluster 1); vertex 1 is in both clusters, so ``RF = 4 / 3``:

    >>> import numpy as np
    >>> from ir_graph import Graph
    >>> from vcut import partition_from_assignment
    >>> g = Graph(n=3, src=np.array([0, 1, 1, 2]), dst=np.array([1, 0, 2, 2]),
    ...           weight=np.ones(4))
    >>> part = partition_from_assignment(g, [0, 1, 1, 0])
    >>> part.src.tolist(), part.dst.tolist(), part.weight.tolist()
    ([0, 1], [1, 2], [2.0, 1.0])
    >>> part.simple_assignment.tolist(), part.assignment.tolist()
    ([0, 1], [0, 1, 1, 0])
    >>> round(part.metrics.replication_factor, 4)
    1.3333
    >>> part.info["p"], part.info["self_loops"], part.info["repeated_edges"]
    (2, 1, 1)

    An assignment made for another graph is refused:

    >>> partition_from_assignment(g, [0, 1])
    Traceback (most recent call last):
    ...
    vcut_base.errors.InputError: the partition assigns 2 edges but the graph has 4: ...
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
