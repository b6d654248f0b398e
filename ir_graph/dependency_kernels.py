"""Numba kernels of the dependency graph: edges, their bound and weights, call depths.

`ir_graph.build` prepares their inputs from a trace. Kernels take arrays and
scalars only and document what they change in place.
"""

import numpy as np

from vcut_base.jitcache import helper, njit

__all__ = [
    "activation_depth",
    "dependencies",
    "edge_bound",
    "edge_weights",
    "KIND_REG",
    "KIND_PHI",
    "KIND_ARG",
    "KIND_RET",
    "KIND_MEM",
    "KIND_WAR",
    "KIND_WAW",
    "KIND_CTRL",
]

# Edge kinds (bits; an edge found several ways carries all of them).
KIND_REG = 1  # SSA def -> use in the same activation
KIND_PHI = 2  # value of the incoming block actually taken -> phi
KIND_ARG = 4  # producer of an actual argument -> use of the parameter in the callee
KIND_RET = 8  # callee's ret -> uses of the call result in the caller
KIND_MEM = 16  # last writer of a byte -> reader (read after write)
KIND_WAR = 32  # reader -> next writer of the byte (write after read), optional
KIND_WAW = 64  # writer -> next writer of the byte (write after write), optional
KIND_CTRL = 128  # branch -> an instruction that waits for it (`ir_graph.control`), optional

OP_INSTRUCTION = 0
OP_ARGUMENT = 1


@njit(cache=True, nogil=True)
def activation_depth(act_parent):
    """Call depth of every activation (0 for a root), parents preceding children
    (`frontend.trace_checks` checks it)."""
    depth = np.zeros(act_parent.shape[0], dtype=np.int32)
    for a in range(act_parent.shape[0]):
        q = act_parent[a]
        if q >= 0:
            depth[a] = depth[q] + 1
    return depth


@helper
def _add_edge(u, v, kind, e_src, e_dst, e_kind, ne, mark_v, mark_e):
    """Append edge u -> v (or OR ``kind`` into the existing one); returns ne."""
    if mark_v[u] == v:
        e_kind[mark_e[u]] |= kind
        return ne
    mark_v[u] = v
    mark_e[u] = ne
    e_src[ne] = u
    e_dst[ne] = v
    e_kind[ne] = kind
    return ne + 1


@helper
def _value_kind(src, a, dyn_sid, dyn_act, ins_is_ret):
    """RET when the value reaching activation ``a`` was returned by a callee."""
    if ins_is_ret[dyn_sid[src]] and dyn_act[src] != a:
        return KIND_RET
    return KIND_REG


@helper
def _define(s, i, a, last, owner, act_last, u_sid, u_last, u_owner, utop):
    """Record that dynamic instruction ``i`` of activation ``a`` defines sid ``s``.

    If a different activation that is still running owns the current value
    (a recursive caller), the value is pushed on the undo log so that it is
    restored when ``a`` ends. Returns the new undo-log height.
    """
    o = owner[s]
    if o >= 0 and o != a and act_last[o] > i:
        u_sid[utop] = s
        u_last[utop] = last[s]
        u_owner[utop] = o
        utop += 1
    last[s] = i
    owner[s] = a
    return utop


@njit(cache=True)
def dependencies(
    dyn_sid,
    dyn_act,
    include,
    bs_block,
    bs_act,
    bs_start,
    act_func,
    act_parent,
    act_call,
    act_last,
    act_arg_ptr,
    fn_nargs,
    op_ptr,
    op_kind,
    op_ref,
    op_block,
    ins_is_phi,
    ins_defines,
    ins_is_ret,
    ins_callee,
    acc_ptr,
    acc_write,
    acc_lo,
    acc_hi,
    n_segments,
    with_war,
    with_waw,
    e_src,
    e_dst,
    e_kind,
):
    """All dependency edges of a dynamic trace, in execution order.

    Parameters
    ----------
    dyn_sid, dyn_act : int32[N]
        Static instruction and activation of each dynamic instruction.
    include : bool[S]
        Static instructions that are graph nodes (others get no edges and
        define nothing).
    bs_block, bs_act : int32[B]; bs_start : int64[B]
        Executed blocks, their activation and first dynamic instruction.
    act_func, act_parent : int32[A]; act_call, act_last : int64[A]
        Activation function, parent, calling dynamic instruction (-1: root)
        and last dynamic instruction.
    act_arg_ptr : int64[A+1]
        Offsets of each activation's parameters in the argument-source table.
    fn_nargs : int32[F]
    op_ptr, op_kind, op_ref, op_block : static operand table (CSR).
    ins_is_phi, ins_defines, ins_is_ret : bool[S]
        Static flags: phi; has a result value; ``ret``.
    ins_callee : int32[S]
        Direct callee function id (-1: indirect or not a call).
    acc_ptr : int64[N+1]
        Memory accesses of each dynamic instruction (CSR over the access
        arrays, in stream order: reads before writes for copies/atomics).
    acc_write : bool[M]; acc_lo, acc_hi : int64[M]
        Access kind and its half-open range of address segments.
    n_segments : int
    with_war, with_waw : bool
        Also emit write-after-read / write-after-write edges.
    e_src, e_dst : int64[E]; e_kind : uint8[E]
        Output, written in place (E from `edge_bound`).

    Returns
    -------
    int
        Number of edges written. Edges are grouped by destination in
        increasing order and every source precedes its destination.
    """
    n = dyn_sid.shape[0]
    nsid = include.shape[0]
    nact = act_func.shape[0]
    last = np.full(nsid, -1, dtype=np.int64)
    owner = np.full(nsid, -1, dtype=np.int32)
    u_sid = np.empty(n + 1, dtype=np.int32)
    u_last = np.empty(n + 1, dtype=np.int64)
    u_owner = np.empty(n + 1, dtype=np.int32)
    utop = 0
    undo_base = np.zeros(nact, dtype=np.int64)
    started = np.zeros(nact, dtype=np.bool_)
    arg_src = np.full(act_arg_ptr[nact], -1, dtype=np.int64)
    cur_block = np.full(nact, -1, dtype=np.int32)
    prev_block = np.full(nact, -1, dtype=np.int32)
    last_writer = np.full(n_segments, -1, dtype=np.int64)
    rd_head = np.full(n_segments if with_war else 0, -1, dtype=np.int64)
    nreads = 0
    if with_war:
        for k in range(acc_write.shape[0]):
            if not acc_write[k]:
                nreads += acc_hi[k] - acc_lo[k]
    rd_node = np.empty(nreads, dtype=np.int64)
    rd_next = np.empty(nreads, dtype=np.int64)
    nrd = 0
    mark_v = np.full(n, -1, dtype=np.int64)
    mark_e = np.zeros(n, dtype=np.int64)
    phi_src = np.empty(64, dtype=np.int64)
    phi_kind = np.empty(64, dtype=np.uint8)
    ne = 0
    kb = 0
    nb = bs_block.shape[0]
    i = 0
    while i < n:
        a = dyn_act[i]
        if not started[a]:
            started[a] = True
            undo_base[a] = utop
            # sources of the parameters
            c = act_call[a]
            f = act_func[a]
            base = act_arg_ptr[a]
            if c >= 0:
                cs = dyn_sid[c]
                p = act_parent[a]
                if ins_callee[cs] == f or ins_callee[cs] < 0:
                    for k in range(fn_nargs[f]):
                        j = op_ptr[cs] + k
                        if j >= op_ptr[cs + 1] - 1:
                            break
                        if op_kind[j] == OP_INSTRUCTION:
                            d = op_ref[j]
                            if d >= 0 and owner[d] == p:
                                arg_src[base + k] = last[d]
                        elif op_kind[j] == OP_ARGUMENT and p >= 0:
                            arg_src[base + k] = arg_src[act_arg_ptr[p] + op_ref[j]]
                else:
                    # a callback from library code: the library call produced them
                    for k in range(fn_nargs[f]):
                        arg_src[base + k] = c
        while kb < nb and bs_start[kb] == i:
            ab = bs_act[kb]
            prev_block[ab] = cur_block[ab]
            cur_block[ab] = bs_block[kb]
            kb += 1
        s = dyn_sid[i]
        if ins_is_phi[s]:
            # all phis at the head of a block read their values together
            j0 = i
            cnt = 0
            pred = prev_block[a]
            while j0 < n and ins_is_phi[dyn_sid[j0]] and dyn_act[j0] == a:
                s2 = dyn_sid[j0]
                src = -1
                kind = 0
                for j in range(op_ptr[s2], op_ptr[s2 + 1]):
                    if op_block[j] == pred:
                        if op_kind[j] == OP_INSTRUCTION:
                            d = op_ref[j]
                            if d >= 0 and owner[d] == a:
                                src = last[d]
                                kind = KIND_PHI | _value_kind(src, a, dyn_sid, dyn_act, ins_is_ret)
                        elif op_kind[j] == OP_ARGUMENT:
                            src = arg_src[act_arg_ptr[a] + op_ref[j]]
                            kind = KIND_PHI | KIND_ARG
                        break
                if cnt == phi_src.shape[0]:
                    grown = np.empty(2 * cnt, dtype=np.int64)
                    grownk = np.empty(2 * cnt, dtype=np.uint8)
                    for q in range(cnt):  # loops, not slice copies (numba's cost ~1 s to compile)
                        grown[q] = phi_src[q]
                        grownk[q] = phi_kind[q]
                    phi_src = grown
                    phi_kind = grownk
                phi_src[cnt] = src
                phi_kind[cnt] = kind
                cnt += 1
                j0 += 1
            for q in range(cnt):
                if phi_src[q] >= 0:
                    # the kind as int64, as the other calls pass it (a uint8 would compile
                    # the helper a second time)
                    ne = _add_edge(phi_src[q], i + q, np.int64(phi_kind[q]), e_src, e_dst,
                                   e_kind, ne, mark_v, mark_e)
            for q in range(cnt):
                utop = _define(dyn_sid[i + q], i + q, a, last, owner, act_last, u_sid, u_last,
                               u_owner, utop)
            i = j0
            # a phi never ends an activation (a block has a terminator)
            continue
        if include[s]:
            for j in range(op_ptr[s], op_ptr[s + 1]):
                k = op_kind[j]
                if k == OP_INSTRUCTION:
                    d = op_ref[j]
                    if d >= 0 and owner[d] == a and last[d] >= 0:
                        src = last[d]
                        ne = _add_edge(src, i, _value_kind(src, a, dyn_sid, dyn_act, ins_is_ret),
                                       e_src, e_dst, e_kind, ne, mark_v, mark_e)
                elif k == OP_ARGUMENT:
                    src = arg_src[act_arg_ptr[a] + op_ref[j]]
                    if src >= 0:
                        ne = _add_edge(src, i, KIND_ARG, e_src, e_dst, e_kind, ne, mark_v, mark_e)
            for q in range(acc_ptr[i], acc_ptr[i + 1]):
                lo = acc_lo[q]
                hi = acc_hi[q]
                if not acc_write[q]:
                    for g in range(lo, hi):
                        w = last_writer[g]
                        if w >= 0 and w != i:
                            ne = _add_edge(w, i, KIND_MEM, e_src, e_dst, e_kind, ne, mark_v, mark_e)
                        if with_war:
                            rd_node[nrd] = i
                            rd_next[nrd] = rd_head[g]
                            rd_head[g] = nrd
                            nrd += 1
                else:
                    for g in range(lo, hi):
                        if with_waw:
                            w = last_writer[g]
                            if w >= 0 and w != i:
                                ne = _add_edge(w, i, KIND_WAW, e_src, e_dst, e_kind, ne, mark_v,
                                               mark_e)
                        if with_war:
                            r = rd_head[g]
                            while r >= 0:
                                if rd_node[r] != i:
                                    ne = _add_edge(rd_node[r], i, KIND_WAR, e_src, e_dst, e_kind, ne,
                                                   mark_v, mark_e)
                                r = rd_next[r]
                            rd_head[g] = -1
                        last_writer[g] = i
            if ins_defines[s]:
                utop = _define(s, i, a, last, owner, act_last, u_sid, u_last, u_owner, utop)
        if act_last[a] == i:
            # the activation ends: give the callers their values back
            while utop > undo_base[a]:
                utop -= 1
                last[u_sid[utop]] = u_last[utop]
                owner[u_sid[utop]] = u_owner[utop]
            c = act_call[a]
            if ins_is_ret[s] and c >= 0:
                cs = dyn_sid[c]
                if ins_callee[cs] == act_func[a] or ins_callee[cs] < 0:
                    # the call's result is what this ret returned
                    p = act_parent[a]
                    utop = _define(cs, i, p, last, owner, act_last, u_sid, u_last, u_owner, utop)
        i += 1
    return ne


@njit(cache=True)
def edge_bound(dyn_sid, op_ptr, acc_write, acc_lo, acc_hi, with_war, with_waw):
    """Upper bound of the number of edges `dependencies` can emit."""
    bound = 0
    for i in range(dyn_sid.shape[0]):
        s = dyn_sid[i]
        bound += op_ptr[s + 1] - op_ptr[s]
    for k in range(acc_write.shape[0]):
        span = acc_hi[k] - acc_lo[k]
        if acc_write[k]:
            if with_waw:
                bound += span
        else:
            bound += span
    if with_war:
        for k in range(acc_write.shape[0]):
            if not acc_write[k]:
                bound += acc_hi[k] - acc_lo[k]
    return bound


@njit(cache=True)
def edge_weights(e_src, e_dst, is_mem, cyc, out):
    """The weight rule of `build_graph`: the destination's memory cycles if it
    accesses memory, else the source's, else 1 (a register forward)."""
    for k in range(len(e_src)):
        d = e_dst[k]
        s = e_src[k]
        if is_mem[d]:
            out[k] = cyc[d]
        elif is_mem[s]:
            out[k] = cyc[s]
        else:
            out[k] = 1.0
