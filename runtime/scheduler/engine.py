"""The event loop every policy runs on.

A policy starts *calls* (arrays of sub-load ids) on idle devices and reacts to
their completions. Devices run concurrently: a real device (CPU, CUDA GPU) on
its own thread, timed by the wall clock; a simulated device completes at the
time its model charges. When every device is simulated the clock is virtual
(the schedule of a hypothetical machine runs in the time it takes to compute
the results); with any real device the clock is the wall clock, and simulated
devices complete at their modelled wall times.

`Engine.drive` is the one loop: ask the policy for work for each idle device,
wait for the next completion (on the virtual clock, every completion due at that
instant, so that devices that end together are all idle when work is next handed
out), record it, hand failed calls back to the policy (a device that raises is
retired: nothing it held is lost), repeat until no device is busy and none gets
more work.
"""

import heapq
import itertools
import threading
import time
from concurrent import futures
from dataclasses import dataclass

from vcut_base.errors import VcutError

__all__ = ["Engine", "Span", "Fault", "SchedulingError", "DevicesRefused"]


class SchedulingError(VcutError):
    """A schedule could not complete (every device failed): exit 7, as a crashed run."""

    exit_code = 7


class DevicesRefused(SchedulingError):
    """Refused before anything runs: the devices cannot run the job under the policy."""
    exit_code = 2


@dataclass(frozen=True)
class Span:
    """One call on one device: the Gantt chart's bar."""
    device: str
    round: int
    start: float
    end: float
    units: int
    what: str      # profile | bundle | steal | unit | call | training


@dataclass(frozen=True)
class Fault:
    device: str
    round: int
    time: float
    units: int
    error: str


@dataclass
class _Done:
    device: object
    units: object
    results: object
    error: object
    start: float
    end: float
    what: str
    setup: float = 0.0     # seconds of the call that were the job's one-off setup transfer

    @property
    def seconds(self):
        """The call's time less its one-off setup: what a call of its size costs again."""
        return self.end - self.start - self.setup


class Engine:
    def __init__(self, devices, job):
        self.devices = list(devices)
        self.job = job
        self.virtual = all(d.simulated for d in self.devices)
        self.alive = [d for d in self.devices]
        self.results = {}
        self.spans = []
        self.faults = []
        self.round = 0
        self._vnow = 0.0
        self._t0 = time.perf_counter()
        self._heap = []
        self._seq = itertools.count()
        self._pending = {}
        self._pools = {d: futures.ThreadPoolExecutor(1, thread_name_prefix=d.name)
                       for d in self.devices if not d.simulated}

    def now(self):
        return self._vnow if self.virtual else time.perf_counter() - self._t0

    def close(self):
        for pool in self._pools.values():
            pool.shutdown(wait=True)

    # -- calls -------------------------------------------------------------------
    def start(self, device, units, what):
        t = self.now()
        if device.simulated:
            try:
                results, seconds = device.execute(self.job, units)
                error = None
            except Exception as exc:  # a device fault: detected when the call starts
                results, seconds, error = None, 0.0, exc
            setup = device.last_setup if error is None else 0.0
            heapq.heappush(self._heap, (t + seconds, next(self._seq),
                                        _Done(device, units, results, error, t, t + seconds, what,
                                              setup)))
        else:
            fut = self._pools[device].submit(device.execute, self.job, units)
            self._pending[fut] = _Done(device, units, None, None, t, None, what)

    def busy(self):
        return bool(self._heap or self._pending)

    def _next(self):
        if self.virtual:
            t, _, done = heapq.heappop(self._heap)
            self._vnow = max(self._vnow, t)
            return done
        while True:
            deadline = self._heap[0][0] if self._heap else None
            timeout = None if deadline is None else \
                min(max(0.0, deadline - self.now()), threading.TIMEOUT_MAX)
            if self._pending:
                ready, _ = futures.wait(self._pending, timeout, futures.FIRST_COMPLETED)
            else:
                time.sleep(timeout)
                ready = ()
            if ready:
                fut = min(ready, key=lambda f: self._pending[f].start)
                done = self._pending.pop(fut)
                done.end = self.now()
                try:
                    done.results, _ = fut.result()
                except Exception as exc:
                    done.error = exc
                return done
            if self._heap and self._heap[0][0] <= self.now():
                return heapq.heappop(self._heap)[2]

    # -- the loop ----------------------------------------------------------------
    def drive(self, next_call, on_done=None, on_fault=None):
        """Run calls until no device is busy and ``next_call(device)`` gives none.

        ``next_call(device)`` returns ``(units, what)`` or None; ``on_done(done)``
        sees each completion; ``on_fault(device, units)`` must take back the units
        of a failed call (they are run again elsewhere)."""
        idle = list(self.alive)
        while True:
            for d in list(idle):
                if d not in self.alive:
                    idle.remove(d)
                    continue
                call = next_call(d)
                if call is not None:
                    units, what = call
                    idle.remove(d)
                    self.start(d, units, what)
            if not self.busy():
                return
            for done in self._due():
                self._finish(done, idle, on_done, on_fault)

    def _due(self):
        """The next completion, and on the virtual clock every other one due at the same
        instant: devices that end together are all idle when work is next handed out."""
        done = [self._next()]
        while self.virtual and self._heap and self._heap[0][0] <= self._vnow:
            done.append(heapq.heappop(self._heap)[2])
        return done

    def _finish(self, done, idle, on_done, on_fault):
        """Record ``done`` (or retire its failed device), and put its device back in ``idle``."""
        if done.error is not None:
            self.alive.remove(done.device)
            self.faults.append(Fault(done.device.name, self.round, done.end, len(done.units),
                                     f"{type(done.error).__name__}: {done.error}"))
            if on_fault is None:
                raise SchedulingError(f"{done.device.name} failed: {done.error}")
            if not any(d.can_run(self.job) for d in self.alive):
                raise SchedulingError(
                    f"every device failed, the last {done.device.name} ({done.error}); "
                    f"{len(done.units)} sub-loads have nowhere left to run: add a device "
                    "to --devices or set its fail= to a later call")
            on_fault(done.device, done.units)
            return
        self.spans.append(Span(done.device.name, self.round, done.start, done.end,
                               len(done.units), done.what))
        if done.what != "training":
            for u, r in zip(done.units.tolist(), done.results):
                if u in self.results:
                    raise SchedulingError(f"sub-load {u} ran twice (policy bug)")
                self.results[u] = r
        if on_done is not None:
            on_done(done)
        idle.append(done.device)
