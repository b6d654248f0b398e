"""Numba kernels of the hashing edge partitioners: degree-based hashing (`dbh_assign`,
`dbh_pairs`) and Spark GraphX's partition strategies (`graphx_assign`)."""

import numpy as np

from vcut_base.hashing import mix
from vcut_base.jitcache import helper, njit

__all__ = ["dbh_assign", "dbh_pairs", "graphx_assign", "GRAPHX_1D", "GRAPHX_2D", "GRAPHX_CRVC",
           "GRAPHX_PRIME"]


@njit(cache=True, nogil=True)
def dbh_assign(src, dst, degree, cum_cap, seed, out, lo, hi):
    """Degree-based hashing (Xie et al., NIPS 2014) of edges ``lo .. hi - 1``: hash the
    endpoint of lower degree (ties: the lower id) to a cluster; ``cum_cap`` maps the hash
    to clusters in proportion to their capacities. Ranges apart may run in threads side by
    side (`vcut.cuts.hashing.dbh`)."""
    for e in range(lo, hi):
        out[e] = _dbh_one(src[e], dst[e], degree[src[e]], degree[dst[e]], cum_cap, seed)


@njit(cache=True)
def dbh_pairs(src, dst, du, dv, cum_cap, seed, out):
    """`dbh_assign` with the endpoints' degrees given per edge (``du[e]``, ``dv[e]``):
    a piece of the stream without the whole degree array (`vcut.distributed`)."""
    for e in range(src.shape[0]):
        out[e] = _dbh_one(src[e], dst[e], du[e], dv[e], cum_cap, seed)


@helper
def _dbh_one(u, v, du, dv, cum_cap, seed):
    x = u if (du < dv or (du == dv and u < v)) else v
    h = mix(np.uint64(x) + np.uint64(seed) * np.uint64(0x9E3779B97F4A7C15))
    r = (h >> np.uint64(11)) * (1.0 / 9007199254740992.0)
    return share_of(cum_cap, r)


@helper
def share_of(cum, r):
    """``numpy.searchsorted(cum, r, side="right")`` for a non-decreasing ``cum`` (the
    cumulative capacities less the last): the number of its entries ``<= r``. Started
    from the cluster ``r`` falls in when the shares are equal and walked from there, one
    step or none for equal shares: a binary search's branches, one unpredictable per
    level, took most of a hash cut's time (`dbh_assign` on 129 M edges, 32 clusters:
    9.3 s against 4.0 s)."""
    k = len(cum)
    g = int(r * (k + 1))
    if g > k:  # r * (k + 1) rounded up to k + 1
        g = k
    while g < k and cum[g] <= r:
        g += 1
    while g > 0 and cum[g - 1] > r:
        g -= 1
    return g


#: GraphX's partition strategies (org.apache.spark.graphx.PartitionStrategy).
GRAPHX_1D = 0
GRAPHX_2D = 1
GRAPHX_CRVC = 2
#: The multiplier GraphX mixes vertex ids with.
GRAPHX_PRIME = 1125899906842597


@helper
def _graphx_hash(x):
    """``|x * GRAPHX_PRIME|`` on a wrapping 64-bit integer, as GraphX computes it on a
    Long, as an unsigned value (the product -2**63 counts as 2**63, where Scala's
    ``math.abs`` would leave it negative)."""
    # in unsigned arithmetic, which wraps by definition: a signed product that overflows is
    # undefined to LLVM, which may then fold the sign test away (it did when this function
    # was compiled apart from its caller)
    y = np.uint64(x) * np.uint64(GRAPHX_PRIME)
    if y >= np.uint64(1 << 63):
        return np.uint64(0) - y
    return y


@njit(cache=True)
def graphx_assign(src, dst, p, rule, seed, out):
    """GraphX's hash partitioning of edges into ``p`` parts (equal shares).

    ``GRAPHX_1D`` (EdgePartition1D): the source's hash; ``GRAPHX_2D``
    (EdgePartition2D): a ceil(sqrt(p))-wide grid, the source's hash picks the
    column and the destination's the row (GraphX's rule for a p that is not a
    square: columns of ``ceil(p / side)`` parts, the last one shorter), so a
    vertex has at most 2 ceil(sqrt(p)) replicas; ``GRAPHX_CRVC``
    (CanonicalRandomVertexCut): a hash of the pair ordered (min, max), with
    `mix` and ``seed`` for Scala's tuple hash.
    """
    side = np.int64(np.ceil(np.sqrt(p)))
    while side * side < p:  # floating-point square roots of large squares
        side += 1
    while (side - 1) * (side - 1) >= p:
        side -= 1
    up = np.uint64(p)
    us = np.uint64(side)
    rows = (p + side - 1) // side
    last = p - rows * (side - 1)
    for e in range(src.shape[0]):
        u = src[e]
        v = dst[e]
        if rule == GRAPHX_1D:
            out[e] = np.int64(_graphx_hash(u) % up)
        elif rule == GRAPHX_2D:
            if side * side == p:
                col = np.int64(_graphx_hash(u) % us)
                row = np.int64(_graphx_hash(v) % us)
                out[e] = (col * side + row) % p
            else:
                col = np.int64(_graphx_hash(u) % up) // rows
                inner = rows if col < side - 1 else last
                out[e] = col * rows + np.int64(_graphx_hash(v) % np.uint64(inner))
        else:
            a = min(u, v)
            b = max(u, v)
            h = mix(np.uint64(a) * np.uint64(0x9E3779B97F4A7C15) ^
                     mix(np.uint64(b) + np.uint64(seed) * np.uint64(0xD1B54A32D192ED03)))
            out[e] = np.int64(h % up)
