"""mapping.insight: known answers on a 6-node DAG worked out by hand, and one traced sample."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from mapping.bounds import lower_bound
from mapping.insight import critical_path, insight, task_intervals, task_labels
from tests.helpers import FINISH, ROOT, START, insight_analysis

def test_task_labels_charge_the_weights_instruction():
    a, g = insight_analysis()
    line_of, fn_of, lines, fns = task_labels(a.clustering, g, g.source)
    assert [lines[k] for k in line_of] == ["prog.c:11", "prog.c:20", "prog.c:21", "prog.c:20",
                                           "prog.c:21", "prog.c:11", "prog.c:11"]
    assert [fns[k] for k in fn_of] == ["main", "kern", "kern", "kern", "kern", "main", "main"]


def test_intervals_follow_the_simulators_durations():
    a, _ = insight_analysis()
    start, finish, core = task_intervals(a)
    assert core.tolist() == [0, 0, 1, 1, 1, 0, 1]
    np.testing.assert_allclose(start, START)
    np.testing.assert_array_equal(finish, FINISH)
    # per core, the durations add up to the busy time
    np.testing.assert_allclose(np.bincount(core, weights=finish - start), a.result.busy)


def test_critical_path_by_hand():
    a, _ = insight_analysis()
    # longest chain: 0 -e1-> 2 -e3-> 3 -e4-> 4 -e6-> 5, 200 + 5 + 50 + 1 = 256 cycles,
    # at the fastest core's speed (2): 128; node 5 via e5 would be 10 + 100 = 110
    cycles, path = critical_path(a)
    assert path.tolist() == [1, 3, 4, 6]
    assert cycles == 128.0 == lower_bound(a.clustering, a.machine).critical_path


def test_insight_by_hand():
    a, g = insight_analysis()
    ins = insight(a, g, bins=2)
    c0, c1 = ins.clusters
    # cluster 0: e0 + e5 on line 11 (110), e1 on line 20 (200) of 310 cycles
    assert [(x["name"], x["cycles"]) for x in c0["lines"]] == [("prog.c:20", 200.0),
                                                              ("prog.c:11", 110.0)]
    assert c0["lines"][0]["share"] == pytest.approx(200 / 310)
    assert [(x["name"], x["cycles"]) for x in c1["lines"]] == [
        ("prog.c:21", 80.0), ("prog.c:20", 5.0), ("prog.c:11", 1.0)]
    assert [(x["name"], x["cycles"]) for x in c1["functions"]] == [("kern", 85.0), ("main", 1.0)]
    # both objects are touched once by each cluster: each shares them with the other
    assert [(o["id"], o["name"], o["bytes"], o["tasks"], o["shared_with"])
            for o in c0["objects"]] == [(0, "buf", 64.0, 1, [1]),
                                        (1, "heap block from prog.c:10 (main)", 32.0, 1, [1])]
    assert [o["clusters"] for o in ins.shared_objects] == [[0, 1], [0, 1]]
    # messages: vertices 1 and 2 scatter 0 -> 1, vertex 5 gathers 1 -> 0 (32 bytes each)
    assert c0["partners"] == [{"cluster": 1, "sent_bytes": 64.0, "received_bytes": 32.0,
                               "bytes": 96.0}]
    cp = ins.critical_path
    assert (cp["cycles"], cp["tasks"]) == (128.0, 4)
    assert [(x["name"], x["cycles"]) for x in cp["lines"]] == [
        ("prog.c:20", 102.5), ("prog.c:21", 25.0), ("prog.c:11", 0.5)]
    assert [(x["cluster"], x["cycles"]) for x in cp["clusters"]] == [(0, 100.0), (1, 28.0)]
    # the path passes from cluster 0 (e1) to cluster 1 (e3, on buf at line 20) once
    assert cp["handoffs"] == [{"clusters": [0, 1], "count": 1, "object": "buf",
                               "line": "prog.c:20"}]
    # two bins of 155 cycles: core 0 busy throughout, core 1 for 15 then 29.5 cycles
    np.testing.assert_allclose(ins.occupancy, [[1.0, 1.0], [15 / 155, 29.5 / 155]])
    assert ins.timeline["idle_share"] == pytest.approx(1 - 354.5 / 620)
    assert "clusters 0 and 1 pass values to each other once, most often on `buf` at " \
           "prog.c:20" in ins.reading
    json.dumps(ins.to_json())


def test_without_trace_no_lines():
    a, g = insight_analysis(graph_source=False)
    ins = insight(a, g)
    assert not ins.source and "no trace" in ins.note
    assert ins.clusters[0]["lines"] == [] and ins.critical_path["lines"] == []
    assert ins.clusters[0]["objects"][0]["name"] == "object 0"
    assert ins.critical_path["cycles"] == 128.0


def test_analyze_strassen_insights(tmp_path):
    """The command end to end: the insights in --json and mapping.json, the section in
    report.html, and the timeline's durations against the simulator's busy cycles."""
    out = tmp_path / "out"
    run = subprocess.run(
        [sys.executable, "-m", "vcut.cli", "analyze", os.path.join(ROOT, "samples", "strassen.c"),
         "-D", "N=8", "-p", "8", "--machine", "mesh:4x4", "--no-baselines", "-o", str(out),
         "--json"], capture_output=True, text=True, check=True, cwd=ROOT)
    summary = json.loads(run.stdout)
    doc = json.loads((out / "mapping.json").read_text())
    for ins in (summary["insights"], doc["insights"]):
        assert set(ins) == {"source", "note", "reading", "clusters", "shared_objects",
                            "critical_path", "timeline"}
        assert ins["source"] and len(ins["clusters"]) == 8
        assert ins["critical_path"]["cycles"] == pytest.approx(summary["critical_path"])
        assert any(x["name"].startswith("strassen.c:") for x in ins["critical_path"]["lines"])
        for c in ins["clusters"]:
            assert c["lines"] and sum(x["share"] for x in c["lines"]) <= 1 + 1e-9
    page = (out / "report.html").read_text()
    assert 'id="insight"' in page and "Reading the analysis" in page
    assert 'id="timeline"' in page and "data:image/png;base64," in page
    # the answer (with the makespan and speed-up --json gives), then the reading, the
    # figures, and last the folded internals: every partition figure not in the answer
    at = [page.index(s) for s in ('<section id="answer">', '<p id="reading">', "<img",
                                  "<details")]
    assert at == sorted(at)
    answer = page[at[0]:page.index("</section>", at[0])]
    assert f"<td>{summary['makespan']:,.0f} cycles (" in answer
    assert f"<td>{summary['speedup']:.2f} (one core" in answer
    assert f"<td>{summary['makespan_over_bound']:.2f} (bound " in answer
    folded = page[page.index("<details id='partitioner'>"):]
    folded = folded[:folded.index("</details>")]
    for key in set(summary["partition"]) - {"replication_factor", "work_imbalance",
                                            "cut_edges"}:
        assert f"<tr><th>{key.replace('_', ' ')}</th>" in folded, key
    assert "<details id='phases'>" in page


def test_strassen_intervals_match_busy(strassen8):
    from vcut.pipeline.analysis import analyze_graph
    from mapping.machine import load_machine

    trace, g = strassen8
    a = analyze_graph(g, 8, "wb-libra", load_machine("mesh:4x4"), object_bytes=trace.obj_size,
                      baselines=False)
    start, finish, core = task_intervals(a)
    np.testing.assert_allclose(np.bincount(core, weights=finish - start, minlength=16),
                               a.result.busy, rtol=1e-9, atol=1e-6)
    # one task at a time on a core
    for k in np.unique(core):
        o = np.argsort(start[core == k], kind="stable")
        s, f = start[core == k][o], finish[core == k][o]
        assert np.all(s[1:] >= f[:-1] - 1e-6)
    ins = insight(a, g)
    assert ins.source and ins.occupancy.shape == (len(np.unique(core)), 1000)
    assert ins.occupancy.min() >= 0 and ins.occupancy.max() <= 1 + 1e-9


def test_task_starts_is_the_array_expressions_bit_for_bit():
    """insight_kernels.task_starts against the NumPy expressions of task_intervals it
    replaced, on random tasks: objects shared across NUMA nodes, tasks without one, ties
    between first touches, heterogeneous core speeds, weights above and below a DRAM
    access."""
    from mapping import insight_kernels as K

    rng = np.random.default_rng(5)
    m, p, cores, n_obj = 5000, 12, 16, 40
    cluster = rng.integers(0, p, m).astype(np.int32)
    place = rng.permutation(cores)[:p].astype(np.int64)
    speed = rng.choice([1.0, 1.5, 2.0], cores)
    numa = np.repeat(np.arange(4), 4).astype(np.int64)
    lat = 100.0 + 40.0 * np.abs(np.subtract.outer(np.arange(4), np.arange(4)))
    w = rng.integers(1, 300, m).astype(np.float64)
    finish = np.round(rng.uniform(0, 2000, m))  # rounded: equal local starts occur
    obj = rng.integers(-1, n_obj, m)
    core = place[cluster]
    node = numa[core]
    local = finish - w / speed[core]
    home = np.full(n_obj, -1)
    for o in range(n_obj):  # the node of the earliest local start, ties to the earlier task
        touching = np.flatnonzero(obj == o)
        if len(touching):
            home[o] = node[touching[np.argmin(local[touching])]]
    b = np.where(obj >= 0, home[np.maximum(obj, 0)], node)
    extra = np.minimum(1.0, w / 100.0) * (lat[node, b] - lat[node, node])
    want = finish - (w + extra) / speed[core]
    start, got_core = K.task_starts(cluster, place, speed, numa, w, finish, obj, n_obj, lat,
                                    100.0)
    assert np.array_equal(got_core, core)
    assert np.array_equal(start, want)
    assert (extra > 0).any() and (extra == 0).any()  # both kinds of task were there
