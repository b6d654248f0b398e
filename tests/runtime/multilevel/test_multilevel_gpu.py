"""The multilevel partitioner's GPU phases (numba.cuda; under the CUDA simulator without a
GPU, with small launches so that every kernel spans several blocks): each phase against a
plain Python reference of its rule or the CPU twin's kernel, the refinement's invariants,
the whole run's validity and determinism, and the bad inputs."""

import json
import re

import numpy as np
import pytest

from vcut_base.errors import InputError
from ir_graph import write_graph
from runtime import config, gpu as runtime_gpu
from runtime.generators import grid
from runtime.multilevel import coarsening_kernels as CK
from runtime.multilevel import csr_from_edges, gpu, multilevel_partition
from tests.helpers import M64, cut_of, edges_of, mix, on_device, random_level


@pytest.fixture(autouse=True)
def small_launches(small_launches, monkeypatch):
    monkeypatch.setattr(config, "SCAN_BLOCK", 8)
    monkeypatch.setattr(gpu, "CHUNK", 64)  # several arena chunks


def keys(n, seed):
    """The device's vertex keys: splitmix64 of (mix(seed + golden) ^ v), shifted to 63 bits."""
    s = mix((seed + 0x9E3779B97F4A7C15) & M64)
    return [mix(s ^ v) >> 1 for v in range(n)]


def reference_matching(lv, key, max_vw, rounds):
    """The matching rule of `runtime.multilevel.gpu`, one step at a time in plain Python."""
    n = lv.n
    nbrs = [[(int(lv.indices[e]), int(lv.ewgt[e])) for e in range(lv.indptr[u], lv.indptr[u + 1])]
            for u in range(n)]
    vw = lv.vwgt.tolist()
    match = [-1] * n
    prop = [-1] * n
    propw = [0] * n

    def heaviest(u):
        best = (-1, -1, -1)  # weight, key xor, vertex
        for v, w in nbrs[u]:
            if match[v] < 0 and vw[u] + vw[v] <= max_vw:
                best = max(best, (w, key[u] ^ key[v], v))
        return best[2], best[0]

    for r in range(rounds):
        for u in range(n):
            if match[u] < 0 and nbrs[u] and (r == 0 or (prop[u] >= 0 and match[prop[u]] >= 0)):
                prop[u], propw[u] = heaviest(u)
        made = 0
        free = [u for u in range(n) if match[u] < 0]
        for u in free:
            v = prop[u]
            if v > u and match[v] < 0 and prop[v] == u:
                match[u], match[v] = v, u
                made += 1
        still = [u for u in range(n) if match[u] < 0]
        targeted = {prop[u] for u in still if prop[u] >= 0 and match[prop[u]] < 0}
        offers = {}
        for u in still:
            v = prop[u]
            if u not in targeted and v >= 0 and match[v] < 0:
                offers[v] = max(offers.get(v, (-1, -1)), (min(propw[u], 2**31 - 1), u))
        for v, (_, u) in offers.items():
            match[v], match[u] = u, v
            made += 1
        if made == 0:
            break
    left = [u for u in range(n) if match[u] < 0]
    heavy = {}
    for u in left:
        if nbrs[u]:
            heavy[u] = max(nbrs[u], key=lambda p: p[1])[0]  # the first of equal weight
    if len(left) > n // 10:
        for c in sorted(set(heavy.values())):
            pending = -1
            for u, _ in nbrs[c]:
                if match[u] >= 0 or heavy.get(u) != c:
                    continue
                if pending >= 0 and vw[u] + vw[pending] <= max_vw:
                    match[u], match[pending] = pending, u
                    pending = -1
                else:
                    pending = u
    islands = [u for u in range(n) if match[u] < 0 and not nbrs[u]]
    for a, b in zip(islands[0::2], islands[1::2]):
        if vw[a] + vw[b] <= max_vw:
            match[a], match[b] = b, a
    return [u if m < 0 else m for u, m in enumerate(match)]


def device_match(lv, seed, max_vw):
    cuda, keep, work, dl = on_device(lv)
    stats = {"match_rounds": 0}
    match = gpu.match_on_device(cuda, work, dl, gpu._keys(work, lv.n, seed), max_vw, stats)
    return cuda, keep, work, dl, match


@pytest.mark.parametrize("seed,heavy", [(0, 256), (1, 256), (2, 256), (3, 256), (4, 4), (5, 3)])
def test_matching_is_the_rule_and_valid(monkeypatch, seed, heavy):
    # weighted random graphs (with islands): the device's matching is exactly the rule's,
    # a valid matching within the weight cap; also when the vertices of more than 3 or 4
    # neighbours propose by a block of threads each (a reduction in the rule's order)
    monkeypatch.setattr(gpu.CG, "HEAVY_DEGREE", heavy)
    lv = random_level(seed, n=40, m=70, wmax=3, vmax=3)
    assert heavy > 100 or (np.diff(lv.indptr) > heavy).sum() >= 5
    for max_vw in (3, 6):
        *_, match = device_match(lv, seed, max_vw)
        got = match.copy_to_host()[:lv.n].tolist()
        assert got == reference_matching(lv, keys(lv.n, seed), max_vw, gpu.MATCH_ROUNDS)
        for u, v in enumerate(got):
            assert got[v] == u
            if u != v:
                assert lv.vwgt[u] + lv.vwgt[v] <= max_vw


def test_matching_by_hand():
    # a path 0-1-2-3 with weights 1, 5, 1: 1 and 2 propose to each other; 0 and 3 then
    # have no free neighbour and no common one, so they stay single
    lv = csr_from_edges([0, 1, 2], [1, 2, 3], [1, 5, 1], 4)
    *_, match = device_match(lv, 0, 10)
    assert match.copy_to_host()[:4].tolist() == [0, 2, 1, 3]
    # a path 0-1-2-3 with weights 1, 2, 3: 2 and 3 propose to each other; 0 proposes to 1,
    # which proposes to 2; nobody proposes to 0, so 0 offers itself to 1 and 1 takes it:
    # everything matched in the first round (the second finds nothing and stops)
    lv = csr_from_edges([0, 1, 2], [1, 2, 3], [1, 2, 3], 4)
    *_, match = device_match(lv, 0, 10)
    assert match.copy_to_host()[:4].tolist() == [1, 0, 3, 2]
    # a star with 6 leaves and the cap 2: the centre and leaf 4 (the heaviest edge)
    # propose to each other; the other leaves then have no free neighbour and pair two
    # hops apart in the centre's row order (1-2, 3-5; 6 is left), as more than a tenth
    # are unmatched
    lv = csr_from_edges([0] * 6, [1, 2, 3, 4, 5, 6], [1, 1, 1, 3, 1, 1], 7)
    *_, match = device_match(lv, 0, 2)
    assert match.copy_to_host()[:7].tolist() == [4, 2, 1, 5, 0, 3, 6]
    # islands pair in id order, the 2i-th with the next, within the cap: 0-1; 2-3 would
    # weigh 3 (island 2 weighs 2), so 2, 3 and 4 stay single
    lv = csr_from_edges([], [], [], 5, [1, 1, 2, 1, 1])
    *_, match = device_match(lv, 0, 2)
    assert match.copy_to_host()[:5].tolist() == [1, 0, 2, 3, 4]


@pytest.mark.parametrize("heavy", [256, 5])
def test_cmap_and_contraction_equal_the_cpu_kernels(monkeypatch, heavy):
    # with 5: the coarse rows bounded by more than 5 entries are built by a block each
    # (slots in any order, a bitonic sort of lengths that are no power of two)
    monkeypatch.setattr(gpu.CG, "HEAVY_DEGREE", heavy)
    for seed in range(3 if heavy > 100 else 1):  # one seed's rows: lengths 6 to 20 or so
        lv = random_level(seed, n=50, m=120)
        cuda, keep, work, dl, match = device_match(lv, seed, 8)
        mate = match.copy_to_host()[:lv.n]
        deg = np.diff(lv.indptr)
        bounds = [deg[u] + (deg[mate[u]] if mate[u] != u else 0)
                  for u in range(lv.n) if u <= mate[u]]
        assert heavy > 100 or sum(b > heavy for b in bounds) >= 5
        coarse, cmap = gpu.contract_on_device(cuda, keep, work, dl, match)
        want_cmap, nc = CK.coarse_map(mate)
        assert cmap.copy_to_host()[:lv.n].tolist() == want_cmap.tolist() and coarse.n == nc
        ptr, idx, w, vw = CK.contract(lv.indptr, lv.indices, lv.ewgt, lv.vwgt, mate, want_cmap, nc)
        h = coarse.host()
        assert h.vwgt.tolist() == vw.tolist() and h.indptr.tolist() == ptr.tolist()
        for c in range(nc):  # the same rows, the device's sorted by neighbour
            row = sorted(zip(idx[ptr[c]:ptr[c + 1]].tolist(), w[ptr[c]:ptr[c + 1]].tolist()))
            got = list(zip(h.indices[h.indptr[c]:h.indptr[c + 1]].tolist(),
                           h.ewgt[h.indptr[c]:h.indptr[c + 1]].tolist()))
            assert got == row
        # weights kept: vertex weight in full, edge weight less the pairs' own edges
        inner = sum(wt for (u, v), wt in edges_of(lv).items() if mate[u] == v)
        assert h.vwgt.sum() == lv.vwgt.sum()
        assert sum(edges_of(h).values()) == sum(edges_of(lv).values()) - inner


def refined(lv, part, maxload, seed=0, jet=False):
    """The device refinement of ``part``; without ``jet`` the independent moves alone."""
    cuda, keep, work, dl = on_device(lv)
    d_part = gpu._upload(cuda, keep, part)
    stats = gpu.new_stats()
    key = gpu._keys(work, lv.n, seed)
    gpu.refine_on_device(cuda, work, dl, d_part, np.asarray(maxload, dtype=np.int64), key,
                         np.random.default_rng(seed), stats, jet=jet)
    return d_part.copy_to_host()[:lv.n], stats


def gains_left(lv, part, maxload):
    """Moves with a positive gain into a part with room for the vertex, and moves of gain 0
    into a part that stays lighter than the vertex's own."""
    k = len(maxload)
    load = np.bincount(part, weights=lv.vwgt, minlength=k)
    found = []
    for v in range(lv.n):
        conn = np.zeros(k, dtype=np.int64)
        for e in range(lv.indptr[v], lv.indptr[v + 1]):
            conn[part[lv.indices[e]]] += lv.ewgt[e]
        for q in range(k):
            a, room = part[v], load[q] + lv.vwgt[v] <= maxload[q]
            if q != a and room and (conn[q] > conn[a] or (
                    conn[q] == conn[a] > 0 and load[q] + lv.vwgt[v] < load[a])):
                found.append((v, q))
    return found


@pytest.mark.parametrize("seed", range(3))
def test_refinement_lowers_the_cut_keeps_bounds_and_ends_at_a_local_optimum(seed):
    lv = random_level(seed, n=60, m=150, vmax=2)
    k = 4
    rng = np.random.default_rng(seed)
    part = rng.integers(0, k, lv.n)
    load = np.bincount(part, weights=lv.vwgt, minlength=k).astype(np.int64)
    maxload = np.maximum(load, int(1.1 * lv.vwgt.sum() / k))  # every bound holds
    before = cut_of(lv, part)
    out, stats = refined(lv, part, maxload, seed)
    assert stats["passes"] < gpu.REFINE_PASSES and stats["host_repairs"] == 0
    assert cut_of(lv, out) == before - stats["gain"] < before
    assert (np.bincount(out, weights=lv.vwgt, minlength=k) <= maxload).all()
    assert gains_left(lv, out, maxload) == []


def test_heavy_vertices_refine_as_one_thread_would(monkeypatch, seed=1):
    # k = 4 <= MAXP, so the one-thread rule sees every neighbour part too: a block per
    # vertex of more than 6 neighbours must choose exactly the same moves
    lv = random_level(seed, n=30, m=110, vmax=2)
    k = 4
    part = np.random.default_rng(seed).integers(0, k, lv.n)
    load = np.bincount(part, weights=lv.vwgt, minlength=k).astype(np.int64)
    maxload = np.maximum(load, int(1.1 * lv.vwgt.sum() / k))
    monkeypatch.setattr(gpu.CG, "HEAVY_DEGREE", 10**9)
    alone, stats1 = refined(lv, part, maxload, seed)
    monkeypatch.setattr(gpu.CG, "HEAVY_DEGREE", 6)
    blocks, stats2 = refined(lv, part, maxload, seed)
    heavy = int((np.diff(lv.indptr) > 6).sum())
    assert stats1["heavy_vertices"] == 0 and stats2["heavy_vertices"] == heavy > 5
    assert blocks.tolist() == alone.tolist()
    assert [stats2[x] for x in ("passes", "moves", "gain")] == \
        [stats1[x] for x in ("passes", "moves", "gain")]


def test_a_heavy_vertex_considers_every_neighbour_part():
    # vertex 0 (part 0) joins vertex j (part j) by an edge of weight j, j = 1..40: its best
    # move is to part 40, gain 40 - 0; one thread per vertex looks only at the first MAXP
    # (32) parts met in its row and so picks part 32
    k = 41
    lv = csr_from_edges([0] * 40, list(range(1, 41)), list(range(1, 41)), 41)
    part = np.arange(41)
    cuda, keep, work, dl = on_device(lv)
    d_part = gpu._upload(cuda, keep, part)
    load = gpu._upload(cuda, work, np.ones(k, dtype=np.int64))
    d_max = gpu._upload(cuda, work, np.full(k, 3, dtype=np.int64))
    cto, cgain, req, counters = work.take(41), work.take(41), work.take(k), work.take(3)
    gpu._run(gpu.RG.best_move_kernel, 41, dl.indptr, dl.indices, dl.ewgt, dl.vwgt, d_part, load,
             d_max, 41, 1, 0, cto, cgain, k, req, counters)
    assert (int(cto[0:1].copy_to_host()[0]), int(cgain[0:1].copy_to_host()[0])) == (32, 32)
    hv = gpu._upload(cuda, work, np.array([0]))
    gpu._launch(gpu.RG.best_move_heavy_kernel, (1, gpu.CG.HEAVY_TPB), dl.indptr, dl.indices,
                dl.ewgt, dl.vwgt, d_part, load, d_max, k, 1, hv, 1, cto, cgain)
    assert (int(cto[0:1].copy_to_host()[0]), int(cgain[0:1].copy_to_host()[0])) == (40, 40)


@pytest.mark.parametrize("width", [1, 2, 8, 32, 3])
def test_the_cut_count_is_the_cut_at_every_group_width(monkeypatch, width):
    # a hub of 40 neighbours beside a random level: groups of `width` lanes (8 threads a
    # block here, so 32 is clipped to 8 and 3 rounded down to 2) on a grid of at most the
    # simulator's 32 resident threads take several vertices each; the count is twice the
    # cut however the edges are shared out
    rng = np.random.default_rng(width)
    base = edges_of(random_level(5, n=60, m=150))
    src = [u for u, _ in base] + [0] * 40
    dst = [v for _, v in base] + list(range(20, 60))
    lv = csr_from_edges(src, dst, list(base.values()) + rng.integers(1, 9, 40).tolist(), 60)
    part = rng.integers(0, 4, lv.n)
    monkeypatch.setattr(gpu, "CUT_WIDTH", width)
    cuda, keep, work, dl = on_device(lv)
    out = gpu._upload(cuda, work, np.zeros(1, dtype=np.int64))
    gpu._cut(dl, gpu._upload(cuda, keep, part), out)
    assert int(out.copy_to_host()[0]) == 2 * cut_of(lv, part) > 0


def test_launches_per_matching_round_and_refinement_pass(monkeypatch):
    # the host's share is per launch (~50-100 us from Python on an H200): a matching round
    # is 5 launches and a refinement pass 5, the resets of their buffers folded into them
    monkeypatch.setattr(gpu, "PROFILE", {})
    lv = random_level(0, n=60, m=150, vmax=2)
    cuda, keep, work, dl = on_device(lv)
    stats = {"match_rounds": 0}
    gpu.match_on_device(cuda, work, dl, gpu._keys(work, lv.n, 0), 4, stats)
    launches = {name: count for name, (_, count) in gpu.PROFILE.items()}
    rounds = stats["match_rounds"]
    assert rounds >= 2
    for name in ("propose", "handshake", "received", "offer", "accept"):
        assert launches[name + "_kernel"] == rounds
    assert launches["fill_kernel"] == 4  # match and proposals before, two after the rounds
    gpu.PROFILE.clear()
    k = 4
    part = np.random.default_rng(0).integers(0, k, lv.n)
    load = np.bincount(part, weights=lv.vwgt, minlength=k).astype(np.int64)
    out, stats = refined(lv, part, np.maximum(load, int(1.1 * lv.vwgt.sum() / k)))
    launches = {name: count for name, (_, count) in gpu.PROFILE.items()}
    assert stats["passes"] >= 2
    for name in ("best_move", "select", "request", "commit", "apply"):
        assert launches[name + "_kernel"] == stats["passes"]
    assert launches["fill_kernel"] == 1  # the loads, once


def test_refinement_takes_zero_gain_moves_towards_a_lighter_part(monkeypatch):
    # the path 0-1-2-3 in parts 0, 0, 0, 1, bounds 3 and 4 (so 3 cannot join part 0):
    # vertex 2 has one neighbour in each part (gain 0) and part 1 stays lighter with it
    # (2 < 3): it moves, the cut stays 1, the loads become 2 / 2; then 1 or 2 (gain 0)
    # would make the other part the heavier: nothing more. Without zero-gain moves
    # nothing moves at all.
    lv = csr_from_edges([0, 1, 2], [1, 2, 3], [1, 1, 1], 4)
    part = np.array([0, 0, 0, 1])
    out, stats = refined(lv, part, np.array([3, 4]))
    assert out.tolist() == [0, 0, 1, 1] and (stats["moves"], stats["gain"]) == (1, 0)
    monkeypatch.setattr(gpu, "ZERO_MOVES", False)
    out, stats = refined(lv, part, np.array([3, 4]))
    assert out.tolist() == [0, 0, 0, 1] and stats["moves"] == 0


def test_refinement_commits_a_subset_when_a_part_is_saturated():
    # 2 and 3 (part 1) each join both ends of the edge 0-1 (part 0): each gains 2 moving to
    # part 0, which has room for one of them (bound 3); together they are over, so no part's
    # requests fit and the subset step commits the first of the best: 2. Then 3 has no room
    # and 0, 1 would gain 1 moving to part 1, which is full (bound 4): the cut falls 4 -> 2
    lv = csr_from_edges([0, 2, 2, 3, 3, 4], [1, 0, 1, 0, 1, 5], [1] * 6, 6)
    part = np.array([0, 0, 1, 1, 1, 1])
    out, stats = refined(lv, part, np.array([3, 4]))
    assert out.tolist() == [0, 0, 0, 1, 1, 1]
    assert stats["subset_moves"] == 1 and stats["moves"] == 0 and stats["gain"] == 2
    assert (cut_of(lv, part), cut_of(lv, out)) == (4, 2)


def test_refinement_repairs_an_overloaded_part_on_the_host():
    lv = grid(6, 6, seed=0)
    lv = csr_from_edges(lv.src, lv.dst, lv.weight, lv.n)
    part = np.zeros(36, dtype=np.int64)
    part[:6] = 1  # part 0 holds 30 of 36, bound 20
    out, stats = refined(lv, part, np.array([20, 20]))
    assert stats["host_repairs"] == 1 and stats["repair_moves"] >= 10
    assert (np.bincount(out, minlength=2) <= 20).all()


def test_partition_on_the_gpu_is_valid_deterministic_and_close_to_the_cpu_twin():
    g = grid(11, 11, seed=0)
    lv = csr_from_edges(g.src, g.dst, g.weight, g.n)
    for k in (2, 4):
        a = multilevel_partition(g, k, device="gpu", seed=3)
        c = multilevel_partition(g, k, device="cpu", seed=3)
        if k == 4:
            assert np.array_equal(a.part, multilevel_partition(g, k, device="gpu", seed=3).part)
        assert a.device == "gpu"
        assert set(a.part.tolist()) == set(range(k)) and a.balance <= 1.03
        # k = 2 coarsens (to 60 vertices); at k = 4 the stop size is 120 = 30 k, and the
        # coarse vertex cap 1.5 x 121 / 120 admits no pair: one level, refined from the start
        assert a.cut == cut_of(lv, a.part) and len(a.level_sizes) == (3 if k == 2 else 1)
        assert a.gpu["match_rounds"] >= 1 and a.seconds["coarsening"] > 0
        assert a.cut <= 1.5 * c.cut


def test_heterogeneous_targets_on_the_gpu():
    g = grid(12, 12, seed=0)
    r = multilevel_partition(g, 3, device="gpu", targets=[1, 2, 3], seed=1)
    want = np.array([1, 2, 3]) / 6 * 144
    assert (r.loads <= np.floor(1.03 * want)).all() and r.loads.sum() == 144


def test_gpu_bad_input(monkeypatch, tmp_path, capsys):
    from vcut.cli import main

    g = grid(10, 10, seed=0)
    monkeypatch.setattr(config, "DEVICE_MEMORY", 1000)
    with pytest.raises(InputError, match=r"needs about .* KiB of GPU memory, 1,000 bytes is "
                                         r"free; use --device cpu"):
        multilevel_partition(g, 4, device="gpu")
    monkeypatch.setattr(config, "DEVICE_MEMORY", None)
    path = tmp_path / "g.npz"
    write_graph(g, path)
    monkeypatch.setattr(runtime_gpu, "_device_present", lambda: False)
    with pytest.raises(InputError, match="no CUDA GPU is available here"):
        multilevel_partition(g, 4, device="gpu")
    assert multilevel_partition(g, 4, device="auto").device == "cpu"
    assert main(["partition", str(path), "-p", "4", "--algo", "multilevel", "--device",
                 "gpu"]) == 2
    assert "no CUDA GPU is available here" in capsys.readouterr().err


def test_cli_on_the_gpu(tmp_path, capsys):
    from vcut.cli import main

    g = grid(8, 8, seed=0)
    path = tmp_path / "g.npz"
    write_graph(g, path)
    out = tmp_path / "g.part"
    assert main(["partition", str(path), "-p", "2", "--algo", "multilevel", "--device", "gpu",
                 "-o", str(out), "--json"]) == 0
    res = json.loads(capsys.readouterr().out)
    part = np.array([int(x) for x in out.read_text().split()])
    lv = csr_from_edges(g.src, g.dst, g.weight, g.n)
    assert res["device"] == "gpu" and res["edge_cut"] == cut_of(lv, part)
    assert res["gpu"]["match_rounds"] >= 1 and res["gpu"]["device_bytes"] > 0
    assert main(["partition", str(path), "-p", "2", "--algo", "multilevel", "--device",
                 "gpu"]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("on the GPU"))
    assert "matching rounds" in line and "MiB of device memory" in line
    assert res["balance"] <= 1.03 and sorted(np.bincount(part).tolist()) == [32, 32]


def test_split_graph_on_the_device_is_the_hosts():
    # Ψ (contracted) built on the device: the same CSR as the host's split pairs made
    # symmetric and sorted (csr_from_edges), with and without the cycles, isolated
    # vertices included
    from vcut.spac_kernels import split_pairs
    from vcut.spac import _int_weights

    rng = np.random.default_rng(5)
    pairs = {(int(min(a, b)), int(max(a, b))) for a, b in rng.integers(0, 30, (80, 2)) if a != b}
    src, dst = (np.array(x, dtype=np.int64) for x in zip(*sorted(pairs)))
    w = rng.uniform(0.5, 3.0, len(src))
    for cycles in (True, False):
        a, b, aw, _ = split_pairs(src, dst, 33, True, cycles, 1000)
        want = csr_from_edges(a, b, aw, len(src), _int_weights(w))
        got = gpu.split_graph_on_device(src, dst, _int_weights(w), 33, cycles).host()
        for x, y in zip((want.indptr, want.indices, want.ewgt, want.vwgt),
                        (got.indptr, got.indices, got.ewgt, got.vwgt)):
            assert x.tolist() == y.tolist()


def test_spac_with_the_multilevel_backend_on_the_gpu():
    # split-and-connect built and partitioned on the device: the edge partition is the one
    # the host-built split graph gets from the GPU partitioner (the same CSR, and the GPU
    # run is deterministic), with the checks of the CPU test
    from runtime.generators import rmat
    from vcut.partition import partition_graph as vertex_cut
    from runtime.vertex_partition import vertex_partition
    from vcut.spac import split_and_connect

    g = rmat(5, 4, seed=3)
    res = vertex_cut(g, 2, "spac", options={"backend": "multilevel"}, device="gpu", seed=1)
    a = res.simple_assignment
    assert res.info["device"] == "gpu" and res.info["backend"] == "multilevel"
    assert len(a) == res.info["simple_edges"] and set(a.tolist()) == {0, 1}
    assert res.metrics.edge_weight_imbalance <= 1.03 + 1e-9
    sg = split_and_connect(res.src, res.dst, res.weight, g.n)
    host_built = vertex_partition(sg.xadj, sg.adjncy, sg.adjwgt, sg.vwgt, 2, seed=1,
                                  backend="multilevel", device="gpu")
    assert a.tolist() == host_built.tolist()
    assert res.info["auxiliary_cut"] == int(np.count_nonzero(
        host_built[np.repeat(np.arange(sg.n), np.diff(sg.xadj))] != host_built[sg.adjncy])) // 2
    with pytest.raises(InputError, match="SPAC with --backend multilevel"):
        vertex_cut(g, 2, "spac", device="gpu")  # METIS runs on the CPU only


def test_spac_on_the_gpu_from_the_command_line(tmp_path, capsys):
    from vcut.cli import main

    path = tmp_path / "g.txt"  # two triangles joined by the edge 2-3
    path.write_text("0 1\n1 2\n2 0\n2 3\n3 4\n4 5\n5 3\n")
    assert main(["partition", str(path), "-p", "2", "--algo", "spac", "--backend",
                 "multilevel", "--device", "gpu"]) == 0
    rows = capsys.readouterr().out.splitlines()
    spac = next(x for x in rows if x.startswith("SPAC"))
    # the split graph: a vertex per edge; 10 auxiliary edges, one at each of the degree-2
    # vertices 0, 1, 4, 5 and a cycle of three at each of 2 and 3. The best cut (4 + 3
    # edges) puts the bridge with one triangle and cuts its two links to the other one
    assert re.fullmatch(r"SPAC +multilevel on the GPU, contracted: 7 vertices, 2 of 10 "
                        r"auxiliary edges cut", spac), spac
    assert next(x for x in rows if x.startswith("replication factor")).split()[-1] == "1.1667"


def test_arena_hands_out_disjoint_views_and_reuses_them(monkeypatch):
    cuda = runtime_gpu.require_gpu()
    arena = gpu.Arena(cuda, "test region")
    x, y, z = arena.take(40), arena.take(40), arena.take(10)  # chunks of 64, then 128
    assert arena.nbytes == 8 * (64 + 128)
    for i, d in enumerate((x, y, z)):
        d.copy_to_device(np.full(len(d), i, dtype=np.int64))
    assert [d.copy_to_host().tolist() for d in (x, y, z)] == [[0] * 40, [1] * 40, [2] * 10]
    arena.reset()
    again = arena.take(40)  # the first chunk again, not a new one
    again.copy_to_device(np.full(40, 7, dtype=np.int64))
    assert x.copy_to_host().tolist() == [7] * 40 and arena.nbytes == 8 * (64 + 128)

    def no_memory(*a, **k):
        raise MemoryError("out of device memory")

    monkeypatch.setattr(cuda, "device_array", no_memory)
    with pytest.raises(InputError, match=r"the GPU ran out of memory for the test region "
                                         r"\(7.8 KiB more after 1.5 KiB\): MemoryError; use "
                                         r"--device cpu"):
        arena.take(1000)


def test_the_runtime_package_api():
    # the names: runtime.multilevel_partition and runtime.minimum_spanning_forest are
    # the multilevel partitioner's and Borůvka's, results and all
    import runtime
    from runtime.mst import minimum_spanning_forest

    g = grid(6, 6, seed=0)
    a = runtime.multilevel_partition(g, 2, device="gpu", seed=4)
    b = multilevel_partition(g, 2, device="gpu", seed=4)
    assert a.device == "gpu" and np.array_equal(a.part, b.part) and a.cut == b.cut
    f, want = runtime.minimum_spanning_forest(g), minimum_spanning_forest(g)
    assert f.weight == want.weight and f.edges.tolist() == want.edges.tolist()
