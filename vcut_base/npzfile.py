"""vcut's own versioned ``.npz`` files (traces, graphs): one reader for all."""

import contextlib
import json
import struct
import zipfile

import numpy as np

from .atomic import signals_held
from .errors import InputTooLarge
from .inputs import check_input_file
from .memory import available_bytes, format_bytes

__all__ = ["read_versioned_npz", "member_shape", "save_npz"]


def read_versioned_npz(path, *, kind, version, error, remake, required=(), optional=(),
                       mmap=False):
    """Open a vcut ``.npz`` and check that its ``meta`` names ``kind`` and ``version``.

    Parameters
    ----------
    path : str
    kind : str
        ``"trace"`` or ``"graph"``: the file's ``meta["format"]`` must be
        ``"vcut-<kind>"``.
    version : int
        The format version this vcut reads.
    error : type
        Exception class raised for every problem (one line naming the file)
        but one: arrays larger than the memory allows are `InputTooLarge`.
    remake : str
        What to do about another version (``"re-create it with 'vcut trace'"``).
    required, optional : sequence of str
        Array names to return; a missing required one makes the file unreadable.
    mmap : bool
        Map the arrays stored uncompressed (all of those vcut writes) from the
        file instead of reading them (copy-on-write: writing to one changes
        only this process's copy); the others are read.

    Returns
    -------
    meta : dict
    arrays : dict of numpy.ndarray

    Notes
    -----
    Only a regular file is opened (a FIFO or device is refused), and the
    archive's declared uncompressed size must fit in the available memory
    before any array is read: a deflated member cannot expand without bound.
    """
    check_input_file(path, f"{kind} file", error, missing=error)
    if not zipfile.is_zipfile(path):  # numpy would take it for a pickle and say so
        raise error(f"{path} is not a readable vcut {kind}: not an .npz (zip) archive")
    try:
        with np.load(path, allow_pickle=False) as z:
            if "meta" not in z.files:
                raise error(f"{path} is not a vcut {kind} (no 'meta' entry)")
            size = sum(info.file_size for info in z.zip.infolist()
                       if not (mmap and info.compress_type == zipfile.ZIP_STORED))
            if size > available_bytes() // 2:  # too large for memory: exit 2, as every input
                raise InputTooLarge(f"{path} declares {format_bytes(size)} of arrays, more than the memory "
                            f"available allows reading; it is corrupt or too large for this machine")
            raw = z["meta"]
            if raw.shape != () or raw.dtype.kind != "U":
                raise error(f"{path} is not a vcut {kind} ('meta' is not a JSON string)")
            meta = json.loads(str(raw))
            if not isinstance(meta, dict):
                raise error(f"{path} is not a vcut {kind} ('meta' is not a JSON object)")
            if meta.get("format") != f"vcut-{kind}":
                raise error(f"{path} is not a vcut {kind} (format {meta.get('format')!r})")
            found = meta.get("format_version")
            if found != version:
                raise error(
                    f"{path} has {kind} format version {found}, but this vcut reads version "
                    f"{version}; {remake}"
                )
            missing = [k for k in required if k not in z.files]
            if missing:
                raise error(f"{path} is not a complete vcut {kind}: array {missing[0]!r} is "
                            f"missing; {remake}")
            def member(k):  # mapped when asked and possible, else read
                a = _mapped_member(path, z.zip, k) if mmap else None
                return z[k] if a is None else a

            names = list(required) + [k for k in optional if k in z.files]
            arrays = {k: member(k) for k in names}
    except (error, InputTooLarge):
        raise
    except Exception as exc:  # every zip / npy / json failure means the same to the user
        raise error(f"{path} is not a readable vcut {kind}: {exc}") from None
    return meta, arrays


def member_shape(path, name):
    """The shape of array ``name`` of the ``.npz`` at ``path``, read from its ``.npy``
    header alone (a few hundred bytes, also of a compressed member); None when the file
    is not a readable archive holding that array with a version 1 or 2 header.

    For checks before anything large is read: the shape is the stored array's, so a
    later full read finds the same (`read_versioned_npz` then checks everything else).
    """
    try:
        with zipfile.ZipFile(path) as zf, zf.open(name + ".npy") as fh:
            header = _npy_header(fh)
    except (OSError, KeyError, ValueError, zipfile.BadZipFile, EOFError):
        return None
    return None if header is None else tuple(int(x) for x in header[0])


def _npy_header(fh):
    """``(shape, fortran_order, dtype)`` of the ``.npy`` whose start ``fh`` is at (left
    just after the header); None for a format version other than 1 or 2."""
    version = np.lib.format.read_magic(fh)
    if version == (1, 0):
        return np.lib.format.read_array_header_1_0(fh)
    if version == (2, 0):
        return np.lib.format.read_array_header_2_0(fh)
    return None


def _mapped_member(path, zf, name):
    """Array ``name`` of the open archive ``zf`` mapped from ``path`` (copy-on-write);
    None when it cannot be (compressed, object or Fortran-ordered, empty, npy v3)."""
    info = zf.getinfo(name + ".npy")
    if info.compress_type != zipfile.ZIP_STORED:
        return None
    with open(path, "rb") as fh:
        fh.seek(info.header_offset)
        head = fh.read(30)
        if len(head) != 30 or head[:4] != b"PK\x03\x04":
            raise ValueError(f"bad local header of {name}")
        name_len, extra_len = struct.unpack("<HH", head[26:30])
        start = info.header_offset + 30 + name_len + extra_len
        fh.seek(start)
        header = _npy_header(fh)
        if header is None:
            return None
        shape, fortran, dtype = header
        offset = fh.tell()
    count = int(np.prod(shape, dtype=np.int64))
    if fortran or dtype.hasobject or count == 0 or len(shape) != 1:
        return None
    if offset - start + count * dtype.itemsize != info.file_size:
        raise ValueError(f"array {name!r} does not fill its member of the archive")
    return np.memmap(path, dtype=dtype, mode="c", offset=offset, shape=shape).view(np.ndarray)


class _Stopped(Exception):
    """A held signal arrived while a member was being written."""


class _StopOnSignal:
    """A member's writer that stops, between two of numpy's chunks, once a signal is held."""

    def __init__(self, member, caught):
        self._member, self._caught = member, caught

    def write(self, data):
        if self._caught:
            raise _Stopped
        return self._member.write(data)


def save_npz(fh, arrays):
    """Write ``arrays`` (name -> array) to the binary file ``fh`` as ``np.savez`` lays them out.

    The members are ``<name>.npy``, stored, zip64, readable by ``np.load`` and
    by ``read_versioned_npz``. Unlike ``np.savez``, a SIGINT or SIGTERM cannot
    land inside the zip file's own bookkeeping (opening or closing a member),
    which would leave a half-open ``ZipFile`` whose clean-up fails at exit: the
    signals are held, the member being written stops at its next chunk of at
    most 16 MiB, the zip file is closed, and then the signal is delivered (the
    caller removes the incomplete file). Object arrays are refused, as pickles.
    """
    with signals_held() as caught, contextlib.suppress(_Stopped):
        with zipfile.ZipFile(fh, mode="w", compression=zipfile.ZIP_STORED,
                             allowZip64=True) as zf:
            for name, a in arrays.items():
                with zf.open(f"{name}.npy", "w", force_zip64=True) as member:
                    np.lib.format.write_array(_StopOnSignal(member, caught), np.asanyarray(a),
                                              allow_pickle=False)
