"""A batch of BFS queries over one graph: hop distances from many sources.

Sub-load u is the u-th group of ceil(len(sources) / n_units) consecutive sources
(``n_units`` is lowered when the last groups would be empty). The CPU runs a
queue BFS per source (`ir_graph.bfs_kernels.bfs_distances`); a GPU call runs its
twin (`job_kernels_gpu.bfs_distances_gpu`), one block per source of the bundle,
level-synchronous (each level one sweep of the block's threads over the
vertices, so a source costs levels x n / threads-per-block steps: fine on
small-world graphs, slow on long paths): one transfer (the sources), one
launch, one copy back; the CSR crosses to the device once. Undirected graphs
are traversed both ways. Distances are int32, -1 where a vertex is not reached.
"""

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import shortest_path

from vcut_base.errors import InputError
from vcut_base.jitcache import njit
from ir_graph.bfs_kernels import bfs_distances
from runtime import config
from runtime.generators import rmat
from runtime.traversal import csr_out

from .base import Job
from .registry import register_job

__all__ = ["BfsBatch"]


@njit(cache=True, nogil=True)
def _bfs_many(indptr, indices, sources, n):
    """`ir_graph.bfs_kernels.bfs_distances` from each of ``sources``, a row each (int32)."""
    dist = np.empty((len(sources), n), np.int32)
    for s in range(len(sources)):
        dist[s] = bfs_distances(indptr, indices, sources[s])
    return dist


class BfsBatch(Job):
    kind = "bfs-batch"
    #: edges a second: the CPU, one core's BFS over RMAT-14 (measured:
    #: bench/bench_schedule.py --rates); the GPU, an estimate for the H200 (not measured:
    #: a 256-thread block sweeps the 16,384 vertices at each of ~8 levels, ~1 ms a source,
    #: on 132 SMs at once)
    sim_rates = {"cpu": 6e8, "gpu": 3e10}

    def __init__(self, graph, sources, n_units):
        sources = np.asarray(sources, dtype=np.int64)
        if sources.ndim != 1 or not len(sources):
            raise ValueError("bfs batch: give at least one source")
        if sources.min() < 0 or sources.max() >= graph.n:
            raise ValueError(f"bfs batch: sources must lie in 0 .. {graph.n - 1}")
        n_units = int(n_units)
        if not 1 <= n_units <= len(sources):
            raise ValueError(f"bfs batch: {n_units} sub-loads for {len(sources)} sources; use "
                             f"1 .. {len(sources)}")
        indptr, indices, _ = csr_out(graph)
        self.graph, self.sources = graph, sources
        self.indptr, self.indices = indptr.astype(np.int64), indices.astype(np.int64)
        self.group = -(-len(sources) // n_units)
        self.n_units = -(-len(sources) // self.group)

    @classmethod
    def generate(cls, scale, edge_factor=8, n_sources=256, n_units=64, seed=0):
        scale = int(scale)
        if not 1 <= scale <= 26:
            raise InputError(f"--size {scale}: the RMAT scale of bfs-batch must be 1 .. 26")
        g = rmat(scale, edge_factor, seed=seed)
        rng = np.random.default_rng(seed)
        return cls(g, rng.integers(0, g.n, n_sources), n_units)

    def _group(self, u):
        return self.sources[u * self.group:(u + 1) * self.group]

    def unit_work(self):
        return float(self.group * len(self.indices))

    def unit_threads(self):
        return self.group * config.THREADS_PER_BLOCK  # a block per source

    def unit_bytes(self):
        return self.group * 8

    def setup_bytes(self):
        return int(self.indptr.nbytes + self.indices.nbytes)

    def run_cpu(self, units):
        return [_bfs_many(self.indptr, self.indices, self._group(u), self.graph.n)
                for u in units.tolist()]

    def run_gpu(self, units, gpu):
        cuda = gpu.cuda
        if not len(units):
            return []
        k = _kernels()
        csr = k.on_device(gpu, self, "csr", lambda: (
            cuda.to_device(self.indptr, stream=gpu.stream),
            cuda.to_device(self.indices, stream=gpu.stream)))
        groups = [self._group(u) for u in units.tolist()]
        src = np.concatenate(groups)
        d_src = cuda.to_device(src, stream=gpu.stream)                # one transfer
        n = self.graph.n
        d_dist = cuda.device_array((len(src), n), np.int32, stream=gpu.stream)
        k.bfs_distances_gpu[len(src), config.THREADS_PER_BLOCK, gpu.stream](
            *csr, d_src, d_dist)                                        # one launch
        dist = d_dist.copy_to_host(stream=gpu.stream)
        gpu.stream.synchronize()
        out, pos = [], 0
        for g in groups:
            out.append(dist[pos:pos + len(g)])
            pos += len(g)
        return out

    def combine(self, results):
        return np.vstack([results[u] for u in range(self.n_units)])

    def reference(self):
        # from the edge list, not the CSR the kernels use
        g, n = self.graph, self.graph.n
        m = csr_matrix((np.ones(len(g.src)), (np.asarray(g.src), np.asarray(g.dst))),
                       shape=(n, n))
        d = shortest_path(m, directed=bool(g.directed), unweighted=True, indices=self.sources)
        return np.where(np.isinf(d), -1, d).astype(np.int32)

    def describe(self):
        return {"kind": self.kind, "units": self.n_units, "vertices": int(self.graph.n),
                "edges": int(len(self.indices)), "sources": int(len(self.sources))}


def _kernels():
    from . import job_kernels_gpu  # lazy: numba.cuda is optional

    return job_kernels_gpu


def _peak_bytes(scale, units):
    """The RMAT graph and CSR, the sources, the distances (and their reference)."""
    n = 2 ** scale
    return 512 * n + max(256, units) * (8 + 16 * n)


def _build(size, units, given, seed, **kw):
    kw.setdefault("n_sources", max(256, units))
    return BfsBatch.generate(size, n_units=units, seed=seed, **kw)


#: size: the RMAT scale
register_job("bfs-batch", BfsBatch, size=14, units=256, limits=(1, 26), peak_bytes=_peak_bytes,
             build=_build, units_cost_memory=True)
