"""The order in which a streaming partitioner sees the edges: a BFS or DFS over the
vertices (`stream_order`, numba)."""

import numpy as np

from vcut_base.jitcache import njit

__all__ = ["stream_order"]


@njit(cache=True)
def stream_order(indptr, adj_edge, adj_vertex, n, m, depth_first):
    """Edges in the order a BFS (or DFS) over vertices discovers them.

    Traversal starts at vertex 0 and restarts at the lowest unvisited vertex;
    visiting a vertex emits its not yet emitted edges in adjacency order.
    """
    order = np.empty(m, dtype=np.int64)
    emitted = np.zeros(m, dtype=np.bool_)
    seen = np.zeros(n, dtype=np.bool_)
    stack = np.empty(n + m + 1, dtype=np.int64)
    k = 0
    for root in range(n):
        if seen[root]:
            continue
        head = 0
        tail = 0
        stack[tail] = root
        tail += 1
        seen[root] = True
        while head < tail:
            if depth_first:
                tail -= 1
                x = stack[tail]
            else:
                x = stack[head]
                head += 1
            for j in range(indptr[x], indptr[x + 1]):
                e = adj_edge[j]
                if not emitted[e]:
                    emitted[e] = True
                    order[k] = e
                    k += 1
                y = adj_vertex[j]
                if not seen[y]:
                    seen[y] = True
                    stack[tail] = y
                    tail += 1
            if depth_first:
                head = 0
    return order[:k]
