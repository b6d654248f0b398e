"""The compact replica sets of the streaming kernels (inline ids + overflow
bitsets) against the dense bitsets: the same partitions, and final sets equal
to the clusters each vertex's edges were given."""

import numpy as np
import pytest

from ir_graph.replicas import INLINE, replica_set_bytes, replica_sets
from vcut.greedy_kernels import RULE_LIBRA, RULE_PG, greedy_assign
from vcut.hdrf_kernels import hdrf_assign


def _graph(seed, n, m):
    rng = np.random.default_rng(seed)
    src = rng.zipf(1.5, size=4 * m) % n  # a few vertices of very high degree
    dst = rng.integers(0, n, 4 * m)
    keep = src != dst
    pairs = np.unique(np.stack([np.minimum(src, dst), np.maximum(src, dst)], 1)[keep], axis=0)
    pairs = pairs[rng.permutation(len(pairs))[:m]]
    return pairs[:, 0].astype(np.int64), pairs[:, 1].astype(np.int64), rng.random(len(pairs)) + 0.5


def _members(sets, v):
    cnt, ids, ovf, pool = sets
    if cnt[v] <= ids.shape[1]:
        return sorted(int(c) for c in ids[v, :cnt[v]])
    row = v if ovf.shape[0] == 0 else ovf[v]
    return [c for c in range(64 * pool.shape[1]) if pool[row, c // 64] >> np.uint64(c % 64) & 1]


def _run(kind, src, dst, w, n, p, dense):
    deg = np.bincount(src, minlength=n) + np.bincount(dst, minlength=n)
    cap = np.full(p, 1.0 / p)
    order = np.arange(len(src), dtype=np.int64)
    out = np.empty(len(src), dtype=np.int32)
    sets = replica_sets(n, p, dense=dense)
    if kind == "hdrf":
        pool = hdrf_assign(src, dst, order, n, p, cap, 1.1, 1.0, True,
                                    1.1 * len(src) / p, np.zeros(0, np.int64), out, sets,
                                    np.zeros(2, np.int64))
    else:
        _, pool = greedy_assign(
            src, dst, w, order, n, p, deg.astype(np.int64), cap,
            1.0 * w.sum() if kind.startswith("wb") else np.inf,
            RULE_LIBRA if "libra" in kind else RULE_PG, out, sets,
            np.zeros(2, np.int64))
    return out, sets[:3] + (pool,)


@pytest.mark.parametrize("kind", ["pg", "wb-libra", "hdrf"])
@pytest.mark.parametrize("p", [3, 64, 200])
def test_compact_sets_partition_like_dense_bitsets(kind, p):
    n, m = 3000, 20000
    src, dst, w = _graph(p, n, m)
    dense, dense_sets = _run(kind, src, dst, w, n, p, True)
    compact, compact_sets = _run(kind, src, dst, w, n, p, False)
    np.testing.assert_array_equal(compact, dense)
    # the sets hold exactly the clusters of each vertex's edges
    expect = [set() for _ in range(n)]
    for a, b, c in zip(src.tolist(), dst.tolist(), compact.tolist()):
        expect[a].add(c)
        expect[b].add(c)
    counts = np.array([len(s) for s in expect])
    np.testing.assert_array_equal(compact_sets[0], counts)
    np.testing.assert_array_equal(dense_sets[0], counts)
    for v in range(n):
        assert _members(compact_sets, v) == sorted(expect[v])
        assert _members(dense_sets, v) == sorted(expect[v])
    if p == 200:  # more vertices overflow than the first pool has rows: it grew
        assert (counts > INLINE).sum() > 64


def test_compact_sets_are_smaller_above_two_words():
    n = 10**6
    assert replica_set_bytes(n, 128) == n * (4 + 16)  # dense: two words
    assert replica_set_bytes(n, 1024) == n * (4 + 4 + 3 * 2)  # int16 ids
    assert replica_set_bytes(n, 40000) == n * (4 + 4 + 3 * 4)
    cnt, ids, ovf, pool = replica_sets(n, 1024)
    assert (ids.dtype, ids.shape, ovf.dtype, pool.shape) == (np.int16, (n, 3), np.int32,
                                                              (976, 16))
