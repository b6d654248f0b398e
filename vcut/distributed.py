"""Vertex cuts over a Dask cluster: the edge stream split among workers.

::

    from runtime.dask_cluster import dask_client
    from vcut.distributed import partition_distributed
    with dask_client(workers=4) as client:
        part = partition_distributed(graph, 64, "wb-libra", client=client)

The simple graph's edge stream (the order ``given``, as `vcut.partition`
streams it) is cut into one contiguous chunk per worker.

* **Hash cuts** (``random``, ``dbh``, ``graphx-1d``, ``graphx-2d``,
  ``graphx-crvc``) decide every edge alone, so pieces of the stream go to the
  workers and the result is *identical* to `vcut.partition.partition_graph`:
  ``random`` jumps its PCG64 generator to the piece's first edge
  (``PCG64.advance``), ``dbh`` is given the endpoints' full degrees.
* **Greedy cuts** (the PowerGraph / Libra family and HDRF) follow PowerGraph's
  *coordinated ingress* (Gonzalez et al., OSDI 2012, §5.1): every worker
  streams its own chunk against a copy of the shared state (the replica sets
  and the cluster loads; PG's unassigned-edge counts) and the copies are merged
  every ``batch`` edges per worker. Round ``r`` has each worker place edges
  ``r * batch .. (r + 1) * batch`` of its chunk, all from the state merged
  after round ``r - 1``; their new replicas (a union) and loads (a sum) are
  merged in chunk order. The result depends on the worker count and the
  batch, never on which worker ran what or when: the same seed, workers and
  batch give the same partition. With one worker it is the sequential stream
  exactly. Staleness costs replicas: within a round a worker does not see the
  others' new replicas, so ``workers * batch`` edges are placed on a state
  that lags by up to that many. docs/notes/vcut-distributed.md has the
  measured replication factors against the sequential run.
* **Bounds.** Workers of a round do not see each other's loads, so each is
  given a share of every cluster's room under the bound. The greedy rules see
  the loads as the bound less their share (`_shares`). HDRF scores the merged
  loads themselves, as the sequential stream does (its balance term on the
  shrunken differences of such views would fill clusters one after another
  along the stream), and gets its shares as per-cluster limits in whole edges
  whose rows cover each worker's round (`_edge_shares`): no cluster ever holds
  more than HDRF's capacity (``ceil(m / p)`` edges times its capacity share),
  the sequential bound.

Each task carries its own input (a piece of the stream, or the slice of a
round with the state rows of the vertices it touches) and returns its result:
a pure function, so a worker that dies has its tasks re-run elsewhere by Dask
with the same result; a round whose tasks fail for a lost worker more often
than Dask allows is resubmitted (`RETRIES`).

The driver (this process) holds the graph, the merged replica sets
(``n * ceil(p / 64)`` words) and the assignment; it cuts each round's slices
and merges their results, O(batch log batch) per task.
"""

import concurrent.futures
import time

import numpy as np

from vcut_base.errors import InputError, VcutError
from vcut_base.memory import check_memory
from ir_graph.edge_lists import degrees

from .greedy_kernels import FULL_TOLERANCE, greedy_dense
from .hashing_kernels import dbh_pairs, graphx_assign
from .hdrf_kernels import hdrf_dense
from .cuts.greedy import GREEDY, VARIANTS
from .cuts.hashing import GRAPHX
from .cuts.hdrf import HDRF_CAPACITY, HDRF_FULL_DEGREES, HDRF_LAMBDA, HDRF_NORMALIZED
from .partition import check_arguments, finish_partition, simple_input

__all__ = ["HASH_CUTS", "GREEDY_CUTS", "DISTRIBUTED_ALGORITHMS", "DEFAULT_BATCH", "PIECE",
           "partition_distributed", "check_distributed"]

HASH_CUTS = ("random", "dbh", "graphx-1d", "graphx-2d", "graphx-crvc")
GREEDY_CUTS = GREEDY + ("hdrf",)
DISTRIBUTED_ALGORITHMS = HASH_CUTS + GREEDY_CUTS
#: Edges each worker places between two merges of the shared state.
DEFAULT_BATCH = 8192
#: A local cluster (``vcut partition --workers N``) is started only for a graph of at
#: least this many edges: below, the cut runs in the calling process, which is
#: faster. Measured with ``vcut partition --algo hdrf`` on this project's 2-core
#: machine: ``--workers 2`` took 2.5 s for email-Enron (184 K edges; 0.6 s in one
#: process) and 5.1 s for cnr-2000 (2.2 M edges; 1.9 s in one process, the cut itself
#: 3.1 s against 0.4 s): starting the workers costs ~1.5 s and every
#: round of coordinated ingress a message exchange, while one process streams 5-10 M
#: edges/s.
LOCAL_MIN_EDGES = 50_000_000
#: Why ``--workers N`` runs a hash cut in this process whatever its size: the workers
#: would take the cut's own pass alone, which this process runs in threads over its CPUs
#: (`vcut.cuts.hashing.dbh`), while the rest (reading, the repeated-edge merge, the
#: replica table, the files) is this process's either way. Measured on this project's
#: 2-core machine, `vcut partition` of a 129 M-edge R-MAT graph with ``dbh`` into 32
#: clusters: 39.0 s in one process, 67.7 s with ``--workers 2``, the same files.
HASH_LOCAL = ("a hash cut's own pass is a small part of the run and runs in threads here, "
              "while the rest is this process's either way: a local Dask cluster only adds "
              "its start and the transfers; ran here (the same result); --scheduler runs on "
              "an existing cluster")
#: Edges per task of a hash cut (a task's input stays a few MB: Dask warns
#: about larger task graphs).
PIECE = 1 << 18
#: Resubmissions of a round whose tasks fail for lost workers.
RETRIES = 3


def local_cluster_pays(m, algo):
    """Whether ``--workers`` on a graph of ``m`` edges should start a local cluster
    (`LOCAL_MIN_EDGES`, and never for a hash cut: `HASH_LOCAL`); a sentence saying why
    not otherwise (None when it pays)."""
    if algo in HASH_CUTS:
        return HASH_LOCAL
    if m >= LOCAL_MIN_EDGES:
        return None
    same = "the sequential stream's result, not coordinated ingress's"
    return (f"{m:,} edges are cut faster in this process than a local Dask cluster starts "
            f"(it pays from {LOCAL_MIN_EDGES:,} edges); ran here ({same}); --scheduler "
            "runs on an existing cluster")


def partition_distributed(graph, p, algo="wb-libra", *, client, workers=None, batch=DEFAULT_BATCH,
                          lam=1.0, seed=0, capacities=None, progress=None):
    """Partition the edges of ``graph`` into ``p`` clusters on a Dask cluster.

    Parameters
    ----------
    graph : ir_graph.Graph
    p : int
    algo : str
        One of `DISTRIBUTED_ALGORITHMS`.
    client : distributed.Client
        The cluster (`runtime.dask_cluster.dask_client`).
    workers : int, optional
        Chunks of the stream, one per worker (default: the client's workers).
        The result depends on it (greedy cuts); give it for reproducible runs
        across clusters.
    batch : int
        Greedy cuts: edges each worker places between two merges.
    lam, seed, capacities
        As `vcut.partition.partition_graph`.
    progress : callable(str), optional
        Called with a line per round (greedy) or once (hash).

    Returns
    -------
    vcut.partition.EdgePartition
        ``info`` adds ``workers``, ``batch``, ``rounds`` and ``distributed``.

    Raises
    ------
    InputError
        An algorithm that does not distribute, bad p, batch, workers, lambda,
        seed or capacities, an empty graph.
    VcutError
        A round that keeps failing on the cluster.
    """
    workers = check_distributed(algo, p, seed, lam, batch, workers, client)
    simple, cap = simple_input(graph, p, algo, capacities)
    src, dst, weight = simple[:3]
    m, n = len(src), graph.n
    say = progress or (lambda line: None)
    deg = degrees(src, dst, n)
    t0 = time.perf_counter()
    if algo in HASH_CUTS:
        out = _hash_cut(client, algo, src, dst, deg, p, cap, seed, say)
        rounds = 1
    else:
        out, rounds, _, _ = _coordinated(client, algo, src, dst, weight, deg, n, p, cap, lam,
                                         batch, int(workers), say)
    info = {"algo": algo, "p": int(p), "lambda": float(lam), "order": "given", "seed": int(seed),
            "seconds": time.perf_counter() - t0, "distributed": True, "workers": int(workers),
            "batch": int(batch) if algo in GREEDY_CUTS else None, "rounds": rounds}
    return finish_partition(graph, simple, out, cap, deg, info)


def check_distributed(algo, p, seed, lam, batch, workers, client):
    """Refuse what a distributed cut cannot take (`InputError`; `VcutError` for a
    cluster without workers); returns the worker count (default: the client's)."""
    if algo not in DISTRIBUTED_ALGORITHMS:
        raise InputError(f"{algo!r} does not run distributed; use one of "
                         f"{', '.join(DISTRIBUTED_ALGORITHMS)} (or drop --workers)")
    if isinstance(p, bool):
        raise InputError(f"the number of clusters must be a positive integer, got {p!r}")
    check_arguments(p, seed, lam)
    if isinstance(batch, bool) or not isinstance(batch, (int, np.integer)) or batch < 1:
        raise InputError(f"the batch must be a positive number of edges, got {batch!r}")
    if workers is None:
        workers = len(client.nthreads())
        if workers == 0:
            raise VcutError("the Dask cluster has no workers; start some with "
                            "'dask worker ADDRESS'")
    elif isinstance(workers, bool) or not isinstance(workers, (int, np.integer)) or workers < 1:
        raise InputError(f"the number of workers must be a positive integer, got {workers!r}")
    return int(workers)


# -- running tasks ------------------------------------------------------------
def _lost_worker(exc):
    """Whether ``exc`` is the cluster losing a worker (worth a resubmission)."""
    from distributed import KilledWorker  # lazy: dask is optional
    from distributed.comm import CommClosedError  # lazy: dask is optional

    return isinstance(exc, (KilledWorker, CommClosedError, concurrent.futures.CancelledError))


def _run_tasks(client, calls, what):
    """Results of ``calls`` (``(function, args)`` pairs) run on the cluster, in order.

    Dask re-runs the tasks of a worker that dies; a call that still fails for a
    lost worker is resubmitted up to `RETRIES` times. A task's own error
    propagates.
    """
    results = [None] * len(calls)
    todo = list(range(len(calls)))
    for attempt in range(RETRIES + 1):
        futures = {i: client.submit(calls[i][0], *calls[i][1], pure=False) for i in todo}
        failed = []
        for i, fut in futures.items():
            try:
                results[i] = fut.result()
            except Exception as exc:  # noqa: BLE001 - sorted below
                if not _lost_worker(exc):
                    raise
                failed.append(i)
        if not failed:
            return results
        todo = failed
    raise VcutError(f"{what}: tasks kept failing as Dask workers were lost ({RETRIES + 1} "
                    "attempts); look at the workers' logs, or run with fewer workers")


# -- hash cuts ----------------------------------------------------------------
def _hash_piece(algo, s, d, du, dv, p, cap, seed, offset):
    """The clusters of one piece of the stream (its first edge is ``offset``)."""
    out = np.empty(len(s), dtype=np.int32)
    if algo == "random":
        bits = np.random.PCG64(seed)
        bits.advance(offset)  # one draw per edge: the sequential generator at this edge
        out[:] = np.random.Generator(bits).choice(p, size=len(s), p=cap)
    elif algo == "dbh":
        dbh_pairs(s, d, du, dv, np.cumsum(cap)[:-1], seed, out)
    else:
        graphx_assign(s, d, p, GRAPHX[algo], seed, out)
    return out


def _hash_cut(client, algo, src, dst, deg, p, cap, seed, say):
    m = len(src)
    starts = range(0, m, PIECE)
    say(f"hashing {m:,} edges in {len(starts)} pieces")
    calls = []
    for a in starts:
        b = min(a + PIECE, m)
        s, d = src[a:b], dst[a:b]
        du, dv = (deg[s], deg[d]) if algo == "dbh" else (None, None)
        calls.append((_hash_piece, (algo, s, d, du, dv, p, cap, seed, a)))
    return np.concatenate(_run_tasks(client, calls, f"{algo} on the cluster"))


# -- coordinated greedy ingress -------------------------------------------------
def _greedy_round(algo, s, d, w, deg, rem, rows, load, maxload, cap, full):
    """One worker's round: place the slice (``s``, ``d``: local vertex ids) on its copy
    of the state, a cluster being full for it at ``full`` (its share of the room
    left); returns ``(clusters, rows, load, maxload)`` after it."""
    k = len(s)
    out = np.empty(k, dtype=np.int32)
    order = np.arange(k, dtype=np.int64)
    rows = rows.copy()  # what arrives may be read-only
    load = load.copy()
    counter = np.zeros(2, dtype=np.int64)
    if algo == "hdrf":
        part = np.zeros(len(rows), dtype=np.int64)
        maxload = hdrf_dense(s, d, order, cap, HDRF_LAMBDA, 1.0, HDRF_NORMALIZED,
                             full, deg, part, out, rows, load, maxload, counter)
    else:
        rule = VARIANTS[algo][0]
        greedy_dense(s, d, w, order, deg, rem.copy(), cap, full, rule, out, rows,
                     load, counter)
    return out, rows, load, maxload


#: Smoothing of the shares of `_shares`: a worker's share of a cluster's room
#: follows what it placed there in the last round plus this fraction of the
#: mean placement, so that a cluster no worker used is shared evenly.
SHARE_SMOOTHING = 2.0
#: What a worker placed counts for its shares with a weight that halves
#: (SHARE_MEMORY) every SHARE_EDGES edges it places after.
SHARE_MEMORY = 0.5
SHARE_EDGES = 8192


def _fractions(demand):
    """Each worker's fraction of each cluster (a column sums to 1): in proportion
    to what it placed there lately (``demand``, a row per worker), smoothed by
    `SHARE_SMOOTHING` times the mean so that a cluster no worker used is shared
    evenly."""
    demand = demand + SHARE_SMOOTHING * demand.mean() + 1e-12
    return demand / demand.sum(axis=0)


def _shares(now, bound, used, active):
    """Each active worker's view of the loads for a round: the bound less its share
    of the room left (``bound - now``), so that it sees a cluster full when its
    share is spent and the least loaded is the one with most share left.

    A cluster's room is shared in proportion to what each worker placed there in
    the last round (`_fractions`): a worker whose part of the stream keeps
    filling a cluster keeps most of it, as a sequential stream would, instead of
    every worker spreading over every cluster.
    """
    room = bound - now  # negative where already over: every view sees it full
    frac = _fractions(used[active])
    return {c: bound - room * frac[i] for i, c in enumerate(active)}


def _edge_shares(room, frac, need):
    """Integer shares ``S[i, c]`` of each cluster's ``room`` (whole edges) among the
    workers of a round: about ``room * frac`` (``frac[i, c]``, a column sums to 1),
    no column above its room, and every row at least the ``need[i]`` edges worker
    ``i`` places in the round, so that no worker runs out of room while another
    has some to spare. Possible when ``need.sum() <= room.sum()``; otherwise
    every room is handed out and a row stays short.

    HDRF's capacity is a whole number of edges per cluster: shares in whole
    edges, summing to at most the room, keep it exactly, as the sequential
    stream does.
    """
    share = np.floor(room[None, :] * frac).astype(np.int64)
    left = room - share.sum(axis=0)
    for i in np.argsort(need - share.sum(axis=1), kind="stable")[::-1]:
        short = int(need[i] - share[i].sum())
        for c in np.argsort(-frac[i], kind="stable"):  # the clusters it wants most first
            if short <= 0:
                break
            give = min(short, int(left[c]))
            share[i, c] += give
            left[c] -= give
            short -= give
        for j in range(len(need)):  # then what others hold beyond their need
            if short <= 0:
                break
            if j == i:
                continue
            for c in np.argsort(frac[i] - frac[j], kind="stable")[::-1]:
                spare = int(share[j].sum() - need[j])
                if short <= 0 or spare <= 0:
                    break
                give = min(short, spare, int(share[j, c]))
                share[j, c] -= give
                share[i, c] += give
                short -= give
    return share


class _Ingress:
    """The driver's side of coordinated ingress: the merged state (replica sets,
    loads, PG's unassigned-edge counts), the chunks and rounds, each round's
    views of the loads, and the merge of the workers' results. ``total`` is the
    stream's weight (the bound of the weighted rules)."""

    def __init__(self, algo, m, total, deg, n, p, cap, lam, batch, workers):
        self.algo, self.m, self.p, self.cap, self.batch = algo, m, p, cap, batch
        nw = (p + 63) // 64
        check_memory(n * (8 * nw + 8) + 4 * m, f"the shared state of {algo} with p = {p} on "
                     f"{n:,} vertices", "use fewer clusters")
        self.bounds = np.linspace(0, m, workers + 1).astype(np.int64)
        chunk = int((self.bounds[1:] - self.bounds[:-1]).max())
        self.rounds = max(1, -(-chunk // batch))
        self.scale = cap * p
        if algo == "hdrf":  # the bound on load / (cap p), as hdrf_assign has it
            self.bound = np.full(p, HDRF_CAPACITY * np.ceil(m / p))
            self.kdeg = deg if HDRF_FULL_DEGREES else np.zeros(0, dtype=np.int64)
            self.weighted = False
        else:  # the bound on load, as greedy_assign has it
            self.weighted, bounded = VARIANTS[algo][1:]
            limit = lam * (total if self.weighted else float(m)) if bounded else np.inf
            self.bound = limit * (1.0 - FULL_TOLERANCE) * cap
            self.kdeg = deg
        self.A = np.zeros((n, nw), dtype=np.uint64)  # the merged replica sets
        self.load = np.zeros(p)
        self.rem = deg.copy()  # PG's unassigned edges per vertex
        # shares of the bound's room where more than one chunk streams and there is a bound
        self.shared = int((np.diff(self.bounds) > 0).sum()) > 1 and np.isfinite(self.bound).all()
        self.units = self.scale if algo == "hdrf" else np.ones(p)  # the bound is on load / units
        self.used = np.zeros((workers, p))  # what each worker placed per cluster lately, in units
        self.workers = workers
        if algo == "hdrf":  # the capacity in whole edges: the least k with k / scale >= bound
            k = np.ceil(self.bound * self.scale)
            k = np.where((k - 1) / self.scale >= self.bound, k - 1, k)
            self.capacity = np.where(k / self.scale < self.bound, k + 1, k)
        self.limits = {}  # hdrf: each chunk's limits in the round (`views`)

    def spans(self, r):
        """``(chunk, first edge, end)`` of every chunk with edges in round ``r``."""
        b, k = self.bounds, self.batch
        spans = [(c, min(b[c] + r * k, b[c + 1]), min(b[c] + (r + 1) * k, b[c + 1]))
                 for c in range(self.workers)]
        return [(c, a, e) for c, a, e in spans if a < e]

    def views(self, spans):
        """Each chunk's view of the loads in a round.

        The greedy rules see the bound less their share of the room (`_shares`).
        HDRF sees the merged loads themselves, as its balance term scores them
        in the sequential stream, and is given its share of each cluster's room
        in whole edges as per-cluster limits (`_edge_shares`, in `limits`).
        """
        self.limits = {}
        if not self.shared:  # one stream: the sequential run
            return {c: self.load.copy() for c, _, _ in spans}
        active = [c for c, _, _ in spans]
        if self.algo == "hdrf":
            room = np.maximum(self.capacity - self.load, 0).astype(np.int64)
            need = np.array([b - a for _, a, b in spans], dtype=np.int64)
            share = _edge_shares(room, _fractions(self.used[active]), need)
            for i, c in enumerate(active):
                self.limits[c] = (self.load + share[i] - 0.5) / self.scale
            return {c: self.load.copy() for c in active}
        views = _shares(self.load / self.units, self.bound, self.used, active)
        return {c: v * self.units for c, v in views.items()}

    def arguments(self, verts, view, chunk):
        """The state chunk ``chunk``'s round needs after its edges and weights
        (`_greedy_round`), ``view`` its view of the loads (`views`)."""
        local_deg = self.kdeg[verts] if len(self.kdeg) else self.kdeg
        return (local_deg, self.rem[verts], self.A[verts], view,
                float((view / self.scale).max()), self.cap, self.limits.get(chunk, self.bound))

    def decay(self):
        """Age the shares' memory by a round."""
        self.used *= SHARE_MEMORY ** (self.batch / SHARE_EDGES)

    def merge(self, c, verts, counts, rows, new_load, view):
        """Merge chunk ``c``'s round: its vertices, their edge counts in the round,
        their replica rows and its loads after the round."""
        self.A[verts] |= rows
        self.load += new_load - view
        self.used[c] += (new_load - view) / self.units
        self.rem[verts] -= counts


def _coordinated(client, algo, src, dst, weight, deg, n, p, cap, lam, batch, workers, say):
    """Coordinated ingress of ``workers`` chunks: ``(clusters, rounds, replica bitsets,
    loads)`` (loads in edges for hdrf, in weight otherwise)."""
    say = say or (lambda line: None)
    m = len(src)
    state = _Ingress(algo, m, float(weight.sum()), deg, n, p, cap, lam, batch, workers)
    w = weight if state.weighted else np.ones(m)
    out = np.empty(m, dtype=np.int32)
    tick = time.perf_counter()
    placed = 0
    for r in range(state.rounds):
        calls, slices = [], []
        spans = state.spans(r)
        views = state.views(spans)
        for c, a, b in spans:
            verts, inv = np.unique(np.concatenate([src[a:b], dst[a:b]]), return_inverse=True)
            s, d = inv[:b - a], inv[b - a:]
            calls.append((_greedy_round,
                          (algo, s, d, w[a:b]) + state.arguments(verts, views[c], c)))
            slices.append((c, a, b, verts, inv))
        results = _run_tasks(client, calls, f"{algo} round {r + 1}")
        state.decay()
        for (c, a, b, verts, inv), (got, rows, new_load, _) in zip(slices, results):
            out[a:b] = got
            counts = np.bincount(inv, minlength=len(verts))  # verts are unique
            state.merge(c, verts, counts, rows, new_load, views[c])
            placed += b - a
        if time.perf_counter() - tick >= 1.0 or r == state.rounds - 1:
            say(f"  round {r + 1}/{state.rounds}: {placed:,} of {m:,} edges placed")
            tick = time.perf_counter()
    return out, state.rounds, state.A, state.load
