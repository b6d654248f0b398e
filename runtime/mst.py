"""Minimum spanning forest by Borůvka's algorithm, on the CPU or a GPU.

``minimum_spanning_forest(graph, device="cpu")`` returns the forest's edges
(indices into the graph's edge arrays), its total weight, the number of trees
and the tree of every vertex. Edges are taken as undirected whatever the
graph's direction (as scipy's ``minimum_spanning_tree`` does); self-loops are
ignored, parallel edges allowed.

Ties are broken by position in the edge list: edges are ranked by (weight,
position) once on the host, so all keys differ, the forest is unique and the
same on both devices and every run (Kruskal's forest under the same
order). The rounds are in `runtime.mst_kernels` (CPU, numba) and
`runtime.mst_gpu` (numba.cuda); this module prepares the ranked edges and
the rank-ordered adjacency and checks the memory first.
"""

import time
from dataclasses import dataclass, field

import numpy as np
from numba import get_num_threads

from vcut_base.errors import InputError
from vcut_base.memory import check_memory, format_bytes
from ir_graph.graph import index_dtype

from .gpu import device_memory, resolve_device
from .mst_kernels import boruvka, labels, rank_order, ranked_ends
from .traversal_kernels import symmetric_csr

__all__ = ["SpanningForest", "minimum_spanning_forest", "memory_bytes"]


@dataclass(frozen=True, eq=False)
class SpanningForest:
    """A minimum spanning forest.

    edges : int64 array, increasing
        Indices of the forest's edges in ``graph.src`` / ``dst`` / ``weight``.
    weight : float
        Their total weight.
    components : int
        Trees, isolated vertices included (``n - len(edges)``).
    component : int64 array (n)
        The representative vertex of each vertex's tree.
    rounds : int
        Borůvka rounds.
    device : str
    seconds : float
        The rounds (kernels), without the preparation (``info["prepare_seconds"]``).
    info : dict
        ``prepare_seconds``, ``memory_bytes``, ``edges_examined``; on the GPU
        also ``host_syncs`` and ``launches``.
    """

    edges: np.ndarray
    weight: float
    components: int
    component: np.ndarray
    rounds: int
    device: str
    seconds: float
    info: dict = field(default_factory=dict)


def memory_bytes(n, m):
    """Working memory of `minimum_spanning_forest` for ``n`` vertices and ``m`` edges
    (self-loops included), in bytes: the ranked endpoints and the rank-ordered
    adjacency in 4- or 8-byte indices, the rank order, the forest flags, offsets,
    union-find, and eight int64 arrays of n (cursors, proposals, the two pairs of
    alternating vertex and root lists, targets, labels)."""
    b = np.dtype(index_dtype(max(n, 2 * m))).itemsize
    return int(2 * m * b + 4 * m * b + 8 * m + m + 8 * (n + 1) + n * (b + 8 * 8))


def minimum_spanning_forest(graph, device="cpu"):
    """Borůvka's minimum spanning forest of ``graph`` (edges undirected).

    Edges are taken as undirected whatever the graph's direction; self-loops
    are ignored, parallel edges allowed. Ties are broken by position in the
    edge list, so the forest is unique: the same on both devices and every
    run (Kruskal's forest under the same order). The working memory is
    checked (`memory_bytes`) before anything is allocated.

    Parameters
    ----------
    graph : ir_graph.Graph
        Finite weights (``read_graph`` and the generators check them).
    device : {"cpu", "gpu", "auto"}, default "cpu"
        ``gpu`` is refused with one line where there is none; ``auto`` takes
        the GPU when there is one.

    Returns
    -------
    SpanningForest
        ``edges`` (increasing indices into the graph's edge arrays),
        ``weight`` (their total), ``components`` (trees, isolated vertices
        included), ``component`` (the representative vertex of each
        vertex's tree), ``rounds``, ``device``, ``seconds`` (the rounds) and
        ``info``.

    Raises
    ------
    InputError
        Unknown device, no GPU for ``gpu``, non-finite weights, or a graph
        whose working memory does not fit (host or device).
    GraphFormatError
        A graph that fails `ir_graph.Graph.validate` (ids out of range, negative
        weights, arrays of different lengths).

    Examples
    --------
    Two triangles joined by a heavy edge (2-3), a self-loop at 5, and an
    isolated vertex 6:

    >>> import numpy as np
    >>> from ir_graph import Graph
    >>> from runtime import minimum_spanning_forest
    >>> g = Graph(n=7, src=np.array([0, 0, 1, 3, 3, 4, 2, 5]),
    ...           dst=np.array([1, 2, 2, 4, 5, 5, 3, 5]),
    ...           weight=np.array([1.0, 3, 2, 1, 1, 2, 5, 0]))
    >>> f = minimum_spanning_forest(g)
    >>> f.edges.tolist(), f.weight, f.components
    ([0, 2, 3, 4, 6], 10.0, 2)
    >>> f.component.tolist(), f.device
    ([0, 0, 0, 0, 0, 0, 6], 'cpu')
    >>> minimum_spanning_forest(Graph(n=2, src=np.array([0]), dst=np.array([1]),
    ...                               weight=np.array([np.inf])))
    Traceback (most recent call last):
        ...
    vcut_base.errors.InputError: edge 0 has weight inf: a spanning forest needs finite weights;
    fix or drop that edge
    """
    dev = resolve_device(device)
    n, m = int(graph.n), int(graph.m)
    w = np.asarray(graph.weight, dtype=np.float64)
    if m and not np.isfinite(w).all():
        k = int(np.flatnonzero(~np.isfinite(w))[0])
        raise InputError(f"edge {k} has weight {w[k]}: a spanning forest needs finite weights; "
                         "fix or drop that edge")
    graph.validate()  # ids in range, array shapes: before any kernel reads them
    need = memory_bytes(n, m)
    if dev == "gpu":
        have = device_memory()
        if need > have:
            raise InputError(f"a spanning forest of {n:,} vertices and {m:,} edges needs about "
                             f"{format_bytes(need)} of GPU memory but {format_bytes(have)} are "
                             "free; use --device cpu")
    check_memory(need, f"a spanning forest of {n:,} vertices and {m:,} edges",
                 "use a machine with more memory")
    t0 = time.perf_counter()
    idx = index_dtype(max(n, 2 * m))
    src = np.asarray(graph.src)
    dst = np.asarray(graph.dst)
    keep = np.flatnonzero(src != dst)
    threads = get_num_threads()
    rank = rank_order(w[keep], threads)  # = argsort(kind="stable"), radix
    eu, ev = ranked_ends(src, dst, keep, rank, np.zeros(0, dtype=idx))
    order = keep[rank]  # rank -> edge position
    parent = np.arange(n, dtype=idx)
    forest = np.zeros(len(order), dtype=np.uint8)
    t1 = time.perf_counter()
    info = {"memory_bytes": need}
    if dev == "gpu":
        from .mst_gpu import boruvka_gpu  # lazy: numba.cuda is optional

        rounds, examined, component, forest, extra = boruvka_gpu(n, eu, ev, parent, forest, threads)
        seconds = extra.pop("kernel_seconds")
        extra["launches"] = extra.pop("level_launches")
        info.update(extra)  # upload and download: overhead_seconds
    else:
        indptr, adj, erank = symmetric_csr(n, eu, ev, threads)
        t1 = time.perf_counter()
        rounds, examined = boruvka(indptr, adj, erank, eu, ev, parent, forest)
        component = labels(parent)
        seconds = time.perf_counter() - t1
    info["prepare_seconds"] = t1 - t0
    info["edges_examined"] = int(examined)
    edges = np.sort(order[forest.astype(bool)]).astype(np.int64)
    weight = float(w[edges].sum()) if len(edges) else 0.0
    return SpanningForest(edges=edges, weight=weight, components=n - len(edges),
                          component=np.asarray(component, dtype=np.int64), rounds=int(rounds),
                          device=dev, seconds=seconds, info=info)
