"""Numba kernel of the cache model: a two-level LRU cache over an access stream.

`ir_graph.build.CacheModel` gives it the geometry of a machine.
"""

import numpy as np

from vcut_base.jitcache import helper, njit

__all__ = ["simulate_caches"]


@helper
def _touch(tag, use, s, b, clock):
    """Look block ``b`` up in set ``s``; on a hit mark it used at ``clock``."""
    for w in range(tag.shape[1]):
        if tag[s, w] == b:
            use[s, w] = clock
            return True
    return False


@helper
def _fill(tag, use, s, b, clock):
    """Put block ``b`` into set ``s`` in place of the least recently used way."""
    victim = 0
    for w in range(1, tag.shape[1]):
        if use[s, w] < use[s, victim]:
            victim = w
    tag[s, victim] = b
    use[s, victim] = clock


@njit(cache=True)
def simulate_caches(addr, size, l1_sets, l1_ways, l2_sets, l2_ways, block, lat_l1, lat_l2,
                    lat_mem):
    """Latency of each access under a two-level LRU cache (write-allocate).

    Every cache block the access touches is looked up in L1, then L2, then
    memory; a miss fills the block into the levels that missed (evicting the
    least recently used way). The access's latency is the sum over its blocks.

    Parameters
    ----------
    addr, size : uint64[M]
        Accesses in execution order.
    l1_sets, l1_ways, l2_sets, l2_ways, block : int
        Geometry (sets and block size powers of two).
    lat_l1, lat_l2, lat_mem : float
        Cycles for a hit in L1, a hit in L2, and a memory access.

    Returns
    -------
    lat : float64[M]
    counts : int64[3]
        L1 hits, L2 hits, memory accesses (per block).
    """
    tag1 = np.full((l1_sets, l1_ways), -1, dtype=np.int64)
    use1 = np.zeros((l1_sets, l1_ways), dtype=np.int64)
    tag2 = np.full((l2_sets, l2_ways), -1, dtype=np.int64)
    use2 = np.zeros((l2_sets, l2_ways), dtype=np.int64)
    lat = np.zeros(addr.shape[0], dtype=np.float64)
    counts = np.zeros(3, dtype=np.int64)
    clock = 0
    for k in range(addr.shape[0]):
        if size[k] == 0:
            continue
        first = np.int64(addr[k] // np.uint64(block))
        lastb = np.int64((addr[k] + size[k] - np.uint64(1)) // np.uint64(block))
        total = 0.0
        for b in range(first, lastb + 1):
            clock += 1
            s1 = b % l1_sets
            if _touch(tag1, use1, s1, b, clock):
                total += lat_l1
                counts[0] += 1
                continue
            s2 = b % l2_sets
            if _touch(tag2, use2, s2, b, clock):
                total += lat_l2
                counts[1] += 1
            else:
                _fill(tag2, use2, s2, b, clock)
                total += lat_mem
                counts[2] += 1
            _fill(tag1, use1, s1, b, clock)
        lat[k] = total
    return lat, counts
