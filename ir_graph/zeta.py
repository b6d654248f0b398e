"""The Hurwitz zeta function ``zeta(s, q) = sum_{k >= 0} (q + k)^-s`` for ``s > 1``, ``q > 0``.

The power-law fit (`ir_graph.stats`) needs it for the discrete likelihood
and its CDF. It is here because importing ``scipy.special`` takes about
0.18 s (it imports most of numpy's submodules through its array-API layer),
a third of a warm ``vcut partition`` command that needs only this.

The method is the Euler–Maclaurin summation of Cephes' ``zeta`` (S. L.
Moshier, *Methods and Programs for Mathematical Functions*, 1989), which
``scipy.special.zeta`` also uses: at least nine terms of the sum and up to
``a = 9``, then the integral of the rest, half its first term and up to
twelve Bernoulli corrections, stopping where a term falls below the
machine epsilon. Large ``q`` (above 1e8) take the first two terms of the
asymptotic expansion (DLMF 25.11.43). It runs in numba kernels
(`ir_graph.zeta_kernels`), one pair at a time with the C library's ``pow``:
the same bits as scipy's, on any processor. The tests compare it with scipy.
"""

import numpy as np

from .zeta_kernels import zeta_fill, zeta_one

__all__ = ["hurwitz_zeta"]


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
    >>> abs(hurwitz_zeta(3.0, 2.0) + 1.0 - hurwitz_zeta(3.0, 1.0)) < 1e-15  # 1 + zeta(3, 2)
    True
    >>> hurwitz_zeta([2.0, 3.0], 1.0).round(6).tolist()
    [1.644934, 1.202057]
    """
    if np.ndim(s) == 0 and np.ndim(q) == 0:
        return zeta_one(float(s), float(q))
    s_arr, q_arr = np.broadcast_arrays(np.asarray(s, dtype=np.float64),
                                       np.asarray(q, dtype=np.float64))
    out = np.empty(s_arr.shape)
    zeta_fill(s_arr.ravel(), q_arr.ravel(), out.reshape(-1))  # 1-D C arrays
    return out
