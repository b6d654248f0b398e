"""What the clusters of a partitioned graph do and exchange.

A `Clustering` is the one form the mapping and the simulator see, whether it
came from a vertex cut (an edge partition, `from_edge_partition`) or from an
edge cut (a vertex partition, `from_vertex_partition`):

* every edge of the simple graph is a *task* of one cluster: the transfer of
  a value along a dependency, costing the edge's weight in cycles. Edges are
  oriented from the lower to the higher node id: IR graph nodes are numbered
  in execution order, so this is the direction of the dependency (for other
  graphs the id order stands in for an execution order);
* every vertex has a *home* cluster where its value is final: for a vertex
  cut, its master (the cluster holding most of its edge weight, as in
  PowerGraph); for an edge cut, its part. A cluster that computes part of a
  vertex (holds one of its in-edges) without being its home sends the partial
  result home (a *gather* message); the home sends the final value to every
  other cluster that uses it (holds an out-edge: a *scatter* message). One
  message per (vertex, cluster) pair, of ``value_bytes`` each.

For an edge cut the in-edges of a vertex are tasks of its own part, so it
only scatters, and, as in the source's evaluation ("the data communication
in edge-cut partitions comes from all the inter-cluster edges"), every cut
edge is a message of its own (``per_edge_messages``). A vertex cut has no
cut edges; its messages are those between the replicas of cut vertices.

`interactions` summarises a clustering per cluster: its work, the data
objects its tasks touch (from the IR graph's ``node_object`` and, with the
trace, their sizes), the bytes it exchanges with every other cluster in each
direction, and the execution order in which clusters start.
"""

from dataclasses import dataclass, field
from functools import cached_property

import numpy as np
from scipy import sparse

from ir_graph.edge_lists import cluster_sums, degrees, execution_order, is_oriented
from ir_graph.replicas import replica_table
from vcut_base import arrays
from vcut_base.arrays import unique
from vcut_base.errors import InputError

from .simulation_kernels import first_positions, object_clusters

__all__ = ["Clustering", "ClusterInteractions", "from_edge_partition", "from_vertex_partition",
           "interactions", "task_objects", "VALUE_BYTES"]

#: Bytes of one message: a value moves between cores as one 32-byte cache
#: block, as the coherence protocol of the Table 2 machine would move it.
VALUE_BYTES = 32


@dataclass(frozen=True, eq=False)
class Clustering:
    """Tasks (edges) with their cluster, vertices with their home cluster.

    The one form of a partitioned graph that the mapping (`place`) and the
    simulator (`simulate`) take, made by `from_edge_partition` (a vertex cut)
    or `from_vertex_partition` (an edge cut), or directly. Every edge is a
    task of its cluster costing its weight in cycles; every vertex is final at
    its home cluster, which receives a *gather* message from every other
    cluster that computes part of it (holds an in-edge) and sends a *scatter*
    message to every other cluster that uses it (holds an out-edge): one
    message per (vertex, cluster) pair (the module docstring).

    Attributes
    ----------
    n, p : int
        Vertices and clusters.
    src, dst : int64 ndarray
        Edge endpoints, ``src < dst`` (oriented by node id).
    weight : float64 ndarray
        Work of each task in cycles.
    cluster : int32 ndarray
        Cluster of each task.
    home : int32 ndarray
        Home cluster of each vertex (-1: no edges).
    obj : int64 ndarray
        Memory object of each task (-1: none): the object of ``dst`` when it
        accesses memory, else that of ``src`` (the edge weight's rule).
    kind : str
        ``"vertex-cut"`` or ``"edge-cut"``.
    method : str
        The partitioner's name.
    per_edge_messages : bool, default False
        Edge cuts: every task whose source is homed elsewhere receives its
        own message (one per cut edge) instead of one per (vertex, cluster).
    info : dict
        Free-form notes of whoever made it (empty by default).
    replicas : ir_graph.replicas.ReplicaTable, optional
        The tasks' replica table when the maker has it (`table` makes it
        otherwise).
    schedule : int ndarray, optional
        The tasks in the order the partitioner scheduled them (a topological
        order; ``par``): each cluster runs its tasks in this order instead of
        the execution order.

    See Also
    --------
    from_edge_partition, from_vertex_partition
    interactions : the per-cluster summary.

    Examples
    --------
    Two tasks, 0 -> 1 (10 cycles) in cluster 0 and 1 -> 2 (20 cycles) in
    cluster 1, with vertex 1 homed in cluster 1: cluster 0 computes vertex 1
    away from its home, so it sends one gather message, from cluster 0 to 1:

    >>> import numpy as np
    >>> from mapping import Clustering
    >>> cl = Clustering(n=3, p=2, src=np.array([0, 1]), dst=np.array([1, 2]),
    ...                 weight=np.array([10.0, 20.0]), cluster=np.array([0, 1], dtype=np.int32),
    ...                 home=np.array([0, 1, 1], dtype=np.int32), obj=np.array([-1, -1]),
    ...                 kind="vertex-cut", method="by hand")
    >>> vertex, frm, to, gather = cl.messages()
    >>> vertex.tolist(), frm.tolist(), to.tolist(), gather.tolist()
    ([1], [0], [1], [True])
    """

    n: int
    p: int
    src: np.ndarray
    dst: np.ndarray
    weight: np.ndarray
    cluster: np.ndarray
    home: np.ndarray
    obj: np.ndarray
    kind: str
    method: str
    per_edge_messages: bool = False
    info: dict = field(default_factory=dict)
    replicas: object = None
    schedule: np.ndarray = None

    @cached_property
    def table(self):
        """The `ir_graph.replicas.ReplicaTable` of the tasks (``replicas`` when given)."""
        if self.replicas is not None:
            return self.replicas
        return replica_table(self.src, self.dst, self.cluster, self.weight, self.n, self.p)

    @cached_property
    def order(self):
        """The order in which each cluster runs its tasks: `schedule` when the
        partitioner made one, else the execution order (by destination, then
        source) as `ir_graph.edge_lists.execution_order` gives it (None when the
        tasks are in it)."""
        if self.schedule is not None:
            return self.schedule
        return execution_order(self.src, self.dst)

    def messages(self):
        """Every message: ``(vertex, from_cluster, to_cluster, is_gather)``.

        Gathers (a partial result to the home) come first, then scatters (the
        final value from the home), each sorted by vertex then cluster.
        """
        if not self.per_edge_messages:
            t = self.table
            rv = t.vertex()
            home = self.home[rv]
            g = np.flatnonzero((t.n_in > 0) & (t.cluster != home))
            s = np.flatnonzero((t.n_out > 0) & (t.cluster != home))
            vert = np.concatenate([rv[g], rv[s]])
            frm = np.concatenate([t.cluster[g], home[s]]).astype(np.int32)
            to = np.concatenate([home[g], t.cluster[s]]).astype(np.int32)
            gather = np.concatenate([np.ones(len(g), bool), np.zeros(len(s), bool)])
            return vert, frm, to, gather
        p = np.int64(self.p)
        ind = unique(self.dst.astype(np.int64) * p + self.cluster)
        gv, gc = ind // p, (ind % p).astype(np.int32)
        order = np.lexsort((self.dst, self.src))
        sv, sc = self.src[order], self.cluster[order]
        g = gc != self.home[gv]
        s = sc != self.home[sv]
        vert = np.concatenate([gv[g], sv[s]])
        frm = np.concatenate([gc[g], self.home[sv[s]]]).astype(np.int32)
        to = np.concatenate([self.home[gv[g]], sc[s]]).astype(np.int32)
        gather = np.concatenate([np.ones(int(g.sum()), bool), np.zeros(int(s.sum()), bool)])
        return vert, frm, to, gather


@dataclass(frozen=True, eq=False)
class ClusterInteractions:
    """Per-cluster summary of a `Clustering` (what Algorithm 2 takes as input).

    Made by `interactions`. The properties ``p`` (clusters) and
    ``communication_bytes`` (``comm.sum()``) derive from the fields;
    ``shared_accesses()`` gives the memory tasks two clusters could serve from
    one cache, ``dependencies()`` the pairs ``(a, b)`` where ``b`` waits for
    data from ``a``.

    Attributes
    ----------
    work : float64 (p,)
        Sum of the task weights of each cluster (cycles).
    tasks : int64 (p,)
        Number of tasks.
    first : int64 (p,)
        Position of the cluster's first task in execution order (tasks sorted
        by destination, then source); ``len(tasks)`` for an empty cluster.
    comm : float64 (p, p)
        ``comm[a, b]``: bytes cluster ``a`` sends to cluster ``b``.
    messages : int
        Number of messages (``comm.sum() / value_bytes``).
    access : scipy.sparse.csr_matrix (p, objects)
        Memory tasks of each cluster per data object.
    object_bytes : float64 (objects,)
        Size of each object (0 when the sizes are unknown: a graph without its
        trace).
    footprint : float64 (p,)
        Bytes of the distinct objects each cluster touches.
    value_bytes : int
        Bytes of one message.

    See Also
    --------
    interactions

    Examples
    --------
    A chain 0 -> 1 -> 2 cut between its two tasks (10 and 20 cycles): cluster 1
    needs vertex 1, homed in cluster 0, so cluster 0 sends it one 32-byte value:

    >>> import numpy as np
    >>> from mapping import from_vertex_partition, interactions
    >>> cl = from_vertex_partition(np.array([0, 1]), np.array([1, 2]), np.array([10.0, 20.0]),
    ...                            parts=[0, 0, 1], p=2)
    >>> inter = interactions(cl)
    >>> inter.p, inter.work.tolist(), inter.tasks.tolist()
    (2, [10.0, 20.0], [1, 1])
    >>> inter.comm.tolist(), inter.messages, inter.communication_bytes
    ([[0.0, 32.0], [0.0, 0.0]], 1, 32.0)
    >>> inter.dependencies()
    [(0, 1)]
    """

    work: np.ndarray
    tasks: np.ndarray
    first: np.ndarray
    comm: np.ndarray
    messages: int
    access: object
    object_bytes: np.ndarray
    footprint: np.ndarray
    value_bytes: int

    @property
    def p(self):
        return int(len(self.work))

    @property
    def communication_bytes(self):
        return float(self.comm.sum())

    def shared_accesses(self):
        """``S[a, b] = sum_o min(access[a, o], access[b, o])`` (zero diagonal).

        The memory tasks two clusters could serve from one cache if they ran
        on one core. Cost: the sum over objects of (clusters touching it)^2.
        """
        p = self.p
        s = np.zeros((p, p))
        acc = self.access.tocsc()
        for o in range(acc.shape[1]):
            lo, hi = acc.indptr[o], acc.indptr[o + 1]
            if hi - lo < 2:
                continue
            cl = acc.indices[lo:hi]
            cnt = acc.data[lo:hi]
            s[np.ix_(cl, cl)] += np.minimum.outer(cnt, cnt)
        np.fill_diagonal(s, 0.0)
        return s

    def dependencies(self):
        """Pairs ``(a, b)`` where cluster ``b`` waits for data from ``a``."""
        a, b = np.nonzero(self.comm)
        return list(zip(a.tolist(), b.tolist()))


def _oriented(src, dst):
    """``(min, max)`` of every edge; the arrays themselves when already oriented (any
    sequence of integers is taken as an array)."""
    src, dst = np.asarray(src), np.asarray(dst)
    if is_oriented(src, dst):
        return src, dst
    s = src.astype(np.int64, copy=False)
    d = dst.astype(np.int64, copy=False)
    return np.minimum(s, d), np.maximum(s, d)


def task_objects(src, dst, node_object):
    """The memory object of each edge as a task (the mapping's and ``par``'s rule):
    the object of its later end (``max(src, dst)``, the node that runs it) when that
    accesses memory, else the earlier end's; -1 for none or without ``node_object``
    (int32 when the object ids fit)."""
    if node_object is None:
        return np.full(len(src), -1, dtype=np.int32)
    obj = np.asarray(node_object)
    dt = np.int32 if len(obj) == 0 or int(obj.max()) < 2**31 - 1 else np.int64
    out = obj[np.maximum(src, dst)].astype(dt, copy=False)
    miss = np.flatnonzero(out < 0)
    out[miss] = obj[np.minimum(src[miss], dst[miss])]
    return out



def _task_objects(u, v, node_object):
    """`task_objects`, spilled to disk where the session spills."""
    return arrays.spill(task_objects(u, v, node_object))


def from_edge_partition(part, node_object=None, method=None):
    """The `Clustering` of a vertex cut (a `vcut.EdgePartition`).

    The tasks are the partition's simple edges, oriented from the lower to the
    higher node id, each in its cluster (``part.simple_assignment``). A vertex's
    home is its master: the cluster holding most of its edge weight (ties: the
    lowest id), or the home the partitioner chose (``par``); its messages are
    those between the replicas of cut vertices.

    Parameters
    ----------
    part : vcut.EdgePartition
        The partition (`vcut.partition_graph`).
    node_object : array_like of int, shape (n,), optional
        Memory object of every node (``Graph.node_object``; -1: none), for the
        tasks' objects (`task_objects`). None: no task touches memory.
    method : str, optional
        The partitioner's name (default: ``part.info["algo"]``).

    Returns
    -------
    Clustering
        ``kind="vertex-cut"``, with the partitioner's schedule when it made one.

    See Also
    --------
    from_vertex_partition : the same for an edge cut.

    Examples
    --------
    A star (centre 0, four unit edges) split two and two: the centre is homed
    in cluster 0 (a tie of weights, the lowest id wins) and sends its value to
    cluster 1, which holds two of its out-edges (one scatter message):

    >>> import numpy as np
    >>> from ir_graph import Graph
    >>> from vcut import partition_graph
    >>> from mapping import from_edge_partition
    >>> star = Graph(n=5, src=np.array([0, 0, 0, 0]), dst=np.array([1, 2, 3, 4]),
    ...              weight=np.ones(4))
    >>> cl = from_edge_partition(partition_graph(star, 2, "wb-libra"))
    >>> cl.kind, cl.method, cl.cluster.tolist(), cl.home.tolist()
    ('vertex-cut', 'wb-libra', [0, 0, 1, 1], [0, 0, 0, 1, 1])
    >>> vertex, frm, to, gather = cl.messages()
    >>> vertex.tolist(), frm.tolist(), to.tolist(), gather.tolist()
    ([0], [0], [1], [False])
    """
    u, v = _oriented(part.src, part.dst)
    cluster = np.asarray(part.simple_assignment, dtype=np.int32)
    weight = np.asarray(part.weight, dtype=np.float64)
    p = int(part.info["p"])
    # masters from the partition's own edge directions (their weight sums, bit for bit),
    # unless the partitioner chose the homes
    table = replica_table(part.src, part.dst, cluster, weight, part.n, p)
    home = table.masters() if part.homes is None else np.asarray(part.homes, dtype=np.int32)
    if u is not part.src:  # re-oriented: the tasks' replica table is made when needed
        table = None
    return Clustering(
        n=int(part.n), p=p, src=u, dst=v, weight=weight, cluster=cluster,
        home=home, obj=_task_objects(u, v, node_object), kind="vertex-cut",
        method=method or part.info.get("algo", "?"), replicas=table,
        schedule=part.schedule,
    )


def from_vertex_partition(src, dst, weight, parts, p, node_object=None, method="edge-cut"):
    """The `Clustering` of an edge cut: vertex ``x`` in part ``parts[x]``.

    ``src``, ``dst``, ``weight`` are the simple graph (`vcut.partition.simplify`). A task
    (edge) runs in the part of its later endpoint, the consumer of the value.
    A vertex is homed in its part (-1 without edges) and only scatters; every
    cut edge is a message of its own (``per_edge_messages``).

    Parameters
    ----------
    src, dst : int ndarray, shape (m,)
        Edge endpoints (oriented here from the lower to the higher id). Give
        NumPy arrays: Python lists are not converted when already oriented.
    weight : array_like of float, shape (m,)
        Work of each task in cycles.
    parts : array_like of int, shape (n,)
        Part of every vertex, in ``0..p-1``.
    p : int
        Number of parts (clusters).
    node_object : array_like of int, shape (n,), optional
        Memory object of every node (``Graph.node_object``; -1: none).
    method : str, default "edge-cut"
        The partitioner's name.

    Returns
    -------
    Clustering
        ``kind="edge-cut"``, ``per_edge_messages=True``.

    Raises
    ------
    InputError
        A part id outside ``0..p-1``.

    See Also
    --------
    from_edge_partition : the same for a vertex cut.

    Examples
    --------
    A chain 0 -> 1 -> 2 with vertices 0, 1 in part 0 and vertex 2 in part 1:
    task 0 -> 1 runs in part 0 (vertex 1's), task 1 -> 2 in part 1 (vertex
    2's), which receives vertex 1's value from its home, part 0:

    >>> import numpy as np
    >>> from mapping import from_vertex_partition
    >>> cl = from_vertex_partition(np.array([0, 1]), np.array([1, 2]), np.array([10.0, 20.0]),
    ...                            parts=[0, 0, 1], p=2)
    >>> cl.kind, cl.cluster.tolist(), cl.home.tolist(), cl.per_edge_messages
    ('edge-cut', [0, 1], [0, 0, 1], True)
    >>> vertex, frm, to, gather = cl.messages()
    >>> vertex.tolist(), frm.tolist(), to.tolist(), gather.tolist()
    ([1], [0], [1], [False])
    >>> from_vertex_partition(np.array([0]), np.array([1]), np.array([1.0]), parts=[0, 2], p=2)
    Traceback (most recent call last):
    ...
    vcut_base.errors.InputError: a vertex partition into 2 parts has part ids outside 0..1
    """
    u, v = _oriented(src, dst)
    parts = np.asarray(parts, dtype=np.int32)
    if len(parts) and (parts.min() < 0 or parts.max() >= p):
        raise InputError(f"a vertex partition into {p} parts has part ids outside 0..{p - 1}")
    n = len(parts)
    home = np.where(degrees(u, v, n) > 0, parts, -1).astype(np.int32)
    return Clustering(
        n=n, p=int(p), src=u, dst=v, weight=np.asarray(weight, dtype=np.float64),
        cluster=parts[v], home=home, obj=_task_objects(u, v, node_object), kind="edge-cut",
        method=method, per_edge_messages=True,
    )


def interactions(cl, object_bytes=None, value_bytes=VALUE_BYTES):
    """Summarise a `Clustering` per cluster (see `ClusterInteractions`).

    Per cluster: its work (the sum of its task weights, cycles), its tasks, the
    position of its first task in execution order, the bytes it sends to every
    other cluster (``value_bytes`` per message of `Clustering.messages`), its
    memory tasks per data object and its footprint (the bytes of the distinct
    objects it touches).

    Parameters
    ----------
    cl : Clustering
        The clustering to summarise.
    object_bytes : array_like of float, optional
        Size of every memory object (``Trace.obj_size``); unknown sizes count 0.
        None: every size is 0 (a graph without its trace).
    value_bytes : int, default 32
        Bytes of one message (`VALUE_BYTES`: one cache block).

    Returns
    -------
    ClusterInteractions

    Raises
    ------
    InputError
        Fewer object sizes than the objects the tasks touch (the sizes are not
        the graph's trace's).

    Examples
    --------
    A chain 0 -> 1 -> 2 cut between its tasks; node 1 touches object 0 (64
    bytes), node 2 object 1 (128 bytes), so each task touches the object of
    its later node:

    >>> import numpy as np
    >>> from mapping import from_vertex_partition, interactions
    >>> cl = from_vertex_partition(np.array([0, 1]), np.array([1, 2]), np.array([10.0, 20.0]),
    ...                            parts=[0, 0, 1], p=2, node_object=np.array([-1, 0, 1]))
    >>> inter = interactions(cl, object_bytes=[64, 128])
    >>> inter.work.tolist(), inter.comm.tolist()
    ([10.0, 20.0], [[0.0, 32.0], [0.0, 0.0]])
    >>> inter.access.toarray().tolist(), inter.footprint.tolist()
    ([[1.0, 0.0], [0.0, 1.0]], [64.0, 128.0])
    >>> interactions(cl, value_bytes=8).comm.tolist()
    [[0.0, 8.0], [0.0, 0.0]]
    >>> interactions(cl, object_bytes=[64])
    Traceback (most recent call last):
    ...
    vcut_base.errors.InputError: 1 object sizes for a graph that touches 2 objects: ...
    """

    p = cl.p
    work, tasks = cluster_sums(cl.cluster, np.asarray(cl.weight, dtype=np.float64), int(p))
    first = first_positions(cl.cluster if cl.order is None else cl.cluster[cl.order], p)
    _, frm, to, _ = cl.messages()
    comm = (np.bincount(frm.astype(np.int64) * p + to, minlength=p * p)
            .reshape(p, p) * float(value_bytes))
    n_obj = max(int(cl.obj.max()) + 1, 0) if len(cl.obj) else 0
    if object_bytes is not None:
        object_bytes = np.asarray(object_bytes, dtype=np.float64)
        if len(object_bytes) < n_obj:
            raise InputError(f"{len(object_bytes)} object sizes for a graph that touches "
                             f"{n_obj} objects: the trace is not the graph's")
        n_obj = len(object_bytes)
    else:
        object_bytes = np.zeros(n_obj)
    indptr, indices, data = object_clusters(cl.obj, cl.cluster, n_obj, p)
    access = sparse.csc_matrix((data, indices, indptr), shape=(p, n_obj)).tocsr()
    touched = access.copy()
    touched.data[:] = 1.0
    footprint = np.asarray(touched @ object_bytes).ravel() if n_obj else np.zeros(p)
    return ClusterInteractions(
        work=work, tasks=tasks, first=first, comm=comm, messages=len(frm), access=access,
        object_bytes=object_bytes, footprint=footprint, value_bytes=int(value_bytes),
    )
