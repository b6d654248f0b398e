"""Coarsening: heavy-edge matching, Cmap, contraction, and the stop rule of the source.

Interface: ``coarsen(level, k, seed) -> (levels, maps)`` where ``levels[0]``
is the input, ``levels[i + 1]`` the contraction of ``levels[i]`` and
``maps[i]`` the fine-to-coarse map (Cmap) of that step.
"""

import math

import numpy as np

from vcut_base.errors import InputError, OutOfMemory
from vcut_base.memory import check_memory

from . import coarsening_kernels as CK
from . import refinement_kernels as RK
from .graph import Level

__all__ = ["coarsen", "coarsen_to", "contract_levels", "vertex_cap", "check_level_memory",
           "MATCH_ROUNDS", "SHRINK_STOP", "EDGE_SHRINK_STOP"]

#: Bytes one contraction step may touch per adjacency entry of its fine level (the coarse
#: neighbour and weight buffers, 8 + 8; a coarse level has at most the fine one's entries)
#: and per fine vertex (the matching's mates, proposals, keys and lists, 6 x 8; Cmap, 8;
#: the coarse weights, offsets and the slot table, 3 x 8).
STEP_BYTES_PER_ENTRY = 16
STEP_BYTES_PER_VERTEX = 80
#: Steps that need less are not checked (a check reads /proc/meminfo, ~50 us; the
#: bisections of the initial partitioning contract hundreds of small subgraphs).
CHECK_FROM_BYTES = 64 << 20


def check_level_memory(level, first=False, available=None):
    """Refuse a contraction of ``level`` whose buffers do not fit in the memory available
    (`vcut_base.memory.check_memory`), before it allocates: on the graph itself
    (``first``) an `InputError` (exit 2: nothing has run), on a later level an
    `OutOfMemory` (exit 11), each in one line with the figures. Returns the bytes the
    step needs (0 for a level on the GPU, whose memory is planned before the run)."""
    if not isinstance(level, Level):
        return 0
    need = STEP_BYTES_PER_ENTRY * len(level.indices) + STEP_BYTES_PER_VERTEX * level.n
    if need >= CHECK_FROM_BYTES or available is not None:
        what = (f"multilevel partitioning of a graph of {level.n:,} vertices and "
                f"{level.m:,} edges" if first else
                f"contracting a level of {level.n:,} vertices and {level.m:,} edges")
        check_memory(need, what, "use a machine with more memory, or a streaming vertex cut "
                     "(e.g. --algo hdrf) that keeps its edge arrays on disk (--spill DIR)",
                     error=InputError if first else OutOfMemory, available=available)
    return need

#: Proposal rounds of the matching (each matches at least the heaviest free edge).
MATCH_ROUNDS = 8
#: Stop when a level keeps more than this share of its vertices (the source: 0.85).
SHRINK_STOP = 0.85
#: The CPU twin also stops after a level that keeps more than this share of its edges:
#: contraction there makes the graph denser, not smaller (expanders: RMAT, peer-to-peer
#: networks), and partitioning the coarser levels loses what the finer ones show (rmat18
#: at k = 8: 0.38 x the cut; SPAC on p2p-Gnutella31 at k = 32: RF 1.037 -> 1.019 x
#: METIS-backed SPAC's). No mesh of the benchmark reaches it. None: the vertex rule alone
#: (the GPU's, and the bisections' of the initial partitioning).
EDGE_SHRINK_STOP = 0.9
#: Mesh-like levels (one edge weight, no degree above this times the mean) skip the
#: matching's proposal rounds (`match`). The benchmark's meshes reach 7.7, its power-law
#: graphs 25-1084, on which the greedy pass alone cut 1.7 % worse.
MESH_DEGREE_RATIO = 16
#: False: the proposal rounds on every level (the rule before; for A/B runs)
GREEDY_ON_MESHES = True
#: A coarse vertex may weigh at most this times the mean weight at the stop size (METIS).
MAX_VERTEX_FACTOR = 1.5


def coarsen_to(n, k):
    """Vertices at which coarsening stops: max(n / (20 log2 k), 30 k) (as METIS's kway)."""
    return max(int(n / (20 * max(1.0, math.log2(k)))), 30 * k)


def match(level, max_vw, seed):
    """The heavy-edge matching of ``level`` (``match[v]``: v's mate, or v).

    On a mesh-like level (`coarsening_kernels.mesh_like`: every edge of one weight, no degree above
    `MESH_DEGREE_RATIO` x the mean) the proposal rounds are skipped: with no heavy
    edge to prefer they only break ties by hash, at 3.4 x the time of the greedy pass
    that follows them (as METIS matches unweighted graphs at random)."""
    rounds = MATCH_ROUNDS
    if GREEDY_ON_MESHES and CK.mesh_like(level.indptr, level.ewgt, MESH_DEGREE_RATIO):
        rounds = 0
    m, _ = CK.heavy_edge_matching(level.indptr, level.indices, level.ewgt, level.vwgt,
                                 np.int64(max_vw), np.uint64(seed), rounds)
    return m


def contract(level, mate):
    """``(coarse level, cmap)``: matched pairs merged into one vertex each."""
    cmap, nc = CK.coarse_map(mate)
    ptr, idx, w, vw = CK.contract(level.indptr, level.indices, level.ewgt, level.vwgt, mate,
                                 cmap, nc)
    return Level(ptr, idx, w, vw), cmap


def vertex_cap(total, stop):
    """The heaviest a coarse vertex may be: `MAX_VERTEX_FACTOR` times the mean weight at the
    stop size (``total`` vertex weight, ``stop`` vertices)."""
    return max(1, int(MAX_VERTEX_FACTOR * total / stop))


def contract_levels(finest, stop, step, edge_stop=None, thin=None):
    """``(levels, maps)``: ``step(fine, i) -> (coarse, cmap)`` (``i``: the step's number)
    applied from ``finest`` until a level has at most ``stop`` vertices, or a step merges
    nothing or shrinks its level by less than 15 % (`SHRINK_STOP`), or keeps more than
    ``edge_stop`` of its edges (that level is kept in both cases). Both devices'
    coarsening. A step whose buffers do not fit in the memory available is refused
    before it allocates (`check_level_memory`).

    ``thin`` (host levels only): a level between the finest and the coarsest with at
    least this share of the adjacency entries of the last level kept is dropped once
    the next one is built, and the maps across it are composed, so the hierarchy holds
    only levels that shrank (RMAT-like graphs keep most edges level after level)."""
    levels, maps = [finest], []
    steps = 0
    while levels[-1].n > stop:
        fine = levels[-1]
        check_level_memory(fine)
        coarse, cmap = step(fine, steps)
        steps += 1
        if coarse.n == fine.n:
            break
        if (thin is not None and len(levels) >= 2
                and len(fine.indices) >= thin * len(levels[-2].indices)):
            maps[-1] = RK.project(cmap, maps[-1])  # fine vertex -> coarse, across the dropped
            levels[-1] = coarse
        else:
            levels.append(coarse)
            maps.append(cmap)
        if coarse.n > SHRINK_STOP * fine.n or (
                edge_stop is not None and coarse.m > edge_stop * fine.m):
            break
    return levels, maps


def coarsen(level, k, seed, stop=None, edges=True, thin=None):
    """Contract ``level`` until ``stop`` vertices (default `coarsen_to`) or until a level
    shrinks by less than 15 % of its vertices, or (``edges``) 10 % of its edges
    (`EDGE_SHRINK_STOP`); ``thin``: see `contract_levels`."""
    stop = coarsen_to(level.n, k) if stop is None else stop
    max_vw = vertex_cap(level.vwgt.sum(), stop)
    return contract_levels(level, stop,
                           lambda fine, i: contract(fine, match(fine, max_vw, seed + i)),
                           EDGE_SHRINK_STOP if edges else None, thin)
