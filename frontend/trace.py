"""The dynamic trace of one program run, its decoding and its file format.

A `Trace` holds, in execution order, every executed IR instruction (its
static id and the activation it ran in), the executed blocks, the function
activations (with the dynamic call instruction that opened each, so
recursion is explicit), every memory access (address, size, cycles, read or
write) and the memory objects (globals, stack allocas, heap blocks, argv)
with their lifetimes, plus the static table of the module.

File format (version `FORMAT_VERSION`): one ``.npz`` archive (numpy's zip of
``.npy`` arrays, readable without vcut). Array names:

* ``meta``: 0-d string, JSON with ``format`` (``"vcut-trace"``),
  ``format_version``, and the run's description (see `Trace.meta`);
* ``static__<field>``: the `StaticTable` arrays (strings as unicode arrays);
* ``dyn_sid``, ``dyn_act``: int32 per dynamic instruction;
* ``bs_block``, ``bs_act`` (int32), ``bs_start`` (int64): executed blocks
  and the index of their first dynamic instruction;
* ``act_func``, ``act_parent`` (int32), ``act_call`` (int64): activations;
  ``act_call`` is the dynamic index of the calling instruction (-1 for roots);
* ``mem_dyn`` (int64), ``mem_addr``, ``mem_size`` (uint64), ``mem_dt``
  (uint32, cycles, saturated at 2^24 - 1), ``mem_write`` (bool): memory
  accesses;
* ``obj_kind`` (uint8: 0 global, 1 stack, 2 heap, 3 argv), ``obj_base``,
  ``obj_size`` (uint64), ``obj_sid`` (int32: allocating instruction or -1),
  ``obj_global`` (int32: global id or -1), ``obj_alloc_dyn``,
  ``obj_free_dyn`` (int64: -1 = before the run / never freed).
"""

import json
import os
from dataclasses import dataclass, field, replace

import numpy as np

from vcut_base import arrays
from vcut_base.atomic import atomic_output
from vcut_base.errors import TraceFormatError
from vcut_base.inputs import check_input_file
from vcut_base.npzfile import read_versioned_npz, save_npz

from .events import END_REASONS
from .static import MEM_NONE, OBJ_ALLOCA, StaticTable
from .trace_checks import check_trace_arrays

__all__ = [
    "Trace",
    "decode_trace",
    "load_trace",
    "FORMAT_VERSION",
    "OBJ_GLOBAL",
    "OBJ_STACK",
    "OBJ_HEAP",
    "OBJ_ARGV",
    "OBJECT_KINDS",
]

FORMAT_VERSION = 1
OBJ_GLOBAL, OBJ_STACK, OBJ_HEAP, OBJ_ARGV = range(4)
OBJECT_KINDS = ("global", "stack", "heap", "argv")

_DYN_FIELDS = (
    "dyn_sid", "dyn_act", "bs_block", "bs_act", "bs_start", "act_func", "act_parent",
    "act_call", "mem_dyn", "mem_addr", "mem_size", "mem_dt", "mem_write", "obj_kind",
    "obj_base", "obj_size", "obj_sid", "obj_global", "obj_alloc_dyn", "obj_free_dyn",
)


@dataclass(frozen=True, eq=False)
class Trace:
    """A decoded dynamic trace (see the module docstring for every array).

    Every executed IR instruction in execution order, the executed blocks,
    the function activations, the memory accesses and the memory objects of
    one run, with the static table of the module. Dynamic instructions are
    numbered from 0 in execution order (the "dynamic index").

    Attributes
    ----------
    static : StaticTable
        The module's static instructions, blocks, functions and globals.
    dyn_sid, dyn_act : ndarray of int32
        Per dynamic instruction: its static id and its activation.
    bs_block, bs_act : ndarray of int32
        Per executed block: its static id and its activation.
    bs_start : ndarray of int64
        Per executed block: the dynamic index of its first instruction.
    act_func, act_parent : ndarray of int32
        Per activation: its function and its parent activation (-1: a root).
    act_call : ndarray of int64
        Per activation: the dynamic index of the call that opened it (-1 for
        roots), so recursion is explicit.
    mem_dyn : ndarray of int64
        Per memory access: the dynamic index of its instruction (sorted).
    mem_addr, mem_size : ndarray of uint64
        Its address and size in bytes.
    mem_dt : ndarray of uint32
        Its cycles by the cycle counter (saturated at ``2**24 - 1``; 0 without
        timing).
    mem_write : ndarray of bool
        Whether it writes.
    obj_kind : ndarray of uint8
        Per memory object: 0 global, 1 stack, 2 heap, 3 argv
        (``OBJECT_KINDS``).
    obj_base, obj_size : ndarray of uint64
        Its address and size in bytes.
    obj_sid : ndarray of int32
        The instruction that allocated it (-1: a global or argv).
    obj_global : ndarray of int32
        Its global id (-1: not a global).
    obj_alloc_dyn, obj_free_dyn : ndarray of int64
        Dynamic index of its allocation and release (-1: before the run /
        never freed; a stack object dies with its activation's last
        instruction).
    meta : dict
        The run: ``program`` (sources), ``argv``, ``exit_code``,
        ``end_reason`` (text), ``truncated`` (the instruction budget cut the
        run), ``max_instructions``, ``roi``, ``timing``, ``compiler``,
        ``flags``, ``stdout``/``stderr`` (text), ``events`` (stream length in
        words), ``run_seconds``.

    See Also
    --------
    trace_program : makes one.
    load_trace : reads one `save` wrote.

    Examples
    --------
    A program of five instructions (LLVM IR, so that the counts do not depend
    on the C compiler):

    >>> import os, tempfile
    >>> from frontend import trace_program
    >>> ir = '''define i32 @main() {
    ...   %p = alloca i32
    ...   store i32 7, ptr %p
    ...   %v = load i32, ptr %p
    ...   %w = add i32 %v, 1
    ...   ret i32 %w
    ... }
    ... '''
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = os.path.join(tmp, "eight.ll")
    ...     _ = open(path, "w").write(ir)
    ...     t = trace_program(path)
    >>> t.exit_code, t.dynamic_instructions, t.blocks_executed, t.memory_operations
    (8, 5, 1, 2)
    >>> t.static.ins_opcode[t.dyn_sid].tolist()
    ['alloca', 'store', 'load', 'add', 'ret']
    >>> t.mem_write.tolist(), t.mem_size.tolist()
    ([True, False], [4, 4])

    The objects: argv and its one string (the program's name), then the
    ``alloca``, which both accesses fall in:

    >>> t.obj_kind.tolist(), t.obj_alloc_dyn.tolist(), t.obj_free_dyn.tolist()
    ([3, 3, 1], [-1, -1, 0], [-1, -1, 4])
    >>> t.locate_accesses().tolist()
    [2, 2]
    >>> t.calls("main"), t.act_parent.tolist(), t.block_counts().tolist()
    (1, [-1], [1])
    """

    static: StaticTable
    dyn_sid: np.ndarray
    dyn_act: np.ndarray
    bs_block: np.ndarray
    bs_act: np.ndarray
    bs_start: np.ndarray
    act_func: np.ndarray
    act_parent: np.ndarray
    act_call: np.ndarray
    mem_dyn: np.ndarray
    mem_addr: np.ndarray
    mem_size: np.ndarray
    mem_dt: np.ndarray
    mem_write: np.ndarray
    obj_kind: np.ndarray
    obj_base: np.ndarray
    obj_size: np.ndarray
    obj_sid: np.ndarray
    obj_global: np.ndarray
    obj_alloc_dyn: np.ndarray
    obj_free_dyn: np.ndarray
    meta: dict = field(default_factory=dict)

    # -- summary -------------------------------------------------------------
    @property
    def dynamic_instructions(self):
        """Number of executed IR instructions."""
        return int(len(self.dyn_sid))

    @property
    def blocks_executed(self):
        return int(len(self.bs_block))

    @property
    def memory_operations(self):
        """Executed instructions that access memory (loads, stores, atomics, mem*)."""
        return int(np.count_nonzero(self.static.ins_mem[self.dyn_sid] != MEM_NONE))

    @property
    def truncated(self):
        return bool(self.meta.get("truncated", False))

    @property
    def exit_code(self):
        """The program's exit status; None when the budget stopped it first."""
        code = self.meta.get("exit_code")
        return None if code is None else int(code)

    def spilled(self):
        """This trace with its large arrays in spill files (`vcut_base.arrays.spill`)
        while a ``--spill`` directory is in force; itself otherwise."""
        if arrays.spill_directory() is None:
            return self
        return replace(self, **{k: arrays.spill(getattr(self, k)) for k in _DYN_FIELDS})

    def summary(self):
        """The JSON-able summary ``vcut trace --json`` prints."""
        return {
            "dynamic_instructions": self.dynamic_instructions,
            "blocks_executed": self.blocks_executed,
            "memory_operations": self.memory_operations,
            "memory_accesses": int(len(self.mem_addr)),
            "objects": int(len(self.obj_base)),
            "activations": int(len(self.act_func)),
            "static_instructions": int(self.static.n_instructions),
            "truncated": self.truncated,
            "end_reason": self.meta.get("end_reason", ""),
            "exit_code": self.exit_code,
            "sandbox": self.meta.get("sandbox", "none"),
            "sandbox_notes": list(self.meta.get("sandbox_notes", [])),
            "written_files": len(self.meta.get("written_files", [])),
        }

    # -- queries -------------------------------------------------------------
    def block_counts(self):
        """Executions of every static block (array indexed by block id)."""
        return np.bincount(self.bs_block, minlength=self.static.n_blocks)

    def instruction_counts(self):
        """Executions of every static instruction (array indexed by id)."""
        return np.bincount(self.dyn_sid, minlength=self.static.n_instructions)

    def calls(self, function):
        """Number of activations of ``function`` (by name)."""
        return int(np.count_nonzero(self.act_func == self.static.function_id(function)))

    def roi_activation_starts(self):
        """Where each activation of the region of interest begins (int64 dynamic indices).

        With ``--roi`` the run is traced only inside the named functions, so
        the trace is a sequence of their outermost activations (a call of an
        ROI function from inside another, or a recursive one, is part of the
        enclosing activation): the roots of the activation tree. Entry ``k``
        is the index of the first dynamic instruction of the ``k``-th of
        them; activation ``k`` runs to the start of ``k + 1`` (the last to the
        end of the trace). Empty when the trace has no ROI (the whole program
        was traced). O(executed blocks).
        """
        names = self.meta.get("roi") or []
        fids = []
        for name in names if isinstance(names, list) else []:
            try:
                fids.append(self.static.function_id(name))
            except KeyError:
                continue
        if not fids:
            return np.zeros(0, dtype=np.int64)
        root = (self.act_parent < 0) & np.isin(self.act_func, fids)
        blocks = np.flatnonzero(root[self.bs_act])
        acts = self.bs_act[blocks]
        # the blocks of one root activation come before those of the next
        first = np.ones(len(acts), dtype=bool)
        first[1:] = acts[1:] != acts[:-1]
        starts = self.bs_start[blocks[first]].astype(np.int64)
        return np.unique(starts[starts < self.dynamic_instructions])

    def max_recursion_depth(self, function):
        """Deepest nesting of ``function`` inside itself (1 = no recursion)."""
        fid = self.static.function_id(function)
        depth = np.zeros(len(self.act_func), dtype=np.int64)
        best = 0
        for a in range(len(self.act_func)):  # parents precede children
            p = self.act_parent[a]
            d = depth[p] if p >= 0 else 0
            if self.act_func[a] == fid:
                d += 1
            depth[a] = d
            best = max(best, d)
        return int(best)

    def locate_accesses(self):
        """Index of the object each memory access falls in (-1: none found).

        An access ``[addr, addr+size)`` is located in an object that contains
        it whole and is live at the access (allocated before, not yet freed or
        returned from); among objects at different bases the one with the
        nearest base below the access wins (the innermost).
        """
        if len(self.obj_base) == 0:
            return np.full(len(self.mem_addr), -1, dtype=np.int64)
        from . import trace_kernels  # lazy: numba, imported on first use (start-up)

        order = np.lexsort((self.obj_alloc_dyn, self.obj_base))
        bases = self.obj_base[order]
        starts = np.flatnonzero(np.r_[True, bases[1:] != bases[:-1]])
        group_ptr = np.r_[starts, len(order)].astype(np.int64)
        return trace_kernels.locate_accesses(
            self.mem_addr, self.mem_size, self.mem_dyn, bases[starts], group_ptr, order,
            self.obj_size, self.obj_alloc_dyn, self.obj_free_dyn, np.uint64(self.obj_size.max()),
        )

    # -- file format ---------------------------------------------------------
    def save(self, path):
        """Write the trace to ``path`` (``.npz``) atomically (temp file + rename).

        Raises
        ------
        OutputError
            The path's directory does not exist or is not writable.
        """
        arrays = {f"static__{k}": _to_saveable(v) for k, v in self.static.arrays().items()}
        for k in _DYN_FIELDS:
            arrays[k] = getattr(self, k)
        meta = dict(self.meta, format="vcut-trace", format_version=FORMAT_VERSION)
        arrays["meta"] = np.array(json.dumps(meta))
        with atomic_output(path) as fh:
            save_npz(fh, arrays)


def _to_saveable(a):
    if a.dtype == object:
        return np.array([str(x) for x in a], dtype=str)
    return a


def load_trace(path, *, mmap=False):
    """Read a trace written by `Trace.save`.

    Every array is checked against the invariants of `frontend.trace_checks`
    before the trace is returned, so a corrupt file is refused here rather
    than misread later.

    Parameters
    ----------
    path : str or path-like
        The ``.npz`` file.
    mmap : bool, default False
        Map its arrays from the file instead of reading them into memory
        (copy-on-write; the pages are the file's, which the kernel drops under
        memory pressure): how a disk-backed analysis (``--spill``) reads a
        trace larger than memory. The file must not change while the trace is
        in use.

    Returns
    -------
    Trace
        The trace as saved, ``meta`` included (with ``format`` and
        ``format_version``).

    Raises
    ------
    TraceFormatError
        Missing, not a regular file, not a vcut trace, corrupt, or written by
        another format version.

    Examples
    --------
    >>> import os, tempfile
    >>> from frontend import load_trace, trace_program
    >>> t = trace_program("samples/strassen.c", compile_options={"defines": ["N=2"]})
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = os.path.join(tmp, "strassen.npz")
    ...     t.save(path)
    ...     back = load_trace(path)
    >>> back.dynamic_instructions == t.dynamic_instructions, back.calls("strassen")
    (True, 8)
    >>> back.meta["format"], back.meta["exit_code"]
    ('vcut-trace', 0)
    >>> load_trace("no-such-trace.npz")
    Traceback (most recent call last):
        ...
    vcut_base.errors.TraceFormatError: trace file not found: no-such-trace.npz
    """
    path = os.fspath(path)
    check_input_file(path, "trace file", TraceFormatError, missing=TraceFormatError)
    fields = [k for k in StaticTable.__dataclass_fields__ if k != "extra"]
    meta, arrays = read_versioned_npz(
        path, kind="trace", version=FORMAT_VERSION, error=TraceFormatError,
        remake="re-create it with 'vcut trace'",
        required=[f"static__{k}" for k in fields] + list(_DYN_FIELDS), mmap=mmap,
    )
    static, dyn = check_trace_arrays({k: arrays[f"static__{k}"] for k in fields},
                                     {k: arrays[k] for k in _DYN_FIELDS}, meta, path)
    static = {k: a.astype(object) if a.dtype.kind == "U" else a for k, a in static.items()}
    return Trace(static=StaticTable(**static), meta=meta, **dyn)


def decode_trace(static, events, *, global_addresses=(), argv_objects=(), meta=None):
    """Decode a raw event stream into a `Trace`.

    Parameters
    ----------
    static : StaticTable
    events : numpy.ndarray of uint64
    global_addresses : sequence of int
        Run-time address of each global (static-table order; 0 = unknown).
    argv_objects : sequence of (base, size)
    meta : dict, optional

    Raises
    ------
    TraceFormatError
        The stream is inconsistent with the static table.
    """
    from . import trace_kernels  # lazy: numba, imported on first use (start-up)

    events = np.ascontiguousarray(events, dtype=np.uint64)
    meta = dict(meta or {})
    counts, n_dyn, err, err_pos = trace_kernels.count_events(events, static.blk_ninstr)
    if err:
        raise TraceFormatError(
            f"corrupt event stream: {trace_kernels.ERRORS[err]} at word {err_pos}"
        )
    nblk = static.n_blocks
    blk_is_entry = np.zeros(nblk, dtype=np.bool_)
    ent = static.fn_entry_block[static.fn_entry_block >= 0]
    blk_is_entry[ent] = True
    last = static.blk_first + static.blk_ninstr - 1
    blk_ends_ret = static.ins_opcode[last] == "ret" if nblk else np.zeros(0, dtype=bool)
    blk_ends_ret = np.asarray(blk_ends_ret, dtype=np.bool_)
    tracked = static.ins_call == 2
    expects = (static.ins_mem != MEM_NONE) | (static.ins_obj != 0) | tracked
    n_mem = counts[2] + counts[3] + counts[8] + counts[9]
    out = {
        "dyn_sid": np.empty(n_dyn, np.int32), "dyn_act": np.empty(n_dyn, np.int32),
        "bs_block": np.empty(counts[1], np.int32), "bs_act": np.empty(counts[1], np.int32),
        "bs_start": np.empty(counts[1], np.int64),
        "act_func": np.empty(counts[1], np.int32), "act_parent": np.empty(counts[1], np.int32),
        "act_call": np.empty(counts[1], np.int64),
        "mem_dyn": np.empty(n_mem, np.int64), "mem_addr": np.empty(n_mem, np.uint64),
        "mem_size": np.empty(n_mem, np.uint64), "mem_dt": np.empty(n_mem, np.uint32),
        "mem_write": np.empty(n_mem, np.bool_),
        "al_dyn": np.empty(counts[5], np.int64), "al_base": np.empty(counts[5], np.uint64),
        "al_size": np.empty(counts[5], np.uint64),
        "fr_dyn": np.empty(counts[6], np.int64), "fr_base": np.empty(counts[6], np.uint64),
    }
    filled = np.zeros(6, dtype=np.int64)
    err, err_pos, end_reason = trace_kernels.decode_events(
        events, static.blk_first, static.blk_ninstr, static.blk_func, blk_is_entry,
        blk_ends_ret, expects, tracked, static.ins_size, *out.values(), filled,
    )
    if err:
        exc = TraceFormatError(
            f"corrupt event stream: {trace_kernels.ERRORS[err]} at word {err_pos}; "
            "the trace does not match the program's static table"
        )
        exc.position = int(err_pos)
        raise exc
    n, nb, na, nm, nal, nfr = (int(x) for x in filled)
    dyn_sid, dyn_act = out["dyn_sid"][:n], out["dyn_act"][:n]
    act_func, act_parent, act_call = out["act_func"][:na], out["act_parent"][:na], out["act_call"][:na]
    al_dyn, al_base, al_size = out["al_dyn"][:nal], out["al_base"][:nal], out["al_size"][:nal]
    fr_dyn, fr_base = out["fr_dyn"][:nfr], out["fr_base"][:nfr]

    # objects: globals, argv, then allocations in execution order
    g_addr = np.asarray(global_addresses, dtype=np.uint64)
    g_ok = np.flatnonzero(g_addr != 0) if len(g_addr) else np.zeros(0, dtype=np.int64)
    argv = np.asarray(list(argv_objects), dtype=np.uint64).reshape(-1, 2)
    al_sid = dyn_sid[al_dyn] if nal else np.zeros(0, dtype=np.int32)
    al_is_stack = static.ins_obj[al_sid] == OBJ_ALLOCA
    obj_kind = np.concatenate([
        np.full(len(g_ok), OBJ_GLOBAL, dtype=np.uint8),
        np.full(len(argv), OBJ_ARGV, dtype=np.uint8),
        np.where(al_is_stack, OBJ_STACK, OBJ_HEAP).astype(np.uint8),
    ])
    obj_base = np.concatenate([g_addr[g_ok], argv[:, 0], al_base]).astype(np.uint64)
    obj_size = np.concatenate([
        static.gv_size[g_ok].astype(np.uint64), argv[:, 1], al_size,
    ]).astype(np.uint64)
    n_pre = len(g_ok) + len(argv)
    obj_sid = np.concatenate([np.full(n_pre, -1, dtype=np.int32), al_sid.astype(np.int32)])
    obj_global = np.concatenate([
        g_ok.astype(np.int32), np.full(len(argv) + nal, -1, dtype=np.int32),
    ])
    obj_alloc = np.concatenate([np.full(n_pre, -1, dtype=np.int64), al_dyn])
    obj_free = np.full(len(obj_base), -1, dtype=np.int64)
    # stack objects die with their activation
    if nal:
        act_end = trace_kernels.activation_last(dyn_act, na)
        stack_idx = np.flatnonzero(al_is_stack)
        obj_free[n_pre + stack_idx] = act_end[dyn_act[al_dyn[stack_idx]]]
    # heap frees: match each FREE to the latest live allocation at that base
    live = {}
    heap_idx = np.flatnonzero(~al_is_stack) if nal else np.zeros(0, dtype=np.int64)
    events_h = sorted(
        [(int(al_dyn[i]), 1, int(al_base[i]), n_pre + int(i)) for i in heap_idx]
        + [(int(fr_dyn[i]), 0, int(fr_base[i]), -1) for i in range(nfr)]
    )
    for t, is_alloc, base, oid in events_h:
        if is_alloc:
            live[base] = oid
        elif base in live:
            obj_free[live.pop(base)] = t
    meta["end_reason"] = END_REASONS.get(int(end_reason), "no end marker (the run was cut short)")
    meta["end_code"] = int(end_reason)
    meta["events"] = int(len(events))
    return Trace(
        static=static,
        dyn_sid=dyn_sid,
        dyn_act=dyn_act,
        bs_block=out["bs_block"][:nb],
        bs_act=out["bs_act"][:nb],
        bs_start=out["bs_start"][:nb],
        act_func=act_func,
        act_parent=act_parent,
        act_call=act_call,
        mem_dyn=out["mem_dyn"][:nm],
        mem_addr=out["mem_addr"][:nm],
        mem_size=out["mem_size"][:nm],
        mem_dt=out["mem_dt"][:nm],
        mem_write=out["mem_write"][:nm],
        obj_kind=obj_kind,
        obj_base=obj_base,
        obj_size=obj_size,
        obj_sid=obj_sid,
        obj_global=obj_global,
        obj_alloc_dyn=obj_alloc,
        obj_free_dyn=obj_free,
        meta=meta,
    )
