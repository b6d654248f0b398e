"""The graph object shared by ir_graph, vcut and mapping.

A `Graph` is a COO edge list (``src``, ``dst``, ``weight``) over nodes
``0..n-1`` with optional node attributes. IR graphs are directed DAGs whose
node ids follow execution order (every edge has ``src < dst``); graphs read
from files are taken as undirected unless the format says otherwise. Index
arrays are int32 while ids fit, int64 beyond (`index_dtype`).
"""

from dataclasses import dataclass, field

import numpy as np

from vcut_base.arrays import unique
from vcut_base.errors import (
    QUOTE_CHARS,
    GraphFormatError,
    InputError,
    InputTooLarge,
    excerpt,
)
from vcut_base.memory import check_memory

from .windows import roi_bounds

__all__ = ["Graph", "index_dtype", "check_node_count", "OPCLASSES", "BYTES_PER_NODE", "MAX_NODES"]

#: Opcode classes of IR nodes (``node_opclass``), in code order.
OPCLASSES = (
    "memory",  # load, store, atomics, memcpy/memmove/memset
    "int",  # integer arithmetic and logic
    "float",  # floating-point arithmetic
    "compare",  # icmp, fcmp, select
    "cast",  # conversions
    "address",  # getelementptr
    "control",  # br, switch, ret, phi, unreachable
    "call",  # calls (other than memory intrinsics)
    "alloca",
    "other",
)


#: Bytes the packages allocate per node of a graph (degrees, CSR offsets, distances,
#: replica sets, ...): a graph whose node count times this exceeds the available
#: memory is refused when validated, before anything is allocated for it.
BYTES_PER_NODE = 64

#: Bytes allocated per memory-object id (``node_object``) by the mapping.
BYTES_PER_OBJECT = 16

#: Largest node count a graph may declare (ids and counts are int64).
MAX_NODES = 2**62


def index_dtype(n):
    """int32 when ``n`` ids (and as many edges) fit, else int64."""
    return np.int32 if n < 2**31 - 1 else np.int64


def check_node_count(n, where):
    """Refuse a declared node count that is negative, absurd or beyond memory.

    Parameters
    ----------
    n : int
    where : str
        File (and line) for the message.

    Raises
    ------
    GraphFormatError
        Negative, or beyond `MAX_NODES`.
    InputTooLarge
        Its per-node arrays would need more memory than is available.
    """
    if n < 0 or n > MAX_NODES:
        text = str(n)  # a count of 4,000 digits is quoted in part
        shown = text if len(text) <= QUOTE_CHARS else excerpt(text)
        if n < 0:
            raise GraphFormatError(f"{where}: negative node count {shown}")
        raise GraphFormatError(f"{where}: node count {shown} is beyond the {MAX_NODES} vcut "
                               "supports; the count in the file is wrong")
    check_memory(n * BYTES_PER_NODE, f"{where}: a graph of {n:,} nodes",
                 "check the node count of the file, or use a machine with more memory",
                 error=InputTooLarge)


@dataclass(frozen=True, eq=False)
class Graph:
    """A weighted graph as COO arrays with optional node attributes.

    Attributes
    ----------
    n : int
        Number of nodes.
    src, dst : ndarray of int
        Edge endpoints (`index_dtype`).
    weight : ndarray of float64
        Edge weights (non-negative, finite).
    directed : bool
        Whether edge direction is meaningful (IR graphs: True).
    node_sid : ndarray of int32, optional
        IR graphs: static instruction id of each node.
    node_opclass : ndarray of uint8, optional
        IR graphs: opcode class (index into `OPCLASSES`).
    node_object : ndarray of int32 (int64 beyond 2**31 objects), optional
        IR graphs: memory object touched (index into the trace's objects; -1).
    node_depth : ndarray of int32, optional
        IR graphs: call depth of each node's activation (0: the program's entry).
        The nodes of a call, with those of its callees, are a stretch of the
        run: from a node deeper than the one before it to the last node before
        the depth drops below its own (`vcut.parallel.call_grains`).
    node_weight : ndarray of float64, optional
        Vertex weights (METIS files with vertex weights).
    edge_kind : ndarray of uint8, optional
        IR graphs: dependency kinds (bits of ``ir_graph.dependency_kernels.KIND_*``).
    labels : ndarray of int64, optional
        Original ids of the nodes when a file's ids were renumbered.
    roi_starts : ndarray of int64, optional
        IR graphs of traces made with ``--roi``: the node where each
        activation of the region of interest begins, strictly increasing
        (activation ``k`` is nodes ``roi_starts[k] .. roi_starts[k + 1] - 1``,
        the last runs to the end; `roi_window`). None: not recorded.
    meta : dict
        Provenance (source file, trace, weight model, ...).
    source : frontend.source.SourceMap, optional
        IR graphs built from a trace in this process: the names of its
        functions, lines and memory objects (`frontend.source`). Not written
        to graph files; windows keep it.
    control : ir_graph.control.ControlFlow, optional
        IR graphs built from a trace in this process with a control model
        (`build_graph`'s ``control``): the control dependences of the nodes, for
        the other models' figures (`ir_graph.control.model_table`). Not written
        to graph files; windows cut it.

    Notes
    -----
    The constructor checks nothing; `validate` checks every array (ids in
    range, finite non-negative weights, attribute lengths, a node count that
    fits in memory) and raises `GraphFormatError` (or `InputTooLarge`).
    `read_graph`, `build_graph` and `from_networkx` return validated graphs.

    See Also
    --------
    build_graph : the graph of a trace.
    read_graph, write_graph : graph files.

    Examples
    --------
    A square 0-1-2-3 with the diagonal 0-2:

    >>> import numpy as np
    >>> from ir_graph import Graph
    >>> g = Graph(n=4, src=np.array([0, 1, 2, 3, 0]), dst=np.array([1, 2, 3, 0, 2]),
    ...           weight=np.array([1.0, 2.0, 1.0, 2.0, 5.0]))
    >>> g.validate().m, g.total_weight, g.degrees().tolist()
    (5, 11.0, [3, 2, 3, 2])

    Nodes 1 and 2 alone, renumbered from 0 (two edges come in, one goes out):

    >>> w = g.window(1, 3)
    >>> w.n, w.m, w.meta["window"]["edges_in"], w.meta["window"]["edges_out"]
    (2, 1, 2, 1)
    >>> Graph(n=3, src=np.array([0]), dst=np.array([3]), weight=np.array([1.0])).validate()
    Traceback (most recent call last):
        ...
    vcut_base.errors.GraphFormatError: graph: edge target 3 out of range 0..2
    """

    n: int
    src: np.ndarray
    dst: np.ndarray
    weight: np.ndarray
    directed: bool = False
    node_sid: np.ndarray = None
    node_opclass: np.ndarray = None
    node_object: np.ndarray = None
    node_depth: np.ndarray = None
    node_weight: np.ndarray = None
    edge_kind: np.ndarray = None
    labels: np.ndarray = None
    roi_starts: np.ndarray = None
    meta: dict = field(default_factory=dict)
    source: object = None
    control: object = None

    @property
    def m(self):
        """Number of edges."""
        return int(len(self.src))

    def vertex_ids(self):
        """The id of each node in the file it was read from (int64, length n).

        ``labels`` when the reader renumbered them (edge lists); otherwise the
        index plus the format's first id (``meta["id_base"]``: 1 for METIS,
        Matrix Market and LG, 0 for edge lists vcut wrote and ``.npz``).
        """
        if self.labels is not None:
            return np.asarray(self.labels, dtype=np.int64)
        return np.arange(self.n, dtype=np.int64) + int(self.meta.get("id_base", 0))

    def index_of(self, vertex_id):
        """The node index of the file's vertex ``vertex_id``; `InputError` when there is none."""
        ids = self.vertex_ids()
        k = int(np.searchsorted(ids, vertex_id)) if self.n else 0
        if k >= self.n or ids[k] != vertex_id:
            span = f"{int(ids[0])}..{int(ids[-1])}" if self.n else "none"
            raise InputError(f"vertex {vertex_id} is not in the graph (its ids: {span}"
                             f"{', not all of them' if self.labels is not None else ''}); "
                             "give one of the file's own vertex ids")
        return k

    @property
    def total_weight(self):
        return float(self.weight.sum())

    def window(self, start, end):
        """The subgraph of nodes ``start .. end - 1``, renumbered from 0.

        For an IR graph the nodes are the executed instructions in execution
        order, so this is a contiguous slice of the run. Edges with an end
        outside the slice are dropped; their count is in
        ``meta["window"]["edges_in"]`` (values the slice receives from before
        it) and ``["edges_out"]`` (values it leaves to after it). The ROI
        activations that begin inside the slice are kept (``roi_starts``).

        Raises
        ------
        InputError
            ``start``/``end`` not ``0 <= start < end <= n``.
        """
        n = int(self.n)
        if not (0 <= start < end <= n):
            raise InputError(f"window {start}:{end} is not a slice of the {n:,} nodes; give "
                             f"START:END with 0 <= START < END <= {n}")
        s, d = self.src, self.dst
        inside_s = (s >= start) & (s < end)
        inside_d = (d >= start) & (d < end)
        keep = inside_s & inside_d
        edges_in = int(np.count_nonzero(inside_d & ~inside_s))
        edges_out = int(np.count_nonzero(inside_s & ~inside_d))
        del inside_s, inside_d
        idx = np.flatnonzero(keep)
        del keep
        idt = index_dtype(max(end - start, len(idx)))
        cut = slice(start, end)

        def nodes(a):
            return None if a is None else a[cut].copy()

        meta = dict(self.meta)
        meta["window"] = {"start": int(start), "end": int(end), "nodes_of_run": n,
                          "edges_in": edges_in, "edges_out": edges_out}
        roi = self.roi_starts
        if roi is not None:
            roi = roi[(roi >= start) & (roi < end)].astype(np.int64) - start
        return Graph(
            n=end - start, src=(s[idx] - start).astype(idt), dst=(d[idx] - start).astype(idt),
            weight=self.weight[idx], directed=self.directed, node_sid=nodes(self.node_sid),
            node_opclass=nodes(self.node_opclass), node_object=nodes(self.node_object),
            node_depth=nodes(self.node_depth), node_weight=nodes(self.node_weight),
            edge_kind=None if self.edge_kind is None else self.edge_kind[idx],
            labels=nodes(self.labels), roi_starts=roi, meta=meta, source=self.source,
            control=None if self.control is None else self.control.window(start, end),
        )

    def roi_window(self, first, stop=None):
        """The subgraph of ROI activations ``first .. stop - 1`` (`window` of their nodes).

        ``stop`` None: activation ``first`` alone. ``meta["window"]`` also
        holds ``roi_activations``: ``{"first", "stop", "of"}`` (``of``: how
        many the graph has).

        Raises
        ------
        InputError
            The graph records no ROI activations (``roi_starts``), or the
            activations asked for are not among them.
        """
        stop = first + 1 if stop is None else stop
        start, end = roi_bounds(self.roi_starts, self.n, first, stop)
        g = self.window(start, end)
        g.meta["window"]["roi_activations"] = {"first": int(first), "stop": int(stop),
                                               "of": len(self.roi_starts)}
        return g

    def validate(self, where="graph"):
        """Check every array before any kernel sees it; raise `GraphFormatError`.

        The node count must be an integer that fits in memory; ``src`` and
        ``dst`` one-dimensional integer arrays of ids ``0..n-1``; weights
        one-dimensional real arrays of finite non-negative numbers whose sum
        is finite; node attributes one-dimensional integer arrays of ``n``
        entries (``node_object`` >= -1), ``edge_kind`` of ``m``. O(n + m).
        """
        if isinstance(self.n, (bool, np.bool_)) or not isinstance(self.n, (int, np.integer)):
            raise GraphFormatError(f"{where}: the node count must be an integer, got {self.n!r}")
        n = int(self.n)
        check_node_count(n, where)
        src = _array(self.src, where, "edge sources", "iu")
        m = len(src)
        _array(self.dst, where, "edge targets", "iu")
        _array(self.weight, where, "edge weights", "iuf")
        if len(self.dst) != m or len(self.weight) != m:
            raise GraphFormatError(
                f"{where}: {m} sources, {len(self.dst)} targets and {len(self.weight)} weights"
            )
        for name, arr in (("source", self.src), ("target", self.dst)):
            if m and (arr.min() < 0 or arr.max() >= n):
                bad = int(arr[(arr < 0) | (arr >= n)][0])
                raise GraphFormatError(f"{where}: edge {name} {bad} out of range 0..{n - 1}")
        _check_weights(self.weight, where, "edge")
        if self.node_weight is not None:
            _array(self.node_weight, where, "vertex weights", "iuf")
            if len(self.node_weight) != n:
                raise GraphFormatError(f"{where}: {len(self.node_weight)} vertex weights for {n} nodes")
            _check_weights(self.node_weight, where, "vertex")
        for name in ("node_sid", "node_opclass", "node_object", "node_depth", "labels"):
            arr = getattr(self, name)
            if arr is not None:
                _array(arr, where, name, "iu")
                if len(arr) != n:
                    raise GraphFormatError(f"{where}: {name} has {len(arr)} entries for {n} nodes")
        if self.node_object is not None and n:
            lo, hi = int(self.node_object.min()), int(self.node_object.max())
            if lo < -1:
                raise GraphFormatError(f"{where}: node_object {lo} is not an object id (>= 0) or -1")
            check_memory((hi + 1) * BYTES_PER_OBJECT, f"{where}: memory object ids up to {hi:,}",
                         "the graph file's node_object array is corrupt; rebuild it with "
                         "'vcut graph'", error=InputTooLarge)
        if self.node_depth is not None and n and int(self.node_depth.min()) < 0:
            raise GraphFormatError(f"{where}: node_depth {int(self.node_depth.min())} is not a "
                                   "call depth (>= 0); rebuild the graph with 'vcut graph'")
        if self.roi_starts is not None:
            _check_roi_starts(self.roi_starts, n, where)
        if self.edge_kind is not None:
            _array(self.edge_kind, where, "edge_kind", "iu")
            if len(self.edge_kind) != m:
                raise GraphFormatError(f"{where}: edge_kind has {len(self.edge_kind)} entries for {m} edges")
        return self

    # -- derived views -------------------------------------------------------
    def degrees(self):
        """Total degree of every node (in + out; a self-loop counts twice)."""
        return np.bincount(self.src, minlength=self.n) + np.bincount(self.dst, minlength=self.n)

    def undirected_csr(self):
        """``(indptr, indices)`` of the symmetric adjacency (duplicates kept)."""
        u = np.concatenate([self.src, self.dst]).astype(np.int64)
        v = np.concatenate([self.dst, self.src]).astype(np.int64)
        order = np.argsort(u, kind="stable")
        indptr = np.zeros(self.n + 1, dtype=np.int64)
        np.cumsum(np.bincount(u, minlength=self.n), out=indptr[1:])
        return indptr, v[order]

    def simple_counts(self):
        """``(self_loops, duplicate_edges)`` as the undirected simple graph sees them."""
        loops = int(np.count_nonzero(self.src == self.dst))
        a = np.minimum(self.src, self.dst).astype(np.int64)
        b = np.maximum(self.src, self.dst).astype(np.int64)
        keys = a * np.int64(max(self.n, 1)) + b
        dup = len(keys) - len(unique(keys))
        return loops, int(dup)

    # -- networkx ------------------------------------------------------------
    def to_networkx(self):
        """A networkx (Multi)(Di)Graph with ``weight`` edge attributes.

        Parallel edges are kept (a MultiGraph is returned when there are any).
        """
        import networkx as nx  # lazy: slow to import, needed by this method alone

        loops, dup = self.simple_counts() if not self.directed else (0, self._directed_dups())
        if self.directed:
            g = nx.MultiDiGraph() if dup else nx.DiGraph()
        else:
            g = nx.MultiGraph() if dup else nx.Graph()
        g.add_nodes_from(range(self.n))
        g.add_weighted_edges_from(
            zip(self.src.tolist(), self.dst.tolist(), self.weight.tolist())
        )
        return g

    def _directed_dups(self):
        keys = self.src.astype(np.int64) * np.int64(max(self.n, 1)) + self.dst
        return len(keys) - len(unique(keys))

    @classmethod
    def from_networkx(cls, g, weight="weight", default_weight=1.0):
        """Build from a networkx graph; nodes are numbered in ``g.nodes`` order."""
        nodes = list(g.nodes)
        index = {v: k for k, v in enumerate(nodes)}
        edges = list(g.edges(data=True))
        idt = index_dtype(max(len(nodes), len(edges)))
        src = np.array([index[u] for u, _, _ in edges], dtype=idt)
        dst = np.array([index[v] for _, v, _ in edges], dtype=idt)
        w = np.array([float(d.get(weight, default_weight)) for _, _, d in edges], dtype=np.float64)
        labels = None
        if nodes != list(range(len(nodes))):
            try:
                labels = np.array(nodes, dtype=np.int64)
            except (TypeError, ValueError):
                labels = None
        return cls(n=len(nodes), src=src, dst=dst, weight=w, directed=g.is_directed(),
                   labels=labels).validate("networkx graph")


def _array(a, where, what, kinds):
    """``a`` as a one-dimensional array whose dtype kind is in ``kinds``."""
    if not isinstance(a, np.ndarray) or a.ndim != 1 or a.dtype.kind not in kinds:
        shape = getattr(a, "shape", None)
        dtype = getattr(a, "dtype", type(a).__name__)
        need = "integers" if kinds == "iu" else "real numbers"
        raise GraphFormatError(f"{where}: {what} must be a one-dimensional array of {need}, "
                               f"got {dtype} of shape {shape}")
    return a


def _check_roi_starts(r, n, where):
    """``r``: strictly increasing node indices in ``0..n-1``."""
    _array(r, where, "roi_starts", "iu")
    if len(r) == 0:
        return
    if int(r[0]) < 0 or int(r[-1]) >= n:
        k = 0 if int(r[0]) < 0 else len(r) - 1
        raise GraphFormatError(f"{where}: roi_starts[{k}] = {int(r[k])} is not a node "
                               f"(0..{n - 1}); rebuild the file with 'vcut graph'")
    step = np.diff(r.astype(np.int64))
    if (step <= 0).any():
        k = int(np.flatnonzero(step <= 0)[0]) + 1
        raise GraphFormatError(f"{where}: roi_starts[{k}] = {int(r[k])} does not come after "
                               f"roi_starts[{k - 1}] = {int(r[k - 1])} (ROI activations begin "
                               "in execution order); rebuild the file with 'vcut graph'")


def _check_weights(w, where, what):
    if len(w) == 0:
        return
    bad = ~np.isfinite(w)
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        raise GraphFormatError(f"{where}: {what} weight {w[k]} at index {k} is not a finite number")
    if (w < 0).any():
        k = int(np.flatnonzero(w < 0)[0])
        raise GraphFormatError(f"{where}: {what} weight {w[k]} at index {k} is negative")
    with np.errstate(over="ignore"):
        total = float(np.sum(w, dtype=np.float64))
    if not np.isfinite(total):
        raise GraphFormatError(f"{where}: the {what} weights sum to more than {np.finfo(np.float64).max:.4g} "
                               f"(the largest is {float(np.max(w)):.6g}); scale the weights down")
