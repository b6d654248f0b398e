"""Numba kernel of the discrete-event simulator (`mapping.simulate`).

Arrays only; no globals. Event kinds: 0 a task finished (id = task), 1 a
gather message arrived at a home (id = the sending replica), 2 a scatter
message arrived (id = the receiving replica). Events are processed in time
order, equal times in the order they were created.

The event loop's helpers (heap, message routing, publishing a vertex, starting
a task) are inlined into it: called, each passed some twenty arrays, they cost
a fifth of the simulation (4.5 against 5.7 s at 13.5 M tasks), for a first
compilation of about 10 s (then cached).
"""

import numpy as np

from numba.cpython.unsafe.numbers import trailing_zeros

from vcut_base.jitcache import helper, njit
from vcut_base.progress_kernels import TICK_MASK, completed, stopped_at
from ir_graph.replica_kernels import sort_run

EV_TASK, EV_GATHER, EV_SCATTER = 0, 1, 2
#: Slots per summary word of the window-free simulation's ready bitsets (64 x 64 bits).
READY_BLOCK = 4096


@helper
def _less(ht, hs, i, j):
    return ht[i] < ht[j] or (ht[i] == ht[j] and hs[i] < hs[j])


@helper
def _swap(ht, hs, hk, hi, i, j):
    ht[i], ht[j] = ht[j], ht[i]
    hs[i], hs[j] = hs[j], hs[i]
    hk[i], hk[j] = hk[j], hk[i]
    hi[i], hi[j] = hi[j], hi[i]


@helper
def _push(ht, hs, hk, hi, size, t, seq, kind, ident):
    i = size
    ht[i] = t
    hs[i] = seq
    hk[i] = kind
    hi[i] = ident
    while i > 0:
        parent = (i - 1) // 2
        if _less(ht, hs, i, parent):
            _swap(ht, hs, hk, hi, i, parent)
            i = parent
        else:
            break
    return size + 1


@helper
def _pop(ht, hs, hk, hi, size):
    """Move the smallest event to index ``size - 1``; returns the new size."""
    size -= 1
    _swap(ht, hs, hk, hi, 0, size)
    i = 0
    while True:
        a = 2 * i + 1
        b = a + 1
        m = i
        if a < size and _less(ht, hs, a, m):
            m = a
        if b < size and _less(ht, hs, b, m):
            m = b
        if m == i:
            break
        _swap(ht, hs, hk, hi, i, m)
        i = m
    return size


@helper
def _send(a, b, t, nbytes, cols, hop_cycles, ser, link_free, link_bytes, stats):
    """XY-route a message from core a to core b injected at t; returns its arrival.

    Links are reserved in injection order: on each link the message starts at
    max(its arrival there, the link's free time) and holds it ``ser`` cycles;
    the head reaches the next router ``hop_cycles`` after starting; the tail
    arrives ``ser`` after the last hop.
    """
    if a == b:
        return t
    r, c = a // cols, a % cols
    rb, cb = b // cols, b % cols
    tl = t
    hops = 0
    while c != cb or r != rb:
        if c != cb:
            d = 0 if cb > c else 1
        else:
            d = 2 if rb > r else 3
        link = (r * cols + c) * 4 + d
        start = max(tl, link_free[link])
        link_free[link] = start + ser
        link_bytes[link] += nbytes
        tl = start + hop_cycles
        hops += 1
        if d == 0:
            c += 1
        elif d == 1:
            c -= 1
        elif d == 2:
            r += 1
        else:
            r -= 1
    stats[0] += nbytes
    stats[1] += nbytes * hops
    return tl + ser


@helper
def _task(order, pos):
    """The task at position ``pos`` of the execution order."""
    return pos if order.shape[0] == 0 else order[pos]


@njit(cache=True)
def cluster_tasks(order, t_c, p, tasks):
    """CSR of each cluster's tasks by position (ascending), in one counting pass:
    returns ``ptr`` (int64[p + 1]); the positions are written to ``tasks`` (n,)."""
    n = t_c.shape[0]
    ptr = np.zeros(p + 1, dtype=np.int64)
    for e in range(n):
        ptr[t_c[e] + 1] += 1
    for c in range(p):
        ptr[c + 1] += ptr[c]
    fill = ptr[:-1].copy()
    for pos in range(n):
        c = t_c[_task(order, pos)]
        tasks[fill[c]] = pos
        fill[c] += 1
    return ptr


@njit(cache=True, nogil=True)
def position_tasks(order, src, dst, ptr, rcl, rin, rout, rsrc, rdst, t_c, t_w, t_obj, home,
                   newid, old_of, rptr, ncl, nin, nout, nvert, rmap, pc, pw, po, ps, pd, nhome,
                   counter):
    """A scheduled vertex cut in the layout `simulate_events` reads fastest.

    Input: the tasks in task order with ``order`` (m,) the task at each position;
    the replica table (``ptr`` (V + 1,), ``rcl``, ``rin``, ``rout`` (R,), the tasks'
    replicas ``rsrc``, ``rdst``); the tasks' cluster, cycles, object; ``home`` (V,).
    Output (written in place): the vertices relabelled in the order the positions
    first touch them (``newid``: old id -> new; untouched vertices last, in id
    order; ``old_of`` its inverse), the replica table by new vertex (``rptr``,
    ``ncl``, ``nin``, ``nout``, ``nvert``; each vertex's replicas in their old
    order; ``rmap``: old replica -> new), the tasks by position (``pc``, ``pw``,
    ``po``, ``ps``, ``pd``) and ``nhome``. O(m + V + R); one pass over the
    positions reads the task arrays at random, so that every simulation of the
    clustering then reads them in sequence. Progress in ``counter`` (2 m steps:
    the two passes over the positions); returns False when asked to stop.
    """
    m = order.shape[0]
    n = home.shape[0]
    for v in range(n):
        newid[v] = -1
    nxt = 0
    for pos in range(m):
        if stopped_at(pos, counter):
            return False
        x = order[pos]
        for w in (src[x], dst[x]):
            if newid[w] < 0:
                newid[w] = nxt
                old_of[nxt] = w
                nxt += 1
    for v in range(n):
        if newid[v] < 0:
            newid[v] = nxt
            old_of[nxt] = v
            nxt += 1
    rptr[0] = 0
    for i in range(n):
        v = old_of[i]
        base = rptr[i]
        cnt = ptr[v + 1] - ptr[v]
        for j in range(cnt):
            r = ptr[v] + j
            q = base + j
            rmap[r] = q
            ncl[q] = rcl[r]
            nin[q] = rin[r]
            nout[q] = rout[r]
            nvert[q] = i
        rptr[i + 1] = base + cnt
        nhome[i] = home[v]
    for pos in range(m):
        if stopped_at(m + pos, counter):
            return False
        x = order[pos]
        pc[pos] = t_c[x]
        pw[pos] = t_w[x]
        po[pos] = t_obj[x]
        ps[pos] = rmap[rsrc[x]]
        pd[pos] = rmap[rdst[x]]
    completed(counter, 2 * m)
    return True


@njit(cache=True, nogil=True)
def simulate_events(order, t_c, t_w, t_obj, rep_src, rep_dst, rep_vertex, rep_cluster, rep_in,
                    rep_out, rep_ptr, home, vorder, cl_ptr, cl_tasks, core_of, core_cl_ptr, core_cl,
                    speed, numa, lat, mem_cycles, cols, hop_cycles, ser, msg_bytes, n_links, n_obj,
                    window, ready_stack, counter, scan=False):
    """Run the simulation; see `mapping.simulate` for the model.

    Parameters (n tasks, R replicas, V vertices, P clusters, K cores)
    -----------------------------------------------------------------
    order : (n,) the task at each position of the execution order (empty: the
        identity); tasks are known by their positions inside the kernel
    t_c, t_w, t_obj : (n,) cluster, cycles, object (-1) of each task
    rep_src, rep_dst : (n,) replica of the task's source / destination vertex in its cluster
    rep_vertex, rep_cluster, rep_in, rep_out : (R,) replicas sorted by vertex; in-/out-task counts
    rep_ptr : (V + 1,) replicas of vertex v are rep_ptr[v]:rep_ptr[v+1]
    home : (V,) home cluster (-1: no edges)
    vorder : (V,) the vertices in the order of their ids before `position_tasks` relabelled
        them (empty: the identity); vertices without in-tasks are published at time 0 in
        that order, so that their messages' ties break as they did
    cl_ptr, cl_tasks : CSR of each cluster's tasks (positions, ascending; `cluster_tasks`)
    core_of : (P,) core of each cluster; core_cl_ptr, core_cl : CSR of each core's clusters
    speed, numa : (K,) core speed, NUMA node; lat : (nodes, nodes) memory latency
    window : a cluster may start any of its ``window`` oldest tasks not yet started
    ready_stack : (R + K + 1,) scratch: replicas whose value became available,
        then (in place) the cores to wake
    counter : int64[2]; ``counter[0]``: tasks done (written every `TICK`
        events); a non-zero ``counter[1]`` stops the run there
    scan : choose each task by scanning the windows even where the window holds every
        task of each cluster (the tests' reference for the ready bitsets used there)

    Returns
    -------
    finish : (n,) finish time of every task (task order, not positions)
    busy : (K,) busy cycles per core
    link_bytes : (n_links,) bytes over each directed mesh link
    stats : float64 (6,) network bytes, hop-bytes, messages, message bytes,
            remote-memory tasks, tasks done
    """
    n = len(t_c)
    R = len(rep_vertex)
    V = len(home)
    K = len(speed)
    avail = np.full(R, np.inf)
    in_left = rep_in.copy()
    parts_left = np.zeros(V, dtype=np.int32)
    for r in range(R):
        if rep_in[r] > 0:
            parts_left[rep_vertex[r]] += 1
    head = cl_ptr[:-1].copy()
    started = np.zeros(n, dtype=np.bool_)
    busy_flag = np.zeros(K, dtype=np.bool_)
    busy = np.zeros(K)
    finish = np.zeros(n)
    link_free = np.zeros(n_links)
    link_bytes = np.zeros(n_links)
    obj_node = np.full(max(n_obj, 1), -1, dtype=np.int32)
    stats = np.zeros(6)
    # the event heap, allocated once: each replica has at most one message in flight (its
    # gather is sent when its in-tasks are done and arrives before the vertex is final, so
    # before any scatter to it is sent) and each core one task, so it never holds more than
    # R + K events; pages it never reaches are never touched. (Grown on demand, the arrays
    # were reassigned inside the loop and numba counted references to them at every event.)
    cap = R + K + 1
    ht = np.empty(cap)
    hs = np.empty(cap, dtype=np.int64)
    hk = np.empty(cap, dtype=np.int8)
    hi = np.empty(cap, dtype=np.int64)
    # Without an issue window (one as large as every cluster), a core starts the ready
    # task of the lowest position among all its clusters' unstarted tasks. `_try_start`'s
    # scan of the windows reads every waiting task ahead of the first ready one at each
    # start: quadratic where many wait (behind a chain of branches, `ir_graph.control`).
    # Instead each core keeps its ready tasks in a bitset: its tasks have slots in the
    # order of their positions (from ``pbase[k]``, padded to `READY_BLOCK`); a task's slot
    # is set when its value becomes available (`_mark_ready`; ``out_pos``: the slots of
    # each replica's out-tasks), in ``bits``, whose words each have a bit in a summary
    # (``summ``; the summary words' cores in ``owner``), scanned from the core's lowest
    # summary word that may hold a bit (``lo``; `_try_start_free`). The same choices as the
    # scan; against a binary heap of ready positions per core, md's window-free
    # simulation (5.7 M tasks) took 1.3 s instead of 2.3 s. With a window, the windows are
    # scanned (at most ``window`` tasks each), with no memory beyond the clustering's.
    free = not scan
    for c in range(cl_ptr.shape[0] - 1):
        if cl_ptr[c + 1] - cl_ptr[c] > window:
            free = False
    nf = n if free else 0
    out_ptr = np.zeros(R + 1 if free else 1, dtype=np.int64)
    # positions and slots in the caller's index type (int32 below 2^31 - 1 tasks and
    # slots: `mapping.simulate` chooses it): half the bytes of int64 per task
    out_pos = np.empty(nf, dtype=cl_tasks.dtype)
    pos_at = np.empty(nf, dtype=cl_tasks.dtype)  # the position of each core's k-th task
    base = np.zeros(K + 1, dtype=np.int64)  # where pos_at's tasks of core k begin
    pbase = np.zeros(K + 1, dtype=np.int64)  # core k's first slot
    cnt = np.zeros(K, dtype=np.int64)  # ready tasks per core
    lo = np.zeros(K, dtype=np.int64)
    if free:
        for e in range(n):
            base[core_of[t_c[_task(order, e)]] + 1] += 1
        for k in range(K):
            pbase[k + 1] = pbase[k] + -(-base[k + 1] // READY_BLOCK) * READY_BLOCK
            base[k + 1] += base[k]
            lo[k] = pbase[k] // READY_BLOCK
    bits = np.zeros(pbase[K] // 64, dtype=np.uint64)
    summ = np.zeros(pbase[K] // READY_BLOCK, dtype=np.uint64)
    owner = np.empty(pbase[K] // READY_BLOCK, dtype=np.int64)
    if free:
        for k in range(K):
            for w in range(pbase[k] // READY_BLOCK, pbase[k + 1] // READY_BLOCK):
                owner[w] = k
        for e in range(n):
            out_ptr[rep_src[_task(order, e)] + 1] += 1
        for r in range(R):
            out_ptr[r + 1] += out_ptr[r]
        # each replica's out-slots filled from out_ptr[r] on (which ends at the next
        # replica's start), then the starts shifted back: no fill counters
        for e in range(n):  # ascending positions: each core's slots in their order
            x = _task(order, e)
            k = core_of[t_c[x]]
            pos_at[base[k] + cnt[k]] = e
            r = rep_src[x]
            out_pos[out_ptr[r]] = pbase[k] + cnt[k]
            out_ptr[r] += 1
            cnt[k] += 1
        for r in range(R, 0, -1):
            out_ptr[r] = out_ptr[r - 1]
        out_ptr[0] = 0
        for k in range(K):
            cnt[k] = 0
    rs = (bits, summ, lo, cnt, owner, pos_at, base, pbase)
    _events(order, t_c, t_w, t_obj, rep_src, rep_dst, rep_vertex, rep_cluster, rep_out, rep_ptr,
            home, vorder, core_of, speed, numa, lat, mem_cycles, cols, hop_cycles, ser, msg_bytes,
            window, ready_stack, counter, free, rs, cl_ptr, cl_tasks, core_cl_ptr, core_cl, out_ptr,
            out_pos, avail, in_left, parts_left, head, started, busy_flag, busy, finish, link_free,
            link_bytes, obj_node, stats, ht, hs, hk, hi)
    return finish, busy, link_bytes, stats, obj_node


@helper
def _events(order, t_c, t_w, t_obj, rep_src, rep_dst, rep_vertex, rep_cluster, rep_out, rep_ptr,
            home, vorder, core_of, speed, numa, lat, mem_cycles, cols, hop_cycles, ser, msg_bytes,
            window, ready_stack, counter, free, rs, cl_ptr, cl_tasks, core_cl_ptr, core_cl, out_ptr,
            out_pos, avail, in_left, parts_left, head, started, busy_flag, busy, finish, link_free,
            link_bytes, obj_node, stats, ht, hs, hk, hi):
    """`simulate_events`' event loop, on the arrays it made: a helper, compiled without
    reference counting, so that its calls to the other helpers (a start, a message, a
    value published: several per event, each with up to twenty arrays) pass the arrays
    without an atomic increment and decrement of each (md under ``cd``, windowed: 1.63 ->
    1.57 s)."""
    V = home.shape[0]
    K = speed.shape[0]
    size = 0
    seq = 0
    # vertices without in-tasks are final at time 0
    for i in range(V):
        v = i if vorder.shape[0] == 0 else vorder[i]
        if home[v] >= 0 and parts_left[v] == 0:
            size, seq, nr = _publish(v, 0.0, home, core_of, rep_ptr, rep_out, rep_cluster, avail,
                                     ready_stack, 0, msg_bytes, cols, hop_cycles, ser, link_free,
                                     link_bytes, stats, ht, hs, hk, hi, size, seq)
            if free:
                for j in range(nr):
                    _mark_ready(ready_stack[j], out_ptr, out_pos, rs)
    now = 0.0
    for k in range(K):
        if free:
            size, seq = _try_start_free(k, now, rs, busy_flag, busy, order, t_w, t_obj, obj_node,
                                        numa, lat, mem_cycles, speed, stats, ht, hs, hk, hi, size,
                                        seq)
        else:
            size, seq = _try_start(k, now, busy_flag, busy, core_cl_ptr, core_cl, head, cl_ptr,
                                   cl_tasks, order, started, window, rep_src, avail, t_w, t_obj,
                                   obj_node, numa, lat, mem_cycles, speed, stats, ht, hs, hk, hi,
                                   size, seq)
    events = 0
    while size > 0:
        events += 1
        if events & TICK_MASK == 0:
            counter[0] = int(stats[5])
            if counter[1] != 0:
                break
        size = _pop(ht, hs, hk, hi, size)
        now = ht[size]
        kind = hk[size]
        ident = hi[size]
        nready = 0
        touched_core = -1
        if kind == EV_TASK:
            e = _task(order, ident)
            c = t_c[e]
            k = core_of[c]
            busy_flag[k] = False
            finish[e] = now
            stats[5] += 1
            touched_core = k
            r = rep_dst[e]
            in_left[r] -= 1
            if in_left[r] == 0:
                v = rep_vertex[r]
                if c == home[v]:
                    parts_left[v] -= 1
                    if parts_left[v] == 0:
                        size, seq, nready = _publish(v, now, home, core_of, rep_ptr, rep_out,
                                                     rep_cluster, avail, ready_stack, nready,
                                                     msg_bytes, cols, hop_cycles, ser, link_free,
                                                     link_bytes, stats, ht, hs, hk, hi, size, seq)
                else:
                    stats[2] += 1
                    stats[3] += msg_bytes
                    arr = _send(k, core_of[home[v]], now, msg_bytes, cols, hop_cycles, ser,
                                link_free, link_bytes, stats)
                    size = _push(ht, hs, hk, hi, size, arr, seq, EV_GATHER, r)
                    seq += 1
        elif kind == EV_GATHER:
            v = rep_vertex[ident]
            parts_left[v] -= 1
            if parts_left[v] == 0:
                size, seq, nready = _publish(v, now, home, core_of, rep_ptr, rep_out, rep_cluster,
                                             avail, ready_stack, nready, msg_bytes, cols,
                                             hop_cycles, ser, link_free, link_bytes, stats, ht, hs,
                                             hk, hi, size, seq)
        else:
            avail[ident] = now
            ready_stack[nready] = ident
            nready += 1
        # wake the cores of the replicas that became available, then the core that finished
        for i in range(nready):
            if free:
                _mark_ready(ready_stack[i], out_ptr, out_pos, rs)
            ready_stack[i] = core_of[rep_cluster[ready_stack[i]]]
        if touched_core >= 0:
            ready_stack[nready] = touched_core
            nready += 1
        for i in range(nready):
            if free:
                size, seq = _try_start_free(ready_stack[i], now, rs, busy_flag, busy, order, t_w,
                                            t_obj, obj_node, numa, lat, mem_cycles, speed, stats,
                                            ht, hs, hk, hi, size, seq)
            else:
                size, seq = _try_start(ready_stack[i], now, busy_flag, busy, core_cl_ptr, core_cl,
                                       head, cl_ptr, cl_tasks, order, started, window, rep_src,
                                       avail, t_w, t_obj, obj_node, numa, lat, mem_cycles, speed,
                                       stats, ht, hs, hk, hi, size, seq)
    counter[0] = int(stats[5])


@helper
def _publish(v, now, home, core_of, rep_ptr, rep_out, rep_cluster, avail, ready_stack, nready,
             msg_bytes, cols, hop_cycles, ser, link_free, link_bytes, stats, ht, hs, hk, hi, size,
             seq):
    """Vertex v is final at its home at ``now``: make it available to its users."""
    hc = core_of[home[v]]
    for r in range(rep_ptr[v], rep_ptr[v + 1]):
        if rep_out[r] == 0:
            continue
        if rep_cluster[r] == home[v]:
            avail[r] = now
            ready_stack[nready] = r
            nready += 1
        else:
            stats[2] += 1
            stats[3] += msg_bytes
            arr = _send(hc, core_of[rep_cluster[r]], now, msg_bytes, cols, hop_cycles, ser,
                        link_free, link_bytes, stats)
            size = _push(ht, hs, hk, hi, size, arr, seq, EV_SCATTER, r)
            seq += 1
    return size, seq, nready


@helper
def _try_start(k, now, busy_flag, busy, core_cl_ptr, core_cl, head, cl_ptr, cl_tasks, order,
               started, window, rep_src, avail, t_w, t_obj, obj_node, numa, lat, mem_cycles, speed,
               stats, ht, hs, hk, hi, size, seq):
    """If core k is idle, start the earliest ready task in the windows of its clusters.

    ``head[c]`` is the position of cluster c's oldest task not yet started;
    the window is positions ``head[c] .. head[c] + window - 1``.
    """
    if busy_flag[k]:
        return size, seq
    best = -1
    best_pos = -1
    best_c = -1
    for j in range(core_cl_ptr[k], core_cl_ptr[k + 1]):
        c = core_cl[j]
        end = min(cl_ptr[c + 1], head[c] + window)
        for pos in range(head[c], end):
            if started[pos]:
                continue
            e = cl_tasks[pos]
            if best >= 0 and e > best:
                break  # positions hold tasks in execution order
            if avail[rep_src[_task(order, e)]] <= now:
                best = e
                best_pos = pos
                best_c = c
                break
    if best < 0:
        return size, seq
    started[best_pos] = True
    while head[best_c] < cl_ptr[best_c + 1] and started[head[best_c]]:
        head[best_c] += 1
    return _begin(k, now, best, busy_flag, busy, order, t_w, t_obj, obj_node, numa, lat,
                  mem_cycles, speed, stats, ht, hs, hk, hi, size, seq)


@helper
def _mark_ready(r, out_ptr, out_pos, rs):
    """Replica ``r`` became available: its out-tasks are ready, their slots set in their
    cores' bitsets (``rs``: the bitsets' arrays, `simulate_events`)."""
    bits, summ, lo, cnt, owner, _, _, _ = rs
    for j in range(out_ptr[r], out_ptr[r + 1]):
        slot = out_pos[j]
        w = slot >> 6
        sw = w >> 6
        bits[w] |= np.uint64(1) << np.uint64(slot & 63)
        summ[sw] |= np.uint64(1) << np.uint64(w & 63)
        k = owner[sw]
        cnt[k] += 1
        if sw < lo[k]:
            lo[k] = sw


@helper
def _try_start_free(k, now, rs, busy_flag, busy, order, t_w, t_obj, obj_node, numa, lat,
                    mem_cycles, speed, stats, ht, hs, hk, hi, size, seq):
    """`_try_start` without an issue window: core k starts its ready task of the lowest
    position, the lowest slot set in its bitset (`_mark_ready`)."""
    bits, summ, lo, cnt, _, pos_at, base, pbase = rs
    if busy_flag[k] or cnt[k] == 0:
        return size, seq
    sw = lo[k]
    while summ[sw] == 0:  # a ready task is there: the core's summary words hold a bit
        sw += 1
    lo[k] = sw
    x = summ[sw]
    w = sw * 64 + np.int64(trailing_zeros(x))
    y = bits[w]
    slot = w * 64 + np.int64(trailing_zeros(y))
    y &= y - np.uint64(1)  # the lowest bit cleared
    bits[w] = y
    if y == 0:
        summ[sw] = x & (x - np.uint64(1))  # word w was the summary's lowest
    cnt[k] -= 1
    return _begin(k, now, pos_at[base[k] + slot - pbase[k]], busy_flag, busy, order, t_w, t_obj,
                  obj_node, numa, lat, mem_cycles, speed, stats, ht, hs, hk, hi, size, seq)


@helper
def _begin(k, now, best, busy_flag, busy, order, t_w, t_obj, obj_node, numa, lat, mem_cycles,
           speed, stats, ht, hs, hk, hi, size, seq):
    """Core k starts the task at position ``best`` at ``now``: its finish event."""
    x = _task(order, best)
    w = t_w[x]
    o = t_obj[x]
    if o >= 0:
        a = numa[k]
        if obj_node[o] < 0:
            obj_node[o] = a
        b = obj_node[o]
        if b != a:
            stats[4] += 1
        w = w + min(1.0, t_w[x] / mem_cycles) * (lat[a, b] - lat[a, a])
    dur = w / speed[k]
    busy_flag[k] = True
    busy[k] += dur
    size = _push(ht, hs, hk, hi, size, now + dur, seq, EV_TASK, best)
    return size, seq + 1


@njit(cache=True)
def _first_positions(cluster, first):
    for k in range(len(cluster)):
        c = cluster[k]
        if first[c] > k:
            first[c] = k


def first_positions(cluster, p):
    """Position of the first task of each cluster in ``cluster`` (``len`` if none)."""
    first = np.full(p, len(cluster), dtype=np.int64)
    _first_positions(cluster, first)
    return first


@njit(cache=True)
def object_clusters(obj, cluster, n_obj, p):
    """CSC (objects x clusters) of the tasks' object accesses.

    Returns ``(indptr, indices, data)``: the clusters touching object ``o``
    are ``indices[indptr[o]:indptr[o + 1]]`` (increasing), with their task
    counts in ``data``. Linear in the tasks (a counting sort by object).
    """
    count = np.zeros(n_obj + 1, dtype=np.int64)
    for k in range(len(obj)):
        if obj[k] >= 0:
            count[obj[k] + 1] += 1
    for o in range(n_obj):
        count[o + 1] += count[o]
    tasks = np.empty(count[n_obj], dtype=np.int32)
    fill = count[:-1].copy()
    for k in range(len(obj)):
        if obj[k] >= 0:
            tasks[fill[obj[k]]] = cluster[k]
            fill[obj[k]] += 1
    indptr = np.zeros(n_obj + 1, dtype=np.int64)
    indices = np.empty(count[n_obj], dtype=np.int32)
    data = np.empty(count[n_obj], dtype=np.float64)
    seen = np.zeros(p, dtype=np.int64)
    nnz = 0
    for o in range(n_obj):
        lo = count[o]
        hi = count[o + 1]
        m = 0
        for j in range(lo, hi):  # the distinct clusters, gathered at tasks[lo:lo + m]
            c = tasks[j]
            if seen[c] == 0:
                tasks[lo + m] = c
                m += 1
            seen[c] += 1
        sort_run(tasks, lo, lo + m)
        for a in range(m):
            c = tasks[lo + a]
            indices[nnz] = c
            data[nnz] = seen[c]
            nnz += 1
            seen[c] = 0
        indptr[o + 1] = nnz
    return indptr, indices[:nnz].copy(), data[:nnz].copy()
