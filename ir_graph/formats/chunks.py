"""The machinery of the compiled text readers: the file in chunks, growing arrays, the kernel loop.

A reader (`read_metis_fast` of `ir_graph.formats.metis`, ...) makes a
`Chunks` of the file and a kernel state (`new_state`), and calls its line
kernel (`ir_graph.formats.line_kernels`) through `run_kernel` until the file
is read, growing its output arrays (`GrowingArray`) when the kernel asks.
A line Python must look at comes back as an event (`consume` skips it); a
line the kernel flags is refused by the Python reader's check of that one
line (`reraise`), which words the message; bytes the kernels do not decide as
Python does raise `Unsupported` (the file is then read by the Python reader).
"""

import mmap
import os

import numpy as np

from vcut_base.arrays import map_reserved, reserve, spill_directory, spill_file
from vcut_base.errors import QUOTE_CHARS, GraphFormatError, InputTooLarge
from vcut_base.inputs import InputStream
from vcut_base.memory import check_memory, format_bytes

from . import line_protocol as P
from .line_kernels import edgelist_lines, lg_lines, metis_lines, mtx_lines
from .lines import BINARY_PREFIX, MAX_LINE, binary_message, long_line_message

__all__ = ["Unsupported", "Chunks", "new_state", "consume", "capacity", "GrowingArray", "grow",
           "run_kernel", "reraise", "entry_lines"]


class Unsupported(Exception):
    """A kernel met bytes it does not decide exactly like the Python reader (non-ASCII)."""


class Chunks:
    """The text of a graph file, chunk by chunk, in the buffer the line kernels read.

    ``buf[:filled]`` holds data (``final``: up to the end of the file);
    `refill` keeps the bytes from ``st[POS]`` on (an incomplete line) and
    reads the next chunk after them. Made, it has checked the file like
    `vcut_base.inputs.read_input` and refused binary data (a NUL among the
    first 64 KiB).
    """

    def __init__(self, path, chunk):
        self.path = path
        self.chunk = max(int(chunk), 1)
        self.broken = False
        # under --spill the edges go to scratch files, not memory: no size bound
        self.stream = InputStream(path, "graph file", GraphFormatError,
                                  limit=(1 << 62) if spill_directory() else None)
        try:
            head = np.empty(BINARY_PREFIX, np.uint8)
            self._head = head[:self._stream_read(head)]
            self._hpos = 0
            if np.any(self._head == 0):
                self.drain()
                raise GraphFormatError(binary_message(path))
            self.buf = np.empty(self.chunk + BINARY_PREFIX, np.uint8)
            self.filled = 0
            self.final = False
            self.scratch = np.empty(256, np.uint8)
            self.text_bytes = self.stream.size * (4 if path.endswith(".gz") else 1)  # a guess for .gz
        except BaseException:
            self.stream.close()
            raise

    def close(self):
        self.stream.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _stream_read(self, view):
        try:
            return self.stream.readinto(view)
        except (GraphFormatError, InputTooLarge):
            self.broken = True
            raise

    def _read(self, view):
        """Fill ``view`` from the first 64 KiB kept by the binary check, then the file."""
        got = 0
        if self._hpos < len(self._head):
            got = min(len(view), len(self._head) - self._hpos)
            view[:got] = self._head[self._hpos:self._hpos + got]
            self._hpos += got
        if got < len(view):
            got += self._stream_read(view[got:])
        return got

    def refill(self, st):
        """Drop the bytes before ``st[POS]``, read a chunk after the rest; ``st[POS]`` = 0."""
        pos = int(st[P.POS])
        tail = self.filled - pos
        if len(self.buf) - tail < max(self.chunk // 2, 1):
            size = max(tail + self.chunk, 2 * len(self.buf))
            check_memory(size, f"{self.path}: a line of {tail:,} bytes",
                         "the file is not a text graph, or use a machine with more memory",
                         error=InputTooLarge)
            buf = np.empty(size, np.uint8)
            buf[:tail] = self.buf[pos:self.filled]
            self.buf = buf
        elif tail and pos:
            self.buf[:tail] = self.buf[pos:self.filled]
        st[P.POS] = 0
        # a long line is read in ever larger pieces: each is scanned once more from its start
        want = min(len(self.buf) - tail, max(self.chunk, tail))
        got = self._read(self.buf[tail:tail + want])
        self.filled = tail + got
        self.final = got < want

    def drain(self):
        """Read the rest of the file (read errors and the size bound come before parse errors)."""
        if self.broken:
            return
        sink = np.empty(1 << 20, np.uint8)
        while self._stream_read(sink):
            pass

    def line(self, st):
        """The event line ``buf[st[A]:st[B]]`` as the Python readers see it (decoded, stripped)."""
        return bytes(self.buf[st[P.A]:st[P.B]]).decode("utf-8", errors="replace").strip()


def new_state():
    """A fresh kernel state (`ir_graph.formats.line_protocol` slots): nothing read, no
    error, no stop, lines of at most `MAX_LINE` bytes."""
    st = np.zeros(P.NSLOTS, np.int64)
    st[P.LEVEL] = P.NO_ERROR
    st[P.STOP] = -1
    st[P.MAXLEN] = MAX_LINE
    return st


def consume(st):
    """Skip the event line."""
    st[P.POS] = st[P.NEXT]
    st[P.LINE] = st[P.EVLINE]


def capacity(c, hint=None):
    """First length of entry arrays: ``hint`` (a header's count) bounded by the text's size / 4."""
    est = c.text_bytes // 4 + 1024
    return int(est if hint is None or hint < 0 else max(min(est, hint), 16))


class GrowingArray:
    """A typed array that grows without copying and takes memory only where written.

    It lives in an anonymous private memory map, moved by ``mremap`` when it
    grows (`mmap.mmap.resize`); pages never written are never allocated, so
    a generous length costs address space only. ``a`` is the current numpy
    array: take it afresh after `grow` (a view kept across `grow` stops the
    map from moving: ``BufferError``).
    """

    def __init__(self, path, dtype, n):
        self.path = path
        self.dtype = np.dtype(dtype)
        self._fd = spill_file()  # --spill: the array is a spill file (vcut_base.arrays)
        self._mm = self._map(max(int(n), 1))
        self.a = np.frombuffer(self._mm, self.dtype)

    def __len__(self):
        return len(self.a)

    def __del__(self):
        if getattr(self, "_fd", None) is not None:
            os.close(self._fd)
            self._fd = None

    def _map(self, n):
        size = n * self.dtype.itemsize
        if self._fd is not None:
            return map_reserved(self._fd, size)
        try:
            mm = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE)
        except OSError:  # address space refused (strict overcommit, a ulimit)
            raise InputTooLarge(f"{self.path}: reading {n:,} entries needs {format_bytes(size)} of "
                                "address space, more than this machine gives; use a machine with "
                                "more memory or a smaller graph") from None
        if hasattr(mmap, "MADV_HUGEPAGE"):
            mm.madvise(mmap.MADV_HUGEPAGE)  # fewer page faults, as numpy does for large arrays
        return mm

    def grow(self, need):
        """Make room for at least ``need`` entries (twice the length, or more); contents kept."""
        need = int(need)
        if self._fd is None:
            check_memory((need - len(self.a)) * self.dtype.itemsize,
                         f"{self.path}: reading {need:,} entries",
                         "use a machine with more memory or a smaller graph", error=InputTooLarge)
        self._resize(max(need, 2 * len(self.a)))

    def _resize(self, n):
        self.a = None
        if self._fd is not None and n * self.dtype.itemsize > len(self._mm):
            reserve(self._fd, n * self.dtype.itemsize)
        try:
            self._mm.resize(n * self.dtype.itemsize)
        except (OSError, SystemError, BufferError):  # no mremap, it failed, or a view of the
            # map is still referenced (a profiler's frame: Dask samples worker threads' stacks)
            new = self._map(n)
            keep = min(len(self._mm), len(new))
            new[:keep] = self._mm[:keep]
            try:
                self._mm.close()
            except BufferError:
                pass  # unmapped when the last view goes
            self._mm = new
        self.a = np.frombuffer(self._mm, self.dtype)

    def done(self, count):
        """The first ``count`` entries as an array; the rest of the map is given back."""
        if not count:
            self.a = None
            return np.empty(0, self.dtype)
        self._resize(int(count))
        out, self.a = self.a, None
        return out


def grow(need, *arrays):
    """Grow each `GrowingArray` of ``arrays`` shorter than ``need`` entries."""
    for x in arrays:
        if len(x) < need:
            x.grow(need)


def run_kernel(kernel, c, st, *args):
    """Call ``kernel`` until it returns something other than `NEED` before the end.

    Raises
    ------
    GraphFormatError
        A line longer than ``st[MAXLEN]`` (`LONG`): the rest of the file is not read.
    """
    while True:
        status = kernel(c.buf, c.filled, c.final, st, *args)
        if status == P.NEED and not c.final:
            c.refill(st)
            continue
        if status == P.UNSUPPORTED:
            raise Unsupported(c.path)
        if status == P.LONG:
            c.broken = True  # refused now: not read to its end first (a gzip bomb)
            pos = int(st[P.POS])
            raise GraphFormatError(long_line_message(c.path, int(st[P.LINE]) + 1,
                                                     c.buf[pos:pos + QUOTE_CHARS],
                                                     int(st[P.MAXLEN]),
                                                     _KERNEL_FORMATS.get(kernel)))
        return status


_KERNEL_FORMATS = {edgelist_lines: "edgelist", metis_lines: "metis", mtx_lines: "mtx",
                   lg_lines: "lg"}


def reraise(fn, *args):
    """Call a Python line check that must refuse the line; `Unsupported` if it accepts it."""
    fn(*args)
    raise Unsupported("kernel and Python reader disagree")


def entry_lines(c, st, call, arrays):
    """Run a body-line kernel (Matrix Market entries, LG edges) to the end of the file.

    ``call()`` gives ``(kernel, *args)`` with the arrays as they are now
    (they move when they grow); ``arrays`` grow together on `FULL`. After the
    first bad line (a `K_BAD` event) the other lines are only counted in
    ``st[BODY]``. Returns ``(line number, text)`` of that bad line, or None.
    """
    bad = None
    while True:
        kernel, *args = call()
        status = run_kernel(kernel, c, st, *args)
        del args  # views of the arrays: a memory map cannot grow while they live
        if status == P.NEED:
            return bad
        if status == P.FULL:
            grow(st[P.REQ_E], *arrays)
            continue
        bad = (int(st[P.EVLINE]), c.line(st))
        st[P.LEVEL] = 1
        consume(st)
        st[P.BODY] += 1
