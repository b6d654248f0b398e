"""Numba kernels of the control-flow models: dynamic control dependences, the
branch predictor, each model's requirements, its critical path and its edges.

`ir_graph.control` prepares their inputs and documents the models. Kernels take
arrays and scalars only and say what they change in place.
"""

import numpy as np

from vcut_base.jitcache import njit

__all__ = ["dynamic_control", "model_requirements", "implied_by_data", "critical_path",
           "merge_waits", "is_sorted", "MODEL_CODES", "NOT_BRANCH", "PREDICTED",
           "MISPREDICTED"]

# branch state of a dynamic instruction
NOT_BRANCH = 0
PREDICTED = 1
MISPREDICTED = 2

#: The kernels' code of each model of `ir_graph.control.CONTROL_MODELS`.
MODEL_CODES = {"oracle": 0, "sp-cd-mf": 1, "sp-cd": 2, "sp": 3, "cd-mf": 4, "cd": 5, "base": 6}
_SPCDMF, _SPCD, _SP, _CDMF, _CD, _BASE = 1, 2, 3, 4, 5, 6


@njit(cache=True, nogil=True)
def dynamic_control(dyn_sid, dyn_act, bs_block, bs_start, act_call, act_last, ins_block,
                    is_branch, succ_ptr, succ_block, cd_ptr, cd_sid, parent, state):
    """The controlling branch instance and the branch state of every dynamic instruction.

    ``parent[i]`` (filled): the dynamic index of the latest instance, in ``i``'s own
    activation, of a branch that ``i``'s block is control dependent on
    (``cd_sid[cd_ptr[b]:cd_ptr[b + 1]]`` for block ``b``); where none has run in the
    activation yet, the controlling branch of the call that opened it (-1 for a root
    activation or a call no branch controls). ``state[i]`` (filled): 0 for an
    instruction that is not a branch, 1 for a branch the two-bit predictor got
    right, 2 for a mispredicted one. The predictor keeps, per static branch, a
    predicted successor (at first its first successor in the IR text) and a
    confidence: a right guess makes it strong; a wrong one makes a strong guess
    weak, and replaces a weak guess by the successor taken (for a two-way branch,
    exactly the two-bit saturating counter started at "weakly first"). The
    successor taken is the block of the next instruction of the activation; a
    branch that ends the trace counts as predicted.

    A recursive activation's branches hide the caller's instances of the same
    branches only while it runs: they are kept on an undo stack and put back when
    it ends.
    """
    n = dyn_sid.shape[0]
    n_sid = is_branch.shape[0]
    n_act = act_call.shape[0]
    last_dyn = np.full(n_sid, -1, dtype=np.int64)
    last_act = np.full(n_sid, -1, dtype=np.int64)
    guess = np.full(n_sid, -1, dtype=np.int64)
    strong = np.zeros(n_sid, dtype=np.bool_)
    for s in range(n_sid):
        if is_branch[s]:
            guess[s] = succ_block[succ_ptr[s]]
    act_cur = np.full(n_act, -1, dtype=np.int64)
    act_base = np.full(n_act, -2, dtype=np.int64)
    cap = 0
    for i in range(n):
        if is_branch[dyn_sid[i]]:
            cap += 1
    undo_sid = np.empty(cap, dtype=np.int64)
    undo_dyn = np.empty(cap, dtype=np.int64)
    undo_act = np.empty(cap, dtype=np.int64)
    undo_owner = np.empty(cap, dtype=np.int64)
    top = 0
    k = 0
    nb = bs_start.shape[0]
    for i in range(n):
        a = dyn_act[i]
        if act_base[a] == -2:
            c = act_call[a]
            act_base[a] = parent[c] if c >= 0 else -1
        # put back what the activations that have ended hid, at once: a caller can run
        # a branch right after a call returns, before its next block starts
        while top > 0 and act_last[undo_owner[top - 1]] < i:
            top -= 1
            s = undo_sid[top]
            last_dyn[s] = undo_dyn[top]
            last_act[s] = undo_act[top]
        if k < nb and bs_start[k] == i:
            b = bs_block[k]
            best = -1
            for j in range(cd_ptr[b], cd_ptr[b + 1]):
                s = cd_sid[j]
                if last_act[s] == a and last_dyn[s] > best:
                    best = last_dyn[s]
            act_cur[a] = best if best >= 0 else act_base[a]
            k += 1
        parent[i] = act_cur[a]
        s = dyn_sid[i]
        if not is_branch[s]:
            state[i] = NOT_BRANCH
            continue
        state[i] = PREDICTED
        if i + 1 < n and dyn_act[i + 1] == a:
            taken = ins_block[dyn_sid[i + 1]]
            if taken == guess[s]:
                strong[s] = True
            else:
                state[i] = MISPREDICTED
                if strong[s]:
                    strong[s] = False
                else:
                    guess[s] = taken
        if last_act[s] != a:
            undo_sid[top] = s
            undo_dyn[top] = last_dyn[s]
            undo_act[top] = last_act[s]
            undo_owner[top] = a
            top += 1
            last_act[s] = a
        last_dyn[s] = i


@njit(cache=True, nogil=True)
def model_requirements(code, parent, state, req, ser):
    """Fill ``req[v]`` (the branch node ``v`` waits for) and ``ser[v]`` (a branch's
    wait for an earlier branch: one flow of control) under model ``code``
    (`MODEL_CODES`); -1 where there is none. Node ids are indices of ``parent``
    and ``state`` (`dynamic_control`'s, on the graph's nodes)."""
    n = parent.shape[0]
    last_br = -1
    last_mis = -1
    for v in range(n):
        p = parent[v]
        r = -1
        if code == _BASE:
            r = last_br
        elif code == _SP:
            r = last_mis
        elif code == _CD or code == _CDMF:
            r = p
        elif p >= 0:  # the SP-CD family: the nearest mispredicted controlling branch
            r = p if state[p] == MISPREDICTED else req[p]
        req[v] = r
        ser[v] = -1
        if state[v] != NOT_BRANCH:
            if code == _CD and last_br != r:
                ser[v] = last_br
            elif code == _SPCD and state[v] == MISPREDICTED and last_mis != r:
                ser[v] = last_mis
            last_br = v
            if state[v] == MISPREDICTED:
                last_mis = v


@njit(cache=True, nogil=True)
def implied_by_data(src, dst, req, implied):
    """Mark ``implied[v]`` where a data edge ``u -> v`` has ``req[u] == req[v] >= 0``:
    ``u`` waits for the same branch, so ``v`` (which waits for ``u``) does too."""
    for e in range(src.shape[0]):
        v = dst[e]
        r = req[v]
        if r >= 0 and req[src[e]] == r:
            implied[v] = True


@njit(cache=True, nogil=True)
def critical_path(n, src, dst, weight, order, req, ser, latency):
    """Longest path of the data edges plus each node's waits (``req``, ``ser``: -1
    none; empty arrays: no waits), a wait costing ``latency``. ``order`` lists the
    edges by destination (empty: they already are). Returns (cycles, the node
    where the longest path ends)."""
    dist = np.zeros(n, dtype=np.float64)
    waits = req.shape[0] > 0
    m = src.shape[0]
    e = 0
    best = 0.0
    end = 0
    sorted_edges = order.shape[0] == 0
    for v in range(n):
        d = 0.0
        if waits:
            r = req[v]
            if r >= 0 and dist[r] + latency > d:
                d = dist[r] + latency
            r = ser[v]
            if r >= 0 and dist[r] + latency > d:
                d = dist[r] + latency
        while e < m:
            k = e if sorted_edges else order[e]
            if dst[k] != v:
                break
            f = dist[src[k]] + weight[k]
            if f > d:
                d = f
            e += 1
        dist[v] = d
        if d > best:
            best = d
            end = v
    return best, end


@njit(cache=True, nogil=True)
def is_sorted(a):
    """Whether ``a`` is non-decreasing."""
    for i in range(1, a.shape[0]):
        if a[i] < a[i - 1]:
            return False
    return True


@njit(cache=True, nogil=True)
def merge_waits(n, src, dst, weight, kind, req, ser, need, latency, ctrl_kind,
                o_src, o_dst, o_weight, o_kind):
    """Write the data edges (sorted by destination) and the control edges into the
    ``o_*`` arrays, by destination, a node's data edges before its control edges (weight
    ``latency``, kind ``ctrl_kind``): node ``v`` gets an edge from ``req[v]`` where
    ``need[v]``, then one from ``ser[v]`` when ``ser[v] >= 0``.
    Returns the edges written."""
    m = src.shape[0]
    e = 0
    o = 0
    for v in range(n):
        while e < m and dst[e] == v:
            o_src[o] = src[e]
            o_dst[o] = v
            o_weight[o] = weight[e]
            o_kind[o] = kind[e]
            o += 1
            e += 1
        if need[v]:
            o_src[o] = req[v]
            o_dst[o] = v
            o_weight[o] = latency
            o_kind[o] = ctrl_kind
            o += 1
        r = ser[v]
        if r >= 0:
            o_src[o] = r
            o_dst[o] = v
            o_weight[o] = latency
            o_kind[o] = ctrl_kind
            o += 1
    return o
