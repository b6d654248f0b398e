"""Multilevel edge-cut graph partitioning (seed 004 Ch. 5), CPU twin.

``multilevel_partition(graph, k, device="cpu", imbalance=0.03, seed=0, targets=None)``
coarsens by heavy-edge matching and contraction (`coarsening`), partitions the
coarsest graph by recursive bisection (`initial`), and projects the partition
back level by level with greedy k-way refinement, balance repair and a refiner
that takes losing moves, k-way FM or Jet (`refinement`, `jet_kernels`). Every
part ``b`` ends within ``(1 + imbalance) * W * t_b`` (``t_b`` its target
fraction) unless one vertex alone is heavier than the room left. The phases are
chosen per device by `phases`: on the GPU (`gpu`), matching, contraction and
refinement run on the device and the coarsest graph is partitioned on the host;
``"auto"`` picks the GPU when one is available. See docs/runtime.md, "Multilevel
partitioning".
"""

import math
import time
from dataclasses import dataclass, field
from functools import partial

import numpy as np

from vcut_base.arrays import shares
from vcut_base.errors import InputError

from ..gpu import resolve_device
from . import refinement_kernels as RK
from .coarsening import check_level_memory, coarsen
from .graph import DeviceLevel, Level, csr_from_edges, level_from
from .initial import initial_partition
from .refinement import REFINERS, refine

__all__ = ["multilevel_partition", "MultilevelResult", "Level", "DeviceLevel", "csr_from_edges",
           "level_from", "phases", "DEVICE_REFINERS"]


@dataclass(frozen=True, eq=False)
class MultilevelResult:
    """A k-way vertex partition and how it was found."""

    part: np.ndarray  # int64, one part per vertex
    k: int
    cut: int  # summed weight of the edges between parts (integer weights, see graph.py)
    loads: np.ndarray  # vertex weight per part
    targets: np.ndarray  # each part's target weight W * t_b
    balance: float  # max over parts of load / target (1.0 = perfect)
    imbalance: float
    seed: int
    device: str
    refiner: str  # fm, jet or greedy
    level_sizes: list  # (vertices, edges) per level, finest first
    scheme: str = "kway"  # kway or rb (recursive bisection of the whole graph)
    seconds: dict = field(default_factory=dict)  # coarsening, initial, refinement, total
    moves: dict = field(default_factory=dict)  # refinement and repair moves
    gpu: dict = field(default_factory=dict)  # the GPU run's counters (empty on the CPU)


def phases(device):
    """The phase implementations for ``device`` (the factory the partitioner uses):
    ``(coarsen, initial, refine)`` on the CPU; on the GPU ``(coarsen_on_device,
    initial, refine_on_device)``, where the initial partitioning is the CPU twin's on
    the downloaded coarsest graph."""
    if device == "cpu":
        return coarsen, initial_partition, refine
    if device == "gpu":
        from .gpu import coarsen_on_device, refine_on_device  # lazy: numba.cuda is optional

        return coarsen_on_device, initial_partition, refine_on_device
    raise InputError(f"unknown device {device!r}; use cpu, gpu or auto")


def _resolve(device):
    return resolve_device(device)


def _fractions(targets, k):
    if targets is None:
        return np.full(k, 1.0 / k)
    t = np.asarray(targets, dtype=np.float64)
    if t.shape != (k,) or not np.isfinite(t).all() or (t <= 0).any():
        raise InputError(f"targets must be {k} positive numbers (one per part)")
    fractions = shares(t)
    if not (fractions > 0).all():  # a fraction 0 made the bounds 0 and the balance NaN
        b = int(np.flatnonzero(~(fractions > 0))[0])
        raise InputError(f"target {t[b]:g} of part {b} is too small next to the largest, "
                         f"{t.max():g}: its fraction underflows to 0; give targets within a "
                         "factor of 1e300 of each other")
    return fractions


#: Initial partitions tried on the coarsest graph (each refined; the lowest cut kept).
INITIAL_TRIES = 1


def _coarse_bound(maxload, target_w, heaviest):
    """A coarse level's bound: room for one more coarse vertex (``heaviest``: the level's
    largest vertex weight), so the final bound can be met."""
    return np.maximum(maxload, np.ceil(target_w).astype(np.int64) + int(heaviest))


def _best_initial(initial_fn, refine_fn, coarsest, fractions, imbalance, rng, bound):
    best, best_key = None, None
    for _ in range(INITIAL_TRIES):
        part = initial_fn(coarsest, fractions, imbalance, rng)
        refine_fn(coarsest, part, bound, rng, repair=True)
        loads = RK.part_loads(part, coarsest.vwgt, len(bound))
        key = (int(np.maximum(loads - bound, 0).sum()),
               int(RK.edge_cut(coarsest.indptr, coarsest.indices, coarsest.ewgt, part)))
        if best_key is None or key < best_key:
            best, best_key = part, key
    return best


def _on_device(level, k, fractions, imbalance, seed, rng, maxload, target_w, t0, refiner):
    from .gpu import partition_on_device  # lazy: numba.cuda is optional

    t1 = time.perf_counter()

    def bound(heaviest):
        return _coarse_bound(maxload, target_w, heaviest)

    def initial(coarsest, b):
        return _best_initial(initial_partition, refine, coarsest, fractions, imbalance, rng, b)

    part, loads, cut, sizes, seconds, stats = partition_on_device(
        level, k, fractions, maxload, bound, initial, int(seed), rng, jet=refiner == "jet")
    seconds = {"read": t1 - t0, **seconds}
    seconds["total"] = time.perf_counter() - t0
    return MultilevelResult(
        part=part, k=k, cut=cut, loads=loads, targets=target_w,
        balance=float((loads / target_w).max()), imbalance=float(imbalance), seed=int(seed),
        device="gpu", refiner=refiner, level_sizes=sizes, seconds=seconds,
        moves={"refinement": stats["moves"] + stats["subset_moves"],
               "repair": stats["repair_moves"]},
        gpu=stats)


#: each device's refiners, its default first
DEVICE_REFINERS = {"cpu": REFINERS, "gpu": ("jet", "greedy")}
#: multilevel k-way (the default), or recursive bisection of the whole graph (METIS's
#: ``-ptype=rb``; each bisection multilevel, then the k-way refinement on the graph)
SCHEMES = ("kway", "rb")


def multilevel_partition(graph, k, device="cpu", imbalance=0.03, seed=0, targets=None,
                         refiner=None, scheme="kway"):
    """Partition the vertices of ``graph`` into ``k`` parts of balanced weight, minimising cut.

    Multilevel edge-cut partitioning (see the module docstring): heavy-edge
    matching and contraction down to a small graph, recursive bisection of
    it, then projection back level by level with greedy k-way refinement,
    balance repair and a refiner. Every part ``b`` ends within ``(1 +
    imbalance) * W * t_b`` (``W`` the total vertex weight, ``t_b`` the part's
    target fraction) unless one vertex alone is heavier than the room left.
    The graph is taken as undirected; weights are made integers as METIS has
    them (`runtime.multilevel.graph`). Deterministic for a given ``seed`` and
    device.

    Parameters
    ----------
    graph : ir_graph.Graph, scipy sparse matrix, tuple, or DeviceLevel
        An `ir_graph.Graph` (its node weights, if any, as vertex weights), a
        square sparse adjacency matrix, ``(indptr, indices[, ew[, vw]])`` in
        symmetric CSR form, or a `gpu.DeviceLevel` already on the device
        (positive vertex weights).
    k : int
        Number of parts, ``2 <= k <=`` the number of vertices.
    device : {"cpu", "gpu", "auto"}, default "cpu"
        Where it runs; ``auto`` takes the GPU when one is usable.
    imbalance : float, default 0.03
        Each part may hold ``(1 + imbalance)`` times its target weight (> 0).
    seed : int, default 0
        Every random choice (matching ties, start vertices, visit orders); >= 0.
    targets : sequence of k positive numbers, optional
        Relative part sizes (heterogeneous units); equal by default.
    refiner : {"fm", "jet", "greedy"}, optional
        What follows each level's greedy moves: k-way FM (the CPU's default), Jet
        (the GPU's default; on the CPU slower than FM and better on power-law graphs)
        or nothing. FM runs on the CPU only.
    scheme : {"kway", "rb"}, default "kway"
        Multilevel k-way (coarsen the graph, partition the coarsest, refine on the way
        back), or recursive bisection of the whole graph, each bisection multilevel, then
        the refiner on the graph (METIS's ``-ptype=rb``; CPU only): about 2.5 x the time,
        better on RMAT-like graphs (rmat18: 0.49 x METIS's cut at k = 8 against 0.59 x)
        and power-law graphs (0.97 x against 1.04 x), worse on meshes (1.04 x, 0.97 x).
        Where the bisections leave a part over its bound that no move repairs (tight
        bounds on a few heavy vertices), the k-way result is returned when it is closer
        to the bounds, with ``scheme="kway"``.

    Returns
    -------
    MultilevelResult
        ``part`` (int64, the part of each vertex), ``cut`` (the summed integer
        weight of the edges between parts), ``loads`` (vertex weight per
        part), ``targets`` (each part's target weight), ``balance`` (the
        largest load over its target; 1.0 is perfect), the ``refiner`` and
        ``scheme`` used, ``level_sizes`` (vertices and edges per level,
        finest first) and ``seconds`` per phase.

    Raises
    ------
    InputError
        Bad k, imbalance, seed, targets, weights, refiner, scheme or graph;
        ``device="gpu"`` without a usable GPU, or a graph its memory cannot
        hold.

    Examples
    --------
    Two triangles of heavy edges joined by one light edge:

    >>> import numpy as np
    >>> from ir_graph import Graph
    >>> from runtime import multilevel_partition
    >>> g = Graph(n=6, src=np.array([0, 0, 1, 3, 3, 4, 2]), dst=np.array([1, 2, 2, 4, 5, 5, 3]),
    ...           weight=np.array([4.0, 4, 4, 4, 4, 4, 1]))
    >>> r = multilevel_partition(g, 2)
    >>> r.cut, r.loads.tolist(), r.balance
    (1, [3, 3], 1.0)
    >>> len(set(r.part[:3].tolist())), len(set(r.part[3:].tolist())), bool(r.part[0] != r.part[3])
    (1, 1, True)

    A 4 x 4 grid in four parts, and in parts of relative sizes 1 : 3:

    >>> from runtime.generators import grid
    >>> r = multilevel_partition(grid(4, 4), 4, seed=1)
    >>> len(r.part), int(r.part.max()) < 4, r.loads.tolist(), r.cut
    (16, True, [4, 4, 4, 4], 8)
    >>> multilevel_partition(grid(4, 4), 2, targets=[1, 3]).loads.tolist()
    [4, 12]
    >>> multilevel_partition(g, 7)
    Traceback (most recent call last):
        ...
    vcut_base.errors.InputError: k must be an integer in [2, 6] (the number of vertices), got 7
    """
    if scheme not in SCHEMES:
        raise InputError(f"scheme must be one of {', '.join(SCHEMES)}, got {scheme!r}")
    # recursive bisection runs on the CPU: "auto" takes it without probing for a GPU
    dev = "cpu" if scheme == "rb" and device == "auto" else _resolve(device)
    coarsen_fn, initial_fn, refine_fn = phases(dev)
    if not (isinstance(imbalance, (int, float)) and math.isfinite(imbalance) and imbalance > 0):
        raise InputError(f"imbalance must be a number > 0 (0.03 = 3 %), got {imbalance!r}")
    if int(seed) != seed or seed < 0:
        raise InputError(f"seed must be an integer >= 0, got {seed!r}")
    if scheme == "rb" and dev == "gpu":
        raise InputError("scheme 'rb' (recursive bisection) runs on the CPU; use device "
                         "'cpu', or scheme 'kway' on the GPU")
    refiner = DEVICE_REFINERS[dev][0] if refiner is None else refiner
    if refiner not in DEVICE_REFINERS[dev]:
        raise InputError(f"refiner must be one of {', '.join(DEVICE_REFINERS[dev])} on the "
                         f"{dev.upper()}, got {refiner!r}")
    t0 = time.perf_counter()
    if isinstance(graph, DeviceLevel) and dev == "cpu":
        graph = graph.host()
    level = graph if isinstance(graph, (Level, DeviceLevel)) else level_from(graph)
    if int(k) != k or k < 2 or k > level.n:
        raise InputError(f"k must be an integer in [2, {level.n}] (the number of vertices), "
                         f"got {k}")
    k = int(k)
    fractions = _fractions(targets, k)
    rng = np.random.default_rng(int(seed))
    total = level.total if isinstance(level, DeviceLevel) else int(level.vwgt.sum())
    if total == 0:
        level = Level(level.indptr, level.indices, level.ewgt, np.ones(level.n, np.int64))
        total = level.n
    target_w = total * fractions
    with np.errstate(over="ignore"):
        maxload = np.maximum(np.floor((1.0 + imbalance) * target_w), np.ceil(target_w))
    # no part needs room for more than the whole weight: a larger bound (a huge imbalance)
    # would not fit int64
    maxload = np.minimum(maxload, total).astype(np.int64)

    if dev == "gpu":
        return _on_device(level, k, fractions, imbalance, seed, rng, maxload, target_w, t0,
                          refiner)
    check_level_memory(level, first=True)  # the first contraction, before anything runs
    t1 = time.perf_counter()
    if scheme == "rb":  # the bisections coarsen their own subgraphs (seconds["initial"])
        levels, maps = [level], []
        t2 = time.perf_counter()
        part = initial_fn(level, fractions, imbalance, rng)
    else:
        levels, maps = coarsen_fn(level, k, int(seed))
        t2 = time.perf_counter()
        part = _best_initial(initial_fn, partial(refine_fn, refiner=refiner), levels[-1],
                             fractions, imbalance, rng,
                             _coarse_bound(maxload, target_w, levels[-1].vwgt.max()))
    t3 = time.perf_counter()
    moves = repairs = 0
    edge = cand = None  # the last level's boundary; who can be on this one's
    for i in range(len(levels) - 1, -1, -1):
        if i < len(levels) - 1:
            part = RK.project(part, maps[i])
            if edge is not None:
                cand = RK.projected_candidates(maps[i], edge, levels[i + 1].n)
        lv = levels[i]
        # coarse levels: room for one more coarse vertex, so that the bound can be met later
        bound = maxload if i == 0 else _coarse_bound(maxload, target_w, lv.vwgt.max())
        mv, fx, edge = refine_fn(lv, part, bound, rng, repair=True, finest=i == 0,
                                 refiner=refiner, candidates=cand)
        moves += mv
        repairs += fx
    t4 = time.perf_counter()
    loads = RK.part_loads(part, level.vwgt, k)
    if scheme == "rb" and (loads > maxload).any():
        # the bisections' integer sides can leave a part over its bound that no single
        # move repairs (tight bounds, heavy vertices): the k-way scheme's result then,
        # when it is closer to the bounds (its scheme says so)
        kway = multilevel_partition(level, k, device=dev, imbalance=imbalance, seed=seed,
                                    targets=targets, refiner=refiner)
        if np.maximum(kway.loads - maxload, 0).sum() < np.maximum(loads - maxload, 0).sum():
            return kway
    cut = int(RK.edge_cut(level.indptr, level.indices, level.ewgt, part))
    return MultilevelResult(
        part=part, k=k, cut=cut, loads=loads, targets=target_w,
        balance=float((loads / target_w).max()), imbalance=float(imbalance), seed=int(seed),
        device=dev, refiner=refiner, level_sizes=[(lv.n, lv.m) for lv in levels], scheme=scheme,
        seconds={"read": t1 - t0, "coarsening": t2 - t1, "initial": t3 - t2,
                 "refinement": t4 - t3, "total": t4 - t0},
        moves={"refinement": int(moves), "repair": int(repairs)},
    )
