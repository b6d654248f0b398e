"""Safe file output: regular files replaced atomically, streams written through.

What an output path may name (every ``-o`` of the command line follows this):

* ``-``: standard output, written through;
* a FIFO, a character device (``/dev/null``, a terminal) or a name of an open
  descriptor (``/dev/stdout``, ``/dev/fd/N``, ``/proc/self/fd/N``): opened and
  written through, as the shell's ``>`` would; never replaced;
* a symbolic link: followed; its final target (a regular file, or a name that
  does not exist yet) is written as below and the link itself stays;
* a regular file or a new name: written to a temporary file
  ``.vcut-<pid>-<12 hex digits>.tmp`` in the target's directory, then renamed
  over the target, so the target is either the old file or the complete new
  one. Temporaries left by a vcut that was killed (its process is gone) are
  removed by the next write into that directory;
* a directory, a block device, a socket or a symlink loop: refused.

`check_outputs` also refuses an output that is one of the command's inputs
(the same file, through symbolic or hard links too) and two outputs that name
one file, before any work is done.

A write that fails (a full disk or quota, ``ulimit -f``, an I/O error) is one
`OutputError` line naming the outputs, the system's reason and, for a full
disk or a size limit, what to do (`write_failure`); the temporary files are
removed and every target is left as it was.
"""

import contextlib
import errno
import os
import re
import secrets
import signal
import stat
import sys
import threading

from .errors import OutputError
from .scratch import process_alive

__all__ = ["atomic_output", "atomic_outputs", "check_output_path", "check_outputs", "signals_held",
           "output_kind", "remove_stale_temps", "write_failure", "TEMP_PATTERN"]

#: Names of the temporary files vcut makes (and the only ones it removes).
TEMP_PATTERN = re.compile(r"\.vcut-([0-9]+)-[0-9a-f]{12}\.tmp")

_FD_DIR = re.compile(r"/proc/(?:self|thread-self|[0-9]+)(?:/task/[0-9]+)?/fd")
_MAX_LINKS = 40


def output_kind(path):
    """How ``path`` is written: ``"file"`` (atomically), ``"stream"`` or ``"stdout"``.

    Raises
    ------
    OutputError
        ``path`` names a directory, a block device, a socket or a symlink loop.
    """
    return _target(os.fspath(path))[0]


def check_output_path(path):
    """Raise `OutputError` unless ``path`` can be written (see the module docstring)."""
    path = os.fspath(path)
    kind, real = _target(path)
    if kind != "file":
        return
    directory = os.path.dirname(real) or "."
    if not os.path.isdir(directory):
        raise OutputError(f"cannot write {path}: directory {directory} does not exist")
    if not os.access(directory, os.W_OK):
        raise OutputError(f"cannot write {path}: directory {directory} is not writable")


def check_outputs(outputs, inputs=(), stdout_use=None):
    """Check a command's outputs before it does any work.

    Parameters
    ----------
    outputs : iterable of str or None
        The paths the command will write (``None`` entries are skipped).
    inputs : iterable of str or None
        Every file the command reads; ``None``, ``-`` and names that do not
        exist are skipped.
    stdout_use : str, optional
        What else the command prints on standard output (``"the JSON
        summary"``); then ``-`` and names of our standard output are refused.

    Raises
    ------
    OutputError
        An output cannot be written, is one of the inputs, names the same file
        as another output, or is standard output while it is in use.
    """
    seen = {}
    for out in outputs:
        if out is None:
            continue
        out = os.fspath(out)
        check_output_path(out)
        kind, real = _target(out)
        if stdout_use and (kind == "stdout" or (kind == "stream" and _is_our_stdout(out))):
            raise OutputError(f"cannot write {out}: standard output carries {stdout_use}; "
                              "give a file name")
        ident = _identity(kind, real)
        if ident in seen:
            raise OutputError(f"outputs {seen[ident]} and {out} are the same file; "
                              "give different paths")
        seen[ident] = out
        if kind == "stdout" or _is_char_device(real):
            continue  # writing a terminal or /dev/null destroys no input
        for inp in inputs:
            if inp is None or inp == "-":
                continue
            if _same_file(real, os.fspath(inp)):
                raise OutputError(f"output {out} is the input {inp} (the same file); give "
                                  "another output path: vcut never overwrites its inputs")


@contextlib.contextmanager
def atomic_output(path, mode="wb"):
    """Open ``path`` for writing; a regular file is replaced only on success.

    A regular file (or a new name) is written to a temporary file beside it
    and renamed over it when the ``with`` block ends without an exception; on
    any exception the temporary file is removed and ``path`` is left as it
    was. FIFOs, character devices, descriptors and ``-`` are written through.

    Raises
    ------
    OutputError
        The path cannot be written (see `check_output_path`) or a write failed.
    """
    with atomic_outputs([(path, mode)]) as (fh,):
        yield fh


@contextlib.contextmanager
def atomic_outputs(items):
    """Open several outputs; replace the regular files among them together.

    Every temporary file is written completely before the first rename, so a
    failed or interrupted write (an exception, SIGINT, SIGTERM, a full disk,
    ``ulimit -f``) leaves every target as it was. The renames then run in the
    order of ``items`` with SIGINT and SIGTERM held back until the last one:
    only SIGKILL (or a crash of the machine) can fall between two renames, so
    put the file that readers check the others against last.

    Parameters
    ----------
    items : sequence of (path, mode)

    Yields
    ------
    list of file objects, in the order of ``items``
    """
    items = [(os.fspath(p), m) for p, m in items]
    for path, _ in items:
        check_output_path(path)
    names = ", ".join(p for p, _ in items)
    opened = []  # (file object, temporary path or None, target, close it)
    temps = []  # every temporary name, listed before it is created
    try:
        try:
            for path, mode in items:
                kind, real = _target(path)
                if kind == "stdout":
                    opened.append((sys.stdout.buffer if "b" in mode else sys.stdout, None, path, False))
                elif kind == "stream":
                    opened.append((open(path, mode), None, path, True))
                else:
                    fh = _create_temp(os.path.dirname(real) or ".", mode, temps)
                    opened.append((fh, temps[-1], real, True))
            yield [fh for fh, _, _, _ in opened]
            for fh, _, _, close in opened:
                fh.close() if close else fh.flush()
            with signals_held():
                for _, tmp, real, _ in opened:
                    if tmp is not None:
                        _refuse_special(real, names)
                        os.replace(tmp, real)
        except OSError as exc:
            where = sorted({os.path.dirname(real) for _, tmp, real, _ in opened if tmp})
            raise OutputError(f"cannot write {names}: {exc.strerror or exc}; nothing was "
                              f"replaced{write_failure(exc, where, 'give another output path')}"
                              ) from None
    finally:
        for fh, _, _, close in opened:
            if close:
                with contextlib.suppress(OSError):
                    fh.close()
        for tmp in temps:
            _remove(tmp)


def write_failure(exc, where=(), elsewhere="write elsewhere"):
    """What to do about a failed write, as ``"; ..."`` to end a message (or ``""``).

    Parameters
    ----------
    exc : OSError
        The failure.
    where : sequence of str
        The directories written to (named for a full disk).
    elsewhere : str or None
        The other way out, as the caller's user takes it (``"give another
        output path"``); None when there is none.

    Returns
    -------
    str
        For ``ENOSPC`` / ``EDQUOT``: free space in ``where``; for ``EFBIG``:
        raise the file size limit; nothing for other errors.

    Examples
    --------
    >>> write_failure(OSError(errno.ENOSPC, "No space left on device"), ["/data"])
    '; free space in /data or write elsewhere'
    >>> write_failure(OSError(errno.EFBIG, "File too large"), elsewhere=None)
    '; raise the file size limit (ulimit -f)'
    """
    other = f" or {elsewhere}" if elsewhere else ""
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return f"; free space{' in ' + ', '.join(where) if where else ''}{other}"
    if exc.errno == errno.EFBIG:
        return f"; raise the file size limit (ulimit -f){other}"
    return ""


def _target(path):
    """``(kind, path to write)`` of an output path; refuses what is never written."""
    if path == "-":
        return "stdout", path
    if _names_descriptor(path):
        return "stream", path
    real = os.path.realpath(path) if os.path.islink(path) else os.path.abspath(path)
    if os.path.islink(real):
        raise OutputError(f"cannot write {path}: too many levels of symbolic links; "
                          "give a plain file name")
    try:
        st = os.stat(real)
    except (FileNotFoundError, NotADirectoryError):
        return "file", real
    except OSError as exc:
        raise OutputError(f"cannot write {path}: {exc.strerror}") from None
    if stat.S_ISREG(st.st_mode):
        return "file", real
    if stat.S_ISFIFO(st.st_mode) or stat.S_ISCHR(st.st_mode):
        return "stream", real
    if stat.S_ISDIR(st.st_mode):
        raise OutputError(f"output path {path} is a directory; give a file name")
    what = "block device" if stat.S_ISBLK(st.st_mode) else "socket" if stat.S_ISSOCK(
        st.st_mode) else "special file"
    raise OutputError(f"cannot write {path}: it is a {what}; give a regular file, a FIFO, "
                      "a character device or - (standard output)")


def _names_descriptor(path):
    """Whether ``path`` (through its links) is an entry of a ``/proc/PID/fd`` directory."""
    p = os.path.abspath(path)
    for _ in range(_MAX_LINKS):
        directory = os.path.realpath(os.path.dirname(p))
        if _FD_DIR.fullmatch(directory):
            return True
        if not os.path.islink(p):
            return False
        try:
            p = os.path.join(directory, os.readlink(p))
        except OSError:
            return False
    return False


def _identity(kind, real):
    if kind == "stdout":
        return ("stdout",)
    try:
        st = os.stat(real)
        return (st.st_dev, st.st_ino)
    except OSError:
        return ("path", os.path.realpath(real))


def _same_file(a, b):
    try:
        return os.path.samefile(a, b)
    except (OSError, ValueError):
        return False


def _is_char_device(path):
    try:
        return stat.S_ISCHR(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def _is_our_stdout(path):
    try:
        a, b = os.stat(path), os.fstat(1)
    except OSError:
        return False
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def _refuse_special(real, names):
    """Never rename over something that became a non-regular file meanwhile."""
    try:
        st = os.lstat(real)
    except FileNotFoundError:
        return
    if not stat.S_ISREG(st.st_mode):
        raise OutputError(f"cannot write {names}: {real} is no longer a regular file; "
                          "nothing was replaced")


def _create_temp(directory, mode, temps):
    """Open a new ``.vcut-<pid>-<hex>.tmp`` in ``directory`` (after removing stale ones).

    Its name is appended to ``temps`` before it is created, so that an
    interrupt at any point leaves the caller able to remove it.
    """
    remove_stale_temps(directory)
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
    while True:
        temps.append(os.path.join(directory, f".vcut-{os.getpid()}-{secrets.token_hex(6)}.tmp"))
        try:
            fd = os.open(temps[-1], flags, 0o666)  # the umask gives outputs their usual mode
        except FileExistsError:
            temps.pop()  # someone else's file: never removed
            continue
        try:
            return os.fdopen(fd, mode)
        except BaseException:
            os.close(fd)
            raise


def remove_stale_temps(directory):
    """Remove the temporaries of vcut processes that no longer run from ``directory``.

    Only regular files whose name matches `TEMP_PATTERN` exactly are touched;
    returns their names.
    """
    try:
        names = os.listdir(directory)
    except OSError:
        return []
    removed = []
    for name in names:
        m = TEMP_PATTERN.fullmatch(name)
        if not m or int(m.group(1)) == os.getpid() or process_alive(int(m.group(1))):
            continue
        path = os.path.join(directory, name)
        try:
            if stat.S_ISREG(os.lstat(path).st_mode):
                os.unlink(path)
                removed.append(name)
        except OSError:
            pass
    return removed


@contextlib.contextmanager
def signals_held():
    """Hold SIGINT and SIGTERM back for the block; deliver them after it.

    Yields the list of the signals caught meanwhile, so that a long block can
    stop early at a point of its choosing. Outside the main thread nothing is
    held (Python delivers signals to the main thread only) and the list stays
    empty.
    """
    if threading.current_thread() is not threading.main_thread():
        yield []
        return
    caught = []
    held = (signal.SIGINT, signal.SIGTERM)
    previous = {s: signal.signal(s, lambda signum, frame: caught.append(signum)) for s in held}
    try:
        yield caught
    finally:
        for s, handler in previous.items():
            signal.signal(s, signal.SIG_DFL if handler is None else handler)
        for s in caught:
            signal.raise_signal(s)


def _remove(tmp):
    with contextlib.suppress(FileNotFoundError):
        os.unlink(tmp)
