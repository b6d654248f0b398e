"""Small array helpers shared by every package, and disk-backed arrays.

Disk-backed (spilled) arrays
----------------------------
Inside ``with spilling(DIR):`` the pipeline's large long-lived arrays (the
graph, the partition, the clustering and its replica table, the simulated
finish times) live in memory-mapped scratch files in ``DIR`` instead of
anonymous memory: `empty` allocates them there, `spill` moves a finished
one there. The kernel writes their pages back and drops them under memory
pressure, so an analysis can hold more than the machine's memory; what
stays resident is the running phase's working arrays. Each file is unlinked
as soon as it is mapped (nothing is left behind, even by ``kill -9``) and
its blocks are reserved up front (``posix_fallocate``): a full disk is an
`OutputError` (exit 9) at allocation, never a ``SIGBUS`` mid-kernel.
Outside ``spilling`` both are plain numpy.
"""

import contextlib
import mmap
import os
import tempfile
import threading

import numpy as np

from .atomic import write_failure
from .errors import InputError, OutputError

__all__ = ["unique", "shares", "spilling", "spill_directory", "spilled_bytes", "empty", "spill", "head", "zeros",
           "spill_file", "map_reserved", "reserve", "resident",
           "is_mapped",
           "SPILL_MIN_BYTES"]

#: Arrays smaller than this stay in memory even while spilling (16 MiB).
SPILL_MIN_BYTES = 16 << 20

_LOCK = threading.Lock()
_SPILL = {"dir": None, "min": SPILL_MIN_BYTES, "bytes": 0}


def unique(x):
    """The sorted distinct values of ``x`` (as ``numpy.unique(x)``).

    numpy 2.3+ answers a plain ``numpy.unique`` on a large integer array with a
    hash table that is an order of magnitude slower than sorting (12 s against
    0.7 s for 11 M int64 values); sort and drop repeats instead.
    """
    s = np.sort(np.asarray(x).ravel())
    if len(s) < 2:
        return s
    keep = np.empty(len(s), dtype=bool)
    keep[0] = True
    np.not_equal(s[1:], s[:-1], out=keep[1:])
    return s[keep]


def shares(values):
    """Positive finite ``values`` as fractions of their sum (float64). Where the sum
    overflows (1e308 twice) they are taken over the largest first, or every share would
    be 0. A share can still underflow to 0 (1e308 beside 1e-300): callers check."""
    v = np.asarray(values, dtype=np.float64)
    with np.errstate(over="ignore", under="ignore"):
        total = v.sum()
        if np.isfinite(total):
            return v / total
        scaled = v / v.max()
        return scaled / scaled.sum()


@contextlib.contextmanager
def spilling(directory, min_bytes=SPILL_MIN_BYTES):
    """Keep arrays of at least ``min_bytes`` made by `empty` / `spill` in files under
    ``directory`` for the duration (process-wide: worker threads spill too).

    Raises `vcut_base.errors.InputError` when ``directory`` is not a writable
    directory. Nesting replaces the directory until the inner block ends.
    """
    directory = os.fspath(directory)
    if not os.path.isdir(directory):
        raise InputError(f"spill directory {directory} does not exist or is not a directory; "
                         "give an existing directory on a disk with free space")
    if not os.access(directory, os.W_OK | os.X_OK):
        raise InputError(f"spill directory {directory} is not writable; give a directory you "
                         "can write")
    with _LOCK:
        saved = dict(_SPILL)
        _SPILL.update({"dir": directory, "min": int(min_bytes), "bytes": 0})
    try:
        yield directory
    finally:
        with _LOCK:
            _SPILL.update(saved)


def spill_directory():
    """The directory arrays are spilled to now; None outside `spilling`."""
    return _SPILL["dir"]


def spilled_bytes():
    """Bytes of spill files made in the current `spilling` block (0 outside)."""
    return _SPILL["bytes"]


def resident(nbytes):
    """The bytes of an array of ``nbytes`` that `empty` / `zeros` keep in memory:
    all of them, or none while `spilling` puts such an array in a file (what a
    memory check before allocating it counts)."""
    spilled = _SPILL["dir"] is not None and nbytes >= _SPILL["min"]
    return 0.0 if spilled else float(nbytes)


def _failure(what, exc):
    """The `OutputError` of a spill file that cannot be made or given its blocks."""
    where = _SPILL["dir"] or "the spill directory"
    return OutputError(f"{what} in {where}: {exc.strerror or exc}"
                       f"{write_failure(exc, [where], 'give another --spill directory')}")


def spill_file():
    """An open descriptor of a fresh, already unlinked file in the spill directory
    (the caller closes it); None when not spilling."""
    directory = _SPILL["dir"]
    if directory is None:
        return None
    try:
        fd, path = tempfile.mkstemp(prefix="vcut-spill-", dir=directory)
        os.unlink(path)
    except OSError as exc:
        raise _failure("cannot make a spill file", exc) from None
    return fd


def map_reserved(fd, size):
    """A shared writable map of spill file ``fd`` at ``size`` bytes, its blocks given
    now: a full disk is an `OutputError` here, not a ``SIGBUS`` when a page of the
    map is first written."""
    reserve(fd, size)
    return mmap.mmap(fd, size, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)


def reserve(fd, size):
    """Give spill file ``fd`` the blocks of ``size`` bytes now (see `map_reserved`)."""
    try:
        os.posix_fallocate(fd, 0, size)
    except OSError as exc:
        raise _failure(f"cannot reserve {size / 2**30:.2f} GiB for a spill file", exc) from None
    with _LOCK:
        _SPILL["bytes"] += size


def _mapped(shape, dtype):
    """A zero-filled array of ``shape`` / ``dtype`` in a fresh, already unlinked
    file of the spill directory; None when not spilling or the array is small."""
    dtype = np.dtype(dtype)
    size = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    if _SPILL["dir"] is None or size < _SPILL["min"] or size == 0:
        return None
    fd = spill_file()
    try:
        buf = map_reserved(fd, size)
    finally:
        os.close(fd)
    return np.frombuffer(buf, dtype=dtype).reshape(shape)


def empty(shape, dtype):
    """``numpy.empty(shape, dtype)``, in a spill file while `spilling` (then zero-filled)."""
    out = _mapped(shape, dtype)
    return np.empty(shape, dtype) if out is None else out


def zeros(shape, dtype):
    """``numpy.zeros(shape, dtype)``, in a spill file while `spilling`."""
    out = _mapped(shape, dtype)
    return np.zeros(shape, dtype) if out is None else out


def spill(a):
    """``a`` itself, or while `spilling` a copy of a large in-memory ``a`` in a
    spill file (the caller drops ``a`` to free its memory). Arrays already in
    a mapped file (spilled, or memory-mapped from a trace) are returned as they are."""
    a = np.asarray(a)
    if _SPILL["dir"] is None or is_mapped(a):
        return a
    out = _mapped(a.shape, a.dtype)
    if out is None:
        return a
    out[...] = a
    return out


def head(a, k):
    """The first ``k`` entries of ``a`` as an array of their own: a copy in
    memory (so ``a`` can be freed), a view of a mapped ``a`` (its file is on disk)."""
    return a[:k] if is_mapped(a) else a[:k].copy()


def is_mapped(a):
    """Whether ``a``'s memory is a memory-mapped file (a spill file, a mapped trace)."""
    base = a
    while base is not None:
        if isinstance(base, mmap.mmap):
            return True
        base = getattr(base, "base", None) if isinstance(base, np.ndarray) else \
            getattr(base, "obj", None) if isinstance(base, memoryview) else None
    return False
