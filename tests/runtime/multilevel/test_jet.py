"""Jet refinement (`runtime.multilevel.jet_kernels`, `refinement.jet_loop`): a round and a
rebalancing round against plain Python transcriptions of their definitions, the
afterburner on a hand case, the loop's invariants, and the GPU's operations (under the
CUDA simulator without a GPU) against the CPU's, part for part."""

import json

import numpy as np
import pytest

from vcut_base.errors import InputError
from runtime import config
from runtime.multilevel import coarsening_kernels as CK
from runtime.multilevel import csr_from_edges, gpu, multilevel_partition, refinement
from runtime.multilevel import jet_kernels as J
from runtime.multilevel import refinement_kernels as RK
from tests.helpers import cut_of, from_python, on_device, on_disk, random_level

_M63 = (1 << 63) - 1


def rows(lv):
    return [[(int(lv.indices[e]), int(lv.ewgt[e])) for e in range(lv.indptr[v], lv.indptr[v + 1])]
            for v in range(lv.n)]


def seen_parts(nbrs, part, v):
    """{part: connection} over the first MAXP other parts of v's row, and v's own."""
    conn, own = {}, 0
    for u, w in nbrs[v]:
        q = int(part[u])
        if q == part[v]:
            own += w
        elif q in conn:
            conn[q] += w
        elif len(conn) < J.MAXP:
            conn[q] = w
    return conn, own


def best_part(conn, load, bound, wv, maxload):
    """The part with room below ``bound`` of highest connection, then lightest relative to
    its (max) bound, then lowest id."""
    ok = [q for q in conn if load[q] + wv <= bound[q]]
    if not ok:
        return None
    return min(ok, key=lambda q: (-conn[q], load[q] / maxload[q], q))


def reference_round(lv, part, load, maxload, lock, key, heavy, c4):
    """One Jet round, as `jet_kernels` defines it, in plain Python: ``(part, load, lock)``."""
    nbrs = rows(lv)
    n = lv.n
    dest, gain = [-1] * n, [0] * n
    for v in range(n):
        if lock[v] or (heavy > 0 and len(nbrs[v]) > heavy):
            continue
        conn, own = seen_parts(nbrs, part, v)
        q = best_part(conn, load, maxload, lv.vwgt[v], maxload)
        if q is None:
            continue
        g = conn[q] - own
        if g >= 0 or 4 * (-g) < c4 * own:
            dest[v], gain[v] = q, g

    def first(u, v):  # u has priority over v
        return (gain[u], key[u], u) > (gain[v], key[v], v)

    moves = []
    for v in range(n):
        if dest[v] < 0:
            continue
        s = 0
        for u, w in nbrs[v]:
            pu = dest[u] if dest[u] >= 0 and first(u, v) else part[u]
            s += w if pu == dest[v] else (-w if pu == part[v] else 0)
        if s >= 0:
            moves.append(v)
    part, load = part.copy(), load.copy()
    for v in moves:
        load[part[v]] -= lv.vwgt[v]
        load[dest[v]] += lv.vwgt[v]
        part[v] = dest[v]
    lock = np.zeros(n, np.int64)
    lock[moves] = 1
    return part, load, lock


def bucket(loss):
    return 0 if loss <= 0 else min(1 + int(loss).bit_length() - 1, J.NB - 1)


def reference_rebalance(lv, part, load, maxload, soft, key, heavy):
    """One rebalancing round in plain Python: per overloaded part, its evictable vertices
    in (loss bucket, key's top bits) groups, taken whole in that order until they cover
    the part's excess."""
    nbrs = rows(lv)
    room = np.maximum(soft - load, 0)
    cum = np.cumsum(room)
    moves = []
    for a in range(len(load)):
        excess = load[a] - maxload[a]
        if excess <= 0:
            continue
        cands = []
        for v in np.flatnonzero(part == a):
            if heavy > 0 and len(nbrs[v]) > heavy:
                continue
            conn, own = seen_parts(nbrs, part, v)
            q = best_part(conn, load, soft, lv.vwgt[v], maxload)
            c = conn[q] if q is not None else 0
            if q is None:  # a part drawn by the key, in proportion to the room
                if cum[-1] <= 0:
                    continue
                q = int(np.searchsorted(cum, (int(key[v]) >> 8) % int(cum[-1]), side="right"))
                if q == a or load[q] + lv.vwgt[v] > soft[q]:
                    continue
            cands.append(((bucket(own - c), int(key[v]) >> (63 - J.SUB_BITS)), v, q))
        groups = sorted({g for g, _, _ in cands})
        taken, covered = set(), 0
        for g in groups:
            if covered >= excess:
                break
            taken.add(g)
            covered += sum(lv.vwgt[v] for gg, v, _ in cands if gg == g)
        moves += [(v, q) for g, v, q in cands if g in taken]
    part, load = part.copy(), load.copy()
    for v, q in moves:
        load[part[v]] -= lv.vwgt[v]
        load[q] += lv.vwgt[v]
        part[v] = q
    return part, load, len(moves)


def keys_of(n, seed):
    return (CK.vertex_keys(n, seed) >> np.uint64(1)).astype(np.int64)


def start(seed, n=70, m=220, k=4, slack=1.05):
    lv = random_level(seed, n=n, m=m, vmax=3)
    part = np.random.default_rng(seed).integers(0, k, lv.n).astype(np.int64)
    load = RK.part_loads(part, lv.vwgt, k)
    maxload = np.maximum(load, int(slack * lv.vwgt.sum() / k)).astype(np.int64)
    return lv, part, load, maxload


def every_vertex(n):
    """An active list (`jet_kernels.jet_round`) holding every vertex: ``(active, na, listed)``."""
    return np.arange(n, dtype=np.int64), n, np.ones(n, np.uint8)


def boundary_list(lv, part):
    """An active list holding only the boundary (vertices with a neighbour elsewhere)."""
    b = RK.boundary(lv.indptr, lv.indices, part)
    active = np.zeros(lv.n, np.int64)
    active[:len(b)] = b[::-1]  # any order
    listed = np.zeros(lv.n, np.uint8)
    listed[b] = 1
    return active, len(b), listed


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("c4,heavy", [(3, 0), (1, 0), (3, 5)])
@pytest.mark.parametrize("listing", ["all", "boundary"])
def test_a_round_is_its_definition(seed, c4, heavy, listing):
    lv, part, load, maxload = start(seed, k=3 + seed % 3)
    key = keys_of(lv.n, seed)
    lock = np.zeros(lv.n, np.int64)
    dest, gain = np.full(lv.n, -1, np.int64), np.zeros(lv.n, np.int64)
    active, na, listed = every_vertex(lv.n) if listing == "all" else boundary_list(lv, part)
    for _ in range(4):  # consecutive rounds: the locks of one round weigh on the next
        want = reference_round(lv, part, load, maxload, lock, key, heavy, c4)
        before = cut_of(lv, part)
        moved, na, delta = J.jet_round(lv.indptr, lv.indices, lv.ewgt, lv.vwgt, part, load,
                                       maxload, lock, key, heavy, c4, dest, gain, active, na,
                                       listed)
        assert part.tolist() == want[0].tolist() and load.tolist() == want[1].tolist()
        assert lock.tolist() == want[2].tolist() and moved == want[2].sum()
        assert (load == RK.part_loads(part, lv.vwgt, len(load))).all()
        assert delta == cut_of(lv, part) - before
        # the list: no repeats, its flags, every boundary vertex and every locked one on it
        on = active[:na]
        assert len(set(on.tolist())) == na and np.flatnonzero(listed).tolist() == sorted(on)
        assert set(RK.boundary(lv.indptr, lv.indices, part).tolist()) <= set(on.tolist())
        assert set(np.flatnonzero(lock).tolist()) <= set(on.tolist())
        assert (dest[listed == 0] < 0).all()


def test_a_vertex_looks_at_the_first_maxp_parts_of_its_row():
    # vertex 0 (part 0) is joined to vertex j (part j) by weight j, j = 1..40: only parts
    # 1..MAXP are seen, so it goes to part MAXP, not 40 (the others locked, so that
    # none of them moves towards it)
    k = 41
    lv = csr_from_edges([0] * 40, list(range(1, 41)), list(range(1, 41)), 41)
    part = np.arange(41, dtype=np.int64)
    load = np.ones(k, np.int64)
    maxload = np.full(k, 5, np.int64)
    dest, gain = np.empty(41, np.int64), np.empty(41, np.int64)
    lock = np.ones(41, np.int64)
    lock[0] = 0
    J.jet_round(lv.indptr, lv.indices, lv.ewgt, lv.vwgt, part, load, maxload, lock,
                keys_of(41, 0), 0, 3, dest, gain, *every_vertex(41))
    assert dest[0] == J.MAXP and gain[0] == J.MAXP
    assert part[0] == J.MAXP


def test_the_cpus_part_lookup_builds_the_gpus_table():
    # the CPU's `_table` looks each part up (cs longer than MAXP), the GPU's threads search:
    # the same parts in the same order and the same weights, rows meeting > MAXP parts too
    rng = np.random.default_rng(5)
    lv = random_level(5, n=200, m=8000, vmax=2)
    k = 60
    part = rng.integers(0, k, lv.n).astype(np.int64)
    assert J._table_scratch(k).tolist() == [-1] * (J.MAXP + k)
    assert len(J._table_scratch(J.DENSE_PARTS + 1)) == J.MAXP  # the search beyond
    ps1, cs1 = np.empty(J.MAXP, np.int64), np.empty(J.MAXP, np.int64)
    ps2, cs2 = np.empty(J.MAXP, np.int64), J._table_scratch(k)
    wide = 0
    table = from_python(J._table)
    for v in range(lv.n):
        n1, own1 = table(lv.indptr, lv.indices, lv.ewgt, part, v, ps1, cs1)
        n2, own2 = table(lv.indptr, lv.indices, lv.ewgt, part, v, ps2, cs2)
        assert (n1, own1) == (n2, own2)
        assert ps1[:n1].tolist() == ps2[:n2].tolist() and cs1[:n1].tolist() == cs2[:n2].tolist()
        assert (cs2[J.MAXP:] == -1).all()  # every place cleared again
        seen = {int(q) for q in part[lv.indices[lv.indptr[v]:lv.indptr[v + 1]]]} - {part[v]}
        assert n1 == min(len(seen), J.MAXP)
        wide += len(seen) > J.MAXP
    assert wide > 0


def test_the_afterburner_lets_one_of_two_rival_neighbours_move():
    # 0 (part 0) and 1 (part 1) share an edge of weight 5 and each has a neighbour of
    # weight 1 in its own part (2 and 3): each alone gains 4 by joining the other, both
    # together would swap and cut 7. The one of higher key moves; the other, seeing it
    # gone, would lose 6 and stays: the cut falls 5 -> 1
    lv = csr_from_edges([0, 0, 1], [1, 2, 3], [5, 1, 1], 4)
    key = keys_of(4, 3)
    part = np.array([0, 1, 0, 1], np.int64)
    load = np.array([2, 2], np.int64)
    dest, gain, lock = (np.zeros(4, np.int64) for _ in range(3))
    J.jet_round(lv.indptr, lv.indices, lv.ewgt, lv.vwgt, part, load, np.array([3, 3]), lock,
                key, 0, 3, dest, gain, *every_vertex(4))
    mover = 0 if key[0] > key[1] else 1
    want = [0, 1, 0, 1]
    want[mover] = 1 - mover
    assert gain[:2].tolist() == [4, 4] and part.tolist() == want
    assert lock.tolist() == [int(v == mover) for v in range(4)] and cut_of(lv, part) == 1


@pytest.mark.parametrize("seed", range(6))
def test_a_rebalancing_round_is_its_definition(seed):
    lv, _, _, _ = start(seed, n=90, m=260, k=4)
    k = 4
    rng = np.random.default_rng(seed)
    part = rng.choice(k, lv.n, p=[0.55, 0.25, 0.1, 0.1]).astype(np.int64)  # part 0 over
    load = RK.part_loads(part, lv.vwgt, k)
    maxload = np.full(k, int(1.05 * lv.vwgt.sum() / k), np.int64)
    soft = refinement.soft_bounds(maxload, int(lv.vwgt.sum()))
    key = keys_of(lv.n, seed)
    for heavy in (0, 6):
        want = reference_rebalance(lv, part, load, maxload, soft, key, heavy)
        p, ld = part.copy(), load.copy()
        dest = np.full(lv.n, -1, np.int64)
        active, na, listed = boundary_list(lv, p)
        moved, na, delta = J.jet_rebalance(lv.indptr, lv.indices, lv.ewgt, lv.vwgt, p, ld,
                                           maxload, soft, key, heavy, J.room_sums(ld, soft),
                                           dest, np.empty(lv.n, np.int64), active, na, listed)
        assert p.tolist() == want[0].tolist() and ld.tolist() == want[1].tolist()
        assert moved == want[2] > 0 and delta == cut_of(lv, p) - cut_of(lv, part)
        # every vertex that moved is listed with its neighbours, and no dest is left
        on = set(active[:na].tolist())
        for v in np.flatnonzero(p != part):
            assert {int(v)} | set(lv.indices[lv.indptr[v]:lv.indptr[v + 1]].tolist()) <= on
        assert np.flatnonzero(listed).tolist() == sorted(on) and (dest == -1).all()
    assert load[0] > maxload[0] and ld[0] < load[0]


def test_cutoffs():
    hist = np.array([3, 0, 4, 5, 1, 1, 1, 1])  # two parts, four bins each
    cut, left = J.cutoffs(hist, np.array([7, 0]), 4)
    assert cut.tolist() == [2, -1] and left[0] == 4  # 3 + 0 < 7 <= 3 + 0 + 4
    cut, left = J.cutoffs(hist, np.array([13, 5]), 4)
    assert cut.tolist() == [4, 4]  # the bins fall short: all of them


@pytest.mark.parametrize("seed", range(4))
def test_jet_loop_ends_balanced_no_worse_and_deterministic(seed):
    lv, part, load, maxload = start(seed, n=120, m=400, k=5)
    before = cut_of(lv, part)
    key = keys_of(lv.n, seed)
    out = []
    for _ in range(2):
        p = part.copy()
        stats = {}
        ops = refinement._HostJet(lv, p, maxload, key)
        moves = refinement.jet_loop(ops, lv.n, maxload, np.random.default_rng(seed), 3, 0, stats)
        out.append((p.tolist(), moves, stats))
        assert (RK.part_loads(p, lv.vwgt, 5) <= maxload).all()
        assert (ops.load == RK.part_loads(p, lv.vwgt, 5)).all()
        assert ops.status()[0] == cut_of(lv, p)  # the cut kept from the moves
        assert cut_of(lv, p) < before and moves > 0
        assert stats["jet_rounds"] + stats["jet_rebalances"] >= refinement.JET_PATIENCE
    assert out[0] == out[1]


def test_the_cut_and_the_list_survive_the_hosts_repairs(monkeypatch):
    # one rebalancing round before the host's repair: its moves are not tracked, so the
    # cut is recounted and every vertex listed again; the tracked cut stays exact
    monkeypatch.setattr(refinement, "JET_REBALANCE", 1)
    lv, part, _, maxload = start(1, n=120, m=400, k=5, slack=1.01)
    stats = {}
    ops = refinement._HostJet(lv, part, maxload, keys_of(lv.n, 1))
    refinement.jet_loop(ops, lv.n, maxload, np.random.default_rng(1), 3, 0, stats)
    assert stats["jet_repairs"] > 0
    assert ops.status()[0] == cut_of(lv, part)
    assert (ops.load == RK.part_loads(part, lv.vwgt, 5)).all() and (ops.load <= maxload).all()


def test_jet_loop_leaves_an_overloaded_start_alone():
    lv, part, load, _ = start(0)
    maxload = load - 1
    p = part.copy()
    ops = refinement._HostJet(lv, p, maxload, keys_of(lv.n, 0))
    assert refinement.jet_loop(ops, lv.n, maxload, np.random.default_rng(0)) == 0
    assert p.tolist() == part.tolist()


def test_the_cpu_twin_with_jet_is_valid_and_beats_the_greedy_moves_alone():
    lv = random_level(5, n=400, m=1600, vmax=2)
    greedy = multilevel_partition(lv, 8, seed=1, refiner="greedy")
    jet = multilevel_partition(lv, 8, seed=1, refiner="jet")
    assert (jet.refiner, greedy.refiner, multilevel_partition(lv, 8).refiner) == ("jet", "greedy", "fm")
    assert jet.balance <= 1.03 + 1e-9 and jet.cut == cut_of(lv, jet.part)
    assert jet.cut < greedy.cut
    assert multilevel_partition(lv, 8, seed=1, refiner="jet").part.tolist() == jet.part.tolist()


def test_jet_leaves_hubs_to_the_gpus_block_kernels():
    # the CPU's Jet excludes the vertices the GPU's one-thread-per-vertex kernels would
    assert refinement.JET_HEAVY == gpu.CG.HEAVY_DEGREE


def test_refiner_bad_input():
    lv = random_level(0)
    for bad in ("kl", 3):
        with pytest.raises(InputError, match="refiner must be one of fm, jet, greedy on the CPU"):
            multilevel_partition(lv, 4, refiner=bad)


def test_cli_refiner(tmp_path, capsys):
    from runtime.generators import grid
    from vcut.cli import main

    path, lv = on_disk(tmp_path, grid(16, 16, seed=0))
    out = tmp_path / "g.part"
    for refiner in ("jet", "greedy", None):
        argv = ["partition", str(path), "-p", "4", "--algo", "multilevel", "-o", str(out),
                "--json"] + (["--refiner", refiner] if refiner else [])
        assert main(argv) == 0
        res = json.loads(capsys.readouterr().out)
        want = multilevel_partition(lv, 4, refiner=refiner)
        assert res["refiner"] == want.refiner == (refiner or "fm")
        assert [int(x) for x in out.read_text().split()] == want.part.tolist()
        assert res["edge_cut"] == want.cut
    for algo in ("wb-libra", "spac"):
        assert main(["partition", str(path), "-p", "4", "--algo", algo, "--refiner", "jet"]) == 2
        assert capsys.readouterr().err.splitlines()[-1] == (
            "error: --refiner is for --algo multilevel (SPAC's multilevel backend takes its "
            f"device's default: fm on the CPU, jet on the GPU); drop it for --algo {algo}")
    assert main(["partition", str(path), "-p", "4", "--algo", "multilevel", "--refiner",
                 "kl"]) == 2
    assert "invalid choice: 'kl'" in capsys.readouterr().err


# ------------------------------------------------------------------------------- GPU


@pytest.fixture
def small_launches(small_launches, monkeypatch):
    monkeypatch.setattr(config, "SCAN_BLOCK", 8)


def device_loop(lv, part, maxload, seed, heavy, c4=3):
    cuda, keep, work, dl = on_device(lv)
    k = len(maxload)
    d_part = gpu._upload(cuda, keep, part)
    status = work.take(k + 2)
    gpu._fill(status, k + 2, 0)
    gpu._run(gpu.RG.loads_kernel, lv.n, d_part, dl.vwgt, lv.n, status[:k])
    stats = gpu.new_stats()
    key = gpu._keys(work, lv.n, seed)
    ops = gpu._DeviceJet(cuda, work, dl, d_part, status, gpu._upload(cuda, work, maxload),
                         maxload, key, stats, int(lv.vwgt.sum()))
    moves = refinement.jet_loop(ops, lv.n, maxload, np.random.default_rng(seed + 9), c4, heavy,
                                stats)
    return d_part.copy_to_host()[:lv.n], moves, stats, key.copy_to_host()[:lv.n]


@pytest.mark.parametrize("seed,heavy,slack", [(0, 0, 1.05), (1, 0, 1.05), (2, 6, 1.05),
                                              (1, 0, 1.01)])
def test_the_gpu_gives_the_cpus_parts(small_launches, monkeypatch, seed, heavy, slack):
    monkeypatch.setattr(gpu, "PROFILE", {})
    if slack < 1.05:  # the host's repair after every rebalancing round
        monkeypatch.setattr(refinement, "JET_REBALANCE", 1)
    lv, part, _, maxload = start(seed, n=80, m=260, k=4, slack=slack)
    out, moves, stats, key = device_loop(lv, part, maxload, seed, heavy)
    p = part.copy()
    host = {}
    hmoves = refinement.jet_loop(refinement._HostJet(lv, p, maxload, key), lv.n, maxload,
                                 np.random.default_rng(seed + 9), 3, heavy, host)
    assert out.tolist() == p.tolist() and moves == hmoves
    assert [stats[x] for x in ("jet_rounds", "jet_rebalances", "jet_repairs")] == \
        [host[x] for x in ("jet_rounds", "jet_rebalances", "jet_repairs")]
    assert stats["jet_rebalances"] > 0 and cut_of(lv, out) < cut_of(lv, part)
    assert slack == 1.05 or stats["jet_repairs"] > 0
    # a round is three launches, a rebalancing round five (two of them fills), each
    # followed by the status's two; one read each
    launches = {name: count for name, (_, count) in gpu.PROFILE.items()}
    rounds, reb = stats["jet_rounds"], stats["jet_rebalances"]
    for name in ("jet_candidates", "jet_after", "jet_apply"):
        assert launches[name + "_kernel"] == rounds
    for name in ("jet_evict", "jet_sub", "jet_shed"):
        assert launches[name + "_kernel"] == reb
    assert launches["cut_kernel"] == 1 + rounds + reb + stats["jet_repairs"]
    assert sum(launches.values()) == stats["jet_launches"] + 3  # + the set-up's fill, loads
    # and keys


def test_the_gpu_partition_uses_jet_and_keeps_its_guarantees(small_launches):
    lv = random_level(3, n=150, m=500, vmax=2)
    with_jet = multilevel_partition(lv, 4, device="gpu", seed=2)
    without = multilevel_partition(lv, 4, device="gpu", seed=2, refiner="greedy")
    assert (with_jet.refiner, without.refiner) == ("jet", "greedy")
    with pytest.raises(InputError, match="one of jet, greedy on the GPU, got 'fm'"):
        multilevel_partition(lv, 4, device="gpu", refiner="fm")
    assert with_jet.gpu["jet_rounds"] > 0 and without.gpu["jet_rounds"] == 0
    for r in (with_jet, without):
        assert r.balance <= 1.03 + 1e-9 and r.cut == cut_of(lv, r.part)
    assert with_jet.cut <= without.cut
