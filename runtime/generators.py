"""Vectorised, seeded generators of benchmark graphs: RMAT, Erdős–Rényi, grids.

Every generator returns an `ir_graph.Graph` and takes a ``seed``; the same
arguments give the same graph. ``simple=True`` (default) removes self-loops
and repeated edges (an undirected pair counts once) and records how many in
``meta``; edge weights are 1 or, with ``weights="uniform"``, integers drawn
uniformly from 1..100 (the LonestarGPU convention for SSSP inputs).
"""

import numpy as np

from vcut_base.errors import InputError
from ir_graph.graph import Graph, index_dtype

__all__ = ["rmat", "erdos_renyi", "grid"]

_WEIGHTS = ("unit", "uniform")


def _weights(kind, m, rng):
    if kind not in _WEIGHTS:
        raise InputError(f"unknown weights {kind!r}; use unit or uniform")
    if kind == "unit":
        return np.ones(m)
    return rng.integers(1, 101, size=m).astype(np.float64)


def _finish(n, u, v, weights, rng, simple, meta):
    loops = dups = 0
    if simple:
        keep = u != v
        loops = int((~keep).sum())
        u, v = u[keep], v[keep]
        a, b = np.minimum(u, v), np.maximum(u, v)
        _, first = np.unique(a * n + b, return_index=True)
        first.sort()  # keep the first occurrence, in generation order
        dups = len(u) - len(first)
        u, v = u[first], v[first]
    idt = index_dtype(max(n, len(u)))
    meta = dict(meta, self_loops_removed=loops, repeated_edges_removed=dups)
    return Graph(n=int(n), src=u.astype(idt), dst=v.astype(idt),
                 weight=_weights(weights, len(u), rng), directed=False, meta=meta).validate()


def rmat(scale, edge_factor=16, *, a=0.57, b=0.19, c=0.19, seed=0, weights="unit",
         simple=True, permute=True):
    """An RMAT graph (Chakrabarti et al.) with ``2**scale`` vertices.

    ``edge_factor * 2**scale`` edges are drawn: at each of ``scale`` levels an
    edge picks the quadrant (0, 0), (0, 1), (1, 0), (1, 1) with probabilities
    ``a, b, c, 1 - a - b - c`` (defaults: Graph500). With ``permute`` the vertex
    ids are shuffled (seeded), so that degree does not follow the id.
    """
    if scale < 1 or edge_factor < 1:
        raise InputError(f"rmat needs scale >= 1 and edge_factor >= 1, got {scale}, {edge_factor}")
    d = 1.0 - a - b - c
    if min(a, b, c, d) < 0:
        raise InputError(f"rmat probabilities must be non-negative and sum to at most 1: {a}, {b}, {c}")
    rng = np.random.default_rng(seed)
    n = 1 << scale
    m = edge_factor * n
    u = np.zeros(m, dtype=np.int64)
    v = np.zeros(m, dtype=np.int64)
    for level in range(scale):
        r = rng.random(m)
        right = ((r >= a) & (r < a + b)) | (r >= a + b + c)
        down = r >= a + b
        u |= down.astype(np.int64) << level
        v |= right.astype(np.int64) << level
    if permute:
        perm = rng.permutation(n)
        u, v = perm[u], perm[v]
    return _finish(n, u, v, weights, rng, simple,
                   {"generator": "rmat", "scale": scale, "edge_factor": edge_factor,
                    "abcd": [a, b, c, d], "seed": seed})


def erdos_renyi(n, m, *, seed=0, weights="unit"):
    """G(n, m): ``m`` distinct undirected edges chosen uniformly (no self-loops)."""
    if n < 2 or m < 0 or m > n * (n - 1) // 2:
        raise InputError(f"G(n, m) needs n >= 2 and 0 <= m <= n(n-1)/2, got n = {n}, m = {m}")
    rng = np.random.default_rng(seed)
    keys = np.zeros(0, dtype=np.int64)
    while len(keys) < m:
        want = int((m - len(keys)) * 1.1) + 16
        u = rng.integers(0, n, size=want)
        v = rng.integers(0, n, size=want)
        ok = u != v
        a, b = np.minimum(u[ok], v[ok]), np.maximum(u[ok], v[ok])
        new = a * n + b
        merged = np.concatenate([keys, new])
        _, first = np.unique(merged, return_index=True)
        first.sort()
        keys = merged[first][:m]
    return _finish(n, keys // n, keys % n, weights, rng, False,
                   {"generator": "erdos_renyi", "n": n, "m": m, "seed": seed})


def grid(rows, cols, *, seed=0, weights="unit"):
    """A ``rows x cols`` 4-neighbour lattice (road-network-like: low, even degree).

    Vertex ``(r, c)`` is ``r * cols + c``; edges go right then down.
    """
    if rows < 1 or cols < 1:
        raise InputError(f"a grid needs positive sides, got {rows} x {cols}")
    rng = np.random.default_rng(seed)
    ids = np.arange(rows * cols, dtype=np.int64).reshape(rows, cols)
    u = np.concatenate([ids[:, :-1].ravel(), ids[:-1, :].ravel()])
    v = np.concatenate([ids[:, 1:].ravel(), ids[1:, :].ravel()])
    return _finish(rows * cols, u, v, weights, rng, False,
                   {"generator": "grid", "rows": rows, "cols": cols, "seed": seed})
