"""Numba kernels of the Hurwitz zeta function and the power-law fit's KS distance.

`ir_graph.zeta` documents the method (Cephes' Euler–Maclaurin summation). Here it
runs in compiled loops, one ``(s, q)`` at a time, with the C library's ``pow`` for
every power: the same steps and the same bits as ``scipy.special.zeta`` (which calls
the same ``pow``), whatever the processor. numpy's ``power`` of an array may use
vector code instead (with AVX-512, 5 % of 10⁶ random ``q ** -s`` differ in the last
bit here), which made the fit's KS distances depend on the machine; and the fit's 200
candidate tails took 50 of a warm ``vcut stats``' 140 ms of work in numpy's small-array
calls.
"""

import math

import numpy as np

from vcut_base.jitcache import njit

__all__ = ["zeta_one", "zeta_fill", "ks_distance"]

_MACHEP = 1.11022302462515654042e-16
# (2j)! / B_2j for j = 1..12: the Euler–Maclaurin correction denominators.
_A = (
    12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9,
    7.47242496e10, -2.950130727918164224e12, 1.1646782814350067249e14,
    -4.5979787224074726105e15, 1.8152105401943546773e17, -7.1661652561756670113e18,
)


@njit(cache=True)
def zeta_one(x, q):
    """``zeta(x, q)`` for one pair of floats: ``inf`` at ``x == 1``, NaN outside the
    domain (``x < 1`` or ``q <= 0``); the asymptotic expansion above ``q = 1e8``."""
    if x == 1.0:
        return math.inf
    if not (x > 1.0 and q > 0.0):
        return math.nan
    if q > 1e8:
        return (1.0 / (x - 1.0) + 1.0 / (2.0 * q)) * q ** (1.0 - x)
    s = q ** -x
    a = q
    i = 0
    b = 0.0
    while i < 9 or a <= 9.0:
        i += 1
        a += 1.0
        b = a ** -x
        s += b
        if abs(b / s) < _MACHEP:
            return s
    w = a
    s += b * w / (x - 1.0)
    s -= 0.5 * b
    a = 1.0
    k = 0.0
    for j in range(12):
        a *= x + k
        b /= w
        t = a * b / _A[j]
        s = s + t
        if abs(t / s) < _MACHEP:
            return s
        k += 1.0
        a *= x + k
        b /= w
        k += 1.0
    return s


@njit(cache=True)
def zeta_fill(x, q, out):
    """``out[i] = zeta(x[i], q[i])`` (float64 arrays of one length)."""
    for i in range(out.shape[0]):
        out[i] = zeta_one(x[i], q[i])


@njit(cache=True)
def ks_distance(vals, cum, n, alpha, x_min):
    """The Kolmogorov-Smirnov distance between a tail's empirical CDF and the discrete
    power law ``d^-alpha / zeta(alpha, x_min)``: the tail's distinct values ``vals``
    (ascending floats, the first ``x_min``), ``cum`` the count of values up to each
    (int64), ``n`` the tail's size. NaN when a term is."""
    zx = zeta_one(alpha, x_min)
    d = 0.0
    for i in range(vals.shape[0]):
        fit = 1.0 - zeta_one(alpha, vals[i] + 1.0) / zx
        e = abs(cum[i] / n - fit)
        if e != e:
            return np.nan
        if e > d:
            d = e
    return d
