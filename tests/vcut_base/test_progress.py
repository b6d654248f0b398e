"""vcut_base.progress: compiled kernels in a worker thread, reporting how far
they are, stopped by a signal's exception in the calling thread."""

import os
import signal
import threading
import time

import numpy as np
import pytest
from numba import njit

from vcut_base import progress
from tests.helpers import own_process


@njit(nogil=True)
def _count(n, spin, fail_at, counter):
    """Sum 0..n-1, ``spin`` busy steps per item, publishing every 1024 items."""
    s = 0
    for i in range(n):
        if i & 1023 == 0:
            counter[0] = i
            if counter[1] != 0:
                return -1
        if i == fail_at:
            raise ValueError("kernel failed")
        for j in range(spin):
            s += (i ^ j) & 1
        s += i
    counter[0] = n
    return s


def _expect(n, spin):
    i = np.arange(n, dtype=np.int64)
    extra = sum(int(((i ^ j) & 1).sum()) for j in range(spin))
    return int(i.sum()) + extra


def test_reports_reach_the_sink_in_order_and_end_with_the_total():
    n = progress.THREAD_MIN * 4
    seen = []
    with progress.reporting(lambda *a: seen.append(a)):
        out = progress.run_kernel("count", "items", n, _count, n, 200, -1)
    assert out == _expect(n, 200)
    names = {a[0] for a in seen}
    assert names == {"count"} and all(a[2:4] == (n, "items") for a in seen)
    done = [a[1] for a in seen]
    assert done == sorted(done) and done[-1] == n
    assert [a[5] for a in seen] == [False] * (len(seen) - 1) + [True]
    elapsed = [a[4] for a in seen]
    assert elapsed == sorted(elapsed)


def test_without_a_sink_the_result_is_the_same_and_small_kernels_stay_in_this_thread():
    n = progress.THREAD_MIN * 2
    assert progress.run_kernel("count", "items", n, _count, n, 3, -1) == _expect(n, 3)
    threads = []

    @njit(nogil=True)
    def small(counter):
        counter[0] = 7
        return 7

    def probe(counter):
        threads.append(threading.current_thread())
        return small(counter)

    seen = []
    with progress.reporting(lambda *a: seen.append(a)):
        assert progress.run_kernel("small", "steps", 10, probe) == 7
    assert threads == [threading.main_thread()]
    assert seen == [("small", 7, 10, "steps", seen[0][4], True)]


def test_an_error_in_the_kernel_is_raised_in_the_caller():
    n = progress.THREAD_MIN * 2
    with pytest.raises(ValueError, match="kernel failed"):
        progress.run_kernel("count", "items", n, _count, n, 0, n // 2)


@own_process
def test_a_signal_stops_the_kernel_and_is_raised_at_once():
    n = progress.THREAD_MIN * 4
    _count(10, 1, -1, np.zeros(2, np.int64))  # compiled before the clock starts
    timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    t0 = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        progress.run_kernel("count", "items", n, _count, n, 10**6, -1)  # hours of work
    assert time.perf_counter() - t0 < 30
    assert not [t for t in threading.enumerate() if t.name == "vcut-count" and t.is_alive()]


def _job(n, spin, fail_at=-1):
    return lambda: progress.run_kernel("count", "items", n, _count, n, spin, fail_at)


def test_parallel_jobs_give_their_results_in_order():
    sizes = [1000, 5000, 300, 20000, 7]
    got = progress.run_parallel([_job(k, 2) for k in sizes], 2)
    assert got == [_expect(k, 2) for k in sizes]
    assert progress.run_parallel([_job(k, 2) for k in sizes], 1) == got


def test_a_failing_parallel_job_stops_the_others_and_is_raised():
    n = progress.THREAD_MIN
    t0 = time.perf_counter()
    with pytest.raises(ValueError, match="kernel failed"):
        progress.run_parallel([_job(n, 10**6), _job(n, 0, 5000)], 2)  # the first: hours
    assert time.perf_counter() - t0 < 30
    assert not progress._LIVE


@own_process
def test_a_signal_stops_parallel_jobs_at_once():
    n = progress.THREAD_MIN
    _count(10, 1, -1, np.zeros(2, np.int64))
    timer = threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGINT))
    timer.start()
    t0 = time.perf_counter()
    with pytest.raises(KeyboardInterrupt):
        progress.run_parallel([_job(n, 10**6) for _ in range(3)], 2)
    assert time.perf_counter() - t0 < 30
    assert not [t for t in threading.enumerate() if t.name.startswith("vcut-job") and t.is_alive()]
    assert not progress._LIVE


def test_kernels_after_a_stopped_parallel_run_run_in_full():
    n = progress.THREAD_MIN
    with pytest.raises(ValueError):
        progress.run_parallel([_job(n, 0, 5000), _job(n, 0, 5000)], 2)
    got = []
    th = threading.Thread(target=lambda: got.append(_job(5000, 1)()))
    th.start()
    th.join()
    assert got == [_expect(5000, 1)]


def test_parallel_jobs_are_reported_together_and_the_display_ends(monkeypatch):
    # two jobs at a time: each report counts the whole run (the jobs ended, the kernels
    # running, the other jobs not ended at a running one's total), says how many jobs
    # have ended, and the last report is the final one
    monkeypatch.setattr(progress, "INTERVAL", 0.005)  # reports even on a fast machine
    n = progress.THREAD_MIN
    one = _count(n, 60_000, -1, np.zeros(2, np.int64))  # a few tenths of a second each
    seen = []
    with progress.reporting(lambda *a: seen.append(a)):
        got = progress.run_parallel([_job(n, 60_000) for _ in range(3)], 2)
    assert got == [one] * 3
    running, last = seen[:-1], seen[-1]
    assert running and last[5] is True and not any(a[5] for a in running)
    labels = {a[0] for a in running}
    assert labels <= {f"count x{r}, {d} of 3 jobs done" for r in (1, 2) for d in (0, 1, 2)}
    for _, done, total, unit, _, _ in running:
        assert unit == "items" and total == 3 * n and 0 <= done <= total
    done = [a[1] for a in running]
    assert done == sorted(done)
    assert last[0] == running[-1][0]
    elapsed = [a[4] for a in seen]
    assert elapsed == sorted(elapsed)
    assert not progress._LIVE


def _interrupted_start(monkeypatch, at):
    """``Thread.start`` that raises KeyboardInterrupt, as a signal arriving during the
    start's wait for the new thread, on its ``at``-th call (from 1): after the thread
    exists; the threads started."""
    start, started = threading.Thread.start, []

    def interrupted(self):
        start(self)
        started.append(self)
        if len(started) == at:
            raise KeyboardInterrupt()

    monkeypatch.setattr(threading.Thread, "start", interrupted)
    return started


def _ended(threads):
    for t in threads:
        t.join(timeout=30)
    return [t.is_alive() for t in threads]


def test_a_signal_during_the_workers_start_still_stops_its_kernel(monkeypatch):
    n = progress.THREAD_MIN * 4
    _count(10, 1, -1, np.zeros(2, np.int64))
    started = _interrupted_start(monkeypatch, 1)
    with pytest.raises(KeyboardInterrupt):
        progress.run_kernel("count", "items", n, _count, n, 10**6, -1)  # hours of work
    # the kernel was asked to stop (or never began) and has ended: before the fix the
    # caller went on with the kernel running on its arrays
    assert len(started) == 1 and _ended(started) == [False]


def test_a_signal_during_a_jobs_start_stops_the_jobs_started(monkeypatch):
    n = progress.THREAD_MIN
    _count(10, 1, -1, np.zeros(2, np.int64))
    started = _interrupted_start(monkeypatch, 2)
    with pytest.raises(KeyboardInterrupt):
        progress.run_parallel([_job(n, 10**6) for _ in range(3)], 2)
    assert len(started) == 2 and _ended(started) == [False, False]
    assert not progress._LIVE


def test_a_worker_not_begun_when_asked_never_runs():
    ran = []
    worker = progress._Worker(lambda: ran.append(1), "vcut-test")
    assert worker.running() is False  # asked before its start: it never runs
    worker.start()
    assert worker.done.wait(30) and ran == []
    worker = progress._Worker(lambda: ran.append(2), "vcut-test")
    worker.start()
    assert worker.done.wait(30) and worker.running() is True and ran == [2]


def test_only_the_workers_are_told_to_stop(monkeypatch):
    # a compile waiting in a worker gives up on `stopping`; another thread's (a background
    # figure's) and the main thread's wait on
    monkeypatch.setattr(progress, "_STOPPING", [True])
    seen = []
    other = threading.Thread(target=lambda: seen.append(progress.stopping()))
    other.start()
    other.join()
    worker = progress._Worker(lambda: seen.append(progress.stopping()), "vcut-test")
    worker.start()
    assert worker.done.wait(30)
    assert seen == [False, True] and progress.stopping() is False
    # the main thread's own kernel stopped (`run_kernel`): its worker alone
    progress._STOPPING[0] = False
    for stopped in (False, True):
        worker = progress._Worker(lambda: seen.append(progress.stopping()), "vcut-test")
        worker.stopped = stopped
        worker.start()
        assert worker.done.wait(30)
    assert seen[2:] == [False, True]
