"""Refinement: greedy k-way boundary moves, balance repair, then k-way FM or Jet.

Interface: ``refine(level, part, maxload, rng, repair, finest, refiner, candidates) ->
(moves, repair_moves, boundary)``,
``part`` changed in place. Greedy moves never raise the cut and never break a
bound that held; the repair (on when ``repair``) then moves vertices out of
parts over their bound, cheapest cut loss first, and greedy refinement runs
once more within the now-kept bounds. Last, one pass of localised k-way FM
(`refinement_kernels.kway_fm`), which takes negative-gain moves and keeps only the best
prefix of each search: it gets out of the local minima the greedy moves stop
in, and like them never raises the cut nor breaks a bound. Its searches start
at the boundary vertices with the best moves first and stop once the pass has
scanned `FM_BUDGET` times the level's adjacency entries, so a level costs
linear time whatever its degrees. Every phase visits boundary vertices only.
With ``refiner="jet"`` Jet (`jet_loop`, the GPU's refinement) takes FM's place, and
the greedy moves run once more after it; with ``"greedy"`` neither runs.
"""

import numpy as np

from . import coarsening_kernels as CK
from . import jet_kernels as J
from . import refinement_kernels as RK

__all__ = ["refine", "jet_loop", "REFINERS", "REFINE_PASSES", "FM_LIMIT", "FM_HUB", "FM_BUDGET",
           "FM_SEED_SHARE",
           "JET_PATIENCE", "JET_TOLERANCE", "JET_ROUNDS", "JET_C4", "JET_HEAVY"]

#: Greedy passes per level (the later ones visit only neighbours of moved vertices).
REFINE_PASSES = 10
#: FM: moves a search may make past its best prefix, and the degree above which a
#: moved vertex's neighbour is not queued (its gain would cost its degree to evaluate)
FM_LIMIT = 12
FM_HUB = 256
#: FM's work per level: adjacency entries scanned by gain evaluations, per entry of the
#: level (the seeds' own evaluation included, about the boundary's share of one). 1.5
#: cut 0.8 % less than 1.0 for 7 % more time over bench_multilevel's 64 cells
#: (docs/notes/runtime-multilevel.md)
FM_BUDGET = 1.0
#: FM: the seeds' first evaluation may take at most this share of the budget; where the
#: boundary's rows hold more, its vertices of the most neighbours start no search (on
#: power-law graphs evaluating every boundary hub spent the whole budget: one search a level)
FM_SEED_SHARE = 0.5
#: the refiners after the greedy moves: k-way FM (the CPU's default), Jet (`jet_loop`,
#: the GPU's default, which the CPU runs too), or none
REFINERS = ("fm", "jet", "greedy")
#: Jet: steps without a better balanced cut before it stops; a cut counts as better
#: when below JET_TOLERANCE times the best (smaller gains extend nothing); at most
#: JET_ROUNDS steps (rounds and rebalancing rounds) a level
JET_PATIENCE = 12
JET_TOLERANCE = 0.999
JET_ROUNDS = 100
#: Jet's filter ratio in quarters, on the coarse levels and on the finest: a move that
#: loses less than c4/4 of what holds a vertex to its part is a candidate
JET_C4 = 3
JET_C4_FINEST = 1
#: vertices of more neighbours are not Jet candidates (the GPU's one-thread-per-vertex
#: limit, `coarsening_kernels_gpu.HEAVY_DEGREE`; the greedy moves still move them)
JET_HEAVY = 256
#: rebalancing rounds in a row before the host's repair
JET_REBALANCE = 8


def soft_bounds(maxload, total):
    """The loads up to which the rebalancing sends vertices into a part: halfway from its
    share of ``total`` (in proportion to the bounds) to its bound, so that parts filled
    by many evicted vertices at once stay within their bounds."""
    share = maxload * (total / max(int(maxload.sum()), 1))
    return np.maximum(np.floor((maxload + share) / 2), 1).astype(np.int64)


class _HostJet:
    """`jet_loop`'s operations on a host level (the CPU twin of `gpu._DeviceJet`): the
    rounds visit the active list (`jet_kernels.jet_round`: the boundary and the vertices next to
    a move), the cut and the saved partition follow the moves."""

    def __init__(self, level, part, maxload, key):
        n = level.n
        self.level, self.part, self.maxload, self.key = level, part, maxload, key
        self.lock = np.zeros(n, np.int64)
        self.dest = np.full(n, -1, np.int64)
        self.gain = np.zeros(n, np.int64)
        self.active = np.empty(n, np.int64)
        self.listed = np.empty(n, np.uint8)
        self._list_all()  # the first round prunes the interior
        self.load = RK.part_loads(part, level.vwgt, len(maxload))
        self.best = part.copy()
        self.soft = soft_bounds(maxload, int(self.load.sum()))
        self.cut = int(J.cut(level.indptr, level.indices, level.ewgt, part))
        self.best_cut = self.cut
        self.moved = 0

    def _args(self):
        lv = self.level
        return lv.indptr, lv.indices, lv.ewgt, lv.vwgt, self.part, self.load, self.maxload

    def _list(self):
        return self.active, self.na, self.listed

    def _list_all(self):
        """Every vertex on the active list."""
        self.active[:] = np.arange(self.level.n)
        self.na = self.level.n
        self.listed[:] = 1

    def status(self):
        return self.cut, self.load, self.moved

    def _step(self, out):
        moved, self.na, delta = out
        self.moved = int(moved)
        self.cut += int(delta)

    def round(self, c4, heavy):
        self._step(J.jet_round(*self._args(), self.lock, self.key, heavy, c4, self.dest,
                               self.gain, *self._list()))

    def rebalance(self, heavy, load):
        self._step(J.jet_rebalance(*self._args(), self.soft, self.key, heavy,
                                   J.room_sums(self.load, self.soft), self.dest, self.gain,
                                   *self._list()))

    def repair(self, order):
        lv = self.level
        moves = int(RK.repair_balance(*self._args(), order))
        self.cut = int(J.cut(lv.indptr, lv.indices, lv.ewgt, self.part))
        self._list_all()  # the repair's moves are not tracked
        return moves

    def save(self):
        self.best[:] = self.part
        self.best_cut = self.cut

    def restore(self):
        self.part[:] = self.best
        self.cut = self.best_cut
        self.load[:] = RK.part_loads(self.part, self.level.vwgt, len(self.maxload))


def jet_loop(ops, n, maxload, rng, c4=None, heavy=None, stats=None):
    """Jet (`jet_kernels`) on ``ops``' partition, from a balanced one: each step is a Jet round
    when the partition is balanced, else a rebalancing round (`jet_kernels.jet_rebalance`);
    after `JET_REBALANCE` rebalancing rounds in a row the host's repair
    (`refinement_kernels.repair_balance`, seeded order from ``rng``) finishes the job. It stops
    after `JET_PATIENCE` steps without a better balanced cut (better: below `JET_TOLERANCE`
    times the best), `JET_ROUNDS` steps or a fixed point, and restores the best balanced
    partition seen (the start's when none beats it). Returns the moves; ``stats`` gains
    the rounds, rebalancing rounds and host repairs.

    ``ops``: ``status() -> (cut, loads, moved by the last step)``, ``round(c4, heavy)``,
    ``rebalance(heavy, loads)``, ``repair(order) -> moves``, ``save()``, ``restore()``."""
    c4 = JET_C4 if c4 is None else c4
    heavy = JET_HEAVY if heavy is None else heavy
    stats = {} if stats is None else stats
    for name in ("jet_rounds", "jet_rebalances", "jet_repairs"):
        stats.setdefault(name, 0)
    cut, load, _ = ops.status()
    if (load > maxload).any():
        return 0  # the caller repairs first
    best = cut
    ops.save()
    stall = moves = rounds = rebalances = idle = over = 0
    balanced = True
    while stall < JET_PATIENCE and rounds + rebalances < JET_ROUNDS and idle < 2:
        if balanced:
            rounds += 1
            ops.round(c4, heavy)
        else:
            rebalances += 1
            over += 1
            ops.rebalance(heavy, load)
        cut, load, moved = ops.status()
        moves += moved
        idle = idle + 1 if moved == 0 else 0  # two idle steps: nothing locked, a fixed point
        balanced = not (load > maxload).any()
        if not balanced and over >= JET_REBALANCE:
            stats["jet_repairs"] += 1
            moves += ops.repair(rng.permutation(n).astype(np.int64))
            cut, load, _ = ops.status()
            balanced = not (load > maxload).any()
        if balanced:
            over = 0
        if balanced and cut < best:
            stall = 0 if cut < JET_TOLERANCE * best else stall + 1
            best = cut
            ops.save()
        else:
            stall += 1
    ops.restore()
    stats["jet_rounds"] += rounds
    stats["jet_rebalances"] += rebalances
    return moves


def seed_degree(indptr, order, room):
    """The most neighbours an FM seed may have so that the rows of the seeds of
    ``order`` hold at most ``room`` adjacency entries in all (the lowest degrees kept);
    -1 when they all fit."""
    deg = indptr[order + 1] - indptr[order]
    if deg.sum() <= room:
        return -1
    deg.sort()
    fit = int(np.searchsorted(np.cumsum(deg), room, side="right"))  # < len(deg) here
    return int(deg[fit]) - 1  # below the first degree that does not fit


def _boundary_order(level, part, rng, b=None):
    """The boundary vertices (the only ones with another part to go to) in a seeded order;
    ``b``: the boundary when known."""
    b = RK.boundary(level.indptr, level.indices, part) if b is None else b
    return b[rng.permutation(len(b))]


def refine(level, part, maxload, rng, repair=True, finest=False, refiner="fm",
           candidates=None):
    """Greedy moves, the repair, then ``refiner`` on ``level`` (``part`` in place).
    ``candidates``: the only vertices (increasing) that can be on the boundary, when known
    (`refinement_kernels.projected_candidates`). Returns the moves, the repair's moves, and the
    boundary of the result (None after Jet and on the ``finest`` level)."""
    args = (level.indptr, level.indices, level.ewgt, level.vwgt, part)
    ptr, idx = level.indptr, level.indices
    load = RK.part_loads(part, level.vwgt, len(maxload))
    # the boundary follows the moves (`refinement_kernels.boundary_since`) instead of a scan of
    # every row
    b = RK.boundary(ptr, idx, part) if candidates is None else RK.boundary_among(ptr, idx, part,
                                                                               candidates)
    before = part.copy()

    def since():
        nonlocal b
        b = RK.boundary_since(ptr, idx, part, before, b)
        before[:] = part
        return b

    moves, _ = RK.greedy_refine(*args, load, maxload, _boundary_order(level, part, rng, b),
                               REFINE_PASSES)
    fixed = 0
    if repair and (load > maxload).any():
        fixed = RK.repair_balance(*args, load, maxload, rng.permutation(level.n))
        more, _ = RK.greedy_refine(*args, load, maxload,
                                  _boundary_order(level, part, rng, since()), REFINE_PASSES)
        moves += more
    if refiner == "jet" and not (load > maxload).any():
        key = (CK.vertex_keys(level.n, int(rng.integers(1 << 62))) >> np.uint64(1)).astype(
            np.int64)
        ops = _HostJet(level, part, maxload, key)
        moves += jet_loop(ops, level.n, maxload, rng, JET_C4_FINEST if finest else JET_C4)
        load[:] = ops.load
        more, _ = RK.greedy_refine(*args, load, maxload, _boundary_order(level, part, rng),
                                  REFINE_PASSES)
        return moves + more, fixed, None
    if refiner == "fm" and FM_BUDGET > 0 and not (load > maxload).any():  # keeps bounds
        order = _boundary_order(level, part, rng, since())
        budget = int(FM_BUDGET * len(level.indices))
        fm, _, _ = RK.kway_fm(*args, load, maxload, order, FM_LIMIT, FM_HUB, budget,
                             seed_degree(level.indptr, order, FM_SEED_SHARE * budget))
        moves += fm
    # the finest level's boundary has no use after it
    return moves, fixed, None if finest else since()
