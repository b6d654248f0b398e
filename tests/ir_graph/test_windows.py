"""Windows of a run: ROI activation boundaries (trace -> graph -> .npz), ROI windows, and
evenly spaced windows (ir_graph/windows.py)."""

import json
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from frontend import compile_program, trace_program
from vcut_base.errors import GraphFormatError, InputError
from ir_graph import Graph, build_graph, read_graph, write_graph
from ir_graph.windows import NodeWindow, RoiWindow, roi_bounds, spaced_windows
from tests.helpers import ROI_PROGRAM

#: ROI_PROGRAM's work() runs CALLS times.
CALLS = 4


@pytest.fixture(scope="module", params=["-O0", "-O1"])
def roi_run(request, tmp_path_factory):
    """(trace, graph) of ROI_PROGRAM traced with --roi work."""
    src = tmp_path_factory.mktemp("roi") / "roi.c"
    src.write_text(ROI_PROGRAM)
    cm = compile_program([str(src)], opt=request.param, keep_out_of_line=("work",))
    trace = trace_program(cm, roi=["work"], timing=False)
    return trace, build_graph(trace)


def _entry_sids(trace, function):
    st_ = trace.static
    b = int(st_.fn_entry_block[st_.function_id(function)])
    first = int(st_.blk_first[b])
    return range(first, first + int(st_.blk_ninstr[b]))


def test_roi_activation_starts_of_a_program(roi_run):
    trace, g = roi_run
    assert trace.calls("work") == CALLS
    # each activation begins with the first instruction of work's entry block (an entry
    # block has no predecessors, and work is not recursive)
    entry = _entry_sids(trace, "work")
    assert trace.roi_activation_starts().tolist() == \
        np.flatnonzero(trace.dyn_sid == entry[0]).tolist()
    # in the graph: at the first node of that block (intrinsics are not nodes)
    first_node_sid = next(s for s in entry if np.any(g.node_sid == s))
    expect = np.flatnonzero(g.node_sid == first_node_sid)
    assert len(expect) == CALLS
    assert g.roi_starts.dtype == np.int64 and g.roi_starts.tolist() == expect.tolist()
    assert g.roi_starts[0] == 0  # only the ROI is traced
    assert g.meta["roi"] == ["work"]


def test_roi_window_is_the_node_window_of_its_boundaries(roi_run):
    _, g = roi_run
    b = g.roi_starts.tolist() + [g.n]
    for k in range(CALLS):
        w, ref = g.roi_window(k, k + 1), g.window(b[k], b[k + 1])
        assert w.n == ref.n and np.array_equal(w.src, ref.src) and np.array_equal(w.dst, ref.dst)
        assert np.array_equal(w.weight, ref.weight) and np.array_equal(w.node_sid, ref.node_sid)
        assert w.roi_starts.tolist() == [0]
        assert w.meta["window"] == dict(ref.meta["window"],
                                        roi_activations={"first": k, "stop": k + 1, "of": CALLS})
    w = g.roi_window(1, 3)
    assert (w.meta["window"]["start"], w.meta["window"]["end"]) == (b[1], b[3])
    assert w.roi_starts.tolist() == [0, b[2] - b[1]]
    assert g.roi_window(2).n == b[3] - b[2]  # stop None: one activation
    assert RoiWindow(2, 3).cut(g).n == b[3] - b[2]
    assert RoiWindow(2, None).cut(g).meta["window"]["end"] == g.n  # to the last


def test_roi_starts_survive_the_npz_format(roi_run, tmp_path):
    _, g = roi_run
    path = tmp_path / "g.npz"
    write_graph(g, path)
    h = read_graph(path)
    assert h.roi_starts.dtype == np.int64 and h.roi_starts.tolist() == g.roi_starts.tolist()
    write_graph(g, tmp_path / "g.graph")  # text formats have no place for them
    assert read_graph(tmp_path / "g.graph").roi_starts is None


def test_a_whole_program_trace_records_no_activations(tmp_path):
    src = tmp_path / "p.c"
    src.write_text(ROI_PROGRAM)
    trace = trace_program(compile_program([str(src)]), timing=False)
    assert trace.roi_activation_starts().tolist() == []
    g = build_graph(trace)
    assert g.roi_starts is None and "roi" not in g.meta
    with pytest.raises(InputError, match="no ROI activations recorded"):
        g.roi_window(0)


def chain_graph(roi=(0, 2, 5)):
    src = np.array([0, 1, 2, 3, 4, 0, 2], dtype=np.int32)
    dst = np.array([1, 2, 3, 4, 5, 3, 5], dtype=np.int32)
    return Graph(n=6, src=src, dst=dst, weight=np.arange(1.0, 8.0), directed=True,
                 roi_starts=None if roi is None else np.array(roi, dtype=np.int64))


def test_window_keeps_the_activations_that_begin_inside():
    assert chain_graph().window(1, 6).roi_starts.tolist() == [1, 4]
    assert chain_graph().window(3, 5).roi_starts.tolist() == []
    assert chain_graph(None).window(1, 6).roi_starts is None
    w = chain_graph().roi_window(1)  # nodes 2..4
    assert (w.n, w.src.tolist(), w.dst.tolist()) == (3, [0, 1], [1, 2])
    assert w.meta["window"] == {"start": 2, "end": 5, "nodes_of_run": 6, "edges_in": 2,
                                "edges_out": 2,
                                "roi_activations": {"first": 1, "stop": 2, "of": 3}}


@pytest.mark.parametrize("first,stop,message", [
    (3, None, r"ROI activation 3 is out of range: the run has 3 activations .* \(0\.\.2\)"),
    (0, 4, r"ROI activations 0\.\.3 are out of range: the run has 3 activations"),
    (2, 2, r"ROI activations 2\.\.1 are out of range"),
])
def test_roi_window_out_of_range(first, stop, message):
    with pytest.raises(InputError, match=message):
        chain_graph().roi_window(first, stop)


def test_roi_bounds():
    starts = np.array([0, 10, 25])
    assert roi_bounds(starts, 40, 0, 1) == (0, 10)
    assert roi_bounds(starts, 40, 1, None) == (10, 40)
    assert roi_bounds(starts, 40, 2, 3) == (25, 40)
    for none in (None, np.zeros(0, np.int64)):
        with pytest.raises(InputError, match="no ROI activations recorded"):
            roi_bounds(none, 40, 0, 1)
    assert NodeWindow(3, None).bounds(10) == (3, 10) and NodeWindow(3, 20).bounds(10) == (3, 10)
    assert str(NodeWindow(3, None)) == "3:" and str(RoiWindow(2, 3)) == "roi:2"
    assert str(RoiWindow(2, None)) == "roi:2:" and str(RoiWindow(0, 4)) == "roi:0:4"


@pytest.mark.parametrize("roi,message", [
    ([0, 3, 3], r"roi_starts\[2\] = 3 does not come after roi_starts\[1\] = 3"),
    ([0, 4, 2], r"roi_starts\[2\] = 2 does not come after roi_starts\[1\] = 4"),
    ([0, 6], r"roi_starts\[1\] = 6 is not a node \(0\.\.5\)"),
    ([-1, 2], r"roi_starts\[0\] = -1 is not a node"),
    (np.array([0.0, 2.0]), "roi_starts must be a one-dimensional array of integers, got float64"),
    (np.array([[0, 2]]), r"roi_starts must be a one-dimensional array .* shape \(1, 2\)"),
])
def test_bad_roi_starts_are_refused(roi, message):
    g = Graph(n=6, src=np.array([0], np.int32), dst=np.array([1], np.int32),
              weight=np.ones(1), roi_starts=np.asarray(roi))
    with pytest.raises(GraphFormatError, match=message):
        g.validate()


def test_a_corrupt_activation_array_in_a_graph_file(tmp_path):
    path = tmp_path / "g.npz"
    write_graph(chain_graph(), path)
    with np.load(path) as z:
        arrays = {k: z[k] for k in z.files}
    arrays["roi_starts"] = np.array([0, 5, 2], dtype=np.int64)
    np.savez(path, **arrays)
    with pytest.raises(GraphFormatError, match=r"g\.npz: roi_starts\[2\] = 2 does not come after"):
        read_graph(path)
    assert json.loads(str(arrays["meta"]))["format"] == "vcut-graph"


# -- evenly spaced windows -----------------------------------------------------------------
@pytest.mark.parametrize("total,count,size,expect", [
    (10, 3, None, [(0, 3), (4, 7), (7, 10)]),
    (100, 4, None, [(0, 25), (25, 50), (50, 75), (75, 100)]),
    (100, 2, 10, [(20, 30), (70, 80)]),
    (5, 1, 5, [(0, 5)]),
    (5, 1, None, [(0, 5)]),
    (10, 2, 8, [(0, 8), (2, 10)]),  # larger than a part: moved inside the run, overlapping
    (7, 7, None, [(k, k + 1) for k in range(7)]),
])
def test_spaced_windows_known_answers(total, count, size, expect):
    assert spaced_windows(total, count, size) == expect


@pytest.mark.parametrize("total,count,size,message", [
    (10, 0, None, "number of windows must be at least 1, got 0"),
    (10, -2, 3, "number of windows must be at least 1, got -2"),
    (10, 11, None, "11 windows need at least one unit each but the run has 10 nodes"),
    (10, 2, 11, "a window of 11 nodes does not fit in the run's 10 nodes"),
    (10, 2, 0, "a window of 0 nodes does not fit"),
])
def test_spaced_windows_refuses(total, count, size, message):
    with pytest.raises(InputError, match=message):
        spaced_windows(total, count, size)


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 10**12), st.data())
def test_spaced_windows_are_centred_in_equal_parts(total, data):
    count = data.draw(st.integers(1, min(total, 50)))
    size = data.draw(st.one_of(st.none(), st.integers(1, total)))
    spans = spaced_windows(total, count, size)
    s = total // count if size is None else size
    assert len(spans) == count
    for i, (lo, hi) in enumerate(spans):
        assert hi - lo == s and 0 <= lo and hi <= total
        # the nearest start to the centre of part i, unless that passes an end
        ideal = Fraction((2 * i + 1) * total, 2 * count) - Fraction(s, 2)
        if 0 <= ideal <= total - s:
            assert abs(lo - ideal) <= Fraction(1, 2)
    assert all(a[0] <= b[0] for a, b in zip(spans, spans[1:]))
    if s * count <= total:
        assert all(a[1] <= b[0] for a, b in zip(spans, spans[1:]))
