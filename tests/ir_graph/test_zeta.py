"""ir_graph.zeta: the Hurwitz zeta function the power-law fit uses instead of scipy's."""

import math

import numpy as np
import pytest
from scipy import special

from ir_graph.zeta import hurwitz_zeta


def test_known_values():
    # zeta(2) = pi^2 / 6, zeta(4) = pi^4 / 90, zeta(2, 1/2) = 3 zeta(2) = pi^2 / 2
    assert hurwitz_zeta(2.0, 1.0) == pytest.approx(math.pi ** 2 / 6, rel=1e-15)
    assert hurwitz_zeta(4.0, 1.0) == pytest.approx(math.pi ** 4 / 90, rel=1e-15)
    assert hurwitz_zeta(2.0, 0.5) == pytest.approx(math.pi ** 2 / 2, rel=1e-15)
    # the asymptotic branch (q > 1e8): 1/((s-1) q^(s-1)) + 1/(2 q^s) to first order
    q = 1e9
    assert hurwitz_zeta(3.0, q) == pytest.approx(1 / (2 * q * q) + 1 / (2 * q ** 3), rel=1e-12)


def test_recurrence_zeta_s_q_minus_zeta_s_q_plus_1_is_q_to_the_minus_s():
    rng = np.random.default_rng(1)
    s = rng.uniform(1.2, 8.0, 500)
    q = np.floor(rng.uniform(1, 500, 500))
    lhs = hurwitz_zeta(s, q) - hurwitz_zeta(s, q + 1)
    np.testing.assert_allclose(lhs, q ** -s, rtol=1e-9)


def test_scalars_follow_cephes_step_for_step_as_scipy_does():
    rng = np.random.default_rng(2)
    for s, q in zip(rng.uniform(1.0001, 8.0, 400), np.floor(rng.uniform(1, 3000, 400))):
        assert hurwitz_zeta(float(s), float(q)) == special.zeta(s, q)


def test_arrays_are_scipys_bit_for_bit():
    # one pair at a time with the C library's pow, as scipy's loop (numpy's vector pow,
    # used before, differed in the last bit on 236 of these 5,000 with AVX-512)
    rng = np.random.default_rng(3)
    s = rng.uniform(1.0001, 8.0, 5000)
    q = np.concatenate([np.floor(rng.uniform(1, 3000, 2500)), rng.uniform(0.01, 50, 2500)])
    ours, theirs = hurwitz_zeta(s, q), special.zeta(s, q)
    assert ours.shape == (5000,)
    assert ours.tolist() == theirs.tolist()
    big = np.array([2e8, 5e9, 1e12])
    assert hurwitz_zeta(np.full(3, 2.5), big).tolist() == special.zeta(2.5, big).tolist()


def test_ks_distance_is_the_largest_cdf_gap_computed_with_scipy():
    from ir_graph.zeta_kernels import ks_distance

    x = np.sort(np.random.default_rng(4).zipf(2.2, 3000).astype(np.float64))
    for x_min in (1.0, 2.0, 4.0):
        tail = x[x >= x_min]
        vals, counts = np.unique(tail, return_counts=True)
        for alpha in (1.7, 2.2, 3.1):
            fit = 1.0 - special.zeta(alpha, vals + 1) / special.zeta(alpha, x_min)
            want = float(np.max(np.abs(np.cumsum(counts) / len(tail) - fit)))
            assert ks_distance(vals, np.cumsum(counts), len(tail), alpha, x_min) == want


def test_broadcasting_and_scalar_type():
    out = hurwitz_zeta(np.array([2.0, 3.0]), 1.0)
    assert out.shape == (2,)
    assert isinstance(hurwitz_zeta(2.0, 3.0), float)
    assert hurwitz_zeta(np.ones((2, 3)) * 2.0, np.arange(1, 4)).shape == (2, 3)


def test_outside_the_domain():
    assert hurwitz_zeta(1.0, 2.0) == math.inf
    assert math.isnan(hurwitz_zeta(0.5, 2.0))
    assert math.isnan(hurwitz_zeta(2.0, 0.0))
    out = hurwitz_zeta(np.array([1.0, 0.5, 2.0]), np.array([1.0, 1.0, -1.0]))
    assert out[0] == math.inf and np.isnan(out[1]) and np.isnan(out[2])


def test_the_power_law_fit_imports_no_scipy():
    import subprocess
    import sys

    code = ("import sys, ir_graph.stats; "
            "print(any(m == 'scipy.special' for m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
