"""The suite's CUDA simulator: one shared array per block and line, whichever thread
makes it first (``runtime.gpu._lock_shared_arrays``, part of ``_pace_simulator``)."""

import os

import numpy as np
import pytest
from numba import cuda, int64  # module globals: the simulator swaps ``cuda`` in a kernel's

pytestmark = pytest.mark.skipif(os.environ.get("NUMBA_ENABLE_CUDASIM") != "1",
                                reason="on a real GPU shared memory is the device's")


def test_every_thread_of_a_block_sees_its_shared_arrays():
    from numba.cuda.simulator import kernelapi

    @cuda.jit
    def kernel(out):
        a = cuda.shared.array(8, dtype=int64)
        b = cuda.shared.array(8, dtype=int64)
        t = cuda.threadIdx.x
        a[t] = t + 100 * cuda.blockIdx.x
        b[t] = -t
        cuda.syncthreads()
        out[cuda.blockIdx.x, t] = a[(t + 1) % 8] * 1000 + b[(t + 7) % 8]

    out = np.zeros((3, 8), dtype=np.int64)
    for _ in range(5):  # a fresh block's first calls race in the unpatched simulator
        kernel[3, 8](out)
        t = np.arange(8)
        want = np.stack([((t + 1) % 8 + 100 * blk) * 1000 - (t + 7) % 8 for blk in range(3)])
        assert np.array_equal(out, want)
    assert kernelapi.FakeCUDAShared._vcut_locked
