"""Corrupt trace files are refused before any kernel reads them (issue 11, section 4).

Each case edits one array of a valid trace the way a bit flip or a careless
edit would; `load_trace` must raise `TraceFormatError` naming the array, the
index and the value, and ``vcut graph`` must exit 8 with that line, never
crash (a kernel reading out of bounds) or build another graph.
"""

import json

import numpy as np
import pytest

from frontend import load_trace, trace_program
from vcut_base.errors import TraceFormatError
from frontend.trace_checks import MAX_ACCESS_BYTES, MAX_FUNCTION_ARGS
from vcut.cli import main

PROG = """
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
int g[8];
int twice(int x) { return 2 * x; }
int main(void) {
    int *p = malloc(16);
    memset(p, 0, 16);
    for (int i = 0; i < 4; i++) { p[i] = i; g[i] = twice(p[i]); }
    printf("%d\\n", g[3]);
    free(p);
    return 0;
}
"""


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    d = tmp_path_factory.mktemp("checks")
    (d / "p.c").write_text(PROG)
    path = d / "t.npz"
    trace_program(str(d / "p.c")).save(path)
    with np.load(path) as z:
        return {k: z[k] for k in z.files}


def write(tmp_path, arrays, **change):
    arrays = dict(arrays)
    meta = json.loads(str(arrays["meta"]))
    for key, value in change.items():
        if key.startswith("meta_"):
            meta[key[5:]] = value
        else:
            arrays[key] = value(arrays[key].copy()) if callable(value) else value
    arrays["meta"] = np.array(json.dumps(meta))
    path = tmp_path / "bad.npz"
    np.savez(path, **arrays)
    return path


def setitem(k, value):
    def edit(a):
        a[k] = value
        return a
    return edit


def test_valid_trace_passes(saved, tmp_path):
    t = load_trace(write(tmp_path, saved))
    assert t.dynamic_instructions == len(saved["dyn_sid"]) and t.calls("twice") == 4
    assert t.dyn_sid.dtype == np.int32 and t.mem_addr.dtype == np.uint64


def test_dyn_sid_2_31_minus_1_is_refused_by_vcut_graph_not_a_segfault(saved, tmp_path, capsys):
    path = write(tmp_path, saved, dyn_sid=setitem(5, 2**31 - 1))
    code = main(["graph", str(path), "-o", str(tmp_path / "g.npz")])
    err = capsys.readouterr().err.strip().splitlines()[-1]
    n_static = len(saved["static__ins_func"])
    assert code == 8
    assert err == (f"error: {path} is corrupt: dyn_sid[5] = 2147483647 is not in "
                   f"0..{n_static - 1}; re-create it with 'vcut trace'")
    assert not (tmp_path / "g.npz").exists()


def cases(saved):
    S = len(saved["static__ins_func"])
    N = len(saved["dyn_sid"])
    A = len(saved["act_func"])
    P = len(saved["static__op_kind"])
    root_first = int(saved["bs_start"][0])
    return [
        ("dyn_act out of range", {"dyn_act": setitem(3, A)}, f"dyn_act[3] = {A} is not in 0..{A - 1}"),
        ("negative dyn_sid", {"dyn_sid": setitem(0, -1)}, f"dyn_sid[0] = -1 is not in 0..{S - 1}"),
        ("short dyn_sid", {"dyn_sid": lambda a: a[:-3]},
         f"array dyn_act has {N} entries but dyn_sid has {N - 3}"),
        ("float act_func", {"act_func": lambda a: a.astype(float)},
         f"array act_func is float64 of shape ({A},), expected a one-dimensional array of integers"),
        ("2-d mem_addr", {"mem_addr": lambda a: a.reshape(1, -1)},
         f"array mem_addr is uint64 of shape (1, {len(saved['mem_addr'])}), expected a "
         "one-dimensional array of integers"),
        ("op_ptr past the operands", {"static__op_ptr": setitem(5, 10**6)},
         f"op_ptr[5] = 1000000 is not in 0..{P}"),
        ("op_ref past the instructions", {"static__op_ref": lambda a: np.where(
            saved["static__op_kind"] == 0, 10**6, a)}, "= 1000000 (an instruction) is not in "
         f"-1..{S - 1}"),
        ("huge fn_nargs", {"static__fn_nargs": setitem(0, 10**9)},
         f"fn_nargs[0] = 1000000000 is not in 0..{MAX_FUNCTION_ARGS}"),
        ("mem_dyn out of order", {"mem_dyn": lambda a: a[::-1].copy()}, "is not in execution order"),
        ("mem_dyn past the end", {"mem_dyn": setitem(0, 10**9)}, f"mem_dyn[0] = 1000000000 is not in 0..{N - 1}"),
        ("load size changed", {"mem_size": setitem(_first_load(saved), 2**20)},
         f"mem_size[{_first_load(saved)}] differs from the instruction's access size "
         f"(1048576 != {_load_size(saved)})"),
        ("access of 1 TiB", {"mem_size": setitem(0, 2**40)},
         f"mem_size[0] = 1099511627776 is not in 0..{MAX_ACCESS_BYTES}"),
        ("access wraps around", {"mem_addr": setitem(_first_load(saved), 2**64 - 2)},
         "passes the end of the address space"),
        ("block start moved", {"bs_start": setitem(1, int(saved["bs_start"][1]) + 1)},
         "is not the first instruction of the block"),
        ("blocks out of order", {"bs_start": setitem(0, N)}, "comes before the previous block's start"),
        ("activation of another function", {"dyn_act": setitem(root_first, A - 1)},
         "differs from the instruction's function"),
        ("parent after child", {"act_parent": setitem(A - 1, A - 1)},
         f"act_parent[{A - 1}] = {A - 1} is not an earlier activation or -1"),
        ("call outside the parent", {"act_call": setitem(A - 1, int(np.flatnonzero(saved["dyn_act"] == A - 1)[0]))},
         f"dyn_act[act_call][{A - 1}] is not the parent activation ({A - 1} != 0)"),
        ("object kind", {"obj_kind": setitem(0, 9)}, "obj_kind[0] = 9 is not in 0..3"),
        ("meta truncated", {"meta_truncated": "yes"}, "meta field 'truncated' is 'yes', not of type bool"),
        ("meta exit code", {"meta_exit_code": True}, "meta field 'exit_code' is True, not of type int or NoneType"),
        ("meta sandbox notes", {"meta_sandbox_notes": 5}, "meta field 'sandbox_notes' is 5, not of type list"),
    ]


def _load_size(saved):
    sid = saved["dyn_sid"][saved["mem_dyn"][_first_load(saved)]]
    return int(saved["static__ins_size"][sid])


def _first_load(saved):
    loads = np.flatnonzero(saved["static__ins_mem"] == 1)
    sid = saved["dyn_sid"][saved["mem_dyn"]]
    return int(np.flatnonzero(np.isin(sid, loads))[0])


@pytest.mark.parametrize("k", range(22))
def test_corrupt_arrays_are_named(saved, tmp_path, k):
    name, change, message = cases(saved)[k]
    path = write(tmp_path, saved, **change)
    with pytest.raises(TraceFormatError) as exc:
        load_trace(path)
    text = str(exc.value)
    assert text.startswith(f"{path} is corrupt: ") and text.endswith("; re-create it with 'vcut trace'")
    assert message in text, name


def test_a_fifo_is_not_a_trace(tmp_path, capsys):
    import os

    fifo = tmp_path / "t.npz"
    os.mkfifo(fifo)
    assert main(["graph", str(fifo), "-o", str(tmp_path / "g.npz")]) == 8
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        f"error: trace file {fifo} is a FIFO (named pipe), not a regular file; give the path of a file")
