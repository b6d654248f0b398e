"""The multilevel partitioner's CPU twin: each phase against a plain reference, the whole
against exact hand cases, its invariants, and its bad inputs."""

import json

import networkx as nx
import numpy as np
import pytest

from vcut_base.errors import InputError
from ir_graph import Graph, write_graph
from runtime.generators import erdos_renyi, grid, rmat
from runtime.multilevel import Level, csr_from_edges, multilevel_partition
from runtime.multilevel import coarsening_kernels as CK
from runtime.multilevel import initial_kernels as IK
from runtime.multilevel import refinement_kernels as RK
from runtime.multilevel.coarsening import contract
from tests.helpers import M64, cut_of, edges_of, from_python, mix, random_level


# --------------------------------------------------------------------------- references


def vertex_key(seed, v):
    return mix(mix((seed + 0x9E3779B97F4A7C15) & M64) ^ v)


def reference_matching(level, max_vw, seed, rounds):
    """The matching rule written out plainly: mutual proposals, a greedy pass in id order,
    then two-hop pairs and islands. An edge {u, v} breaks weight ties by key[u] ^ key[v]."""
    n, adj = level.n, {}
    for (u, v), w in edges_of(level).items():
        adj.setdefault(u, []).append((v, w))
        adj.setdefault(v, []).append((u, w))
    vw = level.vwgt.tolist()
    key = [vertex_key(seed, v) for v in range(n)]
    mate = [-1] * n

    def heaviest_free(u):
        cands = [(w, key[u] ^ key[v], v) for v, w in adj.get(u, [])
                 if mate[v] < 0 and vw[u] + vw[v] <= max_vw]
        return max(cands)[2] if cands else None

    for r in range(rounds):
        prop = {u: heaviest_free(u) for u in range(n) if mate[u] < 0}
        pairs = [(u, v) for u, v in prop.items()
                 if v is not None and u < v and prop.get(v) == u]
        for u, v in pairs:
            mate[u], mate[v] = v, u
        if not pairs:
            break
    for u in range(n):
        if mate[u] < 0:
            v = heaviest_free(u)
            if v is not None:
                mate[u], mate[v] = v, u
    left = [u for u in range(n) if mate[u] < 0]
    if len(left) > n // 10:
        waiting = {}
        for u in left:
            if not adj.get(u):
                continue
            # heaviest neighbour: the first of the largest weight in CSR (neighbour id) order
            heaviest = max(w for _, w in adj[u])
            c = [v for v, w in sorted(adj[u]) if w == heaviest][0]
            w_ = waiting.get(c)
            if w_ is not None and vw[u] + vw[w_] <= max_vw:
                mate[u], mate[w_] = w_, u
                waiting[c] = None
            else:
                waiting[c] = u
    lone = None  # islands pair up in id order
    for u in range(n):
        if mate[u] < 0 and not adj.get(u):
            if lone is not None and vw[u] + vw[lone] <= max_vw:
                mate[u], mate[lone] = lone, u
                lone = None
            else:
                lone = u
    return [u if m < 0 else m for u, m in enumerate(mate)]


# ------------------------------------------------------------------------------ phases


@pytest.mark.parametrize("seed", range(40))
def test_matching_equals_the_rule_written_out(seed):
    lv = random_level(seed, n=50, m=120 if seed % 2 else 40)
    max_vw = 6
    mate, _ = CK.heavy_edge_matching(lv.indptr, lv.indices, lv.ewgt, lv.vwgt, np.int64(max_vw),
                                    np.uint64(seed), 8)
    assert mate.tolist() == reference_matching(lv, max_vw, seed, 8)
    for u, v in enumerate(mate.tolist()):
        assert mate[v] == u  # symmetric
        if v != u:
            assert lv.vwgt[u] + lv.vwgt[v] <= max_vw


def test_matching_takes_the_heavy_edge_and_pairs_star_leaves():
    # path 0-1-2-3, weights 1, 5, 1: only the heavy middle edge is matched
    lv = csr_from_edges([0, 1, 2], [1, 2, 3], [1, 5, 1], 4)
    mate, _ = CK.heavy_edge_matching(lv.indptr, lv.indices, lv.ewgt, lv.vwgt, np.int64(9),
                                    np.uint64(0), 8)
    assert mate.tolist() == [0, 2, 1, 3]
    # a star with 7 leaves: one leaf matches the centre, the other six pair up two hops apart
    lv = csr_from_edges([0] * 7, list(range(1, 8)), None, 8)
    mate, _ = CK.heavy_edge_matching(lv.indptr, lv.indices, lv.ewgt, lv.vwgt, np.int64(9),
                                    np.uint64(3), 8)
    assert sum(1 for u, v in enumerate(mate) if u != v) == 8
    assert mate[0] != 0


def grid_level(rows, cols, weights=None):
    src, dst = [], []
    for r in range(rows):
        for c in range(cols):
            v = r * cols + c
            if c + 1 < cols:
                src.append(v), dst.append(v + 1)
            if r + 1 < rows:
                src.append(v), dst.append(v + cols)
    return csr_from_edges(src, dst, weights, rows * cols)


@pytest.mark.parametrize("leaves, expected", [(31, True), (32, False)])
def test_mesh_like_bounds_the_largest_degree(leaves, expected):
    # a star of L leaves: largest degree L, mean degree 2L / (L + 1); L <= 16 x the mean
    # exactly while L + 1 <= 32
    lv = csr_from_edges([0] * leaves, list(range(1, leaves + 1)), None, leaves + 1)
    assert CK.mesh_like(lv.indptr, lv.ewgt, 16) is expected


def test_mesh_like_needs_one_edge_weight_and_an_edge():
    assert CK.mesh_like(grid_level(4, 4).indptr, grid_level(4, 4).ewgt, 16)
    weighted = grid_level(4, 4, [1] * 23 + [2])
    assert not CK.mesh_like(weighted.indptr, weighted.ewgt, 16)
    empty = csr_from_edges([], [], None, 5)
    assert not CK.mesh_like(empty.indptr, empty.ewgt, 16)


@pytest.mark.parametrize("seed", range(5))
def test_coarsening_matches_mesh_like_levels_greedily(seed):
    from runtime.multilevel import coarsening as C

    # an unweighted 6 x 6 grid: the greedy pass alone (no proposal round), which here
    # differs from the rule with its rounds
    lv = grid_level(6, 6)
    assert C.match(lv, 9, seed).tolist() == reference_matching(lv, 9, seed, 0)
    assert reference_matching(lv, 9, seed, 0) != reference_matching(lv, 9, seed, C.MATCH_ROUNDS)
    # weighted, or with a hub: the proposal rounds
    for other in (random_level(seed), csr_from_edges([0] * 40, list(range(1, 41)), None, 41)):
        assert C.match(other, 9, seed).tolist() == \
            reference_matching(other, 9, seed, C.MATCH_ROUNDS)


def test_coarsening_stops_after_a_level_that_keeps_most_of_its_edges(monkeypatch):
    from types import SimpleNamespace as L

    from runtime.multilevel import coarsening as C

    # scripted steps (n, m): 800 <= 0.9 x 1000 and 720 <= 0.9 x 800 go on (the bound is
    # not strict); 700 > 0.9 x 720 stops there, keeping that level, above `stop` = 100
    sizes = [(600, 800), (400, 720), (250, 700), (90, 600)]

    def step(fine, i):
        return L(n=sizes[i][0], m=sizes[i][1]), i

    finest = L(n=1000, m=1000)
    levels, maps = C.contract_levels(finest, 100, step, 0.9)
    assert [(lv.n, lv.m) for lv in levels] == [(1000, 1000)] + sizes[:3] and maps == [0, 1, 2]
    levels, _ = C.contract_levels(finest, 100, step)  # the vertex rule alone (the GPU's)
    assert [(lv.n, lv.m) for lv in levels] == [(1000, 1000)] + sizes
    # `coarsen` applies the bound: at 0.5, rmat 2^10's first contraction (which keeps
    # more than half its edges) is its last
    g = rmat(10, 8, seed=1)
    lv = csr_from_edges(g.src, g.dst, g.weight, g.n)
    full, _ = C.coarsen(lv, 8, 0)
    monkeypatch.setattr(C, "EDGE_SHRINK_STOP", 0.5)
    cut_short, _ = C.coarsen(lv, 8, 0)
    assert len(full) > 2 and full[1].m > 0.5 * full[0].m
    assert len(cut_short) == 2 and cut_short[1].indices.tolist() == full[1].indices.tolist()


@pytest.mark.parametrize("seed", range(25))
def test_cmap_and_contraction_keep_the_weights(seed):
    lv = random_level(seed)
    mate, _ = CK.heavy_edge_matching(lv.indptr, lv.indices, lv.ewgt, lv.vwgt, np.int64(8),
                                    np.uint64(seed), 8)
    coarse, cmap = contract(lv, mate)
    pairs = sum(1 for u, v in enumerate(mate) if u < v)
    assert coarse.n == lv.n - pairs
    # Cmap: a bijection of matched pairs onto 0..nc-1, in the order of the pairs' lower ids
    reps = [v for v in range(lv.n) if v <= mate[v]]
    assert [cmap[v] for v in reps] == list(range(coarse.n))
    assert all(cmap[v] == cmap[mate[v]] for v in range(lv.n))
    assert coarse.vwgt.sum() == lv.vwgt.sum()
    expect = {}
    for (u, v), w in edges_of(lv).items():
        a, b = sorted((int(cmap[u]), int(cmap[v])))
        if a != b:
            expect[(a, b)] = expect.get((a, b), 0) + w
    assert edges_of(coarse) == expect
    inner = sum(w for (u, v), w in edges_of(lv).items() if mate[u] == v)
    assert coarse.ewgt.sum() // 2 == lv.ewgt.sum() // 2 - inner
    for c in range(coarse.n):  # no self-loops, no repeats
        row = coarse.indices[coarse.indptr[c]:coarse.indptr[c + 1]]
        assert c not in row and len(set(row.tolist())) == len(row)


@pytest.mark.parametrize("seed", range(30))
def test_fm_never_raises_the_cut_nor_breaks_a_bound(seed):
    lv = random_level(seed, n=80, m=300)
    rng = np.random.default_rng(seed)
    total = int(lv.vwgt.sum())
    bound = int(0.55 * total)
    side = (rng.permutation(lv.n) % 2).astype(np.int64)
    while lv.vwgt[side == 0].sum() > bound:  # a feasible start
        side[np.flatnonzero(side == 0)[0]] = 1
    while lv.vwgt[side == 1].sum() > bound:
        side[np.flatnonzero(side == 1)[0]] = 0
    before = cut_of(lv, side)
    cut = IK.fm_bisection(lv.indptr, lv.indices, lv.ewgt, lv.vwgt, side, total // 2, bound,
                         bound, 8)
    assert cut == cut_of(lv, side) <= before
    assert lv.vwgt[side == 0].sum() <= bound and lv.vwgt[side == 1].sum() <= bound


def test_fm_swaps_across_bounds_that_hold_exactly():
    # 0-1 and 2-3 of weight 5, 0-2 and 1-3 of weight 1; sides {0, 2} and {1, 3} of 2 each
    # (cut 10) with bounds of 2: every single move breaks a bound. Moving 1 (gain 5 - 1)
    # leaves side 0 heavier, so 2 (gain 5 - 1) goes next: {0, 1} and {2, 3}, cut 2, the
    # least of any bisection within the bounds. A search that passed over every move a
    # bound forbade moved nothing here.
    lv = csr_from_edges(np.array([0, 2, 0, 1]), np.array([1, 3, 2, 3]),
                        np.array([5.0, 5.0, 1.0, 1.0]), 4)
    side = np.array([0, 1, 0, 1], np.int64)
    assert cut_of(lv, side) == 10
    cut = IK.fm_bisection(lv.indptr, lv.indices, lv.ewgt, lv.vwgt, side, 2, 2, 2, 8)
    assert cut == cut_of(lv, side) == 2
    assert side.tolist() == [0, 0, 1, 1]


@pytest.mark.parametrize("seed", range(30))
def test_greedy_refinement_and_repair(seed):
    lv = random_level(seed, n=90, m=400, vmax=1)
    rng = np.random.default_rng(seed)
    k = 4
    part = rng.integers(0, k, lv.n).astype(np.int64)
    maxload = np.full(k, 26, np.int64)  # 90 unit vertices, 22.5 each
    load = RK.part_loads(part, lv.vwgt, k)
    was_over = load > maxload
    before = cut_of(lv, part)
    RK.greedy_refine(lv.indptr, lv.indices, lv.ewgt, lv.vwgt, part, load, maxload,
                    rng.permutation(lv.n), 10)
    assert cut_of(lv, part) <= before
    assert np.array_equal(load, RK.part_loads(part, lv.vwgt, k))
    assert (load[~was_over] <= maxload[~was_over]).all()
    RK.repair_balance(lv.indptr, lv.indices, lv.ewgt, lv.vwgt, part, load, maxload,
                     rng.permutation(lv.n))
    assert (RK.part_loads(part, lv.vwgt, k) <= maxload).all()


def losing_move_case():
    """`test_kway_fm_takes_a_losing_move_that_greedy_cannot`'s graph: (level, vertex ids)."""
    names = ["a0", "a1", "x", "y", "b0", "b1", "b2", "b3"]
    ix = {v: i for i, v in enumerate(names)}
    edges = [("x", "y", 3), ("x", "b0", 2), ("y", "b1", 2), ("x", "a0", 1), ("y", "a1", 1),
             ("a0", "a1", 5), ("b0", "b1", 5), ("b0", "b2", 5), ("b1", "b3", 5), ("b2", "b3", 5)]
    lv = csr_from_edges(np.array([ix[a] for a, _, _ in edges]),
                        np.array([ix[b] for _, b, _ in edges]),
                        np.array([w for _, _, w in edges]), 8, np.ones(8, np.int64))
    return lv, ix


def test_kway_fm_takes_a_losing_move_that_greedy_cannot():
    """x and y sit in part 0, each with weight 2 to part 1 and held by their edge x-y (3)
    and one edge (1) each into part 0. Alone, either loses 2 by moving (greedy stays at
    cut 4); x then y gains 2: FM moves x at -2, then y at +4, keeps both (cut 2, the optimum
    with at most 6 of the 8 unit vertices per part)."""
    lv, ix = losing_move_case()
    maxload = np.array([6, 6], np.int64)
    part = np.array([0, 0, 0, 0, 1, 1, 1, 1], np.int64)
    args = (lv.indptr, lv.indices, lv.ewgt, lv.vwgt)
    load = RK.part_loads(part, lv.vwgt, 2)
    assert RK.greedy_refine(*args, part, load, maxload, np.arange(8), 10)[0] == 0
    assert cut_of(lv, part) == 4
    # no budget left after evaluating the seeds: no search starts
    assert RK.kway_fm(*args, part, load, maxload, np.arange(8), 25, 256, 0)[:2] == (0, 0)
    kept, gain, work = RK.kway_fm(*args, part, load, maxload, np.arange(8), 25, 256, -1)
    assert (kept, gain) == (2, 2) and cut_of(lv, part) == 2
    assert part.tolist() == [0, 0, 1, 1, 1, 1, 1, 1]
    assert load.tolist() == [2, 6]
    assert work >= len(lv.indices)  # every seed evaluated once at least


@pytest.mark.parametrize("seed", range(20))
def test_seed_degree_keeps_the_seeds_rows_within_their_share(seed):
    """The seed degree is the largest that keeps the rows of the seeds of at most that many
    neighbours within the room; -1 when every row fits."""
    from runtime.multilevel.refinement import seed_degree

    lv = random_level(seed, n=80, m=300)
    order = np.random.default_rng(seed).permutation(lv.n).astype(np.int64)
    deg = np.diff(lv.indptr)
    for room in (0, 5, 50, int(deg.sum()) // 2, int(deg.sum()) - 1, int(deg.sum())):
        d = seed_degree(lv.indptr, order, room)
        if deg.sum() <= room:
            assert d == -1
            continue
        assert deg[deg <= d].sum() <= room < deg[deg <= d + 1].sum()


def test_kway_fm_starts_no_search_at_a_vertex_above_the_seed_degree():
    """The hand case above with x (3 neighbours) the only seed: with a seed degree of 2 it
    is neither evaluated nor searched from (nothing scanned, nothing moved); with 3 its
    search moves x, then y, as above."""
    lv, ix = losing_move_case()
    args = (lv.indptr, lv.indices, lv.ewgt, lv.vwgt)
    maxload = np.array([6, 6], np.int64)
    x = np.array([ix["x"]], np.int64)
    part = np.array([0, 0, 0, 0, 1, 1, 1, 1], np.int64)
    load = RK.part_loads(part, lv.vwgt, 2)
    assert RK.kway_fm(*args, part, load, maxload, x, 25, 256, -1, 2) == (0, 0, 0)
    assert part.tolist() == [0, 0, 0, 0, 1, 1, 1, 1]
    kept, gain, _ = RK.kway_fm(*args, part, load, maxload, x, 25, 256, -1, 3)
    assert (kept, gain) == (2, 2) and part.tolist() == [0, 0, 1, 1, 1, 1, 1, 1]


@pytest.mark.parametrize("seed", range(30))
@pytest.mark.parametrize("budget", [-1, 400])
def test_kway_fm_never_raises_the_cut_nor_breaks_a_bound(seed, budget):
    lv = random_level(seed, n=90, m=400, vmax=3)
    rng = np.random.default_rng(seed)
    k = 4
    maxload = np.full(k, int(1.05 * lv.vwgt.sum() / k) + 3, np.int64)
    part = np.zeros(lv.n, np.int64)
    load = np.zeros(k, np.int64)
    for v in rng.permutation(lv.n):  # a random feasible start
        b = int(np.argmin(load))
        part[v] = b
        load[b] += lv.vwgt[v]
    assert (load <= maxload).all()
    before = cut_of(lv, part)
    kept, gain, work = RK.kway_fm(lv.indptr, lv.indices, lv.ewgt, lv.vwgt, part, load, maxload,
                                 rng.permutation(lv.n), 25, 256, budget)
    after = cut_of(lv, part)
    assert before - after == gain >= 0 and (gain > 0) == (kept > 0)
    assert np.array_equal(load, RK.part_loads(part, lv.vwgt, k)) and (load <= maxload).all()


def test_kway_fm_takes_the_best_seed_first_within_its_budget():
    """Two copies of the hand case above, the second with its edge weights doubled (its
    seeds x', y' gain -4, the first copy's -2). With a budget that the seeds' evaluation
    uses up but for one search, FM refines the first copy (seeds by gain, highest first),
    although the seeded order lists the second copy first; unbounded, it refines both."""
    names = ["a0", "a1", "x", "y", "b0", "b1", "b2", "b3"]
    ix = {v: i for i, v in enumerate(names)}
    base = [("x", "y", 3), ("x", "b0", 2), ("y", "b1", 2), ("x", "a0", 1), ("y", "a1", 1),
            ("a0", "a1", 5), ("b0", "b1", 5), ("b0", "b2", 5), ("b1", "b3", 5), ("b2", "b3", 5)]
    src = [ix[a] for a, _, _ in base] + [8 + ix[a] for a, _, _ in base]
    dst = [ix[b] for _, b, _ in base] + [8 + ix[b] for _, b, _ in base]
    w = [c for _, _, c in base] + [2 * c for _, _, c in base]
    lv = csr_from_edges(np.array(src), np.array(dst), np.array(w), 16, np.ones(16, np.int64))
    # parts: copy 1 in parts 0 (a, x, y) / 1 (b); copy 2 in parts 2 / 3; room for 6 each
    part = np.array([0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3], np.int64)
    maxload = np.full(4, 6, np.int64)
    load = RK.part_loads(part, lv.vwgt, 4)
    args = (lv.indptr, lv.indices, lv.ewgt, lv.vwgt, part, load, maxload)
    order = np.arange(16)[::-1].copy()  # seeded order: copy 2 first, were gains ignored
    kept, gain, work = RK.kway_fm(*args, order, 25, 256, len(lv.indices))
    assert (kept, gain) == (2, 2)  # the lighter copy's x (-2) beats the heavier's (-4)
    assert part.tolist()[:8] == [0, 0, 1, 1, 1, 1, 1, 1] and part.tolist()[8:] == [2] * 4 + [3] * 4
    kept, gain, _ = RK.kway_fm(*args, order, 25, 256, -1)  # unbounded: the other one too
    assert (kept, gain) == (2, 4) and part.tolist()[8:] == [2, 2, 3, 3, 3, 3, 3, 3]


def test_kway_fm_seeds_no_vertex_an_earlier_search_moved_and_undid():
    """Part 0: A, s, t, X; part 1: B, C. Edges A-s 2, A-t 2, s-t 1, s-B 1, t-B 1, B-C 5,
    A-X 3; room for 6 per part; limit 2. Boundary seeds s, t (gain -2 each) and B (-3).
    The search from s moves s (-2), then t (0: B and s now pull it to part 1, A holds it
    back), stops two moves past its best prefix (empty) and undoes both. t was moved, so
    it seeds no search; B's search moves B (-3) and C (+5) and keeps both (cut 2 -> 0).
    Work (adjacency entries scanned): the seeds' evaluation 3 + 3 + 3; s's search: s at
    its start and when popped 3 + 3, its neighbours A and t 3 + 3, t popped 3 (A's bound
    is raised after t's move, unscanned); B's search: B twice 3 + 3, C twice 1 + 1: 32.
    A search from t as well (the rule before) would scan 15 more."""
    A, S, T, X, B, C = range(6)
    edges = [(A, S, 2), (A, T, 2), (S, T, 1), (S, B, 1), (T, B, 1), (B, C, 5), (A, X, 3)]
    lv = csr_from_edges(np.array([a for a, _, _ in edges]), np.array([b for _, b, _ in edges]),
                        np.array([w for _, _, w in edges]), 6, np.ones(6, np.int64))
    part = np.array([0, 0, 0, 0, 1, 1], np.int64)
    load = RK.part_loads(part, lv.vwgt, 2)
    maxload = np.array([6, 6], np.int64)
    assert cut_of(lv, part) == 2
    kept, gain, work = RK.kway_fm(lv.indptr, lv.indices, lv.ewgt, lv.vwgt, part, load, maxload,
                                 np.array([S, T, B]), 2, 256, -1)
    assert (kept, gain, work) == (2, 2, 32)
    assert part.tolist() == [0] * 6 and cut_of(lv, part) == 0 and load.tolist() == [6, 0]


def test_kway_fm_refines_every_level_hubs_included(monkeypatch):
    """FM runs on every level, power-law ones too (its budget bounds the cost there);
    vertices of degree above FM_HUB are never queued as neighbours."""
    seen = []  # vertices of each level FM refines
    real = RK.kway_fm

    def spy(indptr, *args):
        seen.append(len(indptr) - 1)
        return real(indptr, *args)

    monkeypatch.setattr(RK, "kway_fm", spy)
    r = multilevel_partition(grid(40, 40, seed=1), 4, seed=0)
    assert set(seen) == {n for n, _ in r.level_sizes}  # every level
    seen.clear()
    r = multilevel_partition(rmat(12, 8, seed=1), 4, seed=0)
    assert set(seen) == {n for n, _ in r.level_sizes}


@pytest.mark.parametrize("seed", range(10))
def test_boundary_lists_the_vertices_with_a_neighbour_elsewhere(seed):
    lv = random_level(seed, n=70, m=150)
    part = np.random.default_rng(seed).integers(0, 3, lv.n).astype(np.int64)
    want = [v for v in range(lv.n)
            if any(part[u] != part[v] for u in lv.indices[lv.indptr[v]:lv.indptr[v + 1]])]
    assert RK.boundary(lv.indptr, lv.indices, part).tolist() == want


def boundary_of(lv, part):
    """The boundary written out: the vertices with a neighbour in another part."""
    return [v for v in range(lv.n)
            if any(part[u] != part[v] for u in lv.indices[lv.indptr[v]:lv.indptr[v + 1]])]


@pytest.mark.parametrize("seed", range(12))
def test_the_boundary_follows_the_moves(seed):
    """`boundary_since` (the boundary from the last one and the moves since) and
    `boundary_among` (from candidates) equal the boundary written out: no moves, a few,
    every vertex moved."""
    rng = np.random.default_rng(seed)
    lv = random_level(seed, n=70, m=150)
    before = rng.integers(0, 3, lv.n).astype(np.int64)
    prev = RK.boundary(lv.indptr, lv.indices, before)
    for moved in (0, 1, 5, lv.n):
        part = before.copy()
        who = rng.choice(lv.n, size=moved, replace=False)
        part[who] = rng.integers(0, 3, moved)
        want = boundary_of(lv, part)
        assert RK.boundary_since(lv.indptr, lv.indices, part, before, prev).tolist() == want
        assert RK.boundary_among(lv.indptr, lv.indices, part,
                                np.arange(lv.n, dtype=np.int64)).tolist() == want
        half = np.arange(0, lv.n, 2, dtype=np.int64)
        assert RK.boundary_among(lv.indptr, lv.indices, part, half).tolist() == \
            [v for v in want if v % 2 == 0]


@pytest.mark.parametrize("seed", range(12))
def test_projected_candidates_hold_the_projected_boundary(seed):
    """A fine vertex is a candidate when its coarse vertex is on the coarse boundary, and
    every vertex of the projected partition's boundary is one."""
    lv = random_level(seed, n=80, m=200)
    mate, _ = CK.heavy_edge_matching(lv.indptr, lv.indices, lv.ewgt, lv.vwgt, np.int64(8),
                                    np.uint64(seed), 8)
    coarse, cmap = contract(lv, mate)
    cpart = np.random.default_rng(seed).integers(0, 4, coarse.n).astype(np.int64)
    cb = boundary_of(coarse, cpart)
    cand = RK.projected_candidates(cmap, np.array(cb, np.int64), coarse.n).tolist()
    assert cand == [v for v in range(lv.n) if cmap[v] in set(cb)]
    assert set(boundary_of(lv, RK.project(cpart, cmap))) <= set(cand)


@pytest.mark.parametrize("refiner", ["fm", "greedy"])
@pytest.mark.parametrize("seed", range(8))
def test_refine_with_candidates_is_refine_without(seed, refiner):
    """Refinement from the projected candidates moves exactly what it moves from a scan of
    every row, and returns the boundary of its result (None on the finest level)."""
    from runtime.multilevel.refinement import refine

    lv = random_level(seed, n=90, m=260)
    mate, _ = CK.heavy_edge_matching(lv.indptr, lv.indices, lv.ewgt, lv.vwgt, np.int64(8),
                                    np.uint64(seed), 8)
    coarse, cmap = contract(lv, mate)
    cpart = np.random.default_rng(seed).integers(0, 3, coarse.n).astype(np.int64)
    cb = RK.boundary(coarse.indptr, coarse.indices, cpart)
    maxload = np.full(3, int(1.1 * lv.vwgt.sum() / 3), np.int64)
    outs = []
    for cand in (None, RK.projected_candidates(cmap, cb, coarse.n)):
        part = RK.project(cpart, cmap)
        got = refine(lv, part, maxload, np.random.default_rng(seed), refiner=refiner,
                     candidates=cand)
        assert got[2].tolist() == boundary_of(lv, part)
        outs.append((part.tolist(), got[:2]))
        part = RK.project(cpart, cmap)
        assert refine(lv, part, maxload, np.random.default_rng(seed), refiner=refiner,
                      finest=True, candidates=cand)[2] is None
    assert outs[0] == outs[1]


def test_islands_are_matched_with_each_other():
    """Half of an RMAT graph's vertices can be islands, which no edge reaches: paired in id
    order (within the weight bound) the level halves them instead of stalling coarsening."""
    # a path 0-1-2 and islands 3..9 (weights 1, and 5 for vertex 6)
    vw = np.array([1, 1, 1, 1, 1, 1, 5, 1, 1, 1], np.int64)
    lv = csr_from_edges([0, 1], [1, 2], None, 10, vw)
    mate, _ = CK.heavy_edge_matching(lv.indptr, lv.indices, lv.ewgt, lv.vwgt, np.int64(4),
                                    np.uint64(0), 8)
    assert mate[3:].tolist() == [4, 3, 5, 6, 8, 7, 9]  # 5 and 6 are too heavy together
    coarse, _ = contract(lv, mate)
    assert coarse.n == 10 - 1 - 2  # the path's pair, islands 3-4 and 7-8
    g = rmat(12, 4, seed=1)  # 1,582 of its 4,096 vertices are islands
    r = multilevel_partition(g, 8, seed=0)
    assert r.level_sizes[-1][0] <= g.n // 4  # unpaired, the islands alone would be more


# ---------------------------------------------------------------------------- the whole


def test_two_cliques_joined_by_one_edge_are_cut_there():
    g = nx.disjoint_union(nx.complete_graph(10), nx.complete_graph(10))
    g.add_edge(3, 15)
    e = np.array(g.edges())
    for seed in range(5):
        r = multilevel_partition(Graph(n=20, src=e[:, 0], dst=e[:, 1], weight=np.ones(len(e))), 2,
                                 seed=seed)
        assert r.cut == 1 and sorted(r.loads.tolist()) == [10, 10]
        assert len(set(r.part[:10].tolist())) == 1 and r.part[0] != r.part[10]


def test_four_disjoint_grids_into_four_parts_cut_nothing():
    g = grid(6, 6, seed=0)
    src = np.concatenate([g.src + 36 * i for i in range(4)])
    dst = np.concatenate([g.dst + 36 * i for i in range(4)])
    r = multilevel_partition(Graph(n=144, src=src, dst=dst, weight=np.ones(len(src))), 4, seed=1)
    assert r.cut == 0 and r.loads.tolist() == [36] * 4 and r.balance == 1.0


@pytest.mark.parametrize("make", [lambda: grid(40, 50, seed=1), lambda: rmat(11, 8, seed=2),
                                  lambda: erdos_renyi(3000, 12000, seed=3)])
@pytest.mark.parametrize("k", [2, 7, 32])
def test_valid_balanced_deterministic(make, k):
    g = make()
    r = multilevel_partition(g, k, seed=5)
    lv = csr_from_edges(g.src, g.dst, g.weight, g.n)
    assert r.part.shape == (g.n,) and r.part.min() >= 0 and r.part.max() < k
    assert r.cut == cut_of(lv, r.part)
    assert np.array_equal(r.loads, np.bincount(r.part, minlength=k))
    assert r.balance <= 1.03 + 1e-12
    assert r.level_sizes[0] == (lv.n, lv.m) and r.level_sizes[-1][0] < lv.n
    again = multilevel_partition(g, k, seed=5)
    assert np.array_equal(r.part, again.part)


def test_heterogeneous_targets_and_vertex_weights():
    g = grid(30, 30, seed=4)
    vw = np.random.default_rng(0).integers(1, 5, g.n)
    g = Graph(n=g.n, src=g.src, dst=g.dst, weight=g.weight, node_weight=vw.astype(float))
    targets = [1, 2, 3, 2]
    r = multilevel_partition(g, 4, targets=targets, seed=0)
    share = vw.sum() * np.array(targets) / 8
    assert np.array_equal(r.loads, np.bincount(r.part, weights=vw, minlength=4).astype(int))
    assert (r.loads <= np.floor(1.03 * share)).all()


def test_inputs_scipy_and_csr_agree():
    from scipy.sparse import coo_matrix

    g = grid(10, 10, seed=0)
    lv = csr_from_edges(g.src, g.dst, g.weight, g.n)
    mat = coo_matrix((np.ones(len(g.src)), (g.src, g.dst)), shape=(100, 100))
    a = multilevel_partition(mat, 4, seed=2)
    b = multilevel_partition((lv.indptr, lv.indices), 4, seed=2)
    assert np.array_equal(a.part, b.part) and a.cut == b.cut


def test_a_huge_imbalance_is_no_bound():
    """(1 + imbalance) times a part's target overflowed int64: OverflowError at 1e308,
    bounds cast to garbage at 1e30. A part's bound is now at most the whole weight: the
    same partition as any imbalance past that (1e6 here, as before)."""
    g = grid(10, 10, seed=0)
    ref = multilevel_partition(g, 4, imbalance=1e6, seed=2)
    assert ref.cut == 0 and sorted(ref.loads.tolist()) == [0, 0, 0, 100]  # one part, any
    for imbalance in (1e30, 1e308):
        r = multilevel_partition(g, 4, imbalance=imbalance, seed=2)
        assert np.array_equal(r.part, ref.part) and r.imbalance == imbalance
    r = multilevel_partition(g, 3, imbalance=1e308, seed=2, targets=[1, 1e-300, 1])
    assert r.cut == 0 and sorted(r.loads.tolist()) == [0, 0, 100]
    # a share that rounds to 0 in the bisection (3 next to 1e308: 1 - f0 == 0.0) under a
    # tolerance whose (1 + tol) * weight overflows: inf * 0 was NaN, and int(NaN) a
    # ValueError (bench/fuzz.py --seed 27); the side of share 0 takes no weight, the other
    # every vertex
    r = multilevel_partition(g, 2, imbalance=1e308, seed=2, targets=[1e308, 3])
    assert r.cut == 0 and r.loads.tolist() == [100, 0]


def test_huge_targets_and_capacities(tmp_path, capsys):
    """Targets whose sum overflows (1e308 twice) made every fraction 0 and the bisection
    a NaN (ValueError); a fraction that underflows to 0 is refused. The command line
    refuses --capacities in the vertex cuts' words (it said 'targets')."""
    from vcut.cli import main

    g = grid(10, 10, seed=0)
    r = multilevel_partition(g, 3, targets=[1e308, 1e308, 1e308], seed=1)
    assert np.array_equal(r.part, multilevel_partition(g, 3, targets=[1, 1, 1], seed=1).part)
    with pytest.raises(InputError) as exc:
        multilevel_partition(g, 3, targets=[1e308, 1e308, 1e-300])
    assert str(exc.value) == ("target 1e-300 of part 2 is too small next to the largest, "
                              "1e+308: its fraction underflows to 0; give targets within a "
                              "factor of 1e300 of each other")
    path = tmp_path / "g.npz"
    write_graph(g, path)
    for caps, message in (("1,2", "error: 2 capacities given for 4 clusters"),
                          ("1,0,1,1", "error: capacity 0.0 of cluster 1 is not a positive number"),
                          ("1e308,1e308,1e-300,1",
                           "error: capacity 1e-300 of cluster 2 is too small next to the largest, "
                           "1e+308: its share underflows; give capacities within a factor of "
                           "1e300 of each other")):
        assert main(["partition", str(path), "-p", "4", "--algo", "multilevel",
                     f"--capacities={caps}"]) == 2
        assert capsys.readouterr().err.strip() == message
    assert main(["partition", str(path), "-p", "4", "--algo", "multilevel",
                 "--capacities=1e308,1e308,1e308,1e308", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["p"] == 4


@pytest.mark.parametrize("call, message", [
    (lambda g: multilevel_partition(g, 1), "k must be"),
    (lambda g: multilevel_partition(g, 101), "k must be"),
    (lambda g: multilevel_partition(g, 4, imbalance=0), "imbalance must be"),
    (lambda g: multilevel_partition(g, 4, imbalance=float("nan")), "imbalance must be"),
    (lambda g: multilevel_partition(g, 4, seed=-1), "seed must be"),
    (lambda g: multilevel_partition(g, 4, device="tpu"), "unknown device"),
    (lambda g: multilevel_partition(g, 4, targets=[1, 2]), "targets must be 4"),
    (lambda g: multilevel_partition(g, 4, targets=[1, 2, 0, 1]), "targets must be 4"),
    (lambda g: multilevel_partition(Graph(n=g.n, src=g.src, dst=g.dst, weight=-g.weight), 4),
     "must be >= 0"),
    (lambda g: multilevel_partition((np.array([0, 1, 1, 1]), np.array([1])), 2), "not symmetric"),
    (lambda g: multilevel_partition((np.array([0, 1, 2]), np.array([0, 0])), 2), "self-loops"),
    (lambda g: multilevel_partition((np.array([0, 1, 2]), np.array([1, 5])), 2), "must lie in"),
    (lambda g: multilevel_partition((np.array([0, 2, 1]), np.array([1, 0])), 2), "never decrease"),
    (lambda g: multilevel_partition("graph.txt", 2), "takes an ir_graph.Graph"),
])
def test_bad_input(call, message):
    with pytest.raises(InputError, match=message):
        call(grid(10, 10, seed=0))


def test_cli_writes_a_part_file_and_refuses_bad_input(tmp_path, capsys):
    from vcut.cli import main

    g = grid(20, 20, seed=0)
    path = tmp_path / "g.npz"
    write_graph(g, path)
    out = tmp_path / "g.part"
    assert main(["partition", str(path), "-p", "4", "--algo", "multilevel", "-o", str(out),
                 "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    part = np.array([int(x) for x in out.read_text().split()])
    assert len(part) == 400 and set(part.tolist()) == {0, 1, 2, 3}
    lv = csr_from_edges(g.src, g.dst, g.weight, g.n)
    assert res["edge_cut"] == cut_of(lv, part) and res["balance"] <= 1.03
    assert res["levels"][0] == [400, 760] and res["device"] == "cpu"
    for argv, message in (
            (["-p", "1"], "-p must be in [2, 400] (the number of vertices) for the multilevel "
                          "edge cut, got 1"),
            (["-p", "401"], "-p must be in [2, 400] (the number of vertices) for the multilevel "
                            "edge cut, got 401"),
            (["-p", "4", "--imbalance", "0.9"], "--imbalance must be > 1 (1.03 = 3 %), got 0.9")):
        assert main(["partition", str(path), "--algo", "multilevel", *argv]) == 2
        assert capsys.readouterr().err.splitlines()[-1] == f"error: {message}"
    assert out.read_text().split() == [str(x) for x in part]  # untouched by the refusals


def test_spac_with_the_multilevel_backend():
    from vcut.partition import partition_graph as vertex_cut

    g = rmat(10, 8, seed=3)
    res = vertex_cut(g, 8, "spac", options={"backend": "multilevel"})
    a = res.simple_assignment
    assert len(a) == res.info["simple_edges"] and a.min() >= 0 and a.max() < 8
    assert len(res.src) == len(res.weight) == len(a)
    loads = np.bincount(a, weights=res.weight, minlength=8)
    assert loads.max() / loads.mean() == pytest.approx(res.metrics.edge_weight_imbalance)
    assert res.metrics.edge_weight_imbalance <= 1.03 + 1e-9
    # the replication factor counts each vertex once per part holding one of its edges
    ends = np.concatenate([res.src, res.dst])
    copies = len(set(zip(ends.tolist(), np.concatenate([a, a]).tolist())))
    assert res.metrics.replication_factor == pytest.approx(copies / len(np.unique(ends)))


def test_zero_weight_edges_to_many_neighbours():
    # a centre with 50 zero-weight edges lists one part many times while refining
    src = np.r_[np.zeros(50, int), 1]
    dst = np.r_[np.arange(1, 51), 2]
    r = multilevel_partition(csr_from_edges(src, dst, np.r_[np.zeros(50), 1.0], 51), 2, seed=0)
    assert r.cut == 0 and sorted(r.loads.tolist()) == [25, 26]


def test_ratio_comparisons_are_exact_past_int64_products():
    # loads and bounds compare as ratios (load / bound); with vertex weights up to 2**40
    # their products pass 2**63: the comparison must stay exact (against fractions), and
    # a grid of vertices of weight 2**40 partitions exactly as with weight 1 at k = 2 and 4
    # (every decision is a ratio; with the products it cut 37 instead of 32 at k = 2). The k's
    # have whole targets, in every bisection too (k = 9: 400 / 500, then 200 / 200 and
    # 200 / 300, ... 100 each): a fractional one (k = 8: 112.5) is rounded to whole
    # vertices at weight 1 and to 2**-40 of one at weight 2**40, and the parts may then
    # differ.
    from fractions import Fraction

    ratio_less = from_python(RK.ratio_less)
    rng = np.random.default_rng(5)
    for bits in (20, 31, 40, 52, 62):
        a, c = rng.integers(0, 2**bits, 500), rng.integers(0, 2**bits, 500)
        b, d = rng.integers(1, 2**bits, 500), rng.integers(1, 2**bits, 500)
        c[:50], d[:50] = a[:50], b[:50]  # equal ratios
        for x, y, z, t in zip(a.tolist(), b.tolist(), c.tolist(), d.tolist()):
            assert ratio_less(x, y, z, t) == (Fraction(x, y) < Fraction(z, t))
    big = (5 * 2**40, 7 * 2**40 + 1, 5 * 2**40 + 1, 7 * 2**40)  # products near 2**85
    assert ratio_less(*big) and not ratio_less(*big[2:], *big[:2])
    g = grid(30, 30, seed=0)
    for k in (2, 4, 9):
        res = [multilevel_partition(csr_from_edges(g.src, g.dst, np.ones(g.m), g.n,
                                              np.full(g.n, w, np.int64)), k, seed=0)
               for w in (1, 2**40)]
        assert all(r.balance <= 1.03 for r in res)
        if k < 9:
            assert np.array_equal(res[0].part, res[1].part)
        # k = 9: a bisection's bound floors to 402 vertices at weight 1 and to 402.97 at
        # 2**40; the 2-way FM crosses bounds for a while (its sides take turns) and weighs
        # one vertex over side 0's bound against one over side 1's by the share of the
        # bound broken (1 / 402 against 1 / 503 at weight 1, 0.03 / 402.97 against
        # 0.29 / 503.7 at 2**40): the two can differ there, exactly within the bounds


def test_memory_is_checked_before_each_contraction(tmp_path, capsys, monkeypatch):
    """A contraction step may touch 16 bytes per adjacency entry of its fine level and 80
    per fine vertex (`coarsening.check_level_memory`); one that does not fit is refused
    before it allocates: on the graph itself an InputError (exit 2, nothing written), on
    a later level an OutOfMemory (exit 11) naming that level."""
    from vcut_base.errors import OutOfMemory
    from vcut_base.memory import format_bytes
    from runtime.multilevel import coarsening

    g = grid(20, 20, seed=0)  # 400 vertices, 760 edges: 1,520 entries
    lv = csr_from_edges(g.src, g.dst, g.weight, g.n)
    need = 16 * 1520 + 80 * 400
    assert coarsening.check_level_memory(lv, first=True, available=need) == need == 56320
    with pytest.raises(InputError) as e:
        coarsening.check_level_memory(lv, first=True, available=need - 1)
    assert str(e.value) == (
        f"multilevel partitioning of a graph of 400 vertices and 760 edges needs about "
        f"{format_bytes(need)} of memory but {format_bytes(need - 1)} are available; use a "
        "machine with more memory, or a streaming vertex cut (e.g. --algo hdrf) that keeps "
        "its edge arrays on disk (--spill DIR)")
    with pytest.raises(OutOfMemory, match="^contracting a level of 400 vertices and 760 "):
        coarsening.check_level_memory(lv, available=100)
    # small levels are not checked (each check reads /proc/meminfo) unless the threshold says
    assert need < coarsening.CHECK_FROM_BYTES
    levels, _ = coarsening.coarsen(lv, 4, 0)  # the hierarchy multilevel_partition builds
    monkeypatch.setattr("vcut_base.memory.available_bytes", lambda: need - 1)
    assert multilevel_partition(lv, 4, seed=0).balance <= 1.03
    monkeypatch.setattr(coarsening, "CHECK_FROM_BYTES", 0)
    with pytest.raises(InputError, match="^multilevel partitioning of a graph of 400 "):
        multilevel_partition(lv, 4, seed=0)
    # a later level: memory for the graph and its first contraction (checked twice: up
    # front and by the coarsening), then none
    calls = []

    def shrinking():
        calls.append(1)
        return 1 << 40 if len(calls) <= 2 else 100

    monkeypatch.setattr("vcut_base.memory.available_bytes", shrinking)
    with pytest.raises(OutOfMemory) as e:
        multilevel_partition(lv, 4, seed=0)
    assert str(e.value).startswith(f"contracting a level of {levels[1].n:,} vertices and "
                                   f"{levels[1].m:,} edges needs about ")
    # the command line: one line, exit 2, no part file (50,000 bytes hold what the reader
    # checks, 25 KiB for 400 nodes, not the 56,320 of the first contraction)
    from vcut.cli import main

    path, out = tmp_path / "g.npz", tmp_path / "g.part"
    write_graph(g, path)
    monkeypatch.setattr("vcut_base.memory.available_bytes", lambda: 50_000)
    assert main(["partition", str(path), "-p", "4", "--algo", "multilevel", "-o",
                 str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(
        "error: multilevel partitioning of a graph of 400 vertices and 760 edges needs about")
    assert not out.exists()


def test_out_of_memory_advice_fits_the_command(tmp_path, capsys, monkeypatch):
    """A MemoryError in a phase is one line, exit 11, with what that command can do with
    less (partition: fewer parts, or a vertex cut on disk or on a cluster), not the
    analysis's --window / --roi advice."""
    import runtime.multilevel as ML
    from vcut_base.memory import format_bytes
    from vcut.cli import main

    def boom(*a, **k):
        raise MemoryError("Allocation failed")

    monkeypatch.setattr(ML, "initial_partition", boom)
    monkeypatch.setattr("vcut_base.memory.available_bytes", lambda: 3 << 30)
    path = tmp_path / "g.npz"
    write_graph(grid(20, 20, seed=0), path)
    assert main(["partition", str(path), "-p", "4", "--algo", "multilevel"]) == 11
    err = capsys.readouterr().err
    assert err == (f"error: out of memory ({format_bytes(3 << 30)} available now); use fewer "
                   "parts (-p); a vertex cut can keep its edge arrays on disk (--spill DIR) "
                   "or hold the graph on a cluster (--out-of-core --workers N), or use a "
                   "machine with more memory\n")


def test_thin_hierarchies_drop_levels_that_kept_most_entries():
    """``thin``: a level between the finest and the coarsest with at least that share
    of the entries of the last level kept is dropped and the maps across it composed; the
    kept levels are the full hierarchy's own (the matchings are seeded by step, not by
    level), so projecting through the composed maps is projecting through all of them.
    RMAT 2^9, 16 edges a vertex: entries 9,568, 7,700, 4,586, 2,112, 1,698, 1,676; at 0.75
    the second (7,700 >= 7,176) and the fifth (1,698 >= 0.75 x 2,112 = 1,584) go."""
    from runtime.multilevel.coarsening import coarsen

    g = rmat(9, 16, seed=2)
    lv = csr_from_edges(g.src, g.dst, g.weight, g.n)
    full, fmaps = coarsen(lv, 2, 7, 60, edges=False)
    thin, tmaps = coarsen(lv, 2, 7, 60, edges=False, thin=0.75)
    assert [len(x.indices) for x in full] == [9568, 7700, 4586, 2112, 1698, 1676]
    kept = [0, 2, 3, 5]
    assert len(thin) == len(kept) and len(tmaps) == len(kept) - 1
    for t, i in zip(thin, kept):
        f = full[i]
        assert all(np.array_equal(getattr(t, a), getattr(f, a))
                   for a in ("indptr", "indices", "ewgt", "vwgt"))
    for j in range(len(kept) - 1):
        composed = np.arange(full[kept[j]].n)
        for i in range(kept[j], kept[j + 1]):
            composed = fmaps[i][composed]
        assert np.array_equal(tmaps[j], composed)
    # without thin, nothing changes: the same hierarchy as before the option
    again, amaps = coarsen(lv, 2, 7, 60, edges=False, thin=None)
    assert [len(x.indices) for x in again] == [len(x.indices) for x in full]
    assert all(np.array_equal(a, b) for a, b in zip(amaps, fmaps))
