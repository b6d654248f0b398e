"""Scratch directories that a killed vcut does not leave behind for long.

Every temporary directory vcut makes is named ``vcut-KIND-PID-XXXX`` in the
system's temporary directory. A ``kill -9`` cannot be cleaned up after, so
each new one first removes those of vcut processes that no longer exist
(only the caller's own, only directories).
"""

import contextlib
import os
import shutil
import tempfile

__all__ = ["scratch_dir", "remove_stale", "process_alive"]


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
    output temporaries in `frontend.atomic`) from those of a running one.
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


def _remove(path):
    # an overlay's work directory is left mode 000 by the kernel
    for root, dirs, _ in os.walk(path):
        for d in dirs:
            try:
                os.chmod(os.path.join(root, d), 0o700)
            except OSError:
                pass
    shutil.rmtree(path, ignore_errors=True)
