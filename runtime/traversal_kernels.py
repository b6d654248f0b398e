"""CPU twins of the load-balanced traversal kernels (Raval et al., 2017).

Every strategy runs the same data-driven relaxation (SSSP; BFS is SSSP with
unit weights): an input worklist of active elements is processed into an
output worklist until it is empty; ``dist[v]`` only ever decreases, so the
result equals Dijkstra's for non-negative weights. The strategies differ in
how the work of one iteration is cut into pieces -- the part a GPU thread
would take -- which these CPU versions walk in order, so that the work
decomposition (and its bookkeeping: scans, offsets, split nodes,
sub-iterations) is executed and tested on every machine:

* BS: one piece per worklist node (all its out-edges);
* EP: the worklist holds edges; a node whose distance improves pushes its
  out-edges, with one reservation per node (work chunking) or one per edge;
* WD: the worklist holds nodes; an inclusive scan of their degrees gives the
  total T, cut into pieces of ``ceil(T / threads)`` consecutive edges that
  may cross node boundaries; a piece finds its first (node, edge) by binary
  search in the scan;
* NS: nodes of degree > MDT were split beforehand into parent + children
  (see `split_nodes`); a parent's improvement is handed to its children;
* HP: sub-iterations in which each remaining node relaxes at most MDT of its
  unprocessed edges; when a sub-worklist is smaller than ``block`` the rest
  of it is done WD-style.

Kernels take arrays and scalars only; counters of the work done are
returned for reporting. None of them is the plain queue BFS of
`ir_graph.bfs_kernels.bfs_distances`: they relax weighted edges (BFS is
their unit-weight case) in the pieces of a work decomposition whose counters
are the point, and `bfs_do` switches to bottom-up steps over the in-edges.
"""

import numpy as np

from vcut_base.jitcache import helper, njit, prange

__all__ = ["sssp_bs", "sssp_ep", "sssp_wd", "sssp_ns", "sssp_hp", "choose_mdt", "split_nodes",
           "bfs_do", "sssp_delta", "symmetric_csr"]


@njit(cache=True)
def _relax(u, j, indices, weights, dist):
    v = indices[j]
    nd = dist[u] + weights[j]
    if nd < dist[v]:
        dist[v] = nd
        return v
    return -1


@helper
def _push(v, it, stamp, nxt, nsize):
    """Append ``v`` (if >= 0) to the output worklist once per iteration ``it``."""
    if v >= 0 and stamp[v] != it:
        stamp[v] = it
        nxt[nsize] = v
        return nsize + 1
    return nsize


@njit(cache=True)
def _worklists(n, source, dist):
    """Input and output node worklists, the per-iteration push stamps, and the
    source placed in the input worklist at distance 0."""
    wl = np.empty(n, dtype=np.int64)
    nxt = np.empty(n, dtype=np.int64)
    stamp = np.full(n, -1, dtype=np.int64)
    dist[source] = 0
    wl[0] = source
    return wl, nxt, stamp


@njit(cache=True)
def sssp_bs(indptr, indices, weights, source, dist):
    """Node-based: one piece per worklist node. Returns (iterations, edges relaxed)."""
    n = indptr.shape[0] - 1
    wl, nxt, stamp = _worklists(n, source, dist)
    size = 1
    it = 0
    work = 0
    while size > 0:
        nsize = 0
        for k in range(size):
            u = wl[k]
            for j in range(indptr[u], indptr[u + 1]):
                work += 1
                nsize = _push(_relax(u, j, indices, weights, dist), it, stamp, nxt, nsize)
        wl, nxt = nxt, wl
        size = nsize
        it += 1
    return it, work


@njit(cache=True)
def sssp_ep(indptr, indices, weights, source, dist, chunking):
    """Edge-based: the worklist holds edge ids (CSR positions).

    Returns (iterations, edges relaxed, reservations): a reservation is one
    atomic push on a GPU -- one per pushing node with chunking, one per edge
    without.
    """
    n = indptr.shape[0] - 1
    m = indices.shape[0]
    cap = max(m, 1)
    wl = np.empty(cap, dtype=np.int64)
    stamp = np.full(n, -1, dtype=np.int64)
    dist[source] = 0
    size = 0
    for j in range(indptr[source], indptr[source + 1]):
        wl[size] = j
        size += 1
    src_of = np.empty(cap, dtype=np.int64)
    for u in range(n):
        for j in range(indptr[u], indptr[u + 1]):
            src_of[j] = u
    it = 0
    work = 0
    reservations = 0
    while size > 0:
        nxt = np.empty(cap, dtype=np.int64)
        nsize = 0
        for k in range(size):
            j = wl[k]
            work += 1
            v = _relax(src_of[j], j, indices, weights, dist)
            if v >= 0 and stamp[v] != it:
                stamp[v] = it
                d = indptr[v + 1] - indptr[v]
                if nsize + d > nxt.shape[0]:
                    grown = np.empty(2 * (nsize + d), dtype=np.int64)
                    for i in range(nsize):  # a loop: a slice copy takes ~1 s to compile
                        grown[i] = nxt[i]
                    nxt = grown
                if chunking:
                    reservations += 1
                else:
                    reservations += d
                for q in range(d):
                    nxt[nsize + q] = indptr[v] + q
                nsize += d
        wl = nxt
        size = nsize
        it += 1
    return it, work, reservations


@njit(cache=True)
def _wd_iteration(indptr, indices, weights, dist, wl, size, threads, it, stamp, nxt):
    """One WD iteration over the node worklist; returns (new size, edges, pieces)."""
    scan = np.empty(size, dtype=np.int64)
    total = 0
    for k in range(size):
        u = wl[k]
        total += indptr[u + 1] - indptr[u]
        scan[k] = total  # inclusive
    if total == 0:
        return 0, 0, 0
    per = (total + threads - 1) // threads
    nsize = 0
    pieces = 0
    start = 0
    while start < total:
        pieces += 1
        stop = min(start + per, total)
        # find_offsets: first node whose inclusive scan exceeds `start`
        k = np.searchsorted(scan, start, side="right")
        e = start
        while e < stop:
            u = wl[k]
            base = scan[k] - (indptr[u + 1] - indptr[u])
            j = indptr[u] + (e - base)
            upto = min(stop, scan[k])
            while e < upto:
                nsize = _push(_relax(u, j, indices, weights, dist), it, stamp, nxt, nsize)
                e += 1
                j += 1
            k += 1
        start = stop
    return nsize, total, pieces


@njit(cache=True)
def sssp_wd(indptr, indices, weights, source, dist, threads):
    """Workload decomposition. Returns (iterations, edges relaxed, pieces)."""
    n = indptr.shape[0] - 1
    wl, nxt, stamp = _worklists(n, source, dist)
    size = 1
    it = 0
    work = 0
    pieces = 0
    while size > 0:
        size, w, p = _wd_iteration(indptr, indices, weights, dist, wl, size, threads, it, stamp, nxt)
        work += w
        pieces += p
        wl, nxt = nxt, wl
        it += 1
    return it, work, pieces


@njit(cache=True)
def choose_mdt(degrees, bins):
    """MDT from a degree histogram (Raval et al.).

    Bins of width ``maxdeg / bins`` numbered from 1: a vertex of degree
    ``d >= 1`` falls in bin ``ceil(d * bins / maxdeg)`` (vertices without
    edges do no work and are left out). With ``i`` the tallest bin,
    ``MDT = floor(i / bins * maxdeg)``, at least 1.
    """
    maxd = 0
    for d in degrees:
        if d > maxd:
            maxd = d
    if maxd == 0:
        return 1
    hist = np.zeros(bins + 1, dtype=np.int64)
    for d in degrees:
        if d > 0:
            b = (d * bins + maxd - 1) // maxd
            hist[b] += 1
    best = 1
    for b in range(2, bins + 1):
        if hist[b] > hist[best]:
            best = b
    return max(1, (best * maxd) // bins)


@njit(cache=True)
def split_nodes(indptr, indices, weights, mdt):
    """Node splitting: every node of degree d > mdt becomes ceil(d / mdt) nodes.

    The parent keeps its id and the first chunk of its out-edges; children
    are appended after the original nodes and take the following chunks.
    Incoming edges stay on the parent. Returns (indptr', indices', weights',
    child_ptr, children) where the children of parent p are
    ``children[child_ptr[p]:child_ptr[p + 1]]``.
    """
    n = indptr.shape[0] - 1
    extra = 0
    for u in range(n):
        d = indptr[u + 1] - indptr[u]
        if d > mdt:
            extra += (d + mdt - 1) // mdt - 1
    n2 = n + extra
    child_ptr = np.zeros(n + 1, dtype=np.int64)
    for u in range(n):
        d = indptr[u + 1] - indptr[u]
        child_ptr[u + 1] = child_ptr[u] + ((d + mdt - 1) // mdt - 1 if d > mdt else 0)
    children = np.empty(extra, dtype=np.int64)
    for q in range(extra):
        children[q] = n + q
    deg2 = np.zeros(n2, dtype=np.int64)
    for u in range(n):
        d = indptr[u + 1] - indptr[u]
        if d > mdt:
            deg2[u] = mdt
            left = d - mdt
            for q in range(child_ptr[u], child_ptr[u + 1]):
                take = min(mdt, left)
                deg2[children[q]] = take
                left -= take
        else:
            deg2[u] = d
    indptr2 = np.zeros(n2 + 1, dtype=np.int64)
    for u in range(n2):
        indptr2[u + 1] = indptr2[u] + deg2[u]
    indices2 = np.empty(indices.shape[0], dtype=indices.dtype)
    weights2 = np.empty(weights.shape[0], dtype=weights.dtype)
    for u in range(n):
        j = indptr[u]
        owners_start = child_ptr[u]
        for t in range(-1, child_ptr[u + 1] - owners_start):
            owner = u if t < 0 else children[owners_start + t]
            for q in range(indptr2[owner], indptr2[owner + 1]):
                indices2[q] = indices[j]
                weights2[q] = weights[j]
                j += 1
    return indptr2, indices2, weights2, child_ptr, children


@njit(cache=True)
def sssp_ns(indptr2, indices2, weights2, child_ptr, children, n, source, dist2):
    """Node-based over a split graph; parents hand improvements to their children.

    ``dist2`` has one entry per node of the split graph. Returns (iterations,
    edges relaxed).
    """
    n2 = indptr2.shape[0] - 1
    wl = np.empty(n2, dtype=np.int64)
    nxt = np.empty(n2, dtype=np.int64)
    stamp = np.full(n2, -1, dtype=np.int64)
    dist2[source] = 0
    size = 0
    wl[size] = source
    size += 1
    if source < n:
        for q in range(child_ptr[source], child_ptr[source + 1]):
            dist2[children[q]] = 0
            wl[size] = children[q]
            size += 1
    it = 0
    work = 0
    while size > 0:
        nsize = 0
        for k in range(size):
            u = wl[k]
            for j in range(indptr2[u], indptr2[u + 1]):
                work += 1
                v = _relax(u, j, indices2, weights2, dist2)
                if v >= 0:
                    if stamp[v] != it:
                        stamp[v] = it
                        nxt[nsize] = v
                        nsize += 1
                    # v is always an original node (incoming edges stay on parents)
                    for q in range(child_ptr[v], child_ptr[v + 1]):
                        c = children[q]
                        if dist2[v] < dist2[c]:
                            dist2[c] = dist2[v]
                            if stamp[c] != it:
                                stamp[c] = it
                                nxt[nsize] = c
                                nsize += 1
        wl, nxt = nxt, wl
        size = nsize
        it += 1
    return it, work


@njit(cache=True)
def sssp_hp(indptr, indices, weights, source, dist, mdt, block, threads):
    """Hierarchical processing with the WD switch for small sub-worklists.

    Returns (iterations, sub-iterations, edges relaxed).
    """
    n = indptr.shape[0] - 1
    wl, nxt, stamp = _worklists(n, source, dist)
    sub = np.empty(n, dtype=np.int64)
    sub2 = np.empty(n, dtype=np.int64)
    done = np.zeros(n, dtype=np.int64)  # edges of a node processed this iteration
    size = 1
    it = 0
    subits = 0
    work = 0
    while size > 0:
        nsize = 0
        for k in range(size):
            sub[k] = wl[k]
            done[wl[k]] = 0
        ssize = size
        while ssize > 0:
            subits += 1
            if ssize < block:
                # WD over the remaining edges of the remaining nodes
                for k in range(ssize):
                    u = sub[k]
                    for j in range(indptr[u] + done[u], indptr[u + 1]):
                        work += 1
                        nsize = _push(_relax(u, j, indices, weights, dist), it, stamp, nxt, nsize)
                    done[u] = indptr[u + 1] - indptr[u]
                ssize = 0
                break
            s2 = 0
            for k in range(ssize):
                u = sub[k]
                lo = indptr[u] + done[u]
                hi = min(indptr[u + 1], lo + mdt)
                for j in range(lo, hi):
                    work += 1
                    nsize = _push(_relax(u, j, indices, weights, dist), it, stamp, nxt, nsize)
                done[u] += hi - lo
                if indptr[u] + done[u] < indptr[u + 1]:
                    sub2[s2] = u
                    s2 += 1
            sub, sub2 = sub2, sub
            ssize = s2
        wl, nxt = nxt, wl
        size = nsize
        it += 1
    return it, subits, work


@njit(cache=True)
def out_csr(src, dst, weight, n, both):
    """Out-edge CSR by counting sort (edges of a vertex in input order).

    With ``both`` every edge is also added reversed (an undirected graph).
    Returns ``(indptr, indices, weights)``.
    """
    m = src.shape[0]
    total = 2 * m if both else m
    indptr = np.zeros(n + 1, dtype=np.int64)
    for e in range(m):
        indptr[src[e] + 1] += 1
        if both:
            indptr[dst[e] + 1] += 1
    for v in range(n):
        indptr[v + 1] += indptr[v]
    pos = indptr[:-1].copy()
    indices = np.empty(total, dtype=np.int64)
    weights = np.empty(total, dtype=np.float64)
    for e in range(m):
        u = src[e]
        indices[pos[u]] = dst[e]
        weights[pos[u]] = weight[e]
        pos[u] += 1
    if both:
        for e in range(m):
            v = dst[e]
            indices[pos[v]] = src[e]
            weights[pos[v]] = weight[e]
            pos[v] += 1
    return indptr, indices, weights


@njit(parallel=True, cache=True)
def symmetric_csr(n, eu, ev, threads):
    """Symmetric adjacency of the pairs ``(eu[r], ev[r])`` (no self-loops):
    ``(indptr, adj, erank)``, ``erank`` the pair index of each entry, every vertex's
    entries in pair order (so pairs sorted by (eu, ev) with eu < ev give rows sorted
    by neighbour: a row gets its lower neighbours before its higher ones). A counting sort split into pieces of
    consecutive ranks, one per thread (per-piece degree counts, offsets vertex-major and
    piece-minor, so each piece scatters its ranks in order: stable, linear); at most
    2m / n pieces, so the counts never take more memory than the adjacency."""
    m = len(eu)
    pieces = max(1, min(threads, m // 65536, (2 * m) // max(n, 1)))
    step = (m + pieces - 1) // pieces
    count = np.zeros((pieces, n), dtype=np.int64)
    for p in prange(pieces):
        for r in range(p * step, min(m, (p + 1) * step)):
            count[p, eu[r]] += 1
            count[p, ev[r]] += 1
    indptr = np.zeros(n + 1, dtype=np.int64)
    base = 0
    for v in range(n):
        indptr[v] = base
        for p in range(pieces):
            c = count[p, v]
            count[p, v] = base
            base += c
    indptr[n] = base
    adj = np.empty(2 * m, dtype=eu.dtype)
    erank = np.empty(2 * m, dtype=eu.dtype)
    for p in prange(pieces):
        for r in range(p * step, min(m, (p + 1) * step)):
            a = eu[r]
            b = ev[r]
            j = count[p, a]
            adj[j] = b
            erank[j] = r
            count[p, a] = j + 1
            j = count[p, b]
            adj[j] = a
            erank[j] = r
            count[p, b] = j + 1
    return indptr, adj, erank


@njit(cache=True)
def segmented_reduce(values, ptr, is_min):
    """Min (inf when empty) or sum of every CSR segment ``values[ptr[s]:ptr[s + 1]]``."""
    out = np.empty(ptr.shape[0] - 1)
    for s in range(ptr.shape[0] - 1):
        acc = np.inf if is_min else 0.0
        for j in range(ptr[s], ptr[s + 1]):
            if is_min:
                if values[j] < acc:
                    acc = values[j]
            else:
                acc += values[j]
        out[s] = acc
    return out


# -- direction-optimising BFS (Beamer, Asanović and Patterson, SC 2012) -----------
@njit(cache=True)
def _bottom_up(rindptr, rindices, level, depth, lo, hi, flag):
    """Each unvisited vertex of ``lo .. hi - 1`` looks for a parent at ``depth``; returns
    (vertices found, edges examined). Found vertices get ``depth + 1`` and ``flag`` 1."""
    found = 0
    work = 0
    for v in range(lo, hi):
        if level[v] >= 0:
            continue
        for j in range(rindptr[v], rindptr[v + 1]):
            work += 1
            if level[rindices[j]] == depth:
                level[v] = depth + 1
                flag[v] = 1
                found += 1
                break
    return found, work


@njit(cache=True, parallel=True)
def _bottom_up_parallel(rindptr, rindices, level, depth, flag, pieces):
    """`_bottom_up` over ``pieces`` vertex ranges in parallel (each vertex writes only
    its own entries, and reads levels of ``depth``, which no one writes in the step)."""
    n = level.shape[0]
    found = np.zeros(pieces, dtype=np.int64)
    work = np.zeros(pieces, dtype=np.int64)
    for t in prange(pieces):
        lo = t * n // pieces
        hi = (t + 1) * n // pieces
        found[t], work[t] = _bottom_up(rindptr, rindices, level, depth, lo, hi, flag)
    return found.sum(), work.sum()


@njit(cache=True)
def bfs_do(indptr, indices, rindptr, rindices, source, level, alpha, beta, pieces):
    """Direction-optimising BFS: hop levels into ``level`` (int64, -1 unreached).

    Top-down steps push from the frontier along out-edges (``indptr``);
    bottom-up steps have every unvisited vertex scan its in-edges
    (``rindptr``) for a parent in the frontier and stop at the first. The
    switch rule is the paper's: go bottom-up when the frontier's out-edges
    exceed the unexplored vertices' edges / ``alpha`` (14) and the frontier
    is growing; come back top-down when the frontier falls below n / ``beta``
    (24) and is shrinking. ``pieces`` > 1 runs bottom-up steps on that many
    vertex ranges in parallel (numba threads). Returns (levels, edges
    examined, bottom-up steps).
    """
    n = indptr.shape[0] - 1
    front = np.empty(n, dtype=np.int64)
    nxt = np.empty(n, dtype=np.int64)
    flag = np.zeros(n, dtype=np.uint8)
    level[:] = -1
    level[source] = 0
    front[0] = source
    size = 1
    m_unexplored = rindptr[n] - (rindptr[source + 1] - rindptr[source])
    depth = 0
    work = 0
    bottom_steps = 0
    bottom = False
    prev = 0
    while size > 0:
        m_front = 0
        for k in range(size):
            u = front[k]
            m_front += indptr[u + 1] - indptr[u]
        if not bottom:
            bottom = m_front > m_unexplored / alpha and size > prev
        else:
            bottom = not (size < n / beta and size < prev)
        prev = size
        nsize = 0
        if bottom:
            bottom_steps += 1
            if pieces > 1:
                found, w = _bottom_up_parallel(rindptr, rindices, level, depth, flag, pieces)
            else:
                found, w = _bottom_up(rindptr, rindices, level, depth, 0, n, flag)
            work += w
            for v in range(n):  # the new frontier from the flags, in vertex order
                if flag[v]:
                    flag[v] = 0
                    nxt[nsize] = v
                    nsize += 1
        else:
            for k in range(size):
                u = front[k]
                for j in range(indptr[u], indptr[u + 1]):
                    work += 1
                    v = indices[j]
                    if level[v] < 0:
                        level[v] = depth + 1
                        nxt[nsize] = v
                        nsize += 1
        for k in range(nsize):
            v = nxt[k]
            m_unexplored -= rindptr[v + 1] - rindptr[v]
        front, nxt = nxt, front
        size = nsize
        depth += 1
    return depth, work, bottom_steps


# -- delta-stepping SSSP, near/far form (Meyer and Sanders 2003; Davidson et al. 2014) --
@njit(cache=True)
def sssp_delta(indptr, indices, weights, source, dist, delta):
    """Delta-stepping SSSP with a near worklist and a far pile.

    The near worklist holds vertices whose distance is below the threshold;
    relaxing them pushes improved vertices to the near worklist (below the
    threshold) or to the far pile. When the near worklist empties, the
    threshold moves up by ``delta`` (straight past empty buckets: to the
    bucket of the smallest far distance) and the far pile is split: its live
    entries under the new threshold become the near worklist, stale ones
    (improved since, or already settled) are dropped. A vertex is processed
    again only when its distance has dropped since it last was. Returns
    (iterations, edges relaxed, threshold moves).
    """
    n = indptr.shape[0] - 1
    near = np.empty(n, dtype=np.int64)
    nxt = np.empty(n, dtype=np.int64)
    far = np.empty(max(n, 16), dtype=np.int64)
    stamp = np.full(n, -(1 << 62), dtype=np.int64)
    done = np.full(n, np.inf)  # the distance each vertex was last processed at
    dist[source] = 0.0
    near[0] = source
    size, nfar = 1, 0
    threshold = delta
    it = 0
    work = 0
    moves = 0
    while size > 0 or nfar > 0:
        while size > 0:
            nsize = 0
            for k in range(size):
                u = near[k]
                du = dist[u]
                if du >= done[u]:
                    continue  # processed at this distance already
                done[u] = du
                for j in range(indptr[u], indptr[u + 1]):
                    work += 1
                    v = indices[j]
                    nd = du + weights[j]
                    if nd < dist[v]:
                        dist[v] = nd
                        if nd < threshold:
                            if stamp[v] != it:
                                stamp[v] = it
                                nxt[nsize] = v
                                nsize += 1
                        else:
                            if nfar == far.shape[0]:
                                grown = np.empty(2 * nfar, dtype=np.int64)
                                for i in range(nfar):  # a loop, as above
                                    grown[i] = far[i]
                                far = grown
                            far[nfar] = v
                            nfar += 1
            near, nxt = nxt, near
            size = nsize
            it += 1
        if nfar == 0:
            break
        lowest = np.inf  # the smallest live far distance: skip empty buckets
        for k in range(nfar):
            v = far[k]
            if dist[v] < done[v] and dist[v] < lowest:
                lowest = dist[v]
        if lowest == np.inf:
            break  # every far entry was stale
        threshold = max(threshold + delta, (np.floor(lowest / delta) + 1.0) * delta)
        moves += 1
        keep = 0
        for k in range(nfar):
            v = far[k]
            if dist[v] >= done[v]:
                continue  # settled at this distance already: stale
            if dist[v] < threshold:
                if stamp[v] != -1 - moves:  # split stamps are negative: the next
                    stamp[v] = -1 - moves   # iteration's pushes (stamp it) still go through
                    near[size] = v
                    size += 1
            else:
                far[keep] = v
                keep += 1
        nfar = keep
    return it, work, moves
