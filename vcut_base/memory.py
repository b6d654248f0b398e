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

__all__ = ["available_bytes", "cgroup_room", "resident_bytes", "total_bytes", "check_memory",
           "format_bytes", "usable_cpus", "jobs_that_fit", "PASS_EDGES", "pass_threads", "spans"]

#: Where the kernel shows cgroups, and this process's (tests point them elsewhere).
CGROUP_ROOT = "/sys/fs/cgroup"
PROC_CGROUP = "/proc/self/cgroup"


def available_bytes():
    """Memory this process may still allocate: ``MemAvailable``, capped by the room left
    under the memory limit of its cgroup (a container's limit: `cgroup_room`) and by
    ``RLIMIT_AS``.

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
        avail = total_bytes()
    room = cgroup_room()
    if room is not None:
        avail = min(avail, room)
    try:
        import resource  # lazy: Unix only (ImportError below)

        soft, _ = resource.getrlimit(resource.RLIMIT_AS)
        if soft != resource.RLIM_INFINITY:
            avail = min(avail, soft)
    except (ImportError, ValueError, OSError):  # pragma: no cover - not Linux
        pass
    return int(avail)


def total_bytes():
    """The machine's physical memory."""
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")


def resident_bytes():
    """This process's resident memory now (``/proc/self/statm``); 0 where unreadable."""
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _read_int(path):
    try:
        with open(path) as fh:
            text = fh.read().strip()
    except OSError:
        return None
    if text == "max":
        return None
    try:
        return int(text)
    except ValueError:
        return None


def _stat_value(path, key):
    try:
        with open(path) as fh:
            for line in fh:
                name, _, value = line.partition(" ")
                if name == key:
                    return int(value)
    except (OSError, ValueError):
        pass
    return 0


def cgroup_room():
    """Bytes left under the tightest memory limit of this process's cgroup and its
    parents (cgroup v2 ``memory.max``, v1 ``memory.limit_in_bytes``); None without one.

    A container's limit is invisible in ``/proc/meminfo``, and its kernel ends a process
    that reaches it without a word. Usage counts as the kernel's working set does: the
    inactive file cache, which it reclaims before it kills, is left out.
    """
    try:
        with open(PROC_CGROUP) as fh:
            lines = fh.read().splitlines()
    except OSError:
        return None
    room = None
    for line in lines:
        _, controllers, path = line.split(":", 2) if line.count(":") >= 2 else ("", "", "")
        if controllers == "":  # v2: one hierarchy
            base, limit_file, usage_file, stat_key = (
                CGROUP_ROOT, "memory.max", "memory.current", "inactive_file")
        elif "memory" in controllers.split(","):  # v1: the memory controller's
            base, limit_file, usage_file, stat_key = (
                os.path.join(CGROUP_ROOT, "memory"), "memory.limit_in_bytes",
                "memory.usage_in_bytes", "total_inactive_file")
        else:
            continue
        parts = [p for p in path.split("/") if p and p != ".."]
        for depth in range(len(parts), -1, -1):
            folder = os.path.join(base, *parts[:depth])
            limit = _read_int(os.path.join(folder, limit_file))
            if limit is None or limit >= 2**60:  # none, or v1's "unlimited"
                continue
            usage = _read_int(os.path.join(folder, usage_file)) or 0
            usage -= min(_stat_value(os.path.join(folder, "memory.stat"), stat_key), usage)
            left = max(limit - usage, 0)
            room = left if room is None else min(room, left)
    return room


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


#: A pass over a graph's edges that reads or updates, per edge, an entry somewhere in
#: memory (a vertex's degree, mask or group, a replica's sums) runs in threads from this
#: many edges per thread (`pass_threads`): a thread's start costs tens of microseconds,
#: 2^20 such edges tens of milliseconds, and two threads hide more of the waits on memory
#: than one (129 M edges of an R-MAT graph on 2 cores: the replica table's passes 17.5 s
#: in one thread, 5.5 s in two).
PASS_EDGES = 1 << 20


def pass_threads(m, row_bytes=0.0):
    """Threads for such a pass over ``m`` edges: one per usable CPU, `PASS_EDGES` edges
    each at least; where each thread keeps a row of ``row_bytes`` of its own, only as many
    as half the available memory holds (one at least)."""
    want = max(int(m) // PASS_EDGES, 1)
    if row_bytes > 0:
        return jobs_that_fit(want, row_bytes, share=0.5)
    return min(want, usable_cpus())


def spans(m, parts):
    """``parts`` contiguous ranges ``(lo, hi)`` of ``0 .. m - 1``, in order, of sizes
    within one of each other."""
    return [(m * i // parts, m * (i + 1) // parts) for i in range(parts)]


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
