"""The primitives shared by the runtime's graph work, on CPU or GPU.

Every function takes ``device="cpu"|"gpu"|"auto"`` (`runtime.gpu.resolve_device`)
and returns host numpy arrays; the CPU implementations are the references the GPU
kernels (`runtime.primitives_gpu`) are tested against.

* `inclusive_scan`, `exclusive_scan` -- prefix sums (int64);
* `degree_histogram`, `choose_mdt` -- the NS/HP maximum-degree threshold;
* `wd_offsets` -- WD's edge-range assignment: thread ``t`` starts at edge
  ``t * per`` of the concatenated edge lists, i.e. at (worklist index,
  offset in that node's edges), found by binary search in the scan;
* `split_nodes` -- the parent/children layout of node splitting (built on
  the host for both devices: one pass over the CSR);
* `segmented_reduce` -- min or sum over CSR segments.
"""

import numpy as np

from vcut_base.errors import InputError

from . import traversal_kernels as K
from .gpu import require_gpu, resolve_device

__all__ = ["inclusive_scan", "exclusive_scan", "degree_histogram", "choose_mdt", "wd_offsets",
           "split_nodes", "segmented_reduce"]


def inclusive_scan(x, device="cpu"):
    x = np.ascontiguousarray(x, dtype=np.int64)
    if resolve_device(device) == "cpu" or len(x) == 0:
        return np.cumsum(x)
    from . import primitives_gpu  # lazy: numba.cuda is optional

    cuda = require_gpu()
    return primitives_gpu.inclusive_scan(cuda, cuda.to_device(x), len(x)).copy_to_host()[: len(x)]


def exclusive_scan(x, device="cpu"):
    x = np.ascontiguousarray(x, dtype=np.int64)
    return inclusive_scan(x, device) - x


def degree_histogram(degrees, bins=10, device="cpu"):
    """Counts of degrees ``d >= 1`` in bins ``ceil(d * bins / maxdeg)`` (index 0 unused).

    Returns ``(hist, maxdeg)``, hist of length ``bins + 1``.
    """
    degrees = np.asarray(degrees, dtype=np.int64)
    if resolve_device(device) == "gpu":
        from . import primitives_gpu  # lazy: numba.cuda is optional

        return primitives_gpu.histogram(require_gpu(), degrees, bins)
    maxd = int(degrees.max()) if len(degrees) else 0
    hist = np.zeros(bins + 1, dtype=np.int64)
    if maxd:
        d = degrees[degrees > 0]
        np.add.at(hist, (d * bins + maxd - 1) // maxd, 1)
    return hist, maxd


def choose_mdt(degrees, bins=10, device="cpu"):
    """MDT = floor(tallest bin / bins * maxdeg), at least 1 (see `traversal_kernels.choose_mdt`)."""
    hist, maxd = degree_histogram(degrees, bins, device)
    if maxd == 0:
        return 1
    best = 1 + int(np.argmax(hist[1:]))
    return max(1, (best * maxd) // bins)


def wd_offsets(scan, threads, device="cpu"):
    """Per-thread first (worklist index, edge offset) for an inclusive degree scan.

    Returns ``(per, node_of, edge_of)``: ``per = ceil(T / threads)`` edges per
    thread; threads past the total get -1.
    """
    scan = np.ascontiguousarray(scan, dtype=np.int64)
    total = int(scan[-1]) if len(scan) else 0
    per = max(1, -(-total // max(int(threads), 1)))
    if resolve_device(device) == "gpu":
        from . import primitives_gpu  # lazy: numba.cuda is optional

        node_of, edge_of = primitives_gpu.wd_offsets(require_gpu(), scan, per, int(threads))
        return per, node_of, edge_of
    start = np.arange(int(threads), dtype=np.int64) * per
    live = start < total
    k = np.searchsorted(scan, start[live], side="right")
    node_of = np.full(int(threads), -1, dtype=np.int64)
    edge_of = np.full(int(threads), -1, dtype=np.int64)
    node_of[live] = k
    edge_of[live] = start[live] - np.where(k > 0, scan[np.maximum(k - 1, 0)], 0)
    return per, node_of, edge_of


def split_nodes(indptr, indices, weights, mdt):
    """Parent/children layout of node splitting (see `traversal_kernels.split_nodes`)."""
    if int(mdt) < 1:
        raise InputError(f"the maximum-degree threshold must be at least 1, got {mdt}")
    return K.split_nodes(np.asarray(indptr, dtype=np.int64), np.asarray(indices, dtype=np.int64),
                         np.asarray(weights, dtype=np.float64), int(mdt))


def segmented_reduce(values, ptr, op="min", device="cpu"):
    """``op`` over ``values[ptr[s]:ptr[s + 1]]`` for every segment (min of empty: inf)."""
    if op not in ("min", "sum"):
        raise InputError(f"unknown reduction {op!r}; use min or sum")
    values = np.asarray(values, dtype=np.float64)
    ptr = np.asarray(ptr, dtype=np.int64)
    if resolve_device(device) == "gpu":
        from . import primitives_gpu  # lazy: numba.cuda is optional

        return primitives_gpu.segmented_reduce(require_gpu(), values, ptr, op)
    return K.segmented_reduce(values, ptr, op == "min")
