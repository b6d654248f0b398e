"""The static instruction table of an LLVM module.

Every instruction of every defined function gets a stable id (``sid``): its
position when functions, blocks and instructions are walked in module order.
The table records, per instruction, the function, block and index in the
block, the opcode, the result name, the printed text, the source line (when
the module has line tables), what the tracer records for it (memory access
class, call class, object class) and its operands in CSR form, each operand
classified (instruction, argument, global, function, constant, block) with a
reference into the matching table. Phi operands also carry their incoming
block, so a dependency pass can follow the edge actually taken.
"""

import ctypes
import os
import re
from dataclasses import dataclass, field

import numpy as np

from vcut_base.errors import UnsupportedIRError

__all__ = [
    "StaticTable",
    "function_bodies",
    "text_opcode",
    "ModuleWalk",
    "build_static_table",
    "MEM_NONE",
    "MEM_LOAD",
    "MEM_STORE",
    "MEM_RMW",
    "MEM_COPY",
    "MEM_SET",
    "CALL_NONE",
    "CALL_INTRINSIC",
    "CALL_TRACKED",
    "OBJ_NONE",
    "OBJ_ALLOCA",
    "OBJ_MALLOC",
    "OBJ_CALLOC",
    "OBJ_REALLOC",
    "OBJ_FREE",
    "OBJ_ALIGNED_ALLOC",
    "OBJ_STRDUP",
    "OP_INSTRUCTION",
    "OP_ARGUMENT",
    "OP_GLOBAL",
    "OP_FUNCTION",
    "OP_CONSTANT",
    "OP_BLOCK",
    "OP_OTHER",
]

# Memory access class of an instruction (what events it produces).
MEM_NONE, MEM_LOAD, MEM_STORE, MEM_RMW, MEM_COPY, MEM_SET = range(6)
# Call class: intrinsics and memory library calls produce no call-return event.
CALL_NONE, CALL_INTRINSIC, CALL_TRACKED = range(3)
# Object class: instructions that create or release a memory object.
(
    OBJ_NONE,
    OBJ_ALLOCA,
    OBJ_MALLOC,
    OBJ_CALLOC,
    OBJ_REALLOC,
    OBJ_FREE,
    OBJ_ALIGNED_ALLOC,
    OBJ_STRDUP,
) = range(8)
# Operand kinds.
(
    OP_INSTRUCTION,
    OP_ARGUMENT,
    OP_GLOBAL,
    OP_FUNCTION,
    OP_CONSTANT,
    OP_BLOCK,
    OP_OTHER,
) = range(7)

_HEAP_FUNCS = {
    "malloc": OBJ_MALLOC,
    "calloc": OBJ_CALLOC,
    "realloc": OBJ_REALLOC,
    "free": OBJ_FREE,
    "aligned_alloc": OBJ_ALIGNED_ALLOC,
    "strdup": OBJ_STRDUP,
}
_MEM_LIBC = {"memcpy": MEM_COPY, "memmove": MEM_COPY, "memset": MEM_SET}
_UNSUPPORTED_CALLS = {
    "setjmp": "setjmp/longjmp",
    "_setjmp": "setjmp/longjmp",
    "__sigsetjmp": "setjmp/longjmp",
    "sigsetjmp": "setjmp/longjmp",
    "longjmp": "setjmp/longjmp",
    "_longjmp": "setjmp/longjmp",
    "siglongjmp": "setjmp/longjmp",
    "pthread_create": "threads (pthread_create)",
    "thrd_create": "threads (thrd_create)",
    "fork": "processes (fork)",
    "vfork": "processes (vfork)",
    "__cxa_throw": "C++ exceptions",
    "llvm.eh.sjlj.setjmp": "setjmp/longjmp (__builtin_setjmp)",
    "llvm.eh.sjlj.longjmp": "setjmp/longjmp (__builtin_longjmp)",
    # a timer's handler runs asynchronously, in the middle of the tracer's own work
    "alarm": "asynchronous timer signals (alarm)",
    "ualarm": "asynchronous timer signals (ualarm)",
    "setitimer": "asynchronous timer signals (setitimer)",
    "timer_create": "asynchronous timer signals (timer_create)",
}
_UNSUPPORTED_OPCODES = {
    "invoke": "exceptions (invoke)",
    "landingpad": "exceptions (landingpad)",
    "resume": "exceptions (resume)",
    "catchswitch": "exceptions (catchswitch)",
    "catchpad": "exceptions (catchpad)",
    "cleanuppad": "exceptions (cleanuppad)",
    "catchret": "exceptions (catchret)",
    "cleanupret": "exceptions (cleanupret)",
    "callbr": "asm goto (callbr)",
    "indirectbr": "computed goto (indirectbr)",
}

_OPKIND = {
    "instruction": OP_INSTRUCTION,
    "argument": OP_ARGUMENT,
    "global_variable": OP_GLOBAL,
    "function": OP_FUNCTION,
    "basic_block": OP_BLOCK,
}

_RESULT_RE = re.compile(r'^\s*(%(?:[-a-zA-Z$._0-9]+|"(?:[^"\\]|\\.)*"))\s*=')
_DBG_RE = re.compile(r"!dbg !(\d+)")
_IDENT_RE = re.compile(r"^[-a-zA-Z$._][-a-zA-Z$._0-9]*$")


def quote_name(sigil, name):
    """Return ``name`` as LLVM prints it with ``sigil`` (``%`` or ``@``)."""
    if _IDENT_RE.match(name):
        return sigil + name
    esc = "".join(c if (c.isprintable() and c not in '"\\') else f"\\{ord(c):02X}" for c in name)
    return f'{sigil}"{esc}"'


@dataclass(frozen=True, eq=False)
class StaticTable:
    """The static instructions, blocks, functions and globals of a module.

    Arrays are indexed by instruction id (``ins_*``, ``op_ptr``), block id
    (``blk_*``), function id (``fn_*``) or global id (``gv_*``). Operands of
    instruction ``s`` are ``op_*[op_ptr[s]:op_ptr[s+1]]``; ``op_ref`` is an
    instruction id, argument index, global id, function id or block id
    according to ``op_kind`` (-1 for constants), and ``op_block`` is the
    incoming block of a phi operand (-1 otherwise). For calls the callee is
    the last operand. Ids follow module order: functions, their blocks, their
    instructions. String arrays are numpy object arrays.

    Attributes
    ----------
    fn_name : ndarray of str
        Every function of the module, declarations included.
    fn_defined : ndarray of bool
        Whether it has a body in the module.
    fn_entry_block : ndarray of int32
        Its entry block (-1 for declarations).
    fn_nargs : ndarray of int32
        Number of parameters.
    fn_returns_void : ndarray of bool
        Whether it returns void.
    fn_file : ndarray of int32
        Its source file (index into ``files``; -1 when unknown).
    blk_func, blk_first, blk_ninstr : ndarray of int32
        Function of each block, its first instruction id and its number of
        instructions (a block's instructions are consecutive ids).
    blk_label : ndarray of str
        The block's label (empty when unnamed).
    ins_func, ins_block, ins_index : ndarray of int32
        Function, block and position in the block of each instruction.
    ins_opcode, ins_result, ins_text : ndarray of str
        Opcode, result name (empty when none) and printed text.
    ins_line, ins_col : ndarray of int32
        Source line and column (0 without line tables).
    ins_mem : ndarray of uint8
        Memory access class (``MEM_NONE``, ``MEM_LOAD``, ``MEM_STORE``,
        ``MEM_RMW``, ``MEM_COPY``, ``MEM_SET``).
    ins_call : ndarray of uint8
        Call class (``CALL_NONE``; ``CALL_INTRINSIC``: intrinsics and memory
        library calls; ``CALL_TRACKED``: calls that may run traced code).
    ins_obj : ndarray of uint8
        Object class: creates or releases a memory object (``OBJ_ALLOCA``,
        ``OBJ_MALLOC``, ..., ``OBJ_FREE``; ``OBJ_NONE``).
    ins_callee : ndarray of int32
        The called function of a direct call (-1 otherwise).
    ins_size : ndarray of int64
        Bytes a load, store or atomic accesses (0 otherwise).
    op_ptr : ndarray of int64
        CSR offsets of each instruction's operands (``n_instructions + 1``).
    op_kind : ndarray of uint8
        Operand kind (``OP_INSTRUCTION``, ``OP_ARGUMENT``, ``OP_GLOBAL``,
        ``OP_FUNCTION``, ``OP_CONSTANT``, ``OP_BLOCK``, ``OP_OTHER``).
    op_ref : ndarray of int64
        What the operand refers to in the table of its kind (-1: none).
    op_block : ndarray of int32
        The incoming block of a phi operand (-1 otherwise).
    gv_name : ndarray of str
        Every global variable (LLVM's own ``llvm.*`` tables excluded).
    gv_size : ndarray of int64
        Its size in bytes.
    gv_defined : ndarray of bool
        Whether it is defined in the module.
    files : ndarray of str
        The source files named by the line tables.
    extra : dict
        Free for annotations; not saved with a trace.

    See Also
    --------
    instrument_module : builds the table of a module.

    Examples
    --------
    >>> from frontend import trace_program
    >>> st = trace_program("samples/strassen.c", compile_options={"defines": ["N=2"]}).static
    >>> st.n_functions, st.n_functions == len(st.fn_name)
    (8, True)
    >>> fid = st.function_id("strassen")
    >>> int(st.fn_nargs[fid]), bool(st.fn_returns_void[fid]), bool(st.fn_defined[fid])
    (7, True, True)
    >>> sid = int(st.blk_first[st.fn_entry_block[fid]])
    >>> st.ins_opcode[sid], str(st.fn_name[st.ins_func[sid]])
    ('alloca', 'strassen')
    >>> main = st.function_id("main")
    >>> ret = [s for s in range(st.n_instructions)
    ...        if st.ins_func[s] == main and st.ins_opcode[s] == "ret"]
    >>> st.location(ret[0])  # return 0;
    '.../samples/strassen.c:58'
    >>> st.function_id("nope")
    Traceback (most recent call last):
        ...
    KeyError: 'nope'
    """

    fn_name: np.ndarray
    fn_defined: np.ndarray
    fn_entry_block: np.ndarray
    fn_nargs: np.ndarray
    fn_returns_void: np.ndarray
    fn_file: np.ndarray
    blk_func: np.ndarray
    blk_first: np.ndarray
    blk_ninstr: np.ndarray
    blk_label: np.ndarray
    ins_func: np.ndarray
    ins_block: np.ndarray
    ins_index: np.ndarray
    ins_opcode: np.ndarray
    ins_result: np.ndarray
    ins_text: np.ndarray
    ins_line: np.ndarray
    ins_col: np.ndarray
    ins_mem: np.ndarray
    ins_call: np.ndarray
    ins_obj: np.ndarray
    ins_callee: np.ndarray
    ins_size: np.ndarray
    op_ptr: np.ndarray
    op_kind: np.ndarray
    op_ref: np.ndarray
    op_block: np.ndarray
    gv_name: np.ndarray
    gv_size: np.ndarray
    gv_defined: np.ndarray
    files: np.ndarray
    extra: dict = field(default_factory=dict)

    @property
    def n_instructions(self):
        return len(self.ins_func)

    @property
    def n_blocks(self):
        return len(self.blk_func)

    @property
    def n_functions(self):
        return len(self.fn_name)

    def function_id(self, name):
        """Id of the function called ``name``; KeyError when there is none."""
        hits = np.flatnonzero(self.fn_name == name)
        if len(hits) == 0:
            raise KeyError(name)
        return int(hits[0])

    def location(self, sid):
        """``file:line`` of instruction ``sid`` (``function`` when no line table)."""
        f = int(self.ins_func[sid])
        line = int(self.ins_line[sid])
        fname = self.files[self.fn_file[f]] if self.fn_file[f] >= 0 else ""
        if line > 0 and fname:
            return f"{fname}:{line}"
        return f"function {self.fn_name[f]}"

    def arrays(self):
        """Every array field by name (for saving)."""
        return {
            k: getattr(self, k)
            for k in self.__dataclass_fields__
            if k != "extra"
        }


def function_bodies(lines):
    """Locate function definitions in printed module text.

    Parameters
    ----------
    lines : list of str
        The module text split on newlines.

    Returns
    -------
    dict
        Function name -> ``(define_line, close_line, spans)`` where ``spans``
        lists, in order, the ``(first, last)`` line indices of each
        instruction of the body (most take one line; ``switch`` lists its
        cases up to ``]`` and ``invoke`` continues on an indented line).
        Labels, blank lines, comments and debug records are not instructions.
    """
    bodies = {}
    k = 0
    while k < len(lines):
        if not lines[k].startswith("define "):
            k += 1
            continue
        m = re.search(r'@("(?:[^"\\]|\\.)*"|[-a-zA-Z$._0-9]+)\(', lines[k])
        name = m.group(1)
        if name.startswith('"'):
            name = bytes(name[1:-1], "utf-8").decode("unicode_escape")
        end = k + 1
        spans = []
        while lines[end] != "}":
            ln = lines[end]
            st = ln.strip()
            if ln.startswith("  ") and st and not st.startswith((";", "#dbg_")):
                first = end
                if st.endswith("["):
                    while not lines[end].strip().startswith("]"):
                        end += 1
                while lines[end + 1].startswith("    ") and not lines[end + 1].strip().startswith(
                    "#dbg_"
                ):
                    end += 1
                spans.append((first, end))
            end += 1
        bodies[name] = (k, end, spans)
        k = end + 1
    return bodies


def text_opcode(line):
    """The opcode of a printed instruction line (``%x = tail call ...`` -> ``call``)."""
    body = line.strip()
    m = _RESULT_RE.match(body)
    if m:
        body = body[m.end():].strip()
    words = body.split(None, 2)
    if words and words[0] in ("tail", "musttail", "notail"):
        words = words[1:]
    return words[0].rstrip(",") if words else ""


@dataclass(frozen=True, eq=False)
class ModuleWalk:
    """llvmlite handles of a module's instructions, indexed by instruction id.

    Kept from `build_static_table` so that instrumentation does not walk the
    module through the FFI again.
    """

    instructions: list
    operands: list
    spans: list


def _parse_debug_info(text):
    """Map metadata ids to (line, col, scope) and subprogram ids to file names."""
    locs = {}
    scopes = {}
    files = {}
    for m in re.finditer(r"^!(\d+) = (distinct )?!(\w+)\((.*)\)$", text, re.M):
        mid, kind, body = int(m.group(1)), m.group(3), m.group(4)
        if kind == "DILocation":
            line = re.search(r"\bline: (\d+)", body)
            col = re.search(r"\bcolumn: (\d+)", body)
            locs[mid] = (int(line.group(1)) if line else 0, int(col.group(1)) if col else 0)
        elif kind == "DIFile":
            fn = re.search(r'filename: "((?:[^"\\]|\\.)*)"', body)
            dn = re.search(r'directory: "((?:[^"\\]|\\.)*)"', body)
            name = fn.group(1) if fn else ""
            if name and dn and not os.path.isabs(name):
                name = os.path.normpath(os.path.join(dn.group(1), name))
            files[mid] = name
        elif kind in ("DISubprogram", "DILexicalBlock", "DILexicalBlockFile"):
            f = re.search(r"\bfile: !(\d+)", body)
            if f:
                scopes[mid] = int(f.group(1))
    return locs, scopes, files


def _ptr(v):
    return ctypes.cast(v._ptr, ctypes.c_void_p).value


def build_static_table(module, text, target_data):
    """Walk a parsed module and build its `StaticTable`.

    Parameters
    ----------
    module : llvmlite.binding.ModuleRef
    text : str
        ``str(module)``: used for source lines (debug metadata).
    target_data : llvmlite.binding.TargetData
        Gives access sizes.

    Returns
    -------
    table : StaticTable
    names : dict
        Identity (pointer) of each instruction and argument -> its printed
        name; instrumentation uses it to reference operands.
    walk : ModuleWalk
        The instructions, operands and text spans by instruction id.

    Raises
    ------
    UnsupportedIRError
        For inline asm, setjmp/longjmp, threads, exceptions and the like,
        naming the construct, the function and the source line.
    """
    locs, scopes, difiles = _parse_debug_info(text)
    lines = text.split("\n")
    bodies = function_bodies(lines)
    files = sorted(set(difiles.values()))
    file_index = {f: i for i, f in enumerate(files)}

    functions = list(module.functions)
    fn_id = {_ptr(f): i for i, f in enumerate(functions)}
    # LLVM's own tables (llvm.global_ctors, llvm.used, ...) are not program data
    gvars = [g for g in module.global_variables if not g.name.startswith("llvm.")]
    for g in gvars:
        if " thread_local" in str(g).split("=", 1)[-1].split('"')[0]:
            raise UnsupportedIRError(
                f"unsupported construct: thread-local variable '{g.name}' (_Thread_local / "
                "__thread); vcut traces single-threaded programs: declare it without the "
                "thread-local qualifier"
            )
    gv_id = {_ptr(g): i for i, g in enumerate(gvars)}

    fn_name, fn_defined, fn_entry, fn_nargs, fn_void, fn_file = [], [], [], [], [], []
    blk_func, blk_first, blk_ninstr, blk_label = [], [], [], []
    ins = {k: [] for k in (
        "func", "block", "index", "opcode", "result", "text", "line", "col",
        "mem", "call", "obj", "callee", "size")}
    op_ptr, op_kind, op_ref, op_block = [0], [], [], []
    names = {}
    walk_ops = []  # per sid: the operand list

    # First pass: ids of every block and instruction, names of values, and the
    # text span of every instruction; the walk is kept for the second pass and
    # for instrumentation, so the module is traversed through the FFI once.
    sid_of = {}
    bid_of = {}
    walk_blocks = {}  # function index -> list of (block, [instructions])
    spans_of = []  # per sid: (first line, last line)
    bid = 0
    for fi, f in enumerate(functions):
        arg_no = 0
        for a in f.arguments:
            if a.name:
                names[_ptr(a)] = quote_name("%", a.name)
            else:
                names[_ptr(a)] = f"%{arg_no}"
                arg_no += 1
        if f.is_declaration:
            continue
        spans = bodies[f.name][2]
        nth = 0
        blocks = []
        for b in f.blocks:
            bid_of[_ptr(b)] = bid
            bid += 1
            instrs = list(b.instructions)
            blocks.append((b, instrs))
            for i in instrs:
                if nth >= len(spans):
                    raise UnsupportedIRError(
                        f"internal error: {f.name} has more instructions than its text shows"
                    )
                p = _ptr(i)
                sid_of[p] = len(spans_of)
                spans_of.append(spans[nth])
                m = _RESULT_RE.match(lines[spans[nth][0]])
                if m:
                    names[p] = m.group(1)
                nth += 1
        if nth != len(spans):
            raise UnsupportedIRError(
                f"internal error: {f.name} shows {len(spans)} instructions, llvmlite {nth}"
            )
        walk_blocks[fi] = blocks

    for fi, f in enumerate(functions):
        fn_name.append(f.name)
        fn_defined.append(not f.is_declaration)
        args = list(f.arguments)
        fn_nargs.append(len(args))
        fn_void.append(False)
        ffile = -1
        if f.is_declaration:
            fn_entry.append(-1)
            fn_file.append(-1)
            continue
        define_line = bodies[f.name][0]
        header = lines[define_line].rsplit("{", 1)[0]
        fn_void[-1] = bool(re.match(r"^\s*define\b[^@]*\bvoid\s+@", header))
        dm = re.search(r"!dbg !(\d+)\s*$", header.strip())
        if dm and int(dm.group(1)) in scopes:
            ffile = file_index.get(difiles.get(scopes[int(dm.group(1))], ""), -1)
        fn_file.append(ffile)
        blocks = walk_blocks[fi]
        fn_entry.append(bid_of[_ptr(blocks[0][0])])
        for b, instrs in blocks:
            this_bid = bid_of[_ptr(b)]
            blk_func.append(fi)
            blk_first.append(len(ins["func"]))
            blk_ninstr.append(len(instrs))
            blk_label.append(b.name)
            for k, i in enumerate(instrs):
                first_line, last_line = spans_of[len(ins["func"])]
                itxt = " ".join(x.strip() for x in lines[first_line : last_line + 1])
                opcode = i.opcode
                dbg = _DBG_RE.search(itxt)
                line, col = locs.get(int(dbg.group(1)), (0, 0)) if dbg else (0, 0)
                if opcode in _UNSUPPORTED_OPCODES:
                    _unsupported(_UNSUPPORTED_OPCODES[opcode], f.name, files, ffile, line)
                if text_opcode(lines[first_line]) != opcode:
                    raise UnsupportedIRError(
                        f"internal error: instruction text mismatch in {f.name}: "
                        f"{itxt!r} is not a {opcode}"
                    )
                ops = list(i.operands)
                walk_ops.append(ops)
                mem = MEM_NONE
                call = CALL_NONE
                obj = OBJ_NONE
                callee = -1
                size = 0
                if opcode == "load":
                    mem, size = MEM_LOAD, target_data.get_abi_size(i.type)
                elif opcode == "store":
                    mem, size = MEM_STORE, target_data.get_abi_size(ops[0].type)
                elif opcode in ("atomicrmw", "cmpxchg"):
                    mem, size = MEM_RMW, target_data.get_abi_size(ops[1].type)
                elif opcode == "alloca":
                    obj = OBJ_ALLOCA
                elif opcode == "call":
                    target = ops[-1]
                    kind = target.value_kind.name
                    if kind == "inline_asm" or " asm " in itxt.split("(")[0] + " ":
                        _unsupported("inline assembly", f.name, files, ffile, line)
                    if "musttail " in itxt:
                        _unsupported("musttail calls", f.name, files, ffile, line)
                    if kind == "function":
                        callee = fn_id[_ptr(target)]
                        cname = target.name
                        if cname in _UNSUPPORTED_CALLS:
                            _unsupported(_UNSUPPORTED_CALLS[cname], f.name, files, ffile, line)
                        if cname.startswith("llvm."):
                            call = CALL_INTRINSIC
                            if cname.startswith(("llvm.memcpy", "llvm.memmove")):
                                mem = MEM_COPY
                            elif cname.startswith("llvm.memset"):
                                mem = MEM_SET
                        elif cname in _MEM_LIBC and functions[callee].is_declaration:
                            call = CALL_INTRINSIC
                            mem = _MEM_LIBC[cname]
                        else:
                            call = CALL_TRACKED
                            if functions[callee].is_declaration and cname in _HEAP_FUNCS:
                                obj = _HEAP_FUNCS[cname]
                    else:
                        call = CALL_TRACKED  # indirect call through a pointer
                phi_blocks = list(i.incoming_blocks) if opcode == "phi" else None
                for j, o in enumerate(ops):
                    kname = o.value_kind.name
                    p = _ptr(o)
                    kind = _OPKIND.get(kname)
                    if kind is None:
                        kind = OP_CONSTANT if kname.startswith(("constant", "undef", "poison")) else OP_OTHER
                    ref = -1
                    if kind == OP_INSTRUCTION:
                        ref = sid_of.get(p, -1)
                    elif kind == OP_ARGUMENT:
                        ref = next(n for n, a in enumerate(args) if _ptr(a) == p)
                    elif kind == OP_GLOBAL:
                        ref = gv_id.get(p, -1)
                    elif kind == OP_FUNCTION:
                        ref = fn_id.get(p, -1)
                    elif kind == OP_BLOCK:
                        ref = bid_of.get(p, -1)
                    op_kind.append(kind)
                    op_ref.append(ref)
                    op_block.append(bid_of[_ptr(phi_blocks[j])] if phi_blocks is not None else -1)
                op_ptr.append(len(op_kind))
                ins["func"].append(fi)
                ins["block"].append(this_bid)
                ins["index"].append(k)
                ins["opcode"].append(opcode)
                ins["result"].append(names.get(_ptr(i), ""))
                ins["text"].append(itxt.strip())
                ins["line"].append(line)
                ins["col"].append(col)
                ins["mem"].append(mem)
                ins["call"].append(call)
                ins["obj"].append(obj)
                ins["callee"].append(callee)
                ins["size"].append(size)

    gv_name = [g.name for g in gvars]
    gv_size = [target_data.get_abi_size(g.global_value_type) for g in gvars]
    gv_def = [not g.is_declaration for g in gvars]

    table = StaticTable(
        fn_name=np.array(fn_name, dtype=object),
        fn_defined=np.array(fn_defined, dtype=bool),
        fn_entry_block=np.array(fn_entry, dtype=np.int32),
        fn_nargs=np.array(fn_nargs, dtype=np.int32),
        fn_returns_void=np.array(fn_void, dtype=bool),
        fn_file=np.array(fn_file, dtype=np.int32),
        blk_func=np.array(blk_func, dtype=np.int32),
        blk_first=np.array(blk_first, dtype=np.int32),
        blk_ninstr=np.array(blk_ninstr, dtype=np.int32),
        blk_label=np.array(blk_label, dtype=object),
        ins_func=np.array(ins["func"], dtype=np.int32),
        ins_block=np.array(ins["block"], dtype=np.int32),
        ins_index=np.array(ins["index"], dtype=np.int32),
        ins_opcode=np.array(ins["opcode"], dtype=object),
        ins_result=np.array(ins["result"], dtype=object),
        ins_text=np.array(ins["text"], dtype=object),
        ins_line=np.array(ins["line"], dtype=np.int32),
        ins_col=np.array(ins["col"], dtype=np.int32),
        ins_mem=np.array(ins["mem"], dtype=np.uint8),
        ins_call=np.array(ins["call"], dtype=np.uint8),
        ins_obj=np.array(ins["obj"], dtype=np.uint8),
        ins_callee=np.array(ins["callee"], dtype=np.int32),
        ins_size=np.array(ins["size"], dtype=np.int64),
        op_ptr=np.array(op_ptr, dtype=np.int64),
        op_kind=np.array(op_kind, dtype=np.uint8),
        op_ref=np.array(op_ref, dtype=np.int64),
        op_block=np.array(op_block, dtype=np.int32),
        gv_name=np.array(gv_name, dtype=object),
        gv_size=np.array(gv_size, dtype=np.int64),
        gv_defined=np.array(gv_def, dtype=bool),
        files=np.array(files, dtype=object),
    )
    walk = ModuleWalk(
        instructions=[i for fi in sorted(walk_blocks) for _, il in walk_blocks[fi] for i in il],
        operands=walk_ops,
        spans=spans_of,
    )
    return table, names, walk


def _unsupported(what, func, files, ffile, line):
    where = f"function {func}"
    if ffile >= 0 and line > 0:
        where += f" ({files[ffile]}:{line})"
    raise UnsupportedIRError(
        f"unsupported construct: {what} in {where}; vcut traces single-threaded, "
        "sequential C only: rewrite that code without it"
    )
