"""SPAC: split-and-connect edge partitioning (Li et al., POMACS 2017), and its baselines.

Ψ (`split_and_connect`): every vertex ``v`` of degree ``d`` becomes ``d`` clones,
one per incident edge; every edge ``(u, v)`` becomes a *dominant* edge between
its clone of ``u`` and its clone of ``v``; the clones of ``v`` (in edge order)
are joined by ``d - 1`` *auxiliary* edges into a path, closed into a cycle
when ``d >= 3`` (``cycles=True``, as in the experiments). Two forms:

* ``split``: 2m vertices; dominant edges get weight `DOMINANT_WEIGHT` (1000,
  the experiments' "infinite"), auxiliary edges 1; each clone weighs half of
  its edge's weight;
* ``contracted`` (default): each dominant edge's two clones merged into one
  vertex, so vertex ``e`` *is* edge ``e`` and no dominant edge can be cut; the
  auxiliary edges join consecutive edges around each original vertex; m
  vertices, each weighing its edge's weight.

Vertex weights are the original edge weights (scaled to integers with a mean
of about 100), so the backend balances weight, as the framework requires.

Ω (`reconstruct`): edge ``e`` goes to the part of its vertex (contracted) or
of its ``u`` clone (split; the rare cut dominant edges are counted).

Backends (one interface, `runtime.vertex_partition.vertex_partition`): ``multilevel``
(the runtime's own, `runtime.multilevel`), ``metis`` (pymetis), ``kahip``
(kaffpa, eco preset). Per-part targets (heterogeneous capacities) go to METIS
as ``tpwgts``; KaHIP cannot take them and says so.

Baselines: ``wvp-random`` / ``wvp-greedy`` (Bourse et al.: a METIS vertex
partition of the graph weighted by degree; an uncut edge goes to its
endpoints' part, a cut edge to a random one of its two endpoints' parts, or
to the less loaded of them) and ``hypergraph`` (Mt-KaHyPar, a node per edge, a
hyperedge per vertex with degree >= 2, connectivity - 1, epsilon = imbalance - 1).
"""

import time
from dataclasses import dataclass

import numpy as np

from vcut_base.errors import InputError, VcutError
from vcut_base.memory import available_bytes
from ir_graph.edge_lists import degrees
from runtime.gpu import resolve_device
from runtime.vertex_partition import C_INT_SEEDS, vertex_partition

from . import spac_kernels

__all__ = [
    "SplitGraph",
    "split_and_connect",
    "reconstruct",
    "spac_assign",
    "wvp_assign",
    "hypergraph_assign",
    "BACKENDS",
    "DOMINANT_WEIGHT",
]

BACKENDS = ("metis", "kahip", "multilevel")
DOMINANT_WEIGHT = 1000
_BYTES_PER_ADJ = 24  # adjncy + adjwgt + working copies, per directed entry


@dataclass(frozen=True, eq=False)
class SplitGraph:
    """The transformed graph Ψ(D) in METIS CSR form."""

    n: int
    xadj: np.ndarray
    adjncy: np.ndarray
    adjwgt: np.ndarray
    vwgt: np.ndarray
    contracted: bool
    n_aux: int


def estimate_bytes(m, n_active, contracted):
    """Memory the transformed graph needs, in bytes (estimated before building it)."""
    aux = 2 * m  # at most one auxiliary edge per clone (cycles)
    nverts = m if contracted else 2 * m
    edges = aux + (0 if contracted else m)
    return int(nverts * 24 + 2 * edges * _BYTES_PER_ADJ)


#: integer weights are given to the backends times 100 (exact ratios, halves exact in the
#: split form) while that sum stays below this (METIS's 32-bit idx_t with room to spare);
#: others are scaled to a mean of 100 and rounded
EXACT_WEIGHT_SUM = 2**30


def _int_weights(w):
    """Positive integer weights: 100 × the weights when they are positive integers (so the
    backends' balance bound is the edges' own), else scaled to a mean of about 100 and
    rounded. (Rounding weights 1 and 2 of mean 1.14 to 88 and 175 let SPAC's edge balance
    reach 1.031 under a 1.03 bound on cnr-2000.)"""
    w = np.asarray(w, dtype=np.float64)
    with np.errstate(over="ignore"):  # a sum past the float64 range is inf: not exact
        total = w.sum() if len(w) else 0.0
    if len(w) and w.min() >= 1 and 100.0 * total < EXACT_WEIGHT_SUM and (w == np.rint(w)).all():
        return 100 * w.astype(np.int64)
    if len(w) and w.max() > 0:  # relative to the largest first: huge weights overflow a sum
        w = w / w.max()
    mean = w.mean() if len(w) and w.mean() > 0 else 1.0
    return np.maximum(1, np.rint(100.0 * w / mean)).astype(np.int64)


def split_and_connect(src, dst, weight, n, *, contracted=True, cycles=True,
                      dominant_weight=DOMINANT_WEIGHT, memory_limit=None):
    """The Ψ transform of a simple graph (see the module docstring).

    Raises
    ------
    InputError
        When the transformed graph would not fit in memory (with the numbers).
    """
    m = len(src)
    need = estimate_bytes(m, n, contracted)
    avail = available_bytes() if memory_limit is None else memory_limit
    if need > 0.8 * avail:
        raise InputError(
            f"SPAC's transformed graph would need about {need / 2**30:.1f} GiB but only "
            f"{avail / 2**30:.1f} GiB of memory are available; use the contracted form, a "
            "streaming partitioner (wb-libra, hdrf) or a machine with more memory"
        )
    a, b, aw, n_aux = spac_kernels.split_pairs(
        np.asarray(src, np.int64), np.asarray(dst, np.int64), int(n), contracted, cycles,
        int(dominant_weight),
    )
    wi = _int_weights(weight)
    if contracted:
        nv = m
        vwgt = wi
    else:
        nv = 2 * m
        vwgt = np.repeat(np.maximum(1, (wi + 1) // 2), 2)
    xadj, adjncy, adjwgt = spac_kernels.symmetric_csr(a, b, aw, nv)
    return SplitGraph(n=nv, xadj=xadj, adjncy=adjncy, adjwgt=adjwgt, vwgt=vwgt,
                      contracted=contracted, n_aux=int(n_aux))








def reconstruct(parts, m, contracted):
    """Ω: the edge partition from the vertex partition; ``(assign, cut_dominant)``."""
    if contracted:
        return np.asarray(parts[:m], dtype=np.int32), 0
    a = np.asarray(parts[0::2], dtype=np.int32)
    b = np.asarray(parts[1::2], dtype=np.int32)
    return a, int(np.count_nonzero(a != b))


def spac_assign(src, dst, weight, n, k, *, backend="metis", contracted=True, cycles=True,
                imbalance=1.03, targets=None, seed=0, device="cpu"):
    """SPAC: Ψ, a balanced vertex partition, Ω. Returns ``(assign, info)``; ``device``: where
    the multilevel backend runs (on the GPU with the contracted form, Ψ is built there too)."""
    if backend == "multilevel" and contracted and device != "cpu":
        if resolve_device(device) == "gpu":
            return _spac_on_device(src, dst, weight, n, k, cycles, imbalance, targets, seed)
    t0 = time.perf_counter()
    sg = split_and_connect(src, dst, weight, n, contracted=contracted, cycles=cycles)
    t1 = time.perf_counter()
    parts = vertex_partition(sg.xadj, sg.adjncy, sg.adjwgt, sg.vwgt, k, backend=backend,
                             imbalance=imbalance, targets=targets, seed=seed, device=device)
    t2 = time.perf_counter()
    assign, cut_dom = reconstruct(parts, len(src), contracted)
    t3 = time.perf_counter()
    info = {"backend": backend, "device": device, "variant": "contracted" if contracted else "split",
            "transformed_vertices": sg.n, "auxiliary_edges": sg.n_aux,
            "cut_dominant_edges": cut_dom, "transform_seconds": t1 - t0,
            "partition_seconds": t2 - t1, "reconstruct_seconds": t3 - t2,
            "auxiliary_cut": _aux_cut(sg, parts)}
    return assign, info


def _spac_on_device(src, dst, weight, n, k, cycles, imbalance, targets, seed):
    """SPAC with Ψ (contracted) built on the GPU and partitioned there; Ω is the vertex
    partition itself (vertex e is edge e), so only the parts come back."""
    # lazy: numba.cuda is optional (the GPU's multilevel partitioner)
    from runtime.multilevel import multilevel_partition
    from runtime.multilevel.gpu import split_graph_on_device  # lazy: numba.cuda is optional

    t0 = time.perf_counter()
    sg = split_graph_on_device(np.asarray(src, np.int64), np.asarray(dst, np.int64),
                               _int_weights(weight), int(n), cycles)
    t1 = time.perf_counter()
    res = multilevel_partition(sg, k, device="gpu", imbalance=imbalance - 1.0, seed=seed,
                               targets=targets)
    t2 = time.perf_counter()
    info = {"backend": "multilevel", "device": "gpu", "variant": "contracted",
            "transformed_vertices": sg.n, "auxiliary_edges": sg.m, "cut_dominant_edges": 0,
            "transform_seconds": t1 - t0, "partition_seconds": t2 - t1,
            "reconstruct_seconds": 0.0, "auxiliary_cut": int(res.cut)}
    return res.part.astype(np.int32), info


def _aux_cut(sg, parts):
    """Auxiliary edges whose ends lie in different parts (each counted once)."""
    return int(spac_kernels.aux_cut(sg.xadj, sg.adjncy, sg.adjwgt, np.asarray(parts)))


def wvp_assign(src, dst, weight, n, k, *, greedy, imbalance=1.03, targets=None, seed=0):
    """WVP baseline (Bourse et al.): degree-weighted vertex partition, then edges."""
    deg = degrees(src, dst, n)
    u = np.concatenate([src, dst]).astype(np.int64)
    v = np.concatenate([dst, src]).astype(np.int64)
    idx = np.argsort(u, kind="stable")
    xadj = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(u, minlength=n), out=xadj[1:])
    parts = vertex_partition(xadj, v[idx], np.ones(len(v), np.int64), np.maximum(deg, 1), k,
                             imbalance=imbalance, targets=targets, seed=seed)
    pu, pv = parts[src], parts[dst]
    assign = pu.astype(np.int32).copy()
    cut = np.flatnonzero(pu != pv)
    if greedy:
        load = np.bincount(assign[pu == pv], weights=np.asarray(weight)[pu == pv], minlength=k)
        cap = np.full(k, 1.0 / k) if targets is None else np.asarray(targets)
        for ei in cut.tolist():
            a, b = pu[ei], pv[ei]
            c = a if (load[a] / cap[a], a) <= (load[b] / cap[b], b) else b
            assign[ei] = c
            load[c] += weight[ei]
    else:
        pick = np.random.default_rng(seed).random(len(cut)) < 0.5
        assign[cut] = np.where(pick, pv[cut], pu[cut])
    return assign


_MTK = {}


def _mtkahypar(threads):
    """Mt-KaHyPar may be initialised once per process."""
    import mtkahypar  # lazy: mtkahypar is optional

    if "init" not in _MTK:
        _MTK["init"] = mtkahypar.initialize(threads)
    return _MTK["init"]


def hypergraph_assign(src, dst, weight, n, k, *, imbalance=1.03, seed=0, preset="default",
                      threads=1):
    """The hypergraph model with Mt-KaHyPar (connectivity - 1 objective)."""
    try:
        import mtkahypar  # lazy: mtkahypar is optional
    except ImportError:
        raise VcutError("the hypergraph baseline needs mtkahypar: pip install mtkahypar") from None
    m = len(src)
    ends = np.concatenate([src, dst]).astype(np.int64)
    edge = np.concatenate([np.arange(m), np.arange(m)])
    order = np.lexsort((edge, ends))
    v_sorted, e_sorted = ends[order], edge[order]
    starts = np.flatnonzero(np.r_[True, v_sorted[1:] != v_sorted[:-1]])
    stops = np.r_[starts[1:], len(v_sorted)]
    nets = [e_sorted[a:b].tolist() for a, b in zip(starts, stops) if b - a >= 2]
    if k == 1 or not nets:
        return np.zeros(m, dtype=np.int32)
    init = _mtkahypar(threads)
    mtkahypar.set_seed(int(seed) % C_INT_SEEDS)
    presets = {"default": mtkahypar.PresetType.DEFAULT, "quality": mtkahypar.PresetType.QUALITY}
    ctx = init.context_from_preset(presets[preset])
    # epsilon at most k - 1: a block may then hold everything (larger ones overflow its bound)
    epsilon = min(float(imbalance) - 1.0, float(k - 1))
    ctx.set_partitioning_parameters(int(k), epsilon, mtkahypar.Objective.KM1)
    ctx.logging = False
    hg = init.create_hypergraph(ctx, m, len(nets), nets, _int_weights(weight).tolist(),
                                [1] * len(nets))
    part = hg.partition(ctx)
    return np.array([part.block_id(i) for i in range(m)], dtype=np.int32)
