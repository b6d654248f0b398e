"""The event channel between vcut and a traced program: shared buffers, a pipe of tokens.

The instrumented program (the runtime of `frontend._runtime_ir`) fills one of
two event buffers in memory shared with vcut (`shared_buffer`; layout:
`buffer_offset`), then sends a 16-byte token ``key, sequence number`` down a
pipe and goes on in the other buffer once vcut acknowledges. `EventChannel`,
a thread of the run (`frontend.run`), checks each token and its chunk and
appends the events to a file; `collect_events` reads them back at the end,
with the events of a program that left through ``_exit`` recovered from the
buffer it was filling (`recover_events`). Bytes the program writes into the
pipe itself are detected and refuse the trace.
"""

import mmap
import os
import random
import resource
import struct
import tempfile
import threading

import numpy as np

from vcut_base.atomic import write_failure
from vcut_base.errors import OutputError, ProgramError

from ._runtime_ir import CHUNK_HEADER_WORDS
from .events import END_RECOVERED, EV_END, EVENT_WORDS, EXIT_WRITE_FAILED, header

__all__ = ["SHM_PREFIX_WORDS", "buffer_offset", "shm_bytes", "EventChannel", "shared_buffer",
           "recover_events", "channel_fds", "collect_events"]

#: Words before the event buffer in the shared file (see `frontend._child`).
SHM_PREFIX_WORDS = 8


def buffer_offset(chunk, capacity):
    """Byte offset of the header of the shared buffer that holds ``chunk``.

    The shared memory is `SHM_PREFIX_WORDS` words (word 1: nanoseconds in
    main, word 2: failed allocations, word 3: the chunk the current buffer
    fills), then two buffers, each its header, ``capacity`` event words and
    one word for the zero after the last event. The only definition of the
    layout: the child gets its offsets from the spec.
    """
    return (SHM_PREFIX_WORDS + (chunk % 2) * (capacity + CHUNK_HEADER_WORDS + 1)) * 8


def shm_bytes(capacity):
    """Size of the shared memory: the prefix only when ``capacity`` < 1 (a plain run)."""
    if capacity < 1:
        return SHM_PREFIX_WORDS * 8
    return buffer_offset(1, capacity) + (capacity + CHUNK_HEADER_WORDS + 1) * 8


class EventChannel(threading.Thread):
    """Receive the program's chunks, check them, and append their events to a file.

    For each 16-byte token ``key, sequence number`` read from the pipe, the
    chunk's header in the shared buffer must carry the same key and number,
    a payload no larger than the buffer and a final flag of 0 or 1; the
    payload is then written to the events file straight from the shared
    memory and the chunk acknowledged (the program may reuse that buffer).
    Anything else (a wrong key or number, a cut token, a token after the
    final chunk) marks the channel ``tampered``; the pipe is then read to its
    end and dropped, so the program never blocks. A write to the events file
    that fails (a full disk) is kept in ``failed`` and ends the channel the
    same way.
    """

    def __init__(self, fd, ack_fd, shm_fd, path, key, capacity):
        super().__init__(daemon=True)
        self.fd, self.ack_fd, self.path, self.key = fd, ack_fd, path, key
        self.capacity = capacity
        self.shm = mmap.mmap(shm_fd, shm_bytes(capacity), prot=mmap.PROT_READ)
        self.chunks = 0
        self.words = 0
        self.final = False
        self.tampered = None
        self.failed = None

    def _read_exact(self, n):
        got = 0
        parts = []
        while got < n:
            data = os.read(self.fd, n - got)
            if not data:
                break
            got += len(data)
            parts.append(data)
        return got, b"".join(parts)

    def run(self):
        view = memoryview(self.shm)
        try:
            with open(self.path, "wb", buffering=0) as out:
                while self.tampered is None:
                    got, raw = self._read_exact(16)
                    if got == 0:
                        break
                    self.tampered = self._take(got, raw, view, out)
        except OSError as exc:  # the events file cannot grow: the run fails with it
            self.failed = exc.with_traceback(None)  # whose frames hold views of the buffer
        finally:
            while os.read(self.fd, 1 << 16):
                pass
            os.close(self.fd)
            os.close(self.ack_fd)
            view.release()
            self.shm.close()

    def _take(self, got, raw, view, out):
        """Check one token and its chunk, copy the chunk; what is wrong, or None."""
        if got < 16:
            return f"a cut token after chunk {self.chunks}"
        key, seq = struct.unpack("<2Q", raw)
        if self.final:
            return "a token after the final chunk"
        if key != self.key:
            return f"bytes that are not a chunk token after chunk {self.chunks}"
        if seq != self.chunks:
            return f"chunk number {seq} where {self.chunks} was due"
        at = buffer_offset(seq, self.capacity)
        hkey, hseq, words, final = struct.unpack_from("<4Q", view, at)
        if hkey != key or hseq != seq or words > self.capacity or final > 1:
            return f"a damaged chunk header (chunk {seq})"
        start = at + CHUNK_HEADER_WORDS * 8
        data = view[start: start + words * 8]
        while data:
            data = data[out.write(data):]
        self.chunks += 1
        self.words += words
        self.final = bool(final)
        try:
            os.write(self.ack_fd, struct.pack("<Q", seq))
        except OSError:  # the program is gone
            pass
        return None


def shared_buffer(words):
    """Zeroed shared memory: the prefix, and (``words`` > 0) two event buffers (a memfd)."""
    try:
        fd = os.memfd_create("vcut-events", os.MFD_CLOEXEC)
    except (AttributeError, OSError):  # no memfd: an unlinked file in /dev/shm or the tmpdir
        base = "/dev/shm" if os.path.isdir("/dev/shm") else None
        fd, path = tempfile.mkstemp(prefix="vcut-events-", dir=base)
        os.unlink(path)
    try:
        os.ftruncate(fd, shm_bytes(words))
    except OSError as exc:
        os.close(fd)
        raise OutputError(f"cannot make the {shm_bytes(words):,}-byte event buffer shared "
                          f"with the program: {exc.strerror}{write_failure(exc, elsewhere=None)}"
                          ) from None
    return fd


def recover_events(shm_fd, capacity, chunks):
    """Events the program wrote but did not send (it left through ``_exit``).

    The complete events at the start of the buffer that was filling chunk
    ``chunks`` (up to the first zero header or a kind that cannot be), or
    None when the program did not get as far as filling it (shared word 3).
    """
    if int(np.frombuffer(os.pread(shm_fd, 8, 24), dtype="<u8")[0]) != chunks:
        return None
    at = buffer_offset(chunks, capacity) + CHUNK_HEADER_WORDS * 8
    data = np.frombuffer(os.pread(shm_fd, (capacity + 1) * 8, at), dtype="<u8")
    kinds = (data & 0xFF).astype(np.int64)
    pos, n = 0, len(data)
    sizes = np.asarray(EVENT_WORDS)
    while pos < n:
        kind = int(kinds[pos])
        if kind == 0 or kind >= len(sizes) or kind == EV_END or pos + sizes[kind] > n:
            break
        pos += int(sizes[kind])
    return data[:pos]


def channel_fds(avoid):
    """Two distinct random descriptor numbers in the upper half of the usual range (<= 1023)
    for the event pipe and its acknowledgements in the program, none of ``avoid``."""
    soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    top = 1024 if soft == resource.RLIM_INFINITY else min(int(soft), 1024)
    free = sorted(set(range(max(top // 2, 10), top)) - set(avoid))
    return random.SystemRandom().sample(free, 2)


def collect_events(channel, paths, shm_fd, words, code, fd):
    """The checked event stream; END(recovered) appended when the program used ``_exit``."""
    if channel.tampered is not None:
        raise ProgramError(
            f"the program wrote into vcut's event channel (file descriptor {fd}): "
            f"{channel.tampered}; the trace cannot be trusted. Do not write to descriptors the "
            "program did not open"
        )
    if code == EXIT_WRITE_FAILED and not channel.final:
        raise ProgramError(
            f"the program closed or replaced vcut's event channel (file descriptor {fd}), so "
            "the trace could not be sent; do not close descriptors the program did not open"
        )
    events = np.fromfile(paths["events"], dtype="<u8")
    if channel.final:
        return events
    tail = recover_events(shm_fd, words, channel.chunks)
    if tail is None:
        return events
    end = np.array([header(END_RECOVERED, EV_END)], dtype=np.uint64)
    return np.concatenate([events, tail, end])
