"""Dense matrix multiplication by row tiles (the source's second workload).

C = A B with A, B of order n holding integers 0..7 as float64, so every dot
product (at most 49 n) is exact whatever the summation order: CPU (BLAS), GPU
(shared-memory tiles) and the reference agree bit for bit. Sub-load u is the
u-th tile of ceil(n / n_units) rows of A (the last may be shorter; ``n_units``
is lowered when the last tiles would be empty, e.g. 10 rows in 6 units are 5
tiles of 2); B crosses to a GPU once.
"""

import numpy as np

from .base import Job
from .registry import register_job

__all__ = ["Matmul"]


class Matmul(Job):
    kind = "matmul"
    #: flops a second alone, on the H200 host (docs/notes/gpu-h200.md: order 6000 in 375 sub-loads
    #: took 2.443 s on the 16-core BLAS, 0.341 s on the H200 with its 23 ms of transfers)
    sim_rates = {"cpu": 1.77e11, "gpu": 1.35e12}

    def __init__(self, n, n_units, seed=0):
        n, n_units = int(n), int(n_units)
        if n < 1:
            raise ValueError(f"matmul: order {n}; use n >= 1")
        if not 1 <= n_units <= n:
            raise ValueError(f"matmul: {n_units} sub-loads for {n} rows; use 1 .. {n}")
        rng = np.random.default_rng(seed)
        self.a = rng.integers(0, 8, (n, n)).astype(np.float64)
        self.b = rng.integers(0, 8, (n, n)).astype(np.float64)
        self.n, self.n_units, self.seed = n, n_units, seed
        self.rows = -(-n // n_units)
        self.n_units = -(-n // self.rows)   # no empty tiles

    def _range(self, u):
        return u * self.rows, min((u + 1) * self.rows, self.n)

    def unit_work(self):
        return 2.0 * self.rows * self.n * self.n

    def unit_threads(self):
        return self.rows * self.n  # a thread per element of C

    def unit_bytes(self):
        return self.rows * self.n * 8

    def setup_bytes(self):
        return self.n * self.n * 8

    def run_cpu(self, units):
        return [self.a[slice(*self._range(u))] @ self.b for u in units.tolist()]

    def run_gpu(self, units, gpu):
        cuda = gpu.cuda
        if not len(units):
            return []
        k = _kernels()
        d_b = k.on_device(gpu, self, "b", lambda: cuda.to_device(self.b, stream=gpu.stream))
        spans = [self._range(u) for u in units.tolist()]
        a = np.ascontiguousarray(np.concatenate([self.a[lo:hi] for lo, hi in spans]))
        d_a = cuda.to_device(a, stream=gpu.stream)                   # one transfer
        d_c = cuda.device_array(a.shape, np.float64, stream=gpu.stream)
        grid = ((self.n + k.TILE - 1) // k.TILE, (a.shape[0] + k.TILE - 1) // k.TILE)
        k.mm[grid, (k.TILE, k.TILE), gpu.stream](d_a, d_b, d_c)   # one launch
        c = d_c.copy_to_host(stream=gpu.stream)
        gpu.stream.synchronize()
        out, pos = [], 0
        for lo, hi in spans:
            out.append(c[pos:pos + hi - lo])
            pos += hi - lo
        return out

    def combine(self, results):
        return np.vstack([results[u] for u in range(self.n_units)])

    def reference(self):
        """Integer products (numpy's int64 matmul, no BLAS) up to order 1024; above, where
        that takes minutes (order 6000: 2 x 10^11 multiply-adds in one thread), BLAS in
        float64, exact too: every partial sum is an integer below 2^53."""
        if self.n <= 1024:
            return (self.a.astype(np.int64) @ self.b.astype(np.int64)).astype(np.float64)
        return self.a @ self.b

    def describe(self):
        return {"kind": self.kind, "units": self.n_units, "n": self.n, "rows_per_unit": self.rows}


def _kernels():
    from . import job_kernels_gpu  # lazy: numba.cuda is optional

    return job_kernels_gpu


def _build(size, units, given, seed, **kw):
    return Matmul(size, units, seed=seed, **kw)


#: size: the matrix order (A, B and their int64 draws, the tiles, C, the reference)
register_job("matmul", Matmul, size=1024, units=256, limits=(1, 65536),
             peak_bytes=lambda size, units: 48 * size * size, build=_build, units_of="rows")
