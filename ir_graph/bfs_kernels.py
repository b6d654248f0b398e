"""Numba kernel of breadth-first search: hop distances from one source in a CSR graph.

The one plain BFS of vcut: `ir_graph.stats` averages its distances into path lengths, and
the scheduler's bfs-batch job (`runtime.scheduler.jobs.bfs_batch`) runs it per source; that
job's GPU kernel, `runtime.scheduler.jobs.job_kernels_gpu.bfs_distances_gpu`, is its twin
(one block per source, level by level). The traversals of ``vcut bfs``
(`runtime.traversal_kernels`) are other algorithms: weighted SSSP relaxations under
GPU work decompositions (BFS there is SSSP with unit weights, counting the work of each
decomposition) and direction-optimising BFS (bottom-up steps over the in-edges).
"""

import numpy as np

from vcut_base.jitcache import njit

__all__ = ["bfs_distances"]


@njit(cache=True)
def bfs_distances(indptr, indices, source):
    """Hop distances from ``source`` in a CSR graph (-1: unreachable)."""
    n = indptr.shape[0] - 1
    dist = np.full(n, -1, dtype=np.int64)
    queue = np.empty(n, dtype=np.int64)
    dist[source] = 0
    queue[0] = source
    head = 0
    tail = 1
    while head < tail:
        u = queue[head]
        head += 1
        for j in range(indptr[u], indptr[u + 1]):
            v = indices[j]
            if dist[v] < 0:
                dist[v] = dist[u] + 1
                queue[tail] = v
                tail += 1
    return dist
