"""Vertex cuts of a graph file on a Dask cluster without any process holding its edges.

::

    from runtime.dask_cluster import dask_client
    from vcut.outofcore import partition_file
    with dask_client(workers=4) as client:
        result = partition_file("big.edgelist", 64, "hdrf", client=client, output="big.parts")

`vcut.distributed` cuts a graph that the driver has read; this module cuts one
that only the cluster as a whole can hold. The driver keeps per-vertex state
only (degrees, the merged replica sets: ``n * (8 ceil(p / 64) + 24)`` bytes);
every edge-sized array lives in the workers' memory, in pieces:

1. **Read.** The file is cut into pieces (`ir_graph.pieces`: byte ranges of
   an edge list split at line starts, edge ranges of a .npz) and each worker
   task reads one, with the checks and messages of `ir_graph.read_graph`.
   Edge-list ids are renumbered to ``0..n-1`` in increasing order exactly as
   the reader does: the pieces' sorted ids are merged on the workers (a tree
   of unions) and each piece maps its ids by binary search.
2. **Merge.** The lines are merged as `ir_graph.read_graph` merges them with
   ``duplicates`` (an undirected file: ``u v`` and ``v u`` are one edge, a
   repeated line the same edge; a METIS neighbour listed twice is a repeated
   line): each pair keeps its first line, with that line's weight (``"first"``)
   or the sum of its lines' (``"sum"``); ``"keep"`` reads every line as an edge
   and the partitioners' `vcut.partition.simplify` then merges the repeats,
   weights summed. Files vcut wrote (a .npz, an edge list with vcut's header)
   are read as written (``"keep"``). By a shuffle: every piece sends each
   edge's unordered pair, input position (its direction, and weight) to the
   bucket of the pair's hash; a bucket finds each pair's first appearance, its
   weight and the merged lines, and tells the pieces which of their edges are
   first. Self-loops are set aside; merging, the first loop line of a vertex
   is kept (the driver goes through the pieces' loop vertices in input order).
3. **Partition** the simple stream: hash cuts piece by piece (each edge alone:
   the sequential result), greedy cuts by the coordinated ingress of
   `vcut.distributed` on the same chunks, rounds and merges, each round's
   slices cut from the pieces on the workers (the driver sees only the slice's
   vertex list and the state rows it needs).
4. **Write** one cluster per edge of the graph as read, in input order (with
   ``"keep"`` one per line: repeated edges get their first appearance's
   cluster, which the buckets pass on), self-loops their vertex's master
   cluster. The driver fetches the pieces' assignments one after the other
   and streams them to a temporary file renamed into place.

The result is the same as `vcut.distributed.partition_distributed` on the
graph ``read_graph(path, duplicates=duplicates, directed=False)`` reads, with
the same workers and batch (the same as the sequential
`vcut.partition.partition_graph` for hash cuts), and the tests check it
assignment for assignment. The input file must be readable at the
same path by every worker (a shared file system on a real cluster); the
output is written by the driver.

A worker that dies loses its pieces; Dask recomputes them from their task
lineage (a piece is re-read from the file), so a run survives lost workers
with the same result.
"""

import os
import tempfile
import time
from dataclasses import dataclass

import numpy as np

from vcut_base.arrays import spill_directory
from vcut_base.atomic import atomic_output
from vcut_base.errors import GraphFormatError, InputError, VcutError
from vcut_base.hashing import mix64
from vcut_base.memory import check_memory
from ir_graph.formats import DUPLICATES
from ir_graph.formats.edgelist import edgelist_empty
from ir_graph.formats.metis import metis_asymmetric, metis_count, metis_few
from ir_graph.pieces import (PIECE_BYTES, PIECE_EDGES, count_vertex_lines, lines_before,
                             plan_pieces, read_piece)

from .distributed import (DEFAULT_BATCH, GREEDY_CUTS, HASH_CUTS, RETRIES, _greedy_round,
                          _hash_piece, _Ingress, _lost_worker, check_distributed)
from .metrics import PartitionMetrics, random_rf_bound
from .output import int_lines
from .partition import _zipf_alpha, capacity_fractions, check_clusters

__all__ = ["FilePartition", "partition_file"]

#: Buckets of the shuffles per worker.
BUCKETS_PER_WORKER = 2
#: Pieces per worker at least, where the file is large enough (`ir_graph.pieces`).
PIECES_PER_WORKER = 4


@dataclass(frozen=True)
class FilePartition:
    """What `partition_file` found (the assignment itself is in ``output``): ``edges``
    of the graph as read (repeats merged but for ``"keep"``; self-loops included),
    ``simple_edges`` partitioned; ``info["merged"]`` as `ir_graph.read_graph`'s
    ``meta["merged"]`` (None for a file read as written)."""

    metrics: PartitionMetrics
    info: dict
    n: int
    edges: int
    simple_edges: int
    capacities: np.ndarray
    output: str = None


def partition_file(path, p, algo="wb-libra", *, client, fmt=None, duplicates="first",
                   workers=None, batch=DEFAULT_BATCH, lam=1.0, seed=0, capacities=None,
                   output=None, piece_bytes=None, piece_edges=None, progress=None):
    """Partition the edges of the graph file ``path`` into ``p`` clusters on a Dask
    cluster, the workers reading the file in pieces.

    Parameters
    ----------
    path : str
        An edge list or METIS graph (plain text) or a vcut ``.npz`` graph,
        readable by every worker.
    p, algo, workers, batch, lam, seed, capacities
        As `vcut.distributed.partition_distributed`.
    client : distributed.Client
    fmt : str, optional
        ``"edgelist"``, ``"metis"`` or ``"npz"`` (default: from the suffix).
    duplicates : {"first", "sum", "keep"}
        The edges of the file as `ir_graph.read_graph` reads them undirected:
        ``u v`` and ``v u``, or a line repeated, merged into the first, with
        its weight (``"first"``) or their weights summed (``"sum"``); every
        line an edge (``"keep"``). Files vcut wrote are read as written.
    output : str, optional
        File to write, one cluster id per edge of the graph as read (per line
        with ``"keep"``) in input order (as `vcut.output.write_partition`
        writes its plain file).
    piece_bytes, piece_edges : int, optional
        Size of the pieces (`ir_graph.pieces.PIECE_BYTES`, ``PIECE_EDGES``).
    progress : callable(str), optional

    Returns
    -------
    FilePartition

    Raises
    ------
    InputError
        Bad arguments (``duplicates`` not one of its values), a file that cannot
        be split, an empty graph.
    GraphFormatError
        A malformed file (the first bad line found, numbered from the file's start).
    VcutError
        The cluster keeps losing the workers that run a task.
    """
    if duplicates not in DUPLICATES:
        raise InputError(f"duplicates must be one of {', '.join(DUPLICATES)}, got {duplicates!r}")
    workers = check_distributed(algo, p, seed, lam, batch, workers, client)
    cap = capacity_fractions(p, algo, capacities)
    say = progress or (lambda line: None)
    t0 = time.perf_counter()
    plan = plan_pieces(path, fmt, piece_bytes=piece_bytes or PIECE_BYTES,
                       piece_edges=piece_edges or PIECE_EDGES,
                       at_least=PIECES_PER_WORKER * workers)
    for attempt in range(RETRIES + 1):
        try:
            run, rounds, metrics = _attempt(client, plan, workers, say, duplicates, algo, p,
                                            cap, lam, seed, batch, output)
            break
        except _Lost as lost:  # data a lost worker held cannot always be recomputed: again
            if attempt == RETRIES:
                raise VcutError(f"{lost}: tasks kept failing as Dask workers were lost "
                                f"({RETRIES + 1} attempts); look at the workers' logs, or run "
                                "with fewer workers") from None
            say(f"a Dask worker was lost during {lost}: starting again")
    deg = run.deg
    alpha = _zipf_alpha(deg)
    info = {"algo": algo, "p": int(p), "lambda": float(lam), "order": "given", "seed": int(seed),
            "seconds": time.perf_counter() - t0, "distributed": True, "out_of_core": True,
            "workers": workers, "batch": int(batch) if algo in GREEDY_CUTS else None,
            "rounds": rounds, "pieces": len(plan), "edges": run.edges, "simple_edges": run.m,
            "self_loops": run.loops, "repeated_edges": run.repeats, "merged": run.merged,
            "restarts": attempt,
            "alpha": alpha,
            "rf_random_bound": random_rf_bound(p, alpha, int((deg > 0).sum()))
            if np.isfinite(alpha) else None}
    return FilePartition(metrics=metrics, info=info, n=run.n, edges=run.edges, simple_edges=run.m,
                         capacities=cap, output=output)


def _attempt(client, plan, workers, say, duplicates, algo, p, cap, lam, seed, batch, output):
    """One run of every stage: ``(run, rounds, metrics)``; `_Lost` if a worker was lost
    with data the cluster could not recompute."""
    run = _Run(client, plan, workers, say, duplicates)
    try:
        return _stages(run, algo, p, cap, lam, seed, batch, output)
    finally:
        if getattr(run, "scratch", None) is not None:
            run.scratch.cleanup()


def _stages(run, algo, p, cap, lam, seed, batch, output):
    run.read()
    run.simplify()
    m = run.m
    if m == 0:
        raise InputError("the graph has no edges (other than self-loops); nothing to partition")
    check_clusters(p, m)
    if algo in HASH_CUTS:
        rounds = run.hash_cut(algo, p, cap, seed)
    else:
        rounds = run.coordinated(algo, p, cap, lam, batch)
    metrics = run.metrics(p, cap)
    if output is not None:
        run.write(output, p, cap, metrics)
    return run, rounds, metrics


class _Lost(Exception):
    """A task failed because the worker holding it or its inputs was lost."""


# -- the driver -----------------------------------------------------------------
class _Run:
    """One out-of-core partitioning: the futures of the pieces on the cluster and
    the per-vertex state on the driver."""

    def __init__(self, client, plan, workers, say, duplicates):
        self.client, self.plan, self.workers, self.say = client, plan, workers, say
        self.duplicates = duplicates
        self.buckets = max(1, min(len(plan), BUCKETS_PER_WORKER * workers))

    def submit(self, fn, *args):
        return self.client.submit(fn, *args, pure=False)

    def gather(self, futures, what):
        try:
            return self.client.gather(futures)
        except Exception as exc:  # noqa: BLE001 - sorted below
            if _lost_worker(exc):
                raise _Lost(what) from None
            raise

    def one_by_one(self, futures, what):
        """The results of ``futures`` in order, each fetched when the previous is used
        (this process holds one piece's result at a time)."""
        for i in range(len(futures)):
            got = self.gather([futures[i]], what)[0]
            futures[i] = None
            yield got

    # 1. read
    def read(self):
        plan, k = self.plan, len(self.plan)
        self.say(f"reading {plan.path} in {k} pieces")
        if plan.fmt == "metis":  # vertices are named by line: count each piece's lines first
            self._vertex0()
        raw = [self.submit(_read, plan, i) for i in range(k)]
        stats = self.gather([self.submit(_raw_stats, f) for f in raw], "reading the graph")
        self.weighted = self._check_columns(stats) == 3
        if plan.fmt == "metis":
            self._check_metis(stats)
        self.counts = np.array([s["count"] for s in stats], dtype=np.int64)
        self.starts = np.concatenate([[0], np.cumsum(self.counts)])
        self.lines = int(self.starts[-1])
        total = sum(s["weight"] for s in stats)
        if not np.isfinite(total):
            raise GraphFormatError(f"{plan.path}: the edge weights sum to {total}; scale them down")
        declared = next((s["declared"] for s in stats if s["declared"] is not None), None)
        # files vcut wrote (a .npz, an edge list with its header) are read as written
        self.as_written = plan.fmt == "npz" or (plan.fmt == "edgelist" and declared is not None)
        self.mode = "keep" if self.as_written else self.duplicates
        labels = None
        if declared is not None:  # ids are 0..n-1 (a .npz, a vcut edge list)
            n = int(declared)
            top = max((s["max"] for s in stats if s["count"]), default=-1)
            if top >= n:
                raise GraphFormatError(f"{plan.path}: node id {top} is beyond the {n:,} nodes the "
                                       "file declares")
        elif self.lines:
            ids = [self.submit(_ids, f) for f in raw]
            while len(ids) > 1:  # a tree of unions on the workers
                ids = [self.submit(_union, *ids[i:i + 2]) for i in range(0, len(ids), 2)]
            labels = self.gather(ids, "renumbering the node ids")[0]
            n = len(labels)
            check_memory(8 * n, f"the {n:,} node ids", "use a machine with more memory")
            if labels[0] == 0 and labels[-1] == n - 1:
                labels = None
        else:
            n = 0
        if n > 3_000_000_000:
            raise InputError(f"{plan.path}: {n:,} nodes; out-of-core partitioning takes up to "
                             "3e9 (pairs of ids are 64-bit keys)")
        self.n = n
        self.labels = None if labels is None else self.client.scatter(labels, broadcast=True)
        self.raw = raw

    def _vertex0(self):
        """Each METIS piece's first vertex from the pieces' line counts; the file's
        vertex lines against its header."""
        plan = self.plan
        lines = self.gather([self.submit(count_vertex_lines, plan, i) for i in range(len(plan))],
                            "counting vertex lines")
        before = np.concatenate([[0], np.cumsum(lines)])[:-1]
        plan.vertex0 = [0] + [int(x) - 1 for x in before[1:]]  # the header is piece 0's first line
        found = int(sum(lines)) - 1
        if found < plan.header[0]:
            raise GraphFormatError(metis_few(plan.path, plan.header[0], found))

    def _check_metis(self, stats):
        """The METIS checks that span the file: entries against the header, symmetry."""
        n, m = self.plan.header[:2]
        entries = sum(s["entries"] for s in stats)
        if entries != 2 * m:
            raise GraphFormatError(metis_count(self.plan.path, m, entries))
        fc = sum(s["symmetry"][0] for s in stats)
        bc = sum(s["symmetry"][2] for s in stats)
        fh = sum(s["symmetry"][1] for s in stats) % 2**64
        bh = sum(s["symmetry"][3] for s in stats) % 2**64
        if (fc, fh) != (bc, bh):
            raise GraphFormatError(metis_asymmetric(self.plan.path))

    def _check_columns(self, stats):
        cols = [(i, s["columns"]) for i, s in enumerate(stats) if s["columns"]]
        if not cols:
            raise GraphFormatError(edgelist_empty(self.plan.path))
        bad = next(((i, c) for i, c in cols if c != cols[0][1]), None)
        if bad is not None:
            line = lines_before(self.plan.path, self.plan.ranges[bad[0]][0]) + 1
            raise GraphFormatError(f"{self.plan.path}: the edge lines from about line {line:,} on "
                                   f"have {bad[1]} columns where the first edge line has "
                                   f"{cols[0][1]}; give every edge line the same columns")
        return cols[0][1]

    # 2. merge
    def simplify(self):
        k, nb, mode = len(self.plan), self.buckets, self.mode
        self.say(f"merging repeated edges: {self.lines:,} lines in {nb} buckets")
        canon = [self.submit(_canon, self.raw[i], self.labels, self.n, int(self.starts[i]), nb,
                             self.weighted, mode) for i in range(k)]
        del self.raw
        groups = [self.submit(_group, b, self.starts, mode, self.weighted,
                              *[self.submit(_pick, c, "send", b) for c in canon])
                  for b in range(nb)]
        self.reps = [self.submit(_get, g, "repeats") for g in groups] if mode == "keep" else None
        merged = [self.submit(_get, g, "merged") for g in groups]
        simple = [self.submit(_simple, canon[i], i, *[self.submit(_pick, g, "route", i) for g in groups])
                  for i in range(k)]
        del canon, groups
        stats = self.gather([self.submit(_simple_stats, f) for f in simple] + merged,
                            "merging repeated edges")
        stats, merged = stats[:k], stats[k:]
        self.simple = simple
        self.firsts = np.array([s["firsts"] for s in stats], dtype=np.int64)
        self.soff = np.concatenate([[0], np.cumsum(self.firsts)])
        self.m = int(self.soff[-1])
        loop_lines = int(sum(s["loops"] for s in stats))
        self.repeats = int(sum(s["repeats"] for s in stats))
        self.total = float(sum(s["weight"] for s in stats))
        self._self_loops(loop_lines)
        if mode == "keep":
            self.loops, self.edges = loop_lines, self.lines
            self.loop_firsts = None
        else:  # merged on reading: nothing left for the partitioners to merge
            self.loops, self.edges = len(self.loop_verts), self.m + len(self.loop_verts)
            self.repeats = 0
        same = sum(x[0] for x in merged) + loop_lines - len(self.loop_verts)
        self.merged = None if self.as_written else {
            "repeated_edges": int(same) if mode != "keep" else 0,
            "reverse_pairs": int(sum(x[1] for x in merged)), "duplicates": self.duplicates}
        check_memory(24 * self.n, f"the degrees of {self.n:,} vertices", "use a machine with more memory")
        deg = np.zeros(self.n, dtype=np.int64)
        for verts, counts in self.one_by_one([self.submit(_degrees, f) for f in simple], "degrees"):
            deg[verts] += counts  # a piece's vertices are unique
        self.deg = deg

    def _self_loops(self, lines):
        """The self-loops' vertices (``loop_verts``, sorted) and, merging, each piece's
        lines that are the first loop of their vertex (``loop_firsts``): the pieces in
        input order, each less the vertices of those before it. O(loop vertices) here."""
        seen = np.empty(0, np.int64)
        self.loop_firsts = [np.empty(0, np.int64) for _ in self.simple]
        if lines:
            got = self.one_by_one([self.submit(_first_loops, f) for f in self.simple],
                                  "self-loops")
            for i, (verts, at) in enumerate(got):
                self.loop_firsts[i] = at[~np.isin(verts, seen, assume_unique=True)]
                seen = np.union1d(seen, verts)
        self.loop_verts = seen

    # 3. partition
    def hash_cut(self, algo, p, cap, seed):
        self.say(f"hashing {self.m:,} edges in {len(self.plan)} pieces")
        deg = self.client.scatter(self.deg, broadcast=True) if algo == "dbh" else None
        self.outs = [self.submit(_hash_task, f, algo, deg, p, cap, seed, int(self.soff[i]))
                     for i, f in enumerate(self.simple)]
        sums = self.one_by_one([self.submit(_cluster_sums, f, o, p)
                                for f, o in zip(self.simple, self.outs)], f"{algo} on the cluster")
        nw = (p + 63) // 64
        check_memory(self.n * 8 * nw, f"the replica sets of {self.n:,} vertices in {p} clusters",
                     "use fewer clusters")
        self.A = np.zeros((self.n, nw), dtype=np.uint64)
        self.wload, self.cnt = np.zeros(p), np.zeros(p, dtype=np.int64)
        for pairs, wl, cn in sums:
            v, c = pairs // p, pairs % p
            np.bitwise_or.at(self.A, (v, c >> 6), np.uint64(1) << (c & 63).astype(np.uint64))
            self.wload += wl
            self.cnt += cn
        return 1

    def coordinated(self, algo, p, cap, lam, batch):
        """Coordinated ingress (`vcut.distributed`): each round's slices are cut from
        the pieces on the workers (the next round's while this one runs) and pass
        through this process, O(batch) per chunk; the clusters placed go to one
        scratch file per chunk on disk, in stream order."""
        state = _Ingress(algo, self.m, self.total, self.deg, self.n, p, cap, lam, batch, self.workers)
        self.wload, self.cnt = np.zeros(p), np.zeros(p, dtype=np.int64)
        tick, placed = time.perf_counter(), 0
        self.say(f"coordinated ingress of {self.m:,} edges: {self.workers} chunks, "
                 f"{state.rounds} rounds of {batch:,} edges")
        # --spill DIR holds them where given, else the system's temporary directory
        self.scratch = tempfile.TemporaryDirectory(prefix="vcut-outofcore-", dir=spill_directory())
        files = [open(os.path.join(self.scratch.name, f"chunk{c}"), "wb") for c in range(self.workers)]
        self.chunk_files = [f.name for f in files]
        self.bounds = state.bounds
        try:
            preps = self._prepare(state, 0)
            for r in range(state.rounds):
                spans = state.spans(r)
                slices = self.gather(preps, f"{algo} round {r + 1}")
                preps = self._prepare(state, r + 1) if r + 1 < state.rounds else []
                views = state.views(spans)
                calls = [self.submit(_greedy_round, algo, x["s"], x["d"], x["w"],
                                     *state.arguments(x["verts"], views[c], c))
                         for (c, _, _), x in zip(spans, slices)]
                results = self.gather(calls, f"{algo} round {r + 1}")
                state.decay()
                for (c, a, b), x, (got, rows, new_load, _) in zip(spans, slices, results):
                    state.merge(c, x["verts"], x["counts"], rows, new_load, views[c])
                    self.wload += np.bincount(got, weights=x["weight"], minlength=p)
                    self.cnt += np.bincount(got, minlength=p)
                    files[c].write(got.astype(np.int32).tobytes())
                    placed += b - a
                if time.perf_counter() - tick >= 1.0 or r == state.rounds - 1:
                    self.say(f"  round {r + 1}/{state.rounds}: {placed:,} of {self.m:,} edges placed")
                    tick = time.perf_counter()
        finally:
            for f in files:
                f.close()
        self.A = state.A
        self.outs = None  # in the chunk files: `_clusters`
        return state.rounds

    def _clusters(self, i):
        """Piece ``i``'s clusters (its simple edges'): a future for a hash cut, else read
        from the chunk files."""
        if self.outs is not None:
            return self.outs[i]
        lo, hi = int(self.soff[i]), int(self.soff[i + 1])
        parts = []
        for c in range(self.workers):
            a, b = max(lo, int(self.bounds[c])), min(hi, int(self.bounds[c + 1]))
            if a < b:
                parts.append(np.fromfile(self.chunk_files[c], dtype=np.int32, count=b - a,
                                         offset=4 * (a - int(self.bounds[c]))))
        return np.concatenate(parts) if parts else np.empty(0, np.int32)

    def _prepare(self, state, r):
        """Futures of round ``r``'s slices, one per span, cut from the pieces."""
        preps = []
        for _, a, b in state.spans(r):
            i0 = int(np.searchsorted(self.soff, a, "right")) - 1
            i1 = int(np.searchsorted(self.soff, b, "left"))
            idx = [i for i in range(i0, i1) if self.firsts[i]]
            ranges = [(max(a, int(self.soff[i])) - int(self.soff[i]),
                       min(b, int(self.soff[i + 1])) - int(self.soff[i])) for i in idx]
            preps.append(self.submit(_prepare, state.weighted, ranges, *[self.simple[i] for i in idx]))
        return preps

    # 4. metrics and the output
    def metrics(self, p, cap):
        reps = _popcounts(self.A)
        active = reps > 0
        cut = reps > 1
        W, m = float(self.wload.sum()), self.m
        return PartitionMetrics(
            p=int(p), replication_factor=float(reps.sum() / active.sum()) if active.any() else 0.0,
            vertex_copies=int((reps[active] - 1).sum()),
            edge_weight_imbalance=float(np.max(self.wload / (W * cap))) if W > 0 else 1.0,
            edge_imbalance=float(np.max(self.cnt / (m * cap))),
            loads=self.wload.tolist(), counts=self.cnt.tolist(),
            cut_vertices=int(cut.sum()), avg_cut_degree=float(self.deg[cut].mean()) if cut.any() else 0.0)

    def write(self, output, p, cap, metrics):

        k, nb = len(self.plan), self.buckets
        loops = self._loop_clusters(p, cap, metrics) if self.loops else None
        parts = [[] for _ in range(k)]
        if self.mode == "keep" and self.repeats:
            # a repeated edge gets its first appearance's cluster, via the buckets
            sent = [self.submit(_rep_clusters, f, self._clusters(i), nb)
                    for i, f in enumerate(self.simple)]
            back = [self.submit(_resolve, self.reps[b], self.starts, *[self.submit(_pick, s, "send", b)
                                                                       for s in sent])
                    for b in range(nb)]
            parts = [[self.submit(_pick, f, "route", i) for f in back] for i in range(k)]
        self.say(f"writing {output}")
        with atomic_output(output, "wb") as fh:
            for i in range(k):
                firsts = None if self.loop_firsts is None else self.loop_firsts[i]
                fut = self.submit(_final, self.simple[i], self._clusters(i), loops, firsts,
                                  *parts[i])
                got = self.gather([fut], f"writing {output}")[0]
                for chunk in int_lines(got) if len(got) else ():  # no line for no edges
                    fh.write(chunk)

    def _loop_clusters(self, p, cap, metrics):
        """A future of ``(vertices, clusters)`` for the self-loops: the vertex's master
        (the cluster with most of its edge weight, ties the lowest id) or, without
        edges, the least loaded cluster. Per-vertex state here: the pieces reduce
        their edges to one weight per (vertex, cluster) first."""
        verts = self.loop_verts
        fut = self.client.scatter(verts, broadcast=True)
        codes, tot = np.empty(0, np.int64), np.empty(0)
        for i, f in enumerate(self.simple):  # one piece at a time: O(vertex replicas) here
            c, w = self.gather([self.submit(_vertex_weights, f, self._clusters(i), fut, p)],
                               "self-loops")[0]
            codes, inv = np.unique(np.concatenate([codes, c]), return_inverse=True)
            tot = np.bincount(inv, weights=np.concatenate([tot, w]), minlength=len(codes))
        v, c = codes // p, codes % p
        order = np.lexsort((c, -tot, v))  # per vertex: most weight, then the lowest cluster
        v, c = v[order], c[order]
        first = np.ones(len(v), bool)
        first[1:] = v[1:] != v[:-1]
        master = np.full(len(verts), -1, dtype=np.int64)
        master[np.searchsorted(verts, v[first])] = c[first]
        master[master < 0] = int(np.argmin(np.asarray(metrics.loads) / cap))
        return self.client.scatter((verts, master.astype(np.int32)), broadcast=True)


def _popcounts(A):
    """Set bits per row of a uint64 matrix."""
    if hasattr(np, "bitwise_count"):
        return np.bitwise_count(A).sum(axis=1, dtype=np.int64)
    out = np.zeros(len(A), dtype=np.int64)
    for k in range(0, len(A), 1 << 20):
        out[k:k + (1 << 20)] = np.unpackbits(A[k:k + (1 << 20)].view(np.uint8), axis=1).sum(axis=1)
    return out


# -- worker tasks (pure functions of their inputs) ----------------------------------
def _read(plan, i):
    return read_piece(plan, i)


def _raw_stats(raw):
    s, d, w = raw["src"], raw["dst"], raw["weight"]
    return {"count": len(s), "columns": raw["columns"], "declared": raw["declared"],
            "entries": raw.get("entries"), "symmetry": raw.get("symmetry"),
            "max": int(max(s.max(), d.max())) if len(s) else -1,
            "weight": float(w.sum()) if w is not None else float(len(s))}


def _ids(raw):
    return np.unique(np.concatenate([raw["src"], raw["dst"]]))


def _union(a, b=None):
    return a if b is None else np.union1d(a, b)


def _get(x, key):
    return x[key]


def _pick(x, key, i):
    return x[key][i]


def _split(bucket, nb, *arrays):
    """``arrays`` split by ``bucket`` (0..nb-1), each part in its original order."""
    order = np.argsort(bucket, kind="stable")
    cuts = np.searchsorted(bucket[order], np.arange(1, nb))
    return [tuple(x) for x in zip(*[np.split(a[order], cuts) for a in arrays])]


def _canon(raw, labels, n, pos0, nb, weighted, mode):
    """A piece's edges on ids 0..n-1 (int32 where they fit) and their unordered pairs
    sent to the buckets: ``(pair key, input position[, src > dst][, weight])``, the
    direction when merging (``mode`` not ``"keep"``: `_group` counts reverse pairs)."""
    s, d = raw["src"], raw["dst"]
    if labels is not None:
        s, d = np.searchsorted(labels, s), np.searchsorted(labels, d)
    idt = np.int32 if n < 2**31 else np.int64
    s, d = s.astype(idt, copy=False), d.astype(idt, copy=False)
    w = raw["weight"]
    if weighted and w is None:  # a piece without edges in a weighted file
        w = np.ones(len(s))
    ok = s != d
    key = _pair_key(s[ok], d[ok], n)
    pos = pos0 + np.flatnonzero(ok)
    bucket = (mix64(key) % np.uint64(nb)).astype(np.int64)
    sent = (key, pos) + ((s[ok] > d[ok],) if mode != "keep" else ()) + \
        ((w[ok],) if w is not None else ())
    return {"src": s, "dst": d, "weight": w, "loop": ~ok, "pos0": pos0, "n": n,
            "send": _split(bucket, nb, *sent)}


def _pair_key(s, d, n):
    """The unordered pair's 64-bit key: min * n + max."""
    return np.minimum(s, d).astype(np.int64) * np.int64(n) + np.maximum(s, d)


def _group(b, starts, mode, weighted, *parts):
    """Bucket ``b``: for each unordered pair its first appearance and weight (the first
    appearance's with ``mode`` ``"first"``, else the sum, added in input order), routed
    to the pieces (``route[i]``: the first appearances in piece ``i``, their weights);
    ``"keep"``: ``repeats``, (first appearance, position) of the others; ``merged``:
    the others written as their first appearance and the other way round (0, 0 for
    ``"keep"``)."""
    key = np.concatenate([x[0] for x in parts])
    pos = np.concatenate([x[1] for x in parts])
    order = np.lexsort((pos, key))
    key, pos = key[order], pos[order]
    first = np.ones(len(key), bool)
    first[1:] = key[1:] != key[:-1]
    del key
    group = np.cumsum(first) - 1
    w = np.concatenate([x[-1] for x in parts])[order] if weighted else None
    if mode == "first":
        total = w[first] if weighted else np.ones(int(first.sum()))
    else:
        total = np.bincount(group, weights=w, minlength=int(first.sum())).astype(np.float64)
    fpos = pos[first]
    piece = np.searchsorted(starts, fpos, "right") - 1
    route = _split(piece, len(starts) - 1, fpos, total)
    others = ~first
    if mode == "keep":
        return {"route": route, "repeats": (fpos[group][others], pos[others]), "merged": (0, 0)}
    flip = np.concatenate([x[2] for x in parts])[order]
    same = int(np.count_nonzero(flip[others] == flip[first][group][others]))
    return {"route": route, "merged": (same, int(others.sum()) - same)}


def _simple(canon, i, *routes):
    """Piece ``i``'s simple edges (its first appearances, in input order, with their
    weights from `_group`)."""
    fpos = np.concatenate([r[0] for r in routes])
    fw = np.concatenate([r[1] for r in routes])
    order = np.argsort(fpos)
    count = len(canon["src"])
    ldt = np.int32 if count < 2**31 else np.int64
    local = (fpos[order] - canon["pos0"]).astype(ldt)
    is_first = np.zeros(count, bool)
    is_first[local] = True
    loop = canon["loop"]
    return {"src": canon["src"][local], "dst": canon["dst"][local], "weight": fw[order],
            "local": local, "pos0": canon["pos0"], "n": canon["n"], "count": count,
            "loop_local": np.flatnonzero(loop), "loop_vertices": canon["src"][loop],
            "repeat_local": np.flatnonzero(~loop & ~is_first)}


def _simple_stats(simple):
    return {"firsts": len(simple["src"]), "loops": len(simple["loop_local"]),
            "repeats": len(simple["repeat_local"]), "weight": float(simple["weight"].sum())}


def _degrees(simple):
    """The piece's vertices and their degrees in it."""
    return np.unique(np.concatenate([simple["src"], simple["dst"]]), return_counts=True)


def _hash_task(simple, algo, deg, p, cap, seed, offset):
    s, d = simple["src"], simple["dst"]
    du, dv = (deg[s], deg[d]) if algo == "dbh" else (None, None)
    return _hash_piece(algo, s, d, du, dv, p, cap, seed, offset)


def _cluster_sums(simple, out, p):
    """``(unique vertex * p + cluster codes, weight per cluster, edges per cluster)``."""
    s, d = simple["src"].astype(np.int64), simple["dst"].astype(np.int64)
    o = out.astype(np.int64)
    pairs = np.unique(np.concatenate([s * p + o, d * p + o]))
    return (pairs, np.bincount(out, weights=simple["weight"], minlength=p),
            np.bincount(out, minlength=p))


def _prepare(weighted, ranges, *simples):
    """A round's slice of the stream: its edges on local ids (``s``, ``d``), the weights
    the rule reads (``w``) and the edges' own (``weight``), the unique vertices and
    their edge counts in the slice."""
    s = np.concatenate([x["src"][a:b] for x, (a, b) in zip(simples, ranges)])
    d = np.concatenate([x["dst"][a:b] for x, (a, b) in zip(simples, ranges)])
    w = np.concatenate([x["weight"][a:b] for x, (a, b) in zip(simples, ranges)])
    verts, inv = np.unique(np.concatenate([s, d]), return_inverse=True)
    k = len(s)
    return {"s": inv[:k], "d": inv[k:], "w": w if weighted else np.ones(k), "weight": w,
            "verts": verts, "counts": np.bincount(inv, minlength=len(verts))}


def _rep_clusters(simple, out, nb):
    """The clusters of the piece's first appearances, to the buckets of their pairs."""
    bucket = (mix64(_pair_key(simple["src"], simple["dst"], simple["n"])) % np.uint64(nb)).astype(np.int64)
    pos = simple["pos0"] + simple["local"].astype(np.int64)
    return {"send": _split(bucket, nb, pos, out)}


def _resolve(repeats, starts, *parts):
    """Bucket's repeated edges with the clusters of their first appearances, to their pieces."""
    rep, pos = repeats
    fpos = np.concatenate([x[0] for x in parts])
    fc = np.concatenate([x[1] for x in parts])
    order = np.argsort(fpos)
    fpos, fc = fpos[order], fc[order]
    cl = fc[np.searchsorted(fpos, rep)] if len(rep) else np.empty(0, np.int32)
    piece = np.searchsorted(starts, pos, "right") - 1
    return {"route": _split(piece, len(starts) - 1, pos, cl)}


def _first_loops(simple):
    """The piece's self-loop vertices (sorted, unique) and the line of each one's first
    loop in the piece."""
    verts, at = np.unique(simple["loop_vertices"], return_index=True)
    return verts, simple["loop_local"][at]


def _vertex_weights(simple, out, verts, p):
    """``(vertex * p + cluster, weight)`` of the piece's edges at the vertices ``verts``,
    one entry per pair (weights summed)."""
    s, d, w = simple["src"].astype(np.int64), simple["dst"].astype(np.int64), simple["weight"]
    o = out.astype(np.int64)
    codes = np.concatenate([s * p + o, d * p + o])
    ws = np.concatenate([w, w])
    keep = np.isin(codes // p, verts)
    codes, inv = np.unique(codes[keep], return_inverse=True)
    return codes, np.bincount(inv, weights=ws[keep], minlength=len(codes))


def _final(simple, out, loops, firsts, *parts):
    """The cluster of each of the piece's input edges (``loops``: the self-loops'
    vertices and clusters, sorted by vertex; ``parts``: the repeats' clusters); with
    ``firsts`` (merging: the piece's lines that are the first loop of their vertex),
    of its first appearances and those loops only, in input order."""
    full = np.empty(simple["count"], dtype=np.int32)
    full[simple["local"]] = out
    if loops is not None and len(simple["loop_local"]):
        verts, cl = loops
        full[simple["loop_local"]] = cl[np.searchsorted(verts, simple["loop_vertices"])]
    for pos, cl in parts:
        full[pos - simple["pos0"]] = cl
    if firsts is None:
        return full
    kept = np.zeros(simple["count"], bool)
    kept[simple["local"]] = True
    kept[firsts] = True
    return full[kept]
