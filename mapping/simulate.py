"""Cost model: a discrete-event simulation of mapped clusters on a machine.

The model (every quantity in core cycles of the machine's clock):

Tasks
    Every edge of the `Clustering` is a task of its cluster costing its
    weight ``w`` (the dependency's memory-transfer cycles). A cluster's tasks
    are in the clustering's order (`Clustering.order`): the partitioner's
    schedule where it made one (``par``'s, `Clustering.schedule`), else the
    execution order (by destination node, then source); a task ``(u, v)`` is
    ready once the value of ``u`` is available in its cluster. A core runs
    one task at a time, out of order within a window: when idle it starts the
    earliest (in that order) ready task among the ``machine.issue_window``
    oldest unstarted tasks of each of its clusters (an issue window of 1 is an
    in-order core). A task on core ``k`` takes
    ``(w + f * (L[a, b] - L[a, a])) / speed[k]``: ``a`` is
    the core's NUMA node, ``b`` the node of the task's data object (the node
    of the core that touched it first: first-touch placement), ``L`` the
    machine's memory latency matrix, and ``f = min(1, w / 100)`` the share of
    a DRAM access the task's cycles stand for (100 cycles = local DRAM).

Values and messages
    Vertex ``v`` is final at its home cluster when every cluster holding one
    of its in-tasks has finished them and, if it is not the home, its gather
    message has arrived. The home then sends ``v`` (a scatter message) to
    every other cluster that holds an out-task of ``v``; there ``v`` becomes
    available when the message arrives. Messages between clusters of one core
    arrive at once and cross no link.

Network
    A message of ``B`` bytes from core ``a`` to core ``b`` follows the XY
    route (`Machine.route`). On each link it starts at ``max(arrival,
    link free)`` and holds the link ``B / link_bytes_per_cycle`` cycles; its
    head reaches the next router ``hop_cycles`` after starting; it arrives
    ``B / link_bytes_per_cycle`` after the last hop. Without contention
    that is ``hops * hop_cycles + B / bandwidth``. Links are reserved in the
    order messages are injected.

Outputs: the makespan (last task's finish), busy cycles and utilisation per
core, bytes per directed link, messages, bytes between different cores
(network bytes) and hop-bytes (bytes x hops). The mean utilisation is given
twice, each named for what it averages: over the cores that hold a cluster
(``utilization_used_cores``) and over every core of the machine
(``utilization_all_cores``, lower whenever clusters leave cores empty).
"""

import dataclasses
import threading
import time
from dataclasses import dataclass, field

import numpy as np

from ir_graph.graph import index_dtype
from vcut_base import arrays
from vcut_base.arrays import unique
from vcut_base.errors import InputError, VcutError
from vcut_base import memory  # memory.available_bytes: the one seam tests patch
from vcut_base.memory import jobs_that_fit
from vcut_base.progress import run_kernel

from . import simulation_kernels
from .interactions import VALUE_BYTES
from .machine import MEMORY_CYCLES

__all__ = ["SimResult", "simulate", "simulation_bytes", "simulation_jobs", "rescheduled",
           "release_layout", "LINK_DIRECTIONS"]

#: Directed links leave router ``(r, c)`` with index ``(r * cols + c) * 4 + d``.
LINK_DIRECTIONS = ("east", "west", "south", "north")


@dataclass(frozen=True, eq=False)
class SimResult:
    """Outputs of `simulate` (cycles unless the name says seconds).

    ``busy`` and ``utilization`` (busy / makespan) have one entry per core of
    the machine; ``used`` marks the cores that hold at least one cluster
    (None: the cores that were busy).

    The properties ``cores_used``, ``utilization_used_cores`` (the mean over
    the cores that hold a cluster) and ``utilization_all_cores`` (over every
    core) summarise the utilisation; ``link_grid(machine)`` gives the bytes
    through each router as a mesh; ``to_dict()`` the scalar outputs.

    Attributes
    ----------
    makespan : float
        The last task's finish (cycles; 0 without tasks).
    seconds : float
        The makespan in seconds at the machine's clock.
    busy : float ndarray, shape (cores,)
        Cycles each core spent running tasks.
    utilization : float ndarray, shape (cores,)
        ``busy / makespan``.
    link_bytes : float ndarray, shape (cores * 4,)
        Bytes through each directed link: index ``(r * cols + c) * 4 + d``
        leaves router ``(r, c)`` towards ``LINK_DIRECTIONS[d]`` (east, west,
        south, north).
    messages : int
        Messages sent between clusters (those between clusters of one core
        included).
    communication_bytes : float
        Their bytes.
    network_bytes : float
        Bytes of the messages between different cores.
    hop_bytes : float
        Those bytes times the hops they crossed.
    remote_memory_tasks : int
        Tasks whose data object lives on another NUMA node than their core's.
    finish : float ndarray, shape (tasks,), or None
        Finish time of every task, in the clustering's task order (None from
        ``simulate(..., finish=False)``).
    info : dict
        ``seconds_simulating`` (wall-clock), ``value_bytes`` and ``replicas``.
    used : bool ndarray, shape (cores,), optional
        The cores that hold at least one cluster.

    See Also
    --------
    simulate

    Examples
    --------
    Two tasks on two neighbouring cores, 0 -> 1 (10 cycles) then 1 -> 2 (20
    cycles), with one 32-byte message between them (2 cycles for the hop, 2
    to serialise 32 bytes at 16 per cycle):

    >>> import numpy as np
    >>> from mapping import from_vertex_partition, simulate, table2
    >>> cl = from_vertex_partition(np.array([0, 1]), np.array([1, 2]), np.array([10.0, 20.0]),
    ...                            parts=[0, 0, 1], p=2)
    >>> r = simulate(cl, [0, 1], table2(2))
    >>> r.makespan, r.finish.tolist(), r.busy.tolist()
    (34.0, [10.0, 34.0], [10.0, 20.0])
    >>> r.messages, r.network_bytes, r.hop_bytes, float(r.link_bytes[0])  # router 0, east
    (1, 32.0, 32.0, 32.0)
    >>> round(r.utilization_used_cores, 4)  # (10 / 34 + 20 / 34) / 2
    0.4412
    >>> sorted(r.to_dict())[:3]
    ['communication_bytes', 'cores_used', 'hop_bytes']
    """

    makespan: float
    seconds: float
    busy: np.ndarray
    utilization: np.ndarray
    link_bytes: np.ndarray
    messages: int
    communication_bytes: float
    network_bytes: float
    hop_bytes: float
    remote_memory_tasks: int
    finish: np.ndarray | None
    info: dict = field(default_factory=dict)
    used: np.ndarray = None

    @property
    def cores_used(self):
        """Cores that hold at least one cluster."""
        return int(np.count_nonzero(self._used()))

    @property
    def utilization_used_cores(self):
        """Mean utilisation of the cores that hold a cluster (0 when none does)."""
        used = self._used()
        return float(self.utilization[used].mean()) if used.any() else 0.0

    @property
    def utilization_all_cores(self):
        """Mean utilisation of every core of the machine, empty ones included."""
        return float(self.utilization.mean()) if len(self.utilization) else 0.0

    def utilization_figures(self):
        """``cores_used``, ``utilization_used_cores`` and ``utilization_all_cores``."""
        return {"cores_used": self.cores_used,
                "utilization_used_cores": self.utilization_used_cores,
                "utilization_all_cores": self.utilization_all_cores}

    def _used(self):
        return np.asarray(self.busy > 0 if self.used is None else self.used, dtype=bool)

    def link_grid(self, machine):
        """Bytes through each router (sum of its outgoing links), as a rows x cols grid."""
        per_router = self.link_bytes.reshape(-1, 4).sum(axis=1)
        return per_router.reshape(machine.mesh_rows, machine.mesh_cols)

    def to_dict(self):
        return {
            "makespan_cycles": self.makespan, "makespan_seconds": self.seconds,
            "messages": self.messages, "communication_bytes": self.communication_bytes,
            "network_bytes": self.network_bytes, "hop_bytes": self.hop_bytes,
            "remote_memory_tasks": self.remote_memory_tasks,
            **self.utilization_figures(),
            "max_link_bytes": float(self.link_bytes.max()) if len(self.link_bytes) else 0.0,
        }


def simulate(cl, core, machine, value_bytes=None, *, finish=True):
    """Simulate `Clustering` ``cl`` with cluster ``c`` on core ``core[c]``.

    The discrete-event cost model of the module docstring, in core cycles: a
    task ``(u, v)`` of weight ``w`` is ready once ``u``'s value is available in
    its cluster; a core runs one task at a time, choosing among the
    ``machine.issue_window`` oldest unstarted tasks of each of its clusters,
    and a task takes ``(w + f * (L[a, b] - L[a, a])) / speed`` (``a``: the
    core's NUMA node, ``b``: the node of its data object by first touch,
    ``f = min(1, w / 100)``). Values move as gather and scatter messages of
    ``value_bytes`` along XY routes: ``hop_cycles`` per hop plus
    ``value_bytes / link_bytes_per_cycle`` to serialise, waiting for busy
    links; messages between clusters of one core arrive at once.

    Parameters
    ----------
    cl : mapping.Clustering
        The clusters and their tasks.
    core : array_like of int, shape (p,)
        Core of every cluster (``Placement.core``), in ``0..machine.cores-1``.
    machine : mapping.Machine
        The machine.
    value_bytes : int, optional
        Bytes per message (default `mapping.interactions.VALUE_BYTES`, 32).
    finish : bool, default True
        Keep every task's finish time (``SimResult.finish``; 8 bytes per task, put
        back in task order). False: ``finish`` is None, for a caller that needs the
        figures alone (the same figures).

    Returns
    -------
    SimResult
        The makespan, per-core busy cycles and utilisation, per-link bytes,
        message counts and bytes, and every task's finish time.

    Raises
    ------
    InputError
        ``core`` does not give each cluster a core of the machine; an edge cut
        with too many cut edges per vertex to number its messages.

    See Also
    --------
    place : a mapping to simulate.

    Examples
    --------
    A chain of four tasks of 10 cycles, one per cluster, each cluster sending
    its value to the next, on the 2 x 2 mesh of ``table2(4)``. With the
    clusters laid around the square (every message one hop: 2 cycles + 32
    bytes / 16 per cycle), the makespan is ``4 * 10 + 3 * 4``; with cluster
    ``c`` on core ``c``, the middle message crosses two hops, 2 cycles more:

    >>> import numpy as np
    >>> from mapping import from_vertex_partition, simulate, table2
    >>> cl = from_vertex_partition(np.array([0, 1, 2, 3]), np.array([1, 2, 3, 4]),
    ...                            np.full(4, 10.0), parts=[0, 0, 1, 2, 3], p=4)
    >>> m = table2(4)
    >>> simulate(cl, [2, 0, 1, 3], m).makespan
    52.0
    >>> r = simulate(cl, [0, 1, 2, 3], m)
    >>> r.makespan, r.finish.tolist()
    (54.0, [10.0, 24.0, 40.0, 54.0])
    >>> r.messages, r.hop_bytes
    (3, 128.0)

    On one core there is no network: the four tasks run back to back:

    >>> simulate(cl, [0, 0, 0, 0], m).makespan
    40.0
    >>> simulate(cl, [0, 1, 2], m)
    Traceback (most recent call last):
    ...
    vcut_base.errors.InputError: the mapping must give each of the 4 clusters a core 0..3
    """

    value_bytes = VALUE_BYTES if value_bytes is None else int(value_bytes)
    core = np.asarray(core, dtype=np.int64)
    if core.shape != (cl.p,) or (cl.p and (core.min() < 0 or core.max() >= machine.cores)):
        raise InputError(f"the mapping must give each of the {cl.p} clusters a core "
                         f"0..{machine.cores - 1}")
    t0 = time.perf_counter()
    if not cl.per_edge_messages:
        return _simulate(cl, core, machine, value_bytes, t0, finish)
    p = np.int64(cl.p)
    order = np.lexsort((cl.src, cl.dst))
    u, v = cl.src[order].astype(np.int64), cl.dst[order].astype(np.int64)
    c = cl.cluster[order].astype(np.int64)
    # an edge cut: every cut edge gets a replica (and so a message) of its own
    skey, dkey, slots = u * p + c, v * p + c, np.int64(1)
    cut = np.flatnonzero(c != cl.home[u])
    if len(cut):
        g = np.argsort(skey[cut], kind="stable")
        k = skey[cut][g]
        start = np.r_[0, np.flatnonzero(k[1:] != k[:-1]) + 1]
        rank = np.arange(len(k)) - np.repeat(start, np.diff(np.r_[start, len(k)]))
        slot = np.zeros(len(u), dtype=np.int64)
        slot[cut[g]] = rank + 1
        slots = np.int64(slot.max() + 1)
        if float(cl.n) * float(p) * float(slots) >= 2.0**62:
            raise InputError("too many cut edges per vertex to simulate; use fewer clusters")
        skey, dkey = skey * slots + slot, dkey * slots
    keys = unique(np.concatenate([skey, dkey]))
    rep_src = np.searchsorted(keys, skey)
    rep_dst = np.searchsorted(keys, dkey)
    R = len(keys)
    rep_vertex = keys // (p * slots)
    rep_cluster = (keys // slots) % p
    rep_in = np.bincount(rep_dst, minlength=R).astype(np.int64)
    rep_out = np.bincount(rep_src, minlength=R).astype(np.int64)
    rep_ptr = np.zeros(cl.n + 1, dtype=np.int64)
    np.cumsum(np.bincount(rep_vertex, minlength=cl.n), out=rep_ptr[1:])
    rep_src[order], rep_dst[order] = rep_src.copy(), rep_dst.copy()  # back in task order
    return _run(cl, core, machine, value_bytes, t0, order, cl.cluster, cl.weight, cl.obj,
                rep_src, rep_dst, rep_vertex, rep_cluster, rep_in, rep_out, rep_ptr, R,
                keep=finish)


def simulation_bytes(cl):
    """Bytes one `simulate` of ``cl`` allocates beyond the clustering (a vertex
    cut's): per task the finish time, its cluster-list position and a flag;
    per replica its time, counters, vertex and wake slot; per vertex a counter;
    and the event heap, which holds about one event per replica at worst."""
    m, n = len(cl.cluster), cl.n
    replicas = len(cl.table.cluster) if cl.kind == "vertex-cut" else 2 * m
    return 13.0 * m + (4 + 8 + 4 + 4 + 4 + 25) * float(replicas) + 4.0 * n


def position_dtype(m, p):
    """The index type of the task positions of ``m`` tasks in ``p`` clusters, which the
    simulator also gives the slots of its ready bitsets (`simulation_kernels.READY_BLOCK`
    padding per core in use, at most ``p`` of them): int32 where they fit."""
    return index_dtype(m + p * simulation_kernels.READY_BLOCK)


def simulation_jobs(cl, count):
    """How many simulations of ``cl`` to run at once (threads: the simulator releases the
    GIL): the CPUs this process may use, at most ``count``, and no more than half the
    available memory holds (`simulation_bytes` each)."""

    return jobs_that_fit(count, simulation_bytes(cl), share=0.5)


def _simulate(cl, core, machine, value_bytes, t0, keep=True):
    """A vertex cut: one replica per (vertex, cluster), from the replica table (in the
    `Positioned` layout when the clustering has one)."""
    pv = positioned(cl)
    if pv is not None:
        res = _run(cl, core, machine, value_bytes, t0, None, pv.cluster, pv.weight, pv.obj,
                   pv.src, pv.dst, pv.vertex, pv.rep_cluster, pv.n_in, pv.n_out, pv.ptr,
                   len(pv.rep_cluster), home=pv.home, vorder=pv.vorder, tasks=pv.tasks,
                   keep=keep)
        if not keep:
            return res
        finish = arrays.empty(len(pv.cluster), np.float64)
        finish[cl.order] = res.finish  # positions back to task order
        return dataclasses.replace(res, finish=arrays.spill(finish))
    t = cl.table
    return _run(cl, core, machine, value_bytes, t0, cl.order, cl.cluster, cl.weight, cl.obj,
                t.src, t.dst, t.vertex(), t.cluster, t.n_in, t.n_out, t.ptr, len(t.cluster),
                keep=keep)


@dataclass(frozen=True, eq=False)
class Positioned:
    """A scheduled vertex cut laid out for the simulator (`positioned`): the tasks
    by position of the schedule (``cluster``, ``weight``, ``obj``, their replicas
    ``src`` / ``dst``), the vertices relabelled by the position that first
    touches them (``home``; ``vorder``: the new id of each old one), the replica
    table by new vertex (``ptr``, ``rep_cluster``, ``n_in``, ``n_out``,
    ``vertex``) and each cluster's positions (``tasks``: ``(ptr, positions)``)."""

    cluster: np.ndarray
    weight: np.ndarray
    obj: np.ndarray
    src: np.ndarray
    dst: np.ndarray
    home: np.ndarray
    vorder: np.ndarray
    ptr: np.ndarray
    rep_cluster: np.ndarray
    n_in: np.ndarray
    n_out: np.ndarray
    vertex: np.ndarray
    tasks: tuple


_POSITIONED = threading.Lock()
#: `positioned` makes the layout when it and one simulation fit in this share of the
#: available memory (the simulations then run as many at once as the rest holds).
LAYOUT_SHARE = 0.8


def positioned(cl):
    """The `Positioned` layout of `Clustering` ``cl``, made on first use and kept with
    it; None where the tasks run in their own order (no schedule to follow), for
    edge cuts, while arrays spill to disk, or where the copies and one simulation
    would take more than `LAYOUT_SHARE` of the available memory.

    Why: a schedule (``par``'s) visits the tasks far from their order in the
    graph (on a 3 M-node dijkstra trace at p = 8 a position is on average 1.2 M
    tasks from its task), so the event loop read every task's and replica's
    arrays at random. Laid out by position, each core reads its cluster's tasks
    and their values in sequence: a simulation of that trace took 0.87 s
    instead of 2.2 s (0.65 s with the event heap allocated once), after a
    layout pass of about 0.4 s. The same makespan and outputs, to the bit (the
    vertices without in-tasks are still published in their old id order)."""
    if cl.per_edge_messages or cl.schedule is None or arrays.spill_directory() is not None:
        return None
    kept = vars(cl)  # beside the clustering's cached properties
    with _POSITIONED:
        if "_positioned" not in kept:
            kept["_positioned"] = _position(cl)
        return kept["_positioned"]


def release_layout(cl):
    """Drop ``cl``'s `Positioned` layout, for a caller done simulating ``cl``: what it does
    next has that memory (its arrays take about as much as the clustering's own; 5.8 GB of
    the 74 M-node dijkstra trace's). A later simulation of ``cl`` lays it out again."""
    with _POSITIONED:
        vars(cl).pop("_positioned", None)


def positioned_bytes(cl):
    """Bytes of ``cl``'s `Positioned` layout (and its temporaries)."""
    m, n = len(cl.cluster), cl.n
    R = len(cl.table.cluster)
    isz = np.dtype(cl.table.src.dtype).itemsize
    per_task = (cl.cluster.dtype.itemsize + 8 + cl.obj.dtype.itemsize + 2 * isz
                + np.dtype(position_dtype(m, cl.p)).itemsize)
    vsz = np.dtype(index_dtype(n)).itemsize
    # replicas: cluster, in / out counts, vertex, and the old -> new map while it is made
    per_replica = cl.table.cluster.dtype.itemsize + 2 * cl.table.n_in.dtype.itemsize + vsz + isz
    # vertices: new ids (kept as vorder), their inverse while made, replica offsets, home
    return m * per_task + R * per_replica + n * (2 * vsz + 8 + cl.home.dtype.itemsize)


def rescheduled(cl, schedule):
    """`Clustering` ``cl`` with its tasks run in the order ``schedule`` (a permutation of
    the tasks that stays topological): ``dataclasses.replace(cl, schedule=schedule)``,
    which keeps ``cl``'s replica table (it does not depend on the order) and, where ``cl``
    has its `Positioned` layout made, a layout derived from it: the tasks' arrays taken
    in the new order, the vertices keeping the labels ``cl``'s schedule gave them. The
    labels only place the vertices' arrays near the tasks that read them, so the
    simulations are the same to the bit as with a layout made afresh (`_position`), at a
    few gathers instead of two passes over the replica table (md under ``cd``, 6.8 M
    tasks: 0.45 against 0.85 s)."""
    new = dataclasses.replace(cl, schedule=schedule)
    kept = vars(cl)
    if "table" in kept:
        vars(new)["table"] = kept["table"]
    with _POSITIONED:
        pv = kept.get("_positioned")
    if pv is None or schedule is None:
        return new
    schedule = np.asarray(schedule)
    m = len(cl.cluster)
    was = np.empty(m, dtype=index_dtype(m))  # each task's position in cl's schedule
    was[cl.order] = np.arange(m, dtype=was.dtype)
    at = was[schedule]  # the old position of each new one
    task = {name: getattr(pv, name)[at] for name in ("cluster", "weight", "obj", "src", "dst")}
    positions = np.empty(m, position_dtype(m, cl.p))
    ptr = simulation_kernels.cluster_tasks(np.empty(0, dtype=np.int32), task["cluster"], cl.p,
                                           positions)
    vars(new)["_positioned"] = dataclasses.replace(pv, tasks=(ptr, positions), **task)
    return new


def _position(cl):
    if positioned_bytes(cl) + simulation_bytes(cl) > LAYOUT_SHARE * memory.available_bytes():
        return None  # the layout and the simulation that needs it must both fit
    t = cl.table
    m, n, R = len(cl.cluster), cl.n, len(t.cluster)
    vdt = index_dtype(n)
    newid = np.empty(n, dtype=vdt)
    old_of = np.empty(n, dtype=vdt)
    out = dict(ptr=np.empty(n + 1, dtype=np.int64), rep_cluster=np.empty(R, t.cluster.dtype),
               n_in=np.empty(R, t.n_in.dtype), n_out=np.empty(R, t.n_out.dtype),
               vertex=np.empty(R, vdt))
    rmap = np.empty(R, dtype=t.src.dtype)
    task = dict(cluster=np.empty(m, cl.cluster.dtype), weight=np.empty(m, np.float64),
                obj=np.empty(m, cl.obj.dtype), src=np.empty(m, t.src.dtype),
                dst=np.empty(m, t.dst.dtype))
    home = np.empty(n, cl.home.dtype)
    done = run_kernel(
        "simulator layout", "positions", 2 * m, simulation_kernels.position_tasks, cl.order, cl.src,
        cl.dst, t.ptr, t.cluster, t.n_in, t.n_out, t.src, t.dst, cl.cluster,
        np.asarray(cl.weight, dtype=np.float64), cl.obj, cl.home, newid, old_of, out["ptr"],
        out["rep_cluster"], out["n_in"], out["n_out"], out["vertex"], rmap, task["cluster"],
        task["weight"], task["obj"], task["src"], task["dst"], home)
    if not done:  # stopped by a signal: the caller's simulation stops too
        return None
    del old_of, rmap
    positions = np.empty(m, position_dtype(m, cl.p))
    ptr = simulation_kernels.cluster_tasks(np.empty(0, dtype=np.int32), task["cluster"], cl.p,
                                           positions)
    return Positioned(home=home, vorder=newid, tasks=(ptr, positions), **task, **out)


def _run(cl, core, machine, value_bytes, t0, order, c, weight, t_obj, rep_src, rep_dst,
         rep_vertex, rep_cluster, rep_in, rep_out, rep_ptr, R, home=None, vorder=None,
         tasks=None, keep=True):
    """Run the event kernel; the task arrays are in task order, ``order`` (None:
    the identity) lists the tasks in execution order. ``home`` (default
    ``cl.home``), ``vorder`` (default: none) and ``tasks`` (each cluster's
    positions, `simulation_kernels.cluster_tasks`; default: counted here) come with a
    `Positioned` layout. ``keep`` False: the result's ``finish`` is None."""
    m = len(c)
    order = np.empty(0, dtype=np.int32) if order is None else order
    if tasks is None:
        cl_tasks = arrays.empty(m, position_dtype(m, cl.p))
        cl_ptr = simulation_kernels.cluster_tasks(order, c, cl.p, cl_tasks)
    else:
        cl_ptr, cl_tasks = tasks
    home = cl.home if home is None else home
    vorder = np.empty(0, dtype=index_dtype(cl.n)) if vorder is None else vorder
    core_cl = np.argsort(core, kind="stable").astype(np.int64)
    core_cl_ptr = np.zeros(machine.cores + 1, dtype=np.int64)
    np.cumsum(np.bincount(core, minlength=machine.cores), out=core_cl_ptr[1:])
    n_obj = max(int(t_obj.max()) + 1, 0) if m else 0
    ser = value_bytes / machine.link_bytes_per_cycle
    wake = R + machine.cores + 1  # the kernel's stack of replicas, then cores, to wake
    finish, busy, link_bytes, stats, _ = run_kernel(
        "simulation", "tasks", m, simulation_kernels.simulate_events, order, c,
        np.asarray(weight, dtype=np.float64), t_obj, rep_src, rep_dst, rep_vertex, rep_cluster,
        rep_in, rep_out, rep_ptr, home, vorder, cl_ptr, cl_tasks, core, core_cl_ptr, core_cl,
        np.asarray(machine.core_speed, dtype=np.float64),
        np.asarray(machine.numa_of_core, dtype=np.int64),
        np.asarray(machine.numa_latency, dtype=np.float64), MEMORY_CYCLES, machine.mesh_cols,
        float(machine.hop_cycles), float(ser), float(value_bytes), machine.cores * 4, n_obj,
        int(machine.issue_window), np.empty(wake, dtype=index_dtype(wake)),
    )
    if int(stats[5]) != m:  # cannot happen for a DAG; guards the model itself
        raise VcutError(f"internal error: the simulation stalled after {int(stats[5])} of {m} "
                        "tasks")
    makespan = float(finish.max()) if len(finish) else 0.0
    finish = arrays.spill(finish) if keep else None
    return SimResult(
        makespan=makespan, seconds=makespan / (machine.clock_ghz * 1e9), busy=busy,
        utilization=busy / makespan if makespan > 0 else np.zeros_like(busy),
        link_bytes=link_bytes, messages=int(stats[2]), communication_bytes=float(stats[3]),
        network_bytes=float(stats[0]), hop_bytes=float(stats[1]),
        remote_memory_tasks=int(stats[4]), finish=finish,
        info={"seconds_simulating": time.perf_counter() - t0, "value_bytes": value_bytes,
              "replicas": int(R)},
        used=np.bincount(core, minlength=machine.cores) > 0,
    )
