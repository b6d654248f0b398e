"""The report's mesh figure at 4x4, 8x8 and 32x32: nothing clipped, no label over another."""

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
