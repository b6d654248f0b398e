"""Small array helpers shared by every package."""

import numpy as np

__all__ = ["unique"]


def unique(x):
    """The sorted distinct values of ``x`` (as ``numpy.unique(x)``).

    numpy 2.3+ answers a plain ``numpy.unique`` on a large integer array with a
    hash table that is an order of magnitude slower than sorting (12 s against
    0.7 s for 11 M int64 values); sort and drop repeats instead.
    """
    s = np.sort(np.asarray(x).ravel())
    if len(s) < 2:
        return s
    keep = np.empty(len(s), dtype=bool)
    keep[0] = True
    np.not_equal(s[1:], s[:-1], out=keep[1:])
    return s[keep]
