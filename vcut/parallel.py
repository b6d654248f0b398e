"""The parallelism-aware vertex cut ``par``: a list scheduler that is also a vertex cut.

Greedy vertex cuts streamed in execution order (WB-Libra and its family) build
each cluster from a long stretch of the run, so the clusters' dependencies
run them almost one after another (docs/mapping.md, "The lower bound"). ``par``
cuts the same edges while scheduling them:

* every vertex's in-edges (the tasks that compute its value; edges oriented
  from the lower to the higher node id, an IR graph's execution order) go to
  one cluster together (in pieces of `vcut.par_kernels.CHUNK` for a vertex with
  more), which becomes the vertex's *home*: no partial results to gather;
* vertices are taken as a list scheduler takes tasks: a vertex becomes ready
  when the vertices it reads are scheduled; among the ready ones whose inputs
  exist by the time the first cluster falls idle, the one with the longest
  path to the end of the program (bottom level) goes first;
* the critical chain is protected where it bounds the makespan (longest path
  at least `CRITICAL` of max(longest path, work / p)): while a vertex on a
  longest path waits for its successor on the chain, its cluster is not
  offered as the cluster free first, and a vertex placed there that would
  hold the chain up pays `HOLD` cycles per cycle of delay;
* it goes to the cluster where, under a timing model, it finishes first plus
  ``beta * latency`` per new replica of an input (a message): candidates are
  the homes of its inputs and the cluster free first. A cluster runs its tasks
  in order; an input homed elsewhere arrives ``latency`` cycles after it is
  final; no cluster takes more than ``imbalance`` times its share of the work
  while another has room (the weighted balance of the WB variants);
* the price of a replica is chosen per graph: without one given, `PRICES`
  are tried in increasing order and the highest whose model makespan stays
  within `TOLERANCE` of the lowest seen is kept (after the first price that
  costs more, the geometric mean of it and the last kept one is tried; the
  highest is tried first and kept at once when the model puts it within
  `TOLERANCE` of its own bound, max(longest path, work / p), where the work
  includes the remote cycles the run charged under a memory model, and after
  it the geometric mean of the two highest, kept the same way). At a
  few clusters with work to spare every price runs as fast and the highest
  communicates least (fft at p = 8: price 96 sends 0.55× CompNet's bytes,
  1.5 sends 0.93×, at the same makespan); at many clusters a high price
  serialises the program (fft at p = 64: 1.5× the bound at price 1.5, 6.7× at
  24), so the low one stays. The timing model is not trusted below `BETA`: it
  charges half a latency per message and nothing for the bandwidth, and at
  price 0 it promises makespans the simulator never gives (dijkstra, p = 64:
  1.01× the bound in the model, 2.2× simulated, twice the communication);
* with a memory model (``numa``; `vcut.par_steering` can give the machine's for
  the clusters' cores in the compact placement), a task costs what the
  simulator charges it: ``min(1, w / DRAM cycles)`` of the extra latency from
  its cluster's NUMA node to the node of its memory object, placed by the
  first task that touches it (first touch), and the cluster free first on
  that node is a candidate too; the clusters are numbered by node inside, so
  ties go to the lowest cluster in node order;
* with ``grains`` (an IR graph's basic-block runs, `block_runs`), the runs off the
  longest paths (within `GRAIN_SHARE` of the model's bound) are scheduled whole, as one
  vertex each, so that a value read a few instructions later in its own run needs no
  message (`_par_grains`);
* the order in which tasks were scheduled is kept (`EdgePartition.schedule`):
  each cluster runs its tasks in that order, which the simulator and the
  mapping use instead of the program's order.

The design that lost (kept in ``bench/bench_mapping.py --parallel``, its "Designs"
tables): WB-Libra with its balance bound applied per window of the execution order,
so that every cluster takes its share of every stretch of the run. It spreads the
work, but it cuts the dependency chains that run through a window, and every
cut costs a message's latency on the critical path (docs/notes/mapping-par-quality.md,
"Stream order and the windowed design", has the comparison).

Cost: O(m log n) time per price tried (two heaps of vertices; the bottom
levels and the successor lists are computed once): one run where the highest
price meets the model's bound (every sample at p = 8), two where the mean of the
two highest does, at most ``len(PRICES) + 3`` otherwise, of which a run that cannot be kept stops once its
makespan passes the figure that rejects it (`_choose_price`; the highest price's
first run goes to the end under a memory model, whose bound it knows only
there); O(n + m) memory
(two results: the kept one and the next price's).
"""

import numpy as np

from vcut_base import arrays
from vcut_base.errors import InputError
from vcut_base.memory import jobs_that_fit
from vcut_base.progress import run_kernel, run_parallel
from ir_graph.edge_lists import execution_order
from ir_graph.graph import OPCLASSES, index_dtype
from ir_graph.replicas import replica_set_bytes, replica_sets


__all__ = ["par_assign", "BETA", "PRICES", "TOLERANCE", "LATENCY_SHARE", "CRITICAL", "HOLD",
           "GAMMAS", "CHAIN_SLACKS", "GRAIN_SHARE", "CALL_SHARE", "CALL_GRAIN_SHARE",
           "block_runs", "default_latency", "scratch_bytes"]

#: Price of a new replica (one more message) in message latencies: the lowest
#: `par_assign` tries, and the one it keeps when every higher price costs time.
BETA = 1.5
#: The replica prices `par_assign` tries when none is given, in increasing
#: order (fewer replicas, i.e. less communication, at each step).
PRICES = (BETA, 6.0, 24.0, 96.0, 384.0, 1536.0)
#: A higher price is kept while its model makespan stays within this fraction
#: of the lowest one seen: up to 2 % more time for less communication.
TOLERANCE = 0.02
#: Share of a message's latency the timing model charges: the simulated
#: cores issue out of order over 64 tasks and hide the rest (measured on the
#: ten samples: 0.5 gives the lowest makespans at p = 8 and 64).
LATENCY_SHARE = 0.5
#: The critical chain (the vertices on a longest path) is protected only when
#: it is at least this share of max(longest path, work / p): when it is not,
#: there is time to spare around it and a cluster held for it is wasted
#: (at p = 8, where the chain is 5-13 % of the work per cluster, holding one
#: makes every sample 1.4-1.7x slower in the model; at p = 64, dijkstra at
#: 0.39 runs 1.46x the model's bound without, 1.01x with).
CRITICAL = 0.3
#: What a cycle of delay to the critical chain costs a vertex placed on the
#: chain's cluster, in cycles of its own finish time: more than one, since a
#: delay to the chain delays everything after it (measured at p = 64: nn
#: 2.4x the model's bound at 2, 1.24x at 16 and above; neuron 2.0 / 1.11).
HOLD = 16.0
#: The priorities `vcut.par_steering` tries for ``par`` at many clusters (the
#: ``gamma`` of `par_assign`: bottom level minus ``gamma`` times top level),
#: judged by the simulator; 0, the bottom level alone, first.
GAMMAS = (0.0, 0.25, 0.5, 1.0)
#: The chain slacks `vcut.par_steering` tries for ``par`` at many clusters besides
#: `GAMMAS` (priority 0), judged by the simulator: every vertex whose longest path is
#: within 30 % (40 %) of the longest is on a protected chain. The hash table at p = 64
#: has counters in memory beside its longest chain, ``probes``'s (the LCG's seed at 0.87
#: of it, a loop index at 0.73); protecting only the longest, ``par`` lets the others hop
#: from cluster to cluster, a message at every hop, and its model runs 3.26x the bound
#: (1.92x with the chains within 0.3 protected). Most programs run slower with it
#: (neuron 1.12 -> 3.46x in the model), hence candidates, not a default.
CHAIN_SLACKS = (0.3, 0.4)
#: The grains `vcut.par_steering` tries for ``par`` at many clusters (``grains`` of
#: `par_assign`): a run of one basic block's instructions, executed one after another,
#: goes to one cluster as a whole when every path through it (the run's work counted
#: whole) is within this share of the model's bound. At -O0 half of the messages of the
#: sort at p = 64 carry a value to an instruction of its own block run that ``par`` put on
#: another cluster; with the runs off the longest paths kept whole it sends 0.68x
#: CompNet's bytes instead of 1.02x, 5 % slower after the mapping
#: (docs/notes/mapping-par-quality.md). Runs on the
#: longest paths stay split: every run kept whole, the sort runs 1.45x the bound.
GRAIN_SHARE = 0.5
#: With calls as the grains (`par_assign`'s ``calls``), a call is one when its work, with
#: its callees', is at most this share of the model's bound: small enough that 16 of them
#: fill a cluster's share of the work, as a task-parallel runtime's cut-off spawns a call
#: as a task above it and runs it inline below. The divide-and-conquer sample at p = 64:
#: 89 % of par's messages go between instructions of one activation; with the calls
#: whole at 1/16 it sends 0.56-0.62x CompNet's bytes instead of 0.91x at 1.07-1.08x the
#: bound (1/4: 0.30x at 1.16x; 1/8: 0.41x at 1.11x).
CALL_SHARE = 1.0 / 16
#: `vcut.par_steering` tries calls as grains with this ``grain_share``: every call kept
#: whole whose paths stay within the model's bound.
CALL_GRAIN_SHARE = 1.0


def block_runs(node_sid, node_opclass):
    """The basic-block run of every node of an IR graph (int64, non-decreasing from 0).

    Nodes are executed instructions in execution order; a run is a maximal stretch of
    nodes that execute consecutive static instructions (``node_sid``), cut after the
    control instructions that end a block (a branch followed by another class; phis,
    also "control", stay with the branch before them). A call's callee runs between two
    nodes of its caller, so it cuts the caller's run. Every run is a stretch of the
    execution, so no dependency leaves a run and comes back: contracting the runs keeps
    the graph acyclic.
    """
    sid = np.asarray(node_sid, dtype=np.int64)
    n = len(sid)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    control = np.asarray(node_opclass) == OPCLASSES.index("control")
    new = np.ones(n, dtype=np.bool_)
    new[1:] = (sid[1:] != sid[:-1] + 1) | (control[:-1] & ~control[1:])
    return np.cumsum(new) - 1


def default_latency(p):
    """Cycles a 32-byte value takes between two cores of the Table 2 machine
    with ``p`` cores, averaged over the pairs of cores (the latency ``par``
    assumes when no machine is given)."""
    # lazy: `vcut partition` imports no mapping (its package imports the whole pipeline)
    from mapping.interactions import VALUE_BYTES
    from mapping.machine import table2  # lazy: vcut partition never imports mapping (test_cli_imports)

    return table2(int(p)).mean_message_cycles(VALUE_BYTES)


def scratch_bytes(n, m, grains=False, calls=False):
    """Bytes `par_assign` allocates besides the replica sets: per vertex two
    CSR pointers, the bottom level, the top level (or the priority made of
    both, which replaces it), availability, the count of inputs left,
    two heaps (key and id), the critical flags and the cluster reserved for each
    vertex of a chain (`CHAIN_SLACKS`); per edge the successor list
    and the execution order; and two results (the kept one and the next
    price's: per vertex the home, per edge the assignment and the schedule,
    memory-resident unless spilled); ``grains``: plus the contraction of block runs;
    ``calls``: plus the call labels' stack, ends and work (`par_kernels.call_labels`)."""
    result = 4.0 * n + arrays.resident(4.0 * m) + arrays.resident(8.0 * m)
    per_vertex = 8.0 * 2 + 8.0 + 8.0 + 8.0 + 8.0 + 4 * 16.0 + 1.0 + 4.0
    plain = per_vertex * n + arrays.resident(4.0 * m) + 8.0 * m + 2 * result
    # with block runs (`_par_grains`): the edges' endpoints, runs and groups, the
    # contracted pairs with their weights and positions, the expansion's places (int64
    # per edge) and the run labels, groups and levels per vertex, besides the run itself
    return plain + (12 * 8.0 * m + 6 * 8.0 * n if grains else 0.0) + (6 * 8.0 * n if calls else 0.0)


def par_assign(src, dst, weight, n, p, cap, imbalance=1.03, latency=None, beta=None,
               gamma=0.0, numa=None, chain_slack=0.0, grains=None, grain_share=GRAIN_SHARE,
               calls=None, call_share=CALL_SHARE):
    """Schedule and cut the simple graph ``(src, dst, weight)`` into ``p`` clusters.

    Parameters
    ----------
    src, dst : int arrays (m,); weight : float64 (m,)
        A simple graph (no self-loops or repeated pairs), as `vcut.simplify` gives it.
    n, p : int
    cap : float64 (p,)
        Capacity fractions (sum 1): cluster ``c`` runs at ``cap[c] * p`` times
        the speed of an equal share and takes that share of the work.
    imbalance : float
        Most work a cluster takes, relative to its share (while another has room).
    latency : float, optional
        Cycles a value takes to reach another cluster (default `default_latency`).
    beta : float, optional
        Price of a new replica in latencies (default: chosen among `PRICES`,
        see the module docstring).
    gamma : float
        Priority of a ready vertex: its bottom level minus ``gamma`` times its
        top level (the longest path to it). 0, the bottom level alone, runs
        the longest remaining chain first; above 0 a vertex early in the
        program also goes earlier, so that a chain that needs no other work
        (a loop's counter) runs ahead of bulk work with a longer tail instead
        of falling behind it (fft at p = 64: 1.53x the bound at 0, 1.33x at 1;
        see `GAMMAS`).

    numa : tuple, optional
        ``(obj, node, latency_matrix, memory_cycles)``: the memory object of
        every edge (int (m,), -1: none), the NUMA node each cluster will run on
        (int (p,)), the machine's memory latencies between nodes and the cycles
        of a local DRAM access. A task then costs, as in the simulator
        (`mapping.simulate`), ``min(1, w / memory_cycles) * (L[a, b] - L[a, a])``
        more on a cluster of node ``a`` when its object was first touched from
        node ``b``, and the cluster free first on the object's node is a
        candidate too (`par_kernels._local`). Default: no memory model.
    chain_slack : float
        0: the chain protected is the longest path (see the module docstring).
        Above 0, less than 1: every vertex whose longest path is within this share of
        the longest is on a protected chain, each chain's cluster reserved for it
        (several counters and running sums beside the longest one; see
        `CHAIN_SLACKS` and `par_kernels.timed_assign`'s ``chains``).
    grains : int array (n,), optional
        A run label per vertex, non-decreasing and contiguous (`block_runs`). The
        runs every path through which (the run's work counted whole) is within
        ``grain_share`` of the model's bound, max(longest path, work / p), are
        scheduled as one vertex each (`_contract`): all their tasks go to one cluster,
        in the order of the schedule. Not with ``numa``.
    grain_share : float
        See ``grains``: above 0 and at most 1.
    calls : int array (n,), optional
        Instead of ``grains``, an IR graph's call depth per vertex (``node_depth``): the
        runs are the outermost calls whose work (with their callees') is at most
        ``call_share`` of the model's bound, each vertex outside them a run of its own
        (`par_kernels.call_labels`); then as ``grains``.
    call_share : float
        See ``calls``: above 0 and at most 1.

    Returns
    -------
    out : int32 (m,)
        Cluster of every edge.
    home : int32 (n,)
        Cluster where each vertex's value is final (-1: no edges).
    schedule : int (m,)
        The edges in the order they were scheduled.
    info : dict
        ``latency``, ``beta`` (the price kept), ``gamma``, ``chain_slack``, ``model_makespan``
        (cycles, under the timing model), ``prices`` (``[price, model makespan]`` of
        every run, in the order run); with ``grains``: ``grain_share``, ``grains``
        (runs kept whole) and ``grain_vertices`` (their vertices).
    """
    from . import par_kernels  # (on demand: the kernels load with numba)
    if latency is None:
        latency = default_latency(p)
    if not np.isfinite(latency) or latency < 0:
        raise InputError(f"the message latency must be a number of cycles >= 0, got {latency}")
    if not np.isfinite(gamma) or gamma < 0:
        raise InputError(f"the priority weight gamma must be a number >= 0, got {gamma}")
    if not np.isfinite(chain_slack) or not 0 <= chain_slack < 1:
        raise InputError(f"the chain slack must be a share >= 0 and < 1, got {chain_slack}")
    if beta is not None and (not np.isfinite(beta) or beta < 0):
        raise InputError(f"the replica price beta must be >= 0, got {beta}")
    if grains is not None or calls is not None:
        if grains is not None and calls is not None:
            raise InputError("par takes block runs or calls as its grains, not both; "
                             "drop one of them")
        for name, share in (("grain", grain_share), ("call", call_share)):
            if not np.isfinite(share) or not 0 < share <= 1:
                raise InputError(f"the {name} share must be above 0 and at most 1, got {share}")
        if numa is not None:
            raise InputError("par schedules whole block runs or calls without a memory model; "
                             "drop one of them")
        return _par_grains(src, dst, weight, n, p, cap, grains, grain_share,
                           dict(imbalance=imbalance, latency=latency, beta=beta, gamma=gamma,
                                chain_slack=chain_slack), calls, call_share)
    m = len(src)
    modelled = numa is not None
    numa, perm = _numa_model(numa, m, p)
    if perm is not None:  # clusters renumbered so that each node's are a range
        cap = np.asarray(cap, np.float64)[perm]
    order = execution_order(np.minimum(src, dst), np.maximum(src, dst))
    order = np.empty(0, dtype=np.int64) if order is None else order
    top, bottom = par_kernels.levels(src, dst, weight, order, n)
    out_v = arrays.empty(m, index_dtype(n))
    ptr, out_ptr = par_kernels.successors(src, dst, n, out_v)
    weight = np.asarray(weight, np.float64)
    cap = np.asarray(cap, np.float64)
    total = float(np.sum(weight))
    limit = float(imbalance) * total
    # the model's own bound: the longest path at the fastest cluster's speed, the work
    # (plus the ``extra`` cycles a memory model charged) shared
    def bound(extra=0.0):
        return _model_bound(bottom, total + extra, p, cap)

    cp = float(bottom.max(initial=0.0))
    critical = (top + bottom) >= cp * (1 - chain_slack - 1e-9) \
        if cp / (p * float(cap.max())) >= CRITICAL * bound() else np.zeros(0, dtype=np.bool_)
    priority = bottom - float(gamma) * top if gamma else bottom
    del top
    runs = _SpeculativeRuns(
        lambda slot, price, cutoff: run_kernel(
            "partition", "edges", m, par_kernels.timed_assign, src, dst, weight, order, ptr,
            out_ptr, out_v, priority, critical, HOLD, n, p, cap, limit,
            float(latency) * LATENCY_SHARE, float(price), float(cutoff), slot[0],
            replica_sets(n, p), slot[1], slot[3], slot[2], slot[4], bool(chain_slack > 0)),
        # a run writes its clusters, homes, schedule, value times and the memory model's
        # first touches (numa's last array): each slot has its own
        lambda: (arrays.empty(m, np.int32), np.empty(n, dtype=np.int32),
                 arrays.empty(m, index_dtype(m)), np.empty(n),
                 numa[:-1] + (np.empty_like(numa[-1]),)),
        p, pair=beta is None and _pair_runs(m, n, p))
    run, keep = runs.run, runs.keep
    spans = runs.spans

    def remote():
        """The memory model's extra cycles in the last run (which went to the end)."""
        return par_kernels.remote_cycles(runs.last[0], weight, runs.last[4])

    if beta is not None:
        run(beta)
        keep()
        kept = float(beta)
    else:
        kept = _choose_price(run, keep, bound, remote if modelled else None)
    out, home, schedule = runs.kept[:3]
    if perm is not None:
        out[:] = perm[out]
        home[home >= 0] = perm[home[home >= 0]]
    return out, home, schedule, {"latency": float(latency), "beta": kept, "gamma": float(gamma),
                                 "chain_slack": float(chain_slack),
                                 "numa": modelled,
                                 "model_makespan": spans[kept],
                                 "prices": [[b, s] for b, s in spans.items()]}


#: The most bytes a second run's buffers may take for the price walk to run two prices at
#: once (`_pair_runs`): a program of a few million instructions gains half its walk's time
#: for some tens of MB, while a large trace's peak memory (the budget of `vcut analyze`
#: at scale) stays that of one run.
PAIR_BYTES = 256 << 20


def _pair_runs(m, n, p):
    """Whether `par_assign`'s price walk may run two prices at once: two CPUs, and a
    second run's buffers and replica sets (`_SpeculativeRuns`) of at most `PAIR_BYTES`
    and within a quarter of the memory available."""
    need = 16 * m + 16 * n + replica_set_bytes(n, p)
    return need <= PAIR_BYTES and jobs_that_fit(2, 2 * need, share=0.5) >= 2


class _SpeculativeRuns:
    """`_choose_price`'s ``run`` and ``keep`` over result buffers, running the walk's next
    price beside the one asked for.

    `_choose_price` walks the prices one after another: the highest (`PRICES`'s last)
    first, then the mean of the two highest (`upper_mean`), then `PRICES` in increasing
    order, each run stopped once its makespan passes the cutoff the runs before it set.
    With ``pair``, a run starts a price the walk asks for later beside it in a second
    thread, with the loosest cutoff the walk can give it: beside the highest, the walk's
    first price (no cutoff); beside the mean, the walk's second (at the cutoff the first
    one's run sets, known by then); beside ``PRICES[i]``, the next (at most this run's
    cutoff), but beside the last but one where the highest's run went to the end (the walk
    does not run it again), the mean of the one before and it, which the walk asks for
    when that price loses. So where the mean loses, the walk goes on as if it had not
    run. When the
    walk asks for that price, its run is the one it would have made when the cutoff it has
    now is the same, or when the run went to the end within it (a run's makespan only
    grows, so the kernel's stop test never fired and every buffer is as it would be);
    otherwise it runs again. So the prices kept, the clusters and
    ``info["prices"]`` are those of the runs one after another (a test compares them), in
    about half the time when the walk goes on (every price within the tolerance).

    ``run_into(slot, price, cutoff)`` runs one price into ``slot`` (``make_slot()``'s
    buffers: clusters, home, schedule, value times, the memory model) and returns the
    kernel's ``(free, load, complete)``. At most three slots: the kept run's (or, while the
    mean runs, the walk's first price's), the one running and the one run ahead (two
    without ``pair``, as one run at a time needs)."""

    def __init__(self, run_into, make_slot, p, pair):
        self.run_into, self.make_slot, self.p, self.pair = run_into, make_slot, p, pair
        self.slots = []
        self.kept = self.last = None
        self.spans = {}  # price -> model makespan, in the order the walk asked for them
        self.ahead = {}  # price -> (slot, cutoff, span, complete): run beside another
        self.top_complete = False  # the walk's first run (the highest price) went to the end
        self.asked = 0

    def _free_slot(self, busy=()):
        # the last run is either kept by now or given up: `keep` follows its run at once
        held = [self.kept, *busy] + [a[0] for a in self.ahead.values()]
        for slot in self.slots:
            if not any(slot is h for h in held):
                return slot
        self.slots.append(self.make_slot())
        return self.slots[-1]

    def _span(self, free):
        return float(free.max()) if self.p else 0.0

    def _next(self, price, cutoff):
        """``(price, cutoff)``: the price the walk asks for next after ``price`` (asked
        with ``cutoff``) but one, when known beforehand, with the loosest cutoff the walk
        can give it; None when not known."""
        if self.asked == 1:  # the highest: the walk's first price, which has no cutoff
            return PRICES[0], np.inf
        if self.asked == 2:  # the mean: the walk's second price, at the first one's cutoff
            first = self.ahead.get(float(PRICES[0]))
            if first is None or len(PRICES) < 2:
                return None
            return PRICES[1], (1.0 + TOLERANCE) * first[2]
        if price == PRICES[-2] and len(PRICES) >= 3 and self.top_complete:
            # the highest ran to the end (a memory model): the walk does not run it again,
            # and if this price loses it asks for the mean of the one before and this one,
            # at this cutoff
            return float(np.sqrt(PRICES[-3] * PRICES[-2])), cutoff
        if price in PRICES[:-1]:  # later ones have at most this run's cutoff
            return PRICES[PRICES.index(price) + 1], cutoff
        return None

    def run(self, price, cutoff=np.inf):
        price = float(price)
        self.asked += 1
        have = self.ahead.pop(price, None)
        if self.asked not in (2, 3):  # the mean keeps the walk's first price's run (beside
            # the highest), and that one the second's (beside the mean); any other run the
            # walk did not ask for is never asked for
            self.ahead.clear()
        if have is not None:
            slot, ran_cutoff, span, complete = have
            if ran_cutoff == cutoff or (complete and span <= cutoff):
                return self._done(price, slot, span, complete)
        nxt = self._next(price, cutoff) if self.pair else None
        slot = self._free_slot()
        if nxt is None:
            free, _, complete = self.run_into(slot, price, cutoff)
            return self._done(price, slot, self._span(free), bool(complete))
        nxt, ahead = nxt
        other = self._free_slot(busy=(slot,))
        (free, _, complete), (free2, _, complete2) = run_parallel(
            [lambda: self.run_into(slot, price, cutoff),
             lambda: self.run_into(other, nxt, ahead)], 2)
        self.ahead[float(nxt)] = (other, ahead, self._span(free2), bool(complete2))
        return self._done(price, slot, self._span(free), bool(complete))

    def _done(self, price, slot, span, complete):
        if self.asked == 1:
            self.top_complete = complete
        self.last = slot
        self.spans[price] = span
        return span, complete

    def keep(self):
        """Keep the last run's result."""
        self.kept = self.last


def _par_grains(src, dst, weight, n, p, cap, grains, share, kw, calls=None, call_share=None):
    """`par_assign` with the runs of ``grains`` within ``share`` of the model's bound
    scheduled whole (see its ``grains``).

    The contracted graph has a vertex per run kept whole and per other vertex, in
    execution order, and an edge per pair of them with tasks between them (their
    weights summed); the work of the tasks inside a run rides on its in-edges from
    other runs, in proportion to their weight (equal shares where they weigh
    nothing), so that every path through the run counts all of it. A run without
    in-edges from other runs stays split (nothing would carry its work). ``par``
    schedules that graph; then every task of a run kept whole goes to the run's
    home, in the order the run was scheduled (its tasks by their vertices'
    execution order), every other task where ``par`` put it. A vertex without
    in-edges in a run kept whole is homed where it is first used, as ``par`` homes
    one."""
    from . import par_kernels
    if calls is not None:
        depth = np.asarray(calls)
        if depth.shape != (n,) or depth.dtype.kind not in "iu" or (n and depth.min() < 0):
            raise InputError(f"the call depths must be {n:,} integers >= 0, one per vertex "
                             "(an IR graph's node_depth)")
    else:
        g = np.asarray(grains)
        if g.shape != (n,) or g.dtype.kind not in "iu" or (n and (
                g[0] != 0 or not np.isin(np.diff(g), (0, 1)).all())):
            raise InputError(f"the block runs must be {n:,} labels, one per vertex, from 0, "
                             "each the last one or the next (vcut.parallel.block_runs)")
        g = g.astype(np.int64, copy=False)
    weight = np.asarray(weight, np.float64)
    cap = np.asarray(cap, np.float64)
    lo = np.minimum(src, dst).astype(np.int64, copy=False)
    hi = np.maximum(src, dst).astype(np.int64, copy=False)
    m = len(lo)
    info = {"grain_share": float(share), "grains": 0, "grain_vertices": 0}
    # the model's bound (par_assign's): the longest path at the fastest share, the work shared
    order = execution_order(lo, hi)
    _, bottom = par_kernels.levels(lo, hi, weight,
                                   np.empty(0, np.int64) if order is None else order, n)
    bound = _model_bound(bottom, float(weight.sum()), p, cap)
    del bottom, order
    if calls is not None:  # the calls within their share of the bound, each vertex else
        info["call_share"] = float(call_share)
        g = par_kernels.call_labels(depth.astype(np.int64, copy=False),
                                    np.bincount(hi, weights=weight, minlength=n),
                                    float(call_share) * bound)
    # every path through each run, its work counted whole
    runs = int(g[-1]) + 1 if n else 0
    glo, ghi = g[lo], g[hi]
    ext, carried = _between(glo, ghi, weight, runs)
    glo, ghi = glo[ext], ghi[ext]
    order = np.lexsort((glo, ghi))
    top, bottom = par_kernels.levels(glo[order], ghi[order], carried[order],
                                     np.empty(0, np.int64), runs)
    whole = (top + bottom <= share * bound) & (np.bincount(ghi, minlength=runs) > 0)
    del top, bottom, order, carried, glo, ghi, ext
    size = np.bincount(g, minlength=runs)
    whole &= size > 1
    if not whole.any():
        out, home, schedule, run_info = par_assign(src, dst, weight, n, p, cap, **kw)
        return out, home, schedule, {**run_info, **info}
    new = np.ones(n, dtype=np.bool_)
    new[1:] = (g[1:] != g[:-1]) | ~whole[g[1:]]
    group = np.cumsum(new) - 1
    del new
    kept = whole[g]  # the vertices of runs kept whole
    info.update(grains=int(whole.sum()), grain_vertices=int(kept.sum()))
    groups = int(group[-1]) + 1
    # the contracted graph
    gs, gd = group[lo], group[hi]
    ext, carried = _between(gs, gd, weight, groups)
    key, inv = np.unique(gs[ext] * groups + gd[ext], return_inverse=True)
    cw = np.bincount(inv, weights=carried, minlength=len(key))
    del carried
    out2, home2, sched2, run_info = par_assign(key // groups, key % groups, cw, groups, p, cap,
                                               **kw)
    del key, cw
    # back to the tasks: a run kept whole at its home, in its first task's place
    pos2 = np.empty(len(sched2), dtype=np.int64)
    pos2[sched2] = np.arange(len(sched2))
    first = np.full(groups, len(sched2), dtype=np.int64)
    cd = gd[ext]
    np.minimum.at(first, cd, pos2[inv])
    out = np.empty(m, dtype=np.int32)
    place = np.empty(m, dtype=np.int64)
    out[~ext] = home2[gd[~ext]]
    place[~ext] = first[gd[~ext]]
    e_out = out2[inv].astype(np.int32)
    e_place = pos2[inv]
    whole_dst = kept[hi[ext]]  # tasks of a vertex of a run kept whole
    e_out[whole_dst] = home2[cd[whole_dst]]
    e_place[whole_dst] = first[cd[whole_dst]]
    out[ext], place[ext] = e_out, e_place
    del e_out, e_place, pos2, first, inv, cd, gs, gd, ext
    schedule = np.lexsort((lo, hi, place)).astype(index_dtype(m), copy=False)
    del place
    home = home2[group].astype(np.int32)
    home[np.bincount(np.concatenate([lo, hi]), minlength=n) == 0] = -1  # no edges, no home
    # a vertex without in-edges in a run kept whole: homed where first used
    source = kept & (np.bincount(hi, minlength=n) == 0)
    if source.any():
        rank = np.empty(m, dtype=np.int64)
        rank[schedule] = np.arange(m)
        uses = np.flatnonzero(source[lo])
        first_use = np.full(n, m, dtype=np.int64)
        np.minimum.at(first_use, lo[uses], rank[uses])
        v = np.flatnonzero(source & (first_use < m))
        home[v] = out[schedule[first_use[v]]]
    return out, home, schedule, {**run_info, **info}


def _model_bound(bottom, work, p, cap):
    """The timing model's bound: the longest path (the largest bottom level) at the
    fastest cluster's share, or the work shared by ``p`` clusters."""
    return max(float(bottom.max(initial=0.0)) / (p * float(cap.max())), work / p)


def _between(a, b, weight, groups):
    """``(ext, carried)`` for edges from group ``a`` to group ``b``: which edges join two
    groups, and their weights plus the work of the edges inside their ``b`` group
    (`_carried`)."""
    ext = a != b
    inner = np.bincount(b[~ext], weights=weight[~ext], minlength=groups)
    return ext, _carried(b[ext], weight[ext], inner, groups)


def _carried(dst_group, w, inner, groups):
    """The weight of each edge into a group plus its share of the group's inner work
    (in proportion to its weight; equal shares where the group's in-edges weigh nothing)."""
    total = np.bincount(dst_group, weights=w, minlength=groups)
    count = np.bincount(dst_group, minlength=groups)
    t = total[dst_group]
    share = np.where(t > 0, w / np.where(t > 0, t, 1.0), 1.0 / np.maximum(count[dst_group], 1))
    return w + inner[dst_group] * share


def _numa_model(numa, m, p):
    """``(numa, perm)``: `par_kernels.timed_assign`'s memory model from `par_assign`'s
    ``numa`` argument (checked), and the renumbering of the clusters that puts
    each node's in a range (None: they are already), or an empty model."""
    none = (np.empty(0, np.int32), np.empty(0, np.int64), np.empty(0, np.int64),
            np.zeros((0, 0)), 1.0, np.empty(0, np.int64))
    if numa is None:
        return none, None
    obj, node, lat, mem = numa
    obj = np.asarray(obj)
    node = np.asarray(node)
    lat = np.asarray(lat, dtype=np.float64)
    k = lat.shape[0] if lat.ndim == 2 else -1
    if lat.ndim != 2 or lat.shape != (k, k) or not np.isfinite(lat).all() \
            or (lat < 0).any():
        raise InputError("the NUMA latencies must be a square matrix of finite cycles >= 0")
    if obj.shape != (m,) or obj.dtype.kind not in "iu" or (m and obj.min() < -1):
        raise InputError(f"the memory objects must be {m:,} integers >= -1, one per edge")
    if node.shape != (p,) or node.dtype.kind not in "iu" \
            or (p and (node.min() < 0 or node.max() >= k)):
        raise InputError(f"the NUMA nodes of the clusters must be {p} integers 0..{k - 1}")
    if not np.isfinite(mem) or mem <= 0:
        raise InputError(f"the DRAM access must take a number of cycles > 0, got {mem}")
    node = node.astype(np.int64)
    perm = None
    if p > 1 and (np.diff(node) < 0).any():
        perm = np.argsort(node, kind="stable")
        node = node[perm]
    starts = np.searchsorted(node, np.arange(k + 1)).astype(np.int64)
    pen = lat - np.diag(lat)[:, None]
    objects = int(obj.max()) + 1 if m else 0
    return (obj, node, starts, pen, float(mem), np.empty(objects, np.int64)), perm


def upper_mean():
    """The geometric mean of the two highest `PRICES`: the price `_choose_price` judges
    against the model's bound after the highest."""
    return float(np.sqrt(PRICES[-2] * PRICES[-1]))


def _choose_price(run, keep, bound, remote=None):
    """The replica price to keep (see the module docstring): ``run(price, cutoff)``
    partitions and returns ``(model makespan, complete)``, stopping early once the
    makespan passes ``cutoff``; ``keep()`` keeps the last run's result. The highest
    price goes first and is kept at once when it is within `TOLERANCE` of the
    model's bound, ``bound(extra)`` for a run that added ``extra`` cycles of work:
    with a memory model, ``remote()`` gives the remote cycles the last run charged
    (the run then goes to the end, since its bound is known only there), without one
    the bound is ``bound(0)``; else the geometric mean of the two highest prices
    (`upper_mean`) is judged the same way; otherwise `PRICES` are run in increasing
    order while each stays within `TOLERANCE` of the lowest model makespan so far,
    and after the first that does not, the geometric mean of it and the last one kept
    is tried. (A price within `TOLERANCE` of the bound is within it of every run's
    makespan, so the walk, reaching it, would keep it: the second test spares the walk
    where the highest price alone costs time, mandel under the ``sp-cd-mf`` control
    model at p = 8: 1536 runs 1.8 % above the bound, 768 within it; two runs instead of
    seven, two rounds of two at a time (`_SpeculativeRuns`) instead of four, the same
    clusters.)

    Every run of the walk but its first (which nothing can reject yet) stops at the
    makespan that would reject it (a run's makespan only grows), so a price that
    loses costs only the part of the run up to there (p = 1024 on a 10 M-node
    trace: the highest price stopped at 58 % of its run); the prices kept and the
    clusters are the same as with every run to the end, and ``info["prices"]``
    records, for a run stopped early, the makespan it had reached (above the bound
    it missed)."""
    tol = 1.0 + TOLERANCE

    def judged(price):  # (model makespan, complete, the bound it is judged against)
        if remote is None:
            span, complete = run(price, tol * bound(0.0))
            return span, complete, bound(0.0)
        span, complete = run(price)
        return span, complete, bound(remote())

    top, top_complete, limit = judged(PRICES[-1])
    if top <= tol * limit:
        keep()
        return float(PRICES[-1])
    upper = upper_mean()
    span, _, limit = judged(upper)
    if span <= tol * limit:
        keep()
        return upper
    best, kept = np.inf, None
    for price in PRICES:
        if price == PRICES[-1] and top_complete and top > tol * best:
            span = top  # its whole run, from the start: it loses again
        else:  # a lower price, or the highest again (the lower ones overwrote its result)
            span, _ = run(price, tol * best)
        if span > tol * best:
            mid = float(np.sqrt(kept * price))
            span, _ = run(mid, tol * best)
            if span <= tol * best:
                keep()
                kept = mid
            break
        keep()
        kept, best = float(price), min(best, span)
    return kept
