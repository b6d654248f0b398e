"""Memory budget: refuse work that cannot fit before allocating it.

Sizes that come from files or arguments (a header's node count, ``-p``, a
mesh's side) decide allocations of many gigabytes; numpy then either raises
``MemoryError`` in the middle of a run or, with overcommit, the host's OOM
killer ends the process. Callers estimate what they are about to allocate
and call `check_memory` first, so the user gets one line naming the size,
the limit and what to do.
"""

import os

from .errors import InputTooLarge

__all__ = ["available_bytes", "check_memory", "format_bytes", "usable_cpus", "jobs_that_fit"]


def available_bytes():
    """Memory this process may still allocate: ``MemAvailable``, capped by ``RLIMIT_AS``.

    Falls back to the physical memory when ``/proc/meminfo`` is unreadable.
    """
    avail = None
    try:
        with open("/proc/meminfo") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    avail = int(line.split()[1]) * 1024
                    break
    except (OSError, ValueError, IndexError):
        pass
    if avail is None:
        avail = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    try:
        import resource  # lazy: Unix only (ImportError below)

        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
        if soft != resource.RLIM_INFINITY:
            avail = min(avail, soft)
    except (ImportError, ValueError, OSError):  # pragma: no cover - not Linux
        pass
    return int(avail)


def usable_cpus():
    """The CPUs this process may run on (its affinity mask where the OS has one)."""
    if hasattr(os, "sched_getaffinity"):
        return max(1, len(os.sched_getaffinity(0)))
    return max(1, os.cpu_count() or 1)


def jobs_that_fit(count, need, share=1.0):
    """How many of ``count`` jobs of ``need`` bytes each to run at once: one per usable
    CPU, as many as ``share`` of the memory available holds, at least one."""
    fit = int(share * available_bytes() // max(int(need), 1))
    return max(1, min(int(count), usable_cpus(), fit))


def format_bytes(b):
    """``1.5 GiB``, ``12.0 MiB``, ``3.2 KiB``, ``7.3 TiB``; ``2.2e+20 bytes`` beyond 1 PiB."""
    if b >= 2**50:
        return f"{b:.3g} bytes"
    for unit, size in (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if b >= size:
            return f"{b / size:,.1f} {unit}"
    return f"{b:,.0f} bytes"


def check_memory(need, what, advice, *, error=InputTooLarge, available=None):
    """Raise ``error`` unless ``need`` bytes fit in the memory available.

    Parameters
    ----------
    need : int or float
        Bytes about to be allocated (an estimate; may be astronomically large).
    what : str
        What needs it, e.g. ``"a machine of 1000000 cores"``.
    advice : str
        What the user can do instead.
    error : type
        Exception class (default `vcut_base.errors.InputTooLarge`, exit 2: an
        input that declares or needs more memory than there is, whatever
        reads it; a phase that runs short after its check passes
        `OutOfMemory`).
    available : int, optional
        The budget in bytes (default: `available_bytes`).

    Raises
    ------
    error
        ``"{what} needs about X of memory but Y are available; {advice}"``.
    """
    have = available_bytes() if available is None else int(available)
    if need > have:
        raise error(f"{what} needs about {format_bytes(need)} of memory but "
                    f"{format_bytes(have)} are available; {advice}")
