"""Eq. 10's random-placement bound (`vcut.metrics.random_rf_bound`) against its literal sums."""

import numpy as np
import pytest

from vcut.metrics import RF_HEAD, random_rf_bound


def literal(p, alpha, n):
    """p - (p / h) * sum_{d=1}^{n-1} q^d d^-alpha, h = sum_{d=1}^{n-1} d^-alpha, every term."""
    d = np.arange(1, max(n, 2), dtype=np.float64)
    w = d ** -float(alpha)
    return float(p - (p / w.sum()) * np.sum(((p - 1) / p) ** d * w))


@pytest.mark.parametrize("p", [1, 2, 3, 8, 128, 1024])
@pytest.mark.parametrize("alpha", [0.5, 0.9999999, 1.0, 1.0000001, 2.0, 2.7, 60.0])
def test_bound_equals_the_literal_sums(p, alpha):
    # below, at and past the term-by-term head (the Euler-Maclaurin tail), and past the
    # degree where the second sum's terms vanish (39 p)
    for n in (1, 2, 3, 100, RF_HEAD, RF_HEAD + 1, RF_HEAD + 2, 50 * p + 7, 100_000):
        assert random_rf_bound(p, alpha, n) == pytest.approx(literal(p, alpha, n), rel=1e-11,
                                                             abs=1e-12)


def test_one_cluster_and_degree_one_laws():
    assert random_rf_bound(1, 2.0, 10**9) == 1.0  # one cluster: no replicas
    assert random_rf_bound(2, 60.0, 10**9) == pytest.approx(1.0)  # all degree 1: RF 1


def test_one_cluster_sums_only_the_head(monkeypatch):
    # p = 1: q = 0, no term of the second sum counts; h is summed term by term to RF_HEAD
    # and by its tail formula from there, as for any p (it was summed to n - 1 term by term:
    # 10^9 terms, 23 s)
    import vcut.metrics as metrics

    tails = []
    tail = metrics._zeta_tail
    monkeypatch.setattr(metrics, "_zeta_tail", lambda a, lo, hi: tails.append((lo, hi))
                        or tail(a, lo, hi))
    assert random_rf_bound(1, 2.0, 10**9) == 1.0
    assert tails == [(RF_HEAD + 1, 10**9 - 1)]
