"""Numba kernels that decode the event stream into a dynamic trace.

The decoder replays the stream against the static table with an explicit
activation stack. Instructions are emitted lazily: an event for instruction
``s`` of the running block emits every instruction of the block up to ``s``
(instructions between produce no events, which is checked); a BLOCK event of
a successor finishes the current block first; the BLOCK event of a
function's entry block opens a new activation under the pending call (a
traced callee, or a callback from library code) and CALLRET closes the call.
An activation ends when its ``ret`` block is finished and the stream moves
on in the caller.

Error codes returned by `decode_events` (``err`` != 0) name the first
inconsistency; ``err_pos`` is the word offset where it was found.
"""

import numpy as np

from vcut_base.jitcache import helper, njit

__all__ = ["count_events", "decode_events", "activation_last", "locate_accesses", "ERRORS"]

ERRORS = {
    1: "unknown event kind",
    2: "event stream ends inside an event",
    3: "entry block with no call to come from",
    4: "successor block does not follow the end of a block",
    5: "an instruction that records events was skipped",
    6: "event for an instruction outside the running block",
    7: "call return that matches no pending call",
    8: "activation ended without a ret",
    9: "block of another function in the same activation",
    10: "event before the first block",
}

@njit(cache=True)
def count_events(ev, blk_ninstr):
    """Count events of each kind and an upper bound of dynamic instructions.

    Returns
    -------
    counts : int64[10]
        Events per kind (index = kind; 0 unused).
    n_dyn : int64
        Sum of the sizes of all executed blocks.
    err : int64
        0, or 1 (unknown kind) / 2 (truncated event).
    err_pos : int64
    """
    words = np.array([0, 1, 2, 2, 1, 3, 2, 1, 3, 3], dtype=np.int64)
    counts = np.zeros(10, dtype=np.int64)
    n_dyn = 0
    pos = 0
    n = ev.shape[0]
    while pos < n:
        h = ev[pos]
        kind = np.int64(h & np.uint64(0xFF))
        if kind < 1 or kind > 9:
            return counts, n_dyn, 1, pos
        if pos + words[kind] > n:
            return counts, n_dyn, 2, pos
        counts[kind] += 1
        if kind == 1:
            n_dyn += blk_ninstr[np.int64(h >> np.uint64(32))]
        pos += words[kind]
        if kind == 7:
            break
    return counts, n_dyn, 0, 0


#: Indices into the ``counts`` array that `decode_events` fills.
N_DYN, N_BLOCKS, N_ACTS, N_MEM, N_ALLOC, N_FREE = range(6)


@helper
def _emit(sid, act, nd, dyn_sid, dyn_act):
    dyn_sid[nd] = sid
    dyn_act[nd] = act
    return nd + 1


@helper
def _emit_range(first, start, stop, act, nd, dyn_sid, dyn_act, ins_expects, check_last):
    """Emit instructions ``first+start .. first+stop-1`` of a block.

    Every instruction emitted must produce no event (``ins_expects`` False),
    except the last one when ``check_last`` is False. Returns the new dynamic
    count and whether the check held.
    """
    for q in range(start, stop):
        s = first + q
        if ins_expects[s] and (check_last or q < stop - 1):
            return nd, False
        nd = _emit(s, act, nd, dyn_sid, dyn_act)
    return nd, True


@njit(cache=True)
def decode_events(
    ev,
    blk_first,
    blk_ninstr,
    blk_func,
    blk_is_entry,
    blk_ends_ret,
    ins_expects,
    ins_tracked,
    ins_size,
    dyn_sid,
    dyn_act,
    bs_block,
    bs_act,
    bs_start,
    act_func,
    act_parent,
    act_call,
    mem_dyn,
    mem_addr,
    mem_size,
    mem_dt,
    mem_write,
    al_dyn,
    al_base,
    al_size,
    fr_dyn,
    fr_base,
    counts,
):
    """Decode an event stream (see the module docstring) into the output arrays.

    Parameters
    ----------
    ev : uint64[:]
        The event stream.
    blk_first, blk_ninstr, blk_func : int32[:]
        Per block: first instruction id, instruction count, function id.
    blk_is_entry, blk_ends_ret : bool[:]
        Per block: is the function's entry block; its terminator is ``ret``.
    ins_expects : bool[:]
        Per instruction: produces at least one event.
    ins_tracked : bool[:]
        Per instruction: a call followed by a CALLRET event.
    ins_size : int64[:]
        Per instruction: static access size (READ/WRITE events).
    dyn_sid, dyn_act, ... fr_base : arrays, written in place
        Outputs, sized by `count_events` (dynamic instructions, executed
        blocks, activations, accesses, allocations, frees).
    counts : int64[6]
        Written in place: how much of each output is filled, indexed by
        `N_DYN`, `N_BLOCKS`, `N_ACTS`, `N_MEM`, `N_ALLOC`, `N_FREE`.

    Returns
    -------
    err : int
        0, or an `ERRORS` code.
    err_pos : int
        Word offset of the inconsistency.
    end_reason : int
        The END event's reason, -1 when the stream has none.
    """
    nstack = bs_block.shape[0] + 1
    st_act = np.empty(nstack, dtype=np.int32)
    st_blk = np.empty(nstack, dtype=np.int32)
    st_cur = np.empty(nstack, dtype=np.int64)  # next index in the block to emit
    st_wait = np.empty(nstack, dtype=np.int64)  # sid of the pending call, or -1
    st_wait_dyn = np.empty(nstack, dtype=np.int64)
    depth = 0
    n = 0
    nb = 0
    na = 0
    nm = 0
    nal = 0
    nfr = 0
    end_reason = -1
    err = 0
    pos = 0
    total = ev.shape[0]
    mask = np.uint64(0xFF)
    sh = np.uint64(32)
    while pos < total and err == 0:
        h = ev[pos]
        kind = np.int64(h & mask)
        ident = np.int64(h >> sh)
        if kind == 7:
            end_reason = ident
            if ident == 0:
                # main returned: complete the open blocks
                while depth > 0:
                    top = depth - 1
                    b = st_blk[top]
                    n, _ = _emit_range(blk_first[b], st_cur[top], blk_ninstr[b], st_act[top],
                                       n, dyn_sid, dyn_act, ins_expects, False)
                    depth -= 1
            elif ident == 1 and depth > 0 and st_wait[depth - 1] < 0:
                # exit() called: emit the top activation up to the call that left
                top = depth - 1
                b = st_blk[top]
                first = blk_first[b]
                j = st_cur[top]
                while j < blk_ninstr[b]:
                    n = _emit(first + j, st_act[top], n, dyn_sid, dyn_act)
                    j += 1
                    if ins_tracked[first + j - 1]:
                        break
                st_cur[top] = j
            break
        if kind == 1:
            b = ident
            if blk_is_entry[b]:
                # a new activation: find the call it comes from
                parent = -1
                call = -1
                while depth > 0:
                    top = depth - 1
                    if st_wait[top] >= 0:
                        parent = st_act[top]
                        call = st_wait_dyn[top]
                        break
                    bt = st_blk[top]
                    first = blk_first[bt]
                    found = -1
                    k = st_cur[top]
                    while k < blk_ninstr[bt] and not ins_expects[first + k]:
                        k += 1
                    if k < blk_ninstr[bt] and ins_tracked[first + k]:
                        found = k
                    if found >= 0:
                        n, _ = _emit_range(first, st_cur[top], found + 1, st_act[top], n,
                                           dyn_sid, dyn_act, ins_expects, False)
                        st_cur[top] = found + 1
                        st_wait[top] = first + found
                        st_wait_dyn[top] = n - 1
                        parent = st_act[top]
                        call = n - 1
                        break
                    # no call ahead: this activation must be ending
                    n, ok = _emit_range(first, st_cur[top], blk_ninstr[bt], st_act[top], n,
                                        dyn_sid, dyn_act, ins_expects, True)
                    if not ok:
                        err = 5
                        break
                    if not blk_ends_ret[bt]:
                        err = 3
                        break
                    depth -= 1
                if err:
                    break
                act_func[na] = blk_func[b]
                act_parent[na] = parent
                act_call[na] = call
                st_act[depth] = na
                st_blk[depth] = b
                st_cur[depth] = 0
                st_wait[depth] = -1
                depth += 1
                na += 1
            else:
                # successor block in the running activation (maybe of a caller)
                while True:
                    if depth == 0:
                        err = 10
                        break
                    top = depth - 1
                    if st_wait[top] >= 0:
                        err = 4
                        break
                    bt = st_blk[top]
                    n, ok = _emit_range(blk_first[bt], st_cur[top], blk_ninstr[bt], st_act[top],
                                        n, dyn_sid, dyn_act, ins_expects, True)
                    if not ok:
                        err = 5
                        break
                    st_cur[top] = blk_ninstr[bt]
                    if blk_ends_ret[bt]:
                        depth -= 1
                        continue
                    if blk_func[bt] != blk_func[b]:
                        err = 9
                        break
                    st_blk[top] = b
                    st_cur[top] = 0
                    break
                if err:
                    break
            bs_block[nb] = b
            bs_act[nb] = st_act[depth - 1]
            bs_start[nb] = n
            nb += 1
            pos += 1
            continue
        if kind < 1 or kind > 9:
            err = 1
            break
        # instruction events: READ, WRITE, CALLRET, ALLOC, FREE, READN, WRITEN
        s = ident
        while True:
            if depth == 0:
                err = 10
                break
            top = depth - 1
            bt = st_blk[top]
            first = blk_first[bt]
            idx = s - first
            inside = idx >= 0 and idx < blk_ninstr[bt]
            if kind == 4:
                # a call return belongs here if this frame waits on that call
                # or has the call still ahead in its block
                if st_wait[top] == s or (inside and idx >= st_cur[top]):
                    break
                if st_wait[top] >= 0:
                    err = 7
                    break
                # a CALLRET for a caller: the running activation must end
                n, ok = _emit_range(first, st_cur[top], blk_ninstr[bt], st_act[top], n,
                                    dyn_sid, dyn_act, ins_expects, True)
                st_cur[top] = blk_ninstr[bt]
                if not ok:
                    err = 5
                elif not blk_ends_ret[bt]:
                    err = 8
                if err:
                    break
                depth -= 1
                continue
            if inside and idx >= st_cur[top] - 1:
                break
            err = 6
            break
        if err:
            break
        # emit up to s
        j = st_cur[top]
        if idx >= j:
            n, ok = _emit_range(first, j, idx + 1, st_act[top], n, dyn_sid, dyn_act,
                                ins_expects, False)
            if not ok:
                err = 5
                break
            st_cur[top] = idx + 1
            if ins_tracked[s]:
                st_wait[top] = s
                st_wait_dyn[top] = n - 1
        cur_dyn = n - 1
        if kind == 2 or kind == 3 or kind == 8 or kind == 9:
            mem_dyn[nm] = cur_dyn
            mem_addr[nm] = ev[pos + 1]
            mem_dt[nm] = np.uint32((h >> np.uint64(8)) & np.uint64(0xFFFFFF))
            mem_write[nm] = kind == 3 or kind == 9
            if kind >= 8:
                mem_size[nm] = ev[pos + 2]
                pos += 3
            else:
                mem_size[nm] = ins_size[s]
                pos += 2
            nm += 1
        elif kind == 4:
            if st_wait[top] != s:
                err = 7
                break
            st_wait[top] = -1
            pos += 1
        elif kind == 5:
            al_dyn[nal] = cur_dyn
            al_base[nal] = ev[pos + 1]
            al_size[nal] = ev[pos + 2]
            nal += 1
            pos += 3
        else:
            fr_dyn[nfr] = cur_dyn
            fr_base[nfr] = ev[pos + 1]
            nfr += 1
            pos += 2
    counts[N_DYN] = n
    counts[N_BLOCKS] = nb
    counts[N_ACTS] = na
    counts[N_MEM] = nm
    counts[N_ALLOC] = nal
    counts[N_FREE] = nfr
    return err, pos, end_reason


@njit(cache=True)
def activation_last(dyn_act, n_act):
    """Index of the last dynamic instruction of each activation (-1: none)."""
    last = np.full(n_act, -1, dtype=np.int64)
    for i in range(dyn_act.shape[0]):
        last[dyn_act[i]] = i
    return last


@njit(cache=True)
def locate_accesses(addr, size, t, ubase, group_ptr, group_obj, obj_size, obj_alloc, obj_free,
                    max_size):
    """Object containing each access ``[addr, addr+size)`` at time ``t``.

    Objects are grouped by base address: ``ubase`` holds the distinct bases
    in increasing order and ``group_obj[group_ptr[k]:group_ptr[k+1]]`` the
    objects at ``ubase[k]`` in increasing allocation time (objects reusing an
    address, like the stack slots of successive calls, live one after the
    other). For each access the bases at or below it are tried from the
    nearest down (at most ``max_size`` bytes below); at each, the latest
    allocation not after ``t`` is taken if it is still live and contains the
    access. Returns the object index per access, -1 where none does.
    """
    out = np.full(addr.shape[0], -1, dtype=np.int64)
    for i in range(addr.shape[0]):
        a = addr[i]
        end = a + size[i]
        ti = t[i]
        # the last base at or below a: numpy's searchsorted(side="right") - 1, written
        # out (numba's compiles comparators for every dtype: 0.2 s of a first run)
        lo, hi = 0, ubase.shape[0]
        while lo < hi:
            mid = (lo + hi) // 2
            if ubase[mid] <= a:
                lo = mid + 1
            else:
                hi = mid
        k = lo - 1
        while k >= 0:
            b = ubase[k]
            if a - b > max_size:
                break
            lo = group_ptr[k]
            hi = group_ptr[k + 1]
            # last object of the group allocated at or before ti
            while lo < hi:
                mid = (lo + hi) // 2
                if obj_alloc[group_obj[mid]] <= ti:
                    lo = mid + 1
                else:
                    hi = mid
            if lo > group_ptr[k]:
                o = group_obj[lo - 1]
                if b + obj_size[o] >= end and (obj_free[o] < 0 or ti <= obj_free[o]):
                    out[i] = o
                    break
            k -= 1
    return out
