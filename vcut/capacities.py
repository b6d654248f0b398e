"""Per-cluster capacities: equal shares, explicit fractions, or processing units.

A capacity vector holds one fraction per cluster, summing to 1; cluster ``m``
should receive ``cap[m]`` of the total edge weight. Units with speeds and
memory limits get their targets from Algorithm 1 of Tzovas, Predari and
Meyerhenke (HiPC 2020): units sorted by speed / memory, descending, each
takes its speed's share of the load still to place, capped by its memory.
"""

import numpy as np

from vcut_base.arrays import shares
from vcut_base.errors import InputError

__all__ = ["equal_capacities", "capacities_from_fractions", "target_weights", "capacities_from_units"]


def equal_capacities(p):
    """``p`` equal shares."""
    return np.full(p, 1.0 / p)


def capacities_from_fractions(fractions):
    """Normalise positive fractions (or any positive relative sizes) to sum 1.

    Raises
    ------
    InputError
        A fraction that is not a positive finite number, or one so small next to the
        largest that its share is not a normal float64 (it would round to 0).
    """
    f = np.asarray(fractions, dtype=np.float64)
    if f.ndim != 1 or len(f) == 0:
        raise InputError("capacities need one positive number per cluster")
    bad = ~np.isfinite(f) | (f <= 0)
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        raise InputError(f"capacity {f[k]} of cluster {k} is not a positive number")
    share = shares(f)
    small = share < np.finfo(np.float64).tiny
    if small.any():
        k = int(np.flatnonzero(small)[0])
        raise InputError(f"capacity {f[k]:g} of cluster {k} is too small next to the largest, "
                         f"{f.max():g}: its share underflows; give capacities within a factor "
                         "of 1e300 of each other")
    return share


def target_weights(speeds, memories, total):
    """Algorithm 1 (HiPC 2020): target weight of each unit, optimal for max time.

    Parameters
    ----------
    speeds, memories : sequence of float
        Relative speed and memory capacity (in units of weight) of each unit.
    total : float
        The weight to distribute.

    Returns
    -------
    numpy.ndarray
        Target weight per unit, in the given unit order.

    Raises
    ------
    InputError
        Non-positive speeds or memories, or memories that cannot hold the total
        (the message says by how much).
    """
    c = np.asarray(speeds, dtype=np.float64)
    mem = np.asarray(memories, dtype=np.float64)
    if c.shape != mem.shape or c.ndim != 1 or len(c) == 0:
        raise InputError("give one speed and one memory per processing unit")
    for name, arr in (("speed", c), ("memory", mem)):
        bad = ~np.isfinite(arr) | (arr <= 0)
        if bad.any():
            k = int(np.flatnonzero(bad)[0])
            raise InputError(f"{name} {arr[k]} of unit {k} is not a positive number")
    if mem.sum() < total * (1 - 1e-12):
        raise InputError(
            f"the units' memories hold {mem.sum():.6g} in all but the graph weighs {total:.6g}: "
            f"short by {total - mem.sum():.6g} ({100 * (total / mem.sum() - 1):.1f} %); "
            "add units or memory"
        )
    with np.errstate(over="ignore"):
        if not np.isfinite(c.sum()):  # huge speeds (1e308 twice): relative to the fastest
            c = c / c.max()
    order = sorted(range(len(c)), key=lambda i: (-c[i] / mem[i], i))
    tw = np.zeros(len(c))
    load, speed = float(total), float(c.sum())
    for i in order:
        if speed <= 0:  # the faster ones' speeds absorbed the rest's (1e308 beside 1e-300)
            want = load
        else:
            want = c[i] * load / speed
            if not np.isfinite(want):  # c[i] * load past the float range
                want = c[i] * (load / speed)
        tw[i] = mem[i] if want > mem[i] else want
        load -= tw[i]
        speed -= c[i]
    return tw


def capacities_from_units(speeds, memories, total):
    """Capacity fractions from unit speeds and memories (see `target_weights`).

    Raises
    ------
    InputError
        As `target_weights`, and for a unit whose share underflows to 0 (a speed or
        memory too small next to the others').
    """
    tw = target_weights(speeds, memories, total)
    share = tw / tw.sum()
    small = ~(share >= np.finfo(np.float64).tiny)
    if small.any():
        k = int(np.flatnonzero(small)[0])
        raise InputError(f"unit {k} (speed {float(speeds[k]):g}, memory {float(memories[k]):g}) "
                         "gets no share of the weight next to the others: give speeds and "
                         "memories within a factor of 1e300 of each other")
    return share
