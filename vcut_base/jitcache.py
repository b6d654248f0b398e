"""numba's on-disk cache, made safe for processes that compile at the same time.

Every compiled kernel of vcut is ``@njit(cache=True)``: the machine code is kept
in an index file and numbered data files beside the module. numba 0.68 writes
them without a lock: two processes that compile different signatures of one
function at once both read the same index, both take the first free number and
both write it, so the index names one signature and the data file holds the
other's code. A later process that loads the first signature runs the second
one's machine code on its arguments (seen here as ``NRT_adapt_ndarray_to_python:
'descr' is NULL`` in a test run under pytest-xdist; a wrong dtype could as well
crash or compute garbage). The same happens to users who start several vcut
processes on a fresh install or after an upgrade.

`install` wraps the cache file's ``save`` and ``flush`` (which read the index,
choose a data file and write both) in an exclusive ``flock`` on a lock file beside
the index, and ``load`` (index, then the data file it names) in a shared one, so
each writer sees the index as the last one left it and no reader sees an index
entry whose data is not written yet. Where the lock file cannot be created (a
read-only cache directory), the file system refuses locks or ``fcntl`` is missing
(Windows), numba's own behaviour stands. The kernel modules import ``njit`` from here, so the lock is in
place before the first cached function is compiled or loaded.
"""

import contextlib
import functools
import os

from numba import njit, prange  # noqa: F401  (re-exported for the kernel modules)
from numba.core import caching

try:
    import fcntl
except ImportError:  # pragma: no cover - not on Linux / macOS
    fcntl = None

__all__ = ["njit", "helper", "prange", "install"]

#: ``@helper`` (or ``@helper(inline="always")``): ``@njit(cache=True)`` for a kernel's
#: helper that allocates nothing, compiled without numba's reference counting. A
#: compiled function counts a reference to each array argument it holds, atomically, on
#: entry and again on exit; for a helper called per edge with a dozen array arguments
#: those atomic operations cost more than its work (neighbour expansion: 3.5x faster
#: without them on whitaker3, 1.7x on cit-HepPh; docs/vcut.md). The caller holds the
#: references meanwhile, so a helper that creates no array needs none; one that does
#: fails to compile (numba refuses allocation without its runtime), never silently.
helper = functools.partial(njit, cache=True, _nrt=False)


@contextlib.contextmanager
def _locked(index_path, exclusive):
    try:
        fd = os.open(index_path + ".lock", os.O_RDWR | os.O_CREAT, 0o644)
    except OSError:  # a directory numba can read but not write: nothing to protect
        yield
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        except OSError:  # a file system without locks (some network mounts): as numba does
            pass
        yield
    finally:
        os.close(fd)  # releases the lock


def install():
    """Lock numba's cache index (module docstring); idempotent."""
    cls = getattr(caching, "IndexDataCacheFile", None)
    if fcntl is None or cls is None or getattr(cls, "_vcut_locked", False):
        return
    if not all(callable(getattr(cls, name, None)) for name in ("save", "load", "flush")):
        return  # a numba whose cache file differs: leave it alone
    save, load, flush = cls.save, cls.load, cls.flush

    def locked_save(self, key, data):
        with _locked(self._index_path, True):
            return save(self, key, data)

    def locked_load(self, key):
        with _locked(self._index_path, False):
            return load(self, key)

    def locked_flush(self):
        with _locked(self._index_path, True):
            return flush(self)

    cls._vcut_unlocked = (save, load, flush)  # numba's own, for the test that shows the race
    cls.save, cls.load, cls.flush = locked_save, locked_load, locked_flush
    cls._vcut_locked = True


install()
