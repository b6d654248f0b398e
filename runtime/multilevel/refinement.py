"""Refinement: greedy k-way boundary moves, balance repair, then k-way FM.

Interface: ``refine(level, part, maxload, rng, repair) -> (moves, repair_moves)``,
``part`` changed in place. Greedy moves never raise the cut and never break a
bound that held; the repair (on when ``repair``) then moves vertices out of
parts over their bound, cheapest cut loss first, and greedy refinement runs
once more within the now-kept bounds. Last, one pass of localised k-way FM
(`_cpu.kway_fm`), which takes negative-gain moves and keeps only the best
prefix of each search: it gets out of the local minima the greedy moves stop
in, and like them never raises the cut nor breaks a bound. Its searches start
at the boundary vertices with the best moves first and stop once the pass has
scanned `FM_BUDGET` times the level's adjacency entries, so a level costs
linear time whatever its degrees. Every phase visits boundary vertices only.
"""

import numpy as np

from . import _cpu as K

__all__ = ["refine", "REFINE_PASSES", "FM_LIMIT", "FM_HUB", "FM_BUDGET"]

#: Greedy passes per level (the later ones visit only neighbours of moved vertices).
REFINE_PASSES = 10
#: FM: moves a search may make past its best prefix, and the degree above which a
#: moved vertex's neighbour is not queued (its gain would cost its degree to evaluate)
FM_LIMIT = 12
FM_HUB = 256
#: FM's work per level: adjacency entries scanned by gain evaluations, per entry of the
#: level (the seeds' own evaluation included, about the boundary's share of one). 1.5
#: cut 0.8 % less than 1.0 for 7 % more time over bench_multilevel's 64 cells
#: (docs/runtime.md)
FM_BUDGET = 1.0


def _boundary_order(level, part, rng):
    """The boundary vertices (the only ones with another part to go to) in a seeded order."""
    b = K.boundary(level.indptr, level.indices, part)
    return b[rng.permutation(len(b))]


def refine(level, part, maxload, rng, repair=True):
    args = (level.indptr, level.indices, level.ewgt, level.vwgt, part)
    load = K.part_loads(part, level.vwgt, len(maxload))
    moves, _ = K.greedy_refine(*args, load, maxload, _boundary_order(level, part, rng),
                               REFINE_PASSES)
    fixed = 0
    if repair and (load > maxload).any():
        fixed = K.repair_balance(*args, load, maxload, rng.permutation(level.n))
        more, _ = K.greedy_refine(*args, load, maxload, _boundary_order(level, part, rng),
                                  REFINE_PASSES)
        moves += more
    if FM_BUDGET > 0 and not (load > maxload).any():  # FM keeps bounds, does not repair
        fm, _, _ = K.kway_fm(*args, load, maxload, _boundary_order(level, part, rng), FM_LIMIT,
                             FM_HUB, int(FM_BUDGET * len(level.indices)))
        moves += fm
    return moves, fixed
