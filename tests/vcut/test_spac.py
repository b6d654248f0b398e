"""SPAC: the transform edge by edge, reconstruction, Theorem 3.4, balance, baselines."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vcut_base.errors import InputError, VcutError
from tests.helpers import edge_arrays, graph, weighted_graphs
from vcut.partition import partition_graph
from vcut import spac
from vcut.spac import reconstruct, split_and_connect


def undirected(sg):
    """Edges of a transformed graph as {(a, b): weight} with a < b."""
    out = {}
    for a in range(sg.n):
        for j in range(sg.xadj[a], sg.xadj[a + 1]):
            b = int(sg.adjncy[j])
            if a < b:
                out[(a, b)] = out.get((a, b), 0) + int(sg.adjwgt[j])
    return out


# a triangle 0-1-2 plus a pendant edge 2-3:  e0=(0,1) e1=(1,2) e2=(2,0) e3=(2,3)
TRI = [(0, 1), (1, 2), (2, 0), (2, 3)]


def test_split_form_edge_by_edge():
    sg = split_and_connect(*edge_arrays(TRI), contracted=False, cycles=True)
    # clones: 2e is edge e's first endpoint, 2e+1 its second
    # vertex 0: clones 0 (e0), 5 (e2); vertex 1: 1 (e0), 2 (e1); vertex 2: 3 (e1), 4 (e2), 6 (e3)
    # vertex 3: 7 (e3). Auxiliary paths in edge order; vertex 2 (degree 3) closes a cycle.
    expected = {(0, 5): 1, (1, 2): 1, (3, 4): 1, (4, 6): 1, (3, 6): 1,
                (0, 1): 1000, (2, 3): 1000, (4, 5): 1000, (6, 7): 1000}
    assert sg.n == 8 and undirected(sg) == expected
    assert sg.n_aux == 5
    assert sg.vwgt.tolist() == [50] * 8  # unit weights: 100 per edge, half per clone


def test_auxiliary_cut_counts_cut_auxiliary_edges_once():
    sg = split_and_connect(*edge_arrays(TRI), contracted=False, cycles=True)
    # the auxiliary edges (above): (0, 5), (1, 2), (3, 4), (4, 6), (3, 6); clones 0-3 in part
    # 0, 4-7 in part 1: (0, 5), (3, 4), (3, 6) cross; dominant (4, 5) lies within part 1
    # and (2, 3) within part 0, neither counted
    assert spac._aux_cut(sg, np.array([0, 0, 0, 0, 1, 1, 1, 1])) == 3
    assert spac._aux_cut(sg, np.zeros(8, dtype=np.int32)) == 0
    # every clone apart: all five auxiliary edges, the four dominant ones not
    assert spac._aux_cut(sg, np.arange(8)) == 5


def test_contracted_form_edge_by_edge():
    sg = split_and_connect(*edge_arrays(TRI), contracted=True, cycles=False)
    # vertex e = edge e; around vertex 0: e0-e2; vertex 1: e0-e1; vertex 2: e1-e2-e3 (path)
    assert undirected(sg) == {(0, 2): 1, (0, 1): 1, (1, 2): 1, (2, 3): 1}
    cyc = split_and_connect(*edge_arrays(TRI), contracted=True, cycles=True)
    assert undirected(cyc) == {(0, 2): 1, (0, 1): 1, (1, 2): 1, (2, 3): 1, (1, 3): 1}
    assert sg.n == 4 and sg.vwgt.tolist() == [100] * 4


def test_vertex_weights_follow_edge_weights(monkeypatch):
    src, dst, _, n = edge_arrays(TRI)
    # integer weights: 100 x each, exact ratios (a rounding to a mean of 100 let SPAC's edge
    # balance pass its bound); other weights: scaled to a mean of 100 and rounded
    sg = split_and_connect(src, dst, np.array([1.0, 3.0, 1.0, 3.0]), n, contracted=True)
    assert sg.vwgt.tolist() == [100, 300, 100, 300]
    sg = split_and_connect(src, dst, np.array([0.5, 1.5, 0.5, 1.5]), n, contracted=True)
    assert sg.vwgt.tolist() == [50, 150, 50, 150]
    sg = split_and_connect(src, dst, np.array([1.0, 3.0, 1.0, 3.0]), n, contracted=False)
    assert sg.vwgt.tolist() == [50, 50, 150, 150, 50, 50, 150, 150]
    monkeypatch.setattr(spac, "EXACT_WEIGHT_SUM", 800)  # 100 x the sum 8 is not below it
    sg = split_and_connect(src, dst, np.array([1.0, 3.0, 1.0, 3.0]), n, contracted=True)
    assert sg.vwgt.tolist() == [50, 150, 50, 150]
    # weights whose sum overflows a float64 (found by fuzzing: the mean was inf, the
    # weights nan, then the int64 minimum at the backends): relative to the largest first
    sg = split_and_connect(src, dst, np.array([1e308, 3e307, 1e308, 3e307]), n, contracted=True)
    assert sg.vwgt.tolist() == [154, 46, 154, 46]


def test_reconstruction_assigns_every_edge():
    parts = np.array([0, 0, 1, 1, 1, 0, 2, 2])
    assign, cut = reconstruct(parts, 4, contracted=False)
    assert assign.tolist() == [0, 1, 1, 2] and cut == 1  # e2's clones 4, 5 are split
    assign, cut = reconstruct(np.array([3, 1, 0, 2]), 4, contracted=True)
    assert assign.tolist() == [3, 1, 0, 2] and cut == 0


@settings(max_examples=40, deadline=None)
@given(weighted_graphs(), st.integers(2, 6), st.sampled_from(["metis", "kahip"]),
       st.sampled_from(["contracted", "split"]))
def test_theorem_3_4_and_no_unassigned_edge(gw, k, backend, variant):
    edges, weights = gw
    k = min(k, len(edges))
    part = partition_graph(graph(edges, weights), k, "spac",
                           options={"backend": backend, "variant": variant})
    assert len(part.assignment) == len(edges)
    assert part.assignment.min() >= 0 and part.assignment.max() < k
    # Theorem 3.4: with no dominant edge cut, C_EP <= the cut of auxiliary edges;
    # a cut dominant edge (possible in the split form when balance forces it) adds at
    # most one copy, at its second endpoint
    cut_dom = part.info["cut_dominant_edges"]
    assert part.metrics.vertex_copies <= part.info["auxiliary_cut"] + cut_dom
    if variant == "contracted":
        assert cut_dom == 0


@pytest.mark.parametrize("backend", ["metis", "kahip"])
def test_balance_within_the_tolerance_given_to_the_backend(backend):
    rng = np.random.default_rng(4)
    edges = sorted({(int(min(a, b)), int(max(a, b))) for a, b in rng.integers(0, 400, (4000, 2)) if a != b})
    part = partition_graph(graph(edges), 8, "spac",
                           options={"backend": backend, "imbalance": 1.03})
    assert part.metrics.edge_weight_imbalance <= 1.03 + 1e-9
    assert part.metrics.edge_weight_imbalance >= 1.0


def test_spac_beats_the_wvp_and_greedy_baselines_on_a_power_law_graph():
    import networkx as nx
    from ir_graph import Graph

    g = Graph.from_networkx(nx.barabasi_albert_graph(3000, 4, seed=1))
    cep = {a: partition_graph(g, 16, a).metrics.vertex_copies
           for a in ("spac", "wvp-greedy", "wvp-random", "wb-libra", "hdrf")}
    assert cep["spac"] < min(v for a, v in cep.items() if a != "spac")
    hyper = partition_graph(g, 16, "hypergraph").metrics.vertex_copies
    assert hyper <= cep["spac"] * 1.2  # the exact objective stays the quality anchor


def test_backend_errors():
    g = graph(TRI)
    with pytest.raises(InputError, match="KaHIP backend cannot take per-part target weights"):
        partition_graph(g, 2, "spac", options={"backend": "kahip"}, capacities=[1, 2])
    # the runtime's own backend takes targets (heterogeneous capacities)
    res = partition_graph(g, 2, "spac", options={"backend": "multilevel"}, capacities=[1, 2])
    assert set(res.simple_assignment.tolist()) <= {0, 1}
    with pytest.raises(VcutError) as exc:
        split_and_connect(*edge_arrays(TRI), memory_limit=100)
    assert "would need about" in str(exc.value) and "GiB of memory are available" in str(exc.value)


def test_heterogeneous_targets_go_to_metis():
    rng = np.random.default_rng(5)
    edges = sorted({(int(min(a, b)), int(max(a, b))) for a, b in rng.integers(0, 300, (3000, 2)) if a != b})
    part = partition_graph(graph(edges), 4, "spac", capacities=[1, 1, 2, 4])
    share = np.asarray(part.metrics.loads) / sum(part.metrics.loads)
    assert np.allclose(share, [0.125, 0.125, 0.25, 0.5], atol=0.02)


@pytest.mark.parametrize("module, algo, kwargs, fix", [
    ("pymetis", "spac", {"backend": "metis"}, "pip install pymetis"),
    ("kahip", "spac", {"backend": "kahip"}, "pip install kahip"),
    ("mtkahypar", "hypergraph", {}, "pip install mtkahypar"),
])
def test_a_missing_backend_is_named_with_its_fix(monkeypatch, module, algo, kwargs, fix):
    import sys

    monkeypatch.setitem(sys.modules, module, None)  # makes `import module` fail
    with pytest.raises(VcutError) as exc:
        partition_graph(graph(TRI), 2, algo, options=kwargs)
    assert str(exc.value).endswith(fix)


def test_metis_without_the_gil_is_pymetis():
    # `runtime.metis` makes pymetis's call through ctypes (which releases the GIL): the same
    # parts as pymetis, k-way, recursive bisection or pymetis's rule, for weighted
    # vertices and edges and any seed; and vertex_partition without it falls back to pymetis
    pymetis = pytest.importorskip("pymetis")
    from runtime import metis
    from runtime.vertex_partition import vertex_partition

    assert metis.available()
    rng = np.random.default_rng(11)
    edges = sorted({(int(min(a, b)), int(max(a, b))) for a, b in rng.integers(0, 400, (2500, 2))
                    if a != b})
    sg = split_and_connect(*edge_arrays(edges), contracted=True, cycles=True)
    got = {}
    for k, seed in ((2, 0), (8, 3), (9, 0), (32, 7)):
        for recursive in (None, False, True):
            ours = metis.part_graph(sg.xadj, sg.adjncy, sg.vwgt, sg.adjwgt, k, ufactor=30,
                                     seed=seed, recursive=recursive)
            theirs = pymetis.part_graph(
                k, pymetis.CSRAdjacency(adj_starts=sg.xadj, adjacent=sg.adjncy),
                vweights=sg.vwgt, eweights=sg.adjwgt, recursive=recursive,
                options=pymetis.Options(ufactor=30, seed=seed))[1]
            assert ours.dtype == np.int32 and ours.tolist() == list(theirs)
            assert set(ours.tolist()) == set(range(k))
            got[k, recursive] = ours.tolist()
    # k = 8: vertex_partition runs k-way (not pymetis's bisection), with and without ctypes
    assert got[8, False] != got[8, True] == got[8, None]
    assert vertex_partition(sg.xadj, sg.adjncy, sg.adjwgt, sg.vwgt, 8, seed=3).tolist() == \
        got[8, False]
    via = vertex_partition(sg.xadj, sg.adjncy, sg.adjwgt, sg.vwgt, 32, seed=7)
    saved = metis._STATE.pop("lib")
    try:
        metis._STATE["lib"] = None  # as where the symbols are missing
        assert not metis.available()
        assert vertex_partition(sg.xadj, sg.adjncy, sg.adjwgt, sg.vwgt, 32, seed=7).tolist() == \
            via.tolist() == got[32, False]
        assert vertex_partition(sg.xadj, sg.adjncy, sg.adjwgt, sg.vwgt, 8, seed=3).tolist() == \
            got[8, False]
    finally:
        metis._STATE["lib"] = saved


def test_metis_refuses_a_graph_beyond_its_index_type(monkeypatch):
    # a 32-bit METIS build cannot take 2**31 adjacency entries (or weights that large):
    # one clear error instead of silently wrapped indices
    pytest.importorskip("pymetis")
    from runtime import metis

    kway, rec, _ = metis._load()
    monkeypatch.setitem(metis._STATE, "lib", (kway, rec, np.int32))
    xadj = np.array([0, 1, 2], dtype=np.int64)
    adjncy = np.array([1, 0], dtype=np.int64)
    with pytest.raises(RuntimeError, match="does not fit this METIS build's 32-bit indices"):
        metis.part_graph(xadj, adjncy, np.array([1, 2**31]), np.array([1, 1]), 2, ufactor=30,
                          seed=0)
    with pytest.raises(VcutError, match="the METIS backend failed: the graph does not fit"):
        from runtime.vertex_partition import vertex_partition

        vertex_partition(xadj, adjncy, np.array([1, 1]), np.array([1, 2**31]), 2)


# a weighted graph: its SPAC vertices (its edges) weigh 2 to 499, KaHIP's crash case
WEIGHTED = [(0, 1), (1, 2), (2, 3), (3, 0), (0, 2), (2, 4), (4, 5), (5, 6), (6, 4), (1, 5)]
WEIGHTS = [1, 2, 0.5, 4, 8, 16, 32, 64, 128, 1]


def test_kahip_takes_imbalance_1_as_a_tenth_of_a_percent(tmp_path):
    """KaHIP's tolerance 0 is its perfectly balanced mode, which needs equal vertex weights:
    on SPAC's it crashed (SIGSEGV) the process; imbalance 1 is given as 0.001, like METIS's
    smallest ufactor. In a subprocess: a regression would end pytest otherwise."""
    import json
    import subprocess
    import sys

    from ir_graph import write_graph
    from tests.helpers import ROOT

    path = tmp_path / "g.npz"
    write_graph(graph(WEIGHTED, WEIGHTS), path)
    proc = subprocess.run([sys.executable, "-m", "vcut", "partition", str(path), "-p", "4",
                           "--algo", "spac", "--backend", "kahip", "--imbalance", "1", "--json"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout)["p"] == 4


def test_backends_get_tolerances_and_seeds_they_can_take(monkeypatch):
    """imbalance 1 -> 0.001; a huge one -> k - 1 (no bound either way; 1e308 overflowed
    METIS's ufactor, OverflowError); seeds past C int (KaHIP, Mt-KaHyPar: TypeError) are
    taken modulo 2**31."""
    import kahip

    from runtime import metis

    calls = []
    monkeypatch.setattr(metis, "part_graph", lambda *a, ufactor, seed, recursive: (
        calls.append(("metis", ufactor, seed)) or np.zeros(len(a[0]) - 1, np.int32)))
    monkeypatch.setattr(kahip, "kaffpa", lambda vw, xadj, ew, adj, k, eps, quiet, seed, mode: (
        calls.append(("kahip", eps, seed)) or (0, [0] * (len(xadj) - 1))))
    g = graph(WEIGHTED, WEIGHTS)
    for backend in ("metis", "kahip"):
        for imbalance in (1.0, 1.03, 1e308):
            partition_graph(g, 4, "spac", options={"backend": backend, "imbalance": imbalance},
                            seed=2**63 - 1)
    assert calls == [("metis", 1, 2**63 - 1), ("metis", 30, 2**63 - 1), ("metis", 3000, 2**63 - 1),
                     ("kahip", 0.001, 2**31 - 1), ("kahip", pytest.approx(0.03), 2**31 - 1),
                     ("kahip", 3.0, 2**31 - 1)]


def test_largest_seed_and_a_huge_imbalance_reach_every_backend():
    g = graph(WEIGHTED, WEIGHTS)
    for algo, kwargs in (("spac", {"backend": "metis"}), ("spac", {"backend": "kahip"}),
                         ("spac", {"backend": "multilevel"}), ("wvp-greedy", {}),
                         ("hypergraph", {})):
        for imbalance in (1.0, 1e308):
            part = partition_graph(g, 3, algo, options={"imbalance": imbalance, **kwargs},
                                   seed=2**63 - 1)
            assert set(part.assignment.tolist()) <= {0, 1, 2}, (algo, kwargs)
    # Mt-KaHyPar gets the seed modulo 2**31: the same assignment as that seed
    a = partition_graph(g, 3, "hypergraph", seed=2**63 - 1).assignment
    b = partition_graph(g, 3, "hypergraph", seed=2**31 - 1).assignment
    assert a.tolist() == b.tolist()


def test_kahip_refuses_capacities_before_the_transform(monkeypatch):
    """A usage error (exit 2, was 1: an undocumented status), found before building Ψ."""
    import vcut.spac

    monkeypatch.setattr(vcut.spac, "split_and_connect", lambda *a, **k: pytest.fail("built Ψ"))
    with pytest.raises(InputError) as exc:
        partition_graph(graph(TRI), 2, "spac", options={"backend": "kahip"}, capacities=[1, 2])
    assert str(exc.value) == ("the KaHIP backend cannot take per-part target weights "
                              "(heterogeneous capacities, --capacities / --units); use "
                              "--backend metis or multilevel, or drop the capacities")


@pytest.mark.parametrize("targets", [None, [0.25] * 4])
def test_metis_diagnostics_go_to_stderr_not_stdout(capfd, targets):
    """METIS printf's '***Cannot bisect a graph with 0 vertices!' when a vertex outweighs a
    part's share; on stdout it broke --json's one object."""
    import ctypes

    from runtime.vertex_partition import vertex_partition

    n = 8  # a path whose first vertex weighs 1000
    xadj = np.r_[0, np.cumsum([1] + [2] * (n - 2) + [1])].astype(np.int64)
    adjncy = np.array([u for v in range(n) for u in (v - 1, v + 1) if 0 <= u < n], np.int64)
    vwgt = np.r_[1000, np.ones(n - 1, np.int64)]
    parts = vertex_partition(xadj, adjncy, np.ones(len(adjncy), np.int64), vwgt, 4,
                             targets=targets)
    assert parts.shape == (n,)
    ctypes.CDLL(None).fflush(None)  # what C buffered, where it would have gone
    out, err = capfd.readouterr()
    assert out == "" and "***Cannot bisect a graph with 0 vertices!" in err


def test_metis_targets_that_round_to_0_in_32_bits_are_refused():
    """METIS holds per-part targets as 32-bit floats and refused a share of 1e-300 ('Input
    Error: Incorrect tpwgts', an exit 1: 'the METIS backend failed'); now a usage error."""
    from vcut_base.errors import InputError

    g = graph(WEIGHTED, WEIGHTS)
    for algo in ("spac", "wvp-greedy"):
        with pytest.raises(InputError) as exc:
            partition_graph(g, 3, algo, capacities=[1, 1, 1e-300])
        assert str(exc.value) == ("METIS takes per-part targets as 32-bit floats, where the "
                                  "share of part 2, 5e-301 of the total, rounds to 0; give "
                                  "capacities within a factor of 1e40 of each other"), algo
    part = partition_graph(g, 3, "spac", capacities=[1, 1, 1e-30])  # 32 bits hold 5e-31
    assert part.info["p"] == 3
