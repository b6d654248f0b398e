"""Control dependences and the Lam-Wilson machine models (Lam and Wilson, "Limits of
Control Flow on Parallelism", ISCA 1992).

The dependency graph of `build_graph` holds data dependences only: its critical path
is the dataflow limit of a machine that knows every branch's outcome before it runs
(ORACLE). The other models make instructions wait for branches:

========  ==================================================================
model     an instruction waits for
========  ==================================================================
oracle    nothing: the data dependences alone (the graph as built)
sp-cd-mf  the nearest *mispredicted* branch it is control dependent on
          (following the chain of controlling branches)
sp-cd     the same, and each mispredicted branch waits for the mispredicted
          branch before it (one flow of control)
sp        the latest mispredicted branch before it in the run
cd-mf     the branch it is control dependent on
cd        the same, and each branch waits for the branch before it
base      the latest branch before it in the run
========  ==================================================================

"mf" (multiple flows) lets independent control regions run at once; without it
branches are resolved in their run order. "sp" predicts each branch with a two-bit
counter per static branch (`ir_graph.control_kernels.dynamic_control`): a correctly
predicted branch imposes nothing. Under each model the critical path can only grow
along ORACLE <= SP-CD-MF <= SP-CD <= SP <= BASE and SP-CD-MF <= CD-MF <= CD <= BASE,
since every model's waits are implied by the next one's.

Control dependence
    Static: block ``Y`` is control dependent on the branch ending block ``X`` when
    ``Y`` post-dominates a successor of ``X`` but not ``X`` itself (Ferrante,
    Ottenstein and Warren), from each function's CFG and post-dominator tree
    (`static_control`). A branch is a ``br`` on a condition or a ``switch`` with at
    least two different successors; returns, calls and unconditional ``br`` are not.
    Dynamic: an executed instruction depends on the latest instance, in its own
    activation, of a branch its block is control dependent on; an instruction that
    no branch of its function controls (yet) depends on the branch that controls its
    activation's call site (`control_flow`). Loops (a header controlled by its own
    back-edge branch), early returns, ``switch`` and recursion follow from these.

Control edges
    A wait is an edge from the branch's node to the waiting node, of kind
    `KIND_CTRL` and weight the branch-resolution latency (cycles): the node's value
    is available no earlier than ``latency`` after the branch's. A wait that a data
    edge already implies (the node's data predecessor waits for the same branch) is
    not added (`control_edges`), so the critical path is the same with or without
    those. In the simulator's task model (`mapping.simulate`) a control edge is a
    task of that many cycles, like every other edge.
"""

from dataclasses import dataclass, replace

import numpy as np

from vcut_base.errors import InputError

#: The edge kind of a control edge (``ir_graph.dependency_kernels.KIND_CTRL``).
KIND_CTRL = 128
#: ``state`` of a mispredicted branch (`ControlFlow`).
MISPREDICTED = 2


def has_control_edges(graph):
    """Whether ``graph`` holds control edges (kind `KIND_CTRL`)."""
    kind = graph.edge_kind
    return kind is not None and len(kind) > 0 and bool(np.any(kind & KIND_CTRL))


def _kernels():
    """The compiled kernels, imported when first needed (numba's start-up): machine
    descriptions read `BRANCH_CYCLES` from here."""
    from . import control_kernels

    return control_kernels

__all__ = ["CONTROL_MODELS", "BRANCH_CYCLES", "KIND_CTRL", "StaticControl", "ControlFlow",
           "static_control", "control_flow", "control_edges", "with_control",
           "critical_path", "model_table", "check_model", "branch_successors",
           "has_control_edges"]

#: The models, from the most to the least parallel (`ir_graph.control`).
CONTROL_MODELS = ("oracle", "sp-cd-mf", "sp-cd", "sp", "cd-mf", "cd", "base")

#: Default branch-resolution latency (cycles): one cycle, a register forward, as an
#: SSA value takes in the graph (the unit latency of Lam and Wilson's machines).
BRANCH_CYCLES = 1.0


def check_model(model):
    """`InputError` unless ``model`` is one of `CONTROL_MODELS`; returns it."""
    if model not in CONTROL_MODELS:
        raise InputError(f"unknown control model {model!r}; use one of "
                         f"{', '.join(CONTROL_MODELS)}")
    return model


def check_latency(latency):
    """`InputError` unless ``latency`` is a finite number >= 0; returns it as a float."""
    try:
        value = float(latency)
    except (TypeError, ValueError):
        value = float("nan")
    if not np.isfinite(value) or value < 0:
        raise InputError(f"the branch latency must be a finite number of cycles >= 0, "
                         f"got {latency!r}")
    return value


@dataclass(frozen=True)
class StaticControl:
    """The static control dependences of a module (`static_control`).

    Attributes
    ----------
    is_branch : bool ndarray, per instruction
        A terminator with at least two different successors.
    succ_ptr, succ_block : int64 ndarrays
        Successor blocks of each instruction, CSR (a terminator's in IR text order:
        the true target first, a switch's default first); empty for the others.
    cd_ptr, cd_sid : int64 ndarrays
        For each block, the branches (instruction ids) it is control dependent on,
        CSR, in increasing id order.
    ipdom : int64 ndarray, per block
        The immediate post-dominator (-1: the function's exit).
    """

    is_branch: np.ndarray
    succ_ptr: np.ndarray
    succ_block: np.ndarray
    cd_ptr: np.ndarray
    cd_sid: np.ndarray
    ipdom: np.ndarray

    def controls(self, block):
        """The branch instruction ids block ``block`` is control dependent on."""
        return self.cd_sid[self.cd_ptr[block]:self.cd_ptr[block + 1]].tolist()


def branch_successors(static, sid):
    """The successor blocks of instruction ``sid`` in IR text order (empty for one that
    is not a terminator). llvmlite lists a conditional ``br``'s operands as LLVM
    stores them (condition, false target, true target); the text reads true first."""
    a, b = static.op_ptr[sid], static.op_ptr[sid + 1]
    blocks = [int(static.op_ref[j]) for j in range(a, b) if static.op_kind[j] == 5]
    if str(static.ins_opcode[sid]) == "br" and len(blocks) == 2:
        blocks.reverse()
    return blocks


def _post_dominators(nb, succ):
    """Immediate post-dominators of blocks ``0..nb-1`` with successor lists ``succ``
    (Cooper, Harvey and Kennedy's iteration on the reverse CFG). The exit ``nb``
    is virtual: blocks without successors lead to it, and so does every block from
    which no exit is reachable (an endless loop). Returns ``ipdom`` (``nb``: the
    exit)."""
    exit_ = nb
    preds = [[] for _ in range(nb + 1)]  # predecessors in the CFG = successors in reverse
    for b in range(nb):
        for s in succ[b]:
            preds[s].append(b)
    roots = [b for b in range(nb) if not succ[b]]
    rsucc = [list(p) for p in preds]  # reverse graph: node -> its CFG predecessors
    rsucc[exit_] = roots
    # blocks from which no exit is reachable lead to the exit too
    while True:
        seen = _reverse_postorder(exit_, rsucc, nb + 1)[1]
        missing = [b for b in range(nb) if not seen[b]]
        if not missing:
            break
        rsucc[exit_].append(missing[-1])  # the last block of an endless region
    order, _ = _reverse_postorder(exit_, rsucc, nb + 1)
    rank = np.full(nb + 1, -1, dtype=np.int64)
    for r, b in enumerate(order):
        rank[b] = r
    # predecessors in the reverse graph: the CFG successors (and the exit for roots)
    rpred = [list(succ[b]) for b in range(nb)] + [[]]
    for b in rsucc[exit_]:
        rpred[b].append(exit_)
    idom = np.full(nb + 1, -1, dtype=np.int64)
    idom[exit_] = exit_
    changed = True
    while changed:
        changed = False
        for b in order[1:]:
            new = -1
            for p in rpred[b]:
                if idom[p] < 0:
                    continue
                if new < 0:
                    new = p
                    continue
                x, y = p, new
                while x != y:
                    while rank[x] > rank[y]:
                        x = idom[x]
                    while rank[y] > rank[x]:
                        y = idom[y]
                new = x
            if new >= 0 and idom[b] != new:
                idom[b] = new
                changed = True
    return idom


def _reverse_postorder(root, succ, size):
    """Reverse postorder of the nodes reachable from ``root``, and the reached mask."""
    seen = np.zeros(size, dtype=bool)
    post = []
    seen[root] = True
    stack = [(root, iter(succ[root]))]
    while stack:
        node, it = stack[-1]
        for s in it:
            if not seen[s]:
                seen[s] = True
                stack.append((s, iter(succ[s])))
                break
        else:
            stack.pop()
            post.append(node)
    post.reverse()
    return post, seen


def static_control(static):
    """The branches, their successors and every block's control dependences.

    Parameters
    ----------
    static : frontend.StaticTable
        The module's static table (a trace's ``static``).

    Returns
    -------
    StaticControl

    Examples
    --------
    ``if (x) a; else b; c;`` in IR: block 0 branches to 1 or 2, both go to 3.
    Blocks 1 and 2 are control dependent on block 0's branch (instruction 1),
    block 3 on nothing (it post-dominates block 0):

    >>> import os, tempfile
    >>> from frontend import trace_program
    >>> from ir_graph.control import static_control
    >>> ir = '''define i32 @main(i32 %x) {
    ...   %c = icmp eq i32 %x, 0
    ...   br i1 %c, label %a, label %b
    ... a:
    ...   br label %j
    ... b:
    ...   br label %j
    ... j:
    ...   ret i32 0
    ... }
    ... '''
    >>> with tempfile.TemporaryDirectory() as tmp:
    ...     path = os.path.join(tmp, "if.ll")
    ...     _ = open(path, "w").write(ir)
    ...     sc = static_control(trace_program(path).static)
    >>> [sc.controls(b) for b in range(4)], sc.ipdom.tolist()
    ([[], [1], [1], []], [3, 3, 3, -1])
    >>> sc.is_branch.tolist(), sc.succ_block[sc.succ_ptr[1]:sc.succ_ptr[2]].tolist()
    ([False, True, False, False, False], [1, 2])
    """
    n_ins = static.n_instructions
    n_blk = static.n_blocks
    succ_lists = [[] for _ in range(n_ins)]
    is_branch = np.zeros(n_ins, dtype=np.bool_)
    term = (static.blk_first + static.blk_ninstr - 1).astype(np.int64) if n_blk else \
        np.zeros(0, dtype=np.int64)
    opcode = static.ins_opcode
    for b in range(n_blk):
        s = int(term[b])
        if str(opcode[s]) in ("br", "switch"):
            succ_lists[s] = branch_successors(static, s)
            is_branch[s] = len(set(succ_lists[s])) >= 2
    counts = np.array([len(x) for x in succ_lists], dtype=np.int64)
    succ_ptr = np.zeros(n_ins + 1, dtype=np.int64)
    np.cumsum(counts, out=succ_ptr[1:])
    succ_block = np.array([b for x in succ_lists for b in x], dtype=np.int64)
    cd = [set() for _ in range(n_blk)]
    ipdom_all = np.full(n_blk, -1, dtype=np.int64)
    funcs = np.asarray(static.blk_func)
    for f in np.unique(funcs):
        blocks = np.flatnonzero(funcs == f)
        b0 = int(blocks[0])
        nb = len(blocks)
        if not (blocks == np.arange(b0, b0 + nb)).all():  # (blocks are numbered per function)
            raise InputError("the static table's blocks of a function are not contiguous")
        succ = [[int(x) - b0 for x in dict.fromkeys(succ_lists[int(term[b])])] for b in blocks]
        ipdom = _post_dominators(nb, succ)
        ipdom_all[blocks] = np.where(ipdom[:nb] == nb, -1, ipdom[:nb] + b0)
        for a in range(nb):
            s = int(term[b0 + a])
            if not is_branch[s]:
                continue
            for y in succ[a]:
                runner = y
                while runner != ipdom[a] and runner != nb:
                    cd[b0 + runner].add(s)
                    runner = int(ipdom[runner])
    cd_counts = np.array([len(x) for x in cd], dtype=np.int64)
    cd_ptr = np.zeros(n_blk + 1, dtype=np.int64)
    np.cumsum(cd_counts, out=cd_ptr[1:])
    cd_sid = np.array([s for x in cd for s in sorted(x)], dtype=np.int64)
    return StaticControl(is_branch=is_branch, succ_ptr=succ_ptr, succ_block=succ_block,
                         cd_ptr=cd_ptr, cd_sid=cd_sid, ipdom=ipdom_all)


@dataclass(frozen=True, eq=False)
class ControlFlow:
    """The dynamic control dependences of a graph's nodes (`control_flow`).

    Attributes
    ----------
    parent : int ndarray, per node
        The node of the branch instance the node is control dependent on (-1: none).
    state : uint8 ndarray, per node
        0 not a branch, 1 a branch the two-bit predictor got right, 2 a mispredicted
        branch.

    Notes
    -----
    ``n``, ``branches`` and ``mispredicted`` count nodes, branch instances and
    mispredictions; `window` cuts it as `ir_graph.Graph.window` cuts a graph;
    `requirements` gives a model's waits; `validate` checks the arrays.

    Examples
    --------
    Node 3 is a branch the predictor got right; nodes 4 and 5 wait for it:

    >>> import numpy as np
    >>> from ir_graph.control import ControlFlow
    >>> flow = ControlFlow(parent=np.array([-1, -1, -1, -1, 3, 3]),
    ...                    state=np.array([0, 0, 0, 1, 0, 0], dtype=np.uint8))
    >>> flow.branches, flow.mispredicted, flow.window(4, 6).parent.tolist()
    (1, 0, [-1, -1])
    >>> req, ser = flow.requirements("cd")
    >>> req.tolist(), ser.tolist()
    ([-1, -1, -1, -1, 3, 3], [-1, -1, -1, -1, -1, -1])
    >>> flow.requirements("sp")[0].tolist()  # a predicted branch imposes nothing
    [-1, -1, -1, -1, -1, -1]
    """

    parent: np.ndarray
    state: np.ndarray

    @property
    def n(self):
        return int(len(self.parent))

    @property
    def branches(self):
        """Branch instances."""
        return int(np.count_nonzero(self.state))

    @property
    def mispredicted(self):
        """Mispredicted branch instances."""
        return int(np.count_nonzero(self.state == MISPREDICTED))

    def window(self, start, end):
        """The nodes ``start .. end - 1``, renumbered from 0 (`ir_graph.Graph.window`);
        a branch before the window is resolved before it starts: no wait."""
        p = np.asarray(self.parent[start:end], dtype=np.int64) - start
        p[p < 0] = -1
        return ControlFlow(parent=p.astype(self.parent.dtype), state=self.state[start:end].copy())

    def validate(self):
        """`InputError` unless every parent is -1 or an earlier node and every state is
        0, 1 or 2 (the kernels index with them); returns self."""
        p = np.asarray(self.parent)
        st = np.asarray(self.state)
        if p.ndim != 1 or st.shape != p.shape or p.dtype.kind not in "iu" \
                or st.dtype.kind not in "iu":
            raise InputError("control dependences: parent and state must be integer arrays "
                             "of one entry per node")
        if len(p) and (int(p.min()) < -1 or bool(np.any(p >= np.arange(len(p))))):
            raise InputError("control dependences: a parent is not -1 or an earlier node")
        if len(st) and int(st.max()) > MISPREDICTED:
            raise InputError("control dependences: a branch state is not 0, 1 or 2")
        if len(p) and bool(np.any(st[p[p >= 0]] == 0)):
            raise InputError("control dependences: a parent is not a branch")
        return self

    def requirements(self, model):
        """``(req, ser)``: per node, the branch node it waits for and (a branch under
        ``cd`` or ``sp-cd``) the earlier branch it waits for; -1 none. None for
        ``oracle``."""
        check_model(model)
        if model != "oracle":  # the oracle waits for nothing: no arrays read, none checked
            self.validate()
        return self._requirements(model)

    def _requirements(self, model):
        """`requirements` of a checked ``model`` on arrays the caller validated."""
        if model == "oracle":
            return None
        req = np.empty(self.n, dtype=np.int64)
        ser = np.empty(self.n, dtype=np.int64)
        ck = _kernels()
        ck.model_requirements(ck.MODEL_CODES[model], np.asarray(self.parent, dtype=np.int64),
                              self.state, req, ser)
        return req, ser


def control_flow(trace, keep=None, act_last=None):
    """The `ControlFlow` of a trace's dynamic instructions, on the graph's nodes.

    Parameters
    ----------
    trace : frontend.Trace
    keep : bool ndarray, optional
        Which dynamic instructions are graph nodes (`build_graph` leaves out some
        intrinsics); default all.
    act_last : int64 ndarray, optional
        The last dynamic instruction of each activation, when the caller has it
        (`frontend.trace_kernels.activation_last`; computed here otherwise).

    Returns
    -------
    ControlFlow

    Examples
    --------
    A loop of three iterations: ``entry`` (node 0), then ``loop`` (phi, compare,
    branch) and ``body`` (add, jump) three times, ``loop`` once more and ``ret``.
    ``loop`` and ``body`` are control dependent on the loop's branch; the first
    ``loop`` has no instance of it yet in the activation, and nothing controls ``main``:

    >>> from frontend import trace_program
    >>> from ir_graph import build_graph
    >>> print(open("tests/data/loop.ll").read(), end="")
    define i32 @main() {
    entry:
      br label %loop
    loop:
      %i = phi i32 [0, %entry], [%j, %body]
      %c = icmp slt i32 %i, 3
      br i1 %c, label %body, label %done
    body:
      %j = add i32 %i, 1
      br label %loop
    done:
      ret i32 %i
    }
    >>> trace = trace_program("tests/data/loop.ll")
    >>> from ir_graph.control import control_flow
    >>> flow = control_flow(trace)
    >>> flow.parent.tolist()
    [-1, -1, -1, -1, 3, 3, 3, 3, 3, 8, 8, 8, 8, 8, 13, 13, 13, 13, 13, -1]

    The predictor first guesses the true target (``body``): right three times, then
    the exit is mispredicted:

    >>> flow.state.tolist()
    [0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 2, 0]
    >>> flow.branches, flow.mispredicted
    (4, 1)
    """
    sc = static_control(trace.static)
    if act_last is None:
        from frontend import trace_kernels  # (the trace's own kernel)

        act_last = trace_kernels.activation_last(trace.dyn_act, len(trace.act_func))
    n = trace.dynamic_instructions
    parent = np.empty(n, dtype=np.int64)
    state = np.empty(n, dtype=np.uint8)
    ck = _kernels()
    ck.dynamic_control(trace.dyn_sid, trace.dyn_act, trace.bs_block, trace.bs_start,
                       trace.act_call, act_last, np.asarray(trace.static.ins_block, np.int64),
                       sc.is_branch, sc.succ_ptr, sc.succ_block, sc.cd_ptr, sc.cd_sid, parent,
                       state)
    if keep is not None and not keep.all():
        node_of = np.cumsum(keep) - 1
        parent = np.where(parent >= 0, node_of[np.maximum(parent, 0)], -1)[keep]
        state = state[keep]
    dt = np.int32 if len(parent) < 2**31 - 1 else np.int64
    return ControlFlow(parent=parent.astype(dt), state=state)


def _check_sizes(graph, flow):
    """`InputError` unless ``flow`` is of ``graph``'s nodes (before any kernel reads it)."""
    if flow.n != graph.n or len(flow.state) != graph.n:
        raise InputError(f"the control dependences are of {flow.n:,} nodes, the graph has "
                         f"{graph.n:,}")


def _dst_order(graph):
    """The edges by destination: an empty array when they already are."""
    d = graph.dst
    if len(d) < 2 or _kernels().is_sorted(d):
        return np.empty(0, dtype=np.int64)
    return np.argsort(d, kind="stable")


def critical_path(graph, flow, model, latency=BRANCH_CYCLES):
    """The critical path (cycles) of ``graph``'s data edges under ``model``.

    The same as the longest path of `with_control`'s graph, without building it.
    """
    latency = check_latency(latency)
    _check_sizes(graph, flow)
    return _critical(graph, flow.requirements(model), latency)


def _critical(graph, reqs, latency, order=None):
    """`critical_path` from a model's waits ``reqs`` (`ControlFlow.requirements`; None:
    none) and, where the caller has it, ``order`` (`_dst_order`)."""
    empty = np.empty(0, dtype=np.int64)
    req, ser = reqs if reqs is not None else (empty, empty)
    cp, _ = _kernels().critical_path(graph.n, graph.src, graph.dst,
                             np.asarray(graph.weight, dtype=np.float64),
                             _dst_order(graph) if order is None else order, req, ser, latency)
    return float(cp)


def model_table(graph, flow, latency=BRANCH_CYCLES, models=CONTROL_MODELS):
    """Work, critical path and parallelism of ``graph`` under each model.

    Parameters
    ----------
    graph : ir_graph.Graph
        The graph's data edges (no control edges).
    flow : ControlFlow
        Its nodes' control dependences (``graph.control`` of `ir_graph.build_graph`
        with a ``control`` model).
    latency : float
        Cycles of a control edge (default `BRANCH_CYCLES`).
    models : sequence of str
        The models, in table order (default all, `CONTROL_MODELS`).

    Returns
    -------
    list of dict
        One per model: ``model``, ``critical_path`` (cycles), ``work`` (the sum of the
        data edges' weights: one core running the program's tasks), ``parallelism``
        (work / critical path) and ``control_edges`` (the edges `with_control` adds).

    Raises
    ------
    InputError
        An unknown model, a negative latency, or a ``flow`` of another graph.

    Examples
    --------
    The loop of `control_flow`'s example, every edge of 1 cycle. Its longest chain
    runs through the three iterations' ``i`` (8 edges); CD makes each iteration wait
    for the branch before it (14); BASE puts every instruction after the latest
    branch (15, the whole work):

    >>> from frontend import trace_program
    >>> from ir_graph import build_graph
    >>> trace = trace_program("tests/data/loop.ll")
    >>> from ir_graph.control import model_table
    >>> g = build_graph(trace, control="oracle")
    >>> [(r["model"], r["critical_path"], r["control_edges"]) for r in model_table(g, g.control)]
    [('oracle', 8.0, 0), ('sp-cd-mf', 8.0, 0), ('sp-cd', 8.0, 0), ('sp', 9.0, 1),
     ('cd-mf', 14.0, 6), ('cd', 14.0, 6), ('base', 15.0, 7)]

    With branches resolved at once (latency 0), each ``body`` still starts after
    its branch's compare: 11 cycles.

    >>> model_table(g, g.control, latency=0, models=["cd"])[0]["critical_path"]
    11.0
    """
    latency = check_latency(latency)
    models = [check_model(model) for model in models]
    _check_sizes(graph, flow)
    if any(model != "oracle" for model in models):
        flow.validate()  # once: each model's waits read the same arrays
    order = _dst_order(graph)
    work = float(np.sum(graph.weight))
    rows = []
    for model in models:
        reqs = flow._requirements(model)  # one per model, for its path and its edges
        cp = _critical(graph, reqs, latency, order)
        edges = _count(_need(graph, reqs))
        rows.append({"model": model, "critical_path": cp, "work": work,
                     "parallelism": work / cp if cp > 0 else 1.0, "control_edges": edges})
    return rows


def _waits(graph, flow, model):
    """``(req, ser, need)``: the model's waits (`ControlFlow.requirements`) and which of
    the branch waits need an edge (those no data edge implies); None for ``oracle``."""
    _check_sizes(graph, flow)
    return _need(graph, flow.requirements(model))


def _need(graph, reqs):
    """`_waits` from a model's waits ``reqs`` (`ControlFlow.requirements`)."""
    if reqs is None:
        return None
    req, ser = reqs
    need = np.zeros(graph.n, dtype=np.bool_)
    _kernels().implied_by_data(graph.src, graph.dst, req, need)
    np.logical_not(need, out=need)
    need &= req >= 0
    return req, ser, need


def _count(waits):
    """How many control edges the waits of `_waits` give."""
    if waits is None:
        return 0
    _, ser, need = waits
    return int(np.count_nonzero(need)) + int(np.count_nonzero(ser >= 0))


def control_edges(graph, flow, model):
    """The control edges of ``model``: ``(src, dst)`` int64 arrays by destination.

    Each node's wait for a branch is an edge from that branch, unless a data edge
    into the node comes from a node that waits for the same branch; a branch's wait
    for the branch before it (``cd``, ``sp-cd``) is always an edge.
    """
    waits = _waits(graph, flow, model)
    if waits is None:
        return np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)
    req, ser, need = waits
    has_ser = ser >= 0
    count = need.astype(np.int64) + has_ser
    dst = np.repeat(np.arange(graph.n, dtype=np.int64), count)
    src = np.empty(len(dst), dtype=np.int64)
    ptr = np.zeros(graph.n + 1, dtype=np.int64)
    np.cumsum(count, out=ptr[1:])
    first = ptr[:-1]
    src[first[need]] = req[need]
    src[first[has_ser] + need[has_ser]] = ser[has_ser]
    return src, dst


def with_control(graph, flow, model, latency=BRANCH_CYCLES):
    """``graph`` with the control edges of ``model`` (`control_edges`) merged in.

    Each control edge has kind `KIND_CTRL` and weight ``latency``; the edges stay by
    destination, a node's data edges before its control edges. ``meta["control"]``
    records the model, the latency, the branches, the mispredictions and the control
    edges added. ``oracle`` returns the graph with that record alone.

    Parameters
    ----------
    graph : ir_graph.Graph
        The graph's data edges, by destination as `ir_graph.build_graph` makes them
        (others are sorted first).
    flow : ControlFlow
        Its nodes' control dependences.
    model : str
        One of `CONTROL_MODELS`.
    latency : float
        Cycles of a control edge (default `BRANCH_CYCLES`).

    Returns
    -------
    ir_graph.Graph
        The graph with the control edges (`control_edges`) merged in.

    Raises
    ------
    InputError
        An unknown model, a negative latency, or a ``flow`` of another graph.

    Examples
    --------
    The loop of `control_flow`'s example under CD: each ``body`` waits for the
    branch of its iteration (the ``add`` and the jump: the phi of the next iteration
    waits through the ``add``):

    >>> from frontend import trace_program
    >>> from ir_graph import build_graph
    >>> trace = trace_program("tests/data/loop.ll")
    >>> from ir_graph.control import with_control
    >>> g = build_graph(trace, control="oracle")
    >>> cd = with_control(g, g.control, "cd", latency=2.0)
    >>> g.m, cd.m, cd.meta["control"]["control_edges"]
    (15, 21, 6)
    >>> [(int(u), int(v), float(w)) for u, v, w, k in zip(cd.src, cd.dst, cd.weight, cd.edge_kind)
    ...  if k == 128]
    [(3, 4, 2.0), (3, 5, 2.0), (8, 9, 2.0), (8, 10, 2.0), (13, 14, 2.0), (13, 15, 2.0)]
    """
    from .graph import index_dtype

    check_model(model)
    latency = check_latency(latency)
    waits = _waits(graph, flow, model)
    count = _count(waits)
    meta = dict(graph.meta)
    meta["control"] = {"model": model, "branch_latency": latency, "branches": flow.branches,
                       "mispredicted": flow.mispredicted, "control_edges": count}
    if not count:
        return replace(graph, meta=meta)
    req, ser, need = waits
    order = _dst_order(graph)
    g_src, g_dst, g_w = graph.src, graph.dst, np.asarray(graph.weight, dtype=np.float64)
    kind = graph.edge_kind if graph.edge_kind is not None \
        else np.zeros(graph.m, dtype=np.uint8)
    if len(order):
        g_src, g_dst, g_w, kind = g_src[order], g_dst[order], g_w[order], kind[order]
    m = graph.m + count
    idt = index_dtype(max(graph.n, m))
    o_src = np.empty(m, dtype=idt)
    o_dst = np.empty(m, dtype=idt)
    o_w = np.empty(m, dtype=np.float64)
    o_kind = np.empty(m, dtype=np.uint8)
    _kernels().merge_waits(graph.n, g_src, g_dst, g_w, kind, req, ser, need, latency,
                           KIND_CTRL, o_src, o_dst, o_w, o_kind)
    return replace(graph, src=o_src, dst=o_dst, weight=o_w, edge_kind=o_kind, meta=meta)
