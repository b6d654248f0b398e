"""Scratch directories that a killed vcut does not leave behind for long.

Every temporary directory vcut makes is named ``vcut-KIND-PID-XXXX`` in the
system's temporary directory. A ``kill -9`` cannot be cleaned up after, so
each new one first removes those of vcut processes that no longer exist
(only the caller's own, only directories).

What a traced program wrote lies in these directories (the namespace level's
overlay), so every walk over them here (`walk_files`, the removal) goes
through directory descriptors and never follows a symbolic link: a link the
program made to a host directory is removed as a link, never entered,
listed as a file or changed through.
"""

import contextlib
import os
import secrets
import stat
import tempfile

__all__ = ["scratch_dir", "remove_stale", "process_alive", "walk_files", "open_dir", "MAX_DEPTH"]

#: Flags of every directory opened here: never through a link, never a terminal or FIFO.
DIR_FLAGS = (os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_NONBLOCK
             | getattr(os, "O_CLOEXEC", 0))
#: Directories open at once while a tree is walked (one per level); a deeper tree is
#: listed to this depth (`walk_files`) or removed in several passes (`_remove`).
MAX_DEPTH = 128


@contextlib.contextmanager
def scratch_dir(kind):
    """A fresh ``vcut-KIND-PID-*`` directory, removed on exit (whatever the kernel left in it).

    Parameters
    ----------
    kind : str
        A word naming the user (``run``, ``cc``, ``probe``).
    """
    remove_stale()
    # fixed width: the spec path, and with it the child's stack start (so the traced
    # addresses), must not depend on how many digits the pid has
    path = tempfile.mkdtemp(prefix=f"vcut-{kind}-{os.getpid():07d}-")
    try:
        yield path
    finally:
        _remove(path)


def remove_stale():
    """Delete the scratch directories of vcut processes that were killed."""
    base = tempfile.gettempdir()
    try:
        names = os.listdir(base)
    except OSError:
        return
    me = os.getpid()
    for name in names:
        parts = name.split("-")
        if len(parts) != 4 or parts[0] != "vcut" or not parts[2].isdigit():
            continue
        pid = int(parts[2])
        if pid == me or process_alive(pid):
            continue
        path = os.path.join(base, name)
        try:
            st = os.lstat(path)
        except OSError:
            continue
        if os.path.isdir(path) and not os.path.islink(path) and st.st_uid == os.getuid():
            _remove(path)


def process_alive(pid):
    """Whether process ``pid`` exists and is not a zombie (in doubt: alive).

    Used to tell the leftovers of a killed vcut (scratch directories here,
    output temporaries in `vcut_base.atomic`) from those of a running one.
    """
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except (OSError, IndexError):
        return True


def open_dir(name, dir_fd=None):
    """Open the directory ``name`` (relative to ``dir_fd``) without following a link.

    Raises
    ------
    OSError
        ``name`` is a symbolic link (``ELOOP``), not a directory, or cannot be opened.
    """
    return os.open(name, DIR_FLAGS, dir_fd=dir_fd)


def walk_files(top, too_deep=None):
    """The regular files under the directory ``top``, found without following any link.

    Symbolic links, devices, FIFOs and sockets are skipped; directories that
    cannot be opened are skipped; directories more than `MAX_DEPTH` levels
    down are not entered (their relative paths are appended to ``too_deep``).

    Yields
    ------
    rel : str
        The file's path relative to ``top``.
    dir_fd : int
        A descriptor of its directory, open while the caller handles the item.
    name : str
        Its name in that directory.
    st : os.stat_result
        Its ``lstat``.
    """
    try:
        fd = open_dir(top)
    except OSError:
        return
    stack = [(fd, "", iter(_names(fd)))]
    try:
        while stack:
            fd, rel, names = stack[-1]
            for name in names:
                try:
                    st = os.stat(name, dir_fd=fd, follow_symlinks=False)
                except OSError:
                    continue
                path = os.path.join(rel, name)
                if stat.S_ISREG(st.st_mode):
                    yield path, fd, name, st
                elif stat.S_ISDIR(st.st_mode):
                    if len(stack) > MAX_DEPTH:
                        if too_deep is not None:
                            too_deep.append(path)
                        continue
                    try:
                        sub = open_dir(name, fd)
                    except OSError:
                        continue
                    stack.append((sub, path, iter(_names(sub))))
                    break
            else:
                os.close(stack.pop()[0])
    finally:
        for fd, _, _ in stack:
            os.close(fd)


def _names(fd):
    try:
        return os.listdir(fd)
    except OSError:
        return []


def _remove(path):
    """Delete the directory tree ``path`` (not a link), whatever the program left in it.

    Nothing in it is followed: each entry is ``lstat``-ed through its
    directory's descriptor, a non-directory (a link too) is unlinked, a
    directory is made ``rwx`` for its owner through a call that does not
    follow links (an overlay's work directory is left mode 000 by the
    kernel, and a program may make its own), opened with ``O_NOFOLLOW`` and
    emptied the same way. A subtree deeper than `MAX_DEPTH` is moved up into
    ``path`` and removed in a later pass, so the number of open descriptors
    stays bounded. Errors are ignored (what cannot be removed stays).
    """
    try:
        top = open_dir(path)
    except OSError:
        return
    try:
        while _remove_pass(top):
            pass
    finally:
        os.close(top)
    with contextlib.suppress(OSError):
        os.rmdir(path)


def _remove_pass(top):
    """Remove what lies in ``top`` down to `MAX_DEPTH`; whether deeper subtrees were moved up."""
    moved = False
    stack = [(top, iter(_names(top)), None)]  # (descriptor, names left, name in the parent)
    try:
        while stack:
            fd, names, _ = stack[-1]
            for name in names:
                try:
                    st = os.stat(name, dir_fd=fd, follow_symlinks=False)
                except OSError:
                    continue
                if not stat.S_ISDIR(st.st_mode):
                    with contextlib.suppress(OSError):
                        os.unlink(name, dir_fd=fd)
                elif len(stack) > MAX_DEPTH:
                    moved |= _move_up(fd, name, top)
                else:
                    sub = _open_owned_dir(fd, name, st)
                    if sub is not None:
                        stack.append((sub, iter(_names(sub)), name))
                        break
            else:
                _, _, name = stack.pop()
                if stack:
                    os.close(fd)
                    with contextlib.suppress(OSError):
                        os.rmdir(name, dir_fd=stack[-1][0])
    finally:
        for fd, _, _ in stack[1:]:
            os.close(fd)
    return moved


def _open_owned_dir(dir_fd, name, st):
    """Open the directory ``name`` (``st``: its lstat), first giving its owner ``rwx``."""
    if st.st_mode & 0o700 != 0o700:
        # fchmodat(AT_SYMLINK_NOFOLLOW): a link swapped in meanwhile is refused, not followed
        with contextlib.suppress(OSError, ValueError, NotImplementedError):
            os.chmod(name, 0o700, dir_fd=dir_fd, follow_symlinks=False)
    try:
        return open_dir(name, dir_fd)
    except OSError:
        return None


def _move_up(dir_fd, name, top):
    """Move the directory ``name`` into ``top`` under a new name; whether it moved."""
    for _ in range(8):
        new = f".vcut-deep-{secrets.token_hex(8)}"
        try:
            os.stat(new, dir_fd=top, follow_symlinks=False)
            continue
        except FileNotFoundError:
            pass
        except OSError:
            return False
        try:
            os.rename(name, new, src_dir_fd=dir_fd, dst_dir_fd=top)
            return True
        except OSError:
            return False
    return False
