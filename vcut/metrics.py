"""Quality metrics of an edge partition (vertex cut), shared by every partitioner.

With ``A(v)`` the clusters holding an edge of ``v`` and ``V+`` the vertices
that have at least one edge:

* replication factor ``RF = sum_v |A(v)| / |V+|`` (Eq. 2; the reference tools
  divide by ``|V+|`` too, which equals ``|V|`` when no vertex is isolated);
* vertex copies ``C_EP = sum_v (|A(v)| - 1)``;
* edge weight imbalance ``max_m load_m / (W cap_m)`` (Table 5: with equal
  shares, the largest load over the average ``W / p``);
* edge-count imbalance, the same with edge counts;
* the Eq. 10 random-placement bound of RF for a Zipf degree law of exponent
  alpha over degrees 1..|V|-1;
* the average degree of the cut vertices (``|A(v)| > 1``).
"""

import math
from dataclasses import asdict, dataclass

import numpy as np

from ir_graph.edge_lists import cluster_sums, degrees
from ir_graph.replicas import replica_counts, replica_table

__all__ = ["PartitionMetrics", "partition_metrics", "replica_sets", "random_rf_bound"]


@dataclass(frozen=True)
class PartitionMetrics:
    """The quality of one edge partition (the metrics of the module docstring).

    Made by `partition_metrics`; every `vcut.EdgePartition` carries one
    (``part.metrics``), computed on the simple graph that was partitioned.
    ``to_dict()`` gives the fields as a dict (what ``vcut partition --json``
    writes).

    Attributes
    ----------
    p : int
        Number of clusters.
    replication_factor : float
        ``RF = sum_v |A(v)| / |V+|``: the mean number of clusters holding a copy
        of a vertex, over the vertices with at least one edge (1.0: no vertex is
        cut; 0.0 for a graph without edges).
    vertex_copies : int
        ``C_EP = sum_v (|A(v)| - 1)``: the copies beyond the first.
    edge_weight_imbalance : float
        ``max_m load_m / (W cap_m)``: the heaviest cluster's load over its share
        of the total weight ``W`` (1.0: perfectly balanced; 1.0 when ``W = 0``).
    edge_imbalance : float
        The same with edge counts: ``max_m count_m / (|E| cap_m)``.
    loads : list of float
        Edge weight of each cluster.
    counts : list of int
        Edges of each cluster.
    cut_vertices : int
        Vertices with copies in more than one cluster (``|A(v)| > 1``).
    avg_cut_degree : float
        Mean degree of the cut vertices (0.0 when none is cut).

    See Also
    --------
    partition_metrics : computes them for an assignment.

    Examples
    --------
    A triangle 0-1-2 with a path 2-3-4 hanging from vertex 2; the triangle in
    cluster 0, the path in cluster 1, so only vertex 2 is cut:

    >>> from vcut import partition_metrics
    >>> m = partition_metrics(src=[0, 1, 0, 2, 3], dst=[1, 2, 2, 3, 4],
    ...                       weight=[1, 1, 1, 2, 3], assign=[0, 0, 0, 1, 1], n=5, p=2)
    >>> m.replication_factor, m.vertex_copies, m.cut_vertices
    (1.2, 1, 1)
    >>> m.to_dict()["loads"]
    [3.0, 5.0]
    """

    p: int
    replication_factor: float
    vertex_copies: int
    edge_weight_imbalance: float
    edge_imbalance: float
    loads: list
    counts: list
    cut_vertices: int
    avg_cut_degree: float

    def to_dict(self):
        return asdict(self)


def replica_sets(src, dst, assign, n):
    """CSR of each vertex's clusters: ``(ptr, clusters)``, clusters sorted."""
    assign = np.asarray(assign)
    p = int(assign.max()) + 1 if len(assign) else 1
    t = replica_table(src, dst, assign, np.zeros(len(assign)), n, p)
    return t.ptr, t.cluster


def partition_metrics(src, dst, weight, assign, n, p, cap=None, deg=None):
    """Every metric of the module docstring for one assignment of edges to clusters.

    With ``A(v)`` the clusters holding an edge of ``v`` and ``V+`` the vertices
    with at least one edge: the replication factor ``RF = sum_v |A(v)| / |V+|``
    (Eq. 2), the vertex copies ``sum_v (|A(v)| - 1)``, the weight imbalance
    ``max_m load_m / (W cap_m)`` (``W``: the total weight), the edge-count
    imbalance (the same with edge counts), the per-cluster loads and counts, and
    the cut vertices (``|A(v)| > 1``) with their mean degree. The inputs are
    taken as they are (no validation): give a simple graph (`vcut.partition.simplify`)
    for the metrics of a partition.

    Parameters
    ----------
    src, dst : array_like of int, shape (m,)
        Edge endpoints, vertex ids in ``0..n-1`` (the direction does not matter).
    weight : array_like of float, shape (m,)
        Edge weights (the loads).
    assign : array_like of int, shape (m,)
        Cluster of every edge, in ``0..p-1``.
    n : int
        Number of vertices; vertices without edges do not count in ``RF``.
    p : int
        Number of clusters.
    cap : array_like of float, shape (p,), optional
        Capacity fraction of each cluster (summing to 1) for the imbalances;
        equal shares ``1 / p`` by default.
    deg : ndarray of int, shape (n,), optional
        The vertex degrees, when the caller has them (else counted here).

    Returns
    -------
    PartitionMetrics

    See Also
    --------
    vcut.partition_graph : partitions a graph and computes these metrics.

    Examples
    --------
    A triangle 0-1-2 (weight 1 each) and a path 2-3-4 (weights 2, 3), the
    triangle in cluster 0 and the path in cluster 1. Vertex 2 has copies in
    both clusters and the 4 others one each, so ``RF = 6 / 5``; the loads are
    3 and 5 of ``W = 8``, so the weight imbalance is ``5 / 4``; the counts are 3
    and 2 of 5 edges, so the edge imbalance is ``3 / 2.5``:

    >>> from vcut import partition_metrics
    >>> src, dst = [0, 1, 0, 2, 3], [1, 2, 2, 3, 4]
    >>> weight, assign = [1, 1, 1, 2, 3], [0, 0, 0, 1, 1]
    >>> m = partition_metrics(src, dst, weight, assign, n=5, p=2)
    >>> m.replication_factor, m.vertex_copies
    (1.2, 1)
    >>> m.loads, m.edge_weight_imbalance, m.counts, m.edge_imbalance
    ([3.0, 5.0], 1.25, [3, 2], 1.2)
    >>> m.cut_vertices, m.avg_cut_degree  # vertex 2, of degree 3
    (1, 3.0)

    With capacities, the imbalances are relative to each cluster's share
    (cluster 0 has a quarter, so its 3 of 8 weigh 1.5 times its share):

    >>> quarter = partition_metrics(src, dst, weight, assign, n=5, p=2, cap=[0.25, 0.75])
    >>> quarter.edge_weight_imbalance
    1.5
    """
    src = np.asarray(src)
    dst = np.asarray(dst)
    weight = np.asarray(weight, dtype=np.float64)
    assign = np.asarray(assign)
    cap = np.full(p, 1.0 / p) if cap is None else np.asarray(cap, dtype=np.float64)
    reps = replica_counts(src, dst, assign, n, p)
    active = reps > 0
    total_reps = int(reps.sum())
    n_active = int(active.sum())
    loads, counts = cluster_sums(assign, weight, int(p))
    W = float(weight.sum())
    m = len(assign)
    if deg is None:
        deg = degrees(src, dst, n)
    cut = reps > 1
    return PartitionMetrics(
        p=int(p),
        replication_factor=total_reps / n_active if n_active else 0.0,
        vertex_copies=int((reps[active] - 1).sum()),
        edge_weight_imbalance=float(np.max(loads / (W * cap))) if W > 0 else 1.0,
        edge_imbalance=float(np.max(counts / (m * cap))) if m else 1.0,
        loads=loads.tolist(),
        counts=counts.tolist(),
        cut_vertices=int(cut.sum()),
        avg_cut_degree=float(deg[cut].mean()) if cut.any() else 0.0,
    )


def random_rf_bound(p, alpha, n):
    """Eq. 10: expected RF of random placement for a Zipf(alpha) degree law.

    ``E[RF] = p - (p / h(alpha)) * sum_{d=1}^{n-1} ((p-1)/p)^d d^-alpha``,
    ``h(alpha) = sum_{d=1}^{n-1} d^-alpha``.

    O(p + `RF_HEAD`) time whatever ``n``: the terms of the second sum fall below
    1e-17 of the first by ``d = 39 p`` (the rest, at most p times that, is
    dropped: a relative error below 1e-14), and ``h`` is summed term by term up
    to `RF_HEAD`, its tail by the Euler-Maclaurin formula to the third
    derivative (error below 1e-20 of the sum). Term by term it took 0.18 s
    at 10^6 vertices.
    """
    alpha = float(alpha)
    last = max(int(n), 2) - 1  # the sums run over d = 1 .. n - 1 (at least d = 1)
    q = (p - 1) / p
    # q = 0 (one cluster): the second sum is empty of weight, RF is 1 exactly
    span = 0 if q == 0.0 else min(last, int(math.ceil(-39.2 / math.log(q))) + 1)
    head = min(last, max(span, RF_HEAD))
    h = s = 0.0
    for lo in range(1, head + 1, _RF_BLOCK):  # in blocks: O(1) memory at any p
        d = np.arange(lo, min(lo + _RF_BLOCK, head + 1), dtype=np.float64)
        w = d ** -alpha
        h += float(w.sum())
        if q > 0.0 and lo <= span:
            t = d <= span
            s += float(np.sum(q ** d[t] * w[t]))
    if last > head:
        h += _zeta_tail(alpha, head + 1, last)
    return float(p - (p / h) * s)


def _zeta_tail(alpha, a, b):
    """``sum_{d=a}^{b} d^-alpha`` by the Euler-Maclaurin formula (``a`` in the thousands)."""
    def f(x, k):  # the k-th derivative of x^-alpha, k in 0, 1, 3
        c = {0: 1.0, 1: -alpha, 3: -alpha * (alpha + 1) * (alpha + 2)}[k]
        return c * float(x) ** (-alpha - k)

    ratio = math.log(b / a)
    if abs(1.0 - alpha) * ratio < 1e-12:
        integral = ratio * a ** (1.0 - alpha)
    else:  # (b^(1-alpha) - a^(1-alpha)) / (1 - alpha), without cancellation near alpha = 1
        integral = a ** (1.0 - alpha) * math.expm1((1.0 - alpha) * ratio) / (1.0 - alpha)
    return (integral + (f(a, 0) + f(b, 0)) / 2 + (f(b, 1) - f(a, 1)) / 12
            - (f(b, 3) - f(a, 3)) / 720)


#: `random_rf_bound` sums ``h(alpha)`` term by term up to this degree.
RF_HEAD = 4096
_RF_BLOCK = 2**20
