"""vcut_base.arrays.unique equals numpy.unique."""

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from vcut_base.arrays import unique


@given(st.lists(st.integers(-2**62, 2**62)))
def test_unique_matches_numpy(values):
    x = np.array(values, dtype=np.int64)
    assert np.array_equal(unique(x), np.unique(x))


def test_unique_edge_cases():
    assert unique(np.array([], dtype=np.uint64)).dtype == np.uint64
    assert unique(np.array([3, 3, 3])).tolist() == [3]
    assert unique(np.array([[2, 1], [2, 5]])).tolist() == [1, 2, 5]
