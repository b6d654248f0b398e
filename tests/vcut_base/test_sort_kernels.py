"""vcut_base.sort_kernels.stable_argsort: numpy's stable argsort order, for every key dtype
the kernels sort (ties in index order), at every size around the insertion runs."""

import numpy as np
import pytest

from vcut_base.sort_kernels import RUN, stable_argsort


@pytest.mark.parametrize("dtype", [np.int64, np.uint64, np.int32, np.float64])
@pytest.mark.parametrize("n", [0, 1, 2, RUN - 1, RUN, RUN + 1, 2 * RUN + 3, 1000])
def test_matches_numpy_stable(dtype, n):
    rng = np.random.default_rng(n)
    for span in (3, 1 << 20):  # many ties, then few
        keys = rng.integers(0, span, n).astype(dtype)
        got = stable_argsort(keys)
        assert got.dtype == np.int64
        np.testing.assert_array_equal(got, np.argsort(keys, kind="stable"))


def test_ties_keep_index_order():
    keys = np.array([2, 1, 2, 1, 0, 2], np.int64)
    np.testing.assert_array_equal(stable_argsort(keys), [4, 1, 3, 0, 2, 5])


def test_extremes_of_the_dtype():
    keys = np.array([np.iinfo(np.int64).max, -1, np.iinfo(np.int64).min, 0], np.int64)
    np.testing.assert_array_equal(stable_argsort(keys), [2, 1, 3, 0])
    u = np.array([np.iinfo(np.uint64).max, 0, 1 << 63], np.uint64)
    np.testing.assert_array_equal(stable_argsort(u), [1, 2, 0])
