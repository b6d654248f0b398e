"""The gain bookkeeping of the local searches over a partition (numba): the touched-list
gather of a vertex's edge weight per adjacent part, and the binary max-heap of (gain, vertex).

One copy for every caller: the multilevel edge cut's FM, greedy and balance passes
(`runtime.multilevel.refinement_kernels`) and its initial bisection (`initial_kernels`),
and the size-constrained label propagation of vcut (`vcut.label_propagation`, whose
labels are the parts). vcut's FM of a vertex cut (`vcut.fm_kernels`) keeps its own heap:
its entries carry an edge and a version (three arrays, sifted without numba's reference
counting), and its gains come from replica slots, not from a gather. The two FMs' running
gain, best prefix and undo stay with each: their stop rules (moves since the best prefix;
or those, or a drop below it) and the state they restore differ.

The gather and the heap are ``@helper``s, compiled without numba's reference counting:
called per vertex (the gather) or per queue entry (the heap) inside the kernels' loops,
where a call's reference counting of its array arguments would cost more than its work.
"""

from vcut_base.jitcache import helper, njit

__all__ = ["touched_size", "gather", "heap_push", "heap_pop"]


@njit(cache=True)
def touched_size(indptr, k):
    """Room for `gather`'s parts: k, or more when zero-weight edges list a part twice."""
    most = k
    for v in range(len(indptr) - 1):
        most = max(most, indptr[v + 1] - indptr[v])
    return most


@helper
def gather(indptr, indices, ewgt, part, v, conn, touched):
    """Add v's edge weight per adjacent part into ``conn``; the parts go to ``touched``.

    Returns how many entries of ``touched`` were written (a part reached only by
    zero-weight edges can appear more than once, hence `touched_size`); the
    caller resets ``conn`` at those entries. ``conn`` and ``ewgt`` may be integer or
    float (a part is new while its ``conn`` is 0).
    """
    nt = 0
    for e in range(indptr[v], indptr[v + 1]):
        p = part[indices[e]]
        if conn[p] == 0:
            touched[nt] = p
            nt += 1
        conn[p] += ewgt[e]
    return nt


@helper
def heap_push(hk, hv, size, key, val):
    """``(key, val)`` into the max-heap ``hk``/``hv`` of ``size`` entries (room for one
    more); the new size."""
    i = size
    hk[i] = key
    hv[i] = val
    while i > 0:
        p = (i - 1) >> 1
        if hk[p] >= hk[i]:
            break
        hk[p], hk[i] = hk[i], hk[p]
        hv[p], hv[i] = hv[i], hv[p]
        i = p
    return size + 1


@helper
def heap_pop(hk, hv, size):
    """The top ``(key, val)`` of the max-heap and its new size."""
    key = hk[0]
    val = hv[0]
    size -= 1
    hk[0] = hk[size]
    hv[0] = hv[size]
    i = 0
    while True:
        a = 2 * i + 1
        if a >= size:
            break
        b = a + 1
        c = a if b >= size or hk[a] >= hk[b] else b
        if hk[i] >= hk[c]:
            break
        hk[c], hk[i] = hk[i], hk[c]
        hv[c], hv[i] = hv[i], hv[c]
        i = c
    return key, val, size
