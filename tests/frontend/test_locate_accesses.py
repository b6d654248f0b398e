"""`frontend.trace_kernels.locate_accesses` against a direct search over every object."""

import numpy as np
import pytest

from frontend.trace_kernels import locate_accesses


def _reference(addr, size, t, base, osize, alloc, free, max_size):
    """The object of each access by the kernel's rule, read off every object: among the
    objects live at the access's time (allocated at or before it, not freed before it)
    whose base is at most ``max_size`` bytes below the access, the nearest base first;
    at one base, the latest allocation not after the access's time, which must contain
    the whole access (else the next base down)."""
    out = np.full(len(addr), -1, dtype=np.int64)
    for i in range(len(addr)):
        a, end, ti = int(addr[i]), int(addr[i]) + int(size[i]), int(t[i])
        for b in sorted({int(x) for x in base if x <= a and a - x <= max_size}, reverse=True):
            at = [o for o in range(len(base)) if base[o] == b and alloc[o] <= ti]
            if not at:
                continue
            o = max(at, key=lambda j: (alloc[j], j))
            if b + osize[o] >= end and (free[o] < 0 or ti <= free[o]):
                out[i] = o
                break
    return out


def _kernel_inputs(base, alloc):
    """The kernel's grouping: distinct bases ascending, objects of a base by allocation."""
    ubase = np.unique(base)
    order = np.lexsort((np.arange(len(base)), alloc, base))
    group_ptr = np.searchsorted(base[order], ubase).astype(np.int64)
    group_ptr = np.append(group_ptr, len(base)).astype(np.int64)
    return ubase, group_ptr, order.astype(np.int64)


@pytest.mark.parametrize("seed", range(6))
def test_locate_accesses_matches_a_search_over_every_object(seed):
    rng = np.random.default_rng(seed)
    k = int(rng.integers(1, 40))
    base = rng.integers(0, 400, size=k).astype(np.uint64) * np.uint64(8)
    if seed % 2:  # addresses reused by later allocations, as stack slots are
        base[k // 2:] = base[:k - k // 2]
    osize = rng.integers(1, 64, size=k).astype(np.uint64)
    alloc = rng.integers(0, 100, size=k).astype(np.int64)
    free = np.where(rng.random(k) < 0.4, alloc + rng.integers(0, 50, size=k), -1)
    m = 300
    addr = rng.integers(0, 3300, size=m).astype(np.uint64)
    size = rng.choice(np.array([1, 2, 4, 8], dtype=np.uint64), size=m)  # the trace's dtypes
    t = rng.integers(0, 150, size=m).astype(np.int64)
    max_size = int(osize.max())
    ubase, group_ptr, group_obj = _kernel_inputs(base, alloc)
    got = locate_accesses(addr, size, t, ubase, group_ptr, group_obj, osize, alloc,
                          free.astype(np.int64), np.uint64(max_size))
    want = _reference(addr, size, t, base, osize, alloc, free, max_size)
    assert (want >= 0).any() and (want < 0).any()  # both cases occur
    np.testing.assert_array_equal(got, want)
