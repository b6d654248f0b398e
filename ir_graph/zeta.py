"""The Hurwitz zeta function ``zeta(s, q) = sum_{k >= 0} (q + k)^-s`` for ``s > 1``, ``q > 0``.

The power-law fit (`ir_graph.stats`) needs it for the discrete likelihood
and its CDF. It is here, in numpy, because importing ``scipy.special`` takes
about 0.18 s (it imports most of numpy's submodules through its array-API
layer), a third of a warm ``vcut partition`` command that needs only this.

The method is the Euler–Maclaurin summation of Cephes' ``zeta`` (S. L.
Moshier, *Methods and Programs for Mathematical Functions*, 1989), which
``scipy.special.zeta`` also uses: at least nine terms of the sum and up to
``a = 9``, then the integral of the rest, half its first term and up to
twelve Bernoulli corrections, stopping where a term falls below the
machine epsilon. Large ``q`` (above 1e8) take the first two terms of the
asymptotic expansion (DLMF 25.11.43). The tests compare it with scipy.
"""

import math

import numpy as np

__all__ = ["hurwitz_zeta"]

_MACHEP = 1.11022302462515654042e-16
# (2j)! / B_2j for j = 1..12: the Euler–Maclaurin correction denominators.
_A = np.array([
    12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9,
    7.47242496e10, -2.950130727918164224e12, 1.1646782814350067249e14,
    -4.5979787224074726105e15, 1.8152105401943546773e17, -7.1661652561756670113e18,
])
_A_LIST = [float(v) for v in _A]


def hurwitz_zeta(s, q):
    """``zeta(s, q)`` elementwise, broadcasting ``s`` and ``q``.

    Parameters
    ----------
    s : float or array of float
        The exponent; ``s == 1`` gives ``inf``, ``s < 1`` gives NaN.
    q : float or array of float
        The shift, ``q > 0`` (``q <= 0`` gives NaN).

    Returns
    -------
    float or numpy.ndarray
        A float when both arguments are scalars.

    Examples
    --------
    >>> round(float(hurwitz_zeta(2.0, 1.0)), 12)   # pi^2 / 6
    1.644934066848
    >>> float(hurwitz_zeta(3.0, 2.0) + 1.0) == float(hurwitz_zeta(3.0, 1.0))
    True
    """
    if np.ndim(s) == 0 and np.ndim(q) == 0:
        return _zeta_scalar(float(s), float(q))
    s_arr, q_arr = np.broadcast_arrays(np.asarray(s, dtype=np.float64),
                                       np.asarray(q, dtype=np.float64))
    scalar = s_arr.ndim == 0
    x = s_arr.ravel().copy()
    qq = q_arr.ravel().copy()
    out = np.full(x.shape, np.nan)
    with np.errstate(over="ignore", divide="ignore", invalid="ignore"):
        out[x == 1.0] = np.inf
        ok = (x > 1.0) & (qq > 0.0)
        big = ok & (qq > 1e8)
        out[big] = (1.0 / (x[big] - 1.0) + 1.0 / (2.0 * qq[big])) * np.power(qq[big], 1.0 - x[big])
        idx = np.flatnonzero(ok & ~big)
        if len(idx):
            out[idx] = _euler_maclaurin(x[idx], qq[idx])
    out = out.reshape(s_arr.shape)
    return float(out) if scalar else out


def _zeta_scalar(x, q):
    """The same steps for one ``(s, q)`` in plain floats (the likelihood's many calls)."""
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
        t = a * b / _A_LIST[j]
        s = s + t
        if abs(t / s) < _MACHEP:
            return s
        k += 1.0
        a *= x + k
        b /= w
        k += 1.0
    return s


def _euler_maclaurin(x, q):
    s = np.power(q, -x)
    a = q.copy()
    b = np.zeros_like(s)
    live = np.ones(len(x), dtype=bool)     # still summing
    done = np.zeros(len(x), dtype=bool)    # converged in the sum: no correction
    i = 0
    while True:
        step = live & ((i < 9) | (a <= 9.0))
        if not step.any():
            break
        i += 1
        a[step] += 1.0
        b[step] = np.power(a[step], -x[step])
        s[step] += b[step]
        conv = step & (np.abs(b / s) < _MACHEP)
        done |= conv
        live &= step & ~conv
    idx = np.flatnonzero(~done)
    if not len(idx):
        return s
    xs, w, bs, ss = x[idx], a[idx], b[idx], s[idx]
    ss += bs * w / (xs - 1.0)
    ss -= 0.5 * bs
    aa = np.ones_like(ss)
    k = 0.0
    go = np.ones(len(idx), dtype=bool)
    for j in range(12):
        aa[go] *= xs[go] + k
        bs[go] /= w[go]
        t = aa[go] * bs[go] / _A[j]
        ss[go] = ss[go] + t
        stop = np.abs(t / ss[go]) < _MACHEP
        k += 1.0
        gi = np.flatnonzero(go)
        go[gi[stop]] = False
        aa[go] *= xs[go] + k
        bs[go] /= w[go]
        k += 1.0
        if not go.any():
            break
    s[idx] = ss
    return s
