"""Invariants of a trace read from a file, checked before any kernel sees it.

A trace ``.npz`` is plain numpy: anyone can edit it, and a bit flip in an
index array makes the numba kernels of `ir_graph.build` read out of bounds
(a segmentation fault) or silently build another graph. `check_trace_arrays`
checks, in O(size) vectorised numpy, what the decoder guarantees for traces
it writes:

* every array is one-dimensional with the dtype kind of its field, and the
  arrays of one table (functions, blocks, instructions, operands, globals,
  dynamic instructions, executed blocks, activations, accesses, objects)
  have one length;
* the static table is consistent: operand offsets start at 0, never
  decrease and end at the operand count; every id is in range (blocks of
  their function, instructions inside their block, entry blocks, callees,
  files, operand references, argument indices below the function's
  parameter count);
* the dynamic arrays agree with it and with each other: every dynamic
  instruction runs in an activation of its own function; executed blocks
  start, in order, at their block's first instruction in their activation;
  activations come after their parents and are opened by a call in the
  parent; memory accesses are in execution order, belong to instructions
  that access memory, have the static size of loads and stores and do not
  wrap around the address space; objects reference existing instructions,
  globals and times;
* the meta fields vcut reads have their types.

The first violation raises `TraceFormatError` naming the file, the array,
the index and the value.
"""

import numpy as np

from vcut_base.errors import TraceFormatError
from vcut_base.memory import check_memory

from .static import (
    MEM_LOAD,
    MEM_NONE,
    MEM_RMW,
    MEM_STORE,
    OP_ARGUMENT,
    OP_BLOCK,
    OP_FUNCTION,
    OP_GLOBAL,
    OP_INSTRUCTION,
)

__all__ = ["check_trace_arrays", "MAX_ACCESS_BYTES", "MAX_FUNCTION_ARGS"]

#: Largest size of one memory access: 64 GiB, sixteen times the default
#: address-space limit of a traced program. The cache model walks every
#: 32-byte block of an access, so a corrupt size of 2^40 would keep it busy
#: for minutes.
MAX_ACCESS_BYTES = 1 << 36

#: Most parameters a function may have (LLVM allows more; C compilers
#: stop far below).
MAX_FUNCTION_ARGS = 1 << 16

# field: (table, dtype kinds); table names the length all its arrays share
_STATIC = {
    "fn_name": ("F", "UO"), "fn_defined": ("F", "b"), "fn_entry_block": ("F", "iu"),
    "fn_nargs": ("F", "iu"), "fn_returns_void": ("F", "b"), "fn_file": ("F", "iu"),
    "blk_func": ("B", "iu"), "blk_first": ("B", "iu"), "blk_ninstr": ("B", "iu"),
    "blk_label": ("B", "UO"),
    "ins_func": ("S", "iu"), "ins_block": ("S", "iu"), "ins_index": ("S", "iu"),
    "ins_opcode": ("S", "UO"), "ins_result": ("S", "UO"), "ins_text": ("S", "UO"),
    "ins_line": ("S", "iu"), "ins_col": ("S", "iu"), "ins_mem": ("S", "iu"),
    "ins_call": ("S", "iu"), "ins_obj": ("S", "iu"), "ins_callee": ("S", "iu"),
    "ins_size": ("S", "iu"),
    "op_ptr": ("S+1", "iu"), "op_kind": ("P", "iu"), "op_ref": ("P", "iu"),
    "op_block": ("P", "iu"),
    "gv_name": ("G", "UO"), "gv_size": ("G", "iu"), "gv_defined": ("G", "b"),
    "files": ("L", "UO"),
}
_DYN = {
    "dyn_sid": ("N", "iu"), "dyn_act": ("N", "iu"),
    "bs_block": ("NB", "iu"), "bs_act": ("NB", "iu"), "bs_start": ("NB", "iu"),
    "act_func": ("A", "iu"), "act_parent": ("A", "iu"), "act_call": ("A", "iu"),
    "mem_dyn": ("M", "iu"), "mem_addr": ("M", "iu"), "mem_size": ("M", "iu"),
    "mem_dt": ("M", "iu"), "mem_write": ("M", "b"),
    "obj_kind": ("O", "iu"), "obj_base": ("O", "iu"), "obj_size": ("O", "iu"),
    "obj_sid": ("O", "iu"), "obj_global": ("O", "iu"), "obj_alloc_dyn": ("O", "iu"),
    "obj_free_dyn": ("O", "iu"),
}
# the dtype each integer array is given once its values are known to fit
_DTYPES = {
    "fn_entry_block": np.int32, "fn_nargs": np.int32, "fn_file": np.int32,
    "blk_func": np.int32, "blk_first": np.int32, "blk_ninstr": np.int32,
    "ins_func": np.int32, "ins_block": np.int32, "ins_index": np.int32, "ins_line": np.int32,
    "ins_col": np.int32, "ins_mem": np.uint8, "ins_call": np.uint8, "ins_obj": np.uint8,
    "ins_callee": np.int32, "ins_size": np.int64, "op_ptr": np.int64, "op_kind": np.uint8,
    "op_ref": np.int64, "op_block": np.int32, "gv_size": np.int64,
    "dyn_sid": np.int32, "dyn_act": np.int32, "bs_block": np.int32, "bs_act": np.int32,
    "bs_start": np.int64, "act_func": np.int32, "act_parent": np.int32, "act_call": np.int64,
    "mem_dyn": np.int64, "mem_addr": np.uint64, "mem_size": np.uint64, "mem_dt": np.uint32,
    "obj_kind": np.uint8, "obj_base": np.uint64, "obj_size": np.uint64, "obj_sid": np.int32,
    "obj_global": np.int32, "obj_alloc_dyn": np.int64, "obj_free_dyn": np.int64,
}
_META_TYPES = {"timing": (bool,), "truncated": (bool,), "exit_code": (int, type(None)),
               "program": (list,), "end_reason": (str,), "max_instructions": (int, type(None)),
               "stdout": (str,), "stderr": (str,), "sandbox": (str,), "sandbox_notes": (list,),
               "written_files": (list,), "roi": (list,)}


class _Checker:
    def __init__(self, where):
        self.where = where

    def fail(self, what):
        raise TraceFormatError(f"{self.where} is corrupt: {what}; re-create it with 'vcut trace'")

    def range(self, name, a, lo, hi, where=None, note=""):
        """Every value of ``a`` in ``[lo, hi)`` (``hi`` None: no upper bound)."""
        if len(a) == 0:
            return
        bad = a < lo if hi is None else (a < lo) | (a >= hi)
        if bad.any():
            k = int(np.flatnonzero(bad)[0])
            idx = k if where is None else int(where[k])
            span = f">= {lo}" if hi is None else f"in {lo}..{hi - 1}"
            self.fail(f"{name}[{idx}] = {a[k]}{note} is not {span}")

    def equal(self, name, a, b, what, where=None):
        """``a == b`` elementwise, else name the first index."""
        bad = a != b
        if bad.any():
            k = int(np.flatnonzero(bad)[0])
            idx = k if where is None else int(where[k])
            self.fail(f"{name}[{idx}] {what} ({a[k]} != {b[k]})")


def check_trace_arrays(static, dyn, meta, where):
    """Check the arrays and meta of a trace file; return them with normalised dtypes.

    Parameters
    ----------
    static : dict of numpy.ndarray
        The static-table fields (``fn_name``, ..., ``files``).
    dyn : dict of numpy.ndarray
        The dynamic fields (``dyn_sid``, ..., ``obj_free_dyn``).
    meta : dict
    where : str
        The file, for messages.

    Returns
    -------
    static, dyn : dict of numpy.ndarray
        The same arrays, integer ones converted to the dtypes the kernels are
        compiled for (values are checked to fit first).

    Raises
    ------
    TraceFormatError
        The first violated invariant (see the module docstring).
    """
    c = _Checker(where)
    for key, types in _META_TYPES.items():
        if key not in meta:
            continue
        value = meta[key]
        if not isinstance(value, types) or (isinstance(value, bool) and bool not in types):
            c.fail(f"meta field {key!r} is {value!r:.60}, not of type "
                   f"{' or '.join(t.__name__ for t in types)}")
    lengths = {}
    for fields, arrays in ((_STATIC, static), (_DYN, dyn)):
        for name, (table, kinds) in fields.items():
            a = arrays[name]
            if a.ndim != 1 or a.dtype.kind not in kinds:
                c.fail(f"array {name} is {a.dtype} of shape {a.shape}, expected a "
                       f"one-dimensional array of {_kind_words(kinds)}")
            first = lengths.setdefault(table, (name, len(a)))
            if first[1] != len(a):
                c.fail(f"array {name} has {len(a)} entries but {first[0]} has {first[1]}")
    n_ins = lengths["S"][1]
    if lengths["S+1"][1] != n_ins + 1:
        c.fail(f"op_ptr has {lengths['S+1'][1]} entries for {n_ins} instructions (expected {n_ins + 1})")
    F, B, S = lengths["F"][1], lengths["B"][1], n_ins
    P, G, L = lengths["P"][1], lengths["G"][1], lengths["L"][1]
    N, NB, A = lengths["N"][1], lengths["NB"][1], lengths["A"][1]
    st, d = static, dyn

    # -- static table ----------------------------------------------------------
    op_ptr = st["op_ptr"]
    if op_ptr[0] != 0 or op_ptr[-1] != P:
        c.fail(f"op_ptr runs from {op_ptr[0]} to {op_ptr[-1]}, expected 0 to {P} (the operand count)")
    c.range("op_ptr", op_ptr, 0, P + 1)
    op_ptr = op_ptr.astype(np.int64)
    steps = np.diff(op_ptr)
    if (steps < 0).any():
        k = int(np.flatnonzero(steps < 0)[0]) + 1
        c.fail(f"op_ptr[{k}] = {op_ptr[k]} is below op_ptr[{k - 1}] = {op_ptr[k - 1]}")
    c.range("fn_entry_block", st["fn_entry_block"], -1, B)
    c.range("fn_nargs", st["fn_nargs"], 0, MAX_FUNCTION_ARGS + 1)
    c.range("fn_file", st["fn_file"], -1, L)
    c.range("blk_func", st["blk_func"], 0, F)
    c.range("blk_first", st["blk_first"], 0, S)
    c.range("blk_ninstr", st["blk_ninstr"], 1, S + 1)
    c.range("blk_first + blk_ninstr", st["blk_first"].astype(np.int64) + st["blk_ninstr"], 1, S + 1)
    c.range("ins_func", st["ins_func"], 0, F)
    c.range("ins_block", st["ins_block"], 0, B)
    c.range("ins_callee", st["ins_callee"], -1, F)
    c.range("ins_size", st["ins_size"], 0, MAX_ACCESS_BYTES + 1)
    c.range("ins_mem", st["ins_mem"], 0, 256)
    c.range("ins_call", st["ins_call"], 0, 256)
    c.range("ins_obj", st["ins_obj"], 0, 256)
    c.range("op_kind", st["op_kind"], 0, 256)
    c.range("op_block", st["op_block"], -1, B)
    c.range("gv_size", st["gv_size"], 0, None)
    ins_block = st["ins_block"].astype(np.int64)
    c.equal("blk_func[ins_block]", st["blk_func"][ins_block], st["ins_func"],
            "differs from ins_func: an instruction's block is of another function")
    sid = np.arange(S, dtype=np.int64)
    first = st["blk_first"].astype(np.int64)[ins_block]
    inside = (sid >= first) & (sid < first + st["blk_ninstr"][ins_block])
    if not inside.all():
        k = int(np.flatnonzero(~inside)[0])
        c.fail(f"instruction {k} lies outside its block {ins_block[k]}")
    entry = st["fn_entry_block"].astype(np.int64)
    has = np.flatnonzero(entry >= 0)
    c.equal("blk_func[fn_entry_block]", st["blk_func"][entry[has]], has,
            "is not the function itself", where=has)
    owner = np.repeat(sid, steps)
    kind, ref = st["op_kind"], st["op_ref"]
    for k, hi, name in ((OP_INSTRUCTION, S, "an instruction"), (OP_GLOBAL, G, "a global"),
                        (OP_FUNCTION, F, "a function"), (OP_BLOCK, B, "a block")):
        sel = np.flatnonzero(kind == k)
        c.range("op_ref", ref[sel], -1, hi, where=sel, note=f" ({name})")
    sel = np.flatnonzero(kind == OP_ARGUMENT)
    nargs = st["fn_nargs"].astype(np.int64)[st["ins_func"][owner[sel]]]
    bad = (ref[sel] < 0) | (ref[sel] >= nargs)
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        c.fail(f"op_ref[{sel[k]}] = {ref[sel][k]} is not an argument of its function "
               f"(which has {nargs[k]})")

    # -- dynamic arrays ------------------------------------------------------
    c.range("dyn_sid", d["dyn_sid"], 0, S)
    c.range("dyn_act", d["dyn_act"], 0, A)
    c.range("act_func", d["act_func"], 0, F)
    dyn_sid = d["dyn_sid"].astype(np.int64)
    dyn_act = d["dyn_act"].astype(np.int64)
    act_func = d["act_func"].astype(np.int64)
    c.equal("act_func[dyn_act]", act_func[dyn_act], st["ins_func"][dyn_sid],
            "differs from the instruction's function")
    c.range("act_parent", d["act_parent"], -1, A)
    parent = d["act_parent"].astype(np.int64)
    bad = parent >= np.arange(A, dtype=np.int64)
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        c.fail(f"act_parent[{k}] = {d['act_parent'][k]} is not an earlier activation or -1")
    c.range("act_call", d["act_call"], -1, N)
    call = d["act_call"].astype(np.int64)
    called = np.flatnonzero(call >= 0)
    c.equal("dyn_act[act_call]", dyn_act[call[called]], parent[called],
            "is not the parent activation", where=called)
    c.range("bs_block", d["bs_block"], 0, B)
    c.range("bs_act", d["bs_act"], 0, A)
    c.range("bs_start", d["bs_start"], 0, N + 1)
    bs_start = d["bs_start"].astype(np.int64)
    if NB and (np.diff(bs_start) < 0).any():
        k = int(np.flatnonzero(np.diff(bs_start) < 0)[0]) + 1
        c.fail(f"bs_start[{k}] = {bs_start[k]} comes before the previous block's start")
    bs_block = d["bs_block"].astype(np.int64)
    c.equal("blk_func[bs_block]", st["blk_func"][bs_block], act_func[d["bs_act"]],
            "is not the function of its activation")
    ran = np.flatnonzero(bs_start < N)
    c.equal("dyn_sid[bs_start]", dyn_sid[bs_start[ran]], st["blk_first"][bs_block[ran]],
            "is not the first instruction of the block", where=ran)
    c.equal("dyn_act[bs_start]", dyn_act[bs_start[ran]], d["bs_act"][ran].astype(np.int64),
            "is not the block's activation", where=ran)
    # the parameter table build_graph allocates: one entry per parameter per activation
    check_memory(8 * float(st["fn_nargs"].astype(np.float64)[act_func].sum()),
                 f"{where}: the activations' parameters", "the trace is corrupt or too large")
    c.range("mem_dyn", d["mem_dyn"], 0, N)
    mem_dyn = d["mem_dyn"].astype(np.int64)
    if len(mem_dyn) > 1 and (np.diff(mem_dyn) < 0).any():
        k = int(np.flatnonzero(np.diff(mem_dyn) < 0)[0]) + 1
        c.fail(f"mem_dyn[{k}] = {mem_dyn[k]} is not in execution order")
    mem_sid = dyn_sid[mem_dyn]
    mem_class = st["ins_mem"][mem_sid]
    bad = mem_class == MEM_NONE
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        c.fail(f"access {k} belongs to instruction {mem_sid[k]}, which does not access memory")
    c.range("mem_size", d["mem_size"], 0, MAX_ACCESS_BYTES + 1)
    fixed = np.flatnonzero((mem_class == MEM_LOAD) | (mem_class == MEM_STORE) | (mem_class == MEM_RMW))
    c.equal("mem_size", d["mem_size"][fixed].astype(np.int64), st["ins_size"][mem_sid[fixed]].astype(np.int64),
            "differs from the instruction's access size", where=fixed)
    _no_wrap(c, "mem", d["mem_addr"], d["mem_size"])
    c.range("obj_kind", d["obj_kind"], 0, 4)
    c.range("obj_size", d["obj_size"], 0, None)
    c.range("obj_sid", d["obj_sid"], -1, S)
    c.range("obj_global", d["obj_global"], -1, G)
    c.range("obj_alloc_dyn", d["obj_alloc_dyn"], -1, N)
    c.range("obj_free_dyn", d["obj_free_dyn"], -1, N)
    for name in ("mem_addr", "mem_dt", "obj_base"):
        c.range(name, d[name], 0, None)

    conv = lambda k, a: a if a.dtype.kind in "bUO" else a.astype(_DTYPES[k], copy=False)  # noqa: E731
    return ({k: conv(k, a) for k, a in static.items()}, {k: conv(k, a) for k, a in dyn.items()})


def _no_wrap(c, prefix, addr, size):
    """``addr + size`` must not pass 2**64 (the access would wrap around)."""
    if len(addr) == 0:
        return
    a = addr.astype(np.uint64)
    s = size.astype(np.uint64)
    bad = s > np.uint64(2**64 - 1) - a
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        c.fail(f"{prefix}_addr[{k}] + {prefix}_size[{k}] = {int(a[k])} + {int(s[k])} passes the "
               "end of the address space")


def _kind_words(kinds):
    words = {"i": "integers", "u": "integers", "b": "booleans", "U": "strings", "O": "strings"}
    return " or ".join(dict.fromkeys(words[k] for k in kinds))
