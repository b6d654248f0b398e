"""Atomic file output: write to a temporary file beside the target, then rename."""

import contextlib
import os
import tempfile

from .errors import OutputError

__all__ = ["atomic_output", "check_output_path"]


def check_output_path(path):
    """Raise `OutputError` unless ``path`` can be created as a file."""
    path = os.fspath(path)
    directory = os.path.dirname(os.path.abspath(path)) or "."
    if os.path.isdir(path):
        raise OutputError(f"output path {path} is a directory; give a file name")
    if not os.path.isdir(directory):
        raise OutputError(f"cannot write {path}: directory {directory} does not exist")
    if not os.access(directory, os.W_OK):
        raise OutputError(f"cannot write {path}: directory {directory} is not writable")


@contextlib.contextmanager
def atomic_output(path, mode="wb"):
    """Open a temporary file for writing; on success rename it to ``path``.

    On any exception the temporary file is removed and ``path`` is left as it
    was, so a failed write never leaves a half-written output.

    Raises
    ------
    OutputError
        The directory does not exist or cannot be written.
    """
    path = os.fspath(path)
    check_output_path(path)
    directory = os.path.dirname(os.path.abspath(path))
    try:
        fd, tmp = tempfile.mkstemp(prefix=".vcut-", suffix=".tmp", dir=directory)
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc.strerror}; choose a writable location") from None
    try:
        os.chmod(tmp, 0o666 & ~_umask())  # mkstemp makes 0600; outputs get the usual mode
        with os.fdopen(fd, mode) as fh:
            yield fh
        os.replace(tmp, path)
    except OSError as exc:
        _remove(tmp)
        raise OutputError(f"cannot write {path}: {exc.strerror}") from None
    except BaseException:
        _remove(tmp)
        raise


def _umask():
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _remove(tmp):
    if os.path.exists(tmp):
        os.unlink(tmp)
