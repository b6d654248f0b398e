"""Quality mode: neighbour expansion, HEP and replica refinement.

``ne``
    Neighbour expansion (Zhang et al., KDD 2017). Clusters are grown one at a
    time: the boundary vertex with the fewest unassigned edges moves into the
    core, its neighbours join the boundary and every unassigned edge between
    two boundary vertices goes to the cluster, until the cluster holds its
    share of the edge weight (its capacity fraction times the total); a new
    random seed vertex (``seed``) starts when the boundary runs dry; the last
    cluster takes the rest. The capacity is checked after every edge, so each
    cluster ends within one edge weight of its share: balance is strict, where
    the reference NE overshoots at high k.
``hep``
    HEP (Mayer & Jacobsen, SIGMOD 2021): a vertex is *high-degree* when its
    degree exceeds ``tau`` times the mean degree. The edges with a low-degree
    endpoint are partitioned in memory by NE++ (neighbour expansion in which
    high-degree vertices count as in every core: they are never expanded or
    scanned, and a vertex joining a boundary takes its edges to them at once);
    the edges between two high-degree vertices are then streamed, in edge
    order, with HDRF (`hdrf_rest`) starting from the replicas NE++ made.
``refine``
    Any edge partition: moves of a vertex's edge group (its edges in one
    cluster) to another cluster when that lowers the number of replicas (the
    hypergraph connectivity - 1), never past the balance bound ``imbalance``
    times each cluster's share; label-propagation passes over the replicated
    vertices in a seeded random order until a pass moves nothing. Each pass
    is linear in sum_v sum_{u in N(v)} |A(u)|. Then FM (`vcut.fm_kernels`): localised
    searches of single-edge moves that may pass through zero or negative
    gains, each rolled back to its best prefix.
``metis``
    `metis_assign`: each edge owned by its endpoint of lower degree, a METIS
    vertex partition of the vertices weighted by the edge weight they own, and
    each edge in its owner's part.
``best``
    The quality mode: `BEST_STARTS` neighbour expansions or, on graphs that
    `runs_vertex_partitions` accepts (mesh-like with at least `SPAC_PER_PART`
    edges per cluster), the METIS cut beside `MESH_STARTS` expansion; the fewest-replica
    expansion and the METIS cut (when within the bound) refined in full side
    by side; the candidate with fewer replicas. It runs on the
    `canonical_graph`, so that neither the order of the edges nor the numbering
    of the vertices changes the result (but for vertices colour refinement
    cannot tell apart).
"""

import functools
import math

import numpy as np

from vcut_base.errors import InputError, VcutError
from vcut_base.memory import check_memory, jobs_that_fit
from vcut_base.progress import run_kernel, run_parallel


__all__ = ["ne_assign", "hep_assign", "refine_assignment", "best_assign", "canonical_edges",
           "canonical_graph", "canonical_labels", "metis_assign",
           "mesh_like", "runs_vertex_partitions", "runs_hep",
           "DEFAULT_TAU", "BEST_TAU", "REFINE_PASSES", "REFINE_SLACK"]

DEFAULT_TAU = 10.0
BEST_TAU = 10.0
REFINE_PASSES = 32
REFINE_SLACK = 2
#: the dissolving passes' closing pass skips vertices whose inputs did not change
#: (`expansion_kernels.refine`; the same result either way, tested)
REFINE_SKIP = True
BEST_STARTS = 4
#: expansions beside the METIS cut on a mesh-like graph, where that cut is the one that wins
MESH_STARTS = 1
FM_PASSES = 8
FM_SLACK = 4
FM_LIMIT = 16
#: a search ends at its first move that takes it this far below its best prefix (0: zero-gain
#: plateaus are walked, a losing step ends it: on the slow cells of `bench/bench_quality.py`
#: 11-40 % faster than searches that go on to `FM_LIMIT`, at the same replicas)
FM_DROP = 0
FM_HUB = 1024
#: FM tries at most this many moves per edge in all (kept or undone; checked before each
#: search): its work is linear in the edges whatever the number of passes
FM_BUDGET = 0.3
SPAC_CV = 0.5
#: `best` runs SPAC on graphs of at least this many edges per cluster: METIS k-way
#: coarsens no further than 30 k vertices (METIS 5.1's ``CoarsenTo``), and below a tenth
#: of the SPAC graph (about one vertex per edge) that floor makes its cost an initial
#: partitioning at near full size; from 300 to 500 edges per cluster (3elt and data at
#: k = 32) SPAC took 18-19 ms, 3-4 times the refined expansion, for 1.6-3.6 % fewer
#: replicas, both below NE's and HEP's (measured with `bench/bench_quality.py`)
SPAC_PER_PART = 500
HEP_LAMBDA = 1.1
HEP_EPS = 1.0


def _seeds(n, seed):
    return np.random.default_rng(seed).permutation(n).astype(np.int64)


def expansion_bytes(n, m):
    """Bytes one neighbour expansion allocates on ``n`` vertices and ``m`` edges."""
    # incidence (2m int64) and its other ends (2m, at most int64), out (m), per-vertex:
    # live, rem, in_s, heap, hkey, hpos, seeds, ptr
    return 16 * m + 16 * m + 8 * m + 64 * n


def _check(n, m, extra=0):
    if n >= 2**31:  # the expansion's heap keys hold a degree and a stamp below 2**31 each
        raise InputError(f"neighbour expansion takes graphs of fewer than 2**31 vertices, got "
                         f"{n:,}; use a streaming partitioner (hdrf, wb-libra)")
    check_memory(expansion_bytes(n, m) + extra, f"neighbour expansion on {n:,} vertices and "
                 f"{m:,} edges", "use a streaming partitioner (hdrf, wb-libra)")


def ne_assign(src, dst, weight, n, cap, *, seed=0, high=None, keep=None, incidence=None):
    """Neighbour expansion; returns the cluster of every edge (int64).

    ``cap``: capacity fractions (sum 1), one per cluster. ``high`` (bool per
    vertex): vertices never expanded (NE++); ``keep`` (bool per edge): the
    edges to partition (the others stay -1). ``incidence``: the ``(ptr,
    adj)`` of `expansion_kernels.incidence` for ``keep``, to reuse (``adj`` is copied).
    """
    from . import expansion_kernels  # (on demand: the kernels load with numba)
    m = len(src)
    _check(n, m)
    keep = np.ones(m, dtype=np.bool_) if keep is None else keep
    high = np.zeros(n, dtype=np.bool_) if high is None else high
    # edge ids and clusters as int32 where they fit: the expansion is bound by its random
    # reads of adj and out (27 % faster on cit-HepPh, MIT8, soc-Slashdot0902)
    ids = np.int32 if m < 2**31 else np.int64
    out = np.where(keep, -1, -2).astype(np.int32)
    if incidence is None:
        ptr, adj = expansion_kernels.incidence_of(src, dst, n, keep, ids)
    else:  # the expansion reorders each vertex's list as it goes: a copy
        ptr, adj = incidence[0], incidence[1].astype(ids)
    total = float(weight[keep].sum())
    caps = np.asarray(cap, dtype=np.float64) * total
    run_kernel("expansion", "edges", int(keep.sum()), expansion_kernels.expand, src, dst, weight,
               ptr, adj, n, caps, high, _seeds(n, seed), out)
    out[out == -2] = -1
    return out.astype(np.int64)


def high_degree(deg, tau):
    """Vertices whose degree exceeds ``tau`` times the mean degree (of vertices with edges)."""
    active = deg > 0
    mean = deg[active].mean() if active.any() else 0.0
    return deg > tau * mean


def hep_assign(src, dst, weight, n, cap, deg, *, tau=DEFAULT_TAU, seed=0,
               memory_advice="raise --tau"):
    """HEP with threshold ``tau``; returns ``(assignment int32, info)``. Its replica table
    of the high-degree vertices is refused (`check_memory`) with ``memory_advice``."""
    from . import expansion_kernels
    if not np.isfinite(tau) or tau <= 0:
        raise InputError(f"tau must be a positive number (HEP's degree threshold), got {tau}")
    high = high_degree(deg, tau)
    h2h = high[src] & high[dst]
    out = ne_assign(src, dst, weight, n, cap, seed=seed, high=high, keep=~h2h)
    rest = np.flatnonzero(h2h).astype(np.int64)
    nh = int(high.sum())
    hid = np.full(n, -1, dtype=np.int64)
    hid[high] = np.arange(nh)
    check_memory(nh * len(cap), f"HEP's replica table of {nh:,} high-degree vertices",
                 memory_advice)
    share = np.asarray(cap, dtype=np.float64)
    load = np.bincount(out[~h2h], weights=weight[~h2h], minlength=len(cap))
    hard = share * float(weight.sum()) + float(weight.max())
    if len(rest):
        run_kernel("hdrf", "edges", len(rest), expansion_kernels.hdrf_rest, src, dst, weight, rest,
                   hid, nh, deg, share, hard, HEP_LAMBDA, HEP_EPS, out, load)
    return out.astype(np.int32), {"tau": float(tau), "high_degree_vertices": nh,
                                  "streamed_edges": int(len(rest))}


def refine_bytes(n, m):
    """Bytes `refine_assignment` allocates at most on ``n`` vertices and ``m`` edges."""
    # incidence 16m, slots 16(m + slack n), FM's versions and locks 16m (the dissolving
    # passes' other ends as much), per-vertex arrays 8n
    return 16 * m + 8 * m + (16 * FM_SLACK + 40) * n + 40 * m


def balance_bounds(imbalance, cap, weight):
    """Each cluster's most edge weight, ``imbalance * cap[c] * W`` (inf where that
    overflows: an imbalance of 1e308 is no bound)."""
    with np.errstate(over="ignore"):
        return imbalance * np.asarray(cap) * float(weight.sum())


def check_count(name, value, low=1):
    """Refuse ``value`` unless it is a whole number >= ``low`` (an int, not a bool): an
    InputError naming ``name`` (FM's passes and search limit, the perturbed rounds)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise InputError(f"{name} must be a whole number >= {low}, got {value!r}")


def _edge_clusters(assignment, m, k):
    """``assignment`` as int64, checked: one cluster in 0..k-1 for each of the m edges."""
    out = np.asarray(assignment).astype(np.int64)
    if out.shape != (m,) or (m and (out.min() < 0 or out.max() >= k)):
        raise InputError(f"a partition to refine must give each of the {m:,} edges a cluster "
                         f"in 0..{k - 1}")
    return out


def refine_assignment(src, dst, weight, n, assignment, cap, *, imbalance=1.03, seed=0,
                      passes=REFINE_PASSES, incidence=None, dissolve=True, fm=True,
                      vertices=None, fm_budget=FM_BUDGET, fm_passes=FM_PASSES,
                      fm_limit=FM_LIMIT):
    """`refine` on a copy of ``assignment``; returns ``(assignment int32, info)``.

    The bound of cluster c is ``imbalance * cap[c] * W``, or its load when
    that is higher already (a cluster over the bound may only lose weight).
    Replica dissolving passes to their fixed point (``dissolve``), then FM
    searches (``fm``). ``vertices`` (a bool per vertex), when given: the
    dissolving passes visit only these vertices (a move takes the edges of
    one of them out of one cluster) and FM searches start only from them
    (`vcut.par_steering` dissolves the replicas of the vertices with slack).
    ``fm_budget``: FM starts no search once it has tried this many moves per
    edge (None: FM runs to its fixed point or ``fm_passes``). ``fm_passes``: FM's passes
    at most; ``fm_limit``: a search stops this many moves after its best prefix.
    """
    from . import expansion_kernels, fm_kernels
    m = len(src)
    k = len(cap)
    out = _edge_clusters(assignment, m, k)
    check_memory(refine_bytes(n, m), f"refinement on {n:,} vertices", "skip --refine")
    if incidence is None:
        ptr, adj = expansion_kernels.incidence(src, dst, n, np.ones(m, dtype=np.bool_))
    else:
        ptr, adj = incidence
    load = np.bincount(out, weights=weight, minlength=k)
    bound = np.maximum(balance_bounds(imbalance, cap, weight), load)
    order = np.random.default_rng(seed).permutation(n).astype(np.int64)
    if vertices is not None:  # only these vertices' edge groups move
        vertices = np.asarray(vertices)
        if vertices.shape != (n,) or vertices.dtype != np.bool_:
            raise InputError(f"the vertices to refine must be {n:,} booleans, one per vertex")
        order = order[vertices[order]]
    info = {"refine_moves": 0, "refine_passes": 0, "fm_moves": 0, "fm_passes": 0, "fm_tried": 0}
    before = replicas = None
    if dissolve:
        moves, run, before, replicas = run_kernel(
            f"refinement (up to {passes} passes)", "vertex visits", passes * n,
            expansion_kernels.refine, src, dst, weight, ptr, adj, n, k, out, bound, order,
            int(passes), REFINE_SLACK, REFINE_SKIP)
        info.update(refine_moves=int(moves), refine_passes=int(run))
    if fm:
        check_count("fm_passes", fm_passes)
        check_count("fm_limit", fm_limit)
        budget = -1 if fm_budget is None else int(math.ceil(fm_budget * m))
        kept, run, r0, replicas, tried = run_kernel(
            f"FM refinement (up to {fm_passes} passes)", "searches", int(fm_passes) * n,
            fm_kernels.fm, src, dst, weight, ptr, adj, n, k, out, bound, order, int(fm_passes),
            FM_SLACK, int(fm_limit), FM_DROP, FM_HUB, budget)
        before = r0 if before is None else before
        info.update(fm_moves=int(kept), fm_passes=int(run), fm_tried=int(tried))
    if replicas is None:
        before = replicas = expansion_kernels.replica_count(ptr, adj, out, n, k)
    info.update(replicas_before=int(before), replicas_after=int(replicas))
    return out.astype(np.int32), info


#: the share of the vertices each round of `perturb_refine` gathers (8 rounds of `strong` on
#: the 27 cells of 9 graphs where it trailed Mt-KaHyPar most: RF 1.0204 x Mt-KaHyPar's at
#: 0.001-0.005, 1.0212 at 0.02, 1.0227 at 0.05, 1.0246 at 0.15; the rounds' own vertex
#: order does most of the work, the gathering lets FM out of where it stopped)
PERTURB_SHARE = 0.005
#: `perturb_refine` stops after this many rounds in a row without fewer replicas (None:
#: never). On 36 cells of 12 graphs, `strong` with 8 rounds and no stop: RF 0.9956 x
#: Mt-KaHyPar's in 2.20 x the time without rounds; 8 rounds stopping after 2 misses 0.9959
#: in 1.82 x; 16 rounds stopping after 2 misses 0.9952 in 2.04 x (kept); after 3, 0.9948
#: in 2.34 x
PERTURB_PATIENCE = 2


def perturb_bytes(n, m):
    """Bytes `perturb_refine` allocates at most: a round's refinement (`refine_bytes`), the
    best assignment so far and the round's (int64) and the refinement's result (int32)."""
    return refine_bytes(n, m) + 20 * m


def perturb_refine(src, dst, weight, n, assignment, cap, rounds, *, imbalance=1.03, seed=0,
                   share=PERTURB_SHARE, incidence=None, dissolve=True, fm_budget=FM_BUDGET,
                   fm_passes=FM_PASSES, fm_limit=FM_LIMIT, patience=PERTURB_PATIENCE,
                   memory_advice="run fewer rounds (0: none)"):
    """Iterated local search from a refined ``assignment``; returns ``(assignment int32,
    info)``.

    Up to ``rounds`` rounds, stopping after ``patience`` rounds in a row that found no
    fewer replicas (None: all of them). Each starts from the best assignment so far,
    gathers the edges of a random ``share`` of the vertices (seed ``seed + 1 + round``)
    onto the cluster that holds the most of each one's edge weight, where that cluster
    stays within the balance bound (`expansion_kernels.gather`), refines the result in full
    (`refine_assignment`, its vertex order from the same seed) and keeps it when it has
    fewer replicas. A refinement ends at a fixed point of its own vertex order; another
    order, and the gathering, let it go on (on the cells where `best` trailed Mt-KaHyPar
    most, 8 rounds took 1-3 % of the replicas off: cit-HepPh at k = 32 and 128,
    email-Enron at k = 32). ``info``: ``perturb_rounds`` (the rounds run),
    ``perturb_kept`` (those that found fewer replicas), ``replicas_before`` and
    ``replicas_after`` (of the assignment given and the one returned). Where a round's
    refinement and the three assignments it keeps (`perturb_bytes`) do not fit the memory,
    nothing runs: `check_memory` refuses with ``memory_advice``."""
    from . import expansion_kernels
    check_count("rounds", rounds, low=0)
    if not 0 < share <= 1:
        raise InputError(f"the share of the vertices a perturbation gathers must be in (0, 1], "
                         f"got {share}")
    m = len(src)
    k = len(cap)
    best = _edge_clusters(assignment, m, k)
    if rounds:
        check_memory(perturb_bytes(n, m), f"the iterated search on {n:,} vertices",
                     memory_advice)
    if incidence is None:
        incidence = expansion_kernels.incidence(src, dst, n, np.ones(m, dtype=np.bool_))
    bound = balance_bounds(imbalance, cap, weight)
    weight = np.asarray(weight, dtype=np.float64)
    size = max(1, int(share * n)) if n else 0

    def perturbed(cur, rng):
        load = np.bincount(cur, weights=weight, minlength=k)
        vertices = rng.choice(n, size=size, replace=False).astype(np.int64)
        expansion_kernels.gather(incidence[0], incidence[1], weight, cur, load,
                                 np.maximum(bound, load), vertices, k)
        return cur

    return _iterate(src, dst, weight, n, cap, best, rounds, perturbed,
                    ("perturb_rounds", "perturb_kept"), seed=seed, patience=patience,
                    incidence=incidence, imbalance=imbalance, dissolve=dissolve,
                    fm_budget=fm_budget, fm_passes=fm_passes, fm_limit=fm_limit)


def _iterate(src, dst, weight, n, cap, best, rounds, step, keys, *, seed, patience, incidence,
             **knobs):
    """The loop of `perturb_refine` and `vcycle_refine`: up to ``rounds`` rounds, stopping
    after ``patience`` in a row without fewer replicas (None: never); round ``r`` makes a
    candidate with ``step(copy of the best int64 assignment, rng)`` (rng seeded ``seed + 1 +
    r``), refines it with `refine_assignment` (seed ``seed + 1 + r``, the refinement's
    ``knobs``) and keeps it when it has fewer replicas. Returns ``(best int32, info)``:
    the rounds run and those kept under the names ``keys``, ``replicas_before``,
    ``replicas_after``."""
    from . import expansion_kernels
    refine = functools.partial(refine_assignment, src, dst, weight, n, cap=cap,
                               incidence=incidence, **knobs)
    k = len(cap)
    replicas = before = int(expansion_kernels.replica_count(incidence[0], incidence[1], best,
                                                            n, k))
    kept = run = misses = 0
    for r in range(rounds):
        if patience is not None and misses >= patience:
            break
        run += 1
        rng = np.random.default_rng((seed + 1 + r) % 2**63)
        new, info = refine(step(best.copy(), rng), seed=(seed + 1 + r) % 2**63)
        if info["replicas_after"] < replicas:
            best, replicas = new.astype(np.int64), info["replicas_after"]
            kept += 1
            misses = 0
        else:
            misses += 1
    return best.astype(np.int32), {keys[0]: run, keys[1]: kept, "replicas_before": before,
                                   "replicas_after": replicas}


def vcycle_bytes(n, m, k):
    """Bytes `vcycle_refine` allocates at most before its coarser levels: the refinement
    (`refine_bytes`), the best assignment and the cycle's (int64) and the refined one
    (int32), level 0 of the hypergraph (node and net lists, 48 bytes per edge and 8 per
    vertex; weights, blocks and coarse numbers, 24 per edge), the tables of label
    propagation and FM on at most ``n`` nets (a pin count per block and a bit per block)
    and FM's queue and log on at most ``m`` nodes (80 bytes per node):
    `vcut.cut_levels.levels_bytes`."""
    from .cut_levels import levels_bytes
    return refine_bytes(n, m) + 20 * m + levels_bytes(n, m, k)


def vcycle_refine(src, dst, weight, n, assignment, cap, cycles, *, imbalance=1.03, seed=0,
                  incidence=None, dissolve=True, fm_budget=FM_BUDGET, fm_passes=FM_PASSES,
                  fm_limit=FM_LIMIT, patience=PERTURB_PATIENCE,
                  memory_advice="run fewer cycles (0: none)"):
    """Multilevel cycles from a refined ``assignment``; returns ``(assignment int32, info)``.

    Up to ``cycles`` cycles, stopping after ``patience`` in a row that found no fewer
    replicas (None: all of them). Each starts from the best assignment so far, coarsens the
    hypergraph of the edges (a node per edge, a net per vertex: connectivity - 1 is the
    replicas less the vertices) within its clusters, its node order from the seed ``seed +
    1 + cycle`` (`vcut.cut_levels.coarsen`); moves single nodes of each coarser level,
    coarsest first, to the cluster that takes the most replicas off within the balance
    bound (label propagation, then FM's searches, `vcut.cut_levels.uncoarsen`): a node of a
    coarse level is a group of edges that moves at once, which single-edge moves and one
    vertex's edge group cannot do; then refines the result in full (`refine_assignment`)
    and keeps it when it has fewer replicas. ``info``: ``vcycles`` (the cycles run),
    ``vcycles_kept``, ``replicas_before`` and ``replicas_after``. Where a cycle's
    refinement, level 0 and the coarse levels' tables (`vcycle_bytes`) do not fit the
    memory, nothing runs: `check_memory` refuses with ``memory_advice``; a coarser level
    that does not fit ends the coarsening there."""
    from . import expansion_kernels
    from .cut_levels import coarsen, ground_level, uncoarsen
    check_count("cycles", cycles, low=0)
    m = len(src)
    k = len(cap)
    best = _edge_clusters(assignment, m, k)
    if cycles:
        check_memory(vcycle_bytes(n, m, k), f"the multilevel cycles on {n:,} vertices",
                     memory_advice)
    if incidence is None:
        incidence = expansion_kernels.incidence(src, dst, n, np.ones(m, dtype=np.bool_))
    bound = balance_bounds(imbalance, cap, weight)
    weight = np.asarray(weight, dtype=np.float64)
    ground = ground_level(src, dst, weight, n, incidence)  # the same for every cycle

    def cycle(cur, rng):
        levels, maps = coarsen(ground, cur, k, rng)
        load = np.bincount(cur, weights=weight, minlength=k)
        return uncoarsen(levels, maps, load, np.maximum(bound, load), k, rng)[0]

    return _iterate(src, dst, weight, n, cap, best, cycles, cycle, ("vcycles", "vcycles_kept"),
                    seed=seed, patience=patience, incidence=incidence, imbalance=imbalance,
                    dissolve=dissolve, fm_budget=fm_budget, fm_passes=fm_passes,
                    fm_limit=fm_limit)


def multilevel_assign(src, dst, weight, n, cap, *, imbalance=1.03, seed=0, incidence=None):
    """The cut of `vcut.cut_levels.multilevel_cut` (the hypergraph of the edges coarsened
    from scratch, METIS on its coarsest level, label propagation and FM on the way back);
    returns the cluster of every edge (int32). Where its tables do not fit the memory
    (`vcut.cut_levels.levels_bytes`), `check_memory` refuses."""
    from .cut_levels import ground_level, levels_bytes, multilevel_cut
    k = len(cap)
    check_memory(levels_bytes(n, len(src), k), f"the multilevel cut on {n:,} vertices",
                 "best goes on without it")
    weight = np.asarray(weight, dtype=np.float64)
    ground = ground_level(src, dst, weight, n, incidence)
    rng = np.random.default_rng(seed % 2**63)
    out = multilevel_cut(ground, k, balance_bounds(imbalance, cap, weight), rng,
                         imbalance=max(1.0, imbalance - METIS_MARGIN), targets=_targets(cap),
                         seed=seed)
    return out.astype(np.int32)


#: the threshold of the HEP candidate of `best_assign`
HEP_TAU = 100.0
#: the candidates of `best_assign` beside the expansions, by name
CUT_NAMES = {"metis": "METIS", "spac": "SPAC", "hep": "HEP", "ml": "the multilevel cut"}
#: how much tighter than the balance bound `metis_assign` asks METIS to be
METIS_MARGIN = 0.001


def _targets(cap):
    """The per-part targets a vertex partitioner is given for capacities ``cap``: None for
    equal shares (1/k each, its own default), else the shares as float64."""
    equal = np.allclose(cap, 1.0 / len(cap), rtol=0, atol=1e-15)
    return None if equal else np.asarray(cap, dtype=np.float64)


def metis_bytes(n, m):
    """Bytes `metis_assign` allocates at most on ``n`` vertices and ``m`` edges (the CSR of
    2m int64 neighbours and weights, METIS's own copy and its coarser levels, about as much
    again, and the per-edge owners)."""
    return 64 * m + 48 * n


def metis_assign(src, dst, weight, n, cap, deg, *, imbalance=1.03, seed=0):
    """An edge partition from a METIS vertex partition; returns the cluster of every edge
    (int32).

    Each edge is owned by its endpoint of lower degree ``deg`` (ties: the lower number).
    METIS partitions the vertices, each weighted by the edge weight it owns, into
    ``len(cap)`` parts (of targets ``cap`` where they differ) with the fewest edges cut,
    and every edge goes to its owner's part. A part's edge load is then exactly the vertex
    weight METIS balances, and an edge cut costs at most one replica (its other endpoint
    in the owner's part): on graphs with communities (meshes, road and collaboration
    networks, web crawls) this starts the refinement far closer to its best than a
    neighbour expansion. Self-loops stay with their vertex and are not given to METIS.

    Raises
    ------
    VcutError
        pymetis is missing or METIS failed.
    """
    from runtime.vertex_partition import vertex_partition

    from . import spac_kernels
    from .spac import _int_weights
    k = len(cap)
    m = len(src)
    check_memory(metis_bytes(n, m), f"the METIS cut on {n:,} vertices and {m:,} edges",
                 "best goes on without it")
    src = np.asarray(src, dtype=np.int64)
    dst = np.asarray(dst, dtype=np.int64)
    deg = np.asarray(deg)
    low_src = (deg[src] < deg[dst]) | ((deg[src] == deg[dst]) & (src <= dst))
    owner = np.where(low_src, src, dst)
    owned = np.bincount(owner, weights=_int_weights(weight), minlength=n)
    vwgt = np.rint(owned).astype(np.int64)
    keep = src != dst
    xadj, adjncy, adjwgt = spac_kernels.symmetric_csr(src[keep], dst[keep],
                                                      np.ones(int(keep.sum()), np.int64), n)
    # METIS checks its bound in 32-bit floats and ends up to a hair above it (1.03001 on
    # uk-2007 at k = 32): it is asked for a thousandth less
    parts = vertex_partition(xadj, adjncy, adjwgt, vwgt, k, backend="metis",
                             imbalance=max(1.0, imbalance - METIS_MARGIN), seed=seed,
                             targets=_targets(cap))
    return np.asarray(parts, dtype=np.int32)[owner]


def mesh_like(deg):
    """Whether `best` runs a vertex partition's cut on a graph of vertex degrees ``deg``
    (with `runs_vertex_partitions`' edges per cluster): degrees
    that vary little (coefficient of variation at most `SPAC_CV`, as in
    meshes and road networks, where a vertex partition's smooth borders beat
    the expansion's ragged ones; on power-law graphs SPAC costs 2-5 times the
    expansions and rarely wins)."""
    deg = deg[deg > 0].astype(np.float64)
    return bool(len(deg)) and bool(deg.std() <= SPAC_CV * deg.mean())


def runs_vertex_partitions(deg, k):
    """Whether `best` refines a vertex partition's cut for ``k`` clusters on a graph of
    vertex degrees ``deg`` (by default the METIS cut; in the ``strong`` preset SPAC too): a
    `mesh_like` graph with at least `SPAC_PER_PART` edges per cluster.

    With fewer, METIS k-way partitions a coarsest graph of 30 k vertices, more than a tenth
    of the SPAC graph, which on meshes of 7-30 thousand edges at k = 128 took 35-60 ms, 2-6
    times the four refined expansions, for 1-2.5 % fewer replicas (and at 430-470 edges per
    cluster 3-4 times, for 1.6-3.6 %). On the other graphs of the quality bench, the METIS
    cut gave 1.0 % fewer replicas over all 78 cells (geometric mean; fewer in 38, by up to
    7 %, but not on the social graphs) in 2.6 times the default's time; on a 7.7 M-edge
    RMAT graph it won nothing in 3 times the time and 3.7 times the memory."""
    deg = np.asarray(deg)
    return mesh_like(deg) and int(deg.sum()) // 2 >= SPAC_PER_PART * k


def runs_hep(deg):
    """Whether `best` refines HEP's cut (at ``tau`` = `HEP_TAU`) beside the expansions on a
    graph of vertex degrees ``deg``: where HEP has a high-degree vertex at that threshold
    (without one its cut is an expansion's). On the quality bench these are as-caida,
    email-Enron, soc-Epinions and soc-Slashdot, where HEP's cut won 5 of 12 cells (by up to
    6.9 %, on as-caida at k = 128) for 1.02 x the time over the 78 cells, and ego-Twitter,
    cnr-2000 and uk-2007, where it won 4 of 6 cells (uk-2007 k = 32: 6.2 %)."""
    return bool(high_degree(np.asarray(deg), HEP_TAU).any())


def best_assign(src, dst, weight, n, cap, deg, *, imbalance=1.03, seed=0, starts=None,
                spac=False, metis=None, dissolve=True, fm_budget=FM_BUDGET, hep=None,
                fm_passes=FM_PASSES, fm_limit=FM_LIMIT, perturb=0, vcycles=0, multilevel=False):
    """The quality mode; returns ``(assignment int32, info)``.

    Candidates, side by side on the cores (as many at once as the memory holds):
    ``starts`` neighbour expansions (seeds ``seed``, ``seed + 1``, ...; default
    `BEST_STARTS`, or `MESH_STARTS` beside the METIS cut on a mesh-like graph, and the
    rest of `BEST_STARTS` when that cut is dropped); with ``metis`` (None: where
    `runs_vertex_partitions` says), `metis_assign`'s cut; with ``spac``, SPAC over METIS
    (None: where `runs_vertex_partitions` says); with ``hep`` (None: where `runs_hep`
    says), HEP's cut at ``tau`` = `HEP_TAU`; with ``multilevel``, `multilevel_assign`'s
    cut. The expansion with the fewest replicas (ties: the earlier seed) and the METIS,
    SPAC, HEP and multilevel cuts are each refined in full
    (dissolving passes unless ``dissolve`` is off, then FM with ``fm_budget`` moves tried
    per edge, ``fm_passes`` and ``fm_limit``, `refine_assignment`), side by side, and the
    one with the fewest replicas is kept (ties: the expansion, then METIS, SPAC, HEP,
    multilevel). A cut above the bound is dropped (refinement never raises a load that is
    within it), as where METIS is missing or fails or the memory cannot hold a cut
    (``info["metis_skipped"]``, ``info["spac_skipped"]``, ``info["hep_skipped"]``,
    ``info["ml_skipped"]`` say why). Then ``perturb`` rounds of `perturb_refine` from the
    one kept, with the same refinement (``info["perturb_kept"]``: the rounds that found
    fewer replicas; ``perturb_from``: the replicas before them; ``replicas_after`` is the
    final count; ``perturb_skipped`` says why none ran where the memory could not hold them).
    Before them, ``vcycles`` multilevel cycles of `vcycle_refine` (``info["vcycles"]``,
    ``vcycles_kept``, ``vcycles_from``, ``vcycles_skipped`` alike).
    Deterministic for a seed whatever the number of cores, and whatever the order of the
    edges, their orientation and, but for vertices colour refinement cannot tell apart,
    the numbering of the vertices (it runs on the `canonical_graph`; on `canonical_edges`
    where `CANONICAL_NUMBERING` is off).
    """
    if CANONICAL_NUMBERING:
        order, label, src, dst, weight = canonical_graph(src, dst, weight, n)
        relabelled = np.empty_like(deg)
        relabelled[label] = deg
        deg = relabelled
    else:
        order, src, dst, weight = canonical_edges(src, dst, weight, n)
    out, info = _best_assign(src, dst, weight, n, cap, deg, imbalance=imbalance, seed=seed,
                             starts=starts, spac=spac, metis=metis, dissolve=dissolve,
                             fm_budget=fm_budget, hep=hep, fm_passes=fm_passes,
                             fm_limit=fm_limit, perturb=perturb, vcycles=vcycles,
                             multilevel=multilevel)
    if order is not None:
        back = np.empty_like(out)
        back[order] = out
        out = back
    return out, info


#: the refined candidates of `best_assign` (fewest replicas first) that its multilevel
#: cycles run from, side by side; the one with the fewest replicas after them is kept. The
#: candidate with the fewest replicas after refinement is not always the one with the fewest
#: after the cycles: on the 78 cells of the quality bench, the multilevel cut won 10 cells
#: after refinement that another candidate won after the cycles (ca-CondMat k = 8: 1.1906
#: against 1.1797)
VCYCLE_FINALISTS = 2
#: `best_assign` runs on the `canonical_graph` (else on `canonical_edges`: the input's
#: numbering of the vertices then acts on the expansions as a seed does)
CANONICAL_NUMBERING = True
#: rounds of colour refinement behind `canonical_graph`
LABEL_ROUNDS = 3


def canonical_labels(src, dst, n, rounds=LABEL_ROUNDS):
    """The new number of each vertex in `canonical_graph` (int64[n])."""
    from .canonical_kernels import canonical_numbering

    return canonical_numbering(src, dst, n, rounds)[0]


def canonical_graph(src, dst, weight, n, rounds=LABEL_ROUNDS):
    """The graph renumbered and its edges reordered so that neither the input's numbering
    of the vertices nor the order or orientation of its edges shows (`best_assign` runs on
    it), with neighbours numbered close together.

    Colour refinement (Weisfeiler-Leman), ``rounds`` rounds from the degrees, each colour
    a 64-bit hash (`vcut_base.hashing.mix`) of the vertex's colour and the sum of its
    neighbours' salted colours, ranks the vertices by colour (ties, vertices the rounds
    cannot tell apart, by their input number); a breadth-first search numbers them, each
    component from its vertex of lowest rank, neighbours in rank order; the edges, as
    ``(min, max)`` of their new numbers, go in that order
    (`vcut.canonical_kernels.canonical_numbering`, linear in the edges but for one sort of
    the colours).

    Returns ``(order, label, src, dst, weight)``: ``order[i]`` the input edge at position
    ``i``, ``label[v]`` the new number of vertex ``v``, and the new edge arrays (``src <
    dst``, the input's index dtype)."""
    from .canonical_kernels import canonical_numbering

    label, order, lo, hi = canonical_numbering(src, dst, n, rounds)
    return (order, label, lo[order].astype(src.dtype), hi[order].astype(dst.dtype),
            weight[order])


def canonical_edges(src, dst, weight, n):
    """The edges of a simple graph in an order that does not depend on the input's: each
    as ``(min, max)``, by ``min * n + max`` (`best_assign` runs on them, so that the order
    of the edges in the file and their orientation change nothing).

    Returns ``(order, src, dst, weight)``: ``order[i]`` the input edge at position ``i``;
    ``order`` None and the input's own arrays where they are so already (a file sorted by
    its first column that lists each pair with the smaller end first or both ways)."""
    lo = np.minimum(src, dst)
    hi = np.maximum(src, dst)
    key = lo.astype(np.int64) * np.int64(n) + hi
    if len(key) < 2 or (np.array_equal(lo, src) and bool(np.all(key[1:] > key[:-1]))):
        return None, src, dst, weight
    order = np.argsort(key, kind="stable")
    return order, lo[order], hi[order], weight[order]


def _best_assign(src, dst, weight, n, cap, deg, *, imbalance, seed, starts, spac, metis,
                 dissolve, fm_budget, hep, fm_passes, fm_limit, perturb, vcycles, multilevel):
    """`best_assign` on the `canonical_graph` (or on edges in `canonical_edges` order)."""
    from . import expansion_kernels
    from .spac import spac_assign
    k = len(cap)
    m = len(src)
    inc = expansion_kernels.incidence(src, dst, n, np.ones(m, dtype=np.bool_))
    if spac is None or metis is None:
        parts = runs_vertex_partitions(deg, k)
        spac = parts if spac is None else spac
        metis = parts if metis is None else metis
    if hep is None:
        hep = runs_hep(deg)
    default = starts is None
    if default:
        starts = MESH_STARTS if metis and mesh_like(deg) else BEST_STARTS
    bound = balance_bounds(imbalance, cap, weight) * (1 + 1e-12)

    def expansion(s):
        a = ne_assign(src, dst, weight, n, cap, seed=(seed + s) % 2**63, incidence=inc)
        return expansion_kernels.replica_count(inc[0], inc[1], a, n, k), s, a

    def within(a):  # a cut above the bound is dropped
        return a if np.all(np.bincount(a, weights=weight, minlength=k) <= bound) else None

    def vertex_cut(make):  # the cut, None above the bound, or why it could not be made
        try:
            return within(make())
        except VcutError as e:  # no METIS here, or a cut the memory cannot hold: the
            # expansions stand
            return str(e)

    def from_metis():
        return vertex_cut(lambda: metis_assign(src, dst, weight, n, cap, deg,
                                               imbalance=imbalance, seed=seed))

    def split_and_connect():
        return vertex_cut(lambda: spac_assign(src, dst, weight, n, k, imbalance=imbalance,
                                              seed=seed, targets=_targets(cap))[0])

    def informed():
        return vertex_cut(lambda: hep_assign(src, dst, weight, n, cap, deg, tau=HEP_TAU,
                                             seed=seed,
                                             memory_advice="best goes on without it")[0])

    def from_levels():
        return vertex_cut(lambda: multilevel_assign(src, dst, weight, n, cap,
                                                    imbalance=imbalance, seed=seed,
                                                    incidence=inc))

    # the vertex partitions first: their METIS runs overlap the expansions on the other core
    cuts = ([("metis", from_metis)] if metis else []) + \
        ([("spac", split_and_connect)] if spac else []) + \
        ([("hep", informed)] if hep else []) + ([("ml", from_levels)] if multilevel else [])
    jobs = [job for _, job in cuts] + [functools.partial(expansion, s) for s in range(starts)]
    done = run_parallel(jobs, jobs_that_fit(len(jobs), expansion_bytes(n, m)
                                            + (metis_bytes(n, m) if metis else 0)))
    runs = done[len(cuts):]
    got_cut = any(isinstance(cut, np.ndarray) for cut in done[:len(cuts)])
    if default and starts < BEST_STARTS and not got_cut:
        # no cut after all: the expansions of a graph without one
        more = [functools.partial(expansion, s) for s in range(starts, BEST_STARTS)]
        runs += run_parallel(more, jobs_that_fit(len(more), expansion_bytes(n, m)))
        starts = BEST_STARTS
    runs = sorted(runs, key=lambda run: run[:2])  # fewest replicas, then seed
    candidates = [("ne", runs[0][2])]
    skipped = {}
    for (name, _), cut in zip(cuts, done):
        if isinstance(cut, np.ndarray):
            candidates.append((name, cut))
        else:
            skipped[f"{name}_skipped"] = cut if isinstance(cut, str) else \
                (CUT_NAMES[name] if name == "ml" else f"{CUT_NAMES[name]}'s cut") + \
                " was above the balance bound"

    def refined(a):
        return refine_assignment(src, dst, weight, n, a, cap, imbalance=imbalance, seed=seed,
                                 incidence=inc, dissolve=dissolve, fm_budget=fm_budget,
                                 fm_passes=fm_passes, fm_limit=fm_limit)

    results = run_parallel([functools.partial(refined, a) for _, a in candidates],
                           jobs_that_fit(len(candidates), refine_bytes(n, m)))
    ranked = sorted(range(len(results)), key=lambda i: (results[i][1]["replicas_after"], i))

    def search(name, rounds, out, info):  # (out, info) after `name`'s rounds from ``out``
        run, counts = {"vcycles": (vcycle_refine, ("vcycles", "vcycles_kept")),
                       "perturb": (perturb_refine, ("perturb_rounds", "perturb_kept"))}[name]
        try:
            out, more = run(src, dst, weight, n, out, cap, rounds, imbalance=imbalance,
                            seed=seed, incidence=inc, dissolve=dissolve, fm_budget=fm_budget,
                            fm_passes=fm_passes, fm_limit=fm_limit,
                            memory_advice="best goes on without it")
        except VcutError as e:  # no memory for it: the cut so far stands
            return out, {**info, f"{name}_skipped": str(e)}
        return out, {**info, **{c: more[c] for c in counts},
                     f"{name}_from": info["replicas_after"],
                     "replicas_after": more["replicas_after"]}

    finalists = ranked[:VCYCLE_FINALISTS] if vcycles else ranked[:1]
    ends = [results[ranked[0]]]
    if vcycles:
        ends = run_parallel([functools.partial(search, "vcycles", vcycles, *results[i])
                             for i in finalists],
                            jobs_that_fit(len(finalists), vcycle_bytes(n, m, k)))
    j = min(range(len(ends)), key=lambda j: (ends[j][1]["replicas_after"], j))
    pick = finalists[j]
    out, info = ends[j]
    if len(finalists) > 1:
        info = {**info, "finalists": ", ".join(candidates[i][0] for i in finalists)}
    if perturb:
        out, info = search("perturb", perturb, out, info)
    merged = {"starts": int(starts), "best_of": candidates[pick][0],
              "candidates": ", ".join(name for name, _ in candidates), **info, **skipped}
    return out, merged
