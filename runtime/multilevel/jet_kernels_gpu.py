"""numba.cuda kernels of Jet refinement: the rules of `jet_kernels` compiled for the device
(`runtime.gpu.device_twin`) and the maps of a round (candidates, afterburner, apply,
rebalancing by loss buckets); the host side is `runtime.multilevel.gpu`.

One thread per vertex (or per coarse vertex) throughout; every array is int64
and was validated on the host before upload (see `runtime.multilevel.graph`).
Results never depend on the threads' order: every choice is a maximum over a
total order (weights, then seeded vertex keys, then ids), and every atomic is
an addition, a maximum of distinct values, or a buffer slot whose order is
sorted away afterwards.
"""

import numpy as np
from numba import cuda

from ..gpu import device_twin
from . import jet_kernels
from .refinement_kernels_gpu import MAXP, _jet_table, _move_vertex, _outranks

_jet_roomiest = device_twin(jet_kernels._roomiest)
_jet_candidate = device_twin(jet_kernels._candidate, _table=_jet_table, _roomiest=_jet_roomiest)
_jet_after = device_twin(jet_kernels._after, _outranks=_outranks)
_jet_bucket = device_twin(jet_kernels._bucket)
_jet_sub = device_twin(jet_kernels._sub)
_jet_evict = device_twin(jet_kernels._evict, _bucket=_jet_bucket, _table=_jet_table,
                         _roomiest=_jet_roomiest)
_jet_sheds = device_twin(jet_kernels._sheds, _sub=_jet_sub)
NB = jet_kernels.NB
SUB = jet_kernels.SUB


@cuda.jit
def jet_candidates_kernel(indptr, indices, ewgt, vwgt, part, load, maxload, lock, heavy, c4, n,
                          dest, gain, status, k):
    """`jet_kernels._candidate` per vertex; also zeroes the round's moves (``status[k + 1]``)."""
    v = cuda.grid(1)
    if v == 0:
        status[k + 1] = 0
    if v >= n:
        return
    ps = cuda.local.array(MAXP, np.int64)
    cs = cuda.local.array(MAXP, np.int64)
    d, g = _jet_candidate(indptr, indices, ewgt, vwgt, part, load, maxload, lock, heavy, c4, v,
                          ps, cs)
    dest[v] = d
    gain[v] = g


@cuda.jit
def jet_after_kernel(indptr, indices, ewgt, part, dest, gain, key, n, lock):
    """The afterburner's verdict (`jet_kernels._after` >= 0) into ``lock``."""
    v = cuda.grid(1)
    if v < n:
        lock[v] = 1 if dest[v] >= 0 and _jet_after(indptr, indices, ewgt, part, dest, gain,
                                                   key, v) >= 0 else 0


@cuda.jit
def jet_apply_kernel(lock, dest, part, vwgt, load, n, moved):
    v = cuda.grid(1)
    if v < n and lock[v] != 0:
        _move_vertex(part, vwgt, load, v, dest[v])
        cuda.atomic.add(moved, 0, 1)


@cuda.jit
def jet_evict_kernel(indptr, indices, ewgt, vwgt, part, load, maxload, soft, heavy, cum, key, n,
                     dest, bucket, hist, status, k):
    """`jet_kernels._evict` per vertex, its weight added to its part's row of the loss buckets
    ``hist``; zeroes the round's moves (``status[k + 1]``)."""
    v = cuda.grid(1)
    if v == 0:
        status[k + 1] = 0
    if v >= n:
        return
    ps = cuda.local.array(MAXP, np.int64)
    cs = cuda.local.array(MAXP, np.int64)
    d, b = _jet_evict(indptr, indices, ewgt, vwgt, part, load, maxload, soft, heavy, cum, key[v],
                      v, ps, cs)
    dest[v] = d
    bucket[v] = b
    if d >= 0:
        cuda.atomic.add(hist, part[v] * NB + b, vwgt[v])


@cuda.jit
def jet_sub_kernel(part, dest, bucket, key, vwgt, cut_b, n, hist):
    """The vertices of their part's cut-off bucket, by key sub-bucket (`jet_kernels._sub`)."""
    v = cuda.grid(1)
    if v < n and dest[v] >= 0 and bucket[v] == cut_b[part[v]]:
        cuda.atomic.add(hist, part[v] * SUB + _jet_sub(key[v]), vwgt[v])


@cuda.jit
def jet_shed_kernel(part, dest, bucket, key, vwgt, cut_b, cut_s, load, n, moved):
    v = cuda.grid(1)
    if v >= n or dest[v] < 0:
        return
    a = part[v]
    if _jet_sheds(bucket[v], key[v], cut_b[a], cut_s[a]):
        _move_vertex(part, vwgt, load, v, dest[v])
        cuda.atomic.add(moved, 0, 1)
