"""Host side of the GPU traversal: the device CSR, memory planning, the launch loops.

The loops mirror the CPU kernels of `runtime.traversal_kernels` one iteration at a
time: an input worklist on the device, kernels (`runtime.traversal_kernels_gpu`)
that fill the output worklist with block-aggregated pushes, the worklist size read
back after each iteration. Every array lives on the device for the whole traversal.
"""

import time

import numpy as np

from vcut_base.errors import InputError
from ir_graph.graph import index_dtype

from . import config
from . import traversal_kernels_gpu as G
from .gpu import grid_blocks, _loop_info, cooperative_blocks, require_gpu, resident_threads
from .primitives_gpu import inclusive_scan

__all__ = ["sssp_gpu", "bfs_do_gpu", "sssp_delta_gpu", "DeviceCSR", "block_tier", "resident_cap",
           "resident_blocks"]


def resident_blocks(coop):
    """Blocks of the device-resident loop's grid: the ``coop`` that can be resident at once,
    or fewer where `config.RESIDENT_BLOCKS` says so (at least one; 0 stays 0: no
    cooperative launch here)."""
    if coop <= 0 or config.RESIDENT_BLOCKS is None:
        return coop
    return max(1, min(coop, int(config.RESIDENT_BLOCKS)))


def block_tier(n, m):
    """``(threads, width, cap)`` of the one-block tier of the device-resident loop
    (`traversal_kernels_gpu.block_levels_kernel`) for a graph of ``n`` nodes and ``m`` adjacency
    entries: `config.BLOCK_THREADS` threads in groups of ``width`` lanes, the least power
    of two at or above the mean degree (at most 32 and the block), one group per
    frontier node; it keeps frontiers of up to `config.BLOCK_FRONTIER` nodes (None: 4
    nodes a group; 0: the tier is off, cap -1)."""
    threads = max(1, int(config.BLOCK_THREADS))
    width = 1
    while width < min(32, threads) and width < m / max(n, 1):
        width *= 2
    if config.BLOCK_FRONTIER is not None:
        cap = int(config.BLOCK_FRONTIER)
    else:
        cap = 4 * (threads // width)
    return threads, width, cap if cap > 0 else -1


def resident_cap(blocks):
    """Largest frontier the device-resident loop keeps (`config.SMALL_FRONTIER`, or by
    default one node per warp of the cooperative grid or `config.RESIDENT_FRONTIER`,
    whichever is larger: the warps loop over a larger frontier)."""
    if config.SMALL_FRONTIER is not None:
        return int(config.SMALL_FRONTIER)
    return max(1, blocks * config.THREADS_PER_BLOCK // 32, int(config.RESIDENT_FRONTIER))

class DeviceCSR:
    """A CSR graph on the device (``indptr``, ``indices``, ``weights``), with
    its COO sources (``src``, built on the device on first use: EP's edge
    worklist needs the source of every CSR position)."""

    def __init__(self, cuda, indptr, indices, weights=None):
        """``weights`` None: hop traversals (DO-BFS) upload no weights. Neighbour ids
        are 4-byte while the vertex ids fit (`index_dtype`), 8-byte beyond: the
        kernels are compiled for either; offsets stay 8-byte (edge counts pass 2^31
        long before vertex counts do)."""
        self._cuda = cuda
        self.n = len(indptr) - 1
        self.m = len(indices)
        idx = index_dtype(self.n)
        self.index_bytes = np.dtype(idx).itemsize
        self.indptr = cuda.to_device(np.ascontiguousarray(indptr, dtype=np.int64))
        self.indices = cuda.to_device(np.ascontiguousarray(indices, dtype=idx)
                                      if self.m else np.zeros(1, idx))
        self.weights = None if weights is None else cuda.to_device(
            np.ascontiguousarray(weights, dtype=np.float64) if self.m else np.zeros(1))
        self._src = None

    @property
    def src(self):
        if self._src is None:
            self._src = self._cuda.device_array(max(self.m, 1), dtype=np.int64)
            G.src_of_kernel[grid_blocks(self.n)](self.indptr, self._src, self.n)
        return self._src

    @property
    def nbytes(self):
        return (8 * (self.n + 1) + self.index_bytes * self.m
                + (8 * self.m if self.weights is not None else 0)
                + (8 * self.m if self._src is not None else 0))


def sssp_gpu(indptr, indices, weights, source, strategy, *, mdt=1, hp_block=32, split=None):
    """Run one strategy on the device. Returns ``(dist, iterations, work, info)``.

    ``split`` = (indptr2, indices2, weights2, child_ptr, children) for NS.
    ``info`` has ``kernel_seconds`` (the iteration loop), ``overhead_seconds``
    (uploads, preprocessing kernels, the download) and the strategy's counters.
    """
    cuda = require_gpu()
    t0 = time.perf_counter()
    n = len(indptr) - 1
    info = {}
    if strategy == "ns":
        indptr, indices, weights, child_ptr, children = split
    n_all = len(indptr) - 1
    g = DeviceCSR(cuda, indptr, indices, weights)
    d_indptr, d_indices, d_weights = g.indptr, g.indices, g.weights
    dist = np.full(n_all, np.inf)
    dist[source] = 0.0
    stamp = np.full(n_all, -1, dtype=np.int64)
    first = [source]
    if strategy == "ns":
        kids = children[child_ptr[source]:child_ptr[source + 1]]
        dist[kids] = 0.0
        first += kids.tolist()
        d_cptr = cuda.to_device(child_ptr)
        d_children = cuda.to_device(children if len(children) else np.zeros(1, np.int64))
    d_dist = cuda.to_device(dist)
    d_stamp = cuda.to_device(stamp)
    d_work = cuda.to_device(np.zeros(1, dtype=np.int64))
    d_count = cuda.to_device(np.zeros(1, dtype=np.int64))
    it = 0
    syncs = 0      # blocking device -> host reads in the iteration loop
    launches = 0   # launches of the level kernels (WD's and HP's helper kernels not counted)
    if strategy in ("ep", "ep-nochunk"):
        d_src = g.src
        wl0 = np.arange(indptr[source], indptr[source + 1], dtype=np.int64)
        cap = max(len(indices), 1)
        d_wl = cuda.device_array(cap, dtype=np.int64)
        d_nxt = cuda.device_array(cap, dtype=np.int64)
        if len(wl0):
            d_wl[: len(wl0)] = wl0
        size = len(wl0)
        d_res = cuda.to_device(np.zeros(1, dtype=np.int64))
        grid = resident_threads()
        cuda.synchronize()
        t1 = time.perf_counter()
        work = 0
        while size > 0:
            d_count[0] = 0
            blocks, tpb = grid_blocks(min(grid, size))
            G.ep_kernel[blocks, tpb](d_indptr, d_indices, d_weights, d_src, d_dist, d_wl, size, it,
                                     d_stamp, d_nxt, d_count, strategy == "ep", d_res)
            work += size
            size = int(d_count.copy_to_host()[0])
            launches += 1
            syncs += 1
            d_wl, d_nxt = d_nxt, d_wl
            it += 1
        cuda.synchronize()
        t2 = time.perf_counter()
        info["reservations"] = int(d_res.copy_to_host()[0])
    else:
        d_wl = cuda.device_array(n_all, dtype=np.int64)
        d_nxt = cuda.device_array(n_all, dtype=np.int64)
        d_wl[: len(first)] = np.array(first, dtype=np.int64)
        size = len(first)
        d_done = cuda.to_device(np.zeros(n_all, dtype=np.int64))
        threads = resident_threads()
        pieces = 0
        subits = 0
        if strategy == "hp":
            d_sub = cuda.device_array(n_all, dtype=np.int64)
            d_sub2 = cuda.device_array(n_all, dtype=np.int64)
            d_count2 = cuda.to_device(np.zeros(1, dtype=np.int64))
        d_state = cuda.to_device(np.zeros(3, dtype=np.int64))
        d_counts = cuda.to_device(np.zeros(3, dtype=np.int64))
        zeros3 = np.zeros(3, dtype=np.int64)
        resident = G.resident_levels_kernel
        try:
            coop = cooperative_blocks(resident, (d_indptr, d_indices, d_weights, d_dist, d_wl,
                                                 d_nxt, 0, 0, 0, 0, d_stamp, d_counts, d_work,
                                                 d_state), config.THREADS_PER_BLOCK)
        except Exception as exc:  # no cooperative launch here (e.g. libcudadevrt missing)
            coop = 0
            info["resident_error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0][:160]}"
        coop = resident_blocks(coop)
        cap = resident_cap(coop) if coop > 0 else -1  # -1: every level on the host loop
        bthreads, bwidth, bcap = block_tier(n_all, len(indices))
        small = 0
        tiers = [0, 0]  # launches of the one-block tier and of the cooperative grid
        cuda.synchronize()
        t1 = time.perf_counter()
        while size > 0:
            tier = None if strategy == "ns" else 0 if size <= bcap else 1 if size <= cap else None
            if tier is not None:
                # device-resident: one block (a block barrier between levels) for small
                # frontiers, else the cooperative grid (a grid barrier); each runs levels
                # until the frontier outgrows its cap or empties, or the level budget is spent
                if tier == 0:
                    G.block_levels_kernel[1, bthreads](
                        d_indptr, d_indices, d_weights, d_dist, d_wl, d_nxt, size, it,
                        config.LEVELS_PER_LAUNCH, bcap, bwidth, d_stamp, d_work, d_state)
                else:
                    d_counts.copy_to_device(zeros3)
                    resident[coop, config.THREADS_PER_BLOCK](
                        d_indptr, d_indices, d_weights, d_dist, d_wl, d_nxt, size, it,
                        config.LEVELS_PER_LAUNCH, cap, d_stamp, d_counts, d_work, d_state)
                launches += 1
                tiers[tier] += 1
                size, levels, widest = (int(x) for x in d_state.copy_to_host())
                syncs += 1
                small += levels
                it += levels
                if levels % 2:
                    d_wl, d_nxt = d_nxt, d_wl
                continue
            d_count[0] = 0
            launches += 1
            if strategy == "bs":
                G.bs_kernel[grid_blocks(size)](d_indptr, d_indices, d_weights, d_dist, d_wl, size, it,
                                           d_stamp, d_nxt, d_count, d_work)
            elif strategy == "ns":
                G.ns_kernel[grid_blocks(size)](d_indptr, d_indices, d_weights, d_cptr, d_children, n,
                                           d_dist, d_wl, size, it, d_stamp, d_nxt, d_count, d_work)
            elif strategy == "wd":
                pieces += _wd_step(cuda, G, d_indptr, d_indices, d_weights, d_dist, d_wl, size,
                                   d_done, threads, it, d_stamp, d_nxt, d_count, d_work)
                syncs += 1  # the step reads its scan's total
            else:  # hp
                G.reset_done_kernel[grid_blocks(size)](d_wl, size, d_done)
                d_sub[:size] = d_wl[:size]
                ssize = size
                while ssize > 0:
                    subits += 1
                    if ssize < hp_block:
                        _wd_step(cuda, G, d_indptr, d_indices, d_weights, d_dist, d_sub, ssize,
                                 d_done, threads, it, d_stamp, d_nxt, d_count, d_work)
                        syncs += 1
                        break
                    d_count2[0] = 0
                    G.hp_kernel[grid_blocks(ssize)](d_indptr, d_indices, d_weights, d_dist, d_sub,
                                                ssize, d_done, mdt, it, d_stamp, d_nxt, d_count,
                                                d_sub2, d_count2, d_work)
                    ssize = int(d_count2.copy_to_host()[0])
                    launches += 1
                    syncs += 1
                    d_sub, d_sub2 = d_sub2, d_sub
            size = int(d_count.copy_to_host()[0])
            syncs += 1
            d_wl, d_nxt = d_nxt, d_wl
            it += 1
        cuda.synchronize()
        t2 = time.perf_counter()
        info["device_resident_levels"] = small
        info["block_launches"], info["grid_launches"] = tiers
        if sum(tiers):
            info["widest_group"] = widest
        work = int(d_work.copy_to_host()[0])
        if strategy == "wd":
            info["pieces"] = pieces
        if strategy == "hp":
            info["sub_iterations"] = subits
    out = d_dist.copy_to_host()[:n]
    info.update(_loop_info(t0, t1, t2, syncs, launches))
    return out, it, work, info


def sssp_delta_gpu(indptr, indices, weights, source, delta):
    """Delta-stepping SSSP on the device (the GPU twin of `traversal_kernels.sssp_delta`):
    `traversal_kernels_gpu.delta_kernel` runs near levels, threshold moves and far splits in
    cooperative launches of `config.LEVELS_PER_LAUNCH` phases each; the host reads
    the state once per launch. Returns ``(dist, iterations, edges relaxed,
    threshold moves, info)``."""
    cuda = require_gpu()
    t0 = time.perf_counter()
    n = len(indptr) - 1
    g = DeviceCSR(cuda, indptr, indices, weights)
    dist = np.full(n, np.inf)
    dist[source] = 0.0
    d_dist = cuda.to_device(dist)
    d_done = cuda.to_device(np.full(n, np.inf))
    d_wl0 = cuda.to_device(np.full(n, source, dtype=np.int64))
    d_wl1, d_far0, d_far1 = (cuda.device_array(n, dtype=np.int64) for _ in range(3))
    d_stamp = cuda.to_device(np.full(n, -1, dtype=np.int64))
    d_fstamp = cuda.to_device(np.full(n, -1, dtype=np.int64))
    d_counts = cuda.to_device(np.zeros(3, dtype=np.int64))
    d_farcount = cuda.to_device(np.zeros(2, dtype=np.int64))
    d_fmin = cuda.to_device(np.full(2, np.inf))
    istate = np.zeros(G.D_SLOTS, dtype=np.int64)
    istate[G.D_SIZE] = 1
    d_istate = cuda.to_device(istate)
    d_fstate = cuda.to_device(np.array([float(delta)]))
    d_work = cuda.to_device(np.zeros(1, dtype=np.int64))
    args = [g.indptr, g.indices, g.weights, d_dist, d_done, d_wl0, d_wl1, d_far0, d_far1, d_stamp,
            d_fstamp, d_counts, d_farcount, d_fmin, d_istate, d_fstate, float(delta),
            config.LEVELS_PER_LAUNCH, d_work]
    tpb = config.THREADS_PER_BLOCK
    try:
        blocks = cooperative_blocks(G.delta_kernel, args, tpb)
    except Exception as exc:
        raise InputError("--strategy delta on the GPU needs cooperative launches, which this "
                         f"CUDA installation cannot build ({type(exc).__name__}: "
                         f"{str(exc).splitlines()[0][:120]}); use --device cpu") from None
    syncs = launches = 0
    cuda.synchronize()
    t1 = time.perf_counter()
    while True:
        G.delta_kernel[blocks, tpb](*args)
        launches += 1
        istate = d_istate.copy_to_host()
        syncs += 1
        if istate[G.D_DONE]:
            break
    cuda.synchronize()
    t2 = time.perf_counter()
    out = d_dist.copy_to_host()
    work = int(d_work.copy_to_host()[0])
    return out, int(istate[G.D_IT]), work, int(istate[G.D_MOVES]), _loop_info(t0, t1, t2, syncs,
                                                                           launches)


def bfs_do_gpu(indptr, indices, rindptr, rindices, source, alpha, beta):
    """Direction-optimising BFS on the device (the GPU twin of `traversal_kernels.bfs_do`,
    with its switch rule). Returns ``(level, depth, edges examined, bottom-up
    steps, info)``; ``level`` is int64 with -1 for unreached vertices. One host
    read per level (the new frontier's size and degree sums steer the switch):
    DO is for low-diameter graphs, where the levels are few."""
    cuda = require_gpu()
    t0 = time.perf_counter()
    n = len(indptr) - 1
    g = DeviceCSR(cuda, indptr, indices)
    r = g if rindptr is indptr and rindices is indices else DeviceCSR(cuda, rindptr, rindices)
    d_indptr, d_indices, d_rindptr, d_rindices = g.indptr, g.indices, r.indptr, r.indices
    level = np.full(n, -1, dtype=np.int64)
    level[source] = 0
    d_level = cuda.to_device(level)
    d_wl = cuda.device_array(max(n, 1), dtype=np.int64)
    d_nxt = cuda.device_array(max(n, 1), dtype=np.int64)
    d_wl[:1] = np.array([source], dtype=np.int64)
    d_acc = cuda.to_device(np.zeros(4, dtype=np.int64))
    zeros4 = np.zeros(4, dtype=np.int64)
    threads = resident_threads()
    tpb = config.THREADS_PER_BLOCK
    size = 1
    m_front = int(indptr[source + 1] - indptr[source])
    m_unexplored = int(rindptr[n] - (rindptr[source + 1] - rindptr[source]))
    bottom = False
    prev = depth = work = steps = syncs = 0
    cuda.synchronize()
    t1 = time.perf_counter()
    while size > 0:
        if not bottom:
            bottom = m_front > m_unexplored / alpha and size > prev
        else:
            bottom = not (size < n / beta and size < prev)
        prev = size
        d_acc.copy_to_device(zeros4)
        if bottom:
            steps += 1
            G.do_bottom_up_kernel[grid_blocks(min(threads, n), tpb)](
                d_rindptr, d_rindices, d_indptr, d_level, n, depth, d_nxt, d_acc)
        else:
            width = 32 if tpb % 32 == 0 else 1
            G.do_top_down_kernel[grid_blocks(min(threads, size * width), tpb)](
                d_indptr, d_indices, d_rindptr, d_level, d_wl, size, depth, d_nxt, d_acc)
        acc = d_acc.copy_to_host()
        syncs += 1
        size, work = int(acc[0]), work + int(acc[1])
        m_front = int(acc[2])
        m_unexplored -= int(acc[3])
        d_wl, d_nxt = d_nxt, d_wl
        depth += 1
    cuda.synchronize()
    t2 = time.perf_counter()
    out = d_level.copy_to_host()
    return out, depth, work, steps, _loop_info(t0, t1, t2, syncs, depth)


def _wd_step(cuda, G, d_indptr, d_indices, d_weights, d_dist, d_wl, size, d_done, threads, it,
             d_stamp, d_nxt, d_count, d_work):
    """One WD pass over ``d_wl[:size]`` (unprocessed edges only); returns the pieces."""
    d_deg = cuda.device_array(size, dtype=np.int64)
    G.worklist_degrees_kernel[grid_blocks(size)](d_indptr, d_wl, size, d_done, d_deg)
    d_scan = inclusive_scan(cuda, d_deg, size)
    total = int(d_scan[size - 1])
    if total == 0:
        return 0
    per = (total + threads - 1) // threads
    pieces = (total + per - 1) // per
    G.wd_kernel[grid_blocks(pieces)](d_indptr, d_indices, d_weights, d_dist, d_wl, size, d_scan, d_done,
                                 per, total, it, d_stamp, d_nxt, d_count, d_work)
    return pieces
