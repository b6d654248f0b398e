"""Memory-centric run-time mapping: Algorithm 2 of the vertex-cut framework.

The source's pseudo-code reads ``.core`` of clusters that are not placed yet
and leaves its helpers undefined; this module defines each one and documents
the reading it uses.

Run queue
    Every cluster with at least one task is SCHEDULABLE (all are ready at
    mapping time: the mapping is static). The source leaves the order of
    ``clist`` open; Nearby can only place a cluster next to partners already
    placed, so the queue is the maximum-adjacency order of the communication
    graph (`run_queue`): the cluster exchanging the most bytes first, then
    always the one exchanging the most with those already queued. A cluster
    with no queued partner therefore starts a part of the program independent
    of everything placed so far (factor 3). Empty clusters come last.

``cluster_from_mem`` (line 6, factor 1)
    The partner ``c.p`` of cluster ``c`` is the cluster *earlier in the run
    queue* that shares the most memory accesses with it
    (`ClusterInteractions.shared_accesses`: the sum over data objects of the
    smaller access count); none when no earlier cluster touches an object of
    ``c``. Being earlier, the partner is always placed when ``c`` is.

``cluster_comm`` (line 9, factor 2)
    ``c.ipc``: the clusters ``c`` exchanges messages with, weighted by the
    bytes in both directions; line 29's test ``c.ipc != empty`` reads "some
    of them are placed" (else factor 3: DiffRegion away from the last
    placed cluster's region).

``architecture_decomposition`` (line 17, factor 3)
    Regions of the chip: the machine's NUMA nodes when it has more than one
    (the Table 2 machine: mesh quadrants), otherwise the quadrants of the
    mesh (halves of a one-row machine).

``nearby`` (line 30)
    Among the cores with room (see *room*), the one that minimises
    ``sum_q bytes(c, q) * hops(core, core(q))`` over the placed clusters ``q``
    of ``c.ipc``; ties go to the least loaded core, then the most central
    one (least total hops to every core), then the lowest id.

``diff_region`` (lines 27, 32)
    The least-loaded region other than the given one (when there is another),
    and in it the least-loaded core with room (ties: the most central, then
    the lowest id). Load is the assigned work divided by the core's speed.

Line 21 (factor 1)
    The literal test compares the partner's core with the *last placed*
    cluster's core, which makes co-location depend on accidents of the queue
    order; this reading tests the partner's core itself. The cluster joins
    the partner's core ``k`` when ``k`` holds fewer than ``threshold``
    clusters (default 4, as in the evaluation; line 23's ``<=`` would admit
    five) *and* the source's execution-time comparison favours it: the core's
    finish time with ``c`` on it, ``load[k] + work(c) / speed[k]``, is at most
    the finish time of placing ``c`` where the other rules would put it
    (core ``a``): ``max(load[k], load[a] + work(c) / speed[a])`` plus the
    latency of the messages between ``c`` and its partner across
    ``hops(k, a)``. On a machine with a free core per cluster this keeps
    clusters apart (parallelism wins); with more clusters than cores it puts
    the clusters that share data on one core, up to the threshold.

Room
    Core ``k`` has room while it holds fewer than
    ``ceil(P * speed[k] / sum(speed))`` clusters (heterogeneous speeds get
    proportional shares); when no core has room, every core with the fewest
    clusters relative to its share does.

Complexity: O(P * cores) for the placement, after O(P^2 + sum_o k_o^2) to
build the sharing matrix (``k_o`` clusters touching object ``o``).
"""

import numpy as np

from vcut_base.errors import InputError

from .machine import _quadrant_numa

__all__ = ["memory_centric", "cluster_from_mem", "cluster_comm", "architecture_decomposition",
           "nearby", "diff_region", "run_queue", "THRESHOLD"]

THRESHOLD = 4


def run_queue(ipc, tasks):
    """The run queue: maximum-adjacency order of the communication graph.

    First the cluster exchanging the most bytes; then, repeatedly, the
    cluster exchanging the most bytes with those already queued (ties: the
    most bytes overall, then the lowest id). Empty clusters come last.
    """
    p = len(tasks)
    total = ipc.sum(axis=1)
    queued = np.zeros(p, dtype=bool)
    queued[tasks == 0] = True
    link = np.zeros(p)
    order = []
    for _ in range(int((tasks > 0).sum())):
        cand = np.flatnonzero(~queued)
        best = cand[np.lexsort((cand, -total[cand], -link[cand]))[0]]
        order.append(int(best))
        queued[best] = True
        link += ipc[best]
    return np.array(order + np.flatnonzero(tasks == 0).tolist(), dtype=np.int64)


def cluster_from_mem(shared, order):
    """Partner of every cluster: the earlier one in ``order`` sharing the most.

    ``shared`` is the (p, p) sharing matrix; returns int array (p,), -1 for none.
    Ties go to the cluster earliest in the queue.
    """
    p = len(order)
    partner = np.full(shared.shape[0], -1, dtype=np.int64)
    for i in range(1, p):
        c = order[i]
        row = shared[c, order[:i]]
        j = int(np.argmax(row))
        if row[j] > 0:
            partner[c] = order[j]
    return partner


def cluster_comm(comm):
    """Symmetric bytes exchanged between every pair of clusters (zero diagonal)."""
    ipc = np.asarray(comm, dtype=np.float64)
    ipc = ipc + ipc.T
    np.fill_diagonal(ipc, 0.0)
    return ipc


def architecture_decomposition(machine):
    """Region of every core: NUMA nodes, or mesh quadrants on a one-node machine."""
    if machine.numa_nodes > 1:
        return np.asarray(machine.numa_of_core, dtype=np.int32)
    node, _ = _quadrant_numa(machine.mesh_rows, machine.mesh_cols, machine.hop_cycles)
    return node.astype(np.int32)


def _shares(p, speed):
    """Clusters each core may hold: ``ceil(P * speed[k] / sum(speed))`` (see *Room*)."""
    return np.ceil(p * speed / speed.sum() - 1e-9)


def _room(count, share):
    room = count < share
    if not room.any():
        ratio = count / share
        room = ratio == ratio.min()
    return room


def nearby(weights, placed_cores, hops, room, load):
    """The core with room nearest (in bytes x hops) to the placed partners.

    Parameters
    ----------
    weights : float array (q,)
        Bytes exchanged with each placed partner.
    placed_cores : int array (q,)
        Their cores.
    hops : int array (cores, cores)
    room : bool array (cores,)
    load : float array (cores,)
    """
    cost = (weights[:, None] * hops[placed_cores]).sum(axis=0) if len(weights) else np.zeros(len(room))
    cand = np.flatnonzero(room)
    central = hops.sum(axis=1)
    best = np.lexsort((cand, central[cand], load[cand], cost[cand]))[0]
    return int(cand[best])


def diff_region(avoid, region, room, load, hops):
    """The least-loaded core with room in the least-loaded region other than ``avoid``.

    ``avoid`` = -1 (or the only region with room) allows every region. Ties
    between cores go to the most central one (least total hops to all cores:
    a cluster placed first is the one exchanging the most data), then the
    lowest id.
    """
    n_reg = int(region.max()) + 1
    reg_load = np.bincount(region, weights=load, minlength=n_reg)
    has_room = np.bincount(region, weights=room.astype(float), minlength=n_reg) > 0
    ok = has_room & (np.arange(n_reg) != avoid)
    if not ok.any():
        ok = has_room
    regs = np.flatnonzero(ok)
    r = int(regs[np.lexsort((regs, reg_load[regs]))[0]])
    cand = np.flatnonzero(room & (region == r))
    central = hops.sum(axis=1)
    return int(cand[np.lexsort((cand, central[cand], load[cand]))[0]])


def memory_centric(inter, machine, threshold=THRESHOLD):
    """Algorithm 2: map the clusters of ``inter`` onto the cores of ``machine``.

    Parameters
    ----------
    inter : ClusterInteractions
    machine : Machine
    threshold : int
        Most clusters factor 1 puts on one core (default 4).

    Returns
    -------
    core : int32 ndarray (p,)
        Core of every cluster.
    rule : list of str
        The branch of Algorithm 2 that placed each cluster: ``memory``
        (factor 1), ``threshold`` (factor 1 refused: DiffRegion), ``nearby``
        (factor 2), ``region`` (factor 3).
    """
    if not isinstance(threshold, (int, np.integer)) or threshold < 1:
        raise InputError(f"the clusters-per-core threshold must be a positive integer, got {threshold!r}")
    p, cores = inter.p, machine.cores
    speed = np.asarray(machine.core_speed, dtype=np.float64)
    share = _shares(p, speed)
    hops = machine.hop_matrix()
    region = architecture_decomposition(machine)
    ipc = cluster_comm(inter.comm)
    order = run_queue(ipc, inter.tasks)
    partner = cluster_from_mem(inter.shared_accesses(), order)
    core = np.full(p, -1, dtype=np.int32)
    count = np.zeros(cores, dtype=np.int64)
    load = np.zeros(cores)
    rule = [""] * p
    last = -1
    msg_cycles = machine.hop_cycles
    for c in order:
        c = int(c)
        room = _room(count, share)
        placed = np.flatnonzero((ipc[c] > 0) & (core >= 0))
        if placed.size:
            alt = nearby(ipc[c, placed], core[placed], hops, room, load)
            alt_rule = "nearby"
        else:
            avoid = int(region[core[last]]) if last >= 0 else -1
            alt = diff_region(avoid, region, room, load, hops)
            alt_rule = "region"
        q = int(partner[c])
        w = inter.work[c]
        if q >= 0:
            k = int(core[q])
            n_msgs = (inter.comm[c, q] + inter.comm[q, c]) / max(inter.value_bytes, 1)
            t_same = load[k] + w / speed[k]
            t_diff = max(load[k], load[alt] + w / speed[alt]) + n_msgs * msg_cycles * hops[k, alt]
            if count[k] < threshold and t_same <= t_diff:
                pick, why = k, "memory"
            elif count[k] >= threshold:
                pick, why = diff_region(int(region[k]), region, room, load, hops), "threshold"
            else:
                pick, why = alt, alt_rule
        else:
            pick, why = alt, alt_rule
        core[c] = pick
        count[pick] += 1
        load[pick] += w / speed[pick]
        rule[c] = why
        last = c
    return core, rule

