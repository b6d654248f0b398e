"""Numba kernels of the multilevel cycle of the vertex cut (`vcut.quality.vcycle_refine`
holds the API and the documentation).

The hypergraph model: a *node* per edge of the graph (its weight the edge's), a *net* per
vertex, pinned by the nodes of the vertex's edges; the replicas of a vertex are the blocks
its net connects, so sum_v (lambda(v) - 1) is the connectivity - 1 objective. A level is
``(nptr, nnet)`` (each node's nets), ``(eptr, epin)`` (each net's pins), ``c`` (node weights)
and ``part`` (each node's block); coarser levels merge nodes of one block, so the objective
of a partition is the same at every level.
"""

import numpy as np

from runtime.gain_kernels import heap_pop, heap_push
from vcut_base.jitcache import helper, njit

#: a 64-bit de Bruijn sequence and its table: the index of a word's lowest set bit
_DEBRUIJN = np.uint64(0x03F79D71B4CB0A89)
_DEBRUIJN_INDEX = np.array([0, 1, 48, 2, 57, 49, 28, 3, 61, 58, 50, 42, 38, 29, 17, 4,
                            62, 55, 59, 36, 53, 51, 43, 22, 45, 39, 33, 30, 24, 18, 12, 5,
                            63, 47, 56, 27, 60, 41, 37, 16, 54, 35, 52, 21, 44, 32, 23, 11,
                            46, 26, 40, 15, 34, 20, 31, 10, 25, 14, 19, 9, 13, 8, 7, 6],
                           dtype=np.int64)


@njit(cache=True, nogil=True)
def cluster(nptr, nnet, eptr, epin, c, part, order, cmax, max_net, target):
    """One pass of clustering within the blocks: each node, in ``order``, that no other node
    has joined yet joins the cluster of a neighbour in its block with the highest heavy-net
    rating (sum over the shared nets of ``1 / (|net| - 1)``, nets of more than ``max_net``
    pins not rated; ties: the cluster rated first) whose weight stays within ``cmax``;
    the pass stops once ``target`` clusters are left. Returns ``(rep, clusters)``: each
    node's cluster (a node's number), the number of clusters."""
    nn = c.shape[0]
    rep = np.arange(nn)
    weight = c.copy()
    joined = np.zeros(nn, dtype=np.bool_)
    rating = np.zeros(nn)
    touched = np.empty(nn, dtype=np.int64)
    clusters = nn
    for i in range(nn):
        if clusters <= target:
            break
        u = order[i]
        if joined[u]:
            continue
        nt = 0
        for j in range(nptr[u], nptr[u + 1]):
            e = nnet[j]
            size = eptr[e + 1] - eptr[e]
            if size < 2 or size > max_net:
                continue
            r = 1.0 / (size - 1)
            for q in range(eptr[e], eptr[e + 1]):
                v = epin[q]
                if v == u or part[v] != part[u]:
                    continue
                w = rep[v]
                if rating[w] == 0.0:
                    touched[nt] = w
                    nt += 1
                rating[w] += r
        best = -1
        top = 0.0
        for t in range(nt):
            w = touched[t]
            if rating[w] > top and weight[w] + c[u] <= cmax:
                best = w
                top = rating[w]
            rating[w] = 0.0
        if best >= 0:
            rep[u] = best
            weight[best] += c[u]
            joined[u] = True
            joined[best] = True
            clusters -= 1
    return rep, clusters


@njit(cache=True, nogil=True)
def star_cluster(eptr, epin, c, part, k, vertices, cmax, target):
    """The clustering of level 0 (`cluster` would take time quadratic in the degrees): each
    vertex, in ``vertices`` order, gathers its edges that no vertex has taken yet into one
    cluster per block where at least two of them are in that block (a new cluster each time
    one would weigh more than ``cmax``); an edge left alone at both of its ends stays a
    cluster of its own. Stops once ``target`` clusters are left. Returns ``(rep,
    clusters)`` as `cluster` does."""
    nn = c.shape[0]
    rep = np.arange(nn)
    weight = c.copy()
    taken = np.zeros(nn, dtype=np.bool_)
    stamp = np.full(k, -1, dtype=np.int64)
    root = np.full(k, -1, dtype=np.int64)
    count = np.zeros(k, dtype=np.int64)
    clusters = nn
    for i in range(vertices.shape[0]):
        if clusters <= target:
            break
        x = vertices[i]
        for q in range(eptr[x], eptr[x + 1]):
            e = epin[q]
            if taken[e]:
                continue
            b = part[e]
            if stamp[b] != x:
                stamp[b] = x
                count[b] = 0
                root[b] = -1
            count[b] += 1
        for q in range(eptr[x], eptr[x + 1]):
            e = epin[q]
            b = part[e]
            if taken[e] or count[b] < 2:
                continue
            taken[e] = True
            r = root[b]
            if r < 0 or weight[r] + c[e] > cmax:
                root[b] = e
            else:
                rep[e] = r
                weight[r] += c[e]
                clusters -= 1
    return rep, clusters


@njit(cache=True, nogil=True)
def contract(nptr, nnet, eptr, epin, c, part, rep):
    """The coarser level of the clustering ``rep``: ``(cid, cc, cpart, cnptr, cnnet, ceptr,
    cepin)``, ``cid[u]`` the coarse node of node ``u``. A net's pins are its nodes' coarse
    nodes, each once; a net left with one pin is dropped (it connects one block whatever
    the partition)."""
    nn = c.shape[0]
    ne = eptr.shape[0] - 1
    cid = np.full(nn, -1, dtype=np.int64)
    nc = 0
    for u in range(nn):
        if rep[u] == u:
            cid[u] = nc
            nc += 1
    for u in range(nn):
        cid[u] = cid[rep[u]]
    cc = np.zeros(nc)
    cpart = np.empty(nc, dtype=np.int64)
    for u in range(nn):
        cc[cid[u]] += c[u]
        cpart[cid[u]] = part[u]
    mark = np.full(nc, -1, dtype=np.int64)
    kept = 0
    pins = 0
    for e in range(ne):
        size = 0
        for q in range(eptr[e], eptr[e + 1]):
            w = cid[epin[q]]
            if mark[w] != e:
                mark[w] = e
                size += 1
        if size >= 2:
            kept += 1
            pins += size
    ceptr = np.zeros(kept + 1, dtype=np.int64)
    cepin = np.empty(pins, dtype=np.int64)
    cnptr = np.zeros(nc + 1, dtype=np.int64)
    f = 0
    at = 0
    for e in range(ne):
        start = at
        for q in range(eptr[e], eptr[e + 1]):
            w = cid[epin[q]]
            if mark[w] != ne + e:
                mark[w] = ne + e
                cepin[at] = w
                at += 1
        if at - start >= 2:
            for q in range(start, at):
                cnptr[cepin[q] + 1] += 1
            f += 1
            ceptr[f] = at
        else:
            at = start
    for u in range(nc):
        cnptr[u + 1] += cnptr[u]
    pos = cnptr[:-1].copy()
    cnnet = np.empty(cnptr[nc], dtype=np.int64)
    for e in range(kept):
        for q in range(ceptr[e], ceptr[e + 1]):
            w = cepin[q]
            cnnet[pos[w]] = e
            pos[w] += 1
    return cid, cc, cpart, cnptr, cnnet, ceptr, cepin


@njit(cache=True, nogil=True)
def objective(eptr, epin, part, k):
    """sum over the nets of (the blocks a net connects - 1)."""
    mark = np.full(k, -1, dtype=np.int64)
    total = 0
    for e in range(eptr.shape[0] - 1):
        for q in range(eptr[e], eptr[e + 1]):
            b = part[epin[q]]
            if mark[b] != e:
                mark[b] = e
                total += 1
        if eptr[e + 1] > eptr[e]:
            total -= 1
    return total


@njit(cache=True, nogil=True)
def _lowest_bit(word):
    low = word & (~word + np.uint64(1))
    return _DEBRUIJN_INDEX[np.int64((low * _DEBRUIJN) >> np.uint64(58))]


@njit(cache=True, nogil=True)
def _pin_counts(eptr, epin, part, k):
    """Each net's pins per block (int32[nets, k]) and the blocks it connects, a bit per
    block (uint64[nets, words])."""
    ne = eptr.shape[0] - 1
    phi = np.zeros((ne, k), dtype=np.int32)
    conn = np.zeros((ne, (k + 63) // 64), dtype=np.uint64)
    one = np.uint64(1)
    for e in range(ne):
        for q in range(eptr[e], eptr[e + 1]):
            b = part[epin[q]]
            phi[e, b] += 1
            conn[e, b >> 6] |= one << np.uint64(b & 63)
    return phi, conn


@njit(cache=True, nogil=True)
def _move_tables(eptr, epin, part, k):
    """`_pin_counts` and the two scratch arrays of `_best_move` (a count per block, zero,
    and the blocks touched): ``(phi, conn, aff, touched)``."""
    phi, conn = _pin_counts(eptr, epin, part, k)
    return phi, conn, np.zeros(k, dtype=np.int64), np.empty(k, dtype=np.int64)


@njit(cache=True, nogil=True)
def _queue(nn):
    """An empty max-heap for `runtime.gain_kernels.heap_push` and `heap_pop`, room for four
    entries per node (and 16): ``(cap, keys, nodes)``."""
    cap = 4 * nn + 16
    return cap, np.empty(cap, dtype=np.int64), np.empty(cap, dtype=np.int64)


#: the gain below every real one (a node's best move when any move is taken)
_NO_GAIN = -(1 << 62)


@helper
def _benefit(u, nptr, nnet, eptr, phi, conn, part):
    """``(benefit, deg)`` of node ``u``: its nets (of two pins or more) that a move out of
    its block disconnects from it (``u`` their only pin there, another pin elsewhere), and
    its nets of two pins or more. A move to a block none of these nets connects gains
    ``benefit - deg``."""
    words = conn.shape[1]
    one = np.uint64(1)
    a = part[u]
    deg = 0
    benefit = 0
    mine = one << np.uint64(a & 63)
    for j in range(nptr[u], nptr[u + 1]):
        e = nnet[j]
        if eptr[e + 1] - eptr[e] < 2:
            continue  # a net of one pin never changes the objective
        deg += 1
        inside = True  # pins in block a alone (then at least two of them)
        for wd in range(words):
            if conn[e, wd] != (mine if wd == a >> 6 else np.uint64(0)):
                inside = False
                break
        if not inside and phi[e, a] == 1:
            benefit += 1
    return benefit, deg


@helper
def _best_move(u, nptr, nnet, eptr, phi, conn, part, c, load, bound, aff, touched,
               positive):
    """``(gain, block)``: node ``u``'s move that lowers the objective most (ties: the
    lowest block) among the blocks its nets connect, within ``bound``; block -1 where there
    is none (with ``positive``: none that gains). The gain to block b is the nets ``u``
    alone holds in its block less its nets (of two pins or more) without a pin in b."""
    words = conn.shape[1]
    one = np.uint64(1)
    a = part[u]
    benefit, deg = _benefit(u, nptr, nnet, eptr, phi, conn, part)
    if positive and benefit == 0:
        return 0, -1  # no move gains more than the benefit
    nt = 0
    for j in range(nptr[u], nptr[u + 1]):
        e = nnet[j]
        for wd in range(words):
            word = conn[e, wd]
            while word != 0:
                b = wd * 64 + _lowest_bit(word)
                word &= word - one
                if b == a:
                    continue
                if aff[b] == 0:
                    touched[nt] = b
                    nt += 1
                aff[b] += 1
    best = -1
    gain = 0 if positive else _NO_GAIN
    for t in range(nt):
        b = touched[t]
        g = benefit - (deg - aff[b])
        if (g > gain or (g == gain and best >= 0 and b < best)) and \
                load[b] + c[u] <= bound[b]:
            best = b
            gain = g
        aff[b] = 0
    return gain, best


@helper
def _move(u, b, nptr, nnet, phi, conn, part, c, load):
    """Node ``u`` to block ``b``: pin counts, connectivity bits, loads and ``part``."""
    one = np.uint64(1)
    a = part[u]
    for j in range(nptr[u], nptr[u + 1]):
        e = nnet[j]
        phi[e, a] -= 1
        if phi[e, a] == 0:
            conn[e, a >> 6] &= ~(one << np.uint64(a & 63))
        phi[e, b] += 1
        if phi[e, b] == 1:
            conn[e, b >> 6] |= one << np.uint64(b & 63)
    load[a] -= c[u]
    load[b] += c[u]
    part[u] = b


@njit(cache=True, nogil=True)
def label_propagation(nptr, nnet, eptr, epin, c, part, load, bound, k, order, rounds):
    """Rounds of moves of single nodes, in ``order``, to the block that lowers the
    objective most (ties: the lowest block), where that block stays within ``bound``;
    until a round moves nothing or ``rounds`` rounds. The first round visits every node;
    a node is visited again only once a node that shares a net with it has moved since
    its last visit (in the same round where it comes later in ``order``). ``part`` and
    ``load`` are updated. Returns ``(moves, gain)``: the nodes moved and the objective
    taken off."""
    phi, conn, aff, touched = _move_tables(eptr, epin, part, k)
    active = np.ones(c.shape[0], dtype=np.bool_)
    moves = 0
    gain_total = 0
    for _ in range(rounds):
        moved = 0
        for i in range(order.shape[0]):
            u = order[i]
            if not active[u]:
                continue
            active[u] = False
            gain, b = _best_move(u, nptr, nnet, eptr, phi, conn, part, c, load, bound, aff,
                                 touched, True)
            if b < 0:
                continue
            for j in range(nptr[u], nptr[u + 1]):
                e = nnet[j]
                for q in range(eptr[e], eptr[e + 1]):
                    active[epin[q]] = True
            active[u] = False
            _move(u, b, nptr, nnet, phi, conn, part, c, load)
            moved += 1
            gain_total += gain
        moves += moved
        if moved == 0:
            break
    return moves, gain_total


@njit(cache=True, nogil=True)
def fm(nptr, nnet, eptr, epin, c, part, load, bound, k, order, limit, max_net, budget,
       stall=-1):
    """Localised searches of single-node moves that may lose: from each node of
    ``order`` not yet moved that has a move within ``bound``, a search takes the node of
    highest gain off its queue (a gain found stale is recomputed and queued again), moves
    it to its best block (`_best_move`, losing moves allowed) and locks it, and queues the
    unlocked pins of its nets of at most ``max_net`` pins; it ends ``limit`` moves past
    its best prefix, or with its queue, and undoes the moves after that prefix (their
    nodes unlocked). No search starts once ``budget`` moves were tried, nor after
    ``stall`` searches in a row that kept no move (-1: no such limit). ``part`` and
    ``load`` are updated. Returns ``(kept, gain, tried)``."""
    nn = c.shape[0]
    phi, conn, aff, touched = _move_tables(eptr, epin, part, k)
    locked = np.zeros(nn, dtype=np.bool_)
    queued = np.full(nn, -1, dtype=np.int64)
    cap, hkey, hnode = _queue(nn)
    log_node = np.empty(nn, dtype=np.int64)
    log_from = np.empty(nn, dtype=np.int64)
    kept = 0
    gain_total = 0
    tried = 0
    idle = 0
    for i in range(order.shape[0]):
        if tried >= budget or idle == stall:
            break  # no search starts any more
        s = order[i]
        if locked[s]:
            continue
        gain, b = _best_move(s, nptr, nnet, eptr, phi, conn, part, c, load, bound, aff,
                             touched, False)
        if b < 0:
            continue
        size = heap_push(hkey, hnode, 0, gain, s)
        queued[s] = i
        moved = 0
        total = 0
        best_total = 0
        best_len = 0
        while size > 0 and moved - best_len < limit:
            key, u, size = heap_pop(hkey, hnode, size)
            if locked[u]:
                continue
            gain, b = _best_move(u, nptr, nnet, eptr, phi, conn, part, c, load, bound, aff,
                                 touched, False)
            if b < 0:
                continue
            if gain != key:  # stale: queued again with its gain now
                if size < cap:
                    size = heap_push(hkey, hnode, size, gain, u)
                continue
            log_node[moved] = u
            log_from[moved] = part[u]
            _move(u, b, nptr, nnet, phi, conn, part, c, load)
            locked[u] = True
            moved += 1
            tried += 1
            total += gain
            if total > best_total:
                best_total = total
                best_len = moved
            for j in range(nptr[u], nptr[u + 1]):
                e = nnet[j]
                if eptr[e + 1] - eptr[e] > max_net:
                    continue
                for q in range(eptr[e], eptr[e + 1]):
                    v = epin[q]
                    if locked[v] or queued[v] == i:
                        continue
                    queued[v] = i
                    gain, b = _best_move(v, nptr, nnet, eptr, phi, conn, part, c, load,
                                         bound, aff, touched, False)
                    if b >= 0 and size < cap:
                        size = heap_push(hkey, hnode, size, gain, v)
        for t in range(moved - 1, best_len - 1, -1):  # undo past the best prefix
            u = log_node[t]
            _move(u, log_from[t], nptr, nnet, phi, conn, part, c, load)
            locked[u] = False
        kept += best_len
        gain_total += best_total
        idle = 0 if best_len > 0 else idle + 1
    return kept, gain_total, tried


@helper
def _clique_row(u, nptr, nnet, eptr, epin, max_net, scale, acc, touched):
    """Node ``u``'s neighbours in `clique_graph` into ``touched`` (their weights in
    ``acc``); returns how many."""
    nt = 0
    for j in range(nptr[u], nptr[u + 1]):
        e = nnet[j]
        size = eptr[e + 1] - eptr[e]
        if size < 2 or size > max_net:
            continue
        w = max(1, scale // (size - 1))
        for q in range(eptr[e], eptr[e + 1]):
            v = epin[q]
            if v == u:
                continue
            if acc[v] == 0:
                touched[nt] = v
                nt += 1
            acc[v] += w
    return nt


@njit(cache=True, nogil=True)
def clique_degrees(nptr, nnet, eptr, epin, max_net, scale):
    """The row pointers (int64[nodes + 1]) of `clique_fill`'s graph."""
    nn = nptr.shape[0] - 1
    acc = np.zeros(nn, dtype=np.int64)
    touched = np.empty(nn, dtype=np.int64)
    xadj = np.zeros(nn + 1, dtype=np.int64)
    for u in range(nn):
        nt = _clique_row(u, nptr, nnet, eptr, epin, max_net, scale, acc, touched)
        for t in range(nt):
            acc[touched[t]] = 0
        xadj[u + 1] = xadj[u] + nt
    return xadj


@njit(cache=True, nogil=True)
def clique_fill(nptr, nnet, eptr, epin, max_net, scale, xadj):
    """The clique expansion of a level as a symmetric graph in CSR (``adjncy``, ``adjwgt``,
    int64, rows of ``xadj`` from `clique_degrees`): two nodes that share nets of 2 to
    ``max_net`` pins are joined with weight sum over those nets of ``max(1, scale // (pins
    - 1))``, each row's neighbours in the order the node's nets list them."""
    nn = nptr.shape[0] - 1
    acc = np.zeros(nn, dtype=np.int64)
    touched = np.empty(nn, dtype=np.int64)
    adjncy = np.empty(xadj[nn], dtype=np.int64)
    adjwgt = np.empty(xadj[nn], dtype=np.int64)
    for u in range(nn):
        nt = _clique_row(u, nptr, nnet, eptr, epin, max_net, scale, acc, touched)
        for t in range(nt):
            v = touched[t]
            adjncy[xadj[u] + t] = v
            adjwgt[xadj[u] + t] = acc[v]
            acc[v] = 0
    return adjncy, adjwgt


#: added to the key of a move `rebalance` takes to a block none of the node's nets
#: connects: such moves come after every other
_FAR = -(1 << 40)


@helper
def _rebalance_move(u, nptr, nnet, eptr, phi, conn, part, c, load, bound, aff, touched):
    """``(key, gain, block)``: node ``u``'s best move within ``bound`` (`_best_move`, losing
    moves allowed; key = gain), or, where no block its nets connect has room, to the
    lightest block with room (ties: the lowest; gain ``benefit - deg``, `_benefit`; key
    `_FAR` + gain); block -1 where no block has room."""
    gain, b = _best_move(u, nptr, nnet, eptr, phi, conn, part, c, load, bound, aff, touched,
                         False)
    if b >= 0:
        return gain, gain, b
    a = part[u]
    for t in range(load.shape[0]):
        if t != a and load[t] + c[u] <= bound[t] and (b < 0 or load[t] < load[b]):
            b = t
    benefit, deg = _benefit(u, nptr, nnet, eptr, phi, conn, part)
    return _FAR + benefit - deg, benefit - deg, b


@njit(cache=True, nogil=True)
def rebalance(nptr, nnet, eptr, epin, c, part, load, bound, k):
    """Moves nodes out of the blocks above ``bound`` until none is or no move is left: each
    time the node of such a block whose move within the bound raises the objective least
    (`_rebalance_move`; a queued key found stale is recomputed and queued again). ``part``
    and ``load`` are updated. Returns ``(moves, gain)``: the nodes moved and the objective
    taken off (negative where the moves cost)."""
    over = False
    for b in range(k):
        over = over or load[b] > bound[b]
    if not over:  # nothing to do: no tables built
        return 0, 0
    nn = c.shape[0]
    phi, conn, aff, touched = _move_tables(eptr, epin, part, k)
    cap, hkey, hnode = _queue(nn)
    size = 0
    for u in range(nn):
        if load[part[u]] > bound[part[u]]:
            key, _, b = _rebalance_move(u, nptr, nnet, eptr, phi, conn, part, c, load, bound,
                                        aff, touched)
            if b >= 0 and size < cap:
                size = heap_push(hkey, hnode, size, key, u)
    moves = 0
    gain_total = 0
    while size > 0:
        key, u, size = heap_pop(hkey, hnode, size)
        a = part[u]
        if load[a] <= bound[a]:
            continue
        now, gain, b = _rebalance_move(u, nptr, nnet, eptr, phi, conn, part, c, load, bound,
                                       aff, touched)
        if b < 0:
            continue
        if now != key:  # stale: queued again with its key now
            if size < cap:
                size = heap_push(hkey, hnode, size, now, u)
            continue
        _move(u, b, nptr, nnet, phi, conn, part, c, load)
        moves += 1
        gain_total += gain
    return moves, gain_total
