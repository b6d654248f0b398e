"""The files a traced program wrote in its working directory: listed, and copied on request.

At the namespace level the program's writes go to a private overlay
(`frontend._sandbox`); after the run `written_files` lists the regular files
of its upper directory and, with ``--keep-files DIR``, copies each into
``DIR`` without ever writing through a link (`_Keeper`).
"""

import contextlib
import errno
import os
import secrets
import shutil
import stat

from vcut_base.atomic import write_failure
from vcut_base.errors import OutputError
from vcut_base.scratch import MAX_DEPTH, open_dir, walk_files

__all__ = ["written_files"]


def written_files(upper, keep_files):
    """The program's regular files under the overlay's upper directory (never through a link).

    Returns ``(found, replaced, not_kept)``: ``found`` the ``(relative path,
    size)`` of each file, sorted; with ``keep_files``, each is copied there
    (`_Keeper`) and ``replaced`` / ``not_kept`` say what that changed or refused.
    """
    found, too_deep = [], []
    keeper = _Keeper(keep_files) if keep_files is not None else None
    try:
        for rel, dir_fd, name, st in walk_files(upper, too_deep):
            found.append((rel, st.st_size))
            if keeper is not None:
                keeper.keep(rel, dir_fd, name)
    finally:
        if keeper is not None:
            keeper.close()
    if keeper is None:
        return sorted(found), [], []
    not_kept = keeper.not_kept + [
        (rel, f"more than {MAX_DEPTH} directories deep in the working directory")
        for rel in too_deep]
    return sorted(found), sorted(keeper.replaced), sorted(not_kept)


class _Keeper:
    """Copy the program's files into ``--keep-files DIR`` without writing through a link.

    ``DIR`` itself is opened as named (following a link there is the
    user's choice); below it nothing is followed: a subdirectory the file
    needs is created, or opened with ``O_NOFOLLOW`` (a symbolic link or a
    non-directory in its place refuses that file, noted in ``not_kept``),
    and the file is copied into a new ``.vcut-PID-HEX.tmp`` made with
    ``O_EXCL|O_NOFOLLOW`` in that directory, then renamed over its name. A
    link (or FIFO, socket, device) of that name is thereby replaced, never
    written through, and noted in ``replaced``; a directory of that name
    refuses the file. A copy that fails (a full disk) is an `OutputError`;
    its temporary file is removed and the old entry stays.
    """

    def __init__(self, keep_files):
        self.top = keep_files
        self.replaced = []  # (relative path, what it was)
        self.not_kept = []  # (relative path, why)
        try:
            self.fd = os.open(keep_files, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError as exc:
            raise self._failure(exc, keep_files) from None

    def close(self):
        os.close(self.fd)

    def keep(self, rel, src_dir_fd, name):
        parts = rel.split(os.sep)
        dir_fd = self._subdir(rel, parts[:-1])
        if dir_fd is None:
            return
        try:
            self._copy(rel, src_dir_fd, name, dir_fd, parts[-1])
        finally:
            if dir_fd != self.fd:
                os.close(dir_fd)

    def _subdir(self, rel, parts):
        """A descriptor of ``DIR/parts`` (made where missing), or None when a link or a
        non-directory stands in the way (noted for the file ``rel``)."""
        fd = self.fd
        for k, part in enumerate(parts):
            where = os.path.join(self.top, *parts[: k + 1])
            try:
                sub = _open_or_make(part, fd)
            except OSError as exc:
                what = None
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    with contextlib.suppress(OSError):
                        what = _entry_kind(part, fd)
                if fd != self.fd:
                    os.close(fd)
                if what is None:
                    raise self._failure(exc, where) from None
                why = ("; vcut does not write through links" if what.startswith("symbolic link")
                       else ", not a directory")
                self.not_kept.append((rel, f"{where} is a {what}{why}"))
                return None
            if fd != self.fd:
                os.close(fd)
            fd = sub
        return fd

    def _copy(self, rel, src_dir_fd, name, dir_fd, dest):
        where = os.path.join(self.top, rel)
        try:
            old = os.stat(dest, dir_fd=dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            old = None
        except OSError as exc:
            raise self._failure(exc, where) from None
        if old is not None and stat.S_ISDIR(old.st_mode):
            self.not_kept.append((rel, f"{where} is a directory"))
            return
        replacing = None
        if old is not None and not stat.S_ISREG(old.st_mode):
            with contextlib.suppress(OSError):
                replacing = _entry_kind(dest, dir_fd)
        try:
            src = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                          dir_fd=src_dir_fd)
        except OSError as exc:
            self.not_kept.append((rel, f"the program's file cannot be read: {exc.strerror}"))
            return
        temp = None
        try:
            temp, out = _new_temp(dir_fd)
            with os.fdopen(src, "rb") as fin, os.fdopen(out, "wb") as fout:
                src = None
                shutil.copyfileobj(fin, fout, 1 << 20)
            os.rename(temp, dest, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
            temp = None
        except OSError as exc:
            raise self._failure(exc, where) from None
        finally:
            if src is not None:
                os.close(src)
            if temp is not None:
                with contextlib.suppress(OSError):
                    os.unlink(temp, dir_fd=dir_fd)
        if replacing is not None:
            self.replaced.append((rel, replacing))

    def _failure(self, exc, where):
        advice = write_failure(exc, [self.top], "give --keep-files another directory")
        return OutputError(f"cannot copy the program's file to {where}: {exc.strerror or exc}"
                           f"{advice}")


def _open_or_make(name, dir_fd):
    """Open the subdirectory ``name`` of ``dir_fd`` without following a link; make it first
    where it does not exist."""
    try:
        return open_dir(name, dir_fd)
    except FileNotFoundError:
        with contextlib.suppress(FileExistsError):
            os.mkdir(name, 0o777, dir_fd=dir_fd)
        return open_dir(name, dir_fd)


def _new_temp(dir_fd):
    """A new ``.vcut-PID-HEX.tmp`` in ``dir_fd`` (`vcut_base.atomic.TEMP_PATTERN`): its name
    and a descriptor open for writing."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    while True:
        name = f".vcut-{os.getpid()}-{secrets.token_hex(6)}.tmp"
        try:
            return name, os.open(name, flags, 0o666, dir_fd=dir_fd)
        except FileExistsError:
            continue


def _entry_kind(name, dir_fd):
    """What the entry ``name`` of ``dir_fd`` is, in words (a link: with its target)."""
    st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
    if stat.S_ISLNK(st.st_mode):
        return f"symbolic link to {os.readlink(name, dir_fd=dir_fd)}"
    return _KINDS.get(stat.S_IFMT(st.st_mode), "special file")


_KINDS = {stat.S_IFREG: "regular file", stat.S_IFIFO: "named pipe", stat.S_IFSOCK: "socket",
          stat.S_IFCHR: "character device", stat.S_IFBLK: "block device"}
