"""numba.cuda kernels of the job kinds (imported only when a GPU call runs)."""

from numba import cuda, float64

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
def bfs(indptr, indices, sources, dist, queue):
    s = cuda.grid(1)
    if s >= sources.shape[0]:
        return
    n = dist.shape[1]
    for v in range(n):
        dist[s, v] = -1
    dist[s, sources[s]] = 0
    queue[s, 0] = sources[s]
    head, tail = 0, 1
    while head < tail:
        v = queue[s, head]
        head += 1
        for j in range(indptr[v], indptr[v + 1]):
            w = indices[j]
            if dist[s, w] < 0:
                dist[s, w] = dist[s, v] + 1
                queue[s, tail] = w
                tail += 1
