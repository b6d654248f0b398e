"""``--steering`` (`vcut.par_steering.STEERING`): how far the analysis searches ``par``'s
candidates on graphs with control edges.

The reference is strassen (N=2) traced here with `frontend`, at p = 16 on the Table 2
machine: under ``cd`` par's first clustering simulates far above 1.10x the lower bound,
so the full steering tries every priority, and ``auto`` must keep that first clustering
exactly as `cluster_graph` makes it.
"""

import json
import os

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
from vcut.par_steering import FREE_COST, GAMMAS, STEER, STEERING, mapping_evaluations, par_numa
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
    the mapping simulates FREE_COST (3) placements fewer: 16 - 3 on this small program;
    the oracle graph's mapping keeps its 16."""
    assert time_aware.MAX_EVALS == 16 and FREE_COST == 3
    assert runs[("cd", "auto")].placement.info["evaluations"] == 13
    assert runs[("cd", "full")].placement.info["evaluations"] == 16
    assert runs[("oracle", "auto")].placement.info["evaluations"] == 16


class _Tasks:
    def __init__(self, m):
        self.src = np.empty(m, dtype=np.int8)


@pytest.mark.parametrize("m,want", [
    (1_000, 13),  # min(16, 3e7 // m) = 16 placements, 3 to the replay
    (1_875_000, 13),  # 3e7 // m = 16
    (2_500_000, 9),  # 12 - 3
    (6_842_435, 2),  # md under cd: 4 - 3 = 1, but the memory-centric and compact stay
    (10_000_000, 2),  # 3 - 3: the two stay
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


@pytest.mark.parametrize("model,p,kept", [("base", 8, True), ("cd", 16, False)])
def test_the_window_free_simulation_runs_beside_a_lone_mapping(trace, monkeypatch, model, p,
                                                                kept):
    """Where the mapping simulates the memory-centric placement alone (2 evaluations, the
    compact one known), the replay's window-free simulation of that placement runs beside
    it and is used when the mapping keeps it (``base`` at p = 8; at p = 16 under ``cd`` the
    compact one wins and the replay simulates its own): the same analysis as without."""
    import vcut.pipeline.analysis as analysis
    import vcut.par_steering as steering
    from mapping.memory_centric import THRESHOLD, memory_centric

    g = build_graph(trace, control=model)
    monkeypatch.setattr(time_aware, "EVAL_TASKS", 4 * g.m)  # the mapping's 4 -> 4 - 3, kept at 2
    made, real = [], analysis.free_ahead
    free_runs, simulate = [], steering.simulate

    def spy(*args, **kwargs):
        made.append(real(*args, **kwargs))
        return made[-1]

    def counted(cl, core, machine, value_bytes=None):  # the replay's own simulations
        free_runs.append(machine.issue_window > 64)
        return simulate(cl, core, machine, value_bytes)

    monkeypatch.setattr(analysis, "free_ahead", spy)
    monkeypatch.setattr(steering, "simulate", counted)
    ahead = analyze_graph(g, p, object_bytes=trace.obj_size, baselines=False, jobs=2)
    assert ahead.placement.info["evaluations"] == 2
    assert len(made) == 1 and made[0] is not None
    core, _ = made[0]
    assert np.array_equal(core, memory_centric(ahead.interactions, ahead.machine, THRESHOLD)[0])
    assert np.array_equal(ahead.placement.core, core) == kept
    # the steering's compact simulation, the one ahead (window-free), then the replay's: its
    # own window-free one only where the placement is not the one simulated ahead, and the
    # replayed order's
    assert free_runs == [False, True] + ([] if kept else [True]) + [False]
    monkeypatch.setattr(analysis, "free_ahead", lambda *args, **kwargs: None)
    plain = analyze_graph(g, p, object_bytes=trace.obj_size, baselines=False, jobs=2)
    assert ahead.result.makespan == plain.result.makespan
    assert ahead.partition["replays"] == plain.partition["replays"]
    assert np.array_equal(ahead.clustering.schedule, plain.clustering.schedule)
    assert np.array_equal(ahead.result.finish, plain.result.finish)


def test_free_ahead_only_where_a_core_would_idle(trace, graphs, runs):
    from vcut.par_steering import free_ahead

    a = runs[("cd", "auto")]
    args = (a.clustering, a.interactions, a.machine, 4)
    assert free_ahead(*args, 2, True, 2) is not None
    assert free_ahead(*args, 3, True, 2) is None  # the mapping simulates two: no core idles
    assert free_ahead(*args, None, True, 2) is None  # not the replay's steering
    assert free_ahead(*args, 2, False, 2) is None  # the compact one to simulate too
    assert free_ahead(*args, 2, True, 1) is None  # one simulation at a time fits


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
