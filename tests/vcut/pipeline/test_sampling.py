"""--window roi:K and --windows N: the analysis of evenly spaced windows (mapping/sampling.py)."""

import json
import math
import statistics
from fractions import Fraction

import numpy as np
import pytest

from frontend import compile_program, trace_program
from ir_graph import write_graph
from mapping import budget
from vcut.pipeline.windows import analyze_windows, variation
from tests.helpers import ROI_PROGRAM, run_cli

P = 4
#: The figures of ``vcut analyze --json`` a window's row repeats: (summary key, row key).
SUMMARY_FIGURES = [("communication_bytes",) * 2, ("messages",) * 2, ("network_bytes",) * 2,
                   ("hop_bytes",) * 2, ("makespan",) * 2, ("makespan_seconds",) * 2,
                   ("independent_time",) * 2, ("cores_used",) * 2,
                   ("utilization_used_cores",) * 2, ("utilization_all_cores",) * 2]


@pytest.fixture(scope="module")
def strassen_trace(strassen8, tmp_path_factory):
    path = tmp_path_factory.mktemp("sampling") / "t.npz"
    strassen8[0].save(str(path))
    return str(path)


@pytest.fixture(scope="module")
def roi_trace(tmp_path_factory):
    """ROI_PROGRAM traced with --roi work (4 activations), saved; and its graph."""
    from ir_graph import build_graph

    d = tmp_path_factory.mktemp("roi")
    (d / "roi.c").write_text(ROI_PROGRAM)
    trace = trace_program(compile_program([str(d / "roi.c")]), roi=["work"], timing=False)
    trace.save(str(d / "t.npz"))
    return str(d / "t.npz"), build_graph(trace)


def nearest_start(i, count, total, size):
    """Start of window i, derived afresh: the centre of part i less half a window, rounded
    to the nearest unit (halves up), kept inside the run."""
    ideal = Fraction((2 * i + 1) * total, 2 * count) - Fraction(size, 2)
    return min(max(math.floor(ideal + Fraction(1, 2)), 0), total - size)


def test_windows_equal_separate_window_analyses(strassen_trace, strassen8, capsys):
    n = strassen8[1].n
    code, out, err = run_cli(capsys, "analyze", strassen_trace, "-p", P, "--windows", 3,
                             "--window-size", 6000, "--no-baselines", "--seed", 7, "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert (doc["count"], doc["size"], doc["unit"], doc["clusters"]) == (3, 6000, "nodes", P)
    assert [(r["start"], r["end"]) for r in doc["windows"]] == \
        [(nearest_start(i, 3, n, 6000), nearest_start(i, 3, n, 6000) + 6000) for i in range(3)]
    for r in doc["windows"]:
        code, out, err = run_cli(capsys, "analyze", strassen_trace, "-p", P, "--window",
                                 f"{r['start']}:{r['end']}", "--no-baselines", "--seed", 7, "--json")
        assert code == 0, err
        one = json.loads(out)
        assert (r["nodes"], r["edges"]) == (one["graph"]["nodes"], one["graph"]["edges"])
        assert (r["edges_in"], r["edges_out"]) == (one["graph"]["window"]["edges_in"],
                                                   one["graph"]["window"]["edges_out"])
        for key, row_key in SUMMARY_FIGURES:
            assert r[row_key] == one[key], key
        for key in ("replication_factor", "vertex_copies", "work_imbalance"):
            assert r[key] == one["partition"][key], key
        # IR graphs are simple: every edge is one task, so the work is the total edge weight
        w = strassen8[1].window(r["start"], r["end"])
        assert r["speedup"] == pytest.approx(w.total_weight / one["makespan"], rel=1e-12)


def test_variation_statistics_by_hand(strassen_trace, capsys):
    code, out, err = run_cli(capsys, "analyze", strassen_trace, "-p", P, "--windows", 4,
                             "--no-baselines", "--json")
    assert code == 0, err
    doc = json.loads(out)
    rows = doc["windows"]
    assert len(rows) == 4 and doc["size"] == rows[0]["nodes"]
    assert doc["figures"] == ["replication_factor", "vertex_copies", "work_imbalance",
                              "communication_bytes", "messages", "network_bytes", "hop_bytes",
                              "makespan", "makespan_seconds", "independent_time", "speedup",
                              "cores_used", "utilization_used_cores", "utilization_all_cores"]
    for key in doc["figures"]:
        values = [r[key] for r in rows]
        got = doc["statistics"][key]
        assert got["min"] == min(values) and got["max"] == max(values)
        assert got["median"] == pytest.approx(statistics.median(values), rel=1e-12)
        mean = statistics.fmean(values)
        assert got["mean"] == pytest.approx(mean, rel=1e-12)
        assert got["cv"] == pytest.approx(statistics.pstdev(values) / mean, rel=1e-9, abs=1e-15)


def test_variation_known_answers():
    v = variation([1, 2, 3, 4])
    assert (v["min"], v["median"], v["max"], v["mean"]) == (1.0, 2.5, 4.0, 2.5)
    assert v["cv"] == pytest.approx(math.sqrt(1.25) / 2.5)
    assert variation([0, 0])["cv"] == 0.0 and variation([5.0])["cv"] == 0.0
    assert variation([1.0, float("nan")]) == dict.fromkeys(("min", "median", "max", "mean",
                                                            "cv"))


def test_table_on_stdout(strassen_trace, capsys):
    code, out, err = run_cli(capsys, "analyze", strassen_trace, "-p", P, "--windows", 2,
                             "--window-size", 5000, "--no-baselines")
    assert code == 0, err
    lines = out.splitlines()
    assert lines[2] == "windows   2 of 5,000 nodes each, centred in 2 equal parts of the run"
    head = lines.index("") + 1
    assert lines[head].split()[:4] == ["window", "nodes", "edges", "edges"]
    assert [ln.split()[0] for ln in lines[head + 1:head + 3]] == ["0", "1"]
    stats = lines[lines.index("", head) + 1:]
    assert stats[0].split() == ["figure", "min", "median", "max", "cv"]
    assert stats[1].startswith("replication factor") and len(stats) == 15
    assert [ln.split("  ")[0] for ln in stats[-3:]] == [
        "cores used", "utilization used cores", "utilization all cores"]


def test_windows_of_roi_activations(roi_trace, capsys):
    path, g = roi_trace
    b = g.roi_starts.tolist() + [g.n]
    assert len(b) == 5
    code, out, err = run_cli(capsys, "analyze", path, "-p", 2, "--windows", 2, "--window-size",
                             "roi:1", "--no-baselines", "--json")
    assert code == 0, err
    doc = json.loads(out)
    # 4 activations, 2 windows of one: the nearest to the centres 1 and 3 (less half a window)
    assert [(r["roi_first"], r["roi_stop"]) for r in doc["windows"]] == [(1, 2), (3, 4)]
    assert [(r["start"], r["end"]) for r in doc["windows"]] == [(b[1], b[2]), (b[3], b[4])]
    code, out, err = run_cli(capsys, "analyze", path, "-p", 2, "--window", "roi:3", "--no-baselines",
                             "--json")
    assert code == 0, err
    one = json.loads(out)
    assert one["graph"]["window"]["roi_activations"] == {"first": 3, "stop": 4, "of": 4}
    assert one["makespan"] == doc["windows"][1]["makespan"]


def test_window_roi_k_is_the_node_window_by_hand(roi_trace, capsys):
    path, g = roi_trace
    b = g.roi_starts.tolist() + [g.n]
    for spec, (lo, hi) in (("roi:1", (b[1], b[2])), ("roi:1:3", (b[1], b[3])),
                           ("roi:2:", (b[2], g.n)), ("roi::2", (0, b[2]))):
        code, out, err = run_cli(capsys, "analyze", path, "-p", 2, "--window", spec,
                                 "--no-baselines", "--json")
        assert code == 0, err
        by_roi = json.loads(out)
        code, out, err = run_cli(capsys, "analyze", path, "-p", 2, "--window", f"{lo}:{hi}",
                                 "--no-baselines", "--json")
        by_node = json.loads(out)
        win = dict(by_roi["graph"]["window"])
        win.pop("roi_activations")
        assert win == by_node["graph"]["window"] and (win["start"], win["end"]) == (lo, hi)
        for key in ("makespan", "communication_bytes", "partition", "core_of_cluster"):
            assert by_roi[key] == by_node[key]
    code, out, _ = run_cli(capsys, "analyze", path, "-p", 2, "--window", "roi:1:3", "--no-baselines")
    assert f"ROI activations 1..2 of 4: nodes {b[1]:,}..{b[3] - 1:,} of {g.n:,}" in out


def test_windows_json_file(strassen_trace, tmp_path, capsys):
    outdir = tmp_path / "out"
    code, out, err = run_cli(capsys, "analyze", strassen_trace, "-p", P, "--windows", 2,
                             "--window-size", 3000, "--no-baselines", "--json", "-o", outdir)
    assert code == 0, err
    doc = json.loads(out)
    assert doc["files"] == [str(outdir / "windows.json")]
    saved = json.loads((outdir / "windows.json").read_text())
    assert saved["windows"] == doc["windows"] and saved["statistics"] == doc["statistics"]
    assert not (outdir / "mapping.json").exists()


def test_windows_inside_a_window(strassen_trace, strassen8, capsys):
    code, out, err = run_cli(capsys, "analyze", strassen_trace, "-p", P, "--window", "10000:40000",
                             "--windows", 3, "--no-baselines", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["graph"]["window"]["start"] == 10000
    # positions count from the window's first node: three consecutive 10,000-node parts
    assert [(r["start"], r["end"]) for r in doc["windows"]] == [(0, 10000), (10000, 20000),
                                                               (20000, 30000)]
    g = strassen8[1].window(10000, 40000).window(10000, 20000)
    assert (doc["windows"][1]["nodes"], doc["windows"][1]["edges"]) == (g.n, g.m)


def test_analyze_windows_api_names_a_window_it_cannot_analyse(strassen8):
    from vcut_base.errors import InputError

    lo = nearest_start(0, 2, strassen8[1].n, 3)
    with pytest.raises(InputError, match=rf"^window 0 \(nodes {lo:,}\.\.{lo + 2:,}\): 64 "
                       "clusters but the graph has only"):
        analyze_windows(strassen8[1], 64, 2, 3, baselines=False)


def test_budget_of_a_sample():
    # the memory of one window, the time of all of them
    need, seconds = budget.estimate(10_000_000, 8, False, window=1000, windows=10)
    assert need == budget.BASE_BYTES + 10_000_000 * budget.GRAPH_BYTES_PER_NODE
    assert seconds == 10 * 1000 / budget.NODES_PER_SECOND[False]


# -- bad input: one line, exit 2 (10 for a corrupt graph file) ------------------------------
def one_line(err):
    return err.count("\n") == 1 and err.startswith("error: ")


@pytest.mark.parametrize("args,message", [
    (["--window", "roi:x"], "--window 'roi:x': give roi:K"),
    (["--window", "roi:3:2"], "--window 'roi:3:2': give roi:K"),
    (["--window", "roi:4"], "ROI activation 4 is out of range: the run has 4 activations"),
    (["--window", "roi:1:9"], "ROI activations 1..8 are out of range: the run has 4 activations"),
    (["--windows", "0"], "--windows must be a positive integer"),
    (["--windows", "-1"], "--windows must be a positive integer"),
    (["--windows", "2", "--window-size", "0"], "--window-size '0': give a positive number"),
    (["--windows", "2", "--window-size", "roi:"], "--window-size 'roi:': give a positive"),
    (["--windows", "2", "--window-size", "99999999"], "a window of 99,999,999 nodes does not fit"),
    (["--windows", "2", "--window-size", "roi:5"],
     "a window of 5 ROI activations does not fit in the run's 4 ROI activations"),
    (["--windows", "100000"], "100,000 windows need at least one unit each"),
    (["--window-size", "10"], "--window-size sets the size of the --windows sample"),
    (["--windows", "2", "--partition", "p.txt"], "--partition does not combine with --windows"),
    (["--windows", "2", "--algo", "nope"], "error: unknown partitioning method 'nope'"),
])
def test_bad_window_arguments(roi_trace, capsys, args, message):
    code, out, err = run_cli(capsys, "analyze", roi_trace[0], "-p", 2, "--no-baselines", *args)
    assert code == 2 and one_line(err) and message in err, err
    assert out == ""


@pytest.mark.parametrize("args", [["--window", "roi:0"],
                                  ["--windows", "2", "--window-size", "roi:1"]])
def test_no_roi_recorded(strassen_trace, tmp_path, strassen8, capsys, args):
    write_graph(strassen8[1], tmp_path / "g.graph")
    for path in (strassen_trace, tmp_path / "g.graph"):
        code, out, err = run_cli(capsys, "analyze", path, "-p", P, "--no-baselines", *args)
        assert code == 2 and one_line(err) and out == "", err
        assert "no ROI activations recorded" in err and "--roi FUNC" in err


def test_an_roi_window_of_a_program_needs_roi(tmp_path, capsys):
    src = tmp_path / "p.c"
    src.write_text(ROI_PROGRAM)
    code, out, err = run_cli(capsys, "analyze", src, "-p", 2, "--window", "roi:1")
    # refused before the program ran: its output line would be on stderr too
    assert code == 2 and one_line(err) and "--roi FUNC" in err, err
    assert out == ""


def test_corrupt_activations_in_a_graph_file(roi_trace, tmp_path, capsys):
    path = tmp_path / "g.npz"
    write_graph(roi_trace[1], path)
    with np.load(path) as z:
        arrays = {k: z[k] for k in z.files}
    arrays["roi_starts"] = arrays["roi_starts"][::-1].copy()
    np.savez(path, **arrays)
    code, out, err = run_cli(capsys, "analyze", path, "-p", 2, "--window", "roi:1")
    assert code == 10 and one_line(err) and "does not come after roi_starts[0]" in err, err
    assert out == ""
