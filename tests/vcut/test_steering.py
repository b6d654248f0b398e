"""``--steering`` (`vcut.par_steering.STEERING`): how far the analysis searches ``par``'s
candidates on graphs with control edges.

The reference is strassen (N=2) traced here with `frontend`, at p = 16 on the Table 2
machine: under ``cd`` par's first clustering simulates far above 1.10x the lower bound,
so the full steering tries every priority, and ``auto`` must keep that first clustering
exactly as `cluster_graph` makes it.
"""

import json
import os

from dataclasses import replace

import numpy as np
import pytest

from frontend import compile_program, trace_program
from ir_graph import Graph, build_graph
from mapping.interactions import VALUE_BYTES
from mapping.machine import table2
from tests.helpers import ROOT, run_cli, run_cli_error
from vcut.clustering import cluster_graph
from ir_graph.control import has_control_edges
from mapping import time_aware
from vcut.par_steering import (FREE_COST, GAMMAS, REPLAY_SHARE, STEER, STEERING,
                               mapping_evaluations, par_numa)
from vcut.pipeline import AnalysisOptions, TraceOptions, analyze, analyze_graph, compare_methods
from vcut_base.errors import InputError

STRASSEN = os.path.join(ROOT, "samples", "strassen.c")
P = 16


@pytest.fixture(scope="module")
def trace():
    return trace_program(compile_program([STRASSEN], defines=("N=2",)))


@pytest.fixture(scope="module")
def graphs(trace):
    return {m: build_graph(trace, control=m) for m in ("oracle", "cd")}


@pytest.fixture(scope="module")
def runs(trace, graphs):
    """``{(model, steering): Analysis}`` without baselines."""
    return {(m, s): analyze_graph(graphs[m], P, object_bytes=trace.obj_size, baselines=False,
                                  steering=s)
            for m in graphs for s in STEERING}


def test_steering_values():
    assert STEERING == ("auto", "full")


def test_has_control_edges(graphs):
    assert not has_control_edges(graphs["oracle"])  # edge kinds, none of them 128
    assert has_control_edges(graphs["cd"])
    g = Graph(n=2, src=np.array([0]), dst=np.array([1]), weight=np.array([1.0]))
    assert g.edge_kind is None and not has_control_edges(g)
    g = Graph(n=2, src=np.array([0]), dst=np.array([1]), weight=np.array([1.0]),
              edge_kind=np.array([128], dtype=np.uint8))
    assert has_control_edges(g)
    g = Graph(n=2, src=np.zeros(0, np.int64), dst=np.zeros(0, np.int64),
              weight=np.zeros(0), edge_kind=np.zeros(0, np.uint8))
    assert not has_control_edges(g)


def test_auto_keeps_pars_first_clustering_on_a_control_graph(runs, graphs):
    a = runs[("cd", "auto")]
    assert a.partition["steering"] == "replay"
    assert len(a.partition["priorities"]) == 1  # no other priority tried
    assert a.partition["refined_share"] == 0.0 and len(a.partition["refined"]) == 1
    for key in ("chains", "latencies", "steered_prices", "grain_runs", "grain_calls"):
        assert key not in a.partition
    machine = table2(P)
    first, _ = cluster_graph(graphs["cd"], P, "par",
                             latency=machine.mean_message_cycles(VALUE_BYTES),
                             numa=par_numa(machine, P))
    assert np.array_equal(a.clustering.cluster, first.cluster)
    assert np.array_equal(a.clustering.home, first.home)
    # the first simulation is above STEER x the bound, so the replay ran: the window-free
    # order only (no replays after it)
    assert a.partition["priorities"][0][1] > 1.10 * a.bound.lower_bound
    assert len(a.partition["replays"]) == 1
    assert a.result.makespan == min(a.partition["replays"][0], a.partition["replays_from"])


def test_the_replay_takes_its_simulations_from_the_mappings(runs):
    """Under ``auto`` on a control graph whose first clustering is above STEER x the bound,
    the mapping simulates REPLAY_SHARE x FREE_COST (2 x 3) placements fewer: 16 - 6 on
    this small program, whatever the number of CPUs; the oracle graph's mapping keeps
    its 16."""
    assert time_aware.MAX_EVALS == 16 and FREE_COST == 3 and REPLAY_SHARE == 2
    assert runs[("cd", "auto")].placement.info["evaluations"] == 10
    assert runs[("cd", "full")].placement.info["evaluations"] == 16
    assert runs[("oracle", "auto")].placement.info["evaluations"] == 16


class _Tasks:
    def __init__(self, m):
        self.src = np.empty(m, dtype=np.int8)


@pytest.mark.parametrize("m,want", [
    # each of the replay's FREE_COST = 3 simulations costs REPLAY_SHARE = 2 of the mapping's
    (1_000, 10),  # min(16, 3e7 // m) = 16 placements, 6 to the replay
    (1_875_000, 10),  # 3e7 // m = 16
    (2_500_000, 6),  # 12 - 6
    (6_842_435, 2),  # md under cd: 4 - 6 < 0, but the memory-centric and compact stay
    (10_000_000, 2),  # 3 - 6: the two stay
    (15_000_001, None),  # 3e7 // m = 1: no room for the replay, the mapping keeps its own
])
def test_mapping_evaluations(m, want):
    bound = 1000.0
    replay = {"steering": "replay", "priorities": [[0.0, STEER * bound + 1.0]]}
    assert mapping_evaluations(_Tasks(m), replay, bound) == want
    # near the bound the replay does not run: nothing is taken
    near = {"steering": "replay", "priorities": [[0.0, STEER * bound]]}
    assert mapping_evaluations(_Tasks(m), near, bound) is None
    # the full steering, or a data graph
    assert mapping_evaluations(_Tasks(m), {"priorities": replay["priorities"]}, bound) is None


@pytest.mark.parametrize("model,p", [("base", 8), ("cd", 16)])
def test_two_placements_are_judged_after_their_replays(trace, monkeypatch, model, p):
    """Where the mapping has two placements to judge (2 evaluations, the compact one's
    simulation the steering's), each is replayed in the order of its window-free
    simulation and the fastest of the compact windowed simulation and the two replays is
    kept: derived here from par's first clustering, the placements and the simulator;
    the same with one simulation at a time."""
    from mapping.memory_centric import THRESHOLD, memory_centric
    from mapping.simulate import rescheduled, simulate
    from vcut.par_steering import finish_order

    g = build_graph(trace, control=model)
    monkeypatch.setattr(time_aware, "EVAL_TASKS", 4 * g.m)  # the mapping's 4 -> 4 - 6, kept at 2
    got = {jobs: analyze_graph(g, p, object_bytes=trace.obj_size, baselines=False, jobs=jobs)
           for jobs in (1, 2)}
    a = got[2]
    assert a.placement.info["evaluations"] == 2 and a.placement.method == "time-aware"
    machine = table2(p)
    first, _ = cluster_graph(g, p, "par", latency=machine.mean_message_cycles(VALUE_BYTES),
                             numa=par_numa(machine, p))
    compact = time_aware.compact(p, machine)
    windowed = simulate(first, compact, machine, VALUE_BYTES)
    mc = np.asarray(memory_centric(a.interactions, machine, THRESHOLD)[0], dtype=np.int64)
    free = replace(machine, issue_window=len(first.src))
    replays = []
    for core in (mc, compact):
        c = rescheduled(first, finish_order(first, simulate(first, core, free, VALUE_BYTES)))
        replays.append((core, c, simulate(c, core, machine, VALUE_BYTES)))
    assert a.partition["replays_from"] == windowed.makespan
    assert a.partition["replays"] == [r.makespan for _, _, r in replays]
    spans = [windowed.makespan] + [r.makespan for _, _, r in replays]
    kept = int(np.argmin(spans))
    assert a.partition["replayed"] == kept and a.result.makespan == min(spans)
    core, c, r = (compact, first, windowed) if kept == 0 else replays[kept - 1]
    assert np.array_equal(a.placement.core, core)
    assert np.array_equal(a.clustering.order, c.order)
    assert np.array_equal(a.result.finish, r.finish)
    one = got[1]
    assert one.result.makespan == a.result.makespan and one.partition == a.partition
    assert np.array_equal(one.placement.core, a.placement.core)


def test_pair_replays_only_where_the_mapping_has_two_placements():
    from vcut.par_steering import pair_replays

    assert pair_replays(2, True)
    assert not pair_replays(3, True)  # the mapping's search moves: it judges them itself
    assert not pair_replays(None, True)  # not the replay's steering
    assert not pair_replays(2, False)  # the compact one to simulate too


def test_full_searches_every_priority_on_a_control_graph(runs):
    a = runs[("cd", "full")]
    assert "steering" not in a.partition
    assert [g for g, _ in a.partition["priorities"]][1:] == \
        [g for g in GAMMAS if g != a.partition["priorities"][0][0]]
    assert len(a.partition["replays"]) >= 1


def test_oracle_graph_the_same_either_way(runs):
    auto, full = runs[("oracle", "auto")], runs[("oracle", "full")]
    assert "steering" not in auto.partition
    assert auto.result.makespan == full.result.makespan
    assert np.array_equal(auto.clustering.cluster, full.clustering.cluster)
    assert np.array_equal(auto.placement.core, full.placement.core)


@pytest.mark.parametrize("bad", ["fast", "", "AUTO", None])
def test_bad_steering_refused_by_the_api(graphs, bad):
    with pytest.raises(InputError, match="unknown steering .*; use one of auto, full"):
        analyze_graph(graphs["cd"], P, steering=bad)
    with pytest.raises(InputError, match="unknown steering"):
        compare_methods(graphs["cd"], [2], ["par"], steering=bad)


def test_bad_steering_refused_before_tracing(tmp_path):
    out = tmp_path / "out"
    opts = AnalysisOptions(p=4, steering="fast", output=str(out), baselines=False,
                           trace=TraceOptions(defines=("N=2",)))
    with pytest.raises(InputError, match="unknown steering 'fast'"):
        analyze([STRASSEN], opts)
    assert not out.exists()


def test_cli_steering(capsys, tmp_path, runs):
    code, out, _ = run_cli(capsys, "analyze", STRASSEN, "-D", "N=2", "-p", P, "--control", "cd",
                           "--no-baselines", "--json")
    assert code == 0
    doc = json.loads(out)
    assert doc["makespan"] == pytest.approx(runs[("cd", "auto")].result.makespan)
    code, out, _ = run_cli(capsys, "analyze", STRASSEN, "-D", "N=2", "-p", P, "--control", "cd",
                           "--no-baselines", "--json", "--steering", "full")
    assert code == 0
    assert json.loads(out)["makespan"] == pytest.approx(runs[("cd", "full")].result.makespan)
    code, line = run_cli_error(capsys, "analyze", STRASSEN, "-D", "N=2", "-p", 4,
                               "--steering", "fast", "-o", tmp_path / "o")
    assert code == 2 and "--steering" in line and "fast" in line
    assert not (tmp_path / "o").exists()
