"""ir_graph.replica_kernels.heap_sort and the stable group sort built on it."""

import numpy as np
import pytest

from ir_graph.edge_lists import execution_order
from ir_graph import replica_kernels
from ir_graph.replica_kernels import sort_run
from tests.helpers import from_python


@pytest.mark.parametrize("k", [0, 1, 2, 3, 32, 33, 100, 1000])
@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.float64])
def test_heap_sort_sorts_a_range_in_place(k, dtype):
    rng = np.random.default_rng(k)
    a = rng.integers(-50, 50, k + 10).astype(dtype)  # repeats included
    want = a.copy()
    want[4:4 + k] = np.sort(a[4:4 + k])
    from_python(replica_kernels.heap_sort)(a, 4, 4 + k)
    assert np.array_equal(a, want)  # the entries outside the range untouched


@pytest.mark.parametrize("k", [5, 33, 64, 500])
def test_sort_run_either_side_of_32(k):
    a = np.random.default_rng(k).permutation(3 * k).astype(np.int64)
    want = a.copy()
    want[k:2 * k] = np.sort(a[k:2 * k])
    sort_run(a, k, 2 * k)
    assert np.array_equal(a, want)


def test_execution_order_is_a_stable_sort_by_dst_then_src():
    rng = np.random.default_rng(7)
    m = 20000
    dst = np.sort(rng.integers(0, 300, m))  # long runs of one dst (about 67 edges each)
    src = rng.integers(0, 40, m)  # many repeats: stability decides their order
    order = execution_order(src, dst)
    assert order is not None
    assert np.array_equal(order, np.lexsort((src, dst)))  # lexsort is stable
