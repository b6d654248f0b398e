"""Build the weighted dynamic dependency graph of a trace (§3 of the framework).

Nodes
    One node per executed IR instruction, in execution order, except the
    intrinsics that carry no computation (`EXCLUDED_INTRINSICS`: debug info,
    lifetime markers, assumptions, annotations). The tracing code itself is
    never in the trace.

Edges (``edge_kind`` bits, see ``ir_graph.dependency_kernels``)
    * REG: the dynamic instance that defined a used SSA value in the *same
      activation* (recursive calls have their own instances);
    * PHI: for a phi, the value of the incoming block actually taken (the
      previous block of the activation); the phis of a block read together;
    * ARG: producer of an actual argument -> uses of the parameter in the
      callee (through parameters passed on unchanged); for a function called
      back from library code (``qsort`` comparators) the library call node;
    * RET: the callee's ``ret`` -> uses of the call's result in the caller;
    * MEM: read after write, byte exact: a read depends on the last writer of
      every byte it reads (loads, atomics, memcpy/memmove sources; writers are
      stores, atomics, memcpy/memmove destinations, memset);
    * WAR / WAW (optional): write after read / after write, byte exact.
    An edge found several ways is one edge with several bits. Every edge goes
    from an earlier to a later node, so the graph is a DAG.

Weights
    The memory-transfer time of the edge, in cycles: the cycles of the
    destination's memory operation if it accesses memory, else those of the
    source's, else (a pure register edge) 1 cycle, a register forward.
    ``measured`` takes the cycles from the trace (the cycle counter read
    around each memory operation); ``model`` from `CacheModel`, a simulation of
    the address stream on the source's Table 2 machine (deterministic).
"""

import dataclasses
from dataclasses import asdict, dataclass

import numpy as np

from frontend import trace_kernels
from frontend.source import SourceMap
from frontend.static import MEM_NONE
from vcut_base import arrays
from vcut_base.arrays import unique
from vcut_base.errors import InputError
from vcut_base.memory import check_memory

from . import cache_kernels, dependency_kernels
from .graph import OPCLASSES, Graph, index_dtype

__all__ = ["CacheModel", "build_graph", "EXCLUDED_INTRINSICS", "WEIGHT_MODELS"]

WEIGHT_MODELS = ("measured", "model")

#: Calls to intrinsics with these prefixes are not graph nodes.
EXCLUDED_INTRINSICS = (
    "llvm.dbg.",
    "llvm.lifetime.",
    "llvm.invariant.",
    "llvm.assume",
    "llvm.experimental.noalias.scope.decl",
    "llvm.pseudoprobe",
    "llvm.var.annotation",
    "llvm.ptr.annotation",
    "llvm.annotation",
    "llvm.donothing",
    "llvm.sideeffect",
)

_OPCLASS_OF = {}
for _op in ("load", "store", "atomicrmw", "cmpxchg", "fence"):
    _OPCLASS_OF[_op] = 0
for _op in ("add", "sub", "mul", "udiv", "sdiv", "urem", "srem", "shl", "lshr", "ashr", "and",
            "or", "xor", "freeze"):
    _OPCLASS_OF[_op] = 1
for _op in ("fadd", "fsub", "fmul", "fdiv", "frem", "fneg"):
    _OPCLASS_OF[_op] = 2
for _op in ("icmp", "fcmp", "select"):
    _OPCLASS_OF[_op] = 3
for _op in ("trunc", "zext", "sext", "fptrunc", "fpext", "fptoui", "fptosi", "uitofp", "sitofp",
            "ptrtoint", "inttoptr", "bitcast", "addrspacecast"):
    _OPCLASS_OF[_op] = 4
_OPCLASS_OF["getelementptr"] = 5
for _op in ("br", "switch", "ret", "phi", "unreachable"):
    _OPCLASS_OF[_op] = 6
_OPCLASS_OF["call"] = 7
_OPCLASS_OF["alloca"] = 8
assert len(OPCLASSES) == 10


#: Working memory of `build_graph` per dynamic instruction beyond the edge arrays
#: (an upper bound), and what stays in memory when the graph's arrays are spill
#: files (``--spill``).
BUILD_BYTES_PER_NODE = 64.0
SPILLED_BUILD_BYTES_PER_NODE = 40.0


@dataclass(frozen=True)
class CacheModel:
    """Two-level LRU cache model of the source's Table 2 machine.

    Defaults: L1 64 KiB, 4-way, 32-byte blocks; L2 256 KiB, 8-way, 32-byte
    blocks; latencies 2 cycles (L1 hit), 20 cycles (L2 hit) and 110 cycles
    for memory (about 100 cycles of DRAM latency plus a 32-byte block at
    8 GB/s on a 2.4 GHz core). Write-allocate; an access costs the sum over
    the cache blocks it touches. The caches start empty, so the model is
    deterministic: the same address stream always gets the same cycles.

    Attributes
    ----------
    l1_size, l2_size : int
        Capacity of each level in bytes (default 64 KiB and 256 KiB).
    l1_ways, l2_ways : int
        Associativity of each level (default 4 and 8).
    block : int
        Cache block (line) size in bytes, both levels (default 32).
    lat_l1, lat_l2, lat_mem : float
        Cycles of an L1 hit, an L2 hit and a memory access (default 2, 20,
        110).

    Notes
    -----
    `validate` (called by `latencies`, hence by `build_graph`) raises
    `InputError` unless every size, way count and the block are positive and
    each level divides into whole sets of ``ways`` blocks.

    Examples
    --------
    >>> from ir_graph import CacheModel
    >>> cycles, (l1_hits, l2_hits, memory) = CacheModel().latencies([0, 8, 64], [8, 8, 40])
    >>> cycles.tolist(), int(l1_hits), int(l2_hits), int(memory)
    ([110.0, 2.0, 220.0], 1, 0, 3)

    The third access touches two 32-byte blocks, both from memory. A smaller
    machine:

    >>> tiny = CacheModel(l1_size=1024, l1_ways=2, l2_size=4096, block=64)
    >>> tiny.validate().l1_size
    1024
    >>> CacheModel(l1_size=1000).validate()
    Traceback (most recent call last):
        ...
    vcut_base.errors.InputError: L1 of 1000 bytes does not divide into 4 ways of 32-byte blocks
    """

    l1_size: int = 64 * 1024
    l1_ways: int = 4
    l2_size: int = 256 * 1024
    l2_ways: int = 8
    block: int = 32
    lat_l1: float = 2.0
    lat_l2: float = 20.0
    lat_mem: float = 110.0

    def validate(self):
        for name in ("l1_size", "l1_ways", "l2_size", "l2_ways", "block"):
            if getattr(self, name) <= 0:
                raise InputError(f"cache model {name} must be positive, got {getattr(self, name)}")
        for size, ways, level in ((self.l1_size, self.l1_ways, "L1"), (self.l2_size, self.l2_ways, "L2")):
            sets = size // (ways * self.block)
            if sets < 1 or sets * ways * self.block != size:
                raise InputError(
                    f"{level} of {size} bytes does not divide into {ways} ways of {self.block}-byte blocks"
                )
        return self

    def latencies(self, addr, size):
        """Per-access latency (cycles) and (L1 hits, L2 hits, memory) block counts."""
        self.validate()
        l1_sets = self.l1_size // (self.l1_ways * self.block)
        l2_sets = self.l2_size // (self.l2_ways * self.block)
        return cache_kernels.simulate_caches(
            np.asarray(addr, dtype=np.uint64), np.asarray(size, dtype=np.uint64), l1_sets,
            self.l1_ways, l2_sets, self.l2_ways, self.block, self.lat_l1, self.lat_l2, self.lat_mem,
        )


def _included(static):
    names = static.fn_name
    excl = np.zeros(static.n_instructions, dtype=bool)
    calls = np.flatnonzero(static.ins_callee >= 0)
    callee_names = names[static.ins_callee[calls]]
    bad = np.array([str(c).startswith(EXCLUDED_INTRINSICS) for c in callee_names], dtype=bool)
    excl[calls[bad]] = True
    return ~excl


def segments(addr, size):
    """Split the address space at every access boundary.

    Returns ``(lo, hi, n_segments)``: access ``k`` covers segments
    ``[lo[k], hi[k])``; two accesses share a byte iff they share a segment.
    """
    addr = np.asarray(addr, dtype=np.uint64)
    end = addr + np.asarray(size, dtype=np.uint64)
    bps = unique(np.concatenate([addr, end]))
    lo = np.searchsorted(bps, addr).astype(np.int64)
    hi = np.searchsorted(bps, end).astype(np.int64)
    return lo, hi, max(len(bps) - 1, 0)


def build_graph(trace, *, weights="model", war=False, waw=False, cache=CacheModel(),
                control=None, branch_latency=None):
    """The weighted dependency graph of a `frontend.Trace`.

    One node per executed IR instruction, in execution order (but for the
    intrinsics in `EXCLUDED_INTRINSICS`), and one edge per dependency: SSA
    values (``REG``), phis (``PHI``), arguments (``ARG``), return values
    (``RET``), and byte-exact read-after-write through memory (``MEM``),
    optionally write-after-read and write-after-write; see the module
    docstring. An edge found several ways is one edge whose ``edge_kind``
    has several bits (``ir_graph.dependency_kernels.KIND_*``). An edge's
    weight is a memory-transfer time in cycles: those of the destination's
    memory operation if it accesses memory, else the source's, else 1 (a
    register forward).

    Parameters
    ----------
    trace : frontend.Trace
        A trace with at least one executed instruction.
    weights : {"model", "measured"}, default "model"
        Cycles from the cache model (the default everywhere in vcut: it is
        deterministic, and works on traces made without timing), or from
        the trace's cycle counter.
    war, waw : bool, default False
        Also add write-after-read / write-after-write memory edges.
    cache : CacheModel, default CacheModel()
        Used when ``weights="model"``.
    control : str, optional
        A control model of `ir_graph.control.CONTROL_MODELS`: the graph also gets
        that model's control edges (kind ``KIND_CTRL``; none for ``oracle``) and
        keeps the control dependences of its nodes in ``control`` (for the other
        models' figures). None (the default): data dependences only, and no
        ``control``.
    branch_latency : float, optional
        Cycles of a control edge (default `ir_graph.control.BRANCH_CYCLES`).

    Returns
    -------
    Graph
        Directed; node ``k`` is the ``k``-th executed instruction that is a
        node; every edge has ``src < dst``. For a trace made with ``--roi``,
        ``roi_starts`` holds the node where each activation of the region
        of interest begins (`frontend.Trace.roi_activation_starts`). The node
        attributes ``node_sid``, ``node_opclass``, ``node_object`` and
        ``node_depth`` are set; ``meta`` records the weight model (and with
        ``model`` the cache's hit counts, ``meta["cache_blocks"]``).

    Raises
    ------
    InputError
        An empty trace; ``measured`` weights of a trace made without timing;
        an unknown weight model or control model, a negative branch latency;
        an invalid `CacheModel`; a graph that cannot
        fit in the available memory (checked before allocating it).

    See Also
    --------
    frontend.trace_program : makes the trace.
    write_graph : writes the graph to a file.

    Examples
    --------
    A program of five instructions (LLVM IR, so that the counts do not depend
    on the C compiler): a store, and a load of what it stored.

    >>> import os, tempfile
    >>> from frontend import trace_program
    >>> from ir_graph import OPCLASSES, build_graph
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
    ...     g = build_graph(trace_program(path))
    >>> g.n, g.m, g.directed
    (5, 5, True)
    >>> list(zip(g.src.tolist(), g.dst.tolist()))
    [(0, 1), (0, 2), (1, 2), (2, 3), (3, 4)]
    >>> g.edge_kind.tolist()  # 1: an SSA value, 16: through memory
    [1, 1, 16, 1, 1]
    >>> g.weight.tolist()  # the store misses the caches, the load hits L1
    [110.0, 2.0, 2.0, 2.0, 1.0]
    >>> [OPCLASSES[c] for c in g.node_opclass]
    ['alloca', 'memory', 'memory', 'int', 'control']

    A C program: one node per executed instruction.

    >>> t = trace_program("samples/strassen.c", compile_options={"defines": ["N=2"]})
    >>> g = build_graph(t)
    >>> g.n == t.dynamic_instructions, bool((g.src < g.dst).all()), g.meta["weights"]
    (True, True, 'model')
    >>> build_graph(t, weights="random")
    Traceback (most recent call last):
        ...
    vcut_base.errors.InputError: unknown weight model 'random'; use one of measured, model
    """
    if weights not in WEIGHT_MODELS:
        raise InputError(f"unknown weight model {weights!r}; use one of {', '.join(WEIGHT_MODELS)}")
    from . import control as control_module  # (light: its kernels load when first run)

    if control is not None:
        control_module.check_model(control)
    branch_latency = control_module.check_latency(
        control_module.BRANCH_CYCLES if branch_latency is None else branch_latency)
    if trace.dynamic_instructions == 0:
        raise InputError(
            "the trace has no executed instructions (empty program, or the region of "
            "interest never ran); nothing to build a graph from"
        )
    if weights == "measured" and not trace.meta.get("timing", True):
        raise InputError(
            "the trace was made without timing (--no-timing), so it has no measured cycles; "
            "use --weights model or trace again with timing"
        )
    st = trace.static
    n_dyn = trace.dynamic_instructions
    include = _included(st)
    act_last = trace_kernels.activation_last(trace.dyn_act, len(trace.act_func))
    nargs = st.fn_nargs[trace.act_func].astype(np.int64)
    act_arg_ptr = np.zeros(len(trace.act_func) + 1, dtype=np.int64)
    np.cumsum(nargs, out=act_arg_ptr[1:])
    # accesses of instruction k: acc_ptr[k]:acc_ptr[k + 1] (mem_dyn is sorted, in range)
    acc_ptr = np.zeros(n_dyn + 1, dtype=np.int64)
    np.cumsum(np.bincount(trace.mem_dyn, minlength=n_dyn), out=acc_ptr[1:])
    lo, hi, nseg = segments(trace.mem_addr, trace.mem_size)
    ins_defines = (st.ins_result != "") & (st.ins_opcode != "phi")
    ins_defines = np.asarray(ins_defines, dtype=np.bool_)
    is_phi = np.asarray(st.ins_opcode == "phi", dtype=np.bool_)
    is_ret = np.asarray(st.ins_opcode == "ret", dtype=np.bool_)
    bound = dependency_kernels.edge_bound(trace.dyn_sid, st.op_ptr, trace.mem_write, lo, hi, war,
                                          waw)
    # edge buffers (9 or 17 bytes an edge) and the per-instruction state of the kernel
    edt = index_dtype(max(n_dyn, bound))
    # the edge arrays (and the node arrays) are spill files under --spill; the rest
    # is the kernels' working memory
    spilled = arrays.spill_directory() is not None
    check_memory(2 * arrays.resident(np.dtype(edt).itemsize * bound) + arrays.resident(bound)
                 + (SPILLED_BUILD_BYTES_PER_NODE if spilled else BUILD_BYTES_PER_NODE) * n_dyn,
                 f"the dependency graph of {n_dyn:,} instructions (up to {bound:,} edges)",
                 "trace a smaller region (--roi) or fewer instructions (--max-instructions)")
    # the graph's arrays: in spill files under --spill (vcut_base.arrays)
    e_src = arrays.empty(bound, edt)
    e_dst = arrays.empty(bound, edt)
    e_kind = arrays.empty(bound, np.uint8)
    ne = dependency_kernels.dependencies(
        trace.dyn_sid, trace.dyn_act, include, trace.bs_block, trace.bs_act, trace.bs_start,
        trace.act_func, trace.act_parent, trace.act_call, act_last, act_arg_ptr, st.fn_nargs,
        st.op_ptr, st.op_kind, st.op_ref, st.op_block, is_phi, ins_defines, is_ret,
        st.ins_callee, acc_ptr, trace.mem_write, lo, hi, nseg, war, waw, e_src, e_dst, e_kind,
    )
    # trimmed copies: the buffers' unused tails go back to the system
    e_src, e_dst, e_kind = (arrays.head(a, ne) for a in (e_src, e_dst, e_kind))

    # per dynamic instruction: memory cycles
    is_mem = acc_ptr[1:] > acc_ptr[:-1]
    if weights == "measured":
        cyc = np.zeros(n_dyn, dtype=np.float64)
        cyc[trace.mem_dyn] = trace.mem_dt  # the events of one instruction share its time
        cache_counts = None
    else:
        lat, cache_counts = cache.latencies(trace.mem_addr, trace.mem_size)
        cyc = np.bincount(trace.mem_dyn, weights=lat, minlength=n_dyn).astype(np.float64)
    w = arrays.empty(ne, np.float64)
    dependency_kernels.edge_weights(e_src, e_dst, is_mem, cyc, w)
    del cyc

    # renumber: nodes are the included dynamic instructions
    keep = include[trace.dyn_sid]
    n = int(np.count_nonzero(keep))
    idt = index_dtype(max(n, ne))
    roi = trace.roi_activation_starts() if trace.meta.get("roi") else None
    if n == n_dyn:  # nothing excluded: the instruction ids are the node ids
        src, dst = e_src.astype(idt, copy=False), e_dst.astype(idt, copy=False)
    else:
        node_of = (np.cumsum(keep) - 1).astype(idt)
        src, dst = arrays.spill(node_of[e_src]), arrays.spill(node_of[e_dst])
        if roi is not None:  # an activation begins at its first node (one that is kept)
            roi = np.unique(node_of[roi].astype(np.int64) + 1 - keep[roi])
            roi = roi[roi < n]
        del node_of
    del e_src, e_dst
    depth = dependency_kernels.activation_depth(np.asarray(trace.act_parent))
    opclass = np.array([_OPCLASS_OF.get(str(o), 9) for o in st.ins_opcode], dtype=np.uint8)
    if st.n_instructions:
        call_mem = (st.ins_opcode == "call") & (st.ins_mem != MEM_NONE)
        opclass[call_mem] = 0
    n_objects = len(trace.obj_size) if trace.obj_size is not None else 0
    node_object = arrays.empty(n_dyn, np.int32 if n_objects < 2**31 - 1 else np.int64)
    node_object.fill(-1)
    if len(trace.mem_addr):
        loc = trace.locate_accesses()
        first = acc_ptr[:-1][is_mem]
        node_object[is_mem] = loc[first]
        del loc, first
    meta = {
        "kind": "ir",
        "program": trace.meta.get("program", []),
        "weights": weights,
        "war": bool(war),
        "waw": bool(waw),
        "dynamic_instructions": n_dyn,
        "truncated": trace.truncated,
    }
    if roi is not None:
        meta["roi"] = [str(f) for f in trace.meta["roi"]]
    if weights == "model":
        meta["cache_model"] = asdict(cache)
        meta["cache_blocks"] = {"l1_hits": int(cache_counts[0]), "l2_hits": int(cache_counts[1]),
                                "memory": int(cache_counts[2])}
    g = Graph(
        n=n,
        src=src,
        dst=dst,
        weight=w,
        directed=True,
        node_sid=arrays.spill(np.asarray(trace.dyn_sid if n == n_dyn else trace.dyn_sid[keep],
                                         dtype=np.int32)),
        node_opclass=arrays.spill(opclass[trace.dyn_sid if n == n_dyn else trace.dyn_sid[keep]]),
        node_object=node_object if n == n_dyn else arrays.spill(node_object[keep]),
        node_depth=arrays.spill(depth[trace.dyn_act if n == n_dyn else trace.dyn_act[keep]]),
        edge_kind=e_kind,
        roi_starts=roi,
        meta=meta,
        source=SourceMap.from_trace(trace),
    )
    if control is None:
        return g
    flow = control_module.control_flow(trace, None if n == n_dyn else keep, act_last)
    g = control_module.with_control(g, flow, control, branch_latency)
    return dataclasses.replace(g, control=flow)
