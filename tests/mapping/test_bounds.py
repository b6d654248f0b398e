"""The lower bound of a schedule: LB = max(critical path, work / P'), against independent
derivations (networkx's longest path, sums by hand) and against simulated makespans."""

import dataclasses
import json

import networkx as nx
import numpy as np
import pytest

from ir_graph.graph import Graph
from vcut.pipeline.analysis import analyze_graph
from mapping.bounds import lower_bound
from mapping.machine import load_machine
from mapping.placement import MAPPERS
from vcut.cli import main


def test_a_chain_and_an_independent_task():
    # 0 -> 1 -> 2 -> 3 (10, 20, 30 cycles) and 4 -> 5 (100 cycles)
    g = Graph(n=6, src=np.array([0, 1, 2, 4]), dst=np.array([1, 2, 3, 5]),
              weight=np.array([10.0, 20.0, 30.0, 100.0]))
    a = analyze_graph(g, 2, "wb-libra", load_machine("mesh:1x2"), baselines=False)
    b = a.bound
    assert (b.work, b.critical_path, b.cores, b.lower_bound) == (160.0, 100.0, 2, 100.0)
    f = b.figures(a.result.makespan)
    assert f["makespan_over_bound"] == a.result.makespan / 100.0 >= 1.0
    assert f["speedup"] == 160.0 / a.result.makespan
    # one core: the work bounds it; the fastest of unequal cores sets the durations
    one = analyze_graph(g, 1, "wb-libra", load_machine("mesh:1x1"), baselines=False)
    assert one.bound.lower_bound == 160.0 == one.result.makespan
    fast = dataclasses.replace(load_machine("mesh:1x2"), core_speed=np.array([1.0, 4.0]))
    assert lower_bound(a.clustering, fast).work == 40.0
    assert lower_bound(a.clustering, fast).critical_path == 25.0


@pytest.mark.parametrize("seed", range(5))
def test_critical_path_is_networkx_longest_path(seed):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(5, 80))
    m = int(rng.integers(n, 4 * n))
    src = rng.integers(0, n - 1, m)
    dst = np.minimum(src + rng.integers(1, 12, m), n - 1)
    pairs = np.unique(np.stack([src, dst], axis=1), axis=0)  # simple: the tasks are the edges
    w = rng.integers(1, 300, len(pairs)).astype(np.float64)
    g = Graph(n=n, src=pairs[:, 0], dst=pairs[:, 1], weight=w, directed=True)
    a = analyze_graph(g, 4, "wb-libra", load_machine("mesh:2x2"), baselines=False)
    dag = nx.DiGraph()
    dag.add_weighted_edges_from(zip(pairs[:, 0].tolist(), pairs[:, 1].tolist(), w.tolist()))
    assert a.bound.critical_path == pytest.approx(nx.dag_longest_path_length(dag), rel=1e-12)
    assert a.bound.work == pytest.approx(w.sum(), rel=1e-12)
    assert a.bound.lower_bound == max(a.bound.critical_path, a.bound.work / 4)


@pytest.mark.parametrize("p, machine", [(4, "mesh:2x2"), (8, "table2:8"), (16, "mesh:2x2")])
def test_no_mapping_beats_the_bound(strassen8, p, machine):
    trace, g = strassen8
    m = load_machine(machine)
    a = analyze_graph(g, p, "wb-libra", m, object_bytes=trace.obj_size)
    assert a.bound.cores == min(p, m.cores)
    assert a.bound.work == pytest.approx(float(np.sum(g.weight)), rel=1e-12)  # all local
    for row in a.mappers:
        assert row["makespan"] >= a.bound.lower_bound * (1 - 1e-12), row["mapping"]
    assert len(a.mappers) == len(MAPPERS)
    f = a.summary()
    assert f["makespan_over_bound"] >= 1.0 and 0 < f["speedup"] <= a.bound.cores


def test_analyze_reports_the_bound(tmp_path, strassen8, capsys):
    path = str(tmp_path / "t.npz")
    strassen8[0].save(path)
    assert main(["analyze", path, "-p", "4", "--json", "--no-baselines"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["makespan_over_bound"] == doc["makespan"] / doc["lower_bound"]
    assert doc["speedup"] == doc["work"] / doc["makespan"]
    assert doc["lower_bound"] == max(doc["critical_path"], doc["work"] / doc["cores_usable"])
    assert main(["analyze", path, "-p", "4", "--no-baselines", "-o", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert "lower bound" in out and "makespan / bound" in out
    saved = json.loads((tmp_path / "out" / "mapping.json").read_text())
    assert saved["metrics"]["lower_bound"] == doc["lower_bound"]
    assert "lower bound" in (tmp_path / "out" / "report.html").read_text()
