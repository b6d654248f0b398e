"""Initial partitioning: recursive bisection by graph growing and FM refinement.

Interface: ``initial_partition(level, fractions, imbalance, rng) -> part``.
Each bisection is itself multilevel (as METIS's recursive bisection): the
subgraph is coarsened further (`coarsening.coarsen` with k = 2, to at most
`BISECT_CAP` vertices), side 0 is
grown greedily (GGGP: the vertex that lowers the cut most joins next) from
`TRIES` seeded start vertices of the coarsest graph until it holds its share of the weight (the parts' target fractions summed),
each growth is refined with Fiduccia-Mattheyses and the lowest cut within the
bounds kept. On a disconnected coarsest graph, whole components on side 0 and one
component split at the share they leave (`initial_kernels.split_components`) replace that when
they halve its cut. The bisection is projected back with an FM pass per level.
The two sides are bisected in turn, ceil(log2 k) levels in all. Each
bisection gets the tolerance (1 + imbalance) ** (1 / levels) - 1, so that the
products stay within the k-way bound.
"""

import math

import numpy as np

from . import initial_kernels as IK
from . import refinement_kernels as RK
from .coarsening import coarsen, coarsen_to
from .graph import Level

__all__ = ["initial_partition", "TRIES", "FM_PASSES", "BISECT_CAP", "COMPONENT_SPLITS",
           "SPLIT_TRIES", "SPLIT_MARGIN"]

#: Start vertices tried per bisection (4 against 8, with the 2-way FM's sides taking
#: turns: cut x 1.006, time x 0.91 over 32 cells and 3 seeds)
TRIES = 4
#: FM passes per bisection (stops earlier at a pass without improvement).
FM_PASSES = 8
#: A bisection coarsens its subgraph to at most this many vertices (fewer when
#: `coarsening.coarsen_to` says so). Neutral on the k-way path's small coarsest graphs
#: (cut x 0.9995 over bench_multilevel's 64 cells); for a bisection of a whole graph
#: (``scheme="rb"``) growing regions on n / 20 vertices gave 2.2-2.5 x METIS's cut on rgg
#: and road graphs, and 0.91-1.06 x with this cap
BISECT_CAP = 200
#: A bisection's hierarchy keeps a level only with less than this share of the adjacency
#: entries of the last level kept (`coarsening.contract_levels`' ``thin``): on RMAT-like
#: subgraphs level after level keeps most edges, each held ~16 bytes per entry until the
#: bisection ended, and 2-way FM there changed little (over bench_multilevel's 64 cells:
#: cut x 0.9996, every cell within 0.992-1.000, time x 0.995; rmat18's peak memory 101 ->
#: 62 bytes per entry; at 0.5 cnr-2000 k = 8 cut 17 % more)
THIN_LEVELS = 0.75
#: On a disconnected coarsest graph, the components tried for the one split
#: (`initial_kernels.split_components`; the lightest that can give side 0 what whole ones leave it,
#: first), the growths tried in each, and the share of the grown bisection's cut a split
#: must go below to replace it: where the small components lie on both sides, later
#: bisections use them to fill their balance (at 1.0, ca-HepPh k = 8 cut 6.5 % more over
#: 8 seeds; at 0.5 no power-law cell cut 1 % more). cnr-2000 at k = 8: 5.45 x METIS's mean
#: cut over 8 seeds -> 0.91 x (docs/notes/runtime-multilevel.md)
COMPONENT_SPLITS = 1
SPLIT_TRIES = 4
SPLIT_MARGIN = 0.5


def initial_partition(level, fractions, imbalance, rng):
    k = len(fractions)
    n = level.n
    part = np.zeros(n, dtype=np.int64)
    depth = max(1, math.ceil(math.log2(k)))
    tol = (1.0 + imbalance) ** (1.0 / depth) - 1.0
    local = np.full(n, -1, dtype=np.int64)
    stack = [(np.arange(n, dtype=np.int64), 0, k)]
    while stack:
        verts, lo, hi = stack.pop()
        if hi - lo == 1 or len(verts) == 0:
            part[verts] = lo
            continue
        mid = (lo + hi) // 2
        ptr, idx, w, vw = IK.induced(level.indptr, level.indices, level.ewgt, level.vwgt, verts,
                                    local)
        total = int(vw.sum())
        f0 = float(fractions[lo:mid].sum() / fractions[lo:hi].sum())
        target0 = int(round(total * f0))
        max0 = _side_max(total, f0, tol)
        max1 = _side_max(total, 1.0 - f0, tol)
        side = _bisect(Level(ptr, idx, w, vw), target0, max0, max1, rng)
        stack.append((verts[side == 1], mid, hi))
        stack.append((verts[side == 0], lo, mid))
    return part


def _side_max(total, share, tol):
    """The most weight a side of ``share`` of ``total`` may take: ``floor((1 + tol) *
    total * share)``, at most the whole weight (a huge tolerance would not fit an
    integer). Where ``(1 + tol) * total`` overflows to inf and the share is 0, the product
    is NaN (``--imbalance 1e308 --capacities 1e308,3``): the side then takes nothing (all
    for an infinite tolerance, which bounds nothing)."""
    room = (1.0 + tol) * total * share
    if math.isnan(room):
        room = 0.0 if math.isfinite(tol) else float(total)
    return int(math.floor(min(room, total)))


def _bisect(sub, target0, max0, max1, rng):
    """Multilevel bisection of ``sub``: side (0/1) per vertex."""
    stop = min(coarsen_to(sub.n, 2), BISECT_CAP)
    # the vertex rule alone: with `coarsening.EDGE_SHRINK_STOP` here too, rmat18 and rmat20
    # took 1.2-1.6 x the time for 0-1 % less cut (cit-HepPh at k = 8: 3 %)
    levels, maps = coarsen(sub, 2, int(rng.integers(1 << 62)), stop, edges=False,
                           thin=THIN_LEVELS)
    c = levels[-1]
    starts = rng.choice(c.n, size=min(TRIES, c.n), replace=False).astype(np.int64)
    order = rng.permutation(c.n).astype(np.int64)
    bounds = (np.int64(target0), np.int64(max0), np.int64(max1))
    side = IK.grow_bisection(c.indptr, c.indices, c.ewgt, c.vwgt, starts, order, *bounds,
                            FM_PASSES)
    IK.split_components(c.indptr, c.indices, c.ewgt, c.vwgt, side, order, *bounds, FM_PASSES,
                       SPLIT_TRIES, COMPONENT_SPLITS,
                       SPLIT_MARGIN)
    for i in range(len(maps) - 1, -1, -1):
        side = RK.project(side, maps[i])
        lv = levels[i]
        IK.fm_bisection(lv.indptr, lv.indices, lv.ewgt, lv.vwgt, side, *bounds, FM_PASSES)
    return side
