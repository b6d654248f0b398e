"""numba.cuda kernels of the job kinds and their device cache (imported only when a
GPU call runs)."""

import weakref

from numba import cuda, float64, int32

TILE = 16  # matmul tile edge (a compile-time constant of the shared arrays)


@cuda.jit
def search(buf, pattern, flags):
    # one thread per position of the bundle (chunks and their overlaps, end to end)
    i = cuda.grid(1)
    if i >= buf.shape[0]:
        return
    flags[i] = 0
    m = pattern.shape[0]
    if i + m > buf.shape[0]:
        return
    for j in range(m):
        if buf[i + j] != pattern[j]:
            return
    flags[i] = 1


@cuda.jit
def mm(a, b, c):
    # classic tiled product: a block computes a TILE x TILE tile of c
    sa = cuda.shared.array((TILE, TILE), float64)
    sb = cuda.shared.array((TILE, TILE), float64)
    tx, ty = cuda.threadIdx.x, cuda.threadIdx.y
    row = cuda.blockIdx.y * TILE + ty
    col = cuda.blockIdx.x * TILE + tx
    n = b.shape[0]
    acc = 0.0
    for t in range((n + TILE - 1) // TILE):
        k = t * TILE
        sa[ty, tx] = a[row, k + tx] if row < a.shape[0] and k + tx < n else 0.0
        sb[ty, tx] = b[k + ty, col] if k + ty < n and col < b.shape[1] else 0.0
        cuda.syncthreads()
        for j in range(TILE):
            acc += sa[ty, j] * sb[j, tx]
        cuda.syncthreads()
    if row < c.shape[0] and col < c.shape[1]:
        c[row, col] = acc


@cuda.jit
def bfs_distances_gpu(indptr, indices, sources, dist):
    # the GPU twin of ir_graph.bfs_kernels.bfs_distances, from every source of ``sources``
    # (dist[s]: the hop distances from sources[s], -1 unreached; the same numbers as the
    # CPU's queue BFS, found level by level instead of in queue order).
    # One block per source, level-synchronous: at each level the block's threads sweep
    # the vertices (one thread per (source, vertex) pair), expand those at the level,
    # and stop after a level that reached nothing (a shared flag). Concurrent writers
    # of dist[s, w] all write the same level + 1, and only -1 entries change, so
    # the sweep never sees a vertex move into the level it is expanding.
    s = cuda.blockIdx.x
    t, nt = cuda.threadIdx.x, cuda.blockDim.x
    n = dist.shape[1]
    more = cuda.shared.array(1, int32)
    for v in range(t, n, nt):
        dist[s, v] = -1
    cuda.syncthreads()
    if t == 0:
        dist[s, sources[s]] = 0
    level = 0
    while True:
        if t == 0:
            more[0] = 0
        cuda.syncthreads()
        for v in range(t, n, nt):
            if dist[s, v] == level:
                for j in range(indptr[v], indptr[v + 1]):
                    w = indices[j]
                    if dist[s, w] < 0:
                        dist[s, w] = level + 1
                        more[0] = 1
        cuda.syncthreads()
        if more[0] == 0:
            return
        level += 1
        cuda.syncthreads()  # every thread has read the flag before thread 0 clears it


def on_device(gpu, job, name, make):
    """``make()``'s device arrays for ``job``, made once per device and kept in
    ``gpu.cache`` (the setup transfer). Entries hold the job by weak reference: a
    new job that reuses a dead job's ``id`` never gets its data, and dead jobs'
    entries are dropped (freeing their device memory) when a new entry is made."""
    key = ("job", id(job), name)
    hit = gpu.cache.get(key)
    if hit is not None and hit[0]() is job:
        return hit[1]
    for k in [k for k, v in gpu.cache.items()
              if isinstance(k, tuple) and k[:1] == ("job",) and v[0]() is None]:
        del gpu.cache[k]
    data = make()
    gpu.cache[key] = (weakref.ref(job), data)
    return data
