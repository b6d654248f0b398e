"""Refinement: greedy k-way boundary moves, then balance repair.

Interface: ``refine(level, part, maxload, rng, repair) -> (moves, repair_moves)``,
``part`` changed in place. Greedy moves never raise the cut and never break a
bound that held; the repair (on when ``repair``) then moves vertices out of
parts over their bound, cheapest cut loss first, and greedy refinement runs
once more within the now-kept bounds.
"""

import numpy as np

from . import _cpu as K

__all__ = ["refine", "REFINE_PASSES"]

#: Greedy passes per level (the later ones visit only neighbours of moved vertices).
REFINE_PASSES = 10


def refine(level, part, maxload, rng, repair=True):
    args = (level.indptr, level.indices, level.ewgt, level.vwgt, part)
    load = K.part_loads(part, level.vwgt, len(maxload))
    moves, _ = K.greedy_refine(*args, load, maxload, rng.permutation(level.n), REFINE_PASSES)
    fixed = 0
    if repair and (load > maxload).any():
        fixed = K.repair_balance(*args, load, maxload, rng.permutation(level.n))
        more, _ = K.greedy_refine(*args, load, maxload, rng.permutation(level.n), REFINE_PASSES)
        moves += more
    return moves, fixed
