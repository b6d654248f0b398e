"""Budget before an analysis, out-of-memory as one line, and --window slices of a run."""

import json

import numpy as np
import pytest

from vcut_base.errors import InputError
from ir_graph.graph import Graph
from mapping import budget
from tests.helpers import run_cli
from vcut.pipeline.inputs import parse_window


def chain_graph():
    # 0 -> 1 -> 2 -> 3 -> 4 -> 5, plus 0 -> 3 and 2 -> 5
    src = np.array([0, 1, 2, 3, 4, 0, 2], dtype=np.int32)
    dst = np.array([1, 2, 3, 4, 5, 3, 5], dtype=np.int32)
    return Graph(n=6, src=src, dst=dst, weight=np.arange(1.0, 8.0), directed=True,
                 node_sid=np.arange(10, 16, dtype=np.int32),
                 node_object=np.array([-1, 0, 1, -1, 2, 0], dtype=np.int32),
                 edge_kind=np.arange(7, dtype=np.uint8))


def test_window_is_the_induced_slice_renumbered():
    w = chain_graph().window(2, 5)  # nodes 2, 3, 4
    assert w.n == 3
    assert w.src.tolist() == [0, 1] and w.dst.tolist() == [1, 2]  # 2->3, 3->4
    assert w.weight.tolist() == [3.0, 4.0] and w.edge_kind.tolist() == [2, 3]
    assert w.node_sid.tolist() == [12, 13, 14] and w.node_object.tolist() == [1, -1, 2]
    # into the slice: 1->2, 0->3; out of it: 4->5, 2->5
    assert w.meta["window"] == {"start": 2, "end": 5, "nodes_of_run": 6, "edges_in": 2,
                                "edges_out": 2}
    w.validate()


@pytest.mark.parametrize("start,end", [(3, 3), (-1, 2), (0, 7), (5, 2)])
def test_window_outside_the_graph_is_refused(start, end):
    with pytest.raises(InputError, match="not a slice"):
        chain_graph().window(start, end)


def test_parse_window():
    assert parse_window("10:20") == (10, 20)
    assert parse_window(":20") == (0, 20)
    assert parse_window("10:") == (10, None)
    for bad in ("10", "a:b", "20:10", "-1:5", "5:5"):
        with pytest.raises(InputError, match="--window"):
            parse_window(bad)


def test_budget_estimate_and_refusal():
    need, seconds = budget.estimate(1_000_000, 8, baselines=False)
    assert need == budget.BASE_BYTES + 1_000_000 * budget.BYTES_PER_NODE
    assert seconds == 1_000_000 / budget.NODES_PER_SECOND[False]
    # replica sets per node: p = 8 one word and a count (12 bytes); p = 128 two words
    # (20); p = 1024 compact: count, overflow row and three int16 ids (14)
    for p, extra in ((64, 0), (128, 8), (1024, 2)):
        need, _ = budget.estimate(1_000_000, p)
        assert need == budget.BASE_BYTES + 1_000_000 * (budget.BYTES_PER_NODE + extra)
    # a window needs the graph of the whole run, and the analysis of the slice
    need, _ = budget.estimate(10_000_000, 8, window=1000)
    assert need == budget.BASE_BYTES + 10_000_000 * budget.GRAPH_BYTES_PER_NODE
    with pytest.raises(InputError, match=r"needs about .* \(--window START:END\)"):
        budget.check_budget(10_000_000, 8, available=10_000_000)
    lines = []
    budget.check_budget(10_000_000, 8, available=2**40, say=lines.append)
    assert len(lines) == 1 and lines[0].startswith("estimate: about")


def _strassen_trace(tmp_path, strassen8):
    path = str(tmp_path / "t.npz")
    strassen8[0].save(path)
    return path


def test_analyze_refuses_a_trace_beyond_the_memory(tmp_path, strassen8, capsys, monkeypatch):
    path = _strassen_trace(tmp_path, strassen8)
    monkeypatch.setattr(budget, "available_bytes", lambda: 1000)
    monkeypatch.setattr(budget, "resident_bytes", lambda: 0)  # a test worker's own memory
    code, out, err = run_cli(capsys, "analyze", path, "-p", "4", "-o", str(tmp_path / "out"))
    assert code == 2
    assert err.count("\n") == 1 and "needs about" in err and "--window" in err
    assert not (tmp_path / "out" / "mapping.json").exists()


def test_a_trace_beyond_the_memory_is_refused_before_its_arrays_are_read(
        tmp_path, strassen8, capsys, monkeypatch):
    """The instruction count comes from the header of the trace's ``dyn_sid`` member:
    the refusal reads no array (load_trace is never called) and names the same need as
    the check after reading would."""
    import vcut.pipeline.inputs

    path = _strassen_trace(tmp_path, strassen8)
    n = strassen8[0].dynamic_instructions

    def no_reading(*a, **k):
        raise AssertionError("the trace was read before the budget refused it")

    monkeypatch.setattr(vcut.pipeline.inputs, "load_trace", no_reading)
    monkeypatch.setattr(budget, "available_bytes", lambda: 1000)
    monkeypatch.setattr(budget, "resident_bytes", lambda: 0)
    code, out, err = run_cli(capsys, "analyze", path, "-p", "4", "-o", str(tmp_path / "out"))
    assert code == 2 and err.count("\n") == 1 and "needs about" in err
    need, _ = budget.estimate(n, 4)
    with pytest.raises(InputError) as expected:
        budget.check_budget(n, 4, available=1000)
    assert err == f"error: {expected.value}\n"
    assert need == budget.BASE_BYTES + n * budget.BYTES_PER_NODE
    # a node window: the graph of the whole run is still needed, so it is refused too
    code, out, err = run_cli(capsys, "analyze", path, "-p", "4", "--window", "0:100")
    assert code == 2 and "needs about" in err


def test_member_shape_reads_the_header_only(tmp_path):
    from vcut_base.npzfile import member_shape

    stored, packed = tmp_path / "a.npz", tmp_path / "b.npz"
    np.savez(stored, x=np.arange(7, dtype=np.int32), y=np.zeros((2, 3)))
    np.savez_compressed(packed, x=np.arange(1000, dtype=np.int64))
    assert member_shape(stored, "x") == (7,) and member_shape(stored, "y") == (2, 3)
    assert member_shape(packed, "x") == (1000,)
    assert member_shape(stored, "missing") is None
    (tmp_path / "c.npz").write_bytes(b"not a zip")
    assert member_shape(tmp_path / "c.npz", "x") is None


def test_out_of_memory_is_one_line_exit_11(tmp_path, strassen8, capsys, monkeypatch):
    import vcut.pipeline.report

    path = _strassen_trace(tmp_path, strassen8)

    def boom(*a, **k):
        raise MemoryError("Allocation failed")

    monkeypatch.setattr(vcut.pipeline.report, "analyze_graph", boom)
    code, out, err = run_cli(capsys, "analyze", path, "-p", "4", "--json")
    assert code == 11
    assert err.count("\n") == 1 and err.startswith("error: out of memory")
    assert json.loads(out)["exit_code"] == 11


def test_analyze_a_window_of_a_trace(tmp_path, strassen8, capsys):
    path = _strassen_trace(tmp_path, strassen8)
    n = strassen8[1].n
    code, out, _ = run_cli(capsys, "analyze", path, "-p", "4", "--window", f"1000:{n // 2}",
                           "--json", "--no-baselines")
    assert code == 0
    doc = json.loads(out)
    expect = strassen8[1].window(1000, n // 2)
    assert doc["graph"]["nodes"] == n // 2 - 1000 and doc["graph"]["edges"] == expect.m
    assert doc["graph"]["window"] == expect.meta["window"]


def test_a_trace_cut_short_is_one_line_and_writes_nothing(tmp_path, strassen8, capsys):
    path = _strassen_trace(tmp_path, strassen8)
    with open(path, "rb") as fh:
        data = fh.read()
    with open(path, "wb") as fh:  # what a crash while writing it would leave
        fh.write(data[: len(data) // 2])
    out = tmp_path / "out"
    code, stdout, err = run_cli(capsys, "analyze", path, "-p", "4", "-o", str(out))
    # not readable as a trace, so it is taken for a graph file, and refused as one
    assert code == 10
    assert err == f"error: {path} is not a readable vcut graph: not an .npz (zip) archive\n"
    assert stdout == "" and not (out / "mapping.json").exists() and not (out / "report.html").exists()


def test_the_budget_counts_what_this_process_holds_already(monkeypatch):
    """The estimate is the whole peak, the interpreter and kernels included
    (`BASE_BYTES`), so what the process holds now is not asked for again."""
    need, _ = budget.estimate(1_000_000, 8)
    monkeypatch.setattr(budget, "available_bytes", lambda: need - 10**6)
    monkeypatch.setattr(budget, "resident_bytes", lambda: 10**6)
    assert budget.check_budget(1_000_000, 8)[0] == need   # exactly fits
    monkeypatch.setattr(budget, "resident_bytes", lambda: 10**6 - 1)
    with pytest.raises(InputError, match="needs about"):
        budget.check_budget(1_000_000, 8)
