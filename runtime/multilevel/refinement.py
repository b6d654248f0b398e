"""Refinement: greedy k-way boundary moves, balance repair, then k-way FM.

Interface: ``refine(level, part, maxload, rng, repair) -> (moves, repair_moves)``,
``part`` changed in place. Greedy moves never raise the cut and never break a
bound that held; the repair (on when ``repair``) then moves vertices out of
parts over their bound, cheapest cut loss first, and greedy refinement runs
once more within the now-kept bounds. Last, on levels without hubs (`fm_suits`:
meshes, roads, geometric graphs), one pass of localised
k-way FM (`_cpu.kway_fm`), which takes negative-gain moves and keeps only the
best prefix of each search: it gets out of the local minima the greedy moves
stop in, and like them never raises the cut nor breaks a bound.
"""

import numpy as np

from . import _cpu as K

__all__ = ["refine", "fm_suits", "REFINE_PASSES"]

#: Greedy passes per level (the later ones visit only neighbours of moved vertices).
REFINE_PASSES = 10
#: FM: moves a search may make past its best prefix, and the degree above which a
#: moved vertex's neighbour is not re-queued
FM_LIMIT = 12
FM_HUB = 256
FM_NEIGHBOUR_DEGREE = 24  # see `fm_suits`


def fm_suits(level):
    """FM runs on levels without hubs: largest degree at most `FM_HUB` and a neighbour's
    expected degree (sum of degree² / sum of degrees) at most `FM_NEIGHBOUR_DEGREE`. Its
    gains are re-evaluated by scanning neighbours, a neighbour's degree per move; on the
    power-law graphs (neighbour degree 63-280 at every level of ca-HepPh, cit-HepPh,
    as-caida) that cost 20-70x METIS's whole time for a 5-25 % lower cut. Meshes, roads and
    geometric graphs have 2-18."""
    deg = np.diff(level.indptr)
    if not len(deg) or int(deg.max()) > FM_HUB:
        return False
    d = deg.astype(np.float64)
    return float((d * d).sum()) <= FM_NEIGHBOUR_DEGREE * max(float(d.sum()), 1.0)


def refine(level, part, maxload, rng, repair=True):
    args = (level.indptr, level.indices, level.ewgt, level.vwgt, part)
    load = K.part_loads(part, level.vwgt, len(maxload))
    moves, _ = K.greedy_refine(*args, load, maxload, rng.permutation(level.n), REFINE_PASSES)
    fixed = 0
    if repair and (load > maxload).any():
        fixed = K.repair_balance(*args, load, maxload, rng.permutation(level.n))
        more, _ = K.greedy_refine(*args, load, maxload, rng.permutation(level.n), REFINE_PASSES)
        moves += more
    if fm_suits(level) and not (load > maxload).any():  # FM keeps bounds, does not repair
        fm, _ = K.kway_fm(*args, load, maxload, rng.permutation(level.n), FM_LIMIT, FM_HUB)
        moves += fm
    return moves, fixed
