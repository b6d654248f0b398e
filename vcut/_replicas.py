"""Linear-time kernels over edge lists: simple graphs, replica tables, execution order.

Everything here replaces a sort of ``|E|``-sized keys (``numpy.unique``,
``lexsort``) by counting passes over a vertex-indexed CSR, so that the cost
is ``O(|V| + |E|)`` in time and a few words per edge of scratch memory, and
the results are the same as those of the sorting formulation (tests compare
them).

* `simple_edges`: the simple undirected graph of an edge list (self-loops out,
  repeats merged), in order of first appearance; the identity (no copies)
  when the list is simple already, as IR graphs are.
* `replica_table`: the replicas ``(v, c)`` of an edge partition (cluster ``c``
  holds an edge of ``v``), sorted by vertex then cluster, with their edge
  weight and in/out edge counts, and each edge's two replicas.
* `execution_order`: the permutation that sorts edges by (dst, src), without
  a global sort when the list is sorted by dst already (IR graphs are).
"""

from dataclasses import dataclass

import numpy as np

from vcut_base import arrays
from vcut_base.jitcache import njit
from vcut_base.memory import check_memory
from ir_graph.graph import index_dtype

__all__ = ["ReplicaTable", "replica_table", "replica_counts", "is_oriented", "simple_edges",
           "execution_order", "sort_run"]


@njit(cache=True)
def sort_run(a, lo, hi):
    """Sort ``a[lo:hi]`` in place: insertion sort for the few entries a vertex's
    or an object's cluster list usually has, ``numpy.sort`` beyond 32."""
    if hi - lo > 32:
        a[lo:hi] = np.sort(a[lo:hi])
        return
    for j in range(lo + 1, hi):
        x = a[j]
        i = j - 1
        while i >= lo and a[i] > x:
            a[i + 1] = a[i]
            i -= 1
        a[i + 1] = x


@njit(cache=True)
def _group_by_max(src, dst, n, ptr, idx):
    """Counting sort of the edges by their larger endpoint (stable)."""
    for e in range(len(src)):
        b = max(src[e], dst[e])
        ptr[b + 1] += 1
    for v in range(n):
        ptr[v + 1] += ptr[v]
    fill = ptr[:-1].copy()
    for e in range(len(src)):
        b = max(src[e], dst[e])
        idx[fill[b]] = e
        fill[b] += 1


@njit(cache=True)
def _first_of_pair(src, dst, n, ptr, idx, rep):
    """``rep[e]``: the first edge of ``e``'s unordered pair (-1 for a self-loop).

    Returns the number of self-loops and of repeated (non-first) edges.
    """
    mark = np.full(n, -1, dtype=np.int64)
    first = np.empty(n, dtype=np.int64)
    loops = 0
    repeats = 0
    for b in range(n):
        for k in range(ptr[b], ptr[b + 1]):
            e = idx[k]
            a = min(src[e], dst[e])
            if a == b:
                rep[e] = -1
                loops += 1
            elif mark[a] == b:
                rep[e] = first[a]
                repeats += 1
            else:
                mark[a] = b
                first[a] = e
                rep[e] = e
    return loops, repeats


@njit(cache=True, nogil=True)
def _simple_by_dst(src, dst):
    """Whether every edge has ``src < dst``, the edges are sorted by ``dst`` and no
    ``src`` repeats within a run of equal ``dst`` (runs of at most 16 edges;
    longer ones answer False): then the graph is simple. One pass over IR
    graphs, whose edges are made in that order with a few operands each."""
    lo = 0
    for e in range(len(src)):
        if src[e] >= dst[e]:
            return False
        if e and dst[e] != dst[e - 1]:
            if dst[e] < dst[e - 1]:
                return False
            lo = e
        if e - lo >= 16:
            return False
        for f in range(lo, e):
            if src[f] == src[e]:
                return False
    return True


def simple_edges(src, dst, weight, n):
    """The simple undirected graph of an edge list.

    Returns
    -------
    src, dst, weight : ndarray
        One edge per unordered pair, in order of first appearance, with the
        summed weight of its repetitions (the input arrays themselves when
        there is nothing to merge).
    input_edge : int64 ndarray or None
        For every input edge its simple edge (-1 for a self-loop); None
        when the simple graph is the input (the identity).
    loops, repeats : int
    """
    m = len(src)
    n = max(int(n), 1)
    if _simple_by_dst(src, dst):  # simple already, known in one pass
        return src, dst, np.asarray(weight, dtype=np.float64), None, 0, 0
    check_memory(8.0 * (2 * n + 1) + 2 * arrays.resident(8.0 * m),
                 f"merging repeated edges of {m:,} edges", "use a machine with more memory")
    ptr = np.zeros(n + 1, dtype=np.int64)
    idx = arrays.empty(m, index_dtype(m))  # spill files under --spill
    _group_by_max(src, dst, n, ptr, idx)
    rep = arrays.empty(m, np.int64)
    loops, repeats = _first_of_pair(src, dst, n, ptr, idx, rep)
    del ptr, idx
    if loops == 0 and repeats == 0:
        return src, dst, np.asarray(weight, dtype=np.float64), None, 0, 0
    ok = rep >= 0
    is_first = rep == np.arange(m)
    pos = np.cumsum(is_first) - 1
    input_edge = np.where(ok, pos[np.maximum(rep, 0)], -1)
    sel = np.flatnonzero(is_first)
    w = np.bincount(input_edge[ok], weights=np.asarray(weight, dtype=np.float64)[ok],
                    minlength=len(sel))
    return (arrays.spill(src[sel]), arrays.spill(dst[sel]), arrays.spill(w),
            arrays.spill(input_edge), int(loops), int(repeats))


@njit(cache=True)
def _incidence(src, dst, n, ptr, inc):
    """Vertex -> incident edges, coded ``2 e`` (as source) or ``2 e + 1`` (as destination).

    A vertex's list holds its edges as source, then as destination, each in
    edge order: the order in which ``numpy.bincount`` over ``[src, dst]``
    would add their weights, so sums agree bit for bit with that formulation.
    """
    for e in range(len(src)):
        ptr[src[e] + 1] += 1
        ptr[dst[e] + 1] += 1
    for v in range(n):
        ptr[v + 1] += ptr[v]
    fill = ptr[:-1].copy()
    for e in range(len(src)):  # a vertex's edges as source first, then as destination
        inc[fill[src[e]]] = 2 * e
        fill[src[e]] += 1
    for e in range(len(src)):
        inc[fill[dst[e]]] = 2 * e + 1
        fill[dst[e]] += 1


@njit(cache=True)
def _count_replicas(ptr, inc, assign, n, p, rep_ptr):
    mark = np.full(p, -1, dtype=np.int64)
    total = 0
    for v in range(n):
        for k in range(ptr[v], ptr[v + 1]):
            c = assign[inc[k] >> 1]
            if mark[c] != v:
                mark[c] = v
                total += 1
        rep_ptr[v + 1] = total
    return total


@njit(cache=True)
def _fill_replicas(ptr, inc, assign, weight, n, p, rep_ptr, rep_cluster, master, rep_in,
                   rep_out, rep_src, rep_dst):
    """Replicas of every vertex (clusters sorted), their in/out edge counts, each
    edge's two replicas, and each vertex's master: the replica of most edge
    weight, ties to the lowest cluster."""
    mark = np.full(p, -1, dtype=np.int64)
    pos = np.empty(p, dtype=np.int64)
    buf = np.empty(p, dtype=np.int64)
    wsum = np.zeros(p, dtype=np.float64)
    for v in range(n):
        cnt = 0
        for k in range(ptr[v], ptr[v + 1]):
            c = assign[inc[k] >> 1]
            if mark[c] != v:
                mark[c] = v
                buf[cnt] = c
                cnt += 1
        if cnt == 0:
            master[v] = -1
            continue
        sort_run(buf, 0, cnt)
        base = rep_ptr[v]
        for j in range(cnt):
            rep_cluster[base + j] = buf[j]
            pos[buf[j]] = base + j
        for k in range(ptr[v], ptr[v + 1]):
            x = inc[k]
            e = x >> 1
            c = assign[e]
            r = pos[c]
            wsum[c] += weight[e]
            if x & 1:
                rep_dst[e] = r
                rep_in[r] += 1
            else:
                rep_src[e] = r
                rep_out[r] += 1
        best = buf[0]
        for j in range(1, cnt):
            if wsum[buf[j]] > wsum[best]:
                best = buf[j]
        master[v] = best
        for j in range(cnt):
            wsum[buf[j]] = 0.0


@dataclass(frozen=True, eq=False)
class ReplicaTable:
    """The replicas of an edge partition, sorted by (vertex, cluster).

    Attributes
    ----------
    ptr : int64 (n + 1,)
        Replicas of vertex ``v``: ``ptr[v]:ptr[v + 1]``.
    cluster : int32 (R,)
    master : int32 (n,)
        The cluster holding most of the vertex's edge weight (ties: the
        lowest id); -1 for a vertex without edges.
    n_in, n_out : int32 (R,) (int64 beyond 2**31 edges)
        Edges of the cluster that enter / leave the vertex (edge ``(u, v)``
        leaves ``u`` and enters ``v``).
    src, dst : int (m,)
        The replica of each edge's source / destination.
    """

    ptr: np.ndarray
    cluster: np.ndarray
    master: np.ndarray
    n_in: np.ndarray
    n_out: np.ndarray
    src: np.ndarray
    dst: np.ndarray

    @property
    def n(self):
        return len(self.ptr) - 1

    @property
    def counts(self):
        """Replicas per vertex (|A(v)|)."""
        return np.diff(self.ptr)

    def vertex(self):
        """The vertex of each replica (int32 below 2**31 vertices)."""
        return np.repeat(np.arange(self.n, dtype=index_dtype(self.n)), self.counts)

    def masters(self):
        """The cluster holding most of each vertex's edge weight (ties: the lowest
        id); -1 for a vertex without edges."""
        return self.master


def _incidence_of(src, dst, n, p, what):
    m = len(src)
    idt = index_dtype(2 * m + 1)
    check_memory(8.0 * (n + 1) + arrays.resident(np.dtype(idt).itemsize * 2.0 * m) + 24.0 * m,
                 f"the {what} of {m:,} edges in {int(p)} clusters", "use a machine with more memory")
    ptr = np.zeros(n + 1, dtype=np.int64)
    inc = arrays.empty(2 * m, idt)  # a spill file under --spill
    _incidence(src, dst, n, ptr, inc)
    return ptr, inc


#: Up to this many clusters a vertex's replicas are one 64-bit mask: the
#: table comes from passes over the edges, without the incidence CSR.
MASK_CLUSTERS = 64


@njit(cache=True, inline="always")
def _popcount(x):
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return (x * np.uint64(0x0101010101010101)) >> np.uint64(56)


@njit(cache=True)
def _masks(src, dst, assign, n, rep_ptr):
    """Each vertex's clusters as a bit mask; ``rep_ptr`` their running counts.
    Returns the masks and the number of replicas."""
    mask = np.zeros(n, dtype=np.uint64)
    for e in range(len(src)):
        b = np.uint64(1) << np.uint64(assign[e])
        mask[src[e]] |= b
        mask[dst[e]] |= b
    total = 0
    for v in range(n):
        total += _popcount(mask[v])
        rep_ptr[v + 1] = total
    return mask, total


@njit(cache=True, inline="always")
def _rank(mask, rep_ptr, v, c):
    """The replica of cluster ``c`` of vertex ``v``."""
    below = mask[v] & ((np.uint64(1) << np.uint64(c)) - np.uint64(1))
    return rep_ptr[v] + _popcount(below)


@njit(cache=True)
def _fill_from_masks(src, dst, assign, weight, mask, rep_ptr, rep_cluster, master, rep_in,
                     rep_out, rep_src, rep_dst):
    """`_fill_replicas` from the masks: a replica's weight sum adds its edges as
    source, then as destination, each in edge order (the incidence order)."""
    n = len(mask)
    for v in range(n):
        x = mask[v]
        r = rep_ptr[v]
        c = 0
        while x != np.uint64(0):
            if x & np.uint64(1):
                rep_cluster[r] = c
                r += 1
            x >>= np.uint64(1)
            c += 1
    wsum = np.zeros(len(rep_cluster), dtype=np.float64)
    for e in range(len(src)):
        r = _rank(mask, rep_ptr, src[e], assign[e])
        rep_src[e] = r
        rep_out[r] += 1
        wsum[r] += weight[e]
    for e in range(len(src)):
        r = _rank(mask, rep_ptr, dst[e], assign[e])
        rep_dst[e] = r
        rep_in[r] += 1
        wsum[r] += weight[e]
    for v in range(n):
        lo = rep_ptr[v]
        if lo == rep_ptr[v + 1]:
            master[v] = -1
            continue
        best = lo
        for r in range(lo + 1, rep_ptr[v + 1]):
            if wsum[r] > wsum[best]:
                best = r
        master[v] = rep_cluster[best]


def replica_counts(src, dst, assign, n, p):
    """|A(v)| for every vertex (int64): the clusters holding an edge of ``v``."""
    n = int(n)
    if p <= MASK_CLUSTERS:
        check_memory(16.0 * (n + 1), f"the replica counts of {n:,} vertices",
                     "use a machine with more memory")
        rep_ptr = np.zeros(n + 1, dtype=np.int64)
        _masks(src, dst, np.asarray(assign), n, rep_ptr)
        return np.diff(rep_ptr)
    ptr, inc = _incidence_of(src, dst, n, p, "replica counts")
    rep_ptr = np.zeros(n + 1, dtype=np.int64)
    _count_replicas(ptr, inc, np.asarray(assign), n, int(p), rep_ptr)
    return np.diff(rep_ptr)


def replica_table(src, dst, assign, weight, n, p):
    """The `ReplicaTable` of edge partition ``assign`` (a cluster per edge)."""
    m = len(src)
    n = int(n)
    assign = np.asarray(assign)
    weight = np.asarray(weight, dtype=np.float64)
    rep_ptr = arrays.zeros(n + 1, np.int64)  # the table: in spill files under --spill
    if p <= MASK_CLUSTERS:
        check_memory(16.0 * (n + 1), f"the replicas of {n:,} vertices",
                     "use a machine with more memory")
        mask, R = _masks(src, dst, assign, n, rep_ptr)
        check_memory(8.0 * R, f"the replicas of {m:,} edges in {int(p)} clusters",
                     "use a machine with more memory")
        ptr = inc = None
    else:
        ptr, inc = _incidence_of(src, dst, n, p, "replicas")
        R = _count_replicas(ptr, inc, assign, n, int(p), rep_ptr)
    rdt = index_dtype(R + 1)
    cluster = arrays.empty(R, np.int32)
    master = arrays.empty(n, np.int32)
    n_in = arrays.zeros(R, index_dtype(m + 1))
    n_out = arrays.zeros(R, index_dtype(m + 1))
    rs = arrays.empty(m, rdt)
    rd = arrays.empty(m, rdt)
    if ptr is None:
        _fill_from_masks(src, dst, assign, weight, mask, rep_ptr, cluster, master, n_in, n_out,
                         rs, rd)
    else:
        _fill_replicas(ptr, inc, assign, weight, n, int(p), rep_ptr, cluster, master, n_in,
                       n_out, rs, rd)
    return ReplicaTable(ptr=rep_ptr, cluster=cluster, master=master, n_in=n_in, n_out=n_out,
                        src=rs, dst=rd)


@njit(cache=True)
def _dst_sorted(dst):
    for e in range(1, len(dst)):
        if dst[e] < dst[e - 1]:
            return False
    return True


@njit(cache=True)
def _sort_groups(src, dst, order):
    """Within every run of equal ``dst``, order the edges by ``src`` (stable).

    Returns whether anything moved.
    """
    m = len(dst)
    moved = False
    lo = 0
    while lo < m:
        hi = lo + 1
        while hi < m and dst[hi] == dst[lo]:
            hi += 1
        sorted_run = True
        for e in range(lo + 1, hi):
            if src[e] < src[e - 1]:
                sorted_run = False
                break
        if not sorted_run:
            moved = True
            seg = np.argsort(src[lo:hi], kind="mergesort")
            for j in range(hi - lo):
                order[lo + j] = lo + seg[j]
        lo = hi
    return moved


def execution_order(src, dst):
    """The permutation sorting edges by (dst, src), stable (int32 below 2**31
    edges); None for the identity."""
    m = len(dst)
    if m == 0:
        return None
    if not _dst_sorted(dst):
        return np.lexsort((src, dst)).astype(index_dtype(m), copy=False)
    order = np.arange(m, dtype=index_dtype(m))
    return order if _sort_groups(src, dst, order) else None


@njit(cache=True)
def _is_oriented(src, dst):
    for e in range(len(src)):
        if src[e] > dst[e]:
            return False
    return True


def is_oriented(src, dst):
    """Whether ``src[e] <= dst[e]`` for every edge."""
    return bool(_is_oriented(src, dst))
