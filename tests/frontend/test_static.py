"""The static instruction table: ids, operand references, access classes."""

import llvmlite.binding as llvm
import numpy as np
import pytest

from frontend import compile_program
from frontend.instrument import instrument_module
from frontend.static import (
    CALL_INTRINSIC,
    CALL_TRACKED,
    MEM_LOAD,
    MEM_NONE,
    MEM_STORE,
    OBJ_ALLOCA,
    OBJ_FREE,
    OBJ_MALLOC,
    OP_ARGUMENT,
    OP_CONSTANT,
    OP_FUNCTION,
    OP_GLOBAL,
    OP_INSTRUCTION,
    text_opcode,
)

SRC = """
#include <stdlib.h>
double scale = 2.0;
int add(int a, int b) { return a + b; }
double twice(double x) { return x * scale; }
int main(void) {
    char *p = malloc(3);
    p[1] = 'x';
    int r = add(p[1], 1) + (int)twice(1.5);
    free(p);
    return r;
}
"""


def _table(cfile, opt):
    return instrument_module(compile_program(cfile("s.c", SRC), opt=opt).ir).static


def test_operand_references_at_O1(cfile):
    st = _table(cfile, "-O1")
    f = st.function_id("add")
    sids = np.flatnonzero(st.ins_func == f)
    assert st.ins_opcode[sids].tolist() == ["add", "ret"]
    add, ret = sids
    ops = slice(st.op_ptr[add], st.op_ptr[add + 1])
    assert st.op_kind[ops].tolist() == [OP_ARGUMENT, OP_ARGUMENT]
    assert sorted(st.op_ref[ops].tolist()) == [0, 1]
    assert st.op_kind[st.op_ptr[ret]] == OP_INSTRUCTION and st.op_ref[st.op_ptr[ret]] == add
    assert st.ins_result[add] != "" and st.ins_result[ret] == ""


def test_classes_and_sizes_at_O0(cfile):
    st = _table(cfile, "-O0")
    main = st.function_id("main")
    in_main = st.ins_func == main
    assert np.all(st.ins_obj[in_main & (st.ins_opcode == "alloca")] == OBJ_ALLOCA)
    calls = np.flatnonzero(in_main & (st.ins_opcode == "call"))
    callee = {str(st.fn_name[st.ins_callee[s]]): s for s in calls}
    assert st.ins_obj[callee["malloc"]] == OBJ_MALLOC and st.ins_obj[callee["free"]] == OBJ_FREE
    assert st.ins_call[callee["add"]] == CALL_TRACKED and st.ins_call[callee["malloc"]] == CALL_TRACKED
    # every call operand list ends with the callee function
    for s in calls:
        assert st.op_kind[st.op_ptr[s + 1] - 1] == OP_FUNCTION
    # access sizes follow the accessed type: the char store, the double global load
    stores = np.flatnonzero(in_main & (st.ins_mem == MEM_STORE))
    assert 1 in st.ins_size[stores].tolist()
    tw = st.ins_func == st.function_id("twice")
    gl = [s for s in np.flatnonzero(tw & (st.ins_mem == MEM_LOAD))
          if st.op_kind[st.op_ptr[s]] == OP_GLOBAL]
    assert len(gl) == 1 and st.ins_size[gl[0]] == 8
    assert st.gv_name[st.op_ref[st.op_ptr[gl[0]]]] == "scale"
    assert st.gv_size[list(st.gv_name).index("scale")] == 8
    assert np.all(st.ins_mem[st.ins_opcode == "add"] == MEM_NONE)
    # ids are dense and in block order
    assert np.array_equal(np.diff(st.blk_first), st.blk_ninstr[:-1])
    assert st.n_instructions == int(st.blk_ninstr.sum())
    # line table: main's instructions carry lines of main's body
    assert set(st.ins_line[in_main & (st.ins_line > 0)].tolist()) <= set(range(6, 12))


def test_instrumented_module_verifies_and_keeps_the_original_text(cfile):
    cm = compile_program(cfile("s.c", SRC))
    im = instrument_module(cm.ir)
    mod = llvm.parse_assembly(im.ir)
    mod.verify()
    # the original instructions appear unchanged, in order
    lines = [ln.strip() for ln in im.ir.splitlines()]
    pos = 0
    for text in im.static.ins_text:
        first = text.split(" [ ")[0]
        while not lines[pos].startswith(first.split(", !")[0]):
            pos += 1
        pos += 1
    assert "@llvm.readcyclecounter" in im.ir
    assert "@llvm.readcyclecounter" not in instrument_module(cm.ir, timing=False).ir.split("; ---- vcut")[0]


def test_intrinsics_make_no_call_events(cfile):
    src = cfile("c.c", "#include <string.h>\nint main(void) { char a[8], b[8]; memset(a, 1, 8); "
                "memcpy(b, a, 8); return b[3]; }\n")
    st = instrument_module(compile_program(src).ir).static
    calls = np.flatnonzero(st.ins_opcode == "call")
    names = [str(st.fn_name[st.ins_callee[s]]) for s in calls]
    assert any(n.startswith("llvm.memset") for n in names)
    for s, n in zip(calls, names):
        if n.startswith("llvm."):
            assert st.ins_call[s] == CALL_INTRINSIC
    assert OP_CONSTANT in st.op_kind.tolist()


@pytest.mark.parametrize("line, opcode", [
    ("  %3 = load i32, ptr %2, align 4, !dbg !23", "load"),
    ("  %7 = tail call i32 @f(i32 1)", "call"),
    ("  unreachable, !dbg !13", "unreachable"),
    ("  ret void", "ret"),
    ("  store volatile i32 0, ptr %x, align 4", "store"),
    ('  %"a b" = add nsw i32 %0, 1', "add"),
    ("  switch i32 %5, label %9 [", "switch"),
])
def test_text_opcode(line, opcode):
    assert text_opcode(line) == opcode
