"""splitmix64's finaliser, the 64-bit hash mixer behind vcut's seeded choices, written once.

`mix` is the numba function (inlined into its callers): degree-based hashing and GraphX's
strategies (`vcut.hashing_kernels`), the multilevel partitioner's vertex keys
(`runtime.multilevel.coarsening_kernels`). Its GPU twin is compiled from the same source
(`runtime.multilevel.coarsening_kernels_gpu`, through `runtime.gpu.device_twin`).
`mix64` runs that source on numpy arrays (the bucket and symmetry keys of
`ir_graph.pieces` and `vcut.outofcore`). All three give the same bits.
"""

import numpy as np

from .jitcache import helper

__all__ = ["mix", "mix64"]


@helper
def mix(x):
    """splitmix64 finaliser: a well-spread 64-bit hash of the uint64 ``x``."""
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def mix64(key):
    """`mix` of every entry of ``key`` (non-negative integers), as a uint64 array: the
    same Python source, run by numpy (uint64 arithmetic wraps as the compiled one does)."""
    return mix.py_func(np.asarray(key).astype(np.uint64))
