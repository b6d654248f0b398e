"""`best`'s iterated local search: `expansion_kernels.gather` against a hand case and a
Python transcription, `quality.perturb_refine`'s invariants and rounds replayed by hand,
the ``perturb`` knob and the ``strong`` preset."""

import functools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.helpers import (check_iterated_search, edge_arrays, replay_search, simple_edges,
                           weighted_graphs)
from vcut import expansion_kernels, quality
from vcut.capacities import equal_capacities
from vcut.cuts import make_options
from vcut.partition import partition_graph
from vcut_base.errors import InputError


def _replicas(src, dst, out):
    return len({(int(v), int(c)) for e, c in enumerate(out) for v in (src[e], dst[e])})


def _incidence(src, dst, n):
    return expansion_kernels.incidence(src, dst, n, np.ones(len(src), dtype=np.bool_))


def _gather_literal(src, dst, w, out, load, bound, vertices):
    """The gathering as written in its docstring, on Python lists."""
    out, load = list(out), list(load)
    done = 0
    for v in vertices:
        edges = [e for e in range(len(src)) if v in (src[e], dst[e])]
        held = {}
        for e in edges:
            held[out[e]] = held.get(out[e], 0.0) + w[e]
        if not held:
            continue
        best = min(held, key=lambda c: (-held[c], c))
        moving = sum(held.values()) - held[best]
        if moving <= 0 or load[best] + moving > bound[best]:
            continue
        for e in edges:
            if out[e] != best:
                load[out[e]] -= w[e]
                out[e] = best
        load[best] += moving
        done += 1
    return out, load, done


def test_gather_hand_case():
    # edges 0:(0,1) 1:(0,2) 2:(0,3) 3:(1,2), clusters [0, 1, 1, 0], loads [2, 2]. Vertex 0
    # holds 1 in cluster 0 and 2 in cluster 1: edge 0 joins cluster 1 (load 3, the bound);
    # then vertex 2 holds 1 and 1 (edges 1 and 3): the tie goes to cluster 0, edge 1 moves
    src, dst = np.array([0, 0, 0, 1]), np.array([1, 2, 3, 2])
    w = np.ones(4)
    ptr, adj = _incidence(src, dst, 4)
    out, load = np.array([0, 1, 1, 0]), np.array([2.0, 2.0])
    assert expansion_kernels.gather(ptr, adj, w, out, load, np.array([3.0, 3.0]),
                                    np.array([0, 2]), 2) == 2
    assert out.tolist() == [1, 0, 1, 0] and load.tolist() == [2.0, 2.0]
    # a cluster that the move would take past its bound takes nothing
    out, load = np.array([0, 1, 1, 0]), np.array([2.0, 2.0])
    assert expansion_kernels.gather(ptr, adj, w, out, load, np.array([3.0, 2.5]),
                                    np.array([0]), 2) == 0
    assert out.tolist() == [0, 1, 1, 0] and load.tolist() == [2.0, 2.0]
    # the heavier share wins over the larger count: edge 0 of weight 5 keeps cluster 0
    w = np.array([5.0, 1.0, 1.0, 1.0])
    out, load = np.array([0, 1, 1, 0]), np.array([6.0, 2.0])
    assert expansion_kernels.gather(ptr, adj, w, out, load, np.array([9.0, 9.0]),
                                    np.array([0, 1, 3]), 2) == 1  # 1 and 3: one cluster
    assert out.tolist() == [0, 0, 0, 0] and load.tolist() == [8.0, 0.0]


@settings(max_examples=80, deadline=None)
@given(weighted_graphs(), st.integers(2, 5), st.integers(0, 1000))
def test_gather_equals_the_transcription(gw, k, seed):
    src, dst, w, n = edge_arrays(*gw)
    rng = np.random.default_rng(seed)
    out = rng.integers(0, k, len(src))
    load = np.bincount(out, weights=w, minlength=k)
    bound = load + rng.integers(0, 10, k)
    vertices = rng.permutation(n)[:max(1, n // 2)]
    want = _gather_literal(src.tolist(), dst.tolist(), w.tolist(), out.tolist(),
                           load.tolist(), bound.tolist(), vertices.tolist())
    ptr, adj = _incidence(src, dst, n)
    done = expansion_kernels.gather(ptr, adj, w, out, load, bound.astype(float), vertices, k)
    assert (out.tolist(), done) == (want[0], want[2])
    assert np.allclose(load, want[1])


@settings(max_examples=40, deadline=None)
@given(weighted_graphs(), st.integers(2, 4), st.integers(0, 1000), st.integers(0, 4))
def test_perturbed_refinement_never_adds_replicas_or_breaks_the_bound(gw, k, seed, rounds):
    src, dst, w, n = edge_arrays(*gw)
    k = min(k, len(src))
    cap = equal_capacities(k)
    start, _ = quality.refine_assignment(src, dst, w, n,
                                         np.random.default_rng(seed).integers(0, k, len(src)),
                                         cap, seed=seed)
    check_iterated_search(functools.partial(quality.perturb_refine, share=0.5),
                          (src, dst, w, n), start, k, rounds, seed, "perturb_rounds",
                          "perturb_kept")


def test_the_rounds_replayed_by_hand():
    # each round: a seeded share of the vertices gathered from the best so far, refined in
    # full with the round's seed, kept only with fewer replicas
    rng = np.random.default_rng(3)
    n, m = 300, 1500
    src, dst = simple_edges(rng, n, m)
    w = np.ones(len(src))
    k, seed, share, rounds = 8, 11, 0.05, 12
    cap = equal_capacities(k)
    start, _ = quality.refine_assignment(src, dst, w, n, quality.ne_assign(src, dst, w, n, cap),
                                         cap, seed=seed)
    out, info = quality.perturb_refine(src, dst, w, n, start, cap, rounds, seed=seed,
                                       share=share)
    ptr, adj = _incidence(src, dst, n)
    bound = 1.03 * w.sum() / k

    def gathered(cur, r):
        load = np.bincount(cur, weights=w, minlength=k)
        pick = np.random.default_rng(seed + 1 + r).choice(n, size=int(share * n),
                                                          replace=False)
        expansion_kernels.gather(ptr, adj, w, cur, load, np.maximum(bound, load),
                                 pick.astype(np.int64), k)
        return cur

    best, run, kept, fewest = replay_search((src, dst, w, n), start, k, rounds, seed, gathered)
    assert out.tolist() == best.tolist()
    assert (info["perturb_rounds"], info["perturb_kept"], info["replicas_after"]) == (
        run, kept, fewest)
    assert kept >= 1 and fewest < _replicas(src, dst, start)  # the search found something


def test_bad_arguments():
    src, dst, w, n = edge_arrays([(0, 1), (1, 2), (2, 0)])
    cap = equal_capacities(2)
    start = np.array([0, 1, 0])
    for bad in (-1, 1.5, True, "2"):
        with pytest.raises(InputError, match=r"rounds must be a whole number >= 0"):
            quality.perturb_refine(src, dst, w, n, start, cap, bad)
    for bad in (0.0, -0.1, 1.5):
        with pytest.raises(InputError, match="the share of the vertices a perturbation"):
            quality.perturb_refine(src, dst, w, n, start, cap, 1, share=bad)
    with pytest.raises(InputError, match="each of the 3 edges a cluster in 0..1"):
        quality.perturb_refine(src, dst, w, n, np.array([0, 2, 0]), cap, 1)
    with pytest.raises(InputError, match="each of the 3 edges a cluster in 0..1"):
        quality.perturb_refine(src, dst, w, n, np.array([0, 1]), cap, 1)


def test_the_knob_and_the_strong_preset():
    from vcut.cuts.best import STRONG_PERTURB

    assert make_options("best", {}).perturb == 0
    assert make_options("best", {"preset": "strong"}).perturb == STRONG_PERTURB == 16
    assert make_options("best", {"preset": "fast"}).perturb == 0
    for bad in (-1, 1.5, True, "8"):
        with pytest.raises(InputError) as exc:
            make_options("best", {"perturb": bad})
        assert str(exc.value) == f"best's perturb must be a whole number >= 0, got {bad!r}"


def test_best_perturbs_the_refined_cut_it_keeps():
    # the same candidates and refinement, then the rounds: never more replicas than
    # without them, the figures those of the assignment returned
    from tests.helpers import dataset
    from ir_graph import read_graph

    g = read_graph(dataset("ca-HepPh.txt.gz"))
    plain = partition_graph(g, 32, "best", {"perturb": 0})
    more = partition_graph(g, 32, "best", {"perturb": 3})
    assert "perturb_rounds" not in plain.info
    assert more.info["perturb_kept"] <= more.info["perturb_rounds"] <= 3
    assert more.info["replicas_before"] == plain.info["replicas_before"]
    assert more.info["perturb_from"] == plain.info["replicas_after"]
    assert more.info["replicas_after"] <= plain.info["replicas_after"]
    assert more.metrics.replication_factor <= plain.metrics.replication_factor
    assert more.metrics.edge_weight_imbalance <= 1.03 + 1e-9
    if more.info["perturb_kept"] == 0:
        assert np.array_equal(more.assignment, plain.assignment)


def test_the_summary_and_json_report_the_rounds(tmp_path, capsys):
    import json

    from tests.helpers import dataset, run_cli

    graph = dataset("wiki-Vote.txt.gz")
    code, out, _ = run_cli(capsys, "partition", graph, "-p", 8, "--algo", "best", "--preset",
                           "strong", "-o", tmp_path / "s.part", "--json")
    assert code == 0
    info = json.loads(out)
    rounds, kept = info["perturb_rounds"], info["perturb_kept"]
    start, end = info["perturb_from"], info["replicas_after"]
    assert kept <= rounds <= 16 and end <= start
    code, out, _ = run_cli(capsys, "partition", graph, "-p", 8, "--algo", "best", "--preset",
                           "strong", "-o", tmp_path / "t.part")
    assert code == 0
    lines = out.splitlines()
    assert f"{rounds} rounds, {kept} kept: {start:,} -> {end:,} vertex copies" in \
        [ln.split("  ")[-1].strip() for ln in lines if ln.startswith("iterated search")]
    # strong runs its multilevel cycles first: the rounds start where they ended
    cycles, held, ahead = info["vcycles"], info["vcycles_kept"], info["vcycles_from"]
    assert held <= cycles <= 8 and start <= ahead
    # run from the two refined candidates of fewest replicas, the better kept
    first, second = info["finalists"].split(", ")
    assert info["best_of"] in (first, second)
    assert (f"{cycles} cycles, {held} kept: {ahead:,} -> {start:,} vertex copies (run from "
            f"{first} and {second} each, {info['best_of']} kept)") in \
        [ln.split("  ")[-1].strip() for ln in lines if ln.startswith("multilevel cycles")]
    refined = [ln for ln in lines if ln.startswith("refinement")][0]
    assert refined.endswith(f"{info['replicas_before']:,} -> {ahead:,} vertex copies")
    code, out, _ = run_cli(capsys, "partition", graph, "-p", 8, "--algo", "best", "-o",
                           tmp_path / "d.part")
    assert code == 0 and "iterated search" not in out  # the default runs none
    assert "multilevel cycles" not in out


def test_best_goes_on_without_the_rounds_the_memory_cannot_hold(monkeypatch, capsys,
                                                                 tmp_path):
    # no memory for the rounds: best keeps its refined cut and says why (in best's words);
    # perturb_refine on its own refuses with its own advice; the estimate is a round's
    # refinement and three assignments
    from tests.helpers import dataset, no_room_for, run_cli

    src, dst, w, n = edge_arrays([(0, 1), (1, 2), (2, 0), (2, 3), (3, 4), (4, 2)])
    m = len(src)
    assert quality.perturb_bytes(n, m) == quality.refine_bytes(n, m) + 20 * m
    no_room_for(monkeypatch, quality, "the iterated search", quality.perturb_bytes(n, m))
    cap = equal_capacities(2)
    with pytest.raises(InputError, match=r"^the iterated search on 5 vertices needs about "
                                         r".+; run fewer rounds \(0: none\)$"):
        quality.perturb_refine(src, dst, w, n, np.array([0, 0, 0, 1, 1, 1]), cap, 2)
    quality.perturb_refine(src, dst, w, n, np.array([0, 0, 0, 1, 1, 1]), cap, 0)  # no check
    deg = np.bincount(np.concatenate([src, dst]), minlength=n)
    plain, plain_info = quality.best_assign(src, dst, w, n, cap, deg)
    out, info = quality.best_assign(src, dst, w, n, cap, deg, perturb=4)
    assert out.tolist() == plain.tolist() and "perturb_rounds" not in info
    assert info["perturb_skipped"].endswith("; best goes on without it")
    assert {k: v for k, v in info.items() if k != "perturb_skipped"} == plain_info
    graph = dataset("3elt.graph.gz")
    monkeypatch.undo()
    no_room_for(monkeypatch, quality, "the iterated search")
    code, out, _ = run_cli(capsys, "partition", graph, "-p", 4, "--algo", "best", "--preset",
                           "strong", "-o", tmp_path / "p.part")
    assert code == 0
    row = [ln for ln in out.splitlines() if ln.startswith("iterated search")]
    assert len(row) == 1 and "skipped: the iterated search on" in row[0]
    assert row[0].endswith("best goes on without it")
