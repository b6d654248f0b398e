"""Instrument an LLVM module so that running it writes the event stream.

The module is parsed with llvmlite; its static table (`build_static_table`)
fixes the instruction ids. The instrumented module is the module's own
printed text with instrumentation lines inserted around instructions, so the
original instructions are kept byte for byte. Inserted values are named
(``%__vc<n>``), which leaves LLVM's numbering of unnamed values untouched.

What is inserted (see `frontend.events` for the stream format):

* at the start of every block, after its phi nodes: a BLOCK event, which
  also charges the block's instruction count against the budget;
* around loads, stores, atomics and memcpy/memmove/memset (intrinsic or
  libc): two cycle-counter reads, then READ and/or WRITE events;
* after ``alloca``: an ALLOC event with the allocated size;
* before ``free``/``realloc``: a FREE event; after ``malloc``, ``calloc``,
  ``realloc``, ``aligned_alloc``, ``strdup``: an ALLOC event;
* after every call that may run traced code (calls to defined functions,
  to external functions, and indirect calls): a CALLRET event, so that a
  decoder knows where callbacks made from library code end;
* for region-of-interest functions: the ROI depth is raised on entry and
  lowered before each ``ret``.
"""

import re
from dataclasses import dataclass

import llvmlite.binding as llvm
import numpy as np

from vcut_base.errors import InputError, UnsupportedIRError

from ._runtime_ir import runtime_ir
from .events import (
    EV_ALLOC,
    EV_BLOCK,
    EV_CALLRET,
    EV_FREE,
    EV_READ,
    EV_READN,
    EV_WRITE,
    EV_WRITEN,
    header,
)
from .static import (
    CALL_TRACKED,
    MEM_COPY,
    MEM_LOAD,
    MEM_NONE,
    MEM_RMW,
    MEM_SET,
    MEM_STORE,
    OBJ_ALIGNED_ALLOC,
    OBJ_ALLOCA,
    OBJ_CALLOC,
    OBJ_FREE,
    OBJ_MALLOC,
    OBJ_REALLOC,
    OBJ_STRDUP,
    StaticTable,
    _ptr,
    build_static_table,
    quote_name,
)

__all__ = ["InstrumentedModule", "instrument_module"]


@dataclass(frozen=True, eq=False)
class InstrumentedModule:
    """An instrumented module and the static table of the original.

    Attributes
    ----------
    ir : str
        Instrumented IR text (the original plus tracing code and runtime).
    original_ir : str
        The module as parsed and printed by llvmlite (the instruction texts
        of the static table come from it).
    static : StaticTable
    roi : tuple of str
        Region-of-interest functions (empty: the whole program is traced).
    timing : bool
        Whether memory operations are timed with the cycle counter.

    See Also
    --------
    instrument_module : makes one.

    Examples
    --------
    >>> from frontend import compile_program, instrument_module
    >>> im = instrument_module(compile_program("samples/strassen.c", defines=["N=2"]).ir)
    >>> im.roi, im.timing
    ((), True)
    >>> "@__vcut_" in im.ir, "@__vcut_" in im.original_ir
    (True, False)
    >>> sorted(str(f) for f, d in zip(im.static.fn_name, im.static.fn_defined) if d)
    ['add', 'main', 'rnd', 'strassen']
    """

    ir: str
    original_ir: str
    static: StaticTable
    roi: tuple
    timing: bool


def _value_text(op, names):
    kind = op.value_kind.name
    if kind in ("instruction", "argument"):
        return names[_ptr(op)]
    if kind in ("global_variable", "function", "global_alias", "global_ifunc"):
        if not op.name:
            raise UnsupportedIRError(
                "unsupported construct: an unnamed global used by a memory operation; "
                "give the global a name"
            )
        return quote_name("@", op.name)
    text = str(op)
    ty = str(op.type)
    if not text.startswith(ty + " "):
        raise UnsupportedIRError(f"cannot print operand {text!r} for instrumentation")
    return text[len(ty) + 1 :]


def _split_type(s):
    """Split ``"T rest"`` where T is an LLVM type (brackets balanced)."""
    s = s.lstrip()
    if s[:1] in "[{<":
        depth = 0
        for k, c in enumerate(s):
            if c in "[{<(":
                depth += 1
            elif c in "]}>)":
                depth -= 1
                if depth == 0:
                    return s[: k + 1], s[k + 1 :]
        raise UnsupportedIRError(f"cannot parse type in {s!r}")
    m = re.match(r'(%"(?:[^"\\]|\\.)*"|\S+?)(?=[,\s]|$)', s)
    return m.group(1), s[m.end() :]


class _Emitter:
    """Inserts instrumentation lines for one function."""

    def __init__(self, names, timing):
        self.names = names
        self.timing = timing
        self.counter = 0

    def tmp(self):
        self.counter += 1
        return f"%__vc{self.counter}"

    def as_i64(self, out, op):
        """Append code converting operand ``op`` to i64; return the i64 value text."""
        ty = str(op.type)
        val = _value_text(op, self.names)
        if ty == "i64":
            return val
        t = self.tmp()
        if ty.startswith("ptr"):
            out.append(f"  {t} = ptrtoint {ty} {val} to i64")
        elif re.fullmatch(r"i\d+", ty):
            bits = int(ty[1:])
            conv = "zext" if bits < 64 else "trunc"
            out.append(f"  {t} = {conv} {ty} {val} to i64")
        else:
            raise UnsupportedIRError(f"cannot use a {ty} value as an address or size")
        return t

    def cycle(self, out):
        if not self.timing:
            return "0"
        t = self.tmp()
        out.append(f"  {t} = call i64 @llvm.readcyclecounter()")
        return t


def instrument_module(ir, *, roi=(), timing=True):
    """Instrument LLVM IR text for tracing.

    The module's static table (`StaticTable`) fixes the instruction ids; the
    instrumented module is the module's own printed text with tracing code
    inserted around its instructions (blocks, memory operations, allocations,
    frees, calls: see the module docstring), so the original instructions are
    kept byte for byte, plus the tracing runtime.

    Parameters
    ----------
    ir : str
        A complete module (from `compile_program`).
    roi : sequence of str, default ()
        Functions whose executions (with everything they call) are traced;
        empty traces the whole program.
    timing : bool, default True
        Time memory operations with the cycle counter. Without timing the
        program's ``optnone``/``noinline`` attributes are dropped so that the
        runner can optimise the instrumented code (see `frontend.run`).

    Returns
    -------
    InstrumentedModule
        The instrumented IR, the original as llvmlite printed it, and the
        static table.

    Raises
    ------
    InputError
        IR that does not parse, a module already instrumented, no ``main``,
        or an ROI name that is not a function defined in the program.
    UnsupportedIRError
        The program uses a construct the tracer cannot follow.

    Examples
    --------
    >>> from frontend import compile_program, instrument_module
    >>> cm = compile_program("samples/strassen.c", defines=["N=2"])
    >>> im = instrument_module(cm.ir, roi=["strassen"], timing=False)
    >>> im.roi, im.timing, im.static.n_functions
    (('strassen',), False, 8)
    >>> instrument_module(im.ir)
    Traceback (most recent call last):
        ...
    vcut_base.errors.InputError: the program is already instrumented (it defines __vcut_ symbols)
    """
    try:
        mod = llvm.parse_assembly(ir)
    except RuntimeError as exc:
        raise InputError(f"the LLVM IR does not parse: {str(exc).strip().splitlines()[0]}") from None
    text = str(mod)
    if "@__vcut_" in text:
        raise InputError("the program is already instrumented (it defines __vcut_ symbols)")
    td = llvm.create_target_data(mod.data_layout)
    table, names, walk = build_static_table(mod, text, td)
    defined = {str(n) for n, d in zip(table.fn_name, table.fn_defined) if d}
    for r in roi:
        if r not in defined:
            known = ", ".join(sorted(defined)[:12])
            raise InputError(
                f"region-of-interest function {r!r} is not defined in the program; "
                f"defined functions: {known}"
            )
    if "main" not in defined:
        raise InputError("the program defines no main function; give a complete C program")
    roi_set = set(roi)

    lines = text.split("\n")
    before_at, after_at = {}, {}  # line index -> lines to insert
    for fi, name in enumerate(table.fn_name):
        if table.fn_defined[fi]:
            _instrument_function(
                before_at, after_at, walk, table, names, fi, name in roi_set, timing
            )
    out_lines = []
    for k, line in enumerate(lines):
        out_lines.extend(before_at.get(k, ()))
        out_lines.append(line)
        out_lines.extend(after_at.get(k, ()))

    # Address table of every global, whatever its linkage (private constants
    # are not exported by the JIT, but relocations reach them).
    refs = []
    unnamed = 0
    for g in mod.global_variables:
        if g.name.startswith("llvm."):
            continue  # LLVM's own tables, left out of the static table too
        if g.name:
            refs.append(f"ptr {quote_name('@', g.name)}")
        else:
            refs.append(f"ptr @{unnamed}")
            unnamed += 1
    if refs:
        out_lines.append(f"@__vcut_gtab = global [{len(refs)} x ptr] [{', '.join(refs)}]")
    else:
        out_lines.append("@__vcut_gtab = global [0 x ptr] zeroinitializer")
    has_cc = "@llvm.readcyclecounter()" in text and "declare i64 @llvm.readcyclecounter" in text
    new_ir = "\n".join(out_lines) + runtime_ir(declare_cycle_counter=not has_cc)
    if not timing:
        # Nothing measures the machine code now, so let LLVM optimise it: the
        # trace is unchanged (events are ordered stores of computed values).
        new_ir = re.sub(
            r"^(attributes #\d+ = \{.*)$",
            lambda m: re.sub(r"\b(optnone|noinline) ", "", m.group(1)),
            new_ir,
            flags=re.M,
        )
    if roi:
        new_ir = new_ir.replace(
            "@__vcut_on = global i64 1, align 8", "@__vcut_on = global i64 0, align 8"
        )
    return InstrumentedModule(
        ir=new_ir, original_ir=text, static=table, roi=tuple(roi), timing=timing
    )


def _instrument_function(before_at, after_at, walk, table, names, fi, is_roi, timing):
    em = _Emitter(names, timing)
    bid0 = int(table.fn_entry_block[fi])
    nblocks = int(np.count_nonzero(table.blk_func == fi))
    for bid in range(bid0, bid0 + nblocks):
        first = int(table.blk_first[bid])
        ninstr = int(table.blk_ninstr[bid])
        opcodes = table.ins_opcode[first : first + ninstr]
        first_nonphi = next((j for j, o in enumerate(opcodes) if o != "phi"), ninstr)
        for j in range(ninstr):
            sid = first + j
            first_line, last_line = walk.spans[sid]
            before, after = _around(em, table, sid, walk.instructions[sid], walk.operands[sid])
            if j == first_nonphi:
                head = []
                if is_roi and bid == bid0:
                    head.append("  call void @__vcut_roi_enter()")
                head.append(f"  call void @__vcut_blk(i64 {header(bid, EV_BLOCK)}, i64 {ninstr})")
                before = head + before
            if is_roi and opcodes[j] == "ret":
                before.append("  call void @__vcut_roi_exit()")
            if before:
                before_at[first_line] = before
            if after:
                after_at[last_line] = after


def _around(em, table, sid, ins, ops):
    """Lines to insert before and after instruction ``sid``."""
    before, after = [], []
    mem = int(table.ins_mem[sid])
    obj = int(table.ins_obj[sid])
    call = int(table.ins_call[sid])
    hr, hw = header(sid, EV_READ), header(sid, EV_WRITE)
    hrn, hwn = header(sid, EV_READN), header(sid, EV_WRITEN)
    if mem != MEM_NONE:
        t0 = em.cycle(before)
        t1 = em.cycle(after)
        if mem == MEM_LOAD:
            a = em.as_i64(after, ops[0])
            after.append(f"  call void @__vcut_mem(i64 {hr}, i64 {a}, i64 {t0}, i64 {t1})")
        elif mem == MEM_STORE:
            a = em.as_i64(after, ops[1])
            after.append(f"  call void @__vcut_mem(i64 {hw}, i64 {a}, i64 {t0}, i64 {t1})")
        elif mem == MEM_RMW:
            a = em.as_i64(after, ops[0])
            after.append(f"  call void @__vcut_mem2(i64 {hr}, i64 {hw}, i64 {a}, i64 {t0}, i64 {t1})")
        elif mem == MEM_COPY:
            dst = em.as_i64(after, ops[0])
            src = em.as_i64(after, ops[1])
            n = em.as_i64(after, ops[2])
            after.append(
                f"  call void @__vcut_copy(i64 {hrn}, i64 {src}, i64 {hwn}, i64 {dst}, i64 {n}, "
                f"i64 {t0}, i64 {t1})"
            )
        elif mem == MEM_SET:
            dst = em.as_i64(after, ops[0])
            n = em.as_i64(after, ops[2])
            after.append(f"  call void @__vcut_memn(i64 {hwn}, i64 {dst}, i64 {n}, i64 {t0}, i64 {t1})")
    if obj == OBJ_ALLOCA:
        ha = header(sid, EV_ALLOC)
        text = table.ins_text[sid]
        rest = text.split(" alloca ", 1)[1]
        for kw in ("inalloca ", "swifterror "):
            if rest.startswith(kw):
                rest = rest[len(kw) :]
        ty, _ = _split_type(rest)
        ty = ty.rstrip(",")
        cnt_ty = str(ops[0].type)
        cnt = _value_text(ops[0], em.names)
        g, s = em.tmp(), em.tmp()
        base = em.as_i64(after, ins)
        after.append(f"  {g} = getelementptr {ty}, ptr null, {cnt_ty} {cnt}")
        after.append(f"  {s} = ptrtoint ptr {g} to i64")
        after.append(f"  call void @__vcut_ev3(i64 {ha}, i64 {base}, i64 {s})")
    if call == CALL_TRACKED:
        after.append(f"  call void @__vcut_ev1(i64 {header(sid, EV_CALLRET)})")
    if obj in (OBJ_FREE, OBJ_REALLOC):
        p = em.as_i64(before, ops[0])
        before.append(f"  call void @__vcut_ev2(i64 {header(sid, EV_FREE)}, i64 {p})")
    ha = header(sid, EV_ALLOC)
    if obj in (OBJ_MALLOC, OBJ_CALLOC, OBJ_REALLOC, OBJ_ALIGNED_ALLOC):
        base = em.as_i64(after, ins)
        if obj == OBJ_MALLOC:
            n = em.as_i64(after, ops[0])
        elif obj == OBJ_CALLOC:
            a = em.as_i64(after, ops[0])
            b = em.as_i64(after, ops[1])
            n = em.tmp()
            after.append(f"  {n} = mul i64 {a}, {b}")
        else:  # realloc(p, n), aligned_alloc(align, n)
            n = em.as_i64(after, ops[1])
        after.append(f"  call void @__vcut_heap(i64 {ha}, i64 {base}, i64 {n})")
    elif obj == OBJ_STRDUP:
        after.append(f"  call void @__vcut_strdup(i64 {ha}, ptr {em.names[_ptr(ins)]})")
    return before, after
