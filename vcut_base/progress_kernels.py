"""The progress counter protocol of compiled kernels (`vcut_base.progress`).

A kernel that takes a ``counter`` (int64[2]) calls `stopped_at` at every step ``k``:
every `TICK` steps it publishes ``k`` in ``counter[0]`` and answers whether a non-zero
``counter[1]`` asks it to stop; at its end `completed` publishes the total, unless it
was stopped. `vcut_base.progress.run_kernel` reads the counter and sets the stop flag.
Kernels that count steps of their own test ``step & TICK_MASK == 0``.
"""

from .jitcache import helper

__all__ = ["TICK", "TICK_MASK", "stopped_at", "completed"]

#: The streaming kernels publish their progress every TICK edges (and look
#: whether they are asked to stop).
TICK = 1 << 16
TICK_MASK = TICK - 1


@helper
def stopped_at(k, counter):
    """Every `TICK` edges: publish ``k`` in ``counter[0]``; whether ``counter[1]``
    asks the kernel to stop."""
    if k & TICK_MASK == 0:
        counter[0] = k
        return counter[1] != 0
    return False


@helper
def completed(counter, m):
    """All ``m`` edges assigned, unless the kernel was stopped."""
    if counter[1] == 0:
        counter[0] = m
