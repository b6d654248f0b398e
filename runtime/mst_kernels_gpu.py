"""numba.cuda kernels of the Borůvka minimum spanning forest.

Twins of `runtime.mst_kernels` (which describes the algorithm); the host loop that
launches them is `runtime.mst_gpu`, the block-aggregated worklist pushes they use
are `runtime.traversal_kernels_gpu`'s.
"""

from numba import cuda
from numba import int64 as nb_int64

from .mst_kernels import _find as _mst_find
from .traversal_kernels_gpu import _PUSH_SLOTS, _flush, _open, _stage


#: `runtime.mst_kernels._find` (root with path halving), its Python source compiled for the device
_find = cuda.jit(device=True)(_mst_find.py_func)


@cuda.jit
def mst_reset_kernel(counts):
    """Zero the round's list counters (slots 0 and 1; slot 2 accumulates examined edges)."""
    if cuda.grid(1) == 0:
        counts[0] = 0
        counts[1] = 0


@cuda.jit
def mst_discover_kernel(indptr, adj, erank, parent, cursor, active, nact, best, nxt, counts):
    """Discovery: cursor past internal edges, ``atomicMin`` of the first crossing edge's
    rank into ``best[root]``; vertices with one left go to ``nxt`` (count in slot 0)."""
    sbuf = cuda.shared.array(_PUSH_SLOTS, dtype=nb_int64)
    seen = cuda.shared.array(1, dtype=nb_int64)
    if cuda.threadIdx.x == 0:
        seen[0] = 0
    _open(sbuf)  # synchronises the block
    i = cuda.grid(1)
    if i < nact:
        v = active[i]
        cv = _find(parent, v)
        j = cursor[v]
        start = j
        end = indptr[v + 1]
        while j < end and _find(parent, adj[j]) == cv:
            j += 1
        cursor[v] = j
        if j < end:
            cuda.atomic.add(seen, 0, j - start + 1)
            cuda.atomic.min(best, cv, nb_int64(erank[j]))
            _stage(v, sbuf, nxt, counts)
        elif j > start:
            cuda.atomic.add(seen, 0, j - start)
    _flush(sbuf, nxt, counts)
    if cuda.threadIdx.x == 0:
        cuda.atomic.add(counts, 2, seen[0])


@cuda.jit
def mst_target_kernel(roots, nroots, best, eu, ev, parent, target, m):
    """The root on the other side of each root's edge (itself when it has none)."""
    i = cuda.grid(1)
    if i < nroots:
        c = roots[i]
        r = best[c]
        if r == m:
            target[i] = c
        else:
            a = _find(parent, eu[r])
            target[i] = _find(parent, ev[r]) if a == c else a


@cuda.jit
def mst_hook_kernel(roots, nroots, best, target, parent, forest):
    """Each root points at its target, but the smaller of a pair on the same edge."""
    i = cuda.grid(1)
    if i < nroots:
        c = roots[i]
        t = target[i]
        if t != c and not (best[t] == best[c] and c < t):
            parent[c] = t
            forest[best[c]] = 1


@cuda.jit
def mst_jump_kernel(roots, nroots, target, parent, best, m, nxt, counts):
    """Pointer jumping of the round's roots to the new roots; reset their slots; the
    roots that stayed roots and had an edge go to ``nxt`` (count in ``counts[0]``)."""
    sbuf = cuda.shared.array(_PUSH_SLOTS, dtype=nb_int64)
    _open(sbuf)
    i = cuda.grid(1)
    if i < nroots:
        c = roots[i]
        while parent[parent[c]] != parent[c]:
            parent[c] = parent[parent[c]]
        best[c] = m
        if parent[c] == c and target[i] != c:
            _stage(c, sbuf, nxt, counts)
    _flush(sbuf, nxt, counts)


@cuda.jit
def mst_labels_kernel(parent, out):
    """`mst_kernels.labels`: the root of every vertex."""
    v = cuda.grid(1)
    if v < len(out):
        x = v
        while parent[x] != x:
            x = parent[x]
        out[v] = x
