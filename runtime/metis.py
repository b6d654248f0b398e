"""METIS through its C interface, so that a partitioning call releases the GIL.

pymetis holds the GIL for the whole of a METIS run, so a METIS run in one
thread stops every other Python thread (the neighbour expansions `best` runs
beside SPAC waited for it: a cit-HepPh SPAC of 0.75 s and three expansions of
0.14 s took 1.09 s side by side). pymetis's extension module exports METIS's
own entry points (``METIS_PartGraphKway``, ``METIS_PartGraphRecursive``,
``METIS_SetDefaultOptions``); called through ctypes, which releases the GIL
for a foreign call, the run overlaps the other threads' work.

`part_graph` makes the call pymetis's ``part_graph`` makes for the same
choice of method (k-way, recursive bisection, or pymetis's own rule:
recursive bisection up to 8 parts, k-way above) and the same options, so it
returns the same partition (tested). Where the symbols are missing or the index width is
neither 32 nor 64 bits, `available` is False and callers use pymetis.

One METIS call runs at a time (`_ONE`): METIS's own state is per thread, but
each call swaps the process's SIGABRT and SIGTERM handlers for its own and
puts the old ones back when it returns, so two calls ending out of order
would leave METIS's handler installed. Other Python threads run meanwhile.

METIS prints its diagnostics with ``printf`` (``***Cannot bisect a graph with
0 vertices!`` when a vertex is heavier than a part's share, the run going on),
which would land on the command's standard output, in the middle of
``--json``'s one object: every call runs under `c_stdout_to_stderr`.
"""

import contextlib
import ctypes
import os
import sys
import threading

import numpy as np

__all__ = ["available", "part_graph", "c_stdout_to_stderr"]

#: METIS 5's option slots (``moptions_et`` in metis.h) and sizes
NOPTIONS = 40
OPTION_SEED = 8
OPTION_UFACTOR = 16
OPTION_NUMBERING = 17
METIS_OK = 1

_STATE = {}
_ONE = threading.Lock()
_FD = threading.Lock()  # one swap of file descriptor 1 at a time


@contextlib.contextmanager
def c_stdout_to_stderr():
    """File descriptor 1 pointed at standard error while the block runs (what C code
    prints on stdout goes there), flushed on both sides so that nothing buffered changes
    streams; a no-op where either descriptor is closed."""
    with _FD:
        try:
            libc = ctypes.CDLL(None)
            sys.stdout.flush()
            libc.fflush(None)
            saved = os.dup(1)
        except (OSError, ValueError, AttributeError):  # closed, or no C library to flush
            yield
            return
        try:
            os.dup2(2, 1)
        except OSError:
            os.close(saved)
            yield
            return
        try:
            yield
        finally:
            libc.fflush(None)
            os.dup2(saved, 1)
            os.close(saved)


def _load():
    """``(kway, recursive, idx dtype)`` of the METIS in pymetis, or None."""
    if "lib" in _STATE:
        return _STATE["lib"]
    found = None
    try:
        import pymetis._internal as ext  # lazy: pymetis is optional

        lib = ctypes.CDLL(ext.__file__)
        kway, rec, defaults = (lib.METIS_PartGraphKway, lib.METIS_PartGraphRecursive,
                               lib.METIS_SetDefaultOptions)
        # METIS_SetDefaultOptions sets its NOPTIONS idx_t slots to -1: how many of 40
        # int64 words it wrote tells the width of idx_t (the buffer fits either)
        probe = np.zeros(NOPTIONS, dtype=np.int64)
        defaults.argtypes = [ctypes.c_void_p]
        defaults(probe.ctypes.data)
        written = int(np.count_nonzero(probe == -1))
        idx = {NOPTIONS // 2: np.int32, NOPTIONS: np.int64}.get(written)
        if idx is not None and np.all(probe[:written] == -1) and not probe[written:].any():
            for f in (kway, rec):
                f.argtypes = [ctypes.c_void_p] * 13
                f.restype = ctypes.c_int
            found = (kway, rec, idx)
    except (ImportError, OSError, AttributeError):
        found = None
    _STATE["lib"] = found
    return found


def available():
    """Whether `part_graph` can run here."""
    return _load() is not None


def part_graph(xadj, adjncy, vwgt, adjwgt, k, *, ufactor, seed, recursive=None):
    """Parts of a CSR graph (``k`` >= 2): METIS's k-way (``recursive=False``), recursive
    bisection (True) or pymetis's rule (None: recursive bisection for ``k`` <= 8, k-way
    above); ``ufactor``: allowed imbalance in thousandths. Raises
    RuntimeError when METIS reports an error or the graph's sizes or weights do not fit its
    index type."""
    kway, rec, idx = _load()
    n = len(xadj) - 1
    top = np.iinfo(idx).max
    if max(n, int(xadj[-1]), int(np.max(vwgt, initial=0)), int(np.max(adjwgt, initial=0)),
           int(np.sum(vwgt))) > top:
        bits = np.dtype(idx).itemsize * 8
        raise RuntimeError(f"the graph does not fit this METIS build's {bits}-bit indices")
    arrays = [np.ascontiguousarray(a, dtype=idx) for a in (xadj, adjncy, vwgt, adjwgt)]
    nvtxs = np.array([n], dtype=idx)
    ncon = np.array([1], dtype=idx)
    nparts = np.array([k], dtype=idx)
    options = np.full(NOPTIONS, -1, dtype=idx)
    options[OPTION_UFACTOR] = ufactor
    options[OPTION_SEED] = seed
    options[OPTION_NUMBERING] = 0
    objval = np.zeros(1, dtype=idx)
    part = np.zeros(n, dtype=idx)
    p = lambda a: a.ctypes.data  # noqa: E731
    call = rec if (k <= 8 if recursive is None else recursive) else kway
    with _ONE, c_stdout_to_stderr():
        status = call(p(nvtxs), p(ncon), p(arrays[0]), p(arrays[1]), p(arrays[2]), None,
                      p(arrays[3]), p(nparts), None, None, p(options), p(objval), p(part))
    if status != METIS_OK:
        raise RuntimeError(f"METIS returned status {status}")
    return part.astype(np.int32)
