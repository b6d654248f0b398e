"""A guard against the kernel's out-of-memory killer: stop with a message first.

When a machine runs out of memory the kernel ends the process with the largest
footprint with SIGKILL: no message, no exit status of the program's own, and a
user who does not know what happened. Allocations that fail cleanly raise
``MemoryError``, which the ``vcut`` program reports in one line with exit status
11; but with the kernel's overcommit, large arrays are granted and the memory runs
out only when their pages are touched, inside compiled code.

`MemoryGuard` watches from a daemon thread: every ``interval`` seconds it reads the
memory available (`vcut_base.memory.available_bytes`: ``MemAvailable``, and the room
under a container's limit) and this process's resident size. When less than
``reserve`` bytes remain available while this process holds at least
``min_resident`` (so that it is the process the kernel would pick, not a bystander
of another's growth), it calls ``on_low(available, resident)`` once. The ``vcut``
program's ``on_low`` prints the one-line error and ends the process with status 11
(`vcut.cli`); a library caller gets no guard unless it starts one.
"""

import os
import threading

from . import memory

__all__ = ["MemoryGuard", "default_reserve", "default_min_resident"]

#: Seconds between two readings: a core touching fresh pages fills ~5 GB/s, so the
#: reserve below is not used up between two readings.
INTERVAL = 0.05


def default_reserve(total=None):
    """The memory left free before the guard acts: 4 % of the machine, at least 512 MiB,
    or ``VCUT_MEMORY_RESERVE`` bytes (``0`` turns the guard off)."""
    value = os.environ.get("VCUT_MEMORY_RESERVE")
    if value is not None:
        try:
            return max(int(float(value)), 0)
        except ValueError:
            pass  # a bad value is the default (the guard must not fail a command)
    total = memory.total_bytes() if total is None else total
    return max(512 * 2**20, total // 25)


def default_min_resident(total=None):
    """The resident size from which this process counts as the one running the machine
    out of memory: an eighth of the machine, at most 2 GiB."""
    total = memory.total_bytes() if total is None else total
    return min(2 * 2**30, total // 8)


class MemoryGuard:
    """Call ``on_low(available, resident)`` once when memory runs short (module docstring).

    Parameters
    ----------
    on_low : callable
        Called from the guard's thread with the bytes available and this process's
        resident bytes; it may end the process (``os._exit``).
    reserve, min_resident : int, optional
        Bytes (defaults: `default_reserve`, `default_min_resident`).
    interval : float
        Seconds between readings.
    sample : callable, optional
        ``() -> (available, resident)``; default the machine's readings.
    """

    def __init__(self, on_low, *, reserve=None, min_resident=None, interval=INTERVAL,
                 sample=None):
        self.on_low = on_low
        self.reserve = default_reserve() if reserve is None else int(reserve)
        self.min_resident = default_min_resident() if min_resident is None \
            else int(min_resident)
        self.interval = float(interval)
        self.sample = sample or (lambda: (memory.available_bytes(), memory.resident_bytes()))
        self._stop = threading.Event()
        self._thread = None
        self.fired = False

    def check(self):
        """One reading; calls ``on_low`` (once) and returns True when memory is short."""
        if self.fired:
            return True
        available, resident = self.sample()
        if available < self.reserve and resident >= self.min_resident:
            self.fired = True
            self.on_low(available, resident)
            return True
        return False

    def _run(self):
        while not self._stop.wait(self.interval):
            if self.check():
                return

    def start(self):
        """Start watching (a daemon thread); returns self. A reserve of 0 watches nothing."""
        if self.reserve > 0 and self._thread is None:
            self._thread = threading.Thread(target=self._run, name="vcut-memory-guard",
                                            daemon=True)
            self._thread.start()
        return self

    def stop(self):
        """Stop watching and wait for the thread."""
        self._stop.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join()
        self._thread = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()
        return False
