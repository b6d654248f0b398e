"""The multilevel partitioner's GPU phases (seed 004 Ch. 5; kernels in `*_kernels_gpu`).

Every level lives on the device, in a region (arena) allocator: the levels'
arrays in one region, each level's scratch in another that is reset when the
next level starts. Per level:

* **matching** -- rounds of proposals: every free vertex proposes to its
  free neighbour of heaviest edge (ties by seeded vertex keys) within the
  vertex-weight cap (a vertex of more than `coarsening_kernels_gpu.HEAVY_DEGREE`
  neighbours by a block of threads, a reduction in the same order); two
  vertices that propose to each other are matched (the heaviest free edge
  is always such a pair); then the
  cross-examination: a free vertex nobody proposes to offers itself to its
  target by an ``atomicMax`` of the packed word (weight << 32 | id), and each
  target takes its best offer (the offerer proposes to it alone and nobody
  proposes to the offerer, so no pair conflicts). Losers and vertices whose
  target was taken propose again in the next round, up to `MATCH_ROUNDS`
  rounds or a round without a match (one host read per round). Proposals
  can only form in-trees ending in mutual pairs (a longer cycle would need
  ever heavier edges around it), so every round with a free edge matches.
  Vertices still free then pair two hops apart (the leaves of a star, when
  more than a tenth are left: one thread per centre walks its row) and
  islands pair in id order (a scan).
* **Cmap** -- leaders ``v <= M[v]`` flagged, inclusive scan, ``Cmap[v]`` the
  rank of ``min(v, M[v])``.
* **contraction** -- neighbour-count bounds (both fine degrees) and a scan
  give each coarse vertex a segment; one thread per coarse vertex writes the
  relabelled neighbours without self-loops, heap-sorts its segment, merges
  repeats by adding weights (a segment of more than `coarsening_kernels_gpu.HEAVY_DEGREE`
  entries: a block, with a bitonic sort); a scan of the real counts gives the
  coarse CSR (rows sorted by neighbour).
* the stop rule of the CPU twin (`coarsening.coarsen_to` or a shrink above
  `coarsening.SHRINK_STOP`).
* **initial partitioning** on the host: the coarsest graph (at most
  max(n / (20 log2 k), 30 k) vertices, or what a stalled coarsening left) is
  downloaded and partitioned by the CPU twin's recursive bisection.
* **refinement**, per level after the projection: every boundary vertex
  finds its best move with a positive gain into a part with room, or else
  one of gain 0 into a part that stays lighter than its own (`ZERO_MOVES`;
  loads of the pass start; the first `refinement_kernels_gpu.MAXP` neighbour parts);
  a candidate is selected when no neighbour is a candidate of higher
  priority (gain, key, id), so the selected moves are independent and their
  gains add up exactly; the moves into a part whose requests all fit are
  committed (a vertex of more than `coarsening_kernels_gpu.HEAVY_DEGREE` neighbours is
  evaluated by a block of threads over a shared table of the k parts, when k is
  at most `coarsening_kernels_gpu.HEAVY_PARTS`: one thread would walk a hub's row alone,
  latency-bound, in every pass); when none was committed and some part had
  more requests than room, the source's subset step: the `TOPK` best saturated requests, all
  2^TOPK subsets checked for the parts' room on the host, the valid one of
  highest gain committed. Passes repeat until one moves nothing (or
  `REFINE_PASSES`); the cut never rises and no bound that held breaks.
* **balance repair** on the host: a part above its bound after a
  projection (the coarse levels allow one coarse vertex more) is repaired by
  the CPU twin's kernel on the downloaded partition.
* **Jet** (``jet``, the default): before the independent moves, Jet rounds and
  rebalancing rounds (`refinement.jet_loop` driving `_DeviceJet`; the rules in `jet_kernels`,
  compiled for the device from the CPU's source), which take losing moves the passes
  cannot and keep the best balanced partition seen.

Deterministic for a seed: every choice is a maximum over a total order, and
every atomic is an addition, a maximum of distinct words, or a slot in a
buffer whose order is sorted away afterwards, so the threads' order changes
nothing. See docs/runtime.md, "Multilevel partitioning".
"""

import time
import warnings

import numpy as np

from vcut_base.errors import InputError

from .. import config as launch_config
from .. import primitives_gpu as PG
from ..gpu import grid_blocks, device_memory, require_gpu, resident_threads
from ..primitives_gpu import inclusive_scan
from ..traversal import format_bytes
from . import coarsening_kernels_gpu as CG
from . import jet_kernels as J
from . import jet_kernels_gpu as JG
from . import refinement
from . import refinement_kernels as RK
from . import refinement_kernels_gpu as RG
from . import split_graph_kernels_gpu as SG
from .coarsening import coarsen_to, contract_levels, vertex_cap
from .graph import DeviceLevel  # noqa: F401 (part of this module's API)

__all__ = ["partition_on_device", "split_graph_on_device", "plan_bytes", "Arena", "DeviceLevel",
           "MATCH_ROUNDS", "REFINE_PASSES", "TOPK"]

#: proposal rounds per level (each also runs the cross-examination)
MATCH_ROUNDS = 16
#: refinement passes per level (each commits independent moves: the cut never rises)
REFINE_PASSES = 32
#: also moves of gain 0 into a part that stays lighter than the vertex's own
ZERO_MOVES = True
#: threads that share a vertex's edges when the cut is counted (`_cut`; Jet counts it after
#: every round): 1, a thread per vertex (a launch of n threads); a power of two above 1
#: (at most the block), groups of that many lanes a vertex on a grid of at most the
#: device's resident threads. On an H200 the count was half of Jet's kernel time on the
#: power-law graphs with a thread per vertex, and 32 lanes a vertex made it 1.6-1.9x slower
#: (docs/notes/gpu-h200.md): most rows are shorter than the group, whose idle lanes cost more
#: than the hubs' long loops (`bash bench/gpu_session.sh partition` compares them).
CUT_WIDTH = 1
#: the counters of a run: matching rounds; independent moves' passes, moves, gain, subset
#: moves; host balance repairs and their moves; heavy vertices; Jet rounds, rebalancing
#: rounds, host repairs within Jet, Jet's moves (rebalancing included) and launches
STATS = ("match_rounds", "passes", "moves", "gain", "subset_moves", "repair_moves",
         "host_repairs", "heavy_vertices", "jet_rounds", "jet_rebalances", "jet_repairs",
         "jet_moves", "jet_launches")
#: saturated requests the subset step examines at once (2**TOPK subsets; the source: 11)
TOPK = 11
#: int64 entries of a region's first chunk; a new chunk doubles the last one, up to
#: MAX_GROWTH entries (64 MiB), or is as large as the request
CHUNK = 1 << 16
MAX_GROWTH = 1 << 23


class Arena:
    """A region allocator over int64 device chunks: `take` hands out views in order,
    `reset` forgets them all (the chunks stay for the next use)."""

    def __init__(self, cuda, what):
        self._cuda = cuda
        self._what = what
        self._chunks = []  # device arrays
        self._at = 0  # chunk in use
        self._used = 0  # entries taken from it

    def take(self, count):
        count = max(int(count), 1)
        while self._at < len(self._chunks):
            chunk = self._chunks[self._at]
            if self._used + count <= len(chunk):
                view = chunk[self._used:self._used + count]
                self._used += count
                return view
            self._at += 1
            self._used = 0
        last = len(self._chunks[-1]) if self._chunks else 0
        size = max(count, CHUNK, min(2 * last, MAX_GROWTH))  # no doubling of a huge chunk
        try:
            self._chunks.append(self._cuda.device_array(size, dtype=np.int64))
        except Exception as exc:  # numba's out-of-memory error
            raise InputError(f"the GPU ran out of memory for the {self._what} "
                             f"({_gpu_bytes(8 * size)} more after {_gpu_bytes(self.nbytes)}): "
                             f"{type(exc).__name__}; use --device cpu") from None
        self._at = len(self._chunks) - 1
        self._used = count
        return self._chunks[-1][:count]

    def reset(self):
        self._at = 0
        self._used = 0

    @property
    def nbytes(self):
        return 8 * sum(len(c) for c in self._chunks)


def _gpu_bytes(b):
    return format_bytes(b)


def plan_bytes(n, entries):
    """Device bytes planned for a graph of ``n`` vertices and ``entries`` CSR entries (each
    undirected edge twice): the finest level, as much again for the coarser ones, the
    contraction's segments (16 bytes per entry) and 16 per-vertex arrays."""
    level = 8 * (n + 1) + 16 * entries + 8 * n
    return 2 * level + 16 * entries + 16 * 8 * n


#: when a dict, `_run` synchronises after each launch and adds its seconds and count
#: under the kernel's name (``{name: [seconds, launches]}``; bench_multilevel --profile)
PROFILE = None


def _run(kernel, count, *args):
    _launch(kernel, grid_blocks(count), *args)


def _launch(kernel, config, *args):
    if PROFILE is None:
        kernel[config](*args)
        return
    from numba import cuda  # lazy: numba.cuda is optional (only when profiling)

    cuda.synchronize()
    t = time.perf_counter()
    kernel[config](*args)
    cuda.synchronize()
    rec = PROFILE.setdefault(kernel.py_func.__name__, [0.0, 0])
    rec[0] += time.perf_counter() - t
    rec[1] += 1


def _cut(lv, part, out):
    """Add twice the cut of device partition ``part`` of ``lv`` to ``out[0]``
    (`refinement_kernels_gpu.cut_kernel`, `CUT_WIDTH` lanes a vertex)."""
    tpb = launch_config.THREADS_PER_BLOCK
    width = min(1 << (max(1, int(CUT_WIDTH)).bit_length() - 1), tpb & -tpb)  # divides tpb
    threads = lv.n if width == 1 else min(lv.n * width, resident_threads())
    _launch(RG.cut_kernel, grid_blocks(max(threads, 1)), lv.indptr, lv.indices, lv.ewgt, part,
            lv.n, width, out)


def heavy_vertices(cuda, work, lv, k=None):
    """``(threshold, ids, count)``: the vertices of ``lv`` of more than
    `coarsening_kernels_gpu.HEAVY_DEGREE` neighbours, which the matching and the refinement give
    a block each; threshold 0 (none) when there are none or ``k`` (the refinement's) is
    above `coarsening_kernels_gpu.HEAVY_PARTS`."""
    if (k is not None and k > CG.HEAVY_PARTS) or lv.entries <= CG.HEAVY_DEGREE:
        return 0, None, 0
    return _listed(cuda, work, RG.heavy_flags_kernel, lv.n, lv.indptr)


def _listed(cuda, work, flags_kernel, n, a):
    """``(threshold, ids, count)`` of the ``i < n`` that ``flags_kernel(a, n,
    HEAVY_DEGREE, flag)`` flags (threshold 0 when none is)."""
    flag, rank = work.take(n), work.take(n)
    _run(flags_kernel, n, a, n, CG.HEAVY_DEGREE, flag)
    inclusive_scan(cuda, flag, n, out=rank)
    count = _last(rank, n)
    if count == 0:
        return 0, None, 0
    ids = work.take(count)
    _run(CG.island_scatter_kernel, n, flag, rank, n, ids)
    return CG.HEAVY_DEGREE, ids, count


def _keys(work, n, seed):
    """Seeded vertex keys on the device (the simulator's numpy scalars warn about the
    hash's intended uint64 wrap-around: silenced)."""
    key = work.take(n)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        _run(CG.keys_kernel, n, n, seed, key)
    return key


def _fill(a, count, value):
    _run(PG.fill_kernel, count, a, count, value)


def _last(d, count):
    """The ``count - 1``-th entry of device array ``d`` (one host read)."""
    return int(d[count - 1:count].copy_to_host()[0]) if count else 0


def _upload(cuda, arena, a):
    d = arena.take(len(a))
    if len(a):
        d[:len(a)].copy_to_device(np.ascontiguousarray(a, dtype=np.int64))
    return d


def match_on_device(cuda, work, lv, key, max_vw, stats):
    """The matching of ``lv`` (device ``match``: mate or itself)."""
    n = lv.n
    match, prop, propw, recv, best, made = (work.take(c) for c in (n, n, n, n, n, 1))
    _fill(match, n, -1)
    _fill(prop, n, -1)
    heavy, hv, nh = heavy_vertices(cuda, work, lv)
    rounds = 0
    for r in range(MATCH_ROUNDS):  # 5 launches and one read a round (fills folded in)
        rounds += 1
        _run(CG.propose_kernel, n, lv.indptr, lv.indices, lv.ewgt, lv.vwgt, match, key, max_vw,
             prop, propw, n, 1 if r == 0 else 0, heavy, made)
        if nh:
            _launch(CG.propose_heavy_kernel, (nh, CG.HEAVY_TPB), lv.indptr, lv.indices, lv.ewgt,
                    lv.vwgt, match, key, max_vw, prop, propw, hv, nh, 1 if r == 0 else 0)
        _run(CG.handshake_kernel, n, prop, match, n, made, recv, best)
        _run(CG.received_kernel, n, prop, match, n, recv)
        _run(CG.offer_kernel, n, prop, propw, match, recv, n, best)
        _run(CG.accept_kernel, n, best, match, n, made)
        if _last(made, 1) == 0:
            break
    stats["match_rounds"] += rounds
    heavy, hasleaf, left = recv, best, made  # reused
    _fill(hasleaf, n, 0)
    _fill(left, 1, 0)
    _run(CG.heavy_kernel, n, lv.indptr, lv.indices, lv.ewgt, match, n, heavy, hasleaf, left)
    if _last(left, 1) > n // 10:
        _run(CG.two_hop_kernel, n, lv.indptr, lv.indices, lv.vwgt, match, heavy, hasleaf,
             max_vw, n)
    flag, pos = prop, propw  # reused
    _run(CG.island_flags_kernel, n, lv.indptr, match, n, flag)
    inclusive_scan(cuda, flag, n, out=flag)
    islands = _last(flag, n)
    if islands > 1:
        rank = flag
        _run(CG.island_flags_kernel, n, lv.indptr, match, n, heavy)
        _run(CG.island_scatter_kernel, n, heavy, rank, n, pos)
        _run(CG.island_pair_kernel, islands // 2, pos, islands, lv.vwgt, max_vw, match)
    _run(CG.finish_match_kernel, n, match, n)
    return match


def contract_on_device(cuda, keep, work, lv, match):
    """``(coarse DeviceLevel, cmap)``: the level's arrays from ``keep``, scratch from
    ``work``."""
    n = lv.n
    flag = work.take(n)
    _run(CG.leader_flags_kernel, n, match, n, flag)
    inclusive_scan(cuda, flag, n, out=flag)
    nc = _last(flag, n)
    cmap = keep.take(n)
    rep, cnt, cvw = work.take(nc), work.take(nc), keep.take(nc)
    _run(CG.cmap_kernel, n, match, flag, n, cmap, rep)
    _run(CG.coarse_bounds_kernel, nc, lv.indptr, lv.vwgt, match, rep, nc, cnt, cvw)
    bscan = inclusive_scan(cuda, cnt, nc, out=work.take(nc))
    tidx, tw, real = work.take(lv.entries), work.take(lv.entries), work.take(nc)
    heavy, hv, nh = _listed(cuda, work, CG.count_flags_kernel, nc, cnt)
    _run(CG.contract_rows_kernel, nc, lv.indptr, lv.indices, lv.ewgt, match, cmap, rep, bscan,
         cnt, nc, heavy, tidx, tw, real)
    if nh:
        _launch(CG.contract_rows_heavy_kernel, (nh, CG.HEAVY_TPB), lv.indptr, lv.indices, lv.ewgt,
                match, cmap, rep, bscan, cnt, hv, nh, tidx, tw, real)
    rscan = inclusive_scan(cuda, real, nc, out=work.take(nc))
    entries = _last(rscan, nc)
    cptr, cidx, cw = keep.take(nc + 1), keep.take(entries), keep.take(entries)
    _run(CG.contract_compact_kernel, nc, bscan, cnt, rscan, real, tidx, tw, nc, cptr, cidx, cw)
    return DeviceLevel(cptr, cidx, cw, cvw, nc, entries), cmap


def coarsen_on_device(cuda, keep, work, finest, k, seed, stats):
    """``(levels, maps)`` as `coarsening.coarsen` gives them, on the device."""
    stop = coarsen_to(finest.n, k)
    max_vw = vertex_cap(finest.total, stop)

    def step(fine, i):
        work.reset()
        key = _keys(work, fine.n, seed + i)
        match = match_on_device(cuda, work, fine, key, max_vw, stats)
        return contract_on_device(cuda, keep, work, fine, match)

    return contract_levels(finest, stop, step)


def _subset_commit(cuda, work, lv, part, load, maxload, sat, nsat, cto, cgain, stats):
    """The source's subset step over the `TOPK` best saturated requests; whether it moved."""
    ids_d = sat[:nsat]
    to_d, g_d, w_d = work.take(nsat), work.take(nsat), work.take(nsat)
    _run(RG.gather_kernel, nsat, ids_d, nsat, cto, cgain, lv.vwgt, to_d, g_d, w_d)
    ids = ids_d.copy_to_host()
    to, g, w = to_d.copy_to_host()[:nsat], g_d.copy_to_host()[:nsat], w_d.copy_to_host()[:nsat]
    top = np.lexsort((ids, -g))[:TOPK]
    ids, to, g, w = ids[top], to[top], g[top], w[top]
    room = maxload - load.copy_to_host()[:len(maxload)]
    t = len(top)
    masks = np.arange(1, 1 << t, dtype=np.int64)
    bits = (masks[:, None] >> np.arange(t)) & 1
    valid = np.ones(len(masks), dtype=bool)
    for d in np.unique(to):
        valid &= bits @ np.where(to == d, w, 0) <= room[d]
    if not valid.any():
        return False
    gains = np.where(valid, bits @ g, -1)
    pick = bits[int(np.argmax(gains))].astype(bool)  # the first of the highest gain
    chosen = _upload(cuda, work, ids[pick])
    tos = _upload(cuda, work, to[pick])
    _run(RG.set_parts_kernel, int(pick.sum()), chosen, tos, int(pick.sum()), part, lv.vwgt, load)
    stats["subset_moves"] += int(pick.sum())
    stats["gain"] += int(g[pick].sum())
    return True


def _host_repair(lv, part, load, maxload, order, stats):
    """The CPU twin's balance repair of the device partition (download, repair, upload)."""
    k = len(maxload)
    h = lv.host()
    p = part.copy_to_host()[:lv.n]
    loads = load.copy_to_host()[:k]
    moves = int(RK.repair_balance(h.indptr, h.indices, h.ewgt, h.vwgt, p, loads, maxload, order))
    stats["repair_moves"] += moves
    stats["host_repairs"] += 1
    part[:lv.n].copy_to_device(p)
    load[:k].copy_to_device(loads)
    return moves


class _DeviceJet:
    """`refinement.jet_loop`'s operations on a device level: a round and its status are
    5 launches and one read (loads, cut and moves in one ``status`` array), a
    rebalancing round and its status 7 launches and three reads (the loss buckets' and
    the cut-off bucket's histograms, k rows each, then the status); the same parts as
    `refinement._HostJet`."""

    def __init__(self, cuda, work, lv, part, status, d_max, maxload, key, stats, total):
        n, k = lv.n, len(maxload)
        self.cuda, self.lv, self.part, self.status_d = cuda, lv, part, status
        self.d_max, self.maxload, self.key, self.stats, self.k = d_max, maxload, key, stats, k
        self.load = status[:k]
        self.lock, self.dest, self.gain, self.best = (work.take(n) for _ in range(4))
        self.hist, self.hist2 = work.take(k * J.NB), work.take(k * J.SUB)
        self.cuts = work.take(3 * k)
        self.soft = refinement.soft_bounds(maxload, total)
        self.d_soft = _upload(cuda, work, self.soft)
        _fill(self.lock, n, 0)
        stats["jet_launches"] += 1

    def status(self):
        lv, k = self.lv, self.k
        _fill(self.status_d[k:], 1, 0)
        _cut(lv, self.part, self.status_d[k:])
        self.stats["jet_launches"] += 2
        h = self.status_d.copy_to_host()[:k + 2]
        return int(h[k]) // 2, h[:k], int(h[k + 1])

    def round(self, c4, heavy):
        lv, k = self.lv, self.k
        _run(JG.jet_candidates_kernel, lv.n, lv.indptr, lv.indices, lv.ewgt, lv.vwgt,
             self.part, self.load, self.d_max, self.lock, heavy, c4, lv.n, self.dest, self.gain,
             self.status_d, k)
        _run(JG.jet_after_kernel, lv.n, lv.indptr, lv.indices, lv.ewgt, self.part, self.dest,
             self.gain, self.key, lv.n, self.lock)
        _run(JG.jet_apply_kernel, lv.n, self.lock, self.dest, self.part, lv.vwgt, self.load, lv.n,
             self.status_d[k + 1:])
        self.stats["jet_launches"] += 3

    def rebalance(self, heavy, load):
        lv, k = self.lv, self.k
        d_cut = self.cuts
        _fill(self.hist, k * J.NB, 0)
        _fill(self.hist2, k * J.SUB, 0)
        d_cut[2 * k:3 * k].copy_to_device(J.room_sums(load, self.soft))
        _run(JG.jet_evict_kernel, lv.n, lv.indptr, lv.indices, lv.ewgt, lv.vwgt, self.part,
             self.load, self.d_max, self.d_soft, heavy, d_cut[2 * k:3 * k], self.key, lv.n,
             self.dest, self.gain, self.hist, self.status_d, k)
        cut_b, left = J.cutoffs(self.hist.copy_to_host()[:k * J.NB], load - self.maxload, J.NB)
        d_cut[:k].copy_to_device(cut_b)
        _run(JG.jet_sub_kernel, lv.n, self.part, self.dest, self.gain, self.key, lv.vwgt,
             d_cut[:k], lv.n, self.hist2)
        cut_s, _ = J.cutoffs(self.hist2.copy_to_host()[:k * J.SUB], left, J.SUB)
        d_cut[k:2 * k].copy_to_device(cut_s)
        _run(JG.jet_shed_kernel, lv.n, self.part, self.dest, self.gain, self.key, lv.vwgt,
             d_cut[:k], d_cut[k:2 * k], self.load, lv.n, self.status_d[k + 1:])
        self.stats["jet_launches"] += 5

    def repair(self, order):
        return _host_repair(self.lv, self.part, self.load, self.maxload, order, self.stats)

    def save(self):
        _run(PG.copy_kernel, self.lv.n, self.part, self.lv.n, self.best)
        self.stats["jet_launches"] += 1

    def restore(self):
        n, k = self.lv.n, self.k
        self.stats["jet_launches"] += 3
        _run(PG.copy_kernel, n, self.best, n, self.part)
        _fill(self.load, k, 0)
        _run(RG.loads_kernel, n, self.part, self.lv.vwgt, n, self.load)


def refine_on_device(cuda, work, lv, part, maxload, key, rng, stats, c4=None, jet=True):
    """Refinement of the device partition ``part`` of ``lv`` within ``maxload`` (host
    array), balance repaired first on the host when a part is above its bound: with
    ``jet``, Jet (`refinement.jet_loop`, filter ratio ``c4`` quarters), then passes of
    independent positive and zero-gain moves."""
    n = lv.n
    k = len(maxload)
    d_max = _upload(cuda, work, maxload)
    status = work.take(k + 2)
    load = status[:k]
    _fill(load, k, 0)
    _run(RG.loads_kernel, n, part, lv.vwgt, n, load)
    loads = load.copy_to_host()[:k]
    if (loads > maxload).any():
        _host_repair(lv, part, load, maxload, rng.permutation(n).astype(np.int64), stats)
    if jet:
        ops = _DeviceJet(cuda, work, lv, part, status, d_max, maxload, key, stats,
                         int(loads.sum()))
        stats["jet_moves"] += refinement.jet_loop(ops, n, maxload, rng, c4, CG.HEAVY_DEGREE,
                                                  stats)
    cto, cgain, sel, acc, sat = (work.take(n) for _ in range(5))
    req, counters = work.take(k), work.take(3)
    heavy, hv, nh = heavy_vertices(cuda, work, lv, k)
    stats["heavy_vertices"] += nh
    for _ in range(REFINE_PASSES):  # 5 launches and one read a pass (fills folded in)
        stats["passes"] += 1
        _run(RG.best_move_kernel, max(n, k, 3), lv.indptr, lv.indices, lv.ewgt, lv.vwgt, part,
             load, d_max, n, int(ZERO_MOVES), heavy, cto, cgain, k, req, counters)
        if nh:
            _launch(RG.best_move_heavy_kernel, (nh, CG.HEAVY_TPB), lv.indptr, lv.indices, lv.ewgt,
                    lv.vwgt, part, load, d_max, k, int(ZERO_MOVES), hv, nh, cto, cgain)
        _run(RG.select_kernel, n, lv.indptr, lv.indices, cto, cgain, key, n, heavy, sel)
        if nh:
            _launch(RG.select_heavy_kernel, (nh, CG.HEAVY_TPB), lv.indptr, lv.indices, cto, cgain,
                    key, hv, nh, sel)
        _run(RG.request_kernel, n, sel, cto, lv.vwgt, n, req)
        _run(RG.commit_kernel, n, sel, cto, cgain, load, d_max, req, n, acc, counters, sat)
        _run(RG.apply_kernel, n, acc, cto, part, lv.vwgt, load, n)
        moved, gain, nsat = (int(x) for x in counters.copy_to_host()[:3])
        stats["moves"] += moved
        stats["gain"] += gain
        if moved == 0:
            if nsat == 0 or not _subset_commit(cuda, work, lv, part, load, maxload, sat, nsat,
                                               cto, cgain, stats):
                break


def partition_on_device(level, k, fractions, maxload, coarse_bound, initial, seed, rng,
                        jet=True):
    """The whole run on the device: ``(part, loads, cut, level_sizes, seconds, stats)``.

    ``level``: a host `Level` (uploaded) or a `DeviceLevel` already there (e.g. SPAC's
    split graph, `split_graph_on_device`). ``initial(coarsest host Level, bound) -> part``
    partitions the coarsest graph on the host; ``coarse_bound(heaviest vertex weight) ->
    bound`` gives a coarse level's bound.
    """
    cuda = require_gpu()
    on_device = isinstance(level, DeviceLevel)
    if not on_device:
        _check_memory(plan_bytes(level.n, len(level.indices)))
    stats = new_stats()
    keep = level.arena if on_device and level.arena is not None else Arena(cuda, "levels")
    work = Arena(cuda, "level scratch")
    t0 = time.perf_counter()
    finest = level if on_device else DeviceLevel(
        *(_upload(cuda, keep, a) for a in (level.indptr, level.indices, level.ewgt, level.vwgt)),
        level.n, len(level.indices), host=level)
    levels, maps = coarsen_on_device(cuda, keep, work, finest, k, int(seed), stats)
    cuda.synchronize()
    t1 = time.perf_counter()
    coarsest = levels[-1].host()
    part_h = initial(coarsest, coarse_bound(int(coarsest.vwgt.max())))
    t2 = time.perf_counter()
    part = _upload(cuda, keep, part_h)
    for i in range(len(levels) - 1, -1, -1):
        lv = levels[i]
        if i < len(levels) - 1:
            fine = keep.take(lv.n)
            _run(RG.project_kernel, lv.n, part, maps[i], lv.n, fine)
            part = fine
        work.reset()
        key = _keys(work, lv.n, int(rng.integers(1 << 62)))
        bound = maxload if i == 0 else coarse_bound(lv.heaviest())
        refine_on_device(cuda, work, lv, part, bound, key, rng, stats,
                         refinement.JET_C4_FINEST if i == 0 else refinement.JET_C4, jet)
    n = finest.n
    load, cut = work.take(k), work.take(1)
    _fill(load, k, 0)
    _fill(cut, 1, 0)
    _run(RG.loads_kernel, n, part, finest.vwgt, n, load)
    _cut(finest, part, cut)
    out = part.copy_to_host()[:n]
    loads = load.copy_to_host()[:k]
    twice = int(cut.copy_to_host()[0])
    t3 = time.perf_counter()
    stats["device_bytes"] = keep.nbytes + work.nbytes
    sizes = [(lv.n, lv.m) for lv in levels]
    return (out, loads, twice // 2, sizes,
            {"coarsening": t1 - t0, "initial": t2 - t1, "refinement": t3 - t2}, stats)


def new_stats():
    """The run's counters (`MultilevelResult.gpu`), all 0."""
    return dict.fromkeys(STATS, 0)


def _check_memory(need):
    have = device_memory()
    if need > have:
        raise InputError(f"the graph needs about {_gpu_bytes(need)} of GPU memory, "
                         f"{_gpu_bytes(have)} is free; use --device cpu")


def split_graph_on_device(src, dst, vwgt, n, cycles=True):
    """SPAC's transformed graph Ψ in its contracted form (`vcut.spac`), built on the
    device from the simple graph's edges ``(src, dst)`` and the clone weights ``vwgt``
    (one per edge): vertex ``e`` is edge ``e``, joined by weight-1 auxiliary edges to the
    edges before and after it around each end (edge order; the last and the first too
    at a vertex of degree >= 3 with ``cycles``). The same CSR as the host's
    `csr_from_edges` of `vcut.spac_kernels.split_pairs` (rows sorted by neighbour), as a
    `DeviceLevel` ready for `multilevel_partition`.

    The incidence lists come from a degree count, a scan, an atomic scatter and a heap
    sort of each vertex's segment (the order the threads ran in does not show); then one
    thread per incidence entry counts and writes its clone's neighbours around that end.
    """
    cuda = require_gpu()
    m = len(src)
    _check_memory(plan_bytes(m, 4 * m) + 8 * (7 * m + 3 * n))
    keep = Arena(cuda, "levels")
    work = Arena(cuda, "split graph scratch")
    d_src, d_dst = _upload(cuda, work, src), _upload(cuda, work, dst)
    deg, cursor = work.take(n), work.take(n)
    _fill(deg, n, 0)
    _fill(cursor, n, 0)
    _run(SG.incidence_count_kernel, m, d_src, d_dst, m, deg)
    scan = inclusive_scan(cuda, deg, n, out=work.take(n))
    inc, scratch = work.take(2 * m), work.take(2 * m)
    _run(SG.incidence_scatter_kernel, m, d_src, d_dst, m, scan, deg, cursor, inc)
    _run(SG.incidence_sort_kernel, n, scan, deg, n, inc, scratch)
    cnt0, cnt1, rows = work.take(m), work.take(m), work.take(m)
    _run(SG.split_counts_kernel, 2 * m, d_src, scan, deg, n, inc, 2 * m, int(cycles), cnt0, cnt1)
    _run(SG.sum_kernel, m, cnt0, cnt1, m, rows)
    indptr = keep.take(m + 1)
    _fill(indptr, 1, 0)
    rscan = inclusive_scan(cuda, rows, m, out=indptr[1:])
    entries = _last(rscan, m)
    adj, w = keep.take(entries), keep.take(entries)
    _run(SG.split_rows_kernel, 2 * m, d_src, scan, deg, n, inc, 2 * m, int(cycles), rscan, cnt0,
         cnt1, adj, w)
    _run(SG.sort_rows_kernel, m, rscan, cnt0, cnt1, m, adj)
    vw = _upload(cuda, keep, vwgt)
    return DeviceLevel(indptr, adj, w, vw, m, entries, total=int(np.sum(vwgt)), arena=keep)
