"""Draw the house's layers: the packages bottom to top and the imports between them.

    python bench/draw_layers.py                    # writes docs/layers.svg
    python bench/draw_layers.py -o layers.png      # another file (format by suffix)

The picture is drawn from the code: `bench/house.py` reads every module's imports with
`ast` (nothing is imported or run), and each arrow here is the number of modules of one
layer importing a module of another. vcut is drawn as its three layers: the partitioners,
the pipeline (`vcut.pipeline`) and the command line (`vcut.cli`, `vcut.__main__`). An arrow
pointing up would be an import against the layering; there is none while
tests/test_architecture.py passes (the arrows are drawn red if one appears).
"""

import argparse
import importlib.util
import pathlib
import sys

import matplotlib

matplotlib.use("Agg")
matplotlib.rcParams["svg.hashsalt"] = "vcut-layers"  # the same file for the same tree
matplotlib.rcParams["svg.fonttype"] = "none"  # text as text: small, searchable
import matplotlib.pyplot as plt
from matplotlib.patches import FancyArrowPatch, FancyBboxPatch

ROOT = pathlib.Path(__file__).resolve().parent.parent

#: The layers, bottom to top: (name, what it holds, in a few words).
LAYERS = (
    ("vcut_base", ("errors, inputs, memory budgets, atomic outputs, arrays and spilling,\n"
     "npz files, progress, the JIT cache, scratch dirs, lazy names")),
    ("frontend", "compile C to LLVM IR, instrument, run confined, decode the trace"),
    ("ir_graph", ("trace -> dependency graph, graph file formats, statistics,\n"
     "replica sets of an edge assignment, edge lists, windows")),
    ("runtime", ("devices, CPU/GPU traversal, primitives, MST, multilevel edge cut,\n"
     "METIS, vertex partitions, the HASS scheduler and its job kinds, Dask")),
    ("mapping", ("machines, cluster interactions, placement (memory-centric,\n"
     "time-aware, baselines), simulation, bounds, budget, insight, report")),
    ("vcut", ("the vertex cuts: the registry vcut.cuts and its kernels, clustering,\n"
     "par's steering, partition-batch jobs, distributed and out-of-core cuts")),
    ("vcut.pipeline", ("trace -> graph -> partition -> map -> simulate -> report,\n"
     "one options object; analyze, compare, windows, batch")),
    ("vcut.cli", "the vcut command: parse arguments, call one function, print"),
)


def _house():
    spec = importlib.util.spec_from_file_location("house", ROOT / "bench" / "house.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def measure(root=ROOT):
    """``(lines and modules per layer, {(from layer, to layer): modules importing})``; a
    module's layer is bench/house.py's (`house.layer`), the one its checks use."""
    house = _house()
    index = {house.layer(name): k for k, (name, _) in enumerate(LAYERS)}

    def layer_of(module):
        return index[house.layer(module)]

    library, graph = house.import_graph(root)
    sizes = [[0, 0] for _ in LAYERS]
    for name, info in library.items():
        sizes[layer_of(name)][0] += info["lines"]
        sizes[layer_of(name)][1] += 1
    arrows = {}
    for name, targets in graph.items():
        for pair in {(layer_of(name), layer_of(t)) for t in targets}:
            if pair[0] != pair[1]:
                arrows[pair] = arrows.get(pair, 0) + 1
    return sizes, arrows


def draw(path):
    """Draw the layers into ``path`` (SVG, PNG ... by its suffix)."""
    sizes, arrows = measure()
    colours = ("#efe3ee", "#e6e2f3", "#e1f0e1", "#f3e0e4", "#dff1ef", "#dde8f3", "#cfe0f1",
               "#bcd3ec")
    height, gap, width, left = 1.0, 0.55, 7.2, 0.4
    fig, ax = plt.subplots(figsize=(11, 11.5))
    y_of = [k * (height + gap) for k in range(len(LAYERS))]
    for k, (name, what) in enumerate(LAYERS):
        y = y_of[k]
        ax.add_patch(FancyBboxPatch((left, y), width, height, boxstyle="round,pad=0.02,rounding_size=0.08", facecolor=colours[k], edgecolor="#555555", linewidth=1.0))
        ax.text(left + 0.15, y + height - 0.16, name, fontsize=13, fontweight="bold",
                va="top", family="monospace")
        lines, modules = sizes[k]
        ax.text(left + width - 0.12, y + height - 0.16, f"{modules} modules, {lines:,} lines",
                fontsize=8.5, va="top", ha="right", color="#444444")
        ax.text(left + 0.15, y + 0.12, what, fontsize=8.8, va="bottom", color="#222222")
    # one layer down: an arrow in the middle; past a layer: each importing layer has a lane
    # on the right, down which its imports run to the layers they reach
    right = left + width
    for (src, dst), count in sorted(arrows.items()):
        colour = "#c0392b" if dst > src else "#34495e"
        if abs(src - dst) == 1:
            x = left + width / 2 + (0.5 if dst > src else 0)
            y0, y1 = (y_of[src] + height, y_of[dst]) if dst > src else \
                (y_of[src], y_of[dst] + height)
            ax.add_patch(FancyArrowPatch((x, y0), (x, y1), arrowstyle="-|>", mutation_scale=14,
                                         color=colour, linewidth=1.4, shrinkA=0, shrinkB=0))
            ax.text(x + 0.1, (y0 + y1) / 2, str(count), fontsize=8.5, va="center", color=colour)
    lanes = sorted({src for src, dst in arrows if abs(src - dst) > 1})
    for lane, src in enumerate(lanes):
        x = right + 0.3 + 0.32 * lane
        reach = sorted(dst for s, dst in arrows if s == src and abs(s - dst) > 1)
        colour = "#c0392b" if any(dst > src for dst in reach) else "#34495e"
        y_out = y_of[src] + height / 2
        entries = {dst: y_of[dst] + 0.14 + 0.13 * lane for dst in reach}
        ax.plot([right, x], [y_out, y_out], color=colour, linewidth=1.0, solid_capstyle="butt")
        ax.plot([x, x], [min(y_out, *entries.values()), max(y_out, *entries.values())],
                color=colour, linewidth=1.0)
        for dst, y in entries.items():
            ax.add_patch(FancyArrowPatch((x, y), (right, y), arrowstyle="-|>", mutation_scale=9,
                                         color=colour, linewidth=1.0, shrinkA=0, shrinkB=0))
            ax.text(x + 0.04, y + 0.01, str(arrows[(src, dst)]), fontsize=6.5, color=colour,
                    va="bottom", ha="left")
    top = y_of[-1] + height
    ax.text(left, top + 0.55, "vcut: the layers, bottom to top; an arrow A -> B: modules of A "
            "that import B", fontsize=12, fontweight="bold")
    ax.text(left, top + 0.2, "drawn from the code by bench/draw_layers.py (imports read by "
            "bench/house.py); no arrow points up", fontsize=9, color="#444444")
    ax.set_xlim(0, right + 0.6 + 0.32 * len(lanes))
    ax.set_ylim(-0.3, top + 0.9)
    ax.set_aspect("equal")
    ax.axis("off")
    fig.savefig(path, bbox_inches="tight", metadata={"Date": None} if str(path).endswith(".svg")
                else None)
    plt.close(fig)
    return path


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-o", "--output", default=str(ROOT / "docs" / "layers.svg"))
    args = parser.parse_args(argv)
    print(draw(args.output))
    return 0


if __name__ == "__main__":
    sys.exit(main())
