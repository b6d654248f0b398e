"""The trace file format: round trip, versioning, corrupt input."""

import json
import zipfile

import numpy as np
import pytest

from frontend import FORMAT_VERSION, load_trace, trace_program
from vcut_base.errors import TraceFormatError
from frontend.events import EV_BLOCK, EV_READ, header
from frontend.trace import decode_trace
from tests.helpers import bump_npz_version

PROG = """
#include <stdio.h>
#include <stdlib.h>
int g[8];
int main(void) {
    int *p = malloc(16);
    for (int i = 0; i < 4; i++) { p[i] = i; g[i] = p[i] * 2; }
    printf("%d\\n", g[3]);
    free(p);
    return 0;
}
"""


@pytest.fixture(scope="module")
def trace(tmp_path_factory):
    d = tmp_path_factory.mktemp("fmt")
    path = d / "p.c"
    path.write_text(PROG)
    return trace_program(str(path))


def test_round_trip_keeps_every_array(trace, tmp_path):
    out = tmp_path / "t.npz"
    trace.save(out)
    back = load_trace(out)
    for name in trace.__dataclass_fields__:
        if name in ("static", "meta"):
            continue
        a, b = getattr(trace, name), getattr(back, name)
        assert a.dtype == b.dtype and np.array_equal(a, b), name
    for name, a in trace.static.arrays().items():
        b = getattr(back.static, name)
        assert [str(x) for x in a] == [str(x) for x in b] if a.dtype == object else np.array_equal(a, b)
    assert back.meta["format_version"] == FORMAT_VERSION
    assert back.summary() == trace.summary()
    assert back.meta["stdout"] == "6\n"


def test_the_archive_is_plain_numpy(trace, tmp_path):
    out = tmp_path / "t.npz"
    trace.save(out)
    with np.load(out, allow_pickle=False) as z:
        assert z["dyn_sid"].dtype == np.int32
        assert json.loads(str(z["meta"]))["format"] == "vcut-trace"
        assert z["static__ins_opcode"].dtype.kind == "U"


def test_other_format_version_names_both(trace, tmp_path):
    out = tmp_path / "old.npz"
    trace.save(out)
    bump_npz_version(out)
    with pytest.raises(TraceFormatError) as exc:
        load_trace(out)
    assert str(exc.value) == (
        f"{out} has trace format version {FORMAT_VERSION + 1}, but this vcut reads version "
        f"{FORMAT_VERSION}; re-create it with 'vcut trace'"
    )


def test_not_a_trace(tmp_path):
    junk = tmp_path / "junk.npz"
    junk.write_bytes(b"not a zip at all")
    with pytest.raises(TraceFormatError, match="is not a readable vcut trace"):
        load_trace(junk)
    other = tmp_path / "other.npz"
    np.savez(other, x=np.arange(3))
    with pytest.raises(TraceFormatError, match=r"is not a vcut trace \(no 'meta' entry\)"):
        load_trace(other)
    with pytest.raises(TraceFormatError, match="trace file not found"):
        load_trace(tmp_path / "missing.npz")
    with zipfile.ZipFile(tmp_path / "z.npz", "w") as z:
        z.writestr("meta.npy", b"garbage")
    with pytest.raises(TraceFormatError):
        load_trace(tmp_path / "z.npz")


def test_corrupt_streams_are_refused(trace):
    st = trace.static
    main_entry = int(st.fn_entry_block[st.function_id("main")])
    # an event cut in the middle
    with pytest.raises(TraceFormatError, match="ends inside an event"):
        decode_trace(st, np.array([header(main_entry, EV_BLOCK), header(0, EV_READ)], dtype=np.uint64))
    # an unknown kind
    with pytest.raises(TraceFormatError, match="unknown event kind"):
        decode_trace(st, np.array([header(main_entry, 15)], dtype=np.uint64))
    # a memory event for an instruction of a block that is not running
    loads = np.flatnonzero((st.ins_opcode == "load") & (st.ins_func == st.function_id("main")))
    later_block_load = int(loads[-1])
    assert st.ins_block[later_block_load] != main_entry
    with pytest.raises(TraceFormatError, match="corrupt event stream"):
        decode_trace(st, np.array([header(main_entry, EV_BLOCK), header(later_block_load, EV_READ), 0],
                                  dtype=np.uint64))


def test_save_is_atomic(trace, tmp_path, monkeypatch):
    out = tmp_path / "t.npz"

    def boom(*a, **k):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(np.lib.format, "write_array", boom)  # each member of the .npz
    with pytest.raises(RuntimeError):
        trace.save(out)
    assert list(tmp_path.iterdir()) == []
