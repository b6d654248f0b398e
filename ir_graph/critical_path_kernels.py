"""Numba kernel of the critical path: the longest path of an IR graph (a DAG).

`ir_graph.stats` reports it by total edge weight and by edge count.
"""

import numpy as np

from vcut_base.jitcache import njit
from vcut_base.sort_kernels import stable_argsort

__all__ = ["longest_path"]


@njit(cache=True)
def longest_path(n, src, dst, weight):
    """Longest path of a DAG whose edges all satisfy ``src < dst``.

    Returns ``(length_in_weight, length_in_edges)`` over all paths; edges are
    visited in increasing destination order, which is topological here.
    """
    order = stable_argsort(dst)
    dist_w = np.zeros(n, dtype=np.float64)
    dist_e = np.zeros(n, dtype=np.int64)
    for k in range(order.shape[0]):
        e = order[k]
        u = src[e]
        v = dst[e]
        if dist_w[u] + weight[e] > dist_w[v]:
            dist_w[v] = dist_w[u] + weight[e]
        if dist_e[u] + 1 > dist_e[v]:
            dist_e[v] = dist_e[u] + 1
    best_w = 0.0
    best_e = 0
    for v in range(n):
        if dist_w[v] > best_w:
            best_w = dist_w[v]
        if dist_e[v] > best_e:
            best_e = dist_e[v]
    return best_w, best_e
