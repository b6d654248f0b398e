"""The job kinds of `runtime.scheduler` and `make_job`, their command-line defaults."""

import numpy as np

from vcut_base.errors import InputError
from vcut_base.memory import check_memory

from .base import Job
from .bfs_batch import BfsBatch
from .matmul import Matmul
from .partition_batch import PartitionBatch
from .string_search import StringSearch

__all__ = ["Job", "StringSearch", "Matmul", "BfsBatch", "PartitionBatch", "JOB_KINDS", "make_job"]

JOB_KINDS = {"string-search": StringSearch, "matmul": Matmul, "bfs-batch": BfsBatch,
             "partition-batch": PartitionBatch}

#: kind: (size, sub-loads) by default; size = text bytes, matrix order, RMAT scale, graphs
DEFAULTS = {"string-search": (8e6, 256), "matmul": (1024, 256), "bfs-batch": (14, 256),
            "partition-batch": (16, 16)}
LIMITS = {"string-search": (1, 2**34), "matmul": (1, 65536), "bfs-batch": (1, 26),
          "partition-batch": (1, 4096)}


def job_bytes(kind, size, units):
    """Estimated peak bytes of generating and running a job of ``kind`` (with ``--check``'s
    reference): its input, the per-unit results and their combination."""
    if kind == "string-search":   # the draws (int64) and the text
        return 10 * size
    if kind == "matmul":          # A, B (and their int64 draws), the tiles, C, the reference
        return 48 * size * size
    if kind == "bfs-batch":       # the RMAT graph and CSR, the sources, distances (+ reference)
        n = 2 ** size
        return 512 * n + max(256, units) * (8 + 16 * n)
    return size * (4 << 20)       # partition-batch: RMAT graphs of scale 12 and their cuts


def make_job(kind, *, size=None, units=None, seed=0, **kw):
    """A generated job of ``kind`` (sizes as `DEFAULTS`), split into ``units`` sub-loads.

    ``kw`` goes to the kind's generator: ``pattern`` (string-search), ``edge_factor``,
    ``n_sources`` (bfs-batch), ``scale``, ``ks``, ``algo`` (partition-batch). A
    partition batch has one sub-load per graph and k, so ``units`` (when given)
    must be ``size x len(ks)``.
    """
    if kind not in JOB_KINDS:
        raise InputError(f"--job {kind!r}: use one of {', '.join(JOB_KINDS)}")
    d_size, d_units = DEFAULTS[kind]
    size = d_size if size is None else size
    lo, hi = LIMITS[kind]
    number = isinstance(size, (int, float, np.integer, np.floating)) and not isinstance(size, bool)
    if not number or not (lo <= size <= hi) or size != int(size):
        shown = f"{size:g}" if number else repr(size)
        raise InputError(f"--size {shown}: {kind} takes a whole number in {lo:,} .. {hi:,}")
    size = int(size)
    given = units is not None
    if units is None:  # the default, but never more sub-loads than rows or bytes
        units = min(d_units, size) if kind in ("matmul", "string-search") else d_units
    units = int(units)
    if units < 1:
        raise InputError(f"--units {units}: use at least 1 sub-load")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or \
            not 0 <= seed <= 2**63 - 1:  # the partitioner's seeds are int64
        raise InputError(f"--seed {seed}: the job's seed is a whole number in 0 .. {2**63 - 1}")
    if kind in ("matmul", "string-search") and units > size:  # before generating the input
        raise InputError(f"--units {units:,}: {kind} of --size {size:,} has at most {size:,} "
                         f"sub-loads ({'rows' if kind == 'matmul' else 'bytes'}); use fewer")
    check_memory(job_bytes(kind, size, units), f"{kind} of --size {size:,}"
                 + (f" in {units:,} sub-loads" if given else ""),
                 "use a smaller --size" + (" or fewer --units" if kind == "bfs-batch" else ""))
    try:
        if kind == "string-search":
            return StringSearch.generate(size, n_units=units, seed=seed, **kw)
        if kind == "matmul":
            return Matmul(size, units, seed=seed, **kw)
        if kind == "bfs-batch":
            kw.setdefault("n_sources", max(256, units))
            return BfsBatch.generate(size, n_units=units, seed=seed, **kw)
        kw.setdefault("ks", (8,))
        if given and units != size * len(kw["ks"]):
            raise InputError(f"--units {units}: a partition batch has one sub-load per graph "
                             f"and k, here {size * len(kw['ks'])}; set --size (graphs) instead")
        return PartitionBatch.generate(size, seed=seed, **kw)
    except ValueError as exc:
        raise InputError(str(exc)) from None
