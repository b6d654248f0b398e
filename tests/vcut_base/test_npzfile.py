"""vcut_base.npzfile.save_npz: np.savez's layout, and a signal never lands inside a zip member's
open or close (where it left a half-open ZipFile whose clean-up printed a traceback at exit)."""

import gc
import io
import signal
import sys
import zipfile

import numpy as np
import pytest

from vcut_base.npzfile import save_npz
from tests.helpers import own_process

CHUNK = 16 << 20  # numpy writes an array to a non-file object in chunks of this many bytes


def arrays():
    return {"a": np.arange(10, dtype=np.int32), "b": np.linspace(0.0, 1.0, 7),
            "meta": np.array('{"format": "x"}')}


def test_the_members_are_those_of_np_savez():
    ours, theirs = io.BytesIO(), io.BytesIO()
    save_npz(ours, arrays())
    np.savez(theirs, **arrays())
    with zipfile.ZipFile(ours) as z1, zipfile.ZipFile(theirs) as z2:
        assert z1.namelist() == z2.namelist() == ["a.npy", "b.npy", "meta.npy"]
        for name in z1.namelist():
            assert z1.read(name) == z2.read(name)
            assert z1.getinfo(name).compress_type == zipfile.ZIP_STORED
    loaded = np.load(io.BytesIO(ours.getvalue()))
    for k, a in arrays().items():
        assert np.array_equal(loaded[k], a) and loaded[k].dtype == a.dtype


def test_object_arrays_are_refused():
    with pytest.raises(ValueError, match="allow_pickle"):
        save_npz(io.BytesIO(), {"x": np.array([object()], dtype=object)})


class SignalAfter(io.BytesIO):
    """A file that raises SIGINT once, right after ``after`` bytes have been written to it."""

    def __init__(self, after):
        super().__init__()
        self.after, self.sent = after, False

    def write(self, data):
        n = super().write(data)
        if not self.sent and self.tell() >= self.after:
            self.sent = True
            signal.raise_signal(signal.SIGINT)
        return n


@own_process
def test_a_signal_mid_member_stops_at_the_next_chunk_and_leaves_a_closed_zip(monkeypatch):
    big = np.zeros(5 * CHUNK // 8, dtype=np.float64)  # 5 chunks
    small = np.arange(100, dtype=np.int64)
    unraisable = []
    monkeypatch.setattr(sys, "unraisablehook", unraisable.append)
    fh = SignalAfter(after=small.nbytes + CHUNK // 2)  # inside big's first chunk
    with pytest.raises(KeyboardInterrupt):
        save_npz(fh, {"small": small, "big": big, "after": small})
    gc.collect()  # a ZipFile left half-open would fail in __del__ here
    assert unraisable == []
    with zipfile.ZipFile(io.BytesIO(fh.getvalue())) as z:
        assert z.testzip() is None  # the central directory was written: the zip was closed
        # the member being written was closed after one more chunk; the next never started
        assert z.namelist() == ["small.npy", "big.npy"]
        assert np.array_equal(np.load(z.open("small.npy")), small)
        header = 128  # np.lib.format's version-1 header of a 1-d float64 array
        assert z.getinfo("big.npy").file_size == header + CHUNK


@pytest.mark.parametrize("at", [0, 1, 60])
@own_process
def test_a_signal_in_the_zip_bookkeeping_is_delivered_after_it(monkeypatch, at):
    # at 0: during the first member's local header; 1 and 60: inside the first header and array
    unraisable = []
    monkeypatch.setattr(sys, "unraisablehook", unraisable.append)
    fh = SignalAfter(after=at)
    with pytest.raises(KeyboardInterrupt):
        save_npz(fh, arrays())
    gc.collect()
    assert unraisable == []
    with zipfile.ZipFile(io.BytesIO(fh.getvalue())) as z:
        assert z.testzip() is None
        assert z.namelist() == ["a.npy"]
