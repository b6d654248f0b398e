"""The job kinds of `runtime.scheduler` and `make_job`, their command-line defaults."""

from frontend.errors import InputError

from .base import Job
from .bfs_batch import BfsBatch
from .matmul import Matmul
from .partition_batch import PartitionBatch
from .string_search import StringSearch

__all__ = ["Job", "StringSearch", "Matmul", "BfsBatch", "PartitionBatch", "JOB_KINDS", "make_job"]

JOB_KINDS = {"string-search": StringSearch, "matmul": Matmul, "bfs-batch": BfsBatch,
             "partition-batch": PartitionBatch}

#: kind: (size, sub-loads) by default; size = text bytes, matrix order, RMAT scale, graphs
DEFAULTS = {"string-search": (8e6, 256), "matmul": (1024, 256), "bfs-batch": (14, 64),
            "partition-batch": (16, 16)}
LIMITS = {"string-search": (1, 2**34), "matmul": (1, 65536), "bfs-batch": (1, 26),
          "partition-batch": (1, 4096)}


def make_job(kind, *, size=None, units=None, seed=0):
    """A generated job of ``kind`` (sizes as `DEFAULTS`), split into ``units`` sub-loads."""
    if kind not in JOB_KINDS:
        raise InputError(f"--job {kind!r}: use one of {', '.join(JOB_KINDS)}")
    d_size, d_units = DEFAULTS[kind]
    size = d_size if size is None else size
    lo, hi = LIMITS[kind]
    if not (lo <= size <= hi) or size != int(size):
        raise InputError(f"--size {size:g}: {kind} takes a whole number in {lo:,} .. {hi:,}")
    if units is None:  # the default, but never more sub-loads than rows or bytes
        units = min(d_units, int(size)) if kind in ("matmul", "string-search") else d_units
    units = int(units)
    try:
        if kind == "string-search":
            return StringSearch.generate(int(size), n_units=units, seed=seed)
        if kind == "matmul":
            return Matmul(int(size), units, seed=seed)
        if kind == "bfs-batch":
            return BfsBatch.generate(int(size), n_sources=max(256, units), n_units=units,
                                     seed=seed)
        return PartitionBatch.generate(int(size), ks=(8,), seed=seed)
    except ValueError as exc:
        raise InputError(str(exc)) from None
