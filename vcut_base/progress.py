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

__all__ = ["reporting", "run_kernel", "run_parallel", "stop_all", "stopping", "INTERVAL",
           "noting_compiles", "compiling"]

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


_NOTE = [None]  # what `compiling` calls once (`noting_compiles`)


@contextlib.contextmanager
def noting_compiles(note):
    """Call ``note()`` once in the block, when the first of vcut's cached kernels is
    compiled rather than loaded from numba's cache (a cold cache: the first run after an
    install); None: nothing. Deciding costs nothing here: `vcut_base.jitcache`, imported
    with the first kernel module, tells `compiling` when numba starts a compile."""
    previous = _NOTE[0]
    _NOTE[0] = note
    try:
        yield
    finally:
        _NOTE[0] = previous


def compiling():
    """numba is compiling one of vcut's cached kernels (`vcut_base.jitcache`): the note of
    `noting_compiles`, the first time only."""
    note, _NOTE[0] = _NOTE[0], None
    if note is not None:
        note()


_LIVE = {}  # id -> (counter, name, unit, total) of every kernel running now in another thread
_ENDED = {}  # (name, unit) -> summed totals of the kernels ended in the jobs of a run_parallel
_BOOK = threading.Lock()  # a kernel leaves _LIVE and enters _ENDED under it
_STOPPING = [False]  # set by stop_all while a run_parallel ends: kernels start stopped
_THREAD = threading.local()  # ``worker``: the `_Worker` of each of their threads


def stop_all():
    """Ask every kernel running in another thread than the main one, now or
    starting before the `run_parallel` that called this has ended, to stop at
    its next tick."""
    _STOPPING[0] = True
    for counter, *_ in list(_LIVE.values()):
        counter[1] = 1


def stopping():
    """Whether this thread is a worker of `run_kernel` / `run_parallel` whose kernels are
    being stopped (a signal's exception in the main thread, a failed job of a
    `run_parallel`): a worker waiting for something slow meanwhile (another process's
    compile of its kernel, `vcut_base.jitcache`) gives up."""
    worker = getattr(_THREAD, "worker", None)
    return worker is not None and (_STOPPING[0] or worker.stopped)


def run_kernel(name, unit, total, kernel, *args):
    """``kernel(*args, counter)`` with progress reports; returns its result.

    ``total``: the steps the kernel counts in ``counter[0]`` (edges, tasks).
    Called from another thread than the main one, the kernel runs in that
    thread, unreported, and stops when `stop_all` is called.
    """
    counter = np.zeros(2, dtype=np.int64)
    t0 = time.perf_counter()
    if threading.current_thread() is not threading.main_thread():
        _LIVE[id(counter)] = (counter, name, unit, total)
        if _STOPPING[0]:
            counter[1] = 1
        try:
            return kernel(*args, counter)
        finally:
            with _BOOK:  # one step for `_report_jobs`
                del _LIVE[id(counter)]
                _ENDED[(name, unit)] = _ENDED.get((name, unit), 0) + int(total)
    sink = _SINK[0]
    if total < THREAD_MIN:
        out = kernel(*args, counter)
    else:
        out = _in_worker(name, unit, total, kernel, args, counter, sink, t0)
    if sink is not None:
        sink(name, int(counter[0]), total, unit, time.perf_counter() - t0, True)
    return out


def run_parallel(jobs, workers):
    """Run the callables ``jobs`` on ``workers`` threads; their results in order.

    Meant for calls that spend their time in `run_kernel` kernels (which
    release the GIL). On a signal's exception in the calling thread every
    kernel is asked to stop and the exception is re-raised once the threads
    have ended; the first job's exception is re-raised likewise. With a sink
    installed (`reporting`), the kernels running in the jobs are reported
    together every `INTERVAL` seconds (`_report_jobs`).
    """
    jobs = list(jobs)
    _STOPPING[0] = False
    if workers <= 1 or len(jobs) <= 1:
        return [job() for job in jobs]
    results = [None] * len(jobs)
    errors = []
    finished = [0]
    todo = iter(range(len(jobs)))
    lock = threading.Lock()
    _ENDED.clear()

    def worker():
        while not errors:
            with lock:
                i = next(todo, None)
            if i is None:
                return
            try:
                results[i] = jobs[i]()
                with lock:
                    finished[0] += 1
            except BaseException as exc:  # re-raised in the calling thread
                errors.append(exc)
                stop_all()

    sink = _SINK[0]
    shown = []
    t0 = time.perf_counter()
    threads = [_Worker(worker, f"vcut-job-{k}") for k in range(min(workers, len(jobs)))]
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            while not thread.done.wait(INTERVAL):
                if sink is not None:
                    _report_jobs(sink, t0, finished[0], len(jobs), shown)
    except BaseException:
        errors.append(None)  # no further jobs start
        stop_all()
        for thread in threads:
            if thread.running():
                _wait_quietly(thread.done)
        raise
    finally:
        _STOPPING[0] = False  # every thread has ended: later kernels run in full
        if shown:  # the display of the jobs ends (a bar is erased)
            sink(*shown[-1][:4], time.perf_counter() - t0, True)
    if errors:
        raise errors[0]
    return results


def _report_jobs(sink, t0, finished, jobs, shown):
    """One report of the kernels the jobs of a `run_parallel` run: those of the first
    running one's name and unit, counted over the whole run (the totals of those ended,
    the counts of those running, and for the other jobs not ended, started or not, the
    mean total of the running ones), named with how many run now and how many jobs have
    ended, e.g.
    ``expansion x2, 1 of 4 jobs done``; kept in ``shown`` (to end the display with)."""
    with _BOOK:
        live = list(_LIVE.values())
        if not live:
            return
        name, unit = live[0][1], live[0][2]
        ended = _ENDED.get((name, unit), 0)
        same = [e for e in live if e[1] == name and e[2] == unit]
    running = sum(int(e[3]) for e in same)
    done = ended + sum(min(int(e[0][0]), int(e[3])) for e in same)
    total = ended + running + max(jobs - finished - len(same), 0) * running // len(same)
    label = f"{name} x{len(same)}, {finished} of {jobs} jobs done"
    sink(label, done, total, unit, time.perf_counter() - t0, False)
    shown[:] = [(label, done, total, unit)]


def _in_worker(name, unit, total, kernel, args, counter, sink, t0):
    result = {}

    def work():
        try:
            result["out"] = kernel(*args, counter)
        except BaseException as exc:  # re-raised in the calling thread
            result["error"] = exc

    thread = _Worker(work, f"vcut-{name}")
    try:
        thread.start()
        while not thread.done.wait(INTERVAL):
            if sink is not None:
                sink(name, int(counter[0]), total, unit, time.perf_counter() - t0, False)
    except BaseException:
        counter[1] = 1  # the kernel stops at its next tick
        thread.stopped = True  # and a compile its thread waits for gives up (`stopping`)
        if thread.running():
            _wait_quietly(thread.done)
        raise
    if "error" in result:
        raise result["error"]
    return result["out"]


class _Worker:
    """``target`` on a daemon thread, and an Event ``done`` set when it has ended.

    A signal's exception can reach the starting thread inside ``start`` after the thread
    exists (``Thread.start`` waits for it to run) or just after: `running` then tells,
    once and for all, whether ``target`` runs (wait for ``done``: the kernel it runs
    reads the caller's arrays) or never will. (``Thread.join`` would not do for the
    wait: a join interrupted by a signal's exception can leave ``join`` and
    ``is_alive`` reporting a running thread as ended.)"""

    def __init__(self, target, name):
        self.done = threading.Event()
        self._target = target
        self._claim = threading.Lock()
        self._state = None  # None: not begun; True: runs target; False: never will
        self.stopped = False  # its job is being stopped (`stopping`)
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self):
        self._thread.start()

    def _run(self):
        _THREAD.worker = self
        try:
            with self._claim:
                if self._state is False:
                    return
                self._state = True
            self._target()
        finally:
            self.done.set()

    def running(self):
        """Whether ``target`` runs or has run; if it has not begun, it never will."""
        with self._claim:
            if self._state is None:
                self._state = False
            return self._state


def _wait_quietly(done):
    """Wait for a stopping kernel; a further signal meanwhile does not wait longer."""
    with contextlib.suppress(BaseException):
        done.wait()
