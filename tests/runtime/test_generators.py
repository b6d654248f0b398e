"""Benchmark graph generators: exact sizes, determinism, shape."""

import numpy as np
import pytest

from vcut_base.errors import InputError
from runtime.generators import erdos_renyi, grid, rmat


def test_grid_edges_by_hand():
    g = grid(3, 4)
    assert g.n == 12 and g.m == 3 * 3 + 4 * 2
    pairs = set(zip(g.src.tolist(), g.dst.tolist()))
    assert (0, 1) in pairs and (0, 4) in pairs and (11, 10) not in pairs
    deg = g.degrees()
    assert deg.max() == 4 and deg.min() == 2  # interior 4, corners 2
    assert np.all(g.weight == 1)


def test_erdos_renyi_is_simple_exact_and_seeded():
    g = erdos_renyi(2000, 10000, seed=3)
    assert g.n == 2000 and g.m == 10000
    assert np.all(g.src != g.dst)
    keys = np.minimum(g.src, g.dst).astype(np.int64) * 2000 + np.maximum(g.src, g.dst)
    assert len(np.unique(keys)) == 10000
    again = erdos_renyi(2000, 10000, seed=3)
    assert np.array_equal(g.src, again.src) and np.array_equal(g.dst, again.dst)
    assert not np.array_equal(g.src, erdos_renyi(2000, 10000, seed=4).src)
    # degrees concentrate around the mean 2m/n = 10
    assert abs(g.degrees().mean() - 10.0) < 1e-9 and g.degrees().max() < 35


def test_rmat_is_skewed_simple_and_seeded():
    g = rmat(12, 8, seed=1)
    n = 1 << 12
    assert g.n == n
    assert g.m + g.meta["self_loops_removed"] + g.meta["repeated_edges_removed"] == 8 * n
    assert np.all(g.src != g.dst)
    deg = g.degrees()
    assert deg.max() > 20 * deg.mean()  # power-law-like hubs
    again = rmat(12, 8, seed=1)
    assert np.array_equal(g.src, again.src)


def test_rmat_quadrant_probabilities():
    # a = 1: every edge stays in quadrant (0, 0) at every level -> only vertex 0 -> all self-loops
    g = rmat(4, 2, a=1.0, b=0.0, c=0.0, permute=False, simple=False)
    assert np.all(g.src == 0) and np.all(g.dst == 0)
    # b = 1: always (0, 1): u = 0, v = all ones
    g = rmat(4, 2, a=0.0, b=1.0, c=0.0, permute=False, simple=False)
    assert np.all(g.src == 0) and np.all(g.dst == 15)


def test_uniform_weights_and_bad_arguments():
    g = grid(5, 5, weights="uniform", seed=2)
    assert g.weight.min() >= 1 and g.weight.max() <= 100 and np.all(g.weight == np.rint(g.weight))
    with pytest.raises(InputError, match="unknown weights 'heavy'"):
        grid(2, 2, weights="heavy")
    with pytest.raises(InputError, match="G\\(n, m\\) needs"):
        erdos_renyi(4, 7)
    with pytest.raises(InputError, match="rmat probabilities"):
        rmat(4, a=0.9, b=0.9, c=0.0)
    with pytest.raises(InputError, match="a grid needs positive sides"):
        grid(0, 3)
