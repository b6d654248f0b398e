"""The levels of the hypergraph of a vertex cut, for `vcut.quality.vcycle_refine`'s
multilevel cycles: `coarsen` within the clusters of an assignment, `uncoarsen` refining
each level from the coarsest (kernels in `vcut.vcycle_kernels`, which also describes the
hypergraph: a node per edge, a net per vertex)."""

import math

import numpy as np

from vcut_base.errors import VcutError
from vcut_base.memory import check_memory

__all__ = ["ground_level", "coarsen", "uncoarsen", "multilevel_cut", "levels_bytes",
           "VCYCLE_NODES_PER_PART", "VCYCLE_MAX_NET", "VCYCLE_LP_ROUNDS", "VCYCLE_SHRINK",
           "VCYCLE_FM_LIMIT", "VCYCLE_FM_BUDGET", "VCYCLE_FM_NET", "VCYCLE_FM_STALL",
           "ML_NODES_PER_PART", "ML_MAX_NET", "ML_SCALE"]

#: `coarsen` stops at this many nodes per cluster (its contraction limit; Mt-KaHyPar's is
#: 160 per block; 160, 40 and 10 measured in docs/notes/vcut-best.md)
VCYCLE_NODES_PER_PART = 10
#: nets of more pins than this are not rated in the clustering (hubs: the pass would be
#: quadratic in their degree)
VCYCLE_MAX_NET = 100
#: label-propagation rounds at each coarse level, at most
VCYCLE_LP_ROUNDS = 10
#: coarsening stops at a level that has not shrunk by this factor (soc-Slashdot0902 at k = 32
#: made 8 levels at 1.05, the last five within 1.3 of each other, where FM found nothing:
#: `strong` 42.4 s; at 1.3, 23.7 s, RF 1.9092 against 1.9100; the same RF within 0.1 % on
#: as-caida, email-Enron, facebook, cit-HepPh and p2p-Gnutella31)
VCYCLE_SHRINK = 1.3
#: FM at each coarse level (`vcut.vcycle_kernels.fm`): a search ends this many moves past
#: its best prefix; no search starts once this many moves per node were tried; a move
#: queues the pins of its nets of at most this many pins. On six cells (as-caida k = 128,
#: email-Enron k = 32, facebook k = 128, cit-HepPh k = 128, ego-Twitter k = 32, cnr-2000
#: k = 128), `strong` with label propagation alone at the coarse levels: RF 1.1602,
#: 1.3040, 2.8339, 2.2750, 1.2740, 1.0551 in 0.8-16.7 s; with FM (16, 0.3, 20): 1.1572,
#: 1.3018, 2.8225, 2.2688, 1.2721, 1.0456 in 1.0-19.7 s; (8, 0.1, 100) much the same;
#: (64, 3, 100): 1.1521, 1.2929, 2.8173, 2.2509, 1.2641, 1.0403 in 4.8-109 s
VCYCLE_FM_LIMIT = 16
VCYCLE_FM_BUDGET = 0.3
VCYCLE_FM_NET = 20
#: ... and no search starts at a level after this many in a row kept no move (-1: no
#: limit). At the coarsest levels of a cycle FM's searches rarely keep a move, and each is
#: costly (soc-Slashdot0902 k = 32, from the default's cut: 2,908 moves tried at the
#: coarsest level, 0.93 s, none kept). `python bench/bench_strong_stages.py` over the 77
#: cells beside Mt-KaHyPar: `strong` 0.390 x its time at RF 0.9897 x (64), against 0.452 x
#: at 0.9894 x (``--fm-stall -1``, no limit); the 77 runs 199 s against 300 s. On the six
#: large cells 0.0-0.4 % more replicas (uk-2007 k = 128 the most; docs/notes/vcut-best.md)
VCYCLE_FM_STALL = 64
#: `multilevel_cut` coarsens to this many nodes per cluster before METIS cuts the coarsest
#: level
ML_NODES_PER_PART = 40
#: nets of more pins than this are left out of the graph METIS cuts at the coarsest level
#: (a net of s pins is a clique of s (s - 1) / 2 edges there)
ML_MAX_NET = 256
#: nets of more pins than this are not rated in `multilevel_cut`'s clustering
ML_RATE_NET = 1000
#: a net of s pins weighs ``ML_SCALE // (s - 1)`` on each edge of its clique
ML_SCALE = 1000


def _level_bytes(level):
    return sum(a.nbytes for a in level) * 2  # the clustering's arrays as much again


def ground_level(src, dst, weight, n, incidence=None):
    """Level 0 of the hypergraph of the edges, less its blocks: ``(nptr, nnet, eptr, epin,
    c)``; each node's nets are its edge's two ends, each net's pins its vertex's edges in
    edge order (``incidence``, `vcut.expansion_kernels.incidence`, computed where None),
    each node's weight its edge's."""
    from . import expansion_kernels
    m = len(src)
    if incidence is None:
        incidence = expansion_kernels.incidence(src, dst, n, np.ones(m, dtype=np.bool_))
    nnet = np.column_stack((src, dst)).astype(np.int64).ravel()
    return (np.arange(0, 2 * m + 1, 2, dtype=np.int64), nnet, incidence[0], incidence[1],
            np.asarray(weight, dtype=np.float64))


def coarsen(ground, part, k, rng, *, nodes_per_part=None, max_net=None):
    """The levels of the hypergraph of the edges from its level 0 ``ground``
    (`ground_level`), each coarser one merging nodes of one cluster of ``part``
    (`vcut.vcycle_kernels`): ``(levels, maps)``, ``levels[i]`` = ``(nptr, nnet, eptr, epin,
    c, part)``, ``maps[i]`` each node of level ``i`` to its node of level ``i + 1``.
    Coarsening stops at ``nodes_per_part * k`` nodes (clusters weigh at most the total over
    that), at a level that shrank by less than `VCYCLE_SHRINK`, or where the next level may
    not fit the memory. ``nodes_per_part`` and ``max_net`` (None: `VCYCLE_NODES_PER_PART`,
    `VCYCLE_MAX_NET`) are the clustering's."""
    from . import vcycle_kernels as kernels
    nodes_per_part = VCYCLE_NODES_PER_PART if nodes_per_part is None else nodes_per_part
    max_net = VCYCLE_MAX_NET if max_net is None else max_net
    c = ground[4]
    levels = [(*ground, np.asarray(part, dtype=np.int64))]
    maps = []
    target = max(1, nodes_per_part * k)
    cmax = float(c.sum()) / target
    while len(levels[-1][4]) > target:
        level = levels[-1]
        nodes = len(level[4])
        try:
            check_memory(_level_bytes(level), "a coarser level", "")
        except VcutError:
            break  # the levels so far
        if len(levels) == 1:  # the stars of the vertices, fewest edges first
            ends = level[2]
            degree = np.diff(ends)
            shuffled = rng.permutation(len(degree))
            vertices = shuffled[np.argsort(degree[shuffled], kind="stable")].astype(np.int64)
            rep, clusters = kernels.star_cluster(ends, level[3], level[4], level[5], k,
                                                 vertices, cmax, int(target))
        else:
            rep, clusters = kernels.cluster(*level, rng.permutation(nodes).astype(np.int64),
                                            cmax, int(max_net), int(target))
        if clusters * VCYCLE_SHRINK > nodes:
            break
        cid, *coarse = kernels.contract(*level, rep)
        cc, cpart, cnptr, cnnet, ceptr, cepin = coarse
        levels.append((cnptr, cnnet, ceptr, cepin, cc, cpart))
        maps.append(cid)
    return levels, maps


def uncoarsen(levels, maps, load, bound, k, rng, rounds=VCYCLE_LP_ROUNDS, balance=False):
    """Label propagation, then FM (`VCYCLE_FM_LIMIT`, `VCYCLE_FM_BUDGET`,
    `VCYCLE_FM_NET`, `VCYCLE_FM_STALL`), at each level of `coarsen` from the coarsest to
    level 1, each result projected onto the next finer level; returns level 0's blocks
    (int64) and the nodes moved (FM's kept moves counted). ``load`` (each cluster's weight)
    is updated; no move takes a cluster past ``bound``. With ``balance``, nodes of the
    clusters above the bound move out first at each level, level 0 included
    (`vcut.vcycle_kernels.rebalance`)."""
    from . import vcycle_kernels as kernels
    part = levels[-1][5].copy()  # each finer level's is a new array, projected
    moved = 0
    for i in range(len(levels) - 1, -1, -1):
        nptr, nnet, eptr, epin, c, _ = levels[i]
        if balance:  # (returns at once where no cluster is above the bound)
            moved += int(kernels.rebalance(nptr, nnet, eptr, epin, c, part, load, bound, k)[0])
        if i == 0:
            break
        order = rng.permutation(len(c)).astype(np.int64)
        moves, _ = kernels.label_propagation(nptr, nnet, eptr, epin, c, part, load, bound, k,
                                             order, int(rounds))
        moved += int(moves)
        kept, _, _ = kernels.fm(nptr, nnet, eptr, epin, c, part, load, bound, k,
                                rng.permutation(len(c)).astype(np.int64), int(VCYCLE_FM_LIMIT),
                                int(VCYCLE_FM_NET), int(math.ceil(VCYCLE_FM_BUDGET * len(c))),
                                int(VCYCLE_FM_STALL))
        moved += int(kept)
        part = part[maps[i - 1]]
    return part, moved


def levels_bytes(n, m, k):
    """Bytes the levels take at most before their coarser levels (and, in `multilevel_cut`,
    the coarsest level's graph; each checked where it is made): level 0's node lists,
    weights, blocks and coarse numbers (`ground_level`, 72 bytes per edge), the tables of
    label propagation and FM on at most ``n`` nets (a pin count and a bit per cluster) and
    FM's queue and log on at most ``m`` nodes (80 bytes per node)."""
    words = (k + 63) // 64
    return 72 * m + 80 * m + 8 * n + n * (4 * k + 8 * words)


def multilevel_cut(ground, k, bound, rng, *, imbalance, targets=None, seed=0,
                   nodes_per_part=None, max_net=None, rate_net=None):
    """A cut of the hypergraph of the edges made from scratch: `coarsen` with every node in
    one block (down to ``nodes_per_part * k`` nodes); METIS cuts the coarsest level's
    clique expansion (`vcut.vcycle_kernels.clique_fill`: nets of 2 to ``max_net`` pins,
    ``ML_SCALE // (pins - 1)`` per edge of a net's clique) into ``k`` parts of node weight
    within ``imbalance`` (per-part ``targets`` where given, as
    `runtime.vertex_partition.vertex_partition` takes them); `uncoarsen` refines each
    level on the way back within ``bound``, first moving nodes out of the parts METIS left
    above it.
    Returns level 0's blocks: each edge's cluster (int64)."""
    from runtime.vertex_partition import vertex_partition

    from . import vcycle_kernels as kernels
    from .spac import _int_weights
    nodes_per_part = ML_NODES_PER_PART if nodes_per_part is None else nodes_per_part
    max_net = ML_MAX_NET if max_net is None else max_net
    rate_net = ML_RATE_NET if rate_net is None else rate_net
    m = len(ground[4])
    levels, maps = coarsen(ground, np.zeros(m, dtype=np.int64), k, rng,
                           nodes_per_part=nodes_per_part, max_net=rate_net)
    nptr, nnet, eptr, epin, c, _ = levels[-1]
    xadj = kernels.clique_degrees(nptr, nnet, eptr, epin, int(max_net), ML_SCALE)
    check_memory(16 * int(xadj[-1]), f"the graph of {len(c):,} coarse nodes METIS cuts", "")
    adjncy, adjwgt = kernels.clique_fill(nptr, nnet, eptr, epin, int(max_net), ML_SCALE, xadj)
    part = np.asarray(vertex_partition(xadj, adjncy, adjwgt, _int_weights(c), k,
                                       backend="metis", imbalance=imbalance, seed=seed,
                                       targets=targets), dtype=np.int64)
    levels[-1] = (nptr, nnet, eptr, epin, c, part)
    load = np.bincount(part, weights=c, minlength=k)
    return uncoarsen(levels, maps, load, np.asarray(bound, dtype=np.float64), k, rng,
                     balance=True)[0]
