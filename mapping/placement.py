"""Cluster-to-core mappings: the one registry of mapping methods.

=======================  ================================================
``memory-centric``       Algorithm 2 (`mapping.memory_centric`)
``round-robin``          cluster c on core c mod cores
``random``               seeded, balanced random mapping
``comm-greedy``          greedy by communication volume
``recursive-bisection``  dual recursive bisection of clusters and mesh
``time-aware``           memory-centric, improved by simulated moves
                         (`mapping.time_aware`; needs the clustering)
=======================  ================================================
"""

from dataclasses import dataclass, field

import numpy as np

from vcut_base.errors import InputError

from . import baselines
from .memory_centric import THRESHOLD, memory_centric
from .time_aware import time_aware

__all__ = ["MAPPERS", "Placement", "place", "placement_of", "check_memory", "hop_bytes",
           "independent_time"]

MAPPERS = ("time-aware", "memory-centric") + baselines.BASELINES


@dataclass(frozen=True, eq=False)
class Placement:
    """Core of every cluster, with the method and (memory-centric) the rule used.

    Made by `place`. ``clusters_of(cores)`` lists the clusters on each core.

    Attributes
    ----------
    core : int32 ndarray, shape (p,)
        Core of every cluster.
    method : str
        The mapping method (one of `MAPPERS`).
    rule : list of str, optional
        ``memory-centric`` only: the branch of Algorithm 2 that placed each
        cluster (``memory``, ``threshold``, ``nearby`` or ``region``; see
        `mapping.memory_centric.memory_centric`); None otherwise.
    info : dict
        ``network_bytes`` (bytes of the messages between clusters on different
        cores), ``hop_bytes`` (their bytes times hops) and ``threshold``;
        ``time-aware`` adds ``makespan_start`` (the best start's simulated
        makespan, cycles), ``makespan``, ``evaluations`` and ``accepted`` (the
        placements it simulated and the moves it kept).

    See Also
    --------
    place

    Examples
    --------
    Three clusters on a two-core machine, round robin:

    >>> import numpy as np
    >>> from mapping import from_vertex_partition, interactions, place, table2
    >>> cl = from_vertex_partition(np.array([0, 1, 2]), np.array([1, 2, 3]),
    ...                            np.array([10.0, 10.0, 10.0]), parts=[0, 0, 1, 2], p=3)
    >>> pl = place(interactions(cl), table2(2), "round-robin")
    >>> pl.method, pl.core.tolist(), pl.rule
    ('round-robin', [0, 1, 0], None)
    >>> pl.clusters_of(2)
    [[0, 2], [1]]
    >>> pl.info["network_bytes"], pl.info["hop_bytes"]  # both messages cross one hop
    (64.0, 64.0)
    """

    core: np.ndarray
    method: str
    rule: list = None
    info: dict = field(default_factory=dict)

    def clusters_of(self, cores):
        """The clusters on each core: a list of ``cores`` lists."""
        out = [[] for _ in range(cores)]
        for c, k in enumerate(self.core.tolist()):
            out[k].append(c)
        return out


def place(inter, machine, method="memory-centric", *, threshold=THRESHOLD, seed=0,
          clustering=None, simulations=None, jobs=None, evals=None):
    """Map the clusters of ``inter`` (`ClusterInteractions`) onto ``machine``.

    ``clustering`` (the `Clustering` ``inter`` summarises) is needed by
    ``time-aware``, which simulates it; ``simulations`` (a dict) receives the
    simulations it ran that a caller may want again (see `time_aware`); ``jobs``:
    how many of its starts it simulates at once, ``evals``: how many placements it
    simulates at most (see `time_aware`).

    The methods (`MAPPERS`, the module docstring): ``memory-centric``
    (Algorithm 2: clusters that share data on one core, up to ``threshold``,
    communicating clusters near each other, independent ones in different
    NUMA regions), ``time-aware`` (memory-centric improved by simulated
    moves), and the baselines ``round-robin``, ``random``, ``comm-greedy`` and
    ``recursive-bisection`` (`mapping.baselines`). First every cluster's data
    are checked to fit the machine's memory (`check_memory`).

    Parameters
    ----------
    inter : ClusterInteractions
        The clusters' summary (`interactions`).
    machine : Machine
        The target machine.
    method : str, default "memory-centric"
        One of `MAPPERS`.
    threshold : int, default 4
        Most clusters the memory-centric rule (factor 1) puts on one core
        (``memory-centric``, ``time-aware``).
    seed : int, default 0
        Seed of ``random``, ``recursive-bisection`` and ``time-aware``'s moves.
    clustering : Clustering, optional
        Required by ``time-aware``.
    simulations : dict, optional
        ``time-aware``: receives ``name: (core, SimResult)`` of the placements
        it simulated.
    jobs : int, optional
        ``time-aware``: simulations run at once (default: as many as fit).
    evals : int, optional
        ``time-aware``: placements simulated at most, the starts included (default
        `mapping.time_aware.evaluations` of the clustering's tasks).

    Returns
    -------
    Placement
        The core of every cluster, with ``info["network_bytes"]`` and
        ``info["hop_bytes"]`` of the clusters' messages under it.

    Raises
    ------
    InputError
        An unknown method; clusters whose data do not fit the machine's memory
        (`check_memory`); ``time-aware`` without the clustering; a threshold
        that is not a positive integer (``memory-centric``, ``time-aware``).

    See Also
    --------
    simulate : the makespan of a placement.

    Examples
    --------
    A chain of four clusters, each sending one 32-byte value to the next, on
    the 2 x 2 mesh of ``table2(4)`` (cores 0, 1 on top, 2, 3 below). Round
    robin puts cluster ``c`` on core ``c``, so the message from cluster 1 to 2
    crosses the mesh diagonally (2 hops): 32 bytes x (1 + 2 + 1) hops. The
    memory-centric mapping lays the chain around the square, one hop each:

    >>> import numpy as np
    >>> from mapping import from_vertex_partition, interactions, place, table2
    >>> cl = from_vertex_partition(np.array([0, 1, 2, 3]), np.array([1, 2, 3, 4]),
    ...                            np.full(4, 10.0), parts=[0, 0, 1, 2, 3], p=4)
    >>> inter = interactions(cl)
    >>> m = table2(4)
    >>> rr = place(inter, m, "round-robin")
    >>> rr.core.tolist(), rr.info["hop_bytes"]
    ([0, 1, 2, 3], 128.0)
    >>> mc = place(inter, m, "memory-centric")
    >>> mc.core.tolist(), mc.info["hop_bytes"]
    ([2, 0, 1, 3], 96.0)
    >>> mc.rule
    ['nearby', 'region', 'nearby', 'nearby']
    >>> place(inter, m, "time-aware")
    Traceback (most recent call last):
    ...
    vcut_base.errors.InputError: the time-aware mapping simulates the clusters; give ...
    """
    if method not in MAPPERS:
        raise InputError(f"unknown mapping {method!r}; use one of {', '.join(MAPPERS)}")
    check_memory(inter, machine)
    rule = None
    extra = {}
    if method == "time-aware":
        if clustering is None:
            raise InputError("the time-aware mapping simulates the clusters; give the clustering "
                             "(or use memory-centric)")

        core, extra = time_aware(clustering, inter, machine, threshold, seed,
                                 evals=evals, simulations=simulations, jobs=jobs)
    elif method == "memory-centric":
        core, rule = memory_centric(inter, machine, threshold)
    else:
        core = baselines.baseline(method, inter, machine, seed)
    return placement_of(inter, machine, core, method, threshold, rule, **extra)


def placement_of(inter, machine, core, method, threshold=THRESHOLD, rule=None, **info):
    """The `Placement` of ``core`` (a core per cluster of ``inter``, checked against
    ``machine``) made by ``method``, with its messages' ``network_bytes`` and
    ``hop_bytes`` and ``info``'s figures: `place`'s result, and that of a caller that
    chose among placements itself (the analysis, judging two after their replays)."""
    core = baselines.check_mapping(core, inter.p, machine)
    net, hb = hop_bytes(inter, core, machine)
    return Placement(core=core, method=method, rule=rule,
                     info={"network_bytes": net, "hop_bytes": hb, "threshold": threshold, **info})


def hop_bytes(inter, core, machine):
    """``(network bytes, hop-bytes)`` of the clusters' messages under a mapping."""
    hops = machine.hop_matrix()
    h = hops[np.ix_(core, core)]
    return float(inter.comm[h > 0].sum()), float((inter.comm * h).sum())


def independent_time(inter, core, machine, busy):
    """Execution time if clusters never waited for each other's values (cycles).

    ``max_k busy[k] + sum over messages received by core k of (hops x
    hop_cycles + bytes / link bandwidth)``: each core runs its work
    back to back and pays the latency of every message it receives from
    another core, as if the clusters were independent processes. This is
    the load-balance-and-communication view behind the source's evaluation;
    `mapping.simulate` honours the dependencies on top of it.
    """
    core = np.asarray(core)
    hops = machine.hop_matrix()[np.ix_(core, core)]
    vb = max(inter.value_bytes, 1)
    latency = np.where(hops > 0, hops * machine.hop_cycles + vb / machine.link_bytes_per_cycle, 0.0)
    per_cluster = (inter.comm / vb * latency).sum(axis=0)  # received by each cluster
    recv = np.bincount(core, weights=per_cluster, minlength=machine.cores)
    return float(np.max(np.asarray(busy) + recv))


def check_memory(inter, machine):
    """Refuse clusters whose data cannot fit the machine's memory.

    A cluster's footprint (the bytes of the distinct objects it touches) must
    fit one NUMA node's memory, and all the objects together the machine's.
    """
    if machine.memory_bytes is None:
        return
    mem = np.asarray(machine.memory_bytes, dtype=np.float64)
    if len(inter.footprint) and inter.footprint.max() > mem.max():
        c = int(np.argmax(inter.footprint))
        raise InputError(
            f"cluster {c} touches {inter.footprint[c]:,.0f} bytes of data but the largest NUMA "
            f"node of machine {machine.name!r} has {mem.max():,.0f}; use more clusters or a "
            "machine with more memory per node")
    total = float(inter.object_bytes.sum())
    if total > mem.sum():
        raise InputError(
            f"the program's data ({total:,.0f} bytes) exceed the memory of machine "
            f"{machine.name!r} ({mem.sum():,.0f} bytes); use a machine with more memory")
