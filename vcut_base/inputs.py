"""Input files: refuse what is not a regular file, read with a bounded size.

Every reader of a user's file (graphs, traces, partitions, machines, C and
LLVM IR sources) goes through `check_input_file` first: a directory, FIFO,
socket or device (``/dev/zero``, ``/dev/stdin``) is refused with one line
instead of hanging or reading forever. `read_input` then reads the whole
file, decompressing ``.gz`` in chunks and stopping at a size bound so that a
gzip bomb costs at most the bound, not the host's memory; `InputStream`
reads it piece by piece with the same checks and messages. A file past the
bound is `InputTooLarge` (exit 2) whatever the reader, as every input that
needs more memory than the machine has (`vcut_base.errors`).
"""

import gzip
import os
import stat
import zlib

from .errors import InputError, InputTooLarge
from .memory import available_bytes, format_bytes

__all__ = ["check_input_file", "read_input", "InputStream", "text_limit", "TEXT_MEMORY_FACTOR"]

#: A text reader holds several times the text's size in Python objects; the
#: default size bound of `read_input` is the available memory over this.
TEXT_MEMORY_FACTOR = 16

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def check_input_file(path, what, error=InputError, missing=InputError):
    """Check that ``path`` is an existing regular file; return its ``os.stat``.

    Parameters
    ----------
    path : str or os.PathLike
    what : str
        What the file should be, for the message (``"graph file"``).
    error : type
        Exception class for a file that cannot be examined.
    missing : type
        Exception class for a path that names no file or not a regular file
        (default `InputError`: the argument is wrong).

    Raises
    ------
    missing
        The file does not exist, or is a directory, FIFO, socket or device.
    error
        It cannot be examined (permissions, a loop of links, ...).
    """
    path = os.fspath(path)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise missing(f"{what} not found: {path}") from None
    except (OSError, ValueError) as exc:
        raise error(f"cannot open {what} {path}: {getattr(exc, 'strerror', None) or exc}") from None
    if not stat.S_ISREG(st.st_mode):
        kind = next((name for test, name in _KINDS if test(st.st_mode)), "not a regular file")
        raise missing(f"{what} {path} is {kind}, not a regular file; give the path of a file")
    return st


def text_limit():
    """Default size bound of `read_input`: the available memory / `TEXT_MEMORY_FACTOR`."""
    return max(available_bytes() // TEXT_MEMORY_FACTOR, 1 << 20)


def read_input(path, what, error=InputError, *, limit=None, missing=InputError):
    """The bytes of a regular file, ``.gz`` decompressed, at most ``limit`` bytes.

    Parameters
    ----------
    path : str
    what : str
        What the file is, for messages.
    error : type
        Exception class of unreadable content.
    limit : int, optional
        Largest (decompressed) size accepted; default `text_limit`.
    missing : type
        Exception class of a missing or non-regular file.

    Raises
    ------
    missing
        Missing file, or not a regular file.
    error
        Unreadable or corrupt gzip data.
    InputTooLarge
        Larger than ``limit`` (decompressed).
    """
    with InputStream(path, what, error, limit=limit, missing=missing) as stream:
        return stream.read()


_READ_ERRORS = (OSError, EOFError, zlib.error)


def _too_big(path, what, limit):
    return (f"{what} {path} is larger than {format_bytes(limit)}"
            f"{' decompressed' if path.endswith('.gz') else ''}, more than this machine's "
            "memory allows reading; use a smaller file or a machine with more memory")


def _cannot_read(path, what, exc):
    return f"{what} {path}: cannot read: {getattr(exc, 'strerror', None) or exc}"


class InputStream:
    """A regular file's bytes, ``.gz`` decompressed, read piece by piece.

    The checks and messages of `read_input`, without holding the file: the
    path is checked when the stream is made, a plain file larger than
    ``limit`` is refused before anything is read, and a ``.gz`` is refused
    as soon as more than ``limit`` bytes come out of it. A context manager;
    `close` ends it.

    Parameters
    ----------
    path : str
    what : str
        What the file is, for messages.
    error : type
        Exception class of unreadable content.
    limit : int, optional
        Largest (decompressed) size accepted; default `text_limit`.
    missing : type
        Exception class of a missing or non-regular file.

    Attributes
    ----------
    total : int
        Bytes read so far (decompressed).
    size : int
        The file's size on disk.

    Raises
    ------
    missing
        Missing file, or not a regular file.
    error
        Unreadable.
    InputTooLarge
        A plain file larger than ``limit``.
    """

    def __init__(self, path, what, error=InputError, *, limit=None, missing=InputError):
        self.path = path = os.fspath(path)
        self.what = what
        self.error = error
        self.size = check_input_file(path, what, error, missing).st_size
        self.limit = text_limit() if limit is None else int(limit)
        self.total = 0
        self._gz = path.endswith(".gz")
        if not self._gz and self.size > self.limit:
            raise InputTooLarge(_too_big(path, what, self.limit))
        try:
            self._fh = gzip.open(path, "rb") if self._gz else open(path, "rb", buffering=0)
        except _READ_ERRORS as exc:
            raise error(_cannot_read(path, what, exc)) from None

    def readinto(self, view):
        """Fill the writable buffer ``view`` as far as the data go.

        Returns
        -------
        int
            Bytes written: ``len(view)`` except at the end of the data (0
            once everything is read).

        Raises
        ------
        error
            Unreadable or corrupt data.
        InputTooLarge
            A ``.gz`` past ``limit``.
        """
        view = memoryview(view).cast("B")
        got = 0
        try:
            while got < len(view):
                k = self._fh.readinto(view[got:])
                if not k:
                    break
                got += k
        except _READ_ERRORS as exc:
            raise self.error(_cannot_read(self.path, self.what, exc)) from None
        self.total += got
        if self._gz and self.total > self.limit:
            raise InputTooLarge(_too_big(self.path, self.what, self.limit))
        return got

    def read(self):
        """The rest of the data (a plain file: at most ``limit + 1`` bytes).

        Raises
        ------
        error
            Unreadable or corrupt data.
        InputTooLarge
            A ``.gz`` past ``limit``.
        """
        chunks = []
        try:
            while self._gz or self.total <= self.limit:
                chunk = self._fh.read(1 << 20 if self._gz else self.limit + 1 - self.total)
                if not chunk:
                    break
                self.total += len(chunk)
                if self._gz and self.total > self.limit:
                    raise InputTooLarge(_too_big(self.path, self.what, self.limit))
                chunks.append(chunk)
        except _READ_ERRORS as exc:
            raise self.error(_cannot_read(self.path, self.what, exc)) from None
        return b"".join(chunks)

    def close(self):
        """Close the file (idempotent)."""
        self._fh.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
