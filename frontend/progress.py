"""Progress of long compiled phases, and their interruption.

A compiled kernel that takes a ``counter`` (int64[2]) publishes how far it is
in ``counter[0]`` every few thousand steps and stops early when it finds
``counter[1]`` non-zero. `run_kernel` calls such a kernel in a worker thread
(the kernels release the GIL) while the calling thread reports the progress
to the *sink* the command line installed (`reporting`) and stays responsive
to SIGINT / SIGTERM: on a signal's exception it asks the kernel to stop,
waits for it, and re-raises.

A sink is ``sink(name, done, total, unit, elapsed, final)``; the library
calls it at most every `INTERVAL` seconds while a phase runs and once with
``final=True`` when it ends. Without a sink, kernels of at least
`THREAD_MIN` steps still run in the worker thread (for the signals) and
nothing is reported.
"""

import contextlib
import threading
import time

import numpy as np

__all__ = ["reporting", "run_kernel", "report_phase", "INTERVAL"]

#: Seconds between two reports of a running phase.
INTERVAL = 0.1
#: Kernels of fewer steps run in the calling thread.
THREAD_MIN = 1 << 18

_SINK = [None]


@contextlib.contextmanager
def reporting(sink):
    """Install ``sink`` (None: none) for the block."""
    previous = _SINK[0]
    _SINK[0] = sink
    try:
        yield
    finally:
        _SINK[0] = previous


def report_phase(name, done, total, unit, elapsed, final=False):
    """Tell the sink, if any, how far phase ``name`` is."""
    sink = _SINK[0]
    if sink is not None:
        sink(name, done, total, unit, elapsed, final)


def run_kernel(name, unit, total, kernel, *args):
    """``kernel(*args, counter)`` with progress reports; returns its result.

    ``total``: the steps the kernel counts in ``counter[0]`` (edges, tasks).
    """
    counter = np.zeros(2, dtype=np.int64)
    sink = _SINK[0]
    t0 = time.perf_counter()
    if total < THREAD_MIN or threading.current_thread() is not threading.main_thread():
        out = kernel(*args, counter)
    else:
        out = _in_worker(name, unit, total, kernel, args, counter, sink, t0)
    if sink is not None:
        sink(name, int(counter[0]), total, unit, time.perf_counter() - t0, True)
    return out


def _in_worker(name, unit, total, kernel, args, counter, sink, t0):
    result = {}

    def work():
        try:
            result["out"] = kernel(*args, counter)
        except BaseException as exc:  # re-raised in the calling thread
            result["error"] = exc

    worker = threading.Thread(target=work, name=f"vcut-{name}", daemon=True)
    worker.start()
    try:
        while worker.is_alive():
            worker.join(INTERVAL)
            if sink is not None and worker.is_alive():
                sink(name, int(counter[0]), total, unit, time.perf_counter() - t0, False)
    except BaseException:
        counter[1] = 1  # the kernel stops at its next tick
        _join_quietly(worker)
        raise
    if "error" in result:
        raise result["error"]
    return result["out"]


def _join_quietly(worker):
    """Wait for a stopping kernel; a further signal meanwhile does not wait longer."""
    with contextlib.suppress(BaseException):
        worker.join()
