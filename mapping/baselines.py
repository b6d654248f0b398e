"""Baseline cluster-to-core mappings the memory-centric mapping is compared with.

``round-robin``
    cluster ``c`` on core ``c mod cores``.
``random``
    a seeded random permutation of ``c mod cores`` (random, with balanced
    cluster counts).
``comm-greedy``
    clusters in decreasing order of the bytes they exchange (ties: id); the
    first goes to the mesh's most central core, each next one to the core
    with room that minimises its bytes x hops to the placed clusters (ties:
    least loaded, lowest id). Room is as in `mapping.memory_centric`.
``recursive-bisection``
    topology-aware dual recursive bisection (the Scotch / TreeMatch family):
    the core set is cut in two along the longer side of its mesh bounding
    box, the cluster set in two with METIS (edge weights: messages between
    clusters; vertex weights: work; target weights: the two halves' summed
    core speeds), and each half of the clusters goes to one half of the
    cores, recursively down to single cores.
"""

import numpy as np

from vcut_base.errors import InputError
from runtime.vertex_partition import vertex_partition

from .memory_centric import _room, _shares, cluster_comm, nearby

__all__ = ["round_robin", "random_mapping", "comm_greedy", "recursive_bisection", "BASELINES",
           "baseline"]

#: The baseline mappings by name (the module docstring).
BASELINES = ("round-robin", "random", "comm-greedy", "recursive-bisection")


def baseline(method, inter, machine, seed=0):
    """The core of every cluster of ``inter`` under the baseline mapping ``method``
    (one of `BASELINES`; ``seed``: random and recursive-bisection)."""
    if method == "round-robin":
        return round_robin(inter.p, machine)
    if method == "random":
        return random_mapping(inter.p, machine, seed)
    if method == "comm-greedy":
        return comm_greedy(inter, machine)
    if method == "recursive-bisection":
        return recursive_bisection(inter, machine, seed)
    raise ValueError(f"not a baseline mapping: {method!r}")


def round_robin(p, machine):
    return (np.arange(p) % machine.cores).astype(np.int32)


def random_mapping(p, machine, seed=0):
    rng = np.random.default_rng(seed)
    return rng.permutation(np.arange(p) % machine.cores).astype(np.int32)


def comm_greedy(inter, machine):
    p, cores = inter.p, machine.cores
    speed = np.asarray(machine.core_speed, dtype=np.float64)
    share = _shares(p, speed)
    hops = machine.hop_matrix()
    ipc = cluster_comm(inter.comm)
    total = ipc.sum(axis=1)
    order = np.lexsort((np.arange(p), -total))
    core = np.full(p, -1, dtype=np.int32)
    count = np.zeros(cores, dtype=np.int64)
    load = np.zeros(cores)
    centre = hops.sum(axis=1).astype(np.float64)  # least total distance = most central
    for i, c in enumerate(order):
        room = _room(count, share)
        placed = np.flatnonzero((ipc[c] > 0) & (core >= 0))
        if i == 0 or not placed.size:
            cand = np.flatnonzero(room)
            pick = int(cand[np.lexsort((cand, centre[cand], load[cand]))[0]])
        else:
            pick = nearby(ipc[c, placed], core[placed], hops, room, load)
        core[c] = pick
        count[pick] += 1
        load[pick] += inter.work[c] / speed[pick]
    return core


def recursive_bisection(inter, machine, seed=0):
    p = inter.p
    ipc = cluster_comm(inter.comm)
    speed = np.asarray(machine.core_speed, dtype=np.float64)
    rows = np.arange(machine.cores) // machine.mesh_cols
    cols = np.arange(machine.cores) % machine.mesh_cols
    core = np.full(p, -1, dtype=np.int32)
    stack = [(np.arange(p), np.arange(machine.cores))]
    while stack:
        cl, cs = stack.pop()
        if len(cl) == 0:
            continue
        if len(cs) == 1:
            core[cl] = cs[0]
            continue
        r, c = rows[cs], cols[cs]
        key = (r, c) if (r.max() - r.min()) >= (c.max() - c.min()) else (c, r)
        cs = cs[np.lexsort((key[1], key[0]))]
        half = len(cs) // 2
        a_cores, b_cores = cs[:half], cs[half:]
        if len(cl) == 1:
            stack.append((cl, b_cores if speed[b_cores].max() > speed[a_cores].max() else a_cores))
            continue
        frac = speed[a_cores].sum() / speed[cs].sum()
        side = _bisect(ipc[np.ix_(cl, cl)], inter.work[cl], frac, inter.value_bytes, seed)
        stack.append((cl[side == 0], a_cores))
        stack.append((cl[side == 1], b_cores))
    return core


def _bisect(sub, work, frac, value_bytes, seed):
    """0/1 side of each cluster: METIS 2-way cut with target weights (frac, 1 - frac)."""
    k = len(work)
    a, b = np.nonzero(np.triu(sub, 1) + np.triu(sub.T, 1))
    w = np.maximum(1, np.round(sub[a, b] / max(value_bytes, 1))).astype(np.int64)
    src = np.concatenate([a, b])
    dst = np.concatenate([b, a])
    ww = np.concatenate([w, w])
    order = np.lexsort((dst, src))
    xadj = np.zeros(k + 1, dtype=np.int64)
    np.cumsum(np.bincount(src, minlength=k), out=xadj[1:])
    scale = 1e6 / max(float(work.max()), 1.0)
    vw = np.maximum(1, np.round(work * scale)).astype(np.int64)
    side = vertex_partition(xadj, dst[order].astype(np.int64), ww[order], vw, 2,
                            targets=[frac, 1.0 - frac], seed=seed, recursive=True)
    side = np.asarray(side, dtype=np.int32)
    if side.min() == side.max():  # METIS may leave a side empty on tiny graphs
        order = np.argsort(-work, kind="stable")
        side = np.ones(k, dtype=np.int32)
        side[order[: max(1, int(round(frac * k)))]] = 0
    return side


def check_mapping(core, p, machine):
    core = np.asarray(core)
    if core.shape != (p,) or core.min() < 0 or core.max() >= machine.cores:
        raise InputError(f"a mapping of {p} clusters must give each a core 0..{machine.cores - 1}")
    return core.astype(np.int32)
