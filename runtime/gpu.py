"""Which device runs the work, and the helpers every GPU launch shares.

`resolve_device` turns ``cpu`` / ``gpu`` / ``auto`` into the device that runs;
`gpu_available` and `require_gpu` say whether a CUDA device (or numba's CUDA
simulator) can compile and run the kernels with this numba-cuda and numpy
(`stack_problem`); `device_memory`, `resident_threads` and `cooperative_blocks`
size the launches; `device_twin` compiles an njit rule for the device. The GPU
traversal's host loops are in `runtime.traversal_gpu`, the shared device
primitives in `runtime.primitives_gpu`.
"""

import contextlib
import math
import sys
import threading
import time
import types
import warnings
from importlib import metadata

import numpy as np

from vcut_base.errors import InputError

from . import config

__all__ = ["resolve_device", "DEVICES", "gpu_available", "require_gpu", "device_memory",
           "resident_threads", "cooperative_blocks", "device_twin",
           "stack_problem", "BROKEN_STACKS", "grid_blocks", "is_simulator"]

DEVICES = ("cpu", "gpu", "auto")


def resolve_device(device):
    """``cpu`` or ``gpu``: ``auto`` picks the GPU when one is available."""
    if device not in DEVICES:
        raise InputError(f"unknown device {device!r}; use cpu, gpu or auto")
    if device == "auto":
        return "gpu" if gpu_available() else "cpu"
    if device == "gpu":
        require_gpu()
    return device


#: numba-cuda's warning for launches of few blocks. vcut launches small grids on
#: purpose (a one-block device-resident loop, the last levels of a traversal, small
#: scans); the warning would only print noise to the user, so it is filtered.
UNDER_UTILIZATION = r".*Grid size \d+ will likely result in GPU under-utilization"  # after
# numba's terminal highlighting codes


def _quiet_launches():
    """Filter `UNDER_UTILIZATION` whatever its class: numba-cuda raises its own
    ``NumbaPerformanceWarning`` (numba_cuda.numba.cuda.core.errors), not numba's
    (seen printed on an H200 with numba-cuda 0.30.4 while the filter named numba's)."""
    warnings.filterwarnings("ignore", message=UNDER_UTILIZATION, category=Warning)


#: Python's thread switch interval (seconds) while numba's CUDA simulator runs a block. The
#: simulator runs a block's threads as Python threads and polls them from the launching
#: thread in a loop that holds the GIL until the interpreter forces a switch: at Python's
#: 5 ms a block of 8 threads spends ~11 ms in that loop and the kernel's own work is a few
#: percent of a launch. At 0.1 ms the block's threads get the GIL at once: 2-6 x faster
#: launches (`vcut partition` of a 32-vertex graph with ``--device gpu --batch 50``: 31.9 s
#: -> 13.9 s), the same results. Only while a block runs (`_pace_simulator`): the rest of
#: the process keeps its interval. A card is not affected.
SIMULATOR_SWITCH_INTERVAL = 1e-4

_pace_lock = threading.Lock()
_pace = {"blocks": 0, "saved": None}  # blocks running under the lowered interval


def _pace_simulator():
    """Make numba's CUDA simulator run each block at `SIMULATOR_SWITCH_INTERVAL`, and its
    device calls and shared arrays safe at that pace (once per process; the blocks of
    launches from several threads share one lowering, undone when the last of them ends;
    `_lock_shared_arrays` for the shared arrays).

    A call of a device function swaps the simulator's fake ``cuda`` module into the
    function's module and back on return. Where that module is not the kernel's, one
    thread's return undoes the swap under another thread of the block still inside
    (``module 'numba.cuda' has no attribute 'syncthreads'``): rare at 5 ms, when a thread
    mostly runs a whole call before a switch, frequent at 0.1 ms. Here the first thread
    in swaps and the last one out swaps back, under a lock."""
    from numba.cuda.simulator import kernel as simulated

    manager = simulated.BlockManager
    if getattr(manager, "_vcut_paced", False):
        return
    run = manager.run

    def paced(self, *args):
        with _pace_lock:
            if _pace["blocks"] == 0:
                _pace["saved"] = sys.getswitchinterval()
                sys.setswitchinterval(min(_pace["saved"], SIMULATOR_SWITCH_INTERVAL))
            _pace["blocks"] += 1
        try:
            return run(self, *args)
        finally:
            with _pace_lock:
                _pace["blocks"] -= 1
                if _pace["blocks"] == 0:
                    sys.setswitchinterval(_pace["saved"])

    swaps = {}  # id of a module's globals -> [threads inside, the entries swapped]

    @contextlib.contextmanager
    def swapped(fn, fake):
        from numba import cuda

        scope = fn.__globals__
        with _pace_lock:
            entry = swaps.get(id(scope))
            if entry is None:
                real = {k: v for k, v in scope.items() if v is cuda}
                scope.update(dict.fromkeys(real, fake))
                entry = swaps[id(scope)] = [0, real]
            entry[0] += 1
        try:
            yield
        finally:
            with _pace_lock:
                entry[0] -= 1
                if entry[0] == 0:
                    scope.update(entry[1])
                    del swaps[id(scope)]

    simulated.swapped_cuda_module = swapped
    manager.run = paced
    manager._vcut_paced = True
    _lock_shared_arrays()


def _lock_shared_arrays():
    """Make the CUDA simulator's ``cuda.shared.array`` give every thread of a block one array.

    numba-cuda's simulator (``numba/cuda/simulator/kernelapi.py``, ``FakeCUDAShared.array``)
    looks up a block's array by the calling line and creates it on a miss, without a lock.
    The block's threads are Python threads, so two of them that miss at once each get
    their own array. A thread then reads entries another thread never wrote, e.g. the
    worklist offset in ``traversal_kernels_gpu._flush`` (one CI failure of
    ``test_gpu_strategies_match_scipy[hp-grid]`` read an uninitialised slot as the index
    140380334982982). A real GPU has one shared memory per block. Here the lookup and the
    creation happen under one lock, with the same key and the same array the simulator
    makes."""
    import traceback

    from numba.core import types as numba_types
    from numba.cuda.simulator import kernelapi
    from numba.np import numpy_support

    cls = kernelapi.FakeCUDAShared
    if getattr(cls, "_vcut_locked", False):
        return
    simulated = cls.array
    lock = threading.Lock()

    def array(self, shape, dtype):
        if shape == 0:  # dynamic shared memory: one buffer made up front, nothing to race
            return simulated(self, shape, dtype)
        if isinstance(dtype, numba_types.Type):
            dtype = numpy_support.as_dtype(dtype)
        caller = tuple(traceback.extract_stack(sys._getframe(1), limit=1)[0][0:2])
        with lock:
            res = self._allocations.get(caller)
            if res is None:
                res = np.empty(shape, dtype)
                self._allocations[caller] = res
        return res

    cls.array = array
    cls._vcut_locked = True


def _cuda():
    try:
        from numba import cuda  # lazy: numba.cuda is optional (and slow to import)
    except ImportError:  # pragma: no cover - numba always ships numba.cuda or numba-cuda
        return None
    _quiet_launches()
    if is_simulator():
        _pace_simulator()
    return cuda


def device_twin(fn, **deps):
    """A CUDA device function from the Python source of the njit function ``fn``, its calls
    to other njit functions rebound to their device twins ``deps``: a rule written once for
    the CPU kernels and the GPU's."""
    py = fn.py_func
    scope = dict(py.__globals__)
    scope.update(deps)
    twin = types.FunctionType(py.__code__, scope, py.__name__, py.__defaults__, py.__closure__)
    return _cuda().jit(device=True)(twin)


def _device_present():
    cuda = _cuda()
    try:
        return bool(cuda is not None and cuda.is_available())
    except Exception:
        return False


def gpu_available():
    """True when a CUDA device (or numba's CUDA simulator) can run the kernels: one
    is present and numba-cuda can compile with this numpy (`stack_problem`), so
    that ``auto`` falls back to the CPU where it cannot."""
    return _device_present() and (is_simulator() or stack_problem(*_installed_stack()) is None)


#: Releases that cannot compile kernels together: numba-cuda up to the first
#: version with numpy from the second. numba-cuda 0.30.4 (the newest) calls
#: ``np.row_stack``, which numpy 2.5 removed: its first kernel compile fails.
#: The ``gpu`` extra of pyproject.toml pins numpy below it (tested).
BROKEN_STACKS = (((0, 30, 4), (2, 5)),)


def _release(version):
    """The leading numeric fields of a version string: ``"2.5.0rc1"`` -> (2, 5, 0)."""
    out = []
    for field in str(version).split("."):
        digits = ""
        for ch in field:
            if not ch.isdigit():
                break
            digits += ch
        if not digits:
            break
        out.append(int(digits))
        if digits != field:
            break
    return tuple(out)


def stack_problem(numpy_version, numba_cuda_version):
    """A one-line error when numba-cuda ``numba_cuda_version`` cannot compile kernels
    with numpy ``numpy_version`` (`BROKEN_STACKS`), else None. ``numba_cuda_version``
    None: numba-cuda is not installed (numba's own numba.cuda is used)."""
    if numba_cuda_version is None:
        return None
    cu, np_ = _release(numba_cuda_version), _release(numpy_version)
    for last, first in BROKEN_STACKS:
        if cu <= last and np_[:len(first)] >= first:
            below = ".".join(map(str, first))
            return (f"--device gpu: numba-cuda {numba_cuda_version} cannot compile kernels with "
                    f"numpy {numpy_version}; install numpy<{below} (pip install 'numpy<{below}', "
                    "or reinstall with the gpu extra: pip install -e '.[gpu]')")
    return None


def _installed_stack():
    """(numpy version, numba-cuda version or None) of this environment."""
    try:
        cuda_version = metadata.version("numba-cuda")
    except metadata.PackageNotFoundError:
        cuda_version = None
    return np.__version__, cuda_version


def is_simulator():
    """Whether numba's CUDA simulator stands in for a card (``NUMBA_ENABLE_CUDASIM=1``)."""
    from numba import config as numba_config  # lazy: numba is start-up cost for device questions

    return bool(getattr(numba_config, "ENABLE_CUDASIM", False))


def require_gpu():
    if not _device_present():
        raise InputError("--device gpu: no CUDA GPU is available here (numba.cuda found none); "
                         "use --device cpu, or --device auto to fall back to the CPU")
    if not is_simulator():  # the simulator compiles nothing
        problem = stack_problem(*_installed_stack())
        if problem:
            raise InputError(problem)
    return _cuda()


def device_memory():
    """Bytes the traversal may use on the device (free memory, or the configured value)."""
    if config.DEVICE_MEMORY is not None:
        return int(config.DEVICE_MEMORY)
    cuda = _cuda()
    try:
        free, _ = cuda.current_context().get_memory_info()
        return int(free)
    except Exception:  # the simulator has no memory information
        return 1 << 62


def resident_threads():
    """Threads a device keeps resident: multiprocessors x max threads each."""
    if config.RESIDENT_THREADS is not None:
        return int(config.RESIDENT_THREADS)
    cuda = _cuda()
    try:
        dev = cuda.get_current_device()
        return int(dev.MULTIPROCESSOR_COUNT * dev.MAX_THREADS_PER_MULTI_PROCESSOR)
    except Exception:
        return 4 * config.THREADS_PER_BLOCK


def cooperative_blocks(kernel, args, tpb):
    """Blocks of ``tpb`` threads of ``kernel`` that can be resident at once (the most a
    cooperative launch, one that synchronises the grid, may have); 1 under the
    simulator, which runs cooperative grids of one block only. The kernel is
    compiled for the types of ``args`` (cached by numba)."""
    if is_simulator():
        return 1
    sig = tuple(kernel.typeof_pyval(a) for a in args)
    return int(kernel.compile(sig).max_cooperative_grid_blocks(tpb))


def _loop_info(t0, t1, t2, syncs, launches):
    """A traversal's timing and loop counters, called right after the results' download:
    ``kernel_seconds`` the loop (t1..t2), ``overhead_seconds`` the uploads and preparation
    (t0..t1) and the download (t2..now)."""
    return {"kernel_seconds": t2 - t1, "overhead_seconds": (t1 - t0) + (time.perf_counter() - t2),
            "host_syncs": syncs, "level_launches": launches}


def grid_blocks(n, tpb=None):
    """``(blocks, threads per block)`` of a launch that gives each of ``n`` items a thread."""
    tpb = tpb or config.THREADS_PER_BLOCK
    return max(1, math.ceil(n / tpb)), tpb
