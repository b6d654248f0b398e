"""The greedy family's batched stream applied in rounds: the form that runs on a GPU
without the host (`vcut.gpu_greedy.greedy_rounds_gpu`) and its CPU twin
(`greedy_rounds`), which gives the same assignment.

`vcut.greedy_kernels.greedy_batched` decides a batch in parallel but applies it in stream
order, one edge after another, deciding again every edge whose frozen choice would add
a replica (the recheck): a sequential pass a GPU cannot run. Here a batch is applied in
at most ``rounds`` rounds, each a few parallel steps:

1. **decide**: every pending edge decides (`vcut.greedy_kernels.decide_dense`) on the live state;
   it *writes* an endpoint when its cluster is not yet among that endpoint's replicas
   (or when it asks for the least loaded of all);
2. **ready**: an edge that writes nothing is ready (its cluster holds both ends and
   keeps holding them: it is what the recheck would keep); an edge that writes is ready
   when no earlier pending edge of the batch writes either of its endpoints (the first
   writer of each vertex, found by a minimum per vertex); in the last round every
   pending edge is ready;
3. **capacity**: a cluster that the ready edges cannot overfill takes them all; one that
   they could takes them in stream order while its load is under its bound, the others
   ask for the least loaded of all (the sequential stream's rule);
4. **water-fill**: the ready edges that ask for the least loaded of all are spread over
   the clusters in stream order by water-filling (the least loaded cluster first, up to
   a common level; one edge alone goes to the least loaded, ties to the lowest id);
5. **apply**: the ready edges are placed (replica bits, loads, unassigned-edge counts).

Edges that are not ready decide again in the next round on the state the ready ones
left. Every step is a pure function of the state at its start, with integer sums:
loads count weights in integer quanta (`quantize`: the weights themselves when they are
whole numbers), so that sums in any order are exact and the GPU's atomics give the
twin's result. With ``batch = 1`` the one edge decides on the live state, is capacity-
checked and falls back to the least loaded: the sequential stream exactly (integer
weights).
"""

import math

import numpy as np

from vcut_base.jitcache import helper, njit, prange
from vcut_base.progress_kernels import completed

from .greedy_kernels import FULL_TOLERANCE, decide_dense, place

__all__ = ["greedy_rounds", "quantize", "ROUNDS", "NONE"]

#: rounds per batch; the last applies every edge still pending
ROUNDS = 64
#: "no writer" in the per-vertex first-writer array
NONE = np.int64(1) << np.int64(62)
#: loads must stay exact in a float64 ratio: quantised totals stay below 2^52
_TOTAL_BITS = 52


def quantize(weight):
    """``(quanta, shift)``: the edge weights as int64 quanta ``round(w * 2**shift)``
    (`np.ldexp`, so no scale overflows). Whole weights (every unweighted graph) keep
    shift 0; others get the shift that brings the total just below 2^52, so that loads
    are exact integers in a float64 (a weight below a quantum becomes 0). Bounds in
    weight units scale the same way: ``np.ldexp(bound, shift)``."""
    w = np.asarray(weight, dtype=np.float64)
    with np.errstate(over="ignore"):
        total = float(w.sum()) if w.size else 0.0
    if w.size and total < 2.0 ** _TOTAL_BITS and np.all(w == np.floor(w)):
        return w.astype(np.int64), 0
    if not np.isfinite(total):  # the sum overflows: its size from the largest weight
        size = math.log2(float(w.max())) + math.log2(w.size)
    else:
        size = math.log2(total) if total > 0 else 0.0
    shift = _TOTAL_BITS - 1 - math.ceil(size)
    return np.rint(np.ldexp(w, shift)).astype(np.int64), shift


@helper
def _has(A, x, c):
    """Whether cluster ``c`` is among the replicas of ``x``."""
    return (A[x, c // 64] >> np.uint64(c % 64)) & np.uint64(1) != np.uint64(0)


@helper
def _writes(A, u, v, c):
    """Which endpoints edge (u, v) on cluster ``c`` (-1: not yet known) gives a new
    replica: bit 0 for ``u``, bit 1 for ``v``."""
    if c < 0:
        return 3
    b = 0
    if not _has(A, u, c):
        b |= 1
    if not _has(A, v, c):
        b |= 2
    return b


@helper
def _ready(k, u, v, bits, first, last):
    """Whether pending edge ``k`` of the batch applies this round (step 2)."""
    return last or bits == 0 or (first[u] >= k and first[v] >= k)


@helper
def _waterfill(load, cap, total, order, quota):
    """Spread ``total`` quanta over the clusters, least loaded first (``load / cap``, ties
    to the lowest id), up to a common level: ``order`` gets the clusters in that order,
    ``quota`` the cumulative quanta of each position (each position under the level gets
    its whole quanta, then one more each, least loaded first, until the total is met).
    A share within `FULL_TOLERANCE` (relative) below a whole number of quanta counts as
    reaching it, so that the rounding of the capacity fractions cannot decide."""
    p = load.shape[0]
    for c in range(p):  # insertion sort by (ratio, id): c comes after equal ratios
        rc = load[c] / cap[c]
        j = c
        while j > 0 and load[order[j - 1]] / cap[order[j - 1]] > rc:
            order[j] = order[j - 1]
            j -= 1
        order[j] = c
    sum_load = 0
    sum_cap = 0.0
    level = 0.0
    top = p - 1
    for j in range(p):
        c = order[j]
        sum_load += load[c]
        sum_cap += cap[c]
        level = (total + sum_load) / sum_cap
        if j == p - 1:
            top = j
            break
        d = order[j + 1]
        if level <= load[d] / cap[d]:
            top = j
            break
    given = 0
    for j in range(p):
        c = order[j]
        q = 0
        if j <= top:
            # level * cap[c] is exact only to a few ulps (the fractions, their sum and
            # the level are rounded), and a plain floor loses a whole quantum where the
            # share is a whole number: 7 quanta over capacities 1 : 2 : ... : 6 reach level
            # 7, where cluster 2's share 7 * 3/21 = 1 comes out as 0.9999999999999999 with
            # the normalised fractions. So a share that reaches the next whole number
            # within FULL_TOLERANCE gets it (one quantum more at most), as a bound counts
            # as reached within it. A product compared, not added: no FMA on the device.
            x = level * cap[c]
            q = math.floor(x)
            if x * (1.0 + FULL_TOLERANCE) >= q + 1:
                q += 1
            q -= load[c]
            if q < 0:
                q = 0
        quota[j] = q
        given += q
    j = 0
    while given < total:  # what rounding down left: a quantum each from the least loaded
        quota[j if j <= top else 0] += 1
        given += 1
        j += 1
    acc = 0
    for j in range(p):
        acc += quota[j]
        quota[j] = acc


@helper
def _filled(at, order, quota):
    """The cluster of the open edge whose weight starts at ``at`` quanta into the
    round's open edges (the first goes to the least loaded)."""
    if at == 0:
        return order[0]
    p = order.shape[0]
    for j in range(p):
        if quota[j] > at:
            return order[j]
    return order[p - 1]


@njit(cache=True, parallel=True)
def greedy_rounds(src, dst, wq, order, degree, cap, full, rule, out, A, batch, rounds, counter):
    """The batched stream applied in rounds (the module's steps), on the CPU: the
    GPU's assignment exactly. ``wq``: int64 weight quanta (`quantize`); ``full``: each
    cluster's bound in quanta. Returns ``(loads in quanta, edges decided again in
    a later round, rounds run)``; ``counter`` as `greedy_assign`'s, checked once per
    batch."""
    m = order.shape[0]
    n = A.shape[0]
    p = cap.shape[0]
    b = max(1, min(batch, m))
    load = np.zeros(p, dtype=np.int64)
    rem = degree.astype(np.int64)
    first = np.full(n, NONE, dtype=np.int64)
    dec = np.empty(b, dtype=np.int64)
    bits = np.zeros(b, dtype=np.int64)
    state = np.zeros(b, dtype=np.int8)  # 0 pending, 1 ready this round, 2 placed
    hist = np.zeros(p, dtype=np.int64)
    fill_order = np.empty(p, dtype=np.int64)
    quota = np.empty(p, dtype=np.int64)
    redo = 0
    run = 0
    for lo in range(0, m, b):
        counter[0] = lo
        if counter[1] != 0:
            return load, redo, run
        hi = min(m, lo + b)
        cnt = hi - lo
        state[:cnt] = 0
        for r in range(rounds):
            last = r == rounds - 1
            run += 1
            for k in prange(cnt):  # 1. decide
                if state[k] == 0:
                    e = order[lo + k]
                    c = decide_dense(src[e], dst[e], A, load, cap, full, rule, degree, rem)
                    dec[k] = c
                    bits[k] = _writes(A, src[e], dst[e], c)
            for k in range(cnt):  # the first writer of each vertex
                if state[k] == 0:
                    if r > 0:
                        redo += 1
                    e = order[lo + k]
                    if not last and bits[k] & 1 and first[src[e]] == NONE:
                        first[src[e]] = k
                    if not last and bits[k] & 2 and first[dst[e]] == NONE:
                        first[dst[e]] = k
            hist[:] = 0
            for k in range(cnt):  # 2. ready
                if state[k] == 0:
                    e = order[lo + k]
                    if _ready(k, src[e], dst[e], bits[k], first, last):
                        state[k] = 1
                        if dec[k] >= 0:
                            hist[dec[k]] += wq[e]
            for k in range(cnt):
                if state[k] == 0 or state[k] == 1:
                    e = order[lo + k]
                    first[src[e]] = NONE
                    first[dst[e]] = NONE
            for c in range(p):  # 3. capacity
                if load[c] + hist[c] < full[c]:
                    load[c] += hist[c]
                    continue
                s = 0
                for k in range(cnt):
                    if state[k] == 1 and dec[k] == c:
                        e = order[lo + k]
                        if load[c] + s < full[c]:
                            s += wq[e]
                        else:
                            dec[k] = -1
                load[c] += s
            total = 0  # 4. water-fill
            nopen = 0
            for k in range(cnt):
                if state[k] == 1 and dec[k] < 0:
                    total += wq[order[lo + k]]
                    nopen += 1
            if nopen > 0:
                _waterfill(load, cap, total, fill_order, quota)
                at = 0
                for k in range(cnt):
                    if state[k] == 1 and dec[k] < 0:
                        e = order[lo + k]
                        dec[k] = _filled(at, fill_order, quota)
                        at += wq[e]
                        load[dec[k]] += wq[e]
            left = 0
            for k in range(cnt):  # 5. apply
                if state[k] == 1:
                    e = order[lo + k]
                    place(e, src[e], dst[e], dec[k], A, rem, out)
                    state[k] = 2
                elif state[k] == 0:
                    left += 1
            if left == 0:
                break
    completed(counter, m)
    return load, redo, run
