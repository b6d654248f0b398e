"""The job kinds by name, and `make_job`, which builds one from its command-line sizes.

A kind registers itself in its own module (`register_job`): the runtime's string-search,
matmul and bfs-batch here, kinds of the packages above from theirs (vcut's
partition-batch: `vcut.partition_batch`, which the ``vcut schedule`` command imports).
A kind is listed in `JOB_KINDS` once its module has been imported.
"""

from dataclasses import dataclass
from typing import Callable

import numpy as np

from vcut_base.errors import InputError
from vcut_base.memory import check_memory

__all__ = ["JobKind", "JOB_KINDS", "register_job", "make_job"]


@dataclass(frozen=True)
class JobKind:
    """What `make_job` knows of a job kind.

    ``cls`` the `Job` class; ``size``, ``units`` the defaults (size: text bytes, matrix
    order, RMAT scale, graphs ...); ``limits`` the whole sizes taken, ``(lo, hi)``;
    ``peak_bytes(size, units)`` the estimated peak bytes of generating and running a job
    (with ``--check``'s reference); ``build(size, units, given, seed, **kw)`` the job
    (``given``: ``units`` was asked for, not the default; a ValueError is reported as the
    user's error). ``units_of`` names what the size counts when there are never more
    sub-loads than that (``rows``, ``bytes``; None: no such bound); ``units_cost_memory``:
    fewer sub-loads need less memory (the memory error says so).
    """

    cls: type
    size: float
    units: int
    limits: tuple
    peak_bytes: Callable
    build: Callable
    units_of: str = None
    units_cost_memory: bool = False


#: kind name -> `JobKind`, in the order kinds registered (the order messages list them)
JOB_KINDS = {}


def register_job(kind, cls, **spec):
    """Make ``kind`` (a `Job` class ``cls`` with the `JobKind` fields ``spec``) known to
    `make_job` and to `runtime.scheduler.schedule`'s kind names."""
    JOB_KINDS[kind] = JobKind(cls, **spec)
    return cls


def make_job(kind, *, size=None, units=None, seed=0, **kw):
    """A generated job of ``kind`` (sizes as its `JobKind`), split into ``units`` sub-loads.

    ``kw`` goes to the kind's generator: ``pattern`` (string-search), ``edge_factor``,
    ``n_sources`` (bfs-batch), ``scale``, ``ks``, ``algo`` (partition-batch). A
    partition batch has one sub-load per graph and k, so ``units`` (when given)
    must be ``size x len(ks)``.
    """
    if kind not in JOB_KINDS:
        raise InputError(f"--job {kind!r}: use one of {', '.join(JOB_KINDS)}")
    spec = JOB_KINDS[kind]
    size = spec.size if size is None else size
    lo, hi = spec.limits
    number = isinstance(size, (int, float, np.integer, np.floating)) and not isinstance(size, bool)
    if not number or not (lo <= size <= hi) or size != int(size):
        shown = f"{size:g}" if number else repr(size)
        raise InputError(f"--size {shown}: {kind} takes a whole number in {lo:,} .. {hi:,}")
    size = int(size)
    given = units is not None
    if units is None:  # the default, but never more sub-loads than rows or bytes
        units = min(spec.units, size) if spec.units_of else spec.units
    units = int(units)
    if units < 1:
        raise InputError(f"--units {units}: use at least 1 sub-load")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or \
            not 0 <= seed <= 2**63 - 1:  # the partitioner's seeds are int64
        raise InputError(f"--seed {seed}: the job's seed is a whole number in 0 .. {2**63 - 1}")
    if spec.units_of and units > size:  # before generating the input
        raise InputError(f"--units {units:,}: {kind} of --size {size:,} has at most {size:,} "
                         f"sub-loads ({spec.units_of}); use fewer")
    check_memory(spec.peak_bytes(size, units), f"{kind} of --size {size:,}"
                 + (f" in {units:,} sub-loads" if given else ""),
                 "use a smaller --size" + (" or fewer --units" if spec.units_cost_memory else ""))
    try:
        return spec.build(size, units, given, seed, **kw)
    except ValueError as exc:
        raise InputError(str(exc)) from None
