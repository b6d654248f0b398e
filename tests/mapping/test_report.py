"""The report's figures at 4x4, 8x8 and 32x32: nothing clipped, no label over another; and the
report's page: the answer and the reading first, the figures next, the internals folded."""

import numpy as np
import pytest

from ir_graph import Graph
from vcut.pipeline.analysis import analyze_graph
from mapping.machine import load_machine
from mapping.report import MIN_CELL_POINTS, _mesh_figure, _short


def _dag(n=3000, m=9000, seed=3):
    rng = np.random.default_rng(seed)
    a, b = rng.integers(0, n, m), rng.integers(0, n, m)
    keep = a != b
    src, dst = np.minimum(a, b)[keep], np.maximum(a, b)[keep]
    return Graph(n=n, src=src, dst=dst, weight=rng.uniform(1, 50, len(src)), directed=True)


def _extent(artist, renderer):
    return artist.get_window_extent(renderer)


@pytest.mark.parametrize("mesh", ["4x4", "8x8", "32x32"])
def test_mesh_figure_labels_fit(mesh):
    machine = load_machine(f"mesh:{mesh}")
    a = analyze_graph(_dag(), 16, "wb-libra", machine, baselines=False)
    fig = _mesh_figure(a)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    width, height = fig.canvas.get_width_height()
    cells = 0
    for ax in fig.axes[:2]:  # the two heat maps (the colorbars come after them)
        for text in (ax.title, ax.xaxis.label, ax.yaxis.label):
            box = _extent(text, renderer)
            # the layout keeps every label on the canvas: nothing is cut off
            assert box.x0 >= 0 and box.y0 >= 0 and box.x1 <= width and box.y1 <= height, text
        boxes = [_extent(t, renderer) for t in ax.texts]
        cells += len(boxes)
        if boxes:
            cell_px = ax.get_window_extent(renderer).width / machine.mesh_cols
            assert max(b.width for b in boxes) <= cell_px
            for i, p in enumerate(boxes):  # no two labels overlap
                for q in boxes[i + 1:]:
                    assert p.x1 <= q.x0 or q.x1 <= p.x0 or p.y1 <= q.y0 or q.y1 <= p.y0
    # 4x4 and 8x8 label every cell of both maps; 32x32 cells are too small to hold one
    assert cells == (0 if mesh == "32x32" else 2 * machine.cores)
    assert MIN_CELL_POINTS > 0


def test_short_numbers():
    assert [_short(v) for v in (0, 7, 0.3125, 999, 12_345, 3_400_000, 1.25e9)] == [
        "0", "7", "0.31", "999", "12k", "3.4M", "1.2G"]


@pytest.mark.parametrize("mesh", ["4x4", "32x32"])
def test_timeline_figure_labels_fit(mesh):
    """The core timeline: every label on the canvas, the occupancy drawn (not blank)."""
    from mapping.insight import insight
    from mapping.report import timeline_figure

    machine = load_machine(f"mesh:{mesh}")
    g = _dag()
    a = analyze_graph(g, 16 if mesh == "4x4" else 64, "wb-libra", machine, baselines=False)
    ins = insight(a, g)
    fig = timeline_figure(a, ins)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    width, height = fig.canvas.get_width_height()
    ax = fig.axes[0]
    lo, hi = sorted(ax.get_ylim())
    texts = [ax.title, ax.xaxis.label, ax.yaxis.label] + [
        t for t in ax.get_yticklabels() if lo <= t.get_position()[1] <= hi]
    for text in texts:
        if text.get_text():
            box = _extent(text, renderer)
            assert box.x0 >= 0 and box.y0 >= 0 and box.x1 <= width and box.y1 <= height, text
    # one row per core holding clusters; the busiest bins are drawn dark
    assert ins.occupancy.shape[0] == len(np.unique(a.placement.core))
    rgb = np.asarray(fig.canvas.buffer_rgba())[..., :3]
    assert (rgb.min(axis=2) < 128).mean() > 0.02


# The report's page: the answer first, the reading next, the figures, the internals folded.

_PARTITION = {"kind": "vertex-cut", "replication_factor": 1.25, "vertex_copies": 3,
              "work_imbalance": 1.0625, "replica_price": 768.0,
              "prices": [[1.5, 301.0], [768.0, 310.0]], "priority_gamma": 0.5,
              "chain_slack": 0.25, "refined_share": 0.125}
_PHASES = {"partition": 1.5, "mapping": 0.25}
_MAPPERS = [{"mapping": "given", "makespan": 310.0, "hop_bytes": 96.0, "cores_used": 2,
             "utilization_used_cores": 0.5, "utilization_all_cores": 0.5},
            {"mapping": "round-robin", "makespan": 420.0, "hop_bytes": 192.0, "cores_used": 2,
             "utilization_used_cores": 0.25, "utilization_all_cores": 0.25}]


@pytest.fixture(scope="module")
def page():
    """The report of the hand-made analysis of tests/mapping/test_insight.py (two clusters
    on a 1 x 2 mesh, makespan 310 cycles), with par's figures, phases and two mappings."""
    from mapping.report import analysis_html
    from tests.helpers import insight_analysis

    a, g = insight_analysis()
    a.partition.update(_PARTITION)
    a.phases.update(_PHASES)
    a.mappers.extend(_MAPPERS)
    return analysis_html(a, g, "/src/prog.c")


def _section(page, ident):
    import re

    m = re.search(rf'<section[^>]* id="{ident}">(.*?)</section>', page, re.DOTALL)
    assert m, ident
    return m.group(1)


def _rows(fragment):
    import html
    import re

    return [(html.unescape(k), html.unescape(v)) for k, v in
            re.findall(r"<tr><th>(.*?)</th><td>(.*?)</td></tr>", fragment, re.DOTALL)]


def test_report_order_answer_reading_figures_then_folded(page):
    """The answer, then "Reading the analysis", then the first figure, then the first folded
    block; the heading names the program, p and the machine."""
    at = [page.index(s) for s in ('<section id="answer">', '<p id="reading">', "<img",
                                  "<details")]
    assert at == sorted(at) and len(set(at)) == 4
    assert "<h1>prog.c: p = 2 on mesh:1x2</h1>" in page
    # under it, what was analysed: the source, the graph, the method, the mapping, the machine
    assert '<p class="run">vcut analysis of <code>/src/prog.c</code> (6 nodes, 7 edges): ' \
           "partitioning given, p = 2; mapping given; machine mesh:1x2: 2 cores, 1 x 2 mesh, " \
           "2 NUMA nodes.</p>" in page
    # the figures come in one section after the reading; the timeline first
    figures = _section(page, "figures")
    assert figures.index('id="timeline"') < figures.index("Mesh traffic and utilisation")
    assert figures.count("<img") == 5  # timeline, mesh, loads, mappings, degrees
    # nothing is folded before the figures, and every block is folded (no "open")
    assert page.index("<details") > page.rindex("<img")
    assert "<details open" not in page


def test_report_answer_rows_are_the_analysis_figures(page):
    """The answer's rows, derived by hand: 396 cycles of work at speed 2 is 198 cycles,
    the critical path 128 (test_insight's test_critical_path_by_hand), the bound
    max(128, 198 / 2) = 128; the makespan 310 cycles at 2.4 GHz."""
    rows = dict(_rows(_section(page, "answer")))
    assert rows == {
        "execution time (makespan)": f"310 cycles ({310 / 2.4e9 * 1e3:.3f} ms)",
        "speed-up over one core": f"{198 / 310:.2f} (one core: the work, 198 cycles)",
        "makespan / lower bound (1.00 at best)":
            f"{310 / 128:.2f} (bound 128 cycles: critical path 128, work 198 / 2 cores 99)",
        "communication": "96 bytes in 3 messages",
        "network bytes / hop-bytes": "96 / 96",
        "replication factor (copies per node)": "1.2500",
        "work imbalance (max / mean)": "1.0625",
        "utilisation of the cores in use":
            f"{(1 + 44.5 / 310) / 2:.3f} (mean over the 2 of 2 cores that hold clusters)",
        "utilisation of all cores": f"{(1 + 44.5 / 310) / 2:.3f} (mean over all 2 cores)"}
    # nothing of the partitioner's or the phases' in the answer
    assert "replica price" not in _section(page, "answer")


def test_report_internals_are_folded(page):
    """The partitioner's settings, the phases, the other simulation figures and the
    mappings' table: each in a <details> block, with the values the report gave before."""
    import re

    blocks = {m.group(1): m.group(2) for m in re.finditer(
        r"<details[^>]* id='(\w+)'><summary>.*?</summary>(.*?)</details>", page, re.DOTALL)}
    assert set(blocks) == {"mappings", "simulation", "partitioner", "phases"}
    assert _rows(blocks["partitioner"]) == [
        ("kind", "vertex-cut"), ("vertex copies", "3"), ("replica price", "768.0000"),
        ("prices", "{1.5: 301 cycles, 768: 310 cycles}"), ("priority gamma", "0.5000"),
        ("chain slack", "0.2500"), ("refined share", "0.1250")]
    assert _rows(blocks["phases"]) == [("partition", "1.50 s"), ("mapping", "0.25 s")]
    assert [k for k, _ in _rows(blocks["simulation"])] == ["without dependency waits",
                                                          "remote-memory tasks"]
    assert ("remote-memory tasks", "2") in _rows(blocks["simulation"])
    assert "round-robin" in blocks["mappings"] and "420" in blocks["mappings"]
    # the clusters' table is folded too
    assert re.search(r'<details class="insight" id="clusters"><summary>', page)
    # none of these outside a folded block
    outside = re.sub(r"<details.*?</details>", "", page, flags=re.DOTALL)
    for label in ("replica price", "priority gamma", "chain slack", "refined share",
                  "without dependency waits", "<th>partition</th>"):
        assert label not in outside, label


def test_report_reads_at_a_phone_width(page):
    """The viewport meta tag, every table in a wrapper that scrolls sideways, images and
    the body no wider than the screen."""
    import re

    assert '<meta name="viewport" content="width=device-width, initial-scale=1">' in page
    style = page[page.index("<style>"):page.index("</style>")]
    assert ".wrap{overflow-x:auto;" in style and "img{max-width:100%" in style
    tables = page.count("<table")
    assert tables > 5 and len(re.findall(r"<div class='wrap'><table", page)) == tables
    assert page.count("<html") == 1 and "http://" not in page and "https://" not in page
