"""The parallelism-aware vertex cut ``par``: a list scheduler that is also a vertex cut.

Greedy vertex cuts streamed in execution order (WB-Libra and its family) build
each cluster from a long stretch of the run, so the clusters' dependencies
run them almost one after another (docs/mapping.md, "The lower bound"). ``par``
cuts the same edges while scheduling them:

* every vertex's in-edges (the tasks that compute its value; edges oriented
  from the lower to the higher node id, an IR graph's execution order) go to
  one cluster together (in pieces of `vcut._timed.CHUNK` for a vertex with
  more), which becomes the vertex's *home*: no partial results to gather;
* vertices are taken as a list scheduler takes tasks: a vertex becomes ready
  when the vertices it reads are scheduled; among the ready ones whose inputs
  exist by the time the first cluster falls idle, the one with the longest
  path to the end of the program (bottom level) goes first;
* it goes to the cluster where, under a timing model, it finishes first plus
  ``beta * latency`` per new replica of an input (a message): candidates are
  the homes of its inputs and the cluster free first. A cluster runs its tasks
  in order; an input homed elsewhere arrives ``latency`` cycles after it is
  final; no cluster takes more than ``imbalance`` times its share of the work
  while another has room (the weighted balance of the WB variants);
* the order in which tasks were scheduled is kept (`EdgePartition.schedule`):
  each cluster runs its tasks in that order, which the simulator and the
  mapping use instead of the program's order.

The design that lost (kept in ``bench/bench_mapping.py --designs``): WB-Libra
with its balance bound applied per window of the execution order, so that
every cluster takes its share of every stretch of the run. It spreads the
work, but it cuts the dependency chains that run through a window, and every
cut costs a message's latency on the critical path (docs/mapping.md has the
comparison).

Cost: O(m log n) time (two heaps of vertices), O(n + m) memory.
"""

import numpy as np

from frontend import arrays
from frontend.errors import InputError
from frontend.progress import run_kernel

from . import _kernels, _timed

__all__ = ["par_assign", "BETA", "LATENCY_SHARE", "default_latency", "scratch_bytes"]

#: Price of a new replica (one more message) in message latencies.
BETA = 1.5
#: Share of a message's latency the timing model charges: the simulated
#: cores issue out of order over 64 tasks and hide the rest (measured on the
#: ten samples: 0.5 gives the lowest makespans at p = 8 and 64).
LATENCY_SHARE = 0.5


def default_latency(p):
    """Cycles a 32-byte value takes between two cores of the Table 2 machine
    with ``p`` cores, averaged over the pairs of cores (the latency ``par``
    assumes when no machine is given)."""
    from mapping.interactions import VALUE_BYTES
    from mapping.machine import table2

    return table2(int(p)).mean_message_cycles(VALUE_BYTES)


def scratch_bytes(n, m):
    """Bytes `par_assign` allocates besides the replica sets: per vertex two
    CSR pointers, the bottom level, home, availability, the count of inputs
    left and two heaps (key and id); per edge the successor list, the
    schedule and the assignment (memory-resident unless spilled), and the
    execution order."""
    per_edge = arrays.resident(8.0 * m) + arrays.resident(4.0 * m) * 2 + 8.0 * m
    return 8.0 * 2 * n + 8.0 * n + 4.0 * n + 8.0 * n + 8.0 * n + 4 * 16.0 * n + per_edge


def par_assign(src, dst, weight, n, p, cap, imbalance=1.03, latency=None, beta=None):
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
        Price of a new replica in latencies (default `BETA`).

    Returns
    -------
    out : int32 (m,)
        Cluster of every edge.
    home : int32 (n,)
        Cluster where each vertex's value is final (-1: no edges).
    schedule : int (m,)
        The edges in the order they were scheduled.
    info : dict
        ``latency``, ``beta``, ``model_makespan`` (cycles, under the timing model).
    """
    if latency is None:
        latency = default_latency(p)
    beta = BETA if beta is None else beta
    if not np.isfinite(latency) or latency < 0:
        raise InputError(f"the message latency must be a number of cycles >= 0, got {latency}")
    if not np.isfinite(beta) or beta < 0:
        raise InputError(f"the replica price beta must be >= 0, got {beta}")
    from ._replicas import execution_order
    from ir_graph.graph import index_dtype

    m = len(src)
    order = execution_order(np.minimum(src, dst), np.maximum(src, dst))
    order = np.empty(0, dtype=np.int64) if order is None else order
    _, bottom = _timed.levels(src, dst, weight, order, n)
    out_v = arrays.empty(m, index_dtype(n))
    ptr, out_ptr = _timed.successors(src, dst, n, out_v)
    out = arrays.empty(m, np.int32)
    home = np.empty(n, dtype=np.int32)
    avail = np.empty(n)
    schedule = arrays.empty(m, index_dtype(m))
    free, _ = run_kernel(
        "partition", "edges", m, _timed.timed_assign, src, dst, np.asarray(weight, np.float64),
        order, ptr, out_ptr, out_v, bottom, n, p, np.asarray(cap, np.float64),
        float(imbalance) * float(np.sum(weight)), float(latency) * LATENCY_SHARE, float(beta),
        out, _kernels.replica_sets(n, p), home, avail, schedule,
    )
    return out, home, schedule, {"latency": float(latency), "beta": float(beta),
                                 "model_makespan": float(free.max()) if p else 0.0}
